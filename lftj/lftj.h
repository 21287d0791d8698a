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
#include "cuda_prims.h"

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
rfx_status rfx_lftj_partition(const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget, const rfx_tuning *tune,
                               rfx_lftj_boxes *out);
void rfx_lftj_boxes_free(rfx_lftj_boxes *b);
/* Whether the boxes' results, concatenated in box order, are sorted: boxes run in order of
 * their leading variables' values, so unless a variable after the first was cut. */
bool rfx_lftj_boxes_in_order(const rfx_lftj_boxes *b);
/* Scans the sources once (nthreads) for the bounds that let rfx_lftj_box_slices tell a
 * box without bindings from its slices' second columns: a triangle's e(x, y) over an
 * interval of x holds no y below that interval when x < y, so up to half the boxes of an
 * oriented graph are empty and are neither copied nor joined. tune->box_bounds off skips it. */
rfx_status rfx_lftj_boxes_bound(rfx_lftj_boxes *b, const rfx_lftj_src *srcs, int nsrc, int nthreads,
                                const rfx_tuning *tune);
/* Box `box`'s slice of each source, as views into the sources' rows (no copy). False when
 * the box has no bindings: a slice is empty, or (with bounds) a slice's second column has
 * no value in the box's interval of its variable. */
bool rfx_lftj_box_slices(const rfx_lftj_boxes *b, size_t box, const rfx_lftj_src *srcs, int nsrc, rfx_rows *views);

/* rfx_cpu_lftj over the boxes of `budget`: the same result, reading one box's slices at a
 * time. *nboxes (when non-NULL) says how many boxes were joined (not those without
 * bindings). */
rfx_status rfx_cpu_lftj_boxed(const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget, rfx_rows *dst,
                              uint64_t *count, int nthreads, size_t *nboxes, const rfx_tuning *tune);

/* ---- by induced parts (induced.c) ------------------------------------------------------- */
/* A triejoin over one two-column relation whose first variable leads an atom with every
 * other variable (cliques over an oriented relation) runs by parts of the first variable's
 * values: part P's sources are P's rows (for the atoms it leads) and the rows of the
 * subgraph that P and their second column induce (for the others), whose bindings are the
 * join's with the first variable in P. */
typedef struct rfx_lftj_induced rfx_lftj_induced;
/* Whether the join has that shape. */
bool rfx_lftj_induced_applies(const rfx_lftj_src *srcs, int nsrc, int nvars);
/* Whether parts of `share` bytes would cut the relation into thousands: on a device every
 * part pays the same setup (copies, launches, waits), so where they would, boxes or the
 * host's parts are the better schedule. */
bool rfx_lftj_induced_too_many_parts(const rfx_lftj_src *srcs, size_t share);
/* Prepares parts of about `budget` bytes of rows each (one vertex's part may exceed it).
 * RFX_ERR_LIMIT: not worth it here (no rows, or ids far sparser than rows); *out NULL. */
rfx_status rfx_lftj_induced_open(const rfx_lftj_src *srcs, int nsrc, size_t budget, int nthreads,
                                 rfx_lftj_induced **out);
/* A part: its first variable's rows (a view of the relation), its induced subgraph's rows
 * (owned) and the sources over them, as many as the join's (64 at most). */
typedef struct rfx_lftj_part {
    rfx_rows rows, induced;
    rfx_lftj_src srcs[64];
    size_t number;             /* from 1, in the first variable's order */
} rfx_lftj_part;
void rfx_lftj_part_init(rfx_lftj_part *p);
void rfx_lftj_part_free(rfx_lftj_part *p);
/* The next part into *p (its buffers reused), in order of the first variable; false when
 * every part was given, or on an error (*st). Parts may be joined while the next is made
 * into another rfx_lftj_part: what they read is theirs or the relation's. */
bool rfx_lftj_induced_next(rfx_lftj_induced *it, rfx_lftj_part *p, rfx_status *st);
/* A part as its vertices, for a caller that makes the induced subgraph itself (a device
 * reading R where it lies): P's rows (a view of R, from R's row `first`), V_P's members in
 * order, start[k] R's first row of member k, before[k] the rows of the members before k
 * (before[nmembers]: all their rows, which bound the induced subgraph's). The arrays are
 * the iterator's, valid until its next call. */
typedef struct rfx_lftj_part_vertices {
    rfx_rows rows;
    size_t first;
    const uint32_t *members;
    const uint64_t *start, *before;
    size_t nmembers;
    size_t number;
} rfx_lftj_part_vertices;
bool rfx_lftj_induced_next_vertices(rfx_lftj_induced *it, rfx_lftj_part_vertices *p, rfx_status *st);
/* The next part starts at R's row `row`, the first of a part given before (chosen anew:
 * after a smaller budget, a prefix of it, where it did not fit). */
void rfx_lftj_induced_restart(rfx_lftj_induced *it, size_t row);
/* The budget of the parts chosen from now on. */
void rfx_lftj_induced_set_budget(rfx_lftj_induced *it, size_t budget);
/* The largest id in the relation (both columns). */
uint32_t rfx_lftj_induced_maxid(const rfx_lftj_induced *it);
void rfx_lftj_induced_close(rfx_lftj_induced *it);

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

/* ---- on a CUDA device (lftj/gpu_lftj.cu; the CUDA build only) ------------------------------ */
#ifdef __cplusplus
extern "C" {
#endif

/* dst (arity nvars) = the leapfrog triejoin of the sources (lftj/lftj.h semantics;
 * colvar flattened per source), sorted; with count non-NULL only the number of bindings
 * (dst untouched). Two-column sources are read as TrieArrays built for the join
 * (rfx_gpu_trie_build).  */
rfx_status rfx_gpu_lftj(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc, int nvars,
                        rfx_dev_rows *dst, uint64_t *count);
/* A sorted relation as a TrieArray on the device (Red Fox thesis §5.2; CSR-like): level l
 * holds the distinct prefixes of l + 1 columns, in order, by their last value: val[l]
 * (n[l] values, zero-padded to a multiple of four). Below the last level, entry i's
 * children are entries ptr[l][i] .. ptr[l][i + 1] - 1 of level l + 1 (n[l] + 1 entries).
 * A repeated row is stored once: the last level has an entry per distinct row.
 * first, last: the root level's first and last value; last_has_max: the last level holds
 * UINT32_MAX. */
#define RFX_TRIE_MAX_LEVELS 8
typedef struct rfx_dev_trie {
    int levels;
    size_t n[RFX_TRIE_MAX_LEVELS];
    uint32_t *val[RFX_TRIE_MAX_LEVELS], *ptr[RFX_TRIE_MAX_LEVELS];
    uint32_t first, last;
    bool last_has_max;
} rfx_dev_trie;
/* t = the TrieArray of rows (sorted lexicographically; arity 1 to RFX_TRIE_MAX_LEVELS,
 * fewer than 2^32 - 1 rows), on the context's stream. On failure t is left empty. */
rfx_status rfx_gpu_trie_build(rfx_gpu *g, const rfx_dev_rows *rows, rfx_dev_trie *t);
void rfx_gpu_trie_free(rfx_gpu *g, rfx_dev_trie *t);
/* rfx_gpu_lftj where some two-column sources are given as TrieArrays already on the device
 * (tries[s], as rfx_gpu_trie_build makes them, else NULL; srcs[s] then says only its arity):
 * the join builds none for them, so parts held on the device are joined box by box without
 * rebuilding (bench/tri_pairs). */
rfx_status rfx_gpu_lftj_tries(rfx_gpu *g, const rfx_dev_rows *const *srcs, const rfx_dev_trie *const *tries,
                              const int *colvar, int nsrc, int nvars, rfx_dev_rows *dst, uint64_t *count);
/* For a relation e(a, b) sorted, with d(v) the rows led by v: *xy = the sum over rows of
 * d(b), *yx = the sum over a of d(a)^2: the last-level probes of counting the triangles
 * e(x,y), e(x,z), e(y,z) in variable order x, y, z and in order y, x, z (e reversed). */
rfx_status rfx_gpu_triangle_order_costs(rfx_gpu *g, const rfx_dev_rows *e, double *xy, double *yx);
/* rfx_gpu_lftj over sorted rows read in place (no TrieArrays: a box's slices), keeping level
 * 0 in memo for the next join whose sources led by variable 0 are the same slices (boxes
 * of one outer interval) and reusing it when memo->valid; the caller forgets the memo
 * when those slices change. */
typedef struct rfx_gpu_lftj_memo rfx_gpu_lftj_memo;
rfx_gpu_lftj_memo *rfx_gpu_lftj_memo_new(void);
void rfx_gpu_lftj_memo_forget(rfx_gpu *g, rfx_gpu_lftj_memo *m);
void rfx_gpu_lftj_memo_free(rfx_gpu *g, rfx_gpu_lftj_memo *m);
rfx_status rfx_gpu_lftj_memo_run(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc, int nvars,
                                 rfx_dev_rows *dst, uint64_t *count, rfx_gpu_lftj_memo *memo);
/* A piece of work inside a command, for traces: what, on which device and lane (0: the
 * compute stream, 1: the copy stream), for which box, from t0 to t1 (host monotonic
 * seconds, as clock_gettime(CLOCK_MONOTONIC)). */
typedef void (*rfx_gpu_span_fn)(void *ctx, const char *what, int device, int lane, size_t box, double t0, double t1);
/* Registers host memory [p, p + bytes) for the devices' copies (page-locked, portable, mapped,
 * read-only where the device allows it); false where it cannot be (copies from it are then
 * staged by the driver, not overlapped). Every CUDA call of the process waits while it runs
 * (tens of milliseconds a GB). Undone by rfx_gpu_host_unregister. */
bool rfx_gpu_host_register(void *p, size_t bytes);
void rfx_gpu_host_unregister(void *p);
/* Whether [p, p + bytes) is registered host memory (both its ends are). */
bool rfx_gpu_host_registered(const void *p, size_t bytes);
/* Pins each distinct source's rows (rfx_gpu_host_register) with g's device current, so that
 * copies from them are asynchronous; pinned[s] says which were (a source that cannot be
 * pinned is still copied, only not overlapped; one registered already is left as it is). Undone by
 * rfx_gpu_unpin_sources. Callable from any host thread. */
void rfx_gpu_pin_sources(const rfx_gpu *g, const rfx_rows *const *srcs, int nsrc, bool *pinned);
void rfx_gpu_unpin_sources(const rfx_rows *const *srcs, int nsrc, const bool *pinned);
/* A two-column source's TrieArray on the host (lftj/host_trie.c: val0 the distinct
 * first-column values, ptr0 where each one's values start in val1); val1 NULL: none. */
typedef struct rfx_gpu_host_trie {
    const uint32_t *val0, *ptr0, *val1;
} rfx_gpu_host_trie;
/* The sources of a boxed join sent as TrieArrays: tries[s] per source, box b's slice of
 * source s its roots [rlo[b*nsrc+s], rhi[b*nsrc+s]), staged through stage_bytes of device
 * memory (taken from the contexts' budgets beside the slices). */
typedef struct rfx_gpu_box_tries {
    const rfx_gpu_host_trie *tries;
    const size_t *rlo, *rhi;
    size_t stage_bytes;
} rfx_gpu_box_tries;
/* The leapfrog triejoin box by box over sources kept on the host (lftj/gpu_boxed.cuh):
 * box b reads rows [lo[b*nsrc+s], hi[b*nsrc+s]) of source s. Boxes are shared out among
 * the ndev contexts (one host thread each); a box's copy overlaps the previous box's join
 * where the sources are pinned (rfx_gpu_pin_sources).
 * parts[b] (listing; initialised with arity nvars) or counts[b] get box b's result;
 * *host_bytes (when non-NULL) what was copied from the host. Failures are described in err.
 * With tries (else NULL), a source's slices that it gives as TrieArrays are copied in that
 * form (about half the bytes of its rows) and expanded into distinct rows on the device. */
rfx_status rfx_gpu_lftj_boxes(rfx_gpu *const *gs, int ndev, const rfx_rows *const *srcs, const int *colvar,
                              int nsrc, int nvars, size_t nboxes, const size_t *lo, const size_t *hi,
                              const rfx_gpu_box_tries *tries, rfx_rows *parts, uint64_t *counts,
                              rfx_gpu_span_fn span, void *span_ctx, size_t *host_bytes, char *err, size_t errcap);
/* The count of e(x,y), e(y,z), e(x,z) over a two-column relation e kept on the host
 * (sorted, a set; pinned here while it runs unless registered already; trie, when not NULL,
 * e's TrieArray, registered, whose slices are then what is copied), out of core by parts of
 * its first column within the context's budget (lftj/gpu_pairs.cuh): e's rows cut into
 * chunks of whole first-column runs, consecutive chunks held as a part's TrieArray one
 * part at a time, every chunk that part's rows reach streamed past it, each (part, chunk)
 * box joined in variable order y, x, z. RFX_ERR_NOMEM where no plan fits the budget (a
 * value leading too many rows, too many chunks) or memory ran out; on any failure none of
 * its device memory stays allocated. *boxes: joins run;
 * *parts: parts held; *host_bytes: bytes copied from the host. */
rfx_status rfx_gpu_triangles_parts(rfx_gpu *g, const rfx_rows *e, const rfx_lftj_trie *trie, uint64_t *count,
                                   size_t *boxes, size_t *parts, size_t *host_bytes, rfx_gpu_span_fn span,
                                   void *span_ctx);
/* A triejoin by induced parts (as rfx_lftj_induced_open: srcs over one two-column host
 * relation R, the first variable leading an atom with every other) on a device that reads
 * R where it lies: R is registered as mapped host memory (here, for the call, unless it
 * is already), the host chooses each part (P's rows and V_P, for `budget` bytes of P's
 * rows and the subgraph's, these estimated from V_P's rows by the share the part before
 * kept) while the device joins the one before, and the device copies P's rows, reads V_P's
 * rows over the bus, keeps those with both ends in V_P and joins the part. A part that does
 * not fit beside its join is chosen again, smaller. Writes *count, or the sorted bindings
 * appended to dst (host rows of arity nvars). RFX_ERR_LIMIT: not this shape, or the device
 * cannot read host memory; RFX_ERR_NOMEM: a part of one vertex did not fit (what the call
 * allocated is the caller's to reclaim). *parts: parts joined; *host_bytes: bytes read from
 * the host. */
rfx_status rfx_gpu_lftj_induced(rfx_gpu *g, const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget,
                                int nthreads, rfx_rows *dst, uint64_t *count, size_t *parts, size_t *host_bytes,
                                rfx_gpu_span_fn span, void *span_ctx);
/* The leapfrog triejoin over sources resident on gs[0], spread over ndev contexts: each
 * other device gets a copy of the sources (peer copy; a device without room sits out) and
 * the devices take nparts intervals of the outer variable (equal shares of its largest
 * source's rows) from a queue. Writes *count, or the sorted bindings to dst (host rows of
 * arity nvars); *peer_bytes (when non-NULL) what was copied between devices. */
rfx_status rfx_gpu_lftj_spread(rfx_gpu *const *gs, int ndev, const rfx_dev_rows *const *srcs, const int *colvar,
                               int nsrc, int nvars, int nparts, rfx_rows *dst, uint64_t *count,
                               rfx_gpu_span_fn span, void *span_ctx, size_t *peer_bytes, char *err, size_t errcap);

#ifdef __cplusplus
}
#endif

#endif
