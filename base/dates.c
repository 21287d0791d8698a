/* dates.c: a date's text, YYYY-MM-DD, to days since 1970-01-01 and back (the calendar in
 * rx_ops.h). */
#include "base.h"
#include "rx_ops.h"

#include <stdio.h>

/* Digits s[*i..] as a number of at most max digits (at least one); false for none. */
static bool digits(const char *s, size_t n, size_t *i, int max, int64_t *v)
{
    size_t k = *i;
    *v = 0;
    while (k < n && s[k] >= '0' && s[k] <= '9' && (int)(k - *i) < max)
        *v = *v * 10 + (s[k++] - '0');
    if (k == *i)
        return false;
    *i = k;
    return true;
}

bool rfx_date_parse(const char *s, size_t n, uint32_t *day)
{
    size_t i = 0;
    bool neg = n && s[0] == '-';
    int64_t y, m, d;
    i += neg;
    if (!digits(s, n, &i, 7, &y) || i >= n || s[i++] != '-' || !digits(s, n, &i, 2, &m) || i >= n || s[i++] != '-' ||
        !digits(s, n, &i, 2, &d) || i != n)
        return false;
    y = neg ? -y : y;
    if (m < 1 || m > 12 || d < 1 || d > rfx_month_days(y, (unsigned)m))
        return false;
    *day = (uint32_t)(int32_t)rfx_days_from_civil(y, (unsigned)m, (unsigned)d);
    return true;
}

int rfx_date_format(char *buf, size_t cap, uint32_t day)
{
    int64_t y;
    unsigned m, d;
    rfx_civil_from_days((int32_t)day, &y, &m, &d);
    return snprintf(buf, cap, y < 0 ? "-%04lld-%02u-%02u" : "%04lld-%02u-%02u", (long long)(y < 0 ? -y : y), m, d);
}
