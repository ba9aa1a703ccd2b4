/* The three heightfield filters: low hanging obstacles, ledges, low ceilings. */
#include "navbake.h"
#include "nbtest.h"
#include "nbtest_level.h"

static nb_context* ctx;

static nb_heightfield* make_hf(int w, int h)
{
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)w * 0.3f, 20.0f, (float)h * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(ctx, w, h, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    return hf;
}

static const nb_span* span_at(const nb_heightfield* hf, int x, int z, int k)
{
    uint32_t s = hf->columns[x + z * hf->width];
    while (s && k--)
        s = hf->spans[s].next;
    return s ? &hf->spans[s] : NULL;
}

static void test_low_ceiling_is_filtered(void)
{
    nb_heightfield* hf = make_hf(3, 1);
    /* column 0: floor at 5, ceiling at 12 -> 7 free cells < agent height 10: filtered */
    nb_heightfield_add_span(ctx, hf, 0, 0, 0, 5, NB_WALKABLE_AREA, 0);
    nb_heightfield_add_span(ctx, hf, 0, 0, 12, 20, NB_NULL_AREA, 0);
    /* column 1: ceiling exactly agent height above: kept */
    nb_heightfield_add_span(ctx, hf, 1, 0, 0, 5, NB_WALKABLE_AREA, 0);
    nb_heightfield_add_span(ctx, hf, 1, 0, 15, 20, NB_NULL_AREA, 0);
    /* column 2: open sky: kept */
    nb_heightfield_add_span(ctx, hf, 2, 0, 0, 5, NB_WALKABLE_AREA, 0);
    nb_filter_low_height_spans(10, hf);
    CHECK_INT(span_at(hf, 0, 0, 0)->area, NB_NULL_AREA);
    CHECK_INT(span_at(hf, 1, 0, 0)->area, NB_WALKABLE_AREA);
    CHECK_INT(span_at(hf, 2, 0, 0)->area, NB_WALKABLE_AREA);
    CHECK_INT(hf->span_count, 5); /* filters never remove spans */
    nb_heightfield_destroy(ctx, hf);
}

static void test_ledges(void)
{
    /* 7x7 floor at height 5; the middle 3x3 raised. A raise within climb is no ledge; above climb, the
     * raised block's rim becomes a ledge, its centre and the floor around it stay walkable. The grid edge is
     * a drop into the void. */
    for (int raise = 3; raise <= 7; raise += 4) {
        nb_heightfield* hf = make_hf(7, 7);
        for (int z = 0; z < 7; ++z)
            for (int x = 0; x < 7; ++x) {
                const int block = x >= 2 && x <= 4 && z >= 2 && z <= 4;
                nb_heightfield_add_span(ctx, hf, x, z, 0, (uint32_t)(5 + (block ? raise : 0)), NB_WALKABLE_AREA, 0);
            }
        nb_filter_ledge_spans(10, 4, hf);
        for (int z = 0; z < 7; ++z)
            for (int x = 0; x < 7; ++x) {
                const int edge = x == 0 || z == 0 || x == 6 || z == 6;
                const int rim = x >= 2 && x <= 4 && z >= 2 && z <= 4 && !(x == 3 && z == 3);
                int walkable = !edge;
                if (raise > 4 && rim)
                    walkable = 0;
                CHECK_INT(span_at(hf, x, z, 0)->area != NB_NULL_AREA, walkable);
            }
        nb_heightfield_destroy(ctx, hf);
    }
}

static void test_ledge_ignores_blocked_neighbours(void)
{
    /* A deep pit next to the span does not count when a low ceiling blocks the way into it. */
    nb_heightfield* hf = make_hf(3, 3);
    for (int z = 0; z < 3; ++z)
        for (int x = 0; x < 3; ++x)
            nb_heightfield_add_span(ctx, hf, x, z, 0, 20, NB_WALKABLE_AREA, 0);
    /* column (2,1): pit floor at 2 with a solid slab from 4 up to 19 above it: the gap from our floor (20)
     * down is closed by the slab top at 19 ... the open space between 2 and 4 is 2 cells, too low to pass */
    hf->columns[2 + 1 * 3] = 0;
    hf->span_count--;
    nb_heightfield_add_span(ctx, hf, 2, 1, 0, 2, NB_WALKABLE_AREA, 0);
    nb_heightfield_add_span(ctx, hf, 2, 1, 4, 19, NB_NULL_AREA, 0);
    nb_filter_ledge_spans(10, 4, hf);
    CHECK_INT(span_at(hf, 1, 1, 0)->area, NB_WALKABLE_AREA);
    nb_heightfield_destroy(ctx, hf);
}

static void test_low_hanging_obstacles(void)
{
    nb_heightfield* hf = make_hf(3, 1);
    /* curb: unwalkable top 3 above a walkable top -> walkable with the floor's area */
    nb_heightfield_add_span(ctx, hf, 0, 0, 0, 5, 9, 0);
    nb_heightfield_add_span(ctx, hf, 0, 0, 6, 8, NB_NULL_AREA, 0);
    /* a second small step on top of the first does not chain: it was not walkable originally */
    nb_heightfield_add_span(ctx, hf, 0, 0, 9, 11, NB_NULL_AREA, 0);
    /* too high a step stays unwalkable */
    nb_heightfield_add_span(ctx, hf, 1, 0, 0, 5, NB_WALKABLE_AREA, 0);
    nb_heightfield_add_span(ctx, hf, 1, 0, 6, 10, NB_NULL_AREA, 0);
    nb_filter_low_hanging_obstacles(4, hf);
    CHECK_INT(span_at(hf, 0, 0, 1)->area, 9);
    CHECK_INT(span_at(hf, 0, 0, 2)->area, NB_NULL_AREA);
    CHECK_INT(span_at(hf, 1, 0, 1)->area, NB_NULL_AREA);
    nb_heightfield_destroy(ctx, hf);
}

/* nb_filter_walkable (one pass, what the bake runs) must mark exactly what the three filters do one after the
 * other. a and b hold the same spans; returns how many walkable spans are left. */
static int check_fused_equals_sequential(nb_heightfield* a, nb_heightfield* b, int height, int climb, const char* what)
{
    nb_filter_low_hanging_obstacles(climb, a);
    nb_filter_ledge_spans(height, climb, a);
    nb_filter_low_height_spans(height, a);
    nb_filter_walkable(height, climb, b);
    int walkable = 0, differ = 0;
    for (int c = 0; c < a->width * a->height; ++c) {
        uint32_t s = a->columns[c], t = b->columns[c];
        for (; s && t; s = a->spans[s].next, t = b->spans[t].next) {
            differ += a->spans[s].area != b->spans[t].area;
            walkable += a->spans[s].area != NB_NULL_AREA;
        }
        differ += s != t; /* both lists end together */
    }
    if (differ)
        fprintf(stderr, "  %s (height %d, climb %d): %d spans differ\n", what, height, climb, differ);
    CHECK_INT(differ, 0);
    return walkable;
}

static void test_fused_filter_on_levels(void)
{
    const char* levels[] = { "dungeon.obj", "nav_test.obj" };
    const int params[][2] = { { 10, 4 }, { 3, 1 }, { 20, 8 }, { 1, 0 } };
    for (int l = 0; l < 2; ++l)
        for (int p = 0; p < 4; ++p) {
            nb_bake_result ra, rb;
            if (nbt_level_bake(ctx, levels[l], NB_STAGE_RASTERIZE, NB_KEEP_HEIGHTFIELD, &ra) == 0 &&
                nbt_level_bake(ctx, levels[l], NB_STAGE_RASTERIZE, NB_KEEP_HEIGHTFIELD, &rb) == 0) {
                const int walkable = check_fused_equals_sequential(ra.heightfield, rb.heightfield, params[p][0], params[p][1], levels[l]);
                CHECK(walkable > 1000); /* a real floor, not an empty comparison */
            }
            nb_bake_result_release(ctx, &ra);
            nb_bake_result_release(ctx, &rb);
        }
}

static void test_fused_filter_on_random_columns(void)
{
    uint32_t rng = 12345;
    for (int round = 0; round < 200; ++round) {
        const int w = 1 + (int)(nbt_rand(&rng) % 12), h = 1 + (int)(nbt_rand(&rng) % 12);
        nb_heightfield* a = make_hf(w, h);
        nb_heightfield* b = make_hf(w, h);
        for (int z = 0; z < h; ++z)
            for (int x = 0; x < w; ++x) {
                const int n = (int)(nbt_rand(&rng) % 5);
                uint32_t y = nbt_rand(&rng) % 6;
                for (int k = 0; k < n; ++k) {
                    const uint32_t top = y + 1 + nbt_rand(&rng) % 8;
                    const uint32_t r = nbt_rand(&rng) % 4;
                    const uint8_t area = r == 0 ? NB_NULL_AREA : r == 1 ? NB_WALKABLE_AREA : (uint8_t)(1 + nbt_rand(&rng) % 62);
                    nb_heightfield_add_span(ctx, a, x, z, y, top, area, 0);
                    nb_heightfield_add_span(ctx, b, x, z, y, top, area, 0);
                    y = top + 1 + nbt_rand(&rng) % 12;
                }
            }
        check_fused_equals_sequential(a, b, 1 + (int)(nbt_rand(&rng) % 12), (int)(nbt_rand(&rng) % 6), "random columns");
        nb_heightfield_destroy(ctx, a);
        nb_heightfield_destroy(ctx, b);
    }
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_low_ceiling_is_filtered);
    RUN(test_ledges);
    RUN(test_ledge_ignores_blocked_neighbours);
    RUN(test_low_hanging_obstacles);
    RUN(test_fused_filter_on_levels);
    RUN(test_fused_filter_on_random_columns);
    nb_context_destroy(ctx);
    return nbt_finish("test_filter");
}
