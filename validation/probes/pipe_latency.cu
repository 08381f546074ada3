// Dependent chains of one kind of instruction, k steps each (validation/probes/pipe_latency.py).
// The cycles one more step costs, measured on the GPU (ncu sm__cycles_elapsed.avg over k) and in
// gpusim (the same PTX), give each pipe's latency as the timing model must see it.
// Compiled with: nvcc -ptx -arch=sm_90 -o pipe_latency.ptx pipe_latency.cu
#define FULL 0xffffffffu

// __syncthreads() k times: the barrier's round trip (all warps arrive, all are released).
extern "C" __global__ void bar_chain(int k, int* out) {
    int v = threadIdx.x;
#pragma unroll 8
    for (int i = 0; i < k; ++i) __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// The reduction tree's step: store to shared, barrier, load a neighbour's word, add, barrier.
extern "C" __global__ void tree_chain(int k, int* out) {
    __shared__ int s[1024];
    int t = threadIdx.x, v = t;
#pragma unroll 8
    for (int i = 0; i < k; ++i) {
        s[t] = v;
        __syncthreads();
        v += s[t ^ 1];
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + t] = v;
}

// A dependent shuffle: each step reads the value the last step produced, in another lane.
extern "C" __global__ void shfl_chain(int k, int* out) {
    int v = threadIdx.x;
#pragma unroll 8
    for (int i = 0; i < k; ++i) v = __shfl_xor_sync(FULL, v, 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// The warp-reduction step of reduce_v5 / v7: shuffle down, then add.
extern "C" __global__ void shfl_add_chain(int k, int* out) {
    int v = threadIdx.x;
#pragma unroll 8
    for (int i = 0; i < k; ++i) v += __shfl_down_sync(FULL, v, 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Shared store then load of a neighbour's word within one warp (volatile: one STS and one LDS
// a step; a warp's shared accesses complete in order).
extern "C" __global__ void smem_chain(int k, int* out) {
    __shared__ int s[1024];
    volatile int* vs = s;
    int t = threadIdx.x, v = t;
#pragma unroll 8
    for (int i = 0; i < k; ++i) {
        vs[t] = v;
        v = vs[t ^ 1] + 1;
    }
    out[blockIdx.x * blockDim.x + t] = v;
}

// Integer multiply-add chain (IMAD).
extern "C" __global__ void imad_chain(int k, int* out) {
    unsigned v = threadIdx.x;
#pragma unroll 8
    for (int i = 0; i < k; ++i) v = v * v + 1u;
    out[blockIdx.x * blockDim.x + threadIdx.x] = (int)v;
}

// Unsigned remainder by a runtime divisor (reduce_v0's tid % (2 * s)): ptxas expands rem.u32.
extern "C" __global__ void rem_chain(int k, unsigned d, int* out) {
    unsigned v = threadIdx.x + 1000u;
#pragma unroll 8
    for (int i = 0; i < k; ++i) v = (v + 12345u) % d;
    out[blockIdx.x * blockDim.x + threadIdx.x] = (int)v;
}

// Shared-memory atomics into a histogram of m words: a throughput, not a chain
// (m = 1: every lane on one word; m = 32: one word per lane).
extern "C" __global__ void atom_shared(int k, int m, int* out) {
    __shared__ int s[32];
    int t = threadIdx.x;
    if (t < 32) s[t] = 0;
    __syncthreads();
#pragma unroll 8
    for (int i = 0; i < k; ++i) atomicAdd(&s[(t + i) % m], 1);
    __syncthreads();
    if (t < 32) out[blockIdx.x * 32 + t] = s[t];
}

// A dependent warp vote: the ballot of the last step's low bit.
extern "C" __global__ void vote_chain(int k, int* out) {
    unsigned v = threadIdx.x;
#pragma unroll 8
    for (int i = 0; i < k; ++i) v = __ballot_sync(FULL, v & 1u) + threadIdx.x;
    out[blockIdx.x * blockDim.x + threadIdx.x] = (int)v;
}

// A global store then a load of a neighbour's word (volatile: an STG and an LDG a step), through
// the L1 (write-through) to the L2 and back.
extern "C" __global__ void gmem_chain(int k, int* out) {
    volatile int* vo = out + blockIdx.x * blockDim.x;
    int t = threadIdx.x, v = t;
#pragma unroll 8
    for (int i = 0; i < k; ++i) {
        vo[t] = v;
        v = vo[t ^ 1] + 1;
    }
    out[blockIdx.x * blockDim.x + t] = v;
}
