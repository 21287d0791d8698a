/* thrust_shim.h: the CUB/Thrust algorithms rfx uses, as plain C functions taking raw
 * device pointers, a count, a stream and caller-provided scratch (CUB's convention:
 * call with scratch == NULL to learn *scratch_bytes, then again to run). No function
 * here allocates. Implemented in thrust_shim.cu. */
#ifndef RFX_THRUST_SHIM_H
#define RFX_THRUST_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *rfx_stream;

/* Sorts keys (in place through the alternate buffer; *result says which buffer holds
 * the sorted keys: 0 = keys, 1 = alt), on bits [begin_bit, end_bit). */
int rfx_shim_sort_u64(void *scratch, size_t *scratch_bytes, uint64_t *keys, uint64_t *alt, size_t n,
                      int begin_bit, int end_bit, int *result, rfx_stream s);
/* out = in's keys sorted on bits [begin_bit, end_bit) (stable; in unchanged; the scratch
 * holds an alternate buffer of n keys). */
int rfx_shim_sort_u64_from(void *scratch, size_t *scratch_bytes, const uint64_t *in, uint64_t *out, size_t n,
                           int begin_bit, int end_bit, rfx_stream s);
int rfx_shim_sort_u32(void *scratch, size_t *scratch_bytes, uint32_t *keys, uint32_t *alt, size_t n,
                      int begin_bit, int end_bit, int *result, rfx_stream s);
/* Stable sort of (key, value) pairs by key; the same double-buffer convention. */
int rfx_shim_sort_pairs_u32(void *scratch, size_t *scratch_bytes, uint32_t *keys, uint32_t *keys_alt,
                            uint32_t *vals, uint32_t *vals_alt, size_t n, int end_bit, int *result,
                            rfx_stream s);
/* out[i] = sum of in[0..i) (out may equal in). */
int rfx_shim_exclusive_sum_u64(void *scratch, size_t *scratch_bytes, const uint64_t *in, uint64_t *out,
                               size_t n, rfx_stream s);

#ifdef __cplusplus
}
#endif

#endif
