/* nb_tile_cache: cached per-tile compact heightfields, obstacles, dirty-tile rebuilds. */
#include "navbake.h"
#include "../../c/src/navmesh_internal.h"
#include "nbtest_level.h"

#include <math.h>

static nb_context* ctx;

/* ---- a synthetic level: a flat corridor 76 m long (4 tiles of 64 x 0.3 m) and 4 m wide, along x ---- */

#define CORR_SEGS 19
#define CORR_LEN 76.0f
#define CORR_WIDTH 4.0f
static float corr_pos[(CORR_SEGS + 1) * 2 * 3];
static uint32_t corr_idx[CORR_SEGS * 6];

static nb_bake_input corridor(void)
{
    for (int i = 0; i <= CORR_SEGS; ++i)
        for (int j = 0; j < 2; ++j) {
            float* p = &corr_pos[(i * 2 + j) * 3];
            p[0] = CORR_LEN * (float)i / CORR_SEGS;
            p[1] = 0.0f;
            p[2] = j ? CORR_WIDTH : 0.0f;
        }
    for (int i = 0; i < CORR_SEGS; ++i) {
        const uint32_t a = (uint32_t)i * 2, b = a + 1, c = a + 2, d = a + 3;
        const uint32_t t[6] = { a, b, d, a, d, c }; /* wound so the floor faces up */
        memcpy(&corr_idx[i * 6], t, sizeof(t));
    }
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = corr_pos;
    in.mesh.vertex_count = (CORR_SEGS + 1) * 2;
    in.mesh.indices = corr_idx;
    in.mesh.triangle_count = CORR_SEGS * 2;
    return in;
}

static nb_config tiled(void)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 64;
    return cfg;
}

/* A box across the corridor (all of its width) between x0 and x1. */
static nb_volume wall_box(float x0, float x1, uint8_t area)
{
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_BOX;
    v.area = area;
    const float lo[3] = { x0, -1.0f, -1.0f }, hi[3] = { x1, 2.0f, CORR_WIDTH + 1.0f };
    memcpy(v.bmin, lo, sizeof(lo));
    memcpy(v.bmax, hi, sizeof(hi));
    return v;
}

static int save_equal(nb_navmesh* a, nb_navmesh* b)
{
    uint8_t *da = NULL, *db = NULL;
    size_t na = 0, nb = 0;
    int eq = nb_navmesh_save(ctx, a, &da, &na) == NB_OK && nb_navmesh_save(ctx, b, &db, &nb) == NB_OK && na == nb &&
             memcmp(da, db, na) == 0;
    nb_bytes_free(ctx, da);
    nb_bytes_free(ctx, db);
    return eq;
}

/* NB_PATH_NONE / NB_PATH_PARTIAL / NB_PATH_COMPLETE from x0 to x1 along the corridor's middle. */
static int corridor_path(const nb_navmesh* nav, float x0, float x1)
{
    nb_query* q = NULL;
    if (nb_query_create(ctx, nav, 0, &q) != NB_OK)
        return -1;
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float s[3] = { x0, 0.0f, CORR_WIDTH / 2 }, e[3] = { x1, 0.0f, CORR_WIDTH / 2 };
    const float ext[3] = { 1.0f, 1.0f, 1.0f };
    nb_poly_ref sr = 0, er = 0, path[256];
    int32_t n = 0;
    int partial = 0, result = NB_PATH_NONE;
    nb_query_find_nearest_poly(q, s, ext, &f, &sr, NULL);
    nb_query_find_nearest_poly(q, e, ext, &f, &er, NULL);
    if (sr && er && nb_query_find_path(q, sr, er, s, e, &f, path, &n, 256, &partial) == NB_OK && n > 0)
        result = partial ? NB_PATH_PARTIAL : NB_PATH_COMPLETE;
    nb_query_destroy(ctx, q);
    return result;
}

/* Area of the polygon under (x, z); -1 when none. */
static int area_at(const nb_navmesh* nav, float x, float z)
{
    nb_query* q = NULL;
    if (nb_query_create(ctx, nav, 0, &q) != NB_OK)
        return -1;
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float p[3] = { x, 0.0f, z }, ext[3] = { 0.1f, 1.0f, 0.1f };
    nb_poly_ref ref = 0;
    uint8_t area = 0;
    int result = -1;
    if (nb_query_find_nearest_poly(q, p, ext, &f, &ref, NULL) == NB_OK && ref &&
        nb_navmesh_poly(nav, ref, NULL, NULL, &area, NULL, NULL) == NB_OK)
        result = area;
    nb_query_destroy(ctx, q);
    return result;
}

static int has_pair(const int32_t* tiles, uint32_t n, int32_t x, int32_t z)
{
    for (uint32_t i = 0; i < n; ++i)
        if (tiles[2 * i] == x && tiles[2 * i + 1] == z)
            return 1;
    return 0;
}

static void test_no_obstacles_same_bytes_as_bake_navmesh(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_config cfg = tiled();
    nb_navmesh *ref = NULL, *nav = NULL;
    nb_tile_cache* cache = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &ref), NB_OK);
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, &cache), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, cache, &nav), NB_OK);
    CHECK(ref && nav && nb_navmesh_tile_count(nav) == nb_navmesh_tile_count(ref));
    CHECK(nb_navmesh_tile_count(nav) > 4);
    CHECK(save_equal(ref, nav));

    /* An obstacle added and removed again: the touched tiles are rebuilt to the same bytes. */
    const nb_navmesh_params* p = nb_navmesh_get_params(nav);
    int32_t cx = -1, cz = -1; /* a grid corner whose four tiles all have polygons */
    for (int32_t z = 1; z < 8 && cx < 0; ++z)
        for (int32_t x = 1; x < 8 && cx < 0; ++x) {
            const uint8_t* data;
            size_t size;
            if (nb_navmesh_tile_data(nav, x, z, &data, &size) == NB_OK &&
                nb_navmesh_tile_data(nav, x - 1, z, &data, &size) == NB_OK &&
                nb_navmesh_tile_data(nav, x, z - 1, &data, &size) == NB_OK &&
                nb_navmesh_tile_data(nav, x - 1, z - 1, &data, &size) == NB_OK) {
                cx = x;
                cz = z;
            }
        }
    CHECK(cx > 0);
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_CYLINDER;
    v.center[0] = p->origin[0] + (float)cx * p->tile_width;
    v.center[1] = -100.0f;
    v.center[2] = p->origin[2] + (float)cz * p->tile_depth;
    v.radius = 2.0f;
    v.height = 200.0f;
    uint32_t id = 0, n = 0;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_OK);
    CHECK_INT(nb_tile_cache_dirty_count(cache), 4); /* at a corner of four tiles */
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(n, 4);
    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(n, 4);
    CHECK(save_equal(ref, nav));

    nb_navmesh_destroy(ctx, nav);
    nb_navmesh_destroy(ctx, ref);
    nb_tile_cache_destroy(ctx, cache);
    nb_obj_free(&obj);
}

/* A tile cache of the level with tiled()'s config and its navmesh; 0 (nothing left to free) when either fails. */
static int open_cache(nb_bake_input in, nb_tile_cache** cache, nb_navmesh** nav)
{
    const nb_config cfg = tiled();
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, cache), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, *cache, nav), NB_OK);
    if (*nav)
        return 1;
    nb_tile_cache_destroy(ctx, *cache);
    return 0;
}

static void test_box_blocks_corridor_and_moves(void)
{
    nb_tile_cache* cache = NULL;
    nb_navmesh* nav = NULL;
    if (!open_cache(corridor(), &cache, &nav))
        return;
    CHECK_INT(nb_navmesh_tile_count(nav), 4);
    CHECK_INT(corridor_path(nav, 5.0f, 70.0f), NB_PATH_COMPLETE);

    /* Tile 1 spans x 19.2 .. 38.4 (border 1.5 m): a box at 27 .. 30 touches it alone. */
    nb_volume v = wall_box(27.0f, 30.0f, NB_NULL_AREA);
    uint32_t id = 0, n = 0;
    int32_t tiles[16];
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_OK);
    CHECK(id != 0);
    CHECK_INT(nb_tile_cache_dirty_count(cache), 1);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 8, &n), NB_OK);
    CHECK_INT(n, 1);
    CHECK(has_pair(tiles, n, 1, 0));
    CHECK_INT(nb_tile_cache_dirty_count(cache), 0);
    CHECK_INT(corridor_path(nav, 5.0f, 70.0f), NB_PATH_PARTIAL);
    CHECK_INT(corridor_path(nav, 5.0f, 20.0f), NB_PATH_COMPLETE); /* this side of the box is still one piece */
    CHECK_INT(corridor_path(nav, 40.0f, 70.0f), NB_PATH_COMPLETE);

    /* Nothing dirty: an update rebuilds nothing. */
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 8, &n), NB_OK);
    CHECK_INT(n, 0);

    /* Moved into tile 2 (38.4 .. 57.6): the old and the new tile are rebuilt, no other. */
    v = wall_box(46.0f, 49.0f, NB_NULL_AREA);
    CHECK_INT(nb_tile_cache_update_obstacle(ctx, cache, id, &v), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 8, &n), NB_OK);
    CHECK_INT(n, 2);
    CHECK(has_pair(tiles, n, 1, 0) && has_pair(tiles, n, 2, 0));
    CHECK_INT(corridor_path(nav, 5.0f, 70.0f), NB_PATH_PARTIAL);
    CHECK_INT(corridor_path(nav, 5.0f, 40.0f), NB_PATH_COMPLETE); /* the old place is open again */

    /* A box across the border of tiles 2 and 3 (57.6): both rebuilt, and the path is still cut. */
    v = wall_box(56.5f, 58.5f, NB_NULL_AREA);
    CHECK_INT(nb_tile_cache_update_obstacle(ctx, cache, id, &v), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 8, &n), NB_OK);
    CHECK_INT(n, 2);
    CHECK(has_pair(tiles, n, 2, 0) && has_pair(tiles, n, 3, 0));
    CHECK_INT(corridor_path(nav, 5.0f, 70.0f), NB_PATH_PARTIAL);

    /* Removed: the path is complete again, and the navmesh is the one built without obstacles. */
    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(n, 2);
    CHECK_INT(corridor_path(nav, 5.0f, 70.0f), NB_PATH_COMPLETE);
    nb_navmesh* fresh = NULL;
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, cache, &fresh), NB_OK);
    CHECK(fresh && save_equal(fresh, nav));

    /* rebuilt_tiles beyond capacity: the count still says how many. */
    v = wall_box(10.0f, 66.0f, NB_NULL_AREA);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_OK);
    tiles[2] = -7;
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 1, &n), NB_OK);
    CHECK_INT(n, 4);
    CHECK_INT(tiles[2], -7);
    CHECK_INT(nb_navmesh_tile_count(nav), 2); /* tiles 1 and 2 are covered whole: no polygons, removed */

    nb_navmesh_destroy(ctx, fresh);
    nb_navmesh_destroy(ctx, nav);
    nb_tile_cache_destroy(ctx, cache);
}

/* Every polygon's flags, checked against want (tile 1, x 19.2 .. 38.4: want1). Returns how many polygons. */
static uint32_t check_flags(nb_navmesh* nav, uint16_t want, uint16_t want1)
{
    uint32_t count = 0;
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, NULL, 0, &count), NB_ERR_BUFFER_TOO_SMALL);
    nb_poly_ref* refs = (nb_poly_ref*)malloc((count ? count : 1) * sizeof(nb_poly_ref));
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, refs, count, &count), NB_OK);
    for (uint32_t i = 0; i < count; ++i) {
        float verts[NB_MAX_VERTS_PER_POLY * 3];
        int32_t nv = 0;
        uint16_t flags = 0;
        CHECK_INT(nb_navmesh_poly(nav, refs[i], verts, &nv, NULL, &flags, NULL), NB_OK);
        float cx = 0.0f;
        for (int32_t j = 0; j < nv; ++j)
            cx += verts[j * 3] / (float)nv;
        CHECK_INT(flags, cx > 19.2f && cx < 38.4f ? want1 : want);
    }
    free(refs);
    return count;
}

/* Flags set on polygons that an update rebuilds but leaves as they were stay on them; polygons an obstacle
 * reshapes get their baked flags. And a box up to 1e20 wide dirties the tiles it covers (the tile indices
 * overflowed int32: none was marked, and the update never applied it). */
static void test_flags_kept_and_huge_boxes(void)
{
    nb_tile_cache* cache = NULL;
    nb_navmesh* nav = NULL;
    if (!open_cache(corridor(), &cache, &nav))
        return;
    uint32_t count = 0;
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, NULL, 0, &count), NB_ERR_BUFFER_TOO_SMALL);
    nb_poly_ref* refs = (nb_poly_ref*)malloc((count ? count : 1) * sizeof(nb_poly_ref));
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, refs, count, &count), NB_OK);
    for (uint32_t i = 0; i < count; ++i)
        CHECK_INT(nb_navmesh_set_poly_flags(ctx, nav, refs[i], 4), NB_OK);
    free(refs);

    /* a box 50 m under tile 1's floor: it carves nothing, but tile 1 is rebuilt; every polygon keeps flags 4 */
    nb_volume v = wall_box(27.0f, 30.0f, NB_NULL_AREA);
    v.bmin[1] = -60.0f;
    v.bmax[1] = -50.0f;
    uint32_t id = 0, n = 0;
    int32_t tiles[16];
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 8, &n), NB_OK);
    CHECK_INT(n, 1);
    CHECK(has_pair(tiles, n, 1, 0));
    CHECK_INT(check_flags(nav, 4, 4), count);

    /* raised across the corridor: tile 1's polygons are cut, and get the baked flags (1) */
    v = wall_box(27.0f, 30.0f, NB_NULL_AREA);
    CHECK_INT(nb_tile_cache_update_obstacle(ctx, cache, id, &v), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 8, &n), NB_OK);
    CHECK(check_flags(nav, 4, 1) > 0);

    /* a box 2e20 wide marks all four tiles dirty */
    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    v = wall_box(-1e20f, 1e20f, NB_NULL_AREA);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_OK);
    CHECK_INT(nb_tile_cache_dirty_count(cache), 4);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(n, 4);
    CHECK_INT(nb_navmesh_tile_count(nav), 0); /* all carved away */

    nb_navmesh_destroy(ctx, nav);
    nb_tile_cache_destroy(ctx, cache);
}

static void test_area_obstacle_sets_area_ids(void)
{
    nb_tile_cache* cache = NULL;
    nb_navmesh* nav = NULL;
    if (!open_cache(corridor(), &cache, &nav))
        return;
    CHECK_INT(area_at(nav, 28.5f, 2.0f), NB_WALKABLE_AREA);
    nb_volume v = wall_box(26.0f, 31.0f, 5);
    uint32_t id = 0, n = 0;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(n, 1);
    CHECK_INT(area_at(nav, 28.5f, 2.0f), 5);
    CHECK_INT(area_at(nav, 22.0f, 2.0f), NB_WALKABLE_AREA);
    CHECK_INT(area_at(nav, 35.0f, 2.0f), NB_WALKABLE_AREA);
    CHECK_INT(corridor_path(nav, 5.0f, 70.0f), NB_PATH_COMPLETE); /* an area is not a wall */

    /* A later obstacle wins where they overlap; removing it gives the first one's area back. */
    nb_volume w = wall_box(28.0f, 29.0f, 9);
    uint32_t id2 = 0;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &w, &id2), NB_OK);
    CHECK(id2 != id);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(area_at(nav, 28.5f, 2.0f), 9);
    CHECK_INT(area_at(nav, 26.6f, 2.0f), 5);
    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, id2), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(area_at(nav, 28.5f, 2.0f), 5);

    /* A convex obstacle (its vertices are copied: the caller's array may go away). */
    float verts[12] = { 60.0f, 0, 0.5f, 64.0f, 0, 0.5f, 64.0f, 0, 3.5f, 60.0f, 0, 3.5f };
    nb_volume cv;
    memset(&cv, 0, sizeof(cv));
    cv.type = NB_VOLUME_CONVEX;
    cv.area = 7;
    cv.verts = verts;
    cv.vert_count = 4;
    cv.ymin = -1.0f;
    cv.ymax = 1.0f;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &cv, &id2), NB_OK);
    memset(verts, 0, sizeof(verts));
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK_INT(n, 1);
    CHECK_INT(area_at(nav, 62.0f, 2.0f), 7);

    nb_navmesh_destroy(ctx, nav);
    nb_tile_cache_destroy(ctx, cache);
}

static void test_bad_arguments(void)
{
    nb_bake_input in = corridor();
    nb_config cfg = tiled();
    nb_tile_cache* cache = NULL;
    nb_navmesh* nav = NULL;
    nb_config solo;
    memset(&solo, 0, sizeof(solo));
    CHECK_INT(nb_tile_cache_create(ctx, &in, &solo, NULL, 0, &cache), NB_ERR_INVALID_CONFIG);
    CHECK(cache == NULL);
    CHECK_INT(nb_tile_cache_create(ctx, NULL, &cfg, NULL, 0, &cache), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, NULL), NB_ERR_NULL_ARG);
    nb_bake_input empty = in;
    empty.mesh.triangle_count = 0;
    CHECK_INT(nb_tile_cache_create(ctx, &empty, &cfg, NULL, 0, &cache), NB_ERR_EMPTY_MESH);
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, &cache), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, cache, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, NULL, &nav), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, cache, &nav), NB_OK);

    uint32_t id = 123;
    nb_volume v = wall_box(27.0f, 30.0f, 64);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_ERR_INVALID_ARG);
    CHECK_INT(id, 0);
    CHECK(strstr(nb_context_message(ctx), "nb_tile_cache_add_obstacle") != NULL);
    v = wall_box(30.0f, 27.0f, 0);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_ERR_INVALID_ARG);
    v = wall_box(27.0f, 30.0f, 0);
    v.bmin[1] = NAN;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_ERR_NONFINITE);
    v = wall_box(27.0f, 30.0f, 0);
    v.type = (nb_volume_type)9;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_ERR_INVALID_ARG);
    nb_volume cv;
    memset(&cv, 0, sizeof(cv));
    cv.type = NB_VOLUME_CONVEX;
    cv.vert_count = 3;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &cv, &id), NB_ERR_NULL_ARG);
    nb_volume cyl;
    memset(&cyl, 0, sizeof(cyl));
    cyl.type = NB_VOLUME_CYLINDER;
    cyl.radius = -1.0f;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &cyl, &id), NB_ERR_INVALID_ARG);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, NULL, &id), NB_ERR_NULL_ARG);
    v = wall_box(27.0f, 30.0f, 0);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, NULL, &v, &id), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_cache_dirty_count(cache), 0); /* failures mark nothing */

    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, 999), NB_ERR_NOT_FOUND);
    CHECK_INT(nb_tile_cache_update_obstacle(ctx, cache, 999, &v), NB_ERR_NOT_FOUND);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &v, &id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, NULL), NB_OK);
    nb_volume bad = wall_box(46.0f, 49.0f, 70);
    CHECK_INT(nb_tile_cache_update_obstacle(ctx, cache, id, &bad), NB_ERR_INVALID_ARG);
    CHECK_INT(nb_tile_cache_dirty_count(cache), 0);
    CHECK_INT(nb_tile_cache_update_obstacle(ctx, cache, id, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, id), NB_OK);
    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, id), NB_ERR_NOT_FOUND);
    CHECK_INT(nb_tile_cache_update(ctx, NULL, nav, NULL, 0, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_cache_update(ctx, cache, NULL, NULL, 0, NULL), NB_ERR_NULL_ARG);

    /* A navmesh of another grid. */
    nb_navmesh_params p = *nb_navmesh_get_params(nav);
    p.tile_width *= 2.0f;
    nb_navmesh* other = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &p, &other), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, other, NULL, 0, NULL), NB_ERR_INVALID_ARG);

    nb_navmesh_destroy(ctx, other);
    nb_navmesh_destroy(ctx, nav);
    nb_tile_cache_destroy(ctx, cache);
    nb_tile_cache_destroy(ctx, NULL);
}

/* Every allocation of an update fails in turn: the update fails cleanly, nav saves to the same bytes as before with
 * the same polygon refs, the tiles stay dirty, and a later update succeeds. Also create and build_navmesh under the same regime. */
static void test_failing_allocator(void)
{
    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    nb_context* fctx = nb_context_create(&d);
    nb_bake_input in = corridor();
    nb_config cfg = tiled();
    nb_tile_cache* cache = NULL;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_tile_cache_create(fctx, &in, &cfg, NULL, 0, &cache), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(fctx, cache, &nav), NB_OK);
    if (!nav) {
        nb_tile_cache_destroy(fctx, cache);
        nb_context_destroy(fctx);
        return;
    }
    uint8_t* before = NULL;
    size_t before_size = 0;
    CHECK_INT(nb_navmesh_save(fctx, nav, &before, &before_size), NB_OK);
    /* Every polygon's ref: a failed update puts the tiles back where they were, so that refs held stay valid. */
    nb_poly_ref refs[4096], refs_after[4096];
    uint32_t nrefs = 0, nrefs_after = 0;
    CHECK_INT(nb_navmesh_poly_refs(fctx, nav, refs, 4096, &nrefs), NB_OK);
    CHECK(nrefs >= 2);
    /* Across the border of tiles 1 and 2: two tiles swapped, so a failure in the second rolls the first back. */
    nb_volume v = wall_box(37.5f, 39.5f, NB_NULL_AREA);
    uint32_t id = 0, n = 0;
    CHECK_INT(nb_tile_cache_add_obstacle(fctx, cache, &v, &id), NB_OK);
    int failures = 0, ok = 0;
    for (long k = 1; k < 20000 && !ok; ++k) {
        a.fail_at = a.calls + k;
        const nb_status st = nb_tile_cache_update(fctx, cache, nav, NULL, 0, &n);
        a.fail_at = 0;
        if (st == NB_OK) {
            ok = 1;
            break;
        }
        ++failures;
        if (st != NB_ERR_OUT_OF_MEMORY) {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            break;
        }
        uint8_t* after = NULL;
        size_t after_size = 0;
        CHECK_INT(nb_navmesh_save(fctx, nav, &after, &after_size), NB_OK);
        if (!(after_size == before_size && memcmp(after, before, before_size) == 0)) {
            CHECK(!"a failed update changed the navmesh");
            nb_bytes_free(fctx, after);
            break;
        }
        nb_bytes_free(fctx, after);
        CHECK_INT(nb_tile_cache_dirty_count(cache), 2);
        CHECK_INT(nb_navmesh_poly_refs(fctx, nav, refs_after, 4096, &nrefs_after), NB_OK);
        if (!(nrefs_after == nrefs && memcmp(refs, refs_after, nrefs * sizeof(nb_poly_ref)) == 0)) {
            CHECK(!"a failed update changed the polygons' refs");
            break;
        }
    }
    CHECK(ok);
    CHECK(failures > 10);
    CHECK_INT(n, 2);
    uint8_t* after = NULL;
    size_t after_size = 0;
    CHECK_INT(nb_navmesh_save(fctx, nav, &after, &after_size), NB_OK);
    CHECK(!(after_size == before_size && memcmp(after, before, before_size) == 0)); /* the update did happen */
    nb_bytes_free(fctx, after);
    nb_bytes_free(fctx, before);
    nb_navmesh_destroy(fctx, nav);
    nb_tile_cache_destroy(fctx, cache);
    nav = NULL;
    cache = NULL;

    /* create + build_navmesh + add_obstacle: every failure is clean (ASan checks for leaks). */
    ok = 0;
    for (long k = 1; k < 20000 && !ok; ++k) {
        a.fail_at = a.calls + k;
        nb_status st = nb_tile_cache_create(fctx, &in, &cfg, NULL, 0, &cache);
        if (st == NB_OK)
            st = nb_tile_cache_build_navmesh(fctx, cache, &nav);
        if (st == NB_OK)
            st = nb_tile_cache_add_obstacle(fctx, cache, &v, &id);
        a.fail_at = 0;
        if (st == NB_OK)
            ok = 1;
        else if (st != NB_ERR_OUT_OF_MEMORY)
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        nb_navmesh_destroy(fctx, nav);
        nb_tile_cache_destroy(fctx, cache);
        nav = NULL;
        cache = NULL;
        if (st != NB_OK && st != NB_ERR_OUT_OF_MEMORY)
            break;
    }
    CHECK(ok);
    nb_context_destroy(fctx);
    CHECK_INT(a.live, 0);
}

/* ---- an update failing with memory exhausted for good: undone whole ---- */

/* A flat square 76.8 m a side: 4 x 4 tiles of 64 x 0.3 m. */
#define PLANE_N 8
#define PLANE_SIZE 76.8f
static float plane_pos[(PLANE_N + 1) * (PLANE_N + 1) * 3];
static uint32_t plane_idx[PLANE_N * PLANE_N * 6];

static nb_bake_input plane(void)
{
    for (int i = 0; i <= PLANE_N; ++i)
        for (int j = 0; j <= PLANE_N; ++j) {
            float* p = &plane_pos[(i * (PLANE_N + 1) + j) * 3];
            p[0] = PLANE_SIZE * (float)i / PLANE_N;
            p[1] = 0.0f;
            p[2] = PLANE_SIZE * (float)j / PLANE_N;
        }
    for (int i = 0; i < PLANE_N; ++i)
        for (int j = 0; j < PLANE_N; ++j) {
            const uint32_t a = (uint32_t)(i * (PLANE_N + 1) + j), b = a + 1, c = a + PLANE_N + 1, d = c + 1;
            const uint32_t t[6] = { a, b, d, a, d, c };
            memcpy(&plane_idx[(i * PLANE_N + j) * 6], t, sizeof(t));
        }
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = plane_pos;
    in.mesh.vertex_count = (PLANE_N + 1) * (PLANE_N + 1);
    in.mesh.indices = plane_idx;
    in.mesh.triangle_count = PLANE_N * PLANE_N * 2;
    return in;
}

static nb_offmesh_link plane_link(float x0, float z0, float x1, float z1)
{
    nb_offmesh_link l;
    memset(&l, 0, sizeof(l));
    l.start[0] = x0;
    l.start[2] = z0;
    l.end[0] = x1;
    l.end[2] = z1;
    l.radius = 1.0f;
    l.bidirectional = 1;
    l.user_id = (uint32_t)(x0 * 100 + z0);
    return l;
}

/* A box carving the plane away over x0..x1, z0..z1. */
static nb_volume plane_hole(float x0, float z0, float x1, float z1)
{
    nb_volume v;
    memset(&v, 0, sizeof(v));
    v.type = NB_VOLUME_BOX;
    v.area = NB_NULL_AREA;
    const float lo[3] = { x0, -1.0f, z0 }, hi[3] = { x1, 2.0f, z1 };
    memcpy(v.bmin, lo, sizeof(lo));
    memcpy(v.bmax, hi, sizeof(hi));
    return v;
}

/* Everything a query can see of nav's tiles, in order: each tile's slot, salt and polygons, every polygon's links in
 * the order they are walked, the far off-mesh entries, the counts. */
typedef struct link_dump {
    uint32_t* v;
    size_t n, cap;
} link_dump;

static void dump_put(link_dump* d, uint32_t x)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 1024;
        d->v = (uint32_t*)realloc(d->v, d->cap * sizeof(uint32_t));
    }
    d->v[d->n++] = x;
}

static link_dump dump_links(const nb_navmesh* nav)
{
    link_dump d = { NULL, 0, 0 };
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        dump_put(&d, s);
        dump_put(&d, t->salt);
        dump_put(&d, t->v.npolys);
        for (uint32_t p = 0; p < t->v.npolys; ++p) {
            for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next) {
                const nb_link* l = &t->links[li];
                dump_put(&d, l->ref);
                dump_put(&d, (uint32_t)l->edge | (uint32_t)l->side << 8 | (uint32_t)l->nedge << 16);
            }
            dump_put(&d, 0xffffffffu);
        }
    }
    for (uint32_t i = 0; i < nav->far_count; ++i) {
        dump_put(&d, nav->far[i].slot);
        dump_put(&d, nav->far[i].k);
        dump_put(&d, (uint32_t)nav->far[i].end_x);
        dump_put(&d, (uint32_t)nav->far[i].end_z);
    }
    uint32_t mag;
    memcpy(&mag, &nav->coord_mag, sizeof(mag));
    dump_put(&d, nav->tile_count);
    dump_put(&d, nav->poly_count);
    dump_put(&d, mag);
    return d;
}

/* With memory gone from the Nth allocation of an update on, for every N: the update fails with
 * NB_ERR_OUT_OF_MEMORY and the navmesh is as it was, to its links' order (the tiles swapped in before the failure are
 * undone without allocating). Nine dirty tiles, with border links between them and to clean tiles, and off-mesh
 * links to the next tile and across several. */
static void test_update_undone_with_memory_gone(void)
{
    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    nb_context* fctx = nb_context_create(&d);
    const nb_bake_input in = plane();
    const nb_config cfg = tiled();
    const nb_offmesh_link links[4] = {
        plane_link(5.0f, 5.0f, 70.0f, 70.0f),   /* clean (0, 0) to clean (3, 3) */
        plane_link(70.0f, 5.0f, 25.0f, 50.0f),  /* clean (3, 0) into dirty (1, 2), far */
        plane_link(17.0f, 50.0f, 21.0f, 50.0f), /* dirty (0, 2) to dirty (1, 2), the next tile */
        plane_link(5.0f, 30.0f, 50.0f, 70.0f),  /* dirty (0, 1) to clean (2, 3), far */
    };
    const nb_volume box = plane_hole(15.0f, 15.0f, 45.0f, 45.0f);

    /* two of each: one to count an update's allocations, one to fail */
    nb_tile_cache *cache = NULL, *twin = NULL;
    nb_navmesh *nav = NULL, *twin_nav = NULL;
    uint32_t id = 0, n = 0;
    CHECK_INT(nb_tile_cache_create(fctx, &in, &cfg, links, 4, &cache), NB_OK);
    CHECK_INT(nb_tile_cache_create(fctx, &in, &cfg, links, 4, &twin), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(fctx, cache, &nav), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(fctx, twin, &twin_nav), NB_OK);
    if (!nav || !twin_nav)
        goto done;
    CHECK_INT(nb_tile_cache_add_obstacle(fctx, cache, &box, &id), NB_OK);
    CHECK_INT(nb_tile_cache_add_obstacle(fctx, twin, &box, &id), NB_OK);
    const uint32_t dirty = nb_tile_cache_dirty_count(cache);
    CHECK(dirty >= 9);
    CHECK(nav->far_count >= 3);
    const long start = a.calls;
    CHECK_INT(nb_tile_cache_update(fctx, twin, twin_nav, NULL, 0, &n), NB_OK);
    const long total = a.calls - start;
    CHECK(total > 50);

    link_dump before = dump_links(nav);
    uint8_t* saved = NULL;
    size_t saved_size = 0;
    CHECK_INT(nb_navmesh_save(fctx, nav, &saved, &saved_size), NB_OK);
    int failures = 0, swapped_then_failed = 0, updated = 0;
    int named_swap = 0;
    for (long k = 1; k <= total + 1 && !updated; ++k) {
        /* every allocation of the swaps (the last ones), one in 25 of the tiles' builds before them */
        if (k < total - 400 && k % 25)
            continue;
        a.fail_from = a.calls + k;
        const uint32_t gen = nav->generation;
        const nb_status st = nb_tile_cache_update(fctx, cache, nav, NULL, 0, &n);
        a.fail_from = 0;
        if (st == NB_OK) {
            /* the link arrays the failed swaps grew stay grown: the last update needs fewer allocations */
            updated = 1;
            break;
        }
        if (st != NB_ERR_OUT_OF_MEMORY) {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            break;
        }
        ++failures;
        /* named by the function called (the swap), not by the add it does inside */
        const char* msg = nb_context_message(fctx);
        CHECK(strstr(msg, "nb_navmesh_add_tile") == NULL);
        named_swap += strncmp(msg, "nb_navmesh_swap_tile: out of memory", 35) == 0;
        link_dump after = dump_links(nav);
        const int same = after.n == before.n && memcmp(after.v, before.v, before.n * sizeof(uint32_t)) == 0;
        free(after.v);
        if (!same) {
            fprintf(stderr, "  allocation %ld of %ld failing for good left other links\n", k, total);
            CHECK(!"a failed update changed the navmesh");
            break;
        }
        uint8_t* again = NULL;
        size_t again_size = 0;
        CHECK_INT(nb_navmesh_save(fctx, nav, &again, &again_size), NB_OK);
        CHECK(again_size == saved_size && memcmp(again, saved, saved_size) == 0);
        nb_bytes_free(fctx, again);
        swapped_then_failed += nav->generation != gen; /* tiles were swapped in, then undone */
        CHECK_INT(nb_tile_cache_dirty_count(cache), dirty);
    }
    CHECK(failures > 300);
    CHECK(swapped_then_failed > 9);
    CHECK(named_swap > 0);
    /* with memory back, the update happens */
    CHECK(updated);
    CHECK_INT(n, dirty);
    CHECK(save_equal(nav, twin_nav));
    nb_bytes_free(fctx, saved);
    free(before.v);
done:
    nb_navmesh_destroy(fctx, nav);
    nb_navmesh_destroy(fctx, twin_nav);
    nb_tile_cache_destroy(fctx, cache);
    nb_tile_cache_destroy(fctx, twin);
    nb_context_destroy(fctx);
    CHECK_INT(a.live, 0);
}

/* Random runs of swaps (a tile replaced by another version of it, removed, or put where there is none, the same tile
 * again in one run), then undone in reverse: each time the navmesh is as before, to its links' order. Then kept:
 * the same bytes as adding the final tiles; and ASan sees every undo's memory freed either way. */
static void test_swaps_undone_in_any_order(void)
{
    const nb_bake_input in = plane();
    const nb_config cfg = tiled();
    const nb_offmesh_link links[4] = {
        plane_link(5.0f, 5.0f, 70.0f, 70.0f),
        plane_link(70.0f, 5.0f, 25.0f, 50.0f),
        plane_link(17.0f, 50.0f, 21.0f, 50.0f),
        plane_link(5.0f, 30.0f, 50.0f, 70.0f),
    };
    const nb_volume box = plane_hole(10.0f, 25.0f, 60.0f, 33.0f);
    nb_tile_cache *plain = NULL, *carved = NULL;
    nb_navmesh *nav = NULL, *other = NULL;
    uint32_t id = 0, n = 0;
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, links, 4, &plain), NB_OK);
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, links, 4, &carved), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, plain, &nav), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, carved, &other), NB_OK);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, carved, &box, &id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, carved, other, NULL, 0, &n), NB_OK);
    CHECK(n >= 4);
    if (!nav || !other)
        goto done;
    /* every version of each of the 16 tiles: [0] as baked, [1] carved (or NULL: none) */
    uint8_t* version[16][2];
    size_t version_size[16][2];
    for (int t = 0; t < 16; ++t)
        for (int v = 0; v < 2; ++v) {
            const uint8_t* d = NULL;
            size_t size = 0;
            version[t][v] = NULL;
            version_size[t][v] = 0;
            if (nb_navmesh_tile_data(v ? other : nav, t % 4, t / 4, &d, &size) == NB_OK) {
                version[t][v] = (uint8_t*)malloc(size);
                memcpy(version[t][v], d, size);
                version_size[t][v] = size;
            }
        }
    /* The runs start from the 3 x 3 tiles of one corner: the others come in by swaps into empty cells, reaching
     * farther out than the navmesh did (undone, its extent must come back too). */
    {
        nb_navmesh* corner = NULL;
        CHECK_INT(nb_navmesh_create(ctx, nb_navmesh_get_params(nav), &corner), NB_OK);
        for (int t = 0; t < 16 && corner; ++t)
            if (t % 4 < 3 && t / 4 < 3 && version[t][0])
                CHECK_INT(nb_navmesh_add_tile(ctx, corner, version[t][0], version_size[t][0]), NB_OK);
        if (corner) {
            nb_navmesh_destroy(ctx, nav);
            nav = corner;
        }
    }
    const float extent = nav->coord_mag;
    int wider = 0;
    uint32_t rng = 12345;
    int runs = 0, differed = 0;
    for (int run = 0; run < 300; ++run) {
        const int kept = run % 10 == 9; /* every tenth run keeps its swaps */
        link_dump before = dump_links(nav);
        nb_tile_undo* undo[8];
        int swaps = 1 + (int)(nbt_rand(&rng) % 8);
        for (int k = 0; k < swaps; ++k) {
            const int t = (int)(nbt_rand(&rng) % 16), what = (int)(nbt_rand(&rng) % 3); /* baked, carved, none */
            const uint8_t* data = what < 2 ? version[t][what] : NULL;
            const size_t size = what < 2 ? version_size[t][what] : 0;
            CHECK_INT(nb_navmesh_swap_tile(ctx, nav, t % 4, t / 4, data, size, &undo[k]), NB_OK);
        }
        link_dump mid = dump_links(nav);
        differed += mid.n != before.n || memcmp(mid.v, before.v, before.n * sizeof(uint32_t)) != 0;
        wider += nav->coord_mag > extent;
        free(mid.v);
        if (kept) {
            for (int k = 0; k < swaps; ++k)
                nb_navmesh_swap_done(ctx, undo[k]);
        } else {
            for (int k = swaps; k-- > 0;)
                nb_navmesh_swap_undo(ctx, nav, undo[k]);
            link_dump after = dump_links(nav);
            const int same = after.n == before.n && memcmp(after.v, before.v, before.n * sizeof(uint32_t)) == 0;
            free(after.v);
            if (!same) {
                fprintf(stderr, "  run %d (%d swaps) undone left other links\n", run, swaps);
                CHECK(!"swaps undone changed the navmesh");
                free(before.v);
                break;
            }
        }
        free(before.v);
        ++runs;
    }
    CHECK_INT(runs, 300);
    CHECK(differed > 250);
    CHECK(wider > 10);
    /* the tiles now in nav, added one by one to an empty navmesh: the same bytes */
    {
        nb_navmesh* fresh = NULL;
        CHECK_INT(nb_navmesh_create(ctx, nb_navmesh_get_params(nav), &fresh), NB_OK);
        for (int t = 0; t < 16 && fresh; ++t) {
            const uint8_t* d = NULL;
            size_t size = 0;
            if (nb_navmesh_tile_data(nav, t % 4, t / 4, &d, &size) == NB_OK)
                CHECK_INT(nb_navmesh_add_tile(ctx, fresh, d, size), NB_OK);
        }
        if (fresh)
            CHECK(save_equal(nav, fresh));
        nb_navmesh_destroy(ctx, fresh);
    }
    for (int t = 0; t < 16; ++t)
        for (int v = 0; v < 2; ++v)
            free(version[t][v]);
done:
    nb_navmesh_destroy(ctx, nav);
    nb_navmesh_destroy(ctx, other);
    nb_tile_cache_destroy(ctx, plain);
    nb_tile_cache_destroy(ctx, carved);
}

/* A swap undone, then the tile swapped again: refs of the tile undone stay stale (its salt is not given again), as
 * after a removal and two adds. And undos out of order (a caller's bug) never write outside a tile's memory. */
static void test_swap_salts_and_misuse(void)
{
    nb_tile_cache* cache = NULL;
    nb_navmesh* nav = NULL;
    if (!open_cache(plane(), &cache, &nav))
        return;
    const nb_bake_input in = plane();
    const nb_config cfg = tiled();
    const uint8_t* d = NULL;
    size_t size = 0;
    CHECK_INT(nb_navmesh_tile_data(nav, 1, 1, &d, &size), NB_OK);
    uint8_t* blob = (uint8_t*)malloc(size);
    memcpy(blob, d, size);
    const nb_tile* t = nb_navmesh_tile_at(nav, 1, 1);
    const nb_poly_ref kept = nb_navmesh_ref_of(nav, t, 0);
    nb_tile_undo* undo = NULL;
    CHECK_INT(nb_navmesh_swap_tile(ctx, nav, 1, 1, blob, size, &undo), NB_OK);
    const nb_poly_ref undone = nb_navmesh_ref_of(nav, nb_navmesh_tile_at(nav, 1, 1), 0);
    CHECK(undone != kept);
    nb_navmesh_swap_undo(ctx, nav, undo);
    CHECK(nb_navmesh_resolve(nav, kept, NULL) != NULL); /* the tile put back: its refs valid again */
    CHECK(nb_navmesh_resolve(nav, undone, NULL) == NULL);
    CHECK_INT(nb_navmesh_swap_tile(ctx, nav, 1, 1, blob, size, &undo), NB_OK);
    CHECK(nb_navmesh_resolve(nav, undone, NULL) == NULL); /* not given again */
    CHECK(nb_navmesh_resolve(nav, kept, NULL) == NULL);
    nb_navmesh_swap_done(ctx, undo);

    /* out of order: (1, 1) swapped, then its neighbour (2, 1) replaced by a version with more polygons (a hole cut
     * in it) and kept, then (1, 1) undone: the copy of (2, 1)'s links is not of the tile there now and is left alone
     * (ASan: nothing written past its polygons) */
    nb_tile_cache* holed = NULL;
    nb_navmesh* holed_nav = NULL;
    const nb_volume hole = plane_hole(45.0f, 25.0f, 50.0f, 30.0f);
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, &holed), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, holed, &holed_nav), NB_OK);
    uint32_t id = 0, n = 0;
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, holed, &hole, &id), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, holed, holed_nav, NULL, 0, &n), NB_OK);
    CHECK_INT(nb_navmesh_tile_data(holed_nav, 2, 1, &d, &size), NB_OK);
    CHECK(nb_navmesh_tile_at(holed_nav, 2, 1)->v.npolys > nb_navmesh_tile_at(nav, 2, 1)->v.npolys);
    uint8_t* next = (uint8_t*)malloc(size);
    memcpy(next, d, size);
    nb_navmesh_destroy(ctx, holed_nav);
    nb_tile_cache_destroy(ctx, holed);
    nb_tile_undo* first = NULL;
    nb_tile_undo* second = NULL;
    CHECK_INT(nb_navmesh_swap_tile(ctx, nav, 1, 1, NULL, 0, &first), NB_OK);
    CHECK_INT(nb_navmesh_swap_tile(ctx, nav, 2, 1, next, size, &second), NB_OK);
    nb_navmesh_swap_done(ctx, second);
    nb_navmesh_swap_undo(ctx, nav, first);
    CHECK(nb_navmesh_tile_at(nav, 1, 1) != NULL);
    free(next);
    free(blob);
    nb_navmesh_destroy(ctx, nav);
    nb_tile_cache_destroy(ctx, cache);
}

/* ---- nb_tile_rebuild: the same bytes as the cache's update ---- */

/* The cache blob of every tile of a level (NULL where a tile has no triangles), from a grid index. */
static uint8_t** index_blobs(const nb_bake_input* in, const nb_config* cfg, size_t** sizes, int32_t* ntx, int32_t* ntz)
{
    nb_grid_index* index = NULL;
    CHECK_INT(nb_grid_index_create(ctx, in, cfg, &index), NB_OK);
    nb_grid_index_grid(index, NULL, ntx, ntz);
    const int32_t n = *ntx * *ntz;
    uint8_t** blobs = (uint8_t**)calloc((size_t)n, sizeof(uint8_t*));
    *sizes = (size_t*)calloc((size_t)n, sizeof(size_t));
    for (int32_t i = 0; i < n; ++i) {
        uint8_t* tile = NULL;
        size_t size = 0;
        CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, i % *ntx, i / *ntx, &tile, &size, &blobs[i],
                                          &(*sizes)[i], NULL),
                  NB_OK);
        nb_bytes_free(ctx, tile);
    }
    nb_grid_index_destroy(ctx, index);
    return blobs;
}

static void free_blobs(uint8_t** blobs, size_t* sizes, int32_t n)
{
    for (int32_t i = 0; i < n; ++i)
        nb_bytes_free(ctx, blobs[i]);
    free(blobs);
    free(sizes);
}

/* Every tile: nb_tile_rebuild from the index's cache blob with the obstacles and links gives the bytes nav holds
 * for it (or neither has the tile). Returns the number of tiles compared that have data. */
static int rebuild_matches_nav(const nb_navmesh* nav, const nb_config* cfg, uint8_t** blobs, const size_t* sizes,
                               int32_t ntx, int32_t ntz, const nb_offmesh_link* links, uint32_t nlinks,
                               const nb_volume* obstacles, uint32_t nobstacles)
{
    int with_data = 0, mismatches = 0;
    for (int32_t i = 0; i < ntx * ntz; ++i) {
        const uint8_t* cur = NULL;
        size_t cur_size = 0;
        const int has = nb_navmesh_tile_data(nav, i % ntx, i / ntx, &cur, &cur_size) == NB_OK;
        if (!blobs[i]) {
            mismatches += has;
            continue;
        }
        uint8_t* data = NULL;
        size_t size = 0;
        CHECK_INT(nb_tile_rebuild(ctx, cfg, blobs[i], sizes[i], links, nlinks, obstacles, nobstacles, &data, &size),
                  NB_OK);
        if ((data != NULL) != has || (data && (size != cur_size || memcmp(data, cur, size) != 0))) {
            if (mismatches++ < 3)
                fprintf(stderr, "  tile (%d, %d) differs (%zu vs %zu bytes)\n", i % ntx, i / ntx, size, cur_size);
        }
        with_data += data != NULL;
        nb_bytes_free(ctx, data);
    }
    CHECK_INT(mismatches, 0);
    return with_data;
}

static void test_rebuild_matches_update(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_config cfg = tiled();
    size_t* sizes = NULL;
    int32_t ntx = 0, ntz = 0;
    uint8_t** blobs = index_blobs(&in, &cfg, &sizes, &ntx, &ntz);
    nb_tile_cache* cache = NULL;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, &cache), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, cache, &nav), NB_OK);
    if (!nav) {
        nb_tile_cache_destroy(ctx, cache);
        free_blobs(blobs, sizes, ntx * ntz);
        nb_obj_free(&obj);
        return;
    }
    /* no obstacles: every tile as baked */
    CHECK(rebuild_matches_nav(nav, &cfg, blobs, sizes, ntx, ntz, NULL, 0, NULL, 0) > 4);

    /* three obstacles, overlapping, across tile borders: the later wins where they overlap */
    const nb_navmesh_params* p = nb_navmesh_get_params(nav);
    nb_volume obs[3];
    memset(obs, 0, sizeof(obs));
    obs[0].type = NB_VOLUME_CYLINDER;
    obs[0].area = NB_NULL_AREA;
    obs[0].center[0] = p->origin[0] + 2.0f * p->tile_width;
    obs[0].center[1] = -100.0f;
    obs[0].center[2] = p->origin[2] + 1.0f * p->tile_depth + 3.0f;
    obs[0].radius = 3.0f;
    obs[0].height = 300.0f;
    obs[1].type = NB_VOLUME_BOX;
    obs[1].area = 7;
    obs[1].bmin[0] = obs[0].center[0] - 6.0f;
    obs[1].bmin[1] = -100.0f;
    obs[1].bmin[2] = obs[0].center[2] - 2.0f;
    obs[1].bmax[0] = obs[0].center[0] + 1.0f;
    obs[1].bmax[1] = 100.0f;
    obs[1].bmax[2] = obs[0].center[2] + 9.0f;
    obs[2] = obs[0];
    obs[2].area = 12;
    obs[2].center[0] -= 0.5f * p->tile_width;
    obs[2].radius = 1.5f;
    uint32_t ids[3], n = 0;
    for (int k = 0; k < 3; ++k)
        CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &obs[k], &ids[k]), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK(n >= 2);
    CHECK(rebuild_matches_nav(nav, &cfg, blobs, sizes, ntx, ntz, NULL, 0, obs, 3) > 4);

    /* the dirty box: exactly the tiles whose box the volume's overlaps were rebuilt */
    float lo[2], hi[2];
    uint32_t expect = 0;
    for (int32_t i = 0; i < ntx * ntz; ++i) {
        nb_tile_dirty_box(p, &cfg, i % ntx, i / ntx, lo, hi);
        expect += blobs[i] && obs[2].center[0] + obs[2].radius >= lo[0] && obs[2].center[0] - obs[2].radius <= hi[0] &&
                  obs[2].center[2] + obs[2].radius >= lo[1] && obs[2].center[2] - obs[2].radius <= hi[1];
    }
    CHECK_INT(nb_tile_cache_remove_obstacle(ctx, cache, ids[2]), NB_OK);
    CHECK_INT(nb_tile_cache_dirty_count(cache), expect);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n), NB_OK);
    CHECK(rebuild_matches_nav(nav, &cfg, blobs, sizes, ntx, ntz, NULL, 0, obs, 2) > 4);

    nb_navmesh_destroy(ctx, nav);
    nb_tile_cache_destroy(ctx, cache);
    free_blobs(blobs, sizes, ntx * ntz);
    nb_obj_free(&obj);
}

static void test_rebuild_errors(void)
{
    nb_bake_input in = corridor();
    nb_config cfg = tiled();
    size_t* sizes = NULL;
    int32_t ntx = 0, ntz = 0;
    uint8_t** blobs = index_blobs(&in, &cfg, &sizes, &ntx, &ntz);
    CHECK_INT(ntx, 4);
    if (!blobs[1]) {
        free_blobs(blobs, sizes, ntx * ntz);
        return;
    }
    uint8_t* data = (uint8_t*)1;
    size_t size = 9;
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1], NULL, 0, NULL, 0, &data, &size), NB_OK);
    CHECK(data != NULL);
    nb_bytes_free(ctx, data);
    /* a config the cache was not baked with: each field named */
    static const struct {
        int field;
        double value;
        const char* needle;
    } wrong[] = {
        { 0, 0.31, "cell_size" },       { 1, 0.25, "cell_height" },    { 2, 3.0, "agent_height" },
        { 4, 0.5, "agent_max_climb" },  { 3, 1.2, "agent_radius" },    { -1, 32, "tile_size" },
    };
    for (size_t k = 0; k < sizeof(wrong) / sizeof(wrong[0]); ++k) {
        nb_config c = cfg;
        if (wrong[k].field < 0)
            c.tile_size = (int32_t)wrong[k].value;
        else
            nb_config_set(&c, nb_config_field_index(wrong[k].needle), wrong[k].value);
        CHECK_STATUS(ctx, nb_tile_rebuild(ctx, &c, blobs[1], sizes[1], NULL, 0, NULL, 0, &data, &size),
                     NB_ERR_INVALID_ARG, wrong[k].needle);
        CHECK(data == NULL);
    }
    nb_config solo = cfg;
    solo.tile_size = 0;
    CHECK_STATUS(ctx, nb_tile_rebuild(ctx, &solo, blobs[1], sizes[1], NULL, 0, NULL, 0, &data, &size),
                 NB_ERR_INVALID_ARG, "tile_size");
    nb_config bad = cfg;
    bad.cell_size = -1.0f;
    CHECK_INT(nb_tile_rebuild(ctx, &bad, blobs[1], sizes[1], NULL, 0, NULL, 0, &data, &size), NB_ERR_INVALID_CONFIG);
    /* a region-only setting is not part of the field: allowed (a different but valid tile) */
    nb_config other = cfg;
    other.region_min_size = 2.0f;
    CHECK_INT(nb_tile_rebuild(ctx, &other, blobs[1], sizes[1], NULL, 0, NULL, 0, &data, &size), NB_OK);
    nb_bytes_free(ctx, data);
    nb_volume v = wall_box(27.0f, 30.0f, 64);
    CHECK_STATUS(ctx, nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1], NULL, 0, &v, 1, &data, &size),
                 NB_ERR_INVALID_ARG, "obstacle 0");
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1], NULL, 0, NULL, 1, &data, &size), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1], NULL, 2, NULL, 0, &data, &size), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, NULL, 0, NULL, 0, NULL, 0, &data, &size), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1], NULL, 0, NULL, 0, NULL, &size), NB_ERR_NULL_ARG);
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1] - 1, NULL, 0, NULL, 0, &data, &size), NB_ERR_CORRUPT);
    /* an obstacle covering the tile whole: no polygons, no tile */
    v = wall_box(10.0f, 50.0f, NB_NULL_AREA);
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1], NULL, 0, &v, 1, &data, &size), NB_OK);
    CHECK(data == NULL && size == 0);

    /* failing allocator: clean failures, then the same bytes */
    v = wall_box(27.0f, 30.0f, 5);
    uint8_t* ref = NULL;
    size_t ref_size = 0;
    CHECK_INT(nb_tile_rebuild(ctx, &cfg, blobs[1], sizes[1], NULL, 0, &v, 1, &ref, &ref_size), NB_OK);
    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    nb_context* fctx = nb_context_create(&d);
    int ok = 0, failures = 0;
    for (long k = 1; k < 20000 && !ok; ++k) {
        a.fail_at = a.calls + k;
        data = NULL;
        const nb_status st = nb_tile_rebuild(fctx, &cfg, blobs[1], sizes[1], NULL, 0, &v, 1, &data, &size);
        a.fail_at = 0;
        if (st == NB_OK) {
            ok = 1;
            CHECK(ref && size == ref_size && memcmp(data, ref, size) == 0);
        } else {
            ++failures;
            CHECK(data == NULL);
            if (st != NB_ERR_OUT_OF_MEMORY) {
                CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
                break;
            }
        }
        nb_bytes_free(fctx, data);
        CHECK_INT(a.live, 1);
        if (a.live != 1)
            break;
    }
    CHECK(ok);
    CHECK(failures > 10);
    nb_context_destroy(fctx);
    nb_bytes_free(ctx, ref);
    free_blobs(blobs, sizes, ntx * ntz);
}

/* ---- off-mesh links in the cache ---- */

static nb_offmesh_link corridor_link(float x0, float x1)
{
    nb_offmesh_link l;
    memset(&l, 0, sizeof(l));
    l.start[0] = x0;
    l.start[2] = CORR_WIDTH / 2;
    l.end[0] = x1;
    l.end[2] = CORR_WIDTH / 2;
    l.radius = 1.0f;
    l.user_id = (uint32_t)x0;
    return l;
}

/* Straight path along the corridor's middle: NB_PATH_* and the number of off-mesh points on it. */
static int corridor_straight(const nb_navmesh* nav, float x0, float x1, int* offmesh_points)
{
    *offmesh_points = 0;
    nb_query* q = NULL;
    if (nb_query_create(ctx, nav, 0, &q) != NB_OK)
        return -1;
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float s[3] = { x0, 0.0f, CORR_WIDTH / 2 }, e[3] = { x1, 0.0f, CORR_WIDTH / 2 };
    const float ext[3] = { 1.0f, 1.0f, 1.0f };
    nb_poly_ref sr = 0, er = 0, path[256];
    int32_t n = 0, np = 0;
    int partial = 0, result = NB_PATH_NONE;
    float pts[3 * 64];
    uint8_t flags[64];
    nb_query_find_nearest_poly(q, s, ext, &f, &sr, NULL);
    nb_query_find_nearest_poly(q, e, ext, &f, &er, NULL);
    if (sr && er && nb_query_find_path(q, sr, er, s, e, &f, path, &n, 256, &partial) == NB_OK && n > 0) {
        result = partial ? NB_PATH_PARTIAL : NB_PATH_COMPLETE;
        if (nb_query_straight_path(q, s, e, path, n, pts, flags, NULL, &np, 64, 0) == NB_OK)
            for (int32_t i = 0; i < np; ++i)
                *offmesh_points += (flags[i] & NB_STRAIGHT_POINT_OFFMESH) != 0;
    }
    nb_query_destroy(ctx, q);
    return result;
}

static void test_links_survive_updates(void)
{
    nb_bake_input in = corridor();
    nb_config cfg = tiled();
    /* tile 1 is x 19.2 .. 38.4, tile 2 is 38.4 .. 57.6: one link inside tile 1, one from tile 1 into tile 2 */
    const nb_offmesh_link links[2] = { corridor_link(20.0f, 35.0f), corridor_link(36.5f, 45.0f) };
    nb_tile_cache* cache = NULL;
    nb_navmesh *nav = NULL, *ref = NULL;
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, links, 2, &cache), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, cache, &nav), NB_OK);
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, links, 2, &ref), NB_OK);
    if (!nav || !ref) {
        nb_navmesh_destroy(ctx, ref);
        nb_navmesh_destroy(ctx, nav);
        nb_tile_cache_destroy(ctx, cache);
        return;
    }
    CHECK(save_equal(ref, nav)); /* links and all */
    int off = 0;
    CHECK_INT(corridor_straight(nav, 5.0f, 70.0f, &off), NB_PATH_COMPLETE);

    /* a wall in tile 1 between the first link's ends: only the link gets past it */
    nb_volume wall = wall_box(27.0f, 30.0f, NB_NULL_AREA);
    uint32_t id1 = 0, id2 = 0, n = 0;
    int32_t tiles[8];
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &wall, &id1), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 4, &n), NB_OK);
    CHECK_INT(n, 1);
    CHECK(has_pair(tiles, n, 1, 0));
    CHECK_INT(corridor_straight(nav, 5.0f, 70.0f, &off), NB_PATH_COMPLETE);
    CHECK_INT(off, 2); /* the link's two ends */

    /* a wall in tile 2 only, between the second link's ends: tile 2 is rebuilt, the link from tile 1 lands again */
    nb_volume wall2 = wall_box(41.0f, 43.0f, NB_NULL_AREA);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, cache, &wall2, &id2), NB_OK);
    CHECK_INT(nb_tile_cache_update(ctx, cache, nav, tiles, 4, &n), NB_OK);
    CHECK_INT(n, 1);
    CHECK(has_pair(tiles, n, 2, 0));
    CHECK_INT(corridor_straight(nav, 5.0f, 70.0f, &off), NB_PATH_COMPLETE);
    CHECK_INT(off, 4);
    /* the same cache without links: both walls cut the corridor */
    nb_tile_cache* plain = NULL;
    nb_navmesh* pnav = NULL;
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, &plain), NB_OK);
    CHECK_INT(nb_tile_cache_add_obstacle(ctx, plain, &wall, &id1), NB_OK);
    CHECK_INT(nb_tile_cache_build_navmesh(ctx, plain, &pnav), NB_OK);
    CHECK_INT(corridor_straight(pnav, 5.0f, 70.0f, &off), NB_PATH_PARTIAL);
    nb_navmesh_destroy(ctx, pnav);
    nb_tile_cache_destroy(ctx, plain);

    /* nb_tile_rebuild with the same links and obstacles: the bytes the cache put in nav */
    size_t* sizes = NULL;
    int32_t ntx = 0, ntz = 0;
    uint8_t** blobs = index_blobs(&in, &cfg, &sizes, &ntx, &ntz);
    const nb_volume obs[2] = { wall, wall2 };
    CHECK_INT(rebuild_matches_nav(nav, &cfg, blobs, sizes, ntx, ntz, links, 2, obs, 2), 4);
    free_blobs(blobs, sizes, ntx * ntz);

    nb_tile_cache* c2 = (nb_tile_cache*)1;
    /* a link starting in a tile without triangles gets a tile of its own (no ground: its start unattached), in the
     * cache's navmesh as in nb_bake_navmesh's; no obstacle ever rebuilds that tile (it has no cached field) */
    nb_bake_input part = in;
    part.mesh.triangle_count = 10; /* the first 5 segments, x 0 .. 20; the bounds keep the 4 tiles */
    const float bmin[3] = { 0, 0, 0 }, bmax[3] = { CORR_LEN, 0, CORR_WIDTH };
    part.bmin = bmin;
    part.bmax = bmax;
    const nb_offmesh_link stray[2] = { corridor_link(50.0f, 55.0f), corridor_link(45.0f, 10.0f) };
    nb_navmesh *n2 = NULL, *n3 = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &part, &cfg, stray, 2, &n2), NB_OK);
    CHECK_INT(nb_tile_cache_create(ctx, &part, &cfg, stray, 2, &c2), NB_OK);
    if (c2 == (nb_tile_cache*)1)
        c2 = NULL;
    if (c2)
        CHECK_INT(nb_tile_cache_build_navmesh(ctx, c2, &n3), NB_OK);
    if (n2 && n3) {
        CHECK(save_equal(n2, n3));
        const uint8_t* t2 = NULL;
        size_t t2_size = 0;
        CHECK_INT(nb_navmesh_tile_data(n3, 2, 0, &t2, &t2_size), NB_OK);
        CHECK_INT(nb_navmesh_tile_data(n3, 3, 0, &t2, &t2_size), NB_ERR_NOT_FOUND); /* no floor, no link start */
        nb_volume all = wall_box(0.0f, CORR_LEN, NB_NULL_AREA);
        uint32_t id3 = 0;
        CHECK_INT(nb_tile_cache_add_obstacle(ctx, c2, &all, &id3), NB_OK);
        CHECK_INT(nb_tile_cache_update(ctx, c2, n3, tiles, 4, &n), NB_OK);
        CHECK(!has_pair(tiles, n, 2, 0));
        CHECK_INT(nb_navmesh_tile_data(n3, 2, 0, &t2, &t2_size), NB_OK);
        CHECK_INT(nb_tile_cache_remove_obstacle(ctx, c2, id3), NB_OK);
        CHECK_INT(nb_tile_cache_update(ctx, c2, n3, tiles, 4, &n), NB_OK);
        CHECK(save_equal(n2, n3));
    }
    nb_navmesh_destroy(ctx, n2);
    nb_navmesh_destroy(ctx, n3);
    nb_tile_cache_destroy(ctx, c2);
    c2 = (nb_tile_cache*)1;
    CHECK_INT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 1, &c2), NB_ERR_NULL_ARG);
    CHECK(c2 == NULL);

    nb_navmesh_destroy(ctx, ref);
    nb_navmesh_destroy(ctx, nav);
    nb_tile_cache_destroy(ctx, cache);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_no_obstacles_same_bytes_as_bake_navmesh);
    RUN(test_box_blocks_corridor_and_moves);
    RUN(test_area_obstacle_sets_area_ids);
    RUN(test_bad_arguments);
    RUN(test_failing_allocator);
    RUN(test_update_undone_with_memory_gone);
    RUN(test_swaps_undone_in_any_order);
    RUN(test_swap_salts_and_misuse);
    RUN(test_rebuild_matches_update);
    RUN(test_rebuild_errors);
    RUN(test_links_survive_updates);
    RUN(test_flags_kept_and_huge_boxes);
    nb_context_destroy(ctx);
    return nbt_finish("test_tile_cache");
}
