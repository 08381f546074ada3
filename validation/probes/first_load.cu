// Cold dependent loads (validation/probes/first_load.py): one thread follows a chain of k
// pointers, p = *p, from caches ncu flushed. Within one page of 64 KiB or one step per 2 MiB
// page, the slope over k is a DRAM access with and without a TLB miss, and the intercept against
// k = 0 is what the first load of a launch costs.
// Compiled with: nvcc -ptx -arch=sm_90 -o first_load.ptx first_load.cu
extern "C" __global__ void chase(const unsigned long long* start, int k, unsigned long long* out) {
    const unsigned long long* p = start;
#pragma unroll 1
    for (int i = 0; i < k; ++i) p = (const unsigned long long*)(*p);
    out[threadIdx.x] = (unsigned long long)p;
}
