/* graphgen.c: see graphgen.h. */
#include "graphgen.h"

#include "primitives.h"

#include <unistd.h>

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A bijection of [0, n) for n a power of two: odd multiplier and xor, masked. */
static uint32_t scramble(uint32_t v, uint32_t mask, uint64_t k)
{
    uint32_t a = (uint32_t)(k | 1), b = (uint32_t)(k >> 32);
    v = (v * a) & mask;
    v ^= b & mask;
    return (v * (a ^ 0x2u)) & mask;   /* still odd: a ^ 2 keeps bit 0 */
}

#define GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64's state after k more draws is the state plus k golden steps, so edge i's
 * draws start at a state computed directly: chunks of edges are made on threads of their
 * own and the edges are the same as one thread makes. */
typedef struct gen_job {
    rfx_graph_kind kind;
    uint32_t n, mask;
    int scale, nthreads;
    size_t m;
    uint64_t s0, key;
    uint32_t *edges;
} gen_job;

/* Graph500: a = 0.57, b = 0.19, c = 0.19, d = 0.05, on 2^32 fixed point */
static const uint64_t RMAT_A = (uint64_t)(0.57 * 4294967296.0), RMAT_B = (uint64_t)(0.19 * 4294967296.0),
                      RMAT_C = (uint64_t)(0.19 * 4294967296.0);

/* Edges [lo, hi) into out[0 ..]. */
static void gen_range(const gen_job *j, size_t lo, size_t hi, uint32_t *out)
{
    uint32_t *edges = out;
    if (j->kind == RFX_GRAPH_UNIFORM) {
        uint64_t s = j->s0 + (uint64_t)lo * 2 * GOLDEN;
        for (size_t i = lo; i < hi; i++) {
            edges[2 * (i - lo)] = (uint32_t)(next(&s) % j->n);
            edges[2 * (i - lo) + 1] = (uint32_t)(next(&s) % j->n);
        }
        return;
    }
    uint64_t s = j->s0 + (uint64_t)lo * (uint64_t)j->scale * GOLDEN;
    for (size_t i = lo; i < hi; i++) {
        uint32_t u = 0, v = 0;
        for (int l = 0; l < j->scale; l++) {
            uint64_t r = next(&s) >> 32;
            u <<= 1;
            v <<= 1;
            if (r < RMAT_A) {
            } else if (r < RMAT_A + RMAT_B) {
                v |= 1;
            } else if (r < RMAT_A + RMAT_B + RMAT_C) {
                u |= 1;
            } else {
                u |= 1;
                v |= 1;
            }
        }
        edges[2 * (i - lo)] = scramble(u, j->mask, j->key);
        edges[2 * (i - lo) + 1] = scramble(v, j->mask, j->key);
    }
}

static void gen_part(int t, void *arg)
{
    const gen_job *j = arg;
    size_t lo = j->m * (size_t)t / (size_t)j->nthreads, hi = j->m * (size_t)(t + 1) / (size_t)j->nthreads;
    gen_range(j, lo, hi, j->edges + 2 * lo);
}

static gen_job gen_start(rfx_graph_kind kind, uint32_t n, size_t m, uint64_t seed, uint32_t *edges)
{
    gen_job j = {kind, n, 0, 0, 1, m, seed * 0x2545F4914F6CDD1Dull + 1, 0, edges};
    if (kind == RFX_GRAPH_RMAT) {
        while ((1u << j.scale) < n && j.scale < 31)
            j.scale++;
        j.mask = (uint32_t)((1ull << j.scale) - 1);
        j.key = next(&j.s0);
    }
    return j;
}

void rfx_graph_generate_part(rfx_graph_kind kind, uint32_t n, uint64_t seed, size_t lo, size_t hi, uint32_t *edges)
{
    gen_job j = gen_start(kind, n, hi, seed, edges);
    gen_range(&j, lo, hi, edges);
}

void rfx_graph_generate(rfx_graph_kind kind, uint32_t n, size_t m, uint64_t seed, uint32_t *edges)
{
    gen_job j = gen_start(kind, n, m, seed, edges);
    long nc = sysconf(_SC_NPROCESSORS_ONLN);
    j.nthreads = m < ((size_t)1 << 20) || nc < 2 ? 1 : nc > 64 ? 64 : (int)nc;
    rfx_parallel_for(j.nthreads, j.nthreads, gen_part, &j);
}
