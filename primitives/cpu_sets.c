/* cpu_sets.c: a CPU join's output read as a set (only a SORT_UNIQUE reads it) drops its
 * repeats as it goes, part by part (primitives/cpu_sets.h). */
#include "cpu_sets.h"
#include "cpu_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The rows of a part's first mark: SET_PART_BYTES of them. */
static size_t mark_rows(int arity)
{
    return arity ? SET_PART_BYTES / (sizeof(uint32_t) * (size_t)arity) : SIZE_MAX;
}

void rfx_set_parts_init(set_part *sp, int c, int nout)
{
    for (int i = 0; i < c; i++)
        sp[i] = (set_part){mark_rows(nout), 0, false};
}

/* o = its sorted set of rows [0, sp->set) united with the rest made a set: the rest is
 * sorted alone, so rows already a set are not sorted again. */
void rfx_set_part_drop(rfx_rows *o, set_part *sp)
{
    const size_t a = (size_t)o->arity, before = o->n;
    rfx_rows tail, set = {o->data, sp->set, sp->set, o->arity};
    rfx_rows_init(&tail, o->arity);
    if (rfx_rows_reserve(&tail, before - sp->set) != RFX_OK) {
        sp->mark = SIZE_MAX;   /* no memory to sort: the SORT_UNIQUE after does it all */
        return;
    }
    rfx_memcpy(tail.data, o->data + sp->set * a, sizeof(uint32_t) * a * (before - sp->set));
    tail.n = before - sp->set;
    o->n = sp->set;
    rfx_status st = rfx_cpu_sort(&tail, 1);
    if (st == RFX_OK)
        st = rfx_cpu_unique(&tail, 1);
    if (st == RFX_OK)
        st = rfx_cpu_union(&set, &tail, o, 1);
    if (st != RFX_OK) {        /* o keeps its set; the rest goes back after it, unsorted */
        o->n = sp->set;
        rfx_rows_append(o, &tail);
        sp->mark = SIZE_MAX;
        rfx_rows_free(&tail);
        return;
    }
    rfx_rows_free(&tail);
    sp->set = o->n;
    sp->dropped |= o->n < before;
    size_t least = mark_rows(o->arity);
    sp->mark = o->n * 2 > before ? SIZE_MAX : o->n * 2 > least ? o->n * 2 : least;
}

double rfx_linear_count(const rfx_rows *r, size_t from, size_t step, const int *cols, int ncols, int bits,
                        size_t *seen)
{
    const size_t nbits = (size_t)1 << bits;
    uint64_t *map = rfx_calloc(nbits / 64, sizeof(uint64_t));
    *seen = 0;
    if (!map)
        return -1;
    const size_t a = (size_t)r->arity;
    uint32_t t[64];
    for (size_t i = from; i < r->n; i += step, (*seen)++) {
        const uint32_t *row = r->data + i * a;
        if (cols)
            for (int x = 0; x < ncols; x++)
                t[x] = row[cols[x]];
        uint64_t h = rfx_row_hash(cols ? t : row, cols ? ncols : (int)a) >> (64 - bits);
        map[h / 64] |= 1ull << (h % 64);
    }
    size_t set_bits = 0;
    for (size_t w = 0; w < nbits / 64; w++)
        set_bits += (size_t)__builtin_popcountll(map[w]);
    free(map);
    if (set_bits >= nbits - nbits / 64)   /* too full to tell */
        return -1;
    return (double)nbits * log((double)nbits / (double)(nbits - set_bits));
}

/* Whether o's rows since its sorted set are mostly repeats (distinct rows under half), on
 * every second row by linear counting over a 2^20-bit map (in a core's cache). A pass of
 * hashing spares a part with few repeats the sorts, which cost more than they save there
 * (a sample under-counts repeats: the test errs towards not sorting). */
bool rfx_set_part_repeats(const rfx_rows *o, const set_part *sp)
{
    size_t seen;
    double distinct = rfx_linear_count(o, sp->set, 2, NULL, 0, 20, &seen);
    return distinct >= 0 && distinct * 2 < (double)seen;
}

/* At a chunk's end a part that has dropped repeats, or holds SET_PART_MIN rows or more that
 * are mostly repeats, becomes a sorted set (unless sorting stopped paying or memory ran
 * short: sp->mark); the others are left to the SORT_UNIQUE after (a thin recursion's joins
 * sort nothing twice). */
enum { SET_PART_MIN = 1 << 16 };
void rfx_set_part_end(rfx_rows *o, set_part *sp)
{
    if (sp->mark != SIZE_MAX && o->n > sp->set && (sp->dropped || (o->n >= SET_PART_MIN && rfx_set_part_repeats(o, sp))))
        rfx_set_part_drop(o, sp);
}

/* dst = the parts' rows. Where some part became a sorted set and the others can be made
 * sets, dst is their union, merged pairwise: the SORT_UNIQUE reading it finds it in order. */
rfx_status rfx_join_parts(rfx_rows *parts, set_part *sets, int c, int nout, rfx_rows *dst, int nthreads)
{
    bool any_set = false, all_sets = sets != NULL;
    for (int i = 0; all_sets && i < c; i++)
        any_set |= parts[i].n > 0 && sets[i].set == parts[i].n;
    for (int i = 0; any_set && all_sets && i < c; i++) {
        if (sets[i].set < parts[i].n && sets[i].mark != SIZE_MAX)
            rfx_set_part_drop(&parts[i], &sets[i]);
        all_sets = sets[i].set == parts[i].n;
    }
    all_sets &= any_set;
    if (all_sets)
        for (int step = 1; step < c; step *= 2)
            for (int i = 0; i + step < c; i += 2 * step) {
                rfx_status st = rfx_cpu_union(&parts[i], &parts[i + step], &parts[i], nthreads);
                if (st)
                    return st;
                rfx_rows_free(&parts[i + step]);
            }
    if (c == 1 || all_sets) {
        rfx_rows_free(dst);
        *dst = parts[0];
        rfx_rows_init(&parts[0], nout);
        return RFX_OK;
    }
    if (dst->arity != nout) {
        rfx_rows_free(dst);
        rfx_rows_init(dst, nout);
    }
    if (nout == 0) {           /* nullary: how many pairs matched, as the parts counted them */
        dst->n = 0;
        for (int i = 0; i < c; i++)
            dst->n += parts[i].n;
        return RFX_OK;
    }
    return rfx_rows_concat(parts, (size_t)c, dst, nthreads);
}

