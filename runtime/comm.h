/* comm.h: the processes of a distributed run (private to runtime/): who this one is among
 * them and the collective transfers the distributed backend needs, over MPI where rfx is
 * built with it (comm.c). Without MPI there is one process: rfx_comm_world() is NULL.
 *
 * Every call here is collective: each process of the job makes the same calls in the same
 * order, or the job hangs. Calls taking a `failed` flag agree first whether any process
 * failed before the transfer and then skip it everywhere (returning RFX_ERR_REMOTE where
 * this process had not failed itself), so that a process that fails never leaves the
 * others waiting. */
#ifndef RFX_COMM_H
#define RFX_COMM_H

#include "base.h"
#include "primitives.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct rfx_comm rfx_comm;

/* Whether this rfx was built with MPI. */
bool rfx_comm_built(void);
/* Whether the process was started by an MPI launcher (mpirun, srun), from the variables
 * launchers set: a build without MPI tells the user so rather than running N copies. */
bool rfx_comm_launched(void);
/* Starts MPI for the command (threads: MPI_THREAD_FUNNELED; only the main thread calls
 * it); false with the reason where it cannot. */
bool rfx_comm_init(int *argc, char ***argv, char *why, size_t whycap);
/* Ends MPI where rfx_comm_init started it. */
void rfx_comm_finalize(void);
/* The job's processes where MPI is initialised and there are more than one; else NULL.
 * The same object on every call (freed by rfx_comm_finalize). */
rfx_comm *rfx_comm_world(void);

int rfx_comm_rank(const rfx_comm *c);
int rfx_comm_size(const rfx_comm *c);
/* This process's rank among those of its host, and how many its host runs. */
int rfx_comm_local_rank(const rfx_comm *c);
int rfx_comm_local_size(const rfx_comm *c);

/* v[0..n-1] = their sums over the processes. */
rfx_status rfx_comm_sum(rfx_comm *c, uint64_t *v, int n);
/* Agrees on an outcome: buf (NULL: n is 0) holds a value per process, then n sizes summed
 * in place. The result and *reporter are those of the lowest-ranked process that failed
 * itself (one that only learnt of another's failure, RFX_ERR_REMOTE, counts where none
 * did); RFX_OK and -1 where none failed. */
rfx_status rfx_comm_settle(rfx_comm *c, rfx_status mine, uint64_t *buf, int n, int *reporter);
/* mine where this process failed, RFX_ERR_REMOTE where only another did, else RFX_OK. */
rfx_status rfx_comm_agree(rfx_comm *c, rfx_status mine);
/* all[p * n + i] = process p's mine[i]. */
rfx_status rfx_comm_gather_all(rfx_comm *c, const uint64_t *mine, int n, uint64_t *all);
/* The rows each process has for each: rows[counts[0] ..] for process 0, then process 1's,
 * ...; *out (rows' arity, emptied first) gets what every process sent this one, in rank
 * order. */
rfx_status rfx_comm_exchange(rfx_comm *c, const rfx_rows *rows, const size_t *counts, bool failed, rfx_rows *out);
/* *out (emptied first) = every process's mine, in rank order. */
rfx_status rfx_comm_gather_rows(rfx_comm *c, const rfx_rows *mine, bool failed, rfx_rows *out);

#endif
