/* gpu_fixture.h: what the GPU tests share (one executable, test_gpu: test_gpu.c the
 * sorts, joins and set operations, test_gpu_exprs.c maps, filters, aggregates and whole
 * programs, test_gpu_lftj.c the triejoins): the device context and the tuning it follows,
 * random rows, and the GPU's results compared with the CPU's. */
#ifndef RFX_GPU_FIXTURE_H
#define RFX_GPU_FIXTURE_H

#include "harness.h"

#include "base.h"
#include "gpu_bench.h"
#include "lftj.h"

#include <stdbool.h>
#include <stdint.h>

extern rfx_gpu *gpu;                 /* device 0, NULL where there is none */
/* The tuning of every context the tests open (open_gpu), changed in place as a test goes:
 * base_tuning (test_gpu's defaults, set in main) with the test's settings on top. */
extern rfx_tuning base_tuning, current;
extern char *cache_dir;              /* NVRTC cubins of this run */
extern bool quick;                   /* RFX_GPU_QUICK=1: small sizes only (for compute-sanitizer) */

/* current's key set to value (a test failure where the tuning refuses it). */
void tune_set(const char *key, const char *value);
/* rfx_gpu_open, the context following `current`. */
rfx_gpu *open_gpu(int device, size_t budget, char *err, size_t errcap);

typedef enum dist { UNIFORM, EQUAL, ZIPF, WIDE } dist;
uint64_t rnd(void);                                  /* one random sequence for every test */
uint32_t draw(dist d, uint32_t range);
/* n random rows of arity columns (set: sorted and distinct, so maybe fewer). */
rfx_rows rows_random(size_t n, int arity, dist d, uint32_t range, bool set);
/* Whether there is a device (else prints that the test is skipped). */
bool need_gpu(void);
bool same(const rfx_rows *a, const rfx_rows *b);
rfx_dev_rows up(const rfx_rows *h);
rfx_rows down(const rfx_dev_rows *d);
/* The GPU's result gd (its call returned st) equals the CPU's hc; both are freed. */
bool gpu_agrees(rfx_status st, rfx_dev_rows *gd, rfx_rows *hc);

static const size_t sizes[] = {0, 1, 2, 255, 256, 257, 65535, 65537, 1000003};
#define NS (sizeof sizes / sizeof sizes[0])

static inline rfx_rx col(int c) { return (rfx_rx){.kind = RFX_RX_COL, .prim = RFX_NUMBER, .col = c}; }

/* Each file's tests, added to the suite in their order. */
void gpu_exprs_tests(CU_pSuite s);
void gpu_lftj_tests(CU_pSuite s);

#endif
