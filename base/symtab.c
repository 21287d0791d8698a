/* symtab.c: the symbol table, interned strings <-> dense 32-bit ids. */
#include "base.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- symbol table (open addressing over ids) ---------------------------------------- */
/* A slot holds a symbol's id + 1 (0: empty) in its low word and its hash's high word in the
 * high one: a probe compares strings only where the hashes agree, and growing the table
 * reads no string. The slots are REGIONS regions of equal size; a symbol's region is its
 * hash's top bits and its probe stays there, so that threads adding symbols of different
 * regions never touch one slot (rfx_symlocal_merge_all). The strings lie end to end in
 * chunks, one allocation for many. */
enum { CHUNK_BYTES = 1 << 20, REGION_BITS = 6, REGIONS = 1 << REGION_BITS };

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    char text[];
} chunk;

/* Readers (rfx_symtab_str, rfx_symtab_len) may run beside a thread adding symbols: the
 * id arrays grow into new ones, published after their copy, and the old ones are kept
 * until the table is freed (a reader may still hold one); n is published after its
 * symbols. So functors that only read symbols (like, contains, strlen) need no lock. */
typedef struct retired {
    struct retired *next;
    void *strs, *lens;
} retired;

struct rfx_symtab {
    const char **strs;         /* id -> string (in a chunk, NUL-terminated) */
    uint32_t *lens;            /* id -> length */
    size_t n, cap;
    retired *old;              /* id arrays grown out of */
    uint64_t *slots;
    size_t nslots;             /* REGIONS times a power of two */
    size_t held[REGIONS];      /* symbols in each region */
    chunk *chunks;             /* the newest first */
    size_t text_bytes;         /* the chunks' used bytes, summed */
    uint64_t serial;
};

static atomic_uint_fast64_t serials;

rfx_symtab *rfx_symtab_new(void)
{
    rfx_symtab *t = rfx_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->serial = atomic_fetch_add(&serials, 1) + 1;
    t->nslots = 16 * REGIONS;
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
    for (retired *r = t->old, *next; r; r = next) {
        next = r->next;
        free(r->strs);
        free(r->lens);
        free(r);
    }
    free(t->strs);
    free(t->lens);
    free(t->slots);
    free(t);
}

/* Room in the id arrays for `need` symbols: new arrays (twice the size or more) holding
 * the first n, published whole; the old ones retired, not freed. */
static bool grow_ids(rfx_symtab *t, size_t need)
{
    if (need <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 64;
    while (cap < need)
        cap *= 2;
    const char **strs = rfx_malloc(cap * sizeof *strs);
    uint32_t *lens = rfx_malloc(cap * sizeof *lens);
    retired *r = rfx_malloc(sizeof *r);
    if (!strs || !lens || !r) {
        free(strs);
        free(lens);
        free(r);
        return false;
    }
    if (t->n) {
        rfx_memcpy(strs, t->strs, t->n * sizeof *strs);
        rfx_memcpy(lens, t->lens, t->n * sizeof *lens);
    }
    *r = (retired){t->old, (void *)t->strs, t->lens};
    t->old = r;
    __atomic_store_n(&t->strs, strs, __ATOMIC_RELEASE);
    __atomic_store_n(&t->lens, lens, __ATOMIC_RELEASE);
    t->cap = cap;
    return true;
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
    if (n)   /* s may be NULL where n is 0 */
        memcpy(&w, s, n);
    return rfx_mix64(h ^ w ^ 0x94d049bb133111ebull);
}

static inline uint64_t slot_tag(uint64_t h)
{
    return h & 0xFFFFFFFF00000000ull;
}

static inline size_t region_of(uint64_t h)
{
    return (size_t)(h >> (64 - REGION_BITS));
}

/* The first slot of a hash among nslots: in its region, placed by the table's own mixing
 * of the hash's high word (which a slot keeps, so growing needs no string). */
static inline size_t slot_in(size_t nslots, uint64_t h)
{
    size_t size = nslots / REGIONS;
    return region_of(h) * size + ((size_t)rfx_mix64(h >> 32) & (size - 1));
}

/* The slot after i in i's region, round to its start. */
static inline size_t next_in(size_t nslots, size_t i)
{
    size_t size = nslots / REGIONS;
    return (i & ~(size - 1)) | ((i + 1) & (size - 1));
}

/* The table with twice its slots or more, until it has room for `more` symbols more (no
 * region over half full, as far as their share goes). */
static bool symtab_grow(rfx_symtab *t, size_t more)
{
    size_t ns = t->nslots;
    do
        ns *= 2;
    while ((t->n + more) * 2 > ns);
    uint64_t *slots = rfx_calloc(ns, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < t->nslots; i++) {
        uint64_t e = t->slots[i];
        if (!e)
            continue;
        size_t h = slot_in(ns, e);
        while (slots[h])
            h = next_in(ns, h);
        slots[h] = e;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return true;
}

/* Whether a symbol more would fill the table, or the region of hash, past what probes
 * take well. */
static bool crowded(const rfx_symtab *t, uint64_t hash)
{
    return (t->n + 1) * 2 > t->nslots || (t->held[region_of(hash)] + 1) * 4 > t->nslots / REGIONS * 3;
}

static uint32_t find_hashed(const rfx_symtab *t, const char *s, size_t n, uint64_t hash, size_t *at)
{
    size_t h = slot_in(t->nslots, hash);
    for (uint64_t e; (e = t->slots[h]); h = next_in(t->nslots, h)) {
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
    t->text_bytes += n + 1;
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
    if (crowded(t, hash)) {
        if (!symtab_grow(t, 1))
            return UINT32_MAX;
        find_hashed(t, s, n, hash, &h);   /* its empty slot in the larger table */
    }
    if (!grow_ids(t, t->n + 1))
        return UINT32_MAX;
    const char *copy = keep(t, s, n);
    if (!copy)
        return UINT32_MAX;
    uint32_t id = (uint32_t)t->n;
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)n;
    __atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELEASE);
    t->slots[h] = slot_tag(hash) | (id + 1);
    t->held[region_of(hash)]++;
    return id;
}

uint32_t rfx_symtab_intern(rfx_symtab *t, const char *s, size_t n)
{
    return rfx_symtab_intern_hashed(t, s, n, rfx_symtab_hash(s, n));
}

const char *rfx_symtab_str(const rfx_symtab *t, uint32_t id)
{
    return id < __atomic_load_n(&t->n, __ATOMIC_ACQUIRE) ? __atomic_load_n(&t->strs, __ATOMIC_ACQUIRE)[id]
                                                          : "<bad symbol>";
}

uint32_t rfx_symtab_len(const rfx_symtab *t, uint32_t id)
{
    return id < __atomic_load_n(&t->n, __ATOMIC_ACQUIRE) ? __atomic_load_n(&t->lens, __ATOMIC_ACQUIRE)[id] : 0;
}

uint32_t rfx_symtab_size(const rfx_symtab *t)
{
    return (uint32_t)t->n;
}

size_t rfx_symtab_text_bytes(const rfx_symtab *t)
{
    return t->text_bytes;
}

uint64_t rfx_symtab_serial(const rfx_symtab *t)
{
    return t->serial;
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

/* ---- many threads' symbols at once ----------------------------------------------------- */
/* A local symbol's fate in a merge: a symbol the table held (its id), the first of its text
 * in the merge (NEW: an id to come), or a repeat of an earlier piece's new one (FIRST | the
 * entry of that one in its region's list). */
#define FATE_NEW 0x100000000ull
#define FATE_FIRST 0x200000000ull

typedef struct pending {       /* a new symbol's entry in its region's list */
    uint32_t piece, lid;
    size_t slot;
} pending;

typedef struct merge_job {
    rfx_symtab *t;
    rfx_symlocal **locals;
    int n;
    uint32_t **by_region;      /* per piece: its local ids by region, in order within one */
    size_t (*starts)[REGIONS + 1];   /* per piece: where each region's ids begin */
    uint64_t **fate;           /* per piece, per local id */
    pending **pend;            /* per region: its new symbols in the merge's order */
    size_t npend[REGIONS], cap_pend[REGIONS];
    size_t *fresh;             /* per piece: its new symbols; then where their ids begin */
    chunk **chunks;            /* per piece: the chunk holding its new symbols' text */
    atomic_bool nomem;
} merge_job;

/* Piece k's local ids by region (a counting sort, stable). */
static void bucket_piece(int k, void *ctx)
{
    merge_job *m = ctx;
    const rfx_symlocal *l = m->locals[k];
    size_t *st = m->starts[k];
    memset(st, 0, sizeof m->starts[k]);
    for (size_t i = 0; i < l->n; i++)
        st[region_of(l->hashes[i]) + 1]++;
    for (int r = 0; r < REGIONS; r++)
        st[r + 1] += st[r];
    size_t at[REGIONS];
    memcpy(at, st, sizeof at);
    for (size_t i = 0; i < l->n; i++)
        m->by_region[k][at[region_of(l->hashes[i])]++] = (uint32_t)i;
}

/* Region r's symbols of every piece, in the pieces' order: found, or put in their slots as
 * pending (slot value: tag | 0 until their ids are known), each a fate. Only this task
 * touches the region's slots. */
static void merge_region(int r, void *ctx)
{
    merge_job *m = ctx;
    rfx_symtab *t = m->t;
    for (int k = 0; k < m->n; k++) {
        const rfx_symlocal *l = m->locals[k];
        for (size_t q = m->starts[k][r]; q < m->starts[k][r + 1]; q++) {
            const uint32_t lid = m->by_region[k][q];
            const uint64_t hash = l->hashes[lid];
            const char *s = l->strs[lid];
            const uint32_t len = l->lens[lid];
            size_t h = slot_in(t->nslots, hash);
            uint64_t fate = FATE_NEW;
            for (uint64_t e; (e = t->slots[h]); h = next_in(t->nslots, h)) {
                if (slot_tag(e) != slot_tag(hash))
                    continue;
                uint32_t low = (uint32_t)e;
                if (low & 0x80000000u) {   /* pending: an earlier piece's new symbol */
                    const pending *p = &m->pend[r][low & 0x7FFFFFFFu];
                    const rfx_symlocal *o = m->locals[p->piece];
                    if (o->lens[p->lid] == len && memcmp(o->strs[p->lid], s, len) == 0) {
                        fate = FATE_FIRST | (low & 0x7FFFFFFFu);
                        break;
                    }
                } else if (t->lens[low - 1] == len && memcmp(t->strs[low - 1], s, len) == 0) {
                    fate = low - 1;
                    break;
                }
            }
            if (fate == FATE_NEW) {
                if (m->npend[r] == m->cap_pend[r] &&
                    !rfx_grow((void **)&m->pend[r], &m->cap_pend[r], m->npend[r] + 1, sizeof(pending))) {
                    atomic_store(&m->nomem, true);
                    return;
                }
                m->pend[r][m->npend[r]] = (pending){(uint32_t)k, lid, h};
                t->slots[h] = slot_tag(hash) | 0x80000000u | (uint64_t)m->npend[r]++;
                t->held[r]++;
            }
            m->fate[k][lid] = fate;
        }
    }
}

/* Piece k's new symbols counted (before the ids are dealt). */
static void count_fresh(int k, void *ctx)
{
    merge_job *m = ctx;
    size_t c = 0;
    for (size_t i = 0; i < m->locals[k]->n; i++)
        c += m->fate[k][i] == FATE_NEW;
    m->fresh[k] = c;
}

/* Piece k's ids: its new symbols numbered from fresh[k] in their order, their text kept in
 * a chunk of the piece's own; the table's ids for the others it held. */
static void deal_ids(int k, void *ctx)
{
    merge_job *m = ctx;
    rfx_symtab *t = m->t;
    rfx_symlocal *l = m->locals[k];
    size_t bytes = 0;
    for (size_t i = 0; i < l->n; i++)
        bytes += m->fate[k][i] == FATE_NEW ? l->lens[i] + 1 : 0;
    chunk *c = bytes ? rfx_malloc(sizeof *c + bytes) : NULL;
    if (bytes && !c) {
        atomic_store(&m->nomem, true);
        return;
    }
    if (c)
        *c = (chunk){NULL, 0, bytes};
    size_t id = m->fresh[k];
    for (size_t i = 0; i < l->n; i++) {
        uint64_t f = m->fate[k][i];
        if (f == FATE_NEW) {
            char *copy = c->text + c->used;
            rfx_memcpy(copy, l->strs[i], l->lens[i]);
            copy[l->lens[i]] = 0;
            c->used += l->lens[i] + 1;
            t->strs[id] = copy;
            t->lens[id] = l->lens[i];
            l->ids[i] = (uint32_t)id++;
        } else if (!(f & FATE_FIRST))
            l->ids[i] = (uint32_t)f;
    }
    m->chunks[k] = c;
}

/* Region r's pending slots given their ids; then repeats take their first's. */
static void settle_region(int r, void *ctx)
{
    merge_job *m = ctx;
    for (size_t i = 0; i < m->npend[r]; i++) {
        const pending *p = &m->pend[r][i];
        uint64_t *slot = &m->t->slots[p->slot];
        *slot = slot_tag(*slot) | ((uint64_t)m->locals[p->piece]->ids[p->lid] + 1);
    }
}

static void settle_repeats(int k, void *ctx)
{
    merge_job *m = ctx;
    rfx_symlocal *l = m->locals[k];
    for (size_t i = 0; i < l->n; i++) {
        uint64_t f = m->fate[k][i];
        if (f & FATE_FIRST) {
            const pending *p = &m->pend[region_of(l->hashes[i])][f & 0x7FFFFFFFu];
            l->ids[i] = m->locals[p->piece]->ids[p->lid];
        }
    }
}

/* The merge's pending slots emptied again (they only filled slots that were empty, so the
 * table is as it was), after a failure. */
static void undo_pending(merge_job *m)
{
    for (int r = 0; r < REGIONS; r++) {
        for (size_t i = 0; i < m->npend[r]; i++)
            m->t->slots[m->pend[r][i].slot] = 0;
        m->t->held[r] -= m->npend[r];
    }
}

static bool merge_one_by_one(rfx_symlocal *const *locals, int n, rfx_symtab *t)
{
    for (int k = 0; k < n; k++)
        if (!rfx_symlocal_merge(locals[k], t))
            return false;
    return true;
}

bool rfx_symlocal_merge_all(rfx_symlocal *const *locals, int n, rfx_symtab *t, int nthreads)
{
    size_t total = 0;
    for (int k = 0; k < n; k++)
        total += locals[k]->n;
    if (nthreads <= 1 || n <= 1 || total < 4096)
        return merge_one_by_one(locals, n, t);
    if (t->n + total >= 0x7FFFFFFFu)   /* a slot's pending mark is an id's high bit */
        return merge_one_by_one(locals, n, t);
    /* room first, as though every symbol were new */
    if ((t->n + total) * 2 > t->nslots && !symtab_grow(t, total))
        return false;
    if (!grow_ids(t, t->n + total))
        return false;
    merge_job m = {.t = t, .locals = (rfx_symlocal **)locals, .n = n};
    m.by_region = rfx_calloc((size_t)n, sizeof *m.by_region);
    m.starts = rfx_calloc((size_t)n, sizeof *m.starts);
    m.fate = rfx_calloc((size_t)n, sizeof *m.fate);
    m.pend = rfx_calloc(REGIONS, sizeof *m.pend);
    m.fresh = rfx_calloc((size_t)n, sizeof *m.fresh);
    m.chunks = rfx_calloc((size_t)n, sizeof *m.chunks);
    bool ok = m.by_region && m.starts && m.fate && m.pend && m.fresh && m.chunks;
    for (int k = 0; ok && k < n; k++)
        ok = (m.by_region[k] = rfx_malloc(sizeof(uint32_t) * (locals[k]->n + 1))) &&
             (m.fate[k] = rfx_malloc(sizeof(uint64_t) * (locals[k]->n + 1)));
    bool uneven = false;   /* a region would fill past 3/4: symbol by symbol (growing as it goes) */
    if (ok) {
        rfx_parallel_for(n, nthreads, bucket_piece, &m);
        for (int r = 0; r < REGIONS && !uneven; r++) {
            size_t in = t->held[r];
            for (int k = 0; k < n; k++)
                in += m.starts[k][r + 1] - m.starts[k][r];
            uneven = in * 4 > t->nslots / REGIONS * 3;
        }
    }
    if (ok && !uneven) {
        rfx_parallel_for(REGIONS, nthreads, merge_region, &m);
        rfx_parallel_for(n, nthreads, count_fresh, &m);
        size_t id = t->n;
        for (int k = 0; k < n; k++) {   /* each piece's new symbols' first id */
            size_t c = m.fresh[k];
            m.fresh[k] = id;
            id += c;
        }
        if (!atomic_load(&m.nomem))
            rfx_parallel_for(n, nthreads, deal_ids, &m);
        ok = !atomic_load(&m.nomem);
        if (ok) {
            rfx_parallel_for(REGIONS, nthreads, settle_region, &m);
            rfx_parallel_for(n, nthreads, settle_repeats, &m);
            __atomic_store_n(&t->n, id, __ATOMIC_RELEASE);
        } else
            undo_pending(&m);
        for (int k = 0; k < n; k++) {   /* the pieces' chunks become the table's */
            chunk *c = m.chunks[k];
            if (c && ok) {
                c->next = t->chunks;
                t->chunks = c;
                t->text_bytes += c->used;
            } else
                free(c);
        }
    }
    for (int k = 0; k < n; k++) {
        free(m.by_region ? m.by_region[k] : NULL);
        free(m.fate ? m.fate[k] : NULL);
    }
    for (int r = 0; m.pend && r < REGIONS; r++)
        free(m.pend[r]);
    free(m.by_region);
    free(m.starts);
    free(m.fate);
    free(m.pend);
    free(m.fresh);
    free(m.chunks);
    return ok && uneven ? merge_one_by_one(locals, n, t) : ok;
}

const uint32_t *rfx_symlocal_ids(const rfx_symlocal *l)
{
    return l->ids;
}
