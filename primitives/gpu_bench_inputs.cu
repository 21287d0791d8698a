// gpu_bench_inputs.cu: entry points for benchmarks only: random rows made on the device, an empty launch.
#include "gpu_core.cuh"

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
