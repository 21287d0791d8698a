/* bench_engine.c: timing librfx runs and GPU calls (see bench_engine.h). */
#include "bench_engine.h"

#include "primitives.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double rfx_bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[n / 2];
}

double rfx_bench_gpu_ms(rfx_gpu *g, rfx_status (*fn)(void *arg), void *arg, int reps, rfx_status *st)
{
    double t[64];
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    rfx_gpu_time_ms(g, fn, arg, st);
    for (int r = 0; r < reps && *st == RFX_OK; r++)
        t[r] = rfx_gpu_time_ms(g, fn, arg, st);
    return *st == RFX_OK ? rfx_bench_median(t, reps) : -1;
}

double rfx_bench_engine_ms(rfx_engine *e, bool ready, int reps, const char *rel, size_t *size, const char *label,
                           char *why, size_t whycap)
{
    double t[64];
    bool ok = e && ready && reps >= 1 && reps <= 64 && rfx_run(e) == RFX_EXIT_OK;
    for (int i = 0; ok && i < reps; i++) {
        double t0 = rfx_seconds();
        ok = rfx_run(e) == RFX_EXIT_OK;
        t[i] = (rfx_seconds() - t0) * 1e3;
        if (label)
            fprintf(stderr, "%s run %d: %.1f ms\n", label, i + 1, t[i]);
    }
    if (ok && rfx_size(e, rel, size) == RFX_EXIT_OK)
        return rfx_bench_median(t, reps);
    const char *msg = !e ? "no engine" : reps < 1 || reps > 64 ? "repeats out of 1-64" : rfx_errmsg(e);
    const char *nl = strchr(msg, '\n');
    snprintf(why, whycap, "%.*s", (int)(nl ? nl - msg : (long)strlen(msg)), msg);
    return -1;
}
