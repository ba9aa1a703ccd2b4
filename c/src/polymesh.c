/* Polygon mesh: ear-clip each region outline, weld the vertices of all outlines, merge triangles into convex
 * polygons, drop the tile-border helper vertices nobody needs, then link neighbouring polygons (seed 002). */
#include "nb_internal.h"

#include <math.h>

#define FN_ "nb_build_poly_mesh"

#define MAX_MESH_VERTS 0xfffe  /* vertex indices are uint16 and NB_MESH_NULL_IDX (0xffff) means "none" */
#define WELD_BUCKETS 4096      /* power of two */
#define WELD_MAX_DY 2          /* [cells] vertices at the same (x, z) this close in y are one vertex */
#define MULTIPLE_REGS 0        /* region id of a polygon re-merged from pieces of several regions */
#define PORTAL 0x8000          /* neighbour value of an edge on the tile border: PORTAL | side */

/* ---- orientation ---------------------------------------------------------------------------------------
 * Seen from above (y up, looking down) +x points right and +z points DOWN the screen. turn(a, b, c) is the
 * cross product (b - a) x (c - a) taken over (x, z); it is negative when c lies to the LEFT of the
 * directed line a->b as seen from above: a = (0,0) -> b = (0,1) walks down the screen, its left is +x, and
 * turn(a, b, (1,0)) = -1. Outlines and polygons wind counter-clockwise seen from above, so their interior lies
 * left of every edge and every corner of a convex polygon has turn(prev, corner, next) < 0. (That is the
 * winding whose area computed the Recast way, sum of v[i].x*v[i-1].z - v[i-1].x*v[i].z, is positive.)
 * Coordinates reach 65535 cells, so products need 64 bits. */
static inline int64_t turn(int64_t ax, int64_t az, int64_t bx, int64_t bz, int64_t cx, int64_t cz)
{
    return (bx - ax) * (cz - az) - (cx - ax) * (bz - az);
}

/* Outline corners, reduced to their (x, z) position for the 2D tests. */
typedef struct pt2 {
    int32_t x, z;
} pt2;

static inline int64_t turn2(pt2 a, pt2 b, pt2 c) { return turn(a.x, a.z, b.x, b.z, c.x, c.z); }
static inline int left_of(pt2 a, pt2 b, pt2 c) { return turn2(a, b, c) < 0; }
static inline int left_or_on(pt2 a, pt2 b, pt2 c) { return turn2(a, b, c) <= 0; }
static inline int same_xz(pt2 a, pt2 b) { return a.x == b.x && a.z == b.z; }

/* Mesh vertices are (x, y, z) uint16 triples. */
static inline int left_of3(const uint16_t* a, const uint16_t* b, const uint16_t* c)
{
    return turn(a[0], a[2], b[0], b[2], c[0], c[2]) < 0;
}

/* A triangle worth keeping: three distinct vertices turning left. A simple outline never yields anything
 * else; a self-touching one (the loose fallback of the ear clipping, a spike of the outline) can give slivers
 * of zero or negative area, which would break the convexity every later stage relies on. */
static inline int is_ccw_triangle(const uint16_t* verts, uint16_t a, uint16_t b, uint16_t c)
{
    return a != b && a != c && b != c && left_of3(&verts[a * 3], &verts[b * 3], &verts[c * 3]);
}

/* c lies on the closed segment a-b. */
static int on_segment(pt2 a, pt2 b, pt2 c)
{
    if (turn2(a, b, c) != 0)
        return 0;
    if (a.x != b.x) /* compare along an axis the segment spans */
        return (a.x <= c.x && c.x <= b.x) || (a.x >= c.x && c.x >= b.x);
    return (a.z <= c.z && c.z <= b.z) || (a.z >= c.z && c.z >= b.z);
}

/* a-b and c-d cross at a point interior to both (touching and collinear cases excluded). */
static int cross_properly(pt2 a, pt2 b, pt2 c, pt2 d)
{
    const int64_t abc = turn2(a, b, c), abd = turn2(a, b, d), cda = turn2(c, d, a), cdb = turn2(c, d, b);
    if (abc == 0 || abd == 0 || cda == 0 || cdb == 0)
        return 0;
    return ((abc < 0) != (abd < 0)) && ((cda < 0) != (cdb < 0));
}

static int segments_meet(pt2 a, pt2 b, pt2 c, pt2 d)
{
    return cross_properly(a, b, c, d) || on_segment(a, b, c) || on_segment(a, b, d) || on_segment(c, d, a) ||
           on_segment(c, d, b);
}

static inline int64_t dist2(pt2 a, pt2 b)
{
    const int64_t dx = (int64_t)b.x - a.x, dz = (int64_t)b.z - a.z;
    return dx * dx + dz * dz;
}

/* ---- ear clipping ----------------------------------------------------------------------------------------
 * The outline being clipped: corner c (0..n0-1, in winding order) is vertex id[c] of the caller, at p[c]. The
 * corners still there form a cycle (nxt, prv) in that order; `first` is the lowest one (position 0 of the
 * outline as it stands). ear[c] is the squared length of the diagonal that would cut corner c off, or -1 when that
 * is no diagonal; a min-tree over the corners finds the shortest. Large outlines also keep a grid of their edges
 * (edge c runs from c to nxt[c]), so that a diagonal is tested against the edges near it only: without it,
 * clipping is quadratic in the corners (an 8705-corner outline: 170 ms). */

#define GRID_MIN_CORNERS 64 /* below this, scanning every edge is as fast */
#define NO_KEY UINT64_MAX

typedef struct grid_entry {
    int32_t corner, ver, next;
} grid_entry;

typedef struct edge_grid {
    int on;                  /* 0: scan every edge instead */
    int32_t minx, minz, cw, ch, gx, gz;
    int32_t* head;           /* gx * gz lists of entries */
    int32_t* ver;            /* per corner: the version of its edge; -1 once clipped */
    int32_t* stamp;          /* per corner: the query that last tested its edge */
    int32_t query;
    grid_entry* pool;
    int32_t used, cap;
} edge_grid;

typedef struct outline {
    int n, n0, first;
    int32_t* id;
    pt2* p;
    int64_t* ear;
    int32_t *nxt, *prv;
    uint64_t* tree; /* 2 * leaves; leaf c holds (ear << 31 | c), NO_KEY for no ear */
    int leaves;     /* a power of two >= n0 */
    int cap;
    nb_context* ctx;
    void* block;
    edge_grid g;
} outline;

/* Buffers for outlines of up to cap corners. */
static int outline_init(nb_context* ctx, outline* o, int cap)
{
    const size_t c = (size_t)(cap > 0 ? cap : 1);
    size_t leaves = 1;
    while (leaves < c)
        leaves *= 2;
    const int grid = cap >= GRID_MIN_CORNERS;
    const size_t pool = grid ? 8 * c + 1024 : 0;
    const size_t bytes = c * (sizeof(int64_t) + sizeof(pt2) + 3 * sizeof(int32_t)) + 2 * leaves * sizeof(uint64_t) +
                         (grid ? c * 3 * sizeof(int32_t) : 0);
    char* b = (char*)nb_alloc(ctx, bytes);
    memset(o, 0, sizeof(*o));
    o->block = b;
    o->ctx = ctx;
    o->cap = (int)c;
    if (!b)
        return 0;
    o->tree = (uint64_t*)b;
    b += 2 * leaves * sizeof(uint64_t);
    o->ear = (int64_t*)b;
    b += c * sizeof(int64_t);
    o->p = (pt2*)b;
    b += c * sizeof(pt2);
    o->id = (int32_t*)b;
    o->nxt = o->id + c;
    o->prv = o->nxt + c;
    if (grid) {
        o->g.head = o->prv + c; /* gx * gz <= c */
        o->g.ver = o->g.head + c;
        o->g.stamp = o->g.ver + c;
        /* The entry pool grows while clipping; when growing fails the grid is dropped (scanning is slower, the
         * same answers). */
        o->g.pool = (grid_entry*)nb_alloc(ctx, pool * sizeof(grid_entry));
        o->g.cap = o->g.pool ? (int32_t)pool : 0;
    }
    return 1;
}

static void outline_free(nb_context* ctx, outline* o)
{
    nb_free(ctx, o->g.pool);
    nb_free(ctx, o->block);
}

static inline uint64_t ear_key(const outline* o, int c)
{
    return o->ear[c] >= 0 ? (uint64_t)o->ear[c] << 31 | (uint64_t)c : NO_KEY;
}

static void tree_set(outline* o, int c)
{
    int i = o->leaves + c;
    o->tree[i] = ear_key(o, c);
    for (i >>= 1; i >= 1; i >>= 1) {
        const uint64_t a = o->tree[2 * i], b = o->tree[2 * i + 1];
        o->tree[i] = a < b ? a : b;
    }
}

/* The smallest key over corners lo..hi (NO_KEY when lo > hi). */
static uint64_t tree_min(const outline* o, int lo, int hi)
{
    uint64_t best = NO_KEY;
    for (int l = lo + o->leaves, r = hi + o->leaves + 1; l < r; l >>= 1, r >>= 1) {
        if (l & 1) {
            best = o->tree[l] < best ? o->tree[l] : best;
            ++l;
        }
        if (r & 1) {
            --r;
            best = o->tree[r] < best ? o->tree[r] : best;
        }
    }
    return best;
}

static inline int32_t cell_x(const edge_grid* g, int32_t x) { return (x - g->minx) / g->cw; }
static inline int32_t cell_z(const edge_grid* g, int32_t z) { return (z - g->minz) / g->ch; }

/* Files corner c's current edge in every cell its box covers. (Large outlines only: cold code, kept small.) */
static NB_COLD NB_NOINLINE void grid_add(outline* o, int c)
{
    edge_grid* g = &o->g;
    if (!g->on)
        return;
    const pt2 a = o->p[c], b = o->p[o->nxt[c]];
    const int32_t x0 = cell_x(g, a.x < b.x ? a.x : b.x), x1 = cell_x(g, a.x < b.x ? b.x : a.x);
    const int32_t z0 = cell_z(g, a.z < b.z ? a.z : b.z), z1 = cell_z(g, a.z < b.z ? b.z : a.z);
    const int64_t need = (int64_t)g->used + (int64_t)(x1 - x0 + 1) * (z1 - z0 + 1);
    if (need > g->cap) {
        int64_t cap = (int64_t)g->cap * 2;
        while (cap < need)
            cap *= 2;
        grid_entry* pool = cap < INT32_MAX ? (grid_entry*)nb_alloc(o->ctx, (size_t)cap * sizeof(grid_entry)) : NULL;
        if (!pool) {
            g->on = 0;
            return;
        }
        memcpy(pool, g->pool, (size_t)g->used * sizeof(grid_entry));
        nb_free(o->ctx, g->pool);
        g->pool = pool;
        g->cap = (int32_t)cap;
    }
    for (int32_t z = z0; z <= z1; ++z)
        for (int32_t x = x0; x <= x1; ++x) {
            grid_entry* e = &g->pool[g->used];
            e->corner = c;
            e->ver = g->ver[c];
            e->next = g->head[z * g->gx + x];
            g->head[z * g->gx + x] = g->used++;
        }
}

/* The edge grid of a large outline: about one cell per corner, shaped like the outline's box, every edge filed. */
static NB_COLD NB_NOINLINE void grid_start(outline* o)
{
    const int n = o->n;
    edge_grid* g = &o->g;
    int32_t minx = o->p[0].x, maxx = minx, minz = o->p[0].z, maxz = minz;
    for (int c = 1; c < n; ++c) {
        minx = nb_mini(minx, o->p[c].x);
        maxx = nb_maxi(maxx, o->p[c].x);
        minz = nb_mini(minz, o->p[c].z);
        maxz = nb_maxi(maxz, o->p[c].z);
    }
    const double ex = (double)(maxx - minx) + 1.0, ez = (double)(maxz - minz) + 1.0;
    int32_t gx = (int32_t)sqrt((double)n * ex / ez);
    gx = nb_clampi(gx, 1, n);
    int32_t gz = nb_clampi(n / gx, 1, n);
    g->minx = minx;
    g->minz = minz;
    g->cw = (maxx - minx) / gx + 1;
    g->ch = (maxz - minz) / gz + 1;
    g->gx = (maxx - minx) / g->cw + 1;
    g->gz = (maxz - minz) / g->ch + 1;
    g->used = 0;
    g->query = 0;
    memset(g->head, 0xff, (size_t)g->gx * (size_t)g->gz * sizeof(int32_t));
    memset(g->ver, 0, (size_t)n * sizeof(int32_t));
    memset(g->stamp, 0xff, (size_t)n * sizeof(int32_t));
    for (int c = 0; c < n; ++c)
        grid_add(o, c);
}

/* Sets up the cycle, the grid (large outlines) and every ear. */
static void outline_start(outline* o)
{
    const int n = o->n;
    o->n0 = n;
    o->first = 0;
    for (int c = 0; c < n; ++c) {
        o->nxt[c] = c + 1 < n ? c + 1 : 0;
        o->prv[c] = c > 0 ? c - 1 : n - 1;
    }
    o->leaves = 1; /* the tree fits this outline (the buffer fits the largest) */
    while (o->leaves < n)
        o->leaves *= 2;
    for (int i = o->leaves; i < 2 * o->leaves; ++i)
        o->tree[i] = NO_KEY;
    o->g.on = n >= GRID_MIN_CORNERS && o->g.pool != NULL;
    if (o->g.on)
        grid_start(o);
}

/* Whether edge c (c -> nxt[c]) keeps clear of the segment between corners i and j: see segment_clear. */
static inline int edge_clear(const outline* o, int c, int i, int j, pt2 d0, pt2 d1, int32_t minx, int32_t maxx,
                             int32_t minz, int32_t maxz, int loose)
{
    const int c1 = o->nxt[c];
    const pt2 a = o->p[c], b = o->p[c1];
    if ((a.x < minx && b.x < minx) || (a.x > maxx && b.x > maxx) || (a.z < minz && b.z < minz) ||
        (a.z > maxz && b.z > maxz))
        return 1;
    if (c == i || c1 == i || c == j || c1 == j)
        return 1;
    if (same_xz(d0, a) || same_xz(d1, a) || same_xz(d0, b) || same_xz(d1, b))
        return 1;
    return !(loose ? cross_properly(d0, d1, a, b) : segments_meet(d0, d1, a, b));
}

/* segment_clear through the grid: only the edges filed in the cells of the segment's box, each once. */
static NB_COLD NB_NOINLINE int segment_clear_grid(outline* o, int i, int j, pt2 d0, pt2 d1, int32_t minx,
                                                  int32_t maxx, int32_t minz, int32_t maxz, int loose)
{
    edge_grid* g = &o->g;
    const int32_t q = ++g->query;
    const int32_t x0 = cell_x(g, minx), x1 = cell_x(g, maxx), z0 = cell_z(g, minz), z1 = cell_z(g, maxz);
    for (int32_t z = z0; z <= z1; ++z)
        for (int32_t x = x0; x <= x1; ++x)
            for (int32_t e = g->head[z * g->gx + x]; e >= 0; e = g->pool[e].next) {
                const int c = g->pool[e].corner;
                if (g->pool[e].ver != g->ver[c] || g->stamp[c] == q)
                    continue;
                g->stamp[c] = q;
                if (!edge_clear(o, c, i, j, d0, d1, minx, maxx, minz, maxz, loose))
                    return 0;
            }
    return 1;
}

/* Whether the segment between corners i and j stays clear of every outline edge not incident to them. Edges
 * that start or end where i or j are (the two sides of a hole's bridge, pinched corners) are ignored. In loose
 * mode only proper crossings count, which lets a degenerate outline still be cut. Edges whose box misses the
 * segment's box are dismissed first; large outlines look only at the edges near the segment (the grid). */
static int segment_clear(outline* o, int i, int j, int loose)
{
    const pt2 d0 = o->p[i], d1 = o->p[j];
    const int32_t minx = d0.x < d1.x ? d0.x : d1.x, maxx = d0.x < d1.x ? d1.x : d0.x;
    const int32_t minz = d0.z < d1.z ? d0.z : d1.z, maxz = d0.z < d1.z ? d1.z : d0.z;
    if (o->g.on)
        return segment_clear_grid(o, i, j, d0, d1, minx, maxx, minz, maxz, loose);
    for (int k = 0, c = o->first; k < o->n; ++k, c = o->nxt[c])
        if (!edge_clear(o, c, i, j, d0, d1, minx, maxx, minz, maxz, loose))
            return 0;
    return 1;
}

/* Whether the segment from corner i towards corner j leaves i into the interior (inside the angle at i).
 * Loose mode accepts j on the rays of a convex corner. */
static int starts_inside(const outline* o, int i, int j, int loose)
{
    const pt2 pi = o->p[i], pj = o->p[j];
    const pt2 pnext = o->p[o->nxt[i]], pprev = o->p[o->prv[i]];
    if (left_or_on(pprev, pi, pnext)) { /* convex corner: j inside the wedge */
        if (loose)
            return left_or_on(pi, pj, pprev) && left_or_on(pj, pi, pnext);
        return left_of(pi, pj, pprev) && left_of(pj, pi, pnext);
    }
    /* reflex corner: anywhere but the closed outside wedge */
    return !(left_or_on(pi, pj, pnext) && left_or_on(pj, pi, pprev));
}

static int is_diagonal(outline* o, int i, int j, int loose)
{
    return starts_inside(o, i, j, loose) && segment_clear(o, i, j, loose);
}

/* Re-evaluates corner k as an ear: can its two neighbours see each other? */
static void update_ear(outline* o, int k)
{
    const int a = o->prv[k], b = o->nxt[k];
    o->ear[k] = is_diagonal(o, a, b, 0) ? dist2(o->p[a], o->p[b]) : -1;
    tree_set(o, k);
}

/* Shortest-diagonal-first ear clipping: among the ears, cut the one whose closing diagonal is shortest (ties:
 * the first in outline order from position 1, position 0 last, as the reference scans), which keeps triangles
 * compact and gives the merge step short edges to discard. When no proper ear is left (the outline touches
 * itself) a loose diagonal is accepted; when even that fails the outline is hopeless and the triangles cut so far
 * are kept. The outline (o->n >= 3 corners, id and p filled) is consumed. Writes up to n-2 triangles of ids to
 * tris and returns their count, negated in the hopeless case. */
static int triangulate(outline* o, int32_t* tris)
{
    int ntris = 0;
    outline_start(o);
    for (int k = 0; k < o->n; ++k)
        update_ear(o, k);
    const uint64_t corner_mask = ((uint64_t)1 << 31) - 1;
    while (o->n > 3) {
        const int first = o->first;
        int best = -1;
        /* Position 0 (the first corner) wins only when strictly shorter than every other ear. */
        const uint64_t rest = tree_min(o, first + 1, o->n0 - 1);
        if (o->ear[first] >= 0 && (rest == NO_KEY || (uint64_t)o->ear[first] < rest >> 31))
            best = first;
        else if (rest != NO_KEY)
            best = (int)(rest & corner_mask);
        if (best < 0) {
            int64_t best_len = 0;
            for (int k = 0, i = first; k < o->n; ++k, i = o->nxt[i]) {
                const int c = o->nxt[i], after = o->nxt[c];
                if (!is_diagonal(o, i, after, 1))
                    continue;
                const int64_t len = dist2(o->p[i], o->p[after]);
                if (best < 0 || len < best_len) {
                    best = c;
                    best_len = len;
                }
            }
            if (best < 0)
                return -ntris;
        }
        const int tip = best, a = o->prv[tip], b = o->nxt[tip];
        int32_t* t = &tris[ntris++ * 3];
        t[0] = o->id[a];
        t[1] = o->id[tip];
        t[2] = o->id[b];

        o->nxt[a] = b;
        o->prv[b] = a;
        o->ear[tip] = -1;
        tree_set(o, tip);
        if (tip == first)
            o->first = b;
        --o->n;
        if (o->g.on) {
            o->g.ver[tip] = -1; /* its edge is gone; a's edge now ends at b */
            ++o->g.ver[a];
            grid_add(o, a);
        }
        /* Only the tip's two neighbours changed their view. */
        update_ear(o, a);
        update_ear(o, b);
    }
    int32_t* t = &tris[ntris++ * 3];
    for (int k = 0, c = o->first; k < 3; ++k, c = o->nxt[c])
        t[k] = o->id[c];
    return ntris;
}

/* ---- polygons --------------------------------------------------------------------------------------------
 * A polygon is nvp uint16 vertex indices padded with NB_MESH_NULL_IDX. */

static inline int poly_count(const uint16_t* p, int nvp)
{
    int n = 0;
    while (n < nvp && p[n] != NB_MESH_NULL_IDX)
        ++n;
    return n;
}

static inline uint32_t edge_key(uint16_t a, uint16_t b)
{
    return a < b ? ((uint32_t)a << 16) | b : ((uint32_t)b << 16) | a;
}

/* The gain of merging pb into pa: the squared length of the edge they share, or -1 when they share none or
 * the union would have more than nvp corners or a corner that is not strictly convex. Only the two corners
 * at the ends of the shared edge can break convexity. ea/eb receive the shared edge's place in pa and pb.
 * The shared edge must be walked in opposite directions; with several (degenerate input) the last one of pa
 * counts, as in the reference. */
static int64_t merge_gain(const uint16_t* pa, const uint16_t* pb, const uint16_t* verts, int nvp, int* ea_out,
                          int* eb_out)
{
    const int na = poly_count(pa, nvp), nb = poly_count(pb, nvp);
    if (na + nb - 2 > nvp)
        return -1;
    int ea = -1, eb = -1;
    for (int i = 0; i < na; ++i) {
        const uint16_t a0 = pa[i], a1 = pa[(i + 1) % na];
        for (int j = 0; j < nb; ++j)
            if (pb[j] == a1 && pb[(j + 1) % nb] == a0) {
                ea = i;
                eb = j;
                break;
            }
    }
    if (ea < 0)
        return -1;
    /* Only a self-overlapping outline breaks these, and the union would pass a corner twice: an edge walked the
     * same way by both polygons (they overlap; not matched above), or a third shared corner (polygons wrapped
     * around a spike). */
    for (int i = 0; i < na; ++i) {
        if (i == ea || i == (ea + 1) % na)
            continue;
        for (int j = 0; j < nb; ++j)
            if (pa[i] == pb[j])
                return -1;
    }
    /* pa[ea] -> pa[ea+1] is walked backwards by pb: pb[eb] = pa[ea+1], pb[eb+1] = pa[ea]. */
    const uint16_t* v = verts;
    if (!left_of3(&v[pa[(ea + na - 1) % na] * 3], &v[pa[ea] * 3], &v[pb[(eb + 2) % nb] * 3]))
        return -1;
    if (!left_of3(&v[pb[(eb + nb - 1) % nb] * 3], &v[pb[eb] * 3], &v[pa[(ea + 2) % na] * 3]))
        return -1;
    const int64_t dx = (int64_t)v[pa[ea] * 3] - v[pa[(ea + 1) % na] * 3];
    const int64_t dz = (int64_t)v[pa[ea] * 3 + 2] - v[pa[(ea + 1) % na] * 3 + 2];
    *ea_out = ea;
    *eb_out = eb;
    return dx * dx + dz * dz;
}

/* Replaces pa by the union of pa and pb around their shared edge (pa's edge ea, pb's edge eb). */
static void merge_into(uint16_t* pa, const uint16_t* pb, int ea, int eb, int nvp)
{
    const int na = poly_count(pa, nvp), nb = poly_count(pb, nvp);
    uint16_t tmp[NB_MAX_VERTS_PER_POLY];
    int n = 0;
    for (int i = 0; i < na - 1; ++i)
        tmp[n++] = pa[(ea + 1 + i) % na];
    for (int i = 0; i < nb - 1; ++i)
        tmp[n++] = pb[(eb + 1 + i) % nb];
    for (int i = 0; i < nvp; ++i)
        pa[i] = i < n ? tmp[i] : NB_MESH_NULL_IDX;
}

/* ---- greedy convex merge ---------------------------------------------------------------------------------
 * The reference rescans every pair of polygons for each merge (cubic in the outline size). Here only polygons
 * that share an edge are candidates: an edge table maps each edge to the polygons using it; each polygon
 * keeps its best merge with a higher-indexed neighbour, and a tournament tree over those picks the global
 * best in O(1). The order matches the reference's scan: the largest gain, ties to the lowest pair (pa, pb).
 * After a merge pb is filled with the last polygon, as there, so only the neighbours of pa and pb need new
 * bests. */

typedef struct merger {
    int capacity;       /* polygons */
    int64_t* gain;      /* per polygon: best gain with a higher-indexed neighbour, 0 = none */
    int32_t* partner;   /* that neighbour */
    int32_t* tree;      /* 2 * leaves nodes; node k holds the better polygon of its two children */
    int leaves;         /* power of two >= polygons of the current run */
    int32_t* heads;     /* edge table buckets */
    int32_t bucket_mask;
    uint32_t* node_key; /* edge table nodes: key, polygon, next in bucket */
    int32_t* node_poly;
    int32_t* node_next;
    int32_t node_top, node_free;
    /* the polygons being merged */
    uint16_t* polys;      /* nvp stride */
    int npolys, nvp;
    const uint16_t* verts;
    uint16_t* regs;      /* optional: merging different regions gives MULTIPLE_REGS */
    uint8_t* areas;      /* optional: polygons of different areas never merge */
    void* block;
} merger;

static int pow2_at_least(int n)
{
    int p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/* One block for all the merger's arrays, sized for `capacity` polygons that start as triangles. */
static nb_status merger_init(nb_context* ctx, merger* m, int capacity, const char* fn)
{
    memset(m, 0, sizeof(*m));
    if (capacity < 1)
        capacity = 1;
    const size_t leaves = (size_t)pow2_at_least(capacity);
    const size_t buckets = (size_t)pow2_at_least(capacity * 6);
    const size_t nodes = (size_t)capacity * 3;
    const size_t bytes = (size_t)capacity * sizeof(int64_t) + (size_t)capacity * sizeof(int32_t) +
                         leaves * 2 * sizeof(int32_t) + buckets * sizeof(int32_t) + nodes * sizeof(uint32_t) +
                         nodes * 2 * sizeof(int32_t);
    char* p = (char*)nb_alloc(ctx, bytes);
    if (!p)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'merge' (%zu bytes)", fn, bytes);
    m->block = p;
    m->capacity = capacity;
    m->gain = (int64_t*)p;
    p += (size_t)capacity * sizeof(int64_t);
    m->partner = (int32_t*)p;
    p += (size_t)capacity * sizeof(int32_t);
    m->tree = (int32_t*)p;
    p += leaves * 2 * sizeof(int32_t);
    m->heads = (int32_t*)p;
    p += buckets * sizeof(int32_t);
    m->node_key = (uint32_t*)p;
    p += nodes * sizeof(uint32_t);
    m->node_poly = (int32_t*)p;
    p += nodes * sizeof(int32_t);
    m->node_next = (int32_t*)p;
    return NB_OK;
}

static void merger_free(nb_context* ctx, merger* m) { nb_free(ctx, m->block); }

static inline int32_t bucket_of(const merger* m, uint32_t key)
{
    uint32_t h = key * 0x9e3779b1u;
    h ^= h >> 15;
    return (int32_t)(h & (uint32_t)m->bucket_mask);
}

static void edge_add(merger* m, uint32_t key, int poly)
{
    int32_t n;
    if (m->node_free >= 0) {
        n = m->node_free;
        m->node_free = m->node_next[n];
    } else {
        n = m->node_top++; /* never past capacity*3: a merge frees two edges more than it adds */
    }
    const int32_t b = bucket_of(m, key);
    m->node_key[n] = key;
    m->node_poly[n] = poly;
    m->node_next[n] = m->heads[b];
    m->heads[b] = n;
}

static void edge_remove(merger* m, uint32_t key, int poly)
{
    for (int32_t* link = &m->heads[bucket_of(m, key)]; *link >= 0; link = &m->node_next[*link]) {
        const int32_t n = *link;
        if (m->node_key[n] == key && m->node_poly[n] == poly) {
            *link = m->node_next[n];
            m->node_next[n] = m->node_free;
            m->node_free = n;
            return;
        }
    }
}

static void edge_move(merger* m, uint32_t key, int from, int to)
{
    for (int32_t n = m->heads[bucket_of(m, key)]; n >= 0; n = m->node_next[n])
        if (m->node_key[n] == key && m->node_poly[n] == from) {
            m->node_poly[n] = to;
            return;
        }
}

static inline uint16_t* poly_at(const merger* m, int i) { return m->polys + (size_t)i * m->nvp; }

static int64_t pair_gain(const merger* m, int a, int b, int* ea, int* eb)
{
    if (m->areas && m->areas[a] != m->areas[b])
        return -1;
    return merge_gain(poly_at(m, a), poly_at(m, b), m->verts, m->nvp, ea, eb);
}

static inline int better(const merger* m, int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    if (m->gain[a] != m->gain[b])
        return m->gain[a] > m->gain[b] ? a : b;
    return a < b ? a : b;
}

static void tree_update(merger* m, int p)
{
    for (int k = (m->leaves + p) >> 1; k >= 1; k >>= 1)
        m->tree[k] = better(m, m->tree[2 * k], m->tree[2 * k + 1]);
}

/* Best merge of p with a higher-indexed neighbour: largest gain, ties to the lowest neighbour. */
static void find_best(merger* m, int p)
{
    int64_t best = 0;
    int32_t with = -1;
    const uint16_t* pp = poly_at(m, p);
    const int n = poly_count(pp, m->nvp);
    for (int e = 0; e < n; ++e) {
        const uint32_t key = edge_key(pp[e], pp[(e + 1) % n]);
        for (int32_t k = m->heads[bucket_of(m, key)]; k >= 0; k = m->node_next[k]) {
            const int q = m->node_poly[k];
            if (m->node_key[k] != key || q <= p)
                continue;
            int ea, eb;
            const int64_t g = pair_gain(m, p, q, &ea, &eb);
            if (g > best || (g == best && g > 0 && q < with)) {
                best = g;
                with = q;
            }
        }
    }
    m->gain[p] = best;
    m->partner[p] = with;
}

static void find_best_around(merger* m, int p)
{
    const uint16_t* pp = poly_at(m, p);
    const int n = poly_count(pp, m->nvp);
    for (int e = 0; e < n; ++e) {
        const uint32_t key = edge_key(pp[e], pp[(e + 1) % n]);
        for (int32_t k = m->heads[bucket_of(m, key)]; k >= 0; k = m->node_next[k]) {
            const int q = m->node_poly[k];
            if (m->node_key[k] != key || q == p)
                continue;
            find_best(m, q);
            tree_update(m, q);
        }
    }
}

static void edges_of(merger* m, int p, int add)
{
    const uint16_t* pp = poly_at(m, p);
    const int n = poly_count(pp, m->nvp);
    for (int e = 0; e < n; ++e) {
        const uint32_t key = edge_key(pp[e], pp[(e + 1) % n]);
        if (add)
            edge_add(m, key, p);
        else
            edge_remove(m, key, p);
    }
}

/* Greedily merges the npolys polygons (at most m->capacity, all triangles) into convex polygons of at most
 * nvp corners; returns the new count. regs/areas (optional) follow the polygons. */
static int merge_polys(merger* m, uint16_t* polys, int npolys, int nvp, const uint16_t* verts, uint16_t* regs,
                       uint8_t* areas)
{
    if (nvp <= 3 || npolys < 2)
        return npolys;
    m->polys = polys;
    m->npolys = npolys;
    m->nvp = nvp;
    m->verts = verts;
    m->regs = regs;
    m->areas = areas;
    m->leaves = pow2_at_least(npolys);
    m->bucket_mask = pow2_at_least(npolys * 6) - 1;
    memset(m->heads, 0xff, (size_t)(m->bucket_mask + 1) * sizeof(int32_t));
    m->node_top = 0;
    m->node_free = -1;
    for (int p = 0; p < npolys; ++p)
        edges_of(m, p, 1);
    for (int p = 0; p < npolys; ++p)
        find_best(m, p);
    for (int k = 0; k < m->leaves; ++k)
        m->tree[m->leaves + k] = k < npolys ? k : -1;
    for (int k = m->leaves - 1; k >= 1; --k)
        m->tree[k] = better(m, m->tree[2 * k], m->tree[2 * k + 1]);

    for (;;) {
        const int pa = m->tree[1];
        if (pa < 0 || m->gain[pa] <= 0)
            break;
        const int pb = m->partner[pa];
        int ea = -1, eb = -1;
        /* A best can go stale only when a degenerate edge shared by three polygons vanished: refresh it. */
        if (pb >= m->npolys || pair_gain(m, pa, pb, &ea, &eb) != m->gain[pa]) {
            find_best(m, pa);
            tree_update(m, pa);
            continue;
        }
        edges_of(m, pa, 0);
        edges_of(m, pb, 0);
        merge_into(poly_at(m, pa), poly_at(m, pb), ea, eb, nvp);
        edges_of(m, pa, 1);
        if (regs && regs[pa] != regs[pb])
            regs[pa] = MULTIPLE_REGS;

        const int last = m->npolys - 1;
        if (pb != last) {
            const uint16_t* pl = poly_at(m, last);
            const int n = poly_count(pl, nvp);
            for (int e = 0; e < n; ++e)
                edge_move(m, edge_key(pl[e], pl[(e + 1) % n]), last, pb);
            memcpy(poly_at(m, pb), pl, (size_t)nvp * sizeof(uint16_t));
            if (regs)
                regs[pb] = regs[last];
            if (areas)
                areas[pb] = areas[last];
        }
        memset(poly_at(m, last), 0xff, (size_t)nvp * sizeof(uint16_t));
        m->gain[last] = 0;
        m->partner[last] = -1;
        tree_update(m, last);
        m->npolys = last;

        find_best(m, pa);
        tree_update(m, pa);
        find_best_around(m, pa);
        if (pb < m->npolys) {
            find_best(m, pb);
            tree_update(m, pb);
            find_best_around(m, pb);
        }
    }
    return m->npolys;
}

/* ---- vertex welding -------------------------------------------------------------------------------------- */

typedef struct welder {
    int32_t* first; /* WELD_BUCKETS chain heads */
    int32_t* next;  /* per mesh vertex */
} welder;

/* Index of the mesh vertex at (x, z) within WELD_MAX_DY of y, added when there is none; -1 when the mesh is
 * full. */
static int weld_vertex(nb_poly_mesh* mesh, welder* w, int capacity, int x, int y, int z)
{
    uint32_t h = (uint32_t)x * 0x8da6b343u + (uint32_t)z * 0xcb1ab31fu;
    h = (h ^ (h >> 16)) & (WELD_BUCKETS - 1);
    for (int32_t i = w->first[h]; i >= 0; i = w->next[i]) {
        const uint16_t* v = &mesh->verts[i * 3];
        if (v[0] == x && v[2] == z && nb_absi((int)v[1] - y) <= WELD_MAX_DY)
            return i;
    }
    if (mesh->nverts >= capacity)
        return -1;
    const int i = mesh->nverts++;
    uint16_t* v = &mesh->verts[i * 3];
    v[0] = (uint16_t)x;
    v[1] = (uint16_t)y;
    v[2] = (uint16_t)z;
    w->next[i] = w->first[h];
    w->first[h] = i;
    return i;
}

/* ---- removing tile-border helper vertices ----------------------------------------------------------------
 * The contours keep a vertex wherever an outline meets the tile border; most are only needed to make tiles
 * agree and can go when the polygons around them leave a simple hole that can be refilled. */

/* A vertex can go when the polygons around it keep at least a triangle's worth of edges and it lies inside
 * one fan (at most two open edges: it may sit on the mesh boundary, but not where two fans touch). */
static nb_status can_remove_vertex(nb_context* ctx, const nb_poly_mesh* mesh, int rem, int* ok)
{
    const int nvp = mesh->nvp;
    int touching = 0, remaining_edges = 0;
    *ok = 0;
    for (int i = 0; i < mesh->npolys; ++i) {
        const uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        int hits = 0;
        for (int j = 0; j < nv; ++j)
            hits += p[j] == rem;
        if (hits) {
            touching += hits;
            remaining_edges += nv - (hits + 1);
        }
    }
    if (remaining_edges <= 2)
        return NB_OK;

    /* The edges at rem, by their other end, with how many polygons use each: an edge used once is open. */
    int32_t* other = (int32_t*)nb_alloc(ctx, (size_t)touching * 2 * 2 * sizeof(int32_t));
    if (!other)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'edges' (%d)", touching * 2);
    int nedges = 0;
    for (int i = 0; i < mesh->npolys; ++i) {
        const uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        for (int j = 0, k = nv - 1; j < nv; k = j++) {
            if (p[j] != rem && p[k] != rem)
                continue;
            const int b = p[j] == rem ? p[k] : p[j];
            int found = 0;
            for (int e = 0; e < nedges; ++e)
                if (other[e * 2] == b) {
                    ++other[e * 2 + 1];
                    found = 1;
                }
            if (!found) {
                other[nedges * 2] = b;
                other[nedges * 2 + 1] = 1;
                ++nedges;
            }
        }
    }
    int open = 0;
    for (int e = 0; e < nedges; ++e)
        open += other[e * 2 + 1] < 2;
    *ok = open <= 2;
    nb_free(ctx, other);
    return NB_OK;
}

/* Removes vertex rem and the polygons around it, then refills the hole they leave: its outline is chained from
 * their edges that do not touch rem, ear-clipped and merged again. Pieces of the hole keep the region of the
 * polygon their edge came from, or MULTIPLE_REGS when they mix regions. */
static nb_status remove_vertex(nb_context* ctx, nb_poly_mesh* mesh, int rem)
{
    const int nvp = mesh->nvp;
    nb_status st = NB_OK;
    int32_t* edges = NULL; /* (a, b, reg, area) */
    int32_t* hole = NULL;  /* (vertex, reg, area) per hole corner */
    outline ol;
    memset(&ol, 0, sizeof(ol));
    int32_t* tris = NULL;
    uint16_t* polys = NULL;
    uint16_t* pregs = NULL;
    uint8_t* pareas = NULL;
    merger m;
    memset(&m, 0, sizeof(m));

    int touching = 0;
    for (int i = 0; i < mesh->npolys; ++i) {
        const uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        for (int j = 0; j < nv; ++j)
            touching += p[j] == rem;
    }
    const size_t cap = (size_t)touching * (size_t)nvp + 1;
    edges = (int32_t*)nb_alloc(ctx, cap * 4 * sizeof(int32_t));
    hole = (int32_t*)nb_alloc(ctx, cap * 2 * 3 * sizeof(int32_t)); /* grows at both ends from the middle */
    if (!edges || !hole) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole' (%zu)", cap);
        goto cleanup;
    }

    /* Collect the outer edges of the polygons around rem, in their winding, and drop those polygons. */
    int nedges = 0;
    for (int i = 0; i < mesh->npolys; ++i) {
        uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        int has = 0;
        for (int j = 0; j < nv; ++j)
            has |= p[j] == rem;
        if (!has)
            continue;
        for (int j = 0, k = nv - 1; j < nv; k = j++) {
            if (p[j] == rem || p[k] == rem)
                continue;
            int32_t* e = &edges[nedges++ * 4];
            e[0] = p[k];
            e[1] = p[j];
            e[2] = mesh->regs[i];
            e[3] = mesh->areas[i];
        }
        const int last = mesh->npolys - 1;
        if (i != last) {
            memcpy(p, &mesh->polys[(size_t)last * 2 * nvp], (size_t)nvp * sizeof(uint16_t));
            mesh->regs[i] = mesh->regs[last];
            mesh->areas[i] = mesh->areas[last];
        }
        memset(&mesh->polys[(size_t)last * 2 * nvp], 0xff, (size_t)2 * nvp * sizeof(uint16_t));
        --mesh->npolys;
        --i;
    }

    /* Close the gap in the vertex array. */
    memmove(&mesh->verts[rem * 3], &mesh->verts[(rem + 1) * 3], (size_t)(mesh->nverts - rem - 1) * 3 * sizeof(uint16_t));
    --mesh->nverts;
    for (int i = 0; i < mesh->npolys; ++i) {
        uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        for (int j = 0; j < nv; ++j)
            if (p[j] > rem)
                --p[j];
    }
    for (int e = 0; e < nedges; ++e) {
        edges[e * 4] -= edges[e * 4] > rem;
        edges[e * 4 + 1] -= edges[e * 4 + 1] > rem;
    }
    if (nedges == 0)
        goto cleanup;

    /* Chain the edges into the hole outline, growing it at either end; hole[] holds the corners from head to
     * tail, started in the middle of a buffer twice the size so both ends can grow. */
    int head = (int)cap, tail = (int)cap; /* corners hole[head .. tail) in triples */
    hole[head * 3] = edges[0];
    hole[head * 3 + 1] = edges[2];
    hole[head * 3 + 2] = edges[3];
    ++tail;
    while (nedges) {
        int matched = 0;
        for (int i = 0; i < nedges; ++i) {
            const int32_t* e = &edges[i * 4];
            int32_t* slot = NULL;
            if (hole[head * 3] == e[1]) {
                slot = &hole[--head * 3];
                slot[0] = e[0];
            } else if (hole[(tail - 1) * 3] == e[0]) {
                slot = &hole[tail++ * 3];
                slot[0] = e[1];
            }
            if (!slot)
                continue;
            slot[1] = e[2];
            slot[2] = e[3];
            memcpy(&edges[i * 4], &edges[(nedges - 1) * 4], 4 * sizeof(int32_t));
            --nedges;
            --i;
            matched = 1;
        }
        if (!matched)
            break; /* not a simple loop: fill what chained */
    }
    const int nhole = tail - head;
    const int32_t* hc = &hole[head * 3];
    if (nhole < 3)
        goto cleanup;

    outline_init(ctx, &ol, nhole);
    tris = (int32_t*)nb_alloc(ctx, (size_t)nhole * 3 * sizeof(int32_t));
    polys = (uint16_t*)nb_alloc(ctx, (size_t)nhole * nvp * sizeof(uint16_t));
    pregs = (uint16_t*)nb_alloc(ctx, (size_t)nhole * sizeof(uint16_t));
    pareas = (uint8_t*)nb_alloc(ctx, (size_t)nhole);
    if (!ol.block || !tris || !polys || !pregs || !pareas) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'hole triangles' (%d)", nhole);
        goto cleanup;
    }
    for (int i = 0; i < nhole; ++i) {
        const uint16_t* v = &mesh->verts[hc[i * 3] * 3];
        ol.id[i] = i;
        ol.p[i].x = v[0];
        ol.p[i].z = v[2];
    }
    ol.n = nhole;
    int ntris = triangulate(&ol, tris);
    if (ntris < 0)
        ntris = -ntris;

    int npolys = 0;
    memset(polys, 0xff, (size_t)nhole * nvp * sizeof(uint16_t));
    for (int t = 0; t < ntris; ++t) {
        const int32_t* tr = &tris[t * 3];
        if (!is_ccw_triangle(mesh->verts, (uint16_t)hc[tr[0] * 3], (uint16_t)hc[tr[1] * 3], (uint16_t)hc[tr[2] * 3]))
            continue;
        uint16_t* p = &polys[(size_t)npolys * nvp];
        for (int k = 0; k < 3; ++k)
            p[k] = (uint16_t)hc[tr[k] * 3];
        const int32_t r0 = hc[tr[0] * 3 + 1];
        pregs[npolys] = (r0 == hc[tr[1] * 3 + 1] && r0 == hc[tr[2] * 3 + 1]) ? (uint16_t)r0 : MULTIPLE_REGS;
        pareas[npolys] = (uint8_t)hc[tr[0] * 3 + 2];
        ++npolys;
    }
    if (npolys == 0)
        goto cleanup;
    st = merger_init(ctx, &m, npolys, FN_);
    if (st != NB_OK)
        goto cleanup;
    npolys = merge_polys(&m, polys, npolys, nvp, mesh->verts, pregs, pareas);

    if (mesh->npolys + npolys > mesh->max_polys) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, FN_ ": refilling the hole of vertex %d needs %d polygons beyond %d", rem,
                     npolys, mesh->max_polys);
        goto cleanup;
    }
    for (int i = 0; i < npolys; ++i) {
        uint16_t* p = &mesh->polys[(size_t)mesh->npolys * 2 * nvp];
        memset(p, 0xff, (size_t)2 * nvp * sizeof(uint16_t));
        memcpy(p, &polys[(size_t)i * nvp], (size_t)nvp * sizeof(uint16_t));
        mesh->regs[mesh->npolys] = pregs[i];
        mesh->areas[mesh->npolys] = pareas[i];
        ++mesh->npolys;
    }

cleanup:
    merger_free(ctx, &m);
    nb_free(ctx, pareas);
    nb_free(ctx, pregs);
    nb_free(ctx, polys);
    nb_free(ctx, tris);
    outline_free(ctx, &ol);
    nb_free(ctx, hole);
    nb_free(ctx, edges);
    return st;
}

/* ---- adjacency -------------------------------------------------------------------------------------------
 * Each edge is recorded once, from the polygon that walks it from its lower to its higher vertex; the polygon
 * walking it the other way claims it. Edges are found through a per-vertex list, so this is linear. */

typedef struct half_edge {
    uint16_t lo, hi;      /* vertices */
    uint16_t poly0, side0; /* the polygon walking lo -> hi and the edge's place in it */
    uint16_t poly1, side1; /* the polygon walking hi -> lo, poly0 while none */
} half_edge;

static nb_status link_neighbours(nb_context* ctx, nb_poly_mesh* mesh)
{
    const int nvp = mesh->nvp;
    nb_status st = NB_OK;
    const size_t max_edges = (size_t)mesh->npolys * nvp;
    int32_t* first = (int32_t*)nb_alloc(ctx, (size_t)mesh->nverts * sizeof(int32_t));
    int32_t* next = (int32_t*)nb_alloc(ctx, max_edges * sizeof(int32_t));
    half_edge* edges = (half_edge*)nb_alloc(ctx, max_edges * sizeof(half_edge));
    if (!first || !next || !edges) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'adjacency' (%zu edges)", max_edges);
        goto cleanup;
    }
    memset(first, 0xff, (size_t)mesh->nverts * sizeof(int32_t));
    int nedges = 0;
    for (int i = 0; i < mesh->npolys; ++i) {
        const uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        for (int j = 0; j < nv; ++j) {
            const uint16_t v0 = p[j], v1 = p[(j + 1) % nv];
            if (v0 >= v1)
                continue;
            half_edge* e = &edges[nedges];
            e->lo = v0;
            e->hi = v1;
            e->poly0 = e->poly1 = (uint16_t)i;
            e->side0 = (uint16_t)j;
            e->side1 = 0;
            next[nedges] = first[v0];
            first[v0] = nedges++;
        }
    }
    for (int i = 0; i < mesh->npolys; ++i) {
        const uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        for (int j = 0; j < nv; ++j) {
            const uint16_t v0 = p[j], v1 = p[(j + 1) % nv];
            if (v0 <= v1)
                continue;
            for (int32_t k = first[v1]; k >= 0; k = next[k]) {
                half_edge* e = &edges[k];
                if (e->hi == v0 && e->poly0 == e->poly1) {
                    e->poly1 = (uint16_t)i;
                    e->side1 = (uint16_t)j;
                    break;
                }
            }
        }
    }
    for (int k = 0; k < nedges; ++k) {
        const half_edge* e = &edges[k];
        if (e->poly0 == e->poly1)
            continue;
        mesh->polys[(size_t)e->poly0 * 2 * nvp + nvp + e->side0] = e->poly1;
        mesh->polys[(size_t)e->poly1 * 2 * nvp + nvp + e->side1] = e->poly0;
    }

cleanup:
    nb_free(ctx, edges);
    nb_free(ctx, next);
    nb_free(ctx, first);
    return st;
}

/* Open edges along the tile border lead to the neighbouring tile: mark them PORTAL | side. As in the reference,
 * the contour stage shifts coordinates so the tile proper starts at 0 and gives the tile proper's size in
 * cset->width/height (the compact grid's size less both borders), so its far sides are x = width, z = height. */
static void mark_portals(nb_poly_mesh* mesh, const nb_contour_set* cset)
{
    const int nvp = mesh->nvp;
    const int w = cset->width, h = cset->height;
    for (int i = 0; i < mesh->npolys; ++i) {
        uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        const int nv = poly_count(p, nvp);
        for (int j = 0; j < nv; ++j) {
            if (p[nvp + j] != NB_MESH_NULL_IDX)
                continue;
            const uint16_t* va = &mesh->verts[p[j] * 3];
            const uint16_t* vb = &mesh->verts[p[(j + 1) % nv] * 3];
            if (va[0] == 0 && vb[0] == 0)
                p[nvp + j] = PORTAL | 0;
            else if (va[2] == h && vb[2] == h)
                p[nvp + j] = PORTAL | 1;
            else if (va[0] == w && vb[0] == w)
                p[nvp + j] = PORTAL | 2;
            else if (va[2] == 0 && vb[2] == 0)
                p[nvp + j] = PORTAL | 3;
        }
    }
}

/* ---- the stage -------------------------------------------------------------------------------------------- */

nb_status nb_build_poly_mesh(nb_context* ctx, const nb_contour_set* cset, int32_t nvp, nb_poly_mesh** out)
{
    if (!ctx)
        return NB_ERR_NULL_ARG;
    if (!cset || !out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": %s is NULL", !cset ? "cset" : "out");
    *out = NULL;
    if (nvp < 3 || nvp > NB_MAX_VERTS_PER_POLY)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": nvp must be 3..%d (got %d)", NB_MAX_VERTS_PER_POLY, nvp);
    if (cset->nconts < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": cset->nconts is negative (%d)", cset->nconts);
    if (cset->nconts > 0 && !cset->conts)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": cset->conts is NULL but nconts is %d", cset->nconts);

    /* ---- sizes: every contour of n corners gives at most n-2 triangles ---- */
    int64_t total_verts = 0, total_tris = 0;
    int max_cont_verts = 0;
    for (int i = 0; i < cset->nconts; ++i) {
        const nb_contour* c = &cset->conts[i];
        if (c->nverts < 3)
            continue;
        if (!c->verts)
            return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": contour %d has %d vertices but verts is NULL", i, c->nverts);
        total_verts += c->nverts;
        total_tris += c->nverts - 2;
        max_cont_verts = nb_maxi(max_cont_verts, c->nverts);
    }
    if (total_tris > INT32_MAX / (2 * NB_MAX_VERTS_PER_POLY))
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_ ": the contours have %lld vertices, too many to triangulate",
                       (long long)total_verts);
    const int vert_cap = (int)(total_verts < MAX_MESH_VERTS ? total_verts : MAX_MESH_VERTS);
    const int max_polys = (int)total_tris;

    nb_status st = NB_OK;
    uint8_t* border_vert = NULL;
    welder weld = { NULL, NULL };
    outline ol;
    memset(&ol, 0, sizeof(ol));
    uint16_t* vmap = NULL; /* contour corner -> mesh vertex */
    int32_t* tris = NULL;
    uint16_t* cpolys = NULL;
    merger m;
    memset(&m, 0, sizeof(m));

    nb_poly_mesh* mesh = (nb_poly_mesh*)nb_calloc(ctx, 1, sizeof(*mesh));
    if (!mesh)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'mesh'");
    mesh->nvp = nvp;
    mesh->max_polys = max_polys;
    memcpy(mesh->bmin, cset->bmin, sizeof(mesh->bmin));
    memcpy(mesh->bmax, cset->bmax, sizeof(mesh->bmax));
    mesh->cell_size = cset->cell_size;
    mesh->cell_height = cset->cell_height;
    mesh->border_size = cset->border_size;
    mesh->max_edge_error = cset->max_error;

    mesh->verts = (uint16_t*)nb_alloc(ctx, (size_t)vert_cap * 3 * sizeof(uint16_t));
    mesh->polys = (uint16_t*)nb_alloc(ctx, (size_t)max_polys * 2 * nvp * sizeof(uint16_t));
    mesh->regs = (uint16_t*)nb_calloc(ctx, (size_t)max_polys, sizeof(uint16_t));
    mesh->areas = (uint8_t*)nb_calloc(ctx, (size_t)max_polys, 1);
    mesh->flags = (uint16_t*)nb_calloc(ctx, (size_t)max_polys, sizeof(uint16_t));
    if (!mesh->verts || !mesh->polys || !mesh->regs || !mesh->areas || !mesh->flags) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'polys' (%d polygons, %d vertices)", max_polys,
                     vert_cap);
        goto cleanup;
    }
    memset(mesh->polys, 0xff, (size_t)max_polys * 2 * nvp * sizeof(uint16_t));

    border_vert = (uint8_t*)nb_calloc(ctx, (size_t)vert_cap, 1);
    weld.first = (int32_t*)nb_alloc(ctx, WELD_BUCKETS * sizeof(int32_t));
    weld.next = (int32_t*)nb_alloc(ctx, (size_t)vert_cap * sizeof(int32_t));
    outline_init(ctx, &ol, max_cont_verts);
    vmap = (uint16_t*)nb_alloc(ctx, (size_t)max_cont_verts * sizeof(uint16_t));
    tris = (int32_t*)nb_alloc(ctx, (size_t)max_cont_verts * 3 * sizeof(int32_t));
    cpolys = (uint16_t*)nb_alloc(ctx, (size_t)max_cont_verts * nvp * sizeof(uint16_t));
    if (!border_vert || !weld.first || !weld.next || !ol.block || !vmap || !tris || !cpolys) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'triangulation' (%d contour vertices)",
                     max_cont_verts);
        goto cleanup;
    }
    memset(weld.first, 0xff, WELD_BUCKETS * sizeof(int32_t));
    st = merger_init(ctx, &m, nb_maxi(max_cont_verts - 2, 1), FN_);
    if (st != NB_OK)
        goto cleanup;

    /* ---- per contour: triangulate, weld, merge ---- */
    for (int ci = 0; ci < cset->nconts; ++ci) {
        const nb_contour* c = &cset->conts[ci];
        if (c->nverts < 3)
            continue;
        /* Weld first (same vertex order as welding after triangulation) so an oversized input fails before
         * the quadratic ear clipping. */
        for (int j = 0; j < c->nverts; ++j) {
            const int32_t* v = &c->verts[j * 4];
            if (v[0] < 0 || v[0] > 0xffff || v[1] < 0 || v[1] > 0xffff || v[2] < 0 || v[2] > 0xffff) {
                st = nb_fail(ctx, NB_ERR_INVALID_ARG, FN_ ": contour %d vertex %d (%d, %d, %d) is outside 0..65535",
                             ci, j, v[0], v[1], v[2]);
                goto cleanup;
            }
            const int vi = weld_vertex(mesh, &weld, vert_cap, v[0], v[1], v[2]);
            if (vi < 0) {
                st = nb_fail(ctx, NB_ERR_TOO_LARGE,
                             FN_ ": more than %d distinct vertices (%lld contour vertices); use tiles or a larger cell_size",
                             MAX_MESH_VERTS, (long long)total_verts);
                goto cleanup;
            }
            vmap[j] = (uint16_t)vi;
            if (v[3] & NB_CONTOUR_BORDER_VERTEX)
                border_vert[vi] = 1;
        }

        for (int j = 0; j < c->nverts; ++j) {
            ol.id[j] = j;
            ol.p[j].x = c->verts[j * 4];
            ol.p[j].z = c->verts[j * 4 + 2];
        }
        ol.n = c->nverts;
        int ntris = triangulate(&ol, tris);
        if (ntris < 0)
            ntris = -ntris; /* self-overlapping outline: keep the part that could be cut */

        int npolys = 0;
        memset(cpolys, 0xff, (size_t)ntris * nvp * sizeof(uint16_t));
        for (int t = 0; t < ntris; ++t) {
            const uint16_t a = vmap[tris[t * 3]], b = vmap[tris[t * 3 + 1]], d = vmap[tris[t * 3 + 2]];
            if (!is_ccw_triangle(mesh->verts, a, b, d))
                continue; /* collapsed by welding (bridge of a merged hole) or cut from a self-touching outline */
            uint16_t* p = &cpolys[(size_t)npolys++ * nvp];
            p[0] = a;
            p[1] = b;
            p[2] = d;
        }
        npolys = merge_polys(&m, cpolys, npolys, nvp, mesh->verts, NULL, NULL);
        for (int i = 0; i < npolys; ++i) {
            uint16_t* p = &mesh->polys[(size_t)mesh->npolys * 2 * nvp];
            memcpy(p, &cpolys[(size_t)i * nvp], (size_t)nvp * sizeof(uint16_t));
            mesh->regs[mesh->npolys] = c->reg;
            mesh->areas[mesh->npolys] = c->area;
            ++mesh->npolys;
        }
        st = nb_report(ctx, NB_STAGE_POLYMESH, (uint32_t)ci + 1, (uint32_t)cset->nconts);
        if (st != NB_OK)
            goto cleanup;
    }

    /* ---- tile-border helper vertices ---- */
    for (int v = 0; v < mesh->nverts; ++v) {
        if (!border_vert[v])
            continue;
        int ok = 0;
        st = can_remove_vertex(ctx, mesh, v, &ok);
        if (st != NB_OK)
            goto cleanup;
        if (!ok)
            continue;
        st = remove_vertex(ctx, mesh, v);
        if (st != NB_OK)
            goto cleanup;
        memmove(&border_vert[v], &border_vert[v + 1], (size_t)(mesh->nverts - v)); /* nverts already one less */
        --v;
    }

    /* ---- neighbours ---- */
    const int max_index = cset->border_size > 0 ? PORTAL - 1 : MAX_MESH_VERTS;
    if (mesh->npolys > max_index) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, FN_ ": %d polygons, more than the %d a mesh can link; use tiles, or smaller ones (tile_size)",
                     mesh->npolys, max_index);
        goto cleanup;
    }
    st = link_neighbours(ctx, mesh);
    if (st != NB_OK)
        goto cleanup;
    if (cset->border_size > 0)
        mark_portals(mesh, cset);
    for (int i = 0; i < mesh->npolys; ++i)
        mesh->flags[i] = mesh->areas[i] != NB_NULL_AREA ? 1 : 0;

cleanup:
    merger_free(ctx, &m);
    nb_free(ctx, cpolys);
    nb_free(ctx, tris);
    nb_free(ctx, vmap);
    outline_free(ctx, &ol);
    nb_free(ctx, weld.next);
    nb_free(ctx, weld.first);
    nb_free(ctx, border_vert);
    if (st != NB_OK) {
        nb_poly_mesh_destroy(ctx, mesh);
        return st;
    }
    *out = mesh;
    return NB_OK;
}

void nb_poly_mesh_destroy(nb_context* ctx, nb_poly_mesh* mesh)
{
    if (!mesh)
        return;
    nb_free(ctx, mesh->verts);
    nb_free(ctx, mesh->polys);
    nb_free(ctx, mesh->regs);
    nb_free(ctx, mesh->flags);
    nb_free(ctx, mesh->areas);
    nb_free(ctx, mesh);
}
