/* graphgen.h: deterministic random graphs for tests and benchmarks: uniform (each edge's
 * endpoints uniform over the vertices, as in the thesis's §5.4) and R-MAT with the
 * Graph500 parameters (a, b, c, d) = (0.57, 0.19, 0.19, 0.05). The same seed gives the
 * same edges on every machine (splitmix64, no libc random). */
#ifndef RFX_GRAPHGEN_H
#define RFX_GRAPHGEN_H

#include <stddef.h>
#include <stdint.h>

typedef enum rfx_graph_kind { RFX_GRAPH_UNIFORM, RFX_GRAPH_RMAT } rfx_graph_kind;

/* Fills edges[2*i], edges[2*i+1] for i < m with endpoints in [0, n); R-MAT needs n a
 * power of two. Vertex ids of R-MAT graphs are permuted (as Graph500 does) so that
 * degree does not follow id. */
void rfx_graph_generate(rfx_graph_kind kind, uint32_t n, size_t m, uint64_t seed, uint32_t *edges);
/* Edges lo..hi-1 of the same graph (edge i does not depend on how many there are) into
 * edges[0 ..]: large graphs are made in such parts on several threads. */
void rfx_graph_generate_part(rfx_graph_kind kind, uint32_t n, uint64_t seed, size_t lo, size_t hi, uint32_t *edges);

#endif
