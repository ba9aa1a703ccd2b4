/* nb_navmesh_detail_triangles: sizing, the triangles of every tile's detail mesh, indices in range, areas, winding,
 * and every status. */
#include "navbake.h"
#include "nbtest.h"
#include "obj.h"

#include <math.h>
#include <stdlib.h>

static nb_context* ctx;
static nb_obj dungeon;
static int have_dungeon;

static nb_navmesh* bake_dungeon(int tile_size)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = dungeon.positions;
    in.mesh.vertex_count = dungeon.vertex_count;
    in.mesh.indices = dungeon.indices;
    in.mesh.triangle_count = dungeon.triangle_count;
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = tile_size;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
    return nav;
}

/* Projected (xz) area of the polygons, fanned. */
static double polygon_area(const nb_navmesh* nav)
{
    uint32_t n = 0;
    nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n);
    nb_poly_ref* refs = (nb_poly_ref*)malloc((n ? n : 1) * sizeof(nb_poly_ref));
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, refs, n, &n), NB_OK);
    double area = 0;
    for (uint32_t i = 0; i < n; ++i) {
        float v[NB_MAX_VERTS_PER_POLY * 3];
        int32_t nv = 0;
        uint8_t a;
        uint16_t f;
        int off;
        CHECK_INT(nb_navmesh_poly(nav, refs[i], v, &nv, &a, &f, &off), NB_OK);
        for (int k = 2; k < nv; ++k)
            area += fabs((double)(v[3 * k - 3] - v[0]) * (v[3 * k + 2] - v[2]) -
                         (double)(v[3 * k] - v[0]) * (v[3 * k - 1] - v[2])) / 2;
    }
    free(refs);
    return area;
}

static void check_surface(const nb_navmesh* nav)
{
    uint32_t nv = 0, nt = 0;
    CHECK_STATUS(ctx, nb_navmesh_detail_triangles(ctx, nav, NULL, 0, NULL, NULL, 0, &nv, &nt), NB_ERR_BUFFER_TOO_SMALL,
                 "need room");
    CHECK(nv > 0 && nt > 0);
    float* pos = (float*)malloc((size_t)nv * 3 * sizeof(float));
    uint32_t* idx = (uint32_t*)malloc((size_t)nt * 3 * sizeof(uint32_t));
    uint8_t* areas = (uint8_t*)malloc(nt);
    /* one short of room: refused, and the sizes still come back */
    uint32_t nv2 = 0, nt2 = 0;
    CHECK_STATUS(ctx, nb_navmesh_detail_triangles(ctx, nav, pos, nv, idx, areas, nt - 1, &nv2, &nt2),
                 NB_ERR_BUFFER_TOO_SMALL, "capacities");
    CHECK_INT(nt2, nt);
    CHECK_STATUS(ctx, nb_navmesh_detail_triangles(ctx, nav, pos, nv - 1, idx, areas, nt, &nv2, &nt2),
                 NB_ERR_BUFFER_TOO_SMALL, "capacities");
    CHECK_INT(nv2, nv);
    CHECK_INT(nb_navmesh_detail_triangles(ctx, nav, pos, nv, idx, NULL, nt, &nv2, &nt2), NB_OK); /* areas optional */
    CHECK_INT(nb_navmesh_detail_triangles(ctx, nav, pos, nv, idx, areas, nt, &nv2, &nt2), NB_OK);

    int bad_index = 0, down = 0, bad_area = 0;
    double area = 0;
    for (uint32_t t = 0; t < nt; ++t) {
        const uint32_t a = idx[t * 3], b = idx[t * 3 + 1], c = idx[t * 3 + 2];
        if (a >= nv || b >= nv || c >= nv) {
            ++bad_index;
            continue;
        }
        const float* pa = &pos[a * 3];
        const float* pb = &pos[b * 3];
        const float* pc = &pos[c * 3];
        /* y of (b - a) x (c - a): > 0 = counter-clockwise seen from above */
        const double ny = (double)(pb[2] - pa[2]) * (pc[0] - pa[0]) - (double)(pb[0] - pa[0]) * (pc[2] - pa[2]);
        down += ny <= 0;
        area += fabs(ny) / 2;
        bad_area += areas[t] != NB_WALKABLE_AREA;
    }
    CHECK_INT(bad_index, 0);
    CHECK_INT(down, 0);
    CHECK_INT(bad_area, 0);
    const double parea = polygon_area(nav);
    CHECK_NEAR(area, parea, parea * 0.01); /* the detail triangles tile the polygons */
    for (uint32_t i = 0; i < nv * 3; ++i)
        if (!isfinite(pos[i])) {
            CHECK(!"non-finite vertex");
            break;
        }
    free(pos);
    free(idx);
    free(areas);
}

static void test_solo(void)
{
    if (!have_dungeon)
        return;
    nb_navmesh* nav = bake_dungeon(0);
    check_surface(nav);
    nb_navmesh_destroy(ctx, nav);
}

static void test_tiled(void)
{
    if (!have_dungeon)
        return;
    nb_navmesh* nav = bake_dungeon(32);
    CHECK(nb_navmesh_tile_count(nav) > 4);
    check_surface(nav);
    nb_navmesh_destroy(ctx, nav);
}

static void test_empty_and_errors(void)
{
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    p.tile_width = p.tile_depth = 10;
    p.max_tiles = 4;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &p, &nav), NB_OK);
    uint32_t nv = 7, nt = 7;
    float pos[3];
    uint32_t idx[3];
    /* an empty navmesh: zero sizes, no buffers needed */
    CHECK_INT(nb_navmesh_detail_triangles(ctx, nav, NULL, 0, NULL, NULL, 0, &nv, &nt), NB_OK);
    CHECK_INT(nv, 0);
    CHECK_INT(nt, 0);
    CHECK_STATUS(ctx, nb_navmesh_detail_triangles(ctx, NULL, pos, 0, idx, NULL, 0, &nv, &nt), NB_ERR_NULL_ARG, "nav");
    CHECK_STATUS(ctx, nb_navmesh_detail_triangles(ctx, nav, pos, 0, idx, NULL, 0, NULL, &nt), NB_ERR_NULL_ARG,
                 "vertex_count");
    nb_navmesh_destroy(ctx, nav);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    char path[512], err[512];
    have_dungeon = nb_obj_load(nbt_mesh_path("dungeon.obj", path, sizeof(path)), &dungeon, err, sizeof(err)) == 0;
    if (!have_dungeon) {
        fprintf(stderr, "  %s\n", err);
        CHECK(!"dungeon.obj missing");
    }
    RUN(test_solo);
    RUN(test_tiled);
    RUN(test_empty_and_errors);
    if (have_dungeon)
        nb_obj_free(&dungeon);
    nb_context_destroy(ctx);
    return nbt_finish("test_navmesh_geometry");
}
