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
          "\n"
          "Computes the fixpoint of a Datalog program (Souffle syntax, LogiQL forms too).\n"
          "\n"
          "options:\n"
          "  -F, --fact-dir=DIR      read <rel>.facts and relative filename= paths from DIR (default .)\n"
          "  -D, --output-dir=DIR    write <rel>.csv into DIR (default .); '-' prints to stdout\n"
          "  -j, --jobs=N            worker threads (default: all cores)\n"
          "      --backend=KIND      auto, cpu or cuda (default auto: CUDA when a device is present)\n"
          "      --device-memory=SIZE  cap on GPU memory use, e.g. 512M or 20G (default: free memory less 5%)\n"
          "      --emit=STAGE        print an IR stage and exit: ast, plan, harmony\n"
          "      --no-opt            skip plan optimisation passes\n"
          "      --join=KIND         auto (leapfrog triejoin for cyclic bodies of 3+ atoms), binary or lftj\n"
          "      --profile[=json FILE]  per-operator time, tuples, bytes moved, GB/s and fraction of the\n"
          "                          measured copy bandwidth: a table on stderr, or JSON into FILE ('-': stdout)\n"
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

/* The JSON profile goes to a temporary file renamed into place once written. */
typedef struct json_out {
    const char *path;
    char *tmp;
    FILE *f;
} json_out;

static bool json_open(json_out *j)
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
        fprintf(stderr, "%s: error: cannot write the profile: %s\n", j->path, strerror(errno));
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

/* keep: rename into place when the run wrote a profile (a run that stopped before it
 * started writes none, and no empty file is left). */
static bool json_close(json_out *j, bool keep)
{
    if (!j->f || j->f == stdout)
        return true;
    keep = keep && ftell(j->f) > 0;
    bool ok = fclose(j->f) == 0;
    if (ok && keep && rename(j->tmp, j->path) != 0)
        ok = false;
    if (!ok || !keep)
        unlink(j->tmp);
    if (!ok)
        fprintf(stderr, "%s: error: cannot write the profile: %s\n", j->path, strerror(errno));
    free(j->tmp);
    return ok;
}

int main(int argc, char **argv)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.fact_dir = ".";
    cfg.output_dir = ".";
    cfg.out = stdout;
    cfg.diag = stderr;
    const char *emit = NULL;
    bool quiet = false;
    json_out json = {0};
    enum { OPT_BACKEND = 256, OPT_EMIT, OPT_VERSION, OPT_NOOPT, OPT_PROFILE, OPT_DEVMEM, OPT_JOIN };
    static const struct option longopts[] = {
        {"fact-dir", required_argument, NULL, 'F'},
        {"output-dir", required_argument, NULL, 'D'},
        {"jobs", required_argument, NULL, 'j'},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"emit", required_argument, NULL, OPT_EMIT},
        {"no-opt", no_argument, NULL, OPT_NOOPT},
        {"join", required_argument, NULL, OPT_JOIN},
        {"profile", optional_argument, NULL, OPT_PROFILE},
        {"device-memory", required_argument, NULL, OPT_DEVMEM},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    int ch;
    opterr = 0;   /* our own messages: getopt's name the binary's path */
    while ((ch = getopt_long(argc, argv, ":F:D:j:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'F': cfg.fact_dir = optarg; break;
        case 'D': cfg.output_dir = optarg; break;
        case 'j': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 256) {
                fprintf(stderr, "rfx: error: -j takes a number of threads from 1 to 256, got '%s'\n", optarg);
                return RFX_EXIT_IO;
            }
            cfg.threads = (int)n;
            break;
        }
        case OPT_BACKEND:
            if (strcmp(optarg, "auto") == 0)
                cfg.backend = RFX_BACKEND_AUTO;
            else if (strcmp(optarg, "cpu") == 0)
                cfg.backend = RFX_BACKEND_CPU;
            else if (strcmp(optarg, "cuda") == 0)
                cfg.backend = RFX_BACKEND_CUDA;
            else {
                fprintf(stderr, "rfx: error: unknown backend '%s' (auto, cpu, cuda)\n", optarg);
                return RFX_EXIT_IO;
            }
            break;
        case OPT_EMIT:
            if (strcmp(optarg, "ast") != 0 && strcmp(optarg, "plan") != 0 && strcmp(optarg, "harmony") != 0) {
                fprintf(stderr, "rfx: error: unknown --emit stage '%s' (ast, plan, harmony)\n", optarg);
                return RFX_EXIT_IO;
            }
            emit = optarg;
            break;
        case OPT_NOOPT: cfg.no_opt = true; break;
        case OPT_JOIN:
            if (strcmp(optarg, "auto") == 0)
                cfg.join = RFX_JOIN_AUTO;
            else if (strcmp(optarg, "binary") == 0)
                cfg.join = RFX_JOIN_BINARY;
            else if (strcmp(optarg, "lftj") == 0)
                cfg.join = RFX_JOIN_LFTJ;
            else {
                fprintf(stderr, "rfx: error: unknown join method '%s' (auto, binary, lftj)\n", optarg);
                return RFX_EXIT_IO;
            }
            break;
        case OPT_DEVMEM:
            if (!(cfg.device_memory = parse_size(optarg))) {
                fprintf(stderr, "rfx: error: --device-memory takes a size such as 512M or 20G, got '%s'\n", optarg);
                return RFX_EXIT_IO;
            }
            break;
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
        if (!json_open(&json))
            return RFX_EXIT_IO;
        cfg.profile_json = json.f;
    }

    rfx_engine *e = rfx_open(&cfg);
    if (!e) {
        fprintf(stderr, "rfx: error: out of memory\n");
        json_close(&json, false);
        return RFX_EXIT_RESOURCE;
    }
    rfx_result rc = rfx_load_file(e, argv[optind]);
    if (rc == RFX_EXIT_OK && emit)
        rc = rfx_emit(e, strcmp(emit, "ast") == 0 ? RFX_STAGE_AST : strcmp(emit, "plan") == 0 ? RFX_STAGE_PLAN
                                                                                           : RFX_STAGE_HARMONY,
                      stdout);
    else if (rc == RFX_EXIT_OK)
        rc = rfx_run(e);
    rfx_close(e);
    /* a profile is kept whenever the run got far enough to write one */
    if (!json_close(&json, true) && rc == RFX_EXIT_OK)
        rc = RFX_EXIT_IO;
    if (fflush(stdout) != 0 && rc == RFX_EXIT_OK) {
        fprintf(stderr, "rfx: error: cannot write to standard output\n");
        rc = RFX_EXIT_IO;
    }
    return rc;
}
