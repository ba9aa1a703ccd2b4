/* Walkable marking by slope and rasterization of triangles into the solid heightfield (seeds 001, 002). */
#include "nb_internal.h"

#include <math.h>

#define MAX_COLUMNS (1u << 28)
#define MAX_SPANS 0x7fffffffu

void nb_calc_grid_size(const float bmin[3], const float bmax[3], float cell_size, int32_t* width, int32_t* height)
{
    *width = (int32_t)((bmax[0] - bmin[0]) / cell_size + 0.5f);
    *height = (int32_t)((bmax[2] - bmin[2]) / cell_size + 0.5f);
}

nb_status nb_heightfield_create(nb_context* ctx, int32_t width, int32_t height, const float bmin[3],
                                const float bmax[3], float cell_size, float cell_height, nb_heightfield** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_heightfield_create: ctx is NULL");
    static const char* fn = "nb_heightfield_create";
    if (!out || !bmin || !bmax)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !out ? "out" : !bmin ? "bmin" : "bmax");
    *out = NULL;
    if (width <= 0 || height <= 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: grid size must be positive (got %d x %d)", fn, width, height);
    if ((uint64_t)width * (uint64_t)height > MAX_COLUMNS)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: grid of %d x %d columns exceeds the limit of 2^28", fn, width,
                       height);
    for (int k = 0; k < 3; ++k)
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: bmin.%c / bmax.%c (%g, %g) must be finite", fn, "xyz"[k], "xyz"[k],
                           bmin[k], bmax[k]);
    if (!(cell_size > 0.0f) || !(cell_height > 0.0f) || !isfinite(cell_size) || !isfinite(cell_height))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: cell sizes must be finite and > 0 (got %g, %g)", fn, cell_size,
                       cell_height);
    for (int k = 0; k < 3; ++k)
        if (!(bmax[k] >= bmin[k]))
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: bmax.%c (%g) is below bmin.%c (%g)", fn, "xyz"[k], bmax[k],
                           "xyz"[k], bmin[k]);

    nb_heightfield* hf = (nb_heightfield*)nb_calloc(ctx, 1, sizeof(nb_heightfield));
    if (!hf)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'hf'", fn);
    hf->width = width;
    hf->height = height;
    memcpy(hf->bmin, bmin, sizeof(hf->bmin));
    memcpy(hf->bmax, bmax, sizeof(hf->bmax));
    hf->cell_size = cell_size;
    hf->cell_height = cell_height;
    hf->columns = (uint32_t*)nb_calloc(ctx, (size_t)width * (size_t)height, sizeof(uint32_t));
    /* Start the pool at a few spans per column: most levels need one to three. */
    uint64_t cap = (uint64_t)width * (uint64_t)height;
    if (cap < 1024)
        cap = 1024;
    if (cap > 1u << 22)
        cap = 1u << 22;
    hf->spans = (nb_span*)nb_alloc(ctx, (size_t)cap * sizeof(nb_span));
    if (!hf->columns || !hf->spans) {
        nb_heightfield_destroy(ctx, hf);
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'columns' (%d x %d)", fn, width, height);
    }
    hf->span_capacity = (uint32_t)cap;
    hf->span_top = 1; /* index 0 means "none" */
    *out = hf;
    return NB_OK;
}

void nb_heightfield_destroy(nb_context* ctx, nb_heightfield* hf)
{
    if (!hf)
        return;
    nb_free(ctx, hf->columns);
    nb_free(ctx, hf->spans);
    nb_free(ctx, hf->resume);
    nb_free(ctx, hf);
}

/* Hands out a pool entry: a freed one first, else a new one, growing the pool by doubling. */
static uint32_t alloc_span(nb_context* ctx, nb_heightfield* hf)
{
    if (hf->free_head) {
        uint32_t idx = hf->free_head;
        hf->free_head = hf->spans[idx].next;
        return idx;
    }
    if (hf->span_top == hf->span_capacity) {
        if (hf->span_capacity >= MAX_SPANS)
            return 0;
        uint64_t cap = (uint64_t)hf->span_capacity * 2;
        if (cap > MAX_SPANS)
            cap = MAX_SPANS;
        if (cap * sizeof(nb_span) > SIZE_MAX)
            return 0;
        nb_span* grown = (nb_span*)nb_alloc(ctx, (size_t)cap * sizeof(nb_span));
        if (!grown)
            return 0;
        memcpy(grown, hf->spans, (size_t)hf->span_top * sizeof(nb_span));
        nb_free(ctx, hf->spans);
        hf->spans = grown;
        hf->span_capacity = (uint32_t)cap;
    }
    return hf->span_top++;
}

/* Inserts [smin, smax) into a column, swallowing every span it overlaps or touches. When the merged top is
 * within merge_thr of a swallowed span's top, the higher area id wins (walkable floors survive overlap with
 * slightly lower unwalkable geometry). The first span swallowed holds the result (it sits where the merged span
 * belongs: every span before it lies below); the others go back to the pool.
 * A level of many storeys fills each column bottom up, and walking every column from its lowest span made
 * rasterization quadratic in the storeys. So once a walk passes RESUME_AFTER spans, the heightfield keeps per
 * column the span added last (hf->resume): it is live (spans are freed only here, when they merge into the span
 * added), and an insertion wholly above it starts there, past spans that all lie below. Same spans either way. */
#define RESUME_AFTER 8

static nb_status add_span(nb_context* ctx, nb_heightfield* hf, uint32_t col, uint32_t smin, uint32_t smax,
                          uint32_t area, int merge_thr)
{
    uint32_t prev = 0;
    uint32_t cur = hf->columns[col];
    uint32_t keep = 0;
    uint32_t walked = 0;
    if (hf->resume) {
        const uint32_t last = hf->resume[col];
        if (last && hf->spans[last].smax < smin) {
            prev = last;
            cur = hf->spans[last].next;
        }
    }
    while (cur) {
        nb_span* c = &hf->spans[cur];
        if (c->smin > smax)
            break; /* the rest of the column is above */
        if (c->smax < smin) {
            prev = cur; /* entirely below: keep walking */
            cur = c->next;
            ++walked;
            continue;
        }
        if (c->smin < smin)
            smin = c->smin;
        if (c->smax > smax)
            smax = c->smax;
        if (nb_absi((int)smax - (int)c->smax) <= merge_thr && c->area > area)
            area = c->area;
        const uint32_t next = c->next;
        if (!keep) {
            keep = cur;
        } else {
            c->next = hf->free_head;
            hf->free_head = cur;
            hf->span_count--;
            hf->spans[keep].next = next;
        }
        cur = next;
    }
    if (walked > RESUME_AFTER && !hf->resume) /* no room for it: walks stay long, nothing else changes */
        hf->resume = (uint32_t*)nb_calloc(ctx, (size_t)hf->width * (size_t)hf->height, sizeof(uint32_t));
    if (keep) {
        nb_span* s = &hf->spans[keep];
        s->smin = smin;
        s->smax = smax;
        s->area = area;
        if (hf->resume)
            hf->resume[col] = keep;
        return NB_OK;
    }
    const uint32_t idx = alloc_span(ctx, hf);
    if (!idx)
        return hf->span_top >= MAX_SPANS
                   ? nb_fail(ctx, NB_ERR_TOO_LARGE, "nb_rasterize_triangles: more than 2^31 spans")
                   : nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_rasterize_triangles: out of memory 'spans' (%u)",
                             hf->span_capacity);
    nb_span* s = &hf->spans[idx];
    s->smin = smin;
    s->smax = smax;
    s->area = area;
    if (prev) {
        s->next = hf->spans[prev].next;
        hf->spans[prev].next = idx;
    } else {
        s->next = hf->columns[col];
        hf->columns[col] = idx;
    }
    hf->span_count++;
    if (hf->resume)
        hf->resume[col] = idx;
    return NB_OK;
}

nb_status nb_heightfield_add_span(nb_context* ctx, nb_heightfield* hf, int32_t x, int32_t z, uint32_t smin,
                                  uint32_t smax, uint8_t area, int32_t flag_merge_threshold)
{
    if (!hf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_heightfield_add_span: hf is NULL");
    if (x < 0 || z < 0 || x >= hf->width || z >= hf->height)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "nb_heightfield_add_span: cell (%d, %d) is outside the %d x %d grid",
                       x, z, hf->width, hf->height);
    if (smin >= smax || smax > NB_SPAN_MAX_HEIGHT || area > 63)
        return nb_fail(ctx, NB_ERR_INVALID_ARG,
                       "nb_heightfield_add_span: span [%u, %u) area %u is invalid (need smin < smax <= %d, area <= 63)",
                       smin, smax, (unsigned)area, NB_SPAN_MAX_HEIGHT);
    return add_span(ctx, hf, (uint32_t)(x + z * hf->width), smin, smax, area, flag_merge_threshold);
}

void nb_clear_unwalkable_triangles(float max_slope_deg, const float* verts, const uint32_t* tris, uint32_t tri_count,
                                   uint8_t* areas)
{
    /* The unit normal's y is the cosine of the slope: walkable when above cos(max slope). */
    const float walkable_y = cosf(max_slope_deg / 180.0f * 3.14159265358979f);
    for (uint32_t i = 0; i < tri_count; ++i) {
        const uint32_t i0 = tris ? tris[(size_t)i * 3 + 0] : i * 3 + 0;
        const uint32_t i1 = tris ? tris[(size_t)i * 3 + 1] : i * 3 + 1;
        const uint32_t i2 = tris ? tris[(size_t)i * 3 + 2] : i * 3 + 2;
        const float* v0 = &verts[(size_t)i0 * 3];
        const float* v1 = &verts[(size_t)i1 * 3];
        const float* v2 = &verts[(size_t)i2 * 3];
        const float e0[3] = { v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2] };
        const float e1[3] = { v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2] };
        const float n[3] = { e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0] };
        const float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(len > 0.0f) || !(n[1] / len > walkable_y))
            areas[i] = NB_NULL_AREA;
    }
}

/* Scratch polygons. A triangle clipped to a cell has at most 7 corners; far from the origin, where float spacing
 * approaches the cell size, cuts coincide and pieces degenerate, and clipping such a piece again can give more.
 * split_poly keeps at most POLY_MAX corners (what it drops is then a sliver of rounding), and every buffer has
 * POLY_SLOTS: room for a split piece plus the two crossings a sweep adds. */
#define POLY_MAX 16
#define POLY_SLOTS (POLY_MAX + 2)

static inline void push_corner(float* out, int* n, const float* p)
{
    if (*n < POLY_MAX) {
        memcpy(&out[*n * 3], p, 3 * sizeof(float));
        ++*n;
    }
}

/* Splits convex polygon `in` (n <= POLY_SLOTS corners) by the plane axis = cut into the part below (out_lo) and
 * above (out_hi). Vertices on the plane go to both sides. */
static inline void split_poly(const float* in, int n, float* out_lo, int* n_lo, float* out_hi, int* n_hi, float cut, int axis)
{
    float d[POLY_SLOTS];
    for (int i = 0; i < n; ++i)
        d[i] = cut - in[i * 3 + axis];
    int lo = 0, hi = 0;
    for (int i = 0, j = n - 1; i < n; j = i, ++i) {
        const int j_lo = d[j] >= 0.0f, i_lo = d[i] >= 0.0f;
        if (j_lo != i_lo) {
            /* The edge crosses the plane: its intersection starts/ends both pieces. */
            const float t = d[j] / (d[j] - d[i]);
            float p[3];
            p[0] = in[j * 3 + 0] + (in[i * 3 + 0] - in[j * 3 + 0]) * t;
            p[1] = in[j * 3 + 1] + (in[i * 3 + 1] - in[j * 3 + 1]) * t;
            p[2] = in[j * 3 + 2] + (in[i * 3 + 2] - in[j * 3 + 2]) * t;
            push_corner(out_lo, &lo, p);
            push_corner(out_hi, &hi, p);
            /* The vertex itself, unless it lies on the plane (already added as the intersection). */
            if (d[i] > 0.0f)
                push_corner(out_lo, &lo, &in[i * 3]);
            else if (d[i] < 0.0f)
                push_corner(out_hi, &hi, &in[i * 3]);
        } else {
            if (d[i] >= 0.0f) {
                push_corner(out_lo, &lo, &in[i * 3]);
                if (d[i] != 0.0f)
                    continue;
            }
            push_corner(out_hi, &hi, &in[i * 3]);
        }
    }
    *n_lo = lo;
    *n_hi = hi;
}

typedef struct raster_grid {
    float bmin[3], bmax[3];
    float cs, ics, ich, by;
    int w, h;
} raster_grid;

/* ---- plane sweep: split_poly's pieces without re-clipping the whole remainder at every cut ----
 *
 * Clipping a polygon by the cuts c0 < c1 < ... one after another (split_poly) costs a pass over every remaining
 * vertex per cut plus the copies, and it was about half of the bake. When the polygon's coordinate along the cut
 * axis rises (weakly) from its minimum to its maximum and then falls back along the cycle, each cut crosses
 * exactly two edges, one on the rising chain ("up") and one on the falling chain ("dn"), and after the cut the
 * remainder is those two crossing points plus the original vertices beyond the cut. So the next cut crosses
 * either an original edge or the edge from a crossing point to the next original vertex: the sweep walks the two
 * chains and computes each crossing with split_poly's operands in split_poly's order (edge j -> i in cycle
 * direction, t = d[j] / (d[j] - d[i]), p = j + (i - j) * t), so every coordinate, hence every span, is
 * bit-identical to clipping. (Where a vertex lies exactly on a cut split_poly duplicates or drops vertices, and a
 * row polygon of a vertical wall can be non-unimodal by float noise: there the sweep hands what is left to
 * split_poly, which carries on from that cut.) The state lives in scalars: this is the innermost loop of the
 * bake, and a sweep state in memory stalled on store-to-load forwarding. */

/* One cell's piece spans its y range, snapped outward to the cell_height grid. Kept out of line: it is called
 * from five places, and inlined copies cost ~2 KB of wasm for no measurable speed. */
static NB_NOINLINE nb_status emit_span(nb_context* ctx, nb_heightfield* hf, const raster_grid* g, int x, int z, float smin,
                                  float smax, uint32_t area, int merge_thr)
{
    smin -= g->bmin[1];
    smax -= g->bmin[1];
    if (smax < 0.0f || smin > g->by)
        return NB_OK;
    if (smin < 0.0f)
        smin = 0.0f;
    if (smax > g->by)
        smax = g->by;
    const int ismin = nb_clampi((int)floorf(smin * g->ich), 0, NB_SPAN_MAX_HEIGHT - 1); /* room for ismax above */
    const int ismax = nb_clampi((int)ceilf(smax * g->ich), ismin + 1, NB_SPAN_MAX_HEIGHT);
    return add_span(ctx, hf, (uint32_t)(x + z * g->w), (uint32_t)ismin, (uint32_t)ismax, area, merge_thr);
}

/* The far edge of cell i along an axis starting at bmin: the cut that ends the cell, computed as every cut is. */
static inline float far_edge(float bmin, int i, float cs)
{
    return (bmin + (float)i * cs) + cs;
}

/* Clips what is left of a row (poly, n vertices, largest x xmax) into the cells x .. x1 with split_poly. */
static nb_status clip_cells(nb_context* ctx, nb_heightfield* hf, const raster_grid* g, const float* poly, int n,
                            float xmax, int x, int x1, int z, uint32_t area, int merge_thr)
{
    /* Cell x1 takes the rest uncut only when the row ends in it (see rasterize_row); else xend = x1 + 1 takes it. */
    const int xend = x1 + (xmax > far_edge(g->bmin[0], x1, g->cs));
    float buf[3][POLY_SLOTS * 3];
    float *row = buf[0], *cell = buf[1], *tmp = buf[2], *sw;
    memcpy(row, poly, (size_t)n * 3 * sizeof(float));
    int n_left = n;
    for (; x <= x1; ++x) {
        int n_cell;
        if (x == xend) {
            sw = cell; /* the row ends in this cell: the rest of it (cutting would reproduce it exactly) */
            cell = row;
            row = sw;
            n_cell = n_left;
            n_left = 0;
        } else {
            const float cx = g->bmin[0] + (float)x * g->cs;
            split_poly(row, n_left, cell, &n_cell, tmp, &n_left, cx + g->cs, 0);
            sw = row;
            row = tmp;
            tmp = sw;
        }
        if (n_cell < 3 || x < 0)
            continue;
        float smin = cell[1], smax = cell[1];
        for (int i = 1; i < n_cell; ++i) {
            smin = nb_minf(smin, cell[i * 3 + 1]);
            smax = nb_maxf(smax, cell[i * 3 + 1]);
        }
        const nb_status st = emit_span(ctx, hf, g, x, z, smin, smax, area, merge_thr);
        if (st != NB_OK)
            return st;
    }
    return NB_OK;
}

/* One row's polygon (n >= 3 vertices in cycle order, bounding box b = minx, maxx, miny, maxy) into spans, cell
 * by cell along x. */
static nb_status rasterize_row(nb_context* ctx, nb_heightfield* hf, const raster_grid* g, const float* row, int n,
                               const float b[4], int z, uint32_t area, int merge_thr)
{
    /* (clamped in float first: a vertex 1e8 cells away is beyond int, whose conversion would be undefined) */
    int x0 = (int)nb_clampf((b[0] - g->bmin[0]) * g->ics, -2.0f, (float)g->w);
    int x1 = (int)nb_clampf((b[1] - g->bmin[0]) * g->ics, -2.0f, (float)g->w);
    if (x1 < 0 || x0 >= g->w)
        return NB_OK;
    x0 = nb_clampi(x0, -1, g->w - 1);
    x1 = nb_clampi(x1, 0, g->w - 1);
    /* Cell x1 takes all the rest of the row uncut only when the row ends in it: cutting at its far edge would then
     * reproduce the rest exactly. When the row reaches past that edge (x1 was clamped to the grid's last column,
     * or the float index rounded down), clipping cuts there too and drops what lies beyond; the sweep checks that
     * at the end and hands it to clip_cells (a rare path). The single-cell test branches on the integers first:
     * it is often mispredicted, and waiting on the float edge made each miss dearer (+3% rasterize time). */
    if (x0 == x1 && !(b[1] > far_edge(g->bmin[0], x1, g->cs)))
        return emit_span(ctx, hf, g, x0, z, b[2], b[3], area, merge_thr); /* a third of the rows on typical levels */

    /* The chains along x, as coordinates. */
    float ux[POLY_SLOTS], uy[POLY_SLOTS], dx[POLY_SLOTS], dy[POLY_SLOTS];
    int imin = 0;
    for (int i = 1; i < n; ++i)
        if (row[i * 3] < row[imin * 3])
            imin = i;
    int nup = 0, ndn = 0, top = imin;
    ux[nup] = row[imin * 3];
    uy[nup++] = row[imin * 3 + 1];
    for (;;) {
        const int nx = top + 1 == n ? 0 : top + 1;
        if (nx == imin || row[nx * 3] < row[top * 3])
            break;
        ux[nup] = row[nx * 3];
        uy[nup++] = row[nx * 3 + 1];
        top = nx;
    }
    for (int j = top + 1 == n ? 0 : top + 1, pj = top; j != imin; pj = j, j = j + 1 == n ? 0 : j + 1) {
        if (row[j * 3] > row[pj * 3])
            return clip_cells(ctx, hf, g, row, n, b[1], x0, x1, z, area, merge_thr); /* not unimodal */
        dx[ndn] = row[j * 3];
        dy[ndn++] = row[j * 3 + 1];
    }

    int ku = 0, kd = ndn - 1, started = 0; /* next vertex up / last vertex down not yet behind a cut */
    float pux = 0.0f, puy = 0.0f, pdx = 0.0f, pdy = 0.0f; /* the last cut's crossings (once started) */
    int x = x0;
    for (; x < x1; ++x) {
        const float c = (g->bmin[0] + (float)x * g->cs) + g->cs;
        float cux = ux[0], cuy = uy[0], cdx = ux[0], cdy = uy[0]; /* the last point below c on each chain */
        float ylo = INFINITY, yhi = -INFINITY;
        int cnt = 0;
        if (started) {
            if (!(pux < c) || !(pdx < c))
                goto fallback;
            cux = pux;
            cuy = puy;
            cdx = pdx;
            cdy = pdy;
            ylo = nb_minf(puy, pdy);
            yhi = nb_maxf(puy, pdy);
            cnt = 2;
        }
        int k = ku;
        for (; k < nup && ux[k] < c; ++k, ++cnt) {
            cux = ux[k];
            cuy = uy[k];
            ylo = nb_minf(ylo, cuy);
            yhi = nb_maxf(yhi, cuy);
        }
        if (k == nup) {
            /* Even the maximum is below c (the falling chain lies below it): the rest is this cell's piece. */
            for (int i = 0; i <= kd; ++i, ++cnt) {
                ylo = nb_minf(ylo, dy[i]);
                yhi = nb_maxf(yhi, dy[i]);
            }
            return cnt < 3 || x < 0 ? NB_OK : emit_span(ctx, hf, g, x, z, ylo, yhi, area, merge_thr);
        }
        if (ux[k] == c)
            goto fallback;
        if (k == 0 && !started)
            continue; /* the minimum is above c: nothing below */
        int m = kd;
        for (; m >= 0 && dx[m] < c; --m, ++cnt) {
            cdx = dx[m];
            cdy = dy[m];
            ylo = nb_minf(ylo, cdy);
            yhi = nb_maxf(yhi, cdy);
        }
        if (m >= 0 && dx[m] == c)
            goto fallback;
        const float hux = ux[k], huy = uy[k];
        const float hdx = m >= 0 ? dx[m] : ux[nup - 1], hdy = m >= 0 ? dy[m] : uy[nup - 1];
        /* The crossings as split_poly computes them: edge cu -> hu going up, edge hd -> cd coming down. */
        const float au = c - cux, bu = c - hux, tu = au / (au - bu);
        const float ad = c - hdx, bd = c - cdx, td = ad / (ad - bd);
        pux = cux + (hux - cux) * tu;
        puy = cuy + (huy - cuy) * tu;
        pdx = hdx + (cdx - hdx) * td;
        pdy = hdy + (cdy - hdy) * td;
        started = 1;
        ku = k;
        kd = m;
        ylo = nb_minf(ylo, nb_minf(puy, pdy));
        yhi = nb_maxf(yhi, nb_maxf(puy, pdy));
        if (x < 0)
            continue;
        const nb_status st = emit_span(ctx, hf, g, x, z, ylo, yhi, area, merge_thr);
        if (st != NB_OK)
            return st;
    }
    if (b[1] > far_edge(g->bmin[0], x1, g->cs))
        goto fallback; /* the row goes on past cell x1: cut it there */
    {
        /* The last cell holds the rest of the row. */
        float ylo = INFINITY, yhi = -INFINITY;
        int cnt = 0;
        if (started) {
            ylo = nb_minf(puy, pdy);
            yhi = nb_maxf(puy, pdy);
            cnt = 2;
        }
        for (int k = ku; k < nup; ++k, ++cnt) {
            ylo = nb_minf(ylo, uy[k]);
            yhi = nb_maxf(yhi, uy[k]);
        }
        for (int k = 0; k <= kd; ++k, ++cnt) {
            ylo = nb_minf(ylo, dy[k]);
            yhi = nb_maxf(yhi, dy[k]);
        }
        return cnt < 3 ? NB_OK : emit_span(ctx, hf, g, x1, z, ylo, yhi, area, merge_thr);
    }

fallback : {
    /* What is left, in cycle order, goes to split_poly from this cell on (z is not read along x). */
    float rest[POLY_SLOTS * 3];
    int nr = 0;
    if (started) {
        rest[0] = pux;
        rest[1] = puy;
        rest[2] = 0.0f;
        nr = 1;
    }
    for (int k = ku; k < nup; ++k, ++nr) {
        rest[nr * 3] = ux[k];
        rest[nr * 3 + 1] = uy[k];
        rest[nr * 3 + 2] = 0.0f;
    }
    for (int k = 0; k <= kd; ++k, ++nr) {
        rest[nr * 3] = dx[k];
        rest[nr * 3 + 1] = dy[k];
        rest[nr * 3 + 2] = 0.0f;
    }
    if (started) {
        rest[nr * 3] = pdx;
        rest[nr * 3 + 1] = pdy;
        rest[nr * 3 + 2] = 0.0f;
        ++nr;
    }
    return clip_cells(ctx, hf, g, rest, nr, b[1], x, x1, z, area, merge_thr);
}
}

static inline void box_add(float b[4], const float* p)
{
    b[0] = nb_minf(b[0], p[0]);
    b[1] = nb_maxf(b[1], p[0]);
    b[2] = nb_minf(b[2], p[1]);
    b[3] = nb_maxf(b[3], p[1]);
}

/* Clips one triangle into rows (z), then each row into cells (x); each cell's piece becomes a span from its
 * lowest to its highest point. The rows come from the same sweep as the cells in rasterize_row, along z.
 * Out of line for V8's tiering (filter.c, ledge_row): inlined, the triangle loop's optimization was started
 * during the first bake but could not be used by it. */
static NB_NOINLINE nb_status rasterize_tri(nb_context* ctx, nb_heightfield* hf, const raster_grid* g, const float* v0,
                               const float* v1, const float* v2, uint32_t area, int merge_thr)
{
    float tmin[3], tmax[3];
    for (int k = 0; k < 3; ++k) {
        tmin[k] = nb_minf(v0[k], nb_minf(v1[k], v2[k]));
        tmax[k] = nb_maxf(v0[k], nb_maxf(v1[k], v2[k]));
    }
    if (tmin[0] > g->bmax[0] || tmax[0] < g->bmin[0] || tmin[1] > g->bmax[1] || tmax[1] < g->bmin[1] ||
        tmin[2] > g->bmax[2] || tmax[2] < g->bmin[2])
        return NB_OK;

    /* Row range; -1 lets the first row's cut remove what lies before the grid. */
    /* (clamped in float before the conversion, as in rasterize_row) */
    const int z0 = (int)nb_clampf((tmin[2] - g->bmin[2]) * g->ics, -1.0f, (float)(g->h - 1));
    const int z1 = nb_maxi((int)nb_clampf((tmax[2] - g->bmin[2]) * g->ics, 0.0f, (float)(g->h - 1)), 0);
    /* Row z1 takes all the rest uncut only when the triangle ends in it; otherwise (z1 clamped to the grid's last
     * row, or a rounded-down index) clipping cuts at its far edge as well and drops what lies beyond: the sweep
     * checks that at the end and hands it to split_poly (integers first, as in rasterize_row). */
    float tri[9];
    memcpy(&tri[0], v0, 3 * sizeof(float));
    memcpy(&tri[3], v1, 3 * sizeof(float));
    memcpy(&tri[6], v2, 3 * sizeof(float));
    if (z0 == z1 && !(tmax[2] > far_edge(g->bmin[2], z1, g->cs))) { /* one row takes the whole triangle */
        const float b[4] = { tmin[0], tmax[0], tmin[1], tmax[1] };
        return rasterize_row(ctx, hf, g, tri, 3, b, z0, area, merge_thr);
    }

    /* The chains along z: a triangle is always unimodal; at most one vertex is on the way down. */
    const float* tv[3] = { &tri[0], &tri[3], &tri[6] };
    const int imin = v0[2] <= v1[2] ? (v0[2] <= v2[2] ? 0 : 2) : (v1[2] <= v2[2] ? 1 : 2);
    const int i1 = imin == 2 ? 0 : imin + 1, i2 = i1 == 2 ? 0 : i1 + 1;
    const float* up[3] = { tv[imin], tv[i1], tv[i2] };
    const float* dn = tv[i2];
    int nup = 3, ndn = 0;
    if (tv[i2][2] < tv[i1][2]) {
        nup = 2;
        ndn = 1;
    }

    float row[POLY_SLOTS * 3], rest[POLY_SLOTS * 3];
    int n_rest = 0;
    int ku = 0, kd = ndn - 1, started = 0;
    float pu[3] = { 0.0f, 0.0f, 0.0f }, pd[3] = { 0.0f, 0.0f, 0.0f };
    int z = z0;
    for (; z < z1; ++z) {
        const float c = (g->bmin[2] + (float)z * g->cs) + g->cs;
        const float* cu = up[0]; /* the last point below c on each chain */
        const float* cd = up[0];
        if (started) {
            if (!(pu[2] < c) || !(pd[2] < c))
                goto fallback;
            cu = pu;
            cd = pd;
        }
        int k = ku;
        while (k < nup && up[k][2] < c)
            cu = up[k++];
        if (k == nup)
            break; /* even the maximum is below c: all the rest is row z, and later rows get nothing */
        if (up[k][2] == c)
            goto fallback;
        if (k == 0 && !started)
            continue; /* the minimum is above c */
        int m = kd;
        if (m >= 0 && dn[2] < c) {
            cd = dn;
            m = -1;
        }
        if (m >= 0 && dn[2] == c)
            goto fallback;
        const float* hu = up[k];
        const float* hd = m >= 0 ? dn : up[nup - 1];

        /* The row, in cycle order: previous crossings, the vertices passed up, the new crossings, the vertices
         * passed down. */
        float b[4] = { INFINITY, -INFINITY, INFINITY, -INFINITY };
        int n = 0;
        if (started) {
            memcpy(&row[0], pu, sizeof(pu));
            box_add(b, pu);
            n = 1;
        }
        for (int i = ku; i < k; ++i, ++n) {
            memcpy(&row[n * 3], up[i], 3 * sizeof(float));
            box_add(b, up[i]);
        }
        /* The crossings as split_poly computes them: edge cu -> hu going up, edge hd -> cd coming down. */
        float qu[3], qd[3];
        {
            const float a = c - cu[2], d = c - hu[2], t = a / (a - d);
            qu[0] = cu[0] + (hu[0] - cu[0]) * t;
            qu[1] = cu[1] + (hu[1] - cu[1]) * t;
            qu[2] = cu[2] + (hu[2] - cu[2]) * t;
        }
        {
            const float a = c - hd[2], d = c - cd[2], t = a / (a - d);
            qd[0] = hd[0] + (cd[0] - hd[0]) * t;
            qd[1] = hd[1] + (cd[1] - hd[1]) * t;
            qd[2] = hd[2] + (cd[2] - hd[2]) * t;
        }
        memcpy(&row[n * 3], qu, sizeof(qu));
        memcpy(&row[n * 3 + 3], qd, sizeof(qd));
        box_add(b, qu);
        box_add(b, qd);
        n += 2;
        if (m < kd) { /* the vertex on the way down was passed */
            memcpy(&row[n * 3], dn, 3 * sizeof(float));
            box_add(b, dn);
            ++n;
        }
        if (started) {
            memcpy(&row[n * 3], pd, sizeof(pd));
            box_add(b, pd);
            ++n;
        }
        memcpy(pu, qu, sizeof(qu));
        memcpy(pd, qd, sizeof(qd));
        started = 1;
        ku = k;
        kd = m;
        if (z < 0)
            continue;
        const nb_status st = rasterize_row(ctx, hf, g, row, n, b, z, area, merge_thr);
        if (st != NB_OK)
            return st;
    }
    if (tmax[2] > far_edge(g->bmin[2], z1, g->cs))
        goto fallback; /* the triangle goes on past row z1 (so the loop ran to z1): cut it there */
    {
        /* What is left: the last row (z1), or row z when the loop stopped early. */
        float b[4] = { INFINITY, -INFINITY, INFINITY, -INFINITY };
        int n = 0;
        if (started) {
            memcpy(&row[0], pu, sizeof(pu));
            box_add(b, pu);
            n = 1;
        }
        for (int i = ku; i < nup; ++i, ++n) {
            memcpy(&row[n * 3], up[i], 3 * sizeof(float));
            box_add(b, up[i]);
        }
        if (kd >= 0) {
            memcpy(&row[n * 3], dn, 3 * sizeof(float));
            box_add(b, dn);
            ++n;
        }
        if (started) {
            memcpy(&row[n * 3], pd, sizeof(pd));
            box_add(b, pd);
            ++n;
        }
        if (n < 3 || z < 0)
            return NB_OK;
        return rasterize_row(ctx, hf, g, row, n, b, z, area, merge_thr);
    }

fallback:
    /* What is left, in cycle order, goes to split_poly from row z on. */
    if (started)
        memcpy(&rest[n_rest++ * 3], pu, sizeof(pu));
    for (int i = ku; i < nup; ++i)
        memcpy(&rest[n_rest++ * 3], up[i], 3 * sizeof(float));
    if (kd >= 0)
        memcpy(&rest[n_rest++ * 3], dn, 3 * sizeof(float));
    if (started)
        memcpy(&rest[n_rest++ * 3], pd, sizeof(pd));
    {
        float tmp[POLY_SLOTS * 3];
        float *r = rest, *t = tmp, *o = row, *sw;
        const int zend = z1 + (tmax[2] > far_edge(g->bmin[2], z1, g->cs)); /* z1 + 1: cut z1 too */
        for (; z <= z1; ++z) {
            int n_row;
            if (z == zend) {
                sw = o; /* the triangle ends in this row: all that is left (cutting would reproduce it exactly) */
                o = r;
                r = sw;
                n_row = n_rest;
                n_rest = 0;
            } else {
                const float cz = g->bmin[2] + (float)z * g->cs;
                split_poly(r, n_rest, o, &n_row, t, &n_rest, cz + g->cs, 2);
                sw = r;
                r = t;
                t = sw;
            }
            if (n_row < 3 || z < 0)
                continue;
            float b[4] = { o[0], o[0], o[1], o[1] };
            for (int i = 1; i < n_row; ++i)
                box_add(b, &o[i * 3]);
            const nb_status st = rasterize_row(ctx, hf, g, o, n_row, b, z, area, merge_thr);
            if (st != NB_OK)
                return st;
        }
    }
    return NB_OK;
}

/* A triangle with no area (its corners in a line to within float rounding, or two of them the same) has no surface:
 * clipped into the columns it crossed, its segment stood as a pole or a bump (a bake audit: a hole of 1.4 m2 around
 * an invisible vertical segment). In line: the sine of the angle at a is at most 1e-6 (a triangle 10 m long at
 * most 10 um thick). */
int nb_triangle_has_area(const float a[3], const float b[3], const float c[3])
{
    const double ux = (double)b[0] - a[0], uy = (double)b[1] - a[1], uz = (double)b[2] - a[2];
    const double vx = (double)c[0] - a[0], vy = (double)c[1] - a[1], vz = (double)c[2] - a[2];
    const double nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    return nx * nx + ny * ny + nz * nz > 1e-12 * (ux * ux + uy * uy + uz * uz) * (vx * vx + vy * vy + vz * vz);
}

nb_status nb_rasterize_triangles(nb_context* ctx, const float* verts, uint32_t vert_count, const uint32_t* tris,
                                 const uint8_t* areas, uint32_t tri_count, nb_heightfield* hf,
                                 int32_t flag_merge_threshold)
{
    (void)vert_count;
    if (!verts || !areas || !hf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_rasterize_triangles: %s is NULL",
                       !verts ? "verts" : !areas ? "areas" : "hf");
    raster_grid g;
    memcpy(g.bmin, hf->bmin, sizeof(g.bmin));
    memcpy(g.bmax, hf->bmax, sizeof(g.bmax));
    g.cs = hf->cell_size;
    g.ics = 1.0f / hf->cell_size;
    g.ich = 1.0f / hf->cell_height;
    g.by = hf->bmax[1] - hf->bmin[1];
    g.w = hf->width;
    g.h = hf->height;
    for (uint32_t i = 0; i < tri_count; ++i) {
        const uint32_t i0 = tris ? tris[(size_t)i * 3 + 0] : i * 3 + 0;
        const uint32_t i1 = tris ? tris[(size_t)i * 3 + 1] : i * 3 + 1;
        const uint32_t i2 = tris ? tris[(size_t)i * 3 + 2] : i * 3 + 2;
        const float* a = &verts[(size_t)i0 * 3];
        const float* b = &verts[(size_t)i1 * 3];
        const float* c = &verts[(size_t)i2 * 3];
        nb_status st = NB_OK;
        if (nb_triangle_has_area(a, b, c))
            st = rasterize_tri(ctx, hf, &g, a, b, c, areas[i] & 63, flag_merge_threshold);
        if (st != NB_OK)
            return st;
        if ((i & 4095) == 4095) {
            st = nb_report(ctx, NB_STAGE_RASTERIZE, i + 1, tri_count);
            if (st != NB_OK)
                return st;
        }
    }
    /* The stage ends at done == total (nb_report drops it when the count is a multiple of the step: said). */
    return nb_report(ctx, NB_STAGE_RASTERIZE, tri_count, tri_count);
}

nb_status nb_heightfield_occupancy(nb_context* ctx, const nb_heightfield* hf, uint32_t* words, size_t word_count,
                                   size_t* words_needed, int32_t dims[3])
{
    static const char* fn = "nb_heightfield_occupancy";
    if (!hf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: hf is NULL", fn);
    /* The bounds' layers, and more where a span reaches above them: a surface exactly at bmax[1] lies on a layer
     * boundary and rasterizes into the layer above it (span tops round up). Cutting it off would lose the top of
     * the level's highest floors. */
    int depth = (int)ceilf((hf->bmax[1] - hf->bmin[1]) / hf->cell_height);
    for (uint64_t c = 0, n = (uint64_t)hf->width * (uint64_t)hf->height; c < n; ++c)
        for (uint32_t s = hf->columns[c]; s; s = hf->spans[s].next)
            depth = nb_maxi(depth, (int)hf->spans[s].smax);
    depth = nb_clampi(depth, 1, NB_SPAN_MAX_HEIGHT);
    const uint64_t bits = (uint64_t)hf->width * (uint64_t)hf->height * (uint64_t)depth;
    const uint64_t need = (bits + 31) / 32;
    if (dims) {
        dims[0] = hf->width;
        dims[1] = depth;
        dims[2] = hf->height;
    }
    if (need > SIZE_MAX / sizeof(uint32_t))
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: %d x %d x %d voxels do not fit in memory", fn, hf->width, depth,
                       hf->height);
    if (words_needed)
        *words_needed = (size_t)need;
    if (!words || word_count < need)
        return nb_fail(ctx, NB_ERR_BUFFER_TOO_SMALL, "%s: need %llu words, got %llu", fn, (unsigned long long)need,
                       (unsigned long long)(words ? word_count : 0));
    memset(words, 0, (size_t)need * sizeof(uint32_t));
    const uint64_t slice = (uint64_t)hf->width * (uint64_t)hf->height;
    for (int z = 0; z < hf->height; ++z) {
        for (int x = 0; x < hf->width; ++x) {
            const uint64_t col = (uint64_t)x + (uint64_t)z * (uint64_t)hf->width;
            for (uint32_t s = hf->columns[col]; s; s = hf->spans[s].next) {
                const int top = nb_mini((int)hf->spans[s].smax, depth);
                for (int y = (int)hf->spans[s].smin; y < top; ++y) {
                    const uint64_t i = col + slice * (uint64_t)y;
                    words[i >> 5] |= 1u << (i & 31);
                }
            }
        }
    }
    return NB_OK;
}
