// Corpus family "fft": radix-2 Stockham FFT butterflies on complex floats (float2: re, im).
// Written for gpusim's generalization corpus from Govindaraju et al., "High Performance Discrete
// Fourier Transforms on Graphics Processors" (SC 2008: the Stockham auto-sort formulation, one
// kernel per radix-2 stage, and small FFTs done entirely in shared memory) and Van Loan,
// "Computational Frameworks for the Fast Fourier Transform" (SIAM 1992). Twiddle factors come from
// a table, tw[m] = exp(-2 pi i m / N) for m < N / 2, computed on the host.

__device__ float2 butterfly_twiddle(float2 b, float2 w)
{
    return make_float2(b.x * w.x - b.y * w.y, b.x * w.y + b.y * w.x);
}

// One radix-2 Stockham stage over N points: thread j (j < N / 2) combines in[j] and in[j + N/2]
// with twiddle tw[k * (N / (2 Ns))], k = j mod Ns, into out[(j / Ns) * 2 Ns + k] and that + Ns.
extern "C" __global__ void fft_radix2_stage(const float2* __restrict__ in, float2* __restrict__ out,
                                            const float2* __restrict__ tw, int n, int ns)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int half = n / 2;
    if (j >= half)
        return;
    int k = j & (ns - 1);
    float2 a = in[j];
    float2 b = butterfly_twiddle(in[j + half], tw[k * (half / ns)]);
    int d = (j / ns) * 2 * ns + k;
    out[d] = make_float2(a.x + b.x, a.y + b.y);
    out[d + ns] = make_float2(a.x - b.x, a.y - b.y);
}

#define N1K 1024

// A whole 1,024-point FFT per CTA of 512 threads: the 10 Stockham stages ping-pong between two
// shared buffers; tw holds the 512 twiddles of N = 1024.
extern "C" __global__ void fft1024_shared(const float2* __restrict__ in, float2* __restrict__ out,
                                          const float2* __restrict__ tw)
{
    __shared__ float2 buf[2][N1K];
    const float2* src = in + (size_t)blockIdx.x * N1K;
    int j = threadIdx.x;
    buf[0][j] = src[j];
    buf[0][j + N1K / 2] = src[j + N1K / 2];
    int from = 0;
    for (int ns = 1; ns < N1K; ns *= 2) {
        __syncthreads();
        int k = j & (ns - 1);
        float2 a = buf[from][j];
        float2 b = butterfly_twiddle(buf[from][j + N1K / 2], tw[k * (N1K / 2 / ns)]);
        int d = (j / ns) * 2 * ns + k;
        buf[1 - from][d] = make_float2(a.x + b.x, a.y + b.y);
        buf[1 - from][d + ns] = make_float2(a.x - b.x, a.y - b.y);
        from = 1 - from;
    }
    __syncthreads();
    float2* dst = out + (size_t)blockIdx.x * N1K;
    dst[j] = buf[from][j];
    dst[j + N1K / 2] = buf[from][j + N1K / 2];
}
