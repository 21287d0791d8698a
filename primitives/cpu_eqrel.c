/* cpu_eqrel.c: equivalence relations (Soufflé's `eqrel`) grown by new pairs.
 *
 * An eqrel relation holds every pair of each class of the equivalence its pairs generate
 * (reflexive, symmetric, transitive): its rows, sorted, list each element's whole class
 * under it, so the class of x is the range of rows (x, _) and its least member, the first
 * of them, names it. New pairs join classes: a union-find over the elements they mention
 * (each starting in its held class) finds the merged classes, and only the pairs a merge
 * adds are made, one per pair of members of two different old classes (and an element new
 * to the relation with itself). The work is the new pairs' and the merged classes' sizes,
 * never the relation's: the four closure rules (x ~ y, y ~ z => x ~ z) it replaces joined
 * each class with itself, cubic in the class's size. */
#include "primitives.h"
#include "base.h"

#include <stdlib.h>
#include <string.h>

typedef struct held_sets {
    const rfx_rows *const *s;
    int n;
} held_sets;

/* The class of x in the held sets: its least member (*rep) and whether x is held at all. */
static bool held_class(const held_sets *h, uint32_t x, uint32_t *rep)
{
    bool found = false;
    for (int k = 0; k < h->n; k++) {
        const rfx_rows *r = h->s[k];
        size_t lo = rfx_rows_bound(r, 0, &x, 1, false);
        if (lo < r->n && r->data[lo * 2] == x && (!found || r->data[lo * 2 + 1] < *rep)) {
            *rep = r->data[lo * 2 + 1];
            found = true;
        }
    }
    return found;
}

/* Appends the members of the held class of x (the rows (x, _) of every set) to out. */
static rfx_status class_members(const held_sets *h, uint32_t x, uint32_t **out, size_t *n, size_t *cap)
{
    for (int k = 0; k < h->n; k++) {
        const rfx_rows *r = h->s[k];
        size_t lo = rfx_rows_bound(r, 0, &x, 1, false), hi = rfx_rows_bound(r, lo, &x, 1, true);
        if (!rfx_grow((void **)out, cap, *n + (hi - lo), sizeof(uint32_t)))
            return RFX_ERR_NOMEM;
        for (size_t i = lo; i < hi; i++)
            (*out)[(*n)++] = r->data[i * 2 + 1];
    }
    return RFX_OK;
}

static size_t find(size_t *parent, size_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void unite(size_t *parent, size_t a, size_t b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a != b)
        parent[a > b ? a : b] = a < b ? a : b;
}

static size_t index_of(const rfx_rows *elems, uint32_t x)
{
    return rfx_rows_bound(elems, 0, &x, 1, false);
}

/* One class taking part in a merge: the group (union-find root) it merges into, its least
 * member, and whether the relation lacks it (an element new to the relation, alone). */
typedef struct part {
    size_t root;
    uint32_t rep;
    bool fresh;
    size_t first, n;           /* its members: members[first .. first + n) */
} part;

static int part_cmp(const void *a, const void *b)
{
    const part *x = a, *y = b;
    if (x->root != y->root)
        return x->root < y->root ? -1 : 1;
    return x->rep < y->rep ? -1 : x->rep > y->rep;
}

static int rep_cmp(const void *a, const void *b)
{
    const part *x = a, *y = b;
    return x->rep < y->rep ? -1 : x->rep > y->rep;
}

rfx_status rfx_cpu_eqrel(const rfx_rows *cand, const rfx_rows *const *held, int nheld, rfx_rows *dst, int nthreads)
{
    held_sets h = {held, nheld};
    rfx_rows elems, out;
    rfx_rows_init(&elems, 1);
    rfx_rows_init(&out, 2);
    size_t *parent = NULL, nmem = 0, memcap = 0;
    part *parts = NULL;
    uint32_t *members = NULL;
    rfx_status st = rfx_rows_reserve(&elems, cand->n * 2);
    if (st != RFX_OK)
        goto done;
    /* the elements the new pairs mention, each in its held class (or alone) */
    rfx_memcpy(elems.data, cand->data, sizeof(uint32_t) * cand->n * 2);
    elems.n = cand->n * 2;
    if ((st = rfx_cpu_sort(&elems, nthreads)) != RFX_OK || (st = rfx_cpu_unique(&elems, nthreads)) != RFX_OK)
        goto done;
    size_t m = elems.n;
    parent = rfx_malloc(sizeof(size_t) * (m + 1));
    parts = rfx_malloc(sizeof(part) * (m + 1));
    if (!parent || !parts) {
        st = RFX_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t rep = elems.data[i];
        bool fresh = !held_class(&h, elems.data[i], &rep);
        parent[i] = i;
        parts[i] = (part){i, rep, fresh, 0, 0};
    }
    /* elements of one held class are one group from the start; then each new pair unites */
    qsort(parts, m, sizeof(part), rep_cmp);
    for (size_t i = 1; i < m; i++)
        if (parts[i].rep == parts[i - 1].rep)
            unite(parent, parts[i].root, parts[i - 1].root);
    for (size_t i = 0; i < cand->n; i++)
        unite(parent, index_of(&elems, cand->data[i * 2]), index_of(&elems, cand->data[i * 2 + 1]));
    /* the classes of each group, once each */
    for (size_t i = 0; i < m; i++)
        parts[i].root = find(parent, parts[i].root);
    qsort(parts, m, sizeof(part), part_cmp);
    size_t np = 0;
    for (size_t i = 0; i < m; i++)
        if (np == 0 || parts[i].root != parts[np - 1].root || parts[i].rep != parts[np - 1].rep)
            parts[np++] = parts[i];
    /* the members of the classes that merge (or are new), and the pairs they add */
    size_t pairs = 0;
    for (size_t g = 0; g < np && st == RFX_OK;) {
        size_t e = g;
        while (e < np && parts[e].root == parts[g].root)
            e++;
        if (e - g > 1 || parts[g].fresh) {
            size_t total = 0, same = 0;
            for (size_t k = g; k < e && st == RFX_OK; k++) {
                parts[k].first = nmem;
                if (parts[k].fresh) {
                    st = rfx_grow((void **)&members, &memcap, nmem + 1, sizeof(uint32_t)) ? RFX_OK : RFX_ERR_NOMEM;
                    if (st == RFX_OK)
                        members[nmem++] = parts[k].rep;
                } else
                    st = class_members(&h, parts[k].rep, &members, &nmem, &memcap);
                parts[k].n = nmem - parts[k].first;
                total += parts[k].n;
                same += parts[k].fresh ? 0 : parts[k].n * parts[k].n;   /* pairs held already */
            }
            pairs += total * total - same;
        }
        g = e;
    }
    if (st != RFX_OK || (st = rfx_rows_reserve(&out, pairs)) != RFX_OK)
        goto done;
    for (size_t g = 0; g < np;) {
        size_t e = g;
        while (e < np && parts[e].root == parts[g].root)
            e++;
        for (size_t a = g; (e - g > 1 || parts[g].fresh) && a < e; a++)
            for (size_t x = 0; x < parts[a].n; x++)
                for (size_t b = g; b < e; b++) {
                    if (a == b && !parts[a].fresh)
                        continue;
                    uint32_t *o = out.data + out.n * 2;
                    for (size_t y = 0; y < parts[b].n; y++) {
                        o[y * 2] = members[parts[a].first + x];
                        o[y * 2 + 1] = members[parts[b].first + y];
                    }
                    out.n += parts[b].n;
                }
        g = e;
    }
    if ((st = rfx_cpu_sort(&out, nthreads)) == RFX_OK)
        rfx_rows_swap(&out, dst);
done:
    free(parent);
    free(parts);
    free(members);
    rfx_rows_free(&elems);
    rfx_rows_free(&out);
    return st;
}
