// GPU probe (validation/probes/data_stage.py): do shared-memory loads and L1-hitting global loads
// share the L1's data stage? Each kernel runs `iters` iterations of SH conflict-free 32-bit shared
// loads and GL global loads whose 32 lanes are GS floats apart (GS = 1: one line, one wavefront;
// 32: 32 lines in one bank, 32 wavefronts; 33: 32 lines in 32 banks), over 36 KB that stay in L1.
#define MIX(NAME, SH, GL, GS)                                                                      \
    extern "C" __global__ void NAME(const float* __restrict__ g, float* out, int iters)           \
    {                                                                                              \
        __shared__ float s[2048];                                                                  \
        for (int i = threadIdx.x; i < 2048; i += blockDim.x)                                       \
            s[i] = (float)i;                                                                       \
        __syncthreads();                                                                           \
        int lane = threadIdx.x & 31;                                                               \
        float acc = 0.f;                                                                           \
        for (int i = 0; i < iters; ++i) {                                                          \
            _Pragma("unroll") for (int k = 0; k < SH; ++k)                                         \
                acc += s[(threadIdx.x + 32 * k + i) & 2047];                                       \
            _Pragma("unroll") for (int k = 0; k < GL; ++k)                                         \
                acc += g[((i + k) & 7) * (32 * GS + 64) + lane * GS];                              \
        }                                                                                          \
        out[blockIdx.x * blockDim.x + threadIdx.x] = acc;                                          \
    }

MIX(sh4, 4, 0, 1)
MIX(sh16, 16, 0, 1)
MIX(gl_s1, 0, 1, 1)
MIX(gl_s32, 0, 1, 32)
MIX(gl_s33, 0, 1, 33)
MIX(sh4_gl_s1, 4, 1, 1)
MIX(sh4_gl_s32, 4, 1, 32)
MIX(sh4_gl_s33, 4, 1, 33)
MIX(sh16_gl_s32, 16, 1, 32)
MIX(sh16_gl_s33, 16, 1, 33)
MIX(gl_s2, 0, 1, 2)
MIX(gl_s4, 0, 1, 4)
MIX(gl_s8, 0, 1, 8)
MIX(gl2_s1, 0, 2, 1)
MIX(gl4_s1, 0, 4, 1)
MIX(sh4_gl4_s1, 4, 4, 1)
