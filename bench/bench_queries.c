/* bench_queries.c: programs over facts read once, through librfx, as a database runs
 * queries over tables it holds loaded. Per program: an engine reads the program's .input
 * files once (rfx_read_inputs: the load column), runs once untimed (the CUDA driver's
 * start, kernels compiled), then `reps` timed runs over the kept tuples, each writing the
 * program's outputs into OUTDIR (default: none written), then one profiled run for the floor
 * of its scans (the kept inputs read once at the copy bandwidth, rfx_set_profile). Prints a
 * table of load ms, the median and the fastest run ms, the floor ms and the fastest run's
 * fraction of it; exit 1 where a program fails. -p: that run's --profile table on
 * standard error; -t: tuning knobs (rfx_config.tune), to compare settings.
 * Usage: bench_queries [-b cpu|cuda|auto] [-r REPEATS] [-j THREADS] [-p] [-t KEY=VALUE,...] [-D OUTDIR]
 *        -F FACTDIR PROGRAM... */
#include "rfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The first line of the engine's message, for a table cell. */
static void first_line(rfx_engine *e, char *buf, size_t cap)
{
    const char *msg = e ? rfx_errmsg(e) : "out of memory opening an engine";
    const char *nl = strchr(msg, '\n');
    snprintf(buf, cap, "%.*s", (int)(nl ? nl - msg : (long)strlen(msg)), msg);
}

/* One more run, profiled (its table on stderr where show): the floor of its scans in ms
 * (the profile's scan_floor_seconds), -1 where the run fails. */
static double scan_floor_ms(rfx_engine *e, bool show)
{
    char *json = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&json, &len);
    if (!f)
        return -1;
    bool ok = rfx_set_profile(e, show ? stderr : NULL, f) == RFX_EXIT_OK && rfx_run(e) == RFX_EXIT_OK;
    rfx_set_profile(e, NULL, NULL);
    fclose(f);
    const char *at = json ? strstr(json, "\"scan_floor_seconds\": ") : NULL;
    double floor_s = at ? atof(at + strlen("\"scan_floor_seconds\": ")) : 0;
    free(json);
    return ok ? floor_s * 1e3 : -1;
}

int main(int argc, char **argv)
{
    rfx_config cfg;
    rfx_config_init(&cfg);
    cfg.results_only = true;   /* as the rfx command: unread input columns are not interned */
    int reps = 5, first = 1;
    bool show_profile = false;
    for (; first < argc && argv[first][0] == '-'; first++) {
        const char *opt = argv[first], *val = first + 1 < argc ? argv[first + 1] : NULL;
        if (strcmp(opt, "-p") == 0) {
            show_profile = true;
            continue;
        }
        if (!val)
            break;
        if (strcmp(opt, "-b") == 0 && strcmp(val, "cpu") == 0)
            cfg.backend = RFX_BACKEND_CPU;
        else if (strcmp(opt, "-b") == 0 && strcmp(val, "cuda") == 0)
            cfg.backend = RFX_BACKEND_CUDA;
        else if (strcmp(opt, "-b") == 0 && strcmp(val, "auto") == 0)
            cfg.backend = RFX_BACKEND_AUTO;
        else if (strcmp(opt, "-r") == 0)
            reps = atoi(val);
        else if (strcmp(opt, "-j") == 0)
            cfg.threads = atoi(val);
        else if (strcmp(opt, "-F") == 0)
            cfg.fact_dir = val;
        else if (strcmp(opt, "-D") == 0)
            cfg.output_dir = val;
        else if (strcmp(opt, "-t") == 0)
            cfg.tune = val;
        else
            break;
        first++;
    }
    if (first >= argc || argv[first][0] == '-' || !cfg.fact_dir || reps < 1 || reps > 64 || cfg.threads < 0) {
        fprintf(stderr, "usage: bench_queries [-b cpu|cuda|auto] [-r REPEATS] [-j THREADS] [-p] [-t KEY=VALUE,...] [-D OUTDIR] "
                        "-F FACTDIR PROGRAM...\n");
        return 2;
    }
    const char *backend = cfg.backend == RFX_BACKEND_CPU ? "cpu" : cfg.backend == RFX_BACKEND_CUDA ? "cuda" : "auto";
    printf("librfx, %s backend, facts read once per program, then %d timed runs after an untimed one\n", backend,
           reps);
    printf("%-24s %10s %10s %10s %10s %9s\n", "program", "load ms", "median ms", "best ms", "floor ms", "of floor");
    int status = 0;
    double total_load = 0, total_median = 0, total_best = 0, total_floor = 0;
    for (int p = first; p < argc; p++) {
        const char *name = strrchr(argv[p], '/') ? strrchr(argv[p], '/') + 1 : argv[p];
        rfx_engine *e = rfx_open(&cfg);
        double t[64], load = 0;
        bool ok = e && rfx_load_file(e, argv[p]) == RFX_EXIT_OK;
        if (ok) {
            double t0 = now_ms();
            ok = rfx_read_inputs(e) == RFX_EXIT_OK;
            load = now_ms() - t0;
        }
        ok = ok && rfx_run(e) == RFX_EXIT_OK;
        for (int i = 0; ok && i < reps; i++) {
            double t0 = now_ms();
            ok = rfx_run(e) == RFX_EXIT_OK;
            t[i] = now_ms() - t0;
        }
        double floor_ms = ok ? scan_floor_ms(e, show_profile) : 0;
        ok = ok && floor_ms >= 0;
        if (!ok) {
            char why[256];
            first_line(e, why, sizeof why);
            printf("%-24s failed: %s\n", name, why);
            status = 1;
        } else {
            qsort(t, (size_t)reps, sizeof t[0], cmp_double);
            double median = reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2;
            printf("%-24s %10.1f %10.1f %10.1f %10.2f %8.1f%%\n", name, load, median, t[0], floor_ms,
                   t[0] > 0 ? 100 * floor_ms / t[0] : 0);
            total_load += load;
            total_median += median;
            total_best += t[0];
            total_floor += floor_ms;
        }
        fflush(stdout);
        rfx_close(e);
    }
    printf("%-24s %10.1f %10.1f %10.1f %10.2f %8.1f%%\n", "total", total_load, total_median, total_best, total_floor,
           total_best > 0 ? 100 * total_floor / total_best : 0);
    return status;
}
