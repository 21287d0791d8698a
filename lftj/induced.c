/* induced.c: a triejoin over one two-column relation R whose first variable leads an atom
 * with every other variable (a clique over an oriented relation: e(a, b), e(a, c), e(a, d),
 * e(b, c), ...) by parts of that variable's values. Every binding with a in a part P has
 * its other variables in N(P), the second column of P's rows; so the atoms a leads need
 * P's rows alone, and every other atom the rows of R with both ends in V_P = P u N(P): the
 * subgraph V_P induces. A part's sources are that and P's rows, sized to a budget; the
 * caller joins them as one whole join. Each binding falls in exactly one part (its first
 * variable's), so counts add up and the parts' rows, in order, are the join's rows.
 *
 * What a part copies is bounded by its vertices' own rows, whatever the whole relation
 * weighs: where boxes cut every variable's values (boxing.c) a clique's levels multiply the
 * boxes and each box copies slices of every source again. */
#include "lftj.h"
#include "base.h"

#include <stdlib.h>
#include <string.h>

struct rfx_lftj_induced {
    const rfx_rows *r;         /* R, sorted */
    const rfx_lftj_src *srcs;
    int nsrc, nthreads;
    size_t budget;             /* bytes of a part's rows: P's and its induced subgraph's */
    size_t *off;               /* off[v]: R's first row with first column >= v (ids <= maxid) */
    uint32_t maxid;
    uint32_t *mark;            /* per vertex: the part whose V_P holds it (0: none yet) */
    uint32_t part;             /* the current part's number (from 1) */
    size_t at;                 /* R's first row not yet in a part */
    size_t first;              /* the current part's first row */
    uint32_t *members;         /* the current V_P */
    size_t nmembers, capmembers;
    uint64_t *start, *before;  /* per member: where its rows start in R; the rows before its */
    size_t capvert;
    rfx_rows *out;             /* the part being made: its induced subgraph's rows */
};

bool rfx_lftj_induced_applies(const rfx_lftj_src *srcs, int nsrc, int nvars)
{
    if (nsrc < 2 || nsrc > 64 || nvars < 2 || nvars > 64 || srcs[0].rows->arity != 2)
        return false;
    bool met[64] = {false};
    for (int s = 0; s < nsrc; s++) {
        if (srcs[s].rows != srcs[0].rows)
            return false;
        if (srcs[s].colvar[0] == 0)
            met[srcs[s].colvar[1]] = true;
    }
    for (int v = 1; v < nvars; v++)
        if (!met[v])
            return false;
    return true;
}

bool rfx_lftj_induced_too_many_parts(const rfx_lftj_src *srcs, size_t share)
{
    return srcs[0].rows->n * 8 / (share + 1) > 4096;
}

typedef struct max_job {
    const uint32_t *d;
    size_t n;
    int parts;
    uint32_t most[64];
} max_job;

static void max_second(int i, void *ctx)
{
    max_job *j = ctx;
    size_t lo = j->n * (size_t)i / (size_t)j->parts, hi = j->n * (size_t)(i + 1) / (size_t)j->parts;
    uint32_t m = 0;
    for (size_t k = lo; k < hi; k++)
        m = j->d[2 * k + 1] > m ? j->d[2 * k + 1] : m;
    j->most[i] = m;
}

rfx_status rfx_lftj_induced_open(const rfx_lftj_src *srcs, int nsrc, size_t budget, int nthreads,
                                 rfx_lftj_induced **out)
{
    *out = NULL;
    const rfx_rows *r = srcs[0].rows;
    if (r->n == 0)
        return RFX_ERR_LIMIT;   /* nothing to cut: the whole join is empty */
    max_job mj = {r->data, r->n, nthreads < 1 ? 1 : nthreads > 64 ? 64 : nthreads, {0}};
    rfx_parallel_for(mj.parts, mj.parts, max_second, &mj);
    uint32_t maxid = r->data[2 * (r->n - 1)];
    for (int i = 0; i < mj.parts; i++)
        maxid = mj.most[i] > maxid ? mj.most[i] : maxid;
    /* per-vertex arrays (12 bytes an id): only where ids are about as dense as rows */
    if ((uint64_t)maxid > 2 * (uint64_t)r->n + (1u << 20))
        return RFX_ERR_LIMIT;
    rfx_lftj_induced *it = rfx_calloc(1, sizeof *it);
    if (!it)
        return RFX_ERR_NOMEM;
    *it = (rfx_lftj_induced){.r = r, .srcs = srcs, .nsrc = nsrc, .nthreads = nthreads, .budget = budget};
    it->maxid = maxid;
    it->off = rfx_malloc(sizeof(size_t) * ((size_t)maxid + 2));
    it->mark = rfx_calloc((size_t)maxid + 1, sizeof(uint32_t));
    if (!it->off || !it->mark) {
        rfx_lftj_induced_close(it);
        return RFX_ERR_NOMEM;
    }
    size_t row = 0;
    for (uint64_t v = 0; v <= (uint64_t)maxid + 1; v++) {
        while (row < r->n && r->data[2 * row] < v)
            row++;
        it->off[v] = row;
    }
    *out = it;
    return RFX_OK;
}

static size_t outdeg(const rfx_lftj_induced *it, uint32_t v)
{
    return it->off[(size_t)v + 1] - it->off[v];
}

/* Marks v as in the current V_P; its rows (an upper bound of what it adds to the induced
 * subgraph), or 0 where it was in already. false: no memory. */
static bool mark(rfx_lftj_induced *it, uint32_t v, size_t *added)
{
    *added = 0;
    if (it->mark[v] == it->part)
        return true;
    if (it->nmembers == it->capmembers) {
        size_t cap = it->capmembers ? it->capmembers * 2 : 1024;
        uint32_t *m = rfx_realloc(it->members, cap * sizeof(uint32_t));
        if (!m)
            return false;
        it->members = m;
        it->capmembers = cap;
    }
    it->mark[v] = it->part;
    it->members[it->nmembers++] = v;
    *added = outdeg(it, v);
    return true;
}

typedef struct fill_job {
    rfx_lftj_induced *it;
    int parts;
    size_t *counts;            /* per task: rows kept (pass 1), then where its rows start (pass 2) */
    bool write;
} fill_job;

/* Rows [lo, hi) of R (one vertex's, sorted by second column) whose second column is v or
 * above: the first such row, galloping from lo. */
static size_t first_at_least(const uint32_t *d, size_t lo, size_t hi, uint32_t v)
{
    size_t step = 1, prev = lo;
    while (lo < hi && d[2 * lo + 1] < v) {
        prev = lo;
        lo = hi - lo > step ? lo + step : hi;
        step *= 2;
    }
    while (prev < lo) {   /* d[2 * prev + 1] < v, and d[2 * lo + 1] >= v or lo == hi */
        size_t mid = prev + (lo - prev) / 2;
        if (d[2 * mid + 1] < v)
            prev = mid + 1;
        else
            lo = mid;
    }
    return lo;
}

/* The rows of task i's members with both ends in V_P: counted, or written in order. A
 * vertex with far more rows than V_P has members (a hub) has the members looked up among
 * its rows instead of its rows tested one by one. */
static void fill_task(int i, void *ctx)
{
    fill_job *j = ctx;
    rfx_lftj_induced *it = j->it;
    size_t lo = it->nmembers * (size_t)i / (size_t)j->parts, hi = it->nmembers * (size_t)(i + 1) / (size_t)j->parts;
    size_t n = 0, w = j->write ? j->counts[i] : 0;
    const uint32_t *d = it->r->data;
    for (size_t k = lo; k < hi; k++) {
        uint32_t u = it->members[k];
        size_t a = it->off[u], b = it->off[(size_t)u + 1];
        if (b - a <= 8 * it->nmembers) {
            for (size_t row = a; row < b; row++)
                if (it->mark[d[2 * row + 1]] == it->part) {
                    if (j->write) {
                        it->out->data[2 * w] = u;
                        it->out->data[2 * w + 1] = d[2 * row + 1];
                        w++;
                    }
                    n++;
                }
            continue;
        }
        for (size_t m = 0, row = a; m < it->nmembers && row < b; m++) {
            uint32_t v = it->members[m];
            for (row = first_at_least(d, row, b, v); row < b && d[2 * row + 1] == v; row++) {
                if (j->write) {
                    it->out->data[2 * w] = u;
                    it->out->data[2 * w + 1] = v;
                    w++;
                }
                n++;
            }
        }
    }
    if (!j->write)
        j->counts[i] = n;
}

void rfx_lftj_part_init(rfx_lftj_part *p)
{
    rfx_rows_init(&p->rows, 2);
    rfx_rows_init(&p->induced, 2);
}

void rfx_lftj_part_free(rfx_lftj_part *p)
{
    rfx_rows_free(&p->induced);
}

/* Chooses the next part: P (R's rows [it->first, it->at)) and V_P, sorted, in it->members;
 * false when every part was chosen, or on an error (*st). */
static bool choose_part(rfx_lftj_induced *it, rfx_status *st)
{
    *st = RFX_OK;
    const rfx_rows *r = it->r;
    if (it->at >= r->n)
        return false;
    it->part++;
    it->nmembers = 0;
    /* vertices in first-column order while P's rows and an upper bound of its subgraph's
     * stay within the budget (at least one vertex a part) */
    size_t first = it->at, weight = 0;
    while (it->at < r->n) {
        uint32_t a = r->data[2 * it->at];
        size_t end = it->off[(size_t)a + 1], before = it->nmembers, add = 0, w = (end - it->at) * 8;
        bool ok = mark(it, a, &add);
        w += add * 8;
        for (size_t row = it->at; ok && row < end; row++) {
            ok = mark(it, r->data[2 * row + 1], &add);
            w += add * 8;
        }
        if (!ok) {
            *st = RFX_ERR_NOMEM;
            return false;
        }
        if (it->at > first && weight + w > it->budget) {   /* a takes the next part */
            for (size_t k = before; k < it->nmembers; k++)
                it->mark[it->members[k]] = 0;
            it->nmembers = before;
            break;
        }
        weight += w;
        it->at = end;
    }
    it->first = first;
    rfx_rows sorted = {it->members, it->nmembers, it->capmembers, 1};   /* a radix sort */
    if ((*st = rfx_cpu_sort(&sorted, it->nthreads)) != RFX_OK)
        return false;
    it->members = sorted.data;
    it->capmembers = sorted.cap;
    return true;
}

bool rfx_lftj_induced_next(rfx_lftj_induced *it, rfx_lftj_part *p, rfx_status *st)
{
    if (!choose_part(it, st))
        return false;
    int parts = it->nthreads < 1 ? 1 : it->nthreads > 64 ? 64 : it->nthreads;
    if ((size_t)parts > it->nmembers)
        parts = it->nmembers ? (int)it->nmembers : 1;
    size_t counts[64];
    fill_job j = {it, parts, counts, false};
    rfx_parallel_for(parts, parts, fill_task, &j);
    size_t total = 0;
    for (int i = 0; i < parts; i++) {
        size_t c = counts[i];
        counts[i] = total;
        total += c;
    }
    p->induced.n = 0;
    if ((*st = rfx_rows_reserve(&p->induced, total)) != RFX_OK)
        return false;
    it->out = &p->induced;
    j.write = true;
    rfx_parallel_for(parts, parts, fill_task, &j);
    p->induced.n = total;
    p->rows = (rfx_rows){it->r->data + 2 * it->first, it->at - it->first, 0, 2};
    p->number = it->part;
    for (int s = 0; s < it->nsrc && s < 64; s++)
        p->srcs[s] = (rfx_lftj_src){it->srcs[s].colvar[0] == 0 ? &p->rows : &p->induced, it->srcs[s].colvar, NULL};
    return true;
}

bool rfx_lftj_induced_next_vertices(rfx_lftj_induced *it, rfx_lftj_part_vertices *p, rfx_status *st)
{
    if (!choose_part(it, st))
        return false;
    if (it->nmembers + 1 > it->capvert) {
        size_t cap = (it->nmembers + 1) * 2;
        uint64_t *a = rfx_realloc(it->start, cap * sizeof(uint64_t)), *b = a ? rfx_realloc(it->before, cap * sizeof(uint64_t)) : NULL;
        it->start = a ? a : it->start;
        it->before = b ? b : it->before;
        if (!a || !b) {
            *st = RFX_ERR_NOMEM;
            return false;
        }
        it->capvert = cap;
    }
    uint64_t total = 0;
    for (size_t k = 0; k < it->nmembers; k++) {
        uint32_t v = it->members[k];
        it->start[k] = it->off[v];
        it->before[k] = total;
        total += outdeg(it, v);
    }
    it->before[it->nmembers] = total;
    *p = (rfx_lftj_part_vertices){.rows = {it->r->data + 2 * it->first, it->at - it->first, 0, 2},
                                  .first = it->first, .members = it->members, .start = it->start,
                                  .before = it->before, .nmembers = it->nmembers,
                                  .number = it->part};
    return true;
}

void rfx_lftj_induced_restart(rfx_lftj_induced *it, size_t row)
{
    it->nmembers = 0;   /* marks of the parts given are their numbers': the next has another */
    it->at = row < it->r->n ? row : it->r->n;
}

void rfx_lftj_induced_set_budget(rfx_lftj_induced *it, size_t budget)
{
    it->budget = budget;
}

uint32_t rfx_lftj_induced_maxid(const rfx_lftj_induced *it)
{
    return it->maxid;
}

void rfx_lftj_induced_close(rfx_lftj_induced *it)
{
    if (!it)
        return;
    free(it->off);
    free(it->mark);
    free(it->members);
    free(it->start);
    free(it->before);
    free(it);
}
