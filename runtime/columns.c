/* columns.c: bulk transfers between caller arrays (rfx_column: any stride, several value
 * formats) and rows of 32-bit values, each value converted and range-checked on the way.
 * Numbers move on all threads in chunks of rows; texts are interned on one thread (the
 * symbol table is not shared-writable). */
#include "runtime.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ROWS ((size_t)1 << 16)

static bool is_text(rfx_format f)
{
    return f == RFX_FORMAT_UTF8 || f == RFX_FORMAT_UTF8_FIXED || f == RFX_FORMAT_UTF32_FIXED;
}

static size_t format_size(rfx_format f)
{
    switch (f) {
    case RFX_FORMAT_I64: case RFX_FORMAT_U64: case RFX_FORMAT_F64: return 8;
    default: return 4;
    }
}

static const char *format_name(rfx_format f)
{
    static const char *const names[] = {"int32", "uint32", "float32", "int64", "uint64", "float64",
                                        "symbol ids", "UTF-8 texts", "fixed-width UTF-8 texts",
                                        "fixed-width UTF-32 texts"};
    return (unsigned)f < sizeof names / sizeof *names ? names[f] : "an unknown format";
}

/* Whether values of format f go into (or, reading, come out of) a column of type t. */
static bool accepts(rfx_format f, rfx_prim t, bool reading)
{
    switch (t) {
    case RFX_NUMBER:
        return reading ? f == RFX_FORMAT_I32 || f == RFX_FORMAT_I64 || f == RFX_FORMAT_F64
                       : f == RFX_FORMAT_I32 || f == RFX_FORMAT_U32 || f == RFX_FORMAT_I64 || f == RFX_FORMAT_U64;
    case RFX_UNSIGNED:
        return reading ? f == RFX_FORMAT_U32 || f == RFX_FORMAT_U64 || f == RFX_FORMAT_I64 || f == RFX_FORMAT_F64
                       : f == RFX_FORMAT_U32 || f == RFX_FORMAT_I32 || f == RFX_FORMAT_I64 || f == RFX_FORMAT_U64;
    case RFX_FLOAT:
        return reading ? f == RFX_FORMAT_F32 || f == RFX_FORMAT_F64 : f <= RFX_FORMAT_F64;
    case RFX_SYMBOL:
        return f == RFX_FORMAT_SYMBOL || (!reading && is_text(f));
    default:   /* 64-bit values' words: refused before any column is read (engine.c) */
        return false;
    }
    return false;
}

bool rfx_columns_check(const rfx_column *cols, const rfx_prim *types, int arity, size_t n, bool reading,
                       const char *relation, char *msg, size_t cap)
{
    for (int c = 0; c < arity; c++) {
        const rfx_column *col = &cols[c];
        if (!accepts(col->format, types[c], reading)) {
            snprintf(msg, cap, "column %d of %s is %s: it %s %s", c + 1, relation, rfx_prim_name(types[c]),
                     reading ? "cannot be read as" : "does not take", format_name(col->format));
            return false;
        }
        if (n && !col->data && !(col->format == RFX_FORMAT_UTF8 && col->offsets)) {
            snprintf(msg, cap, "column %d of %s: no data", c + 1, relation);
            return false;
        }
        if (col->format == RFX_FORMAT_UTF8 && n && !col->offsets) {
            snprintf(msg, cap, "column %d of %s: UTF-8 texts without offsets", c + 1, relation);
            return false;
        }
        if ((col->format == RFX_FORMAT_UTF8_FIXED || col->format == RFX_FORMAT_UTF32_FIXED) && n &&
            (col->width == 0 || (col->format == RFX_FORMAT_UTF32_FIXED && col->width % 4))) {
            snprintf(msg, cap, "column %d of %s: a fixed text width of %zu bytes", c + 1, relation, col->width);
            return false;
        }
    }
    return true;
}

static ptrdiff_t stride_of(const rfx_column *col)
{
    if (col->stride)
        return col->stride;
    return col->format == RFX_FORMAT_UTF8_FIXED || col->format == RFX_FORMAT_UTF32_FIXED
               ? (ptrdiff_t)col->width
               : (ptrdiff_t)format_size(col->format);
}

/* ---- numbers in -------------------------------------------------------------------------- */
/* The value's 32 bits for a column of type t, or false when it does not fit. */
static inline bool from_int(int64_t v, rfx_prim t, uint32_t *out)
{
    switch (t) {
    case RFX_NUMBER:
        if (v < INT32_MIN || v > INT32_MAX)
            return false;
        *out = (uint32_t)(int32_t)v;
        return true;
    case RFX_UNSIGNED:
        if (v < 0 || v > UINT32_MAX)
            return false;
        *out = (uint32_t)v;
        return true;
    default: {
        float f = (float)v;
        memcpy(out, &f, 4);
        return true;
    }
    }
}

static inline bool from_uint(uint64_t v, rfx_prim t, uint32_t *out)
{
    if (t == RFX_FLOAT) {
        float f = (float)v;
        memcpy(out, &f, 4);
        return true;
    }
    return v <= INT64_MAX && from_int((int64_t)v, t, out);
}

/* Column c of rows [first, first + n) into out (row-major, arity values a row); returns the
 * first row (relative to first) whose value does not fit, or n. */
static size_t column_in(const rfx_column *col, rfx_prim t, size_t first, size_t n, uint32_t *out, int arity)
{
    const ptrdiff_t s = stride_of(col);
    const char *p = (const char *)col->data + (ptrdiff_t)first * s;
    const size_t a = (size_t)arity;
    /* the same 32 bits: copied as they are */
    if ((col->format == RFX_FORMAT_I32 && t == RFX_NUMBER) || (col->format == RFX_FORMAT_U32 && t == RFX_UNSIGNED) ||
        (col->format == RFX_FORMAT_F32 && t == RFX_FLOAT)) {
        for (size_t i = 0; i < n; i++)
            memcpy(&out[i * a], p + (ptrdiff_t)i * s, 4);
        return n;
    }
    for (size_t i = 0; i < n; i++) {
        const char *v = p + (ptrdiff_t)i * s;
        bool ok = true;
        switch (col->format) {
        case RFX_FORMAT_I32: { int32_t x; memcpy(&x, v, 4); ok = from_int(x, t, &out[i * a]); break; }
        case RFX_FORMAT_U32: { uint32_t x; memcpy(&x, v, 4); ok = from_int(x, t, &out[i * a]); break; }
        case RFX_FORMAT_I64: { int64_t x; memcpy(&x, v, 8); ok = from_int(x, t, &out[i * a]); break; }
        case RFX_FORMAT_U64: { uint64_t x; memcpy(&x, v, 8); ok = from_uint(x, t, &out[i * a]); break; }
        case RFX_FORMAT_F64: { double x; memcpy(&x, v, 8); float f = (float)x; memcpy(&out[i * a], &f, 4); break; }
        default: break;   /* F32 into a float column was copied above; texts are not numbers */
        }
        if (!ok)
            return i;
    }
    return n;
}

typedef struct in_job {
    const rfx_column *cols;
    const rfx_prim *types;
    int arity;
    size_t n;
    uint32_t *out;
    _Atomic size_t bad;        /* the first row whose value does not fit (SIZE_MAX: none) */
} in_job;

static void in_task(int task, void *ctx)
{
    in_job *j = ctx;
    size_t first = (size_t)task * CHUNK_ROWS, n = j->n - first < CHUNK_ROWS ? j->n - first : CHUNK_ROWS;
    for (int c = 0; c < j->arity; c++) {
        if (is_text(j->cols[c].format) || j->cols[c].format == RFX_FORMAT_SYMBOL)
            continue;
        size_t k = column_in(&j->cols[c], j->types[c], first, n, j->out + first * (size_t)j->arity + c, j->arity);
        if (k < n) {
            size_t bad = first + k, seen = atomic_load(&j->bad);
            while (bad < seen && !atomic_compare_exchange_weak(&j->bad, &seen, bad))
                ;
        }
    }
}

/* ---- texts in ---------------------------------------------------------------------------- */
/* Appends code point u as UTF-8 (U+DC80-U+DCFF as the byte it escapes); false for a code
 * point that is not a character. */
static bool put_utf8(uint32_t u, char *o, size_t *len)
{
    unsigned char *q = (unsigned char *)o + *len;
    if (u >= 0xDC80 && u <= 0xDCFF) {
        q[0] = (unsigned char)(u - 0xDC00);
        *len += 1;
    } else if (u < 0x80) {
        q[0] = (unsigned char)u;
        *len += 1;
    } else if (u < 0x800) {
        q[0] = (unsigned char)(0xC0 | u >> 6);
        q[1] = (unsigned char)(0x80 | (u & 0x3F));
        *len += 2;
    } else if (u < 0x10000) {
        if (u >= 0xD800 && u <= 0xDFFF)
            return false;
        q[0] = (unsigned char)(0xE0 | u >> 12);
        q[1] = (unsigned char)(0x80 | (u >> 6 & 0x3F));
        q[2] = (unsigned char)(0x80 | (u & 0x3F));
        *len += 3;
    } else if (u < 0x110000) {
        q[0] = (unsigned char)(0xF0 | u >> 18);
        q[1] = (unsigned char)(0x80 | (u >> 12 & 0x3F));
        q[2] = (unsigned char)(0x80 | (u >> 6 & 0x3F));
        q[3] = (unsigned char)(0x80 | (u & 0x3F));
        *len += 4;
    } else
        return false;
    return true;
}

/* Interns column c's texts into out's column; on failure the message names the tuple. */
static bool texts_in(const rfx_column *col, int c, size_t n, uint32_t *out, int arity, rfx_symtab *syms,
                     const char *relation, char *msg, size_t cap)
{
    const ptrdiff_t s = stride_of(col);
    const char *base = col->data;
    char *utf8 = NULL;
    if (col->format == RFX_FORMAT_UTF32_FIXED && !(utf8 = malloc(col->width + 1))) {
        snprintf(msg, cap, "out of memory converting the texts of column %d of %s", c + 1, relation);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const char *t;
        size_t len = 0;
        if (col->format == RFX_FORMAT_UTF8) {
            int64_t from = col->offsets[i], to = col->offsets[i + 1];
            if (from < 0 || to < from) {
                snprintf(msg, cap, "tuple %zu, column %d of %s: text offsets %" PRId64 "..%" PRId64 " out of order",
                         i + 1, c + 1, relation, from, to);
                ok = false;
                break;
            }
            len = (size_t)(to - from);
            t = len ? base + from : "";
        } else if (col->format == RFX_FORMAT_UTF8_FIXED) {
            t = base + (ptrdiff_t)i * s;
            len = col->width;
            while (len && t[len - 1] == '\0')
                len--;
        } else {
            const char *v = base + (ptrdiff_t)i * s;
            size_t cps = col->width / 4;
            uint32_t u;
            while (cps && (memcpy(&u, v + (cps - 1) * 4, 4), u == 0))
                cps--;
            for (size_t k = 0; k < cps; k++) {
                memcpy(&u, v + k * 4, 4);
                if (!put_utf8(u, utf8, &len)) {
                    snprintf(msg, cap, "tuple %zu, column %d of %s: U+%04" PRIX32 " is not a character", i + 1,
                             c + 1, relation, u);
                    ok = false;
                    break;
                }
            }
            t = utf8;
        }
        if (!ok)
            break;
        if (len > UINT32_MAX) {
            snprintf(msg, cap, "tuple %zu, column %d of %s: a text of %zu bytes (at most 4 GB)", i + 1, c + 1,
                     relation, len);
            ok = false;
            break;
        }
        uint32_t id = rfx_symtab_intern(syms, t, len);
        if (id == UINT32_MAX) {
            snprintf(msg, cap, "out of memory interning the texts of column %d of %s", c + 1, relation);
            ok = false;
        }
        out[i * (size_t)arity + (size_t)c] = id;
    }
    free(utf8);
    return ok;
}

static bool ids_in(const rfx_column *col, int c, size_t n, uint32_t *out, int arity, const rfx_symtab *syms,
                   const char *relation, char *msg, size_t cap)
{
    const ptrdiff_t s = stride_of(col);
    const uint32_t count = rfx_symtab_size(syms);
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        memcpy(&id, (const char *)col->data + (ptrdiff_t)i * s, 4);
        if (id >= count) {
            snprintf(msg, cap, "tuple %zu, column %d of %s: %" PRIu32 " is not a symbol id of this engine", i + 1,
                     c + 1, relation, id);
            return false;
        }
        out[i * (size_t)arity + (size_t)c] = id;
    }
    return true;
}

/* The message for a value of row i that does not fit its column. */
static void misfit(const rfx_column *cols, const rfx_prim *types, int arity, size_t i, const char *relation,
                   char *msg, size_t cap)
{
    for (int c = 0; c < arity; c++) {
        const rfx_column *col = &cols[c];
        if (is_text(col->format) || col->format == RFX_FORMAT_SYMBOL)
            continue;
        uint32_t scratch;
        if (column_in(col, types[c], i, 1, &scratch, 1) == 1)
            continue;
        const char *v = (const char *)col->data + (ptrdiff_t)i * stride_of(col);
        char text[32];
        if (col->format == RFX_FORMAT_U64 || col->format == RFX_FORMAT_U32) {
            uint64_t x = 0;
            memcpy(&x, v, format_size(col->format));
            snprintf(text, sizeof text, "%" PRIu64, x);
        } else {
            int64_t x;
            if (col->format == RFX_FORMAT_I32) {
                int32_t y;
                memcpy(&y, v, 4);
                x = y;
            } else
                memcpy(&x, v, 8);
            snprintf(text, sizeof text, "%" PRId64, x);
        }
        snprintf(msg, cap, "tuple %zu, column %d of %s: %s does not fit %s %s column", i + 1, c + 1, relation, text,
                 types[c] == RFX_UNSIGNED ? "an" : "a", rfx_prim_name(types[c]));
        return;
    }
    snprintf(msg, cap, "tuple %zu of %s does not fit its columns", i + 1, relation);
}

bool rfx_columns_to_rows(const rfx_column *cols, const rfx_prim *types, int arity, size_t n, uint32_t *out,
                         rfx_symtab *syms, int nthreads, const char *relation, char *msg, size_t cap)
{
    if (!n || !arity)
        return true;
    /* a row-major array of the relation's own 32-bit values: one copy */
    bool same = true;
    for (int c = 0; c < arity && same; c++)
        same = ((cols[c].format == RFX_FORMAT_I32 && types[c] == RFX_NUMBER) ||
                (cols[c].format == RFX_FORMAT_U32 && types[c] == RFX_UNSIGNED) ||
                (cols[c].format == RFX_FORMAT_F32 && types[c] == RFX_FLOAT)) &&
               stride_of(&cols[c]) == 4 * arity && (const char *)cols[c].data == (const char *)cols[0].data + 4 * c;
    if (same) {
        rfx_parallel_memcpy(out, cols[0].data, n * (size_t)arity * 4, nthreads);
        return true;
    }
    in_job j = {cols, types, arity, n, out, SIZE_MAX};
    size_t tasks = (n + CHUNK_ROWS - 1) / CHUNK_ROWS;
    rfx_parallel_for((int)tasks, nthreads, in_task, &j);
    if (j.bad != SIZE_MAX) {
        misfit(cols, types, arity, j.bad, relation, msg, cap);
        return false;
    }
    for (int c = 0; c < arity; c++) {
        if (is_text(cols[c].format) && !texts_in(&cols[c], c, n, out, arity, syms, relation, msg, cap))
            return false;
        if (cols[c].format == RFX_FORMAT_SYMBOL && !ids_in(&cols[c], c, n, out, arity, syms, relation, msg, cap))
            return false;
    }
    return true;
}

/* ---- out --------------------------------------------------------------------------------- */
typedef struct out_job {
    const uint32_t *rows;
    int arity;
    const size_t *idx;
    size_t n;
    const rfx_prim *types;
    const rfx_column *cols;
} out_job;

static void out_task(int task, void *ctx)
{
    const out_job *j = ctx;
    size_t first = (size_t)task * CHUNK_ROWS, last = j->n - first < CHUNK_ROWS ? j->n : first + CHUNK_ROWS;
    const size_t a = (size_t)j->arity;
    for (size_t c = 0; c < a; c++) {
        const rfx_column *col = &j->cols[c];
        const ptrdiff_t s = stride_of(col);
        char *p = col->data;
        const bool wide = format_size(col->format) == 8;
        for (size_t i = first; i < last; i++) {
            uint32_t v = j->rows[(j->idx ? j->idx[i] : i) * a + c];
            char *q = p + (ptrdiff_t)i * s;
            if (!wide) {   /* I32, U32, F32, SYMBOL: the stored bits */
                memcpy(q, &v, 4);
                continue;
            }
            int64_t x;
            double d;
            switch (col->format) {
            case RFX_FORMAT_I64:
                x = j->types[c] == RFX_NUMBER ? (int64_t)(int32_t)v : (int64_t)v;
                memcpy(q, &x, 8);
                break;
            case RFX_FORMAT_U64: x = (int64_t)v; memcpy(q, &x, 8); break;
            default:
                if (j->types[c] == RFX_FLOAT) {
                    float f;
                    memcpy(&f, &v, 4);
                    d = f;
                } else
                    d = j->types[c] == RFX_NUMBER ? (double)(int32_t)v : (double)v;
                memcpy(q, &d, 8);
            }
        }
    }
}

void rfx_rows_to_columns(const uint32_t *rows, int arity, const size_t *idx, size_t n, const rfx_prim *types,
                         const rfx_column *cols, int nthreads)
{
    if (!n || !arity)
        return;
    bool same = !idx;
    for (int c = 0; c < arity && same; c++)
        same = format_size(cols[c].format) == 4 && stride_of(&cols[c]) == 4 * arity &&
               (char *)cols[c].data == (char *)cols[0].data + 4 * c;
    if (same) {
        rfx_parallel_memcpy(cols[0].data, rows, n * (size_t)arity * 4, nthreads);
        return;
    }
    out_job j = {rows, arity, idx, n, types, cols};
    rfx_parallel_for((int)((n + CHUNK_ROWS - 1) / CHUNK_ROWS), nthreads, out_task, &j);
}
