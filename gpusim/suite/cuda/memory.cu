// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/memory.ptx memory.cu
//
// Global-memory access patterns from the course notes (seeds 001, 004):
//   copy_offset       misaligned sequential copy: b[i+offset] = a[i+offset] (5 sectors per warp, not 4)
//   copy_stride       strided copy: b[i*stride] = a[i*stride] (one sector per thread at stride >= 8)
//   copy_vec4         vectorized (multi-word) access: one float4 per thread
//   copy_grid_stride  memory-bound copy for occupancy / Little's law: a grid-stride loop whose
//                     grid size is chosen by the caller (bytes in flight = warps x loads in flight)
//   aos_update        Array-of-Structures: data[i].u += 10, data[i].y[0] += 10 (80-byte stride)
//   soa_update        Structure-of-Arrays: the same update, each field contiguous
//   local_hist8       per-thread automatic array indexed at run time -> local memory
//   axpy_half         mixed precision (fp16 storage): y = alpha*x + y with __hfma
// Changes from the notes: extern "C", explicit sizes, bounds guards; the AoS kernel
// uses blockIdx.x*blockDim.x+threadIdx.x instead of cooperative groups' thread_rank().

#include <cuda_fp16.h>

// n: array length; threads cover i in [offset, n)
extern "C" __global__ void copy_offset(const float *a, float *b, unsigned int n, unsigned int offset)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x + offset;
    if (i < n) b[i] = a[i];
}

// n: array length; thread t copies element t*stride
extern "C" __global__ void copy_stride(const float *a, float *b, unsigned int n, unsigned int stride)
{
    unsigned int i = (blockIdx.x * blockDim.x + threadIdx.x) * stride;
    if (i < n) b[i] = a[i];
}

// n4: number of float4 elements
extern "C" __global__ void copy_vec4(const float4 *a, float4 *b, unsigned int n4)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) b[i] = a[i];
}

// grid-stride copy, four independent loads in flight per thread per step
extern "C" __global__ void copy_grid_stride(const float *__restrict__ a, float *__restrict__ b, unsigned int n)
{
    unsigned int stride = blockDim.x * gridDim.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        float v0 = a[i];
        float v1 = a[i + stride];
        float v2 = a[i + 2 * stride];
        float v3 = a[i + 3 * stride];
        b[i] = v0;
        b[i + stride] = v1;
        b[i + 2 * stride] = v2;
        b[i + 3 * stride] = v3;
    }
    for (; i < n; i += stride) b[i] = a[i];
}

struct Coefficients {
    float u, v, w;
    float x[8], y[8], z;
};  // 20 floats = 80 bytes

extern "C" __global__ void aos_update(Coefficients *data, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i].u = data[i].u + 10.f;
        data[i].y[0] = data[i].y[0] + 10.f;
    }
}

// soa holds the 20 fields of Coefficients as 20 arrays of n floats, field-major:
// u = soa[0*n ...], v = soa[1*n ...], w = soa[2*n ...], x[j] = soa[(3+j)*n ...],
// y[j] = soa[(11+j)*n ...], z = soa[19*n ...]
extern "C" __global__ void soa_update(float *soa, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float *u = soa;
        float *y0 = soa + 11 * (size_t)n;
        u[i] = u[i] + 10.f;
        y0[i] = y0[i] + 10.f;
    }
}

// Each thread histograms k consecutive inputs into 8 bins (value & 7) kept in a
// per-thread array; out[t*8 + b] = count of bin b.  n threads.
extern "C" __global__ void local_hist8(const unsigned int *in, unsigned int *out, unsigned int n, unsigned int k)
{
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned int hist[8];
    for (int b = 0; b < 8; ++b) hist[b] = 0;
    for (unsigned int j = 0; j < k; ++j)
        hist[in[t * k + j] & 7u] += 1;
    for (int b = 0; b < 8; ++b) out[t * 8 + b] = hist[b];
}

// y[i] = fma(alpha, x[i], y[i]) in half precision (one rounding)
extern "C" __global__ void axpy_half(const __half *x, __half *y, float alpha, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hfma(__float2half(alpha), x[i], y[i]);
}
