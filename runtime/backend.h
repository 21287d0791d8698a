/* backend.h: what the plan interpreter needs from an execution backend (private to
 * runtime/). A backend owns the storage of every plan variable; the interpreter runs
 * control flow and I/O and hands each data command to the backend. */
#ifndef RFX_BACKEND_H
#define RFX_BACKEND_H

#include "runtime.h"
#include "weaver.h"

typedef struct rfx_backend rfx_backend;
struct rfx_lftj_src;

/* A piece of work inside a command (a box's copy or join, a part of a partitioned
 * operator), for traces: lane 0 computes, 1 copies to the device, 2 copies back; times
 * are host monotonic seconds. The same shape as cuda_prims.h's rfx_gpu_span_fn. */
typedef void (*rfx_span_fn)(void *ctx, const char *what, int device, int lane, size_t box, double t0, double t1);

struct rfx_backend {
    const char *name;          /* "cpu", "cuda" */
    void *ctx;                 /* the backend's state */
    /* Creates empty storage for every variable of the plan. */
    rfx_status (*open_vars)(rfx_backend *be, const rfx_plan *plan);
    /* Frees all storage and the backend itself. */
    void (*close)(rfx_backend *be);
    size_t (*count)(rfx_backend *be, int var);
    /* Frees a variable's storage (it becomes empty). */
    void (*release)(rfx_backend *be, int var);
    /* var = var u rows, rows a sorted set of var's arity; rows is emptied. */
    rfx_status (*merge_host)(rfx_backend *be, int var, rfx_rows *rows);
    /* The same where rows stay the caller's (the tuples an engine keeps between runs): the
     * device uploads them as they lie. NULL: rfx_backend_merge_kept copies them for merge_host. */
    rfx_status (*merge_host_kept)(rfx_backend *be, int var, const rfx_rows *rows);
    /* A distributed run's merge of rows that differ from process to process (each read a
     * slice of a file; any order): each row goes to its owner (collective: a process that failed
     * takes part with failed set). NULL outside distributed runs. */
    rfx_status (*merge_host_slices)(rfx_backend *be, int var, rfx_rows *rows, bool failed);
    /* The variable's tuples on the host: a view valid until the next call (scratch may
     * be filled and returned). */
    rfx_status (*host_view)(rfx_backend *be, int var, rfx_rows *scratch, const rfx_rows **view);
    /* Runs one data command (everything but control flow and I/O). */
    rfx_status (*exec)(rfx_backend *be, const rfx_ra_cmd *c);
    /* Runs a fused group (weaver.h) in place of its member commands. */
    rfx_status (*exec_group)(rfx_backend *be, const rfx_fgroup *g);
    /* Text of the last backend failure (device errors name the failing call). */
    const char *(*last_error)(rfx_backend *be);
    /* Waits for queued work (so host clocks time whole commands). */
    rfx_status (*sync)(rfx_backend *be);
    /* Measured copy bandwidth of the backend's memory in GB/s (read + write bytes per
     * second), for the profile's fraction-of-bandwidth column; 0 when unknown. */
    double (*copy_bandwidth)(rfx_backend *be);
    /* What runs the commands ("NVIDIA H200", "16 threads"). */
    const char *(*device)(rfx_backend *be);
    /* Generated kernels compiled with NVRTC and read from the disk cache so far, with the
     * milliseconds each took in all; NULL where nothing is compiled (CPU). */
    void (*jit_stats)(rfx_backend *be, int *compiled, int *cached, double *compile_ms, double *cache_ms);
    /* var = rows as they are (any order, a copy). */
    rfx_status (*load_host)(rfx_backend *be, int var, const rfx_rows *rows);
    /* Bytes the backend may hold at a time; 0: no limit of its own. */
    size_t (*budget)(rfx_backend *be);
    /* Whether running past budget() fails with RFX_ERR_NOMEM (a device) rather than
     * succeeding (host memory, where the budget is only a rule to keep). */
    bool enforces_budget;
    /* The leapfrog triejoin (lftj.h) of sources held on the host, box by box with at most
     * `budget` bytes of input slices per box, slicing on nthreads host threads, or by the
     * plan's other schedule `parts` (rfx_ra_cmd.parts) where the backend has it; *boxes
     * and *copied get the number of boxes (or parts) joined and the bytes copied to the
     * device. */
    rfx_status (*lftj_host)(rfx_backend *be, const struct rfx_lftj_src *srcs, int nsrc, int nvars,
                            rfx_lftj_parts parts, size_t budget, int nthreads, rfx_rows *dst, uint64_t *count,
                            size_t *boxes, size_t *copied);
    /* Set by the interpreter when a trace is wanted: spans inside commands. */
    rfx_span_fn span;
    void *span_ctx;
    /* Appends the variable's tuples to out (its arity) and empties the variable; host
     * rows move into an empty out without a copy. NULL: host_view, copy and release. */
    rfx_status (*take_host)(rfx_backend *be, int var, rfx_rows *out);
    /* Registers host memory [data, data + bytes) for the backend's copies (page-locked),
     * false where it cannot; undone by unpin_host before the memory is freed. NULL where
     * copies gain nothing from it (the CPU). */
    bool (*pin_host)(rfx_backend *be, void *data, size_t bytes);
    void (*unpin_host)(rfx_backend *be, void *data);
    /* Whether lftj_host, joining these sources by schedule `parts`, would copy the slices
     * of their host TrieArrays (rfx_lftj_src.trie) where given: the out-of-core layer then
     * keeps one, registered, for each such source's rows from when they land. NULL: never. */
    bool (*reads_tries)(rfx_backend *be, const struct rfx_lftj_src *srcs, int nsrc, rfx_lftj_parts parts);
    /* Told by the interpreter at each test of a semi-naive loop (test, its JUMP_IF_EMPTY):
     * the iteration about to run (1, 2, ...), 0 once the loop is left, and the rows of its
     * deltas. NULL: not wanted. */
    void (*loop_iteration)(rfx_backend *be, int iteration, size_t delta_rows, const rfx_ra_cmd *test);
    /* A distributed run (backend_dist.c), called by the interpreter on every process after
     * each command it runs or skips: agrees on the outcome (mine is this process's status;
     * the result and *reporter are those of the lowest-ranked process that failed, -1 where
     * none did, which alone reports it) and on the sizes of vars[0..nvars-1] (NULL: every
     * variable), which count() then returns. NULL: one process. */
    rfx_status (*settle)(rfx_backend *be, const int *vars, int nvars, rfx_status mine, int *reporter);
    int rank, nranks;          /* this process among a distributed run's (0 and 1 alone); only
                                * process 0 writes outputs and prints */
};

/* A fused group's commands run one by one through exec (the backend's own, under its entry
 * point's bookkeeping): each temporary released after its last reader, as the plan frees
 * those of commands run apart (the group never holds more memory than they would), and
 * those left where a member fails. */
static inline rfx_status rfx_backend_run_members(rfx_backend *be, const rfx_plan *P, const rfx_fgroup *g,
                                                 rfx_status (*exec)(rfx_backend *, const rfx_ra_cmd *))
{
    rfx_status st = RFX_OK;
    for (int m = 0; m < g->nmembers && st == RFX_OK; m++) {
        st = exec(be, rfx_fgroup_member_cmd(P, g, m));
        for (int k = 0; k <= m; k++)   /* releasing twice is harmless */
            if (rfx_fgroup_temporary_dead(P, g, k, m))
                be->release(be, rfx_fgroup_temporary(P, g, k));
    }
    for (int m = 0; m < g->nmembers; m++)
        if (rfx_fgroup_temporary(P, g, m) >= 0)
            be->release(be, rfx_fgroup_temporary(P, g, m));
    return st;
}

/* cap (0: none): bytes the backend may hold, a rule kept by the out-of-core layer below
 * (the same code paths as a device's budget, testable without a GPU). */
rfx_backend *rfx_backend_cpu(int nthreads, size_t cap, const rfx_tuning *tune);
/* Whether the CPU backend reads only a range of src for filters preds[0..n-1] (each fixes
 * src's leading columns, src a sorted set): binary searches, not a scan. */
bool rfx_cpu_filter_searches(const rfx_plan *P, int src, const rfx_rx *const *preds, int n);
/* ... for command c (a SELECT or MAPFILTER not in place). */
bool rfx_cpu_cmd_searches(const rfx_plan *P, const rfx_ra_cmd *c);
/* A set operation, sort or UNIQUE command c over host rows a (and b) into dst, on nthreads
 * threads, as the CPU backend runs it (the out-of-core layer's host merges run it too). */
rfx_status rfx_cpu_merge_cmd(const rfx_ra_cmd *c, const rfx_rows *a, const rfx_rows *b, rfx_rows *dst, int nthreads);
/* Out-of-core execution over `inner` (backend_ooc.c): plan variables live on the inner
 * backend while they fit its budget and on the host otherwise; commands whose inputs do
 * not fit run in parts (chunks, key ranges, boxes). Takes ownership of inner; returns
 * inner itself when it has no budget. NULL on out-of-memory (inner is closed). */
rfx_backend *rfx_backend_ooc(rfx_backend *inner, int nthreads, const rfx_tuning *tune);
/* What went out of core in a run (all zero when everything fitted). */
typedef struct rfx_ooc_stats {
    size_t commands, parts, spills;
    size_t host_commands;      /* run whole by the CPU: one-row parts did not fit, or boxes
                                * would have been too small to be worth a device */
    size_t host_merges;        /* set operations and sorts run by the host's cores */
    double up_bytes, down_bytes;
    double pinned_bytes, pin_seconds;   /* host rows registered for a triejoin's copies as they landed */
    double trie_bytes, trie_seconds;    /* TrieArrays made of such rows (and registered) as they landed */
} rfx_ooc_stats;
bool rfx_ooc_stats_of(rfx_backend *be, rfx_ooc_stats *st);
/* --backend=auto (backend_auto.c): the host's cores (a CPU backend on nthreads) and a
 * device (the CUDA backend under the out-of-core layer, started when the cost model says
 * it pays; warm: one is open already), each command placed by cost. NULL on out-of-memory. */
rfx_backend *rfx_backend_auto(const rfx_run_opts *o, int nthreads, bool warm);
/* The device backend an auto backend has started; NULL if none (or be is not one). */
rfx_backend *rfx_backend_auto_device(rfx_backend *be);
/* NULL when CUDA is not built in or no device can be used; *why says which. */
rfx_backend *rfx_backend_cuda(const rfx_run_opts *o, char *why, size_t whycap);
/* Whether work on the device that ended runs left behind still runs: compiles of generated
 * kernels, the driver's start (rfx.h's rfx_compiles_pending). */
bool rfx_backend_cuda_compiling(void);
/* Ends the compiles ended runs left behind (primitives/jit.h's rfx_jit_settle): an engine
 * closes with none at work, so that a process exiting after it is safe from NVRTC's
 * exit-time destructors. */
void rfx_backend_cuda_settle(void);
/* Starts the driver and the first of devices' (NULL: device 0) primary context in the
 * background, once a process, so that a run wanting the device finds it started (an
 * engine of the CUDA backend does this as it is made: the start overlaps parsing, planning
 * and fact reading). */
void rfx_backend_cuda_warm(const int *devices, int ndevices);
/* Where that start is (RFX_WARM_*, cuda_prims.h), and when it began (rfx_seconds) in *t0. */
int rfx_backend_cuda_warm_state(double *t0);
/* Runs a fused group's generated kernels on the device variables V (indexed by plan
 * variable); the CUDA backend's path for groups large enough to be worth compiling. */
struct rfx_gpu;
struct rfx_dev_rows;
rfx_status rfx_cuda_run_group(struct rfx_gpu *gpu, const rfx_fgroup *g, struct rfx_dev_rows *V);
/* Whether a CUDA device is usable (without opening a context); name when non-NULL. */
bool rfx_cuda_available(char *name, size_t cap);
/* CUDA runtime and driver versions (1000 * major + 10 * minor); false without CUDA. */
bool rfx_cuda_versions(int *runtime, int *driver);

/* ---- distributed runs (backend_dist.c) ------------------------------------------------ */
struct rfx_comm;
typedef struct rfx_dist_stats {
    uint64_t exchanges;        /* outputs sent to their owners */
    uint64_t sent_rows, sent_bytes;   /* rows (and bytes) this process sent to others */
    uint64_t gathered_rows;    /* rows of replicas gathered to this process */
    uint64_t replicated;       /* commands run on every process over replicas */
    uint64_t kept_reads;       /* sources read from a replica kept from an earlier command */
    double exchange_s;         /* seconds in transfers (with their bucketing and sorting) */
    double phase_s[5];         /* ... of which, in sending outputs to their owners: repeats
                                * taken out, rows brought to the host, bucketed by owner,
                                * MPI's all-to-all, received rows placed (sent up and sorted) */
    double compute_s;          /* seconds in the commands themselves */
    uint64_t joined_rows;      /* rows this process's joins made (its share of their work) */
    uint64_t hot_keys;         /* hot keys spread before joins (the same count on every process) */
    uint64_t spread_rows;      /* rows this process sent spreading them (and gathering their partners) */
} rfx_dist_stats;

/* This process's share of a run over comm's processes, held by inner (which it owns). */
rfx_backend *rfx_backend_dist(rfx_backend *inner, struct rfx_comm *comm, int nthreads, const rfx_tuning *tune);
/* A distributed backend's counters and, where local is given (one per plan variable), the
 * tuples this process holds; false for any other backend. */
bool rfx_dist_stats_of(rfx_backend *be, rfx_dist_stats *st, size_t *local);

/* var = var u rows, rows left as they are: a copy made on nthreads threads for merge_host. */
static inline rfx_status rfx_backend_merge_copy(rfx_backend *be, int var, const rfx_rows *rows, int nthreads)
{
    rfx_rows copy;
    rfx_rows_init(&copy, rows->arity);
    rfx_status st = rfx_rows_append_parallel(&copy, rows, nthreads);
    if (st == RFX_OK)
        st = be->merge_host(be, var, &copy);
    rfx_rows_free(&copy);
    return st;
}

/* var = var u rows, rows left as they are: by the backend's merge_host_kept where it has one. */
static inline rfx_status rfx_backend_merge_kept(rfx_backend *be, int var, const rfx_rows *rows, int nthreads)
{
    return be->merge_host_kept ? be->merge_host_kept(be, var, rows) : rfx_backend_merge_copy(be, var, rows, nthreads);
}

#endif
