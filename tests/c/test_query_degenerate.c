/* Queries from points on polygon outlines (the second audit of the runtime): a path corner lies on a polygon edge,
 * a tile border or a vertex, and agents re-plan from there. Paths from such starts and to such ends, the funnel
 * where the apex lies on the line of a later portal, and rays from tile corners and through vertices. Small navmeshes
 * built polygon by polygon pin each case down; a generated world checks the same properties at scale. */
#include <float.h>

#include "navbake.h"
#include "nbtest_level.h"
#include "nbtest_mesh.h"

static nb_context* ctx;

static const float HALF[3] = { 2.0f, 4.0f, 2.0f };

/* ---- navmeshes by hand --------------------------------------------------------------------------------------- */

#define HT_MAX_VERTS 16
#define HT_MAX_POLYS 8
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

/* Adds tile h to nav; 0 on failure (a failed check). */
static int ht_add(nb_navmesh* nav, const hand_tile* h)
{
    uint16_t verts[HT_MAX_VERTS * 3], polys[HT_MAX_POLYS * 2 * HT_NVP], regs[HT_MAX_POLYS], flags[HT_MAX_POLYS];
    uint8_t areas[HT_MAX_POLYS];
    for (int i = 0; i < h->nverts; ++i) {
        verts[i * 3] = (uint16_t)h->verts[i][0];
        verts[i * 3 + 1] = 0;
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
    m.bmax[1] = h->bmin[1] + 1.0f;
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

static nb_navmesh* ht_navmesh(const hand_tile* tiles, int n, float tile_width, float tile_depth)
{
    nb_navmesh_params np;
    memset(&np, 0, sizeof(np));
    np.tile_width = tile_width;
    np.tile_depth = tile_depth;
    np.max_tiles = 16;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &np, &nav), NB_OK);
    for (int i = 0; i < n && nav; ++i)
        if (!ht_add(nav, &tiles[i])) {
            nb_navmesh_destroy(ctx, nav);
            return NULL;
        }
    return nav;
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

static float polyline_length(const float* pts, int32_t n)
{
    float len = 0.0f;
    for (int32_t k = 1; k < n; ++k)
        len += dist3(&pts[(k - 1) * 3], &pts[k * 3]);
    return len;
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

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_funnel_apex_on_portal_line);
    RUN(test_offmesh_link_on_a_straight_path);
    nb_context_destroy(ctx);
    return nbt_finish("test_query_degenerate");
}
