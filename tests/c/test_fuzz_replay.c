/* Fuzzing (make fuzz, tests/fuzz) kept as tests: every input in tests/fuzz/replay/<target>/ (each failure a fuzz
 * target found, and for targets without one a few inputs of its corpus) goes through the same checks as in the fuzz
 * target (a failure aborts: the suite reports a crash), and each finding's rule is checked directly. */
#include "navbake.h"
#include "nbtest.h"
#include "nbtest_level.h"
#include "terrain.h"
#include "world.h"
#include "../fuzz/fuzz_common.h"

#include <dirent.h>

#ifndef NB_FUZZ_REPLAY
#define NB_FUZZ_REPLAY "tests/fuzz/replay" /* make runs the suite from the repository root */
#endif

/* Feeds every file of tests/fuzz/replay/<target> to check; returns how many there were. */
static int replay(const char* target, void (*check)(const uint8_t*, size_t, int), int fix_crcs)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", NB_FUZZ_REPLAY, target);
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "  cannot open %s\n", dir);
        return 0;
    }
    int n = 0;
    struct dirent* e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE* f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f)
            continue;
        static uint8_t buf[1 << 20];
        const size_t size = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        check(buf, size, fix_crcs);
        ++n;
    }
    closedir(d);
    return n;
}

static void check_navmesh_file(const uint8_t* data, size_t size, int fix_crcs)
{
    uint8_t* copy = (uint8_t*)malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (fix_crcs)
        fuzz_fix_navmesh_crcs(copy, size);
    fuzz_check_navmesh_file(copy, size);
    free(copy);
}

static void check_bake(const uint8_t* data, size_t size, int unused) { fuzz_check_bake(data, size); }

static nb_obj world;
static void check_obstacles(const uint8_t* data, size_t size, int unused) { fuzz_check_obstacles(data, size, &world); }

static void check_voxels(const uint8_t* data, size_t size, int unused) { fuzz_check_voxels(data, size); }

static void test_replay_navmesh_inputs(void) { CHECK(replay("navmesh", check_navmesh_file, 1) >= 2); }
static void test_replay_voxel_inputs(void) { CHECK(replay("voxels", check_voxels, 0) >= 2); }
static void test_replay_bake_inputs(void) { CHECK(replay("bake", check_bake, 0) >= 2); }
/* Obstacle edits: incremental rebuilds give the bytes of full builds. */
static void test_replay_obstacle_inputs(void)
{
    CHECK(nb_world_generate(1, 3000, &world) == 0);
    CHECK(replay("obstacles", check_obstacles, 0) >= 3);
    nb_obj_free(&world);
}

/* A small tiled terrain saved to bytes; the caller frees them (nb_bytes_free). */
static uint8_t* baked_file(nb_context* ctx, size_t* size)
{
    nb_obj t;
    if (nb_terrain_generate(40, 40, 0.3f, 1, &t) != 0)
        return NULL;
    const nb_bake_input in = nb_obj_bake_input(&t);
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 16;
    nb_navmesh* nav = NULL;
    uint8_t* bytes = NULL;
    if (nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav) == NB_OK)
        nb_navmesh_save(ctx, nav, &bytes, size);
    nb_navmesh_destroy(ctx, nav);
    nb_obj_free(&t);
    return bytes;
}

/* Finite but huge coordinates made query arithmetic overflow (a random point came back NaN): a tile's vertices,
 * detail vertices and bounds, and a file's origin and tile size, must stay within NB_MAX_COORD. */
static void test_coordinates_beyond_the_limit_are_corrupt(void)
{
    nb_context* ctx = nb_context_create(NULL);
    size_t size = 0;
    uint8_t* file = baked_file(ctx, &size);
    CHECK(file != NULL);
    if (!file) {
        nb_context_destroy(ctx);
        return;
    }
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_load(ctx, file, size, &nav), NB_OK);
    nb_navmesh_destroy(ctx, nav);

    const size_t tile = 48 + 4; /* the first tile blob: after the file header and its length */
    /* Header fields of the tile (docs/FORMAT.md): bmin.x at 56, the first vertex right after the 100-byte header. */
    static const struct {
        size_t at;
        const char* needle;
    } cases[] = { { 56, "bounds on x" }, { 100, "verts[0]" }, { 100 + 4, "verts[0]" } };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        uint8_t* bad = (uint8_t*)malloc(size);
        memcpy(bad, file, size);
        const float huge = 2.0e9f;
        memcpy(bad + tile + cases[c].at, &huge, 4);
        fuzz_fix_navmesh_crcs(bad, size);
        nav = NULL;
        CHECK_STATUS(ctx, nb_navmesh_load(ctx, bad, size, &nav), NB_ERR_CORRUPT, cases[c].needle);
        CHECK(nav == NULL);
        free(bad);
    }

    /* The file header: origin.x at 12, tile_width at 24. */
    for (size_t at = 12; at <= 24; at += 12) {
        uint8_t* bad = (uint8_t*)malloc(size);
        memcpy(bad, file, size);
        const float huge = -3.0e9f * (at == 24 ? -1.0f : 1.0f);
        memcpy(bad + at, &huge, 4);
        fuzz_fix_navmesh_crcs(bad, size);
        nav = NULL;
        CHECK_STATUS(ctx, nb_navmesh_load(ctx, bad, size, &nav), NB_ERR_CORRUPT, "beyond");
        free(bad);
    }
    nb_navmesh_params params;
    memset(&params, 0, sizeof(params));
    params.tile_width = params.tile_depth = 10.0f;
    params.origin[1] = 1.5e9f;
    CHECK_STATUS(ctx, nb_navmesh_create(ctx, &params, &nav), NB_ERR_INVALID_ARG, "origin.y");
    nb_bytes_free(ctx, file);
    nb_context_destroy(ctx);
}

/* A tile whose vertices would land beyond the limit is refused when it is built, not when it is loaded. */
static void test_tile_build_refuses_coordinates_beyond_the_limit(void)
{
    nb_context* ctx = nb_context_create(NULL);
    uint16_t verts[9] = { 0, 0, 0, 10, 0, 0, 0, 0, 10 };
    uint16_t polys[6] = { 0, 2, 1, NB_MESH_NULL_IDX, NB_MESH_NULL_IDX, NB_MESH_NULL_IDX };
    uint16_t flags = 1;
    uint8_t area = NB_WALKABLE_AREA;
    nb_poly_mesh pm;
    memset(&pm, 0, sizeof(pm));
    pm.verts = verts;
    pm.nverts = 3;
    pm.polys = polys;
    pm.npolys = 1;
    pm.nvp = 3;
    pm.flags = &flags;
    pm.areas = &area;
    pm.bmax[0] = pm.bmax[2] = 3.0f;
    pm.bmax[1] = 1.0f;
    pm.cell_size = 0.3f;
    pm.cell_height = 0.2f;
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = &pm;
    uint8_t* data = NULL;
    size_t size = 0;
    CHECK_INT(nb_tile_build(ctx, &tp, &data, &size), NB_OK);
    nb_bytes_free(ctx, data);
    pm.cell_size = 2.0e8f; /* vertex 1 lands at x = 2e9 */
    pm.bmax[0] = pm.bmax[2] = 2.0e9f;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &data, &size), NB_ERR_TOO_LARGE, "NB_MAX_COORD");
    nb_context_destroy(ctx);
}

/* nb_navmesh_detail_triangles on a navmesh without ground polygons, buffers NULL: nothing to write, no error. */
static void test_detail_triangles_of_an_empty_navmesh(void)
{
    nb_context* ctx = nb_context_create(NULL);
    nb_navmesh_params params;
    memset(&params, 0, sizeof(params));
    params.tile_width = params.tile_depth = 10.0f;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &params, &nav), NB_OK);
    uint32_t nv = 99, nt = 99;
    CHECK_INT(nb_navmesh_detail_triangles(ctx, nav, NULL, 0, NULL, NULL, 0, &nv, &nt), NB_OK);
    CHECK_INT(nv, 0);
    CHECK_INT(nt, 0);
    nb_navmesh_destroy(ctx, nav);
    nb_context_destroy(ctx);
}

int main(void)
{
    RUN(test_replay_navmesh_inputs);
    RUN(test_replay_bake_inputs);
    RUN(test_replay_obstacle_inputs);
    RUN(test_replay_voxel_inputs);
    RUN(test_coordinates_beyond_the_limit_are_corrupt);
    RUN(test_tile_build_refuses_coordinates_beyond_the_limit);
    RUN(test_detail_triangles_of_an_empty_navmesh);
    return nbt_finish("test_fuzz_replay");
}
