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

#endif
