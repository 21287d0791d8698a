/* test_weaver.c: the kernel weaver. The groups it forms for the thesis's fusion patterns;
 * fused and unfused runs agree on random inputs (CPU backend, and the CUDA backend with
 * generated kernels when a device is present); every group's generated source compiles
 * with NVRTC, and a second compile comes from the disk cache (bench/bench_weaver times
 * both). */
#include "harness.h"
#include "backend.h"
#include "weaver.h"
#ifdef RFX_HAVE_CUDA
#include "jit.h"
#endif

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct prog_case {
    const char *name, *src;
    size_t big;                /* largest input size tried (0: 3000 rows) */
} prog_case;

/* The five patterns of thesis §4.4.1 (Figure 24) and the shapes around them. */
/* The tuning of the runs (rfx_run_opts.tune): generated kernels for groups of any size. */
static rfx_tuning tuning;

static const prog_case programs[] = {
    {"a: selects and a project",
     ".decl r(a:number, b:number, c:number)\n.decl o(a:number, c:number)\n.input r\n"
     "o(a, c) :- r(a, b, c), a < 40, b > 12.\n.output o\n", 0},
    {"b: a chain of joins",
     ".decl a(x:number, y:number)\n.decl b(x:number, y:number)\n.decl c(x:number, y:number)\n"
     ".decl o(x:number, y:number, z:number, w:number)\n.input a\n.input b\n.input c\n"
     "o(x, y, z, w) :- a(x, y), b(x, z), c(x, w).\n.output o\n", 0},
    {"c: a join of three selected relations",
     ".decl a(x:number, y:number)\n.decl b(x:number, y:number)\n.decl c(x:number, y:number)\n"
     ".decl o(x:number, y:number, z:number, w:number)\n.input a\n.input b\n.input c\n"
     "o(x, y, z, w) :- a(x, y), b(x, z), c(x, w), y < 30, z < 50, w > 10.\n.output o\n", 0},
    {"d: several selects over one input",
     ".decl r(a:number, b:number)\n.decl o1(a:number, b:number)\n.decl o2(b:number)\n.decl o3(a:number, b:number)\n"
     ".input r\no1(a, b) :- r(a, b), a < 20.\no2(b) :- r(a, b), b > 40.\no3(b, a) :- r(a, b), a + b > 60.\n"
     ".output o1\n.output o2\n.output o3\n", 0},
    {"e: arithmetic",
     ".decl item(id:number, price:float, discount:float, tax:float)\n.decl o(id:number, v:float)\n.input item\n"
     "o(i, p * (1.0 - d) * (1.0 + t)) :- item(i, p, d, t).\n.output o\n", 0},
    {"division guarded by a filter",
     ".decl a(x:number, y:number)\n.decl b(x:number, y:number)\n.decl o(x:number, v:number)\n.input a\n.input b\n"
     "o(x, 1000 / (y - 7)) :- a(x, y), b(x, z), y != 7, z % 3 = 1.\n.output o\n", 0},
    {"recursion with a filtered join",
     ".decl e(x:number, y:number)\n.decl p(x:number, y:number)\n.input e\n"
     "p(x, y) :- e(x, y), x < 60.\np(x, z) :- p(x, y), e(y, z), z > 3.\n.output p\n", 0},
    {"unsigned and negatives",
     ".decl r(a:unsigned, b:number)\n.decl o(a:unsigned, b:number)\n.input r\n"
     "o(a * 3 + a / 7, -b) :- r(a, b), b - 5 < 0, a > 2.\n.output o\n", 0},
    /* more conjunctions than a JOIN group holds: the selection stays a group of its own */
    {"many filters",
     ".decl a(x:number, y:number)\n.decl b(x:number, z:number)\n.decl o(x:number, y:number)\n.input a\n.input b\n"
     "o(x, y) :- a(x, y), b(x, z), y != 1, y != 2, y != 3, y != 4, y != 5, y != 6, y != 7, y != 8, y != 9, y != 10, y != 11, y != 12, y != 13, y != 14, y != 15, y != 16, y != 17, y != 18, y != 19, y != 20, y != 21, y != 22, y != 23, y != 24, y != 25, y != 26, y != 27, y != 28, y != 29, y != 30, y != 31, y != 32, y != 33, y != 34, y != 35, y != 36, y != 37, y != 38, y != 39, y != 40, y != 41, y != 42, y != 43, y != 44, y != 45, y != 46, y != 47, y != 48, y != 49, y != 50, y != 51, y != 52, y != 53, y != 54, y != 55, y != 56, y != 57, y != 58, y != 59, y != 60, y != 61, y != 62, y != 63, y != 64, y != 65, y != 66, y != 67, y != 68, y != 69, y != 70.\n.output o\n", 0},
    /* rows wider than a shared-memory tile */
    {"wide rows",
     ".decl w(c0:number, c1:number, c2:number, c3:number, c4:number, c5:number, c6:number, c7:number, c8:number, c9:number, c10:number, c11:number, c12:number, c13:number, c14:number, c15:number, c16:number, c17:number, c18:number, c19:number, c20:number, c21:number, c22:number, c23:number, c24:number, c25:number, c26:number, c27:number, c28:number, c29:number, c30:number, c31:number, c32:number, c33:number, c34:number, c35:number, c36:number, c37:number, c38:number, c39:number)\n.decl o(a:number, b:number)\n.decl j(a:number, b:number)\n.input w\n"
     "o(c0, c39 + c20) :- w(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30, c31, c32, c33, c34, c35, c36, c37, c38, c39), c5 < c7.\n"
     "j(c0, c1) :- w(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28, c29, c30, c31, c32, c33, c34, c35, c36, c37, c38, c39), w(c0, c1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14, d15, d16, d17, d18, d19, d20, d21, d22, d23, d24, d25, d26, d27, d28, d29, d30, d31, d32, d33, d34, d35, d36, d37, d38, d39), c3 > 50.\n.output o\n.output j\n", 0},
    /* 64-bit kinds, decimals and dates: generated with rx_ops.h's functions, fallible
     * arithmetic (a decimal's, past 64 bits) kept behind the filters that guard it */
    {"64-bit values",
     ".decl li(k:number64, q:decimal(15,2), p:decimal(15,2), d:decimal(15,2), sd:date, f:float64, u:unsigned64)\n"
     ".decl ps(k:number64, x:decimal(15,2))\n.input li\n.input ps\n"
     ".decl o(k:number64, v:decimal(18,4), y:number, g:float64, w:unsigned64, e:date)\n"
     ".decl o2(k:number64, m:number, h:number)\n.decl j(k:number64, v:decimal(18,4), r:float64)\n"
     "o(k * 3 - 7, p * (1 - d), date_year(sd), f / 2.0 + as(q, float64), u * 5 + 1, add_months(sd, -1)) :- "
     "li(k, q, p, d, sd, f, u), q < 15.00, d >= 0.05, sd < add_months(to_date(\"1970-03-01\"), 1).\n"
     "o2(k, date_month(sd), as(k % 5, number)) :- li(k, _, _, _, sd, f, u), f > 0.5, k % 3 != 1, u > 40.\n"
     "j(k, p * x, f * 2.0) :- li(k, _, p, _, _, f, _), ps(k, x), x > 1.00, as(p, float64) < 30.0.\n"
     ".output o\n.output o2\n.output j\n", 0},
    /* key ranges longer than the weaver scans while counting: filtered after expansion */
    {"long key ranges",
     ".decl a(x:number, y:number)\n.decl b(x:number, z:number, u:number)\n.decl o(x:number, y:number, z:number)\n"
     ".input a\n.input b\no(x, y, z) :- a(x, y), b(x, z, u), z < 30, u > 50, y < 70.\n.output o\n", 9000},
};
#define NPROGRAMS ((int)(sizeof programs / sizeof *programs))

static uint64_t seed = 42;
static uint32_t rnd(uint32_t range)
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(seed >> 33) % range;
}

static rfx_program *parse(const prog_case *p)
{
    int nerr = 0;
    rfx_program *prog = rfx_frontend_parse(p->src, strlen(p->src), p->name, stderr, &nerr);
    CU_ASSERT_PTR_NOT_NULL(prog);
    return prog;
}

static rfx_plan *plan_of(const rfx_program *prog, bool fuse)
{
    rfx_plan_opts po = {.no_fuse_maps = !fuse};
    return rfx_plan_build(prog, &po, NULL);
}

/* The groups of each pattern: kind, members, sources. */
static void test_groups(void)
{
    struct {
        int prog, ngroups;
        rfx_fgroup_kind kind;
        int nmembers, nsrc_or_outs;
    } want[] = {
        {0, 1, RFX_FG_FILTER, 1, 1},   /* the plan already folded SELECT+PROJECT */
        {1, 1, RFX_FG_JOIN, 2, 3},     /* JOIN -> JOIN on one key: a star join of three */
        {2, 1, RFX_FG_JOIN, 5, 3},     /* three SELECTs and two JOINs */
        {3, 1, RFX_FG_FILTER, 3, 3},   /* three rules, three strata, one pass */
        {4, 1, RFX_FG_FILTER, 1, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        rfx_program *prog = parse(&programs[want[i].prog]);
        rfx_plan *plan = prog ? plan_of(prog, true) : NULL;
        rfx_weave *w = plan ? rfx_weave_build(plan, NULL) : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        CU_ASSERT_EQUAL(w->ngroups, want[i].ngroups);
        const rfx_fgroup *g = &w->groups[0];
        CU_ASSERT_EQUAL(g->kind, want[i].kind);
        CU_ASSERT_EQUAL(g->nmembers, want[i].nmembers);
        CU_ASSERT_EQUAL(g->kind == RFX_FG_JOIN ? g->nsrc : g->nouts, want[i].nsrc_or_outs);
        CU_ASSERT_PTR_NOT_NULL(g->source);
        /* every member maps back to the group; the anchor is a member */
        bool anchored = false;
        for (int m = 0; m < g->nmembers; m++) {
            CU_ASSERT_PTR_EQUAL(rfx_weave_group_at(w, g->members[m].block, g->members[m].cmd), g);
            anchored |= g->members[m].block == g->block && g->members[m].cmd == g->anchor;
        }
        CU_ASSERT(anchored);
        rfx_weave_free(w);
        rfx_plan_free(plan);
        rfx_program_free(prog);
    }
    /* the pattern (c) group tests the first relation's filter before looking up matches */
    rfx_program *prog = parse(&programs[2]);
    rfx_plan *plan = plan_of(prog, true);
    rfx_weave *w = rfx_weave_build(plan, NULL);
    CU_ASSERT_PTR_NOT_NULL(w->groups[0].pre);
    CU_ASSERT_PTR_NOT_NULL(w->groups[0].pred);
    rfx_weave_free(w);
    rfx_plan_free(plan);
    rfx_program_free(prog);
}

/* Random sorted sets for every input relation (small domains, so joins match). */
static rfx_rows *random_inputs(const rfx_program *prog, size_t n)
{
    rfx_rows *in = calloc((size_t)prog->nrels, sizeof *in);
    for (int r = 0; in && r < prog->nrels; r++) {
        const rfx_relation *rel = &prog->rels[r];
        rfx_prim types[64];   /* a column's kind: a 64-bit value's high word, then RFX_WORD */
        for (int c = 0; c < rel->arity && c < 64; c++)
            types[c] = (rfx_prim)prog->types[rel->attrs[c].type].prim;
        rfx_rows_init(&in[r], rel->arity);
        if (!(rel->io & RFX_REL_INPUT))
            continue;
        rfx_rows_reserve(&in[r], n);
        for (size_t i = 0; i < n; i++) {
            uint32_t t[64];
            for (int c = 0; c < rel->arity && c < 64; c++) {
                uint32_t v = rnd(100);
                if (RFX_PRIM_WIDE(types[c]) && c + 1 < rel->arity) {   /* high word, low word */
                    uint64_t w = types[c] == RFX_DECIMAL ? (uint64_t)((int64_t)rnd(4000) - 1000)   /* -10.00..29.99 */
                                 : types[c] == RFX_NUMBER64 ? (uint64_t)((int64_t)v - 20) : v;
                    if (types[c] == RFX_FLOAT64) {
                        double d = (double)v / 8.0 - 3.0;
                        memcpy(&w, &d, 8);
                    }
                    t[c] = (uint32_t)(w >> 32);
                    t[++c] = (uint32_t)w;
                    continue;
                }
                if (types[c] == RFX_FLOAT) {
                    float f = (float)v / 8.0f - 3.0f;
                    memcpy(&v, &f, 4);
                } else if (types[c] == RFX_NUMBER)
                    v = v - 20;   /* negatives too */
                t[c] = v;
            }
            rfx_rows_push(&in[r], t);
        }
        rfx_cpu_sort(&in[r], 1);
        rfx_cpu_unique(&in[r], 1);
    }
    return in;
}

/* Runs prog on inputs; every relation's rows into out[] (caller frees). */
static rfx_status run_on(rfx_program *prog, const rfx_rows *in, bool fuse, rfx_backend_kind backend, rfx_rows *out)
{
    rfx_plan *plan = plan_of(prog, fuse);
    if (!plan)
        return RFX_ERR_NOMEM;
    FILE *sink = fopen("/dev/null", "w");
    rfx_run_opts o = {.nthreads = 3, .backend = backend, .err = stderr, .out = sink, .no_fuse = !fuse, .tune = &tuning};
    rfx_exec *x = NULL;
    rfx_status st = rfx_exec_run(plan, prog, &o, in, &x);
    for (int r = 0; st == RFX_OK && r < prog->nrels; r++) {
        rfx_rows_init(&out[r], prog->rels[r].arity);
        st = rfx_exec_rows(x, r, &out[r]);
    }
    rfx_exec_free(x);
    fclose(sink);
    rfx_plan_free(plan);
    return st;
}

static bool same_rows(const rfx_rows *a, const rfx_rows *b)
{
    return a->n == b->n && a->arity == b->arity &&
           (a->n == 0 || a->arity == 0 || memcmp(a->data, b->data, a->n * (size_t)a->arity * 4) == 0);
}

static void differential(rfx_backend_kind fused_backend)
{
    static const size_t sizes[] = {0, 1, 37, 3000, 0};
    for (int p = 0; p < NPROGRAMS; p++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            if (s == 4 && !programs[p].big)
                continue;
            size_t n = s == 4 ? programs[p].big : sizes[s];
            rfx_program *prog = parse(&programs[p]);
            if (!prog)
                continue;
            rfx_rows *in = random_inputs(prog, n);
            rfx_rows *ref = calloc((size_t)prog->nrels, sizeof *ref), *got = calloc((size_t)prog->nrels, sizeof *got);
            rfx_status a = run_on(prog, in, false, RFX_BACKEND_CPU, ref);
            rfx_status b = run_on(prog, in, true, fused_backend, got);
            CU_ASSERT_EQUAL(a, b);
            for (int r = 0; a == RFX_OK && b == RFX_OK && r < prog->nrels; r++) {
                bool eq = same_rows(&ref[r], &got[r]);
                if (!eq)
                    fprintf(stderr, "\n    %s, %zu rows: %s has %zu tuples fused, %zu unfused", programs[p].name,
                            n, prog->rels[r].name, got[r].n, ref[r].n);
                CU_ASSERT(eq);
            }
            for (int r = 0; r < prog->nrels; r++) {
                rfx_rows_free(&in[r]);
                rfx_rows_free(&ref[r]);
                rfx_rows_free(&got[r]);
            }
            free(in);
            free(ref);
            free(got);
            rfx_program_free(prog);
        }
}

static void test_cpu_fused_equals_unfused(void)
{
    differential(RFX_BACKEND_CPU);
}

#ifdef RFX_HAVE_CUDA
static char *cache;

/* The patterns, then every end-to-end case's program that plans. */
static int nsources;
static prog_case *sources;

static void collect_sources(void)
{
    const char *dir = getenv("RFX_TEST_CASES") ? getenv("RFX_TEST_CASES") : RFX_CASES_DIR;
    char **names = list_dir(dir);
    int n = 0;
    for (char **c = names; c && *c; c++)
        n++;
    sources = calloc((size_t)(NPROGRAMS + n), sizeof *sources);
    for (int p = 0; sources && p < NPROGRAMS; p++)
        sources[nsources++] = programs[p];
    for (char **c = names; sources && c && *c; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/program.dl", dir, *c);
        char *text = read_file(path, NULL);
        if (text)
            sources[nsources++] = (prog_case){strdup(*c), text, 0};
    }
    free_list(names);
}

/* Every group of every program compiles; the second time it is read from the cache. */
static void test_nvrtc(void)
{
    char why[256];
    if (!rfx_jit_available(why, sizeof why)) {
        CU_FAIL("NVRTC is part of the CUDA toolkit this build used, but cannot be loaded");
        fprintf(stderr, "\n    %s", why);
        return;
    }
    collect_sources();
    int groups = 0;
    double slowest = 0;
    FILE *quiet = fopen("/dev/null", "w");
    for (int p = 0; p < nsources; p++) {
        int nerr = 0;
        rfx_program *prog = rfx_frontend_parse(sources[p].src, strlen(sources[p].src), sources[p].name, quiet, &nerr);
        if (!prog)
            continue;   /* the cases of bad programs */
        rfx_plan *plan = prog ? plan_of(prog, true) : NULL;
        rfx_weave *w = plan ? rfx_weave_build(plan, NULL) : NULL;
        CU_ASSERT_PTR_NOT_NULL_FATAL(w);
        for (int g = 0; g < w->ngroups; g++, groups++) {
            void *cubin = NULL, *again = NULL;
            size_t n = 0, n2 = 0;
            bool compiled = false;
            double ms = 0;
            char err[4096];
            bool ok = rfx_jit_cubin(w->groups[g].source, w->groups[g].name, 90, &cubin, &n, &compiled, &ms, err, sizeof err);
            if (!ok)
                fprintf(stderr, "\n    %s, %s: %s", sources[p].name, w->groups[g].name, err);
            CU_ASSERT(ok && n > 0);
            ok = rfx_jit_cubin(w->groups[g].source, w->groups[g].name, 90, &again, &n2, &compiled, &ms, err, sizeof err);
            CU_ASSERT(ok && !compiled && n2 == n && again && cubin && memcmp(cubin, again, n) == 0);
            if (ms > slowest)   /* the time is reported, not asserted: machines are loaded */
                slowest = ms;
            free(cubin);
            free(again);
        }
        rfx_weave_free(w);
        rfx_plan_free(plan);
        rfx_program_free(prog);
    }
    fclose(quiet);
    for (int p = NPROGRAMS; p < nsources; p++) {
        free((char *)sources[p].name);
        free((char *)sources[p].src);
    }
    free(sources);
    printf("(%d groups; slowest read from the cache %.2f ms) ", groups, slowest);
    CU_ASSERT(groups >= 60);
}

/* A compile left to itself (a run that ended first) ends on its own, its cubin cached; one
 * that had ended is simply freed. The source is new to the cache (a constant of this run). */
static void test_nvrtc_detached(void)
{
    if (!rfx_jit_available(NULL, 0)) {
        CU_FAIL("NVRTC is part of the CUDA toolkit this build used, but cannot be loaded");
        return;
    }
    char src[2][200];
    for (int k = 0; k < 2; k++)
        snprintf(src[k], sizeof src[k],
                 "extern \"C\" __global__ void rfx_probe(unsigned *p) { p[0] = 0x%lxu; p[1] = %du; }\n",
                 (unsigned long)time(NULL) ^ ((unsigned long)getpid() << 8), k);
    rfx_jit_job *j = rfx_jit_start(src[0], "rfx_probe", 90);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    rfx_jit_job_detach(j);
    for (int waited = 0; rfx_jit_detached_running() && waited < 120000; waited++)
        usleep(1000);
    CU_ASSERT(!rfx_jit_detached_running());
    void *cubin = NULL;
    size_t n = 0;
    CU_ASSERT(rfx_jit_cached(src[0], 90, &cubin, &n) && n > 0);
    free(cubin);
    j = rfx_jit_start(src[1], "rfx_probe", 90);
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    while (!rfx_jit_job_done(j))
        usleep(1000);
    rfx_jit_job_detach(j);
    CU_ASSERT(!rfx_jit_detached_running());
}

/* With a device: the generated kernels (every size, none too small to compile) against
 * the unfused CPU run; as the backend runs them (JOIN groups of several commands by their
 * members), then with every JOIN group's star join generated (join_groups=1). */
static void test_gpu_fused_equals_unfused(void)
{
    if (!rfx_cuda_available(NULL, 0)) {
        printf("(no CUDA device: generated kernels not run) ");
        return;
    }
    differential(RFX_BACKEND_CUDA);
    tuning.join_groups = 1;   /* every JOIN group one generated kernel */
    differential(RFX_BACKEND_CUDA);
    tuning.join_groups = 0;
}
#endif

static void add(void)
{
#ifdef RFX_HAVE_CUDA
    cache = make_temp_dir();
    setenv("RFX_CACHE_DIR", cache, 1);
#endif
    tuning = rfx_tuning_defaults;
    tuning.jit_min_rows = 0;
    CU_pSuite s = CU_add_suite("weaver", NULL, NULL);
    CU_add_test(s, "groups of the thesis patterns", test_groups);
    CU_add_test(s, "fused = unfused on random inputs (CPU)", test_cpu_fused_equals_unfused);
#ifdef RFX_HAVE_CUDA
    CU_add_test(s, "every group compiles with NVRTC; cached the second time", test_nvrtc);
    CU_add_test(s, "a compile left to itself ends and is cached", test_nvrtc_detached);
    CU_add_test(s, "generated kernels = unfused on random inputs (GPU)", test_gpu_fused_equals_unfused);
#endif
}

int main(int argc, char **argv)
{
    int rc = run_suites(argc, argv, add);
#ifdef RFX_HAVE_CUDA
    if (cache) {
        remove_tree(cache);
        free(cache);
    }
#endif
    return rc;
}
