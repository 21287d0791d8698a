/* tri_work.c: the work a triangle count must do, by variable order, counted on the host.
 * The graphs and their orientation are the benchmarks' (bench_graphs.h: R-MAT by scale,
 * edge factor 16, seed 1, or edge files; from the lower-degree end, ties by id), made a
 * set as the GPU's prep does. For each oriented edge (x, y) the last level intersects
 * N+(x) with N+(y); a count that hashes one list and probes the other does |probed|
 * probes per edge:
 *   probe N+(y)  order (x, y, z): N+(x) is shared by the edges of one x (rfx's kernel)
 *   probe N+(x)  order (y, x, z): N+(y) shared instead (needs e reversed)
 *   min          the shorter list, per edge (a merge or search bound)
 * Usage: tri_work [-s SCALE]... [-f EDGEFILE]... */
#include "bench_graphs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void work(const char *name, const uint32_t *edges, size_t m)
{
    rfx_rows e;
    rfx_bench_orient(edges, m, RFX_ORIENT_DEGREE, &e);
    double py, px, pmin;
    if (rfx_cpu_sort(&e, 8) != RFX_OK || rfx_cpu_unique(&e, 8) != RFX_OK || !rfx_bench_probe_sums(&e, &py, &px, &pmin)) {
        fprintf(stderr, "tri_work: out of memory on %s\n", name);
        exit(3);
    }
    double w = e.n ? (double)e.n : 1;
    printf("%-24s %12zu %12zu %11.3g %11.3g %11.3g %7.1f %7.1f %7.1f\n", name, m, e.n, py, px, pmin, py / w, px / w,
           pmin / w);
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
        else
            return fprintf(stderr, "usage: tri_work [-s SCALE]... [-f EDGEFILE]...\n"), 2;
    }
    for (int i = 0; i < nscales; i++)
        if (scales[i] < 1 || scales[i] > 30)
            return fprintf(stderr, "tri_work: scales are 1..30\n"), 2;
    printf("%-24s %12s %12s %11s %11s %11s %7s %7s %7s\n", "graph", "edges", "oriented", "probe N+y", "probe N+x", "min",
           "y/edge", "x/edge", "min/e");
    rfx_bench_each_graph(files, nfiles, scales, nscales, work);
    return 0;
}
