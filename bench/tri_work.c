/* tri_work.c: the work a triangle count must do, by variable order, counted on the host.
 * Edges (R-MAT by scale, edge factor 16, seed 1 as the benchmarks make them; or a SNAP
 * edge file) are made undirected and simple and oriented from the lower-degree end (ties
 * by id), as bench_lftj and `rfx cliques` do. For each oriented edge (x, y) the last
 * level intersects N+(x) with N+(y); a count that hashes one list and probes the other
 * does |probed| probes per edge:
 *   probe N+(y)  order (x, y, z): N+(x) is shared by the edges of one x (rfx's kernel)
 *   probe N+(x)  order (y, x, z): N+(y) shared instead (needs e reversed)
 *   min          the shorter list, per edge (a merge or search bound)
 * Usage: tri_work -s SCALE | -f EDGEFILE */
#include "graphgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint32_t *read_edges(const char *path, size_t *m)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    uint32_t *e = malloc(sizeof(uint32_t) * 2 * cap);
    char line[512];
    unsigned a, b;
    while (e && fgets(line, sizeof line, f))
        if (line[0] != '#' && sscanf(line, "%u %u", &a, &b) == 2) {
            if (n == cap) {
                uint32_t *g = realloc(e, sizeof(uint32_t) * 4 * cap);
                if (!g) {
                    free(e);
                    e = NULL;
                    break;
                }
                e = g;
                cap *= 2;
            }
            e[2 * n] = a;
            e[2 * n + 1] = b;
            n++;
        }
    fclose(f);
    *m = n;
    return e;
}

int main(int argc, char **argv)
{
    size_t m = 0;
    uint32_t *raw = NULL;
    if (argc == 3 && strcmp(argv[1], "-s") == 0) {
        int scale = atoi(argv[2]);
        if (scale < 1 || scale > 30)
            return fprintf(stderr, "tri_work: scale 1..30\n"), 2;
        m = (size_t)16 << scale;
        raw = malloc(sizeof(uint32_t) * 2 * m);
        if (raw)
            rfx_graph_generate(RFX_GRAPH_RMAT, 1u << scale, m, 1, raw);
    } else if (argc == 3 && strcmp(argv[1], "-f") == 0)
        raw = read_edges(argv[2], &m);
    else
        return fprintf(stderr, "usage: tri_work -s SCALE | -f EDGEFILE\n"), 2;
    if (!raw)
        return fprintf(stderr, "tri_work: cannot read or make the graph\n"), 1;
    uint64_t *k = malloc(sizeof(uint64_t) * (m ? m : 1));
    uint32_t n = 0;
    size_t u = 0;
    for (size_t i = 0; k && i < m; i++) {
        uint32_t a = raw[2 * i], b = raw[2 * i + 1];
        if (a == b)
            continue;
        k[u++] = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
        n = a >= n ? a + 1 : n;
        n = b >= n ? b + 1 : n;
    }
    free(raw);
    uint32_t *deg = calloc((size_t)n + 1, sizeof(uint32_t)), *out = calloc((size_t)n + 1, sizeof(uint32_t));
    if (!k || !deg || !out)
        return fprintf(stderr, "tri_work: out of memory\n"), 3;
    qsort(k, u, sizeof *k, cmp_u64);
    size_t w = 0;
    for (size_t i = 0; i < u; i++)
        if (!w || k[i] != k[w - 1])
            k[w++] = k[i];
    for (size_t i = 0; i < w; i++) {
        deg[k[i] >> 32]++;
        deg[(uint32_t)k[i]]++;
    }
    for (size_t i = 0; i < w; i++) {   /* orient: from the lower degree, ties by id */
        uint32_t a = (uint32_t)(k[i] >> 32), b = (uint32_t)k[i];
        if (deg[a] > deg[b] || (deg[a] == deg[b] && a > b))
            k[i] = (uint64_t)b << 32 | a;
        out[k[i] >> 32]++;
    }
    double py = 0, px = 0, pmin = 0;
    for (size_t i = 0; i < w; i++) {
        uint32_t dx = out[k[i] >> 32], dy = out[(uint32_t)k[i]];
        py += dy;
        px += dx;
        pmin += dx < dy ? dx : dy;
    }
    printf("edges %zu, undirected %zu, vertices %u\n", m, w, n);
    printf("probe N+(y) %.3g  probe N+(x) %.3g  min %.3g  (per edge %.1f / %.1f / %.1f)\n", py, px, pmin,
           w ? py / (double)w : 0, w ? px / (double)w : 0, w ? pmin / (double)w : 0);
    free(k);
    free(deg);
    free(out);
    return 0;
}
