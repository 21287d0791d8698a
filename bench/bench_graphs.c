/* bench_graphs.c: the graphs the triangle benchmarks run on (see bench_graphs.h). */
#include "bench_graphs.h"
#include "graphgen.h"
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double rfx_bench_orient(const uint32_t *raw, size_t m, bool by_degree, rfx_rows *rows)
{
    double t0 = wall();
    rfx_rows_init(rows, 2);
    uint32_t maxv = 0;
    for (size_t i = 0; i < 2 * m; i++)
        maxv = raw[i] > maxv ? raw[i] : maxv;
    uint32_t *deg = by_degree ? calloc((size_t)maxv + 1, sizeof(uint32_t)) : NULL;
    if (rfx_rows_reserve(rows, m) != RFX_OK || (by_degree && !deg)) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(3);
    }
    for (size_t i = 0; by_degree && i < m; i++)
        if (raw[2 * i] != raw[2 * i + 1]) {
            deg[raw[2 * i]]++;
            deg[raw[2 * i + 1]]++;
        }
    for (size_t i = 0; i < m; i++) {
        uint32_t a = raw[2 * i], b = raw[2 * i + 1];
        if (a == b)
            continue;
        bool a_first = by_degree ? deg[a] < deg[b] || (deg[a] == deg[b] && a < b) : a < b;
        rows->data[2 * rows->n] = a_first ? a : b;
        rows->data[2 * rows->n + 1] = a_first ? b : a;
        rows->n++;
    }
    free(deg);
    return (wall() - t0) * 1e3;
}

void rfx_bench_each_graph(const char **files, int nfiles, const int *scales, int nscales,
                       void (*fn)(const char *name, const uint32_t *edges, size_t m))
{
    for (int i = 0; i < nfiles; i++) {
        rfx_prim types[2] = {RFX_NUMBER, RFX_NUMBER};
        rfx_rows raw;
        rfx_rows_init(&raw, 2);
        rfx_symtab *syms = rfx_symtab_new();
        rfx_read_opts ro = {'\t', true};
        if (syms && rfx_read_facts(files[i], types, syms, &ro, &raw, stderr) == RFX_OK) {
            const char *base = strrchr(files[i], '/');
            fn(base ? base + 1 : files[i], raw.data, raw.n);
        }
        rfx_rows_free(&raw);
        rfx_symtab_free(syms);
    }
    for (int i = 0; i < nscales; i++) {
        size_t m = (size_t)16 << scales[i];
        uint32_t *raw = malloc(sizeof(uint32_t) * 2 * m);
        if (!raw) {
            fprintf(stderr, "bench: out of host memory for scale %d\n", scales[i]);
            continue;
        }
        rfx_graph_generate(RFX_GRAPH_RMAT, (uint32_t)1 << scales[i], m, 1, raw);
        char name[64];
        snprintf(name, sizeof name, "rmat-%d (ef 16)", scales[i]);
        fn(name, raw, m);
        free(raw);
    }
}

