/* graphgen.c: see graphgen.h. */
#include "graphgen.h"

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

void rfx_graph_generate(rfx_graph_kind kind, uint32_t n, size_t m, uint64_t seed, uint32_t *edges)
{
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    if (kind == RFX_GRAPH_UNIFORM) {
        for (size_t i = 0; i < m; i++) {
            edges[2 * i] = (uint32_t)(next(&s) % n);
            edges[2 * i + 1] = (uint32_t)(next(&s) % n);
        }
        return;
    }
    int scale = 0;
    while ((1u << scale) < n && scale < 31)
        scale++;
    uint32_t mask = (uint32_t)((1ull << scale) - 1);
    uint64_t key = next(&s);
    /* Graph500: a = 0.57, b = 0.19, c = 0.19, d = 0.05, on 2^32 fixed point */
    const uint64_t A = (uint64_t)(0.57 * 4294967296.0), B = (uint64_t)(0.19 * 4294967296.0),
                   C = (uint64_t)(0.19 * 4294967296.0);
    for (size_t i = 0; i < m; i++) {
        uint32_t u = 0, v = 0;
        for (int l = 0; l < scale; l++) {
            uint64_t r = next(&s) >> 32;
            u <<= 1;
            v <<= 1;
            if (r < A) {
            } else if (r < A + B) {
                v |= 1;
            } else if (r < A + B + C) {
                u |= 1;
            } else {
                u |= 1;
                v |= 1;
            }
        }
        edges[2 * i] = scramble(u, mask, key);
        edges[2 * i + 1] = scramble(v, mask, key);
    }
}
