/* nb_bake_navmesh: solo and tiled bakes into a navmesh, against REFERENCE.md's tiled figures. */
#include <stdlib.h>

#include "navbake.h"
#include "nbtest_level.h"
#include "nbtest_mesh.h"

static nb_context* ctx;

static uint32_t poly_count(const nb_navmesh* nav)
{
    uint32_t n = 0;
    nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n);
    return n;
}

static void test_solo_is_one_tile_with_the_bake_polygons(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &nav), NB_OK);
    nb_bake_result r;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_ALL, 0, &r), NB_OK);
    CHECK_INT(nb_navmesh_tile_count(nav), 1);
    CHECK_INT(poly_count(nav), r.stats[NB_STAT_POLYS]);
    nb_bake_result_release(ctx, &r);
    nb_navmesh_destroy(ctx, nav);
    nb_obj_free(&obj);
}

static void test_tiled_counts_against_reference(void)
{
    static const struct {
        const char* mesh;
        uint32_t tiles;
        double polys;
    } ref[] = { { "dungeon.obj", 12, 111 }, { "nav_test.obj", 18, 204 } };
    for (int i = 0; i < 2; ++i) {
        nb_obj obj;
        if (nbt_load_level(ref[i].mesh, &obj) != 0) {
            CHECK(!"mesh missing");
            continue;
        }
        nb_bake_input in = nb_obj_bake_input(&obj);
        nb_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.tile_size = 64;
        nb_navmesh* nav = NULL;
        CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
        if (!nav)
            continue;
        CHECK_INT(nb_navmesh_tile_count(nav), ref[i].tiles);
        const double polys = poly_count(nav);
        if (fabs(polys - ref[i].polys) > 0.15 * ref[i].polys)
            fprintf(stderr, "  %s: %.0f polygons, reference %.0f\n", ref[i].mesh, polys, ref[i].polys);
        CHECK(fabs(polys - ref[i].polys) <= 0.15 * ref[i].polys);
        /* every tile sits on the 64-cell grid from the mesh's minimum corner */
        const nb_navmesh_params* p = nb_navmesh_get_params(nav);
        CHECK_NEAR(p->tile_width, 64 * 0.3, 1e-4);
        /* the same bake twice gives the same bytes */
        nb_navmesh* again = NULL;
        CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &again), NB_OK);
        uint8_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        CHECK_INT(nb_navmesh_save(ctx, nav, &a, &na), NB_OK);
        CHECK_INT(nb_navmesh_save(ctx, again, &b, &nb), NB_OK);
        CHECK(na == nb && a && b && memcmp(a, b, na) == 0);
        nb_bytes_free(ctx, a);
        nb_bytes_free(ctx, b);
        nb_navmesh_destroy(ctx, again);
        nb_navmesh_destroy(ctx, nav);
        nb_obj_free(&obj);
    }
}

static void test_errors(void)
{
    const float v[] = { 0, 0, 0, 0, 0, 10, 10, 0, 0, NAN, 0, 10 };
    const uint32_t t[] = { 0, 1, 2, 2, 1, 3 };
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = v;
    in.mesh.vertex_count = 4;
    in.mesh.indices = t;
    in.mesh.triangle_count = 2;
    nb_navmesh* nav = (nb_navmesh*)1;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &nav), NB_ERR_NONFINITE, "vertex 3 has a non-finite coordinate (x = nan)");
    CHECK(nav == NULL);
    /* 100 km with 16-cell tiles: far more than NB_MAX_TILES */
    const float big[] = { 0, 0, 0, 0, 0, 100000, 100000, 0, 0, 100000, 0, 100000 };
    in.mesh.positions = big;
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 16;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_ERR_TOO_LARGE, "tiles exceed");
    /* Every vertex within NB_MAX_COORD, the level wider than it: the solo tile would be, and the message says so in
     * the level's terms (it was nb_navmesh_create's NB_ERR_INVALID_ARG on its tile_width). */
    const float wide[] = { 0, 0, 0, 0, 0, 100, 100, 0, 0, 0, 0, -1e9f };
    in.mesh.positions = wide;
    in.mesh.triangle_count = 1;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &nav), NB_ERR_TOO_LARGE,
                 "the level is 1000000128 wide in z (every vertex counted: -1000000000 .. 100)");
    CHECK(nav == NULL);
    in.mesh.triangle_count = 2;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, NULL, NULL, NULL, 0, &nav), NB_ERR_NULL_ARG, "input");
    in.mesh.positions = v;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, NULL, NULL, 3, &nav), NB_ERR_NULL_ARG, "links");
}

/* An explicit zero (NB_ZERO) reaches every tile: no erosion means a larger walkable surface. */
static void test_explicit_zero_survives(void)
{
    const float v[] = { 0, 0, 0, 0, 0, 18, 18, 0, 0, 18, 0, 18 };
    const uint32_t t[] = { 0, 1, 2, 2, 1, 3 };
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = v;
    in.mesh.vertex_count = 4;
    in.mesh.indices = t;
    in.mesh.triangle_count = 2;
    for (int tiled = 0; tiled <= 1; ++tiled) {
        double area[2];
        for (int zero = 0; zero <= 1; ++zero) {
            nb_config cfg;
            memset(&cfg, 0, sizeof(cfg));
            cfg.tile_size = tiled ? 32 : 0;
            cfg.agent_radius = zero ? NB_ZERO : 0.0f;
            nb_navmesh* nav = NULL;
            CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
            uint32_t n = 0;
            nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n);
            nb_poly_ref refs[256];
            CHECK(n <= 256);
            nb_navmesh_poly_refs(ctx, nav, refs, 256, &n);
            area[zero] = 0;
            for (uint32_t i = 0; i < n; ++i) {
                float pv[NB_MAX_VERTS_PER_POLY * 3];
                int32_t nv = 0;
                CHECK_INT(nb_navmesh_poly(nav, refs[i], pv, &nv, NULL, NULL, NULL), NB_OK);
                for (int a = 0, b = nv - 1; a < nv; b = a++)
                    area[zero] += 0.5 * ((double)pv[b * 3] * pv[a * 3 + 2] - (double)pv[a * 3] * pv[b * 3 + 2]);
            }
            area[zero] = fabs(area[zero]);
            nb_navmesh_destroy(ctx, nav);
        }
        /* 18 x 18 floor: the ledge ring (0.3) goes either way; erosion by 0.6 takes another 0.6 per side */
        CHECK_NEAR(area[1], 17.4 * 17.4, 0.5);
        CHECK_NEAR(area[0], 16.2 * 16.2, 0.5);
    }
}

/* The height limit (the audit: a floor at the very top of a mesh 8190-8191 cells tall went into layer 8191, whose
 * span top does not fit 13 bits; the heightfield got spans [8191, 0) and the floor vanished, NB_OK). A mesh 8190
 * cells tall keeps both its floors, solo, tiled and with explicit bounds; a hair under 8191 is refused by name. */
static void test_top_of_the_height_range(void)
{
    for (int tall = 0; tall < 2; ++tall)
        for (int mode = 0; mode < 3; ++mode) {
            /* 1638.2 is 8190.9997 cells of 0.2 in double (the old check let it pass) and 8191 in the rasterizer's float */
            const float top = tall ? 1638.2f : 8190.0f * 0.2f;
            mesh_builder m = { 0 };
            add_floor(&m, 0, 0, 20, 20, 0.0f);
            add_floor(&m, 30, 0, 50, 20, top);
            nb_bake_input in = MB_INPUT(&m);
            const float lo[3] = { 0.0f, 0.0f, 0.0f }, hi[3] = { 50.0f, top, 20.0f };
            if (mode == 2) {
                in.bmin = lo;
                in.bmax = hi;
            }
            nb_config cfg;
            memset(&cfg, 0, sizeof(cfg));
            cfg.tile_size = mode == 1 ? 32 : 0;
            nb_navmesh* nav = NULL;
            const nb_status st = nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav);
            if (tall) {
                CHECK_STATUS(ctx, st, NB_ERR_TOO_LARGE, "cells tall");
                CHECK(strstr(nb_context_message(ctx), "above the limit of 8190") != NULL);
                CHECK(strstr(nb_context_message(ctx), "the mesh is 8191 cells tall") != NULL);
            } else {
                CHECK_INT(st, NB_OK);
                int low = 0, high = 0;
                uint32_t n = 0;
                nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n);
                nb_poly_ref refs[64];
                CHECK(n > 0 && n <= 64);
                nb_navmesh_poly_refs(ctx, nav, refs, 64, &n);
                for (uint32_t i = 0; i < n && i < 64; ++i) {
                    float v[NB_MAX_VERTS_PER_POLY * 3];
                    int32_t nv = 0;
                    nb_navmesh_poly(nav, refs[i], v, &nv, NULL, NULL, NULL);
                    low += v[0] < 25.0f && fabsf(v[1]) < 0.5f;
                    high += v[0] > 25.0f && fabsf(v[1] - top) < 0.5f;
                }
                if (!high)
                    fprintf(stderr, "  mode %d: %u polygons, %d on the low floor, none on the top one\n", mode, n, low);
                CHECK(low > 0 && high > 0);
            }
            nb_navmesh_destroy(ctx, nav);
        }
}

/* A spiral ramp (a parking garage's helix: 3 turns between radii 5 and 10, 6.3 m a turn). The watershed flood went
 * all the way round at one distance level, so one region overlapped itself, its contour mixed the floors, and the
 * bake kept 9 polygons of the ramp (68 m2 of about 1000) with no path up, NB_OK (the bake audit; with an agent
 * radius of 0.31, two cells of erosion). Every partition, solo and tiled, now keeps the ramp: the walkable area
 * within 10% of the monotone partition's, and a complete path from the bottom to the top. */
static void test_spiral_ramp_every_partition(void)
{
    mesh_builder m = { 0 };
    const int steps = 189; /* 3 turns of 0.1 rad, rising 0.1 a step */
    for (int k = 0; k <= steps; ++k) {
        const float a = 0.1f * (float)k, y = 0.1f * (float)k;
        add_vert(&m, 5.0f * cosf(a), y, 5.0f * sinf(a));
        add_vert(&m, 10.0f * cosf(a), y, 10.0f * sinf(a));
        if (k > 0) {
            const uint32_t i0 = (uint32_t)(2 * k - 2), o0 = i0 + 1, i1 = i0 + 2, o1 = i0 + 3;
            const uint32_t tris[6] = { i0, i1, o0, o0, i1, o1 };
            memcpy(&m.t[m.nt * 3], tris, sizeof(tris));
            m.nt += 2;
        }
    }
    const float bottom[3] = { 7.5f, 0.0f, 0.2f };
    const float top[3] = { 7.5f * cosf(0.1f * steps - 0.05f), 0.1f * steps - 0.05f, 7.5f * sinf(0.1f * steps - 0.05f) };
    double monotone_area = 0.0;
    static const nb_partition parts[] = { NB_PARTITION_MONOTONE, NB_PARTITION_WATERSHED, NB_PARTITION_LAYERS,
                                          NB_PARTITION_WAVEFRONT };
    for (int pi = 0; pi < 4; ++pi)
        for (int tiled = 0; tiled < 2; ++tiled) {
            nb_bake_input in = MB_INPUT(&m);
            nb_config cfg;
            memset(&cfg, 0, sizeof(cfg));
            cfg.agent_radius = 0.31f;
            cfg.partition = parts[pi];
            cfg.tile_size = tiled ? 64 : 0;
            nb_navmesh* nav = NULL;
            CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
            if (!nav)
                continue;
            uint32_t n = 0;
            nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n);
            nb_poly_ref* refs = (nb_poly_ref*)malloc((n ? n : 1) * sizeof(nb_poly_ref));
            nb_navmesh_poly_refs(ctx, nav, refs, n, &n);
            double area = 0.0;
            for (uint32_t i = 0; i < n; ++i) {
                float v[NB_MAX_VERTS_PER_POLY * 3];
                int32_t nv = 0;
                nb_navmesh_poly(nav, refs[i], v, &nv, NULL, NULL, NULL);
                for (int32_t k = 1; k + 1 < nv; ++k)
                    area += 0.5 * fabs((double)(v[k * 3] - v[0]) * (v[(k + 1) * 3 + 2] - v[2]) -
                                       (double)(v[(k + 1) * 3] - v[0]) * (v[k * 3 + 2] - v[2]));
            }
            free(refs);
            if (pi == 0 && !tiled)
                monotone_area = area;
            nb_query* q = NULL;
            CHECK_INT(nb_query_create(ctx, nav, 4096, &q), NB_OK);
            nb_query_filter f;
            nb_query_filter_init(&f);
            const float half[3] = { 1.0f, 0.5f, 1.0f };
            nb_poly_ref a = 0, b = 0, path[1024];
            int32_t np = 0;
            int partial = 1;
            nb_query_find_nearest_poly(q, bottom, half, &f, &a, NULL);
            nb_query_find_nearest_poly(q, top, half, &f, &b, NULL);
            if (a && b)
                CHECK_INT(nb_query_find_path(q, a, b, bottom, top, &f, path, &np, 1024, &partial), NB_OK);
            const int ok = a && b && !partial && fabs(area - monotone_area) <= 0.1 * monotone_area;
            if (!ok)
                fprintf(stderr, "  partition %d%s: %u polygons, %.0f m2 (monotone %.0f), ends %s, path %s\n",
                        (int)parts[pi], tiled ? " tiled" : "", n, area, monotone_area, a && b ? "found" : "missing",
                        partial ? "partial" : "complete");
            CHECK(ok);
            nb_query_destroy(ctx, q);
            nb_navmesh_destroy(ctx, nav);
        }
    CHECK(monotone_area > 400.0); /* of 707 m2: 3 turns of the ring, less the erosion along both edges */
}

/* Triangles with no area have no surface (a bake audit: a vertical segment, the corners of a triangle in one
 * column, cut a 1.4 m2 hole into the floor around an invisible pole; one lying 0.5 above the floor tripled the
 * detail vertices). A floor with such triangles bakes the same bytes as the floor alone, solo and tiled. */
static void test_triangles_without_area_are_nothing(void)
{
    for (int tiled = 0; tiled < 2; ++tiled) {
        uint8_t* bytes[2] = { NULL, NULL };
        size_t size[2] = { 0, 0 };
        for (int with = 0; with < 2; ++with) {
            mesh_builder m = { 0 };
            add_floor(&m, 0, 0, 20, 20, 0.0f);
            if (with) {
                static const float junk[5][9] = {
                    { 3, 0, 3, 3, 5, 3, 3, 2, 3 },           /* a vertical segment */
                    { 5, 0.5f, 5, 9, 0.5f, 9, 7, 0.5f, 7 },  /* a segment above the floor */
                    { 12, 1, 4, 12, 1, 4, 16, 0.2f, 8 },     /* two corners the same */
                    { 14, 3, 14, 14, 3, 14, 14, 3, 14 },     /* a point */
                    { 2, 0.1f, 15, 10, 1.7f, 15, 6, 0.9f, 15 }, /* a sloping segment */
                };
                for (int k = 0; k < 5; ++k) {
                    const uint32_t a = add_vert(&m, junk[k][0], junk[k][1], junk[k][2]);
                    const uint32_t b = add_vert(&m, junk[k][3], junk[k][4], junk[k][5]);
                    const uint32_t c = add_vert(&m, junk[k][6], junk[k][7], junk[k][8]);
                    m.t[m.nt * 3] = a;
                    m.t[m.nt * 3 + 1] = b;
                    m.t[m.nt * 3 + 2] = c;
                    ++m.nt;
                }
            }
            nb_bake_input in = MB_INPUT(&m);
            const float lo[3] = { 0, 0, 0 }, hi[3] = { 20, 5, 20 }; /* the same bounds with or without */
            in.bmin = lo;
            in.bmax = hi;
            nb_config cfg;
            memset(&cfg, 0, sizeof(cfg));
            cfg.tile_size = tiled ? 16 : 0;
            nb_navmesh* nav = NULL;
            CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
            if (nav)
                CHECK_INT(nb_navmesh_save(ctx, nav, &bytes[with], &size[with]), NB_OK);
            nb_navmesh_destroy(ctx, nav);
        }
        CHECK(size[0] > 0 && size[0] == size[1] && memcmp(bytes[0], bytes[1], size[0]) == 0);
        nb_bytes_free(ctx, bytes[0]);
        nb_bytes_free(ctx, bytes[1]);
    }
}

static void test_tiled_errors_name_the_mesh_triangle(void)
{
    const float v[] = { 0, 0, 0, 0, 0, 18, 18, 0, 0, 18, 0, 18 };
    const uint32_t t[] = { 0, 1, 2, 2, 1, 3, 0, 1, 9 };
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = v;
    in.mesh.vertex_count = 4;
    in.mesh.indices = t;
    in.mesh.triangle_count = 3;
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 32;
    nb_navmesh* nav = NULL;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_ERR_INDEX_RANGE,
                 "triangle 2 uses vertex index 9 but the mesh has 4 vertices");
    in.mesh.triangle_count = 0;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_ERR_EMPTY_MESH, "no triangles");
    /* one tile of the grid on its own, and a tile outside it */
    in.mesh.triangle_count = 2;
    uint8_t* data = NULL;
    size_t size = 0;
    CHECK_INT(nb_bake_grid_tile(ctx, &in, &cfg, NULL, 0, 1, 1, &data, &size, NULL), NB_OK);
    CHECK(data != NULL && size > 0);
    nb_bytes_free(ctx, data);
    CHECK_STATUS(ctx, nb_bake_grid_tile(ctx, &in, &cfg, NULL, 0, 2, 0, &data, &size, NULL), NB_ERR_INVALID_ARG,
                 "outside the 2 x 2 grid");
    nb_navmesh_params params;
    int32_t tx = 0, tz = 0;
    CHECK_INT(nb_bake_grid(ctx, &in, &cfg, &params, &tx, &tz), NB_OK);
    CHECK_INT(tx, 2);
    CHECK_INT(tz, 2);
    CHECK_NEAR(params.tile_width, 9.6, 1e-4);
}

static void test_out_of_memory(void)
{
    /* a 20 x 20 floor in 4 tiles of 32 cells */
    const float v[] = { 0, 0, 0, 0, 0, 18, 18, 0, 0, 18, 0, 18 };
    const uint32_t t[] = { 0, 1, 2, 2, 1, 3 };
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = v;
    in.mesh.vertex_count = 4;
    in.mesh.indices = t;
    in.mesh.triangle_count = 2;
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 32;
    int failures = 0;
    for (long fail = 2; fail < 5000; ++fail) {
        nbt_alloc a = { .fail_at = fail };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        nb_navmesh* nav = NULL;
        const nb_status st = nb_bake_navmesh(c, &in, &cfg, NULL, 0, &nav);
        if (st == NB_OK)
            CHECK_INT(nb_navmesh_tile_count(nav), 4);
        nb_navmesh_destroy(c, nav);
        CHECK_INT(a.live, 1);
        nb_context_destroy(c);
        if (st == NB_OK)
            break;
        CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        ++failures;
    }
    CHECK(failures > 20);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_solo_is_one_tile_with_the_bake_polygons);
    RUN(test_tiled_counts_against_reference);
    RUN(test_errors);
    RUN(test_explicit_zero_survives);
    RUN(test_top_of_the_height_range);
    RUN(test_spiral_ramp_every_partition);
    RUN(test_triangles_without_area_are_nothing);
    RUN(test_tiled_errors_name_the_mesh_triangle);
    RUN(test_out_of_memory);
    nb_context_destroy(ctx);
    return nbt_finish("test_bake_navmesh");
}
