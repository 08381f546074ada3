// Corpus family "hash": an open-addressing hash table of unsigned keys and values with linear
// probing; inserts claim slots with atomicCAS. Written for gpusim's generalization corpus from
// Alcantara et al., "Building an Efficient Hash Table on the GPU" (GPU Computing Gems Jade
// Edition, 2011: open addressing with atomicCAS on the key slot) and the MurmurHash3 32-bit
// finaliser (Appleby) as the hash. Empty slots hold 0xffffffff; capacity is a power of two.

#define EMPTY 0xffffffffu

__device__ unsigned hash32(unsigned k)
{
    k ^= k >> 16;
    k *= 0x85ebca6bu;
    k ^= k >> 13;
    k *= 0xc2b2ae35u;
    k ^= k >> 16;
    return k;
}

// Insert n (key, value) pairs (keys distinct, not EMPTY): probe from hash(key) until a slot holds
// EMPTY (claimed) or the key itself (overwritten).
extern "C" __global__ void hash_insert(const unsigned* __restrict__ keys, const unsigned* __restrict__ vals,
                                       unsigned* table_keys, unsigned* table_vals, unsigned mask, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned k = keys[i], slot = hash32(k) & mask;
    while (true) {
        unsigned prev = atomicCAS(&table_keys[slot], EMPTY, k);
        if (prev == EMPTY || prev == k) {
            table_vals[slot] = vals[i];
            return;
        }
        slot = (slot + 1) & mask;
    }
}

// Look n queries up: out[i] is the value stored with queries[i], or EMPTY if the key is absent.
extern "C" __global__ void hash_lookup(const unsigned* __restrict__ table_keys, const unsigned* __restrict__ table_vals,
                                       const unsigned* __restrict__ queries, unsigned* __restrict__ out, unsigned mask,
                                       int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned q = queries[i], slot = hash32(q) & mask;
    while (true) {
        unsigned k = table_keys[slot];
        if (k == q) {
            out[i] = table_vals[slot];
            return;
        }
        if (k == EMPTY) {
            out[i] = EMPTY;
            return;
        }
        slot = (slot + 1) & mask;
    }
}
