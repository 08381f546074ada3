// GPU probe kernels (validation/probes/smem_conflict.py): what a k-way bank-conflicted shared load
// costs on the H100. Lane t of each warp reads word t * K (+ the previous result, always 0), so
// its 32 lanes fall on 32 / K banks, K lanes a bank: a K-way conflict, K wavefronts (hardware-facts
// §5). chain_K: one warp, 8 dependent loads a loop trip (latency). tput_K: 32 warps, 8 independent
// loads a trip (the SM's data stage). Signature as int_pipes.cu's, so int_pipes.measure times them.
// Compile: nvcc -arch=sm_90 -ptx smem_conflict.cu -o smem_conflict.ptx
#define CHAIN(K) \
extern "C" __global__ void chain_##K(unsigned* out, unsigned c, int n, long long* t) { \
    __shared__ unsigned s[32 * 32 + 64]; \
    for (int i = threadIdx.x; i < 32 * 32 + 64; i += blockDim.x) s[i] = c - 7; \
    volatile unsigned* vs = s; unsigned v = 0, base = threadIdx.x * K; \
    __syncthreads(); long long t0 = clock64(); \
    for (int i = 0; i < n; ++i) { \
        _Pragma("unroll") for (int j = 0; j < 8; ++j) v = vs[base + v]; \
    } \
    long long t1 = clock64(); __syncthreads(); \
    out[threadIdx.x] = v; if (threadIdx.x == 0) t[blockIdx.x] = t1 - t0; }
#define TPUT(K) \
extern "C" __global__ void tput_##K(unsigned* out, unsigned c, int n, long long* t) { \
    __shared__ unsigned s[32 * 32 + 64]; \
    for (int i = threadIdx.x; i < 32 * 32 + 64; i += blockDim.x) s[i] = c - 7; \
    volatile unsigned* vs = s; unsigned a = 0, base = (threadIdx.x & 31) * K; \
    __syncthreads(); long long t0 = clock64(); \
    for (int i = 0; i < n; ++i) { \
        _Pragma("unroll") for (int j = 0; j < 8; ++j) a += vs[base + j]; \
    } \
    long long t1 = clock64(); __syncthreads(); \
    out[threadIdx.x] = a; if (threadIdx.x == 0) t[blockIdx.x] = t1 - t0; }
CHAIN(1) CHAIN(2) CHAIN(4) CHAIN(8) CHAIN(16) CHAIN(32)
TPUT(1) TPUT(2) TPUT(4) TPUT(8) TPUT(16) TPUT(32)
