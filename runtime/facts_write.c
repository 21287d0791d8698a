/* facts_write.c: writing relations the way Soufflé does (facts text, CSV, gzip),
 * atomically, their rows turned into text on the run's threads. */
#include "runtime.h"
#include "base.h"
#include "rx_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- output ------------------------------------------------------------------------------- */
/* Rows are turned into text by chunks on the run's threads, each into a buffer of its own,
 * and the buffers written in order: one thread printing with snprintf wrote ~60 MB/s. */
enum { TEXT_CHUNK_ROWS = 1 << 17 };

typedef struct text_buf {
    char *p;
    size_t len, cap;
    bool nomem;
    long long at;               /* where the chunk's text goes in the file */
} text_buf;

/* Room for n more bytes at t->p + t->len, or NULL (t->nomem set). */
static char *text_room(text_buf *t, size_t n)
{
    if (t->nomem)
        return NULL;
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 1 << 16;
        while (cap < t->len + n)
            cap *= 2;
        char *p = rfx_realloc(t->p, cap);
        if (!p) {
            t->nomem = true;
            return NULL;
        }
        t->p = p;
        t->cap = cap;
    }
    return t->p + t->len;
}

/* "00" to "99": the digits two at a time, one division each. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                     "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

static const uint32_t powers_of_10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                           1000000000};

/* v's decimal digits at out; their count. The count from the bit length (no chain of
 * comparisons to mispredict), then the digits from the right, two a division. */
static inline size_t decimal_u32(char *out, uint32_t v)
{
    unsigned bits = 32u - (unsigned)__builtin_clz(v | 1u), t = bits * 1233u >> 12;   /* ~log10 */
    size_t n = t + (v >= powers_of_10[t]);
    n = n ? n : 1;
    char *p = out + n;
    while (v >= 100) {
        uint32_t q = v / 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * (v - q * 100), 2);
        v = q;
    }
    if (v >= 10)
        memcpy(p - 2, digit_pairs + 2 * v, 2);
    else
        p[-1] = (char)('0' + v);
    return n;
}

enum { VALUE_ROOM = 32 };   /* the longest number or float text, and a separator */

/* Appends one value's text (numbers as %d / %u print them, floats as Soufflé prints them:
 * %.9g, the digits that read back to the same float) where room for the rest of the row
 * (row_room bytes) was made: a symbol makes room for its own text. */
static void put_value(text_buf *t, rfx_prim prim, uint32_t v, const rfx_symtab *syms, size_t row_room, bool quote)
{
    char *at = t->p + t->len;
    if (prim == RFX_SYMBOL) {
        const char *s = rfx_symtab_str(syms, v);
        size_t n = rfx_symtab_len(syms, v);
        if (quote && (at = text_room(t, 2 * n + 2 + row_room))) {   /* RFC 4180: "..." with "" for " */
            *at++ = '"';
            for (size_t i = 0; i < n; i++) {
                if (s[i] == '"')
                    *at++ = '"';
                *at++ = s[i];
            }
            *at++ = '"';
            t->len = (size_t)(at - t->p);
        } else if (!quote && (at = text_room(t, n + row_room))) {
            rfx_memcpy(at, s, n);
            t->len += n;
        }
    } else if (prim == RFX_FLOAT) {
        float f;
        rfx_memcpy(&f, &v, 4);
        t->len += (size_t)snprintf(at, VALUE_ROOM, "%.9g", (double)f);
    } else if (prim == RFX_DATE) {
        t->len += (size_t)rfx_date_format(at, VALUE_ROOM, v);
    } else if (prim == RFX_NUMBER && (int32_t)v < 0) {
        *at = '-';
        t->len += 1 + decimal_u32(at + 1, 0u - v);
    } else
        t->len += decimal_u32(at, v);
}

/* A 64-bit value's text (a float64 with the fewest digits, 15 to 17, that read back to
 * the same double: 19.99, not 19.989999999999998). */
static void put_wide(text_buf *t, rfx_prim prim, uint64_t v)
{
    char *at = t->p + t->len;
    if (prim == RFX_FLOAT64) {
        double d;
        rfx_memcpy(&d, &v, 8);
        int n = 0;
        for (int digits = 15; digits <= 17; digits++) {
            n = snprintf(at, VALUE_ROOM, "%.*g", digits, d);
            if (d != d || strtod(at, NULL) == d)
                break;
        }
        t->len += (size_t)n;
    } else if (prim == RFX_NUMBER64)
        t->len += (size_t)snprintf(at, VALUE_ROOM, "%lld", (long long)(int64_t)v);
    else
        t->len += (size_t)snprintf(at, VALUE_ROOM, "%llu", (unsigned long long)v);
}

int rfx_format_decimal(char *buf, size_t cap, uint64_t raw, int scale)
{
    bool neg = (int64_t)raw < 0;
    uint64_t mag = neg ? 0u - raw : raw, p10 = (uint64_t)rfx_pow10(scale);
    int n = snprintf(buf, cap, "%s%llu", neg ? "-" : "", (unsigned long long)(mag / p10));
    if (scale)
        n += snprintf(buf + n, cap - (size_t)n, ".%0*llu", scale, (unsigned long long)(mag % p10));
    return n;
}

/* A decimal's text: its count of 10^-scale with the point `scale` digits from the right. */
static void put_decimal(text_buf *t, uint64_t raw, int scale)
{
    t->len += (size_t)rfx_format_decimal(t->p + t->len, VALUE_ROOM, raw, scale);
}

/* A record's text (`[1, a]`), as put_value puts a value. */
static void put_record(text_buf *t, const rfx_record_io *rec, int col, uint32_t v, size_t row_room)
{
    rfx_text x = {0};
    char *at;
    if (!rfx_record_format(rec, rec->coltypes[col], v, &x, 0) || !(at = text_room(t, x.len + row_room)))
        t->nomem = true;
    else {
        rfx_memcpy(at, x.p, x.len);
        t->len += x.len;
    }
    free(x.p);
}

int rfx_format_value(char *buf, size_t cap, rfx_prim prim, uint32_t v)
{
    if (prim == RFX_DATE)
        return rfx_date_format(buf, cap, v);
    if (prim == RFX_FLOAT) {
        float f;
        rfx_memcpy(&f, &v, 4);
        return snprintf(buf, cap, "%.9g", (double)f);
    }
    return prim == RFX_NUMBER ? snprintf(buf, cap, "%d", (int)(int32_t)v) : snprintf(buf, cap, "%u", v);
}

typedef struct text_job {
    const rfx_rows *rows;
    const size_t *idx;          /* output order, or NULL for stored order */
    const rfx_prim *types;
    const rfx_symtab *syms;
    const char *delim;          /* the separator, dlen bytes (int_chunk: one) */
    size_t dlen;
    bool quote;                 /* RFC 4180: symbols quoted */
    bool ints;                  /* every column a number or unsigned, a one-byte separator: int_chunk */
    size_t first;               /* the batch's first row; chunk i starts TEXT_CHUNK_ROWS * i later */
    text_buf *bufs;             /* one per chunk of the batch */
    int n;                      /* the batch's chunks */
    /* the batch before, written by one more task (writing), in order: */
    FILE *f;                    /* through f when fd < 0 */
    int fd;                     /* a new file's descriptor: chunks go at their offsets */
    const text_buf *written;
    int nwritten;
    rfx_status wst;
    int werr;                   /* the failed write's errno (0: none known) */
    const rfx_record_io *rec;   /* record columns (else NULL) */
    const rfx_decimal_cols *dec;   /* decimal columns (else NULL) */
} text_job;

/* A chunk of rows whose columns are all numbers or unsigned (no symbol, no float): the
 * chunk's room made once, the values written with no test of room or type. */
static void int_chunk(text_job *j, text_buf *t, size_t lo, size_t hi)
{
    const size_t a = (size_t)j->rows->arity;
    if (!text_room(t, (hi - lo) * a * 12))   /* 11 characters a value at most, and its separator */
        return;
    uint32_t negative[RFX_MAX_ARITY];       /* the sign bit where a column holds numbers */
    for (size_t c = 0; c < a; c++)
        negative[c] = j->types[c] == RFX_NUMBER ? 0x80000000u : 0;
    char *p = t->p, delim = j->delim[0];
    for (size_t r = lo; r < hi; r++) {
        const uint32_t *row = j->rows->data + (j->idx ? j->idx[r] : r) * a;
        for (size_t c = 0; c < a; c++) {
            uint32_t v = row[c];
            if (v & negative[c]) {
                *p++ = '-';
                v = 0u - v;
            }
            p += decimal_u32(p, v);
            *p++ = c + 1 < a ? delim : '\n';
        }
    }
    t->len = (size_t)(p - t->p);
}

static void text_chunk(int i, void *ctx)
{
    text_job *j = ctx;
    text_buf *t = &j->bufs[i];
    size_t a = (size_t)j->rows->arity, lo = j->first + (size_t)i * TEXT_CHUNK_ROWS;
    size_t hi = lo + TEXT_CHUNK_ROWS < j->rows->n ? lo + TEXT_CHUNK_ROWS : j->rows->n;
    const size_t row_room = a * (VALUE_ROOM + j->dlen) + 1;   /* values, separators and the newline */
    t->len = 0;
    if (j->ints) {
        int_chunk(j, t, lo, hi);
        return;
    }
    for (size_t r = lo; r < hi && text_room(t, row_room); r++) {
        const uint32_t *row = j->rows->data + (j->idx ? j->idx[r] : r) * a;
        for (size_t c = 0; c < a && !t->nomem; c++) {
            if (j->types[c] == RFX_WORD)   /* the low word of the value before */
                continue;
            if (c) {
                memcpy(t->p + t->len, j->delim, j->dlen);
                t->len += j->dlen;
            }
            if (j->types[c] == RFX_DECIMAL && j->dec && c + 1 < a)
                put_decimal(t, (uint64_t)row[c] << 32 | row[c + 1], j->dec->scale[c]);
            else if (RFX_PRIM_WIDE(j->types[c]) && c + 1 < a)
                put_wide(t, j->types[c], (uint64_t)row[c] << 32 | row[c + 1]);
            else if (j->rec && rfx_record_column(j->rec->prog, j->rec->coltypes[c]))
                put_record(t, j->rec, (int)c, row[c], row_room);
            else
                put_value(t, j->types[c], row[c], j->syms, row_room, j->quote);
        }
        if (!t->nomem)
            t->p[t->len++] = '\n';
    }
}

/* The batch before, written in order by one task while the others make this batch's text
 * (the reader's "one more task"). One writer copies into the page cache faster than many at
 * once at their offsets (bench/io.sh), and making the text and writing it no longer take
 * turns. */
static void write_batch(text_job *j)
{
    for (int i = 0; i < j->nwritten && j->wst == RFX_OK; i++) {
        const text_buf *t = &j->written[i];
        errno = 0;
        if (j->fd >= 0 ? !rfx_pwrite(j->fd, t->p, t->len, t->at) : !rfx_fwrite(j->f, t->p, t->len)) {
            j->wst = RFX_ERR_IO;
            j->werr = errno;
        }
    }
}

static void text_task(int i, void *ctx)
{
    text_job *j = ctx;
    if (i < j->n)
        text_chunk(i, j);
    else
        write_batch(j);
}

typedef struct rank_job {
    const rfx_record_io *rec;
    int type;                  /* the column's (rfx_record_compare) */
    const rfx_rows *rows;
    int col, chunks;
    const uint32_t *ids;       /* the column's distinct values, ascending */
    size_t nids;
    const uint32_t *rank;      /* rank[i]: ids[i]'s place in the type's order */
    rfx_rows *keys;            /* a row's ranks, then its index */
} rank_job;

/* Two places among the distinct values, by their values in the column's type's order. */
static int cmp_in_type(const void *x, const void *y, void *ctx)
{
    const rank_job *j = ctx;
    return rfx_record_compare(j->rec, j->type, j->ids[*(const uint32_t *)x], j->ids[*(const uint32_t *)y], 0);
}

static void rank_chunk(int i, void *ctx)
{
    const rank_job *j = ctx;
    const size_t a = (size_t)j->rows->arity, n = j->rows->n;
    for (size_t r = n * (size_t)i / (size_t)j->chunks, hi = n * (size_t)(i + 1) / (size_t)j->chunks; r < hi; r++) {
        uint32_t v = j->rows->data[r * a + (size_t)j->col];
        size_t lo = 0, up = j->nids;   /* v is one of ids */
        while (up - lo > 1) {
            size_t mid = lo + (up - lo) / 2;
            if (j->ids[mid] <= v)
                lo = mid;
            else
                up = mid;
        }
        uint32_t *key = j->keys->data + r * (a + 1);
        key[j->col] = j->rank[lo];
        key[a] = (uint32_t)r;
    }
}

/* Column col of the rows as ranks in keys: its distinct values sorted in its type's order
 * (through the record table, once each), each row's value replaced by its place there. */
static rfx_status rank_column(rank_job *j, int nthreads)
{
    rfx_rows vals;
    rfx_rows_init(&vals, 1);
    rfx_status st = rfx_rows_reserve(&vals, j->rows->n);
    for (size_t r = 0; st == RFX_OK && r < j->rows->n; r++)
        vals.data[r] = j->rows->data[r * (size_t)j->rows->arity + (size_t)j->col];
    vals.n = j->rows->n;
    if (st == RFX_OK)
        st = rfx_cpu_sort(&vals, nthreads);
    size_t m = 0;
    for (size_t r = 0; st == RFX_OK && r < vals.n; r++)
        if (m == 0 || vals.data[m - 1] != vals.data[r])
            vals.data[m++] = vals.data[r];
    uint32_t *order = st == RFX_OK ? rfx_malloc(sizeof(uint32_t) * (m ? m : 1)) : NULL;
    uint32_t *rank = order ? rfx_malloc(sizeof(uint32_t) * (m ? m : 1)) : NULL;
    if (st == RFX_OK && !rank)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK) {
        j->ids = vals.data;
        j->nids = m;
        for (size_t k = 0; k < m; k++)
            order[k] = (uint32_t)k;
        qsort_r(order, m, sizeof(uint32_t), cmp_in_type, j);
        for (size_t k = 0; k < m; k++)   /* ids[order[k]] is k-th in the type's order */
            rank[order[k]] = (uint32_t)k;
        j->rank = rank;
        rfx_parallel_for(j->chunks, nthreads, rank_chunk, j);
    }
    free(order);
    free(rank);
    rfx_rows_free(&vals);
    return st;
}

/* The output order of rows with record columns: by what the records hold, each column's
 * values ranked once (rank_column) and the rows sorted by their ranks as integers. */
static size_t *record_order(const rfx_rows *rows, const rfx_record_io *rec, int nthreads, rfx_status *st)
{
    *st = RFX_OK;
    if (rows->n < 2 || rows->arity == 0)
        return NULL;
    if (rows->n > UINT32_MAX) {
        *st = RFX_ERR_LIMIT;
        return NULL;
    }
    nthreads = nthreads < 1 ? 1 : nthreads;
    size_t *idx = rfx_malloc(sizeof(size_t) * rows->n);
    rfx_rows keys;
    rfx_rows_init(&keys, rows->arity + 1);
    *st = idx ? rfx_rows_reserve(&keys, rows->n) : RFX_ERR_NOMEM;
    keys.n = rows->n;
    rank_job j = {rec, 0, rows, 0, rows->n / (size_t)nthreads < 65536 ? 1 : nthreads * 4, NULL, 0, NULL, &keys};
    for (int c = 0; *st == RFX_OK && c < rows->arity; c++) {
        j.col = c;
        j.type = rec->coltypes[c];
        *st = rank_column(&j, nthreads);
    }
    if (*st == RFX_OK)
        *st = rfx_cpu_sort(&keys, nthreads);
    for (size_t i = 0; *st == RFX_OK && i < rows->n; i++)
        idx[i] = keys.data[i * (size_t)keys.arity + (size_t)rows->arity];
    rfx_rows_free(&keys);
    if (*st != RFX_OK) {
        free(idx);
        return NULL;
    }
    return idx;
}

size_t *rfx_write_order(const rfx_rows *rows, const rfx_prim *types, const rfx_symtab *syms,
                        const rfx_record_io *records, int nthreads, rfx_status *st)
{
    return records ? record_order(rows, records, nthreads, st) : rfx_output_order(rows, types, syms, nthreads, st);
}

/* Writes the rows' text to f, or at fd's offsets from 0 when fd >= 0 (a new file): batch k's
 * text is made while batch k - 1 is written. */
static rfx_status write_rows(FILE *f, int fd, const rfx_rows *rows, const rfx_prim *types,
                             const rfx_symtab *syms, const char *delim, const rfx_write_opts *wo)
{
    const bool quote = wo->rfc4180;
    const int nthreads = wo->threads;
    const rfx_record_io *rec = wo->records;
    rfx_status st = RFX_OK;
    size_t *idx = wo->in_order ? NULL : rfx_write_order(rows, types, syms, rec, nthreads, &st);
    if (st)
        return st;
    if (rows->arity == 0) {
        free(idx);
        return rows->n && !rfx_fwrite(f, "()\n", 3) ? RFX_ERR_IO : RFX_OK;
    }
    size_t chunks = (rows->n + TEXT_CHUNK_ROWS - 1) / TEXT_CHUNK_ROWS;
    int batch = nthreads < 1 ? 1 : nthreads > 64 ? 64 : nthreads;
    if ((size_t)batch > chunks)
        batch = chunks ? (int)chunks : 1;
    text_buf *bufs = rfx_calloc(2 * (size_t)batch, sizeof *bufs);   /* two sets: one made, one written */
    const size_t dlen = strlen(delim);
    text_job j = {rows, idx, types, syms, delim, dlen, quote, rfx_integer_columns(types, rows->arity) && dlen == 1 && !rec, 0, NULL,
                  0, f, fd, NULL, 0, RFX_OK, 0, rec, wo->decimals};
    st = bufs ? RFX_OK : RFX_ERR_NOMEM;
    long long at = 0;
    for (size_t c = 0, k = 0; st == RFX_OK && (c < chunks || j.nwritten); c += (size_t)batch, k++) {
        j.n = c < chunks ? (chunks - c < (size_t)batch ? (int)(chunks - c) : batch) : 0;   /* 0: the last write */
        j.first = c * TEXT_CHUNK_ROWS;
        j.bufs = bufs + (k & 1) * (size_t)batch;
        const int tasks = j.n + (j.nwritten > 0);
        rfx_parallel_for(tasks, tasks, text_task, &j);
        st = j.wst;
        for (int i = 0; i < j.n && st == RFX_OK; i++) {
            if (j.bufs[i].nomem)
                st = RFX_ERR_NOMEM;
            j.bufs[i].at = at;
            at += (long long)j.bufs[i].len;
        }
        j.written = j.bufs;
        j.nwritten = j.n;
    }
    if (st == RFX_ERR_IO)
        errno = j.werr;
    for (size_t i = 0; bufs && i < 2 * (size_t)batch; i++)
        free(bufs[i].p);
    free(bufs);
    free(idx);
    return st;
}

typedef struct order_ctx {
    const uint32_t *data;
    int arity;
    const rfx_prim *types;
    const uint32_t *rank;      /* symbol id -> rank in text order */
} order_ctx;

static int cmp_typed(const void *x, const void *y, void *ctx)
{
    const order_ctx *o = ctx;
    const uint32_t *a = o->data + *(const size_t *)x * (size_t)o->arity;
    const uint32_t *b = o->data + *(const size_t *)y * (size_t)o->arity;
    for (int c = 0; c < o->arity; c += RFX_PRIM_WIDE(o->types[c]) ? 2 : 1) {
        int d = rfx_typed_cmp(o->types, o->rank, NULL, a, b, c);
        if (d)
            return d;
    }
    return 0;
}

/* Finding the output order, in chunks of rows. */
typedef struct order_job {
    const rfx_rows *rows;
    const rfx_prim *types;
    const uint32_t *rank;       /* symbol id -> rank in text order */
    rfx_rows *keys;             /* typed keys, then the row's index */
    int chunks;
    atomic_bool signed_seen;
} order_job;

/* Whether some row of the chunk holds a negative number or float (sign bit set). */
static void find_signed(int i, void *ctx)
{
    order_job *o = ctx;
    const size_t a = (size_t)o->rows->arity, n = o->rows->n;
    const size_t lo = n * (size_t)i / (size_t)o->chunks, hi = n * (size_t)(i + 1) / (size_t)o->chunks;
    uint32_t mask[RFX_MAX_ARITY], all = 0x80000000u;
    for (size_t c = 0; c < a; c++) {
        mask[c] = o->types[c] == RFX_UNSIGNED || o->types[c] == RFX_UNSIGNED64 || o->types[c] == RFX_WORD ? 0 : 0x80000000u;
        all &= mask[c];
    }
    const uint32_t *d = o->rows->data;
    uint32_t seen = 0;
    if (all)   /* every column signed: one flat OR over the rows, which vectorises */
        for (size_t k = lo * a; k < hi * a; k++)
            seen |= d[k];
    else
        for (size_t r = lo; r < hi; r++)
            for (size_t c = 0; c < a; c++)
                seen |= d[r * a + c] & mask[c];
    if (seen & 0x80000000u)
        atomic_store(&o->signed_seen, true);
}

/* Keys whose unsigned order is the typed order: numbers with the sign bit flipped,
 * symbols by rank; the row's index last. */
static void make_keys(int i, void *ctx)
{
    order_job *o = ctx;
    const size_t a = (size_t)o->rows->arity, n = o->rows->n;
    const size_t lo = n * (size_t)i / (size_t)o->chunks, hi = n * (size_t)(i + 1) / (size_t)o->chunks;
    for (size_t r = lo; r < hi; r++) {
        const uint32_t *row = o->rows->data + r * a;
        uint32_t *key = o->keys->data + r * (a + 1);
        for (size_t c = 0; c < a; c++)
            key[c] = o->types[c] == RFX_SYMBOL ? o->rank[row[c]]
                   : o->types[c] == RFX_NUMBER || o->types[c] == RFX_NUMBER64 || o->types[c] == RFX_DATE ||
                     o->types[c] == RFX_DECIMAL
                   ? row[c] ^ 0x80000000u : row[c];
        key[a] = (uint32_t)r;
    }
}

/* Order of output rows: identity when unsigned order already is the typed order. Without
 * floats (whose equal values -0 and +0 are ordered by their bits) the order is a radix sort
 * of typed keys on nthreads threads; with them, a comparison sort. */
size_t *rfx_output_order(const rfx_rows *rows, const rfx_prim *types, const rfx_symtab *syms,
                         int nthreads, rfx_status *st)
{
    /* stored order is unsigned order; it is the typed order unless some number or float
     * column holds a negative value, or a column holds symbols */
    *st = RFX_OK;
    bool syms_used = false, floats = false;
    for (int c = 0; c < rows->arity; c++) {
        syms_used |= types[c] == RFX_SYMBOL;
        floats |= types[c] == RFX_FLOAT || types[c] == RFX_FLOAT64;
    }
    if (rows->n < 2 || rows->arity == 0)
        return NULL;
    nthreads = nthreads < 1 ? 1 : nthreads;
    size_t per = rows->n / (size_t)nthreads < 65536 ? 1 : (size_t)nthreads * 4;
    order_job o = {rows, types, NULL, NULL, (int)per, false};
    if (!syms_used) {
        rfx_parallel_for(o.chunks, nthreads, find_signed, &o);
        if (!atomic_load(&o.signed_seen))
            return NULL;
    }
    size_t *idx = rfx_malloc(sizeof(size_t) * rows->n);
    uint32_t *rank = syms_used ? rfx_symtab_ranks(syms) : NULL;
    if (!idx || (syms_used && !rank)) {
        free(idx);
        free(rank);
        *st = RFX_ERR_NOMEM;
        return NULL;
    }
    if (!floats && rows->n <= UINT32_MAX) {
        rfx_rows keys;
        rfx_rows_init(&keys, rows->arity + 1);
        o.rank = rank;
        o.keys = &keys;
        *st = rfx_rows_reserve(&keys, rows->n);
        if (*st == RFX_OK) {
            keys.n = rows->n;
            rfx_parallel_for(o.chunks, nthreads, make_keys, &o);
            *st = rfx_cpu_sort(&keys, nthreads);
        }
        for (size_t i = 0; *st == RFX_OK && i < rows->n; i++)
            idx[i] = keys.data[i * (size_t)keys.arity + (size_t)rows->arity];
        rfx_rows_free(&keys);
    } else {
        for (size_t i = 0; i < rows->n; i++)
            idx[i] = i;
        order_ctx oc = {rows->data, rows->arity, types, rank};
        qsort_r(idx, rows->n, sizeof(size_t), cmp_typed, &oc);
    }
    free(rank);
    if (*st != RFX_OK) {
        free(idx);
        return NULL;
    }
    return idx;
}

/* The attribute names line of headers=true: the header's second line, its tabs the
 * delimiter. */
static rfx_status put_names(FILE *f, const char *header, const char *delim, bool rfc4180)
{
    const char *names = strchr(header, '\n');
    names = names ? names + 1 : "";
    bool ok = true;
    while (ok) {
        size_t n = strcspn(names, "\t");
        /* attribute names are identifiers, written bare as Soufflé writes them; under RFC
         * 4180 one holding a character of the delimiter is quoted */
        bool quote = false;
        for (size_t i = 0; rfc4180 && i < n && !quote; i++)
            quote = strchr(delim, names[i]) != NULL;
        ok = (!quote || fputc('"', f) != EOF) && rfx_fwrite(f, names, n) && (!quote || fputc('"', f) != EOF);
        if (!names[n])
            break;
        ok = ok && rfx_fwrite(f, delim, strlen(delim));
        names += n + 1;
    }
    return ok && fputc('\n', f) != EOF ? RFX_OK : RFX_ERR_IO;
}

/* The text (names line and rows) gzip-compressed into f: made in memory first. */
static rfx_status write_compressed(FILE *f, const char *header, const rfx_rows *rows, const rfx_prim *types,
                                   const rfx_symtab *syms, const rfx_write_opts *wo, const char *delim)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return RFX_ERR_NOMEM;
    rfx_status st = wo->headers ? put_names(m, header, delim, wo->rfc4180) : RFX_OK;
    if (st == RFX_OK)
        st = write_rows(m, -1, rows, types, syms, delim, wo);
    if (fclose(m) != 0 && st == RFX_OK)
        st = RFX_ERR_NOMEM;
    int fd = st == RFX_OK && fflush(f) == 0 ? dup(fileno(f)) : -1;
    gzFile gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;
    if (st == RFX_OK && !gz) {
        if (fd >= 0)
            close(fd);
        st = RFX_ERR_IO;
    }
    for (size_t at = 0; st == RFX_OK && at < len;) {
        unsigned k = len - at < (1u << 30) ? (unsigned)(len - at) : (1u << 30);
        int w = gzwrite(gz, text + at, k);
        if (w <= 0)
            st = RFX_ERR_IO;
        at += (size_t)(w > 0 ? w : 0);
    }
    if (gz && gzclose(gz) != Z_OK && st == RFX_OK)
        st = RFX_ERR_IO;
    free(text);
    return st;
}

rfx_status rfx_write_relation(const char *path, const char *header, const rfx_rows *rows,
                              const rfx_prim *types, const rfx_symtab *syms, const rfx_write_opts *wo,
                              FILE *out, FILE *err)
{
    const char *delim = wo->delimiter ? wo->delimiter : wo->rfc4180 ? "," : "\t";
    if (strcmp(path, "-") == 0) {
        fprintf(out, "---------------\n%s\n===============\n", header);
        rfx_status st = write_rows(out, -1, rows, types, syms, delim, wo);
        fputs("===============\n", out);
        if (st == RFX_ERR_NOMEM)
            fprintf(err, "rfx: error: out of memory writing relation '%.*s'\n", (int)strcspn(header, "\n"), header);
        else if (st == RFX_ERR_IO)
            fprintf(err, "rfx: error: cannot write relation '%.*s' to standard output\n", (int)strcspn(header, "\n"),
                    header);
        return st;
    }
    rfx_outfile o;
    char why[256];
    if (!rfx_outfile_open(&o, path, true, why, sizeof why)) {
        fprintf(err, "%s: error: cannot write output: %s\n", path, why);
        return RFX_ERR_IO;
    }
    errno = 0;
    rfx_status st;
    if (wo->compress)
        st = write_compressed(o.f, header, rows, types, syms, wo, delim);
    else if (wo->headers) {   /* the rows after the names line: written in order, not at offsets */
        st = put_names(o.f, header, delim, wo->rfc4180);
        if (st == RFX_OK)
            st = write_rows(o.f, -1, rows, types, syms, delim, wo);
    } else
        st = write_rows(o.f, rfx_outfile_fd(&o), rows, types, syms, delim, wo);
    return rfx_outfile_finish(&o, st, errno, path, err);
}
