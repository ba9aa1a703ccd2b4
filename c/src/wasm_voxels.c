/* The WebAssembly exports of voxelize() and VoxelGrid (web/src/voxels.ts): the occupancy grid of a level's
 * solid voxels, and 3D path searches through it (nb_voxel_find_path). JavaScript passes flat pointers and numbers;
 * the structs of the C API are filled here. Emscripten builds only, like wasm_inspect.c. */
#ifdef __EMSCRIPTEN__

#include "nb_internal.h"
#include "wasm_internal.h"

#include <emscripten.h>
#include <math.h>
#include <stdlib.h>

/* Indices of nbw_voxelize's info output (web/src/wasm.ts reads them by the same numbers). */
enum {
    VINFO_ORIGIN = 0, /* 3: world position of voxel (0, 0, 0)'s minimum corner */
    VINFO_CELL_SIZE = 3,
    VINFO_CELL_HEIGHT = 4,
    VINFO_DIMS = 5, /* 3: voxels along x, y, z */
    VINFO_WORDS = 8,
    VINFO_FILLED = 9, /* voxels nb_voxel_fill_enclosed made solid */
    VINFO_COUNT = 10
};

EMSCRIPTEN_KEEPALIVE int nbw_voxel_info_count(void) { return VINFO_COUNT; }

/* Bounds for the voxel grid: the mesh's, with x and z widened to whole cells past the farthest vertex. The bake's
 * grid rounds its width to the nearest cell count (the reference's rule, kept for navmeshes), which leaves out a
 * face lying on the +x bound and whatever lies in a last partial cell; a voxel grid covers the whole mesh. 0 when
 * a vertex is not finite or beyond NB_MAX_COORD (or there is none): nb_bake then names it. */
static int voxel_bounds(const float* positions, uint32_t vertex_count, float cell_size, float lo[3], float hi[3])
{
    if (vertex_count == 0 || !(cell_size > 0.0f))
        return 0;
    for (uint32_t i = 0; i < vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            const float v = positions[(size_t)i * 3 + k];
            if (!isfinite(v) || fabsf(v) > NB_MAX_COORD)
                return 0;
            if (i == 0 || v < lo[k])
                lo[k] = v;
            if (i == 0 || v > hi[k])
                hi[k] = v;
        }
    for (int k = 0; k < 3; k += 2) {
        /* the cell the farthest vertex falls in, as rasterization finds it (in float, times 1 / cell size), or by
         * the exact quotient, whichever is higher; then one more cell (so that it is inside) */
        const double exact = floor(((double)hi[k] - lo[k]) / cell_size);
        const double raster = floor((double)((hi[k] - lo[k]) * (1.0f / cell_size)));
        const double cells = (exact > raster ? exact : raster) + 1.0;
        hi[k] = (float)((double)lo[k] + cells * cell_size);
    }
    return 1;
}

/* The voxel of a fillEnclosed seed, or the one above it when the seed's is solid (a seed at the feet of someone
 * standing on a floor lies in the floor's top voxel). 0, or 1 when both are solid. */
static int free_seed(const uint32_t* words, const int32_t dims[3], int32_t seed[3])
{
    for (int up = 0; up < 2 && seed[1] + up < dims[1]; ++up) {
        const uint64_t i = (uint64_t)seed[0] + (uint64_t)dims[0] * ((uint64_t)seed[2] + (uint64_t)dims[2] * (uint64_t)(seed[1] + up));
        if (!(words[i >> 5] >> (i & 31) & 1u)) {
            seed[1] += up;
            return 0;
        }
    }
    return 1;
}

/* Rasterizes the mesh (nb_bake up to the solid heightfield, with the config's cell sizes) and returns its
 * occupancy words (free with free()) and their layout in info; NULL with the status in ctx on failure.
 * headroom: empty layers added above the mesh's top (y is the slowest axis of the layout, so they are zero words
 * appended), so that agents can stand on the highest surfaces and fly over them.
 * fill_count >= 0: then nb_voxel_fill_enclosed, seeded by the voxels of the fill_count world points in fill (x, y,
 * z each; one outside the grid is NB_ERR_INVALID_ARG naming it as "seed <i>"). */
EMSCRIPTEN_KEEPALIVE uint32_t* nbw_voxelize(nb_context* ctx, const float* positions, uint32_t vertex_count,
                                            const uint32_t* indices, uint32_t triangle_count, const uint8_t* areas,
                                            const double* config, int32_t headroom, const float* fill,
                                            int32_t fill_count, double* info)
{
    static const char* fn = "navbake.voxelize";
    uint32_t* words = NULL;
    nb_bake_result result;
    memset(&result, 0, sizeof(result));
    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    nb_bake_input input = nbw_input(positions, vertex_count, indices, triangle_count, areas, NULL, 0);
    float lo[3], hi[3];
    if (voxel_bounds(positions, vertex_count, cfg.cell_size, lo, hi)) {
        input.bmin = lo;
        input.bmax = hi;
    }
    if (nb_bake(ctx, &input, &cfg, NB_STAGE_RASTERIZE, NB_KEEP_HEIGHTFIELD, &result) != NB_OK)
        return NULL;
    const nb_heightfield* hf = result.heightfield;
    size_t need = 0;
    int32_t dims[3] = {0, 0, 0};
    nb_status st = nb_heightfield_occupancy(ctx, hf, NULL, 0, &need, dims);
    if (st != NB_ERR_BUFFER_TOO_SMALL)
        goto cleanup;
    nb_context_clear_error(ctx);
    if (headroom < 0 || headroom > NB_SPAN_MAX_HEIGHT) {
        nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: headroom must be 0..%d layers (got %d)", fn, NB_SPAN_MAX_HEIGHT, headroom);
        goto cleanup;
    }
    const int32_t layers = dims[1];
    dims[1] += headroom;
    /* A voxel index is 32 bits in the path search (and the words must fit a wasm32 heap). */
    const double voxels = (double)dims[0] * (double)dims[1] * (double)dims[2];
    if (voxels >= 4294967296.0) {
        nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: the grid would be %d x %d x %d voxels (%.0f); at most 2^32 - 1: use a larger "
                "cellSize or cellHeight", fn, dims[0], dims[1], dims[2], voxels);
        goto cleanup;
    }
    const size_t total = (size_t)((voxels + 31.0) / 32.0);
    words = (uint32_t*)calloc(total, sizeof(uint32_t));
    if (!words) {
        nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'occupancy' (%.0f bytes)", fn, (double)total * 4.0);
        goto cleanup;
    }
    int32_t mesh_dims[3];
    st = nb_heightfield_occupancy(ctx, hf, words, need, &need, mesh_dims);
    if (st != NB_OK || mesh_dims[1] != layers) {
        free(words);
        words = NULL;
        goto cleanup;
    }
    need = total;
    uint64_t filled = 0;
    if (fill_count >= 0) {
        int32_t* seeds = (int32_t*)malloc((size_t)(fill_count ? fill_count : 1) * 3 * sizeof(int32_t));
        if (!seeds) {
            nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'seeds' (%d)", fn, fill_count);
            st = NB_ERR_OUT_OF_MEMORY;
        } else {
            const float cell[3] = { hf->cell_size, hf->cell_height, hf->cell_size };
            for (int32_t i = 0; i < fill_count * 3 && st == NB_OK; ++i) {
                /* in double and clamped: a far point stays outside the grid instead of wrapping */
                const double v = floor(((double)fill[i] - hf->bmin[i % 3]) / cell[i % 3]);
                seeds[i] = (int32_t)(v < -1.0 ? -1.0 : v > 2147483647.0 ? 2147483647.0 : v);
                if (seeds[i] < 0 || seeds[i] >= dims[i % 3]) {
                    const int32_t k = i % 3, p = i / 3;
                    st = nb_fail(ctx, NB_ERR_INVALID_ARG,
                                 "%s: options.fillEnclosed[%d] (%g, %g, %g) lies outside the voxel grid (%c %g..%g)", fn,
                                 p, (double)fill[3 * p], (double)fill[3 * p + 1], (double)fill[3 * p + 2], "xyz"[k],
                                 (double)hf->bmin[k], (double)hf->bmin[k] + (double)dims[k] * cell[k]);
                }
            }
            for (int32_t p = 0; p < fill_count && st == NB_OK; ++p)
                if (free_seed(words, dims, seeds + 3 * p))
                    st = nb_fail(ctx, NB_ERR_INVALID_ARG,
                                 "%s: options.fillEnclosed[%d] (%g, %g, %g) is inside solid voxels (its voxel and the "
                                 "one above it): a seed must be in the open space to keep",
                                 fn, p, (double)fill[3 * p], (double)fill[3 * p + 1], (double)fill[3 * p + 2]);
            if (st == NB_OK)
                st = nb_voxel_fill_enclosed(ctx, words, dims, seeds, (uint32_t)fill_count, &filled);
            free(seeds);
        }
        if (st != NB_OK) {
            free(words);
            words = NULL;
            goto cleanup;
        }
    }
    for (int k = 0; k < 3; ++k) {
        info[VINFO_ORIGIN + k] = hf->bmin[k];
        info[VINFO_DIMS + k] = dims[k];
    }
    info[VINFO_CELL_SIZE] = hf->cell_size;
    info[VINFO_CELL_HEIGHT] = hf->cell_height;
    info[VINFO_WORDS] = (double)need;
    info[VINFO_FILLED] = (double)filled;
cleanup:
    nb_bake_result_release(ctx, &result);
    return words;
}

EMSCRIPTEN_KEEPALIVE nb_voxel_query* nbw_voxel_query_create(nb_context* ctx, uint32_t max_nodes)
{
    nb_voxel_query* q = NULL;
    return nb_voxel_query_create(ctx, max_nodes, &q) == NB_OK ? q : NULL;
}

EMSCRIPTEN_KEEPALIVE void nbw_voxel_query_destroy(nb_context* ctx, nb_voxel_query* q) { nb_voxel_query_destroy(ctx, q); }

/* Empties q's pool's slots for about max_ms; returns how many are left (0: a search begins without emptying any). */
EMSCRIPTEN_KEEPALIVE uint32_t nbw_voxel_query_reset_ms(nb_voxel_query* q, double max_ms)
{
    return nb_voxel_query_reset_ms(q, max_ms);
}

/* Layout of nbw_voxel_find_path's int32 arguments (web/src/wasm.ts writes them by the same numbers). */
enum {
    VA_DIMS = 0, /* 3 */
    VA_MOVE = 3,
    VA_HEIGHT = 4,
    VA_RADIUS = 5,
    VA_CLIMB = 6,
    VA_SMOOTH = 7,
    VA_START = 8,  /* 3: the voxel the start point is in (may be outside the grid) */
    VA_END = 11,   /* 3 */
    VA_SEARCH = 14, /* how far from those voxels to look for a place the agent can be [voxels, Chebyshev] */
    VA_COUNT = 15
};

/* Layout of the int32 results (web/src/wasm.ts reads them by the same numbers). */
enum {
    VO_COUNT = 0,   /* path voxels written (nbw_voxel_path_end) */
    VO_STATUS = 1,  /* NB_PATH_* (nbw_voxel_path_end) */
    VO_START = 2,   /* 3: the start voxel used (nbw_voxel_path_begin) */
    VO_END = 5,     /* 3: the end voxel used */
    VO_EXHAUSTED = 8, /* 1 when the node pool ran out (nbw_voxel_path_end) */
    VO_NODES = 9,   /* search nodes used (nbw_voxel_path_end) */
    VO_STARTED = 10, /* 1 when a search began; 0 when start or end has no place near it (the path is then NONE) */
    VO_DONE = 11,   /* nbw_voxel_path_step: 1 once the search has ended */
    VO_LEN = 12
};

EMSCRIPTEN_KEEPALIVE int nbw_voxel_out_count(void) { return VO_LEN; }

/* The voxels start and end snap to (the nearest within search_radius [world]; args[VA_SEARCH] voxels is the cube
 * around that sphere), then the start of the search
 * between them (nb_voxel_find_path_begin). words must stay allocated until nbw_voxel_path_end. Returns the status
 * of the first call that failed. */
EMSCRIPTEN_KEEPALIVE int nbw_voxel_path_begin(nb_voxel_query* q, const uint32_t* words, const int32_t* args,
                                              float cell_size, float cell_height, float heuristic_weight,
                                              float search_radius, int32_t* out)
{
    nb_voxel_grid grid;
    grid.words = words;
    memcpy(grid.dims, args + VA_DIMS, sizeof(grid.dims));
    grid.cell_size = cell_size;
    grid.cell_height = cell_height;
    nb_voxel_path_params params;
    params.move = args[VA_MOVE];
    params.agent_height = args[VA_HEIGHT];
    params.agent_radius = args[VA_RADIUS];
    params.max_climb = args[VA_CLIMB];
    params.smooth = args[VA_SMOOTH];
    params.heuristic_weight = heuristic_weight;
    memset(out, 0, VO_LEN * sizeof(int32_t));
    int found_start = 0, found_end = 0;
    const double max_d2 = (double)search_radius * (double)search_radius;
    nb_status st = nb_voxel_nearest_within(q, &grid, &params, args + VA_START, args[VA_SEARCH], max_d2, out + VO_START,
                                           &found_start);
    if (st != NB_OK)
        return (int)st;
    st = nb_voxel_nearest_within(q, &grid, &params, args + VA_END, args[VA_SEARCH], max_d2, out + VO_END, &found_end);
    if (st != NB_OK || !found_start || !found_end)
        return (int)st; /* (not started: no path) */
    st = nb_voxel_find_path_begin(q, &grid, &params, out + VO_START, out + VO_END);
    out[VO_STARTED] = st == NB_OK;
    return (int)st;
}

/* Expansions for about max_ms (> 0), else until the search ends; out[VO_DONE] = 1 once it has ended. */
EMSCRIPTEN_KEEPALIVE int nbw_voxel_path_step(nb_voxel_query* q, double max_ms, int32_t* out)
{
    int done = 0;
    const nb_status st = max_ms > 0.0 ? nb_voxel_find_path_step_ms(q, max_ms, &done)
                                      : nb_voxel_find_path_step(q, UINT32_MAX, &done);
    out[VO_DONE] = done;
    return (int)st;
}

/* The path (capacity voxels: the query's node count always suffices), its status and the pool's verdict. Ends the
 * search, finished or not. */
EMSCRIPTEN_KEEPALIVE int nbw_voxel_path_end(nb_voxel_query* q, int32_t* path, uint32_t capacity, int32_t* out)
{
    uint32_t count = 0;
    int status = NB_PATH_NONE;
    const nb_status st = nb_voxel_find_path_end(q, path, capacity, &count, &status);
    if (st != NB_OK)
        return (int)st;
    out[VO_COUNT] = (int32_t)count;
    out[VO_STATUS] = status;
    uint32_t nodes = 0;
    out[VO_EXHAUSTED] = nb_voxel_query_last_search(q, &nodes);
    out[VO_NODES] = (int32_t)nodes;
    return NB_OK;
}

#endif /* __EMSCRIPTEN__ */
