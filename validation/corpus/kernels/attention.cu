// Corpus family "attention": one query row against tiles of keys and values with an online
// softmax, O = softmax(q K^T * scale) V, head dimension 64.
// Written for gpusim's generalization corpus from Milakov & Gimelshein, "Online normalizer
// calculation for softmax" (2018) and Dao et al., "FlashAttention: Fast and Memory-Efficient
// Exact Attention with IO-Awareness" (NeurIPS 2022): the running maximum and sum rescale the
// partial output as each tile of keys arrives. One warp per query row; a CTA of 4 warps (4 rows
// of one head) stages each tile of TK keys and values in shared memory.

// -infinity (NVRTC has no <cmath> INFINITY)
#define NEG_INF (-__int_as_float(0x7f800000))

#define D 64
#define TK 32

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

// Q, O: [heads][nq][D]; K, V: [heads][nk][D]; grid (nq / 4, heads), block 128; nk a multiple of
// TK. Lane j scores key j of the tile; each lane accumulates output columns lane and lane + 32.
extern "C" __global__ void attn_row(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ O, int nq, int nk, float scale)
{
    __shared__ float ks[TK][D + 1];
    __shared__ float vs[TK][D];
    __shared__ float qs[4][D];
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int head = blockIdx.y, q = blockIdx.x * 4 + warp;
    const float* Kh = K + (size_t)head * nk * D;
    const float* Vh = V + (size_t)head * nk * D;
    const float* qrow = Q + ((size_t)head * nq + q) * D;
    qs[warp][lane] = qrow[lane] * scale;
    qs[warp][lane + 32] = qrow[lane + 32] * scale;
    float m = NEG_INF, l = 0.0f, o0 = 0.0f, o1 = 0.0f;
    for (int t = 0; t < nk; t += TK) {
        __syncthreads();
        for (int e = threadIdx.x; e < TK * D; e += blockDim.x) {
            int r = e / D, c = e % D;
            ks[r][c] = Kh[(size_t)(t + r) * D + c];
            vs[r][c] = Vh[(size_t)(t + r) * D + c];
        }
        __syncthreads();
        float s = 0.0f;
        for (int d = 0; d < D; ++d)
            s += qs[warp][d] * ks[lane][d];
        float mnew = fmaxf(m, warp_max(s));
        float p = expf(s - mnew);
        float corr = expf(m - mnew);
        l = l * corr + warp_sum(p);
        o0 *= corr;
        o1 *= corr;
        for (int j = 0; j < TK; ++j) {
            float pj = __shfl_sync(0xffffffffu, p, j);
            o0 += pj * vs[j][lane];
            o1 += pj * vs[j][lane + 32];
        }
        m = mnew;
    }
    float* orow = O + ((size_t)head * nq + q) * D;
    orow[lane] = o0 / l;
    orow[lane + 32] = o1 / l;
}
