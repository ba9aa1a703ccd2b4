/* nb_voxel_fill_enclosed: hollow boxes, leaks, seeds, random grids against a fixpoint reachability computed voxel by
 * voxel, validation and allocation failures. */
#include "navbake.h"
#include "nbtest.h"

#include <stdint.h>

static nb_context* ctx;

typedef struct vg {
    int32_t d[3];
    uint32_t* w;
} vg;

static vg vg_new(int x, int y, int z)
{
    vg g = { { x, y, z }, NULL };
    g.w = (uint32_t*)calloc(((size_t)x * y * z + 31) / 32, sizeof(uint32_t));
    return g;
}

static size_t vg_words(const vg* g) { return ((size_t)g->d[0] * g->d[1] * g->d[2] + 31) / 32; }

static long vg_idx(const vg* g, int x, int y, int z) { return x + (long)g->d[0] * (z + (long)g->d[2] * y); }

static int vg_get(const vg* g, int x, int y, int z)
{
    const long i = vg_idx(g, x, y, z);
    return (int)((g->w[i / 32] >> (i % 32)) & 1u);
}

static void vg_set(vg* g, int x, int y, int z, int on)
{
    const long i = vg_idx(g, x, y, z);
    if (on)
        g->w[i / 32] |= 1u << (i % 32);
    else
        g->w[i / 32] &= ~(1u << (i % 32));
}

/* The shell of the box [x0, x1] x [y0, y1] x [z0, z1]: solid faces, hollow inside. */
static void vg_shell(vg* g, int x0, int x1, int y0, int y1, int z0, int z1)
{
    for (int y = y0; y <= y1; ++y)
        for (int z = z0; z <= z1; ++z)
            for (int x = x0; x <= x1; ++x)
                if (x == x0 || x == x1 || y == y0 || y == y1 || z == z0 || z == z1)
                    vg_set(g, x, y, z, 1);
}

static long vg_count(const vg* g)
{
    long n = 0;
    for (int y = 0; y < g->d[1]; ++y)
        for (int z = 0; z < g->d[2]; ++z)
            for (int x = 0; x < g->d[0]; ++x)
                n += vg_get(g, x, y, z);
    return n;
}

static void test_hollow_box_filled(void)
{
    vg g = vg_new(12, 10, 11);
    vg_shell(&g, 2, 8, 1, 7, 3, 9); /* inside: 5 x 5 x 5 */
    const long shell = vg_count(&g);
    uint64_t filled = 0;
    CHECK_INT(nb_voxel_fill_enclosed(ctx, g.w, g.d, NULL, 0, &filled), NB_OK);
    CHECK_INT((int)filled, 125);
    CHECK_INT((int)vg_count(&g), (int)(shell + 125));
    for (int y = 2; y <= 6; ++y)
        for (int z = 4; z <= 8; ++z)
            for (int x = 3; x <= 7; ++x)
                CHECK(vg_get(&g, x, y, z));
    CHECK(!vg_get(&g, 0, 0, 0) && !vg_get(&g, 9, 5, 5)); /* outside stays free */
    /* a second fill finds nothing */
    CHECK_INT(nb_voxel_fill_enclosed(ctx, g.w, g.d, NULL, 0, &filled), NB_OK);
    CHECK_INT((int)filled, 0);
    free(g.w);
}

/* One face voxel open: the inside is reached; an opening only along an edge (diagonal) is no opening. */
static void test_leaks_and_diagonals(void)
{
    vg g = vg_new(10, 10, 10);
    vg_shell(&g, 2, 7, 2, 7, 2, 7);
    vg_set(&g, 7, 4, 4, 0); /* a hole in the +x face */
    const long before = vg_count(&g);
    uint64_t filled = 1;
    CHECK_INT(nb_voxel_fill_enclosed(ctx, g.w, g.d, NULL, 0, &filled), NB_OK);
    CHECK_INT((int)filled, 0);
    CHECK_INT((int)vg_count(&g), (int)before);
    free(g.w);

    /* two cells touching only along an edge: the one shut in is filled */
    vg h = vg_new(9, 3, 9);
    for (int z = 0; z < 9; ++z)
        for (int x = 0; x < 9; ++x) {
            vg_set(&h, x, 0, z, 1);
            vg_set(&h, x, 2, z, 1);
        }
    /* a closed 3 x 3 ring of walls around (4, 1, 4), whose corner (5, 1, 5) is open to the outside only
     * diagonally: (5,1,5)'s face neighbours (6,1,5) and (5,1,6) are walls */
    for (int k = 3; k <= 5; ++k) {
        vg_set(&h, k, 1, 3, 1);
        vg_set(&h, 3, 1, k, 1);
    }
    vg_set(&h, 5, 1, 4, 1);
    vg_set(&h, 4, 1, 5, 1);
    vg_set(&h, 6, 1, 5, 1);
    vg_set(&h, 5, 1, 6, 1);
    CHECK_INT(nb_voxel_fill_enclosed(ctx, h.w, h.d, NULL, 0, &filled), NB_OK);
    CHECK_INT((int)filled, 2); /* (4, 1, 4) and (5, 1, 5) */
    CHECK(vg_get(&h, 4, 1, 4) && vg_get(&h, 5, 1, 5));
    CHECK(!vg_get(&h, 6, 1, 6) && !vg_get(&h, 1, 1, 1));
    free(h.w);
}

/* A level closed all round (its walls are the grid's faces): everything inside is enclosed, unless a seed says
 * where the open space is; a seed in one of two closed rooms keeps that one. */
static void test_seeds(void)
{
    vg g = vg_new(12, 6, 8);
    vg_shell(&g, 0, 11, 0, 5, 0, 7);
    for (int y = 0; y < 6; ++y)
        for (int z = 0; z < 8; ++z)
            vg_set(&g, 6, y, z, 1); /* a wall between two rooms */
    vg a = vg_new(12, 6, 8);
    memcpy(a.w, g.w, vg_words(&g) * 4);
    uint64_t filled = 0;
    CHECK_INT(nb_voxel_fill_enclosed(ctx, a.w, a.d, NULL, 0, &filled), NB_OK);
    CHECK_INT((int)filled, (5 + 4) * 4 * 6); /* both rooms: x 1..5 and 7..10, y 1..4, z 1..6 */
    memcpy(a.w, g.w, vg_words(&g) * 4);
    const int32_t seeds[6] = { 2, 2, 3, 6, 2, 3 }; /* room one, and the wall (solid: reaches nothing) */
    CHECK_INT(nb_voxel_fill_enclosed(ctx, a.w, a.d, seeds, 2, &filled), NB_OK);
    CHECK_INT((int)filled, 4 * 4 * 6); /* the other room */
    CHECK(!vg_get(&a, 3, 3, 3) && vg_get(&a, 9, 3, 3));
    /* a seed outside the grid: refused by name, nothing changed */
    memcpy(a.w, g.w, vg_words(&g) * 4);
    const int32_t bad[6] = { 2, 2, 3, 2, 6, 3 };
    CHECK_STATUS(ctx, nb_voxel_fill_enclosed(ctx, a.w, a.d, bad, 2, &filled), NB_ERR_INVALID_ARG,
                 "nb_voxel_fill_enclosed: seed 1 (2, 6, 3) is outside the grid 12 x 6 x 8");
    CHECK(!memcmp(a.w, g.w, vg_words(&g) * 4));
    CHECK_INT((int)filled, 0);
    free(a.w);
    free(g.w);
}

/* Reachability computed differently: sweep every voxel, mark it when a face neighbour is marked or it lies on the
 * grid's faces, until nothing changes. */
static void reference_fill(vg* g, const int32_t* seeds, int nseeds)
{
    const int X = g->d[0], Y = g->d[1], Z = g->d[2];
    unsigned char* r = (unsigned char*)calloc((size_t)X * Y * Z, 1);
    for (int s = 0; s < nseeds; ++s)
        if (!vg_get(g, seeds[3 * s], seeds[3 * s + 1], seeds[3 * s + 2]))
            r[vg_idx(g, seeds[3 * s], seeds[3 * s + 1], seeds[3 * s + 2])] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int y = 0; y < Y; ++y)
            for (int z = 0; z < Z; ++z)
                for (int x = 0; x < X; ++x) {
                    const long i = vg_idx(g, x, y, z);
                    if (r[i] || vg_get(g, x, y, z))
                        continue;
                    int on = x == 0 || y == 0 || z == 0 || x == X - 1 || y == Y - 1 || z == Z - 1;
                    on = on || (x > 0 && r[i - 1]) || (x < X - 1 && r[i + 1]) || (z > 0 && r[i - X]) ||
                         (z < Z - 1 && r[i + X]) || (y > 0 && r[i - (long)X * Z]) || (y < Y - 1 && r[i + (long)X * Z]);
                    if (on) {
                        r[i] = 1;
                        changed = 1;
                    }
                }
    }
    for (int y = 0; y < Y; ++y)
        for (int z = 0; z < Z; ++z)
            for (int x = 0; x < X; ++x)
                if (!r[vg_idx(g, x, y, z)])
                    vg_set(g, x, y, z, 1);
    free(r);
}

static void test_random_against_reference(void)
{
    uint32_t rng = 99;
    int runs = 0, some = 0;
    for (int t = 0; t < 60; ++t) {
        vg g = vg_new(3 + (int)(nbt_rand(&rng) % 14), 1 + (int)(nbt_rand(&rng) % 9), 3 + (int)(nbt_rand(&rng) % 14));
        const int density = 20 + (int)(nbt_rand(&rng) % 40);
        for (int y = 0; y < g.d[1]; ++y)
            for (int z = 0; z < g.d[2]; ++z)
                for (int x = 0; x < g.d[0]; ++x)
                    if ((int)(nbt_rand(&rng) % 100) < density)
                        vg_set(&g, x, y, z, 1);
        int32_t seeds[6];
        const int nseeds = (int)(nbt_rand(&rng) % 3);
        for (int s = 0; s < nseeds; ++s)
            for (int k = 0; k < 3; ++k)
                seeds[3 * s + k] = (int32_t)(nbt_rand(&rng) % (uint32_t)g.d[k]);
        vg want = vg_new(g.d[0], g.d[1], g.d[2]);
        memcpy(want.w, g.w, vg_words(&g) * 4);
        reference_fill(&want, seeds, nseeds);
        const long before = vg_count(&g);
        uint64_t filled = 0;
        CHECK_INT(nb_voxel_fill_enclosed(ctx, g.w, g.d, seeds, (uint32_t)nseeds, &filled), NB_OK);
        CHECK(!memcmp(g.w, want.w, vg_words(&g) * 4));
        CHECK_INT((int)filled, (int)(vg_count(&g) - before));
        some += filled > 0;
        ++runs;
        free(g.w);
        free(want.w);
    }
    CHECK(some > 10 && some < runs); /* both outcomes */
}

static void test_validation_and_memory(void)
{
    vg g = vg_new(4, 4, 4);
    vg_shell(&g, 0, 3, 0, 3, 0, 3);
    uint64_t filled = 7;
    int32_t d[3] = { 4, 0, 4 };
    CHECK_STATUS(ctx, nb_voxel_fill_enclosed(ctx, g.w, d, NULL, 0, &filled), NB_ERR_INVALID_ARG, "dims[1] must be >= 1");
    CHECK_INT((int)filled, 0);
    const int32_t huge[3] = { 65536, 65536, 2 };
    CHECK_STATUS(ctx, nb_voxel_fill_enclosed(ctx, g.w, huge, NULL, 0, NULL), NB_ERR_INVALID_ARG, "2^32 voxels");
    CHECK_STATUS(ctx, nb_voxel_fill_enclosed(ctx, NULL, g.d, NULL, 0, NULL), NB_ERR_NULL_ARG, "words is NULL");
    CHECK_STATUS(ctx, nb_voxel_fill_enclosed(ctx, g.w, g.d, NULL, 1, NULL), NB_ERR_NULL_ARG, "seeds is NULL");
    free(g.w);

    /* Every allocation failing in turn (a front big enough to grow the ring buffer twice): clean failures, words
     * unchanged, then the same result as without failures. */
    vg big = vg_new(60, 20, 60);
    vg_shell(&big, 5, 40, 2, 15, 5, 50);
    for (int y = 0; y < 20; ++y) /* thin pillars outside the shell: rows of many short runs, a big front */
        for (int z = 52; z < 60; z += 2)
            for (int x = 0; x < 60; x += 2)
                vg_set(&big, x, y, z, 1);
    vg want = vg_new(60, 20, 60);
    memcpy(want.w, big.w, vg_words(&big) * 4);
    CHECK_INT(nb_voxel_fill_enclosed(ctx, want.w, want.d, NULL, 0, NULL), NB_OK);
    vg work = vg_new(60, 20, 60);
    int failures = 0, ok = 0;
    for (long k = 1; k < 100 && !ok; ++k) {
        nbt_alloc a;
        nb_context* f = nbt_failing_context(&a, k);
        memcpy(work.w, big.w, vg_words(&big) * 4);
        const nb_status st = nb_voxel_fill_enclosed(f, work.w, work.d, NULL, 0, NULL);
        if (st == NB_OK) {
            ok = 1;
            CHECK(!memcmp(work.w, want.w, vg_words(&big) * 4));
        } else {
            ++failures;
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            CHECK(!memcmp(work.w, big.w, vg_words(&big) * 4));
        }
        nb_context_destroy(f);
    }
    CHECK(ok);
    CHECK(failures >= 3); /* the reached set and at least two growths of the front */
    free(big.w);
    free(want.w);
    free(work.w);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_hollow_box_filled);
    RUN(test_leaks_and_diagonals);
    RUN(test_seeds);
    RUN(test_random_against_reference);
    RUN(test_validation_and_memory);
    nb_context_destroy(ctx);
    return nbt_finish("test_voxel_fill");
}
