/* Bake configuration: defaults, validation and generic field access (sokol-style zero-means-default). */
#include "nb_internal.h"

#include <math.h>
#include <stddef.h>

typedef enum field_kind { FIELD_FLOAT, FIELD_INT, FIELD_PARTITION } field_kind;

typedef struct field_desc {
    const char* name;
    size_t offset;
    field_kind kind;
    double def;
    int zero_allowed; /* NB_ZERO selects an explicit zero */
} field_desc;

#define FIELD_(name, kind, def, z) { #name, offsetof(nb_config, name), kind, def, z }
static const field_desc k_fields[] = {
    FIELD_(cell_size, FIELD_FLOAT, 0.3, 0),
    FIELD_(cell_height, FIELD_FLOAT, 0.2, 0),
    FIELD_(agent_height, FIELD_FLOAT, 2.0, 0),
    FIELD_(agent_radius, FIELD_FLOAT, 0.6, 1),
    FIELD_(agent_max_climb, FIELD_FLOAT, 0.9, 1),
    FIELD_(agent_max_slope, FIELD_FLOAT, 45.0, 1),
    FIELD_(region_min_size, FIELD_FLOAT, 8.0, 1),
    FIELD_(region_merge_size, FIELD_FLOAT, 20.0, 1),
    FIELD_(edge_max_len, FIELD_FLOAT, 12.0, 1),
    FIELD_(edge_max_error, FIELD_FLOAT, 1.3, 1),
    FIELD_(verts_per_poly, FIELD_INT, 6, 0),
    FIELD_(detail_sample_dist, FIELD_FLOAT, 1.8, 1),
    FIELD_(detail_sample_max_error, FIELD_FLOAT, 0.2, 1),
    FIELD_(partition, FIELD_PARTITION, NB_PARTITION_WATERSHED, 0),
    FIELD_(tile_size, FIELD_INT, 0, 0),
};
#undef FIELD_
#define FIELD_COUNT ((int)(sizeof(k_fields) / sizeof(k_fields[0])))

int nb_config_field_count(void) { return FIELD_COUNT; }

const char* nb_config_field_name(int index) { return index >= 0 && index < FIELD_COUNT ? k_fields[index].name : NULL; }

int nb_config_field_index(const char* name)
{
    if (!name)
        return -1;
    for (int i = 0; i < FIELD_COUNT; ++i) {
        const char* a = k_fields[i].name;
        const char* b = name;
        while (*a && (*a == *b || (*a == '_' && *b == '-'))) {
            ++a;
            ++b;
        }
        if (!*a && !*b)
            return i;
    }
    return -1;
}

double nb_config_get(const nb_config* config, int index)
{
    if (!config || index < 0 || index >= FIELD_COUNT)
        return 0.0;
    const char* base = (const char*)config + k_fields[index].offset;
    switch (k_fields[index].kind) {
    case FIELD_FLOAT: return *(const float*)base;
    case FIELD_INT: return *(const int32_t*)base;
    default: return (double)*(const nb_partition*)base;
    }
}

void nb_config_set(nb_config* config, int index, double value)
{
    if (!config || index < 0 || index >= FIELD_COUNT)
        return;
    char* base = (char*)config + k_fields[index].offset;
    switch (k_fields[index].kind) {
    case FIELD_FLOAT: *(float*)base = (float)value; break;
    case FIELD_INT: *(int32_t*)base = isfinite(value) && fabs(value) < 2e9 ? (int32_t)value : INT32_MIN; break;
    default: *(nb_partition*)base = (nb_partition)(isfinite(value) && fabs(value) < 1e6 ? (int)value : -1); break;
    }
}

double nb_config_default(int index) { return index >= 0 && index < FIELD_COUNT ? k_fields[index].def : 0.0; }

static void fill_defaults(nb_config* c)
{
    for (int i = 0; i < FIELD_COUNT; ++i)
        nb_config_set(c, i, k_fields[i].def);
}

/* ---- validation ---- */

#define FN_ "nb_config_resolve"

/* given: the fields the caller set (bit per field index); a default that another field's value rules out (the
 * default detail_sample_dist with a cell_size above 2) says so, since the caller never wrote it. */
static nb_status bad(nb_context* ctx, uint32_t given, const char* field, const char* rule, double got)
{
    const int i = nb_config_field_index(field);
    const int defaulted = i >= 0 && !(given & (1u << i));
    return nb_fail(ctx, NB_ERR_INVALID_CONFIG, FN_ ": config.%s must be %s (got %g%s)", field, rule, got,
                   defaulted ? ", its default: set it to suit the other fields" : "");
}

nb_status nb_config_resolve(nb_context* ctx, const nb_config* in, nb_config* out, nb_config_cells* cells)
{
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": out is NULL");
    nb_config c;
    fill_defaults(&c);
    uint32_t given = 0;
    if (in) {
        for (int i = 0; i < FIELD_COUNT; ++i) {
            const field_desc* f = &k_fields[i];
            double v = nb_config_get(in, i);
            if (f->kind == FIELD_FLOAT) {
                if (!isfinite(v)) {
                    fill_defaults(out); /* the defaults, as for any other failure (c holds the fields before) */
                    return nb_fail(ctx, NB_ERR_NONFINITE, FN_ ": config.%s must be finite (got %g)", f->name, v);
                }
                if (v == 0.0)
                    continue; /* default */
                if (f->zero_allowed && v == (double)NB_ZERO)
                    v = 0.0;
            } else if (v == 0.0) {
                continue;
            }
            nb_config_set(&c, i, v);
            given |= 1u << i;
        }
    }
    nb_config resolved = c;
    fill_defaults(out); /* on failure `out` holds the defaults */

    /* Each check names the field, the rule and the value. */
    if (!(c.cell_size > 0.0f && c.cell_size <= 1000.0f))
        return bad(ctx, given, "cell_size", "> 0 and <= 1000", c.cell_size);
    if (!(c.cell_height > 0.0f && c.cell_height <= 1000.0f))
        return bad(ctx, given, "cell_height", "> 0 and <= 1000", c.cell_height);
    const double walkable_height = ceilf(c.agent_height / c.cell_height); /* float math, as the reference */
    if (!(c.agent_height > 0.0f) || walkable_height > 255.0)
        return bad(ctx, given, "agent_height", "> 0 and at most 255 cells (255 * cell_height)", c.agent_height);
    const double walkable_radius = ceilf(c.agent_radius / c.cell_size);
    if (!(c.agent_radius >= 0.0f) || walkable_radius > 127.0)
        return bad(ctx, given, "agent_radius", ">= 0 and at most 127 cells (127 * cell_size)", c.agent_radius);
    const double walkable_climb = floorf(c.agent_max_climb / c.cell_height);
    if (!(c.agent_max_climb >= 0.0f) || walkable_climb > 255.0)
        return bad(ctx, given, "agent_max_climb", ">= 0 and at most 255 cells (255 * cell_height)", c.agent_max_climb);
    if (!(c.agent_max_slope >= 0.0f && c.agent_max_slope < 90.0f))
        return bad(ctx, given, "agent_max_slope", ">= 0 and < 90 degrees", c.agent_max_slope);
    if (!(c.region_min_size >= 0.0f && c.region_min_size <= 10000.0f))
        return bad(ctx, given, "region_min_size", ">= 0 and <= 10000 cells", c.region_min_size);
    if (!(c.region_merge_size >= 0.0f && c.region_merge_size <= 10000.0f))
        return bad(ctx, given, "region_merge_size", ">= 0 and <= 10000 cells", c.region_merge_size);
    const double max_edge_len = c.edge_max_len / c.cell_size;
    if (!(c.edge_max_len >= 0.0f) || max_edge_len > 65535.0)
        return bad(ctx, given, "edge_max_len", ">= 0 and at most 65535 cells", c.edge_max_len);
    if (!(c.edge_max_error >= 0.0f && c.edge_max_error <= 1000.0f))
        return bad(ctx, given, "edge_max_error", ">= 0 and <= 1000 cells", c.edge_max_error);
    if (c.verts_per_poly < 3 || c.verts_per_poly > NB_MAX_VERTS_PER_POLY)
        return bad(ctx, given, "verts_per_poly", "between 3 and 12", c.verts_per_poly);
    if (!(c.detail_sample_dist == 0.0f || (c.detail_sample_dist >= 0.9f * c.cell_size && c.detail_sample_dist <= 1e6f)))
        return bad(ctx, given, "detail_sample_dist", "0 (no sampling) or >= 0.9 * cell_size and <= 1e6", c.detail_sample_dist);
    if (!(c.detail_sample_max_error >= 0.0f && c.detail_sample_max_error <= 1e6f))
        return bad(ctx, given, "detail_sample_max_error", ">= 0 and <= 1e6", c.detail_sample_max_error);
    if ((int)c.partition < NB_PARTITION_WATERSHED || (int)c.partition > NB_PARTITION_WAVEFRONT)
        return bad(ctx, given, "partition", "1 (watershed), 2 (monotone), 3 (layers) or 4 (wavefront)", (double)c.partition);
    if (c.tile_size != 0 && (c.tile_size < 16 || c.tile_size > 4096))
        return bad(ctx, given, "tile_size", "0 (one tile) or between 16 and 4096 cells", (double)c.tile_size);

    *out = resolved;
    if (cells) {
        cells->walkable_height = (int32_t)walkable_height;
        cells->walkable_climb = (int32_t)walkable_climb;
        cells->walkable_radius = (int32_t)walkable_radius;
        cells->max_edge_len = (int32_t)max_edge_len;
        const int32_t min_side = (int32_t)c.region_min_size, merge_side = (int32_t)c.region_merge_size;
        cells->min_region_area = min_side * min_side;
        cells->merge_region_area = merge_side * merge_side;
    }
    return NB_OK;
}
