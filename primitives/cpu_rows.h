/* cpu_rows.h (internal to primitives/): what the CPU primitives' files share about splitting
 * rows into chunks and comparing them. */
#ifndef RFX_CPU_ROWS_H
#define RFX_CPU_ROWS_H

#include "primitives.h"

#include <stdint.h>

#define PAR_MIN 32768          /* below this many tuples, stay on one thread */

/* Chunks for n rows on nthreads threads: several a thread, so uneven ones even out. */
static inline int chunks_for(size_t n, int nthreads)
{
    if (nthreads <= 1 || n < PAR_MIN)
        return 1;
    size_t c = (size_t)nthreads * 4;
    if (c > n / (PAR_MIN / 4))
        c = n / (PAR_MIN / 4);
    return c < 1 ? 1 : (int)c;
}

static inline int cmp_prefix(const uint32_t *a, const uint32_t *b, int k)
{
    for (int i = 0; i < k; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

#endif
