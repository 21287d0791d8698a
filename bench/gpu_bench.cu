// gpu_bench.cu: entry points for benchmarks and tests only (gpu_bench.h), over the
// primitives' CUDA core: random rows made on the device, an empty launch, CUB's sort.
#include "gpu_core.cuh"
extern "C" {
#include "gpu_bench.h"
}

// ---- benchmark inputs ---------------------------------------------------------------
__global__ void k_fill_random(uint32_t *p, size_t n, uint64_t seed, uint32_t mod)
{
    GRID_STRIDE(i, n)
    {
        uint64_t z = seed + i * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = mod ? (uint32_t)(z % mod) : (uint32_t)z;
    }
}

extern "C" rfx_status rfx_gpu_fill_random(rfx_gpu *g, rfx_dev_rows *r, size_t n, uint64_t seed, uint32_t mod)
{
    rfx_dev_rows out;
    rfx_status st = rows_alloc(g, &out, r->arity, n);
    if (st)
        return st;
    if (n && r->arity) {
        k_fill_random<<<grid_for(n * r->arity), 256, 0, g->stream>>>(out.data, n * (size_t)r->arity, seed, mod);
        CK_LAUNCH();
    }
    replace(g, r, &out);
    return RFX_OK;
}


#define EMPTY_WORD 12   // rfx_gpu_empty_launch's

__global__ void k_empty(unsigned long long *word, unsigned long long tag)
{
    if (word && threadIdx.x == 0 && blockIdx.x == 0)
        *word = tag;
}

extern "C" rfx_status rfx_gpu_empty_launch(rfx_gpu *g, bool wait)
{
    static std::atomic<unsigned long long> tag;
    unsigned long long t = ++tag;
    k_empty<<<1, 32, 0, g->stream>>>(wait ? g->d_words + EMPTY_WORD : NULL, t);
    CK(cudaGetLastError());
    return wait ? tag_wait(g, t, EMPTY_WORD, "k_empty") : RFX_OK;
}

// ---- the reference the SORT primitive is compared with ------------------------------
extern "C" rfx_status rfx_gpu_cub_sort_u64(rfx_gpu *g, uint64_t *keys, size_t n, int bits)
{
    int sel;
    uint64_t *alt;
    ALLOC(alt, n * 8);
    rfx_status st = cub_sort_u64(g, keys, alt, n, 0, bits, &sel);   // may end in alt: the reference times the sort alone
    rfx_gpu_free(g, alt);
    return st;
}
