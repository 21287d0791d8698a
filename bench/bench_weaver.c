/* bench_weaver.c: kernel fusion on the thesis's five patterns (ch. 4.4.1, Figure 24):
 *   (a) back-to-back SELECTs with a PROJECT      (b) a chain of JOINs on one key
 *   (c) a JOIN of three selected relations        (d) several SELECTs over one input
 *   (e) price * (1 - discount) * (1 + tax)
 * Each pattern is a Datalog rule; its plan runs unfused (`--no-fuse`: every operator a
 * precompiled primitive, intermediates in device memory) and fused (the weaver's groups,
 * generated CUDA compiled with NVRTC). Inputs are made on the device (random, never
 * zeros); selectivity is that of each filter. Floor: bytes the fused group must move
 * (inputs read once, outputs written once) over the measured copy bandwidth. "bytes":
 * the bytes the unfused operators must move over those the fused run must, that is the
 * speed-up fusion gives where every operator runs at its floor.
 * Times: CUDA events, warm (the compile happens in the warm-up), median of repeats.
 * Usage: bench_weaver [min_MB max_MB repeats [patterns]]   (default 64 4096 5 abcde) */
#include "backend.h"
#include "gpu_bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rfx_gpu *g, *gf;   /* the unfused runs' context, the fused runs' (a pool each) */

typedef struct pattern {
    char id;
    const char *what;
    int arity, ninputs;        /* of each input relation */
    bool joins;                /* inputs sorted sets with keys in a domain of their size */
} pattern;

static const pattern patterns[] = {
    {'a', "SELECT, SELECT, PROJECT", 3, 1, false},
    {'b', "JOIN chain (3 relations, one key)", 2, 3, true},
    {'c', "JOIN of 3 selected relations", 2, 3, true},
    {'d', "3 SELECTs over one input", 2, 1, false},
    {'e', "price*(1-discount)*(1+tax), filtered", 4, 1, false},
};

#define DOMAIN (1u << 30)

/* The program text for a pattern at selectivity sel (of each filter). */
static void program(char id, double sel, size_t rows, char *buf, size_t cap)
{
    long k1 = (long)(sqrt(sel) * DOMAIN), k = (long)(sel * DOMAIN);
    long kj = (long)(sel * (double)rows);   /* join patterns: second columns lie in [0, rows) */
    uint32_t fbits = (uint32_t)(sel * 0x3f800000u);
    float fk;
    memcpy(&fk, &fbits, 4);
    switch (id) {
    case 'a':
        snprintf(buf, cap,
                 ".decl r(a:number, b:number, c:number)\n.decl o(a:number, c:number)\n.input r\n"
                 "o(a, c) :- r(a, b, c), a < %ld, b < %ld.\n.output o\n", k1, k1);
        break;
    case 'b':
        snprintf(buf, cap,
                 ".decl a(x:number, y:number)\n.decl b(x:number, y:number)\n.decl c(x:number, y:number)\n"
                 ".decl o(x:number, y:number, z:number, w:number)\n.input a\n.input b\n.input c\n"
                 "o(x, y, z, w) :- a(x, y), b(x, z), c(x, w).\n.output o\n");
        break;
    case 'c':
        snprintf(buf, cap,
                 ".decl a(x:number, y:number)\n.decl b(x:number, y:number)\n.decl c(x:number, y:number)\n"
                 ".decl o(x:number, y:number, z:number, w:number)\n.input a\n.input b\n.input c\n"
                 "o(x, y, z, w) :- a(x, y), b(x, z), c(x, w), y < %ld, z < %ld, w < %ld.\n.output o\n",
                 kj, kj, kj);
        break;
    case 'd':
        snprintf(buf, cap,
                 ".decl r(a:number, b:number)\n.decl o1(a:number, b:number)\n.decl o2(a:number, b:number)\n"
                 ".decl o3(b:number)\n.input r\n"
                 "o1(a, b) :- r(a, b), a < %ld.\no2(a, b) :- r(a, b), b < %ld.\no3(b) :- r(a, b), a + b < %ld.\n"
                 ".output o1\n.output o2\n.output o3\n", k, k, (long)(sqrt(2 * sel) * DOMAIN));
        break;
    default:
        snprintf(buf, cap,
                 ".decl item(id:number, price:float, discount:float, tax:float)\n.decl o(id:number, v:float)\n"
                 ".input item\no(i, p * (1.0 - d) * (1.0 + t)) :- item(i, p, d, t), d < %.9g.\n.output o\n",
                 (double)fk);
    }
}

typedef struct run {
    rfx_gpu *ctx;
    const rfx_plan *P;
    const rfx_weave *w;        /* NULL: unfused */
    rfx_dev_rows *V;
} run;

/* The pattern's operators (everything but sorting, de-duplication and merging into the
 * relations, which fused and unfused plans share). */
static rfx_status run_plan(void *arg)
{
    run *r = arg;
    rfx_gpu *g = r->ctx;
    const rfx_plan *P = r->P;
    for (int b = 0; b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            const rfx_fgroup *grp = rfx_weave_group_at(r->w, b, i);
            if (grp && grp->gpu_by_members)
                grp = NULL;   /* as the CUDA backend runs it: its members one by one */
            rfx_status st = RFX_OK;
            if (grp) {
                if (grp->block == b && grp->anchor == i)
                    st = rfx_cuda_run_group(g, grp, r->V);
            } else if (c->op == RFX_RA_SELECT || c->op == RFX_RA_PROJECT || c->op == RFX_RA_MAP ||
                       c->op == RFX_RA_MAPFILTER)
                st = rfx_gpu_mapfilter(g, &r->V[c->src[0]], c->pred, c->out, c->nout, &r->V[c->dst]);
            else if (c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN)
                st = rfx_gpu_join(g, &r->V[c->src[0]], &r->V[c->src[1]], c->nkeys, c->pred, c->out, c->nout,
                                  &r->V[c->dst]);
            if (st)
                return st;
        }
    return RFX_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median ms of each of two runs, timed alternately after a warm-up of both (pool, NVRTC
 * compile or cache), each in a context and memory pool of its own: in one pool, either run
 * saw the pool as the other left it, which alone moved a run's time by up to 2x where both
 * run the same commands (groups run member by member). */
static void median_pair(run *ru, run *rf, int reps, double *tu, double *tf, rfx_status *su, rfx_status *sf)
{
    double u[64], f[64];
    run_plan(ru);
    run_plan(rf);
    for (int i = 0; i < reps; i++) {
        u[i] = rfx_gpu_time_ms(ru->ctx, run_plan, ru, su);
        f[i] = rfx_gpu_time_ms(rf->ctx, run_plan, rf, sf);
    }
    qsort(u, (size_t)reps, sizeof *u, cmp_double);
    qsort(f, (size_t)reps, sizeof *f, cmp_double);
    *tu = u[reps / 2];
    *tf = f[reps / 2];
}

static double rows_bytes(const rfx_plan *P, const rfx_dev_rows *V, int v)
{
    return (double)V[v].n * P->vars[v].arity * 4;
}

/* Bytes a fused group must move: its inputs once, its outputs once. */
static double fgroup_bytes(const rfx_plan *P, const rfx_fgroup *grp, const rfx_dev_rows *V)
{
    double bytes = 0;
    for (int i = 0; i < rfx_fgroup_ninputs(grp); i++)
        bytes += rows_bytes(P, V, rfx_fgroup_input(grp, i));
    for (int i = 0; i < rfx_fgroup_noutputs(grp); i++)
        bytes += rows_bytes(P, V, rfx_fgroup_output(grp, i));
    return bytes;
}

/* Bytes a run of the plan moves at the least, as run_plan runs it: each operator (or
 * generated group) reading its inputs once and writing its output once. Unfused over fused
 * is what fusion can gain where every operator runs at the bandwidth floor. */
static double run_bytes(const rfx_plan *P, const rfx_weave *w, const rfx_dev_rows *V)
{
    double bytes = 0;
    for (int b = 0; b < P->nblocks; b++)
        for (int i = 0; i < P->blocks[b].ncmds; i++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[i];
            const rfx_fgroup *grp = rfx_weave_group_at(w, b, i);
            if (grp && grp->gpu_by_members)
                grp = NULL;
            if (grp) {
                if (grp->block == b && grp->anchor == i)
                    bytes += fgroup_bytes(P, grp, V);
            } else if (c->op == RFX_RA_SELECT || c->op == RFX_RA_PROJECT || c->op == RFX_RA_MAP ||
                       c->op == RFX_RA_MAPFILTER || c->op == RFX_RA_JOIN || c->op == RFX_RA_MAPJOIN) {
                for (int k = 0; k < 2; k++)
                    if (c->src[k] >= 0)
                        bytes += rows_bytes(P, V, c->src[k]);
                bytes += rows_bytes(P, V, c->dst);
            }
        }
    return bytes;
}

/* Bytes the fused groups must move: inputs once, outputs once. */
static double group_bytes(const rfx_plan *P, const rfx_weave *w, const rfx_dev_rows *V)
{
    double bytes = 0;
    for (int k = 0; k < w->ngroups; k++)
        bytes += fgroup_bytes(P, &w->groups[k], V);
    return bytes;
}

static rfx_plan *plan_for(const char *src, bool fuse, rfx_program **prog)
{
    int nerr = 0;
    *prog = rfx_frontend_parse(src, strlen(src), "pattern.dl", stderr, &nerr);
    if (!*prog)
        return NULL;
    rfx_plan_opts po = {.no_fuse_maps = !fuse};
    return rfx_plan_build(*prog, &po, NULL);
}

/* Device variables for a plan with its inputs filled: random rows in [0, DOMAIN) (join
 * inputs: keys and second columns in [0, rows), sorted sets). */
static rfx_dev_rows *make_vars(rfx_gpu *g, const rfx_plan *P, const pattern *pt, size_t rows, uint64_t seed)
{
    rfx_dev_rows *V = calloc((size_t)P->nvars, sizeof *V);
    for (int v = 0; V && v < P->nvars; v++) {
        rfx_gpu_rows_init(&V[v], P->vars[v].arity);
        if (P->vars[v].kind != RFX_PV_REL || !(P->prog->rels[P->vars[v].rel].io & RFX_REL_INPUT))
            continue;
        bool floats = pt->id == 'e';
        uint32_t mod = pt->joins ? (uint32_t)rows : floats ? 0x3f800000u : DOMAIN;
        if (rfx_gpu_fill_random(g, &V[v], rows, seed + (uint64_t)P->vars[v].rel, mod) != RFX_OK ||
            (pt->joins && (rfx_gpu_sort(g, &V[v]) != RFX_OK || rfx_gpu_unique(g, &V[v]) != RFX_OK))) {
            fprintf(stderr, "bench_weaver: cannot make the inputs: %s\n", rfx_gpu_error(g));
            exit(1);
        }
    }
    return V;
}

static void free_vars(rfx_gpu *g, const rfx_plan *P, rfx_dev_rows *V)
{
    for (int v = 0; v < P->nvars; v++)
        rfx_gpu_rows_free(g, &V[v]);
    free(V);
}

int main(int argc, char **argv)
{
    long min_mb = argc > 1 ? atol(argv[1]) : 64, max_mb = argc > 2 ? atol(argv[2]) : 4096;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    const char *which = argc > 4 ? argv[4] : "abcde";
    if (min_mb < 1 || max_mb < min_mb || reps < 1 || reps > 64) {
        fprintf(stderr, "usage: bench_weaver [min_MB max_MB repeats [patterns]]\n");
        return 2;
    }
    char err[512];
    if (!(g = rfx_gpu_open(0, 0, err, sizeof err)) || !(gf = rfx_gpu_open(0, 0, err, sizeof err))) {
        fprintf(stderr, "bench_weaver: %s\n", err);
        return 1;
    }
    double bw = rfx_gpu_copy_bandwidth(g);
    printf("# kernel fusion, %s, measured copy bandwidth %.1f GB/s\n", rfx_gpu_name(g), bw);
    printf("%-3s %-38s %9s %5s %11s %11s %8s %9s %8s %9s %8s\n", "pat", "operators", "input MB", "sel", "unfused ms",
           "fused ms", "speedup", "floor ms", "of floor", "groups", "bytes");
    double log_speedup = 0, log_bytes = 0;
    int nspeed = 0;
    for (size_t p = 0; p < sizeof patterns / sizeof *patterns; p++) {
        const pattern *pt = &patterns[p];
        if (!strchr(which, pt->id))
            continue;
        for (long mb = min_mb; mb <= max_mb; mb *= 4)
            for (int s = 0; s < 2; s++) {
                double sel = s ? 0.9 : 0.1;
                if (pt->id == 'b' && s)
                    continue;   /* no filter: one row per size */
                size_t rows = (size_t)mb * 1048576 / ((size_t)pt->arity * 4 * (size_t)pt->ninputs);
                char src[2048];
                program(pt->id, sel, rows, src, sizeof src);
                rfx_program *pu, *pf;
                rfx_plan *Pu = plan_for(src, false, &pu), *Pf = plan_for(src, true, &pf);
                rfx_weave *w = Pf ? rfx_weave_build(Pf, NULL) : NULL;
                if (!Pu || !Pf || !w) {
                    fprintf(stderr, "bench_weaver: cannot plan pattern %c\n", pt->id);
                    return 1;
                }
                rfx_dev_rows *Vu = make_vars(g, Pu, pt, rows, 7), *Vf = make_vars(gf, Pf, pt, rows, 7);
                rfx_status su = RFX_OK, sf = RFX_OK;
                run ru = {g, Pu, NULL, Vu}, rf = {gf, Pf, w, Vf};
                double tu, tf;
                median_pair(&ru, &rf, reps, &tu, &tf, &su, &sf);
                if (su || sf) {
                    printf("%-3c %-38s %9ld %5.1f  failed: %s\n", pt->id, pt->what, mb, sel, rfx_gpu_error(su ? g : gf));
                    fflush(stdout);
                } else {
                    double floor_ms = group_bytes(Pf, w, Vf) / (bw * 1e9) * 1e3;
                    double ratio = run_bytes(Pu, NULL, Vu) / run_bytes(Pf, w, Vf);
                    printf("%-3c %-38s %9ld %5.1f %11.3f %11.3f %7.2fx %9.3f %7.0f%% %9d %7.2fx\n", pt->id, pt->what, mb,
                           pt->id == 'b' ? 1.0 : sel, tu, tf, tu / tf, floor_ms, 100 * floor_ms / tf, w->ngroups, ratio);
                    fflush(stdout);
                    log_speedup += log(tu / tf);
                    log_bytes += log(ratio);
                    nspeed++;
                }
                free_vars(g, Pu, Vu);
                free_vars(gf, Pf, Vf);
                rfx_weave_free(w);
                rfx_plan_free(Pu);
                rfx_plan_free(Pf);
                rfx_program_free(pu);
                rfx_program_free(pf);
            }
    }
    int compiled, cached;
    double cms, hms;
    rfx_gpu_jit_stats(gf, &compiled, &cached, &cms, &hms);
    printf("# geometric mean speedup %.2fx over %d runs; of the bytes moved, unfused over fused, %.2fx (what fusion\n"
           "# gains where every operator runs at the bandwidth floor)\n",
           nspeed ? exp(log_speedup / nspeed) : 0, nspeed, nspeed ? exp(log_bytes / nspeed) : 0);
    printf("# JIT: %d kernels compiled (%.1f ms each), %d read from the cache (%.2f ms each)\n", compiled,
           compiled ? cms / compiled : 0, cached, cached ? hms / cached : 0);
    rfx_gpu_close(gf);
    rfx_gpu_close(g);
    return 0;
}
