// Everyday intrinsics: float classification, copysign, dp4a, cache-hinted loads and stores,
// fences, __syncwarp, address-space queries, block/system-scoped atomics, clock, nanosleep.
extern "C" __global__ void classify(const float* x, const double* y, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        double d = y[i];
        unsigned m = isnan(v) | isinf(v) << 1 | isfinite(v) << 2 | signbit(v) << 3 |
                     isnan(d) << 4 | isinf(d) << 5 | isfinite(d) << 6 | signbit(d) << 7;
        out[3 * i] = m;
        out[3 * i + 1] = __float_as_uint(copysignf(1.5f, v)) ^ __float_as_uint(fabsf(v));
        out[3 * i + 2] = (unsigned)__double_as_longlong(copysign(2.0, d));
    }
}

extern "C" __global__ void dot4(const int* a, const int* b, int* out, unsigned* uout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __dp4a(a[i], b[i], i);
        uout[i] = __dp4a((unsigned)a[i], (unsigned)b[i], 7u) + __dp2a_lo(a[i], b[i], 1) + __dp2a_hi((unsigned)a[i], (unsigned)b[i], 2u);
    }
}

extern "C" __global__ void cache_hints(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __ldcg(in + i) + __ldcs(in + i) + __ldlu(in + i) + __ldcv(in + i) + __ldca(in + i);
        __stcs(out + i, v);
        __stwt(out + n + i, v * 2.0f);
        __stcg(out + 2 * n + i, v * 3.0f);
        __stwb(out + 3 * n + i, v * 4.0f);
    }
}

__device__ int g_flag;

extern "C" __global__ void fences_and_scopes(int* data, unsigned* out, int n) {
    __shared__ int s[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i;
    __syncwarp();
    __threadfence_block();
    __threadfence();
    __threadfence_system();
    unsigned sp = __isShared(&s[threadIdx.x]) | __isGlobal(data) << 1 | __isLocal(data) << 2 | __isConstant(data) << 3;
    atomicAdd_block(data, 1);
    atomicAdd_system(data + 1, 2);
    atomicMax_block(data + 2, i);
    atomicExch_system(&g_flag, i);
    __nanosleep(10);
    long long t0 = clock64();
    unsigned c = (unsigned)clock();
    if (i < n) out[i] = sp + ((t0 >= 0) << 4) + ((c == c) << 5) + (s[(threadIdx.x + 1) & 63] << 8);
}

extern "C" __global__ void int_misc(const int* a, const int* b, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int x = a[i], y = b[i];
        out[8 * i + 0] = __mulhi(x, y);
        out[8 * i + 1] = (int)__umulhi((unsigned)x, (unsigned)y);
        out[8 * i + 2] = __hadd(x, y);
        out[8 * i + 3] = __rhadd(x, y);
        out[8 * i + 4] = (int)__sad(x, y, 5u);
        out[8 * i + 5] = abs(x) + __mul24(x, y);
        out[8 * i + 6] = (int)__vadd2((unsigned)x, (unsigned)y) ^ (int)__vsub4((unsigned)x, (unsigned)y);
        out[8 * i + 7] = __ffsll((long long)x << 20) + __popcll((unsigned long long)y) + __clzll((long long)x);
    }
}

extern "C" __global__ void trap_if_negative(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (x[i] < 0) __trap();
        out[i] = x[i];
    }
}
