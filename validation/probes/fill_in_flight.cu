// A hit on a line whose fill is still in flight (validation/probes/fill_in_flight.py): does a load
// that finds its sector's tag in a cache, while the miss that allocated it still waits for the
// data, get the data a hit's latency later, or when the fill arrives?
//
// Every trial uses its own line, cold (the L2 is flushed before each launch): line k of a launch
// is word k * stride of `buf`. CA: default loads (LDG.E, allocate in L1); CG: ld.global.cg (L2 only).

// The load under test: ld.global.u32 (CA: LDG.E, allocates in L1) or ld.global.cg.u32 (CG),
// volatile asm so that the two loads of one word are neither merged nor reordered.
template <bool CG>
__device__ __forceinline__ unsigned load(const unsigned* p)
{
    unsigned v;
    if (CG)
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    else
        asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ long long now()
{
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) :: "memory");
    return t;
}

// One thread. Trial k: load A of line k (not waited for), `delay` cycles later load B of the same
// word; B's cycles (issue to data) into lat[2k], A's into lat[2k + 1].
template <bool CG>
__device__ void same_thread(const unsigned* buf, unsigned stride, unsigned trials, unsigned delay, unsigned* lat)
{
    __shared__ unsigned seen;
    for (unsigned k = 0; k < trials; ++k) {
        const unsigned* p = buf + (size_t)k * stride;
        long long t0 = now();
        unsigned a = load<CG>(p);
        while (now() - t0 < delay)
            ;
        long long t1 = now();
        unsigned b = load<CG>(p);
        *(volatile unsigned*)&seen = b;   // issues once B returned (in-order issue)
        long long t2 = now();
        *(volatile unsigned*)&seen = a;
        long long t3 = now();
        lat[2 * k] = (unsigned)(t2 - t1);
        lat[2 * k + 1] = (unsigned)(t3 - t0);
    }
}

extern "C" __global__ void same_thread_ca(const unsigned* buf, unsigned stride, unsigned trials, unsigned delay,
                                          unsigned* lat)
{
    if (threadIdx.x == 0)
        same_thread<false>(buf, stride, trials, delay, lat);
}

extern "C" __global__ void same_thread_cg(const unsigned* buf, unsigned stride, unsigned trials, unsigned delay,
                                          unsigned* lat)
{
    if (threadIdx.x == 0)
        same_thread<true>(buf, stride, trials, delay, lat);
}

// Two CTAs of one thread (on two SMs: sm[0], sm[1] = %smid). Trial k: CTA 0 sets flag[k], waits
// `delay` cycles and loads line k; CTA 1 waits for flag[k] and loads line k at once (about a flag
// hop, ~475 cycles, after the flag was set), then sets ack[k], which CTA 0 waits for before the
// next trial. lat[2k] = CTA 1's load cycles, lat[2k + 1] = CTA 0's. Small delays: CTA 0's miss
// is in flight when CTA 1's request reaches the L2; large ones: the other way round.
template <bool CG>
__device__ void two_sms(const unsigned* buf, unsigned stride, unsigned trials, unsigned delay, unsigned* flags,
                        unsigned* lat, unsigned* sm)
{
    __shared__ unsigned seen;
    volatile unsigned* flag = flags;
    volatile unsigned* ack = flags + 32 * trials;
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    sm[blockIdx.x] = id;
    for (unsigned k = 0; k < trials; ++k) {
        const unsigned* p = buf + (size_t)k * stride;
        if (blockIdx.x == 0) {
            flag[32 * k] = 1;
            long long t0 = now();
            while (now() - t0 < delay)
                ;
            long long t1 = now();
            unsigned a = load<CG>(p);
            *(volatile unsigned*)&seen = a;
            lat[2 * k + 1] = (unsigned)(now() - t1);
            while (ack[32 * k] == 0)
                ;
        } else {
            while (flag[32 * k] == 0)
                ;
            long long t1 = now();
            unsigned b = load<CG>(p);
            *(volatile unsigned*)&seen = b;
            lat[2 * k] = (unsigned)(now() - t1);
            ack[32 * k] = 1;
        }
    }
}

extern "C" __global__ void two_sms_ca(const unsigned* buf, unsigned stride, unsigned trials, unsigned delay,
                                      unsigned* flags, unsigned* lat, unsigned* sm)
{
    if (threadIdx.x == 0)
        two_sms<false>(buf, stride, trials, delay, flags, lat, sm);
}

extern "C" __global__ void two_sms_cg(const unsigned* buf, unsigned stride, unsigned trials, unsigned delay,
                                      unsigned* flags, unsigned* lat, unsigned* sm)
{
    if (threadIdx.x == 0)
        two_sms<true>(buf, stride, trials, delay, flags, lat, sm);
}

// Flush: every thread reads a word of each 128-byte line of `n` words (the L2 forgets the lines before).
extern "C" __global__ void flush(const unsigned* x, unsigned long long n, unsigned* sink)
{
    unsigned s = 0;
    for (unsigned long long i = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) * 32; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x * 32)
        s += __ldcg(x + i);
    if (s == 0x9e3779b9u)
        sink[0] = s;
}
