/* Compact heightfield: open spans and the climb and clearance rules of neighbour links. */
#include "navbake.h"
#include "nbtest.h"

static nb_context* ctx;

static nb_heightfield* make_hf(int w, int h)
{
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)w * 0.3f, 40.0f, (float)h * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(ctx, w, h, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    return hf;
}

static void test_flat_floor_links_all_inside_neighbours(void)
{
    nb_heightfield* hf = make_hf(5, 4);
    for (int z = 0; z < 4; ++z)
        for (int x = 0; x < 5; ++x)
            nb_heightfield_add_span(ctx, hf, x, z, 0, 5, NB_WALKABLE_AREA, 0);
    nb_heightfield_add_span(ctx, hf, 2, 2, 30, 35, NB_NULL_AREA, 0); /* a ceiling high above one cell */
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
    CHECK_INT(chf->span_count, 20); /* the unwalkable ceiling span is not an open span */
    for (int z = 0; z < 4; ++z)
        for (int x = 0; x < 5; ++x) {
            const nb_compact_cell c = chf->cells[x + z * 5];
            CHECK_INT(c.count, 1);
            const nb_compact_span* s = &chf->spans[c.index];
            CHECK_INT(s->y, 5);
            CHECK_INT(s->h, (x == 2 && z == 2) ? 25 : 255);
            for (int dir = 0; dir < 4; ++dir) {
                const int nx = x + nb_dir_offset_x(dir), nz = z + nb_dir_offset_z(dir);
                const int inside = nx >= 0 && nz >= 0 && nx < 5 && nz < 4;
                CHECK_INT(nb_span_con(s, dir), inside ? 0 : NB_NOT_CONNECTED);
            }
        }
    CHECK_NEAR(chf->bmax[1], 40.0 + 10 * 0.2, 1e-4);
    nb_compact_heightfield_destroy(ctx, chf);
    nb_heightfield_destroy(ctx, hf);
}

static void test_climb_and_clearance_rules(void)
{
    nb_heightfield* hf = make_hf(4, 1);
    nb_heightfield_add_span(ctx, hf, 0, 0, 0, 10, NB_WALKABLE_AREA, 0);
    nb_heightfield_add_span(ctx, hf, 1, 0, 0, 14, NB_WALKABLE_AREA, 0); /* +4 = climb: linked to 0 */
    nb_heightfield_add_span(ctx, hf, 2, 0, 0, 19, NB_WALKABLE_AREA, 0); /* +5 > climb: not linked to 1 */
    /* column 3: floor at 19 like column 2, but a ceiling 9 cells above: too low to pass into */
    nb_heightfield_add_span(ctx, hf, 3, 0, 0, 19, NB_WALKABLE_AREA, 0);
    nb_heightfield_add_span(ctx, hf, 3, 0, 28, 30, NB_NULL_AREA, 0);
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
    const nb_compact_span* s = chf->spans;
    CHECK_INT(nb_span_con(&s[0], 2), 0);
    CHECK_INT(nb_span_con(&s[1], 0), 0);
    CHECK_INT(nb_span_con(&s[1], 2), NB_NOT_CONNECTED);
    CHECK_INT(nb_span_con(&s[2], 0), NB_NOT_CONNECTED);
    CHECK_INT(nb_span_con(&s[2], 2), NB_NOT_CONNECTED);
    CHECK_INT(nb_span_con(&s[3], 0), NB_NOT_CONNECTED);
    nb_compact_heightfield_destroy(ctx, chf);
    nb_heightfield_destroy(ctx, hf);
}

static void test_storeys_link_to_the_right_layer(void)
{
    /* Two columns with a ground floor and an upper floor each: links go to the same storey's index. */
    nb_heightfield* hf = make_hf(2, 1);
    for (int x = 0; x < 2; ++x) {
        nb_heightfield_add_span(ctx, hf, x, 0, 0, 5, NB_WALKABLE_AREA, 0);
        nb_heightfield_add_span(ctx, hf, x, 0, 20, 22, NB_WALKABLE_AREA, 0);
    }
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
    CHECK_INT(chf->span_count, 4);
    CHECK_INT(chf->cells[0].count, 2);
    CHECK_INT(nb_span_con(&chf->spans[0], 2), 0); /* ground to ground */
    CHECK_INT(nb_span_con(&chf->spans[1], 2), 1); /* upper to upper */
    CHECK_INT(chf->spans[0].h, 15);
    nb_compact_heightfield_destroy(ctx, chf);
    nb_heightfield_destroy(ctx, hf);
}

static void test_errors_and_out_of_memory(void)
{
    nb_compact_heightfield* chf = NULL;
    CHECK_STATUS(ctx, nb_compact_heightfield_build(ctx, 10, 4, NULL, &chf), NB_ERR_NULL_ARG, "hf");
    {
        /* span_count sizes the build: one that says fewer spans than the columns hold is refused, not overrun */
        nb_heightfield* hf = make_hf(4, 4);
        for (int k = 0; k < 16; ++k)
            nb_heightfield_add_span(ctx, hf, k % 4, k / 4, 0, 5, NB_WALKABLE_AREA, 0);
        hf->span_count = 15;
        CHECK_STATUS(ctx, nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_ERR_INVALID_ARG, "span_count");
        CHECK(chf == NULL);
        hf->span_count = 16;
        CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
        CHECK_INT(chf->span_count, 16);
        nb_compact_heightfield_destroy(ctx, chf);
        chf = NULL;
        nb_heightfield_destroy(ctx, hf);
    }
    for (long fail = 1; fail < 20; ++fail) {
        nbt_alloc a = { .fail_at = fail };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        if (!c)
            continue;
        const float bmin[3] = { 0, 0, 0 }, bmax[3] = { 3, 4, 3 };
        nb_heightfield* hf = NULL;
        nb_status st = nb_heightfield_create(c, 10, 10, bmin, bmax, 0.3f, 0.2f, &hf);
        for (int k = 0; k < 100 && st == NB_OK; ++k)
            st = nb_heightfield_add_span(c, hf, k % 10, k / 10, 0, 5, NB_WALKABLE_AREA, 0);
        if (st == NB_OK)
            st = nb_compact_heightfield_build(c, 10, 4, hf, &chf);
        if (st == NB_OK) {
            CHECK_INT(chf->span_count, 100);
            nb_compact_heightfield_destroy(c, chf);
        } else {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        }
        nb_heightfield_destroy(c, hf);
        nb_context_destroy(c);
        CHECK_INT(a.live, 0);
        if (st == NB_OK)
            break;
    }
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_flat_floor_links_all_inside_neighbours);
    RUN(test_climb_and_clearance_rules);
    RUN(test_storeys_link_to_the_right_layer);
    RUN(test_errors_and_out_of_memory);
    nb_context_destroy(ctx);
    return nbt_finish("test_compact");
}
