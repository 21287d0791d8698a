/* stateless.c: user-defined functors for tests/cases/functors_*: the C signatures Soufflé
 * calls a stateless functor with (int32_t number, uint32_t unsigned, float, const char *
 * symbol). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int32_t add3(int32_t a, int32_t b, int32_t c)
{
    return a + b + c;
}

uint32_t umul(uint32_t a, uint32_t b)
{
    return a * b;
}

float half(float x)
{
    return x / 2;
}

/* A symbol result lives in a buffer of the functor's (rfx, as Soufflé, copies it at once). */
const char *shout(const char *s)
{
    static __thread char buf[256];
    size_t n = strlen(s) < sizeof buf - 2 ? strlen(s) : sizeof buf - 2;
    for (size_t i = 0; i < n; i++)
        buf[i] = s[i] >= 'a' && s[i] <= 'z' ? (char)(s[i] - 32) : s[i];
    buf[n] = '!';
    buf[n + 1] = 0;
    return buf;
}

int32_t text_length(const char *s)
{
    return (int32_t)strlen(s);
}

/* every kind of argument at once: integers and floats travel in different registers */
const char *describe(int32_t n, const char *s, float f, uint32_t u)
{
    static __thread char buf[128];
    snprintf(buf, sizeof buf, "%d/%s/%.2f/%u", n, s, (double)f, u);
    return buf;
}

int32_t answer(void)
{
    return 42;
}

/* lattices (tests/cases/lattice_*): numbers ordered by <=, and sets of up to 32 elements as
 * bit masks ordered by inclusion */
int32_t lat_max(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

int32_t lat_min(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

int32_t set_union(int32_t a, int32_t b)
{
    return a | b;
}

int32_t set_meet(int32_t a, int32_t b)
{
    return a & b;
}
