/* text_ops.h: the functors that only read symbols' texts (strlen, contains, the symbols'
 * comparison, like), shared by the host's functors (base/functors.c) and the device's
 * expression interpreter (primitives/gpu_core.cuh, over the device's copy of the symbol
 * table), so that both backends give the same answers. A text is its bytes and their
 * count (no NUL is read). */
#ifndef RFX_TEXT_OPS_H
#define RFX_TEXT_OPS_H

#include "base.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define RFX_TX static __host__ __device__ inline
#else
#define RFX_TX static inline
#endif

RFX_TX bool rfx_text_eq(const char *a, const char *b, size_t n)
{
#ifdef __CUDA_ARCH__
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
#else
    return memcmp(a, b, n) == 0;
#endif
}

/* The first place of needle (m bytes) in s (n bytes), or NULL; s itself for an empty one. */
RFX_TX const char *rfx_text_find(const char *s, size_t n, const char *needle, size_t m)
{
#ifdef __CUDA_ARCH__
    if (m == 0)
        return s;
    for (size_t i = 0; i + m <= n; i++)
        if (s[i] == needle[0] && rfx_text_eq(s + i + 1, needle + 1, m - 1))
            return s + i;
    return NULL;
#else
    return m == 0 ? s : (const char *)memmem(s, n, needle, m);
#endif
}

/* The first place of byte c in s (n bytes), or n. */
RFX_TX size_t rfx_text_index(const char *s, size_t n, char c)
{
#ifdef __CUDA_ARCH__
    for (size_t i = 0; i < n; i++)
        if (s[i] == c)
            return i;
    return n;
#else
    const char *at = (const char *)memchr(s, c, n);
    return at ? (size_t)(at - s) : n;
#endif
}

/* The length of the UTF-8 character at s[0] (1 for a stray continuation byte). */
RFX_TX size_t rfx_utf8_len(const char *s, size_t left)
{
    unsigned char c = (unsigned char)s[0];
    size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return n < left ? n : left;
}

/* -1, 0 or 1 as the texts compare, byte by byte (unsigned), a prefix first. */
RFX_TX int rfx_text_cmp(const char *a, size_t n0, const char *b, size_t n1)
{
    size_t n = n0 < n1 ? n0 : n1;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
    return (n0 > n1) - (n0 < n1);
}

/* like() of a pattern without `_`: its texts between `%`s found in order, each at its first
 * place after the one before (the earliest leaves the most room for the rest), the first
 * at the start and the last at the end unless a `%` frees them. */
RFX_TX bool rfx_like_segments(const char *p, size_t m, const char *s, size_t n)
{
    size_t i = 0, j = 0;
    for (bool anchored = true;; anchored = false) {
        size_t pct = j + rfx_text_index(p + j, m - j, '%');
        size_t len = pct - j;
        if (pct == m)   /* the last text: at the end (the whole of s where there was no `%`) */
            return anchored ? n == len && rfx_text_eq(s, p, len)
                            : n - i >= len && rfx_text_eq(s + n - len, p + j, len);
        if (anchored) {
            if (n < len || !rfx_text_eq(s, p, len))
                return false;
            i = len;
        } else if (len) {
            const char *at = rfx_text_find(s + i, n - i, p + j, len);
            if (!at)
                return false;
            i = (size_t)(at - s) + len;
        }
        j += len + 1;
    }
}

/* SQL's LIKE: s whole matches p, `%` any text, `_` one character. The last `%` is retried
 * one character further on a mismatch (what it took so far cannot matter to what follows). */
RFX_TX bool rfx_like(const char *p, size_t m, const char *s, size_t n)
{
    if (rfx_text_index(p, m, '_') == m)
        return rfx_like_segments(p, m, s, n);
    size_t i = 0, j = 0, star = SIZE_MAX, from = 0;
    while (i < n) {
        if (j < m && p[j] == '%') {
            star = ++j;
            from = i;
        } else if (j < m && p[j] == '_') {
            i += rfx_utf8_len(s + i, n - i);
            j++;
        } else if (j < m && p[j] == s[i]) {
            i++;
            j++;
        } else if (star != SIZE_MAX) {
            j = star;
            from += rfx_utf8_len(s + from, n - from);
            i = from;
        } else
            return false;
    }
    while (j < m && p[j] == '%')
        j++;
    return j == m;
}

/* Whether op is one of these functors (rfx_text_apply computes it). */
RFX_TX bool rfx_text_op(int op)
{
    return op == RFX_FX_STRLEN || op == RFX_FX_SYMCMP || op == RFX_FX_CONTAINS || op == RFX_FX_LIKE;
}

/* op over the texts of its one or two symbol arguments (a, then b where it takes two). */
RFX_TX uint32_t rfx_text_apply(int op, const char *a, size_t n0, const char *b, size_t n1)
{
    switch (op) {
    case RFX_FX_STRLEN: return (uint32_t)n0;
    case RFX_FX_SYMCMP: return (uint32_t)rfx_text_cmp(a, n0, b, n1);
    case RFX_FX_CONTAINS: return rfx_text_find(b, n1, a, n0) != NULL;   /* the first in the second */
    default: return rfx_like(a, n0, b, n1);   /* RFX_FX_LIKE: the second matches the pattern first */
    }
}

#endif
