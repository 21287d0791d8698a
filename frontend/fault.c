/* fault.c: counted allocation and write wrappers for fault injection (see fault.h). */
#include "fault.h"

#include <stdatomic.h>
#include <stdlib.h>

static atomic_long alloc_left, write_left, device_left;  /* countdowns; <= 0 means disarmed */
static atomic_bool fired;
static atomic_long calls;            /* guarded calls so far (for rfx_fault_calls) */
static atomic_bool env_read;

static void read_env(void)
{
    if (atomic_exchange(&env_read, true))
        return;
    const char *a = getenv("RFX_FAULT_ALLOC"), *w = getenv("RFX_FAULT_WRITE"), *d = getenv("RFX_FAULT_DEVICE");
    if (d)
        atomic_store(&device_left, atol(d));
    if (a)
        atomic_store(&alloc_left, atol(a));
    if (w)
        atomic_store(&write_left, atol(w));
}

void rfx_fault_set(long alloc_n, long write_n)
{
    atomic_store(&env_read, true);
    atomic_store(&alloc_left, alloc_n);
    atomic_store(&write_left, write_n);
    atomic_store(&fired, false);
}

bool rfx_fault_fired(void)
{
    return atomic_load(&fired);
}

/* True when this call is the one that must fail. */
static bool tick(atomic_long *left)
{
    read_env();
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    if (atomic_load_explicit(left, memory_order_relaxed) <= 0)
        return false;
    if (atomic_fetch_sub(left, 1) == 1) {
        atomic_store(&fired, true);
        return true;
    }
    return false;
}

bool rfx_fault_device_alloc(void)
{
    return tick(&device_left);
}

void *rfx_malloc(size_t n)
{
    return tick(&alloc_left) ? NULL : malloc(n ? n : 1);
}

void *rfx_calloc(size_t n, size_t size)
{
    return tick(&alloc_left) ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *rfx_realloc(void *p, size_t n)
{
    return tick(&alloc_left) ? NULL : realloc(p, n ? n : 1);
}

bool rfx_fwrite(FILE *f, const void *buf, size_t n)
{
    if (tick(&write_left))
        return false;
    return fwrite(buf, 1, n, f) == n;
}

bool rfx_fclose(FILE *f)
{
    bool inject = tick(&write_left);
    bool ok = fclose(f) == 0;
    return ok && !inject;
}

long rfx_fault_calls(void)
{
    return atomic_load(&calls);
}
