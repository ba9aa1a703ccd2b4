/* Config defaults, validation messages, generic field access and the status table. */
#include "navbake.h"
#include "nbtest.h"

static nb_context* ctx;

static void test_defaults_match_reference(void)
{
    nb_config c;
    nb_config_cells cells;
    CHECK_INT(nb_config_resolve(ctx, NULL, &c, &cells), NB_OK);
    CHECK_NEAR(c.cell_size, 0.3, 1e-6);
    CHECK_NEAR(c.cell_height, 0.2, 1e-6);
    CHECK_NEAR(c.agent_height, 2.0, 1e-6);
    CHECK_NEAR(c.agent_radius, 0.6, 1e-6);
    CHECK_NEAR(c.agent_max_climb, 0.9, 1e-6);
    CHECK_NEAR(c.agent_max_slope, 45.0, 1e-6);
    CHECK_NEAR(c.region_min_size, 8.0, 1e-6);
    CHECK_NEAR(c.region_merge_size, 20.0, 1e-6);
    CHECK_NEAR(c.edge_max_len, 12.0, 1e-6);
    CHECK_NEAR(c.edge_max_error, 1.3, 1e-6);
    CHECK_INT(c.verts_per_poly, 6);
    CHECK_NEAR(c.detail_sample_dist, 1.8, 1e-6);
    CHECK_NEAR(c.detail_sample_max_error, 0.2, 1e-6);
    CHECK_INT(c.partition, NB_PARTITION_WATERSHED);
    CHECK_INT(c.tile_size, 0);
    /* The reference's cell quantities (REFERENCE.md). */
    CHECK_INT(cells.walkable_height, 10);
    CHECK_INT(cells.walkable_climb, 4);
    CHECK_INT(cells.walkable_radius, 2);
    CHECK_INT(cells.max_edge_len, 40);
    CHECK_INT(cells.min_region_area, 64);
    CHECK_INT(cells.merge_region_area, 400);
}

static void test_zero_means_default_and_explicit_zero(void)
{
    nb_config in, out;
    memset(&in, 0, sizeof(in));
    in.cell_size = 0.5f;
    in.agent_radius = NB_ZERO;
    in.region_min_size = NB_ZERO;
    nb_config_cells cells;
    CHECK_INT(nb_config_resolve(ctx, &in, &out, &cells), NB_OK);
    CHECK_NEAR(out.cell_size, 0.5, 1e-6);
    CHECK_NEAR(out.agent_radius, 0.0, 0);
    CHECK_INT(cells.walkable_radius, 0);
    CHECK_INT(cells.min_region_area, 0);
    CHECK_NEAR(out.agent_height, 2.0, 1e-6); /* untouched field: default */
    /* NB_ZERO is not accepted where zero makes no sense. */
    in.cell_size = NB_ZERO;
    CHECK_STATUS(ctx, nb_config_resolve(ctx, &in, &out, NULL), NB_ERR_INVALID_CONFIG, "config.cell_size");
}

static void test_each_field_validated_by_name(void)
{
    struct {
        const char* field;
        double value;
        nb_status status;
        const char* needle;
    } cases[] = {
        { "cell_size", -1.0, NB_ERR_INVALID_CONFIG, "config.cell_size must be > 0 and <= 1000 (got -1)" },
        { "cell_size", 5000.0, NB_ERR_INVALID_CONFIG, "(got 5000)" },
        /* a default the given cell size rules out: the caller never wrote detail_sample_dist (1.8 < 0.9 * 5) */
        { "cell_size", 5.0, NB_ERR_INVALID_CONFIG,
          "config.detail_sample_dist must be 0 (no sampling) or >= 0.9 * cell_size and <= 1e6 (got 1.8, its default: set it" },
        { "cell_height", -0.5, NB_ERR_INVALID_CONFIG, "config.cell_height" },
        { "agent_height", -2.0, NB_ERR_INVALID_CONFIG, "config.agent_height" },
        { "agent_height", 100.0, NB_ERR_INVALID_CONFIG, "255 cells" },
        { "agent_radius", -0.5, NB_ERR_INVALID_CONFIG, "config.agent_radius" },
        { "agent_radius", 100.0, NB_ERR_INVALID_CONFIG, "127 cells" },
        { "agent_max_climb", -3.0, NB_ERR_INVALID_CONFIG, "config.agent_max_climb" },
        { "agent_max_slope", 90.0, NB_ERR_INVALID_CONFIG, "config.agent_max_slope" },
        { "agent_max_slope", -5.0, NB_ERR_INVALID_CONFIG, "config.agent_max_slope" },
        { "region_min_size", -4.0, NB_ERR_INVALID_CONFIG, "config.region_min_size" },
        { "region_merge_size", -4.0, NB_ERR_INVALID_CONFIG, "config.region_merge_size" },
        { "edge_max_len", -12.0, NB_ERR_INVALID_CONFIG, "config.edge_max_len" },
        { "edge_max_error", -2.0, NB_ERR_INVALID_CONFIG, "config.edge_max_error" },
        { "verts_per_poly", 2, NB_ERR_INVALID_CONFIG, "config.verts_per_poly must be between 3 and 12 (got 2)" },
        { "verts_per_poly", 13, NB_ERR_INVALID_CONFIG, "config.verts_per_poly" },
        { "detail_sample_dist", 0.1, NB_ERR_INVALID_CONFIG, "config.detail_sample_dist" },
        { "detail_sample_max_error", -1.5, NB_ERR_INVALID_CONFIG, "config.detail_sample_max_error" },
        /* the upper limit named (the message said only ">= 0") */
        { "detail_sample_max_error", 1e9, NB_ERR_INVALID_CONFIG,
          "config.detail_sample_max_error must be >= 0 and <= 1e6 (got 1e+09)" },
        { "detail_sample_dist", 1e9, NB_ERR_INVALID_CONFIG, "and <= 1e6 (got 1e+09)" },
        { "partition", 9, NB_ERR_INVALID_CONFIG, "config.partition" },
        { "tile_size", 8, NB_ERR_INVALID_CONFIG, "config.tile_size" },
        { "tile_size", -64, NB_ERR_INVALID_CONFIG, "config.tile_size" },
        { "cell_size", NAN, NB_ERR_NONFINITE, "config.cell_size must be finite" },
        { "agent_radius", INFINITY, NB_ERR_NONFINITE, "config.agent_radius must be finite" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        nb_config in, out;
        memset(&in, 0, sizeof(in));
        const int field = nb_config_field_index(cases[i].field);
        CHECK(field >= 0);
        nb_config_set(&in, field, cases[i].value);
        CHECK_STATUS(ctx, nb_config_resolve(ctx, &in, &out, NULL), cases[i].status, cases[i].needle);
        /* On failure the output holds the defaults, never half-resolved values. */
        CHECK_NEAR(out.cell_size, 0.3, 1e-6);
    }
    /* the same with a field set before the bad one (a NaN left it in out) */
    nb_config in, out;
    memset(&in, 0, sizeof(in));
    in.cell_size = 0.5f;
    in.agent_height = NAN;
    CHECK_STATUS(ctx, nb_config_resolve(ctx, &in, &out, NULL), NB_ERR_NONFINITE, "config.agent_height must be finite");
    CHECK_NEAR(out.cell_size, 0.3, 1e-6);
}

static void test_field_table(void)
{
    CHECK_INT(nb_config_field_count(), 15);
    CHECK_INT(nb_config_field_index("cell-size"), 0);
    CHECK_INT(nb_config_field_index("cell_size"), 0);
    CHECK_INT(nb_config_field_index("tile_size"), 14);
    CHECK_INT(nb_config_field_index("cell"), -1);
    CHECK_INT(nb_config_field_index("cell_size_x"), -1);
    CHECK(nb_config_field_name(15) == NULL);
    nb_config c;
    memset(&c, 0, sizeof(c));
    for (int i = 0; i < nb_config_field_count(); ++i)
        nb_config_set(&c, i, nb_config_default(i));
    nb_config r;
    CHECK_INT(nb_config_resolve(ctx, &c, &r, NULL), NB_OK);
    CHECK(memcmp(&c, &r, sizeof(c)) == 0);
    CHECK_NEAR(nb_config_get(&r, nb_config_field_index("verts_per_poly")), 6, 0);
}

static void test_status_table(void)
{
    for (int s = 0; s < NB_STATUS_COUNT; ++s) {
        CHECK(strncmp(nb_status_name((nb_status)s), "NB_", 3) == 0);
        CHECK(strlen(nb_status_str((nb_status)s)) > 3);
    }
    CHECK(strcmp(nb_status_name(NB_ERR_OUT_OF_MEMORY), "NB_ERR_OUT_OF_MEMORY") == 0);
    CHECK(strcmp(nb_status_name((nb_status)999), "NB_UNKNOWN_STATUS") == 0);
}

static void test_null_args_and_context(void)
{
    CHECK_STATUS(ctx, nb_config_resolve(ctx, NULL, NULL, NULL), NB_ERR_NULL_ARG, "out is NULL");
    CHECK_INT(nb_context_status(ctx), NB_ERR_NULL_ARG);
    nb_context_clear_error(ctx);
    CHECK_INT(nb_context_status(ctx), NB_OK);
    CHECK(strcmp(nb_context_message(ctx), "") == 0);
    nb_context_destroy(NULL); /* accepted */
    /* A context whose allocator fails cannot be created, and says so by returning NULL. */
    nbt_alloc a = { .fail_at = 1 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    CHECK(nb_context_create(&d) == NULL);
    CHECK_INT(a.live, 0);
    /* half an allocator is refused, not replaced by malloc unseen */
    nb_context_desc half;
    memset(&half, 0, sizeof(half));
    half.allocator.alloc = d.allocator.alloc;
    CHECK(nb_context_create(&half) == NULL);
    memset(&half, 0, sizeof(half));
    half.allocator.free = d.allocator.free;
    CHECK(nb_context_create(&half) == NULL);
}

/* Every function that allocates refuses a NULL context with NB_ERR_NULL_ARG, its other arguments fine (18 of
 * them dereferenced it in the allocator: a crash). */
static void test_null_context_refused(void)
{
    static const float pos[12] = { 0, 0, 0, 0, 0, 10, 10, 0, 10, 10, 0, 0 };
    static const uint32_t idx[6] = { 0, 1, 2, 0, 2, 3 };
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = pos;
    in.mesh.vertex_count = 4;
    in.mesh.indices = idx;
    in.mesh.triangle_count = 2;
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    nb_config tiled = cfg;
    tiled.tile_size = 16;
    /* real objects, made with a context, for the calls that take them */
    nb_bake_result r;
    memset(&r, 0, sizeof(r));
    CHECK_INT(nb_bake(ctx, &in, &cfg, NB_STAGE_ALL, NB_KEEP_HEIGHTFIELD | NB_KEEP_COMPACT, &r), NB_OK);
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
    uint8_t* blob = NULL;
    size_t size = 0;
    CHECK_INT(nb_navmesh_save(ctx, nav, &blob, &size), NB_OK);
    const nb_navmesh_params* params = nb_navmesh_get_params(nav);
    const float lo[3] = { 0, 0, 0 }, hi[3] = { 10, 1, 10 };
    nb_heightfield* hf = NULL;
    nb_compact_heightfield* chf = NULL;
    nb_poly_mesh_detail* dm = NULL;
    nb_navmesh* out_nav = NULL;
    nb_grid_index* gi = NULL;
    nb_tile_cache* tc = NULL;
    uint8_t* data = NULL;
    size_t data_size = 0;
    nb_bake_result r2;
    memset(&r2, 0, sizeof(r2));
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = r.poly_mesh;
    const nb_status got[] = {
        nb_heightfield_create(NULL, 10, 10, lo, hi, 1.0f, 0.2f, &hf),
        nb_compact_heightfield_build(NULL, 10, 4, r.heightfield, &chf),
        nb_erode_walkable_area(NULL, 2, r.compact),
        nb_median_filter_walkable_area(NULL, r.compact),
        nb_build_poly_mesh_detail(NULL, r.poly_mesh, r.compact, 1.8f, 0.2f, &dm),
        nb_bake(NULL, &in, &cfg, NB_STAGE_ALL, 0, &r2),
        nb_bake_tile(NULL, &in, &tiled, NULL, 0, 0, 0, &data, &data_size, NULL),
        nb_bake_navmesh(NULL, &in, &cfg, NULL, 0, &out_nav),
        nb_bake_grid_tile(NULL, &in, &tiled, NULL, 0, 0, 0, &data, &data_size, NULL),
        nb_navmesh_create(NULL, params, &out_nav),
        nb_navmesh_add_tile(NULL, nav, blob, size),
        nb_navmesh_remove_tile(NULL, nav, 0, 0),
        nb_tile_build(NULL, &tp, &data, &data_size),
        nb_navmesh_save(NULL, nav, &data, &data_size),
        nb_navmesh_load(NULL, blob, size, &out_nav),
        nb_grid_index_create(NULL, &in, &tiled, &gi),
        nb_compact_encode(NULL, r.compact, 0, 0, &data, &data_size),
        nb_tile_cache_create(NULL, &in, &tiled, NULL, 0, &tc),
    };
    for (size_t i = 0; i < sizeof(got) / sizeof(got[0]); ++i) {
        if (got[i] != NB_ERR_NULL_ARG)
            fprintf(stderr, "  call %zu of the list\n", i);
        CHECK_INT(got[i], NB_ERR_NULL_ARG);
    }
    CHECK(!hf && !chf && !dm && !out_nav && !gi && !tc && !data);
    CHECK_INT(nb_navmesh_tile_count(nav), 1); /* remove_tile without a context removed nothing */
    nb_bytes_free(ctx, blob);
    nb_navmesh_destroy(ctx, nav);
    nb_bake_result_release(ctx, &r);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_defaults_match_reference);
    RUN(test_zero_means_default_and_explicit_zero);
    RUN(test_each_field_validated_by_name);
    RUN(test_field_table);
    RUN(test_status_table);
    RUN(test_null_args_and_context);
    RUN(test_null_context_refused);
    nb_context_destroy(ctx);
    return nbt_finish("test_config");
}
