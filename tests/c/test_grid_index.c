/* nb_grid_index: tile bakes over a triangle index, byte-identical to nb_bake_grid_tile. */
#include "navbake.h"
#include "nbtest_level.h"
#include "world.h"

static nb_context* ctx;

static nb_config tiled(int32_t tile_size)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = tile_size;
    return cfg;
}

/* Off-mesh links from the level's own vertices (upward-facing triangle centres, 2 m apart): some tiles get some. */
static uint32_t make_links(const nb_bake_input* in, nb_offmesh_link* links, uint32_t max)
{
    uint32_t n = 0;
    const uint32_t step = in->mesh.triangle_count / max + 1;
    for (uint32_t t = 0; t < in->mesh.triangle_count && n < max; t += step) {
        const float* a = &in->mesh.positions[in->mesh.indices[t * 3] * 3];
        const float* b = &in->mesh.positions[in->mesh.indices[t * 3 + 1] * 3];
        const float* c = &in->mesh.positions[in->mesh.indices[t * 3 + 2] * 3];
        nb_offmesh_link* l = &links[n++];
        memset(l, 0, sizeof(*l));
        for (int k = 0; k < 3; ++k)
            l->start[k] = (a[k] + b[k] + c[k]) / 3.0f;
        memcpy(l->end, l->start, sizeof(l->end));
        l->end[0] += 2.0f;
        l->radius = 0.5f;
        l->bidirectional = (uint8_t)(n & 1);
        l->user_id = n;
    }
    return n;
}

/* Every tile of the grid: the index's blob is nb_bake_grid_tile's, bit for bit (or both NULL, or both fail alike);
 * a cache blob comes with every tile that has triangles. */
static void compare_level(const nb_bake_input* in, int32_t tile_size, const nb_offmesh_link* links, uint32_t nlinks,
                          int* tiles_with_data)
{
    nb_config cfg = tiled(tile_size);
    nb_navmesh_params p, q;
    int32_t ntx = 0, ntz = 0, itx = 0, itz = 0;
    CHECK_INT(nb_bake_grid(ctx, in, &cfg, &p, &ntx, &ntz), NB_OK);
    nb_grid_index* index = NULL;
    CHECK_INT(nb_grid_index_create(ctx, in, &cfg, &index), NB_OK);
    if (!index)
        return;
    nb_grid_index_grid(index, &q, &itx, &itz);
    CHECK(memcmp(&p, &q, sizeof(p)) == 0);
    CHECK_INT(itx, ntx);
    CHECK_INT(itz, ntz);
    /* nb_bake_grid_tile with the level's bounds given, as a worker would call it */
    float bmin[3], bmax[3];
    memcpy(bmin, in->mesh.positions, sizeof(bmin));
    memcpy(bmax, in->mesh.positions, sizeof(bmax));
    for (uint32_t i = 1; i < in->mesh.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            bmin[k] = fminf(bmin[k], in->mesh.positions[i * 3 + k]);
            bmax[k] = fmaxf(bmax[k], in->mesh.positions[i * 3 + k]);
        }
    nb_bake_input bin = *in;
    bin.bmin = bmin;
    bin.bmax = bmax;
    int mismatches = 0, no_cache = 0;
    for (int32_t tz = 0; tz < ntz; ++tz)
        for (int32_t tx = 0; tx < ntx; ++tx) {
            uint8_t *a = NULL, *b = NULL, *cache = NULL;
            size_t na = 0, nb = 0, ncache = 0;
            double sa[NB_STAT_COUNT], sb[NB_STAT_COUNT];
            const nb_status s1 = nb_bake_grid_tile(ctx, &bin, &cfg, links, nlinks, tx, tz, &a, &na, sa);
            const nb_status s2 =
                nb_grid_index_bake_tile(ctx, index, links, nlinks, tx, tz, &b, &nb, &cache, &ncache, sb);
            if (s1 != s2 || (a == NULL) != (b == NULL) || na != nb || (a && memcmp(a, b, na) != 0)) {
                if (mismatches++ < 3)
                    fprintf(stderr, "  tile (%d, %d): %s %zu bytes vs %s %zu bytes\n", tx, tz, nb_status_name(s1), na,
                            nb_status_name(s2), nb);
            }
            /* the bucket count: a superset of the tile's triangles, so 0 means nothing to bake */
            const uint32_t bucketed = nb_grid_index_tile_triangles(index, tx, tz);
            if (cache)
                CHECK(bucketed > 0);
            if (bucketed == 0)
                CHECK(b == NULL && cache == NULL);
            if (b) {
                ++*tiles_with_data;
                no_cache += cache == NULL;
                CHECK_INT(sb[NB_STAT_POLYS], sa[NB_STAT_POLYS]);
                CHECK_INT(sb[NB_STAT_COMPACT_SPANS], sa[NB_STAT_COMPACT_SPANS]);
            }
            nb_bytes_free(ctx, a);
            nb_bytes_free(ctx, b);
            nb_bytes_free(ctx, cache);
        }
    CHECK_INT(mismatches, 0);
    CHECK_INT(no_cache, 0);
    CHECK_INT(nb_grid_index_tile_triangles(index, -1, 0), 0);
    CHECK_INT(nb_grid_index_tile_triangles(index, ntx, 0), 0);
    CHECK_INT(nb_grid_index_tile_triangles(index, 0, ntz), 0);
    CHECK_INT(nb_grid_index_tile_triangles(NULL, 0, 0), 0);
    nb_grid_index_destroy(ctx, index);
}

static void test_levels_byte_identical(void)
{
    static const char* levels[] = { "dungeon.obj", "nav_test.obj" };
    static const int32_t sizes[] = { 32, 64 };
    for (int l = 0; l < 2; ++l) {
        nb_obj obj;
        if (nbt_load_level(levels[l], &obj) != 0) {
            CHECK(!"mesh missing");
            continue;
        }
        nb_bake_input in = nb_obj_bake_input(&obj);
        for (int s = 0; s < 2; ++s) {
            int with_data = 0;
            compare_level(&in, sizes[s], NULL, 0, &with_data);
            CHECK(with_data >= 8);
        }
        nb_obj_free(&obj);
    }
}

static void test_world_byte_identical(void)
{
    nb_obj w;
    CHECK_INT(nb_world_generate(3, 30000, &w), 0);
    nb_bake_input in = nb_obj_bake_input(&w);
    int with_data = 0;
    compare_level(&in, 64, NULL, 0, &with_data);
    CHECK(with_data >= 16);
    nb_obj_free(&w);
}

/* With off-mesh links (and bake-time volumes): still the same bytes, and nb_bake_navmesh (which bakes through an
 * index) saves to the same bytes as a navmesh assembled from nb_bake_grid_tile blobs. */
static void test_links_and_volumes(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_offmesh_link links[40];
    const uint32_t nlinks = make_links(&in, links, 40);
    nb_volume vol;
    memset(&vol, 0, sizeof(vol));
    vol.type = NB_VOLUME_CYLINDER;
    vol.area = 9;
    vol.center[0] = (obj.positions[0] + obj.positions[3]) * 0.5f;
    vol.center[1] = -100.0f;
    vol.center[2] = obj.positions[2];
    vol.radius = 6.0f;
    vol.height = 300.0f;
    in.volumes = &vol;
    in.volume_count = 1;
    int with_data = 0;
    compare_level(&in, 32, links, nlinks, &with_data);
    CHECK(with_data >= 8);

    nb_config cfg = tiled(32);
    nb_navmesh *a = NULL, *b = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, links, nlinks, &a), NB_OK);
    nb_navmesh_params p;
    int32_t ntx = 0, ntz = 0;
    CHECK_INT(nb_bake_grid(ctx, &in, &cfg, &p, &ntx, &ntz), NB_OK);
    CHECK_INT(nb_navmesh_create(ctx, &p, &b), NB_OK);
    for (int32_t tz = ntz - 1; tz >= 0; --tz) /* another order: the saved bytes do not depend on it */
        for (int32_t tx = ntx - 1; tx >= 0; --tx) {
            uint8_t* data = NULL;
            size_t size = 0;
            CHECK_INT(nb_bake_grid_tile(ctx, &in, &cfg, links, nlinks, tx, tz, &data, &size, NULL), NB_OK);
            if (data)
                CHECK_INT(nb_navmesh_add_tile(ctx, b, data, size), NB_OK);
            nb_bytes_free(ctx, data);
        }
    uint8_t *da = NULL, *db = NULL;
    size_t na = 0, nb = 0;
    CHECK_INT(nb_navmesh_save(ctx, a, &da, &na), NB_OK);
    CHECK_INT(nb_navmesh_save(ctx, b, &db, &nb), NB_OK);
    CHECK(na == nb && da && db && memcmp(da, db, na) == 0);
    nb_bytes_free(ctx, da);
    nb_bytes_free(ctx, db);
    nb_navmesh_destroy(ctx, a);
    nb_navmesh_destroy(ctx, b);
    nb_obj_free(&obj);
}

/* Links to a tile across a corner and to tiles two or more away bake like any other: the grid index's tiles are
 * nb_bake_grid_tile's, and a whole tiled bake takes them (the navmesh lands them wherever their end lies). */
static void test_far_links_bake(void)
{
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_offmesh_link links[3];
    CHECK_INT(make_links(&in, links, 3), 3);
    nb_config cfg = tiled(32);
    nb_navmesh_params p;
    int32_t ntx = 0, ntz = 0;
    CHECK_INT(nb_bake_grid(ctx, &in, &cfg, &p, &ntx, &ntz), NB_OK);
    links[0].end[0] = links[0].start[0] + 2.0f * p.tile_width; /* two tiles along +x */
    links[1].end[0] = links[1].start[0] + p.tile_width;        /* across a corner */
    links[1].end[2] = links[1].start[2] - p.tile_depth;
    links[2].end[2] = links[2].start[2] + 5.0f * p.tile_depth; /* five along +z */
    int with_data = 0;
    compare_level(&in, 32, links, 3, &with_data);
    CHECK(with_data >= 8);
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, links, 3, &nav), NB_OK);
    nb_navmesh_destroy(ctx, nav);
    nb_obj_free(&obj);
}

static void test_errors(void)
{
    const float v[] = { 0, 0, 0, 0, 0, 18, 18, 0, 0, 18, 0, 18, 30, 0, 30 };
    const uint32_t t[] = { 0, 1, 2, 2, 1, 3 };
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = v;
    in.mesh.vertex_count = 5; /* vertex 4 widens the bounds to a 4 x 4 grid whose far tiles are empty */
    in.mesh.indices = t;
    in.mesh.triangle_count = 2;
    nb_config cfg = tiled(32);
    nb_grid_index* index = (nb_grid_index*)1;
    nb_config solo = tiled(0);
    CHECK_STATUS(ctx, nb_grid_index_create(ctx, &in, &solo, &index), NB_ERR_INVALID_CONFIG, "tile_size");
    CHECK(index == NULL);
    CHECK_INT(nb_grid_index_create(ctx, NULL, &cfg, &index), NB_ERR_NULL_ARG);
    CHECK_INT(nb_grid_index_create(ctx, &in, &cfg, NULL), NB_ERR_NULL_ARG);
    nb_volume bad;
    memset(&bad, 0, sizeof(bad));
    bad.type = NB_VOLUME_BOX;
    bad.area = 70;
    in.volumes = &bad;
    in.volume_count = 1;
    CHECK_STATUS(ctx, nb_grid_index_create(ctx, &in, &cfg, &index), NB_ERR_INVALID_ARG, "volume 0");
    in.volumes = NULL;
    CHECK_STATUS(ctx, nb_grid_index_create(ctx, &in, &cfg, &index), NB_ERR_NULL_ARG, "volumes");
    in.volume_count = 0;
    const uint32_t bad_t[] = { 0, 1, 7 };
    in.mesh.indices = bad_t;
    in.mesh.triangle_count = 1;
    CHECK_STATUS(ctx, nb_grid_index_create(ctx, &in, &cfg, &index), NB_ERR_INDEX_RANGE, "triangle 0");
    in.mesh.indices = t;
    in.mesh.triangle_count = 2;
    CHECK_INT(nb_grid_index_create(ctx, &in, &cfg, &index), NB_OK);
    if (!index)
        return;
    int32_t ntx = 0, ntz = 0;
    nb_grid_index_grid(index, NULL, &ntx, &ntz);
    CHECK_INT(ntx, 4);
    CHECK_INT(ntz, 4);
    uint8_t *data = NULL, *cache = NULL;
    size_t size = 0, cache_size = 0;
    CHECK_STATUS(ctx, nb_grid_index_bake_tile(ctx, index, NULL, 0, 4, 0, &data, &size, NULL, NULL, NULL),
                 NB_ERR_INVALID_ARG, "outside the 4 x 4 grid");
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, 0, -1, &data, &size, NULL, NULL, NULL), NB_ERR_INVALID_ARG);
    CHECK_INT(nb_grid_index_bake_tile(ctx, NULL, NULL, 0, 0, 0, &data, &size, NULL, NULL, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, 0, 0, NULL, &size, NULL, NULL, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 3, 0, 0, &data, &size, NULL, NULL, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, 0, 0, &data, &size, &cache, NULL, NULL), NB_ERR_NULL_ARG);
    /* an empty tile: nothing, no cache, NB_OK */
    cache = (uint8_t*)1;
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, 3, 3, &data, &size, &cache, &cache_size, NULL), NB_OK);
    CHECK(data == NULL && cache == NULL && size == 0 && cache_size == 0);
    /* a link starting in an empty tile: that tile holds the link alone (no ground, so no cache), as
     * nb_bake_grid_tile bakes it */
    nb_offmesh_link l;
    memset(&l, 0, sizeof(l));
    l.start[0] = l.start[2] = 29.0f;
    l.end[0] = 29.0f; /* in the tile beside it, along -z */
    l.end[2] = 26.0f;
    l.radius = 1.0f;
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, &l, 1, 3, 3, &data, &size, &cache, &cache_size, NULL), NB_OK);
    CHECK(data != NULL && cache == NULL);
    uint8_t* same = NULL;
    size_t same_size = 0;
    CHECK_INT(nb_bake_grid_tile(ctx, &in, &cfg, &l, 1, 3, 3, &same, &same_size, NULL), NB_OK);
    CHECK(same && same_size == size && memcmp(same, data, size) == 0);
    nb_bytes_free(ctx, same);
    nb_bytes_free(ctx, data);
    /* the tile with the triangles holds none of it */
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, &l, 1, 0, 0, &data, &size, &cache, &cache_size, NULL), NB_OK);
    CHECK(data != NULL && cache != NULL);
    nb_bytes_free(ctx, data);
    nb_bytes_free(ctx, cache);
    /* a start outside the level's bounds (0 .. 30), refused whichever tile is asked for */
    l.start[0] = 31.0f;
    CHECK_STATUS(ctx, nb_grid_index_bake_tile(ctx, index, &l, 1, 0, 0, &data, &size, &cache, &cache_size, NULL),
                 NB_ERR_INVALID_ARG, "links[0]: start (31, 0, 29) is outside the level's bounds (x 0..30, z 0..30");
    CHECK(data == NULL && cache == NULL);
    nb_grid_index_destroy(ctx, index);
    nb_grid_index_destroy(ctx, NULL);
}

/* Every allocation of create and bake_tile fails in turn: clean failures, nothing leaks, then the same bytes. */
static void test_failing_allocator(void)
{
    nb_obj w;
    CHECK_INT(nb_world_generate(5, 3000, &w), 0);
    nb_bake_input in = nb_obj_bake_input(&w);
    nb_config cfg = tiled(64);
    uint8_t *ref = NULL, *ref_cache = NULL;
    size_t ref_size = 0, ref_cache_size = 0;
    nb_grid_index* index = NULL;
    CHECK_INT(nb_grid_index_create(ctx, &in, &cfg, &index), NB_OK);
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, 1, 1, &ref, &ref_size, &ref_cache, &ref_cache_size, NULL),
              NB_OK);
    nb_grid_index_destroy(ctx, index);
    CHECK(ref != NULL && ref_cache != NULL);

    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    nb_context* fctx = nb_context_create(&d);
    int ok = 0, failures = 0;
    for (long k = 1; k < 100000 && !ok; ++k) {
        a.fail_at = a.calls + k;
        index = NULL;
        uint8_t *data = NULL, *cache = NULL;
        size_t size = 0, cache_size = 0;
        nb_status st = nb_grid_index_create(fctx, &in, &cfg, &index);
        if (st == NB_OK)
            st = nb_grid_index_bake_tile(fctx, index, NULL, 0, 1, 1, &data, &size, &cache, &cache_size, NULL);
        a.fail_at = 0;
        if (st == NB_OK) {
            ok = 1;
            CHECK(size == ref_size && memcmp(data, ref, size) == 0);
            CHECK(cache_size == ref_cache_size && memcmp(cache, ref_cache, cache_size) == 0);
        } else {
            ++failures;
            CHECK(data == NULL && cache == NULL);
            if (st != NB_ERR_OUT_OF_MEMORY) {
                CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
                ok = -1;
            }
        }
        nb_bytes_free(fctx, data);
        nb_bytes_free(fctx, cache);
        nb_grid_index_destroy(fctx, index);
        CHECK_INT(a.live, 1);
        if (a.live != 1)
            break;
    }
    CHECK(ok == 1);
    CHECK(failures > 20);
    nb_context_destroy(fctx);
    nb_bytes_free(ctx, ref);
    nb_bytes_free(ctx, ref_cache);
    nb_obj_free(&w);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_levels_byte_identical);
    RUN(test_world_byte_identical);
    RUN(test_links_and_volumes);
    RUN(test_far_links_bake);
    RUN(test_errors);
    RUN(test_failing_allocator);
    nb_context_destroy(ctx);
    return nbt_finish("test_grid_index");
}
