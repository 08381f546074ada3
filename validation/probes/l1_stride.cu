// L1 hit throughput by lane stride (validation/probes/l1_stride.py): 32 warps of one CTA each
// load a[lane * stride + (i & 31)] k times (independent loads; after the first pass every line is
// in the L1). The cycles one more warp-load costs show how many tag lookups the L1 does a cycle
// when the 32 lanes touch 1 to 32 different lines.
// Compiled with: nvcc -ptx -arch=sm_90 -o l1_stride.ptx l1_stride.cu
extern "C" __global__ void l1_stride(const float* a, int k, int stride, float* out) {
    int lane = threadIdx.x & 31;
    const float* p = a + lane * stride;
    float acc = 0.0f;
#pragma unroll 1
    for (int i = 0; i < k; ++i) acc += p[i & 31];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
