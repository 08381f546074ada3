// GPU probe kernels (validation/probes/xu_pipe.py): the cost of the conversion and special-function
// SASS (I2F, F2I, MUFU) that ptxas emits, alone and inside an integer remainder by a variable
// (reduce0's `tid % (2*s)`). Each of 32 warps of one CTA (8 per sub-partition) runs STREAMS
// independent chains of OP for n iterations between two clock64 reads.
// Compile: nvcc -arch=sm_90 -ptx -o xu_pipe.ptx xu_pipe.cu
#define STREAMS 8
#define DEF(NAME, OP) \
extern "C" __global__ void NAME(unsigned* out, unsigned c, int n, long long* t) { \
    unsigned a[STREAMS]; \
    for (int s = 0; s < STREAMS; ++s) a[s] = threadIdx.x * (s + 3) + c; \
    __syncthreads(); long long t0 = clock64(); \
    for (int i = 0; i < n; ++i) { \
        _Pragma("unroll") for (int s = 0; s < STREAMS; ++s) { OP; } \
    } \
    long long t1 = clock64(); __syncthreads(); \
    unsigned r = 0; for (int s = 0; s < STREAMS; ++s) r ^= a[s]; \
    out[blockIdx.x * blockDim.x + threadIdx.x] = r; if (threadIdx.x == 0) t[blockIdx.x] = t1 - t0; }
// I2F.U32.RP alone (a plain __uint2float_rn is sm_90's I2FP.F32.U32, which is not the same pipe)
DEF(i2f, { float f; asm volatile("cvt.rp.f32.u32 %0, %1;" : "=f"(f) : "r"(a[s])); a[s] = __float_as_uint(f); })
// I2FP.F32.U32 alone (what __uint2float_rn becomes on sm_90)
DEF(i2fp, a[s] = __float_as_uint(__uint2float_rn(a[s])))
// F2I.FTZ.U32.TRUNC alone
DEF(f2i, asm volatile("cvt.rzi.ftz.u32.f32 %0, %0;" : "+r"(a[s])))
// MUFU.RCP alone
DEF(rcp, { float f = __uint_as_float(a[s]); asm volatile("rcp.approx.ftz.f32 %0, %0;" : "+f"(f)); a[s] = __float_as_uint(f); })
// I2F, MUFU.RCP, F2I in one chain (with an FMUL): do the three share a pipe?
DEF(i2f_rcp_f2i, { float f; asm volatile("cvt.rp.f32.u32 %0, %1;" : "=f"(f) : "r"(a[s]));
                   asm volatile("rcp.approx.ftz.f32 %0, %0;" : "+f"(f));
                   asm volatile("cvt.rzi.ftz.u32.f32 %0, %1;" : "=r"(a[s]) : "f"(f)); })
// a remainder by a divisor that changes every iteration (reduce0's `tid % (2*s)`): ptxas's full
// I2F.U32.RP / MUFU.RCP / F2I.FTZ.U32.TRUNC sequence with its IMAD and ALU fix-ups
DEF(rem_var, a[s] = (a[s] + c) % ((unsigned)(i + s) | 1u))
// Latency: one warp, one dependent chain (launch 1 CTA of 32 threads). rem_chain: the remainder by
// a divisor computed from the previous result (SHF + LOP3 + ptxas's rem.u32 expansion a step);
// xu_chain: I2F.U32.RP -> MUFU.RCP -> F2I.FTZ.U32.TRUNC a step.
extern "C" __global__ void rem_chain(unsigned* out, unsigned c, int n, long long* t) {
    unsigned a = threadIdx.x + c;
    __syncthreads(); long long t0 = clock64();
    for (int i = 0; i < n; ++i) a = (a + c) % ((a >> 3) | 1u);
    long long t1 = clock64();
    out[threadIdx.x] = a; if (threadIdx.x == 0) t[0] = t1 - t0; }
extern "C" __global__ void xu_chain(unsigned* out, unsigned c, int n, long long* t) {
    unsigned a = threadIdx.x + c;
    __syncthreads(); long long t0 = clock64();
    for (int i = 0; i < n; ++i) { float f; asm volatile("cvt.rp.f32.u32 %0, %1;" : "=f"(f) : "r"(a));
        asm volatile("rcp.approx.ftz.f32 %0, %0;" : "+f"(f));
        asm volatile("cvt.rzi.ftz.u32.f32 %0, %1;" : "=r"(a) : "f"(f)); }
    long long t1 = clock64();
    out[threadIdx.x] = a; if (threadIdx.x == 0) t[0] = t1 - t0; }
// Integer latencies inside rem.u32's expansion, one warp, one chain, 8 dependent steps a loop trip:
// imadhi_chain (IMAD.HI.U32), setp_chain (ISETP -> @P VIADD: a predicate's producer and consumer),
// imad_chain (IMAD by a register).
#define CHAIN(NAME, STEP) \
extern "C" __global__ void NAME(unsigned* out, unsigned c, int n, long long* t) { \
    unsigned a = threadIdx.x + c; unsigned d = c | 0x80000001u; \
    __syncthreads(); long long t0 = clock64(); \
    for (int i = 0; i < n; ++i) { _Pragma("unroll") for (int s = 0; s < 8; ++s) { STEP; } } \
    long long t1 = clock64(); \
    out[threadIdx.x] = a; if (threadIdx.x == 0) t[0] = t1 - t0; }
CHAIN(imadhi_chain, asm volatile("mul.hi.u32 %0, %0, %1;" : "+r"(a) : "r"(d)))
CHAIN(setp_chain, asm volatile("{ .reg .pred %%p; setp.ge.u32 %%p, %0, %1; @%%p sub.u32 %0, %0, %1; }" : "+r"(a) : "r"(d)))
CHAIN(imad_chain, asm volatile("mad.lo.u32 %0, %0, %1, %1;" : "+r"(a) : "r"(d)))
