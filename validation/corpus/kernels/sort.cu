// Corpus family "sort": one pass of a radix sort and one step of a merge sort, as kernels.
// Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 13
// "Sorting" (radix sort: per-block digit counts laid out for a global exclusive scan, and a local
// stable split by one bit in shared memory before the coalesced write) and ch. 12 "Merge" (the
// co-rank function and the basic merge kernel, each thread producing a fixed span of outputs).

// Digit counts of a 4-bit digit (bits shift..shift+3) of 4 keys per thread; counts are written
// digit-major, counts[digit * gridDim.x + block], the layout a global exclusive scan turns into
// scatter offsets.
extern "C" __global__ void radix_count(const unsigned* __restrict__ keys, unsigned* __restrict__ counts,
                                       unsigned shift, int n)
{
    __shared__ unsigned local[16];
    if (threadIdx.x < 16)
        local[threadIdx.x] = 0;
    __syncthreads();
    int base = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int k = 0; k < 4; ++k) {
        int i = base + k * blockDim.x;
        if (i < n)
            atomicAdd(&local[(keys[i] >> shift) & 15u], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 16)
        counts[threadIdx.x * gridDim.x + blockIdx.x] = local[threadIdx.x];
}

// Stable split of each CTA's tile (one key per thread, n a multiple of blockDim.x) by bit `bit`:
// keys whose bit is 0 first, in their order, then those whose bit is 1. The rank of a 1 among the
// tile's 1s is an exclusive scan of the bits (warp ballots and popcounts, then the warps' counts).
// Writes the split tile in place of the tile in `out` and the tile's count of 1s in ones[].
extern "C" __global__ void radix_split(const unsigned* __restrict__ keys, unsigned* __restrict__ out,
                                       unsigned* __restrict__ ones, unsigned bit)
{
    __shared__ unsigned warp_ones[32];
    __shared__ unsigned tile[1024];
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned key = keys[i];
    unsigned b = (key >> bit) & 1u;
    unsigned ballot = __ballot_sync(0xffffffffu, b);
    unsigned before_in_warp = __popc(ballot & ((1u << lane) - 1u));
    if (lane == 0)
        warp_ones[warp] = __popc(ballot);
    __syncthreads();
    unsigned ones_before = before_in_warp, total = 0;
    for (unsigned w = 0; w < nwarps; ++w) {
        unsigned c = warp_ones[w];
        if (w < warp)
            ones_before += c;
        total += c;
    }
    unsigned zeros_total = blockDim.x - total;
    unsigned dest = b ? zeros_total + ones_before : threadIdx.x - ones_before;
    tile[dest] = key;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tile[threadIdx.x];
    if (threadIdx.x == 0)
        ones[blockIdx.x] = total;
}

// How many of the first k outputs of merging A (m keys) and B (n keys) come from A, keys of A
// going first among equal keys: the smallest i with not (B[k - i - 1] >= A[i]).
__device__ int co_rank(int k, const unsigned* A, int m, const unsigned* B, int n)
{
    int lo = k > n ? k - n : 0, hi = k < m ? k : m;
    while (lo < hi) {
        int i = (lo + hi) / 2;
        int j = k - i;
        if (B[j - 1] >= A[i])
            lo = i + 1;
        else
            hi = i;
    }
    return lo;
}

#define SPAN 8

// One merge-sort step: `in` holds sorted runs of `run` keys (run a multiple of SPAN); pairs of runs
// are merged into sorted runs of 2 * run in `out`. Each thread writes SPAN consecutive outputs,
// finding where they start in both runs with co_rank.
extern "C" __global__ void merge_corank(const unsigned* __restrict__ in, unsigned* __restrict__ out, int run, int n)
{
    int k0 = (blockIdx.x * blockDim.x + threadIdx.x) * SPAN;
    if (k0 >= n)
        return;
    int pair = k0 / (2 * run);
    const unsigned* A = in + pair * 2 * run;
    int m = run;
    int rest = n - pair * 2 * run - run;
    int nb = rest < run ? (rest > 0 ? rest : 0) : run;
    if (n - pair * 2 * run < run)
        m = n - pair * 2 * run;
    const unsigned* B = A + m;
    int k = k0 - pair * 2 * run;
    int i = co_rank(k, A, m, B, nb);
    int j = k - i;
    unsigned* o = out + k0;
    for (int c = 0; c < SPAN && k + c < m + nb; ++c) {
        if (i < m && (j >= nb || A[i] <= B[j]))
            o[c] = A[i++];
        else
            o[c] = B[j++];
    }
}
