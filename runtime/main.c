/* main.c: the `rfx` command, a thin client of librfx (rfx.h): parse the command line,
 * open an engine, load the program, then print an IR stage or run it. */
#include "rfx.h"

#include <errno.h>
#include <getopt.h>
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
          "  -j, --jobs=N            worker threads (default: all cores)\n"
          "      --backend=KIND      auto, cpu or cuda (default auto: CUDA when a device is present)\n"
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
          "      --profile[=json FILE]  per-operator time, tuples, bytes moved, GB/s and fraction of the\n"
          "                          measured copy bandwidth: a table on stderr, or JSON into FILE ('-': stdout)\n"
          "      --trace=FILE        write a Chrome/Perfetto trace (JSON) of the run: an event per command\n"
          "  -q, --quiet             no progress line on stderr (shown only when stderr is a terminal)\n"
          "  -h, --help              this text\n"
          "      --version           version, backends, GPU and CUDA versions\n"
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

/* Files the command writes (the JSON profile, a clique list) go to a temporary file
 * renamed into place once complete. */
typedef struct out_file {
    const char *path;
    char *tmp;
    FILE *f;
} out_file;

static bool out_file_open(out_file *j)
{
    if (strcmp(j->path, "-") == 0) {
        j->f = stdout;
        return true;
    }
    size_t n = strlen(j->path) + 16;
    j->tmp = malloc(n);
    if (!j->tmp)
        return false;
    snprintf(j->tmp, n, "%s.tmp.XXXXXX", j->path);
    int fd = mkstemp(j->tmp);
    if (fd < 0 || !(j->f = fdopen(fd, "w"))) {
        fprintf(stderr, "%s: error: cannot write: %s\n", j->path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(j->tmp);
        }
        free(j->tmp);
        j->tmp = NULL;
        return false;
    }
    fchmod(fd, 0644);
    return true;
}

/* keep: rename into place; otherwise the temporary file goes. */
static bool out_file_close(out_file *j, bool keep)
{
    if (!j->f || j->f == stdout)
        return true;
    bool ok = fclose(j->f) == 0;
    if (ok && keep && rename(j->tmp, j->path) != 0)
        ok = false;
    if (!ok || !keep)
        unlink(j->tmp);
    if (!ok)
        fprintf(stderr, "%s: error: cannot write: %s\n", j->path, strerror(errno));
    free(j->tmp);
    return ok;
}

/* Long options without a short form. */
enum { OPT_BACKEND = 256, OPT_EMIT, OPT_VERSION, OPT_NOOPT, OPT_PROFILE, OPT_DEVMEM, OPT_JOIN, OPT_COUNT, OPT_TRACE, OPT_NOFUSE, OPT_ORDER, OPT_DEVICES };

static bool pick(const char *arg, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(arg, names[i]) == 0) {
            *out = i;
            return true;
        }
    return false;
}

/* The options programs and `rfx cliques` share: 1 when ch was one (and is set), 0 when it
 * is not one of them, -1 after a message naming `who`. */
static int common_option(int ch, const char *arg, const char *who, rfx_config *cfg, const char **emit)
{
    static const char *const backends[] = {"auto", "cpu", "cuda"}, *const joins[] = {"auto", "binary", "lftj"},
                              *const stages[] = {"ast", "plan", "harmony", "fused", "cuda"};
    int v;
    switch (ch) {
    case 'j': {
        char *end;
        long n = strtol(arg, &end, 10);
        if (*end || n < 1 || n > 256) {
            fprintf(stderr, "%s: error: -j takes a number of threads from 1 to 256, got '%s'\n", who, arg);
            return -1;
        }
        cfg->threads = (int)n;
        return 1;
    }
    case OPT_BACKEND:
        if (!pick(arg, backends, 3, &v)) {
            fprintf(stderr, "%s: error: unknown backend '%s' (auto, cpu, cuda)\n", who, arg);
            return -1;
        }
        cfg->backend = (rfx_backend_kind)v;
        return 1;
    case OPT_JOIN:
        if (!pick(arg, joins, 3, &v)) {
            fprintf(stderr, "%s: error: unknown join method '%s' (auto, binary, lftj)\n", who, arg);
            return -1;
        }
        cfg->join = (rfx_join_kind)v;
        return 1;
    case OPT_DEVMEM:
        if (!(cfg->device_memory = parse_size(arg))) {
            fprintf(stderr, "%s: error: --device-memory takes a size such as 512M or 20G, got '%s'\n", who, arg);
            return -1;
        }
        return 1;
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
                return -1;
            }
            devs[n++] = (int)d;
            if (!*end)
                break;
            p = end;
        }
        cfg->devices = devs;
        cfg->ndevices = n;
        return 1;
    }
    case OPT_EMIT:
        if (!pick(arg, stages, 5, &v)) {
            fprintf(stderr, "%s: error: unknown --emit stage '%s' (ast, plan, harmony, fused, cuda)\n", who, arg);
            return -1;
        }
        *emit = stages[v];
        return 1;
    case OPT_NOFUSE:
        cfg->no_fuse = true;
        return 1;
    default:
        return 0;
    }
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
          "  -j, --jobs=N            worker threads (default: all cores)\n"
          "      --backend=KIND      auto, cpu or cuda\n"
          "      --device-memory=SIZE  cap on GPU memory use (what does not fit runs out of core)\n"
          "      --devices=LIST        GPUs to use, e.g. 0,1 (default 0)\n"
          "      --join=KIND         auto (leapfrog triejoin), binary or lftj\n"
          "      --profile           per-operator table on stderr\n"
          "      --emit=STAGE        print the generated program's ast, plan, harmony, fused or cuda stage and exit\n"
          "  -q, --quiet             no progress line\n"
          "  -h, --help              this text\n",
          f);
}

/* The clique program over `path`, its string escaped for the lexer. */
/* The clique rule over edges oriented from lower to higher id or, by_degree, from the
 * lower-degree end to the higher (ties by id): a high-degree vertex then keeps few
 * out-edges, so skewed graphs give each join level far less to intersect. */
static char *clique_program(const char *path, int k, bool count, bool by_degree)
{
    size_t cap = strlen(path) * 2 + 4096;
    char *p = malloc(cap), *q;
    if (!p)
        return NULL;
    q = p + sprintf(p, ".decl edge(x: number, y: number)\n.input edge(filename=\"");
    for (const char *s = path; *s; s++) {
        if (*s == '"' || *s == '\\')
            *q++ = '\\';
        *q++ = *s;
    }
    q += sprintf(q, "\", format=\"edges\")\n.decl e(x: number, y: number)\n");
    if (by_degree)
        q += sprintf(q, ".decl u(x: number, y: number)\n"
                        "u(x, y) :- edge(x, y), x != y.\n"
                        "u(y, x) :- edge(x, y), x != y.\n"
                        ".decl deg(x: number, d: number)\n"
                        "deg(x, d) :- u(x, _), d = count : { u(x, _) }.\n"
                        "e(x, y) :- u(x, y), deg(x, dx), deg(y, dy), dx < dy.\n"
                        "e(x, y) :- u(x, y), deg(x, d), deg(y, d), x < y.\n");
    else
        q += sprintf(q, "e(x, y) :- edge(x, y), x < y.\n"
                        "e(y, x) :- edge(x, y), y < x.\n");
    q += sprintf(q, ".decl clique(");
    for (int i = 0; i < k; i++)
        q += sprintf(q, "%sv%d: number", i ? ", " : "", i);
    q += sprintf(q, ")\nclique(");
    for (int i = 0; i < k; i++)
        q += sprintf(q, "%sv%d", i ? ", " : "", i);
    q += sprintf(q, ") :- ");
    bool first = true;
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++) {
            q += sprintf(q, "%se(v%d, v%d)", first ? "" : ", ", i, j);
            first = false;
        }
    sprintf(q, ".\n%s", count ? ".printsize clique\n" : ".output clique\n");
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

static int cliques_main(int argc, char **argv, rfx_config cfg)
{
    int k = 3, order = -1;   /* -1: degree when counting, id when listing */
    bool count = false, quiet = false;
    const char *out = NULL, *emit = NULL;
    static const struct option longopts[] = {
        {"count", no_argument, NULL, OPT_COUNT},
        {"order", required_argument, NULL, OPT_ORDER},
        {"output", required_argument, NULL, 'o'},
        {"jobs", required_argument, NULL, 'j'},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"device-memory", required_argument, NULL, OPT_DEVMEM},
        {"devices", required_argument, NULL, OPT_DEVICES},
        {"join", required_argument, NULL, OPT_JOIN},
        {"profile", no_argument, NULL, OPT_PROFILE},
        {"emit", required_argument, NULL, OPT_EMIT},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":k:o:j:qh", longopts, NULL)) != -1) {
        int common = common_option(ch, optarg, "rfx cliques", &cfg, &emit);
        if (common < 0)
            return RFX_EXIT_IO;
        if (common > 0)
            continue;
        switch (ch) {
        case 'k': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 2 || n > 8) {
                fprintf(stderr, "rfx cliques: error: -k takes a clique size from 2 to 8, got '%s'\n", optarg);
                return RFX_EXIT_IO;
            }
            k = (int)n;
            break;
        }
        case OPT_COUNT: count = true; break;
        case OPT_ORDER:
            if (strcmp(optarg, "id") != 0 && strcmp(optarg, "degree") != 0) {
                fprintf(stderr, "rfx cliques: error: --order takes id or degree, got '%s'\n", optarg);
                return RFX_EXIT_IO;
            }
            order = strcmp(optarg, "degree") == 0;
            break;
        case 'o': out = optarg; break;
        case OPT_PROFILE: cfg.profile = stderr; break;
        case 'q': quiet = true; break;
        case 'h': cliques_usage(stdout); return RFX_EXIT_OK;
        case ':':
            fprintf(stderr, "rfx cliques: error: option '%s' needs a value\nTry 'rfx cliques --help'.\n",
                    argv[optind - 1]);
            return RFX_EXIT_IO;
        default:
            fprintf(stderr, "rfx cliques: error: unknown option '%s'\nTry 'rfx cliques --help'.\n", argv[optind - 1]);
            return RFX_EXIT_IO;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "rfx cliques: error: %s\nTry 'rfx cliques --help'.\n",
                optind >= argc ? "no graph given" : "one graph at a time");
        return RFX_EXIT_IO;
    }
    if (count && out) {
        fprintf(stderr, "rfx cliques: error: --count prints a number; it does not take -o\n");
        return RFX_EXIT_IO;
    }
    if (!quiet && isatty(STDERR_FILENO))
        cfg.progress = stderr;
    cfg.output_dir = NULL;      /* the list is written from a cursor, the count from rfx_size */
    cfg.out = NULL;
    char *src = clique_program(argv[optind], k, count, order < 0 ? count : order == 1);
    rfx_engine *e = src ? rfx_open(&cfg) : NULL;
    if (!e) {
        free(src);
        fprintf(stderr, "rfx: error: out of memory\n");
        return RFX_EXIT_RESOURCE;
    }
    char name[32];
    snprintf(name, sizeof name, "<%d-cliques>", k);
    rfx_result rc = rfx_load_string(e, src, name);
    free(src);
    if (rc == RFX_EXIT_OK && emit) {
        rc = rfx_emit(e, stage_of(emit), stdout);
        rfx_close(e);
        return rc;
    }
    if (rc == RFX_EXIT_OK)
        rc = rfx_run(e);
    size_t n = 0;
    if (rc == RFX_EXIT_OK && count && (rc = rfx_size(e, "clique", &n)) == RFX_EXIT_OK)
        printf("%zu\n", n);
    if (rc == RFX_EXIT_OK && !count) {
        rfx_cursor *c = rfx_cursor_open(e, "clique");
        if (!c)
            rc = RFX_EXIT_RESOURCE;
        else if (!out) {
            if (!write_cliques(c, stdout))
                rc = RFX_EXIT_IO;
        } else {
            out_file o = {.path = out};
            if (strcmp(out, "-") == 0 || !out_file_open(&o))
                rc = strcmp(out, "-") == 0 && write_cliques(c, stdout) ? RFX_EXIT_OK : RFX_EXIT_IO;
            else {
                bool ok = write_cliques(c, o.f);
                if (!out_file_close(&o, ok) || !ok)
                    rc = RFX_EXIT_IO;
                if (!ok)
                    fprintf(stderr, "%s: error: cannot write the cliques\n", out);
            }
        }
        rfx_cursor_close(c);
    }
    rfx_close(e);
    if (fflush(stdout) != 0 && rc == RFX_EXIT_OK) {
        fprintf(stderr, "rfx: error: cannot write to standard output\n");
        rc = RFX_EXIT_IO;
    }
    return rc;
}

int main(int argc, char **argv)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.fact_dir = ".";
    cfg.output_dir = ".";
    cfg.out = stdout;
    cfg.diag = stderr;
    if (argc > 1 && strcmp(argv[1], "cliques") == 0)
        return cliques_main(argc - 1, argv + 1, cfg);
    const char *emit = NULL;
    bool quiet = false;
    out_file json = {0}, trace = {0};
    static const struct option longopts[] = {
        {"fact-dir", required_argument, NULL, 'F'},
        {"output-dir", required_argument, NULL, 'D'},
        {"jobs", required_argument, NULL, 'j'},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"emit", required_argument, NULL, OPT_EMIT},
        {"no-opt", no_argument, NULL, OPT_NOOPT},
        {"no-fuse", no_argument, NULL, OPT_NOFUSE},
        {"join", required_argument, NULL, OPT_JOIN},
        {"profile", optional_argument, NULL, OPT_PROFILE},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"device-memory", required_argument, NULL, OPT_DEVMEM},
        {"devices", required_argument, NULL, OPT_DEVICES},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    int ch;
    opterr = 0;   /* our own messages: getopt's name the binary's path */
    while ((ch = getopt_long(argc, argv, ":F:D:j:qh", longopts, NULL)) != -1) {
        int common = common_option(ch, optarg, "rfx", &cfg, &emit);
        if (common < 0)
            return RFX_EXIT_IO;
        if (common > 0)
            continue;
        switch (ch) {
        case 'F': cfg.fact_dir = optarg; break;
        case 'D': cfg.output_dir = optarg; break;
        case OPT_NOOPT: cfg.no_opt = true; break;
        case OPT_PROFILE:
            if (!optarg) {
                cfg.profile = stderr;
                break;
            }
            if (strcmp(optarg, "json") != 0) {
                fprintf(stderr, "rfx: error: --profile takes no value or 'json FILE', got '%s'\n", optarg);
                return RFX_EXIT_IO;
            }
            if (optind >= argc) {
                fprintf(stderr, "rfx: error: --profile=json needs a file name ('-' for stdout)\n");
                return RFX_EXIT_IO;
            }
            json.path = argv[optind++];
            break;
        case OPT_TRACE: trace.path = optarg; break;
        case 'q': quiet = true; break;
        case 'h': usage(stdout); return RFX_EXIT_OK;
        case OPT_VERSION: rfx_describe(stdout); return RFX_EXIT_OK;
        case ':':
            fprintf(stderr, "rfx: error: option '%s' needs a value\nTry 'rfx --help'.\n", argv[optind - 1]);
            return RFX_EXIT_IO;
        default:
            if (optopt)
                fprintf(stderr, "rfx: error: unknown option '-%c'\nTry 'rfx --help'.\n", optopt);
            else
                fprintf(stderr, "rfx: error: unknown option '%s'\nTry 'rfx --help'.\n", argv[optind - 1]);
            return RFX_EXIT_IO;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, optind >= argc ? "rfx: error: no program given\n" : "rfx: error: one program at a time\n");
        fputs("Try 'rfx --help'.\n", stderr);
        return RFX_EXIT_IO;
    }
    if (!quiet && isatty(STDERR_FILENO))
        cfg.progress = stderr;
    if (json.path && !emit) {
        if (!out_file_open(&json))
            return RFX_EXIT_IO;
        cfg.profile_json = json.f;
    }
    if (trace.path && !emit) {
        if (!out_file_open(&trace)) {
            out_file_close(&json, false);
            return RFX_EXIT_IO;
        }
        cfg.trace = trace.f;
    }

    rfx_engine *e = rfx_open(&cfg);
    if (!e) {
        fprintf(stderr, "rfx: error: out of memory\n");
        out_file_close(&json, false);
        out_file_close(&trace, false);
        return RFX_EXIT_RESOURCE;
    }
    rfx_result rc = rfx_load_file(e, argv[optind]);
    if (rc == RFX_EXIT_OK && emit)
        rc = rfx_emit(e, stage_of(emit), stdout);
    else if (rc == RFX_EXIT_OK)
        rc = rfx_run(e);
    rfx_close(e);
    /* a profile is kept whenever the run got far enough to write one (no empty file) */
    if (!out_file_close(&json, json.f && json.f != stdout && ftell(json.f) > 0) && rc == RFX_EXIT_OK)
        rc = RFX_EXIT_IO;
    if (!out_file_close(&trace, trace.f && trace.f != stdout && ftell(trace.f) > 0) && rc == RFX_EXIT_OK)
        rc = RFX_EXIT_IO;
    if (fflush(stdout) != 0 && rc == RFX_EXIT_OK) {
        fprintf(stderr, "rfx: error: cannot write to standard output\n");
        rc = RFX_EXIT_IO;
    }
    return rc;
}
