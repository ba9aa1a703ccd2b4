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

/* ---- the tile grid (bake_navmesh.c) ---- */

/* The mesh's bounds: input->bmin/bmax when given, else the AABB of every vertex (not validated). */
void nb_grid_mesh_bounds(const nb_bake_input* in, float bmin[3], float bmax[3]);
/* nb_grid_mesh_bounds after checking that bmin/bmax come both or neither, are finite and ordered. */
nb_status nb_grid_check_bounds(nb_context* ctx, const char* fn, const nb_bake_input* in, float bmin[3], float bmax[3]);
/* The grid over [bmin, bmax] for the resolved cfg (one tile when cfg->tile_size is 0); NB_ERR_TOO_LARGE beyond
 * NB_MAX_TILES tiles. */
nb_status nb_grid_from(nb_context* ctx, const char* fn, const nb_config* cfg, const float bmin[3], const float bmax[3],
                       nb_navmesh_params* params, int32_t* tiles_x, int32_t* tiles_z);
/* Buckets the (validated) mesh's triangles by the tiles their xz box with the border may overlap: tile i's
 * candidates are cand[first[i] .. first[i + 1]), ascending (first has ntx * ntz + 1 entries). Both freed with
 * nb_free; NULL on failure. */
nb_status nb_grid_bucket_triangles(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* cfg,
                                   const nb_config_cells* cells, const nb_navmesh_params* params, int32_t ntx,
                                   int32_t ntz, uint32_t** first_out, uint32_t** cand_out);

/* ---- off-mesh links: which tile holds each (bake_navmesh.c) ---- */

/* Tile (tile_x, tile_z)'s bounds without border, as nb_grid_tile_select takes them (y: the level's, from
 * params->origin[1] to bmax_y). */
void nb_grid_tile_bounds(const nb_navmesh_params* params, float bmax_y, int32_t tile_x, int32_t tile_z, float lo[3],
                         float hi[3]);
/* The xz box (lo x, lo z / hi x, hi z) of the compact field of the tile of bounds lo/hi: lo/hi grown by border
 * [world] in float, exactly as nb_bake grows a tile's bounds, so that nb_tile_rebuild, which has only the cached
 * field, reads the very same numbers from the field's bounds. */
void nb_tile_field_box(const float lo[3], const float hi[3], float border, float field_lo[2], float field_hi[2]);
/* Whether a link starting at p belongs to the tile whose field box that is: on each axis the start grown by the
 * border lies in [lo, hi) of the box, the first tile of an axis (first_x / first_z) also taking everything below
 * it. The test stays in the grown coordinates a rebuild can reproduce; shrinking the box back instead would round
 * differently than the neighbouring tile, so a start exactly on a shared edge (a round coordinate) could land in
 * no tile. Checked starts are never below the level, nor at or beyond its far edge. */
static inline int nb_link_in_tile(const float* p, const float field_lo[2], const float field_hi[2], float border,
                                  int first_x, int first_z)
{
    const float x = p[0], z = p[2];
    return (first_x || x - border >= field_lo[0]) && x + border < field_hi[0] &&
           (first_z || z - border >= field_lo[1]) && z + border < field_hi[1];
}
/* Checks every link before a bake, naming it by its index in the caller's list: finite ends, radius, area,
 * bidirectional, and (bmin/bmax given) a start inside the level's xz bounds [bmin, bmax). With a tiled grid
 * (params, ntx x ntz tiles, border [world]; NULL for a solo bake) also that exactly one tile holds the start:
 * float rounding can leave a start exactly on a shared tile edge in neither or both tiles. NB_ERR_NONFINITE or
 * NB_ERR_INVALID_ARG ("fn: links[i]: ..."). */
nb_status nb_links_check(nb_context* ctx, const char* fn, const nb_offmesh_link* links, uint32_t link_count,
                         const float bmin[3], const float bmax[3], const nb_navmesh_params* params, int32_t ntx,
                         int32_t ntz, float border);

/* ---- grid index and tile rebuilds (grid_index.c, tile_cache.c) ---- */

/* nb_grid_index_create with fn naming the caller in messages. */
nb_status nb_grid_index_create_as(nb_context* ctx, const char* fn, const nb_bake_input* input, const nb_config* config,
                                  nb_grid_index** out);
/* The resolved config and cells of an index. */
const nb_config* nb_grid_index_config(const nb_grid_index* index, nb_config_cells* cells);
/* Tile (tile_x, tile_z) of the index up to NB_STAGE_AREAS: *chf (NULL when the tile has no triangles), the tile's
 * bounds without border (lo/hi, xz; the bounds off-mesh links are sorted by). stats (optional) receives the
 * stages run. Checks the tile position (NB_ERR_INVALID_ARG). */
nb_status nb_grid_index_tile_compact(nb_context* ctx, const char* fn, const nb_grid_index* index, int32_t tile_x,
                                     int32_t tile_z, nb_compact_heightfield** chf, float lo[3], float hi[3],
                                     double* stats);
/* The links the tile of that field box holds (nb_link_in_tile), in order: *out (nb_free; room for link_count,
 * NULL when link_count is 0) and their number *count. fn names the caller in the out-of-memory message. */
nb_status nb_links_in_tile(nb_context* ctx, const char* fn, const nb_offmesh_link* links, uint32_t link_count,
                           const float field_lo[2], const float field_hi[2], float border, int first_x, int first_z,
                           nb_offmesh_link** out, uint32_t* count);
/* The links of the grid index's level, checked as nb_links_check does with the index's bounds and grid. */
nb_status nb_grid_index_check_links(nb_context* ctx, const char* fn, const nb_grid_index* index,
                                    const nb_offmesh_link* links, uint32_t link_count);
/* Regions .. detail on chf (taken over: freed on every path) and nb_tile_build with links (already the tile's:
 * all stored). *data NULL (NB_OK) when the tile has no polygons and no links, like nb_bake_grid_tile. stats
 * (optional) receives the stages run here; the others are left alone. cfg/cells: resolved. */
nb_status nb_tile_finish(nb_context* ctx, const nb_config* cfg, const nb_config_cells* cells,
                         nb_compact_heightfield* chf, const nb_offmesh_link* links, uint32_t link_count,
                         int32_t tile_x, int32_t tile_z, double* stats, uint8_t** data, size_t* size);
/* The tile of a grid cell without triangles that holds link starts: no ground polygons, just the links (all
 * stored), with the bounds a baked tile there would record (xz: the field box shrunk back as the contour stage
 * shrinks it; y: the level's, topped by the agent height as nb_compact_heightfield_build tops it). lo/hi: the tile's bounds (nb_grid_tile_bounds).
 * cfg/cells: resolved. Every path that bakes such a tile gives these bytes. */
nb_status nb_tile_links_only(nb_context* ctx, const nb_config* cfg, const nb_config_cells* cells, const float lo[3],
                             const float hi[3], const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x,
                             int32_t tile_z, uint8_t** data, size_t* size);

/* ---- tile.c ---- */

/* nb_tile_build; keep_all_links: store every link given (the caller chose the tile's), instead of those whose
 * start lies inside the polygon mesh's xz bounds. */
nb_status nb_tile_build_as(nb_context* ctx, const nb_tile_params* params, int keep_all_links, uint8_t** data,
                           size_t* size);
/* nb_bake_tile with nb_tile_build_as's keep_all_links. */
nb_status nb_bake_tile_as(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                          const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x, int32_t tile_z,
                          int keep_all_links, uint8_t** data, size_t* size, double stats[NB_STAT_COUNT]);
/* The xz box of nb_tile_dirty_box from a border already in world units. */
void nb_tile_box(const nb_navmesh_params* params, float border, int32_t tile_x, int32_t tile_z, float lo[2],
                 float hi[2]);

#endif
