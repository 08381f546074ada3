// Comparisons of every kind (ordered and unordered floats, signed and unsigned integers).
template <typename T>
__global__ void compare_all(const T* a, const T* b, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T x = a[i], y = b[i];
        unsigned m = 0;
        m |= (x == y) << 0;  m |= (x != y) << 1;  m |= (x < y) << 2;   m |= (x <= y) << 3;
        m |= (x > y) << 4;   m |= (x >= y) << 5;  m |= !(x < y) << 6;  m |= !(x <= y) << 7;
        m |= !(x > y) << 8;  m |= !(x >= y) << 9; m |= !(x == y) << 10; m |= (x != x) << 11;
        m |= ((x < y) != (y < x)) << 12;
        out[i] = m;
    }
}
template __global__ void compare_all<float>(const float*, const float*, unsigned*, int);
template __global__ void compare_all<double>(const double*, const double*, unsigned*, int);
template __global__ void compare_all<int>(const int*, const int*, unsigned*, int);
template __global__ void compare_all<unsigned>(const unsigned*, const unsigned*, unsigned*, int);
template __global__ void compare_all<long long>(const long long*, const long long*, unsigned*, int);
template __global__ void compare_all<unsigned long long>(const unsigned long long*, const unsigned long long*, unsigned*, int);
template __global__ void compare_all<short>(const short*, const short*, unsigned*, int);
