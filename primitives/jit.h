/* jit.h: run-time compilation of generated CUDA C (the kernel weaver's groups) with NVRTC.
 * NVRTC is loaded with dlopen on first use, so rfx starts and runs on machines without
 * it (the fused groups then run on the precompiled primitives). Compiled cubins are
 * cached on disk under a hash of the source, the architecture and the NVRTC version, so a
 * second run compiles nothing.
 *
 * Cache directory: $RFX_CACHE_DIR, else $XDG_CACHE_HOME/rfx, else $HOME/.cache/rfx
 * (created when missing; RFX_CACHE_DIR=off disables the cache). */
#ifndef RFX_JIT_H
#define RFX_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether NVRTC can be loaded; why not in `why`. */
bool rfx_jit_available(char *why, size_t cap);

/* The cubin of `source` for sm_<arch> (e.g. 90): from the cache when present, else
 * compiled (and cached). *cubin is malloc'd; *compiled says whether NVRTC ran; *ms is the
 * time taken. false with the reason (compiler log included) in err. */
bool rfx_jit_cubin(const char *source, const char *name, int arch, void **cubin, size_t *size, bool *compiled,
                   double *ms, char *err, size_t errcap);

/* The cubin of source for sm_<arch> when the disk cache holds it (*cubin malloc'd). */
bool rfx_jit_cached(const char *source, int arch, void **cubin, size_t *size);

/* A compile in a thread of its own (rfx_jit_cubin's, the cache included), so that a run
 * goes on, unfused, while NVRTC works. NULL where no thread could be started. */
typedef struct rfx_jit_job rfx_jit_job;
rfx_jit_job *rfx_jit_start(const char *source, const char *name, int arch);
bool rfx_jit_job_done(rfx_jit_job *j);
/* Waits for j and frees it; its cubin (malloc'd) where cubin is non-NULL and it compiled,
 * else the reason in err. */
bool rfx_jit_job_finish(rfx_jit_job *j, void **cubin, size_t *size, bool *compiled, double *ms, char *err,
                        size_t errcap);
/* Lets j run on without its owner: it ends on its own, its cubin cached and freed; whether
 * any runs still: rfx_jit_detached_running. */
void rfx_jit_job_detach(rfx_jit_job *j);
bool rfx_jit_detached_running(void);
/* Ends the detached compiles: those not yet in NVRTC are dropped (not cached), the one in
 * it is waited for. A process must not exit under a compile: NVRTC registers exit-time
 * destructors while it compiles, which exit() then runs first, under it. exit() settles the
 * compiles itself, but only after what was registered last; librfx settles them as an
 * engine closes. */
void rfx_jit_settle(void);

#endif
