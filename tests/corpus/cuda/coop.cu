// Cooperative groups: tiled partitions, cg::reduce, grid-stride loops, warp intrinsics.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_tile_reduce(const int* in, int* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += in[i];
    int r = cg::reduce(tile, sum, cg::plus<int>());
    if (tile.thread_rank() == 0) atomicAdd(out, r);
}

extern "C" __global__ void cg_reduce_max(const unsigned* in, unsigned* out, int n) {
    auto warp = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < n ? in[i] : 0u;
    unsigned m = cg::reduce(warp, v, cg::greater<unsigned>());
    if (warp.thread_rank() == 0) out[i / 32] = m;
}

extern "C" __global__ void cg_float_reduce(const float* in, float* out, int n) {
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    float s = cg::reduce(tile, v, cg::plus<float>());
    if (tile.thread_rank() == 0) out[i / 8] = s;
}

extern "C" __global__ void warp_intrinsics(const unsigned* in, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[i];
    unsigned active = __activemask();
    unsigned same = __match_any_sync(0xffffffffu, v & 3);
    int pred;
    unsigned all = __match_all_sync(0xffffffffu, v >> 30, &pred);
    unsigned sum = __reduce_add_sync(0xffffffffu, v);
    unsigned mn = __reduce_min_sync(0xffffffffu, v);
    unsigned mx = __reduce_max_sync(0xffffffffu, (int)v);
    unsigned an = __reduce_and_sync(0xffffffffu, v);
    unsigned orr = __reduce_or_sync(0xffffffffu, v);
    unsigned xr = __reduce_xor_sync(0xffffffffu, v);
    if (i < n) {
        out[9 * i + 0] = active; out[9 * i + 1] = same; out[9 * i + 2] = (all >> 1) + pred;
        out[9 * i + 3] = sum; out[9 * i + 4] = mn; out[9 * i + 5] = mx;
        out[9 * i + 6] = an; out[9 * i + 7] = orr; out[9 * i + 8] = xr;
    }
}

extern "C" __global__ void sync_counts(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = i < n && in[i] > 0;
    int c = __syncthreads_count(p);
    int a = __syncthreads_and(p);
    int o = __syncthreads_or(p);
    if (threadIdx.x == 0) { out[3 * blockIdx.x] = c; out[3 * blockIdx.x + 1] = a; out[3 * blockIdx.x + 2] = o; }
}

extern "C" __global__ void cg_big_tile(const int* in, int* out, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<64> tile = cg::tiled_partition<64>(block);
    __shared__ int s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0;
    tile.sync();
    int r = s[threadIdx.x ^ 32];
    if (i < n) out[i] = r + (int)tile.meta_group_rank() * 1000 + (int)tile.thread_rank();
}

extern "C" __global__ void named_barrier(int* out) {
    // Warps 0-1 and 2-3 sync on different named barriers with thread counts.
    __shared__ int s[128];
    s[threadIdx.x] = threadIdx.x * 3;
    if (threadIdx.x < 64) asm volatile("barrier.sync 1, 64;");
    else asm volatile("barrier.sync 2, 64;");
    out[threadIdx.x] = s[threadIdx.x ^ 32];
}
