// Corpus family "graph": one step of breadth-first search on a CSR graph, and gather / scatter.
// Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 15
// "Graph traversal" (vertex-centric top-down BFS with a frontier queue filled through atomics,
// and the bottom-up step in which unvisited vertices look for a parent in the last level, from
// Beamer, Asanovic & Patterson, "Direction-Optimizing Breadth-First Search", SC 2012) and the
// gather/scatter access patterns of PMPP's memory chapters.

#define UNVISITED 0xffffffffu

// Top-down: one thread per frontier vertex; every unvisited neighbour is claimed with atomicCAS on
// its level and appended to the next frontier (slot from an atomic counter).
extern "C" __global__ void bfs_topdown(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                       const int* __restrict__ frontier, int frontier_size, unsigned* level,
                                       unsigned cur, int* __restrict__ next, int* next_size)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= frontier_size)
        return;
    int v = frontier[t];
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; ++e) {
        int u = cols[e];
        if (level[u] == UNVISITED && atomicCAS(&level[u], UNVISITED, cur) == UNVISITED)
            next[atomicAdd(next_size, 1)] = u;
    }
}

// Bottom-up: one thread per vertex; an unvisited vertex with a neighbour at level cur - 1 joins
// level cur (the first such neighbour found ends its search) and is counted.
extern "C" __global__ void bfs_bottomup(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                        unsigned* level, unsigned cur, int* found, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || level[v] != UNVISITED)
        return;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; ++e) {
        if (level[cols[e]] == cur - 1) {
            level[v] = cur;
            atomicAdd(found, 1);
            break;
        }
    }
}

// Gather: out[i] = x[idx[i]].
extern "C" __global__ void gather(const float* __restrict__ x, const int* __restrict__ idx, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[idx[i]];
}

// Scatter through a permutation: out[perm[i]] = x[i].
extern "C" __global__ void scatter(const float* __restrict__ x, const int* __restrict__ perm, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[perm[i]] = x[i];
}
