/* nb_bake: validates the input, then runs the pipeline stage by stage with timings and progress. */
#include "bake_internal.h"

#include <math.h>

const char* nb_stat_name(nb_stat stat)
{
    switch (stat) {
#define NB_STAT_NAME_(name, str) \
    case name:                   \
        return str;
        NB_STAT_TABLE(NB_STAT_NAME_)
#undef NB_STAT_NAME_
    default:
        return "unknown";
    }
}

#define FN_ "nb_bake"

/* ---- input validation: every message names what is wrong and where ---- */

/* True when triangle i has no area: its cross product is zero, or so small against its edges (sine of the angle
 * below 1e-6) that it is a line. In double: float coordinates near the float range would overflow the products. */
static int triangle_degenerate(const nb_mesh* m, uint32_t i)
{
    const float* p[3];
    for (int k = 0; k < 3; ++k)
        p[k] = &m->positions[(size_t)(m->indices ? m->indices[(size_t)i * 3 + k] : i * 3 + (uint32_t)k) * 3];
    double e0[3], e1[3];
    for (int k = 0; k < 3; ++k) {
        e0[k] = (double)p[1][k] - p[0][k];
        e1[k] = (double)p[2][k] - p[0][k];
    }
    const double n[3] = { e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0] };
    const double nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    const double l0 = e0[0] * e0[0] + e0[1] * e0[1] + e0[2] * e0[2];
    const double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
    return nn <= 1e-12 * l0 * l1;
}

nb_status nb_validate_mesh(nb_context* ctx, const char* fn, const nb_mesh* m, int referenced_only,
                           uint32_t* tri_count_out)
{
    if (!m->positions && m->vertex_count > 0)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: mesh.positions is NULL but vertex_count is %u", fn, m->vertex_count);
    uint32_t tri_count = m->triangle_count;
    if (!m->indices) {
        if (m->vertex_count % 3 != 0)
            return nb_fail(ctx, NB_ERR_INVALID_ARG,
                           "%s: without indices vertex_count must be a multiple of 3 (got %u)", fn, m->vertex_count);
        tri_count = m->vertex_count / 3;
    }
    if (tri_count == 0)
        return nb_fail(ctx, NB_ERR_EMPTY_MESH, "%s: the mesh has no triangles (%u vertices, %u triangles)", fn,
                       m->vertex_count, tri_count);
    if ((uint64_t)m->vertex_count * 3 > (uint64_t)SIZE_MAX / sizeof(float))
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: %u vertices do not fit in memory", fn, m->vertex_count);

    if (m->indices) {
        for (uint64_t i = 0; i < (uint64_t)tri_count * 3; ++i)
            if (m->indices[i] >= m->vertex_count)
                return nb_fail(ctx, NB_ERR_INDEX_RANGE,
                               "%s: triangle %llu uses vertex index %u but the mesh has %u vertices", fn,
                               (unsigned long long)(i / 3), m->indices[i], m->vertex_count);
    }
    /* Every vertex when the bounds come from the vertices; else (a tile of a bigger level, sharing its vertex
     * array) only those the triangles use, or each tile would re-check the whole level. */
    const uint64_t nchecks = referenced_only && m->indices ? (uint64_t)tri_count * 3 : m->vertex_count;
    for (uint64_t c = 0; c < nchecks; ++c) {
        const uint32_t i = referenced_only && m->indices ? m->indices[c] : (uint32_t)c;
        const float* p = &m->positions[(size_t)i * 3];
        for (int k = 0; k < 3; ++k) {
            if (!isfinite(p[k]))
                return nb_fail(ctx, NB_ERR_NONFINITE, "%s: vertex %u has a non-finite coordinate (%c = %g)", fn, i,
                               "xyz"[k], p[k]);
            if (fabsf(p[k]) > NB_MAX_COORD) /* else the grid or the navmesh fails later, naming its own sizes */
                return nb_fail(ctx, NB_ERR_TOO_LARGE,
                               "%s: vertex %u has a coordinate beyond %g, the largest a navmesh holds (%c = %g)", fn,
                               i, NB_MAX_COORD, "xyz"[k], p[k]);
        }
    }
    if (m->areas) {
        for (uint32_t i = 0; i < tri_count; ++i)
            if (m->areas[i] > 63)
                return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: areas[%u] is %u; area ids are 0..63", fn, i,
                               (unsigned)m->areas[i]);
    }
    /* A whole mesh (not a tile's share of one) whose every triangle has no area: nothing to bake, and most likely
     * buffers that were never filled (all zeros) or the wrong ones. One triangle with area ends the scan. */
    if (!referenced_only) {
        uint32_t i = 0;
        while (i < tri_count && triangle_degenerate(m, i))
            ++i;
        if (i == tri_count) {
            const uint32_t* t = m->indices;
            char what[40];
            if (tri_count == 1)
                nb_format(what, sizeof(what), "the only triangle is");
            else
                nb_format(what, sizeof(what), "all %u triangles are", tri_count);
            return nb_fail(ctx, NB_ERR_EMPTY_MESH,
                           "%s: %s degenerate (no area: corners that coincide or lie on one line; triangle 0 uses "
                           "vertices %u, %u, %u)",
                           fn, what, t ? t[0] : 0u, t ? t[1] : 1u, t ? t[2] : 2u);
        }
    }
    *tri_count_out = tri_count;
    return NB_OK;
}

/* The gap between a finite non-negative float and the next one up. */
static float float_spacing(float a)
{
    uint32_t bits;
    memcpy(&bits, &a, sizeof(bits));
    ++bits;
    float next;
    memcpy(&next, &bits, sizeof(next));
    return next - a;
}

static uint32_t count_walkable(const nb_compact_heightfield* chf)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < chf->span_count; ++i)
        n += chf->areas[i] != NB_NULL_AREA;
    return n;
}

void nb_bake_result_release(nb_context* ctx, nb_bake_result* r)
{
    if (!r)
        return;
    nb_heightfield_destroy(ctx, r->heightfield);
    nb_compact_heightfield_destroy(ctx, r->compact);
    nb_contour_set_destroy(ctx, r->contours);
    nb_poly_mesh_destroy(ctx, r->poly_mesh);
    nb_poly_mesh_detail_destroy(ctx, r->detail);
    memset(r, 0, sizeof(*r));
}

nb_status nb_bake(nb_context* ctx, const nb_bake_input* input, const nb_config* config, nb_stage stop_after,
                  unsigned keep, nb_bake_result* out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_bake: ctx is NULL");
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": out is NULL");
    memset(out, 0, sizeof(*out));
    if (!input)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": input is NULL");
    if ((int)stop_after < 0 || stop_after >= NB_STAGE_COUNT)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": stop_after must be 0..%d (got %d)", NB_STAGE_COUNT - 1,
                       (int)stop_after);
    if (stop_after == NB_STAGE_ALL)
        stop_after = NB_STAGE_DETAIL;

    nb_config cfg;
    nb_config_cells cells;
    nb_status st = nb_config_resolve(ctx, config, &cfg, &cells);
    if (st != NB_OK)
        return st;
    uint32_t tri_count = 0;
    st = nb_validate_mesh(ctx, FN_, &input->mesh, input->bmin && input->bmax, &tri_count);
    if (st != NB_OK)
        return st;
    if (input->volume_count && !input->volumes)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": volumes is NULL but volume_count is %u", input->volume_count);
    for (uint32_t i = 0; i < input->volume_count; ++i) {
        float lo[3], hi[3];
        char where[48];
        nb_format(where, sizeof(where), FN_ " (volume %u)", i);
        st = nb_volume_bounds(ctx, where, &input->volumes[i], lo, hi);
        if (st != NB_OK)
            return st;
    }
    if (input->border_size < 0 || input->border_size > 1024)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": border_size must be 0..1024 cells (got %d)", input->border_size);

    /* ---- bounds and grid ---- */
    const nb_mesh* m = &input->mesh;
    float bmin[3], bmax[3];
    if (!input->bmin != !input->bmax)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": give both bmin and bmax or neither");
    if (input->bmin) {
        for (int k = 0; k < 3; ++k) {
            if (!isfinite(input->bmin[k]) || !isfinite(input->bmax[k]))
                return nb_fail(ctx, NB_ERR_NONFINITE, FN_ ": bounds must be finite (axis %c)", "xyz"[k]);
            if (input->bmin[k] > input->bmax[k])
                return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": bmin.%c (%g) > bmax.%c (%g)", "xyz"[k], input->bmin[k],
                               "xyz"[k], input->bmax[k]);
            bmin[k] = input->bmin[k];
            bmax[k] = input->bmax[k];
        }
    } else {
        memcpy(bmin, m->positions, sizeof(bmin));
        memcpy(bmax, m->positions, sizeof(bmax));
        for (uint32_t i = 1; i < m->vertex_count; ++i)
            for (int k = 0; k < 3; ++k) {
                bmin[k] = nb_minf(bmin[k], m->positions[(size_t)i * 3 + k]);
                bmax[k] = nb_maxf(bmax[k], m->positions[(size_t)i * 3 + k]);
            }
    }
    /* Far from the origin float32 coordinates are spaced wider than a cell: the level the caller holds is already
     * rounded that coarsely, and the bake would turn it into polygons of another shape, or of no area, without a
     * word (the dungeon moved 1e7 out: 167 polygons for 119, 1e8: 32 of zero area). */
    for (int k = 0; k < 3; ++k) {
        const float mag = nb_maxf(fabsf(bmin[k]), fabsf(bmax[k]));
        const float cell = k == 1 ? cfg.cell_height : cfg.cell_size;
        const float gap = float_spacing(mag);
        if (gap > cell)
            return nb_fail(ctx, NB_ERR_TOO_LARGE,
                           FN_ ": the level reaches %g from the origin in %c, where float32 coordinates are %g apart, "
                           "more than a cell (%s %g): move the level nearer the origin",
                           (double)mag, "xyz"[k], (double)gap, k == 1 ? "cell_height" : "cell_size", (double)cell);
    }
    const double extent_x = ((double)bmax[0] - bmin[0]) / cfg.cell_size + 2.0 * input->border_size;
    const double extent_z = ((double)bmax[2] - bmin[2]) / cfg.cell_size + 2.0 * input->border_size;
    const double extent_y = ((double)bmax[1] - bmin[1]) / cfg.cell_height;
    if (extent_x * extent_z > (double)(1u << 28) || extent_x > 1e9 || extent_z > 1e9)
        return nb_fail(ctx, NB_ERR_TOO_LARGE,
                       FN_ ": the grid would be %.0f x %.0f columns (the bounds, every vertex counted: x %g .. %g, "
                       "z %g .. %g), above the limit of 2^28; raise cell_size or bake in tiles",
                       extent_x, extent_z, (double)bmin[0], (double)bmax[0], (double)bmin[2], (double)bmax[2]);
    /* A surface at the very top (bmax[1]) goes into the layer above it, which must still end below the spans'
     * largest top: NB_SPAN_MAX_HEIGHT - 1 cells at most. */
    if (extent_y > NB_SPAN_MAX_HEIGHT - 1)
        return nb_fail(ctx, NB_ERR_TOO_LARGE,
                       FN_ ": the mesh is %.7g cells tall (y %g .. %g), above the limit of %d; raise cell_height",
                       extent_y, (double)bmin[1], (double)bmax[1], NB_SPAN_MAX_HEIGHT - 1);
    const float border = (float)input->border_size * cfg.cell_size;
    bmin[0] -= border;
    bmin[2] -= border;
    bmax[0] += border;
    bmax[2] += border;
    int32_t w, h;
    nb_calc_grid_size(bmin, bmax, cfg.cell_size, &w, &h);
    if (w < 1)
        w = 1;
    if (h < 1)
        h = 1;
    /* Polygon vertices store cell coordinates in 16 bits: say so now, not after rasterizing and partitioning. */
    if (stop_after >= NB_STAGE_POLYMESH && (w > 0xffff || h > 0xffff))
        return nb_fail(ctx, NB_ERR_TOO_LARGE,
                       FN_ ": the grid would be %d x %d columns; polygons reach 65535 columns at most on each axis: "
                       "raise cell_size or bake in tiles (tile_size)",
                       w, h);

    for (int i = 0; i < NB_STAT_COUNT; ++i)
        out->stats[i] = -1.0;
    out->config = cfg;
    out->stats[NB_STAT_GRID_WIDTH] = w;
    out->stats[NB_STAT_GRID_HEIGHT] = h;

    uint8_t* areas = NULL;
    nb_heightfield* hf = NULL;
    nb_compact_heightfield* chf = NULL;
    const double t_start = nb_now_ms();
    double t = t_start;
#define LAP_(stat)                              \
    do {                                        \
        const double now_ = nb_now_ms();        \
        out->stats[stat] = now_ - t;            \
        t = now_;                               \
    } while (0)
#define CHECK_(expr)            \
    do {                                   \
        st = (expr);                       \
        if (st != NB_OK)                   \
            goto cleanup;                  \
    } while (0)
/* A stage's last report says done == total: a progress bar reaches its end (total is never 0). */
#define END_(stage) CHECK_(nb_report_end(ctx, stage))

    /* ---- rasterize: slope marking + triangles into spans ---- */
    CHECK_(nb_report(ctx, NB_STAGE_RASTERIZE, 0, tri_count));
    areas = (uint8_t*)nb_alloc(ctx, tri_count);
    if (!areas) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'areas' (%u)", tri_count);
        goto cleanup;
    }
    if (m->areas)
        memcpy(areas, m->areas, tri_count);
    else
        memset(areas, NB_WALKABLE_AREA, tri_count);
    nb_clear_unwalkable_triangles(cfg.agent_max_slope, m->positions, m->indices, tri_count, areas);
    CHECK_(nb_heightfield_create(ctx, w, h, bmin, bmax, cfg.cell_size, cfg.cell_height, &hf));
    CHECK_(nb_rasterize_triangles(ctx, m->positions, m->vertex_count, m->indices, areas, tri_count, hf,
                                  cells.walkable_climb));
    nb_free(ctx, areas);
    areas = NULL;
    LAP_(NB_STAT_MS_RASTERIZE);
    if (stop_after == NB_STAGE_RASTERIZE)
        goto done;

    /* ---- filters ---- */
    CHECK_(nb_report(ctx, NB_STAGE_FILTER, 0, 1));
    nb_filter_walkable(cells.walkable_height, cells.walkable_climb, hf);
    END_(NB_STAGE_FILTER);
    out->stats[NB_STAT_HF_SPANS] = hf->span_count;
    LAP_(NB_STAT_MS_FILTER);
    if (stop_after == NB_STAGE_FILTER)
        goto done;

    /* ---- compact heightfield ---- */
    CHECK_(nb_report(ctx, NB_STAGE_COMPACT, 0, 1));
    CHECK_(nb_compact_heightfield_build(ctx, cells.walkable_height, cells.walkable_climb, hf, &chf));
    chf->border_size = input->border_size;
    END_(NB_STAGE_COMPACT);
    out->stats[NB_STAT_COMPACT_SPANS] = chf->span_count;
    if (!(keep & NB_KEEP_HEIGHTFIELD)) {
        nb_heightfield_destroy(ctx, hf);
        hf = NULL;
    }
    LAP_(NB_STAT_MS_COMPACT);
    if (stop_after == NB_STAGE_COMPACT)
        goto done;

    /* ---- erosion by agent radius ---- */
    CHECK_(nb_report(ctx, NB_STAGE_ERODE, 0, 1));
    CHECK_(nb_erode_walkable_area(ctx, cells.walkable_radius, chf));
    END_(NB_STAGE_ERODE);
    out->stats[NB_STAT_WALKABLE_AFTER_ERODE] = count_walkable(chf);
    LAP_(NB_STAT_MS_ERODE);
    if (stop_after == NB_STAGE_ERODE)
        goto done;

    /* ---- areas: median filter of per-triangle ids, then volumes (crisp, after the filter) ---- */
    const uint32_t nvol = input->volume_count;
    CHECK_(nb_report(ctx, NB_STAGE_AREAS, 0, nvol ? nvol : 1));
    if (m->areas)
        CHECK_(nb_median_filter_walkable_area(ctx, chf));
    for (uint32_t i = 0; i < nvol; ++i) {
        CHECK_(nb_mark_volume(ctx, &input->volumes[i], chf));
        CHECK_(nb_report(ctx, NB_STAGE_AREAS, i + 1, nvol));
    }
    END_(NB_STAGE_AREAS);
    LAP_(NB_STAT_MS_AREAS);
    if (stop_after == NB_STAGE_AREAS)
        goto done;

    /* ---- regions .. detail: shared with the tile cache, which restarts here from a cached chf ---- */
    st = nb_bake_from_compact(ctx, &cfg, &cells, input->border_size, chf, stop_after, keep, out);
    chf = NULL; /* taken over: in out->compact, or freed */
    if (st != NB_OK)
        goto cleanup;
    out->stats[NB_STAT_MS_TOTAL] = nb_now_ms() - t_start;
    out->heightfield = hf;
    return NB_OK;

done:
    /* Stopped at or before NB_STAGE_AREAS: the heightfield goes unless kept or last; chf is always the last. */
    if (hf && !(keep & NB_KEEP_HEIGHTFIELD) && stop_after > NB_STAGE_FILTER) {
        nb_heightfield_destroy(ctx, hf);
        hf = NULL;
    }
    out->stats[NB_STAT_MS_TOTAL] = nb_now_ms() - t_start;
    out->heightfield = hf;
    out->compact = chf;
    return NB_OK;

cleanup:
    nb_free(ctx, areas);
    nb_heightfield_destroy(ctx, hf);
    nb_compact_heightfield_destroy(ctx, chf);
    memset(out, 0, sizeof(*out));
    return st;
#undef LAP_
#undef CHECK_
#undef END_
}

nb_status nb_bake_from_compact(nb_context* ctx, const nb_config* cfg, const nb_config_cells* cells,
                               int32_t border_size, nb_compact_heightfield* chf, nb_stage stop_after, unsigned keep,
                               nb_bake_result* out)
{
    nb_status st = NB_OK;
    nb_contour_set* cset = NULL;
    nb_poly_mesh* pmesh = NULL;
    nb_poly_mesh_detail* dmesh = NULL;
    out->compact = NULL;
    out->contours = NULL;
    out->poly_mesh = NULL;
    out->detail = NULL;
    if (stop_after == NB_STAGE_ALL)
        stop_after = NB_STAGE_DETAIL;
    double t = nb_now_ms();
#define LAP_(stat)                              \
    do {                                        \
        const double now_ = nb_now_ms();        \
        out->stats[stat] = now_ - t;            \
        t = now_;                               \
    } while (0)
#define CHECK_(expr)            \
    do {                                   \
        st = (expr);                       \
        if (st != NB_OK)                   \
            goto cleanup;                  \
    } while (0)
/* A stage's last report says done == total: a progress bar reaches its end (total is never 0). */
#define END_(stage) CHECK_(nb_report_end(ctx, stage))

    /* ---- regions (watershed and wavefront need the distance field first) ---- */
    CHECK_(nb_report(ctx, NB_STAGE_REGIONS, 0, 1));
    switch (cfg->partition) {
    case NB_PARTITION_MONOTONE:
        CHECK_(nb_build_regions_monotone(ctx, chf, border_size, cells->min_region_area, cells->merge_region_area));
        break;
    case NB_PARTITION_LAYERS:
        CHECK_(nb_build_regions_layers(ctx, chf, border_size, cells->min_region_area));
        break;
    case NB_PARTITION_WAVEFRONT: /* seeds by the distance field, like watershed */
        CHECK_(nb_build_distance_field(ctx, chf));
        LAP_(NB_STAT_MS_DISTANCE);
        CHECK_(nb_build_regions_wavefront(ctx, chf, border_size, cells->min_region_area, cells->merge_region_area));
        break;
    default:
        CHECK_(nb_build_distance_field(ctx, chf));
        LAP_(NB_STAT_MS_DISTANCE);
        CHECK_(nb_build_regions_watershed(ctx, chf, border_size, cells->min_region_area, cells->merge_region_area));
        break;
    }
    END_(NB_STAGE_REGIONS);
    out->stats[NB_STAT_REGIONS] = chf->max_regions; /* as the reference counts: highest id + 1 */
    LAP_(NB_STAT_MS_REGIONS);
    if (stop_after == NB_STAGE_REGIONS)
        goto done;

    /* ---- contours ---- */
    CHECK_(nb_report(ctx, NB_STAGE_CONTOURS, 0, 1));
    CHECK_(nb_build_contours(ctx, chf, cfg->edge_max_error, cells->max_edge_len, &cset));
    END_(NB_STAGE_CONTOURS);
    out->stats[NB_STAT_CONTOURS] = cset->nconts;
    LAP_(NB_STAT_MS_CONTOURS);
    if (stop_after == NB_STAGE_CONTOURS)
        goto done;

    /* ---- convex polygons ---- */
    CHECK_(nb_report(ctx, NB_STAGE_POLYMESH, 0, 1));
    CHECK_(nb_build_poly_mesh(ctx, cset, cfg->verts_per_poly, &pmesh));
    END_(NB_STAGE_POLYMESH);
    out->stats[NB_STAT_POLYS] = pmesh->npolys;
    out->stats[NB_STAT_POLY_VERTS] = pmesh->nverts;
    if (!(keep & NB_KEEP_CONTOURS)) {
        nb_contour_set_destroy(ctx, cset);
        cset = NULL;
    }
    LAP_(NB_STAT_MS_POLYMESH);
    if (stop_after == NB_STAGE_POLYMESH)
        goto done;

    /* ---- detail height mesh ---- */
    CHECK_(nb_report(ctx, NB_STAGE_DETAIL, 0, 1));
    CHECK_(nb_build_poly_mesh_detail(ctx, pmesh, chf, cfg->detail_sample_dist, cfg->detail_sample_max_error, &dmesh));
    out->stats[NB_STAT_DETAIL_VERTS] = dmesh->nverts;
    out->stats[NB_STAT_DETAIL_TRIS] = dmesh->ntris;
    END_(NB_STAGE_DETAIL);
    LAP_(NB_STAT_MS_DETAIL);

done:
    /* Intermediates the caller did not ask for go now; the last stage's output always stays. */
    if (chf && !(keep & NB_KEEP_COMPACT) && stop_after > NB_STAGE_REGIONS) {
        nb_compact_heightfield_destroy(ctx, chf);
        chf = NULL;
    }
    if (cset && !(keep & NB_KEEP_CONTOURS) && stop_after > NB_STAGE_CONTOURS) {
        nb_contour_set_destroy(ctx, cset);
        cset = NULL;
    }
    out->compact = chf;
    out->contours = cset;
    out->poly_mesh = pmesh;
    out->detail = dmesh;
    return NB_OK;

cleanup:
    nb_compact_heightfield_destroy(ctx, chf);
    nb_contour_set_destroy(ctx, cset);
    nb_poly_mesh_destroy(ctx, pmesh);
    nb_poly_mesh_detail_destroy(ctx, dmesh);
    return st;
#undef LAP_
#undef CHECK_
#undef END_
}
