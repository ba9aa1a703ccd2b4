/* Watershed partition (seed 000): the distance field is a terrain whose basins lie farthest from the walls. The
 * water level drops two steps at a time; at each level the existing regions grow breadth-first over the newly
 * submerged spans (a bounded number of rings, so regions stay round), then every span still dry-but-submerged
 * seeds a new region flooded depth-first. Round regions give well-shaped polygons later. */
#include "region_internal.h"

#define EXPAND_ITERS 8   /* rings of breadth-first growth per level */
#define LEVELS_PER_SORT 8 /* the candidate list is rebuilt in scan order every this many levels */

typedef struct watershed {
    const nb_compact_heightfield* chf;
    const uint32_t* nbr; /* 4 neighbour span indices per span, NB_NO_SPAN for none */
    uint16_t* reg;       /* region per span, 0 = none yet */
    uint16_t* steps;     /* growth distance from the region's flooded core (2 per ring) */
    uint32_t* stack;     /* depth-first flood stack */
    uint32_t* grow_at;   /* one growth ring: span, then (region << 16 | distance) */
    uint8_t* mark;       /* per span, during grow_by_frontier: MARK_* bits; 0 outside it */
} watershed;

/* The region span i joins in a growth ring, from the state before the ring: the neighbouring region (same area,
 * not a tile border) nearest to its core, as region << 16 | distance; 0 when no neighbour has a region. */
static inline uint32_t nearest_region(const watershed* ws, uint32_t i)
{
    const uint8_t* areas = ws->chf->areas;
    const uint32_t* nb = ws->nbr + (size_t)i * 4;
    const uint8_t area = areas[i];
    uint32_t best_reg = 0, best = UINT32_MAX;
    for (int dir = 0; dir < 4; ++dir) {
        const uint32_t a = nb[dir];
        if (a == NB_NO_SPAN || areas[a] != area)
            continue;
        const uint16_t r = ws->reg[a];
        if (r == 0 || (r & NB_BORDER_REG))
            continue;
        const uint32_t d = (uint32_t)ws->steps[a] + 2;
        if (d < best) {
            best = d;
            best_reg = r;
        }
    }
    return best_reg ? best_reg << 16 | (best < 0xffff ? best : 0xffff) : 0;
}

#define MARK_CAND 1u   /* listed in cand, no region yet */
#define MARK_QUEUED 2u /* already in the next ring's list */

/* Applies one ring (grow_at: ngrow spans and their regions). */
static void apply_ring(const watershed* ws, uint32_t ngrow)
{
    for (uint32_t k = 0; k < ngrow; ++k) {
        const uint32_t i = ws->grow_at[k * 2], v = ws->grow_at[k * 2 + 1];
        ws->reg[i] = (uint16_t)(v >> 16);
        ws->steps[i] = (uint16_t)(v & 0xffff);
    }
}

/* The rings after the first max_rings at level 0, which run until nothing changes: a long corridor grown one
 * ring at a time would cost its length times its spans if every ring looked at every candidate, so each ring
 * looks only at the candidates next to a span that joined in the ring before (the only ones whose answer can have
 * changed). The same rings as full scans give. grow_at holds the last ring applied (ngrow spans). */
static NB_COLD NB_NOINLINE void grow_by_frontier(const watershed* ws, const uint32_t* cand, uint32_t ncand,
                                                 uint32_t ngrow)
{
    uint32_t* grow_at = ws->grow_at;
    uint32_t* ring_spans = ws->stack; /* free outside flood_region */
    uint8_t* mark = ws->mark;
    for (uint32_t k = 0; k < ncand; ++k)
        mark[cand[k]] = MARK_CAND;
    while (ngrow > 0) {
        uint32_t nring = 0;
        for (uint32_t k = 0; k < ngrow; ++k) {
            const uint32_t* nb = ws->nbr + (size_t)grow_at[k * 2] * 4;
            for (int dir = 0; dir < 4; ++dir) {
                const uint32_t a = nb[dir];
                if (a != NB_NO_SPAN && mark[a] == MARK_CAND && !ws->reg[a]) {
                    mark[a] = MARK_CAND | MARK_QUEUED;
                    ring_spans[nring++] = a;
                }
            }
        }
        ngrow = 0;
        for (uint32_t k = 0; k < nring; ++k) {
            const uint32_t i = ring_spans[k];
            mark[i] = MARK_CAND;
            const uint32_t v = nearest_region(ws, i);
            if (v) {
                grow_at[ngrow * 2] = i;
                grow_at[ngrow * 2 + 1] = v;
                ++ngrow;
            }
        }
        apply_ring(ws, ngrow);
    }
    for (uint32_t k = 0; k < ncand; ++k)
        mark[cand[k]] = 0;
}

/* Grows the regions over the spans listed in cand (all without a region), ring after ring: a span joins the
 * neighbouring region nearest to its core (nearest_region). Rings are computed from the state before the ring,
 * so the order of cand does not matter. At most max_rings rings, except at level 0, where it runs until nothing
 * changes (grow_by_frontier beyond max_rings). Removes the spans that joined from cand (keeping the order of the
 * rest) and returns its new length. */
static uint32_t grow_regions(const watershed* ws, uint32_t* cand, uint32_t ncand, int max_rings, int level)
{
    const uint16_t* reg = ws->reg;
    uint32_t* grow_at = ws->grow_at;
    for (int ring = 0; ncand > 0;) {
        uint32_t ngrow = 0;
        for (uint32_t k = 0; k < ncand; ++k) {
            const uint32_t v = nearest_region(ws, cand[k]);
            if (v) {
                grow_at[ngrow * 2] = cand[k];
                grow_at[ngrow * 2 + 1] = v;
                ++ngrow;
            }
        }
        if (ngrow == 0)
            break;
        apply_ring(ws, ngrow);
        uint32_t kept = 0;
        for (uint32_t k = 0; k < ncand; ++k)
            if (!reg[cand[k]])
                cand[kept++] = cand[k];
        ncand = kept;
        if (++ring >= max_rings) {
            if (level == 0 && ncand > 0) {
                grow_by_frontier(ws, cand, ncand, ngrow);
                kept = 0;
                for (uint32_t k = 0; k < ncand; ++k)
                    if (!reg[cand[k]])
                        cand[kept++] = cand[k];
                ncand = kept;
            }
            break;
        }
    }
    return ncand;
}

/* Floods a new region `id` depth-first from seed over the spans of the same area at depth >= level - 2. A span
 * next to (or diagonal to) another region is given back, so that regions meet where growth brings them together
 * rather than where a flood happened to run first. Returns whether any span stayed in the region. */
static NB_NOINLINE int flood_region(const watershed* ws, uint32_t seed, int level, uint16_t id)
{
    const nb_compact_heightfield* chf = ws->chf;
    const uint8_t* areas = chf->areas;
    const uint16_t* dist = chf->dist;
    uint16_t* reg = ws->reg;
    const uint8_t area = areas[seed];
    const int depth = level >= 2 ? level - 2 : 0;
    uint32_t* stack = ws->stack;
    uint32_t top = 0;
    stack[top++] = seed;
    reg[seed] = id;
    ws->steps[seed] = 0;
    int kept = 0;
    while (top) {
        const uint32_t i = stack[--top];
        const uint32_t* nb = ws->nbr + (size_t)i * 4;
        int foreign = 0;
        for (int dir = 0; dir < 4 && !foreign; ++dir) {
            const uint32_t a = nb[dir];
            if (a == NB_NO_SPAN || areas[a] != area)
                continue;
            const uint16_t r = reg[a];
            if (r & NB_BORDER_REG)
                continue;
            if (r != 0 && r != id) {
                foreign = 1;
                break;
            }
            const uint32_t b = ws->nbr[(size_t)a * 4 + ((dir + 1) & 3)];
            if (b == NB_NO_SPAN || areas[b] != area)
                continue;
            const uint16_t r2 = reg[b];
            if (r2 != 0 && r2 != id)
                foreign = 1;
        }
        if (foreign) {
            reg[i] = 0;
            continue;
        }
        kept = 1;
        for (int dir = 0; dir < 4; ++dir) {
            const uint32_t a = nb[dir];
            if (a == NB_NO_SPAN || areas[a] != area || reg[a] != 0 || dist[a] < depth)
                continue;
            reg[a] = id;
            ws->steps[a] = 0;
            stack[top++] = a;
        }
    }
    return kept;
}

/* Walkable spans by level pair (dist >> 1), deepest first; a counting sort keeps scan order in a pair. bucket
 * (top_pair + 2 zeros) ends as the end of each pair in by_level: pair top_pair - p ends at bucket[p] and starts at
 * the previous entry. (Out of line, as are the level and flood helpers, for V8's tiering: filter.c, ledge_row.) */
static NB_NOINLINE void sort_by_level(const nb_compact_heightfield* chf, uint32_t top_pair, uint32_t* bucket,
                                      uint32_t* by_level)
{
    const uint16_t* dist = chf->dist;
    const uint32_t n = chf->span_count;
    for (uint32_t i = 0; i < n; ++i)
        if (chf->areas[i] != NB_NULL_AREA)
            ++bucket[top_pair - nb_mini(dist[i] >> 1, (int)top_pair) + 1];
    for (uint32_t b = 1; b <= top_pair + 1; ++b)
        bucket[b] += bucket[b - 1];
    for (uint32_t i = 0; i < n; ++i)
        if (chf->areas[i] != NB_NULL_AREA)
            by_level[bucket[top_pair - nb_mini(dist[i] >> 1, (int)top_pair)]++] = i;
}

/* The candidates of a level into out (see nb_build_regions_watershed): a scan of every span when full, else the
 * level's own pair followed by what is left of the previous candidates. Returns their count. A function of its own
 * for V8's tiering (filter.c, ledge_row). */
static NB_NOINLINE uint32_t level_candidates(const watershed* ws, int full, int level, const uint32_t* by_level,
                                             const uint32_t* bucket, uint32_t top_pair, const uint32_t* cand,
                                             uint32_t ncand, uint32_t* out)
{
    const nb_compact_heightfield* chf = ws->chf;
    const uint16_t* reg = ws->reg;
    uint32_t m = 0;
    if (full) {
        const uint16_t* dist = chf->dist;
        for (uint32_t i = 0; i < chf->span_count; ++i)
            if (chf->areas[i] != NB_NULL_AREA && !reg[i] && dist[i] >= level)
                out[m++] = i;
    } else {
        const uint32_t p = top_pair - (uint32_t)(level >> 1);
        for (uint32_t k = p ? bucket[p - 1] : 0; k < bucket[p]; ++k)
            if (!reg[by_level[k]])
                out[m++] = by_level[k];
        for (uint32_t k = 0; k < ncand; ++k)
            if (!reg[cand[k]])
                out[m++] = cand[k];
    }
    return m;
}

nb_status nb_build_regions_watershed(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                     int32_t min_region_area, int32_t merge_region_area)
{
    static const char* fn = "nb_build_regions_watershed";
    nb_status st = nb_region_check_args(ctx, fn, chf, border_size, min_region_area, merge_region_area);
    if (st != NB_OK)
        return st;
    if (!chf->dist)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: chf->dist is NULL; call nb_build_distance_field first", fn);

    const uint32_t n = chf->span_count;
    const int top_level = (chf->max_distance + 1) & ~1;
    const uint32_t nbuckets = (uint32_t)(top_level >> 1) + 1;
    watershed ws = { chf, NULL, NULL, NULL, NULL, NULL, NULL };
    uint32_t* nbr = (uint32_t*)nb_alloc(ctx, (size_t)n * 4 * sizeof(uint32_t));
    ws.reg = (uint16_t*)nb_calloc(ctx, n, sizeof(uint16_t));
    ws.steps = (uint16_t*)nb_calloc(ctx, n, sizeof(uint16_t));
    ws.stack = (uint32_t*)nb_alloc(ctx, (size_t)n * sizeof(uint32_t));
    ws.grow_at = (uint32_t*)nb_alloc(ctx, (size_t)n * 2 * sizeof(uint32_t));
    ws.mark = (uint8_t*)nb_calloc(ctx, n, 1);
    uint32_t* by_level = (uint32_t*)nb_alloc(ctx, (size_t)n * sizeof(uint32_t));
    uint32_t* bucket = (uint32_t*)nb_calloc(ctx, nbuckets + 1, sizeof(uint32_t));
    uint32_t* cand = (uint32_t*)nb_alloc(ctx, (size_t)n * sizeof(uint32_t));
    uint32_t* cand_next = (uint32_t*)nb_alloc(ctx, (size_t)n * sizeof(uint32_t));
    if (!nbr || !ws.reg || !ws.steps || !ws.stack || !ws.grow_at || !ws.mark || !by_level || !bucket || !cand ||
        !cand_next) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory '%s' (%u)", fn,
                     !nbr ? "neighbours" : !ws.reg ? "reg" : !ws.steps ? "steps" : !ws.stack ? "stack"
                     : !ws.grow_at ? "grow" : !ws.mark ? "marks" : !by_level ? "levels" : !bucket ? "buckets"
                     : "candidates", n);
        goto cleanup;
    }
    nb_region_build_neighbours(chf, nbr);
    ws.nbr = nbr;

    uint16_t next_id = 1;
    nb_region_paint_border(chf, border_size, ws.reg, &next_id);

    const uint32_t top_pair = nbuckets - 1;
    sort_by_level(chf, top_pair, bucket, by_level);

    /* At least one pass, at level 0: a level made only of border spans (all corridors two cells wide) still
     * gets its regions. */
    uint32_t ncand = 0;
    int level = top_level;
    for (int step = 0; step == 0 || level > 0; ++step) {
        level = level >= 2 ? level - 2 : 0;
        st = nb_report(ctx, NB_STAGE_REGIONS, (uint32_t)(top_level - level), (uint32_t)nb_maxi(top_level, 1));
        if (st != NB_OK)
            goto cleanup;

        /* Candidates: every span without a region at depth >= level. Most levels add their own pair in front of
         * what earlier levels left over; every LEVELS_PER_SORT levels the list is rebuilt in scan order, which
         * decides the order new regions are seeded in. */
        const uint32_t m = level_candidates(&ws, step % LEVELS_PER_SORT == 0, level, by_level, bucket, top_pair, cand,
                                            ncand, cand_next);
        uint32_t* t = cand;
        cand = cand_next;
        cand_next = t;
        ncand = grow_regions(&ws, cand, m, EXPAND_ITERS, level);

        for (uint32_t k = 0; k < ncand; ++k) {
            if (ws.reg[cand[k]])
                continue;
            if (next_id > NB_MAX_REGION_ID) {
                st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: more than %d regions; bake in tiles", fn, NB_MAX_REGION_ID);
                goto cleanup;
            }
            if (flood_region(&ws, cand[k], level, next_id))
                ++next_id;
        }
        uint32_t kept = 0;
        for (uint32_t k = 0; k < ncand; ++k)
            if (!ws.reg[cand[k]])
                cand[kept++] = cand[k];
        ncand = kept;
    }

    /* Spans given back by the floods: grow the regions over them until nothing changes. */
    ncand = level_candidates(&ws, 1, 0, by_level, bucket, top_pair, NULL, 0, cand);
    grow_regions(&ws, cand, ncand, EXPAND_ITERS * 8, 0);

    st = nb_region_merge_and_filter(ctx, fn, chf, ws.reg, next_id, min_region_area, merge_region_area);
    if (st == NB_OK) {
        chf->border_size = border_size;
        for (uint32_t i = 0; i < n; ++i)
            chf->spans[i].reg = ws.reg[i];
    }

cleanup:
    nb_free(ctx, nbr);
    nb_free(ctx, ws.reg);
    nb_free(ctx, ws.steps);
    nb_free(ctx, ws.stack);
    nb_free(ctx, ws.grow_at);
    nb_free(ctx, ws.mark);
    nb_free(ctx, by_level);
    nb_free(ctx, bucket);
    nb_free(ctx, cand);
    nb_free(ctx, cand_next);
    return st;
}
