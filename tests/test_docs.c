/* test_docs.c: the documentation says what rfx does.
 * - Every example of docs/language.md runs: each ```datalog block is run with
 *   `rfx -D - -F DIR` (DIR holding the ```facts NAME blocks before it) and its stdout must
 *   equal the ```output block after it. Every fenced block there must be one of the three.
 * - `rfx --help` with `rfx cliques --help`, docs/cli.md and the man page docs/rfx.1 name
 *   the same options.
 * - docs/cli.md's table of tuning knobs lists the knobs `rfx --tune help` prints, each
 *   with its default. */
#include "harness.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *docs_dir = RFX_DOCS_DIR;

/* ---- language.md ----------------------------------------------------------------------- */
typedef struct example {
    char *dir;                 /* temporary directory with the facts files */
    char *program;
    int line;                  /* of the datalog block, for messages */
} example;

/* Returns the fenced block starting after *p (which points at the opening fence's line
 * end) up to the closing fence; advances *p past it. */
static char *take_block(const char **p, int *line)
{
    const char *start = *p, *s = start;
    for (;;) {
        const char *nl = strchr(s, '\n');
        if (!nl)
            return NULL;
        (*line)++;
        if (strncmp(s, "```", 3) == 0 && (s[3] == '\n')) {
            size_t n = (size_t)(s - start);
            char *b = malloc(n + 1);
            memcpy(b, start, n);
            b[n] = 0;
            *p = nl + 1;
            return b;
        }
        s = nl + 1;
    }
}

static int run_example(const example *ex, const char *expected)
{
    char prog[600];
    snprintf(prog, sizeof prog, "%s/example.dl", ex->dir);
    if (!write_file(prog, ex->program))
        return 0;
    /* the user-defined functors' example calls the test library's (tests/functors) */
    char *argv[] = {RFX_BIN, "-D", "-", "-F", ex->dir, "-L", RFX_TEST_LIB_DIR, "-l", "testfunctors", prog, NULL};
    run_result r = run_prog(ex->dir, argv);
    int ok = r.code == 0 && r.out && strcmp(r.out, expected) == 0;
    if (!ok) {
        fprintf(stderr, "\n    docs/language.md:%d: example failed (exit %d)\n%s", ex->line, r.code, r.err ? r.err : "");
        if (r.out)
            show_diff("output", expected, r.out);
    }
    run_free(&r);
    return ok;
}

static void language_examples_run(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/language.md", docs_dir);
    char *doc = read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    const char *p = doc;
    int line = 0, examples = 0, passed = 0;
    example ex = {NULL, NULL, 0};
    while (*p) {
        const char *nl = strchr(p, '\n');
        const char *next = nl ? nl + 1 : p + strlen(p);
        line++;
        if (strncmp(p, "```", 3) != 0) {
            p = next;
            continue;
        }
        char info[128] = "";
        size_t n = (size_t)((nl ? nl : next) - p - 3);
        snprintf(info, sizeof info, "%.*s", (int)(n < sizeof info ? n : sizeof info - 1), p + 3);
        int at = line;
        p = next;
        char *body = take_block(&p, &line);
        if (!body) {
            CU_FAIL("unterminated fenced block in language.md");
            break;
        }
        if (strncmp(info, "facts ", 6) == 0) {
            if (!ex.dir)
                ex.dir = make_temp_dir();
            char f[600];
            snprintf(f, sizeof f, "%s/%s", ex.dir, info + 6);
            CU_ASSERT(write_file(f, body));
            free(body);
        } else if (strcmp(info, "datalog") == 0) {
            if (ex.program) {
                fprintf(stderr, "\n    docs/language.md:%d: example without an output block\n", ex.line);
                CU_FAIL("an example has no output block");
                free(ex.program);
            }
            if (!ex.dir)
                ex.dir = make_temp_dir();
            ex.program = body;
            ex.line = at;
        } else if (strcmp(info, "output") == 0) {
            if (!ex.program) {
                fprintf(stderr, "\n    docs/language.md:%d: output block without a program\n", at);
                CU_FAIL("an output block has no program");
            } else {
                examples++;
                passed += run_example(&ex, body);
            }
            free(body);
            free(ex.program);
            remove_tree(ex.dir);
            free(ex.dir);
            ex = (example){NULL, NULL, 0};
        } else {
            fprintf(stderr, "\n    docs/language.md:%d: fenced block '%s' is not datalog, facts or output\n", at, info);
            CU_FAIL("a fenced block that is not run");
            free(body);
        }
    }
    if (ex.program) {
        fprintf(stderr, "\n    docs/language.md:%d: example without an output block\n", ex.line);
        CU_FAIL("the last example has no output block");
    }
    free(ex.program);
    if (ex.dir) {
        remove_tree(ex.dir);
        free(ex.dir);
    }
    CU_ASSERT(examples >= 6);     /* the document's sections each have one */
    CU_ASSERT_EQUAL(passed, examples);
    free(doc);
}

/* ---- --help, cli.md, rfx.1 --------------------------------------------------------------- */
/* Long options ("--name") in text, after removing roff's backslashes; a NULL-terminated
 * list of distinct names. */
static char **long_options(const char *text, int *n)
{
    char **names = calloc(64, sizeof(char *));
    *n = 0;
    for (const char *s = text; (s = strstr(s, "--")) != NULL;) {
        s += 2;
        size_t len = 0;
        while (isalnum((unsigned char)s[len]) || s[len] == '-')
            len++;
        if (len < 2 || !isalpha((unsigned char)s[0]))
            continue;
        bool seen = false;
        for (int i = 0; i < *n; i++)
            seen |= strlen(names[i]) == len && strncmp(names[i], s, len) == 0;
        if (!seen && *n < 63)
            names[(*n)++] = strndup(s, len);
    }
    return names;
}

static char *strip_backslashes(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++)
        if (*r != '\\')
            *w++ = *r;
    *w = 0;
    return s;
}

static bool mentions(const char *text, const char *opt)
{
    char key[80];
    snprintf(key, sizeof key, "--%s", opt);
    for (const char *s = text; (s = strstr(s, key)) != NULL; s++) {
        char after = s[strlen(key)];
        if (!isalnum((unsigned char)after) && after != '-')
            return true;
    }
    return false;
}

static void check_all(const char *what, char **opts, int n, const char *where_name, const char *where)
{
    for (int i = 0; i < n; i++)
        if (!mentions(where, opts[i])) {
            fprintf(stderr, "\n    --%s is in %s but not in %s\n", opts[i], what, where_name);
            CU_FAIL("an option is documented in one place only");
        }
}

static void help_man_and_cli_agree(void)
{
    /* the command's help and its cliques subcommand's, together */
    char *argv[] = {RFX_BIN, "--help", NULL}, *argv2[] = {RFX_BIN, "cliques", "--help", NULL};
    run_result r = run_prog(".", argv), r2 = run_prog(".", argv2);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    CU_ASSERT_EQUAL_FATAL(r2.code, 0);
    size_t hl = strlen(r.out) + strlen(r2.out) + 1;
    char *help = malloc(hl);
    snprintf(help, hl, "%s%s", r.out, r2.out);
    free(r.out);
    r.out = help;
    run_free(&r2);
    char path[512];
    snprintf(path, sizeof path, "%s/cli.md", docs_dir);
    char *cli = read_file(path, NULL);
    snprintf(path, sizeof path, "%s/rfx.1", docs_dir);
    char *man = read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
    CU_ASSERT_PTR_NOT_NULL_FATAL(man);
    strip_backslashes(man);
    /* the man page's OPTIONS section only (it also shows examples and pkg-config flags) */
    char *opts_sec = strstr(man, ".SH OPTIONS");
    CU_ASSERT_PTR_NOT_NULL_FATAL(opts_sec);
    char *end = strstr(opts_sec + 1, ".SH ");
    if (end)
        *end = 0;
    /* cli.md: only its options table (rows starting with "| `-") */
    size_t cap = strlen(cli) + 1, len = 0;
    char *table = calloc(1, cap);
    for (const char *s = cli; s && *s;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s + 1) : strlen(s);
        if (strncmp(s, "| `-", 4) == 0) {
            memcpy(table + len, s, n);
            len += n;
        }
        s += n;
    }
    int nh, nc, nm;
    char **h = long_options(r.out, &nh), **c = long_options(table, &nc), **m = long_options(opts_sec, &nm);
    CU_ASSERT(nh >= 10);
    check_all("rfx --help", h, nh, "docs/cli.md's option table", table);
    check_all("rfx --help", h, nh, "docs/rfx.1", opts_sec);
    check_all("docs/cli.md's option table", c, nc, "rfx --help", r.out);
    check_all("docs/rfx.1", m, nm, "rfx --help", r.out);
    /* short options */
    const char *shorts[] = {"-F", "-D", "-j", "-q", "-h"};
    for (size_t i = 0; i < sizeof shorts / sizeof shorts[0]; i++) {
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, shorts[i]));
        CU_ASSERT_PTR_NOT_NULL(strstr(table, shorts[i]));
        CU_ASSERT_PTR_NOT_NULL(strstr(opts_sec, shorts[i]));
    }
    for (char **l[] = {h, c, m}, ***q = l; q < l + 3; q++) {
        for (char **s = *q; *s; s++)
            free(*s);
        free(*q);
    }
    free(table);
    free(cli);
    free(man);
    run_free(&r);
}

/* ---- --tune help, cli.md ------------------------------------------------------------------- */
static void tuning_knobs_documented(void)
{
    char *argv[] = {RFX_BIN, "--tune", "help", NULL};
    run_result r = run_prog(".", argv);
    CU_ASSERT_EQUAL_FATAL(r.code, 0);
    char path[512];
    snprintf(path, sizeof path, "%s/cli.md", docs_dir);
    char *cli = read_file(path, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cli);
    int knobs = 0;
    const char *line = strchr(r.out, '\n');   /* past the heading */
    for (line = line ? line + 1 : ""; *line;) {
        char name[64], def[32];
        if (sscanf(line, "%63s %31s", name, def) == 2) {
            knobs++;
            char row[160];   /* the table row: | `name` | default | ... */
            snprintf(row, sizeof row, "| `%s` | %s |", name, def);
            if (!strstr(cli, row)) {
                fprintf(stderr, "\n    tuning knob %s (default %s) has no row '%s' in docs/cli.md\n", name, def, row);
                CU_FAIL("a tuning knob is not documented");
            }
        }
        const char *nl = strchr(line, '\n');
        line = nl ? nl + 1 : line + strlen(line);
    }
    CU_ASSERT(knobs >= 20);
    free(cli);
    run_free(&r);
}

static void add_suites(void)
{
    CU_pSuite s = CU_add_suite("docs", NULL, NULL);
    CU_add_test(s, "every example of language.md runs as shown", language_examples_run);
    CU_add_test(s, "--help, cli.md and the man page agree", help_man_and_cli_agree);
    CU_add_test(s, "every tuning knob is in cli.md with its default", tuning_knobs_documented);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add_suites);
}
