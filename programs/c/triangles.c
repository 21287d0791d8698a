/* triangles.c: counts and lists triangles of a SNAP edge list through librfx.
 *
 *   cc triangles.c $(pkg-config --cflags --libs rfx) -o triangles
 *   ./triangles graph.txt [N]        # the count, then the first N triangles (default 5)
 *
 * The program reads the edges itself and inserts them as C arrays, to show rfx.h's
 * insert / run / cursor cycle; rfx could equally read the file with .input. */
#include <rfx.h>

#include <stdio.h>
#include <stdlib.h>

static const char *program =
    ".decl edge(x: number, y: number)\n"
    ".decl e(x: number, y: number)\n"
    "e(x, y) :- edge(x, y), x < y.\n"
    "e(y, x) :- edge(x, y), y < x.\n"
    ".decl triangle(x: number, y: number, z: number)\n"
    "triangle(x, y, z) :- e(x, y), e(y, z), e(x, z).\n";

/* Reads "a b" pairs, skipping '#' comment lines; returns the number of edges. */
static size_t read_edges(FILE *f, int32_t **edges)
{
    size_t n = 0, cap = 1024;
    int32_t *v = malloc(sizeof(int32_t) * 2 * cap);
    char line[256];
    while (v && fgets(line, sizeof line, f)) {
        long a, b;
        if (line[0] == '#' || sscanf(line, "%ld %ld", &a, &b) != 2)
            continue;
        if (n == cap) {
            int32_t *w = realloc(v, sizeof(int32_t) * 4 * cap);
            if (!w) {
                free(v);
                v = NULL;
                break;
            }
            v = w;
            cap *= 2;
        }
        v[2 * n] = (int32_t)a;
        v[2 * n + 1] = (int32_t)b;
        n++;
    }
    *edges = v;
    return v ? n : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s GRAPH.txt [N]\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    int32_t *edges;
    size_t nedges = read_edges(f, &edges);
    fclose(f);
    if (!edges) {
        fprintf(stderr, "out of memory\n");
        return 3;
    }

    rfx_engine *e = rfx_open(NULL);   /* defaults: the GPU when there is one, all cores */
    int rc = e ? RFX_EXIT_OK : RFX_EXIT_RESOURCE;
    size_t count = 0;
    if (rc == RFX_EXIT_OK)
        rc = rfx_load_string(e, program, "triangles.dl");
    if (rc == RFX_EXIT_OK)
        rc = rfx_insert_numbers(e, "edge", edges, nedges);
    if (rc == RFX_EXIT_OK)
        rc = rfx_run(e);
    if (rc == RFX_EXIT_OK)
        rc = rfx_size(e, "triangle", &count);
    if (rc == RFX_EXIT_OK) {
        printf("%zu edges, %zu triangles\n", nedges, count);
        long shown = argc > 2 ? atol(argv[2]) : 5;
        rfx_cursor *c = rfx_cursor_open(e, "triangle");
        const rfx_value *t;
        for (long i = 0; c && i < shown && (t = rfx_cursor_next(c)); i++)
            printf("%d %d %d\n", t[0].i, t[1].i, t[2].i);
        rfx_cursor_close(c);
    } else {
        fputs(rfx_errmsg(e), stderr);
    }
    rfx_close(e);
    free(edges);
    return rc;
}
