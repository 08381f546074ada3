// Corpus family "norm": row-wise softmax and layer normalisation of a float matrix.
// Written for gpusim's generalization corpus from the definitions of softmax and of layer
// normalisation (Ba, Kiros & Hinton, "Layer Normalization", 2016) and the reduction patterns of
// PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 10 "Reduction" (shuffle reductions within warps, the
// warps' partial results combined through shared memory). Precise expf, division and rsqrtf (no
// fast-math).

// -infinity (NVRTC has no <cmath> INFINITY)
#define NEG_INF (-__int_as_float(0x7f800000))

__device__ float warp_max(float v)
{
    for (int d = 16; d > 0; d /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, d));
    return v;
}

__device__ float warp_sum(float v)
{
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

// Reduce one value per thread over the CTA (blockDim.x a multiple of 32); every thread gets the result.
__device__ float block_reduce(float v, float* scratch, bool is_max)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = is_max ? warp_max(v) : warp_sum(v);
    __syncthreads();
    if (lane == 0)
        scratch[warp] = v;
    __syncthreads();
    float r = lane < nwarps ? scratch[lane] : (is_max ? NEG_INF : 0.0f);
    return is_max ? warp_max(r) : warp_sum(r);
}

// One CTA per row: max, sum of exp(x - max), then exp(x - max) / sum.
extern "C" __global__ void softmax_block(const float* __restrict__ x, float* __restrict__ y, int cols)
{
    __shared__ float scratch[32];
    const float* row = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float m = NEG_INF;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, row[c]);
    m = block_reduce(m, scratch, true);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += expf(row[c] - m);
    s = block_reduce(s, scratch, false);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = expf(row[c] - m) / s;
}

// One warp per row of 128 columns, the row held in registers (4 values per lane).
extern "C" __global__ void softmax_warp(const float* __restrict__ x, float* __restrict__ y, int rows)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const float* row = x + (size_t)r * 128;
    float v[4], m = NEG_INF, s = 0.0f;
    for (int k = 0; k < 4; ++k) {
        v[k] = row[lane + 32 * k];
        m = fmaxf(m, v[k]);
    }
    m = warp_max(m);
    for (int k = 0; k < 4; ++k) {
        v[k] = expf(v[k] - m);
        s += v[k];
    }
    s = warp_sum(s);
    for (int k = 0; k < 4; ++k)
        y[(size_t)r * 128 + lane + 32 * k] = v[k] / s;
}

// One CTA per row: mean, variance about the mean (two passes), then (x - mean) * rsqrt(var + eps)
// * gamma + beta.
extern "C" __global__ void layernorm(const float* __restrict__ x, const float* __restrict__ gamma,
                                     const float* __restrict__ beta, float* __restrict__ y, int cols, float eps)
{
    __shared__ float scratch[32];
    const float* row = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += row[c];
    float mean = block_reduce(s, scratch, false) / cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = row[c] - mean;
        q += d * d;
    }
    float rstd = rsqrtf(block_reduce(q, scratch, false) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
}
