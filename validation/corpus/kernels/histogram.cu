// Corpus family "histogram": 256-bin histograms of byte keys.
// Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 9
// "Parallel histogram": the basic kernel with one global atomic per input, privatisation in
// shared memory, thread coarsening with contiguous partitioning, and aggregation of runs of
// equal keys.

#define BINS 256
#define PER_THREAD 16

// One global atomicAdd per key; each thread handles PER_THREAD keys interleaved across the grid
// (coalesced reads).
extern "C" __global__ void hist_global(const unsigned char* __restrict__ keys, unsigned* hist, int n)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&hist[keys[i]], 1u);
}

// Privatised: each CTA counts into shared memory, then adds its nonzero bins to the global ones.
extern "C" __global__ void hist_private(const unsigned char* __restrict__ keys, unsigned* hist, int n)
{
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&local[keys[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned c = local[b];
        if (c != 0)
            atomicAdd(&hist[b], c);
    }
}

// Privatised, coarsened with contiguous partitioning (thread t of the grid takes keys
// [t * PER_THREAD, (t + 1) * PER_THREAD)) and aggregating runs of equal keys into one atomic.
extern "C" __global__ void hist_aggregate(const unsigned char* __restrict__ keys, unsigned* hist, int n)
{
    __shared__ unsigned local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int start = (blockIdx.x * blockDim.x + threadIdx.x) * PER_THREAD;
    int prev = -1;
    unsigned run = 0;
    for (int i = start; i < start + PER_THREAD && i < n; ++i) {
        int k = keys[i];
        if (k == prev) {
            ++run;
        } else {
            if (run > 0)
                atomicAdd(&local[prev], run);
            prev = k;
            run = 1;
        }
    }
    if (run > 0)
        atomicAdd(&local[prev], run);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned c = local[b];
        if (c != 0)
            atomicAdd(&hist[b], c);
    }
}
