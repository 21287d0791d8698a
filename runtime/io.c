/* io.c: reading facts and edge lists (plain or gzip, CRLF or LF, last line with or
 * without a newline, RFC 4180 quoting), on the run's threads. */
#include "runtime.h"
#include "base.h"
#include "rx_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

bool rfx_integer_columns(const rfx_prim *types, int arity)
{
    for (int c = 0; c < arity; c++)
        if (types[c] != RFX_NUMBER && types[c] != RFX_UNSIGNED)
            return false;
    return true;
}

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
    bool stray;                 /* RFC 4180: a quote inside an unquoted field (the cuts by
                                 * counting quotes may be wrong: read again, exactly) */
    rfx_arena *unquoted;        /* RFC 4180: quoted fields' text where a "" stood for a quote
                                 * (the block's own text stays as read, for a second reading) */
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
    bool quoted;                /* RFC 4180: pieces are cut between records, parsed by quoted_piece */
} read_job;

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

/* The status of a field's error text: its storing failed ("could not be stored (out of
 * memory)", every parser's text for that) or the field is bad. */
static rfx_status field_status(const char *why)
{
    return strncmp(why, "could not be stored", 19) == 0 ? RFX_ERR_NOMEM : RFX_ERR_INPUT;
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
        if (!parse_field(j, p, 0, "", 0, tuple))   /* the empty symbol, as Soufflé reads it */
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
            return field_status(why);
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
static long count_byte(const char *s, size_t n, char c)
{
    long lines = 0;
    size_t i = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8(c), zero = _mm_setzero_si128();
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
        lines += s[i] == c;
    return lines;
}

static long count_newlines(const char *s, size_t n)
{
    return count_byte(s, n, '\n');
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

static void quoted_piece(const read_job *j, piece *p);

static void parse_piece(int k, void *ctx)
{
    read_job *j = ctx;
    piece *p = &j->pieces[k];
    uint32_t nullary[1];
    if (j->quoted) {
        quoted_piece(j, p);
        return;
    }
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

/* ---- RFC 4180 (rfc4180=true), as Soufflé reads it ---------------------------------------- */
/* A field that starts with '"' runs to the closing quote ("" inside stands for one, newlines
 * inside are text), and the separator or the record's end must follow it. A newline ends a
 * record where the quotes before it since the block's start are even in number (a "" adds
 * two): blocks and pieces are cut only there, so they are read on every thread too. */

/* The bytes of buf's whole records, found by following the fields one by one: a quote
 * opens a quoted field only at a field's start (a quote inside an unquoted field is text). */
static size_t quoted_whole_exact(const read_job *j, const char *s, size_t n)
{
    size_t last = 0;
    bool start = true, inside = false;
    for (size_t i = 0; i < n; i++) {
        if (inside) {
            if (s[i] == '"' && i + 1 < n && s[i + 1] == '"')
                i++;
            else if (s[i] == '"')
                inside = false;
        } else if (s[i] == '"' && start)
            inside = true, start = false;
        else if (s[i] == '\n')
            last = i + 1, start = true;
        else if (at_delim(j, s, i, n))
            i += j->dlen - 1, start = true;
        else
            start = false;
    }
    return last;
}

/* The same where every quote opens, closes or doubles (no quote inside an unquoted field):
 * up to the last newline after an even count of quotes (0: none). */
static size_t quoted_whole(const char *buf, size_t len)
{
    long q = count_byte(buf, len, '"');
    for (size_t at = len; at > 0;) {
        const char *nl = memrchr(buf, '\n', at);
        if (!nl)
            return 0;
        q -= count_byte(nl + 1, at - (size_t)(nl + 1 - buf), '"');
        at = (size_t)(nl - buf);
        if (!(q & 1))
            return at + 1;
    }
    return 0;
}

/* The first record boundary at or after `to`, scanning from `from` (a boundary). */
static const char *quoted_cut(const char *from, const char *to, const char *end)
{
    long q = count_byte(from, (size_t)(to - from), '"');
    while (to < end) {
        const char *nl = memchr(to, '\n', (size_t)(end - to));
        if (!nl)
            return end;
        q += count_byte(to, (size_t)(nl - to), '"');
        to = nl + 1;
        if (!(q & 1))
            return to;
    }
    return end;
}

/* A piece's failure: its message, status and the line of the record it stopped at. */
__attribute__((format(printf, 4, 5))) static void piece_failed(piece *p, rfx_status st, long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    p->st = st;
    p->lines = line;
}

/* A piece's records into its rows. A quoted field's text is the block's where it holds no
 * "", else a copy in the piece's arena (either stays until the pieces' symbols are merged,
 * and the block's text is left as read). On an error, p->lines is the line of the record's
 * start. */
static void quoted_piece(const read_job *j, piece *p)
{
    const char *s = p->p;
    const size_t n = (size_t)(p->end - p->p);
    size_t i = 0;
    long line = 1;
    const int fields = field_of(j->types, j->arity) - 1;
    uint32_t nullary[1];
    while (i < n) {
        long at = line;   /* the record's first line, for messages */
        int col = 0, pc = 0;   /* the field, and the column it fills (a 64-bit value fills two) */
        uint32_t *row = j->arity ? p->out + p->got * (size_t)j->arity : nullary;
        if (j->arity == 0 || s[i] == '\n' || (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n')) {
            while (i < n && s[i] != '\n')
                i++;
            i++, line++;
            if (j->arity > 0) {
                piece_failed(p, RFX_ERR_INPUT, at, "empty line, expected %d column%s", fields, fields == 1 ? "" : "s");
                return;
            }
            p->got++;   /* a nullary relation's fact */
            continue;
        }
        for (bool end = false; !end;) {
            const char *text = s + i;
            size_t len;
            if (s[i] == '"') {   /* up to the closing quote */
                const size_t from = ++i;
                bool doubled = false;
                for (;; i++) {
                    if (i >= n) {
                        piece_failed(p, RFX_ERR_INPUT, at, "column %d: unterminated quoted field", col + 1);
                        return;
                    }
                    if (s[i] == '"' && !(i + 1 < n && s[i + 1] == '"'))
                        break;
                    doubled |= s[i] == '"';
                    i += s[i] == '"';
                    line += s[i] == '\n';
                }
                len = i - from;
                text = s + from;
                if (doubled) {   /* each "" one quote, in a copy */
                    char *w = (p->unquoted || (p->unquoted = rfx_arena_new())) ? rfx_arena_alloc(p->unquoted, len + 1) : NULL;
                    if (!w) {
                        piece_failed(p, RFX_ERR_NOMEM, at, "out of memory");
                        return;
                    }
                    size_t m = 0;
                    for (size_t q = from; q < i; q++)
                        w[m++] = s[q], q += s[q] == '"';
                    text = w;
                    len = m;
                }
                i++;
            } else {
                size_t e = i;
                while (e < n && s[e] != '\n' && !at_delim(j, s, e, n))
                    p->stray |= s[e++] == '"';
                len = e - i - (e > i && s[e - 1] == '\r' && (e == n || s[e] == '\n'));
                i = e;
            }
            if (i < n && s[i] == '\r' && (i + 1 == n || s[i + 1] == '\n'))
                i++;
            if (i >= n || s[i] == '\n')
                end = true;
            else if (at_delim(j, s, i, n))
                i += j->dlen;
            else {
                piece_failed(p, RFX_ERR_INPUT, at, "column %d: the separator must follow a quoted field", col + 1);
                return;
            }
            if (pc < j->arity) {
                const char *bad = parse_field(j, p, pc, text, len, &row[pc]);
                if (bad) {
                    char q[64];
                    quote_field(q, sizeof q, text, len);
                    piece_failed(p, field_status(bad), at, "column %d: %s %s", col + 1, q, bad);
                    return;
                }
            }
            pc += pc < j->arity && RFX_PRIM_WIDE(j->types[pc]) ? 2 : 1;
            col++;
        }
        if (pc < j->arity) {
            piece_failed(p, RFX_ERR_INPUT, at, "expected %d column%s, found %d", fields, fields == 1 ? "" : "s", col);
            return;
        }
        p->got++;
        i++, line++;   /* past the record's newline */
    }
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
    const bool quoted = ro && ro->rfc4180;
    bool exact = false;   /* RFC 4180 with a quote inside an unquoted field: cut by following fields */
    read_job j = {types, syms, delim, strlen(delim), ro && ro->edge_list, a, pieces,
                  a > 0 && rfx_integer_columns(types, a) && strlen(delim) == 1 && !(ro && ro->records) && !quoted,
                  ro ? ro->records : NULL, ro ? ro->decimals : NULL, ro ? ro->unread : NULL,
                  ro ? ro->unread_value : 0, quoted};
    if (!fill_block(&r, cur)) {
        st = r.nomem || r.zerr == Z_MEM_ERROR ? RFX_ERR_NOMEM : RFX_ERR_IO;
        report_read_error(err, path, at_line(&sl, count_newlines(cur->buf, cur->len) + 1), &r);
        goto out;
    }
    if (ro && ro->headers && cur->len && sl.start == 0) {   /* the names line (record) */
        const char *nl = quoted ? quoted_cut(cur->buf, cur->buf, cur->buf + cur->len) - 1
                                : memchr(cur->buf, '\n', cur->len);
        size_t skip = nl && *nl == '\n' ? (size_t)(nl - cur->buf) + 1 : cur->len;
        memmove(cur->buf, cur->buf + skip, cur->len - skip);
        cur->len -= skip;
        line = 1;
    }
    for (;;) {
        /* whole lines only, but for the last one at the end */
        const char *last = cur->len && !quoted ? memrchr(cur->buf, '\n', cur->len) : NULL;
        size_t whole = r.eof ? cur->len : exact ? quoted_whole_exact(&j, cur->buf, cur->len)
                     : quoted ? quoted_whole(cur->buf, cur->len) : last ? (size_t)(last - cur->buf) + 1 : 0;
        if (whole == 0 && quoted && !r.eof) {   /* a record longer than the block: more of it */
            if (!grow_block(&r, cur, cur->cap * 2) || !fill_block(&r, cur)) {
                st = r.nomem || r.zerr == Z_MEM_ERROR ? RFX_ERR_NOMEM : RFX_ERR_IO;
                report_read_error(err, path, at_line(&sl, line + count_newlines(cur->buf, cur->len) + 1), &r);
                goto out;
            }
            continue;
        }
        if (whole == 0)
            break;   /* at the end (fill_block grows a full block without a newline) */
        int n = (int)(whole / PIECE_MIN) < nthreads ? (int)(whole / PIECE_MIN) : nthreads;
        if (n < 1 || exact)
            n = 1;
        const char *from = cur->buf;
        for (int k = 0; k < n; k++) {
            const char *to = cur->buf + whole * (size_t)(k + 1) / (size_t)n;
            if (k + 1 < n && quoted)   /* cut between records */
                to = quoted_cut(from, to < from ? from : to, cur->buf + whole);
            else if (k + 1 < n) {   /* cut after a newline */
                const char *nl = memchr(to, '\n', (size_t)(cur->buf + whole - to));
                to = nl ? nl + 1 : cur->buf + whole;
            } else
                to = cur->buf + whole;
            if (to < from)
                to = from;
            rfx_symlocal *local = pieces[k].local;
            if (local)
                rfx_symlocal_clear(local);
            rfx_arena_free(pieces[k].unquoted);   /* the last block's symbols are merged */
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
        bool stray = false;
        for (int k = 0; k < n && quoted && !exact; k++)
            stray |= pieces[k].stray;
        if (stray && bj.read_ok) {
            /* the cuts may lie inside quoted fields: this block again, and the rest of the
             * file, cut by following its fields (the block's text is cur's whole records and
             * next's, which begins with cur's tail) */
            exact = true;
            if (!grow_block(&r, cur, whole + next->len + 1)) {
                st = RFX_ERR_NOMEM;
                fprintf(err, "%s:%ld: error: out of memory reading facts\n", path, at_line(&sl, line + 1));
                goto out;
            }
            rfx_memcpy(cur->buf + whole, next->buf, next->len);
            cur->len = whole + next->len;
            next->len = 0;
            continue;
        }
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
    for (int k = 0; pieces && k < nthreads; k++) {
        rfx_symlocal_free(pieces[k].local);
        rfx_arena_free(pieces[k].unquoted);
    }
    free(pieces);
    return st;
}

void rfx_report_skipped(FILE *err, const char *path, long first, long skipped)
{
    fprintf(err, "%s:%ld: warning: skipped %ld line%s that do%s not start with numbers\n", path, first, skipped,
            skipped == 1 ? "" : "s", skipped == 1 ? "es" : "");
}

