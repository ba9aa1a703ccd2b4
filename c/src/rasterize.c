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
    static const char* fn = "nb_heightfield_create";
    if (!out || !bmin || !bmax)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !out ? "out" : !bmin ? "bmin" : "bmax");
    *out = NULL;
    if (width <= 0 || height <= 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: grid size must be positive (got %d x %d)", fn, width, height);
    if ((uint64_t)width * (uint64_t)height > MAX_COLUMNS)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: grid of %d x %d columns exceeds the limit of 2^28", fn, width,
                       height);
    if (!(cell_size > 0.0f) || !(cell_height > 0.0f))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: cell sizes must be > 0 (got %g, %g)", fn, cell_size, cell_height);
    if (!(bmax[1] >= bmin[1]))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: bmax.y (%g) is below bmin.y (%g)", fn, bmax[1], bmin[1]);

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
 * slightly lower unwalkable geometry). */
static nb_status add_span(nb_context* ctx, nb_heightfield* hf, uint32_t col, uint32_t smin, uint32_t smax,
                          uint32_t area, int merge_thr)
{
    uint32_t prev = 0;
    uint32_t cur = hf->columns[col];
    while (cur) {
        nb_span* c = &hf->spans[cur];
        if (c->smin > smax)
            break; /* the rest of the column is above */
        if (c->smax < smin) {
            prev = cur; /* entirely below: keep walking */
            cur = c->next;
            continue;
        }
        if (c->smin < smin)
            smin = c->smin;
        if (c->smax > smax)
            smax = c->smax;
        if (nb_absi((int)smax - (int)c->smax) <= merge_thr && c->area > area)
            area = c->area;
        const uint32_t next = c->next;
        c->next = hf->free_head;
        hf->free_head = cur;
        hf->span_count--;
        if (prev)
            hf->spans[prev].next = next;
        else
            hf->columns[col] = next;
        cur = next;
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
        const uint32_t i0 = tris ? tris[i * 3 + 0] : i * 3 + 0;
        const uint32_t i1 = tris ? tris[i * 3 + 1] : i * 3 + 1;
        const uint32_t i2 = tris ? tris[i * 3 + 2] : i * 3 + 2;
        const float* v0 = &verts[i0 * 3];
        const float* v1 = &verts[i1 * 3];
        const float* v2 = &verts[i2 * 3];
        const float e0[3] = { v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2] };
        const float e1[3] = { v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2] };
        const float n[3] = { e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0] };
        const float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(len > 0.0f) || !(n[1] / len > walkable_y))
            areas[i] = NB_NULL_AREA;
    }
}

/* Splits convex polygon `in` by the plane axis = cut into the part below (out_lo) and above (out_hi).
 * Vertices on the plane go to both sides. Polygons here have at most 7 vertices (a triangle cut twice
 * per axis), so 12 slots suffice. */
static inline void split_poly(const float* in, int n, float* out_lo, int* n_lo, float* out_hi, int* n_hi, float cut, int axis)
{
    float d[12];
    for (int i = 0; i < n; ++i)
        d[i] = cut - in[i * 3 + axis];
    int lo = 0, hi = 0;
    for (int i = 0, j = n - 1; i < n; j = i, ++i) {
        const int j_lo = d[j] >= 0.0f, i_lo = d[i] >= 0.0f;
        if (j_lo != i_lo) {
            /* The edge crosses the plane: its intersection starts/ends both pieces. */
            const float t = d[j] / (d[j] - d[i]);
            float* p = &out_lo[lo * 3];
            p[0] = in[j * 3 + 0] + (in[i * 3 + 0] - in[j * 3 + 0]) * t;
            p[1] = in[j * 3 + 1] + (in[i * 3 + 1] - in[j * 3 + 1]) * t;
            p[2] = in[j * 3 + 2] + (in[i * 3 + 2] - in[j * 3 + 2]) * t;
            memcpy(&out_hi[hi * 3], p, 3 * sizeof(float));
            ++lo;
            ++hi;
            /* The vertex itself, unless it lies on the plane (already added as the intersection). */
            if (d[i] > 0.0f) {
                memcpy(&out_lo[lo * 3], &in[i * 3], 3 * sizeof(float));
                ++lo;
            } else if (d[i] < 0.0f) {
                memcpy(&out_hi[hi * 3], &in[i * 3], 3 * sizeof(float));
                ++hi;
            }
        } else {
            if (d[i] >= 0.0f) {
                memcpy(&out_lo[lo * 3], &in[i * 3], 3 * sizeof(float));
                ++lo;
                if (d[i] != 0.0f)
                    continue;
            }
            memcpy(&out_hi[hi * 3], &in[i * 3], 3 * sizeof(float));
            ++hi;
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

/* Clips one triangle into rows (z), then columns (x); each piece becomes a span from its lowest to its
 * highest point, snapped outward to the cell_height grid. */
static nb_status rasterize_tri(nb_context* ctx, nb_heightfield* hf, const raster_grid* g, const float* v0,
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
    int z0 = nb_clampi((int)((tmin[2] - g->bmin[2]) * g->ics), -1, g->h - 1);
    int z1 = nb_clampi((int)((tmax[2] - g->bmin[2]) * g->ics), 0, g->h - 1);

    float buf[4][12 * 3];
    float *rest = buf[0], *row = buf[1], *cell = buf[2], *tmp = buf[3];
    memcpy(&rest[0], v0, 3 * sizeof(float));
    memcpy(&rest[3], v1, 3 * sizeof(float));
    memcpy(&rest[6], v2, 3 * sizeof(float));
    int n_rest = 3;

    for (int z = z0; z <= z1; ++z) {
        int n_row;
        float* sw;
        if (z == z1) {
            /* The last row holds everything that is left: cutting would reproduce it exactly. */
            sw = row;
            row = rest;
            rest = sw;
            n_row = n_rest;
            n_rest = 0;
        } else {
            const float cz = g->bmin[2] + (float)z * g->cs;
            split_poly(rest, n_rest, row, &n_row, tmp, &n_rest, cz + g->cs, 2);
            sw = rest;
            rest = tmp;
            tmp = sw;
        }
        if (n_row < 3 || z < 0)
            continue;

        float minx = row[0], maxx = row[0];
        for (int i = 1; i < n_row; ++i) {
            minx = nb_minf(minx, row[i * 3]);
            maxx = nb_maxf(maxx, row[i * 3]);
        }
        int x0 = (int)((minx - g->bmin[0]) * g->ics);
        int x1 = (int)((maxx - g->bmin[0]) * g->ics);
        if (x1 < 0 || x0 >= g->w)
            continue;
        x0 = nb_clampi(x0, -1, g->w - 1);
        x1 = nb_clampi(x1, 0, g->w - 1);

        int n_left = n_row;
        for (int x = x0; x <= x1; ++x) {
            int n_cell;
            if (x == x1) {
                sw = cell; /* last column: the rest of the row, as above */
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
            smin -= g->bmin[1];
            smax -= g->bmin[1];
            if (smax < 0.0f || smin > g->by)
                continue;
            if (smin < 0.0f)
                smin = 0.0f;
            if (smax > g->by)
                smax = g->by;
            const int ismin = nb_clampi((int)floorf(smin * g->ich), 0, NB_SPAN_MAX_HEIGHT);
            const int ismax = nb_clampi((int)ceilf(smax * g->ich), ismin + 1, NB_SPAN_MAX_HEIGHT);
            nb_status st = add_span(ctx, hf, (uint32_t)(x + z * g->w), (uint32_t)ismin, (uint32_t)ismax, area, merge_thr);
            if (st != NB_OK)
                return st;
        }
    }
    return NB_OK;
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
        const uint32_t i0 = tris ? tris[i * 3 + 0] : i * 3 + 0;
        const uint32_t i1 = tris ? tris[i * 3 + 1] : i * 3 + 1;
        const uint32_t i2 = tris ? tris[i * 3 + 2] : i * 3 + 2;
        nb_status st = rasterize_tri(ctx, hf, &g, &verts[i0 * 3], &verts[i1 * 3], &verts[i2 * 3], areas[i] & 63,
                                     flag_merge_threshold);
        if (st != NB_OK)
            return st;
        if ((i & 4095) == 4095) {
            st = nb_report(ctx, NB_STAGE_RASTERIZE, i + 1, tri_count);
            if (st != NB_OK)
                return st;
        }
    }
    return NB_OK;
}

nb_status nb_heightfield_occupancy(nb_context* ctx, const nb_heightfield* hf, uint32_t* words, size_t word_count,
                                   size_t* words_needed, int32_t dims[3])
{
    static const char* fn = "nb_heightfield_occupancy";
    if (!hf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: hf is NULL", fn);
    int depth = (int)ceilf((hf->bmax[1] - hf->bmin[1]) / hf->cell_height);
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
