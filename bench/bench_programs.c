/* bench_programs.c: transitive closure and same generation on edge files through librfx,
 * the CUDA backend against the CPU backend on all cores of the machine. Each engine is
 * opened once and warmed by an untimed run; every timed run reads the .input file again,
 * so the time is the command's but for the process: its start and, for CUDA, the
 * driver's (cuInit and a context, 0.2-0.3 s a process on an H100), which the command's
 * wall time in bench/gpu.sh includes. Prints, per program and graph: tuples, median wall
 * ms of rfx_run on each backend, and their ratio; the two backends' sizes must agree.
 * -c: the CPU backend only (no GPU needed); -g: the CUDA backend only (comparing builds:
 * the CPU's minutes are not needed twice); -a: --backend=auto too (the CPU and the device
 * together), a column of its own; -v: every run's time on standard error; -k: the .input
 * file read once, before the warm-up (rfx_read_inputs): the runs time the fixpoint over
 * facts held loaded, as the GPU Datalog papers time theirs.
 * Usage: bench_programs [-r REPEATS] [-j THREADS] [-c|-g] [-a] [-v] [-k] [-p tc|sg]... EDGEFILE... */
#include "bench_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reps = 3, threads;
static bool cpu_only, gpu_only, with_auto, verbose, kept;

static const char *program_text(const char *kind, const char *path, char *buf, size_t cap)
{
    const char *rules = strcmp(kind, "tc") == 0
                            ? "r(x, y) :- edge(x, y).\nr(x, z) :- r(x, y), edge(y, z).\n"
                            : "r(x, y) :- edge(p, x), edge(p, y), x != y.\nr(x, y) :- edge(a, x), r(a, b), edge(b, y).\n";
    snprintf(buf, cap,
             ".decl edge(x: number, y: number)\n.input edge(filename=\"%s\", format=\"edges\")\n.decl r(x: number, y: number)\n%s"
             ".printsize r\n",
             path, rules);
    return buf;
}

/* Median wall ms of rfx_run on backend after a warm-up run, and r's size; -1 on failure (why). */
static double timed(const char *text, rfx_backend_kind backend, size_t *size, char *why, size_t whycap)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.backend = backend;
    cfg.threads = threads;
    cfg.fact_dir = ".";
    rfx_engine *e = rfx_open(&cfg);
    bool ready = e && rfx_load_string(e, text, "program.dl") == RFX_EXIT_OK && (!kept || rfx_read_inputs(e) == RFX_EXIT_OK);
    double ms = rfx_bench_engine_ms(e, ready, reps, "r", size, verbose ? (backend == RFX_BACKEND_CUDA ? "cuda" : backend == RFX_BACKEND_AUTO ? "auto" : "cpu") : NULL,
                                    why, whycap);
    rfx_close(e);
    return ms;
}

int main(int argc, char **argv)
{
    const char *kinds[2];
    int nkinds = 0, first = 1;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (strcmp(argv[first], "-r") == 0 && first + 1 < argc)
            reps = atoi(argv[++first]);
        else if (strcmp(argv[first], "-j") == 0 && first + 1 < argc)
            threads = atoi(argv[++first]);
        else if (strcmp(argv[first], "-c") == 0)
            cpu_only = true;
        else if (strcmp(argv[first], "-g") == 0)
            gpu_only = true;
        else if (strcmp(argv[first], "-v") == 0)
            verbose = true;
        else if (strcmp(argv[first], "-a") == 0)
            with_auto = true;
        else if (strcmp(argv[first], "-k") == 0)
            kept = true;
        else if (strcmp(argv[first], "-p") == 0 && first + 1 < argc && nkinds < 2 &&
                 (strcmp(argv[first + 1], "tc") == 0 || strcmp(argv[first + 1], "sg") == 0))
            kinds[nkinds++] = argv[++first];
        else
            break;
    }
    if (first >= argc || reps < 1 || reps > 64 || threads < 0 || (cpu_only && gpu_only)) {
        fprintf(stderr, "usage: bench_programs [-r REPEATS] [-j THREADS] [-c|-g] [-a] [-v] [-k] [-p tc|sg]... EDGEFILE...\n");
        return 2;
    }
    if (!nkinds) {
        kinds[nkinds++] = "tc";
        kinds[nkinds++] = "sg";
    }
    printf("librfx, warm engines, median of %d runs (%s); CPU threads: ", reps,
           kept ? "the .input file read once, before them" : "the .input file read in each");
    if (threads)
        printf("%d\n", threads);
    else
        printf("all cores\n");
    printf("%-4s %-28s %14s %10s %10s %10s %9s\n", "prog", "graph", "tuples", "cuda ms", "auto ms", "cpu ms",
           "cpu/cuda");
    int status = 0;
    for (int k = 0; k < nkinds; k++)
        for (int f = first; f < argc; f++) {
            char text[4096], why[3][256] = {"", "", ""};
            program_text(kinds[k], argv[f], text, sizeof text);
            const char *name = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
            size_t n[3] = {0, 0, 0};
            double g = cpu_only ? -2 : timed(text, RFX_BACKEND_CUDA, &n[0], why[0], sizeof why[0]);
            double a = !with_auto ? -2 : timed(text, RFX_BACKEND_AUTO, &n[1], why[1], sizeof why[1]);
            double c = gpu_only ? -2 : timed(text, RFX_BACKEND_CPU, &n[2], why[2], sizeof why[2]);
            double t[3] = {g, a, c};
            int fail = g == -1 ? 0 : a == -1 ? 1 : c == -1 ? 2 : -1;
            if (fail >= 0) {
                printf("%-4s %-28s failed: %s\n", kinds[k], name, why[fail]);
                status = 1;
                continue;
            }
            size_t tuples = 0;
            bool agree = true;
            for (int b = 0; b < 3; b++)
                if (t[b] >= 0) {
                    agree &= !tuples || n[b] == tuples;
                    tuples = n[b];
                }
            printf("%-4s %-28s %14zu", kinds[k], name, tuples);
            for (int b = 0; b < 3; b++)
                if (t[b] >= 0)
                    printf(" %10.1f", t[b]);
                else
                    printf(" %10s", "-");
            if (g >= 0 && c >= 0)
                printf(" %8.1fx", c / g);
            else
                printf(" %9s", "-");
            printf("%s\n", agree ? "" : "  DISAGREE");
            status |= !agree;
            fflush(stdout);
        }
    return status;
}
