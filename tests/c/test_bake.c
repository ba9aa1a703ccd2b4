/* nb_bake: input validation, counts against the reference on the standard levels, cancellation,
 * out-of-memory at every allocation, determinism. */
#include "navbake.h"
#include "nbtest_level.h"

static nb_context* ctx;

static void check_within(double got, double want, double tol, const char* what)
{
    if (fabs(got - want) > tol * want) {
        fprintf(stderr, "  %s: got %.0f, reference %.0f\n", what, got, want);
        CHECK(fabs(got - want) <= tol * want);
    }
}

/* REFERENCE.md: counts within 1% of the reference implementation with the default config. */
static void test_counts_match_reference(void)
{
    static const struct {
        const char* mesh;
        int w, h;
        double hf, compact, walkable;
    } ref[] = { { "dungeon.obj", 248, 330, 52106, 23569, 17500 }, { "nav_test.obj", 305, 258, 120183, 56795, 45117 } };
    for (int i = 0; i < 2; ++i) {
        nb_obj obj;
        if (nbt_load_level(ref[i].mesh, &obj) != 0) {
            CHECK(!"mesh missing");
            continue;
        }
        nb_bake_input in = nb_obj_bake_input(&obj);
        nb_bake_result r;
        CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_ERODE, 0, &r), NB_OK);
        CHECK_INT(r.stats[NB_STAT_GRID_WIDTH], ref[i].w);
        CHECK_INT(r.stats[NB_STAT_GRID_HEIGHT], ref[i].h);
        check_within(r.stats[NB_STAT_HF_SPANS], ref[i].hf, 0.01, "hf_spans");
        check_within(r.stats[NB_STAT_COMPACT_SPANS], ref[i].compact, 0.01, "compact_spans");
        check_within(r.stats[NB_STAT_WALKABLE_AFTER_ERODE], ref[i].walkable, 0.01, "walkable_after_erode");
        CHECK(r.compact != NULL);
        CHECK(r.heightfield == NULL); /* not kept without NB_KEEP_HEIGHTFIELD */
        CHECK(r.stats[NB_STAT_REGIONS] == -1.0);
        CHECK(r.stats[NB_STAT_MS_RASTERIZE] >= 0.0);
        nb_bake_result_release(ctx, &r);
        nb_bake_result_release(ctx, &r); /* twice is fine */
        nb_obj_free(&obj);
    }
}

static void test_deterministic(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_bake_result a, b;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_AREAS, NB_KEEP_ALL, &a), NB_OK);
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_AREAS, NB_KEEP_ALL, &b), NB_OK);
    CHECK_INT(a.compact->span_count, b.compact->span_count);
    CHECK(memcmp(a.compact->spans, b.compact->spans, a.compact->span_count * sizeof(nb_compact_span)) == 0);
    CHECK(memcmp(a.compact->areas, b.compact->areas, a.compact->span_count) == 0);
    CHECK(a.heightfield != NULL && a.heightfield->span_count == b.heightfield->span_count);
    nb_bake_result_release(ctx, &a);
    nb_bake_result_release(ctx, &b);
    nb_obj_free(&obj);
}

/* A small level: a 6x6 floor with a 2x2 box on it, 12 + 2 triangles. */
static const float k_level_verts[] = {
    0, 0, 0, 0, 0, 6, 6, 0, 0, 6, 0, 6,                          /* floor */
    2, 0, 2, 2, 0, 4, 4, 0, 2, 4, 0, 4, 2, 2, 2, 2, 2, 4, 4, 2, 2, 4, 2, 4, /* box */
};
static const uint32_t k_level_tris[] = { 0, 1, 2, 2, 1, 3, 8, 9, 10, 10, 9, 11, 4, 8, 6, 6, 8, 10,
                                         5, 7, 9, 9, 7, 11, 4, 5, 8, 8, 5, 9, 6, 10, 7, 7, 10, 11 };

static nb_bake_input small_level(void)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = k_level_verts;
    in.mesh.vertex_count = 12;
    in.mesh.indices = k_level_tris;
    in.mesh.triangle_count = 12;
    return in;
}

static void test_small_level(void)
{
    nb_bake_input in = small_level();
    nb_bake_result r;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_ERODE, NB_KEEP_ALL, &r), NB_OK);
    CHECK_INT(r.stats[NB_STAT_GRID_WIDTH], 20);
    /* floor 20x20 cells minus the box's 7x7 (cells 6..13 partly covered) plus the box top */
    CHECK(r.stats[NB_STAT_HF_SPANS] >= 400);
    /* the box top (2 units up) is not reachable: >= climb; eroded away completely (7 cells wide, r = 2) ... */
    CHECK(r.stats[NB_STAT_WALKABLE_AFTER_ERODE] < r.stats[NB_STAT_COMPACT_SPANS]);
    CHECK(r.heightfield != NULL && r.compact != NULL);
    nb_bake_result_release(ctx, &r);
    /* Without indices: consecutive triples. */
    float soup[12 * 9];
    for (int t = 0; t < 12; ++t)
        for (int k = 0; k < 3; ++k)
            memcpy(&soup[(t * 3 + k) * 3], &k_level_verts[k_level_tris[t * 3 + k] * 3], 3 * sizeof(float));
    nb_bake_input s;
    memset(&s, 0, sizeof(s));
    s.mesh.positions = soup;
    s.mesh.vertex_count = 36;
    nb_bake_result r2;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_ERODE, 0, &r), NB_OK);
    CHECK_INT(nb_bake(ctx, &s, NULL, NB_STAGE_ERODE, 0, &r2), NB_OK);
    CHECK_INT(r.stats[NB_STAT_WALKABLE_AFTER_ERODE], r2.stats[NB_STAT_WALKABLE_AFTER_ERODE]);
    nb_bake_result_release(ctx, &r);
    nb_bake_result_release(ctx, &r2);
}

static void test_areas_and_volumes(void)
{
    nb_bake_input in = small_level();
    uint8_t areas[12];
    memset(areas, 9, sizeof(areas));
    in.mesh.areas = areas;
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_BOX;
    v.area = 2;
    const float lo[3] = { 4.5f, -1, 4.5f }, hi[3] = { 6, 1, 6 };
    memcpy(v.bmin, lo, sizeof(lo));
    memcpy(v.bmax, hi, sizeof(hi));
    in.volumes = &v;
    in.volume_count = 1;
    nb_bake_result r;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_AREAS, 0, &r), NB_OK);
    int n2 = 0, n9 = 0, other = 0;
    for (uint32_t i = 0; i < r.compact->span_count; ++i) {
        const uint8_t a = r.compact->areas[i];
        n2 += a == 2;
        n9 += a == 9;
        other += a != 2 && a != 9 && a != NB_NULL_AREA;
    }
    CHECK(n2 > 0);
    CHECK(n9 > 0);
    CHECK_INT(other, 0);
    nb_bake_result_release(ctx, &r);
}

/* A whole mesh whose every triangle has no area is refused (most often buffers never filled); one triangle with
 * area is enough, a thin one too, and a tile's share of a level (explicit bounds) may be only slivers. */
static void test_degenerate_mesh(void)
{
    nb_bake_result r;
    nb_navmesh* nav = NULL;
    nb_navmesh_params params;
    int32_t tx, tz;
    float zeros[12] = { 0 };
    const uint32_t tris[6] = { 0, 1, 2, 1, 3, 2 };
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = zeros; /* an unfilled vertex buffer */
    in.mesh.vertex_count = 4;
    in.mesh.indices = tris;
    in.mesh.triangle_count = 2;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_EMPTY_MESH,
                 "all 2 triangles are degenerate (no area: corners that coincide or lie on one line; triangle 0 uses "
                 "vertices 0, 1, 2)");
    CHECK(r.heightfield == NULL && r.compact == NULL);
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &nav), NB_ERR_EMPTY_MESH, "all 2 triangles");
    CHECK(nav == NULL);
    nb_config tiled;
    memset(&tiled, 0, sizeof(tiled));
    tiled.tile_size = 32;
    CHECK_STATUS(ctx, nb_bake_grid(ctx, &in, &tiled, &params, &tx, &tz), NB_ERR_EMPTY_MESH, "all 2 triangles");

    /* Unfilled indices over a real level: every triangle is vertex 0 three times. */
    const uint32_t none[36] = { 0 };
    nb_bake_input lvl = small_level();
    lvl.mesh.indices = none;
    CHECK_STATUS(ctx, nb_bake(ctx, &lvl, NULL, 0, 0, &r), NB_ERR_EMPTY_MESH, "all 12 triangles are degenerate");

    /* Corners on one line, with float rounding: a soup of two collinear triangles, far from the origin. */
    const float line[18] = { 1000.1f, 3.3f, 2000.7f, 1001.1f, 3.8f, 2001.2f, 1003.1f, 4.8f, 2002.2f,
                             1000.1f, 3.3f, 2000.7f, 1000.1f, 3.3f, 2000.7f, 1005.1f, 5.8f, 2003.2f };
    nb_bake_input soup;
    memset(&soup, 0, sizeof(soup));
    soup.mesh.positions = line;
    soup.mesh.vertex_count = 6;
    CHECK_STATUS(ctx, nb_bake(ctx, &soup, NULL, 0, 0, &r), NB_ERR_EMPTY_MESH,
                 "all 2 triangles are degenerate (no area: corners that coincide or lie on one line; triangle 0 uses "
                 "vertices 0, 1, 2)");

    /* One triangle with area among degenerate ones bakes; so does a thin one (angle about 1e-3 rad). */
    float some[12] = { 0, 0, 0, 10, 0, 0, 0, 0, 10, 10, 0, 10 };
    const uint32_t mixed[6] = { 0, 0, 1, 1, 2, 3 };
    in.mesh.positions = some;
    in.mesh.indices = mixed;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_RASTERIZE, 0, &r), NB_OK);
    nb_bake_result_release(ctx, &r);
    const float thin[9] = { 0, 0, 0, 100, 0, 0, 100, 0, 0.1f };
    soup.mesh.positions = thin;
    soup.mesh.vertex_count = 3;
    CHECK_INT(nb_bake(ctx, &soup, NULL, NB_STAGE_RASTERIZE, 0, &r), NB_OK);
    nb_bake_result_release(ctx, &r);
    soup.mesh.positions = line;
    CHECK_STATUS(ctx, nb_bake(ctx, &soup, NULL, 0, 0, &r), NB_ERR_EMPTY_MESH, ": the only triangle is degenerate");

    /* With explicit bounds (a tile of a bigger level) degenerate triangles are simply nothing to bake. */
    const float bmin[3] = { -1, -1, -1 }, bmax[3] = { 11, 1, 11 };
    in.mesh.positions = zeros;
    in.mesh.indices = tris;
    in.bmin = bmin;
    in.bmax = bmax;
    CHECK_INT(nb_bake(ctx, &in, NULL, 0, 0, &r), NB_OK);
    CHECK(r.poly_mesh != NULL && r.stats[NB_STAT_POLYS] == 0);
    nb_bake_result_release(ctx, &r);
}

static void test_bad_input(void)
{
    nb_bake_result r;
    nb_bake_input in = small_level();
    float verts[36];
    memcpy(verts, k_level_verts, sizeof(verts));
    in.mesh.positions = verts;

    verts[3 * 5 + 1] = NAN;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_NONFINITE, "vertex 5 has a non-finite coordinate (y = nan)");
    CHECK(r.compact == NULL && r.heightfield == NULL);
    verts[3 * 5 + 1] = -INFINITY;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_NONFINITE, "vertex 5");
    verts[3 * 5 + 1] = 0.0f;

    uint32_t tris[36];
    memcpy(tris, k_level_tris, sizeof(tris));
    tris[7] = 12;
    in.mesh.indices = tris;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_INDEX_RANGE,
                 "triangle 2 uses vertex index 12 but the mesh has 12 vertices");
    in.mesh.indices = k_level_tris;

    in.mesh.triangle_count = 0;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_EMPTY_MESH, "no triangles");
    in.mesh.triangle_count = 12;

    nb_bake_input soup;
    memset(&soup, 0, sizeof(soup));
    soup.mesh.positions = verts;
    soup.mesh.vertex_count = 4;
    CHECK_STATUS(ctx, nb_bake(ctx, &soup, NULL, 0, 0, &r), NB_ERR_INVALID_ARG, "multiple of 3 (got 4)");
    soup.mesh.vertex_count = 0;
    CHECK_STATUS(ctx, nb_bake(ctx, &soup, NULL, 0, 0, &r), NB_ERR_EMPTY_MESH, "no triangles");
    soup.mesh.positions = NULL;
    soup.mesh.vertex_count = 3;
    CHECK_STATUS(ctx, nb_bake(ctx, &soup, NULL, 0, 0, &r), NB_ERR_NULL_ARG, "mesh.positions is NULL");

    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.cell_size = -0.3f;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, &cfg, 0, 0, &r), NB_ERR_INVALID_CONFIG, "config.cell_size must be > 0");
    /* A level 60 km wide: 200000 x 200000 columns at the default cell size. */
    float huge[36];
    for (int i = 0; i < 36; ++i)
        huge[i] = k_level_verts[i] * ((i % 3 == 1) ? 1.0f : 10000.0f);
    in.mesh.positions = huge;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_TOO_LARGE, "above the limit of 2^28");
    /* A level 2 km tall: 10000 layers of 0.2. */
    for (int i = 0; i < 36; ++i)
        huge[i] = k_level_verts[i] * ((i % 3 == 1) ? 1000.0f : 1.0f);
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_TOO_LARGE, "cells tall");
    /* A strip 20 km long and 6 m wide: few columns, but more than polygons' 16-bit coordinates reach. Refused
     * before any work for polygons; its voxels can still be had. */
    const float strip[12] = { 0, 0, 0, 0, 0, 6, 20000, 0, 6, 20000, 0, 0 };
    const uint32_t strip_tris[6] = { 0, 1, 2, 0, 2, 3 };
    nb_bake_input long_strip = in;
    long_strip.mesh.positions = strip;
    long_strip.mesh.vertex_count = 4;
    long_strip.mesh.indices = strip_tris;
    long_strip.mesh.triangle_count = 2;
    CHECK_STATUS(ctx, nb_bake(ctx, &long_strip, NULL, NB_STAGE_ALL, 0, &r), NB_ERR_TOO_LARGE,
                 "the grid would be 66667 x 20 columns; polygons reach 65535 columns at most");
    CHECK_INT(nb_bake(ctx, &long_strip, NULL, NB_STAGE_REGIONS, 0, &r), NB_OK);
    nb_bake_result_release(ctx, &r);
    /* A vertex beyond what a navmesh stores: named, before any grid is sized from it. */
    memcpy(huge, k_level_verts, sizeof(huge));
    huge[7] = -2e9f;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_TOO_LARGE,
                 "vertex 2 has a coordinate beyond 1e+09, the largest a navmesh holds (y = -2e+09)");
    nb_navmesh* big_nav = NULL;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &big_nav), NB_ERR_TOO_LARGE, "vertex 2 has a coordinate beyond");
    CHECK(big_nav == NULL);
    /* Far out, float32 coordinates are spaced wider than a cell: refused by name, not baked into other shapes. At
     * 2e6 they are 0.25 apart (under the 0.3 cells), at 5e6 0.5. */
    for (int i = 0; i < 36; ++i)
        huge[i] = k_level_verts[i] + (i % 3 == 0 ? 2e6f : 0.0f);
    CHECK_INT(nb_bake(ctx, &in, NULL, 0, 0, &r), NB_OK);
    nb_bake_result_release(ctx, &r);
    for (int i = 0; i < 36; ++i)
        huge[i] = k_level_verts[i] + (i % 3 == 0 ? 5e6f : 0.0f);
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_TOO_LARGE,
                 "from the origin in x, where float32 coordinates are 0.5 apart, more than a "
                 "cell (cell_size 0.3): move the level nearer the origin");
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &big_nav), NB_ERR_TOO_LARGE, "from the origin in x");
    for (int i = 0; i < 36; ++i)
        huge[i] = k_level_verts[i] + (i % 3 == 1 ? -3e6f : 0.0f); /* 0.25 apart in y: above the 0.2 cell height */
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_TOO_LARGE, "in y, where float32 coordinates are 0.25 apart, more than a cell (cell_height 0.2)");
    in.mesh.positions = verts;

    uint8_t areas[12];
    memset(areas, 63, sizeof(areas));
    areas[4] = 200;
    in.mesh.areas = areas;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_INVALID_ARG, "areas[4] is 200");
    in.mesh.areas = NULL;

    in.volume_count = 2;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_NULL_ARG, "volumes is NULL");
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_CYLINDER;
    v.radius = NAN;
    in.volumes = &v;
    in.volume_count = 1;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_NONFINITE, "volume 0");
    in.volume_count = 0;

    const float bmin[3] = { 0, 0, 0 };
    in.bmin = bmin;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_NULL_ARG, "both bmin and bmax");
    in.bmin = NULL;
    in.border_size = -1;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, &r), NB_ERR_INVALID_ARG, "border_size");
    in.border_size = 0;

    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, (nb_stage)99, 0, &r), NB_ERR_INVALID_ARG, "stop_after");
    CHECK_STATUS(ctx, nb_bake(ctx, NULL, NULL, 0, 0, &r), NB_ERR_NULL_ARG, "input is NULL");
    CHECK_STATUS(ctx, nb_bake(ctx, &in, NULL, 0, 0, NULL), NB_ERR_NULL_ARG, "out is NULL");
}

static int cancel_at_stage(void* user, nb_stage stage, uint32_t done, uint32_t total)
{
    (void)done;
    (void)total;
    return stage == *(nb_stage*)user;
}

static void test_cancel(void)
{
    for (nb_stage s = NB_STAGE_RASTERIZE; s <= NB_STAGE_AREAS; s = (nb_stage)(s + 1)) {
        nbt_alloc a = { 0 };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        d.progress = cancel_at_stage;
        d.progress_user = &s;
        nb_context* c = nb_context_create(&d);
        nb_bake_input in = small_level();
        nb_bake_result r;
        CHECK_STATUS(c, nb_bake(c, &in, NULL, NB_STAGE_AREAS, NB_KEEP_ALL, &r), NB_ERR_CANCELLED, "cancelled");
        CHECK(r.heightfield == NULL && r.compact == NULL);
        CHECK_INT(a.live, 1); /* only the context itself */
        nb_context_destroy(c);
    }
}

/* What a progress callback saw: per stage, the reports and the last one; and any report out of order. */
typedef struct progress_log {
    int reports[NB_STAGE_DETAIL + 1];
    uint32_t last_done[NB_STAGE_DETAIL + 1], last_total[NB_STAGE_DETAIL + 1];
    int bad;     /* a total of 0, done > total, or a stage before one already seen */
    int jumpy;   /* a stage not starting at 0, going back (done / total falls), or a report said twice */
    nb_stage stage;
} progress_log;

static int log_progress(void* user, nb_stage stage, uint32_t done, uint32_t total)
{
    progress_log* l = (progress_log*)user;
    if (total == 0 || done > total || stage < l->stage || stage > NB_STAGE_DETAIL)
        l->bad++;
    else {
        const int seen = l->reports[stage] > 0;
        const uint64_t before = (uint64_t)l->last_done[stage] * total, now = (uint64_t)done * l->last_total[stage];
        if (seen ? now < before || (done == l->last_done[stage] && total == l->last_total[stage]) : done != 0)
            l->jumpy++;
        l->stage = stage;
        l->reports[stage]++;
        l->last_done[stage] = done;
        l->last_total[stage] = total;
    }
    return 0;
}

/* Every stage reports, in order, never with total 0, starting at 0 and never going back or repeating itself,
 * and its last report says done == total (a progress bar reaches its end): with and without volumes, for each partition, with more triangles than the rasterizer's
 * reporting step, and for a level where nothing is walkable (no contours, no polygons). */
static void check_progress(const char* what, const nb_bake_input* in, nb_partition partition)
{
    progress_log l;
    memset(&l, 0, sizeof(l));
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    d.progress = log_progress;
    d.progress_user = &l;
    nb_context* c = nb_context_create(&d);
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.partition = partition;
    nb_bake_result r;
    CHECK_INT(nb_bake(c, in, &cfg, NB_STAGE_ALL, 0, &r), NB_OK);
    CHECK_INT(l.bad, 0);
    CHECK_INT(l.jumpy, 0);
    for (int s = NB_STAGE_RASTERIZE; s <= NB_STAGE_DETAIL; ++s) {
        if (l.reports[s] < 2 || l.last_done[s] != l.last_total[s]) {
            fprintf(stderr, "  %s, partition %d: stage %d: %d reports, last %u/%u\n", what, (int)partition, s,
                    l.reports[s], l.last_done[s], l.last_total[s]);
            CHECK(!"a stage ends below its total");
        }
    }
    nb_bake_result_release(c, &r);
    nb_context_destroy(c);
}

static void test_progress_reaches_total(void)
{
    nb_bake_input in = small_level();
    for (int p = NB_PARTITION_WATERSHED; p <= NB_PARTITION_LAYERS; ++p)
        check_progress("small level", &in, (nb_partition)p);
    nb_volume v[3];
    memset(v, 0, sizeof(v));
    for (int i = 0; i < 3; ++i) {
        v[i].type = NB_VOLUME_BOX;
        v[i].area = (uint8_t)(2 + i);
        const float lo[3] = { 0.5f + i, -1, 0.5f }, hi[3] = { 1.5f + i, 1, 1.5f };
        memcpy(v[i].bmin, lo, sizeof(lo));
        memcpy(v[i].bmax, hi, sizeof(hi));
    }
    in.volumes = v;
    in.volume_count = 3;
    check_progress("three volumes", &in, NB_PARTITION_WATERSHED);

    uint8_t none[12];
    memset(none, NB_NULL_AREA, sizeof(none));
    nb_bake_input empty = small_level();
    empty.mesh.areas = none;
    check_progress("nothing walkable", &empty, NB_PARTITION_WATERSHED);

    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input big = nb_obj_bake_input(&obj);
    CHECK(big.mesh.triangle_count > 4096 && big.mesh.triangle_count % 4096 != 0);
    check_progress("dungeon", &big, NB_PARTITION_WATERSHED);
    nb_obj_free(&obj);
}

static void test_out_of_memory_everywhere(void)
{
    /* Fail each allocation of a bake in turn: every failure is a clean NB_ERR_OUT_OF_MEMORY. */
    int failures = 0;
    for (long fail = 2;; ++fail) {
        nbt_alloc a = { .fail_at = fail };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        CHECK(c != NULL);
        nb_bake_input in = small_level();
        uint8_t areas[12];
        memset(areas, 63, sizeof(areas));
        in.mesh.areas = areas; /* so the median filter allocates too */
        nb_bake_result r;
        const nb_status st = nb_bake(c, &in, NULL, NB_STAGE_AREAS, NB_KEEP_ALL, &r);
        nb_bake_result_release(c, &r);
        CHECK_INT(a.live, 1);
        nb_context_destroy(c);
        if (st == NB_OK)
            break;
        CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        ++failures;
        if (fail > 200)
            break;
    }
    CHECK(failures >= 6); /* areas, hf, columns+spans, compact x4, erode, median */
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_counts_match_reference);
    RUN(test_deterministic);
    RUN(test_small_level);
    RUN(test_areas_and_volumes);
    RUN(test_bad_input);
    RUN(test_degenerate_mesh);
    RUN(test_cancel);
    RUN(test_progress_reaches_total);
    RUN(test_out_of_memory_everywhere);
    nb_context_destroy(ctx);
    return nbt_finish("test_bake");
}
