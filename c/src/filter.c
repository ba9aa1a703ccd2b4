/* Heightfield filters (seed 002): they only change area ids, never remove spans. */
#include "nb_internal.h"

#define OPEN_TOP 0xffff /* the free space above the highest span of a column reaches "infinity" */

/* Low hanging obstacles, walking up a column: an unwalkable span whose top is a small step above a walkable top
 * (a curb, a stair step) inherits that floor's area. Decisions use the span's original walkability so that a
 * tall stack of small steps does not become walkable. One step per span, bottom up, from a zeroed state. */
typedef struct below_state {
    int walkable;
    uint32_t area, top;
} below_state;

static inline void low_hanging_step(nb_span* sp, below_state* below, int32_t walkable_climb)
{
    const int walkable = sp->area != NB_NULL_AREA;
    if (!walkable && below->walkable && (int)sp->smax - (int)below->top <= walkable_climb)
        sp->area = below->area;
    below->walkable = walkable;
    below->area = sp->area;
    below->top = sp->smax;
}

void nb_filter_low_hanging_obstacles(int32_t walkable_climb, nb_heightfield* hf)
{
    const int ncols = hf->width * hf->height;
    for (int col = 0; col < ncols; ++col) {
        below_state below = { 0, NB_NULL_AREA, 0 };
        for (uint32_t s = hf->columns[col]; s; s = hf->spans[s].next)
            low_hanging_step(&hf->spans[s], &below, walkable_climb);
    }
}

/* Whether walkable span sp of column (x, z) is a ledge: a drop of more than walkable_climb to a neighbour floor
 * it can reach, or reachable neighbour floors spread over more than walkable_climb (a steep slope of small
 * steps). Reads only the spans' heights, never their areas.
 * from: NULL walks each neighbour column from its first span, the fastest way for the columns of a few spans that
 * most levels are made of. For a column of many spans (a multi-storey level), from[dir] keeps where the walk up
 * each neighbour column starts (UINT32_MAX: at its first span) between the calls for its spans, bottom up: a
 * neighbour span whose opening above the floor is too low stays too low for every higher floor, and is not
 * visited again; with the stop at the ceiling, a tower of n storeys costs O(n) per column, not O(n^2). The
 * answer is the same either way. Always inlined, so that each caller's copy for from == NULL is the plain walk. */
static NB_ALWAYS_INLINE int is_ledge(const nb_heightfield* hf, int x, int z, const nb_span* sp,
                                     int32_t walkable_height, int32_t walkable_climb, uint32_t* from)
{
    const int w = hf->width, h = hf->height;
    const int floor = (int)sp->smax;
    const int ceiling = sp->next ? (int)hf->spans[sp->next].smin : OPEN_TOP;
    int reach_min = floor, reach_max = floor;
    for (int dir = 0; dir < 4; ++dir) {
        const int nx = x + nb_dir_offset_x(dir), nz = z + nb_dir_offset_z(dir);
        if (nx < 0 || nz < 0 || nx >= w || nz >= h)
            return 1; /* the grid edge is a drop into the void */
        uint32_t n = hf->columns[nx + nz * w];
        /* The space below the neighbour's first span is a floor at -infinity: if an agent fits through, it is
         * a drop. */
        const int first_ceiling = n ? (int)hf->spans[n].smin : OPEN_TOP;
        if (nb_mini(ceiling, first_ceiling) - floor >= walkable_height)
            return 1;
        if (from) {
            if (from[dir] != UINT32_MAX)
                n = from[dir];
            for (; n; n = hf->spans[n].next) {
                const uint32_t nn = hf->spans[n].next;
                const int nceiling = nn ? (int)hf->spans[nn].smin : OPEN_TOP;
                if (nceiling - nb_maxi(floor, (int)hf->spans[n].smax) >= walkable_height)
                    break;
            }
            from[dir] = n;
        }
        for (; n; n = hf->spans[n].next) {
            const int nfloor = (int)hf->spans[n].smax;
            if (from && nfloor > ceiling - walkable_height)
                break; /* no room between it (or any floor above) and this span's ceiling */
            const uint32_t nn = hf->spans[n].next;
            const int nceiling = nn ? (int)hf->spans[nn].smin : OPEN_TOP;
            if (nb_mini(ceiling, nceiling) - nb_maxi(floor, nfloor) < walkable_height)
                continue; /* the opening between them is too low to pass */
            const int diff = nfloor - floor;
            if (diff < -walkable_climb)
                return 1; /* a drop: nothing else can change the answer */
            if (diff <= walkable_climb) {
                reach_min = nb_mini(reach_min, nfloor);
                reach_max = nb_maxi(reach_max, nfloor);
            }
        }
    }
    return reach_max - reach_min > walkable_climb;
}

/* More than 4 spans in the column from span s up: worth is_ledge's bookkeeping (from). */
static inline int stacked_column(const nb_heightfield* hf, uint32_t s)
{
    for (int k = 0; k < 4 && s; ++k)
        s = hf->spans[s].next;
    return s != 0;
}

/* One row of nb_filter_ledge_spans. A function of its own for V8's tiering: optimized code replaces a wasm
 * function's baseline code only from its next call on, so a whole-grid loop in one call would run the first bake
 * entirely in the baseline tier (the same holds for the row functions of the other stages). */
static NB_NOINLINE void ledge_row(int32_t walkable_height, int32_t walkable_climb, nb_heightfield* hf, int z)
{
    const int w = hf->width;
    for (int x = 0; x < w; ++x) {
        uint32_t from[4] = { UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX };
        const int stacked = stacked_column(hf, hf->columns[x + z * w]);
        for (uint32_t s = hf->columns[x + z * w]; s; s = hf->spans[s].next) {
            nb_span* sp = &hf->spans[s];
            if (sp->area != NB_NULL_AREA &&
                (stacked ? is_ledge(hf, x, z, sp, walkable_height, walkable_climb, from)
                         : is_ledge(hf, x, z, sp, walkable_height, walkable_climb, NULL)))
                sp->area = NB_NULL_AREA;
        }
    }
}

/* One row of nb_filter_walkable: the three filters column by column, in one walk over each column. */
static NB_NOINLINE void walkable_row(int32_t walkable_height, int32_t walkable_climb, nb_heightfield* hf, int z)
{
    const int w = hf->width;
    for (int x = 0; x < w; ++x) {
        below_state below = { 0, NB_NULL_AREA, 0 };
        uint32_t from[4] = { UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX };
        const int stacked = stacked_column(hf, hf->columns[x + z * w]);
        for (uint32_t s = hf->columns[x + z * w]; s; s = hf->spans[s].next) {
            nb_span* sp = &hf->spans[s];
            low_hanging_step(sp, &below, walkable_climb); /* before this span's other filters change its area */
            if (sp->area == NB_NULL_AREA)
                continue;
            /* low ceiling, then ledge: either makes the span unwalkable, and neither reads areas */
            const int ceiling = sp->next ? (int)hf->spans[sp->next].smin : OPEN_TOP;
            if (ceiling - (int)sp->smax < walkable_height ||
                (stacked ? is_ledge(hf, x, z, sp, walkable_height, walkable_climb, from)
                         : is_ledge(hf, x, z, sp, walkable_height, walkable_climb, NULL)))
                sp->area = NB_NULL_AREA;
        }
    }
}

void nb_filter_walkable(int32_t walkable_height, int32_t walkable_climb, nb_heightfield* hf)
{
    for (int z = 0; z < hf->height; ++z)
        walkable_row(walkable_height, walkable_climb, hf, z);
}

void nb_filter_ledge_spans(int32_t walkable_height, int32_t walkable_climb, nb_heightfield* hf)
{
    for (int z = 0; z < hf->height; ++z)
        ledge_row(walkable_height, walkable_climb, hf, z);
}

void nb_filter_low_height_spans(int32_t walkable_height, nb_heightfield* hf)
{
    const int ncols = hf->width * hf->height;
    for (int col = 0; col < ncols; ++col) {
        for (uint32_t s = hf->columns[col]; s; s = hf->spans[s].next) {
            nb_span* sp = &hf->spans[s];
            const int floor = (int)sp->smax;
            const int ceiling = sp->next ? (int)hf->spans[sp->next].smin : OPEN_TOP;
            if (ceiling - floor < walkable_height)
                sp->area = NB_NULL_AREA;
        }
    }
}
