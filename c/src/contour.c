/* Contours: trace region borders, simplify, merge holes (seed 002).
 *
 * Each region's border is walked edge by edge on the compact heightfield, giving a raw outline with one point
 * per cell edge. The outline is then reduced to the points where the region on the other side changes, and
 * refined again where it runs along walls until every raw point lies within max_error of it (Douglas-Peucker
 * style insertion of the farthest point). Holes (negatively wound loops) are bridged into their region's outline
 * so that later stages see one polygon per region. Same semantics as recastnavigation's RecastContour. */
#include "nb_internal.h"

#include <math.h>
#include <stdlib.h>

#define FN_ "nb_build_contours"

/* ---- a growable buffer of (x, y, z, flags) points ---- */

typedef struct point_buf {
    int32_t* v;
    size_t n;   /* points */
    size_t cap; /* points */
} point_buf;

static int point_buf_reserve(nb_context* ctx, point_buf* b, size_t points)
{
    if (points <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < points)
        cap *= 2;
    if (cap > SIZE_MAX / (4 * sizeof(int32_t)))
        return 0;
    int32_t* v = (int32_t*)nb_alloc(ctx, cap * 4 * sizeof(int32_t));
    if (!v)
        return 0;
    if (b->n)
        memcpy(v, b->v, b->n * 4 * sizeof(int32_t));
    nb_free(ctx, b->v);
    b->v = v;
    b->cap = cap;
    return 1;
}

static inline void point_set(int32_t* dst, int32_t x, int32_t y, int32_t z, int32_t w)
{
    dst[0] = x;
    dst[1] = y;
    dst[2] = z;
    dst[3] = w;
}

/* ---- neighbourhood of a span ---- */

static inline uint32_t neighbour(const nb_compact_heightfield* chf, int x, int z, const nb_compact_span* s, int dir)
{
    const int nx = x + nb_dir_offset_x(dir), nz = z + nb_dir_offset_z(dir);
    return chf->cells[nx + nz * chf->width].index + (uint32_t)nb_span_con(s, dir);
}

/* Bit d set = the edge of the span towards direction d separates its region from something else (another
 * region, a tile border region, unwalkable space or the grid edge). Spans outside any traceable region get 0. */
static void mark_region_edges(const nb_compact_heightfield* chf, uint8_t* edges)
{
    const int w = chf->width, h = chf->height;
    for (int z = 0; z < h; ++z) {
        for (int x = 0; x < w; ++x) {
            const nb_compact_cell c = chf->cells[x + z * w];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const nb_compact_span* s = &chf->spans[i];
                if (s->reg == 0 || (s->reg & NB_BORDER_REG)) {
                    edges[i] = 0;
                    continue;
                }
                uint8_t inner = 0;
                for (int dir = 0; dir < 4; ++dir)
                    if (nb_span_con(s, dir) != NB_NOT_CONNECTED && chf->spans[neighbour(chf, x, z, s, dir)].reg == s->reg)
                        inner |= (uint8_t)(1u << dir);
                edges[i] = (uint8_t)(inner ^ 0xfu);
            }
        }
    }
}

/* Height of the grid corner shared by span i and its neighbours in directions dir and dir+1: the highest floor
 * among the (up to) four spans around it, so the outline never dips under a step. Also tells whether the corner
 * lies on a straight stretch of the tile border (two cells of the same border region side by side, two interior
 * cells of one area on the other side): the polygon stage removes such vertices, as the neighbouring tile has
 * its own. */
static int corner_height(const nb_compact_heightfield* chf, int x, int z, uint32_t i, int dir, int* on_tile_border)
{
    const int dir2 = (dir + 1) & 3;
    const nb_compact_span* s = &chf->spans[i];
    int y = s->y;
    /* region + area of the four cells in turn around the corner: self, across dir, diagonal, across dir2 */
    uint32_t key[4] = { 0, 0, 0, 0 };
    key[0] = (uint32_t)s->reg | ((uint32_t)chf->areas[i] << 16);
    if (nb_span_con(s, dir) != NB_NOT_CONNECTED) {
        const int ax = x + nb_dir_offset_x(dir), az = z + nb_dir_offset_z(dir);
        const uint32_t a = neighbour(chf, x, z, s, dir);
        const nb_compact_span* as = &chf->spans[a];
        y = nb_maxi(y, as->y);
        key[1] = (uint32_t)as->reg | ((uint32_t)chf->areas[a] << 16);
        if (nb_span_con(as, dir2) != NB_NOT_CONNECTED) {
            const uint32_t d = neighbour(chf, ax, az, as, dir2);
            y = nb_maxi(y, chf->spans[d].y);
            key[2] = (uint32_t)chf->spans[d].reg | ((uint32_t)chf->areas[d] << 16);
        }
    }
    if (nb_span_con(s, dir2) != NB_NOT_CONNECTED) {
        const int bx = x + nb_dir_offset_x(dir2), bz = z + nb_dir_offset_z(dir2);
        const uint32_t b = neighbour(chf, x, z, s, dir2);
        const nb_compact_span* bs = &chf->spans[b];
        y = nb_maxi(y, bs->y);
        key[3] = (uint32_t)bs->reg | ((uint32_t)chf->areas[b] << 16);
        if (nb_span_con(bs, dir) != NB_NOT_CONNECTED) {
            const uint32_t d = neighbour(chf, bx, bz, bs, dir);
            y = nb_maxi(y, chf->spans[d].y);
            key[2] = (uint32_t)chf->spans[d].reg | ((uint32_t)chf->areas[d] << 16);
        }
    }
    *on_tile_border = 0;
    for (int r = 0; r < 4; ++r) {
        const uint32_t a = key[r], b = key[(r + 1) & 3], c = key[(r + 2) & 3], d = key[(r + 3) & 3];
        const int same_border_pair = a == b && (a & NB_BORDER_REG);
        const int interior_pair = !((c | d) & NB_BORDER_REG) && (c >> 16) == (d >> 16);
        if (same_border_pair && interior_pair && a && b && c && d) {
            *on_tile_border = 1;
            break;
        }
    }
    return y;
}

/* ---- 1. trace: walk the border of span i's region, keeping the region on the right hand ---- */

/* Appends one point per border edge: the corner at the end of the edge in walking order, with the region
 * across the edge in the low bits. Clears the walked edges so the loop is traced once. Out of line, as is
 * simplify_outline, for V8's tiering (filter.c, ledge_row): called once per contour, they reach optimized code
 * within the first bake, and nb_build_contours is left small enough to optimize cheaply. */
static NB_NOINLINE nb_status trace_region_border(nb_context* ctx, const nb_compact_heightfield* chf,
                                                 uint8_t* edges, int x, int z, uint32_t i, point_buf* raw)
{
    int dir = 0;
    while (!(edges[i] & (1u << dir)))
        ++dir;
    const int start_dir = dir;
    const uint32_t start = i;
    const uint8_t area = chf->areas[i];
    /* A closed walk visits each (span, direction) state at most once; the bound only guards inconsistent links. */
    for (size_t guard = 4 * (size_t)chf->span_count + 4; guard; --guard) {
        const nb_compact_span* s = &chf->spans[i];
        if (edges[i] & (1u << dir)) {
            int on_tile_border;
            const int y = corner_height(chf, x, z, i, dir, &on_tile_border);
            int32_t flags = 0;
            if (nb_span_con(s, dir) != NB_NOT_CONNECTED) {
                const uint32_t n = neighbour(chf, x, z, s, dir);
                flags = chf->spans[n].reg;
                if (chf->areas[n] != area)
                    flags |= NB_CONTOUR_AREA_BORDER;
            }
            if (on_tile_border)
                flags |= NB_CONTOUR_BORDER_VERTEX;
            if (!point_buf_reserve(ctx, raw, raw->n + 1))
                return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'raw_verts' (%zu)", raw->n + 1);
            /* end corner of the edge: -x edge ends at (x, z+1), +z at (x+1, z+1), +x at (x+1, z), -z at (x, z) */
            point_set(&raw->v[raw->n * 4], x + (dir == 1 || dir == 2), y, z + (dir == 0 || dir == 1), flags);
            raw->n++;
            edges[i] &= (uint8_t)~(1u << dir);
            dir = (dir + 1) & 3; /* try the next edge of the same span */
        } else {
            /* Same region that way: step over and look back along the border we came from. */
            const int con = nb_span_con(s, dir);
            if (con == NB_NOT_CONNECTED)
                break;
            x += nb_dir_offset_x(dir);
            z += nb_dir_offset_z(dir);
            i = chf->cells[x + z * chf->width].index + (uint32_t)con;
            dir = (dir + 3) & 3;
        }
        if (i == start && dir == start_dir)
            break;
    }
    return NB_OK;
}

/* ---- 2. simplify ---- */

/* Squared distance from (x, z) to the segment (ax, az)-(bx, bz). */
static float dist_sq_point_segment(int x, int z, int ax, int az, int bx, int bz)
{
    const float sx = (float)(bx - ax), sz = (float)(bz - az);
    const float len_sq = sx * sx + sz * sz;
    float t = sx * (float)(x - ax) + sz * (float)(z - az);
    if (len_sq > 0)
        t /= len_sq;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    const float dx = (float)ax + t * sx - (float)x, dz = (float)az + t * sz - (float)z;
    return dx * dx + dz * dz;
}

/* (bx, bz) comes after (ax, az) in x-then-z order. Segments are always scanned from their smaller end so the
 * two regions sharing a wall-less stretch pick the same points from it. */
static inline int lex_after(int ax, int az, int bx, int bz) { return bx > ax || (bx == ax && bz > az); }

/* The raw edge starting at a point with these flags may get extra vertices: it is a wall or an area border,
 * not a portal to another region of the same area (whose ends must match the neighbour's). */
static inline int refinable(int32_t flags)
{
    return (flags & NB_CONTOUR_REG_MASK) == 0 || (flags & NB_CONTOUR_AREA_BORDER);
}

static inline void insert_point(point_buf* simp, size_t at, const int32_t* raw, size_t ri)
{
    memmove(&simp->v[(at + 1) * 4], &simp->v[at * 4], (simp->n - at) * 4 * sizeof(int32_t));
    point_set(&simp->v[at * 4], raw[ri * 4 + 0], raw[ri * 4 + 1], raw[ri * 4 + 2], (int32_t)ri);
    simp->n++;
}

/* Fills simp with the simplified outline of raw. simp must hold raw->n points: each simplified point is a
 * distinct raw point. While simplifying, the 4th value is the raw index; at the end it becomes the flags. */
static NB_NOINLINE void simplify_outline(const point_buf* raw, point_buf* simp, float max_error, int max_edge_len)
{
    const int32_t* p = raw->v;
    const size_t pn = raw->n;
    simp->n = 0;

    /* Fixed points: where the region (or the area-border state) across the outline changes. */
    int has_portals = 0;
    for (size_t k = 0; k < pn && !has_portals; ++k)
        has_portals = (p[k * 4 + 3] & NB_CONTOUR_REG_MASK) != 0;
    if (has_portals) {
        for (size_t k = 0; k < pn; ++k) {
            const size_t next = (k + 1) % pn;
            if ((p[k * 4 + 3] ^ p[next * 4 + 3]) & (NB_CONTOUR_REG_MASK | NB_CONTOUR_AREA_BORDER))
                insert_point(simp, simp->n, p, k);
        }
    }
    if (simp->n == 0) {
        /* A loop with a single kind of border all round: seed with its lower-left and upper-right points. */
        size_t lo = 0, hi = 0;
        for (size_t k = 1; k < pn; ++k) {
            const int x = p[k * 4], z = p[k * 4 + 2];
            if (lex_after(x, z, p[lo * 4], p[lo * 4 + 2]))
                lo = k;
            if (lex_after(p[hi * 4], p[hi * 4 + 2], x, z))
                hi = k;
        }
        insert_point(simp, 0, p, lo);
        insert_point(simp, 1, p, hi);
    }

    /* Insert the farthest raw point of each refinable segment until all lie within max_error. */
    const float tol_sq = max_error * max_error;
    for (size_t i = 0; i < simp->n;) {
        const size_t j = (i + 1) % simp->n;
        int ax = simp->v[i * 4], az = simp->v[i * 4 + 2];
        int bx = simp->v[j * 4], bz = simp->v[j * 4 + 2];
        const size_t ai = (size_t)simp->v[i * 4 + 3], bi = (size_t)simp->v[j * 4 + 3];
        size_t k, step, end;
        if (lex_after(ax, az, bx, bz)) {
            step = 1;
            k = (ai + 1) % pn;
            end = bi;
        } else {
            step = pn - 1; /* backwards */
            k = (bi + pn - 1) % pn;
            end = ai;
            int t = ax;
            ax = bx;
            bx = t;
            t = az;
            az = bz;
            bz = t;
        }
        size_t far = SIZE_MAX;
        float far_d = 0;
        if (refinable(p[k * 4 + 3])) {
            for (; k != end; k = (k + step) % pn) {
                const float d = dist_sq_point_segment(p[k * 4], p[k * 4 + 2], ax, az, bx, bz);
                if (d > far_d) {
                    far_d = d;
                    far = k;
                }
            }
        }
        if (far != SIZE_MAX && far_d > tol_sq)
            insert_point(simp, i + 1, p, far);
        else
            ++i;
    }

    /* Split refinable segments longer than max_edge_len at their middle raw point (middle counted from the
     * smaller end, again so both sides of a shared stretch agree). */
    if (max_edge_len > 0) {
        const int64_t max_sq = (int64_t)max_edge_len * max_edge_len;
        for (size_t i = 0; i < simp->n;) {
            const size_t j = (i + 1) % simp->n;
            const int ax = simp->v[i * 4], az = simp->v[i * 4 + 2];
            const int bx = simp->v[j * 4], bz = simp->v[j * 4 + 2];
            const size_t ai = (size_t)simp->v[i * 4 + 3], bi = (size_t)simp->v[j * 4 + 3];
            size_t mid = SIZE_MAX;
            const int64_t dx = bx - ax, dz = bz - az;
            if (refinable(p[((ai + 1) % pn) * 4 + 3]) && dx * dx + dz * dz > max_sq) {
                const size_t n = (bi + pn - ai) % pn; /* raw edges in the segment */
                if (n > 1)
                    mid = (ai + (lex_after(ax, az, bx, bz) ? n / 2 : (n + 1) / 2)) % pn;
            }
            if (mid != SIZE_MAX)
                insert_point(simp, i + 1, p, mid);
            else
                ++i;
        }
    }

    /* Final flags: the region/area across the segment leaving the vertex (stored on the next raw point), and
     * whether the vertex itself sits on the tile border. */
    for (size_t i = 0; i < simp->n; ++i) {
        const size_t r = (size_t)simp->v[i * 4 + 3], next = (r + 1) % pn;
        simp->v[i * 4 + 3] = (p[next * 4 + 3] & (NB_CONTOUR_REG_MASK | NB_CONTOUR_AREA_BORDER)) |
                             (p[r * 4 + 3] & NB_CONTOUR_BORDER_VERTEX);
    }

    /* Zero-length segments (a loop pinched at a point) would confuse the triangulation. */
    for (size_t i = 0; i < simp->n && simp->n > 1;) {
        const size_t j = (i + 1) % simp->n;
        if (simp->v[i * 4] == simp->v[j * 4] && simp->v[i * 4 + 2] == simp->v[j * 4 + 2]) {
            memmove(&simp->v[i * 4], &simp->v[(i + 1) * 4], (simp->n - i - 1) * 4 * sizeof(int32_t));
            simp->n--;
        } else {
            ++i;
        }
    }
}

/* ---- 3. holes ---- */

/* Twice the signed area in the orientation of the header's nb_contour doc: > 0 for outlines, < 0 for holes. */
static int64_t signed_area2(const int32_t* v, int32_t n)
{
    int64_t sum = 0;
    for (int32_t i = 0, j = n - 1; i < n; j = i++)
        sum += (int64_t)v[i * 4] * v[j * 4 + 2] - (int64_t)v[j * 4] * v[i * 4 + 2];
    return sum;
}

/* < 0 when c lies on the interior side of the directed edge a->b of an outline (and > 0 for a hole's edge). */
static inline int64_t orient(const int32_t* a, const int32_t* b, const int32_t* c)
{
    return (int64_t)(b[0] - a[0]) * (c[2] - a[2]) - (int64_t)(c[0] - a[0]) * (b[2] - a[2]);
}

static inline int same_xz(const int32_t* a, const int32_t* b) { return a[0] == b[0] && a[2] == b[2]; }

/* c lies on the closed segment a-b, given that the three are collinear. */
static int within(const int32_t* a, const int32_t* b, const int32_t* c)
{
    const int k = a[0] != b[0] ? 0 : 2;
    return (a[k] <= c[k] && c[k] <= b[k]) || (a[k] >= c[k] && c[k] >= b[k]);
}

/* Segments a-b and c-d share a point (proper crossing or touching). */
static int segments_meet(const int32_t* a, const int32_t* b, const int32_t* c, const int32_t* d)
{
    if (nb_maxi(a[0], b[0]) < nb_mini(c[0], d[0]) || nb_mini(a[0], b[0]) > nb_maxi(c[0], d[0]) ||
        nb_maxi(a[2], b[2]) < nb_mini(c[2], d[2]) || nb_mini(a[2], b[2]) > nb_maxi(c[2], d[2]))
        return 0; /* bounds apart: no shared point (most edges of an outline, cheaply) */
    const int64_t o1 = orient(a, b, c), o2 = orient(a, b, d), o3 = orient(c, d, a), o4 = orient(c, d, b);
    if (o1 && o2 && o3 && o4 && ((o1 < 0) != (o2 < 0)) && ((o3 < 0) != (o4 < 0)))
        return 1;
    return (!o1 && within(a, b, c)) || (!o2 && within(a, b, d)) || (!o3 && within(c, d, a)) || (!o4 && within(c, d, b));
}

/* The segment d0-d1 meets an edge of polygon v other than those at vertex `skip` (-1 = none) or those that
 * merely share an endpoint with it. */
static int segment_hits_polygon(const int32_t* d0, const int32_t* d1, int32_t skip, const int32_t* v, int32_t n)
{
    for (int32_t k = 0; k < n; ++k) {
        const int32_t k1 = (k + 1) % n;
        if (k == skip || k1 == skip)
            continue;
        const int32_t* p0 = &v[k * 4];
        const int32_t* p1 = &v[k1 * 4];
        if (same_xz(d0, p0) || same_xz(d1, p0) || same_xz(d0, p1) || same_xz(d1, p1))
            continue;
        if (segments_meet(d0, d1, p0, p1))
            return 1;
    }
    return 0;
}

/* The diagonal from outline vertex j to point c leaves j into the polygon's interior (between its two edges). */
static int in_vertex_cone(const int32_t* v, int32_t n, int32_t j, const int32_t* c)
{
    const int32_t* p = &v[j * 4];
    const int32_t* next = &v[((j + 1) % n) * 4];
    const int32_t* prev = &v[((j + n - 1) % n) * 4];
    if (orient(prev, p, next) <= 0) /* convex (or straight) vertex: c strictly inside both edges' half planes */
        return orient(p, c, prev) < 0 && orient(c, p, next) < 0;
    /* reflex vertex: c anywhere but inside the outer wedge */
    return !(orient(p, c, next) <= 0 && orient(c, p, prev) <= 0);
}

static int point_in_polygon(const int32_t* v, int32_t n, const int32_t* c)
{
    int inside = 0;
    for (int32_t i = 0, j = n - 1; i < n; j = i++) {
        const int32_t* a = &v[i * 4];
        const int32_t* b = &v[j * 4];
        if ((a[2] > c[2]) != (b[2] > c[2]) &&
            (double)c[0] < (double)(b[0] - a[0]) * (double)(c[2] - a[2]) / (double)(b[2] - a[2]) + a[0])
            inside = !inside;
    }
    return inside;
}

typedef struct contour_info {
    int32_t index;    /* into cset->conts */
    int32_t hole;     /* 1 = negatively wound */
    int32_t leftmost; /* vertex with the smallest x, then z */
    int32_t min_x, min_z;
    int32_t box[4];   /* xz bounds: min x, max x, min z, max z */
    uint16_t reg;
} contour_info;

/* Region, then outlines before holes, then holes from left to right (the order they are bridged in). */
static int compare_contour_info(const void* pa, const void* pb)
{
    const contour_info* a = (const contour_info*)pa;
    const contour_info* b = (const contour_info*)pb;
    if (a->reg != b->reg)
        return a->reg < b->reg ? -1 : 1;
    if (a->hole != b->hole)
        return a->hole < b->hole ? -1 : 1;
    if (a->min_x != b->min_x)
        return a->min_x < b->min_x ? -1 : 1;
    if (a->min_z != b->min_z)
        return a->min_z < b->min_z ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

typedef struct diagonal {
    int32_t vert;
    int64_t dist_sq;
} diagonal;

static int compare_diagonal(const void* pa, const void* pb)
{
    const diagonal* a = (const diagonal*)pa;
    const diagonal* b = (const diagonal*)pb;
    if (a->dist_sq != b->dist_sq)
        return a->dist_sq < b->dist_sq ? -1 : 1;
    return a->vert < b->vert ? -1 : (a->vert > b->vert);
}

/* Index of the first raw point equal to v (x, y, z); simplified points are raw points, so it exists. */
static int32_t find_raw(const int32_t* raw, int32_t n, const int32_t* v)
{
    for (int32_t k = 0; k < n; ++k)
        if (raw[k * 4] == v[0] && raw[k * 4 + 1] == v[1] && raw[k * 4 + 2] == v[2])
            return k;
    return 0;
}

/* Loop a from index ia back to ia, then loop b from ib back to ib: the two bridge edges a[ia]-b[ib] run both
 * ways, so the result is one polygon whose area is a's minus the hole's. */
static int32_t* splice_loops(nb_context* ctx, const int32_t* a, int32_t na, int32_t ia, const int32_t* b, int32_t nb,
                             int32_t ib)
{
    int32_t* v = (int32_t*)nb_alloc(ctx, (size_t)(na + nb + 2) * 4 * sizeof(int32_t));
    if (!v)
        return NULL;
    const size_t pt = 4 * sizeof(int32_t);
    int32_t* dst = v;
    memcpy(dst, &a[(size_t)ia * 4], (size_t)(na - ia) * pt);
    memcpy(dst + (size_t)(na - ia) * 4, a, (size_t)(ia + 1) * pt); /* back round to a[ia] */
    dst += (size_t)(na + 1) * 4;
    memcpy(dst, &b[(size_t)ib * 4], (size_t)(nb - ib) * pt);
    memcpy(dst + (size_t)(nb - ib) * 4, b, (size_t)(ib + 1) * pt);
    return v;
}

/* Replaces outline's polygon (and raw loop) by outline + hole joined at vertices ia, ib. The hole is emptied. */
static nb_status splice_hole(nb_context* ctx, nb_contour* outline, int32_t ia, nb_contour* hole, int32_t ib)
{
    int32_t* verts = splice_loops(ctx, outline->verts, outline->nverts, ia, hole->verts, hole->nverts, ib);
    if (!verts)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'verts' (%d)", outline->nverts + hole->nverts + 2);
    const int32_t ra = find_raw(outline->raw_verts, outline->nraw_verts, &outline->verts[ia * 4]);
    const int32_t rb = find_raw(hole->raw_verts, hole->nraw_verts, &hole->verts[ib * 4]);
    int32_t* raw = splice_loops(ctx, outline->raw_verts, outline->nraw_verts, ra, hole->raw_verts, hole->nraw_verts, rb);
    if (!raw) {
        nb_free(ctx, verts);
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'raw_verts' (%d)",
                       outline->nraw_verts + hole->nraw_verts + 2);
    }
    nb_free(ctx, outline->verts);
    nb_free(ctx, outline->raw_verts);
    outline->verts = verts;
    outline->nverts += hole->nverts + 2;
    outline->raw_verts = raw;
    outline->nraw_verts += hole->nraw_verts + 2;
    nb_free(ctx, hole->verts);
    nb_free(ctx, hole->raw_verts);
    hole->verts = hole->raw_verts = NULL;
    hole->nverts = hole->nraw_verts = 0;
    return NB_OK;
}

static void drop_contour(nb_context* ctx, nb_contour* c)
{
    nb_free(ctx, c->verts);
    nb_free(ctx, c->raw_verts);
    c->verts = c->raw_verts = NULL;
    c->nverts = c->nraw_verts = 0;
}

/* Bridges each hole of group[first_hole..n) into the outline that contains it with the shortest diagonal that
 * crosses neither the outline nor a hole still to come. Starts from the hole's leftmost vertex, which sees the
 * outline on its left; if every diagonal from it is blocked, tries the hole's next vertex. */
static nb_status bridge_holes(nb_context* ctx, nb_contour_set* cset, const contour_info* group, int32_t n,
                              int32_t first_hole, diagonal* diags)
{
    for (int32_t h = first_hole; h < n; ++h) {
        nb_contour* hole = &cset->conts[group[h].index];
        if (first_hole == 0) {
            drop_contour(ctx, hole); /* no outline to cut it from: it would reach later stages inside out */
            continue;
        }
        /* A region normally has one outline; a split one gets each hole into the piece around it. */
        nb_contour* outline = &cset->conts[group[0].index];
        for (int32_t k = 0; k < first_hole && first_hole > 1; ++k) {
            nb_contour* o = &cset->conts[group[k].index];
            if (point_in_polygon(o->verts, o->nverts, &hole->verts[group[h].leftmost * 4])) {
                outline = o;
                break;
            }
        }
        int32_t ia = -1, ib = group[h].leftmost;
        for (int32_t tries = 0; tries < hole->nverts; ++tries, ib = (ib + 1) % hole->nverts) {
            const int32_t* corner = &hole->verts[ib * 4];
            int32_t nd = 0;
            for (int32_t j = 0; j < outline->nverts; ++j) {
                if (!in_vertex_cone(outline->verts, outline->nverts, j, corner))
                    continue;
                const int64_t dx = outline->verts[j * 4] - corner[0], dz = outline->verts[j * 4 + 2] - corner[2];
                diags[nd].vert = j;
                diags[nd].dist_sq = dx * dx + dz * dz;
                ++nd;
            }
            /* Nearest first. The first is nearly always clear: pick the few first by selection (O(nd) each), and
             * sort only when many are blocked (a sort per hole was most of the stage in a hall of 1600 pillars). */
            for (int32_t d = 0; d < nd && ia < 0; ++d) {
                if (d < 8) {
                    int32_t m = d;
                    for (int32_t e = d + 1; e < nd; ++e)
                        if (compare_diagonal(&diags[e], &diags[m]) < 0)
                            m = e;
                    const diagonal t = diags[d];
                    diags[d] = diags[m];
                    diags[m] = t;
                } else if (d == 8) {
                    nb_sort(diags + d, (size_t)(nd - d), sizeof(diagonal), compare_diagonal);
                }
                const int32_t* from = &outline->verts[diags[d].vert * 4];
                int blocked = segment_hits_polygon(from, corner, diags[d].vert, outline->verts, outline->nverts);
                for (int32_t k = h; k < n && !blocked; ++k) {
                    /* (a hole whose bounds the diagonal misses cannot meet it) */
                    const int32_t* box = group[k].box;
                    if (nb_maxi(from[0], corner[0]) < box[0] || nb_mini(from[0], corner[0]) > box[1] ||
                        nb_maxi(from[2], corner[2]) < box[2] || nb_mini(from[2], corner[2]) > box[3])
                        continue;
                    const nb_contour* other = &cset->conts[group[k].index];
                    blocked = segment_hits_polygon(from, corner, -1, other->verts, other->nverts);
                }
                if (!blocked)
                    ia = diags[d].vert;
            }
            if (ia >= 0)
                break; /* keep ib: it is the hole end of the bridge */
        }
        if (ia < 0) {
            /* No clear diagonal (should not happen for a hole inside its outline). Left alone, the hole would be
             * an inside-out polygon that the triangulation rejects; dropping it has the same effect. */
            drop_contour(ctx, hole);
            continue;
        }
        const nb_status st = splice_hole(ctx, outline, ia, hole, ib);
        if (st != NB_OK)
            return st;
    }
    return NB_OK;
}

static nb_status merge_holes(nb_context* ctx, nb_contour_set* cset)
{
    nb_status st = NB_OK;
    contour_info* info = NULL;
    diagonal* diags = NULL;
    const int32_t n = cset->nconts;
    int32_t holes = 0;
    size_t total_verts = 0;
    for (int32_t i = 0; i < n; ++i) {
        holes += signed_area2(cset->conts[i].verts, cset->conts[i].nverts) < 0;
        total_verts += (size_t)cset->conts[i].nverts + 2;
    }
    if (holes == 0)
        return NB_OK;

    info = (contour_info*)nb_alloc(ctx, (size_t)n * sizeof(contour_info));
    if (!info) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'holes' (%d)", n);
        goto cleanup;
    }
    /* An outline grows with each hole bridged into it, up to every vertex of its region plus two per bridge. */
    diags = (diagonal*)nb_alloc(ctx, total_verts * sizeof(diagonal));
    if (!diags) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'diagonals' (%zu)", total_verts);
        goto cleanup;
    }
    for (int32_t i = 0; i < n; ++i) {
        const nb_contour* c = &cset->conts[i];
        contour_info* ci = &info[i];
        ci->index = i;
        ci->reg = c->reg;
        ci->hole = signed_area2(c->verts, c->nverts) < 0;
        ci->leftmost = 0;
        for (int32_t k = 1; k < c->nverts; ++k) {
            const int32_t* v = &c->verts[k * 4];
            const int32_t* best = &c->verts[ci->leftmost * 4];
            if (v[0] < best[0] || (v[0] == best[0] && v[2] < best[2]))
                ci->leftmost = k;
        }
        ci->min_x = c->verts[ci->leftmost * 4];
        ci->min_z = c->verts[ci->leftmost * 4 + 2];
        ci->box[0] = ci->box[1] = ci->min_x;
        ci->box[2] = ci->box[3] = ci->min_z;
        for (int32_t k = 0; k < c->nverts; ++k) {
            const int32_t* v = &c->verts[k * 4];
            ci->box[0] = nb_mini(ci->box[0], v[0]);
            ci->box[1] = nb_maxi(ci->box[1], v[0]);
            ci->box[2] = nb_mini(ci->box[2], v[2]);
            ci->box[3] = nb_maxi(ci->box[3], v[2]);
        }
    }
    nb_sort(info, (size_t)n, sizeof(contour_info), compare_contour_info);
    for (int32_t g = 0; g < n;) {
        int32_t end = g, first_hole = -1;
        while (end < n && info[end].reg == info[g].reg) {
            if (info[end].hole && first_hole < 0)
                first_hole = end - g;
            ++end;
        }
        if (first_hole >= 0) {
            st = bridge_holes(ctx, cset, &info[g], end - g, first_hole, diags);
            if (st != NB_OK)
                goto cleanup;
        }
        g = end;
    }

    /* Close the gaps left by the holes. */
    int32_t kept = 0;
    for (int32_t i = 0; i < n; ++i)
        if (cset->conts[i].nverts > 0)
            cset->conts[kept++] = cset->conts[i];
    cset->nconts = kept;

cleanup:
    nb_free(ctx, info);
    nb_free(ctx, diags);
    return st;
}

/* ---- the stage ---- */

static nb_status add_contour(nb_context* ctx, nb_contour_set* cset, int32_t* cap, const point_buf* simp,
                             const point_buf* raw, uint16_t reg, uint8_t area, int32_t shift)
{
    if (cset->nconts == *cap) {
        const int32_t ncap = *cap * 2;
        nb_contour* conts = (nb_contour*)nb_alloc(ctx, (size_t)ncap * sizeof(nb_contour));
        if (!conts)
            return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'conts' (%d)", ncap);
        memcpy(conts, cset->conts, (size_t)cset->nconts * sizeof(nb_contour));
        nb_free(ctx, cset->conts);
        cset->conts = conts;
        *cap = ncap;
    }
    if (simp->n > INT32_MAX / 4 || raw->n > INT32_MAX / 4)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_ ": region %u has %zu outline points", (unsigned)reg, raw->n);
    nb_contour c;
    memset(&c, 0, sizeof(c));
    c.reg = reg;
    c.area = area;
    c.nverts = (int32_t)simp->n;
    c.nraw_verts = (int32_t)raw->n;
    c.verts = (int32_t*)nb_alloc(ctx, simp->n * 4 * sizeof(int32_t));
    if (!c.verts)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'verts' (%zu)", simp->n);
    c.raw_verts = (int32_t*)nb_alloc(ctx, raw->n * 4 * sizeof(int32_t));
    if (!c.raw_verts) {
        nb_free(ctx, c.verts);
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'raw_verts' (%zu)", raw->n);
    }
    memcpy(c.verts, simp->v, simp->n * 4 * sizeof(int32_t));
    memcpy(c.raw_verts, raw->v, raw->n * 4 * sizeof(int32_t));
    if (shift) {
        for (size_t k = 0; k < simp->n; ++k) {
            c.verts[k * 4] -= shift;
            c.verts[k * 4 + 2] -= shift;
        }
        for (size_t k = 0; k < raw->n; ++k) {
            c.raw_verts[k * 4] -= shift;
            c.raw_verts[k * 4 + 2] -= shift;
        }
    }
    cset->conts[cset->nconts++] = c;
    return NB_OK;
}

nb_status nb_build_contours(nb_context* ctx, const nb_compact_heightfield* chf, float max_error,
                            int32_t max_edge_len, nb_contour_set** out)
{
    if (out)
        *out = NULL;
    if (!ctx || !chf || !out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": %s is NULL", !ctx ? "ctx" : (!chf ? "chf" : "out"));
    if (!isfinite(max_error) || max_error < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": max_error must be a finite value >= 0 (got %g)",
                       (double)max_error);
    if (max_edge_len < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": max_edge_len must be >= 0 (got %d)", max_edge_len);
    const int border = chf->border_size;
    if (border < 0 || 2 * (int64_t)border > chf->width || 2 * (int64_t)border > chf->height)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": chf->border_size %d does not fit the %dx%d grid", border,
                       chf->width, chf->height);

    nb_status st = NB_OK;
    uint8_t* edges = NULL;
    point_buf raw = { NULL, 0, 0 }, simp = { NULL, 0, 0 };
    int32_t cap = nb_maxi(8, chf->max_regions);
    nb_contour_set* cset = (nb_contour_set*)nb_calloc(ctx, 1, sizeof(*cset));
    if (!cset)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'cset'");
    memcpy(cset->bmin, chf->bmin, sizeof(cset->bmin));
    memcpy(cset->bmax, chf->bmax, sizeof(cset->bmax));
    if (border > 0) {
        /* Coordinates are relative to the tile proper: the border cells only gave the regions context. */
        const float pad = (float)border * chf->cell_size;
        cset->bmin[0] += pad;
        cset->bmin[2] += pad;
        cset->bmax[0] -= pad;
        cset->bmax[2] -= pad;
    }
    cset->cell_size = chf->cell_size;
    cset->cell_height = chf->cell_height;
    cset->width = chf->width - 2 * border;
    cset->height = chf->height - 2 * border;
    cset->border_size = border;
    cset->max_error = max_error;
    cset->conts = (nb_contour*)nb_alloc(ctx, (size_t)cap * sizeof(nb_contour));
    if (!cset->conts) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'conts' (%d)", cap);
        goto cleanup;
    }
    edges = (uint8_t*)nb_alloc(ctx, chf->span_count);
    if (!edges) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'edges' (%u)", chf->span_count);
        goto cleanup;
    }
    mark_region_edges(chf, edges);

    for (int z = 0; z < chf->height; ++z) {
        for (int x = 0; x < chf->width; ++x) {
            const nb_compact_cell c = chf->cells[x + z * chf->width];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                /* 0xf: a lone span walled in on all sides; such slivers are skipped */
                if (edges[i] == 0 || edges[i] == 0xf)
                    continue;
                raw.n = 0;
                st = trace_region_border(ctx, chf, edges, x, z, i, &raw);
                if (st != NB_OK)
                    goto cleanup;
                if (raw.n < 3)
                    continue;
                if (!point_buf_reserve(ctx, &simp, raw.n)) {
                    st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'simplified' (%zu)", raw.n);
                    goto cleanup;
                }
                simplify_outline(&raw, &simp, max_error, max_edge_len);
                if (simp.n < 3)
                    continue;
                st = add_contour(ctx, cset, &cap, &simp, &raw, chf->spans[i].reg, chf->areas[i], border);
                if (st != NB_OK)
                    goto cleanup;
            }
        }
    }

    st = merge_holes(ctx, cset);
    if (st != NB_OK)
        goto cleanup;
    *out = cset;
    cset = NULL;

cleanup:
    nb_free(ctx, edges);
    nb_free(ctx, raw.v);
    nb_free(ctx, simp.v);
    nb_contour_set_destroy(ctx, cset);
    return st;
}

void nb_contour_set_destroy(nb_context* ctx, nb_contour_set* cset)
{
    if (!cset)
        return;
    for (int32_t i = 0; i < cset->nconts; ++i) {
        nb_free(ctx, cset->conts[i].verts);
        nb_free(ctx, cset->conts[i].raw_verts);
    }
    nb_free(ctx, cset->conts);
    nb_free(ctx, cset);
}
