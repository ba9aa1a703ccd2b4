/* Queries from points on polygon outlines (the second audit of the runtime): a path corner lies on a polygon edge,
 * a tile border or a vertex, and agents re-plan from there. Paths from such starts and to such ends, the funnel
 * where the apex lies on the line of a later portal, and rays from tile corners and through vertices. Small navmeshes
 * built polygon by polygon pin each case down; a generated world checks the same properties at scale. */
#include <float.h>

#include "navbake.h"
#include "nbtest_level.h"
#include "nbtest_mesh.h"
#include "world.h"
#include "../../c/src/navmesh_internal.h"

static nb_context* ctx;

static const float HALF[3] = { 2.0f, 4.0f, 2.0f };

/* ---- navmeshes by hand --------------------------------------------------------------------------------------- */

#define HT_MAX_VERTS 400
#define HT_MAX_POLYS 200
#define HT_NVP 4

/* One tile from polygons given in cells (x, z; y = 0), each listed clockwise in (x, z) read as a math frame (x
 * right, z up), i.e. counter-clockwise seen from above, as nb_build_poly_mesh winds them; -1 pads a triangle.
 * Neighbours are the polygons sharing an edge; edges on the tile's bounds are tile-border edges. */
typedef struct hand_tile {
    float bmin[3];         /* world position of cell (0, 0) */
    float cell_size;
    int cells_x, cells_z;  /* the tile's extent in cells */
    int32_t tile_x, tile_z;
    int nverts, npolys;
    int verts[HT_MAX_VERTS][2];
    int polys[HT_MAX_POLYS][HT_NVP];
} hand_tile;

static int ht_nverts(const hand_tile* h, int p)
{
    int n = 0;
    while (n < HT_NVP && h->polys[p][n] >= 0)
        ++n;
    return n;
}

/* Adds tile h to nav, its vertices at heights ys (in cell heights, 0.1; NULL: all 0); 0 on failure (a failed
 * check). */
static int ht_add(nb_navmesh* nav, const hand_tile* h, const int* ys)
{
    uint16_t verts[HT_MAX_VERTS * 3], polys[HT_MAX_POLYS * 2 * HT_NVP], regs[HT_MAX_POLYS], flags[HT_MAX_POLYS];
    uint8_t areas[HT_MAX_POLYS];
    for (int i = 0; i < h->nverts; ++i) {
        verts[i * 3] = (uint16_t)h->verts[i][0];
        verts[i * 3 + 1] = (uint16_t)(ys ? ys[i] : 0);
        verts[i * 3 + 2] = (uint16_t)h->verts[i][1];
    }
    memset(polys, 0xff, sizeof(polys));
    for (int p = 0; p < h->npolys; ++p) {
        const int n = ht_nverts(h, p);
        regs[p] = (uint16_t)(p + 1);
        flags[p] = 1;
        areas[p] = NB_WALKABLE_AREA;
        for (int k = 0; k < n; ++k) {
            const int a = h->polys[p][k], b = h->polys[p][(k + 1) % n];
            polys[p * 2 * HT_NVP + k] = (uint16_t)a;
            uint16_t nei = 0xffff;
            for (int o = 0; o < h->npolys && nei == 0xffff; ++o) {
                const int m = ht_nverts(h, o);
                for (int j = 0; j < m && o != p; ++j)
                    if (h->polys[o][j] == b && h->polys[o][(j + 1) % m] == a)
                        nei = (uint16_t)o;
            }
            const int* va = h->verts[a];
            const int* vb = h->verts[b];
            if (nei == 0xffff) {
                if (va[0] == 0 && vb[0] == 0)
                    nei = 0x8000 | 0;
                else if (va[1] == h->cells_z && vb[1] == h->cells_z)
                    nei = 0x8000 | 1;
                else if (va[0] == h->cells_x && vb[0] == h->cells_x)
                    nei = 0x8000 | 2;
                else if (va[1] == 0 && vb[1] == 0)
                    nei = 0x8000 | 3;
            }
            polys[p * 2 * HT_NVP + HT_NVP + k] = nei;
        }
    }
    nb_poly_mesh m;
    memset(&m, 0, sizeof(m));
    m.verts = verts;
    m.polys = polys;
    m.regs = regs;
    m.flags = flags;
    m.areas = areas;
    m.nverts = h->nverts;
    m.npolys = m.max_polys = h->npolys;
    m.nvp = HT_NVP;
    for (int a = 0; a < 3; ++a)
        m.bmin[a] = h->bmin[a];
    m.bmax[0] = h->bmin[0] + (float)h->cells_x * h->cell_size;
    int ymax = 10;
    for (int i = 0; ys && i < h->nverts; ++i)
        ymax = ys[i] > ymax ? ys[i] : ymax;
    m.bmax[1] = h->bmin[1] + 0.1f * (float)ymax;
    m.bmax[2] = h->bmin[2] + (float)h->cells_z * h->cell_size;
    m.cell_size = h->cell_size;
    m.cell_height = 0.1f;
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = &m;
    tp.tile_x = h->tile_x;
    tp.tile_z = h->tile_z;
    tp.walkable_height = 2.0f;
    tp.walkable_radius = 0.5f;
    tp.walkable_climb = 0.5f;
    uint8_t* blob = NULL;
    size_t size = 0;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_OK, "");
    if (!blob)
        return 0;
    const nb_status st = nb_navmesh_add_tile(ctx, nav, blob, size);
    CHECK_STATUS(ctx, st, NB_OK, "");
    nb_bytes_free(ctx, blob);
    return st == NB_OK;
}

/* A navmesh of tiles (origin, tile size as given), tile i's vertex heights ys[i] (ys NULL: all 0). */
static nb_navmesh* ht_navmesh_ys(const float* origin, const hand_tile* tiles, const int (*ys)[HT_MAX_VERTS], int n,
                                 float tile_width, float tile_depth)
{
    nb_navmesh_params np;
    memset(&np, 0, sizeof(np));
    for (int a = 0; a < 3; ++a)
        np.origin[a] = origin[a];
    np.tile_width = tile_width;
    np.tile_depth = tile_depth;
    np.max_tiles = 16;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &np, &nav), NB_OK);
    for (int i = 0; i < n && nav; ++i)
        if (!ht_add(nav, &tiles[i], ys ? ys[i] : NULL)) {
            nb_navmesh_destroy(ctx, nav);
            return NULL;
        }
    return nav;
}

static nb_navmesh* ht_navmesh_at(const float* origin, const hand_tile* tiles, int n, float tile_width,
                                 float tile_depth)
{
    return ht_navmesh_ys(origin, tiles, NULL, n, tile_width, tile_depth);
}

static nb_navmesh* ht_navmesh(const hand_tile* tiles, int n, float tile_width, float tile_depth)
{
    static const float zero[3] = { 0, 0, 0 };
    return ht_navmesh_at(zero, tiles, n, tile_width, tile_depth);
}

static nb_query* query_for(const nb_navmesh* nav)
{
    nb_query* q = NULL;
    CHECK_INT(nb_query_create(ctx, nav, 0, &q), NB_OK);
    return q;
}

/* The polygon under (x, z): the nearest to a point well inside it. */
static nb_poly_ref poly_at(nb_query* q, float x, float z)
{
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float p[3] = { x, 0.0f, z };
    nb_poly_ref r = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, p, HALF, &f, &r, NULL), NB_OK);
    CHECK(r != 0);
    return r;
}

static float dist3(const float* a, const float* b)
{
    return sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* Length in xz: the funnel works in xz, and a corner more or less changes the 3D length by its height alone. */
static float polyline_length_xz(const float* pts, int32_t n)
{
    float len = 0.0f;
    for (int32_t k = 1; k < n; ++k) {
        const float* a = &pts[(k - 1) * 3];
        const float* b = &pts[k * 3];
        len += sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[2] - b[2]) * (a[2] - b[2]));
    }
    return len;
}

static float polyline_length(const float* pts, int32_t n)
{
    float len = 0.0f;
    for (int32_t k = 1; k < n; ++k)
        len += dist3(&pts[(k - 1) * 3], &pts[k * 3]);
    return len;
}

/* find_path + straight_path between explicit polygons; the point count, *length. */
static int32_t path_between(nb_query* q, nb_poly_ref sref, const float* s, nb_poly_ref eref, const float* e,
                            float* pts, int32_t cap, float* length)
{
    nb_query_filter f;
    nb_query_filter_init(&f);
    nb_poly_ref corridor[64];
    int32_t nc = 0, np = 0;
    int partial = 1;
    CHECK_INT(nb_query_find_path(q, sref, eref, s, e, &f, corridor, &nc, 64, &partial), NB_OK);
    CHECK_INT(partial, 0);
    CHECK_INT(nb_query_straight_path(q, s, e, corridor, nc, pts, NULL, NULL, &np, cap, 0), NB_OK);
    *length = polyline_length(pts, np);
    return np;
}

/* ---- the funnel with its apex on the line of later portals ---------------------------------------------------- */

/* Two tiles side by side (x = 10 is the border), two square polygons each: P0 (tile A, below) and P1 (tile A,
 * above); P2 (tile B, above) and P3 (tile B, below). Tile B starts one float step left of x = 10, as the vertices of
 * neighbouring tiles disagree at real tile borders (bmin + cells * cell_size, rounded). The corridor P0 P1 P2 P3
 * from a start on the border below the tiles' common corner R = (10, 10) to an end in P3 goes round R: its
 * portals P0|P1 and P1|P2 end at R, P1|P2 runs along the border seen edge-on from the start, and P2|P3 ends at
 * tile B's copy of R, a float step off. The shortest path in it is start -> R -> end; the funnel used to take the
 * far end of the edge-on portal, (10, 20), as a corner. */
static void test_funnel_apex_on_portal_line(void)
{
    const float x10 = nextafterf(10.0f, 0.0f);
    const hand_tile tiles[2] = {
        { { 0, 0, 0 }, 1.0f, 10, 20, 0, 0, 6, 2,
          { { 0, 0 }, { 10, 0 }, { 10, 10 }, { 0, 10 }, { 10, 20 }, { 0, 20 } },
          { { 0, 3, 2, 1 }, { 3, 5, 4, 2 } } },
        { { x10, 0, 0 }, 1.0f, 10, 20, 1, 0, 6, 2,
          { { 0, 0 }, { 10, 0 }, { 10, 10 }, { 0, 10 }, { 0, 20 }, { 10, 20 } },
          { { 3, 4, 5, 2 }, { 0, 3, 2, 1 } } },
    };
    nb_navmesh* nav = ht_navmesh(tiles, 2, 10.0f, 20.0f);
    nb_query* q = nav ? query_for(nav) : NULL;
    if (!q) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    const nb_poly_ref corridor[4] = { poly_at(q, 5, 5), poly_at(q, 5, 15), poly_at(q, 15, 15), poly_at(q, 15, 5) };
    const float end[3] = { 15.0f, 0.0f, 5.0f };
    const float want_len = 5.0f + sqrtf(50.0f);
    /* from the border (on tile A's side by a float step, on it, on tile B's copy of it) and from a point on the
     * line x = 10 below the tiles */
    const float starts[3] = { x10, 10.0f, nextafterf(x10, 0.0f) };
    for (int k = 0; k < 3; ++k) {
        const float start[3] = { starts[k], 0.0f, 5.0f };
        float pts[3 * 8];
        int32_t np = 0;
        CHECK_INT(nb_query_straight_path(q, start, end, corridor, 4, pts, NULL, NULL, &np, 8, 0), NB_OK);
        CHECK_INT(np, 3);
        CHECK_NEAR(pts[3], 10.0f, 1e-4);
        CHECK_NEAR(pts[5], 10.0f, 1e-4);
        CHECK_NEAR(polyline_length(pts, np), want_len, 1e-3);
    }
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* ---- a funnel that walks back far ------------------------------------------------------------------------------- */

/* A strip behind a door (x 0..10, z 990..1000), a room of DR_SLICES slices one cell wide (x 10..170, z 0..1000)
 * with a pillar under z = 950 at x 25..26, and an island linked to nothing (x 0..5, z 0..5). */
enum { DR_SLICES = 160 };

static nb_navmesh* door_room_navmesh(void)
{
    static hand_tile h;
    memset(&h, 0, sizeof(h));
    h.cell_size = 1.0f;
    h.cells_x = 10 + DR_SLICES;
    h.cells_z = 1000;
    const int strip[4][2] = { { 0, 990 }, { 0, 1000 }, { 10, 1000 }, { 10, 990 } };
    memcpy(h.verts, strip, sizeof(strip));
    h.nverts = 4;
    for (int x = 11; x <= 10 + DR_SLICES; ++x) { /* vertices 4 + 2 (x - 11): bottom, then top */
        h.verts[h.nverts][0] = x;
        h.verts[h.nverts++][1] = x == 25 || x == 26 ? 950 : 0;
        h.verts[h.nverts][0] = x;
        h.verts[h.nverts++][1] = 1000;
    }
    const int strip_poly[4] = { 0, 1, 2, 3 }, door_poly[4] = { 4, 3, 2, 5 }; /* the slice next to the door */
    memcpy(h.polys[0], strip_poly, sizeof(strip_poly));
    memcpy(h.polys[1], door_poly, sizeof(door_poly));
    h.npolys = 2;
    for (int k = 1; k < DR_SLICES; ++k) { /* slice x 10 + k .. 11 + k */
        const int a = 4 + 2 * (k - 1), b = a + 2;
        h.polys[h.npolys][0] = a;
        h.polys[h.npolys][1] = a + 1;
        h.polys[h.npolys][2] = b + 1;
        h.polys[h.npolys++][3] = b;
    }
    const int island[4][2] = { { 0, 0 }, { 0, 5 }, { 5, 5 }, { 5, 0 } };
    for (int k = 0; k < 4; ++k) {
        h.verts[h.nverts + k][0] = island[k][0];
        h.verts[h.nverts + k][1] = island[k][1];
        h.polys[h.npolys][k] = h.nverts + k;
    }
    h.nverts += 4;
    h.npolys++;
    return ht_navmesh(&h, 1, (float)h.cells_x, (float)h.cells_z);
}

/* From the strip to the room's far low corner, the path turns at the door's jamb (10, 990), then at the pillar's
 * corner (26, 950). The funnel finds the jamb only at the end, 160 portals on, and walks them again from there:
 * the pillar's portals are then more than the funnel's 128 kept portals back. (Read from the wrong slot of that
 * cache, the walk missed the pillar.) */
static void test_funnel_walks_back_past_its_portal_cache(void)
{
    nb_navmesh* nav = door_room_navmesh();
    nb_query* q = nav ? query_for(nav) : NULL;
    if (!q) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    const float start[3] = { 2.0f, 0.0f, 999.0f }, end[3] = { 10 + DR_SLICES - 0.5f, 0.0f, 1.0f };
    const float want[4][3] = { { 2, 0, 999 }, { 10, 0, 990 }, { 26, 0, 950 }, { 10 + DR_SLICES - 0.5f, 0, 1 } };
    nb_query_filter f;
    nb_query_filter_init(&f);
    static nb_poly_ref corridor[256];
    int32_t nc = 0, np = 0;
    int partial = 1;
    CHECK_INT(nb_query_find_path(q, poly_at(q, start[0], start[2]), poly_at(q, end[0], end[2]), start, end, &f,
                                 corridor, &nc, 256, &partial),
              NB_OK);
    CHECK_INT(partial, 0);
    CHECK_INT(nc, DR_SLICES + 1);
    float pts[3 * 8];
    CHECK_INT(nb_query_straight_path(q, start, end, corridor, nc, pts, NULL, NULL, &np, 8, 0), NB_OK);
    /* and through the batch call, whose funnel reads the corridor from the search's nodes */
    const float pair[6] = { start[0], start[1], start[2], end[0], end[1], end[2] };
    uint8_t status = 0;
    float len = 0.0f, bpts[3 * 8];
    uint32_t offsets[2] = { 0, 0 }, needed = 0;
    CHECK_INT(nb_query_find_paths(q, pair, 1, HALF, &f, 0, &status, &len, offsets, bpts, 8, &needed), NB_OK);
    CHECK_INT(status, NB_PATH_COMPLETE);
    CHECK_INT(np, 4);
    CHECK_INT((int)offsets[1], 4);
    for (int k = 0; k < 4 && np == 4 && offsets[1] == 4; ++k)
        for (int a = 0; a < 3; ++a) {
            CHECK_NEAR(pts[k * 3 + a], want[k][a], 1e-3);
            CHECK_NEAR(bpts[k * 3 + a], want[k][a], 1e-3);
        }
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* A search that runs out of nodes says so (NB_PATH_EXHAUSTED, nb_query_exhausted); one that ends on its own, complete
 * or with the end out of reach, does not. */
static void test_exhausted_search(void)
{
    nb_navmesh* nav = door_room_navmesh();
    nb_query* q = nav ? query_for(nav) : NULL;
    nb_query* small = NULL;
    if (nav)
        CHECK_INT(nb_query_create(ctx, nav, 16, &small), NB_OK);
    if (!q || !small) {
        nb_query_destroy(ctx, q);
        nb_query_destroy(ctx, small);
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float strip[3] = { 2.0f, 0.0f, 999.0f }, corner[3] = { 10 + DR_SLICES - 0.5f, 0.0f, 1.0f };
    const float island[3] = { 2.5f, 0.0f, 2.5f };
    nb_poly_ref corridor[256];
    int32_t nc = 0;
    int partial = 0;
    /* one path at a time */
    CHECK_INT(nb_query_find_path(small, poly_at(q, strip[0], strip[2]), poly_at(q, corner[0], corner[2]), strip, corner,
                                 &f, corridor, &nc, 256, &partial),
              NB_OK);
    CHECK_INT(partial, 1);
    CHECK_INT(nb_query_exhausted(small), 1);
    CHECK(nc > 1 && nc <= 16); /* toward the end, as far as the nodes went */
    CHECK_INT(nb_query_find_path(q, poly_at(q, strip[0], strip[2]), poly_at(q, corner[0], corner[2]), strip, corner, &f,
                                 corridor, &nc, 256, &partial),
              NB_OK);
    CHECK_INT(partial, 0);
    CHECK_INT(nb_query_exhausted(q), 0);
    CHECK_INT(nb_query_find_path(q, poly_at(q, strip[0], strip[2]), poly_at(q, island[0], island[2]), strip, island, &f,
                                 corridor, &nc, 256, &partial),
              NB_OK);
    CHECK_INT(partial, 1); /* out of reach: every polygon visited, none left over */
    CHECK_INT(nb_query_exhausted(q), 0);
    /* in a batch, per pair: the strip to the corner, then to the island, then from the island (a search that ends at
     * once, even with 16 nodes) */
    const float pairs[3 * 6] = { strip[0],  strip[1],  strip[2],  corner[0], corner[1], corner[2],
                                 strip[0],  strip[1],  strip[2],  island[0], island[1], island[2],
                                 island[0], island[1], island[2], strip[0],  strip[1],  strip[2] };
    uint8_t status[3];
    float pts[3 * 64];
    const uint8_t want_small[3] = { NB_PATH_PARTIAL | NB_PATH_EXHAUSTED, NB_PATH_PARTIAL | NB_PATH_EXHAUSTED,
                                    NB_PATH_PARTIAL };
    const uint8_t want_big[3] = { NB_PATH_COMPLETE, NB_PATH_PARTIAL, NB_PATH_PARTIAL };
    CHECK_INT(nb_query_find_paths(small, pairs, 3, HALF, &f, 0, status, NULL, NULL, pts, 64, NULL), NB_OK);
    for (int k = 0; k < 3; ++k)
        CHECK_INT(status[k], want_small[k]);
    CHECK_INT(nb_query_exhausted(small), 0); /* the last pair's */
    CHECK_INT(nb_query_find_paths(q, pairs, 3, HALF, &f, 0, status, NULL, NULL, pts, 64, NULL), NB_OK);
    for (int k = 0; k < 3; ++k)
        CHECK_INT(status[k], want_big[k]);
    nb_query_destroy(ctx, small);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* A tile-border portal's ends are vertices: tile A's polygon has a 100 m border edge, and across it a corridor 0.2 m
 * wide in tile B meets a middle stretch of it. A path from A into the corridor turns at the corridor's corner on the
 * border, (50.1, 1), and a ray from there to the end reaches it. (The portal kept as fractions of A's edge in bytes
 * put that corner at x = 50.196, 10 cm into the corridor.) */
static void test_border_portal_ends_at_vertices(void)
{
    const hand_tile tiles[2] = {
        { { 0, 0, 0 }, 0.1f, 1000, 10, 0, 0, 4, 1, { { 0, 0 }, { 1000, 0 }, { 1000, 10 }, { 0, 10 } },
          { { 0, 3, 2, 1 } } },
        { { 0, 0, 1.0f }, 0.1f, 1000, 10, 0, 1, 4, 1, { { 501, 0 }, { 503, 0 }, { 503, 10 }, { 501, 10 } },
          { { 0, 3, 2, 1 } } },
    };
    nb_navmesh* nav = ht_navmesh(tiles, 2, 100.0f, 1.0f);
    nb_query* q = nav ? query_for(nav) : NULL;
    if (!q) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    const float start[3] = { 10.0f, 0.0f, 0.5f }, end[3] = { 50.2f, 0.0f, 1.9f };
    const float corner[3] = { 501 * 0.1f, 0.0f, 1.0f };
    float pts[3 * 8], len = 0.0f;
    const int32_t np = path_between(q, poly_at(q, start[0], start[2]), start, poly_at(q, end[0], end[2]), end, pts, 8,
                                    &len);
    CHECK_INT(np, 3);
    CHECK_NEAR(pts[3], corner[0], 1e-4);
    CHECK_NEAR(pts[5], corner[2], 1e-4);
    CHECK_NEAR(len, dist3(start, corner) + dist3(corner, end), 1e-3);
    nb_query_filter f;
    nb_query_filter_init(&f);
    float t = 0.0f, nrm[3];
    CHECK_INT(nb_query_raycast(q, poly_at(q, end[0], end[2]), corner, end, &f, &t, nrm, NULL, NULL, 0), NB_OK);
    CHECK_NEAR(t, 1.0f, 0.0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Across a tile border, a floor and a ramp over it that rises along the border from the floor's height (linked, as
 * the edges meet within climb at one end): a ray along the floor crossing the border where the ramp runs 3 m above
 * goes on along the floor, whichever of the two links comes first. (Taking the first link that covers the
 * crossing, it went onto the ramp and stopped at the ramp's far edge.) */
static void test_ray_across_a_border_stays_on_its_floor(void)
{
    for (int order = 0; order < 2; ++order) {
        const int fl = order, rp = 1 - order; /* polygon indices of tile B's floor and ramp */
        hand_tile tiles[2] = {
            { { 0, 0, 0 }, 1.0f, 10, 10, 0, 0, 4, 1, { { 0, 0 }, { 10, 0 }, { 10, 10 }, { 0, 10 } },
              { { 0, 3, 2, 1 } } },
            { { 0, 0, 10.0f }, 1.0f, 10, 10, 0, 1, 8, 2,
              { { 0, 0 }, { 10, 0 }, { 10, 10 }, { 0, 10 }, { 0, 0 }, { 10, 0 }, { 10, 5 }, { 0, 5 } },
              { { 0 } } },
        };
        static const int ys[2][HT_MAX_VERTS] = { { 0 }, { 0, 0, 0, 0, 0, 40, 40, 0 } }; /* the ramp: 0 to 4 m */
        const int floor_poly[4] = { 0, 3, 2, 1 }, ramp_poly[4] = { 4, 7, 6, 5 };
        memcpy(tiles[1].polys[fl], floor_poly, sizeof(floor_poly));
        memcpy(tiles[1].polys[rp], ramp_poly, sizeof(ramp_poly));
        static const float zero[3] = { 0, 0, 0 };
        nb_navmesh* nav = ht_navmesh_ys(zero, tiles, ys, 2, 10.0f, 10.0f);
        nb_query* q = nav ? query_for(nav) : NULL;
        if (!q) {
            nb_navmesh_destroy(ctx, nav);
            return;
        }
        const float start[3] = { 8.0f, 0.0f, 5.0f }, end[3] = { 8.0f, 0.0f, 18.0f };
        nb_query_filter f;
        nb_query_filter_init(&f);
        float t = 0.0f, nrm[3];
        nb_poly_ref path[8];
        int32_t n = 0;
        CHECK_INT(nb_query_raycast(q, poly_at(q, start[0], start[2]), start, end, &f, &t, nrm, path, &n, 8), NB_OK);
        CHECK_NEAR(t, 1.0f, 0.0);
        CHECK_INT(n, 2);
        CHECK(n == 2 && path[1] == poly_at(q, end[0], end[2]));
        nb_query_destroy(ctx, q);
        nb_navmesh_destroy(ctx, nav);
    }
}

/* An off-mesh link on the straight line from the start to the end: its start and end stay corners of the path,
 * flagged, though the funnel runs straight through them (three points on one line do not make a corner
 * otherwise); a path from the link's start to its end is those two points, both flagged. Solo and tiled. */
static void test_offmesh_link_on_a_straight_path(void)
{
    static mesh_builder m;
    memset(&m, 0, sizeof(m));
    add_floor(&m, 0, 0, 10, 10, 0);
    add_floor(&m, 20, 0, 30, 10, 0);
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    const float ls[3] = { 8.0f, 0.2f, 5.0f }, le[3] = { 22.0f, 0.2f, 5.0f }; /* on the surface (0.2: a cell up) */
    memcpy(link.start, ls, sizeof(ls));
    memcpy(link.end, le, sizeof(le));
    link.radius = 0.6f;
    link.user_id = 1;
    for (int tiled = 0; tiled < 2; ++tiled) {
        nb_bake_input in = MB_INPUT(&m);
        nb_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.tile_size = tiled ? 16 : 0;
        nb_navmesh* nav = NULL;
        CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, &cfg, &link, 1, &nav), NB_OK, "");
        nb_query* q = nav ? query_for(nav) : NULL;
        if (!q) {
            nb_navmesh_destroy(ctx, nav);
            continue;
        }
        nb_query_filter f;
        nb_query_filter_init(&f);
        const float pairs[12] = { 2.0f, 0.0f, 5.0f, 28.0f, 0.0f, 5.0f, 8.0f, 0.2f, 5.0f, 22.0f, 0.2f, 5.0f };
        uint8_t st[2] = { 0, 0 }, flags[16];
        uint32_t off[3];
        float pts[16 * 3];
        CHECK_INT(nb_query_find_paths_ex(q, pairs, 2, HALF, &f, 0, st, NULL, off, pts, flags, NULL, 16, NULL), NB_OK);
        CHECK_INT(st[0], NB_PATH_COMPLETE);
        CHECK_INT(st[1], NB_PATH_COMPLETE);
        CHECK_INT(off[1], 4);
        CHECK_INT(off[2] - off[1], 2);
        if (off[1] == 4 && off[2] == 6) {
            CHECK_INT(flags[0], NB_STRAIGHT_POINT_START);
            CHECK_INT(flags[1], NB_STRAIGHT_POINT_OFFMESH);
            CHECK_INT(flags[2], NB_STRAIGHT_POINT_OFFMESH);
            CHECK_INT(flags[3], NB_STRAIGHT_POINT_END);
            CHECK_NEAR(pts[3], 8.0f, 0.05);
            CHECK_NEAR(pts[6], 22.0f, 0.05);
            CHECK_INT(flags[4], NB_STRAIGHT_POINT_START | NB_STRAIGHT_POINT_OFFMESH);
            CHECK_INT(flags[5], NB_STRAIGHT_POINT_END | NB_STRAIGHT_POINT_OFFMESH);
        }
        nb_query_destroy(ctx, q);
        nb_navmesh_destroy(ctx, nav);
    }
}

/* ---- A* from a start on a shared edge, to an end on one --------------------------------------------------------- */

/* P0 and P1 share a long edge x = 10 (z 2..42); below them the strip P2a | P2b joins them too. From a start on the
 * shared edge near its bottom to an end in P2b, the straight line runs through P1 and is clear: the path has 2
 * points. A* used to enter P1 at the shared edge's midpoint (20 m up), found the way round through P2a cheaper,
 * and the path went down to the strip's corner (3 points, 6.1 m for 5.4). The same to an end on the shared edge.
 * In one tile and split into two tiles along the edge. */
static void test_path_from_shared_edge(void)
{
    for (int tiled = 0; tiled < 2; ++tiled) {
        nb_navmesh* nav;
        if (!tiled) {
            const hand_tile t = { { 0, 0, 0 }, 1.0f, 20, 42, 0, 0, 9, 4,
                                  { { 0, 0 }, { 10, 0 }, { 20, 0 }, { 0, 2 }, { 10, 2 }, { 20, 2 }, { 0, 42 },
                                    { 10, 42 }, { 20, 42 } },
                                  { { 3, 6, 7, 4 }, { 4, 7, 8, 5 }, { 0, 3, 4, 1 }, { 1, 4, 5, 2 } } };
            nav = ht_navmesh(&t, 1, 20.0f, 42.0f);
        } else {
            const hand_tile t[2] = {
                { { 0, 0, 0 }, 1.0f, 10, 42, 0, 0, 6, 2,
                  { { 0, 0 }, { 10, 0 }, { 0, 2 }, { 10, 2 }, { 0, 42 }, { 10, 42 } },
                  { { 2, 4, 5, 3 }, { 0, 2, 3, 1 } } },
                { { 10, 0, 0 }, 1.0f, 10, 42, 1, 0, 6, 2,
                  { { 0, 0 }, { 10, 0 }, { 0, 2 }, { 10, 2 }, { 0, 42 }, { 10, 42 } },
                  { { 2, 4, 5, 3 }, { 0, 2, 3, 1 } } },
            };
            nav = ht_navmesh(t, 2, 10.0f, 42.0f);
        }
        nb_query* q = nav ? query_for(nav) : NULL;
        if (!q) {
            nb_navmesh_destroy(ctx, nav);
            continue;
        }
        const nb_poly_ref p0 = poly_at(q, 5, 20), p1 = poly_at(q, 15, 20), p2b = poly_at(q, 15, 1);
        const float on_edge[3] = { 10.0f, 0.0f, 3.0f }, below[3] = { 15.0f, 0.0f, 1.0f };
        const float straight = sqrtf(29.0f);
        float pts[3 * 16], len = 0.0f;
        int32_t np = path_between(q, p0, on_edge, p2b, below, pts, 16, &len);
        CHECK_INT(np, 2);
        CHECK_NEAR(len, straight, 1e-4);
        np = path_between(q, p2b, below, p0, on_edge, pts, 16, &len);
        CHECK_INT(np, 2);
        CHECK_NEAR(len, straight, 1e-4);
        /* a start at the vertex where the four polygons meet, in the strip's polygon that touches P1 only there */
        const float corner[3] = { 10.0f, 0.0f, 2.0f }, across[3] = { 11.0f, 0.0f, 3.0f };
        np = path_between(q, poly_at(q, 5, 1), corner, p1, across, pts, 16, &len);
        CHECK_INT(np, 2);
        CHECK_NEAR(len, sqrtf(2.0f), 1e-4);
        /* the batch, from the shared edge (whichever polygon the nearest query picks) */
        nb_query_filter f;
        nb_query_filter_init(&f);
        const float pair[6] = { 10.0f, 0.0f, 3.0f, 15.0f, 0.0f, 1.0f };
        uint8_t st = 0;
        float blen = 0.0f;
        uint32_t off[2];
        CHECK_INT(nb_query_find_paths(q, pair, 1, HALF, &f, 0, &st, &blen, off, pts, 16, NULL), NB_OK);
        CHECK_INT(st, NB_PATH_COMPLETE);
        CHECK_INT(off[1], 2);
        CHECK_NEAR(blen, straight, 1e-4);
        nb_query_destroy(ctx, q);
        nb_navmesh_destroy(ctx, nav);
    }
}

/* ---- a generated world: paths from path corners ------------------------------------------------------------------ */

/* The generated world, 64-cell tiles: corners of its paths lie on tile borders ~40% of the time (the audit's world). */
static nb_navmesh* world_navmesh(uint32_t seed, uint32_t triangles, const nb_config* cfg)
{
    nb_obj w;
    CHECK_INT(nb_world_generate(seed, triangles, &w), 0);
    nb_bake_input in = nb_obj_bake_input(&w);
    nb_navmesh* nav = NULL;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, cfg, NULL, 0, &nav), NB_OK, "");
    nb_obj_free(&w);
    return nav;
}

/* p moved by d toward the middle of polygon ref's vertices (into the polygon: they are convex). */
static void nudge_into(const nb_navmesh* nav, nb_poly_ref ref, const float* p, float d, float* out)
{
    float v[NB_MAX_VERTS_PER_POLY * 3], c[3] = { 0, 0, 0 };
    int32_t n = 0;
    CHECK_INT(nb_navmesh_poly(nav, ref, v, &n, NULL, NULL, NULL), NB_OK);
    for (int32_t k = 0; k < n; ++k)
        for (int a = 0; a < 3; ++a)
            c[a] += v[k * 3 + a] / (float)n;
    const float dx = c[0] - p[0], dz = c[2] - p[2], len = sqrtf(dx * dx + dz * dz);
    out[0] = p[0] + (len > 0.0f ? dx / len * d : 0.0f);
    out[1] = p[1];
    out[2] = p[2] + (len > 0.0f ? dz / len * d : 0.0f);
}

/* The polygons around p: ref, and those linked to it (and so on) through a portal passing through p (1e-4 in xz):
 * for an agent standing at p, all of them are where it stands. Returns how many (at most cap) went to out. */
static int polys_around(const nb_navmesh* nav, nb_poly_ref ref, const float* p, nb_poly_ref* out, int cap)
{
    int n = 0;
    out[n++] = ref;
    for (int i = 0; i < n; ++i) {
        uint32_t poly;
        const nb_tile* t = nb_navmesh_resolve(nav, out[i], &poly);
        const nb_tile_view* v = &t->v;
        const uint32_t nv = v->poly_nverts[poly];
        for (uint32_t li = t->first_link[poly]; li != NB_NULL_LINK && n < cap; li = t->links[li].next) {
            const nb_link* l = &t->links[li];
            if (!l->ref || l->edge >= nv || v->poly_types[poly] == NB_POLY_OFFMESH)
                continue;
            const float* a = &v->verts[v->poly_verts[poly * v->nvp + l->edge] * 3];
            const float* b = &v->verts[v->poly_verts[poly * v->nvp + (l->edge + 1) % nv] * 3];
            float lo = 0.0f, hi = 1.0f; /* a tile-border link covers part of the edge */
            uint32_t lp;
            const nb_tile* lt = nb_navmesh_resolve(nav, l->ref, &lp);
            if (lt && lt->v.poly_types[lp] != NB_POLY_OFFMESH)
                nb_link_span(v, poly, l, &lt->v, lp, &lo, &hi);
            const float ex = b[0] - a[0], ez = b[2] - a[2];
            float u = ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / (ex * ex + ez * ez);
            u = u < lo ? lo : (u > hi ? hi : u);
            const float cx = a[0] + ex * u - p[0], cz = a[2] + ez * u - p[2];
            int seen = cx * cx + cz * cz > 1e-8f;
            for (int k = 0; k < n && !seen; ++k)
                seen = out[k] == l->ref;
            if (!seen) {
                uint32_t np;
                const nb_tile* nt = nb_navmesh_resolve(nav, l->ref, &np);
                if (nt && nt->v.poly_types[np] != NB_POLY_OFFMESH)
                    out[n++] = l->ref;
            }
        }
    }
    return n;
}

/* Re-planning from a path corner (a navmesh vertex, on a tile border ~40% of the time), on the audit's world:
 * - the path does not depend on which of the polygons around the corner it starts in (A* takes the start to lie
 *   in all of them: it used to enter the others at their portals' midpoints, and 5% of corners got paths up to
 *   28 m longer from some of them), and its corridor goes through no polygon twice;
 * - string-pulled through the same corridor, the path from the corner and from the same point moved 1 mm into
 *   its polygon differ in length by about 1 mm (the straight path of a corridor is the shortest path through it,
 *   so it moves with its start). Lengths in xz: the funnel works in xz, and a corner more or less changes the 3D
 *   length by its height alone. */
static void test_paths_from_corners(void)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 64;
    nb_navmesh* nav = world_navmesh(1, 100000, &cfg);
    nb_query* q = nav ? query_for(nav) : NULL;
    if (!q) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    nb_query_filter f;
    nb_query_filter_init(&f);
    enum { N = 200, CAP = 4096, AROUND = 32 };
    static float pairs[N * 6], pts[CAP * 3], a[256 * 3], b[256 * 3];
    static uint8_t status[N];
    static uint32_t offsets[N + 1];
    static nb_poly_ref corridor[1024];
    uint64_t rng = 5;
    for (int i = 0; i < 2 * N; ++i) {
        nb_poly_ref r = 0;
        CHECK_INT(nb_query_random_point(q, &f, &rng, &r, &pairs[i * 3]), NB_OK);
    }
    CHECK_INT(nb_query_find_paths(q, pairs, N, HALF, &f, 0, status, NULL, offsets, pts, CAP, NULL), NB_OK);
    int corners = 0, shared = 0, depends = 0, apart = 0, twice = 0;
    for (int i = 0; i < N; ++i) {
        if (status[i] != NB_PATH_COMPLETE)
            continue;
        nb_poly_ref eref = 0;
        float goal[3];
        CHECK_INT(nb_query_find_nearest_poly(q, &pairs[i * 6 + 3], HALF, &f, &eref, goal), NB_OK);
        for (uint32_t k = offsets[i] + 1; k + 1 < offsets[i + 1]; ++k) {
            const float* c = &pts[k * 3];
            nb_poly_ref sref = 0, around[AROUND];
            float cs[3], nudged[3];
            CHECK_INT(nb_query_find_nearest_poly(q, c, HALF, &f, &sref, cs), NB_OK);
            const int na_polys = polys_around(nav, sref, cs, around, AROUND);
            float lo = FLT_MAX, hi = 0.0f;
            for (int j = 0; j < na_polys; ++j) {
                int32_t nc = 0, na = 0, nb = 0;
                int partial = 0;
                CHECK_INT(nb_query_find_path(q, around[j], eref, cs, goal, &f, corridor, &nc, 1024, &partial), NB_OK);
                CHECK_INT(partial, 0);
                for (int32_t x = 0; x < nc; ++x)
                    for (int32_t y = x + 1; y < nc; ++y)
                        twice += corridor[x] == corridor[y];
                CHECK_INT(nb_query_straight_path(q, cs, goal, corridor, nc, a, NULL, NULL, &na, 256, 0), NB_OK);
                const float la = polyline_length_xz(a, na);
                lo = fminf(lo, la);
                hi = fmaxf(hi, la);
                if (j > 0)
                    continue;
                nudge_into(nav, sref, cs, 1e-3f, nudged);
                CHECK_INT(nb_query_straight_path(q, nudged, goal, corridor, nc, b, NULL, NULL, &nb, 256, 0), NB_OK);
                const float lb = polyline_length_xz(b, nb);
                if (fabsf(la - lb) > 3e-3f && ++apart <= 5)
                    fprintf(stderr, "  from corner (%.9g %.9g %.9g) to (%.9g %.9g %.9g): %d points, %.4f m; "
                                    "1 mm in: %d points, %.4f m\n",
                            c[0], c[1], c[2], goal[0], goal[1], goal[2], na, la, nb, lb);
            }
            ++corners;
            shared += na_polys > 1;
            if (hi - lo > 1e-3f + 1e-4f * lo && ++depends <= 5)
                fprintf(stderr, "  from corner (%.9g %.9g %.9g) to (%.9g %.9g %.9g): %.4f m to %.4f m by the "
                                "start polygon (%d around)\n",
                        c[0], c[1], c[2], goal[0], goal[1], goal[2], lo, hi, na_polys);
        }
    }
    CHECK(corners > 400);
    CHECK(shared > corners / 2);
    CHECK_INT(depends, 0);
    CHECK_INT(apart, 0);
    CHECK_INT(twice, 0); /* no corridor goes through a polygon twice */
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* ---- rays from and through a vertex many polygons share ------------------------------------------------------ */

/* Tile (tx, tz) of a 2 x 2 grid of size x size-cell tiles at origin, as a fan of triangles around the grid's middle
 * corner: one triangle per `step` cells of the tile's two far sides. */
static void fan_tile(hand_tile* h, const float* origin, int size, int step, int tx, int tz)
{
    memset(h, 0, sizeof(*h));
    h->bmin[0] = origin[0] + (float)(tx * size);
    h->bmin[1] = origin[1];
    h->bmin[2] = origin[2] + (float)(tz * size);
    h->cell_size = 1.0f;
    h->cells_x = h->cells_z = size;
    h->tile_x = tx;
    h->tile_z = tz;
    /* the square's corners clockwise (x right, z up), from the grid's middle corner */
    const int corners[4][2] = { { 0, 0 }, { 0, size }, { size, size }, { size, 0 } };
    const int mid[2] = { tx ? 0 : size, tz ? 0 : size };
    int k = 0;
    while (corners[k][0] != mid[0] || corners[k][1] != mid[1])
        ++k;
    h->verts[h->nverts][0] = mid[0];
    h->verts[h->nverts][1] = mid[1];
    ++h->nverts;
    for (int side = 1; side <= 2; ++side) { /* the two far sides: corner k+1 -> k+2 -> k+3 */
        const int* a = corners[(k + side) % 4];
        const int* b = corners[(k + side + 1) % 4];
        for (int j = side == 1 ? 0 : 1; j * step <= size; ++j) {
            h->verts[h->nverts][0] = a[0] + (b[0] - a[0]) / size * j * step;
            h->verts[h->nverts][1] = a[1] + (b[1] - a[1]) / size * j * step;
            ++h->nverts;
        }
    }
    for (int i = 1; i + 1 < h->nverts; ++i) {
        h->polys[h->npolys][0] = 0;
        h->polys[h->npolys][1] = i;
        h->polys[h->npolys][2] = i + 1;
        h->polys[h->npolys][3] = -1;
        ++h->npolys;
    }
}

/* Four tiles meet at a corner shared by 40 thin triangles (a finely cut navmesh: the audit's had 2916 tiles of
 * triangles). Rays from the corner in every direction, started in each polygon around it, and rays through it
 * at every angle, stay on the navmesh: no hit. They used to stop at t = 0 with no normal (the search around the
 * corner gave up after 32 polygons), or, through the corner, at the corner itself (the exit from a triangle
 * along the ray was read off an edge at a shallow angle, past the corner by more than the tolerance, where no
 * polygon around the corner was found). */
static void test_rays_at_a_shared_corner(void)
{
    const float origin[3] = { 480.0f, 0.0f, 480.0f }; /* float noise at 500 is what the audit's world had */
    hand_tile tiles[4];
    for (int t = 0; t < 4; ++t)
        fan_tile(&tiles[t], origin, 10, 2, t & 1, t >> 1);
    nb_navmesh* nav = ht_navmesh_at(origin, tiles, 4, 10.0f, 10.0f);
    nb_query* q = nav ? query_for(nav) : NULL;
    if (!q) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float corner[3] = { 490.0f, 0.0f, 490.0f };
    uint32_t nrefs = 0;
    nb_poly_ref refs[64];
    nb_navmesh_poly_refs(ctx, nav, refs, 64, &nrefs);
    CHECK_INT(nrefs, 40);
    int hits = 0, through_hits = 0, zero_normals = 0;
    for (int dir = 0; dir < 90; ++dir) {
        const float ang = (float)dir * (6.2831853f / 90.0f) + 0.01f;
        const float d[2] = { cosf(ang), sinf(ang) };
        const float from_corner[3] = { corner[0] + 7.0f * d[0], 0.0f, corner[2] + 7.0f * d[1] };
        const float before[3] = { corner[0] - 6.0f * d[0], 0.0f, corner[2] - 6.0f * d[1] };
        for (uint32_t i = 0; i <= nrefs; ++i) {
            /* from the corner, in every polygon around it (and the one the nearest query gives) */
            float t = -1.0f, nrm[3] = { 0, 0, 0 };
            const nb_poly_ref sref = i < nrefs ? refs[i] : poly_at(q, corner[0], corner[2]);
            CHECK_INT(nb_query_raycast(q, sref, corner, from_corner, &f, &t, nrm, NULL, NULL, 0), NB_OK);
            hits += t < 1.0f;
            zero_normals += t < 1.0f && nrm[0] == 0.0f && nrm[2] == 0.0f;
            if (t < 1.0f && hits <= 3)
                fprintf(stderr, "  ray from the corner at angle %d/90 (start polygon %u): t %g normal (%g %g)\n",
                        dir, i, t, nrm[0], nrm[2]);
        }
        /* through the corner */
        float t = -1.0f, nrm[3] = { 0, 0, 0 };
        CHECK_INT(nb_query_raycast(q, poly_at(q, before[0], before[2]), before, from_corner, &f, &t, nrm, NULL, NULL,
                                   0),
                  NB_OK);
        through_hits += t < 1.0f;
        zero_normals += t < 1.0f && nrm[0] == 0.0f && nrm[2] == 0.0f;
        if (t < 1.0f && through_hits <= 3)
            fprintf(stderr, "  ray through the corner at angle %d/90: t %g normal (%g %g)\n", dir, t, nrm[0], nrm[2]);
    }
    CHECK_INT(hits, 0);
    CHECK_INT(through_hits, 0);
    CHECK_INT(zero_normals, 0);
    /* and out of the grid, from the corner: a hit on the outer wall, with its normal */
    const float out[3] = { 490.0f, 0.0f, 505.0f };
    float t = -1.0f, nrm[3] = { 0, 0, 0 };
    CHECK_INT(nb_query_raycast(q, refs[0], corner, out, &f, &t, nrm, NULL, NULL, 0), NB_OK);
    CHECK_NEAR(t, 10.0f / 15.0f, 1e-4);
    CHECK_NEAR(nrm[2], -1.0f, 1e-4);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Thin triangles: a tile of 10 x 1 cells, each cut along its diagonal; rays along the diagonals run along edges and
 * through vertices, where the edges they leave by meet them at 5.7 degrees. */
static void test_rays_through_vertices_of_thin_triangles(void)
{
    const float origin[3] = { 480.0f, 0.0f, 480.0f };
    static hand_tile h;
    memset(&h, 0, sizeof(h));
    for (int a = 0; a < 3; ++a)
        h.bmin[a] = origin[a];
    h.cell_size = 1.0f;
    h.cells_x = 40;
    h.cells_z = 8;
    for (int j = 0; j <= 8; ++j)
        for (int i = 0; i <= 4; ++i) {
            h.verts[h.nverts][0] = 10 * i;
            h.verts[h.nverts][1] = j;
            ++h.nverts;
        }
    for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 4; ++i) {
            const int v00 = j * 5 + i, v10 = v00 + 1, v01 = v00 + 5, v11 = v00 + 6;
            const int t1[4] = { v00, v01, v11, -1 }, t2[4] = { v00, v11, v10, -1 };
            memcpy(h.polys[h.npolys++], t1, sizeof(t1));
            memcpy(h.polys[h.npolys++], t2, sizeof(t2));
        }
    nb_navmesh* nav = ht_navmesh_at(origin, &h, 1, 40.0f, 8.0f);
    nb_query* q = nav ? query_for(nav) : NULL;
    if (!q) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    nb_query_filter f;
    nb_query_filter_init(&f);
    int rays = 0, hits = 0;
    for (int j = 0; j <= 4; ++j)
        for (int k = 0; k < 20; ++k) {
            /* from a point on the diagonal line z = j + x / 10 (from its start, or partway along) to its end */
            const float u = (float)k * 0.173f;
            const float a[3] = { origin[0] + 10.0f * u, 0.0f, origin[2] + (float)j + u };
            const float b[3] = { origin[0] + 40.0f, 0.0f, origin[2] + (float)j + 4.0f };
            for (int rev = 0; rev < 2; ++rev) {
                const float* s0 = rev ? b : a;
                const float* s1 = rev ? a : b;
                float t = -1.0f, nrm[3];
                CHECK_INT(nb_query_raycast(q, poly_at(q, s0[0], s0[2]), s0, s1, &f, &t, nrm, NULL, NULL, 0), NB_OK);
                ++rays;
                if (t < 1.0f && ++hits <= 3)
                    fprintf(stderr, "  ray (%.4f %.4f) -> (%.4f %.4f): t %g normal (%g %g)\n", s0[0], s0[2], s1[0],
                            s1[2], t, nrm[0], nrm[2]);
            }
        }
    CHECK_INT(hits, 0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* A ray from a to b (from the polygon the nearest query gives for a); 1 when it reaches b. *on: a lies on the
 * navmesh (the nearest point is a itself). */
static int ray_clear(nb_query* q, const float* a, const float* b, int* on)
{
    nb_query_filter f;
    nb_query_filter_init(&f);
    nb_poly_ref r = 0;
    float near[3], t = -1.0f, nrm[3];
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, &f, &r, near), NB_OK);
    *on = r != 0 && fabsf(near[0] - a[0]) < 1e-5f && fabsf(near[2] - a[2]) < 1e-5f && fabsf(near[1] - a[1]) < 0.5f;
    if (!r)
        return 0;
    CHECK_INT(nb_query_raycast(q, r, a, b, &f, &t, nrm, NULL, NULL, 0), NB_OK);
    return t >= 1.0f;
}

/* A finely cut world (cells of 0.2, edges of at most 1 m, triangles: the audit's 2916-tile navmesh, smaller): where
 * the rays 1 mm to either side of a segment through a navmesh vertex, or from one, are clear, so is the segment
 * (39 of 1811 rays through vertices and 6 of 2015 from them were not); and a ray along each leg of a path is
 * clear. */
static void test_rays_through_vertices_of_a_fine_world(void)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 64;
    cfg.cell_size = 0.2f;
    cfg.edge_max_len = 1.0f;
    cfg.verts_per_poly = 3;
    nb_navmesh* nav = world_navmesh(1, 100000, &cfg);
    nb_query* q = nav ? query_for(nav) : NULL;
    if (!q) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    nb_query_filter f;
    nb_query_filter_init(&f);
    uint64_t rng = 17;
    uint32_t state = 99;
    int tried = 0, blocked = 0, from_tried = 0, from_blocked = 0;
    for (int i = 0; i < 3000; ++i) {
        nb_poly_ref r = 0;
        float p[3], v[NB_MAX_VERTS_PER_POLY * 3];
        int32_t nv = 0;
        CHECK_INT(nb_query_random_point(q, &f, &rng, &r, p), NB_OK);
        CHECK_INT(nb_navmesh_poly(nav, r, v, &nv, NULL, NULL, NULL), NB_OK);
        const float* c = &v[(nbt_rand(&state) % (uint32_t)nv) * 3];
        const float ang = (float)(nbt_rand(&state) % 3600) * (6.2831853f / 3600.0f);
        const float d[2] = { cosf(ang), sinf(ang) }, side[2] = { -d[1] * 1e-3f, d[0] * 1e-3f };
        const float a[3] = { c[0] - 2.0f * d[0], c[1], c[2] - 2.0f * d[1] };
        const float b[3] = { c[0] + 2.0f * d[0], c[1], c[2] + 2.0f * d[1] };
        int on_a = 0, on_c = 0, on_l = 0, on_r = 0, clear_l = 1, clear_r = 1;
        const int clear = ray_clear(q, a, b, &on_a);
        for (int k = 0; k < 2; ++k) { /* the rays 1 mm to either side */
            const float sgn = k ? -1.0f : 1.0f;
            const float a2[3] = { a[0] + sgn * side[0], a[1], a[2] + sgn * side[1] };
            const float b2[3] = { b[0] + sgn * side[0], b[1], b[2] + sgn * side[1] };
            int on = 0;
            const int ok = ray_clear(q, a2, b2, &on);
            if (k) {
                clear_r = ok;
                on_r = on;
            } else {
                clear_l = ok;
                on_l = on;
            }
        }
        if (on_a && on_l && on_r && clear_l && clear_r) {
            ++tried;
            if (!clear && ++blocked <= 3)
                fprintf(stderr, "  ray through vertex (%.4f %.4f): (%.9g %.9g %.9g) -> (%.9g %.9g %.9g) blocked\n",
                        c[0], c[2], a[0], a[1], a[2], b[0], b[1], b[2]);
        }
        /* from the vertex itself */
        const int clear_c = ray_clear(q, c, b, &on_c);
        const float c2l[3] = { c[0] + side[0], c[1], c[2] + side[1] };
        const float c2r[3] = { c[0] - side[0], c[1], c[2] - side[1] };
        const float b2l[3] = { b[0] + side[0], b[1], b[2] + side[1] };
        const float b2r[3] = { b[0] - side[0], b[1], b[2] - side[1] };
        int on1 = 0, on2 = 0;
        const int cl = ray_clear(q, c2l, b2l, &on1), cr = ray_clear(q, c2r, b2r, &on2);
        if (on_c && on1 && on2 && cl && cr) {
            ++from_tried;
            if (!clear_c && ++from_blocked <= 3)
                fprintf(stderr, "  ray from vertex (%.9g %.9g %.9g) -> (%.9g %.9g %.9g) blocked\n", c[0], c[1], c[2],
                        b[0], b[1], b[2]);
        }
    }
    /* the legs of paths */
    enum { N = 300, CAP = 8192 };
    static float pairs[N * 6], pts[CAP * 3];
    static uint8_t status[N];
    static uint32_t offsets[N + 1];
    for (int i = 0; i < 2 * N; ++i) {
        nb_poly_ref r = 0;
        CHECK_INT(nb_query_random_point(q, &f, &rng, &r, &pairs[i * 3]), NB_OK);
    }
    CHECK_INT(nb_query_find_paths(q, pairs, N, HALF, &f, 0, status, NULL, offsets, pts, CAP, NULL), NB_OK);
    int legs = 0, legs_blocked = 0;
    for (int i = 0; i < N; ++i)
        for (uint32_t k = offsets[i]; status[i] == NB_PATH_COMPLETE && k + 1 < offsets[i + 1]; ++k) {
            int on = 0;
            ++legs;
            if (!ray_clear(q, &pts[k * 3], &pts[k * 3 + 3], &on) && ++legs_blocked <= 3)
                fprintf(stderr, "  leg (%.9g %.9g %.9g) -> (%.9g %.9g %.9g) blocked\n", pts[k * 3], pts[k * 3 + 1],
                        pts[k * 3 + 2], pts[k * 3 + 3], pts[k * 3 + 4], pts[k * 3 + 5]);
        }
    CHECK(tried > 500);
    CHECK(from_tried > 500);
    CHECK(legs > 1000);
    CHECK_INT(blocked, 0);
    CHECK_INT(from_blocked, 0);
    CHECK_INT(legs_blocked, 0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_funnel_apex_on_portal_line);
    RUN(test_funnel_walks_back_past_its_portal_cache);
    RUN(test_exhausted_search);
    RUN(test_border_portal_ends_at_vertices);
    RUN(test_ray_across_a_border_stays_on_its_floor);
    RUN(test_offmesh_link_on_a_straight_path);
    RUN(test_path_from_shared_edge);
    RUN(test_paths_from_corners);
    RUN(test_rays_at_a_shared_corner);
    RUN(test_rays_through_vertices_of_thin_triangles);
    RUN(test_rays_through_vertices_of_a_fine_world);
    nb_context_destroy(ctx);
    return nbt_finish("test_query_degenerate");
}
