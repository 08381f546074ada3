// Warp-aggregated atomics, atomicCAS loops and the other atomic operations.
extern "C" __global__ void warp_aggregated_filter(const int* in, int* out, unsigned* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool keep = i < n && in[i] > 0;
    unsigned mask = __ballot_sync(0xffffffffu, keep);
    if (keep) {
        int lane = threadIdx.x & 31;
        int leader = __ffs(mask) - 1;
        unsigned base = 0;
        if (lane == leader) base = atomicAdd(count, __popc(mask));
        base = __shfl_sync(mask, base, leader);
        out[base + __popc(mask & ((1u << lane) - 1))] = in[i];
    }
}

__device__ float atomic_max_float(float* addr, float v) {
    int* a = (int*)addr;
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(a, assumed, __float_as_int(v));
    } while (assumed != old);
    return __int_as_float(old);
}

extern "C" __global__ void cas_max(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_max_float(out, in[i]);
}

extern "C" __global__ void atomic_mix(const int* in, int* acc, unsigned* uacc, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = in[i];
        atomicMax(acc + 0, v);
        atomicMin(acc + 1, v);
        atomicAnd(acc + 2, v | 0x100);
        atomicOr(acc + 3, v & 0xff);
        atomicXor(acc + 4, v);
        atomicInc(uacc + 0, 37u);
        atomicDec(uacc + 1, 11u);
        atomicAdd(uacc + 2, (unsigned)v);
    }
}

extern "C" __global__ void atomic_f64(const double* in, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out + (i & 3), in[i]);
}
