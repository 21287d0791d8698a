/* gpu_bench.h: CUDA entry points for benchmarks and tests only (bench/gpu_bench.cu), kept
 * out of librfx. */
#ifndef RFX_GPU_BENCH_H
#define RFX_GPU_BENCH_H

#include "cuda_prims.h"

/* r = n tuples of pseudo-random values (below mod, or any value when mod is 0), made on
 * the device from seed. */
rfx_status rfx_gpu_fill_random(rfx_gpu *g, rfx_dev_rows *r, size_t n, uint64_t seed, uint32_t mod);
/* An empty kernel, launched and waited for as a SELECT waits for its size (wait true) or
 * not: the fixed cost of one operator (the benchmark's measure of it at small sizes). */
rfx_status rfx_gpu_empty_launch(rfx_gpu *g, bool wait);
/* The CUB radix sort of n 64-bit keys on bits [0, bits), in place (the reference the
 * SORT primitive is compared with). */
rfx_status rfx_gpu_cub_sort_u64(rfx_gpu *g, uint64_t *keys, size_t n, int bits);

#endif
