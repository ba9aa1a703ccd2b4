/* Off-mesh links are the same whatever bakes them: nb_bake_navmesh solo and tiled, a navmesh assembled from
 * nb_bake_grid_tile or from nb_grid_index_bake_tile (the TypeScript workers' path, with nb_tile_rebuild of each
 * cached tile), and the tile cache. A link whose start has no ground under it (even a whole tile without
 * triangles) is kept with its start unattached; one whose start lies outside the level's bounds is refused by
 * name in every mode; none is ever dropped or stored twice. */
#include "navbake.h"
#include "nbtest_level.h"

static nb_context* ctx;

enum { M_SOLO, M_TILED, M_GRID_TILE, M_INDEX, M_CACHE, M_COUNT };
static const char* mode_name[M_COUNT] = { "solo", "tiled", "grid tile", "grid index", "tile cache" };

static nb_config config_of(int32_t tile_size)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = tile_size;
    return cfg;
}

static nb_offmesh_link make_link(const float start[3], const float end[3], float radius, uint32_t user_id)
{
    nb_offmesh_link l;
    memset(&l, 0, sizeof(l));
    memcpy(l.start, start, sizeof(l.start));
    memcpy(l.end, end, sizeof(l.end));
    l.radius = radius;
    l.bidirectional = 1;
    l.user_id = user_id;
    return l;
}

/* Assembles a navmesh tile by tile from the grid (nb_bake_grid_tile or the grid index); with the index, also checks
 * that nb_tile_rebuild of each cached tile with the same links (no obstacles) gives the tile's bytes. */
static nb_status bake_by_tiles(const nb_bake_input* in, const nb_config* cfg, const nb_offmesh_link* links,
                               uint32_t nlinks, int use_index, nb_navmesh** out)
{
    *out = NULL;
    nb_navmesh_params p;
    int32_t ntx = 0, ntz = 0;
    nb_grid_index* index = NULL;
    nb_status st = use_index ? nb_grid_index_create(ctx, in, cfg, &index) : nb_bake_grid(ctx, in, cfg, &p, &ntx, &ntz);
    if (st != NB_OK)
        return st;
    if (index)
        nb_grid_index_grid(index, &p, &ntx, &ntz);
    nb_navmesh* nav = NULL;
    st = nb_navmesh_create(ctx, &p, &nav);
    for (int32_t tz = 0; tz < ntz && st == NB_OK; ++tz)
        for (int32_t tx = 0; tx < ntx && st == NB_OK; ++tx) {
            uint8_t *data = NULL, *cache = NULL;
            size_t size = 0, cache_size = 0;
            if (index)
                st = nb_grid_index_bake_tile(ctx, index, links, nlinks, tx, tz, &data, &size, &cache, &cache_size,
                                             NULL);
            else
                st = nb_bake_grid_tile(ctx, in, cfg, links, nlinks, tx, tz, &data, &size, NULL);
            if (st == NB_OK && cache) {
                uint8_t* again = NULL;
                size_t again_size = 0;
                CHECK_INT(nb_tile_rebuild(ctx, cfg, cache, cache_size, links, nlinks, NULL, 0, &again, &again_size),
                          NB_OK);
                CHECK((again == NULL) == (data == NULL));
                CHECK(again_size == size && (!again || memcmp(again, data, size) == 0));
                nb_bytes_free(ctx, again);
            }
            if (st == NB_OK && data)
                st = nb_navmesh_add_tile(ctx, nav, data, size);
            nb_bytes_free(ctx, data);
            nb_bytes_free(ctx, cache);
        }
    nb_grid_index_destroy(ctx, index);
    if (st != NB_OK) {
        nb_navmesh_destroy(ctx, nav);
        return st;
    }
    *out = nav;
    return NB_OK;
}

/* One bake of in with links in the given mode (tile_size for the tiled ones). */
static nb_status bake_mode(int mode, const nb_bake_input* in, int32_t tile_size, const nb_offmesh_link* links,
                           uint32_t nlinks, nb_navmesh** out)
{
    *out = NULL;
    nb_config cfg = config_of(mode == M_SOLO ? 0 : tile_size);
    switch (mode) {
    case M_SOLO:
    case M_TILED:
        return nb_bake_navmesh(ctx, in, &cfg, links, nlinks, out);
    case M_GRID_TILE:
        return bake_by_tiles(in, &cfg, links, nlinks, 0, out);
    case M_INDEX:
        return bake_by_tiles(in, &cfg, links, nlinks, 1, out);
    default: {
        nb_tile_cache* cache = NULL;
        nb_status st = nb_tile_cache_create(ctx, in, &cfg, links, nlinks, &cache);
        if (st == NB_OK)
            st = nb_tile_cache_build_navmesh(ctx, cache, out);
        nb_tile_cache_destroy(ctx, cache);
        return st;
    }
    }
}

/* The links a navmesh holds: user id and whether each end is attached, sorted by user id. */
typedef struct link_info {
    uint32_t user_id;
    int attached[2];
} link_info;

static int navmesh_links(const nb_navmesh* nav, link_info* out, int max)
{
    uint32_t n = 0;
    nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n);
    nb_poly_ref* refs = (nb_poly_ref*)calloc(n ? n : 1, sizeof(nb_poly_ref));
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, refs, n, &n), NB_OK);
    int count = 0;
    for (uint32_t i = 0; i < n; ++i) {
        int offmesh = 0;
        nb_navmesh_poly(nav, refs[i], NULL, NULL, NULL, NULL, &offmesh);
        if (!offmesh)
            continue;
        nb_offmesh_link l;
        int att[2];
        CHECK_INT(nb_navmesh_offmesh_link(nav, refs[i], &l, att), NB_OK);
        if (count < max) {
            int k = count;
            while (k > 0 && out[k - 1].user_id > l.user_id) {
                out[k] = out[k - 1];
                --k;
            }
            out[k].user_id = l.user_id;
            out[k].attached[0] = att[0];
            out[k].attached[1] = att[1];
        }
        ++count;
    }
    free(refs);
    return count;
}

static int same_bytes(const nb_navmesh* a, const nb_navmesh* b)
{
    uint8_t *da = NULL, *db = NULL;
    size_t na = 0, nb = 0;
    CHECK_INT(nb_navmesh_save(ctx, a, &da, &na), NB_OK);
    CHECK_INT(nb_navmesh_save(ctx, b, &db, &nb), NB_OK);
    const int same = da && db && na == nb && memcmp(da, db, na) == 0;
    nb_bytes_free(ctx, da);
    nb_bytes_free(ctx, db);
    return same;
}

/* Bakes in every mode; every one must succeed and hold the solo bake's links (each once, attached alike), and the
 * tiled modes must give the same bytes. Returns the solo bake's link count, -1 on a failure. */
static int check_modes_agree(const nb_bake_input* in, int32_t tile_size, const nb_offmesh_link* links,
                             uint32_t nlinks, link_info* solo_links)
{
    nb_navmesh* nav[M_COUNT] = { NULL };
    link_info got[64];
    int solo_count = -1, ok = 1;
    for (int m = 0; m < M_COUNT; ++m) {
        const nb_status st = bake_mode(m, in, tile_size, links, nlinks, &nav[m]);
        if (st != NB_OK) {
            fprintf(stderr, "  %s, tile_size %d: %s: %s\n", mode_name[m], tile_size, nb_status_name(st),
                    nb_context_message(ctx));
            CHECK_INT(st, NB_OK);
            ok = 0;
            continue;
        }
        const int count = navmesh_links(nav[m], m == M_SOLO ? solo_links : got, 64);
        if (m == M_SOLO) {
            solo_count = count;
            continue;
        }
        CHECK_INT(count, solo_count);
        for (int i = 0; i < count && i < solo_count && i < 64; ++i) {
            CHECK_INT(got[i].user_id, solo_links[i].user_id);
            CHECK_INT(got[i].attached[0], solo_links[i].attached[0]);
            CHECK_INT(got[i].attached[1], solo_links[i].attached[1]);
        }
        if (m != M_TILED && nav[M_TILED])
            CHECK(same_bytes(nav[M_TILED], nav[m]));
    }
    for (int m = 0; m < M_COUNT; ++m)
        nb_navmesh_destroy(ctx, nav[m]);
    return ok ? solo_count : -1;
}

/* Every mode from first_mode on refuses links with the same status, and a message naming the link and the
 * reason. */
static void check_modes_refuse_from(int first_mode, const nb_bake_input* in, int32_t tile_size,
                                    const nb_offmesh_link* links, uint32_t nlinks, nb_status status, const char* name,
                                    const char* reason)
{
    for (int m = first_mode; m < M_COUNT; ++m) {
        nb_navmesh* nav = NULL;
        const nb_status st = bake_mode(m, in, tile_size, links, nlinks, &nav);
        CHECK(nav == NULL);
        nb_navmesh_destroy(ctx, nav);
        if (st != status || !strstr(nb_context_message(ctx), name) || !strstr(nb_context_message(ctx), reason)) {
            fprintf(stderr, "  %s, tile_size %d: %s: %s (expected %s naming %s: %s)\n", mode_name[m], tile_size,
                    nb_status_name(st), nb_context_message(ctx), nb_status_name(status), name, reason);
            CHECK(!"the same refusal in every mode");
        }
    }
}

static void check_modes_refuse(const nb_bake_input* in, int32_t tile_size, const nb_offmesh_link* links,
                               uint32_t nlinks, nb_status status, const char* name, const char* reason)
{
    check_modes_refuse_from(M_SOLO, in, tile_size, links, nlinks, status, name, reason);
}

/* The centre of the n-th largest ground polygon (by xz area) of nav: a point well inside the walkable surface. */
static void ground_point(const nb_navmesh* nav, int rank, float out[3])
{
    uint32_t n = 0;
    nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n);
    nb_poly_ref* refs = (nb_poly_ref*)calloc(n ? n : 1, sizeof(nb_poly_ref));
    nb_navmesh_poly_refs(ctx, nav, refs, n, &n);
    float best[4][4] = { { 0 } }; /* area, x, y, z */
    for (uint32_t i = 0; i < n; ++i) {
        float v[NB_MAX_VERTS_PER_POLY * 3];
        int32_t nv = 0;
        int offmesh = 0;
        nb_navmesh_poly(nav, refs[i], v, &nv, NULL, NULL, &offmesh);
        if (offmesh || nv < 3)
            continue;
        float area = 0.0f, c[3] = { 0, 0, 0 };
        for (int32_t k = 0; k < nv; ++k) {
            const float* a = &v[k * 3];
            const float* b = &v[((k + 1) % nv) * 3];
            area += a[0] * b[2] - b[0] * a[2];
            for (int j = 0; j < 3; ++j)
                c[j] += a[j] / (float)nv;
        }
        area = fabsf(area) * 0.5f;
        for (int r = 0; r < 4; ++r)
            if (area > best[r][0]) {
                for (int s = 3; s > r; --s)
                    memcpy(best[s], best[s - 1], sizeof(best[s]));
                best[r][0] = area;
                memcpy(&best[r][1], c, sizeof(c));
                break;
            }
    }
    memcpy(out, &best[rank][1], 3 * sizeof(float));
    free(refs);
}

/* ---- (a) a start in a tile without triangles ---- */

static void test_start_in_tile_without_triangles(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_navmesh* solo = NULL;
    nb_config cfg0 = config_of(0);
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg0, NULL, 0, &solo), NB_OK);
    if (!solo)
        return;
    float ground[3][3];
    for (int r = 0; r < 3; ++r)
        ground_point(solo, r, ground[r]);
    nb_navmesh_destroy(ctx, solo);

    /* the audit's start: inside the level's bounds, in the corner tile, which has no triangles at either size */
    const float empty[3] = { -22.62f, 10.0f, -87.64f };
    const nb_offmesh_link links[3] = {
        make_link(ground[0], ground[1], 1.0f, 7), /* an ordinary link */
        make_link(empty, ground[2], 1.0f, 8),     /* starts where there is no ground at all */
        make_link(ground[1], empty, 1.0f, 9),     /* ends there */
    };
    static const int32_t sizes[] = { 16, 64 };
    for (int s = 0; s < 2; ++s) {
        nb_config cfg = config_of(sizes[s]);
        nb_grid_index* index = NULL;
        CHECK_INT(nb_grid_index_create(ctx, &in, &cfg, &index), NB_OK);
        if (!index)
            continue;
        nb_navmesh_params p;
        nb_grid_index_grid(index, &p, NULL, NULL);
        const int32_t tx = (int32_t)floorf((empty[0] - p.origin[0]) / p.tile_width);
        const int32_t tz = (int32_t)floorf((empty[2] - p.origin[2]) / p.tile_depth);
        CHECK_INT(nb_grid_index_tile_triangles(index, tx, tz), 0); /* the premise */
        /* the grid index path bakes that tile: just the link, no cache (no triangles) */
        uint8_t *data = NULL, *cache = (uint8_t*)1;
        size_t size = 0, cache_size = 0;
        CHECK_INT(nb_grid_index_bake_tile(ctx, index, links, 3, tx, tz, &data, &size, &cache, &cache_size, NULL),
                  NB_OK);
        CHECK(data != NULL && cache == NULL);
        nb_navmesh* one = NULL;
        CHECK_INT(nb_navmesh_create(ctx, &p, &one), NB_OK);
        if (data)
            CHECK_INT(nb_navmesh_add_tile(ctx, one, data, size), NB_OK);
        CHECK_INT(nb_navmesh_poly_count(one), 1);
        nb_navmesh_destroy(ctx, one);
        nb_bytes_free(ctx, data);
        nb_grid_index_destroy(ctx, index);

        link_info solo_links[64];
        CHECK_INT(check_modes_agree(&in, sizes[s], links, 3, solo_links), 3);
        /* kept as a solo bake keeps it: the start unattached, the end on the ground */
        CHECK_INT(solo_links[1].user_id, 8);
        CHECK_INT(solo_links[1].attached[0], 0);
        CHECK_INT(solo_links[1].attached[1], 1);
        CHECK_INT(solo_links[0].attached[0], 1);
        CHECK_INT(solo_links[0].attached[1], 1);
        CHECK_INT(solo_links[2].attached[0], 1);
        CHECK_INT(solo_links[2].attached[1], 0);
    }
    nb_obj_free(&obj);
}

/* A 9.6 x 9.6 floor, and one loose vertex that stretches the grid to 4 x 1 tiles of 9.6; *l starts over the empty
 * tiles (30, 0, 5) and ends on the floor. */
static const float floor_verts[] = { 0, 0, 0, 0, 0, 9.6f, 9.6f, 0, 0, 9.6f, 0, 9.6f, 38.0f, 0, 5.0f };
static const uint32_t floor_tris[] = { 0, 1, 2, 2, 1, 3 };

static nb_bake_input floor_level(nb_offmesh_link* l)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = floor_verts;
    in.mesh.vertex_count = 5;
    in.mesh.indices = floor_tris;
    in.mesh.triangle_count = 2;
    const float far_start[3] = { 30.0f, 0.0f, 5.0f }, floor_pt[3] = { 5.0f, 0.0f, 5.0f };
    *l = make_link(far_start, floor_pt, 1.0f, 3);
    return in;
}

/* A navmesh with a tile of no ground polygons works like any other: queries, save/load, removing it. */
static void test_link_only_tile_in_navmesh(void)
{
    nb_offmesh_link l;
    const nb_bake_input in = floor_level(&l);
    link_info solo_links[64];
    CHECK_INT(check_modes_agree(&in, 32, &l, 1, solo_links), 1);
    CHECK_INT(solo_links[0].attached[0], 0);
    CHECK_INT(solo_links[0].attached[1], 1);

    nb_config cfg = config_of(32);
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, &l, 1, &nav), NB_OK);
    if (!nav)
        return;
    const uint8_t* tile = NULL;
    size_t tile_size = 0;
    CHECK_INT(nb_navmesh_tile_data(nav, 3, 0, &tile, &tile_size), NB_OK);
    uint8_t* copy = (uint8_t*)malloc(tile_size ? tile_size : 1);
    if (tile)
        memcpy(copy, tile, tile_size);
    /* queries: no ground near the start, ground at the end, the surface has the floor only */
    nb_query* q = NULL;
    CHECK_INT(nb_query_create(ctx, nav, 0, &q), NB_OK);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float ext[3] = { 2.0f, 2.0f, 2.0f };
    nb_poly_ref ref = 1;
    CHECK_INT(nb_query_find_nearest_poly(q, l.start, ext, &f, &ref, NULL), NB_OK);
    CHECK_INT(ref, 0);
    CHECK_INT(nb_query_find_nearest_poly(q, l.end, ext, &f, &ref, NULL), NB_OK);
    CHECK(ref != 0);
    nb_query_destroy(ctx, q);
    uint32_t nverts = 0, ntris = 0;
    CHECK_INT(nb_navmesh_detail_triangles(ctx, nav, NULL, 0, NULL, NULL, 0, &nverts, &ntris), NB_ERR_BUFFER_TOO_SMALL);
    CHECK(ntris > 0);
    /* save -> load -> save */
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    nb_navmesh* loaded = NULL;
    CHECK_INT(nb_navmesh_save(ctx, nav, &a, &na), NB_OK);
    CHECK_INT(nb_navmesh_load(ctx, a, na, &loaded), NB_OK);
    if (loaded) {
        CHECK_INT(nb_navmesh_save(ctx, loaded, &b, &nb), NB_OK);
        CHECK(na == nb && memcmp(a, b, na) == 0);
        link_info got[4];
        CHECK_INT(navmesh_links(loaded, got, 4), 1);
        CHECK_INT(got[0].attached[1], 1);
    }
    /* remove the link's tile and put it back */
    CHECK_INT(nb_navmesh_remove_tile(ctx, nav, 3, 0), NB_OK);
    link_info got[4];
    CHECK_INT(navmesh_links(nav, got, 4), 0);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, copy, tile_size), NB_OK);
    CHECK_INT(navmesh_links(nav, got, 4), 1);
    CHECK_INT(got[0].attached[1], 1);
    nb_bytes_free(ctx, b);
    b = NULL;
    CHECK_INT(nb_navmesh_save(ctx, nav, &b, &nb), NB_OK);
    CHECK(na == nb && memcmp(a, b, na) == 0);
    free(copy);
    nb_bytes_free(ctx, a);
    nb_bytes_free(ctx, b);
    nb_navmesh_destroy(ctx, loaded);
    nb_navmesh_destroy(ctx, nav);
}

/* ---- (b) a start outside the level's bounds ---- */

static void test_start_outside_the_level(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    float bmin[3], bmax[3];
    memcpy(bmin, obj.positions, sizeof(bmin));
    memcpy(bmax, obj.positions, sizeof(bmax));
    for (uint32_t i = 1; i < obj.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            bmin[k] = fminf(bmin[k], obj.positions[i * 3 + k]);
            bmax[k] = fmaxf(bmax[k], obj.positions[i * 3 + k]);
        }
    nb_navmesh* solo = NULL;
    nb_config cfg0 = config_of(0);
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg0, NULL, 0, &solo), NB_OK);
    if (!solo)
        return;
    float ground[2][3];
    ground_point(solo, 0, ground[0]);
    ground_point(solo, 1, ground[1]);
    nb_navmesh_destroy(ctx, solo);

    /* the audit's: 0.8 beyond the far z edge (a tiled grid, rounded up to whole tiles, reaches there) */
    const float beyond_z[3] = { ground[0][0], ground[0][1], bmax[2] + 0.8f };
    nb_offmesh_link links[2] = { make_link(ground[0], ground[1], 1.0f, 1), make_link(beyond_z, ground[1], 1.0f, 2) };
    static const int32_t sizes[] = { 16, 64 };
    for (int s = 0; s < 2; ++s)
        check_modes_refuse(&in, sizes[s], links, 2, NB_ERR_INVALID_ARG, "links[1]: start", "outside the level's bounds");
    /* below the near x edge, and exactly on the far x edge (left out: the last tile ends there in some grids) */
    const float below_x[3] = { bmin[0] - 0.01f, ground[0][1], ground[0][2] };
    links[1] = make_link(below_x, ground[1], 1.0f, 2);
    check_modes_refuse(&in, 64, links, 2, NB_ERR_INVALID_ARG, "links[1]: start", "outside the level's bounds");
    const float at_far_x[3] = { bmax[0], ground[0][1], ground[0][2] };
    links[1] = make_link(at_far_x, ground[1], 1.0f, 2);
    check_modes_refuse(&in, 16, links, 2, NB_ERR_INVALID_ARG, "links[1]: start", "outside the level's bounds");
    /* the near edges are in */
    const float at_near[3] = { bmin[0], ground[0][1], bmin[2] };
    links[1] = make_link(at_near, ground[1], 1.0f, 2);
    link_info got[64];
    CHECK_INT(check_modes_agree(&in, 16, links, 2, got), 2);

    /* the single-tile calls refuse it too, whichever tile is asked for (the link is in none of them) */
    links[1] = make_link(beyond_z, ground[1], 1.0f, 2);
    nb_config cfg = config_of(64);
    uint8_t *data = NULL, *cache = NULL;
    size_t size = 0, cache_size = 0;
    CHECK_STATUS(ctx, nb_bake_grid_tile(ctx, &in, &cfg, links, 2, 0, 0, &data, &size, NULL), NB_ERR_INVALID_ARG,
                 "nb_bake_grid_tile: links[1]: start");
    CHECK_STATUS(ctx, nb_bake_grid_tile(ctx, &in, &cfg0, links, 2, 0, 0, &data, &size, NULL), NB_ERR_INVALID_ARG,
                 "nb_bake_grid_tile: links[1]: start");
    nb_grid_index* index = NULL;
    CHECK_INT(nb_grid_index_create(ctx, &in, &cfg, &index), NB_OK);
    CHECK_STATUS(ctx, nb_grid_index_bake_tile(ctx, index, links, 2, 1, 1, &data, &size, &cache, &cache_size, NULL),
                 NB_ERR_INVALID_ARG, "nb_grid_index_bake_tile: links[1]: start");
    CHECK(data == NULL && cache == NULL);
    nb_grid_index_destroy(ctx, index);

    /* bounds given explicitly are the level's bounds: a start inside them is kept, in every mode alike */
    float big_min[3], big_max[3];
    memcpy(big_min, bmin, sizeof(big_min));
    memcpy(big_max, bmax, sizeof(big_max));
    big_max[2] += 2.0f;
    in.bmin = big_min;
    in.bmax = big_max;
    CHECK_INT(check_modes_agree(&in, 64, links, 2, got), 2);
    CHECK_INT(got[1].user_id, 2);
    CHECK_INT(got[1].attached[0], 0);
    CHECK_INT(got[1].attached[1], 1);
    nb_obj_free(&obj);
}

/* ---- links on tile borders ---- */

/* A floor of n x 1 tiles of 9.6 (tile_size 32 at the default cell size) from x0. */
static void strip(float x0, int n, float* v, uint32_t* t, nb_bake_input* in)
{
    const float w = 9.6f * (float)n;
    const float p[12] = { x0, 0, 0, x0, 0, 9.6f, x0 + w, 0, 0, x0 + w, 0, 9.6f };
    memcpy(v, p, sizeof(p));
    const uint32_t tri[6] = { 0, 1, 2, 2, 1, 3 };
    memcpy(t, tri, sizeof(tri));
    memset(in, 0, sizeof(*in));
    in->mesh.positions = v;
    in->mesh.vertex_count = 4;
    in->mesh.indices = t;
    in->mesh.triangle_count = 2;
}

static void test_links_on_tile_borders(void)
{
    float v[12];
    uint32_t t[6];
    nb_bake_input in;
    strip(0.0f, 4, v, t, &in);
    nb_navmesh_params p;
    int32_t ntx = 0, ntz = 0;
    nb_config cfg = config_of(32);
    CHECK_INT(nb_bake_grid(ctx, &in, &cfg, &p, &ntx, &ntz), NB_OK);
    CHECK_INT(ntx, 4);
    /* a start exactly on each tile edge the grid computes (and on the level's near edge), ends across the floor */
    nb_offmesh_link links[8];
    uint32_t n = 0;
    for (int32_t k = 0; k < ntx; ++k) {
        const float x = p.origin[0] + (float)k * p.tile_width;
        const float s[3] = { x, 0.0f, 4.0f }, e[3] = { x + 1.0f, 0.0f, 6.0f };
        links[n] = make_link(s, e, 1.0f, 100 + n);
        ++n;
    }
    /* and one whose end lies exactly on an edge */
    const float s[3] = { 5.0f, 0.0f, 5.0f }, e[3] = { p.origin[0] + 2.0f * p.tile_width, 0.0f, 5.0f };
    links[n] = make_link(s, e, 1.0f, 100 + n);
    ++n;
    link_info got[64];
    CHECK_INT(check_modes_agree(&in, 32, links, n, got), (int)n);
    for (uint32_t i = 0; i < n; ++i)
        CHECK_INT(got[i].attached[1], 1);
}

/* Starts a few ulps around every tile edge of grids whose edges round differently on the two sides: each is kept
 * exactly once (as in a solo bake), or, where float rounding leaves it in no tile or two, refused by name in every
 * tiled mode (the one place a solo bake, which has no tile edges, keeps what a tiled one refuses); never dropped or
 * stored twice. */
static void test_starts_near_tile_edges(void)
{
    static const float origins[] = { 0.1f, -22.62f, 1234.567f };
    int refused = 0, kept = 0;
    for (int o = 0; o < 3; ++o) {
        float v[12];
        uint32_t t[6];
        nb_bake_input in;
        strip(origins[o], 5, v, t, &in);
        nb_navmesh_params p;
        int32_t ntx = 0, ntz = 0;
        nb_config cfg = config_of(32);
        CHECK_INT(nb_bake_grid(ctx, &in, &cfg, &p, &ntx, &ntz), NB_OK);
        for (int32_t k = 1; k < ntx; ++k) {
            const float edge = p.origin[0] + (float)k * p.tile_width;
            float x = edge;
            for (int u = 0; u < 3; ++u)
                x = nextafterf(x, -1e30f);
            for (int u = -3; u <= 3; ++u, x = nextafterf(x, 1e30f)) {
                const float s[3] = { x, 0.0f, 4.0f }, e[3] = { x, 0.0f, 6.0f };
                const nb_offmesh_link l = make_link(s, e, 1.0f, 1);
                nb_navmesh* solo = NULL;
                CHECK_INT(bake_mode(M_SOLO, &in, 0, &l, 1, &solo), NB_OK);
                link_info got[4];
                if (solo)
                    CHECK_INT(navmesh_links(solo, got, 4), 1);
                nb_navmesh_destroy(ctx, solo);
                nb_navmesh* tiled = NULL;
                const nb_status st = bake_mode(M_TILED, &in, 32, &l, 1, &tiled);
                if (st == NB_OK) {
                    ++kept;
                    CHECK_INT(navmesh_links(tiled, got, 4), 1);
                    nb_navmesh_destroy(ctx, tiled);
                    /* the other tiled paths agree */
                    for (int m = M_GRID_TILE; m < M_COUNT; ++m) {
                        nb_navmesh* other = NULL;
                        CHECK_INT(bake_mode(m, &in, 32, &l, 1, &other), NB_OK);
                        if (other)
                            CHECK_INT(navmesh_links(other, got, 4), 1);
                        nb_navmesh_destroy(ctx, other);
                    }
                } else {
                    ++refused;
                    CHECK_STATUS(ctx, st, NB_ERR_INVALID_ARG, "links[0]: start");
                    CHECK(strstr(nb_context_message(ctx), "tile border") != NULL);
                    check_modes_refuse_from(M_TILED, &in, 32, &l, 1, NB_ERR_INVALID_ARG, "links[0]: start",
                                            "tile border");
                }
            }
        }
    }
    CHECK(kept > 0);
    CHECK(refused < kept); /* only where rounding splits an edge */
}

/* ---- link fields are named by their index in the caller's list ---- */

static void test_bad_fields_named_by_index(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    /* two links far apart (triangle centres): in a tiled bake each is the first of its tile */
    float a[3] = { 0, 0, 0 }, b[3] = { 0, 0, 0 };
    const uint32_t last = obj.triangle_count - 1;
    for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 3; ++j) {
            a[j] += obj.positions[obj.indices[k] * 3 + j] / 3.0f;
            b[j] += obj.positions[obj.indices[last * 3 + k] * 3 + j] / 3.0f;
        }
    nb_offmesh_link links[2] = { make_link(a, b, 1.0f, 1), make_link(b, a, 1.0f, 2) };
    links[1].radius = 0.0f;
    check_modes_refuse(&in, 32, links, 2, NB_ERR_INVALID_ARG, "links[1].radius", "must be > 0");
    links[1].radius = 1.0f;
    links[1].end[1] = NAN;
    check_modes_refuse(&in, 32, links, 2, NB_ERR_NONFINITE, "links[1].end[1]", "not finite");
    links[1].end[1] = 0.0f;
    links[1].area = 64;
    check_modes_refuse(&in, 32, links, 2, NB_ERR_INVALID_ARG, "links[1].area", "0..63");
    links[1].area = 0;
    links[1].bidirectional = 2;
    check_modes_refuse(&in, 32, links, 2, NB_ERR_INVALID_ARG, "links[1].bidirectional", "0 or 1");
    links[1].bidirectional = 0;
    links[1].end[0] = 2e9f;
    check_modes_refuse(&in, 32, links, 2, NB_ERR_TOO_LARGE, "links[1].end[0]", "NB_MAX_COORD");
    nb_obj_free(&obj);
}

/* ---- out of memory on the link-only tile's paths ---- */

static void test_failing_allocator(void)
{
    nb_offmesh_link l;
    const nb_bake_input in = floor_level(&l);
    nb_config cfg = config_of(32);
    nb_navmesh* ref = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, &l, 1, &ref), NB_OK);
    if (!ref)
        return;

    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    nb_context* fctx = nb_context_create(&d);
    for (int path = 0; path < 3; ++path) {
        int ok = 0, failures = 0;
        for (long k = 1; k < 100000 && !ok; ++k) {
            a.fail_at = a.calls + k;
            nb_navmesh* nav = NULL;
            nb_tile_cache* cache = NULL;
            nb_grid_index* index = NULL;
            uint8_t* data = NULL;
            size_t size = 0;
            nb_status st;
            if (path == 0) {
                st = nb_bake_navmesh(fctx, &in, &cfg, &l, 1, &nav);
            } else if (path == 1) {
                st = nb_tile_cache_create(fctx, &in, &cfg, &l, 1, &cache);
                if (st == NB_OK)
                    st = nb_tile_cache_build_navmesh(fctx, cache, &nav);
            } else {
                st = nb_grid_index_create(fctx, &in, &cfg, &index);
                if (st == NB_OK)
                    st = nb_grid_index_bake_tile(fctx, index, &l, 1, 3, 0, &data, &size, NULL, NULL, NULL);
                if (st == NB_OK)
                    CHECK(data != NULL);
                if (st == NB_OK && data)
                    st = nb_navmesh_create(fctx, nb_navmesh_get_params(ref), &nav);
                if (st == NB_OK)
                    st = nb_navmesh_add_tile(fctx, nav, data, size);
            }
            a.fail_at = 0;
            if (st == NB_OK) {
                ok = 1;
                if (path < 2) {
                    CHECK(same_bytes(ref, nav));
                } else {
                    const uint8_t* want = NULL;
                    size_t want_size = 0;
                    CHECK_INT(nb_navmesh_tile_data(ref, 3, 0, &want, &want_size), NB_OK);
                    CHECK(want_size == size && memcmp(want, data, size) == 0);
                }
            } else {
                ++failures;
                CHECK(nav == NULL || path == 2);
                if (st != NB_ERR_OUT_OF_MEMORY) {
                    CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
                    ok = -1;
                }
            }
            nb_navmesh_destroy(fctx, nav);
            nb_tile_cache_destroy(fctx, cache);
            nb_grid_index_destroy(fctx, index);
            nb_bytes_free(fctx, data);
            CHECK_INT(a.live, 1);
            if (a.live != 1)
                break;
        }
        CHECK(ok == 1);
        CHECK(failures > 5);
    }
    nb_context_destroy(fctx);
    nb_navmesh_destroy(ctx, ref);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_start_in_tile_without_triangles);
    RUN(test_link_only_tile_in_navmesh);
    RUN(test_start_outside_the_level);
    RUN(test_links_on_tile_borders);
    RUN(test_starts_near_tile_edges);
    RUN(test_bad_fields_named_by_index);
    RUN(test_failing_allocator);
    nb_context_destroy(ctx);
    return nbt_finish("test_links");
}
