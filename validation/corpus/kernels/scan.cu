// Corpus family "scan": inclusive prefix sums of unsigned 32-bit integers (wrapping).
// Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 11
// "Prefix sum (scan)": the Kogge-Stone and Brent-Kung block scans, a warp-shuffle scan, and the
// single-pass scan with decoupled look-back of Merrill & Garland, "Single-pass Parallel Prefix
// Scan with Decoupled Look-back" (NVIDIA technical report NVR-2016-002), which PMPP 11.7 describes.
// The block scans write each block's inclusive scan and its total (the first pass of a
// hierarchical scan); the look-back kernel writes the scan of the whole array in one launch.

// Kogge-Stone: one element per thread, blockDim.x <= 1024, in place with a barrier between the
// read and the write of every step.
extern "C" __global__ void scan_kogge_stone(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                            unsigned* __restrict__ block_sums, int n)
{
    __shared__ unsigned buf[1024];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0u;
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned t = 0;
        if (threadIdx.x >= stride)
            t = buf[threadIdx.x] + buf[threadIdx.x - stride];
        __syncthreads();
        if (threadIdx.x >= stride)
            buf[threadIdx.x] = t;
    }
    if (i < n)
        out[i] = buf[threadIdx.x];
    if (threadIdx.x == blockDim.x - 1)
        block_sums[blockIdx.x] = buf[threadIdx.x];
}

// Brent-Kung: two elements per thread (a section of 2 * blockDim.x <= 2048), an up-sweep of
// partial sums then a down-sweep distributing them.
extern "C" __global__ void scan_brent_kung(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                           unsigned* __restrict__ block_sums, int n)
{
    __shared__ unsigned buf[2048];
    unsigned section = 2 * blockDim.x;
    int base = blockIdx.x * section;
    int i0 = base + threadIdx.x, i1 = i0 + blockDim.x;
    buf[threadIdx.x] = i0 < n ? in[i0] : 0u;
    buf[threadIdx.x + blockDim.x] = i1 < n ? in[i1] : 0u;
    for (unsigned stride = 1; stride <= blockDim.x; stride *= 2) {
        __syncthreads();
        unsigned idx = (threadIdx.x + 1) * 2 * stride - 1;
        if (idx < section)
            buf[idx] += buf[idx - stride];
    }
    for (unsigned stride = section / 4; stride > 0; stride /= 2) {
        __syncthreads();
        unsigned idx = (threadIdx.x + 1) * 2 * stride - 1;
        if (idx + stride < section)
            buf[idx + stride] += buf[idx];
    }
    __syncthreads();
    if (i0 < n)
        out[i0] = buf[threadIdx.x];
    if (i1 < n)
        out[i1] = buf[threadIdx.x + blockDim.x];
    if (threadIdx.x == 0)
        block_sums[blockIdx.x] = buf[section - 1];
}

__device__ unsigned warp_inclusive_scan(unsigned v)
{
    unsigned lane = threadIdx.x & 31u;
    for (unsigned d = 1; d < 32; d *= 2) {
        unsigned u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d)
            v += u;
    }
    return v;
}

// The inclusive scan of one value per thread over the CTA (blockDim.x a multiple of 32, <= 1024):
// warp scans, the warps' totals scanned by warp 0, added back. Ends with a barrier.
__device__ unsigned block_inclusive_scan(unsigned v, unsigned* warp_sums)
{
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    v = warp_inclusive_scan(v);
    if (lane == 31)
        warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned nwarps = blockDim.x >> 5;
        unsigned s = lane < nwarps ? warp_sums[lane] : 0u;
        s = warp_inclusive_scan(s);
        if (lane < nwarps)
            warp_sums[lane] = s;
    }
    __syncthreads();
    if (warp > 0)
        v += warp_sums[warp - 1];
    __syncthreads();
    return v;
}

// Warp-shuffle block scan, one element per thread.
extern "C" __global__ void scan_shfl(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                     unsigned* __restrict__ block_sums, int n)
{
    __shared__ unsigned warp_sums[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = block_inclusive_scan(i < n ? in[i] : 0u, warp_sums);
    if (i < n)
        out[i] = v;
    if (threadIdx.x == blockDim.x - 1)
        block_sums[blockIdx.x] = v;
}

#define ITEMS 4
#define FLAG_AGGREGATE 1ull
#define FLAG_PREFIX 2ull

// Single-pass scan with decoupled look-back. Each CTA takes the next tile (ITEMS * blockDim.x
// elements) from a global ticket counter, so the tiles before it have been started; it scans the
// tile, publishes its aggregate (flag A), looks back over its predecessors' published (flag,
// value) pairs, one 64-bit word each (flag in the high half), until it meets an inclusive prefix
// (flag P), then publishes its own inclusive prefix and writes the tile. status[] and *ticket
// start at zero (flag X: nothing published yet).
extern "C" __global__ void scan_lookback(const unsigned* __restrict__ in, unsigned* __restrict__ out,
                                         unsigned long long* status, unsigned* ticket, int n)
{
    __shared__ unsigned warp_sums[32];
    __shared__ unsigned tile_s, exclusive_s;
    if (threadIdx.x == 0)
        tile_s = atomicAdd(ticket, 1u);
    __syncthreads();
    unsigned tile = tile_s;
    int base = tile * ITEMS * blockDim.x + threadIdx.x * ITEMS;
    unsigned v[ITEMS], total = 0;
    for (int k = 0; k < ITEMS; ++k) {
        v[k] = base + k < n ? in[base + k] : 0u;
        total += v[k];
    }
    unsigned inclusive = block_inclusive_scan(total, warp_sums);
    if (threadIdx.x == blockDim.x - 1) {
        unsigned aggregate = inclusive;
        volatile unsigned long long* st = status;
        unsigned exclusive = 0;
        if (tile == 0) {
            st[0] = (FLAG_PREFIX << 32) | aggregate;
        } else {
            st[tile] = (FLAG_AGGREGATE << 32) | aggregate;
            int pred = tile - 1;
            while (true) {
                unsigned long long word;
                do {
                    word = st[pred];
                } while ((word >> 32) == 0);
                exclusive += (unsigned)word;
                if ((word >> 32) == FLAG_PREFIX)
                    break;
                --pred;
            }
            st[tile] = (FLAG_PREFIX << 32) | (exclusive + aggregate);
        }
        exclusive_s = exclusive;
    }
    __syncthreads();
    unsigned run = exclusive_s + inclusive - total;
    for (int k = 0; k < ITEMS; ++k) {
        run += v[k];
        if (base + k < n)
            out[base + k] = run;
    }
}
