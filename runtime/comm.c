/* comm.c: the processes of a distributed run over MPI (comm.h); without RFX_HAVE_MPI, one
 * process. Rows travel as an MPI type of `arity` 32-bit values, so counts and offsets are
 * in rows: exchanges and gathers run in rounds that keep them within MPI's ints. */
#include "comm.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The variables MPI launchers set in the processes they start (Open MPI, PMIx, PMI, Slurm,
 * MPICH's Hydra). */
bool rfx_comm_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

#ifdef RFX_HAVE_MPI
#include <mpi.h>

struct rfx_comm {
    MPI_Comm world, host;
    int rank, size, local_rank, local_size;
    uint64_t *statuses;        /* rfx_comm_settle's without a buffer of the caller's: one per process */
};

static rfx_comm *g_world;      /* made on first use, freed by rfx_comm_finalize */
static bool g_started;         /* rfx_comm_init called MPI_Init_thread */

bool rfx_comm_built(void)
{
    return true;
}

bool rfx_comm_init(int *argc, char ***argv, char *why, size_t whycap)
{
    int done = 0, provided = 0;
    MPI_Initialized(&done);
    if (done)
        return true;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(why, whycap, "MPI_Init_thread failed");
        return false;
    }
    g_started = true;
    return true;
}

void rfx_comm_finalize(void)
{
    if (g_world) {
        MPI_Comm_free(&g_world->host);
        MPI_Comm_free(&g_world->world);
        free(g_world->statuses);
        free(g_world);
        g_world = NULL;
    }
    int done = 0;
    MPI_Finalized(&done);
    if (g_started && !done) {
        /* no process leaves before all are done: a launcher ends the job (signalling the
         * others) when the first exits with a failure */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
    }
    g_started = false;
}

rfx_comm *rfx_comm_world(void)
{
    int init = 0, fin = 0, size = 1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return NULL;
    if (g_world)
        return g_world;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* plain calloc: a process that could not make these would run alone while the others
     * wait for it, so no fault is injected here */
    if (size < 2 || !(g_world = calloc(1, sizeof *g_world)))
        return NULL;
    if (!(g_world->statuses = calloc((size_t)size, sizeof(uint64_t)))) {
        free(g_world);
        g_world = NULL;
        return NULL;
    }
    /* rfx's own communicator: its collectives never meet an embedding program's */
    MPI_Comm_dup(MPI_COMM_WORLD, &g_world->world);
    MPI_Comm_rank(g_world->world, &g_world->rank);
    g_world->size = size;
    MPI_Comm_split_type(g_world->world, MPI_COMM_TYPE_SHARED, g_world->rank, MPI_INFO_NULL, &g_world->host);
    MPI_Comm_rank(g_world->host, &g_world->local_rank);
    MPI_Comm_size(g_world->host, &g_world->local_size);
    return g_world;
}

int rfx_comm_rank(const rfx_comm *c)
{
    return c ? c->rank : 0;
}

int rfx_comm_size(const rfx_comm *c)
{
    return c ? c->size : 1;
}

int rfx_comm_local_rank(const rfx_comm *c)
{
    return c ? c->local_rank : 0;
}

int rfx_comm_local_size(const rfx_comm *c)
{
    return c ? c->local_size : 1;
}

rfx_status rfx_comm_sum(rfx_comm *c, uint64_t *v, int n)
{
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, c->world) == MPI_SUCCESS ? RFX_OK : RFX_ERR_REMOTE;
}

rfx_status rfx_comm_settle(rfx_comm *c, rfx_status mine, uint64_t *buf, int n, int *reporter)
{
    int P = c->size;
    uint64_t *v = buf ? buf : c->statuses;
    memset(v, 0, sizeof(uint64_t) * (size_t)P);
    v[c->rank] = (uint64_t)mine;
    rfx_status st = rfx_comm_sum(c, v, P + (buf ? n : 0));
    *reporter = -1;
    for (int p = 0; st == RFX_OK && p < P && *reporter < 0; p++)
        if (v[p] && v[p] != RFX_ERR_REMOTE)
            *reporter = p;
    for (int p = 0; st == RFX_OK && p < P && *reporter < 0; p++)
        if (v[p])
            *reporter = p;
    return st != RFX_OK ? RFX_ERR_REMOTE : *reporter >= 0 ? (rfx_status)v[*reporter] : RFX_OK;
}

rfx_status rfx_comm_gather_all(rfx_comm *c, const uint64_t *mine, int n, uint64_t *all)
{
    return MPI_Allgather(mine, n, MPI_UINT64_T, all, n, MPI_UINT64_T, c->world) == MPI_SUCCESS ? RFX_OK : RFX_ERR_REMOTE;
}

/* Whether any process failed: each says whether it did, all learn the sum. */
static rfx_status agree(rfx_comm *c, bool failed)
{
    uint64_t n = failed;
    if (rfx_comm_sum(c, &n, 1) != RFX_OK)
        return RFX_ERR_REMOTE;
    return n ? RFX_ERR_REMOTE : RFX_OK;
}

rfx_status rfx_comm_agree(rfx_comm *c, rfx_status mine)
{
    rfx_status all = agree(c, mine != RFX_OK);
    return mine != RFX_OK ? mine : all;
}

static MPI_Datatype row_type(int arity)
{
    MPI_Datatype t;
    MPI_Type_contiguous(arity, MPI_UINT32_T, &t);
    MPI_Type_commit(&t);
    return t;
}

/* An exchange runs in rounds of at most ROUND_ROWS rows sent by a process (its buckets' next
 * slices, copied together where there are several rounds), so that counts and offsets fit
 * MPI's ints and the staging stays small. */
#ifndef RFX_COMM_ROUND_ROWS   /* a build may make rounds small to test them */
#define RFX_COMM_ROUND_ROWS ((size_t)1 << 28)
#endif
#define ROUND_ROWS ((size_t)RFX_COMM_ROUND_ROWS)

/* One round: sc[p] rows to process p from send (offsets sd); what arrives appended to out. */
static rfx_status exchange_round(rfx_comm *c, const uint32_t *send, int *sc, int *sd, int *rc, int *rd, MPI_Datatype t,
                                 rfx_rows *out)
{
    int P = c->size;
    if (MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, c->world) != MPI_SUCCESS)
        return RFX_ERR_REMOTE;
    size_t total = 0;
    for (int p = 0; p < P; p++) {
        rd[p] = (int)total;
        total += (size_t)rc[p];
    }
    bool ok = total <= INT_MAX && rfx_rows_reserve(out, out->n + total) == RFX_OK;
    rfx_status st = agree(c, !ok);
    if (st != RFX_OK)
        return ok ? st : RFX_ERR_NOMEM;
    if (out->arity == 0) {   /* a nullary relation: only whether it holds its tuple */
        out->n = out->n || total ? 1 : 0;
        return RFX_OK;
    }
    int rcode = MPI_Alltoallv(send, sc, sd, t, out->data + out->n * (size_t)out->arity, rc, rd, t, c->world);
    out->n += total;
    return rcode == MPI_SUCCESS ? RFX_OK : RFX_ERR_REMOTE;
}

rfx_status rfx_comm_exchange(rfx_comm *c, const rfx_rows *rows, const size_t *counts, bool failed, rfx_rows *out)
{
    int P = c->size, a = rows->arity;
    int *sc = rfx_malloc(sizeof(int) * (size_t)P * 4), *sd = sc ? sc + P : NULL, *rc = sc ? sc + 2 * P : NULL,
        *rd = sc ? sc + 3 * P : NULL;
    size_t *start = rfx_malloc(sizeof(size_t) * (size_t)P * 2), *left = start ? start + P : NULL;
    size_t cap = ROUND_ROWS / (size_t)P;
    uint64_t rounds = 1;
    bool bad = failed || !sc || !start;
    for (int p = 0; !bad && p < P; p++) {
        start[p] = p ? start[p - 1] + counts[p - 1] : 0;
        left[p] = counts[p];
        uint64_t r = (counts[p] + cap - 1) / cap;
        rounds = r > rounds ? r : rounds;
    }
    rfx_status st = agree(c, bad);
    if (st == RFX_OK && MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_UINT64_T, MPI_MAX, c->world) != MPI_SUCCESS)
        st = RFX_ERR_REMOTE;
    rfx_rows stage;   /* a round's slices together, where there are several rounds */
    rfx_rows_init(&stage, a);
    if (st == RFX_OK && rounds > 1 && a) {
        bool ok = rfx_rows_reserve(&stage, ROUND_ROWS) == RFX_OK;
        st = agree(c, !ok);
        st = st == RFX_OK ? st : ok ? st : RFX_ERR_NOMEM;
    }
    out->n = 0;
    MPI_Datatype t = row_type(a ? a : 1);
    for (uint64_t r = 0; r < rounds && st == RFX_OK; r++) {
        size_t at = 0;
        for (int p = 0; p < P; p++) {
            size_t n = left[p] < cap ? left[p] : cap;
            sc[p] = a ? (int)n : n > 0;
            sd[p] = (int)(rounds > 1 ? at : start[p]);
            if (rounds > 1 && a && n)
                memcpy(stage.data + at * (size_t)a, rows->data + start[p] * (size_t)a, sizeof(uint32_t) * n * (size_t)a);
            at += n;
            start[p] += n;
            left[p] -= n;
        }
        st = exchange_round(c, rounds > 1 ? stage.data : rows->data, sc, sd, rc, rd, t, out);
    }
    MPI_Type_free(&t);
    rfx_rows_free(&stage);
    free(sc);
    free(start);
    return st;
}

/* A gather runs in rounds where it takes more than ROUND_ROWS rows to a process: each
 * process sends its next slice of at most ROUND_ROWS / P rows, received into a staging
 * area and copied to where that process's rows go, so out keeps rank order. */
rfx_status rfx_comm_gather_rows(rfx_comm *c, const rfx_rows *mine, bool failed, rfx_rows *out)
{
    int P = c->size, a = mine->arity;
    int *rc = rfx_malloc(sizeof(int) * (size_t)P * 2), *rd = rc ? rc + P : NULL;
    uint64_t *counts = rfx_malloc(sizeof(uint64_t) * (size_t)P * 3), *off = counts ? counts + P : NULL,
             *done = counts ? counts + 2 * (size_t)P : NULL;
    rfx_status st = agree(c, failed || !rc || !counts);
    if (st != RFX_OK && !failed && (!rc || !counts))
        st = RFX_ERR_NOMEM;
    uint64_t n = mine->n, total = 0, cap = ROUND_ROWS / (size_t)P, rounds = 1;
    if (st == RFX_OK && MPI_Allgather(&n, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, c->world) != MPI_SUCCESS)
        st = RFX_ERR_REMOTE;
    for (int p = 0; st == RFX_OK && p < P; p++) {
        off[p] = total;
        done[p] = 0;
        total += counts[p];
        uint64_t r = (counts[p] + cap - 1) / cap;
        rounds = r > rounds ? r : rounds;
    }
    rfx_rows stage;   /* a round's slices, where there are several rounds */
    rfx_rows_init(&stage, a);
    if (st == RFX_OK) {   /* room for all, and the staging, on every process */
        out->n = 0;
        bool ok = rfx_rows_reserve(out, (size_t)total) == RFX_OK &&
                  (rounds == 1 || !a || rfx_rows_reserve(&stage, ROUND_ROWS) == RFX_OK);
        st = agree(c, !ok);
        st = st == RFX_OK || ok ? st : RFX_ERR_NOMEM;
    }
    if (st == RFX_OK && a == 0)   /* a nullary relation: only whether it holds its tuple */
        out->n = total ? 1 : 0;
    MPI_Datatype t = row_type(a ? a : 1);
    for (uint64_t r = 0; st == RFX_OK && a && r < rounds; r++) {
        int at = 0;
        for (int p = 0; p < P; p++) {
            uint64_t left = counts[p] - done[p];
            rc[p] = (int)(left < cap ? left : cap);
            rd[p] = rounds > 1 ? at : (int)off[p];
            at += rc[p];
        }
        uint32_t *into = rounds > 1 ? stage.data : out->data;
        const uint32_t *send = rc[c->rank] ? mine->data + done[c->rank] * (size_t)a : mine->data;
        if (MPI_Allgatherv(send, rc[c->rank], t, into, rc, rd, t, c->world) !=
            MPI_SUCCESS)
            st = RFX_ERR_REMOTE;
        for (int p = 0; p < P && st == RFX_OK; p++) {
            if (rounds > 1 && rc[p])
                memcpy(out->data + (off[p] + done[p]) * (size_t)a, stage.data + (size_t)rd[p] * (size_t)a,
                       sizeof(uint32_t) * (size_t)rc[p] * (size_t)a);
            done[p] += (uint64_t)rc[p];
        }
    }
    if (st == RFX_OK && a)
        out->n = (size_t)total;
    MPI_Type_free(&t);
    rfx_rows_free(&stage);
    free(rc);
    free(counts);
    return st;
}

#else /* one process */

bool rfx_comm_built(void)
{
    return false;
}

bool rfx_comm_init(int *argc, char ***argv, char *why, size_t whycap)
{
    snprintf(why, whycap, "this rfx was built without MPI (install libopenmpi-dev and build again)");
    return false;
}

void rfx_comm_finalize(void)
{
}

rfx_comm *rfx_comm_world(void)
{
    return NULL;
}

int rfx_comm_rank(const rfx_comm *c)
{
    return 0;
}

int rfx_comm_size(const rfx_comm *c)
{
    return 1;
}

int rfx_comm_local_rank(const rfx_comm *c)
{
    return 0;
}

int rfx_comm_local_size(const rfx_comm *c)
{
    return 1;
}

rfx_status rfx_comm_sum(rfx_comm *c, uint64_t *v, int n)
{
    return RFX_OK;
}

rfx_status rfx_comm_settle(rfx_comm *c, rfx_status mine, uint64_t *buf, int n, int *reporter)
{
    *reporter = mine != RFX_OK ? 0 : -1;
    return mine;
}

rfx_status rfx_comm_agree(rfx_comm *c, rfx_status mine)
{
    return mine;
}

rfx_status rfx_comm_gather_all(rfx_comm *c, const uint64_t *mine, int n, uint64_t *all)
{
    memcpy(all, mine, sizeof(uint64_t) * (size_t)n);
    return RFX_OK;
}

rfx_status rfx_comm_exchange(rfx_comm *c, const rfx_rows *rows, const size_t *counts, bool failed, rfx_rows *out)
{
    return RFX_ERR_INTERNAL;
}

rfx_status rfx_comm_gather_rows(rfx_comm *c, const rfx_rows *mine, bool failed, rfx_rows *out)
{
    return RFX_ERR_INTERNAL;
}
#endif
