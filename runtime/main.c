/* main.c: the `rfx` command, a thin client of librfx (rfx.h): parse the command line,
 * open an engine, load the program, then print an IR stage or run it. */
#include "rfx.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: rfx [options] PROGRAM.dl\n"
          "       rfx cliques [-k K] [--count] [-o FILE] [options] GRAPH   (see rfx cliques --help)\n"
          "\n"
          "Computes the fixpoint of a Datalog program (Souffle syntax, LogiQL forms too).\n"
          "\n"
          "options:\n"
          "  -F, --fact-dir=DIR      read <rel>.facts and relative filename= paths from DIR (default .)\n"
          "  -D, --output-dir=DIR    write <rel>.csv into DIR (default .); '-' prints to stdout\n"
          "  -M, --macro=MACROS      preprocessor definitions, 'NAME[=VALUE] ...' (as Souffle's -M)\n"
          "  -I, --include-dir=DIR   #include looks in DIR too, after the including file's directory\n"
          "      --no-preprocessor   parse the program as written (no C preprocessor)\n"
          "  -w, --no-warn           no warnings about the program\n"
          "  -L, --library-dir=DIR   look for user-defined functors' libraries in DIR (default .)\n"
          "  -l, --libraries=NAME    load libNAME.so for user-defined functors (default: functors)\n"
          "  -j, --jobs=N            worker threads, or 'auto' (default): all cores\n"
          "      --backend=KIND      auto, cpu or cuda (default auto: the CPU and a CUDA device together,\n"
          "                          each command where it ends sooner)\n"
          "      --device-memory=SIZE  cap on GPU memory use, e.g. 512M or 20G (default: free memory less 5%);\n"
          "                            what does not fit runs out of core (on the CPU backend: the same\n"
          "                            code paths, with SIZE as the budget)\n"
          "      --devices=LIST        GPUs to use, e.g. 0,1 (default 0); leapfrog triejoins are spread\n"
          "                            over them box by box\n"
          "      --emit=STAGE        print an IR stage and exit: ast, plan, harmony, fused (the kernel\n"
          "                          weaver's groups) or cuda (the CUDA C generated for them)\n"
          "      --no-opt            skip plan optimisation passes\n"
          "      --no-fuse           run every operator on its own (no kernel fusion)\n"
          "      --join=KIND         auto (leapfrog triejoin for cyclic bodies of 3+ atoms), binary or lftj\n"
          "      --profile[=json:FILE]  per-operator time, tuples, bytes moved, GB/s and share of the\n"
          "                          measured copy bandwidth: a table on stderr, or JSON into FILE ('-': stdout;\n"
          "                          '--profile=json FILE' also works)\n"
          "  -p, --profile-json=FILE the JSON profile into FILE (Souffle's -p)\n"
          "      --trace=FILE        write a Chrome/Perfetto trace (JSON) of the run: an event per command\n"
          "      --tune=KEY=VALUE    set a tuning knob, for experiments (repeatable; '--tune help' lists them)\n"
          "  -q, --quiet             no progress line on stderr (shown only when stderr is a terminal)\n"
          "  -v, --verbose           the progress line even where stderr is no terminal (--live-profile too)\n"
          "      --parse-errors      check the program and exit; --show=parse-errors the same,\n"
          "      --show=VIEW         initial-ast and transformed-ast as --emit=ast, initial-ram and\n"
          "                          transformed-ram as --emit=plan\n"
          "  -c, -C, -m, -z, -W, -a, --compile, --compile-many, --magic-transform, --magic-transform-exclude,\n"
          "      --inline-exclude, --disable-transformers, --emit-statistics, --profile-frequency, --legacy,\n"
          "      --warn, --wno, --auto-schedule, -t none: Souffle's, accepted with no effect (rfx compiles\n"
          "                          what it runs, and plans by its own rules); its code generation (-g, -G,\n"
          "                          -o/--dl-program, -s, -N), provenance (-t), -r, -P and --preprocessor\n"
          "                          are errors\n"
          "  -h, --help              this text\n"
          "      --version           version, backends, GPU and CUDA versions\n"
          "Options may come before or after the program (and before or after 'cliques').\n"
          "\n"
          "exit status: 0 ok, 1 program error, 2 input/output error, 3 out of memory or device failure,\n"
          "4 internal error\n",
          f);
}


/* Parses SIZE ("512M", "20G", "1048576", "2GB"); 0 when malformed or under 1 KiB. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double mult = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' || *end == 'm' ? 1048576.0
                : *end == 'G' || *end == 'g' ? 1073741824.0 : *end == 0 ? 1.0 : -1.0;
    if (*end && end[1] && !(end[1] == 'B' && !end[2]))
        mult = -1;
    if (errno || !(v > 0) || mult < 0 || v * mult < 1024 || v * mult > 1e18)
        return 0;
    return (size_t)(v * mult);
}

enum { OPT_BACKEND = 256, OPT_EMIT, OPT_VERSION, OPT_NOOPT, OPT_PROFILE, OPT_PROFILE_JSON, OPT_DEVMEM, OPT_JOIN,
       OPT_COUNT, OPT_TRACE, OPT_NOFUSE, OPT_ORDER, OPT_DEVICES, OPT_TUNE, OPT_NOPREPROC, OPT_SOUFFLE_ONLY,
       OPT_PARSE_ONLY, OPT_SHOW, OPT_CODEGEN, OPT_PREPROCESSOR };

static bool pick(const char *arg, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(arg, names[i]) == 0) {
            *out = i;
            return true;
        }
    return false;
}


static rfx_stage stage_of(const char *emit)
{
    static const struct { const char *name; rfx_stage stage; } stages[] = {
        {"ast", RFX_STAGE_AST}, {"plan", RFX_STAGE_PLAN}, {"harmony", RFX_STAGE_HARMONY},
        {"fused", RFX_STAGE_FUSED}, {"cuda", RFX_STAGE_CUDA}};
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++)
        if (strcmp(emit, stages[i].name) == 0)
            return stages[i].stage;
    return RFX_STAGE_PLAN;
}

/* ---- rfx cliques ------------------------------------------------------------------------ */
static void cliques_usage(FILE *f)
{
    fputs("usage: rfx cliques [-k K] [--count] [-o FILE] [options] GRAPH\n"
          "\n"
          "Lists (or counts) the K-cliques of a graph given as an edge list (SNAP format: '#' comments,\n"
          "whitespace, tab or comma separated, extra columns ignored, optionally gzip). The graph is\n"
          "taken as undirected and simple: self-loops are dropped, (a,b) and (b,a) are one edge.\n"
          "Each clique is listed once, one per line, tab-separated, its vertices ascending (with\n"
          "--order=degree: from the lowest degree up).\n"
          "\n"
          "options:\n"
          "  -k K                    clique size, 2 to 8 (default 3: triangles)\n"
          "      --count             print the number of cliques only (never materialises them)\n"
          "  -o, --output=FILE       write the list to FILE (atomically) instead of stdout\n"
          "      --order=ORDER       orient edges by vertex id or by degree (default: degree with\n"
          "                          --count, id for lists)\n"
          "  -j, --jobs=N            worker threads, or 'auto' (default): all cores\n"
          "      --backend=KIND      auto, cpu or cuda\n"
          "      --device-memory=SIZE  cap on GPU memory use (what does not fit runs out of core)\n"
          "      --devices=LIST        GPUs to use, e.g. 0,1 (default 0)\n"
          "      --join=KIND         auto (leapfrog triejoin), binary or lftj\n"
          "      --profile[=json:FILE]  per-operator table on stderr, or JSON into FILE\n"
          "  -p, --profile-json=FILE the JSON profile into FILE\n"
          "      --trace=FILE        a Chrome/Perfetto trace of the run\n"
          "      --emit=STAGE        print the generated program's ast, plan, harmony, fused or cuda stage and exit\n"
          "  -q, --quiet             no progress line\n"
          "  -h, --help              this text\n",
          f);
}

/* The clique program over `path` (rfx_clique_program), in a new string. */
static char *clique_program(const char *path, int k, bool count, bool by_degree)
{
    size_t n = rfx_clique_program(NULL, 0, k, count, by_degree, path);
    char *p = n ? malloc(n + 1) : NULL;
    if (p)
        rfx_clique_program(p, n + 1, k, count, by_degree, path);
    return p;
}

/* Writes the cliques from the cursor to f, one per line. */
static bool write_cliques(rfx_cursor *c, FILE *f)
{
    int k = rfx_cursor_arity(c);
    for (const rfx_value *t; (t = rfx_cursor_next(c));)
        for (int i = 0; i < k; i++)
            if (fprintf(f, "%d%c", t[i].i, i + 1 < k ? '\t' : '\n') < 0)
                return false;
    return true;
}

/* The command line, for programs and `rfx cliques` alike: options may stand on either side
 * of the program, the graph and the word `cliques`. */
typedef struct cmd {
    bool cliques;              /* `rfx cliques GRAPH` */
    const char *who;           /* "rfx" or "rfx cliques", for messages */
    const char *target;        /* the program or the graph */
    const char *emit;
    bool quiet;
    const char *json_path, *trace_path;
    const char *program_only, *cliques_only;   /* an option of the other mode, for a message */
    int k, order;              /* cliques: size; -1: degree when counting, id when listing */
    bool count;
    bool verbose;              /* -v: the progress line even where stderr is no terminal */
    bool parse_only;           /* --parse-errors: the program checked, not run */
    const char *out;
    char *macros;              /* several -M joined (owned) */
    char *include_dirs;        /* several -I joined (owned) */
    char *tune;                /* several --tune joined (owned) */
    char *library_dirs, *libraries;   /* several -L, -l joined (owned) */
    char given[48];            /* the option being taken, as written (`--legacy`, `-W`), for messages */
} cmd;

static const struct option longopts[] = {
    {"fact-dir", required_argument, NULL, 'F'},
    {"macro", required_argument, NULL, 'M'},
    {"include-dir", required_argument, NULL, 'I'},
    {"no-preprocessor", no_argument, NULL, OPT_NOPREPROC},
    {"no-warn", no_argument, NULL, 'w'},
    {"compile", no_argument, NULL, 'c'},
    {"compile-many", no_argument, NULL, 'C'},
    {"magic-transform", required_argument, NULL, 'm'},
    {"magic-transform-exclude", required_argument, NULL, OPT_SOUFFLE_ONLY},
    {"inline-exclude", required_argument, NULL, OPT_SOUFFLE_ONLY},
    {"emit-statistics", no_argument, NULL, OPT_SOUFFLE_ONLY},
    {"profile-frequency", no_argument, NULL, OPT_SOUFFLE_ONLY},
    {"legacy", no_argument, NULL, OPT_SOUFFLE_ONLY},
    {"wno", required_argument, NULL, OPT_SOUFFLE_ONLY},
    {"warn", required_argument, NULL, 'W'},
    {"auto-schedule", required_argument, NULL, 'a'},
    {"verbose", no_argument, NULL, 'v'},
    {"live-profile", no_argument, NULL, 'v'},
    {"parse-errors", no_argument, NULL, OPT_PARSE_ONLY},
    {"show", required_argument, NULL, OPT_SHOW},
    {"provenance", required_argument, NULL, 't'},
    {"generate", required_argument, NULL, 'g'},
    {"generate-many", required_argument, NULL, 'G'},
    {"dl-program", required_argument, NULL, OPT_CODEGEN},
    {"swig", required_argument, NULL, 's'},
    {"generate-namespace", required_argument, NULL, 'N'},
    {"debug-report", required_argument, NULL, 'r'},
    {"pragma", required_argument, NULL, 'P'},
    {"preprocessor", required_argument, NULL, OPT_PREPROCESSOR},
    {"disable-transformers", required_argument, NULL, 'z'},
    {"library-dir", required_argument, NULL, 'L'},
    {"libraries", required_argument, NULL, 'l'},
    {"output-dir", required_argument, NULL, 'D'},
    {"jobs", required_argument, NULL, 'j'},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"emit", required_argument, NULL, OPT_EMIT},
    {"no-opt", no_argument, NULL, OPT_NOOPT},
    {"no-fuse", no_argument, NULL, OPT_NOFUSE},
    {"join", required_argument, NULL, OPT_JOIN},
    {"profile", optional_argument, NULL, OPT_PROFILE},
    {"profile-json", required_argument, NULL, OPT_PROFILE_JSON},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"tune", required_argument, NULL, OPT_TUNE},
    {"device-memory", required_argument, NULL, OPT_DEVMEM},
    {"devices", required_argument, NULL, OPT_DEVICES},
    {"count", no_argument, NULL, OPT_COUNT},
    {"order", required_argument, NULL, OPT_ORDER},
    {"output", required_argument, NULL, 'o'},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};
static const char shortopts[] = ":F:D:M:I:L:l:j:p:k:o:qhwcCm:z:vW:a:t:g:G:s:N:r:P:";

/* Whether the first operand (what is neither an option nor an option's value) is
 * `cliques`. */
static bool cliques_mode(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            return i + 1 < argc && strcmp(argv[i + 1], "cliques") == 0;
        if (a[0] != '-' || a[1] == 0)
            return strcmp(a, "cliques") == 0;
        if (a[1] == '-') {
            /* --name VALUE: the value is the next word */
            for (const struct option *o = longopts; o->name; o++)
                if (o->has_arg == required_argument && strcmp(a + 2, o->name) == 0)
                    i++;
        } else if (a[2] == 0 && a[1] != ':' && strchr(shortopts, a[1]) && strchr(shortopts, a[1])[1] == ':')
            i++;   /* -X VALUE */
    }
    return false;
}

/* *field (NULL, or a string *owned holds) followed by a blank and arg: options that add up. */
static int add_word(const char *who, const char **field, char **owned, const char *arg)
{
    if (!*field) {
        *field = arg;
        return 0;
    }
    size_t n = strlen(*field) + strlen(arg) + 2;
    char *both = malloc(n);
    if (!both) {
        fprintf(stderr, "%s: error: out of memory\n", who);
        return RFX_EXIT_RESOURCE;
    }
    snprintf(both, n, "%s %s", *field, arg);
    free(*owned);
    *field = *owned = both;
    return 0;
}

/* One option into cfg and c: 0, or an exit status after a message. */
static int take_option(int ch, const char *arg, int argc, char **argv, rfx_config *cfg, cmd *c)
{
    static const char *const backends[] = {"auto", "cpu", "cuda"}, *const joins[] = {"auto", "binary", "lftj"},
                              *const stages[] = {"ast", "plan", "harmony", "fused", "cuda"};
    const char *who = c->who;
    int v;
    switch (ch) {
    case 'j': {
        char *end;
        long n = strcmp(arg, "auto") == 0 ? 0 : strtol(arg, &end, 10);
        if (strcmp(arg, "auto") != 0 && (*end || n < 1 || n > 256)) {
            fprintf(stderr, "%s: error: -j takes a number of threads from 1 to 256 or 'auto', got '%s'\n", who, arg);
            return RFX_EXIT_IO;
        }
        cfg->threads = (int)n;
        return 0;
    }
    case OPT_BACKEND:
        if (!pick(arg, backends, 3, &v)) {
            fprintf(stderr, "%s: error: unknown backend '%s' (auto, cpu, cuda)\n", who, arg);
            return RFX_EXIT_IO;
        }
        cfg->backend = (rfx_backend_kind)v;
        return 0;
    case OPT_JOIN:
        if (!pick(arg, joins, 3, &v)) {
            fprintf(stderr, "%s: error: unknown join method '%s' (auto, binary, lftj)\n", who, arg);
            return RFX_EXIT_IO;
        }
        cfg->join = (rfx_join_kind)v;
        return 0;
    case OPT_DEVMEM:
        if (!(cfg->device_memory = parse_size(arg))) {
            fprintf(stderr, "%s: error: --device-memory takes a size such as 512M or 20G, got '%s'\n", who, arg);
            return RFX_EXIT_IO;
        }
        return 0;
    case OPT_DEVICES: {
        /* a comma-separated list of device indices, each once */
        static int devs[16];
        int n = 0;
        for (const char *p = arg;; p++) {
            char *end;
            long d = strtol(p, &end, 10);
            bool dup = false;
            for (int k = 0; k < n; k++)
                dup |= devs[k] == d;
            if (end == p || d < 0 || d > 255 || dup || n == 16 || (*end && *end != ',')) {
                fprintf(stderr, "%s: error: --devices takes distinct GPU indices separated by commas (at most 16), "
                                "such as 0,1, got '%s'\n", who, arg);
                return RFX_EXIT_IO;
            }
            devs[n++] = (int)d;
            if (!*end)
                break;
            p = end;
        }
        cfg->devices = devs;
        cfg->ndevices = n;
        return 0;
    }
    case OPT_EMIT:
        if (!pick(arg, stages, 5, &v)) {
            fprintf(stderr, "%s: error: unknown --emit stage '%s' (ast, plan, harmony, fused, cuda)\n", who, arg);
            return RFX_EXIT_IO;
        }
        c->emit = stages[v];
        return 0;
    case OPT_NOFUSE: cfg->no_fuse = true; return 0;
    case OPT_PROFILE:
        if (!arg) {
            cfg->profile = stderr;
            return 0;
        }
        if (strncmp(arg, "json:", 5) == 0 && arg[5]) {
            c->json_path = arg + 5;
            return 0;
        }
        /* the older `--profile=json FILE`: the next word, unless it is another option */
        if (strcmp(arg, "json") == 0 && optind < argc && (argv[optind][0] != '-' || strcmp(argv[optind], "-") == 0)) {
            c->json_path = argv[optind++];
            return 0;
        }
        fprintf(stderr, "%s: error: --profile takes no value, 'json:FILE' or 'json FILE' ('-': stdout), got '%s'\n",
                who, arg);
        return RFX_EXIT_IO;
    case 'p':
    case OPT_PROFILE_JSON: c->json_path = arg; return 0;
    case OPT_TRACE: c->trace_path = arg; return 0;
    case OPT_TUNE: {
        char err[256];
        if (!rfx_tune_check(arg, err, sizeof err)) {
            fprintf(stderr, "%s: error: --tune: %s\n", who, err);
            return RFX_EXIT_IO;
        }
        return add_word(who, &cfg->tune, &c->tune, arg);
    }
    case 'q': c->quiet = true; return 0;
    /* programs only */
    case 'F': cfg->fact_dir = arg; c->program_only = "-F"; return 0;
    case 'D': cfg->output_dir = arg; c->program_only = "-D"; return 0;
    case 'M':   /* several -M add up, as one blank-separated list */
        c->program_only = "-M";
        return add_word(who, &cfg->macros, &c->macros, arg);
    case 'I':
        c->program_only = "-I";
        return add_word(who, &cfg->include_dirs, &c->include_dirs, arg);
    case OPT_NOPREPROC: cfg->no_preprocessor = true; c->program_only = "--no-preprocessor"; return 0;
    case 'w': cfg->no_warn = true; c->program_only = "-w"; return 0;
    /* Soufflé's ways to compile and its optimiser's switches: they leave answers as they are */
    case 'c': c->program_only = "-c"; return 0;
    case 'C': c->program_only = "-C"; return 0;
    case 'm': c->program_only = "-m"; return 0;
    case 'z': c->program_only = "-z"; return 0;
    case OPT_SOUFFLE_ONLY:   /* its optimiser's, profiler's and warnings' switches */
    case 'W':
    case 'a': c->program_only = c->given; return 0;
    case 't':   /* provenance: only its absence is something rfx can do */
        if (strcmp(arg, "none") != 0) {
            fprintf(stderr, "%s: error: provenance (Soufflé's -t %s) is not supported\n", who, arg);
            return RFX_EXIT_IO;
        }
        return 0;
    case 'g': case 'G': case 's': case 'N': case OPT_CODEGEN:
        fprintf(stderr, "%s: error: %s: Soufflé's C++ generation has no counterpart in rfx, which runs the program "
                        "itself (--emit=cuda prints the CUDA C it generates)\n", who,
                ch == 'g' ? "-g/--generate" : ch == 'G' ? "-G/--generate-many" : ch == 's' ? "-s/--swig"
                : ch == 'N' ? "-N/--generate-namespace" : "--dl-program");
        return RFX_EXIT_IO;
    case 'r':
        fprintf(stderr, "%s: error: Soufflé's HTML debug report is not made by rfx (--emit=STAGE prints each stage: "
                        "ast, plan, harmony, fused, cuda)\n", who);
        return RFX_EXIT_IO;
    case 'P':
        fprintf(stderr, "%s: error: -P/--pragma: give pragmas in the program (.pragma \"key\" \"value\")\n", who);
        return RFX_EXIT_IO;
    case OPT_PREPROCESSOR:
        fprintf(stderr, "%s: error: --preprocessor: rfx runs the system's cpp (macros with -M, include directories "
                        "with -I, --no-preprocessor for none)\n", who);
        return RFX_EXIT_IO;
    case 'v': c->verbose = true; return 0;
    case OPT_PARSE_ONLY: c->parse_only = true; c->program_only = "--parse-errors"; return 0;
    case OPT_SHOW:   /* Soufflé's views of a program, as rfx's nearest stages */
        if (strcmp(arg, "initial-ast") == 0 || strcmp(arg, "transformed-ast") == 0)
            c->emit = "ast";
        else if (strcmp(arg, "initial-ram") == 0 || strcmp(arg, "transformed-ram") == 0)
            c->emit = "plan";
        else if (strcmp(arg, "parse-errors") == 0)
            c->parse_only = true;
        else {
            fprintf(stderr, "%s: error: --show=%s: rfx shows initial-ast and transformed-ast (as --emit=ast), "
                            "initial-ram and transformed-ram (as --emit=plan) and parse-errors\n", who, arg);
            return RFX_EXIT_IO;
        }
        c->program_only = "--show";
        return 0;
    case 'L':
        c->program_only = "-L";
        return add_word(who, &cfg->library_dirs, &c->library_dirs, arg);
    case 'l':
        c->program_only = "-l";
        return add_word(who, &cfg->libraries, &c->libraries, arg);
    case OPT_NOOPT: cfg->no_opt = true; c->program_only = "--no-opt"; return 0;
    /* cliques only */
    case 'k': {
        char *end;
        long n = strtol(arg, &end, 10);
        if (*end || n < 2 || n > 8) {
            fprintf(stderr, "%s: error: -k takes a clique size from 2 to 8, got '%s'\n", who, arg);
            return RFX_EXIT_IO;
        }
        c->k = (int)n;
        c->cliques_only = "-k";
        return 0;
    }
    case OPT_COUNT: c->count = true; c->cliques_only = "--count"; return 0;
    case OPT_ORDER:
        if (strcmp(arg, "id") != 0 && strcmp(arg, "degree") != 0) {
            fprintf(stderr, "%s: error: --order takes id or degree, got '%s'\n", who, arg);
            return RFX_EXIT_IO;
        }
        c->order = strcmp(arg, "degree") == 0;
        c->cliques_only = "--order";
        return 0;
    case 'o': c->out = arg; c->cliques_only = "-o"; return 0;
    case ':':
        fprintf(stderr, "%s: error: option '%s' needs a value\nTry '%s --help'.\n", who, argv[optind - 1], who);
        return RFX_EXIT_IO;
    default:
        if (optopt)
            fprintf(stderr, "%s: error: unknown option '-%c'\nTry '%s --help'.\n", who, optopt, who);
        else
            fprintf(stderr, "%s: error: unknown option '%s'\nTry '%s --help'.\n", who, argv[optind - 1], who);
        return RFX_EXIT_IO;
    }
}

/* Parses the whole command line: -1 to go on, else the exit status (after --help, a
 * message). */
static int parse_command_line(int argc, char **argv, rfx_config *cfg, cmd *c)
{
    c->cliques = cliques_mode(argc, argv);
    c->who = c->cliques ? "rfx cliques" : "rfx";
    c->k = 3;
    c->order = -1;
    int ch;
    opterr = 0;   /* our own messages: getopt's name the binary's path */
    int idx = -1;
    while ((ch = getopt_long(argc, argv, shortopts, longopts, &idx)) != -1) {
        if (idx >= 0)
            snprintf(c->given, sizeof c->given, "--%s", longopts[idx].name);
        else
            snprintf(c->given, sizeof c->given, "-%c", ch > 0 && ch < 128 ? ch : '?');
        idx = -1;
        if (ch == 'h') {
            (c->cliques ? cliques_usage : usage)(stdout);
            return RFX_EXIT_OK;
        }
        if (ch == OPT_VERSION) {
            rfx_describe(stdout);
            return RFX_EXIT_OK;
        }
        if (ch == OPT_TUNE && strcmp(optarg, "help") == 0) {
            printf("tuning knobs (--tune KEY=VALUE; defaults are the measured best, see docs/cli.md):\n");
            rfx_tune_describe(stdout);
            return RFX_EXIT_OK;
        }
        int rc = take_option(ch, optarg, argc, argv, cfg, c);
        if (rc)
            return rc;
    }
    int first = optind + (c->cliques ? 1 : 0);   /* past the word `cliques` */
    const char *what = c->cliques ? "graph" : "program";
    if (first != argc - 1) {
        fprintf(stderr, "%s: error: %s\nTry '%s --help'.\n", c->who,
                first >= argc ? (c->cliques ? "no graph given" : "no program given")
                              : (c->cliques ? "one graph at a time" : "one program at a time"), c->who);
        return RFX_EXIT_IO;
    }
    (void)what;
    c->target = argv[first];
    if (c->cliques && c->program_only) {
        fprintf(stderr, "rfx cliques: error: option '%s' is for programs\n", c->program_only);
        return RFX_EXIT_IO;
    }
    if (!c->cliques && c->cliques_only) {
        fprintf(stderr, "rfx: error: option '%s' is for 'rfx cliques'%s\n", c->cliques_only,
                strcmp(c->cliques_only, "-o") == 0 ? " (Soufflé's -o, a compiled binary, has no counterpart: rfx runs "
                                                     "the program itself)" : "");
        return RFX_EXIT_IO;
    }
    if (c->count && c->out) {
        fprintf(stderr, "rfx cliques: error: --count prints a number; it does not take -o\n");
        return RFX_EXIT_IO;
    }
    if (!c->quiet && (c->verbose || isatty(STDERR_FILENO)))
        cfg->progress = stderr;
    return -1;
}

/* ---- files the command writes and interrupts -------------------------------------------- */
typedef struct out_file {
    const char *path;
    rfx_output *o;
    FILE *f;
} out_file;

/* A file the command writes (the JSON profile, a trace, a clique list), whole or not at
 * all (rfx_output); "-" is stdout. */
static bool out_file_open(out_file *j)
{
    if (strcmp(j->path, "-") == 0) {
        j->f = stdout;
        return true;
    }
    char why[256];
    if (!(j->o = rfx_output_open(j->path, &j->f, why, sizeof why))) {
        fprintf(stderr, "%s: error: cannot write: %s\n", j->path, why);
        return false;
    }
    return true;
}

/* keep: into place; otherwise the temporary file goes. */
static bool out_file_close(out_file *j, bool keep)
{
    if (!j->o)
        return true;
    char why[256];
    bool ok = rfx_output_close(j->o, keep, why, sizeof why);
    j->o = NULL;
    if (!ok && keep)
        fprintf(stderr, "%s: error: cannot write: %s\n", j->path, why);
    return ok || !keep;
}

/* SIGINT and SIGTERM: the unfinished outputs go, a line says so, and the signal then ends
 * the process as it would have (async-signal-safe calls only). */
static void on_signal(int sig)
{
    int n = rfx_remove_unfinished_outputs();
    char msg[128], num[12];
    int d = 0;
    do
        num[sizeof num - 1 - ++d] = (char)('0' + n % 10);
    while ((n /= 10) && d < 10);
    num[sizeof num - 1] = 0;
    const char *parts[] = {"rfx: interrupted by ", sig == SIGINT ? "SIGINT" : "SIGTERM", "; unfinished output files removed: ",
                           num + sizeof num - 1 - d, "\n"};
    size_t len = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *q = parts[i]; *q && len < sizeof msg; q++)
            msg[len++] = *q;
    ssize_t w = write(STDERR_FILENO, msg, len);
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Opens the profile and trace files a run writes; false after a message. */
static bool open_run_files(rfx_config *cfg, const cmd *c, out_file *json, out_file *trace)
{
    if (c->emit)
        return true;
    if (c->json_path) {
        json->path = c->json_path;
        if (!out_file_open(json))
            return false;
        cfg->profile_json = json->f;
    }
    if (c->trace_path) {
        trace->path = c->trace_path;
        if (!out_file_open(trace)) {
            out_file_close(json, false);
            return false;
        }
        cfg->trace = trace->f;
    }
    return true;
}

/* Closes them: a profile or trace is kept whenever the run got far enough to write one
 * (no empty file). */
static int close_run_files(out_file *json, out_file *trace, int rc)
{
    if (!out_file_close(json, json->f && json->f != stdout && ftell(json->f) > 0) && rc == RFX_EXIT_OK)
        rc = RFX_EXIT_IO;
    if (!out_file_close(trace, trace->f && trace->f != stdout && ftell(trace->f) > 0) && rc == RFX_EXIT_OK)
        rc = RFX_EXIT_IO;
    if (fflush(stdout) != 0 && rc == RFX_EXIT_OK) {
        fprintf(stderr, "rfx: error: cannot write to standard output: %s\n", strerror(errno));
        rc = RFX_EXIT_IO;
    }
    return rc;
}

/* rfx_close ends the compiles the runs left in the background (it waits for the one NVRTC
 * is at); the command ends with _exit while compiles are at work (main), so it leaves the
 * engine to the process's end then instead of waiting. */
static void close_engine(rfx_engine *e)
{
    if (!rfx_compiles_pending())
        rfx_close(e);
}

static int cliques_main(rfx_config cfg, const cmd *c)
{
    cfg.output_dir = NULL;      /* the list is written from a cursor, the count from rfx_size */
    cfg.out = NULL;
    out_file json = {0}, trace = {0};
    if (!open_run_files(&cfg, c, &json, &trace))
        return RFX_EXIT_IO;
    char *src = clique_program(c->target, c->k, c->count, c->order < 0 ? c->count : c->order == 1);
    rfx_engine *e = rfx_open(&cfg);   /* opened (and loaded) on every process of a distributed run alike */
    if (!e) {
        free(src);
        if (rfx_mpi_rank() == 0)
            fprintf(stderr, "rfx: error: out of memory\n");
        return close_run_files(&json, &trace, RFX_EXIT_RESOURCE);
    }
    char name[32];
    snprintf(name, sizeof name, "<%d-cliques>", c->k);
    rfx_result rc = rfx_load_string(e, src, name);
    free(src);
    if (rc == RFX_EXIT_OK && c->emit) {
        rc = rfx_emit(e, stage_of(c->emit), stdout);
        close_engine(e);
        return close_run_files(&json, &trace, rc);
    }
    if (rc == RFX_EXIT_OK)
        rc = rfx_run(e);
    size_t n = 0;
    if (rc == RFX_EXIT_OK && c->count && (rc = rfx_size(e, "clique", &n)) == RFX_EXIT_OK)
        printf("%zu\n", n);
    if (rc == RFX_EXIT_OK && !c->count) {
        rfx_cursor *cur = rfx_cursor_open(e, "clique");
        out_file o = {.path = c->out ? c->out : "-"};
        if (!cur)
            rc = RFX_EXIT_RESOURCE;
        else if (!out_file_open(&o))
            rc = RFX_EXIT_IO;
        else {
            errno = 0;
            bool ok = write_cliques(cur, o.f) && (o.f != stdout || fflush(stdout) == 0);
            int saved = errno;
            if (!out_file_close(&o, ok) || !ok) {
                rc = RFX_EXIT_IO;
                if (!ok)
                    fprintf(stderr, "%s: error: cannot write the cliques: %s\n",
                            o.f == stdout ? "rfx cliques" : c->out, saved ? strerror(saved) : "write failed");
            }
        }
        rfx_cursor_close(cur);
    }
    close_engine(e);
    return close_run_files(&json, &trace, rc);
}

static int program_main(rfx_config cfg, const cmd *c)
{
    out_file json = {0}, trace = {0};
    if (!open_run_files(&cfg, c, &json, &trace))
        return RFX_EXIT_IO;
    rfx_engine *e = rfx_open(&cfg);
    if (!e) {   /* where another process of a distributed run failed, process 0 says so */
        if (rfx_mpi_rank() == 0)
            fprintf(stderr, "rfx: error: out of memory\n");
        return close_run_files(&json, &trace, RFX_EXIT_RESOURCE);
    }
    rfx_result rc = rfx_load_file(e, c->target);
    if (rc == RFX_EXIT_OK && c->emit)
        rc = rfx_emit(e, stage_of(c->emit), stdout);
    else if (rc == RFX_EXIT_OK && !c->parse_only)
        rc = rfx_run(e);
    close_engine(e);
    return close_run_files(&json, &trace, rc);
}

/* Under an MPI launcher (mpirun -np N rfx ...), the processes share each run
 * (docs/mpi.md); process 0 alone prints and writes the files the command names. The others
 * parse the same command line, so their messages about it would only repeat process 0's. */
static int start_mpi(int *argc, char ***argv, int *saved_stderr)
{
    char why[256];
    rfx_result r = rfx_mpi_init(argc, argv, why, sizeof why);
    if (r != RFX_EXIT_OK) {
        fprintf(stderr, "rfx: error: %s\n", why);
        return r;
    }
    if (rfx_mpi_rank() > 0) {
        int nul = open("/dev/null", O_WRONLY);
        fflush(stderr);
        *saved_stderr = dup(STDERR_FILENO);
        if (nul < 0 || *saved_stderr < 0 || !freopen("/dev/null", "w", stdout) || dup2(nul, STDERR_FILENO) < 0)
            return RFX_EXIT_IO;
        close(nul);
    }
    return RFX_EXIT_OK;
}

static void others_quiet_files(cmd *c, int saved_stderr)
{
    if (saved_stderr < 0)
        return;
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);   /* a failure in a run may be this process's to tell */
    close(saved_stderr);
    c->json_path = c->json_path ? "/dev/null" : NULL;
    c->trace_path = NULL;
    c->out = c->out ? "/dev/null" : NULL;
}

int main(int argc, char **argv)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.fact_dir = ".";
    cfg.output_dir = ".";
    cfg.out = stdout;
    cfg.diag = stderr;
    cfg.results_only = true;   /* the command shows outputs alone */
    cmd c = {0};
    int saved_stderr = -1;
    int rc = start_mpi(&argc, &argv, &saved_stderr);
    if (rc == RFX_EXIT_OK) {
        rc = parse_command_line(argc, argv, &cfg, &c);
        others_quiet_files(&c, saved_stderr);
    }
    if (rc < 0) {
        catch_signals();
        rc = c.cliques ? cliques_main(cfg, &c) : program_main(cfg, &c);
        signal(SIGINT, SIG_DFL);   /* nothing left unfinished: an MPI launcher may end this process now */
        signal(SIGTERM, SIG_DFL);
    }
    rfx_mpi_finalize();
    free(c.macros);
    free(c.include_dirs);
    free(c.tune);
    free(c.library_dirs);
    free(c.libraries);
    /* a testing aid (docs/cli.md): say when an armed fault was never reached */
    const char *rep = getenv("RFX_FAULT_REPORT");
    long calls = 0;
    if (rep && *rep == '1' && !rfx_fault_status(&calls))
        fprintf(stderr, "rfx: fault injection: not reached (%ld calls)\n", calls);
    if (rfx_compiles_pending()) {   /* kernels a short run did not wait for: not waited for at exit */
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}
