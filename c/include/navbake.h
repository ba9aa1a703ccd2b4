/*
 * navbake.h -- the one public header of the navbake C library.
 *
 * navbake turns a triangle soup into a navigation mesh (the "bake") and answers path queries on it.
 * This header is the documentation: every function says what it does, who owns what, how long results
 * live and which statuses it returns.
 *
 * Conventions
 *  - Every function that can fail returns an nb_status and, on failure, leaves a message in the context
 *    that names the function, the field and the value ("nb_config_resolve: cell_size must be > 0 (got -1)").
 *  - All memory is allocated through the context's allocator. Objects come in create/destroy pairs and
 *    destroy accepts NULL. Nothing is global: two contexts never share state.
 *  - Coordinates are in world units, y up. Grid quantities are in cells: x and z in multiples of
 *    cell_size from the grid's bmin, y in multiples of cell_height.
 *  - The bake stage structures (heightfield, compact heightfield, contours, polygon mesh, detail mesh) are
 *    plain, documented structs: read them freely (debug views, tests), change them only through the
 *    functions here.
 */
#ifndef NAVBAKE_H
#define NAVBAKE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NB_VERSION_MAJOR 0
#define NB_VERSION_MINOR 1
#define NB_VERSION_PATCH 0

/* ------------------------------------------------------------------------------------------------ */
/* Status codes                                                                                     */
/* ------------------------------------------------------------------------------------------------ */

/* One table generates the enum, nb_status_name() and nb_status_str(). */
#define NB_STATUS_TABLE(X)                                                                     \
    X(NB_OK, "success")                                                                        \
    X(NB_ERR_NULL_ARG, "a required pointer argument is NULL")                                  \
    X(NB_ERR_INVALID_ARG, "an argument is out of range")                                       \
    X(NB_ERR_INVALID_CONFIG, "a config field is out of range")                                 \
    X(NB_ERR_NONFINITE, "a coordinate is NaN or infinite")                                     \
    X(NB_ERR_INDEX_RANGE, "a vertex index is out of range")                                    \
    X(NB_ERR_EMPTY_MESH, "the mesh has no triangles, or none with an area")                    \
    X(NB_ERR_OUT_OF_MEMORY, "out of memory")                                                   \
    X(NB_ERR_TOO_LARGE, "the input is too large for the grid or the data format")              \
    X(NB_ERR_BUFFER_TOO_SMALL, "the output buffer is too small")                               \
    X(NB_ERR_CANCELLED, "cancelled by the progress callback")                                  \
    X(NB_ERR_CORRUPT, "the data is corrupt or truncated")                                      \
    X(NB_ERR_VERSION, "the data was written by an incompatible format version")                \
    X(NB_ERR_NOT_FOUND, "no such tile or polygon")                                             \
    X(NB_ERR_ALREADY_EXISTS, "a tile already occupies that position")

typedef enum nb_status {
#define NB_STATUS_ENUM_(name, str) name,
    NB_STATUS_TABLE(NB_STATUS_ENUM_)
#undef NB_STATUS_ENUM_
    NB_STATUS_COUNT
} nb_status;

/* "NB_ERR_OUT_OF_MEMORY" for NB_ERR_OUT_OF_MEMORY; "NB_UNKNOWN_STATUS" for values outside the table. */
const char* nb_status_name(nb_status status);
/* A one-line human description of the status ("out of memory"). */
const char* nb_status_str(nb_status status);

/* ------------------------------------------------------------------------------------------------ */
/* Context: allocator, last error, progress                                                         */
/* ------------------------------------------------------------------------------------------------ */

/* Allocator hooks. alloc returns NULL on failure (never aborts); free accepts NULL. Both zero = malloc/free.
 * Memory returned by alloc must be aligned for any type (like malloc). */
typedef struct nb_allocator {
    void* (*alloc)(void* user, size_t size);
    void (*free)(void* user, void* ptr);
    void* user;
} nb_allocator;

/* Bake stages, in pipeline order. Used to stop a bake early, in progress reports and in timings. */
typedef enum nb_stage {
    NB_STAGE_ALL = 0,   /* as a stop-after value: run the whole pipeline */
    NB_STAGE_RASTERIZE, /* walkable marking by slope + rasterization into the solid heightfield */
    NB_STAGE_FILTER,    /* low hanging obstacles, ledges, low ceilings */
    NB_STAGE_COMPACT,   /* compact heightfield with neighbour links */
    NB_STAGE_ERODE,     /* erosion by agent radius */
    NB_STAGE_AREAS,     /* median area filter + area volumes */
    NB_STAGE_REGIONS,   /* distance field + region partition */
    NB_STAGE_CONTOURS,  /* region outlines */
    NB_STAGE_POLYMESH,  /* convex polygons */
    NB_STAGE_DETAIL,    /* detail height mesh */
    NB_STAGE_COUNT
} nb_stage;

/* Progress callback: called between and inside stages. Return nonzero to cancel: the running call then
 * frees what it allocated and returns NB_ERR_CANCELLED. */
typedef int (*nb_progress_fn)(void* user, nb_stage stage, uint32_t done, uint32_t total);

typedef struct nb_context_desc {
    nb_allocator allocator;  /* zero = malloc/free */
    nb_progress_fn progress; /* optional */
    void* progress_user;
} nb_context_desc;

typedef struct nb_context nb_context;

/* Creates a context (allocated with desc->allocator). desc may be NULL (defaults). Returns NULL when the
 * allocator fails, or when it is half set (alloc without free, or free without alloc). A function given a NULL context where it needs one (to allocate) returns NB_ERR_NULL_ARG;
 * the few that need none (validation, nb_config_resolve, ...) run without it, keeping no message. */
nb_context* nb_context_create(const nb_context_desc* desc);
void nb_context_destroy(nb_context* ctx);
/* Status and message of the last failed call on this context (NB_OK and "" when none failed since
 * nb_context_clear_error). The message lives until the next failing call or the context's destruction. */
nb_status nb_context_status(const nb_context* ctx);
const char* nb_context_message(const nb_context* ctx);
void nb_context_clear_error(nb_context* ctx);
/* Replaces the progress callback (NULL removes it). */
void nb_context_set_progress(nb_context* ctx, nb_progress_fn progress, void* user);

/* ------------------------------------------------------------------------------------------------ */
/* Bake configuration                                                                               */
/* ------------------------------------------------------------------------------------------------ */

typedef enum nb_partition {
    NB_PARTITION_DEFAULT = 0, /* = watershed */
    NB_PARTITION_WATERSHED = 1,
    NB_PARTITION_MONOTONE = 2,
    NB_PARTITION_LAYERS = 3,
    NB_PARTITION_WAVEFRONT = 4 /* few large convex regions: high-order polygons with verts_per_poly up to 12 */
} nb_partition;

/* Fields where zero is a meaningful value take NB_ZERO to ask for zero explicitly (plain 0 = default). */
#define NB_ZERO (-1.0f)

/* The bake configuration. Zero means default for every field; nb_config_resolve fills the defaults and
 * validates. Defaults are those of the reference (recastnavigation's demo). */
typedef struct nb_config {
    /* grid */
    float cell_size;   /* [world] > 0, <= 1000. Horizontal voxel size. Default 0.3 */
    float cell_height; /* [world] > 0, <= 1000. Vertical voxel size. Default 0.2 */
    /* agent */
    float agent_height;    /* [world] > 0, at most 255 cells. Minimum floor-to-ceiling clearance. Default 2.0 */
    float agent_radius;    /* [world] >= 0 (NB_ZERO for 0), at most 127 cells. Erosion from walls. Default 0.6 */
    float agent_max_climb; /* [world] >= 0 (NB_ZERO for 0), at most 255 cells. Max step height. Default 0.9 */
    float agent_max_slope; /* [degrees] 0 < s < 90 (NB_ZERO for 0). Max walkable slope. Default 45 */
    /* regions */
    float region_min_size;   /* [cells, side] >= 0 (NB_ZERO for 0). Smaller islands are dropped. Default 8 */
    float region_merge_size; /* [cells, side] >= 0 (NB_ZERO for 0). Smaller regions merge. Default 20 */
    /* contours and polygons */
    float edge_max_len;   /* [world] >= 0 (NB_ZERO = no limit). Longer outline edges are split. Default 12 */
    float edge_max_error; /* [cells] >= 0 (NB_ZERO for 0). Outline simplification tolerance. Default 1.3 */
    int32_t verts_per_poly; /* 3..12. Max vertices per convex polygon. Default 6 */
    /* detail mesh */
    float detail_sample_dist;      /* [world] 0 or 0.9 cell_size..1e6 (NB_ZERO = no sampling). Default 1.8 */
    float detail_sample_max_error; /* [world] 0..1e6 (NB_ZERO for 0). Max height error. Default 0.2 */
    /* partition and tiles */
    nb_partition partition; /* Default NB_PARTITION_WATERSHED */
    int32_t tile_size;      /* [cells] 0 = one tile (solo bake); else 16..4096 */
} nb_config;

/* Grid quantities derived from a resolved config (what the stages take). */
typedef struct nb_config_cells {
    int32_t walkable_height;   /* ceil(agent_height / cell_height) */
    int32_t walkable_climb;    /* floor(agent_max_climb / cell_height) */
    int32_t walkable_radius;   /* ceil(agent_radius / cell_size) */
    int32_t max_edge_len;      /* (int)(edge_max_len / cell_size) */
    int32_t min_region_area;   /* region_min_size^2 */
    int32_t merge_region_area; /* region_merge_size^2 */
} nb_config_cells;

/* Fills `out` with `in` (NULL = all defaults) and its defaults, then validates every field. On failure
 * returns NB_ERR_INVALID_CONFIG (or NB_ERR_NONFINITE for NaN/inf) with a message naming the field and its
 * value, and `out` holds the defaults. `in` and `out` may alias. `cells` (optional) receives the derived
 * grid quantities. */
nb_status nb_config_resolve(nb_context* ctx, const nb_config* in, nb_config* out, nb_config_cells* cells);

/* Generic access to the config fields by index (for bindings and command-line flags). Fields are listed in
 * struct order; names are the struct's ("cell_size"). Values are doubles (enums and ints included). */
int nb_config_field_count(void);
const char* nb_config_field_name(int index); /* NULL when out of range */
int nb_config_field_index(const char* name); /* accepts '-' for '_' ("cell-size"); -1 when unknown */
double nb_config_get(const nb_config* config, int index);
void nb_config_set(nb_config* config, int index, double value); /* ignored when index is out of range */
double nb_config_default(int index);

/* ------------------------------------------------------------------------------------------------ */
/* Area ids                                                                                         */
/* ------------------------------------------------------------------------------------------------ */

#define NB_NULL_AREA 0     /* not walkable */
#define NB_WALKABLE_AREA 63 /* the default walkable area; 1..63 are user areas, higher wins on overlap */

/* ------------------------------------------------------------------------------------------------ */
/* Solid heightfield (rasterized voxels)                                                            */
/* ------------------------------------------------------------------------------------------------ */

#define NB_SPAN_HEIGHT_BITS 13
#define NB_SPAN_MAX_HEIGHT ((1 << NB_SPAN_HEIGHT_BITS) - 1) /* 8191 cells */

/* A solid span: voxels [smin, smax) of one column are solid; smax is the walkable floor it offers. */
typedef struct nb_span {
    uint32_t smin : 13;
    uint32_t smax : 13;
    uint32_t area : 6; /* NB_NULL_AREA or an area id */
    uint32_t next;     /* index of the next span up the column in `spans`, 0 = none */
} nb_span;

typedef struct nb_heightfield {
    int32_t width, height; /* columns along x and z */
    float bmin[3], bmax[3];
    float cell_size, cell_height;
    uint32_t* columns;   /* width*height: index of the lowest span of column x + z*width, 0 = empty */
    nb_span* spans;      /* span pool; index 0 is unused */
    uint32_t span_capacity;
    uint32_t span_top;   /* pool entries handed out so far (including index 0) */
    uint32_t free_head;  /* freed pool entries, linked through next */
    uint32_t span_count; /* live spans */
    uint32_t* resume;    /* internal: per column, the span added last (where an insertion above it starts), made
                          * the first time one walks past more than a few spans (stacked levels), else NULL */
} nb_heightfield;

/* Creates an empty heightfield of width x height columns over the box [bmin, bmax]. Fails with
 * NB_ERR_INVALID_ARG for non-positive or infinite sizes or an inverted box, NB_ERR_NONFINITE for a box corner
 * that is not finite, and NB_ERR_TOO_LARGE when width*height exceeds 2^28 columns. */
nb_status nb_heightfield_create(nb_context* ctx, int32_t width, int32_t height, const float bmin[3],
                                const float bmax[3], float cell_size, float cell_height, nb_heightfield** out);
void nb_heightfield_destroy(nb_context* ctx, nb_heightfield* hf);

/* Grid size covering [bmin, bmax]: (int)((bmax - bmin) / cell_size + 0.5) along x and z. */
void nb_calc_grid_size(const float bmin[3], const float bmax[3], float cell_size, int32_t* width, int32_t* height);

/* Sets areas[i] to NB_NULL_AREA for triangles steeper than max_slope_deg (and degenerate ones) and leaves
 * the others as they are (callers usually fill areas with NB_WALKABLE_AREA first). */
void nb_clear_unwalkable_triangles(float max_slope_deg, const float* verts, const uint32_t* tris,
                                   uint32_t tri_count, uint8_t* areas);

/* Rasterizes triangles (tris NULL = consecutive vertex triples) into hf. Each triangle is clipped to the
 * cell columns it covers; each piece adds a solid span [floor(ymin), ceil(ymax)) that merges with spans it
 * overlaps or touches. Triangles with no area (corners in a line, to within float rounding: see
 * nb_triangle_has_area) are skipped: they have no surface. When the merged tops lie within flag_merge_threshold cells the higher area id is
 * kept. Inputs are not validated here (nb_bake validates them). Statuses: NB_OK, NB_ERR_NULL_ARG,
 * NB_ERR_OUT_OF_MEMORY, NB_ERR_TOO_LARGE (more than 2^31 spans). */
nb_status nb_rasterize_triangles(nb_context* ctx, const float* verts, uint32_t vert_count, const uint32_t* tris,
                                 const uint8_t* areas, uint32_t tri_count, nb_heightfield* hf,
                                 int32_t flag_merge_threshold);
/* 1 when triangle abc has an area: the sine of its angle at a is above 1e-6 (0 for corners in a line to within
 * float rounding, or two corners the same). */
int nb_triangle_has_area(const float a[3], const float b[3], const float c[3]);

/* Adds one span by hand (tests, tools). Statuses as nb_rasterize_triangles, NB_ERR_INVALID_ARG for a cell
 * outside the grid or smin >= smax. */
nb_status nb_heightfield_add_span(nb_context* ctx, nb_heightfield* hf, int32_t x, int32_t z, uint32_t smin,
                                  uint32_t smax, uint8_t area, int32_t flag_merge_threshold);

/* Filters (seed 002). All only change area ids; no span is removed.
 * low hanging obstacles: an unwalkable span whose top is within walkable_climb above a walkable span's top
 *   below it becomes walkable (curbs, stair steps).
 * ledges: a walkable span with a drop of more than walkable_climb to a reachable neighbour floor, or whose
 *   reachable neighbour floors differ by more than walkable_climb, becomes unwalkable.
 * low height: a walkable span with less than walkable_height free cells above it becomes unwalkable. */
void nb_filter_low_hanging_obstacles(int32_t walkable_climb, nb_heightfield* hf);
void nb_filter_ledge_spans(int32_t walkable_height, int32_t walkable_climb, nb_heightfield* hf);
void nb_filter_low_height_spans(int32_t walkable_height, nb_heightfield* hf);
/* The three above in their order (low hanging obstacles, ledges, low height) with the same result, in one pass
 * over the columns: what the bake runs. */
void nb_filter_walkable(int32_t walkable_height, int32_t walkable_climb, nb_heightfield* hf);

/* Dense occupancy of the solid heightfield: 1 bit per voxel, 32 voxels per uint32.
 * Size: dims = {width, depth, height} where depth = the number of cell_height layers between bmin[1] and
 * bmax[1], ceil((bmax[1] - bmin[1]) / cell_height), or up to the highest span top where one reaches above that (a
 * surface exactly at bmax[1] rasterizes into the layer above it); at most NB_SPAN_MAX_HEIGHT.
 * Layout: voxel (x, y, z) -- column x, layer y (from bmin[1] up), row z -- is bit (i & 31) of word i >> 5,
 * with i = x + width * (z + height * y): x fastest, then z, then y, so each horizontal slice is contiguous.
 * Bit set = solid (inside some span [smin, smax)). Unused bits of the last word are 0.
 * With `words` NULL or word_count too small returns NB_ERR_BUFFER_TOO_SMALL and sets *words_needed. */
nb_status nb_heightfield_occupancy(nb_context* ctx, const nb_heightfield* hf, uint32_t* words, size_t word_count,
                                   size_t* words_needed, int32_t dims[3]);

/* Makes solid every free voxel of an occupancy grid (layout as above; dims x, y, z, product below 2^32) that cannot
 * be reached through free voxels, moving between face neighbours, from outside the grid or from one of the
 * seed_count seeds (x, y, z voxels inside the grid; a solid one reaches nothing): the inside of closed meshes,
 * which rasterization leaves empty. Levels whose outer walls close the grid in need a seed in their open space.
 * *filled (optional) receives the voxels made solid. On failure (NB_ERR_INVALID_ARG, NB_ERR_OUT_OF_MEMORY) the
 * words are unchanged. */
nb_status nb_voxel_fill_enclosed(nb_context* ctx, uint32_t* words, const int32_t dims[3], const int32_t* seeds,
                                 uint32_t seed_count, uint64_t* filled);

/* ------------------------------------------------------------------------------------------------ */
/* 3D path search through voxels (walk, climb walls, fly) on an occupancy grid                      */
/* ------------------------------------------------------------------------------------------------ */

/* An occupancy grid as nb_heightfield_occupancy writes it (same layout and dims order: x, layers y, rows z). The
 * grid is only read; the caller keeps `words` alive while a search runs. Voxels outside the grid are free space
 * (the grid's bounds are not walls), but every voxel of a path lies inside it. */
typedef struct nb_voxel_grid {
    const uint32_t* words;
    int32_t dims[3];   /* x, y, z counts, each >= 1; their product below 2^32 */
    float cell_size;   /* [world] > 0: voxel size along x and z (moves cost their length in world units) */
    float cell_height; /* [world] > 0: voxel size along y */
} nb_voxel_grid;

typedef enum nb_voxel_move {
    /* Stands on the ground: the voxel below the box's centre column is solid. The centre column needs all
     * agent_height layers free; the rest of the footprint only the layers above ground the agent could step onto:
     * a column d columns from the centre (Chebyshev) from min(d * max_climb, agent_height - 1) layers above the feet
     * up, so slopes and stairs of at most max_climb per column fit any radius while anything as tall as the agent
     * is a wall. Moves to the 8 neighbouring columns, stepping up or down at most max_climb voxels, with headroom
     * over the lower end's column (no corner cutting past solid columns). Climb and fly need the whole box free. */
    NB_VOXEL_WALK = 0,
    /* Clings to any surface: some solid voxel touches the agent's box by a face (floor, wall, ceiling) or lies
     * diagonally below one of its bottom edges (to round a ledge); moves to the 26 neighbours. */
    NB_VOXEL_CLIMB = 1,
    /* Any free space; moves to the 26 neighbours. */
    NB_VOXEL_FLY = 2
} nb_voxel_move;

typedef struct nb_voxel_path_params {
    int32_t move;         /* nb_voxel_move */
    int32_t agent_height; /* [voxels] >= 1: the agent's box is agent_height voxels tall, from the voxel it is at up */
    int32_t agent_radius; /* [voxels] >= 0: and extends agent_radius voxels to each side along x and z */
    int32_t max_climb;    /* [voxels] >= 0: NB_VOXEL_WALK's largest step up or down between neighbouring columns
                             (and so the ground it allows under its body, see NB_VOXEL_WALK) */
    int32_t smooth;       /* 1: drop path voxels while the straight line between the kept ones stays where the agent
                             can be (see nb_voxel_find_path); 0: every voxel of the search */
    float heuristic_weight; /* 0 or 1: shortest paths. 1 < w <= 10: weighted A* (the heuristic times w): a path
                               costs at most w times the shortest and the search visits far fewer voxels where
                               obstacles stand between the ends */
} nb_voxel_path_params;

typedef struct nb_voxel_query nb_voxel_query;

/* A voxel query owns its node pool (max_nodes search nodes; 0 = 65536) and its hash of visited voxels; searches
 * never allocate. One query serves any grid. */
nb_status nb_voxel_query_create(nb_context* ctx, uint32_t max_nodes, nb_voxel_query** out);
void nb_voxel_query_destroy(nb_context* ctx, nb_voxel_query* q);

/* The voxel nearest to `voxel` (x, y, z; may lie outside the grid) where the agent can be under params, searching
 * the cube within max_distance voxels (Chebyshev); the nearest by Euclidean distance in world units wins, ties by
 * lowest index. *found = 0 (and out untouched) when there is none. A wide scan (a big agent in open space) may
 * allocate a table of solid counts over the cube and the agent's reach around it (at most 32 MB), freed before
 * it returns; when that allocation fails it reads the grid's bits instead, with the same answer. */
nb_status nb_voxel_nearest(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                           const int32_t voxel[3], int32_t max_distance, int32_t out[3], int* found);

/* A* (costs and heuristic in world units) from voxel start to voxel end, both places the agent can be (else
 * NB_ERR_INVALID_ARG naming which). path receives x, y, z per voxel from start to end; it needs at most max_nodes
 * voxels, so a buffer of that size always suffices (NB_ERR_BUFFER_TOO_SMALL with *path_count = the count needed
 * otherwise). *status: NB_PATH_COMPLETE, or NB_PATH_PARTIAL when the end cannot be reached or the node pool ran
 * out first: the path then ends at the reached voxel nearest the end. With params->smooth the path keeps only the
 * voxels where it turns: a straight segment between two kept voxels passes only through voxels where the agent
 * can be (for walk: through neighbouring columns within max_climb of each other). */
nb_status nb_voxel_find_path(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                             const int32_t start[3], const int32_t end[3], int32_t* path, uint32_t path_capacity,
                             uint32_t* path_count, int* status);

/* The same search in slices, so that a caller can spread a long one over several frames (a browser's main thread):
 * _begin checks the arguments as nb_voxel_find_path does and starts; each _step expands at most max_expansions
 * search nodes (*done = 1 once the search has ended: end reached, nothing left to expand, or the pool full); _end
 * writes the path as nb_voxel_find_path does and frees the query for the next search. Begin, steps until done and
 * end give exactly nb_voxel_find_path's path, whatever the slice sizes. _end may come before *done: the search
 * stops there, and the path is the one a pool that ran out at that point gives (PARTIAL to the reached voxel
 * nearest the end, or COMPLETE if the end was reached). The grid's words must stay alive and unchanged until _end.
 * A new _begin or nb_voxel_find_path abandons a search in progress; _step and _end without one are
 * NB_ERR_INVALID_ARG. */
nb_status nb_voxel_find_path_begin(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                                   const int32_t start[3], const int32_t end[3]);
nb_status nb_voxel_find_path_step(nb_voxel_query* q, uint32_t max_expansions, int* done);
nb_status nb_voxel_find_path_end(nb_voxel_query* q, int32_t* path, uint32_t path_capacity, uint32_t* path_count,
                                 int* status);

/* About the query's last search (nb_voxel_find_path, or a sliced one once ended): 1 when its node pool ran out
 * before the search ended (a PARTIAL path may then reach further with a larger pool; a COMPLETE one may not be the
 * shortest), else 0 (also before any search, and after one that failed on its arguments). nodes_used (optional)
 * receives the search nodes it used. */
int nb_voxel_query_last_search(const nb_voxel_query* q, uint32_t* nodes_used);

/* ------------------------------------------------------------------------------------------------ */
/* Compact heightfield (open spans with neighbour links)                                            */
/* ------------------------------------------------------------------------------------------------ */

#define NB_NOT_CONNECTED 0x3f /* value of a direction in nb_compact_span.con without a neighbour */
#define NB_BORDER_REG 0x8000  /* region flag: span belongs to the tile border */

typedef struct nb_compact_cell {
    uint32_t index; /* first span of the column in `spans` */
    uint32_t count; /* spans in the column */
} nb_compact_cell;

typedef struct nb_compact_span {
    uint16_t y;        /* floor [cells] */
    uint16_t reg;      /* region id, 0 = none (set by the region stage) */
    uint32_t con : 24; /* 4 x 6 bits: neighbour's index within its column per direction, NB_NOT_CONNECTED */
    uint32_t h : 8;    /* free cells above the floor, clamped to 255 */
} nb_compact_span;

/* A conversion to uint32_t in these inline helpers: static_cast in C++ (builds with -Wold-style-cast stay quiet). */
#ifdef __cplusplus
#define NB_U32_(v) static_cast<uint32_t>(v)
#else
#define NB_U32_(v) ((uint32_t)(v))
#endif

/* Directions: 0 = -x, 1 = +z, 2 = +x, 3 = -z. */
/* Branch-free and table-free: lookup tables cost a memory load per call in wasm (measured 1.5x slower
 * filters). -1, 0, 1, 0 for x and 0, 1, 0, -1 for z. */
static inline int nb_dir_offset_x(int dir) { return ((dir & 1) ? 0 : (dir & 3) - 1); }
static inline int nb_dir_offset_z(int dir) { return ((dir & 1) ? 2 - (dir & 3) : 0); }
/* (con, a 24-bit field, reads as an int: no cast needed, so that C++ builds with -Wold-style-cast stay quiet) */
static inline int nb_span_con(const nb_compact_span* s, int dir) { return (s->con >> (dir * 6)) & 0x3f; }
static inline void nb_span_set_con(nb_compact_span* s, int dir, int layer)
{
    /* (masked to the field's 24 bits: -Wconversion builds including this header stay quiet) */
    s->con = ((s->con & ~(0x3fu << (dir * 6))) | ((NB_U32_(layer) & 0x3fu) << (dir * 6))) & 0xffffffu;
}

typedef struct nb_compact_heightfield {
    int32_t width, height;                  /* columns along x and z */
    uint32_t span_count;
    int32_t walkable_height, walkable_climb; /* [cells] used for the links */
    int32_t border_size;                    /* [cells] tile border (0 for a solo bake) */
    uint16_t max_distance;                  /* largest distance before the blur, >= every value in dist */
    uint16_t max_regions;                   /* region ids are 1..max_regions-1 after the region stage */
    float bmin[3], bmax[3];
    float cell_size, cell_height;
    nb_compact_cell* cells; /* width*height */
    nb_compact_span* spans; /* span_count */
    uint8_t* areas;         /* span_count area ids */
    uint16_t* dist;         /* span_count distances to the border, NULL until the distance field stage */
} nb_compact_heightfield;

/* Builds the compact heightfield of the walkable spans of hf. Two spans of neighbouring columns are linked
 * when their floors differ by at most walkable_climb and the overlap of their open space is at least
 * walkable_height. Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_OUT_OF_MEMORY. */
nb_status nb_compact_heightfield_build(nb_context* ctx, int32_t walkable_height, int32_t walkable_climb,
                                       const nb_heightfield* hf, nb_compact_heightfield** out);
void nb_compact_heightfield_destroy(nb_context* ctx, nb_compact_heightfield* chf);

/* ------------------------------------------------------------------------------------------------ */
/* Area marking                                                                                     */
/* ------------------------------------------------------------------------------------------------ */

/* Erodes the walkable area by radius cells from every border (a span without four walkable neighbours),
 * using a chamfer distance (2 straight, 3 diagonal). Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_OUT_OF_MEMORY. */
nb_status nb_erode_walkable_area(nb_context* ctx, int32_t radius, nb_compact_heightfield* chf);

/* Replaces each walkable span's area by the median of its 3x3 neighbourhood (missing neighbours count as
 * the span's own area). Cleans up area noise from per-triangle area ids. */
nb_status nb_median_filter_walkable_area(nb_context* ctx, nb_compact_heightfield* chf);

/* Area volumes: set the area id of the walkable spans whose floor lies inside the volume. */
typedef enum nb_volume_type { NB_VOLUME_BOX = 1, NB_VOLUME_CYLINDER = 2, NB_VOLUME_CONVEX = 3 } nb_volume_type;

typedef struct nb_volume {
    nb_volume_type type;
    uint8_t area; /* the area id to set: 0 (carve out) .. 63 */
    /* box: */
    float bmin[3], bmax[3];
    /* cylinder (vertical, base centre at `center`): */
    float center[3], radius, height;
    /* prism: polygon in xz (verts are xyz triples, y ignored), between ymin and ymax; any simple polygon works,
     * convex or not (inside by the even-odd rule); points all in a line enclose nothing: */
    const float* verts;
    uint32_t vert_count;
    float ymin, ymax;
} nb_volume;

/* Marks one volume. A span is inside when its cell centre is inside the volume's footprint and its floor
 * lies within the volume's height range. Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG (unknown
 * type, area > 63, negative size, fewer than 3 convex vertices), NB_ERR_NONFINITE. */
nb_status nb_mark_volume(nb_context* ctx, const nb_volume* volume, nb_compact_heightfield* chf);

/* ------------------------------------------------------------------------------------------------ */
/* Distance field and regions                                                                       */
/* ------------------------------------------------------------------------------------------------ */

/* Two-pass chamfer distance to the region borders (2 straight, 3 diagonal), then a 3x3 box blur of the spans
 * farther than 2 (recastnavigation's); fills chf->dist and chf->max_distance (the largest distance before the
 * blur, the watershed's top level). A border span lacks one of four linked neighbours of its own area.
 * Replaces an earlier field. Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_OUT_OF_MEMORY (chf unchanged). */
nb_status nb_build_distance_field(nb_context* ctx, nb_compact_heightfield* chf);

/* Partition the walkable spans into regions (chf->spans[i].reg, chf->max_regions). border_size marks tile
 * borders as NB_BORDER_REG regions. Islands below min_region_area cells are dropped (unless they touch the
 * tile border), regions below merge_region_area merge into their smallest neighbour, ids are compacted: every
 * id 1..max_regions-1 is used, 0 = no region (unwalkable or dropped spans). Watershed needs the distance
 * field; layers never put two spans of one column in the same region. Statuses: NB_OK, NB_ERR_NULL_ARG,
 * NB_ERR_INVALID_ARG (a negative size, or no distance field for watershed), NB_ERR_OUT_OF_MEMORY,
 * NB_ERR_TOO_LARGE (more than 32767 regions), NB_ERR_CANCELLED (watershed asks the progress callback once per
 * level); on failure chf is unchanged. */
nb_status nb_build_regions_watershed(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                     int32_t min_region_area, int32_t merge_region_area);
nb_status nb_build_regions_monotone(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                    int32_t min_region_area, int32_t merge_region_area);
nb_status nb_build_regions_layers(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                  int32_t min_region_area);
/* Wavefront partition (seed 004): regions grow one at a time from the free span farthest from the walls (ties:
 * lowest span index), each kept digitally convex (every 17 consecutive rows and columns of it), with no two
 * spans of one column; fewer, larger convex regions than watershed or monotone, which polygonize into fewer
 * polygons when verts_per_poly allows (up to 12). Clean-up, statuses and tile borders as above; builds the
 * distance field first when chf->dist is NULL (it stays, even on failure), and asks the progress callback about
 * every 1/32 of the spans. */
nb_status nb_build_regions_wavefront(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                     int32_t min_region_area, int32_t merge_region_area);

/* ------------------------------------------------------------------------------------------------ */
/* Contours                                                                                         */
/* ------------------------------------------------------------------------------------------------ */

#define NB_CONTOUR_BORDER_VERTEX 0x10000 /* vertex flag: lies on a straight stretch of the tile border (the
                                            polygon stage removes it; the neighbouring tile has its own) */
#define NB_CONTOUR_AREA_BORDER 0x20000   /* vertex flag: the edge from it borders another area */
#define NB_CONTOUR_REG_MASK 0xffff       /* vertex low bits: region on the other side of the edge from this vertex
                                            to the next: 0 = wall (unwalkable or grid edge), else a region id,
                                            with NB_BORDER_REG set for a tile border region */

/* One region's outline. Vertices are grid corners (x, z in cells from the set's bmin, y = the highest floor of
 * the spans around the corner, in cells); the flags of vertex i describe the edge from vertex i to vertex i+1.
 * Winding (Recast's): sum over edges (x[i] * z[i-1] - x[i-1] * z[i]) > 0, i.e. clockwise when drawn with x to the
 * right and z up. A region's holes (pillars) are bridged into the outline: the polygon then visits the bridge
 * vertices twice (out to the hole and back), so it is weakly simple and its area is the outline's minus the
 * holes'. Every simplified vertex is also a raw vertex; raw_verts is bridged the same way. */
typedef struct nb_contour {
    int32_t* verts;     /* nverts x (x, y, z, flags) in cells, simplified; nverts >= 3 */
    int32_t nverts;
    int32_t* raw_verts; /* nraw_verts x (x, y, z, flags), the unsimplified outline, one point per cell edge */
    int32_t nraw_verts;
    uint16_t reg;
    uint8_t area;
} nb_contour;

typedef struct nb_contour_set {
    nb_contour* conts; /* one per region (a region cut in pieces gives one per piece) */
    int32_t nconts;
    float bmin[3], bmax[3];       /* the compact heightfield's, shrunk by the border in x and z */
    float cell_size, cell_height;
    int32_t width, height;        /* [cells] the compact heightfield's minus 2 * border_size: the tile proper */
    int32_t border_size;          /* [cells] vertices are shifted by -border_size in x and z */
    float max_error;
} nb_contour_set;

/* Traces and simplifies the region outlines of chf (regions 1.. without NB_BORDER_REG; spans of region 0 are
 * ignored). The outline keeps the points where the neighbouring region changes (so neighbours share vertices),
 * then along walls and area borders gets the raw point farthest from it until all lie within max_error
 * [cells, >= 0], then wall and area-border edges longer than max_edge_len [cells, 0 = no limit] are split.
 * Holes are merged into their outline; outlines left with fewer than 3 vertices are dropped.
 * Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG (negative or non-finite max_error, negative
 * max_edge_len, a border_size that does not fit the grid), NB_ERR_OUT_OF_MEMORY. */
nb_status nb_build_contours(nb_context* ctx, const nb_compact_heightfield* chf, float max_error,
                            int32_t max_edge_len, nb_contour_set** out);
void nb_contour_set_destroy(nb_context* ctx, nb_contour_set* cset);

/* ------------------------------------------------------------------------------------------------ */
/* Polygon mesh                                                                                     */
/* ------------------------------------------------------------------------------------------------ */

#define NB_MESH_NULL_IDX 0xffff   /* unused vertex slot / no neighbour */
#define NB_MAX_VERTS_PER_POLY 12

typedef struct nb_poly_mesh {
    uint16_t* verts; /* nverts x (x, y, z) in cells */
    uint16_t* polys; /* npolys x (2*nvp): nvp vertex indices (NB_MESH_NULL_IDX padded), then per edge the
                        neighbour polygon, NB_MESH_NULL_IDX for none, or 0x8000|side for a tile border edge
                        (side 0 = -x, 1 = +z, 2 = +x, 3 = -z) */
    uint16_t* regs;  /* npolys region ids */
    uint16_t* flags; /* npolys user flags (the bake sets 1 for every walkable polygon) */
    uint8_t* areas;  /* npolys area ids */
    int32_t nverts, npolys, max_polys, nvp;
    float bmin[3], bmax[3];
    float cell_size, cell_height;
    int32_t border_size;
    float max_edge_error;
} nb_poly_mesh;

/* Triangulates each contour and merges triangles into convex polygons of at most nvp vertices. Vertices of
 * all contours are welded (same x and z, y within 2 cells); tile-border vertices that are not needed are
 * removed; polygons are strictly convex and wind counter-clockwise seen from above (y up; with +x to the right,
 * +z points down). flags is 1 for polygons of a walkable area. *out (freed with nb_poly_mesh_destroy) is NULL
 * on failure. Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG (nvp outside 3..NB_MAX_VERTS_PER_POLY,
 * coordinates outside 0..65535), NB_ERR_TOO_LARGE (more than 65534 vertices or too many polygons to index),
 * NB_ERR_OUT_OF_MEMORY, NB_ERR_CANCELLED. */
nb_status nb_build_poly_mesh(nb_context* ctx, const nb_contour_set* cset, int32_t nvp, nb_poly_mesh** out);
void nb_poly_mesh_destroy(nb_context* ctx, nb_poly_mesh* mesh);

/* ------------------------------------------------------------------------------------------------ */
/* Detail mesh                                                                                      */
/* ------------------------------------------------------------------------------------------------ */

typedef struct nb_poly_mesh_detail {
    uint32_t* meshes; /* nmeshes x (vert base, vert count, tri base, tri count), one per polygon */
    float* verts;     /* nverts x (x, y, z) in world units; each polygon's own vertices first, in order, then
                         its edge samples, then its interior samples. y = bmin.y + floor * cell_height, the
                         mapping of the polygon vertices: the surface lies on the voxel floors */
    uint8_t* tris;    /* ntris x (a, b, c, edge flags): indices relative to the polygon's vert base, wound like
                         the polygon; flags hold 2 bits per edge (a-b, b-c, c-a), 1 = on the polygon outline */
    int32_t nmeshes, nverts, ntris;
} nb_poly_mesh_detail;

/* Samples the heights inside each polygon (sample_dist, max_error in world units; sample_dist 0 = only the
 * polygon's own vertices) and triangulates them: edges are sampled every sample_dist and kept where needed to
 * stay within max_error, then interior samples on a sample_dist grid are added, worst first, while the Delaunay
 * surface misses one by more than max_error (at most 127 vertices per polygon). Heights come from the spans of
 * the polygon's region in chf (then flooded outwards), so stacked floors do not mix. Statuses: NB_OK,
 * NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG (sample_dist not 0 and below 0.9 cell_size, negative max_error, nvp out
 * of 3..12, a polygon with < 3 vertices), NB_ERR_INDEX_RANGE (a polygon vertex index >= nverts),
 * NB_ERR_TOO_LARGE, NB_ERR_OUT_OF_MEMORY, NB_ERR_CANCELLED. */
nb_status nb_build_poly_mesh_detail(nb_context* ctx, const nb_poly_mesh* mesh, const nb_compact_heightfield* chf,
                                    float sample_dist, float sample_max_error, nb_poly_mesh_detail** out);
void nb_poly_mesh_detail_destroy(nb_context* ctx, nb_poly_mesh_detail* dmesh);

/* ------------------------------------------------------------------------------------------------ */
/* The bake: triangles in, all stages                                                               */
/* ------------------------------------------------------------------------------------------------ */

/* Input triangles. positions: vertex_count x (x, y, z). indices: triangle_count x 3 vertex indices, or NULL
 * for consecutive vertex triples (then triangle_count is vertex_count / 3). areas: optional per-triangle
 * area ids (0 = not walkable, 1..63); NULL = every triangle gets NB_WALKABLE_AREA. Triangles steeper than
 * agent_max_slope are never walkable. */
typedef struct nb_mesh {
    const float* positions;
    uint32_t vertex_count;
    const uint32_t* indices;
    uint32_t triangle_count;
    const uint8_t* areas;
} nb_mesh;

typedef struct nb_bake_input {
    nb_mesh mesh;
    const nb_volume* volumes; /* optional area volumes applied after erosion */
    uint32_t volume_count;
    /* optional explicit bounds (both or neither); NULL = the AABB of all mesh vertices */
    const float* bmin;
    const float* bmax;
    int32_t border_size; /* [cells] extra cells around the bounds of a tile; 0 for a solo bake */
} nb_bake_input;

/* Statistics of a bake: counts and per-stage milliseconds. One table gives the enum and the names.
 * "regions" is chf->max_regions (highest region id + 1), the figure the reference reports. */
#define NB_STAT_TABLE(X)                                                                   \
    X(NB_STAT_GRID_WIDTH, "grid_width")                                                    \
    X(NB_STAT_GRID_HEIGHT, "grid_height")                                                  \
    X(NB_STAT_HF_SPANS, "hf_spans")                                                        \
    X(NB_STAT_COMPACT_SPANS, "compact_spans")                                              \
    X(NB_STAT_WALKABLE_AFTER_ERODE, "walkable_after_erode")                                \
    X(NB_STAT_REGIONS, "regions")                                                          \
    X(NB_STAT_CONTOURS, "contours")                                                        \
    X(NB_STAT_POLYS, "polys")                                                              \
    X(NB_STAT_POLY_VERTS, "poly_verts")                                                    \
    X(NB_STAT_DETAIL_VERTS, "detail_verts")                                                \
    X(NB_STAT_DETAIL_TRIS, "detail_tris")                                                  \
    X(NB_STAT_MS_RASTERIZE, "rasterize")                                                   \
    X(NB_STAT_MS_FILTER, "filter")                                                         \
    X(NB_STAT_MS_COMPACT, "compact")                                                       \
    X(NB_STAT_MS_ERODE, "erode")                                                           \
    X(NB_STAT_MS_AREAS, "areas")                                                           \
    X(NB_STAT_MS_DISTANCE, "distance")                                                     \
    X(NB_STAT_MS_REGIONS, "regions")                                                       \
    X(NB_STAT_MS_CONTOURS, "contours")                                                     \
    X(NB_STAT_MS_POLYMESH, "polymesh")                                                     \
    X(NB_STAT_MS_DETAIL, "detail")                                                         \
    X(NB_STAT_MS_TOTAL, "total")

typedef enum nb_stat {
#define NB_STAT_ENUM_(name, str) name,
    NB_STAT_TABLE(NB_STAT_ENUM_)
#undef NB_STAT_ENUM_
    NB_STAT_COUNT
} nb_stat;
#define NB_STAT_FIRST_MS NB_STAT_MS_RASTERIZE

/* "hf_spans", ... ; the NB_STAT_MS_* names are the stage names ("rasterize") */
const char* nb_stat_name(nb_stat stat);

/* Which intermediate results nb_bake keeps in its result. The last stage's output is always kept, and so is
 * the polygon mesh once built (the detail mesh refers to its polygons). */
#define NB_KEEP_HEIGHTFIELD 1u
#define NB_KEEP_COMPACT 2u
#define NB_KEEP_CONTOURS 4u
#define NB_KEEP_ALL 0xffu

typedef struct nb_bake_result {
    nb_heightfield* heightfield;        /* solid voxels, after the filters */
    nb_compact_heightfield* compact;    /* after erosion and areas, with regions when they ran */
    nb_contour_set* contours;
    nb_poly_mesh* poly_mesh;
    nb_poly_mesh_detail* detail;
    nb_config config;                   /* the resolved config */
    double stats[NB_STAT_COUNT];        /* counts of the stages that ran, -1 for those that did not */
} nb_bake_result;

/* Runs the pipeline on `input` up to and including `stop_after` (NB_STAGE_ALL = every stage) and fills
 * `out`, which the caller releases with nb_bake_result_release. Validates everything first: NULL pointers
 * (NB_ERR_NULL_ARG), config (NB_ERR_INVALID_CONFIG), NaN/inf coordinates (NB_ERR_NONFINITE, naming the
 * vertex), indices out of range (NB_ERR_INDEX_RANGE, naming the triangle), no triangles, or (without explicit
 * bounds) none with an area (NB_ERR_EMPTY_MESH), a grid too big (NB_ERR_TOO_LARGE), area ids > 63, bad volumes. Then
 * NB_ERR_OUT_OF_MEMORY or NB_ERR_CANCELLED may come from the stages; on any failure `out` is left empty
 * (all pointers NULL) and nothing leaks. */
nb_status nb_bake(nb_context* ctx, const nb_bake_input* input, const nb_config* config, nb_stage stop_after,
                  unsigned keep, nb_bake_result* out);
/* Frees everything the result holds and zeroes it. Accepts a zeroed or already released result. */
void nb_bake_result_release(nb_context* ctx, nb_bake_result* result);

/* ================================================================================================ */
/* Runtime: tile data, navmesh, queries (the Detour half)                                           */
/* ================================================================================================ */

/* A polygon reference: salt | tile slot | polygon index (15 bits); 0 = no polygon. Slots are 1..max_tiles, in
 * as many bits as max_tiles needs (at most NB_TILE_BITS), and the salt takes the bits left: 16 for a navmesh of
 * one tile, 9 for 255 tiles, NB_SALT_BITS for 4095. A reference stays valid while its tile stays in the navmesh;
 * once the tile is removed or replaced its references are rejected (NB_ERR_NOT_FOUND): the slot's salt changes on
 * reuse, so a reference can only alias after 2^(salt bits) reuses of one slot. */
typedef uint32_t nb_poly_ref;
#define NB_POLY_BITS 15
#define NB_TILE_BITS 12 /* the widest slot field */
#define NB_SALT_BITS 5  /* the narrowest salt (max_tiles above 2047) */
#define NB_MAX_POLYS_PER_TILE (1 << NB_POLY_BITS) /* 32768 polygons, off-mesh links included */
#define NB_MAX_TILES ((1u << NB_TILE_BITS) - 1)  /* 4095 */
/* The largest magnitude of any coordinate, size or radius a tile or a navmesh file holds: float spacing there is 64
 * units, so no level lives beyond it, and query arithmetic on values this size (squares, cross products) stays
 * finite. nb_tile_build gives NB_ERR_TOO_LARGE beyond it, the loaders NB_ERR_CORRUPT, nb_navmesh_create
 * NB_ERR_INVALID_ARG. */
#define NB_MAX_COORD 1.0e9f

/* An off-mesh connection (a jump, a ladder, a teleporter): a link from `start` to `end` that paths may
 * take. Each end attaches to the nearest polygon within `radius` (in xz) and walkable_climb (in y). A link is
 * stored in the tile of its start, so the bakes (nb_bake_navmesh and its tile calls, the tile cache) refuse a link
 * whose start lies outside the level's xz bounds (the mesh's, or input->bmin/bmax; the far edges excluded) with
 * NB_ERR_INVALID_ARG naming it ("links[3]: start ... is outside the level's bounds ..."), whatever tile_size; a
 * start with no ground around it (even in a tile without triangles) is kept, unattached. */
typedef struct nb_offmesh_link {
    float start[3], end[3];
    float radius;          /* [world] > 0 */
    uint16_t flags;        /* polygon flags for include/exclude filters; 0 = 1 */
    uint8_t area;          /* area id 1..63 (costs); 0 = NB_WALKABLE_AREA */
    uint8_t bidirectional; /* 0 = start to end only, 1 = both ways */
    uint32_t user_id;
} nb_offmesh_link;

/* What a tile is made of. The tile's world bounds are the polygon mesh's bounds (without its border). */
typedef struct nb_tile_params {
    const nb_poly_mesh* poly_mesh;     /* required, npolys >= 0 */
    const nb_poly_mesh_detail* detail; /* optional: NULL = flat polygons */
    const nb_offmesh_link* links;      /* optional */
    uint32_t link_count;
    int32_t tile_x, tile_z;            /* grid position (0, 0 for a solo bake) */
    float walkable_height, walkable_radius, walkable_climb; /* [world] agent, recorded for queries */
} nb_tile_params;

/* Packs a tile into one self-describing little-endian blob (format in docs/FORMAT.md: magic, version,
 * sizes, CRC32, vertices, polygons, detail mesh, BV tree, off-mesh links). *data is allocated through ctx
 * and freed with nb_bytes_free; the same params give the same bytes. Off-mesh links are stored in the tile
 * whose xz bounds (inclusive) contain their start; the others are skipped. Statuses: NB_OK, NB_ERR_NULL_ARG,
 * NB_ERR_INVALID_ARG (nvp, vertex or neighbour codes, area ids, a detail mesh that does not fit the polygons,
 * a link's radius/area/bidirectional), NB_ERR_NONFINITE, NB_ERR_TOO_LARGE (more than NB_MAX_POLYS_PER_TILE
 * polygons or 65534 vertices, links included), NB_ERR_OUT_OF_MEMORY. */
nb_status nb_tile_build(nb_context* ctx, const nb_tile_params* params, uint8_t** data, size_t* size);
/* Checks a blob: magic, version, every size, count, offset and index, and the CRC. Never reads outside
 * [data, data + size). Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_CORRUPT, NB_ERR_VERSION. */
nb_status nb_tile_validate(nb_context* ctx, const uint8_t* data, size_t size);
/* Reads the grid position of a valid blob. */
nb_status nb_tile_position(nb_context* ctx, const uint8_t* data, size_t size, int32_t* tile_x, int32_t* tile_z);
/* Frees memory handed out by nb_tile_build, nb_navmesh_save and nb_navmesh_save_tile. Accepts NULL. */
void nb_bytes_free(nb_context* ctx, void* data);

/* Bakes triangles into one tile blob: nb_bake + nb_tile_build, with the agent sizes of the resolved config.
 * For a tiled world pass the tile's bounds and border in `input`, and its grid position. stats (optional)
 * receives the bake's statistics. Statuses: those of nb_bake and nb_tile_build. */
nb_status nb_bake_tile(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                       const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x, int32_t tile_z,
                       uint8_t** data, size_t* size, double stats[NB_STAT_COUNT]);

/* ---- navmesh: tiles on an (x, z) grid ---- */

typedef struct nb_navmesh nb_navmesh;


typedef struct nb_navmesh_params {
    float origin[3];             /* world position of tile (0, 0)'s minimum corner */
    float tile_width, tile_depth; /* [world] tile size along x and z (a solo bake: any positive value) */
    uint32_t max_tiles;          /* 1..NB_MAX_TILES; 0 = NB_MAX_TILES */
} nb_navmesh_params;

/* Bakes a whole navmesh in this thread: one tile when config->tile_size is 0, else a grid of tile_size x
 * tile_size-cell tiles over the mesh bounds, each baked with a border of walkable_radius + 3 cells from the
 * triangles overlapping it; tiles without polygons are skipped. Off-mesh links go to the tile holding their
 * start (a tile without triangles holding a start is baked with just its links), and land in whichever tile holds
 * their end (nb_navmesh_add_tile). Every link is checked before any work, named by its index: its fields, and its
 * start inside the level's bounds (see nb_offmesh_link); in a tiled bake a start within float rounding of a tile
 * edge that the two tiles' bounds would both or neither claim is refused too ("lies on a tile border"). The
 * navmesh's origin is the bounds' minimum corner. Statuses: those of nb_bake and nb_navmesh_add_tile,
 * NB_ERR_TOO_LARGE (more than NB_MAX_TILES tiles, a link coordinate beyond NB_MAX_COORD), NB_ERR_INVALID_ARG and
 * NB_ERR_NONFINITE (a link). */
nb_status nb_bake_navmesh(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                          const nb_offmesh_link* links, uint32_t link_count, nb_navmesh** out);
/* The tile grid nb_bake_navmesh uses: the navmesh params (origin = the bounds' minimum corner, tile size) and
 * the number of tiles along x and z (1 x 1 for a solo bake). Validates the mesh, bounds and config. */
nb_status nb_bake_grid(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                       nb_navmesh_params* params, int32_t* tiles_x, int32_t* tiles_z);
/* Bakes tile (tile_x, tile_z) of that grid exactly as nb_bake_navmesh does, for bakes spread over threads or
 * workers (each with its own context): tiles can be baked in any order and added in any order, the navmesh
 * saves to the same bytes. *data is NULL (with NB_OK) for a tile that nb_bake_navmesh leaves out (no polygons,
 * no links). links: the whole list, checked on every call as nb_bake_navmesh checks it (a bad link is refused
 * whichever tile is asked for). Pass the mesh bounds in input->bmin/bmax to spare each tile a scan of every
 * vertex. */
nb_status nb_bake_grid_tile(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                            const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x, int32_t tile_z,
                            uint8_t** data, size_t* size, double stats[NB_STAT_COUNT]);

/* Creates an empty navmesh. It keeps using ctx's allocator: pass the same ctx to every call on it, and
 * destroy it before the ctx. Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG (tile sizes <= 0, max_tiles
 * above NB_MAX_TILES), NB_ERR_NONFINITE, NB_ERR_OUT_OF_MEMORY. */
nb_status nb_navmesh_create(nb_context* ctx, const nb_navmesh_params* params, nb_navmesh** out);
void nb_navmesh_destroy(nb_context* ctx, nb_navmesh* nav);
/* Adds a tile (the blob is validated, then copied: the caller keeps its bytes). Its polygons are linked to
 * those of the four neighbouring tiles along the shared border (edges overlapping in xz within a small
 * tolerance and in y within the tiles' walkable_climb, both directions), and its off-mesh links are
 * attached: each end to the nearest ground polygon within the link's radius (xz) and walkable_climb (y), the
 * start in this tile, the end in the tile its end lies in, however far (whichever of the two is added second
 * makes that connection, and removing either undoes it). Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_CORRUPT, NB_ERR_VERSION,
 * NB_ERR_INVALID_ARG (a tile of another grid: its bounds lie outside its cell of this navmesh by more than half a
 * tile), NB_ERR_ALREADY_EXISTS (a tile at that position), NB_ERR_TOO_LARGE (max_tiles reached), NB_ERR_OUT_OF_MEMORY; on failure the navmesh is
 * unchanged. */
nb_status nb_navmesh_add_tile(nb_context* ctx, nb_navmesh* nav, const uint8_t* data, size_t size);
/* Removes the tile at (tile_x, tile_z) and unlinks its neighbours (border links and off-mesh links into it); its
 * refs become stale. NB_ERR_NULL_ARG, NB_ERR_NOT_FOUND when there is none. */
nb_status nb_navmesh_remove_tile(nb_context* ctx, nb_navmesh* nav, int32_t tile_x, int32_t tile_z);
/* The blob of a tile (owned by the navmesh, valid until the tile is removed). NB_ERR_NULL_ARG, NB_ERR_NOT_FOUND
 * (no message: there is no context). */
nb_status nb_navmesh_tile_data(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z, const uint8_t** data,
                               size_t* size);
uint32_t nb_navmesh_tile_count(const nb_navmesh* nav);
/* Polygons over all tiles, as nb_navmesh_poly_refs lists them: a query with this many max_nodes never runs out. */
uint32_t nb_navmesh_poly_count(const nb_navmesh* nav);
const nb_navmesh_params* nb_navmesh_get_params(const nb_navmesh* nav);
/* Polygon accessors for drawing and tests. NB_ERR_NOT_FOUND for a stale or invalid ref (no message: there is no
 * context). verts receives up to NB_MAX_VERTS_PER_POLY xyz triples (off-mesh links: their two end points); every
 * output is optional. */
nb_status nb_navmesh_poly(const nb_navmesh* nav, nb_poly_ref ref, float* verts, int32_t* vert_count,
                          uint8_t* area, uint16_t* flags, int* is_offmesh);
/* The link an off-mesh polygon stands for, as given to the bake (start, end, radius, bidirectional, user_id),
 * with the polygon's current area and flags; attached (optional): [start, end], 1 where that end found a ground
 * polygon within the link's radius (in a loaded tile), 0 where it did not (paths cannot use the link then).
 * NB_ERR_NOT_FOUND for a stale ref or a polygon that is not a link. */
nb_status nb_navmesh_offmesh_link(const nb_navmesh* nav, nb_poly_ref ref, nb_offmesh_link* out, int attached[2]);
/* Every polygon ref of the navmesh, in tile-slot order then polygon order. With refs NULL or capacity too
 * small: NB_ERR_BUFFER_TOO_SMALL and *count = the number needed. */
nb_status nb_navmesh_poly_refs(nb_context* ctx, const nb_navmesh* nav, nb_poly_ref* refs, uint32_t capacity,
                               uint32_t* count);
/* Changes a polygon's flags (e.g. to close a door); the tile's blob and checksum follow, so nb_navmesh_tile_data
 * and nb_navmesh_save hand out the new flags. NB_ERR_NULL_ARG, NB_ERR_NOT_FOUND. */
nb_status nb_navmesh_set_poly_flags(nb_context* ctx, nb_navmesh* nav, nb_poly_ref ref, uint16_t flags);

/* Save/load a whole navmesh: a header (magic, version, params, tile count, CRC) followed by each tile blob,
 * length-prefixed, so a game can stream single tiles. Tiles are written sorted by (tile_z, tile_x): the same
 * navmesh gives the same bytes whatever order its tiles were added in, and save -> load -> save is
 * byte-identical. The loader checks every count, offset and checksum and rebuilds the links: a corrupt or
 * truncated file gives NB_ERR_CORRUPT (or NB_ERR_VERSION) and never reads out of bounds.
 * save: NB_OK, NB_ERR_NULL_ARG, NB_ERR_TOO_LARGE, NB_ERR_OUT_OF_MEMORY (*data freed with nb_bytes_free).
 * load: NB_OK, NB_ERR_NULL_ARG, NB_ERR_CORRUPT, NB_ERR_VERSION, NB_ERR_OUT_OF_MEMORY; *out is NULL on failure. */
nb_status nb_navmesh_save(nb_context* ctx, const nb_navmesh* nav, uint8_t** data, size_t* size);
nb_status nb_navmesh_load(nb_context* ctx, const uint8_t* data, size_t size, nb_navmesh** out);

/* ---- queries ----
 * Every point, centre and half-extents vector a query takes is checked first: NB_ERR_NULL_ARG, NB_ERR_NONFINITE
 * (NaN or infinite), NB_ERR_TOO_LARGE (a coordinate beyond NB_MAX_COORD), naming the argument. */

/* Which polygons a query may use and what each area costs (cost multiplies the distance travelled). */
typedef struct nb_query_filter {
    float area_cost[64];    /* >= 0; default 1 */
    uint16_t include_flags; /* a polygon is usable when (flags & include) != 0 ... */
    uint16_t exclude_flags; /* ... and (flags & exclude) == 0 */
} nb_query_filter;
void nb_query_filter_init(nb_query_filter* filter); /* costs 1, include 0xffff, exclude 0 */

typedef struct nb_query nb_query;

/* A query object owns its node pool (max_nodes search nodes; 0 = one per polygon of the navmesh as it is now and
 * one more per tile side a polygon can be entered across, rounded up to a power of two, at least 2048; A* never runs
 * out with at least one per polygon) and scratch; queries never allocate. It reads the
 * navmesh: keep the navmesh alive and do not change it while a query runs (tiles added later may need a bigger
 * pool: create a new query). */
nb_status nb_query_create(nb_context* ctx, const nb_navmesh* nav, uint32_t max_nodes, nb_query** out);
void nb_query_destroy(nb_context* ctx, nb_query* q);

/* Every query reports failures (NULL args, NaN/inf input, invalid or stale refs) through the context the query
 * was created with; "nothing found" is not a failure: refs come back 0 and counts 0. */

/* Nearest polygon whose bounds (its vertices' and its detail surface's) overlap the box center +- half_extents;
 * *ref = 0 when none. nearest (optional) receives the closest point on it to center (center itself when none): the
 * box selects polygons, the point can lie outside it. A point within walkable_climb above or below a polygon counts
 * as on it (distance 0). Off-mesh links are never returned. */
nb_status nb_query_find_nearest_poly(nb_query* q, const float center[3], const float half_extents[3],
                                     const nb_query_filter* filter, nb_poly_ref* ref, float nearest[3]);

/* A* over polygons from start_ref to end_ref (positions on them). path receives at most max_path refs.
 * When end_ref cannot be reached (or the node pool runs out first) the path ends at the reachable polygon
 * closest to `end` and *partial = 1 (with a node per polygon: the shortest path to that polygon's point nearest
 * `end`; ties between polygons go to the first in grid order, tile z, tile x, then index). A corridor longer than max_path is cut to its first max_path polygons,
 * also with *partial = 1. partial is optional. */
nb_status nb_query_find_path(nb_query* q, nb_poly_ref start_ref, nb_poly_ref end_ref, const float start[3],
                             const float end[3], const nb_query_filter* filter, nb_poly_ref* path,
                             int32_t* path_count, int32_t max_path, int* partial);
/* Whether the last path search of q (nb_query_find_path, or the last pair of nb_query_find_paths) ran out of
 * nodes: with a bigger max_nodes a partial path might reach further, and a complete one might be shorter. 0 when it
 * ended on its own (a partial path then means the end cannot be reached). */
int nb_query_exhausted(const nb_query* q);
/* The nodes the last path search of q took from its pool, a measure of its work. With a pool of a node per polygon
 * (the default), an end that cannot be reached is found out in one of two ways: by a search that visits all it can
 * reach, or at once from the polygons' connected components. The query labels those once its searches of the first
 * kind since the navmesh or the filter's flags last changed add up to a quarter of the polygons (about what the
 * labelling costs): at once after a search from a big floor, only after several from a small island. Either way the
 * path is the one a search finds to the reachable polygon nearest the end; the count includes both searches where
 * there were two. */
uint32_t nb_query_last_nodes(const nb_query* q);

#define NB_STRAIGHT_AREA_CROSSINGS 1 /* add a point where the path enters another area */
#define NB_STRAIGHT_ALL_CROSSINGS 2  /* add a point at every polygon edge crossed */
#define NB_STRAIGHT_POINT_START 1    /* point flags */
#define NB_STRAIGHT_POINT_END 2
#define NB_STRAIGHT_POINT_OFFMESH 4
/* String-pulls a polygon corridor into points (funnel algorithm). points: max_points xyz; flags and refs
 * optional. start and end are clamped onto the first and last polygons (heights from the detail surface).
 * refs[i] is the polygon entered at point i (0 for the end point). An off-mesh link gives two points, both
 * flagged NB_STRAIGHT_POINT_OFFMESH: its start (ref = the link's polygon) and its end (ref = the polygon it
 * lands on). More points than max_points: the first max_points are written and NB_OK is returned (check
 * whether the last one has NB_STRAIGHT_POINT_END). NB_ERR_NOT_FOUND for a stale ref, NB_ERR_INVALID_ARG when
 * two consecutive polygons are not neighbours. */
nb_status nb_query_straight_path(nb_query* q, const float start[3], const float end[3], const nb_poly_ref* path,
                                 int32_t path_count, float* points, uint8_t* flags, nb_poly_ref* refs,
                                 int32_t* point_count, int32_t max_points, int options);

/* Walks from start (on start_ref) toward end along the surface: *t = 1 when end is reached without hitting a
 * wall, else the fraction of the segment where it hits one, with the wall's normal (xz, unit length: 0, 0, 0 only
 * when t = 1, or for a segment of no length). path (optional) receives the polygons crossed. A start or end on a
 * polygon's outline (a path corner) counts as on it, up to float noise: the walk starts in whichever polygon
 * meeting there the segment goes into, and a segment through a vertex goes on into whichever polygon around it
 * the segment enters, however many meet there. Uses the query's node pool, as the searches do. */
nb_status nb_query_raycast(nb_query* q, nb_poly_ref start_ref, const float start[3], const float end[3],
                           const nb_query_filter* filter, float* t, float hit_normal[3], nb_poly_ref* path,
                           int32_t* path_count, int32_t max_path);

/* Random points, area-weighted, deterministic for a given *rng state (updated) and the navmesh's content (not the
 * order its tiles were added in). With no usable polygon (an empty navmesh, a filter excluding every polygon, a
 * start_ref not usable) the status is NB_OK, *ref 0 and point 0,0,0. */
nb_status nb_query_random_point(nb_query* q, const nb_query_filter* filter, uint64_t* rng, nb_poly_ref* ref,
                                float point[3]);
nb_status nb_query_random_point_around(nb_query* q, nb_poly_ref start_ref, const float center[3], float radius,
                                       const nb_query_filter* filter, uint64_t* rng, nb_poly_ref* ref,
                                       float point[3]);

/* Closest point on a polygon, with the detail mesh's height; *over_poly = 1 when pos is above/below it (its outline
 * included, to within float rounding of the coordinates: closest is then pos's x and z). */
nb_status nb_query_closest_point_on_poly(nb_query* q, nb_poly_ref ref, const float pos[3], float closest[3],
                                         int* over_poly);
/* Height of the detail surface of ref at pos (x, z). NB_ERR_NOT_FOUND when pos is outside the polygon (a point on
 * its outline, to within rounding, is not). */
nb_status nb_query_poly_height(nb_query* q, nb_poly_ref ref, const float pos[3], float* height);

/* Moves from start toward end constrained to the surface, sliding along walls; result is where it ends,
 * visited (optional) the polygons passed. */
nb_status nb_query_move_along_surface(nb_query* q, nb_poly_ref start_ref, const float start[3], const float end[3],
                                      const nb_query_filter* filter, float result[3], nb_poly_ref* visited,
                                      int32_t* visited_count, int32_t max_visited);

/* Distance from center to the nearest wall within max_radius (max_radius when none), with the hit point and
 * the wall's normal. */
nb_status nb_query_distance_to_wall(nb_query* q, nb_poly_ref start_ref, const float center[3], float max_radius,
                                    const nb_query_filter* filter, float* distance, float hit_pos[3],
                                    float hit_normal[3]);

/* Batch path finding: pairs holds n x (start xyz, end xyz). For each pair: nearest polygons within
 * half_extents, A*, straight path (options as nb_query_straight_path). Outputs: status[i] (NB_PATH_NONE, _PARTIAL
 * or _COMPLETE, with NB_PATH_EXHAUSTED or-ed in when the search ran out of nodes: status[i] & 3 is the first),
 * lengths[i] (straight path length, world units), point_offsets (n + 1 entries: pair i's points are
 * points[3*point_offsets[i] .. 3*point_offsets[i+1])). points_capacity is in points (xyz triples); when a
 * pair's points do not fit, NB_ERR_BUFFER_TOO_SMALL is returned after filling what fits, with *points_needed
 * set (the pass can be repeated with a larger buffer). points may be NULL with capacity 0 to only count.
 * "Fits" is per pair: pair i's points are written only when point_offsets[i+1] <= points_capacity; status,
 * lengths and offsets are filled for every pair. lengths, point_offsets and points_needed may be NULL. */
#define NB_PATH_NONE 0     /* no polygon near the start or the end */
#define NB_PATH_PARTIAL 1  /* the end's polygon was not reached: the path ends at the closest reachable point */
#define NB_PATH_COMPLETE 2
#define NB_PATH_EXHAUSTED 4 /* or-ed into a status: the search ran out of nodes (nb_query_exhausted) */
nb_status nb_query_find_paths(nb_query* q, const float* pairs, uint32_t n, const float half_extents[3],
                              const nb_query_filter* filter, int options, uint8_t* status, float* lengths,
                              uint32_t* point_offsets, float* points, uint32_t points_capacity,
                              uint32_t* points_needed);
/* The same, with each point's flags (NB_STRAIGHT_POINT_*: where an off-mesh link starts and ends) and the
 * polygon entered at it, as nb_query_straight_path gives them: point_flags and point_refs (either may be NULL)
 * have points_capacity entries and are written where the points are. */
nb_status nb_query_find_paths_ex(nb_query* q, const float* pairs, uint32_t n, const float half_extents[3],
                                 const nb_query_filter* filter, int options, uint8_t* status, float* lengths,
                                 uint32_t* point_offsets, float* points, uint8_t* point_flags, nb_poly_ref* point_refs,
                                 uint32_t points_capacity, uint32_t* points_needed);

/* ---- drawing ---- */

/* The walkable surface as one indexed triangle list (for a three.js BufferGeometry or a debug view): the
 * detail triangles of every ground polygon (off-mesh links are left out), wound like the polygons. Per tile,
 * in slot order: its polygon vertices (shared by neighbouring polygons of the tile), then its detail vertices.
 * positions: vertex_capacity xyz triples; indices: triangle_capacity x 3; areas (optional): the area id of
 * each triangle. *vertex_count and *triangle_count always receive the sizes needed: with a needed buffer NULL or
 * too small, returns NB_ERR_BUFFER_TOO_SMALL (call once with NULLs to size the buffers).
 * Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_BUFFER_TOO_SMALL, NB_ERR_TOO_LARGE (beyond 32-bit indices). */
nb_status nb_navmesh_detail_triangles(nb_context* ctx, const nb_navmesh* nav, float* positions,
                                      uint32_t vertex_capacity, uint32_t* indices, uint8_t* areas,
                                      uint32_t triangle_capacity, uint32_t* vertex_count, uint32_t* triangle_count);

/* ---- tile bakes over a triangle index; encoded tile caches ---- */

/* The level's triangles bucketed by tile once (the spatial index a bake worker builds once per geometry), so that
 * baking one tile costs time in proportion to the tile's own triangles. Validates the mesh (every vertex finite,
 * indices, area ids), the bounds, the volumes and the config as nb_bake_grid does; config->tile_size must be > 0
 * (NB_ERR_INVALID_CONFIG). It REFERENCES the input's arrays (positions, indices, areas, volumes): keep them alive
 * and unchanged while the index lives (its own bounds are copied). The index is read-only after creation: one
 * index may serve bakes on several threads, each with its own context. *out is NULL on failure. Statuses: those
 * of nb_bake_grid, NB_ERR_INVALID_CONFIG, NB_ERR_INVALID_ARG / NB_ERR_NONFINITE (a volume), NB_ERR_TOO_LARGE,
 * NB_ERR_OUT_OF_MEMORY. */
typedef struct nb_grid_index nb_grid_index;
nb_status nb_grid_index_create(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                               nb_grid_index** out);
void nb_grid_index_destroy(nb_context* ctx, nb_grid_index* index);
/* The grid: the navmesh params (identical to nb_bake_grid's) and the tile counts; all outputs optional. */
void nb_grid_index_grid(const nb_grid_index* index, nb_navmesh_params* params, int32_t* tiles_x, int32_t* tiles_z);
/* How many triangles are bucketed into tile (tile_x, tile_z): candidates, a superset of the tile's own (0 = the
 * tile has no geometry and bakes to nothing), so a scheduler can skip empty tiles without a bake call. 0 for a
 * tile outside the grid or a NULL index. */
uint32_t nb_grid_index_tile_triangles(const nb_grid_index* index, int32_t tile_x, int32_t tile_z);
/* Bakes tile (tile_x, tile_z) exactly as nb_bake_grid_tile does (the blob is byte-identical; links: the whole
 * list, checked as nb_bake_navmesh checks it; the tile keeps those whose start lies in it). *data is NULL (NB_OK)
 * when the tile has no polygons and no links. cache and cache_size (both or neither; NULL = not wanted) receive
 * the tile's encoded compact heightfield (nb_compact_encode of the field after erosion, the median area filter and
 * the bake-time volumes) for nb_tile_rebuild; *cache is NULL when the tile has no triangles (such a tile has no
 * ground polygons: *data then holds just the links starting in it, if any). stats (optional) as nb_bake_tile's
 * (all -1 for a tile without triangles). Free blobs with nb_bytes_free. Statuses: NB_OK, NB_ERR_NULL_ARG,
 * NB_ERR_INVALID_ARG (a tile outside the grid, a link), NB_ERR_NONFINITE and NB_ERR_TOO_LARGE (a link), those of
 * nb_bake, nb_tile_build and nb_compact_encode. On failure every output is NULL. */
nb_status nb_grid_index_bake_tile(nb_context* ctx, const nb_grid_index* index, const nb_offmesh_link* links,
                                  uint32_t link_count, int32_t tile_x, int32_t tile_z, uint8_t** data, size_t* size,
                                  uint8_t** cache, size_t* cache_size, double stats[NB_STAT_COUNT]);

/* Encoded compact heightfield: the "tile cache blob" (docs/FORMAT.md): magic "NBCC", version, a header with the
 * tile position, the grid size, border and bounds and the cell config the field was made with (cell sizes,
 * walkable_height, walkable_climb), then the column span counts, span floors and heights (delta coded against a
 * neighbouring column) and area ids, run-length and varint coded; a CRC-32 over every other byte at the end.
 * Neighbour connections are not stored: decode recomputes them as nb_compact_heightfield_build links spans (with
 * the field's walkable_height and walkable_climb), so a field built by the bake round-trips exactly (cells, spans
 * with their connections, areas). Region ids and the distance field are not stored (decode gives reg 0, dist
 * NULL, max_regions and max_distance 0): the cache keeps the field as it is before the region stage. Size: about
 * 5% of the field's in-memory size (8 bytes per column, 9 per span) on the test levels and the big world.
 * encode: NB_OK, NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG (a field whose columns are not stored in order, or an area id
 * above 63), NB_ERR_TOO_LARGE, NB_ERR_OUT_OF_MEMORY; *data freed with nb_bytes_free.
 * decode: never reads outside [data, data + size); NB_OK, NB_ERR_NULL_ARG, NB_ERR_CORRUPT (damaged, truncated or
 * not a tile cache blob), NB_ERR_VERSION, NB_ERR_OUT_OF_MEMORY; *out (nb_compact_heightfield_destroy) is NULL on
 * failure. tile_x and tile_z are optional. */
nb_status nb_compact_encode(nb_context* ctx, const nb_compact_heightfield* chf, int32_t tile_x, int32_t tile_z,
                            uint8_t** data, size_t* size);
nb_status nb_compact_decode(nb_context* ctx, const uint8_t* data, size_t size, nb_compact_heightfield** out,
                            int32_t* tile_x, int32_t* tile_z);

/* Rebuilds one tile from its tile cache blob: decode, mark each obstacle volume that overlaps the tile with its
 * border (in array order: a later one wins where they overlap), then regions .. detail and nb_tile_build with the
 * links whose start lies in the tile (pass the bake's whole list: the tile picks its own exactly as the bake did,
 * from the cached field's bounds; their fields are checked, their bounds were checked by the bake). Byte-identical
 * to what nb_tile_cache_update builds for the same tile, obstacles and links, and with no obstacles to
 * nb_grid_index_bake_tile's blob. config must be the config the cache was baked with: the blob's cell config is
 * checked against it (NB_ERR_INVALID_ARG naming the field: cell_size, cell_height, agent_height,
 * agent_max_climb, agent_radius (the border) or tile_size). *data is NULL (NB_OK) when the tile ends with no
 * polygons and no links. Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_INVALID_CONFIG, NB_ERR_INVALID_ARG,
 * NB_ERR_NONFINITE (an obstacle, a link), NB_ERR_TOO_LARGE (a link), those of nb_compact_decode, the stages and
 * nb_tile_build. */
nb_status nb_tile_rebuild(nb_context* ctx, const nb_config* config, const uint8_t* cache, size_t cache_size,
                          const nb_offmesh_link* links, uint32_t link_count, const nb_volume* obstacles,
                          uint32_t obstacle_count, uint8_t** data, size_t* size);
/* The xz box (the tile with its border of walkable_radius + 3 cells) whose obstacles affect tile (tile_x, tile_z)
 * of a grid: a volume whose bounds overlap it (inclusive) makes the tile dirty. lo/hi: x, z. config: the bake's
 * (resolved here; an invalid config counts as the defaults). The native tile cache uses the same box. */
void nb_tile_dirty_box(const nb_navmesh_params* params, const nb_config* config, int32_t tile_x, int32_t tile_z,
                       float lo[2], float hi[2]);

/* ---- tile cache: live obstacles ---- */

/* A tile cache keeps, for every tile of a tiled bake's grid, the compact heightfield after erosion and the
 * bake-time area volumes (nb_bake up to NB_STAGE_AREAS), encoded (nb_compact_encode), so that a change of obstacles
 * rebuilds only the tiles it touches, from the cached heightfield (decode, regions .. detail, then nb_tile_build):
 * no rasterization, no input triangles. Obstacles are nb_volume's: area 0 carves a hole in the walkable surface,
 * another id marks an area (e.g. water with a higher cost). Obstacles are applied after the bake-time volumes.
 * Off-mesh links given at creation are kept and built into every (re)built tile their start lies in.
 * Memory: each tile with geometry keeps one tile cache blob, about 5% of its compact heightfield (8 bytes per
 * column of the tile with its border, 9 per span: 5 MB instead of 123 MB for the million-triangle world with
 * 64-cell tiles); tiles without geometry keep nothing. A rebuild decodes the tile first (about 0.15 ms for a
 * 64-cell tile, natively). The cache keeps using ctx's allocator: pass the same ctx to every call and destroy the
 * cache before the ctx. A cache is not thread-safe. */
typedef struct nb_tile_cache nb_tile_cache;

/* Computes the grid of `input` (the whole level) as nb_bake_grid does and bakes each tile up to NB_STAGE_AREAS
 * with the tile's bounds, border and triangles exactly as nb_bake_grid_tile selects them (through an
 * nb_grid_index; input->volumes are applied as bake-time areas; the input's arrays are not referenced after the
 * call). links (copied, checked as nb_bake_navmesh checks them) go to the tile their start lies in, as in
 * nb_bake_navmesh (a tile without triangles holding a start gets just its links, and no obstacle ever rebuilds
 * it). config->tile_size must be > 0. *out is NULL on failure. Statuses: those of nb_grid_index_create and nb_bake,
 * NB_ERR_INVALID_CONFIG (tile_size 0), NB_ERR_INVALID_ARG, NB_ERR_NONFINITE and NB_ERR_TOO_LARGE (a link),
 * NB_ERR_OUT_OF_MEMORY. */
nb_status nb_tile_cache_create(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                               const nb_offmesh_link* links, uint32_t link_count, nb_tile_cache** out);
void nb_tile_cache_destroy(nb_context* ctx, nb_tile_cache* cache);

/* Builds every tile (with the current obstacles) into a new navmesh whose params are nb_bake_grid's. With no
 * obstacles it saves to the same bytes as nb_bake_navmesh of the same level, config and links. Clears
 * every dirty mark. *out is NULL on failure. Statuses: those of nb_bake's later stages, nb_tile_build and
 * nb_navmesh_add_tile, NB_ERR_NULL_ARG. */
nb_status nb_tile_cache_build_navmesh(nb_context* ctx, nb_tile_cache* cache, nb_navmesh** out);

/* Obstacles. The volume is copied (a convex volume's vertices too); ids start at 1 and are never reused. Each
 * change marks dirty the tiles whose bounds with their border overlap the volume's box in xz (an update marks
 * both the old and the new position); nothing is rebuilt until nb_tile_cache_update. Statuses: NB_OK,
 * NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG and NB_ERR_NONFINITE (as nb_mark_volume validates volumes),
 * NB_ERR_NOT_FOUND (no obstacle with that id), NB_ERR_OUT_OF_MEMORY; on failure the cache is unchanged. */
nb_status nb_tile_cache_add_obstacle(nb_context* ctx, nb_tile_cache* cache, const nb_volume* volume, uint32_t* id);
nb_status nb_tile_cache_remove_obstacle(nb_context* ctx, nb_tile_cache* cache, uint32_t id);
nb_status nb_tile_cache_update_obstacle(nb_context* ctx, nb_tile_cache* cache, uint32_t id, const nb_volume* volume);
/* Number of tiles waiting for nb_tile_cache_update. */
uint32_t nb_tile_cache_dirty_count(const nb_tile_cache* cache);

/* Rebuilds every dirty tile into nav (a navmesh from nb_tile_cache_build_navmesh, or one with the same grid):
 * each from its decoded cached compact heightfield with every obstacle overlapping it marked, then regions ..
 * detail and nb_tile_build; the old tile is replaced (a tile that ends with no polygons and no links is removed). The
 * polygon refs of replaced tiles become stale (NB_ERR_NOT_FOUND from queries): paths through them must be
 * planned again. Flags set on a replaced tile's polygons (nb_navmesh_set_poly_flags) go to the same polygons of the
 * new tile (same type, same vertices in the same order): a polygon the obstacles left as it was keeps its flags, a
 * polygon they reshaped or split gets its baked flags. rebuilt_tiles (optional, capacity pairs) receives the (tile_x, tile_z) of each rebuilt tile,
 * in (z, x) order; *rebuilt_count (optional) their number, even beyond capacity. All new tiles are built before
 * nav is touched: on failure nav keeps its old tiles (rolled back if a replacement fails midway) and the tiles
 * stay dirty. Statuses: NB_OK, NB_ERR_NULL_ARG, NB_ERR_INVALID_ARG (nav's tile size differs from the cache's),
 * those of the stages, nb_tile_build and nb_navmesh_add_tile (NB_ERR_OUT_OF_MEMORY, NB_ERR_CANCELLED, ...). */
nb_status nb_tile_cache_update(nb_context* ctx, nb_tile_cache* cache, nb_navmesh* nav, int32_t* rebuilt_tiles,
                               uint32_t capacity, uint32_t* rebuilt_count);

#ifdef __cplusplus
}
#endif

#endif /* NAVBAKE_H */
