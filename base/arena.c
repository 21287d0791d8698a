/* arena.c: memory by lifetime (arenas) and growable arrays. */
#include "base.h"

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
