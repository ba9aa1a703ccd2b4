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
          "config.detail_sample_dist must be 0 (no sampling) or >= 0.9 * cell_size (got 1.8, its default: set it" },
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
    nbt_alloc a = { 0, 1, 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    CHECK(nb_context_create(&d) == NULL);
    CHECK_INT(a.live, 0);
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
    nb_context_destroy(ctx);
    return nbt_finish("test_config");
}
