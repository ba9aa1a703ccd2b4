/* The navmesh: tiles on an (x, z) grid, each a parsed copy of its blob plus the links between polygons (inside the
 * tile, across tile borders, through off-mesh links). Adding a tile is all-or-nothing: every link it creates is
 * first collected, then every link array that must grow is allocated, and only then is anything changed. */
#include "navmesh_internal.h"

#include <math.h>

/* ---- slots and the position hash -------------------------------------------------------------------------- */

static uint32_t hash_pos(int32_t x, int32_t z, uint32_t mask)
{
    return ((uint32_t)x * 73856093u ^ (uint32_t)z * 19349663u) & mask;
}

static int32_t find_slot(const nb_navmesh* nav, int32_t x, int32_t z)
{
    for (int32_t s = nav->buckets[hash_pos(x, z, nav->bucket_mask)]; s >= 0; s = nav->tiles[s].next_in_bucket) {
        const nb_tile* t = &nav->tiles[s];
        if (t->v.tile_x == x && t->v.tile_z == z)
            return s;
    }
    return -1;
}

static uint32_t slot_of(const nb_navmesh* nav, const nb_tile* t) { return (uint32_t)(t - nav->tiles); }

const nb_tile* nb_navmesh_tile_at(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z)
{
    if (!nav)
        return NULL;
    const int32_t s = find_slot(nav, tile_x, tile_z);
    return s >= 0 ? &nav->tiles[s] : NULL;
}

const nb_tile* nb_navmesh_resolve(const nb_navmesh* nav, nb_poly_ref ref, uint32_t* poly)
{
    if (!nav || !ref)
        return NULL;
    const uint32_t slot = nb_ref_slot(nav, ref);
    if (slot == 0 || slot > nav->params.max_tiles)
        return NULL;
    const nb_tile* t = &nav->tiles[slot - 1];
    if (!t->data || t->salt != nb_ref_salt(nav, ref) || nb_ref_poly(ref) >= t->v.npolys)
        return NULL;
    if (poly)
        *poly = nb_ref_poly(ref);
    return t;
}

nb_poly_ref nb_navmesh_ref_of(const nb_navmesh* nav, const nb_tile* tile, uint32_t poly)
{
    return nb_make_ref(nav, tile->salt, slot_of(nav, tile) + 1, poly);
}

void nb_navmesh_tile_coords(const nb_navmesh* nav, const float pos[3], int32_t* tile_x, int32_t* tile_z)
{
    const float fx = floorf((pos[0] - nav->params.origin[0]) / nav->params.tile_width);
    const float fz = floorf((pos[2] - nav->params.origin[2]) / nav->params.tile_depth);
    /* Clamp so that a far-away (or non-finite) position cannot overflow the conversion. */
    *tile_x = fx >= 2147483520.0f ? INT32_MAX : (fx >= -2147483520.0f ? (int32_t)fx : INT32_MIN);
    *tile_z = fz >= 2147483520.0f ? INT32_MAX : (fz >= -2147483520.0f ? (int32_t)fz : INT32_MIN);
}

/* Grid neighbour across side (0 = -x, 1 = +z, 2 = +x, 3 = -z); the opposite side is (side + 2) & 3. */
static void side_offset(int side, int32_t* dx, int32_t* dz)
{
    *dx = side == 0 ? -1 : side == 2 ? 1 : 0;
    *dz = side == 3 ? -1 : side == 1 ? 1 : 0;
}

/* The slot of the tile at (x + dx, z + dz), dx and dz in -1..1; -1 when there is none. */
static int32_t offset_slot(const nb_navmesh* nav, int32_t x, int32_t z, int32_t dx, int32_t dz)
{
    /* Positions at the int32 limits have no neighbour beyond them. */
    if ((dx < 0 && x == INT32_MIN) || (dx > 0 && x == INT32_MAX) || (dz < 0 && z == INT32_MIN) ||
        (dz > 0 && z == INT32_MAX))
        return -1;
    return find_slot(nav, x + dx, z + dz);
}

/* The tile an off-mesh connection of tile v lands in, as an offset (dx, dz, each -1..1) from v: its own tile or one
 * of the eight around it, from where its end lies against v's footprint (bounds inclusive, as nb_tile_build
 * classifies it; the file stores only the axis an end overshoots most, and an end beyond a corner lands in the
 * diagonal tile). Returns 0 for an end two or more tiles away: a far connection (nav->far), landed by the grid. */
static int landing_offset(const nb_tile_view* v, const nb_offmesh_con* con, int32_t* dx, int32_t* dz)
{
    const float* e = con->pos + 3;
    const float w = v->bmax[0] - v->bmin[0], d = v->bmax[2] - v->bmin[2];
    if (!(e[0] >= v->bmin[0] - w && e[0] <= v->bmax[0] + w && e[2] >= v->bmin[2] - d && e[2] <= v->bmax[2] + d))
        return 0;
    *dx = e[0] < v->bmin[0] ? -1 : (e[0] > v->bmax[0] ? 1 : 0);
    *dz = e[2] < v->bmin[2] ? -1 : (e[2] > v->bmax[2] ? 1 : 0);
    return 1;
}

static int lands_at(const nb_tile_view* v, const nb_offmesh_con* con, int32_t dx, int32_t dz)
{
    int32_t lx, lz;
    return landing_offset(v, con, &lx, &lz) && lx == dx && lz == dz;
}

/* ---- create / destroy --------------------------------------------------------------------------------------- */

NB_COLD nb_status nb_navmesh_create(nb_context* ctx, const nb_navmesh_params* params, nb_navmesh** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_navmesh_create: ctx is NULL");
    static const char* fn = "nb_navmesh_create";
    if (!params || !out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !params ? "params" : "out");
    *out = NULL;
    for (int k = 0; k < 3; ++k)
        if (!isfinite(params->origin[k]))
            return nb_fail(ctx, NB_ERR_NONFINITE, "%s: origin.%c is not finite", fn, "xyz"[k]);
    if (!isfinite(params->tile_width) || !isfinite(params->tile_depth))
        return nb_fail(ctx, NB_ERR_NONFINITE, "%s: tile_width/tile_depth are not finite", fn);
    if (!(params->tile_width > 0.0f) || !(params->tile_depth > 0.0f))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: tile_width (%g) and tile_depth (%g) must be > 0", fn,
                       params->tile_width, params->tile_depth);
    static const char* names[5] = { "origin.x", "origin.y", "origin.z", "tile_width", "tile_depth" };
    for (int k = 0; k < 5; ++k) {
        const float v = k < 3 ? params->origin[k] : k == 3 ? params->tile_width : params->tile_depth;
        if (!(fabsf(v) <= NB_MAX_COORD))
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: %s (%g) is beyond %g (NB_MAX_COORD)", fn, names[k], v,
                           NB_MAX_COORD);
    }
    if (params->max_tiles > NB_MAX_TILES)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: max_tiles must be 0..%u (got %u)", fn, NB_MAX_TILES,
                       params->max_tiles);

    nb_navmesh* nav = (nb_navmesh*)nb_calloc(ctx, 1, sizeof(*nav));
    if (!nav)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'nav'", fn);
    nav->params = *params;
    if (nav->params.max_tiles == 0)
        nav->params.max_tiles = NB_MAX_TILES;
    const uint32_t n = nav->params.max_tiles;
    /* Slots 1..n: as many bits as n needs; the salt gets the rest (16 bits for one tile, 5 for 4095). */
    nav->tile_bits = 1;
    while ((1u << nav->tile_bits) <= n)
        ++nav->tile_bits;
    nav->salt_mask = (1u << (32 - NB_POLY_BITS - nav->tile_bits)) - 1;
    uint32_t buckets = 1;
    while (buckets < n / 2 + 1)
        buckets <<= 1;
    nav->bucket_mask = buckets - 1;
    nav->tiles = (nb_tile*)nb_calloc(ctx, n, sizeof(nb_tile));
    nav->buckets = (int32_t*)nb_alloc(ctx, buckets * sizeof(int32_t));
    if (!nav->tiles || !nav->buckets) {
        nb_free(ctx, nav->tiles);
        nb_free(ctx, nav->buckets);
        nb_free(ctx, nav);
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory '%s' (%u)", fn, "tiles", n);
    }
    for (uint32_t b = 0; b < buckets; ++b)
        nav->buckets[b] = -1;
    /* Free slots in ascending order, so the first tiles added take slots 1, 2, ... */
    for (uint32_t s = 0; s < n; ++s) {
        nav->tiles[s].salt = nav->tiles[s].salt_top = 1;
        nav->tiles[s].next_in_bucket = s + 1 < n ? (int32_t)(s + 1) : -1;
    }
    nav->free_head = 0;
    *out = nav;
    return NB_OK;
}

/* Empties a slot's tile, its memory now someone else's (freed, or held by a swap's undo). */
static void tile_clear(nb_tile* t)
{
    t->data = NULL;
    t->first_link = NULL;
    t->links = NULL;
    t->size = 0;
    t->nlinks = t->link_capacity = 0;
    t->free_link = NB_NULL_LINK;
    memset(&t->v, 0, sizeof(t->v));
}

static void tile_release(nb_context* ctx, nb_tile* t)
{
    nb_free(ctx, t->data);
    nb_free(ctx, t->first_link);
    nb_free(ctx, t->links);
    tile_clear(t);
}

NB_COLD void nb_navmesh_destroy(nb_context* ctx, nb_navmesh* nav)
{
    if (!nav)
        return;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s)
        tile_release(ctx, &nav->tiles[s]);
    nb_free(ctx, nav->tiles);
    nb_free(ctx, nav->buckets);
    nb_free(ctx, nav->far);
    nb_free(ctx, nav);
}

/* ---- geometry for linking ------------------------------------------------------------------------------------ */

static const float* tile_vert(const nb_tile_view* v, uint32_t poly, uint32_t j)
{
    return &v->verts[(size_t)v->poly_verts[(size_t)poly * v->nvp + j] * 3];
}

/* Two border edges on the same grid line (side: of edge a; the line is x = const for sides 0/2, z = const for
 * 1/3) overlap when they share a stretch of the line and their heights there are within climb (or cross). (The
 * link's portal is the shared part: nb_border_span.)
 * Tolerances come from the tiles' cell size: polygon corners lie on cell corners, so edges on one line either share
 * a cell or more or touch at a point, and half a cell tells the two apart at any scale and distance from the origin.
 * (An absolute tolerance, 0.01 as in Detour, is wider than a whole tile of a level in millimetre-sized cells; one
 * that grew with the coordinates dropped the links of narrow passages far from the origin.) Being on the line
 * allows a tenth of a cell and float noise at the line's magnitude. */
static int border_overlap(const float* a0, const float* a1, const float* b0, const float* b1, int side, float climb,
                          float cell)
{
    const int line = (side == 0 || side == 2) ? 0 : 2; /* the constant axis */
    const int along = 2 - line;
    const float eps = 0.1f * cell + 1e-6f * fabsf(a0[line]);
    if (fabsf(a0[line] - a1[line]) > eps || fabsf(b0[line] - b1[line]) > eps || fabsf(a0[line] - b0[line]) > eps)
        return 0;
    const float alo = nb_minf(a0[along], a1[along]), ahi = nb_maxf(a0[along], a1[along]);
    const float blo = nb_minf(b0[along], b1[along]), bhi = nb_maxf(b0[along], b1[along]);
    const float lo = nb_maxf(alo, blo), hi = nb_minf(ahi, bhi);
    if (!(hi - lo > 0.5f * cell))
        return 0;
    const float da = a1[along] - a0[along], db = b1[along] - b0[along];
    /* Heights of both edges at both ends of the shared span. */
    const float ya_lo = a0[1] + (a1[1] - a0[1]) * ((lo - a0[along]) / da);
    const float ya_hi = a0[1] + (a1[1] - a0[1]) * ((hi - a0[along]) / da);
    const float yb_lo = b0[1] + (b1[1] - b0[1]) * ((lo - b0[along]) / db);
    const float yb_hi = b0[1] + (b1[1] - b0[1]) * ((hi - b0[along]) / db);
    const float d_lo = yb_lo - ya_lo, d_hi = yb_hi - ya_hi;
    return d_lo * d_hi < 0.0f || !(fabsf(d_lo) > climb) || !(fabsf(d_hi) > climb);
}

/* Closest point of the polygon to p in xz, and the surface height there (detail triangles when p is over the
 * polygon, else the polygon edge it was clamped to). */
static void closest_on_poly(const nb_tile_view* v, uint32_t poly, const float p[3], float out[3])
{
    const uint32_t n = v->poly_nverts[poly];
    int inside = 0;
    float best_d = INFINITY;
    memcpy(out, tile_vert(v, poly, 0), 3 * sizeof(float));
    for (uint32_t i = 0, j = n - 1; i < n; j = i++) {
        const float* a = tile_vert(v, poly, j);
        const float* b = tile_vert(v, poly, i);
        /* Crossing-number test: independent of the winding. */
        if ((a[2] > p[2]) != (b[2] > p[2]) && p[0] < (b[0] - a[0]) * (p[2] - a[2]) / (b[2] - a[2]) + a[0])
            inside = !inside;
        const float ex = b[0] - a[0], ez = b[2] - a[2];
        const float len2 = ex * ex + ez * ez;
        float t = len2 > 0.0f ? ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / len2 : 0.0f;
        t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
        const float qx = a[0] + ex * t, qz = a[2] + ez * t;
        const float d = (qx - p[0]) * (qx - p[0]) + (qz - p[2]) * (qz - p[2]);
        if (d < best_d) {
            best_d = d;
            out[0] = qx;
            out[1] = a[1] + (b[1] - a[1]) * t;
            out[2] = qz;
        }
    }
    if (!inside)
        return;
    out[0] = p[0];
    out[2] = p[2];
    const uint32_t* m = &v->detail_meshes[(size_t)poly * 4];
    for (uint32_t t = 0; t < m[3]; ++t) {
        const uint8_t* tri = &v->detail_tris[((size_t)m[2] + t) * 4];
        const float* c[3];
        for (int k = 0; k < 3; ++k)
            c[k] = tri[k] < n ? tile_vert(v, poly, tri[k]) : &v->detail_verts[((size_t)m[0] + tri[k] - n) * 3];
        /* Barycentric coordinates in xz. */
        const float v0x = c[2][0] - c[0][0], v0z = c[2][2] - c[0][2];
        const float v1x = c[1][0] - c[0][0], v1z = c[1][2] - c[0][2];
        const float v2x = p[0] - c[0][0], v2z = p[2] - c[0][2];
        const float den = v0x * v1z - v0z * v1x;
        if (fabsf(den) < 1e-12f)
            continue;
        const float u = (v1z * v2x - v1x * v2z) / den, w = (v0x * v2z - v0z * v2x) / den;
        const float eps = 1e-4f;
        if (u >= -eps && w >= -eps && u + w <= 1.0f + eps) {
            out[1] = c[0][1] + (c[2][1] - c[0][1]) * u + (c[1][1] - c[0][1]) * w;
            return;
        }
    }
    /* Numerically outside every triangle: keep the height of the nearest edge point found above. */
}

/* The ground polygon of a tile nearest to p within radius in xz and climb in y, or -1. */
static int32_t nearest_ground_poly(const nb_tile_view* v, const float p[3], float radius, float climb)
{
    const uint32_t nground = v->npolys - v->noffmesh;
    int32_t best = -1;
    float best_d = INFINITY;
    for (uint32_t poly = 0; poly < nground; ++poly) {
        float lo[3], hi[3];
        memcpy(lo, tile_vert(v, poly, 0), sizeof(lo));
        memcpy(hi, lo, sizeof(hi));
        for (uint32_t j = 1; j < v->poly_nverts[poly]; ++j)
            for (int a = 0; a < 3; ++a) {
                lo[a] = nb_minf(lo[a], tile_vert(v, poly, j)[a]);
                hi[a] = nb_maxf(hi[a], tile_vert(v, poly, j)[a]);
            }
        if (p[0] < lo[0] - radius || p[0] > hi[0] + radius || p[2] < lo[2] - radius || p[2] > hi[2] + radius)
            continue;
        float q[3];
        closest_on_poly(v, poly, p, q);
        const float dxz = (q[0] - p[0]) * (q[0] - p[0]) + (q[2] - p[2]) * (q[2] - p[2]);
        const float dy = q[1] - p[1];
        if (dxz > radius * radius || fabsf(dy) > climb)
            continue;
        if (dxz + dy * dy < best_d) {
            best_d = dxz + dy * dy;
            best = (int32_t)poly;
        }
    }
    return best;
}

/* ---- collecting links (no change to the navmesh yet) -------------------------------------------------------- */

typedef struct pending_link {
    uint32_t slot; /* 0-based slot of the tile that owns the link */
    uint32_t poly;
    nb_link link;
} pending_link;

typedef struct pending_list {
    pending_link* items;
    uint32_t count, capacity;
    const char* fn; /* the public function adding the tile, for messages */
} pending_list;

static nb_status pending_add(nb_context* ctx, pending_list* pl, uint32_t slot, uint32_t poly, nb_poly_ref ref,
                             uint8_t edge, uint8_t side, uint8_t nedge)
{
    if (pl->count == pl->capacity) {
        const uint32_t cap = pl->capacity ? pl->capacity * 2 : 64;
        pending_link* grown = (pending_link*)nb_alloc(ctx, (size_t)cap * sizeof(pending_link));
        if (!grown)
            return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'pending links' (%u)", pl->fn, cap);
        if (pl->count)
            memcpy(grown, pl->items, (size_t)pl->count * sizeof(pending_link));
        nb_free(ctx, pl->items);
        pl->items = grown;
        pl->capacity = cap;
    }
    pending_link* p = &pl->items[pl->count++];
    p->slot = slot;
    p->poly = poly;
    p->link.ref = ref;
    p->link.next = NB_NULL_LINK;
    p->link.edge = edge;
    p->link.side = side;
    p->link.nedge = nedge;
    p->link.reserved = 0;
    return NB_OK;
}

/* Border links between tile a (slot sa, its side `side` faces tile b) and tile b, both directions. */
static nb_status collect_border(nb_context* ctx, pending_list* pl, const nb_tile_view* a, uint32_t sa,
                                nb_poly_ref ref_a0, const nb_tile_view* b, uint32_t sb, nb_poly_ref ref_b0,
                                int side)
{
    const int opposite = (side + 2) & 3;
    const float climb = nb_maxf(a->walkable_climb, b->walkable_climb);
    const float cell = 1.0f / nb_maxf(a->bv_quant, b->bv_quant); /* bv_quant is 1 / cell size */
    const uint32_t ga = a->npolys - a->noffmesh, gb = b->npolys - b->noffmesh;
    for (uint32_t pa = 0; pa < ga; ++pa) {
        const uint32_t na = a->poly_nverts[pa];
        for (uint32_t ea = 0; ea < na; ++ea) {
            if (a->poly_neis[(size_t)pa * a->nvp + ea] != (NB_NEI_BORDER | side))
                continue;
            const float* a0 = tile_vert(a, pa, ea);
            const float* a1 = tile_vert(a, pa, (ea + 1) % na);
            for (uint32_t pb = 0; pb < gb; ++pb) {
                const uint32_t nbv = b->poly_nverts[pb];
                for (uint32_t eb = 0; eb < nbv; ++eb) {
                    if (b->poly_neis[(size_t)pb * b->nvp + eb] != (NB_NEI_BORDER | opposite))
                        continue;
                    const float* b0 = tile_vert(b, pb, eb);
                    const float* b1 = tile_vert(b, pb, (eb + 1) % nbv);
                    if (!border_overlap(a0, a1, b0, b1, side, climb, cell) ||
                        !border_overlap(b0, b1, a0, a1, opposite, climb, cell))
                        continue;
                    nb_status st = pending_add(ctx, pl, sa, pa, ref_b0 | pb, (uint8_t)ea, (uint8_t)side, (uint8_t)eb);
                    if (st == NB_OK)
                        st = pending_add(ctx, pl, sb, pb, ref_a0 | pa, (uint8_t)eb, (uint8_t)opposite, (uint8_t)ea);
                    if (st != NB_OK)
                        return st;
                }
            }
        }
    }
    return NB_OK;
}

/* The end of off-mesh connection k of tile `from` lands in tile `to` (the same tile, or the one around it that
 * landing_offset names): link the connection to its landing polygon, and back when bidirectional. */
static nb_status collect_offmesh_end(nb_context* ctx, pending_list* pl, const nb_tile_view* from, uint32_t s_from,
                                     nb_poly_ref ref_from0, uint32_t k, const nb_tile_view* to, uint32_t s_to,
                                     nb_poly_ref ref_to0)
{
    const nb_offmesh_con* con = &from->offmesh[k];
    const int32_t land = nearest_ground_poly(to, con->pos + 3, con->radius, to->walkable_climb);
    if (land < 0)
        return NB_OK;
    const uint8_t side = con->side;
    const uint8_t back = side == 0xff ? 0xff : (uint8_t)((side + 2) & 3);
    nb_status st = pending_add(ctx, pl, s_from, con->poly, ref_to0 | (uint32_t)land, 1, side, 0);
    if (st == NB_OK && con->bidirectional)
        st = pending_add(ctx, pl, s_to, (uint32_t)land, ref_from0 | con->poly, NB_LINK_NO_EDGE, back, 0);
    return st;
}

/* ---- adding a tile -------------------------------------------------------------------------------------------- */

/* A link array that must grow for the new links: allocated before anything changes, swapped in at commit. */
typedef struct link_growth {
    uint32_t slot;
    nb_link* links;
    uint32_t capacity;
} link_growth;

/* Whether each ground polygon's neighbour across an edge names it back across one of its own edges. */
static int neighbours_mutual(const nb_tile_view* v)
{
    const uint32_t nground = v->npolys - v->noffmesh;
    for (uint32_t p = 0; p < nground; ++p) {
        for (uint32_t j = 0; j < v->poly_nverts[p]; ++j) {
            const uint16_t nei = v->poly_neis[(size_t)p * v->nvp + j];
            if (nei == NB_NEI_WALL || (nei & NB_NEI_BORDER))
                continue;
            const uint32_t q = (uint32_t)nei - 1u;
            int back = 0;
            for (uint32_t k = 0; k < v->poly_nverts[q] && !back; ++k)
                back = v->poly_neis[(size_t)q * v->nvp + k] == p + 1u;
            if (!back)
                return 0;
        }
    }
    return 1;
}

static uint32_t link_alloc(nb_tile* t)
{
    if (t->free_link != NB_NULL_LINK) {
        const uint32_t i = t->free_link;
        t->free_link = t->links[i].next;
        return i;
    }
    return t->nlinks++;
}

/* nb_navmesh_add_tile into the free slot `want` with salt `want_salt` (its refs as they were before it was removed),
 * or (want < 0) into the first free slot with the salt it has. fn: the public function called, for messages. */
static nb_status add_tile(nb_context* ctx, const char* fn, nb_navmesh* nav, const uint8_t* data, size_t size,
                          int32_t want, uint32_t want_salt)
{
    if (!nav || !data)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !nav ? "nav" : "data");
    nb_status st = NB_OK;
    uint8_t* copy = NULL;
    uint32_t* first_link = NULL;
    pending_list pl = { NULL, 0, 0, fn };
    link_growth* growth = NULL; /* one per tile whose link array must grow */
    uint32_t ngrowth = 0;
    uint32_t* which = NULL; /* the tiles that get new links, and how many each */
    uint32_t* need = NULL;
    nb_far_link* far_grown = NULL;
    uint32_t far_cap = nav ? nav->far_capacity : 0;
    nb_tile_view view;

    /* ---- the blob: copied (4-byte aligned by the allocator) and parsed in place ---- */
    copy = (uint8_t*)nb_alloc(ctx, size ? size : 1);
    if (!copy) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'data' (%zu)", fn, size);
        goto cleanup;
    }
    memcpy(copy, data, size);
    st = nb_tile_parse_as(ctx, fn, copy, size, &view);
    if (st != NB_OK)
        goto cleanup;
    /* A tile of another grid (other tile sizes or origin) would link wrongly with its neighbours: its bounds must
     * lie in its cell of this navmesh's grid, give or take half a tile (a solo bake's grid rounds its bounds up to
     * whole cells). */
    for (int k = 0; k < 2; ++k) {
        const float size_k = k ? nav->params.tile_depth : nav->params.tile_width;
        const float lo = nav->params.origin[k * 2] + (float)(k ? view.tile_z : view.tile_x) * size_k;
        if (!(view.bmin[k * 2] >= lo - 0.5f * size_k && view.bmax[k * 2] <= lo + 1.5f * size_k)) {
            st = nb_fail(ctx, NB_ERR_INVALID_ARG,
                         "%s: tile (%d, %d) spans %c %g..%g, but its cell of this navmesh is %g..%g: a tile of another "
                             "grid (tile size or origin)", fn,
                         view.tile_x, view.tile_z, k ? 'z' : 'x', view.bmin[k * 2], view.bmax[k * 2], lo, lo + size_k);
            goto cleanup;
        }
    }
    /* A tile baked for another agent (height, radius, climb) or cell size than the tiles already here would leave
     * seams where they meet: walls eroded by one radius beside floors eroded by another, steps linked that one of
     * them cannot climb. */
    for (uint32_t i = 0; i < nav->params.max_tiles; ++i) {
        const nb_tile_view* o = &nav->tiles[i].v;
        if (!nav->tiles[i].data)
            continue;
        if (o->walkable_height != view.walkable_height || o->walkable_radius != view.walkable_radius ||
            o->walkable_climb != view.walkable_climb || o->bv_quant != view.bv_quant) {
            st = nb_fail(ctx, NB_ERR_INVALID_ARG,
                         "%s: tile (%d, %d) was baked for another agent or cell size than the tiles in this navmesh "
                             "(agent height %g, radius %g, climb %g, cell size %g; theirs %g, %g, %g, %g)", fn,
                         view.tile_x, view.tile_z, view.walkable_height, view.walkable_radius, view.walkable_climb,
                         1.0 / view.bv_quant, o->walkable_height, o->walkable_radius, o->walkable_climb,
                         1.0 / o->bv_quant);
            goto cleanup;
        }
        break;
    }
    if (find_slot(nav, view.tile_x, view.tile_z) >= 0) {
        st = nb_fail(ctx, NB_ERR_ALREADY_EXISTS, "%s: a tile already occupies (%d, %d)", fn, view.tile_x, view.tile_z);
        goto cleanup;
    }
    if (nav->free_head < 0) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: the navmesh is full (max_tiles %u)", fn, nav->params.max_tiles);
        goto cleanup;
    }
    if (want >= 0 && ((uint32_t)want >= nav->params.max_tiles || nav->tiles[want].data)) {
        st = nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: slot %d is not free", fn, want);
        goto cleanup;
    }
    const uint32_t slot = want >= 0 ? (uint32_t)want : (uint32_t)nav->free_head;
    nb_tile* tile = &nav->tiles[slot];
    /* the salt is written only at commit: a free slot keeps the salt that makes its last tile's refs stale */
    const uint32_t salt = want >= 0 ? want_salt & nav->salt_mask : tile->salt;
    const nb_poly_ref ref0 = nb_make_ref(nav, salt, slot + 1, 0);
    first_link = (uint32_t*)nb_alloc(ctx, (size_t)(view.npolys ? view.npolys : 1) * sizeof(uint32_t));
    if (!first_link) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'first_link' (%u)", fn, view.npolys);
        goto cleanup;
    }
    for (uint32_t p = 0; p < view.npolys; ++p)
        first_link[p] = NB_NULL_LINK;

    /* ---- collect: internal links ---- */
    const uint32_t nground = view.npolys - view.noffmesh;
    for (uint32_t p = 0; p < nground; ++p)
        for (uint32_t j = 0; j < view.poly_nverts[p]; ++j) {
            const uint16_t nei = view.poly_neis[(size_t)p * view.nvp + j];
            if (nei == NB_NEI_WALL || (nei & NB_NEI_BORDER))
                continue;
            st = pending_add(ctx, &pl, slot, p, ref0 | (uint32_t)(nei - 1), (uint8_t)j, 0xff, 0);
            if (st != NB_OK)
                goto cleanup;
        }

    /* ---- collect: off-mesh starts (this tile) and ends landing in this tile ---- */
    for (uint32_t k = 0; k < view.noffmesh; ++k) {
        const nb_offmesh_con* con = &view.offmesh[k];
        const int32_t land = nearest_ground_poly(&view, con->pos, con->radius, view.walkable_climb);
        if (land >= 0) {
            /* The start is always an entry: its landing polygon links onto the connection. */
            st = pending_add(ctx, &pl, slot, con->poly, ref0 | (uint32_t)land, 0, 0xff, 0);
            if (st == NB_OK)
                st = pending_add(ctx, &pl, slot, (uint32_t)land, ref0 | con->poly, NB_LINK_NO_EDGE, 0xff, 0);
            if (st != NB_OK)
                goto cleanup;
        }
        if (lands_at(&view, con, 0, 0)) {
            st = collect_offmesh_end(ctx, &pl, &view, slot, ref0, k, &view, slot, ref0);
            if (st != NB_OK)
                goto cleanup;
        }
    }

    /* ---- collect: the four neighbours (border links, off-mesh ends either way), then the four diagonal ones
     * (off-mesh ends only) ---- */
    for (int n = 0; n < 8; ++n) {
        int32_t dx, dz;
        if (n < 4) {
            side_offset(n, &dx, &dz);
        } else {
            dx = n & 1 ? 1 : -1;
            dz = n & 2 ? 1 : -1;
        }
        const int32_t ns = offset_slot(nav, view.tile_x, view.tile_z, dx, dz);
        if (ns < 0)
            continue;
        const nb_tile* nt = &nav->tiles[ns];
        const nb_poly_ref nref0 = nb_navmesh_ref_of(nav, nt, 0);
        if (n < 4) {
            st = collect_border(ctx, &pl, &view, slot, ref0, &nt->v, (uint32_t)ns, nref0, n);
            if (st != NB_OK)
                goto cleanup;
        }
        for (uint32_t k = 0; k < view.noffmesh && st == NB_OK; ++k)
            if (lands_at(&view, &view.offmesh[k], dx, dz))
                st = collect_offmesh_end(ctx, &pl, &view, slot, ref0, k, &nt->v, (uint32_t)ns, nref0);
        for (uint32_t k = 0; k < nt->v.noffmesh && st == NB_OK; ++k)
            if (lands_at(&nt->v, &nt->v.offmesh[k], -dx, -dz))
                st = collect_offmesh_end(ctx, &pl, &nt->v, (uint32_t)ns, nref0, k, &view, slot, ref0);
        if (st != NB_OK)
            goto cleanup;
    }

    /* ---- collect: far off-mesh ends (two or more tiles on), this tile's into the tiles they land in, and other
     * tiles' landing in this one ---- */
    uint32_t own_far = 0;
    for (uint32_t k = 0; k < view.noffmesh && st == NB_OK; ++k) {
        int32_t dx, dz, ex, ez;
        if (landing_offset(&view, &view.offmesh[k], &dx, &dz))
            continue;
        ++own_far;
        nb_navmesh_tile_coords(nav, view.offmesh[k].pos + 3, &ex, &ez);
        const int32_t es = find_slot(nav, ex, ez);
        if (es >= 0)
            st = collect_offmesh_end(ctx, &pl, &view, slot, ref0, k, &nav->tiles[es].v, (uint32_t)es,
                                     nb_navmesh_ref_of(nav, &nav->tiles[es], 0));
    }
    for (uint32_t i = 0; i < nav->far_count && st == NB_OK; ++i) {
        const nb_far_link* f = &nav->far[i];
        if (f->end_x == view.tile_x && f->end_z == view.tile_z) {
            const nb_tile* ft = &nav->tiles[f->slot];
            st = collect_offmesh_end(ctx, &pl, &ft->v, f->slot, nb_navmesh_ref_of(nav, ft, 0), f->k, &view, slot, ref0);
        }
    }
    if (st != NB_OK)
        goto cleanup;
    if ((uint64_t)nav->far_count + own_far > nav->far_capacity) {
        uint64_t cap = (uint64_t)nav->far_capacity * 2;
        if (cap < 16)
            cap = 16;
        if (cap < (uint64_t)nav->far_count + own_far)
            cap = (uint64_t)nav->far_count + own_far;
        if (cap > UINT32_MAX || cap * sizeof(nb_far_link) > SIZE_MAX) {
            st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: too many far off-mesh links", fn);
            goto cleanup;
        }
        far_grown = (nb_far_link*)nb_alloc(ctx, (size_t)cap * sizeof(nb_far_link));
        if (!far_grown) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'far links' (%u)", fn, (uint32_t)cap);
            goto cleanup;
        }
        far_cap = (uint32_t)cap;
    }

    /* ---- reserve: every link array that must grow gets its new block now ---- */
    {
        which = (uint32_t*)nb_alloc(ctx, (size_t)(pl.count + 1) * sizeof(uint32_t));
        need = (uint32_t*)nb_calloc(ctx, (size_t)pl.count + 1, sizeof(uint32_t));
        growth = (link_growth*)nb_alloc(ctx, (size_t)(pl.count + 1) * sizeof(link_growth));
        if (!which || !need || !growth) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'pending links' (%u)", fn, pl.count);
            goto cleanup;
        }
        uint32_t nwhich = 0;
        for (uint32_t i = 0; i < pl.count; ++i) {
            uint32_t w = 0;
            while (w < nwhich && which[w] != pl.items[i].slot)
                ++w;
            if (w == nwhich)
                which[nwhich++] = pl.items[i].slot;
            need[w]++;
        }
        for (uint32_t w = 0; w < nwhich; ++w) {
            const nb_tile* t = &nav->tiles[which[w]];
            const uint32_t used = which[w] == slot ? 0 : t->nlinks;
            const uint32_t cap = which[w] == slot ? 0 : t->link_capacity;
            if ((uint64_t)used + need[w] > 0xfffffff0u) {
                st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: too many links in tile slot %u", fn, which[w] + 1);
                goto cleanup;
            }
            if (used + need[w] <= cap)
                continue;
            /* Neighbours grow geometrically: each later neighbour adds its border links here. */
            uint32_t new_cap = used + need[w];
            if (which[w] != slot && new_cap < cap + cap / 2)
                new_cap = cap + cap / 2;
            nb_link* links = (nb_link*)nb_alloc(ctx, (size_t)new_cap * sizeof(nb_link));
            if (!links) {
                st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'links' (%u)", fn, new_cap);
                goto cleanup;
            }
            growth[ngrowth].slot = which[w];
            growth[ngrowth].links = links;
            growth[ngrowth].capacity = new_cap;
            ++ngrowth;
        }
    }

    /* ---- commit: nothing below can fail ---- */
    tile->mutual = neighbours_mutual(&view);
    tile->data = copy;
    tile->size = size;
    tile->v = view;
    tile->first_link = first_link;
    tile->links = NULL;
    tile->nlinks = tile->link_capacity = 0;
    tile->free_link = NB_NULL_LINK;
    copy = NULL;
    first_link = NULL;
    {
        int32_t* prev = &nav->free_head; /* unlink the slot from the free list (the head, unless `want`) */
        while (*prev != (int32_t)slot)
            prev = &nav->tiles[*prev].next_in_bucket;
        *prev = tile->next_in_bucket;
    }
    tile->salt = salt;
    if (want >= 0)
        tile->salt_top = salt; /* the place given: an application's replay of another navmesh's tiles */
    const uint32_t bucket = hash_pos(view.tile_x, view.tile_z, nav->bucket_mask);
    tile->next_in_bucket = nav->buckets[bucket];
    nav->buckets[bucket] = (int32_t)slot;
    nav->tile_count++;
    nav->poly_count += view.npolys;
    nav->generation++;
    for (int a = 0; a < 3; a += 2)
        nav->coord_mag = nb_maxf(nav->coord_mag, nb_maxf(fabsf(view.bmin[a]), fabsf(view.bmax[a])));
    for (uint32_t g = 0; g < ngrowth; ++g) {
        nb_tile* t = &nav->tiles[growth[g].slot];
        if (t->nlinks)
            memcpy(growth[g].links, t->links, (size_t)t->nlinks * sizeof(nb_link));
        nb_free(ctx, t->links);
        t->links = growth[g].links;
        t->link_capacity = growth[g].capacity;
    }
    ngrowth = 0;
    for (uint32_t i = 0; i < pl.count; ++i) {
        const pending_link* p = &pl.items[i];
        nb_tile* t = &nav->tiles[p->slot];
        const uint32_t li = link_alloc(t);
        t->links[li] = p->link;
        t->links[li].next = t->first_link[p->poly];
        t->first_link[p->poly] = li;
    }
    if (far_grown) {
        if (nav->far_count)
            memcpy(far_grown, nav->far, (size_t)nav->far_count * sizeof(nb_far_link));
        nb_free(ctx, nav->far);
        nav->far = far_grown;
        nav->far_capacity = far_cap;
        far_grown = NULL;
    }
    for (uint32_t k = 0; k < view.noffmesh; ++k) {
        int32_t dx, dz;
        if (landing_offset(&view, &view.offmesh[k], &dx, &dz))
            continue;
        nb_far_link* f = &nav->far[nav->far_count++];
        f->slot = slot;
        f->k = k;
        nb_navmesh_tile_coords(nav, view.offmesh[k].pos + 3, &f->end_x, &f->end_z);
    }

cleanup:
    for (uint32_t g = 0; g < ngrowth; ++g)
        nb_free(ctx, growth[g].links);
    nb_free(ctx, growth);
    nb_free(ctx, which);
    nb_free(ctx, need);
    nb_free(ctx, far_grown);
    nb_free(ctx, pl.items);
    nb_free(ctx, first_link);
    nb_free(ctx, copy);
    return st;
}

/* ---- removing a tile ------------------------------------------------------------------------------------------ */

/* Drops every link of tile t that leads into slot `gone` (border links and off-mesh links alike). */
static void unlink_slot(const nb_navmesh* nav, nb_tile* t, uint32_t gone)
{
    for (uint32_t p = 0; p < t->v.npolys; ++p) {
        uint32_t* prev = &t->first_link[p];
        while (*prev != NB_NULL_LINK) {
            const uint32_t li = *prev;
            nb_link* l = &t->links[li];
            if (nb_ref_slot(nav, l->ref) == gone) {
                *prev = l->next;
                l->next = t->free_link;
                l->ref = 0;
                t->free_link = li;
            } else {
                prev = &l->next;
            }
        }
    }
}

NB_COLD nb_status nb_navmesh_add_tile(nb_context* ctx, nb_navmesh* nav, const uint8_t* data, size_t size)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_navmesh_add_tile: ctx is NULL");
    return add_tile(ctx, "nb_navmesh_add_tile", nav, data, size, -1, 0);
}

int nb_navmesh_tile_place(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z, nb_tile_place* place)
{
    const nb_tile* t = nb_navmesh_tile_at(nav, tile_x, tile_z);
    if (!t)
        return 0;
    place->slot = (uint32_t)(t - nav->tiles);
    place->salt = t->salt;
    return 1;
}

NB_COLD nb_status nb_navmesh_add_tile_back(nb_context* ctx, nb_navmesh* nav, const uint8_t* data, size_t size,
                                           const nb_tile_place* place)
{
    return add_tile(ctx, "nb_navmesh_add_tile_back", nav, data, size, (int32_t)place->slot, place->salt);
}

/* Takes the tile in slot s (at tile_x, tile_z) out of the navmesh without freeing it: every link into it goes, its
 * far off-mesh entries leave the list (each one's index before, and the entry, into far_at and far_out when given:
 * room for as many as it has), its slot goes to the free list with a new salt. Allocates nothing. */
NB_COLD static void detach_slot(nb_navmesh* nav, int32_t s, int32_t tile_x, int32_t tile_z, uint32_t* far_at,
                        nb_far_link* far_out)
{
    /* the eight around it: border links come from the four beside it, off-mesh links from any of them */
    for (int32_t dz = -1; dz <= 1; ++dz)
        for (int32_t dx = -1; dx <= 1; ++dx) {
            const int32_t ns = dx || dz ? offset_slot(nav, tile_x, tile_z, dx, dz) : -1;
            if (ns >= 0)
                unlink_slot(nav, &nav->tiles[ns], (uint32_t)s + 1);
        }
    /* far off-mesh connections: the tiles this one's land in (their back-links), the tiles whose land in this
     * one; this tile's entries leave the list */
    uint32_t kept = 0, gone = 0;
    for (uint32_t i = 0; i < nav->far_count; ++i) {
        const nb_far_link f = nav->far[i];
        if (f.slot == (uint32_t)s) {
            const int32_t es = find_slot(nav, f.end_x, f.end_z);
            if (es >= 0 && es != s)
                unlink_slot(nav, &nav->tiles[es], (uint32_t)s + 1);
            if (far_at) {
                far_at[gone] = i;
                far_out[gone] = f;
            }
            ++gone;
            continue;
        }
        if (f.end_x == tile_x && f.end_z == tile_z)
            unlink_slot(nav, &nav->tiles[f.slot], (uint32_t)s + 1);
        nav->far[kept++] = f;
    }
    nav->far_count = kept;
    int32_t* prev = &nav->buckets[hash_pos(tile_x, tile_z, nav->bucket_mask)];
    while (*prev != s)
        prev = &nav->tiles[*prev].next_in_bucket;
    nb_tile* t = &nav->tiles[s];
    *prev = t->next_in_bucket;
    nav->poly_count -= t->v.npolys;
    /* A new salt makes the removed tile's refs stale even when the slot is reused. */
    t->salt = t->salt_top = (t->salt_top + 1) & nav->salt_mask;
    t->next_in_bucket = nav->free_head;
    nav->free_head = s;
    nav->tile_count--;
    nav->generation++;
}

NB_COLD nb_status nb_navmesh_remove_tile(nb_context* ctx, nb_navmesh* nav, int32_t tile_x, int32_t tile_z)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_navmesh_remove_tile: ctx is NULL");
    if (!nav)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_navmesh_remove_tile: nav is NULL");
    const int32_t s = find_slot(nav, tile_x, tile_z);
    if (s < 0)
        return nb_fail(ctx, NB_ERR_NOT_FOUND, "nb_navmesh_remove_tile: no tile at (%d, %d)", tile_x, tile_z);
    detach_slot(nav, s, tile_x, tile_z, NULL, NULL);
    tile_release(ctx, &nav->tiles[s]);
    return NB_OK;
}

/* ---- swapping a tile, with an undo that cannot fail -------------------------------------------------------- */

/* The links of a tile that a swap's removal unlinks from (a neighbour, or a tile a far off-mesh link joins), as they
 * were before: an undo copies them back. */
typedef struct link_snapshot {
    uint32_t slot;
    const uint8_t* data; /* the tile copied (its blob): an undo restores its links only */
    uint32_t nlinks, free_link;
    uint32_t* first_link;
    nb_link* links;
} link_snapshot;

struct nb_tile_undo {
    int32_t tile_x, tile_z;
    int had_old, added;
    int32_t slot;   /* the old tile's slot */
    nb_tile old;    /* the old tile, out of the navmesh with all its memory (links included) */
    float coord_mag;
    uint32_t nsnap;
    link_snapshot* snap;
    uint32_t nfar;
    uint32_t* far_at;
    nb_far_link* far;
};

NB_COLD static void undo_free(nb_context* ctx, nb_tile_undo* u, int release_old)
{
    if (!u)
        return;
    if (release_old && u->had_old)
        tile_release(ctx, &u->old);
    for (uint32_t i = 0; i < u->nsnap; ++i) {
        nb_free(ctx, u->snap[i].first_link);
        nb_free(ctx, u->snap[i].links);
    }
    nb_free(ctx, u->snap);
    nb_free(ctx, u->far_at);
    nb_free(ctx, u->far);
    nb_free(ctx, u);
}

/* Adds slot ns to the undo's snapshots (once), copying its links as they are now. */
NB_COLD static nb_status snapshot_slot(nb_context* ctx, const nb_navmesh* nav, nb_tile_undo* u, int32_t ns,
                                       uint32_t cap)
{
    if (ns < 0 || ns == u->slot)
        return NB_OK;
    for (uint32_t i = 0; i < u->nsnap; ++i)
        if (u->snap[i].slot == (uint32_t)ns)
            return NB_OK;
    if (u->nsnap >= cap)
        return NB_OK; /* cannot happen: cap counts every candidate */
    const nb_tile* t = &nav->tiles[ns];
    link_snapshot* sn = &u->snap[u->nsnap++];
    sn->slot = (uint32_t)ns;
    sn->data = t->data;
    sn->nlinks = t->nlinks;
    sn->free_link = t->free_link;
    sn->first_link = (uint32_t*)nb_alloc(ctx, (size_t)(t->v.npolys ? t->v.npolys : 1) * sizeof(uint32_t));
    sn->links = (nb_link*)nb_alloc(ctx, (size_t)(t->nlinks ? t->nlinks : 1) * sizeof(nb_link));
    if (!sn->first_link || !sn->links)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "nb_navmesh_swap_tile: out of memory 'undo links' (%u)", t->nlinks);
    if (t->v.npolys)
        memcpy(sn->first_link, t->first_link, (size_t)t->v.npolys * sizeof(uint32_t));
    if (t->nlinks)
        memcpy(sn->links, t->links, (size_t)t->nlinks * sizeof(nb_link));
    return NB_OK;
}

/* Puts the detached old tile back in its slot with its salt, and every link and far entry its removal took. The
 * navmesh must be as the detach left it (the swaps made since undone). Allocates nothing. */
NB_COLD static void reattach(nb_navmesh* nav, nb_tile_undo* u)
{
    const int32_t s = u->slot;
    int32_t* prev = &nav->free_head;
    while (*prev >= 0 && *prev != s)
        prev = &nav->tiles[*prev].next_in_bucket;
    if (*prev != s)
        return; /* not free: undos out of order (a caller's bug); the old tile stays the undo's, freed with it */
    *prev = nav->tiles[s].next_in_bucket;
    nb_tile* t = &nav->tiles[s];
    const uint32_t top = t->salt_top; /* the undone tiles' salts stay given */
    *t = u->old;
    t->salt_top = top;
    u->had_old = 0; /* the navmesh owns its memory again */
    const uint32_t bucket = hash_pos(u->tile_x, u->tile_z, nav->bucket_mask);
    t->next_in_bucket = nav->buckets[bucket];
    nav->buckets[bucket] = s;
    nav->tile_count++;
    nav->poly_count += t->v.npolys;
    nav->generation++;
    for (uint32_t i = 0; i < u->nsnap; ++i) {
        const link_snapshot* sn = &u->snap[i];
        nb_tile* n = &nav->tiles[sn->slot];
        if (n->data != sn->data || n->link_capacity < sn->nlinks)
            continue; /* not the tile copied (undos out of order: a caller's bug); never memory not its own */
        if (n->v.npolys)
            memcpy(n->first_link, sn->first_link, (size_t)n->v.npolys * sizeof(uint32_t));
        if (sn->nlinks)
            memcpy(n->links, sn->links, (size_t)sn->nlinks * sizeof(nb_link));
        n->nlinks = sn->nlinks;
        n->free_link = sn->free_link;
    }
    /* the far entries go back where they were: the list only lost them (capacity never shrinks) */
    if (u->nfar && nav->far_count + u->nfar <= nav->far_capacity) {
        uint32_t src = nav->far_count, r = u->nfar;
        const uint32_t total = nav->far_count + u->nfar;
        for (uint32_t dst = total; dst-- > 0;) {
            if (r > 0 && u->far_at[r - 1] == dst)
                nav->far[dst] = u->far[--r];
            else
                nav->far[dst] = nav->far[--src];
        }
        nav->far_count = total;
    }
}

NB_COLD nb_status nb_navmesh_swap_tile(nb_context* ctx, nb_navmesh* nav, int32_t tile_x, int32_t tile_z,
                                       const uint8_t* data, size_t size, nb_tile_undo** undo)
{
    static const char* fn = "nb_navmesh_swap_tile";
    *undo = NULL;
    if (data) {
        int32_t px = 0, pz = 0;
        const nb_status pst = nb_tile_position(ctx, data, size, &px, &pz);
        if (pst != NB_OK)
            return pst;
        if (px != tile_x || pz != tile_z)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: the tile is at (%d, %d), not (%d, %d)", fn, px, pz, tile_x,
                           tile_z);
    }
    const int32_t s = find_slot(nav, tile_x, tile_z);
    if (s < 0 && !data)
        return NB_OK;
    nb_tile_undo* u = (nb_tile_undo*)nb_calloc(ctx, 1, sizeof(nb_tile_undo));
    if (!u)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'undo'", fn);
    u->tile_x = tile_x;
    u->tile_z = tile_z;
    u->slot = s;
    u->coord_mag = nav->coord_mag;
    nb_status st = NB_OK;
    if (s >= 0) {
        /* everything the removal changes, copied first (the only allocations) */
        uint32_t cap = 8, nfar = 0;
        for (uint32_t i = 0; i < nav->far_count; ++i)
            if (nav->far[i].slot == (uint32_t)s)
                ++nfar;
            else if (nav->far[i].end_x == tile_x && nav->far[i].end_z == tile_z)
                ++cap;
        cap += nfar;
        u->snap = (link_snapshot*)nb_calloc(ctx, cap, sizeof(link_snapshot));
        if (nfar) {
            u->far_at = (uint32_t*)nb_alloc(ctx, (size_t)nfar * sizeof(uint32_t));
            u->far = (nb_far_link*)nb_alloc(ctx, (size_t)nfar * sizeof(nb_far_link));
        }
        if (!u->snap || (nfar && (!u->far_at || !u->far)))
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'undo' (%u)", fn, cap);
        for (int32_t dz = -1; dz <= 1 && st == NB_OK; ++dz)
            for (int32_t dx = -1; dx <= 1 && st == NB_OK; ++dx)
                if (dx || dz)
                    st = snapshot_slot(ctx, nav, u, offset_slot(nav, tile_x, tile_z, dx, dz), cap);
        for (uint32_t i = 0; i < nav->far_count && st == NB_OK; ++i) {
            const nb_far_link* f = &nav->far[i];
            if (f->slot == (uint32_t)s)
                st = snapshot_slot(ctx, nav, u, find_slot(nav, f->end_x, f->end_z), cap);
            else if (f->end_x == tile_x && f->end_z == tile_z)
                st = snapshot_slot(ctx, nav, u, (int32_t)f->slot, cap);
        }
        if (st != NB_OK) {
            undo_free(ctx, u, 0);
            return st;
        }
        u->nfar = nfar;
        u->old = nav->tiles[s];
        u->had_old = 1;
        detach_slot(nav, s, tile_x, tile_z, u->far_at, u->far);
        tile_clear(&nav->tiles[s]); /* the slot is free, its memory now the undo's */
    }
    if (data) {
        st = add_tile(ctx, fn, nav, data, size, -1, 0);
        if (st != NB_OK) {
            if (u->had_old)
                reattach(nav, u);
            undo_free(ctx, u, 1);
            return st;
        }
        u->added = 1;
    }
    *undo = u;
    return NB_OK;
}

uint8_t* nb_tile_undo_old(const nb_tile_undo* undo, size_t* size)
{
    if (!undo || !undo->had_old) {
        *size = 0;
        return NULL;
    }
    *size = undo->old.size;
    return undo->old.data;
}

NB_COLD void nb_navmesh_swap_undo(nb_context* ctx, nb_navmesh* nav, nb_tile_undo* undo)
{
    if (!undo)
        return;
    if (undo->added) {
        const int32_t s = find_slot(nav, undo->tile_x, undo->tile_z);
        if (s >= 0) {
            detach_slot(nav, s, undo->tile_x, undo->tile_z, NULL, NULL);
            tile_release(ctx, &nav->tiles[s]);
        }
    }
    if (undo->had_old)
        reattach(nav, undo);
    nav->coord_mag = undo->coord_mag; /* the adds undone may have raised it */
    undo_free(ctx, undo, 1); /* releases the old tile only when it could not go back */
}

NB_COLD void nb_navmesh_swap_done(nb_context* ctx, nb_tile_undo* undo) { undo_free(ctx, undo, 1); }

/* ---- accessors -------------------------------------------------------------------------------------------------- */

nb_status nb_navmesh_tile_data(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z, const uint8_t** data,
                               size_t* size)
{
    if (!nav || !data || !size)
        return NB_ERR_NULL_ARG;
    const nb_tile* t = nb_navmesh_tile_at(nav, tile_x, tile_z);
    if (!t)
        return NB_ERR_NOT_FOUND;
    *data = t->data;
    *size = t->size;
    return NB_OK;
}

uint32_t nb_navmesh_tile_count(const nb_navmesh* nav) { return nav ? nav->tile_count : 0; }
uint32_t nb_navmesh_poly_count(const nb_navmesh* nav) { return nav ? nav->poly_count : 0; }

const nb_navmesh_params* nb_navmesh_get_params(const nb_navmesh* nav) { return nav ? &nav->params : NULL; }

NB_COLD nb_status nb_navmesh_poly(const nb_navmesh* nav, nb_poly_ref ref, float* verts, int32_t* vert_count, uint8_t* area,
                          uint16_t* flags, int* is_offmesh)
{
    if (!nav)
        return NB_ERR_NULL_ARG;
    uint32_t poly;
    const nb_tile* t = nb_navmesh_resolve(nav, ref, &poly);
    if (!t)
        return NB_ERR_NOT_FOUND;
    const uint32_t n = t->v.poly_nverts[poly];
    if (verts)
        for (uint32_t j = 0; j < n; ++j)
            memcpy(&verts[j * 3], tile_vert(&t->v, poly, j), 3 * sizeof(float));
    if (vert_count)
        *vert_count = (int32_t)n;
    if (area)
        *area = t->v.poly_areas[poly];
    if (flags)
        *flags = t->v.poly_flags[poly];
    if (is_offmesh)
        *is_offmesh = t->v.poly_types[poly] == NB_POLY_OFFMESH;
    return NB_OK;
}

NB_COLD nb_status nb_navmesh_offmesh_link(const nb_navmesh* nav, nb_poly_ref ref, nb_offmesh_link* out, int attached[2])
{
    if (!nav || !out)
        return NB_ERR_NULL_ARG;
    uint32_t poly;
    const nb_tile* t = nb_navmesh_resolve(nav, ref, &poly);
    if (!t || t->v.poly_types[poly] != NB_POLY_OFFMESH)
        return NB_ERR_NOT_FOUND;
    /* Links are the tile's last polygons, in order (nb_tile_parse checks offmesh[k].poly). */
    const nb_offmesh_con* c = &t->v.offmesh[poly - (t->v.npolys - t->v.noffmesh)];
    memset(out, 0, sizeof(*out));
    memcpy(out->start, &c->pos[0], sizeof(out->start));
    memcpy(out->end, &c->pos[3], sizeof(out->end));
    out->radius = c->radius;
    out->flags = t->v.poly_flags[poly];
    out->area = t->v.poly_areas[poly];
    out->bidirectional = c->bidirectional;
    out->user_id = c->user_id;
    if (attached) {
        /* the link polygon's own links: edge 0 to the ground at its start, edge 1 at its end */
        attached[0] = attached[1] = 0;
        for (uint32_t li = t->first_link[poly]; li != NB_NULL_LINK; li = t->links[li].next)
            if (t->links[li].edge < 2)
                attached[t->links[li].edge] = 1;
    }
    return NB_OK;
}

NB_COLD nb_status nb_navmesh_poly_refs(nb_context* ctx, const nb_navmesh* nav, nb_poly_ref* refs, uint32_t capacity,
                               uint32_t* count)
{
    if (!nav || !count)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_navmesh_poly_refs: %s is NULL", !nav ? "nav" : "count");
    uint32_t needed = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s)
        if (nav->tiles[s].data)
            needed += nav->tiles[s].v.npolys;
    *count = needed;
    if (needed > capacity || (!refs && needed > 0))
        return nb_fail(ctx, NB_ERR_BUFFER_TOO_SMALL, "nb_navmesh_poly_refs: %u refs need room, capacity is %u", needed,
                       refs ? capacity : 0);
    uint32_t n = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        for (uint32_t p = 0; p < t->v.npolys; ++p)
            refs[n++] = nb_navmesh_ref_of(nav, t, p);
    }
    return NB_OK;
}

NB_COLD int nb_navmesh_keep_flags(nb_navmesh* nav, int32_t tile_x, int32_t tile_z, uint8_t* old_data,
                                   size_t old_size)
{
    nb_tile* t = (nb_tile*)nb_navmesh_tile_at(nav, tile_x, tile_z);
    nb_tile_view view;
    if (!t || !old_data || nb_tile_parse(NULL, old_data, old_size, &view) != NB_OK)
        return 0;
    const nb_tile_view* old = &view;
    const nb_tile_view* v = &t->v;
    int kept = 0;
    for (uint32_t p = 0; p < v->npolys; ++p) {
        const uint32_t n = v->poly_nverts[p];
        for (uint32_t q = 0; q < old->npolys; ++q) {
            if (old->poly_types[q] != v->poly_types[p] || old->poly_nverts[q] != n)
                continue;
            uint32_t j = 0;
            for (; j < n; ++j) {
                const float* a = &v->verts[(size_t)v->poly_verts[(size_t)p * v->nvp + j] * 3];
                const float* b = &old->verts[(size_t)old->poly_verts[(size_t)q * old->nvp + j] * 3];
                if (a[0] != b[0] || a[1] != b[1] || a[2] != b[2])
                    break;
            }
            if (j < n)
                continue;
            if (v->poly_flags[p] != old->poly_flags[q]) {
                v->poly_flags[p] = old->poly_flags[q];
                ++kept;
            }
            break;
        }
    }
    if (kept) {
        nav->generation++;
        nb_tile_update_crc(t->data, t->size);
    }
    return kept;
}

NB_COLD nb_status nb_navmesh_set_poly_flags(nb_context* ctx, nb_navmesh* nav, nb_poly_ref ref, uint16_t flags)
{
    if (!nav)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_navmesh_set_poly_flags: nav is NULL");
    uint32_t poly;
    nb_tile* t = (nb_tile*)nb_navmesh_resolve(nav, ref, &poly);
    if (!t)
        return nb_fail(ctx, NB_ERR_NOT_FOUND, "nb_navmesh_set_poly_flags: ref 0x%08x is not a polygon of this navmesh",
                       ref);
    t->v.poly_flags[poly] = flags;
    nav->generation++;
    /* The flags live in the blob: keep its checksum right so tile_data and save hand out a valid blob. */
    nb_tile_update_crc(t->data, t->size);
    return NB_OK;
}
