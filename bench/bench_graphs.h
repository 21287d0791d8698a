/* bench_graphs.h: graphs for the triangle benchmarks: edge files and R-MAT graphs made
 * in memory, and their orientation on the host. */
#ifndef RFX_BENCH_GRAPHS_H
#define RFX_BENCH_GRAPHS_H

#include "primitives.h"

/* How edges are oriented. ID: from the lower id; DEGREE: from the lower-degree end (ties by id); RANK: as DEGREE,
 * the vertices renamed by their rank in that order (so also from the lower id). */
typedef enum rfx_bench_orientation { RFX_ORIENT_ID, RFX_ORIENT_DEGREE, RFX_ORIENT_RANK } rfx_bench_orientation;
/* rows (arity 2) = raw's m edges without self-loops, each oriented as `how` says; returns
 * the milliseconds taken. */
double rfx_bench_orient(const uint32_t *raw, size_t m, rfx_bench_orientation how, rfx_rows *rows);
/* rfx_bench_orient, then sorted and made a set on nthreads threads (the join's input);
 * false when out of host memory. */
bool rfx_bench_oriented_set(const uint32_t *raw, size_t m, rfx_bench_orientation how, int nthreads, rfx_rows *rows);
/* The last level's probes when counting the triangles of oriented edges e (d = out-degree;
 * a count hashes one list and probes the other): *by_y = the sum over edges (x, y) of d(y)
 * (order x, y, z: N+(y) probed), *by_x = of d(x) (order y, x, z), *least = of the smaller.
 * False when out of host memory. */
bool rfx_bench_probe_sums(const rfx_rows *e, double *by_y, double *by_x, double *least);
/* Per vertex of the oriented edges e (ids 0 .. *top, the largest id in e): *out its rows
 * as x, *in as y (the caller frees both). False when out of host memory. */
bool rfx_bench_degrees(const rfx_rows *e, uint32_t *top, size_t **out, size_t **in);
/* cut[0 .. n]: n parts of consecutive ids 0 .. top of equal weight (out-edges, in-edges or
 * both of rfx_bench_degrees), part p holding ids [cut[p], cut[p + 1]); cut[n] = top + 1. */
void rfx_bench_cuts(const size_t *out, const size_t *in, uint32_t top, bool by_out, bool by_in, int n, uint32_t *cut);
/* fn(name, edges, m) for each edge file and each R-MAT scale (edge factor 16, seed 1). */
void rfx_bench_each_graph(const char **files, int nfiles, const int *scales, int nscales,
                          void (*fn)(const char *name, const uint32_t *edges, size_t m));

#endif
