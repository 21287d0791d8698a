/* bench_graphs.c: the graphs the triangle benchmarks run on (see bench_graphs.h). */
#include "bench_graphs.h"
#include "graphgen.h"
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Orientation in parts on all cores: the largest id, the degrees (atomic counts), the
 * edges each part keeps, then each part writes its edges at its offset (in input order,
 * as one pass would). */
typedef struct orient_job {
    const uint32_t *raw;
    size_t m;
    bool by_degree;
    int phase, nparts;
    uint32_t *deg, *maxv;   /* maxv: per part */
    const uint32_t *rank;   /* renaming: each vertex's rank by (degree, id), or NULL */
    size_t *kept;           /* per part; then the offsets */
    uint32_t *out;
} orient_job;

static void orient_part(int p, void *arg)
{
    orient_job *j = arg;
    size_t lo = j->m * (size_t)p / (size_t)j->nparts, hi = j->m * (size_t)(p + 1) / (size_t)j->nparts;
    const uint32_t *raw = j->raw;
    if (j->phase == 0) {
        uint32_t mx = 0, n = 0;
        for (size_t i = lo; i < hi; i++) {
            mx = raw[2 * i] > mx ? raw[2 * i] : mx;
            mx = raw[2 * i + 1] > mx ? raw[2 * i + 1] : mx;
            n += raw[2 * i] != raw[2 * i + 1];
        }
        j->maxv[p] = mx;
        j->kept[p] = n;
    } else if (j->phase == 1) {
        for (size_t i = lo; i < hi; i++)
            if (raw[2 * i] != raw[2 * i + 1]) {
                __atomic_fetch_add(&j->deg[raw[2 * i]], 1, __ATOMIC_RELAXED);
                __atomic_fetch_add(&j->deg[raw[2 * i + 1]], 1, __ATOMIC_RELAXED);
            }
    } else {
        uint32_t *o = j->out + 2 * j->kept[p];
        const uint32_t *deg = j->deg;
        for (size_t i = lo; i < hi; i++) {
            uint32_t a = raw[2 * i], b = raw[2 * i + 1];
            if (a == b)
                continue;
            if (j->rank) {
                a = j->rank[a];
                b = j->rank[b];
            }
            bool a_first = j->by_degree && !j->rank ? deg[a] < deg[b] || (deg[a] == deg[b] && a < b) : a < b;
            *o++ = a_first ? a : b;
            *o++ = a_first ? b : a;
        }
    }
}

double rfx_bench_orient(const uint32_t *raw, size_t m, rfx_bench_orientation how, rfx_rows *rows)
{
    const bool by_degree = how != RFX_ORIENT_ID;
    double t0 = rfx_seconds();
    rfx_rows_init(rows, 2);
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    int nparts = m < ((size_t)1 << 16) || nc < 2 ? 1 : nc > 64 ? 64 : (int)nc;
    uint32_t maxv[64];
    size_t kept[64];
    orient_job j = {raw, m, by_degree, 0, nparts, NULL, maxv, NULL, kept, NULL};
    rfx_parallel_for(nparts, nparts, orient_part, &j);
    uint32_t mx = 0;
    size_t total = 0;
    for (int p = 0; p < nparts; p++) {
        mx = maxv[p] > mx ? maxv[p] : mx;
        size_t k = kept[p];
        kept[p] = total;
        total += k;
    }
    j.deg = by_degree ? calloc((size_t)mx + 1, sizeof(uint32_t)) : NULL;
    if (rfx_rows_reserve(rows, m) != RFX_OK || (by_degree && !j.deg)) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(3);
    }
    j.out = rows->data;
    uint32_t *rank = NULL;
    if (by_degree) {
        j.phase = 1;
        rfx_parallel_for(nparts, nparts, orient_part, &j);
    }
    if (how == RFX_ORIENT_RANK) {   /* a counting sort by degree, ties in id order */
        uint32_t maxd = 0;
        for (size_t v = 0; v <= mx; v++)
            maxd = j.deg[v] > maxd ? j.deg[v] : maxd;
        size_t *at = calloc((size_t)maxd + 2, sizeof(size_t));
        rank = malloc(((size_t)mx + 1) * sizeof(uint32_t));
        if (!at || !rank) {
            fprintf(stderr, "bench: out of host memory\n");
            exit(3);
        }
        for (size_t v = 0; v <= mx; v++)
            at[j.deg[v] + 1]++;
        for (size_t d = 1; d <= (size_t)maxd + 1; d++)
            at[d] += at[d - 1];
        for (size_t v = 0; v <= mx; v++)
            rank[v] = (uint32_t)at[j.deg[v]]++;
        free(at);
        j.rank = rank;
    }
    j.phase = 2;
    rfx_parallel_for(nparts, nparts, orient_part, &j);
    rows->n = total;
    free(j.deg);
    free(rank);
    return (rfx_seconds() - t0) * 1e3;
}

bool rfx_bench_probe_sums(const rfx_rows *e, double *by_y, double *by_x, double *least)
{
    *by_y = *by_x = *least = 0;
    uint32_t n = 0;
    for (size_t i = 0; i < 2 * e->n; i++)
        n = e->data[i] >= n ? e->data[i] + 1 : n;
    uint32_t *out = calloc((size_t)n + 1, sizeof(uint32_t));
    if (!out)
        return false;
    for (size_t i = 0; i < e->n; i++)
        out[e->data[2 * i]]++;
    for (size_t i = 0; i < e->n; i++) {
        uint32_t dx = out[e->data[2 * i]], dy = out[e->data[2 * i + 1]];
        *by_y += dy;
        *by_x += dx;
        *least += dx < dy ? dx : dy;
    }
    free(out);
    return true;
}

bool rfx_bench_oriented_set(const uint32_t *raw, size_t m, rfx_bench_orientation how, int nthreads, rfx_rows *rows)
{
    rfx_bench_orient(raw, m, how, rows);
    return rfx_cpu_sort(rows, nthreads) == RFX_OK && rfx_cpu_unique(rows, nthreads) == RFX_OK;
}

bool rfx_bench_degrees(const rfx_rows *e, uint32_t *top, size_t **out, size_t **in)
{
    uint32_t t = 0;
    for (size_t r = 0; r < e->n; r++)
        t = e->data[2 * r] > t ? e->data[2 * r] : t, t = e->data[2 * r + 1] > t ? e->data[2 * r + 1] : t;
    *top = t;
    *out = calloc((size_t)t + 1, sizeof(size_t));
    *in = calloc((size_t)t + 1, sizeof(size_t));
    if (!*out || !*in) {
        free(*out);
        free(*in);
        *out = *in = NULL;
        return false;
    }
    for (size_t r = 0; r < e->n; r++) {
        (*out)[e->data[2 * r]]++;
        (*in)[e->data[2 * r + 1]]++;
    }
    return true;
}

void rfx_bench_cuts(const size_t *out, const size_t *in, uint32_t top, bool by_out, bool by_in, int n, uint32_t *cut)
{
    size_t total = 0, acc = 0;
    for (size_t v = 0; v <= top; v++)
        total += (by_out ? out[v] : 0) + (by_in ? in[v] : 0);
    int p = 1;
    cut[0] = 0;
    for (size_t v = 0; v <= top && p < n; v++) {   /* a part ends after the id that reaches its share */
        acc += (by_out ? out[v] : 0) + (by_in ? in[v] : 0);
        while (p < n && (double)acc >= (double)total * p / n)
            cut[p++] = (uint32_t)v + 1;
    }
    while (p <= n)
        cut[p++] = top + 1;
}

void rfx_bench_each_graph(const char **files, int nfiles, const int *scales, int nscales,
                       void (*fn)(const char *name, const uint32_t *edges, size_t m))
{
    for (int i = 0; i < nfiles; i++) {
        rfx_prim types[2] = {RFX_NUMBER, RFX_NUMBER};
        rfx_rows raw;
        rfx_rows_init(&raw, 2);
        rfx_symtab *syms = rfx_symtab_new();
        rfx_read_opts ro = {.edge_list = true, .threads = 1};
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

