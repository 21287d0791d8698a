/* main.c: the `rfx` command: parse, check, plan, and run a Datalog program. */
#include "backend.h"
#include "fault.h"
#include "harmony.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RFX_VERSION "0.1.0"

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
          "      --profile           print time and tuples per operator to stderr\n"
          "  -q, --quiet             no notes on stderr\n"
          "  -h, --help              this text\n"
          "      --version           version and backends\n"
          "\n"
          "exit status: 0 ok, 1 program error, 2 input/output error, 3 out of memory or device failure,\n"
          "4 internal error\n",
          f);
}

static int run_main(int argc, char **argv);

/* RFX_FAULT_REPORT=1: say on stderr when an armed fault was never reached, so a test
 * sweeping N knows where to stop. */
int main(int argc, char **argv)
{
    int rc = run_main(argc, argv);
    const char *rep = getenv("RFX_FAULT_REPORT");
    if (rep && *rep == '1' && !rfx_fault_fired())
        fprintf(stderr, "rfx: fault injection: not reached (%ld calls)\n", rfx_fault_calls());
    return rc;
}

static int run_main(int argc, char **argv)
{
    rfx_run_opts o = {.fact_dir = ".", .output_dir = ".", .nthreads = 0, .backend = RFX_BACKEND_AUTO};
    const char *emit = NULL;
    bool no_opt = false;
    enum { OPT_BACKEND = 256, OPT_EMIT, OPT_VERSION, OPT_NOOPT, OPT_PROFILE, OPT_DEVMEM };
    static const struct option longopts[] = {
        {"fact-dir", required_argument, NULL, 'F'},
        {"output-dir", required_argument, NULL, 'D'},
        {"jobs", required_argument, NULL, 'j'},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"emit", required_argument, NULL, OPT_EMIT},
        {"no-opt", no_argument, NULL, OPT_NOOPT},
        {"profile", no_argument, NULL, OPT_PROFILE},
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
        case 'F': o.fact_dir = optarg; break;
        case 'D': o.output_dir = optarg; break;
        case 'j': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 256) {
                fprintf(stderr, "rfx: error: -j takes a number of threads from 1 to 256, got '%s'\n", optarg);
                return 2;
            }
            o.nthreads = (int)n;
            break;
        }
        case OPT_BACKEND:
            if (strcmp(optarg, "auto") == 0)
                o.backend = RFX_BACKEND_AUTO;
            else if (strcmp(optarg, "cpu") == 0)
                o.backend = RFX_BACKEND_CPU;
            else if (strcmp(optarg, "cuda") == 0)
                o.backend = RFX_BACKEND_CUDA;
            else {
                fprintf(stderr, "rfx: error: unknown backend '%s' (auto, cpu, cuda)\n", optarg);
                return 2;
            }
            break;
        case OPT_EMIT:
            if (strcmp(optarg, "ast") != 0 && strcmp(optarg, "plan") != 0 && strcmp(optarg, "harmony") != 0) {
                fprintf(stderr, "rfx: error: unknown --emit stage '%s' (ast, plan, harmony)\n", optarg);
                return 2;
            }
            emit = optarg;
            break;
        case OPT_NOOPT: no_opt = true; break;
        case OPT_DEVMEM: {
            char *end;
            double v = strtod(optarg, &end);
            double mult = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' || *end == 'm' ? 1048576.0
                        : *end == 'G' || *end == 'g' ? 1073741824.0 : *end == 0 ? 1.0 : -1.0;
            if (*end && end[1] && !(end[1] == 'B' && !end[2]))
                mult = -1;
            if (v <= 0 || mult < 0 || v * mult < 1024) {
                fprintf(stderr, "rfx: error: --device-memory takes a size such as 512M or 20G, got '%s'\n", optarg);
                return 2;
            }
            o.device_memory = (size_t)(v * mult);
            break;
        }
        case OPT_PROFILE: o.profile = true; break;
        case 'q': o.quiet = true; break;
        case 'h': usage(stdout); return 0;
        case OPT_VERSION: {
            char dev[256] = "";
            bool cuda = rfx_cuda_available(dev, sizeof dev);
            printf("rfx %s\nbackends: cpu (available), cuda (%s%s)\n", RFX_VERSION,
                   cuda ? "available: " : RFX_WITH_CUDA ? "built in; no device found" : "not built in", dev);
            return 0;
        }
        case ':':
            fprintf(stderr, "rfx: error: option '%s' needs a value\nTry 'rfx --help'.\n", argv[optind - 1]);
            return 2;
        default:
            if (optopt)
                fprintf(stderr, "rfx: error: unknown option '-%c'\nTry 'rfx --help'.\n", optopt);
            else
                fprintf(stderr, "rfx: error: unknown option '%s'\nTry 'rfx --help'.\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, optind >= argc ? "rfx: error: no program given\n" : "rfx: error: one program at a time\n");
        fputs("Try 'rfx --help'.\n", stderr);
        return 2;
    }
    if (o.nthreads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.nthreads = n > 0 ? (int)(n > 256 ? 256 : n) : 1;
    }

    int nerr;
    bool io_error;
    rfx_program *prog = rfx_frontend_parse_file(argv[optind], stderr, &nerr, &io_error);
    if (!prog)
        return io_error ? RFX_EXIT_IO : nerr < 0 ? RFX_EXIT_RESOURCE : RFX_EXIT_PROGRAM;
    if (emit && strcmp(emit, "ast") == 0) {
        rfx_frontend_print(stdout, prog);
        rfx_program_free(prog);
        return 0;
    }
    rfx_plan_opts po = {.no_passes = no_opt};
    rfx_plan *plan = rfx_plan_build(prog, &po);
    if (!plan) {
        rfx_program_free(prog);
        return RFX_EXIT_RESOURCE;
    }
    if (emit && strcmp(emit, "harmony") == 0) {
        rfx_harmony *h = rfx_harmony_build(plan);
        if (h)
            rfx_harmony_print(stdout, h);
        else
            fprintf(stderr, "rfx: error: out of memory building the Harmony IR\n");
        rfx_harmony_free(h);
        rfx_plan_free(plan);
        rfx_program_free(prog);
        return h ? 0 : RFX_EXIT_RESOURCE;
    }
    if (emit) {
        rfx_plan_print(stdout, plan);
        rfx_plan_free(plan);
        rfx_program_free(prog);
        return 0;
    }
    rfx_status st = rfx_run(plan, prog, &o);
    if (fflush(stdout) != 0 && st == RFX_OK) {
        fprintf(stderr, "rfx: error: cannot write to standard output\n");
        st = RFX_ERR_IO;
    }
    rfx_plan_free(plan);
    rfx_program_free(prog);
    return rfx_status_exit_code(st);
}
