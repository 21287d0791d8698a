/* util.c: arenas, growable arrays, the symbol table and user diagnostics. */
#include "frontend.h"
#include "fault.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------------------- */
typedef struct arena_block {
    struct arena_block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} arena_block;

struct rfx_arena {
    arena_block *head;
};

rfx_arena *rfx_arena_new(void)
{
    return rfx_calloc(1, sizeof(rfx_arena));
}

void *rfx_arena_alloc(rfx_arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    arena_block *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t bs = size > 60000 ? size : 64 * 1024 - sizeof(arena_block);
        b = rfx_malloc(sizeof(arena_block) + bs);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->size = bs;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

char *rfx_arena_strdup(rfx_arena *a, const char *s, size_t n)
{
    char *d = rfx_arena_alloc(a, n + 1);
    if (d) {
        rfx_memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

void rfx_arena_free(rfx_arena *a)
{
    if (!a)
        return;
    for (arena_block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a);
}

bool rfx_grow(void **items, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return true;
    size_t nc = *cap ? *cap : 8;
    while (nc < need)
        nc *= 2;
    void *p = rfx_realloc(*items, nc * elem_size);
    if (!p)
        return false;
    *items = p;
    *cap = nc;
    return true;
}

/* ---- symbol table (open addressing over ids) ---------------------------------------- */
struct rfx_symtab {
    char **strs;               /* id -> string (malloc'ed) */
    uint32_t *lens;            /* id -> length */
    size_t n, cap;
    uint32_t *slots;           /* hash slots holding id+1, 0 = empty */
    size_t nslots;
};

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;           /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

rfx_symtab *rfx_symtab_new(void)
{
    rfx_symtab *t = rfx_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nslots = 1024;
    t->slots = rfx_calloc(t->nslots, sizeof(uint32_t));
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
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->lens);
    free(t->slots);
    free(t);
}

static bool symtab_rehash(rfx_symtab *t)
{
    size_t ns = t->nslots * 2;
    uint32_t *slots = rfx_calloc(ns, sizeof(uint32_t));
    if (!slots)
        return false;
    for (size_t id = 0; id < t->n; id++) {
        size_t h = hash_bytes(t->strs[id], t->lens[id]) & (ns - 1);
        while (slots[h])
            h = (h + 1) & (ns - 1);
        slots[h] = (uint32_t)id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = ns;
    return true;
}

uint32_t rfx_symtab_intern(rfx_symtab *t, const char *s, size_t n)
{
    size_t h = hash_bytes(s, n) & (t->nslots - 1);
    while (t->slots[h]) {
        uint32_t id = t->slots[h] - 1;
        if (t->lens[id] == n && memcmp(t->strs[id], s, n) == 0)
            return id;
        h = (h + 1) & (t->nslots - 1);
    }
    if (t->n >= UINT32_MAX - 1)
        return UINT32_MAX;
    size_t cap = t->cap;
    if (!rfx_grow((void **)&t->strs, &cap, t->n + 1, sizeof(char *)))
        return UINT32_MAX;
    size_t cap2 = t->cap;
    if (!rfx_grow((void **)&t->lens, &cap2, t->n + 1, sizeof(uint32_t)))
        return UINT32_MAX;
    t->cap = cap < cap2 ? cap : cap2;
    char *copy = rfx_malloc(n + 1);
    if (!copy)
        return UINT32_MAX;
    rfx_memcpy(copy, s, n);
    copy[n] = 0;
    uint32_t id = (uint32_t)t->n++;
    t->strs[id] = copy;
    t->lens[id] = (uint32_t)n;
    t->slots[h] = id + 1;
    if (t->n * 2 > t->nslots && !symtab_rehash(t)) {
        /* keep the table consistent: the entry stays, the table is merely fuller */
    }
    return id;
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

/* ---- diagnostics -------------------------------------------------------------- */
static void quote_line(FILE *out, const char *src, rfx_loc loc);

/* A file's text (NUL-ended, malloc'ed), or NULL: an included file's line to quote. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    while (f && rfx_grow((void **)&buf, &cap, n + 4097, 1)) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        buf[n] = 0;
        if (!got)
            break;
    }
    if (f)
        fclose(f);
    return buf;
}

/* The file and line loc stands for: through the preprocessor's line map, if any. */
static const char *map_loc(const rfx_diag *d, rfx_loc *loc)
{
    if (!d->map || !d->map->n || loc->line <= 0)
        return d->file;
    int k = d->map->n - 1;
    while (k > 0 && d->map->marks[k].at > loc->line)
        k--;
    const rfx_linemark *m = &d->map->marks[k];
    if (m->at > loc->line)
        return d->file;
    loc->line = m->line + (loc->line - m->at);
    return m->file;
}

const char *rfx_diag_where(const rfx_diag *d, rfx_loc loc, char *buf, size_t cap)
{
    const char *file = map_loc(d, &loc);
    if (strcmp(file, d->file) == 0)
        snprintf(buf, cap, "line %d", loc.line);
    else
        snprintf(buf, cap, "%s:%d", file, loc.line);
    return buf;
}

static void diag_emit(rfx_diag *d, rfx_loc loc, const char *kind, const char *fmt, va_list ap)
{
    FILE *out = d->out ? d->out : stderr;
    const char *file = map_loc(d, &loc), *src = d->src;
    char *owned = NULL;
    if (strcmp(file, d->file) != 0)
        src = owned = slurp(file);
    if (loc.line > 0)
        fprintf(out, "%s:%d:%d: %s: ", file, loc.line, loc.col > 0 ? loc.col : 1, kind);
    else
        fprintf(out, "%s: %s: ", file, kind);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    if (loc.line > 0 && src)
        quote_line(out, src, loc);
    free(owned);
}

/* The source line of loc, and a caret under its column. */
static void quote_line(FILE *out, const char *src, rfx_loc loc)
{
    const char *p = src;
    for (int l = 1; l < loc.line && *p; p++)
        if (*p == '\n')
            l++;
    const char *e = p;
    while (*e && *e != '\n' && *e != '\r')
        e++;
    /* long lines: quote a window around the column */
    int col = loc.col > 0 ? loc.col : 1;
    const char *from = p;
    bool cut_left = false, cut_right = false;
    if (e - p > 160 && col > 80) {
        from = p + col - 80;
        cut_left = true;
    }
    if (e - from > 160) {
        e = from + 160;
        cut_right = true;
    }
    fprintf(out, "  %s%.*s%s\n  %s", cut_left ? "..." : "", (int)(e - from), from, cut_right ? "..." : "",
            cut_left ? "   " : "");
    for (const char *c = from; c < p + col - 1 && c < e; c++)
        fputc(*c == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
}

void rfx_diag_error(rfx_diag *d, rfx_loc loc, const char *fmt, ...)
{
    d->errors++;
    if (d->max_errors && d->errors > d->max_errors)
        return;
    va_list ap;
    va_start(ap, fmt);
    diag_emit(d, loc, "error", fmt, ap);
    va_end(ap);
}

void rfx_diag_warning(rfx_diag *d, rfx_loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_emit(d, loc, "warning", fmt, ap);
    va_end(ap);
}

const char *rfx_prim_name(rfx_prim p)
{
    static const char *names[] = {"number", "unsigned", "float", "symbol"};
    return names[p];
}

const char *rfx_binop_str(rfx_binop op)
{
    static const char *s[] = {"+",   "-",   "*",    "/",   "%",   "band", "bor", "bxor", "bshl",
                              "bshr", "bshru", "land", "lor", "lxor", "^",    "min", "max"};
    return s[op];
}

const char *rfx_cmpop_str(rfx_cmpop op)
{
    static const char *s[] = {"<", "<=", ">", ">=", "=", "!="};
    return s[op];
}

const char *rfx_aggfn_str(rfx_aggfn fn)
{
    static const char *s[] = {"count", "sum", "min", "max", "mean"};
    return s[fn];
}

static const char *const functor_names[RFX_FN_COUNT] = {
    "cat", "strlen", "substr", "ord", "contains", "match", "to_number", "to_unsigned", "to_float", "to_string",
    "as", "range", "autoinc"};

const char *rfx_functor_name(rfx_functor f)
{
    return functor_names[f];
}

int rfx_functor_find(const char *name)
{
    for (int f = 0; f < RFX_FN_COUNT; f++)
        if (strcmp(functor_names[f], name) == 0)
            return f;
    return -1;
}
