/* Tile cache: per-tile compact heightfields (after erosion and bake-time areas), kept encoded (nb_compact_encode)
 * between rebuilds, so that an obstacle change only decodes and reruns regions .. detail of the tiles it touches.
 * Also nb_tile_rebuild, the same rebuild from a blob the caller keeps (the TypeScript workers' path). */
#include "bake_internal.h"
#include "navmesh_internal.h"

#include <math.h>

typedef struct cache_obstacle {
    uint32_t id;
    nb_volume volume; /* volume.verts points to verts (our copy) for convex volumes */
    float* verts;
    float lo[3], hi[3]; /* the volume's box */
} cache_obstacle;

typedef struct cache_tile {
    uint8_t* blob; /* the encoded compact heightfield; NULL = no geometry there */
    uint32_t size;
    float lo[3], hi[3]; /* the tile's bounds without border (nb_grid_tile_bounds; links go by nb_tile_field_box) */
} cache_tile;

struct nb_tile_cache {
    nb_config cfg; /* resolved */
    nb_config_cells cells;
    nb_navmesh_params params;
    int32_t tiles_x, tiles_z;
    float border; /* [world] the tiles' border: walkable_radius + 3 cells */
    cache_tile* tiles; /* tiles_x * tiles_z */
    uint8_t* dirty;
    uint32_t dirty_count;
    nb_offmesh_link* links; /* our copy */
    uint32_t link_count;
    cache_obstacle* obstacles; /* in the order they were added: later ones win where they overlap */
    uint32_t obstacle_count, obstacle_capacity;
    uint32_t next_id;
};

/* ---- one tile from its compact heightfield (shared by every tiled bake path) ---- */

/* The tile blob of a polygon mesh (detail optional) with the links the caller chose for it, all of them kept. */
static nb_status build_tile_blob(nb_context* ctx, const nb_config* cfg, const nb_poly_mesh* pm,
                                 const nb_poly_mesh_detail* detail, const nb_offmesh_link* links, uint32_t link_count,
                                 int32_t tile_x, int32_t tile_z, uint8_t** data, size_t* size)
{
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = pm;
    tp.detail = detail;
    tp.links = links;
    tp.link_count = link_count;
    tp.tile_x = tile_x;
    tp.tile_z = tile_z;
    tp.walkable_height = cfg->agent_height;
    tp.walkable_radius = cfg->agent_radius;
    tp.walkable_climb = cfg->agent_max_climb;
    return nb_tile_build_as(ctx, &tp, 1, data, size);
}

nb_status nb_tile_finish(nb_context* ctx, const nb_config* cfg, const nb_config_cells* cells,
                         nb_compact_heightfield* chf, const nb_offmesh_link* links, uint32_t link_count,
                         int32_t tile_x, int32_t tile_z, double* stats, uint8_t** data, size_t* size)
{
    *data = NULL;
    *size = 0;
    nb_bake_result r;
    memset(&r, 0, sizeof(r));
    for (int i = 0; i < NB_STAT_COUNT; ++i)
        r.stats[i] = -1.0;
    r.config = *cfg;
    nb_status st = nb_bake_from_compact(ctx, cfg, cells, chf->border_size, chf, NB_STAGE_DETAIL, 0, &r);
    if (st != NB_OK)
        return st; /* chf freed there */
    if (stats)
        for (int i = 0; i < NB_STAT_COUNT; ++i)
            if (r.stats[i] >= 0)
                stats[i] = r.stats[i];
    /* As nb_bake_grid_tile: a tile without polygons is left out unless links start in it. */
    if (r.poly_mesh->npolys > 0 || link_count > 0) {
        st = build_tile_blob(ctx, cfg, r.poly_mesh, r.detail, links, link_count, tile_x, tile_z, data, size);
    }
    nb_bake_result_release(ctx, &r);
    return st;
}

nb_status nb_tile_links_only(nb_context* ctx, const nb_config* cfg, const nb_config_cells* cells, const float lo[3],
                             const float hi[3], const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x,
                             int32_t tile_z, uint8_t** data, size_t* size)
{
    /* An empty polygon mesh with the bounds the bake gives a tile here (xz: the field box shrunk back as the
     * contour stage shrinks it; y: the level's, raised by the agent height as nb_compact_heightfield_build raises
     * it), so the tile sits in its grid cell like any other and its links' ends are classified against the same
     * footprint. */
    nb_poly_mesh pm;
    memset(&pm, 0, sizeof(pm));
    const float border = (float)(cells->walkable_radius + 3) * cfg->cell_size;
    float field_lo[2], field_hi[2];
    nb_tile_field_box(lo, hi, border, field_lo, field_hi);
    pm.bmin[0] = field_lo[0] + border;
    pm.bmin[1] = lo[1];
    pm.bmin[2] = field_lo[1] + border;
    pm.bmax[0] = field_hi[0] - border;
    pm.bmax[1] = hi[1] + (float)cells->walkable_height * cfg->cell_height;
    pm.bmax[2] = field_hi[1] - border;
    pm.nvp = cfg->verts_per_poly;
    pm.cell_size = cfg->cell_size;
    pm.cell_height = cfg->cell_height;
    pm.border_size = cells->walkable_radius + 3;
    return build_tile_blob(ctx, cfg, &pm, NULL, links, link_count, tile_x, tile_z, data, size);
}

void nb_tile_box(const nb_navmesh_params* params, float border, int32_t tile_x, int32_t tile_z, float lo[2],
                 float hi[2])
{
    lo[0] = params->origin[0] + (float)tile_x * params->tile_width - border;
    lo[1] = params->origin[2] + (float)tile_z * params->tile_depth - border;
    hi[0] = lo[0] + params->tile_width + 2.0f * border;
    hi[1] = lo[1] + params->tile_depth + 2.0f * border;
}

void nb_tile_dirty_box(const nb_navmesh_params* params, const nb_config* config, int32_t tile_x, int32_t tile_z,
                       float lo[2], float hi[2])
{
    if (!params || !lo || !hi)
        return;
    nb_config cfg;
    nb_config_cells cells;
    nb_config_resolve(NULL, config, &cfg, &cells); /* on failure cfg and cells hold the defaults */
    nb_tile_box(params, (float)(cells.walkable_radius + 3) * cfg.cell_size, tile_x, tile_z, lo, hi);
}

static int box_overlaps(const float lo[2], const float hi[2], const float vlo[3], const float vhi[3])
{
    return vlo[0] <= hi[0] && vhi[0] >= lo[0] && vlo[2] <= hi[1] && vhi[2] >= lo[1];
}

/* Checks a decoded field against the config the caller says it was baked with. */
static nb_status check_field_config(nb_context* ctx, const char* fn, const nb_compact_heightfield* chf,
                                    const nb_config* cfg, const nb_config_cells* cells)
{
    if (chf->cell_size != cfg->cell_size)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: cell_size is %g but the cache was baked with %g", fn,
                       cfg->cell_size, chf->cell_size);
    if (chf->cell_height != cfg->cell_height)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: cell_height is %g but the cache was baked with %g", fn,
                       cfg->cell_height, chf->cell_height);
    if (chf->walkable_height != cells->walkable_height)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: agent_height gives %d cells but the cache was baked with %d", fn,
                       cells->walkable_height, chf->walkable_height);
    if (chf->walkable_climb != cells->walkable_climb)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: agent_max_climb gives %d cells but the cache was baked with %d",
                       fn, cells->walkable_climb, chf->walkable_climb);
    if (chf->border_size != cells->walkable_radius + 3)
        return nb_fail(ctx, NB_ERR_INVALID_ARG,
                       "%s: agent_radius gives a border of %d cells but the cache was baked with %d", fn,
                       cells->walkable_radius + 3, chf->border_size);
    /* The tile proper spans tile_size cells: compare in world units, half a cell of slack for float rounding. */
    const float tile = (float)cfg->tile_size * cfg->cell_size;
    const float got = (chf->bmax[0] - chf->bmin[0]) - 2.0f * (float)chf->border_size * chf->cell_size;
    if (cfg->tile_size <= 0 || fabsf(got - tile) > 0.5f * cfg->cell_size)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: tile_size is %d but the cache's tiles are %.0f cells wide", fn,
                       cfg->tile_size, (double)(got / chf->cell_size));
    return NB_OK;
}

nb_status nb_tile_rebuild(nb_context* ctx, const nb_config* config, const uint8_t* cache, size_t cache_size,
                          const nb_offmesh_link* links, uint32_t link_count, const nb_volume* obstacles,
                          uint32_t obstacle_count, uint8_t** data, size_t* size)
{
    static const char* fn = "nb_tile_rebuild";
    if (!data || !size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !data ? "data" : "size");
    *data = NULL;
    *size = 0;
    if (!cache)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: cache is NULL", fn);
    if (link_count && !links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: links is NULL but link_count is %u", fn, link_count);
    if (obstacle_count && !obstacles)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: obstacles is NULL but obstacle_count is %u", fn, obstacle_count);
    nb_config cfg;
    nb_config_cells cells;
    nb_status st = nb_config_resolve(ctx, config, &cfg, &cells);
    if (st != NB_OK)
        return st;
    for (uint32_t i = 0; i < obstacle_count; ++i) {
        float lo[3], hi[3];
        char where[48];
        nb_format(where, sizeof(where), "%s (obstacle %u)", fn, i);
        st = nb_volume_bounds(ctx, where, &obstacles[i], lo, hi);
        if (st != NB_OK)
            return st;
    }
    /* The fields, named by their index in the caller's list; the bounds were checked by the bake. */
    st = nb_links_check(ctx, fn, links, link_count, NULL, NULL, NULL, 0, 0, 0.0f);
    if (st != NB_OK)
        return st;
    nb_compact_heightfield* chf = NULL;
    nb_offmesh_link* tlinks = NULL;
    int32_t tx = 0, tz = 0;
    st = nb_compact_decode(ctx, cache, cache_size, &chf, &tx, &tz);
    if (st != NB_OK)
        return st;
    st = check_field_config(ctx, fn, chf, &cfg, &cells);
    if (st != NB_OK)
        goto cleanup;
    const float box_lo[2] = { chf->bmin[0], chf->bmin[2] }, box_hi[2] = { chf->bmax[0], chf->bmax[2] };
    for (uint32_t i = 0; i < obstacle_count; ++i) {
        float lo[3], hi[3];
        nb_volume_bounds(ctx, fn, &obstacles[i], lo, hi); /* validated above */
        if (!box_overlaps(box_lo, box_hi, lo, hi))
            continue; /* cannot touch a span of this tile */
        st = nb_mark_volume(ctx, &obstacles[i], chf);
        if (st != NB_OK)
            goto cleanup;
    }
    /* The field's bounds are the tile's grown by the border exactly as the bake grew them (nb_tile_field_box):
     * the same links are kept. */
    const float pad = (float)chf->border_size * chf->cell_size;
    const float field_lo[2] = { chf->bmin[0], chf->bmin[2] };
    const float field_hi[2] = { chf->bmax[0], chf->bmax[2] };
    uint32_t nlinks = 0;
    st = nb_links_in_tile(ctx, fn, links, link_count, field_lo, field_hi, pad, tx == 0, tz == 0, &tlinks, &nlinks);
    if (st != NB_OK)
        goto cleanup;
    st = nb_tile_finish(ctx, &cfg, &cells, chf, tlinks, nlinks, tx, tz, NULL, data, size);
    chf = NULL; /* taken over */

cleanup:
    nb_compact_heightfield_destroy(ctx, chf);
    nb_free(ctx, tlinks);
    return st;
}

/* ---- the native cache ---- */

void nb_tile_cache_destroy(nb_context* ctx, nb_tile_cache* cache)
{
    if (!cache)
        return;
    if (cache->tiles)
        for (int32_t i = 0; i < cache->tiles_x * cache->tiles_z; ++i)
            nb_bytes_free(ctx, cache->tiles[i].blob);
    for (uint32_t i = 0; i < cache->obstacle_count; ++i)
        nb_free(ctx, cache->obstacles[i].verts);
    nb_free(ctx, cache->obstacles);
    nb_free(ctx, cache->links);
    nb_free(ctx, cache->tiles);
    nb_free(ctx, cache->dirty);
    nb_free(ctx, cache);
}

nb_status nb_tile_cache_create(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                               const nb_offmesh_link* links, uint32_t link_count, nb_tile_cache** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_tile_cache_create: ctx is NULL");
    static const char* fn = "nb_tile_cache_create";
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (!input)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: input is NULL", fn);
    if (link_count && !links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: links is NULL but link_count is %u", fn, link_count);
    nb_grid_index* index = NULL;
    nb_status st = nb_grid_index_create_as(ctx, fn, input, config, &index);
    if (st != NB_OK)
        return st;
    nb_compact_heightfield* chf = NULL;
    nb_tile_cache* c = (nb_tile_cache*)nb_calloc(ctx, 1, sizeof(*c));
    if (!c) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'cache'", fn);
        goto cleanup;
    }
    c->cfg = *nb_grid_index_config(index, &c->cells);
    nb_grid_index_grid(index, &c->params, &c->tiles_x, &c->tiles_z);
    c->border = (float)(c->cells.walkable_radius + 3) * c->cfg.cell_size;
    c->next_id = 1;
    const size_t ntiles = (size_t)c->tiles_x * (size_t)c->tiles_z;
    c->tiles = (cache_tile*)nb_calloc(ctx, ntiles, sizeof(*c->tiles));
    c->dirty = (uint8_t*)nb_calloc(ctx, ntiles, 1);
    if (!c->tiles || !c->dirty) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'tiles' (%zu)", fn, ntiles);
        goto cleanup;
    }
    st = nb_grid_index_check_links(ctx, fn, index, links, link_count);
    if (st != NB_OK)
        goto cleanup;
    if (link_count) {
        c->links = (nb_offmesh_link*)nb_alloc(ctx, (size_t)link_count * sizeof(nb_offmesh_link));
        if (!c->links) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'links' (%u)", fn, link_count);
            goto cleanup;
        }
        memcpy(c->links, links, (size_t)link_count * sizeof(nb_offmesh_link));
        c->link_count = link_count;
    }
    for (int32_t tz = 0; tz < c->tiles_z; ++tz)
        for (int32_t tx = 0; tx < c->tiles_x; ++tx) {
            cache_tile* t = &c->tiles[tx + tz * c->tiles_x];
            st = nb_grid_index_tile_compact(ctx, fn, index, tx, tz, &chf, t->lo, t->hi, NULL);
            if (st != NB_OK)
                goto cleanup;
            if (!chf)
                continue; /* no geometry: nothing to keep (build_tile still gives links starting here a tile) */
            size_t size = 0;
            st = nb_compact_encode(ctx, chf, tx, tz, &t->blob, &size);
            if (st != NB_OK)
                goto cleanup;
            t->size = (uint32_t)size;
            nb_compact_heightfield_destroy(ctx, chf);
            chf = NULL;
        }
    *out = c;
    c = NULL;

cleanup:
    nb_compact_heightfield_destroy(ctx, chf);
    nb_tile_cache_destroy(ctx, c);
    nb_grid_index_destroy(ctx, index);
    return st;
}

static int overlaps_tile(const nb_tile_cache* c, int32_t tx, int32_t tz, const float vlo[3], const float vhi[3])
{
    float lo[2], hi[2];
    nb_tile_box(&c->params, c->border, tx, tz, lo, hi);
    return box_overlaps(lo, hi, vlo, vhi);
}

/* Bakes tile (tx, tz) from its cached heightfield with the obstacles and links; *data NULL for a tile without
 * polygons and links. */
static nb_status build_tile(nb_context* ctx, const char* fn, nb_tile_cache* c, int32_t tx, int32_t tz,
                            uint8_t** data, size_t* size)
{
    *data = NULL;
    *size = 0;
    const cache_tile* t = &c->tiles[tx + tz * c->tiles_x];
    nb_compact_heightfield* chf = NULL;
    nb_offmesh_link* tlinks = NULL;
    uint32_t nlinks = 0;
    float field_lo[2], field_hi[2];
    nb_tile_field_box(t->lo, t->hi, c->border, field_lo, field_hi);
    nb_status st;
    if (!t->blob) {
        /* No geometry (so no obstacle ever dirties it): the links starting here, if any, as nb_bake_navmesh. */
        st = nb_links_in_tile(ctx, fn, c->links, c->link_count, field_lo, field_hi, c->border, tx == 0, tz == 0,
                              &tlinks, &nlinks);
        if (st == NB_OK && nlinks)
            st = nb_tile_links_only(ctx, &c->cfg, &c->cells, t->lo, t->hi, tlinks, nlinks, tx, tz, data, size);
        goto cleanup;
    }
    st = nb_compact_decode(ctx, t->blob, t->size, &chf, NULL, NULL);
    if (st != NB_OK)
        goto cleanup;
    for (uint32_t i = 0; i < c->obstacle_count; ++i) {
        const cache_obstacle* o = &c->obstacles[i];
        if (!overlaps_tile(c, tx, tz, o->lo, o->hi))
            continue;
        st = nb_mark_volume(ctx, &o->volume, chf);
        if (st != NB_OK)
            goto cleanup;
    }
    st = nb_links_in_tile(ctx, fn, c->links, c->link_count, field_lo, field_hi, c->border, tx == 0, tz == 0, &tlinks,
                          &nlinks);
    if (st != NB_OK)
        goto cleanup;
    st = nb_tile_finish(ctx, &c->cfg, &c->cells, chf, tlinks, nlinks, tx, tz, NULL, data, size);
    chf = NULL; /* taken over */

cleanup:
    nb_compact_heightfield_destroy(ctx, chf);
    nb_free(ctx, tlinks);
    return st;
}

nb_status nb_tile_cache_build_navmesh(nb_context* ctx, nb_tile_cache* cache, nb_navmesh** out)
{
    static const char* fn = "nb_tile_cache_build_navmesh";
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (!cache)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: cache is NULL", fn);
    nb_navmesh* nav = NULL;
    nb_status st = nb_navmesh_create(ctx, &cache->params, &nav);
    if (st != NB_OK)
        return st;
    uint8_t* data = NULL;
    size_t size = 0;
    for (int32_t tz = 0; tz < cache->tiles_z && st == NB_OK; ++tz)
        for (int32_t tx = 0; tx < cache->tiles_x && st == NB_OK; ++tx) {
            st = build_tile(ctx, fn, cache, tx, tz, &data, &size);
            if (st == NB_OK && data)
                st = nb_navmesh_add_tile(ctx, nav, data, size);
            nb_bytes_free(ctx, data);
            data = NULL;
        }
    if (st != NB_OK) {
        nb_navmesh_destroy(ctx, nav);
        return st;
    }
    memset(cache->dirty, 0, (size_t)cache->tiles_x * (size_t)cache->tiles_z);
    cache->dirty_count = 0;
    *out = nav;
    return NB_OK;
}

static void mark_dirty(nb_tile_cache* c, const float lo[3], const float hi[3])
{
    /* Only the tiles whose box can overlap: the box spans tile_width + 2 border per tile. */
    const float tw = c->params.tile_width, td = c->params.tile_depth;
    /* Clamped to the grid before the conversion: a box up to 1e30 wide gives tile indices beyond int32 (whose
     * conversion is undefined; x86 gave INT_MIN, and no tile was marked). */
    const float gx = (float)c->tiles_x, gz = (float)c->tiles_z;
    const float fx0 = floorf((lo[0] - c->border - c->params.origin[0]) / tw) - 1.0f;
    const float fx1 = floorf((hi[0] + c->border - c->params.origin[0]) / tw) + 1.0f;
    const float fz0 = floorf((lo[2] - c->border - c->params.origin[2]) / td) - 1.0f;
    const float fz1 = floorf((hi[2] + c->border - c->params.origin[2]) / td) + 1.0f;
    const int32_t x0 = (int32_t)nb_clampf(fx0, 0.0f, gx), x1 = (int32_t)nb_clampf(fx1, -1.0f, gx - 1.0f);
    const int32_t z0 = (int32_t)nb_clampf(fz0, 0.0f, gz), z1 = (int32_t)nb_clampf(fz1, -1.0f, gz - 1.0f);
    for (int32_t tz = z0; tz <= z1; ++tz)
        for (int32_t tx = x0; tx <= x1; ++tx) {
            const int32_t i = tx + tz * c->tiles_x;
            if (!c->tiles[i].blob || c->dirty[i] || !overlaps_tile(c, tx, tz, lo, hi))
                continue;
            c->dirty[i] = 1;
            c->dirty_count++;
        }
}

/* Validates v and makes an obstacle of it (with its own copy of convex vertices); nothing to free on failure. */
static nb_status make_obstacle(nb_context* ctx, const char* fn, const nb_volume* v, cache_obstacle* o)
{
    memset(o, 0, sizeof(*o));
    nb_status st = nb_volume_bounds(ctx, fn, v, o->lo, o->hi);
    if (st != NB_OK)
        return st;
    if (!(fabsf(o->lo[0]) < 1e30f && fabsf(o->hi[0]) < 1e30f && fabsf(o->lo[2]) < 1e30f && fabsf(o->hi[2]) < 1e30f))
        return nb_fail(ctx, NB_ERR_NONFINITE, "%s: volume bounds must be finite", fn);
    o->volume = *v;
    if (v->type == NB_VOLUME_CONVEX) {
        o->verts = (float*)nb_alloc(ctx, (size_t)v->vert_count * 3 * sizeof(float));
        if (!o->verts)
            return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'verts' (%u)", fn, v->vert_count);
        memcpy(o->verts, v->verts, (size_t)v->vert_count * 3 * sizeof(float));
        o->volume.verts = o->verts;
    } else {
        o->volume.verts = NULL;
        o->volume.vert_count = 0;
    }
    return NB_OK;
}

static int32_t find_obstacle(const nb_tile_cache* c, uint32_t id)
{
    for (uint32_t i = 0; i < c->obstacle_count; ++i)
        if (c->obstacles[i].id == id)
            return (int32_t)i;
    return -1;
}

nb_status nb_tile_cache_add_obstacle(nb_context* ctx, nb_tile_cache* cache, const nb_volume* volume, uint32_t* id)
{
    static const char* fn = "nb_tile_cache_add_obstacle";
    if (!cache || !volume || !id)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !cache ? "cache" : !volume ? "volume" : "id");
    *id = 0;
    if (cache->next_id == UINT32_MAX)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: obstacle ids are exhausted", fn);
    cache_obstacle o;
    nb_status st = make_obstacle(ctx, fn, volume, &o);
    if (st != NB_OK)
        return st;
    if (cache->obstacle_count == cache->obstacle_capacity) {
        const uint32_t cap = cache->obstacle_capacity ? cache->obstacle_capacity * 2 : 8;
        cache_obstacle* grown = (cache_obstacle*)nb_alloc(ctx, (size_t)cap * sizeof(cache_obstacle));
        if (!grown) {
            nb_free(ctx, o.verts);
            return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'obstacles' (%u)", fn, cap);
        }
        if (cache->obstacle_count)
            memcpy(grown, cache->obstacles, (size_t)cache->obstacle_count * sizeof(cache_obstacle));
        nb_free(ctx, cache->obstacles);
        cache->obstacles = grown;
        cache->obstacle_capacity = cap;
    }
    o.id = cache->next_id++;
    cache->obstacles[cache->obstacle_count++] = o;
    mark_dirty(cache, o.lo, o.hi);
    *id = o.id;
    return NB_OK;
}

nb_status nb_tile_cache_remove_obstacle(nb_context* ctx, nb_tile_cache* cache, uint32_t id)
{
    static const char* fn = "nb_tile_cache_remove_obstacle";
    if (!cache)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: cache is NULL", fn);
    const int32_t i = find_obstacle(cache, id);
    if (i < 0)
        return nb_fail(ctx, NB_ERR_NOT_FOUND, "%s: no obstacle with id %u", fn, id);
    cache_obstacle* o = &cache->obstacles[i];
    mark_dirty(cache, o->lo, o->hi);
    nb_free(ctx, o->verts);
    /* memmove, not swap: the order decides which area wins where obstacles overlap. */
    memmove(o, o + 1, (size_t)(cache->obstacle_count - (uint32_t)i - 1) * sizeof(cache_obstacle));
    cache->obstacle_count--;
    return NB_OK;
}

nb_status nb_tile_cache_update_obstacle(nb_context* ctx, nb_tile_cache* cache, uint32_t id, const nb_volume* volume)
{
    static const char* fn = "nb_tile_cache_update_obstacle";
    if (!cache || !volume)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !cache ? "cache" : "volume");
    const int32_t i = find_obstacle(cache, id);
    if (i < 0)
        return nb_fail(ctx, NB_ERR_NOT_FOUND, "%s: no obstacle with id %u", fn, id);
    cache_obstacle o;
    nb_status st = make_obstacle(ctx, fn, volume, &o);
    if (st != NB_OK)
        return st;
    cache_obstacle* old = &cache->obstacles[i];
    mark_dirty(cache, old->lo, old->hi);
    mark_dirty(cache, o.lo, o.hi);
    nb_free(ctx, old->verts);
    o.id = id;
    *old = o;
    return NB_OK;
}

uint32_t nb_tile_cache_dirty_count(const nb_tile_cache* cache) { return cache ? cache->dirty_count : 0; }

nb_status nb_tile_cache_update(nb_context* ctx, nb_tile_cache* cache, nb_navmesh* nav, int32_t* rebuilt_tiles,
                               uint32_t capacity, uint32_t* rebuilt_count)
{
    static const char* fn = "nb_tile_cache_update";
    if (rebuilt_count)
        *rebuilt_count = 0;
    if (!cache || !nav)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !cache ? "cache" : "nav");
    const nb_navmesh_params* np = nb_navmesh_get_params(nav);
    if (np->tile_width != cache->params.tile_width || np->tile_depth != cache->params.tile_depth ||
        memcmp(np->origin, cache->params.origin, sizeof(np->origin)) != 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: nav's tile grid (tile width %g) is not the cache's (%g)", fn,
                       np->tile_width, cache->params.tile_width);
    const uint32_t n = cache->dirty_count;
    if (n == 0)
        return NB_OK;

    nb_status st = NB_OK;
    int32_t* idx = (int32_t*)nb_alloc(ctx, (size_t)n * sizeof(int32_t));
    uint8_t** new_data = (uint8_t**)nb_calloc(ctx, n, sizeof(uint8_t*));
    size_t* new_size = (size_t*)nb_calloc(ctx, n, sizeof(size_t));
    nb_tile_undo** undo = (nb_tile_undo**)nb_calloc(ctx, n, sizeof(nb_tile_undo*));
    uint32_t applied = 0;
    if (!idx || !new_data || !new_size || !undo) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'dirty tiles' (%u)", fn, n);
        goto cleanup;
    }
    uint32_t k = 0;
    for (int32_t i = 0; i < cache->tiles_x * cache->tiles_z && k < n; ++i)
        if (cache->dirty[i])
            idx[k++] = i;

    /* Phase 1: every new tile, before nav changes. */
    for (k = 0; k < n; ++k) {
        const int32_t tx = idx[k] % cache->tiles_x, tz = idx[k] / cache->tiles_x;
        st = nb_report(ctx, NB_STAGE_DETAIL, k, n);
        if (st != NB_OK)
            goto cleanup;
        st = build_tile(ctx, fn, cache, tx, tz, &new_data[k], &new_size[k]);
        if (st != NB_OK)
            goto cleanup;
    }

    /* Phase 2: swap the tiles in. A swap can fail (out of memory); then the tiles swapped so far are undone, which
     * allocates nothing: they are back in their old slots with their old salts (the application's refs to them stay
     * valid) and their old links. */
    for (k = 0; k < n; ++k) {
        const int32_t tx = idx[k] % cache->tiles_x, tz = idx[k] / cache->tiles_x;
        st = nb_navmesh_swap_tile(ctx, nav, tx, tz, new_data[k], new_size[k], &undo[k]);
        if (st != NB_OK)
            break;
        applied = k + 1;
        /* flags set on polygons the rebuild left as they were stay */
        size_t old_size = 0;
        uint8_t* old = nb_tile_undo_old(undo[k], &old_size);
        if (new_data[k] && old)
            (void)nb_navmesh_keep_flags(nav, tx, tz, old, old_size);
    }
    if (st != NB_OK) {
        while (applied > 0) {
            --applied;
            nb_navmesh_swap_undo(ctx, nav, undo[applied]);
            undo[applied] = NULL;
        }
        goto cleanup;
    }

    /* Phase 3: done; report and clear. */
    for (k = 0; k < n; ++k) {
        if (rebuilt_tiles && k < capacity) {
            rebuilt_tiles[2 * k] = idx[k] % cache->tiles_x;
            rebuilt_tiles[2 * k + 1] = idx[k] / cache->tiles_x;
        }
        cache->dirty[idx[k]] = 0;
    }
    cache->dirty_count = 0;
    if (rebuilt_count)
        *rebuilt_count = n;

cleanup:
    if (undo)
        for (k = 0; k < n; ++k)
            nb_navmesh_swap_done(ctx, undo[k]);
    if (new_data)
        for (k = 0; k < n; ++k)
            nb_bytes_free(ctx, new_data[k]);
    nb_free(ctx, idx);
    nb_free(ctx, new_data);
    nb_free(ctx, new_size);
    nb_free(ctx, undo);
    return st;
}
