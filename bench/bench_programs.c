/* bench_programs.c: transitive closure and same generation on edge files through librfx,
 * the CUDA backend against the CPU backend on all cores of the machine. Each engine is
 * opened once and warmed by an untimed run; every timed run reads the .input file again,
 * so the time is the command's but for the process: its start and, for CUDA, the
 * driver's (cuInit and a context, 0.2-0.3 s a process on an H100), which the command's
 * wall time in bench/gpu.sh includes. Prints, per program and graph: tuples, median wall
 * ms of rfx_run on each backend, and their ratio; the two backends' sizes must agree.
 * -c: the CPU backend only (no GPU needed); -g: the CUDA backend only (comparing builds:
 * the CPU's minutes are not needed twice); -v: every run's time on standard error.
 * Usage: bench_programs [-r REPEATS] [-j THREADS] [-c|-g] [-v] [-p tc|sg]... EDGEFILE... */
#include "bench_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reps = 3, threads;
static bool cpu_only, gpu_only, verbose;

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
    bool ready = e && rfx_load_string(e, text, "program.dl") == RFX_EXIT_OK;
    double ms = rfx_bench_engine_ms(e, ready, reps, "r", size, verbose ? (backend == RFX_BACKEND_CUDA ? "cuda" : "cpu") : NULL,
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
        else if (strcmp(argv[first], "-p") == 0 && first + 1 < argc && nkinds < 2 &&
                 (strcmp(argv[first + 1], "tc") == 0 || strcmp(argv[first + 1], "sg") == 0))
            kinds[nkinds++] = argv[++first];
        else
            break;
    }
    if (first >= argc || reps < 1 || reps > 64 || threads < 0 || (cpu_only && gpu_only)) {
        fprintf(stderr, "usage: bench_programs [-r REPEATS] [-j THREADS] [-c|-g] [-v] [-p tc|sg]... EDGEFILE...\n");
        return 2;
    }
    if (!nkinds) {
        kinds[nkinds++] = "tc";
        kinds[nkinds++] = "sg";
    }
    printf("librfx, warm engines, median of %d runs (the .input file read in each); CPU threads: ", reps);
    if (threads)
        printf("%d\n", threads);
    else
        printf("all cores\n");
    printf("%-4s %-28s %14s %10s %10s %9s\n", "prog", "graph", "tuples", "cuda ms", "cpu ms", "cpu/cuda");
    int status = 0;
    for (int k = 0; k < nkinds; k++)
        for (int f = first; f < argc; f++) {
            char text[4096], why_g[256] = "", why_c[256] = "";
            program_text(kinds[k], argv[f], text, sizeof text);
            const char *name = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
            size_t ng = 0, nc = 0;
            double g = cpu_only ? 0 : timed(text, RFX_BACKEND_CUDA, &ng, why_g, sizeof why_g);
            double c = g < 0 || gpu_only ? -1 : timed(text, RFX_BACKEND_CPU, &nc, why_c, sizeof why_c);
            if (cpu_only && c >= 0) {
                printf("%-4s %-28s %14zu %10s %10.1f %9s\n", kinds[k], name, nc, "-", c, "-");
                continue;
            }
            if (gpu_only && g >= 0) {
                printf("%-4s %-28s %14zu %10.1f %10s %9s\n", kinds[k], name, ng, g, "-", "-");
                continue;
            }
            if (g < 0 || c < 0) {
                printf("%-4s %-28s failed: %s\n", kinds[k], name, g < 0 ? why_g : why_c);
                status = 1;
                continue;
            }
            printf("%-4s %-28s %14zu %10.1f %10.1f %8.1fx%s\n", kinds[k], name, ng, g, c, c / g,
                   ng == nc ? "" : "  DISAGREE");
            status |= ng != nc;
            fflush(stdout);
        }
    return status;
}
