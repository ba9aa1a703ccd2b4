/* Detail height mesh: sample the surface inside each polygon and triangulate (seed 002).
 *
 * The polygon mesh only knows heights at its corners. For each polygon this stage reads the voxel floors under
 * it, samples its edges every sample_dist and keeps the edge samples needed to stay within sample_max_error,
 * then adds interior samples on a sample_dist grid greedily -- always the one farthest (vertically) from the
 * current triangulated surface -- until every remaining sample is within sample_max_error.
 *
 * The semantics follow the reference (recastnavigation's detail mesh) so the counts match. What differs is
 * how interior samples are added. The reference rebuilds the whole triangulation and re-measures every
 * candidate against every triangle after each added sample, which is quadratic per polygon and most of a
 * terrain bake. Here the triangulation is kept Delaunay incrementally (split the triangle under the new
 * vertex, then Lawson edge flips around it), and every candidate stays bucketed in the triangle above it with
 * its error cached, so one insertion only re-measures the samples of the few triangles it changed.
 *
 * Heights: a detail vertex's y is bmin.y + h * cell_height, with h the voxel floor in cells -- the mapping of
 * the polygon vertices -- so a polygon's own vertices come out unchanged and the detail surface lies on the
 * voxel floors, which are at most one cell above the rasterized triangles (plus the slope across a cell). The
 * reference adds one more cell_height. x and z are bmin + cells * cell_size; compact heightfield columns are
 * the polygon mesh cells shifted by the mesh's border_size.
 *
 * All scratch memory is one block allocated once per call and reused by every polygon. */
#include "nb_internal.h"

#include <float.h>
#include <math.h>

#define MAX_VERTS 127                 /* per polygon: triangle indices are bytes, and tris stay < 255 */
#define MAX_TRIS (2 * MAX_VERTS)      /* a triangulation of n points has fewer than 2n triangles */
#define MAX_EDGE_SAMPLES 32           /* samples along one polygon edge, end points included */
#define UNSET_HEIGHT 0xffff
#define INSIDE_EPS 1e-4               /* barycentric slack when deciding which triangle holds a sample */
#define MAX_FLIPS (64 * MAX_TRIS)     /* safety net against flip cycles from rounding; never reached in practice */

typedef struct dtri {
    int v[3];       /* vertex indices, wound like the polygon */
    int n[3];       /* neighbour across edge v[i] -> v[i+1]; -1 = polygon outline */
    int head;       /* first candidate sample inside, -1 = none */
    int best;       /* the sample inside with the largest error (> 0), -1 = none */
    float best_err;
    uint8_t dirty;  /* its samples need measuring again */
    uint8_t queued; /* bit i: slot edge i waits on the flip stack (whatever edge the slot then holds) */
} dtri;

typedef struct dsample {
    float x, y, z; /* jittered position relative to the mesh origin; y = the voxel floor there */
    float err;     /* vertical distance to the current surface */
    int tri;       /* triangle above it, -1 = outside or already a vertex */
    int next;      /* next sample of the same triangle */
} dsample;

typedef struct work {
    /* stage inputs */
    const nb_compact_heightfield* chf;
    int border;
    float cs, ch, ics;
    float sample_dist, max_error;
    int search_radius;
    /* voxel floors under the polygon's bounds (in polygon mesh cells), UNSET_HEIGHT where unknown */
    uint16_t* heights;
    int hx, hz, hw, hh;
    int32_t* queue; /* (x, z, span) triples for the flood fills */
    /* the polygon being built, coordinates relative to the mesh origin */
    float poly[NB_MAX_VERTS_PER_POLY * 3];
    int npoly;
    double sign; /* +1 when the polygon winds positively in (x, z), else -1: all predicates follow the polygon */
    float verts[MAX_VERTS * 3];
    int nverts;
    int hull[MAX_VERTS]; /* outline vertices in polygon order: corners and kept edge samples */
    int nhull;
    dtri tris[MAX_TRIS];
    int ntris;
    int dirty[MAX_TRIS];
    int ndirty;
    int stack[3 * MAX_TRIS]; /* tri * 4 + edge */
    int nstack;
    dsample* samples;
    int nsamples;
    int samples_cap;
} work;

/* ---------------------------------------------------------------------------------------------------------- */
/* Geometry helpers (x, z plane unless noted)                                                                  */
/* ---------------------------------------------------------------------------------------------------------- */

static inline float dist2_xz(const float* a, const float* b)
{
    const float dx = b[0] - a[0], dz = b[2] - a[2];
    return dx * dx + dz * dz;
}

/* Squared distance from p to segment ab, in (x, z). */
static float dist2_pt_seg_xz(const float* p, const float* a, const float* b)
{
    const float abx = b[0] - a[0], abz = b[2] - a[2];
    float dx = p[0] - a[0], dz = p[2] - a[2];
    const float d = abx * abx + abz * abz;
    float t = abx * dx + abz * dz;
    if (d > 0.0f)
        t /= d;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    dx = a[0] + t * abx - p[0];
    dz = a[2] + t * abz - p[2];
    return dx * dx + dz * dz;
}

/* Squared distance from p to segment ab in 3D. */
static float dist2_pt_seg(const float* p, const float* a, const float* b)
{
    const float ab[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
    const float ap[3] = { p[0] - a[0], p[1] - a[1], p[2] - a[2] };
    const float d = ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2];
    float t = ab[0] * ap[0] + ab[1] * ap[1] + ab[2] * ap[2];
    if (d > 0.0f)
        t /= d;
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    const float e[3] = { a[0] + t * ab[0] - p[0], a[1] + t * ab[1] - p[1], a[2] + t * ab[2] - p[2] };
    return e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
}

/* Twice the signed area of (a, b, c), positive when wound like the polygon. Doubles: differences and products
 * of floats are (nearly) exact, which keeps the flip decisions consistent. */
static inline double orient(const work* w, const float* a, const float* b, const float* c)
{
    const double abx = (double)b[0] - a[0], abz = (double)b[2] - a[2];
    const double acx = (double)c[0] - a[0], acz = (double)c[2] - a[2];
    return w->sign * (abx * acz - abz * acx);
}

/* > 0 when d lies inside the circumcircle of (a, b, c) (wound like the polygon), with a relative tolerance so
 * that nearly cocircular points never make two edges flip back and forth. */
static int in_circumcircle(const work* w, const float* a, const float* b, const float* c, const float* d)
{
    const double adx = (double)a[0] - d[0], adz = (double)a[2] - d[2];
    const double bdx = (double)b[0] - d[0], bdz = (double)b[2] - d[2];
    const double cdx = (double)c[0] - d[0], cdz = (double)c[2] - d[2];
    const double ad = adx * adx + adz * adz, bd = bdx * bdx + bdz * bdz, cd = cdx * cdx + cdz * cdz;
    const double det = ad * (bdx * cdz - cdx * bdz) + bd * (cdx * adz - adx * cdz) + cd * (adx * bdz - bdx * adz);
    const double scale = ad > bd ? (ad > cd ? ad : cd) : (bd > cd ? bd : cd);
    return w->sign * det > 1e-10 * scale * scale;
}

/* Smallest barycentric coordinate of p in triangle t: >= 0 inside, the larger the deeper. */
static double inside_score(const work* w, const dtri* t, const float* p)
{
    const float* a = &w->verts[t->v[0] * 3];
    const float* b = &w->verts[t->v[1] * 3];
    const float* c = &w->verts[t->v[2] * 3];
    const double area = orient(w, a, b, c);
    if (!(area > 0.0))
        return -DBL_MAX;
    const double l0 = orient(w, b, c, p) / area, l1 = orient(w, c, a, p) / area, l2 = orient(w, a, b, p) / area;
    return l0 < l1 ? (l0 < l2 ? l0 : l2) : (l1 < l2 ? l1 : l2);
}

/* Vertical distance from sample s to the plane of triangle t (barycentric interpolation, clamped so that a
 * sample a hair outside a sliver cannot extrapolate wildly). */
static float sample_error(const work* w, const dtri* t, const dsample* s)
{
    const float* a = &w->verts[t->v[0] * 3];
    const float* b = &w->verts[t->v[1] * 3];
    const float* c = &w->verts[t->v[2] * 3];
    const float p[3] = { s->x, s->y, s->z };
    const double area = orient(w, a, b, c);
    if (!(area > 0.0))
        return 0.0f;
    double l0 = orient(w, b, c, p) / area, l1 = orient(w, c, a, p) / area, l2 = orient(w, a, b, p) / area;
    l0 = l0 < 0.0 ? 0.0 : l0;
    l1 = l1 < 0.0 ? 0.0 : l1;
    l2 = l2 < 0.0 ? 0.0 : l2;
    const double sum = l0 + l1 + l2;
    const double y = (l0 * a[1] + l1 * b[1] + l2 * c[1]) / sum;
    return (float)fabs(y - (double)s->y);
}

/* Signed squared distance from p to the polygon outline in (x, z): negative inside. */
static float signed_dist2_to_poly(const float* poly, int n, const float* p)
{
    float dmin = FLT_MAX;
    int inside = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        const float* vi = &poly[i * 3];
        const float* vj = &poly[j * 3];
        if (((vi[2] > p[2]) != (vj[2] > p[2])) && (p[0] < (vj[0] - vi[0]) * (p[2] - vi[2]) / (vj[2] - vi[2]) + vi[0]))
            inside = !inside;
        dmin = nb_minf(dmin, dist2_pt_seg_xz(p, vj, vi));
    }
    return inside ? -dmin : dmin;
}

/* The polygon's smallest width: over its edges, the largest distance of another vertex from the edge, minimised.
 * Slivers narrower than two sample spacings get no interior samples. */
static float poly_min_extent(const float* poly, int n)
{
    float min_dist = FLT_MAX;
    for (int i = 0; i < n; ++i) {
        const int ni = (i + 1) % n;
        float max_edge_dist = 0.0f;
        for (int j = 0; j < n; ++j)
            if (j != i && j != ni)
                max_edge_dist = nb_maxf(max_edge_dist, dist2_pt_seg_xz(&poly[j * 3], &poly[i * 3], &poly[ni * 3]));
        min_dist = nb_minf(min_dist, max_edge_dist);
    }
    return sqrtf(min_dist);
}

/* A fixed pseudo-random offset in [-1, 1] per sample index: grid samples would otherwise be exactly cocircular
 * and collinear with axis-aligned edges (same hash family as the reference, so the same samples win ties). */
static inline float jitter(uint32_t i, uint32_t k) { return (float)((i * k) & 0xffffu) / 65535.0f * 2.0f - 1.0f; }

/* Polygon p's vertices relative to the mesh origin in world units; returns the vertex count. */
static int poly_rel_verts(const nb_poly_mesh* mesh, const uint16_t* p, float* out)
{
    int n = 0;
    for (; n < mesh->nvp && p[n] != NB_MESH_NULL_IDX; ++n) {
        const uint16_t* v = &mesh->verts[p[n] * 3];
        out[n * 3 + 0] = (float)v[0] * mesh->cell_size;
        out[n * 3 + 1] = (float)v[1] * mesh->cell_height;
        out[n * 3 + 2] = (float)v[2] * mesh->cell_size;
    }
    return n;
}

/* The interior sample grid of a polygon: x in [x0, x1), z in [z0, z1), in multiples of sample_dist. */
static void sample_grid(const float* poly, int n, float sd, int g[4])
{
    float lo[2] = { poly[0], poly[2] }, hi[2] = { poly[0], poly[2] };
    for (int i = 1; i < n; ++i) {
        lo[0] = nb_minf(lo[0], poly[i * 3 + 0]);
        lo[1] = nb_minf(lo[1], poly[i * 3 + 2]);
        hi[0] = nb_maxf(hi[0], poly[i * 3 + 0]);
        hi[1] = nb_maxf(hi[1], poly[i * 3 + 2]);
    }
    g[0] = (int)floorf(lo[0] / sd);
    g[1] = (int)ceilf(hi[0] / sd);
    g[2] = (int)floorf(lo[1] / sd);
    g[3] = (int)ceilf(hi[1] / sd);
}

/* Cell bounds of the height patch of polygon p (one cell of margin, clipped to the grid): x, z, width, height. */
static void patch_bounds(const nb_poly_mesh* mesh, const uint16_t* p, int grid_w, int grid_h, int b[4])
{
    int xmin = INT32_MAX, xmax = 0, zmin = INT32_MAX, zmax = 0;
    for (int j = 0; j < mesh->nvp && p[j] != NB_MESH_NULL_IDX; ++j) {
        const uint16_t* v = &mesh->verts[p[j] * 3];
        xmin = nb_mini(xmin, v[0]);
        xmax = nb_maxi(xmax, v[0]);
        zmin = nb_mini(zmin, v[2]);
        zmax = nb_maxi(zmax, v[2]);
    }
    xmin = nb_maxi(0, xmin - 1);
    xmax = nb_mini(grid_w, xmax + 1);
    zmin = nb_maxi(0, zmin - 1);
    zmax = nb_mini(grid_h, zmax + 1);
    b[0] = xmin;
    b[1] = zmin;
    b[2] = nb_maxi(0, xmax - xmin);
    b[3] = nb_maxi(0, zmax - zmin);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Voxel floors under a polygon                                                                                */
/* ---------------------------------------------------------------------------------------------------------- */

static inline void push3(int32_t* q, int* n, int x, int z, int i)
{
    q[*n * 3 + 0] = x;
    q[*n * 3 + 1] = z;
    q[*n * 3 + 2] = i;
    ++*n;
}

static inline int dir_towards(int dx, int dz) { return dx < 0 ? 0 : dz > 0 ? 1 : dx > 0 ? 2 : 3; }

/* When the polygon's own region has no span under it (or the region is unknown), start from the span nearest in
 * height to one of its corners and walk, depth first, to the polygon's centre cell: the centre is surely inside
 * the polygon and on its storey, so the flood that follows starts there. Returns the queue length (0 or 1). */
static int seed_from_centre(work* w, const nb_poly_mesh* mesh, const uint16_t* p, int npoly)
{
    static const int offs[9][2] = { { 0, 0 }, { -1, -1 }, { 0, -1 }, { 1, -1 }, { 1, 0 },
                                    { 1, 1 }, { 0, 1 }, { -1, 1 }, { -1, 0 } };
    const nb_compact_heightfield* chf = w->chf;
    const int bs = w->border, cw = chf->width;
    int sx = 0, sz = 0, si = -1, dmin = UNSET_HEIGHT;
    for (int j = 0; j < npoly && dmin > 0; ++j) {
        const uint16_t* v = &mesh->verts[p[j] * 3];
        for (int k = 0; k < 9 && dmin > 0; ++k) {
            const int ax = v[0] + offs[k][0], az = v[2] + offs[k][1];
            if (ax < w->hx || ax >= w->hx + w->hw || az < w->hz || az >= w->hz + w->hh)
                continue;
            const nb_compact_cell c = chf->cells[(ax + bs) + (az + bs) * cw];
            for (uint32_t i = c.index; i < c.index + c.count && dmin > 0; ++i) {
                const int d = nb_absi((int)v[1] - (int)chf->spans[i].y);
                if (d < dmin) {
                    sx = ax;
                    sz = az;
                    si = (int)i;
                    dmin = d;
                }
            }
        }
    }
    if (si < 0)
        return 0;
    int pcx = 0, pcz = 0;
    for (int j = 0; j < npoly; ++j) {
        pcx += mesh->verts[p[j] * 3 + 0];
        pcz += mesh->verts[p[j] * 3 + 2];
    }
    pcx /= npoly;
    pcz /= npoly;

    /* heights doubles as the visited mark (0 = not yet) during the walk */
    memset(w->heights, 0, (size_t)w->hw * (size_t)w->hh * sizeof(uint16_t));
    int32_t* q = w->queue;
    int n = 0;
    push3(q, &n, sx, sz, si);
    int cx = sx, cz = sz, ci = si;
    while (n > 0) {
        --n;
        cx = q[n * 3 + 0];
        cz = q[n * 3 + 1];
        ci = q[n * 3 + 2];
        if (cx == pcx && cz == pcz)
            break;
        /* Push the direction straight at the centre last so that it is explored first. The walk must keep its
         * trail (not just step towards the centre): simplified outlines can leave a dead end on the way. */
        const int direct = cx == pcx ? dir_towards(0, pcz > cz ? 1 : -1) : dir_towards(pcx > cx ? 1 : -1, 0);
        int order[4] = { 0, 1, 2, 3 };
        order[direct] = 3;
        order[3] = direct;
        const nb_compact_span* cs = &chf->spans[ci];
        for (int k = 0; k < 4; ++k) {
            const int dir = order[k];
            const int con = nb_span_con(cs, dir);
            if (con == NB_NOT_CONNECTED)
                continue;
            const int nx = cx + nb_dir_offset_x(dir), nz = cz + nb_dir_offset_z(dir);
            const int hx = nx - w->hx, hz = nz - w->hz;
            if (hx < 0 || hx >= w->hw || hz < 0 || hz >= w->hh || w->heights[hx + hz * w->hw] != 0)
                continue;
            w->heights[hx + hz * w->hw] = 1;
            push3(q, &n, nx, nz, (int)chf->cells[(nx + bs) + (nz + bs) * cw].index + con);
        }
    }
    memset(w->heights, 0xff, (size_t)w->hw * (size_t)w->hh * sizeof(uint16_t));
    w->heights[(cx - w->hx) + (cz - w->hz) * w->hw] = chf->spans[ci].y;
    n = 0;
    push3(q, &n, cx + bs, cz + bs, ci);
    return n;
}

/* Fills the height patch with the voxel floors under polygon p. The polygon's own region is copied first; its
 * spans on the region outline then seed a breadth-first flood over linked spans into the cells still unknown.
 * Because the flood only leaves the region through its outline, a floor stacked above or below the polygon is
 * never picked up.
 * Only outline spans next to an unknown cell of the patch can fill anything, so only those are queued (in the
 * same scan order, so the flood comes out the same); a patch covered by its region needs no flood at all. */
static void fill_heights(work* w, const nb_poly_mesh* mesh, const uint16_t* p, int npoly, uint16_t region)
{
    const nb_compact_heightfield* chf = w->chf;
    const int bs = w->border, cw = chf->width, pw = w->hw, ph = w->hh;
    uint16_t* hts = w->heights;
    memset(hts, 0xff, (size_t)pw * (size_t)ph * sizeof(uint16_t));
    int32_t* q = w->queue;
    int n = 0;
    int empty = 1, holes = 0;
    if (region != 0) {
        for (int hz = 0; hz < ph; ++hz) {
            const nb_compact_cell* row = &chf->cells[(w->hz + hz + bs) * cw + w->hx + bs];
            for (int hx = 0; hx < pw; ++hx) {
                const nb_compact_cell c = row[hx];
                int found = 0;
                for (uint32_t i = c.index; i < c.index + c.count; ++i)
                    if (chf->spans[i].reg == region) {
                        hts[hx + hz * pw] = chf->spans[i].y;
                        found = 1;
                        break;
                    }
                empty &= !found;
                holes |= !found;
            }
        }
        for (int hz = 0; hz < ph && holes && !empty; ++hz) {
            const int z = w->hz + hz + bs;
            for (int hx = 0; hx < pw; ++hx) {
                if (hts[hx + hz * pw] == UNSET_HEIGHT)
                    continue;
                if (!((hx > 0 && hts[hx - 1 + hz * pw] == UNSET_HEIGHT) ||
                      (hx + 1 < pw && hts[hx + 1 + hz * pw] == UNSET_HEIGHT) ||
                      (hz > 0 && hts[hx + (hz - 1) * pw] == UNSET_HEIGHT) ||
                      (hz + 1 < ph && hts[hx + (hz + 1) * pw] == UNSET_HEIGHT)))
                    continue;
                const int x = w->hx + hx + bs;
                const nb_compact_cell c = chf->cells[x + z * cw];
                for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                    const nb_compact_span* s = &chf->spans[i];
                    if (s->reg != region)
                        continue;
                    for (int dir = 0; dir < 4; ++dir) {
                        const int con = nb_span_con(s, dir);
                        if (con == NB_NOT_CONNECTED)
                            continue;
                        const int ncol = (x + nb_dir_offset_x(dir)) + (z + nb_dir_offset_z(dir)) * cw;
                        if (chf->spans[chf->cells[ncol].index + (uint32_t)con].reg != region) {
                            push3(q, &n, x, z, (int)i);
                            break;
                        }
                    }
                    break;
                }
            }
        }
    }
    if (empty)
        n = seed_from_centre(w, mesh, p, npoly);

    for (int head = 0; head < n; ++head) {
        const int cx = q[head * 3 + 0], cz = q[head * 3 + 1];
        const nb_compact_span* cs = &chf->spans[q[head * 3 + 2]];
        for (int dir = 0; dir < 4; ++dir) {
            const int con = nb_span_con(cs, dir);
            if (con == NB_NOT_CONNECTED)
                continue;
            const int ax = cx + nb_dir_offset_x(dir), az = cz + nb_dir_offset_z(dir);
            const int hx = ax - w->hx - bs, hz = az - w->hz - bs;
            if (hx < 0 || hx >= w->hw || hz < 0 || hz >= w->hh || w->heights[hx + hz * w->hw] != UNSET_HEIGHT)
                continue;
            const uint32_t ai = chf->cells[ax + az * cw].index + (uint32_t)con;
            w->heights[hx + hz * w->hw] = chf->spans[ai].y;
            push3(q, &n, ax, az, (int)ai);
        }
    }
}

/* The voxel floor (cells) under (fx, fz). A cell the floods did not reach takes the floor closest to fy among the
 * nearest ring of known cells, up to search_radius rings out; failing that, fy itself. */
static float floor_at(const work* w, float fx, float fy, float fz)
{
    if (w->hw <= 0 || w->hh <= 0)
        return roundf(fy / w->ch);
    const int ix = nb_clampi((int)floorf(fx * w->ics + 0.01f) - w->hx, 0, w->hw - 1);
    const int iz = nb_clampi((int)floorf(fz * w->ics + 0.01f) - w->hz, 0, w->hh - 1);
    const uint16_t h = w->heights[ix + iz * w->hw];
    if (h != UNSET_HEIGHT)
        return (float)h;
    int best = -1;
    float dmin = FLT_MAX;
    for (int r = 1; r <= w->search_radius && best < 0; ++r) {
        for (int dz = -r; dz <= r; ++dz) {
            const int step = (dz == -r || dz == r) ? 1 : 2 * r; /* the ring: full rows at the ends, two cells between */
            for (int dx = -r; dx <= r; dx += step) {
                const int x = ix + dx, z = iz + dz;
                if (x < 0 || z < 0 || x >= w->hw || z >= w->hh)
                    continue;
                const uint16_t nh = w->heights[x + z * w->hw];
                if (nh == UNSET_HEIGHT)
                    continue;
                const float d = fabsf((float)nh * w->ch - fy);
                if (d < dmin) {
                    dmin = d;
                    best = nh;
                }
            }
        }
    }
    return best >= 0 ? (float)best : roundf(fy / w->ch);
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Triangulation                                                                                               */
/* ---------------------------------------------------------------------------------------------------------- */

static inline const float* vtx(const work* w, int i) { return &w->verts[i * 3]; }

static inline void mark_dirty(work* w, int t)
{
    if (!w->tris[t].dirty) {
        w->tris[t].dirty = 1;
        w->dirty[w->ndirty++] = t;
    }
}

static inline void push_edge(work* w, int t, int e)
{
    if (w->tris[t].n[e] < 0 || (w->tris[t].queued & (1u << e)))
        return;
    w->tris[t].queued |= (uint8_t)(1u << e);
    w->stack[w->nstack++] = t * 4 + e;
}

static int add_tri(work* w, int a, int b, int c)
{
    const int t = w->ntris++;
    dtri* T = &w->tris[t];
    T->v[0] = a;
    T->v[1] = b;
    T->v[2] = c;
    T->n[0] = T->n[1] = T->n[2] = -1;
    T->head = T->best = -1;
    T->best_err = 0.0f;
    T->dirty = T->queued = 0;
    return t;
}

/* In triangle t, points the edge a -> b at neighbour nb. */
static void set_neighbour(work* w, int t, int a, int b, int nb)
{
    dtri* T = &w->tris[t];
    for (int e = 0; e < 3; ++e)
        if (T->v[e] == a && T->v[(e + 1) % 3] == b) {
            T->n[e] = nb;
            return;
        }
}

/* The first triangulation, of the outline only: start from the corner ear with the shortest perimeter, then
 * zip along the outline from both ends, each time taking the side that makes the shorter new triangle. For long
 * tessellated straight edges this gives better triangles than a Delaunay triangulation would. */
static void triangulate_hull(work* w, int nin)
{
    const int nh = w->nhull;
    const int* hull = w->hull;
    int start = 0, left = 1, right = nh - 1;
    float dmin = FLT_MAX;
    for (int i = 0; i < nh; ++i) {
        if (hull[i] >= nin)
            continue; /* only corners are ears; an edge sample's "ear" is flat */
        const int pi = (i + nh - 1) % nh, ni = (i + 1) % nh;
        const float* pv = vtx(w, hull[pi]);
        const float* cv = vtx(w, hull[i]);
        const float* nv = vtx(w, hull[ni]);
        const float d = dist2_xz(pv, cv) + dist2_xz(cv, nv) + dist2_xz(nv, pv);
        if (d < dmin) {
            start = i;
            left = ni;
            right = pi;
            dmin = d;
        }
    }
    w->ntris = 0;
    int open_tri = add_tri(w, hull[start], hull[left], hull[right]);
    int open_edge = 1; /* left -> right faces the part still to triangulate */
    while ((left + 1) % nh != right) {
        const int nleft = (left + 1) % nh, nright = (right + nh - 1) % nh;
        const float* cvl = vtx(w, hull[left]);
        const float* nvl = vtx(w, hull[nleft]);
        const float* cvr = vtx(w, hull[right]);
        const float* nvr = vtx(w, hull[nright]);
        const float dleft = dist2_xz(cvl, nvl) + dist2_xz(nvl, cvr);
        const float dright = dist2_xz(cvr, nvr) + dist2_xz(cvl, nvr);
        int t;
        if (dleft < dright) {
            t = add_tri(w, hull[left], hull[nleft], hull[right]);
            w->tris[t].n[2] = open_tri;
            w->tris[open_tri].n[open_edge] = t;
            open_tri = t;
            open_edge = 1;
            left = nleft;
        } else {
            t = add_tri(w, hull[left], hull[nright], hull[right]);
            w->tris[t].n[2] = open_tri;
            w->tris[open_tri].n[open_edge] = t;
            open_tri = t;
            open_edge = 0;
            right = nright;
        }
    }
}

/* Moves the samples of list `head` into the triangle of `slots` (k of them) that holds each best. */
static void distribute(work* w, int head, const int* slots, int k)
{
    while (head >= 0) {
        dsample* s = &w->samples[head];
        const int next = s->next;
        const float p[3] = { s->x, s->y, s->z };
        int best = slots[0];
        double best_score = -DBL_MAX;
        for (int j = 0; j < k; ++j) {
            const double sc = inside_score(w, &w->tris[slots[j]], p);
            if (sc > best_score) {
                best_score = sc;
                best = slots[j];
            }
        }
        s->tri = best;
        s->next = w->tris[best].head;
        w->tris[best].head = head;
        head = next;
    }
}

/* Appends list b to list a and returns the joined head. */
static int join_lists(work* w, int a, int b)
{
    if (a < 0)
        return b;
    int i = a;
    while (w->samples[i].next >= 0)
        i = w->samples[i].next;
    w->samples[i].next = b;
    return a;
}

/* Whether edge e of triangle t should flip: the vertex across it lies inside t's circumcircle, and the flip
 * leaves two properly wound triangles. */
static int edge_illegal(const work* w, int t, int e)
{
    const dtri* T = &w->tris[t];
    const int u = T->n[e];
    if (u < 0)
        return 0;
    const int a = T->v[e], b = T->v[(e + 1) % 3], c = T->v[(e + 2) % 3];
    const dtri* U = &w->tris[u];
    int d = U->v[0];
    for (int k = 0; k < 3; ++k)
        if (U->v[k] != a && U->v[k] != b)
            d = U->v[k];
    if (!in_circumcircle(w, vtx(w, c), vtx(w, a), vtx(w, b), vtx(w, d)))
        return 0;
    return orient(w, vtx(w, c), vtx(w, a), vtx(w, d)) > 0.0 && orient(w, vtx(w, c), vtx(w, d), vtx(w, b)) > 0.0;
}

/* Flips edge e (a -> b) of t = (a, b, c) with its neighbour u = (b, a, d): t becomes (c, a, d), u becomes
 * (c, d, b). With c the vertex just inserted, both keep it first and their outer edge at index 1. */
static void flip(work* w, int t, int e)
{
    dtri* T = &w->tris[t];
    const int u = T->n[e];
    dtri* U = &w->tris[u];
    const int a = T->v[e], b = T->v[(e + 1) % 3], c = T->v[(e + 2) % 3];
    int j = 0;
    while (!(U->v[j] == b && U->v[(j + 1) % 3] == a))
        ++j;
    const int d = U->v[(j + 2) % 3];
    const int n_bc = T->n[(e + 1) % 3], n_ca = T->n[(e + 2) % 3];
    const int n_ad = U->n[(j + 1) % 3], n_db = U->n[(j + 2) % 3];
    int list = join_lists(w, T->head, U->head);

    T->v[0] = c, T->v[1] = a, T->v[2] = d;
    T->n[0] = n_ca, T->n[1] = n_ad, T->n[2] = u;
    U->v[0] = c, U->v[1] = d, U->v[2] = b;
    U->n[0] = t, U->n[1] = n_db, U->n[2] = n_bc;
    T->head = U->head = -1;
    if (n_ad >= 0)
        set_neighbour(w, n_ad, d, a, t);
    if (n_bc >= 0)
        set_neighbour(w, n_bc, c, b, u);

    /* samples go to the side of the new diagonal c -> d they lie on: (c, a, d) is to its right */
    const float* vc = vtx(w, c);
    const float* vd = vtx(w, d);
    while (list >= 0) {
        dsample* s = &w->samples[list];
        const int next = s->next;
        const float p[3] = { s->x, s->y, s->z };
        const int dst = orient(w, vc, vd, p) < 0.0 ? t : u;
        s->tri = dst;
        s->next = w->tris[dst].head;
        w->tris[dst].head = list;
        list = next;
    }
    mark_dirty(w, t);
    mark_dirty(w, u);
}

/* Lawson's flip algorithm over the queued edges: flip every edge whose neighbour vertex is inside the
 * circumcircle, re-queueing the four outer edges of each flipped quad, until none is left. */
static void flip_queued(work* w)
{
    int flips = 0;
    while (w->nstack > 0) {
        const int entry = w->stack[--w->nstack];
        const int t = entry >> 2, e = entry & 3;
        w->tris[t].queued &= (uint8_t)~(1u << e);
        if (!edge_illegal(w, t, e) || flips >= MAX_FLIPS)
            continue;
        const int u = w->tris[t].n[e];
        flip(w, t, e);
        ++flips;
        push_edge(w, t, 0);
        push_edge(w, t, 1);
        push_edge(w, u, 1);
        push_edge(w, u, 2);
    }
}

/* Makes the outline triangulation Delaunay before the first interior vertex goes in: from then on every insertion
 * keeps it Delaunay, which is what the reference's rebuild after each sample produces. */
static void make_delaunay(work* w)
{
    for (int t = 0; t < w->ntris; ++t)
        for (int e = 0; e < 3; ++e)
            if (w->tris[t].n[e] > t)
                push_edge(w, t, e);
    flip_queued(w);
}

/* Replaces the triangles in slots[] by the fan around new vertex p through ring[] (k vertices, wound like the
 * polygon); outer[j] is the neighbour across ring[j] -> ring[j+1]. */
static void make_fan(work* w, int p, const int* ring, const int* outer, const int* slots, int k)
{
    for (int j = 0; j < k; ++j) {
        dtri* T = &w->tris[slots[j]];
        T->v[0] = p;
        T->v[1] = ring[j];
        T->v[2] = ring[(j + 1) % k];
        T->n[0] = slots[(j + k - 1) % k];
        T->n[1] = outer[j];
        T->n[2] = slots[(j + 1) % k];
        T->head = -1;
        if (outer[j] >= 0)
            set_neighbour(w, outer[j], ring[(j + 1) % k], ring[j], slots[j]);
        mark_dirty(w, slots[j]);
    }
}

/* Inserts a new vertex at pos, inside triangle t: split t (or, when pos sits on an interior edge, the two triangles
 * beside that edge), move the samples of the replaced triangles into the new ones (except sample si, which
 * becomes the vertex), then restore the Delaunay property by flipping the edges facing the new vertex. */
static void insert_vertex(work* w, int t, const float* pos, int si)
{
    const int p = w->nverts++;
    memcpy(&w->verts[p * 3], pos, 3 * sizeof(float));
    dtri* T = &w->tris[t];
    /* the edge of t nearest to p, as a squared distance relative to the edge's length */
    int near_e = 0;
    double near_d = DBL_MAX;
    for (int e = 0; e < 3; ++e) {
        const float* a = vtx(w, T->v[e]);
        const float* b = vtx(w, T->v[(e + 1) % 3]);
        const double o = orient(w, a, b, vtx(w, p));
        const double len2 = (double)dist2_xz(a, b);
        const double rel = len2 > 0.0 ? o * o / (len2 * len2) : 0.0;
        if (rel < near_d) {
            near_d = rel;
            near_e = e;
        }
    }
    /* the sample leaves its triangle's list */
    int list = -1;
    for (int i = T->head; i >= 0;) {
        const int next = w->samples[i].next;
        if (i != si) {
            w->samples[i].next = list;
            list = i;
        }
        i = next;
    }

    int slots[4], ring[4], outer[4], k;
    if (near_d < 1e-12 && T->n[near_e] >= 0) {
        /* on the edge x -> y between t = (x, y, z) and u = (y, x, q): four triangles around p */
        const int e = near_e, u = T->n[e];
        dtri* U = &w->tris[u];
        int j = 0;
        while (!(U->v[j] == T->v[(e + 1) % 3] && U->v[(j + 1) % 3] == T->v[e]))
            ++j;
        ring[0] = T->v[(e + 1) % 3];
        ring[1] = T->v[(e + 2) % 3];
        ring[2] = T->v[e];
        ring[3] = U->v[(j + 2) % 3];
        outer[0] = T->n[(e + 1) % 3];
        outer[1] = T->n[(e + 2) % 3];
        outer[2] = U->n[(j + 1) % 3];
        outer[3] = U->n[(j + 2) % 3];
        list = join_lists(w, list, U->head);
        slots[0] = t;
        slots[1] = u;
        k = 4;
    } else {
        for (int e = 0; e < 3; ++e) {
            ring[e] = T->v[e];
            outer[e] = T->n[e];
        }
        slots[0] = t;
        k = 3;
    }
    for (int j = 1 + (k == 4); j < k; ++j)
        slots[j] = add_tri(w, 0, 0, 0);
    make_fan(w, p, ring, outer, slots, k);
    distribute(w, list, slots, k);
    for (int j = 0; j < k; ++j)
        push_edge(w, slots[j], 1);
    flip_queued(w);
}

/* Turns candidate sample si into a vertex of the triangulation. */
static void insert_sample(work* w, int si)
{
    dsample* s = &w->samples[si];
    const float pos[3] = { s->x, s->y, s->z };
    const int t = s->tri;
    s->tri = -1;
    insert_vertex(w, t, pos, si);
}

/* Measures the samples of every changed triangle again and refreshes each one's worst sample. */
static void measure_dirty(work* w)
{
    for (int k = 0; k < w->ndirty; ++k) {
        dtri* T = &w->tris[w->dirty[k]];
        T->dirty = 0;
        T->best = -1;
        T->best_err = 0.0f;
        for (int i = T->head; i >= 0; i = w->samples[i].next) {
            dsample* s = &w->samples[i];
            s->err = sample_error(w, T, s);
            if (s->err > T->best_err || (s->err == T->best_err && T->best >= 0 && i < T->best)) {
                T->best_err = s->err;
                T->best = i;
            }
        }
    }
    w->ndirty = 0;
}

/* ---------------------------------------------------------------------------------------------------------- */
/* One polygon                                                                                                 */
/* ---------------------------------------------------------------------------------------------------------- */

/* Samples polygon edges every sample_dist and keeps, by Douglas-Peucker refinement, the samples needed to stay
 * within max_error of the floors; fills verts (after the corners) and the outline in polygon order. */
static void tessellate_edges(work* w)
{
    const int nin = w->npoly;
    const float sd = w->sample_dist;
    w->nhull = 0;
    for (int i = 0, j = nin - 1; i < nin; j = i++) {
        const float* vj = &w->poly[j * 3];
        const float* vi = &w->poly[i * 3];
        /* Both polygons beside an edge must sample it identically or the detail surfaces would not meet: walk
         * every edge from its lexicographically smaller end. */
        int swapped = 0;
        if (fabsf(vj[0] - vi[0]) < 1e-6f ? vj[2] > vi[2] : vj[0] > vi[0]) {
            const float* tmp = vj;
            vj = vi;
            vi = tmp;
            swapped = 1;
        }
        const float dx = vi[0] - vj[0], dy = vi[1] - vj[1], dz = vi[2] - vj[2];
        const float d = sqrtf(dx * dx + dz * dz);
        int nn = 1 + (int)floorf(d / sd);
        if (nn >= MAX_EDGE_SAMPLES)
            nn = MAX_EDGE_SAMPLES - 1;
        if (w->nverts + nn >= MAX_VERTS)
            nn = MAX_VERTS - 1 - w->nverts;
        if (nn < 1)
            nn = 1;
        float edge[MAX_EDGE_SAMPLES * 3];
        for (int k = 0; k <= nn; ++k) {
            const float u = (float)k / (float)nn;
            float* pos = &edge[k * 3];
            pos[0] = vj[0] + dx * u;
            pos[1] = vj[1] + dy * u;
            pos[2] = vj[2] + dz * u;
            pos[1] = floor_at(w, pos[0], pos[1], pos[2]) * w->ch;
        }
        int idx[MAX_EDGE_SAMPLES] = { 0, nn };
        int nidx = 2;
        const float max_err2 = w->max_error * w->max_error;
        for (int k = 0; k < nidx - 1;) {
            const int a = idx[k], b = idx[k + 1];
            float maxd = 0.0f;
            int maxi = -1;
            for (int m = a + 1; m < b; ++m) {
                const float dev = dist2_pt_seg(&edge[m * 3], &edge[a * 3], &edge[b * 3]);
                if (dev > maxd) {
                    maxd = dev;
                    maxi = m;
                }
            }
            if (maxi != -1 && maxd > max_err2) {
                memmove(&idx[k + 2], &idx[k + 1], sizeof(int) * (size_t)(nidx - k - 1));
                idx[k + 1] = maxi;
                ++nidx;
            } else {
                ++k;
            }
        }
        w->hull[w->nhull++] = j;
        for (int m = 1; m < nidx - 1; ++m) {
            const float* v = &edge[idx[swapped ? nidx - 1 - m : m] * 3];
            memcpy(&w->verts[w->nverts * 3], v, 3 * sizeof(float));
            w->hull[w->nhull++] = w->nverts++;
        }
    }
}

/* The candidate interior samples: a sample_dist grid over the polygon's bounds, keeping points inside with a
 * squared distance to the outline of at least sample_dist / 2 (the reference's rule, squared distance and all),
 * each with the voxel floor under it and a small fixed jitter. */
static void gather_samples(work* w)
{
    const float sd = w->sample_dist;
    int g[4];
    sample_grid(w->poly, w->npoly, sd, g);
    float ylo = w->poly[1], yhi = w->poly[1];
    for (int i = 1; i < w->npoly; ++i) {
        ylo = nb_minf(ylo, w->poly[i * 3 + 1]);
        yhi = nb_maxf(yhi, w->poly[i * 3 + 1]);
    }
    w->nsamples = 0;
    for (int z = g[2]; z < g[3]; ++z) {
        for (int x = g[0]; x < g[1]; ++x) {
            const float pt[3] = { (float)x * sd, (yhi + ylo) * 0.5f, (float)z * sd };
            if (signed_dist2_to_poly(w->poly, w->npoly, pt) > -sd * 0.5f)
                continue;
            if (w->nsamples >= w->samples_cap)
                return; /* cannot happen: the capacity is the largest grid */
            const uint32_t n = (uint32_t)w->nsamples++;
            dsample* s = &w->samples[n];
            s->x = pt[0] + jitter(n, 0x8da6b343u) * w->cs * 0.1f;
            s->y = floor_at(w, pt[0], pt[1], pt[2]) * w->ch;
            s->z = pt[2] + jitter(n, 0xd8163841u) * w->cs * 0.1f;
            s->err = 0.0f;
            s->tri = -1;
            s->next = -1;
        }
    }
}

/* Walks from triangle t towards p, crossing an edge p lies beyond, until p is inside. Neighbouring grid samples
 * are a step or two apart. Returns -1 when the walk leaves the outline or wanders (a walk may circle in a
 * triangulation that is not Delaunay, as the first one is): the caller then searches every triangle. */
static int walk_to(const work* w, int t, const float* p)
{
    for (int steps = 0; steps <= w->ntris; ++steps) {
        const dtri* T = &w->tris[t];
        int next = -1;
        for (int e = 0; e < 3 && next < 0; ++e)
            if (orient(w, vtx(w, T->v[e]), vtx(w, T->v[(e + 1) % 3]), p) < 0.0)
                next = T->n[e] >= 0 ? T->n[e] : -2;
        if (next == -1)
            return t;
        if (next == -2)
            return -1;
        t = next;
    }
    return -1;
}

/* Drops every sample into the triangle that holds it (samples outside all of them are never added). */
static void bucket_samples(work* w)
{
    int last = 0;
    for (int i = 0; i < w->nsamples; ++i) {
        dsample* s = &w->samples[i];
        const float p[3] = { s->x, s->y, s->z };
        int best = walk_to(w, last, p);
        if (best < 0 || inside_score(w, &w->tris[best], p) < -INSIDE_EPS) {
            best = -1;
            double best_score = -INSIDE_EPS;
            for (int t = 0; t < w->ntris; ++t) {
                const double sc = inside_score(w, &w->tris[t], p);
                if (sc >= best_score) {
                    best_score = sc;
                    best = t;
                }
            }
        }
        if (best < 0)
            continue;
        last = best;
        s->tri = best;
        s->next = w->tris[best].head;
        w->tris[best].head = i;
    }
    w->ndirty = 0;
    for (int t = 0; t < w->ntris; ++t)
        mark_dirty(w, t);
    measure_dirty(w);
}

/* Builds the detail triangulation of the polygon in w->poly. */
static void build_poly(work* w)
{
    const int nin = w->npoly;
    memcpy(w->verts, w->poly, (size_t)nin * 3 * sizeof(float));
    w->nverts = nin;
    double area = 0.0;
    for (int i = 0, j = nin - 1; i < nin; j = i++)
        area += (double)w->poly[j * 3 + 0] * w->poly[i * 3 + 2] - (double)w->poly[i * 3 + 0] * w->poly[j * 3 + 2];
    w->sign = area < 0.0 ? -1.0 : 1.0;
    const float min_extent = poly_min_extent(w->poly, nin);

    if (w->sample_dist > 0.0f) {
        tessellate_edges(w);
    } else {
        for (int i = 0; i < nin; ++i)
            w->hull[i] = i;
        w->nhull = nin;
    }
    triangulate_hull(w, nin);
    w->nstack = 0;
    w->ndirty = 0;
    if (!(w->sample_dist > 0.0f) || min_extent < w->sample_dist * 2.0f)
        return;

    gather_samples(w);
    bucket_samples(w);
    int delaunay = 0;
    while (w->nverts < MAX_VERTS) {
        int best = -1;
        float best_err = 0.0f;
        for (int t = 0; t < w->ntris; ++t) {
            const dtri* T = &w->tris[t];
            if (T->best >= 0 && (T->best_err > best_err || (T->best_err == best_err && T->best < best))) {
                best_err = T->best_err;
                best = T->best;
            }
        }
        if (best < 0 || best_err <= w->max_error)
            break;
        if (!delaunay) {
            make_delaunay(w);
            delaunay = 1;
        }
        insert_sample(w, best);
        measure_dirty(w);
    }
}

/* ---------------------------------------------------------------------------------------------------------- */
/* The stage                                                                                                   */
/* ---------------------------------------------------------------------------------------------------------- */

/* Grows an output array to hold `need` elements (doubling). */
static int grow(nb_context* ctx, void** data, size_t* cap, size_t need, size_t elem, size_t used)
{
    if (need <= *cap)
        return 1;
    size_t ncap = *cap * 2;
    if (ncap < need)
        ncap = need;
    void* p = nb_alloc(ctx, ncap * elem);
    if (!p)
        return 0;
    if (used)
        memcpy(p, *data, used * elem);
    nb_free(ctx, *data);
    *data = p;
    *cap = ncap;
    return 1;
}

nb_status nb_build_poly_mesh_detail(nb_context* ctx, const nb_poly_mesh* mesh, const nb_compact_heightfield* chf,
                                    float sample_dist, float sample_max_error, nb_poly_mesh_detail** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_build_poly_mesh_detail: ctx is NULL");
    static const char* fn = "nb_build_poly_mesh_detail";
    if (out)
        *out = NULL;
    if (!out || !mesh || !chf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !out ? "out" : !mesh ? "mesh" : "chf");
    if (mesh->npolys < 0 || mesh->nverts < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: mesh counts must be >= 0 (npolys %d, nverts %d)", fn,
                       mesh->npolys, mesh->nverts);
    if (mesh->npolys > 0 && (!mesh->polys || !mesh->verts))
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: mesh.%s is NULL", fn, !mesh->polys ? "polys" : "verts");
    if (mesh->npolys > 0 && (mesh->nvp < 3 || mesh->nvp > NB_MAX_VERTS_PER_POLY))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: mesh.nvp must be 3..%d (got %d)", fn, NB_MAX_VERTS_PER_POLY,
                       mesh->nvp);
    if (!isfinite(sample_dist) || sample_dist < 0.0f ||
        (sample_dist > 0.0f && sample_dist < 0.9f * chf->cell_size * 0.999f))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: sample_dist must be 0 or >= 0.9 cell_size (got %g)", fn,
                       sample_dist);
    if (!isfinite(sample_max_error) || sample_max_error < 0.0f)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: sample_max_error must be >= 0 (got %g)", fn, sample_max_error);
    if (!(chf->cell_size > 0.0f) || !(chf->cell_height > 0.0f) || !(mesh->cell_size > 0.0f) ||
        !(mesh->cell_height > 0.0f))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: cell sizes must be > 0", fn);

    const int nvp = mesh->nvp, npolys = mesh->npolys;
    const int bs = mesh->border_size > 0 ? mesh->border_size : 0;
    const int grid_w = chf->width - 2 * bs, grid_h = chf->height - 2 * bs;

    /* ---- sizes: the largest height patch and sample grid, output estimates; validate indices ---- */
    size_t max_patch = 1, max_grid = 1, poly_verts = 0;
    for (int i = 0; i < npolys; ++i) {
        const uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        int n = 0;
        for (; n < nvp && p[n] != NB_MESH_NULL_IDX; ++n)
            if (p[n] >= mesh->nverts)
                return nb_fail(ctx, NB_ERR_INDEX_RANGE, "%s: polygon %d uses vertex %u but the mesh has %d", fn, i,
                               (unsigned)p[n], mesh->nverts);
        if (n < 3)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: polygon %d has %d vertices (needs >= 3)", fn, i, n);
        poly_verts += (size_t)n;
        int b[4];
        patch_bounds(mesh, p, grid_w, grid_h, b);
        if ((size_t)b[2] * (size_t)b[3] > max_patch)
            max_patch = (size_t)b[2] * (size_t)b[3];
        if (sample_dist > 0.0f) {
            float poly[NB_MAX_VERTS_PER_POLY * 3];
            int g[4];
            sample_grid(poly, poly_rel_verts(mesh, p, poly), sample_dist, g);
            const size_t cells = (size_t)nb_maxi(0, g[1] - g[0]) * (size_t)nb_maxi(0, g[3] - g[2]);
            if (cells > max_grid)
                max_grid = cells;
        }
    }
    if (max_grid > (size_t)INT32_MAX / 2 || max_patch > (size_t)INT32_MAX / 8)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: a polygon is too large to sample (%zu samples, %zu cells)", fn,
                       max_grid, max_patch);

    nb_status st = NB_OK;
    void* scratch = NULL;
    nb_poly_mesh_detail* dm = (nb_poly_mesh_detail*)nb_calloc(ctx, 1, sizeof(*dm));
    if (!dm) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'dmesh'", fn);
        goto cleanup;
    }
    size_t vcap = poly_verts + poly_verts / 2 + 1, tcap = vcap * 2;
    dm->meshes = (uint32_t*)nb_alloc(ctx, (size_t)(npolys > 0 ? npolys : 1) * 4 * sizeof(uint32_t));
    dm->verts = (float*)nb_alloc(ctx, vcap * 3 * sizeof(float));
    dm->tris = (uint8_t*)nb_alloc(ctx, tcap * 4);
    if (!dm->meshes || !dm->verts || !dm->tris) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'meshes' (%d polygons, %zu vertices)", fn, npolys,
                     vcap);
        goto cleanup;
    }
    dm->nmeshes = npolys;

    /* ---- scratch: one block for every polygon ---- */
    const size_t work_size = (sizeof(work) + 15) & ~(size_t)15;
    const size_t samples_size = ((max_grid * sizeof(dsample)) + 15) & ~(size_t)15;
    const size_t queue_size = ((2 * max_patch + 2) * 3 * sizeof(int32_t) + 15) & ~(size_t)15;
    const size_t heights_size = max_patch * sizeof(uint16_t);
    scratch = nb_alloc(ctx, work_size + samples_size + queue_size + heights_size);
    if (!scratch) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'scratch' (%zu bytes)", fn,
                     work_size + samples_size + queue_size + heights_size);
        goto cleanup;
    }
    work* w = (work*)scratch;
    memset(w, 0, sizeof(*w));
    w->samples = (dsample*)((char*)scratch + work_size);
    w->samples_cap = (int)max_grid;
    w->queue = (int32_t*)((char*)scratch + work_size + samples_size);
    w->heights = (uint16_t*)((char*)scratch + work_size + samples_size + queue_size);
    w->chf = chf;
    w->border = bs;
    w->cs = mesh->cell_size;
    w->ch = mesh->cell_height;
    w->ics = 1.0f / mesh->cell_size;
    w->sample_dist = sample_dist;
    w->max_error = sample_max_error;
    w->search_radius = nb_maxi(1, (int)ceilf(mesh->max_edge_error));

    /* ---- per polygon: floors, samples, triangulation, output ---- */
    for (int i = 0; i < npolys; ++i) {
        if ((i & 63) == 0 && (st = nb_report(ctx, NB_STAGE_DETAIL, (uint32_t)i, (uint32_t)npolys)) != NB_OK)
            goto cleanup;
        const uint16_t* p = &mesh->polys[(size_t)i * 2 * nvp];
        w->npoly = poly_rel_verts(mesh, p, w->poly);
        int b[4];
        patch_bounds(mesh, p, grid_w, grid_h, b);
        w->hx = b[0];
        w->hz = b[1];
        w->hw = b[2];
        w->hh = b[3];
        if (w->hw > 0 && w->hh > 0)
            fill_heights(w, mesh, p, w->npoly, mesh->regs ? mesh->regs[i] : 0);
        build_poly(w);

        if (!grow(ctx, (void**)&dm->verts, &vcap, (size_t)dm->nverts + (size_t)w->nverts, 3 * sizeof(float),
                  (size_t)dm->nverts) ||
            !grow(ctx, (void**)&dm->tris, &tcap, (size_t)dm->ntris + (size_t)w->ntris, 4, (size_t)dm->ntris)) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'verts' (%d) or 'tris' (%d)", fn,
                         dm->nverts + w->nverts, dm->ntris + w->ntris);
            goto cleanup;
        }
        uint32_t* m = &dm->meshes[(size_t)i * 4];
        m[0] = (uint32_t)dm->nverts;
        m[1] = (uint32_t)w->nverts;
        m[2] = (uint32_t)dm->ntris;
        m[3] = (uint32_t)w->ntris;
        for (int j = 0; j < w->nverts; ++j) {
            float* v = &dm->verts[((size_t)dm->nverts + (size_t)j) * 3];
            v[0] = mesh->bmin[0] + w->verts[j * 3 + 0];
            v[1] = mesh->bmin[1] + w->verts[j * 3 + 1];
            v[2] = mesh->bmin[2] + w->verts[j * 3 + 2];
        }
        dm->nverts += w->nverts;
        for (int j = 0; j < w->ntris; ++j) {
            const dtri* T = &w->tris[j];
            uint8_t* t = &dm->tris[((size_t)dm->ntris + (size_t)j) * 4];
            /* 2 bits per edge, 1 = the edge lies on the polygon outline: exactly the edges without a neighbour */
            t[0] = (uint8_t)T->v[0];
            t[1] = (uint8_t)T->v[1];
            t[2] = (uint8_t)T->v[2];
            t[3] = (uint8_t)((T->n[0] < 0 ? 1 : 0) | (T->n[1] < 0 ? 1 : 0) << 2 | (T->n[2] < 0 ? 1 : 0) << 4);
        }
        dm->ntris += w->ntris;
    }
    st = nb_report(ctx, NB_STAGE_DETAIL, (uint32_t)nb_maxi(npolys, 1), (uint32_t)nb_maxi(npolys, 1));

cleanup:
    nb_free(ctx, scratch);
    if (st != NB_OK) {
        nb_poly_mesh_detail_destroy(ctx, dm);
        return st;
    }
    *out = dm;
    return NB_OK;
}

void nb_poly_mesh_detail_destroy(nb_context* ctx, nb_poly_mesh_detail* dmesh)
{
    if (!dmesh)
        return;
    nb_free(ctx, dmesh->meshes);
    nb_free(ctx, dmesh->verts);
    nb_free(ctx, dmesh->tris);
    nb_free(ctx, dmesh);
}
