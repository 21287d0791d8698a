/* cliques.c: the Datalog program of `rfx cliques` (rfx_clique_program), for the command
 * and for embedders (the Python package's rfx.cliques) alike. */
#include "rfx.h"

#include <stdarg.h>
#include <string.h>

/* Appends to buf what fits, and counts every byte meant. */
typedef struct text {
    char *buf;
    size_t cap, len;
} text;

__attribute__((format(printf, 2, 3))) static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->len < t->cap ? t->buf + t->len : NULL, t->len < t->cap ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n;
}

/* The clique rule over edges oriented from lower to higher id or, by_degree, from the
 * lower-degree end to the higher (ties by id): a high-degree vertex then keeps few
 * out-edges, so skewed graphs give each join level far less to intersect. */
size_t rfx_clique_program(char *buf, size_t cap, int k, bool count, bool by_degree, const char *edge_file)
{
    if (k < 2 || k > 8)
        return 0;
    text t = {buf, cap, 0};
    if (cap)
        buf[0] = 0;
    put(&t, ".decl edge(x: number, y: number)\n");
    if (edge_file) {
        put(&t, ".input edge(filename=\"");
        for (const char *s = edge_file; *s; s++)
            put(&t, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
        put(&t, "\", format=\"edges\")\n");
    }
    put(&t, ".decl e(x: number, y: number)\n");
    if (by_degree)
        put(&t, ".decl u(x: number, y: number)\n"
                "u(x, y) :- edge(x, y), x != y.\n"
                "u(y, x) :- edge(x, y), x != y.\n"
                ".decl deg(x: number, d: number)\n"
                "deg(x, d) :- u(x, _), d = count : { u(x, _) }.\n"
                "e(x, y) :- u(x, y), deg(x, dx), deg(y, dy), dx < dy.\n"
                "e(x, y) :- u(x, y), deg(x, d), deg(y, d), x < y.\n");
    else
        put(&t, "e(x, y) :- edge(x, y), x < y.\n"
                "e(y, x) :- edge(x, y), y < x.\n");
    put(&t, ".decl clique(");
    for (int i = 0; i < k; i++)
        put(&t, "%sv%d: number", i ? ", " : "", i);
    put(&t, ")\nclique(");
    for (int i = 0; i < k; i++)
        put(&t, "%sv%d", i ? ", " : "", i);
    put(&t, ") :- ");
    for (int i = 0, first = 1; i < k; i++)
        for (int j = i + 1; j < k; j++, first = 0)
            put(&t, "%se(v%d, v%d)", first ? "" : ", ", i, j);
    put(&t, ".\n%s", count ? ".printsize clique\n" : ".output clique\n");
    return t.len;
}
