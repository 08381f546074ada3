// Bit manipulation intrinsics and inline-asm bfe/bfi.
extern "C" __global__ void bit_ops(const unsigned* a, const unsigned* b, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned x = a[i], y = b[i], e, f;
        asm("bfe.u32 %0, %1, %2, %3;" : "=r"(e) : "r"(x), "r"(y & 31), "r"((y >> 5) & 31));
        asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(f) : "r"(x), "r"(y), "r"((x >> 3) & 31), "r"((y >> 11) & 15));
        out[10 * i + 0] = __byte_perm(x, y, y & 0x7777);
        out[10 * i + 1] = __brev(x);
        out[10 * i + 2] = __popc(x);
        out[10 * i + 3] = __clz(x);
        out[10 * i + 4] = __ffs(x);
        out[10 * i + 5] = __funnelshift_l(x, y, y);
        out[10 * i + 6] = __funnelshift_rc(x, y, y);
        out[10 * i + 7] = e;
        out[10 * i + 8] = f;
        out[10 * i + 9] = __popcll(((unsigned long long)x << 32) | y) + __clzll((unsigned long long)y) + __brevll(x) % 7;
    }
}

extern "C" __global__ void signed_bfe(const int* a, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int r;
        asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a[i]), "r"(i & 31), "r"((i * 7) & 31));
        out[i] = r;
    }
}
