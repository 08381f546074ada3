// Flag latency through the L2 (validation/probes/flag_latency.py): how long a volatile store of one
// SM takes to reach a volatile load spinning on another, and how long one volatile load takes.
// `volatile` global accesses compile to LDG/STG .STRONG.SYS, as in the corpus's scan_lookback.

// One thread: `steps` dependent loads over a ring of 128-byte lines (ring[j] is the next index),
// once to warm the L2, then timed: volatile loads (chase_volatile) or ld.global.cg (chase_cg).
template <bool VOL>
__device__ void chase(const unsigned* ring, unsigned steps, unsigned* sink, long long* t)
{
    volatile const unsigned* v = ring;
    unsigned j = 0;
    for (unsigned i = 0; i < steps; ++i)
        j = VOL ? v[j] : __ldcg(ring + j);
    long long t0 = clock64();
    for (unsigned i = 0; i < steps; ++i)
        j = VOL ? v[j] : __ldcg(ring + j);
    t[0] = clock64() - t0;
    sink[0] = j;
}

extern "C" __global__ void chase_volatile(const unsigned* ring, unsigned steps, unsigned* sink, long long* t)
{
    chase<true>(ring, steps, sink, t);
}

extern "C" __global__ void chase_cg(const unsigned* ring, unsigned steps, unsigned* sink, long long* t)
{
    chase<false>(ring, steps, sink, t);
}

// A relay of `roles` lane-0 threads, role = blockIdx.x * (warps a CTA) + warp: each round, role 0
// sets its flag to r and waits for the last role's; role k > 0 waits for role k-1's flag to be r,
// then sets its own. Flags are `stride` words apart. t[role] = its cycles for all rounds, so
// t[0] / (rounds * roles) is the latency of one hop (a store seen by the next spinning load).
extern "C" __global__ void relay(unsigned* flags, unsigned rounds, unsigned stride, long long* t)
{
    if (threadIdx.x % 32)
        return;
    volatile unsigned* f = flags;
    unsigned warps = blockDim.x / 32, roles = gridDim.x * warps;
    unsigned k = blockIdx.x * warps + threadIdx.x / 32, prev = (k + roles - 1) % roles;
    long long t0 = clock64();
    for (unsigned r = 1; r <= rounds; ++r) {
        if (k == 0) {
            f[0] = r;
            while (f[prev * stride] != r)
                ;
        } else {
            while (f[prev * stride] != r)
                ;
            f[k * stride] = r;
        }
    }
    t[k] = clock64() - t0;
}

// One pass of `steps` loads from index j, each timed on its own into out[i]; returns where it ended.
__device__ unsigned timed_pass(const unsigned* ring, unsigned j, unsigned steps, unsigned* out)
{
    __shared__ unsigned seen;
    for (unsigned i = 0; i < steps; ++i) {
        long long t0, t1;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0) :: "memory");
        j = __ldcg(ring + j);
        *(volatile unsigned*)&seen = j;  // issues once the load returned (in-order issue)
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) :: "memory");
        out[i] = (unsigned)(t1 - t0);
    }
    return j;
}

// Every CTA's thread 0 chases the same ring of `steps` lines from its own start (starts[blockIdx.x]),
// a warm-up pass, then `passes` timed passes timing each load on its own: lat[(pass * gridDim.x +
// blockIdx.x) * steps + i] = cycles of load i; sm[blockIdx.x] = %smid (chase_each: one pass).
// Do the cycles of an L2 hit depend on the line, on the SM, or on the pair, and are they the same
// from one pass to the next?
__device__ void chase_passes(const unsigned* ring, const unsigned* starts, unsigned steps, unsigned passes,
                             unsigned* lat, unsigned* sm)
{
    if (threadIdx.x)
        return;
    unsigned j = starts[blockIdx.x];
    for (unsigned i = 0; i < steps; ++i)
        j = __ldcg(ring + j);
    for (unsigned pass = 0; pass < passes; ++pass)
        j = timed_pass(ring, j, steps, lat + ((size_t)pass * gridDim.x + blockIdx.x) * steps);
    if (sm) {
        unsigned s;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        sm[blockIdx.x] = s;
    }
}

extern "C" __global__ void chase_each(const unsigned* ring, const unsigned* starts, unsigned steps, unsigned* lat,
                                      unsigned* sm)
{
    chase_passes(ring, starts, steps, 1, lat, sm);
}

extern "C" __global__ void chase_each2(const unsigned* ring, const unsigned* starts, unsigned steps, unsigned* lat)
{
    chase_passes(ring, starts, steps, 2, lat, nullptr);
}

// One warp: `steps` dependent loads, each touching `width` lines (lane l reads line node * width +
// l % width of a ring of nodes; word 0 of a node's first line is the next node), a warm-up pass
// and a timed one. Does a load of several L2 lines wait for the slowest of them?
extern "C" __global__ void chase_wide(const unsigned* ring, unsigned steps, unsigned width, unsigned* sink,
                                      long long* t)
{
    unsigned lane = threadIdx.x % 32, node = 0, v = 0;
    for (unsigned pass = 0; pass < 2; ++pass) {
        long long t0 = clock64();
        for (unsigned i = 0; i < steps; ++i) {
            v = __ldcg(ring + (size_t)(node * width + lane % width) * 32);
            node = __shfl_sync(0xffffffffu, v, 0);
        }
        t[pass] = clock64() - t0;
    }
    sink[lane] = v;
}
