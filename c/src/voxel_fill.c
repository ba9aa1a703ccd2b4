/* Filling enclosed space in an occupancy grid: rasterization marks only surfaces solid, so the inside of a closed
 * mesh (a pillar, a thick wall, a rock) is free space that nothing outside can reach. A point near such a surface
 * may snap into it, and a search from there finds nothing. nb_voxel_fill_enclosed makes every free voxel solid
 * that a flood through free voxels (face neighbours) from outside the grid, and from the caller's seeds, does not
 * reach. A scanline flood: runs of free voxels along x, breadth-first over a ring buffer that grows with the
 * front, with the voxels reached in a bitset of the grid's size; rows are scanned a word at a time. */
#include "nb_internal.h"

typedef struct fill_queue {
    uint32_t* items;
    uint32_t cap, head, count; /* cap is a power of two */
} fill_queue;

static nb_status queue_push(nb_context* ctx, fill_queue* q, uint32_t v)
{
    if (q->count == q->cap) {
        const uint64_t cap = q->cap ? (uint64_t)q->cap * 2 : 4096;
        if (cap > UINT32_MAX || cap * sizeof(uint32_t) > SIZE_MAX)
            return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_voxel_fill_enclosed: out of memory 'front' (%llu)",
                           (unsigned long long)cap);
        uint32_t* grown = (uint32_t*)nb_alloc(ctx, (size_t)cap * sizeof(uint32_t));
        if (!grown)
            return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_voxel_fill_enclosed: out of memory 'front' (%llu)",
                           (unsigned long long)cap);
        for (uint32_t i = 0; i < q->count; ++i) /* unwrap into the new buffer */
            grown[i] = q->items[(q->head + i) & (q->cap - 1)];
        nb_free(ctx, q->items);
        q->items = grown;
        q->cap = (uint32_t)cap;
        q->head = 0;
    }
    q->items[(q->head + q->count++) & (q->cap - 1)] = v;
    return NB_OK;
}

/* Bit ranges [a, b) of a bitset (rows of the grid are contiguous runs of bits). */
static inline int bit_at(const uint32_t* w, uint32_t i) { return (int)((w[i >> 5] >> (i & 31)) & 1u); }

/* The first index in [p, end) whose bit is 0 in both sets, or end. */
static uint32_t next_open(const uint32_t* a, const uint32_t* b, uint32_t p, uint32_t end)
{
    while (p < end) {
        const uint32_t k = p >> 5;
        const uint32_t open = ~(a[k] | b[k]) & (~0u << (p & 31));
        if (open) {
            const uint32_t i = (k << 5) + (uint32_t)__builtin_ctz(open);
            return i < end ? i : end;
        }
        p = (k + 1) << 5;
    }
    return end;
}

/* The first index in [p, end) whose bit is 1, or end. */
static uint32_t next_set(const uint32_t* a, uint32_t p, uint32_t end)
{
    while (p < end) {
        const uint32_t k = p >> 5;
        const uint32_t set = a[k] & (~0u << (p & 31));
        if (set) {
            const uint32_t i = (k << 5) + (uint32_t)__builtin_ctz(set);
            return i < end ? i : end;
        }
        p = (k + 1) << 5;
    }
    return end;
}

/* The start of the run of 0 bits that ends just before p + 1 (p's bit is 0), not before lo. */
static uint32_t run_start(const uint32_t* a, uint32_t p, uint32_t lo)
{
    while (p > lo && !bit_at(a, p - 1)) {
        if (((p - 1) & 31) == 31 && p - 32 >= lo && a[(p - 1) >> 5] == 0) {
            p -= 32; /* a whole free word */
            continue;
        }
        --p;
    }
    return p;
}

static void set_range(uint32_t* w, uint32_t a, uint32_t b)
{
    while (a < b) {
        const uint32_t k = a >> 5, lo = a & 31;
        const uint32_t n = b - a < 32 - lo ? b - a : 32 - lo;
        w[k] |= (n == 32 ? ~0u : ((1u << n) - 1u)) << lo;
        a += n;
    }
}

/* A run of free voxels in one row, reached: [a, b) as voxel indices. Queued as two entries. */
static nb_status reach_run(nb_context* ctx, uint32_t* reached, fill_queue* q, uint32_t a, uint32_t b)
{
    set_range(reached, a, b);
    nb_status st = queue_push(ctx, q, a);
    return st == NB_OK ? queue_push(ctx, q, b) : st;
}

/* Every free, unreached run of row [r0, r0 + len) that overlaps [r0 + x0, r0 + x1): reached, whole. */
static nb_status reach_overlapping(nb_context* ctx, const uint32_t* words, uint32_t* reached, fill_queue* q, uint32_t r0,
                                   uint32_t len, uint32_t x0, uint32_t x1)
{
    uint32_t p = r0 + x0;
    const uint32_t stop = r0 + x1, end = r0 + len;
    while ((p = next_open(words, reached, p, stop)) < stop) {
        const uint32_t a = run_start(words, p, r0), b = next_set(words, p, end);
        nb_status st = reach_run(ctx, reached, q, a, b);
        if (st != NB_OK)
            return st;
        p = b;
    }
    return NB_OK;
}

nb_status nb_voxel_fill_enclosed(nb_context* ctx, uint32_t* words, const int32_t dims[3], const int32_t* seeds,
                                 uint32_t seed_count, uint64_t* filled)
{
    static const char* fn = "nb_voxel_fill_enclosed";
    if (filled)
        *filled = 0;
    if (!words || !dims)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !words ? "words" : "dims");
    if (seed_count && !seeds)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: seeds is NULL but seed_count is %u", fn, seed_count);
    for (int k = 0; k < 3; ++k)
        if (dims[k] < 1)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: dims[%d] must be >= 1 (got %d)", fn, k, dims[k]);
    const uint64_t n = (uint64_t)dims[0] * (uint64_t)dims[1] * (uint64_t)dims[2];
    if (n >= (1ull << 32))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: grid %d x %d x %d has 2^32 voxels or more", fn, dims[0], dims[1],
                       dims[2]);
    const uint32_t dx = (uint32_t)dims[0], dy = (uint32_t)dims[1], dz = (uint32_t)dims[2];
    const uint32_t slice = dx * dz, nwords = (uint32_t)((n + 31) / 32);
    nb_status st = NB_OK;
    fill_queue q = { NULL, 0, 0, 0 };
    uint32_t* reached = (uint32_t*)nb_calloc(ctx, nwords, sizeof(uint32_t));
    if (!reached)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'reached' (%u words)", fn, nwords);

    /* The outside of the grid is free space: every free voxel on its six faces is reached from it (whole rows on
     * the y and z faces, the two ends of every other row). Flooding then goes run by run: a reached run of free
     * voxels along x reaches every free run overlapping it in the four rows beside it (y and z +- 1). */
    for (uint32_t y = 0; y < dy && st == NB_OK; ++y)
        for (uint32_t z = 0; z < dz && st == NB_OK; ++z) {
            const uint32_t row = y * slice + z * dx;
            if (y == 0 || y == dy - 1 || z == 0 || z == dz - 1)
                st = reach_overlapping(ctx, words, reached, &q, row, dx, 0, dx);
            else {
                st = reach_overlapping(ctx, words, reached, &q, row, dx, 0, 1);
                if (st == NB_OK)
                    st = reach_overlapping(ctx, words, reached, &q, row, dx, dx - 1, dx);
            }
        }
    for (uint32_t s = 0; s < seed_count && st == NB_OK; ++s) {
        const int32_t* p = seeds + 3 * (size_t)s;
        if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[0] >= dims[0] || p[1] >= dims[1] || p[2] >= dims[2]) {
            st = nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: seed %u (%d, %d, %d) is outside the grid %d x %d x %d", fn, s,
                         p[0], p[1], p[2], dims[0], dims[1], dims[2]);
            break;
        }
        const uint32_t row = (uint32_t)p[1] * slice + (uint32_t)p[2] * dx;
        st = reach_overlapping(ctx, words, reached, &q, row, dx, (uint32_t)p[0], (uint32_t)p[0] + 1);
    }
    while (q.count && st == NB_OK) {
        const uint32_t a = q.items[q.head], b = q.items[(q.head + 1) & (q.cap - 1)];
        q.head = (q.head + 2) & (q.cap - 1);
        q.count -= 2;
        const uint32_t row = a - a % dx, z = (a / dx) % dz, y = a / slice;
        const uint32_t x0 = a - row, x1 = b - row;
        if (z > 0)
            st = reach_overlapping(ctx, words, reached, &q, row - dx, dx, x0, x1);
        if (st == NB_OK && z + 1 < dz)
            st = reach_overlapping(ctx, words, reached, &q, row + dx, dx, x0, x1);
        if (st == NB_OK && y > 0)
            st = reach_overlapping(ctx, words, reached, &q, row - slice, dx, x0, x1);
        if (st == NB_OK && y + 1 < dy)
            st = reach_overlapping(ctx, words, reached, &q, row + slice, dx, x0, x1);
    }
    if (st != NB_OK)
        goto cleanup; /* words untouched */

    /* Free and not reached: enclosed. The last word's bits past the grid stay 0. */
    uint64_t count = 0;
    for (uint32_t w = 0; w < nwords; ++w) {
        uint32_t enclosed = ~(words[w] | reached[w]);
        if (w == nwords - 1 && (n & 31))
            enclosed &= (1u << (n & 31)) - 1u;
        for (uint32_t b = enclosed; b; b &= b - 1)
            ++count;
        words[w] |= enclosed;
    }
    if (filled)
        *filled = count;

cleanup:
    nb_free(ctx, q.items);
    nb_free(ctx, reached);
    return st;
}
