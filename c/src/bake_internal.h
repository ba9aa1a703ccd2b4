/* Internal pieces of the bake shared by nb_bake, the tiled bakes and the tile cache. Not part of the API. */
#ifndef NB_BAKE_INTERNAL_H
#define NB_BAKE_INTERNAL_H

#include "nb_internal.h"

/* Runs the stages after NB_STAGE_AREAS (regions .. stop_after, NB_STAGE_REGIONS..NB_STAGE_DETAIL) on chf, which
 * it takes over: on success chf ends in out->compact, or is freed when keep lacks NB_KEEP_COMPACT and a later
 * stage ran; on failure it is freed along with everything built here, and out's pointers are NULL (the caller
 * frees what it owns itself). cfg and cells are the resolved config (not resolved again: that would turn
 * explicit zeros into defaults). Fills out->stats of the stages that run (the caller presets the others). */
NB_NOINLINE nb_status nb_bake_from_compact(nb_context* ctx, const nb_config* cfg, const nb_config_cells* cells,
                                           int32_t border_size, nb_compact_heightfield* chf, nb_stage stop_after,
                                           unsigned keep, nb_bake_result* out);

/* The input of one tile of the grid nb_bake_grid computes: the tile's bounds and border, and the level's
 * triangles whose xz box overlaps the tile with its border (own index and area arrays, renumbered). */
typedef struct nb_grid_tile_input {
    nb_bake_input in; /* ready for nb_bake: points into the fields below and the level's positions */
    float lo[3], hi[3];
    uint32_t* tris;
    uint8_t* areas;
    uint32_t tri_count; /* 0: the tile has no geometry (in is then not usable) */
} nb_grid_tile_input;

/* Selects tile (tile_x, tile_z) of the grid given by params (the level bounds' minimum corner is
 * params->origin; bmax is the level's maximum corner). cfg and cells: resolved. Checks every triangle's
 * indices and area id (messages name fn and the level's triangle number). Release with
 * nb_grid_tile_input_release, also after a failure. */
nb_status nb_grid_tile_select(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* cfg,
                              const nb_config_cells* cells, const nb_navmesh_params* params, const float bmax[3],
                              int32_t tile_x, int32_t tile_z, nb_grid_tile_input* out);
/* The same, testing only the candidate triangles (ascending triangle numbers, a superset of the tile's; the
 * result is then identical to testing every triangle). Indices and areas of other triangles are not checked:
 * the caller validated the whole mesh. */
nb_status nb_grid_tile_select_from(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* cfg,
                                   const nb_config_cells* cells, const nb_navmesh_params* params, const float bmax[3],
                                   int32_t tile_x, int32_t tile_z, const uint32_t* candidates, uint32_t ncandidates,
                                   nb_grid_tile_input* out);
void nb_grid_tile_input_release(nb_context* ctx, nb_grid_tile_input* t);

#endif
