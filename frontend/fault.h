/* fault.h: allocation and file-write wrappers that can be told to fail the N-th call
 * (SQLite-style fault injection), so every error path can be exercised by tests.
 * Set RFX_FAULT_ALLOC=N (host allocations), RFX_FAULT_DEVICE=N (device allocations) or
 * RFX_FAULT_WRITE=N in the environment, or call rfx_fault_set(); 0 disables. Counting is
 * process-wide and thread-safe.
 * The allocation wrappers also refuse (NULL) a block of 256 MiB or more that exceeds the
 * memory the system reports available (MemAvailable; RFX_HOST_AVAILABLE=bytes stands in
 * for it), so a result too big for the machine fails as "out of memory" instead of the
 * kernel killing rfx when the promised pages are touched. */
#ifndef RFX_FAULT_H
#define RFX_FAULT_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>

void *rfx_malloc(size_t n);
void *rfx_calloc(size_t n, size_t size);
void *rfx_realloc(void *p, size_t n);

/* fwrite/fputs/fclose equivalents that honour RFX_FAULT_WRITE; return false on failure. */
bool rfx_fwrite(FILE *f, const void *buf, size_t n);
bool rfx_fclose(FILE *f);
/* pwrite of all n bytes at offset `at` (retried on short writes and EINTR); false on
 * failure with errno set where the system set it. */
bool rfx_pwrite(int fd, const void *buf, size_t n, long long at);

/* True when this device allocation must fail (called by the CUDA backend's allocator). */
bool rfx_fault_device_alloc(void);

/* Arm injection: the alloc_n-th allocation / write_n-th write from now fails (0 = never). */
void rfx_fault_set(long alloc_n, long write_n);
/* Arm injection of device allocations: the n-th from now fails (0 = never). */
void rfx_fault_set_device(long n);
/* Whether any injected fault has fired since the last rfx_fault_set(). */
bool rfx_fault_fired(void);
/* Guarded calls (allocations and writes) made so far. */
long rfx_fault_calls(void);

#endif
