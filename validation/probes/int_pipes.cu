// GPU probe kernels (validation/probes/int_pipes.py): issue rate of one integer or float op per
// SASS pipe. Each of 32 warps of one CTA runs STREAMS independent chains of OP for n iterations
// between two clock64 reads; ptxas unrolls the loop 4 times. Compile: nvcc -arch=sm_90 -ptx.
#define STREAMS 8
#define DEF(NAME, OP) \
extern "C" __global__ void NAME(unsigned* out, unsigned c, int n, long long* t) { \
    unsigned a[STREAMS]; \
    for (int s = 0; s < STREAMS; ++s) a[s] = threadIdx.x * (s + 3); \
    __syncthreads(); long long t0 = clock64(); \
    for (int i = 0; i < n; ++i) { \
        _Pragma("unroll") for (int s = 0; s < STREAMS; ++s) { OP; } \
    } \
    long long t1 = clock64(); __syncthreads(); \
    unsigned r = 0; for (int s = 0; s < STREAMS; ++s) r ^= a[s]; \
    out[blockIdx.x * blockDim.x + threadIdx.x] = r; if (threadIdx.x == 0) t[blockIdx.x] = t1 - t0; }
DEF(add_imm, asm volatile("add.u32 %0, %0, 12345;" : "+r"(a[s])))
DEF(add_reg, asm volatile("add.u32 %0, %0, %1;" : "+r"(a[s]) : "r"(c)))
DEF(xor_reg, asm volatile("xor.b32 %0, %0, %1;" : "+r"(a[s]) : "r"(c)))
DEF(shr_imm, asm volatile("shr.u32 %0, %0, 3;" : "+r"(a[s])))
DEF(mul_imm, asm volatile("mul.lo.u32 %0, %0, 40503;" : "+r"(a[s])))
DEF(path_b, a[s] = (a[s] ^ (a[s] >> 7)) + 0x9e3779b9u)
DEF(path_a, a[s] = (a[s] * 0x9e3779b1u) ^ (a[s] >> 15))
DEF(fma_reg, asm volatile("fma.rn.f32 %0, %0, %0, %0;" : "+r"(a[s])))
