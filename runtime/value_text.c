/* value_text.c: one value's text in a facts file, by its kind: numbers of both widths
 * (decimal, 0x hex, a sign), floats as strtof and strtod read them, symbols interned,
 * dates, and decimals exactly at their type's scale. */
#include "runtime.h"
#include "base.h"
#include "rx_ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    if (i == n)
        return false;
    uint64_t v = 0;
    if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        for (i += 2; i < n; i++) {
            char c = s[i];
            int d = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
            if (d < 0 || v > 0xFFFFFFFFull)
                return false;
            v = v * 16 + (uint64_t)d;
        }
    } else {
        for (; i < n; i++) {
            if (s[i] < '0' || s[i] > '9' || v > 0xFFFFFFFFFull)
                return false;
            v = v * 10 + (uint64_t)(s[i] - '0');
        }
    }
    if (v > 0x1FFFFFFFFull)
        v = 0x1FFFFFFFFull;   /* out of any 32-bit range; reported by the caller */
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* A 64-bit integer's text (decimal, or hex after 0x; a sign first): its magnitude and sign.
 * 0 when it is no integer, 2 when its magnitude is past 2^64 - 1, else 1. */
static int parse_mag64(const char *s, size_t n, bool *neg, uint64_t *mag)
{
    size_t i = 0;
    *neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        *neg = s[i++] == '-';
    bool hex = n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
    i += hex ? 2 : 0;
    if (i == n)
        return 0;
    uint64_t v = 0;
    bool big = false;
    for (; i < n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : hex && (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
        uint64_t base = hex ? 16 : 10;
        if (d < 0)
            return 0;
        big |= v > (UINT64_MAX - (uint64_t)d) / base;
        v = v * base + (uint64_t)d;
    }
    *mag = v;
    return big ? 2 : 1;
}

/* A float's text, the whole field as strtof (or, wide, strtod) reads it: its bits (a
 * float's in the low 32); an error text or NULL. */
static const char *parse_float(const char *s, size_t n, bool wide, uint64_t *bits)
{
    char tmp[128];
    if (n == 0 || n >= sizeof tmp)
        return "is not a float";
    rfx_memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    double d = wide ? strtod(tmp, &end) : 0;
    float f = wide ? 0 : strtof(tmp, &end);
    if (*end || end == tmp)
        return "is not a float";
    if (errno == ERANGE)   /* as Soufflé: neither inf nor 0 for what a float cannot hold */
        return wide ? "is out of range for float64" : "is out of range for float (32-bit)";
    uint32_t u;
    rfx_memcpy(&u, &f, 4);
    rfx_memcpy(bits, &d, 8);
    *bits = !wide ? u : d != d ? 0x7ff8000000000000ull : *bits;   /* every NaN as rx_ops.h makes them */
    return NULL;
}

/* A value of a 64-bit kind: its high word at out[0], its low word at out[1]. */
static const char *parse_wide(const char *s, size_t n, rfx_prim prim, uint32_t *out)
{
    uint64_t bits;
    if (prim == RFX_FLOAT64) {
        const char *why = parse_float(s, n, true, &bits);
        if (why)
            return why;
    } else {
        bool neg, num = prim == RFX_NUMBER64;
        uint64_t mag = 0;
        int got = parse_mag64(s, n, &neg, &mag);
        if (!got)
            return num ? "is not a number" : "is not an unsigned number";
        if (got == 2 || (num && mag > (neg ? 0x8000000000000000ull : 0x7fffffffffffffffull)) || (!num && neg && mag))
            return num ? "is out of range for number64 (64-bit signed)" : "is out of range for unsigned64 (64-bit)";
        bits = neg ? 0u - mag : mag;
    }
    out[0] = (uint32_t)(bits >> 32);
    out[1] = (uint32_t)bits;
    return NULL;
}

/* Converts one field; returns an error text or NULL. */
const char *rfx_parse_value(const char *s, size_t n, rfx_prim prim, rfx_symtab *syms, uint32_t *out)
{
    if (prim != RFX_SYMBOL && prim != RFX_DATE && prim != RFX_DECIMAL)   /* as Soufflé's (strtol's) */
        for (; n > 1 && (*s == ' ' || (*s >= '\t' && *s <= '\r')); s++, n--) {
        }
    switch (prim) {
    case RFX_NUMBER64: case RFX_UNSIGNED64: case RFX_FLOAT64:
        return parse_wide(s, n, prim, out);
    case RFX_DATE:
        return rfx_date_parse(s, n, out) ? NULL : "is not a date (YYYY-MM-DD)";
    case RFX_DECIMAL:   /* read with its type's scale (parse_field) */
    case RFX_WORD: case RFX_NPRIMS:
        break;
    case RFX_NUMBER: {
        int64_t v;
        if (!parse_i64(s, n, &v))
            return "is not a number";
        if (v < INT32_MIN || v > INT32_MAX)
            return "is out of range for number (32-bit signed)";
        *out = (uint32_t)(int32_t)v;
        return NULL;
    }
    case RFX_UNSIGNED: {
        int64_t v;
        if (!parse_i64(s, n, &v))
            return "is not an unsigned number";
        if (v < 0 || v > UINT32_MAX)
            return "is out of range for unsigned (32-bit)";
        *out = (uint32_t)v;
        return NULL;
    }
    case RFX_FLOAT: {
        uint64_t bits;
        const char *why = parse_float(s, n, false, &bits);
        *out = why ? *out : (uint32_t)bits;
        return why;
    }
    case RFX_SYMBOL: {
        uint32_t id = rfx_symtab_intern(syms, s, n);
        if (id == UINT32_MAX)
            return "could not be stored (out of memory)";
        *out = id;
        return NULL;
    }
    }
    return "has an unknown type";
}

/* A decimal's text ([sign] digits [. digits]) as its count of 10^-scale: exactly, or an
 * error where it has more places after the point than the scale or more before it than
 * the type holds. */
const char *rfx_parse_decimal(const char *s, size_t n, int precision, int scale, uint32_t *out)
{
    size_t i = 0;
    bool neg = n && s[0] == '-', seen = false;
    i += n && (s[0] == '-' || s[0] == '+');
    uint64_t ip = 0, fp = 0;
    int idig = 0, fdig = 0;   /* digits before the point (past leading zeros), and after it */
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        seen = true;
        if (ip || s[i] != '0')
            idig++;
        if (idig > precision - scale)
            return "is out of range for its decimal type";
        ip = ip * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            seen = true;
            if (fdig < 19) {
                fp = fp * 10 + (uint64_t)(s[i] - '0');
                fdig++;
            } else if (s[i] != '0')
                return "has more places after the point than its decimal type keeps";
        }
    if (i != n || !seen)
        return "is not a decimal number";
    while (fdig > scale && fp % 10 == 0) {   /* zeros past the scale say nothing */
        fp /= 10;
        fdig--;
    }
    if (fdig > scale)
        return "has more places after the point than its decimal type keeps";
    uint64_t raw = ip * (uint64_t)rfx_pow10(scale) + fp * (uint64_t)rfx_pow10(scale - fdig);
    raw = neg ? 0u - raw : raw;
    out[0] = (uint32_t)(raw >> 32);
    out[1] = (uint32_t)raw;
    return NULL;
}
