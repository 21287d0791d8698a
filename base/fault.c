/* fault.c: counted allocation and write wrappers for fault injection (see base.h). */
#include "base.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define HOST_CHECK_FROM ((size_t)256 << 20)   /* smaller blocks are not worth a read of /proc */

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

void rfx_fault_set_device(long n)
{
    read_env();   /* the environment's settings first, so they do not overwrite this later */
    atomic_store(&device_left, n);
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

/* Bytes of memory the system can still give (MemAvailable), or SIZE_MAX when unknown;
 * RFX_HOST_AVAILABLE=bytes stands in for it (tests). */
static size_t host_available(void)
{
    const char *fake = getenv("RFX_HOST_AVAILABLE");
    if (fake)
        return (size_t)strtoull(fake, NULL, 10);
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return SIZE_MAX;
    char line[128];
    unsigned long long kb = 0;
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
    fclose(f);
    return found && kb < SIZE_MAX / 1024 ? (size_t)kb * 1024 : SIZE_MAX;
}

/* Whether n bytes may be asked for: a large block only while the system has that much
 * available. Linux promises more than it has and kills the process that touches it, so a
 * result too big for the machine would end rfx without a word instead of an "out of
 * memory" error. */
static bool host_has(size_t n)
{
    return n < HOST_CHECK_FROM || n <= host_available();
}

void *rfx_malloc(size_t n)
{
    return tick(&alloc_left) || !host_has(n) ? NULL : malloc(n ? n : 1);
}

void *rfx_calloc(size_t n, size_t size)
{
    if (tick(&alloc_left) || (size && n > SIZE_MAX / size) || !host_has(n * size))
        return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *rfx_realloc(void *p, size_t n)
{
    return tick(&alloc_left) || !host_has(n) ? NULL : realloc(p, n ? n : 1);
}

bool rfx_fwrite(FILE *f, const void *buf, size_t n)
{
    if (tick(&write_left))
        return false;
    return fwrite(buf, 1, n, f) == n;
}

bool rfx_pwrite(int fd, const void *buf, size_t n, long long at)
{
    if (tick(&write_left))
        return false;
    for (const char *p = buf; n;) {
        ssize_t w = pwrite(fd, p, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
        at += w;
    }
    return true;
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
