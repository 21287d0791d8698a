// gpu_sort.cu: SORT and UNIQUE of packed rows (CUB radix sorts of packed keys, wider rows by ranks), reversal of two-column rows, renaming vertices by degree.
#include "gpu_core.cuh"

// ---- sort ------------------------------------------------------------------------------
__global__ void k_col_or(const uint32_t *rows, size_t n, int arity, int col, unsigned *out)
{
    uint32_t acc = 0;
    GRID_STRIDE(i, n) acc |= rows[i * arity + col];
    for (int o = 16; o; o >>= 1)
        acc |= __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0 && acc)
        atomicOr(out, acc);
}

// out[c] |= every value of column c, in one coalesced pass over all columns: the grid's
// thread count is a multiple of the arity, so each thread's words are of one column.
__global__ void k_cols_or(const uint32_t *rows, size_t words, int arity, unsigned *out)
{
    __shared__ unsigned acc[64];
    if (threadIdx.x < 64)
        acc[threadIdx.x] = 0;
    __syncthreads();
    size_t T = (size_t)gridDim.x * blockDim.x / (size_t)arity * (size_t)arity,
           t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mine = 0;
    for (size_t j = t; t < T && j < words; j += T)
        mine |= rows[j];
    if (t < T && mine)
        atomicOr(&acc[t % (size_t)arity], mine);
    __syncthreads();
    if ((int)threadIdx.x < arity && acc[threadIdx.x])
        atomicOr(&out[threadIdx.x], acc[threadIdx.x]);
}

__global__ void k_unpack2(const uint64_t *keys, size_t n, int shift, uint32_t *rows)
{
    GRID_STRIDE(i, n)
    {
        uint64_t k = keys[i];
        rows[2 * i] = (uint32_t)(k >> shift);
        rows[2 * i + 1] = (uint32_t)(k & ((1ull << shift) - 1));
    }
}

__global__ void k_iota(uint32_t *p, size_t n)
{
    GRID_STRIDE(i, n) p[i] = (uint32_t)i;
}

__global__ void k_gather_col(const uint32_t *rows, size_t n, int arity, int col, const uint32_t *perm, uint32_t *out)
{
    GRID_STRIDE(i, n) out[i] = rows[(size_t)perm[i] * arity + col];
}

__global__ void k_gather_rows(const uint32_t *rows, size_t n, int arity, const uint32_t *perm, uint32_t *out)
{
    GRID_STRIDE(i, n) for (int c = 0; c < arity; c++) out[i * arity + c] = rows[(size_t)perm[i] * arity + c];
}

/* Per column, the width of its largest value, so radix passes over bits that are zero in
 * every row can be skipped (columns past the 64th: 32). */
static rfx_status varying_bits(rfx_gpu *g, const rfx_dev_rows *r, int *bits)
{
    int a = r->arity < 64 ? r->arity : 64;
    unsigned *d, h[64];
    ALLOC(d, sizeof(unsigned) * (size_t)a);
    cudaError_t e = cudaMemsetAsync(d, 0, sizeof(unsigned) * (size_t)a, g->stream);
    if (e == cudaSuccess && a == r->arity) {
        size_t blocks = grid_resident(g, r->n * (size_t)a);
        k_cols_or<<<(unsigned)blocks, 256, 0, g->stream>>>(r->data, r->n * (size_t)a, a, d);
        e = cudaGetLastError();
    } else if (e == cudaSuccess) {
        for (int c = 0; c < a && e == cudaSuccess; c++) {
            k_col_or<<<grid_for(r->n), 256, 0, g->stream>>>(r->data, r->n, r->arity, c, d + c);
            e = cudaGetLastError();
        }
    }
    rfx_status st = e == cudaSuccess ? to_host(g, d, h, (size_t)a) : fail(g, e, "k_cols_or", __FILE__, __LINE__);
    rfx_gpu_free(g, d);
    for (int c = 0; c < r->arity; c++)
        bits[c] = c < 64 ? bits_of(h[c]) : 32;
    return st;
}

// keys[i] = row i's columns as one 64-bit key; widths[c] |= every value of column c
// (widths[0..1], zeroed with the block counter widths[2] before the launch). The last block
// to finish leaves both widths in the host words lb points at (low word column 0's), so the
// host waits on a word instead of copying them after the stream's end.
__global__ void k_pack2_widths(const uint2 *rows, size_t n, uint64_t *keys, unsigned *widths, const lb_args lb)
{
    __shared__ unsigned s_or[2];
    if (threadIdx.x < 2)
        s_or[threadIdx.x] = 0;
    __syncthreads();
    unsigned o0 = 0, o1 = 0;
    GRID_STRIDE(i, n)
    {
        uint2 r = rows[i];
        keys[i] = (uint64_t)r.x << 32 | r.y;
        o0 |= r.x;
        o1 |= r.y;
    }
    for (int o = 16; o; o >>= 1) {
        o0 |= __shfl_xor_sync(0xffffffffu, o0, o);
        o1 |= __shfl_xor_sync(0xffffffffu, o1, o);
    }
    if ((threadIdx.x & 31) == 0) {   // one global atomic a block: a warp's each would queue at one address
        atomicOr(&s_or[0], o0);
        atomicOr(&s_or[1], o1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (s_or[0])
            atomicOr(&widths[0], s_or[0]);
        if (s_or[1])
            atomicOr(&widths[1], s_or[1]);
        __threadfence();
        if (atomicAdd(&widths[2], 1u) == gridDim.x - 1)   // every block's widths are in
            lb_publish(lb, (unsigned long long)atomicOr(&widths[1], 0u) << 32 | atomicOr(&widths[0], 0u));
    }
}

__global__ void k_squeeze2(uint64_t *keys, size_t n, int shift)
{
    GRID_STRIDE(i, n) keys[i] = (keys[i] >> 32) << shift | (keys[i] & 0xFFFFFFFFull);
}


/* The packed sort of sort_rows2 (below SORT_WORDS_MIN rows): rows packed into 64-bit keys
 * (the widths of both columns found in the same pass), sorted by CUB. Column 1 keeps all
 * 32 bits of its half unless squeezing it to its width saves a radix pass (8 bits) or
 * more. (Measuring the widths first, so that the keys are written once and already
 * squeezed, saves 8 bytes a row where columns are narrow, as graph ids are, and costs 8
 * where they are not. CUB's sort of the rows themselves through a decomposer took twice
 * as long as its 64-bit key sort.) *sorted, *spare: the buffer of
 * sorted keys and the other one; *shift: column 1's bits in a key; *b1: its width. */
static rfx_status sort_packed2(rfx_gpu *g, const rfx_dev_rows *src, uint64_t **sorted, uint64_t **spare, int *shift,
                               int *b1)
{
    size_t n = src->n;
    int sel = 0;
    uint64_t *keys = (uint64_t *)rfx_gpu_alloc(g, n * 8), *alt = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    unsigned *d_widths = (unsigned *)rfx_gpu_alloc(g, 12), widths[2] = {0, 0};
    rfx_status st = keys && alt && d_widths ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t e = st == RFX_OK ? cudaMemsetAsync(d_widths, 0, 12, g->stream) : cudaSuccess;
    lb_scratch lb;
    if (st == RFX_OK && e == cudaSuccess && (st = lb_alloc(g, 1, 0, &lb)) == RFX_OK) {
        size_t blocks = grid_resident(g, n);
        k_pack2_widths<<<(unsigned)blocks, 256, 0, g->stream>>>((const uint2 *)src->data, n, keys, d_widths, lb.a);
        unsigned long long both = 0;
        if ((e = cudaGetLastError()) == cudaSuccess)
            st = lb_total(g, &lb, "k_pack2_widths", &both);
        lb_free(g, &lb, e != cudaSuccess || st != RFX_OK);
        widths[0] = (unsigned)both;
        widths[1] = (unsigned)(both >> 32);
    }
    int b0 = bits_of(widths[0]);
    *b1 = bits_of(widths[1]);
    *shift = 32;
    if (*b1 < 32 && (32 + b0 + 7) / 8 > (b0 + (*b1 ? *b1 : 1) + 7) / 8) {
        *shift = *b1 ? *b1 : 1;
        if (st == RFX_OK && e == cudaSuccess) {
            k_squeeze2<<<grid_for(n), 256, 0, g->stream>>>(keys, n, *shift);
            e = cudaGetLastError();
        }
    }
    int total = b0 + *shift > 1 ? b0 + *shift : 1;
    if (st == RFX_OK && e == cudaSuccess)
        st = cub_sort_u64(g, keys, alt, n, 0, total, &sel);
    rfx_gpu_free(g, d_widths);
    *sorted = sel ? alt : keys;
    *spare = sel ? keys : alt;
    return st != RFX_OK || e == cudaSuccess ? st : fail(g, e, "packing two-column rows", __FILE__, __LINE__);
}

/* The sort of sort_rows2 from SORT_WORDS_MIN rows: a row is one 64-bit word in memory,
 * column 0 in its low half, and CUB's radix sort is stable, so sorting the words by
 * column 1's bits and then by column 0's sorts the rows, with nothing packed or unpacked
 * (each sort spans its column's width, found by one pass that reads the rows). The packed
 * sort's two passes over the keys, each reading and writing 8 bytes a row, cost SORT a
 * fifth over CUB's sort of the packed keys; the word sorts move what the packed sort
 * does, less those passes, plus one radix histogram and the widths' read.
 * *sorted: the sorted words (rows), *spare: a buffer of n words or NULL; *b1: column 1's
 * width. leading_only: src's rows of equal column 0 are in order already, so the sort by
 * column 0 alone (stable) sorts them. */
static rfx_status sort_words2(rfx_gpu *g, const rfx_dev_rows *src, uint64_t **sorted, uint64_t **spare, int *b1,
                              bool leading_only)
{
    size_t n = src->n, bytes = 0;
    int bits[2], sel = 0;
    *sorted = *spare = NULL;
    rfx_status st = varying_bits(g, src, bits);
    if (st != RFX_OK)
        return st;
    *b1 = bits[1];
    if (leading_only)   // rows of equal column 0 in order already: the column-0 sort alone
        bits[1] = 0;
    const uint64_t *rows = (const uint64_t *)src->data;
    uint64_t *keys, *alt;
    ALLOC(keys, n * 8);
    // the first sort reads src and writes keys (its scratch holds the other buffer)
    int begin = bits[1] ? 32 : 0, end = bits[1] ? 32 + bits[1] : bits[0] ? bits[0] : 1;
    cudaError_t e = (cudaError_t)rfx_shim_sort_u64_from(NULL, &bytes, rows, keys, n, begin, end, (rfx_stream)g->stream);
    void *tmp = e == cudaSuccess ? rfx_gpu_alloc(g, bytes ? bytes : 1) : NULL;
    if (e == cudaSuccess && !tmp)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && e == cudaSuccess)
        e = (cudaError_t)rfx_shim_sort_u64_from(tmp, &bytes, rows, keys, n, begin, end, (rfx_stream)g->stream);
    rfx_gpu_free(g, tmp);
    if (st == RFX_OK && e == cudaSuccess && bits[1] && bits[0]) {   // then by column 0, through alt
        if (!(alt = (uint64_t *)rfx_gpu_alloc(g, n * 8)))
            st = RFX_ERR_NOMEM;
        else if ((st = cub_sort_u64(g, keys, alt, n, 0, bits[0], &sel)) == RFX_OK && sel) {
            uint64_t *t = keys;
            keys = alt;
            alt = t;
        }
        *spare = alt;
    }
    *sorted = keys;
    if (st == RFX_OK && e != cudaSuccess)
        st = fail(g, e, "sorting two-column rows", __FILE__, __LINE__);
    return st;
}

/* Rows from this many on are sorted as words (sort_words2), fewer packed (sort_packed2):
 * the word sorts make two calls of CUB's sort and read the rows once more for the widths,
 * which below ~2^23 rows cost more than the packing passes save (bench_gpu_prims against
 * CUB's sort of the packed keys; docs/PERFORMANCE.md). */
#define SORT_WORDS_MIN ((size_t)1 << 23)

/* dst takes over n rows of `arity` columns made in device memory at data. */
static void adopt(rfx_gpu *g, rfx_dev_rows *dst, void *data, int arity, size_t n)
{
    rfx_dev_rows out;
    rfx_gpu_rows_init(&out, arity);
    out.data = (uint32_t *)data;
    out.n = out.cap = n;
    replace(g, dst, &out);
}

/* Two-column rows of src sorted into *out (fresh memory; src is left as it was). distinct:
 * repeated rows are dropped as they are written out (one pass over the sorted keys instead
 * of UNIQUE's flags, scan and gather over the rows); rv (distinct only): that pass also
 * writes the rows reversed (into fresh memory, rv->rows). */
static rfx_status sort_rows2(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *out, bool distinct, reversal *rv)
{
    size_t n = src->n;
    if (rv)
        rv->rows = NULL;
    uint64_t *sorted = NULL, *spare = NULL;
    int shift = 0, b1 = 0;   // shift 0: the sorted keys are the rows themselves
    rfx_status st = n >= SORT_WORDS_MIN ? sort_words2(g, src, &sorted, &spare, &b1, false)
                                        : sort_packed2(g, src, &sorted, &spare, &shift, &b1);
    cudaError_t e = cudaSuccess;
    if (st == RFX_OK && !spare && (distinct || shift) && !(spare = (uint64_t *)rfx_gpu_alloc(g, n * 8)))
        st = RFX_ERR_NOMEM;
    uint64_t *result = shift || distinct ? spare : sorted;   // the rows written out, or the sorted words
    size_t m = n;
    if (distinct && st == RFX_OK) {   // the distinct keys, as rows, into spare
        if (rv) {
            rv->rows = (uint64_t *)rfx_gpu_alloc(g, n * 8);
            rv->end_bit = b1 ? b1 : 1;
        }
        if (rv && !rv->rows)
            st = RFX_ERR_NOMEM;
        else
            st = unique_keys_rows(g, sorted, n, shift, (uint32_t *)spare, rv ? (uint32_t *)rv->rows : NULL, &m);
    } else if (st == RFX_OK && shift) {
        k_unpack2<<<grid_for(m), 256, 0, g->stream>>>(sorted, m, shift, (uint32_t *)spare);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, result == sorted ? spare : sorted);
    if (st != RFX_OK || e != cudaSuccess) {
        rfx_gpu_free(g, result);
        if (rv) {
            rfx_gpu_free(g, rv->rows);
            rv->rows = NULL;
        }
        return st != RFX_OK ? st : fail(g, e, "sorting two-column rows", __FILE__, __LINE__);
    }
    rfx_gpu_rows_init(out, 2);
    out->data = (uint32_t *)result;
    out->n = m;
    out->cap = n;
    return RFX_OK;
}

// Rows sorted on their first p columns already: each row finds its run of rows equal on them
// (short: walked from the row both ways, in cache) and goes to the run's head plus its rank
// among the run's rows by the rest of the row (ties by position: stable). A thread a row, not
// a run; a warp's 32 rows are then copied by the whole warp, word after word, so that its
// reads and (rows moving within short runs) its writes are whole sectors: a thread copying
// its own row word by word touches a sector a word. flags: bit 0 a pair out of order on those
// columns (the hint was wrong), bit 1 a run longer than `most`, bit 3 two equal rows
// (repeats to remove). Where bit 0 or 1 is set out is not sorted.
__global__ void k_sort_runs(const uint32_t *rows, size_t n, int a, int p, size_t most, uint32_t *out, unsigned *flags)
{
    const unsigned lane = threadIdx.x & 31;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned f = 0;
    for (size_t base = blockIdx.x * (size_t)blockDim.x + threadIdx.x - lane; base < n; base += stride) {
        const size_t i = base + lane;
        size_t to = SIZE_MAX;   // where row i goes (none: past n, or its run too long)
        if (i < n) {
            const uint32_t *me = rows + i * a;
            if (i > 0 && cmp_prefix(me - a, me, p) > 0)
                f |= 1;
            size_t h = i, e = i + 1;
            while (h > 0 && i - h <= most && cmp_prefix(rows + (h - 1) * a, rows + h * a, p) == 0)
                h--;
            while (e < n && e - h <= most && cmp_prefix(rows + (e - 1) * a, rows + e * a, p) == 0)
                e++;
            if (e - h > most) {
                f |= 2;
            } else {
                size_t rank = 0;
                for (size_t q = h; q < e; q++) {
                    if (q == i)
                        continue;
                    int c = cmp_prefix(rows + q * a + p, me + p, a - p);   // the prefix is the run's
                    rank += c < 0 || (c == 0 && q < i);
                    if (c == 0)
                        f |= 8;
                }
                to = h + rank;
            }
        }
        const int words = 32 * a;
        for (int w0 = 0; w0 < words; w0 += 32) {   // word w of the warp's rows: row w / a, column w % a
            const int w = w0 + (int)lane, r = w < words ? w / a : 0, c = w - r * a;
            const size_t dst = __shfl_sync(0xffffffffu, to, r);
            if (w < words && dst != SIZE_MAX)
                out[dst * a + c] = rows[(base + r) * a + c];
        }
    }
    if (f)
        atomicOr(flags, f);
}

// Whether rows are sorted on their first p columns (bit 0 of flags set where not) and
// whether two neighbours are equal on them (bit 2): reads those columns alone.
__global__ void k_prefix_order(const uint32_t *rows, size_t n, int a, int p, unsigned *flags)
{
    unsigned f = 0;
    GRID_STRIDE(i, n)
    {
        if (i == 0)
            continue;
        int c = cmp_prefix(rows + (i - 1) * a, rows + i * a, p);
        f |= c > 0 ? 1u : c == 0 ? 4u : 0u;
    }
    f = __reduce_or_sync(0xffffffffu, f);
    if (f && (threadIdx.x & 31) == 0)
        atomicOr(flags, f);
}

// The longest run of rows equal on the sorted prefix that one thread sorts.
enum { SORT_RUN_MOST = 32 };

// src's rows sorted (and, distinct, made unique) into dst where they are sorted on their first
// p columns already (a plan's hint, checked) and every run of rows equal on those is short:
// one pass instead of a radix sort of every column. *done false (dst untouched) where that
// does not hold: the caller sorts as before.
static rfx_status sort_runs_into(rfx_gpu *g, const rfx_dev_rows *src, int p, rfx_dev_rows *dst, bool distinct,
                                 bool *done)
{
    *done = false;
    // rows sorted on every column need only lose their repeats: a read of the rows and a
    // copy, where runs of equal rows may be longer than one thread walks
    rfx_status st = RFX_OK;
    cudaError_t e = cudaSuccess;
    if (p >= src->arity) {
        e = cudaMemsetAsync(g->d_flag, 0, sizeof(unsigned), g->stream);
        if (e == cudaSuccess) {
            k_prefix_order<<<grid_for(src->n), 256, 0, g->stream>>>(src->data, src->n, src->arity, p, g->d_flag);
            e = cudaGetLastError();
        }
        unsigned pf = 0;
        st = e == cudaSuccess ? to_host(g, g->d_flag, &pf, 1) : fail(g, e, "k_prefix_order", __FILE__, __LINE__);
        if (st != RFX_OK || (pf & 1))
            return st;
        if ((st = rfx_gpu_copy(g, src, dst)) == RFX_OK && distinct && (pf & 4))
            st = rfx_gpu_unique(g, dst);
        *done = st == RFX_OK;
        return st;
    }
    rfx_dev_rows out;
    if ((st = rows_alloc(g, &out, src->arity, src->n)) != RFX_OK)
        return st;
    e = cudaMemsetAsync(g->d_flag, 0, sizeof(unsigned), g->stream);
    if (e == cudaSuccess) {
        k_sort_runs<<<grid_for(src->n), 256, 0, g->stream>>>(src->data, src->n, src->arity, p, SORT_RUN_MOST,
                                                            out.data, g->d_flag);
        e = cudaGetLastError();
    }
    unsigned f = 0;
    st = e == cudaSuccess ? to_host(g, g->d_flag, &f, 1) : fail(g, e, "k_sort_runs", __FILE__, __LINE__);
    if (st != RFX_OK || (f & 3)) {
        rfx_gpu_rows_free(g, &out);
        return st;
    }
    out.n = src->n;
    if (distinct && (f & 8) && (st = rfx_gpu_unique(g, &out)) != RFX_OK) {
        rfx_gpu_rows_free(g, &out);
        return st;
    }
    replace(g, dst, &out);
    *done = true;
    return RFX_OK;
}

/* Rows of one or two columns (n <= RFX_SORT_ONE_BLOCK_MAX) sorted by one block in shared
 * memory: each row a 64-bit key (column 0 high), a bitonic sort over the next power of two (the
 * padding's largest keys sort last), and the rows written back in order, the repeats of a
 * key dropped where distinct; their number goes to the host words lb points at. The sort
 * of CUB's single tile alone took longer, after the widths' wait and the packing. */
__global__ void __launch_bounds__(256) k_sort_small(const uint32_t *rows, unsigned n, unsigned np2, int arity,
                                                    bool distinct, uint32_t *out, const lb_args lb)
{
    __shared__ uint64_t s[RFX_SORT_ONE_BLOCK_MAX];
    for (unsigned i = threadIdx.x; i < np2; i += blockDim.x)
        s[i] = i >= n ? ~0ull : arity == 1 ? rows[i] : (uint64_t)rows[2 * i] << 32 | rows[2 * i + 1];
    __syncthreads();
    for (unsigned k = 2; k <= np2; k <<= 1)
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            for (unsigned i = threadIdx.x; i < np2; i += blockDim.x) {
                const unsigned l = i ^ j;
                if (l > i) {
                    const uint64_t a = s[i], b = s[l];
                    if ((a > b) == ((i & k) == 0)) {
                        s[i] = b;
                        s[l] = a;
                    }
                }
            }
            __syncthreads();
        }
    // each thread writes a run of RFX_SORT_ONE_BLOCK_MAX / 256 neighbours, placed by a block scan
    const unsigned per = RFX_SORT_ONE_BLOCK_MAX / 256, i0 = threadIdx.x * per;
    unsigned kept = 0;
    for (unsigned i = i0; i < i0 + per && i < n; i++)
        kept += !distinct || i == 0 || s[i] != s[i - 1];
    unsigned total, at = block_offsets<unsigned>(kept, &total);
    for (unsigned i = i0; i < i0 + per && i < n; i++)
        if (!distinct || i == 0 || s[i] != s[i - 1]) {
            if (arity == 1)
                out[at] = (uint32_t)s[i];
            else {
                out[2 * at] = (uint32_t)(s[i] >> 32);
                out[2 * at + 1] = (uint32_t)s[i];
            }
            at++;
        }
    if (threadIdx.x == 0)
        lb_publish(lb, total);
}

/* dst = src sorted (and distinct) by k_sort_small: one launch and one wait on a host word. */
static rfx_status sort_small(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst, bool distinct)
{
    unsigned np2 = 32;
    while (np2 < src->n)
        np2 <<= 1;
    rfx_dev_rows out;
    lb_scratch lb;
    rfx_status st = rows_alloc(g, &out, src->arity, src->n);
    if (st != RFX_OK)
        return st;
    if ((st = lb_alloc(g, 1, 0, &lb)) != RFX_OK) {
        rfx_gpu_rows_free(g, &out);
        return st;
    }
    k_sort_small<<<1, 256, 0, g->stream>>>(src->data, (unsigned)src->n, np2, src->arity, distinct, out.data, lb.a);
    return tiled_end(g, cudaGetLastError(), "k_sort_small", &lb, &out, dst);
}

// dst = src sorted, and without repeated rows when distinct (src unchanged; dst may be src).
static rfx_status sort_rows_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst, bool distinct)
{
    if ((src->arity == 1 || src->arity == 2) && src->n >= 2 && src->n <= RFX_SORT_ONE_BLOCK_MAX)
        return sort_small(g, src, dst, distinct);
    if (src->arity == 2 && src->n >= 2) {
        rfx_dev_rows out;
        rfx_status st = sort_rows2(g, src, &out, distinct, NULL);
        if (st == RFX_OK)
            replace(g, dst, &out);
        return st;
    }
    rfx_status st = rfx_gpu_copy(g, src, dst);
    st = st ? st : rfx_gpu_sort(g, dst);
    return st || !distinct ? st : rfx_gpu_unique(g, dst);
}

extern "C" rfx_status rfx_gpu_sort_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    return sort_rows_into(g, src, dst, false);
}

extern "C" rfx_status rfx_gpu_sort_unique_into(rfx_gpu *g, const rfx_dev_rows *src, int sorted, bool *held,
                                               rfx_dev_rows *dst)
{
    bool done = false;
    rfx_status st = sorted > 0 && src->n > 1 && src->arity > 0 ? sort_runs_into(g, src, sorted, dst, true, &done)
                                                                  : RFX_OK;
    if (held)
        *held = sorted <= 0 || src->n <= 1 || src->arity == 0 || done;
    return st != RFX_OK || done ? st : sort_rows_into(g, src, dst, true);
}

/* Rows stably sorted on their first k columns (an aggregate's groups: the rows of a group
 * keep their order, which a float fold depends on). Two columns, k = 1: one stable radix
 * sort of the rows as words over column 0's bits, at every size (the transitive closure's
 * delta with its join key moved first: half the passes of the sort of both columns); wider
 * rows: LSD passes over the k columns' varying bits on a permutation, then one gather. */
extern "C" rfx_status rfx_gpu_sort_leading_into(rfx_gpu *g, const rfx_dev_rows *src, int k, rfx_dev_rows *dst)
{
    if (k <= 0 || k >= src->arity || src->n < 2)
        return sort_rows_into(g, src, dst, false);
    if (src->arity != 2) {
        if (src->n > UINT32_MAX) {
            snprintf(g->err, sizeof g->err, "sort of %zu rows of %d columns (at most 2^32-1 rows of more than two)",
                     src->n, src->arity);
            return RFX_ERR_LIMIT;
        }
        int bits[RFX_MAX_ARITY];
        rfx_status st = varying_bits(g, src, bits);
        for (int c = k; c < src->arity; c++)
            bits[c] = 0;
        uint32_t *sorted;
        if (st == RFX_OK && (st = rows_sorted_by(g, src->data, src->n, src->arity, bits, &sorted)) == RFX_OK) {
            adopt(g, dst, sorted, src->arity, src->n);
        }
        return st;
    }
    uint64_t *sorted, *spare;
    int b1;
    rfx_status st = sort_words2(g, src, &sorted, &spare, &b1, true);
    rfx_gpu_free(g, spare);
    if (st != RFX_OK) {
        rfx_gpu_free(g, sorted);
        return st;
    }
    adopt(g, dst, sorted, 2, src->n);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_sort_by_columns_into(rfx_gpu *g, const rfx_dev_rows *src, const int *cols, int k,
                                                   rfx_dev_rows *dst)
{
    for (int i = 0; i < k; i++)
        if (cols[i] < 0 || cols[i] >= src->arity || (i && cols[i] <= cols[i - 1]))
            return RFX_ERR_INTERNAL;
    if (src->n > UINT32_MAX) {
        snprintf(g->err, sizeof g->err, "sort of %zu rows by some of their columns (at most 2^32-1)", src->n);
        return RFX_ERR_LIMIT;
    }
    int bits[RFX_MAX_ARITY], keep[RFX_MAX_ARITY] = {0};
    rfx_status st = varying_bits(g, src, bits);
    if (st == RFX_OK && src->arity == 2 && k == 1 && src->n >= 2) {
        // rows as words (column 0 the low half): one radix sort over the column's bits
        int begin = 32 * cols[0], end = begin + (bits[cols[0]] ? bits[cols[0]] : 1);
        size_t bytes = 0, n = src->n;
        uint64_t *keys;
        ALLOC(keys, n * 8);
        const uint64_t *rows = (const uint64_t *)src->data;
        cudaError_t e = (cudaError_t)rfx_shim_sort_u64_from(NULL, &bytes, rows, keys, n, begin, end, (rfx_stream)g->stream);
        void *tmp = e == cudaSuccess ? rfx_gpu_alloc(g, bytes ? bytes : 1) : NULL;
        if (e == cudaSuccess && !tmp)
            st = RFX_ERR_NOMEM;
        if (st == RFX_OK && e == cudaSuccess)
            e = (cudaError_t)rfx_shim_sort_u64_from(tmp, &bytes, rows, keys, n, begin, end, (rfx_stream)g->stream);
        rfx_gpu_free(g, tmp);
        if (st == RFX_OK && e != cudaSuccess)
            st = fail(g, e, "sorting two-column rows by one", __FILE__, __LINE__);
        if (st != RFX_OK) {
            rfx_gpu_free(g, keys);
            return st;
        }
        adopt(g, dst, keys, 2, n);
        return RFX_OK;
    }
    for (int i = 0; i < k; i++)
        keep[cols[i]] = 1;
    for (int c = 0; c < src->arity; c++)
        bits[c] = keep[c] ? bits[c] : 0;
    uint32_t *sorted;
    if (st == RFX_OK && (st = rows_sorted_by(g, src->data, src->n, src->arity, bits, &sorted)) == RFX_OK) {
        adopt(g, dst, sorted, src->arity, src->n);
    }
    return st;
}

// n (< 2^32) rows of arity a stably sorted by the columns with bits[c] > 0 (column 0 the
// most significant; bits[c] of each value vary), into *out (allocated here): LSD passes
// of CUB's pair sort over a permutation, then one gather.
rfx_status rows_sorted_by(rfx_gpu *g, const uint32_t *rows, size_t n, int a, const int *bits, uint32_t **out)
{
    *out = NULL;
    size_t bytes = 0;
    int sel = 0;
    uint32_t *perm = (uint32_t *)rfx_gpu_alloc(g, n * 4), *perm_alt = (uint32_t *)rfx_gpu_alloc(g, n * 4),
             *keys = (uint32_t *)rfx_gpu_alloc(g, n * 4), *keys_alt = (uint32_t *)rfx_gpu_alloc(g, n * 4);
    void *tmp = NULL;
    rfx_status st = perm && perm_alt && keys && keys_alt ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t e = cudaSuccess;
    if (st == RFX_OK) {
        k_iota<<<grid_for(n), 256, 0, g->stream>>>(perm, n);
        if ((e = cudaGetLastError()) == cudaSuccess)
            e = (cudaError_t)rfx_shim_sort_pairs_u32(NULL, &bytes, keys, keys_alt, perm, perm_alt, n, 32, &sel,
                                                     (rfx_stream)g->stream);
    }
    if (st == RFX_OK && e == cudaSuccess && !(tmp = rfx_gpu_alloc(g, bytes ? bytes : 1)))
        st = RFX_ERR_NOMEM;
    for (int c = a - 1; c >= 0 && st == RFX_OK && e == cudaSuccess; c--) {
        if (!bits[c])
            continue;
        k_gather_col<<<grid_for(n), 256, 0, g->stream>>>(rows, n, a, c, perm, keys);
        if ((e = cudaGetLastError()) == cudaSuccess)
            e = (cudaError_t)rfx_shim_sort_pairs_u32(tmp, &bytes, keys, keys_alt, perm, perm_alt, n, bits[c], &sel,
                                                     (rfx_stream)g->stream);
        if (sel & 2) {
            uint32_t *t = perm;
            perm = perm_alt;
            perm_alt = t;
        }
    }
    rfx_gpu_free(g, tmp);
    rfx_gpu_free(g, keys);
    rfx_gpu_free(g, keys_alt);
    rfx_gpu_free(g, perm_alt);
    if (st == RFX_OK && e == cudaSuccess && !(*out = (uint32_t *)rfx_gpu_alloc(g, n * (size_t)a * 4)))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && e == cudaSuccess) {
        k_gather_rows<<<grid_for(n), 256, 0, g->stream>>>(rows, n, a, perm, *out);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, perm);
    if (e != cudaSuccess) {
        rfx_gpu_free(g, *out);
        *out = NULL;
        return fail(g, e, "sorting rows by columns", __FILE__, __LINE__);
    }
    return st;
}

extern "C" rfx_status rfx_gpu_sort(rfx_gpu *g, rfx_dev_rows *r)
{
    size_t n = r->n;
    int a = r->arity;
    if (n < 2 || a == 0)
        return RFX_OK;
    if (a == 2 || (a == 1 && n <= RFX_SORT_ONE_BLOCK_MAX))   /* one block, or the two-column sort */
        return sort_rows_into(g, r, r, false);
    int bits[RFX_MAX_ARITY];
    rfx_status st = varying_bits(g, r, bits);
    if (st)
        return st;
    size_t bytes = 0;
    int sel = 0;
    void *tmp = NULL;
    if (a == 1) {
        uint32_t *alt;
        ALLOC(alt, n * 4);
        CK((cudaError_t)rfx_shim_sort_u32(NULL, &bytes, r->data, alt, n, 0, bits[0] ? bits[0] : 1, &sel, (rfx_stream)g->stream));
        ALLOC(tmp, bytes ? bytes : 1);
        cudaError_t e = (cudaError_t)rfx_shim_sort_u32(tmp, &bytes, r->data, alt, n, 0, bits[0] ? bits[0] : 1, &sel,
                                                      (rfx_stream)g->stream);
        rfx_gpu_free(g, tmp);
        if (sel) {
            rfx_gpu_free(g, r->data);
            r->data = alt;
            r->cap = n;
        } else
            rfx_gpu_free(g, alt);
        CK(e);
        return RFX_OK;
    }
    // wider rows: LSD over columns on a permutation, then one gather
    if (n > UINT32_MAX) {
        snprintf(g->err, sizeof g->err, "sort of %zu rows of %d columns (at most 2^32-1 rows of more than two)", n, a);
        return RFX_ERR_LIMIT;
    }
    uint32_t *out;
    st = rows_sorted_by(g, r->data, n, a, bits, &out);
    if (st != RFX_OK)
        return st;
    rfx_gpu_free(g, r->data);
    r->data = out;
    r->cap = n;
    return RFX_OK;
}

// ---- unique -------------------------------------------------------------------------------
__global__ void k_flag_unique(const uint32_t *rows, size_t n, int arity, uint64_t *flags)
{
    GRID_STRIDE(i, n) flags[i] = i == 0 || cmp_prefix(rows + i * arity, rows + (i - 1) * arity, arity) != 0;
}

// rev[i] = rows[i] with its columns swapped; *width |= every y.
__global__ void k_swap_cols(const uint2 *rows, size_t n, uint2 *rev, unsigned *width)
{
    unsigned o = 0;
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        rev[i] = make_uint2(r.y, r.x);
        o |= r.y;
    }
    for (int d = 16; d; d >>= 1)
        o |= __shfl_xor_sync(0xffffffffu, o, d);
    if ((threadIdx.x & 31) == 0 && o)
        atomicOr(width, o);
}

/* *out = rv's rows sorted by y, stably. A row (y, x) is the 64-bit word x << 32 | y in
 * memory, so a key sort over the word's low end_bit bits sorts the rows themselves: as
 * many radix passes as a pair sort of y and x, with no arrays to split or zip. Takes rv's
 * rows (freed or adopted, success or not). */
rfx_status reverse_sort(rfx_gpu *g, reversal *rv, size_t n, rfx_dev_rows *out)
{
    int sel = 0;
    uint64_t *rows = rv->rows, *alt = (uint64_t *)rfx_gpu_alloc(g, n * 8);
    rv->rows = NULL;
    rfx_status st = rows && alt ? cub_sort_u64(g, rows, alt, n, 0, rv->end_bit, &sel) : RFX_ERR_NOMEM;
    uint64_t *sorted = sel ? alt : rows;
    rfx_gpu_free(g, sel ? rows : alt);
    if (st != RFX_OK) {
        rfx_gpu_free(g, sorted);
        return st;
    }
    adopt(g, out, sorted, 2, n);
    return RFX_OK;
}

static rfx_status reverse_small(rfx_gpu *g, const rfx_dev_rows *e, rfx_dev_rows *out)
{
    rfx_rx c0 = {.kind = RFX_RX_COL, .col = 0}, c1 = {.kind = RFX_RX_COL, .col = 1};
    rfx_rx *swap[] = {&c1, &c0};
    return rfx_gpu_mapfilter(g, e, NULL, swap, 2, out);
}

/* e is sorted by (x, y), so a stable sort of its rows by y alone leaves each y's rows in
 * x order: a sort over y's width (3 radix passes of 8 bytes a row at 2^24 vertices)
 * instead of over both columns (6 passes). */
extern "C" rfx_status rfx_gpu_reversed(rfx_gpu *g, const rfx_dev_rows *e, rfx_dev_rows *out)
{
    size_t n = e->n;
    if (e->arity != 2) {
        snprintf(g->err, sizeof g->err, "reversing rows of %d columns (two wanted)", e->arity);
        return RFX_ERR_INTERNAL;
    }
    if (n < 2)
        return reverse_small(g, e, out);
    unsigned width = 0;
    reversal rv = {(uint64_t *)rfx_gpu_alloc(g, n * 8), 1};
    unsigned *d_width = (unsigned *)rfx_gpu_alloc(g, 4);
    rfx_status st = rv.rows && d_width ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t err = st == RFX_OK ? cudaMemsetAsync(d_width, 0, 4, g->stream) : cudaSuccess;
    if (st == RFX_OK && err == cudaSuccess) {
        size_t blocks = grid_resident(g, n);
        k_swap_cols<<<(unsigned)blocks, 256, 0, g->stream>>>((const uint2 *)e->data, n, (uint2 *)rv.rows, d_width);
        if ((err = cudaGetLastError()) == cudaSuccess)
            st = to_host(g, d_width, &width, 1);
    }
    rfx_gpu_free(g, d_width);
    if (st == RFX_OK && err != cudaSuccess)
        st = fail(g, err, "k_swap_cols", __FILE__, __LINE__);
    if (st != RFX_OK) {
        rfx_gpu_free(g, rv.rows);
        return st;
    }
    rv.end_bit = bits_of(width) ? bits_of(width) : 1;
    return reverse_sort(g, &rv, n, out);
}

// ---- renaming by degree ---------------------------------------------------------------------
__global__ void k_max2(const uint2 *rows, size_t n, unsigned *mx)
{
    unsigned o = 0;
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        o = max(o, max(r.x, r.y));
    }
    for (int d = 16; d; d >>= 1)
        o = max(o, __shfl_xor_sync(0xffffffffu, o, d));
    if ((threadIdx.x & 31) == 0 && o)
        atomicMax(mx, o);
}

// deg[v] += the rows v is in, for the vertices v in [lo, lo + span) only
__global__ void k_degrees(const uint2 *rows, size_t n, uint32_t lo, uint32_t span, uint32_t *deg)
{
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        if (r.x - lo < span)
            atomicAdd(&deg[r.x], 1u);
        if (r.y - lo < span)
            atomicAdd(&deg[r.y], 1u);
    }
}

// keys[v] = (degree, v), v in the low idbits bits
__global__ void k_degree_keys(const uint32_t *deg, size_t nv, int idbits, uint64_t *keys)
{
    GRID_STRIDE(v, nv) keys[v] = (uint64_t)deg[v] << idbits | v;
}

__global__ void k_rank_of(const uint64_t *sorted, size_t nv, int idbits, uint32_t *rank)
{
    const uint64_t id_mask = ((uint64_t)1 << idbits) - 1;
    GRID_STRIDE(i, nv) rank[sorted[i] & id_mask] = (uint32_t)i;
}

__global__ void k_rename2(const uint2 *rows, size_t n, const uint32_t *rank, uint2 *out)
{
    GRID_STRIDE(i, n)
    {
        const uint2 r = rows[i];
        out[i] = make_uint2(rank[r.x], rank[r.y]);
    }
}

extern "C" rfx_status rfx_gpu_rename_by_degree(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    const size_t n = src->n;
    if (src->arity != 2) {
        snprintf(g->err, sizeof g->err, "renaming the vertices of rows of %d columns (edges of two wanted)", src->arity);
        return RFX_ERR_INTERNAL;
    }
    if (n >= ((size_t)1 << 31)) {   // a degree (at most 2n) must fit 32 bits
        snprintf(g->err, sizeof g->err, "renaming the vertices of %zu edges (fewer than 2^31 wanted)", n);
        return RFX_ERR_LIMIT;
    }
    if (n == 0)
        return rfx_gpu_copy(g, src, dst);
    unsigned mx = 0, *d_mx = (unsigned *)rfx_gpu_alloc(g, 4);
    rfx_status st = d_mx ? RFX_OK : RFX_ERR_NOMEM;
    cudaError_t e = st == RFX_OK ? cudaMemsetAsync(d_mx, 0, 4, g->stream) : cudaSuccess;
    const unsigned blocks = grid_resident(g, n);
    if (st == RFX_OK && e == cudaSuccess) {
        k_max2<<<blocks, 256, 0, g->stream>>>((const uint2 *)src->data, n, d_mx);
        if ((e = cudaGetLastError()) == cudaSuccess)
            st = to_host(g, d_mx, &mx, 1);
    }
    rfx_gpu_free(g, d_mx);
    const size_t nv = (size_t)mx + 1;
    const int idbits = mx ? bits_of(mx) : 1;   // the sort's passes: over the ids' and degrees' widths
    // deg becomes the ranks once the keys are made
    uint32_t *deg = NULL, *renamed = NULL;
    uint64_t *keys = NULL, *alt = NULL;
    if (st == RFX_OK && e == cudaSuccess) {
        deg = (uint32_t *)rfx_gpu_alloc(g, nv * 4);
        keys = (uint64_t *)rfx_gpu_alloc(g, nv * 8);
        alt = (uint64_t *)rfx_gpu_alloc(g, nv * 8);
        st = deg && keys && alt ? RFX_OK : RFX_ERR_NOMEM;
    }
    // The counts in sweeps over the rows, each counting the vertices of a span whose
    // counters fill half the L2: random atomics on counters in DRAM move a sector each way
    // per increment. Spans of half the L2 were the best compromise over R-MAT 24 and 26
    // (a quarter lost on the larger graph, the whole L2 on the smaller).
    const size_t span = g->l2_bytes / 8 > ((size_t)1 << 20) ? g->l2_bytes / 8 : (size_t)1 << 20;
    if (st == RFX_OK && e == cudaSuccess && (e = cudaMemsetAsync(deg, 0, nv * 4, g->stream)) == cudaSuccess) {
        for (size_t lo = 0; lo < nv && e == cudaSuccess; lo += span) {
            k_degrees<<<grid_for(n), 256, 0, g->stream>>>((const uint2 *)src->data, n, (uint32_t)lo,
                                                          (uint32_t)(nv - lo < span ? nv - lo : span), deg);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) {
            k_degree_keys<<<grid_for(nv), 256, 0, g->stream>>>(deg, nv, idbits, keys);
            e = cudaGetLastError();
        }
    }
    int sel = 0;
    if (st == RFX_OK && e == cudaSuccess)   // degrees are at most 2n
        st = cub_sort_u64(g, keys, alt, nv, 0, idbits + bits_of((unsigned)(2 * n)), &sel);
    if (st == RFX_OK && e == cudaSuccess) {
        k_rank_of<<<grid_for(nv), 256, 0, g->stream>>>(sel ? alt : keys, nv, idbits, deg);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, keys);
    rfx_gpu_free(g, alt);
    if (st == RFX_OK && e == cudaSuccess && !(renamed = (uint32_t *)rfx_gpu_alloc(g, n * 8)))
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && e == cudaSuccess) {
        k_rename2<<<grid_for(n), 256, 0, g->stream>>>((const uint2 *)src->data, n, deg, (uint2 *)renamed);
        e = cudaGetLastError();
    }
    rfx_gpu_free(g, deg);
    if (st != RFX_OK || e != cudaSuccess) {
        rfx_gpu_free(g, renamed);
        return st != RFX_OK ? st : fail(g, e, "renaming vertices by degree", __FILE__, __LINE__);
    }
    adopt(g, dst, renamed, 2, n);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_sort_unique_reversed(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst,
                                                   rfx_dev_rows *rev)
{
    if (src->arity != 2) {
        snprintf(g->err, sizeof g->err, "reversing rows of %d columns (two wanted)", src->arity);
        return RFX_ERR_INTERNAL;
    }
    if (src->n <= RFX_SORT_ONE_BLOCK_MAX) {   /* each sorted by one block: the rows, then them swapped */
        rfx_status st = src->n < 2 ? rfx_gpu_copy(g, src, dst) : sort_small(g, src, dst, true);
        st = st ? st : reverse_small(g, dst, rev);
        return st || rev->n < 2 ? st : sort_small(g, rev, rev, false);
    }
    rfx_dev_rows out;
    reversal rv;
    rfx_status st = sort_rows2(g, src, &out, true, &rv);
    if (st != RFX_OK)
        return st;
    size_t m = out.n;
    replace(g, dst, &out);
    return reverse_sort(g, &rv, m, rev);
}

extern "C" rfx_status rfx_gpu_unique_into(rfx_gpu *g, const rfx_dev_rows *src, rfx_dev_rows *dst)
{
    if (src->arity == 0 || src->n < 2) {
        rfx_status st = rfx_gpu_copy(g, src, dst);
        if (st == RFX_OK && dst->arity == 0 && dst->n)
            dst->n = 1;
        return st;
    }
    /* the compaction writes fresh memory anyway: read src directly, no copy first */
    uint64_t *flags;
    ALLOC(flags, src->n * 8);
    k_flag_unique<<<grid_for(src->n), 256, 0, g->stream>>>(src->data, src->n, src->arity, flags);
    CK_LAUNCH();
    return keep_flagged(g, src, flags, dst);
}

extern "C" rfx_status rfx_gpu_unique(rfx_gpu *g, rfx_dev_rows *r)
{
    return rfx_gpu_unique_into(g, r, r);
}
