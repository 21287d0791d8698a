/* primitives.h: the relational operator skeletons over packed rows of 32-bit values
 * (row-major: tuple i is rows[i*arity .. i*arity+arity-1]), CPU implementations.
 * A relation in this layout is "sorted" when its rows are in lexicographic order of
 * their unsigned 32-bit columns; key prefixes of sorted relations are sorted too.
 *
 * Conventions (shared with the CUDA versions of issue 3):
 * - Outputs are caller-allocated; functions that cannot know their output size say how
 *   to size it (upper bound) or return a freshly sized rfx_rows the caller owns.
 * - `nthreads` >= 1 bounds the parallelism; small inputs run on the calling thread.
 * - Functions return an rfx_status; RFX_ERR_DIV0 reports a division by zero in an
 *   expression (the tuple's value is then undefined, the run must stop). */
#ifndef RFX_PRIMITIVES_H
#define RFX_PRIMITIVES_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>

/* Where a device's start in the background is (cuda_prims.h's rfx_gpu_warm; builds
 * without CUDA are always at NONE). */
enum { RFX_WARM_NONE, RFX_WARM_RUNNING, RFX_WARM_READY, RFX_WARM_FAILED };

/* An owned, growable relation buffer. */
typedef struct rfx_rows {
    uint32_t *data;            /* n * arity values (NULL when empty or arity 0) */
    size_t n;                  /* tuples */
    size_t cap;                /* tuples allocated */
    int arity;
} rfx_rows;

void rfx_rows_init(rfx_rows *r, int arity);
void rfx_rows_free(rfx_rows *r);
rfx_status rfx_rows_reserve(rfx_rows *r, size_t n);
/* Appends one tuple. */
rfx_status rfx_rows_push(rfx_rows *r, const uint32_t *t);
void rfx_rows_swap(rfx_rows *a, rfx_rows *b);
/* Appends src's rows to dst (same arity; arity 0 holds only a size: at most one tuple). */
rfx_status rfx_rows_append(rfx_rows *dst, const rfx_rows *src);
/* Lexicographic order of the first k values of two tuples: <0, 0, >0. */
int rfx_tuple_cmp(const uint32_t *a, const uint32_t *b, int k);
/* First row of sorted r in [from, n) whose first k columns are >= key (upper: > key). */
size_t rfx_rows_bound(const rfx_rows *r, size_t from, const uint32_t *key, int k, bool upper);
/* dst = parts[0] ++ parts[1] ++ ... (each of dst's arity), copied once into a buffer of
 * the exact size on up to nthreads threads; dst is replaced only on success. */
rfx_status rfx_rows_concat(const rfx_rows *parts, size_t n, rfx_rows *dst, int nthreads);

/* Sorts rows lexicographically (LSD radix, parallel). */
rfx_status rfx_cpu_sort(rfx_rows *r, int nthreads);
/* Sorts r stably on its first nkeys columns alone (rows of equal keys keep their order). */
rfx_status rfx_cpu_sort_leading(rfx_rows *r, int nkeys, int nthreads);
/* Sorts r where its rows are sorted on their first `sorted` columns already (a plan's hint)
 * and rows equal on those come in short runs: each run sorted alone, in one pass; *repeats
 * whether a run held two rows or more (else r is a set; true where it returns false). False
 * where that does not hold
 * (the hint wrong or a run too long): r's rows then permuted within some runs, for
 * rfx_cpu_sort to sort. */
bool rfx_cpu_sort_runs(rfx_rows *r, int sorted, int nthreads, bool *repeats);
/* out = the runs, each sorted on its first `keys` columns (<= 0: all), merged into one
 * relation sorted so, stably (rows of equal keys in the order of their runs), on one thread
 * (out of core: the device's sorted chunks). */
rfx_status rfx_cpu_merge_runs(const rfx_rows *runs, size_t nruns, int keys, rfx_rows *out);
/* Removes adjacent duplicates in place (input sorted -> set). */
rfx_status rfx_cpu_unique(rfx_rows *r, int nthreads);
/* Whether rows are sorted and duplicate-free (for assertions and tests). */
bool rfx_cpu_is_set(const rfx_rows *r);

/* dst = out(sigma_pred(src)); pred may be NULL. dst has arity nout. */
rfx_status rfx_cpu_mapfilter(const rfx_rows *src, const rfx_rx *pred, rfx_rx *const *out, int nout,
                             rfx_rows *dst, int nthreads);
/* dst = out(sigma_pred(a |x|_k b)); a and b sorted on their first k columns; k = 0 is the
 * cross product. as_set: dst is read as a set (by a sort with unique), so the join may drop
 * repeated rows as it goes (it keeps at least one of each) and write them in any order. */
rfx_status rfx_cpu_join(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pred,
                        rfx_rx *const *out, int nout, bool as_set, rfx_rows *dst, int nthreads);
/* rfx_cpu_join with a in any order (b sorted on its first k columns, k > 0): each row of a
 * searched in b, or a sorted first where that costs less; dst in no particular order. */
rfx_status rfx_cpu_probe_join(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pred,
                              rfx_rx *const *out, int nout, bool as_set, rfx_rows *dst, int nthreads);
/* rfx_cpu_join (probe: rfx_cpu_probe_join) with b sorted on its first k + 1 columns: the
 * comparisons of pred that bound b's column k by a's values (rfx_rx_range_of) narrow each
 * row of a to the range of its key group they allow (a band join, `y >= x, y <= x + 2`,
 * k = 0: searches, not the cross product tested). */
rfx_status rfx_cpu_range_join(const rfx_rows *a, const rfx_rows *b, int k, const rfx_rx *pred, rfx_rx *const *out,
                              int nout, bool as_set, bool probe, rfx_rows *dst, int nthreads);
/* dst = a u b, both sorted sets of one arity. */
rfx_status rfx_cpu_union(const rfx_rows *a, const rfx_rows *b, rfx_rows *dst, int nthreads);
/* dst = tuples of a whose first k columns do (keep=true) / do not (keep=false) occur as
 * a tuple of b; a sorted on its first k columns, b sorted with arity k. */
rfx_status rfx_cpu_semijoin(const rfx_rows *a, const rfx_rows *b, int k, bool keep, rfx_rows *dst,
                            int nthreads);
/* The same against the union of nb (at most 64) such sets, in one pass over a. */
rfx_status rfx_cpu_semijoin_sets(const rfx_rows *a, const rfx_rows *const *bs, int nb, int k, bool keep,
                                 rfx_rows *dst, int nthreads);
/* The same with a in any order (a probe: each row searched in the sets); dst keeps a's
 * order, or where the sets are large (a search a chain of cache misses) and a not far
 * smaller comes sorted on its first k columns (a copy of a sorted, then merged), or,
 * optional (a filter nothing depends on), is all of a. a == dst is allowed. */
rfx_status rfx_cpu_probe_sets(const rfx_rows *a, const rfx_rows *const *bs, int nb, int k, bool keep, bool optional,
                              rfx_rows *dst, int nthreads);
/* dst = each tuple of src followed by each value of range(from, to[, step]), the bounds
 * computed from the tuple by bounds[0..nb-1] (nb 2 or 3), in their type (Soufflé's range:
 * towards `to`, never reaching it; step 0 gives `from` once unless from = to). */
rfx_status rfx_cpu_range(const rfx_rows *src, rfx_rx *const *bounds, int nb, rfx_rows *dst);
/* dst = src's tuples (in order) that may enter a relation with choice domains d holding
 * the nheld sets held[k] (rfx_choice_select). */
rfx_status rfx_cpu_choice(const rfx_rows *src, const rfx_choice_domains *d, const rfx_rows *const *held,
                          int nheld, rfx_rows *dst);
/* dst = the pairs that the equivalence closure of cand's pairs and the held ones has and
 * held lacks, a sorted set (an eqrel relation's growth). held[0..nheld-1] are disjoint
 * sorted sets of pairs whose union is an equivalence on the elements it mentions. */
rfx_status rfx_cpu_eqrel(const rfx_rows *cand, const rfx_rows *const *held, int nheld, rfx_rows *dst, int nthreads);
/* dst = what src's tuples change in a relation with lattice attributes (its columns from
 * nkeys on) holding the disjoint sorted sets held[0..nheld-1] (one tuple a key among them):
 * per key of src, its values folded by lub[c] (an expression over $0 and $1 for column
 * nkeys+c) and then with the held ones, where the result differs from what is held; a
 * sorted set. RFX_ERR_DIV0 where a Lub failed (its reason in the plan's functor state). */
rfx_status rfx_cpu_lattice(const rfx_rows *src, int nkeys, rfx_rx *const *lub, const rfx_rows *const *held, int nheld,
                           rfx_rows *dst, int nthreads);
/* rows (in the order read) cut to the last of each key (the first nkeys columns), sorted:
 * what Soufflé's reading of a lattice relation's file keeps. */
rfx_status rfx_cpu_lattice_last(rfx_rows *rows, int nkeys, int nthreads);
/* dst = a's tuples each extended by fn over the group of b whose first k columns equal a's
 * first k; count/sum of an empty group give 0, min/max/mean drop the tuple. */
rfx_status rfx_cpu_aggregate(const rfx_rows *a, const rfx_rows *b, int k, rfx_aggfn fn, int col,
                             rfx_prim prim, rfx_rows *dst);

/* Fused groups (weaver/weaver.h), one pass each. */
#define RFX_FUSED_MAX_OUTS 8
#define RFX_FUSED_MAX_SRCS 8
#define RFX_FUSED_MAX_WIDTH 512    /* columns of a star join's sources together */
/* Launch geometry shared by the generated kernels (weaver/codegen.c) and their launcher
 * (primitives/gpu_fused.cu). */
#define RFX_FUSED_THREADS 256      /* threads per block */
#define RFX_FUSED_JOIN_CHUNK 8     /* rows of the first source per lane of a join count, at most */
/* dsts[k] = outs[k](sigma_preds[k](src)) for every k, reading src once; preds[k] may be
 * NULL; outs[k] NULL (or outs[k][x] NULL) means column x. */
rfx_status rfx_cpu_mapfilter_multi(const rfx_rows *src, int nouts, const rfx_rx *const *preds,
                                   rfx_rx *const *const *outs, const int *nout, rfx_rows *const *dsts, int nthreads);
/* dst = out(sigma_pred(srcs[0] |x|_k srcs[1] |x|_k ...)): every source sorted on its first
 * k columns, joined on them; expressions read the sources' columns concatenated; pre reads
 * srcs[0]'s alone and is tested first. Output in order of srcs[0], then srcs[1], ... (as_set:
 * as rfx_cpu_join's) */
rfx_status rfx_cpu_star_join(const rfx_rows *const *srcs, int nsrc, int k, const rfx_rx *pre, const rfx_rx *pred,
                             rfx_rx *const *out, int nout, bool as_set, rfx_rows *dst, int nthreads);

/* dst ++= src, src emptied: into an empty dst the rows move without a copy. */
rfx_status rfx_rows_move_append(rfx_rows *dst, rfx_rows *src, int nthreads);
/* rfx_rows_append with its copy on up to nthreads threads. */
rfx_status rfx_rows_append_parallel(rfx_rows *dst, const rfx_rows *src, int nthreads);

#endif
