/* Whole-navmesh bakes: the tile grid over a mesh, one tile of it, and nb_bake_navmesh, which bakes every tile
 * in this thread. The TypeScript layer hands the same nb_bake_grid_tile jobs to workers; a navmesh assembled
 * from them saves to the same bytes whatever the order (saving sorts tiles). */
#include "bake_internal.h"

#include <math.h>

void nb_grid_mesh_bounds(const nb_bake_input* in, float bmin[3], float bmax[3])
{
    if (in->bmin && in->bmax) {
        memcpy(bmin, in->bmin, 3 * sizeof(float));
        memcpy(bmax, in->bmax, 3 * sizeof(float));
        return;
    }
    const float* p = in->mesh.positions;
    memcpy(bmin, p, 3 * sizeof(float));
    memcpy(bmax, p, 3 * sizeof(float));
    for (uint32_t i = 1; i < in->mesh.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            bmin[k] = nb_minf(bmin[k], p[(size_t)i * 3 + k]);
            bmax[k] = nb_maxf(bmax[k], p[(size_t)i * 3 + k]);
        }
}

/* Grid geometry from resolved config and bounds (float arithmetic: web/src/bake.ts repeats it). */
nb_status nb_grid_from(nb_context* ctx, const char* fn, const nb_config* cfg, const float bmin[3], const float bmax[3],
                       nb_navmesh_params* params, int32_t* tiles_x, int32_t* tiles_z)
{
    const int tiled = cfg->tile_size > 0;
    const float tw = tiled ? (float)cfg->tile_size * cfg->cell_size : nb_maxf(bmax[0] - bmin[0], cfg->cell_size);
    const float td = tiled ? tw : nb_maxf(bmax[2] - bmin[2], cfg->cell_size);
    const double ntx = tiled ? ceil(((double)bmax[0] - bmin[0]) / tw) : 1.0;
    const double ntz = tiled ? ceil(((double)bmax[2] - bmin[2]) / td) : 1.0;
    /* A navmesh holds coordinates and tile sizes within NB_MAX_COORD. A solo tile is the level's width (a tiled one
     * at most 4096 cells of 1000): say which extent is beyond it, in the caller's terms, before nb_navmesh_create
     * refuses its tile_width. */
    for (int k = 0; k < 2 && !tiled; ++k) {
        const float w = k == 0 ? tw : td;
        const int a = k == 0 ? 0 : 2;
        if (!(w <= NB_MAX_COORD))
            return nb_fail(ctx, NB_ERR_TOO_LARGE,
                           "%s: the level is %.0f wide in %c (every vertex counted: %.0f .. %.0f), beyond %g, the most a "
                           "navmesh holds; remove the stray vertices",
                           fn, (double)w, "xyz"[a], (double)bmin[a], (double)bmax[a], NB_MAX_COORD);
    }
    const double ntiles = nb_maxf(1.0f, (float)ntx) * nb_maxf(1.0f, (float)ntz);
    if (ntiles > (double)NB_MAX_TILES)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: %.0f x %.0f tiles exceed the limit of %u; raise tile_size or cell_size",
                       fn, ntx, ntz, NB_MAX_TILES);
    memset(params, 0, sizeof(*params));
    memcpy(params->origin, bmin, sizeof(params->origin));
    params->tile_width = tw;
    params->tile_depth = td;
    *tiles_x = ntx < 1 ? 1 : (int32_t)ntx;
    *tiles_z = ntz < 1 ? 1 : (int32_t)ntz;
    params->max_tiles = (uint32_t)(*tiles_x * *tiles_z);
    return NB_OK;
}

nb_status nb_grid_check_bounds(nb_context* ctx, const char* fn, const nb_bake_input* in, float bmin[3], float bmax[3])
{
    if (!in->bmin != !in->bmax)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: give both bmin and bmax or neither", fn);
    nb_grid_mesh_bounds(in, bmin, bmax);
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: bounds must be finite (axis %c)", fn, "xyz"[k]);
        if (bmin[k] > bmax[k])
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: bmin.%c (%g) > bmax.%c (%g)", fn, "xyz"[k], bmin[k],
                           "xyz"[k], bmax[k]);
    }
    return NB_OK;
}

/* ---- off-mesh links: which tile holds each ---- */

void nb_grid_tile_bounds(const nb_navmesh_params* params, float bmax_y, int32_t tile_x, int32_t tile_z, float lo[3],
                         float hi[3])
{
    lo[0] = params->origin[0] + (float)tile_x * params->tile_width;
    lo[1] = params->origin[1];
    lo[2] = params->origin[2] + (float)tile_z * params->tile_depth;
    hi[0] = lo[0] + params->tile_width;
    hi[1] = bmax_y;
    hi[2] = lo[2] + params->tile_depth;
}

void nb_tile_field_box(const float lo[3], const float hi[3], float border, float field_lo[2], float field_hi[2])
{
    field_lo[0] = lo[0] - border;
    field_lo[1] = lo[2] - border;
    field_hi[0] = hi[0] + border;
    field_hi[1] = hi[2] + border;
}

/* How many tiles of one axis of the grid hold coordinate x by nb_link_in_tile's rule (1 but for float rounding
 * within an ulp or two of a shared edge). Only the tiles next to the one x falls in can. */
static int link_tiles_1d(float x, float origin, float size, int32_t n, float border)
{
    const double guess = floor(((double)x - origin) / size);
    const int32_t c = guess < 0.0 ? 0 : guess > (double)(n - 1) ? n - 1 : (int32_t)guess;
    int count = 0;
    for (int32_t t = nb_maxi(c - 1, 0); t <= nb_mini(c + 1, n - 1); ++t) {
        /* nb_grid_tile_bounds and nb_tile_field_box along one axis */
        const float lo = origin + (float)t * size;
        const float hi = lo + size;
        const float field_lo = lo - border, field_hi = hi + border;
        count += (t == 0 || x - border >= field_lo) && x + border < field_hi;
    }
    return count;
}

nb_status nb_links_check(nb_context* ctx, const char* fn, const nb_offmesh_link* links, uint32_t link_count,
                         const float bmin[3], const float bmax[3], const nb_navmesh_params* params, int32_t ntx,
                         int32_t ntz, float border)
{
    if (link_count && !links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: links is NULL but link_count is %u", fn, link_count);
    for (uint32_t i = 0; i < link_count; ++i) {
        const nb_offmesh_link* l = &links[i];
        for (int k = 0; k < 6; ++k) {
            const float v = k < 3 ? l->start[k] : l->end[k - 3];
            const char* which = k < 3 ? "start" : "end";
            if (!isfinite(v))
                return nb_fail(ctx, NB_ERR_NONFINITE, "%s: links[%u].%s[%d] is not finite", fn, i, which, k % 3);
            if (fabsf(v) > NB_MAX_COORD)
                return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: links[%u].%s[%d] is %g, beyond %g (NB_MAX_COORD)", fn, i,
                               which, k % 3, v, NB_MAX_COORD);
        }
        if (!isfinite(l->radius))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: links[%u].radius is not finite", fn, i);
        if (!(l->radius > 0.0f))
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: links[%u].radius must be > 0 (got %g)", fn, i, l->radius);
        if (l->radius > NB_MAX_COORD)
            return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: links[%u].radius is %g, beyond %g (NB_MAX_COORD)", fn, i,
                           l->radius, NB_MAX_COORD);
        if (l->area > 63)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: links[%u].area must be 0..63 (got %u)", fn, i, l->area);
        if (l->bidirectional > 1)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: links[%u].bidirectional must be 0 or 1 (got %u)", fn, i,
                           l->bidirectional);
        if (!bmin || !bmax)
            continue;
        /* A link lives in the tile of its start. Outside the level there is no such tile in a solo bake, while a
         * tiled grid, rounded up to whole tiles, has one: refuse it in every mode rather than keep it in one and
         * drop it in the other. The far edges are left out: a grid whose last tile ends exactly there cannot hold
         * them (tiles hold [lo, hi), and a tile rebuilt alone cannot know it is the last). */
        const float* p = l->start;
        if (!(p[0] >= bmin[0] && p[0] < bmax[0] && p[2] >= bmin[2] && p[2] < bmax[2]))
            return nb_fail(ctx, NB_ERR_INVALID_ARG,
                           "%s: links[%u]: start (%g, %g, %g) is outside the level's bounds (x %g..%g, z %g..%g, "
                           "the upper ends excluded); a link is stored in the tile of its start",
                           fn, i, p[0], p[1], p[2], bmin[0], bmax[0], bmin[2], bmax[2]);
        if (!params)
            continue;
        for (int a = 0; a < 2; ++a) {
            const int count = a == 0 ? link_tiles_1d(p[0], params->origin[0], params->tile_width, ntx, border)
                                     : link_tiles_1d(p[2], params->origin[2], params->tile_depth, ntz, border);
            if (count != 1)
                return nb_fail(ctx, NB_ERR_INVALID_ARG,
                               "%s: links[%u]: start (%g, %g, %g) lies on a tile border (%c = %g), where float "
                               "rounding puts it in %s tile; move it off the border a little (0.001)",
                               fn, i, p[0], p[1], p[2], "xz"[a], p[a * 2], count ? "more than one" : "no");
        }
    }
    return NB_OK;
}

nb_status nb_links_in_tile(nb_context* ctx, const char* fn, const nb_offmesh_link* links, uint32_t link_count,
                           const float field_lo[2], const float field_hi[2], float border, int first_x, int first_z,
                           nb_offmesh_link** out, uint32_t* count)
{
    *out = NULL;
    *count = 0;
    if (!link_count)
        return NB_OK;
    nb_offmesh_link* sel = (nb_offmesh_link*)nb_alloc(ctx, (size_t)link_count * sizeof(nb_offmesh_link));
    if (!sel)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'links' (%u)", fn, link_count);
    uint32_t n = 0;
    for (uint32_t i = 0; i < link_count; ++i)
        if (nb_link_in_tile(links[i].start, field_lo, field_hi, border, first_x, first_z))
            sel[n++] = links[i];
    *out = sel;
    *count = n;
    return NB_OK;
}

nb_status nb_bake_grid(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                       nb_navmesh_params* params, int32_t* tiles_x, int32_t* tiles_z)
{
    static const char* fn = "nb_bake_grid";
    if (!input || !params || !tiles_x || !tiles_z)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !input ? "input" : !params ? "params" : "tiles");
    nb_config cfg;
    nb_status st = nb_config_resolve(ctx, config, &cfg, NULL);
    if (st != NB_OK)
        return st;
    uint32_t ntris;
    st = nb_validate_mesh(ctx, fn, &input->mesh, 0, &ntris);
    if (st != NB_OK)
        return st;
    float bmin[3], bmax[3];
    st = nb_grid_check_bounds(ctx, fn, input, bmin, bmax);
    if (st != NB_OK)
        return st;
    return nb_grid_from(ctx, fn, &cfg, bmin, bmax, params, tiles_x, tiles_z);
}

void nb_grid_tile_input_release(nb_context* ctx, nb_grid_tile_input* t)
{
    nb_free(ctx, t->tris);
    nb_free(ctx, t->areas);
    memset(t, 0, sizeof(*t));
}

nb_status nb_grid_tile_select(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* cfg,
                              const nb_config_cells* cells, const nb_navmesh_params* params, const float bmax[3],
                              int32_t tile_x, int32_t tile_z, nb_grid_tile_input* out)
{
    return nb_grid_tile_select_from(ctx, fn, input, cfg, cells, params, bmax, tile_x, tile_z, NULL, 0, out);
}

nb_status nb_grid_tile_select_from(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* cfg,
                                   const nb_config_cells* cells, const nb_navmesh_params* params, const float bmax[3],
                                   int32_t tile_x, int32_t tile_z, const uint32_t* candidates, uint32_t ncandidates,
                                   nb_grid_tile_input* out)
{
    memset(out, 0, sizeof(*out));
    const nb_mesh* m = &input->mesh;
    nb_grid_tile_bounds(params, bmax[1], tile_x, tile_z, out->lo, out->hi);
    const float* lo = out->lo;
    const float* hi = out->hi;
    const uint32_t ntris = m->indices ? m->triangle_count : m->vertex_count / 3;
    /* Room for every candidate (at least one: a tile of no candidates is asked for when a link starts there). */
    const uint32_t want = candidates ? ncandidates : ntris;
    const uint32_t room = want ? want : 1;
    out->tris = (uint32_t*)nb_alloc(ctx, (size_t)room * 3 * sizeof(uint32_t));
    out->areas = m->areas ? (uint8_t*)nb_alloc(ctx, room) : NULL;
    if (!out->tris || (m->areas && !out->areas))
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'tris' (%u)", fn, room);
    /* The triangles whose xz box overlaps the tile with its border (checked here with the mesh's own triangle
     * numbers, so messages name the right triangle). */
    const float border = (float)(cells->walkable_radius + 3) * cfg->cell_size;
    uint32_t n = 0;
    const uint32_t ntest = candidates ? ncandidates : ntris;
    for (uint32_t c = 0; c < ntest; ++c) {
        const uint32_t t = candidates ? candidates[c] : c;
        float tmin[2] = { 1e30f, 1e30f }, tmax[2] = { -1e30f, -1e30f };
        for (int k = 0; k < 3; ++k) {
            const uint32_t v = m->indices ? m->indices[(size_t)t * 3 + k] : t * 3 + k;
            if (v >= m->vertex_count)
                return nb_fail(ctx, NB_ERR_INDEX_RANGE, "%s: triangle %u uses vertex index %u but the mesh has %u vertices",
                               fn, t, v, m->vertex_count);
            const float* p = &m->positions[(size_t)v * 3];
            tmin[0] = nb_minf(tmin[0], p[0]);
            tmax[0] = nb_maxf(tmax[0], p[0]);
            tmin[1] = nb_minf(tmin[1], p[2]);
            tmax[1] = nb_maxf(tmax[1], p[2]);
        }
        if (m->areas && m->areas[t] > 63)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: areas[%u] is %u; area ids are 0..63", fn, t,
                           (unsigned)m->areas[t]);
        if (tmax[0] < lo[0] - border || tmin[0] > hi[0] + border || tmax[1] < lo[2] - border ||
            tmin[1] > hi[2] + border)
            continue;
        for (int k = 0; k < 3; ++k)
            out->tris[n * 3 + k] = m->indices ? m->indices[(size_t)t * 3 + k] : t * 3 + k;
        if (out->areas)
            out->areas[n] = m->areas[t];
        ++n;
    }
    out->tri_count = n;
    out->in = *input;
    out->in.mesh.indices = out->tris;
    out->in.mesh.triangle_count = n;
    out->in.mesh.areas = out->areas;
    out->in.bmin = out->lo;
    out->in.bmax = out->hi;
    out->in.border_size = cells->walkable_radius + 3;
    return NB_OK;
}

nb_status nb_bake_grid_tile(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                            const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x, int32_t tile_z,
                            uint8_t** data, size_t* size, double stats[NB_STAT_COUNT])
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_bake_grid_tile: ctx is NULL");
    static const char* fn = "nb_bake_grid_tile";
    if (!data || !size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !data ? "data" : "size");
    *data = NULL;
    *size = 0;
    if (!input)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: input is NULL", fn);
    if (link_count && !links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: links is NULL but link_count is %u", fn, link_count);
    nb_config cfg;
    nb_config_cells cells;
    nb_status st = nb_config_resolve(ctx, config, &cfg, &cells);
    if (st != NB_OK)
        return st;
    const nb_mesh* m = &input->mesh;
    if (!m->positions || m->vertex_count == 0) {
        uint32_t n;
        st = nb_validate_mesh(ctx, fn, m, 0, &n); /* the precise reason */
        return st != NB_OK ? st : nb_fail(ctx, NB_ERR_EMPTY_MESH, "%s: the mesh has no vertices", fn);
    }
    float bmin[3], bmax[3];
    st = nb_grid_check_bounds(ctx, fn, input, bmin, bmax);
    if (st != NB_OK)
        return st;
    nb_navmesh_params params;
    int32_t ntx, ntz;
    st = nb_grid_from(ctx, fn, &cfg, bmin, bmax, &params, &ntx, &ntz);
    if (st != NB_OK)
        return st;
    if (tile_x < 0 || tile_z < 0 || tile_x >= ntx || tile_z >= ntz)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: tile (%d, %d) is outside the %d x %d grid", fn, tile_x, tile_z,
                       ntx, ntz);

    const int tiled = cfg.tile_size > 0;
    const float border = (float)(cells.walkable_radius + 3) * cfg.cell_size;
    st = nb_links_check(ctx, fn, links, link_count, bmin, bmax, tiled ? &params : NULL, ntx, ntz, border);
    if (st != NB_OK)
        return st;
    nb_grid_tile_input sel;
    memset(&sel, 0, sizeof(sel));
    nb_offmesh_link* tlinks = NULL;
    uint32_t nlinks = link_count; /* the tile's */
    float field_lo[2], field_hi[2];
    double local_stats[NB_STAT_COUNT];
    double* st_out = stats ? stats : local_stats;

    if (!tiled) {
        /* Every link starts inside the level's bounds, which are the tile's: all are stored. */
        st = nb_bake_tile_as(ctx, input, config, links, link_count, tile_x, tile_z, 1, data, size, st_out);
        goto cleanup;
    }
    st = nb_grid_tile_select(ctx, fn, input, &cfg, &cells, &params, bmax, tile_x, tile_z, &sel);
    if (st != NB_OK)
        goto cleanup;
    nb_tile_field_box(sel.lo, sel.hi, border, field_lo, field_hi);
    st = nb_links_in_tile(ctx, fn, links, link_count, field_lo, field_hi, border, tile_x == 0, tile_z == 0, &tlinks,
                          &nlinks);
    if (st != NB_OK)
        goto cleanup;
    if (sel.tri_count == 0) {
        /* No ground here; links starting here still get their tile, as a solo bake keeps them. */
        for (int i = 0; i < NB_STAT_COUNT; ++i)
            st_out[i] = -1.0;
        if (nlinks)
            st = nb_tile_links_only(ctx, &cfg, &cells, sel.lo, sel.hi, tlinks, nlinks, tile_x, tile_z, data, size);
        goto cleanup; /* nothing here: *data stays NULL */
    }
    /* The caller's config, not the resolved one: resolving twice would turn explicit zeros into defaults. */
    st = nb_bake_tile_as(ctx, &sel.in, config, tlinks, nlinks, tile_x, tile_z, 1, data, size, st_out);

cleanup:
    if (st == NB_OK && *data && st_out[NB_STAT_POLYS] <= 0 && nlinks == 0) {
        nb_bytes_free(ctx, *data); /* an empty tile: left out of the navmesh */
        *data = NULL;
        *size = 0;
    }
    nb_grid_tile_input_release(ctx, &sel);
    nb_free(ctx, tlinks);
    return st;
}

/* Sorts the triangles into the tiles their xz box (with the tile border) may overlap, once, instead of every tile
 * scanning every triangle (three quarters of a million-triangle tiled bake). Each bucket lists triangle numbers
 * in ascending order; the ranges are widened by a hair so float rounding can only add candidates, and the exact
 * overlap test in nb_grid_tile_select_from then keeps precisely what a full scan would. */
/* The tile range a triangle's candidates cover: its xz bounds grown by the tile border and a margin, in tiles. */
typedef struct bucket_grid {
    float x0, z0;  /* origin minus border and margin */
    float x1, z1;  /* origin plus border and margin (for the high side) */
    float itw, itd; /* 1 / tile width, 1 / tile depth */
    int32_t ntx, ntz;
} bucket_grid;

static inline void bucket_range(const bucket_grid* g, const nb_mesh* m, uint32_t t, uint16_t r[4])
{
    float lo[2] = { 1e30f, 1e30f }, hi[2] = { -1e30f, -1e30f };
    for (int k = 0; k < 3; ++k) {
        const uint32_t v = m->indices ? m->indices[(size_t)t * 3 + k] : t * 3 + k;
        const float* p = &m->positions[(size_t)v * 3];
        lo[0] = nb_minf(lo[0], p[0]);
        hi[0] = nb_maxf(hi[0], p[0]);
        lo[1] = nb_minf(lo[1], p[2]);
        hi[1] = nb_maxf(hi[1], p[2]);
    }
    /* Multiplying by the reciprocal can move a bound by an ulp against dividing; the margin (a thousandth of a
     * tile) dwarfs that, and the candidates only need to hold what nb_grid_tile_select_from then picks exactly. */
    r[0] = (uint16_t)nb_clampi((int)floorf((lo[0] - g->x0) * g->itw), 0, g->ntx - 1);
    r[1] = (uint16_t)nb_clampi((int)floorf((hi[0] - g->x1) * g->itw), 0, g->ntx - 1);
    r[2] = (uint16_t)nb_clampi((int)floorf((lo[1] - g->z0) * g->itd), 0, g->ntz - 1);
    r[3] = (uint16_t)nb_clampi((int)floorf((hi[1] - g->z1) * g->itd), 0, g->ntz - 1);
}

nb_status nb_grid_bucket_triangles(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* cfg,
                                   const nb_config_cells* cells, const nb_navmesh_params* params, int32_t ntx,
                                   int32_t ntz, uint32_t** first_out, uint32_t** cand_out)
{
    const nb_mesh* m = &input->mesh;
    const uint32_t ntris = m->indices ? m->triangle_count : m->vertex_count / 3;
    const uint32_t ntiles = (uint32_t)(ntx * ntz);
    const float border = (float)(cells->walkable_radius + 3) * cfg->cell_size;
    const float margin = 1e-3f * params->tile_width + 1e-3f;
    const bucket_grid g = {
        params->origin[0] + border + margin, params->origin[2] + border + margin,
        params->origin[0] - border - margin, params->origin[2] - border - margin,
        1.0f / params->tile_width, 1.0f / params->tile_depth, ntx, ntz,
    };
    /* tiles per axis are < 4096 (at most 4095 tiles in all): a triangle's range fits in 4 x 16 bits */
    uint16_t* range = (uint16_t*)nb_alloc(ctx, (size_t)ntris * 4 * sizeof(uint16_t));
    uint32_t* first = (uint32_t*)nb_calloc(ctx, (size_t)ntiles + 1, sizeof(uint32_t));
    uint32_t* cand = NULL;
    nb_status st = NB_OK;
    if (!range || !first) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'buckets' (%u triangles)", fn, ntris);
        goto cleanup;
    }
    uint64_t total = 0;
    for (uint32_t t = 0; t < ntris; ++t) {
        uint16_t* r = &range[t * 4];
        bucket_range(&g, m, t, r);
        for (int32_t z = r[2]; z <= r[3]; ++z)
            for (int32_t x = r[0]; x <= r[1]; ++x)
                first[x + z * ntx + 1]++;
        total += (uint64_t)(r[1] - r[0] + 1) * (uint64_t)(r[3] - r[2] + 1);
    }
    if (total > 0xffffffffu || total * sizeof(uint32_t) > SIZE_MAX) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: %llu triangle-tile pairs do not fit in memory", fn,
                     (unsigned long long)total);
        goto cleanup;
    }
    for (uint32_t i = 0; i < ntiles; ++i)
        first[i + 1] += first[i];
    cand = (uint32_t*)nb_alloc(ctx, (size_t)total * sizeof(uint32_t));
    if (!cand) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'candidates' (%llu)", fn, (unsigned long long)total);
        goto cleanup;
    }
    {
        /* fill each bucket in ascending triangle order */
        uint32_t* cursor = (uint32_t*)nb_alloc(ctx, (size_t)ntiles * sizeof(uint32_t));
        if (!cursor) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'cursor' (%u)", fn, ntiles);
            goto cleanup;
        }
        memcpy(cursor, first, (size_t)ntiles * sizeof(uint32_t));
        for (uint32_t t = 0; t < ntris; ++t) {
            const uint16_t* r = &range[t * 4];
            for (int32_t z = r[2]; z <= r[3]; ++z)
                for (int32_t x = r[0]; x <= r[1]; ++x)
                    cand[cursor[x + z * ntx]++] = t;
        }
        nb_free(ctx, cursor);
    }

cleanup:
    nb_free(ctx, range);
    if (st != NB_OK) {
        nb_free(ctx, first);
        nb_free(ctx, cand);
        first = NULL;
        cand = NULL;
    }
    *first_out = first;
    *cand_out = cand;
    return st;
}

nb_status nb_bake_navmesh(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                          const nb_offmesh_link* links, uint32_t link_count, nb_navmesh** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_bake_navmesh: ctx is NULL");
    static const char* fn = "nb_bake_navmesh";
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (!input)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: input is NULL", fn);
    if (link_count && !links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: links is NULL but link_count is %u", fn, link_count);
    nb_config cfg;
    nb_status st = nb_config_resolve(ctx, config, &cfg, NULL);
    if (st != NB_OK)
        return st;
    /* Tiled: the triangles bucketed by tile once (a grid index), instead of every tile scanning every triangle
     * (three quarters of a million-triangle tiled bake); each tile is then exactly nb_bake_grid_tile's. */
    nb_grid_index* index = NULL;
    nb_navmesh_params params;
    int32_t ntx = 0, ntz = 0;
    if (cfg.tile_size > 0) {
        st = nb_grid_index_create_as(ctx, fn, input, config, &index);
        if (st == NB_OK)
            nb_grid_index_grid(index, &params, &ntx, &ntz);
        if (st == NB_OK)
            st = nb_grid_index_check_links(ctx, fn, index, links, link_count);
    } else {
        st = nb_bake_grid(ctx, input, config, &params, &ntx, &ntz);
        float bmin[3], bmax[3];
        if (st == NB_OK) {
            nb_grid_mesh_bounds(input, bmin, bmax); /* validated by nb_bake_grid */
            st = nb_links_check(ctx, fn, links, link_count, bmin, bmax, NULL, 1, 1, 0.0f);
        }
    }
    nb_navmesh* nav = NULL;
    if (st == NB_OK)
        st = nb_navmesh_create(ctx, &params, &nav);
    uint8_t* data = NULL;
    size_t size = 0;
    for (int32_t tz = 0; tz < ntz && st == NB_OK; ++tz)
        for (int32_t tx = 0; tx < ntx && st == NB_OK; ++tx) {
            if (index)
                st = nb_grid_index_bake_tile(ctx, index, links, link_count, tx, tz, &data, &size, NULL, NULL, NULL);
            else
                st = nb_bake_grid_tile(ctx, input, config, links, link_count, tx, tz, &data, &size, NULL);
            if (st == NB_OK && data)
                st = nb_navmesh_add_tile(ctx, nav, data, size);
            nb_bytes_free(ctx, data);
            data = NULL;
        }
    nb_grid_index_destroy(ctx, index);
    if (st != NB_OK) {
        nb_navmesh_destroy(ctx, nav);
        return st;
    }
    *out = nav;
    return NB_OK;
}
