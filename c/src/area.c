/* Area marking on the compact heightfield: erosion by agent radius, median filter, area volumes (seed 002). */
#include "nb_internal.h"

#include <math.h>

/* Index of the neighbour of span i (column x, z) in direction dir; the link must exist. */
static inline uint32_t neighbour(const nb_compact_heightfield* chf, int x, int z, const nb_compact_span* s, int dir)
{
    const int nx = x + nb_dir_offset_x(dir), nz = z + nb_dir_offset_z(dir);
    return chf->cells[nx + nz * chf->width].index + (uint32_t)nb_span_con(s, dir);
}

static inline void relax(uint8_t* dist, uint32_t i, uint32_t from, int step)
{
    const int d = nb_mini((int)dist[from] + step, 255);
    if (d < dist[i])
        dist[i] = (uint8_t)d;
}

/* The rows of nb_erode_walkable_area's two passes, each a function of its own for V8's tiering (filter.c,
 * ledge_row). The forward pass also sets each span's start value (0 on the border, else "far"): every span it
 * relaxes from comes before it in scan order, so it was set already. The backward pass is the last to lower a
 * span's distance, so it also applies the threshold. */
static NB_NOINLINE void erode_forward_row(const nb_compact_heightfield* chf, uint8_t* dist, int z)
{
    const int w = chf->width;
    for (int x = 0; x < w; ++x) {
        const nb_compact_cell c = chf->cells[x + z * w];
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            const nb_compact_span* s = &chf->spans[i];
            /* a border span: unwalkable, or missing a link or a walkable neighbour in some direction */
            int inside = chf->areas[i] != NB_NULL_AREA;
            for (int dir = 0; dir < 4 && inside; ++dir)
                inside = nb_span_con(s, dir) != NB_NOT_CONNECTED &&
                         chf->areas[neighbour(chf, x, z, s, dir)] != NB_NULL_AREA;
            dist[i] = inside ? 0xff : 0;
            if (!inside)
                continue; /* nothing is below 0 */
            if (nb_span_con(s, 0) != NB_NOT_CONNECTED) {
                const uint32_t a = neighbour(chf, x, z, s, 0);
                relax(dist, i, a, 2);
                const nb_compact_span* as = &chf->spans[a];
                if (nb_span_con(as, 3) != NB_NOT_CONNECTED)
                    relax(dist, i, neighbour(chf, x - 1, z, as, 3), 3);
            }
            if (nb_span_con(s, 3) != NB_NOT_CONNECTED) {
                const uint32_t a = neighbour(chf, x, z, s, 3);
                relax(dist, i, a, 2);
                const nb_compact_span* as = &chf->spans[a];
                if (nb_span_con(as, 2) != NB_NOT_CONNECTED)
                    relax(dist, i, neighbour(chf, x, z - 1, as, 2), 3);
            }
        }
    }
}

static NB_NOINLINE void erode_backward_row(nb_compact_heightfield* chf, uint8_t* dist, int z, int threshold)
{
    const int w = chf->width;
    for (int x = w - 1; x >= 0; --x) {
        const nb_compact_cell c = chf->cells[x + z * w];
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            const nb_compact_span* s = &chf->spans[i];
            if (nb_span_con(s, 2) != NB_NOT_CONNECTED) {
                const uint32_t a = neighbour(chf, x, z, s, 2);
                relax(dist, i, a, 2);
                const nb_compact_span* as = &chf->spans[a];
                if (nb_span_con(as, 1) != NB_NOT_CONNECTED)
                    relax(dist, i, neighbour(chf, x + 1, z, as, 1), 3);
            }
            if (nb_span_con(s, 1) != NB_NOT_CONNECTED) {
                const uint32_t a = neighbour(chf, x, z, s, 1);
                relax(dist, i, a, 2);
                const nb_compact_span* as = &chf->spans[a];
                if (nb_span_con(as, 0) != NB_NOT_CONNECTED)
                    relax(dist, i, neighbour(chf, x, z + 1, as, 0), 3);
            }
            if (dist[i] < threshold)
                chf->areas[i] = NB_NULL_AREA; /* areas are not read by this pass */
        }
    }
}

nb_status nb_erode_walkable_area(nb_context* ctx, int32_t radius, nb_compact_heightfield* chf)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_erode_walkable_area: ctx is NULL");
    if (!chf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_erode_walkable_area: chf is NULL");
    if (radius < 0 || radius > 127)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "nb_erode_walkable_area: radius must be 0..127 cells (got %d)", radius);
    if (radius == 0 || chf->span_count == 0)
        return NB_OK;
    const int h = chf->height;
    uint8_t* dist = (uint8_t*)nb_alloc(ctx, chf->span_count);
    if (!dist)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_erode_walkable_area: out of memory 'dist' (%u)", chf->span_count);

    /* Chamfer distance to the border, 2 straight / 3 diagonal: a forward pass over the (-x), (-x,-z), (-z),
     * (+x,-z) neighbours, then a backward pass over (+x), (+x,+z), (+z), (-x,+z). Diagonals go through a
     * straight neighbour's link so they respect connectivity. Spans nearer than the radius become unwalkable. */
    for (int z = 0; z < h; ++z)
        erode_forward_row(chf, dist, z);
    for (int z = h - 1; z >= 0; --z)
        erode_backward_row(chf, dist, z, radius * 2);
    nb_free(ctx, dist);
    return NB_OK;
}

nb_status nb_median_filter_walkable_area(nb_context* ctx, nb_compact_heightfield* chf)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_median_filter_walkable_area: ctx is NULL");
    if (!chf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_median_filter_walkable_area: chf is NULL");
    const int w = chf->width, h = chf->height;
    uint8_t* out = (uint8_t*)nb_alloc(ctx, chf->span_count);
    if (!out)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_median_filter_walkable_area: out of memory 'areas' (%u)",
                       chf->span_count);
    for (int z = 0; z < h; ++z) {
        for (int x = 0; x < w; ++x) {
            const nb_compact_cell c = chf->cells[x + z * w];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const uint8_t own = chf->areas[i];
                if (own == NB_NULL_AREA) {
                    out[i] = own;
                    continue;
                }
                uint8_t v[9];
                for (int k = 0; k < 9; ++k)
                    v[k] = own;
                const nb_compact_span* s = &chf->spans[i];
                for (int dir = 0; dir < 4; ++dir) {
                    if (nb_span_con(s, dir) == NB_NOT_CONNECTED)
                        continue;
                    const uint32_t a = neighbour(chf, x, z, s, dir);
                    if (chf->areas[a] != NB_NULL_AREA)
                        v[dir * 2] = chf->areas[a];
                    const nb_compact_span* as = &chf->spans[a];
                    const int dir2 = (dir + 1) & 3;
                    if (nb_span_con(as, dir2) != NB_NOT_CONNECTED) {
                        const uint32_t b = neighbour(chf, x + nb_dir_offset_x(dir), z + nb_dir_offset_z(dir), as, dir2);
                        if (chf->areas[b] != NB_NULL_AREA)
                            v[dir * 2 + 1] = chf->areas[b];
                    }
                }
                for (int a = 1; a < 9; ++a) { /* insertion sort of nine values */
                    const uint8_t t = v[a];
                    int b = a - 1;
                    while (b >= 0 && v[b] > t) {
                        v[b + 1] = v[b];
                        --b;
                    }
                    v[b + 1] = t;
                }
                out[i] = v[4];
            }
        }
    }
    memcpy(chf->areas, out, chf->span_count);
    nb_free(ctx, out);
    return NB_OK;
}

/* Even-odd point-in-polygon test in xz (verts are xyz triples). */
static int point_in_poly_xz(const float* verts, uint32_t n, float px, float pz)
{
    int inside = 0;
    for (uint32_t i = 0, j = n - 1; i < n; j = i++) {
        const float* vi = &verts[i * 3];
        const float* vj = &verts[j * 3];
        if (((vi[2] > pz) != (vj[2] > pz)) && (px < (vj[0] - vi[0]) * (pz - vi[2]) / (vj[2] - vi[2]) + vi[0]))
            inside = !inside;
    }
    return inside;
}

/* Whether a polygon's points (xz) enclose anything: not all in a line, to within 1e-6 of its length (points in a
 * line enclose nothing, and the even-odd test flipped on rounding for cell centres on the line: a bake audit saw
 * such a volume carve cells along it). The line: from the first point to the one farthest from it. */
static int polygon_has_area(const float* verts, uint32_t n)
{
    double far2 = 0.0, dx = 0.0, dz = 0.0;
    for (uint32_t i = 1; i < n; ++i) {
        const double x = (double)verts[i * 3] - verts[0], z = (double)verts[i * 3 + 2] - verts[2];
        if (x * x + z * z > far2) {
            far2 = x * x + z * z;
            dx = x;
            dz = z;
        }
    }
    for (uint32_t i = 1; i < n; ++i) {
        const double x = (double)verts[i * 3] - verts[0], z = (double)verts[i * 3 + 2] - verts[2];
        const double cross = x * dz - z * dx; /* |d| times the point's distance from the line */
        if (cross * cross > 1e-12 * far2 * far2)
            return 1;
    }
    return 0;
}

nb_status nb_volume_bounds(nb_context* ctx, const char* fn, const nb_volume* v, float lo[3], float hi[3])
{
    if (!v)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: volume is NULL", fn);
    if (v->area > 63)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: volume.area must be 0..63 (got %u)", fn, (unsigned)v->area);
    /* Footprint box (xz) and height range of the volume. */
    switch (v->type) {
    case NB_VOLUME_BOX:
        for (int k = 0; k < 3; ++k) {
            if (!isfinite(v->bmin[k]) || !isfinite(v->bmax[k]))
                return nb_fail(ctx, NB_ERR_NONFINITE, "%s: box bounds must be finite", fn);
            if (v->bmin[k] > v->bmax[k])
                return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: box bmin[%d] (%g) > bmax[%d] (%g)", fn, k, v->bmin[k], k,
                               v->bmax[k]);
            lo[k] = v->bmin[k];
            hi[k] = v->bmax[k];
        }
        break;
    case NB_VOLUME_CYLINDER:
        if (!isfinite(v->center[0]) || !isfinite(v->center[1]) || !isfinite(v->center[2]) || !isfinite(v->radius) ||
            !isfinite(v->height))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: cylinder centre, radius and height must be finite", fn);
        if (v->radius < 0.0f || v->height < 0.0f)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: cylinder radius (%g) and height (%g) must be >= 0", fn,
                           v->radius, v->height);
        lo[0] = v->center[0] - v->radius;
        hi[0] = v->center[0] + v->radius;
        lo[1] = v->center[1];
        hi[1] = v->center[1] + v->height;
        lo[2] = v->center[2] - v->radius;
        hi[2] = v->center[2] + v->radius;
        break;
    case NB_VOLUME_CONVEX:
        if (!v->verts)
            return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: convex volume verts is NULL", fn);
        if (v->vert_count < 3)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: convex volume needs >= 3 vertices (got %u)", fn, v->vert_count);
        if (!isfinite(v->ymin) || !isfinite(v->ymax))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: convex ymin/ymax must be finite", fn);
        if (v->ymin > v->ymax)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: convex ymin (%g) > ymax (%g)", fn, v->ymin, v->ymax);
        lo[0] = hi[0] = v->verts[0];
        lo[2] = hi[2] = v->verts[2];
        for (uint32_t i = 0; i < v->vert_count; ++i) {
            const float* p = &v->verts[i * 3];
            if (!isfinite(p[0]) || !isfinite(p[2]))
                return nb_fail(ctx, NB_ERR_NONFINITE, "%s: convex vertex %u is not finite", fn, i);
            lo[0] = nb_minf(lo[0], p[0]);
            hi[0] = nb_maxf(hi[0], p[0]);
            lo[2] = nb_minf(lo[2], p[2]);
            hi[2] = nb_maxf(hi[2], p[2]);
        }
        lo[1] = v->ymin;
        hi[1] = v->ymax;
        break;
    default:
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: unknown volume type %d", fn, (int)v->type);
    }
    return NB_OK;
}

nb_status nb_mark_volume(nb_context* ctx, const nb_volume* v, nb_compact_heightfield* chf)
{
    static const char* fn = "nb_mark_volume";
    if (!v || !chf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !v ? "volume" : "chf");
    float lo[3], hi[3];
    nb_status st = nb_volume_bounds(ctx, fn, v, lo, hi);
    if (st != NB_OK)
        return st;

    /* Cells whose centre lies in the footprint box: centre of x is bmin + (x + 0.5) * cs. */
    const float cs = chf->cell_size, ch = chf->cell_height;
    const double fx0 = ceil((lo[0] - chf->bmin[0]) / cs - 0.5), fx1 = floor((hi[0] - chf->bmin[0]) / cs - 0.5);
    const double fz0 = ceil((lo[2] - chf->bmin[2]) / cs - 0.5), fz1 = floor((hi[2] - chf->bmin[2]) / cs - 0.5);
    if (fx1 < 0 || fz1 < 0 || fx0 >= chf->width || fz0 >= chf->height || fx0 > fx1 || fz0 > fz1)
        return NB_OK;
    if (v->type == NB_VOLUME_CONVEX && !polygon_has_area(v->verts, v->vert_count))
        return NB_OK;
    const int x0 = (int)fmax(fx0, 0), x1 = (int)fmin(fx1, chf->width - 1);
    const int z0 = (int)fmax(fz0, 0), z1 = (int)fmin(fz1, chf->height - 1);
    const float r2 = v->radius * v->radius;
    for (int z = z0; z <= z1; ++z) {
        for (int x = x0; x <= x1; ++x) {
            const float px = chf->bmin[0] + ((float)x + 0.5f) * cs;
            const float pz = chf->bmin[2] + ((float)z + 0.5f) * cs;
            if (v->type == NB_VOLUME_CYLINDER) {
                const float dx = px - v->center[0], dz = pz - v->center[2];
                if (dx * dx + dz * dz > r2)
                    continue;
            } else if (v->type == NB_VOLUME_CONVEX && !point_in_poly_xz(v->verts, v->vert_count, px, pz)) {
                continue;
            }
            const nb_compact_cell c = chf->cells[x + z * chf->width];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                if (chf->areas[i] == NB_NULL_AREA)
                    continue;
                const float y = chf->bmin[1] + (float)chf->spans[i].y * ch;
                if (y >= lo[1] && y <= hi[1])
                    chf->areas[i] = v->area;
            }
        }
    }
    return NB_OK;
}
