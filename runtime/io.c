/* io.c: reading facts and edge lists (plain or gzip, CRLF or LF, last line with or
 * without a newline), and writing relations the way Soufflé does, atomically. */
#include "runtime.h"
#include "fault.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- line reader over zlib (reads plain files transparently) ------------------------- */
typedef struct line_reader {
    gzFile gz;
    char *buf;
    size_t cap, len, pos;
    bool eof;
    long line;
} line_reader;

/* Returns the next line (NUL-terminated, without CR/LF) or NULL at end / error. */
static char *next_line(line_reader *r, size_t *len, bool *err)
{
    for (;;) {
        char *start = r->buf + r->pos;
        char *nl = memchr(start, '\n', r->len - r->pos);
        if (nl || (r->eof && r->pos < r->len)) {
            char *end = nl ? nl : r->buf + r->len;
            r->pos = (size_t)(end - r->buf) + (nl ? 1 : 0);
            if (end > start && end[-1] == '\r')
                end--;
            *end = 0;
            *len = (size_t)(end - start);
            r->line++;
            return start;
        }
        if (r->eof)
            return NULL;
        /* keep the partial line, read more */
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
        if (r->cap - r->len < 65536) {
            size_t nc = r->cap * 2;
            char *b = rfx_realloc(r->buf, nc + 1);
            if (!b) {
                *err = true;
                return NULL;
            }
            r->buf = b;
            r->cap = nc;
        }
        int got = gzread(r->gz, r->buf + r->len, (unsigned)(r->cap - r->len));
        int zerr = Z_OK;
        if (got == 0)
            gzerror(r->gz, &zerr);
        if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
            /* includes a truncated gzip stream, which zlib reports only at its end */
            *err = true;
            return NULL;
        }
        if (got == 0)
            r->eof = true;
        r->len += (size_t)got;
        r->buf[r->len] = 0;
    }
}

/* ---- field parsing -------------------------------------------------------------------- */
static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == n)
        return false;
    uint64_t v = 0;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        for (i += 2; i < n; i++) {
            char c = s[i];
            int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
            if (d < 0 || v > 0xFFFFFFFFull)
                return false;
            v = v * 16 + (uint64_t)d;
        }
    } else {
        for (; i < n; i++) {
            if (s[i] < '0' || s[i] > '9' || v > 0xFFFFFFFFFull)
                return false;
            v = v * 10 + (uint64_t)(s[i] - '0');
        }
    }
    if (v > 0x1FFFFFFFFull)
        v = 0x1FFFFFFFFull;   /* out of any 32-bit range; reported by the caller */
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* Converts one field; returns an error text or NULL. */
static const char *parse_field(const char *s, size_t n, rfx_prim prim, rfx_symtab *syms, uint32_t *out)
{
    switch (prim) {
    case RFX_NUMBER: {
        int64_t v;
        if (!parse_i64(s, n, &v))
            return "is not a number";
        if (v < INT32_MIN || v > INT32_MAX)
            return "is out of range for number (32-bit signed)";
        *out = (uint32_t)(int32_t)v;
        return NULL;
    }
    case RFX_UNSIGNED: {
        int64_t v;
        if (!parse_i64(s, n, &v))
            return "is not an unsigned number";
        if (v < 0 || v > UINT32_MAX)
            return "is out of range for unsigned (32-bit)";
        *out = (uint32_t)v;
        return NULL;
    }
    case RFX_FLOAT: {
        char tmp[64];
        if (n == 0 || n >= sizeof tmp)
            return "is not a float";
        rfx_memcpy(tmp, s, n);
        tmp[n] = 0;
        char *end;
        errno = 0;
        float f = strtof(tmp, &end);
        if (*end || end == tmp)
            return "is not a float";
        rfx_memcpy(out, &f, 4);
        return NULL;
    }
    case RFX_SYMBOL: {
        uint32_t id = rfx_symtab_intern(syms, s, n);
        if (id == UINT32_MAX)
            return "could not be stored (out of memory)";
        *out = id;
        return NULL;
    }
    }
    return "has an unknown type";
}

static void show_field(FILE *err, const char *s, size_t n)
{
    fputc('\'', err);
    fwrite(s, 1, n > 40 ? 40 : n, err);
    if (n > 40)
        fputs("...", err);
    fputc('\'', err);
}

rfx_status rfx_read_facts(const char *path, const rfx_prim *types, rfx_symtab *syms,
                          const rfx_read_opts *ro, rfx_rows *rows, FILE *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(err, "%s: error: cannot open facts file: %s\n", path, strerror(errno));
        return RFX_ERR_IO;
    }
    if (S_ISDIR(sb.st_mode)) {
        fprintf(err, "%s: error: is a directory, not a facts file\n", path);
        return RFX_ERR_IO;
    }
    line_reader r = {0};
    r.gz = gzopen(path, "rb");
    if (!r.gz) {
        fprintf(err, "%s: error: cannot open facts file: %s\n", path, strerror(errno ? errno : EIO));
        return RFX_ERR_IO;
    }
    gzbuffer(r.gz, 1 << 17);
    r.cap = 1 << 17;          /* grows for long lines; small files stay cheap */
    r.buf = rfx_malloc(r.cap + 1);
    int a = rows->arity;
    uint32_t *tuple = rfx_malloc(sizeof(uint32_t) * (size_t)(a + 1));
    rfx_status st = RFX_OK;
    if (!r.buf || !tuple) {
        st = RFX_ERR_NOMEM;
        fprintf(err, "%s: error: out of memory reading facts\n", path);
        goto out;
    }
    r.buf[0] = 0;
    char delim = ro && ro->delimiter ? ro->delimiter : '\t';
    bool edges = ro && ro->edge_list;
    long skipped = 0, first_skipped = 0;
    for (;;) {
        size_t len;
        bool rerr = false;
        char *line = next_line(&r, &len, &rerr);
        if (rerr) {
            int zerr = 0;
            const char *msg = gzerror(r.gz, &zerr);
            fprintf(err, "%s:%ld: error: cannot read: %s\n", path, r.line + 1,
                    zerr == Z_ERRNO ? strerror(errno) : zerr == Z_MEM_ERROR ? "out of memory"
                    : zerr == Z_BUF_ERROR ? "compressed file is truncated" : msg ? msg : "read error");
            st = zerr == Z_MEM_ERROR ? RFX_ERR_NOMEM : RFX_ERR_IO;
            goto out;
        }
        if (!line)
            break;
        if (edges) {
            size_t i = 0;
            while (i < len && (line[i] == ' ' || line[i] == '\t'))
                i++;
            if (i == len || line[i] == '#' || line[i] == '%')
                continue;
        } else if (len == 0 && a > 0) {
            fprintf(err, "%s:%ld: error: empty line, expected %d column%s\n", path, r.line, a, a == 1 ? "" : "s");
            st = RFX_ERR_INPUT;
            goto out;
        }
        if (a == 0) {
            /* a nullary relation's fact is an empty line or "()" */
            rows->n = 1;
            continue;
        }
        int col = 0;
        size_t i = 0;
        bool skip = false;
        while (col < a) {
            size_t s, e;
            if (edges) {
                while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == ','))
                    i++;
                s = i;
                while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != ',')
                    i++;
                e = i;
                if (s == e)
                    break;
            } else {
                if (col > 0) {
                    if (i >= len || line[i] != delim)
                        break;
                    i++;
                }
                s = i;
                const char *d = memchr(line + i, delim, len - i);
                e = d ? (size_t)(d - line) : len;
                i = e;
            }
            const char *why = parse_field(line + s, e - s, types[col], syms, &tuple[col]);
            if (why) {
                if (edges && col < 2 && types[col] != RFX_SYMBOL) {
                    /* SNAP headers sometimes spill onto lines without '#' */
                    skip = true;
                    break;
                }
                fprintf(err, "%s:%ld: error: column %d: ", path, r.line, col + 1);
                show_field(err, line + s, e - s);
                fprintf(err, " %s\n", why);
                st = why[0] == 'c' ? RFX_ERR_NOMEM : RFX_ERR_INPUT;
                goto out;
            }
            col++;
        }
        if (skip) {
            if (!skipped++)
                first_skipped = r.line;
            continue;
        }
        if (col < a || (!edges && i < len)) {
            int found = col;
            if (!edges && i < len)
                for (found = a; i < len; i++)
                    found += line[i] == delim;
            fprintf(err, "%s:%ld: error: expected %d column%s, found %d\n", path, r.line, a, a == 1 ? "" : "s", found);
            st = RFX_ERR_INPUT;
            goto out;
        }
        if ((st = rfx_rows_push(rows, tuple)) != RFX_OK) {
            fprintf(err, "%s:%ld: error: out of memory reading facts\n", path, r.line);
            goto out;
        }
    }
    if (skipped)
        fprintf(err, "%s:%ld: warning: skipped %ld line%s that do%s not start with numbers\n", path,
                first_skipped, skipped, skipped == 1 ? "" : "s", skipped == 1 ? "es" : "");
out:
    gzclose(r.gz);
    free(r.buf);
    free(tuple);
    return st;
}

/* ---- output ------------------------------------------------------------------------------- */
typedef struct out_buf {
    FILE *f;
    char buf[1 << 16];
    size_t len;
    bool failed;
} out_buf;

static void ob_flush(out_buf *o)
{
    if (o->len && !o->failed && !rfx_fwrite(o->f, o->buf, o->len))
        o->failed = true;
    o->len = 0;
}

static void ob_put(out_buf *o, const char *s, size_t n)
{
    if (o->len + n > sizeof o->buf)
        ob_flush(o);
    if (n > sizeof o->buf) {
        if (!o->failed && !rfx_fwrite(o->f, s, n))
            o->failed = true;
        return;
    }
    rfx_memcpy(o->buf + o->len, s, n);
    o->len += n;
}

static void put_value(out_buf *o, rfx_prim prim, uint32_t v, const rfx_symtab *syms)
{
    char tmp[48];
    int n;
    switch (prim) {
    case RFX_NUMBER: n = snprintf(tmp, sizeof tmp, "%d", (int32_t)v); break;
    case RFX_UNSIGNED: n = snprintf(tmp, sizeof tmp, "%u", v); break;
    case RFX_FLOAT: {
        float f;
        rfx_memcpy(&f, &v, 4);
        n = snprintf(tmp, sizeof tmp, "%g", (double)f);
        break;
    }
    default: {
        const char *s = rfx_symtab_str(syms, v);
        ob_put(o, s, strlen(s));
        return;
    }
    }
    ob_put(o, tmp, (size_t)n);
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
    for (int c = 0; c < o->arity; c++) {
        if (a[c] == b[c])
            continue;
        switch (o->types[c]) {
        case RFX_NUMBER: return (int32_t)a[c] < (int32_t)b[c] ? -1 : 1;
        case RFX_FLOAT: {
            float fa, fb;
            rfx_memcpy(&fa, &a[c], 4);
            rfx_memcpy(&fb, &b[c], 4);
            if (fa != fb)
                return fa < fb ? -1 : 1;
            return a[c] < b[c] ? -1 : 1;
        }
        case RFX_SYMBOL: return o->rank[a[c]] < o->rank[b[c]] ? -1 : 1;
        default: return a[c] < b[c] ? -1 : 1;
        }
    }
    return 0;
}

/* Order of output rows: identity when unsigned order already is the typed order. */
size_t *rfx_output_order(const rfx_rows *rows, const rfx_prim *types, const rfx_symtab *syms,
                         rfx_status *st)
{
    /* stored order is unsigned order; it is the typed order unless some number or float
     * column holds a negative value, or a column holds symbols */
    *st = RFX_OK;
    bool plain = true;
    for (int c = 0; c < rows->arity && plain; c++) {
        if (types[c] == RFX_SYMBOL)
            plain = false;
        else if (types[c] != RFX_UNSIGNED)
            for (size_t i = 0; i < rows->n && plain; i++)
                plain = !(rows->data[i * (size_t)rows->arity + c] & 0x80000000u);
    }
    if (plain || rows->n < 2)
        return NULL;
    size_t *idx = rfx_malloc(sizeof(size_t) * rows->n);
    uint32_t *rank = NULL;
    bool syms_used = false;
    for (int c = 0; c < rows->arity; c++)
        syms_used |= types[c] == RFX_SYMBOL;
    if (syms_used)
        rank = rfx_symtab_ranks(syms);
    if (!idx || (syms_used && !rank)) {
        free(idx);
        free(rank);
        *st = RFX_ERR_NOMEM;
        return NULL;
    }
    for (size_t i = 0; i < rows->n; i++)
        idx[i] = i;
    order_ctx o = {rows->data, rows->arity, types, rank};
    qsort_r(idx, rows->n, sizeof(size_t), cmp_typed, &o);
    free(rank);
    return idx;
}

static rfx_status write_rows(out_buf *o, const rfx_rows *rows, const rfx_prim *types,
                             const rfx_symtab *syms, char delim)
{
    rfx_status st;
    size_t *idx = rfx_output_order(rows, types, syms, &st);
    if (st)
        return st;
    int a = rows->arity;
    if (a == 0 && rows->n)
        ob_put(o, "()\n", 3);
    for (size_t i = 0; a && i < rows->n && !o->failed; i++) {
        const uint32_t *t = rows->data + (idx ? idx[i] : i) * (size_t)a;
        for (int c = 0; c < a; c++) {
            if (c)
                ob_put(o, &delim, 1);
            put_value(o, types[c], t[c], syms);
        }
        ob_put(o, "\n", 1);
    }
    ob_flush(o);
    free(idx);
    return o->failed ? RFX_ERR_IO : RFX_OK;
}

rfx_status rfx_write_relation(const char *path, const char *name, const rfx_rows *rows,
                              const rfx_prim *types, const rfx_symtab *syms, char delimiter,
                              FILE *out, FILE *err)
{
    out_buf *o = rfx_malloc(sizeof *o);
    if (!o) {
        fprintf(err, "%s: error: out of memory writing output\n", path);
        return RFX_ERR_NOMEM;
    }
    o->len = 0;
    o->failed = false;
    if (strcmp(path, "-") == 0) {
        o->f = out;
        fprintf(out, "---------------\n%s\n===============\n", name);
        rfx_status st = write_rows(o, rows, types, syms, delimiter);
        fputs("===============\n", out);
        free(o);
        if (st == RFX_ERR_IO)
            fprintf(err, "rfx: error: cannot write relation '%s' to standard output\n", name);
        return st;
    }
    size_t n = strlen(path);
    char *tmp = rfx_malloc(n + 16);
    if (!tmp) {
        free(o);
        fprintf(err, "%s: error: out of memory writing output\n", path);
        return RFX_ERR_NOMEM;
    }
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(err, "%s: error: cannot write output: %s\n", path, strerror(errno));
        free(tmp);
        free(o);
        return RFX_ERR_IO;
    }
    fchmod(fd, 0644);
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        close(fd);
        unlink(tmp);
        fprintf(err, "%s: error: cannot write output: %s\n", path, strerror(errno));
        free(tmp);
        free(o);
        return RFX_ERR_IO;
    }
    rfx_status st = write_rows(o, rows, types, syms, delimiter);
    int saved = errno;
    bool closed = rfx_fclose(o->f);
    if (st == RFX_OK && !closed) {
        st = RFX_ERR_IO;
        saved = errno;
    }
    if (st == RFX_OK && rename(tmp, path) != 0) {
        st = RFX_ERR_IO;
        saved = errno;
    }
    if (st != RFX_OK) {
        unlink(tmp);
        if (st == RFX_ERR_NOMEM)
            fprintf(err, "%s: error: out of memory writing output\n", path);
        else
            fprintf(err, "%s: error: cannot write output: %s\n", path, saved ? strerror(saved) : "write failed");
    }
    free(tmp);
    free(o);
    return st;
}
