// gpu_lftj.cuh: the leapfrog triejoin on the GPU, breadth-first (Red Fox thesis ch. 5).
// Compiled in gpu_lftj.cu over the primitives' CUDA core (context, pool, scan helpers).
// Semantics as lftj.h: sources are sorted rows whose columns hold variables in
// increasing order; the result binds all variables, sorted, each binding once.
//
// The join runs level by level. The frontier holds, per partial binding, its values and
// each source's current trie node (a row range). For the next variable, every frontier
// element's candidates are the rows of its smallest participating node (the driver);
// one thread per candidate (load-balancing search over the scanned candidate counts, so a
// high-degree vertex spreads over many threads) skips repeated values and looks the value
// up in the other participants' nodes by binary search. Survivors are compacted into the
// next frontier with their narrowed nodes. Candidates are taken in rounds of at most
// LFTJ_ROUND so scratch stays bounded; the next frontier is sized by a counting pass.
// A small level skips the check and compaction: every candidate goes into the next
// frontier, a non-match with empty nodes (lftj_unchecked). The emit that writes a
// frontier also finds its elements' drivers and candidate counts for the next level, and
// scans them by look-back where one launch writes the whole frontier (lftj_precount): a
// level is then one kernel and one wait.
// When only the number of bindings is wanted, the last variable is never materialised:
// a lane per frontier element counts its matches, the whole warp where its driver is long
// (k_lftj_count_last).

//
// This file is the driver; the pieces it runs are in gpu_lftj_level.cuh, gpu_lftj_pair.cuh
// and gpu_lftj_small.cuh, included before it by gpu_lftj.cu.

// A copy of the frontier's F ranges (F < 2^32: a pair count's), stably ordered by word col
// (a node's start row), in *out; *out stays NULL when memory is short (the caller then
// regroups a smaller piece).
static rfx_status lftj_regroup(rfx_gpu *g, const uint32_t *rng, size_t F, int nsrc, int col, uint32_t **out)
{
    *out = NULL;
    int bits[2 * LFTJ_MAX_SRC] = {0};
    bits[col] = 32;
    rfx_status st = rows_sorted_by(g, rng, F, nsrc * 2, bits, out);
    return st == RFX_ERR_NOMEM ? RFX_OK : st;
}

// Which participant of the pair count holds the shared node (*a, from the plan's order),
// and whether the count had better regroup the frontier by the other node and swap the
// roles (*swap: lftj_count_regrouped), as it had when
// - the shared node's runs average under LFTJ_SHORT_RUN elements: in a box the inner
//   variable's interval cuts them to a few elements each, and regrouped, the elements of
//   one y share N+(y) in one run; or
// - the other node's lists are shorter to probe by LFTJ_SWAP_GAIN: a triangle count over
//   (x, y) probes N+(y) for each pair, that is sum d+(y), where swapped it probes sum
//   d+(x) (R-MAT: about half; the sort costs a few percent of the count).
// counter: 24 device bytes.
#define LFTJ_SWAP_GAIN 0.8
static rfx_status lftj_pair_roles(lftj_run *R, int v, const lftj_frontier &cur, unsigned long long *counter, int *a,
                                  bool *swap)
{
    rfx_gpu *g = R->g;
    const lftj_level &L = R->levels[v];
    *a = R->pair_a[v];
    *swap = false;
    if (cur.F < 4096)
        return RFX_OK;
    CK(cudaMemsetAsync(counter, 0, 24, g->stream));
    k_lftj_pair_costs<<<grid_for(cur.F), 256, 0, g->stream>>>(cur.rng, cur.F, (size_t)R->nsrc * 2, 2 * L.src[*a],
                                                               2 * L.src[1 - *a], counter);
    CK_LAUNCH();
    unsigned long long c[3] = {0, 0, 0};
    rfx_status st = to_host(g, counter, c, 3);
    *swap = st == RFX_OK && (c[0] * LFTJ_SHORT_RUN > cur.F || (double)c[2] < LFTJ_SWAP_GAIN * (double)c[1]);
    return st;
}

// Whether narrowing the count's B nodes (lftj_pair_narrow) pays: where it cuts at least
// LFTJ_NARROW_GAIN of the warp steps of a sample of the n elements (one launch, one wait;
// smaller counts run unnarrowed). With vertices renamed by degree rank it cuts a fifth of
// the count; numbered as generated it cuts ~1% of the steps and costs more than that (the
// searches' loads in each chunk's setup, which its barrier waits for).
#define LFTJ_NARROW_FROM (1u << 20)
#define LFTJ_NARROW_SAMPLE (1u << 16)
#define LFTJ_NARROW_GAIN 0.1
static cudaError_t lftj_narrow_pays(const lftj_run *R, int sa, int ca, int sb, int cb, size_t n, const uint32_t *rng,
                                    const uint32_t *acol, const lftj_fused &fz, bool fused, bool *pays)
{
    rfx_gpu *g = R->g;
    const lftj_srcs &S = R->S;
    *pays = R->narrow > 0;
    if (R->narrow >= 0 || n < LFTJ_NARROW_FROM)
        return cudaSuccess;
    unsigned long long *d = (unsigned long long *)rfx_gpu_alloc(g, 16), h[2] = {0, 0};
    if (!d)   // short of memory: the count runs unnarrowed
        return cudaSuccess;
    const size_t every = n / LFTJ_NARROW_SAMPLE;
    const unsigned grid = LFTJ_NARROW_SAMPLE / 256;
    cudaError_t e = cudaMemsetAsync(d, 0, 16, g->stream);
    if (e == cudaSuccess) {
        if (fused)
            k_lftj_narrow_sample<true><<<grid, 256, 0, g->stream>>>(S, sa, ca, sb, cb, n, every, rng, acol, fz, d);
        else
            k_lftj_narrow_sample<false><<<grid, 256, 0, g->stream>>>(S, sa, ca, sb, cb, n, every, rng, acol, fz, d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(h, d, 16, cudaMemcpyDeviceToHost, g->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(g->stream);
    rfx_gpu_free(g, d);
    *pays = (double)h[1] < (1 - LFTJ_NARROW_GAIN) * (double)h[0];
    return e;
}

// Launches the pair count of the last level w (participant a holds the shared node) over
// n elements of rng: a frontier's, or with fz level w - 1's candidates. Adds to *total.
static cudaError_t lftj_pair_launch(lftj_run *R, int w, int a, size_t n, const uint32_t *rng, const lftj_fused *fz,
                                    unsigned long long *total)
{
    rfx_gpu *g = R->g;
    const lftj_level &L = R->levels[w];
    // chunks of 256 elements, unless that leaves fewer than 32 chunks a multiprocessor
    // (a box's count with one wave of 256-element chunks took several times its share of
    // the whole join: the slowest chunk is its length)
    unsigned chunk = LFTJ_CHUNK;
    while (chunk > 32 && n / chunk < (size_t)g->sms * 32)
        chunk /= 2;
    size_t blocks = (n + chunk - 1) / chunk;
    const unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
    int sa = L.src[a], ca = L.col[a], sb = L.src[1 - a], cb = L.col[1 - a];
    // B's probed column copied out of its rows (where memory allows): read in place,
    // every other word of a two-column relation came along, and the count of R-MAT 24
    // read 2 TB/s from DRAM (ncu: 62% of its bandwidth, 6% L2 hits). The last word past
    // the padded column says whether B repeats a row or holds the
    // empty mark; where neither and cb is B's last column, a node's values are distinct
    // and never the mark (no check of either a value).
    // A TrieArray source's last level is that column already (padded, distinct; a source
    // of two columns takes part in the last level by its second).
    uint32_t *bcol = NULL, odd = 1;
    const size_t bwords = (R->S.rows[sb] + 3) / 4 * 4;
    cudaError_t e = cudaSuccess;
    const bool in_trie = R->trie[sb] && cb == 1;
    if (in_trie) {
        bcol = (uint32_t *)R->S.data[sb];
        odd = R->trie[sb]->last_has_max ? 2 : 0;
    } else if (R->S.rows[sb] && (bcol = (uint32_t *)rfx_gpu_alloc(g, bwords * 4 + 4))) {
        e = cudaMemsetAsync(bcol + bwords, 0, 4, g->stream);
        if (e == cudaSuccess) {
            k_lftj_column<<<grid_for(bwords), 256, 0, g->stream>>>(R->S.data[sb], R->S.arity[sb], cb, R->S.rows[sb],
                                                                  bcol, bcol + bwords);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(&odd, bcol + bwords, 4, cudaMemcpyDeviceToHost, g->stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(g->stream);
    }
    // A's column: B's where A's rows are B's or their first ones (a view of the same rows)
    const bool a_in_b = R->S.data[sa] == R->S.data[sb] && R->S.arity[sa] == R->S.arity[sb] && ca == cb &&
                        R->S.rows[sa] <= R->S.rows[sb];
    const uint32_t *acol = bcol && a_in_b ? bcol : NULL;
    lftj_fused none;
    memset(&none, 0, sizeof none);
    const lftj_fused &f = fz ? *fz : none;
    const bool clean = !odd && cb == R->S.arity[sb] - 1;
    bool narrow = false;
    if (e == cudaSuccess)
        e = lftj_narrow_pays(R, sa, ca, sb, cb, n, rng, acol, f, fz != NULL, &narrow);
#define LFTJ_PAIR(own, fused, dist)                                                                                   \
    k_lftj_count_pair<own, fused, dist><<<grid, LFTJ_CHUNK, 0, g->stream>>>(R->S, sa, ca, sb, cb, n, rng, chunk, acol, \
                                                                             bcol, f, narrow, total)
    if (e == cudaSuccess) {
        if (bcol && fz)
            clean ? LFTJ_PAIR(true, true, true) : LFTJ_PAIR(true, true, false);
        else if (bcol)
            clean ? LFTJ_PAIR(true, false, true) : LFTJ_PAIR(true, false, false);
        else if (fz)
            clean ? LFTJ_PAIR(false, true, true) : LFTJ_PAIR(false, true, false);
        else
            clean ? LFTJ_PAIR(false, false, true) : LFTJ_PAIR(false, false, false);
        e = cudaGetLastError();
    }
#undef LFTJ_PAIR
    if (!in_trie)
        rfx_gpu_free(g, bcol);   // stream-ordered: the count queued before still reads it
    return e;
}

// The pair count with the roles swapped (participant a's node the probed one), over the
// frontier regrouped by the other node piece by piece: a regrouped copy of F elements
// takes ~28 F bytes at its peak, and under a cap the join's share of the device holds that
// only for a part of a box's frontier (under a cap, a third of the boxes' elements could
// not be regrouped whole and were counted as they were, at twice the time an element of
// the regrouped ones took). In pieces the runs are shorter (a value's
// elements are spread over the pieces) but the probes are the cheaper ones. Pieces are
// halved until one fits; below LFTJ_REGROUP_LEAST elements a piece is counted unswapped.
#define LFTJ_REGROUP_LEAST 4096
static rfx_status lftj_count_regrouped(lftj_run *R, int v, const lftj_frontier &cur, int a,
                                       unsigned long long *d_total, size_t *pieces)
{
    rfx_gpu *g = R->g;
    const int col = 2 * R->levels[v].src[1 - a];
    const size_t stride = (size_t)R->nsrc * 2;
    size_t piece = cur.F < R->regroup_piece ? cur.F : (size_t)R->regroup_piece;
    *pieces = 0;
    rfx_status st = RFX_OK;
    for (size_t f0 = 0; f0 < cur.F && st == RFX_OK;) {
        const size_t n = cur.F - f0 < piece ? cur.F - f0 : piece;
        const uint32_t *rng = cur.rng + f0 * stride;
        uint32_t *regrouped = NULL;
        st = lftj_regroup(g, rng, n, R->nsrc, col, &regrouped);
        if (st != RFX_OK)
            break;
        if (!regrouped && n > LFTJ_REGROUP_LEAST) {
            g->err[0] = 0;   // the allocation that failed said why
            piece = (n + 1) / 2;
            continue;
        }
        st = lftj_add_count(R, d_total, false, "k_lftj_count_pair", [&] {
            return lftj_pair_launch(R, v, regrouped ? 1 - a : a, n, regrouped ? regrouped : rng, NULL, d_total);
        });
        rfx_gpu_free(g, regrouped);
        f0 += n;
        ++*pieces;
    }
    return st;
}

// Counts the last variable of frontier cur (never materialised).
static rfx_status lftj_count_last(lftj_run *R, int v, const lftj_frontier &cur)
{
    rfx_gpu *g = R->g;
    const lftj_level &L = R->levels[v];
    unsigned long long *d_total = (unsigned long long *)rfx_gpu_alloc(g, 24);   // the roles' costs, then the count
    if (!d_total)
        return RFX_ERR_NOMEM;
    bool pair = L.np == 2 && R->pair_a[v] >= 0 && cur.F <= UINT32_MAX, swap = false;
    int a = 0;
    size_t pieces = 0;
    rfx_status st = pair ? lftj_pair_roles(R, v, cur, d_total, &a, &swap) : RFX_OK;
    if (st == RFX_OK && swap)
        st = lftj_count_regrouped(R, v, cur, a, d_total, &pieces);
    else if (st == RFX_OK)
        st = lftj_add_count(R, d_total, !pair, pair ? "k_lftj_count_pair" : "k_lftj_count_last", [&] {
            if (pair)
                return lftj_pair_launch(R, v, a, cur.F, cur.rng, NULL, d_total);
            size_t blocks = (cur.F + 255) / 256;   // a lane an element
            k_lftj_count_last<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, g->stream>>>(
                R->S, L, cur.F, cur.rng, d_total, g->d_words + 3);
            return cudaGetLastError();
        });
    rfx_gpu_free(g, d_total);
    return st;
}

// Whether level v and the last level w = v + 1 can be counted in one pass (lftj_fused):
// counting; w a pair count whose shared node's source (A) takes no part in v and whose
// other (B) does, at its previous column (so B's node at w is its node at v narrowed to
// v's value); no memo, since a box's short runs want the frontier regrouped
// (lftj_pair_roles), which needs it materialised. *kb: B's participant index in v.
static bool lftj_fusable(const lftj_run *R, int v, size_t F, int *kb)
{
    int w = v + 1;
    if (!R->counting || R->memo || w != R->nvars - 1 || F > UINT32_MAX || R->unfused)
        return false;
    const lftj_level &L = R->levels[v], &W = R->levels[w];
    if (W.np != 2 || R->pair_a[w] < 0)
        return false;
    int sa = W.src[R->pair_a[w]], sb = W.src[1 - R->pair_a[w]], cb = W.col[1 - R->pair_a[w]];
    *kb = -1;
    for (int k = 0; k < L.np; k++) {
        if (L.src[k] == sa)
            return false;
        if (L.src[k] == sb && L.col[k] == cb - 1)
            *kb = k;
    }
    return *kb >= 0;
}

// Counts levels v and v + 1 (the last) in one pass over level v's C candidates (drv, off
// as lftj_expand made them for the frontier cur).
static rfx_status lftj_count_fused(lftj_run *R, int v, const lftj_frontier &cur, int kb, const uint8_t *drv,
                                   const uint64_t *off, uint64_t C)
{
    rfx_gpu *g = R->g;
    unsigned long long *d_total = (unsigned long long *)rfx_gpu_alloc(g, 8);
    if (!d_total)
        return RFX_ERR_NOMEM;
    lftj_fused fz;
    memset(&fz, 0, sizeof fz);
    fz.L = R->levels[v];
    fz.drv = drv;
    fz.off = off;
    fz.F = cur.F;
    fz.kb = kb;
    rfx_status st = lftj_add_count(R, d_total, false, "k_lftj_count_pair (fused)", [&] {
        return lftj_pair_launch(R, v + 1, R->pair_a[v + 1], (size_t)C, cur.rng, &fz, d_total);
    });
    rfx_gpu_free(g, d_total);
    return st;
}

// Whether level v's C candidates all go into the next frontier unchecked: the emit tests
// each and gives a non-match empty nodes (it binds nothing further), so the check's pass,
// its scan and a host round trip are saved for a frontier of C elements instead of the
// survivors. For small levels only (C at most the tuning's lftj_unchecked_rows; 0 turns it
// off), never the last, nor one before a last level
// counted in pairs (its runs of shared nodes are not made for empty elements), nor a box's
// (its memo keeps level 0 as checked).
// lftj_unchecked but for the number of candidates (level 0's, lftj_root_unchecked, need
// no check at all).
static bool lftj_may_skip_check(const lftj_run *R, int v)
{
    const int w = v + 1;
    return w < R->nvars && !R->memo && R->unchecked_rows &&
           !(w == R->nvars - 1 && R->counting && R->levels[w].np == 2 && R->pair_a[w] >= 0);
}

static bool lftj_unchecked(const lftj_run *R, int v, uint64_t C)
{
    return lftj_may_skip_check(R, v) && C && C <= R->unchecked_rows;
}

// Whether k_lftj_emit builds its new ranges (nrng) in shared memory: within the 48 KB a
// block may have without asking (up to 23 sources).
static bool lftj_staged(const lftj_run *R, const uint32_t *nrng)
{
    return nrng && LFTJ_EMIT_SMEM(R->nsrc) <= 48 * 1024;
}

// Whether the emit of level v also finds level v + 1's drivers and candidate counts
// (k_lftj_emit's ncnt): not when that level is the last and counted (lftj_count_last
// reads the ranges itself), nor under a memo, whose level-0 frontier other boxes reuse
// with other root ranges, so it must not come narrowed.
static bool lftj_precount(const lftj_run *R, int v)
{
    const int w = v + 1;
    return !R->memo && w < R->nvars && !(w == R->nvars - 1 && R->counting);
}

// next's drv and cnt for lftj_precount (left NULL when memory is short: the next level
// then counts them itself).
static void lftj_precount_alloc(lftj_run *R, int v, lftj_frontier *next)
{
    if (lftj_precount(R, v) && next->F) {
        next->drv = (uint8_t *)rfx_gpu_alloc(R->g, next->F);
        next->cnt = (uint64_t *)rfx_gpu_alloc(R->g, next->F * 8);
        if (!next->drv || !next->cnt) {
            rfx_gpu_free(R->g, next->drv);
            rfx_gpu_free(R->g, next->cnt);
            next->drv = NULL;
            next->cnt = NULL;
        }
    }
}

// For an emit of nc candidates (one launch) into next, precounted: the scan of next's
// counts by the emit (lftj_scan_out), next->off and the look-back scratch allocated and
// zeroed. scan->off stays NULL (the next level scans for itself) when next is not
// precounted or memory is short.
static rfx_status lftj_scan_begin(lftj_run *R, lftj_frontier *next, size_t nc, unsigned grid, lftj_scan_out *scan)
{
    rfx_gpu *g = R->g;
    *scan = lftj_scan_out{};   // no scan
    if (!next->cnt || !nc)
        return RFX_OK;
    const size_t ntiles = (nc + 255) / 256;
    next->off = (uint64_t *)rfx_gpu_alloc(g, next->F * 8);
    lb_args lb = {NULL, NULL, 0, NULL, (unsigned)(ntiles + grid - 1)};   // a block's last ticket is past the tiles
    lb_arm(g, &lb, LFTJ_SCAN_WORD);
    rfx_status st = next->off ? tagged_words(g, ntiles, &lb.status, &lb.counter, &lb.tag) : RFX_ERR_NOMEM;
    if (st != RFX_OK) {
        rfx_gpu_free(g, next->off);
        next->off = NULL;
        return st == RFX_ERR_NOMEM ? RFX_OK : st;
    }
    *scan = lftj_scan_out{next->off, lb, ntiles};
    return RFX_OK;
}

// After the emit's launch (e: the error of `call`): takes the total it leaves in host
// memory as next->C, as soon as it is there (lb_wait).
static rfx_status lftj_scan_end(lftj_run *R, lftj_frontier *next, const lftj_scan_out &scan, cudaError_t e,
                                const char *call)
{
    rfx_gpu *g = R->g;
    if (e != cudaSuccess) {
        if (scan.off)
            g->tagged_clean = false;   // the counter and the words may be left half-set
        return fail(g, e, call, __FILE__, __LINE__);
    }
    unsigned long long c = 0;
    rfx_status st = scan.off ? lb_wait(g, scan.lb, LFTJ_SCAN_WORD, call, &c) : RFX_OK;
    if (scan.off && st == RFX_OK)
        next->C = c;
    return st;
}

// k_lftj_emit over level v's candidates [c0, c0 + nc) into next (flag and pos NULL:
// unchecked; base: the first output of these candidates). scan_it (one launch for all the
// level's candidates): the emit also scans next's counts when next is precounted, and
// this waits for it (lftj_scan_begin, lftj_scan_end).
static rfx_status lftj_emit(lftj_run *R, int v, const lftj_frontier &cur, const uint8_t *drv, const uint64_t *off,
                            uint64_t c0, size_t nc, const uint64_t *flag, const uint64_t *pos, uint64_t base,
                            bool scan_it, lftj_frontier *next)
{
    rfx_gpu *g = R->g;
    lftj_scan_out scan = {};
    const unsigned grid = grid_for(nc);
    rfx_status st = scan_it ? lftj_scan_begin(R, next, nc, grid, &scan) : RFX_OK;
    if (st != RFX_OK)
        return st;
    const bool staged = lftj_staged(R, next->rng);
    const lftj_level &NL = R->levels[v + 1 < R->nvars ? v + 1 : v];   // read only with next->cnt
    k_lftj_emit<<<grid, 256, staged ? LFTJ_EMIT_SMEM(R->nsrc) : 0, g->stream>>>(
        R->S, R->levels[v], cur.F, v, cur.bind, cur.rng, drv, off, c0, nc, flag, pos, base, next->bind, next->rng, NL,
        next->drv, next->cnt, staged, scan);
    return lftj_scan_end(R, next, scan, cudaGetLastError(), flag ? "k_lftj_emit" : "k_lftj_emit (unchecked)");
}

// Every candidate of level v (C of them, counted and scanned in drv and off) into *next
// without a check: the emit gives a non-match empty nodes. *next stays empty (F 0, no
// memory) when the memory for all of them is short; the caller then checks them first.
static rfx_status lftj_emit_unchecked(lftj_run *R, int v, const lftj_frontier &cur, const uint8_t *drv,
                                      const uint64_t *off, uint64_t C, lftj_frontier *next)
{
    rfx_gpu *g = R->g;
    *next = lftj_frontier{0, NULL, NULL};
    lftj_frontier nx = {(size_t)C, (uint32_t *)rfx_gpu_alloc(g, (size_t)C * (size_t)(v + 1) * 4),
                        (uint32_t *)rfx_gpu_alloc(g, (size_t)C * (size_t)R->nsrc * 8)};
    if (!nx.bind || !nx.rng) {
        lftj_frontier_free(g, &nx);
        return RFX_OK;
    }
    lftj_precount_alloc(R, v, &nx);
    rfx_status st = lftj_emit(R, v, cur, drv, off, 0, (size_t)C, NULL, NULL, 0, true, &nx);
    if (st != RFX_OK) {
        lftj_frontier_free(g, &nx);
        return st;
    }
    *next = nx;
    return RFX_OK;
}

// Level 0 without its check, when every participant is column 0 of the same rows (the
// root nodes of e(x, y), e(x, z) in a clique): each of the driver's candidates is then in
// all the others, and their number is known here from the root index's ends, so no count,
// scan or host round trip is needed. Candidates that are no new value (a gap between
// values, a repeated row) stay as elements with empty nodes. *next stays empty (F 0, no
// memory) when this does not apply or memory is short: the general level then runs.
static rfx_status lftj_root_unchecked(lftj_run *R, const lftj_frontier &cur, lftj_frontier *next)
{
    rfx_gpu *g = R->g;
    *next = lftj_frontier{0, NULL, NULL};
    const lftj_level &L = R->levels[0];
    const int s0 = L.src[0];
    if (cur.F != 1 || !lftj_may_skip_check(R, 0))
        return RFX_OK;
    for (int k = 0; k < L.np; k++) {
        const int s = L.src[k];
        if (L.col[k] != 0 || R->S.data[s] != R->S.data[s0] || R->S.rows[s] != R->S.rows[s0] ||
            R->S.arity[s] != R->S.arity[s0])
            return RFX_OK;
    }
    const uint32_t n = R->S.rows[s0];
    unsigned dv = 0;
    uint64_t C = n;
    if (R->S.rptr[s0] && n > 1) {   // as k_lftj_count chooses: the root node is the whole root level
        dv = LFTJ_BY_ENTRY;
        C = R->S.nroot[s0];
    } else if (R->S.first[s0] && n > 1 && R->S.maxv[s0] - R->S.minv[s0] < n - 1) {
        dv = LFTJ_BY_VALUE;
        C = (uint64_t)R->S.maxv[s0] - R->S.minv[s0] + 1;
    }
    uint8_t *drv = (uint8_t *)rfx_gpu_alloc(g, 1);   // the root element: its driver and offset
    uint64_t *off = (uint64_t *)rfx_gpu_alloc(g, 8);
    rfx_status st = RFX_OK;
    if (drv && off) {
        cudaError_t e = cudaMemsetAsync(drv, (int)dv, 1, g->stream);
        if (e == cudaSuccess)
            e = cudaMemsetAsync(off, 0, 8, g->stream);
        st = e != cudaSuccess ? fail(g, e, "cudaMemsetAsync", __FILE__, __LINE__)
                              : lftj_emit_unchecked(R, 0, cur, drv, off, C, next);
    }
    rfx_gpu_free(g, drv);
    rfx_gpu_free(g, off);
    return st;
}

static rfx_status lftj_add_piece(lftj_run *R, rfx_dev_rows *piece)
{
    if (R->npieces == R->piece_cap) {
        int nc = R->piece_cap ? 2 * R->piece_cap : 4;
        rfx_dev_rows *p = (rfx_dev_rows *)realloc(R->pieces, sizeof(rfx_dev_rows) * (size_t)nc);
        if (!p)
            return RFX_ERR_NOMEM;
        R->pieces = p;
        R->piece_cap = nc;
    }
    R->pieces[R->npieces++] = *piece;
    return RFX_OK;
}

// Keeps a copy of level 0's whole frontier in the memo (a speed-up: without memory, not).
static void lftj_memo_keep(lftj_run *R, const lftj_frontier &f)
{
    rfx_gpu *g = R->g;
    rfx_gpu_lftj_memo *m = R->memo;
    size_t bb = f.F * 4, rb = f.F * (size_t)R->nsrc * 8;
    m->bind = f.F ? (uint32_t *)rfx_gpu_alloc(g, bb) : NULL;
    m->rng = f.F ? (uint32_t *)rfx_gpu_alloc(g, rb) : NULL;
    if (f.F && (!m->bind || !m->rng ||
                cudaMemcpyAsync(m->bind, f.bind, bb, cudaMemcpyDeviceToDevice, g->stream) != cudaSuccess ||
                cudaMemcpyAsync(m->rng, f.rng, rb, cudaMemcpyDeviceToDevice, g->stream) != cudaSuccess)) {
        cudaGetLastError();
        lftj_memo_drop_level0(g, m);
        return;
    }
    m->F = f.F;
    m->nsrc = R->nsrc;
    m->valid = true;
}

static rfx_status lftj_expand(lftj_run *R, int v, lftj_frontier cur, bool owned);

// Level 1 onwards from the memo's level 0: a copy, with the root ranges of the sources
// variable 0 does not lead set to this join's slices. Where the copy does not fit beside
// the memo, the memo's own level 0 is taken (the next box with these outer slices joins
// level 0 again) rather than failing the box.
static rfx_status lftj_from_memo(lftj_run *R)
{
    rfx_gpu *g = R->g;
    rfx_gpu_lftj_memo *m = R->memo;
    lftj_frontier f = {m->F, NULL, NULL};
    if (m->F) {
        f.bind = (uint32_t *)rfx_gpu_alloc(g, m->F * 4);
        f.rng = (uint32_t *)rfx_gpu_alloc(g, m->F * (size_t)R->nsrc * 8);
        bool taken = !f.bind || !f.rng;
        if (taken) {
            lftj_frontier_free(g, &f);
            f.bind = m->bind;
            f.rng = m->rng;
            m->bind = m->rng = NULL;
            m->valid = false;
        }
        uint32_t mask = 0;
        for (int s = 0; s < R->nsrc; s++) {
            bool leads = false;
            for (int k = 0; k < R->levels[0].np; k++)
                leads |= R->levels[0].src[k] == s;
            mask |= leads ? 0u : 1u << s;
        }
        cudaError_t e = taken ? cudaSuccess
                              : cudaMemcpyAsync(f.bind, m->bind, m->F * 4, cudaMemcpyDeviceToDevice, g->stream);
        if (e == cudaSuccess && !taken)
            e = cudaMemcpyAsync(f.rng, m->rng, m->F * (size_t)R->nsrc * 8, cudaMemcpyDeviceToDevice, g->stream);
        if (e == cudaSuccess && mask) {
            k_lftj_patch_roots<<<grid_for(m->F), 256, 0, g->stream>>>(f.rng, m->F, R->nsrc, mask, R->S);
            e = cudaGetLastError();
        }
        if (e != cudaSuccess) {
            lftj_frontier_free(g, &f);
            return fail(g, e, "level 0 from the memo", __FILE__, __LINE__);
        }
    }
    return lftj_expand(R, 1, f, true);
}

// Binds variables v.. for the frontier cur (depth v). owned: cur is this call's to free;
// otherwise it is a view into the caller's frontier. When the next frontier does not fit
// in the device memory left, cur is split in pieces, each expanded to the end in turn,
// so memory holds one piece's subtree at a time ("several rounds").
static rfx_status lftj_expand(lftj_run *R, int v, lftj_frontier cur, bool owned)
{
    rfx_gpu *g = R->g;
    if (cur.F == 0) {
        if (owned)
            lftj_frontier_free(g, &cur);
        return RFX_OK;
    }
    const lftj_level &L = R->levels[v];
    bool last = v == R->nvars - 1;
    size_t F = cur.F;
    rfx_status st = RFX_OK;
    if (v == 0 && !last) {
        lftj_frontier next;
        st = lftj_root_unchecked(R, cur, &next);
        if (st == RFX_OK && next.F) {
            if (owned)
                lftj_frontier_free(g, &cur);
            return lftj_expand(R, 1, next, true);
        }
        if (st != RFX_OK) {
            if (owned)
                lftj_frontier_free(g, &cur);
            return st;
        }
    }
    if (last && R->counting) {
        st = lftj_count_last(R, v, cur);
        if (owned)
            lftj_frontier_free(g, &cur);
        return st;
    }
    const bool precounted = cur.cnt != NULL, prescanned = cur.off != NULL;   // taken over from the frontier
    uint8_t *drv = precounted ? cur.drv : (uint8_t *)rfx_gpu_alloc(g, F);
    uint64_t *cnt = precounted ? cur.cnt : (uint64_t *)rfx_gpu_alloc(g, F * 8);
    uint64_t *off = prescanned ? cur.off : (uint64_t *)rfx_gpu_alloc(g, F * 8);
    cur.drv = NULL;
    cur.cnt = cur.off = NULL;
    uint64_t *flag = NULL, *pos = NULL;
    uint64_t C = 0, kept = 0;
    size_t round = 0;
    if (!drv || !cnt || !off)
        st = RFX_ERR_NOMEM;
    if (st == RFX_OK && !precounted) {
        k_lftj_count<<<grid_for(F), 256, 0, g->stream>>>(R->S, L, F, R->nsrc, cur.rng, drv, cnt);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            st = fail(g, e, "k_lftj_count", __FILE__, __LINE__);
    }
    if (st == RFX_OK && prescanned)
        C = cur.C;
    else if (st == RFX_OK)
        st = scan_total(g, cnt, off, F, &C);
    rfx_gpu_free(g, cnt);
    int kb;
    if (st == RFX_OK && lftj_fusable(R, v, F, &kb)) {
        st = C ? lftj_count_fused(R, v, cur, kb, drv, off, C) : RFX_OK;
        rfx_gpu_free(g, drv);
        rfx_gpu_free(g, off);
        if (owned)
            lftj_frontier_free(g, &cur);
        return st;
    }
    if (st == RFX_OK && lftj_unchecked(R, v, C)) {
        lftj_frontier next;
        st = lftj_emit_unchecked(R, v, cur, drv, off, C, &next);
        if (st != RFX_OK || next.F) {   // else no memory for every candidate: check them first
            rfx_gpu_free(g, drv);
            rfx_gpu_free(g, off);
            if (owned)
                lftj_frontier_free(g, &cur);
            if (st != RFX_OK)
                return st;
            return lftj_expand(R, v + 1, next, true);
        }
    }
    round = C < LFTJ_ROUND ? (size_t)C : LFTJ_ROUND;
    {   // under a small budget (out of core) the round's 16 bytes a candidate take what is left
        size_t used = rfx_gpu_in_use(g), left = g->budget > used ? (g->budget - used) / 32 : 0;
        left = left < 256 ? 256 : left;
        round = round < left ? round : left;
    }
    if (st == RFX_OK && C) {
        flag = (uint64_t *)rfx_gpu_alloc(g, round * 8);
        pos = (uint64_t *)rfx_gpu_alloc(g, round * 8);
        if (!flag || !pos)
            st = RFX_ERR_NOMEM;
    }
    // count the survivors: that sizes the next frontier, which a single round fills
    // without checking again
    for (uint64_t c0 = 0; c0 < C && st == RFX_OK; c0 += round) {
        size_t nc = (size_t)(C - c0 < round ? C - c0 : round);
        uint64_t k = 0;
        st = lftj_round(g, R->S, L, cur, drv, off, c0, nc, flag, pos, &k);
        kept += k;
    }
    lftj_frontier next = {(size_t)kept, NULL, NULL};
    if (st == RFX_OK && kept) {
        next.bind = (uint32_t *)rfx_gpu_alloc(g, (size_t)kept * (size_t)(v + 1) * 4);
        next.rng = last ? NULL : (uint32_t *)rfx_gpu_alloc(g, (size_t)kept * (size_t)R->nsrc * 8);
        if (!next.bind || (!last && !next.rng)) {
            lftj_frontier_free(g, &next);
            st = RFX_ERR_NOMEM;
        }
    }
    if (st == RFX_ERR_NOMEM && F > 1) {
        // the next frontier does not fit: expand pieces of this one on their own, as many
        // as its counted size asks of the memory left (two where it is not known), so that
        // each piece counts its candidates once more rather than once a halving
        rfx_gpu_free(g, drv);
        rfx_gpu_free(g, off);
        rfx_gpu_free(g, flag);
        rfx_gpu_free(g, pos);
        g->err[0] = 0;
        const size_t need = (size_t)kept * ((size_t)(v + 1) * 4 + (last ? 0 : (size_t)R->nsrc * 8));
        const size_t used = rfx_gpu_in_use(g), room = g->budget > used ? (g->budget - used) / 2 : 0;
        size_t pieces = room && need ? need / room + 2 : 2;
        pieces = pieces < F ? pieces : F;
        st = RFX_OK;
        for (size_t i = 0; i < pieces && st == RFX_OK; i++) {
            const size_t a = F * i / pieces, b = F * (i + 1) / pieces;
            lftj_frontier piece = {b - a, cur.bind ? cur.bind + a * (size_t)v : NULL, cur.rng + a * (size_t)R->nsrc * 2};
            st = lftj_expand(R, v, piece, false);
        }
        if (owned)
            lftj_frontier_free(g, &cur);
        return st;
    }
    if (st == RFX_OK)
        lftj_precount_alloc(R, v, &next);
    uint64_t base = 0;
    for (uint64_t c0 = 0; c0 < C && kept && st == RFX_OK; c0 += round) {
        size_t nc = (size_t)(C - c0 < round ? C - c0 : round);
        uint64_t k = 0;
        if (C > round)     // the flags of the last round are still there when there is one
            st = lftj_round(g, R->S, L, cur, drv, off, c0, nc, flag, pos, &k);
        if (st != RFX_OK)
            break;
        st = lftj_emit(R, v, cur, drv, off, c0, nc, flag, pos, base, C <= round, &next);   // one round: it scans
        base += C > round ? k : kept;
    }
    rfx_gpu_free(g, drv);
    rfx_gpu_free(g, off);
    rfx_gpu_free(g, flag);
    rfx_gpu_free(g, pos);
    if (owned)
        lftj_frontier_free(g, &cur);
    if (st != RFX_OK) {
        lftj_frontier_free(g, &next);
        return st;
    }
    if (!last) {
        if (v == 0 && owned && R->memo && !R->memo->valid)
            lftj_memo_keep(R, next);
        return lftj_expand(R, v + 1, next, true);
    }
    if (!next.F)
        return RFX_OK;
    rfx_dev_rows piece;
    rfx_gpu_rows_init(&piece, R->nvars);
    piece.data = next.bind;
    piece.n = piece.cap = next.F;
    st = lftj_add_piece(R, &piece);
    if (st != RFX_OK)
        rfx_gpu_rows_free(g, &piece);
    return st;
}

// Source s read as the two-level TrieArray t: its last level is the data, one word a row.
static void lftj_read_trie(lftj_run *R, int s, const rfx_dev_trie *t, uint32_t *root)
{
    R->trie[s] = t;
    R->S.data[s] = t->val[1];
    R->S.rval[s] = t->val[0];
    R->S.rptr[s] = t->ptr[0];
    R->S.nroot[s] = (uint32_t)t->n[0];
    R->S.rows[s] = (uint32_t)t->n[1];
    R->S.minv[s] = t->first;
    R->S.maxv[s] = t->last;
    root[2 * s + 1] = R->S.rows[s];
}

// The in-core join reads each two-column source as a TrieArray built here on the device
// (rfx_gpu_trie_build): its second column, the last level, is then one word a row, so a
// search or a pair count reads half the bytes, and its values are distinct and padded as
// the pair count reads them (no copy of the column); its root level gives the root index
// and, at the root, the candidates (LFTJ_BY_ENTRY). Sources over the same rows share one;
// root gets each source's new row count (distinct rows). A source stays in rows when
// memory is short (the join reads either form).
// Sources of fewer rows than the tuning's lftj_trie_from stay rows: a build is several
// launches and a wait, which small joins do not win back. Larger ones gain: a 4-clique's
// last level reads half the words, and a triangle count's e(y, z), which leads y, needs
// no copy of its column for the pair count (docs/PERFORMANCE.md has the measurements).
static rfx_status lftj_as_tries(lftj_run *R, uint32_t *root)
{
    rfx_gpu *g = R->g;
    const uint32_t *rows_of[LFTJ_MAX_SRC];
    uint32_t nrows[LFTJ_MAX_SRC];
    for (int s = 0; s < R->nsrc; s++) {
        rows_of[s] = R->S.data[s];
        nrows[s] = R->S.rows[s];
    }
    for (int s = 0; s < R->nsrc; s++) {
        if (R->trie[s] || R->S.arity[s] != 2 || R->S.rows[s] == 0 || R->S.rows[s] < R->trie_from)
            continue;
        int same = -1;
        for (int q = 0; q < s && same < 0; q++)
            if (rows_of[q] == rows_of[s] && R->S.arity[q] == 2 && nrows[q] == nrows[s])
                same = q;
        if (same >= 0) {
            if (!R->trie[same])
                continue;
            R->trie[s] = R->trie[same];
        } else {
            rfx_dev_rows in = {(uint32_t *)rows_of[s], nrows[s], nrows[s], 2};
            rfx_status st = rfx_gpu_trie_build(g, &in, &R->tries[s]);
            if (st == RFX_ERR_NOMEM) {
                g->err[0] = 0;
                continue;
            }
            if (st != RFX_OK)
                return st;
            R->trie[s] = &R->tries[s];
        }
        lftj_read_trie(R, s, R->trie[s], root);
    }
    return RFX_OK;
}

// tries: read the two-column sources as TrieArrays (lftj_as_tries). The in-core join
// does; a box's or a device's part does not, as it would build one per part (and a
// whole one of each source it does not slice), where its slices are read in place.
// given (else NULL): per source, a TrieArray of its rows already on the device (or NULL),
// read as lftj_as_tries would read one it built; srcs[s] then only says its arity.
static rfx_status lftj_run_join(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc, int nvars,
                                rfx_dev_rows *dst, uint64_t *count, rfx_gpu_lftj_memo *memo, bool tries,
                                const rfx_dev_trie *const *given)
{
    if (nsrc < 1 || nsrc > LFTJ_MAX_SRC || nvars < 1 || nvars > 64) {
        snprintf(g->err, sizeof g->err, "leapfrog triejoin of %d sources over %d variables (at most %d and 64)", nsrc,
                 nvars, LFTJ_MAX_SRC);
        return RFX_ERR_LIMIT;
    }
    lftj_run R;
    memset(&R, 0, sizeof R);
    R.g = g;
    R.nsrc = nsrc;
    R.nvars = nvars;
    R.counting = count != NULL;
    const rfx_tuning *T = g->tune;
    R.unfused = !T->lftj_fuse_levels;
    R.rows_only = T->lftj_rows;
    R.narrow = T->lftj_narrow;
    R.trie_from = T->lftj_trie_from;
    R.unchecked_rows = T->lftj_unchecked_rows;
    R.regroup_piece = T->lftj_regroup_piece ? T->lftj_regroup_piece : UINT64_MAX;
    R.memo = nvars > 1 ? memo : NULL;
    R.S.nsrc = nsrc;
    R.levels = (lftj_level *)calloc((size_t)nvars, sizeof(lftj_level));
    uint32_t *root = (uint32_t *)malloc(sizeof(uint32_t) * 2 * (size_t)nsrc);
    if (!R.levels || !root) {
        free(R.levels);
        free(root);
        return RFX_ERR_NOMEM;
    }
    bool empty = false;
    rfx_status st = RFX_OK;
    for (int s = 0, o = 0; s < nsrc && st == RFX_OK; s++) {
        if (srcs[s]->n >= UINT32_MAX) {
            snprintf(g->err, sizeof g->err, "leapfrog triejoin source of %zu rows (at most 2^32-1)", srcs[s]->n);
            st = RFX_ERR_LIMIT;
            break;
        }
        R.S.data[s] = srcs[s]->data;
        R.S.arity[s] = srcs[s]->arity;
        R.S.rows[s] = (uint32_t)srcs[s]->n;
        root[2 * s] = 0;
        root[2 * s + 1] = (uint32_t)srcs[s]->n;
        if (given && given[s]) {
            if (srcs[s]->arity != 2 || given[s]->levels != 2 || given[s]->n[1] >= UINT32_MAX) {
                snprintf(g->err, sizeof g->err,
                         "leapfrog triejoin: source %d of %d columns given as a TrieArray of %d levels (two of each only)",
                         s, srcs[s]->arity, given[s]->levels);
                st = RFX_ERR_INTERNAL;
                break;
            }
            lftj_read_trie(&R, s, given[s], root);
        }
        empty |= R.S.rows[s] == 0;
        for (int c = 0; c < srcs[s]->arity; c++, o++) {
            lftj_level *L = &R.levels[colvar[o]];
            L->src[L->np] = s;
            L->col[L->np++] = c;
        }
    }
    /* for two participants: the one whose node is fixed by an earlier prefix of the
     * binding (its column's previous variable is earlier), shared by consecutive elements */
    for (int v = 0; v < nvars && st == RFX_OK; v++) {
        R.pair_a[v] = -1;
        if (R.levels[v].np == 0) {
            snprintf(g->err, sizeof g->err, "leapfrog triejoin: variable %d is in no source", v);
            st = RFX_ERR_INTERNAL;
            break;
        }
        if (R.levels[v].np != 2)
            continue;
        int prev[2];
        for (int k = 0; k < 2; k++) {
            int s = R.levels[v].src[k], c = R.levels[v].col[k], o = 0;
            for (int q = 0; q < s; q++)
                o += srcs[q]->arity;
            prev[k] = c > 0 ? colvar[o + c - 1] : -1;
        }
        if (prev[0] != prev[1])
            R.pair_a[v] = prev[0] < prev[1] ? 0 : 1;
    }
    bool owned_index[LFTJ_MAX_SRC] = {false}, small = false;
    if (st == RFX_OK && !empty)
        st = lftj_small_count(&R, colvar, &small);
    if (st == RFX_OK && !empty && !small && tries && !R.rows_only) {
        st = lftj_as_tries(&R, root);
    }
    if (st == RFX_OK && !empty && !small) {
        bool lead0[LFTJ_MAX_SRC] = {false};
        for (int k = 0; k < R.levels[0].np; k++)
            lead0[R.levels[0].src[k]] = R.levels[0].col[k] == 0;
        st = lftj_index_roots(g, &R.S, owned_index, R.memo, lead0);
    }
    lftj_frontier root_f = {empty ? (size_t)0 : 1, NULL, NULL};
    if (st == RFX_OK && !empty && !small) {
        root_f.rng = (uint32_t *)rfx_gpu_alloc(g, sizeof(uint32_t) * 2 * (size_t)nsrc);
        if (!root_f.rng)
            st = RFX_ERR_NOMEM;
        else {
            cudaError_t e = cudaMemcpyAsync(root_f.rng, root, sizeof(uint32_t) * 2 * (size_t)nsrc,
                                            cudaMemcpyHostToDevice, g->stream);
            if (e != cudaSuccess)
                st = fail(g, e, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
    }
    if (st == RFX_OK && R.memo && R.memo->valid && R.memo->nsrc == nsrc && !empty) {
        lftj_frontier_free(g, &root_f);
        st = lftj_from_memo(&R);
    } else if (st == RFX_OK && !small)
        st = lftj_expand(&R, 0, root_f, true);
    else
        lftj_frontier_free(g, &root_f);
    free(R.levels);
    free(root);
    for (int s = 0; s < nsrc; s++) {
        if (owned_index[s])
            rfx_gpu_free(g, (void *)R.S.first[s]);
        rfx_gpu_trie_free(g, &R.tries[s]);   // stream-ordered: after the join's kernels
    }
    rfx_dev_rows res;
    rfx_gpu_rows_init(&res, nvars);
    if (st == RFX_OK && !R.counting) {
        if (R.npieces == 1)
            res = R.pieces[0];
        else if (R.npieces > 1) {
            // pieces were expanded one after the other: their results concatenate in order
            size_t n = 0;
            for (int i = 0; i < R.npieces; i++)
                n += R.pieces[i].n;
            st = rows_alloc(g, &res, nvars, n);
            for (size_t at = 0, i = 0; st == RFX_OK && i < (size_t)R.npieces; i++) {
                cudaError_t e = cudaMemcpyAsync(res.data + at * (size_t)nvars, R.pieces[i].data,
                                                R.pieces[i].n * (size_t)nvars * 4, cudaMemcpyDeviceToDevice, g->stream);
                if (e != cudaSuccess)
                    st = fail(g, e, "cudaMemcpyAsync", __FILE__, __LINE__);
                at += R.pieces[i].n;
            }
        }
    }
    bool adopted = st == RFX_OK && !R.counting && R.npieces == 1;   // res is pieces[0]
    for (int i = 0; i < R.npieces && !adopted; i++)
        rfx_gpu_rows_free(g, &R.pieces[i]);
    free(R.pieces);
    if (st != RFX_OK) {
        rfx_gpu_rows_free(g, &res);   // allocated only when pieces were being joined
        return st;
    }
    if (count) {
        *count = R.total;
        return RFX_OK;
    }
    replace(g, dst, &res);
    return RFX_OK;
}

extern "C" rfx_status rfx_gpu_lftj(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc, int nvars,
                                   rfx_dev_rows *dst, uint64_t *count)
{
    return lftj_run_join(g, srcs, colvar, nsrc, nvars, dst, count, NULL, true, NULL);
}

extern "C" rfx_status rfx_gpu_lftj_tries(rfx_gpu *g, const rfx_dev_rows *const *srcs, const rfx_dev_trie *const *tries,
                                         const int *colvar, int nsrc, int nvars, rfx_dev_rows *dst, uint64_t *count)
{
    return lftj_run_join(g, srcs, colvar, nsrc, nvars, dst, count, NULL, true, tries);
}

extern "C" rfx_status rfx_gpu_lftj_memo_run(rfx_gpu *g, const rfx_dev_rows *const *srcs, const int *colvar, int nsrc,
                                            int nvars, rfx_dev_rows *dst, uint64_t *count, rfx_gpu_lftj_memo *memo)
{
    return lftj_run_join(g, srcs, colvar, nsrc, nvars, dst, count, memo, false, NULL);
}
