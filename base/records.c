/* records.c: the record table (base.h): tuples of 32-bit values interned to dense ids,
 * as the symbol table interns strings. Each record is stored once, its fields one after
 * another in one array; an open-addressing hash of ids finds a tuple's id. */
#include "base.h"

#include <stdlib.h>
#include <string.h>

struct rfx_records {
    uint32_t *fields;          /* every record's fields, one after another */
    size_t nfields, capfields;
    uint32_t *start;           /* per id: where its fields begin (id 0, nil, has none) */
    uint8_t *arity;            /* per id: its number of fields */
    size_t n, capn;            /* ids in use, nil included */
    uint32_t *slot;            /* hash of ids, 0 for empty; a power of two in size */
    size_t capslot;
};

static uint64_t hash_fields(const uint32_t *f, int n)
{
    return rfx_fnv1a(RFX_FNV_INIT, f, sizeof(uint32_t) * (size_t)n);
}

rfx_records *rfx_records_new(void)
{
    rfx_records *r = rfx_calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->capn = 64;
    r->capslot = 128;
    r->start = rfx_malloc(r->capn * sizeof *r->start);
    r->arity = rfx_malloc(r->capn);
    r->slot = rfx_calloc(r->capslot, sizeof *r->slot);
    if (!r->start || !r->arity || !r->slot) {
        rfx_records_free(r);
        return NULL;
    }
    r->start[0] = 0;
    r->arity[0] = 0;
    r->n = 1;   /* nil */
    uint32_t none = 0;
    if (rfx_records_pack(r, &none, 0) != 1) {   /* the empty record is 1, as in Soufflé (a user
                                                 * functor may make `[branch, 1]` itself) */
        rfx_records_free(r);
        return NULL;
    }
    return r;
}

void rfx_records_free(rfx_records *r)
{
    if (!r)
        return;
    free(r->fields);
    free(r->start);
    free(r->arity);
    free(r->slot);
    free(r);
}

static bool same(const rfx_records *r, uint32_t id, const uint32_t *f, int n)
{
    return r->arity[id] == n && memcmp(r->fields + r->start[id], f, sizeof(uint32_t) * (size_t)n) == 0;
}

static bool grow_slots(rfx_records *r)
{
    size_t cap = r->capslot * 2;
    uint32_t *slot = rfx_calloc(cap, sizeof *slot);
    if (!slot)
        return false;
    for (size_t id = 1; id < r->n; id++) {
        size_t k = hash_fields(r->fields + r->start[id], r->arity[id]) & (cap - 1);
        while (slot[k])
            k = (k + 1) & (cap - 1);
        slot[k] = (uint32_t)id;
    }
    free(r->slot);
    r->slot = slot;
    r->capslot = cap;
    return true;
}

uint32_t rfx_records_pack(rfx_records *r, const uint32_t *f, int n)
{
    if (n < 0 || n > RFX_MAX_RECORD_FIELDS)
        return UINT32_MAX;
    uint64_t h = hash_fields(f, n);
    size_t k = h & (r->capslot - 1);
    for (; r->slot[k]; k = (k + 1) & (r->capslot - 1))
        if (same(r, r->slot[k], f, n))
            return r->slot[k];
    if (r->n >= UINT32_MAX - 1)
        return UINT32_MAX;
    if (!rfx_grow((void **)&r->fields, &r->capfields, r->nfields + (size_t)n + 1, sizeof(uint32_t)))
        return UINT32_MAX;
    if (r->n == r->capn) {
        size_t c1 = r->capn, c2 = r->capn;
        if (!rfx_grow((void **)&r->start, &c1, r->n + 1, sizeof(uint32_t)) ||
            !rfx_grow((void **)&r->arity, &c2, r->n + 1, 1))
            return UINT32_MAX;
        r->capn = c1 < c2 ? c1 : c2;
    }
    uint32_t id = (uint32_t)r->n++;
    r->start[id] = (uint32_t)r->nfields;
    r->arity[id] = (uint8_t)n;
    memcpy(r->fields + r->nfields, f, sizeof(uint32_t) * (size_t)n);
    r->nfields += (size_t)n;
    r->slot[k] = id;
    if (2 * r->n > r->capslot && !grow_slots(r)) {
        r->n--;   /* not kept: the table stays as it was */
        r->nfields -= (size_t)n;
        r->slot[k] = 0;
        return UINT32_MAX;
    }
    return id;
}

const uint32_t *rfx_records_fields(const rfx_records *r, uint32_t id, int *n)
{
    if (id == 0 || id >= r->n) {
        *n = 0;
        return NULL;
    }
    *n = r->arity[id];
    return r->fields + r->start[id];
}
