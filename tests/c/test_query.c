/* Path queries: corridors, a pillar, a U, islands, area costs, flags, off-mesh links, raycast, random points,
 * move along surface, distance to wall, the batch, no allocation during queries, every status, tiled vs solo. */
#include "navbake.h"
#include "nbtest.h"
#include "nbtest_mesh.h"
#include "obj.h"
#include "../../c/src/navmesh_internal.h"

static nb_context* ctx;

/* ---- level building ------------------------------------------------------------------------------------------ */

static void mesh_bounds(const float* v, uint32_t nv, float* bmin, float* bmax)
{
    for (int k = 0; k < 3; ++k)
        bmin[k] = bmax[k] = v[k];
    for (uint32_t i = 1; i < nv; ++i)
        for (int k = 0; k < 3; ++k) {
            bmin[k] = fminf(bmin[k], v[i * 3 + k]);
            bmax[k] = fmaxf(bmax[k], v[i * 3 + k]);
        }
}

/* A solo bake (default config) as a one-tile navmesh whose tile (0, 0) covers the whole level. */
static nb_navmesh* nav_from_triangles(const float* v, uint32_t nv, const uint32_t* t, uint32_t nt,
                                      const nb_volume* vols, uint32_t nvols, const nb_offmesh_link* links,
                                      uint32_t nlinks)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = v;
    in.mesh.vertex_count = nv;
    in.mesh.indices = t;
    in.mesh.triangle_count = nt;
    in.volumes = vols;
    in.volume_count = nvols;
    uint8_t* data = NULL;
    size_t size = 0;
    nb_status st = nb_bake_tile(ctx, &in, NULL, links, nlinks, 0, 0, &data, &size, NULL);
    CHECK_INT(st, NB_OK);
    if (st != NB_OK) {
        fprintf(stderr, "  bake: %s\n", nb_context_message(ctx));
        return NULL;
    }
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    float bmax[3];
    mesh_bounds(v, nv, p.origin, bmax);
    p.tile_width = p.tile_depth = fmaxf(bmax[0] - p.origin[0], bmax[2] - p.origin[2]) + 1.0f;
    p.max_tiles = 4;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &p, &nav), NB_OK);
    if (nav)
        CHECK_INT(nb_navmesh_add_tile(ctx, nav, data, size), NB_OK);
    nb_bytes_free(ctx, data);
    return nav;
}

static nb_navmesh* nav_from(const mesh_builder* m, const nb_volume* vols, uint32_t nvols, const nb_offmesh_link* links,
                            uint32_t nlinks)
{
    return nav_from_triangles(m->v, m->nv, m->t, m->nt, vols, nvols, links, nlinks);
}

static nb_query* query_for(const nb_navmesh* nav)
{
    nb_query* q = NULL;
    CHECK_INT(nb_query_create(ctx, nav, 0, &q), NB_OK);
    return q;
}

/* ---- path helpers ---------------------------------------------------------------------------------------------- */

static const float HALF[3] = { 2.0f, 4.0f, 2.0f };

typedef struct route {
    nb_poly_ref path[256];
    int32_t npath;
    int partial;
    float pts[3 * 256];
    uint8_t flags[256];
    nb_poly_ref refs[256];
    int32_t npts;
    float length;
} route;

static float polyline_length(const float* p, int n)
{
    float len = 0.0f;
    for (int i = 1; i < n; ++i) {
        const float dx = p[i * 3] - p[i * 3 - 3], dy = p[i * 3 + 1] - p[i * 3 - 2], dz = p[i * 3 + 2] - p[i * 3 - 1];
        len += sqrtf(dx * dx + dy * dy + dz * dz);
    }
    return len;
}

/* nearest x2 + A* + straight path, one call at a time. Returns 0 when no start or end polygon. */
static int find_route(nb_query* q, const float* a, const float* b, const nb_query_filter* f, int options, route* r)
{
    memset(r, 0, sizeof(*r));
    nb_poly_ref sr = 0, er = 0;
    float sa[3], sb[3];
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, f, &sr, sa), NB_OK);
    CHECK_INT(nb_query_find_nearest_poly(q, b, HALF, f, &er, sb), NB_OK);
    if (!sr || !er)
        return 0;
    CHECK_INT(nb_query_find_path(q, sr, er, sa, sb, f, r->path, &r->npath, 256, &r->partial), NB_OK);
    CHECK_INT(nb_query_straight_path(q, sa, sb, r->path, r->npath, r->pts, r->flags, r->refs, &r->npts, 256, options),
              NB_OK);
    r->length = polyline_length(r->pts, r->npts);
    return 1;
}

static float dist_xz(const float* a, const float* b)
{
    return sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static float dist3(const float* a, const float* b)
{
    return sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* ---- analytic shortest paths around one convex obstacle (xz) --------------------------------------------------- */

/* 1 when the segment ab passes through the interior of the convex polygon o (n vertices, either winding). */
static int blocked(const float* a, const float* b, const float* o, int n)
{
    /* Clip the segment against each edge's inner half-plane (Cyrus-Beck); blocked when a piece of positive
     * length remains strictly inside. */
    double area = 0;
    for (int i = 0; i < n; ++i) {
        const float* p = &o[i * 2];
        const float* q = &o[((i + 1) % n) * 2];
        area += (double)p[0] * q[1] - (double)q[0] * p[1];
    }
    const double sgn = area > 0 ? 1.0 : -1.0;
    double lo = 0, hi = 1;
    for (int i = 0; i < n; ++i) {
        const float* p = &o[i * 2];
        const float* q = &o[((i + 1) % n) * 2];
        /* inside: sgn * cross(q - p, x - p) > eps */
        const double ex = q[0] - p[0], ez = q[1] - p[1];
        const double fa = sgn * (ex * (a[2] - p[1]) - ez * (a[0] - p[0])) - 1e-6;
        const double fb = sgn * (ex * (b[2] - p[1]) - ez * (b[0] - p[0])) - 1e-6;
        if (fa <= 0 && fb <= 0)
            return 0;
        if (fa < 0)
            lo = fmax(lo, fa / (fa - fb));
        else if (fb < 0)
            hi = fmin(hi, fa / (fa - fb));
        if (lo >= hi - 1e-9)
            return 0;
    }
    return 1;
}

/* Length of the shortest xz path from a to b around the convex obstacle o: Dijkstra over a, b and o's vertices. */
static float shortest_around(const float* a, const float* b, const float* o, int n)
{
    float pts[16][3];
    const int np = n + 2;
    memcpy(pts[0], a, sizeof(pts[0]));
    memcpy(pts[1], b, sizeof(pts[1]));
    for (int i = 0; i < n; ++i) {
        pts[i + 2][0] = o[i * 2];
        pts[i + 2][1] = 0;
        pts[i + 2][2] = o[i * 2 + 1];
    }
    float d[16];
    int done[16] = { 0 };
    for (int i = 0; i < np; ++i)
        d[i] = 1e30f;
    d[0] = 0;
    for (;;) {
        int u = -1;
        for (int i = 0; i < np; ++i)
            if (!done[i] && (u < 0 || d[i] < d[u]))
                u = i;
        if (u < 0 || u == 1)
            break;
        done[u] = 1;
        for (int v = 0; v < np; ++v)
            if (!done[v] && !blocked(pts[u], pts[v], o, n) && d[u] + dist_xz(pts[u], pts[v]) < d[v])
                d[v] = d[u] + dist_xz(pts[u], pts[v]);
    }
    return d[1];
}

/* The outline of a box obstacle [x0, x1] x [z0, z1] (cell-aligned) eroded by the default agent: grown by the
 * radius (2 cells), each corner notched by one cell (the chamfer distance, 2 straight / 3 diagonal, erodes the
 * diagonal neighbour of the corner cell but not the cells beyond it). */
static void eroded_box(float x0, float z0, float x1, float z1, float* o)
{
    const float r = 0.6f, c = 0.3f;
    const float v[16] = { x0 - r, z0 - r + c, x0 - r + c, z0 - r, x1 + r - c, z0 - r, x1 + r, z0 - r + c,
                          x1 + r, z1 + r - c, x1 + r - c, z1 + r, x0 - r + c, z1 + r, x0 - r, z1 + r - c };
    memcpy(o, v, sizeof(v));
}

/* ---- tests ------------------------------------------------------------------------------------------------------ */

/* A straight corridor: two points, exactly the segment; polygons wind as the runtime expects. */
static void test_corridor(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 18, 4.2f, 0);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 2, 0, 2 }, b[3] = { 16, 0, 2.5f };
    route r;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 0);
    CHECK_INT(r.npts, 2);
    CHECK_NEAR(r.length, dist3(a, b), 1e-3);
    CHECK_INT(r.flags[0], NB_STRAIGHT_POINT_START);
    CHECK_INT(r.flags[r.npts - 1], NB_STRAIGHT_POINT_END);
    CHECK_INT(r.refs[0], r.path[0]);
    CHECK_INT(r.refs[r.npts - 1], 0);
    CHECK_NEAR(r.pts[0], 2, 1e-4);
    CHECK(r.pts[1] >= -0.01f && r.pts[1] <= 0.25f); /* the voxel floor: up to a cell above the triangle */
    CHECK_NEAR(r.pts[5], 2.5, 1e-4);

    /* Every polygon winds clockwise in (x, z) read as a math frame (the convention of query.c). */
    uint32_t count = 0;
    nb_poly_ref refs[64];
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, refs, 64, &count), NB_OK);
    CHECK(count >= 1);
    for (uint32_t i = 0; i < count && i < 64; ++i) {
        float v[3 * NB_MAX_VERTS_PER_POLY];
        int32_t n = 0;
        CHECK_INT(nb_navmesh_poly(nav, refs[i], v, &n, NULL, NULL, NULL), NB_OK);
        double area = 0;
        for (int k = 1; k + 1 < n; ++k)
            area += ((double)v[k * 3] - v[0]) * ((double)v[k * 3 + 5] - v[2]) -
                    ((double)v[k * 3 + 2] - v[2]) * ((double)v[k * 3 + 3] - v[0]);
        CHECK(area < 0);
    }
    /* Same polygon: a one-polygon corridor. */
    nb_poly_ref path[4];
    int32_t np = 0;
    int partial = 1;
    CHECK_INT(nb_query_find_path(q, r.path[0], r.path[0], a, a, &f, path, &np, 4, &partial), NB_OK);
    CHECK_INT(np, 1);
    CHECK_INT(partial, 0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Around a square pillar: the path bends at the eroded corners and is as long as the analytic shortest path.
 * The pillar's faces sit mid-cell (x, z in 7.65 .. 10.35) so it covers exactly the cells 7.5 .. 10.5; eroded by the
 * agent radius 0.6 it blocks 6.9 .. 11.1. */
static void test_pillar(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 18, 18, 0);
    add_box(&m, 7.65f, 0, 7.65f, 10.35f, 3, 10.35f);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 3, 0, 8.2f }, b[3] = { 15, 0, 8.0f };
    const float c1[3] = { 6.9f, 0, 6.9f }, c2[3] = { 11.1f, 0, 6.9f };
    float obstacle[16];
    eroded_box(7.5f, 7.5f, 10.5f, 10.5f, obstacle);
    const float expect = shortest_around(a, b, obstacle, 8);
    CHECK(expect > dist_xz(a, b) + 0.3f); /* the pillar is in the way */
    route r;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 0);
    CHECK_NEAR(r.length, expect, expect * 0.01);
    CHECK(r.npts >= 4);
    /* The bends lie on the pillar's eroded outline (the side z = 6.9 between the corners, within the contour
     * simplification's 1.3 cells), the first and last at its corners. */
    for (int i = 1; i + 1 < r.npts; ++i) {
        const float* p = &r.pts[i * 3];
        CHECK(p[0] > 6.9f - 0.05f && p[0] < 11.1f + 0.05f);
        CHECK(p[2] > 6.9f - 0.05f && p[2] < 6.9f + 0.4f);
    }
    if (r.npts >= 4) {
        CHECK(dist_xz(&r.pts[3], c1) < 0.45f);
        CHECK(dist_xz(&r.pts[(r.npts - 2) * 3], c2) < 0.45f);
    }
    /* Crossing points lie on the same polyline: the length does not change. */
    route rc;
    CHECK(find_route(q, a, b, &f, NB_STRAIGHT_ALL_CROSSINGS, &rc));
    CHECK(rc.npts >= r.npts);
    CHECK_NEAR(rc.length, r.length, 1e-3);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* A U: a wall block fills the floor between the legs (its faces mid-cell: it covers the cells x 3 .. 9,
 * z 0 .. 15). Down one leg, across, up the other; the bends are the block's corners eroded by the radius 0.6. */
static void test_u_corridor(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 12, 18, 0);
    add_box(&m, 3.15f, 0, 0, 8.85f, 3, 14.85f);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 1.5f, 0, 1.5f }, b[3] = { 10.5f, 0, 1.5f };
    const float c1[3] = { 2.4f, 0, 15.6f }, c2[3] = { 9.6f, 0, 15.6f };
    float obstacle[16];
    eroded_box(3.0f, -100.0f, 9.0f, 15.0f, obstacle); /* the floor ends at z = 0: no way round below */
    const float expect = shortest_around(a, b, obstacle, 8);
    CHECK(expect > 30.0f);
    route r;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 0);
    CHECK_NEAR(r.length, expect, expect * 0.01);
    CHECK(r.npts >= 4);
    if (r.npts >= 4) {
        CHECK(dist_xz(&r.pts[3], c1) < 0.45f);
        CHECK(dist_xz(&r.pts[(r.npts - 2) * 3], c2) < 0.45f);
    }
    for (int i = 1; i + 1 < r.npts; ++i) /* all bends on the block's far side, within the corner notches */
        CHECK(r.pts[i * 3 + 2] > 15.2f && r.pts[i * 3 + 2] < 16.0f);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Two islands: the path is partial and ends at the reachable point closest to the goal. */
static void test_islands(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 8.1f, 6, 0); /* walkable x 0.9 .. 7.2: open edges lose the ledge cell and the radius */
    add_floor(&m, 12, 0, 20.1f, 6, 0);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 2, 0, 2 }, b[3] = { 16, 0, 4 };
    route r;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 1);
    CHECK(r.npts >= 2);
    const float* last = &r.pts[(r.npts - 1) * 3];
    CHECK_NEAR(last[0], 7.2, 0.05);
    CHECK_NEAR(last[2], 4.0, 0.05);
    CHECK_NEAR(r.length, dist3(r.pts, last), 1e-3);

    /* The batch says the same. */
    const float pairs[12] = { 2, 0, 2, 16, 0, 4, 2, 0, 2, 5, 0, 4 };
    uint8_t status[2];
    float lengths[2], pts[3 * 16];
    uint32_t offsets[3], needed = 0;
    CHECK_INT(nb_query_find_paths(q, pairs, 2, HALF, &f, 0, status, lengths, offsets, pts, 16, &needed), NB_OK);
    CHECK_INT(status[0], NB_PATH_PARTIAL);
    CHECK_INT(status[1], NB_PATH_COMPLETE);
    CHECK_NEAR(lengths[0], r.length, 1e-4);
    CHECK_NEAR(pts[(offsets[1] - 1) * 3], 7.2, 0.05);
    /* Far from everything: no polygon. */
    const float far_pair[6] = { 50, 0, 50, 2, 0, 2 };
    CHECK_INT(nb_query_find_paths(q, far_pair, 1, HALF, &f, 0, status, lengths, offsets, pts, 16, &needed), NB_OK);
    CHECK_INT(status[0], NB_PATH_NONE);
    CHECK_INT(offsets[1], 0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

static int path_has_area(const nb_navmesh* nav, const route* r, uint8_t area)
{
    for (int i = 0; i < r->npath; ++i) {
        uint8_t a = 0;
        nb_navmesh_poly(nav, r->path[i], NULL, NULL, &a, NULL, NULL);
        if (a == area)
            return 1;
    }
    return 0;
}

/* A costly area is avoided while a cheaper detour exists and crossed when it does not. */
static void test_area_cost(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 18, 12, 0);
    nb_volume vol;
    memset(&vol, 0, sizeof(vol));
    vol.type = NB_VOLUME_BOX;
    vol.area = 10;
    const float lo[3] = { 7, -1, -1 }, hi[3] = { 11, 1, 8 };
    memcpy(vol.bmin, lo, sizeof(lo));
    memcpy(vol.bmax, hi, sizeof(hi));
    nb_navmesh* nav = nav_from(&m, &vol, 1, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 2, 0, 3 }, b[3] = { 16, 0, 3 };

    route cheap, costly;
    CHECK(find_route(q, a, b, &f, 0, &cheap));
    CHECK(path_has_area(nav, &cheap, 10)); /* at cost 1 the straight line crosses it */
    CHECK_NEAR(cheap.length, dist3(a, b), 0.05);
    f.area_cost[10] = 10.0f;
    CHECK(find_route(q, a, b, &f, 0, &costly));
    CHECK_INT(costly.partial, 0);
    CHECK(!path_has_area(nav, &costly, 10));
    CHECK(costly.length > cheap.length + 4.0f);
    for (int i = 0; i < costly.npts; ++i) /* the detour runs through the lane beyond z = 8 */
        if (costly.pts[i * 3] > 7.5f && costly.pts[i * 3] < 10.5f)
            CHECK(costly.pts[i * 3 + 2] > 7.9f);

    /* Area crossings: entering and leaving the strip add points at its borders (x ~ 7 and 11). */
    nb_query_filter_init(&f);
    route cross;
    CHECK(find_route(q, a, b, &f, NB_STRAIGHT_AREA_CROSSINGS, &cross));
    CHECK_INT(cross.npts, 4);
    if (cross.npts == 4) {
        CHECK_NEAR(cross.pts[3], 7.0, 0.45);
        CHECK_NEAR(cross.pts[6], 11.0, 0.45);
        CHECK_INT(cross.flags[1], 0);
    }
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);

    /* The strip across the whole floor: no detour, the costly area is crossed. */
    const float hi2[3] = { 11, 1, 13 };
    memcpy(vol.bmax, hi2, sizeof(hi2));
    nav = nav_from(&m, &vol, 1, NULL, 0);
    q = query_for(nav);
    f.area_cost[10] = 10.0f;
    route forced;
    CHECK(find_route(q, a, b, &f, 0, &forced));
    CHECK_INT(forced.partial, 0);
    CHECK(path_has_area(nav, &forced, 10));
    CHECK_NEAR(forced.length, dist3(a, b), 0.05);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Two rooms joined by a door: flagging the door's polygon and excluding the flag blocks the way. */
static void test_exclude_flags(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 8.1f, 8.1f, 0);
    add_floor(&m, 7.8f, 2.7f, 10.2f, 5.4f, 0); /* walkable z 3.6 .. 4.5 */
    add_floor(&m, 9.9f, 0, 18, 8.1f, 0);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 2, 0, 6 }, b[3] = { 16, 0, 2 }, door[3] = { 8.4f, 0, 4 };
    nb_poly_ref door_ref = 0, sref = 0, eref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, door, HALF, &f, &door_ref, NULL), NB_OK);
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, &f, &sref, NULL), NB_OK);
    CHECK_INT(nb_query_find_nearest_poly(q, b, HALF, &f, &eref, NULL), NB_OK);
    CHECK(door_ref != 0 && door_ref != sref && door_ref != eref);
    route r;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 0);
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, nav, door_ref, 0x2), NB_OK);
    f.exclude_flags = 0x2;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 1);
    for (int i = 0; i < r.npath; ++i)
        CHECK(r.path[i] != door_ref);
    /* include flags work the same way: a door not included is closed too. */
    nb_query_filter_init(&f);
    f.include_flags = 0x1;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 1);
    f.include_flags = 0x3;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 0);
    /* The nearest-polygon query respects the filter: the door itself is not found when excluded. */
    f.exclude_flags = 0x2;
    nb_poly_ref got = 0;
    const float small[3] = { 0.3f, 1.0f, 0.3f };
    CHECK_INT(nb_query_find_nearest_poly(q, door, small, &f, &got, NULL), NB_OK);
    CHECK(got != door_ref);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* The U with a one-way off-mesh link across its gap: taken when it is shorter, never against its direction. */
static void test_offmesh(void)
{
    /* The right leg is a step lower, reached from the bottom by a ramp (a floor piece sloping down). */
    mesh_builder m2 = { 0 };
    add_floor(&m2, 0, 0, 3, 12, 0);
    add_floor(&m2, 3, 9, 9, 12, 0);
    {
        /* ramp from x = 9 (y 0) to x = 12 (y -1) over z 9..12, then the lower leg */
        const uint32_t p0 = add_vert(&m2, 9, 0, 9), p1 = add_vert(&m2, 9, 0, 12), p2 = add_vert(&m2, 12, -1, 9),
                       p3 = add_vert(&m2, 12, -1, 12);
        const uint32_t tris[6] = { p0, p1, p2, p2, p1, p3 };
        memcpy(&m2.t[m2.nt * 3], tris, sizeof(tris));
        m2.nt += 2;
        add_floor(&m2, 9, 0, 12, 9, -1.0f);
    }
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    const float ls[3] = { 2.2f, 0, 2 }, le[3] = { 9.8f, -1.0f, 2 };
    memcpy(link.start, ls, sizeof(ls));
    memcpy(link.end, le, sizeof(le));
    link.radius = 0.5f;
    link.user_id = 7;
    nb_navmesh* nav = nav_from(&m2, NULL, 0, &link, 1);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 1.5f, 0, 1 }, b[3] = { 10.5f, -1.0f, 1 };
    route r;
    CHECK(find_route(q, a, b, &f, 0, &r));
    CHECK_INT(r.partial, 0);
    int offmesh_polys = 0;
    for (int i = 0; i < r.npath; ++i) {
        int om = 0;
        nb_navmesh_poly(nav, r.path[i], NULL, NULL, NULL, NULL, &om);
        offmesh_polys += om;
    }
    CHECK_INT(offmesh_polys, 1);
    /* The straight path goes start -> link start -> link end -> end, the link's points flagged. */
    CHECK_INT(r.npts, 4);
    if (r.npts == 4) {
        CHECK(dist_xz(&r.pts[3], ls) < 0.05f);
        CHECK(dist_xz(&r.pts[6], le) < 0.05f);
        CHECK(r.flags[1] & NB_STRAIGHT_POINT_OFFMESH);
        CHECK(r.flags[2] & NB_STRAIGHT_POINT_OFFMESH);
        int om = 0;
        nb_navmesh_poly(nav, r.refs[1], NULL, NULL, NULL, NULL, &om);
        CHECK_INT(om, 1); /* the link's start point carries the link's polygon */
        CHECK_INT(r.flags[0], NB_STRAIGHT_POINT_START);
        CHECK_INT(r.flags[3], NB_STRAIGHT_POINT_END);
    }
    CHECK(r.length < 12.0f);
    /* Starting on a link's start (here one that lies on the floor): that first point is where the link is taken.
     * It was a plain start, the link's polygon nowhere in the refs. The end's ref is 0. */
    {
        nb_offmesh_link on_floor = link;
        on_floor.start[0] = 1.5f;
        nb_navmesh* nav2 = nav_from(&m2, NULL, 0, &on_floor, 1);
        nb_query* q2 = query_for(nav2);
        route on;
        CHECK(find_route(q2, on_floor.start, b, &f, 0, &on));
        CHECK(on.npts >= 3);
        CHECK_INT(on.flags[0], NB_STRAIGHT_POINT_START | NB_STRAIGHT_POINT_OFFMESH);
        nb_offmesh_link got;
        CHECK_INT(nb_navmesh_offmesh_link(nav2, on.refs[0], &got, NULL), NB_OK);
        CHECK_INT(got.user_id, 7);
        CHECK_INT(on.flags[1], NB_STRAIGHT_POINT_OFFMESH);
        CHECK(on.refs[on.npts - 1] == 0 && (on.flags[on.npts - 1] & NB_STRAIGHT_POINT_END));
        nb_query_destroy(ctx, q2);
        nb_navmesh_destroy(ctx, nav2);
    }
    /* Reverse: the link is one way, so the path walks around the U. */
    route back;
    CHECK(find_route(q, b, a, &f, 0, &back));
    CHECK_INT(back.partial, 0);
    for (int i = 0; i < back.npath; ++i) {
        int om = 0;
        nb_navmesh_poly(nav, back.path[i], NULL, NULL, NULL, NULL, &om);
        CHECK_INT(om, 0);
    }
    CHECK(back.length > 20.0f);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Raycasts in a corridor 18 x 4.2: walkable x 0.9 .. 17.1, z 0.9 .. 3.3 (the outermost cells are ledges, then
 * the radius 0.6). */
static void test_raycast(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 18, 4.2f, 0);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 2, 0, 2 };
    nb_poly_ref sref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, &f, &sref, NULL), NB_OK);
    float t = -1, n[3];
    nb_poly_ref path[32];
    int32_t np = 0;
    const float end_x[3] = { 20, 0, 2 };
    CHECK_INT(nb_query_raycast(q, sref, a, end_x, &f, &t, n, path, &np, 32), NB_OK);
    CHECK_NEAR(t, (17.1 - 2.0) / 18.0, 1e-3);
    CHECK_NEAR(n[0], -1, 1e-4);
    CHECK_NEAR(n[2], 0, 1e-4);
    CHECK(np >= 1);
    CHECK_INT(path[0], sref);
    const float end_z[3] = { 5, 0, 10 };
    CHECK_INT(nb_query_raycast(q, sref, a, end_z, &f, &t, n, NULL, NULL, 0), NB_OK);
    /* from (2, 2) toward (5, 10): reaches z = 3.3 at t = 1.3 / 8 */
    CHECK_NEAR(t, 1.3 / 8.0, 1e-3);
    CHECK_NEAR(n[2], -1, 1e-4);
    const float inside[3] = { 15, 0, 3 };
    CHECK_INT(nb_query_raycast(q, sref, a, inside, &f, &t, n, path, &np, 32), NB_OK);
    CHECK_NEAR(t, 1.0, 1e-6);
    CHECK_NEAR(n[0], 0, 1e-6);
    CHECK_NEAR(n[2], 0, 1e-6);
    nb_poly_ref eref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, inside, HALF, &f, &eref, NULL), NB_OK);
    CHECK_INT(path[np - 1], eref);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Random points: on the mesh, the same for the same seed, area-weighted between two floors. */
static void test_random_points(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 6, 6, 0);   /* walkable 4.2 x 4.2 */
    add_floor(&m, 9, 0, 21, 6, 1); /* walkable 10.2 x 4.2, one unit up */
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    uint64_t s1 = 42, s2 = 42, s3 = 43;
    int on_b = 0, differs = 0;
    const int N = 4000;
    for (int i = 0; i < N; ++i) {
        nb_poly_ref r1 = 0, r2 = 0, r3 = 0;
        float p1[3], p2[3], p3[3];
        CHECK_INT(nb_query_random_point(q, &f, &s1, &r1, p1), NB_OK);
        CHECK_INT(nb_query_random_point(q, &f, &s2, &r2, p2), NB_OK);
        CHECK_INT(nb_query_random_point(q, &f, &s3, &r3, p3), NB_OK);
        CHECK(r1 != 0);
        CHECK_INT(r1, r2);
        CHECK(p1[0] == p2[0] && p1[1] == p2[1] && p1[2] == p2[2]);
        differs += p1[0] != p3[0];
        if (i < 200) { /* on the polygon, on its surface */
            float c[3], h = -99;
            int over = 0;
            CHECK_INT(nb_query_closest_point_on_poly(q, r1, p1, c, &over), NB_OK);
            CHECK_INT(over, 1);
            CHECK_INT(nb_query_poly_height(q, r1, p1, &h), NB_OK);
            CHECK_NEAR(h, p1[1], 1e-4);
        }
        const int b = p1[0] > 8;
        on_b += b;
        CHECK(p1[1] >= (b ? 1.0f : 0.0f) - 0.01f && p1[1] <= (b ? 1.0f : 0.0f) + 0.25f);
        CHECK(b ? (p1[0] > 9.85f && p1[0] < 20.15f) : (p1[0] > 0.85f && p1[0] < 5.15f));
        CHECK(p1[2] > 0.85f && p1[2] < 5.15f);
    }
    CHECK(differs > N - 10);
    const double expect = (10.2 * 4.2) / (10.2 * 4.2 + 4.2 * 4.2);
    CHECK_NEAR((double)on_b / N, expect, 0.03);

    /* Around a point: inside the circle, on the mesh, reachable only (not the other island). */
    const float c[3] = { 3, 0, 3 };
    nb_poly_ref cref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, c, HALF, &f, &cref, NULL), NB_OK);
    uint64_t s = 7;
    double sx = 0;
    for (int i = 0; i < 500; ++i) {
        nb_poly_ref r = 0;
        float p[3];
        CHECK_INT(nb_query_random_point_around(q, cref, c, 1.5f, &f, &s, &r, p), NB_OK);
        CHECK(r != 0);
        CHECK(dist_xz(p, c) <= 1.5f + 1e-4f);
        CHECK(p[1] >= -0.01f && p[1] <= 0.25f);
        sx += p[0] - c[0];
    }
    CHECK_NEAR(sx / 500, 0.0, 0.15); /* centred: the circle lies inside the floor (0.9 .. 5.1) */
    /* A radius larger than the island: points all over the island, never on the other floor. */
    for (int i = 0; i < 200; ++i) {
        nb_poly_ref r = 0;
        float p[3];
        CHECK_INT(nb_query_random_point_around(q, cref, c, 30.0f, &f, &s, &r, p), NB_OK);
        CHECK(p[0] < 6);
    }
    /* No usable polygon (a filter that excludes them all): ref 0 and the point at the origin, never left as it
     * was (the native tool's pairs were uninitialized memory, now and then NaN). */
    nb_query_filter none;
    nb_query_filter_init(&none);
    none.exclude_flags = 0xffff;
    float p[3] = { NAN, NAN, NAN };
    nb_poly_ref r = 99;
    CHECK_INT(nb_query_random_point(q, &none, &s, &r, p), NB_OK);
    CHECK(r == 0 && p[0] == 0.0f && p[1] == 0.0f && p[2] == 0.0f);
    p[0] = p[1] = p[2] = NAN;
    r = 99;
    CHECK_INT(nb_query_random_point_around(q, cref, c, 1.5f, &none, &s, &r, p), NB_OK);
    CHECK(r == 0 && p[0] == 0.0f && p[1] == 0.0f && p[2] == 0.0f);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Closest point and height on a ramp's detail surface. */
static void test_closest_and_height(void)
{
    mesh_builder m = { 0 };
    const uint32_t p0 = add_vert(&m, 0, 0, 0), p1 = add_vert(&m, 0, 0, 6), p2 = add_vert(&m, 12, 3, 0),
                   p3 = add_vert(&m, 12, 3, 6);
    const uint32_t tris[6] = { p0, p1, p2, p2, p1, p3 };
    memcpy(m.t, tris, sizeof(tris));
    m.nt = 2;
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float pos[3] = { 6, 5, 3 };
    nb_poly_ref ref = 0;
    float nearest[3];
    const float tall[3] = { 2, 8, 2 };
    CHECK_INT(nb_query_find_nearest_poly(q, pos, tall, &f, &ref, nearest), NB_OK);
    CHECK(ref != 0);
    /* The surface is the voxel floor: within a cell height (plus the detail error) of the ramp's plane. */
    CHECK_NEAR(nearest[1], 1.5, 0.45);
    CHECK_NEAR(nearest[0], 6, 1e-5);
    float h = 0;
    CHECK_INT(nb_query_poly_height(q, ref, pos, &h), NB_OK);
    CHECK_NEAR(h, nearest[1], 1e-5);
    /* Outside the polygon: no height; the closest point is on its outline. */
    const float out[3] = { 6, 0, -3 };
    uint32_t count = 0;
    nb_poly_ref refs[64];
    nb_navmesh_poly_refs(ctx, nav, refs, 64, &count);
    int outside_any = 1;
    for (uint32_t i = 0; i < count; ++i) {
        float c[3];
        int over = 1;
        CHECK_INT(nb_query_closest_point_on_poly(q, refs[i], out, c, &over), NB_OK);
        CHECK_INT(over, 0);
        CHECK(c[2] >= 0.6f - 1e-3f);
        outside_any &= nb_query_poly_height(q, refs[i], out, &h) == NB_ERR_NOT_FOUND;
    }
    CHECK(outside_any);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Move along surface slides along a wall; distance to wall is analytic in a corridor. */
static void test_move_and_wall(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 18, 4.2f, 0); /* walkable x 0.9 .. 17.1, z 0.9 .. 3.3 */
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 5, 0, 2 };
    nb_poly_ref sref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, &f, &sref, NULL), NB_OK);
    float res[3];
    nb_poly_ref visited[16];
    int32_t nvis = 0;
    const float target[3] = { 9, 0, 6 };
    CHECK_INT(nb_query_move_along_surface(q, sref, a, target, &f, res, visited, &nvis, 16), NB_OK);
    CHECK_NEAR(res[0], 9, 1e-3);
    CHECK_NEAR(res[2], 3.3, 1e-3);
    CHECK(res[1] >= -0.01f && res[1] <= 0.25f);
    CHECK(nvis >= 1);
    CHECK_INT(visited[0], sref);
    const float inside[3] = { 8, 0, 1.5f };
    CHECK_INT(nb_query_move_along_surface(q, sref, a, inside, &f, res, NULL, NULL, 0), NB_OK);
    CHECK_NEAR(res[0], 8, 1e-4);
    CHECK_NEAR(res[2], 1.5, 1e-4);
    const float far_end[3] = { 30, 0, 2 };
    CHECK_INT(nb_query_move_along_surface(q, sref, a, far_end, &f, res, NULL, NULL, 0), NB_OK);
    CHECK_NEAR(res[0], 17.1, 1e-3);
    CHECK_NEAR(res[2], 2, 1e-3);

    float d = 0, hit[3], n[3];
    const float c[3] = { 5, 0, 1.5f };
    CHECK_INT(nb_query_distance_to_wall(q, sref, c, 5.0f, &f, &d, hit, n), NB_OK);
    CHECK_NEAR(d, 0.6, 1e-3);
    CHECK_NEAR(hit[2], 0.9, 1e-3);
    CHECK_NEAR(hit[0], 5, 1e-3);
    CHECK_NEAR(n[2], 1, 1e-4);
    CHECK_INT(nb_query_distance_to_wall(q, sref, c, 0.5f, &f, &d, hit, n), NB_OK);
    CHECK_NEAR(d, 0.5, 1e-6);
    const float end_c[3] = { 16.5f, 0, 2.2f }; /* 0.6 from the x = 17.1 wall, 1.1 from z = 3.3 */
    nb_poly_ref eref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, end_c, HALF, &f, &eref, NULL), NB_OK);
    CHECK_INT(nb_query_distance_to_wall(q, eref, end_c, 5.0f, &f, &d, hit, n), NB_OK);
    CHECK_NEAR(d, 0.6, 1e-3);
    CHECK_NEAR(n[0], -1, 1e-4);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* ---- dungeon --------------------------------------------------------------------------------------------------- */

static int load_dungeon(nb_obj* obj)
{
    char path[512], err[256];
    if (nb_obj_load(nbt_mesh_path("dungeon.obj", path, sizeof(path)), obj, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        CHECK(!"dungeon.obj loads");
        return 0;
    }
    return 1;
}

/* Random start/end pairs on the navmesh (deterministic). */
static void random_pairs(nb_query* q, uint32_t n, uint64_t seed, float* pairs)
{
    nb_query_filter f;
    nb_query_filter_init(&f);
    for (uint32_t i = 0; i < n * 2; ++i) {
        nb_poly_ref r = 0;
        CHECK_INT(nb_query_random_point(q, &f, &seed, &r, &pairs[i * 3]), NB_OK);
    }
}

/* The batch gives what the single calls give, pair by pair; and its buffer contract. */
static void test_batch_matches(void)
{
    nb_obj obj;
    if (!load_dungeon(&obj))
        return;
    nb_navmesh* nav = nav_from_triangles(obj.positions, obj.vertex_count, obj.indices, obj.triangle_count, NULL, 0,
                                         NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    enum { N = 300 };
    static float pairs[N * 6];
    random_pairs(q, N, 1234, pairs);
    static uint8_t status[N];
    static float lengths[N];
    static uint32_t offsets[N + 1];
    uint32_t needed = 0;
    /* Count only. */
    CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, N, HALF, &f, 0, status, lengths, offsets, NULL, 0, &needed),
                 NB_ERR_BUFFER_TOO_SMALL, "nb_query_find_paths");
    CHECK_INT(needed, offsets[N]);
    float* pts = (float*)malloc(sizeof(float) * 3 * needed);
    CHECK_INT(nb_query_find_paths(q, pairs, N, HALF, &f, 0, status, lengths, offsets, pts, needed, &needed), NB_OK);
    int complete = 0;
    for (uint32_t i = 0; i < N; ++i) {
        route r;
        const int found = find_route(q, &pairs[i * 6], &pairs[i * 6 + 3], &f, 0, &r);
        CHECK_INT(status[i], !found ? NB_PATH_NONE : (r.partial ? NB_PATH_PARTIAL : NB_PATH_COMPLETE));
        CHECK_NEAR(lengths[i], r.length, 1e-4);
        CHECK_INT(offsets[i + 1] - offsets[i], r.npts);
        if ((int32_t)(offsets[i + 1] - offsets[i]) == r.npts)
            CHECK(memcmp(&pts[offsets[i] * 3], r.pts, sizeof(float) * 3 * (size_t)r.npts) == 0);
        complete += status[i] == NB_PATH_COMPLETE;
        /* A complete path ends at the end point (on the mesh); straight paths are never longer than the corridor
         * allows and never shorter than the straight line. */
        if (status[i] == NB_PATH_COMPLETE) {
            CHECK(lengths[i] + 1e-3f >= dist3(&pairs[i * 6], &pairs[i * 6 + 3]) - 0.3f);
            CHECK(dist3(&pts[(offsets[i + 1] - 1) * 3], &pairs[i * 6 + 3]) < 0.3f);
        }
    }
    /* REFERENCE.md: about 81% of random pairs on dungeon have a complete path. */
    CHECK((double)complete / N > 0.6 && (double)complete / N < 0.98);
    /* A buffer too small for the whole batch: filled up to the first pair that does not fit. */
    const uint32_t cap = offsets[N / 2];
    float* small = (float*)malloc(sizeof(float) * 3 * (cap ? cap : 1));
    CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, N, HALF, &f, 0, status, lengths, offsets, small, cap, &needed),
                 NB_ERR_BUFFER_TOO_SMALL, "points");
    CHECK_INT(needed, offsets[N]);
    CHECK(memcmp(small, pts, sizeof(float) * 3 * cap) == 0);
    free(small);
    free(pts);
    /* With each point's flags and polygon: those of the straight path, and the same points as without them. */
    for (int options = 0; options <= NB_STRAIGHT_ALL_CROSSINGS; options += NB_STRAIGHT_ALL_CROSSINGS) {
        CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, N, HALF, &f, options, status, lengths, offsets, NULL, 0, &needed),
                     NB_ERR_BUFFER_TOO_SMALL, "nb_query_find_paths");
        float* plain = (float*)malloc(sizeof(float) * 3 * needed);
        float* detailed = (float*)malloc(sizeof(float) * 3 * needed);
        uint8_t* flags = (uint8_t*)malloc(needed);
        nb_poly_ref* refs = (nb_poly_ref*)malloc(sizeof(nb_poly_ref) * needed);
        CHECK_INT(nb_query_find_paths(q, pairs, N, HALF, &f, options, status, lengths, offsets, plain, needed, NULL), NB_OK);
        CHECK_INT(nb_query_find_paths_ex(q, pairs, N, HALF, &f, options, status, lengths, offsets, detailed, flags, refs,
                                         needed, NULL),
                  NB_OK);
        CHECK(memcmp(plain, detailed, sizeof(float) * 3 * needed) == 0);
        int flagged = 0;
        for (uint32_t i = 0; i < N; ++i) {
            route r;
            if (!find_route(q, &pairs[i * 6], &pairs[i * 6 + 3], &f, options, &r))
                continue;
            if ((int32_t)(offsets[i + 1] - offsets[i]) != r.npts) {
                CHECK(!"point count");
                continue;
            }
            CHECK(memcmp(&flags[offsets[i]], r.flags, (size_t)r.npts) == 0);
            CHECK(memcmp(&refs[offsets[i]], r.refs, sizeof(nb_poly_ref) * (size_t)r.npts) == 0);
            flagged += (flags[offsets[i]] & NB_STRAIGHT_POINT_START) != 0;
        }
        CHECK(flagged > N / 2);
        /* flags or refs without points: refused */
        CHECK_STATUS(ctx, nb_query_find_paths_ex(q, pairs, N, HALF, &f, options, status, NULL, NULL, NULL, flags, NULL, 0,
                                                 NULL),
                     NB_ERR_NULL_ARG, "point_flags");
        free(plain);
        free(detailed);
        free(flags);
        free(refs);
    }
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
    nb_obj_free(&obj);
}

/* Queries never allocate: a counting allocator sees no call between creation and destruction. */
static void test_no_allocation(void)
{
    nbt_alloc al = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &al);
    nb_context* saved = ctx;
    ctx = nb_context_create(&d);
    nb_obj obj;
    if (!load_dungeon(&obj)) {
        nb_context_destroy(ctx);
        ctx = saved;
        return;
    }
    nb_navmesh* nav = nav_from_triangles(obj.positions, obj.vertex_count, obj.indices, obj.triangle_count, NULL, 0,
                                         NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const long before = al.calls;
    float pairs[20 * 6];
    random_pairs(q, 20, 99, pairs);
    uint8_t status[20];
    float lengths[20], pts[3 * 512];
    uint32_t offsets[21], needed;
    CHECK_INT(nb_query_find_paths(q, pairs, 20, HALF, &f, NB_STRAIGHT_ALL_CROSSINGS, status, lengths, offsets, pts,
                                  512, &needed), NB_OK);
    uint64_t s = 5;
    for (int i = 0; i < 20; ++i) {
        route r;
        if (!find_route(q, &pairs[i * 6], &pairs[i * 6 + 3], &f, NB_STRAIGHT_AREA_CROSSINGS, &r))
            continue;
        float t, n[3], res[3], dist, hit[3], p[3];
        nb_poly_ref ref, vis[8];
        int32_t nv;
        nb_query_raycast(q, r.path[0], &pairs[i * 6], &pairs[i * 6 + 3], &f, &t, n, vis, &nv, 8);
        nb_query_move_along_surface(q, r.path[0], &pairs[i * 6], &pairs[i * 6 + 3], &f, res, vis, &nv, 8);
        nb_query_distance_to_wall(q, r.path[0], &pairs[i * 6], 3.0f, &f, &dist, hit, n);
        nb_query_random_point_around(q, r.path[0], &pairs[i * 6], 4.0f, &f, &s, &ref, p);
        nb_query_random_point(q, &f, &s, &ref, p);
    }
    CHECK_INT(al.calls, before);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
    nb_obj_free(&obj);
    nb_context_destroy(ctx);
    ctx = saved;
    CHECK_INT(al.live, 0);
}

/* Limits: a small node pool, a short path buffer, a short point buffer. */
static void test_limits(void)
{
    nb_obj obj;
    if (!load_dungeon(&obj))
        return;
    nb_navmesh* nav = nav_from_triangles(obj.positions, obj.vertex_count, obj.indices, obj.triangle_count, NULL, 0,
                                         NULL, 0);
    nb_query* q = query_for(nav);
    nb_query* tiny = NULL;
    CHECK_INT(nb_query_create(ctx, nav, 4, &tiny), NB_OK);
    nb_query_filter f;
    nb_query_filter_init(&f);
    float pairs[200 * 6];
    random_pairs(q, 200, 77, pairs);
    int long_found = 0;
    for (int i = 0; i < 200 && !long_found; ++i) {
        route r;
        if (!find_route(q, &pairs[i * 6], &pairs[i * 6 + 3], &f, 0, &r) || r.partial || r.npath < 8)
            continue;
        long_found = 1;
        /* the pool runs out: partial, and the corridor still starts at the start */
        nb_poly_ref path[64];
        int32_t np = 0;
        int partial = 0;
        CHECK_INT(nb_query_find_path(tiny, r.path[0], r.path[r.npath - 1], &pairs[i * 6], &pairs[i * 6 + 3], &f, path,
                                     &np, 64, &partial), NB_OK);
        CHECK_INT(partial, 1);
        CHECK(np >= 1 && np <= 4);
        CHECK_INT(path[0], r.path[0]);
        /* a path buffer shorter than the corridor: its beginning, flagged partial */
        CHECK_INT(nb_query_find_path(q, r.path[0], r.path[r.npath - 1], &pairs[i * 6], &pairs[i * 6 + 3], &f, path,
                                     &np, 3, &partial), NB_OK);
        CHECK_INT(np, 3);
        CHECK_INT(partial, 1);
        CHECK(memcmp(path, r.path, 3 * sizeof(nb_poly_ref)) == 0);
        /* a point buffer shorter than the straight path: its beginning, NB_OK */
        if (r.npts >= 3) {
            float pts[6];
            int32_t n = 0;
            CHECK_INT(nb_query_straight_path(q, &pairs[i * 6], &pairs[i * 6 + 3], r.path, r.npath, pts, NULL, NULL, &n,
                                             2, 0), NB_OK);
            CHECK_INT(n, 2);
            CHECK(memcmp(pts, r.pts, sizeof(pts)) == 0);
        }
    }
    CHECK(long_found);
    nb_query_destroy(ctx, tiny);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
    nb_obj_free(&obj);
}

/* Every status the queries return, each with a message naming the function and the argument. */
static void test_statuses(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 18, 4.2f, 0);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = NULL;
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float a[3] = { 2, 0, 2 }, b[3] = { 16, 0, 2 };
    const float nan3[3] = { 1, NAN, 1 }, inf3[3] = { INFINITY, 0, 0 };
    nb_poly_ref ref = 0, path[8];
    int32_t np = 0;
    float pt[3], t, d;
    int partial;
    uint64_t s = 1;

    q = query_for(nav);
    nb_query* none_q = (nb_query*)&f;
    CHECK_STATUS(ctx, nb_query_create(ctx, NULL, 0, &none_q), NB_ERR_NULL_ARG, "nav");
    CHECK(none_q == NULL);
    CHECK_STATUS(ctx, nb_query_create(ctx, nav, 0, NULL), NB_ERR_NULL_ARG, "out");
    nb_query* bad = NULL;
    CHECK_STATUS(ctx, nb_query_create(ctx, nav, 0xffffffffu, &bad), NB_ERR_INVALID_ARG, "max_nodes");
    CHECK_INT(nb_query_find_nearest_poly(NULL, a, HALF, &f, &ref, pt), NB_ERR_NULL_ARG);

    CHECK_STATUS(ctx, nb_query_find_nearest_poly(q, NULL, HALF, &f, &ref, pt), NB_ERR_NULL_ARG,
                 "nb_query_find_nearest_poly: center");
    CHECK_STATUS(ctx, nb_query_find_nearest_poly(q, nan3, HALF, &f, &ref, pt), NB_ERR_NONFINITE, "center[1]");
    CHECK_STATUS(ctx, nb_query_find_nearest_poly(q, inf3, HALF, &f, &ref, pt), NB_ERR_NONFINITE, "center[0]");
    const float zero_half[3] = { 1, 0, 1 };
    CHECK_STATUS(ctx, nb_query_find_nearest_poly(q, a, zero_half, &f, &ref, pt), NB_ERR_INVALID_ARG, "half_extents[1]");
    CHECK_STATUS(ctx, nb_query_find_nearest_poly(q, a, HALF, NULL, &ref, pt), NB_ERR_NULL_ARG, "filter");
    nb_query_filter neg = f;
    neg.area_cost[5] = -1;
    CHECK_STATUS(ctx, nb_query_find_nearest_poly(q, a, HALF, &neg, &ref, pt), NB_ERR_INVALID_ARG, "area_cost[5]");
    neg.area_cost[5] = NAN;
    CHECK_STATUS(ctx, nb_query_find_nearest_poly(q, a, HALF, &neg, &ref, pt), NB_ERR_NONFINITE, "area_cost[5]");
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, &f, &ref, NULL), NB_OK); /* nearest is optional */
    CHECK(ref != 0);
    /* A box wider than the world (its bounds even overflow to infinity) still finds the polygon. */
    const float huge[3] = { 3e38f, 3e38f, 3e38f };
    nb_poly_ref any = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, b, huge, &f, &any, pt), NB_OK);
    CHECK(any != 0);
    CHECK_NEAR(pt[0], b[0], 1e-4);
    const float nowhere[3] = { 100, 0, 100 };
    nb_poly_ref none = 5;
    CHECK_INT(nb_query_find_nearest_poly(q, nowhere, HALF, &f, &none, pt), NB_OK);
    CHECK_INT(none, 0);

    CHECK_STATUS(ctx, nb_query_find_path(q, ref, ref, a, b, &f, path, &np, 0, &partial), NB_ERR_INVALID_ARG, "max_path");
    CHECK_STATUS(ctx, nb_query_find_path(q, ref, ref, a, b, &f, NULL, &np, 8, &partial), NB_ERR_NULL_ARG, "path");
    CHECK_STATUS(ctx, nb_query_find_path(q, ref, ref, a, nan3, &f, path, &np, 8, &partial), NB_ERR_NONFINITE, "end[1]");
    CHECK_STATUS(ctx, nb_query_find_path(q, 0, ref, a, b, &f, path, &np, 8, &partial), NB_ERR_NOT_FOUND, "start_ref");
    CHECK_STATUS(ctx, nb_query_find_path(q, ref, ref ^ 0x7fffu, a, b, &f, path, &np, 8, &partial), NB_ERR_NOT_FOUND,
                 "end_ref");
    CHECK_INT(nb_query_find_path(q, ref, ref, a, b, &f, path, &np, 8, NULL), NB_OK); /* partial is optional */

    CHECK_STATUS(ctx, nb_query_straight_path(q, a, b, path, 1, pt, NULL, NULL, &np, 0, 0), NB_ERR_INVALID_ARG,
                 "max_points");
    CHECK_STATUS(ctx, nb_query_straight_path(q, a, b, path, 0, pt, NULL, NULL, &np, 1, 0), NB_ERR_INVALID_ARG,
                 "path_count");
    CHECK_STATUS(ctx, nb_query_straight_path(q, a, b, path, 1, pt, NULL, NULL, &np, 1, 8), NB_ERR_INVALID_ARG,
                 "options");
    nb_poly_ref two[2] = { ref, ref };
    float pts8[3 * 8];
    CHECK_STATUS(ctx, nb_query_straight_path(q, a, b, two, 2, pts8, NULL, NULL, &np, 8, 0), NB_ERR_INVALID_ARG,
                 "not neighbours");
    CHECK_STATUS(ctx, nb_query_straight_path(q, a, b, path, 1, NULL, NULL, NULL, &np, 1, 0), NB_ERR_NULL_ARG, "points");

    CHECK_STATUS(ctx, nb_query_raycast(q, ref, a, b, &f, NULL, NULL, NULL, NULL, 0), NB_ERR_NULL_ARG, "t");
    CHECK_STATUS(ctx, nb_query_raycast(q, ref, a, b, &f, &t, NULL, path, NULL, 8), NB_ERR_NULL_ARG, "path_count");
    CHECK_STATUS(ctx, nb_query_raycast(q, ref, a, b, &f, &t, NULL, path, &np, 0), NB_ERR_INVALID_ARG, "max_path");
    CHECK_STATUS(ctx, nb_query_raycast(q, ref, inf3, b, &f, &t, NULL, NULL, NULL, 0), NB_ERR_NONFINITE, "start[0]");

    CHECK_STATUS(ctx, nb_query_random_point(q, &f, NULL, &ref, pt), NB_ERR_NULL_ARG, "rng");
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, &f, &ref, NULL), NB_OK);
    nb_poly_ref r2;
    CHECK_STATUS(ctx, nb_query_random_point_around(q, ref, a, 0.0f, &f, &s, &r2, pt), NB_ERR_INVALID_ARG, "radius");
    CHECK_STATUS(ctx, nb_query_random_point_around(q, ref, a, NAN, &f, &s, &r2, pt), NB_ERR_NONFINITE, "radius");

    CHECK_STATUS(ctx, nb_query_closest_point_on_poly(q, ref, a, NULL, NULL), NB_ERR_NULL_ARG, "closest");
    CHECK_STATUS(ctx, nb_query_poly_height(q, ref, nowhere, &t), NB_ERR_NOT_FOUND, "outside");
    CHECK_STATUS(ctx, nb_query_poly_height(q, ref, a, NULL), NB_ERR_NULL_ARG, "height");

    CHECK_STATUS(ctx, nb_query_move_along_surface(q, ref, a, b, &f, NULL, NULL, NULL, 0), NB_ERR_NULL_ARG, "result");
    CHECK_STATUS(ctx, nb_query_move_along_surface(q, ref, a, b, &f, pt, path, &np, 0), NB_ERR_INVALID_ARG,
                 "max_visited");
    CHECK_STATUS(ctx, nb_query_distance_to_wall(q, ref, a, -1.0f, &f, &d, NULL, NULL), NB_ERR_INVALID_ARG,
                 "max_radius");
    CHECK_STATUS(ctx, nb_query_distance_to_wall(q, ref, a, 1.0f, &f, NULL, NULL, NULL), NB_ERR_NULL_ARG, "distance");

    float pairs[6] = { 2, 0, 2, 16, 0, 2 };
    uint8_t st[1];
    uint32_t off[2], needed;
    CHECK_STATUS(ctx, nb_query_find_paths(q, NULL, 1, HALF, &f, 0, st, NULL, off, NULL, 0, &needed), NB_ERR_NULL_ARG,
                 "pairs");
    CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, 1, HALF, &f, 0, NULL, NULL, off, NULL, 0, &needed),
                 NB_ERR_NULL_ARG, "status");
    CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, 1, HALF, &f, 0, st, NULL, off, NULL, 4, &needed), NB_ERR_NULL_ARG,
                 "points");
    pairs[4] = NAN;
    CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, 1, HALF, &f, 0, st, NULL, off, NULL, 0, &needed),
                 NB_ERR_NONFINITE, "pair 0");
    pairs[4] = 0;
    CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, 1, zero_half, &f, 0, st, NULL, off, NULL, 0, &needed),
                 NB_ERR_INVALID_ARG, "half_extents");
    CHECK_STATUS(ctx, nb_query_find_paths(q, pairs, 1, HALF, &f, 0, st, NULL, off, NULL, 0, &needed),
                 NB_ERR_BUFFER_TOO_SMALL, "points");
    CHECK_INT(needed, 2);
    CHECK_INT(nb_query_find_paths(q, pairs, 0, HALF, &f, 0, NULL, NULL, NULL, NULL, 0, NULL), NB_OK);

    /* A stale ref: the tile is removed and added again. */
    const uint8_t* blob;
    size_t size;
    int32_t tx = 0, tz = 0;
    CHECK_INT(nb_navmesh_tile_data(nav, tx, tz, &blob, &size), NB_OK);
    uint8_t* copy = (uint8_t*)malloc(size);
    memcpy(copy, blob, size);
    CHECK_INT(nb_navmesh_remove_tile(ctx, nav, tx, tz), NB_OK);
    CHECK_STATUS(ctx, nb_query_closest_point_on_poly(q, ref, a, pt, NULL), NB_ERR_NOT_FOUND, "ref");
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, copy, size), NB_OK);
    free(copy);
    CHECK_STATUS(ctx, nb_query_poly_height(q, ref, a, &t), NB_ERR_NOT_FOUND, "stale");
    CHECK_STATUS(ctx, nb_query_distance_to_wall(q, ref, a, 1.0f, &f, &d, NULL, NULL), NB_ERR_NOT_FOUND, "start_ref");
    CHECK_STATUS(ctx, nb_query_move_along_surface(q, ref, a, b, &f, pt, NULL, NULL, 0), NB_ERR_NOT_FOUND, "start_ref");
    CHECK_STATUS(ctx, nb_query_raycast(q, ref, a, b, &f, &t, NULL, NULL, NULL, 0), NB_ERR_NOT_FOUND, "start_ref");
    CHECK_STATUS(ctx, nb_query_random_point_around(q, ref, a, 1.0f, &f, &s, &r2, pt), NB_ERR_NOT_FOUND, "start_ref");
    CHECK_STATUS(ctx, nb_query_straight_path(q, a, b, &ref, 1, pt, NULL, NULL, &np, 1, 0), NB_ERR_NOT_FOUND, "path[0]");
    nb_poly_ref fresh = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, a, HALF, &f, &fresh, NULL), NB_OK);
    CHECK(fresh != 0 && fresh != ref);
    nb_query_destroy(ctx, q);
    nb_query_destroy(ctx, NULL);

    /* Out of memory in nb_query_create: every allocation failing in turn, nothing leaks. */
    for (long fail = 1; fail < 20; ++fail) {
        nbt_alloc al = { 0 };
        nb_context_desc d2;
        memset(&d2, 0, sizeof(d2));
        nbt_alloc_hooks(&d2, &al);
        nb_context* c2 = nb_context_create(&d2);
        al.fail_at = al.calls + fail;
        nb_query* q2 = NULL;
        const nb_status st2 = nb_query_create(c2, nav, 64, &q2);
        if (st2 == NB_OK) {
            nb_query_destroy(c2, q2);
            nb_context_destroy(c2);
            CHECK_INT(al.live, 0);
            CHECK(fail > 1);
            break;
        }
        CHECK_INT(st2, NB_ERR_OUT_OF_MEMORY);
        CHECK(strstr(nb_context_message(c2), "nb_query_create: out of memory") != NULL);
        CHECK(q2 == NULL);
        nb_context_destroy(c2);
        CHECK_INT(al.live, 0);
    }
    nb_navmesh_destroy(ctx, nav);
}

/* The same level baked as one tile and as a grid of 64-cell tiles: the same pairs are reachable and the paths are
 * as long (median ratio within 2%). */
/* obj baked in tiles of `cells` cells (default config) into a tiled navmesh; *count: the tiles with polygons. */
static nb_navmesh* tiled_from_obj(const nb_obj* o, int cells, int* count)
{
    const nb_obj obj = *o;
    float bmin[3], bmax[3];
    mesh_bounds(obj.positions, obj.vertex_count, bmin, bmax);
    nb_config cfg;
    nb_config_resolve(ctx, NULL, &cfg, NULL);
    const float tile_world = (float)cells * cfg.cell_size;
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    memcpy(p.origin, bmin, sizeof(bmin));
    p.tile_width = p.tile_depth = tile_world;
    nb_navmesh* tiled = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &p, &tiled), NB_OK);
    const int tw = (int)ceilf((bmax[0] - bmin[0]) / tile_world), th = (int)ceilf((bmax[2] - bmin[2]) / tile_world);
    const int border = (int)ceilf(cfg.agent_radius / cfg.cell_size) + 3;
    int tiles = 0;
    for (int tz = 0; tz < th; ++tz)
        for (int tx = 0; tx < tw; ++tx) {
            /* The tile proper; nb_bake widens it by the border. */
            const float tmin[3] = { bmin[0] + tx * tile_world, bmin[1], bmin[2] + tz * tile_world };
            const float tmax[3] = { bmin[0] + (tx + 1) * tile_world, bmax[1], bmin[2] + (tz + 1) * tile_world };
            nb_bake_input in;
            memset(&in, 0, sizeof(in));
            in.mesh.positions = obj.positions;
            in.mesh.vertex_count = obj.vertex_count;
            in.mesh.indices = obj.indices;
            in.mesh.triangle_count = obj.triangle_count;
            in.bmin = tmin;
            in.bmax = tmax;
            in.border_size = border;
            uint8_t* data = NULL;
            size_t size = 0;
            double stats[NB_STAT_COUNT];
            const nb_status st = nb_bake_tile(ctx, &in, &cfg, NULL, 0, tx, tz, &data, &size, stats);
            if (st != NB_OK) {
                fprintf(stderr, "  tile (%d, %d): %s\n", tx, tz, nb_context_message(ctx));
                CHECK_INT(st, NB_OK);
                continue;
            }
            if (stats[NB_STAT_POLYS] > 0) {
                CHECK_INT(nb_navmesh_add_tile(ctx, tiled, data, size), NB_OK);
                ++tiles;
            }
            nb_bytes_free(ctx, data);
        }
    *count = tiles;
    return tiled;
}

static void test_tiled_vs_solo(void)
{
    nb_obj obj;
    if (!load_dungeon(&obj))
        return;
    nb_navmesh* solo = nav_from_triangles(obj.positions, obj.vertex_count, obj.indices, obj.triangle_count, NULL, 0,
                                          NULL, 0);
    int tiles = 0;
    nb_navmesh* tiled = tiled_from_obj(&obj, 64, &tiles);
    CHECK(tiles >= 9);
    nb_query* qs = query_for(solo);
    nb_query* qt = query_for(tiled);
    nb_query_filter f;
    nb_query_filter_init(&f);
    enum { N = 1000 };
    static float pairs[N * 6];
    random_pairs(qs, N, 2024, pairs);
    static uint8_t ss[N], st[N];
    static float ls[N], lt[N];
    CHECK_INT(nb_query_find_paths(qs, pairs, N, HALF, &f, 0, ss, ls, NULL, NULL, 0, NULL), NB_ERR_BUFFER_TOO_SMALL);
    CHECK_INT(nb_query_find_paths(qt, pairs, N, HALF, &f, 0, st, lt, NULL, NULL, 0, NULL), NB_ERR_BUFFER_TOO_SMALL);
    int agree = 0, both = 0;
    static float ratio[N];
    for (int i = 0; i < N; ++i) {
        agree += ss[i] == st[i];
        if (ss[i] != st[i] && (ss[i] == NB_PATH_COMPLETE || st[i] == NB_PATH_COMPLETE))
            fprintf(stderr, "  pair %d: solo %d tiled %d (%.2f %.2f %.2f) -> (%.2f %.2f %.2f)\n", i, ss[i], st[i],
                    pairs[i * 6], pairs[i * 6 + 1], pairs[i * 6 + 2], pairs[i * 6 + 3], pairs[i * 6 + 4],
                    pairs[i * 6 + 5]);
        if (ss[i] == NB_PATH_COMPLETE && st[i] == NB_PATH_COMPLETE && ls[i] > 1.0f)
            ratio[both++] = lt[i] / ls[i];
    }
    CHECK_INT(agree, N);
    /* median by insertion sort (small) */
    for (int i = 1; i < both; ++i) {
        const float v = ratio[i];
        int j = i - 1;
        while (j >= 0 && ratio[j] > v) {
            ratio[j + 1] = ratio[j];
            --j;
        }
        ratio[j + 1] = v;
    }
    CHECK(both > N / 2);
    if (both > 0)
        CHECK_NEAR(ratio[both / 2], 1.0, 0.02);

    /* The walks that follow links agree across tile borders too: raycasts stop at the same walls, walls are as
     * far, moves end at the same place (up to the meshes' one-cell differences: a ray grazing a corner may pass
     * in one and stop in the other). */
    int ray_ok = 0, wall_ok = 0, move_ok = 0, tried = 0;
    for (int i = 0; i < 300; ++i) {
        const float* a = &pairs[i * 6];
        const float* b = &pairs[i * 6 + 3];
        nb_poly_ref rs = 0, rt = 0;
        nb_query_find_nearest_poly(qs, a, HALF, &f, &rs, NULL);
        nb_query_find_nearest_poly(qt, a, HALF, &f, &rt, NULL);
        if (!rs || !rt)
            continue;
        ++tried;
        float ts, tt, ds, dt, ms[3], mt[3];
        CHECK_INT(nb_query_raycast(qs, rs, a, b, &f, &ts, NULL, NULL, NULL, 0), NB_OK);
        CHECK_INT(nb_query_raycast(qt, rt, a, b, &f, &tt, NULL, NULL, NULL, 0), NB_OK);
        ray_ok += fabsf(ts - tt) * dist_xz(a, b) < 0.35f;
        CHECK_INT(nb_query_distance_to_wall(qs, rs, a, 5.0f, &f, &ds, NULL, NULL), NB_OK);
        CHECK_INT(nb_query_distance_to_wall(qt, rt, a, 5.0f, &f, &dt, NULL, NULL), NB_OK);
        wall_ok += fabsf(ds - dt) < 0.35f;
        float near_b[3];
        const float dx = b[0] - a[0], dz = b[2] - a[2], len = sqrtf(dx * dx + dz * dz);
        near_b[0] = a[0] + (len > 3 ? dx / len * 3 : dx);
        near_b[1] = a[1];
        near_b[2] = a[2] + (len > 3 ? dz / len * 3 : dz);
        CHECK_INT(nb_query_move_along_surface(qs, rs, a, near_b, &f, ms, NULL, NULL, 0), NB_OK);
        CHECK_INT(nb_query_move_along_surface(qt, rt, a, near_b, &f, mt, NULL, NULL, 0), NB_OK);
        move_ok += dist_xz(ms, mt) < 0.35f;
    }
    CHECK(ray_ok >= tried * 95 / 100);
    CHECK(wall_ok >= tried * 95 / 100);
    CHECK(move_ok >= tried * 95 / 100);
    nb_query_destroy(ctx, qs);
    nb_query_destroy(ctx, qt);
    nb_navmesh_destroy(ctx, solo);
    nb_navmesh_destroy(ctx, tiled);
    nb_obj_free(&obj);
}

/* Pair `pair` on a fresh query (its first search for an end out of reach visits all it can reach) and on `shared`:
 * the same path, byte for byte. Returns the status; the nodes each used go to *fresh_nodes and *shared_nodes. */
static uint8_t same_as_fresh(const nb_navmesh* nav, nb_query* shared, const float* pair, const nb_query_filter* f,
                             uint32_t* fresh_nodes, uint32_t* shared_nodes)
{
    enum { CAP = 1024 };
    static float pts[2][3 * CAP];
    static uint8_t flags[2][CAP];
    static nb_poly_ref refs[2][CAP];
    uint8_t status[2] = { 0, 0 };
    float len[2] = { 0, 0 };
    uint32_t off[2][2] = { { 0, 0 }, { 0, 0 } };
    nb_query* fresh = query_for(nav);
    nb_query* qs[2] = { fresh, shared };
    for (int k = 0; k < 2; ++k)
        CHECK_INT(nb_query_find_paths_ex(qs[k], pair, 1, HALF, f, 0, &status[k], &len[k], off[k], pts[k], flags[k],
                                         refs[k], CAP, NULL),
                  NB_OK);
    *fresh_nodes = nb_query_last_nodes(fresh);
    *shared_nodes = nb_query_last_nodes(shared);
    nb_query_destroy(ctx, fresh);
    CHECK_INT(status[0], status[1]);
    CHECK(memcmp(&len[0], &len[1], sizeof(float)) == 0);
    CHECK_INT(off[0][1], off[1][1]);
    if (off[0][1] == off[1][1]) {
        CHECK(memcmp(pts[0], pts[1], sizeof(float) * 3 * off[0][1]) == 0);
        CHECK(memcmp(flags[0], flags[1], off[0][1]) == 0);
        CHECK(memcmp(refs[0], refs[1], sizeof(nb_poly_ref) * off[0][1]) == 0);
    }
    return status[1];
}

/* Ends out of reach on dungeon, solo and in tiles of 32 cells: once a query has searched for one (and labelled the
 * components), it finds such paths without visiting all it can reach, and they are the paths a search finds, byte
 * for byte: to the reachable polygon nearest the end, ties in grid order. */
static void test_unreachable_components(void)
{
    nb_obj obj;
    if (!load_dungeon(&obj))
        return;
    for (int tiled = 0; tiled < 2; ++tiled) {
        int tiles = 1;
        nb_navmesh* nav = tiled ? tiled_from_obj(&obj, 32, &tiles)
                                : nav_from_triangles(obj.positions, obj.vertex_count, obj.indices, obj.triangle_count,
                                                     NULL, 0, NULL, 0);
        CHECK(tiles >= (tiled ? 20 : 1));
        nb_query* shared = query_for(nav);
        nb_query_filter f;
        nb_query_filter_init(&f);
        enum { N = 200 };
        static float pairs[N * 6];
        random_pairs(shared, N, 77 + (uint64_t)tiled, pairs);
        int partial = 0, fewer = 0;
        for (int i = 0; i < N; ++i) {
            uint32_t fresh_nodes = 0, shared_nodes = 0;
            const uint8_t st = same_as_fresh(nav, shared, &pairs[i * 6], &f, &fresh_nodes, &shared_nodes);
            CHECK(!(st & NB_PATH_EXHAUSTED));
            if (!(st & NB_PATH_PARTIAL))
                continue;
            if (partial++ > 0) { /* labelled by the first */
                CHECK(shared_nodes < fresh_nodes);
                fewer += shared_nodes < fresh_nodes;
            }
        }
        CHECK(partial >= 10);
        CHECK_INT(fewer, partial - 1);
        nb_query_destroy(ctx, shared);
        nb_navmesh_destroy(ctx, nav);
    }
    nb_obj_free(&obj);
}

/* The components are labelled for the filter's flags and the navmesh as it is: a query whose labels say an end is
 * out of reach finds it again once the filter or a polygon's flags open the way. And a component holding a one-way
 * link is searched: the labels join what the link joins, but the way back is not there. */
static void test_unreachable_labels(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 8.1f, 8.1f, 0);
    add_floor(&m, 7.8f, 2.7f, 10.2f, 5.4f, 0); /* the door, walkable z 3.6 .. 4.5 */
    add_floor(&m, 9.9f, 0, 18, 8.1f, 0);
    nb_navmesh* nav = nav_from(&m, NULL, 0, NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter open, closed;
    nb_query_filter_init(&open);
    nb_query_filter_init(&closed);
    closed.exclude_flags = 0x2;
    const float a[3] = { 2, 0, 6 }, b[3] = { 16, 0, 2 }, door[3] = { 8.4f, 0, 4 };
    nb_poly_ref door_ref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, door, HALF, &open, &door_ref, NULL), NB_OK);
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, nav, door_ref, 0x3), NB_OK);
    route r;
    for (int k = 0; k < 2; ++k) { /* searched, then known from the labels */
        CHECK(find_route(q, a, b, &closed, 0, &r));
        CHECK_INT(r.partial, 1);
    }
    CHECK(find_route(q, a, b, &open, 0, &r)); /* other flags: labelled again */
    CHECK_INT(r.partial, 0);
    CHECK(find_route(q, a, b, &closed, 0, &r));
    CHECK_INT(r.partial, 1);
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, nav, door_ref, 0x1), NB_OK); /* the door no longer excluded */
    CHECK(find_route(q, a, b, &closed, 0, &r));
    CHECK_INT(r.partial, 0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);

    /* Floor A (x 0..8, z 20..26) with a one-way link to the strip B (x 14..22, z 0..40); island C north of A. From
     * B, an end on C is out of reach, and so is A: the path ends at B's point nearest the end (z 33), not at its
     * point nearest A's (z 25), which is where A, the nearer floor of the two that the link joins, would take it. */
    mesh_builder m2 = { 0 };
    add_floor(&m2, 0, 20, 8.1f, 26.1f, 0);
    add_floor(&m2, 14, 0, 22.1f, 40.1f, 0);
    add_floor(&m2, 0, 30, 8.1f, 36.1f, 0);
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    const float ls[3] = { 2, 0, 22 }, le[3] = { 18, 0, 22 };
    memcpy(link.start, ls, sizeof(ls));
    memcpy(link.end, le, sizeof(le));
    link.radius = 0.5f;
    nav = nav_from(&m2, NULL, 0, &link, 1);
    q = query_for(nav);
    const float from_b[3] = { 18, 0, 5 }, on_c[3] = { 4, 0, 33 }, on_a[3] = { 4, 0, 23 };
    CHECK(find_route(q, on_a, from_b, &open, 0, &r)); /* A reaches B through the link */
    CHECK_INT(r.partial, 0);
    for (int k = 0; k < 2; ++k) { /* searched, then labelled: the same */
        CHECK(find_route(q, from_b, on_c, &open, 0, &r));
        CHECK_INT(r.partial, 1);
        const float* last = &r.pts[(r.npts - 1) * 3];
        CHECK(last[0] > 14.0f);
        CHECK_NEAR(last[2], 33.0, 0.05);
    }
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);

    /* An L (x 0..8 by z 0..4, and x 0..4 by z 4..8) and an island over its notch. The end on the island's diagonal
     * is as near the L's two arms (polygons of their own), exactly: the tie goes to the polygon first in grid order,
     * so the path ends at the same point from either arm, searched or labelled. */
    mesh_builder m3 = { 0 };
    add_floor(&m3, 0, 0, 8.1f, 4.2f, 0);
    add_floor(&m3, 0, 4.2f, 4.2f, 8.1f, 0);
    add_floor(&m3, 6.3f, 6.3f, 12, 12, 0);
    nav = nav_from(&m3, NULL, 0, NULL, 0);
    q = query_for(nav);
    const float starts[2][3] = { { 7, 0, 1.5f }, { 1.5f, 0, 7 } }, end[3] = { 7.5f, 0, 7.5f };
    float ends[2][3];
    for (int k = 0; k < 2; ++k) {
        for (int again = 0; again < 2; ++again) { /* searched, then labelled */
            CHECK(find_route(q, starts[k], end, &open, 0, &r));
            CHECK_INT(r.partial, 1);
            memcpy(ends[k], &r.pts[(r.npts - 1) * 3], sizeof(ends[k]));
        }
        const float pair[6] = { starts[k][0], starts[k][1], starts[k][2], end[0], end[1], end[2] };
        uint32_t fresh_nodes, shared_nodes;
        same_as_fresh(nav, q, pair, &open, &fresh_nodes, &shared_nodes);
    }
    CHECK(memcmp(ends[0], ends[1], sizeof(ends[0])) == 0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* The mean of a ground polygon's corners. */
static void poly_centroid(const nb_tile_view* v, uint32_t p, float* c)
{
    c[0] = c[1] = c[2] = 0.0f;
    const uint32_t n = v->poly_nverts[p];
    for (uint32_t k = 0; k < n; ++k)
        for (int a = 0; a < 3; ++a)
            c[a] += v->verts[(size_t)v->poly_verts[(size_t)p * v->nvp + k] * 3 + a] / (float)n;
}

/* A tile whose polygons' neighbours do not all name each other (a file's, not a bake's: here the polygons east of
 * the door lost their edges back west) links one way there. The labels must see it: a query that has labelled
 * searches that component as a fresh query does, node for node, and finds the same paths. */
static void test_unreachable_one_way_neighbours(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 8.1f, 8.1f, 0);
    add_floor(&m, 7.8f, 2.7f, 10.2f, 5.4f, 0); /* the door */
    add_floor(&m, 9.9f, 0, 18, 8.1f, 0);
    add_floor(&m, -20, 0, -12, 8.1f, 0); /* an island to the west */
    nb_navmesh* baked = nav_from(&m, NULL, 0, NULL, 0);
    const nb_tile* t = NULL;
    for (uint32_t s = 0; s < baked->params.max_tiles && !t; ++s)
        t = baked->tiles[s].data ? &baked->tiles[s] : NULL;
    CHECK(t && t->mutual);
    if (!t)
        return;
    /* East polygons' edges toward west polygons become walls: links run west -> east only. */
    uint8_t* blob = (uint8_t*)malloc(t->size);
    memcpy(blob, t->data, t->size);
    uint16_t* neis = (uint16_t*)(blob + ((const uint8_t*)t->v.poly_neis - t->data));
    const nb_tile_view* v = &t->v;
    int cut = 0;
    for (uint32_t p = 0; p < v->npolys - v->noffmesh; ++p) {
        float cp[3], cq[3];
        poly_centroid(v, p, cp);
        for (uint32_t j = 0; j < v->poly_nverts[p]; ++j) {
            const uint16_t nei = neis[p * v->nvp + j];
            if (nei == NB_NEI_WALL || (nei & NB_NEI_BORDER))
                continue;
            poly_centroid(v, nei - 1u, cq);
            if (cp[0] > 9.0f && cq[0] < 9.0f) {
                neis[p * v->nvp + j] = NB_NEI_WALL;
                ++cut;
            }
        }
    }
    CHECK(cut >= 1);
    nb_tile_update_crc(blob, t->size);
    nb_navmesh_params params = baked->params;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &params, &nav), NB_OK);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, blob, t->size), NB_OK);
    free(blob);
    nb_navmesh_destroy(ctx, baked);
    if (!nav)
        return;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s)
        if (nav->tiles[s].data)
            CHECK(!nav->tiles[s].mutual);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const float west[3] = { 2, 0, 4 }, east[3] = { 16, 0, 6 }, island[3] = { -16, 0, 2 };
    route r;
    CHECK(find_route(q, west, east, &f, 0, &r));
    CHECK_INT(r.partial, 0);
    CHECK(find_route(q, east, west, &f, 0, &r));
    CHECK_INT(r.partial, 1);
    const float* pairs[2][2] = { { east, island }, { west, island } };
    for (int k = 0; k < 2; ++k) {
        const float pair[6] = { pairs[k][0][0], pairs[k][0][1], pairs[k][0][2],
                                pairs[k][1][0], pairs[k][1][1], pairs[k][1][2] };
        for (int again = 0; again < 2; ++again) { /* the first labels (k = 0), the others find the labels */
            uint32_t fresh_nodes = 0, shared_nodes = 0;
            CHECK(same_as_fresh(nav, q, pair, &f, &fresh_nodes, &shared_nodes) & NB_PATH_PARTIAL);
            CHECK_INT(shared_nodes, fresh_nodes);
        }
    }
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* Labelling costs about a search of a quarter of the polygons, so a query labels once the searches that saw all
 * they could reach (since the last change) add up to that: at once from a big floor, only after several searches
 * from a small island, again from nothing after each change of the navmesh. Paths are the same either way. */
static void test_unreachable_label_when_it_pays(void)
{
    nb_obj obj;
    if (!load_dungeon(&obj))
        return;
    nb_navmesh* nav = nav_from_triangles(obj.positions, obj.vertex_count, obj.indices, obj.triangle_count, NULL, 0,
                                         NULL, 0);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    const uint32_t polys = nb_navmesh_poly_count(nav);
    /* the unreachable pair whose search is smallest (from an island) and the one whose search is biggest */
    enum { N = 200 };
    static float pairs[N * 6];
    random_pairs(q, N, 5, pairs);
    const float *island = NULL, *floor = NULL;
    uint32_t least = UINT32_MAX, most = 0, fresh = 0, shared = 0;
    for (int i = 0; i < N; ++i) {
        nb_query* probe = query_for(nav);
        uint8_t st = 0;
        float len;
        uint32_t off[2];
        const nb_status ps = nb_query_find_paths(probe, &pairs[i * 6], 1, HALF, &f, 0, &st, &len, off, NULL, 0, NULL);
        CHECK(ps == NB_OK || ps == NB_ERR_BUFFER_TOO_SMALL); /* (no room for points: only the status is wanted) */
        const uint32_t nodes = nb_query_last_nodes(probe);
        nb_query_destroy(ctx, probe);
        if (!(st & NB_PATH_PARTIAL))
            continue;
        if (nodes < least) {
            least = nodes;
            island = &pairs[i * 6];
        }
        if (nodes > most) {
            most = nodes;
            floor = &pairs[i * 6];
        }
    }
    CHECK(island && floor && least * 8 < polys && most * 4 >= polys);
    if (!island || !floor)
        return;
    int searched = 0, labelled = 0;
    for (int i = 0; i < 40 && !labelled; ++i) { /* from the island: searched until the searches add up */
        same_as_fresh(nav, q, island, &f, &fresh, &shared);
        labelled = shared < fresh;
        searched += !labelled;
    }
    CHECK(searched >= 2);
    CHECK(labelled);
    same_as_fresh(nav, q, island, &f, &fresh, &shared); /* labelled: no search */
    CHECK(shared < fresh);
    nb_poly_ref ref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, island, HALF, &f, &ref, NULL), NB_OK);
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, nav, ref, 1), NB_OK); /* a change: counted again from nothing */
    for (int k = 0; k < 2; ++k) { /* (two island searches add up to less than a quarter) */
        same_as_fresh(nav, q, island, &f, &fresh, &shared);
        CHECK_INT(shared, fresh);
    }
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, nav, ref, 1), NB_OK);
    same_as_fresh(nav, q, floor, &f, &fresh, &shared); /* a big search labels at once */
    same_as_fresh(nav, q, floor, &f, &fresh, &shared);
    CHECK(shared < fresh);
    same_as_fresh(nav, q, island, &f, &fresh, &shared);
    CHECK(shared < fresh);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
    nb_obj_free(&obj);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_corridor);
    RUN(test_pillar);
    RUN(test_u_corridor);
    RUN(test_islands);
    RUN(test_area_cost);
    RUN(test_exclude_flags);
    RUN(test_offmesh);
    RUN(test_raycast);
    RUN(test_random_points);
    RUN(test_closest_and_height);
    RUN(test_move_and_wall);
    RUN(test_batch_matches);
    RUN(test_no_allocation);
    RUN(test_limits);
    RUN(test_statuses);
    RUN(test_tiled_vs_solo);
    RUN(test_unreachable_components);
    RUN(test_unreachable_one_way_neighbours);
    RUN(test_unreachable_label_when_it_pays);
    RUN(test_unreachable_labels);
    nb_context_destroy(ctx);
    return nbt_finish("test_query");
}
