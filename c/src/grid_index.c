/* The grid index: a level's triangles bucketed by tile once, so that each tile bake (a worker's job, or the tile
 * cache's) looks at its own triangles only instead of scanning the level. Tiles come out byte-identical to
 * nb_bake_grid_tile's: the same selection (nb_grid_tile_select_from over the bucket), the same bake. */
#include "bake_internal.h"

struct nb_grid_index {
    nb_bake_input input; /* the caller's arrays; bmin/bmax point at ours */
    float bmin[3], bmax[3];
    nb_config config; /* the caller's (zero = defaults), for nb_bake: resolving twice would turn NB_ZERO into defaults */
    nb_config cfg;    /* resolved */
    nb_config_cells cells;
    nb_navmesh_params params;
    int32_t tiles_x, tiles_z;
    uint32_t* first; /* tiles_x * tiles_z + 1: tile i's candidates are cand[first[i] .. first[i + 1]) */
    uint32_t* cand;
};

void nb_grid_index_destroy(nb_context* ctx, nb_grid_index* index)
{
    if (!index)
        return;
    nb_free(ctx, index->first);
    nb_free(ctx, index->cand);
    nb_free(ctx, index);
}

nb_status nb_grid_index_create_as(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* config,
                                  nb_grid_index** out)
{
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
        return nb_fail(ctx, NB_ERR_INVALID_CONFIG, "%s: tile_size must be > 0 for a tiled bake (got %d)", fn,
                       cfg.tile_size);
    uint32_t ntris;
    st = nb_validate_mesh(ctx, fn, &input->mesh, 0, &ntris);
    if (st != NB_OK)
        return st;
    if (input->volume_count && !input->volumes)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: volumes is NULL but volume_count is %u", fn, input->volume_count);
    for (uint32_t i = 0; i < input->volume_count; ++i) {
        float lo[3], hi[3];
        char where[64];
        nb_format(where, sizeof(where), "%s (volume %u)", fn, i);
        st = nb_volume_bounds(ctx, where, &input->volumes[i], lo, hi);
        if (st != NB_OK)
            return st;
    }
    float bmin[3], bmax[3];
    st = nb_grid_check_bounds(ctx, fn, input, bmin, bmax);
    if (st != NB_OK)
        return st;
    nb_grid_index* index = (nb_grid_index*)nb_calloc(ctx, 1, sizeof(*index));
    if (!index)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'index'", fn);
    st = nb_grid_from(ctx, fn, &cfg, bmin, bmax, &index->params, &index->tiles_x, &index->tiles_z);
    if (st != NB_OK)
        goto cleanup;
    index->input = *input;
    memcpy(index->bmin, bmin, sizeof(bmin));
    memcpy(index->bmax, bmax, sizeof(bmax));
    index->input.bmin = index->bmin;
    index->input.bmax = index->bmax;
    if (config)
        index->config = *config;
    index->cfg = cfg;
    index->cells = cells;
    st = nb_grid_bucket_triangles(ctx, fn, input, &cfg, &cells, &index->params, index->tiles_x, index->tiles_z,
                                  &index->first, &index->cand);
    if (st != NB_OK)
        goto cleanup;
    *out = index;
    return NB_OK;

cleanup:
    nb_grid_index_destroy(ctx, index);
    return st;
}

nb_status nb_grid_index_create(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                               nb_grid_index** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_grid_index_create: ctx is NULL");
    return nb_grid_index_create_as(ctx, "nb_grid_index_create", input, config, out);
}

void nb_grid_index_grid(const nb_grid_index* index, nb_navmesh_params* params, int32_t* tiles_x, int32_t* tiles_z)
{
    if (!index)
        return;
    if (params)
        *params = index->params;
    if (tiles_x)
        *tiles_x = index->tiles_x;
    if (tiles_z)
        *tiles_z = index->tiles_z;
}

uint32_t nb_grid_index_tile_triangles(const nb_grid_index* index, int32_t tile_x, int32_t tile_z)
{
    if (!index || tile_x < 0 || tile_z < 0 || tile_x >= index->tiles_x || tile_z >= index->tiles_z)
        return 0;
    const uint32_t ti = (uint32_t)(tile_x + tile_z * index->tiles_x);
    return index->first[ti + 1] - index->first[ti];
}

const nb_config* nb_grid_index_config(const nb_grid_index* index, nb_config_cells* cells)
{
    if (cells)
        *cells = index->cells;
    return &index->cfg;
}

nb_status nb_grid_index_check_links(nb_context* ctx, const char* fn, const nb_grid_index* index,
                                    const nb_offmesh_link* links, uint32_t link_count)
{
    const float border = (float)(index->cells.walkable_radius + 3) * index->cfg.cell_size;
    return nb_links_check(ctx, fn, links, link_count, index->bmin, index->bmax, &index->params, index->tiles_x,
                          index->tiles_z, border);
}

nb_status nb_grid_index_tile_compact(nb_context* ctx, const char* fn, const nb_grid_index* index, int32_t tile_x,
                                     int32_t tile_z, nb_compact_heightfield** chf, float lo[3], float hi[3],
                                     double* stats)
{
    *chf = NULL;
    if (tile_x < 0 || tile_z < 0 || tile_x >= index->tiles_x || tile_z >= index->tiles_z)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: tile (%d, %d) is outside the %d x %d grid", fn, tile_x, tile_z,
                       index->tiles_x, index->tiles_z);
    const uint32_t ti = (uint32_t)(tile_x + tile_z * index->tiles_x);
    nb_grid_tile_input sel;
    nb_status st = nb_grid_tile_select_from(ctx, fn, &index->input, &index->cfg, &index->cells, &index->params,
                                            index->bmax, tile_x, tile_z, index->cand + index->first[ti],
                                            index->first[ti + 1] - index->first[ti], &sel);
    memcpy(lo, sel.lo, sizeof(sel.lo));
    memcpy(hi, sel.hi, sizeof(sel.hi));
    if (st == NB_OK && sel.tri_count > 0) {
        nb_bake_result r;
        st = nb_bake(ctx, &sel.in, &index->config, NB_STAGE_AREAS, NB_KEEP_COMPACT, &r);
        if (st == NB_OK) {
            if (stats)
                memcpy(stats, r.stats, sizeof(r.stats));
            *chf = r.compact;
            r.compact = NULL;
            nb_bake_result_release(ctx, &r);
        }
    }
    nb_grid_tile_input_release(ctx, &sel);
    return st;
}

nb_status nb_grid_index_bake_tile(nb_context* ctx, const nb_grid_index* index, const nb_offmesh_link* links,
                                  uint32_t link_count, int32_t tile_x, int32_t tile_z, uint8_t** data, size_t* size,
                                  uint8_t** cache, size_t* cache_size, double stats[NB_STAT_COUNT])
{
    static const char* fn = "nb_grid_index_bake_tile";
    if (!data || !size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !data ? "data" : "size");
    *data = NULL;
    *size = 0;
    if (cache)
        *cache = NULL;
    if (cache_size)
        *cache_size = 0;
    if (!cache != !cache_size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: give both cache and cache_size or neither", fn);
    if (!index)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: index is NULL", fn);
    if (link_count && !links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: links is NULL but link_count is %u", fn, link_count);
    double local[NB_STAT_COUNT];
    double* st_out = stats ? stats : local;
    for (int i = 0; i < NB_STAT_COUNT; ++i)
        st_out[i] = -1.0;

    /* Every link, not only this tile's: a bad one is refused whichever tile is baked first. */
    nb_status st = nb_grid_index_check_links(ctx, fn, index, links, link_count);
    if (st != NB_OK)
        return st;
    const double t0 = nb_now_ms();
    nb_compact_heightfield* chf = NULL;
    nb_offmesh_link* tlinks = NULL;
    float lo[3], hi[3];
    st = nb_grid_index_tile_compact(ctx, fn, index, tile_x, tile_z, &chf, lo, hi, st_out);
    if (st != NB_OK)
        return st;
    const float border = (float)(index->cells.walkable_radius + 3) * index->cfg.cell_size;
    float field_lo[2], field_hi[2];
    nb_tile_field_box(lo, hi, border, field_lo, field_hi);
    uint32_t nlinks = 0;
    st = nb_links_in_tile(ctx, fn, links, link_count, field_lo, field_hi, border, tile_x == 0, tile_z == 0, &tlinks,
                          &nlinks);
    if (st != NB_OK)
        goto cleanup;
    if (!chf) {
        /* No triangles: no cache and no ground, but the links starting here get their tile (as in a solo bake). */
        if (nlinks)
            st = nb_tile_links_only(ctx, &index->cfg, &index->cells, lo, hi, tlinks, nlinks, tile_x, tile_z, data,
                                    size);
        goto cleanup; /* nothing else here: the other outputs stay NULL */
    }
    if (cache) {
        st = nb_compact_encode(ctx, chf, tile_x, tile_z, cache, cache_size);
        if (st != NB_OK)
            goto cleanup;
    }
    st = nb_tile_finish(ctx, &index->cfg, &index->cells, chf, tlinks, nlinks, tile_x, tile_z, st_out, data, size);
    chf = NULL; /* taken over */
    if (st != NB_OK)
        goto cleanup;
    st_out[NB_STAT_MS_TOTAL] = nb_now_ms() - t0;

cleanup:
    if (st != NB_OK && cache) {
        nb_bytes_free(ctx, *cache);
        *cache = NULL;
        *cache_size = 0;
    }
    nb_compact_heightfield_destroy(ctx, chf);
    nb_free(ctx, tlinks);
    return st;
}
