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

/* ---- 3. holes ----
 * Each hole is cut into the outline around it along a bridge, a diagonal walked both ways. The rule is the
 * reference's: holes from left to right; from the hole's leftmost vertex (the next ones if every diagonal from it
 * is blocked), the nearest outline vertex whose diagonal enters the outline between its two edges and meets no
 * edge of the outline or of a hole still to come (edges touching the diagonal's ends do not count); equally near
 * vertices go by their index in the outline's array, and the raw loop is cut at its first point equal to each
 * bridge end. The result therefore depends on array order, which each splice rotates. Done with arrays that is
 * quadratic in the holes (one region of noise terrain has thousands), so the arrays become, for the time of the
 * merge:
 *  - doubly linked loops: a splice is O(1), and each outline is written back to an array once at the end;
 *  - order labels on the loop nodes (an order-maintenance list after Dietz & Sleator, relabelled as in Bender et
 *    al., "Two simplified algorithms for maintaining order in a list"): comparing two array indices is comparing
 *    labels relative to the head's;
 *  - a uniform grid of vertices, searched in rings of cells: candidates nearest first;
 *  - a grid of edges for "does the diagonal meet an edge", a question about a set of segments: a splice adds only
 *    the bridge to that set (the hole's edges were in it already, as those of a hole to come). */

/* The merge compiled for size in the wasm (clang): 0.6 KB less gzip, and the same contour time on a 384 m square
 * of noise with 5400 holes (57 ms). */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((minsize)), apply_to = function)
#endif
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
static inline int same_xyz(const int32_t* a, const int32_t* b) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }

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
        return 0; /* bounds apart: no shared point (most edges near a diagonal, cheaply) */
    const int64_t o1 = orient(a, b, c), o2 = orient(a, b, d), o3 = orient(c, d, a), o4 = orient(c, d, b);
    if (o1 && o2 && o3 && o4 && ((o1 < 0) != (o2 < 0)) && ((o3 < 0) != (o4 < 0)))
        return 1;
    return (!o1 && within(a, b, c)) || (!o2 && within(a, b, d)) || (!o3 && within(c, d, a)) || (!o4 && within(c, d, b));
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

/* -- loops as linked lists -- */

/* A point of a loop (simplified or raw) while a region's holes are merged. */
typedef struct loop_node {
    int32_t v[4];   /* x, y, z, flags, as in the contour's array */
    int32_t next, prev;
    int32_t loop;   /* the group entry it belongs to: see loop_state.piece */
    int32_t chain;  /* simplified: next vertex in its grid cell; raw: next raw point at the same (x, y, z); -1 ends */
    uint64_t order; /* order label, increasing along the loop from one node round to the one before it */
} loop_node;

/* One entry of a region's group: an outline piece or a hole. */
typedef struct loop_state {
    int32_t head, count;         /* node of array index 0, and the vertex count */
    int32_t raw_head, raw_count; /* the same for the raw loop */
    int32_t piece;               /* outline the loop is part of: itself for an outline; a hole's outline once
                                    bridged, -1 before (a hole still to come), -2 once dropped */
    int32_t spliced;             /* an outline that took holes: its arrays are rewritten at the end */
} loop_state;

/* Labels live in [0, 2^62); each loop starts evenly spaced. */
#define ORDER_BITS 62
#define ORDER_END ((uint64_t)1 << ORDER_BITS)

/* a comes before b in the array that starts at head */
static inline int order_before(const loop_node* nodes, int32_t head, int32_t a, int32_t b)
{
    const uint64_t base = nodes[head].order;
    return nodes[a].order - base < nodes[b].order - base; /* (unsigned: labels below the head's wrap round last) */
}

static void order_spread(loop_node* nodes, int32_t first, int32_t count, uint64_t lo, uint64_t hi)
{
    const uint64_t step = (hi - lo) / (uint64_t)(count + 1);
    for (int32_t k = 0, u = first; k < count; ++k, u = nodes[u].next)
        nodes[u].order = lo + (uint64_t)(k + 1) * step;
}

/* Labels the m nodes just linked in between p and s (its old successor), keeping the labels increasing along the
 * loop from its smallest. Where p's gap has no room, the smallest aligned label range around p that is sparse
 * enough (at most 2^(bits/2) nodes in 2^bits labels) is relabelled evenly: amortized O(log n) per node. */
static void order_insert(loop_node* nodes, int32_t p, int32_t m, int32_t s)
{
    const uint64_t lo = nodes[p].order;
    const int s_follows = nodes[s].order > lo; /* else p has the largest label and s the smallest */
    const uint64_t hi = s_follows ? nodes[s].order : ORDER_END;
    if (hi - lo > (uint64_t)m) {
        order_spread(nodes, nodes[p].next, m, lo, hi);
        return;
    }
    /* the range so far: left .. p, the new nodes, s .. the node before right (-1: the largest label is in) */
    int32_t left = p, right = s_follows ? s : -1;
    int64_t count = m + 1;
    for (int bits = 1;; ++bits) {
        const uint64_t size = (uint64_t)1 << bits, base = lo & ~(size - 1);
        /* (going back from p, the smallest label ends the walk: s itself when p had the largest, as s's
         * predecessor is now a new node without a label yet) */
        while (left != (s_follows ? -1 : s)) {
            const int32_t u = nodes[left].prev;
            if (nodes[u].order > nodes[left].order || nodes[u].order < base)
                break;
            left = u;
            ++count;
        }
        while (right >= 0 && nodes[right].order < base + size) {
            const int32_t u = nodes[right].next;
            ++count;
            right = nodes[u].order > nodes[right].order ? u : -1;
        }
        if (count <= ((int64_t)1 << (bits / 2)) || bits == ORDER_BITS) {
            order_spread(nodes, left, (int32_t)count, base, base + size);
            return;
        }
    }
}

/* The loops of a group as arrays a (the outline, from index ia) and b (the hole, from ib) become
 * a[ia..], a[..ia], b[ib..], b[..ib]: b's loop is linked in before a, with copies a2 of a and b2 of b closing
 * the bridge; a becomes the head (index 0). */
static void splice_loops(loop_node* nodes, int32_t a, int32_t b, int32_t a2, int32_t b2, int32_t hole_count)
{
    const int32_t pa = nodes[a].prev, pb = nodes[b].prev;
    nodes[pa].next = a2;
    nodes[a2].prev = pa;
    nodes[a2].next = b;
    nodes[b].prev = a2;
    nodes[pb].next = b2;
    nodes[b2].prev = pb;
    nodes[b2].next = a;
    nodes[a].prev = b2;
    order_insert(nodes, pa, hole_count + 2, a);
}

/* The diagonal from outline vertex j to point c leaves j into the polygon's interior (between its two edges). */
static int in_vertex_cone(const loop_node* nodes, int32_t j, const int32_t* c)
{
    const int32_t* p = nodes[j].v;
    const int32_t* next = nodes[nodes[j].next].v;
    const int32_t* prev = nodes[nodes[j].prev].v;
    if (orient(prev, p, next) <= 0) /* convex (or straight) vertex: c strictly inside both edges' half planes */
        return orient(p, c, prev) < 0 && orient(c, p, next) < 0;
    /* reflex vertex: c anywhere but inside the outer wedge */
    return !(orient(p, c, next) <= 0 && orient(c, p, prev) <= 0);
}

/* Even-odd test against the loop's edges, each taken as (vertex, the one before it) as the arrays had them. */
static int point_in_loop(const loop_node* nodes, int32_t head, int32_t count, const int32_t* c)
{
    int inside = 0;
    for (int32_t k = 0, u = head; k < count; ++k, u = nodes[u].next) {
        const int32_t* a = nodes[u].v;
        const int32_t* b = nodes[nodes[u].prev].v;
        if ((a[2] > c[2]) != (b[2] > c[2]) &&
            (double)c[0] < (double)(b[0] - a[0]) * (double)(c[2] - a[2]) / (double)(b[2] - a[2]) + a[0])
            inside = !inside;
    }
    return inside;
}

/* -- the merge state of one region -- */

typedef struct grid_segment {
    int32_t a, b; /* vertex nodes */
    int32_t loop; /* counts for the loops of loop_state.piece as the loop's */
} grid_segment;

typedef struct grid_entry {
    int32_t seg, next;
} grid_entry;

typedef struct candidate {
    int64_t dist_sq;
    int32_t node;
} candidate;

typedef struct hole_merge {
    loop_state* loops; /* one per group entry */
    loop_node* verts;  /* every loop's vertices, then room for two copies per hole */
    loop_node* raw;    /* the same for the raw points */
    int32_t nverts, nraw;
    /* one uniform grid over the group's bounds, for vertices and for edges */
    int32_t x0, z0, cell, width, height;
    int32_t* vert_cells; /* first vertex node in each cell */
    int32_t* edge_cells; /* first entry in each cell */
    grid_entry* entries; /* a segment has an entry in each cell its bounds cover */
    int32_t nentries, entry_cap;
    grid_segment* segs;
    int32_t nsegs;
    int32_t* raw_table; /* open addressing on (x, y, z): the first raw node of each position's chain */
    uint32_t raw_mask;
    candidate* cands;
} hole_merge;

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static inline int32_t loop_piece(const hole_merge* hm, int32_t loop) { return hm->loops[loop].piece; }

static inline uint32_t position_hash(const int32_t* v)
{
    return ((uint32_t)v[0] * 73856093u) ^ ((uint32_t)v[1] * 19349663u) ^ ((uint32_t)v[2] * 83492791u);
}

static void cell_range(const hole_merge* hm, const int32_t* a, const int32_t* b, int32_t* r)
{
    r[0] = (nb_mini(a[0], b[0]) - hm->x0) / hm->cell;
    r[1] = (nb_maxi(a[0], b[0]) - hm->x0) / hm->cell;
    r[2] = (nb_mini(a[2], b[2]) - hm->z0) / hm->cell;
    r[3] = (nb_maxi(a[2], b[2]) - hm->z0) / hm->cell;
}

static nb_status add_segment(nb_context* ctx, hole_merge* hm, int32_t a, int32_t b, int32_t loop)
{
    int32_t r[4];
    cell_range(hm, hm->verts[a].v, hm->verts[b].v, r);
    const int64_t need = hm->nentries + (int64_t)(r[1] - r[0] + 1) * (r[3] - r[2] + 1);
    if (need > hm->entry_cap) {
        /* only bridges come after the first sizing */
        const int64_t cap = nb_maxi(hm->entry_cap, 64) * (int64_t)2 + need;
        grid_entry* e = cap <= INT32_MAX ? (grid_entry*)nb_alloc(ctx, (size_t)cap * sizeof(grid_entry)) : NULL;
        if (!e)
            return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole edge grid' (%lld)", (long long)cap);
        memcpy(e, hm->entries, (size_t)hm->nentries * sizeof(grid_entry));
        nb_free(ctx, hm->entries);
        hm->entries = e;
        hm->entry_cap = (int32_t)cap;
    }
    const int32_t seg = hm->nsegs++;
    hm->segs[seg].a = a;
    hm->segs[seg].b = b;
    hm->segs[seg].loop = loop;
    for (int32_t z = r[2]; z <= r[3]; ++z)
        for (int32_t x = r[0]; x <= r[1]; ++x) {
            int32_t* cell = &hm->edge_cells[x + z * hm->width];
            hm->entries[hm->nentries].seg = seg;
            hm->entries[hm->nentries].next = *cell;
            *cell = hm->nentries++;
        }
    return NB_OK;
}

static void add_vertex(hole_merge* hm, int32_t u)
{
    const int32_t* v = hm->verts[u].v;
    int32_t* cell = &hm->vert_cells[(v[0] - hm->x0) / hm->cell + (v[2] - hm->z0) / hm->cell * hm->width];
    hm->verts[u].chain = *cell;
    *cell = u;
}

/* The slot of the raw point at v's position: its chain's first node, or -1 in an empty slot. */
static int32_t* raw_slot(const hole_merge* hm, const int32_t* v)
{
    for (uint32_t i = position_hash(v) & hm->raw_mask;; i = (i + 1) & hm->raw_mask) {
        int32_t* slot = &hm->raw_table[i];
        if (*slot < 0 || same_xyz(hm->raw[*slot].v, v))
            return slot;
    }
}

/* The diagonal d0-d1 meets an edge of the outline `piece` or of a hole still to come, other than edges that
 * share an end with it. (The edges at the diagonal's outline vertex are among those.) */
static int diagonal_blocked(const hole_merge* hm, const int32_t* d0, const int32_t* d1, int32_t piece)
{
    int32_t r[4];
    cell_range(hm, d0, d1, r);
    for (int32_t z = r[2]; z <= r[3]; ++z)
        for (int32_t x = r[0]; x <= r[1]; ++x)
            for (int32_t e = hm->edge_cells[x + z * hm->width]; e >= 0; e = hm->entries[e].next) {
                const grid_segment* s = &hm->segs[hm->entries[e].seg];
                const int32_t owner = loop_piece(hm, s->loop);
                if (owner != piece && owner != -1)
                    continue;
                const int32_t* p0 = hm->verts[s->a].v;
                const int32_t* p1 = hm->verts[s->b].v;
                if (same_xz(d0, p0) || same_xz(d1, p0) || same_xz(d0, p1) || same_xz(d1, p1))
                    continue;
                if (segments_meet(d0, d1, p0, p1))
                    return 1;
            }
    return 0;
}

static int compare_candidate(const void* pa, const void* pb)
{
    const candidate* a = (const candidate*)pa;
    const candidate* b = (const candidate*)pb;
    if (a->dist_sq != b->dist_sq)
        return a->dist_sq < b->dist_sq ? -1 : 1;
    return a->node < b->node ? -1 : (a->node > b->node);
}

/* Adds the vertices of outline `piece` in grid cell (x, z) in whose cone c lies to the candidates. */
static void gather_candidates(hole_merge* hm, int32_t x, int32_t z, const int32_t* c, int32_t piece, int32_t* n)
{
    for (int32_t u = hm->vert_cells[x + z * hm->width]; u >= 0; u = hm->verts[u].chain) {
        if (loop_piece(hm, hm->verts[u].loop) != piece || !in_vertex_cone(hm->verts, u, c))
            continue;
        const int64_t dx = hm->verts[u].v[0] - c[0], dz = hm->verts[u].v[2] - c[2];
        hm->cands[*n].dist_sq = dx * dx + dz * dz;
        hm->cands[*n].node = u;
        ++*n;
    }
}

/* The bridge's outline end for hole corner c: the nearest vertex of outline `piece` in whose cone c lies and
 * whose diagonal is clear, the first in the outline's array among equally near ones; -1 if none. Searched in
 * rings of grid cells around c: once ring r is in, every vertex not yet seen is at least `reach` away, so the
 * candidates nearer than that are all known and are tried nearest first, one distance at a time. */
static int32_t find_bridge(hole_merge* hm, const int32_t* c, int32_t piece)
{
    const int32_t cell = hm->cell, head = hm->loops[piece].head;
    const int32_t cx = (c[0] - hm->x0) / cell, cz = (c[2] - hm->z0) / cell;
    int32_t npending = 0;
    for (int32_t r = 0;; ++r) {
        const int32_t xlo = nb_maxi(cx - r, 0), xhi = nb_mini(cx + r, hm->width - 1);
        for (int32_t z = nb_maxi(cz - r, 0); z <= nb_mini(cz + r, hm->height - 1); ++z) {
            if (z == cz - r || z == cz + r) {
                for (int32_t x = xlo; x <= xhi; ++x)
                    gather_candidates(hm, x, z, c, piece, &npending);
            } else {
                if (cx - r >= 0)
                    gather_candidates(hm, cx - r, z, c, piece, &npending);
                if (cx + r < hm->width)
                    gather_candidates(hm, cx + r, z, c, piece, &npending);
            }
        }
        /* the distance to the nearest cell outside the square scanned so far (integer coordinates) */
        int64_t reach = INT64_MAX;
        if (cx - r > 0)
            reach = min64(reach, (int64_t)c[0] - (hm->x0 + (int64_t)(cx - r) * cell) + 1);
        if (cx + r < hm->width - 1)
            reach = min64(reach, hm->x0 + (int64_t)(cx + r + 1) * cell - c[0]);
        if (cz - r > 0)
            reach = min64(reach, (int64_t)c[2] - (hm->z0 + (int64_t)(cz - r) * cell) + 1);
        if (cz + r < hm->height - 1)
            reach = min64(reach, hm->z0 + (int64_t)(cz + r + 1) * cell - c[2]);
        const int done = reach == INT64_MAX; /* the whole grid is in */
        const int64_t limit = done ? INT64_MAX : reach * reach;
        nb_sort(hm->cands, (size_t)npending, sizeof(candidate), compare_candidate);
        int32_t k = 0;
        while (k < npending && hm->cands[k].dist_sq < limit) {
            int32_t best = -1, e = k;
            for (; e < npending && hm->cands[e].dist_sq == hm->cands[k].dist_sq; ++e) {
                const int32_t u = hm->cands[e].node;
                if ((best < 0 || order_before(hm->verts, head, u, best)) && !diagonal_blocked(hm, hm->verts[u].v, c, piece))
                    best = u;
            }
            if (best >= 0)
                return best;
            k = e;
        }
        memmove(hm->cands, hm->cands + k, (size_t)(npending - k) * sizeof(candidate));
        npending -= k;
        if (done)
            return -1;
    }
}

/* First raw point of outline `piece` (in its raw array's order) at v's position; the raw head (index 0) if none,
 * as the array version had it (a simplified vertex is always a raw point). */
static int32_t first_raw(const hole_merge* hm, int32_t piece, const int32_t* v)
{
    const int32_t head = hm->loops[piece].raw_head;
    int32_t best = -1;
    for (int32_t u = *raw_slot(hm, v); u >= 0; u = hm->raw[u].chain)
        if (loop_piece(hm, hm->raw[u].loop) == piece && (best < 0 || order_before(hm->raw, head, u, best)))
            best = u;
    return best >= 0 ? best : head;
}

static void drop_contour(nb_context* ctx, nb_contour* c)
{
    nb_free(ctx, c->verts);
    nb_free(ctx, c->raw_verts);
    c->verts = c->raw_verts = NULL;
    c->nverts = c->nraw_verts = 0;
}

static void hole_merge_free(nb_context* ctx, hole_merge* hm)
{
    nb_free(ctx, hm->loops);
    nb_free(ctx, hm->verts);
    nb_free(ctx, hm->raw);
    nb_free(ctx, hm->vert_cells);
    nb_free(ctx, hm->edge_cells);
    nb_free(ctx, hm->entries);
    nb_free(ctx, hm->segs);
    nb_free(ctx, hm->raw_table);
    nb_free(ctx, hm->cands);
}

/* Nodes for `count` points in a ring, labelled evenly, from `first` on; returns the node after them. */
static int32_t add_loop(loop_node* nodes, int32_t first, const int32_t* pts, int32_t count, int32_t loop)
{
    const uint64_t step = ORDER_END / (uint64_t)(count + 1);
    for (int32_t i = 0; i < count; ++i) {
        loop_node* u = &nodes[first + i];
        memcpy(u->v, &pts[i * 4], sizeof(u->v));
        u->next = first + (i + 1 == count ? 0 : i + 1);
        u->prev = first + (i == 0 ? count - 1 : i - 1);
        u->loop = loop;
        u->chain = -1;
        u->order = (uint64_t)(i + 1) * step;
    }
    return first + count;
}

/* Sets up the merge of group[0..n) (outline pieces before first_hole, then holes): the loops' nodes, the grid of
 * vertices and edges (a cell per few vertices), the index of raw positions. */
static NB_NOINLINE nb_status hole_merge_init(nb_context* ctx, hole_merge* hm, const nb_contour_set* cset,
                                             const contour_info* group, int32_t n, int32_t first_hole)
{
    const int32_t holes = n - first_hole;
    int64_t nverts = 2 * (int64_t)holes, nraw = 2 * (int64_t)holes;
    int32_t box[4] = { INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN };
    for (int32_t k = 0; k < n; ++k) {
        nverts += cset->conts[group[k].index].nverts;
        nraw += cset->conts[group[k].index].nraw_verts;
        box[0] = nb_mini(box[0], group[k].box[0]);
        box[1] = nb_maxi(box[1], group[k].box[1]);
        box[2] = nb_mini(box[2], group[k].box[2]);
        box[3] = nb_maxi(box[3], group[k].box[3]);
    }
    if (nverts > INT32_MAX / 4 || nraw > INT32_MAX / 4)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_ ": region %u has %lld outline points with its holes",
                       (unsigned)group[0].reg, (long long)nraw);
    /* cells of about two vertices: side sqrt(2 * area / vertices), grown while long thin bounds would give more */
    const int64_t span_x = (int64_t)box[1] - box[0] + 1, span_z = (int64_t)box[3] - box[2] + 1;
    int64_t cell = (int64_t)sqrt(2.0 * (double)span_x * (double)span_z / (double)nverts);
    cell = cell < 1 ? 1 : cell;
    while ((span_x / cell + 1) * (span_z / cell + 1) > nverts + 64)
        cell += cell / 2 + 1;
    hm->x0 = box[0];
    hm->z0 = box[2];
    hm->cell = (int32_t)cell;
    hm->width = (int32_t)(span_x / cell + 1);
    hm->height = (int32_t)(span_z / cell + 1);
    const size_t cells = (size_t)hm->width * (size_t)hm->height;
    uint32_t table = 64;
    while (table < 2 * nraw)
        table *= 2;
    hm->raw_mask = table - 1;
    hm->loops = (loop_state*)nb_alloc(ctx, (size_t)n * sizeof(loop_state));
    if (!hm->loops)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole loops' (%d)", n);
    hm->verts = (loop_node*)nb_alloc(ctx, (size_t)nverts * sizeof(loop_node));
    if (!hm->verts)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole verts' (%lld)", (long long)nverts);
    hm->raw = (loop_node*)nb_alloc(ctx, (size_t)nraw * sizeof(loop_node));
    if (!hm->raw)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole raw verts' (%lld)", (long long)nraw);
    hm->cands = (candidate*)nb_alloc(ctx, (size_t)nverts * sizeof(candidate));
    if (!hm->cands)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole candidates' (%lld)", (long long)nverts);
    hm->vert_cells = (int32_t*)nb_alloc(ctx, cells * sizeof(int32_t));
    hm->edge_cells = hm->vert_cells ? (int32_t*)nb_alloc(ctx, cells * sizeof(int32_t)) : NULL;
    if (!hm->edge_cells)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole grid' (%zu)", cells);
    hm->segs = (grid_segment*)nb_alloc(ctx, (size_t)nverts * sizeof(grid_segment)); /* edges and bridges */
    if (!hm->segs)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole edges' (%lld)", (long long)nverts);
    hm->raw_table = (int32_t*)nb_alloc(ctx, (size_t)table * sizeof(int32_t));
    if (!hm->raw_table)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole raw index' (%u)", table);
    memset(hm->vert_cells, 0xff, cells * sizeof(int32_t));
    memset(hm->edge_cells, 0xff, cells * sizeof(int32_t));
    memset(hm->raw_table, 0xff, (size_t)table * sizeof(int32_t));

    int32_t nv = 0, nr = 0;
    for (int32_t k = 0; k < n; ++k) {
        const nb_contour* c = &cset->conts[group[k].index];
        loop_state* l = &hm->loops[k];
        l->head = nv;
        l->count = c->nverts;
        l->raw_head = nr;
        l->raw_count = c->nraw_verts;
        l->piece = k < first_hole ? k : -1;
        l->spliced = 0;
        nv = add_loop(hm->verts, nv, c->verts, c->nverts, k);
        nr = add_loop(hm->raw, nr, c->raw_verts, c->nraw_verts, k);
    }
    for (int32_t u = 0; u < nv; ++u)
        add_vertex(hm, u);
    for (int32_t u = 0; u < nr; ++u) {
        int32_t* slot = raw_slot(hm, hm->raw[u].v);
        if (*slot < 0) {
            *slot = u;
        } else {
            hm->raw[u].chain = hm->raw[*slot].chain;
            hm->raw[*slot].chain = u;
        }
    }
    /* the edge grid, sized for the loops' edges (the first bridge grows it) */
    int64_t entries = 0;
    for (int32_t u = 0; u < nv; ++u) {
        int32_t r[4];
        cell_range(hm, hm->verts[u].v, hm->verts[hm->verts[u].next].v, r);
        entries += (int64_t)(r[1] - r[0] + 1) * (r[3] - r[2] + 1);
    }
    if (entries > INT32_MAX)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_ ": region %u: %lld cells under its edges", (unsigned)group[0].reg,
                       (long long)entries);
    hm->entries = (grid_entry*)nb_alloc(ctx, (size_t)entries * sizeof(grid_entry));
    if (!hm->entries)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole edge grid' (%lld)", (long long)entries);
    hm->entry_cap = (int32_t)entries;
    for (int32_t u = 0; u < nv; ++u) {
        const nb_status st = add_segment(ctx, hm, u, hm->verts[u].next, hm->verts[u].loop);
        if (st != NB_OK)
            return st;
    }
    hm->nverts = nv; /* from here on: the nodes in use; the copies go after them */
    hm->nraw = nr;
    return NB_OK;
}

/* Copies node u of nodes to a new node of outline `piece`. */
static int32_t copy_node(loop_node* nodes, int32_t* n, int32_t u, int32_t piece)
{
    const int32_t c = (*n)++;
    nodes[c] = nodes[u];
    nodes[c].loop = piece;
    nodes[c].chain = -1;
    return c;
}

/* Bridges each hole of group[first_hole..n) into the outline piece around it (group[0..first_hole)) by the rule
 * at the top of this section, then writes the outlines back to arrays and frees the holes'. */
static NB_NOINLINE nb_status bridge_holes(nb_context* ctx, nb_contour_set* cset, const contour_info* group, int32_t n,
                                          int32_t first_hole)
{
    hole_merge hm;
    memset(&hm, 0, sizeof(hm));
    nb_status st = hole_merge_init(ctx, &hm, cset, group, n, first_hole);
    if (st != NB_OK)
        goto cleanup;
    for (int32_t h = first_hole; h < n; ++h) {
        loop_state* hole = &hm.loops[h];
        /* A region normally has one outline; a split one gets each hole into the piece around it. */
        int32_t o = 0;
        for (int32_t k = 0; k < first_hole && first_hole > 1; ++k) {
            if (point_in_loop(hm.verts, hm.loops[k].head, hm.loops[k].count, hm.verts[hole->head + group[h].leftmost].v)) {
                o = k;
                break;
            }
        }
        loop_state* outline = &hm.loops[o];
        int32_t a = -1, ib = group[h].leftmost;
        for (int32_t tries = 0; tries < hole->count && a < 0; ++tries) {
            a = find_bridge(&hm, hm.verts[hole->head + ib].v, o);
            if (a < 0)
                ib = (ib + 1) % hole->count; /* else keep ib: the hole end of the bridge */
        }
        if (a < 0) {
            /* No clear diagonal (should not happen for a hole inside its outline). Left alone, the hole would be
             * an inside-out polygon that the triangulation rejects; dropping it has the same effect. */
            hole->piece = -2;
            continue;
        }
        /* raw ends first, while the outline's raw order is still the one the vertex was chosen in */
        const nb_contour* hc = &cset->conts[group[h].index];
        int32_t rb = 0;
        while (rb < hc->nraw_verts && !same_xyz(&hc->raw_verts[rb * 4], &hc->verts[ib * 4]))
            ++rb;
        rb = rb < hc->nraw_verts ? hole->raw_head + rb : hole->raw_head;
        const int32_t ra = first_raw(&hm, o, hm.verts[a].v);

        const int32_t b = hole->head + ib;
        const int32_t a2 = copy_node(hm.verts, &hm.nverts, a, o), b2 = copy_node(hm.verts, &hm.nverts, b, o);
        splice_loops(hm.verts, a, b, a2, b2, hole->count);
        add_vertex(&hm, a2);
        add_vertex(&hm, b2);
        outline->head = a;
        outline->count += hole->count + 2;

        const int32_t ra2 = copy_node(hm.raw, &hm.nraw, ra, o), rb2 = copy_node(hm.raw, &hm.nraw, rb, o);
        splice_loops(hm.raw, ra, rb, ra2, rb2, hole->raw_count);
        hm.raw[ra2].chain = hm.raw[ra].chain; /* same positions: into their chains */
        hm.raw[ra].chain = ra2;
        hm.raw[rb2].chain = hm.raw[rb].chain;
        hm.raw[rb].chain = rb2;
        outline->raw_head = ra;
        outline->raw_count += hole->raw_count + 2;

        hole->piece = o;
        outline->spliced = 1;
        st = add_segment(ctx, &hm, a, b, o); /* the bridge, both ways one segment */
        if (st != NB_OK)
            goto cleanup;
    }

    /* Back to arrays. Each outline is replaced whole or not at all, so a failure leaves every contour intact. */
    for (int32_t k = 0; k < first_hole; ++k) {
        const loop_state* l = &hm.loops[k];
        if (!l->spliced)
            continue;
        nb_contour* c = &cset->conts[group[k].index];
        int32_t* verts = (int32_t*)nb_alloc(ctx, (size_t)l->count * 4 * sizeof(int32_t));
        if (!verts) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'verts' (%d)", l->count);
            goto cleanup;
        }
        int32_t* raw = (int32_t*)nb_alloc(ctx, (size_t)l->raw_count * 4 * sizeof(int32_t));
        if (!raw) {
            nb_free(ctx, verts);
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'raw_verts' (%d)", l->raw_count);
            goto cleanup;
        }
        for (int32_t i = 0, u = l->head; i < l->count; ++i, u = hm.verts[u].next)
            memcpy(&verts[i * 4], hm.verts[u].v, 4 * sizeof(int32_t));
        for (int32_t i = 0, u = l->raw_head; i < l->raw_count; ++i, u = hm.raw[u].next)
            memcpy(&raw[i * 4], hm.raw[u].v, 4 * sizeof(int32_t));
        nb_free(ctx, c->verts);
        nb_free(ctx, c->raw_verts);
        c->verts = verts;
        c->nverts = l->count;
        c->raw_verts = raw;
        c->nraw_verts = l->raw_count;
    }
    for (int32_t h = first_hole; h < n; ++h)
        drop_contour(ctx, &cset->conts[group[h].index]); /* bridged (its points are in its outline) or dropped */

cleanup:
    hole_merge_free(ctx, &hm);
    return st;
}

nb_status nb_merge_holes(nb_context* ctx, nb_contour_set* cset)
{
    nb_status st = NB_OK;
    contour_info* info = NULL;
    const int32_t n = cset->nconts;
    int32_t holes = 0;
    for (int32_t i = 0; i < n; ++i)
        holes += signed_area2(cset->conts[i].verts, cset->conts[i].nverts) < 0;
    if (holes == 0)
        return NB_OK;

    info = (contour_info*)nb_alloc(ctx, (size_t)n * sizeof(contour_info));
    if (!info)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'holes' (%d)", n);
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
        if (first_hole == 0) {
            /* no outline to cut them from: they would reach later stages inside out */
            for (int32_t h = g; h < end; ++h)
                drop_contour(ctx, &cset->conts[info[h].index]);
        } else if (first_hole > 0) {
            st = bridge_holes(ctx, cset, &info[g], end - g, first_hole);
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
    return st;
}

#if defined(__clang__)
#pragma clang attribute pop
#endif

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

    st = nb_merge_holes(ctx, cset);
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
