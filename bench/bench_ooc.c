/* bench_ooc.c: triangle counting out of core and on several GPUs, through librfx (the
 * count-only program t(x,y,z) :- e(x,y), e(y,z), e(x,z) over edges oriented on the host
 * from the lower-degree end). For each graph: the run without a cap, then with the device
 * memory capped at fractions of the join's input (the oriented edge relation, 8 bytes an
 * edge: its TrieArray), and, with -d N, the uncapped run spread over devices 0..N-1.
 * Columns:
 *   E MB      the join's input; cap MB the --device-memory given (0: none)
 *   boxes     boxes the join ran in; H2D GB what was copied to the device for them
 *   join s    the LFTJ operator's time (the profile's, host clock around the command,
 *             device synchronised), median of repeats after a warm-up run
 *   run s     the whole rfx_run (loading the inserted edges, registering host rows a join
 *             streams as they land there and making the TrieArray the count by parts
 *             copies from, the join), median of the same repeats
 *   Medges/s  input edges / join s; vs in-core the uncapped join s / this join s
 * Every run's count must equal the uncapped count ("ok").
 * Usage: bench_ooc [-r REPEATS] [-c FRACTION]... [-d NDEV] [-t TRACE.json] [-s SCALE]... [-p SETTINGS]...
 *        [-f EDGEFILE]... [-o degree|rank|id]  (defaults: -c 0.25 -c 0.10 -c 0.05 -s 22
 * -o degree; the trace is of the first capped run). -o rank renames the vertices by degree
 * rank as the triangle counters do (bench_lftj): the orientation is then also by id, so
 * the boxes of an outer interval need no inner slice below it (rfx_lftj_boxes_bound).
 * -p SETTINGS (repeatable): each capped run once per tuning setting (rfx --tune, e.g.
 * -p pairs_slot=8,pairs_held=22,pairs_lanes=1 for the count by parts' shares of the device
 * in 64ths and its lanes, -p pairs=0 for the general boxes instead). */
#include "bench_graphs.h"
#include "rfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program = ".decl e(x: number, y: number)\n"
                             ".decl t(x: number, y: number, z: number)\n"
                             "t(x, y, z) :- e(x, y), e(y, z), e(x, z).\n"
                             ".printsize t\n";

static int reps = 3, ndev = 1;
static rfx_bench_orientation orientation = RFX_ORIENT_DEGREE;
static double fractions[8] = {0.25, 0.10, 0.05};
static int nfractions = 3;
static const char *trace_path;
static const char *configs[8];   /* -p: tuning settings (rfx_config.tune) of the capped runs */
static int nconfigs;
static const char *tune;           /* the setting of the run being measured (NULL: defaults) */
static bool traced;

typedef struct outcome {
    bool ok;
    unsigned long long count;
    double join_s;             /* median */
    double run_s;              /* median */
    size_t boxes;
    double h2d_gb;
} outcome;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Reads the LFTJ row's seconds, the count and the out-of-core line from one run's output. */
static void parse(FILE *prof, FILE *out, double *join_s, unsigned long long *count, size_t *boxes, double *h2d)
{
    char line[512];
    rewind(prof);
    while (fgets(line, sizeof line, prof)) {
        unsigned long long calls;
        double s, mb;
        size_t cmds, parts, spills;
        if (sscanf(line, "LFTJ %llu %lf", &calls, &s) == 2)
            *join_s = s;
        if (sscanf(line, "out of core: %zu commands in %zu parts, %zu variables moved to the host, %lf MB", &cmds,
                   &parts, &spills, &mb) == 4) {
            *boxes = parts;
            *h2d = mb * 1e-3;
        }
    }
    rewind(out);
    while (fgets(line, sizeof line, out))
        sscanf(line, "t\t%llu", count);
}

static outcome measure(const rfx_rows *e, size_t cap, int devices)
{
    outcome o = {false, 0, 0, 0, 0, 0};
    int devs[16];
    for (int d = 0; d < devices && d < 16; d++)
        devs[d] = d;
    double times[16], runs[16];
    int n = 0;
    for (int r = 0; r <= reps; r++) {     /* run 0 warms up */
        FILE *prof = tmpfile(), *out = tmpfile(), *trace = NULL;
        if (!traced && trace_path && cap && r == reps)
            trace = fopen(trace_path, "w");
        rfx_config cfg;
        rfx_config_init(&cfg);
        cfg.backend = RFX_BACKEND_CUDA;
        cfg.device_memory = cap;
        cfg.devices = devs;
        cfg.ndevices = devices;
        cfg.profile = prof;
        cfg.out = out;
        cfg.trace = trace;
        cfg.tune = tune;
        rfx_engine *eng = rfx_open(&cfg);
        bool ok = eng && prof && out && rfx_load_string(eng, program, "triangles.dl") == RFX_EXIT_OK &&
                  rfx_insert_numbers(eng, "e", (const int32_t *)e->data, e->n) == RFX_EXIT_OK;
        const double t0 = rfx_seconds();
        ok = ok && rfx_run(eng) == RFX_EXIT_OK;
        const double run_s = rfx_seconds() - t0;
        if (!ok)
            fprintf(stderr, "bench_ooc: run with cap %zu on %d device(s) failed: %s\n", cap, devices,
                    eng ? rfx_errmsg(eng) : "no engine");
        double s = 0;
        unsigned long long count = 0;
        size_t boxes = 0;
        double h2d = 0;
        if (ok)
            parse(prof, out, &s, &count, &boxes, &h2d);
        rfx_close(eng);
        if (trace) {
            fclose(trace);
            traced = true;
        }
        if (prof)
            fclose(prof);
        if (out)
            fclose(out);
        if (!ok)
            return o;
        o.count = count;
        o.boxes = boxes;
        o.h2d_gb = h2d;
        if (r > 0) {
            runs[n] = run_s;
            times[n++] = s;
        }
    }
    qsort(times, (size_t)n, sizeof *times, cmp_double);
    qsort(runs, (size_t)n, sizeof *runs, cmp_double);
    o.join_s = times[n / 2];
    o.run_s = runs[n / 2];
    o.ok = true;
    return o;
}

static void row(const char *name, size_t m, double emb, double cap_frac, int devices, const outcome *o,
                const outcome *base)
{
    bool same = o->ok && base->ok && o->count == base->count;
    char label[16] = "-";
    if (cap_frac > 0)
        snprintf(label, sizeof label, "%.0f%%", cap_frac * 100);
    printf("%-18s %12zu %9.1f %6s %9.1f %4d %7zu %8.2f %9.4f %8.4f %9.0f %8.2f %12llu %s\n", name, m, emb, label, cap_frac * emb, devices, o->boxes, o->h2d_gb, o->join_s, o->run_s,
           o->join_s > 0 ? (double)m / o->join_s * 1e-6 : 0, o->join_s > 0 ? base->join_s / o->join_s : 0, o->count,
           !o->ok ? "FAILED" : same ? "ok" : "COUNT DIFFERS");
    fflush(stdout);
}

static void bench(const char *name, const uint32_t *edges, size_t m)
{
    rfx_rows e;
    if (!rfx_bench_oriented_set(edges, m, orientation, 16, &e)) {
        fprintf(stderr, "bench_ooc: out of host memory\n");
        exit(3);
    }
    double bytes = (double)e.n * 8;
    outcome base = measure(&e, 0, 1);
    row(name, m, bytes * 1e-6, 0, 1, &base, &base);
    for (int f = 0; f < nfractions; f++)
        for (int c = 0; c < (nconfigs ? nconfigs : 1); c++) {
            char label[64];
            snprintf(label, sizeof label, "%s", name);
            if (nconfigs) {
                tune = configs[c];
                snprintf(label, sizeof label, "%.10s p%s", name, configs[c]);
            }
            outcome o = measure(&e, (size_t)(bytes * fractions[f]), 1);
            row(label, m, bytes * 1e-6, fractions[f], 1, &o, &base);
            tune = NULL;
        }
    if (ndev > 1) {
        outcome o = measure(&e, 0, ndev);
        row(name, m, bytes * 1e-6, 0, ndev, &o, &base);
    }
    rfx_rows_free(&e);
}

int main(int argc, char **argv)
{
    int scales[16], nscales = 0, nfiles = 0;
    const char *files[16];
    bool own_fractions = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc && (!own_fractions || nfractions < 8)) {
            if (!own_fractions)
                nfractions = 0;
            own_fractions = true;
            double f = atof(argv[++i]);
            if (f > 0)        /* -c 0: no capped runs */
                fractions[nfractions++] = f;
        } else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc && nconfigs < 8)
            configs[nconfigs++] = argv[++i];
        else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
            ndev = atoi(argv[++i]);
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
            trace_path = argv[++i];
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc && nscales < 16)
            scales[nscales++] = atoi(argv[++i]);
        else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc && nfiles < 16)
            files[nfiles++] = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc && (!strcmp(argv[i + 1], "degree") ||
                                                                  !strcmp(argv[i + 1], "rank") || !strcmp(argv[i + 1], "id"))) {
            i++;
            orientation = !strcmp(argv[i], "id") ? RFX_ORIENT_ID : !strcmp(argv[i], "rank") ? RFX_ORIENT_RANK
                                                                                            : RFX_ORIENT_DEGREE;
        } else {
            fprintf(stderr, "usage: bench_ooc [-r REPEATS] [-c FRACTION]... [-d NDEV] [-t TRACE.json] [-s SCALE]... "
                            "[-f EDGEFILE]... [-o degree|rank|id] [-p SETTINGS]...\n");
            return 2;
        }
    }
    reps = reps < 1 || reps > 15 ? 3 : reps;
    ndev = ndev < 1 || ndev > 16 ? 1 : ndev;
    if (!nscales && !nfiles)
        scales[nscales++] = 22;
    rfx_describe(stdout);
    printf("triangle counting, median of %d after a warm-up; cap = fraction of the join's input E; edges %s\n", reps,
           orientation == RFX_ORIENT_ID      ? "from the lower id"
           : orientation == RFX_ORIENT_RANK ? "renamed by degree rank, from the lower rank"
                                             : "from the lower-degree end (ids as given)");
    printf("%-18s %12s %9s %6s %9s %4s %7s %8s %9s %8s %9s %8s %12s\n", "graph", "edges", "E MB", "cap", "cap MB", "GPUs",
           "boxes", "H2D GB", "join s", "run s", "Medges/s", "vs in", "triangles");
    rfx_bench_each_graph(files, nfiles, scales, nscales, bench);
    return 0;
}
