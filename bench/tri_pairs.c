/* tri_pairs.c: the triangle count of an R-MAT graph as joins of vertex-part pairs, all
 * resident on the GPU: what the join side of an out-of-core schedule over (part, part)
 * boxes costs against the in-core count (a planning tool for the 70%-at-a-25%-cap figure of
 * the out-of-core issue, docs/PERFORMANCE.md, thirty-third session).
 *
 * The edges are bench_ooc's (R-MAT, edge factor 16, seed 1, renamed by degree rank,
 * oriented from the lower rank, a set), uploaded once. The in-core count is rfx_gpu_lftj
 * over e(x,y), e(y,z), e(x,z). For n parts (consecutive vertex ids of equal out-edges, cut
 * at values), box (i, j), i <= j, is the same join over e(x,y) and e(x,z) cut to part i and
 * e(y,z) cut to part j: the triangles with x in part i and y in part j. -o yx: the variable
 * order y, x, z (the planner's choice on R-MAT), e reversed leading: box (i, j) is y in
 * part i, x in part j <= i, over e reversed and e(y,z) cut to part i and e(x,z) cut to part
 * j, parts of equal in- plus out-edges.
 * Per n: the boxes (all their slices non-empty), the most a box's slices hold as rows, the
 * boxes' total time with each call building its TrieArrays (CUDA events around all of
 * them, median of repeats), then every part's TrieArrays built once (MB, ms) and the boxes
 * joining them as given (rfx_gpu_lftj_tries), each as a fraction of the in-core time. Every
 * sum must equal the in-core count ("ok").
 * Usage: tri_pairs [-s SCALE] [-r REPEATS] [-n PARTS]... [-o xy|yx] (defaults -s 24 -n 4 -n 8) */
#include "bench_engine.h"
#include "bench_graphs.h"
#include "lftj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int tri_colvar[] = {0, 1, 1, 2, 0, 2}, tri_colvar_yx[] = {0, 1, 0, 2, 1, 2};
static int reps = 3, nparts[16] = {4, 8}, nn = 2;
static bool yx;   /* -o yx: variable order y, x, z over the reversed edges (the planner's R-MAT choice) */
static rfx_gpu *g;

typedef struct pairs_job {
    const rfx_dev_rows *e, *rev;
    int n;
    size_t lo[65], rlo[65];   /* part k: rows lo[k] .. lo[k + 1] - 1 of e, rlo[k] .. of rev */
    rfx_dev_trie *te, *tr;    /* with tries: each part's TrieArray of e and of rev, built before */
    uint64_t count;
} pairs_job;

static rfx_status run_whole(void *arg)
{
    pairs_job *j = arg;
    const rfx_dev_rows *s[3] = {yx ? j->rev : j->e, j->e, j->e};
    return rfx_gpu_lftj(g, s, yx ? tri_colvar_yx : tri_colvar, 3, 3, NULL, &j->count);
}

static rfx_dev_rows part(const rfx_dev_rows *r, const size_t *lo, int k)
{
    rfx_dev_rows p = {r->data + 2 * lo[k], lo[k + 1] - lo[k], lo[k + 1] - lo[k], 2};
    return p;
}

/* xy: box (a, b) x in part a, y in part b >= a; yx: y in part a, x in part b <= a */
static rfx_status run_pairs(void *arg)
{
    pairs_job *j = arg;
    j->count = 0;
    for (int a = 0; a < j->n; a++)
        for (int b = yx ? 0 : a; b < (yx ? a + 1 : j->n); b++) {
            rfx_dev_rows pa = part(j->e, j->lo, a), pb = part(j->e, j->lo, b), ra = yx ? part(j->rev, j->rlo, a) : pa;
            if (!pa.n || !pb.n || !ra.n)
                continue;
            const rfx_dev_rows *s[3] = {&ra, yx ? &pa : &pb, yx ? &pb : &pa};
            const int *cv = yx ? tri_colvar_yx : tri_colvar;
            uint64_t c = 0;
            rfx_status st;
            if (j->te) {
                const rfx_dev_trie *t[3] = {yx ? &j->tr[a] : &j->te[a], yx ? &j->te[a] : &j->te[b],
                                            yx ? &j->te[b] : &j->te[a]};
                st = rfx_gpu_lftj_tries(g, s, t, cv, 3, 3, NULL, &c);
            } else
                st = rfx_gpu_lftj(g, s, cv, 3, 3, NULL, &c);
            if (st != RFX_OK)
                return st;
            j->count += c;
        }
    return RFX_OK;
}


static void bench(const char *name, const uint32_t *raw, size_t m)
{
    rfx_rows h;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!rfx_bench_oriented_set(raw, m, RFX_ORIENT_RANK, cores < 1 ? 1 : cores > 64 ? 64 : (int)cores, &h)) {
        fprintf(stderr, "tri_pairs: out of host memory\n");
        exit(3);
    }
    rfx_dev_rows e, rev;
    rfx_gpu_rows_init(&e, 2);
    rfx_gpu_rows_init(&rev, 2);
    rfx_status st = rfx_gpu_upload(g, &h, &e);
    if (st == RFX_OK && yx)
        st = rfx_gpu_reversed(g, &e, &rev);
    pairs_job whole = {&e, &rev, 1, {0, e.n}, {0, e.n}, NULL, NULL, 0};
    double in_core = st == RFX_OK ? rfx_bench_gpu_ms(g, run_whole, &whole, reps, &st) : -1;
    printf("%s: %zu rows (%.1f MB); order %s; in core %.2f ms, %llu triangles\n", name, e.n, e.n * 8e-6,
           yx ? "y, x, z" : "x, y, z", in_core, (unsigned long long)whole.count);
    /* per vertex: rows led by it in e (out) and in rev (in); parts of equal weight (out for xy, both for yx) */
    uint32_t top;
    size_t *out, *in;
    if (!rfx_bench_degrees(&h, &top, &out, &in)) {
        fprintf(stderr, "tri_pairs: out of host memory\n");
        exit(3);
    }
    printf("%6s %6s %12s %10s %10s %12s %10s %10s %8s\n", "parts", "boxes", "box MB", "pairs ms", "of in-core",
           "tries MB", "build ms", "given ms", "of in-core");
    for (int q = 0; q < nn && st == RFX_OK; q++) {
        pairs_job j = {&e, &rev, nparts[q], {0}, {0}, NULL, NULL, 0};
        uint32_t cut[65];
        rfx_bench_cuts(out, in, top, true, yx, j.n, cut);
        for (int k = 1, v = 0; k <= j.n; k++) {   /* rows before cut[k]: out-edges in e, in-edges in rev */
            j.lo[k] = j.lo[k - 1];
            j.rlo[k] = j.rlo[k - 1];
            for (; (uint32_t)v < cut[k]; v++) {
                j.lo[k] += out[v];
                j.rlo[k] += in[v];
            }
        }
        size_t most = 0, boxes = 0;
        for (int a = 0; a < j.n; a++)
            for (int b = yx ? 0 : a; b < (yx ? a + 1 : j.n); b++) {
                size_t pa = j.lo[a + 1] - j.lo[a], pb = j.lo[b + 1] - j.lo[b], ra = j.rlo[a + 1] - j.rlo[a];
                size_t held = pa + (a == b ? 0 : pb) + (yx ? ra : 0);
                most = held > most ? held : most;
                boxes += pa && pb && (!yx || ra);
            }
        double ms = rfx_bench_gpu_ms(g, run_pairs, &j, reps, &st);
        bool ok = j.count == whole.count;
        /* each part's TrieArrays built once (timed apart), then the boxes join them as given */
        rfx_dev_trie te[64], tr[64];
        memset(te, 0, sizeof te);
        memset(tr, 0, sizeof tr);
        double t0 = rfx_seconds(), trie_mb = 0;
        for (int k = 0; k < j.n && st == RFX_OK; k++) {
            rfx_dev_rows pe = part(&e, j.lo, k), pr = yx ? part(&rev, j.rlo, k) : pe;
            if (pe.n)
                st = rfx_gpu_trie_build(g, &pe, &te[k]);
            if (st == RFX_OK && yx && pr.n)
                st = rfx_gpu_trie_build(g, &pr, &tr[k]);
            trie_mb += (te[k].n[0] * 2 + te[k].n[1] + tr[k].n[0] * 2 + tr[k].n[1]) * 4e-6;
        }
        if (st == RFX_OK)
            st = rfx_gpu_sync(g);
        double build = (rfx_seconds() - t0) * 1e3, given = -1;
        if (st == RFX_OK) {
            j.te = te;
            j.tr = tr;
            given = rfx_bench_gpu_ms(g, run_pairs, &j, reps, &st);
            ok &= j.count == whole.count;
        }
        for (int k = 0; k < j.n; k++) {
            rfx_gpu_trie_free(g, &te[k]);
            rfx_gpu_trie_free(g, &tr[k]);
        }
        if (st != RFX_OK)
            break;
        printf("%6d %6zu %12.1f %10.2f %9.0f%% %12.1f %10.2f %10.2f %9.0f%% %s\n", j.n, boxes, most * 8e-6, ms,
               100 * in_core / ms, trie_mb, build, given, 100 * in_core / given, ok ? "ok" : "WRONG");
    }
    free(out);
    free(in);
    if (st != RFX_OK)
        printf("failed: %s\n", rfx_gpu_error(g));
    rfx_gpu_rows_free(g, &e);
    rfx_gpu_rows_free(g, &rev);
    rfx_rows_free(&h);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int scale = 24, opt, given = 0;
    while ((opt = getopt(argc, argv, "s:r:n:o:")) != -1) {
        if (opt == 'o')
            yx = strcmp(optarg, "yx") == 0;
        else if (opt == 's')
            scale = atoi(optarg);
        else if (opt == 'r')
            reps = atoi(optarg) < 1 ? 1 : atoi(optarg) > 32 ? 32 : atoi(optarg);
        else if (opt == 'n' && given < 16 && atoi(optarg) >= 1 && atoi(optarg) <= 64)
            nparts[given++] = atoi(optarg);
        else {
            fprintf(stderr, "usage: tri_pairs [-s SCALE] [-r REPEATS] [-n PARTS]... [-o xy|yx]\n");
            return 2;
        }
    }
    nn = given ? given : nn;
    char err[256];
    g = rfx_gpu_open(0, 0, err, sizeof err);
    if (!g) {
        fprintf(stderr, "tri_pairs: no GPU: %s\n", err);
        return 1;
    }
    rfx_bench_each_graph(NULL, 0, &scale, 1, bench);
    rfx_gpu_close(g);
    return 0;
}
