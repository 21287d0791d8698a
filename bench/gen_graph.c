/* gen_graph.c: writes a random graph as a SNAP edge list.
 *   gen_graph rmat SCALE EDGEFACTOR SEED [FILE]     2^SCALE vertices, EDGEFACTOR * 2^SCALE edges
 *   gen_graph uniform N M SEED [FILE]               N vertices, M edges
 * Deterministic by seed; FILE defaults to stdout. */
#include "graphgen.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "rmat") != 0 && strcmp(argv[1], "uniform") != 0)) {
        fprintf(stderr, "usage: gen_graph rmat SCALE EDGEFACTOR SEED [FILE]\n"
                        "       gen_graph uniform N M SEED [FILE]\n");
        return 2;
    }
    bool rmat = strcmp(argv[1], "rmat") == 0;
    unsigned long long a = strtoull(argv[2], NULL, 10), b = strtoull(argv[3], NULL, 10),
                       seed = strtoull(argv[4], NULL, 10);
    if (rmat && (a < 1 || a > 31)) {
        fprintf(stderr, "gen_graph: SCALE must be 1 to 31\n");
        return 2;
    }
    uint32_t n = rmat ? (uint32_t)1 << a : (uint32_t)a;
    size_t m = rmat ? (size_t)b << a : (size_t)b;
    if (n < 1 || m < 1) {
        fprintf(stderr, "gen_graph: need at least one vertex and one edge\n");
        return 2;
    }
    uint32_t *e = malloc(sizeof(uint32_t) * 2 * m);
    if (!e) {
        fprintf(stderr, "gen_graph: out of memory for %zu edges\n", m);
        return 3;
    }
    rfx_graph_generate(rmat ? RFX_GRAPH_RMAT : RFX_GRAPH_UNIFORM, n, m, seed, e);
    FILE *f = argc > 5 ? fopen(argv[5], "w") : stdout;
    if (!f) {
        perror(argv[5]);
        free(e);
        return 2;
    }
    fprintf(f, "# %s graph: %u vertices, %zu edges, seed %llu (rfx bench/gen_graph)\n# FromNodeId\tToNodeId\n",
            rmat ? "R-MAT (Graph500 a=0.57 b=0.19 c=0.19)" : "uniform", n, m, seed);
    for (size_t i = 0; i < m; i++)
        fprintf(f, "%u\t%u\n", e[2 * i], e[2 * i + 1]);
    free(e);
    int rc = (f != stdout ? fclose(f) : fflush(f)) == 0 ? 0 : 2;
    if (rc)
        fprintf(stderr, "gen_graph: write failed\n");
    return rc;
}
