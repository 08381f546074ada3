// Corpus family "atomics": global and shared atomics, integer and float, with the result used
// (PTX atom) or not (PTX red), contended (few addresses) or spread (many).
// Written for gpusim's generalization corpus from the description of atomic operations in
// Hwu, Kirk & El Hajj, "Programming Massively Parallel Processors" (4th ed.), ch. 9 (atomic
// operations, latency and throughput of contended atomics) and the CUDA C Programming Guide's
// atomic functions section.

// Every thread adds 1 to counters[keys[i]] and keeps the old value: PTX atom.global.add.u32.
extern "C" __global__ void atom_add_u32(const unsigned* __restrict__ keys, unsigned* counters,
                                        unsigned* __restrict__ old, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        old[i] = atomicAdd(&counters[keys[i]], 1u);
}

// Every thread adds vals[i] to counters[keys[i]] and ignores the result: PTX red.global.add.u32.
extern "C" __global__ void red_add_u32(const unsigned* __restrict__ keys, const unsigned* __restrict__ vals,
                                       unsigned* counters, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&counters[keys[i]], vals[i]);
}

// The same with float values: PTX red.global.add.f32.
extern "C" __global__ void red_add_f32(const unsigned* __restrict__ keys, const float* __restrict__ vals,
                                       float* sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&sums[keys[i]], vals[i]);
}

// Shared-memory atomics with the result used: each CTA counts its keys modulo 32 in shared
// memory, every thread keeps the old count it saw, and the CTA adds its counts to the global ones.
extern "C" __global__ void atom_shared_add_u32(const unsigned* __restrict__ keys, unsigned* counters,
                                               unsigned* __restrict__ old, int n)
{
    __shared__ unsigned bins[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 32)
        bins[threadIdx.x] = 0;
    __syncthreads();
    if (i < n)
        old[i] = atomicAdd(&bins[keys[i] & 31u], 1u);
    __syncthreads();
    if (threadIdx.x < 32 && bins[threadIdx.x] != 0)
        atomicAdd(&counters[threadIdx.x], bins[threadIdx.x]);
}

// Shared-memory atomicMax with the result unused, then one global atomicMax per CTA and slot:
// each CTA finds the largest value of each of 8 slots (vals[i] goes to slot i % 8).
extern "C" __global__ void red_shared_max_s32(const int* __restrict__ vals, int* maxima, int n)
{
    __shared__ int best[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 8)
        best[threadIdx.x] = -2147483647 - 1;
    __syncthreads();
    if (i < n)
        atomicMax(&best[i & 7], vals[i]);
    __syncthreads();
    if (threadIdx.x < 8)
        atomicMax(&maxima[threadIdx.x], best[threadIdx.x]);
}
