/* util.c: user diagnostics and the names of functors. */
#include "frontend.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
    if (d->instance)
        fprintf(out, " (in component instance '%s')", d->instance);
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
    if (d->no_warnings)
        return;
    va_list ap;
    va_start(ap, fmt);
    diag_emit(d, loc, "warning", fmt, ap);
    va_end(ap);
}

static const char *const functor_names[RFX_FN_COUNT] = {
    "cat", "strlen", "substr", "ord", "contains", "match", "to_number", "to_unsigned", "to_float", "to_string",
    "as", "range", "autoinc", "$record", "$nil", "$field", "$user", "to_date", "date_year", "date_month",
    "date_day", "add_months", "like", "$pair", "$hi", "$lo"};

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
