/* tri_blocks.c: what a schedule of boxes over triples of vertex parts would copy for an
 * out-of-core triangle count, counted on the host (no GPU; a planning tool for the 70%-at-
 * a-25%-cap figure of the out-of-core issue, docs/PERFORMANCE.md, thirty-first session).
 *
 * The edges are bench_lftj's and bench_ooc's R-MAT graph (edge factor 16, seed 1) renamed
 * by degree rank and oriented from the lower rank, made a set. The vertices are cut into n
 * consecutive parts of equal weight (-w out: out-edges, in: in-edges, both: the two), so
 * the rows fall into blocks E_ij (x in part i, y in part j, i <= j). A triangle x < y < z
 * with x, y, z in parts i <= j <= k is found in box (i, j, k), which needs E_ij, E_ik and
 * E_jk on the device; boxes run with k innermost, then j, then i, and a box copies the
 * blocks the one before it did not hold. Per n: the boxes with all three blocks non-empty,
 * the bytes copied (and as a multiple of the input), and the most a box holds together
 * with the next box's new blocks (double buffering) against the cap.
 * Then the schedule over pairs of parts in order y, x, z (bench/tri_pairs measured its joins
 * at the in-core rate, thirty-third session): x-part j held on the device as the TrieArray of
 * its out-edges and that of the same edges reversed (made there by a sort of its rows, copied
 * once), each y-part i >= j whose block E_ji holds rows streamed past it (its out-edges: the
 * count's tables) as rows or as TrieArrays; per n: the boxes, the bytes copied either way, and
 * the most the device holds either way (the x-part's sort: its rows twice beside its
 * TrieArray; then both TrieArrays and two streamed parts) against the cap. A TrieArray is
 * taken as 4 bytes a row and 8 a distinct first-column value.
 * Usage: tri_blocks [-s SCALE] [-c CAP_FRACTION] [-w out|in|both] [-n MAX_PARTS] */
#include "bench_graphs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PARTS 40

typedef struct {
    int blk[3][2];   /* (i, j), (i, k), (j, k) */
} box;

static void out_of_memory(void)
{
    fprintf(stderr, "tri_blocks: out of host memory\n");
    exit(3);
}

static bool holds(const box *b, int i, int j)
{
    for (int q = 0; q < 3; q++)
        if (b->blk[q][0] == i && b->blk[q][1] == j)
            return true;
    return false;
}

/* The bytes of b's distinct blocks (all, or only those `before` does not hold). */
static double box_bytes(const box *b, const box *before, double bytes[MAX_PARTS][MAX_PARTS])
{
    double s = 0;
    for (int q = 0; q < 3; q++) {
        bool again = false;
        for (int r = 0; r < q; r++)
            again |= b->blk[r][0] == b->blk[q][0] && b->blk[r][1] == b->blk[q][1];
        if (!again && !(before && holds(before, b->blk[q][0], b->blk[q][1])))
            s += bytes[b->blk[q][0]][b->blk[q][1]];
    }
    return s;
}

static int max_parts = 24, weight = 2;   /* 0 out, 1 in, 2 both */
static double cap = 0.25;

/* The pairs schedule of the n parts (see the top): blocks' bytes (8 a row), each x-part's
 * distinct x and distinct y. */
static void pairs_plan(int n, double bytes[MAX_PARTS][MAX_PARTS], const double *heads, const double *rheads,
                       double budget)
{
    double out[MAX_PARTS];   /* rows led by each part's x */
    for (int j = 0; j < n; j++) {
        out[j] = 0;
        for (int i = j; i < n; i++)
            out[j] += bytes[j][i] / 8;
    }
    double copied_rows = 0, copied_tries = 0, peak_rows = 0, peak_tries = 0;
    int boxes = 0;
    for (int j = 0; j < n; j++) {
        const double trie = 4 * out[j] + 8 * heads[j], rtrie = 4 * out[j] + 8 * rheads[j];
        double most_rows = 0, most_tries = 0;
        copied_rows += 8 * out[j];
        copied_tries += 8 * out[j];
        for (int i = j; i < n; i++)
            if (bytes[j][i] > 0) {
                const double as_rows = 8 * out[i], as_trie = 4 * out[i] + 8 * heads[i];
                boxes++;
                copied_rows += as_rows;
                copied_tries += as_trie;
                most_rows = fmax(most_rows, as_rows);
                most_tries = fmax(most_tries, as_trie);
            }
        const double sort = 16 * out[j] + trie, held = trie + rtrie;
        peak_rows = fmax(peak_rows, fmax(sort, held + 2 * most_rows));
        peak_tries = fmax(peak_tries, fmax(sort, held + 2 * most_tries));
    }
    printf("     pairs: boxes %4d copied %6.2f GB streamed as rows, %6.2f GB as TrieArrays; held at most %7.1f MB "
           "(%.2f of the cap) / %7.1f MB (%.2f)\n",
           boxes, copied_rows / 1e9, copied_tries / 1e9, peak_rows / 1e6, peak_rows / budget, peak_tries / 1e6,
           peak_tries / budget);
}

/* Per n: the boxes, what they copy and what they hold, for one graph's edges. */
static void plan(const char *name, const uint32_t *raw, size_t m)
{
    rfx_rows e;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!rfx_bench_oriented_set(raw, m, RFX_ORIENT_RANK, cores < 1 ? 1 : cores > 64 ? 64 : (int)cores, &e))
        out_of_memory();
    const size_t rows = e.n;
    const double input = (double)rows * 8, budget = cap * input;
    uint32_t top;
    size_t *out, *in;
    if (!rfx_bench_degrees(&e, &top, &out, &in))
        out_of_memory();
    uint32_t *seen = calloc((size_t)top + 1, sizeof(uint32_t));   /* the (n, x-part) that last held y */
    if (!seen)
        out_of_memory();
    printf("%s: %zu oriented rows, %.1f MB; cap %.0f%% = %.1f MB; parts of equal %s-edges\n", name, rows,
           input / 1e6, cap * 100, budget / 1e6, weight == 0 ? "out" : weight == 1 ? "in" : "in- and out");
    static double bytes[MAX_PARTS][MAX_PARTS];
    box *boxes = malloc(sizeof(box) * (size_t)MAX_PARTS * MAX_PARTS * MAX_PARTS);
    if (!boxes)
        out_of_memory();
    for (int n = 2; n <= max_parts; n++) {
        uint32_t cut[MAX_PARTS + 1];   /* part p holds ids [cut[p], cut[p + 1]) */
        rfx_bench_cuts(out, in, top, weight != 1, weight != 0, n, cut);
        memset(bytes, 0, sizeof bytes);
        double heads[MAX_PARTS] = {0}, rheads[MAX_PARTS] = {0};   /* distinct x, and distinct y, of each x-part's rows */
        int px = 0;
        for (size_t r = 0; r < rows; r++) {   /* rows sorted by x: its part only grows */
            while (e.data[2 * r] >= cut[px + 1])
                px++;
            int py = px;
            while (e.data[2 * r + 1] >= cut[py + 1])
                py++;
            bytes[px][py] += 8;
            heads[px] += r == 0 || e.data[2 * r] != e.data[2 * r - 2];
            rheads[px] += seen[e.data[2 * r + 1]] != (uint32_t)n * MAX_PARTS + (uint32_t)px + 1;
            seen[e.data[2 * r + 1]] = (uint32_t)n * MAX_PARTS + (uint32_t)px + 1;
        }
        int nb = 0;
        for (int i = 0; i < n; i++)
            for (int j = i; j < n; j++)
                for (int k = j; k < n; k++)
                    if (bytes[i][j] > 0 && bytes[i][k] > 0 && bytes[j][k] > 0)
                        boxes[nb++] = (box){{{i, j}, {i, k}, {j, k}}};
        double copied = 0, peak = 0, largest = 0;
        for (int b = 0; b < nb; b++) {
            copied += box_bytes(&boxes[b], b ? &boxes[b - 1] : NULL, bytes);
            double held = box_bytes(&boxes[b], NULL, bytes) +
                          (b + 1 < nb ? box_bytes(&boxes[b + 1], &boxes[b], bytes) : 0);
            peak = held > peak ? held : peak;
        }
        for (int i = 0; i < n; i++)
            for (int j = i; j < n; j++)
                largest = bytes[i][j] > largest ? bytes[i][j] : largest;
        printf("n=%2d boxes %5d copied %7.2f GB (%5.2fx the input) held at most %8.1f MB (%.2f of the cap), "
               "largest block %.1f MB\n",
               n, nb, copied / 1e9, copied / input, peak / 1e6, peak / budget, largest / 1e6);
        pairs_plan(n, bytes, heads, rheads, budget);
    }
    free(boxes);
    free(out);
    free(in);
    free(seen);
    rfx_rows_free(&e);
}

int main(int argc, char **argv)
{
    int scale = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-s"))
            scale = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-c"))
            cap = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "-n"))
            max_parts = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-w"))
            weight = !strcmp(argv[i + 1], "out") ? 0 : !strcmp(argv[i + 1], "in") ? 1 : 2;
    }
    if (scale < 8 || scale > 28 || cap <= 0 || max_parts < 2 || max_parts > MAX_PARTS || argc % 2 == 0) {
        fprintf(stderr, "usage: tri_blocks [-s SCALE 8-28] [-c CAP_FRACTION] [-w out|in|both] [-n MAX_PARTS 2-%d]\n",
                MAX_PARTS);
        return 2;
    }
    rfx_bench_each_graph(NULL, 0, &scale, 1, plan);
    return 0;
}
