/* backend.h: what the plan interpreter needs from an execution backend (private to
 * runtime/). A backend owns the storage of every plan variable; the interpreter runs
 * control flow and I/O and hands each data command to the backend. */
#ifndef RFX_BACKEND_H
#define RFX_BACKEND_H

#include "runtime.h"
#include "weaver.h"

typedef struct rfx_backend rfx_backend;

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
};

/* cap (0: none): bytes a leapfrog triejoin's input slices may take at a time; larger
 * joins run box by box (the out-of-core code path, testable without a GPU). */
rfx_backend *rfx_backend_cpu(int nthreads, size_t cap);
/* NULL when CUDA is not built in or no device can be used; *why says which. */
rfx_backend *rfx_backend_cuda(const rfx_run_opts *o, char *why, size_t whycap);
/* Runs a fused group's generated kernels on the device variables V (indexed by plan
 * variable); the CUDA backend's path for groups large enough to be worth compiling. */
struct rfx_gpu;
struct rfx_dev_rows;
rfx_status rfx_cuda_run_group(struct rfx_gpu *gpu, const rfx_fgroup *g, struct rfx_dev_rows *V);
/* Whether a CUDA device is usable (without opening a context); name when non-NULL. */
bool rfx_cuda_available(char *name, size_t cap);
/* CUDA runtime and driver versions (1000 * major + 10 * minor); false without CUDA. */
bool rfx_cuda_versions(int *runtime, int *driver);

#endif
