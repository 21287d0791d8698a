/* tri_work.c: the work a triangle count must do, by variable order, counted on the host.
 * The graphs and their orientation are the benchmarks' (bench_graphs.h: R-MAT by scale,
 * edge factor 16, seed 1, or edge files; from the lower-degree end, ties by id), made a
 * set as the GPU's prep does. For each oriented edge (x, y) the last level intersects
 * N+(x) with N+(y); a count that hashes one list and probes the other does |probed|
 * probes per edge:
 *   probe N+(y)  order (x, y, z): N+(x) is shared by the edges of one x (rfx's kernel)
 *   probe N+(x)  order (y, x, z): N+(y) shared instead (needs e reversed)
 *   min          the shorter list, per edge (a merge or search bound)
 *   steps yx     order (y, x, z) as the GPU's pair count walks it: warp steps of 128 rows
 *                of each probed N+(x) (quads aligned as in the relation; none where N+(y)
 *                is empty), in millions
 *   narrowed     the same with each N+(x) cut to the values from N+(y)'s first to its
 *                last (lftj_pair_narrow; what it saves depends on the numbering)
 * -r renames every vertex to its rank by (degree, id) first, as rfx_gpu_rename_by_degree
 * does in bench_lftj's prep (degrees of the oriented rows, repeats counted).
 * Usage: tri_work [-r] [-s SCALE]... [-f EDGEFILE]... */
#include "bench_graphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool renamed;

static void out_of_memory(const char *name)
{
    fprintf(stderr, "tri_work: out of memory on %s\n", name);
    exit(3);
}

/* Every vertex of the n rows e renamed to its rank by (degree, id): a counting sort by
 * degree, ids in order within a degree. */
static void rename_by_rank(uint32_t *e, size_t n, const char *name)
{
    uint32_t nv = 0, maxd = 0;
    for (size_t i = 0; i < 2 * n; i++)
        nv = e[i] >= nv ? e[i] + 1 : nv;
    uint32_t *deg = calloc((size_t)nv + 1, sizeof *deg);
    if (!deg)
        out_of_memory(name);
    for (size_t i = 0; i < 2 * n; i++)
        deg[e[i]]++;
    for (uint32_t v = 0; v < nv; v++)
        maxd = deg[v] > maxd ? deg[v] : maxd;
    size_t *at = calloc((size_t)maxd + 2, sizeof *at);
    if (!at)
        out_of_memory(name);
    for (uint32_t v = 0; v < nv; v++)
        at[deg[v] + 1]++;
    for (size_t d = 1; d <= (size_t)maxd + 1; d++)
        at[d] += at[d - 1];
    for (uint32_t v = 0; v < nv; v++)   /* deg becomes the rank */
        deg[v] = (uint32_t)at[deg[v]]++;
    for (size_t i = 0; i < 2 * n; i++)
        e[i] = deg[e[i]];
    free(at);
    free(deg);
}

/* Warp steps over rows [lo, hi) as lftj_walk takes them: 128 rows from the quad holding lo. */
static double walk_steps(size_t lo, size_t hi)
{
    return hi > lo ? (double)((((hi + 3) >> 2) - (lo >> 2) + 31) / 32) : 0;
}

/* The first row in [lo, hi) of sorted rows e whose second column is >= x. */
static size_t first_at_least(const uint32_t *e, size_t lo, size_t hi, uint64_t x)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e[2 * mid + 1] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* *steps, *narrowed: order (y, x, z)'s warp steps over each edge's N+(x), whole and cut to
 * N+(y)'s first to last value (edges whose N+(y) is empty: none). */
static void yx_steps(const rfx_rows *e, double *steps, double *narrowed, const char *name)
{
    *steps = *narrowed = 0;
    uint32_t nv = 0;
    for (size_t i = 0; i < 2 * e->n; i++)
        nv = e->data[i] >= nv ? e->data[i] + 1 : nv;
    size_t *start = calloc((size_t)nv + 1, sizeof *start);
    if (!start)
        out_of_memory(name);
    for (size_t i = 0; i < e->n; i++)
        start[e->data[2 * i] + 1]++;
    for (uint32_t v = 0; v < nv; v++)
        start[v + 1] += start[v];
    for (size_t i = 0; i < e->n; i++) {
        uint32_t x = e->data[2 * i], y = e->data[2 * i + 1];
        size_t xl = start[x], xh = start[x + 1], yl = start[y], yh = start[y + 1];
        if (yh == yl)   /* no z: the count skips the element */
            continue;
        *steps += walk_steps(xl, xh);
        *narrowed += walk_steps(first_at_least(e->data, xl, xh, e->data[2 * yl + 1]),
                                    first_at_least(e->data, xl, xh, (uint64_t)e->data[2 * (yh - 1) + 1] + 1));
    }
    free(start);
}

static void work(const char *name, const uint32_t *edges, size_t m)
{
    rfx_rows e;
    rfx_bench_orient(edges, m, RFX_ORIENT_DEGREE, &e);
    if (renamed)
        rename_by_rank(e.data, e.n, name);
    double py, px, pmin, steps, narrowed;
    if (rfx_cpu_sort(&e, 8) != RFX_OK || rfx_cpu_unique(&e, 8) != RFX_OK || !rfx_bench_probe_sums(&e, &py, &px, &pmin))
        out_of_memory(name);
    yx_steps(&e, &steps, &narrowed, name);
    double w = e.n ? (double)e.n : 1;
    printf("%-24s %12zu %12zu %11.3g %11.3g %11.3g %7.1f %7.1f %7.1f %9.1f %9.1f\n", name, m, e.n, py, px, pmin, py / w,
           px / w, pmin / w, steps * 1e-6, narrowed * 1e-6);
    rfx_rows_free(&e);
}

int main(int argc, char **argv)
{
    int scales[16], nscales = 0, nfiles = 0;
    const char *files[16];
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0 && i + 1 < argc && nscales < 16)
            scales[nscales++] = atoi(argv[++i]);
        else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc && nfiles < 16)
            files[nfiles++] = argv[++i];
        else if (strcmp(argv[i], "-r") == 0)
            renamed = true;
        else
            return fprintf(stderr, "usage: tri_work [-r] [-s SCALE]... [-f EDGEFILE]...\n"), 2;
    }
    for (int i = 0; i < nscales; i++)
        if (scales[i] < 1 || scales[i] > 30)
            return fprintf(stderr, "tri_work: scales are 1..30\n"), 2;
    printf("%-24s %12s %12s %11s %11s %11s %7s %7s %7s %9s %9s\n", "graph", "edges", "oriented", "probe N+y", "probe N+x",
           "min", "y/edge", "x/edge", "min/e", "steps yx", "narrowed");
    rfx_bench_each_graph(files, nfiles, scales, nscales, work);
    return 0;
}
