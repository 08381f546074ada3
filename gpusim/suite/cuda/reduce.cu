// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/reduce.ptx reduce.cu
//
// Parallel sum reduction, v0..v7, as the course notes teach it
// (Mark Harris's "Optimizing Parallel Reduction in CUDA" sequence).
// Changes from the notes, and only these: every kernel is extern "C"
// (unmangled PTX entry names) and takes the element count n, with loads
// past n reading 0.0f, so any n works.  Each kernel writes one partial
// sum per block to g_odata[blockIdx.x]; the caller finishes on the host
// or by a second launch.
//
// Numbering (seeds 000 and 003 number them differently):
//   v0 interleaved addressing, divergent `tid % (2*s)`
//   v1 interleaved addressing, strided index (no divergence, bank conflicts)
//   v2 sequential addressing (no bank conflicts)
//   v3 first add during global load (half the blocks)
//   v4 unrolled last warp (volatile shared memory, no __syncthreads)
//   v5 completely unrolled (block size as a template parameter)
//   v6 multiple elements per thread: grid-stride cascading + complete unroll
//   v7 warp shuffle (__shfl_xor_sync butterfly; seed 000 calls it reduce_v5)
//   v7_down: v7 with __shfl_down_sync
// plus two atomics-based finishes (seed 003: "atomicAdd as global sync").

#define BLOCK_SIZE 256
#define WARP_SIZE 32

// ---------------------------------------------------------------- v0
extern "C" __global__ void reduce_v0(float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];
    // each thread loads one element from global to shared mem
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0.0f;
    __syncthreads();
    // do reduction in shared mem
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if (tid % (2 * s) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    // write result for this block to global mem
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// ---------------------------------------------------------------- v1
extern "C" __global__ void reduce_v1(float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        int index = 2 * s * tid;
        if (index < blockDim.x) {
            sdata[index] += sdata[index + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// ---------------------------------------------------------------- v2
extern "C" __global__ void reduce_v2(float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// ---------------------------------------------------------------- v3
extern "C" __global__ void reduce_v3(float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];
    // each block handles 2*blockDim.x elements: first add during load
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float v = (i < n) ? g_idata[i] : 0.0f;
    if (i + blockDim.x < n) v += g_idata[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// ---------------------------------------------------------------- v4
// The last 32 active threads are one warp: no __syncthreads needed.
// `volatile` keeps every partial sum in shared memory (no register caching).
__device__ void warpReduce(volatile float *cache, unsigned int tid)
{
    cache[tid] += cache[tid + 32];
    cache[tid] += cache[tid + 16];
    cache[tid] += cache[tid + 8];
    cache[tid] += cache[tid + 4];
    cache[tid] += cache[tid + 2];
    cache[tid] += cache[tid + 1];
}

extern "C" __global__ void reduce_v4(float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float sdata[BLOCK_SIZE];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float v = (i < n) ? g_idata[i] : 0.0f;
    if (i + blockDim.x < n) v += g_idata[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid < 32) warpReduce(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// ---------------------------------------------------------------- v5
// Block size known at compile time: the loop disappears entirely.
template <unsigned int blockSize>
__device__ void warpReduceT(volatile float *sdata, unsigned int tid)
{
    if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
    if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
    if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
    if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
    if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
    if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

template <unsigned int blockSize>
__device__ void blockReduceT(float *sdata, unsigned int tid)
{
    if (blockSize >= 1024) { if (tid < 512) { sdata[tid] += sdata[tid + 512]; } __syncthreads(); }
    if (blockSize >= 512) { if (tid < 256) { sdata[tid] += sdata[tid + 256]; } __syncthreads(); }
    if (blockSize >= 256) { if (tid < 128) { sdata[tid] += sdata[tid + 128]; } __syncthreads(); }
    if (blockSize >= 128) { if (tid < 64) { sdata[tid] += sdata[tid + 64]; } __syncthreads(); }
    if (tid < 32) warpReduceT<blockSize>(sdata, tid);
}

template <unsigned int blockSize>
__device__ void reduce5_body(float *g_idata, float *g_odata, unsigned int n)
{
    __shared__ float sdata[blockSize];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    float v = (i < n) ? g_idata[i] : 0.0f;
    if (i + blockSize < n) v += g_idata[i + blockSize];
    sdata[tid] = v;
    __syncthreads();
    blockReduceT<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// blockDim.x must be 256
extern "C" __global__ void reduce_v5(float *g_idata, float *g_odata, unsigned int n)
{
    reduce5_body<BLOCK_SIZE>(g_idata, g_odata, n);
}

// ---------------------------------------------------------------- v6
// Algorithm cascading: fewer blocks, each thread first sums many elements
// (grid-stride loop, two loads per step), then the completely unrolled tree.
// Dynamic shared memory: launch with shared_mem = blockDim.x * sizeof(float).
template <unsigned int blockSize>
__device__ void reduce6_body(float *g_idata, float *g_odata, unsigned int n)
{
    extern __shared__ float sdata_dyn[];
    float *sdata = sdata_dyn;
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
    unsigned int gridSize = blockSize * 2 * gridDim.x;
    float mySum = 0.0f;
    while (i < n) {
        mySum += g_idata[i];
        if (i + blockSize < n) mySum += g_idata[i + blockSize];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();
    blockReduceT<blockSize>(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

// blockDim.x must be 256
extern "C" __global__ void __launch_bounds__(BLOCK_SIZE)
reduce_v6(float *g_idata, float *g_odata, unsigned int n)
{
    reduce6_body<BLOCK_SIZE>(g_idata, g_odata, n);
}

// ---------------------------------------------------------------- v7
template <const int kWarpSize = WARP_SIZE>
__device__ __forceinline__ float warp_reduce_sum_f32(float val)
{
#pragma unroll
    for (int mask = kWarpSize >> 1; mask >= 1; mask >>= 1) {
        val += __shfl_xor_sync(0xffffffff, val, mask);
    }
    return val;
}

// blockDim.x must be 256
extern "C" __global__ void reduce_v7(float *g_idata, float *g_odata, unsigned int n)
{
    int tid = threadIdx.x;
    unsigned int idx = blockIdx.x * (blockDim.x * 2) + tid;
    constexpr int NUM_WARPS = (BLOCK_SIZE + WARP_SIZE - 1) / WARP_SIZE;
    __shared__ float reduce_smem[NUM_WARPS];
    // keep the data in registers: enough for warp operations
    float sum = (idx < n) ? g_idata[idx] : 0.0f;
    if (idx + blockDim.x < n) sum += g_idata[idx + blockDim.x];
    int warp = tid / WARP_SIZE;
    int lane = tid % WARP_SIZE;
    // perform warp sync reduce
    sum = warp_reduce_sum_f32<WARP_SIZE>(sum);
    // warp leaders store the data to shared memory
    if (lane == 0) reduce_smem[warp] = sum;
    __syncthreads();
    // the first warp computes the final sum
    sum = (lane < NUM_WARPS) ? reduce_smem[lane] : 0.0f;
    if (warp == 0) sum = warp_reduce_sum_f32<NUM_WARPS>(sum);
    if (tid == 0) g_odata[blockIdx.x] = sum;
}

template <const int kWarpSize = WARP_SIZE>
__device__ __forceinline__ float warp_reduce_sum_down_f32(float val)
{
#pragma unroll
    for (int offset = kWarpSize >> 1; offset >= 1; offset >>= 1) {
        val += __shfl_down_sync(0xffffffff, val, offset);
    }
    return val;
}

// blockDim.x must be 256
extern "C" __global__ void reduce_v7_down(float *g_idata, float *g_odata, unsigned int n)
{
    int tid = threadIdx.x;
    unsigned int idx = blockIdx.x * (blockDim.x * 2) + tid;
    constexpr int NUM_WARPS = (BLOCK_SIZE + WARP_SIZE - 1) / WARP_SIZE;
    __shared__ float reduce_smem[NUM_WARPS];
    float sum = (idx < n) ? g_idata[idx] : 0.0f;
    if (idx + blockDim.x < n) sum += g_idata[idx + blockDim.x];
    int warp = tid / WARP_SIZE;
    int lane = tid % WARP_SIZE;
    sum = warp_reduce_sum_down_f32<WARP_SIZE>(sum);
    if (lane == 0) reduce_smem[warp] = sum;
    __syncthreads();
    sum = (lane < NUM_WARPS) ? reduce_smem[lane] : 0.0f;
    if (warp == 0) sum = warp_reduce_sum_down_f32<NUM_WARPS>(sum);
    if (tid == 0) g_odata[blockIdx.x] = sum;
}

// ---------------------------------------------------------------- atomics
// Integer sum: grid-stride per thread, shared-memory atomicAdd per block,
// one global atomicAdd per block.  Exact on any order.  *g_out must be 0.
extern "C" __global__ void reduce_atomic_int(const int *g_idata, int *g_out, unsigned int n)
{
    __shared__ int block_sum;
    if (threadIdx.x == 0) block_sum = 0;
    __syncthreads();
    int mySum = 0;
    for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        mySum += g_idata[i];
    atomicAdd(&block_sum, mySum);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(g_out, block_sum);
}

// Float sum: v7's block reduction, then one global atomicAdd per block.
// The order of the atomics is not defined, so the last bits vary.
// *g_out must be 0.  blockDim.x must be 256.
extern "C" __global__ void reduce_atomic_f32(float *g_idata, float *g_out, unsigned int n)
{
    int tid = threadIdx.x;
    constexpr int NUM_WARPS = (BLOCK_SIZE + WARP_SIZE - 1) / WARP_SIZE;
    __shared__ float reduce_smem[NUM_WARPS];
    float sum = 0.0f;
    for (unsigned int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
        sum += g_idata[i];
    int warp = tid / WARP_SIZE;
    int lane = tid % WARP_SIZE;
    sum = warp_reduce_sum_f32<WARP_SIZE>(sum);
    if (lane == 0) reduce_smem[warp] = sum;
    __syncthreads();
    sum = (lane < NUM_WARPS) ? reduce_smem[lane] : 0.0f;
    if (warp == 0) sum = warp_reduce_sum_f32<NUM_WARPS>(sum);
    if (tid == 0) atomicAdd(g_out, sum);
}
