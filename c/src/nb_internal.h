/* Internal helpers shared by the library's source files. Not installed, not part of the API. */
#ifndef NB_INTERNAL_H
#define NB_INTERNAL_H

#include "navbake.h"

#include <stdarg.h>
#include <string.h>

#define NB_MESSAGE_MAX 512

struct nb_context {
    nb_allocator allocator;
    nb_progress_fn progress;
    void* progress_user;
    /* the last report (stage -1: none yet), so that a stage's end is said once and never repeated */
    int32_t report_stage;
    uint32_t report_done, report_total;
    nb_status status;
    char message[NB_MESSAGE_MAX];
};

/* Allocation through the context's hooks. nb_alloc(ctx, 0) returns a valid 1-byte block. */
void* nb_alloc(nb_context* ctx, size_t size);
void* nb_calloc(nb_context* ctx, size_t count, size_t size); /* zeroed; NULL on overflow */
void nb_free(nb_context* ctx, void* ptr);

/* Records status + formatted message in ctx (when ctx is not NULL) and returns status. */
nb_status nb_fail(nb_context* ctx, nb_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Code that runs once per call or only on errors (validation, setup, messages): optimized for size, since
 * its speed does not matter and the wasm download does. clang has minsize; gcc's cold implies size. */
#if defined(__clang__)
#define NB_COLD __attribute__((cold, minsize))
#elif defined(__GNUC__)
#define NB_COLD __attribute__((cold))
#else
#define NB_COLD
#endif

/* snprintf for the library's messages (context.c; no libc printf in the wasm build): %s %c, %d %u %x with
 * an optional 0-padded width and l/ll/z modifiers, %g (precision 6), %.0f, %%. Same output and return value
 * as snprintf for those. */
int nb_format(char* buf, size_t size, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int nb_vformat(char* buf, size_t size, const char* fmt, va_list ap);

/* Sorts like qsort, but unstable in a different way: every caller's comparator is a total order (ties broken on
 * an index), so the result does not depend on the algorithm. */
void nb_sort(void* base, size_t n, size_t size, int (*cmp)(const void*, const void*));

/* Ends a stage: reports done == total (the stage's last total, 1 if it reported none) unless its last report
 * already did. */
nb_status nb_report_end(nb_context* ctx, nb_stage stage);

/* Asks the progress callback; returns NB_ERR_CANCELLED (with message) when it asks to stop. A report equal to
 * the one before it is not passed on (that one just asked). */
nb_status nb_report(nb_context* ctx, nb_stage stage, uint32_t done, uint32_t total);

/* Validates a volume and returns its bounding box (footprint in xz, height range in y). fn names the caller
 * in messages. */
nb_status nb_volume_bounds(nb_context* ctx, const char* fn, const nb_volume* v, float lo[3], float hi[3]);

/* Validates bake input triangles (NULL positions, NaN/inf, index range, area ids, emptiness); fn names the
 * caller in messages. referenced_only: check the finiteness of the vertices the triangles use rather than of
 * every vertex (for explicit bounds), and skip the check that not every triangle is degenerate (a tile's share of
 * a level may be only slivers). *tri_count receives the triangle count (vertex_count / 3 without indices). */
nb_status nb_validate_mesh(nb_context* ctx, const char* fn, const nb_mesh* mesh, int referenced_only,
                           uint32_t* tri_count);

/* Monotonic milliseconds. */
double nb_now_ms(void);

/* Each bake stage stays a function of its own. With LTO the compiler would otherwise inline the whole
 * pipeline into nb_bake, and V8 compiles one giant wasm function much worse (measured: every stage 1.4-1.7x
 * slower in wasm). Redeclared here with the attribute; every source file includes this header. */
#if defined(__GNUC__) || defined(__clang__)
#define NB_NOINLINE __attribute__((noinline))
#define NB_ALWAYS_INLINE inline __attribute__((always_inline)) /* a hot helper each caller specializes */
#else
#define NB_NOINLINE
#define NB_ALWAYS_INLINE inline
#endif
NB_NOINLINE void nb_clear_unwalkable_triangles(float, const float*, const uint32_t*, uint32_t, uint8_t*);
NB_NOINLINE nb_status nb_rasterize_triangles(nb_context*, const float*, uint32_t, const uint32_t*, const uint8_t*,
                                             uint32_t, nb_heightfield*, int32_t);
NB_NOINLINE void nb_filter_low_hanging_obstacles(int32_t, nb_heightfield*);
NB_NOINLINE void nb_filter_ledge_spans(int32_t, int32_t, nb_heightfield*);
NB_NOINLINE void nb_filter_low_height_spans(int32_t, nb_heightfield*);
NB_NOINLINE nb_status nb_compact_heightfield_build(nb_context*, int32_t, int32_t, const nb_heightfield*,
                                                   nb_compact_heightfield**);
NB_NOINLINE nb_status nb_erode_walkable_area(nb_context*, int32_t, nb_compact_heightfield*);
NB_NOINLINE nb_status nb_median_filter_walkable_area(nb_context*, nb_compact_heightfield*);
NB_NOINLINE nb_status nb_mark_volume(nb_context*, const nb_volume*, nb_compact_heightfield*);
NB_NOINLINE nb_status nb_build_distance_field(nb_context*, nb_compact_heightfield*);
NB_NOINLINE nb_status nb_build_regions_watershed(nb_context*, nb_compact_heightfield*, int32_t, int32_t, int32_t);
NB_NOINLINE nb_status nb_build_regions_monotone(nb_context*, nb_compact_heightfield*, int32_t, int32_t, int32_t);
NB_NOINLINE nb_status nb_build_regions_layers(nb_context*, nb_compact_heightfield*, int32_t, int32_t);
NB_NOINLINE nb_status nb_build_contours(nb_context*, const nb_compact_heightfield*, float, int32_t, nb_contour_set**);
/* The contour stage's last step (contour.c): bridges each region's holes into its outline and drops the holes'
 * contours. Separate so that tests/c/test_contour.c can check it against a plain model of the rule. */
nb_status nb_merge_holes(nb_context* ctx, nb_contour_set* cset);
NB_NOINLINE nb_status nb_build_poly_mesh(nb_context*, const nb_contour_set*, int32_t, nb_poly_mesh**);
NB_NOINLINE nb_status nb_build_poly_mesh_detail(nb_context*, const nb_poly_mesh*, const nb_compact_heightfield*, float,
                                                float, nb_poly_mesh_detail**);
NB_NOINLINE nb_status nb_bake(nb_context*, const nb_bake_input*, const nb_config*, nb_stage, unsigned,
                              nb_bake_result*);

static inline int nb_mini(int a, int b) { return a < b ? a : b; }
static inline int nb_maxi(int a, int b) { return a > b ? a : b; }
static inline int nb_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline int nb_absi(int a) { return a < 0 ? -a : a; }
static inline float nb_minf(float a, float b) { return a < b ? a : b; }
static inline float nb_maxf(float a, float b) { return a > b ? a : b; }
static inline float nb_clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Empties up to `budget` slots of the query's pool (those of a new pool, then those the last search filled); returns
 * how many are left to empty: 0 = ready. A search's begin empties them all; a caller that must not block long (the
 * wasm's sliced searches) calls this in pieces first. */
uint32_t nb_voxel_query_reset_some(nb_voxel_query* q, uint32_t budget);
/* nb_voxel_query_reset_some for about max_ms milliseconds (16K slots at a time); returns the slots left. */
uint32_t nb_voxel_query_reset_ms(nb_voxel_query* q, double max_ms);
/* nb_voxel_find_path_step for about max_ms milliseconds instead of a count of expansions (the clock is read every 16
 * expansions, so a slice overruns by at most 16 expansions' time; at least 15 are made). */
nb_status nb_voxel_find_path_step_ms(nb_voxel_query* q, double max_ms, int* done);
/* nb_voxel_nearest keeping only voxels within squared world distance max_d2 (INFINITY: the whole cube), which it
 * never scans past (the wasm glue's search radius). */
nb_status nb_voxel_nearest_within(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                                  const int32_t voxel[3], int32_t max_distance, double max_d2, int32_t out[3],
                                  int* found);

#endif
