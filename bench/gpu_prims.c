/* gpu_prims.c: bandwidth benchmark of the CUDA primitives. For each operator and size,
 * the bytes it must move (inputs read once, outputs written once) over the measured
 * device-to-device copy bandwidth is its floor; the table gives time / floor.
 * Times: CUDA events, after a warm-up, median of repeats, random inputs made on the
 * device. Each size also times a plain copy of the same bytes (what any kernel can reach at
 * that size) and a SELECT whose predicate has arithmetic ("SELECT rx": the interpreter).
 * Before the table, the fixed cost any operator pays: an empty kernel's launch, and its
 * launch and a wait for a word it writes (what a SELECT pays to learn its output's size).
 * The last column, "model max", is what this machine leaves an operator at that size: its
 * floor over its bytes at the rate the copy of that size reaches when queued behind other
 * work, plus the part of the copy's own time that queueing hides (its launch), plus, for an
 * operator that learns its output's size, what waiting for a word adds to an empty kernel.
 * A cell whose model max is under its target cannot meet it as measured here by a kernel
 * that moves its bytes no faster than the copy does.
 * Usage: gpu_prims [min_log2 max_log2 repeats]   (default 20 28 5) */
#include "gpu_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rfx_gpu *g;

typedef struct job {
    int op;
    rfx_dev_rows *a, *b, *out;
    rfx_rx *pred;
    rfx_rx **outs;
    int nout, k;
    uint64_t *keys;
    size_t n;
    void *behind;   /* when set, each timed run is queued behind a 256 MB copy within it */
} job;

enum { OP_COPY, OP_SELECT, OP_SELECT_EXPR, OP_PROJECT, OP_MAP, OP_SORT, OP_CUBSORT, OP_JOIN, OP_UNION, OP_DIFF,
       OP_EMPTY, OP_EMPTY_WAIT };
static const char *names[] = {"copy", "SELECT", "SELECT rx", "PROJECT", "MAP", "SORT", "CUB sort", "JOIN", "UNION",
                              "DIFFERENCE", "empty", "empty+wait"};

static rfx_status run(void *arg)
{
    job *j = arg;
    switch (j->op) {
    case OP_SELECT: case OP_SELECT_EXPR: case OP_PROJECT: case OP_MAP:
        return rfx_gpu_mapfilter(g, j->a, j->pred, j->outs, j->nout, j->out);
    case OP_SORT:
        return rfx_gpu_sort_into(g, j->a, j->out);
    case OP_CUBSORT:
        return rfx_gpu_cub_sort_u64(g, j->keys, j->n, 64);
    case OP_JOIN:
        return rfx_gpu_join(g, j->a, j->b, j->k, NULL, j->outs, j->nout, j->out);
    case OP_UNION:
        return rfx_gpu_union(g, j->a, j->b, j->out);
    case OP_DIFF:
        return rfx_gpu_semijoin(g, j->a, j->b, 2, false, j->out);
    case OP_EMPTY: case OP_EMPTY_WAIT:
        return rfx_gpu_empty_launch(g, j->op == OP_EMPTY_WAIT);
    default:
        return rfx_gpu_memcpy_d2d(g, j->out->data, j->a->data, j->n * 8);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_ms(job *j, int reps)
{
    double t[64];
    rfx_status st;
    rfx_gpu_time_ms(g, run, j, &st);   /* warm-up */
    if (st) {
        fprintf(stderr, "%s failed: %s\n", names[j->op], rfx_gpu_error(g));
        exit(1);
    }
    for (int r = 0; r < reps; r++) {
        if (j->behind &&
            rfx_gpu_memcpy_d2d(g, (char *)j->behind + ((size_t)256 << 20), j->behind, (size_t)256 << 20) != RFX_OK) {
            fprintf(stderr, "the copy queued ahead failed: %s\n", rfx_gpu_error(g));
            exit(1);
        }
        t[r] = rfx_gpu_time_ms(g, run, j, &st);
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_d);
    return t[reps / 2];
}

/* fixed_ms: the operator's launch (and wait); rate: the copy's bytes a ms at this size,
 * queued (0: no model, as for sorts, which are compared with CUB instead) */
static void print_row(int op, int lg, size_t out_n, double ms, double bytes, double bw, double fixed_ms, double rate)
{
    double floor_ms = bytes / bw * 1e3 / 1e9;
    printf("%-10s %5d %12zu %10.3f %9.0f %8.0f%%", names[op], lg, out_n, ms, bytes / (ms * 1e-3) / 1e9,
           100.0 * floor_ms / ms);
    if (rate > 0)
        printf(" %9.0f%%", 100.0 * floor_ms / (fixed_ms + bytes / rate));
    printf("\n");
}

int main(int argc, char **argv)
{
    int lo = argc > 2 ? atoi(argv[1]) : 20, hi = argc > 2 ? atoi(argv[2]) : 28, reps = argc > 3 ? atoi(argv[3]) : 5;
    if (reps < 1 || reps > 63) {
        fprintf(stderr, "repeats must be 1 to 63\n");
        return 2;
    }
    char err[512];
    g = rfx_gpu_open(0, 0, err, sizeof err);
    if (!g) {
        fprintf(stderr, "no device: %s\n", err);
        return 1;
    }
    /* the ceiling: a large device-to-device copy, bytes read + written */
    rfx_dev_rows big, big2;
    rfx_gpu_rows_init(&big, 2);
    rfx_gpu_rows_init(&big2, 2);
    size_t nbig = (size_t)1 << 28;
    rfx_gpu_fill_random(g, &big, nbig, 1, 0);
    rfx_gpu_fill_random(g, &big2, nbig, 2, 0);
    job cj = {.op = OP_COPY, .a = &big, .out = &big2, .n = nbig};
    double bw = 2.0 * nbig * 8 / (median_ms(&cj, reps) * 1e-3) / 1e9;
    rfx_gpu_rows_free(g, &big2);
    job ej = {.op = OP_EMPTY}, ewj = {.op = OP_EMPTY_WAIT};
    double launch_ms = median_ms(&ej, 63), wait_ms = median_ms(&ewj, 63);
    printf("device %s: device-to-device copy %.0f GB/s (read + write)\n", rfx_gpu_name(g), bw);
    printf("empty kernel: %.1f us launched, %.1f us launched and waited for\n", launch_ms * 1e3, wait_ms * 1e3);
    printf("%-10s %5s %12s %10s %9s %9s %10s\n", "operator", "log2n", "tuples out", "ms", "GB/s", "of floor",
           "model max");

    rfx_rx c0 = {.kind = RFX_RX_COL, .prim = RFX_NUMBER, .col = 0}, c1 = {.kind = RFX_RX_COL, .prim = RFX_NUMBER, .col = 1};
    rfx_rx c3 = {.kind = RFX_RX_COL, .prim = RFX_NUMBER, .col = 3};
    rfx_rx half = {.kind = RFX_RX_CONST, .prim = RFX_UNSIGNED, .value = 0x80000000u};
    rfx_rx lt = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &c0, .r = &half};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c0, .r = &c1};
    /* a predicate with arithmetic takes the interpreter (plain comparisons do not) */
    rfx_rx sum_lt = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &sum, .r = &half};
    rfx_rx *id[2] = {&c0, &c1}, *swap[2] = {&c1, &c0}, *mapped[2] = {&sum, &c1}, *jout[3] = {&c0, &c1, &c3};
    for (int lg = lo; lg <= hi; lg++) {
        size_t n = (size_t)1 << lg;
        rfx_dev_rows a, b, out;
        rfx_gpu_rows_init(&a, 2);
        rfx_gpu_rows_init(&b, 2);
        rfx_gpu_rows_init(&out, 2);
        rfx_gpu_fill_random(g, &a, n, 11 + lg, 0);
        rfx_gpu_rows_free(g, &out);
        rfx_gpu_fill_random(g, &out, n, 3, 0);
        /* the copy at this size, alone (the table's first row: what any kernel of these bytes
         * can reach here) and queued behind other work (the model's rate for the bytes; the
         * difference is the launch that queueing hides) */
        job sj = {.op = OP_COPY, .a = &a, .out = &out, .n = n}, qj = sj;
        qj.behind = big.data;
        double alone_ms = median_ms(&sj, reps), queued_ms = median_ms(&qj, reps), rate = 2.0 * n * 8 / queued_ms;
        double launch = alone_ms > queued_ms ? alone_ms - queued_ms : 0, wait = launch + wait_ms - launch_ms;
        print_row(OP_COPY, lg, n, alone_ms, n * 16.0, bw, launch, rate);
        job jobs[] = {
            {.op = OP_SELECT, .a = &a, .out = &out, .pred = &lt, .outs = id, .nout = 2},
            {.op = OP_SELECT_EXPR, .a = &a, .out = &out, .pred = &sum_lt, .outs = id, .nout = 2},
            {.op = OP_PROJECT, .a = &a, .out = &out, .outs = swap, .nout = 2},
            {.op = OP_MAP, .a = &a, .out = &out, .outs = mapped, .nout = 2},
            {.op = OP_SORT, .a = &a, .out = &out},
        };
        for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
            double ms = median_ms(&jobs[i], reps);
            double bytes = (double)n * 8 + (double)out.n * out.arity * 4 + (jobs[i].op == OP_SORT ? n * 8.0 : 0);
            const int op = jobs[i].op;
            print_row(op, lg, out.n, ms, bytes, bw, op == OP_SELECT || op == OP_SELECT_EXPR ? wait : launch,
                      op == OP_SORT ? 0 : rate);
        }
        /* CUB on the same keys, packed as the SORT primitive packs them */
        uint64_t *keys = rfx_gpu_alloc(g, n * 8);
        job cub = {.op = OP_CUBSORT, .keys = keys, .n = n};
        rfx_gpu_memcpy_d2d(g, keys, a.data, n * 8);
        double ms_cub = median_ms(&cub, 1);
        rfx_gpu_memcpy_d2d(g, keys, a.data, n * 8);
        ms_cub = median_ms(&cub, reps);
        rfx_gpu_free(g, keys);
        printf("%-10s %5d %12zu %10.3f %9s %9s\n", "CUB sort", lg, n, ms_cub, "", "");
        /* sorted sets with keys in [0, n): joins on one key give about n tuples */
        rfx_gpu_fill_random(g, &a, n, 101 + lg, (uint32_t)n);
        rfx_gpu_fill_random(g, &b, n, 202 + lg, (uint32_t)n);
        rfx_gpu_sort(g, &a);
        rfx_gpu_unique(g, &a);
        rfx_gpu_sort(g, &b);
        rfx_gpu_unique(g, &b);
        job j2[] = {
            {.op = OP_JOIN, .a = &a, .b = &b, .out = &out, .outs = jout, .nout = 3, .k = 1},
            {.op = OP_UNION, .a = &a, .b = &b, .out = &out},
            {.op = OP_DIFF, .a = &a, .b = &b, .out = &out},
        };
        for (int i = 0; i < 3; i++) {
            double ms = median_ms(&j2[i], reps);
            double bytes = (double)(a.n + b.n) * 8 + (double)out.n * out.arity * 4;
            print_row(j2[i].op, lg, out.n, ms, bytes, bw, wait, rate);
        }
        rfx_gpu_rows_free(g, &a);
        rfx_gpu_rows_free(g, &b);
        rfx_gpu_rows_free(g, &out);
    }
    rfx_gpu_rows_free(g, &big);
    rfx_gpu_close(g);
    return 0;
}
