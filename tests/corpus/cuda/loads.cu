// __ldg / ld.global.nc, vector loads and predicated vector stores.
extern "C" __global__ void ldg_copy(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __ldg(in + i) * 2.0f;
}

extern "C" __global__ void vec4_scale(const float4* __restrict__ in, float4* out, float s, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = in[i];
        if (v.x > 0.0f) out[i] = make_float4(v.x * s, v.y * s, v.z * s, v.w * s);
    }
}

extern "C" __global__ void vec2_int(const int2* in, int2* out, int n2) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) {
        int2 v = __ldg(in + i);
        out[i] = make_int2(v.y, v.x + v.y);
    }
}

extern "C" __global__ void ldg_u64(const unsigned long long* __restrict__ in, unsigned long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __ldg(in + (n - 1 - i)) + 1;
}
