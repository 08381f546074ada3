// Half precision with the cuda_fp16.h / cuda_bf16.h intrinsics: scalar and packed f16/bf16
// arithmetic, min/max (with the NaN-propagating variants), comparisons, and conversions.
// Each thread reads a, b, c (raw 16-bit bits) and writes NOUT 16-bit results (packed ones as
// two halves) to out[NOUT * i + k].
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define NH 24
extern "C" __global__ void half_ops(const __half* a, const __half* b, const __half* c, unsigned short* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half x = a[i], y = b[i], z = c[i];
    __half r[NH];
    r[0] = __hadd(x, y);
    r[1] = __hsub(x, y);
    r[2] = __hmul(x, y);
    r[3] = __hfma(x, y, z);
    r[4] = __hadd_sat(x, y);
    r[5] = __hmul_sat(x, y);
    r[6] = __hfma_sat(x, y, z);
    r[7] = __hneg(x);
    r[8] = __habs(x);
    r[9] = __hmin(x, y);
    r[10] = __hmax(x, y);
    r[11] = __hmin_nan(x, y);
    r[12] = __hmax_nan(x, y);
    r[13] = __hfma_relu(x, y, z);
    r[14] = __float2half_rn(__half2float(x) * 3.0f);
    r[15] = __float2half_rz(__half2float(y) * 3.0f);
    r[16] = __float2half_rd(__half2float(z) * 3.0f);
    r[17] = __float2half_ru(__half2float(x) * 3.0f);
    r[18] = __hadd_rn(x, z);
    r[19] = __hmul_rn(y, z);
    r[20] = __hsub_rn(z, x);
    r[21] = __double2half((double)__half2float(x) / 3.0);
    unsigned short m = (__heq(x, y) ? 1 : 0) | (__hlt(x, y) ? 2 : 0) | (__hle(x, y) ? 4 : 0) | (__hgt(x, y) ? 8 : 0)
                     | (__hge(x, y) ? 16 : 0) | (__hne(x, y) ? 32 : 0) | (__hequ(x, y) ? 64 : 0) | (__hltu(x, y) ? 128 : 0)
                     | (__hneu(x, y) ? 256 : 0) | (__hisnan(x) ? 512 : 0) | (__hgtu(x, y) ? 1024 : 0) | (__hisinf(y) ? 2048 : 0);
    r[22] = __ushort_as_half(m);
    r[23] = __int2half_rn(__half2int_rz(x) + __half2int_rn(y));
    for (int k = 0; k < NH; k++) out[NH * i + k] = __half_as_ushort(r[k]);
}

#define NH2 14
extern "C" __global__ void half2_ops(const __half2* a, const __half2* b, const __half2* c, __half2* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = a[i], y = b[i], z = c[i];
    __half2 r[NH2];
    r[0] = __hadd2(x, y);
    r[1] = __hsub2(x, y);
    r[2] = __hmul2(x, y);
    r[3] = __hfma2(x, y, z);
    r[4] = __hadd2_sat(x, y);
    r[5] = __hfma2_sat(x, y, z);
    r[6] = __hneg2(x);
    r[7] = __habs2(x);
    r[8] = __hmin2(x, y);
    r[9] = __hmax2(x, y);
    r[10] = __hmax2_nan(x, y);
    r[11] = __hfma2_relu(x, y, z);
    r[12] = __floats2half2_rn(__low2float(x) + __high2float(y), __high2float(z) * 0.5f);
    r[13] = __halves2half2(__hadd(__low2half(x), __high2half(y)), __hmul(__high2half(x), __low2half(z)));
    for (int k = 0; k < NH2; k++) out[NH2 * i + k] = r[k];
}

#define NB 20
extern "C" __global__ void bf16_ops(const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c,
                                    unsigned short* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 x = a[i], y = b[i], z = c[i];
    __nv_bfloat16 r[NB];
    r[0] = __hadd(x, y);
    r[1] = __hsub(x, y);
    r[2] = __hmul(x, y);
    r[3] = __hfma(x, y, z);
    r[4] = __hneg(x);
    r[5] = __habs(x);
    r[6] = __hmin(x, y);
    r[7] = __hmax(x, y);
    r[8] = __hmin_nan(x, y);
    r[9] = __hmax_nan(x, y);
    r[10] = __hfma_relu(x, y, z);
    r[11] = __float2bfloat16(__bfloat162float(x) * 3.0f);
    r[12] = __float2bfloat16_rz(__bfloat162float(y) * 3.0f);
    r[13] = __float2bfloat16_rd(__bfloat162float(z) * 3.0f);
    r[14] = __float2bfloat16_ru(__bfloat162float(x) * 3.0f);
    r[15] = __hfma_sat(x, y, z);
    r[16] = __double2bfloat16((double)__bfloat162float(x) / 3.0);
    unsigned short m = (__heq(x, y) ? 1 : 0) | (__hlt(x, y) ? 2 : 0) | (__hle(x, y) ? 4 : 0) | (__hgt(x, y) ? 8 : 0)
                     | (__hge(x, y) ? 16 : 0) | (__hne(x, y) ? 32 : 0) | (__hequ(x, y) ? 64 : 0) | (__hltu(x, y) ? 128 : 0)
                     | (__hisnan(x) ? 512 : 0);
    r[17] = __ushort_as_bfloat16(m);
    r[18] = __float2bfloat16(__half2float(__float2half(__bfloat162float(x))));   // bf16 -> f16 -> bf16 via f32
    r[19] = __hadd_rn(x, z);
    for (int k = 0; k < NB; k++) out[NB * i + k] = __bfloat16_as_ushort(r[k]);
}

#define NB2 11
extern "C" __global__ void bf162_ops(const __nv_bfloat162* a, const __nv_bfloat162* b, const __nv_bfloat162* c,
                                     __nv_bfloat162* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat162 x = a[i], y = b[i], z = c[i];
    __nv_bfloat162 r[NB2];
    r[0] = __hadd2(x, y);
    r[1] = __hsub2(x, y);
    r[2] = __hmul2(x, y);
    r[3] = __hfma2(x, y, z);
    r[4] = __hneg2(x);
    r[5] = __habs2(x);
    r[6] = __hmin2(x, y);
    r[7] = __hmax2_nan(x, y);
    r[8] = __hfma2_relu(x, y, z);
    r[9] = __floats2bfloat162_rn(__low2float(x) + __high2float(y), __high2float(z) * 0.5f);
    r[10] = __float22bfloat162_rn(make_float2(__low2float(x) * 1.5f, __high2float(x) - 1.0f));
    for (int k = 0; k < NB2; k++) out[NB2 * i + k] = r[k];
}

// f16 <-> f32 <-> bf16 conversions and the f16 dot product a mixed-precision kernel writes.
extern "C" __global__ void half_convert(const float* f, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = f[i];
    __half h = __float2half(v);
    __nv_bfloat16 bh = __float2bfloat16(v);
    out[6 * i + 0] = __half2float(h);
    out[6 * i + 1] = __bfloat162float(bh);
    out[6 * i + 2] = __half2float(__float2half_rz(v));
    out[6 * i + 3] = __bfloat162float(__float2bfloat16_rz(v));
    __half2 p = __float22half2_rn(make_float2(v, -2.0f * v));
    float2 q = __half22float2(__hmul2(p, p));
    out[6 * i + 4] = q.x + q.y;
    out[6 * i + 5] = __half2float(__float2half(v * 65504.0f));
}

// Packed comparisons: set.CMP.f16x2.f16x2 (1.0 per true half), set.CMP.u32.f16x2 (0xffff per true
// half), setp on halves, and their bf16x2 forms.
extern "C" __global__ void half2_compare(const __half2* a, const __half2* b, const __nv_bfloat162* c,
                                         const __nv_bfloat162* d, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = a[i], y = b[i];
    __nv_bfloat162 p = c[i], q = d[i];
    __half2 g = __hgt2(x, y), m = __hmul2(__hgeu2(x, y), x);
    out[6 * i + 0] = *(unsigned*)&g;
    out[6 * i + 1] = __heq2_mask(x, y) ^ (__hltu2_mask(x, y) << 1);
    out[6 * i + 2] = *(unsigned*)&m;
    out[6 * i + 3] = __hbeq2(x, y) | (__hbltu2(x, y) << 1) | (__hbgt2(x, y) << 2) | (__hbne2(x, y) << 3);
    __nv_bfloat162 r = __hgt2(p, q);
    out[6 * i + 4] = *(unsigned*)&r;
    out[6 * i + 5] = __hle2_mask(p, q) ^ (__hbge2(p, q) << 31);
}
