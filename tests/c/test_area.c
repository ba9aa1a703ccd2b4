/* Erosion by agent radius, area volumes (box, cylinder, convex) and the median area filter. */
#include "navbake.h"
#include "nbtest.h"
#include "nbtest_level.h"

static nb_context* ctx;
static nb_heightfield* g_hf;

/* A flat n x n walkable floor (floor at 5 cells = 1.0 world), cells 0.3 x 0.2. */
static nb_compact_heightfield* flat_floor(int n)
{
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)n * 0.3f, 4.0f, (float)n * 0.3f };
    CHECK_INT(nb_heightfield_create(ctx, n, n, bmin, bmax, 0.3f, 0.2f, &g_hf), NB_OK);
    for (int z = 0; z < n; ++z)
        for (int x = 0; x < n; ++x)
            nb_heightfield_add_span(ctx, g_hf, x, z, 0, 5, NB_WALKABLE_AREA, 0);
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, g_hf, &chf), NB_OK);
    nb_heightfield_destroy(ctx, g_hf);
    g_hf = NULL;
    return chf;
}

static uint8_t area_at(const nb_compact_heightfield* chf, int x, int z)
{
    return chf->areas[chf->cells[x + z * chf->width].index];
}

/* A polygon prism from y 0 to 2 (the floor lies at 1.0). */
static nb_volume prism(const float* verts, uint32_t n, uint8_t area)
{
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_CONVEX;
    v.area = area;
    v.verts = verts;
    v.vert_count = n;
    v.ymin = 0.0f;
    v.ymax = 2.0f;
    return v;
}

static void test_erosion_shrinks_square_by_radius(void)
{
    for (int r = 1; r <= 4; ++r) {
        nb_compact_heightfield* chf = flat_floor(20);
        CHECK_INT(nb_erode_walkable_area(ctx, r, chf), NB_OK);
        int walkable = 0;
        for (int z = 0; z < 20; ++z)
            for (int x = 0; x < 20; ++x) {
                const int inside = x >= r && x < 20 - r && z >= r && z < 20 - r;
                CHECK_INT(area_at(chf, x, z) != NB_NULL_AREA, inside);
                walkable += area_at(chf, x, z) != NB_NULL_AREA;
            }
        CHECK_INT(walkable, (20 - 2 * r) * (20 - 2 * r));
        nb_compact_heightfield_destroy(ctx, chf);
    }
}

static void test_erosion_around_a_hole(void)
{
    /* An unwalkable cell in the middle erodes a ring of radius r around it (chamfer: a diamond-ish ring). */
    nb_compact_heightfield* chf = flat_floor(21);
    chf->areas[chf->cells[10 + 10 * 21].index] = NB_NULL_AREA;
    CHECK_INT(nb_erode_walkable_area(ctx, 1, chf), NB_OK);
    /* radius 1: cells at chamfer distance < 2 from the hole: the hole itself and its 4 straight neighbours */
    CHECK_INT(area_at(chf, 10, 10), NB_NULL_AREA);
    CHECK_INT(area_at(chf, 9, 10), NB_NULL_AREA);
    CHECK_INT(area_at(chf, 10, 11), NB_NULL_AREA);
    CHECK_INT(area_at(chf, 9, 9), NB_WALKABLE_AREA); /* diagonal: distance 3 >= 2 */
    CHECK_INT(area_at(chf, 8, 10), NB_WALKABLE_AREA);
    CHECK_INT(nb_erode_walkable_area(ctx, 0, chf), NB_OK);
    CHECK_STATUS(ctx, nb_erode_walkable_area(ctx, 200, chf), NB_ERR_INVALID_ARG, "radius");
    CHECK_STATUS(ctx, nb_erode_walkable_area(ctx, 1, NULL), NB_ERR_NULL_ARG, "chf");
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_box_volume_marks_inside_only(void)
{
    nb_compact_heightfield* chf = flat_floor(20);
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_BOX;
    v.area = 5;
    /* cell centres (x + 0.5) * 0.3 inside [1.0, 2.0]: x = 3..6; floor y = 1.0 inside [0.5, 1.5] */
    const float bmin[3] = { 1.0f, 0.5f, 1.0f }, bmax[3] = { 2.0f, 1.5f, 2.0f };
    memcpy(v.bmin, bmin, sizeof(bmin));
    memcpy(v.bmax, bmax, sizeof(bmax));
    CHECK_INT(nb_mark_volume(ctx, &v, chf), NB_OK);
    for (int z = 0; z < 20; ++z)
        for (int x = 0; x < 20; ++x) {
            const int inside = x >= 3 && x <= 6 && z >= 3 && z <= 6;
            CHECK_INT(area_at(chf, x, z), inside ? 5 : NB_WALKABLE_AREA);
        }
    /* A box above the floor marks nothing. */
    v.area = 7;
    v.bmin[1] = 1.2f;
    v.bmax[1] = 3.0f;
    CHECK_INT(nb_mark_volume(ctx, &v, chf), NB_OK);
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK(chf->areas[i] != 7);
    /* Area 0 carves a no-go zone. */
    v.area = 0;
    v.bmin[1] = 0.0f;
    v.bmin[0] = v.bmin[2] = -5.0f;
    v.bmax[0] = v.bmax[2] = 0.5f; /* centres 0.15 and 0.45 */
    CHECK_INT(nb_mark_volume(ctx, &v, chf), NB_OK);
    CHECK_INT(area_at(chf, 1, 1), NB_NULL_AREA);
    CHECK_INT(area_at(chf, 2, 1), NB_WALKABLE_AREA);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_cylinder_and_convex_volumes(void)
{
    nb_compact_heightfield* chf = flat_floor(20);
    nb_volume c;
    memset(&c, 0, sizeof(c));
    c.type = NB_VOLUME_CYLINDER;
    c.area = 3;
    c.center[0] = 3.0f;
    c.center[1] = 0.0f;
    c.center[2] = 3.0f;
    c.radius = 0.8f;
    c.height = 2.0f;
    CHECK_INT(nb_mark_volume(ctx, &c, chf), NB_OK);
    const float tri[9] = { 0.2f, 0, 4.0f, 1.2f, 0, 5.9f, 2.2f, 0, 4.0f };
    nb_volume p = prism(tri, 3, 4);
    CHECK_INT(nb_mark_volume(ctx, &p, chf), NB_OK);
    int n3 = 0, n4 = 0;
    for (int z = 0; z < 20; ++z)
        for (int x = 0; x < 20; ++x) {
            const float px = (x + 0.5f) * 0.3f, pz = (z + 0.5f) * 0.3f;
            const int in_cyl = (px - 3.0f) * (px - 3.0f) + (pz - 3.0f) * (pz - 3.0f) <= 0.64f;
            /* inside the triangle: above the base z = 4 and under both slanted sides */
            const int in_tri = pz > 4.0f && (pz - 4.0f) < (px - 0.2f) * 1.9f && (pz - 4.0f) < (2.2f - px) * 1.9f;
            const uint8_t a = area_at(chf, x, z);
            CHECK_INT(a, in_tri ? 4 : in_cyl ? 3 : NB_WALKABLE_AREA);
            n3 += a == 3;
            n4 += a == 4;
        }
    CHECK(n3 > 20 && n3 < 30); /* ~ pi * 0.8^2 / 0.09 = 22 cells */
    CHECK(n4 > 8);
    nb_compact_heightfield_destroy(ctx, chf);
}

/* The "convex" volume takes any simple polygon: an L marks its notch-free part only; a bow-tie marks its two
 * lobes (even-odd) and not the strip beside the crossing. Cell centres are (x + 0.5) * 0.3. */
static void test_polygon_volume_need_not_be_convex(void)
{
    nb_compact_heightfield* chf = flat_floor(20);
    /* L: [0.6, 3.6] x [0.6, 1.8] plus [0.6, 1.8] x [1.8, 3.6] */
    const float ell[18] = { 0.6f, 0, 0.6f, 3.6f, 0, 0.6f, 3.6f, 0, 1.8f, 1.8f, 0, 1.8f, 1.8f, 0, 3.6f, 0.6f, 0, 3.6f };
    nb_volume v = prism(ell, 6, 6);
    CHECK_INT(nb_mark_volume(ctx, &v, chf), NB_OK);
    /* bow-tie over x in [3.9, 5.7]: corners (3.9,3.9) (5.7,5.7) (5.7,3.9) (3.9,5.7), crossing at (4.8, 4.8) */
    const float bow[12] = { 3.9f, 0, 3.9f, 5.7f, 0, 5.7f, 5.7f, 0, 3.9f, 3.9f, 0, 5.7f };
    v = prism(bow, 4, 9);
    CHECK_INT(nb_mark_volume(ctx, &v, chf), NB_OK);
    int n6 = 0, n9 = 0;
    for (int z = 0; z < 20; ++z)
        for (int x = 0; x < 20; ++x) {
            const float px = (x + 0.5f) * 0.3f, pz = (z + 0.5f) * 0.3f;
            const int in_l = (px > 0.6f && px < 3.6f && pz > 0.6f && pz < 1.8f) ||
                             (px > 0.6f && px < 1.8f && pz > 0.6f && pz < 3.6f);
            /* the bow-tie's lobes: left and right of the crossing, between the two diagonals */
            const float dx = px - 4.8f, dz = pz - 4.8f;
            const int in_bow = px > 3.9f && px < 5.7f && fabsf(dz) < fabsf(dx);
            const uint8_t a = area_at(chf, x, z);
            n6 += a == 6;
            n9 += a == 9;
            if ((x == z || x + z == 31) && px > 3.9f && px < 5.7f)
                continue; /* centre on a diagonal edge: either side is right */
            CHECK_INT(a, in_l ? 6 : in_bow ? 9 : NB_WALKABLE_AREA);
        }
    CHECK_INT(n6, 10 * 4 + 4 * 6); /* x = 2..11 for z = 2..5, then x = 2..5 for z = 6..11 */
    CHECK(n9 > 8);
    CHECK_INT(area_at(chf, 17, 15), 9); /* centre (5.25, 4.65): right lobe */
    CHECK_INT(area_at(chf, 14, 15), 9); /* (4.35, 4.65): left lobe */
    CHECK_INT(area_at(chf, 16, 18), NB_WALKABLE_AREA); /* (4.95, 5.55): above the crossing, outside */
    nb_compact_heightfield_destroy(ctx, chf);
}

/* A polygon volume with no area (its points in a line) marks nothing (a bake audit: points through cell centres
 * flipped the even-odd test on rounding and carved cells along the line). Lines along x, along z and diagonal, each
 * through cell centres, and the same points with one repeated; a sliver 0.01 wide over the same line still marks
 * the cells whose centres it covers (a thin volume is not nothing). */
static void test_polygon_volume_without_area_marks_nothing(void)
{
    const float c0 = 0.15f, c5 = 0.15f + 5 * 0.3f, c9 = 0.15f + 9 * 0.3f; /* cell centres of columns 0, 5, 9 */
    const float lines[4][12] = {
        { c0, 1, c5, c5, 1, c5, c9, 1, c5 },         /* along x, through row 5's centres */
        { c5, 1, c0, c5, 1, c5, c5, 1, c9 },         /* along z */
        { c0, 1, c0, c5, 1, c5, c9, 1, c9 },         /* diagonal */
        { c0, 1, c0, c9, 1, c9, c9, 1, c9, c0, 1, c0 }, /* two points, each twice */
    };
    for (int k = 0; k < 4; ++k) {
        nb_compact_heightfield* chf = flat_floor(10);
        const nb_volume v = prism(lines[k], k == 3 ? 4 : 3, 7);
        CHECK_INT(nb_mark_volume(ctx, &v, chf), NB_OK);
        int marked = 0;
        for (uint32_t i = 0; i < chf->span_count; ++i)
            marked += chf->areas[i] == 7;
        if (marked)
            fprintf(stderr, "  line %d marked %d cells\n", k, marked);
        CHECK_INT(marked, 0);
        nb_compact_heightfield_destroy(ctx, chf);
    }
    /* the diagonal made a sliver: the centres on it are covered */
    const float a = c0 - 0.1f, b = c9 + 0.1f, w = 0.005f; /* past the first and last centres */
    const float sliver[12] = { a - w, 1, a + w, a + w, 1, a - w, b + w, 1, b - w, b - w, 1, b + w };
    nb_compact_heightfield* chf = flat_floor(10);
    const nb_volume v = prism(sliver, 4, 7);
    CHECK_INT(nb_mark_volume(ctx, &v, chf), NB_OK);
    for (int x = 0; x < 10; ++x)
        CHECK_INT(area_at(chf, x, x), 7);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_volume_errors(void)
{
    nb_compact_heightfield* chf = flat_floor(4);
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_BOX;
    v.area = 64;
    CHECK_STATUS(ctx, nb_mark_volume(ctx, &v, chf), NB_ERR_INVALID_ARG, "area must be 0..63 (got 64)");
    v.area = 1;
    v.bmin[0] = NAN;
    CHECK_STATUS(ctx, nb_mark_volume(ctx, &v, chf), NB_ERR_NONFINITE, "box bounds");
    v.bmin[0] = 2.0f;
    CHECK_STATUS(ctx, nb_mark_volume(ctx, &v, chf), NB_ERR_INVALID_ARG, "bmin[0]");
    v.type = NB_VOLUME_CYLINDER;
    v.radius = -1.0f;
    CHECK_STATUS(ctx, nb_mark_volume(ctx, &v, chf), NB_ERR_INVALID_ARG, "radius");
    v.type = NB_VOLUME_CONVEX;
    CHECK_STATUS(ctx, nb_mark_volume(ctx, &v, chf), NB_ERR_NULL_ARG, "verts");
    const float two[6] = { 0, 0, 0, 1, 0, 1 };
    v.verts = two;
    v.vert_count = 2;
    CHECK_STATUS(ctx, nb_mark_volume(ctx, &v, chf), NB_ERR_INVALID_ARG, ">= 3 vertices");
    v.type = (nb_volume_type)42;
    CHECK_STATUS(ctx, nb_mark_volume(ctx, &v, chf), NB_ERR_INVALID_ARG, "unknown volume type 42");
    CHECK_STATUS(ctx, nb_mark_volume(ctx, NULL, chf), NB_ERR_NULL_ARG, "volume");
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_median_filter(void)
{
    nb_compact_heightfield* chf = flat_floor(10);
    /* a lone speck of area 5 disappears; a 3x3 block of area 6 keeps its centre */
    chf->areas[chf->cells[2 + 2 * 10].index] = 5;
    for (int z = 5; z <= 7; ++z)
        for (int x = 5; x <= 7; ++x)
            chf->areas[chf->cells[x + z * 10].index] = 6;
    CHECK_INT(nb_median_filter_walkable_area(ctx, chf), NB_OK);
    CHECK_INT(area_at(chf, 2, 2), NB_WALKABLE_AREA);
    CHECK_INT(area_at(chf, 6, 6), 6);
    CHECK_INT(area_at(chf, 0, 0), NB_WALKABLE_AREA);
    CHECK_STATUS(ctx, nb_median_filter_walkable_area(ctx, NULL), NB_ERR_NULL_ARG, "chf");
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_out_of_memory(void)
{
    nb_compact_heightfield* chf = flat_floor(8);
    for (long fail = 1; fail <= 2; ++fail) {
        nbt_alloc a = { 0 };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        a.fail_at = a.calls + 1; /* the stage's first allocation */
        CHECK_STATUS(c, fail == 1 ? nb_erode_walkable_area(c, 1, chf) : nb_median_filter_walkable_area(c, chf),
                     NB_ERR_OUT_OF_MEMORY, "out of memory");
        nb_context_destroy(c);
        CHECK_INT(a.live, 0);
    }
    /* nothing was changed by the failed calls */
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK_INT(chf->areas[i], NB_WALKABLE_AREA);
    nb_compact_heightfield_destroy(ctx, chf);
}

/* The erosion as four separate passes, the textbook way (border marking, forward and backward chamfer passes,
 * threshold): the oracle for nb_erode_walkable_area, which fuses them into two. */
static int oracle_link(const nb_compact_heightfield* chf, int x, int z, uint32_t i, int dir, int* nx, int* nz, uint32_t* ni)
{
    const uint32_t layer = (chf->spans[i].con >> (dir * 6)) & 0x3f;
    if (layer == NB_NOT_CONNECTED)
        return 0;
    *nx = x + (dir == 0 ? -1 : dir == 2 ? 1 : 0);
    *nz = z + (dir == 1 ? 1 : dir == 3 ? -1 : 0);
    *ni = chf->cells[*nx + *nz * chf->width].index + layer;
    return 1;
}

/* dist[i] lowered through straight neighbour dir (+2) and, from there, its neighbour dir2 (+3). */
static void oracle_relax(const nb_compact_heightfield* chf, uint8_t* dist, int x, int z, uint32_t i, int dir, int dir2)
{
    int ax, az, bx, bz;
    uint32_t a, b;
    if (!oracle_link(chf, x, z, i, dir, &ax, &az, &a))
        return;
    if (dist[a] + 2 < dist[i])
        dist[i] = (uint8_t)(dist[a] + 2);
    if (oracle_link(chf, ax, az, a, dir2, &bx, &bz, &b) && dist[b] + 3 < dist[i])
        dist[i] = (uint8_t)(dist[b] + 3);
}

static void oracle_erode(nb_compact_heightfield* chf, int radius)
{
    const int w = chf->width, h = chf->height;
    uint8_t* dist = (uint8_t*)malloc(chf->span_count);
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x)
            for (uint32_t i = chf->cells[x + z * w].index; i < chf->cells[x + z * w].index + chf->cells[x + z * w].count; ++i) {
                int linked = 0, nx, nz;
                uint32_t n;
                for (int dir = 0; dir < 4; ++dir)
                    linked += oracle_link(chf, x, z, i, dir, &nx, &nz, &n) && chf->areas[n] != NB_NULL_AREA;
                dist[i] = chf->areas[i] != NB_NULL_AREA && linked == 4 ? 255 : 0;
            }
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x)
            for (uint32_t i = chf->cells[x + z * w].index; i < chf->cells[x + z * w].index + chf->cells[x + z * w].count; ++i) {
                oracle_relax(chf, dist, x, z, i, 0, 3);
                oracle_relax(chf, dist, x, z, i, 3, 2);
            }
    for (int z = h - 1; z >= 0; --z)
        for (int x = w - 1; x >= 0; --x)
            for (uint32_t i = chf->cells[x + z * w].index; i < chf->cells[x + z * w].index + chf->cells[x + z * w].count; ++i) {
                oracle_relax(chf, dist, x, z, i, 2, 1);
                oracle_relax(chf, dist, x, z, i, 1, 0);
            }
    for (uint32_t i = 0; i < chf->span_count; ++i)
        if (dist[i] < radius * 2)
            chf->areas[i] = NB_NULL_AREA;
    free(dist);
}

static void test_erosion_matches_the_four_pass_oracle(void)
{
    const char* levels[] = { "dungeon.obj", "nav_test.obj" };
    for (int l = 0; l < 2; ++l) {
        nb_bake_result res;
        nb_compact_heightfield* chf =
            nbt_level_bake(ctx, levels[l], NB_STAGE_COMPACT, NB_KEEP_COMPACT, &res) == 0 ? res.compact : NULL;
        if (chf) {
            const uint32_t n = chf->span_count;
            uint8_t* start = (uint8_t*)malloc(n);
            uint8_t* want = (uint8_t*)malloc(n);
            /* a few spans unwalkable (holes inside the floor) as well as the real borders */
            for (uint32_t i = 0; i < n; i += 97)
                chf->areas[i] = NB_NULL_AREA;
            memcpy(start, chf->areas, n);
            for (int radius = 1; radius <= 12; radius += 5) {
                memcpy(chf->areas, start, n);
                oracle_erode(chf, radius);
                memcpy(want, chf->areas, n);
                memcpy(chf->areas, start, n);
                CHECK_INT(nb_erode_walkable_area(ctx, radius, chf), NB_OK);
                int differ = 0, kept = 0;
                for (uint32_t i = 0; i < n; ++i) {
                    differ += chf->areas[i] != want[i];
                    kept += want[i] != NB_NULL_AREA;
                }
                if (differ)
                    fprintf(stderr, "  %s radius %d: %d spans differ\n", levels[l], radius, differ);
                CHECK_INT(differ, 0);
                CHECK(kept > 0 && kept < (int)n); /* some eroded, some left */
            }
            free(start);
            free(want);
        }
        nb_bake_result_release(ctx, &res);
    }
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_erosion_shrinks_square_by_radius);
    RUN(test_erosion_around_a_hole);
    RUN(test_box_volume_marks_inside_only);
    RUN(test_cylinder_and_convex_volumes);
    RUN(test_polygon_volume_need_not_be_convex);
    RUN(test_polygon_volume_without_area_marks_nothing);
    RUN(test_volume_errors);
    RUN(test_median_filter);
    RUN(test_out_of_memory);
    RUN(test_erosion_matches_the_four_pass_oracle);
    nb_context_destroy(ctx);
    return nbt_finish("test_area");
}
