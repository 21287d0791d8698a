/* record_text.c: records in facts and outputs, in Soufflé's text form: `[1, abc, [2, nil]]`
 * (fields by their types, symbols bare or in double quotes when read, `nil` for the record
 * of no tuple). Reading packs into the run's record table (the functor environment's);
 * writing reads it. */
#include "runtime.h"

#include <stdlib.h>
#include <string.h>

static size_t skip_blanks(const char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* One value of type `type` at s[*i..n), up to (not past) a ',' or ']' that ends it. */
static const char *parse_value(const rfx_record_io *rio, int type, const char *s, size_t n, size_t *i, uint32_t *out,
                               int depth);
static const char *parse_adt(const rfx_record_io *rio, int at, const char *s, size_t n, size_t *i, uint32_t *out,
                             int depth);

/* Fields f[first..last) of types[first..last), comma-separated, from s[k] up to the bracket
 * `close` (the caller has read the opening one); *out: the record f[0..last). */
static const char *parse_fields(const rfx_record_io *rio, const int *types, int first, int last, char close,
                                const char *s, size_t n, size_t k, size_t *i, uint32_t *f, uint32_t *out, int depth)
{
    for (int c = first; c < last; c++) {
        if (c > first) {
            k = skip_blanks(s, n, k);
            if (k >= n || s[k] != ',')
                return "has too few fields for its type";
            k++;
        }
        const char *why = parse_value(rio, types[c], s, n, &k, &f[c], depth + 1);
        if (why)
            return why;
    }
    k = skip_blanks(s, n, k);
    if (k >= n || s[k] != close)
        return "has too many fields for its type, or no closing bracket";
    *i = k + 1;
    uint32_t id = rfx_fn_env_pack(rio->env, f, last);
    if (id == UINT32_MAX)
        return "could not be stored (out of memory)";
    *out = id;
    return NULL;
}

static const char *parse_record(const rfx_record_io *rio, int rt, const char *s, size_t n, size_t *i, uint32_t *out,
                                int depth)
{
    const rfx_type *ty = &rio->prog->types[rt];
    size_t k = skip_blanks(s, n, *i);
    if (n - k >= 3 && memcmp(s + k, "nil", 3) == 0) {
        *out = 0;
        *i = k + 3;
        return NULL;
    }
    if (k >= n || s[k] != '[')
        return "is not a record ('[...]' or nil)";
    if (depth > 64)
        return "nests records too deeply";
    uint32_t f[RFX_MAX_RECORD_FIELDS];
    return parse_fields(rio, ty->fields, 0, ty->nfields, ']', s, n, k + 1, i, f, out, depth);
}

static const char *parse_adt(const rfx_record_io *rio, int at, const char *s, size_t n, size_t *i, uint32_t *out,
                             int depth)
{
    const rfx_type *ty = &rio->prog->types[at];
    size_t k = skip_blanks(s, n, *i), e;
    if (k >= n || s[k] != '$')
        return "is not a value of its ADT ('$Branch(...)')";
    for (e = k + 1; e < n && s[e] != '(' && s[e] != ',' && s[e] != ')' && s[e] != ']' && s[e] != ' '; e++)
        ;
    int b = 0;
    while (b < ty->nbranches && (strlen(ty->branches[b].name) != e - k - 1 ||
                                 memcmp(ty->branches[b].name, s + k + 1, e - k - 1) != 0))
        b++;
    if (b == ty->nbranches)
        return "names no branch of its ADT";
    if (depth > 64)
        return "nests records too deeply";
    const rfx_branch *br = &ty->branches[b];
    uint32_t f[RFX_MAX_RECORD_FIELDS];
    f[0] = (uint32_t)b;
    e = skip_blanks(s, n, e);
    if (rfx_program_adt_enum(rio->prog, at)) {   /* `$B` or `$B()`: the branch's number */
        size_t close = e < n && s[e] == '(' ? skip_blanks(s, n, e + 1) : n;
        if (close < n && s[close] == ')')
            e = close + 1;
        *i = e;
        *out = (uint32_t)b;
        return NULL;
    }
    uint32_t payload;   /* as Soufflé stores it: [branch, field] or [branch, [fields...]] */
    if (e < n && s[e] == '(') {
        if (br->payload < 0)
            return parse_fields(rio, br->fields, 1, 2, ')', s, n, e + 1, i, f, out, depth);
        const char *why = parse_fields(rio, br->fields + 1, 0, br->nfields, ')', s, n, e + 1, i, f + 1, &payload,
                                       depth);
        if (why)
            return why;
    } else if (br->nfields)
        return "lacks its branch's fields ('$Branch(a, b)')";
    else {
        *i = e;
        payload = rfx_fn_env_pack(rio->env, f + 1, 0);
    }
    f[1] = payload;
    uint32_t id = payload == UINT32_MAX ? UINT32_MAX : rfx_fn_env_pack(rio->env, f, 2);
    if (id == UINT32_MAX)
        return "could not be stored (out of memory)";
    *out = id;
    return NULL;
}

static const char *parse_value(const rfx_record_io *rio, int type, const char *s, size_t n, size_t *i, uint32_t *out,
                               int depth)
{
    int rt = rfx_program_record_type(rio->prog, type), at = rfx_program_adt_type(rio->prog, type);
    if (rt >= 0)
        return parse_record(rio, rt, s, n, i, out, depth);
    if (at >= 0)
        return parse_adt(rio, at, s, n, i, out, depth);
    size_t k = skip_blanks(s, n, *i), e;
    rfx_prim prim = rio->prog->types[type].prim;
    if (prim == RFX_SYMBOL && k < n && s[k] == '"') {   /* a quoted symbol: \" and \\ inside */
        char *buf = rfx_malloc(n - k + 1);
        if (!buf)
            return "could not be stored (out of memory)";
        size_t len = 0;
        for (e = k + 1; e < n && s[e] != '"'; e++)
            buf[len++] = s[e] == '\\' && e + 1 < n ? s[++e] : s[e];
        if (e >= n) {
            free(buf);
            return "has a symbol without its closing quote";
        }
        uint32_t id = rfx_symtab_intern(rio->syms, buf, len);
        free(buf);
        if (id == UINT32_MAX)
            return "could not be stored (out of memory)";
        *out = id;
        *i = e + 1;
        return NULL;
    }
    for (e = k; e < n && s[e] != ',' && s[e] != ']' && s[e] != ')'; e++)
        ;
    size_t end = e;
    while (end > k && (s[end - 1] == ' ' || s[end - 1] == '\t'))
        end--;
    const char *why = rfx_parse_value(s + k, end - k, prim, rio->syms, out);
    if (why)
        return why;
    *i = e;
    return NULL;
}

const char *rfx_record_parse(const rfx_record_io *rio, int type, const char *s, size_t n, uint32_t *out)
{
    size_t i = 0;
    const char *why = parse_value(rio, type, s, n, &i, out, 0);
    if (!why && skip_blanks(s, n, i) != n)
        why = "has text after its record";
    return why;
}

/* ---- writing ----------------------------------------------------------------------- */
bool rfx_text_put(rfx_text *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = rfx_realloc(t->p, cap);
        if (!p)
            return false;
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    return true;
}

bool rfx_record_format(const rfx_record_io *rio, int type, uint32_t v, rfx_text *t, int depth)
{
    const rfx_program *p = rio->prog;
    int rt = rfx_program_record_type(p, type), at = rfx_program_adt_type(p, type);
    if (at >= 0 && rfx_program_adt_enum(p, at))   /* $B: an enumeration's value is its branch's number */
        return v < (uint32_t)p->types[at].nbranches
                   ? rfx_text_put(t, "$", 1) &&
                         rfx_text_put(t, p->types[at].branches[v].name, strlen(p->types[at].branches[v].name))
                   : rfx_text_put(t, "nil", 3);
    if (at >= 0) {   /* $B(a, b), or $B */
        int n;
        const uint32_t *f = rfx_records_fields(rfx_fn_env_records(rio->env), v, &n);
        if (!f || f[0] >= (uint32_t)p->types[at].nbranches || depth > 64)
            return rfx_text_put(t, "nil", 3);
        const rfx_branch *br = &p->types[at].branches[f[0]];
        bool ok = rfx_text_put(t, "$", 1) && rfx_text_put(t, br->name, strlen(br->name));
        if (br->payload >= 0) {   /* [branch, [fields...]]: the inner record's fields */
            f = n >= 2 ? rfx_records_fields(rfx_fn_env_records(rio->env), f[1], &n) : NULL;
            if (!f)
                return ok;
        } else   /* [branch, field] */
            f++, n--;
        for (int c = 0; ok && c < n && c < br->nfields; c++)
            ok = rfx_text_put(t, c ? ", " : "(", c ? 2 : 1) &&
                 rfx_record_format(rio, br->fields[c + 1], f[c], t, depth + 1);
        return ok && (br->nfields == 0 || rfx_text_put(t, ")", 1));
    }
    if (rt < 0) {
        rfx_prim prim = p->types[type].prim;
        if (prim == RFX_SYMBOL)
            return rfx_text_put(t, rfx_symtab_str(rio->syms, v), rfx_symtab_len(rio->syms, v));
        char buf[32];
        int n = rfx_format_value(buf, sizeof buf, prim, v);
        return rfx_text_put(t, buf, (size_t)n);
    }
    int n;
    const uint32_t *f = rfx_records_fields(rfx_fn_env_records(rio->env), v, &n);
    if (!f || depth > 64)   /* nil, or a cycle no program makes */
        return rfx_text_put(t, "nil", 3);
    bool ok = rfx_text_put(t, "[", 1);
    for (int c = 0; ok && c < n && c < p->types[rt].nfields; c++) {
        if (c)
            ok = rfx_text_put(t, ", ", 2);
        ok = ok && rfx_record_format(rio, p->types[rt].fields[c], f[c], t, depth + 1);
    }
    return ok && rfx_text_put(t, "]", 1);
}

/* ---- order -------------------------------------------------------------------------- */
int rfx_record_compare(const rfx_record_io *rio, int type, uint32_t a, uint32_t b, int depth)
{
    if (a == b)
        return 0;
    const rfx_program *p = rio->prog;
    int rt = rfx_program_record_type(p, type);
    if (rt < 0 && rfx_program_adt_enum(p, type))   /* by branch */
        return a < b ? -1 : 1;
    if (rt < 0 && rfx_program_adt_type(p, type) >= 0) {   /* by branch, then its fields */
        const rfx_records *t = rfx_fn_env_records(rio->env);
        int na, nb;
        const uint32_t *fa = rfx_records_fields(t, a, &na), *fb = rfx_records_fields(t, b, &nb);
        if (!fa || !fb || fa[0] != fb[0] || depth > 64)
            return !fa || !fb || fa[0] == fb[0] ? (a < b ? -1 : 1) : fa[0] < fb[0] ? -1 : 1;
        const int *ft;
        int nf = rfx_program_fields(p, type, (int)fa[0], &ft);
        for (int c = 1; c < na && c < nb && c < nf; c++) {
            int k = rfx_record_compare(rio, ft[c], fa[c], fb[c], depth + 1);
            if (k)
                return k;
        }
        return a < b ? -1 : 1;
    }
    if (rt < 0) {
        switch (p->types[type].prim) {
        case RFX_NUMBER: return (int32_t)a < (int32_t)b ? -1 : 1;
        case RFX_FLOAT: {
            float fa, fb;
            memcpy(&fa, &a, 4);
            memcpy(&fb, &b, 4);
            return fa < fb ? -1 : fa > fb ? 1 : a < b ? -1 : 1;
        }
        case RFX_SYMBOL: {
            size_t na = rfx_symtab_len(rio->syms, a), nb = rfx_symtab_len(rio->syms, b);
            int c = memcmp(rfx_symtab_str(rio->syms, a), rfx_symtab_str(rio->syms, b), na < nb ? na : nb);
            return c ? c : na < nb ? -1 : na > nb ? 1 : a < b ? -1 : 1;
        }
        default: return a < b ? -1 : 1;
        }
    }
    if (!a || !b || depth > 64)   /* nil first */
        return a < b ? -1 : 1;
    const rfx_records *t = rfx_fn_env_records(rio->env);
    int na, nb;
    const uint32_t *fa = rfx_records_fields(t, a, &na), *fb = rfx_records_fields(t, b, &nb);
    if (!fa || !fb)
        return a < b ? -1 : 1;
    for (int c = 0; c < na && c < nb && c < p->types[rt].nfields; c++) {
        int k = rfx_record_compare(rio, p->types[rt].fields[c], fa[c], fb[c], depth + 1);
        if (k)
            return k;
    }
    return a < b ? -1 : 1;
}
