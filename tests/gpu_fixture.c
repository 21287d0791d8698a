/* gpu_fixture.c: what the GPU tests share (gpu_fixture.h). */
#include "gpu_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rfx_gpu *gpu;

rfx_tuning base_tuning, current;

void tune_set(const char *key, const char *value)
{
    char err[256];
    if (!rfx_tuning_set(&current, key, value, err, sizeof err))
        CU_FAIL(err);
}

rfx_gpu *open_gpu(int device, size_t budget, char *err, size_t errcap)
{
    rfx_gpu *g = rfx_gpu_open(device, budget, err, errcap);
    if (g)
        rfx_gpu_set_tuning(g, &current);
    return g;
}

char *cache_dir;     /* NVRTC cubins of this run */
bool quick;          /* RFX_GPU_QUICK=1: small sizes only (for compute-sanitizer) */

static uint64_t rng = 0x1234567ull;
uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t draw(dist d, uint32_t range)
{
    switch (d) {
    case UNIFORM: return (uint32_t)(rnd() % range);
    case EQUAL: return 5;
    case WIDE: return (uint32_t)rnd();
    default: {
        double u = (double)(rnd() >> 11) / 9007199254740992.0;
        return (uint32_t)(exp(u * log((double)range + 1.0)) - 1.0);
    }
    }
}

rfx_rows rows_random(size_t n, int arity, dist d, uint32_t range, bool set)
{
    rfx_rows r;
    rfx_rows_init(&r, arity);
    rfx_rows_reserve(&r, n);
    for (size_t i = 0; i < n * (size_t)arity; i++)
        r.data[i] = draw(d, range);
    r.n = n;
    if (set) {
        rfx_cpu_sort(&r, 4);
        rfx_cpu_unique(&r, 4);
    }
    return r;
}

bool need_gpu(void)
{
    if (gpu)
        return true;
    printf("skipped: no CUDA device ");
    return false;
}

bool same(const rfx_rows *a, const rfx_rows *b)
{
    if (a->arity != b->arity || a->n != b->n) {
        fprintf(stderr, "\n    size %zu/%d vs %zu/%d\n", a->n, a->arity, b->n, b->arity);
        return false;
    }
    return a->n == 0 || a->arity == 0 || memcmp(a->data, b->data, 4u * a->arity * a->n) == 0;
}

rfx_dev_rows up(const rfx_rows *h)
{
    rfx_dev_rows d;
    rfx_gpu_rows_init(&d, h->arity);
    CU_ASSERT_EQUAL(rfx_gpu_upload(gpu, h, &d), RFX_OK);
    return d;
}

rfx_rows down(const rfx_dev_rows *d)
{
    rfx_rows h;
    rfx_rows_init(&h, d->arity);
    CU_ASSERT_EQUAL(rfx_gpu_download(gpu, d, &h), RFX_OK);
    return h;
}

bool gpu_agrees(rfx_status st, rfx_dev_rows *gd, rfx_rows *hc)
{
    CU_ASSERT_EQUAL(st, RFX_OK);
    rfx_rows back = down(gd);
    bool ok = same(&back, hc);
    CU_ASSERT(ok);
    rfx_rows_free(&back);
    rfx_rows_free(hc);
    rfx_gpu_rows_free(gpu, gd);
    return ok;
}
