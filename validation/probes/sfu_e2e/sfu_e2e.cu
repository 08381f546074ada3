// Option pricing and friends with the fast-math intrinsics: the .approx special functions end to end.
// nvcc -ptx -arch=sm_90 -use_fast_math            -> sfu_e2e_ftz.ptx   (ex2/lg2/rcp/sqrt/div .approx.ftz)
// nvcc -ptx -arch=sm_90 -use_fast_math -ftz=false -> sfu_e2e.ptx       (the same without .ftz)

__device__ inline float cnd(float d)
{
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = __fdividef(1.0f, 1.0f + 0.2316419f * fabsf(d));
    float c = RSQRT2PI * __expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - c : c;
}

extern "C" __global__ void black_scholes(float* call, float* put, const float* S, const float* X,
                                         const float* T, float R, float V, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = S[i], x = X[i], t = T[i];
    float sqrtT = sqrtf(t);
    float d1 = __fdividef(__logf(s / x) + (R + 0.5f * V * V) * t, V * sqrtT);
    float d2 = d1 - V * sqrtT;
    float expRT = __expf(-R * t);
    call[i] = s * cnd(d1) - x * expRT * cnd(d2);
    put[i] = x * expRT * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
}

extern "C" __global__ void transcend(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    out[8 * i + 0] = __sinf(x);
    out[8 * i + 1] = __cosf(x);
    out[8 * i + 2] = __powf(fabsf(x), 0.75f);
    out[8 * i + 3] = rsqrtf(fabsf(x));
    out[8 * i + 4] = __fdividef(x, 3.0f + x * x);
    out[8 * i + 5] = tanhf(x);
    out[8 * i + 6] = __log2f(fabsf(x)) + exp2f(-fabsf(x));
    out[8 * i + 7] = 1.0f / x;
}

extern "C" __global__ void div_approx(float* out, const float* a, const float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r, rf;
    asm volatile("div.approx.f32 %0, %1, %2;" : "=f"(r) : "f"(a[i]), "f"(b[i]));
    asm volatile("div.approx.ftz.f32 %0, %1, %2;" : "=f"(rf) : "f"(a[i]), "f"(b[i]));
    out[2 * i] = r;
    out[2 * i + 1] = rf;
}
