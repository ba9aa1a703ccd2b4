/* Distance field: chamfer distances to region borders, the box blur, borders between areas and storeys, real
 * levels, out-of-memory paths and argument checks. */
#include "navbake.h"
#include "nbtest_level.h"
#include "obj.h"

#include <stdint.h>

static nb_context* ctx;

/* ---- synthetic floors ----
 * One string per row z, one character per column x: '.' no span, '#' a walkable floor at height 5,
 * 'a' the same floor with area 5, '^' a floor 20 cells higher (a step nobody can climb). */

static nb_compact_heightfield* make_chf(nb_context* c, const char* const* rows, int nrows)
{
    const int w = (int)strlen(rows[0]), h = nrows;
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)w * 0.3f, 20.0f, (float)h * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(c, w, h, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    for (int z = 0; z < h; ++z) {
        CHECK_INT(strlen(rows[z]), w);
        for (int x = 0; x < w; ++x) {
            const char ch = rows[z][x];
            if (ch == '#')
                CHECK_INT(nb_heightfield_add_span(c, hf, x, z, 0, 5, NB_WALKABLE_AREA, 1), NB_OK);
            else if (ch == 'a')
                CHECK_INT(nb_heightfield_add_span(c, hf, x, z, 0, 5, 5, 1), NB_OK);
            else if (ch == '^')
                CHECK_INT(nb_heightfield_add_span(c, hf, x, z, 0, 25, NB_WALKABLE_AREA, 1), NB_OK);
        }
    }
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(c, 10, 4, hf, &chf), NB_OK);
    nb_heightfield_destroy(c, hf);
    return chf;
}

/* A filled w x h rectangle (at most 32 x 32). */
static nb_compact_heightfield* make_rect(nb_context* c, int w, int h)
{
    char grid[32][33];
    const char* rows[32];
    for (int z = 0; z < h; ++z) {
        memset(grid[z], '#', (size_t)w);
        grid[z][w] = 0;
        rows[z] = grid[z];
    }
    return make_chf(c, rows, h);
}

/* Distance of the single span of column (x, z). */
static int dist_at(const nb_compact_heightfield* chf, int x, int z)
{
    const nb_compact_cell c = chf->cells[x + z * chf->width];
    CHECK_INT(c.count, 1);
    return chf->dist[c.index];
}

static int max_dist(const nb_compact_heightfield* chf)
{
    int m = 0;
    for (uint32_t i = 0; i < chf->span_count; ++i)
        m = chf->dist[i] > m ? chf->dist[i] : m;
    return m;
}

/* The blurred field expected from a raw one (row-major, w wide) on a single storey: every span farther than one
 * straight step (2) from a border takes the rounded mean of its 3x3 block, which must lie inside the grid;
 * columns without a span are skipped. */
static void check_blur_of(const nb_compact_heightfield* chf, const int* raw, int w, int h)
{
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x) {
            if (chf->cells[x + z * w].count == 0)
                continue; /* a hole */
            int expect = raw[x + z * w];
            if (expect > 2) {
                int sum = 0;
                for (int dz = -1; dz <= 1; ++dz)
                    for (int dx = -1; dx <= 1; ++dx)
                        sum += raw[(x + dx) + (z + dz) * w];
                expect = (sum + 5) / 9;
            }
            CHECK_INT(dist_at(chf, x, z), expect);
        }
}

static void test_square_matches_analytic_chamfer_and_blur(void)
{
    /* In a full w x h rectangle the border is the outer ring (no links beyond the grid), and the chamfer
     * distance is twice the number of straight steps to the nearest side. */
    const int w = 13, h = 11;
    nb_compact_heightfield* chf = make_rect(ctx, w, h);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    CHECK(chf->dist != NULL);
    int raw[11 * 13];
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x) {
            int m = x < z ? x : z;
            m = w - 1 - x < m ? w - 1 - x : m;
            m = h - 1 - z < m ? h - 1 - z : m;
            raw[x + z * w] = 2 * m;
        }
    check_blur_of(chf, raw, w, h);
    /* The centre (6, 5) lies 5 straight steps from the nearest side (10 before the blur); in its 3x3 block the
     * row z = 5 holds three 10s and the rows z = 4 and 6 hold 8s. A span two steps in (4) is blurred too. */
    CHECK_INT(dist_at(chf, 6, 5), (3 * 10 + 6 * 8 + 5) / 9);
    CHECK_INT(dist_at(chf, 2, 5), (3 * 4 + 3 * 2 + 3 * 6 + 5) / 9);
    /* max_distance is the largest distance before the blur: the centre's 10, above anything blurred. */
    CHECK_INT(chf->max_distance, 10);
    CHECK(chf->max_distance > max_dist(chf));
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_hole_gives_diagonal_steps(void)
{
    /* A missing column in the middle of a floor: its four neighbours are borders, and a span a knight's move
     * away reaches one of them diagonally (3). Before the blur a span lies at the chamfer distance (2 per
     * straight step, 3 per diagonal) of the nearest of them or of the outer ring; the values up to 2 are kept
     * as they are, the rest blurred. */
    static const char* const rows[] = {
        "#############", "#############", "#############", "#############", "#############", "#############",
        "######.######", "#############", "#############", "#############", "#############", "#############",
        "#############",
    };
    nb_compact_heightfield* chf = make_chf(ctx, rows, 13);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    CHECK_INT(dist_at(chf, 7, 6), 0); /* beside the hole */
    CHECK_INT(dist_at(chf, 6, 5), 0);
    CHECK_INT(dist_at(chf, 7, 5), 2); /* diagonal to the hole, straight next to a border span */
    CHECK_INT(dist_at(chf, 8, 6), 2);
    enum { N = 13 };
    static const int border[4][2] = { { 6, 5 }, { 5, 6 }, { 7, 6 }, { 6, 7 } };
    int raw[N * N];
    for (int z = 0; z < N; ++z)
        for (int x = 0; x < N; ++x) {
            int m = x < z ? x : z;
            m = N - 1 - x < m ? N - 1 - x : m;
            m = N - 1 - z < m ? N - 1 - z : m;
            int d = 2 * m;
            for (int b = 0; b < 4; ++b) {
                const int dx = abs(x - border[b][0]), dz = abs(z - border[b][1]);
                const int lo = dx < dz ? dx : dz, hi = dx < dz ? dz : dx;
                d = 3 * lo + 2 * (hi - lo) < d ? 3 * lo + 2 * (hi - lo) : d;
            }
            raw[x + z * N] = x == 6 && z == 6 ? 0 : d;
        }
    CHECK_INT(raw[8 + 5 * N], 3); /* a knight's move from the hole: one diagonal to (7, 6) */
    CHECK_INT(raw[5 + 8 * N], 3);
    CHECK_INT(raw[9 + 6 * N], 4);
    check_blur_of(chf, raw, N, N);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_area_and_step_boundaries_are_borders(void)
{
    /* Left half area 63, right half area 5; the bottom rows are a floor too high to step onto. */
    static const char* const rows[] = {
        "##########aaaaaaaaaa", "##########aaaaaaaaaa", "##########aaaaaaaaaa", "##########aaaaaaaaaa",
        "##########aaaaaaaaaa", "##########aaaaaaaaaa", "##########aaaaaaaaaa", "##########aaaaaaaaaa",
        "^^^^^^^^^^^^^^^^^^^^", "^^^^^^^^^^^^^^^^^^^^",
    };
    nb_compact_heightfield* chf = make_chf(ctx, rows, 10);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    for (int z = 1; z < 7; ++z) {
        CHECK_INT(dist_at(chf, 9, z), 0);  /* last span of area 63 */
        CHECK_INT(dist_at(chf, 10, z), 0); /* first span of area 5 */
        CHECK_INT(dist_at(chf, 8, z), 2);
        CHECK_INT(dist_at(chf, 11, z), 2);
    }
    for (int x = 0; x < 20; ++x) {
        CHECK_INT(dist_at(chf, x, 7), 0); /* the ledge above the unclimbable step */
        CHECK_INT(dist_at(chf, x, 8), 0); /* and the floor below it */
    }
    /* Each half is 8 rows by 10 columns: the field is symmetric about the area boundary. */
    for (int z = 0; z < 8; ++z)
        for (int x = 0; x < 10; ++x)
            CHECK_INT(dist_at(chf, x, z), dist_at(chf, 19 - x, z));
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_storeys_have_their_own_field(void)
{
    /* A 15 x 15 ground floor and a 7 x 7 balcony 40 cells above its middle: two independent fields. */
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { 4.5f, 20.0f, 4.5f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(ctx, 15, 15, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    for (int z = 0; z < 15; ++z)
        for (int x = 0; x < 15; ++x) {
            nb_heightfield_add_span(ctx, hf, x, z, 0, 5, NB_WALKABLE_AREA, 1);
            if (x >= 4 && x < 11 && z >= 4 && z < 11)
                nb_heightfield_add_span(ctx, hf, x, z, 40, 45, NB_WALKABLE_AREA, 1);
        }
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
    nb_heightfield_destroy(ctx, hf);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    const nb_compact_cell mid = chf->cells[7 + 7 * 15];
    CHECK_INT(mid.count, 2);
    /* Ground: 7 steps from the sides = 14, blurred with eight 12s around it: (14 + 8 * 12 + 5) / 9. */
    CHECK_INT(chf->dist[mid.index], (14 + 8 * 12 + 5) / 9);
    /* Balcony: 3 steps from its edge = 6, with eight 4s around: (6 + 32 + 5) / 9. */
    CHECK_INT(chf->dist[mid.index + 1], (6 + 8 * 4 + 5) / 9);
    CHECK_INT(chf->max_distance, 14); /* the ground's middle, before the blur */
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_rebuild_replaces_and_empty_field(void)
{
    nb_compact_heightfield* chf = make_rect(ctx, 9, 9);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    const int first = dist_at(chf, 4, 4);
    /* Carve the middle out as unwalkable: its own patch, with its own border ring. */
    chf->areas[chf->cells[4 + 4 * 9].index] = NB_NULL_AREA;
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, ""); /* the old field is freed (ASan) */
    CHECK(first > 0);
    CHECK_INT(dist_at(chf, 4, 4), 0);
    CHECK_INT(dist_at(chf, 4, 3), 0);
    /* Before the blur: (2, 2) is two steps from the outer ring (4) and farther from the carved middle's ring. */
    CHECK_INT(chf->max_distance, 4);
    CHECK(chf->max_distance >= max_dist(chf));
    nb_compact_heightfield_destroy(ctx, chf);

    /* No spans at all. */
    static const char* const empty[] = { "....", "...." };
    chf = make_chf(ctx, empty, 2);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    CHECK(chf->dist != NULL);
    CHECK_INT(chf->max_distance, 0);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_real_level_invariants(void)
{
    nb_bake_result res;
    nb_compact_heightfield* chf = nbt_level_compact(ctx, "dungeon.obj", &res);
    if (!chf)
        return;
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    const int w = chf->width;
    int interior = 0, deep = 0;
    for (int z = 0; z < chf->height; ++z)
        for (int x = 0; x < w; ++x) {
            const nb_compact_cell c = chf->cells[x + z * w];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const nb_compact_span* s = &chf->spans[i];
                int same = 0;
                for (int dir = 0; dir < 4; ++dir) {
                    if (nb_span_con(s, dir) == NB_NOT_CONNECTED)
                        continue;
                    const int nx = x + nb_dir_offset_x(dir), nz = z + nb_dir_offset_z(dir);
                    const uint32_t a = chf->cells[nx + nz * w].index + (uint32_t)nb_span_con(s, dir);
                    same += chf->areas[a] == chf->areas[i];
                }
                if (same != 4) {
                    CHECK_INT(chf->dist[i], 0); /* every border span */
                    continue;
                }
                ++interior;
                CHECK(chf->dist[i] >= 2); /* at least one straight step from a border, also after the blur */
                deep += chf->dist[i] > 10;
            }
        }
    CHECK(interior > 1000);
    CHECK(deep > 100);
    /* The largest distance before the blur. A chamfer neighbour is at most 3 lower, so the blur lowers the span
     * that holds the maximum by less than 2: (R + 4 (R - 2) + 4 (R - 3) + 5) / 9 > R - 2. */
    CHECK(chf->max_distance >= max_dist(chf));
    CHECK(chf->max_distance <= max_dist(chf) + 2);
    nb_bake_result_release(ctx, &res);
}

static void test_out_of_memory(void)
{
    int failures = 0;
    for (long fail = 1; fail < 100; ++fail) {
        nbt_alloc a = { 0 };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        CHECK(c != NULL);
        if (!c)
            break;
        nb_compact_heightfield* chf = make_rect(c, 12, 10);
        a.fail_at = a.calls + fail;
        const nb_status st = nb_build_distance_field(c, chf);
        if (st == NB_OK) {
            CHECK(chf->dist != NULL);
            CHECK_INT(chf->max_distance, 8); /* the middle rows of a 12 x 10 floor, 4 steps in */
        } else {
            ++failures;
            CHECK_STATUS(c, st, NB_ERR_OUT_OF_MEMORY, "nb_build_distance_field: out of memory");
            CHECK(chf->dist == NULL); /* untouched on failure */
        }
        nb_compact_heightfield_destroy(c, chf);
        nb_context_destroy(c);
        CHECK_INT(a.live, 0);
        if (st == NB_OK)
            break;
    }
    CHECK_INT(failures, 2); /* the raw field and the blurred one */
}

static void test_arguments(void)
{
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, NULL), NB_ERR_NULL_ARG, "nb_build_distance_field: chf is NULL");
    nb_compact_heightfield* chf = make_rect(ctx, 3, 3);
    CHECK(nb_build_distance_field(NULL, chf) == NB_ERR_NULL_ARG);
    CHECK(chf->dist == NULL);
    nb_compact_heightfield_destroy(ctx, chf);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_square_matches_analytic_chamfer_and_blur);
    RUN(test_hole_gives_diagonal_steps);
    RUN(test_area_and_step_boundaries_are_borders);
    RUN(test_storeys_have_their_own_field);
    RUN(test_rebuild_replaces_and_empty_field);
    RUN(test_real_level_invariants);
    RUN(test_out_of_memory);
    RUN(test_arguments);
    nb_context_destroy(ctx);
    return nbt_finish("test_distance");
}
