/* cuda_prims.h: the relational primitives on a CUDA device, over the same packed-row
 * layout as the CPU versions (primitives.h), with the same results bit for bit.
 * Plain C; implemented in primitives/gpu_*.cu (one file an operator family). All device memory comes from the context's
 * stream-ordered pool (rfx_gpu_alloc), which is bounded by the context's budget.
 * Every CUDA call is checked: a failure returns RFX_ERR_DEVICE (or RFX_ERR_NOMEM for
 * device memory exhaustion) and rfx_gpu_error() names the call, file and line. */
#ifndef RFX_CUDA_PRIMS_H
#define RFX_CUDA_PRIMS_H

#include "primitives.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rfx_dev_rows {
    uint32_t *data;            /* device memory, n * arity values */
    size_t n, cap;             /* tuples, tuples allocated */
    int arity;
} rfx_dev_rows;

typedef struct rfx_gpu rfx_gpu;

/* CUDA runtime and driver versions (1000 * major + 10 * minor); false when the driver
 * cannot be asked (runtime is still set). */
bool rfx_gpu_versions(int *runtime, int *driver);
/* The context's measured device-to-device copy bandwidth in GB/s (bytes read + written per
 * second; median of three 256 MiB copies, measured once); 0 when it cannot be measured. */
double rfx_gpu_copy_bandwidth(rfx_gpu *g);
/* Number of usable devices; 0 without a driver or device (never fails). */
int rfx_gpu_count(void);
/* Free bytes on a device now (0 where it cannot be asked). */
size_t rfx_gpu_free_bytes(int device);
/* The name of device `device` into name (cap bytes), asked of the driver without opening a
 * context (which costs a process ~0.1 s to make and as much to tear down); false if none. */
bool rfx_gpu_device_name(int device, char *name, size_t cap);
/* Starts the driver and `device`'s primary context in a thread of its own, so that a later
 * rfx_gpu_open finds them made (once a process; later calls do nothing; a device that does
 * not exist ends it quietly). */
void rfx_gpu_warm(int device);
/* Where that start is (RFX_WARM_*, primitives.h); when it began (rfx_seconds) in *t0. */
int rfx_gpu_warm_state(double *t0);
/* Opens a context on `device` with a memory budget in bytes (0: free memory less 5%).
 * NULL on failure with the reason in err. */
rfx_gpu *rfx_gpu_open(int device, size_t budget, char *err, size_t errcap);
void rfx_gpu_close(rfx_gpu *g);
/* Waits for the context's work, then gives the memory its pool holds freed back to the
 * driver down to keep_bytes (a context kept for another run). */
void rfx_gpu_trim(rfx_gpu *g, size_t keep_bytes);
const char *rfx_gpu_error(const rfx_gpu *g);
const char *rfx_gpu_name(const rfx_gpu *g);
/* The context's memory budget in bytes, and what of it is in use now. */
size_t rfx_gpu_budget(const rfx_gpu *g);
size_t rfx_gpu_in_use(rfx_gpu *g);
/* Allocations are numbered: after a command failed (device memory ran out), what it
 * allocated since `mark` and left behind is freed, except the pointers in keep (the
 * relations' storage). Returns how many allocations were freed. */
uint64_t rfx_gpu_alloc_mark(const rfx_gpu *g);
size_t rfx_gpu_reclaim(rfx_gpu *g, uint64_t mark, void *const *keep, size_t nkeep);
/* Makes the context's device the calling thread's current one. */
rfx_status rfx_gpu_activate(rfx_gpu *g);

/* Scratch from the context's pool (stream-ordered). */
void *rfx_gpu_alloc(rfx_gpu *g, size_t bytes);
void rfx_gpu_free(rfx_gpu *g, void *p);

void rfx_gpu_rows_init(rfx_dev_rows *r, int arity);
void rfx_gpu_rows_free(rfx_gpu *g, rfx_dev_rows *r);
/* Rows between the host (pageable memory) and the device. From 16 MB on, with more than
 * one host thread set, they go through a pinned buffer of the context, copied to or from
 * the rows by that many threads (rfx_parallel_memcpy). */
rfx_status rfx_gpu_upload(rfx_gpu *g, const rfx_rows *src, rfx_dev_rows *dst);
rfx_status rfx_gpu_download(rfx_gpu *g, const rfx_dev_rows *src, rfx_rows *dst);
/* The tuning the context's heuristics follow (borrowed: it must outlive the context or the
 * next call; NULL: rfx_tuning_defaults, which a context starts with). */
void rfx_gpu_set_tuning(rfx_gpu *g, const rfx_tuning *tune);
/* The host threads rfx_gpu_upload and rfx_gpu_download may use (default 1). */
void rfx_gpu_set_host_threads(rfx_gpu *g, int n);
rfx_status rfx_gpu_copy(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst);
/* Waits for the context's stream (for timing). */
rfx_status rfx_gpu_sync(rfx_gpu *g);
/* Milliseconds of device time fn(arg) takes on the context's stream, measured with CUDA
 * events (fn's own status in *st). */
double rfx_gpu_time_ms(rfx_gpu *g, rfx_status (*fn)(void *arg), void *arg, rfx_status *st);
/* Device-to-device copy of `bytes` (for measuring the bandwidth ceiling). */
rfx_status rfx_gpu_memcpy_d2d(rfx_gpu *g, void *dst, const void *src, size_t bytes);

rfx_status rfx_gpu_sort(rfx_gpu *g, rfx_dev_rows *r);
/* dst = src sorted (src unchanged; dst may be src). */
rfx_status rfx_gpu_sort_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst);
rfx_status rfx_gpu_unique(rfx_gpu *g, rfx_dev_rows *r);
/* dst = src without adjacent duplicates (src unchanged; dst may be src). */
rfx_status rfx_gpu_unique_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst);
/* dst = src's distinct rows, sorted: rfx_gpu_sort_into then rfx_gpu_unique, in fewer passes
 * over rows of two columns; where src is sorted on its first `sorted` columns already (the
 * plan's hint: checked, ignored where wrong) and rows equal on them come in short runs, one
 * pass that sorts each run (src unchanged; dst may be src). *held (NULL: not asked):
 * whether that pass did it (a caller may stop offering a hint that keeps failing). */
rfx_status rfx_gpu_sort_unique_into(rfx_gpu *g, const rfx_dev_rows *src, int sorted, bool *held,
                                    rfx_dev_rows *dst);
/* dst = src stably sorted on its first k columns (the plan's SORT keys=k): rows with equal
 * ones keep src's order (k <= 0 or k >= the arity: sorted on every column). src unchanged. */
rfx_status rfx_gpu_sort_leading_into(rfx_gpu *g, const rfx_dev_rows *src, int k, rfx_dev_rows *dst);
/* dst = src stably sorted on columns cols[0..k) (ascending column numbers, the first the most
 * significant; at most 2^32-1 rows): a probe's rows put in its key order where it sorts
 * them where they lie. src unchanged. */
rfx_status rfx_gpu_sort_by_columns_into(rfx_gpu *g, const rfx_dev_rows *src, const int *cols, int k,
                                        rfx_dev_rows *dst);
rfx_status rfx_gpu_mapfilter(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out,
                             int nout, rfx_dev_rows *dst);
/* rfx_gpu_mapfilter for outputs that call functors making symbols the device makes too
 * (rfx_rx_device_makes; pred makes none): level by level, an argument's symbols first, the
 * texts are built and deduplicated on the device (over its copy of their table), the host
 * making only the distinct texts the table lacks, in their byte order. */
rfx_status rfx_gpu_mapfilter_making(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out,
                                    int nout, rfx_dev_rows *dst);
rfx_status rfx_gpu_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                        rfx_rx *const *out, int nout, rfx_dev_rows *dst);
/* rfx_gpu_join with a in any order (b sorted on its first k columns, k > 0): each row of a
 * searched in b where rfx_gpu_probe_pays, else a sorted first; dst in no particular order. */
rfx_status rfx_gpu_probe_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                              rfx_rx *const *out, int nout, rfx_dev_rows *dst);
/* rfx_gpu_join (probe: rfx_gpu_probe_join) with b sorted on its first k + 1 columns, each
 * row of a narrowed to the range of its key group that pred's bounds on b's column k allow
 * (rfx_cpu_range_join). */
rfx_status rfx_gpu_range_join(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, const rfx_rx *pred,
                              rfx_rx *const *out, int nout, bool probe, rfx_dev_rows *dst);
/* Whether na rows in any order searched one by one in b cost less than sorting them first:
 * b stays in the L2 cache, or the rows are few next to b's (their searches land far apart
 * whatever their order). */
bool rfx_gpu_probe_pays(const rfx_gpu *g, size_t na, const rfx_dev_rows *b);
rfx_status rfx_gpu_union(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, rfx_dev_rows *dst);
/* The same for operands known to share no tuple (no search for duplicates). */
rfx_status rfx_gpu_union_disjoint(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, rfx_dev_rows *dst);
rfx_status rfx_gpu_semijoin(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, bool keep,
                            rfx_dev_rows *dst);
/* The same where b is the union of nb sorted sets of k columns (a relation kept as its main
 * rows and runs): a's rows found in (keep) or missing from (!keep) any of them. At most
 * RFX_GPU_MAX_SETS sets (RFX_ERR_LIMIT beyond). */
enum { RFX_GPU_MAX_SETS = 64 };
rfx_status rfx_gpu_semijoin_sets(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *const *b, int nb, int k,
                                 bool keep, rfx_dev_rows *dst);
/* The same with a in any order (a probe: each row searched in the sets); dst keeps a's
 * order. */
rfx_status rfx_gpu_probe_sets(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *const *b, int nb, int k,
                              bool keep, rfx_dev_rows *dst);
rfx_status rfx_gpu_aggregate(rfx_gpu *g, const rfx_dev_rows *a, const rfx_dev_rows *b, int k, rfx_aggfn fn,
                             int col, rfx_prim prim, rfx_dev_rows *dst);

/* *out = the two-column rows of e, sorted, with their columns swapped, sorted (e(x, y) as
 * (y, x): the source that binds y first). e must be sorted: only y is sorted on. */
rfx_status rfx_gpu_reversed(rfx_gpu *g, const rfx_dev_rows *e, rfx_dev_rows *out);
/* dst = the edges src (two columns) with every vertex renamed to its rank by (degree, id),
 * its degree the rows it is in (either column): ids then grow as an orientation by degree
 * does, so each out-list of the oriented edges holds only ids above its vertex's (what the
 * triejoin's pair count narrows its probed lists by). src may be dst; fewer than 2^31 rows. */
rfx_status rfx_gpu_rename_by_degree(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst);
/* rfx_gpu_sort_unique_into(g, src, dst) then rfx_gpu_reversed(g, dst, rev), for two-column
 * rows, the reversed rows written as the distinct rows are (two passes fewer over them).
 * src may be dst; rev must be neither. */
rfx_status rfx_gpu_sort_unique_reversed(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst, rfx_dev_rows *rev);
/* Fused groups (weaver/weaver.h): their generated kernels, compiled with NVRTC on first
 * use in the context (or read from the disk cache, see jit.h). */
/* Whether generated kernels can be compiled here (NVRTC found); why not in `why`. */
bool rfx_gpu_jit_ready(rfx_gpu *g, char *why, size_t cap);
/* The device's compute capability (10 * major + minor), for NVRTC's target. */
int rfx_gpu_arch(const rfx_gpu *g);
/* Whether the generated library of source hash h is loaded in g's context. */
bool rfx_gpu_jit_has(const rfx_gpu *g, uint64_t h);
/* Loads a cubin compiled elsewhere (a background compile, or the disk cache) as the library
 * of source hash h, counted as compiled or read from the cache in ms; takes the cubin. */
rfx_status rfx_gpu_jit_add(rfx_gpu *g, uint64_t h, void *cubin, bool compiled, double ms);
/* Compiles (or reads from the cache) and loads source, and finds `kernel` in it. Here and
 * below source_hash is rfx_fnv1a(RFX_FNV_INIT, source, strlen(source)), found once by the
 * caller (rfx_fgroup.source_hash): the context's loaded libraries are looked up by it. */
rfx_status rfx_gpu_jit_load(rfx_gpu *g, const char *source, uint64_t source_hash, const char *kernel);
/* Kernels compiled and read from the cache in this context, and the milliseconds each took. */
void rfx_gpu_jit_stats(const rfx_gpu *g, int *compiled, int *cached, double *compile_ms, double *cache_ms);
/* A FILTER group: kernel `name` of `source` (which divides integers: `divides`), `items`
 * rows per thread; dsts[m] gets output m (nout[m] columns), in input order. */
rfx_status rfx_gpu_fused_filter(rfx_gpu *g, const char *name, const char *source, uint64_t source_hash, bool divides,
                                int items, const rfx_dev_rows *src, int nouts, const int *nout,
                                rfx_dev_rows *const *dsts);
/* A JOIN group: kernels name_count and name_expand of `source` over nsrc sorted sources.
 * Candidates are flagged and compacted when has_residual (filters not tested as ranges
 * are counted) or when some key range was too long to filter as it was counted. */
rfx_status rfx_gpu_fused_join(rfx_gpu *g, const char *name, const char *source, uint64_t source_hash,
                              const rfx_dev_rows *const *srcs, int nsrc, bool has_residual, int nout,
                              rfx_dev_rows *dst);

#ifdef __cplusplus
}
#endif

#endif
