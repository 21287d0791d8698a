/* symtab.c: the symbol table, interned strings <-> dense 32-bit ids. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

/* ---- symbol table (open addressing over ids) ---------------------------------------- */
/* A slot holds a symbol's id + 1 (0: empty) in its low word and its hash's high word in the
 * high one: a probe compares strings only where the hashes agree, and growing the table
 * reads no string. The strings lie end to end in chunks, one allocation for many. */
enum { CHUNK_BYTES = 1 << 20 };

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char text[];
} chunk;

struct rfx_symtab {
    const char **strs;         /* id -> string (in a chunk, NUL-terminated) */
    uint32_t *lens;            /* id -> length */
    size_t n, cap;
    uint64_t *slots;
    size_t nslots;
    chunk *chunks;             /* the newest first */
};

rfx_symtab *rfx_symtab_new(void)
{
    rfx_symtab *t = rfx_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nslots = 1024;
    t->slots = rfx_calloc(t->nslots, sizeof *t->slots);
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
    for (chunk *c = t->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(t->strs);
    free(t->lens);
    free(t->slots);
    free(t);
}

uint64_t rfx_symtab_hash(const char *s, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (; n >= 8; s += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = rfx_mix64(h ^ w);
    }
    uint64_t w = 0;
    memcpy(&w, s, n);
    return rfx_mix64(h ^ w ^ 0x94d049bb133111ebull);
}

static inline uint64_t slot_tag(uint64_t h)
{
    return h & 0xFFFFFFFF00000000ull;
}

static bool symtab_rehash(rfx_symtab *t)
{
    size_t ns = t->nslots * 2;
    uint64_t *slots = rfx_calloc(ns, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < t->nslots; i++) {
        uint64_t e = t->slots[i];
        if (!e)
            continue;
        /* the slot keeps the hash's high word; the low bits that place it come from the
         * table's own mixing of that word, so growing needs no string */
        size_t h = (size_t)rfx_mix64(e >> 32) & (ns - 1);
        while (slots[h])
            h = (h + 1) & (ns - 1);
        slots[h] = e;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return true;
}

static inline size_t first_slot(const rfx_symtab *t, uint64_t h)
{
    return (size_t)rfx_mix64(h >> 32) & (t->nslots - 1);
}

static uint32_t find_hashed(const rfx_symtab *t, const char *s, size_t n, uint64_t hash, size_t *at)
{
    size_t h = first_slot(t, hash);
    for (uint64_t e; (e = t->slots[h]); h = (h + 1) & (t->nslots - 1)) {
        uint32_t id = (uint32_t)e - 1;
        if (slot_tag(e) == slot_tag(hash) && t->lens[id] == n && memcmp(t->strs[id], s, n) == 0) {
            *at = h;
            return id;
        }
    }
    *at = h;
    return UINT32_MAX;
}

uint32_t rfx_symtab_find(const rfx_symtab *t, const char *s, size_t n)
{
    size_t at;
    return find_hashed(t, s, n, rfx_symtab_hash(s, n), &at);
}

/* A copy of s (n bytes and a NUL) in the newest chunk, or a new one. */
static const char *keep(rfx_symtab *t, const char *s, size_t n)
{
    chunk *c = t->chunks;
    if (!c || c->cap - c->used < n + 1) {
        size_t cap = n + 1 > CHUNK_BYTES ? n + 1 : CHUNK_BYTES;
        if (!(c = rfx_malloc(sizeof *c + cap)))
            return NULL;
        *c = (chunk){t->chunks, 0, cap};
        t->chunks = c;
    }
    char *copy = c->text + c->used;
    rfx_memcpy(copy, s, n);
    copy[n] = 0;
    c->used += n + 1;
    return copy;
}

uint32_t rfx_symtab_intern_hashed(rfx_symtab *t, const char *s, size_t n, uint64_t hash)
{
    size_t h;
    uint32_t found = find_hashed(t, s, n, hash, &h);
    if (found != UINT32_MAX)
        return found;
    if (t->n >= UINT32_MAX - 1 || n > UINT32_MAX)
        return UINT32_MAX;
    if (t->n == t->cap) {
        size_t cap = t->cap, cap2 = t->cap;
        if (!rfx_grow((void **)&t->strs, &cap, t->n + 1, sizeof *t->strs) ||
            !rfx_grow((void **)&t->lens, &cap2, t->n + 1, sizeof *t->lens))
            return UINT32_MAX;
        t->cap = cap < cap2 ? cap : cap2;
    }
    const char *copy = keep(t, s, n);
    if (!copy)
        return UINT32_MAX;
    uint32_t id = (uint32_t)t->n++;
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)n;
    t->slots[h] = slot_tag(hash) | (id + 1);
    if (t->n * 2 > t->nslots && !symtab_rehash(t)) {
        /* keep the table consistent: the entry stays, the table is merely fuller */
    }
    return id;
}

uint32_t rfx_symtab_intern(rfx_symtab *t, const char *s, size_t n)
{
    return rfx_symtab_intern_hashed(t, s, n, rfx_symtab_hash(s, n));
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

/* ---- a thread's symbols, added to a table later ----------------------------------------- */
struct rfx_symlocal {
    uint64_t *slots;           /* as the table's: hash's high word | local id + 1 */
    size_t nslots;
    const char **strs;         /* borrowed */
    uint32_t *lens, *ids;      /* ids: local id -> the table's, after a merge */
    uint64_t *hashes;
    size_t n, cap;
};

rfx_symlocal *rfx_symlocal_new(void)
{
    return rfx_calloc(1, sizeof(rfx_symlocal));
}

void rfx_symlocal_free(rfx_symlocal *l)
{
    if (!l)
        return;
    free(l->slots);
    free(l->strs);
    free(l->lens);
    free(l->ids);
    free(l->hashes);
    free(l);
}

void rfx_symlocal_clear(rfx_symlocal *l)
{
    if (l->n)
        memset(l->slots, 0, l->nslots * sizeof *l->slots);
    l->n = 0;
}

static bool local_grow(rfx_symlocal *l)
{
    size_t cap = l->cap ? l->cap * 2 : 256, ns = cap * 2;
    const char **strs = rfx_realloc(l->strs, cap * sizeof *strs);
    if (strs)
        l->strs = strs;
    uint32_t *lens = rfx_realloc(l->lens, cap * sizeof *lens);
    if (lens)
        l->lens = lens;
    uint32_t *ids = rfx_realloc(l->ids, cap * sizeof *ids);
    if (ids)
        l->ids = ids;
    uint64_t *hashes = rfx_realloc(l->hashes, cap * sizeof *hashes);
    if (hashes)
        l->hashes = hashes;
    uint64_t *slots = rfx_calloc(ns, sizeof *slots);
    if (!strs || !lens || !ids || !hashes || !slots) {
        free(slots);
        return false;
    }
    for (size_t id = 0; id < l->n; id++) {
        size_t h = (size_t)rfx_mix64(l->hashes[id] >> 32) & (ns - 1);
        while (slots[h])
            h = (h + 1) & (ns - 1);
        slots[h] = slot_tag(l->hashes[id]) | (id + 1);
    }
    free(l->slots);
    l->slots = slots;
    l->nslots = ns;
    l->cap = cap;
    return true;
}

uint32_t rfx_symlocal_intern(rfx_symlocal *l, const char *s, size_t n)
{
    if (l->n == l->cap && !local_grow(l))
        return UINT32_MAX;
    const uint64_t hash = rfx_symtab_hash(s, n);
    size_t h = (size_t)rfx_mix64(hash >> 32) & (l->nslots - 1);
    for (uint64_t e; (e = l->slots[h]); h = (h + 1) & (l->nslots - 1)) {
        uint32_t id = (uint32_t)e - 1;
        if (slot_tag(e) == slot_tag(hash) && l->lens[id] == n && memcmp(l->strs[id], s, n) == 0)
            return id;
    }
    if (n > UINT32_MAX)
        return UINT32_MAX;
    uint32_t id = (uint32_t)l->n++;
    l->strs[id] = s;
    l->lens[id] = (uint32_t)n;
    l->hashes[id] = hash;
    l->slots[h] = slot_tag(hash) | (id + 1);
    return id;
}

const uint32_t *rfx_symlocal_merge(rfx_symlocal *l, rfx_symtab *t)
{
    for (size_t id = 0; id < l->n; id++)
        if ((l->ids[id] = rfx_symtab_intern_hashed(t, l->strs[id], l->lens[id], l->hashes[id])) == UINT32_MAX)
            return NULL;
    return l->ids;
}
