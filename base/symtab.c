/* symtab.c: the symbol table, interned strings <-> dense 32-bit ids. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

/* ---- symbol table (open addressing over ids) ---------------------------------------- */
struct rfx_symtab {
    char **strs;               /* id -> string (malloc'ed) */
    uint32_t *lens;            /* id -> length */
    size_t n, cap;
    uint32_t *slots;           /* hash slots holding id+1, 0 = empty */
    size_t nslots;
};

rfx_symtab *rfx_symtab_new(void)
{
    rfx_symtab *t = rfx_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nslots = 1024;
    t->slots = rfx_calloc(t->nslots, sizeof(uint32_t));
    if (!t->slots) {
        free(t);
        return NULL;
    }
    return t;
}

void rfx_symtab_free(rfx_symtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->lens);
    free(t->slots);
    free(t);
}

static bool symtab_rehash(rfx_symtab *t)
{
    size_t ns = t->nslots * 2;
    uint32_t *slots = rfx_calloc(ns, sizeof(uint32_t));
    if (!slots)
        return false;
    for (size_t id = 0; id < t->n; id++) {
        size_t h = rfx_fnv1a(RFX_FNV_INIT, t->strs[id], t->lens[id]) & (ns - 1);
        while (slots[h])
            h = (h + 1) & (ns - 1);
        slots[h] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return true;
}

uint32_t rfx_symtab_find(const rfx_symtab *t, const char *s, size_t n)
{
    size_t h = rfx_fnv1a(RFX_FNV_INIT, s, n) & (t->nslots - 1);
    for (; t->slots[h]; h = (h + 1) & (t->nslots - 1)) {
        uint32_t id = t->slots[h] - 1;
        if (t->lens[id] == n && memcmp(t->strs[id], s, n) == 0)
            return id;
    }
    return UINT32_MAX;
}

uint32_t rfx_symtab_intern(rfx_symtab *t, const char *s, size_t n)
{
    size_t h = rfx_fnv1a(RFX_FNV_INIT, s, n) & (t->nslots - 1);
    while (t->slots[h]) {
        uint32_t id = t->slots[h] - 1;
        if (t->lens[id] == n && memcmp(t->strs[id], s, n) == 0)
            return id;
        h = (h + 1) & (t->nslots - 1);
    }
    if (t->n >= UINT32_MAX - 1)
        return UINT32_MAX;
    size_t cap = t->cap;
    if (!rfx_grow((void **)&t->strs, &cap, t->n + 1, sizeof(char *)))
        return UINT32_MAX;
    size_t cap2 = t->cap;
    if (!rfx_grow((void **)&t->lens, &cap2, t->n + 1, sizeof(uint32_t)))
        return UINT32_MAX;
    t->cap = cap < cap2 ? cap : cap2;
    char *copy = rfx_malloc(n + 1);
    if (!copy)
        return UINT32_MAX;
    rfx_memcpy(copy, s, n);
    copy[n] = 0;
    uint32_t id = (uint32_t)t->n++;
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)n;
    t->slots[h] = id + 1;
    if (t->n * 2 > t->nslots && !symtab_rehash(t)) {
        /* keep the table consistent: the entry stays, the table is merely fuller */
    }
    return id;
}

const char *rfx_symtab_str(const rfx_symtab *t, uint32_t id)
{
    return id < t->n ? t->strs[id] : "<bad symbol>";
}

uint32_t rfx_symtab_len(const rfx_symtab *t, uint32_t id)
{
    return id < t->n ? t->lens[id] : 0;
}

uint32_t rfx_symtab_size(const rfx_symtab *t)
{
    return (uint32_t)t->n;
}

static int cmp_ids(const void *a, const void *b, void *ctx)
{
    const rfx_symtab *t = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return strcmp(t->strs[x], t->strs[y]);
}

uint32_t *rfx_symtab_ranks(const rfx_symtab *t)
{
    uint32_t *ids = rfx_malloc((t->n + 1) * sizeof(uint32_t));
    uint32_t *rank = rfx_malloc((t->n + 1) * sizeof(uint32_t));
    if (!ids || !rank) {
        free(ids);
        free(rank);
        return NULL;
    }
    for (uint32_t i = 0; i < t->n; i++)
        ids[i] = i;
    qsort_r(ids, t->n, sizeof(uint32_t), cmp_ids, (void *)t);
    for (uint32_t i = 0; i < t->n; i++)
        rank[ids[i]] = i;
    free(ids);
    return rank;
}
