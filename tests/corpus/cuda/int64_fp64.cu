// 64-bit integer and fp64 arithmetic.
__device__ unsigned long long splitmix64(unsigned long long z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

extern "C" __global__ void hash64(const unsigned long long* x, unsigned long long* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = splitmix64(x[i]);
}

extern "C" __global__ void int64_ops(const long long* a, const long long* b, long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        long long x = a[i], y = b[i];
        long long q = y != 0 ? x / y : 0, r = y != 0 ? x % y : 0;
        unsigned long long hi = __umul64hi((unsigned long long)x, (unsigned long long)y);
        long long shr = x >> (y & 63);
        unsigned long long ushr = (unsigned long long)x >> (y & 63);
        out[8 * i + 0] = x * y;
        out[8 * i + 1] = q;
        out[8 * i + 2] = r;
        out[8 * i + 3] = (long long)hi;
        out[8 * i + 4] = shr;
        out[8 * i + 5] = (long long)ushr;
        out[8 * i + 6] = min(x, y) ^ max(x, y);
        out[8 * i + 7] = __mul64hi(x, y) + (x < y ? 1 : 0);
    }
}

extern "C" __global__ void fp64_ops(const double* a, const double* b, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double x = a[i], y = b[i];
        out[6 * i + 0] = x + y;
        out[6 * i + 1] = x * y - x;
        out[6 * i + 2] = fma(x, y, -1.0);
        out[6 * i + 3] = x / y;
        out[6 * i + 4] = sqrt(fabs(x));
        out[6 * i + 5] = fmin(x, y) + fmax(x, y) * 0.5;
    }
}
