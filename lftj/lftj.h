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

/* A two-column relation as a TrieArray: val0 its distinct first-column values, ptr0 (one
 * entry more) where each one's second-column values start in val1, val1 the second columns
 * of its distinct rows. Each part is a one-column rfx_rows (so it can be pinned). */
typedef struct rfx_lftj_trie {
    rfx_rows val0, ptr0, val1;
} rfx_lftj_trie;

typedef struct rfx_lftj_src {
    const rfx_rows *rows;      /* sorted; duplicates allowed */
    const int *colvar;         /* rows->arity entries, strictly increasing, each < nvars */
    const rfx_lftj_trie *trie; /* rows' TrieArray where the host keeps one (registered for
                                * copies: the out-of-core layer's), else NULL */
} rfx_lftj_src;

/* Checks the sources describe a join (every variable in some source, columns in
 * increasing variable order); false names the problem in why. */
bool rfx_lftj_valid(const rfx_lftj_src *srcs, int nsrc, int nvars, char *why, size_t whycap);

/* dst (arity nvars) = the join's bindings, sorted; when count is non-NULL only the
 * number of bindings is computed (the last variable is never materialised) and dst is
 * left untouched (may be NULL). Parallel over ranges of the first variable's values. */
rfx_status rfx_cpu_lftj(const rfx_lftj_src *srcs, int nsrc, int nvars, rfx_rows *dst, uint64_t *count,
                        int nthreads);

/* ---- boxing (boxing.c): joins whose inputs exceed a memory budget ---------------------- */
/* The boxes of a join: for each leading variable (some source's first column), cut
 * values 0 = c[0] < c[1] < ... < c[ncuts-1] = 2^32 splitting its domain into intervals;
 * the boxes are all combinations of one interval per leading variable. */
typedef struct rfx_lftj_boxes {
    int nvars;
    uint64_t **cuts;           /* per variable: its cuts, or NULL when it leads no source */
    int *ncuts;
    size_t nboxes;
    /* after rfx_lftj_boxes_bound: per source whose second column's variable is cut, per
     * interval of its first column's variable, the least and greatest second-column value
     * of that slice (least > greatest: no rows); NULL elsewhere */
    int nsrc;
    uint32_t **least, **most;
} rfx_lftj_boxes;

/* Cuts each leading variable's domain so that a box's slices add up to at most budget
 * bytes (a box exceeds it only where one value's rows alone do; sources that are one
 * relation led by one variable share their slice). The first leading variable is cut
 * least, as consecutive boxes share its slices. */
rfx_status rfx_lftj_partition(const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget, rfx_lftj_boxes *out);
void rfx_lftj_boxes_free(rfx_lftj_boxes *b);
/* Whether the boxes' results, concatenated in box order, are sorted: boxes run in order of
 * their leading variables' values, so unless a variable after the first was cut. */
bool rfx_lftj_boxes_in_order(const rfx_lftj_boxes *b);
/* Scans the sources once (nthreads) for the bounds that let rfx_lftj_box_slices tell a
 * box without bindings from its slices' second columns: a triangle's e(x, y) over an
 * interval of x holds no y below that interval when x < y, so up to half the boxes of an
 * oriented graph are empty and are neither copied nor joined. RFX_BOX_BOUNDS=0 skips it. */
rfx_status rfx_lftj_boxes_bound(rfx_lftj_boxes *b, const rfx_lftj_src *srcs, int nsrc, int nthreads);
/* Box `box`'s slice of each source, as views into the sources' rows (no copy). False when
 * the box has no bindings: a slice is empty, or (with bounds) a slice's second column has
 * no value in the box's interval of its variable. */
bool rfx_lftj_box_slices(const rfx_lftj_boxes *b, size_t box, const rfx_lftj_src *srcs, int nsrc, rfx_rows *views);

/* rfx_cpu_lftj over the boxes of `budget`: the same result, reading one box's slices at a
 * time. *nboxes (when non-NULL) says how many boxes were joined (not those without
 * bindings). */
rfx_status rfx_cpu_lftj_boxed(const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget, rfx_rows *dst,
                              uint64_t *count, int nthreads, size_t *nboxes);

/* ---- host TrieArrays (host_trie.c): the form a box's slices travel in ------------------- */
/* t = the TrieArray of rows (two columns, sorted, fewer than 2^32 - 1), built on nthreads
 * threads in one pass over rows without repeats, else two. RFX_ERR_LIMIT for other rows
 * (unsorted ones found so in the same pass); t is then empty. */
rfx_status rfx_lftj_trie_build(const rfx_rows *rows, int nthreads, rfx_lftj_trie *t);
void rfx_lftj_trie_free(rfx_lftj_trie *t);
/* The roots [*rlo, *rhi) of t holding rows [lo, hi) of the rows it was built from (their
 * values are val1[ptr0[*rlo]], ..., val1[ptr0[*rhi] - 1]). False where lo or hi splits a
 * first-column value's rows (a slice never does: it is cut at values). */
bool rfx_lftj_trie_roots(const rfx_lftj_trie *t, const rfx_rows *rows, size_t lo, size_t hi, size_t *rlo, size_t *rhi);

#endif
