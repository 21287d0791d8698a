/* test_api.c: librfx through its public header only (rfx.h): two engines running
 * different programs at once in two threads, inserts, cursors, re-runs, sizes, emits,
 * file I/O through the config, profiles, and the error paths of every call. Run under
 * valgrind by scripts/test.sh (no leak allowed). The backend is `auto`: the GPU where
 * there is one. */
#include "harness.h"
#include "rfx.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *tc_src =
    ".decl edge(x: number, y: number)\n"
    ".decl path(x: number, y: number)\n"
    "path(x, y) :- edge(x, y).\n"
    "path(x, z) :- path(x, y), edge(y, z).\n";

static const char *family_src =
    ".type Name <: symbol\n"
    ".decl parent(p: Name, c: Name)\n"
    ".decl ancestor(a: Name, d: Name)\n"
    ".decl generation(a: Name, n: number)\n"
    "ancestor(p, c) :- parent(p, c).\n"
    "ancestor(a, c) :- ancestor(a, p), parent(p, c).\n"
    "generation(a, n) :- parent(a, _), n = count : { ancestor(a, _) }.\n";

static rfx_engine *open_engine(void)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.threads = 2;
    return rfx_open(&cfg);
}

/* ---- two engines at once ------------------------------------------------------------- */
typedef struct job {
    int n;                     /* size of the input */
    bool ok;
    char why[256];
} job;

/* Transitive closure of a chain 0 -> 1 -> ... -> n-1 has n(n-1)/2 paths; each (x, y)
 * with x < y, in order. */
static void *run_tc(void *arg)
{
    job *j = arg;
    rfx_engine *e = open_engine();
    int32_t *edges = malloc(sizeof(int32_t) * 2 * (size_t)j->n);
    for (int i = 0; i + 1 < j->n; i++) {
        edges[2 * i] = i;
        edges[2 * i + 1] = i + 1;
    }
    size_t size = 0;
    if (!e || !edges || rfx_load_string(e, tc_src, "tc.dl") || rfx_insert_numbers(e, "edge", edges, (size_t)j->n - 1) ||
        rfx_run(e) || rfx_size(e, "path", &size)) {
        snprintf(j->why, sizeof j->why, "tc failed: %s", e ? rfx_errmsg(e) : "no engine");
        goto out;
    }
    if (size != (size_t)j->n * (size_t)(j->n - 1) / 2) {
        snprintf(j->why, sizeof j->why, "tc: %zu paths, expected %zu", size, (size_t)j->n * (size_t)(j->n - 1) / 2);
        goto out;
    }
    rfx_cursor *c = rfx_cursor_open(e, "path");
    int x = 0, y = 1;
    size_t seen = 0;
    bool in_order = c != NULL;
    for (const rfx_value *t; c && (t = rfx_cursor_next(c)); seen++) {
        in_order &= t[0].i == x && t[1].i == y;
        if (++y == j->n) {
            x++;
            y = x + 1;
        }
    }
    rfx_cursor_close(c);
    j->ok = in_order && seen == size;
    if (!j->ok)
        snprintf(j->why, sizeof j->why, "tc: cursor gave %zu tuples, in order: %d", seen, in_order);
out:
    free(edges);
    rfx_close(e);
    return NULL;
}

/* A family tree as a full binary tree of depth d, names "p<i>": every node is an
 * ancestor of the nodes below it. */
static void *run_family(void *arg)
{
    job *j = arg;
    rfx_engine *e = open_engine();
    int nodes = (1 << j->n) - 1;
    char (*names)[16] = malloc(sizeof *names * (size_t)nodes);
    rfx_value *rows = malloc(sizeof(rfx_value) * 2 * (size_t)nodes);
    if (!e || !names || !rows || rfx_load_string(e, family_src, "family.dl")) {
        snprintf(j->why, sizeof j->why, "family: load failed: %s", e ? rfx_errmsg(e) : "no engine");
        goto out;
    }
    for (int i = 0; i < nodes; i++)
        snprintf(names[i], sizeof names[i], "p%d", i);
    size_t nrows = 0;
    for (int i = 1; i < nodes; i++) {
        rows[2 * nrows].s = names[(i - 1) / 2];
        rows[2 * nrows + 1].s = names[i];
        nrows++;
    }
    size_t anc = 0, gen = 0;
    if (rfx_insert(e, "parent", rows, nrows) || rfx_run(e) || rfx_size(e, "ancestor", &anc) ||
        rfx_size(e, "generation", &gen)) {
        snprintf(j->why, sizeof j->why, "family failed: %s", rfx_errmsg(e));
        goto out;
    }
    /* each node at depth k (root 0) has k ancestors */
    size_t want = 0;
    for (int k = 0; k < j->n; k++)
        want += (size_t)k << k;
    /* the root's count equals nodes - 1, found through the cursor */
    rfx_cursor *c = rfx_cursor_open(e, "generation");
    int root_count = -1;
    for (const rfx_value *t; c && (t = rfx_cursor_next(c));)
        if (strcmp(t[0].s, "p0") == 0)
            root_count = t[1].i;
    rfx_cursor_close(c);
    j->ok = anc == want && gen == (size_t)((1 << (j->n - 1)) - 1) && root_count == nodes - 1;
    if (!j->ok)
        snprintf(j->why, sizeof j->why, "family: ancestor %zu (want %zu), generation %zu, root %d", anc, want, gen,
                 root_count);
out:
    free(names);
    free(rows);
    rfx_close(e);
    return NULL;
}

static void two_engines_in_two_threads(void)
{
    for (int round = 0; round < 3; round++) {
        job a = {.n = 300}, b = {.n = 9};
        pthread_t ta, tb;
        CU_ASSERT_FATAL(pthread_create(&ta, NULL, run_tc, &a) == 0);
        CU_ASSERT_FATAL(pthread_create(&tb, NULL, run_family, &b) == 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        if (!a.ok)
            fprintf(stderr, "\n    %s\n", a.why);
        if (!b.ok)
            fprintf(stderr, "\n    %s\n", b.why);
        CU_ASSERT(a.ok);
        CU_ASSERT(b.ok);
    }
}

/* ---- results --------------------------------------------------------------------------- */
static void cursor_order_and_types(void)
{
    rfx_engine *e = open_engine();
    CU_ASSERT_FATAL(e != NULL);
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e,
                                          ".decl t(n: number, u: unsigned, f: float, s: symbol)\n"
                                          ".decl r(n: number, u: unsigned, f: float, s: symbol)\n"
                                          "r(n, u, f, s) :- t(n, u, f, s).\n"
                                          "r(-5, 7u, 1.5, \"from rule\") :- true.\n",
                                          "types.dl"),
                          RFX_EXIT_OK);
    int arity = 0;
    rfx_column_type types[4];
    CU_ASSERT_EQUAL(rfx_relation_info(e, "r", &arity, types), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(arity, 4);
    CU_ASSERT(types[0] == RFX_COL_NUMBER && types[1] == RFX_COL_UNSIGNED && types[2] == RFX_COL_FLOAT &&
              types[3] == RFX_COL_SYMBOL);
    rfx_value in[] = {
        {.i = 3}, {.u = 4000000000u}, {.f = -2.25f}, {.s = "zeta"},
        {.i = -100}, {.u = 1}, {.f = 0.5f}, {.s = "alpha"},
        {.i = 3}, {.u = 4000000000u}, {.f = -2.25f}, {.s = "zeta"},   /* a duplicate */
        {.i = 3}, {.u = 4000000000u}, {.f = -2.25f}, {.s = "beta"},
    };
    CU_ASSERT_EQUAL(rfx_insert(e, "t", in, 4), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    rfx_cursor *c = rfx_cursor_open(e, "r");
    CU_ASSERT_FATAL(c != NULL);
    CU_ASSERT_EQUAL(rfx_cursor_arity(c), 4);
    CU_ASSERT_EQUAL(rfx_cursor_count(c), 4);
    const char *want_s[] = {"alpha", "from rule", "beta", "zeta"};
    int want_n[] = {-100, -5, 3, 3};
    int k = 0;
    for (const rfx_value *t; (t = rfx_cursor_next(c)); k++) {
        CU_ASSERT(k < 4);
        if (k >= 4)
            break;
        CU_ASSERT_EQUAL(t[0].i, want_n[k]);
        CU_ASSERT_STRING_EQUAL(t[3].s, want_s[k]);
        if (k == 1) {
            CU_ASSERT_EQUAL(t[1].u, 7u);
            CU_ASSERT(t[2].f == 1.5f);
        }
        if (k == 3) {
            CU_ASSERT_EQUAL(t[1].u, 4000000000u);
            CU_ASSERT(t[2].f == -2.25f);
        }
    }
    CU_ASSERT_EQUAL(k, 4);
    CU_ASSERT_PTR_NULL(rfx_cursor_next(c));
    rfx_cursor_close(c);
    CU_ASSERT_STRING_EQUAL(rfx_errmsg(e), "");
    rfx_close(e);
}

static void rerun_and_snapshots(void)
{
    rfx_engine *e = open_engine();
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, tc_src, "tc.dl"), RFX_EXIT_OK);
    int32_t first[] = {1, 2, 2, 3};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "edge", first, 2), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    size_t n = 0;
    CU_ASSERT_EQUAL(rfx_size(e, "path", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 3);
    rfx_cursor *before = rfx_cursor_open(e, "path");
    int32_t more[] = {3, 1};    /* closes a cycle: every pair of {1,2,3} */
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "edge", more, 1), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "path", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 9);
    CU_ASSERT_EQUAL(rfx_cursor_count(before), 3);   /* a snapshot of the first run */
    size_t seen = 0;
    while (rfx_cursor_next(before))
        seen++;
    CU_ASSERT_EQUAL(seen, 3);
    rfx_cursor_close(before);
    /* a nullary relation: one tuple or none */
    rfx_close(e);
    e = open_engine();
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, ".decl a(x: number)\n.decl yes()\nyes() :- a(4).\n", "n.dl"), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "yes", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 0);
    int32_t four = 4;
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "a", &four, 1), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "yes", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 1);
    rfx_cursor *c = rfx_cursor_open(e, "yes");
    CU_ASSERT_EQUAL(rfx_cursor_arity(c), 0);
    CU_ASSERT_PTR_NOT_NULL(rfx_cursor_next(c));
    CU_ASSERT_PTR_NULL(rfx_cursor_next(c));
    rfx_cursor_close(c);
    rfx_close(e);
}

/* ---- files, emits, profiles ------------------------------------------------------------- */
static void files_emits_and_profiles(void)
{
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/edge.facts", dir);
    CU_ASSERT_FATAL(write_file(path, "1\t2\n2\t3\n"));
    snprintf(path, sizeof path, "%s/tc.dl", dir);
    CU_ASSERT_FATAL(write_file(path, ".decl edge(x: number, y: number)\n.input edge\n"
                                     ".decl path(x: number, y: number)\n.output path\n.printsize path\n"
                                     "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n"));
    char *out = NULL, *prof = NULL, *json = NULL, *plan = NULL, *trace = NULL;
    size_t outlen = 0, proflen = 0, jsonlen = 0, planlen = 0, tracelen = 0;
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.threads = 2;
    cfg.fact_dir = dir;
    cfg.output_dir = dir;
    cfg.out = open_memstream(&out, &outlen);
    cfg.profile = open_memstream(&prof, &proflen);
    cfg.profile_json = open_memstream(&json, &jsonlen);
    cfg.trace = open_memstream(&trace, &tracelen);
    rfx_engine *e = rfx_open(&cfg);
    CU_ASSERT_EQUAL(rfx_load_file(e, path), RFX_EXIT_OK);
    int32_t extra[] = {3, 4};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "edge", extra, 1), RFX_EXIT_OK);
    FILE *pf = open_memstream(&plan, &planlen);
    CU_ASSERT_EQUAL(rfx_emit(e, RFX_STAGE_PLAN, pf), RFX_EXIT_OK);
    fclose(pf);
    CU_ASSERT_PTR_NOT_NULL(strstr(plan, "JOIN"));
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    rfx_close(e);
    fclose(cfg.out);
    fclose(cfg.profile);
    fclose(cfg.profile_json);
    fclose(cfg.trace);
    CU_ASSERT_STRING_EQUAL(out, "path\t6\n");
    snprintf(path, sizeof path, "%s/path.csv", dir);
    char *csv = read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL(csv);
    if (csv)
        CU_ASSERT_STRING_EQUAL(csv, "1\t2\n1\t3\n1\t4\n2\t3\n2\t4\n3\t4\n");
    CU_ASSERT_PTR_NOT_NULL(strstr(prof, "GB/s"));
    CU_ASSERT_PTR_NOT_NULL(strstr(prof, "JOIN"));
    CU_ASSERT(json[0] == '{' && strstr(json, "\"operators\": [") && strstr(json, "\"operator\": \"FUSED JOIN\""));
    CU_ASSERT(trace[0] == '{' && strstr(trace, "\"traceEvents\": [") && strstr(trace, "\"ph\": \"X\"") &&
              strstr(trace, "\"name\": \"FUSED rfx_g") && strstr(trace, "\"otherData\""));
    free(csv);
    free(out);
    free(prof);
    free(json);
    free(plan);
    free(trace);
    remove_tree(dir);
    free(dir);
}

/* ---- inputs read once ------------------------------------------------------------------- */
static void inputs_read_once(void)
{
    char *dir = make_temp_dir();
    char path[512], msg[512];
    snprintf(path, sizeof path, "%s/edge.facts", dir);
    CU_ASSERT_FATAL(write_file(path, "1\t2\n2\t3\n2\t3\n"));
    snprintf(path, sizeof path, "%s/big.facts", dir);
    CU_ASSERT_FATAL(write_file(path, "5000000000\tb\n-7\ta\n"));
    const char *prog = ".decl edge(x: number, y: number)\n.input edge\n"
                       ".decl big(v: number64, s: symbol)\n.input big\n"
                       ".decl path(x: number, y: number)\n.decl most(v: number64)\n.decl name(s: symbol)\n"
                       "path(x, y) :- edge(x, y).\npath(x, z) :- path(x, y), edge(y, z).\n"
                       "most(m) :- m = max v : { big(v, _) }.\nname(s) :- big(_, s).\n";
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.backend = RFX_BACKEND_CPU;
    cfg.threads = 2;
    rfx_engine *e = rfx_open(&cfg);
    CU_ASSERT_EQUAL(rfx_load_string(e, prog, "once.dl"), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_read_inputs(e), RFX_EXIT_IO);   /* no fact directory */
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "fact_dir"));
    rfx_close(e);
    cfg.fact_dir = dir;
    e = rfx_open(&cfg);
    CU_ASSERT_EQUAL(rfx_read_inputs(e), RFX_EXIT_IO);   /* no program */
    CU_ASSERT_EQUAL(rfx_load_string(e, prog, "once.dl"), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_read_inputs(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_read_inputs(e), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "read already"));
    snprintf(path, sizeof path, "%s/edge.facts", dir);
    CU_ASSERT(remove(path) == 0);   /* the runs read no file */
    snprintf(path, sizeof path, "%s/big.facts", dir);
    CU_ASSERT(remove(path) == 0);
    int32_t extra[] = {3, 4};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "edge", extra, 1), RFX_EXIT_OK);
    for (int run = 0; run < 2; run++) {
        size_t n = 0;
        CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
        CU_ASSERT(rfx_size(e, "path", &n) == RFX_EXIT_OK && n == 6);
        CU_ASSERT(rfx_size(e, "edge", &n) == RFX_EXIT_OK && n == 3);
        CU_ASSERT(rfx_size(e, "most", &n) == RFX_EXIT_OK && n == 1);
        rfx_cursor *c = rfx_cursor_open(e, "name");
        const rfx_value *t = c ? rfx_cursor_next(c) : NULL;
        CU_ASSERT(t && strcmp(t[0].s, "a") == 0);
        t = c ? rfx_cursor_next(c) : NULL;
        CU_ASSERT(t && strcmp(t[0].s, "b") == 0);
        CU_ASSERT(c && !rfx_cursor_next(c));
        rfx_cursor_close(c);
    }
    /* one run profiled among others: its scans are the tuples kept, not a file read */
    char *json = NULL;
    size_t jlen = 0;
    FILE *jf = open_memstream(&json, &jlen);
    CU_ASSERT_EQUAL(rfx_set_profile(e, NULL, jf), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_set_profile(e, NULL, NULL), RFX_EXIT_OK);
    fflush(jf);
    size_t profiled = jlen;
    CU_ASSERT(json && strstr(json, "\"scan_bytes\": ") && !strstr(json, "\"scan_bytes\": 0,"));
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    fflush(jf);
    CU_ASSERT_EQUAL(jlen, profiled);   /* the next run not profiled */
    fclose(jf);
    free(json);
    rfx_close(e);
    /* a malformed file: file:line, exit 2, nothing kept */
    snprintf(path, sizeof path, "%s/edge.facts", dir);
    CU_ASSERT_FATAL(write_file(path, "1\t2\nx\t3\n"));
    e = rfx_open(&cfg);
    CU_ASSERT_EQUAL(rfx_load_string(e, ".decl edge(x: number, y: number)\n.input edge\n", "bad.dl"), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_read_inputs(e), RFX_EXIT_IO);
    snprintf(msg, sizeof msg, "%s/edge.facts:2", dir);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), msg));
    rfx_close(e);
    remove_tree(dir);
    free(dir);
}

/* ---- large outputs ------------------------------------------------------------------------ */
/* Runs the program at path on `threads` threads, its outputs written into dir. */
static void run_writing(const char *path, const char *dir, int threads)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.threads = threads;
    cfg.output_dir = dir;
    rfx_engine *e = rfx_open(&cfg);
    CU_ASSERT_EQUAL(rfx_load_file(e, path), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    rfx_close(e);
}

/* Whether the file dir/name holds exactly the len bytes at want. */
static bool file_holds(const char *dir, const char *name, const char *want, size_t len)
{
    char path[512];
    size_t got_len = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *got = read_file(path, &got_len);
    bool same = got && got_len == len && memcmp(got, want, len) == 0;
    free(got);
    return same;
}

/* Outputs of several text chunks (131,072 rows each), written by three threads: every row in
 * its place, in typed order (negative numbers first) and with the relation's delimiter. */
static void large_outputs_in_order(void)
{
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/big.dl", dir);
    CU_ASSERT_FATAL(write_file(path, ".decl d(x: number)\n"
                                     "d(0). d(1). d(2). d(3). d(4). d(5). d(6). d(7). d(8). d(9).\n"
                                     ".decl n(x: number)\n.output n\n"
                                     "n(a * 100000 + b * 10000 + c * 1000 + e * 100 + f * 10 + g - 400000) :-\n"
                                     "    d(a), d(b), d(c), d(e), d(f), d(g).\n"
                                     ".decl sq(x: number, y: number)\n.output sq(delimiter=\",\")\n"
                                     "sq(x, x * 3) :- n(x), x >= 0.\n"));
    run_writing(path, dir, 3);
    const int lo = -400000, hi = 600000;
    char *want_n = malloc(16 * (size_t)(hi - lo)), *want_sq = malloc(32 * (size_t)hi);
    CU_ASSERT_FATAL(want_n && want_sq);
    size_t ln = 0, lsq = 0;
    for (int x = lo; x < hi; x++)
        ln += (size_t)sprintf(want_n + ln, "%d\n", x);
    for (int x = 0; x < hi; x++)
        lsq += (size_t)sprintf(want_sq + lsq, "%d,%d\n", x, 3 * x);
    CU_ASSERT(file_holds(dir, "n.csv", want_n, ln));
    CU_ASSERT(file_holds(dir, "sq.csv", want_sq, lsq));
    free(want_n);
    free(want_sq);
    remove_tree(dir);
    free(dir);
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* Numbers and unsigned values at each change of their decimal width and at the ends of their
 * ranges, through the output's digit-pair conversion, as printf prints them. */
static void number_text_at_the_edges(void)
{
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/edges.dl", dir);
    FILE *f = fopen(path, "w");
    CU_ASSERT_FATAL(f != NULL);
    fprintf(f, ".decl u(x: unsigned)\n.output u\n.decl n(x: number, y: number)\n.output n\n");
    uint32_t p10 = 1;
    for (int k = 0; k < 10; k++, p10 *= 10) {   /* 10^k - 1, 10^k, 10^k + 1 */
        fprintf(f, "u(%uu). u(%uu). u(%uu).\n", p10 - 1, p10, p10 + 1);
        if (p10 < 2147483647u)
            fprintf(f, "n(%d, %d). n(%d, %d).\n", (int)p10 - 1, -(int)p10, (int)p10, 1 - (int)p10);
    }
    fprintf(f, "u(4294967295u). u(4294967294u). n(2147483647, -2147483647 - 1).\n");
    CU_ASSERT_FATAL(fclose(f) == 0);
    run_writing(path, dir, 2);
    uint32_t vals[40];
    size_t nv = 0, w = 0;
    vals[nv++] = 4294967295u;
    vals[nv++] = 4294967294u;
    for (uint32_t k = 0, q = 1; k < 10; k++, q *= 10)
        for (uint32_t d = 0; d < 3; d++)
            vals[nv++] = q - 1 + d;
    qsort(vals, nv, sizeof *vals, cmp_u32);
    char want[1024];
    for (size_t i = 0; i < nv; i++)
        if (i == 0 || vals[i] != vals[i - 1])   /* 10^0 + 1 = 2 and 10^1 - 1 = 9 once each */
            w += (size_t)sprintf(want + w, "%u\n", vals[i]);
    CU_ASSERT(file_holds(dir, "u.csv", want, w));
    size_t got_len = 0;
    snprintf(path, sizeof path, "%s/n.csv", dir);
    char *got = read_file(path, &got_len);
    CU_ASSERT_FATAL(got != NULL);
    /* typed order: by x; each line as printf prints it */
    CU_ASSERT(strstr(got, "0\t-1\n1\t0\n9\t-10\n10\t-9\n99\t-100\n100\t-99\n") == got);
    CU_ASSERT(strstr(got, "999999999\t-1000000000\n1000000000\t-999999999\n2147483647\t-2147483648\n") != NULL);
    CU_ASSERT(got_len > 0 && got[got_len - 1] == '\n');
    free(got);
    remove_tree(dir);
    free(dir);
}

/* Fact files of several pieces (parsed on three threads): every row kept in order, and
 * line numbers of errors and warnings counted across the pieces. */
static bool write_numbered(const char *path, int n, int bad_line, const char *bad)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    for (int i = 1; i <= n; i++)
        if (i == bad_line)
            fprintf(f, "%s\n", bad);
        else
            fprintf(f, i % 3 ? "%d\t%d\n" : "%d\t%d\r\n", i, (int)(i * 7L % 1000003));
    return fclose(f) == 0;
}

static rfx_result run_reading(const char *dir, const char *src, char **diag)
{
    char path[512];
    snprintf(path, sizeof path, "%s/read.dl", dir);
    if (!write_file(path, src))
        return RFX_EXIT_IO;
    size_t len = 0;
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.threads = 3;
    cfg.fact_dir = dir;
    cfg.output_dir = dir;
    cfg.diag = open_memstream(diag, &len);
    rfx_engine *e = rfx_open(&cfg);
    rfx_result r = rfx_load_file(e, path);
    if (r == RFX_EXIT_OK)
        r = rfx_run(e);
    rfx_close(e);
    fclose(cfg.diag);
    return r;
}

static void large_facts_read_in_pieces(void)
{
    char *dir = make_temp_dir(), path[512], *diag = NULL;
    const int n = 400000;
    snprintf(path, sizeof path, "%s/e.facts", dir);
    CU_ASSERT_FATAL(write_numbered(path, n, 0, NULL));
    CU_ASSERT_EQUAL(run_reading(dir, ".decl e(x: number, y: number)\n.input e\n.output e\n", &diag), RFX_EXIT_OK);
    size_t got_len = 0, want_len = 0;
    snprintf(path, sizeof path, "%s/e.csv", dir);
    char *got = read_file(path, &got_len), *want = malloc(24 * (size_t)n);
    CU_ASSERT_FATAL(want != NULL);
    for (int i = 1; i <= n; i++)
        want_len += (size_t)sprintf(want + want_len, "%d\t%d\n", i, (int)(i * 7L % 1000003));
    CU_ASSERT(got && got_len == want_len && memcmp(got, want, want_len) == 0);
    free(got);
    free(want);
    free(diag);

    snprintf(path, sizeof path, "%s/e.facts", dir);
    CU_ASSERT_FATAL(write_numbered(path, n, 250001, "12\tx"));
    CU_ASSERT_EQUAL(run_reading(dir, ".decl e(x: number, y: number)\n.input e\n.output e\n", &diag), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(diag, "e.facts:250001: error: column 2: 'x' is not a number"));
    free(diag);

    snprintf(path, sizeof path, "%s/g.txt", dir);   /* an edge list: a header spilled onto a line */
    CU_ASSERT_FATAL(write_numbered(path, n, 300000, "FromNodeId ToNodeId"));
    CU_ASSERT_EQUAL(run_reading(dir, ".decl e(x: number, y: number)\n.input e(filename=\"g.txt\", format=\"edges\")\n"
                                     ".printsize e\n", &diag), RFX_EXIT_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(diag, "g.txt:300000: warning: skipped 1 line that does not start with numbers"));
    free(diag);
    remove_tree(dir);
    free(dir);
}

/* ---- errors ------------------------------------------------------------------------------- */
static void errors_are_reported(void)
{
    rfx_engine *e = open_engine();
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "no program loaded"));
    CU_ASSERT_EQUAL(rfx_load_string(e, ".decl a(x: number)\na(x) :- b(x).\n", "bad.dl"), RFX_EXIT_PROGRAM);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "bad.dl:2:"));
    CU_ASSERT_EQUAL(rfx_load_file(e, "/nonexistent/x.dl"), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "/nonexistent/x.dl"));
    CU_ASSERT_EQUAL(rfx_load_string(e, ".decl s(x: symbol, n: number)\n.decl d(n: number)\n"
                                       "d(100 / n) :- s(_, n).\n", "ok.dl"),
                    RFX_EXIT_OK);
    CU_ASSERT_STRING_EQUAL(rfx_errmsg(e), "");
    CU_ASSERT_EQUAL(rfx_load_string(e, tc_src, "again.dl"), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "has a program already"));
    size_t n;
    CU_ASSERT_EQUAL(rfx_size(e, "d", &n), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "call rfx_run first"));
    CU_ASSERT_PTR_NULL(rfx_cursor_open(e, "d"));
    CU_ASSERT_EQUAL(rfx_size(e, "nope", &n), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "no relation named 'nope'"));
    int32_t nums[] = {1, 2};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "s", nums, 1), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "not number"));
    rfx_value bad[] = {{.s = NULL}, {.i = 1}};
    CU_ASSERT_EQUAL(rfx_insert(e, "s", bad, 1), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "NULL"));
    CU_ASSERT_EQUAL(rfx_insert(e, "s", NULL, 1), RFX_EXIT_IO);
    rfx_value zero[] = {{.s = "z"}, {.i = 0}};
    CU_ASSERT_EQUAL(rfx_insert(e, "s", zero, 1), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_PROGRAM);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "ok.dl:3:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "division by zero"));
    CU_ASSERT_EQUAL(rfx_size(e, "d", &n), RFX_EXIT_IO);   /* the failed run left no results */
    CU_ASSERT_EQUAL(rfx_emit(e, (rfx_stage)99, stdout), RFX_EXIT_IO);
    rfx_close(e);
    rfx_close(NULL);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(NULL), "no engine"));
    CU_ASSERT_STRING_EQUAL(rfx_version(), RFX_VERSION_STRING);
    /* a missing output directory is reported before anything runs */
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.output_dir = "/nonexistent-rfx-dir";
    e = rfx_open(&cfg);
    CU_ASSERT_EQUAL(rfx_load_string(e, ".decl a(x: number)\n.output a\na(1).\n", "o.dl"), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "output directory does not exist"));
    rfx_close(e);
}

/* Tuning settings: a bad one is refused with its reason (rfx_tune_check, and rfx_run of an
 * engine given it); good ones change no answer. */
static void tuning_settings(void)
{
    char err[256];
    CU_ASSERT_TRUE(rfx_tune_check("split_loops=0, jit_min_rows=4K box_outer=0.5", err, sizeof err));
    CU_ASSERT_TRUE(rfx_tune_check(NULL, err, sizeof err));
    CU_ASSERT_FALSE(rfx_tune_check("no_such_knob=1", err, sizeof err));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no_such_knob"));
    CU_ASSERT_FALSE(rfx_tune_check("box_outer=2", err, sizeof err));
    CU_ASSERT_FALSE(rfx_tune_check("pairs=maybe", err, sizeof err));
    CU_ASSERT_FALSE(rfx_tune_check("split_loops", err, sizeof err));
    size_t want = 0, got = 0;
    for (int k = 0; k < 3; k++) {
        rfx_config cfg;
        rfx_config_init(&cfg);
        cfg.threads = 2;
        cfg.tune = k == 0 ? NULL : k == 1 ? "join_groups=2 split_loops=0" : "box_outer=9";
        rfx_engine *e = rfx_open(&cfg);
        CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, tc_src, "tc.dl"), RFX_EXIT_OK);
        int32_t edges[] = {1, 2, 2, 3, 3, 4, 4, 1};
        CU_ASSERT_EQUAL(rfx_insert_numbers(e, "edge", edges, 4), RFX_EXIT_OK);
        rfx_result r = rfx_run(e);
        if (k < 2) {
            CU_ASSERT_EQUAL(r, RFX_EXIT_OK);
            CU_ASSERT_EQUAL(rfx_size(e, "path", k ? &got : &want), RFX_EXIT_OK);
        } else {
            CU_ASSERT_EQUAL(r, RFX_EXIT_IO);
            CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "box_outer"));
        }
        rfx_close(e);
    }
    CU_ASSERT_EQUAL(want, 16);
    CU_ASSERT_EQUAL(got, want);
}

/* A run that fails (here before anything runs: its output directory is gone) leaves the
 * engine usable: on a GPU the next run opens the device afresh instead of borrowing the
 * contexts kept from the run before. */
static void runs_after_a_failed_run(void)
{
    char *dir = make_temp_dir();
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.output_dir = dir;
    rfx_engine *e = rfx_open(&cfg);
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, ".decl a(x: number)\n.output a\na(1).\na(x + 1) :- a(x), x < 5.\n", "a.dl"),
                          RFX_EXIT_OK);
    size_t n = 0;
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);   /* again, on what the first run kept */
    CU_ASSERT_EQUAL(rfx_size(e, "a", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 5);
    remove_tree(dir);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_IO);
    CU_ASSERT_EQUAL(mkdir(dir, 0700), 0);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "a", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 5);
    char path[4096];
    snprintf(path, sizeof path, "%s/a.csv", dir);
    CU_ASSERT_EQUAL(access(path, R_OK), 0);
    rfx_close(e);
    remove_tree(dir);
    free(dir);
}

/* A recursive rule's existence test (`r(_)`) is a relation of the checker's own
 * (`+disconnected0`): not listed, not found by name, and the answer is the rule's. */
static void checker_relations_not_listed(void)
{
    rfx_engine *e = open_engine();
    CU_ASSERT_FATAL(e != NULL);
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, ".decl r(x: number)\nr(0).\nr(v + 1) :- r(_), r(v), v < 99.\n", "e.dl"),
                          RFX_EXIT_OK);
    CU_ASSERT_STRING_EQUAL(rfx_relation_name(e, 0), "r");
    CU_ASSERT_PTR_NULL(rfx_relation_name(e, 1));
    size_t n = 0;
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "r", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 100);
    CU_ASSERT_NOT_EQUAL(rfx_size(e, "+disconnected0", &n), RFX_EXIT_OK);
    rfx_close(e);
}

/* A helper read in one rule is made only for what that rule can use (the front end's demand
 * rewrite) where only outputs are looked at (results_only): the reader's answer is the
 * same, a read of the helper is refused with the reason; the tuning demand=0, or an engine
 * that keeps every relation whole (the default), reads it whole. */
static void demanded_helpers(void)
{
    static const char *src = ".decl l(o: number, s: number)\n"
                             "l(o, o % 5) :- o = range(0, 50).\n"
                             "l(o, o % 7) :- o = range(0, 50).\n"
                             ".decl shared(o: number, s: number)\n"
                             "shared(o, s) :- l(o, s), l(o, s2), s != s2.\n"
                             ".decl pick(o: number, s: number)\n"
                             "pick(o, s) :- l(o, s), o < 10, shared(o, s).\n"
                             ".output pick\n";
    for (int whole = 0; whole < 3; whole++) {
        rfx_config cfg;
        rfx_config_init(&cfg);
        cfg.threads = 2;
        cfg.tune = whole == 1 ? "demand=0" : NULL;
        cfg.results_only = whole < 2;
        rfx_engine *e = rfx_open(&cfg);
        CU_ASSERT_FATAL(e != NULL);
        CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, src, "demand.dl"), RFX_EXIT_OK);
        CU_ASSERT_EQUAL_FATAL(rfx_run(e), RFX_EXIT_OK);
        size_t n = 0;
        CU_ASSERT_EQUAL(rfx_size(e, "pick", &n), RFX_EXIT_OK);
        CU_ASSERT_EQUAL(n, 10);   /* orders 5-9, each with its two suppliers */
        n = 0;
        if (whole) {
            CU_ASSERT_EQUAL(rfx_size(e, "shared", &n), RFX_EXIT_OK);
            CU_ASSERT_EQUAL(n, 80);   /* the 40 orders whose two suppliers differ */
        } else {
            CU_ASSERT_EQUAL(rfx_size(e, "shared", &n), RFX_EXIT_IO);
            CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "demand=0"));
            CU_ASSERT_PTR_NULL(rfx_cursor_open(e, "shared"));
            CU_ASSERT_PTR_NULL(rfx_relation_name(e, 3));   /* its demand relation is not listed */
        }
        rfx_close(e);
    }
}

/* ---- columns: bulk inserts and reads ---------------------------------------------------- */
static const char *columns_src =
    ".decl t(name: symbol, k: number, w: float, z: unsigned)\n"
    ".decl back(name: symbol, k: number, w: float, z: unsigned)\n"
    "back(n, k, w, z) :- t(n, k, w, z).\n"
    ".decl pairs(x: number, y: number)\n"
    ".decl pairs2(x: number, y: number)\n"
    "pairs2(x, y) :- pairs(x, y).\n";

static void columns_in_and_out(void)
{
    rfx_engine *e = open_engine();
    CU_ASSERT_FATAL(e != NULL);
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, columns_src, "columns.dl"), RFX_EXIT_OK);
    CU_ASSERT_STRING_EQUAL(rfx_relation_name(e, 0), "t");
    CU_ASSERT_PTR_NULL(rfx_relation_name(e, 4));
    CU_ASSERT_STRING_EQUAL(rfx_attribute_name(e, "t", 3), "z");
    CU_ASSERT_PTR_NULL(rfx_attribute_name(e, "t", 4));
    /* texts three ways (Arrow offsets, fixed UTF-8, fixed UTF-32), numbers from 64-bit and
     * strided 32-bit values */
    const char utf8[] = "b\xc3\xa9ta" "alpha" "";   /* "béta", "alpha", "" */
    const int64_t offsets[] = {0, 5, 10, 10};
    int64_t k[] = {-3, 7, 2147483647};
    double w[] = {0.5, 1.25, -2};
    uint32_t zs[] = {1, 99, 2, 99, 3, 99};   /* every other value */
    rfx_column cols[4] = {
        {.format = RFX_FORMAT_UTF8, .data = (void *)utf8, .offsets = offsets},
        {.format = RFX_FORMAT_I64, .data = k},
        {.format = RFX_FORMAT_F64, .data = w},
        {.format = RFX_FORMAT_U32, .data = zs, .stride = 8},
    };
    CU_ASSERT_EQUAL(rfx_insert_columns(e, "t", cols, 3), RFX_EXIT_OK);
    const char fixed[] = "gamma\0\0\0" "delta\0\0\0";
    const uint32_t wide[] = {0x7a, 0xdc80, 0x1F600, 0};   /* "z\x80", "\U0001F600" */
    int32_t k2[] = {1, 2};
    float w2[] = {3, 4};
    uint32_t z2[] = {5, 6};
    rfx_column fixed_cols[4] = {
        {.format = RFX_FORMAT_UTF8_FIXED, .data = (void *)fixed, .width = 8},
        {.format = RFX_FORMAT_I32, .data = k2},
        {.format = RFX_FORMAT_F32, .data = w2},
        {.format = RFX_FORMAT_U32, .data = z2},
    };
    CU_ASSERT_EQUAL(rfx_insert_columns(e, "t", fixed_cols, 2), RFX_EXIT_OK);
    fixed_cols[0] = (rfx_column){.format = RFX_FORMAT_UTF32_FIXED, .data = (void *)wide, .width = 8};
    CU_ASSERT_EQUAL(rfx_insert_columns(e, "t", fixed_cols, 2), RFX_EXIT_OK);
    /* a value that does not fit names its tuple and column, and inserts nothing */
    int64_t big[] = {1, 4294967296LL, 3};
    cols[1].data = big;
    CU_ASSERT_EQUAL(rfx_insert_columns(e, "t", cols, 3), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "tuple 2, column 2 of t: 4294967296 does not fit a number column"));
    cols[1] = (rfx_column){.format = RFX_FORMAT_F32, .data = w2};
    CU_ASSERT_EQUAL(rfx_insert_columns(e, "t", cols, 2), RFX_EXIT_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(rfx_errmsg(e), "column 2 of t is number: it does not take float32"));
    /* a row-major array of pairs: one copy in, one copy out */
    enum { N = 100000 };
    int32_t *pairs = malloc(sizeof(int32_t) * 2 * N), *back = malloc(sizeof(int32_t) * 2 * N);
    CU_ASSERT_FATAL(pairs && back);
    for (int i = 0; i < N; i++) {
        pairs[2 * i] = N - i;
        pairs[2 * i + 1] = i % 7 - 3;
    }
    rfx_column pc[2] = {{.format = RFX_FORMAT_I32, .data = pairs, .stride = 8},
                        {.format = RFX_FORMAT_I32, .data = pairs + 1, .stride = 8}};
    CU_ASSERT_EQUAL(rfx_insert_columns(e, "pairs", pc, N), RFX_EXIT_OK);
    CU_ASSERT_EQUAL_FATAL(rfx_run(e), RFX_EXIT_OK);

    size_t n = 0;
    rfx_column bc[2] = {{.format = RFX_FORMAT_I32, .data = back, .stride = 8},
                        {.format = RFX_FORMAT_I32, .data = back + 1, .stride = 8}};
    CU_ASSERT_EQUAL(rfx_read_columns(e, "pairs2", bc, N - 1, &n), RFX_EXIT_IO);   /* too little room */
    CU_ASSERT_EQUAL(rfx_read_columns(e, "pairs2", bc, N, &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, N);
    bool ascending = true;
    for (int i = 0; i < N; i++)
        ascending &= back[2 * i] == i + 1 && back[2 * i + 1] == (N - i - 1) % 7 - 3;
    CU_ASSERT(ascending);

    /* mixed columns read apart, in cursor order (symbols by their bytes) */
    uint32_t ids[7];
    int64_t ks[7];
    double ws[7];
    uint64_t zz[7];
    rfx_column rc[4] = {{.format = RFX_FORMAT_SYMBOL, .data = ids},
                        {.format = RFX_FORMAT_I64, .data = ks},
                        {.format = RFX_FORMAT_F64, .data = ws},
                        {.format = RFX_FORMAT_U64, .data = zz}};
    CU_ASSERT_EQUAL(rfx_read_columns(e, "back", rc, 7, &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL_FATAL(n, 7);
    int64_t off[8];
    CU_ASSERT_EQUAL(rfx_symbol_texts(e, ids, 7, NULL, 0, off), RFX_EXIT_OK);
    char texts[128];
    CU_ASSERT_FATAL(off[7] < (int64_t)sizeof texts);
    CU_ASSERT_EQUAL(rfx_symbol_texts(e, ids, 7, texts, sizeof texts, off), RFX_EXIT_OK);
    const char *want[] = {"", "alpha", "b\xc3\xa9ta", "delta", "gamma", "z\x80", "\xf0\x9f\x98\x80"};
    for (int i = 0; i < 7; i++)
        CU_ASSERT_STRING_EQUAL(texts + off[i], want[i]);
    CU_ASSERT_EQUAL(ks[0], 2147483647);
    CU_ASSERT_EQUAL(ks[1], 7);
    CU_ASSERT_EQUAL(ks[2], -3);
    CU_ASSERT_DOUBLE_EQUAL(ws[2], 0.5, 0);
    CU_ASSERT_EQUAL(zz[0], 3);
    rc[1].format = RFX_FORMAT_U32;   /* a number column does not read as unsigned */
    CU_ASSERT_EQUAL(rfx_read_columns(e, "back", rc, 7, &n), RFX_EXIT_IO);
    uint32_t bad = 1000000;
    CU_ASSERT_EQUAL(rfx_symbol_texts(e, &bad, 1, NULL, 0, off), RFX_EXIT_IO);
    free(pairs);
    free(back);
    rfx_close(e);
}

static void clique_programs(void)
{
    char buf[2048];
    size_t n = rfx_clique_program(buf, sizeof buf, 3, true, false, NULL);
    CU_ASSERT(n > 0 && n < sizeof buf);
    CU_ASSERT_EQUAL(strlen(buf), n);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "clique(v0, v1, v2) :- e(v0, v1), e(v0, v2), e(v1, v2)."));
    CU_ASSERT_PTR_NULL(strstr(buf, ".input"));
    CU_ASSERT_EQUAL(rfx_clique_program(NULL, 0, 9, true, false, NULL), 0);
    char small[16];
    size_t m = rfx_clique_program(small, sizeof small, 4, false, true, "g \"x\".txt");
    CU_ASSERT(m > sizeof small);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);   /* cut, NUL-terminated */
    char *full = malloc(m + 1);
    CU_ASSERT_FATAL(full != NULL);
    CU_ASSERT_EQUAL(rfx_clique_program(full, m + 1, 4, false, true, "g \"x\".txt"), m);
    CU_ASSERT_PTR_NOT_NULL(strstr(full, "filename=\"g \\\"x\\\".txt\""));
    rfx_engine *e = open_engine();
    int32_t k4[] = {1, 2, 1, 3, 1, 4, 2, 3, 2, 4, 3, 4, 4, 5};
    CU_ASSERT_EQUAL(rfx_clique_program(buf, sizeof buf, 3, true, true, NULL) < sizeof buf, true);
    CU_ASSERT_EQUAL(rfx_load_string(e, buf, "<3-cliques>"), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "edge", k4, 7), RFX_EXIT_OK);
    size_t count = 0;
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "clique", &count), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(count, 4);
    rfx_close(e);
    free(full);
}

/* An engine keeps the inserted tuples it uploaded on the device between its runs (the next
 * run copies them there): runs after it give the same answers, and tuples inserted since
 * drop the copies. Skipped where no CUDA device runs it. */
static void test_inputs_kept_on_device(void)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.backend = RFX_BACKEND_CUDA;
    rfx_engine *e = rfx_open(&cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    const char *tc = ".decl e(x: number, y: number)\n.decl p(x: number, y: number)\n"
                     "p(x, y) :- e(x, y).\np(x, z) :- p(x, y), e(y, z).\n";
    CU_ASSERT_EQUAL_FATAL(rfx_load_string(e, tc, "tc.dl"), RFX_EXIT_OK);
    int32_t chain[2 * 100];
    for (int i = 0; i < 100; i++)
        chain[2 * i] = i, chain[2 * i + 1] = i + 1;
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "e", chain, 100), RFX_EXIT_OK);
    size_t n = 0;
    for (int run = 0; run < 3; run++) {   /* the first uploads; the others copy on the device */
        rfx_result r = rfx_run(e);
        if (run == 0 && r != RFX_EXIT_OK) {
            printf("(no CUDA device: skipped) ");
            rfx_close(e);
            return;
        }
        CU_ASSERT_EQUAL(r, RFX_EXIT_OK);
        CU_ASSERT_EQUAL(rfx_size(e, "p", &n), RFX_EXIT_OK);
        CU_ASSERT_EQUAL(n, 5050);
        CU_ASSERT_EQUAL(rfx_size(e, "e", &n), RFX_EXIT_OK);
        CU_ASSERT_EQUAL(n, 100);
    }
    int32_t more[2] = {100, 101};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "e", more, 1), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "p", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 5151);
    CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(rfx_size(e, "p", &n), RFX_EXIT_OK);
    CU_ASSERT_EQUAL(n, 5151);
    /* tuples inserted into the derived relation too, one of them a repeat */
    int32_t back[4] = {101, 0, 0, 1};
    CU_ASSERT_EQUAL(rfx_insert_numbers(e, "p", back, 2), RFX_EXIT_OK);
    for (int run = 0; run < 2; run++) {
        CU_ASSERT_EQUAL(rfx_run(e), RFX_EXIT_OK);
        CU_ASSERT_EQUAL(rfx_size(e, "p", &n), RFX_EXIT_OK);
        CU_ASSERT_EQUAL(n, 5151 + 102);   /* 101 reaches every node from 0 on, 101 included */
    }
    rfx_close(e);
}

static void add_suites(void)
{
    CU_pSuite s = CU_add_suite("librfx", NULL, NULL);
    CU_add_test(s, "two engines in two threads", two_engines_in_two_threads);
    CU_add_test(s, "cursor order and column types", cursor_order_and_types);
    CU_add_test(s, "re-runs replace results; cursors are snapshots", rerun_and_snapshots);
    CU_add_test(s, "fact and output files, emits, profiles", files_emits_and_profiles);
    CU_add_test(s, "inputs read once, kept for every run", inputs_read_once);
    CU_add_test(s, "large outputs are written in order by several threads", large_outputs_in_order);
    CU_add_test(s, "number text at the edges of its widths", number_text_at_the_edges);
    CU_add_test(s, "large fact files are read in pieces on several threads", large_facts_read_in_pieces);
    CU_add_test(s, "errors are reported", errors_are_reported);
    CU_add_test(s, "tuning settings", tuning_settings);
    CU_add_test(s, "runs after a failed run", runs_after_a_failed_run);
    CU_add_test(s, "columns in and out", columns_in_and_out);
    CU_add_test(s, "the checker's relations are not listed", checker_relations_not_listed);
    CU_add_test(s, "helpers made for their reader's demand", demanded_helpers);
    CU_add_test(s, "clique programs", clique_programs);
    CU_add_test(s, "inserted tuples kept on the device between runs", test_inputs_kept_on_device);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add_suites);
}
