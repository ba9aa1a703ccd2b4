/* The WebAssembly exports: flat-argument wrappers over the C API, and nothing else. Doubles carry config
 * values and statistics so JavaScript reads them without knowing struct layouts. */
#include "navbake.h"
#include "navmesh_internal.h"
#include "wasm_internal.h"

#include <emscripten.h>
#include <emscripten/emmalloc.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

EMSCRIPTEN_KEEPALIVE nb_context* nbw_context_create(void) { return nb_context_create(NULL); }
EMSCRIPTEN_KEEPALIVE void nbw_context_destroy(nb_context* ctx) { nb_context_destroy(ctx); }
EMSCRIPTEN_KEEPALIVE int nbw_status(const nb_context* ctx) { return (int)nb_context_status(ctx); }
EMSCRIPTEN_KEEPALIVE const char* nbw_message(const nb_context* ctx) { return nb_context_message(ctx); }
EMSCRIPTEN_KEEPALIVE const char* nbw_status_name(int status) { return nb_status_name((nb_status)status); }

EMSCRIPTEN_KEEPALIVE int nbw_config_field_count(void) { return nb_config_field_count(); }
EMSCRIPTEN_KEEPALIVE const char* nbw_config_field_name(int i) { return nb_config_field_name(i); }
EMSCRIPTEN_KEEPALIVE double nbw_config_default(int i) { return nb_config_default(i); }

/* in: nb_config_field_count() doubles (0 = default, NB_ZERO = explicit zero); out: the resolved values. */
EMSCRIPTEN_KEEPALIVE int nbw_config_resolve(nb_context* ctx, const double* in, double* out)
{
    nb_config cfg, resolved;
    nbw_config_from_values(in, &cfg);
    const nb_status st = nb_config_resolve(ctx, &cfg, &resolved, NULL);
    if (out)
        for (int i = 0; i < nb_config_field_count(); ++i)
            out[i] = nb_config_get(&resolved, i);
    return (int)st;
}

EMSCRIPTEN_KEEPALIVE int nbw_stat_count(void) { return NB_STAT_COUNT; }
EMSCRIPTEN_KEEPALIVE const char* nbw_stat_name(int i) { return nb_stat_name((nb_stat)i); }

/* Runs nb_bake; returns a heap-allocated result (free with nbw_result_free) or NULL with the status in ctx.
 * indices may be NULL (consecutive triples), areas may be NULL. */
EMSCRIPTEN_KEEPALIVE nb_bake_result* nbw_bake(nb_context* ctx, const float* positions, uint32_t vertex_count,
                                              const uint32_t* indices, uint32_t triangle_count, const uint8_t* areas,
                                              const double* config, int stop_after, unsigned keep)
{
    nb_bake_result* result = (nb_bake_result*)calloc(1, sizeof(nb_bake_result));
    if (!result)
        return NULL;
    const nb_bake_input input = nbw_input(positions, vertex_count, indices, triangle_count, areas, NULL, 0);
    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    if (nb_bake(ctx, &input, &cfg, (nb_stage)stop_after, keep, result) != NB_OK) {
        free(result);
        return NULL;
    }
    return result;
}

EMSCRIPTEN_KEEPALIVE double nbw_result_stat(const nb_bake_result* r, int i)
{
    return r && i >= 0 && i < NB_STAT_COUNT ? r->stats[i] : -1.0;
}

EMSCRIPTEN_KEEPALIVE void nbw_result_free(nb_context* ctx, nb_bake_result* r)
{
    if (!r)
        return;
    nb_bake_result_release(ctx, r);
    free(r);
}

/* ---- runtime: navmesh and queries (flat wrappers; outputs through caller-allocated heap pointers) ---- */

/* Bakes a navmesh (solo or tiled by config tile_size); NULL with the status in ctx on failure. */
EMSCRIPTEN_KEEPALIVE nb_navmesh* nbw_navmesh_bake(nb_context* ctx, const float* positions, uint32_t vertex_count,
                                                  const uint32_t* indices, uint32_t triangle_count,
                                                  const uint8_t* areas, const double* config)
{
    const nb_bake_input input = nbw_input(positions, vertex_count, indices, triangle_count, areas, NULL, 0);
    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    nb_navmesh* nav = NULL;
    return nb_bake_navmesh(ctx, &input, &cfg, NULL, 0, &nav) == NB_OK ? nav : NULL;
}

EMSCRIPTEN_KEEPALIVE void nbw_navmesh_destroy(nb_context* ctx, nb_navmesh* nav) { nb_navmesh_destroy(ctx, nav); }
EMSCRIPTEN_KEEPALIVE uint32_t nbw_navmesh_tile_count(const nb_navmesh* nav) { return nb_navmesh_tile_count(nav); }
EMSCRIPTEN_KEEPALIVE uint32_t nbw_navmesh_poly_count(const nb_navmesh* nav) { return nb_navmesh_poly_count(nav); }

/* Saves into a new buffer (free with nbw_bytes_free); *size receives its length. NULL on failure. */
EMSCRIPTEN_KEEPALIVE uint8_t* nbw_navmesh_save(nb_context* ctx, const nb_navmesh* nav, uint32_t* size)
{
    uint8_t* data = NULL;
    size_t n = 0;
    if (nb_navmesh_save(ctx, nav, &data, &n) != NB_OK)
        return NULL;
    *size = (uint32_t)n;
    return data;
}

EMSCRIPTEN_KEEPALIVE nb_navmesh* nbw_navmesh_load(nb_context* ctx, const uint8_t* data, uint32_t size)
{
    nb_navmesh* nav = NULL;
    return nb_navmesh_load(ctx, data, size, &nav) == NB_OK ? nav : NULL;
}

/* header: the file's first min(size, 48) bytes; size: the whole file's (nb_navmesh_check_header). */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_check_header(nb_context* ctx, const uint8_t* header, uint32_t size)
{
    return (int)nb_navmesh_check_header(ctx, header, size);
}

EMSCRIPTEN_KEEPALIVE void nbw_bytes_free(nb_context* ctx, void* data) { nb_bytes_free(ctx, data); }

EMSCRIPTEN_KEEPALIVE int nbw_navmesh_poly_refs(nb_context* ctx, const nb_navmesh* nav, nb_poly_ref* refs,
                                               uint32_t capacity, uint32_t* count)
{
    return (int)nb_navmesh_poly_refs(ctx, nav, refs, capacity, count);
}

/* out_info: [vert_count, area, flags, is_offmesh] as int32. */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_poly(const nb_navmesh* nav, nb_poly_ref ref, float* verts, int32_t* out_info)
{
    int32_t n = 0;
    uint8_t area = 0;
    uint16_t flags = 0;
    int offmesh = 0;
    const nb_status st = nb_navmesh_poly(nav, ref, verts, &n, &area, &flags, &offmesh);
    out_info[0] = n;
    out_info[1] = area;
    out_info[2] = flags;
    out_info[3] = offmesh;
    out_info[4] = 0;
    out_info[5] = 0;
    out_info[6] = 0;
    out_info[7] = 0;
    nb_offmesh_link link;
    int attached[2];
    if (st == NB_OK && offmesh && nb_navmesh_offmesh_link(nav, ref, &link, attached) == NB_OK) {
        out_info[4] = (int32_t)link.user_id; /* read back as unsigned */
        out_info[5] = link.bidirectional;
        memcpy(&out_info[6], &link.radius, sizeof(float));
        out_info[7] = attached[0] | attached[1] << 1;
    }
    return (int)st;
}

/* out: the nb_offmesh_link, then an int32 of attached ends (bit 0 start, bit 1 end) */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_offmesh_link(const nb_navmesh* nav, nb_poly_ref ref, nb_offmesh_link* out)
{
    int attached[2] = { 0, 0 };
    const nb_status st = nb_navmesh_offmesh_link(nav, ref, out, attached);
    *(int32_t*)(out + 1) = attached[0] | attached[1] << 1;
    return (int)st;
}

EMSCRIPTEN_KEEPALIVE nb_query* nbw_query_create(nb_context* ctx, const nb_navmesh* nav, uint32_t max_nodes)
{
    nb_query* q = NULL;
    return nb_query_create(ctx, nav, max_nodes, &q) == NB_OK ? q : NULL;
}

EMSCRIPTEN_KEEPALIVE void nbw_query_destroy(nb_context* ctx, nb_query* q) { nb_query_destroy(ctx, q); }

/* Filters live in wasm memory: create with defaults, then set costs and flags. */
EMSCRIPTEN_KEEPALIVE nb_query_filter* nbw_filter_create(void)
{
    nb_query_filter* f = (nb_query_filter*)malloc(sizeof(nb_query_filter));
    if (f)
        nb_query_filter_init(f);
    return f;
}
EMSCRIPTEN_KEEPALIVE void nbw_filter_destroy(nb_query_filter* f) { free(f); }
EMSCRIPTEN_KEEPALIVE void nbw_filter_set_cost(nb_query_filter* f, int area, float cost)
{
    if (f && area >= 0 && area < 64)
        f->area_cost[area] = cost;
}
EMSCRIPTEN_KEEPALIVE void nbw_filter_set_flags(nb_query_filter* f, int include, int exclude)
{
    if (!f)
        return;
    f->include_flags = (uint16_t)include;
    f->exclude_flags = (uint16_t)exclude;
}

EMSCRIPTEN_KEEPALIVE int nbw_find_nearest_poly(nb_query* q, const float* center, const float* half_extents,
                                               const nb_query_filter* filter, nb_poly_ref* ref, float* nearest)
{
    return (int)nb_query_find_nearest_poly(q, center, half_extents, filter, ref, nearest);
}

/* point_flags and point_refs: 0 (NULL) for a batch, buffers for a single path's details */
EMSCRIPTEN_KEEPALIVE int nbw_find_paths(nb_query* q, const float* pairs, uint32_t n, const float* half_extents,
                                        const nb_query_filter* filter, int options, uint8_t* status, float* lengths,
                                        uint32_t* offsets, float* points, uint8_t* point_flags,
                                        nb_poly_ref* point_refs, uint32_t capacity, uint32_t* needed)
{
    return (int)nb_query_find_paths_ex(q, pairs, n, half_extents, filter, options, status, lengths, offsets, points,
                                       point_flags, point_refs, capacity, needed);
}

/* The polygons a raycast records to find the one it stops on: rays rarely cross more than a few dozen. */
#define RAY_PATH 1024
static nb_poly_ref ray_path[RAY_PATH];

/* out: [t, nx, ny, nz, y]: y is the surface's height where the walk stops, on the last polygon it entered (the
 * walk is in xz, so where floors stack that may be another floor than end's); NaN past RAY_PATH polygons. */
EMSCRIPTEN_KEEPALIVE int nbw_raycast(nb_query* q, nb_poly_ref start_ref, const float* start, const float* end,
                                     const nb_query_filter* filter, float* out)
{
    int32_t n = 0;
    const nb_status st = nb_query_raycast(q, start_ref, start, end, filter, &out[0], &out[1], ray_path, &n, RAY_PATH);
    out[4] = NAN;
    if (st != NB_OK || n < 1 || n >= RAY_PATH)
        return (int)st;
    const float t = out[0] < 0.0f ? 0.0f : out[0] > 1.0f ? 1.0f : out[0];
    const float at[3] = { start[0] + (end[0] - start[0]) * t, start[1] + (end[1] - start[1]) * t,
                          start[2] + (end[2] - start[2]) * t };
    float on[3];
    int over;
    if (nb_query_closest_point_on_poly(q, ray_path[n - 1], at, on, &over) == NB_OK)
        out[4] = on[1];
    return (int)st;
}

EMSCRIPTEN_KEEPALIVE int nbw_random_point(nb_query* q, const nb_query_filter* filter, uint64_t* rng, nb_poly_ref* ref,
                                          float* point)
{
    return (int)nb_query_random_point(q, filter, rng, ref, point);
}

EMSCRIPTEN_KEEPALIVE int nbw_random_point_around(nb_query* q, nb_poly_ref start_ref, const float* center, float radius,
                                                 const nb_query_filter* filter, uint64_t* rng, nb_poly_ref* ref,
                                                 float* point)
{
    return (int)nb_query_random_point_around(q, start_ref, center, radius, filter, rng, ref, point);
}

EMSCRIPTEN_KEEPALIVE int nbw_closest_point(nb_query* q, nb_poly_ref ref, const float* pos, float* closest,
                                           int* over_poly)
{
    return (int)nb_query_closest_point_on_poly(q, ref, pos, closest, over_poly);
}

EMSCRIPTEN_KEEPALIVE int nbw_poly_height(nb_query* q, nb_poly_ref ref, const float* pos, float* height)
{
    return (int)nb_query_poly_height(q, ref, pos, height);
}

EMSCRIPTEN_KEEPALIVE int nbw_move_along(nb_query* q, nb_poly_ref start_ref, const float* start, const float* end,
                                        const nb_query_filter* filter, float* result)
{
    int32_t n = 0;
    return (int)nb_query_move_along_surface(q, start_ref, start, end, filter, result, NULL, &n, 0);
}

/* out: [distance, hit xyz, normal xyz] */
EMSCRIPTEN_KEEPALIVE int nbw_distance_to_wall(nb_query* q, nb_poly_ref start_ref, const float* center,
                                              float max_radius, const nb_query_filter* filter, float* out)
{
    return (int)nb_query_distance_to_wall(q, start_ref, center, max_radius, filter, &out[0], &out[1], &out[4]);
}

EMSCRIPTEN_KEEPALIVE void nbw_context_clear_error(nb_context* ctx) { nb_context_clear_error(ctx); }

EMSCRIPTEN_KEEPALIVE int nbw_navmesh_set_poly_flags(nb_context* ctx, nb_navmesh* nav, nb_poly_ref ref, int flags)
{
    return (int)nb_navmesh_set_poly_flags(ctx, nav, ref, (uint16_t)flags);
}

/* counts: [vertex_count, triangle_count] (always filled: call with NULL buffers to size them). */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_detail_triangles(nb_context* ctx, const nb_navmesh* nav, float* positions,
                                                      uint32_t vertex_capacity, uint32_t* indices, uint8_t* areas,
                                                      uint32_t triangle_capacity, uint32_t* counts)
{
    return (int)nb_navmesh_detail_triangles(ctx, nav, positions, vertex_capacity, indices, areas, triangle_capacity,
                                            &counts[0], &counts[1]);
}

/* ---- progress: the C callback calls into JavaScript ----
 * nb_context_desc.progress is a C function pointer; it forwards to nbw_js_progress, which the module imports
 * (env.nbw_js_progress) and web/src/navbake.mjs supplies: it calls Module.onNavBakeProgress(stage, done, total)
 * when the TypeScript layer has set it, and a truthy return cancels the bake (NB_ERR_CANCELLED). The JavaScript
 * side must not throw through it: wasm frames would be unwound without their cleanup. EM_JS only declares the
 * import here (emcc rejects a plain undeclared import); its body would serve Emscripten's own glue, which the
 * standalone link (see the Makefile) does not generate, so navbake.mjs's function is the one that runs. */
EM_JS(int, nbw_js_progress, (int stage, uint32_t done, uint32_t total), {
    var f = Module["onNavBakeProgress"];
    return f && f(stage, done >>> 0, total >>> 0) ? 1 : 0;
});

static int progress_to_js(void* user, nb_stage stage, uint32_t done, uint32_t total)
{
    (void)user;
    return nbw_js_progress((int)stage, done, total);
}

EMSCRIPTEN_KEEPALIVE void nbw_context_set_js_progress(nb_context* ctx, int enabled)
{
    nb_context_set_progress(ctx, enabled ? progress_to_js : NULL, NULL);
}

/* ---- tiled bakes spread over workers: assembly ----
 * web/src/bake.ts computes the grid itself (in float32, as the C does) so the main thread never copies the
 * geometry into its own heap; the workers bake through the grid index (nbw_grid_index_*, below). Tiles baked in
 * several workers and added to a navmesh made with nbw_navmesh_create save to the very bytes nb_bake_navmesh gives
 * (tests/web/workers.test.ts and tiled.test.ts compare them). */

/* params: origin xyz, tile_width, tile_depth, max_tiles (as nbw_grid_index_create gives them). */
EMSCRIPTEN_KEEPALIVE nb_navmesh* nbw_navmesh_create(nb_context* ctx, const double* params)
{
    nb_navmesh_params p;
    nbw_params_from_values(params, &p);
    nb_navmesh* nav = NULL;
    return nb_navmesh_create(ctx, &p, &nav) == NB_OK ? nav : NULL;
}

EMSCRIPTEN_KEEPALIVE int nbw_navmesh_add_tile(nb_context* ctx, nb_navmesh* nav, const uint8_t* data, uint32_t size)
{
    return (int)nb_navmesh_add_tile(ctx, nav, data, size);
}

/* ---- volumes and off-mesh links at bake time ----
 * web/src/wasm.ts writes nb_volume and nb_offmesh_link structs straight into the heap (a convex volume's verts
 * pointing at a float array it wrote too); these asserts pin the wasm32 layout it assumes. */
_Static_assert(sizeof(nb_volume) == 68 && offsetof(nb_volume, area) == 4 && offsetof(nb_volume, bmin) == 8 &&
                   offsetof(nb_volume, bmax) == 20 && offsetof(nb_volume, center) == 32 &&
                   offsetof(nb_volume, radius) == 44 && offsetof(nb_volume, height) == 48 &&
                   offsetof(nb_volume, verts) == 52 && offsetof(nb_volume, vert_count) == 56 &&
                   offsetof(nb_volume, ymin) == 60 && offsetof(nb_volume, ymax) == 64,
               "nb_volume layout changed: update web/src/wasm.ts (writeVolumes)");
_Static_assert(sizeof(nb_offmesh_link) == 36 && offsetof(nb_offmesh_link, end) == 12 &&
                   offsetof(nb_offmesh_link, radius) == 24 && offsetof(nb_offmesh_link, flags) == 28 &&
                   offsetof(nb_offmesh_link, area) == 30 && offsetof(nb_offmesh_link, bidirectional) == 31 &&
                   offsetof(nb_offmesh_link, user_id) == 32,
               "nb_offmesh_link layout changed: update web/src/wasm.ts (writeLinks, offMeshLink)");

/* nbw_navmesh_bake with bake-time area volumes and off-mesh links (both optional). */
EMSCRIPTEN_KEEPALIVE nb_navmesh* nbw_navmesh_bake_ex(nb_context* ctx, const float* positions, uint32_t vertex_count,
                                                     const uint32_t* indices, uint32_t triangle_count,
                                                     const uint8_t* areas, const nb_volume* volumes,
                                                     uint32_t volume_count, const nb_offmesh_link* links,
                                                     uint32_t link_count, const double* config)
{
    const nb_bake_input input =
        nbw_input(positions, vertex_count, indices, triangle_count, areas, volumes, volume_count);
    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    nb_navmesh* nav = NULL;
    return nb_bake_navmesh(ctx, &input, &cfg, links, link_count, &nav) == NB_OK ? nav : NULL;
}

/* ---- streaming: single tiles in and out of a navmesh ---- */

/* out: origin xyz, tile_width, tile_depth, max_tiles. */
EMSCRIPTEN_KEEPALIVE void nbw_navmesh_params(const nb_navmesh* nav, double* out)
{
    nbw_params_to_values(nb_navmesh_get_params(nav), out);
}

/* out: [blob pointer (owned by the navmesh), size]; NB_ERR_NOT_FOUND without a message when there is no tile. */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_tile_data(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z, uint32_t* out)
{
    const uint8_t* data = NULL;
    size_t size = 0;
    const nb_status st = nb_navmesh_tile_data(nav, tile_x, tile_z, &data, &size);
    out[0] = (uint32_t)(uintptr_t)data;
    out[1] = (uint32_t)size;
    return (int)st;
}

EMSCRIPTEN_KEEPALIVE int nbw_navmesh_remove_tile(nb_context* ctx, nb_navmesh* nav, int32_t tile_x, int32_t tile_z)
{
    return (int)nb_navmesh_remove_tile(ctx, nav, tile_x, tile_z);
}

/* A swap's undo to the caller who wants it (undo_out), else the swap kept. */
static void hand_undo(nb_context* ctx, nb_tile_undo* undo, nb_tile_undo** undo_out)
{
    if (undo_out)
        *undo_out = undo;
    else
        nb_navmesh_swap_done(ctx, undo);
}

/* Adds a tile blob, replacing the tile already at its position. The blob is validated first; on any failure the
 * navmesh keeps the tile it had, in its slot with its salt (its refs stay valid).
 * keep_flags: the flags set on the polygons of the tile replaced go to the same polygons of the new one
 * (nb_navmesh_keep_flags): an obstacle update's rebuild. A tile loaded by the user brings its own flags.
 * undo_out NULL: the swap is kept. Otherwise *undo_out is the swap's undo (0 when there was nothing to do), for
 * nbw_navmesh_swap_undo or nbw_navmesh_swap_done: an update of several tiles, all or none. */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_put_tile(nb_context* ctx, nb_navmesh* nav, const uint8_t* data, uint32_t size,
                                              int keep_flags, nb_tile_undo** undo_out)
{
    int32_t tx = 0, tz = 0;
    nb_status st = nb_tile_validate(ctx, data, size);
    if (st == NB_OK)
        st = nb_tile_position(ctx, data, size, &tx, &tz);
    if (st != NB_OK)
        return (int)st;
    nb_tile_undo* undo = NULL;
    st = nb_navmesh_swap_tile(ctx, nav, tx, tz, data, size, &undo);
    if (st != NB_OK)
        return (int)st;
    size_t old_size = 0;
    uint8_t* old = nb_tile_undo_old(undo, &old_size);
    if (keep_flags && old)
        (void)nb_navmesh_keep_flags(nav, tx, tz, old, old_size);
    hand_undo(ctx, undo, undo_out);
    return NB_OK;
}

/* Removes the tile at (tile_x, tile_z) (none there: nothing to do); undoably when undo_out is given (see
 * nbw_navmesh_put_tile), *undo_out 0 when there was none. */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_remove_tile_undoably(nb_context* ctx, nb_navmesh* nav, int32_t tile_x,
                                                          int32_t tile_z, nb_tile_undo** undo_out)
{
    nb_tile_undo* undo = NULL;
    const nb_status st = nb_navmesh_swap_tile(ctx, nav, tile_x, tile_z, NULL, 0, &undo);
    hand_undo(ctx, undo, undo_out);
    return (int)st;
}

/* Undoes a swap (in the reverse order of the swaps); cannot fail. */
EMSCRIPTEN_KEEPALIVE void nbw_navmesh_swap_undo(nb_context* ctx, nb_navmesh* nav, nb_tile_undo* undo)
{
    nb_navmesh_swap_undo(ctx, nav, undo);
}

/* Keeps a swap: frees what its undo held. */
EMSCRIPTEN_KEEPALIVE void nbw_navmesh_swap_done(nb_context* ctx, nb_tile_undo* undo)
{
    nb_navmesh_swap_done(ctx, undo);
}

/* The slot and salt of the tile at (tile_x, tile_z) in out[0..1] (its refs' identity); 0 when there is none. */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_tile_place(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z, uint32_t* out)
{
    nb_tile_place place;
    if (!nb_navmesh_tile_place(nav, tile_x, tile_z, &place))
        return 0;
    out[0] = place.slot;
    out[1] = place.salt;
    return 1;
}

/* Puts a tile back where it was (slot and salt from nbw_navmesh_tile_place before it was removed or replaced),
 * replacing the tile now at its position: the rollback of a failed update, after which refs held by the application
 * are valid again. */
EMSCRIPTEN_KEEPALIVE int nbw_navmesh_put_tile_back(nb_context* ctx, nb_navmesh* nav, const uint8_t* data,
                                                   uint32_t size, uint32_t slot, uint32_t salt)
{
    int32_t tx = 0, tz = 0;
    nb_status st = nb_tile_position(ctx, data, size, &tx, &tz);
    if (st != NB_OK)
        return (int)st;
    if (nb_navmesh_tile_at(nav, tx, tz)) {
        st = nb_navmesh_remove_tile(ctx, nav, tx, tz);
        if (st != NB_OK)
            return (int)st;
    }
    const nb_tile_place place = { slot, salt };
    return (int)nb_navmesh_add_tile_back(ctx, nav, data, size, &place);
}

/* Every tile as (tile_x, tile_z, polygons) int32 triples, in slot order; returns the tile count (fills at most
 * capacity triples). polygons counts off-mesh link polygons too. */
EMSCRIPTEN_KEEPALIVE uint32_t nbw_navmesh_tiles(const nb_navmesh* nav, int32_t* out, uint32_t capacity)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        if (n < capacity) {
            out[n * 3] = t->v.tile_x;
            out[n * 3 + 1] = t->v.tile_z;
            out[n * 3 + 2] = (int32_t)t->v.npolys;
        }
        ++n;
    }
    return n;
}

/* Bytes in use on the wasm heap (emmalloc: the dynamic heap minus its free blocks), for leak tests. */
EMSCRIPTEN_KEEPALIVE double nbw_heap_used(void)
{
    return (double)(emmalloc_dynamic_heap_size() - emmalloc_free_dynamic_memory());
}

/* ---- tiled bakes over a triangle index (one per worker session), tile caches, live obstacles ---- */

/* out[x + z * tiles_x] = 1 for every tile with triangles bucketed into it (nb_grid_index_tile_triangles > 0). */
EMSCRIPTEN_KEEPALIVE void nbw_grid_index_tiles(const nb_grid_index* index, uint8_t* out)
{
    int32_t tx = 0, tz = 0;
    nb_grid_index_grid(index, NULL, &tx, &tz);
    for (int32_t z = 0; z < tz; ++z)
        for (int32_t x = 0; x < tx; ++x)
            out[x + z * tx] = nb_grid_index_tile_triangles(index, x, z) > 0;
}

/* Builds the tile index over the input (whose arrays it references: keep them until nbw_grid_index_destroy).
 * grid receives origin xyz, tile_width, tile_depth, max_tiles, tiles_x, tiles_z. NULL with the status in ctx. */
EMSCRIPTEN_KEEPALIVE nb_grid_index* nbw_grid_index_create(nb_context* ctx, const float* positions, uint32_t vertex_count,
                                                          const uint32_t* indices, uint32_t triangle_count,
                                                          const uint8_t* areas, const nb_volume* volumes,
                                                          uint32_t volume_count, const double* config, double* grid)
{
    const nb_bake_input input =
        nbw_input(positions, vertex_count, indices, triangle_count, areas, volumes, volume_count);
    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    nb_grid_index* index = NULL;
    if (nb_grid_index_create(ctx, &input, &cfg, &index) != NB_OK)
        return NULL;
    nb_navmesh_params p;
    int32_t tx = 0, tz = 0;
    nb_grid_index_grid(index, &p, &tx, &tz);
    nbw_params_to_values(&p, grid);
    grid[6] = tx;
    grid[7] = tz;
    return index;
}

EMSCRIPTEN_KEEPALIVE void nbw_grid_index_destroy(nb_context* ctx, nb_grid_index* index)
{
    nb_grid_index_destroy(ctx, index);
}

/* out: [blob, size, cache blob, cache size] (free both with nbw_bytes_free); want_cache 0 leaves the cache out. */
EMSCRIPTEN_KEEPALIVE int nbw_grid_index_bake_tile(nb_context* ctx, const nb_grid_index* index,
                                                  const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x,
                                                  int32_t tile_z, int want_cache, uint32_t* out, double* stats)
{
    uint8_t *data = NULL, *cache = NULL;
    size_t size = 0, cache_size = 0;
    const nb_status st = nb_grid_index_bake_tile(ctx, index, links, link_count, tile_x, tile_z, &data, &size,
                                                 want_cache ? &cache : NULL, want_cache ? &cache_size : NULL, stats);
    out[0] = (uint32_t)(uintptr_t)data;
    out[1] = (uint32_t)size;
    out[2] = (uint32_t)(uintptr_t)cache;
    out[3] = (uint32_t)cache_size;
    return (int)st;
}

/* out: [blob, size] (0 with NB_OK: the tile ends with no polygons). */
EMSCRIPTEN_KEEPALIVE int nbw_tile_rebuild(nb_context* ctx, const double* config, const uint8_t* cache,
                                          uint32_t cache_size, const nb_offmesh_link* links, uint32_t link_count,
                                          const nb_volume* obstacles, uint32_t obstacle_count, uint32_t* out)
{
    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    uint8_t* data = NULL;
    size_t size = 0;
    const nb_status st =
        nb_tile_rebuild(ctx, &cfg, cache, cache_size, links, link_count, obstacles, obstacle_count, &data, &size);
    out[0] = (uint32_t)(uintptr_t)data;
    out[1] = (uint32_t)size;
    return (int)st;
}

/* params: as nbw_navmesh_create's; out: lo x, lo z, hi x, hi z. */
EMSCRIPTEN_KEEPALIVE void nbw_tile_dirty_box(const double* params, const double* config, int32_t tile_x,
                                             int32_t tile_z, float* out)
{
    nb_navmesh_params p;
    nbw_params_from_values(params, &p);
    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    nb_tile_dirty_box(&p, &cfg, tile_x, tile_z, &out[0], &out[2]);
}
