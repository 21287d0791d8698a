/* bench_engine.h: timing librfx runs and GPU calls, for the benchmarks. */
#ifndef RFX_BENCH_ENGINE_H
#define RFX_BENCH_ENGINE_H

#include "cuda_prims.h"
#include "rfx.h"

#include <stdbool.h>
#include <stddef.h>

/* The median of t[0..n) (n >= 1; t is sorted in place). */
double rfx_bench_median(double *t, int n);

/* The median of `reps` (1-64) timings by CUDA events (rfx_gpu_time_ms) of fn(arg) on g,
 * after an untimed warm-up; -1 when a call fails (*st says how). */
double rfx_bench_gpu_ms(rfx_gpu *g, rfx_status (*fn)(void *arg), void *arg, int reps, rfx_status *st);

/* The median wall ms of `reps` (1-64) runs of e after an untimed warm-up run, and the size
 * of relation rel after them; -1 on failure, the engine's first message line in why.
 * ready: whether the caller's set-up of e (program, inserts) succeeded; e may be NULL.
 * label: each run's ms printed on standard error after it, or NULL. e stays open. */
double rfx_bench_engine_ms(rfx_engine *e, bool ready, int reps, const char *rel, size_t *size, const char *label,
                           char *why, size_t whycap);

#endif
