// gpu_select.cu: SELECT, MAP and PROJECT (MAPFILTER): the interpreter over tiles in one pass with the order kept, plain comparisons and simple terms without it.
#include "gpu_core.cuh"

// ---- map / filter ----------------------------------------------------------------------
__global__ void k_mapfilter(const __grid_constant__ gprog code, const uint32_t *src, size_t n, int arity, int len,
                            int nout, uint32_t *out, uint64_t *flags, unsigned *div_flag)
{
    bool div0 = false;
    GRID_STRIDE(i, n)
    {
        bool keep = run_prog(code, len, src + i * arity, arity, NULL, out + i * nout, &div0);
        if (flags)
            flags[i] = keep;
    }
    if (div0)
        atomicOr(div_flag, 1u);
}


/* Two-column rows: one 8-byte load and store per row. */
__global__ void k_project2(const uint2 *src, size_t n, int c0, int c1, uint2 *out)
{
    GRID_STRIDE(i, n)
    {
        uint2 v = src[i];
        out[i] = make_uint2(c0 ? v.y : v.x, c1 ? v.y : v.x);
    }
}

/* __grid_constant__: the column map is read from parameter space, not copied per thread. */
__global__ void k_project(const uint32_t *src, size_t n, int arity, const __grid_constant__ colmap m, uint32_t *out)
{
    GRID_STRIDE(i, n)
    {
        const uint32_t *t = src + i * arity;
        for (int k = 0; k < m.n; k++)
            out[i * m.n + k] = t[m.col[k]];
    }
}


// ---- filter: one pass, order kept (decoupled look-back over tiles) -----------------------
/* The program run over a tile of ITEMS * 256 rows at once, an instruction at a time: the
 * stack lives in shared memory, one slot per stack level and row (row j * 256 + thread:
 * shared accesses free of bank conflicts), so each instruction is decoded once per ITEMS
 * rows (the per-row interpreter kept its stack in local memory and reached half the copy
 * bandwidth at best). rows: the tile's rows as staged in shared memory. live: rows
 * that exist (predicate) or are kept (outputs); only they raise division by zero (where
 * the left of each AND around it holds) or are written. Returns the rows a FILTER keeps.
 * EMIT k writes row j's value at ostage[pos[j] * nout + k]. */
template <int ITEMS>
__device__ __forceinline__ unsigned run_tile(const gins *code, int start, int len, const uint32_t *rows, int arity,
                                             unsigned live, uint32_t *slot, bool *div0, uint32_t *ostage, int nout,
                                             const unsigned *pos)
{
    const int T = ITEMS * SEL_THREADS;
    unsigned pass = live, reach = live;   // reach: rows whose evaluation gets here (G_ANDIF)
    unsigned outer[STACK];                // the reach before each G_ANDIF still open
    int sp = 0, open = 0;
    uint32_t *mine = slot + threadIdx.x;
    for (int pc = start; pc < start + len; pc++) {
        gins in = code[pc];
        uint32_t *x = mine + (sp - 1) * T, *y = mine + sp * T;   // top, and the slot above it
        switch (in.op) {
        case G_COL:
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                y[j * SEL_THREADS] = rows[(j * SEL_THREADS + threadIdx.x) * arity + in.arg];
            sp++;
            break;
        case G_CONST:
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                y[j * SEL_THREADS] = in.value;
            sp++;
            break;
        case G_NEG:
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                x[j * SEL_THREADS] = rfx_negate(in.prim, x[j * SEL_THREADS]);
            break;
        case G_BIN:
            sp--;
            x -= T;
            y -= T;
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                bool d = false;
                x[j * SEL_THREADS] = rfx_binary(in.arg, in.prim, x[j * SEL_THREADS], y[j * SEL_THREADS], &d);
                *div0 |= d && (reach >> j & 1);
            }
            break;
        case G_CMP:
            sp--;
            x -= T;
            y -= T;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                x[j * SEL_THREADS] = rfx_compare(in.arg, in.prim, x[j * SEL_THREADS], y[j * SEL_THREADS]);
            break;
        case G_ANDIF:   // every row runs the right side; its failures count where the left holds
            outer[open++] = reach;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                if (!x[j * SEL_THREADS])
                    reach &= ~(1u << j);
            break;
        case G_ANDEND:
            reach = outer[--open];
            // fall through
        case G_AND:
            sp--;
            x -= T;
            y -= T;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                x[j * SEL_THREADS] = x[j * SEL_THREADS] && y[j * SEL_THREADS];
            break;
        case G_FILTER:
            sp--;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                if (!x[j * SEL_THREADS])
                    pass &= ~(1u << j);
            break;
        case G_EMIT:
            sp--;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                if (live >> j & 1)
                    ostage[pos[j] * nout + in.arg] = x[j * SEL_THREADS];
            break;
        }
    }
    return pass;
}

/* Issues the copies of tile `tile`'s words into shared memory (cp.async: they land while
 * the block works on its previous tile) and commits them as one group. */
__device__ __forceinline__ void stage_tile(uint32_t *raw, const uint32_t *src, size_t n, int arity, size_t tile, int T)
{
    size_t base = tile * (size_t)T;
    if (base < n) {
        const uint32_t *words = src + base * arity;
        unsigned nw = (unsigned)((n - base < (size_t)T ? n - base : (size_t)T) * (size_t)arity);
        for (unsigned w = threadIdx.x; w < nw; w += SEL_THREADS)
            __pipeline_memcpy_async(raw + w, words + w, 4);
    }
    __pipeline_commit();
}

/* SELECT and MAP over one source, by resident blocks that take tiles in order from a
 * counter and copy the next tile in (stage_tile) while they work on the current one (the
 * same kernel with each block's phases in series, load, compute, look-back, write, was
 * markedly slower). A tile: the predicate,
 * its kept rows placed (row order: per row slab j, the warps' ballots; the tile's offset
 * by decoupled look-back, lookback_warp), the outputs run into a staged output tile that
 * is written out in one coalesced sweep. Without a predicate (dense) row i goes to output
 * i. Dynamic shared memory: (2 * arity + depth + nout) * T words. */
template <int ITEMS>
__global__ void __launch_bounds__(SEL_THREADS) k_select_tiles(const __grid_constant__ gprog code, const uint32_t *src,
                                                              size_t n, int arity, int plen, int olen, int depth,
                                                              int nout, bool dense, uint32_t *out, const lb_args lb,
                                                              unsigned *div_flag)
{
    extern __shared__ __align__(16) uint32_t smem[];
    __shared__ unsigned s_next, s_kept, s_excl[ITEMS * SEL_THREADS / 32];
    __shared__ unsigned long long s_at;
    const int T = ITEMS * SEL_THREADS;
    const size_t ntiles = (n + T - 1) / T;
    uint32_t *slot = smem + 2 * arity * T, *ostage = slot + depth * T;   // after the two staged tiles
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, b = 0;
    bool div0 = false;
    if (threadIdx.x == 0)
        s_next = lb_take(lb);
    __syncthreads();
    size_t tile = s_next;
    stage_tile(smem, src, n, arity, tile, T);
    while (tile < ntiles) {
        // A MAP takes its next tile now, a whole tile ahead. A SELECT takes it once its
        // look-back is done: a tile taken early publishes its count a tile late, and the
        // look-backs of the tiles after it wait for that (taking tiles early halved a
        // SELECT's rate; a MAP gains from the copy ahead).
        size_t next = ntiles;
        uint32_t *rows = smem + b * arity * T;
        __syncthreads();   // everyone has read s_next
        if (dense) {
            if (threadIdx.x == 0)
                s_next = lb_take(lb);
            __syncthreads();
            next = s_next;
            stage_tile(smem + (b ^ 1) * arity * T, src, n, arity, next, T);
            __pipeline_wait_prior(1);   // this thread's copies of the current tile have landed
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();   // and everyone's
        size_t base = tile * T, tile_n = n - base < (size_t)T ? n - base : (size_t)T;
        unsigned live = 0;
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            live |= (size_t)(j * SEL_THREADS + threadIdx.x) < tile_n ? 1u << j : 0u;
        unsigned pos[ITEMS], keep = live, kept = (unsigned)tile_n;
        unsigned long long at = base;
        if (dense) {
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                pos[j] = j * SEL_THREADS + threadIdx.x;
        } else {
            keep = run_tile<ITEMS>(code.ins, 0, plen, rows, arity, live, slot, &div0, NULL, 0, NULL);
            unsigned ballot[ITEMS];
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                ballot[j] = __ballot_sync(0xffffffffu, keep >> j & 1);
                if (lane == 0)
                    s_excl[j * (SEL_THREADS / 32) + warp] = __popc(ballot[j]);
            }
            __syncthreads();
            // the tile's place, by warp 0, which then takes the next tile
            if (warp == 0) {
                unsigned tile_kept;
                unsigned long long excl = place_slabs(s_excl, ITEMS * SEL_THREADS / 32, tile, ntiles, lb, &tile_kept);
                if (lane == 0) {
                    s_kept = tile_kept;
                    s_at = excl;
                    s_next = lb_take(lb);
                }
            }
            __syncthreads();
            kept = s_kept;
            at = s_at;
            next = s_next;
            stage_tile(smem + (b ^ 1) * arity * T, src, n, arity, next, T);
            unsigned below = (1u << lane) - 1;
#pragma unroll
            for (int j = 0; j < ITEMS; j++)
                pos[j] = s_excl[j * (SEL_THREADS / 32) + warp] + __popc(ballot[j] & below);
        }
        run_tile<ITEMS>(code.ins, plen, olen, rows, arity, keep, slot, &div0, ostage, nout, pos);
        __syncthreads();
        block_write_out(out + at * nout, ostage, kept * (unsigned)nout);
        tile = next;
        b ^= 1;
    }
    __pipeline_wait_prior(0);
    if (div0)
        atomicOr(div_flag, 1u);
}

/* Rows per thread: the most whose tile (two staged copies of the rows, the stack, the
 * staged outputs: `words` a row) fits the block's share of shared memory, else 2 rows in
 * up to 96 KiB (0: too wide, not tiled). */
static int tile_items(int words)
{
    size_t row = (size_t)words * SEL_THREADS * 4;   // 64 KiB: SELECT 51%, 45% at 32 KiB; MAP 89% either way
    return 8 * row <= 64 * 1024 ? 8 : 4 * row <= 64 * 1024 ? 4 : 2 * row <= 96 * 1024 ? 2 : 0;
}

static rfx_status select_tiles(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out, int nout,
                               rfx_dev_rows *dst, bool *done)
{
    int plen, olen, depth;
    gprog code;
    *done = false;
    rfx_status st = load_prog(g, pred, out, nout, &code, &plen, &olen, &depth);
    if (st)
        return st;
    int items = code.wide ? 0 : tile_items(2 * src->arity + depth + nout);   // 32-bit slots only
    if (!items)
        return RFX_OK;
    size_t n = src->n, T = (size_t)items * SEL_THREADS, ntiles = (n + T - 1) / T,
           smem = (size_t)(2 * src->arity + depth + nout) * T * 4 + 16;   // block_write_out reads past the outputs
    rfx_dev_rows res;
    lb_scratch lb;
    if ((st = tiled_begin(g, nout, n, ntiles, 0, &res, &lb)) != RFX_OK)
        return st;
    bool dense = pred == NULL;
    cudaError_t e;
    // resident blocks only: a block waits (look-back) on tiles that others hold; each
    // block takes tickets until one is past the tiles, so the last is ntiles + grid - 1
#define SELECT_TILES(I)                                                                                              \
    do {                                                                                                             \
        int per_sm = 0;                                                                                              \
        e = cudaFuncSetAttribute(k_select_tiles<I>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);        \
        if (e == cudaSuccess)                                                                                        \
            e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_select_tiles<I>, SEL_THREADS, smem);       \
        size_t grid = (size_t)(per_sm > 0 ? per_sm : 1) * (size_t)g->sms;                                            \
        grid = grid < ntiles ? grid : ntiles;                                                                        \
        lb.a.last = (unsigned)(ntiles + grid - 1);                                                                   \
        if (e == cudaSuccess)                                                                                        \
            k_select_tiles<I><<<(unsigned)grid, SEL_THREADS, smem, g->stream>>>(                                     \
                code, src->data, n, src->arity, plen, olen, depth, nout, dense, res.data, lb.a, g->d_flag);          \
    } while (0)
    if (items == 8)
        SELECT_TILES(8);
    else if (items == 4)
        SELECT_TILES(4);
    else
        SELECT_TILES(2);
#undef SELECT_TILES
    if (e == cudaSuccess)
        e = cudaGetLastError();
    unsigned long long kept = n;
    if (e != cudaSuccess)
        st = fail(g, e, "k_select_tiles", __FILE__, __LINE__);
    else if (!dense)
        st = lb_total(g, &lb, "k_select_tiles", &kept);
    lb_free(g, &lb, st != RFX_OK);
    if (st == RFX_OK)
        st = check_div0(g);
    res.n = (size_t)kept;
    *done = true;
    return finish_filtered(g, st, &res, n, nout, NULL, dst);
}

// ---- SELECT by plain comparisons: rows in registers, no interpreter ----------------------
/* A predicate that is a conjunction of comparisons of columns and constants (not floats)
 * and outputs that are plain columns, the common SELECT of Datalog: each comparison is
 * three-way on keys made unsigned (flip: the sign bit of `number`), tested against a mask
 * of the outcomes it accepts (1 less, 2 equal, 4 greater). */
#define SS_CLAUSES 8
#define SS_OUTS 8
#define SS_CONST 255   // an operand that is the constant, not a column
struct sel_clause {
    uint32_t lval, rval, flip;
    uint8_t lcol, rcol, mask;
};
struct sel_simple {
    int nclause, nout;
    sel_clause c[SS_CLAUSES];
    uint8_t out[SS_OUTS];
};

/* A column of the row (below arity) or a constant: *col is the column, or SS_CONST with the
 * constant in *val. */
static bool term_operand(const rfx_rx *e, int arity, uint8_t *col, uint32_t *val)
{
    if (e->kind == RFX_RX_COL && e->col >= 0 && e->col < arity)
        *col = (uint8_t)e->col;
    else if (e->kind == RFX_RX_CONST)
        *col = SS_CONST, *val = e->value;
    else
        return false;
    return true;
}

static bool simple_clauses(const rfx_rx *e, int arity, sel_simple *s)
{
    if (e->kind == RFX_RX_AND)
        return simple_clauses(e->l, arity, s) && simple_clauses(e->r, arity, s);
    if (e->kind != RFX_RX_CMP || e->prim == RFX_FLOAT || rfx_rx_wide(e) || s->nclause == SS_CLAUSES)
        return false;
    const rfx_rx *side[2] = {e->l, e->r};
    sel_clause *c = &s->c[s->nclause++];
    uint8_t col[2];
    uint32_t val[2] = {0, 0};
    for (int i = 0; i < 2; i++)
        if (!term_operand(side[i], arity, &col[i], &val[i]))
            return false;
    c->lcol = col[0], c->rcol = col[1], c->lval = val[0], c->rval = val[1];
    c->flip = e->prim == RFX_NUMBER ? 0x80000000u : 0u;
    switch (e->op) {
    case RFX_LT: c->mask = 1; break;
    case RFX_LE: c->mask = 3; break;
    case RFX_GT: c->mask = 4; break;
    case RFX_GE: c->mask = 6; break;
    case RFX_EQ: c->mask = 2; break;
    default: c->mask = 5; break;
    }
    return true;
}

static bool simple_select(const rfx_rx *pred, rfx_rx *const *out, int nout, int arity, sel_simple *s)
{
    colmap m;
    memset(s, 0, sizeof *s);
    if (!pred || arity < 1 || arity > 4 || nout > SS_OUTS || !plain_columns(out, nout, &m) ||
        !simple_clauses(pred, arity, s))
        return false;
    s->nout = nout;
    for (int k = 0; k < nout; k++) {
        if (m.col[k] < 0 || m.col[k] >= arity)
            return false;
        s->out[k] = (uint8_t)m.col[k];
    }
    return true;
}

/* Column c of a row held in registers (c uniform across the warp: selects, no local memory). */
template <int A>
__device__ __forceinline__ uint32_t pick(const uint32_t (&v)[A], int c)
{
    uint32_t x = v[0];
#pragma unroll
    for (int i = 1; i < A; i++)
        x = c == i ? v[i] : x;
    return x;
}

template <int A>
__device__ __forceinline__ void load_row(const uint32_t *src, size_t r, uint32_t (&v)[A])
{
    if constexpr (A == 2) {
        uint2 t = ((const uint2 *)src)[r];
        v[0] = t.x, v[1] = t.y;
    } else if constexpr (A == 4) {
        uint4 t = ((const uint4 *)src)[r];
        v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
    } else {
#pragma unroll
        for (int c = 0; c < A; c++)
            v[c] = src[r * A + c];
    }
}

/* One tile of ITEMS * 256 rows a block, as the weaver's generated FILTER kernels do it (97%
 * of the copy bandwidth there): every load issued first, straight into registers, the
 * comparisons, the kept rows placed by ballots, a scan of the (slab, warp) counts and the
 * decoupled look-back (place_slabs), each kept row written from registers. Tiles are taken
 * in block order (lb_tile), so a block only ever waits on tiles already running. */
template <int A, int ITEMS>
__global__ void __launch_bounds__(SEL_THREADS) k_select_simple(const __grid_constant__ sel_simple s,
                                                               const uint32_t *src, size_t n, uint32_t *out,
                                                               const lb_args lb)
{
    __shared__ unsigned s_excl[ITEMS * SEL_THREADS / 32];
    __shared__ unsigned long long s_at;
    const int T = ITEMS * SEL_THREADS;
    const size_t tile = lb_tile(), ntiles = (n + T - 1) / T, first = tile * T;
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, below = (1u << lane) - 1;
    uint32_t v[ITEMS][A];
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        size_t r = first + (size_t)j * SEL_THREADS + threadIdx.x;
        if (r < n)
            load_row<A>(src, r, v[j]);
    }
    unsigned keep = 0;
#pragma unroll
    for (int j = 0; j < ITEMS; j++)
        keep |= first + (size_t)j * SEL_THREADS + threadIdx.x < n ? 1u << j : 0u;
    for (int c = 0; c < s.nclause; c++) {
        const sel_clause &q = s.c[c];
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            uint32_t a = (q.lcol == SS_CONST ? q.lval : pick<A>(v[j], q.lcol)) ^ q.flip,
                     b = (q.rcol == SS_CONST ? q.rval : pick<A>(v[j], q.rcol)) ^ q.flip;
            unsigned outcome = a < b ? 1u : a == b ? 2u : 4u;
            if (!(outcome & q.mask))
                keep &= ~(1u << j);
        }
    }
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        unsigned b = __ballot_sync(0xffffffffu, keep >> j & 1);
        if (lane == 0)
            s_excl[j * (SEL_THREADS / 32) + warp] = __popc(b);
    }
    __syncthreads();
    if (warp == 0) {
        unsigned kept;
        unsigned long long at = place_slabs(s_excl, ITEMS * SEL_THREADS / 32, tile, ntiles, lb, &kept);
        if (lane == 0)
            s_at = at;
    }
    __syncthreads();
    const int nout = s.nout;
    uint32_t *const o = out + s_at * nout;   // the tile's place once; rows by 32-bit positions in it
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        unsigned b = __ballot_sync(0xffffffffu, keep >> j & 1);
        if (keep >> j & 1) {
            const unsigned at = s_excl[j * (SEL_THREADS / 32) + warp] + __popc(b & below);
            if (nout == 2)
                ((uint2 *)o)[at] = make_uint2(pick<A>(v[j], s.out[0]), pick<A>(v[j], s.out[1]));
            else
                for (int k = 0; k < nout; k++)
                    o[at * nout + k] = pick<A>(v[j], s.out[k]);
        }
    }
}

/* k_select_simple's rows a thread: 16 of one or two words, 8 of three or four (registers). */
static constexpr int ss_items(int arity)
{
    return arity <= 2 ? 16 : 8;
}

/* SELECT by k_select_simple where the predicate and outputs allow (*done then). */
static rfx_status select_simple(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out,
                                int nout, rfx_dev_rows *dst, bool *done)
{
    sel_simple s;
    int A = src->arity, items = ss_items(A);
    size_t n = src->n, T = (size_t)items * SEL_THREADS, ntiles = (n + T - 1) / T;
    *done = false;
    if (n == 0 || ntiles >= (size_t)INT32_MAX || !simple_select(pred, out, nout, A, &s))
        return RFX_OK;
    *done = true;
    rfx_dev_rows res;
    lb_scratch lb;
    rfx_status st = tiled_begin(g, nout, n, ntiles, 0, &res, &lb);
    if (st != RFX_OK)
        return st;
#define SELECT_SIMPLE(A_)                                                                                            \
    k_select_simple<A_, ss_items(A_)><<<(unsigned)ntiles, SEL_THREADS, 0, g->stream>>>(s, src->data, n, res.data, lb.a)
    switch (A) {
    case 1: SELECT_SIMPLE(1); break;
    case 2: SELECT_SIMPLE(2); break;
    case 3: SELECT_SIMPLE(3); break;
    default: SELECT_SIMPLE(4); break;
    }
#undef SELECT_SIMPLE
    cudaError_t e = cudaGetLastError();
    return tiled_end(g, e, "k_select_simple", &lb, &res, dst);
}

// ---- MAP of simple terms: a row a thread, no interpreter ---------------------------------
/* An output that is a column, a constant, or one addition, subtraction or multiplication of
 * two of them: the common arithmetic of Datalog heads (d + 1, x * 2). No division, so
 * nothing is flagged and nothing waited for: such a MAP is one launch, like a projection. */
#define MT_COPY 255   // the term is its left operand (SS_CONST: an operand that is the constant)
struct map_term {
    uint32_t lval, rval;
    uint8_t op, prim, lcol, rcol;
};
struct map_terms {
    int nout;
    map_term t[SS_OUTS];
};

static bool simple_map(rfx_rx *const *out, int nout, int arity, map_terms *m)
{
    memset(m, 0, sizeof *m);
    if (arity < 1 || arity > 4 || nout < 1 || nout > SS_OUTS)
        return false;
    m->nout = nout;
    for (int k = 0; k < nout; k++) {
        const rfx_rx *e = out[k];
        map_term *t = &m->t[k];
        if (rfx_rx_wide(e))
            return false;
        t->prim = (uint8_t)e->prim;
        if (e->kind != RFX_RX_BIN) {
            t->op = MT_COPY;
            if (!term_operand(e, arity, &t->lcol, &t->lval))
                return false;
        } else if (e->op == RFX_ADD || e->op == RFX_SUB || e->op == RFX_MUL) {
            t->op = (uint8_t)e->op;
            if (!term_operand(e->l, arity, &t->lcol, &t->lval) || !term_operand(e->r, arity, &t->rcol, &t->rval))
                return false;
        } else {
            return false;
        }
    }
    return true;
}

template <int A>
__device__ __forceinline__ uint32_t map_term_of(const uint32_t (&v)[A], const map_term &t)
{
    uint32_t x = t.lcol == SS_CONST ? t.lval : pick<A>(v, t.lcol);
    if (t.op == MT_COPY)
        return x;
    bool div0 = false;   // no division here: never set
    return rfx_arith(t.op, t.prim, x, t.rcol == SS_CONST ? t.rval : pick<A>(v, t.rcol), &div0);
}

template <int A>
__global__ void k_map_terms(const __grid_constant__ map_terms m, const uint32_t *src, size_t n, uint32_t *out)
{
    const int nout = m.nout;
    GRID_STRIDE(i, n)
    {
        uint32_t v[A];
        load_row<A>(src, i, v);
        if (nout == 2) {
            ((uint2 *)out)[i] = make_uint2(map_term_of<A>(v, m.t[0]), map_term_of<A>(v, m.t[1]));
        } else {
            for (int k = 0; k < nout; k++)
                out[i * nout + k] = map_term_of<A>(v, m.t[k]);
        }
    }
}

/* MAP by k_map_terms where the outputs allow (*done then). */
static rfx_status map_simple(rfx_gpu *g, const rfx_dev_rows *src, rfx_rx *const *out, int nout, rfx_dev_rows *dst,
                             bool *done)
{
    map_terms m;
    size_t n = src->n;
    *done = false;
    if (!simple_map(out, nout, src->arity, &m))
        return RFX_OK;
    *done = true;
    rfx_dev_rows res;   // n > 0 (the caller's condition)
    rfx_status st = rows_alloc(g, &res, nout, n);
    if (st != RFX_OK)
        return st;
    switch (src->arity) {
    case 1: k_map_terms<1><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    case 2: k_map_terms<2><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    case 3: k_map_terms<3><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    default: k_map_terms<4><<<grid_for(n), 256, 0, g->stream>>>(m, src->data, n, res.data); break;
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        rfx_gpu_rows_free(g, &res);
        return fail(g, e, "k_map_terms", __FILE__, __LINE__);
    }
    replace(g, dst, &res);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_mapfilter(rfx_gpu *g, const rfx_dev_rows *src, const rfx_rx *pred, rfx_rx *const *out,
                                        int nout, rfx_dev_rows *dst)
{
    size_t n = src->n;
    colmap m;
    bool plain = !pred && plain_columns(out, nout, &m);
    if (!plain && nout > 0 && n > 0 && n / 512 < (size_t)INT32_MAX) {
        bool done;
        rfx_status st = pred ? select_simple(g, src, pred, out, nout, dst, &done)
                             : map_simple(g, src, out, nout, dst, &done);
        if (st != RFX_OK || done)
            return st;
        st = select_tiles(g, src, pred, out, nout, dst, &done);
        if (st != RFX_OK || done)
            return st;
    }
    if (plain) {
        rfx_dev_rows res;
        rfx_status st = rows_alloc(g, &res, nout, n);
        if (st)
            return st;
        if (n) {
            if (src->arity == 2 && nout == 2)
                k_project2<<<grid_for(n), 256, 0, g->stream>>>((const uint2 *)src->data, n, m.col[0], m.col[1],
                                                               (uint2 *)res.data);
            else
                k_project<<<grid_for(n), 256, 0, g->stream>>>(src->data, n, src->arity, m, res.data);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                rfx_gpu_rows_free(g, &res);
                return fail(g, e, "k_project", __FILE__, __LINE__);
            }
        }
        replace(g, dst, &res);
        return RFX_OK;
    }
    int plen, olen, depth;
    gprog code;
    rfx_status st = load_prog(g, pred, out, nout, &code, &plen, &olen, &depth);
    if (st)
        return st;
    int len = plen + olen;
    rfx_dev_rows res;
    if ((st = rows_alloc(g, &res, nout, n)) != RFX_OK)
        return st;
    uint64_t *flags = NULL;
    if (pred && n)
        flags = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    if (pred && n && !flags) {
        rfx_gpu_rows_free(g, &res);
        return RFX_ERR_NOMEM;
    }
    if (n) {
        // a nullary output still needs somewhere to write nothing
        uint32_t *o = res.data;
        k_mapfilter<<<grid_for(n), 256, 0, g->stream>>>(code, src->data, n, src->arity, len, nout, o, flags, g->d_flag);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_mapfilter", __FILE__, __LINE__);
    }
    if (st == RFX_OK)
        st = check_div0(g);
    return finish_filtered(g, st, &res, n, nout, flags, dst);
}
