/* test_gpu_exprs.c: maps and filters (the expression interpreter, 64-bit values, texts,
 * the simple terms' kernels, launches and look-back), aggregates, and whole programs on
 * both backends, on the device against the CPU. */
#include "gpu_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The GPU's map/filter of a against the CPU's. */
static void mapfilter_vs_cpu(const rfx_rows *a, const rfx_rx *pred, rfx_rx *const *outs, int nout)
{
    rfx_rows hc;
    rfx_rows_init(&hc, nout);
    CU_ASSERT_EQUAL(rfx_cpu_mapfilter(a, pred, outs, nout, &hc, 4), RFX_OK);
    rfx_dev_rows ga = up(a), gd;
    rfx_gpu_rows_init(&gd, nout);
    gpu_agrees(rfx_gpu_mapfilter(gpu, &ga, pred, outs, nout, &gd), &gd, &hc);
    rfx_gpu_rows_free(gpu, &ga);
}

static void test_mapfilter(void)
{
    if (!need_gpu())
        return;
    rfx_rx c0 = col(0), c1 = col(1), two = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 3};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c0, .r = &c1};
    rfx_rx quo = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &c0, .r = &two};
    rfx_rx neg = {.kind = RFX_RX_NEG, .prim = RFX_NUMBER, .l = &c1};
    rfx_rx gt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &c1};
    rfx_rx *outs[4] = {&sum, &quo, &neg, &c1};
    for (size_t s = 0; s < NS; s++)
        for (int withp = 0; withp < 2; withp++) {
            if (quick && sizes[s] > 70000)
                continue;
            rfx_rows a = rows_random(sizes[s], 2, WIDE, 0, false);
            mapfilter_vs_cpu(&a, withp ? &gt : NULL, outs, 4);
            rfx_rows_free(&a);
        }
    /* division by zero is reported */
    rfx_rows z = rows_random(1000, 2, UNIFORM, 3, false);
    z.data[7] = 0;
    rfx_rx q2 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &c0, .r = &c1};
    rfx_rx *o2[1] = {&q2};
    rfx_dev_rows gz = up(&z), gd;
    rfx_gpu_rows_init(&gd, 1);
    CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gz, NULL, o2, 1, &gd), RFX_ERR_DIV0);
    rfx_rows_free(&z);
    rfx_gpu_rows_free(gpu, &gz);
    rfx_gpu_rows_free(gpu, &gd);
}

/* Expressions over 64-bit values, decimals and dates in the device's interpreter, against
 * the CPU's rfx_rx_eval64: rows of two 64-bit values (words 0-1 and 2-3). */
static void test_mapfilter_wide(void)
{
    if (!need_gpu())
        return;
    rfx_fn_env *env = rfx_fn_env_new(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    rfx_rx c[4];
    for (int k = 0; k < 4; k++)
        c[k] = (rfx_rx){.kind = RFX_RX_COL, .prim = k % 2 ? RFX_WORD : RFX_NUMBER64, .col = k};
    rfx_rx a = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &c[0], .r = &c[1]};
    rfx_rx b = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &c[2], .r = &c[3]};
    rfx_rx big = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 0x123456789ull};
    rfx_rx k12345 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 12345};
    rfx_rx k40000 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 40000};
    rfx_rx k13 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 13};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_ADD, .l = &a, .r = &b};
    rfx_rx prod = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_MUL, .l = &a, .r = &big};
    rfx_rx fa = {.kind = RFX_RX_CONV, .prim = RFX_FLOAT64, .l = &a};
    rfx_rx fb = {.kind = RFX_RX_CONV, .prim = RFX_FLOAT64, .l = &b};
    rfx_rx fq = {.kind = RFX_RX_BIN, .prim = RFX_FLOAT64, .op = RFX_DIV, .l = &fa, .r = &fb};
    /* a word's number grown to scale 2 (checked), less 12345 (checked) */
    rfx_rx lo = {.kind = RFX_RX_CONV, .prim = RFX_NUMBER64, .l = &c[1], .col = 0, .op = 2, .env = env};
    rfx_rx ndec = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_SUB, .l = &lo, .r = &k12345, .env = env};
    rfx_rx small = {.kind = RFX_RX_CONV, .prim = RFX_NUMBER, .l = &b, .col = 3, .op = 1};   /* rounded to scale 1 */
    rfx_rx day = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &c[1], .r = &k40000};
    rfx_rx year = {.kind = RFX_RX_CAL, .prim = RFX_NUMBER, .op = RFX_CAL_YEAR, .l = &day};
    rfx_rx later = {.kind = RFX_RX_CAL, .prim = RFX_NUMBER, .op = RFX_CAL_ADD_MONTHS, .l = &day, .r = &k13};
    rfx_rx h[6] = {
        {.kind = RFX_RX_HALF, .prim = RFX_NUMBER64, .op = 0, .l = &sum},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &sum},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &prod},
        {.kind = RFX_RX_HALF, .prim = RFX_FLOAT64, .op = 0, .l = &fq},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &fq},
        {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &ndec},
    };
    rfx_rx *outs[9] = {&h[0], &h[1], &h[2], &h[3], &h[4], &h[5], &small, &year, &later};
    rfx_rx lt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER64, .op = RFX_LT, .l = &a, .r = &b};
    rfx_rx dec = {.kind = RFX_RX_CMP, .prim = RFX_DECIMAL, .op = RFX_GE, .l = &a, .r = &b, .col = 2};
    rfx_rx both = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &lt, .r = &dec};
    rfx_rx *preds[3] = {NULL, &lt, &both};
    for (size_t s = 0; s < NS; s++)
        for (int p = 0; p < 3; p++) {
            if (quick && sizes[s] > 70000)
                continue;
            rfx_rows r = rows_random(sizes[s], 4, WIDE, 0, false);
            mapfilter_vs_cpu(&r, preds[p], outs, 9);
            rfx_rows_free(&r);
        }
    /* a decimal past 64 bits fails, as a division by zero does */
    rfx_rows z = rows_random(1000, 4, WIDE, 0, false);
    z.data[4 * 7] = 0x7fffffffu;
    rfx_rx k40 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 1ull << 40};
    rfx_rx over = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_MUL, .l = &a, .r = &k40, .env = env};
    rfx_rx oh = {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &over};
    rfx_rx *o1[1] = {&oh};
    rfx_dev_rows gz = up(&z), gd;
    rfx_gpu_rows_init(&gd, 1);
    CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gz, NULL, o1, 1, &gd), RFX_ERR_DIV0);
    rfx_rows_free(&z);
    rfx_gpu_rows_free(gpu, &gz);
    rfx_gpu_rows_free(gpu, &gd);
    rfx_fn_env_free(env);
}

/* A random text over a few letters, `%`, `_` and a two-byte character, 0-11 bytes. */
static size_t random_text(char *buf)
{
    static const char *const parts[] = {"a", "b", "x", "%", "_", "\xc3\xa9"};
    size_t n = 0;
    for (int k = (int)(rnd() % 9); k > 0; k--) {
        const char *q = parts[rnd() % 6];
        memcpy(buf + n, q, strlen(q));
        n += strlen(q);
    }
    return n;
}

/* A pattern that s matches: some bytes made `_`, some runs made `%` (may split a two-byte
 * character: then it need not match, which is tested all the same). */
static size_t pattern_of(const char *s, size_t n, char *buf)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd() % 6;
        if (r == 0)
            buf[m++] = '_';
        else if (r == 1) {
            buf[m++] = '%';
            i += rnd() % 3;
        } else
            buf[m++] = s[i];
    }
    if (rnd() % 3 == 0)
        buf[m++] = '%';
    return m;
}

/* The functors that only read texts (like, contains, strlen, the symbols' order) in the
 * device's interpreter, over its copy of the symbol table, against the host's: pairs of a
 * pattern (half of them made to match) and a text; then symbols added since the copy was
 * made (it grows by them), then another table (it is made again). */
static void test_mapfilter_texts(void)
{
    if (!need_gpu())
        return;
    for (int table = 0; table < 2; table++) {
        rfx_symtab *syms = rfx_symtab_new();
        rfx_fn_env *env = rfx_fn_env_new(syms);
        CU_ASSERT_PTR_NOT_NULL_FATAL(env);
        rfx_rx c0 = col(0), c1 = col(1);
        rfx_rx *pair[2] = {&c0, &c1}, *one[1] = {&c1};
        rfx_rx fn[4] = {
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_LIKE, .nargs = 2, .args = pair, .env = env},
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_CONTAINS, .nargs = 2, .args = pair, .env = env},
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_STRLEN, .nargs = 1, .args = one, .env = env},
            {.kind = RFX_RX_FN, .prim = RFX_NUMBER, .op = RFX_FX_SYMCMP, .nargs = 2, .args = pair, .env = env},
        };
        rfx_rx *outs[5] = {&fn[0], &fn[1], &fn[2], &fn[3], &c0};
        for (int round = 0; round < 2; round++) {
            size_t n = quick ? 20000 : 300000;
            rfx_rows r;
            rfx_rows_init(&r, 2);
            char text[64], pat[64];
            for (size_t i = 0; i < n; i++) {
                size_t tn = random_text(text), pn = rnd() % 2 ? pattern_of(text, tn, pat) : random_text(pat);
                uint32_t row[2] = {rfx_symtab_intern(syms, pat, pn), rfx_symtab_intern(syms, text, tn)};
                if (i % 1000 == 0)   /* an id past the table reads as the empty text */
                    row[rnd() % 2] = rfx_symtab_size(syms) + 7;
                CU_ASSERT_EQUAL_FATAL(rfx_rows_push(&r, row), RFX_OK);
            }
            mapfilter_vs_cpu(&r, NULL, outs, 5);
            mapfilter_vs_cpu(&r, &fn[0], outs, 5);
            rfx_rows_free(&r);
        }
        rfx_fn_env_free(env);
        rfx_symtab_free(syms);
    }
}

/* n rows of `arity` words, each one of the 8 vals (or, with some_random, a random word one
 * time in four). */
static rfx_rows rows_of_values(size_t n, int arity, const uint32_t vals[8], bool some_random)
{
    rfx_rows a;
    rfx_rows_init(&a, arity);
    CU_ASSERT_EQUAL_FATAL(rfx_rows_reserve(&a, n), RFX_OK);
    for (size_t i = 0; i < n * (size_t)arity; i++)
        a.data[i] = some_random && rnd() % 4 == 0 ? (uint32_t)rnd() : vals[rnd() % 8];
    a.n = n;
    return a;
}

/* SELECTs whose predicate is a conjunction of comparisons of columns and constants and
 * whose outputs are plain columns run without the interpreter (k_select_simple): rows of 1
 * to 4 columns, every comparison in number (signed) and unsigned order, column against
 * constant, constant against column, column against column, conjunctions, outputs
 * permuted and repeated, sizes around its tiles (4,096 rows of 1-2 columns, 2,048 of 3-4),
 * against the CPU; a float comparison takes the interpreter and must agree too. Values
 * come from a few that collide and straddle the sign bit, so every outcome occurs. */
static void test_select_simple(void)
{
    if (!need_gpu())
        return;
    static const uint32_t vals[] = {0, 1, 7, 8, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xffffffffu};
    static const size_t n_of[] = {1, 2047, 2048, 2049, 4095, 4096, 4097, 100003, 1000003};
    rfx_rx c[4] = {col(0), col(1), col(2), col(3)};
    int cases = 0;
    for (int arity = 1; arity <= 4; arity++)
        for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++) {
            if (quick && n_of[s] > 200000)
                continue;
            rfx_rows a = rows_of_values(n_of[s], arity, vals, true);
            for (int op = RFX_LT; op <= RFX_NE; op++)
                for (int prim = RFX_NUMBER; prim <= RFX_FLOAT; prim++)
                    for (int form = 0; form < 4; form++) {
                        /* form 0: $last op 7; 1: 0x80000000 op $0; 2: $0 op $last; 3: (2) and $0 != 1 */
                        rfx_rx k7 = {.kind = RFX_RX_CONST, .prim = prim, .value = 7};
                        rfx_rx kmin = {.kind = RFX_RX_CONST, .prim = prim, .value = 0x80000000u};
                        rfx_rx k1 = {.kind = RFX_RX_CONST, .prim = prim, .value = 1};
                        rfx_rx *last = &c[arity - 1];
                        rfx_rx cmp = {.kind = RFX_RX_CMP, .prim = prim, .op = op};
                        cmp.l = form == 0 ? last : form == 1 ? &kmin : &c[0];
                        cmp.r = form == 0 ? &k7 : form == 1 ? &c[0] : last;
                        rfx_rx ne1 = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_NE, .l = &c[0], .r = &k1};
                        rfx_rx both = {.kind = RFX_RX_AND, .l = &cmp, .r = &ne1};
                        rfx_rx *outs[5] = {last, &c[0], &c[arity / 2], last, &c[0]};
                        int nout = 1 + (op + form + arity) % 5;
                        mapfilter_vs_cpu(&a, form == 3 ? &both : &cmp, outs, nout);
                        cases++;
                    }
            rfx_rows_free(&a);
        }
    CU_ASSERT(cases > 1000);
}

/* MAPs whose outputs are columns, constants or one +, - or * of two of them (number,
 * unsigned, float) run a row a thread without the interpreter (k_map_terms): rows of 1 to
 * 4 columns, 1 to 6 outputs, against the CPU. Values collide, wrap and straddle the sign
 * bit; floats include inf, so inf - inf and inf * 0 make NaNs, which must be the same one
 * (0x7fc00000) on both. A MAP with a negation, and a SELECT with such outputs, take the
 * interpreter and must agree too. */
static void test_map_simple(void)
{
    if (!need_gpu())
        return;
    static const uint32_t ints[] = {0, 1, 7, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xffffffffu, 65536};
    static const uint32_t floats[] = {0, 0x80000000u, 0x3fc00000u /* 1.5 */, 0xc0100000u /* -2.25 */,
                                      0x7149f2cau /* 1e30 */, 0x7f800000u /* inf */, 0x40400000u /* 3 */, 0x00000001u};
    static const size_t n_of[] = {1, 2047, 2049, 4096, 4097, 100003, 1000003};
    rfx_rx c[4];
    int cases = 0;
    for (int fl = 0; fl < 2; fl++)
        for (int arity = 1; arity <= 4; arity++)
            for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++) {
                if (quick && n_of[s] > 200000)
                    continue;
                rfx_rows a = rows_of_values(n_of[s], arity, fl ? floats : ints, !fl);
                for (int prim = fl ? RFX_FLOAT : RFX_NUMBER; prim <= (fl ? RFX_FLOAT : RFX_UNSIGNED); prim++) {
                    for (int i = 0; i < 4; i++)
                        c[i] = (rfx_rx){.kind = RFX_RX_COL, .prim = prim, .col = i};
                    rfx_rx k = {.kind = RFX_RX_CONST, .prim = prim, .value = fl ? 0x3fc00000u : 0xfffffff9u};
                    rfx_rx *last = &c[arity - 1];
                    rfx_rx terms[6];
                    for (int op = RFX_ADD; op <= RFX_MUL; op++)
                        for (int form = 0; form < 4; form++) {
                            /* form 0: $0 op $last; 1: $last op k; 2: k op $0 (and a negation); 3: SELECT $0 < $last */
                            rfx_rx *l = form == 2 ? &k : form == 1 ? last : &c[0], *r = form == 2 ? &c[0] : form == 1 ? &k : last;
                            terms[0] = (rfx_rx){.kind = RFX_RX_BIN, .prim = prim, .op = op, .l = l, .r = r};
                            terms[1] = (rfx_rx){.kind = RFX_RX_BIN, .prim = prim, .op = (op + 1) % 3, .l = r, .r = l};
                            terms[2] = (rfx_rx){.kind = RFX_RX_NEG, .prim = prim, .l = last};
                            rfx_rx *outs[6] = {&terms[0], last, &k, &terms[1], &c[0], &terms[0]};
                            if (form == 2)
                                outs[4] = &terms[2];
                            int nout = 1 + (op + form + arity + (int)s) % 6;
                            rfx_rx lt = {.kind = RFX_RX_CMP, .prim = prim, .op = RFX_LT, .l = &c[0], .r = last};
                            mapfilter_vs_cpu(&a, form == 3 ? &lt : NULL, outs, nout);
                            cases++;
                        }
                }
                rfx_rows_free(&a);
            }
    CU_ASSERT(cases > 500);
}

/* The benchmark's fixed-cost probe: launched alone, and waited for through its host word
 * many times over (each wait must see its own launch's tag). */
static void test_empty_launch(void)
{
    if (!need_gpu())
        return;
    for (int i = 0; i < 1000; i++)
        CU_ASSERT_EQUAL_FATAL(rfx_gpu_empty_launch(gpu, i % 3 != 0), RFX_OK);
    CU_ASSERT_EQUAL(rfx_gpu_sync(gpu), RFX_OK);
}

/* The tiled kernels' look-back words are kept between launches and tagged with the
 * launch (no clearing): SELECTs by plain comparisons (a block a tile), by the interpreter
 * (resident blocks taking tiles until one is past the end) and semi-joins (by merge path
 * and by tiles of the left side), over inputs of 1 to ~260,000 rows in turn, so that every
 * launch finds words an earlier launch left, over more than 65,535 launches (the tags
 * wrap; 3,000 when quick). */
static void test_lookback_across_launches(void)
{
    if (!need_gpu())
        return;
    static const size_t n_of[] = {1, 4097, 300007, 2049};
    rfx_rx c0 = col(0), c1 = col(1), k = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 512};
    rfx_rx sum = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &c0, .r = &c1};
    rfx_rx plain = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &c0, .r = &k};
    rfx_rx arith = {.kind = RFX_RX_CMP, .prim = RFX_UNSIGNED, .op = RFX_LT, .l = &sum, .r = &k};
    rfx_rx *outs[2] = {&c1, &c0};
    const rfx_rx *preds[2] = {&plain, &arith};
    enum { N = sizeof n_of / sizeof n_of[0] };
    rfx_rows h[N], want[N][3];
    rfx_dev_rows d[N];
    for (int i = 0; i < N; i++) {
        h[i] = rows_random(n_of[i], 2, UNIFORM, 1024, true);   /* sets that overlap */
        d[i] = up(&h[i]);
        for (int p = 0; p < 2; p++) {
            rfx_rows_init(&want[i][p], 2);
            CU_ASSERT_EQUAL(rfx_cpu_mapfilter(&h[i], preds[p], outs, 2, &want[i][p], 4), RFX_OK);
        }
    }
    for (int i = 0; i < N; i++) {   /* the rows of h[i] also in h[i - 1] (sets): a semi-join */
        rfx_rows_init(&want[i][2], 2);
        CU_ASSERT_EQUAL(rfx_cpu_semijoin(&h[i], &h[(i + N - 1) % N], 2, true, &want[i][2], 4), RFX_OK);
    }
    const int launches = quick ? 3000 : 70000;
    int wrong = 0;
    rfx_dev_rows out;
    rfx_gpu_rows_init(&out, 2);
    for (int t = 0; t < launches && wrong < 5; t++) {
        int i = t % N, op = (t / N) % 3;   /* the sizes in turn, each with every operator */
        if (n_of[i] > 100000 && t % (16 * N) >= 3 * N)
            i = (i + 1) % N;   /* the large input 1 time in 16: the loop stays short */
        rfx_status st = op < 2 ? rfx_gpu_mapfilter(gpu, &d[i], preds[op], outs, 2, &out)
                               : rfx_gpu_semijoin(gpu, &d[i], &d[(i + N - 1) % N], 2, true, &out);
        bool ok = st == RFX_OK && out.n == want[i][op].n;
        if (ok && (t % 997 == 0 || t >= launches - 3 * N)) {
            rfx_rows got = down(&out);
            ok = same(&got, &want[i][op]);
            rfx_rows_free(&got);
        }
        if (!ok) {
            fprintf(stderr, "\n    launch %d (input %zu rows, operator %d): %zu rows, want %zu (%s)\n", t, n_of[i], op,
                    out.n, want[i][op].n, st ? rfx_gpu_error(gpu) : "ok");
            wrong++;
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    rfx_gpu_rows_free(gpu, &out);
    for (int i = 0; i < N; i++) {
        rfx_gpu_rows_free(gpu, &d[i]);
        rfx_rows_free(&h[i]);
        for (int p = 0; p < 3; p++)
            rfx_rows_free(&want[i][p]);
    }
}

/* The tiled interpreter's rows per thread (8, 4, 2, or not tiled) follow the row width
 * and the stack depth: chains of sums and differences 2 to 12 deep and rows of 2, 20 and
 * 45 columns,
 * over sizes around its tiles, against the CPU; a division by zero in a row the predicate
 * rejects is not an error (the CPU does not evaluate it). */
static void test_mapfilter_depths(void)
{
    if (!need_gpu())
        return;
    rfx_rx c0 = col(0), c1 = col(1), chain[12];
    rfx_rx gt = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &c1};
    static const size_t n_of[] = {511, 512, 513, 2047, 2048, 2049, 100003};
    for (int d = 0; d < 12; d++)   /* chain[d]: sums and differences of the columns, depth d + 2 */
        chain[d] = (rfx_rx){.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = d % 3 ? RFX_ADD : RFX_SUB,
                            .l = d % 2 ? &c1 : &c0, .r = d ? &chain[d - 1] : &c1};
    /* rows of 2 columns with stack depths 2 to 12, and of 20 and 45 columns (the widest
     * rows are not tiled: their stage would not fit) */
    rfx_rx last20 = col(19), last45 = col(44);
    rfx_rx gt20 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &last20};
    rfx_rx gt45 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &last45};
    rfx_rx sum20 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &last20, .r = &c1};
    rfx_rx sum45 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_ADD, .l = &last45, .r = &c1};
    for (int d = -2; d < 12; d += (d < 1 ? 1 : 3))
        for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++)
            for (int withp = 0; withp < 2; withp++) {
                int arity = d == -2 ? 20 : d == -1 ? 45 : 2, nout = d == 0 ? 1 : 2;
                rfx_rx *outs[2] = {d == -2 ? &sum20 : d == -1 ? &sum45 : &chain[d], &c0};
                rfx_rx *pred = !withp ? NULL : d == -2 ? &gt20 : d == -1 ? &gt45 : &gt;
                rfx_rows a = rows_random(n_of[s], arity, WIDE, 0, false);
                mapfilter_vs_cpu(&a, pred, outs, nout);
                rfx_rows_free(&a);
            }
    rfx_rows z = rows_random(5000, 2, UNIFORM, 3, false);
    for (size_t i = 0; i < z.n; i++)
        z.data[2 * i + 1] = z.data[2 * i] + 1 + (uint32_t)(i % 5);   /* $0 > $1 nowhere ... */
    z.data[2 * 777] = 5;
    z.data[2 * 777 + 1] = 0;   /* ... but here, where $0 / $1 is fine */
    z.data[2 * 4000] = 0;
    z.data[2 * 4000 + 1] = 0;   /* a zero divisor in a rejected row */
    rfx_rx quo = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &c1, .r = &c0};
    rfx_rx *o1[1] = {&quo};
    rfx_dev_rows gz = up(&z), gd;
    rfx_gpu_rows_init(&gd, 1);
    CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gz, &gt, o1, 1, &gd), RFX_OK);
    CU_ASSERT_EQUAL(gd.n, 1);
    rfx_rows back = down(&gd);
    CU_ASSERT(back.n == 1 && back.data[0] == 0);
    rfx_rows_free(&back);
    rfx_rows_free(&z);
    rfx_gpu_rows_free(gpu, &gz);
    rfx_gpu_rows_free(gpu, &gd);
}

/* A division guarded by the conditions before it (`$1 != 0, $0 / $1 > 1`) is evaluated only
 * where they hold, as C's && and the CPU do: zero divisors in a tenth of the rows, guards one
 * and two ANDs deep, through the tiled interpreter (rows of 2 columns), the per-row one (45
 * columns) and the 64-bit one (a decimal's checked arithmetic beside), against the CPU;
 * the same division unguarded is still an error. */
static void test_guarded_division(void)
{
    if (!need_gpu())
        return;
    rfx_fn_env *env = rfx_fn_env_new(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(env);
    rfx_rx c0 = col(0), c1 = col(1), zero = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 0};
    rfx_rx one = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER, .value = 1};
    rfx_rx nz = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_NE, .l = &c1, .r = &zero};
    rfx_rx quo = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_DIV, .l = &c0, .r = &c1};
    rfx_rx rem = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER, .op = RFX_MOD, .l = &c0, .r = &c1};
    rfx_rx big = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &quo, .r = &one};
    rfx_rx even = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_EQ, .l = &rem, .r = &zero};
    rfx_rx pos = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER, .op = RFX_GT, .l = &c0, .r = &one};
    rfx_rx guarded = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &nz, .r = &big};
    rfx_rx inner = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &pos, .r = &even};
    rfx_rx nested = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &nz, .r = &inner};
    rfx_rx *outs[2] = {&quo, &c0};
    /* 64-bit: the pair (words 0-1) over the pair (words 2-3) */
    rfx_rx w[4];
    for (int k = 0; k < 4; k++)
        w[k] = (rfx_rx){.kind = RFX_RX_COL, .prim = k % 2 ? RFX_WORD : RFX_NUMBER64, .col = k};
    rfx_rx a = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &w[0], .r = &w[1]};
    rfx_rx b = {.kind = RFX_RX_PAIR, .prim = RFX_NUMBER64, .l = &w[2], .r = &w[3]};
    rfx_rx zero64 = {.kind = RFX_RX_CONST, .prim = RFX_NUMBER64, .value = 0};
    rfx_rx nz64 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER64, .op = RFX_NE, .l = &b, .r = &zero64};
    rfx_rx quo64 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_DIV, .l = &a, .r = &b};
    rfx_rx sum64 = {.kind = RFX_RX_BIN, .prim = RFX_NUMBER64, .op = RFX_ADD, .l = &quo64, .r = &a, .env = env};
    rfx_rx big64 = {.kind = RFX_RX_CMP, .prim = RFX_NUMBER64, .op = RFX_GT, .l = &sum64, .r = &zero64};
    rfx_rx guarded64 = {.kind = RFX_RX_AND, .prim = RFX_NUMBER, .l = &nz64, .r = &big64};
    rfx_rx lo64 = {.kind = RFX_RX_HALF, .prim = RFX_WORD, .op = 1, .l = &quo64};
    rfx_rx *outs64[2] = {&lo64, &w[1]};
    static const size_t n_of[] = {1000, 2049, 100003};
    for (size_t s = 0; s < sizeof n_of / sizeof n_of[0]; s++)
        for (int arity = 2; arity <= 45; arity += 43) {
            rfx_rows r = rows_random(n_of[s], arity, UNIFORM, 50, false);
            for (size_t i = 0; i < r.n; i += 10)
                r.data[i * (size_t)arity + 1] = 0;
            mapfilter_vs_cpu(&r, &guarded, outs, 2);
            mapfilter_vs_cpu(&r, &nested, outs, 2);
            rfx_dev_rows gr = up(&r), gd;   /* unguarded: the zero divisors fail */
            rfx_gpu_rows_init(&gd, 1);
            CU_ASSERT_EQUAL(rfx_gpu_mapfilter(gpu, &gr, &big, outs, 1, &gd), RFX_ERR_DIV0);
            rfx_gpu_rows_free(gpu, &gr);
            rfx_gpu_rows_free(gpu, &gd);
            rfx_rows_free(&r);
        }
    rfx_rows r = rows_random(20000, 4, UNIFORM, 7, false);
    for (size_t i = 0; i < r.n; i += 10)
        r.data[i * 4 + 2] = r.data[i * 4 + 3] = 0;
    mapfilter_vs_cpu(&r, &guarded64, outs64, 2);
    rfx_rows_free(&r);
    rfx_fn_env_free(env);
}

/* 64-bit kinds: values of two words (column 1 the high, 2 the low), in groups of every size
 * (a ZIPF key: groups past a run of 1,024 rows fold run by run, also on the CPU) and over
 * the whole relation; sums that overflow on the way but not in total, and in total. */
static void test_aggregate_wide(void)
{
    if (!need_gpu())
        return;
    const rfx_prim prims[] = {RFX_NUMBER64, RFX_UNSIGNED64, RFX_FLOAT64};
    rfx_rows all;   /* a nullary outer relation: one empty tuple */
    rfx_rows_init(&all, 0);
    all.n = 1;
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MEAN; fn++)
        for (int p = 0; p < 3; p++)
            for (size_t s = 0; s < NS; s++) {
                if (quick && sizes[s] > 70000)
                    continue;
                rfx_rows a = rows_random(s ? sizes[s - 1] : 0, 1, UNIFORM, 300, true);
                rfx_rows b = rows_random(sizes[s], 3, ZIPF, 400, true);
                for (size_t i = 0; i < b.n; i++)   /* float64s near 1; integers of every sign */
                    if (prims[p] == RFX_FLOAT64)
                        b.data[i * 3 + 1] = 0x3ff00000u + (b.data[i * 3 + 1] & 0xffff);
                    else if (i % 2)
                        b.data[i * 3 + 1] |= 0x80000000u;
                bool wide = fn != RFX_AGG_COUNT;
                int c = fn == RFX_AGG_COUNT ? -1 : 1;
                for (int k = 0; k < 2; k++) {
                    rfx_rows *outer = k ? &a : &all, hc;
                    rfx_rows_init(&hc, outer->arity + 1 + wide);
                    rfx_status want = rfx_cpu_aggregate(outer, &b, k, (rfx_aggfn)fn, c, prims[p], &hc);
                    rfx_dev_rows ga = up(outer), gb = up(&b), gd;
                    rfx_gpu_rows_init(&gd, outer->arity + 1 + wide);
                    rfx_status got = rfx_gpu_aggregate(gpu, &ga, &gb, k, (rfx_aggfn)fn, c, prims[p], &gd);
                    if (want == RFX_OK) {
                        gpu_agrees(got, &gd, &hc);
                    } else {   /* an unsigned sum past 2^64: both fail */
                        CU_ASSERT_EQUAL(got, want);
                        rfx_rows_free(&hc);
                        rfx_gpu_rows_free(gpu, &gd);
                    }
                    rfx_gpu_rows_free(gpu, &ga);
                    rfx_gpu_rows_free(gpu, &gb);
                }
                rfx_rows_free(&a);
                rfx_rows_free(&b);
            }
    /* -2^63 - 1 + (2^63 - 1): past 64 bits on the way, -2 in total; then past in total, in a
     * group of one run and in one of ten runs */
    for (int n = 3; n <= 10000; n += 9997) {
        rfx_rows b;
        rfx_rows_init(&b, 3);
        CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, 0x80000000u, 0}), RFX_OK);
        CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, 0xffffffffu, 0xffffffffu}), RFX_OK);
        for (int i = 2; i < n; i++)
            CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, i == n - 1 ? 0x7fffffffu : 0, i == n - 1 ? 0xffffffffu : 0}),
                            RFX_OK);
        for (int past = 0; past < 2; past++) {
            for (int j = 0; past && j < 2; j++)   /* two more: the total leaves 64 bits */
                CU_ASSERT_EQUAL(rfx_rows_push(&b, (uint32_t[]){1, 0x7fffffffu, 0xffffffffu}), RFX_OK);
            rfx_rows hc;
            rfx_rows_init(&hc, 3);
            CU_ASSERT_EQUAL(rfx_cpu_aggregate(&all, &b, 0, RFX_AGG_SUM, 1, RFX_NUMBER64, &hc),
                            past ? RFX_ERR_DIV0 : RFX_OK);
            CU_ASSERT(past || (hc.n == 1 && hc.data[0] == 0xffffffffu && hc.data[1] == 0xfffffffeu));
            rfx_dev_rows ga = up(&all), gb = up(&b), gd;
            rfx_gpu_rows_init(&gd, 3);
            rfx_status st = rfx_gpu_aggregate(gpu, &ga, &gb, 0, RFX_AGG_SUM, 1, RFX_NUMBER64, &gd);
            if (past) {
                CU_ASSERT_EQUAL(st, RFX_ERR_DIV0);
                rfx_rows_free(&hc);
                rfx_gpu_rows_free(gpu, &gd);
            } else {
                gpu_agrees(st, &gd, &hc);
            }
            rfx_gpu_rows_free(gpu, &ga);
            rfx_gpu_rows_free(gpu, &gb);
        }
        rfx_rows_free(&b);
    }
    rfx_rows_free(&all);
}

/* An outer relation whose rows repeat their keys (an atom's rows, not its keys: runs of 1 to
 * 60 rows and one of 100,000), sorted on the key as plans give it: each row takes its run
 * head's value, found by galloping back from it. */
static void test_aggregate_outer_runs(void)
{
    if (!need_gpu())
        return;
    rfx_rows a, b = rows_random(200000, 2, ZIPF, 3000, true);
    rfx_rows_init(&a, 2);
    for (uint32_t key = 0; key < 3000; key++) {
        size_t len = key == 7 ? 100000 : 1 + (size_t)(rnd() % 60);
        for (size_t q = 0; q < len; q++)
            CU_ASSERT_EQUAL(rfx_rows_push(&a, (uint32_t[]){key, (uint32_t)rnd()}), RFX_OK);
    }
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MAX; fn++) {
        rfx_rows hc;
        rfx_rows_init(&hc, 3);
        int c = fn == RFX_AGG_COUNT ? -1 : 1;
        CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, (rfx_aggfn)fn, c, RFX_NUMBER, &hc), RFX_OK);
        rfx_dev_rows ga = up(&a), gb = up(&b), gd;
        rfx_gpu_rows_init(&gd, 3);
        gpu_agrees(rfx_gpu_aggregate(gpu, &ga, &gb, 1, (rfx_aggfn)fn, c, RFX_NUMBER, &gd), &gd, &hc);
        rfx_gpu_rows_free(gpu, &ga);
        rfx_gpu_rows_free(gpu, &gb);
    }
    rfx_rows_free(&a);
    rfx_rows_free(&b);
}

static void test_aggregate(void)
{
    if (!need_gpu())
        return;
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MAX; fn++)
        for (int prim = RFX_NUMBER; prim <= RFX_FLOAT; prim++)
            for (size_t s = 0; s < NS - 1; s++) {
                if (quick && sizes[s + 1] > 70000)
                    continue;
                rfx_rows a = rows_random(sizes[s], 1, UNIFORM, 300, true), b = rows_random(sizes[s + 1], 2, ZIPF, 400, true);
                rfx_rows hc;
                rfx_rows_init(&hc, 2);
                int c = fn == RFX_AGG_COUNT ? -1 : 1;
                CU_ASSERT_EQUAL(rfx_cpu_aggregate(&a, &b, 1, (rfx_aggfn)fn, c, (rfx_prim)prim, &hc), RFX_OK);
                rfx_dev_rows ga = up(&a), gb = up(&b), gd;
                rfx_gpu_rows_init(&gd, 2);
                gpu_agrees(rfx_gpu_aggregate(gpu, &ga, &gb, 1, (rfx_aggfn)fn, c, (rfx_prim)prim, &gd), &gd, &hc);
                rfx_rows_free(&a);
                rfx_rows_free(&b);
                rfx_gpu_rows_free(gpu, &ga);
                rfx_gpu_rows_free(gpu, &gb);
            }
    /* groups too large for one thread (folded by every block where the order cannot
     * matter): one group over a whole relation (a nullary outer relation), and three keys
     * with a million rows, 20,000 and 9 beside smaller ones, every kind and function */
    rfx_rows all;
    rfx_rows_init(&all, 0);
    all.n = 1;
    rfx_rows few;
    rfx_rows_init(&few, 1);
    for (uint32_t key = 0; key < 40; key++)
        CU_ASSERT_EQUAL(rfx_rows_push(&few, &key), RFX_OK);
    rfx_rows many = rows_random(quick ? 300000 : 3000000, 2, WIDE, 0, false);
    for (size_t i = 0; i < many.n; i++)   /* keys 0 (most), 1 (20,000), 2 (9), 3..39 */
        many.data[2 * i] = i < 20000 ? 1 : i < 20009 ? 2 : i < 21000 ? 3 + (uint32_t)(i % 37) : 0;
    rfx_cpu_sort(&many, 4);
    for (int fn = RFX_AGG_COUNT; fn <= RFX_AGG_MAX; fn++)
        for (int prim = RFX_NUMBER; prim <= RFX_FLOAT; prim++)
            for (int k = 0; k < 2; k++) {
                rfx_rows *a = k ? &few : &all, hc;
                rfx_rows_init(&hc, a->arity + 1);
                int c = fn == RFX_AGG_COUNT ? -1 : 1;
                CU_ASSERT_EQUAL(rfx_cpu_aggregate(a, &many, k, (rfx_aggfn)fn, c, (rfx_prim)prim, &hc), RFX_OK);
                rfx_dev_rows ga = up(a), gb = up(&many), gd;
                rfx_gpu_rows_init(&gd, a->arity + 1);
                gpu_agrees(rfx_gpu_aggregate(gpu, &ga, &gb, k, (rfx_aggfn)fn, c, (rfx_prim)prim, &gd), &gd, &hc);
                rfx_gpu_rows_free(gpu, &ga);
                rfx_gpu_rows_free(gpu, &gb);
            }
    rfx_rows_free(&all);
    rfx_rows_free(&few);
    rfx_rows_free(&many);
}

/* Every end-to-end case with outputs and the default options, run on both backends:
 * identical files. */
static void test_programs_both_backends(void)
{
    if (!need_gpu() || quick)
        return;
    char **names = list_dir(env_or("RFX_TEST_CASES", RFX_CASES_DIR));
    int compared = 0;
    for (char **n = names; n && *n; n++) {
        char dir[4096], exp[4200];
        snprintf(dir, sizeof dir, "%s/%s", env_or("RFX_TEST_CASES", RFX_CASES_DIR), *n);
        snprintf(exp, sizeof exp, "%s/expected", dir);
        if (!is_dir(exp) || !file_exists(strcat(strcpy(exp, dir), "/program.dl")))
            continue;
        if (file_exists(strcat(strcpy(exp, dir), "/args")))
            continue;   /* a case with options of its own: test_cases runs it (RFX_BACKEND=cuda) */
        char *outs[2];
        for (int b = 0; b < 2; b++) {
            outs[b] = make_temp_dir();
            char facts[4200];
            snprintf(facts, sizeof facts, "%s/facts", dir);
            char *argv[] = {(char *)env_or("RFX_TEST_BIN", RFX_BIN), b ? "--backend=cuda" : "--backend=cpu", "-F", is_dir(facts) ? "facts" : ".",
                            "-D", outs[b], "--tune", "jit_min_rows=0,jit_background=0,lftj_trie_from=0", "program.dl", NULL};
            run_result r = run_prog(dir, argv);
            if (r.code != 0)
                fprintf(stderr, "\n    %s on %s: exit %d: %s", *n, b ? "cuda" : "cpu", r.code, r.err ? r.err : "");
            CU_ASSERT_EQUAL(r.code, 0);
            run_free(&r);
        }
        char **files = list_dir(outs[0]);
        for (char **f = files; f && *f; f++) {
            char p0[4300], p1[4300];
            snprintf(p0, sizeof p0, "%s/%s", outs[0], *f);
            snprintf(p1, sizeof p1, "%s/%s", outs[1], *f);
            char *t0 = read_file(p0, NULL), *t1 = read_file(p1, NULL);
            bool eq = t0 && t1 && strcmp(t0, t1) == 0;
            if (!eq)
                fprintf(stderr, "\n    %s: %s differs between backends", *n, *f);
            CU_ASSERT(eq);
            free(t0);
            free(t1);
        }
        free_list(files);
        for (int b = 0; b < 2; b++) {
            remove_tree(outs[b]);
            free(outs[b]);
        }
        compared++;
    }
    free_list(names);
    CU_ASSERT(compared > 20);
}

void gpu_exprs_tests(CU_pSuite s)
{
    CU_add_test(s, "map and filter", test_mapfilter);
    CU_add_test(s, "map and filter over 64-bit values, decimals and dates", test_mapfilter_wide);
    CU_add_test(s, "like, contains, strlen and the symbols' order over texts on the device", test_mapfilter_texts);
    CU_add_test(s, "map and filter: stack depths, rejected rows", test_mapfilter_depths);
    CU_add_test(s, "divisions guarded by the conditions before them", test_guarded_division);
    CU_add_test(s, "select by plain comparisons", test_select_simple);
    CU_add_test(s, "maps of simple terms", test_map_simple);
    CU_add_test(s, "empty launches, waited for and not", test_empty_launch);
    CU_add_test(s, "look-back words kept across launches", test_lookback_across_launches);
    CU_add_test(s, "aggregates", test_aggregate);
    CU_add_test(s, "aggregates over outer rows that repeat their keys", test_aggregate_outer_runs);
    CU_add_test(s, "aggregates of 64-bit values, by runs", test_aggregate_wide);
    CU_add_test(s, "programs on both backends", test_programs_both_backends);
}
