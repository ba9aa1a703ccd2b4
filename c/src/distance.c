/* Distance field (seed 000): how far each span lies from the nearest region border, the terrain the watershed
 * partition floods. Chamfer distance, 2 straight / 3 diagonal, then a 3x3 box blur. */
#include "region_internal.h"

static inline int min_int(int a, int b) { return a < b ? a : b; }
static inline int max_int(int a, int b) { return a > b ? a : b; }

/* Forward pass, fused with the border test: a span starts at 0 when it lacks one of four linked neighbours of
 * its own area, else "far"; then it takes the (-x), (-x,-z), (-z), (+x,-z) neighbours, already final in scan
 * order, into account. Diagonals go through a straight neighbour's link so they respect connectivity. */
/* (Row by row: each row a call of a function of its own, for V8's tiering; see filter.c, ledge_row.) */
static NB_NOINLINE void chamfer_forward_row(const nb_compact_heightfield* chf, uint16_t* d, int z)
{
    const int w = chf->width;
    const nb_compact_cell* cells = chf->cells;
    const nb_compact_span* spans = chf->spans;
    const uint8_t* areas = chf->areas;
    for (int x = 0; x < w; ++x) {
        const int col = x + z * w;
        const nb_compact_cell c = cells[col];
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            const nb_compact_span* s = &spans[i];
            const uint8_t area = areas[i];
            int same = 0;
            for (int dir = 0; dir < 4; ++dir)
                if (nb_span_con(s, dir) != NB_NOT_CONNECTED)
                    same += areas[nb_region_neighbour(chf, col, s, dir)] == area;
            if (same != 4) {
                d[i] = 0;
                continue;
            }
            /* Interior: all four links exist, so the straight neighbours do. */
            int v = 0xffff;
            const uint32_t a = cells[col - 1].index + (uint32_t)nb_span_con(s, 0);
            v = min_int(v, d[a] + 2);
            if (nb_span_con(&spans[a], 3) != NB_NOT_CONNECTED)
                v = min_int(v, d[cells[col - 1 - w].index + (uint32_t)nb_span_con(&spans[a], 3)] + 3);
            const uint32_t b = cells[col - w].index + (uint32_t)nb_span_con(s, 3);
            v = min_int(v, d[b] + 2);
            if (nb_span_con(&spans[b], 2) != NB_NOT_CONNECTED)
                v = min_int(v, d[cells[col - w + 1].index + (uint32_t)nb_span_con(&spans[b], 2)] + 3);
            d[i] = (uint16_t)v;
        }
    }
}

static void chamfer_forward(const nb_compact_heightfield* chf, uint16_t* d)
{
    for (int z = 0; z < chf->height; ++z)
        chamfer_forward_row(chf, d, z);
}

/* Blur of one row: the 3x3 mean of the spans more than one straight step (2) from a border, as recastnavigation
 * blurs (its boxBlur with radius 1), so that the watershed floods the same levels; a missing neighbour counts as
 * the span itself, so edges are not pulled down. Needs the rows z-1..z+1 of d final. */
static NB_NOINLINE void blur_row(const nb_compact_heightfield* chf, const uint16_t* d, uint16_t* out, int z)
{
    const int w = chf->width;
    const int keep_at_most = 2;
    for (int x = 0; x < w; ++x) {
        const int col = x + z * w;
        const nb_compact_cell c = chf->cells[col];
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            const int own = d[i];
            int v = own;
            if (own > keep_at_most) {
                const nb_compact_span* s = &chf->spans[i];
                int sum = own;
                for (int dir = 0; dir < 4; ++dir) {
                    if (nb_span_con(s, dir) == NB_NOT_CONNECTED) {
                        sum += own * 2; /* the straight neighbour and the diagonal after it */
                        continue;
                    }
                    const uint32_t a = nb_region_neighbour(chf, col, s, dir);
                    sum += d[a];
                    const int dir2 = (dir + 1) & 3;
                    const nb_compact_span* as = &chf->spans[a];
                    if (nb_span_con(as, dir2) != NB_NOT_CONNECTED)
                        sum += d[nb_region_neighbour(chf, col + nb_dir_offset_x(dir) + nb_dir_offset_z(dir) * w, as,
                                                     dir2)];
                    else
                        sum += own;
                }
                v = (sum + 5) / 9;
            }
            out[i] = (uint16_t)v;
        }
    }
}

/* Backward pass: the (+x), (+x,+z), (+z), (-x,+z) neighbours, in reverse scan order. Returns the row's largest
 * final distance. */
static NB_NOINLINE uint16_t chamfer_backward_row(const nb_compact_heightfield* chf, uint16_t* d, int z)
{
    const int w = chf->width;
    const nb_compact_cell* cells = chf->cells;
    const nb_compact_span* spans = chf->spans;
    int row_max = 0;
    for (int x = w - 1; x >= 0; --x) {
        const int col = x + z * w;
        const nb_compact_cell c = cells[col];
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            int v = d[i];
            if (v == 0)
                continue;
            /* d > 0: an interior span, all four links exist. */
            const nb_compact_span* s = &spans[i];
            const uint32_t a = cells[col + 1].index + (uint32_t)nb_span_con(s, 2);
            v = min_int(v, d[a] + 2);
            if (nb_span_con(&spans[a], 1) != NB_NOT_CONNECTED)
                v = min_int(v, d[cells[col + 1 + w].index + (uint32_t)nb_span_con(&spans[a], 1)] + 3);
            const uint32_t b = cells[col + w].index + (uint32_t)nb_span_con(s, 1);
            v = min_int(v, d[b] + 2);
            if (nb_span_con(&spans[b], 0) != NB_NOT_CONNECTED)
                v = min_int(v, d[cells[col + w - 1].index + (uint32_t)nb_span_con(&spans[b], 0)] + 3);
            d[i] = (uint16_t)v;
            row_max = max_int(row_max, v);
        }
    }
    return (uint16_t)row_max;
}

/* The backward pass, and the blur: once row z is final, so is the 3x3 neighbourhood of row z+1, which is blurred
 * right away while it is still in cache. Returns the largest distance before the blur: the watershed's top level
 * is taken from it, as recastnavigation takes it (the blur can only lower a maximum, and where it lowers it
 * across an even number the flood's levels, and so its regions, come out otherwise). */
static uint16_t chamfer_backward_blur(const nb_compact_heightfield* chf, uint16_t* d, uint16_t* out)
{
    const int h = chf->height;
    uint16_t max_dist = 0;
    for (int z = h - 1; z >= 0; --z) {
        const uint16_t m = chamfer_backward_row(chf, d, z);
        max_dist = m > max_dist ? m : max_dist;
        if (z + 1 < h)
            blur_row(chf, d, out, z + 1);
    }
    if (h > 0)
        blur_row(chf, d, out, 0);
    return max_dist;
}

nb_status nb_build_distance_field(nb_context* ctx, nb_compact_heightfield* chf)
{
    static const char* fn = "nb_build_distance_field";
    if (!ctx || !chf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !ctx ? "ctx" : "chf");
    const uint32_t n = chf->span_count;
    nb_status st = NB_OK;
    uint16_t* raw = (uint16_t*)nb_alloc(ctx, (size_t)n * sizeof(uint16_t));
    uint16_t* out = (uint16_t*)nb_alloc(ctx, (size_t)n * sizeof(uint16_t));
    if (!raw || !out) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory '%s' (%u)", fn, !raw ? "src" : "dist", n);
        goto cleanup;
    }

    chamfer_forward(chf, raw);
    const uint16_t max_dist = chamfer_backward_blur(chf, raw, out);

    nb_free(ctx, chf->dist);
    chf->dist = out;
    chf->max_distance = max_dist;
    out = NULL;

cleanup:
    nb_free(ctx, raw);
    nb_free(ctx, out);
    return st;
}
