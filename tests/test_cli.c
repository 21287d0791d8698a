/* test_cli.c: the rfx command as a user meets it: interrupts while outputs are written,
 * outputs that are not regular files, a full standard output, options on either side of
 * `cliques`, and the profile options. Special files are made in a temporary directory (a
 * FIFO, a symbolic link); no real /dev node is written but /dev/full, opened for the
 * child's standard output. */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *bin(void)
{
    return env_or("RFX_TEST_BIN", RFX_BIN);
}

static char *path_in(const char *dir, const char *name)
{
    char *p;
    return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Whether dir holds a name containing `part`. */
static bool dir_has(const char *dir, const char *part)
{
    char **names = list_dir(dir);
    bool found = false;
    for (char **n = names; n && *n; n++)
        found |= strstr(*n, part) != NULL;
    free_list(names);
    return found;
}

/* Starts argv with stdout to `out_path` (or /dev/null) and stderr to `err_path`. */
static pid_t spawn(const char *cwd, char *const argv[], const char *out_path, const char *err_path)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (cwd && chdir(cwd) != 0)
            _exit(126);
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- interrupts ------------------------------------------------------------------------ */
/* A program whose output takes a while to write: 9 million rows. */
static const char *big_program =
    ".decl n(x: number)\n"
    "n(0).\n"
    "n(x + 1) :- n(x), x < 2999.\n"
    ".decl p(x: number, y: number)\n"
    "p(x, y) :- n(x), n(y).\n"
    ".output n\n"
    ".output p\n";

/* Runs argv, kills it with sig once its directory `watch` holds a temporary output file,
 * and checks that it died of the signal, said so, and left no temporary file. */
static void interrupt_mid_write(char *const argv[], const char *dir, const char *watch, int sig, const char *signame)
{
    char *err = path_in(dir, "stderr.txt");
    pid_t pid = spawn(dir, argv, NULL, err);
    CU_ASSERT_FATAL(pid > 0);
    bool seen = false;
    for (int i = 0; i < 3000 && !seen; i++) {   /* up to a minute */
        seen = dir_has(watch, ".tmp.");
        if (!seen)
            sleep_ms(20);
    }
    CU_ASSERT(seen);
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == sig);
    CU_ASSERT(!dir_has(watch, ".tmp."));
    char *text = read_file(err, NULL);
    char want[64];
    snprintf(want, sizeof want, "interrupted by %s", signame);
    CU_ASSERT(text && strstr(text, want));
    if (!seen || !text || !strstr(text, want))
        fprintf(stderr, "\n    stderr: %s", text ? text : "(none)");
    free(text);
    free(err);
}

static void interrupts_remove_unfinished_outputs(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *prog = path_in(dir, "big.dl"), *out = path_in(dir, "out");
    write_file(prog, big_program);
    mkdir(out, 0755);
    /* what was at the output path before stays */
    char *old = path_in(out, "p.csv");
    write_file(old, "old\n");
    char *argv[] = {(char *)bin(), "-q", "-D", out, prog, NULL};
    interrupt_mid_write(argv, dir, out, SIGINT, "SIGINT");
    char *text = read_file(old, NULL);
    CU_ASSERT(text && strcmp(text, "old\n") == 0);
    free(text);
    interrupt_mid_write(argv, dir, out, SIGTERM, "SIGTERM");
    free(old);
    free(prog);
    free(out);
    remove_tree(dir);
    free(dir);
}

static void interrupts_remove_an_unfinished_clique_list(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    /* a dense graph: K_200 has 1.3 million triangles */
    char *graph = path_in(dir, "g.txt"), *list = path_in(dir, "tri.txt");
    FILE *f = fopen(graph, "w");
    CU_ASSERT_FATAL(f != NULL);
    for (int a = 0; a < 200; a++)
        for (int b = a + 1; b < 200; b++)
            fprintf(f, "%d %d\n", a, b);
    fclose(f);
    char *argv[] = {(char *)bin(), "cliques", "-q", "-j", "1", "-o", list, graph, NULL};
    interrupt_mid_write(argv, dir, dir, SIGINT, "SIGINT");
    CU_ASSERT(!file_exists(list));
    free(graph);
    free(list);
    remove_tree(dir);
    free(dir);
}

/* ---- outputs that are not regular files ------------------------------------------------ */
static void special_file_outputs_written_in_place(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *fifo = path_in(dir, "fifo"), *link = path_in(dir, "link.csv"), *real = path_in(dir, "real.csv"),
         *prog = path_in(dir, "p.dl");
    CU_ASSERT_FATAL(mkfifo(fifo, 0644) == 0);
    CU_ASSERT_FATAL(symlink("real.csv", link) == 0);
    write_file(real, "old\n");
    write_file(prog, ".decl a(x: number)\na(1). a(2).\n"
                     ".output a(filename=\"fifo\")\n"
                     ".output a(filename=\"link.csv\")\n"
                     ".output a(filename=\"/dev/stdout\")\n");
    /* a reader on the FIFO first, so that the writer's open does not wait */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    CU_ASSERT_FATAL(rd >= 0);
    char *argv[] = {(char *)bin(), "-q", "-D", dir, prog, NULL};
    run_result r = run_prog(dir, argv);
    CU_ASSERT_EQUAL(r.code, 0);
    char buf[64] = {0};
    ssize_t n = read(rd, buf, sizeof buf - 1);
    close(rd);
    CU_ASSERT(n == 4 && strcmp(buf, "1\n2\n") == 0);
    struct stat st;
    CU_ASSERT(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
    CU_ASSERT(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    char *text = read_file(real, NULL);
    CU_ASSERT(text && strcmp(text, "1\n2\n") == 0);
    free(text);
    CU_ASSERT(r.out && strcmp(r.out, "1\n2\n") == 0);   /* filename="/dev/stdout" */
    CU_ASSERT(!dir_has(dir, ".tmp."));
    run_free(&r);
    free(fifo);
    free(link);
    free(real);
    free(prog);
    remove_tree(dir);
    free(dir);
}

static void full_standard_output_is_reported(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *graph = path_in(dir, "g.txt"), *err = path_in(dir, "err.txt");
    write_file(graph, "1 2\n2 3\n1 3\n3 4\n2 4\n");
    char *argv[] = {(char *)bin(), "cliques", "-q", graph, NULL};
    pid_t pid = spawn(dir, argv, "/dev/full", err);
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 2);
    char *text = read_file(err, NULL);
    CU_ASSERT(text && strstr(text, "No space left on device"));
    free(text);
    free(graph);
    free(err);
    remove_tree(dir);
    free(dir);
}

/* ---- the command line ------------------------------------------------------------------ */
static run_result run_args(char *const argv[])
{
    return run_prog(NULL, argv);
}

static void options_on_either_side_of_cliques(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *graph = path_in(dir, "g.txt");
    /* K4: 4 triangles */
    write_file(graph, "1 2\n1 3\n1 4\n2 3\n2 4\n3 4\n");
    char *a[] = {(char *)bin(), "--backend=cpu", "-j", "auto", "cliques", "-k", "3", "--count", graph, NULL};
    char *b[] = {(char *)bin(), "cliques", graph, "--count", "-k", "3", "-q", NULL};
    char *c[] = {(char *)bin(), "-k", "3", "x.dl", NULL};
    char *d[] = {(char *)bin(), "cliques", "-F", "x", graph, NULL};
    run_result ra = run_args(a), rb = run_args(b), rc = run_args(c), rd = run_args(d);
    CU_ASSERT(ra.code == 0 && ra.out && strcmp(ra.out, "4\n") == 0);
    CU_ASSERT(rb.code == 0 && rb.out && strcmp(rb.out, "4\n") == 0);
    CU_ASSERT(rc.code == 2 && rc.err && strstr(rc.err, "'-k' is for 'rfx cliques'"));
    CU_ASSERT(rd.code == 2 && rd.err && strstr(rd.err, "'-F' is for programs"));
    run_free(&ra);
    run_free(&rb);
    run_free(&rc);
    run_free(&rd);
    free(graph);
    remove_tree(dir);
    free(dir);
}

/* A JSON profile file that starts as one. */
static bool is_profile(const char *path)
{
    char *text = read_file(path, NULL);
    bool ok = text && strncmp(text, "{\"rfx_version\"", 14) == 0;
    free(text);
    return ok;
}

static void profile_options(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *prog = path_in(dir, "p.dl"), *graph = path_in(dir, "g.txt");
    char *j1 = path_in(dir, "one.json"), *j2 = path_in(dir, "two.json"), *j3 = path_in(dir, "three.json"),
         *j4 = path_in(dir, "four.json"), *tr = path_in(dir, "trace.json");
    write_file(prog, ".decl a(x: number)\na(1).\n.printsize a\n");
    write_file(graph, "1 2\n2 3\n1 3\n");
    char *pj1, *pj4;
    if (asprintf(&pj1, "--profile=json:%s", j1) < 0 || asprintf(&pj4, "--profile=json:%s", j4) < 0)
        CU_FAIL_FATAL("out of memory");
    char *a[] = {(char *)bin(), pj1, prog, NULL};
    char *b[] = {(char *)bin(), "-p", j2, prog, NULL};
    char *c[] = {(char *)bin(), "--profile=json", j3, prog, NULL};                 /* the older form */
    char *d[] = {(char *)bin(), "--profile=json", "-F", dir, prog, NULL};         /* -F is no file name */
    char *e[] = {(char *)bin(), "cliques", "--count", pj4, "--trace", tr, graph, NULL};
    char *f[] = {(char *)bin(), "--profile", prog, NULL};
    run_result ra = run_args(a), rb = run_args(b), rc = run_args(c), rd = run_args(d), re = run_args(e),
               rf = run_args(f);
    /* the table states time over the floor, never a share of the bandwidth (which an
     * operator that skips input would put over 100%) */
    CU_ASSERT(rf.code == 0 && rf.err && strstr(rf.err, "x floor") && !strchr(rf.err, '%'));
    run_free(&rf);
    CU_ASSERT(ra.code == 0 && is_profile(j1));
    CU_ASSERT(rb.code == 0 && is_profile(j2));
    CU_ASSERT(rc.code == 0 && is_profile(j3));
    CU_ASSERT(rd.code == 2 && rd.err && strstr(rd.err, "json:FILE"));
    CU_ASSERT(re.code == 0 && re.out && strcmp(re.out, "1\n") == 0 && is_profile(j4) && file_exists(tr));
    run_free(&ra);
    run_free(&rb);
    run_free(&rc);
    run_free(&rd);
    run_free(&re);
    free(pj1);
    free(pj4);
    free(j1);
    free(j2);
    free(j3);
    free(j4);
    free(tr);
    free(prog);
    free(graph);
    remove_tree(dir);
    free(dir);
}

/* Soufflé's command line as its users write it: -I (relative to the current directory,
 * repeated, long), -w, --no-preprocessor, and its compile and optimiser switches, which
 * leave answers as they are. */
static void souffle_command_lines(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    /* the program in a folder of its own: the preprocessor runs there, -I lib is the caller's */
    char *sub = path_in(dir, "lib"), *other = path_in(dir, "more"), *pdir = path_in(dir, "prog"),
         *main_dl = path_in(dir, "prog/main.dl");
    CU_ASSERT_FATAL(sub && other && pdir && main_dl && mkdir(sub, 0755) == 0 && mkdir(other, 0755) == 0 &&
                    mkdir(pdir, 0755) == 0);
    char *defs = path_in(sub, "defs.dl"), *more = path_in(other, "more.dl"), *inc;
    CU_ASSERT_FATAL(defs && more && asprintf(&inc, "--include-dir=%s", other) >= 0);
    write_file(defs, ".decl a(x: number)\na(1). a(2).\n");
    write_file(more, ".decl c(x: number)\nc($).\n");   /* `$`: a warning */
    write_file(main_dl, "#include \"defs.dl\"\n#include \"more.dl\"\n.decl b(x: number)\nb(x + 1) :- a(x).\n.output b\n");
    char *with[] = {(char *)bin(), "-I", "lib", inc, "-D", "-", "prog/main.dl", NULL};
    char *quiet[] = {(char *)bin(), "-c", "-w", "-m", "*", "--magic-transform-exclude=b", "--inline-exclude=a",
                     "-z", "X", "-C", "-Ilib", inc, "-D", "-", "prog/main.dl", NULL};
    char *without[] = {(char *)bin(), inc, "-D", "-", "prog/main.dl", NULL};
    char *no_pp[] = {(char *)bin(), "--no-preprocessor", "-I", "lib", "-D", "-", "prog/main.dl", NULL};
    char *cliques[] = {(char *)bin(), "cliques", "-I", "lib", "g.txt", NULL};
    run_result r1 = run_prog(dir, with), r2 = run_prog(dir, quiet), r3 = run_prog(dir, without),
               r4 = run_prog(dir, no_pp), r5 = run_prog(dir, cliques);
    CU_ASSERT(r1.code == 0 && r1.out && strstr(r1.out, "2\n3\n") && r1.err && strstr(r1.err, "warning"));
    CU_ASSERT(r2.code == 0 && r2.out && strstr(r2.out, "2\n3\n") && r2.err && !strstr(r2.err, "warning"));
    CU_ASSERT(r3.code == 1 && r3.err && strstr(r3.err, "defs.dl"));
    CU_ASSERT(r4.code == 1 && r4.err && strstr(r4.err, "--no-preprocessor"));
    CU_ASSERT(r5.code == 2 && r5.err && strstr(r5.err, "'-I' is for programs"));
    run_free(&r1), run_free(&r2), run_free(&r3), run_free(&r4), run_free(&r5);
    free(sub), free(other), free(pdir), free(main_dl), free(defs), free(more), free(inc);
    remove_tree(dir);
    free(dir);
}

/* Soufflé's other switches: its no-ops run; --parse-errors and --show check or print and
 * do not run; its code generation, provenance and debug report are errors with a reason. */
static void souffle_views_and_refusals(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *good = path_in(dir, "good.dl"), *bad = path_in(dir, "bad.dl");
    CU_ASSERT_FATAL(good && bad);
    write_file(good, ".decl a(x: number)\na(1).\n.decl b(x: number)\nb(x + 1) :- a(x).\n.output b\n");
    write_file(bad, ".decl a(x: number)\nb(1).\n");
    char *noops[] = {(char *)bin(), "-v", "--emit-statistics", "--profile-frequency", "--legacy", "-W", "all",
                     "--wno=x", "-a", "none.txt", "-t", "none", "--live-profile", "-D", "-", "good.dl", NULL};
    char *check[] = {(char *)bin(), "--parse-errors", "good.dl", NULL};
    char *check_bad[] = {(char *)bin(), "--show=parse-errors", "bad.dl", NULL};
    char *ram[] = {(char *)bin(), "--show=transformed-ram", "good.dl", NULL};
    char *plan[] = {(char *)bin(), "--emit=plan", "good.dl", NULL};
    char *gen[] = {(char *)bin(), "-g", "out.cpp", "good.dl", NULL};
    char *prov[] = {(char *)bin(), "-t", "explain", "good.dl", NULL};
    char *view[] = {(char *)bin(), "--show=scc-graph", "good.dl", NULL};
    run_result r1 = run_prog(dir, noops), r2 = run_prog(dir, check), r3 = run_prog(dir, check_bad),
               r4 = run_prog(dir, ram), r5 = run_prog(dir, plan), r6 = run_prog(dir, gen), r7 = run_prog(dir, prov),
               r8 = run_prog(dir, view);
    CU_ASSERT(r1.code == 0 && r1.out && strstr(r1.out, "\n2\n"));
    CU_ASSERT(r2.code == 0 && r2.out && !*r2.out && r2.err && !*r2.err);
    char *written = path_in(dir, "b.csv");
    CU_ASSERT(written && access(written, F_OK) != 0);   /* checked, not run */
    CU_ASSERT(r3.code == 1 && r3.err && strstr(r3.err, "bad.dl:2:"));
    CU_ASSERT(r4.code == 0 && r5.code == 0 && r4.out && r5.out && strcmp(r4.out, r5.out) == 0);
    CU_ASSERT(r6.code == 2 && r6.err && strstr(r6.err, "-g/--generate") && strstr(r6.err, "no counterpart"));
    CU_ASSERT(r7.code == 2 && r7.err && strstr(r7.err, "provenance"));
    CU_ASSERT(r8.code == 2 && r8.err && strstr(r8.err, "--show=scc-graph"));
    run_free(&r1), run_free(&r2), run_free(&r3), run_free(&r4), run_free(&r5), run_free(&r6), run_free(&r7);
    run_free(&r8);
    free(good), free(bad), free(written);
    remove_tree(dir);
    free(dir);
}

/* `.input r(IO=stdin)` reads the facts from standard input, plain or gzipped, with the
 * directive's options; IO=stdin is for inputs only. */
static void input_from_stdin(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *prog = path_in(dir, "p.dl"), *facts = path_in(dir, "r.csv"), *bad = path_in(dir, "bad.dl"), *sh1, *sh2, *sh3;
    CU_ASSERT_FATAL(prog && facts && bad);
    write_file(prog, ".decl r(x: symbol, y: number)\n.input r(IO=stdin, delimiter=\",\")\n"
                     ".decl s(y: number)\ns(y + 1) :- r(_, y).\n.output s(IO=stdout)\n");
    write_file(facts, "a,1\nb,2\n");
    write_file(bad, ".decl r(x: number)\nr(1).\n.output r(IO=stdin)\n");
    CU_ASSERT_FATAL(asprintf(&sh1, "exec '%s' '%s' < '%s'", bin(), prog, facts) >= 0 &&
                    asprintf(&sh2, "gzip -c '%s' | '%s' '%s'", facts, bin(), prog) >= 0 &&
                    asprintf(&sh3, "exec '%s' '%s' < '%s'", bin(), bad, facts) >= 0);
    char *a1[] = {"/bin/sh", "-c", sh1, NULL}, *a2[] = {"/bin/sh", "-c", sh2, NULL}, *a3[] = {"/bin/sh", "-c", sh3, NULL};
    run_result r1 = run_prog(dir, a1), r2 = run_prog(dir, a2), r3 = run_prog(dir, a3);
    CU_ASSERT(r1.code == 0 && r1.out && strstr(r1.out, "===============\n2\n3\n==="));
    CU_ASSERT(r2.code == 0 && r2.out && r1.out && strcmp(r1.out, r2.out) == 0);
    CU_ASSERT(r3.code == 1 && r3.err && strstr(r3.err, "bad.dl:3:9: error: unsupported IO='stdin' for an output"));
    run_free(&r1), run_free(&r2), run_free(&r3);
    free(prog), free(facts), free(bad), free(sh1), free(sh2), free(sh3);
    remove_tree(dir);
    free(dir);
}

/* A sum of n ones as a program. */
static char *long_sum(int n)
{
    char *text = malloc((size_t)n * 4 + 128);
    if (!text)
        return NULL;
    size_t len = (size_t)sprintf(text, ".decl r(x: number)\nr(x) :- x = 1");
    for (int i = 1; i < n; i++)
        len += (size_t)sprintf(text + len, " + 1");
    sprintf(text + len, ".\n.output r\n");
    return text;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void long_expressions_in_linear_time(void)
{
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *ok = path_in(dir, "ok.dl"), *deep = path_in(dir, "deep.dl");
    char *t1 = long_sum(9000), *t2 = long_sum(100000);
    CU_ASSERT_FATAL(t1 && t2);
    write_file(ok, t1);
    write_file(deep, t2);
    /* typed and lowered in one walk a node: quadratic typing took seconds at 8,000 terms */
    char *a[] = {(char *)bin(), "-D", "-", ok, NULL};
    double t0 = seconds_now();
    run_result ra = run_args(a);
    double spent = seconds_now() - t0;
    CU_ASSERT(ra.code == 0 && ra.out && strstr(ra.out, "\n9000\n"));
    CU_ASSERT(spent < 3.0);
    if (spent >= 3.0)
        fprintf(stderr, "\n    9,000 terms took %.2f s", spent);
    /* past the depth every later pass can recurse through: a message, not a crash */
    char *b[] = {(char *)bin(), deep, NULL};
    run_result rb = run_args(b);
    CU_ASSERT(rb.code == 1 && rb.err && strstr(rb.err, "nests too deeply"));
    run_free(&ra);
    run_free(&rb);
    free(t1);
    free(t2);
    free(ok);
    free(deep);
    remove_tree(dir);
    free(dir);
}

/* Whether `--emit=plan` of prog shows plan and its run over dir's facts prints out. */
static bool plan_and_output(char *dir, char *prog, const char *plan, const char *out)
{
    char *emit[] = {(char *)bin(), "--emit=plan", prog, NULL}, *run[] = {(char *)bin(), "-F", dir, "-D", "-", prog, NULL};
    run_result rp = run_args(emit), rr = run_args(run);
    bool ok = rp.code == 0 && rp.out && strstr(rp.out, plan) && rr.code == 0 && rr.out && strstr(rr.out, out);
    run_free(&rp);
    run_free(&rr);
    return ok;
}

/* The command reads no text of an input column no rule reads (the plan says "unread"), and
 * answers as if it had: a count over the relation's tuples keeps every column, as do `ord`
 * and a relation that is written too. */
static void unread_input_columns(void)
{
    static const struct {
        const char *file, *rules, *plan, *out;
    } progs[] = {
        {"p.dl", ".decl s(a: number, k: symbol)\ns(a, k) :- r(a, n, k).\n.output s\n",
         ".relation r(number, unread symbol, symbol)", "1\tp\n2\tq\n"},
        {"c.dl", ".decl n(a: number, c: number)\nn(a, c) :- r(a, _, _), c = count : { r(a, _, _) }.\n.output n\n",
         ".relation r(number, symbol, symbol)", "1\t2\n2\t1\n"},
        {"o.dl", ".decl s(a: number, k: symbol, o: number)\ns(a, k, ord(k)) :- r(a, _, k).\n.printsize s\n",
         ".relation r(number, symbol, symbol)", "s\t2\n"},
        {"w.dl", "r(3, \"w\", \"z\").\n.decl s(a: number, k: symbol)\ns(a, k) :- r(a, _, k).\n.printsize s\n",
         ".relation r(number, symbol, symbol)", "s\t3\n"},
    };
    char *dir = make_temp_dir();
    CU_ASSERT_FATAL(dir != NULL);
    char *facts = path_in(dir, "r.facts");
    write_file(facts, "1\tx\tp\n1\ty\tp\n2\tz\tq\n");
    for (size_t i = 0; i < sizeof progs / sizeof *progs; i++) {
        char *prog = path_in(dir, progs[i].file), *text = NULL;
        CU_ASSERT_FATAL(asprintf(&text, ".decl r(a: number, note: symbol, k: symbol)\n.input r\n%s", progs[i].rules) > 0);
        write_file(prog, text);
        CU_ASSERT(plan_and_output(dir, prog, progs[i].plan, progs[i].out));
        free(text);
        free(prog);
    }
    free(facts);
    remove_tree(dir);
    free(dir);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("command line", NULL, NULL);
    CU_add_test(s, "SIGINT and SIGTERM remove the outputs being written", interrupts_remove_unfinished_outputs);
    CU_add_test(s, "SIGINT removes an unfinished clique list", interrupts_remove_an_unfinished_clique_list);
    CU_add_test(s, "a FIFO, a symbolic link and /dev/stdout are written in place", special_file_outputs_written_in_place);
    CU_add_test(s, "a full standard output is an error with a message", full_standard_output_is_reported);
    CU_add_test(s, "options on either side of cliques", options_on_either_side_of_cliques);
    CU_add_test(s, "profile options: json:FILE, -p, the older form, cliques", profile_options);
    CU_add_test(s, "Souffle's command lines: -I, -w, --no-preprocessor, its compile switches", souffle_command_lines);
    CU_add_test(s, "Souffle's other switches: no-ops, --parse-errors, --show, refusals", souffle_views_and_refusals);
    CU_add_test(s, "IO=stdin reads an input from standard input", input_from_stdin);
    CU_add_test(s, "long expressions: linear time, a message past the depth limit", long_expressions_in_linear_time);
    CU_add_test(s, "input columns no rule reads are not read; counts keep them", unread_input_columns);
}

int main(int argc, char **argv)
{
    return run_suites(argc, argv, add);
}
