// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/divergence.ptx divergence.cu
//
// Warp divergence (seeds 000, 004): the same work split two ways.
//   divergent_branch  even/odd lanes take different paths: every warp runs both
//   uniform_branch    the choice depends on the warp index (threadIdx.x / 32):
//                     each warp runs one path only
//   divergent_loop    the loop trip count differs per lane (tid % 32 iterations):
//                     the warp runs as long as its slowest lane
// plus warp-level primitives that depend on a converged warp:
//   warp_vote         __ballot_sync / __all_sync / __any_sync of a per-lane predicate
//   warp_scan         inclusive prefix sum in a warp with __shfl_up_sync, and the
//                     warp total broadcast with __shfl_sync (lane 31)
// Integer arithmetic (unsigned, wraps) so results are exact.  n: element count.

#define ROUNDS 16

__device__ __forceinline__ unsigned int path_a(unsigned int x)
{
    for (int r = 0; r < ROUNDS; ++r) x = (x * 0x9e3779b1u) ^ (x >> 15);
    return x;
}

__device__ __forceinline__ unsigned int path_b(unsigned int x)
{
    for (int r = 0; r < ROUNDS; ++r) x = (x ^ (x >> 7)) + 0x9e3779b9u;
    return x;
}

extern "C" __global__ void divergent_branch(const unsigned int *in, unsigned int *out, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int x = in[i];
    if (threadIdx.x % 2 == 0)
        x = path_a(x);
    else
        x = path_b(x);
    out[i] = x;
}

extern "C" __global__ void uniform_branch(const unsigned int *in, unsigned int *out, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int x = in[i];
    if ((threadIdx.x / 32) % 2 == 0)
        x = path_a(x);
    else
        x = path_b(x);
    out[i] = x;
}

extern "C" __global__ void divergent_loop(const unsigned int *in, unsigned int *out, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int x = in[i];
    unsigned int trips = threadIdx.x % 32;
    for (unsigned int r = 0; r < trips; ++r) x = (x * 0x9e3779b1u) ^ (x >> 15);
    out[i] = x;
}

// out_ballot/out_all/out_any have one entry per warp; blockDim.x must be a
// multiple of 32 and n a multiple of 32 (whole warps vote).
extern "C" __global__ void warp_vote(const int *in, unsigned int *out_ballot, int *out_all, int *out_any, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    unsigned int ballot = __ballot_sync(0xffffffffu, v > 0);
    int all = __all_sync(0xffffffffu, v > -100);
    int any = __any_sync(0xffffffffu, v > 90);
    if (threadIdx.x % 32 == 0) {
        unsigned int w = i / 32;
        out_ballot[w] = ballot;
        out_all[w] = all;
        out_any[w] = any;
    }
}

// scan: inclusive prefix sum within each warp; total[i] = sum of the warp.
// n must be a multiple of 32.
extern "C" __global__ void warp_scan(const int *in, int *scan, int *total, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int lane = threadIdx.x % 32;
    int v = in[i];
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        int t = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v += t;
    }
    scan[i] = v;
    total[i] = __shfl_sync(0xffffffffu, v, 31);
}
