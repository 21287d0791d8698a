/* backend_auto.c: --backend=auto, the host's cores and a device together. Every command
 * runs where a cost model says it ends sooner, the copies its inputs need counted in; a
 * variable lives on the host, the device or both (a copy kept while neither changes it).
 * Small work, such as a long recursion's iterations with deltas of a few tuples, stays on
 * the CPU, where no kernel launch or synchronisation is paid; work that the device does
 * faster goes there. The device is started (in the background, the host working on
 * meanwhile) only once the work run on the host has shown it would pay, or at once where
 * one command alone would: a small program never waits for a CUDA driver. A loop whose
 * relations can grow past a start's worth (the plan's bound by where their values come
 * from, rfx_plan_rows_bound) starts it sooner and waits for it with its heavy commands.
 *
 * Copies inside a loop are charged once over the iterations run so far: a relation is
 * worth moving for a loop that has run long and is likely to run as long again. */
#include "backend.h"
#include "base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ON_HOST = 1, ON_DEV = 2 };

typedef struct auto_ctx {
    const rfx_plan *P;
    rfx_backend *self;         /* the auto backend (its trace callback) */
    rfx_backend *host, *dev;   /* dev NULL until started */
    rfx_backend *last;         /* the backend of the last command (for last_error) */
    unsigned char *where;      /* per variable: ON_HOST | ON_DEV where its rows are current */
    float *out_ratio;          /* per variable: rows its last writer wrote per row of its largest
                                * input (< 0: not written yet, or written in place) */
    const rfx_run_opts *o;
    const rfx_tuning *tune;
    int nthreads;
    bool dev_failed;           /* a start was tried and failed: the host does everything */
    bool warm;                 /* the device is open already (a kept context): no start cost */
    double regret;             /* seconds the device would have saved on work run on the host */
    double host_est, dev_est;  /* the last command's estimated seconds on each (at scale 1) */
    /* timed commands: each side's real speed against the model's (scale = measured / estimated) */
    double host_measured, host_estimated, host_scale;
    double dev_measured, dev_estimated, dev_scale;
    bool starting;             /* start_tid is opening the device in the background */
    pthread_t start_tid;
    atomic_bool start_done;
    double start_t0, start_due;   /* when that start began, and when it should be done */
    rfx_backend *started;      /* what start_tid opened (NULL: failed; why in start_why) */
    char start_why[256];
    int iteration;             /* of the loop running (0 outside loops) */
    bool may_grow;             /* the loop running can derive enough to pay for a start
                                * (auto_loop_iteration) */
    bool tiny;                 /* this iteration runs on the host unplaced (auto_loop_iteration) */
    unsigned long ncmds;       /* commands placed (auto_place=2 alternates by it) */
    char device[320];
    char why[256];             /* why the device could not be started */
} auto_ctx;

static rfx_backend *on(auto_ctx *x, int side)
{
    return side == ON_HOST ? x->host : x->dev;
}

static size_t rows_of(auto_ctx *x, int v)
{
    return x->where[v] & ON_HOST ? x->host->count(x->host, v) : x->dev->count(x->dev, v);
}

/* Seconds to copy v to the side that lacks it (none for a count-only relation: a size). */
static double copy_seconds(const auto_ctx *x, int v, size_t rows)
{
    if (x->P->vars[v].count_only)
        return 0;
    double s = (double)rows * 4.0 * (x->P->vars[v].arity ? x->P->vars[v].arity : 1) / (x->tune->auto_copy_gbs * 1e9);
    return x->iteration > 1 ? s / x->iteration : s;
}

/* Rows of work of an operator over inputs of n[0..k) rows: a sorted join or set operation
 * of a small side against a large one gallops (small x log of the ratio); others read all. */
static double work_rows(bool galloping, const size_t *n, int k)
{
    size_t sum = 0, lo = SIZE_MAX, hi = 0;
    for (int i = 0; i < k; i++) {
        sum += n[i];
        lo = n[i] < lo ? n[i] : lo;
        hi = n[i] > hi ? n[i] : hi;
    }
    if (!galloping || k < 2)
        return (double)sum + 1;
    lo = lo ? lo : 1;
    return (double)lo * (65 - __builtin_clzll(1 + hi / lo)) + 1;
}

/* The rows of the largest of a command's inputs. */
static size_t most_rows(const size_t *rows, int k)
{
    size_t most = 0;
    for (int i = 0; i < k; i++)
        most = rows[i] > most ? rows[i] : most;
    return most;
}

static bool gallops(const rfx_ra_cmd *c)
{
    switch (c->op) {
    case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_INTERSECT: case RFX_RA_DIFFERENCE:
        return c->nkeys > 0;
    case RFX_RA_UNION:
        return c->disjoint && c->dst == c->src[0];
    default:
        return false;
    }
}

/* Whether the host would run command c (or group g) by binary searches of its source. */
static bool searches(const auto_ctx *x, const rfx_ra_cmd *c, const rfx_fgroup *g)
{
    if (c)
        return rfx_cpu_cmd_searches(x->P, c);
    if (g->kind != RFX_FG_FILTER || g->nouts > RFX_FUSED_MAX_OUTS)
        return false;
    const rfx_rx *preds[RFX_FUSED_MAX_OUTS];
    for (int k = 0; k < g->nouts; k++)
        preds[k] = g->outs[k].pred;
    return rfx_cpu_filter_searches(x->P, g->src, preds, g->nouts);
}

/* The device backend, without variables: a CUDA device (a second CPU backend in tests)
 * under its out-of-core layer. */
static rfx_backend *open_device(const rfx_run_opts *o, int nthreads, const rfx_tuning *tune, char *why, size_t cap)
{
    rfx_backend *d = tune->auto_cpu_device ? rfx_backend_cpu(nthreads, o->device_memory, tune)
                                           : rfx_backend_cuda(o, why, cap);
    return d ? rfx_backend_ooc(d, nthreads, tune) : NULL;
}

static void *start_thread(void *arg)
{
    auto_ctx *x = arg;
    x->started = open_device(x->o, x->nthreads, x->tune, x->start_why, sizeof x->start_why);
    atomic_store(&x->start_done, true);
    return NULL;
}

/* Seconds before a device could take commands if it were wanted now: none where one is kept
 * open; where the engine started the driver in the background (rfx_backend_cuda_warm),
 * what is left of that start, and at least a context's own opening. */
static double start_left(const auto_ctx *x)
{
    if (x->warm)
        return 0;
    double full = x->tune->auto_start_ms * 1e-3, now = rfx_seconds(), t0 = 0;
    if (x->starting)
        return x->start_due > now ? x->start_due - now : 0;
    int w = x->tune->auto_cpu_device ? RFX_WARM_NONE : rfx_backend_cuda_warm_state(&t0);
    double open = full / 10;
    if (w == RFX_WARM_READY)
        return open;
    if (w == RFX_WARM_RUNNING)
        return full - (now - t0) > open ? full - (now - t0) : open;
    return full;
}

/* Starts the device in the background while the host goes on with the work. */
static void start_in_background(auto_ctx *x)
{
    if (x->starting || x->dev || x->dev_failed)
        return;
    x->start_t0 = rfx_seconds();
    x->start_due = x->start_t0 + start_left(x);
    x->starting = pthread_create(&x->start_tid, NULL, start_thread, x) == 0;
}

/* The device backend from the background start (waited for) or opened now, given the
 * plan's variables (all empty there); false where none can be used. */
static bool start_device(auto_ctx *x)
{
    rfx_backend *d;
    double t0 = x->starting ? x->start_t0 : rfx_seconds();
    if (x->starting) {
        pthread_join(x->start_tid, NULL);
        x->starting = false;
        d = x->started;
        x->started = NULL;
        snprintf(x->why, sizeof x->why, "%s", x->start_why);
    } else
        d = open_device(x->o, x->nthreads, x->tune, x->why, sizeof x->why);
    if (x->self->span)   /* on the trace's device track: from the start's beginning to its use */
        x->self->span(x->self->span_ctx, "device start", 0, 0, 0, t0, rfx_seconds());
    if (d && d->open_vars(d, x->P) != RFX_OK) {
        d->close(d);
        d = NULL;
        snprintf(x->why, sizeof x->why, "out of memory opening its variables");
    }
    if (!d) {
        x->dev_failed = true;
        return false;
    }
    x->dev = d;
    for (int v = 0; v < x->P->nvars; v++)   /* empty there; the unit relation is set on both */
        if (v == x->P->unit || x->host->count(x->host, v) == 0)
            x->where[v] |= ON_DEV;
    snprintf(x->device, sizeof x->device, "%s and %s", d->device(d), x->host->device(x->host));
    return true;
}

/* Where a command over inputs in[0..k) of rows[0..k) rows, writing dst, runs: ON_HOST or
 * ON_DEV (started if it pays). A command worth more than a launch is timed (*dev_s: the
 * device's estimate for it, else -1): its time teaches the model its side's real speed,
 * and on the host what it took beyond the device's estimate is what not having the device
 * cost; once that adds up (learn) the device starts in the background, to be used from
 * the first command after it is ready. */
static int place(auto_ctx *x, const int *in, const size_t *rows, int k, int dst, bool host_only, bool galloping,
                 bool searches, double *dev_s)
{
    *dev_s = -1;
    if (host_only || x->dev_failed)
        return ON_HOST;
    unsigned long n = x->ncmds++;
    if (x->tune->auto_place == 1 || (x->tune->auto_place == 2 && n % 2))
        return x->dev || start_device(x) ? ON_DEV : ON_HOST;
    if (x->tune->auto_place == 2)
        return ON_HOST;
    double to_host = 0, to_dev = 0;
    bool on_host = true;
    for (int i = 0; i < k; i++)
        on_host &= in[i] < 0 || (x->where[in[i]] & ON_HOST);
    /* a filter the host answers by binary searches (rfx_cpu_filter_searches) reads its range */
    double w = searches ? 65 - __builtin_clzll(1 + rows[0]) : work_rows(galloping, rows, k);
    if (dst >= 0 && x->out_ratio[dst] > 0 && !searches)   /* and writing its output, as last time */
        w += x->out_ratio[dst] * (double)most_rows(rows, k);
    double launch = x->tune->auto_launch_us * 1e-6;
    double host_ns = x->tune->auto_host_ns * x->host_scale;
    if (on_host && w * host_ns * 1e-9 < launch)
        return ON_HOST;   /* less than a launch: no device can be sooner */
    for (int i = 0; i < k; i++) {
        if (in[i] >= 0 && !(x->where[in[i]] & ON_HOST))
            to_host += copy_seconds(x, in[i], rows[i]);
        if (in[i] >= 0 && !(x->where[in[i]] & ON_DEV))
            to_dev += copy_seconds(x, in[i], rows[i]);
    }
    x->host_est = w * x->tune->auto_host_ns * 1e-9;
    x->dev_est = launch + w * x->tune->auto_device_ns * 1e-9;
    double host = to_host + w * host_ns * 1e-9;
    double dev = to_dev + x->dev_est * x->dev_scale;
    *dev_s = dev;   /* timed where it runs on the host */
    if (x->starting && atomic_load(&x->start_done))
        start_device(x);
    if (x->dev || host <= dev)
        return x->dev && dev < host ? ON_DEV : ON_HOST;
    /* a command that alone would pay for (the rest of) the start waits for the device; so
     * does, in a loop that can grow past a start, one the device runs ten times faster:
     * what the host would do of the loop meanwhile the device does in a tenth of the time,
     * and it slows the start (the cores, the memory) and leaves larger relations to copy */
    if (host - dev > start_left(x) || (x->may_grow && x->starting && host > 10 * dev))
        return start_device(x) ? ON_DEV : ON_HOST;
    return ON_HOST;
}

/* A command the model costed (dev_s: the device's estimate for it) took seconds on side:
 * that side's speed is learnt, and on the host the saving missed adds to the regret. A
 * command that copied an input first (the time of a copy is not the side's speed) teaches
 * nothing; one time counts at most four times what the side's speed so far predicts, so
 * that no single outlier (a first launch loading its module) turns the model against a
 * side it would then never try again. */
static void learn(auto_ctx *x, int side, double dev_s, double seconds, bool copied)
{
    if (dev_s < 0 || copied)
        return;
    double est = side == ON_DEV ? x->dev_est * x->dev_scale : x->host_est * x->host_scale;
    seconds = seconds > 4 * est ? 4 * est : seconds < est / 4 ? est / 4 : seconds;
    if (side == ON_DEV) {
        x->dev_measured += seconds;
        x->dev_estimated += x->dev_est;
        if (x->dev_estimated > 0)
            x->dev_scale = x->dev_measured / x->dev_estimated;
        return;
    }
    x->host_measured += seconds;
    x->host_estimated += x->host_est;
    if (x->host_estimated > 0)
        x->host_scale = x->host_measured / x->host_estimated;
    if (seconds > dev_s)
        x->regret += seconds - dev_s;
    /* a loop that has run an iteration is likely to run long: start once the device would
     * have saved a tenth of its start, or auto_grow_regret of it where the loop's relations
     * can grow past what a start is worth; outside loops the rest of the work may be short,
     * and a start wasted costs its wait and the driver's teardown: only once it would have
     * saved a whole start (as renting skis until their price is paid) */
    double share = x->iteration > 0 ? (x->may_grow ? x->tune->auto_grow_regret : 0.1) : 1.0;
    if (x->regret >= share * start_left(x))
        start_in_background(x);
}

/* Makes v current on `side`, copying it there (it stays current where it was; *copied set
 * where a copy was made). */
static rfx_status bring(auto_ctx *x, int v, int side, bool *copied)
{
    if (v < 0 || (x->where[v] & side) || x->P->vars[v].count_only)
        return RFX_OK;
    *copied = true;
    rfx_backend *from = on(x, side == ON_HOST ? ON_DEV : ON_HOST), *to = on(x, side);
    double t0 = rfx_seconds();
    rfx_rows scratch;
    rfx_rows_init(&scratch, x->P->vars[v].arity);
    const rfx_rows *view;
    rfx_status st = from->host_view(from, v, &scratch, &view);
    if (st == RFX_OK)
        st = to->load_host(to, v, view);
    rfx_rows_free(&scratch);
    if (st == RFX_OK)
        x->where[v] |= side;
    if (x->self->span)   /* a trace's copy lanes (1 to the device, 2 to the host) */
        x->self->span(x->self->span_ctx, x->P->vars[v].name, 0, side == ON_DEV ? 1 : 2, rows_of(x, v), t0,
                      rfx_seconds());
    return st;
}

/* A command over in[0..k) (most: its largest input's rows) wrote v: how many rows per input
 * row, for the next estimate of the same writer; none for a relation written in place (its
 * size is not that command's work). */
static void note_output(auto_ctx *x, int v, const int *in, int k, size_t most)
{
    if (v < 0 || x->P->vars[v].count_only)
        return;
    bool in_place = false;
    for (int i = 0; i < k; i++)
        in_place |= in[i] == v;
    x->out_ratio[v] = in_place || !most ? -1.0f : (float)((double)rows_of(x, v) / (double)most);
}

/* v was written on `side`: the other side's copy is stale and freed. */
static void written(auto_ctx *x, int v, int side)
{
    if (v < 0)
        return;
    rfx_backend *other = on(x, side == ON_HOST ? ON_DEV : ON_HOST);
    if (other && (x->where[v] & ~side))
        other->release(other, v);
    x->where[v] = (unsigned char)side;
}

static void pass_spans(auto_ctx *x, rfx_backend *be, rfx_backend *b)
{
    b->span = be->span;
    b->span_ctx = be->span_ctx;
    x->last = b;
}

/* Runs command c, or group g where c is NULL, where place() says: its inputs copied there
 * first, its outputs current there alone after. */
static rfx_status run_placed(rfx_backend *be, const rfx_ra_cmd *c, const rfx_fgroup *g)
{
    auto_ctx *x = be->ctx;
    int in[64], k = c ? rfx_ra_cmd_ninputs(c) : rfx_fgroup_ninputs(g);
    if (k > 64)
        return RFX_ERR_LIMIT;
    size_t rows[64];
    for (int i = 0; i < k; i++) {
        in[i] = c ? rfx_ra_cmd_input(c, i) : rfx_fgroup_input(g, i);
        rows[i] = in[i] >= 0 ? rows_of(x, in[i]) : 0;
    }
    double dev_s;
    int dst = c ? c->dst : rfx_fgroup_output(g, 0);
    int side = c ? place(x, in, rows, k, dst, c->host_only, gallops(c), searches(x, c, g), &dev_s)
                 : place(x, in, rows, k, dst, false, g->kind == RFX_FG_JOIN && g->nkeys > 0, searches(x, c, g), &dev_s);
    size_t most = most_rows(rows, k);
    rfx_status st = RFX_OK;
    bool copied = false;
    for (int i = 0; st == RFX_OK && i < k; i++)
        st = bring(x, in[i], side, &copied);
    if (st != RFX_OK)
        return st;
    rfx_backend *b = on(x, side);
    pass_spans(x, be, b);
    double t0 = dev_s >= 0 || be->span ? rfx_seconds() : 0;
    st = c ? b->exec(b, c) : b->exec_group(b, g);
    double t1 = dev_s >= 0 || be->span ? rfx_seconds() : 0;
    if (dev_s >= 0)
        learn(x, side, dev_s, t1 - t0, copied);
    if (be->span && side == ON_DEV)   /* what ran on the device, on its compute lane */
        be->span(be->span_ctx, c ? rfx_ra_op_name(c->op) : g->name, 0, 0, 0, t0, t1);
    for (int i = 0; st == RFX_OK && i < (c ? 1 : rfx_fgroup_noutputs(g)); i++) {
        int v = c ? c->dst : rfx_fgroup_output(g, i);
        written(x, v, side);
        note_output(x, v, in, k, most);
    }
    return st;
}

static rfx_status auto_exec(rfx_backend *be, const rfx_ra_cmd *c)
{
    auto_ctx *x = be->ctx;
    if (x->tiny) {   /* every variable is on the host alone */
        x->last = x->host;
        return x->host->exec(x->host, c);
    }
    if (c->op == RFX_RA_SWAP || c->op == RFX_RA_CLEAR) {   /* both sides' storage */
        for (int s = ON_HOST; s <= ON_DEV; s++) {
            rfx_backend *b = on(x, s);
            rfx_status st = b ? b->exec(b, c) : RFX_OK;
            if (st != RFX_OK)
                return st;
        }
        if (c->op == RFX_RA_CLEAR)
            x->where[c->dst] = ON_HOST | (x->dev ? ON_DEV : 0);
        else {
            unsigned char t = x->where[c->dst];
            x->where[c->dst] = x->where[c->src[0]];
            x->where[c->src[0]] = t;
        }
        return RFX_OK;
    }
    return run_placed(be, c, NULL);
}

static rfx_status auto_exec_group(rfx_backend *be, const rfx_fgroup *g)
{
    auto_ctx *x = be->ctx;
    if (x->tiny) {
        x->last = x->host;
        return x->host->exec_group(x->host, g);
    }
    return run_placed(be, NULL, g);
}

static rfx_status auto_open(rfx_backend *be, const rfx_plan *P)
{
    auto_ctx *x = be->ctx;
    x->P = P;
    x->where = rfx_malloc((size_t)P->nvars);
    x->out_ratio = rfx_malloc(sizeof(float) * (size_t)(P->nvars ? P->nvars : 1));
    if (!x->where || !x->out_ratio)
        return RFX_ERR_NOMEM;
    memset(x->where, ON_HOST, (size_t)P->nvars);
    for (int v = 0; v < P->nvars; v++)
        x->out_ratio[v] = -1.0f;
    x->host->span = be->span;
    x->host->span_ctx = be->span_ctx;
    return x->host->open_vars(x->host, P);
}

static void auto_close(rfx_backend *be)
{
    auto_ctx *x = be->ctx;
    x->host->close(x->host);
    if (x->starting) {   /* a start not needed in the end: waited for, and closed */
        pthread_join(x->start_tid, NULL);
        if (x->started)
            x->started->close(x->started);
    }
    if (x->dev)
        x->dev->close(x->dev);
    free(x->where);
    free(x->out_ratio);
    free(x);
    free(be);
}

static size_t auto_count(rfx_backend *be, int v)
{
    return rows_of(be->ctx, v);
}

static void auto_release(rfx_backend *be, int v)
{
    auto_ctx *x = be->ctx;
    x->host->release(x->host, v);
    if (x->dev)
        x->dev->release(x->dev, v);
    x->where[v] = ON_HOST | (x->dev ? ON_DEV : 0);
}

/* Rows merged in where v is current (the host where both are). */
static rfx_status auto_merge_host(rfx_backend *be, int v, rfx_rows *rows)
{
    auto_ctx *x = be->ctx;
    int side = x->where[v] & ON_HOST ? ON_HOST : ON_DEV;
    rfx_backend *b = on(x, side);
    rfx_status st = b->merge_host(b, v, rows);
    if (st == RFX_OK)
        written(x, v, side);
    return st;
}

static rfx_status auto_merge_host_kept(rfx_backend *be, int v, const rfx_rows *rows)
{
    auto_ctx *x = be->ctx;
    int side = x->where[v] & ON_HOST ? ON_HOST : ON_DEV;
    rfx_status st = rfx_backend_merge_kept(on(x, side), v, rows, x->nthreads);
    if (st == RFX_OK)
        written(x, v, side);
    return st;
}

static rfx_status auto_host_view(rfx_backend *be, int v, rfx_rows *scratch, const rfx_rows **view)
{
    auto_ctx *x = be->ctx;
    rfx_backend *b = on(x, x->where[v] & ON_HOST ? ON_HOST : ON_DEV);
    return b->host_view(b, v, scratch, view);
}

static rfx_status auto_take_host(rfx_backend *be, int v, rfx_rows *out)
{
    auto_ctx *x = be->ctx;
    int side = x->where[v] & ON_HOST ? ON_HOST : ON_DEV;
    rfx_backend *b = on(x, side);
    rfx_status st;
    if (b->take_host)
        st = b->take_host(b, v, out);
    else {
        rfx_rows scratch;
        rfx_rows_init(&scratch, out->arity);
        const rfx_rows *view;
        st = b->host_view(b, v, &scratch, &view);
        if (st == RFX_OK)
            st = rfx_rows_append(out, view);
        rfx_rows_free(&scratch);
    }
    auto_release(be, v);
    return st;
}

static rfx_status auto_load_host(rfx_backend *be, int v, const rfx_rows *rows)
{
    auto_ctx *x = be->ctx;
    rfx_status st = x->host->load_host(x->host, v, rows);
    if (st == RFX_OK)
        written(x, v, ON_HOST);
    return st;
}

static const char *auto_last_error(rfx_backend *be)
{
    auto_ctx *x = be->ctx;
    return x->last ? x->last->last_error(x->last) : "";
}

static rfx_status auto_sync(rfx_backend *be)
{
    auto_ctx *x = be->ctx;
    return x->dev ? x->dev->sync(x->dev) : RFX_OK;
}

static double auto_copy_bandwidth(rfx_backend *be)
{
    auto_ctx *x = be->ctx;
    return x->dev ? x->dev->copy_bandwidth(x->dev) : x->host->copy_bandwidth(x->host);
}

static const char *auto_device(rfx_backend *be)
{
    auto_ctx *x = be->ctx;
    if (!x->device[0])
        snprintf(x->device, sizeof x->device, "%s (no device started%s%s)", x->host->device(x->host),
                 x->why[0] ? ": " : "", x->why);
    return x->device;
}

static void auto_jit_stats(rfx_backend *be, int *compiled, int *cached, double *compile_ms, double *cache_ms)
{
    auto_ctx *x = be->ctx;
    *compiled = *cached = 0;
    *compile_ms = *cache_ms = 0;
    if (x->dev && x->dev->jit_stats)
        x->dev->jit_stats(x->dev, compiled, cached, compile_ms, cache_ms);
}

/* The device's, once it is started: a loop whose relation outgrows it is split by key
 * ranges as on the device alone (the host has no budget of its own). */
static size_t auto_budget(rfx_backend *be)
{
    auto_ctx *x = be->ctx;
    return x->dev && x->dev->budget ? x->dev->budget(x->dev) : 0;
}

/* An iteration whose deltas are a handful of rows, with no device started or starting,
 * runs on the host without a placement a command: its work is far below a launch. */
enum { TINY_DELTA_ROWS = 16 };

static size_t var_rows(void *ctx, int v)
{
    return rows_of(ctx, v);
}

/* Whether the loop tested by `test` can derive rows whose work on the host would cost a
 * start: its relations' bounds by their columns' sources (rfx_plan_rows_bound), known
 * once the relations before it are complete. A loop with an open column (values made by
 * expressions) is not known to. */
static bool loop_may_grow(auto_ctx *x, const rfx_ra_cmd *test)
{
    double rows = 0;
    for (int k = 0; test && k < test->nvars; k++) {
        double b = rfx_plan_rows_bound(x->P, x->P->vars[test->vars[k]].rel, var_rows, x);
        if (b < 0)
            return false;
        rows += b;
    }
    return rows * x->tune->auto_host_ns * x->host_scale * 1e-9 >= start_left(x);
}

static void auto_loop_iteration(rfx_backend *be, int iteration, size_t delta_rows, const rfx_ra_cmd *test)
{
    auto_ctx *x = be->ctx;
    if (iteration <= 1)
        x->may_grow = iteration == 1 && !x->dev && !x->dev_failed && loop_may_grow(x, test);
    x->iteration = iteration;
    x->tiny = iteration > 0 && delta_rows <= TINY_DELTA_ROWS && !x->dev && !x->starting && !x->tune->auto_place;
}

rfx_backend *rfx_backend_auto(const rfx_run_opts *o, int nthreads, bool warm)
{
    rfx_backend *be = rfx_calloc(1, sizeof *be);
    auto_ctx *x = rfx_calloc(1, sizeof *x);
    const rfx_tuning *tune = o->tune ? o->tune : &rfx_tuning_defaults;
    rfx_backend *host = be && x ? rfx_backend_cpu(nthreads, 0, tune) : NULL;
    if (!host) {
        free(be);
        free(x);
        return NULL;
    }
    *x = (auto_ctx){.self = be, .host = host, .o = o, .tune = tune, .nthreads = nthreads, .warm = warm, .host_scale = 1,
                    .dev_scale = 1};
    *be = (rfx_backend){.name = "auto", .ctx = x, .open_vars = auto_open, .close = auto_close, .count = auto_count,
                        .release = auto_release, .merge_host = auto_merge_host, .merge_host_kept = auto_merge_host_kept, .host_view = auto_host_view,
                        .exec = auto_exec, .exec_group = auto_exec_group, .last_error = auto_last_error,
                        .sync = auto_sync, .copy_bandwidth = auto_copy_bandwidth, .device = auto_device,
                        .jit_stats = auto_jit_stats, .load_host = auto_load_host, .budget = auto_budget,
                        .take_host = auto_take_host, .loop_iteration = auto_loop_iteration};
    return be;
}

rfx_backend *rfx_backend_auto_device(rfx_backend *be)
{
    return be->exec == auto_exec ? ((auto_ctx *)be->ctx)->dev : NULL;
}
