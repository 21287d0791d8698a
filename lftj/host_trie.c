/* host_trie.c: a two-column relation as a TrieArray on the host, the form in which the
 * out-of-core join's slices travel to the device (Red Fox thesis §6.1: slices are
 * TrieArrays with adjusted ptr arrays). A row costs one word there instead of two, plus
 * two words for each distinct first-column value, so R-MAT 24's 268 M oriented edges take
 * ~1.2 GB instead of 2.1 GB: a box's copies move little more than half the bytes. */
#include "lftj.h"
#include "base.h"

#include <stdlib.h>

/* The rows are read in chunks, many (nthreads x 4) so that threads finishing early take
 * more: once where no row repeats, else twice (counted, then written). */
#define TRIE_CHUNKS_PER_THREAD 4
#define TRIE_MIN_CHUNK (1u << 16)

typedef struct trie_job {
    const rfx_rows *rows;
    size_t nchunks;
    size_t *heads, *distinct;   /* per chunk: first-column values and rows that start there */
    uint32_t **head_at;         /* one pass: per chunk, its heads' values and row indexes */
    bool *repeats;              /* one pass: per chunk, whether a row repeats the one before */
    bool *unsorted;             /* per chunk: whether a row is less than the one before */
    rfx_lftj_trie *t;
} trie_job;

static void chunk_bounds(const trie_job *j, int c, size_t *a, size_t *b)
{
    size_t n = j->rows->n;
    *a = n * (size_t)c / j->nchunks;
    *b = n * ((size_t)c + 1) / j->nchunks;
}

/* Row i starts a new first-column value (a head) / is not a repeat of row i - 1. */
static inline bool is_head(const uint32_t *d, size_t i)
{
    return i == 0 || d[2 * i] != d[2 * i - 2];
}
static inline bool is_new(const uint32_t *d, size_t i)
{
    return is_head(d, i) || d[2 * i + 1] != d[2 * i - 1];
}
/* Row i is less than row i - 1 (checked in the passes that read them anyway: the layer
 * that keeps TrieArrays of what lands on the host does not know every landing's order). */
static inline bool is_less(const uint32_t *d, size_t i)
{
    return i > 0 && (d[2 * i] < d[2 * i - 2] || (d[2 * i] == d[2 * i - 2] && d[2 * i + 1] < d[2 * i - 1]));
}

/* One pass, for rows without repeats (the usual case: relations are sets): val1 is the
 * second column as it stands, and each chunk keeps its heads aside until their places are
 * known. A chunk that meets a repeat says so, and the two passes below run instead. */
static void trie_one_pass(int c, void *arg)
{
    trie_job *j = arg;
    size_t a, b, heads = 0;
    chunk_bounds(j, c, &a, &b);
    const uint32_t *d = j->rows->data;
    uint32_t *val1 = j->t->val1.data, *at = rfx_malloc(sizeof(uint32_t) * 2 * (b - a + 1));
    j->head_at[c] = at;
    j->repeats[c] = at == NULL;
    for (size_t i = a; i < b && at; i++) {
        if (is_less(d, i)) {
            j->unsorted[c] = true;
            break;
        }
        if (is_head(d, i)) {
            at[2 * heads] = d[2 * i];
            at[2 * heads++ + 1] = (uint32_t)i;
        } else if (d[2 * i + 1] == d[2 * i - 1]) {
            j->repeats[c] = true;
            break;
        }
        val1[i] = d[2 * i + 1];
    }
    j->heads[c] = heads;
}

static void trie_place_heads(int c, void *arg)
{
    trie_job *j = arg;
    const uint32_t *at = j->head_at[c];
    for (size_t h = 0, r = j->distinct[c]; h < j->heads[c]; h++, r++) {
        j->t->val0.data[r] = at[2 * h];
        j->t->ptr0.data[r] = at[2 * h + 1];
    }
}

static void trie_count(int c, void *arg)
{
    trie_job *j = arg;
    size_t a, b, heads = 0, distinct = 0;
    chunk_bounds(j, c, &a, &b);
    const uint32_t *d = j->rows->data;
    for (size_t i = a; i < b; i++) {
        heads += is_head(d, i);
        distinct += is_new(d, i);
        j->unsorted[c] |= is_less(d, i);
    }
    j->heads[c] = heads;
    j->distinct[c] = distinct;
}

static void trie_write(int c, void *arg)
{
    trie_job *j = arg;
    size_t a, b, r = j->heads[c], v = j->distinct[c];   /* scanned: where the chunk's entries go */
    chunk_bounds(j, c, &a, &b);
    const uint32_t *d = j->rows->data;
    uint32_t *val0 = j->t->val0.data, *ptr0 = j->t->ptr0.data, *val1 = j->t->val1.data;
    for (size_t i = a; i < b; i++) {
        if (is_head(d, i)) {
            val0[r] = d[2 * i];
            ptr0[r++] = (uint32_t)v;
        }
        if (is_new(d, i))
            val1[v++] = d[2 * i + 1];
    }
}

/* Room for n0 roots (and their starts, one more) and n1 values. */
static rfx_status trie_reserve(rfx_lftj_trie *t, size_t n0, size_t n1)
{
    rfx_status st = rfx_rows_reserve(&t->val0, n0);
    if (st == RFX_OK)
        st = rfx_rows_reserve(&t->ptr0, n0 + 1);
    return st == RFX_OK ? rfx_rows_reserve(&t->val1, n1) : st;
}

static void trie_set_sizes(rfx_lftj_trie *t, size_t n0, size_t n1)
{
    t->val0.n = n0;
    t->ptr0.n = n0 + 1;
    t->val1.n = n1;
    t->ptr0.data[n0] = (uint32_t)n1;
}

/* Rows without repeats in one pass; true when it did (else t holds nothing new). */
static rfx_status trie_build_one_pass(trie_job *j, int nthreads, bool *done)
{
    rfx_lftj_trie *t = j->t;
    const size_t n = j->rows->n, nc = j->nchunks;
    *done = false;
    j->head_at = rfx_calloc(nc, sizeof(uint32_t *));
    j->repeats = rfx_calloc(nc, sizeof(bool));
    rfx_status st = j->head_at && j->repeats ? rfx_rows_reserve(&t->val1, n) : RFX_ERR_NOMEM;
    bool repeats = false;
    if (st == RFX_OK) {
        rfx_parallel_for((int)nc, nthreads, trie_one_pass, j);
        for (size_t c = 0; c < nc; c++) {
            repeats |= j->repeats[c];
            st = j->unsorted[c] ? RFX_ERR_LIMIT : st;
        }
    }
    size_t n0 = 0;
    for (size_t c = 0; st == RFX_OK && !repeats && c < nc; c++) {
        j->distinct[c] = n0;   /* where the chunk's heads go */
        n0 += j->heads[c];
    }
    if (st == RFX_OK && !repeats)
        st = trie_reserve(t, n0, n);
    if (st == RFX_OK && !repeats) {
        rfx_parallel_for((int)nc, nthreads, trie_place_heads, j);
        trie_set_sizes(t, n0, n);
        *done = true;
    }
    for (size_t c = 0; j->head_at && c < nc; c++)
        free(j->head_at[c]);
    free(j->head_at);
    free(j->repeats);
    j->head_at = NULL;
    j->repeats = NULL;
    return st;
}

/* Any rows in two passes: each chunk's roots and distinct rows counted, scanned into
 * where they go, then written. */
static rfx_status trie_build_two_passes(trie_job *j, int nthreads)
{
    const size_t nc = j->nchunks;
    rfx_parallel_for((int)nc, nthreads, trie_count, j);
    for (size_t c = 0; c < nc; c++)
        if (j->unsorted[c])
            return RFX_ERR_LIMIT;
    size_t n0 = 0, n1 = 0;
    for (size_t c = 0; c < nc; c++) {   /* exclusive scans: each chunk's start */
        size_t h = j->heads[c], d = j->distinct[c];
        j->heads[c] = n0;
        j->distinct[c] = n1;
        n0 += h;
        n1 += d;
    }
    rfx_status st = trie_reserve(j->t, n0, n1);
    if (st == RFX_OK) {
        rfx_parallel_for((int)nc, nthreads, trie_write, j);
        trie_set_sizes(j->t, n0, n1);
    }
    return st;
}

rfx_status rfx_lftj_trie_build(const rfx_rows *rows, int nthreads, rfx_lftj_trie *t)
{
    rfx_rows_init(&t->val0, 1);
    rfx_rows_init(&t->ptr0, 1);
    rfx_rows_init(&t->val1, 1);
    if (rows->arity != 2 || rows->n >= UINT32_MAX)
        return RFX_ERR_LIMIT;
    size_t nchunks = (size_t)(nthreads > 0 ? nthreads : 1) * TRIE_CHUNKS_PER_THREAD;
    if (nchunks > rows->n / TRIE_MIN_CHUNK)
        nchunks = rows->n / TRIE_MIN_CHUNK;
    nchunks = nchunks ? nchunks : 1;
    trie_job j = {rows, nchunks, rfx_malloc(sizeof(size_t) * nchunks), rfx_malloc(sizeof(size_t) * nchunks), NULL,
                  NULL, rfx_calloc(nchunks, sizeof(bool)), t};
    rfx_status st = j.heads && j.distinct && j.unsorted ? RFX_OK : RFX_ERR_NOMEM;
    bool done = false;
    if (st == RFX_OK && rows->n)
        st = trie_build_one_pass(&j, nthreads, &done);
    if (st == RFX_OK && !done)
        st = trie_build_two_passes(&j, nthreads);
    free(j.heads);
    free(j.distinct);
    free(j.unsorted);
    if (st != RFX_OK)
        rfx_lftj_trie_free(t);
    return st;
}

void rfx_lftj_trie_free(rfx_lftj_trie *t)
{
    rfx_rows_free(&t->val0);
    rfx_rows_free(&t->ptr0);
    rfx_rows_free(&t->val1);
}

bool rfx_lftj_trie_roots(const rfx_lftj_trie *t, const rfx_rows *rows, size_t lo, size_t hi, size_t *rlo, size_t *rhi)
{
    const uint32_t *d = rows->data;
    if (lo > hi || hi > rows->n || (lo > 0 && lo < rows->n && !is_head(d, lo)) || (hi > 0 && hi < rows->n && !is_head(d, hi)))
        return false;
    *rlo = lo < rows->n ? rfx_rows_bound(&t->val0, 0, &d[2 * lo], 1, false) : t->val0.n;
    *rhi = hi < rows->n ? rfx_rows_bound(&t->val0, 0, &d[2 * hi], 1, false) : t->val0.n;
    return true;
}
