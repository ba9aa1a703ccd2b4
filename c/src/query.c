/* Path queries on a navmesh (the Detour half of seed 002): nearest polygon through each tile's BV tree, A* over
 * polygons, funnel string-pulling, raycast, random points, closest point and height on the detail surface, move
 * along surface, distance to wall, and a batch of whole path requests.
 *
 * Conventions the geometry below relies on: polygons wind clockwise in the (x, z) plane read as a math frame
 * (x right, z up), i.e. counter-clockwise seen from above with +z down (nb_build_poly_mesh). So for the edge
 * va -> vb of a polygon the interior lies on the right, the inward normal is (e.z, -e.x), and a traveller
 * leaving the polygon through that edge has va on the left and vb on the right. Polygon edge i runs from vertex
 * i to vertex i + 1. An off-mesh polygon has two vertices: the link's start (vertex 0) and end (vertex 1); its
 * links carry edge 0 for the polygon at the start and edge 1 for the polygon at the end.
 *
 * Memory: nb_query_create allocates the node pool (nodes, a ref -> node hash, a binary heap) and the scratch of
 * the batch once; no query allocates. A query resets the pool in O(1): the hash buckets carry a generation
 * stamp, so a bucket whose stamp is old reads as empty and nothing is cleared between queries. */
#include "navmesh_internal.h"

#include <float.h>
#include <math.h>

/* ================================================================================================ */
/* Node pool                                                                                        */
/* ================================================================================================ */

#define NODE_NEW 0
#define NODE_OPEN 1
#define NODE_CLOSED 2

#define QUERY_MAX_NODES (1u << 22)
#define QUERY_MIN_NODES 2048u

typedef struct qnode {
    float pos[3];      /* where the search enters the polygon (portal midpoint; the start position for the start) */
    float cost;        /* cost from the start to pos */
    float total;       /* cost + heuristic: the heap key (reused as polygon area by the random point search) */
    float hdist;       /* A*: distance from pos to the end (pos never moves once set, so computed once) */
    nb_poly_ref ref;
    uint32_t parent;   /* node index + 1, 0 = none */
    uint32_t next;     /* hash chain: node index + 1, 0 = end */
    uint32_t heap;     /* position in the heap while open */
    const nb_tile* tile;
    uint32_t poly;
    uint8_t state;
    uint8_t entry;     /* A*: the tile side the polygon was entered across (link_entry); 0 elsewhere */
} qnode;

/* A heap entry carries its node's key, so sifting compares without visiting the nodes. */
typedef struct qheap {
    float key;
    uint32_t node;
} qheap;

/* A hash bucket: live only when its stamp equals the query's `stamp`; head = node index + 1 of the chain. */
typedef struct qbucket {
    uint32_t stamp, head;
} qbucket;

struct nb_query {
    nb_context* ctx;
    const nb_navmesh* nav;
    uint32_t max_nodes, node_count;
    qnode* nodes;
    qheap* heap; /* doubles as the FIFO of move_along_surface (node only) */
    uint32_t heap_size;
    qbucket* buckets;
    uint32_t bucket_shift, bucket_count, stamp;
    int exhausted; /* the last A* ran out of nodes */
    uint32_t last_nodes; /* the nodes the last A* took (both searches where astar ran two) */
    /* scratch of nb_query_find_paths: a corridor and its straight path */
    nb_poly_ref* path;
    uint32_t* path_nodes; /* the node of each polygon of path */
    float* spoints;      /* spoints_cap xyz; one allocation with the two below */
    nb_poly_ref* srefs;  /* spoints_cap */
    uint8_t* sflags;     /* spoints_cap */
    int32_t spoints_cap;
    /* Random points: the running area sum after each usable polygon of positive area, in grid order, and the
     * polygon (slot << NB_POLY_BITS | index), for the navmesh generation and filter flags they were summed for: a
     * pick is then a binary search instead of two walks over every polygon. rp_cap: the polygons at creation (more
     * later: the walk). */
    double* rp_acc;
    uint32_t* rp_poly;
    uint32_t rp_cap, rp_count, rp_gen;
    double rp_total;
    uint16_t rp_include, rp_exclude;
    int rp_ready;
    /* The polygons' connected components (components_label), for the navmesh generation and filter flags they
     * were labelled for: per polygon, numbered cc_base[tile slot] + index, its component (0.., CC_NONE: filtered
     * out); per component c, cc_flags[c] and its polygons (slot << NB_POLY_BITS | index) in cc_members, from
     * cc_first[c] to cc_first[c + 1]. cc_cap: the pool's nodes (more polygons: no labels). */
    uint32_t* cc_label;
    uint32_t* cc_first;
    uint32_t* cc_members;
    uint32_t* cc_base;
    uint8_t* cc_flags;
    uint32_t cc_cap, cc_gen;
    uint16_t cc_include, cc_exclude;
    int cc_ready;
    /* Nodes the searches that saw all they could reach took since the navmesh or the filter's flags were last as
     * cc_spent_gen / _include / _exclude say: labelling waits until they add up to its own cost (labelling_pays). */
    uint32_t cc_spent, cc_spent_gen;
    uint16_t cc_spent_include, cc_spent_exclude;
};

static void pool_reset(nb_query* q)
{
    q->node_count = 0;
    q->heap_size = 0;
    if (++q->stamp == 0) { /* wrapped after 2^32 queries: clear once so old stamps cannot alias */
        memset(q->buckets, 0, sizeof(qbucket) * q->bucket_count);
        q->stamp = 1;
    }
}

/* The pool's working state, copied out of the query for the length of a search: as locals the compiler keeps
 * it in registers, where in the query every store to a node would force it to be reloaded (they might alias). */
typedef struct search {
    qnode* nodes;
    qheap* heap;
    qbucket* buckets;
    uint32_t heap_size, node_count, max_nodes, stamp, bucket_shift;
} search;

static inline void search_begin(nb_query* q, search* s)
{
    s->nodes = q->nodes;
    s->heap = q->heap;
    s->buckets = q->buckets;
    s->heap_size = q->heap_size;
    s->node_count = q->node_count;
    s->max_nodes = q->max_nodes;
    s->stamp = q->stamp;
    s->bucket_shift = q->bucket_shift;
}

static inline void search_end(nb_query* q, const search* s)
{
    q->heap_size = s->heap_size;
    q->node_count = s->node_count;
}

/* The A* node a link leads into: 0 inside a tile, else one per tile side crossed, numbered as Detour numbers its
 * node states (its side >> 1, with its sides 0 = +x, 2 = +z, 4 = -x, 6 = -z), so that the same polygons give the
 * same corridors; +x shares 0 with the links inside the tile. */
static inline uint8_t link_entry(uint8_t side)
{
    return side == 0xff ? 0 : (uint8_t)((side & 1u) ? side : side ^ 2u);
}

/* The node of (ref, entry), created (state NODE_NEW) when absent; NULL when the pool is exhausted. Both entries of
 * a polygon hash to the same bucket. */
static inline qnode* s_node_get(search* s, nb_poly_ref ref, uint8_t entry)
{
    qbucket* b = &s->buckets[(uint32_t)(ref * 2654435761u) >> s->bucket_shift]; /* Fibonacci hashing */
    if (b->stamp != s->stamp) {
        b->stamp = s->stamp;
        b->head = 0;
    } else {
        for (uint32_t i = b->head; i; i = s->nodes[i - 1].next)
            if (s->nodes[i - 1].ref == ref && s->nodes[i - 1].entry == entry)
                return &s->nodes[i - 1];
    }
    if (s->node_count >= s->max_nodes)
        return NULL;
    qnode* n = &s->nodes[s->node_count++];
    n->ref = ref;
    n->entry = entry;
    n->parent = 0;
    n->state = NODE_NEW;
    n->cost = n->total = 0.0f;
    n->next = b->head;
    b->head = s->node_count;
    return n;
}

/* ---- binary min-heap on total, with each node's slot recorded for decrease-key ---- */

static inline void s_heap_sift_up(search* s, uint32_t slot, uint32_t node)
{
    const float key = s->nodes[node].total;
    qheap* h = s->heap;
    while (slot > 0) {
        const uint32_t parent = (slot - 1) >> 1;
        if (h[parent].key <= key)
            break;
        h[slot] = h[parent];
        s->nodes[h[slot].node].heap = slot;
        slot = parent;
    }
    h[slot].key = key;
    h[slot].node = node;
    s->nodes[node].heap = slot;
}

static inline void s_heap_push(search* s, uint32_t node) { s_heap_sift_up(s, s->heap_size++, node); }

static inline uint32_t s_heap_pop(search* s)
{
    qheap* h = s->heap;
    const uint32_t top = h[0].node;
    const qheap last = h[--s->heap_size];
    const uint32_t size = s->heap_size;
    if (size == 0)
        return top;
    uint32_t slot = 0;
    for (;;) {
        uint32_t child = slot * 2 + 1;
        if (child >= size)
            break;
        if (child + 1 < size && h[child + 1].key < h[child].key)
            ++child;
        if (h[child].key >= last.key)
            break;
        h[slot] = h[child];
        s->nodes[h[slot].node].heap = slot;
        slot = child;
    }
    h[slot] = last;
    s->nodes[last.node].heap = slot;
    return top;
}

/* The same on the query itself, for the searches that are not hot enough to bother. */
static qnode* node_get(nb_query* q, nb_poly_ref ref)
{
    search s;
    search_begin(q, &s);
    qnode* n = s_node_get(&s, ref, 0);
    search_end(q, &s);
    return n;
}

static void heap_sift_up(nb_query* q, uint32_t slot, uint32_t node)
{
    search s;
    search_begin(q, &s);
    s_heap_sift_up(&s, slot, node);
}

static void heap_push(nb_query* q, uint32_t node) { heap_sift_up(q, q->heap_size++, node); }

static uint32_t heap_pop(nb_query* q)
{
    search s;
    search_begin(q, &s);
    const uint32_t top = s_heap_pop(&s);
    search_end(q, &s);
    return top;
}

static inline uint32_t node_index(const nb_query* q, const qnode* n) { return (uint32_t)(n - q->nodes); }

/* ================================================================================================ */
/* Geometry                                                                                         */
/* ================================================================================================ */

static inline void vcopy(float* d, const float* s)
{
    d[0] = s[0];
    d[1] = s[1];
    d[2] = s[2];
}

static inline void vlerp(float* d, const float* a, const float* b, float t)
{
    d[0] = a[0] + (b[0] - a[0]) * t;
    d[1] = a[1] + (b[1] - a[1]) * t;
    d[2] = a[2] + (b[2] - a[2]) * t;
}

static inline float vdist(const float* a, const float* b)
{
    const float dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    return sqrtf(dx * dx + dy * dy + dz * dz);
}

static inline float vdist2_xz(const float* a, const float* b)
{
    const float dx = b[0] - a[0], dz = b[2] - a[2];
    return dx * dx + dz * dz;
}

static inline int vequal(const float* a, const float* b)
{
    const float dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    return dx * dx + dy * dy + dz * dz < 1e-8f;
}

/* Twice the signed area of triangle abc in xz; > 0 when c lies to the right of a -> b (math frame, x right, z
 * up). The funnel below is written in terms of this sign. */
static inline float tri_area2(const float* a, const float* b, const float* c)
{
    return (c[0] - a[0]) * (b[2] - a[2]) - (b[0] - a[0]) * (c[2] - a[2]);
}

/* Squared xz distance from p to the segment ab; *t gets the parameter of the closest point. */
static float dist2_pt_seg_xz(const float* p, const float* a, const float* b, float* t)
{
    const float ex = b[0] - a[0], ez = b[2] - a[2];
    const float len2 = ex * ex + ez * ez;
    float s = len2 > 0.0f ? ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / len2 : 0.0f;
    s = s < 0.0f ? 0.0f : (s > 1.0f ? 1.0f : s);
    const float dx = a[0] + ex * s - p[0], dz = a[2] + ez * s - p[2];
    if (t)
        *t = s;
    return dx * dx + dz * dz;
}

/* dist2_pt_seg_xz in double, for a point that may lie far from the segment (a move's end up to NB_MAX_COORD away):
 * in float the squared distances to every wall round to the same value there, and the nearest is lost. */
static double dist2_pt_seg_xz_far(const float* p, const float* a, const float* b, float* t)
{
    const double ex = (double)b[0] - a[0], ez = (double)b[2] - a[2];
    const double len2 = ex * ex + ez * ez;
    double s = len2 > 0.0 ? (((double)p[0] - a[0]) * ex + ((double)p[2] - a[2]) * ez) / len2 : 0.0;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    const double dx = a[0] + ex * s - p[0], dz = a[2] + ez * s - p[2];
    if (t)
        *t = (float)s;
    return dx * dx + dz * dz;
}

/* Crossing-number test in xz (points exactly on an edge may go either way). */
static int point_in_poly_xz(const float* v, int n, const float* p)
{
    int inside = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        const float* a = &v[i * 3];
        const float* b = &v[j * 3];
        if (((a[2] > p[2]) != (b[2] > p[2])) && (p[0] < (b[0] - a[0]) * (p[2] - a[2]) / (b[2] - a[2]) + a[0]))
            inside = !inside;
    }
    return inside;
}

/* Height at p's (x, z) on triangle abc when p lies over it (with a small tolerance for points on edges). */
static int tri_height(const float* a, const float* b, const float* c, const float* p, float* h)
{
    const float v0x = c[0] - a[0], v0z = c[2] - a[2];
    const float v1x = b[0] - a[0], v1z = b[2] - a[2];
    const float v2x = p[0] - a[0], v2z = p[2] - a[2];
    const float det = v0x * v1z - v1x * v0z;
    if (fabsf(det) < 1e-12f)
        return 0;
    const float u = (v2x * v1z - v1x * v2z) / det;
    const float w = (v0x * v2z - v2x * v0z) / det;
    const float eps = 1e-4f;
    if (u < -eps || w < -eps || u + w > 1.0f + eps)
        return 0;
    *h = a[1] + (c[1] - a[1]) * u + (b[1] - a[1]) * w;
    return 1;
}

/* How far from a polygon's outline a point still counts as on it: float noise, two or three float spacings (2e-7
 * of the coordinates' magnitude), and 1e-5 near the origin. Path corners are navmesh vertices and agents stop on walls,
 * so queries start and end on outlines all the time, and rounding puts such a point a hair inside or outside
 * whichever polygon is asked. The magnitude is capped by the navmesh's own (its tiles' bounds): a point on an
 * outline lies within them, and a far end (a ray cast toward the horizon) must not widen the tolerance. (It was
 * 1e-5 of the magnitude, far end included: 1 m at 1e5, and rays went through the corners of walls there.) */
static inline float outline_tol(const nb_navmesh* nav, const float* a, const float* b)
{
    const float m = nb_maxf(nb_maxf(fabsf(a[0]), fabsf(a[2])), nb_maxf(fabsf(b[0]), fabsf(b[2])));
    return 1e-5f + 2e-7f * nb_minf(m, nav->coord_mag);
}

/* point_in_poly_xz, with points within tol of the outline counting as inside. */
static int point_on_poly_xz(const float* v, int n, const float* p, float tol)
{
    if (point_in_poly_xz(v, n, p))
        return 1;
    for (int i = 0, j = n - 1; i < n; j = i++)
        if (dist2_pt_seg_xz(p, &v[j * 3], &v[i * 3], NULL) <= tol * tol)
            return 1;
    return 0;
}

/* Segment p0 -> p1 against a convex polygon in xz grown by tol (every edge's line moved outward by tol;
 * Cyrus-Beck clipping): the parameter range [tmin, tmax] inside it and the edges it enters and leaves through
 * (-1 when it starts / ends inside). *texit: where the segment crosses the exit edge's own line, clamped into the
 * range (the wall's true position; 1 when it ends inside). 0 when it misses. The margin makes a start on the
 * outline count as inside, and a segment running along an edge (a path leg along a wall) stay inside instead of
 * leaving wherever rounding makes it cross the edge's line. */
static int clip_segment_poly(const float* p0, const float* p1, const float* v, int n, float tol, float* tmin,
                             float* tmax, int* seg_min, int* seg_max, float* texit)
{
    const float dx = p1[0] - p0[0], dz = p1[2] - p0[2];
    float lo = 0.0f, hi = 1.0f, xnum = 0.0f, xden = -1.0f;
    int smin = -1, smax = -1;
    for (int i = 0; i < n; ++i) {
        const float* a = &v[i * 3];
        const float* b = &v[((i + 1) % n) * 3];
        const float nx = b[2] - a[2], nz = -(b[0] - a[0]); /* inward normal, |edge| long */
        const float num = nx * (p0[0] - a[0]) + nz * (p0[2] - a[2]);
        const float den = nx * dx + nz * dz;
        const float slack = tol * sqrtf(nx * nx + nz * nz);
        /* inside the grown edge where num + den * t >= -slack */
        if (den == 0.0f) {
            if (num < -slack)
                return 0; /* parallel to the edge and outside it */
            continue;
        }
        const float t = -(num + slack) / den;
        if (den < 0.0f) { /* moving outward through this edge */
            if (t < hi) {
                hi = t;
                smax = i;
                xnum = num;
                xden = den;
            }
        } else if (t > lo) {
            lo = t;
            smin = i;
        }
        if (lo > hi)
            return 0;
    }
    float te = smax < 0 ? 1.0f : -xnum / xden;
    te = te < lo ? lo : (te > hi ? hi : te);
    *tmin = lo;
    *tmax = hi;
    *seg_min = smin;
    *seg_max = smax;
    *texit = te;
    return 1;
}

/* Intersection parameters of the xz lines a0 -> a1 and b0 -> b1; 0 when parallel. */
static int intersect_lines_xz(const float* a0, const float* a1, const float* b0, const float* b1, float* s, float* t)
{
    const float ux = a1[0] - a0[0], uz = a1[2] - a0[2];
    const float vx = b1[0] - b0[0], vz = b1[2] - b0[2];
    const float wx = a0[0] - b0[0], wz = a0[2] - b0[2];
    const float d = ux * vz - uz * vx;
    if (fabsf(d) < 1e-9f)
        return 0;
    *s = (vx * wz - vz * wx) / d;
    *t = (ux * wz - uz * wx) / d;
    return 1;
}

/* ================================================================================================ */
/* Polygon access                                                                                   */
/* ================================================================================================ */

static inline const float* poly_vert(const nb_tile_view* v, uint32_t p, uint32_t k)
{
    return &v->verts[(size_t)v->poly_verts[(size_t)p * v->nvp + k] * 3];
}

/* 0 when p lies farther than tol (xz) from the line of every edge of ground polygon p: then, on the polygon, it
 * lies inside it, away from its outline. A cheap filter before looking for the portals through a point: most
 * points lie inside. (Squares in float: at NB_MAX_COORD they stay below FLT_MAX.) */
static inline int near_outline(const nb_tile_view* v, uint32_t p, const float* pt, float tol)
{
    const uint32_t n = v->poly_nverts[p];
    const float tol2 = tol * tol;
    for (uint32_t i = 0, j = n - 1; i < n; j = i++) {
        const float* a = poly_vert(v, p, j);
        const float* b = poly_vert(v, p, i);
        const float ex = b[0] - a[0], ez = b[2] - a[2];
        const float c = ex * (pt[2] - a[2]) - ez * (pt[0] - a[0]);
        if (c * c <= tol2 * (ex * ex + ez * ez))
            return 1;
    }
    return 0;
}

static int poly_gather(const nb_tile_view* v, uint32_t p, float* out)
{
    const int n = v->poly_nverts[p];
    for (int k = 0; k < n; ++k)
        vcopy(&out[k * 3], poly_vert(v, p, (uint32_t)k));
    return n;
}

static inline int passes(const nb_query_filter* f, uint16_t flags)
{
    return (flags & f->include_flags) != 0 && (flags & f->exclude_flags) == 0;
}

static inline int is_offmesh(const nb_tile* t, uint32_t p) { return t->v.poly_types[p] == NB_POLY_OFFMESH; }

/* Grid order of tiles (tile_z, then tile_x): an order that does not depend on the order tiles were added in. */
static inline int tile_before(const nb_tile* a, const nb_tile* b)
{
    return a->v.tile_z != b->v.tile_z ? a->v.tile_z < b->v.tile_z : a->v.tile_x < b->v.tile_x;
}

/* Polygon (ta, pa) before (tb, pb) in grid order, then by index. */
static inline int poly_before(const nb_tile* ta, uint32_t pa, const nb_tile* tb, uint32_t pb)
{
    return ta != tb ? tile_before(ta, tb) : pa < pb;
}

/* Vertex i of a detail triangle of polygon p (Detour's convention: the polygon's own vertices first). */
static inline const float* detail_vert(const nb_tile_view* v, uint32_t p, const uint32_t* dm, uint32_t i)
{
    const uint32_t nv = v->poly_nverts[p];
    if (i < nv)
        return poly_vert(v, p, i);
    return &v->detail_verts[(size_t)(dm[0] + i - nv) * 3];
}

static inline int has_detail(const nb_tile_view* v, uint32_t p)
{
    return v->ndetail_tris > 0 && v->detail_meshes[(size_t)p * 4 + 3] > 0;
}

/* Height of polygon p's detail surface at pos (x, z); 0 when pos lies over none of its triangles. Without a
 * detail mesh the polygon is fanned from vertex 0. */
static int detail_height(const nb_tile_view* v, uint32_t p, const float* pos, float* h)
{
    if (!has_detail(v, p)) {
        const uint32_t n = v->poly_nverts[p];
        for (uint32_t k = 1; k + 1 < n; ++k)
            if (tri_height(poly_vert(v, p, 0), poly_vert(v, p, k), poly_vert(v, p, k + 1), pos, h))
                return 1;
        return 0;
    }
    const uint32_t* dm = &v->detail_meshes[(size_t)p * 4];
    for (uint32_t t = 0; t < dm[3]; ++t) {
        const uint8_t* tri = &v->detail_tris[(size_t)(dm[2] + t) * 4];
        if (tri_height(detail_vert(v, p, dm, tri[0]), detail_vert(v, p, dm, tri[1]), detail_vert(v, p, dm, tri[2]),
                       pos, h))
            return 1;
    }
    return 0;
}

/* Closest point to pos (in xz) on the edges of polygon p's detail triangles, with the surface height there. For pos
 * outside the polygon (outline) only the edges flagged as lying on its outline can hold it, and only those are read
 * (all of them when none is flagged). */
static void closest_on_detail_edges(const nb_tile_view* v, uint32_t p, const float* pos, int outline, float* out)
{
    float best = FLT_MAX, t;
    if (!has_detail(v, p)) {
        const uint32_t n = v->poly_nverts[p];
        for (uint32_t k = 0; k < n; ++k) {
            const float* a = poly_vert(v, p, k);
            const float* b = poly_vert(v, p, (k + 1) % n);
            const float d = dist2_pt_seg_xz(pos, a, b, &t);
            if (d < best) {
                best = d;
                vlerp(out, a, b, t);
            }
        }
        return;
    }
    const uint32_t* dm = &v->detail_meshes[(size_t)p * 4];
    for (int only_outline = outline; only_outline >= 0 && best == FLT_MAX; --only_outline)
        for (uint32_t i = 0; i < dm[3]; ++i) {
            const uint8_t* tri = &v->detail_tris[(size_t)(dm[2] + i) * 4];
            for (int k = 0; k < 3; ++k) {
                if (only_outline && !((tri[3] >> (k * 2)) & 1u))
                    continue;
                const float* a = detail_vert(v, p, dm, tri[k]);
                const float* b = detail_vert(v, p, dm, tri[(k + 1) % 3]);
                const float d = dist2_pt_seg_xz(pos, a, b, &t);
                if (d < best) {
                    best = d;
                    vlerp(out, a, b, t);
                }
            }
        }
}

/* How far (in xz) from polygon outlines of tile v a point p still counts as over the polygon: outline_tol's
 * measure, with the tile's extent standing in for the navmesh's. A point on a wall edge (a path's corner, an agent
 * stopped by a wall) lies a hair outside the polygon as often as inside; it stands on it all the same. */
static inline float poly_tol(const nb_tile_view* v, const float* p)
{
    const float m = nb_maxf(fabsf(p[0]), fabsf(p[2]));
    const float tm = nb_maxf(nb_maxf(fabsf(v->bmin[0]), fabsf(v->bmax[0])), nb_maxf(fabsf(v->bmin[2]), fabsf(v->bmax[2])));
    return 1e-5f + 2e-7f * nb_minf(m, tm);
}

/* Closest point on polygon p to pos: pos itself at the surface's height when pos lies over the polygon, its
 * outline included to within poly_tol (*over = 1), else the nearest point of its outline. An off-mesh polygon is
 * its segment. */
static void closest_on_poly(const nb_tile* tile, uint32_t p, const float* pos, float* out, int* over)
{
    const nb_tile_view* v = &tile->v;
    *over = 0;
    if (is_offmesh(tile, p)) {
        float t;
        const float* a = poly_vert(v, p, 0);
        const float* b = poly_vert(v, p, 1);
        dist2_pt_seg_xz(pos, a, b, &t);
        vlerp(out, a, b, t);
        return;
    }
    float verts[NB_MAX_VERTS_PER_POLY * 3], h;
    const int n = poly_gather(v, p, verts);
    const int inside = point_in_poly_xz(verts, n, pos);
    if (inside && detail_height(v, p, pos, &h)) {
        out[0] = pos[0];
        out[1] = h;
        out[2] = pos[2];
        *over = 1;
        return;
    }
    closest_on_detail_edges(v, p, pos, !inside, out);
    if (!inside) {
        /* On the outline: over the polygon, at the surface's height at the outline point (the detail edges' outline
         * runs along the polygon's). */
        const float dx = out[0] - pos[0], dz = out[2] - pos[2], tol = poly_tol(v, pos);
        if (dx * dx + dz * dz <= tol * tol) {
            out[0] = pos[0];
            out[2] = pos[2];
            *over = 1;
        }
    }
}

/* Twice the xz area of a convex polygon (positive whatever the winding). */
static float poly_area2(const float* v, int n)
{
    float a = 0.0f;
    for (int k = 1; k + 1 < n; ++k)
        a += tri_area2(&v[0], &v[k * 3], &v[(k + 1) * 3]);
    return fabsf(a);
}

/* ---- links and portals ---- */

/* Tile and polygon index of a link's target; links inside one tile skip the slot lookup. */
static inline const nb_tile* link_target(const nb_navmesh* nav, const nb_tile* from, nb_poly_ref from_ref,
                                         nb_poly_ref to, uint32_t* poly)
{
    if (nb_ref_slot(nav, to) == nb_ref_slot(nav, from_ref)) {
        *poly = nb_ref_poly(to);
        return from;
    }
    return nb_navmesh_resolve(nav, to, poly);
}

/* The ground polygon link l (of polygon ref in tile `from`) leads to, when the filter lets it pass: its tile, with
 * *poly; NULL for an off-mesh link's polygon, a filtered one, or a tile no longer there. */
static inline const nb_tile* ground_neighbour(const nb_navmesh* nav, const nb_tile* from, nb_poly_ref ref,
                                              const nb_link* l, const nb_query_filter* f, uint32_t* poly)
{
    const nb_tile* nt = link_target(nav, from, ref, l->ref, poly);
    return nt && !is_offmesh(nt, *poly) && passes(f, nt->v.poly_flags[*poly]) ? nt : NULL;
}

static const nb_link* find_link(const nb_tile* t, uint32_t p, nb_poly_ref to)
{
    for (uint32_t i = t->first_link[p]; i != NB_NULL_LINK; i = t->links[i].next)
        if (t->links[i].ref == to)
            return &t->links[i];
    return NULL;
}

/* ground_portal's part for a tile-border link. (Both stay inline: a call in A*'s inner loop cost even where no link
 * crosses a border.) */
static NB_ALWAYS_INLINE void border_portal(const float* va, const float* vb, const nb_link* l, const nb_tile_view* tv,
                                            uint32_t tp, float* left, float* right)
{
    const uint32_t tn = tv->poly_nverts[tp];
    const uint16_t* tpv = &tv->poly_verts[(size_t)tp * tv->nvp];
    float t0, t1;
    nb_border_span(va, vb, &tv->verts[(size_t)tpv[l->nedge] * 3], &tv->verts[(size_t)tpv[(l->nedge + 1u) % tn] * 3],
                   l->side, &t0, &t1);
    if (t0 > 0.0f)
        vlerp(left, va, vb, t0);
    if (t1 < 1.0f)
        vlerp(right, va, vb, t1);
}

/* link_portal between two ground polygons; pv: the row of poly_verts of the polygon the link leaves, n: its vertex
 * count; tv, tp: the neighbour. A border link's portal ends are vertices of either edge: taken as they are where
 * they are this edge's, else at the neighbour's vertex along this edge. */
static NB_ALWAYS_INLINE void ground_portal(const nb_tile_view* fv, const uint16_t* pv, uint32_t n, const nb_link* l,
                                            const nb_tile_view* tv, uint32_t tp, float* left, float* right)
{
    const uint32_t e1 = l->edge + 1u < n ? l->edge + 1u : 0u; /* edge < n for ground links */
    const float* va = &fv->verts[(size_t)pv[l->edge] * 3];
    const float* vb = &fv->verts[(size_t)pv[e1] * 3];
    vcopy(left, va);
    vcopy(right, vb);
    if (l->side != 0xff)
        border_portal(va, vb, l, tv, tp, left, right);
}

/* The opening between polygon fp (ref fref) and its neighbour tp through link l, as seen leaving fp: left and
 * right ends. An off-mesh link's portal is the single point where it attaches; a tile-border link's portal is
 * the part of the edge the neighbour's edge shares. */
static void link_portal(const nb_tile* ft, uint32_t fp, nb_poly_ref fref, const nb_link* l, const nb_tile* tt,
                        uint32_t tp, float* left, float* right)
{
    const nb_tile_view* fv = &ft->v;
    if (is_offmesh(ft, fp)) {
        vcopy(left, poly_vert(fv, fp, l->edge & 1u));
        vcopy(right, left);
        return;
    }
    if (is_offmesh(tt, tp)) {
        const nb_link* back = find_link(tt, tp, fref);
        vcopy(left, poly_vert(&tt->v, tp, back ? (back->edge & 1u) : 0u));
        vcopy(right, left);
        return;
    }
    ground_portal(fv, &fv->poly_verts[(size_t)fp * fv->nvp], fv->poly_nverts[fp], l, &tt->v, tp, left, right);
}

/* A corridor: its refs, and (straight from A*, which knows them) each polygon's tile and index, else NULL. */
typedef struct corridor {
    const nb_poly_ref* refs;
    const qnode* nodes;
    const uint32_t* node_of; /* corridor position -> node index */
} corridor;

static inline const nb_tile* corridor_poly(const nb_navmesh* nav, const corridor* c, int32_t i, uint32_t* poly)
{
    if (c->node_of) {
        const qnode* n = &c->nodes[c->node_of[i]];
        *poly = n->poly;
        return n->tile;
    }
    return nb_navmesh_resolve(nav, c->refs[i], poly);
}

/* Portal between polygons i and i + 1 of a corridor; 0 when they are not linked. */
static int path_portal(const nb_navmesh* nav, const corridor* c, int32_t i, float* left, float* right,
                       int* from_offmesh, int* to_offmesh)
{
    uint32_t fp, tp;
    const nb_tile* ft = corridor_poly(nav, c, i, &fp);
    const nb_tile* tt = corridor_poly(nav, c, i + 1, &tp);
    const nb_poly_ref from = c->refs[i], to = c->refs[i + 1];
    if (!ft || !tt)
        return 0;
    const nb_link* l = find_link(ft, fp, to);
    if (!l)
        return 0;
    link_portal(ft, fp, from, l, tt, tp, left, right);
    if (from_offmesh)
        *from_offmesh = is_offmesh(ft, fp);
    if (to_offmesh)
        *to_offmesh = is_offmesh(tt, tp);
    return 1;
}

/* Bit e set when edge e of ground polygon p leads to a usable ground neighbour (the other edges are walls). */
static uint32_t open_edges(const nb_navmesh* nav, const nb_tile* t, uint32_t p, nb_poly_ref ref,
                           const nb_query_filter* f)
{
    uint32_t mask = 0;
    const uint32_t n = t->v.poly_nverts[p];
    for (uint32_t i = t->first_link[p]; i != NB_NULL_LINK; i = t->links[i].next) {
        const nb_link* l = &t->links[i];
        if (l->edge >= n || (mask & (1u << l->edge)))
            continue;
        uint32_t np;
        if (ground_neighbour(nav, t, ref, l, f, &np))
            mask |= 1u << l->edge;
    }
    return mask;
}

/* ================================================================================================ */
/* Validation                                                                                       */
/* ================================================================================================ */

static nb_status check_vec(nb_context* ctx, const char* fn, const char* name, const float* v)
{
    if (!v)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, name);
    for (int k = 0; k < 3; ++k)
        if (!isfinite(v[k]))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: %s[%d] is not finite (%g)", fn, name, k, (double)v[k]);
    return NB_OK;
}

/* A point: finite, and within NB_MAX_COORD as bakes ask (past it float spacing is above 64 and squared distances
 * lose every wall's difference). Half extents may be larger: a box wider than the world finds every polygon. */
static nb_status check_point(nb_context* ctx, const char* fn, const char* name, const float* v)
{
    const nb_status st = check_vec(ctx, fn, name, v);
    if (st != NB_OK)
        return st;
    for (int k = 0; k < 3; ++k)
        if (fabsf(v[k]) > NB_MAX_COORD)
            return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: %s[%d] is %g, beyond %g, the largest coordinate a navmesh holds",
                           fn, name, k, (double)v[k], (double)NB_MAX_COORD);
    return NB_OK;
}

static nb_status check_filter(nb_context* ctx, const char* fn, const nb_query_filter* f)
{
    if (!f)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: filter is NULL", fn);
    for (int a = 0; a < 64; ++a) {
        if (!isfinite(f->area_cost[a]))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: filter->area_cost[%d] is not finite (%g)", fn, a,
                           (double)f->area_cost[a]);
        if (f->area_cost[a] < 0.0f)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: filter->area_cost[%d] must be >= 0 (got %g)", fn, a,
                           (double)f->area_cost[a]);
    }
    return NB_OK;
}

static nb_status check_ref(const nb_query* q, const char* fn, const char* name, nb_poly_ref ref,
                           const nb_tile** tile, uint32_t* poly)
{
    *tile = nb_navmesh_resolve(q->nav, ref, poly);
    if (!*tile)
        return nb_fail(q->ctx, NB_ERR_NOT_FOUND, "%s: %s 0x%08x is not a polygon of this navmesh (invalid or stale)",
                       fn, name, (unsigned)ref);
    return NB_OK;
}

static nb_status check_positive(nb_context* ctx, const char* fn, const char* name, float value)
{
    if (!isfinite(value))
        return nb_fail(ctx, NB_ERR_NONFINITE, "%s: %s is not finite (%g)", fn, name, (double)value);
    if (value <= 0.0f)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: %s must be > 0 (got %g)", fn, name, (double)value);
    return NB_OK;
}

static nb_status check_half_extents(nb_context* ctx, const char* fn, const float* h)
{
    nb_status st = check_vec(ctx, fn, "half_extents", h);
    if (st != NB_OK)
        return st;
    for (int k = 0; k < 3; ++k)
        if (h[k] <= 0.0f)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: half_extents[%d] must be > 0 (got %g)", fn, k, (double)h[k]);
    return NB_OK;
}

#define CHECK_(expr)              \
    do {                          \
        const nb_status st_ = (expr); \
        if (st_ != NB_OK)         \
            return st_;           \
    } while (0)

/* ================================================================================================ */
/* Create / destroy                                                                                 */
/* ================================================================================================ */

/* The calls made one at a time from JavaScript (everything but the batch of paths) are compiled for size and kept
 * out of their exports: a call costs mostly its crossing from JavaScript, and inlined at -O3 into the exports they
 * took 5.7 KB more wasm (1.8 KB gzip). The batch (nb_query_find_paths) keeps the helpers they share at full speed. */
NB_COLD NB_NOINLINE void nb_query_filter_init(nb_query_filter* filter)
{
    if (!filter)
        return;
    for (int a = 0; a < 64; ++a)
        filter->area_cost[a] = 1.0f;
    filter->include_flags = 0xffff;
    filter->exclude_flags = 0;
}

NB_COLD NB_NOINLINE void nb_query_destroy(nb_context* ctx, nb_query* q)
{
    if (!q)
        return;
    nb_free(ctx, q->nodes);
    nb_free(ctx, q->heap);
    nb_free(ctx, q->buckets);
    nb_free(ctx, q->path);
    nb_free(ctx, q->path_nodes);
    nb_free(ctx, q->spoints);
    nb_free(ctx, q->rp_acc);
    nb_free(ctx, q->cc_label);
    nb_free(ctx, q);
}

/* Nodes A* may need on nav: one per polygon, and one more for each other side it is entered across (astar,
 * link_entry). Bounded by the polygons plus the links that cross a tile side. */
static uint64_t nodes_needed(const nb_navmesh* nav)
{
    uint64_t n = nb_navmesh_poly_count(nav);
    for (uint32_t i = 0; i < nav->params.max_tiles; ++i) {
        const nb_tile* t = &nav->tiles[i];
        if (!t->data)
            continue;
        for (uint32_t p = 0; p < t->v.npolys; ++p)
            for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next)
                n += link_entry(t->links[li].side) != 0;
    }
    return n;
}

NB_COLD NB_NOINLINE nb_status nb_query_create(nb_context* ctx, const nb_navmesh* nav, uint32_t max_nodes, nb_query** out)
{
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_query_create: out is NULL");
    *out = NULL;
    if (!ctx)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_query_create: ctx is NULL");
    if (!nav)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_query_create: nav is NULL");
    if (max_nodes == 0) { /* every node A* may need on the navmesh as it is now, as a power of two: it never runs out */
        const uint64_t need = nodes_needed(nav);
        max_nodes = QUERY_MIN_NODES;
        while (max_nodes < need && max_nodes < QUERY_MAX_NODES)
            max_nodes <<= 1;
    }
    if (max_nodes > QUERY_MAX_NODES)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "nb_query_create: max_nodes must be 0..%u (got %u)", QUERY_MAX_NODES,
                       max_nodes);
    nb_status st = NB_OK;
    nb_query* q = (nb_query*)nb_calloc(ctx, 1, sizeof(nb_query));
    if (!q)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'query' (%zu)", sizeof(nb_query));
    q->ctx = ctx;
    q->nav = nav;
    q->max_nodes = max_nodes;
    /* Buckets: a power of two >= the node count (load factor <= 1), at least 16. */
    uint32_t bits = 4;
    while ((1u << bits) < max_nodes)
        ++bits;
    q->bucket_count = 1u << bits;
    q->bucket_shift = 32u - bits;
    q->spoints_cap = (int32_t)(2 * max_nodes + 4); /* apexes + crossings + start and end */

    q->nodes = (qnode*)nb_alloc(ctx, sizeof(qnode) * max_nodes);
    if (!q->nodes) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'nodes' (%u)", max_nodes);
        goto cleanup;
    }
    q->heap = (qheap*)nb_alloc(ctx, sizeof(qheap) * max_nodes);
    if (!q->heap) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'heap' (%u)", max_nodes);
        goto cleanup;
    }
    q->buckets = (qbucket*)nb_calloc(ctx, q->bucket_count, sizeof(qbucket));
    if (!q->buckets) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'buckets' (%u)", q->bucket_count);
        goto cleanup;
    }
    q->path = (nb_poly_ref*)nb_alloc(ctx, sizeof(nb_poly_ref) * max_nodes);
    if (!q->path) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'path' (%u)", max_nodes);
        goto cleanup;
    }
    q->path_nodes = (uint32_t*)nb_alloc(ctx, sizeof(uint32_t) * max_nodes);
    if (!q->path_nodes) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'path_nodes' (%u)", max_nodes);
        goto cleanup;
    }
    q->spoints = (float*)nb_alloc(ctx, (sizeof(float) * 3 + sizeof(nb_poly_ref) + 1) * (size_t)q->spoints_cap);
    if (q->spoints) {
        q->srefs = (nb_poly_ref*)(q->spoints + 3 * (size_t)q->spoints_cap);
        q->sflags = (uint8_t*)(q->srefs + q->spoints_cap);
    } else {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'points' (%d)", q->spoints_cap);
        goto cleanup;
    }
    q->rp_cap = nb_navmesh_poly_count(nav);
    if (q->rp_cap) {
        q->rp_acc = (double*)nb_alloc(ctx, (sizeof(double) + sizeof(uint32_t)) * (size_t)q->rp_cap);
        if (!q->rp_acc) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'random point areas' (%u)", q->rp_cap);
            goto cleanup;
        }
        q->rp_poly = (uint32_t*)(q->rp_acc + q->rp_cap);
    }
    /* Components for as many polygons as there are nodes: astar labels them only with a node per polygon. */
    q->cc_cap = max_nodes;
    const size_t slots = nav->params.max_tiles;
    q->cc_label =
        (uint32_t*)nb_alloc(ctx, (sizeof(uint32_t) * 3 + 1) * (size_t)q->cc_cap + sizeof(uint32_t) * (slots + 1));
    if (!q->cc_label) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_query_create: out of memory 'components' (%u)", q->cc_cap);
        goto cleanup;
    }
    q->cc_first = q->cc_label + q->cc_cap;
    q->cc_members = q->cc_first + q->cc_cap + 1;
    q->cc_base = q->cc_members + q->cc_cap;
    q->cc_flags = (uint8_t*)(q->cc_base + slots);
    *out = q;
    return NB_OK;

cleanup:
    nb_query_destroy(ctx, q);
    return st;
}

/* ================================================================================================ */
/* Nearest polygon                                                                                  */
/* ================================================================================================ */

static inline int box_overlap(const float* amin, const float* amax, const float* bmin, const float* bmax)
{
    return amin[0] <= bmax[0] && amax[0] >= bmin[0] && amin[1] <= bmax[1] && amax[1] >= bmin[1] &&
           amin[2] <= bmax[2] && amax[2] >= bmin[2];
}

/* The box [lo, hi] in the units of v's BV tree, as the tree was quantized (the minimum floored, the maximum ceiled:
 * nothing is missed), clamped as floats (a large bv_quant puts them beyond the int range). */
static inline void bv_box(const nb_tile_view* v, const float* lo, const float* hi, uint16_t* qlo, uint16_t* qhi)
{
    for (int a = 0; a < 3; ++a) {
        const float l = (nb_maxf(lo[a], v->bmin[a]) - v->bmin[a]) * v->bv_quant;
        const float h = (nb_minf(hi[a], v->bmax[a]) - v->bmin[a]) * v->bv_quant;
        qlo[a] = (uint16_t)nb_minf(nb_maxf(floorf(l), 0.0f), 65535.0f);
        qhi[a] = (uint16_t)nb_minf(nb_maxf(ceilf(h), 0.0f), 65535.0f);
    }
}

/* Does BV node n overlap the quantized box? */
static inline int bv_hit(const nb_bv_node* n, const uint16_t* qlo, const uint16_t* qhi)
{
    return qlo[0] <= n->bmax[0] && qhi[0] >= n->bmin[0] && qlo[1] <= n->bmax[1] && qhi[1] >= n->bmin[1] &&
           qlo[2] <= n->bmax[2] && qhi[2] >= n->bmin[2];
}

/* The next leaf of tile view v's tree at or after *i that the quantized box hits and that names a polygon of the
 * tile, or NULL at the end: a preorder walk, where a node that misses the box is skipped with its whole subtree by
 * its escape offset. */
static inline const nb_bv_node* bv_next_leaf(const nb_tile_view* v, uint32_t* i, const uint16_t* qlo,
                                             const uint16_t* qhi)
{
    while (*i < v->nbv) {
        const nb_bv_node* n = &v->bv[*i];
        const int hit = bv_hit(n, qlo, qhi);
        if (n->i < 0) {
            *i += hit ? 1u : (uint32_t)(-n->i);
            continue;
        }
        ++*i;
        if (hit && (uint32_t)n->i < v->npolys)
            return n;
    }
    return NULL;
}

/* Does ground polygon p's bounds (its vertices and its detail surface's: the surface a point stands on can rise
 * above or dip below the outline) overlap the box [lo, hi]? */
static int poly_overlaps_box(const nb_tile_view* v, uint32_t p, const float* lo, const float* hi)
{
    float pmin[3], pmax[3];
    vcopy(pmin, poly_vert(v, p, 0));
    vcopy(pmax, pmin);
    for (uint32_t k = 1; k < v->poly_nverts[p]; ++k) {
        const float* c = poly_vert(v, p, k);
        for (int a = 0; a < 3; ++a) {
            pmin[a] = nb_minf(pmin[a], c[a]);
            pmax[a] = nb_maxf(pmax[a], c[a]);
        }
    }
    if (box_overlap(lo, hi, pmin, pmax))
        return 1; /* (the detail surface only widens them) */
    const uint32_t* dm = &v->detail_meshes[(size_t)p * 4];
    for (uint32_t k = 0; k < dm[1]; ++k) {
        const float* c = &v->detail_verts[((size_t)dm[0] + k) * 3];
        for (int a = 0; a < 3; ++a) {
            pmin[a] = nb_minf(pmin[a], c[a]);
            pmax[a] = nb_maxf(pmax[a], c[a]);
        }
    }
    return box_overlap(lo, hi, pmin, pmax);
}

typedef struct nearest_state {
    const float* center;
    const float *lo, *hi; /* the box: a polygon counts only when its bounds overlap it (in_box) */
    const nb_bv_node* leaf; /* the tree's leaf of the polygon considered (NULL: no tree, its bounds were tested) */
    const nb_tile* sure_tile; /* the tile sure_lo/sure_hi were worked out for (in_box) */
    int32_t sure_lo[3], sure_hi[3];
    nb_poly_ref ref;
    float dist;       /* Detour's measure, see consider() */
    float point[3];
    int over;         /* point came from the polygon's surface under center (not from its outline) */
    int zero_only;    /* first pass: only look for the first candidate scoring 0 (see nearest_core) */
    float margin;     /* xz distance beyond which a point is surely off a polygon's outline (zero_only) */
} nearest_state;

/* The first pass of nearest_core: does polygon p score exactly 0? Mostly answered without its detail edges: a
 * point over the polygon scores from its height, and a point off the polygon scores 0 only if it lies exactly
 * on an outline (the detail edges' points closest to it then coincide with it), which is ruled out when it is
 * further than the margin from the outline (the margin covers rounding of the detail vertices). */
static int scores_zero(const nb_tile* t, uint32_t p, const nearest_state* s, float* pt, int* over)
{
    const nb_tile_view* v = &t->v;
    const float* c = s->center;
    float verts[NB_MAX_VERTS_PER_POLY * 3], h;
    const int n = poly_gather(v, p, verts);
    const int inside = point_in_poly_xz(verts, n, c);
    if (inside && detail_height(v, p, c, &h)) {
        if (fabsf(c[1] - h) - v->walkable_climb > 0.0f)
            return 0;
        pt[0] = c[0];
        pt[1] = h;
        pt[2] = c[2];
        *over = 1;
    } else {
        if (!inside) { /* (inside but over no detail triangle: rare, scored in full) */
            const float m2 = s->margin * s->margin;
            int near = 0;
            for (int k = 0, j = n - 1; k < n && !near; j = k++)
                near = dist2_pt_seg_xz(c, &verts[j * 3], &verts[k * 3], NULL) <= m2;
            if (!near)
                return 0;
        }
        closest_on_detail_edges(v, p, c, !inside, pt);
        const float dx = pt[0] - c[0], dy = pt[1] - c[1], dz = pt[2] - c[2];
        const float tol = poly_tol(v, c);
        if (!inside && dx * dx + dz * dz <= tol * tol) { /* on the outline: over it (closest_on_poly) */
            if (fabsf(dy) - v->walkable_climb > 0.0f)
                return 0;
            pt[0] = c[0];
            pt[2] = c[2];
            *over = 1;
            return 1;
        }
        if (dx * dx + dy * dy + dz * dz != 0.0f)
            return 0;
        *over = 0;
    }
    return 1;
}

/* Does the bounds of polygon p of tile t overlap the box? The tree found it by its bounds rounded outward by up to a
 * unit (a cell, on every axis), so it can miss the box by that much. A leaf whose rounded minimum lies a whole unit
 * below the box's maximum and whose rounded maximum lies a unit above the box's minimum, on every axis, overlaps it
 * for sure (the true bounds lie less than a unit inside the rounded ones): sure_lo/sure_hi, worked out once per tile
 * (a bound at the clamp, 0 or 65535, may be further off: sure_hi stays below 65535 and sure_lo above 0). The others
 * are tested exactly. Asked only of the candidates that would win (few). */
static int in_box(const nb_tile* t, uint32_t p, nearest_state* s)
{
    const nb_bv_node* n = s->leaf;
    if (!n)
        return 1;
    const nb_tile_view* v = &t->v;
    if (s->sure_tile != t) {
        for (int a = 0; a < 3; ++a) {
            /* floor and ceil of values clamped to the integer range first */
            const float h = nb_minf((s->hi[a] - v->bmin[a]) * v->bv_quant - 1.0f, 65534.0f);
            const float l = nb_maxf((s->lo[a] - v->bmin[a]) * v->bv_quant + 1.0f, 1.0f);
            s->sure_hi[a] = h < 0.0f ? -1 : (int32_t)h;
            s->sure_lo[a] = l > 65536.0f ? 65536 : (int32_t)l + ((float)(int32_t)l < l);
        }
        s->sure_tile = t;
    }
    const int32_t* sl = s->sure_lo;
    const int32_t* sh = s->sure_hi;
    if (n->bmin[0] <= sh[0] && n->bmax[0] >= sl[0] && n->bmin[1] <= sh[1] && n->bmax[1] >= sl[1] &&
        n->bmin[2] <= sh[2] && n->bmax[2] >= sl[2])
        return 1;
    return poly_overlaps_box(v, p, s->lo, s->hi);
}

/* Scores one candidate (Detour's rule): over the polygon, the squared vertical gap less the agent's climb,
 * clamped at 0 (a point within a step of a floor stands on it and beats any polygon merely beside it); beside
 * the polygon, the squared distance to its outline. Only a polygon whose bounds overlap the box can win. */
static void consider(const nb_navmesh* nav, const nb_tile* t, uint32_t p, nearest_state* s)
{
    float pt[3];
    int over;
    if (s->zero_only) {
        if (scores_zero(t, p, s, pt, &over) && in_box(t, p, s)) {
            s->dist = 0.0f;
            s->ref = nb_navmesh_ref_of(nav, t, p);
            s->over = over;
            vcopy(s->point, pt);
        }
        return;
    }
    closest_on_poly(t, p, s->center, pt, &over);
    float d;
    if (over) {
        d = fabsf(s->center[1] - pt[1]) - t->v.walkable_climb;
        d = d > 0.0f ? d * d : 0.0f;
    } else {
        const float dx = pt[0] - s->center[0], dy = pt[1] - s->center[1], dz = pt[2] - s->center[2];
        d = dx * dx + dy * dy + dz * dz;
    }
    if (d < s->dist && in_box(t, p, s)) {
        s->dist = d;
        s->ref = nb_navmesh_ref_of(nav, t, p);
        s->over = over;
        vcopy(s->point, pt);
    }
}

static void nearest_in_tile(const nb_navmesh* nav, const nb_tile* t, const float* lo, const float* hi,
                            const nb_query_filter* f, nearest_state* s)
{
    const nb_tile_view* v = &t->v;
    if (!box_overlap(lo, hi, v->bmin, v->bmax))
        return;
    if (v->nbv == 0) { /* no tree: test each polygon's bounds */
        for (uint32_t p = 0; p < v->npolys; ++p) {
            if (is_offmesh(t, p) || !passes(f, v->poly_flags[p]) || !poly_overlaps_box(v, p, lo, hi))
                continue;
            s->leaf = NULL;
            consider(nav, t, p, s);
            if (s->dist == 0.0f)
                return;
        }
        return;
    }
    uint16_t qlo[3], qhi[3];
    bv_box(v, lo, hi, qlo, qhi);
    uint32_t i = 0;
    for (const nb_bv_node* n; (n = bv_next_leaf(v, &i, qlo, qhi));) {
        const uint32_t p = (uint32_t)n->i;
        if (is_offmesh(t, p) || !passes(f, v->poly_flags[p]))
            continue;
        s->leaf = n;
        consider(nav, t, p, s);
        if (s->dist == 0.0f)
            return; /* nothing scores below 0, and ties keep the first: the answer is final */
    }
}

/* Grid cells covered by the box [lo, hi] (nb_navmesh_tile_coords' mapping, clamped so that huge boxes cannot
 * overflow the integer conversion). */
static void tile_range(const nb_navmesh* nav, const float* lo, const float* hi, int32_t* x0, int32_t* z0,
                       int32_t* x1, int32_t* z1)
{
    const nb_navmesh_params* p = &nav->params;
    const double lim = 1 << 30;
    double c[4] = { floor(((double)lo[0] - p->origin[0]) / p->tile_width),
                    floor(((double)lo[2] - p->origin[2]) / p->tile_depth),
                    floor(((double)hi[0] - p->origin[0]) / p->tile_width),
                    floor(((double)hi[2] - p->origin[2]) / p->tile_depth) };
    for (int k = 0; k < 4; ++k)
        c[k] = c[k] < -lim ? -lim : (c[k] > lim ? lim : c[k]);
    *x0 = (int32_t)c[0];
    *z0 = (int32_t)c[1];
    *x1 = (int32_t)c[2];
    *z1 = (int32_t)c[3];
}

static nb_poly_ref nearest_core(const nb_query* q, const float* center, const float* half, const nb_query_filter* f,
                                float* point, int* over)
{
    const nb_navmesh* nav = q->nav;
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        lo[a] = center[a] - half[a];
        hi[a] = center[a] + half[a];
    }
    int32_t x0, z0, x1, z1;
    tile_range(nav, lo, hi, &x0, &z0, &x1, &z1);
    const int by_slot = ((int64_t)x1 - x0 + 1) * ((int64_t)z1 - z0 + 1) > (int64_t)nav->tile_count;
    /* The answer is the first candidate (in walk order) with the lowest score, and no score is below 0. Points
     * on the navmesh (the usual query) have a candidate scoring 0: a first pass looks only for the first one,
     * which mostly avoids the detail edges of the candidates before it, and the walk stops there. Without
     * one, the second pass scores every candidate. */
    nearest_state s;
    s.center = center;
    s.lo = lo;
    s.hi = hi;
    s.leaf = NULL;
    s.sure_tile = NULL;
    s.margin = 1e-5f * (1.0f + fabsf(center[0]) + fabsf(center[2]));
    for (s.zero_only = 1; s.zero_only >= 0; --s.zero_only) {
        s.ref = 0;
        s.dist = FLT_MAX;
        s.over = 0;
        vcopy(s.point, center);
        if (by_slot) {
            /* A box wider than the world: visit the tiles themselves rather than the empty grid cells. */
            for (uint32_t i = 0; i < nav->params.max_tiles && s.dist > 0.0f; ++i) {
                const nb_tile* t = &nav->tiles[i];
                if (t->data && t->v.tile_x >= x0 && t->v.tile_x <= x1 && t->v.tile_z >= z0 && t->v.tile_z <= z1)
                    nearest_in_tile(nav, t, lo, hi, f, &s);
            }
        } else {
            for (int32_t z = z0; z <= z1 && s.dist > 0.0f; ++z)
                for (int32_t x = x0; x <= x1 && s.dist > 0.0f; ++x) {
                    const nb_tile* t = nb_navmesh_tile_at(nav, x, z);
                    if (t)
                        nearest_in_tile(nav, t, lo, hi, f, &s);
                }
        }
        if (s.dist == 0.0f)
            break;
    }
    if (point)
        vcopy(point, s.point);
    if (over)
        *over = s.over;
    return s.ref;
}

NB_COLD NB_NOINLINE nb_status nb_query_find_nearest_poly(nb_query* q, const float center[3], const float half_extents[3],
                                     const nb_query_filter* filter, nb_poly_ref* ref, float nearest[3])
{
    static const char* fn = "nb_query_find_nearest_poly";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    if (!ref)
        return nb_fail(q->ctx, NB_ERR_NULL_ARG, "%s: ref is NULL", fn);
    *ref = 0;
    CHECK_(check_point(q->ctx, fn, "center", center));
    CHECK_(check_half_extents(q->ctx, fn, half_extents));
    CHECK_(check_filter(q->ctx, fn, filter));
    *ref = nearest_core(q, center, half_extents, filter, nearest, NULL);
    return NB_OK;
}

/* ================================================================================================ */
/* A* over polygons                                                                                 */
/* ================================================================================================ */

/* The smallest cost per unit of distance any polygon can have: scaling the straight-line heuristic by it keeps
 * A* admissible when some areas cost less than 1. */
static float min_area_cost(const nb_query_filter* f)
{
    float m = f->area_cost[1];
    for (int a = 2; a < 64; ++a)
        m = nb_minf(m, f->area_cost[a]);
    return m;
}

/* ---- connected components: an end the search cannot reach, known before searching ----
 * A search toward an end it cannot reach visits every polygon it can reach before it gives up: on a world of
 * 10,000 polygons about 15 times a reachable end's time. The query labels the polygons the filter lets through
 * with their component (polygons joined by links), for the navmesh generation and filter flags they were labelled
 * for, after the first search that ends without reaching its end (navmeshes whose ends are all reachable never pay
 * for it). An end in another component than the start is out of reach. A component holding a link without its way
 * back (a one-way off-mesh link) is marked: there the direction matters, and only a search can tell. */
#define CC_NONE UINT32_MAX
#define CC_ASYM 1u    /* (of a polygon) one of its links has no way back */
#define CC_ONE_WAY 2u /* (of a component, at the polygon numbered as its label) it holds a CC_ASYM polygon */

static inline int components_ready(const nb_query* q, const nb_query_filter* f)
{
    return q->cc_ready && q->cc_gen == q->nav->generation && q->cc_include == f->include_flags &&
           q->cc_exclude == f->exclude_flags;
}

static inline uint32_t component_of(const nb_query* q, const nb_tile* t, uint32_t p)
{
    return q->cc_label[q->cc_base[t - q->nav->tiles] + p];
}

static uint32_t cc_root(uint32_t* parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Labels the components for filter (union-find over the links, the labels doubling as parents). Leaves no labels
 * when the navmesh has more polygons than the query was made for. */
static NB_NOINLINE void components_label(nb_query* q, const nb_query_filter* f)
{
    const nb_navmesh* nav = q->nav;
    q->cc_ready = 0;
    if (!q->cc_label || nav->poly_count > q->cc_cap)
        return;
    uint32_t* label = q->cc_label;
    uint8_t* flags = q->cc_flags;
    uint32_t count = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        q->cc_base[s] = count;
        if (!t->data)
            continue;
        for (uint32_t p = 0; p < t->v.npolys; ++p) {
            label[count + p] = passes(f, t->v.poly_flags[p]) ? count + p : CC_NONE;
            flags[count + p] = 0;
        }
        count += t->v.npolys;
    }
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        for (uint32_t p = 0; p < t->v.npolys; ++p) {
            const uint32_t i = q->cc_base[s] + p;
            if (label[i] == CC_NONE)
                continue;
            const nb_poly_ref ref = nb_navmesh_ref_of(nav, t, p);
            for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next) {
                const nb_link* l = &t->links[li];
                uint32_t np;
                const nb_tile* nt = l->ref ? link_target(nav, t, ref, l->ref, &np) : NULL;
                if (!nt)
                    continue;
                const uint32_t j = q->cc_base[nt - nav->tiles] + np;
                if (label[j] == CC_NONE)
                    continue;
                /* (links between ground polygons of a mutual tile, and across tile borders, have their way back) */
                const int paired = !is_offmesh(t, p) && !is_offmesh(nt, np) && (nt != t || t->mutual);
                if (!paired && !find_link(nt, np, ref))
                    flags[i] |= CC_ASYM;
                const uint32_t a = cc_root(label, i), b = cc_root(label, j);
                if (a < b)
                    label[b] = a;
                else if (b < a)
                    label[a] = b;
            }
        }
    }
    /* Roots to component numbers in order of first polygon (a root is its component's first polygon: unions keep
     * the smaller), the polygons' one-way marks to their components, and the members grouped by component. */
    uint32_t* first = q->cc_first;
    uint32_t comps = 0;
    for (uint32_t i = 0; i < count; ++i)
        if (label[i] != CC_NONE)
            label[i] = cc_root(label, i);
    for (uint32_t i = 0; i < count; ++i) {
        if (label[i] == CC_NONE)
            continue;
        if (label[i] == i) {
            first[comps] = 0;
            label[i] = comps++;
        } else {
            label[i] = label[label[i]]; /* the root comes first: numbered already */
        }
        first[label[i]]++;
    }
    for (uint32_t i = 0; i < count; ++i)
        if ((flags[i] & CC_ASYM) && label[i] != CC_NONE)
            flags[label[i]] |= CC_ONE_WAY;
    uint32_t sum = 0;
    for (uint32_t k = 0; k < comps; ++k) { /* first[k]: the end of k's members while they are placed, then its start */
        sum += first[k];
        first[k] = sum;
    }
    first[comps] = sum;
    for (uint32_t s = nav->params.max_tiles; s-- > 0;) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        for (uint32_t p = t->v.npolys; p-- > 0;) {
            const uint32_t k = label[q->cc_base[s] + p];
            if (k != CC_NONE)
                q->cc_members[--first[k]] = s << NB_POLY_BITS | p;
        }
    }
    q->cc_gen = nav->generation;
    q->cc_include = f->include_flags;
    q->cc_exclude = f->exclude_flags;
    q->cc_ready = 1;
}

/* Writes the corridor from the start node to node `last` into path (its first max_path polygons when longer);
 * returns 1 when it had to be cut. */
static int write_corridor(const nb_query* q, uint32_t last, nb_poly_ref* path, uint32_t* node_of, int32_t max_path,
                          int32_t* count)
{
    uint32_t n = 0;
    for (uint32_t i = last + 1; i; i = q->nodes[i - 1].parent)
        ++n;
    uint32_t i = last + 1;
    for (uint32_t skip = n > (uint32_t)max_path ? n - (uint32_t)max_path : 0; skip > 0; --skip)
        i = q->nodes[i - 1].parent;
    const int32_t keep = n > (uint32_t)max_path ? max_path : (int32_t)n;
    for (int32_t k = keep - 1; k >= 0; --k, i = q->nodes[i - 1].parent) {
        path[k] = q->nodes[i - 1].ref;
        if (node_of)
            node_of[k] = i - 1;
    }
    *count = keep;
    return n > (uint32_t)max_path;
}

/* A lower bound of poly_end_dist2 for ground polygon p of view v, from its bounds: its outline in xz, then the heights
 * of its outline and detail vertices (an end above or below a floor). Above `cut` (from the xz part alone) it may stop
 * early with a bound that is still above cut. */
static float poly_bound2(const nb_tile_view* v, uint32_t p, const float* end, float cut)
{
    const uint16_t* pv = &v->poly_verts[(size_t)p * v->nvp];
    const int nv = v->poly_nverts[p];
    float lo[3] = { FLT_MAX, FLT_MAX, FLT_MAX }, hi[3] = { -FLT_MAX, -FLT_MAX, -FLT_MAX };
    for (int j = 0; j < nv; ++j) {
        const float* c = &v->verts[(size_t)pv[j] * 3];
        lo[0] = nb_minf(lo[0], c[0]);
        hi[0] = nb_maxf(hi[0], c[0]);
        lo[2] = nb_minf(lo[2], c[2]);
        hi[2] = nb_maxf(hi[2], c[2]);
    }
    const float bx = nb_maxf(nb_maxf(lo[0] - end[0], end[0] - hi[0]), 0.0f);
    const float bz = nb_maxf(nb_maxf(lo[2] - end[2], end[2] - hi[2]), 0.0f);
    const float bxz = bx * bx + bz * bz;
    if (bxz > cut)
        return bxz;
    const uint32_t* dm = &v->detail_meshes[(size_t)p * 4];
    for (int j = 0; j < nv; ++j) {
        lo[1] = nb_minf(lo[1], v->verts[(size_t)pv[j] * 3 + 1]);
        hi[1] = nb_maxf(hi[1], v->verts[(size_t)pv[j] * 3 + 1]);
    }
    for (uint32_t j = 0; j < dm[1]; ++j) {
        lo[1] = nb_minf(lo[1], v->detail_verts[((size_t)dm[0] + j) * 3 + 1]);
        hi[1] = nb_maxf(hi[1], v->detail_verts[((size_t)dm[0] + j) * 3 + 1]);
    }
    const float by = nb_maxf(nb_maxf(lo[1] - end[1], end[1] - hi[1]), 0.0f);
    return bxz + by * by;
}

/* A lower bound of the squared distance from `end` to what lies inside BV node n of view v: to its bounds, less
 * `margin` on each axis for their rounding back to world units. */
static float bv_bound2(const nb_tile_view* v, const nb_bv_node* n, const float* end, float margin)
{
    const float inv = 1.0f / v->bv_quant;
    float d = 0.0f;
    for (int a = 0; a < 3; ++a) {
        const float e = nb_maxf(
            nb_maxf(v->bmin[a] + n->bmin[a] * inv - end[a], end[a] - (v->bmin[a] + n->bmax[a] * inv)) - margin, 0.0f);
        d += e * e;
    }
    return d;
}

/* The margin bv_bound2 takes near `end`. */
static inline float bv_margin(const float* end)
{
    return 1e-5f * (1.0f + fabsf(end[0]) + fabsf(end[1]) + fabsf(end[2]));
}

/* The squared distance from `end` to the closest point of ground polygon p (closest_on_poly's point). */
static float poly_end_dist2(const nb_tile* t, uint32_t poly, const float* end)
{
    const nb_tile_view* v = &t->v;
    float verts[NB_MAX_VERTS_PER_POLY * 3], pt[3], h;
    const int nv = poly_gather(v, poly, verts);
    const int inside = point_in_poly_xz(verts, nv, end);
    if (inside && detail_height(v, poly, end, &h)) {
        pt[0] = end[0];
        pt[1] = h;
        pt[2] = end[2];
    } else if (!inside) {
        /* closest_on_poly's point, found more cheaply: the outline point nearest in xz (the detail mesh's outline
         * edges run along the polygon's), at the surface's height there; end itself at that height when it lies on
         * the outline */
        float near2 = FLT_MAX, u;
        for (int j = 0, m = nv - 1; j < nv; m = j++) {
            const float d = dist2_pt_seg_xz(end, &verts[m * 3], &verts[j * 3], &u);
            if (d < near2) {
                near2 = d;
                vlerp(pt, &verts[m * 3], &verts[j * 3], u);
            }
        }
        if (detail_height(v, poly, pt, &h))
            pt[1] = h;
        else
            closest_on_detail_edges(v, poly, end, 1, pt);
        const float tol = poly_tol(v, end);
        if (near2 <= tol * tol) {
            pt[0] = end[0];
            pt[2] = end[2];
        }
    } else {
        closest_on_detail_edges(v, poly, end, 0, pt);
    }
    const float dx = pt[0] - end[0], dy = pt[1] - end[1], dz = pt[2] - end[2];
    return dx * dx + dy * dy + dz * dz;
}

/* nearest_visited's scoring of node i against the best so far: poly_end_dist2 of its polygon; ties go to the polygon
 * first in grid order (as nearest_in_component breaks them), then to the earlier node. */
static void visited_score(const qnode* nodes, uint32_t i, const float* end, float* best_d, uint32_t* best)
{
    const qnode* n = &nodes[i];
    const qnode* b = &nodes[*best];
    const float d = poly_end_dist2(n->tile, n->poly, end);
    if (d < *best_d || (d == *best_d && (poly_before(n->tile, n->poly, b->tile, b->poly) ||
                                          (n->tile == b->tile && n->poly == b->poly && i < *best)))) {
        *best_d = d;
        *best = i;
    }
}

/* The earliest node of polygon ref in the finished search, or UINT32_MAX when it was not visited. */
static uint32_t visited_node(const nb_query* q, nb_poly_ref ref)
{
    const qbucket* b = &q->buckets[(uint32_t)(ref * 2654435761u) >> q->bucket_shift];
    uint32_t first = UINT32_MAX;
    if (b->stamp == q->stamp)
        for (uint32_t i = b->head; i; i = q->nodes[i - 1].next)
            if (q->nodes[i - 1].ref == ref && i - 1 < first)
                first = i - 1;
    return first;
}

#define VISITED_MAX_TILES 16
#define VISITED_CANDIDATES 32

/* Candidates of nearest_visited with a lower bound of their distance (squared), scored nearest bound first so that
 * the first ones scored rule the others out. */
typedef struct visited_cands {
    float bound[VISITED_CANDIDATES];
    uint32_t node[VISITED_CANDIDATES];
    int count;
} visited_cands;

static void cand_add(visited_cands* c, float bound, uint32_t node, const qnode* nodes, const float* end, float* best_d,
                     uint32_t* best)
{
    if (bound > *best_d)
        return;
    if (c->count == VISITED_CANDIDATES) { /* full: scored at once */
        visited_score(nodes, node, end, best_d, best);
        return;
    }
    c->bound[c->count] = bound;
    c->node[c->count++] = node;
}

/* The candidate with the smallest bound (count > 0). */
static int cand_nearest(const float* bound, int count)
{
    int k = 0;
    for (int j = 1; j < count; ++j)
        if (bound[j] < bound[k])
            k = j;
    return k;
}

static void cand_score(visited_cands* c, const qnode* nodes, const float* end, float* best_d, uint32_t* best)
{
    while (c->count > 0) {
        const int k = cand_nearest(c->bound, c->count);
        if (c->bound[k] > *best_d)
            break;
        const uint32_t node = c->node[k];
        --c->count;
        c->bound[k] = c->bound[c->count];
        c->node[k] = c->node[c->count];
        visited_score(nodes, node, end, best_d, best);
    }
}

/* The loaded tiles whose bounds overlap the box [lo, hi] (found like nearest_core finds them), at most
 * VISITED_MAX_TILES of them: -1 when there are more. */
static int tiles_in_box(const nb_navmesh* nav, const float* lo, const float* hi, const nb_tile** out)
{
    int32_t x0, z0, x1, z1;
    tile_range(nav, lo, hi, &x0, &z0, &x1, &z1);
    int n = 0;
    if (((int64_t)x1 - x0 + 1) * ((int64_t)z1 - z0 + 1) > (int64_t)nav->tile_count) {
        for (uint32_t i = 0; i < nav->params.max_tiles; ++i) {
            const nb_tile* t = &nav->tiles[i];
            if (!t->data || t->v.tile_x < x0 || t->v.tile_x > x1 || t->v.tile_z < z0 || t->v.tile_z > z1 ||
                !box_overlap(lo, hi, t->v.bmin, t->v.bmax))
                continue;
            if (n == VISITED_MAX_TILES)
                return -1;
            out[n++] = t;
        }
        return n;
    }
    for (int32_t z = z0; z <= z1; ++z)
        for (int32_t x = x0; x <= x1; ++x) {
            const nb_tile* t = nb_navmesh_tile_at(nav, x, z);
            if (!t || !box_overlap(lo, hi, t->v.bmin, t->v.bmax))
                continue;
            if (n == VISITED_MAX_TILES)
                return -1;
            out[n++] = t;
        }
    return n;
}

/* The node a search that did not reach the end stops at: the visited ground polygon whose closest point to `end`
 * (closest_on_poly's, the point the path then ends at) is nearest to it; ties: the earlier node. Run only for
 * partial results: a complete search pays nothing for it. The node whose entry point came nearest the end is scored
 * first, and the distance it gives rules out the others by their bounds before their detail triangles are read:
 * - many nodes: the candidates are the polygons of the BV trees around the end whose bounds come that near,
 *   looked up in the search's hash (when the trees hold fewer of them than there are nodes);
 * - else each node, by its xz bounds, then the height range of its detail surface (an end above or below the
 *   visited floors, on a level the start does not reach, is over many of them). */
static uint32_t nearest_visited(const nb_query* q, const float* end)
{
    const qnode* nodes = q->nodes;
    const uint32_t count = q->node_count;
    uint32_t seed = 0;
    for (uint32_t i = 1; i < count; ++i)
        if (nodes[i].hdist < nodes[seed].hdist && !is_offmesh(nodes[i].tile, nodes[i].poly))
            seed = i;
    uint32_t best = 0;
    float best_d = FLT_MAX;
    if (is_offmesh(nodes[seed].tile, nodes[seed].poly))
        return 0;
    visited_score(nodes, seed, end, &best_d, &best);
    visited_cands cands;
    cands.count = 0;
    if (count > 48) {
        /* Many visited nodes: find the candidates through the BV trees of the tiles around the end instead (all of
         * them must have a tree; a tile without one is scanned below with the others). */
        const nb_navmesh* nav = q->nav;
        const float margin = bv_margin(end);
        const float r = sqrtf(best_d) + margin;
        const float lo[3] = { end[0] - r, end[1] - r, end[2] - r }, hi[3] = { end[0] + r, end[1] + r, end[2] + r };
        const nb_tile* tiles[VISITED_MAX_TILES];
        const int nt = tiles_in_box(nav, lo, hi, tiles);
        /* Worth it when the trees hold fewer polygons near the end than there are nodes to scan (a guess from the
         * share of each tile's area the box covers); the answer is the same either way. */
        int trees = nt >= 0;
        float near_polys = 0.0f;
        for (int k = 0; k < nt && trees; ++k) {
            const float* tb = tiles[k]->v.bmin;
            const float* tt = tiles[k]->v.bmax;
            const float wx = nb_minf(hi[0], tt[0]) - nb_maxf(lo[0], tb[0]);
            const float wz = nb_minf(hi[2], tt[2]) - nb_maxf(lo[2], tb[2]);
            const float area = nb_maxf((tt[0] - tb[0]) * (tt[2] - tb[2]), 1e-6f);
            near_polys += (float)tiles[k]->v.npolys * nb_minf(nb_maxf(wx, 0.0f) * nb_maxf(wz, 0.0f) / area, 1.0f);
            trees = tiles[k]->v.nbv > 0 || tiles[k]->v.npolys == 0;
        }
        trees = trees && near_polys * 2.0f < (float)count;
        for (int k = 0; k < nt && trees; ++k) {
            const nb_tile* t = tiles[k];
            const nb_tile_view* v = &t->v;
            uint16_t qlo[3], qhi[3];
            bv_box(v, lo, hi, qlo, qhi);
            uint32_t i = 0;
            for (const nb_bv_node* n; (n = bv_next_leaf(v, &i, qlo, qhi));) {
                const float d = bv_bound2(v, n, end, margin);
                if (d > best_d)
                    continue;
                const uint32_t vn = visited_node(q, nb_navmesh_ref_of(nav, t, (uint32_t)n->i));
                if (vn != UINT32_MAX && vn != seed)
                    cand_add(&cands, d, vn, nodes, end, &best_d, &best);
            }
        }
        if (trees) {
            cand_score(&cands, nodes, end, &best_d, &best);
            return best;
        }
    }
    for (uint32_t i = 0; i < count; ++i) {
        const qnode* n = &nodes[i];
        const nb_tile_view* v = &n->tile->v;
        const uint32_t p = n->poly;
        if (i == seed || is_offmesh(n->tile, p))
            continue;
        const float bound = poly_bound2(v, p, end, best_d);
        if (bound <= best_d)
            cand_add(&cands, bound, i, nodes, end, &best_d, &best);
    }
    cand_score(&cands, nodes, end, &best_d, &best);
    return best;
}

/* Scores ground polygon p of tile t as visited_score scores nodes. */
static inline void component_score(const nb_tile* t, uint32_t p, const float* end, float* best_d, const nb_tile** bt,
                                   uint32_t* bp)
{
    const float d = poly_end_dist2(t, p, end);
    if (d < *best_d || (d == *best_d && poly_before(t, p, *bt, *bp))) {
        *best_d = d;
        *bt = t;
        *bp = p;
    }
}

/* Candidates of nearest_in_component, as visited_cands holds nodes. */
typedef struct component_cands {
    float bound[VISITED_CANDIDATES];
    const nb_tile* tile[VISITED_CANDIDATES];
    uint32_t poly[VISITED_CANDIDATES];
    int count;
} component_cands;

/* Scores the candidates, nearest bound first (the first scores rule the others out), and empties the list. */
static void component_cands_score(component_cands* cands, const float* end, float* best_d, const nb_tile** bt,
                                  uint32_t* bp)
{
    while (cands->count > 0) {
        const int k = cand_nearest(cands->bound, cands->count);
        if (cands->bound[k] > *best_d)
            break;
        const nb_tile* t = cands->tile[k];
        const uint32_t p = cands->poly[k];
        --cands->count;
        cands->bound[k] = cands->bound[cands->count];
        cands->tile[k] = cands->tile[cands->count];
        cands->poly[k] = cands->poly[cands->count];
        component_score(t, p, end, best_d, bt, bp);
    }
    cands->count = 0;
}

/* Polygon p of tile t, whose distance is at least `bound`, into cands unless the best rules it out (scored at once
 * when the list is full). */
static void component_cand(component_cands* cands, float bound, const nb_tile* t, uint32_t p, const float* end,
                           float* best_d, const nb_tile** bt, uint32_t* bp)
{
    if (bound > *best_d)
        return;
    if (cands->count == VISITED_CANDIDATES) {
        component_score(t, p, end, best_d, bt, bp);
        return;
    }
    cands->bound[cands->count] = bound;
    cands->tile[cands->count] = t;
    cands->poly[cands->count++] = p;
}

/* Components of at most this many polygons are scanned whole by nearest_in_component. */
#define COMPONENT_SCAN 64

/* The polygons of component c in tile t that may lie within sqrt(*best_d) of `end` and inside the box [lo, hi]
 * around it, into cands (component_cand). */
static void component_gather(const nb_query* q, uint32_t c, const nb_tile* t, const float* lo, const float* hi,
                             const float* end, float margin, component_cands* cands, float* best_d,
                             const nb_tile** bt, uint32_t* bp)
{
    const nb_tile_view* v = &t->v;
    const uint32_t* label = &q->cc_label[q->cc_base[t - q->nav->tiles]];
    if (v->nbv == 0) {
        for (uint32_t p = 0; p < v->npolys; ++p)
            if (label[p] == c && !is_offmesh(t, p))
                component_cand(cands, poly_bound2(v, p, end, *best_d), t, p, end, best_d, bt, bp);
        return;
    }
    uint16_t qlo[3], qhi[3];
    bv_box(v, lo, hi, qlo, qhi);
    uint32_t i = 0;
    for (const nb_bv_node* n; (n = bv_next_leaf(v, &i, qlo, qhi));) {
        const uint32_t p = (uint32_t)n->i;
        if (label[p] == c && !is_offmesh(t, p))
            component_cand(cands, bv_bound2(v, n, end, margin), t, p, end, best_d, bt, bp);
    }
}

/* The ground polygon of component c nearest to `end`, scored and tie-broken as nearest_visited does: the polygon a
 * search from a start in c would end at, having visited all of c (no component marked CC_ONE_WAY). A component of
 * at most COMPONENT_SCAN polygons is scanned whole, nearest bound first. Else boxes around the end, growing fourfold
 * from 8 cells: the polygons of c in the box, nearest bound first; once the best lies within the box's half-width,
 * nothing outside can beat it ((st, sp), a ground polygon of c, lies in some box). A box over more than
 * VISITED_MAX_TILES tiles scans every tile. */
static void nearest_in_component(const nb_query* q, uint32_t c, const nb_tile* st, uint32_t sp, const float* end,
                                 const nb_tile** out_t, uint32_t* out_p)
{
    const nb_navmesh* nav = q->nav;
    const float margin = bv_margin(end);
    float best_d = FLT_MAX;
    const nb_tile* bt = st;
    uint32_t bp = sp;
    component_cands cands;
    cands.count = 0;
    const uint32_t m0 = q->cc_first[c], m1 = q->cc_first[c + 1];
    if (m1 - m0 <= COMPONENT_SCAN) {
        for (uint32_t m = m0; m < m1; ++m) {
            const nb_tile* t = &nav->tiles[q->cc_members[m] >> NB_POLY_BITS];
            const uint32_t p = q->cc_members[m] & ((1u << NB_POLY_BITS) - 1);
            if (!is_offmesh(t, p))
                component_cand(&cands, poly_bound2(&t->v, p, end, best_d), t, p, end, &best_d, &bt, &bp);
        }
        component_cands_score(&cands, end, &best_d, &bt, &bp);
        *out_t = bt;
        *out_p = bp;
        return;
    }
    float r = 8.0f / st->v.bv_quant;
    for (;;) {
        const float lo[3] = { end[0] - r, end[1] - r, end[2] - r }, hi[3] = { end[0] + r, end[1] + r, end[2] + r };
        const nb_tile* tiles[VISITED_MAX_TILES];
        const int nt = tiles_in_box(nav, lo, hi, tiles);
        if (nt < 0) {
            const float all_lo[3] = { -FLT_MAX, -FLT_MAX, -FLT_MAX }, all_hi[3] = { FLT_MAX, FLT_MAX, FLT_MAX };
            for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
                const nb_tile* t = &nav->tiles[s];
                if (!t->data)
                    continue;
                float tb = 0.0f;
                for (int a = 0; a < 3; ++a) {
                    const float e = nb_maxf(nb_maxf(t->v.bmin[a] - end[a], end[a] - t->v.bmax[a]) - margin, 0.0f);
                    tb += e * e;
                }
                if (tb <= best_d)
                    component_gather(q, c, t, all_lo, all_hi, end, margin, &cands, &best_d, &bt, &bp);
            }
        } else {
            for (int k = 0; k < nt; ++k)
                component_gather(q, c, tiles[k], lo, hi, end, margin, &cands, &best_d, &bt, &bp);
        }
        component_cands_score(&cands, end, &best_d, &bt, &bp);
        if (nt < 0 || best_d <= r * r)
            break;
        r *= 4.0f;
    }
    *out_t = bt;
    *out_p = bp;
}

/* A* from start (on start_ref) to end (on end_ref). Nodes enter a polygon at the midpoint of the portal they
 * cross (the polygons around a start on start_ref's outline: at the start, below); the cost of a step is its
 * length times the area cost of the polygon it runs through, and the last step runs on to the end position (from
 * the node before when the end lies on the portal into end_ref, below). A polygon entered across a tile border
 * gets a node of its own per side crossed (link_entry), each with its own entry point and cost, as Detour keeps
 * them: with one node per polygon, the first portal found fixes a border polygon's entry point, and tiled paths
 * came out longer than solo ones (tiles cut polygons, and a third of them touch two tile sides at 32 cells).
 * Without reaching end_ref (disconnected, or the pool ran out) the corridor leads to the visited polygon nearest to
 * the end (nearest_visited), whose node is *last. Returns 1 when end_ref was reached; *reached says so even when the
 * corridor had to be cut to max_path. */
static int astar_search(nb_query* q, nb_poly_ref start_ref, const nb_tile* st, uint32_t sp, nb_poly_ref end_ref,
                        const float* start, const float* end, const nb_query_filter* f, float hmul, nb_poly_ref* path,
                        uint32_t* node_of, int32_t max_path, int32_t* path_count, int* reached_out, uint32_t* last)
{
    const nb_navmesh* nav = q->nav;
    pool_reset(q);
    q->exhausted = 0;
    if (start_ref == end_ref) {
        qnode* s = node_get(q, start_ref); /* (the pool was just emptied: cannot fail) */
        s->tile = st;
        s->poly = sp;
        path[0] = start_ref;
        if (node_of)
            node_of[0] = 0;
        *path_count = 1;
        *reached_out = 1;
        *last = 0;
        return 1;
    }
    search sr;
    search_begin(q, &sr);
    qnode* s = s_node_get(&sr, start_ref, 0);
    vcopy(s->pos, start);
    s->tile = st;
    s->poly = sp;
    s->cost = 0.0f;
    const float d0 = vdist(start, end);
    s->hdist = d0;
    s->total = d0 * hmul;
    s->state = NODE_OPEN;
    s_heap_push(&sr, 0);

    uint32_t best = 0;
    int reached = 0, exhausted = 0;
    qnode* const nodes = sr.nodes;
    const float tol = outline_tol(nav, start, end);
    /* Nodes for extra entry sides, as many as the pool holds beyond one per polygon: a pool of at least one node per
     * polygon never runs out (a smaller budget only gives fewer of them). */
    const uint32_t polys = nb_navmesh_poly_count(nav);
    uint32_t extra_left = sr.max_nodes > polys ? sr.max_nodes - polys : 0;
    /* The polygons around the start: those linked to start_ref through a portal the start lies on (a start on an
     * edge, a tile border or a vertex, as every path corner is), and so on around a vertex, are entered at the
     * start itself, at no cost, as start_ref is: the start lies on all of them. (Entered at their portals'
     * midpoints, the ones across the edge looked as far away as those midpoints, and the corridor often set off the
     * wrong way.) One node each, whatever side it is entered across: all of them are entered at the same point, and
     * two nodes of one polygon at no cost would let the corridor go round the start through it twice. The nodes
     * made here are those polygons, in the order found. */
    const uint32_t around = is_offmesh(st, sp) || !near_outline(&st->v, sp, start, tol) ? 0 : UINT32_MAX;
    for (uint32_t i = 0; i < sr.node_count && i < around; ++i) {
        const qnode* c = &nodes[i];
        if (is_offmesh(c->tile, c->poly))
            continue;
        for (uint32_t li = c->tile->first_link[c->poly]; li != NB_NULL_LINK; li = c->tile->links[li].next) {
            const nb_link* l = &c->tile->links[li];
            uint32_t np;
            const nb_tile* nt = l->ref ? link_target(nav, c->tile, c->ref, l->ref, &np) : NULL;
            if (!nt || !passes(f, nt->v.poly_flags[np]))
                continue;
            float left[3], right[3];
            link_portal(c->tile, c->poly, c->ref, l, nt, np, left, right);
            if (dist2_pt_seg_xz(start, left, right, NULL) > tol * tol)
                continue;
            qnode* n = s_node_get(&sr, l->ref, 0);
            exhausted |= !n;
            if (!n || n->state != NODE_NEW)
                continue;
            vcopy(n->pos, start);
            n->tile = nt;
            n->poly = np;
            n->hdist = d0;
            n->parent = i + 1;
            n->cost = l->ref == end_ref ? d0 * f->area_cost[nt->v.poly_areas[np] & 63] : 0.0f;
            n->total = l->ref == end_ref ? n->cost : s->total;
            n->state = NODE_OPEN;
            s_heap_push(&sr, (uint32_t)(n - nodes));
        }
    }
    /* The polygons end_ref is entered from across a portal the end lies on (an end on an edge or a vertex of
     * end_ref, as a path corner is): from those the last step runs straight to the end, not through the portal's
     * midpoint (nor through end_ref's entry point, which another portal may have set). A few are enough: they are
     * the polygons across end_ref's edges through one point. */
    nb_poly_ref end_via[8];
    int end_vias = 0;
    uint32_t ep;
    const nb_tile* et = nb_navmesh_resolve(nav, end_ref, &ep);
    const uint32_t efirst =
        et && !is_offmesh(et, ep) && near_outline(&et->v, ep, end, tol) ? et->first_link[ep] : NB_NULL_LINK;
    for (uint32_t li = efirst; li != NB_NULL_LINK && end_vias < 8; li = et->links[li].next) {
        const nb_link* l = &et->links[li];
        uint32_t np;
        const nb_tile* nt = l->ref ? link_target(nav, et, end_ref, l->ref, &np) : NULL;
        if (!nt)
            continue;
        float left[3], right[3];
        link_portal(et, ep, end_ref, l, nt, np, left, right);
        if (dist2_pt_seg_xz(end, left, right, NULL) <= tol * tol)
            end_via[end_vias++] = l->ref;
    }
    while (sr.heap_size) {
        const uint32_t bi = s_heap_pop(&sr);
        qnode* b = &nodes[bi];
        b->state = NODE_CLOSED;
        if (b->ref == end_ref) {
            best = bi;
            reached = 1;
            break;
        }
        const nb_tile* bt = b->tile;
        const uint32_t bp = b->poly;
        const nb_poly_ref bref = b->ref;
        const nb_poly_ref parent_ref = b->parent ? nodes[b->parent - 1].ref : 0;
        const float step_mul = f->area_cost[bt->v.poly_areas[bp] & 63];
        /* The portal of a link between ground polygons is worked out here, from what is known of bp once. */
        const int b_offmesh = is_offmesh(bt, bp);
        const uint16_t* bpv = &bt->v.poly_verts[(size_t)bp * bt->v.nvp];
        const uint32_t bn = bt->v.poly_nverts[bp];
        for (uint32_t li = bt->first_link[bp]; li != NB_NULL_LINK; li = bt->links[li].next) {
            const nb_link* l = &bt->links[li];
            const nb_poly_ref nref = l->ref;
            if (!nref || nref == parent_ref)
                continue;
            uint32_t np;
            const nb_tile* nt = link_target(nav, bt, bref, nref, &np);
            if (!nt || !passes(f, nt->v.poly_flags[np]))
                continue;
            uint8_t entry = link_entry(l->side);
            if (entry && !extra_left)
                entry = 0;
            qnode* n = s_node_get(&sr, nref, entry);
            if (!n) {
                exhausted = 1; /* the search goes on with what it has and may end partial */
                continue;
            }
            if (entry && n->state == NODE_NEW)
                --extra_left;
            if (n->state == NODE_NEW) {
                float left[3], right[3];
                if (b_offmesh || is_offmesh(nt, np))
                    link_portal(bt, bp, bref, l, nt, np, left, right);
                else
                    ground_portal(&bt->v, bpv, bn, l, &nt->v, np, left, right);
                vlerp(n->pos, left, right, 0.5f);
                n->tile = nt;
                n->poly = np;
                n->hdist = vdist(n->pos, end);
            }
            const float dist_end = n->hdist;
            float cost = b->cost + vdist(b->pos, n->pos) * step_mul, heur;
            if (nref == end_ref) {
                int via = 0;
                for (int k = 0; k < end_vias; ++k)
                    via |= end_via[k] == bref;
                if (via)
                    cost = b->cost + vdist(b->pos, end) * step_mul;
                else
                    cost += dist_end * f->area_cost[nt->v.poly_areas[np] & 63];
                heur = 0.0f;
            } else {
                heur = dist_end * hmul;
            }
            const float total = cost + heur;
            if (n->state != NODE_NEW && total >= n->total)
                continue;
            n->parent = bi + 1;
            n->cost = cost;
            n->total = total;
            if (n->state == NODE_OPEN) {
                s_heap_sift_up(&sr, n->heap, (uint32_t)(n - nodes));
            } else {
                n->state = NODE_OPEN;
                s_heap_push(&sr, (uint32_t)(n - nodes));
            }
        }
    }
    search_end(q, &sr);
    q->exhausted = exhausted;
    if (!reached)
        best = nearest_visited(q, end); /* (a partial path ends on the ground, never partway along a link) */
    const int cut = write_corridor(q, best, path, node_of, max_path, path_count);
    *reached_out = reached;
    *last = best;
    return reached && !cut;
}

/* Whether to label the components after a search that saw all it could reach (q->node_count nodes). Labelling
 * costs about as much as a search of a quarter of the polygons: it waits until the searches since the last change
 * of the navmesh or the filter's flags add up to that (rent or buy), so that a start on a small island does not
 * pay for it again after each change (an update() per frame), while the first search from a big component pays
 * it at once. */
static int labelling_pays(nb_query* q, const nb_query_filter* f)
{
    if (q->cc_spent_gen != q->nav->generation || q->cc_spent_include != f->include_flags ||
        q->cc_spent_exclude != f->exclude_flags) {
        q->cc_spent = 0;
        q->cc_spent_gen = q->nav->generation;
        q->cc_spent_include = f->include_flags;
        q->cc_spent_exclude = f->exclude_flags;
    }
    q->cc_spent = q->cc_spent > UINT32_MAX - q->node_count ? UINT32_MAX : q->cc_spent + q->node_count;
    return (uint64_t)q->cc_spent * 4 >= nb_navmesh_poly_count(q->nav);
}

/* A* as astar_search, but where a search that cannot reach end_ref would see all it can reach (a pool of a node per
 * polygon never runs out), the corridor is the one astar_search finds from the start to that search's nearest
 * polygon P, ending at P's point nearest the end: one path whichever way P was found. It is found without searching
 * when the components (components_label) put end_ref out of the start's reach; else by the search, which labels them
 * for the next ones. Returns 1 when end_ref was reached. */
static int astar(nb_query* q, nb_poly_ref start_ref, const nb_tile* st, uint32_t sp, nb_poly_ref end_ref,
                 const float* start, const float* end, const nb_query_filter* f, float hmul, nb_poly_ref* path,
                 uint32_t* node_of, int32_t max_path, int32_t* path_count)
{
    const nb_navmesh* nav = q->nav;
    const int whole = q->max_nodes >= nb_navmesh_poly_count(nav);
    const nb_tile* pt = NULL;
    uint32_t pp = 0, last;
    int reached;
    if (whole && start_ref != end_ref && components_ready(q, f) && !is_offmesh(st, sp)) {
        uint32_t ep;
        const nb_tile* et = nb_navmesh_resolve(nav, end_ref, &ep);
        const uint32_t cs = component_of(q, st, sp), ce = et ? component_of(q, et, ep) : CC_NONE;
        if (cs != CC_NONE && ce != CC_NONE && cs != ce && !(q->cc_flags[cs] & CC_ONE_WAY))
            nearest_in_component(q, cs, st, sp, end, &pt, &pp);
    }
    q->last_nodes = 0;
    if (!pt) {
        const int r = astar_search(q, start_ref, st, sp, end_ref, start, end, f, hmul, path, node_of, max_path,
                                   path_count, &reached, &last);
        q->last_nodes = q->node_count;
        if (reached || !whole || q->exhausted)
            return r;
        if (!components_ready(q, f) && labelling_pays(q, f))
            components_label(q, f);
        pt = q->nodes[last].tile;
        pp = q->nodes[last].poly;
    }
    float target[3];
    int over;
    closest_on_poly(pt, pp, end, target, &over);
    astar_search(q, start_ref, st, sp, nb_navmesh_ref_of(nav, pt, pp), start, target, f, hmul, path, node_of,
                 max_path, path_count, &reached, &last);
    q->last_nodes += q->node_count;
    return 0;
}

NB_COLD NB_NOINLINE nb_status nb_query_find_path(nb_query* q, nb_poly_ref start_ref, nb_poly_ref end_ref, const float start[3],
                             const float end[3], const nb_query_filter* filter, nb_poly_ref* path,
                             int32_t* path_count, int32_t max_path, int* partial)
{
    static const char* fn = "nb_query_find_path";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!path_count)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: path_count is NULL", fn);
    *path_count = 0;
    if (partial)
        *partial = 0;
    if (!path)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: path is NULL", fn);
    if (max_path < 1)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: max_path must be >= 1 (got %d)", fn, max_path);
    CHECK_(check_point(ctx, fn, "start", start));
    CHECK_(check_point(ctx, fn, "end", end));
    CHECK_(check_filter(ctx, fn, filter));
    const nb_tile *st, *et;
    uint32_t sp, ep;
    CHECK_(check_ref(q, fn, "start_ref", start_ref, &st, &sp));
    CHECK_(check_ref(q, fn, "end_ref", end_ref, &et, &ep));
    const int complete = astar(q, start_ref, st, sp, end_ref, start, end, filter, min_area_cost(filter), path, NULL,
                                 max_path, path_count);
    if (partial)
        *partial = !complete;
    return NB_OK;
}

int nb_query_exhausted(const nb_query* q) { return q ? q->exhausted : 0; }

uint32_t nb_query_last_nodes(const nb_query* q) { return q ? q->last_nodes : 0; }

/* ================================================================================================ */
/* Straight path (funnel string-pulling)                                                            */
/* ================================================================================================ */

typedef struct spath {
    float* points;
    uint8_t* flags;
    nb_poly_ref* refs;
    int32_t count, cap;
} spath;

/* Appends a point; a point equal to the last one merges into it (flags or-ed, ref replaced unless the new one
 * is 0; the end's ref is always 0: nothing is entered there). Returns 1 when the walk should stop: the end was
 * written or the buffer is full. */
static int sp_append(spath* s, const float* p, uint8_t flag, nb_poly_ref ref)
{
    if (s->count > 0 && vequal(&s->points[(s->count - 1) * 3], p)) {
        if (s->flags)
            s->flags[s->count - 1] |= flag;
        if (s->refs && (ref || (flag & NB_STRAIGHT_POINT_END)))
            s->refs[s->count - 1] = ref;
        return (flag & NB_STRAIGHT_POINT_END) != 0;
    }
    if (s->count >= s->cap)
        return 1;
    vcopy(&s->points[s->count * 3], p);
    if (s->flags)
        s->flags[s->count] = flag;
    if (s->refs)
        s->refs[s->count] = ref;
    ++s->count;
    return (flag & NB_STRAIGHT_POINT_END) != 0 || s->count >= s->cap;
}

/* Adds the points where the segment from the last point to `target` crosses the portals of corridor polygons
 * from..to (every portal, or only those where the area changes). */
static int sp_crossings(const nb_navmesh* nav, const corridor* c, spath* s, int32_t from, int32_t to,
                        const float* target, int options)
{
    const nb_poly_ref* path = c->refs;
    float a[3];
    vcopy(a, &s->points[(s->count - 1) * 3]);
    for (int32_t k = from; k < to; ++k) {
        if (!(options & NB_STRAIGHT_ALL_CROSSINGS)) {
            uint32_t p0, p1;
            const nb_tile* t0 = corridor_poly(nav, c, k, &p0);
            const nb_tile* t1 = corridor_poly(nav, c, k + 1, &p1);
            if (!t0 || !t1 || t0->v.poly_areas[p0] == t1->v.poly_areas[p1])
                continue;
        }
        float left[3], right[3], u, v, pt[3];
        if (!path_portal(nav, c, k, left, right, NULL, NULL))
            break;
        if (!intersect_lines_xz(a, target, left, right, &u, &v))
            continue;
        vlerp(pt, left, right, v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
        if (sp_append(s, pt, 0, path[k + 1]))
            return 1;
    }
    return 0;
}

/* tri_area2's sign (area, of a, b, c) with a dead band: 0 when b and c each lie within tol (world units) of the
 * line through a and the other. Path corners and starts lie on polygon edges and tile borders, so the funnel keeps
 * meeting three points on one line (an apex on the line of a portal seen edge-on, two portals sharing a vertex
 * along a tile border), and rounding gives their area a sign at random. No wider: a leg taken as straight then
 * passes the point it runs by within tol, as a raycast along it allows (a band scaled by the farther point let legs
 * cut corners by twice that). Squared in float: at NB_MAX_COORD (areas up to 8e18) the squares stay below
 * FLT_MAX. */
static inline int band_side(float area, const float* a, const float* b, const float* c, float tol)
{
    if (area * area <= tol * tol * nb_minf(vdist2_xz(a, b), vdist2_xz(a, c)))
        return 0;
    return area > 0.0f ? 1 : -1;
}

/* Whether q, on the line from the apex through p (band_side 0), lies at p or beyond it along that line: not nearer
 * than p by more than tol. */
static int reaches(const float* apex, const float* p, const float* q, float tol)
{
    const float px = p[0] - apex[0], pz = p[2] - apex[2];
    const float len2 = px * px + pz * pz;
    return (q[0] - apex[0]) * px + (q[2] - apex[2]) * pz >= len2 - tol * sqrtf(len2);
}

static inline uint8_t apex_flag(nb_poly_ref ref, int offmesh)
{
    if (!ref)
        return NB_STRAIGHT_POINT_END;
    return offmesh ? NB_STRAIGHT_POINT_OFFMESH : 0;
}

/* The funnel over the corridor's portals (start and end already clamped onto the first and last polygons).
 * Returns NB_OK or NB_ERR_INVALID_ARG (with *bad_index) when two consecutive polygons are not linked. */
static nb_status funnel(const nb_navmesh* nav, const float* start, const float* end, const corridor* c, int32_t n,
                        int options, spath* s, int32_t* bad_index)
{
    const nb_poly_ref* path = c->refs;
    if (sp_append(s, start, NB_STRAIGHT_POINT_START, path[0]))
        return NB_OK;
    if (n > 1) {
        float apex[3], fl[3], fr[3]; /* funnel apex and its left and right ends */
        vcopy(apex, start);
        vcopy(fl, start);
        vcopy(fr, start);
        int32_t apex_i = 0, left_i = 0, right_i = 0;
        nb_poly_ref left_ref = path[0], right_ref = path[0];
        int left_om = 0, right_om = 0; /* the point belongs to an off-mesh link */
        int left_at_apex = 1, right_at_apex = 1; /* vequal(fl, apex), vequal(fr, apex), kept as they change */
        const float tol = outline_tol(nav, start, end);
        /* The walk restarts at the apex after each corner and passes the portals after it again (1.8 times each
         * on dungeon's random pairs), each time a link lookup and, across a tile border, a span: each portal is
         * worked out once, and the last PORTAL_CACHE of them are kept. */
        enum { PORTAL_CACHE = 128 };
        float cached[PORTAL_CACHE][6];
        uint8_t cached_om[PORTAL_CACHE];
        int32_t worked = 0; /* portals 0..worked-1 were worked out */
        for (int32_t i = 0; i < n; ++i) {
            float l[3], r[3];
            int om = 0;
            if (i + 1 < n) {
                int from_om, to_om;
                const int32_t slot = i & (PORTAL_CACHE - 1);
                if (i < worked && i >= worked - PORTAL_CACHE) {
                    vcopy(l, cached[slot]);
                    vcopy(r, cached[slot] + 3);
                    from_om = cached_om[slot] & 1;
                    to_om = cached_om[slot] >> 1;
                } else if (!path_portal(nav, c, i, l, r, &from_om, &to_om)) {
                    *bad_index = i;
                    return NB_ERR_INVALID_ARG;
                } else if (i == worked) {
                    vcopy(cached[slot], l);
                    vcopy(cached[slot] + 3, r);
                    cached_om[slot] = (uint8_t)(from_om | to_om << 1);
                    worked = i + 1;
                }
                om = from_om || to_om;
                /* An apex on the portal, the funnel still closed on it (the start on the first portal or on a
                 * vertex several portals share, a corner on the portals after it): the portal constrains nothing,
                 * the path crosses it where it stands (the first portal it is not on bounds the path within the
                 * convex polygon both lie on). Left to the tests below, the portal's ends would be taken as
                 * bounds seen from a point on their own line, where the turn tests have no sign. When the portal
                 * is an off-mesh link's start, the apex is where the link is taken: flagged so, with the link's
                 * polygon. */
                if (left_at_apex && right_at_apex && dist2_pt_seg_xz(apex, l, r, NULL) < 1e-6f) {
                    if (to_om && sp_append(s, apex, NB_STRAIGHT_POINT_OFFMESH, path[i + 1]))
                        return NB_OK;
                    continue;
                }
            } else {
                vcopy(l, end);
                vcopy(r, end);
            }
            const nb_poly_ref next_ref = i + 1 < n ? path[i + 1] : 0;

            /* Right end: move it inward while it stays right of the left end; crossing over makes the left end
             * the new apex and the walk restarts from there. Three points within tol of one line count as on
             * it (band_side), and a new end on the line from the apex through the other end does not cross over:
             * the funnel narrows to that line and the path may still go straight along it. (Taken as a
             * crossing, a start on a tile border with portal ends along the border got the far end as a corner,
             * and the path went past the portals in between and back; a path through a tile corner got a
             * corner there.) Only an off-mesh link's end point stays a corner when the line reaches it: the path
             * is flagged there. */
            const float ar = tri_area2(apex, fr, r);
            if (ar <= 0.0f || band_side(ar, apex, fr, r, tol) == 0) {
                /* (the band matters only where it can change the answer) */
                const float ax = tri_area2(apex, fl, r);
                int take = right_at_apex || (ax > 0.0f && !left_om);
                if (!take) {
                    const int across = band_side(ax, apex, fl, r, tol);
                    take = across > 0 || (across == 0 && !(left_om && reaches(apex, fl, r, tol)));
                }
                if (take) {
                    vcopy(fr, r);
                    right_at_apex = vequal(fr, apex);
                    right_ref = next_ref;
                    right_om = om;
                    right_i = i;
                } else {
                    if ((options & (NB_STRAIGHT_AREA_CROSSINGS | NB_STRAIGHT_ALL_CROSSINGS)) &&
                        sp_crossings(nav, c, s, apex_i, left_i, fl, options))
                        return NB_OK;
                    vcopy(apex, fl);
                    apex_i = left_i;
                    if (sp_append(s, apex, apex_flag(left_ref, left_om), left_ref))
                        return NB_OK;
                    vcopy(fr, apex);
                    left_at_apex = right_at_apex = 1;
                    right_i = apex_i;
                    right_ref = left_ref;
                    right_om = left_om;
                    i = apex_i;
                    continue;
                }
            }
            /* Left end, mirrored. */
            const float al = tri_area2(apex, fl, l);
            if (al >= 0.0f || band_side(al, apex, fl, l, tol) == 0) {
                const float ax = tri_area2(apex, fr, l);
                int take = left_at_apex || (ax < 0.0f && !right_om);
                if (!take) {
                    const int across = band_side(ax, apex, fr, l, tol);
                    take = across < 0 || (across == 0 && !(right_om && reaches(apex, fr, l, tol)));
                }
                if (take) {
                    vcopy(fl, l);
                    left_at_apex = vequal(fl, apex);
                    left_ref = next_ref;
                    left_om = om;
                    left_i = i;
                } else {
                    if ((options & (NB_STRAIGHT_AREA_CROSSINGS | NB_STRAIGHT_ALL_CROSSINGS)) &&
                        sp_crossings(nav, c, s, apex_i, right_i, fr, options))
                        return NB_OK;
                    vcopy(apex, fr);
                    apex_i = right_i;
                    if (sp_append(s, apex, apex_flag(right_ref, right_om), right_ref))
                        return NB_OK;
                    vcopy(fl, apex);
                    left_at_apex = right_at_apex = 1;
                    left_i = apex_i;
                    left_ref = right_ref;
                    left_om = right_om;
                    i = apex_i;
                    continue;
                }
            }
        }
        if ((options & (NB_STRAIGHT_AREA_CROSSINGS | NB_STRAIGHT_ALL_CROSSINGS)) &&
            sp_crossings(nav, c, s, apex_i, n - 1, end, options))
            return NB_OK;
    }
    sp_append(s, end, NB_STRAIGHT_POINT_END, 0);
    return NB_OK;
}

NB_COLD NB_NOINLINE nb_status nb_query_straight_path(nb_query* q, const float start[3], const float end[3], const nb_poly_ref* path,
                                 int32_t path_count, float* points, uint8_t* flags, nb_poly_ref* refs,
                                 int32_t* point_count, int32_t max_points, int options)
{
    static const char* fn = "nb_query_straight_path";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!point_count)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: point_count is NULL", fn);
    *point_count = 0;
    if (!points)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: points is NULL", fn);
    if (!path)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: path is NULL", fn);
    if (max_points < 1)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: max_points must be >= 1 (got %d)", fn, max_points);
    if (path_count < 1)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: path_count must be >= 1 (got %d)", fn, path_count);
    if (options & ~(NB_STRAIGHT_AREA_CROSSINGS | NB_STRAIGHT_ALL_CROSSINGS))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: options has unknown bits (0x%x)", fn, (unsigned)options);
    CHECK_(check_point(ctx, fn, "start", start));
    CHECK_(check_point(ctx, fn, "end", end));
    const nb_tile *t0 = NULL, *t1 = NULL;
    uint32_t p0 = 0, p1 = 0;
    for (int32_t i = 0; i < path_count; ++i) {
        uint32_t p;
        const nb_tile* t = nb_navmesh_resolve(q->nav, path[i], &p);
        if (!t)
            return nb_fail(ctx, NB_ERR_NOT_FOUND, "%s: path[%d] 0x%08x is not a polygon of this navmesh (invalid or stale)",
                           fn, i, (unsigned)path[i]);
        if (i == 0) {
            t0 = t;
            p0 = p;
        }
        if (i == path_count - 1) {
            t1 = t;
            p1 = p;
        }
    }
    float a[3], b[3];
    int over;
    closest_on_poly(t0, p0, start, a, &over);
    closest_on_poly(t1, p1, end, b, &over);
    spath s = { points, flags, refs, 0, max_points };
    int32_t bad = 0;
    const corridor c = { path, NULL, NULL };
    if (funnel(q->nav, a, b, &c, path_count, options, &s, &bad) != NB_OK)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: path[%d] 0x%08x and path[%d] 0x%08x are not neighbours", fn, bad,
                       (unsigned)path[bad], bad + 1, (unsigned)path[bad + 1]);
    *point_count = s.count;
    return NB_OK;
}

/* ================================================================================================ */
/* Raycast                                                                                          */
/* ================================================================================================ */

/* The polygon a ray walking out of polygon p (ref) through edge `edge` at fraction u along it enters: a usable
 * ground neighbour whose share of the edge covers u (tile-border links cover part of an edge); 0 for a wall.
 * Where several cover u (surfaces over each other at a tile border, linked where their outlines meet within climb
 * while their surfaces part), the one whose surface there lies nearest p's: taking the first, a ray along a floor
 * went onto a deck three metres above it and stopped at the deck's edge. */
static nb_poly_ref ray_next(const nb_navmesh* nav, const nb_tile* tile, uint32_t poly, nb_poly_ref ref, int edge,
                            float u, const nb_query_filter* f, const nb_tile** next_tile, uint32_t* next_poly)
{
    nb_poly_ref best = 0;
    float x[3], best_dy = 0.0f;
    for (uint32_t li = tile->first_link[poly]; li != NB_NULL_LINK; li = tile->links[li].next) {
        const nb_link* l = &tile->links[li];
        if (l->edge != (uint8_t)edge || !l->ref)
            continue;
        uint32_t np;
        const nb_tile* nt = ground_neighbour(nav, tile, ref, l, f, &np);
        if (!nt)
            continue;
        if (l->side != 0xff) {
            float t0, t1;
            nb_link_span(&tile->v, poly, l, &nt->v, np, &t0, &t1);
            if (u < t0 - 1e-5f || u > t1 + 1e-5f)
                continue;
        }
        float c[3];
        int over;
        if (best) {
            if (best_dy < 0.0f) { /* a second one: the crossing point, on p's surface, and the first one's height */
                const uint32_t n = tile->v.poly_nverts[poly];
                vlerp(x, poly_vert(&tile->v, poly, (uint32_t)edge), poly_vert(&tile->v, poly, ((uint32_t)edge + 1) % n),
                      u);
                closest_on_poly(tile, poly, x, c, &over);
                x[1] = c[1];
                closest_on_poly(*next_tile, *next_poly, x, c, &over);
                best_dy = fabsf(c[1] - x[1]);
            }
            closest_on_poly(nt, np, x, c, &over);
            if (!(fabsf(c[1] - x[1]) < best_dy))
                continue;
            best_dy = fabsf(c[1] - x[1]);
        } else {
            best_dy = -1.0f; /* the height is looked at only when another one covers u too */
        }
        best = l->ref;
        *next_tile = nt;
        *next_poly = np;
    }
    return best;
}

/* The walk of one raycast: the segment, its xz length, the outline tolerance (world units) and the filter. */
typedef struct ray_walk {
    const nb_navmesh* nav;
    const nb_query_filter* f;
    const float *start, *end;
    float len, tol;
} ray_walk;

/* Clips the ray against polygon p; 0 when it misses p. */
static int ray_clip(const ray_walk* w, const nb_tile* tile, uint32_t poly, float* texit, int* smax, float* verts,
                    int* nverts)
{
    float tmin, tmax;
    int smin;
    *nverts = poly_gather(&tile->v, poly, verts);
    return clip_segment_poly(w->start, w->end, verts, *nverts, w->tol, &tmin, &tmax, &smin, smax, texit);
}

/* Whether the ray runs through vertex v (within tol of its line, not behind tcur by more than tol, not past the
 * end): *tv gets v's parameter along the ray. In double: the cross product of a long ray loses the tolerance in
 * float. */
static int ray_through(const ray_walk* w, const float* v, float tcur, float* tv)
{
    const double dx = (double)w->end[0] - w->start[0], dz = (double)w->end[2] - w->start[2];
    const double vx = (double)v[0] - w->start[0], vz = (double)v[2] - w->start[2];
    const double len2 = dx * dx + dz * dz;
    if (!(len2 > 0.0))
        return 0;
    const double len = sqrt(len2), cross = dx * vz - dz * vx, t = (vx * dx + vz * dz) / len2;
    if (fabs(cross) > w->tol * len || (t - tcur) * len < -w->tol || (t - 1.0) * len > w->tol)
        return 0;
    *tv = (float)t;
    return 1;
}

/* The ray stalls at tx on point x (a wall, a polygon it only touches there, a vertex it runs through): x may be a
 * vertex or lie on a portal, several polygons meet there and the one the ray goes on into need not be the one it
 * is in. Gathers the usable ground polygons linked to `from` (node 0) through portals passing within tol of x, and
 * so on, as nodes of the query's pool (a vertex can have any number of polygons around it: a list of 32 ran out
 * at the tile corners of a finely cut navmesh, and rays from there stopped with no wall); each node's parent is
 * the one it was reached from. Returns the node of the polygon in which the ray gets farthest past tx (by more
 * than tol), or -1 when none does: then the stall is a real wall, and *normal receives the inward normal of the
 * wall the ray meets there most head-on (left alone when none of them leaves through a wall there). */
static int32_t ray_around(nb_query* q, const ray_walk* w, nb_poly_ref from_ref, const nb_tile* from_tile,
                          uint32_t from_poly, const float* x, float tx, float* normal)
{
    const float tol2 = w->tol * w->tol;
    pool_reset(q);
    qnode* root = node_get(q, from_ref); /* (the pool was just emptied: cannot fail) */
    root->tile = from_tile;
    root->poly = from_poly;
    root->state = NODE_CLOSED;
    int32_t best = -1;
    float best_t = tx + w->tol / w->len, head_on = 0.0f;
    const float dx = (w->end[0] - w->start[0]) / w->len, dz = (w->end[2] - w->start[2]) / w->len;
    for (uint32_t i = 0; i < q->node_count; ++i) { /* nodes are made in the order found: breadth first */
        const nb_tile* ct = q->nodes[i].tile;
        const uint32_t cp = q->nodes[i].poly;
        const nb_poly_ref cref = q->nodes[i].ref;
        if (is_offmesh(ct, cp))
            continue;
        /* its neighbours across portals through the point */
        for (uint32_t li = ct->first_link[cp]; li != NB_NULL_LINK; li = ct->links[li].next) {
            const nb_link* l = &ct->links[li];
            if (!l->ref)
                continue;
            uint32_t np;
            const nb_tile* nt = ground_neighbour(w->nav, ct, cref, l, w->f, &np);
            if (!nt)
                continue;
            float left[3], right[3];
            link_portal(ct, cp, cref, l, nt, np, left, right);
            if (dist2_pt_seg_xz(x, left, right, NULL) > tol2)
                continue;
            qnode* n = node_get(q, l->ref);
            if (!n || n->state != NODE_NEW)
                continue; /* seen, or the pool is full */
            n->state = NODE_CLOSED;
            n->tile = nt;
            n->poly = np;
            n->parent = i + 1;
        }
        /* how far the ray goes in it */
        float verts[NB_MAX_VERTS_PER_POLY * 3], te;
        int smax, n;
        if (!ray_clip(w, ct, cp, &te, &smax, verts, &n))
            continue;
        if (smax < 0)
            te = 1.0f + w->tol / w->len; /* the end lies in it: nothing beats that */
        if (te > best_t) {
            best_t = te;
            best = (int32_t)i;
        }
        if (smax < 0 || (te - tx) * w->len > w->tol)
            continue;
        /* it leaves here too: through a wall? */
        const float* va = &verts[smax * 3];
        const float* vb = &verts[((smax + 1) % n) * 3];
        float hit[3], u;
        const nb_tile* ntile;
        uint32_t npoly;
        vlerp(hit, w->start, w->end, te);
        dist2_pt_seg_xz(hit, va, vb, &u);
        if (ray_next(w->nav, ct, cp, cref, smax, u, w->f, &ntile, &npoly))
            continue;
        const float ex = vb[0] - va[0], ez = vb[2] - va[2];
        const float elen = sqrtf(ex * ex + ez * ez);
        if (elen <= 0.0f)
            continue;
        const float h = -(ez * dx - ex * dz) / elen; /* -(inward normal . direction): 1 when it meets it square on */
        if (h > head_on) {
            head_on = h;
            normal[0] = ez / elen;
            normal[2] = -ex / elen;
        }
    }
    return best;
}

NB_COLD NB_NOINLINE nb_status nb_query_raycast(nb_query* q, nb_poly_ref start_ref, const float start[3], const float end[3],
                           const nb_query_filter* filter, float* t, float hit_normal[3], nb_poly_ref* path,
                           int32_t* path_count, int32_t max_path)
{
    static const char* fn = "nb_query_raycast";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!t)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: t is NULL", fn);
    *t = 0.0f;
    if (hit_normal)
        hit_normal[0] = hit_normal[1] = hit_normal[2] = 0.0f;
    if (path_count)
        *path_count = 0;
    if (path && !path_count)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: path_count is NULL while path is not", fn);
    if (path && max_path < 1)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: max_path must be >= 1 (got %d)", fn, max_path);
    CHECK_(check_point(ctx, fn, "start", start));
    CHECK_(check_point(ctx, fn, "end", end));
    CHECK_(check_filter(ctx, fn, filter));
    const nb_tile* tile;
    uint32_t poly;
    CHECK_(check_ref(q, fn, "start_ref", start_ref, &tile, &poly));

    ray_walk w;
    w.nav = q->nav;
    w.f = filter;
    w.start = start;
    w.end = end;
    w.tol = outline_tol(q->nav, start, end);
    w.len = sqrtf(vdist2_xz(start, end));
    if (w.len < w.tol)
        w.len = w.tol; /* (a ray shorter than the tolerance: the tolerances in t below stay finite) */
    nb_poly_ref ref = start_ref;
    int32_t count = 0;
    float tcur = 0.0f, normal[3] = { 0.0f, 0.0f, 0.0f };
    if (path)
        path[count++] = ref;
    /* Each polygon is left through the edge the segment exits by; a usable neighbour across that part of the
     * edge continues the walk. Where the walk stalls (a wall, or a polygon the segment only touches: a start on
     * a vertex or a portal) or runs through a vertex, the polygons meeting at that point are searched for one the
     * segment goes on into (ray_around) before it counts as a hit. Every step moves the walk forward by more than
     * the tolerance or ends it, and the visit count is bounded so that degenerate input cannot loop. The walk never
     * enters off-mesh links: a start on one has nowhere to go (t = 0). */
    int chosen = 0; /* the polygon was picked by ray_around: the segment goes on in it */
    for (uint32_t guard = 0; guard < 65536 && !is_offmesh(tile, poly); ++guard) {
        float verts[NB_MAX_VERTS_PER_POLY * 3], te;
        int smax, n;
        const int ok = ray_clip(&w, tile, poly, &te, &smax, verts, &n);
        if (ok && (smax < 0 || (1.0f - te) * w.len <= w.tol)) {
            tcur = 1.0f; /* the end lies in this polygon (or on its outline) */
            break;
        }
        const int stalled = !ok || (!chosen && (te - tcur) * w.len <= w.tol);
        chosen = 0;
        float x[3]; /* where to look around */
        float edge_normal[3] = { 0.0f, 0.0f, 0.0f };
        int wall = 0; /* the exit edge is a wall, met away from its ends */
        if (!stalled) {
            const float* va = &verts[smax * 3];
            const float* vb = &verts[((smax + 1) % n) * 3];
            const float ex = vb[0] - va[0], ez = vb[2] - va[2];
            const float elen = sqrtf(ex * ex + ez * ez);
            if (elen > 0.0f) {
                edge_normal[0] = ez / elen; /* the inward normal: it faces the ray */
                edge_normal[2] = -ex / elen;
            }
            /* Through a vertex of the exit edge, the exit is that vertex. Where the crossing with the edge is
             * read off its line, an edge at a shallow angle to the ray puts it past the vertex by the tolerance
             * over the angle's sine (tens of times the tolerance), and the polygon across the edge there need not
             * be the one the ray goes on into (at a vertex several meet): the polygons around the vertex are
             * searched instead, from the vertex itself. */
            float tva, tvb;
            const int on_a = ray_through(&w, va, tcur, &tva), on_b = ray_through(&w, vb, tcur, &tvb);
            if (on_a || on_b) {
                const int use_b = on_b && (!on_a || tvb > tva);
                tcur = nb_maxf(tcur, use_b ? tvb : tva);
                vcopy(x, use_b ? vb : va);
            } else {
                tcur = nb_maxf(tcur, te);
                float hit[3], u;
                vlerp(hit, start, end, te);
                dist2_pt_seg_xz(hit, va, vb, &u);
                const nb_tile* next_tile = NULL;
                uint32_t next_poly = 0;
                const nb_poly_ref next = ray_next(w.nav, tile, poly, ref, smax, u, filter, &next_tile, &next_poly);
                if (next) {
                    ref = next;
                    tile = next_tile;
                    poly = next_poly;
                    if (path && count < max_path)
                        path[count++] = ref;
                    continue;
                }
                wall = 1;
                vcopy(x, hit);
            }
        } else {
            vlerp(x, start, end, tcur);
        }
        /* A wall, a stall or a vertex at tcur: is there a way on around that point? */
        float around_normal[3] = { 0.0f, 0.0f, 0.0f };
        const int32_t b = ray_around(q, &w, ref, tile, poly, x, tcur, around_normal);
        if (b < 0) {
            /* A hit: on a wall, that wall's normal; at a stall or a vertex, the wall met most head-on there (else
             * the exit edge's). */
            const int around_wall = around_normal[0] != 0.0f || around_normal[2] != 0.0f;
            vcopy(normal, wall || !around_wall ? edge_normal : around_normal);
            break;
        }
        /* Record the polygons from this one to the chosen one (each linked to the one before). */
        if (path) {
            int32_t m = 0;
            for (uint32_t k = (uint32_t)b; k != 0; k = q->nodes[k].parent - 1)
                ++m;
            int32_t at = count + m;
            for (uint32_t k = (uint32_t)b; k != 0; k = q->nodes[k].parent - 1)
                if (--at < max_path)
                    path[at] = q->nodes[k].ref;
            count = count + m < max_path ? count + m : max_path;
        }
        ref = q->nodes[b].ref;
        tile = q->nodes[b].tile;
        poly = q->nodes[b].poly;
        chosen = 1;
    }
    *t = tcur;
    if (tcur < 1.0f && normal[0] == 0.0f && normal[2] == 0.0f) {
        /* No wall where the walk stops (a start on an off-mesh link; a wall it should have found): a normal facing
         * the ray, so that a hit never reads as a miss. */
        const float len = sqrtf(vdist2_xz(start, end));
        if (len > 0.0f) {
            normal[0] = (start[0] - end[0]) / len;
            normal[2] = (start[2] - end[2]) / len;
        }
    }
    if (tcur < 1.0f && hit_normal)
        vcopy(hit_normal, normal);
    if (path_count)
        *path_count = count;
    return NB_OK;
}

/* ================================================================================================ */
/* Random points                                                                                    */
/* ================================================================================================ */

/* splitmix64: one 64-bit state, every seed (0 included) gives a full-period sequence. */
static uint64_t rng_next(uint64_t* state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 24 bits. */
static float rng_float(uint64_t* state) { return (float)(rng_next(state) >> 40) * (1.0f / 16777216.0f); }

/* A uniform point of a convex polygon in xz: a fan triangle picked by area, then a uniform point in it (the
 * square root warps the first coordinate so that the density stays flat). y is left at the fan's plane. */
static void random_in_poly(const float* v, int n, uint64_t* rng, float* out)
{
    const float total = poly_area2(v, n);
    const float pick = rng_float(rng) * total;
    int k = 1;
    float acc = 0.0f;
    for (; k + 2 < n; ++k) {
        acc += fabsf(tri_area2(&v[0], &v[k * 3], &v[(k + 1) * 3]));
        if (pick < acc)
            break;
    }
    const float* a = &v[0];
    const float* b = &v[k * 3];
    const float* c = &v[(k + 1) * 3];
    const float s = sqrtf(rng_float(rng)), r = rng_float(rng);
    const float wa = 1.0f - s, wb = s * (1.0f - r), wc = s * r;
    for (int i = 0; i < 3; ++i)
        out[i] = a[i] * wa + b[i] * wb + c[i] * wc;
}

/* Puts a point of polygon p on its detail surface. */
static void settle_on_surface(const nb_tile* t, uint32_t p, float* pt)
{
    float h;
    if (detail_height(&t->v, p, pt, &h)) {
        pt[1] = h;
    } else {
        float c[3];
        int over;
        closest_on_poly(t, p, pt, c, &over);
        vcopy(pt, c);
    }
}

static inline int usable_ground(const nb_tile* t, uint32_t p, const nb_query_filter* f)
{
    return !is_offmesh(t, p) && passes(f, t->v.poly_flags[p]);
}

/* ---- a fixed order over the navmesh's content ----
 * Area-weighted picks walk polygons in some order and stop where a running sum passes a random value: the order
 * decides the point. Tile slots (and links, hence search order) follow the order the tiles were added in, so the
 * walks below go by grid position instead (tile_z, then tile_x; the order nb_navmesh_save writes), and the same
 * navmesh gives the same points however it was streamed in. */

typedef int (*before_fn)(const nb_query* q, uint32_t a, uint32_t b);

static int slot_before(const nb_query* q, uint32_t a, uint32_t b)
{
    return tile_before(&q->nav->tiles[a], &q->nav->tiles[b]);
}

static int node_before(const nb_query* q, uint32_t a, uint32_t b)
{
    const qnode* na = &q->nodes[a];
    const qnode* nb = &q->nodes[b];
    if (na->tile != nb->tile)
        return tile_before(na->tile, nb->tile);
    return na->poly != nb->poly ? na->poly < nb->poly : na->entry < nb->entry;
}

/* Moves a[i] down the max-heap a[0..n) (ordered by before) to its place. */
static void sift_down(const nb_query* q, uint32_t* a, uint32_t i, uint32_t n, before_fn before)
{
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && before(q, a[c], a[c + 1]))
            ++c;
        if (!before(q, a[i], a[c]))
            return;
        const uint32_t tmp = a[i];
        a[i] = a[c];
        a[c] = tmp;
        i = c;
    }
}

/* Heap sort of n indices (no allocation, O(n log n) whatever the input). */
static void sort_indices(const nb_query* q, uint32_t* a, uint32_t n, before_fn before)
{
    for (uint32_t k = n; k-- > 0;) /* heapify, then pop the largest to the back */
        sift_down(q, a, k, n, before);
    for (uint32_t end = n; end-- > 1;) {
        const uint32_t tmp = a[0];
        a[0] = a[end];
        a[end] = tmp;
        sift_down(q, a, 0, end, before);
    }
}

/* Walks the loaded tiles in grid order: sorted into the query's scratch (path_nodes, max_nodes entries), or, when
 * more tiles are loaded than that holds (a query made with a small max_nodes), found one after the other. */
typedef struct tile_walk {
    const nb_query* q;
    int sorted;
    uint32_t count, k; /* sorted: the tile count and the position */
    const nb_tile* last; /* not sorted: the tile returned last */
} tile_walk;

static void tile_walk_begin(nb_query* q, tile_walk* w)
{
    const nb_navmesh* nav = q->nav;
    w->q = q;
    w->sorted = nav->tile_count <= q->max_nodes;
    w->k = 0;
    w->count = 0;
    w->last = NULL;
    if (!w->sorted)
        return;
    for (uint32_t i = 0; i < nav->params.max_tiles; ++i)
        if (nav->tiles[i].data)
            q->path_nodes[w->count++] = i;
    sort_indices(q, q->path_nodes, w->count, slot_before);
}

static const nb_tile* tile_walk_next(tile_walk* w)
{
    const nb_navmesh* nav = w->q->nav;
    if (w->sorted)
        return w->k < w->count ? &nav->tiles[w->q->path_nodes[w->k++]] : NULL;
    const nb_tile* next = NULL;
    for (uint32_t i = 0; i < nav->params.max_tiles; ++i) {
        const nb_tile* t = &nav->tiles[i];
        if (t->data && (!w->last || tile_before(w->last, t)) && (!next || tile_before(t, next)))
            next = t;
    }
    w->last = next;
    return next;
}

/* Fills the query's random point table for filter (the same sums, in the same order, as the two walks of
 * nb_query_random_point), unless it holds them already. 0 when the navmesh has more usable polygons than the table
 * (tiles added since the query was made): the caller walks. */
static int random_table(nb_query* q, const nb_query_filter* filter)
{
    const nb_navmesh* nav = q->nav;
    if (q->rp_ready && q->rp_gen == nav->generation && q->rp_include == filter->include_flags &&
        q->rp_exclude == filter->exclude_flags)
        return 1;
    q->rp_ready = 0;
    if (nav->poly_count > q->rp_cap)
        return 0;
    float verts[NB_MAX_VERTS_PER_POLY * 3];
    double total = 0.0, acc = 0.0;
    uint32_t count = 0;
    tile_walk w;
    tile_walk_begin(q, &w);
    for (const nb_tile* t = tile_walk_next(&w); t; t = tile_walk_next(&w)) {
        const uint32_t slot = (uint32_t)(t - nav->tiles);
        for (uint32_t p = 0; p < t->v.npolys; ++p) {
            if (!usable_ground(t, p, filter))
                continue;
            const float a = poly_area2(verts, poly_gather(&t->v, p, verts));
            total += a;
            if (a <= 0.0f)
                continue;
            acc += a;
            q->rp_acc[count] = acc;
            q->rp_poly[count++] = slot << NB_POLY_BITS | p;
        }
    }
    q->rp_count = count;
    q->rp_total = total;
    q->rp_gen = nav->generation;
    q->rp_include = filter->include_flags;
    q->rp_exclude = filter->exclude_flags;
    q->rp_ready = 1;
    return 1;
}

NB_COLD NB_NOINLINE nb_status nb_query_random_point(nb_query* q, const nb_query_filter* filter, uint64_t* rng, nb_poly_ref* ref,
                                float point[3])
{
    static const char* fn = "nb_query_random_point";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!ref)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: ref is NULL", fn);
    *ref = 0;
    if (!rng)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: rng is NULL", fn);
    if (!point)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: point is NULL", fn);
    point[0] = point[1] = point[2] = 0.0f; /* what a caller reads when there is no point (ref 0) */
    CHECK_(check_filter(ctx, fn, filter));
    const nb_navmesh* nav = q->nav;
    float verts[NB_MAX_VERTS_PER_POLY * 3];
    if (random_table(q, filter)) {
        if (q->rp_total <= 0.0 || q->rp_count == 0)
            return NB_OK;
        const double pick = (double)(rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) * q->rp_total;
        /* the first polygon whose running sum passes pick, as the walk below stops; the last catches rounding */
        uint32_t lo = 0, hi = q->rp_count - 1;
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (pick < q->rp_acc[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        const nb_tile* chosen = &nav->tiles[q->rp_poly[lo] >> NB_POLY_BITS];
        const uint32_t chosen_p = q->rp_poly[lo] & ((1u << NB_POLY_BITS) - 1);
        const int n = poly_gather(&chosen->v, chosen_p, verts);
        random_in_poly(verts, n, rng, point);
        settle_on_surface(chosen, chosen_p, point);
        *ref = nb_navmesh_ref_of(nav, chosen, chosen_p);
        return NB_OK;
    }

    /* Two passes in grid order: the total area, then the polygon where a uniform pick in it falls. */
    double total = 0.0;
    tile_walk w;
    tile_walk_begin(q, &w);
    for (const nb_tile* t = tile_walk_next(&w); t; t = tile_walk_next(&w)) {
        for (uint32_t p = 0; p < t->v.npolys; ++p)
            if (usable_ground(t, p, filter))
                total += poly_area2(verts, poly_gather(&t->v, p, verts));
    }
    if (total <= 0.0)
        return NB_OK;
    const double pick = (double)(rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) * total;
    double acc = 0.0;
    const nb_tile* chosen = NULL;
    uint32_t chosen_p = 0;
    int found = 0;
    tile_walk_begin(q, &w);
    for (const nb_tile* t = tile_walk_next(&w); t && !found; t = tile_walk_next(&w)) {
        for (uint32_t p = 0; p < t->v.npolys; ++p) {
            if (!usable_ground(t, p, filter))
                continue;
            const float a = poly_area2(verts, poly_gather(&t->v, p, verts));
            if (a <= 0.0f)
                continue;
            acc += a;
            chosen = t; /* the last usable polygon also catches rounding at the very end */
            chosen_p = p;
            if (pick < acc) {
                found = 1;
                break;
            }
        }
    }
    const int n = poly_gather(&chosen->v, chosen_p, verts);
    random_in_poly(verts, n, rng, point);
    settle_on_surface(chosen, chosen_p, point);
    *ref = nb_navmesh_ref_of(nav, chosen, chosen_p);
    return NB_OK;
}

/* One Dijkstra step of the radius-limited searches (random point around, distance to wall): relaxes the
 * neighbours of node bi whose portal comes within sqrt(r2) of center; costs are distances between portal
 * midpoints. */
static void relax_within(nb_query* q, const nb_query_filter* f, uint32_t bi, const float* center, float r2)
{
    const nb_navmesh* nav = q->nav;
    const qnode* b = &q->nodes[bi];
    const nb_tile* bt = b->tile;
    const uint32_t bp = b->poly;
    const nb_poly_ref bref = b->ref;
    const nb_poly_ref parent_ref = b->parent ? q->nodes[b->parent - 1].ref : 0;
    for (uint32_t li = bt->first_link[bp]; li != NB_NULL_LINK; li = bt->links[li].next) {
        const nb_link* l = &bt->links[li];
        if (!l->ref || l->ref == parent_ref)
            continue;
        uint32_t np;
        const nb_tile* nt = ground_neighbour(nav, bt, bref, l, f, &np);
        if (!nt)
            continue;
        float left[3], right[3];
        link_portal(bt, bp, bref, l, nt, np, left, right);
        if (dist2_pt_seg_xz(center, left, right, NULL) > r2)
            continue;
        qnode* n = node_get(q, l->ref);
        if (!n || n->state == NODE_CLOSED)
            continue;
        if (n->state == NODE_NEW) {
            vlerp(n->pos, left, right, 0.5f);
            n->tile = nt;
            n->poly = np;
        }
        const float cost = b->cost + vdist(b->pos, n->pos);
        if (n->state == NODE_OPEN && cost >= n->cost)
            continue;
        n->parent = bi + 1;
        n->cost = n->total = cost;
        if (n->state == NODE_OPEN) {
            heap_sift_up(q, n->heap, node_index(q, n));
        } else {
            n->state = NODE_OPEN;
            heap_push(q, node_index(q, n));
        }
    }
}

/* Dijkstra over ground polygons from start_ref, expanding only through portals that come within `radius` of
 * center (so every visited polygon reaches into the circle). Costs are distances between portal midpoints.
 * Closed nodes are the visited set. */
static void expand_within(nb_query* q, nb_poly_ref start_ref, const nb_tile* st, uint32_t sp, const float* center,
                          float radius, const nb_query_filter* f)
{
    const float r2 = radius * radius;
    pool_reset(q);
    qnode* s = node_get(q, start_ref);
    vcopy(s->pos, center);
    s->tile = st;
    s->poly = sp;
    s->state = NODE_OPEN;
    heap_push(q, 0);
    while (q->heap_size) {
        const uint32_t bi = heap_pop(q);
        q->nodes[bi].state = NODE_CLOSED;
        relax_within(q, f, bi, center, r2);
    }
}

/* A visited polygon picked with probability proportional to its area (node->total holds the areas; the visited
 * nodes are listed in grid order in path_nodes[0 .. count)). */
static const qnode* pick_visited(const nb_query* q, uint32_t count, double total, uint64_t* rng)
{
    const double pick = (double)(rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) * total;
    double acc = 0.0;
    const qnode* last = NULL;
    for (uint32_t k = 0; k < count; ++k) {
        const qnode* n = &q->nodes[q->path_nodes[k]];
        if (n->total <= 0.0f)
            continue;
        acc += n->total;
        last = n;
        if (pick < acc)
            break;
    }
    return last;
}

NB_COLD NB_NOINLINE nb_status nb_query_random_point_around(nb_query* q, nb_poly_ref start_ref, const float center[3], float radius,
                                       const nb_query_filter* filter, uint64_t* rng, nb_poly_ref* ref,
                                       float point[3])
{
    static const char* fn = "nb_query_random_point_around";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!ref)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: ref is NULL", fn);
    *ref = 0;
    if (!rng)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: rng is NULL", fn);
    if (!point)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: point is NULL", fn);
    point[0] = point[1] = point[2] = 0.0f; /* what a caller reads when there is no point (ref 0) */
    CHECK_(check_point(ctx, fn, "center", center));
    CHECK_(check_positive(ctx, fn, "radius", radius));
    CHECK_(check_filter(ctx, fn, filter));
    const nb_tile* st;
    uint32_t sp;
    CHECK_(check_ref(q, fn, "start_ref", start_ref, &st, &sp));
    if (is_offmesh(st, sp) || !passes(filter, st->v.poly_flags[sp]))
        return NB_OK; /* nothing usable to stand on */

    expand_within(q, start_ref, st, sp, center, radius, filter);
    /* The visited polygons in grid order (the order the search found them in follows the links, whose order
     * follows the order the tiles were added in). */
    float verts[NB_MAX_VERTS_PER_POLY * 3];
    uint32_t count = 0;
    for (uint32_t i = 0; i < q->node_count; ++i)
        if (q->nodes[i].state == NODE_CLOSED)
            q->path_nodes[count++] = i;
    sort_indices(q, q->path_nodes, count, node_before);
    double total = 0.0;
    for (uint32_t k = 0; k < count; ++k) {
        qnode* n = &q->nodes[q->path_nodes[k]];
        n->total = poly_area2(verts, poly_gather(&n->tile->v, n->poly, verts));
        total += n->total;
    }
    if (total <= 0.0)
        return NB_OK;
    const float r2 = radius * radius;
    const double disk2 = 2.0 * 3.14159265358979 * (double)r2; /* twice the disk's area, like the polygon areas */
    /* Rejection sampling, uniform over the visited surface inside the circle. Draw from whichever of the two
     * candidate regions is smaller (the visited polygons or the disk) so the acceptance rate stays high. */
    for (int attempt = 0; attempt < 32; ++attempt) {
        float pt[3];
        if (total <= disk2) {
            const qnode* n = pick_visited(q, count, total, rng);
            const int nv = poly_gather(&n->tile->v, n->poly, verts);
            random_in_poly(verts, nv, rng, pt);
            if (vdist2_xz(pt, center) > r2)
                continue;
            settle_on_surface(n->tile, n->poly, pt);
            vcopy(point, pt);
            *ref = n->ref;
            return NB_OK;
        }
        const float rr = radius * sqrtf(rng_float(rng)), ang = 6.2831853f * rng_float(rng);
        pt[0] = center[0] + rr * cosf(ang);
        pt[1] = center[1];
        pt[2] = center[2] + rr * sinf(ang);
        for (uint32_t k = 0; k < count; ++k) {
            const qnode* n = &q->nodes[q->path_nodes[k]];
            if (n->total <= 0.0f)
                continue;
            const int nv = poly_gather(&n->tile->v, n->poly, verts);
            if (!point_in_poly_xz(verts, nv, pt))
                continue;
            settle_on_surface(n->tile, n->poly, pt);
            vcopy(point, pt);
            *ref = n->ref;
            return NB_OK;
        }
    }
    /* Rare (a sliver of surface in the circle): the point of a visited polygon nearest the center, which lies in
     * the circle because the polygon was reached through a portal that does. */
    const qnode* n = pick_visited(q, count, total, rng);
    int over;
    closest_on_poly(n->tile, n->poly, center, point, &over);
    *ref = n->ref;
    return NB_OK;
}

/* ================================================================================================ */
/* Closest point, height                                                                            */
/* ================================================================================================ */

NB_COLD NB_NOINLINE nb_status nb_query_closest_point_on_poly(nb_query* q, nb_poly_ref ref, const float pos[3], float closest[3],
                                         int* over_poly)
{
    static const char* fn = "nb_query_closest_point_on_poly";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (over_poly)
        *over_poly = 0;
    if (!closest)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: closest is NULL", fn);
    CHECK_(check_point(ctx, fn, "pos", pos));
    vcopy(closest, pos);
    const nb_tile* t;
    uint32_t p;
    CHECK_(check_ref(q, fn, "ref", ref, &t, &p));
    int over;
    closest_on_poly(t, p, pos, closest, &over);
    if (over_poly)
        *over_poly = over;
    return NB_OK;
}

NB_COLD NB_NOINLINE nb_status nb_query_poly_height(nb_query* q, nb_poly_ref ref, const float pos[3], float* height)
{
    static const char* fn = "nb_query_poly_height";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!height)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: height is NULL", fn);
    *height = 0.0f;
    CHECK_(check_point(ctx, fn, "pos", pos));
    const nb_tile* t;
    uint32_t p;
    CHECK_(check_ref(q, fn, "ref", ref, &t, &p));
    if (is_offmesh(t, p)) { /* along the link's segment, when pos projects inside it */
        const float* a = poly_vert(&t->v, p, 0);
        const float* b = poly_vert(&t->v, p, 1);
        float u;
        const float d2 = dist2_pt_seg_xz(pos, a, b, &u);
        if (d2 > 1e-6f)
            return nb_fail(ctx, NB_ERR_NOT_FOUND, "%s: pos (%g, %g) is not on off-mesh link 0x%08x", fn, (double)pos[0],
                           (double)pos[2], (unsigned)ref);
        *height = a[1] + (b[1] - a[1]) * u;
        return NB_OK;
    }
    float c[3];
    int over;
    closest_on_poly(t, p, pos, c, &over); /* over it: inside, or on its outline to within rounding */
    if (!over)
        return nb_fail(ctx, NB_ERR_NOT_FOUND, "%s: pos (%g, %g) is outside polygon 0x%08x", fn, (double)pos[0],
                       (double)pos[2], (unsigned)ref);
    *height = c[1];
    return NB_OK;
}

/* ================================================================================================ */
/* Move along surface                                                                               */
/* ================================================================================================ */

NB_COLD NB_NOINLINE nb_status nb_query_move_along_surface(nb_query* q, nb_poly_ref start_ref, const float start[3], const float end[3],
                                      const nb_query_filter* filter, float result[3], nb_poly_ref* visited,
                                      int32_t* visited_count, int32_t max_visited)
{
    static const char* fn = "nb_query_move_along_surface";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (visited_count)
        *visited_count = 0;
    if (!result)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: result is NULL", fn);
    if (visited && !visited_count)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: visited_count is NULL while visited is not", fn);
    if (visited && max_visited < 1)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: max_visited must be >= 1 (got %d)", fn, max_visited);
    CHECK_(check_point(ctx, fn, "start", start));
    CHECK_(check_point(ctx, fn, "end", end));
    vcopy(result, start);
    CHECK_(check_filter(ctx, fn, filter));
    const nb_tile* st;
    uint32_t sp;
    CHECK_(check_ref(q, fn, "start_ref", start_ref, &st, &sp));

    const nb_navmesh* nav = q->nav;
    /* Breadth-first over the polygons whose portals lie within the circle through start and end: either end
     * lies in one of them (the move completes), or the result is the point of the nearest wall closest to
     * end (the move slides along it). */
    float search_center[3], best_pos[3];
    vlerp(search_center, start, end, 0.5f);
    const float half = vdist(start, end) * 0.5f + 0.001f, tol = outline_tol(nav, start, end);
    const float search_r2 = half * half;
    vcopy(best_pos, start);
    double best_d2 = DBL_MAX;
    pool_reset(q);
    qnode* s = node_get(q, start_ref);
    s->tile = st;
    s->poly = sp;
    s->state = NODE_CLOSED;
    uint32_t best = 0, head = 0, tail = 0;
    /* An end on a polygon's outline (a vertex: the next path corner) lies in none of them by the crossing test, and
     * a hair outside those around it: the first polygon it is on within the tolerance takes it when no polygon
     * holds it inside (one that does is preferred: its surface height is the end's). */
    uint32_t on_outline = UINT32_MAX;
    int inside = 0;
    q->heap[tail++].node = 0;
    while (head < tail) {
        const uint32_t ci = q->heap[head++].node;
        const qnode* c = &q->nodes[ci];
        const nb_tile* ct = c->tile;
        const uint32_t cp = c->poly;
        const nb_poly_ref cref = c->ref;
        if (is_offmesh(ct, cp))
            continue;
        float verts[NB_MAX_VERTS_PER_POLY * 3];
        const int n = poly_gather(&ct->v, cp, verts);
        if (point_in_poly_xz(verts, n, end)) {
            best = ci;
            inside = 1;
            break;
        }
        if (on_outline == UINT32_MAX && point_on_poly_xz(verts, n, end, tol))
            on_outline = ci;
        const uint32_t open = open_edges(nav, ct, cp, cref, filter);
        for (int e = 0; e < n; ++e) {
            const float* va = &verts[e * 3];
            const float* vb = &verts[((e + 1) % n) * 3];
            if (!(open & (1u << e))) {
                float u;
                const double d2 = dist2_pt_seg_xz_far(end, va, vb, &u);
                if (d2 < best_d2) {
                    best_d2 = d2;
                    vlerp(best_pos, va, vb, u);
                    best = ci;
                }
                continue;
            }
            if (dist2_pt_seg_xz(search_center, va, vb, NULL) > search_r2)
                continue;
            for (uint32_t li = ct->first_link[cp]; li != NB_NULL_LINK; li = ct->links[li].next) {
                const nb_link* l = &ct->links[li];
                if (l->edge != (uint8_t)e || !l->ref)
                    continue;
                uint32_t np;
                const nb_tile* nt = ground_neighbour(nav, ct, cref, l, filter, &np);
                if (!nt)
                    continue;
                qnode* m = node_get(q, l->ref);
                if (!m || m->state != NODE_NEW)
                    continue; /* already queued, or the pool is full */
                m->tile = nt;
                m->poly = np;
                m->parent = ci + 1;
                m->state = NODE_CLOSED;
                q->heap[tail++].node = node_index(q, m);
            }
        }
    }
    if (!inside && on_outline != UINT32_MAX)
        best = on_outline;
    if (inside || on_outline != UINT32_MAX)
        vcopy(best_pos, end);
    /* Result on the surface of the polygon it ended in. */
    const qnode* b = &q->nodes[best];
    float h;
    if (detail_height(&b->tile->v, b->poly, best_pos, &h))
        best_pos[1] = h;
    else {
        float c[3];
        int over;
        closest_on_poly(b->tile, b->poly, best_pos, c, &over);
        best_pos[1] = c[1];
    }
    vcopy(result, best_pos);
    if (visited)
        write_corridor(q, best, visited, NULL, max_visited, visited_count);
    return NB_OK;
}

/* ================================================================================================ */
/* Distance to wall                                                                                 */
/* ================================================================================================ */

NB_COLD NB_NOINLINE nb_status nb_query_distance_to_wall(nb_query* q, nb_poly_ref start_ref, const float center[3], float max_radius,
                                    const nb_query_filter* filter, float* distance, float hit_pos[3],
                                    float hit_normal[3])
{
    static const char* fn = "nb_query_distance_to_wall";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!distance)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: distance is NULL", fn);
    *distance = 0.0f;
    if (hit_normal)
        hit_normal[0] = hit_normal[1] = hit_normal[2] = 0.0f;
    CHECK_(check_point(ctx, fn, "center", center));
    if (hit_pos)
        vcopy(hit_pos, center);
    CHECK_(check_positive(ctx, fn, "max_radius", max_radius));
    CHECK_(check_filter(ctx, fn, filter));
    const nb_tile* st;
    uint32_t sp;
    CHECK_(check_ref(q, fn, "start_ref", start_ref, &st, &sp));

    const nb_navmesh* nav = q->nav;
    /* Dijkstra outwards from the start polygon; the search radius shrinks to the nearest wall found so far, so
     * only polygons that could hold a nearer wall are expanded. */
    float r2 = max_radius * max_radius, hit[3], wall_normal[2] = { 0.0f, 0.0f };
    vcopy(hit, center);
    int found = 0;
    pool_reset(q);
    qnode* s = node_get(q, start_ref);
    vcopy(s->pos, center);
    s->tile = st;
    s->poly = sp;
    s->state = NODE_OPEN;
    heap_push(q, 0);
    while (q->heap_size) {
        const uint32_t bi = heap_pop(q);
        qnode* b = &q->nodes[bi];
        b->state = NODE_CLOSED;
        const nb_tile* bt = b->tile;
        const uint32_t bp = b->poly;
        const nb_poly_ref bref = b->ref;
        if (is_offmesh(bt, bp))
            continue;
        float verts[NB_MAX_VERTS_PER_POLY * 3];
        const int n = poly_gather(&bt->v, bp, verts);
        const uint32_t open = open_edges(nav, bt, bp, bref, filter);
        for (int e = 0; e < n; ++e) {
            if (open & (1u << e))
                continue;
            const float* va = &verts[e * 3];
            const float* vb = &verts[((e + 1) % n) * 3];
            float u;
            const float d2 = dist2_pt_seg_xz(center, va, vb, &u);
            if (d2 >= r2)
                continue;
            r2 = d2;
            vlerp(hit, va, vb, u);
            wall_normal[0] = vb[2] - va[2]; /* the inward normal, for a center right on the wall */
            wall_normal[1] = -(vb[0] - va[0]);
            found = 1;
        }
        relax_within(q, filter, bi, center, r2);
    }
    if (!found) {
        *distance = max_radius;
        return NB_OK;
    }
    *distance = sqrtf(r2);
    if (hit_pos)
        vcopy(hit_pos, hit);
    if (hit_normal) {
        float dx = center[0] - hit[0], dz = center[2] - hit[2];
        if (dx * dx + dz * dz < 1e-12f) {
            dx = wall_normal[0];
            dz = wall_normal[1];
        }
        const float len = sqrtf(dx * dx + dz * dz);
        if (len > 0.0f) {
            hit_normal[0] = dx / len;
            hit_normal[2] = dz / len;
        }
    }
    return NB_OK;
}

/* ================================================================================================ */
/* Batch                                                                                            */
/* ================================================================================================ */

nb_status nb_query_find_paths(nb_query* q, const float* pairs, uint32_t n, const float half_extents[3],
                              const nb_query_filter* filter, int options, uint8_t* status, float* lengths,
                              uint32_t* point_offsets, float* points, uint32_t points_capacity,
                              uint32_t* points_needed)
{
    return nb_query_find_paths_ex(q, pairs, n, half_extents, filter, options, status, lengths, point_offsets, points,
                                  NULL, NULL, points_capacity, points_needed);
}

nb_status nb_query_find_paths_ex(nb_query* q, const float* pairs, uint32_t n, const float half_extents[3],
                                 const nb_query_filter* filter, int options, uint8_t* status, float* lengths,
                                 uint32_t* point_offsets, float* points, uint8_t* point_flags, nb_poly_ref* point_refs,
                                 uint32_t points_capacity, uint32_t* points_needed)
{
    static const char* fn = "nb_query_find_paths";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (points_needed)
        *points_needed = 0;
    if (point_offsets)
        point_offsets[0] = 0;
    if (n > 0 && !pairs)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: pairs is NULL", fn);
    if (n > 0 && !status)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: status is NULL", fn);
    if (!points && points_capacity > 0)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: points is NULL but points_capacity is %u", fn, points_capacity);
    if (!points && (point_flags || point_refs))
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: points is NULL but point_flags or point_refs is not", fn);
    if (options & ~(NB_STRAIGHT_AREA_CROSSINGS | NB_STRAIGHT_ALL_CROSSINGS))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: options has unknown bits (0x%x)", fn, (unsigned)options);
    CHECK_(check_half_extents(ctx, fn, half_extents));
    CHECK_(check_filter(ctx, fn, filter));
    for (uint64_t i = 0; i < (uint64_t)n * 6; ++i) {
        if (!isfinite(pairs[i]))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: pair %llu has a non-finite %s coordinate (%c = %g)", fn,
                           (unsigned long long)(i / 6), (i % 6) < 3 ? "start" : "end", "xyzxyz"[i % 6],
                           (double)pairs[i]);
        if (fabsf(pairs[i]) > NB_MAX_COORD)
            return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: pair %llu has a %s coordinate beyond %g (%c = %g)", fn,
                           (unsigned long long)(i / 6), (i % 6) < 3 ? "start" : "end", (double)NB_MAX_COORD,
                           "xyzxyz"[i % 6], (double)pairs[i]);
    }

    uint64_t offset = 0;
    const uint32_t max_path = q->max_nodes;
    const float hmul = min_area_cost(filter);
    for (uint32_t i = 0; i < n; ++i) {
        const float* a = &pairs[(size_t)i * 6];
        const float* b = a + 3;
        float sa[3], sb[3];
        uint8_t st = NB_PATH_NONE;
        float len = 0.0f;
        int32_t count = 0;
        uint32_t sp;
        int eover = 0;
        const nb_poly_ref sref = nearest_core(q, a, half_extents, filter, sa, NULL);
        const nb_poly_ref eref = sref ? nearest_core(q, b, half_extents, filter, sb, &eover) : 0;
        const nb_tile* stile = sref ? nb_navmesh_resolve(q->nav, sref, &sp) : NULL;
        q->exhausted = 0;
        q->last_nodes = 0;
        if (stile && eref) {
            int32_t path_count = 0;
            const int complete = astar(q, sref, stile, sp, eref, sa, sb, filter, hmul, q->path, q->path_nodes,
                                       (int32_t)max_path, &path_count);
            st = (uint8_t)((complete ? NB_PATH_COMPLETE : NB_PATH_PARTIAL) | (q->exhausted ? NB_PATH_EXHAUSTED : 0));
            /* The funnel clamps the end onto the corridor's last polygon: for a partial path, the reachable
             * point closest to the end. */
            const corridor c = { q->path, q->nodes, q->path_nodes };
            uint32_t lp;
            const nb_tile* lt = corridor_poly(q->nav, &c, path_count - 1, &lp);
            float cb[3];
            int over;
            if (complete && eover)
                vcopy(cb, sb); /* sb lies over end_ref with its surface height: clamping it again gives sb */
            else
                closest_on_poly(lt, lp, sb, cb, &over);
            spath s = { q->spoints, point_flags ? q->sflags : NULL, point_refs ? q->srefs : NULL, 0, q->spoints_cap };
            int32_t bad;
            funnel(q->nav, sa, cb, &c, path_count, options, &s, &bad);
            count = s.count;
            for (int32_t k = 1; k < count; ++k)
                len += vdist(&q->spoints[(k - 1) * 3], &q->spoints[k * 3]);
        }
        status[i] = st;
        if (lengths)
            lengths[i] = len;
        if (points && offset + (uint64_t)count <= points_capacity) {
            memcpy(&points[offset * 3], q->spoints, sizeof(float) * 3 * (size_t)count);
            if (point_flags)
                memcpy(&point_flags[offset], q->sflags, (size_t)count);
            if (point_refs)
                memcpy(&point_refs[offset], q->srefs, sizeof(nb_poly_ref) * (size_t)count);
        }
        offset += (uint64_t)count;
        if (offset > UINT32_MAX)
            return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: more than %u path points", fn, UINT32_MAX);
        if (point_offsets)
            point_offsets[i + 1] = (uint32_t)offset;
    }
    if (points_needed)
        *points_needed = (uint32_t)offset;
    if (offset > points_capacity)
        return nb_fail(ctx, NB_ERR_BUFFER_TOO_SMALL, "%s: points holds %u points, the paths need %llu", fn,
                       points_capacity, (unsigned long long)offset);
    return NB_OK;
}
