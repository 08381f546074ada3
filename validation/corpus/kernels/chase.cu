// Corpus family "chase": dependent loads (pointer chasing), each thread following a linked list
// stored as a successor array, the access pattern that exposes memory latency rather than
// bandwidth. Written for gpusim's generalization corpus from the pointer-chasing latency
// benchmarks of Wong et al., "Demystifying GPU Microarchitecture through Microbenchmarking"
// (ISPASS 2010) and Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
// Microbenchmarking" (2018), here with many independent chains at once.

// end[i] = next^steps(start[i]).
extern "C" __global__ void chase(const unsigned* __restrict__ next, const unsigned* __restrict__ start,
                                 unsigned* __restrict__ end, int steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned p = start[i];
        for (int s = 0; s < steps; ++s)
            p = next[p];
        end[i] = p;
    }
}

// The same, summing the nodes' payloads on the way (two loads per step, one dependent).
extern "C" __global__ void chase_sum(const unsigned* __restrict__ next, const unsigned* __restrict__ payload,
                                     const unsigned* __restrict__ start, unsigned* __restrict__ end,
                                     unsigned* __restrict__ sums, int steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned p = start[i], s = 0;
        for (int k = 0; k < steps; ++k) {
            s += payload[p];
            p = next[p];
        }
        end[i] = p;
        sums[i] = s;
    }
}
