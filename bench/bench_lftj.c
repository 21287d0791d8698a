/* bench_lftj.c: triangle counting and listing with the leapfrog triejoin, on the GPU and
 * the CPU, against the GPU binary-join plan, on R-MAT graphs made in memory and on edge
 * files. Prints one table row per graph:
 *   edges     input edge lines; und = undirected simple edges after orientation
 *   prep      GPU renaming by degree rank, sort + unique of the oriented edges (the
 *             relation the join reads); ren: the renaming's part of it, timed alone
 *   count     GPU LFTJ, count-only (last variable never materialised)
 *   list      GPU LFTJ, every triangle written
 *   cpu       CPU LFTJ count, all threads of the machine
 *   binary    GPU binary joins: wedges e(x,y) |x| e(y,z), then a semi-join with e(x,z)
 *   Medges/s  input edges / (prep + count), and und / count
 * Edges are oriented on the host before upload, from the lower-degree end to the higher
 * (ties by id; -o id: from the lower id), so each triangle is found once and hubs have
 * short out-lists; "orient ms" is that host time (not in the rates). By default (-o rank)
 * prep then renames every vertex on the GPU to its rank by (degree, id), as many GPU
 * triangle counters do before counting (rfx_gpu_rename_by_degree, timed in prep): the
 * same triangles, each out-list among those of like degree and holding only ids above its
 * vertex's, which lets the count skip the part of each probed list below the other's
 * first value. -o degree orients by degree and keeps the ids.
 * GPU times: CUDA events, after a warm-up, median of repeats; CPU: wall clock, median.
 * Usage: bench_lftj [-r REPEATS] [-o rank|degree|id] [-v xy|yx|auto] [-c] [-k4] [-s SCALE]... [-f EDGEFILE]...
 * (default: -s 20 -s 22 -s 24); -c: count only (no listing, binary plan or CPU run,
 * which take minutes on the largest graphs).
 * -v xy|yx|auto: the GPU join's variable order. xy binds x, then y from e(x,y), and counts
 * z by probing each N+(y) against N+(x) (one table per x): sum over edges of |N+(y)|
 * probes. yx binds y, then x from e reversed (sorted by y, made in prep), and probes each
 * N+(x) against N+(y): sum over x of |N+(x)|^2. auto (default) takes the smaller sum,
 * counted on the host from the oriented edges; column "ord" says which ran.
 * -k4: 4-cliques instead, on the GPU, two ways. The whole count-only program through
 * librfx (orientation, sort, join) with --join=lftj against --join=binary, wall ms of
 * rfx_run, median of repeats after a warm-up; RFX_BENCH_PROFILE=1 prints each run's
 * operator table (librfx's profile) on standard error, the last of each join method warm.
 * And the join alone, as the triangle rows measure it: the LFTJ count of the six atoms
 * against binary joins (wedges, a semi-join to triangles, a join for the fourth vertex,
 * two semi-joins) over the same oriented, sorted edges (-o applies), CUDA events. */
#include "cuda_prims.h"
#include "bench_engine.h"
#include "bench_graphs.h"
#include "lftj.h"
#include "rfx.h"
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static rfx_gpu *g;
static int reps = 3;
static int nthreads = 1;
static rfx_bench_orientation orientation = RFX_ORIENT_DEGREE;
static bool rename_by_rank = true;   /* -o rank: prep renames the vertices on the GPU */
static bool count_only;
static int var_order = -1;   /* -1 auto, 0 xy, 1 yx */

static const char *orientation_name(void)
{
    return rename_by_rank ? "lower degree to higher, vertices renamed to their degree ranks on the GPU (in prep)"
           : orientation == RFX_ORIENT_DEGREE ? "lower degree to higher (ties by id)"
                                              : "lower id to higher";
}

typedef struct job {
    int what;                  /* 0 prep, 1 count, 2 list, 3 binary, 4 4-clique count, 5 4-clique binary,
                                  6 the renaming alone (raw into out) */
    rfx_dev_rows *raw, *e, *out;
    uint64_t count;
    rfx_dev_rows *rev;         /* order yx: e as (y, x), sorted (made in prep); else NULL */
} job;

static const int tri_colvar[] = {0, 1, 1, 2, 0, 2};
/* order yx: er(y, x), e(y, z), e(x, z) with y = 0, x = 1, z = 2 */
static const int tri_colvar_yx[] = {0, 1, 0, 2, 1, 2};

static rfx_status triangles_binary(rfx_dev_rows *e, uint64_t *count)
{
    /* e(x,y) with e(y,z): e as (y,x) sorted, joined with e on its first column */
    rfx_rx c0 = {.kind = RFX_RX_COL, .col = 0}, c1 = {.kind = RFX_RX_COL, .col = 1}, c2 = {.kind = RFX_RX_COL, .col = 2},
           c3 = {.kind = RFX_RX_COL, .col = 3};
    rfx_rx *swap[] = {&c1, &c0};
    rfx_dev_rows yx, w, xz;
    rfx_gpu_rows_init(&yx, 2);
    rfx_gpu_rows_init(&w, 3);
    rfx_gpu_rows_init(&xz, 3);
    rfx_status st = rfx_gpu_mapfilter(g, e, NULL, swap, 2, &yx);
    if (st == RFX_OK)
        st = rfx_gpu_sort(g, &yx);
    rfx_rx *wedge[] = {&c1, &c3, &c0};   /* (x, z, y) from (y, x) ++ (y, z) */
    if (st == RFX_OK)
        st = rfx_gpu_join(g, &yx, e, 1, NULL, wedge, 3, &w);
    rfx_gpu_rows_free(g, &yx);
    if (st == RFX_OK)
        st = rfx_gpu_sort(g, &w);
    if (st == RFX_OK)
        st = rfx_gpu_semijoin(g, &w, e, 2, true, &xz);
    *count = xz.n;
    rfx_gpu_rows_free(g, &w);
    rfx_gpu_rows_free(g, &xz);
    (void)c2;
    return st;
}

/* 4-cliques (w, x, y, z), w < x < y < z in the orientation, as binary joins over e: the
 * triangles (w, y, x) of triangles_binary, then z from e(y, z), then semi-joins with
 * e(w, z) and e(x, z). Every row keeps all four vertices, so no two cliques collide. */
static rfx_status k4_binary(rfx_dev_rows *e, uint64_t *count)
{
    rfx_rx c[5];
    for (int i = 0; i < 5; i++)
        c[i] = (rfx_rx){.kind = RFX_RX_COL, .col = i};
    rfx_rx *swap[] = {&c[1], &c[0]}, *wedge[] = {&c[1], &c[3], &c[0]}, *by_y[] = {&c[1], &c[0], &c[2]},
           *extend[] = {&c[1], &c[4], &c[2], &c[0]},   /* (w, z, x, y) from (y, w, x) ++ (y, z) */
        *by_xz[] = {&c[2], &c[1], &c[0], &c[3]};       /* (x, z, w, y) from (w, z, x, y) */
    enum { XW, WEDGES, TRI, TRI_Y, EXT, WZ, XZ, K4, NSTEPS };
    static const int arity[NSTEPS] = {2, 3, 3, 3, 4, 4, 4, 4};
    rfx_dev_rows r[NSTEPS];
    for (int i = 0; i < NSTEPS; i++)
        rfx_gpu_rows_init(&r[i], arity[i]);
    /* each step reads the one before and frees it, so at most two are held */
    rfx_status st = rfx_gpu_mapfilter(g, e, NULL, swap, 2, &r[XW]);
    if (st == RFX_OK && (st = rfx_gpu_sort(g, &r[XW])) == RFX_OK)
        st = rfx_gpu_join(g, &r[XW], e, 1, NULL, wedge, 3, &r[WEDGES]);      /* (w, y, x) */
    rfx_gpu_rows_free(g, &r[XW]);
    if (st == RFX_OK && (st = rfx_gpu_sort(g, &r[WEDGES])) == RFX_OK)
        st = rfx_gpu_semijoin(g, &r[WEDGES], e, 2, true, &r[TRI]);           /* with e(w, y) */
    rfx_gpu_rows_free(g, &r[WEDGES]);
    if (st == RFX_OK)
        st = rfx_gpu_mapfilter(g, &r[TRI], NULL, by_y, 3, &r[TRI_Y]);       /* (y, w, x) */
    rfx_gpu_rows_free(g, &r[TRI]);
    if (st == RFX_OK && (st = rfx_gpu_sort(g, &r[TRI_Y])) == RFX_OK)
        st = rfx_gpu_join(g, &r[TRI_Y], e, 1, NULL, extend, 4, &r[EXT]);    /* z from e(y, z) */
    rfx_gpu_rows_free(g, &r[TRI_Y]);
    if (st == RFX_OK && (st = rfx_gpu_sort(g, &r[EXT])) == RFX_OK)
        st = rfx_gpu_semijoin(g, &r[EXT], e, 2, true, &r[WZ]);              /* with e(w, z) */
    rfx_gpu_rows_free(g, &r[EXT]);
    if (st == RFX_OK)
        st = rfx_gpu_mapfilter(g, &r[WZ], NULL, by_xz, 4, &r[XZ]);
    rfx_gpu_rows_free(g, &r[WZ]);
    if (st == RFX_OK && (st = rfx_gpu_sort(g, &r[XZ])) == RFX_OK)
        st = rfx_gpu_semijoin(g, &r[XZ], e, 2, true, &r[K4]);               /* with e(x, z) */
    *count = r[K4].n;
    for (int i = 0; i < NSTEPS; i++)
        rfx_gpu_rows_free(g, &r[i]);
    return st;
}

/* e(w, x), e(w, y), e(w, z), e(x, y), e(x, z), e(y, z) with w = 0, x = 1, y = 2, z = 3 */
static const int k4_colvar[] = {0, 1, 0, 2, 0, 3, 1, 2, 1, 3, 2, 3};

static rfx_status run(void *arg)
{
    job *j = arg;
    const rfx_dev_rows *srcs[3] = {j->rev ? j->rev : j->e, j->e, j->e};
    const int *cv = j->rev ? tri_colvar_yx : tri_colvar;
    switch (j->what) {
    case 0: {
        const rfx_dev_rows *src = j->raw;
        if (rename_by_rank) {   /* into out, then sorted in place */
            rfx_status st = rfx_gpu_rename_by_degree(g, j->raw, j->out);
            if (st != RFX_OK)
                return st;
            src = j->out;
        }
        return j->rev ? rfx_gpu_sort_unique_reversed(g, src, j->out, j->rev) : rfx_gpu_sort_unique_into(g, src, 0, NULL, j->out);
    }
    case 1:
        return rfx_gpu_lftj(g, srcs, cv, 3, 3, NULL, &j->count);
    case 2: {
        rfx_status st = rfx_gpu_lftj(g, srcs, cv, 3, 3, j->out, NULL);
        j->count = j->out->n;
        return st;
    }
    case 3:
        return triangles_binary(j->e, &j->count);
    case 4: {
        const rfx_dev_rows *k4s[6] = {j->e, j->e, j->e, j->e, j->e, j->e};
        return rfx_gpu_lftj(g, k4s, k4_colvar, 6, 4, NULL, &j->count);
    }
    case 5:
        return k4_binary(j->e, &j->count);
    default:
        return rfx_gpu_rename_by_degree(g, j->raw, j->out);
    }
}

/* Median GPU milliseconds of job j (after a warm-up); -1 on failure (st says why). */
static double gpu_ms(job *j, rfx_status *st)
{
    return rfx_bench_gpu_ms(g, run, j, reps, st);
}

/* Orients raw edges into rows (self-loops dropped): from the lower-degree end (degrees
 * of the multigraph; ties and -o id by id). Returns host milliseconds. */
static void bench(const char *name, rfx_rows *oriented, size_t m_input, double orient_ms)
{
    rfx_dev_rows raw, e, out, rev;
    rfx_gpu_rows_init(&raw, 2);
    rfx_gpu_rows_init(&e, 2);
    rfx_gpu_rows_init(&out, 3);
    rfx_gpu_rows_init(&rev, 2);
    double cost_xy = 0, cost_yx = 0, least;   /* unknown (no memory): order xy */
    rfx_bench_probe_sums(oriented, &cost_xy, &cost_yx, &least);
    bool yx = var_order == 1 || (var_order < 0 && cost_yx < cost_xy);
    rfx_dev_rows *revp = yx ? &rev : NULL;
    rfx_status st = rfx_gpu_upload(g, oriented, &raw);
    if (st) {
        printf("%-22s upload failed: %s\n", name, rfx_gpu_error(g));
        return;
    }
    double renaming = -1;   /* the part of prep that renames the vertices */
    if (rename_by_rank) {
        job jr = {6, &raw, NULL, &e, 0, NULL};
        renaming = gpu_ms(&jr, &st);
        rfx_gpu_rows_free(g, &e);
        rfx_gpu_rows_init(&e, 2);
    }
    job jp = {0, &raw, NULL, &e, 0, revp};
    double prep = st == RFX_OK ? gpu_ms(&jp, &st) : -1;
    rfx_gpu_rows_free(g, &raw);
    if (st) {
        printf("%-22s prep failed: %s\n", name, rfx_gpu_error(g));
        return;
    }
    size_t und = e.n;
    job jc = {1, NULL, &e, NULL, 0, revp}, jl = {2, NULL, &e, &out, 0, revp}, jb = {3, NULL, &e, NULL, 0, NULL};
    double count = gpu_ms(&jc, &st);
    rfx_status stc = st;
    double list = -1;
    rfx_status stl = RFX_OK;
    if (!count_only) {
        list = gpu_ms(&jl, &st);
        stl = st;
    }
    if (stl != RFX_OK && stl != RFX_ERR_NOMEM)
        fprintf(stderr, "%s: listing failed: %s\n", name, rfx_gpu_error(g));
    size_t listed = out.n;
    rfx_gpu_rows_free(g, &out);
    double binary = -1;
    rfx_status stb = RFX_OK;
    if (!count_only) {
        binary = gpu_ms(&jb, &st);
        stb = st;
    }
    if (stb != RFX_OK && stb != RFX_ERR_NOMEM)
        fprintf(stderr, "%s: binary-join plan failed: %s\n", name, rfx_gpu_error(g));
    /* CPU LFTJ over the same relation (sorted, unique) on all threads */
    rfx_rows host;
    rfx_rows_init(&host, 2);
    double cpu = -1;
    uint64_t cpu_count = jc.count;
    if (!count_only && rfx_gpu_download(g, &e, &host) == RFX_OK) {
        rfx_lftj_src s[3] = {{&host, tri_colvar, NULL}, {&host, tri_colvar + 2, NULL}, {&host, tri_colvar + 4, NULL}};
        double t[16];
        int n = reps < 3 ? reps : 3;
        if (host.n > 10000000)
            n = 1;      /* minutes each on the biggest graphs */
        for (int r = 0; r < n; r++) {
            double t0 = rfx_seconds();
            rfx_cpu_lftj(s, 3, 3, NULL, &cpu_count, nthreads);
            t[r] = (rfx_seconds() - t0) * 1e3;
        }
        cpu = rfx_bench_median(t, n);
    }
    rfx_rows_free(&host);
    rfx_gpu_rows_free(g, &e);
    rfx_gpu_rows_free(g, &rev);
    /* columns of runs left out (-c) read "-" */
    char ls[32] = "-", cs[32] = "-", bin[32] = "-", vb[32] = "-", vc[32] = "-", ren[32] = "-";
    if (renaming >= 0)
        snprintf(ren, sizeof ren, "%.2f", renaming);
    if (!count_only) {
        snprintf(ls, sizeof ls, "%.2f", list);
        snprintf(cs, sizeof cs, "%.2f", cpu);
        snprintf(vc, sizeof vc, "%.1fx", cpu / count);
        if (stb == RFX_OK) {
            snprintf(bin, sizeof bin, "%.2f", binary);
            snprintf(vb, sizeof vb, "%.1fx", binary / count);
        } else
            snprintf(bin, sizeof bin, "%s", stb == RFX_ERR_NOMEM ? "no memory" : "failed");
    }
    /* listing may run out of memory (10^10 triangles do not fit); the rest must agree */
    bool agree = stc == RFX_OK && (count_only || stl == RFX_ERR_NOMEM || (stl == RFX_OK && jc.count == listed)) &&
                 jc.count == cpu_count && (stb != RFX_OK || count_only || jb.count == jc.count);
    printf("%-22s %12zu %12zu %14llu %9.1f %3s %8.2f %7s %8.2f %8s %9s %10s %9.1f %9.1f %7s %7s %s\n", name, m_input,
           und, (unsigned long long)jc.count, orient_ms, yx ? "yx" : "xy", prep, ren, count, ls, cs, bin,
           m_input / ((prep + count) * 1e-3) * 1e-6, und / (count * 1e-3) * 1e-6, vb, vc, agree ? "" : "DISAGREE");
    fflush(stdout);
}

/* Runs fn on each edge file (SNAP edge list, read by rfx's reader) and each R-MAT graph
 * of the given scales (edge factor 16, seed 1), made in memory. */
/* Triangles of raw edges: oriented on the host, then measured. */
static void bench_triangles(const char *name, const uint32_t *edges, size_t m)
{
    rfx_rows o;
    double ms = rfx_bench_orient(edges, m, orientation, &o);
    bench(name, &o, m, ms);
    rfx_rows_free(&o);
}

static const char *k4_program =
    ".decl edge(x: number, y: number)\n"
    ".decl e(x: number, y: number)\n"
    "e(x, y) :- edge(x, y), x < y.\n"
    "e(y, x) :- edge(x, y), y < x.\n"
    ".decl k4(w: number, x: number, y: number, z: number)\n"
    "k4(w, x, y, z) :- e(w, x), e(w, y), e(w, z), e(x, y), e(x, z), e(y, z).\n"
    ".printsize k4\n";

/* Median wall ms of rfx_run for the 4-clique program with one join method; -1 on failure
 * (why says what failed). */
static double k4_run(const uint32_t *edges, size_t m, rfx_join_kind join, size_t *count, char *why, size_t whycap)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.backend = RFX_BACKEND_CUDA;
    cfg.join = join;
    if (getenv("RFX_BENCH_PROFILE"))   /* a table per run on stderr: the last one is warm */
        cfg.profile = stderr;
    rfx_engine *e = rfx_open(&cfg);
    bool ready = e && rfx_load_string(e, k4_program, "k4.dl") == RFX_EXIT_OK &&
                 rfx_insert_numbers(e, "edge", (const int32_t *)edges, m) == RFX_EXIT_OK;
    double ms = rfx_bench_engine_ms(e, ready, reps, "k4", count, NULL, why, whycap);
    rfx_close(e);
    return ms;
}

/* The join alone, as the triangle rows measure it: edges oriented on the host, sorted and
 * made unique on the device, then the 4-clique count by LFTJ (k4 lftj) and by binary joins
 * (k4_binary) over that relation, CUDA events, median of repeats. Returns the LFTJ count
 * and the binary plan's in *bin_count; ms -1 where a method failed. */
static uint64_t k4_joins(const uint32_t *edges, size_t m, double *lftj_ms, double *bin_ms, uint64_t *bin_count)
{
    *lftj_ms = *bin_ms = -1;
    *bin_count = 0;
    char err[256];
    g = rfx_gpu_open(0, 0, err, sizeof err);
    if (!g) {
        fprintf(stderr, "bench_lftj: no GPU: %s\n", err);
        return 0;
    }
    rfx_rows o;
    rfx_bench_orient(edges, m, orientation, &o);
    rfx_dev_rows raw, e;
    rfx_gpu_rows_init(&raw, 2);
    rfx_gpu_rows_init(&e, 2);
    rfx_status st = rfx_gpu_upload(g, &o, &raw);
    rfx_rows_free(&o);
    job jp = {0, &raw, NULL, &e, 0, NULL}, jl = {4, NULL, &e, NULL, 0, NULL}, jb = {5, NULL, &e, NULL, 0, NULL};
    if (st == RFX_OK)
        st = run(&jp);   /* the relation both joins read: made once, not timed */
    rfx_gpu_rows_free(g, &raw);
    if (st == RFX_OK) {
        *lftj_ms = gpu_ms(&jl, &st);
        if (st != RFX_OK)
            fprintf(stderr, "4-clique LFTJ failed: %s\n", rfx_gpu_error(g));
        *bin_ms = gpu_ms(&jb, &st);
        if (st != RFX_OK && st != RFX_ERR_NOMEM)
            fprintf(stderr, "4-clique binary joins failed: %s\n", rfx_gpu_error(g));
    } else
        fprintf(stderr, "4-clique relation failed: %s\n", rfx_gpu_error(g));
    *bin_count = jb.count;
    rfx_gpu_rows_free(g, &e);
    rfx_gpu_close(g);
    g = NULL;
    return jl.count;
}

static void bench_k4(const char *name, const uint32_t *edges, size_t m)
{
    size_t nl = 0, nb = 0;
    char wl[200] = "", wb[200] = "";
    double l = k4_run(edges, m, RFX_JOIN_LFTJ, &nl, wl, sizeof wl);
    double b = k4_run(edges, m, RFX_JOIN_BINARY, &nb, wb, sizeof wb);
    double jl, jb;
    uint64_t jnb;
    uint64_t jn = k4_joins(edges, m, &jl, &jb, &jnb);
    char ls[32] = "failed", bs[32] = "no memory", vs[32] = "-", jls[32] = "failed", jbs[32] = "no memory", jvs[32] = "-";
    if (l >= 0)
        snprintf(ls, sizeof ls, "%.2f", l);
    if (b >= 0)
        snprintf(bs, sizeof bs, "%.2f", b);
    else if (!strstr(wb, "memory"))
        snprintf(bs, sizeof bs, "failed");
    if (l > 0 && b >= 0)
        snprintf(vs, sizeof vs, "%.1fx", b / l);
    if (jl >= 0)
        snprintf(jls, sizeof jls, "%.3f", jl);
    if (jb >= 0)
        snprintf(jbs, sizeof jbs, "%.3f", jb);
    if (jl > 0 && jb >= 0)
        snprintf(jvs, sizeof jvs, "%.1fx", jb / jl);
    /* every count that ran must be the same */
    uint64_t want = l >= 0 ? nl : b >= 0 ? nb : jl >= 0 ? jn : jnb;
    bool agree = (l < 0 || nl == want) && (b < 0 || nb == want) && (jl < 0 || jn == want) && (jb < 0 || jnb == want);
    printf("%-26s %10zu %12llu %9s %10s %8s %9s %10s %8s", name, m, (unsigned long long)want, ls, bs, vs, jls, jbs, jvs);
    if (!agree)
        printf(" DISAGREE: program lftj %zu, binary %zu; join lftj %llu, binary %llu", nl, nb, (unsigned long long)jn,
               (unsigned long long)jnb);
    printf("\n");
    if (l < 0)
        printf("    lftj program failed: %s\n", wl);
    if (b < 0)
        printf("    binary program: %s\n", wb);
    fflush(stdout);
}

static int main_k4(const char **files, int nfiles, const int *scales, int nscales)
{
    printf("4-cliques on the GPU, median of %d after a warm-up. program: the count-only program through\n"
           "librfx (orientation by id, sort, join; wall ms of rfx_run, an engine per method). join: the\n"
           "count alone over the oriented, sorted edges (%s), CUDA events.\n",
           reps, orientation_name());
    printf("%-26s %10s %12s %9s %10s %8s %9s %10s %8s\n", "graph", "edges", "4-cliques", "prog lftj", "prog bin",
           "speed-up", "join lftj", "join bin", "speed-up");
    rfx_bench_each_graph(files, nfiles, scales, nscales, bench_k4);
    return 0;
}

int main(int argc, char **argv)
{
    int scales[16], nscales = 0;
    const char *files[16];
    int nfiles = 0;
    bool k4 = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc && nscales < 16)
            scales[nscales++] = atoi(argv[++i]);
        else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc && nfiles < 16)
            files[nfiles++] = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc &&
                 (strcmp(argv[i + 1], "id") == 0 || strcmp(argv[i + 1], "degree") == 0 ||
                  strcmp(argv[i + 1], "rank") == 0)) {
            i++;
            orientation = strcmp(argv[i], "id") == 0 ? RFX_ORIENT_ID : RFX_ORIENT_DEGREE;
            rename_by_rank = strcmp(argv[i], "rank") == 0;
        }
        else if (strcmp(argv[i], "-k4") == 0)
            k4 = true;
        else if (strcmp(argv[i], "-c") == 0)
            count_only = true;
        else if (strcmp(argv[i], "-v") == 0 && i + 1 < argc && (strcmp(argv[i + 1], "xy") == 0 ||
                                                                  strcmp(argv[i + 1], "yx") == 0 ||
                                                                  strcmp(argv[i + 1], "auto") == 0)) {
            i++;
            var_order = strcmp(argv[i], "xy") == 0 ? 0 : strcmp(argv[i], "yx") == 0 ? 1 : -1;
        }
        else {
            fprintf(stderr, "usage: bench_lftj [-r REPEATS] [-o rank|degree|id] [-v xy|yx|auto] [-c] [-k4] [-s SCALE]... "
                            "[-f EDGEFILE]...\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 15)
        reps = 3;
    if (!nscales && !nfiles) {
        scales[nscales++] = 20;
        scales[nscales++] = 22;
        scales[nscales++] = 24;
    }
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    nthreads = nc > 0 ? (int)(nc > 256 ? 256 : nc) : 1;
    if (k4)   /* engines open their own contexts: none held here */
        return main_k4(files, nfiles, scales, nscales);
    char err[256];
    g = rfx_gpu_open(0, 0, err, sizeof err);
    if (!g) {
        fprintf(stderr, "bench_lftj: no GPU: %s\n", err);
        return 1;
    }
    printf("device: %s; CPU: %d threads; median of %d\n", rfx_gpu_name(g), nthreads, reps);
    printf("orientation: %s\n", orientation_name());
    printf("%-22s %12s %12s %14s %9s %3s %8s %7s %8s %8s %9s %10s %9s %9s %7s %7s\n", "graph", "edges", "und",
           "triangles", "orient ms", "ord", "prep ms", "ren ms", "count ms", "list ms", "cpu ms", "binary ms", "Medges/s", "und Me/s", "vs bin", "vs cpu");
    rfx_bench_each_graph(files, nfiles, scales, nscales, bench_triangles);
    rfx_gpu_close(g);
    return 0;
}
