// Straight-line code of growing length (validation/probes/icache.py): four independent IMAD
// chains, fully unrolled, so a warp issues one instruction a cycle once its code is fetched.
// The cycles one more instruction costs, cold (ncu flushes the caches) and warm, show what
// fetching the code costs; gpusim simulates the same PTX with no instruction cache.
// Compiled with: nvcc -ptx -arch=sm_90 -o icache.ptx icache.cu
template <int N>
__device__ __forceinline__ void body(unsigned* out) {
    unsigned a = threadIdx.x, b = a + 1u, c = a + 2u, d = a + 3u;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        a = a * a + 1u;
        b = b * b + 3u;
        c = c * c + 5u;
        d = d * d + 7u;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a ^ b ^ c ^ d;
}

extern "C" __global__ void straight_0(unsigned* out) { body<0>(out); }
extern "C" __global__ void straight_256(unsigned* out) { body<256>(out); }
extern "C" __global__ void straight_1024(unsigned* out) { body<1024>(out); }
extern "C" __global__ void straight_2048(unsigned* out) { body<2048>(out); }
