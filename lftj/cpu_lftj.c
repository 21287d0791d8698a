/* cpu_lftj.c: leapfrog triejoin on the CPU over sorted packed rows (see lftj.h).
 * A source's rows in [lo, hi) share their first `depth` columns; column `depth` is sorted
 * inside the range, so the range is a trie node and its distinct values its children. */
#include "lftj.h"
#include "base.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SRC 32
#define MAX_VARS 64

typedef struct range {
    size_t lo, hi;
} range;

typedef struct job {
    const rfx_lftj_src *srcs;
    int nsrc, nvars;
    bool count_only;
    /* participants of each variable: sources whose column part_col[v][k] holds it */
    int npart[MAX_VARS];
    int part[MAX_VARS][MAX_SRC];
    int part_col[MAX_VARS][MAX_SRC];
    /* level-0 driver and the split of its rows into chunks at value boundaries */
    int driver0;
    size_t *cut;
    int nchunks;
    /* per chunk results */
    rfx_rows *out;
    uint64_t *counts;
    rfx_status *status;
} job;

static inline uint32_t val(const rfx_rows *r, size_t row, int col)
{
    return r->data[row * (size_t)r->arity + (size_t)col];
}

/* First row in [lo, hi) whose column col is >= v (upper: > v), galloping from lo. */
static size_t seek(const rfx_rows *r, int col, size_t lo, size_t hi, uint32_t v, bool upper)
{
    size_t step = 1, prev = lo, cur = lo;
    while (cur < hi && (upper ? val(r, cur, col) <= v : val(r, cur, col) < v)) {
        prev = cur + 1;
        cur += step;
        step *= 2;
    }
    if (cur > hi)
        cur = hi;
    size_t l = prev, h = cur;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (upper ? val(r, m, col) <= v : val(r, m, col) < v)
            l = m + 1;
        else
            h = m;
    }
    return l;
}

typedef struct walker {
    const job *j;
    range cur[MAX_SRC];        /* each source's current trie node */
    uint32_t binding[MAX_VARS];
    rfx_rows *out;
    uint64_t count;
    rfx_status st;
} walker;

/* Binds variable v over the intersection of its participants' nodes; the driver (the
 * smallest node) is restricted to [dlo, dhi) at level 0 for the parallel split. */
static void level(walker *w, int v, size_t dlo, size_t dhi, bool restrict_driver)
{
    const job *j = w->j;
    int np = j->npart[v];
    const int *ps = j->part[v], *pc = j->part_col[v];
    int d = 0;
    for (int k = 1; k < np; k++)
        if (w->cur[ps[k]].hi - w->cur[ps[k]].lo < w->cur[ps[d]].hi - w->cur[ps[d]].lo)
            d = k;
    if (restrict_driver)
        for (int k = 0; k < np; k++)
            if (ps[k] == j->driver0)
                d = k;
    const rfx_rows *dr = j->srcs[ps[d]].rows;
    size_t pos = restrict_driver ? dlo : w->cur[ps[d]].lo, end = restrict_driver ? dhi : w->cur[ps[d]].hi;
    range saved[MAX_SRC], at[MAX_SRC];   /* nodes on entry; where each follower's seek stands */
    for (int k = 0; k < np; k++)
        saved[k] = at[k] = w->cur[ps[k]];
    bool last = v == j->nvars - 1;
    while (pos < end && w->st == RFX_OK) {
        uint32_t x = val(dr, pos, pc[d]);
        /* leapfrog: every follower seeks x; a larger key becomes the next candidate */
        bool match = true;
        uint32_t next = x;
        for (int k = 0; k < np && match; k++) {
            if (k == d)
                continue;
            const rfx_rows *r = j->srcs[ps[k]].rows;
            at[k].lo = seek(r, pc[k], at[k].lo, saved[k].hi, x, false);
            if (at[k].lo == saved[k].hi) {
                pos = end;       /* a follower ran out: no more matches */
                match = false;
            } else if (val(r, at[k].lo, pc[k]) != x) {
                next = val(r, at[k].lo, pc[k]);
                match = false;
            }
        }
        if (!match) {
            if (pos < end)
                pos = seek(dr, pc[d], pos, end, next, false);
            continue;
        }
        size_t run_end = seek(dr, pc[d], pos, end, x, true);
        if (last && j->count_only) {
            w->count++;
        } else {
            for (int k = 0; k < np; k++) {
                const rfx_rows *r = j->srcs[ps[k]].rows;
                size_t lo = k == d ? pos : at[k].lo;
                size_t hi = k == d ? run_end : seek(r, pc[k], lo, saved[k].hi, x, true);
                w->cur[ps[k]] = (range){lo, hi};
            }
            w->binding[v] = x;
            if (last) {
                if (rfx_rows_push(w->out, w->binding) != RFX_OK)
                    w->st = RFX_ERR_NOMEM;
            } else
                level(w, v + 1, 0, 0, false);
            for (int k = 0; k < np; k++)
                w->cur[ps[k]] = saved[k];
        }
        pos = run_end;
    }
}

static void run_chunk(int i, void *arg)
{
    job *j = arg;
    walker *w = rfx_malloc(sizeof *w);
    if (!w) {
        j->status[i] = RFX_ERR_NOMEM;
        return;
    }
    w->j = j;
    w->out = &j->out[i];
    w->count = 0;
    w->st = RFX_OK;
    for (int s = 0; s < j->nsrc; s++)
        w->cur[s] = (range){0, j->srcs[s].rows->n};
    level(w, 0, j->cut[i], j->cut[i + 1], true);
    j->counts[i] = w->count;
    j->status[i] = w->st;
    free(w);
}

bool rfx_lftj_valid(const rfx_lftj_src *srcs, int nsrc, int nvars, char *why, size_t whycap)
{
    if (nsrc < 1 || nsrc > MAX_SRC || nvars < 1 || nvars > MAX_VARS) {
        snprintf(why, whycap, "%d sources over %d variables (at most %d and %d)", nsrc, nvars, MAX_SRC, MAX_VARS);
        return false;
    }
    bool covered[MAX_VARS] = {false};
    for (int s = 0; s < nsrc; s++) {
        const rfx_rows *r = srcs[s].rows;
        if (r->arity < 1) {
            snprintf(why, whycap, "source %d has no columns", s);
            return false;
        }
        for (int c = 0; c < r->arity; c++) {
            int v = srcs[s].colvar[c];
            if (v < 0 || v >= nvars || (c > 0 && v <= srcs[s].colvar[c - 1])) {
                snprintf(why, whycap, "source %d: column %d holds variable %d out of order", s, c, v);
                return false;
            }
            covered[v] = true;
        }
    }
    for (int v = 0; v < nvars; v++)
        if (!covered[v]) {
            snprintf(why, whycap, "variable %d is in no source", v);
            return false;
        }
    return true;
}

rfx_status rfx_cpu_lftj(const rfx_lftj_src *srcs, int nsrc, int nvars, rfx_rows *dst, uint64_t *count,
                        int nthreads)
{
    char why[128];
    if (!rfx_lftj_valid(srcs, nsrc, nvars, why, sizeof why))
        return RFX_ERR_INTERNAL;
    job *j = rfx_calloc(1, sizeof *j);
    if (!j)
        return RFX_ERR_NOMEM;
    j->srcs = srcs;
    j->nsrc = nsrc;
    j->nvars = nvars;
    j->count_only = count != NULL;
    for (int s = 0; s < nsrc; s++)
        for (int c = 0; c < srcs[s].rows->arity; c++) {
            int v = srcs[s].colvar[c];
            j->part[v][j->npart[v]] = s;
            j->part_col[v][j->npart[v]++] = c;
        }
    /* level 0 is driven by its smallest participant, split at value boundaries */
    int d = j->part[0][0];
    for (int k = 1; k < j->npart[0]; k++)
        if (srcs[j->part[0][k]].rows->n < srcs[d].rows->n)
            d = j->part[0][k];
    j->driver0 = d;
    const rfx_rows *dr = srcs[d].rows;
    bool empty = false;
    for (int s = 0; s < nsrc; s++)
        empty |= srcs[s].rows->n == 0;
    int want = empty || dr->n < 4096 || nthreads <= 1 ? 1 : nthreads * 16;
    j->cut = rfx_malloc(sizeof(size_t) * (size_t)(want + 1));
    j->out = rfx_calloc((size_t)want, sizeof(rfx_rows));
    j->counts = rfx_calloc((size_t)want, sizeof(uint64_t));
    j->status = rfx_calloc((size_t)want, sizeof(rfx_status));
    rfx_status st = j->cut && j->out && j->counts && j->status ? RFX_OK : RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        int n = 0;
        j->cut[n++] = 0;
        for (int i = 1; i < want; i++) {
            size_t at = dr->n / (size_t)want * (size_t)i;
            if (at <= j->cut[n - 1])
                continue;
            /* move to the start of the value's run */
            uint32_t x = val(dr, at, 0);
            size_t lo = j->cut[n - 1];
            at = seek(dr, 0, lo, at, x, false);
            if (at > j->cut[n - 1])
                j->cut[n++] = at;
        }
        j->cut[n] = empty ? 0 : dr->n;
        j->nchunks = n;
        for (int i = 0; i < n; i++)
            rfx_rows_init(&j->out[i], nvars);
        rfx_parallel_for(n, nthreads, run_chunk, j);
        uint64_t total = 0;
        for (int i = 0; i < n && st == RFX_OK; i++) {
            st = j->status[i];
            total += j->count_only ? j->counts[i] : j->out[i].n;
        }
        if (st == RFX_OK && count)
            *count = total;
        if (st == RFX_OK && !count) {
            rfx_rows res;
            rfx_rows_init(&res, nvars);
            st = rfx_rows_reserve(&res, (size_t)total);
            for (int i = 0; i < n && st == RFX_OK; i++) {
                rfx_memcpy(res.data + res.n * (size_t)nvars, j->out[i].data,
                           sizeof(uint32_t) * j->out[i].n * (size_t)nvars);
                res.n += j->out[i].n;
            }
            if (st == RFX_OK)
                rfx_rows_swap(dst, &res);
            rfx_rows_free(&res);
        }
        for (int i = 0; i < n; i++)
            rfx_rows_free(&j->out[i]);
    }
    free(j->cut);
    free(j->out);
    free(j->counts);
    free(j->status);
    free(j);
    return st;
}
