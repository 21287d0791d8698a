/* choice.c: which tuples enter a relation with `choice-domain`s: Soufflé inserts a tuple
 * only where no tuple the relation holds shares its values on any one domain, trying the
 * candidates in order, so that each key's first candidate wins.
 *
 * A domain whose columns are the relation's first ones is looked up in the held sets by
 * binary search (they are sorted sets: the lookup costs the candidates, not the relation,
 * which a recursion adding a few tuples per iteration needs); another domain hashes the
 * held tuples' keys. Keys kept from the candidates are hashed either way. */
#include "base.h"

#include <stdlib.h>

typedef struct key_set {
    const uint32_t **slot;     /* a tuple holding the key, NULL empty */
    size_t mask;
} key_set;

static uint64_t key_hash(const uint32_t *t, const int *cols, int ncols)
{
    uint64_t h = RFX_FNV_INIT;
    for (int k = 0; k < ncols; k++)
        h = rfx_fnv1a(h, &t[cols[k]], sizeof t[cols[k]]);
    return h;
}

static bool same_key(const uint32_t *a, const uint32_t *b, const int *cols, int ncols)
{
    for (int k = 0; k < ncols; k++)
        if (a[cols[k]] != b[cols[k]])
            return false;
    return true;
}

/* The slot of t's key: the tuple holding it, or the empty slot where it would go. */
static const uint32_t **find(key_set *s, const uint32_t *t, const int *cols, int ncols)
{
    size_t i = (size_t)key_hash(t, cols, ncols) & s->mask;
    while (s->slot[i] && !same_key(s->slot[i], t, cols, ncols))
        i = (i + 1) & s->mask;
    return &s->slot[i];
}

/* Whether a domain's columns are exactly the first ncols ones (in any order). */
static bool leading(const int *cols, int ncols)
{
    uint64_t seen = 0;
    for (int k = 0; k < ncols; k++) {
        if (cols[k] >= ncols || cols[k] >= 64)
            return false;
        seen |= 1ull << cols[k];
    }
    return seen == (ncols == 64 ? ~0ull : (1ull << ncols) - 1);
}

/* Whether the sorted set rows (n tuples) has one whose first m values are t's. */
static bool holds_prefix(const uint32_t *rows, size_t n, int arity, const uint32_t *t, int m)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint32_t *r = rows + mid * (size_t)arity;
        int c = 0;
        for (int k = 0; k < m && !c; k++)
            c = r[k] < t[k] ? -1 : r[k] > t[k];
        if (!c)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

rfx_status rfx_choice_select(const rfx_choice_domains *d, int arity, const uint32_t *const *held,
                             const size_t *nheld, int nsets, const uint32_t *rows, size_t n, bool *keep)
{
    key_set *sets = rfx_calloc((size_t)d->ndom + 1, sizeof *sets);
    bool *sorted = rfx_calloc((size_t)d->ndom + 1, sizeof *sorted);
    rfx_status st = sets && sorted ? RFX_OK : RFX_ERR_NOMEM;
    for (int q = 0; st == RFX_OK && q < d->ndom; q++) {
        const int *cols = d->cols + d->first[q];
        sorted[q] = leading(cols, d->ncols[q]);
        size_t total = n;
        for (int k = 0; !sorted[q] && k < nsets; k++)
            total += nheld[k];
        size_t cap = 16;
        while (cap < 2 * total)
            cap *= 2;
        sets[q].mask = cap - 1;
        if (!(sets[q].slot = rfx_calloc(cap, sizeof *sets[q].slot))) {
            st = RFX_ERR_NOMEM;
            break;
        }
        for (int k = 0; !sorted[q] && k < nsets; k++)
            for (size_t i = 0; i < nheld[k]; i++) {
                const uint32_t *t = held[k] + i * (size_t)arity, **at = find(&sets[q], t, cols, d->ncols[q]);
                if (!*at)
                    *at = t;
            }
    }
    for (size_t i = 0; st == RFX_OK && i < n; i++) {
        const uint32_t *t = rows + i * (size_t)arity;
        keep[i] = true;
        for (int q = 0; keep[i] && q < d->ndom; q++) {
            const int *cols = d->cols + d->first[q];
            keep[i] = !*find(&sets[q], t, cols, d->ncols[q]);
            for (int k = 0; keep[i] && sorted[q] && k < nsets; k++)
                keep[i] = !holds_prefix(held[k], nheld[k], arity, t, d->ncols[q]);
        }
        for (int q = 0; keep[i] && q < d->ndom; q++)
            *find(&sets[q], t, d->cols + d->first[q], d->ncols[q]) = t;
    }
    for (int q = 0; sets && q < d->ndom; q++)
        free(sets[q].slot);
    free(sets);
    free(sorted);
    return st;
}
