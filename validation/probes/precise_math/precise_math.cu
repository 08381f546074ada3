// Option pricing and the transcendentals without fast-math: the libdevice software paths (expf, logf,
// sinf/cosf with their large-argument reduction, tanhf, powf, IEEE division and sqrtf) end to end.
// nvcc -ptx -arch=sm_90 precise_math.cu -> precise_math.ptx (no -use_fast_math; -ftz=false, -prec-div=true,
// -prec-sqrt=true, -fmad=true: nvcc's defaults). Black-Scholes written from its formula (Black & Scholes 1973;
// the cumulative normal by the Abramowitz & Stegun 26.2.17 polynomial).

__device__ inline float cnd(float d)
{
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    float c = RSQRT2PI * expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - c : c;
}

extern "C" __global__ void black_scholes(float* call, float* put, const float* S, const float* X,
                                         const float* T, float R, float V, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = S[i], x = X[i], t = T[i];
    float sqrtT = sqrtf(t);
    float d1 = (logf(s / x) + (R + 0.5f * V * V) * t) / (V * sqrtT);
    float d2 = d1 - V * sqrtT;
    float expRT = expf(-R * t);
    call[i] = s * cnd(d1) - x * expRT * cnd(d2);
    put[i] = x * expRT * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
}

extern "C" __global__ void transcend(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    out[8 * i + 0] = sinf(x);
    out[8 * i + 1] = cosf(x);
    out[8 * i + 2] = powf(fabsf(x), 0.75f);
    out[8 * i + 3] = 1.0f / sqrtf(fabsf(x));
    out[8 * i + 4] = x / (3.0f + x * x);
    out[8 * i + 5] = tanhf(x);
    out[8 * i + 6] = log2f(fabsf(x)) + exp2f(-fabsf(x));
    out[8 * i + 7] = erfcf(x) + logf(fabsf(x)) * expf(-x * 0.01f);
}
