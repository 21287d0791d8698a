/* test_io.c: facts files read in slices (runtime.h's rfx_read_opts.slice), as each
 * process of a distributed run reads them: the slices' rows together are the whole file's,
 * at every count of slices (more slices than lines too); messages name the file's own
 * line numbers; skipped lines are counted per slice; gzip files are not sliceable. And a
 * file read on several threads is read as on one. */
#include "harness.h"

#include "base.h"
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rfx_prim two_numbers[2] = {RFX_NUMBER, RFX_NUMBER};

/* The file's rows read as slice k of n (n 1: whole), sorted; the status in *st. */
static rfx_rows read_slice(const char *path, bool edges, int k, int n, long *skipped, long *first, FILE *err,
                           rfx_status *st)
{
    rfx_symtab *syms = rfx_symtab_new();
    rfx_read_opts ro = {NULL, edges, 2, false, false, NULL, NULL, k, n, skipped, first, NULL, 0};
    rfx_rows r;
    rfx_rows_init(&r, 2);
    *st = rfx_read_facts(path, two_numbers, syms, &ro, &r, err);
    if (*st == RFX_OK)
        *st = rfx_cpu_sort(&r, 1);
    rfx_symtab_free(syms);
    return r;
}

/* Rows of the slices 0..n-1, appended, then sorted. */
static rfx_rows read_by_slices(const char *path, bool edges, int n, long *skipped, long *first)
{
    rfx_rows all;
    rfx_rows_init(&all, 2);
    *skipped = 0;
    *first = 0;
    for (int k = 0; k < n; k++) {
        long s = 0, f = 0;
        rfx_status st;
        rfx_rows part = read_slice(path, edges, k, n, &s, &f, stderr, &st);
        CU_ASSERT_EQUAL(st, RFX_OK);
        CU_ASSERT_EQUAL(rfx_rows_append(&all, &part), RFX_OK);
        if (s && !*skipped)
            *first = f;
        *skipped += s;
        rfx_rows_free(&part);
    }
    CU_ASSERT_EQUAL(rfx_cpu_sort(&all, 1), RFX_OK);
    return all;
}

static bool same_rows(const rfx_rows *a, const rfx_rows *b)
{
    return a->n == b->n && (a->n == 0 || memcmp(a->data, b->data, a->n * 2 * sizeof(uint32_t)) == 0);
}

/* Lines of a few digits and of ten; an even count ends without its last newline. */
static char *facts_text(int lines, unsigned seed)
{
    size_t cap = (size_t)lines * 48 + 64, len = 0;
    char *t = malloc(cap);
    for (int i = 0; t && i < lines; i++) {
        seed = seed * 1103515245u + 12345u;
        len += (size_t)snprintf(t + len, cap - len, "%u\t%u\n", seed % 1000,
                                (seed >> 10) % (i % 13 == 0 ? 4000000000u : 50u));
    }
    if (t && len)
        t[len - 1] = lines % 2 ? t[len - 1] : '\0';   /* every other file ends without a newline */
    return t;
}

static void slices_make_the_whole(void)
{
    char *dir = make_temp_dir(), *path = NULL;
    CU_ASSERT_FATAL(dir && asprintf(&path, "%s/e.facts", dir) > 0);
    static const int counts[] = {1, 2, 1000, 3001};
    for (int c = 0; c < 4; c++) {
        int lines = counts[c];
        char *text = facts_text(lines, (unsigned)lines);
        CU_ASSERT_FATAL(text && write_file(path, text));
        long s, f;
        rfx_status st;
        rfx_rows whole = read_slice(path, false, 0, 1, NULL, NULL, stderr, &st);
        CU_ASSERT_EQUAL(st, RFX_OK);
        for (int n = 2; n <= 9; n += 7) {
            rfx_rows parts = read_by_slices(path, false, n, &s, &f);
            CU_ASSERT(same_rows(&whole, &parts));
            rfx_rows_free(&parts);
        }
        rfx_rows parts = read_by_slices(path, false, lines + 5, &s, &f);   /* empty slices */
        CU_ASSERT(same_rows(&whole, &parts));
        rfx_rows_free(&parts);
        rfx_rows_free(&whole);
        free(text);
    }
    CU_ASSERT(rfx_facts_sliceable(path, 0));
    CU_ASSERT(!rfx_facts_sliceable(path, 1 << 30));
    free(path);
    remove_tree(dir);
    free(dir);
}

static void slice_messages_name_the_files_lines(void)
{
    char *dir = make_temp_dir(), *path = NULL;
    CU_ASSERT_FATAL(dir && asprintf(&path, "%s/e.txt", dir) > 0);
    char text[64 * 1000];
    size_t len = 0;
    for (int i = 1; i <= 1000; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s\n",
                                i == 400 || i == 820 ? "x y" : i == 3 ? "# a comment" : "12 34");
    CU_ASSERT_FATAL(write_file(path, text));
    long s, f;
    rfx_rows parts = read_by_slices(path, true, 4, &s, &f);   /* an edge list skips the two lines */
    CU_ASSERT_EQUAL(s, 2);
    CU_ASSERT_EQUAL(f, 400);
    CU_ASSERT_EQUAL(parts.n, 997);
    rfx_rows_free(&parts);
    /* a .facts file: line 400's is an error, named by the slice that holds it */
    len = 0;
    for (int i = 1; i <= 1000; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s\n", i == 400 ? "x\ty" : "12\t34");
    CU_ASSERT_FATAL(write_file(path, text));
    char *msg = NULL;
    size_t mlen = 0;
    FILE *err = open_memstream(&msg, &mlen);
    bool named = false;
    for (int k = 0; k < 4; k++) {
        rfx_status st;
        long sk = 0, fs = 0;
        rfx_rows r = read_slice(path, false, k, 4, &sk, &fs, err, &st);
        rfx_rows_free(&r);
        fflush(err);
        named |= st != RFX_OK && strstr(msg, "e.txt:400: error: column 1: 'x'") != NULL;
    }
    fclose(err);
    if (!named)
        fprintf(stderr, "messages: %s\n", msg);
    CU_ASSERT(named);
    free(msg);
    /* gzip cannot be cut by bytes */
    char *gz = NULL;
    CU_ASSERT_FATAL(asprintf(&gz, "%s/e.gz", dir) > 0);
    CU_ASSERT(write_file(gz, "\x1f\x8b\x08\x00"));
    CU_ASSERT(!rfx_facts_sliceable(gz, 0));
    free(gz);
    free(path);
    remove_tree(dir);
    free(dir);
}

/* The file of three columns read on one thread and on four: the same rows in the same order,
 * and the same symbol table (ids in the order symbols first come); the four threads' table,
 * which the caller frees. */
static rfx_symtab *read_on_one_and_four(const char *path, const rfx_prim *types, bool rfc4180, size_t want)
{
    rfx_symtab *syms[2] = {rfx_symtab_new(), rfx_symtab_new()};
    rfx_rows rows[2];
    for (int k = 0; k < 2; k++) {
        rfx_read_opts ro = {.threads = k ? 4 : 1, .rfc4180 = rfc4180};
        rfx_rows_init(&rows[k], 3);
        CU_ASSERT_EQUAL(rfx_read_facts(path, types, syms[k], &ro, &rows[k], stderr), RFX_OK);
    }
    CU_ASSERT_EQUAL(rows[0].n, want);
    CU_ASSERT(rows[0].n == rows[1].n && memcmp(rows[0].data, rows[1].data, rows[0].n * 3 * sizeof(uint32_t)) == 0);
    CU_ASSERT_EQUAL(rfx_symtab_size(syms[0]), rfx_symtab_size(syms[1]));
    for (uint32_t id = 0; id < rfx_symtab_size(syms[0]) && id < rfx_symtab_size(syms[1]); id++)
        CU_ASSERT(rfx_symtab_len(syms[0], id) == rfx_symtab_len(syms[1], id) &&
                  memcmp(rfx_symtab_str(syms[0], id), rfx_symtab_str(syms[1], id), rfx_symtab_len(syms[0], id)) == 0);
    for (int k = 0; k < 2; k++)
        rfx_rows_free(&rows[k]);
    rfx_symtab_free(syms[0]);
    return syms[1];
}

/* A file of symbols read on several threads: the same rows, in the same order, and the same
 * ids for the same symbols as one thread reads them (ids in the order symbols first come). */
static void symbols_on_threads_as_on_one(void)
{
    char *dir = make_temp_dir(), *path = NULL;
    CU_ASSERT_FATAL(dir && asprintf(&path, "%s/s.facts", dir) > 0);
    const int lines = 60000;
    size_t cap = (size_t)lines * 40, len = 0;
    char *text = malloc(cap);
    CU_ASSERT_FATAL(text != NULL);
    unsigned seed = 11;
    for (int i = 0; i < lines; i++) {
        seed = seed * 1103515245u + 12345u;
        len += (size_t)snprintf(text + len, cap - len, "s%u\t%u\t%s%u\n", (seed >> 8) % 5000, seed % 97,
                                i % 11 ? "t" : "", i % 11 ? i : 0);
    }
    CU_ASSERT_FATAL(write_file(path, text));
    static const rfx_prim types[3] = {RFX_SYMBOL, RFX_NUMBER, RFX_SYMBOL};
    rfx_symtab_free(read_on_one_and_four(path, types, false, (size_t)lines));
    free(text);
    free(path);
    remove_tree(dir);
    free(dir);
}

/* An RFC 4180 file read on several threads: records cut only outside quotes (quoted
 * newlines, separators and "" in fields that cross where pieces would be cut), the same
 * rows as on one thread, and an error's line the file's own. */
static void quoted_on_threads_as_on_one(void)
{
    char *dir = make_temp_dir(), *path = NULL;
    CU_ASSERT_FATAL(dir && asprintf(&path, "%s/q.csv", dir) > 0);
    const int records = 40000;
    size_t cap = (size_t)records * 64, len = 0;
    char *text = malloc(cap);
    CU_ASSERT_FATAL(text != NULL);
    long bad_line = 0, line = 1;
    for (int i = 0; i < records; i++) {
        if (i == 31000)
            bad_line = line;
        const char *field = i % 3 == 0 ? "\"a,\nb \"\"q\"\"\"" : i % 3 == 1 ? "plain" : "\"x\"";
        len += (size_t)snprintf(text + len, cap - len, "%d,%s,z\n", i % 977, field);
        line += 1 + (i % 3 == 0);
    }
    CU_ASSERT_FATAL(write_file(path, text));
    static const rfx_prim types[3] = {RFX_NUMBER, RFX_SYMBOL, RFX_SYMBOL};
    rfx_symtab *syms = read_on_one_and_four(path, types, true, (size_t)records);
    CU_ASSERT(rfx_symtab_find(syms, "a,\nb \"q\"", 8) != UINT32_MAX);
    /* a quote inside an unquoted field is text: the quotes' count no longer tells where
     * records end, and the file is read by following its fields */
    char *stray = malloc(cap + (size_t)records * 4);
    CU_ASSERT_FATAL(stray != NULL);
    size_t slen = 0;
    for (int i = 0; i < records; i++)
        slen += (size_t)snprintf(stray + slen, cap + (size_t)records * 4 - slen, "%d,%s,z\n", i % 977,
                                 i == 9000 ? "ab\"c" : i % 3 == 0 ? "\"a,\nb \"\"q\"\"\"" : "plain");
    CU_ASSERT_FATAL(write_file(path, stray));
    rfx_symtab *ss = read_on_one_and_four(path, types, true, (size_t)records);
    CU_ASSERT(rfx_symtab_find(ss, "ab\"c", 4) != UINT32_MAX);
    rfx_symtab_free(ss);
    free(stray);
    /* a record of two fields where three are wanted, late in the file */
    char *at = text;
    for (long l = 1; l < bad_line; l++)
        at = strchr(at, '\n') + 1;
    char *comma = strchr(at, '\n') - 2;   /* record 31000 is "N,plain,z" */
    CU_ASSERT_FATAL(*comma == ',');
    memmove(comma, comma + 2, strlen(comma + 2) + 1);   /* ",z" dropped */
    CU_ASSERT_FATAL(write_file(path, text));
    char *msg = NULL;
    size_t mlen = 0;
    FILE *err = open_memstream(&msg, &mlen);
    rfx_read_opts ro = {.threads = 4, .rfc4180 = true};
    rfx_rows r;
    rfx_rows_init(&r, 3);
    CU_ASSERT_EQUAL(rfx_read_facts(path, types, syms, &ro, &r, err), RFX_ERR_INPUT);
    fclose(err);
    char want[64];
    snprintf(want, sizeof want, "q.csv:%ld: error: expected 3 columns, found 2", bad_line);
    CU_ASSERT(msg && strstr(msg, want));
    if (!msg || !strstr(msg, want))
        fprintf(stderr, "\n    wanted '%s', got: %s", want, msg ? msg : "");
    free(msg);
    rfx_rows_free(&r);
    rfx_symtab_free(syms);
    free(text);
    free(path);
    remove_tree(dir);
    free(dir);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("facts in slices", NULL, NULL);
    CU_add_test(s, "the slices' rows together are the whole file's", slices_make_the_whole);
    CU_add_test(s, "messages name the file's lines; skipped lines counted", slice_messages_name_the_files_lines);
    CU_add_test(s, "symbols read on several threads are numbered as on one", symbols_on_threads_as_on_one);
    CU_add_test(s, "RFC 4180 files read on several threads as on one", quoted_on_threads_as_on_one);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add);
}
