/* lftj.h: the leapfrog triejoin (Veldhuizen; Red Fox thesis ch. 5), a worst-case
 * optimal join of several relations at once, for cyclic joins such as triangles and
 * k-cliques where binary joins blow up.
 *
 * The join binds variables 0, 1, ..., nvars-1 in that order. Each source is a relation
 * sorted lexicographically whose columns hold variables in increasing order (colvar[c]
 * is the variable of column c, colvar[0] < colvar[1] < ...); a sorted relation is read as
 * its trie (column c is trie level c). At each variable, the sources whose next column
 * holds it are intersected: the smallest range drives, the others follow by galloping
 * seeks. The result holds every binding of all variables, in lexicographic order, once. */
#ifndef RFX_LFTJ_H
#define RFX_LFTJ_H

#include "primitives.h"

typedef struct rfx_lftj_src {
    const rfx_rows *rows;      /* sorted; duplicates allowed */
    const int *colvar;         /* rows->arity entries, strictly increasing, each < nvars */
} rfx_lftj_src;

/* Checks the sources describe a join (every variable in some source, columns in
 * increasing variable order); false names the problem in why. */
bool rfx_lftj_valid(const rfx_lftj_src *srcs, int nsrc, int nvars, char *why, size_t whycap);

/* dst (arity nvars) = the join's bindings, sorted; when count is non-NULL only the
 * number of bindings is computed (the last variable is never materialised) and dst is
 * left untouched (may be NULL). Parallel over ranges of the first variable's values. */
rfx_status rfx_cpu_lftj(const rfx_lftj_src *srcs, int nsrc, int nvars, rfx_rows *dst, uint64_t *count,
                        int nthreads);

#endif
