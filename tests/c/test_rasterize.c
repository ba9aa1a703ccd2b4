/* Slope marking, rasterization into spans, span merging, occupancy export. */
#include "navbake.h"
#include "nbtest.h"
#include "nbtest_level.h"

static nb_context* ctx;

static nb_heightfield* make_hf(int w, int h, float top)
{
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)w * 0.3f, top, (float)h * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(ctx, w, h, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    return hf;
}

static int column_spans(const nb_heightfield* hf, int x, int z)
{
    int n = 0;
    for (uint32_t s = hf->columns[x + z * hf->width]; s; s = hf->spans[s].next)
        ++n;
    return n;
}

static void test_flat_quad_covers_expected_cells(void)
{
    /* Quad x,z in [0.75, 2.25] at y = 1.1: cells 2..7 on both axes (cell k spans [0.3k, 0.3k + 0.3]). */
    const float v[] = { 0.75f, 1.1f, 0.75f, 0.75f, 1.1f, 2.25f, 2.25f, 1.1f, 0.75f, 2.25f, 1.1f, 2.25f };
    const uint32_t t[] = { 0, 1, 2, 2, 1, 3 };
    uint8_t areas[2] = { NB_WALKABLE_AREA, NB_WALKABLE_AREA };
    nb_clear_unwalkable_triangles(45.0f, v, t, 2, areas);
    CHECK_INT(areas[0], NB_WALKABLE_AREA);
    CHECK_INT(areas[1], NB_WALKABLE_AREA);
    nb_heightfield* hf = make_hf(10, 10, 4.0f);
    CHECK_INT(nb_rasterize_triangles(ctx, v, 4, t, areas, 2, hf, 4), NB_OK);
    int covered = 0;
    for (int z = 0; z < 10; ++z)
        for (int x = 0; x < 10; ++x) {
            const int inside = x >= 2 && x <= 7 && z >= 2 && z <= 7;
            const int n = column_spans(hf, x, z);
            CHECK_INT(n, inside);
            if (n) {
                const nb_span* s = &hf->spans[hf->columns[x + z * 10]];
                CHECK_INT(s->smin, 5); /* floor(1.1 / 0.2) */
                CHECK_INT(s->smax, 6); /* ceil(1.1 / 0.2) */
                CHECK_INT(s->area, NB_WALKABLE_AREA);
                ++covered;
            }
        }
    CHECK_INT(covered, 36);
    CHECK_INT(hf->span_count, 36);
    nb_heightfield_destroy(ctx, hf);
}

static void slope_triangle(float deg, float* v)
{
    /* Rises along x by tan(deg); normal points up. */
    const float rise = tanf(deg * 3.14159265f / 180.0f);
    const float tri[9] = { 0, 0, 0, 0, 0, 1, 1, rise, 0 };
    memcpy(v, tri, sizeof(tri));
}

static void test_slope_limit(void)
{
    float v[9];
    uint8_t a;
    slope_triangle(46.0f, v);
    a = NB_WALKABLE_AREA;
    nb_clear_unwalkable_triangles(45.0f, v, NULL, 1, &a);
    CHECK_INT(a, NB_NULL_AREA);
    slope_triangle(44.0f, v);
    a = NB_WALKABLE_AREA;
    nb_clear_unwalkable_triangles(45.0f, v, NULL, 1, &a);
    CHECK_INT(a, NB_WALKABLE_AREA);
    /* A user area survives marking when walkable... */
    a = 7;
    nb_clear_unwalkable_triangles(45.0f, v, NULL, 1, &a);
    CHECK_INT(a, 7);
    /* ...a downward-facing triangle (a ceiling) and a degenerate one never are. */
    const float down[9] = { 0, 0, 0, 1, 0, 0, 0, 0, 1 };
    a = NB_WALKABLE_AREA;
    nb_clear_unwalkable_triangles(45.0f, down, NULL, 1, &a);
    CHECK_INT(a, NB_NULL_AREA);
    const float line[9] = { 0, 0, 0, 1, 0, 0, 2, 0, 0 };
    a = NB_WALKABLE_AREA;
    nb_clear_unwalkable_triangles(45.0f, line, NULL, 1, &a);
    CHECK_INT(a, NB_NULL_AREA);
}

static void test_span_merging(void)
{
    nb_heightfield* hf = make_hf(2, 2, 20.0f);
    /* Overlap: [0,5) walkable + [3,8) unwalkable -> [0,8); tops 5 and 8 within merge threshold 4: walkable. */
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 0, 0, 0, 5, NB_WALKABLE_AREA, 4), NB_OK);
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 0, 0, 3, 8, NB_NULL_AREA, 4), NB_OK);
    CHECK_INT(column_spans(hf, 0, 0), 1);
    const nb_span* s = &hf->spans[hf->columns[0]];
    CHECK_INT(s->smin, 0);
    CHECK_INT(s->smax, 8);
    CHECK_INT(s->area, NB_WALKABLE_AREA);
    /* Same with threshold 1: the unwalkable top wins. */
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 1, 0, 0, 5, NB_WALKABLE_AREA, 1), NB_OK);
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 1, 0, 3, 8, NB_NULL_AREA, 1), NB_OK);
    CHECK_INT(hf->spans[hf->columns[1]].area, NB_NULL_AREA);
    /* Touching spans merge; separate ones stay apart, sorted bottom-up whatever the insertion order. */
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 0, 1, 10, 12, NB_NULL_AREA, 0), NB_OK);
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 0, 1, 0, 2, NB_NULL_AREA, 0), NB_OK);
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 0, 1, 4, 6, NB_NULL_AREA, 0), NB_OK);
    CHECK_INT(column_spans(hf, 0, 1), 3);
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 0, 1, 2, 4, NB_NULL_AREA, 0), NB_OK); /* bridges [0,2) and [4,6) */
    CHECK_INT(column_spans(hf, 0, 1), 2);
    uint32_t i = hf->columns[2];
    CHECK_INT(hf->spans[i].smin, 0);
    CHECK_INT(hf->spans[i].smax, 6);
    i = hf->spans[i].next;
    CHECK_INT(hf->spans[i].smin, 10);
    CHECK_INT(hf->spans[i].smax, 12);
    CHECK_INT(hf->span_count, 4);
    /* A span swallowing several at once. */
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 0, 1, 1, 11, 9, 0), NB_OK);
    CHECK_INT(column_spans(hf, 0, 1), 1);
    CHECK_INT(hf->spans[hf->columns[2]].smax, 12);
    /* Bad spans. */
    CHECK_STATUS(ctx, nb_heightfield_add_span(ctx, hf, 2, 0, 0, 1, 1, 0), NB_ERR_INVALID_ARG, "outside");
    CHECK_STATUS(ctx, nb_heightfield_add_span(ctx, hf, 0, 0, 5, 5, 1, 0), NB_ERR_INVALID_ARG, "[5, 5)");
    CHECK_STATUS(ctx, nb_heightfield_add_span(ctx, NULL, 0, 0, 0, 1, 1, 0), NB_ERR_NULL_ARG, "hf");
    nb_heightfield_destroy(ctx, hf);
}

static void test_pool_growth_keeps_spans(void)
{
    /* More spans than the initial pool (1024): every span must survive the pool's reallocation. */
    nb_heightfield* hf = make_hf(4, 4, 1000.0f);
    for (int k = 0; k < 1500; ++k)
        CHECK_INT(nb_heightfield_add_span(ctx, hf, k % 4, (k / 4) % 4, (uint32_t)(k / 16) * 3,
                                          (uint32_t)(k / 16) * 3 + 1, (uint8_t)(k % 64), 0),
                  NB_OK);
    CHECK_INT(hf->span_count, 1500);
    int total = 0;
    for (int z = 0; z < 4; ++z)
        for (int x = 0; x < 4; ++x) {
            int last_top = -1;
            for (uint32_t s = hf->columns[x + z * 4]; s; s = hf->spans[s].next) {
                CHECK((int)hf->spans[s].smin > last_top);
                last_top = (int)hf->spans[s].smax;
                ++total;
            }
        }
    CHECK_INT(total, 1500);
    nb_heightfield_destroy(ctx, hf);
}

static void test_clipping_to_bounds(void)
{
    /* A triangle outside the grid adds nothing; one reaching above the top is clamped to the top. */
    nb_heightfield* hf = make_hf(4, 4, 2.0f);
    const float outside[9] = { 5, 1, 5, 5, 1, 6, 6, 1, 5 };
    uint8_t a = NB_WALKABLE_AREA;
    CHECK_INT(nb_rasterize_triangles(ctx, outside, 3, NULL, &a, 1, hf, 1), NB_OK);
    CHECK_INT(hf->span_count, 0);
    const float steep[9] = { 0.1f, 0, 0.1f, 0.1f, 0, 0.2f, 0.2f, 50.0f, 0.1f }; /* tall sliver in cell (0,0) */
    CHECK_INT(nb_rasterize_triangles(ctx, steep, 3, NULL, &a, 1, hf, 1), NB_OK);
    CHECK_INT(hf->span_count, 1);
    CHECK_INT(hf->spans[hf->columns[0]].smax, 10); /* 2.0 / 0.2 */
    CHECK_STATUS(ctx, nb_rasterize_triangles(ctx, NULL, 3, NULL, &a, 1, hf, 1), NB_ERR_NULL_ARG, "verts");
    nb_heightfield_destroy(ctx, hf);
}

static void test_occupancy_round_trip(void)
{
    nb_heightfield* hf = make_hf(5, 3, 2.0f); /* 10 layers */
    struct { int x, z, smin, smax; } spans[] = { { 0, 0, 0, 3 }, { 4, 2, 2, 10 }, { 4, 2, 0, 1 }, { 2, 1, 5, 6 } };
    for (int k = 0; k < 4; ++k)
        CHECK_INT(nb_heightfield_add_span(ctx, hf, spans[k].x, spans[k].z, (uint32_t)spans[k].smin,
                                          (uint32_t)spans[k].smax, 0, 0),
                  NB_OK);
    size_t need = 0;
    int32_t dims[3];
    CHECK_STATUS(ctx, nb_heightfield_occupancy(ctx, hf, NULL, 0, &need, dims), NB_ERR_BUFFER_TOO_SMALL, "need 5 words");
    CHECK_INT(dims[0], 5);
    CHECK_INT(dims[1], 10);
    CHECK_INT(dims[2], 3);
    CHECK_INT(need, (5 * 3 * 10 + 31) / 32);
    uint32_t words[5];
    memset(words, 0xab, sizeof(words));
    CHECK_INT(nb_heightfield_occupancy(ctx, hf, words, 5, &need, dims), NB_OK);
    int set = 0;
    for (int y = 0; y < 10; ++y)
        for (int z = 0; z < 3; ++z)
            for (int x = 0; x < 5; ++x) {
                const int i = x + 5 * (z + 3 * y);
                const int bit = (int)((words[i >> 5] >> (i & 31)) & 1u);
                int expect = 0;
                for (int k = 0; k < 4; ++k)
                    expect |= spans[k].x == x && spans[k].z == z && y >= spans[k].smin && y < spans[k].smax;
                CHECK_INT(bit, expect);
                set += bit;
            }
    CHECK_INT(set, 3 + 8 + 1 + 1);
    CHECK_INT(words[4] >> (150 & 31), 0); /* unused tail bits are clear */

    /* A span reaching above the bounds' 10 layers (a floor exactly at bmax rounds up into layer 10) deepens the
     * grid instead of being cut off. */
    CHECK_INT(nb_heightfield_add_span(ctx, hf, 1, 1, 10, 11, 0, 0), NB_OK);
    CHECK_STATUS(ctx, nb_heightfield_occupancy(ctx, hf, NULL, 0, &need, dims), NB_ERR_BUFFER_TOO_SMALL, "need");
    CHECK_INT(dims[1], 11);
    uint32_t deeper[6];
    CHECK_INT(need, 6);
    CHECK_INT(nb_heightfield_occupancy(ctx, hf, deeper, 6, &need, dims), NB_OK);
    const int top = 1 + 5 * (1 + 3 * 10);
    CHECK_INT((int)((deeper[top >> 5] >> (top & 31)) & 1u), 1);
    nb_heightfield_destroy(ctx, hf);
}

static void test_create_errors(void)
{
    const float bmin[3] = { 0, 0, 0 }, bmax[3] = { 1, 1, 1 }, flipped[3] = { 1, -1, 1 };
    nb_heightfield* hf = (nb_heightfield*)1;
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 0, 4, bmin, bmax, 0.3f, 0.2f, &hf), NB_ERR_INVALID_ARG, "0 x 4");
    CHECK(hf == NULL);
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 1 << 15, 1 << 14, bmin, bmax, 0.3f, 0.2f, &hf), NB_ERR_TOO_LARGE,
                 "2^28");
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 4, 4, bmin, bmax, 0.0f, 0.2f, &hf), NB_ERR_INVALID_ARG, "cell sizes");
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 4, 4, bmin, flipped, 0.3f, 0.2f, &hf), NB_ERR_INVALID_ARG, "bmax.y");
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 4, 4, NULL, bmax, 0.3f, 0.2f, &hf), NB_ERR_NULL_ARG, "bmin");
    /* an inverted box in x or z, a corner not finite, an infinite cell: refused (they reached undefined
     * float-to-int conversions in rasterization) */
    const float inv_x[3] = { -1, 1, 1 }, inv_z[3] = { 1, 1, -1 }, nan_min[3] = { NAN, 0, 0 };
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 4, 4, bmin, inv_x, 0.3f, 0.2f, &hf), NB_ERR_INVALID_ARG, "bmax.x (-1)");
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 4, 4, bmin, inv_z, 0.3f, 0.2f, &hf), NB_ERR_INVALID_ARG, "bmax.z (-1)");
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 4, 4, nan_min, bmax, 0.3f, 0.2f, &hf), NB_ERR_NONFINITE, "bmin.x");
    CHECK_STATUS(ctx, nb_heightfield_create(ctx, 4, 4, bmin, bmax, INFINITY, 0.2f, &hf), NB_ERR_INVALID_ARG,
                 "finite and > 0");
    CHECK(hf == NULL);
    nb_heightfield_destroy(ctx, NULL);
}

/* The merge rule, written plainly over a sorted array: what a column must hold after each insertion. */
typedef struct model_span {
    uint32_t smin, smax, area;
} model_span;

static int model_add(model_span* col, int n, uint32_t smin, uint32_t smax, uint32_t area, int thr)
{
    int first = 0;
    while (first < n && col[first].smax < smin)
        ++first;
    int end = first;
    while (end < n && col[end].smin <= smax) { /* swallowed bottom-up, the merged top growing as it goes */
        if (col[end].smin < smin)
            smin = col[end].smin;
        if (col[end].smax > smax)
            smax = col[end].smax;
        if (abs((int)smax - (int)col[end].smax) <= thr && col[end].area > area)
            area = col[end].area;
        ++end;
    }
    memmove(&col[first + 1], &col[end], (size_t)(n - end) * sizeof(model_span));
    col[first] = (model_span){ smin, smax, area };
    return n - (end - first) + 1;
}

static void test_stacked_columns(void)
{
    /* Tall columns filled bottom up (a tower's storeys), top down and in random order, with spans that bridge
     * and swallow others: every column equals the model after each insertion, however far insertions resume. */
    enum { STOREYS = 60 };
    nb_heightfield* hf = make_hf(3, 2, 2000.0f);
    model_span model[3][STOREYS * 4];
    int count[3] = { 0, 0, 0 };
    uint32_t seed = 12345;
    for (int k = 0; k < STOREYS * 3; ++k) {
        for (int x = 0; x < 3; ++x) {
            uint32_t base;
            seed = seed * 1664525u + 1013904223u;
            if (k < STOREYS)
                base = 20u * (x == 1 ? (uint32_t)(STOREYS - 1 - k) : x == 0 ? (uint32_t)k : (seed >> 8) % STOREYS);
            else
                base = (seed >> 8) % (STOREYS * 20); /* later: anywhere, overlapping what is there */
            const uint32_t top = base + 1 + (k < STOREYS ? 4 : (seed >> 4) % 30);
            const uint32_t area = (seed >> 16) % 64;
            const int thr = (int)(seed % 3);
            CHECK_INT(nb_heightfield_add_span(ctx, hf, x, 1, base, top, (uint8_t)area, thr), NB_OK);
            count[x] = model_add(model[x], count[x], base, top, area, thr);
            int i = 0;
            int same = 1;
            for (uint32_t s = hf->columns[x + 3]; s; s = hf->spans[s].next, ++i)
                same &= i < count[x] && hf->spans[s].smin == model[x][i].smin && hf->spans[s].smax == model[x][i].smax
                     && hf->spans[s].area == model[x][i].area;
            CHECK(same && i == count[x]);
            if (!(same && i == count[x])) {
                fprintf(stderr, "  column %d after insertion %d differs from the model\n", x, k);
                nb_heightfield_destroy(ctx, hf);
                return;
            }
        }
    }
    CHECK(hf->resume != NULL); /* the bottom-up column walked far enough to start resuming */
    CHECK_INT(hf->span_count, count[0] + count[1] + count[2]);
    nb_heightfield_destroy(ctx, hf);
}

static void test_out_of_memory(void)
{
    /* Fail each allocation of create + rasterize (including pool growth) in turn. */
    const float v[] = { 0, 0, 0, 0, 0, 30, 30, 0, 0, 30, 0, 30 };
    const uint32_t t[] = { 0, 1, 2, 2, 1, 3 };
    uint8_t areas[2] = { 63, 63 };
    for (long fail = 1;; ++fail) {
        nbt_alloc a = { .fail_at = fail };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        if (!c)
            continue;
        const float bmin[3] = { 0, 0, 0 }, bmax[3] = { 30, 5, 30 };
        nb_heightfield* hf = NULL;
        nb_status st = nb_heightfield_create(c, 100, 100, bmin, bmax, 0.3f, 0.2f, &hf);
        if (st == NB_OK) {
            /* stacked copies force the pool past its first size */
            for (int k = 0; k < 3 && st == NB_OK; ++k) {
                float lifted[12];
                memcpy(lifted, v, sizeof(v));
                for (int q = 0; q < 4; ++q)
                    lifted[q * 3 + 1] = 2.0f * (float)k; /* separate storeys */
                st = nb_rasterize_triangles(c, lifted, 4, t, areas, 2, hf, 0);
            }
        }
        if (st == NB_OK) {
            CHECK_INT(hf->span_count, 3 * 100 * 100); /* three storeys: the pool grew past 10000 */
            CHECK(fail > 4);                          /* create (3) + at least one growth were failed first */
        }
        nb_heightfield_destroy(c, hf);
        nb_context_destroy(c);
        CHECK_INT(a.live, 0);
        if (st == NB_OK)
            break;
        CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        if (fail > 100)
            break;
    }
}

/* Far from the origin float spacing nears the cell size: at 2e8 it is 16 units, 53 cells. Cuts coincide there,
 * clipped pieces degenerate and grew past the clipping buffers (a stack overflow, then a loop over garbage
 * indices). Whatever the offset, the bake must finish without touching memory it does not own (ASan) and give
 * a navmesh or a clear error. */
static void test_far_from_the_origin(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh loads");
        return;
    }
    static const float offsets[] = { 2e6f, 5e7f, 2e8f, 1e9f };
    float* moved = (float*)malloc((size_t)obj.vertex_count * 3 * sizeof(float));
    for (size_t o = 0; o < sizeof(offsets) / sizeof(offsets[0]); ++o) {
        for (uint32_t i = 0; i < obj.vertex_count * 3; ++i)
            moved[i] = obj.positions[i] + (i % 3 != 1 ? offsets[o] : 0.0f);
        nb_bake_input in = nb_obj_bake_input(&obj);
        in.mesh.positions = moved;
        nb_navmesh* nav = NULL;
        const nb_status st = nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &nav);
        CHECK(st == NB_OK || st == NB_ERR_TOO_LARGE);
        nb_navmesh_destroy(ctx, nav);
    }
    free(moved);
    nb_obj_free(&obj);
}

/* A ground triangle reaching 3e8 (within NB_MAX_COORD) baked with explicit bounds 20 x 20 (a tile of a big world):
 * its far vertices are 3e9 cells away, beyond int. The cell indices were converted before clamping (undefined;
 * on x86 INT_MIN), and the bake kept 200 spans and no polygon where the same triangle 1000 wide gives the whole
 * grid. */
static void test_huge_triangle_in_small_bounds(void)
{
    for (int k = 0; k < 2; ++k) {
        const float e = k ? 1e8f : 1000.0f;
        const float pos[9] = { -e, 0, -e, -e, 0, 3 * e, 3 * e, 0, -e };
        const uint32_t idx[3] = { 0, 1, 2 };
        nb_bake_input in;
        memset(&in, 0, sizeof in);
        in.mesh.positions = pos;
        in.mesh.vertex_count = 3;
        in.mesh.indices = idx;
        in.mesh.triangle_count = 1;
        const float bmin[3] = { 0, -1, 0 }, bmax[3] = { 20, 1, 20 };
        in.bmin = bmin;
        in.bmax = bmax;
        nb_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.cell_size = 0.1f;
        cfg.agent_radius = NB_ZERO;
        nb_bake_result r;
        CHECK_INT(nb_bake(ctx, &in, &cfg, NB_STAGE_ALL, 0, &r), NB_OK);
        CHECK(r.stats[NB_STAT_HF_SPANS] > 0.75 * 200 * 200); /* (float rounding at 1e8 trims the edges) */
        CHECK(r.stats[NB_STAT_POLYS] >= 1);
        nb_bake_result_release(ctx, &r);
    }
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_flat_quad_covers_expected_cells);
    RUN(test_slope_limit);
    RUN(test_span_merging);
    RUN(test_pool_growth_keeps_spans);
    RUN(test_stacked_columns);
    RUN(test_clipping_to_bounds);
    RUN(test_occupancy_round_trip);
    RUN(test_create_errors);
    RUN(test_out_of_memory);
    RUN(test_far_from_the_origin);
    RUN(test_huge_triangle_in_small_bounds);
    nb_context_destroy(ctx);
    return nbt_finish("test_rasterize");
}
