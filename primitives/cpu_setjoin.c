/* cpu_setjoin.c: a join read as a set whose output keeps no key column, as in
 * `pointsTo(y, w) :- load(y, x), pointsTo(x, z), pointsTo(z, w)`'s second join or TC's
 * `path(x, z) :- path(x, y), edge(y, z)`. Such a join's rows are mostly repeats where many
 * keys lead from one value of a's columns to the same values of b's (hundreds of paths to
 * one pair), and making them first and a set after holds and sorts every repeat. Here a's
 * rows are grouped by the columns the output takes from them, and each group's output is
 * the union of b's matches of its rows' keys, gathered in a small hash set: the work
 * follows the matches, and only distinct rows are ever held or sorted. */
#include "cpu_sets.h"
#include "cpu_rows.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { SETJOIN_MAX = 8 };      /* columns taken from each side */

typedef struct setjoin {
    const rfx_rows *b;
    int na, nb;                /* output columns from a (its grouped rows' first na) and from b,
                                * each side's in the output's order */
    int bcol[SETJOIN_MAX];     /* b's columns the output takes */
    const int *cols;           /* the output's columns, in the join's numbering (a's, then b's) */
    int nout, aa;
    const rfx_rows *g;         /* a's rows with matches as (its output columns, the first and last
                                * + 1 of b's rows they match), sorted, no repeats */
    size_t *bounds;            /* chunks of g, at group boundaries */
    rfx_rows *parts;
    atomic_int err;
} setjoin;

/* One group's distinct b-tuples: open addressing over tuples of nb words, a slot in use where
 * its mark is the group's (so no clearing between groups). */
typedef struct tuple_set {
    uint32_t *slots;           /* cap tuples of nb words */
    uint32_t *mark;
    size_t cap, n;
    uint32_t group;
    int nb;
} tuple_set;

static bool set_grow(tuple_set *s)
{
    size_t cap = s->cap ? 2 * s->cap : 64;
    uint32_t *slots = rfx_malloc(sizeof(uint32_t) * cap * (size_t)s->nb), *mark = rfx_calloc(cap, sizeof(uint32_t));
    if (!slots || !mark) {
        free(slots);
        free(mark);
        return false;
    }
    for (size_t i = 0; i < s->cap; i++) {   /* the group's tuples into the new table */
        if (s->mark[i] != s->group)
            continue;
        const uint32_t *t = s->slots + i * (size_t)s->nb;
        size_t h = (size_t)rfx_row_hash(t, s->nb) & (cap - 1);
        while (mark[h] == s->group)
            h = (h + 1) & (cap - 1);
        mark[h] = s->group;
        memcpy(slots + h * (size_t)s->nb, t, sizeof(uint32_t) * (size_t)s->nb);
    }
    free(s->slots);
    free(s->mark);
    s->slots = slots;
    s->mark = mark;
    s->cap = cap;
    return true;
}

/* Adds t (its nb words); false where memory ran out. */
static bool set_add(tuple_set *s, const uint32_t *t)
{
    if (2 * (s->n + 1) > s->cap && !set_grow(s))
        return false;
    size_t h = (size_t)rfx_row_hash(t, s->nb) & (s->cap - 1);
    for (; s->mark[h] == s->group; h = (h + 1) & (s->cap - 1))
        if (cmp_prefix(s->slots + h * (size_t)s->nb, t, s->nb) == 0)
            return true;
    s->mark[h] = s->group;
    memcpy(s->slots + h * (size_t)s->nb, t, sizeof(uint32_t) * (size_t)s->nb);
    s->n++;
    return true;
}

/* The group's tuples, sorted, appended as output rows with the group's a-values av (each
 * column where the output puts it: rows sorted and unique where a's columns come first). */
static rfx_status emit_group(const setjoin *j, tuple_set *s, const uint32_t *av, rfx_rows *tmp, rfx_rows *o)
{
    tmp->n = 0;
    rfx_status st = rfx_rows_reserve(tmp, s->n);
    for (size_t i = 0; st == RFX_OK && i < s->cap; i++)
        if (s->mark[i] == s->group)
            memcpy(tmp->data + tmp->n++ * (size_t)s->nb, s->slots + i * (size_t)s->nb, sizeof(uint32_t) * (size_t)s->nb);
    if (st == RFX_OK)
        st = rfx_cpu_sort(tmp, 1);
    if (st == RFX_OK)
        st = rfx_rows_reserve(o, o->n + tmp->n);
    for (size_t i = 0; st == RFX_OK && i < tmp->n; i++) {
        uint32_t *w = o->data + o->n++ * (size_t)j->nout;
        const uint32_t *t = tmp->data + i * (size_t)s->nb;
        for (int x = 0, fa = 0, fb = 0; x < j->nout; x++)
            w[x] = j->cols[x] < j->aa ? av[fa++] : t[fb++];
    }
    return st;
}

static void setjoin_chunk(int c, void *arg)
{
    setjoin *j = arg;
    const rfx_rows *g = j->g, *b = j->b;
    const int ga = g->arity, ba = b->arity;
    tuple_set s = {NULL, NULL, 0, 0, 0, j->nb};
    rfx_rows tmp;
    rfx_rows_init(&tmp, j->nb);
    rfx_status st = RFX_OK;
    for (size_t i = j->bounds[c], ie = j->bounds[c + 1]; st == RFX_OK && i < ie;) {
        const uint32_t *av = g->data + i * (size_t)ga;
        s.group++;
        s.n = 0;
        for (; i < ie && cmp_prefix(g->data + i * (size_t)ga, av, j->na) == 0; i++) {
            size_t lo = g->data[i * (size_t)ga + (size_t)j->na], hi = g->data[i * (size_t)ga + (size_t)j->na + 1];
            uint32_t t[SETJOIN_MAX];
            for (size_t y = lo; y < hi && st == RFX_OK; y++) {
                for (int x = 0; x < j->nb; x++)
                    t[x] = b->data[y * (size_t)ba + (size_t)j->bcol[x]];
                if (!set_add(&s, t))
                    st = RFX_ERR_NOMEM;
            }
        }
        if (st == RFX_OK && s.n)
            st = emit_group(j, &s, av, &tmp, &j->parts[c]);
    }
    free(s.slots);
    free(s.mark);
    rfx_rows_free(&tmp);
    if (st != RFX_OK)
        atomic_store(&j->err, st);
}

/* Distinct tuples of r's columns cols[0..n), from at most 2^16 rows spread over them: where
 * the rows seen repeat (under half distinct) the rest likely add few, else as many more as
 * the rows not seen (an upper bound, which keeps the join below from taking groups where it
 * is unsure); SIZE_MAX where too many to tell. */
static size_t distinct_estimate(const rfx_rows *r, const int *cols, int n)
{
    enum { MAX_ROWS = 1 << 16 };
    size_t seen;
    double d = rfx_linear_count(r, 0, r->n > MAX_ROWS ? r->n / MAX_ROWS : 1, cols, n, 18, &seen);
    if (d < 0)
        return SIZE_MAX;
    return (size_t)(2 * d < (double)seen ? d : d * (double)r->n / (double)(seen ? seen : 1)) + 1;
}

bool rfx_cpu_setjoin_pays(const rfx_rows *a, const rfx_rows *b, int k, const int *cols, int nout)
{
    if (a->n == 0 || b->n == 0 || b->n > UINT32_MAX || (double)a->n * (double)b->n < 65536)
        return false;
    int acol[SETJOIN_MAX], bcol[SETJOIN_MAX], na = 0, nb = 0;
    for (int x = 0; x < nout; x++)
        if (cols[x] < a->arity)
            acol[na++] = cols[x];
        else
            bcol[nb++] = cols[x] - a->arity;
    double rows = rfx_join_rows_estimate(a, b, k, 16);
    if (rows < 65536)
        return false;
    size_t da = distinct_estimate(a, acol, na);
    if (da == SIZE_MAX || rows <= 4.0 * (double)da)
        return false;
    size_t db = distinct_estimate(b, bcol, nb);
    return db != SIZE_MAX && rows > 4.0 * (double)da * (double)db;
}

bool rfx_cpu_setjoin_fits(int aa, int ba, int k, const int *cols, int nout)
{
    int na = 0, nb = 0;
    if (!cols || k < 1 || nout < 2)
        return false;
    for (int x = 0; x < nout; x++) {
        int c = cols[x];
        if (c < k || (c >= aa && c < aa + k) || c >= aa + ba)
            return false;   /* a key column: the rows of one key make no repeats across keys */
        if (c < aa)
            na++;
        else
            nb++;
    }
    return na > 0 && nb > 0 && na <= SETJOIN_MAX && nb <= SETJOIN_MAX;
}

rfx_status rfx_cpu_setjoin(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pre, const int *cols, int nout,
                           rfx_rows *dst, int nthreads)
{
    int aa = a->arity, na = 0, nb = 0, acol[SETJOIN_MAX];
    setjoin j = {b, 0, 0, {0}, cols, nout, aa, NULL, NULL, NULL, RFX_OK};
    for (int x = 0; x < nout; x++)   /* each side's columns in the output's order */
        if (cols[x] < aa)
            acol[na++] = cols[x];
        else
            j.bcol[nb++] = cols[x] - aa;
    j.na = na;
    j.nb = nb;
    /* a's rows that match as (output columns, b's range of their key), by one merge of a
     * and b (both in key order), then sorted and without repeats: the groups */
    rfx_rows g;
    rfx_rows_init(&g, na + 2);
    rfx_status st = rfx_rows_reserve(&g, a->n);
    for (size_t i = 0, lo = 0, hi = 0; st == RFX_OK && i < a->n; i++) {
        const uint32_t *r = a->data + i * (size_t)aa;
        if (i == 0 || cmp_prefix(r, r - aa, k) != 0) {   /* a new key: its range begins past the last */
            lo = rfx_rows_bound(b, hi, r, k, false);
            hi = rfx_rows_bound(b, lo, r, k, true);
        }
        bool div0 = false;
        if (hi == lo || (pre && !rfx_rx_eval(pre, r, aa, NULL, &div0)))
            continue;
        if (div0) {
            st = RFX_ERR_DIV0;
            break;
        }
        uint32_t *w = g.data + g.n++ * (size_t)(na + 2);
        for (int x = 0; x < na; x++)
            w[x] = r[acol[x]];
        w[na] = (uint32_t)lo;
        w[na + 1] = (uint32_t)hi;
    }
    if (st == RFX_OK)
        st = rfx_cpu_sort(&g, nthreads);
    if (st == RFX_OK)
        st = rfx_cpu_unique(&g, nthreads);
    int c = chunks_for(g.n + b->n, nthreads);
    if ((size_t)c > g.n)
        c = g.n ? (int)g.n : 1;
    size_t *bounds = st == RFX_OK ? rfx_malloc(sizeof(size_t) * (size_t)(c + 1)) : NULL;
    rfx_rows *parts = st == RFX_OK ? rfx_calloc((size_t)c, sizeof(rfx_rows)) : NULL;
    if (st == RFX_OK && (!bounds || !parts))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        rfx_split_groups(&g, na, c, bounds);   /* chunks cut where a group begins */
        for (int i = 0; i < c; i++)
            rfx_rows_init(&parts[i], nout);
        j.g = &g;
        j.bounds = bounds;
        j.parts = parts;
        rfx_parallel_for(c, nthreads, setjoin_chunk, &j);
        st = (rfx_status)atomic_load(&j.err);
    }
    if (st == RFX_OK && dst->arity != nout) {   /* a and b are read: dst may be either */
        rfx_rows_free(dst);
        dst->arity = nout;
    }
    if (st == RFX_OK)
        st = rfx_rows_concat(parts, (size_t)c, dst, nthreads);
    for (int i = 0; parts && i < c; i++)
        rfx_rows_free(&parts[i]);
    free(parts);
    free(bounds);
    rfx_rows_free(&g);
    return st;
}
