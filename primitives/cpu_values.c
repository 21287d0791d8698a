/* cpu_values.c: commands that make or pick values a tuple at a time: RANGE's values of
 * each tuple (range()), CHOICE's selection of the tuples a choice-domain keeps. */
#include "primitives.h"
#include "cpu_rows.h"
#include "rx_ops.h"

#include <stdlib.h>
#include <string.h>

typedef struct range_out {
    const uint32_t *t;
    int arity;
    rfx_rows *dst;
    rfx_status st;
} range_out;

static bool range_emit(range_out *o, uint32_t v)
{
    uint32_t row[RFX_MAX_ARITY + 1];
    rfx_memcpy(row, o->t, sizeof(uint32_t) * (size_t)o->arity);
    row[o->arity] = v;
    o->st = rfx_rows_push(o->dst, row);
    return o->st == RFX_OK;
}

/* One tuple's values. Integers step in 64 bits, so a value past the type's range ends the
 * run rather than wrapping (Soufflé's loop would wrap around forever); a float step too
 * small to change the value ends it too. */
static void range_values(range_out *o, rfx_prim prim, uint32_t from, uint32_t to, uint32_t step, bool has_step)
{
    if (prim == RFX_FLOAT) {
        float x = rfx_as_f32(from), b = rfx_as_f32(to), s = has_step ? rfx_as_f32(step) : x <= b ? 1.0f : -1.0f;
        if (s == 0 || s != s) {
            if (x != b)
                range_emit(o, from);
            return;
        }
        for (; s > 0 ? x < b : b < x; x += s)
            if (!range_emit(o, rfx_of_f32(x)) || x + s == x)
                return;
        return;
    }
    int64_t x, b, s;
    if (prim == RFX_NUMBER) {
        x = (int32_t)from, b = (int32_t)to;
        s = has_step ? (int32_t)step : x <= b ? 1 : -1;
    } else {   /* unsigned: an explicit step only counts up, the default one down where to < from */
        x = from, b = to;
        s = has_step ? (int64_t)step : x <= b ? 1 : -1;
    }
    if (s == 0) {
        if (x != b)
            range_emit(o, from);
        return;
    }
    for (; s > 0 ? x < b : b < x; x += s)
        if (!range_emit(o, (uint32_t)x))
            return;
}

rfx_status rfx_cpu_range(const rfx_rows *src, rfx_rx *const *bounds, int nb, rfx_rows *dst)
{
    rfx_rows out;
    rfx_rows_init(&out, src->arity + 1);
    range_out o = {NULL, src->arity, &out, RFX_OK};
    bool fail = false;
    rfx_prim prim = bounds[0]->prim;
    for (size_t i = 0; i < src->n && o.st == RFX_OK && !fail; i++) {
        o.t = src->data + i * (size_t)src->arity;
        uint32_t v[3];
        for (int k = 0; k < nb; k++)
            v[k] = rfx_rx_eval(bounds[k], o.t, src->arity, NULL, &fail);
        if (!fail)
            range_values(&o, prim, v[0], v[1], nb > 2 ? v[2] : 0, nb > 2);
    }
    if (o.st != RFX_OK || fail) {
        rfx_rows_free(&out);
        return fail ? RFX_ERR_DIV0 : o.st;
    }
    rfx_rows_free(dst);
    *dst = out;
    return RFX_OK;
}

rfx_status rfx_cpu_choice(const rfx_rows *src, const rfx_choice_domains *d, const rfx_rows *const *held,
                          int nheld, rfx_rows *dst)
{
    const uint32_t **sets = rfx_malloc(sizeof *sets * (size_t)(nheld + 1));
    size_t *sizes = rfx_malloc(sizeof *sizes * (size_t)(nheld + 1));
    bool *keep = rfx_malloc(src->n + 1);
    rfx_rows out;
    rfx_rows_init(&out, src->arity);
    for (int k = 0; sets && sizes && k < nheld; k++) {
        sets[k] = held[k]->data;
        sizes[k] = held[k]->n;
    }
    rfx_status st = keep && sets && sizes ? rfx_choice_select(d, src->arity, sets, sizes, nheld, src->data, src->n, keep)
                                          : RFX_ERR_NOMEM;
    for (size_t i = 0; st == RFX_OK && i < src->n; i++)
        if (keep[i])
            st = rfx_rows_push(&out, src->data + i * (size_t)src->arity);
    free(keep);
    free(sets);
    free(sizes);
    if (st != RFX_OK) {
        rfx_rows_free(&out);
        return st;
    }
    rfx_rows_free(dst);
    *dst = out;
    return RFX_OK;
}
