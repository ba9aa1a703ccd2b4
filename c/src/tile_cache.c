/* Tile cache: per-tile compact heightfields (after erosion and bake-time areas) kept between rebuilds, so that
 * an obstacle change only reruns regions .. detail of the tiles it touches. */
#include "bake_internal.h"

#include <math.h>

typedef struct cache_obstacle {
    uint32_t id;
    nb_volume volume; /* volume.verts points to verts (our copy) for convex volumes */
    float* verts;
    float lo[3], hi[3]; /* the volume's box */
} cache_obstacle;

struct nb_tile_cache {
    nb_config cfg; /* resolved */
    nb_config_cells cells;
    nb_navmesh_params params;
    int32_t tiles_x, tiles_z;
    float border; /* [world] the tiles' border: walkable_radius + 3 cells */
    nb_compact_heightfield** tiles; /* tiles_x * tiles_z; NULL = no geometry there */
    uint8_t* dirty;
    uint32_t dirty_count;
    cache_obstacle* obstacles; /* in the order they were added: later ones win where they overlap */
    uint32_t obstacle_count, obstacle_capacity;
    uint32_t next_id;
};

void nb_tile_cache_destroy(nb_context* ctx, nb_tile_cache* cache)
{
    if (!cache)
        return;
    if (cache->tiles)
        for (int32_t i = 0; i < cache->tiles_x * cache->tiles_z; ++i)
            nb_compact_heightfield_destroy(ctx, cache->tiles[i]);
    for (uint32_t i = 0; i < cache->obstacle_count; ++i)
        nb_free(ctx, cache->obstacles[i].verts);
    nb_free(ctx, cache->obstacles);
    nb_free(ctx, cache->tiles);
    nb_free(ctx, cache->dirty);
    nb_free(ctx, cache);
}

nb_status nb_tile_cache_create(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                               nb_tile_cache** out)
{
    static const char* fn = "nb_tile_cache_create";
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (!input)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: input is NULL", fn);
    nb_config cfg;
    nb_config_cells cells;
    nb_status st = nb_config_resolve(ctx, config, &cfg, &cells);
    if (st != NB_OK)
        return st;
    if (cfg.tile_size <= 0)
        return nb_fail(ctx, NB_ERR_INVALID_CONFIG, "%s: tile_size must be > 0 for a tile cache (got %d)", fn,
                       cfg.tile_size);
    nb_navmesh_params params;
    int32_t ntx, ntz;
    st = nb_bake_grid(ctx, input, config, &params, &ntx, &ntz);
    if (st != NB_OK)
        return st;
    /* The level's top (nb_bake_grid validated the mesh and bounds; the origin is the bottom corner). */
    float bmax[3];
    if (input->bmax) {
        memcpy(bmax, input->bmax, sizeof(bmax));
    } else {
        memcpy(bmax, input->mesh.positions, sizeof(bmax));
        for (uint32_t i = 1; i < input->mesh.vertex_count; ++i)
            for (int k = 0; k < 3; ++k)
                bmax[k] = nb_maxf(bmax[k], input->mesh.positions[(size_t)i * 3 + k]);
    }

    nb_grid_tile_input sel;
    memset(&sel, 0, sizeof(sel));
    nb_bake_result r;
    memset(&r, 0, sizeof(r));
    const size_t ntiles = (size_t)ntx * (size_t)ntz;
    nb_tile_cache* c = (nb_tile_cache*)nb_calloc(ctx, 1, sizeof(*c));
    if (!c)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'cache'", fn);
    c->cfg = cfg;
    c->cells = cells;
    c->params = params;
    c->tiles_x = ntx;
    c->tiles_z = ntz;
    c->border = (float)(cells.walkable_radius + 3) * cfg.cell_size;
    c->next_id = 1;
    c->tiles = (nb_compact_heightfield**)nb_calloc(ctx, ntiles, sizeof(*c->tiles));
    c->dirty = (uint8_t*)nb_calloc(ctx, ntiles, 1);
    if (!c->tiles || !c->dirty) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'tiles' (%zu)", fn, ntiles);
        goto cleanup;
    }
    for (int32_t tz = 0; tz < ntz; ++tz)
        for (int32_t tx = 0; tx < ntx; ++tx) {
            st = nb_grid_tile_select(ctx, fn, input, &cfg, &cells, &params, bmax, tx, tz, &sel);
            if (st != NB_OK)
                goto cleanup;
            if (sel.tri_count > 0) {
                /* The caller's config: resolving twice would turn explicit zeros into defaults. */
                st = nb_bake(ctx, &sel.in, config, NB_STAGE_AREAS, NB_KEEP_COMPACT, &r);
                if (st != NB_OK)
                    goto cleanup;
                c->tiles[tx + tz * ntx] = r.compact;
                r.compact = NULL;
                nb_bake_result_release(ctx, &r);
            }
            nb_grid_tile_input_release(ctx, &sel);
        }
    *out = c;
    return NB_OK;

cleanup:
    nb_grid_tile_input_release(ctx, &sel);
    nb_bake_result_release(ctx, &r);
    nb_tile_cache_destroy(ctx, c);
    return st;
}

static nb_status copy_compact(nb_context* ctx, const char* fn, const nb_compact_heightfield* src,
                              nb_compact_heightfield** out)
{
    *out = NULL;
    const size_t ncols = (size_t)src->width * (size_t)src->height;
    nb_compact_heightfield* chf = (nb_compact_heightfield*)nb_alloc(ctx, sizeof(*chf));
    if (!chf)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'chf'", fn);
    *chf = *src;
    chf->dist = NULL; /* the cached field has none (it stops before the distance field) */
    chf->cells = (nb_compact_cell*)nb_alloc(ctx, ncols * sizeof(nb_compact_cell));
    chf->spans = (nb_compact_span*)nb_alloc(ctx, (size_t)src->span_count * sizeof(nb_compact_span));
    chf->areas = (uint8_t*)nb_alloc(ctx, src->span_count);
    if (!chf->cells || !chf->spans || !chf->areas) {
        nb_compact_heightfield_destroy(ctx, chf);
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'chf spans' (%u)", fn, src->span_count);
    }
    memcpy(chf->cells, src->cells, ncols * sizeof(nb_compact_cell));
    memcpy(chf->spans, src->spans, (size_t)src->span_count * sizeof(nb_compact_span));
    memcpy(chf->areas, src->areas, src->span_count);
    *out = chf;
    return NB_OK;
}

/* The tile's bounds with its border (xz), the region whose spans the tile's polygons depend on. */
static void tile_box(const nb_tile_cache* c, int32_t tx, int32_t tz, float lo[2], float hi[2])
{
    lo[0] = c->params.origin[0] + (float)tx * c->params.tile_width - c->border;
    lo[1] = c->params.origin[2] + (float)tz * c->params.tile_depth - c->border;
    hi[0] = lo[0] + c->params.tile_width + 2.0f * c->border;
    hi[1] = lo[1] + c->params.tile_depth + 2.0f * c->border;
}

static int overlaps_tile(const nb_tile_cache* c, int32_t tx, int32_t tz, const float vlo[3], const float vhi[3])
{
    float lo[2], hi[2];
    tile_box(c, tx, tz, lo, hi);
    return vlo[0] <= hi[0] && vhi[0] >= lo[0] && vlo[2] <= hi[1] && vhi[2] >= lo[1];
}

/* Bakes tile (tx, tz) from its cached heightfield with the obstacles; *data NULL for a tile without polygons. */
static nb_status build_tile(nb_context* ctx, const char* fn, nb_tile_cache* c, int32_t tx, int32_t tz,
                            uint8_t** data, size_t* size)
{
    *data = NULL;
    *size = 0;
    const nb_compact_heightfield* cached = c->tiles[tx + tz * c->tiles_x];
    if (!cached)
        return NB_OK;
    nb_compact_heightfield* chf = NULL;
    nb_status st = copy_compact(ctx, fn, cached, &chf);
    if (st != NB_OK)
        return st;
    for (uint32_t i = 0; i < c->obstacle_count; ++i) {
        const cache_obstacle* o = &c->obstacles[i];
        if (!overlaps_tile(c, tx, tz, o->lo, o->hi))
            continue;
        st = nb_mark_volume(ctx, &o->volume, chf);
        if (st != NB_OK) {
            nb_compact_heightfield_destroy(ctx, chf);
            return st;
        }
    }
    nb_bake_result r;
    memset(&r, 0, sizeof(r));
    for (int i = 0; i < NB_STAT_COUNT; ++i)
        r.stats[i] = -1.0;
    r.config = c->cfg;
    st = nb_bake_from_compact(ctx, &c->cfg, &c->cells, cached->border_size, chf, NB_STAGE_DETAIL, 0, &r);
    if (st != NB_OK)
        return st; /* chf freed there */
    if (r.poly_mesh->npolys > 0) {
        nb_tile_params tp;
        memset(&tp, 0, sizeof(tp));
        tp.poly_mesh = r.poly_mesh;
        tp.detail = r.detail;
        tp.tile_x = tx;
        tp.tile_z = tz;
        tp.walkable_height = c->cfg.agent_height;
        tp.walkable_radius = c->cfg.agent_radius;
        tp.walkable_climb = c->cfg.agent_max_climb;
        st = nb_tile_build(ctx, &tp, data, size);
    }
    nb_bake_result_release(ctx, &r);
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
    int32_t x0 = (int32_t)floorf((lo[0] - c->border - c->params.origin[0]) / tw) - 1;
    int32_t x1 = (int32_t)floorf((hi[0] + c->border - c->params.origin[0]) / tw) + 1;
    int32_t z0 = (int32_t)floorf((lo[2] - c->border - c->params.origin[2]) / td) - 1;
    int32_t z1 = (int32_t)floorf((hi[2] + c->border - c->params.origin[2]) / td) + 1;
    x0 = nb_maxi(x0, 0);
    z0 = nb_maxi(z0, 0);
    x1 = nb_mini(x1, c->tiles_x - 1);
    z1 = nb_mini(z1, c->tiles_z - 1);
    for (int32_t tz = z0; tz <= z1; ++tz)
        for (int32_t tx = x0; tx <= x1; ++tx) {
            const int32_t i = tx + tz * c->tiles_x;
            if (!c->tiles[i] || c->dirty[i] || !overlaps_tile(c, tx, tz, lo, hi))
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
    uint8_t** old_data = (uint8_t**)nb_calloc(ctx, n, sizeof(uint8_t*));
    size_t* new_size = (size_t*)nb_calloc(ctx, n, sizeof(size_t));
    size_t* old_size = (size_t*)nb_calloc(ctx, n, sizeof(size_t));
    uint32_t applied = 0;
    if (!idx || !new_data || !old_data || !new_size || !old_size) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'dirty tiles' (%u)", fn, n);
        goto cleanup;
    }
    uint32_t k = 0;
    for (int32_t i = 0; i < cache->tiles_x * cache->tiles_z && k < n; ++i)
        if (cache->dirty[i])
            idx[k++] = i;

    /* Phase 1: every new tile, and a copy of every old one (to roll back), before nav changes. */
    for (k = 0; k < n; ++k) {
        const int32_t tx = idx[k] % cache->tiles_x, tz = idx[k] / cache->tiles_x;
        st = nb_report(ctx, NB_STAGE_DETAIL, k, n);
        if (st != NB_OK)
            goto cleanup;
        st = build_tile(ctx, fn, cache, tx, tz, &new_data[k], &new_size[k]);
        if (st != NB_OK)
            goto cleanup;
        const uint8_t* cur = NULL;
        size_t cur_size = 0;
        if (nb_navmesh_tile_data(nav, tx, tz, &cur, &cur_size) == NB_OK) {
            old_data[k] = (uint8_t*)nb_alloc(ctx, cur_size);
            if (!old_data[k]) {
                st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'old tile' (%zu)", fn, cur_size);
                goto cleanup;
            }
            memcpy(old_data[k], cur, cur_size);
            old_size[k] = cur_size;
        }
    }

    /* Phase 2: swap the tiles in. Only nb_navmesh_add_tile can fail here (out of memory); then the tiles
     * swapped so far go back to their old blobs. */
    for (k = 0; k < n; ++k) {
        const int32_t tx = idx[k] % cache->tiles_x, tz = idx[k] / cache->tiles_x;
        if (old_data[k])
            nb_navmesh_remove_tile(ctx, nav, tx, tz);
        if (new_data[k]) {
            st = nb_navmesh_add_tile(ctx, nav, new_data[k], new_size[k]);
            if (st != NB_OK) {
                if (old_data[k])
                    nb_navmesh_add_tile(ctx, nav, old_data[k], old_size[k]);
                break;
            }
        }
        applied = k + 1;
    }
    if (st != NB_OK) {
        const nb_status failed = st;
        char message[NB_MESSAGE_MAX];
        nb_format(message, sizeof(message), "%s", nb_context_message(ctx));
        while (applied > 0) {
            --applied;
            const int32_t tx = idx[applied] % cache->tiles_x, tz = idx[applied] / cache->tiles_x;
            if (new_data[applied])
                nb_navmesh_remove_tile(ctx, nav, tx, tz);
            if (old_data[applied])
                nb_navmesh_add_tile(ctx, nav, old_data[applied], old_size[applied]);
        }
        st = nb_fail(ctx, failed, "%s", message); /* the first failure's message, not a rollback's */
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
    if (new_data)
        for (k = 0; k < n; ++k)
            nb_bytes_free(ctx, new_data[k]);
    if (old_data)
        for (k = 0; k < n; ++k)
            nb_free(ctx, old_data[k]);
    nb_free(ctx, idx);
    nb_free(ctx, new_data);
    nb_free(ctx, old_data);
    nb_free(ctx, new_size);
    nb_free(ctx, old_size);
    return st;
}
