// gpu_induced.cuh: the triejoin by induced parts (lftj/induced.c) with the induced subgraphs
// made on the device. Compiled in gpu_lftj.cu.
//
// Made on the host, a part's subgraph costs a pass over the rows of every vertex of V_P,
// hubs' rows again in almost every part, and its copy, pinning and staging; the host's
// threads then bound the whole join. Here the host only chooses the parts (P's rows and
// V_P, a pass over P's rows); the relation stays in host memory, registered and mapped,
// and the device reads the rows of V_P's members over the bus itself, keeping those whose
// second column is in V_P (a bitmap of V_P) by one single-pass launch. The bus carries
// each member's rows once a part, the bound the host pass reads too; device memory holds
// one part at a time, as the device-memory budget asks.

// Bit v of bits set for every member v (bits is cleared by the caller between parts).
static __global__ void k_induced_mark(const uint32_t *members, size_t n, uint32_t *bits)
{
    GRID_STRIDE(k, n)
    {
        const uint32_t v = members[k];
        atomicOr(&bits[v >> 5], 1u << (v & 31));
    }
}

// The rows of the part's members with both ends in V_P, in order, into out (the first cap
// of them; the count is all of them). Item i of the n = before[nm] rows the members have
// is member k's (the last k with before[k] <= i) row start[k] + i - before[k] of R (host
// memory, read over the bus), kept where its second column's bit is set. A block takes a
// tile of SCAN_T items; ballots and the look-back place the kept ones (as
// k_unique_keys_lb), and the last tile leaves the count for the host.
static __global__ void __launch_bounds__(256) k_induced_rows_lb(const uint32_t *R, const uint32_t *members,
                                                                const uint64_t *start, const uint64_t *before,
                                                                size_t nm, size_t n, const uint32_t *bits, uint2 *out,
                                                                size_t cap, const lb_args lb)
{
    const unsigned lane = threadIdx.x & 31;
    const size_t tile = lb_tile(), ntiles = (n + SCAN_T - 1) / SCAN_T;
    const size_t w0 = tile * SCAN_T + (size_t)(threadIdx.x >> 5) * 256 + lane;
    uint2 r[SCAN_ITEMS];
    unsigned ballot[SCAN_ITEMS], sum = 0;
    size_t k = 0;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++) {
        const size_t i = w0 + j * 32;
        bool keep = false;
        r[j] = make_uint2(0, 0);
        if (i < n) {   // an item's member follows the one before it: search from there
            k = partition_point(k, nm, [=](size_t m) { return before[m + 1] <= i; });
            const uint32_t w = R[2 * (start[k] + (i - before[k])) + 1];
            keep = bits[w >> 5] >> (w & 31) & 1;
            r[j] = make_uint2(members[k], w);
        }
        ballot[j] = __ballot_sync(0xffffffffu, keep);
        sum += __popc(ballot[j]);
    }
    unsigned long long at = warp_place(sum, tile, ntiles, lb);
    const unsigned below = (1u << lane) - 1;
#pragma unroll
    for (int j = 0; j < SCAN_ITEMS; j++) {
        if (ballot[j] >> lane & 1 && at + __popc(ballot[j] & below) < cap)
            out[at + __popc(ballot[j] & below)] = r[j];
        at += __popc(ballot[j]);
    }
}

// A part on the device: its members' arrays, V_P's bitmap set, P's rows copied, then the
// rows of its subgraph.
struct induced_part {
    uint32_t *members;
    uint64_t *start, *before;  // before: nm + 1 entries after start's nm
    size_t nm, bound;          // members, and the rows they have (the subgraph's bound)
    rfx_dev_rows rows, induced;
};

// The members' arrays, needed only until the subgraph is kept.
static void induced_part_free_members(rfx_gpu *g, induced_part *p)
{
    rfx_gpu_free(g, p->members);
    rfx_gpu_free(g, p->start);
    p->members = NULL;
    p->start = p->before = NULL;
}

static void induced_part_free(rfx_gpu *g, induced_part *p)
{
    induced_part_free_members(g, p);
    rfx_gpu_rows_free(g, &p->rows);
    rfx_gpu_rows_free(g, &p->induced);
}

// Sends part pv: once it returns, the device holds all it needs of pv's arrays (the copies
// from pageable memory are staged before they return), so the host may choose the next.
static rfx_status induced_part_send(rfx_gpu *g, const rfx_lftj_part_vertices *pv, uint32_t *bits, induced_part *p)
{
    memset(p, 0, sizeof *p);
    rfx_gpu_rows_init(&p->rows, 2);
    rfx_gpu_rows_init(&p->induced, 2);
    p->nm = pv->nmembers;
    p->bound = (size_t)pv->before[pv->nmembers];
    p->members = (uint32_t *)rfx_gpu_alloc(g, (p->nm ? p->nm : 1) * 4);
    p->start = (uint64_t *)rfx_gpu_alloc(g, (2 * p->nm + 1) * 8);
    if (!p->members || !p->start)
        return RFX_ERR_NOMEM;
    p->before = p->start + p->nm;
    CK(cudaMemcpyAsync(p->members, pv->members, p->nm * 4, cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(p->start, pv->start, p->nm * 8, cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(p->before, pv->before, (p->nm + 1) * 8, cudaMemcpyHostToDevice, g->stream));
    if (p->nm) {
        k_induced_mark<<<grid_for(p->nm), 256, 0, g->stream>>>(p->members, p->nm, bits);
        CK_LAUNCH();
    }
    rfx_status st = rows_alloc(g, &p->rows, 2, pv->rows.n);
    if (st == RFX_OK && pv->rows.n)
        CK(cudaMemcpyAsync(p->rows.data, pv->rows.data, pv->rows.n * 8, cudaMemcpyHostToDevice, g->stream));
    return st;
}

// The part's subgraph: its rows read from R and kept into a buffer of `guess` rows (the
// bound's is about twice what is kept, and the join needs the room), again into one of
// the exact size where more were kept; the bitmap cleared and the members' arrays freed.
static rfx_status induced_part_keep(rfx_gpu *g, const uint32_t *R, uint32_t *bits, size_t bit_words, size_t guess,
                                    induced_part *p)
{
    size_t cap = guess < p->bound ? guess : p->bound;
    rfx_status st = RFX_OK;
    for (int pass = 0; pass < 2 && st == RFX_OK; pass++) {
        if ((st = rows_alloc(g, &p->induced, 2, cap)) != RFX_OK || !p->bound)
            break;
        lb_scratch lb;
        unsigned ntiles = 0;
        if ((st = onepass_begin(g, p->bound, "rows of a part's vertices", &lb, &ntiles)) != RFX_OK)
            break;
        k_induced_rows_lb<<<ntiles, 256, 0, g->stream>>>(R, p->members, p->start, p->before, p->nm, p->bound, bits,
                                                          (uint2 *)p->induced.data, cap, lb.a);
        unsigned long long kept = 0;
        st = onepass_end(g, &lb, "k_induced_rows_lb", &kept);
        if (st == RFX_OK && kept <= cap) {
            p->induced.n = (size_t)kept;
            break;
        }
        rfx_gpu_rows_free(g, &p->induced);
        cap = (size_t)kept;
    }
    if (st == RFX_OK)
        CK(cudaMemsetAsync(bits, 0, bit_words * 4, g->stream));
    induced_part_free_members(g, p);
    return st;
}

// The join's state. Parts are made (sent and their subgraphs kept) by the maker, a
// sibling context of the device with a stream of its own where one can be made, while the
// joiner joins the part before: a subgraph is mostly the bus's time, a join mostly
// launches and waits, and each leaves the device idle where the other runs. Both contexts
// draw on one pool, so the two parts share the budget; the joiner's frontiers split where
// the maker holds room.
struct induced_run {
    rfx_gpu *joiner, *maker;
    rfx_lftj_induced *it;
    double kept_share;         // the share of its bound the last part made kept
    size_t budget, part_budget;
    const uint32_t *R;
    uint32_t *bits;            // V_P's bitmap (the maker's), cleared between parts
    size_t bit_words;
    int nsrc, nvars;
    const int *colvar;
    const bool *leads;
};

// What a part is chosen by: its members' rows, the bound of its subgraph, scaled so that
// what it keeps (at the share the part before kept) fits the part budget.
static size_t induced_choice_bytes(const induced_run *U)
{
    return (size_t)((double)U->part_budget / U->kept_share);
}

// A part made: on the maker's context, complete (its stream waited for); its subgraph as
// a TrieArray, its rows freed (the frontiers need the room more than the build's launches
// cost), where memory allowed. Only the maker's thread allocates or frees on the maker.
struct induced_made {
    induced_part part;
    rfx_dev_trie trie;
    bool as_trie;
    size_t first, prows, nmembers, number;
};

static void induced_made_free(induced_run *U, induced_made *m)
{
    induced_part_free(U->maker, &m->part);
    rfx_gpu_trie_free(U->maker, &m->trie);
    m->as_trie = false;
}

// Makes the part pv into *m; st: RFX_ERR_NOMEM where it did not fit beside what the
// joiner holds (nothing of it is then kept).
static rfx_status induced_make(induced_run *U, const rfx_lftj_part_vertices *pv, induced_made *m)
{
    rfx_gpu *g = U->maker;
    *m = induced_made{};   // the trie zeroed: freeing it frees nothing
    m->first = pv->first;
    m->prows = pv->rows.n;
    m->nmembers = pv->nmembers;
    m->number = pv->number;
    rfx_status st = induced_part_send(g, pv, U->bits, &m->part);
    const size_t bound = m->part.bound;
    if (st == RFX_OK)
        st = induced_part_keep(g, U->R, U->bits, U->bit_words, (size_t)((double)bound * U->kept_share * 1.25) + 1024,
                               &m->part);
    const size_t kept = m->part.induced.n;
    if (st == RFX_OK && !g->tune->lftj_rows && kept) {
        st = rfx_gpu_trie_build(g, &m->part.induced, &m->trie);
        m->as_trie = st == RFX_OK;
        if (st == RFX_ERR_NOMEM) {   // the rows, then
            g->err[0] = 0;
            st = RFX_OK;
        }
        if (m->as_trie)
            rfx_gpu_rows_free(g, &m->part.induced);
    }
    if (st == RFX_OK && cudaStreamSynchronize(g->stream) != cudaSuccess)
        st = fail(g, cudaGetLastError(), "cudaStreamSynchronize", __FILE__, __LINE__);
    if (st == RFX_OK && bound) {   // the next part's choice: by the share this one kept
        const double share = (double)kept / (double)bound;
        U->kept_share = share < 0.05 ? 0.05 : share > 1 ? 1 : share;
        rfx_lftj_induced_set_budget(U->it, induced_choice_bytes(U));
    }
    if (st != RFX_OK)
        induced_made_free(U, m);
    if (st == RFX_ERR_NOMEM) {   // the bitmap as it was: cleared
        g->err[0] = 0;
        if (cudaMemsetAsync(U->bits, 0, U->bit_words * 4, g->stream) != cudaSuccess)
            st = fail(g, cudaGetLastError(), "cudaMemsetAsync", __FILE__, __LINE__);
    }
    return st;
}

// The next part chosen anew from R's row `first` under half the part budget (where a
// part did not fit: a prefix of it), into *pv; false with *st RFX_ERR_NOMEM where it
// cannot shrink (one vertex's rows, or a budget of kilobytes).
static bool induced_shrink(induced_run *U, size_t first, size_t prows, size_t nmembers,
                           rfx_lftj_part_vertices *pv, rfx_status *st)
{
    if ((nmembers <= 1 && prows <= 1) || U->part_budget <= 4096) {
        *st = RFX_ERR_NOMEM;
        return false;
    }
    U->part_budget /= 2;
    rfx_lftj_induced_set_budget(U->it, induced_choice_bytes(U));
    rfx_lftj_induced_restart(U->it, first);
    *st = RFX_OK;
    return rfx_lftj_induced_next_vertices(U->it, pv, st);
}

// The part chosen in *pv made, chosen again smaller until it fits; false on *st.
static bool induced_make_fitting(induced_run *U, rfx_lftj_part_vertices *pv, induced_made *m, rfx_status *st)
{
    bool have = true;
    while (have && *st == RFX_OK) {
        *st = induced_make(U, pv, m);
        if (*st != RFX_ERR_NOMEM)
            return *st == RFX_OK;
        have = induced_shrink(U, pv->first, pv->rows.n, pv->nmembers, pv, st);
    }
    return false;
}

// Part m joined on the joiner (its subgraph as m's TrieArray where it has one, P's rows
// as rows); nothing of m's is freed here (the maker's thread may be allocating).
static rfx_status induced_join(induced_run *U, induced_made *m, uint64_t *count, rfx_rows *rows)
{
    rfx_gpu *g = U->joiner;
    induced_part *p = &m->part;
    const rfx_dev_rows induced = m->as_trie ? (rfx_dev_rows){NULL, 0, 0, 2} : p->induced;
    const rfx_dev_rows *sp[LFTJ_MAX_SRC];
    const rfx_dev_trie *tp[LFTJ_MAX_SRC];
    for (int s = 0; s < U->nsrc; s++) {
        sp[s] = U->leads[s] ? &p->rows : &induced;
        tp[s] = U->leads[s] || !m->as_trie ? NULL : &m->trie;
    }
    rfx_dev_rows out;
    rfx_gpu_rows_init(&out, U->nvars);
    rfx_status st =
        rfx_gpu_lftj_tries(g, sp, tp, U->colvar, U->nsrc, U->nvars, rows ? &out : NULL, rows ? NULL : count);
    if (st == RFX_OK && rows)
        st = rfx_gpu_download(g, &out, rows);
    rfx_gpu_rows_free(g, &out);
    if (st == RFX_OK)   // the part's memory is the maker's to free, after the join
        st = cudaStreamSynchronize(g->stream) == cudaSuccess
                 ? RFX_OK
                 : fail(g, cudaGetLastError(), "cudaStreamSynchronize", __FILE__, __LINE__);
    return st;
}

// A part joined (task 0) while the next is chosen and, with a maker of its own, made (task 1).
struct induced_step {
    induced_run *U;
    induced_made *cur, *next;
    rfx_rows *rows;            // listing: the part's bindings, downloaded; else NULL
    uint64_t count;
    rfx_status st;
    rfx_lftj_part_vertices *pv;
    bool chosen, made;
    rfx_status next_st;
};

static void induced_step_task(int i, void *arg)
{
    induced_step *S = (induced_step *)arg;
    induced_run *U = S->U;
    rfx_gpu *g = i ? U->maker : U->joiner;
    if (cudaSetDevice(g->device) != cudaSuccess) {   // this thread's device
        rfx_status &st = i ? S->next_st : S->st;
        st = fail(g, cudaGetLastError(), "cudaSetDevice", __FILE__, __LINE__);
        return;
    }
    if (i == 0) {
        S->st = induced_join(U, S->cur, &S->count, S->rows);
        return;
    }
    S->chosen = rfx_lftj_induced_next_vertices(U->it, S->pv, &S->next_st);
    if (S->chosen && S->next_st == RFX_OK && U->maker != U->joiner) {
        S->next_st = induced_make(U, S->pv, S->next);
        S->made = S->next_st == RFX_OK;
        if (S->next_st == RFX_ERR_NOMEM)   // made again once the join is done
            S->next_st = RFX_OK;
    }
}

extern "C" rfx_status rfx_gpu_lftj_induced(rfx_gpu *g, const rfx_lftj_src *srcs, int nsrc, int nvars, size_t budget,
                                           int nthreads, rfx_rows *dst, uint64_t *count, size_t *nparts,
                                           size_t *host_bytes, rfx_gpu_span_fn span, void *span_ctx)
{
    *nparts = 0;
    *host_bytes = 0;
    if (nsrc < 2 || nsrc > LFTJ_MAX_SRC || !rfx_lftj_induced_applies(srcs, nsrc, nvars))
        return RFX_ERR_LIMIT;
    const rfx_rows *r = srcs[0].rows;
    const size_t bytes = r->n * 8;
    CK(cudaSetDevice(g->device));
    // the device reads R where it lies: registered memory, mapped (its owner's registration,
    // else ours for the join's length)
    bool ours = false;
    if (r->n && !rfx_gpu_host_registered(r->data, bytes) && !(ours = rfx_gpu_host_register(r->data, bytes)))
        return RFX_ERR_LIMIT;
    induced_run U;
    memset(&U, 0, sizeof U);
    if (r->n && cudaHostGetDevicePointer((void **)&U.R, r->data, 0) != cudaSuccess) {
        cudaGetLastError();
        if (ours)
            rfx_gpu_host_unregister(r->data);
        return RFX_ERR_LIMIT;
    }
    int colvar[LFTJ_MAX_SRC * 2];
    bool leads[LFTJ_MAX_SRC];
    for (int s = 0; s < nsrc; s++) {
        colvar[2 * s] = srcs[s].colvar[0];
        colvar[2 * s + 1] = srcs[s].colvar[1];
        leads[s] = srcs[s].colvar[0] == 0;
    }
    U.joiner = g;
    U.maker = g->tune->induced_overlap ? gpu_sibling(g) : NULL;
    U.maker = U.maker ? U.maker : g;
    U.colvar = colvar;
    U.leads = leads;
    U.nsrc = nsrc;
    U.nvars = nvars;
    // Parts are chosen by the rows their members have, an upper bound of what their
    // subgraphs keep; the budget is for what they keep (and P's rows): the choice is
    // scaled by the share the part before kept (a first guess of a half).
    U.kept_share = 0.5;
    U.budget = U.part_budget = budget;
    rfx_status st = rfx_lftj_induced_open(srcs, nsrc, induced_choice_bytes(&U), nthreads, &U.it);
    U.bit_words = U.it ? (size_t)rfx_lftj_induced_maxid(U.it) / 32 + 1 : 0;
    if (st == RFX_OK) {
        U.bits = (uint32_t *)rfx_gpu_alloc(U.maker, U.bit_words * 4);
        st = U.bits ? RFX_OK : RFX_ERR_NOMEM;
        if (U.bits && (cudaMemsetAsync(U.bits, 0, U.bit_words * 4, U.maker->stream) != cudaSuccess ||
                       cudaStreamSynchronize(U.maker->stream) != cudaSuccess))
            st = fail(g, cudaGetLastError(), "cudaMemsetAsync", __FILE__, __LINE__);
    }
    rfx_rows part_rows;
    rfx_rows_init(&part_rows, nvars);
    uint64_t total = 0;
    rfx_lftj_part_vertices pv;
    induced_made made[2];
    int cur = 0;
    bool have = st == RFX_OK && rfx_lftj_induced_next_vertices(U.it, &pv, &st);
    have = have && induced_make_fitting(&U, &pv, &made[cur], &st);
    while (st == RFX_OK && have) {
        const uint64_t mark = rfx_gpu_alloc_mark(g);
        const double t0 = rfx_seconds();
        induced_made *m = &made[cur], *n = &made[cur ^ 1];
        *n = induced_made{};
        induced_step S = {&U, m, n, dst ? &part_rows : NULL, 0, RFX_OK, &pv, false, false, RFX_OK};
        rfx_parallel_for(2, 2, induced_step_task, &S);
        st = S.st;
        // a join that failed may have launches in flight reading the part, which the maker's
        // stream frees next
        if (st != RFX_OK)
            cudaStreamSynchronize(g->stream);
        if (st == RFX_ERR_NOMEM) {
            // the part did not fit beside its join: the next is dropped and this one chosen
            // again, smaller
            induced_made_free(&U, n);   // the maker's allocations, by name; the joiner's since mark
            rfx_gpu_reclaim(g, mark, NULL, 0);
            g->err[0] = 0;
            const size_t first = m->first, prows = m->prows, nm = m->nmembers;
            induced_made_free(&U, m);
            st = S.next_st;
            have = st == RFX_OK && induced_shrink(&U, first, prows, nm, &pv, &st);
            have = have && induced_make_fitting(&U, &pv, &made[cur], &st);
            continue;
        }
        if (st == RFX_OK && dst && part_rows.n)   // parts come in the first variable's order
            st = rfx_rows_append_parallel(dst, &part_rows, nthreads);
        if (st == RFX_OK) {
            total += S.count;
            *host_bytes += m->part.bound * 8 + m->prows * 8;
            ++*nparts;
            if (span)
                span(span_ctx, "induced part", g->device, 0, m->number, t0, rfx_seconds());
            // a budget back towards the whole where a part before was too big
            U.part_budget = U.part_budget * 2 < U.budget ? U.part_budget * 2 : U.budget;
            rfx_lftj_induced_set_budget(U.it, induced_choice_bytes(&U));
        }
        induced_made_free(&U, m);
        if (st == RFX_OK)
            st = S.next_st;
        have = S.chosen;
        if (st == RFX_OK && have && !S.made)   // not made beside the join (no maker of its own, or no room)
            have = induced_make_fitting(&U, &pv, n, &st);
        if (st != RFX_OK)
            induced_made_free(&U, n);
        cur ^= 1;
    }
    rfx_rows_free(&part_rows);
    if (U.bits)
        rfx_gpu_free(U.maker, U.bits);
    rfx_lftj_induced_close(U.it);
    cudaStreamSynchronize(U.maker->stream);
    cudaStreamSynchronize(g->stream);   // nothing reads R after this
    if (ours)
        rfx_gpu_host_unregister(r->data);
    if (st == RFX_OK && count)
        *count = total;
    return st;
}
