/* io.c: reading facts and edge lists (plain or gzip, CRLF or LF, last line with or
 * without a newline), and writing relations the way Soufflé does, atomically. */
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
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- field parsing (a value's text: value_text.c) ------------------------------------ */
/* Length of the plain decimal (at most 10 digits, '-' for a number) that s starts with when
 * it is in prim's range, its value in *out; 0 when it is not one (hex, '+', too long, out
 * of range or not a number: parse_field and its messages decide). */
static size_t scan_decimal(const char *s, size_t n, rfx_prim prim, uint32_t *out)
{
    size_t k = prim == RFX_NUMBER && n && s[0] == '-', d0 = k;
    uint64_t v = 0;
    while (k < n && k - d0 < 10 && (unsigned char)(s[k] - '0') < 10)
        v = v * 10 + (uint64_t)(s[k++] - '0');
    if (k == d0 || (k < n && (unsigned char)(s[k] - '0') < 10))
        return 0;
    if (v > (prim == RFX_UNSIGNED ? 0xFFFFFFFFull : d0 ? 0x80000000ull : 0x7FFFFFFFull))
        return 0;
    *out = d0 ? 0u - (uint32_t)v : (uint32_t)v;
    return k;
}

/* ---- facts files ---------------------------------------------------------------------- */
/* The file is read in blocks of whole lines; a block's lines are cut into pieces parsed on
 * the run's threads (one thread when a column holds symbols: the symbol table is not shared),
 * each into its place in the rows. */
enum { READ_BLOCK = 1 << 24, PIECE_MIN = 1 << 16 };

typedef struct piece {
    const char *p, *end;        /* whole lines */
    uint32_t *out;              /* room for a row a line */
    size_t got;                 /* rows parsed (a nullary relation: lines that are facts) */
    long lines;                 /* lines counted, then lines read, the failing one included */
    long skipped, first_skipped;
    rfx_status st;
    char why[200];              /* what follows "file:line: error: " when st != RFX_OK */
    rfx_symlocal *local;        /* its symbols where pieces are read on several threads (the
                                 * rows hold their local ids until they are merged) */
    const uint32_t *ids;        /* merged: local id -> the table's */
} piece;

typedef struct read_job {
    const rfx_prim *types;
    rfx_symtab *syms;
    const char *delim;          /* the separator, dlen bytes */
    size_t dlen;
    bool edges;
    int arity;
    piece *pieces;
    bool plain;                 /* every column a number or unsigned: plain_line first */
    const rfx_record_io *rec;   /* record columns (else NULL) */
    const rfx_decimal_cols *dec;   /* decimal columns (else NULL) */
    const bool *unread;         /* columns stored as unread_value, not parsed (else NULL) */
    uint32_t unread_value;
} read_job;

/* Whether every one of the arity columns holds numbers or unsigned values (text without
 * symbols or floats, which the readers and writers take a faster way through). */
static bool integer_columns(const rfx_prim *types, int arity)
{
    for (int c = 0; c < arity; c++)
        if (types[c] != RFX_NUMBER && types[c] != RFX_UNSIGNED)
            return false;
    return true;
}

/* Column col's field number in a file (from 1): the low word of a 64-bit value (the column
 * after its high word) has no field of its own. field_of(types, arity) - 1 fields a line. */
static int field_of(const rfx_prim *types, int col)
{
    int f = 1;
    for (int c = 0; c < col; c++)
        f += types[c] != RFX_WORD;
    return f;
}

static void quote_field(char *out, size_t cap, const char *s, size_t n)
{
    snprintf(out, cap, "'%.*s%s'", (int)(n > 40 ? 40 : n), s, n > 40 ? "..." : "");
}

/* What separates an edge list's fields. */
static inline bool edge_sep(char c)
{
    return c == ' ' || c == '\t' || c == ',';
}

/* Whether the separator starts at line[i] (i < len). */
static inline bool at_delim(const read_job *j, const char *line, size_t i, size_t len)
{
    return j->dlen == 1 ? line[i] == j->delim[0] : len - i >= j->dlen && memcmp(line + i, j->delim, j->dlen) == 0;
}

/* Where the next separator at or after i starts, or len. */
static size_t find_delim(const read_job *j, const char *line, size_t i, size_t len)
{
    const char *d = j->dlen == 1 ? memchr(line + i, j->delim[0], len - i) : memmem(line + i, len - i, j->delim, j->dlen);
    return d ? (size_t)(d - line) : len;
}

/* A symbol's id: the piece's own while pieces are read in parallel. */
static uint32_t intern_field(const read_job *j, piece *p, const char *s, size_t n)
{
    return p->local ? rfx_symlocal_intern(p->local, s, n) : rfx_symtab_intern(j->syms, s, n);
}

/* Field `col` of a row (its text s, n bytes) into out: a record, a decimal or a value. */
static const char *parse_field(const read_job *j, piece *p, int col, const char *s, size_t n, uint32_t *out)
{
    if (j->unread && j->unread[col]) {   /* a column no rule reads: its text is not kept */
        *out = j->unread_value;
        return NULL;
    }
    if (j->types[col] == RFX_SYMBOL) {
        *out = intern_field(j, p, s, n);
        return *out == UINT32_MAX ? "could not be stored (out of memory)" : NULL;
    }
    if (j->rec && rfx_record_column(j->rec->prog, j->rec->coltypes[col]))
        return rfx_record_parse(j->rec, j->rec->coltypes[col], s, n, out);
    if (j->types[col] == RFX_DECIMAL && j->dec)
        return rfx_parse_decimal(s, n, j->dec->precision[col], j->dec->scale[col], out);
    return rfx_parse_value(s, n, j->types[col], j->syms, out);
}

/* Parses one line into tuple: RFX_OK, an error (its text in p->why), or LINE_SKIPPED. */
enum { LINE_SKIPPED = -1 };
static int parse_line(const read_job *j, piece *p, const char *line, size_t len, uint32_t *tuple)
{
    const int a = j->arity;
    if (j->edges) {
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i == len || line[i] == '#' || line[i] == '%')
            return LINE_SKIPPED;
    } else if (len == 0 && a == 1 && j->types[0] == RFX_SYMBOL) {
        tuple[0] = j->unread && j->unread[0] ? j->unread_value : intern_field(j, p, "", 0);   /* the empty
                                                                                      * symbol, as Soufflé reads it */
        if (tuple[0] != UINT32_MAX)
            return RFX_OK;
        snprintf(p->why, sizeof p->why, "out of memory");
        return RFX_ERR_NOMEM;
    } else if (len == 0 && a > 0) {
        int fields = field_of(j->types, a) - 1;
        snprintf(p->why, sizeof p->why, "empty line, expected %d column%s", fields, fields == 1 ? "" : "s");
        return RFX_ERR_INPUT;
    }
    if (a == 0)
        return RFX_OK;   /* a nullary relation's fact is an empty line or "()" */
    int col = 0;
    size_t i = 0;
    while (col < a) {
        if (j->edges)
            while (i < len && edge_sep(line[i]))
                i++;
        else if (col > 0) {
            if (i >= len || !at_delim(j, line, i, len))
                break;
            i += j->dlen;
        }
        /* a plain decimal ending at the field's end is read in one pass */
        const rfx_prim t = j->types[col];
        size_t k = t == RFX_NUMBER || t == RFX_UNSIGNED ? scan_decimal(line + i, len - i, t, &tuple[col]) : 0;
        if (k && (i + k == len || (j->edges ? edge_sep(line[i + k]) : at_delim(j, line, i + k, len)))) {
            i += k;
            col++;
            continue;
        }
        size_t s = i, e;
        if (j->edges) {
            while (i < len && !edge_sep(line[i]))
                i++;
            e = i;
            if (s == e)
                break;
        } else
            i = e = find_delim(j, line, i, len);
        const char *why = parse_field(j, p, col, line + s, e - s, &tuple[col]);
        if (why) {
            if (j->edges && col < 2 && j->types[col] != RFX_SYMBOL && !strstr(why, "out of range")) {
                /* SNAP headers sometimes spill onto lines without '#' (a number too large
                 * for its column is no header: an error) */
                if (!p->skipped++)
                    p->first_skipped = p->lines;
                return LINE_SKIPPED;
            }
            char q[64];
            quote_field(q, sizeof q, line + s, e - s);
            snprintf(p->why, sizeof p->why, "column %d: %s %s", field_of(j->types, col), q, why);
            return why[0] == 'c' ? RFX_ERR_NOMEM : RFX_ERR_INPUT;
        }
        col += RFX_PRIM_WIDE(t) ? 2 : 1;   /* a 64-bit value fills its low word's column too */
    }
    if (col < a) {   /* columns past the relation's are ignored, as Soufflé does */
        int fields = field_of(j->types, a) - 1;
        snprintf(p->why, sizeof p->why, "expected %d column%s, found %d", fields, fields == 1 ? "" : "s",
                 field_of(j->types, col) - 1);
        return RFX_ERR_INPUT;
    }
    return RFX_OK;
}

/* 16 bytes a step where SSE2 is there, each byte's match added into a byte counter that is
 * summed every 255 steps: 11 GB/s a core against 4 for the compiler's vectors of the plain
 * loop (reading 10.3 GB of facts on 16 threads: 4.1 -> 3.7 s). */
static long count_newlines(const char *s, size_t n)
{
    long lines = 0;
    size_t i = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (n - i >= 16) {
        size_t stop = n - i >= 16 * 255 ? i + 16 * 255 : i + (n - i) / 16 * 16;
        __m128i counts = zero;
        for (; i < stop; i += 16)
            counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i)), nl));
        __m128i sums = _mm_sad_epu8(counts, zero);
        lines += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums));
    }
#endif
    for (; i < n; i++)
        lines += s[i] == '\n';
    return lines;
}

/* A row's room a line: the piece's newlines, and its unfinished last line at the end. */
static void count_piece_lines(int k, void *ctx)
{
    piece *p = &((read_job *)ctx)->pieces[k];
    p->lines = count_newlines(p->p, (size_t)(p->end - p->p)) + (p->end > p->p && p->end[-1] != '\n');
}

/* A line of plain decimals only (as scan_decimal reads them), each but the last followed by
 * its separator (facts: the delimiter; edge lists: a run of spaces, tabs or commas) and the
 * last by the line's end: read in one pass, with no search for the newline first. Returns
 * the bytes up to the next line, or 0 for any other line (parse_line then reads it, and says
 * what is wrong with it). */
static size_t plain_line(const read_job *j, const char *s, const char *end, uint32_t *row)
{
    const char *q = s;
    for (int c = 0; c < j->arity; c++) {
        size_t k = scan_decimal(q, (size_t)(end - q), j->types[c], &row[c]);
        if (!k)
            return 0;
        q += k;
        if (c + 1 == j->arity)
            break;
        if (q == end || (j->edges ? !edge_sep(*q) : *q != j->delim[0]))
            return 0;
        q++;
        while (j->edges && q < end && edge_sep(*q))
            q++;
    }
    if (q < end && *q == '\r')
        q++;
    if (q == end)
        return (size_t)(q - s);
    return *q == '\n' ? (size_t)(q + 1 - s) : 0;
}

static void parse_piece(int k, void *ctx)
{
    read_job *j = ctx;
    piece *p = &j->pieces[k];
    uint32_t nullary[1];
    p->lines = 0;
    for (const char *line = p->p; line < p->end;) {
        size_t taken = j->plain ? plain_line(j, line, p->end, p->out + p->got * (size_t)j->arity) : 0;
        if (taken) {
            p->lines++;
            p->got++;
            line += taken;
            continue;
        }
        const char *nl = memchr(line, '\n', (size_t)(p->end - line));
        const char *end = nl ? nl : p->end;
        const char *next = nl ? nl + 1 : p->end;
        if (end > line && end[-1] == '\r')
            end--;
        p->lines++;
        uint32_t *row = j->arity ? p->out + p->got * (size_t)j->arity : nullary;
        int r = parse_line(j, p, line, (size_t)(end - line), row);
        line = next;
        if (r == RFX_OK)
            p->got++;
        else if (r != LINE_SKIPPED) {
            p->st = (rfx_status)r;
            return;
        }
    }
}

/* A block of the file: whole lines, then the start of the next one. */
typedef struct block {
    char *buf;
    size_t cap, len;
} block;

typedef struct reader {
    gzFile gz;
    bool eof, nomem;
    int zerr, err_no;           /* a failed read's zlib error and errno */
    long long left;             /* bytes of a slice still to read; -1: to the end */
} reader;

/* b's buffer grown to cap bytes; false (r->nomem) when there is no memory for it. */
static bool grow_block(reader *r, block *b, size_t cap)
{
    char *p = rfx_realloc(b->buf, cap);
    if (!p)
        return !(r->nomem = true);
    b->buf = p;
    b->cap = cap;
    return true;
}

/* Reads after b's first len bytes until b is full and holds a newline, or the file ends;
 * b grows to READ_BLOCK, and past it for a longer line. False on a failed read (r->zerr,
 * r->err_no) or out of memory (r->nomem). */
static bool fill_block(reader *r, block *b)
{
    while (!r->eof) {
        bool full = b->cap - b->len < 65536;
        if (full && (b->cap < READ_BLOCK || !memchr(b->buf, '\n', b->len))) {
            if (!grow_block(r, b, b->cap ? b->cap * 2 : 1 << 17))
                return false;
            full = false;
        }
        if (full)
            return true;
        size_t want = b->cap - b->len < (1u << 30) ? b->cap - b->len : (1u << 30);
        if (r->left >= 0 && (long long)want > r->left)
            want = (size_t)r->left;
        if (want == 0) {   /* the slice's end */
            r->eof = true;
            break;
        }
        errno = 0;
        int got = gzread(r->gz, b->buf + b->len, (unsigned)want);
        int zerr = Z_OK;
        if (got == 0)
            gzerror(r->gz, &zerr);
        if (got < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
            /* includes a truncated gzip stream, which zlib reports only at its end */
            r->err_no = errno;
            gzerror(r->gz, &r->zerr);
            if (r->zerr == Z_OK)
                r->zerr = Z_ERRNO;
            return false;
        }
        if (got == 0)
            r->eof = true;
        b->len += (size_t)got;
        if (r->left >= 0)
            r->left -= got;
    }
    return true;
}

/* ---- slices ---------------------------------------------------------------------------------- */
bool rfx_facts_sliceable(const char *path, long long min_bytes)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return false;
    struct stat sb;
    unsigned char magic[2] = {0, 0};
    bool ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (long long)sb.st_size >= min_bytes &&
              pread(fd, magic, 2, 0) == 2 && !(magic[0] == 0x1f && magic[1] == 0x8b);
    close(fd);
    return ok;
}

/* The first line start at or after byte at: the byte after the first newline at or after
 * at - 1 (0 for 0; size where there is none). -1 where the file cannot be read. */
static long long line_start_from(int fd, long long at, long long size)
{
    if (at <= 0)
        return 0;
    char buf[1 << 16];
    for (long long pos = at - 1; pos < size;) {
        ssize_t got = pread(fd, buf, sizeof buf, (off_t)pos);
        if (got <= 0)
            return -1;
        const char *nl = memchr(buf, '\n', (size_t)got);
        if (nl)
            return pos + (nl - buf) + 1;
        pos += got;
    }
    return size;
}

/* The newlines before byte end: the line number a slice's lines count from. */
static long lines_before(const char *path, long long end);

/* A message's line: a slice's lines are counted from its start, and the lines before it
 * only when a message needs them. */
typedef struct slice_lines {
    const char *path;
    long long start;
    long base;                  /* -1: not counted yet */
} slice_lines;

static long at_line(slice_lines *s, long line)
{
    if (s->base < 0)
        s->base = s->start > 0 ? lines_before(s->path, s->start) : 0;
    return line + s->base;
}

static long lines_before(const char *path, long long end)
{
    int fd = open(path, O_RDONLY);
    char buf[1 << 16];
    long n = 0;
    for (long long pos = 0; fd >= 0 && pos < end;) {
        size_t want = end - pos < (long long)sizeof buf ? (size_t)(end - pos) : sizeof buf;
        ssize_t got = pread(fd, buf, want, (off_t)pos);
        if (got <= 0)
            break;
        n += count_newlines(buf, (size_t)got);
        pos += got;
    }
    if (fd >= 0)
        close(fd);
    return n;
}

/* The next block is read while the current one is parsed: the read is one more task. */
typedef struct block_job {
    read_job *parse;
    int pieces;
    reader *r;
    const char *tail;           /* the current block's unfinished last line */
    size_t tail_len;
    block *next;
    bool read_ok;
} block_job;

static void block_task(int k, void *ctx)
{
    block_job *b = ctx;
    if (k < b->pieces) {
        parse_piece(k, b->parse);
        return;
    }
    block *nb = b->next;
    nb->len = 0;
    if (nb->cap < b->tail_len + 65536 && !grow_block(b->r, nb, b->tail_len + (1 << 17))) {
        b->read_ok = false;
        return;
    }
    rfx_memcpy(nb->buf, b->tail, b->tail_len);
    nb->len = b->tail_len;
    b->read_ok = fill_block(b->r, nb);
}

typedef struct remap_job {
    read_job *parse;
    const int *symcols;
    int nsym;
} remap_job;

/* A piece's rows with the table's ids for its own. */
static void remap_piece(int k, void *ctx)
{
    const remap_job *m = ctx;
    piece *p = &m->parse->pieces[k];
    const uint32_t *ids = p->ids;
    const size_t a = (size_t)m->parse->arity;
    for (size_t i = 0; i < p->got; i++)
        for (int c = 0; c < m->nsym; c++)
            p->out[i * a + (size_t)m->symcols[c]] = ids[p->out[i * a + (size_t)m->symcols[c]]];
}

/* The pieces' symbols into the table, as piece by piece in the file's order (the ids one
 * thread would give), up to the first piece that failed; then their rows hold those ids. */
static rfx_status merge_symbols(read_job *j, int n, const int *symcols, int nsym)
{
    int ok = 0;
    rfx_symlocal *locals[64];
    for (; ok < n && j->pieces[ok].st == RFX_OK; ok++)
        locals[ok] = j->pieces[ok].local;
    if (!rfx_symlocal_merge_all(locals, ok, j->syms, n))
        return RFX_ERR_NOMEM;
    for (int k = 0; k < ok; k++)
        j->pieces[k].ids = rfx_symlocal_ids(locals[k]);
    remap_job m = {j, symcols, nsym};
    rfx_parallel_for(ok, ok, remap_piece, &m);
    return RFX_OK;
}

static void report_read_error(FILE *err, const char *path, long line, reader *r)
{
    if (r->nomem) {
        fprintf(err, "%s:%ld: error: out of memory reading facts\n", path, line);
        return;
    }
    int zerr = r->zerr;
    const char *msg = gzerror(r->gz, &zerr);
    fprintf(err, "%s:%ld: error: cannot read: %s\n", path, line,
            r->zerr == Z_ERRNO ? strerror(r->err_no ? r->err_no : EIO) : r->zerr == Z_MEM_ERROR ? "out of memory"
            : r->zerr == Z_BUF_ERROR ? "compressed file is truncated" : msg && *msg ? msg : "read error");
}

/* An RFC 4180 file (rfc4180=true), as Soufflé reads one: a field that starts with '"' runs
 * to the next '"' not doubled ("" is one quote; separators and newlines inside are text),
 * and the separator or the record's end must follow it. The whole file is read first, and
 * parsed on one thread: a quoted newline leaves no place to cut it in pieces. */
static rfx_status read_quoted(reader *r, const char *path, const read_job *j, bool headers, rfx_rows *rows, FILE *err)
{
    block b = {NULL, 0, 0};
    while (!r->eof)
        if (!grow_block(r, &b, b.cap ? b.cap * 2 : 1 << 17) || !fill_block(r, &b)) {
            report_read_error(err, path, count_newlines(b.buf, b.len) + 1, r);
            free(b.buf);
            return r->nomem || r->zerr == Z_MEM_ERROR ? RFX_ERR_NOMEM : RFX_ERR_IO;
        }
    const char *s = b.buf ? b.buf : "";
    size_t n = b.len, i = 0;
    long line = 1;
    char *field = NULL;
    size_t fcap = 0;
    uint32_t row[RFX_MAX_ARITY + 1];
    rfx_status st = RFX_OK;
    char why[256] = "";
    piece one = {.st = RFX_OK};   /* symbols straight into the table */
    for (bool first = true; i < n && st == RFX_OK; first = false) {
        long at = line;   /* the record's first line, for messages */
        int col = 0, pc = 0;   /* the field, and the column it fills (a 64-bit value fills two) */
        const int fields = field_of(j->types, j->arity) - 1;
        bool end = false;
        if (j->arity == 0 || s[i] == '\n' || (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')) {
            if (j->arity > 0 && !(headers && first))
                snprintf(why, sizeof why, "empty line, expected %d column%s", fields, fields == 1 ? "" : "s");
            while (i < n && s[i] != '\n')
                i++;
            i++, line++;
            if (why[0])
                st = RFX_ERR_INPUT;
            else if (j->arity == 0 && !(headers && first))
                rows->n |= 1;
            continue;
        }
        while (!end && st == RFX_OK) {
            size_t fl = 0;
            bool quoted = s[i] == '"';
            if (quoted) {   /* up to the closing quote */
                for (i++;; i++) {
                    if (i >= n) {
                        snprintf(why, sizeof why, "column %d: unterminated quoted field", col + 1);
                        st = RFX_ERR_INPUT;
                        break;
                    }
                    if (s[i] == '"' && !(i + 1 < n && s[i + 1] == '"'))
                        break;
                    if (s[i] == '"')
                        i++;
                    line += s[i] == '\n';
                    if (!rfx_grow((void **)&field, &fcap, fl + 2, 1)) {
                        st = RFX_ERR_NOMEM;
                        break;
                    }
                    field[fl++] = s[i];
                }
                if (st != RFX_OK)
                    break;
                i++;
            } else {
                size_t e = i;
                while (e < n && s[e] != '\n' && !at_delim(j, s, e, n))
                    e++;
                if (e > i && s[e - 1] == '\r' && (e == n || s[e] == '\n'))
                    e--;
                if (!rfx_grow((void **)&field, &fcap, e - i + 1, 1)) {
                    st = RFX_ERR_NOMEM;
                    break;
                }
                fl = e - i;
                memcpy(field, s + i, fl);
                i = e;
            }
            if (i < n && s[i] == '\r' && (i + 1 == n || s[i + 1] == '\n'))
                i++;
            if (i >= n || s[i] == '\n')
                end = true;
            else if (at_delim(j, s, i, n))
                i += j->dlen;
            else {
                snprintf(why, sizeof why, "column %d: the separator must follow a quoted field", col + 1);
                st = RFX_ERR_INPUT;
                break;
            }
            if (pc < j->arity && !(headers && first)) {
                const char *bad = parse_field(j, &one, pc, field ? field : "", fl, &row[pc]);
                if (bad) {
                    char q[64];
                    quote_field(q, sizeof q, field ? field : "", fl);
                    snprintf(why, sizeof why, "column %d: %s %s", col + 1, q, bad);
                    st = bad[0] == 'c' ? RFX_ERR_NOMEM : RFX_ERR_INPUT;
                }
            }
            pc += pc < j->arity && RFX_PRIM_WIDE(j->types[pc]) ? 2 : 1;
            col++;
        }
        if (st == RFX_OK && !(headers && first)) {
            if (pc < j->arity) {
                snprintf(why, sizeof why, "expected %d column%s, found %d", fields, fields == 1 ? "" : "s", col);
                st = RFX_ERR_INPUT;
            } else
                st = rfx_rows_push(rows, row);
        }
        if (end && i < n)
            i++;
        line++;
        if (st != RFX_OK)
            line = at;
    }
    if (st == RFX_ERR_NOMEM)
        fprintf(err, "%s:%ld: error: out of memory reading facts\n", path, line);
    else if (st != RFX_OK)
        fprintf(err, "%s:%ld: error: %s\n", path, line, why);
    free(field);
    free(b.buf);
    return st;
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
    const int a = rows->arity;
    if (a > RFX_MAX_ARITY) {
        fprintf(err, "%s: error: relations of more than %d columns cannot be read\n", path, RFX_MAX_ARITY);
        return RFX_ERR_INPUT;
    }
    reader r = {gzopen(path, "rb"), false, false, Z_OK, 0, -1};
    if (!r.gz) {
        fprintf(err, "%s: error: cannot open facts file: %s\n", path, strerror(errno ? errno : EIO));
        return RFX_ERR_IO;
    }
    gzbuffer(r.gz, 1 << 17);   /* before the first read (a seek reads) */
    slice_lines sl = {path, 0, 0};
    long long bytes = (long long)sb.st_size;   /* of the file, or of the slice */
    if (ro && ro->nslices > 1) {   /* the lines that begin in this slice's bytes */
        int fd = open(path, O_RDONLY);
        long long size = (long long)sb.st_size, k = ro->slice, n = ro->nslices;
        long long from = fd < 0 ? -1 : line_start_from(fd, size * k / n, size);
        long long to = fd < 0 ? -1 : line_start_from(fd, size * (k + 1) / n, size);
        if (fd >= 0)
            close(fd);
        if (from < 0 || to < 0 || gzseek(r.gz, (z_off_t)from, SEEK_SET) != (z_off_t)from) {
            fprintf(err, "%s: error: cannot read facts file: %s\n", path, strerror(errno ? errno : EIO));
            gzclose(r.gz);
            return RFX_ERR_IO;
        }
        r.left = bytes = to - from;
        sl = (slice_lines){path, from, -1};
    }
    int nthreads = ro && ro->threads > 1 && !ro->records ? ro->threads : 1;   /* a record's fields
                                                                                * go to shared tables */
    if (nthreads > 64)
        nthreads = 64;
    int symcols[RFX_MAX_ARITY], nsym = 0;
    for (int c = 0; c < a; c++)
        if (types[c] == RFX_SYMBOL && !(ro && ro->unread && ro->unread[c]))   /* unread: no symbol */
            symcols[nsym++] = c;
    block blocks[2] = {{NULL, 0, 0}, {NULL, 0, 0}}, *cur = &blocks[0], *next = &blocks[1];
    piece *pieces = rfx_calloc((size_t)nthreads, sizeof *pieces);
    rfx_status st = RFX_OK;
    long line = 0, skipped = 0, first_skipped = 0;
    if (!pieces) {
        st = RFX_ERR_NOMEM;
        fprintf(err, "%s: error: out of memory reading facts\n", path);
        goto out;
    }
    for (int k = 0; k < nthreads && nthreads > 1 && nsym; k++)
        if (!(pieces[k].local = rfx_symlocal_new())) {
            st = RFX_ERR_NOMEM;
            fprintf(err, "%s: error: out of memory reading facts\n", path);
            goto out;
        }
    const char *delim = ro && ro->delimiter ? ro->delimiter : ro && ro->rfc4180 ? "," : "\t";
    read_job j = {types, syms, delim, strlen(delim), ro && ro->edge_list, a, pieces,
                  a > 0 && integer_columns(types, a) && strlen(delim) == 1 && !(ro && ro->records),
                  ro ? ro->records : NULL, ro ? ro->decimals : NULL, ro ? ro->unread : NULL,
                  ro ? ro->unread_value : 0};
    if (ro && ro->rfc4180) {
        st = read_quoted(&r, path, &j, ro->headers, rows, err);
        goto out;
    }
    if (!fill_block(&r, cur)) {
        st = r.nomem || r.zerr == Z_MEM_ERROR ? RFX_ERR_NOMEM : RFX_ERR_IO;
        report_read_error(err, path, at_line(&sl, count_newlines(cur->buf, cur->len) + 1), &r);
        goto out;
    }
    if (ro && ro->headers && cur->len && sl.start == 0) {   /* the names line */
        const char *nl = memchr(cur->buf, '\n', cur->len);
        size_t skip = nl ? (size_t)(nl - cur->buf) + 1 : cur->len;
        memmove(cur->buf, cur->buf + skip, cur->len - skip);
        cur->len -= skip;
        line = 1;
    }
    for (;;) {
        /* whole lines only, but for the last one at the end */
        const char *last = cur->len ? memrchr(cur->buf, '\n', cur->len) : NULL;
        size_t whole = r.eof ? cur->len : last ? (size_t)(last - cur->buf) + 1 : 0;
        if (whole == 0)
            break;   /* at the end (fill_block grows a full block without a newline) */
        int n = (int)(whole / PIECE_MIN) < nthreads ? (int)(whole / PIECE_MIN) : nthreads;
        if (n < 1)
            n = 1;
        const char *from = cur->buf;
        for (int k = 0; k < n; k++) {
            const char *to = cur->buf + whole * (size_t)(k + 1) / (size_t)n;
            if (k + 1 < n) {   /* cut after a newline */
                const char *nl = memchr(to, '\n', (size_t)(cur->buf + whole - to));
                to = nl ? nl + 1 : cur->buf + whole;
            } else
                to = cur->buf + whole;
            if (to < from)
                to = from;
            rfx_symlocal *local = pieces[k].local;
            if (local)
                rfx_symlocal_clear(local);
            pieces[k] = (piece){.p = from, .end = to, .st = RFX_OK, .local = local};
            from = to;
        }
        /* rows are parsed in place, a row's room a line, and closed up where lines held none */
        rfx_parallel_for(n, n, count_piece_lines, &j);
        size_t room = 0;
        for (int k = 0; k < n; k++)
            room += (size_t)pieces[k].lines;
        /* a plain file's first block tells its rows (10% more for longer lines later): the rows
         * get their buffer once, where growing it would copy what it holds each time */
        size_t want = rows->n + room;
        if (a > 0 && !r.eof && rows->cap < want && gzdirect(r.gz) && (size_t)bytes > whole) {
            double expect = (double)room * ((double)bytes / (double)whole) * 1.1;
            if (expect < 1e12)   /* refused (more than the machine has): the rows grow as they come */
                (void)rfx_rows_reserve(rows, rows->n + (size_t)expect);
        }
        if (a > 0 && (st = rfx_rows_reserve(rows, want)) != RFX_OK) {
            fprintf(err, "%s:%ld: error: out of memory reading facts\n", path, at_line(&sl, line + 1));
            goto out;
        }
        for (size_t k = 0, at = rows->n; a > 0 && k < (size_t)n; at += (size_t)pieces[k++].lines)
            pieces[k].out = rows->data + at * (size_t)a;
        block_job bj = {&j, n, &r, cur->buf + whole, cur->len - whole, next, true};
        const bool reading = !r.eof;   /* the next block is one more task */
        rfx_parallel_for(n + reading, n + reading, block_task, &bj);
        if (!reading)
            next->len = 0;
        if (pieces[0].local && (st = merge_symbols(&j, n, symcols, nsym)) != RFX_OK) {
            fprintf(err, "%s:%ld: error: out of memory reading facts\n", path, at_line(&sl, line + 1));
            goto out;
        }
        for (int k = 0; k < n && st == RFX_OK; k++) {
            piece *p = &pieces[k];
            if (p->skipped && !skipped)
                first_skipped = line + p->first_skipped;
            skipped += p->skipped;
            line += p->lines;
            if (p->st != RFX_OK) {
                st = p->st;
                fprintf(err, "%s:%ld: error: %s\n", path, at_line(&sl, line), p->why);
            } else if (a == 0)
                rows->n |= p->got > 0;
            else {
                uint32_t *to = rows->data + rows->n * (size_t)a;
                if (to != p->out)
                    memmove(to, p->out, sizeof(uint32_t) * p->got * (size_t)a);
                rows->n += p->got;
            }
        }
        if (st == RFX_OK && !bj.read_ok) {
            st = r.nomem || r.zerr == Z_MEM_ERROR ? RFX_ERR_NOMEM : RFX_ERR_IO;
            report_read_error(err, path, at_line(&sl, line + count_newlines(next->buf, next->len) + 1), &r);
        }
        if (st != RFX_OK)
            goto out;
        block *t = cur;
        cur = next;
        next = t;
    }
    if (ro && ro->nslices > 1) {   /* the caller reports the slices' count together */
        if (ro->skipped)
            *ro->skipped = skipped;
        if (ro->first_skipped)
            *ro->first_skipped = skipped ? at_line(&sl, first_skipped) : 0;
    } else if (skipped)
        rfx_report_skipped(err, path, first_skipped, skipped);
out:
    gzclose(r.gz);
    free(blocks[0].buf);
    free(blocks[1].buf);
    for (int k = 0; pieces && k < nthreads; k++)
        rfx_symlocal_free(pieces[k].local);
    free(pieces);
    return st;
}

void rfx_report_skipped(FILE *err, const char *path, long first, long skipped)
{
    fprintf(err, "%s:%ld: warning: skipped %ld line%s that do%s not start with numbers\n", path, first, skipped,
            skipped == 1 ? "" : "s", skipped == 1 ? "es" : "");
}

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

/* A decimal's text: its count of 10^-scale with the point `scale` digits from the right. */
static void put_decimal(text_buf *t, uint64_t raw, int scale)
{
    char *at = t->p + t->len;
    bool neg = (int64_t)raw < 0;
    uint64_t mag = neg ? 0u - raw : raw, p10 = (uint64_t)rfx_pow10(scale);
    int n = snprintf(at, VALUE_ROOM, "%s%llu", neg ? "-" : "", (unsigned long long)(mag / p10));
    if (scale)
        n += snprintf(at + n, VALUE_ROOM - (size_t)n, ".%0*llu", scale, (unsigned long long)(mag % p10));
    t->len += (size_t)n;
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

typedef struct record_order_ctx {
    const rfx_rows *rows;
    const rfx_record_io *rec;
} record_order_ctx;

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

static int cmp_record_rows(const void *x, const void *y, void *ctx)
{
    const record_order_ctx *o = ctx;
    int a = o->rows->arity;
    const uint32_t *ra = o->rows->data + *(const size_t *)x * (size_t)a;
    const uint32_t *rb = o->rows->data + *(const size_t *)y * (size_t)a;
    for (int c = 0; c < a; c++) {
        int k = rfx_record_compare(o->rec, o->rec->coltypes[c], ra[c], rb[c], 0);
        if (k)
            return k;
    }
    return 0;
}

/* The output order of rows with record columns: by what the records hold. */
static size_t *record_order(const rfx_rows *rows, const rfx_record_io *rec, rfx_status *st)
{
    *st = RFX_OK;
    if (rows->n < 2 || rows->arity == 0)
        return NULL;
    size_t *idx = rfx_malloc(sizeof(size_t) * rows->n);
    if (!idx) {
        *st = RFX_ERR_NOMEM;
        return NULL;
    }
    for (size_t i = 0; i < rows->n; i++)
        idx[i] = i;
    record_order_ctx o = {rows, rec};
    qsort_r(idx, rows->n, sizeof(size_t), cmp_record_rows, &o);
    return idx;
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
    size_t *idx = wo->in_order ? NULL : rec ? record_order(rows, rec, &st) : rfx_output_order(rows, types, syms, nthreads, &st);
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
    text_job j = {rows, idx, types, syms, delim, dlen, quote, integer_columns(types, rows->arity) && dlen == 1 && !rec, 0, NULL,
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
    for (int c = 0; c < o->arity; c++) {
        if (o->types[c] == RFX_FLOAT64 && c + 1 < o->arity) {   /* with its low word, as floats below */
            uint64_t x = (uint64_t)a[c] << 32 | a[c + 1], y = (uint64_t)b[c] << 32 | b[c + 1];
            c++;
            if (x == y)
                continue;
            double fa, fb;
            rfx_memcpy(&fa, &x, 8);
            rfx_memcpy(&fb, &y, 8);
            bool na = fa != fa, nb = fb != fb;
            if (na != nb)
                return na ? 1 : -1;
            if (!na && fa != fb)
                return fa < fb ? -1 : 1;
            return x < y ? -1 : 1;
        }
        if (a[c] == b[c])
            continue;
        switch (o->types[c]) {
        case RFX_NUMBER: case RFX_NUMBER64: case RFX_DECIMAL: case RFX_DATE:   /* a 64-bit value's high word; a day */
            return (int32_t)a[c] < (int32_t)b[c] ? -1 : 1;
        case RFX_FLOAT: {
            float fa, fb;
            rfx_memcpy(&fa, &a[c], 4);
            rfx_memcpy(&fb, &b[c], 4);
            bool na = fa != fa, nb = fb != fb;
            if (na != nb)   /* NaNs after every number: a comparison with one is always false */
                return na ? 1 : -1;
            if (!na && fa != fb)
                return fa < fb ? -1 : 1;
            return a[c] < b[c] ? -1 : 1;   /* equal values (+0, -0) and NaNs by their bits */
        }
        case RFX_SYMBOL: return o->rank[a[c]] < o->rank[b[c]] ? -1 : 1;
        default: return a[c] < b[c] ? -1 : 1;
        }
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
 * delimiter (quoted under RFC 4180, as symbols are). */
static rfx_status put_names(FILE *f, const char *header, const char *delim, bool quote)
{
    const char *names = strchr(header, '\n');
    names = names ? names + 1 : "";
    bool ok = true;
    while (ok) {
        size_t n = strcspn(names, "\t");
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
    int saved = errno;
    if (!rfx_outfile_close(&o, st == RFX_OK, why, sizeof why) && st == RFX_OK) {
        st = RFX_ERR_IO;
        saved = 0;
    }
    if (st == RFX_ERR_NOMEM)
        fprintf(err, "%s: error: out of memory writing output\n", path);
    else if (st != RFX_OK)
        fprintf(err, "%s: error: cannot write output: %s\n", path, saved ? strerror(saved) : why);
    return st;
}
