/* backend_ooc.c: out-of-core execution (Red Fox thesis ch. 6) over any backend.
 *
 * Each plan variable lives on the inner backend (the device) or on the host. A command
 * whose inputs fit runs whole on the inner backend, its inputs uploaded first; when the
 * device runs out of memory, the variables the command does not read are moved to the
 * host and it is tried once more. A command whose inputs do not fit, or that still runs
 * out, runs in parts, each part's inputs uploaded, computed and its output brought back:
 *   - row-wise operators (SELECT, PROJECT, MAP): chunks of rows, outputs concatenated;
 *   - JOIN, INTERSECT, DIFFERENCE, AGGREGATE: chunks of the left operand's rows with the
 *     right operand's rows of the same keys (a part whose output does not fit is halved;
 *     a join's single left row splits its right range instead);
 *   - UNION: ranges of values cut at the same place in both sorted operands (merge path);
 *   - SORT, UNIQUE: sorted chunks merged on the host;
 *   - LFTJ: boxes (lftj/boxing.c), by the inner backend's lftj_host.
 * Every part is a plan command run by the inner backend on scratch variables, so the
 * CPU backend with a cap runs the same code as a device with little memory.
 * By default, though, the set operations, sorts and UNIQUE among those commands are run
 * by the host's cores over the host rows instead (merged_on_host): each is a pass or a
 * few over its rows, which in parts cross the link both ways. */
#include "backend.h"
#include "base.h"
#include "lftj.h"

#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct ooc_var {
    rfx_rows host;             /* contents when on the host */
    size_t pinned;             /* bytes of host.data registered with the inner backend (host_pin) */
    rfx_lftj_trie trie;        /* host's TrieArray, where the inner's triejoin copies its slices */
    size_t trie_pinned;        /* its bytes, all registered (0: there is none) */
    bool dev;                  /* contents on the inner backend */
    uint64_t last_use;         /* clock of the last command that read or wrote it */
} ooc_var;

typedef struct ooc_ctx {
    rfx_backend *in;
    const rfx_plan *P;
    rfx_plan inner_plan;       /* P's variables and four scratch ones for parts */
    rfx_pvar *inner_vars;
    int sa, sb, sd, su;        /* scratch: left operand, right operand, output, its set */
    bool part_sets;            /* the parts of the running command make their outputs sets */
    bool sets_required;        /* ... and a part that cannot is too big (output ranges) */
    ooc_var *v;
    size_t cap;                /* the inner backend's budget */
    int nthreads;
    uint64_t clock;
    rfx_ooc_stats stats;
    bool part_too_big;         /* the last command had a one-row part that did not fit */
    bool merges_in_parts;      /* tuning ooc_merges_on_device: set operations and sorts in parts too */
    const rfx_tuning *tune;    /* the run's (borrowed) */
    rfx_backend *host;         /* the CPU, for such commands (made on first need) */
    bool *streamed;            /* per variable: a leapfrog triejoin reads it (host_pin) */
    bool *tried;               /* per variable: ... and copies its TrieArray's slices (host_trie) */
    size_t pinned_bytes, pin_limit, pin_from;   /* held, at most, the least rows registered */
    char err[512];
} ooc_ctx;

static size_t row_bytes(int arity)
{
    return sizeof(uint32_t) * (size_t)arity;
}

static size_t var_bytes(ooc_ctx *x, int v)
{
    if (x->P->vars[v].count_only)
        return 0;
    if (x->v[v].dev)
        return x->in->count(x->in, v) * row_bytes(x->P->vars[v].arity);
    return x->v[v].host.data ? x->v[v].host.n * row_bytes(x->v[v].host.arity) : 0;
}

static size_t resident_bytes(ooc_ctx *x)
{
    size_t sum = 0;
    for (int v = 0; v < x->P->nvars; v++)
        if (x->v[v].dev)
            sum += var_bytes(x, v);
    return sum;
}

static void span(ooc_ctx *x, const char *what, int lane, size_t part, double t0)
{
    if (x->in->span)
        x->in->span(x->in->span_ctx, what, 0, lane, part, t0, rfx_seconds());
}

/* ---- host rows a triejoin streams ------------------------------------------------------- */
/* A leapfrog triejoin over host rows copies them to the device again and again (boxes, or
 * chunks streamed past parts of the vertices), at full speed only from page-locked memory.
 * Registering memory costs ~25 ms a GB and holds every CUDA call of the process while it
 * runs: inside the join it sat on the join's critical path (R-MAT 24's 2 GB at a 25% cap:
 * the first boxes waited ~45 ms for it), so the rows of a variable a triejoin reads are
 * registered as they land on the host (an input loaded, a result made there, a spill) and
 * stay so until they are freed, for every join that reads them. Other variables' rows stay
 * pageable (a loop's results would be registered every iteration for one copy each), and
 * at most half of the host's memory is held so (tuning pin_host=0: none; pin_from: the least
 * rows so registered). */

/* The three parts of a TrieArray, as host_trie registers them. */
static void trie_parts(rfx_lftj_trie *t, rfx_rows *part[3])
{
    part[0] = &t->val0;
    part[1] = &t->ptr0;
    part[2] = &t->val1;
}

/* Where the inner backend's triejoin copies slices of a relation's TrieArray rather than its
 * rows (the count of triangles by parts: ~half the bytes), v's TrieArray is made as the rows
 * land, on the host's threads, and registered, so that the join neither builds nor
 * registers it (R-MAT 24's 268 M edges: ~80 ms and ~35 ms, half a 25% cap's count).
 * Rows that are not sorted, or a TrieArray past the limit, leave v without one: the join
 * then sends rows. */
static void host_trie(ooc_ctx *x, int v)
{
    ooc_var *o = &x->v[v];
    if (o->trie_pinned || !x->tried || !x->tried[v] || o->host.arity != 2 || !o->host.n ||
        o->host.n * row_bytes(2) < x->pin_from)
        return;
    double t0 = rfx_seconds();
    if (rfx_lftj_trie_build(&o->host, x->nthreads, &o->trie) != RFX_OK)
        return;
    rfx_rows *part[3];
    trie_parts(&o->trie, part);
    const size_t bytes = (part[0]->n + part[1]->n + part[2]->n) * sizeof(uint32_t);
    int k = 0;
    while (x->pinned_bytes + bytes <= x->pin_limit && k < 3 && x->in->pin_host(x->in, part[k]->data, part[k]->n * 4))
        k++;
    if (k < 3) {
        while (k--)
            x->in->unpin_host(x->in, part[k]->data);
        rfx_lftj_trie_free(&o->trie);
        return;
    }
    o->trie_pinned = bytes;
    x->pinned_bytes += bytes;
    x->stats.trie_bytes += (double)bytes;
    x->stats.trie_seconds += rfx_seconds() - t0;
    span(x, "host TrieArray", 2, (size_t)v, t0);
}

static void host_pin(ooc_ctx *x, int v)
{
    ooc_var *o = &x->v[v];
    const size_t bytes = o->host.n * row_bytes(o->host.arity);
    if (o->pinned || !x->streamed || !x->streamed[v] || !x->in->pin_host || !o->host.data || !bytes || bytes < x->pin_from ||
        x->pinned_bytes + bytes > x->pin_limit)
        return;
    double t0 = rfx_seconds();
    if (x->in->pin_host(x->in, o->host.data, bytes)) {   /* else its copies go through pageable memory */
        o->pinned = bytes;
        x->pinned_bytes += bytes;
        x->stats.pinned_bytes += (double)bytes;
        x->stats.pin_seconds += rfx_seconds() - t0;
        span(x, "pin", 2, (size_t)v, t0);
    }
    host_trie(x, v);
}

/* Undoes host_pin: the rows' registration, their TrieArray. */
static void host_unpin(ooc_ctx *x, int v)
{
    ooc_var *o = &x->v[v];
    if (o->pinned) {
        x->in->unpin_host(x->in, o->host.data);
        x->pinned_bytes -= o->pinned;
        o->pinned = 0;
    }
    if (o->trie_pinned) {
        rfx_rows *part[3];
        trie_parts(&o->trie, part);
        for (int k = 0; k < 3; k++)
            x->in->unpin_host(x->in, part[k]->data);
        rfx_lftj_trie_free(&o->trie);
        x->pinned_bytes -= o->trie_pinned;
        o->trie_pinned = 0;
    }
}

static void host_clear(ooc_ctx *x, int v)
{
    host_unpin(x, v);
    rfx_rows_free(&x->v[v].host);
    x->v[v].host.arity = x->P->vars[v].arity;
}

/* Variable v's host rows become `rows`' (v's old ones are freed; rows is left empty). */
static void host_take(ooc_ctx *x, int v, rfx_rows *rows)
{
    host_clear(x, v);
    rfx_rows_swap(&x->v[v].host, rows);
    host_pin(x, v);
}

/* ---- moving variables ------------------------------------------------------------------ */
/* Brings a variable's contents from the inner backend to the host. */
static rfx_status spill(ooc_ctx *x, int v)
{
    if (!x->v[v].dev)
        return RFX_OK;
    if (x->P->vars[v].count_only) {    /* a size, no rows */
        x->v[v].host.n = x->in->count(x->in, v);
        x->in->release(x->in, v);
        x->v[v].dev = false;
        return RFX_OK;
    }
    rfx_rows scratch;
    rfx_rows_init(&scratch, x->P->vars[v].arity);
    const rfx_rows *view;
    double t0 = rfx_seconds();
    rfx_status st = x->in->host_view(x->in, v, &scratch, &view);
    if (st == RFX_OK && view != &scratch) {   /* a view of the inner's rows: copied */
        rfx_rows_free(&scratch);
        scratch.arity = view->arity;
        if (!view->data)                       /* nullary: a size, no rows */
            scratch.n = view->n;
        else if ((st = rfx_rows_reserve(&scratch, view->n)) == RFX_OK) {
            rfx_parallel_memcpy(scratch.data, view->data, view->n * row_bytes(view->arity), x->nthreads);
            scratch.n = view->n;
        }
    }
    if (st == RFX_OK)
        host_take(x, v, &scratch);
    rfx_rows_free(&scratch);
    if (st != RFX_OK)
        return st;
    x->stats.down_bytes += (double)var_bytes(x, v);
    x->stats.spills++;
    x->in->release(x->in, v);
    x->v[v].dev = false;
    span(x, "spill", 2, (size_t)v, t0);
    return RFX_OK;
}

static bool reads(const rfx_ra_cmd *c, int v)
{
    for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++)
        if (rfx_ra_cmd_input(c, k) == v)
            return true;
    return false;
}

/* Moves to the host every variable on the device that `keep` does not read. */
static rfx_status spill_others(ooc_ctx *x, const int *keep, int nkeep)
{
    for (int v = 0; v < x->P->nvars; v++) {
        bool kept = false;
        for (int k = 0; k < nkeep; k++)
            kept |= keep[k] == v;
        rfx_status st = kept ? RFX_OK : spill(x, v);
        if (st != RFX_OK)
            return st;
    }
    return RFX_OK;
}

/* Where the inner backend does not police its budget, keep the rule: before a command,
 * least recently used variables leave until what stays and the inputs fit in half. */
static rfx_status keep_budget(ooc_ctx *x, const int *keep, int nkeep, size_t need)
{
    if (x->in->enforces_budget)
        return RFX_OK;
    while (resident_bytes(x) + need > x->cap / 2) {
        int lru = -1;
        for (int v = 0; v < x->P->nvars; v++) {
            bool kept = false;
            for (int k = 0; k < nkeep; k++)
                kept |= keep[k] == v;
            if (!kept && x->v[v].dev && var_bytes(x, v) && (lru < 0 || x->v[v].last_use < x->v[lru].last_use))
                lru = v;
        }
        if (lru < 0)
            return RFX_OK;
        rfx_status st = spill(x, lru);
        if (st != RFX_OK)
            return st;
    }
    return RFX_OK;
}

/* Puts a host variable on the inner backend. */
static rfx_status upload(ooc_ctx *x, int v)
{
    if (x->v[v].dev)
        return RFX_OK;
    double t0 = rfx_seconds();
    rfx_status st = x->in->load_host(x->in, v, &x->v[v].host);
    if (st != RFX_OK)
        return st;
    x->stats.up_bytes += (double)var_bytes(x, v);
    host_clear(x, v);
    x->v[v].dev = true;
    span(x, "upload", 1, (size_t)v, t0);
    return RFX_OK;
}

static void drop(ooc_ctx *x, int v)
{
    x->in->release(x->in, v);
    host_clear(x, v);
    x->v[v].dev = false;
}

/* ---- parts --------------------------------------------------------------------------- */
static const uint32_t *row(const rfx_rows *r, size_t i)
{
    return r->data + i * (size_t)r->arity;
}

static rfx_rows view(const rfx_rows *r, size_t lo, size_t hi)
{
    return (rfx_rows){r->data ? r->data + lo * (size_t)r->arity : NULL, hi - lo, hi - lo, r->arity};
}

/* Runs c with its operands replaced by the slices a and b (b may be NULL) on the inner
 * backend and appends the output to out. *big says the part overflowed: the device ran
 * out of memory, or (where the budget is only a rule) its output would not have fitted;
 * with `must`, a part that cannot be made smaller, only the first counts. */
static rfx_status run_part(ooc_ctx *x, const rfx_ra_cmd *c, const rfx_rows *a, const rfx_rows *b, rfx_rows *out,
                           bool must, bool *big)
{
    rfx_ra_cmd p = *c;
    p.src[0] = x->sa;
    p.src[1] = b ? x->sb : c->src[1];
    p.dst = x->sd;
    *big = false;
    size_t part = x->stats.parts++;
    double t0 = rfx_seconds();
    rfx_rows none;
    rfx_rows_init(&none, x->P->vars[c->dst].arity);
    rfx_status st = x->in->load_host(x->in, x->sa, a);
    if (st == RFX_OK && b)
        st = x->in->load_host(x->in, x->sb, b);
    if (st == RFX_OK)
        st = x->in->load_host(x->in, x->sd, &none);
    size_t in = a->n * row_bytes(a->arity) + (b ? b->n * row_bytes(b->arity) : 0);
    x->stats.up_bytes += (double)in;
    span(x, "upload part", 1, part, t0);
    t0 = rfx_seconds();
    if (st == RFX_OK)
        st = x->in->exec(x->in, &p);
    span(x, "part", 0, part, t0);
    int res = x->sd;
    if (st == RFX_OK && x->part_sets && x->P->vars[c->dst].set_read) {
        /* an output read only as a set leaves the device without its repeats (a join's are
         * often most of it): less to copy, hold and sort on the host; a part whose sort
         * drops under a quarter ends this for the command's other parts */
        size_t before = x->in->count(x->in, x->sd);
        rfx_ra_cmd u = {.op = RFX_RA_SORT_UNIQUE, .dst = x->su, .src = {x->sd, -1}, .rule = -1, .io = -1};
        rfx_status su = x->in->exec(x->in, &u);
        if (su == RFX_OK) {
            res = x->su;
            x->in->release(x->in, x->sd);
            x->part_sets = x->in->count(x->in, x->su) * 4 <= before * 3;
        } else if (su == RFX_ERR_NOMEM && x->sets_required) {   /* a smaller part may sort */
            *big = true;
        } else if (su == RFX_ERR_NOMEM) {   /* no room to sort: the rows go as they are */
            x->in->release(x->in, x->su);
            x->part_sets = false;
        } else
            st = su;
    }
    if (st == RFX_OK && !*big) {
        size_t outb = x->in->count(x->in, res) * row_bytes(x->P->vars[c->dst].arity);
        *big = !must && !x->in->enforces_budget && in + outb > x->cap;
        if (!*big) {
            rfx_rows scratch;
            rfx_rows_init(&scratch, x->P->vars[c->dst].arity);
            const rfx_rows *rows;
            t0 = rfx_seconds();
            st = x->in->host_view(x->in, res, &scratch, &rows);
            if (st == RFX_OK)
                st = rfx_rows_append_parallel(out, rows, x->nthreads);
            x->stats.down_bytes += (double)outb;
            rfx_rows_free(&scratch);
            span(x, "download part", 2, part, t0);
        }
    } else if (st == RFX_ERR_NOMEM) {   /* out of device memory: a smaller part may fit */
        *big = true;
        st = RFX_OK;
    }
    x->in->release(x->in, x->sa);
    x->in->release(x->in, x->sb);
    x->in->release(x->in, x->sd);
    x->in->release(x->in, x->su);
    return st;
}

static rfx_status too_big(ooc_ctx *x, const char *what, size_t rows)
{
    snprintf(x->err, sizeof x->err, "a part of %s of %zu rows does not fit in the device memory budget (%zu bytes): %s",
             what, rows, x->cap, x->in->last_error(x->in));
    x->part_too_big = true;
    return RFX_ERR_NOMEM;
}

/* The input bytes a part may take: a quarter of the budget leaves room for the output
 * and the operator's scratch. */
static size_t part_budget(ooc_ctx *x)
{
    return x->cap / 4 > 64 ? x->cap / 4 : 64;
}

/* Row-wise operators (and the sorted chunks of SORT / UNIQUE): chunks of a's rows. */
static rfx_status chunked(ooc_ctx *x, const rfx_ra_cmd *c, const rfx_rows *a, rfx_rows *out, rfx_rows **runs,
                          size_t *nruns)
{
    size_t rb = row_bytes(a->arity), chunk = part_budget(x) / (rb ? rb : 1);
    chunk = chunk < 1 ? 1 : chunk;
    for (size_t at = 0; at < a->n;) {
        size_t n = a->n - at < chunk ? a->n - at : chunk;
        rfx_rows s = view(a, at, at + n);
        rfx_rows *to = out;
        if (runs) {               /* SORT: each chunk is a run of its own */
            rfx_rows *r = rfx_realloc(*runs, (*nruns + 1) * sizeof **runs);
            if (!r)
                return RFX_ERR_NOMEM;
            *runs = r;
            to = &r[*nruns];
            rfx_rows_init(to, out->arity);
            ++*nruns;
        }
        bool big;
        rfx_status st = run_part(x, c, &s, NULL, to, n == 1, &big);
        if (st != RFX_OK)
            return st;
        if (big) {
            if (n == 1)
                return too_big(x, rfx_ra_op_name(c->op), n);
            if (runs)
                rfx_rows_free(&(*runs)[--*nruns]);
            chunk = n / 2;        /* smaller chunks from here on */
            continue;
        }
        at += n;
    }
    return RFX_OK;
}

/* The rows of b whose first k columns equal those of some row of a[a0, a1) (a and b
 * sorted on them); all of b for k = 0. */
static void key_range(const rfx_rows *a, size_t a0, size_t a1, const rfx_rows *b, int k, size_t *b0, size_t *b1)
{
    if (k == 0) {
        *b0 = 0;
        *b1 = b->n;
        return;
    }
    *b0 = rfx_rows_bound(b, 0, row(a, a0), k, false);
    *b1 = rfx_rows_bound(b, *b0, row(a, a1 - 1), k, true);
}

typedef struct keyed {
    ooc_ctx *x;
    const rfx_ra_cmd *c;
    const rfx_rows *a, *b;
    int k;
    bool split_b;              /* a join: one left row pairs with each right row alone */
    rfx_rows *out;
} keyed;

static rfx_status keyed_part(keyed *K, size_t a0, size_t a1, size_t b0, size_t b1)
{
    bool atomic = a1 - a0 == 1 && (!K->split_b || b1 - b0 <= 1), big;
    rfx_rows sa = view(K->a, a0, a1), sb = view(K->b, b0, b1);
    rfx_status st = run_part(K->x, K->c, &sa, &sb, K->out, atomic, &big);
    if (st != RFX_OK || !big)
        return st;
    if (a1 - a0 > 1) {         /* halve the left rows, each half with its own keys */
        size_t m = a0 + (a1 - a0) / 2, c0, c1;
        key_range(K->a, a0, m, K->b, K->k, &c0, &c1);
        if ((st = keyed_part(K, a0, m, c0, c1)) != RFX_OK)
            return st;
        key_range(K->a, m, a1, K->b, K->k, &c0, &c1);
        return keyed_part(K, m, a1, c0, c1);
    }
    if (K->split_b && b1 - b0 > 1) {
        size_t m = b0 + (b1 - b0) / 2;
        if ((st = keyed_part(K, a0, a1, b0, m)) != RFX_OK)
            return st;
        return keyed_part(K, a0, a1, m, b1);
    }
    return too_big(K->x, rfx_ra_op_name(K->c->op), 1);
}

/* JOIN, MAPJOIN, PRODUCT, INTERSECT, DIFFERENCE, AGGREGATE: chunks of the left operand's
 * rows, each as long as its rows and the right operand's rows of its keys fit a part. */
static rfx_status keyed_parts(keyed *K)
{
    size_t pb = part_budget(K->x), ra = row_bytes(K->a->arity), rb = row_bytes(K->b->arity);
    for (size_t a0 = 0; a0 < K->a->n;) {
        /* the longest chunk that fits, by binary search (its right range grows with it) */
        size_t lo = a0 + 1, hi = K->a->n, b0, b1;
        while (lo < hi) {
            size_t m = lo + (hi - lo + 1) / 2;
            key_range(K->a, a0, m, K->b, K->k, &b0, &b1);
            if ((m - a0) * ra + (b1 - b0) * rb <= pb)
                lo = m;
            else
                hi = m - 1;
        }
        key_range(K->a, a0, lo, K->b, K->k, &b0, &b1);
        rfx_status st = RFX_OK;
        if (K->split_b && lo - a0 == 1 && (b1 - b0) * rb + ra > pb) {
            /* one left row whose right rows alone are too many: they go in pieces */
            size_t per = pb > ra ? (pb - ra) / (rb ? rb : 1) : 1;
            per = per < 1 ? 1 : per;
            for (size_t at = b0; at < b1 && st == RFX_OK; at += per)
                st = keyed_part(K, a0, lo, at, b1 - at < per ? b1 : at + per);
        } else
            st = keyed_part(K, a0, lo, b0, b1);
        if (st != RFX_OK)
            return st;
        a0 = lo;
    }
    return RFX_OK;
}

typedef struct in_range {
    const rfx_rows *r;
    int col, chunks;
    uint64_t lo, hi;
    size_t *at;                /* per chunk: its rows in range, then where they go */
    rfx_rows *out;             /* NULL while counting */
} in_range;

static void in_range_chunk(int i, void *arg)
{
    in_range *f = arg;
    size_t from = f->r->n * (size_t)i / (size_t)f->chunks, to = f->r->n * (size_t)(i + 1) / (size_t)f->chunks, n = 0;
    const size_t a = (size_t)f->r->arity;
    for (size_t k = from; k < to; k++) {
        const uint32_t *t = row(f->r, k);
        if (t[f->col] < f->lo || t[f->col] >= f->hi)
            continue;
        if (f->out)
            memcpy(f->out->data + (f->at[i] + n) * a, t, sizeof(uint32_t) * a);
        n++;
    }
    if (!f->out)
        f->at[i] = n;
}

/* out = r's rows whose column col is in [lo, hi), in order, on all threads. Counted before
 * they are copied, so out is their size: rfx_cpu_mapfilter would reserve the whole operand
 * for each range, where memory is what runs short. */
static rfx_status rows_in_range(const rfx_rows *r, int col, uint64_t lo, uint64_t hi, rfx_rows *out, int nthreads)
{
    enum { CHUNKS = 256 };
    size_t at[CHUNKS], total = 0;
    in_range f = {r, col, r->n < CHUNKS ? 1 : CHUNKS, lo, hi, at, NULL};
    rfx_parallel_for(f.chunks, nthreads, in_range_chunk, &f);
    for (int i = 0; i < f.chunks; i++) {
        size_t n = at[i];
        at[i] = total;
        total += n;
    }
    rfx_rows_init(out, r->arity);
    rfx_status st = rfx_rows_reserve(out, total ? total : 1);
    if (st != RFX_OK)
        return st;
    out->n = total;
    f.out = out;
    rfx_parallel_for(f.chunks, nthreads, in_range_chunk, &f);
    return RFX_OK;
}

/* A join whose output only a SORT_UNIQUE reads, too big to hold and sort at once, runs by
 * ranges of its first output column, a column of one operand (`side`): each range's rows of
 * that operand (still in key order) join the whole other operand and leave the device as a
 * sorted set, and the ranges ascend, so the output is one sorted set with no repeats left to
 * sort out on the host (parts by join keys would each keep their own copy of a repeat). A
 * range still too big halves; one of a single value runs by keys. */
static rfx_status range_part(keyed *K, int side, const rfx_rows *r, int col, uint64_t lo, uint64_t hi)
{
    ooc_ctx *x = K->x;
    rfx_rows sub;
    rfx_status st = rows_in_range(r, col, lo, hi, &sub, x->nthreads);
    if (st != RFX_OK || sub.n == 0) {
        rfx_rows_free(&sub);
        return st;
    }
    bool big;
    rfx_rows whole = side ? view(K->a, 0, K->a->n) : view(K->b, 0, K->b->n);
    x->part_sets = x->sets_required = true;
    st = run_part(x, K->c, side ? &whole : &sub, side ? &sub : &whole, K->out, false, &big);
    x->sets_required = false;
    if (st == RFX_OK && big) {
        uint64_t least = UINT64_MAX, most = 0;
        for (size_t i = 0; i < sub.n; i++) {
            uint32_t v = row(&sub, i)[col];
            least = v < least ? v : least;
            most = v > most ? v : most;
        }
        if (least < most) {
            uint64_t m = least + (most - least + 1) / 2;
            st = range_part(K, side, &sub, col, least, m);
            if (st == RFX_OK)
                st = range_part(K, side, &sub, col, m, most + 1);
        } else {
            keyed k = *K;
            *(side ? &k.b : &k.a) = &sub;
            st = keyed_parts(&k);
        }
    }
    rfx_rows_free(&sub);
    return st;
}

static rfx_status output_ranges(keyed *K, int side, int col, size_t out_bytes)
{
    ooc_ctx *x = K->x;
    const rfx_rows *r = side ? K->b : K->a;
    /* each range's output, with repeats, and its sorted copy within a third of the budget */
    size_t n = out_bytes / (x->cap / 3 > 0 ? x->cap / 3 : 1) + 1, step = r->n / 4096 + 1;
    n = n > 4096 ? 4096 : n;
    /* bounds at quantiles of a sample of the column's values */
    size_t ns = (r->n + step - 1) / step;
    uint32_t *sample = rfx_malloc(sizeof(uint32_t) * (ns ? ns : 1));
    if (!sample)
        return RFX_ERR_NOMEM;
    for (size_t i = 0; i < ns; i++)
        sample[i] = row(r, i * step)[col];
    rfx_rows srt = {sample, ns, ns, 1};
    rfx_status st = rfx_cpu_sort(&srt, 1);
    sample = srt.data;
    uint64_t lo = 0;
    for (size_t q = 1; q <= n && st == RFX_OK; q++) {
        uint64_t hi = q == n ? (uint64_t)UINT32_MAX + 1 : sample[ns * q / n];
        if (hi > lo)
            st = range_part(K, side, r, col, lo, hi);
        lo = hi > lo ? hi : lo;
    }
    free(sample);
    return st;
}

/* UNION of sorted sets: parts hold the next rows of both in merged order (merge path),
 * cut between distinct values, so each part's union is the next piece of the result. */
static rfx_status union_parts(ooc_ctx *x, const rfx_ra_cmd *c, const rfx_rows *a, const rfx_rows *b, rfx_rows *out)
{
    int k = a->arity;
    size_t rb = row_bytes(k), want = part_budget(x) / (rb ? rb : 1);
    want = want < 2 ? 2 : want;
    for (size_t a0 = 0, b0 = 0; a0 < a->n || b0 < b->n;) {
        size_t total = (a->n - a0) + (b->n - b0);
        total = total < want ? total : want;
        /* how many of the first `total` merged rows come from a (ties: a first) */
        size_t lo = total > b->n - b0 ? total - (b->n - b0) : 0, hi = total < a->n - a0 ? total : a->n - a0;
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (rfx_tuple_cmp(row(a, a0 + m), row(b, b0 + total - m - 1), k) <= 0)
                lo = m + 1;
            else
                hi = m;
        }
        size_t a1 = a0 + lo, b1 = b0 + total - lo;
        if (a1 > a0 && b1 < b->n && rfx_tuple_cmp(row(a, a1 - 1), row(b, b1), k) == 0)
            b1++;                 /* a tuple in both goes in one part */
        rfx_rows sa = view(a, a0, a1), sb = view(b, b0, b1);
        bool big;
        rfx_status st = run_part(x, c, &sa, &sb, out, total <= 2, &big);
        if (st != RFX_OK)
            return st;
        if (big) {
            if (total <= 2)
                return too_big(x, "UNION", total);
            want = total / 2;
            continue;
        }
        a0 = a1;
        b0 = b1;
    }
    return RFX_OK;
}

/* ---- commands ------------------------------------------------------------------------ */
/* The distinct variables c reads. */
static int inputs_of(const rfx_ra_cmd *c, int *in)
{
    int n = 0;
    for (int k = 0; k < rfx_ra_cmd_ninputs(c); k++) {
        int v = rfx_ra_cmd_input(c, k);
        bool seen = v < 0;
        for (int q = 0; q < n && !seen; q++)
            seen = in[q] == v;
        if (!seen)
            in[n++] = v;
    }
    return n;
}

static size_t bytes_of(ooc_ctx *x, const int *vars, int n, bool only_host)
{
    size_t sum = 0;
    for (int k = 0; k < n; k++)
        if (!only_host || !x->v[vars[k]].dev)
            sum += var_bytes(x, vars[k]);
    return sum;
}

/* Uploads the inputs; when the device is full, everything else leaves it first. false
 * in *fits when they still do not fit. */
static rfx_status upload_inputs(ooc_ctx *x, const int *in, int nin, bool *fits)
{
    *fits = true;
    rfx_status st = keep_budget(x, in, nin, bytes_of(x, in, nin, true));
    for (int k = 0; k < nin && st == RFX_OK; k++) {
        st = upload(x, in[k]);
        if (st == RFX_ERR_NOMEM && (st = spill_others(x, in, nin)) == RFX_OK)
            st = upload(x, in[k]);
    }
    if (st == RFX_ERR_NOMEM) {
        *fits = false;
        return RFX_OK;
    }
    return st;
}

/* Runs on the inner backend, retried once with only the inputs on the device; false in
 * *fits when it does not fit (outputs then released, their bytes in *over when they were made). */
static rfx_status run_whole(ooc_ctx *x, const rfx_ra_cmd *c, const rfx_fgroup *g, const int *in, int nin,
                            const int *outs, int nouts, bool *fits, size_t *over_bytes)
{
    *over_bytes = 0;
    rfx_status st = upload_inputs(x, in, nin, fits);
    if (st != RFX_OK || !*fits)
        return st;
    st = g ? x->in->exec_group(x->in, g) : x->in->exec(x->in, c);
    if (st == RFX_ERR_NOMEM && (st = spill_others(x, in, nin)) == RFX_OK)
        st = g ? x->in->exec_group(x->in, g) : x->in->exec(x->in, c);
    /* an output only a SORT_UNIQUE reads is held once more while it is sorted: where that
     * would not fit, it is made in parts that are sets (run_parts) */
    size_t outb = 0, sorts = 0;
    for (int k = 0; k < nouts && st == RFX_OK; k++) {
        const rfx_pvar *o = &x->P->vars[outs[k]];
        size_t b = o->count_only ? 0 : x->in->count(x->in, outs[k]) * row_bytes(o->arity);
        outb += b;
        sorts += o->set_read ? b : 0;
    }
    size_t inb = bytes_of(x, in, nin, false);
    bool over = st == RFX_ERR_NOMEM ||
                (st == RFX_OK && ((!x->in->enforces_budget && inb + outb > x->cap) || inb + outb + sorts > x->cap));
    if (over) {
        *over_bytes = outb;
        for (int k = 0; k < nouts; k++)
            if (!x->v[outs[k]].dev)   /* an output that is also an input keeps its contents */
                x->in->release(x->in, outs[k]);
        *fits = false;
        return RFX_OK;
    }
    for (int k = 0; k < nouts && st == RFX_OK; k++)
        x->v[outs[k]].dev = true;
    return st;
}

static rfx_status copy_host(const rfx_rows *s, rfx_rows *d, int nthreads)
{
    rfx_rows_init(d, s->arity);
    d->n = 0;
    if (!s->data) {
        d->n = s->n;
        return RFX_OK;
    }
    return rfx_rows_append_parallel(d, s, nthreads);
}

/* The making of the next induced part on a thread of its own, while the device joins the
 * one before. */
typedef struct part_maker {
    rfx_lftj_induced *it;
    rfx_lftj_part *p;
    bool got;
    rfx_status st;
    double t0, t1;
} part_maker;

static void *make_part(void *arg)
{
    part_maker *m = arg;
    m->t0 = rfx_seconds();
    m->got = rfx_lftj_induced_next(m->it, m->p, &m->st);
    m->t1 = rfx_seconds();
    return NULL;
}

/* A triejoin the plan schedules by induced parts (RFX_LFTJ_INDUCED: four or more variables
 * over one relation): by the inner backend's own parts where it has them (a device that
 * makes each part's subgraph itself from the rows in host memory), else each part made
 * here and joined whole by the inner backend while the next part is made: RFX_ERR_LIMIT
 * where it does not apply here (boxes then), RFX_ERR_NOMEM where a part did not fit (out
 * and *n left to the boxes). A triangle's count keeps the boxes or the device's count by
 * parts (RFX_LFTJ_PAIRS): over three variables a box is already bounded by the slices of
 * two. */
static rfx_status lftj_induced(ooc_ctx *x, const rfx_ra_cmd *c, const rfx_lftj_src *srcs, size_t budget, rfx_rows *out,
                               uint64_t *n)
{
    if (c->parts != RFX_LFTJ_INDUCED)
        return RFX_ERR_LIMIT;
    size_t nparts = 0, copied = 0;
    out->n = 0;
    *n = 0;
    rfx_status st = x->in->lftj_host(x->in, srcs, c->nvars, c->nkeys, RFX_LFTJ_INDUCED, budget, x->nthreads,
                                     c->count_only ? NULL : out, c->count_only ? n : NULL, &nparts, &copied);
    if (st != RFX_ERR_LIMIT) {
        x->stats.parts += nparts;
        x->stats.up_bytes += (double)copied;
        return st;
    }
    x->err[0] = 0;
    /* a part's rows are read by several of its sources: a quarter of the budget each; on a
     * device, boxes or the host decide where that makes too many parts */
    const size_t share = budget / 4;
    if (x->in->enforces_budget && rfx_lftj_induced_too_many_parts(srcs, share))
        return RFX_ERR_LIMIT;
    rfx_lftj_induced *it;
    st = rfx_lftj_induced_open(srcs, c->nvars, share, x->nthreads, &it);
    if (st != RFX_OK)
        return st;
    rfx_lftj_part parts[2];
    rfx_lftj_part_init(&parts[0]);
    rfx_lftj_part_init(&parts[1]);
    rfx_rows rows;
    rfx_rows_init(&rows, c->nkeys);
    part_maker m = {it, &parts[0], false, RFX_OK, 0, 0};
    make_part(&m);
    st = m.st;
    for (int cur = 0; st == RFX_OK && m.got; cur ^= 1) {
        const rfx_lftj_part *p = &parts[cur];
        span(x, "induced part: its subgraph", 2, p->number, m.t0);
        m = (part_maker){it, &parts[cur ^ 1], false, RFX_OK, 0, 0};
        pthread_t maker;
        bool ahead = pthread_create(&maker, NULL, make_part, &m) == 0;
        double t0 = rfx_seconds();
        uint64_t k = 0;
        size_t nboxes = 0, copied = 0;
        rows.n = 0;
        st = x->in->lftj_host(x->in, p->srcs, c->nvars, c->nkeys, RFX_LFTJ_BOXES, budget, x->nthreads,
                              c->count_only ? NULL : &rows, c->count_only ? &k : NULL, &nboxes, &copied);
        x->stats.parts += nboxes;
        x->stats.up_bytes += (double)copied;
        *n += k;
        if (st == RFX_OK && !c->count_only)   /* parts come in the first variable's order */
            st = rfx_rows_append_parallel(out, &rows, x->nthreads);
        span(x, "induced part: join", 0, p->number, t0);
        if (ahead)
            pthread_join(maker, NULL);
        else
            make_part(&m);
        st = st != RFX_OK ? st : m.st;
    }
    rfx_rows_free(&rows);
    rfx_lftj_part_free(&parts[0]);
    rfx_lftj_part_free(&parts[1]);
    rfx_lftj_induced_close(it);
    return st;
}

static rfx_status lftj_parts(ooc_ctx *x, const rfx_ra_cmd *c, rfx_rows *out)
{
    rfx_lftj_src srcs[64];
    if (c->nvars > 64)
        return RFX_ERR_LIMIT;
    for (int s = 0, off = 0; s < c->nvars; s++) {
        const ooc_var *o = &x->v[c->vars[s]];
        srcs[s] = (rfx_lftj_src){&o->host, c->colvar + off, o->trie_pinned ? &o->trie : NULL};
        off += x->v[c->vars[s]].host.arity;
    }
    /* a box's slices may take three quarters of the device (the outer variable's half of
     * that, held once; the inner ones double-buffered), the join's frontiers the rest */
    size_t total = 0, budget = x->cap / 4 * 3;
    for (int s = 0; s < c->nvars; s++)
        total += x->v[c->vars[s]].host.n * row_bytes(x->v[c->vars[s]].host.arity);
    uint64_t n = 0;
    size_t nboxes = 0, copied = 0;
    rfx_status st = RFX_ERR_NOMEM;
    /* A device pays ~0.1 ms a box whatever its size, and boxes multiply across leading
     * variables: where they would average under 4 KiB of slices (a budget of kilobytes:
     * as-caida at a 5% cap made 8 million), or where boxes still run out of memory after
     * halving, the CPU joins the host rows at once. (The CPU backend's boxes are views of
     * host rows, so it keeps its boxes: that is the code path its small caps test.) */
    bool on_host = false;
    if (total > budget) {
        st = lftj_induced(x, c, srcs, budget, out, &n);
        if (st == RFX_OK) {
            if (c->count_only)
                out->n = (size_t)n;
            return RFX_OK;
        }
        if (st != RFX_ERR_LIMIT && st != RFX_ERR_NOMEM)
            return st;
        x->err[0] = 0;   /* boxes, then */
        out->n = 0;
        n = 0;
        st = RFX_ERR_NOMEM;
    }
    if (x->in->enforces_budget) {
        rfx_lftj_boxes b;
        if (rfx_lftj_partition(srcs, c->nvars, c->nkeys, budget, x->tune, &b) == RFX_OK)
            on_host = b.nboxes > 1 && b.nboxes > total / 4096;
        rfx_lftj_boxes_free(&b);
    }
    /* a box whose join needs more memory than was left beside its slices: smaller boxes */
    for (int tries = 0; !on_host && st == RFX_ERR_NOMEM && tries < 3; tries++, budget /= 2) {
        out->n = 0;
        st = x->in->lftj_host(x->in, srcs, c->nvars, c->nkeys,
                              c->parts == RFX_LFTJ_INDUCED ? RFX_LFTJ_BOXES : c->parts, budget, x->nthreads,
                              c->count_only ? NULL : out, c->count_only ? &n : NULL, &nboxes, &copied);
        x->stats.parts += nboxes;
        x->stats.up_bytes += (double)copied;
    }
    if (on_host || st == RFX_ERR_NOMEM) {
        x->err[0] = 0;
        out->n = 0;
        n = 0;
        st = rfx_cpu_lftj(srcs, c->nvars, c->nkeys, c->count_only ? NULL : out, c->count_only ? &n : NULL,
                          x->nthreads);
        x->stats.host_commands++;
    }
    if (c->count_only)
        out->n = (size_t)n;
    return st;
}

/* Command c run whole by the CPU (uncapped) over the host copies of its inputs, its
 * result in *out: the way out when even a part of one row does not fit the budget (an
 * operator's fixed scratch can exceed a cap of a few kilobytes). The rows are already on
 * the host (run_parts moved every variable there), so this costs copies, not transfers. */
static rfx_status run_on_host(ooc_ctx *x, const rfx_ra_cmd *c, rfx_rows *out)
{
    if (!x->host) {
        if (!(x->host = rfx_backend_cpu(x->nthreads, 0, x->tune)))
            return RFX_ERR_NOMEM;
        rfx_status st = x->host->open_vars(x->host, &x->inner_plan);
        if (st != RFX_OK) {
            x->host->close(x->host);
            x->host = NULL;
            return st;
        }
    }
    int in[66];
    int nin = inputs_of(c, in);
    rfx_status st = RFX_OK;
    for (int k = 0; k < nin && st == RFX_OK; k++)
        if (in[k] != x->P->unit)   /* the CPU backend made its own */
            st = x->host->load_host(x->host, in[k], &x->v[in[k]].host);
    if (st == RFX_OK)
        st = x->host->exec(x->host, c);
    if (st == RFX_OK) {
        rfx_rows scratch;
        const rfx_rows *res;
        rfx_rows_init(&scratch, x->P->vars[c->dst].arity);
        st = x->host->host_view(x->host, c->dst, &scratch, &res);
        if (st == RFX_OK)
            st = copy_host(res, out, x->nthreads);
        rfx_rows_free(&scratch);
    }
    if (st != RFX_OK && st != RFX_ERR_NOMEM)
        snprintf(x->err, sizeof x->err, "%s on the host: %s", rfx_ra_op_name(c->op), x->host->last_error(x->host));
    for (int k = 0; k < nin; k++)
        if (in[k] != x->P->unit)
            x->host->release(x->host, in[k]);
    x->host->release(x->host, c->dst);
    return st;
}

/* The command in parts over operands on the host; the output stays on the host. over_bytes:
 * its output when a whole run made it and it did not fit (0: not known). */
static rfx_status run_parts(ooc_ctx *x, const rfx_ra_cmd *c, size_t over_bytes)
{
    /* the parts get the whole device: every variable goes to the host */
    rfx_status st0 = spill_others(x, NULL, 0);
    if (st0 != RFX_OK)
        return st0;
    x->stats.commands++;
    x->part_too_big = false;
    rfx_rows out;
    rfx_rows_init(&out, x->P->vars[c->dst].arity);
    const rfx_rows *a = c->src[0] >= 0 ? &x->v[c->src[0]].host : NULL, *b = c->src[1] >= 0 ? &x->v[c->src[1]].host : NULL;
    rfx_rows *runs = NULL;
    size_t nruns = 0;
    keyed K = {x, c, a, b, c->nkeys, false, &out};
    x->part_sets = true;
    rfx_status st;
    switch (c->op) {
    case RFX_RA_SELECT: case RFX_RA_PROJECT: case RFX_RA_MAP: case RFX_RA_MAPFILTER: case RFX_RA_RANGE:
        st = chunked(x, c, a, &out, NULL, NULL);
        break;
    case RFX_RA_UNIQUE:        /* adjacent duplicates: the chunks' seams are mended after */
        st = chunked(x, c, a, &out, NULL, NULL);
        if (st == RFX_OK)
            st = rfx_cpu_unique(&out, x->nthreads);
        break;
    case RFX_RA_SORT: case RFX_RA_SORT_UNIQUE:   /* sorted (and unique) runs merged; then unique */
        st = chunked(x, c, a, &out, &runs, &nruns);
        if (st == RFX_OK)
            st = rfx_cpu_merge_runs(runs, nruns, c->op == RFX_RA_SORT ? c->nkeys : 0, &out);
        if (st == RFX_OK && c->op == RFX_RA_SORT_UNIQUE)
            st = rfx_cpu_unique(&out, x->nthreads);
        for (size_t r = 0; r < nruns; r++)
            rfx_rows_free(&runs[r]);
        free(runs);
        break;
    case RFX_RA_JOIN: case RFX_RA_MAPJOIN: case RFX_RA_PRODUCT: {
        K.split_b = true;
        K.k = c->op == RFX_RA_PRODUCT ? 0 : c->nkeys;
        /* a probe's left rows in any order: sorted here, as the parts cut them by keys */
        rfx_rows sorted;
        rfx_rows_init(&sorted, a->arity);
        st = c->probe ? copy_host(a, &sorted, x->nthreads) : RFX_OK;
        if (st == RFX_OK && c->probe && (st = rfx_cpu_sort(&sorted, x->nthreads)) == RFX_OK)
            K.a = &sorted;
        bool ranges = x->P->vars[c->dst].set_read && c->nout > 0 && c->out[0]->kind == RFX_RX_COL;
        if (st == RFX_OK && ranges) {
            int side = c->out[0]->col >= a->arity;
            st = output_ranges(&K, side, c->out[0]->col - (side ? a->arity : 0), over_bytes);
        } else if (st == RFX_OK)
            st = keyed_parts(&K);
        rfx_rows_free(&sorted);
        break;
    }
    case RFX_RA_INTERSECT: case RFX_RA_DIFFERENCE: case RFX_RA_AGGREGATE:
        if (c->probe)
            K.k = 0;   /* a in any order: each chunk searches all of b (too big: on the host) */
        st = keyed_parts(&K);
        break;
    case RFX_RA_UNION:
        st = union_parts(x, c, a, b, &out);
        break;
    case RFX_RA_COPY:
        rfx_rows_free(&out);
        st = copy_host(a, &out, x->nthreads);
        break;
    case RFX_RA_LFTJ:
        st = lftj_parts(x, c, &out);
        break;
    default:
        snprintf(x->err, sizeof x->err, "%s cannot run in parts", rfx_ra_op_name(c->op));
        st = RFX_ERR_INTERNAL;
    }
    if (st == RFX_ERR_NOMEM && x->part_too_big) {
        x->part_too_big = false;
        x->err[0] = 0;
        rfx_rows_free(&out);
        rfx_rows_init(&out, x->P->vars[c->dst].arity);
        st = run_on_host(x, c, &out);
        x->stats.host_commands++;
    }
    if (st == RFX_OK) {
        drop(x, c->dst);
        host_take(x, c->dst, &out);
    }
    rfx_rows_free(&out);
    return st;
}

/* Set operations, sorts and UNIQUE whose inputs do not fit the device: by the host's
 * cores, over the host rows (the inputs are brought there; the other variables stay on
 * the device). Each reads its rows once or a few times in host memory, where in parts its
 * rows crossed the link both ways, with a part's fixed costs each time (a closure under a
 * small cap spent most of its time in UNION's and SORT_UNIQUE's parts; docs/PERFORMANCE.md).
 * The tuning's ooc_merges_on_device keeps them in parts on the inner backend (the parts'
 * code is tested so, and a host with few cores may prefer it). */
static bool merged_on_host(const ooc_ctx *x, rfx_ra_op op)
{
    if (x->merges_in_parts)
        return false;
    switch (op) {
    case RFX_RA_UNION: case RFX_RA_INTERSECT: case RFX_RA_DIFFERENCE: case RFX_RA_SORT: case RFX_RA_UNIQUE:
    case RFX_RA_SORT_UNIQUE:
        return true;
    default:
        return false;
    }
}

static rfx_status merge_on_host(ooc_ctx *x, const rfx_ra_cmd *c, const int *in, int nin)
{
    x->stats.commands++;
    x->stats.host_merges++;
    rfx_status st = RFX_OK;
    for (int k = 0; k < nin && st == RFX_OK; k++)
        st = spill(x, in[k]);
    if (st != RFX_OK)
        return st;
    rfx_rows out;
    rfx_rows_init(&out, x->P->vars[c->dst].arity);
    st = rfx_cpu_merge_cmd(c, &x->v[c->src[0]].host, c->src[1] >= 0 ? &x->v[c->src[1]].host : NULL, &out, x->nthreads);
    if (st == RFX_OK) {
        drop(x, c->dst);
        host_take(x, c->dst, &out);
    } else if (st == RFX_ERR_NOMEM)
        snprintf(x->err, sizeof x->err, "%s on the host: out of host memory", rfx_ra_op_name(c->op));
    rfx_rows_free(&out);
    return st;
}

/* Whether the device's copy of the symbol table, which a command calling functors reads
 * (the text functors, gpu_symbols.cu), takes at most a quarter of the budget; the host runs
 * the command where it would take more. */
static bool texts_fit(const ooc_ctx *x, const rfx_ra_cmd *c)
{
    if (!c->functors || !x->P->fn_env)
        return true;
    const rfx_symtab *t = rfx_fn_env_symbols(x->P->fn_env);
    return rfx_symtab_text_bytes(t) + 8 * ((size_t)rfx_symtab_size(t) + 1) <= x->cap / 4;
}

/* A command only the host runs (rfx_ra_cmd.host_only: functors that read or make symbols,
 * ranges, expressions past the device interpreter's size): the host's cores run it over
 * host copies of its inputs, and the result stays on the host until a device command wants
 * it. The device keeps every other command; see docs/PERFORMANCE.md for what the copies
 * cost. */
static rfx_status host_only_cmd(ooc_ctx *x, const rfx_ra_cmd *c, const int *in, int nin)
{
    x->stats.commands++;
    x->stats.host_commands++;
    rfx_status st = RFX_OK;
    for (int k = 0; k < nin && st == RFX_OK; k++)
        if (in[k] != x->P->unit)
            st = spill(x, in[k]);
    if (st != RFX_OK)
        return st;
    rfx_rows out;
    rfx_rows_init(&out, x->P->vars[c->dst].arity);
    st = run_on_host(x, c, &out);
    if (st == RFX_OK) {
        drop(x, c->dst);
        host_take(x, c->dst, &out);
    }
    rfx_rows_free(&out);
    return st;
}

/* A command or group starts: a fresh error, the trace hooks passed on, the next tick of
 * the clock that orders uses (for spilling the least recently used). */
static ooc_ctx *ooc_begin(rfx_backend *be)
{
    ooc_ctx *x = be->ctx;
    x->err[0] = 0;
    x->in->span = be->span;
    x->in->span_ctx = be->span_ctx;
    x->clock++;
    return x;
}

static rfx_status ooc_exec(rfx_backend *be, const rfx_ra_cmd *c)
{
    ooc_ctx *x = ooc_begin(be);
    if (c->op == RFX_RA_SWAP) {
        ooc_var t = x->v[c->dst];
        x->v[c->dst] = x->v[c->src[0]];
        x->v[c->src[0]] = t;
        return x->in->exec(x->in, c);
    }
    if (c->op == RFX_RA_CLEAR) {
        drop(x, c->dst);
        return RFX_OK;
    }
    int in[66];
    int nin = inputs_of(c, in);
    for (int k = 0; k < nin; k++)
        x->v[in[k]].last_use = x->clock;
    if (c->dst < 0)
        return x->in->exec(x->in, c);
    if (!reads(c, c->dst))       /* the old contents are overwritten: no need to keep them */
        drop(x, c->dst);
    x->v[c->dst].last_use = x->clock;
    /* what only the host runs, and has no parts (a CHOICE, an EQREL, a LATTICE), runs whole there */
    if ((c->host_only || !texts_fit(x, c)) && (x->in->enforces_budget || rfx_ra_cmd_reads_held(c)))
        return host_only_cmd(x, c, in, nin);
    bool fits = bytes_of(x, in, nin, false) <= x->cap / 2;
    size_t over = 0;
    rfx_status st = fits ? run_whole(x, c, NULL, in, nin, &c->dst, 1, &fits, &over) : RFX_OK;
    if (st == RFX_OK && !fits)
        st = merged_on_host(x, c->op) ? merge_on_host(x, c, in, nin) : run_parts(x, c, over);
    /* the device flags a failed expression without saying which (a division by zero, a
     * decimal past 64 bits): the host runs the command again and names it */
    if (st == RFX_ERR_DIV0 && c->wide && x->in->enforces_budget)
        st = host_only_cmd(x, c, in, nin);
    return st;
}

static bool group_wide(const rfx_plan *P, const rfx_fgroup *g)
{
    for (int m = 0; m < g->nmembers; m++)
        if (rfx_fgroup_member_cmd(P, g, m)->wide)
            return true;
    return false;
}

/* A fused group whole on the inner backend when its inputs fit, else its commands one by
 * one (each in parts as needed), the join chain's temporaries freed after. */
static rfx_status ooc_exec_group(rfx_backend *be, const rfx_fgroup *g)
{
    ooc_ctx *x = ooc_begin(be);
    int in[RFX_FUSED_MAX_SRCS + 1], outs[RFX_FUSED_MAX_OUTS];
    int nin = rfx_fgroup_ninputs(g), nouts = rfx_fgroup_noutputs(g);
    for (int k = 0; k < nin; k++)
        x->v[in[k] = rfx_fgroup_input(g, k)].last_use = x->clock;
    for (int k = 0; k < nouts; k++) {
        outs[k] = rfx_fgroup_output(g, k);
        bool read = false;
        for (int q = 0; q < nin; q++)
            read |= in[q] == outs[k];
        if (!read)
            drop(x, outs[k]);
    }
    bool fits = bytes_of(x, in, nin, false) <= x->cap / 2;
    size_t over;
    rfx_status st = fits ? run_whole(x, NULL, g, in, nin, outs, nouts, &fits, &over) : RFX_OK;
    /* the device flags a failed expression without saying which (a division by zero, a
     * decimal past 64 bits): a group with 64-bit expressions runs again command by command,
     * so that the failing one runs again on the host (ooc_exec), which names it */
    if (st == RFX_ERR_DIV0 && fits && x->in->enforces_budget && group_wide(x->P, g)) {
        st = RFX_OK;
        fits = false;
    }
    if (st != RFX_OK || fits)
        return st;
    return rfx_backend_run_members(be, x->P, g, ooc_exec);
}

/* ---- the rest of the backend interface --------------------------------------------- */
static rfx_status ooc_open(rfx_backend *be, const rfx_plan *P)
{
    ooc_ctx *x = be->ctx;
    x->P = P;
    x->v = rfx_calloc((size_t)P->nvars, sizeof(ooc_var));
    x->inner_vars = rfx_calloc((size_t)P->nvars + 4, sizeof(rfx_pvar));
    if (!x->v || !x->inner_vars)
        return RFX_ERR_NOMEM;
    memcpy(x->inner_vars, P->vars, sizeof(rfx_pvar) * (size_t)P->nvars);
    static const char *const names[4] = {"part.left", "part.right", "part.out", "part.set"};
    for (int k = 0; k < 4; k++)
        x->inner_vars[P->nvars + k] = (rfx_pvar){.name = names[k], .kind = P->vars[P->unit].kind, .rel = -1};
    x->sa = P->nvars;
    x->sb = P->nvars + 1;
    x->sd = P->nvars + 2;
    x->su = P->nvars + 3;
    x->inner_plan = *P;
    x->inner_plan.vars = x->inner_vars;
    x->inner_plan.nvars = P->nvars + 4;
    if (!(x->streamed = rfx_calloc((size_t)P->nvars, sizeof(bool))) ||
        !(x->tried = rfx_calloc((size_t)P->nvars, sizeof(bool))))
        return RFX_ERR_NOMEM;
    for (int v = 0; v < P->nvars; v++)
        rfx_rows_init(&x->v[v].host, P->vars[v].arity);
    for (int b = 0; b < P->nblocks; b++)
        for (int k = 0; k < P->blocks[b].ncmds; k++) {
            const rfx_ra_cmd *c = &P->blocks[b].cmds[k];
            if (c->op != RFX_RA_LFTJ || c->nvars > 64)
                continue;
            rfx_lftj_src srcs[64];
            for (int s = 0, off = 0; s < c->nvars; s++) {
                x->streamed[c->vars[s]] = true;
                srcs[s] = (rfx_lftj_src){&x->v[c->vars[s]].host, c->colvar + off, NULL};
                off += P->vars[c->vars[s]].arity;
            }
            const bool tries = x->in->reads_tries && x->in->reads_tries(x->in, srcs, c->nvars, c->parts);
            for (int s = 0; tries && s < c->nvars; s++)
                x->tried[c->vars[s]] |= P->vars[c->vars[s]].arity == 2;
        }
    x->v[P->unit].dev = true;     /* the inner backend makes it */
    return x->in->open_vars(x->in, &x->inner_plan);
}

static void ooc_close(rfx_backend *be)
{
    ooc_ctx *x = be->ctx;
    if (x->v)   /* unregistered while the inner backend is open */
        for (int v = 0; v < x->P->nvars; v++)
            host_clear(x, v);
    x->in->close(x->in);
    if (x->host)
        x->host->close(x->host);
    free(x->v);
    free(x->streamed);
    free(x->tried);
    free(x->inner_vars);
    free(x);
    free(be);
}

static size_t ooc_count(rfx_backend *be, int var)
{
    ooc_ctx *x = be->ctx;
    return x->v[var].dev ? x->in->count(x->in, var) : x->v[var].host.n;
}

static void ooc_release(rfx_backend *be, int var)
{
    drop(be->ctx, var);
}

/* Whether var, merged with n more rows of its arity, stays on the device (it is there, or
 * empty, and the whole fits a part); it is then marked as the device's. */
static bool merges_on_device(ooc_ctx *x, int var, size_t n, int arity)
{
    ooc_var *v = &x->v[var];
    if (!(v->dev || v->host.n == 0) || var_bytes(x, var) + n * row_bytes(arity) > part_budget(x))
        return false;
    v->dev = true;
    return true;
}

/* As ooc_merge_host: rows the device's to upload where they fit, else a copy to spill. */
static rfx_status ooc_merge_host_kept(rfx_backend *be, int var, const rfx_rows *rows)
{
    ooc_ctx *x = be->ctx;
    if (merges_on_device(x, var, rows->n, rows->arity))
        return rfx_backend_merge_kept(x->in, var, rows, x->nthreads);
    return rfx_backend_merge_copy(be, var, rows, x->nthreads);
}

static rfx_status ooc_merge_host(rfx_backend *be, int var, rfx_rows *rows)
{
    ooc_ctx *x = be->ctx;
    ooc_var *v = &x->v[var];
    if (merges_on_device(x, var, rows->n, rows->arity))
        return x->in->merge_host(x->in, var, rows);
    rfx_status st = spill(x, var);
    if (st == RFX_OK && v->host.n == 0) {   /* nothing to merge with: the rows become the variable's */
        host_take(x, var, rows);
        return RFX_OK;
    }
    rfx_rows u;
    rfx_rows_init(&u, v->host.arity);
    if (st == RFX_OK)
        st = rfx_cpu_union(&v->host, rows, &u, x->nthreads);
    if (st == RFX_OK)
        host_take(x, var, &u);
    rfx_rows_free(&u);
    rfx_rows_free(rows);
    return st;
}

static rfx_status ooc_host_view(rfx_backend *be, int var, rfx_rows *scratch, const rfx_rows **view)
{
    ooc_ctx *x = be->ctx;
    if (x->v[var].dev)
        return x->in->host_view(x->in, var, scratch, view);
    *view = &x->v[var].host;
    return RFX_OK;
}

static rfx_status ooc_take_host(rfx_backend *be, int var, rfx_rows *out)
{
    ooc_ctx *x = be->ctx;
    ooc_var *v = &x->v[var];
    rfx_status st = RFX_OK;
    if (v->dev && x->in->take_host)
        st = x->in->take_host(x->in, var, out);
    else if (v->dev) {   /* a download into scratch moves; a view of the inner's rows is copied */
        rfx_rows scratch;
        rfx_rows_init(&scratch, out->arity);
        const rfx_rows *view;
        st = x->in->host_view(x->in, var, &scratch, &view);
        if (st == RFX_OK)
            st = view == &scratch ? rfx_rows_move_append(out, &scratch, x->nthreads)
                                  : rfx_rows_append_parallel(out, view, x->nthreads);
        rfx_rows_free(&scratch);
    } else {
        host_unpin(x, var);   /* the rows leave the layer */
        st = rfx_rows_move_append(out, &v->host, x->nthreads);
    }
    drop(x, var);
    return st;
}

static rfx_status ooc_load_host(rfx_backend *be, int var, const rfx_rows *rows)
{
    ooc_ctx *x = be->ctx;
    drop(x, var);
    rfx_rows copy;
    rfx_status st = copy_host(rows, &copy, x->nthreads);
    if (st == RFX_OK)
        host_take(x, var, &copy);
    rfx_rows_free(&copy);
    return st;
}

static const char *ooc_last_error(rfx_backend *be)
{
    ooc_ctx *x = be->ctx;
    return x->err[0] ? x->err : x->in->last_error(x->in);
}

static rfx_status ooc_sync(rfx_backend *be)
{
    ooc_ctx *x = be->ctx;
    return x->in->sync(x->in);
}

static double ooc_copy_bandwidth(rfx_backend *be)
{
    ooc_ctx *x = be->ctx;
    return x->in->copy_bandwidth(x->in);
}

static const char *ooc_device(rfx_backend *be)
{
    ooc_ctx *x = be->ctx;
    return x->in->device(x->in);
}

static void ooc_jit_stats(rfx_backend *be, int *compiled, int *cached, double *compile_ms, double *cache_ms)
{
    ooc_ctx *x = be->ctx;
    *compiled = *cached = 0;
    *compile_ms = *cache_ms = 0;
    if (x->in->jit_stats)
        x->in->jit_stats(x->in, compiled, cached, compile_ms, cache_ms);
}

static size_t ooc_budget(rfx_backend *be)
{
    return ((ooc_ctx *)be->ctx)->cap;
}

static rfx_status ooc_lftj_host(rfx_backend *be, const rfx_lftj_src *srcs, int nsrc, int nvars, rfx_lftj_parts parts,
                                size_t budget, int nthreads, rfx_rows *dst, uint64_t *count, size_t *boxes,
                                size_t *copied)
{
    ooc_ctx *x = be->ctx;
    return x->in->lftj_host(x->in, srcs, nsrc, nvars, parts, budget, nthreads, dst, count, boxes, copied);
}

bool rfx_ooc_stats_of(rfx_backend *be, rfx_ooc_stats *st)
{
    memset(st, 0, sizeof *st);
    if (be->exec != ooc_exec)
        return false;
    *st = ((ooc_ctx *)be->ctx)->stats;
    return true;
}

rfx_backend *rfx_backend_ooc(rfx_backend *inner, int nthreads, const rfx_tuning *tune)
{
    size_t cap = inner->budget ? inner->budget(inner) : 0;
    if (!cap)
        return inner;
    rfx_backend *be = rfx_calloc(1, sizeof *be);
    ooc_ctx *x = rfx_calloc(1, sizeof *x);
    if (!be || !x) {
        free(be);
        free(x);
        inner->close(inner);
        return NULL;
    }
    x->in = inner;
    x->cap = cap;
    x->nthreads = nthreads > 0 ? nthreads : 1;
    x->tune = tune ? tune : &rfx_tuning_defaults;
    x->merges_in_parts = x->tune->ooc_merges_on_device;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    x->pin_limit = !x->tune->pin_host ? 0 : pages > 0 && page > 0 ? (size_t)pages / 2 * (size_t)page : 0;
    x->pin_from = x->tune->pin_from;
    *be = (rfx_backend){.name = inner->name, .ctx = x, .open_vars = ooc_open, .close = ooc_close,
                        .count = ooc_count, .release = ooc_release, .merge_host = ooc_merge_host, .merge_host_kept = ooc_merge_host_kept,
                        .host_view = ooc_host_view, .exec = ooc_exec, .exec_group = ooc_exec_group,
                        .last_error = ooc_last_error, .sync = ooc_sync, .copy_bandwidth = ooc_copy_bandwidth,
                        .device = ooc_device, .jit_stats = ooc_jit_stats, .load_host = ooc_load_host,
                        .budget = ooc_budget, .enforces_budget = inner->enforces_budget,
                        .lftj_host = ooc_lftj_host, .take_host = ooc_take_host};
    return be;
}
