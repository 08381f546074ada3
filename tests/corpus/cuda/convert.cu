// cvt between every pair of the integer and float types (C conversions), and rounding intrinsics.
#include <cstdint>
template <typename S, typename D>
__global__ void convert(const S* in, D* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (D)in[i];
}
#define FROM(S) \
  template __global__ void convert<S, int8_t>(const S*, int8_t*, int); \
  template __global__ void convert<S, uint8_t>(const S*, uint8_t*, int); \
  template __global__ void convert<S, int16_t>(const S*, int16_t*, int); \
  template __global__ void convert<S, uint16_t>(const S*, uint16_t*, int); \
  template __global__ void convert<S, int32_t>(const S*, int32_t*, int); \
  template __global__ void convert<S, uint32_t>(const S*, uint32_t*, int); \
  template __global__ void convert<S, int64_t>(const S*, int64_t*, int); \
  template __global__ void convert<S, uint64_t>(const S*, uint64_t*, int); \
  template __global__ void convert<S, float>(const S*, float*, int); \
  template __global__ void convert<S, double>(const S*, double*, int);
FROM(int8_t) FROM(uint8_t) FROM(int16_t) FROM(uint16_t) FROM(int32_t) FROM(uint32_t)
FROM(int64_t) FROM(uint64_t) FROM(float) FROM(double)

extern "C" __global__ void rounding(const float* f, const double* d, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[12 * i + 0] = __float2int_rn(f[i]);
        out[12 * i + 1] = __float2int_rz(f[i]);
        out[12 * i + 2] = __float2int_rd(f[i]);
        out[12 * i + 3] = __float2int_ru(f[i]);
        out[12 * i + 4] = (int)__float2uint_rn(f[i]);
        out[12 * i + 5] = __double2int_rn(d[i]);
        out[12 * i + 6] = __float_as_int(__double2float_rd(d[i]));
        out[12 * i + 7] = __float_as_int(__double2float_ru(d[i]));
        out[12 * i + 8] = __float_as_int(__int2float_rz(out[12 * i + 0] * 12345677));
        out[12 * i + 9] = __float_as_int(__saturatef(f[i]));
        out[12 * i + 10] = __float_as_int(rintf(f[i]) + truncf(f[i]) + floorf(f[i]) + ceilf(f[i]));
        out[12 * i + 11] = (int)(long long)__double2ll_rz(d[i] * 1e9);
    }
}
