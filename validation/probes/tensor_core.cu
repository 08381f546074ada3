// Tensor cores on the GPU (validation/probes/tensor_core.py): the numerics of mma.sync m16n8k16
// (f32 += f16*f16, f32 += bf16*bf16, f16 += f16*f16), the register layouts of ldmatrix, and the
// latency / issue interval of a dependent chain and of independent streams of mma.sync.
// Compiled with: nvcc -ptx -arch=sm_90 -o tensor_core.ptx tensor_core.cu
#include <cstdint>

// Fragment layouts of PTX ISA 9.0 §9.7.14.5.8 ("Matrix Fragments for mma.m16n8k16 with floating
// point type"): g = lane / 4, t = lane % 4.  A (16 x 16, row major): a_i at row g (+8 for i in
// {2,3,6,7}), column 2t + (i & 1) (+8 for i >= 4).  B (16 x 8): b_i at row 2t + (i & 1) (+8 for
// i >= 2), column g.  C, D (16 x 8): c_i at row g (+8 for i >= 2), column 2t + (i & 1).
// Each warp w computes tile w: A[w] 16x16 (row major, 16-bit bits), Bt[w] 8x16 (B transposed:
// n major), C[w] and D[w] 16x8 row major.
__device__ __forceinline__ uint32_t pack(uint16_t lo, uint16_t hi) { return (uint32_t)lo | ((uint32_t)hi << 16); }

__device__ __forceinline__ void load_ab(const uint16_t* A, const uint16_t* Bt, uint32_t a[4], uint32_t b[2]) {
    int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int r = 0; r < 4; ++r) {   // register r holds a_{2r}, a_{2r+1}
        int row = g + ((r & 1) ? 8 : 0), col = 2 * t + ((r & 2) ? 8 : 0);
        a[r] = pack(A[row * 16 + col], A[row * 16 + col + 1]);
    }
    for (int r = 0; r < 2; ++r) {
        int k = 2 * t + (r ? 8 : 0);
        b[r] = pack(Bt[g * 16 + k], Bt[g * 16 + k + 1]);
    }
}

extern "C" __global__ void mma_f32_f16(const uint16_t* A, const uint16_t* Bt, const float* C, float* D) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    load_ab(A + w * 256, Bt + w * 128, a, b);
    const float* c = C + w * 128;
    float c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1], c2 = c[(g + 8) * 8 + 2 * t], c3 = c[(g + 8) * 8 + 2 * t + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    float* d = D + w * 128;
    d[g * 8 + 2 * t] = d0; d[g * 8 + 2 * t + 1] = d1; d[(g + 8) * 8 + 2 * t] = d2; d[(g + 8) * 8 + 2 * t + 1] = d3;
}

extern "C" __global__ void mma_f32_bf16(const uint16_t* A, const uint16_t* Bt, const float* C, float* D) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    load_ab(A + w * 256, Bt + w * 128, a, b);
    const float* c = C + w * 128;
    float c0 = c[g * 8 + 2 * t], c1 = c[g * 8 + 2 * t + 1], c2 = c[(g + 8) * 8 + 2 * t], c3 = c[(g + 8) * 8 + 2 * t + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    float* d = D + w * 128;
    d[g * 8 + 2 * t] = d0; d[g * 8 + 2 * t + 1] = d1; d[(g + 8) * 8 + 2 * t] = d2; d[(g + 8) * 8 + 2 * t + 1] = d3;
}

// f16 accumulate: C and D are 16x8 f16 (bits); c0,c1 in one register, c2,c3 in the other.
extern "C" __global__ void mma_f16_f16(const uint16_t* A, const uint16_t* Bt, const uint16_t* C, uint16_t* D) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    load_ab(A + w * 256, Bt + w * 128, a, b);
    const uint16_t* c = C + w * 128;
    uint32_t c01 = pack(c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1]), c23 = pack(c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]);
    uint32_t d01, d23;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
                 : "=r"(d01), "=r"(d23)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c01), "r"(c23));
    uint16_t* d = D + w * 128;
    d[g * 8 + 2 * t] = d01 & 0xffff; d[g * 8 + 2 * t + 1] = d01 >> 16;
    d[(g + 8) * 8 + 2 * t] = d23 & 0xffff; d[(g + 8) * 8 + 2 * t + 1] = d23 >> 16;
}

// ldmatrix: shared holds 32 rows of 8 b16 values, s[r][c] = 256 * r + c + 1 (row r of matrix r / 8).
// Lane l gives the address of row perm[l] (an arbitrary permutation of the rows, to see which lane's
// address feeds which matrix row); out[variant][lane][reg] receives the registers.
__device__ __forceinline__ uint32_t smem_addr(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

extern "C" __global__ void ldmatrix_layout(const int* perm, uint32_t* out) {
    __shared__ uint16_t s[32 * 8];
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) s[i] = (uint16_t)(256 * (i / 8) + (i % 8) + 1);
    __syncwarp();
    uint32_t p = smem_addr(&s[perm[lane] * 8]);
    uint32_t r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(p));
    out[(0 * 32 + lane) * 4 + 0] = r0;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(p));
    out[(1 * 32 + lane) * 4 + 0] = r0; out[(1 * 32 + lane) * 4 + 1] = r1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(p));
    out[(2 * 32 + lane) * 4 + 0] = r0; out[(2 * 32 + lane) * 4 + 1] = r1; out[(2 * 32 + lane) * 4 + 2] = r2; out[(2 * 32 + lane) * 4 + 3] = r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(p));
    out[(3 * 32 + lane) * 4 + 0] = r0;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(p));
    out[(4 * 32 + lane) * 4 + 0] = r0; out[(4 * 32 + lane) * 4 + 1] = r1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(p));
    out[(5 * 32 + lane) * 4 + 0] = r0; out[(5 * 32 + lane) * 4 + 1] = r1; out[(5 * 32 + lane) * 4 + 2] = r2; out[(5 * 32 + lane) * 4 + 3] = r3;
}

// Timing: k steps of `nacc` independent accumulators (nacc = 1: a dependent chain through the
// accumulator), each step one mma.sync per accumulator.  The slope over k of the kernel's cycles
// (ncu sm__cycles_elapsed.avg, and clock64 inside the kernel) is the cost of one step.
#define MMA(d, a, b) asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

template <int NACC>
__device__ void mma_steps(int k, float* out, long long* cycles) {
    uint32_t a[4], b[2];
    for (int i = 0; i < 4; ++i) a[i] = 0x3c003c00u ^ (threadIdx.x & 1);
    b[0] = 0x3c003c00u; b[1] = 0x00003c00u;
    float d[NACC][4];
    for (int j = 0; j < NACC; ++j) for (int i = 0; i < 4; ++i) d[j][i] = 0.0f;
    long long t0 = clock64();
#pragma unroll 4
    for (int s = 0; s < k; ++s) {
#pragma unroll
        for (int j = 0; j < NACC; ++j) MMA(d[j], a, b);
    }
    long long t1 = clock64();
    float sum = 0.0f;
    for (int j = 0; j < NACC; ++j) sum += d[j][0] + d[j][1] + d[j][2] + d[j][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

extern "C" __global__ void mma_chain(int k, float* out, long long* cycles) { mma_steps<1>(k, out, cycles); }
extern "C" __global__ void mma_ilp8(int k, float* out, long long* cycles) { mma_steps<8>(k, out, cycles); }

#define MMA_BF16(d, a, b) asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};" \
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define MMA_H(d, a, b) asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};" \
    : "+r"(d[0]), "+r"(d[1]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

extern "C" __global__ void mma_bf16_chain(int k, float* out, long long* cycles) {
    uint32_t a[4] = {0x3f803f80u, 0x3f803f80u, 0x3f803f80u, 0x3f803f80u ^ (threadIdx.x & 1)}, b[2] = {0x3f803f80u, 0x3f80u};
    float d[4] = {0, 0, 0, 0};
    long long t0 = clock64();
#pragma unroll 4
    for (int s = 0; s < k; ++s) MMA_BF16(d, a, b);
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = d[0] + d[1] + d[2] + d[3];
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

extern "C" __global__ void mma_f16acc_chain(int k, float* out, long long* cycles) {
    uint32_t a[4] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u ^ (threadIdx.x & 1)}, b[2] = {0x3c003c00u, 0x3c00u};
    uint32_t d[2] = {0, 0};
    long long t0 = clock64();
#pragma unroll 4
    for (int s = 0; s < k; ++s) MMA_H(d, a, b);
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = (float)(d[0] + d[1]);
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

extern "C" __global__ void ldmatrix_chain(int k, float* out, long long* cycles) {
    __shared__ uint16_t s[32 * 8];
    int lane = threadIdx.x & 31;
    for (int i = lane; i < 256; i += 32) s[i] = 0;
    __syncwarp();
    uint32_t off = 0;
    long long t0 = clock64();
#pragma unroll 4
    for (int i = 0; i < k; ++i) {
        uint32_t r0, r1, r2, r3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(smem_addr(&s[lane * 8]) + off));
        off = r0 + r1 + r2 + r3;   // all zero: the next address depends on this load
    }
    long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = (float)off;
    if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}
