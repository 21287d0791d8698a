/* jit.c: NVRTC through dlopen, and the on-disk cubin cache (see jit.h). */
#include "jit.h"
#include "primitives.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef RFX_CUDA_LIBDIR
#define RFX_CUDA_LIBDIR ""
#endif

/* The few NVRTC entry points used, declared here so nvrtc.h is not needed. */
typedef int (*nvrtc_create_fn)(void **prog, const char *src, const char *name, int nheaders, const char *const *headers,
                               const char *const *include_names);
typedef int (*nvrtc_compile_fn)(void *prog, int nopts, const char *const *opts);
typedef int (*nvrtc_size_fn)(void *prog, size_t *size);
typedef int (*nvrtc_get_fn)(void *prog, char *out);
typedef int (*nvrtc_destroy_fn)(void **prog);
typedef int (*nvrtc_version_fn)(int *major, int *minor);
typedef const char *(*nvrtc_error_fn)(int result);

static struct {
    pthread_once_t once;
    bool ok;
    char why[256];
    int major, minor;
    nvrtc_create_fn create;
    nvrtc_compile_fn compile;
    nvrtc_size_fn log_size, cubin_size;
    nvrtc_get_fn log, cubin;
    nvrtc_destroy_fn destroy;
    nvrtc_error_fn error;
} nv = {PTHREAD_ONCE_INIT};

static atomic_int running_jobs;   /* compiles in the background not yet ended, detached or not */
static atomic_int settling;       /* callers of rfx_jit_settle (and exit) waiting: detached
                                   * compiles not yet in NVRTC are dropped */

static void wait_for(atomic_int *count)
{
    while (atomic_load(count) > 0)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* exit() waits for the compiles at work (the detached ones dropped where they have not
 * begun) before the libraries' exit-time destructors run (NVRTC's among them, under a
 * compile still at work); a process that must not wait ends with _exit. Registered when
 * NVRTC is opened and again once the first compile has ended, so that it runs before
 * whatever NVRTC registered inside it (atexit runs the last registered first); what NVRTC
 * registers inside a later compile still runs before it, hence rfx_jit_settle. */
static void wait_jobs(void)
{
    atomic_fetch_add(&settling, 1);
    wait_for(&running_jobs);
}

static void register_wait_jobs(void)
{
    atexit(wait_jobs);
}

static void load_nvrtc(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
    void *h = NULL;
    char path[1024];
    for (size_t i = 0; !h && i < sizeof names / sizeof *names; i++) {
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        const char *dirs[] = {getenv("CUDA_HOME"), RFX_CUDA_LIBDIR, "/usr/local/cuda/lib64"};
        for (size_t d = 0; !h && d < sizeof dirs / sizeof *dirs; d++) {
            if (!dirs[d] || !*dirs[d])
                continue;
            snprintf(path, sizeof path, "%s%s/%s", dirs[d], d == 0 ? "/lib64" : "", names[i]);
            h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        }
    }
    if (!h) {
        snprintf(nv.why, sizeof nv.why, "NVRTC (libnvrtc.so) was not found");
        return;
    }
    nv.create = (nvrtc_create_fn)dlsym(h, "nvrtcCreateProgram");
    nv.compile = (nvrtc_compile_fn)dlsym(h, "nvrtcCompileProgram");
    nv.log_size = (nvrtc_size_fn)dlsym(h, "nvrtcGetProgramLogSize");
    nv.log = (nvrtc_get_fn)dlsym(h, "nvrtcGetProgramLog");
    nv.cubin_size = (nvrtc_size_fn)dlsym(h, "nvrtcGetCUBINSize");
    nv.cubin = (nvrtc_get_fn)dlsym(h, "nvrtcGetCUBIN");
    nv.destroy = (nvrtc_destroy_fn)dlsym(h, "nvrtcDestroyProgram");
    nv.error = (nvrtc_error_fn)dlsym(h, "nvrtcGetErrorString");
    nvrtc_version_fn version = (nvrtc_version_fn)dlsym(h, "nvrtcVersion");
    if (!nv.create || !nv.compile || !nv.log_size || !nv.log || !nv.cubin_size || !nv.cubin || !nv.destroy ||
        !nv.error || !version || version(&nv.major, &nv.minor) != 0) {
        snprintf(nv.why, sizeof nv.why, "the NVRTC library found lacks nvrtcGetCUBIN (CUDA 11.1 or later needed)");
        return;
    }
    /* NVRTC opens its builtins library inside its first compile; opened here first, its
     * exit-time destructors are registered before wait_jobs and so run after it (atexit is
     * last in, first out) */
    char builtins[64];
    snprintf(builtins, sizeof builtins, "libnvrtc-builtins.so.%d.%d", nv.major, nv.minor);
    if (!dlopen(builtins, RTLD_NOW | RTLD_LOCAL)) {
        const char *dirs[] = {getenv("CUDA_HOME"), RFX_CUDA_LIBDIR, "/usr/local/cuda/lib64"};
        for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
            if (!dirs[d] || !*dirs[d])
                continue;
            snprintf(path, sizeof path, "%s%s/%s", dirs[d], d == 0 ? "/lib64" : "", builtins);
            if (dlopen(path, RTLD_NOW | RTLD_LOCAL))
                break;
        }
    }
    atexit(wait_jobs);
    nv.ok = true;
}

bool rfx_jit_available(char *why, size_t cap)
{
    pthread_once(&nv.once, load_nvrtc);
    if (!nv.ok && why && cap)
        snprintf(why, cap, "%s", nv.why);
    return nv.ok;
}

/* The cache directory (created), or false when caching is off or impossible. */
static bool cache_dir(char *dir, size_t cap)
{
    const char *env = getenv("RFX_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && strcmp(env, "off") == 0)
        return false;
    if (env && *env)
        snprintf(dir, cap, "%s", env);
    else if (xdg && *xdg)
        snprintf(dir, cap, "%s/rfx", xdg);
    else if (home && *home)
        snprintf(dir, cap, "%s/.cache/rfx", home);
    else
        return false;
    /* make each level that is missing */
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(dir, 0755);
            *p = '/';
        }
    return mkdir(dir, 0755) == 0 || errno == EEXIST;
}

static bool read_file(const char *path, void **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    bool ok = fseek(f, 0, SEEK_END) == 0;
    long n = ok ? ftell(f) : -1;
    ok = n > 0 && fseek(f, 0, SEEK_SET) == 0;
    void *buf = ok ? malloc((size_t)n) : NULL;
    ok = buf && fread(buf, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) {
        free(buf);
        return false;
    }
    *data = buf;
    *size = (size_t)n;
    return true;
}

/* Written to a temporary file and renamed, so a reader never sees half a cubin. */
static void write_file(const char *path, const void *data, size_t size)
{
    /* a name of this write's own: two compiles of one source (two groups alike, in
       threads at once) must not write one temporary */
    static atomic_uint writes;
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), atomic_fetch_add(&writes, 1));
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    bool ok = fwrite(data, 1, size, f) == size;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

/* The cache file of source's cubin for sm_<arch> (false: no cache directory). */
static const char *const nvrtc_opts[] = {NULL, "--fmad=false", "--std=c++17", "-default-device", "--device-int128"};
enum { NVRTC_NOPTS = sizeof nvrtc_opts / sizeof *nvrtc_opts };

static bool cache_path(const char *source, const char *archopt, char *path, size_t cap)
{
    uint64_t h = rfx_fnv1a(RFX_FNV_INIT, source, strlen(source));
    h = rfx_fnv1a(h, archopt, strlen(archopt) + 1);
    for (int i = 1; i < NVRTC_NOPTS; i++)
        h = rfx_fnv1a(h, nvrtc_opts[i], strlen(nvrtc_opts[i]) + 1);
    int ver[2] = {nv.major, nv.minor};
    h = rfx_fnv1a(h, ver, sizeof ver);
    char dir[1024];
    if (!cache_dir(dir, sizeof dir))
        return false;
    snprintf(path, cap, "%s/%016llx.cubin", dir, (unsigned long long)h);
    return true;
}

bool rfx_jit_cached(const char *source, int arch, void **cubin, size_t *size)
{
    if (!rfx_jit_available(NULL, 0))
        return false;
    char archopt[32], path[1100];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d", arch);
    return cache_path(source, archopt, path, sizeof path) && read_file(path, cubin, size);
}

/* One NVRTC compile at a time in the process. Taken when NVRTC crashed inside
 * nvrtcCompileProgram with several compiles at work; the cause proved to be the process's
 * exit under a compile (rfx_jit_settle), and whether compiles in several threads at once
 * are safe was not tested apart, so they stay one at a time (docs/RELIABILITY.md). */
static pthread_mutex_t nvrtc_lock = PTHREAD_MUTEX_INITIALIZER;

enum { JOB_RUNNING, JOB_DONE, JOB_DETACHED };   /* done: its owner frees it; detached: itself */

/* rfx_jit_cubin for a job whose state is *state (NULL: a caller that waits): a detached
 * job still waiting for NVRTC while compiles settle is dropped. */
static bool cubin_of(const char *source, const char *name, int arch, void **cubin, size_t *size, bool *compiled,
                     double *ms, char *err, size_t errcap, atomic_int *state)
{
    double t0 = rfx_seconds() * 1e3;
    *compiled = false;
    if (!rfx_jit_available(err, errcap))
        return false;
    char archopt[32];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d", arch);
    const char *opts[NVRTC_NOPTS];
    for (int i = 0; i < NVRTC_NOPTS; i++)
        opts[i] = i ? nvrtc_opts[i] : archopt;
    char path[1100];
    bool cached = cache_path(source, archopt, path, sizeof path);
    if (cached && read_file(path, cubin, size)) {
        *ms = rfx_seconds() * 1e3 - t0;
        return true;
    }
    void *prog = NULL;
    pthread_mutex_lock(&nvrtc_lock);
    if (state && atomic_load(state) == JOB_DETACHED && atomic_load(&settling) > 0) {
        pthread_mutex_unlock(&nvrtc_lock);
        snprintf(err, errcap, "dropped: the compiles were settled (rfx_jit_settle)");
        return false;
    }
    t0 = rfx_seconds() * 1e3;   /* the compile's own time, not its wait for the one before */
    int r = nv.create(&prog, source, name, 0, NULL, NULL);
    if (r != 0) {
        pthread_mutex_unlock(&nvrtc_lock);
        snprintf(err, errcap, "nvrtcCreateProgram: %s", nv.error(r));
        return false;
    }
    r = nv.compile(prog, NVRTC_NOPTS, opts);
    bool ok = r == 0;
    if (!ok) {
        size_t n = 0;
        char *log = nv.log_size(prog, &n) == 0 && n ? malloc(n + 1) : NULL;
        if (log && nv.log(prog, log) == 0) {
            log[n] = 0;
            snprintf(err, errcap, "NVRTC could not compile %s: %s\n%s", name, nv.error(r), log);
        } else
            snprintf(err, errcap, "NVRTC could not compile %s: %s", name, nv.error(r));
        free(log);
    }
    size_t n = 0;
    void *buf = NULL;
    if (ok && (nv.cubin_size(prog, &n) != 0 || !n || !(buf = malloc(n)) || nv.cubin(prog, buf) != 0)) {
        snprintf(err, errcap, "NVRTC produced no cubin for %s", name);
        free(buf);
        ok = false;
    }
    nv.destroy(&prog);
    pthread_mutex_unlock(&nvrtc_lock);
    if (!ok)
        return false;
    if (cached)
        write_file(path, buf, n);
    *cubin = buf;
    *size = n;
    *compiled = true;
    *ms = rfx_seconds() * 1e3 - t0;
    return true;
}

bool rfx_jit_cubin(const char *source, const char *name, int arch, void **cubin, size_t *size, bool *compiled,
                   double *ms, char *err, size_t errcap)
{
    return cubin_of(source, name, arch, cubin, size, compiled, ms, err, errcap, NULL);
}

/* ---- compiles in the background ---------------------------------------------------------- */
#define JIT_STACK_BYTES ((size_t)256 << 20)

struct rfx_jit_job {
    pthread_t tid;
    char *source, *name;
    int arch;
    void *cubin;
    size_t size;
    bool ok, compiled;
    double ms;
    atomic_int state;
    char err[1024];
};

static atomic_int detached_running;   /* detached jobs not yet ended */

static void job_free(rfx_jit_job *j)
{
    free(j->source);
    free(j->name);
    free(j);
}

static void *job_main(void *arg)
{
    rfx_jit_job *j = arg;
    j->ok = cubin_of(j->source, j->name, j->arch, &j->cubin, &j->size, &j->compiled, &j->ms, j->err, sizeof j->err,
                     &j->state);
    static pthread_once_t after_first = PTHREAD_ONCE_INIT;
    pthread_once(&after_first, register_wait_jobs);   /* after what the first compile registered */
    int running = JOB_RUNNING;
    if (!atomic_compare_exchange_strong(&j->state, &running, JOB_DONE)) {   /* detached: nobody waits */
        free(j->cubin);
        job_free(j);
        atomic_fetch_sub(&detached_running, 1);
    }
    atomic_fetch_sub(&running_jobs, 1);
    return NULL;
}

void rfx_jit_job_detach(rfx_jit_job *j)
{
    pthread_t tid = j->tid;   /* j is the thread's to free once detached */
    atomic_fetch_add(&detached_running, 1);
    int running = JOB_RUNNING;
    if (atomic_compare_exchange_strong(&j->state, &running, JOB_DETACHED)) {
        pthread_detach(tid);
        return;
    }
    atomic_fetch_sub(&detached_running, 1);   /* it had ended: its cubin is cached already */
    rfx_jit_job_finish(j, NULL, NULL, NULL, NULL, NULL, 0);
}

bool rfx_jit_detached_running(void)
{
    return atomic_load(&detached_running) > 0;
}

void rfx_jit_settle(void)
{
    atomic_fetch_add(&settling, 1);
    wait_for(&detached_running);
    atomic_fetch_sub(&settling, 1);
}

rfx_jit_job *rfx_jit_start(const char *source, const char *name, int arch)
{
    rfx_jit_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->source = strdup(source);
    j->name = strdup(name);
    j->arch = arch;
    atomic_init(&j->state, JOB_RUNNING);
    /* NVRTC's optimiser keeps large frames on its stack: a thread's default stack (the
     * rlimit's, or glibc's small fallback where the rlimit is unlimited) overflows on big
     * generated kernels; pages of the reserve are only touched as used */
    pthread_attr_t attr;
    bool attr_ok = pthread_attr_init(&attr) == 0;
    if (attr_ok)
        pthread_attr_setstacksize(&attr, JIT_STACK_BYTES);
    atomic_fetch_add(&running_jobs, 1);
    int created = !j->source || !j->name ? -1 : pthread_create(&j->tid, attr_ok ? &attr : NULL, job_main, j);
    if (attr_ok)
        pthread_attr_destroy(&attr);
    if (created != 0) {
        atomic_fetch_sub(&running_jobs, 1);
        free(j->source);
        free(j->name);
        free(j);
        return NULL;
    }
    return j;
}

bool rfx_jit_job_done(rfx_jit_job *j)
{
    return atomic_load(&j->state) == JOB_DONE;
}

bool rfx_jit_job_finish(rfx_jit_job *j, void **cubin, size_t *size, bool *compiled, double *ms, char *err,
                        size_t errcap)
{
    pthread_join(j->tid, NULL);
    bool ok = j->ok;
    if (ok && cubin) {
        *cubin = j->cubin;
        *size = j->size;
        *compiled = j->compiled;
        *ms = j->ms;
    } else
        free(j->cubin);
    if (!ok && err && errcap)
        snprintf(err, errcap, "%s", j->err);
    job_free(j);
    return ok;
}
