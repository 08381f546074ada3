// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/hgemm.ptx hgemm.cu
//
// Tiled half-precision matrix multiply on the tensor cores (mixed precision: f16 inputs, f32
// accumulators and output), next to the fp32 matmuls of matmul.cu.  C = A * B, all row-major
// N x N, N a multiple of 64.
//
//   hgemm_mma   a 64 x 64 tile of C per block of 4 warps (2 x 2), each warp 32 x 32 of it as
//               2 x 4 mma.sync.m16n8k16 tiles; per 16-wide k step the block stages A (64 x 16)
//               and B (16 x 64) in shared memory with one 16-byte load per thread each, and each
//               warp fetches its fragments with ldmatrix (A: .x4, B: .x4.trans).  Rows are padded
//               (A: 24 halves, B: 72) so that ldmatrix's eight 16-byte rows hit distinct banks.
#include <cuda_fp16.h>
#include <cstdint>

#define BM 64
#define BN 64
#define BK 16
#define APAD 24
#define BPAD 72

__device__ __forceinline__ uint32_t smem(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

extern "C" __global__ void hgemm_mma(const __half* A, const __half* B, float* C, int N)
{
    __shared__ __align__(16) __half As[BM][APAD];
    __shared__ __align__(16) __half Bs[BK][BPAD];
    int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;          // this warp's 32 x 32 corner of the tile
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[2][4][4] = {};
    // staging: thread t copies 8 halves of A (row t / 2, column 8 * (t % 2)) and of B (row t / 8, column 8 * (t % 8))
    int ar = tid >> 1, ac = (tid & 1) * 8, br = tid >> 3, bc = (tid & 7) * 8;
    for (int k0 = 0; k0 < N; k0 += BK) {
        *(uint4*)&As[ar][ac] = *(const uint4*)&A[(size_t)(row0 + ar) * N + k0 + ac];
        *(uint4*)&Bs[br][bc] = *(const uint4*)&B[(size_t)(k0 + br) * N + col0 + bc];
        __syncthreads();
        uint32_t a[2][4], b[4][2];
        for (int i = 0; i < 2; ++i)     // A 16 x 16: lanes 0-15 rows 0-15 at k 0, lanes 16-31 rows 0-15 at k 8
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(a[i][0]), "=r"(a[i][1]), "=r"(a[i][2]), "=r"(a[i][3])
                         : "r"(smem(&As[wm + 16 * i + (lane & 15)][(lane >> 4) * 8])));
        for (int j = 0; j < 4; j += 2)  // B 16 x 16 (two n8 tiles): lanes 0-15 k rows at n 0, lanes 16-31 at n 8
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(b[j][0]), "=r"(b[j][1]), "=r"(b[j + 1][0]), "=r"(b[j + 1][1])
                         : "r"(smem(&Bs[lane & 15][wn + 8 * j + (lane >> 4) * 8])));
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 4; ++j)
                asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                             "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                             : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]), "+f"(acc[i][j][3])
                             : "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]), "r"(a[i][3]), "r"(b[j][0]), "r"(b[j][1]));
        __syncthreads();
    }
    int g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j) {
            int r = row0 + wm + 16 * i + g, c = col0 + wn + 8 * j + 2 * t;
            *(float2*)&C[(size_t)r * N + c] = make_float2(acc[i][j][0], acc[i][j][1]);
            *(float2*)&C[(size_t)(r + 8) * N + c] = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}
