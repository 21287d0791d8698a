/* cpu_sets.h (internal to primitives/): the parts of a CPU join whose output is read as a
 * set. */
#ifndef RFX_CPU_SETS_H
#define RFX_CPU_SETS_H

#include "primitives.h"

#include <stdint.h>

/* A chunk's output that only a SORT_UNIQUE reads drops its repeats each time it reaches a
 * mark: a join's output is often mostly repeats (many paths to one pair), and holding them
 * all can take more memory than the host has. The mark moves to twice what is left, so rows
 * without repeats are sorted a bounded number of times, and a part whose sort keeps over
 * half stops sorting (sorting the parts and merging them costs more than one sort of all
 * the rows unless most of them go). */
enum { SET_PART_BYTES = 16 << 20 };
typedef struct set_part {
    size_t mark;               /* rows at which the part next drops its repeats */
    size_t set;                /* its first rows that are a sorted set (the rest since) */
    bool dropped;              /* some were dropped: the part is made a set at its end */
} set_part;

/* Each of c parts' state for output rows of nout columns. */
void rfx_set_parts_init(set_part *sp, int c, int nout);
/* o = its rows made one sorted set (its first sp->set rows are one already). */
void rfx_set_part_drop(rfx_rows *o, set_part *sp);
/* Whether o's rows since its sorted set are mostly repeats (an estimate). */
bool rfx_set_part_repeats(const rfx_rows *o, const set_part *sp);
/* At a part's end: it becomes a sorted set where that pays. */
void rfx_set_part_end(rfx_rows *o, set_part *sp);
/* dst = the c parts' rows (sets: their states, or NULL): their union where they are sets. */
rfx_status rfx_join_parts(rfx_rows *parts, set_part *sets, int c, int nout, rfx_rows *dst, int nthreads);

/* A join read as a set whose output (cols, in the join's numbering: a's columns, then b's)
 * takes some non-key columns of a and some of b, and no key column (cpu_setjoin.c). */
bool rfx_cpu_setjoin_fits(int aa, int ba, int k, const int *cols, int nout);
/* Whether that join's rows are mostly repeats, so that making its groups sets pays: its rows
 * (estimated from a few of a's) over four times the distinct values a and b give its output
 * columns, multiplied (an estimate by linear counting); never where they are few. */
bool rfx_cpu_setjoin_pays(const rfx_rows *a, const rfx_rows *b, int k, const int *cols, int nout);
/* That join (pre, when given, a test of a's row alone), its rows grouped by a's columns and
 * each group's matches in b made a set as they are found: dst without repeats, sorted
 * where a's columns come first. */
rfx_status rfx_cpu_setjoin(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pre, const int *cols, int nout,
                           rfx_rows *dst, int nthreads);

/* Distinct tuples among r's rows from `from`, `step` apart (*seen of them), of columns
 * cols[0..ncols) (at most 64; NULL: every column), by linear counting: their hashes set bits
 * of a map of 2^bits, m bits left clear saying about 2^bits ln(2^bits / m) distinct tuples;
 * negative where the map fills (too many to tell) or memory runs out. */
double rfx_linear_count(const rfx_rows *r, size_t from, size_t step, const int *cols, int ncols, int bits,
                        size_t *seen);

/* Room for one more row in a chunk's output o (sp: its set state, or NULL). */
static inline bool rfx_set_part_room(rfx_rows *o, set_part *sp)
{
    if (sp && o->n >= sp->mark) {
        if (sp->dropped || rfx_set_part_repeats(o, sp))
            rfx_set_part_drop(o, sp);
        else
            sp->mark = SIZE_MAX;
    }
    return o->n < o->cap || rfx_rows_reserve(o, o->n + 1) == RFX_OK;
}

#endif
