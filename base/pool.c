/* pool.c: the persistent thread pool (rfx_parallel_for), parallel copies and the clock. */
#include "base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

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
 * every sort pass).
 * One call at a time uses the pool; a call made while it is in use (from a worker, or by
 * another engine's thread) starts threads of its own as before. */
enum { POOL_MAX = 255 };

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t tid[POOL_MAX];
    int nworkers;
    unsigned long gen;         /* jobs published */
    par_job *job;
    int want;                  /* workers 0..want-1 take part in the job */
    int active;                /* of those, the ones not done yet */
    bool stopping;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
static atomic_flag pool_busy = ATOMIC_FLAG_INIT;

static void *pool_worker(void *arg)
{
    const int me = (int)(intptr_t)arg;
    pthread_mutex_lock(&pool.mu);
    /* a worker is started for the job just published, which cannot end without it */
    for (unsigned long seen = pool.gen - 1;;) {
        while (pool.gen == seen && !pool.stopping)
            pthread_cond_wait(&pool.wake, &pool.mu);
        if (pool.stopping)
            break;
        seen = pool.gen;
        if (me < pool.want) {
            par_job *j = pool.job;
            pthread_mutex_unlock(&pool.mu);
            par_worker(j);
            pthread_mutex_lock(&pool.mu);
            if (--pool.active == 0)
                pthread_cond_signal(&pool.done);
        }
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

/* At exit (or the library's unloading) the workers are stopped and joined. */
__attribute__((destructor)) static void pool_stop(void)
{
    if (atomic_flag_test_and_set(&pool_busy))
        return;   /* a call still running (exit from another thread): the process ends them */
    pthread_mutex_lock(&pool.mu);
    pool.stopping = true;
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
    pool.nworkers = pool.want = pool.active = 0;
    pool.stopping = false;
    atomic_flag_clear(&pool_busy);
}

static void pool_at_fork(void)
{
    (void)pthread_atfork(NULL, NULL, pool_after_fork);
}

/* Runs j on the pool's workers and the calling thread; false: the pool is in use. */
static bool pool_run(par_job *j, int nthreads)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pool_at_fork);
    if (atomic_flag_test_and_set(&pool_busy))
        return false;
    pthread_mutex_lock(&pool.mu);
    if (pool.stopping) {
        pthread_mutex_unlock(&pool.mu);
        atomic_flag_clear(&pool_busy);
        return false;
    }
    while (pool.nworkers < nthreads - 1 && pool.nworkers < POOL_MAX) {
        int t = pool.nworkers;
        if (pthread_create(&pool.tid[t], NULL, pool_worker, (void *)(intptr_t)t) != 0)
            break;
        pool.nworkers++;
    }
    int helpers = nthreads - 1 < pool.nworkers ? nthreads - 1 : pool.nworkers;
    pool.job = j;
    pool.want = pool.active = helpers;
    pool.gen++;
    if (helpers)
        pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    par_worker(j);   /* the calling thread works too; with no worker it does all */
    pthread_mutex_lock(&pool.mu);
    while (pool.active > 0)
        pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    atomic_flag_clear(&pool_busy);
    return true;
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
