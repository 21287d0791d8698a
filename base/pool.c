/* pool.c: the persistent thread pool (rfx_parallel_for), parallel copies and the clock. */
#include "base.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- threads --------------------------------------------------------------------------- */
typedef struct par_job {
    void (*fn)(int, void *);
    void *ctx;
    atomic_int next;
    int n;
} par_job;

static void *par_worker(void *arg)
{
    par_job *j = arg;
    for (int i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        j->fn(i, j->ctx);
    return NULL;
}

double rfx_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Threads kept between calls: starting and joining a dozen threads costs about as much as
 * a small call's work, and a run makes thousands of calls (every block of facts read,
 * every sort pass, every operator of a long thin recursion's iterations).
 * A job reaches each worker taking part through a ticket of its own, and a worker that has
 * just finished one watches its ticket for a while (POOL_SPIN_S) before it sleeps on the
 * condition variable: back-to-back calls, as a semi-naive loop's operators make, then cost
 * no wake-up (a broadcast wakes every sleeper, which then queue for the mutex one by one).
 * The caller watches the count of workers still at work the same way before it sleeps.
 * Only on machines of POOL_SPIN_CPUS cores or more, and for calls of no more threads than
 * cores: where threads outnumber cores a watcher takes the time of the thread it waits for
 * (a two-core machine running several processes slowed several times over).
 * One call at a time uses the pool; a call made while it is in use (from a worker, or by
 * another engine's thread) starts threads of its own as before. */
enum { POOL_MAX = 255, POOL_SPIN_CPUS = 8 };
#define POOL_SPIN_S 50e-6

typedef struct pool_ticket {
    _Alignas(64) atomic_ulong gen;   /* the last job published to this worker (a line each) */
} pool_ticket;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t tid[POOL_MAX];
    pool_ticket ticket[POOL_MAX];
    int nworkers;
    unsigned long gen;         /* jobs published (the caller's, under pool_busy) */
    par_job *_Atomic job;
    atomic_int active;         /* workers of the job not done yet */
    atomic_int sleepers;       /* workers asleep on wake (or about to be) */
    atomic_bool caller_asleep; /* the caller asleep on done (or about to be) */
    atomic_bool spin;          /* the last job's: watch before sleeping */
    int cpus;                  /* online */
    atomic_int watch;          /* rfx_pool_watch's mode */
    atomic_bool stopping;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER,
        .watch = -1};
static atomic_flag pool_busy = ATOMIC_FLAG_INIT;

static inline void spin_pause(unsigned i)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 63)
        sched_yield();   /* a core shared with other threads (more threads than cores) */
}

/* Whether a watch that began at *until (0: not yet) is over: looked at every 256 turns. */
static bool watch_over(unsigned i, double *until)
{
    if (!atomic_load(&pool.spin))
        return true;
    if (i % 256)
        return false;
    if (*until == 0) {
        *until = rfx_seconds() + POOL_SPIN_S;
        return false;
    }
    return rfx_seconds() > *until;
}

static void *pool_worker(void *arg)
{
    const int me = (int)(intptr_t)arg;
    atomic_ulong *ticket = &pool.ticket[me].gen;
    /* a worker is started for the job just published, which cannot end without it */
    unsigned long seen = atomic_load(ticket) - 1;
    for (;;) {
        double until = 0;
        for (unsigned i = 0; atomic_load(ticket) == seen && !atomic_load(&pool.stopping); i++) {
            if (watch_over(i, &until)) {
                /* sleep: the count goes up before the ticket is looked at again, and the
                   caller publishes before it looks at the count, so one of them sees the other */
                pthread_mutex_lock(&pool.mu);
                atomic_fetch_add(&pool.sleepers, 1);
                while (atomic_load(ticket) == seen && !atomic_load(&pool.stopping))
                    pthread_cond_wait(&pool.wake, &pool.mu);
                atomic_fetch_sub(&pool.sleepers, 1);
                pthread_mutex_unlock(&pool.mu);
                break;
            }
            spin_pause(i);
        }
        if (atomic_load(&pool.stopping))
            break;
        seen = atomic_load(ticket);
        par_worker(atomic_load(&pool.job));
        if (atomic_fetch_sub(&pool.active, 1) == 1 && atomic_load(&pool.caller_asleep)) {
            pthread_mutex_lock(&pool.mu);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.mu);
        }
    }
    return NULL;
}

/* At exit (or the library's unloading) the workers are stopped and joined. */
__attribute__((destructor)) static void pool_stop(void)
{
    if (atomic_flag_test_and_set(&pool_busy))
        return;   /* a call still running (exit from another thread): the process ends them */
    pthread_mutex_lock(&pool.mu);
    atomic_store(&pool.stopping, true);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int t = 0; t < pool.nworkers; t++)
        pthread_join(pool.tid[t], NULL);
    pool.nworkers = 0;
}

/* A child of fork has none of the workers (an embedding program may fork): it starts afresh. */
static void pool_after_fork(void)
{
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.nworkers = 0;
    atomic_store(&pool.active, 0);
    atomic_store(&pool.sleepers, 0);
    atomic_store(&pool.caller_asleep, false);
    atomic_store(&pool.stopping, false);
    atomic_flag_clear(&pool_busy);
}

static void pool_at_fork(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    pool.cpus = n > 0 && n < INT32_MAX ? (int)n : 1;
    (void)pthread_atfork(NULL, NULL, pool_after_fork);
}

/* Runs j on the pool's workers and the calling thread; false: the pool is in use. */
static bool pool_run(par_job *j, int nthreads)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pool_at_fork);
    if (atomic_flag_test_and_set(&pool_busy))
        return false;
    if (atomic_load(&pool.stopping)) {
        atomic_flag_clear(&pool_busy);
        return false;
    }
    int helpers = nthreads - 1 < pool.nworkers ? nthreads - 1 : pool.nworkers;
    int watch = atomic_load(&pool.watch);
    atomic_store(&pool.spin, watch >= 0 ? watch == 1 : pool.cpus >= POOL_SPIN_CPUS && nthreads <= pool.cpus);
    atomic_store(&pool.job, j);
    pool.gen++;
    /* the workers to start count as taking part: a new one begins with this job */
    int starting = 0;
    while (helpers + starting < nthreads - 1 && pool.nworkers + starting < POOL_MAX)
        starting++;
    atomic_store(&pool.active, helpers + starting);
    for (int t = 0; t < helpers; t++)
        atomic_store(&pool.ticket[t].gen, pool.gen);
    if (helpers && atomic_load(&pool.sleepers) > 0) {
        pthread_mutex_lock(&pool.mu);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.mu);
    }
    for (int k = 0; k < starting; k++) {
        int t = pool.nworkers;
        atomic_store(&pool.ticket[t].gen, pool.gen);
        if (pthread_create(&pool.tid[t], NULL, pool_worker, (void *)(intptr_t)t) != 0) {
            atomic_fetch_sub(&pool.active, starting - k);   /* the rest: the caller's share */
            break;
        }
        pool.nworkers++;
    }
    par_worker(j);   /* the calling thread works too; with no worker it does all */
    double until = 0;
    for (unsigned i = 0; atomic_load(&pool.active) > 0; i++) {
        if (watch_over(i, &until)) {
            pthread_mutex_lock(&pool.mu);
            atomic_store(&pool.caller_asleep, true);
            while (atomic_load(&pool.active) > 0)
                pthread_cond_wait(&pool.done, &pool.mu);
            atomic_store(&pool.caller_asleep, false);
            pthread_mutex_unlock(&pool.mu);
            break;
        }
        spin_pause(i);
    }
    atomic_flag_clear(&pool_busy);
    return true;
}

void rfx_pool_watch(int mode)
{
    atomic_store(&pool.watch, mode);
}

void rfx_parallel_for(int n, int nthreads, void (*fn)(int i, void *ctx), void *ctx)
{
    if (nthreads > n)
        nthreads = n;
    if (nthreads <= 1) {
        for (int i = 0; i < n; i++)
            fn(i, ctx);
        return;
    }
    par_job j = {fn, ctx, 0, n};
    if (pool_run(&j, nthreads))
        return;
    pthread_t tid[256];
    int started = 0;
    for (int t = 1; t < nthreads && t < 256; t++)
        if (pthread_create(&tid[started], NULL, par_worker, &j) == 0)
            started++;
    par_worker(&j);       /* the calling thread works too; if no thread started, it does all */
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

typedef struct par_copy {
    char *dst;
    const char *src;
    size_t n;
    int parts;
} par_copy;

static void copy_part(int i, void *arg)
{
    par_copy *p = arg;
    size_t a = p->n * (size_t)i / (size_t)p->parts, b = p->n * (size_t)(i + 1) / (size_t)p->parts;
    memcpy(p->dst + a, p->src + a, b - a);
}

void rfx_parallel_memcpy(void *dst, const void *src, size_t n, int nthreads)
{
    size_t parts = n / RFX_PAR_COPY_MIN;
    parts = parts < (size_t)(nthreads > 0 ? nthreads : 1) ? parts : (size_t)nthreads;
    if (parts <= 1) {
        if (n)
            memcpy(dst, src, n);
        return;
    }
    par_copy p = {dst, src, n, (int)parts};
    rfx_parallel_for((int)parts, (int)parts, copy_part, &p);
}
