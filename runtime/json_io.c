/* json_io.c: relations in Soufflé's JSON (`IO=jsonfile`, `IO=json`): a file is one array
 * of tuples, each a list of its values (`[1, "a", [2, null]]`) or, with format=object, an
 * object keyed by attribute names (`{"x": 1, "l": {"h": 2, "t": null}}`); records nest as
 * lists or objects by field names, nil is null, a nullary relation's one tuple is null.
 * Written as Soufflé 2.5 writes it (`[row,\nrow]\n`, floats with six significant digits as
 * its C++ stream does), except that unsigned values are written as unsigned (Soufflé casts
 * them to int). Read strictly: a number column takes an integer, a symbol a string, and
 * every mistake is reported with the file's line. */
#include "runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- reading ------------------------------------------------------------------------ */
typedef struct jreader {
    const char *p, *end;
    long line;                 /* of p */
    const rfx_json_io *io;
    rfx_text str;              /* the last string read, unescaped */
    const char *why;           /* the error, or NULL */
    bool nomem;                /* it is that memory ran out */
    char buf[160];             /* room for an error made with values */
} jreader;

static void skip_ws(jreader *r)
{
    for (; r->p < r->end; r->p++) {
        char c = *r->p;
        if (c == '\n')
            r->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return;
    }
}

/* Whether the next token starts with c (then taken). */
static bool take(jreader *r, char c)
{
    skip_ws(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return true;
    }
    return false;
}

static bool fail(jreader *r, const char *why)
{
    if (!r->why) {
        r->why = why;
        r->nomem = strstr(why, "out of memory") != NULL;
    }
    return false;
}

static bool failf(jreader *r, const char *fmt, const char *arg)
{
    snprintf(r->buf, sizeof r->buf, fmt, arg);
    return fail(r, r->buf);
}

/* What the next value is, in words, for messages. */
static const char *next_kind(jreader *r)
{
    skip_ws(r);
    if (r->p >= r->end)
        return "the end of the file";
    switch (*r->p) {
    case '"': return "a string";
    case '[': return "a list";
    case '{': return "an object";
    case 'n': return "null";
    case 't': case 'f': return "a boolean";
    default: return *r->p == '-' || (*r->p >= '0' && *r->p <= '9') ? "a number" : "something that is not JSON";
    }
}

static bool put_utf8(rfx_text *t, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80)
        u[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3F)), u[2] = (char)(0x80 | (cp & 0x3F)),
        n = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3F)), u[2] = (char)(0x80 | (cp >> 6 & 0x3F)),
        u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    return rfx_text_put(t, u, n);
}

static int hex4(const char *s)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* A string (the opening quote next) into r->str, its escapes undone. */
static bool read_string(jreader *r)
{
    if (!take(r, '"'))
        return failf(r, "expected a string, found %s", next_kind(r));
    r->str.len = 0;
    while (r->p < r->end && *r->p != '"') {
        const char *run = r->p;
        while (r->p < r->end && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20)
            r->p++;
        if (r->p > run && !rfx_text_put(&r->str, run, (size_t)(r->p - run)))
            return fail(r, "out of memory");
        if (r->p >= r->end || *r->p == '"')
            break;
        if (*r->p != '\\')
            return fail(r, *r->p == '\n' ? "a string runs past the end of its line (no closing quote)"
                                         : "a control character in a string (write it as an escape)");
        if (r->end - r->p < 2)
            break;
        char e = r->p[1], c = 0;
        r->p += 2;
        switch (e) {
        case '"': case '\\': case '/': c = e; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': {
            int hi = r->end - r->p >= 4 ? hex4(r->p) : -1;
            if (hi < 0)
                return fail(r, "\\u in a string is not followed by four hex digits");
            r->p += 4;
            uint32_t cp = (uint32_t)hi;
            if (hi >= 0xD800 && hi < 0xDC00) {   /* a surrogate pair's first half */
                int lo = r->end - r->p >= 6 && r->p[0] == '\\' && r->p[1] == 'u' ? hex4(r->p + 2) : -1;
                if (lo < 0xDC00 || lo >= 0xE000)
                    return fail(r, "a \\u surrogate in a string without its second half");
                r->p += 6;
                cp = 0x10000 + ((uint32_t)(hi - 0xD800) << 10) + (uint32_t)(lo - 0xDC00);
            } else if (hi >= 0xDC00 && hi < 0xE000)
                return fail(r, "a \\u surrogate in a string without its first half");
            if (!put_utf8(&r->str, cp))
                return fail(r, "out of memory");
            continue;
        }
        default:
            return failf(r, "unknown escape \\%s in a string", (char[]){e, 0});
        }
        if (!rfx_text_put(&r->str, &c, 1))
            return fail(r, "out of memory");
    }
    if (r->p >= r->end)
        return fail(r, "a string has no closing quote");
    r->p++;
    return true;
}

/* A number's text (JSON's form) at r->p: its length, taken; 0 where none starts there. */
static size_t read_number(jreader *r, bool *integral)
{
    skip_ws(r);
    const char *s = r->p, *q = s;
    if (q < r->end && *q == '-')
        q++;
    const char *digits = q;
    while (q < r->end && *q >= '0' && *q <= '9')
        q++;
    if (q == digits || (*digits == '0' && q - digits > 1))
        return 0;
    *integral = true;
    if (q < r->end && *q == '.') {
        const char *f = ++q;
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
        if (q == f)
            return 0;
        *integral = false;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < r->end && (*q == '+' || *q == '-'))
            q++;
        const char *x = q;
        while (q < r->end && *q >= '0' && *q <= '9')
            q++;
        if (q == x)
            return 0;
        *integral = false;
    }
    r->p = q;
    return (size_t)(q - s);
}

static bool read_value(jreader *r, int type, uint32_t *out, int depth);

/* The name of an object's next member (read, with its ':') among names[0..n) (NULL entries
 * skipped): its index, or -1 with the error set; seen marks those read before. */
static int read_member(jreader *r, const char *const *names, int n, bool *seen, const char *owner, const char *what)
{
    if (!read_string(r))
        return -1;
    int c = 0;
    for (; c < n; c++)
        if (names[c] && strlen(names[c]) == r->str.len && memcmp(names[c], r->str.p, r->str.len) == 0)
            break;
    const int shown = (int)(r->str.len < 60 ? r->str.len : 60);
    if (c == n || seen[c]) {
        if (c == n)
            snprintf(r->buf, sizeof r->buf, "'%s' has no %s \"%.*s\"", owner, what, shown, r->str.p ? r->str.p : "");
        else
            snprintf(r->buf, sizeof r->buf, "%s \"%.*s\" is given twice", what, shown, r->str.p);
        fail(r, r->buf);
        return -1;
    }
    if (!take(r, ':')) {
        fail(r, "a ':' wanted after a name in an object");
        return -1;
    }
    seen[c] = true;
    return c;
}

/* An object's members after its '{' (names[0..n), NULL entries skipped), each value read by
 * value(ctx, index), up to its closing brace; every name must be given. */
static bool read_object(jreader *r, const char *const *names, int n, const char *owner, const char *what,
                        bool (*value)(jreader *, int, void *), void *ctx)
{
    bool seen[RFX_MAX_ARITY + RFX_MAX_RECORD_FIELDS] = {false};
    if (!take(r, '}')) {
        for (int k = 0; k == 0 || take(r, ','); k++) {
            int c = read_member(r, names, n, seen, owner, what);
            if (c < 0 || !value(r, c, ctx))
                return false;
        }
        if (!take(r, '}'))
            return failf(r, "expected ',' or '}' in an object, found %s", next_kind(r));
    }
    for (int c = 0; c < n; c++)
        if (names[c] && !seen[c]) {
            snprintf(r->buf, sizeof r->buf, "the object has no %s \"%s\" of '%s'", what, names[c], owner);
            return fail(r, r->buf);
        }
    return true;
}

typedef struct field_ctx {
    const rfx_type *ty;
    uint32_t *f;
    int depth;
} field_ctx;

static bool read_field(jreader *r, int c, void *ctx)
{
    field_ctx *fc = ctx;
    return read_value(r, fc->ty->fields[c], &fc->f[c], fc->depth + 1);
}

/* The fields of record type rt as a list or an object (the opening bracket read): packed. */
static bool read_record_fields(jreader *r, int rt, bool object, uint32_t *out, int depth)
{
    const rfx_type *ty = &r->io->prog->types[rt];
    uint32_t f[RFX_MAX_RECORD_FIELDS];
    if (object) {
        field_ctx fc = {ty, f, depth};
        if (!read_object(r, ty->field_names, ty->nfields, ty->name, "field", read_field, &fc))
            return false;
    } else {
        for (int c = 0; c < ty->nfields; c++)
            if ((c && !take(r, ',')) || !read_value(r, ty->fields[c], &f[c], depth + 1))
                return r->why ? false : failf(r, "a record of '%s' has too few fields", ty->name);
        if (!take(r, ']'))
            return failf(r, "a record of '%s' has too many fields, or no closing bracket", ty->name);
    }
    uint32_t id = rfx_fn_env_pack(r->io->records->env, f, ty->nfields);
    if (id == UINT32_MAX)
        return fail(r, "out of memory");
    *out = id;
    return true;
}

/* One value of `type`: out[0] (and out[1], a 64-bit value's low word). */
static bool read_value(jreader *r, int type, uint32_t *out, int depth)
{
    const rfx_program *prog = r->io->prog;
    if (rfx_program_record_type(prog, type) >= 0) {
        if (depth > 64)
            return fail(r, "records nest too deeply");
        skip_ws(r);
        if (r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
            r->p += 4;
            *out = 0;
            return true;
        }
        bool object = take(r, '{');
        if (!object && !take(r, '['))
            return failf(r, "expected a record (a list, an object or null), found %s", next_kind(r));
        return read_record_fields(r, rfx_program_record_type(prog, type), object, out, depth);
    }
    if (rfx_program_adt_type(prog, type) >= 0)   /* the front end refuses such relations */
        return fail(r, "ADT values have no JSON form");
    const rfx_type *ty = &prog->types[type];
    const char *why;
    if (ty->prim == RFX_SYMBOL || ty->prim == RFX_DATE) {
        if (!read_string(r))
            return false;
        why = rfx_parse_value(r->str.p ? r->str.p : "", r->str.len, ty->prim, r->io->syms, out);
        if (why && strstr(why, "out of memory"))
            return fail(r, "out of memory");
        return why ? failf(r, "a string that %s", why) : true;
    }
    bool integral = false;
    const char *s = r->p;
    size_t n = read_number(r, &integral);
    if (!n)
        return failf(r, "expected a number, found %s", next_kind(r));
    s = r->p - n;
    if (!integral && ty->prim != RFX_FLOAT && ty->prim != RFX_FLOAT64 && ty->prim != RFX_DECIMAL) {
        snprintf(r->buf, sizeof r->buf, "%.*s is not an integer (the attribute is %s)", (int)(n < 40 ? n : 40), s,
                 ty->name);
        return fail(r, r->buf);
    }
    why = ty->prim == RFX_DECIMAL ? rfx_parse_decimal(s, n, ty->precision, ty->scale, out)
                                  : rfx_parse_value(s, n, ty->prim, r->io->syms, out);
    if (why) {
        snprintf(r->buf, sizeof r->buf, "%.*s %s", (int)(n < 40 ? n : 40), s, why);
        return fail(r, r->buf);
    }
    return true;
}

/* One attribute's value into row (a 64-bit value's low word at the column after). */
static bool read_attr(jreader *r, int a, void *ctx)
{
    uint32_t *row = ctx;
    uint32_t v[2] = {0, 0};
    int type = r->io->rel->attrs[a].type;
    if (!read_value(r, type, v, 0))
        return false;
    row[a] = v[0];
    if (RFX_PRIM_WIDE(r->io->prog->types[type].prim))
        row[a + 1] = v[1];
    return true;
}

/* One tuple (a list, an object, or null for a nullary relation's) into row. */
static bool read_tuple(jreader *r, uint32_t *row)
{
    const rfx_json_io *io = r->io;
    const rfx_relation *rel = io->rel;
    skip_ws(r);
    if (rel->arity == 0 && r->end - r->p >= 4 && memcmp(r->p, "null", 4) == 0) {
        r->p += 4;
        return true;
    }
    const char *names[RFX_MAX_ARITY];   /* NULL: a 64-bit value's low word, no attribute */
    for (int a = 0; a < rel->arity; a++)
        names[a] = io->prog->types[rel->attrs[a].type].prim == RFX_WORD ? NULL : rel->attrs[a].name;
    if (take(r, '{'))
        return read_object(r, names, rel->arity, rel->name, "attribute", read_attr, row);
    if (!take(r, '['))
        return failf(r, "expected a tuple (a list or an object), found %s", next_kind(r));
    for (int a = 0, k = 0; a < rel->arity; a++) {
        if (!names[a])
            continue;
        if ((k++ && !take(r, ',')) || !read_attr(r, a, row))
            return r->why ? false : failf(r, "the tuple has too few values for '%s'", rel->name);
    }
    if (!take(r, ']'))
        return failf(r, "the tuple has more values than '%s' has attributes, or no closing bracket", rel->name);
    return true;
}

/* The whole file (plain or gzip) into *text (*len bytes): RFX_OK, or an error said on err. */
static rfx_status slurp(const char *path, char **text, size_t *len, FILE *err)
{
    *text = NULL;
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        fprintf(err, "%s: error: cannot open facts file: %s\n", path, strerror(errno ? errno : EIO));
        return errno == ENOMEM ? RFX_ERR_NOMEM : RFX_ERR_IO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = rfx_malloc(cap);
    rfx_status st = buf ? RFX_OK : RFX_ERR_NOMEM;
    bool said = false;   /* a read failure's message */
    for (int got = 1; st == RFX_OK && got > 0;) {
        if (cap - n < (1 << 15)) {
            char *b = rfx_realloc(buf, cap * 2);
            if (!b) {
                st = RFX_ERR_NOMEM;
                break;
            }
            buf = b;
            cap *= 2;
        }
        got = gzread(gz, buf + n, (unsigned)(cap - n < (1u << 30) ? cap - n : 1u << 30));
        if (got < 0) {
            int zerr;
            const char *msg = gzerror(gz, &zerr);
            fprintf(err, "%s: error: cannot read: %s\n", path,
                    zerr == Z_ERRNO ? strerror(errno ? errno : EIO) : zerr == Z_MEM_ERROR ? "out of memory" : msg);
            st = zerr == Z_MEM_ERROR ? RFX_ERR_NOMEM : RFX_ERR_IO;
            said = true;
        } else
            n += (size_t)got;
    }
    gzclose(gz);
    if (st == RFX_ERR_NOMEM && !said)
        fprintf(err, "%s: error: out of memory reading facts\n", path);
    if (st != RFX_OK) {
        free(buf);
        return st;
    }
    *text = buf;
    *len = n;
    return RFX_OK;
}

rfx_status rfx_read_json(const char *path, const rfx_json_io *io, rfx_rows *rows, FILE *err)
{
    size_t len = 0;
    char *text;
    rfx_status st = slurp(path, &text, &len, err);
    if (st != RFX_OK)
        return st;
    jreader r = {text, text + len, 1, io, {0}, NULL, false, {0}};
    uint32_t row[RFX_MAX_ARITY + 1] = {0};
    if (!take(&r, '['))
        failf(&r, "expected the list of tuples ('['), found %s", next_kind(&r));
    else if (!take(&r, ']')) {
        do {
            if (read_tuple(&r, row) && rfx_rows_push(rows, row) != RFX_OK)
                fail(&r, "out of memory");
        } while (!r.why && take(&r, ','));
        if (!r.why && !take(&r, ']'))
            failf(&r, "expected ',' or ']' after a tuple, found %s", next_kind(&r));
    }
    if (!r.why && (skip_ws(&r), r.p < r.end))
        fail(&r, "text after the list of tuples");
    if (r.why) {
        fprintf(err, "%s:%ld: error: %s\n", path, r.line, r.why);
        st = r.nomem ? RFX_ERR_NOMEM : RFX_ERR_INPUT;
    }
    free(r.str.p);
    free(text);
    return st;
}

/* ---- writing ------------------------------------------------------------------------ */
/* s as json11 (Soufflé's JSON library) writes a string. */
static bool put_string(rfx_text *t, const char *s, size_t n)
{
    bool ok = rfx_text_put(t, "\"", 1);
    for (size_t i = 0; ok && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                        : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
        char u[8];
        if (!esc && c < 0x20)
            snprintf(u, sizeof u, "\\u%04x", c), esc = u;
        else if (!esc && c == 0xE2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                 ((unsigned char)s[i + 2] == 0xA8 || (unsigned char)s[i + 2] == 0xA9)) {   /* line separators */
            esc = (unsigned char)s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
            i += 2;
        }
        ok = esc ? rfx_text_put(t, esc, strlen(esc)) : rfx_text_put(t, s + i, 1);
    }
    return ok && rfx_text_put(t, "\"", 1);
}

static bool put_value(rfx_text *t, const rfx_json_io *io, int type, const uint32_t *v, int depth)
{
    const rfx_program *prog = io->prog;
    int rt = rfx_program_record_type(prog, type);
    char buf[64];
    int n;
    if (rt >= 0) {
        int nf;
        const uint32_t *f = rfx_records_fields(rfx_fn_env_records(io->records->env), v[0], &nf);
        if (!f || depth > 64)
            return rfx_text_put(t, "null", 4);
        const rfx_type *ty = &prog->types[rt];
        bool ok = rfx_text_put(t, io->objects ? "{" : "[", 1);
        for (int c = 0; ok && c < nf && c < ty->nfields; c++) {
            ok = !c || rfx_text_put(t, ", ", 2);
            if (ok && io->objects)
                ok = put_string(t, ty->field_names[c], strlen(ty->field_names[c])) && rfx_text_put(t, ": ", 2);
            ok = ok && put_value(t, io, ty->fields[c], &f[c], depth + 1);
        }
        return ok && rfx_text_put(t, io->objects ? "}" : "]", 1);
    }
    const rfx_type *ty = &prog->types[type];
    const uint64_t wide = RFX_PRIM_WIDE(ty->prim) ? (uint64_t)v[0] << 32 | v[1] : 0;
    switch (ty->prim) {
    case RFX_SYMBOL:
        return put_string(t, rfx_symtab_str(io->syms, v[0]), rfx_symtab_len(io->syms, v[0]));
    case RFX_DATE:
        n = rfx_date_format(buf, sizeof buf, v[0]);
        return put_string(t, buf, (size_t)n);
    case RFX_FLOAT: {   /* a C++ stream's default: six significant digits */
        float f;
        memcpy(&f, v, 4);
        n = snprintf(buf, sizeof buf, "%g", (double)f);
        break;
    }
    case RFX_FLOAT64: {
        double d;
        memcpy(&d, &wide, 8);
        n = snprintf(buf, sizeof buf, "%g", d);
        break;
    }
    case RFX_NUMBER64:
        n = snprintf(buf, sizeof buf, "%lld", (long long)(int64_t)wide);
        break;
    case RFX_UNSIGNED64:
        n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)wide);
        break;
    case RFX_DECIMAL:
        n = rfx_format_decimal(buf, sizeof buf, wide, ty->scale);
        break;
    default:
        n = rfx_format_value(buf, sizeof buf, ty->prim, v[0]);
        break;
    }
    return rfx_text_put(t, buf, (size_t)n);
}

/* One tuple's text. */
static bool put_tuple(rfx_text *t, const rfx_json_io *io, const uint32_t *row)
{
    const rfx_relation *rel = io->rel;
    if (rel->arity == 0)
        return rfx_text_put(t, "null", 4);
    bool ok = rfx_text_put(t, io->objects ? "{" : "[", 1), first = true;
    for (int a = 0; ok && a < rel->arity; a++) {
        if (io->prog->types[rel->attrs[a].type].prim == RFX_WORD)
            continue;
        ok = first || rfx_text_put(t, ", ", 2);
        first = false;
        if (ok && io->objects)
            ok = put_string(t, rel->attrs[a].name, strlen(rel->attrs[a].name)) && rfx_text_put(t, ": ", 2);
        ok = ok && put_value(t, io, rel->attrs[a].type, row + a, 0);
    }
    return ok && rfx_text_put(t, io->objects ? "}" : "]", 1);
}

/* The text to f in pieces of about a megabyte. */
static rfx_status write_text(FILE *f, const rfx_json_io *io, const rfx_rows *rows, const size_t *idx)
{
    rfx_text t = {0};
    bool ok = rfx_text_put(&t, "[", 1);
    for (size_t i = 0; ok && i < rows->n; i++) {
        ok = (!i || rfx_text_put(&t, ",\n", 2)) &&
             put_tuple(&t, io, rows->data + (idx ? idx[i] : i) * (size_t)rows->arity);
        if (ok && t.len >= (1 << 20)) {
            if (!rfx_fwrite(f, t.p, t.len)) {
                free(t.p);
                return RFX_ERR_IO;
            }
            t.len = 0;
        }
    }
    ok = ok && rfx_text_put(&t, rows->arity == 0 && rows->n ? "\n]\n" : "]\n", rows->arity == 0 && rows->n ? 3 : 2);
    rfx_status st = !ok ? RFX_ERR_NOMEM : rfx_fwrite(f, t.p, t.len) ? RFX_OK : RFX_ERR_IO;
    free(t.p);
    return st;
}

rfx_status rfx_write_json(const char *path, const rfx_json_io *io, const rfx_rows *rows, const rfx_prim *types,
                          bool in_order, int nthreads, FILE *out, FILE *err)
{
    rfx_status st = RFX_OK;
    size_t *idx = in_order ? NULL : rfx_write_order(rows, types, io->syms, io->records, nthreads, &st);
    const char *name = io->rel->name;
    if (st == RFX_ERR_NOMEM) {
        fprintf(err, "rfx: error: out of memory writing relation '%s'\n", name);
        return st;
    }
    if (strcmp(path, "-") == 0) {
        errno = 0;
        st = write_text(out, io, rows, idx);
        free(idx);
        if (st == RFX_ERR_NOMEM)
            fprintf(err, "rfx: error: out of memory writing relation '%s'\n", name);
        else if (st != RFX_OK)
            fprintf(err, "rfx: error: cannot write relation '%s' to standard output\n", name);
        return st;
    }
    rfx_outfile o;
    char why[256];
    if (!rfx_outfile_open(&o, path, true, why, sizeof why)) {
        free(idx);
        fprintf(err, "%s: error: cannot write output: %s\n", path, why);
        return RFX_ERR_IO;
    }
    errno = 0;
    st = write_text(o.f, io, rows, idx);
    int saved = errno;
    free(idx);
    return rfx_outfile_finish(&o, st, saved, path, err);
}
