/* tuning.c: the table of tuning knobs (base.h's rfx_tuning): names, defaults, ranges and
 * what each one does, and the parser of `key=value ...`. docs/cli.md lists the same table
 * (`rfx --tune help` prints this one; tests/test_docs.c checks they agree). */
#include "base.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { T_BOOL, T_INT, T_SIZE, T_REAL } knob_type;

typedef struct knob {
    const char *name;
    knob_type type;
    size_t offset;
    double lo, hi;             /* accepted range (T_INT, T_SIZE, T_REAL) */
    const char *doc;
} knob;

#define K(field, type, lo, hi, doc) {#field, type, offsetof(rfx_tuning, field), lo, hi, doc}
static const knob knobs[] = {
    K(demand, T_BOOL, 0, 1, "where only outputs are looked at (the rfx command, results_only), a helper relation read in one rule is made only for the tuples that rule can use (0: whole)"),
    K(split_loops, T_BOOL, 0, 1, "split a semi-naive loop whose relation outgrows a memory cap into ranges"),
    K(join_groups, T_INT, 0, 2, "fused JOIN groups: 0 by size (one member: a generated kernel, more: member by member), 1 always generated, 2 always by members"),
    K(jit_min_rows, T_SIZE, 0, 1e18, "fused groups over fewer input tuples run on the precompiled primitives"),
    K(jit_background, T_BOOL, 0, 1, "a group whose kernels are not cached runs unfused while NVRTC compiles them in a thread"),
    K(cpu_scratch, T_SIZE, 0, 1e18, "under a cap, the bytes the CPU backend may allocate beyond it (0: no limit; tests)"),
    K(check_pins, T_BOOL, 0, 1, "the CPU backend checks that registered host memory is unregistered once (tests)"),
    K(ooc_merges_on_device, T_BOOL, 0, 1, "out of core, set operations, sorts and UNIQUE too big to fit run by parts on the device"),
    K(pin_host, T_BOOL, 0, 1, "out of core, register (pin) host rows that joins copy from, for overlapped copies"),
    K(pin_from, T_SIZE, 0, 1e18, "out of core, the least bytes of rows worth registering"),
    K(box_snake, T_BOOL, 0, 1, "boxed triejoins run every other outer interval's boxes in reverse (to keep slices)"),
    K(box_bounds, T_BOOL, 0, 1, "boxed triejoins skip boxes whose slices' second columns miss their interval"),
    K(box_tries, T_BOOL, 0, 1, "boxed triejoins send two-column sources as TrieArrays (half the bytes of rows)"),
    K(box_outer, T_REAL, 0.05, 0.8, "boxed triejoins: the outer slices' share of the memory budget"),
    K(box_level0, T_REAL, 0.02, 0.5, "boxed triejoins: the first level's share of the memory budget"),
    K(pairs, T_BOOL, 0, 1, "an out-of-core triangle count over one relation goes by parts of its vertices"),
    K(induced_device, T_BOOL, 0, 1, "out of core, a join by induced parts has its parts' subgraphs made by the device, reading the relation in host memory"),
    K(induced_share, T_REAL, 0.05, 0.9, "out of core, the share of the memory budget a part of a join by induced parts takes (its rows and an upper bound of its subgraph's)"),
    K(induced_overlap, T_BOOL, 0, 1, "out of core, a join by induced parts made on the device makes the next part on a stream of its own while it joins one"),
    K(pairs_host_trie, T_INT, 0, 2, "the count by parts sends its chunks as TrieArrays: 0 never, 1 where they pay, 2 always"),
    K(pairs_early, T_BOOL, 0, 1, "the count by parts joins a part's first chunk as soon as it lands"),
    K(pairs_lanes, T_INT, 1, 2, "host threads (each with a stream) joining the count by parts' boxes"),
    K(pairs_held, T_INT, 0, 47, "the count by parts: 64ths of the device memory for the part held (0: chosen by room)"),
    K(pairs_slot, T_INT, 0, 15, "the count by parts: 64ths for each of its two copy slots (0: 8)"),
    K(pairs_rev, T_INT, 0, 15, "the count by parts: 64ths for a box's reversal, per lane (0: 6)"),
    K(lftj_fuse_levels, T_BOOL, 0, 1, "the GPU triejoin counts a pair count with the level before it in one pass"),
    K(lftj_rows, T_BOOL, 0, 1, "the GPU triejoin reads every source as sorted rows (no TrieArrays)"),
    K(lftj_narrow, T_INT, -1, 1, "the GPU pair count narrows nodes to each other's ends: -1 where a sample pays, 0 never, 1 always"),
    K(lftj_trie_from, T_SIZE, 0, 1e18, "the GPU triejoin reads two-column sources of this many rows or more as TrieArrays"),
    K(lftj_unchecked_rows, T_SIZE, 0, 1e18, "GPU triejoin levels of at most this many candidates skip their check and compaction"),
    K(lftj_regroup_piece, T_SIZE, 0, 1e18, "the GPU pair count's regrouped pieces, at most this many elements (0: no limit; tests)"),
    K(lftj_small_rows, T_SIZE, 0, 1e18, "count-only GPU triejoins of sources up to this many rows run as one kernel (0: never)"),
    K(lftj_small_group, T_INT, 0, 8, "lanes a row in that kernel: 1, 2, 4 or 8 (0: chosen by size)"),
    K(search_lanes, T_INT, 0, 32, "lanes a binary search of the GPU primitives: 1, 2, 4 ... 32 (0: chosen by size)"),
    K(made_hash_bits, T_INT, 1, 64, "bits of the hash that texts made on the device are told apart by (fewer: texts share hashes, every row's symbol then made by the host; tests)"),
    K(pool_keep, T_SIZE, 0, 1e18, "device memory a kept engine's pool holds for its next run (0: a quarter of the device budget)"),
    K(auto_place, T_INT, 0, 2, "--backend=auto places commands: 0 by cost, 1 on the device where it can, 2 alternately (tests)"),
    K(auto_cpu_device, T_BOOL, 0, 1, "--backend=auto's device is a second CPU backend (tests of its placement without a GPU)"),
    K(auto_start_ms, T_REAL, 0, 1e6, "--backend=auto: milliseconds a device takes to start (the work on the CPU that pays for it)"),
    K(auto_grow_regret, T_REAL, 0, 1, "--backend=auto: share of a start a loop whose relations can grow past one loses on the host before the device starts"),
    K(auto_launch_us, T_REAL, 0, 1e6, "--backend=auto: microseconds a command takes on the device besides its rows"),
    K(auto_host_ns, T_REAL, 0, 1e6, "--backend=auto: nanoseconds a row of work takes on the CPU's threads"),
    K(auto_device_ns, T_REAL, 0, 1e6, "--backend=auto: nanoseconds a row of work takes on the device"),
    K(auto_copy_gbs, T_REAL, 0.01, 1e6, "--backend=auto: GB/s of a copy between the host and the device"),
    K(dist_replica_rows, T_SIZE, 0, 1e18, "MPI runs: a relation a loop reads but does not change, of up to this many rows, is replicated once on every process (joins with it move nothing)"),
    K(dist_slice_bytes, T_SIZE, 0, 1e18, "MPI runs: each process reads a slice of a plain facts file of at least this many bytes (numbers only) and sends the tuples to their owners"),
    K(dist_skew, T_REAL, 0, 1e6, "MPI runs: a join's side whose largest process part is over this many times the mean part has its hot keys spread over the processes (0: never)"),
    K(dist_hot_rows, T_SIZE, 0, 1e18, "MPI runs: ... a side of at least this many tuples (the whole job's)"),
    K(dist_hot_part, T_REAL, 0, 1e6, "MPI runs: a hot key holds at least this share of a mean process part of a side (0: every key; tests)"),
};
#undef K

const rfx_tuning rfx_tuning_defaults = {
    .demand = true,
    .split_loops = true,
    .jit_min_rows = (uint64_t)1 << 16,
    .jit_background = true,
    .pin_host = true,
    .pin_from = (uint64_t)64 << 20,
    .box_snake = true,
    .box_bounds = true,
    .box_outer = 7.0 / 16,
    .box_level0 = 1.0 / 6,
    .pairs = true,
    .pairs_host_trie = 1,
    .induced_device = true,
    .induced_share = 0.3,
    .induced_overlap = true,
    .pairs_early = true,
    .pairs_lanes = 2,
    .lftj_fuse_levels = true,
    .lftj_narrow = -1,
    .lftj_trie_from = (uint64_t)1 << 20,
    .lftj_unchecked_rows = (uint64_t)1 << 20,
    .lftj_small_rows = (uint64_t)1 << 19,
    .made_hash_bits = 64,
    .auto_start_ms = 300,
    .auto_grow_regret = 0.01,
    .auto_launch_us = 50,
    .auto_host_ns = 2,
    .auto_device_ns = 0.02,
    .auto_copy_gbs = 10,
    .dist_replica_rows = (uint64_t)1 << 26,
    .dist_slice_bytes = (uint64_t)1 << 20,
    .dist_skew = 1.2,
    .dist_hot_rows = 4096,
    .dist_hot_part = 0.5,
};

static const knob *find_knob(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
        if (strlen(knobs[i].name) == n && !strncmp(knobs[i].name, name, n))
            return &knobs[i];
    return NULL;
}

/* A size may end in K, M or G (powers of 1024). */
static bool parse_number(const char *s, knob_type type, double *out)
{
    char *end;
    errno = 0;
    double v = type == T_REAL ? strtod(s, &end) : (double)strtoll(s, &end, 10);
    if (end == s || errno)
        return false;
    if (type == T_SIZE && *end) {
        const char *units = "KMG";
        const char *u = strchr(units, toupper((unsigned char)*end));
        if (!u || end[1])
            return false;
        for (long k = u - units; k >= 0; k--)
            v *= 1024;
        end++;
    }
    *out = v;
    return *end == 0;
}

bool rfx_tuning_set(rfx_tuning *t, const char *key, const char *value, char *err, size_t errcap)
{
    const knob *k = find_knob(key, strlen(key));
    if (!k) {
        snprintf(err, errcap, "unknown tuning key '%s' (rfx --tune help lists them)", key);
        return false;
    }
    char *at = (char *)t + k->offset;
    double v;
    if (k->type == T_BOOL) {
        bool on = !strcmp(value, "1") || !strcmp(value, "true") || !strcmp(value, "on");
        if (!on && strcmp(value, "0") && strcmp(value, "false") && strcmp(value, "off")) {
            snprintf(err, errcap, "tuning key '%s' takes 0 or 1, not '%s'", key, value);
            return false;
        }
        *(bool *)at = on;
        return true;
    }
    if (!parse_number(value, k->type, &v) || v < k->lo || v > k->hi) {
        snprintf(err, errcap, "tuning key '%s' takes %s from %g to %g, not '%s'", key,
                 k->type == T_REAL ? "a number" : k->type == T_SIZE ? "a size" : "an integer", k->lo, k->hi, value);
        return false;
    }
    if (k->type == T_INT)
        *(int *)at = (int)v;
    else if (k->type == T_SIZE)
        *(uint64_t *)at = (uint64_t)v;
    else
        *(double *)at = v;
    return true;
}

bool rfx_tuning_parse(rfx_tuning *t, const char *spec, char *err, size_t errcap)
{
    for (const char *p = spec ? spec : ""; *p;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (!*p)
            break;
        const char *end = p;
        while (*end && !isspace((unsigned char)*end) && *end != ',')
            end++;
        char item[256];
        size_t n = (size_t)(end - p) < sizeof item - 1 ? (size_t)(end - p) : sizeof item - 1;
        memcpy(item, p, n);
        item[n] = 0;
        char *eq = strchr(item, '=');
        if (!eq) {
            snprintf(err, errcap, "tuning setting '%s' is not key=value", item);
            return false;
        }
        *eq = 0;
        if (!rfx_tuning_set(t, item, eq + 1, err, errcap))
            return false;
        p = end;
    }
    return true;
}

void rfx_tuning_describe(FILE *out)
{
    const rfx_tuning *d = &rfx_tuning_defaults;
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++) {
        const knob *k = &knobs[i];
        const char *at = (const char *)d + k->offset;
        char def[32];
        if (k->type == T_BOOL)
            snprintf(def, sizeof def, "%d", *(const bool *)at);
        else if (k->type == T_INT)
            snprintf(def, sizeof def, "%d", *(const int *)at);
        else if (k->type == T_SIZE)
            snprintf(def, sizeof def, "%llu", (unsigned long long)*(const uint64_t *)at);
        else
            snprintf(def, sizeof def, "%.4g", *(const double *)at);
        fprintf(out, "%-22s %-10s %s\n", k->name, def, k->doc);
    }
}
