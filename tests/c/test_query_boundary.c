/* Queries at the edges of polygons and tiles (the audit of the runtime queries): rays and moves from and to
 * navmesh vertices (path corners), tiled paths against solo ones, where partial paths end, which polygons the
 * nearest-polygon box accepts, and random points that do not depend on the order tiles were loaded in. */
#include <float.h>

#include "navbake.h"
#include "nbtest_level.h"
#include "nbtest_mesh.h"
#include "obj.h"
#include "../../c/src/navmesh_internal.h"

static nb_context* ctx;

static const float HALF[3] = { 2.0f, 4.0f, 2.0f };

/* Float noise at the levels' scale (coordinates up to ~100 m): a ray or a move that ends this close to where it
 * should counts as arriving there. */
#define NOISE 1e-3f

static nb_navmesh* bake_level(const char* name, int tile_size)
{
    nb_obj obj;
    if (nbt_load_level(name, &obj) != 0) {
        CHECK(!"level loads");
        return NULL;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = tile_size;
    nb_navmesh* nav = NULL;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK, "");
    nb_obj_free(&obj);
    return nav;
}

static nb_navmesh* bake_mesh(const mesh_builder* m)
{
    nb_bake_input in = MB_INPUT(m);
    nb_navmesh* nav = NULL;
    CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, NULL, NULL, 0, &nav), NB_OK, "");
    return nav;
}

static nb_query* query_for(const nb_navmesh* nav)
{
    nb_query* q = NULL;
    CHECK_INT(nb_query_create(ctx, nav, 0, &q), NB_OK);
    return q;
}

static float dist_xz(const float* a, const float* b)
{
    return sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static float dist3(const float* a, const float* b)
{
    return sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static void random_points(nb_query* q, uint32_t n, uint64_t seed, float* out)
{
    nb_query_filter f;
    nb_query_filter_init(&f);
    for (uint32_t i = 0; i < n; ++i) {
        nb_poly_ref r = 0;
        CHECK_INT(nb_query_random_point(q, &f, &seed, &r, &out[i * 3]), NB_OK);
    }
}

static nb_poly_ref nearest(nb_query* q, const float* p, const float* half, float* point)
{
    nb_query_filter f;
    nb_query_filter_init(&f);
    nb_poly_ref r = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, p, half, &f, &r, point), NB_OK);
    return r;
}

/* Bounds of a ground polygon: its vertices and its detail surface's. */
static void poly_bounds(const nb_navmesh* nav, nb_poly_ref ref, float* lo, float* hi)
{
    uint32_t p;
    const nb_tile* t = nb_navmesh_resolve(nav, ref, &p);
    const nb_tile_view* v = &t->v;
    for (int a = 0; a < 3; ++a) {
        lo[a] = FLT_MAX;
        hi[a] = -FLT_MAX;
    }
    for (uint32_t k = 0; k < v->poly_nverts[p]; ++k)
        for (int a = 0; a < 3; ++a) {
            lo[a] = fminf(lo[a], v->verts[v->poly_verts[p * v->nvp + k] * 3 + a]);
            hi[a] = fmaxf(hi[a], v->verts[v->poly_verts[p * v->nvp + k] * 3 + a]);
        }
    const uint32_t* dm = &v->detail_meshes[p * 4];
    for (uint32_t k = 0; k < dm[1]; ++k)
        for (int a = 0; a < 3; ++a) {
            lo[a] = fminf(lo[a], v->detail_verts[(dm[0] + k) * 3 + a]);
            hi[a] = fmaxf(hi[a], v->detail_verts[(dm[0] + k) * 3 + a]);
        }
}

/* ---- finding 1: rays from vertices ----------------------------------------------------------------------------- */

/* Where the segment p -> e leaves the rectangle [x0, x1] x [z0, z1] (the walkable area of a corridor; t in [0, 1]),
 * grown by a hair so that a ray along a side (cos and sin of the angles below are not exactly 0) stays in: *side 0 =
 * x0, 1 = x1, 2 = z0, 3 = z1 (-1: it stays in), *other the second side when it leaves through a corner (else -1). */
static float rect_exit(const float* p, const float* e, float x0, float x1, float z0, float z1, int* side, int* other)
{
    const float d[2] = { e[0] - p[0], e[2] - p[2] }, pos[2] = { p[0], p[2] };
    const float lo[2] = { x0 - 1e-4f, z0 - 1e-4f }, hi[2] = { x1 + 1e-4f, z1 + 1e-4f };
    float ta[2] = { 2.0f, 2.0f };
    int sa[2] = { -1, -1 };
    for (int a = 0; a < 2; ++a)
        if (d[a] != 0.0f) {
            ta[a] = fmaxf(((d[a] > 0.0f ? hi[a] : lo[a]) - pos[a]) / d[a], 0.0f);
            sa[a] = a * 2 + (d[a] > 0.0f);
        }
    const int first = ta[0] <= ta[1] ? 0 : 1;
    const float t = fminf(ta[first], 1.0f);
    *side = ta[first] < 1.0f ? sa[first] : -1;
    *other = *side >= 0 && fabsf(ta[0] - ta[1]) < 1e-4f ? sa[1 - first] : -1;
    return t;
}

/* A straight corridor (several polygons): rays from every polygon vertex in 24 directions, against the rectangle
 * they walk in. A ray into the open goes on (a start on a vertex or a portal does not stop it), a ray into a wall
 * stops where it meets it, t = 0 for a start on that wall, with that wall's normal. */
static void test_ray_from_vertices(void)
{
    mesh_builder m = { 0 };
    add_floor(&m, 0, 0, 40, 6, 0);
    nb_navmesh* nav = bake_mesh(&m);
    nb_query* q = query_for(nav);
    nb_query_filter f;
    nb_query_filter_init(&f);
    if (!nav || !q)
        return;
    uint32_t nrefs = 0;
    nb_navmesh_poly_refs(ctx, nav, NULL, 0, &nrefs);
    nb_poly_ref refs[256];
    CHECK(nrefs >= 3 && nrefs <= 256);
    if (nrefs > 256)
        nrefs = 256;
    nb_navmesh_poly_refs(ctx, nav, refs, 256, &nrefs);
    float x0 = FLT_MAX, x1 = -FLT_MAX, z0 = FLT_MAX, z1 = -FLT_MAX;
    for (uint32_t i = 0; i < nrefs; ++i) {
        float v[NB_MAX_VERTS_PER_POLY * 3];
        int32_t n = 0;
        nb_navmesh_poly(nav, refs[i], v, &n, NULL, NULL, NULL);
        for (int32_t k = 0; k < n; ++k) {
            x0 = fminf(x0, v[k * 3]);
            x1 = fmaxf(x1, v[k * 3]);
            z0 = fminf(z0, v[k * 3 + 2]);
            z1 = fmaxf(z1, v[k * 3 + 2]);
        }
    }
    int rays = 0, wrong = 0, on_vertex_inside = 0;
    for (uint32_t i = 0; i < nrefs; ++i) {
        float v[NB_MAX_VERTS_PER_POLY * 3];
        int32_t n = 0;
        nb_navmesh_poly(nav, refs[i], v, &n, NULL, NULL, NULL);
        for (int32_t k = 0; k < n; ++k) {
            const float* s = &v[k * 3];
            on_vertex_inside += s[0] > x0 + 0.5f && s[0] < x1 - 0.5f;
            const nb_poly_ref sref = nearest(q, s, HALF, NULL);
            for (int dir = 0; dir < 24; ++dir) {
                const float ang = (float)dir * (6.2831853f / 24.0f);
                const float e[3] = { s[0] + 5.0f * cosf(ang), s[1], s[2] + 5.0f * sinf(ang) };
                int side, other;
                const float want = rect_exit(s, e, x0, x1, z0, z1, &side, &other);
                float t = -1.0f, nrm[3];
                /* from the polygon the nearest query gives (as the JavaScript API does) and from this one */
                for (int from = 0; from < 2; ++from) {
                    CHECK_INT(nb_query_raycast(q, from ? refs[i] : sref, s, e, &f, &t, nrm, NULL, NULL, 0), NB_OK);
                    ++rays;
                    int ok = fabsf(t - want) * 5.0f <= NOISE;
                    if (ok && side < 0)
                        ok = nrm[0] == 0.0f && nrm[1] == 0.0f && nrm[2] == 0.0f;
                    else if (ok) {
                        /* the inward normal of the side it leaves by (either side at a corner) */
                        static const float want_n[4][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 } };
                        int match = 0;
                        for (int c = 0; c < 4; ++c)
                            match |= (c == side || c == other) && fabsf(nrm[0] - want_n[c][0]) < 1e-3f &&
                                     fabsf(nrm[2] - want_n[c][1]) < 1e-3f && nrm[1] == 0.0f;
                        ok = match;
                    }
                    if (!ok && ++wrong <= 5)
                        fprintf(stderr, "  ray from vertex (%.3f %.3f) angle %d/24 (poly %s): t %g (want %g, side %d) "
                                        "normal (%g %g)\n",
                                s[0], s[2], dir, from ? "own" : "nearest", t, want, side, nrm[0], nrm[2]);
                }
            }
        }
    }
    CHECK(on_vertex_inside > 0); /* some vertices lie between polygons along the walls */
    CHECK(rays > 200);
    CHECK_INT(wrong, 0);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

/* A point on a polygon's outline stands on that polygon (the query audit: a point exactly on a wall edge counted as
 * off it, so the nearest polygon was a neighbour 0.18 m away and a ray from there hit at t = 0). On real levels,
 * solo and tiled, points along every edge of every polygon, at the polygon's own heights (its vertices', not the
 * detail surface's: up to a few decimetres apart on slopes): the closest point on the polygon is over it, with the
 * point's x and z; its height there is found; the nearest query keeps x and z. A point 1 cm outside a wall edge is
 * not over the polygon. */
static void test_outline_points_on_polygon(void)
{
    static const char* levels[] = { "dungeon.obj", "nav_test.obj" };
    static const float fractions[] = { 0.0f, 0.5f, 1.0f / 3.0f, 0.1f };
    for (int lv = 0; lv < 2; ++lv)
        for (int tiled = 0; tiled < 2; ++tiled) {
            nb_navmesh* nav = bake_level(levels[lv], tiled ? 32 : 0);
            nb_query* q = nav ? query_for(nav) : NULL;
            if (!q)
                return;
            uint32_t nrefs = 0;
            nb_navmesh_poly_refs(ctx, nav, NULL, 0, &nrefs);
            nb_poly_ref* refs = malloc(nrefs * sizeof(*refs));
            nb_navmesh_poly_refs(ctx, nav, refs, nrefs, &nrefs);
            int points = 0, not_over = 0, no_height = 0, moved = 0, outside = 0, outside_over = 0;
            for (uint32_t i = 0; i < nrefs; ++i) {
                float v[NB_MAX_VERTS_PER_POLY * 3];
                int32_t n = 0;
                int offmesh = 0;
                nb_navmesh_poly(nav, refs[i], v, &n, NULL, NULL, &offmesh);
                if (offmesh)
                    continue;
                float cx = 0.0f, cz = 0.0f;
                for (int32_t k = 0; k < n; ++k) {
                    cx += v[k * 3] / (float)n;
                    cz += v[k * 3 + 2] / (float)n;
                }
                for (int32_t k = 0; k < n; ++k) {
                    const float* a = &v[k * 3];
                    const float* b = &v[((k + 1) % n) * 3];
                    for (int fi = 0; fi < 4; ++fi) {
                        const float u = fractions[fi];
                        const float p[3] = { a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u,
                                             a[2] + (b[2] - a[2]) * u };
                        float c[3], h, near[3];
                        int over = 0;
                        ++points;
                        CHECK_INT(nb_query_closest_point_on_poly(q, refs[i], p, c, &over), NB_OK);
                        if (!over || c[0] != p[0] || c[2] != p[2]) {
                            if (++not_over <= 3)
                                fprintf(stderr, "  %s%s: (%g %g %g) on the outline of 0x%x: closest (%g %g %g), over %d\n",
                                        levels[lv], tiled ? " tiled" : "", p[0], p[1], p[2], (unsigned)refs[i], c[0],
                                        c[1], c[2], over);
                        }
                        no_height += nb_query_poly_height(q, refs[i], p, &h) != NB_OK;
                        nearest(q, p, HALF, near);
                        moved += dist_xz(near, p) > NOISE;
                        if (u != 0.5f)
                            continue;
                        /* 1 cm out, across the edge from the polygon's center */
                        float nx = b[2] - a[2], nz = a[0] - b[0];
                        const float len = sqrtf(nx * nx + nz * nz);
                        if (len < 0.05f)
                            continue;
                        if (nx * (cx - p[0]) + nz * (cz - p[2]) > 0.0f) {
                            nx = -nx;
                            nz = -nz;
                        }
                        const float o[3] = { p[0] + nx / len * 0.01f, p[1], p[2] + nz / len * 0.01f };
                        ++outside;
                        CHECK_INT(nb_query_closest_point_on_poly(q, refs[i], o, c, &over), NB_OK);
                        outside_over += over;
                        outside_over += nb_query_poly_height(q, refs[i], o, &h) == NB_OK;
                    }
                }
            }
            CHECK(points > 1000 && outside > 200);
            CHECK_INT(not_over, 0);
            CHECK_INT(no_height, 0);
            CHECK_INT(moved, 0);
            CHECK_INT(outside_over, 0);
            free(refs);
            nb_query_destroy(ctx, q);
            nb_navmesh_destroy(ctx, nav);
        }
}

/* A straight-pulled path's corners are in sight of each other: on real levels, solo and tiled, every ray from a
 * corner to the next is clear (t = 1 within NOISE, no normal), started in the polygon the nearest query gives (as
 * the JavaScript API does) or in the path's own; and a move from a corner toward the next one gets there (finding
 * 6: a move aimed exactly at a vertex used to stop short). */
static void test_ray_corner_to_corner(void)
{
    static const char* levels[2] = { "dungeon.obj", "nav_test.obj" };
    enum { N = 250 };
    for (int lv = 0; lv < 2; ++lv)
        for (int tiled = 0; tiled < 2; ++tiled) {
            nb_navmesh* nav = bake_level(levels[lv], tiled ? 32 : 0);
            if (!nav)
                continue;
            nb_query* q = query_for(nav);
            nb_query_filter f;
            nb_query_filter_init(&f);
            static float pairs[N * 6];
            random_points(q, 2 * N, 11 + (uint64_t)lv, pairs);
            static uint8_t status[N];
            static uint32_t offsets[N + 1];
            uint32_t needed = 0;
            nb_query_find_paths_ex(q, pairs, N, HALF, &f, 0, status, NULL, offsets, NULL, NULL, NULL, 0, &needed);
            float* pts = (float*)malloc(sizeof(float) * 3 * (needed + 1));
            nb_poly_ref* prefs = (nb_poly_ref*)malloc(sizeof(nb_poly_ref) * (needed + 1));
            CHECK_INT(nb_query_find_paths_ex(q, pairs, N, HALF, &f, 0, status, NULL, offsets, pts, NULL, prefs, needed,
                                             NULL),
                      NB_OK);
            int legs = 0, blocked = 0, short_moves = 0;
            for (int i = 0; i < N; ++i) {
                if (status[i] != NB_PATH_COMPLETE)
                    continue;
                for (uint32_t k = offsets[i]; k + 1 < offsets[i + 1]; ++k) {
                    const float* a = &pts[k * 3];
                    const float* b = &pts[k * 3 + 3];
                    const float len = dist_xz(a, b);
                    if (len <= NOISE)
                        continue;
                    const nb_poly_ref near_ref = nearest(q, a, HALF, NULL);
                    CHECK(near_ref != 0);
                    for (int from = 0; from < 2; ++from) {
                        float t = -1.0f, nrm[3] = { 1, 1, 1 };
                        const nb_poly_ref sref = from ? prefs[k] : near_ref;
                        CHECK_INT(nb_query_raycast(q, sref, a, b, &f, &t, nrm, NULL, NULL, 0), NB_OK);
                        ++legs;
                        const int clear = (1.0f - t) * len <= NOISE && nrm[0] == 0.0f && nrm[2] == 0.0f;
                        if (!clear && ++blocked <= 5)
                            fprintf(stderr, "  %s tile %d: ray (%.4f %.4f %.4f) -> (%.4f %.4f %.4f) from %s poly: t %g "
                                            "normal (%g %g)\n",
                                    levels[lv], tiled ? 32 : 0, a[0], a[1], a[2], b[0], b[1], b[2],
                                    from ? "its" : "the nearest", t, nrm[0], nrm[2]);
                    }
                    float moved[3];
                    CHECK_INT(nb_query_move_along_surface(q, near_ref, a, b, &f, moved, NULL, NULL, 0), NB_OK);
                    if (dist_xz(moved, b) > NOISE && ++short_moves <= 5)
                        fprintf(stderr, "  %s tile %d: move (%.4f %.4f) -> (%.4f %.4f) stops at (%.4f %.4f)\n",
                                levels[lv], tiled ? 32 : 0, a[0], a[2], b[0], b[2], moved[0], moved[2]);
                }
            }
            CHECK(legs > 200);
            CHECK_INT(blocked, 0);
            CHECK_INT(short_moves, 0);
            free(pts);
            free(prefs);
            nb_query_destroy(ctx, q);
            nb_navmesh_destroy(ctx, nav);
        }
}

/* Does polygon ref have a wall (an edge, or the part of a tile-border edge, with no neighbour) through p (within
 * NOISE, in xz) whose inward normal is nrm? */
static int wall_with_normal(const nb_navmesh* nav, nb_poly_ref ref, const float* p, const float* nrm)
{
    uint32_t poly;
    const nb_tile* t = nb_navmesh_resolve(nav, ref, &poly);
    const nb_tile_view* v = &t->v;
    const uint32_t n = v->poly_nverts[poly];
    for (uint32_t e = 0; e < n; ++e) {
        const float* a = &v->verts[v->poly_verts[poly * v->nvp + e] * 3];
        const float* b = &v->verts[v->poly_verts[poly * v->nvp + (e + 1) % n] * 3];
        const float ex = b[0] - a[0], ez = b[2] - a[2], len2 = ex * ex + ez * ez, len = sqrtf(len2);
        float u = ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / len2;
        u = u < 0.0f ? 0.0f : (u > 1.0f ? 1.0f : u);
        const float c[3] = { a[0] + ex * u, 0.0f, a[2] + ez * u };
        if (dist_xz(c, p) > NOISE || fabsf(nrm[0] - ez / len) > 1e-3f || fabsf(nrm[2] + ex / len) > 1e-3f)
            continue;
        int open = 0;
        for (uint32_t li = t->first_link[poly]; li != NB_NULL_LINK && !open; li = t->links[li].next) {
            const nb_link* l = &t->links[li];
            const float slack = NOISE / len;
            uint32_t np;
            const nb_tile* nt = nb_navmesh_resolve(nav, l->ref, &np);
            float t0 = 0.0f, t1 = 1.0f;
            if (nt && l->edge == e)
                nb_link_span(v, poly, l, &nt->v, np, &t0, &t1);
            open = l->edge == e && u >= t0 - slack && u <= t1 + slack;
        }
        if (!open)
            return 1;
    }
    return 0;
}

/* Is there a wall through p with inward normal nrm on polygon ref or on the polygons around p linked to it (those
 * whose portals pass within NOISE of p: a ray that stops at a vertex meets the wall of whichever polygon is there)? */
static int wall_near(const nb_navmesh* nav, nb_poly_ref ref, const float* p, const float* nrm)
{
    nb_poly_ref around[64];
    int n = 0;
    around[n++] = ref;
    for (int i = 0; i < n; ++i) {
        if (wall_with_normal(nav, around[i], p, nrm))
            return 1;
        uint32_t poly;
        const nb_tile* t = nb_navmesh_resolve(nav, around[i], &poly);
        const nb_tile_view* v = &t->v;
        for (uint32_t li = t->first_link[poly]; li != NB_NULL_LINK && n < 64; li = t->links[li].next) {
            const nb_link* l = &t->links[li];
            if (!l->ref || l->edge >= v->poly_nverts[poly])
                continue;
            const float* a = &v->verts[v->poly_verts[poly * v->nvp + l->edge] * 3];
            const float* b = &v->verts[v->poly_verts[poly * v->nvp + (l->edge + 1) % v->poly_nverts[poly]] * 3];
            const float ex = b[0] - a[0], ez = b[2] - a[2];
            float u = ((p[0] - a[0]) * ex + (p[2] - a[2]) * ez) / (ex * ex + ez * ez);
            u = u < 0.0f ? 0.0f : (u > 1.0f ? 1.0f : u);
            const float c[3] = { a[0] + ex * u, 0.0f, a[2] + ez * u };
            int seen = dist_xz(c, p) > NOISE;
            for (int k = 0; k < n && !seen; ++k)
                seen = around[k] == l->ref;
            if (!seen)
                around[n++] = l->ref;
        }
    }
    return 0;
}

/* Real hits stay real: rays on real levels that hit something hit a wall of the last polygon they cross, at the hit
 * point, with that wall's normal facing the ray; rays that pass end on the navmesh. */
static void test_ray_hits_are_walls(void)
{
    static const char* levels[2] = { "dungeon.obj", "nav_test.obj" };
    for (int lv = 0; lv < 2; ++lv)
        for (int tiled = 0; tiled < 2; ++tiled) {
            nb_navmesh* nav = bake_level(levels[lv], tiled ? 32 : 0);
            if (!nav)
                continue;
            nb_query* q = query_for(nav);
            nb_query_filter f;
            nb_query_filter_init(&f);
            enum { N = 600 };
            static float starts[N * 3];
            random_points(q, N, 77 + (uint64_t)tiled, starts);
            int hits = 0, bad = 0;
            for (int i = 0; i < N; ++i) {
                const float* s = &starts[i * 3];
                const float ang = (float)i * 2.399963f, len = 1.0f + (float)(i % 13);
                const float e[3] = { s[0] + cosf(ang) * len, s[1], s[2] + sinf(ang) * len };
                const nb_poly_ref sref = nearest(q, s, HALF, NULL);
                float t = -1.0f, nrm[3];
                nb_poly_ref path[256];
                int32_t np = 0;
                CHECK_INT(nb_query_raycast(q, sref, s, e, &f, &t, nrm, path, &np, 256), NB_OK);
                if (t >= 1.0f || np < 1 || np >= 256)
                    continue;
                ++hits;
                const float hit[3] = { s[0] + (e[0] - s[0]) * t, s[1], s[2] + (e[2] - s[2]) * t };
                /* the reported normal is that of a wall through the hit point, and it faces the ray */
                const int wall = wall_near(nav, path[np - 1], hit, nrm);
                const float facing = nrm[0] * (e[0] - s[0]) + nrm[2] * (e[2] - s[2]);
                const int ok = wall && facing <= 1e-4f;
                if (!ok && ++bad <= 5)
                    fprintf(stderr, "  %s tile %d: ray %d hits at t %g (%.3f %.3f) normal (%g %g): wall there %d\n",
                            levels[lv], tiled ? 32 : 0, i, t, hit[0], hit[2], nrm[0], nrm[2], wall);
            }
            CHECK(hits > N / 4);
            CHECK_INT(bad, 0);
            nb_query_destroy(ctx, q);
            nb_navmesh_destroy(ctx, nav);
        }
}

/* ---- finding 2: tiled paths ------------------------------------------------------------------------------------ */

/* Tiles split polygons along their borders, and a border polygon's A* node used to keep the entry point of the
 * first portal found: tiled paths came out longer than solo ones (by more than 1% for one pair in six). With a node
 * per side a polygon is entered across, tiling costs next to nothing. */
static void test_tiled_paths_as_short_as_solo(void)
{
    nb_navmesh* solo = bake_level("dungeon.obj", 0);
    if (!solo)
        return;
    nb_query* qs = query_for(solo);
    nb_query_filter f;
    nb_query_filter_init(&f);
    enum { N = 700 };
    static float pairs[N * 6];
    random_points(qs, 2 * N, 5, pairs);
    static uint8_t ss[N], st[N];
    static float ls[N], lt[N];
    nb_query_find_paths(qs, pairs, N, HALF, &f, 0, ss, ls, NULL, NULL, 0, NULL);
    static const int sizes[2] = { 32, 16 };
    for (int k = 0; k < 2; ++k) {
        nb_navmesh* tiled = bake_level("dungeon.obj", sizes[k]);
        if (!tiled)
            continue;
        nb_query* qt = query_for(tiled);
        nb_query_find_paths(qt, pairs, N, HALF, &f, 0, st, lt, NULL, NULL, 0, NULL);
        int both = 0, longer = 0;
        double sum = 0.0;
        for (int i = 0; i < N; ++i) {
            if (ss[i] != NB_PATH_COMPLETE || st[i] != NB_PATH_COMPLETE || ls[i] < 1.0f)
                continue;
            ++both;
            sum += lt[i] / ls[i];
            longer += lt[i] > ls[i] * 1.01f;
        }
        fprintf(stderr, "  tile %d: %d pairs, tiled/solo length: mean %.4f, %d more than 1%% longer\n", sizes[k], both,
                both ? sum / both : 0.0, longer);
        CHECK(both > N / 2);
        /* the polygons differ (tiles cut them), so a few paths still differ either way */
        CHECK(longer * 12 <= both);
        CHECK(sum <= both * 1.0025);
        /* A pool of one node per polygon (nb_navmesh_poly_count's promise) still never runs out: the extra nodes
         * take only what it holds beyond that. */
        nb_query* small = NULL;
        CHECK_INT(nb_query_create(ctx, tiled, nb_navmesh_poly_count(tiled), &small), NB_OK);
        static uint8_t s2[N];
        nb_query_find_paths(small, pairs, N, HALF, &f, 0, s2, NULL, NULL, NULL, 0, NULL);
        CHECK(memcmp(s2, st, N) == 0);
        nb_query_destroy(ctx, small);
        nb_query_destroy(ctx, qt);
        nb_navmesh_destroy(ctx, tiled);
    }
    nb_query_destroy(ctx, qs);
    nb_navmesh_destroy(ctx, solo);
}

/* ---- finding 3: partial paths ---------------------------------------------------------------------------------- */

/* The polygons reachable from ref (through links the default filter allows: all of them), as a flood over the links;
 * mark: one byte per (slot, polygon), slot-major with per_slot entries each. */
static uint32_t reachable(const nb_navmesh* nav, nb_poly_ref ref, nb_poly_ref* out, uint32_t cap, uint8_t* mark,
                          uint32_t per_slot)
{
    uint32_t n = 0;
    memset(mark, 0, (size_t)nav->params.max_tiles * per_slot);
    out[n++] = ref;
    mark[(nb_ref_slot(nav, ref) - 1) * per_slot + nb_ref_poly(ref)] = 1;
    for (uint32_t i = 0; i < n; ++i) {
        uint32_t p;
        const nb_tile* t = nb_navmesh_resolve(nav, out[i], &p);
        for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next) {
            const nb_poly_ref r = t->links[li].ref;
            uint8_t* m = &mark[(nb_ref_slot(nav, r) - 1) * per_slot + nb_ref_poly(r)];
            if (r && !*m && n < cap) {
                *m = 1;
                out[n++] = r;
            }
        }
    }
    return n;
}

/* A partial path ends at the reachable point nearest the end (the README's promise): no polygon reachable from the
 * start has a point nearer to it (brute force over the start's connected polygons), in the batch and in
 * nb_query_find_path. */
static void test_partial_ends_nearest(void)
{
    static const char* levels[2] = { "nav_test.obj", "dungeon.obj" };
    static nb_poly_ref reach[8192];
    for (int lv = 0; lv < 2; ++lv)
        for (int tiled = 0; tiled < 2; ++tiled) {
            nb_navmesh* nav = bake_level(levels[lv], tiled ? 32 : 0);
            if (!nav)
                continue;
            nb_query* q = query_for(nav);
            nb_query_filter f;
            nb_query_filter_init(&f);
            enum { N = 120 };
            static float pairs[N * 6];
            random_points(q, 2 * N, 31 + (uint64_t)lv, pairs);
            static uint8_t status[N];
            static uint32_t offsets[N + 1];
            uint32_t needed = 0;
            nb_query_find_paths(q, pairs, N, HALF, &f, 0, status, NULL, offsets, NULL, 0, &needed);
            float* pts = (float*)malloc(sizeof(float) * 3 * (needed + 1));
            CHECK_INT(nb_query_find_paths(q, pairs, N, HALF, &f, 0, status, NULL, offsets, pts, needed, NULL), NB_OK);
            uint32_t per_slot = 1;
            for (uint32_t k = 0; k < nav->params.max_tiles; ++k)
                if (nav->tiles[k].data && nav->tiles[k].v.npolys > per_slot)
                    per_slot = nav->tiles[k].v.npolys;
            uint8_t* mark = (uint8_t*)malloc((size_t)nav->params.max_tiles * per_slot);
            int partial = 0, farther = 0;
            for (int i = 0; i < N; ++i) {
                if (status[i] != NB_PATH_PARTIAL)
                    continue;
                ++partial;
                float sa[3], sb[3];
                const nb_poly_ref sref = nearest(q, &pairs[i * 6], HALF, sa);
                const nb_poly_ref eref = nearest(q, &pairs[i * 6 + 3], HALF, sb);
                const uint32_t n = reachable(nav, sref, reach, 8192, mark, per_slot);
                float best = FLT_MAX;
                for (uint32_t k = 0; k < n; ++k) {
                    float c[3];
                    int is_link = 0;
                    nb_navmesh_poly(nav, reach[k], NULL, NULL, NULL, NULL, &is_link);
                    if (is_link)
                        continue;
                    CHECK_INT(nb_query_closest_point_on_poly(q, reach[k], sb, c, NULL), NB_OK);
                    best = fminf(best, dist3(c, sb));
                }
                const float got = dist3(&pts[(offsets[i + 1] - 1) * 3], sb);
                /* the single call: the corridor's last polygon holds that point */
                nb_poly_ref path[4096];
                int32_t np = 0;
                int part = 0;
                CHECK_INT(nb_query_find_path(q, sref, eref, sa, sb, &f, path, &np, 4096, &part), NB_OK);
                CHECK(part == 1 && np >= 1);
                float c[3];
                CHECK_INT(nb_query_closest_point_on_poly(q, path[np - 1], sb, c, NULL), NB_OK);
                const int ok = got <= best + NOISE && dist3(c, sb) <= best + NOISE;
                if (!ok && ++farther <= 5)
                    fprintf(stderr, "  %s tile %d: pair %d ends %.3f from the end (single call %.3f), %.3f reachable\n",
                            levels[lv], tiled ? 32 : 0, i, got, dist3(c, sb), best);
            }
            CHECK(partial >= (lv == 0 ? 20 : 5));
            CHECK_INT(farther, 0);
            free(mark);
            free(pts);
            nb_query_destroy(ctx, q);
            nb_navmesh_destroy(ctx, nav);
        }
}

/* ---- finding 4: the nearest polygon's box ---------------------------------------------------------------------- */

/* Probes around the surface with boxes of several shapes: the polygon returned has bounds (vertices and detail
 * surface) that overlap the box, and none of the polygons whose bounds do scores better (brute force with the
 * header's rule: over a polygon, the vertical gap less the climb; beside it, the distance to its closest point); no
 * polygon is returned when none overlaps. */
static void test_nearest_inside_box(void)
{
    static const float halves[4][3] = {
        { 0.5f, 1.0f, 0.5f }, { 5.0f, 2.0f, 5.0f }, { 2.0f, 4.0f, 2.0f }, { 1.0f, 0.3f, 1.0f }
    };
    for (int tiled = 0; tiled < 2; ++tiled) {
        nb_navmesh* nav = bake_level("nav_test.obj", tiled ? 32 : 0);
        if (!nav)
            continue;
        nb_query* q = query_for(nav);
        uint32_t nrefs = 0;
        nb_navmesh_poly_refs(ctx, nav, NULL, 0, &nrefs);
        nb_poly_ref* refs = (nb_poly_ref*)malloc(sizeof(nb_poly_ref) * nrefs);
        nb_navmesh_poly_refs(ctx, nav, refs, nrefs, &nrefs);
        enum { N = 1500 };
        static float pts[N * 3];
        random_points(q, N, 99, pts);
        uint64_t rng = 5;
        int outside = 0, worse = 0, found = 0, none = 0;
        for (int i = 0; i < N; ++i) {
            float c[3];
            for (int a = 0; a < 3; ++a) {
                rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                c[a] = pts[i * 3 + a] + ((float)(rng >> 40) / 16777216.0f - 0.5f) * (a == 1 ? 6.0f : 4.0f);
            }
            const float* h = halves[i % 4];
            const float lo[3] = { c[0] - h[0], c[1] - h[1], c[2] - h[2] };
            const float hi[3] = { c[0] + h[0], c[1] + h[1], c[2] + h[2] };
            float point[3];
            const nb_poly_ref r = nearest(q, c, h, point);
            float best = FLT_MAX, got = FLT_MAX;
            for (uint32_t k = 0; k < nrefs; ++k) {
                int is_link = 0;
                nb_navmesh_poly(nav, refs[k], NULL, NULL, NULL, NULL, &is_link);
                if (is_link)
                    continue;
                float plo[3], phi[3];
                poly_bounds(nav, refs[k], plo, phi);
                const int overlaps = plo[0] <= hi[0] && phi[0] >= lo[0] && plo[1] <= hi[1] && phi[1] >= lo[1] &&
                                     plo[2] <= hi[2] && phi[2] >= lo[2];
                if (refs[k] == r && !overlaps && ++outside <= 5)
                    fprintf(stderr,
                            "  tile %d: probe (%.3f %.3f %.3f) +- (%g %g %g) gives a polygon with y %.3f..%.3f, "
                            "x %.3f..%.3f, z %.3f..%.3f\n",
                            tiled ? 32 : 0, c[0], c[1], c[2], h[0], h[1], h[2], plo[1], phi[1], plo[0], phi[0], plo[2],
                            phi[2]);
                if (!overlaps)
                    continue;
                float cp[3];
                int over = 0;
                nb_query_closest_point_on_poly(q, refs[k], c, cp, &over);
                uint32_t p;
                const nb_tile* t = nb_navmesh_resolve(nav, refs[k], &p);
                float d;
                if (over) {
                    d = fabsf(c[1] - cp[1]) - t->v.walkable_climb;
                    d = d > 0.0f ? d * d : 0.0f;
                } else {
                    const float dx = cp[0] - c[0], dy = cp[1] - c[1], dz = cp[2] - c[2];
                    d = dx * dx + dy * dy + dz * dz;
                }
                best = fminf(best, d);
                if (refs[k] == r)
                    got = d;
            }
            if (r) {
                ++found;
                if (got > best && ++worse <= 5)
                    fprintf(stderr, "  tile %d: probe %d scores %g, a polygon in the box %g\n", tiled ? 32 : 0, i, got,
                            best);
            } else {
                ++none;
                if (best < FLT_MAX && ++worse <= 5)
                    fprintf(stderr, "  tile %d: probe %d finds nothing, a polygon in the box scores %g\n",
                            tiled ? 32 : 0, i, best);
            }
        }
        CHECK(found > N / 2 && none > 0);
        CHECK_INT(outside, 0);
        CHECK_INT(worse, 0);
        free(refs);
        nb_query_destroy(ctx, q);
        nb_navmesh_destroy(ctx, nav);
    }
}

/* ---- finding 5: random points and load order ------------------------------------------------------------------- */

/* An empty navmesh of a's tile grid. */
static nb_navmesh* empty_like(const nb_navmesh* a)
{
    nb_navmesh* b = NULL;
    CHECK_INT(nb_navmesh_create(ctx, nb_navmesh_get_params(a), &b), NB_OK);
    return b;
}

/* Adds every tile of a to b, in slot order or in reverse; returns how many. */
static int add_tiles_of(const nb_navmesh* a, nb_navmesh* b, int reverse)
{
    int added = 0;
    for (uint32_t k = 0; k < a->params.max_tiles; ++k) {
        const nb_tile* t = &a->tiles[reverse ? a->params.max_tiles - 1 - k : k];
        if (!t->data)
            continue;
        CHECK_INT(nb_navmesh_add_tile(ctx, b, t->data, t->size), NB_OK);
        ++added;
    }
    return added;
}

/* The same tiles loaded in reverse order (other slots, other link order) give the same random points, with and
 * without a center. */
static void test_random_independent_of_load_order(void)
{
    nb_navmesh* a = bake_level("nav_test.obj", 32);
    if (!a)
        return;
    nb_navmesh* b = empty_like(a);
    CHECK(add_tiles_of(a, b, 1) > 4);
    CHECK_INT(nb_navmesh_tile_count(b), nb_navmesh_tile_count(a));
    nb_query* qa = query_for(a);
    nb_query* qb = query_for(b);
    nb_query_filter f;
    nb_query_filter_init(&f);
    uint64_t ra = 99, rb = 99;
    int same = 0;
    static float centers[200 * 3];
    for (int i = 0; i < 200; ++i) {
        float pb[3];
        nb_poly_ref fa = 0, fb = 0;
        CHECK_INT(nb_query_random_point(qa, &f, &ra, &fa, &centers[i * 3]), NB_OK);
        CHECK_INT(nb_query_random_point(qb, &f, &rb, &fb, pb), NB_OK);
        same += memcmp(&centers[i * 3], pb, sizeof(pb)) == 0;
    }
    CHECK_INT(same, 200);
    /* around points of a (its own stream, so that a difference above does not carry over) */
    ra = rb = 7;
    int around = 0;
    for (int i = 0; i < 200; ++i) {
        const float* c = &centers[i * 3];
        const nb_poly_ref sa = nearest(qa, c, HALF, NULL), sb = nearest(qb, c, HALF, NULL);
        float pa[3], pb[3];
        nb_poly_ref fa = 0, fb = 0;
        CHECK_INT(nb_query_random_point_around(qa, sa, c, 8.0f, &f, &ra, &fa, pa), NB_OK);
        CHECK_INT(nb_query_random_point_around(qb, sb, c, 8.0f, &f, &rb, &fb, pb), NB_OK);
        around += memcmp(pa, pb, sizeof(pa)) == 0;
        ra = rb = 7 + (uint64_t)i; /* each pair from the same state */
    }
    CHECK_INT(around, 200);
    /* a query whose scratch cannot hold the tile list walks the tiles in the same order */
    nb_query* qc = NULL;
    CHECK_INT(nb_query_create(ctx, b, 4, &qc), NB_OK);
    ra = rb = 123;
    int small_same = 0;
    for (int i = 0; i < 50; ++i) {
        float pa[3], pc[3];
        nb_poly_ref fa = 0, fc = 0;
        CHECK_INT(nb_query_random_point(qa, &f, &ra, &fa, pa), NB_OK);
        CHECK_INT(nb_query_random_point(qc, &f, &rb, &fc, pc), NB_OK);
        small_same += memcmp(pa, pc, sizeof(pa)) == 0;
    }
    CHECK_INT(small_same, 50);
    nb_query_destroy(ctx, qc);
    nb_query_destroy(ctx, qa);
    nb_query_destroy(ctx, qb);
    nb_navmesh_destroy(ctx, a);
    nb_navmesh_destroy(ctx, b);
}

/* Random points come from a table of running area sums kept in the query while the navmesh and the filter's flags
 * stay the same (each call walked every polygon twice: 5 ms a point at 70k polygons). A query made before the
 * tiles were added has no room for the table and walks: both give the same points. Polygon flags, a removed tile
 * and another filter each rebuild the table. */
enum { RANDOM_DRAWS = 300 };

/* RANDOM_DRAWS points from both queries with the same seed: how many are the same (point and polygon); the table's
 * polygons go to picked (when given). */
static int draws_agree(nb_query* walk, nb_query* table, const nb_query_filter* f, uint64_t seed, nb_poly_ref* picked)
{
    uint64_t rw = seed, rt = seed;
    int same = 0;
    for (int i = 0; i < RANDOM_DRAWS; ++i) {
        float pw[3], pt[3];
        nb_poly_ref fw = 0, ft = 0;
        CHECK_INT(nb_query_random_point(walk, f, &rw, &fw, pw), NB_OK);
        CHECK_INT(nb_query_random_point(table, f, &rt, &ft, pt), NB_OK);
        same += fw == ft && memcmp(pw, pt, sizeof(pw)) == 0;
        if (picked)
            picked[i] = ft;
    }
    return same;
}

static int count_ref(const nb_poly_ref* refs, nb_poly_ref r)
{
    int n = 0;
    for (int i = 0; i < RANDOM_DRAWS; ++i)
        n += refs[i] == r;
    return n;
}

static void test_random_table_as_the_walk(void)
{
    nb_navmesh* a = bake_level("nav_test.obj", 32);
    if (!a)
        return;
    nb_navmesh* b = empty_like(a);
    nb_query* walk = query_for(b); /* made on the empty navmesh */
    add_tiles_of(a, b, 0);
    nb_query* table = query_for(b);
    nb_query_filter f;
    nb_query_filter_init(&f);
    static nb_poly_ref first[RANDOM_DRAWS], picked[RANDOM_DRAWS];
    CHECK_INT(draws_agree(walk, table, &f, 5, first), RANDOM_DRAWS);
    const nb_poly_ref flagged = first[0];
    /* flags: with a filter excluding 0x8, first before any polygon has it (the table is summed for this filter),
     * then after one polygon gets it: no point in it any more, the same as the walk */
    f.exclude_flags = 0x8;
    CHECK_INT(draws_agree(walk, table, &f, 11, NULL), RANDOM_DRAWS);
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, b, flagged, 0x8), NB_OK);
    CHECK_INT(draws_agree(walk, table, &f, 11, picked), RANDOM_DRAWS);
    CHECK_INT(count_ref(picked, flagged), 0);
    /* a removed tile, after the table was summed for this filter: none of its polygons is picked any more */
    f.exclude_flags = 0;
    CHECK_INT(draws_agree(walk, table, &f, 13, NULL), RANDOM_DRAWS);
    uint32_t poly = 0;
    const nb_tile* gone = nb_navmesh_resolve(b, flagged, &poly);
    CHECK(gone != NULL);
    if (gone) {
        CHECK_INT(nb_navmesh_remove_tile(ctx, b, gone->v.tile_x, gone->v.tile_z), NB_OK);
        CHECK_INT(draws_agree(walk, table, &f, 17, picked), RANDOM_DRAWS);
        int from_gone = 0;
        for (int i = 0; i < RANDOM_DRAWS; ++i)
            from_gone += nb_navmesh_resolve(b, picked[i], &poly) == NULL;
        CHECK_INT(from_gone, 0);
    }
    nb_query_destroy(ctx, walk);
    nb_query_destroy(ctx, table);
    nb_navmesh_destroy(ctx, a);
    nb_navmesh_destroy(ctx, b);
}

/* A 40 x 40 floor with a 6 x 6 hole in its middle, moved by d in x and z (the hole's walkable edge, after erosion
 * by the 0.6 m agent, lies at about 3.8 from the centre). */
static nb_navmesh* holed_floor(float d)
{
    mesh_builder m;
    memset(&m, 0, sizeof(m));
    add_floor(&m, d - 20.0f, d - 20.0f, d + 20.0f, d - 3.0f, 0.0f);
    add_floor(&m, d - 20.0f, d + 3.0f, d + 20.0f, d + 20.0f, 0.0f);
    add_floor(&m, d - 20.0f, d - 3.0f, d - 3.0f, d + 3.0f, 0.0f);
    add_floor(&m, d + 3.0f, d - 3.0f, d + 20.0f, d + 3.0f, 0.0f);
    return bake_mesh(&m);
}

/* Rays and moves give the same answers on a level far from the origin as near it, and an end point far beyond the
 * level changes nothing but t. (The outline tolerance was 1e-5 of the largest coordinate, the end's included: 1 m at
 * 1e5, and rays running 0.3 m into the hole went through; a ray toward 1e8 stopped at its start; a move toward 1e9
 * went backwards, its squared distances to every wall rounding to one float.) Points beyond NB_MAX_COORD are
 * refused by name. */
static void test_far_from_origin_and_far_ends(void)
{
    nb_query_filter f;
    nb_query_filter_init(&f);
    static const float offsets[] = { 0.0f, 3e4f, 1e5f };
    static const float zs[] = { 3.5f, 3.2f, 2.9f }; /* 0.3 .. 0.9 m into the hole */
    float hit_x[3] = { 0 };
    for (int o = 0; o < 3; ++o) {
        const float d = offsets[o];
        nb_navmesh* nav = holed_floor(d);
        if (!nav)
            continue;
        nb_query* q = query_for(nav);
        for (int k = 0; k < 3; ++k) {
            const float a[3] = { d - 10.0f, 0.0f, d + zs[k] }, b[3] = { d + 10.0f, 0.0f, d + zs[k] };
            float pa[3];
            const nb_poly_ref ra = nearest(q, a, HALF, pa);
            float t = -1, nrm[3];
            CHECK_INT(nb_query_raycast(q, ra, pa, b, &f, &t, nrm, NULL, NULL, 0), NB_OK);
            CHECK(t < 1.0f); /* it meets the hole */
            const float x = pa[0] + (b[0] - pa[0]) * t - d;
            if (o == 0)
                hit_x[k] = x;
            else
                CHECK_NEAR(x, hit_x[k], 0.05); /* float spacing at 1e5 is 0.008 */
            CHECK(x < -3.0f && x > -4.5f);
        }
        nb_query_destroy(ctx, q);
        nb_navmesh_destroy(ctx, nav);
    }

    nb_navmesh* nav = holed_floor(0.0f);
    if (!nav)
        return;
    nb_query* q = query_for(nav);
    const float a[3] = { -10.0f, 0.0f, 3.2f };
    float pa[3];
    const nb_poly_ref ra = nearest(q, a, HALF, pa);
    for (int e = 1; e <= 8; ++e) { /* ends at 10, 100, ... 1e8 along the same line */
        const float b[3] = { powf(10.0f, (float)e), 0.0f, 3.2f };
        float t = -1, nrm[3];
        CHECK_INT(nb_query_raycast(q, ra, pa, b, &f, &t, nrm, NULL, NULL, 0), NB_OK);
        CHECK_NEAR(pa[0] + (b[0] - pa[0]) * t, hit_x[1], 0.01);
    }
    /* A move east from (0, 0, 10) ends on the floor's eroded east edge (a metre or less inside x = 20), the same
     * point whether its end is at 100 or 1e9. */
    const float s[3] = { 0.0f, 0.0f, 10.0f };
    float ps[3], edge[3] = { 0 };
    const nb_poly_ref rs = nearest(q, s, HALF, ps);
    for (int e = 2; e <= 9; ++e) {
        const float b[3] = { powf(10.0f, (float)e), 0.0f, 10.0f };
        float out[3];
        CHECK_INT(nb_query_move_along_surface(q, rs, ps, b, &f, out, NULL, NULL, 0), NB_OK);
        if (e == 2)
            memcpy(edge, out, sizeof(edge));
        CHECK(edge[0] > 19.0f - 1e-3f && edge[0] < 20.0f);
        CHECK_NEAR(out[0], edge[0], 0.01);
        CHECK_NEAR(out[2], 10.0, 0.01);
    }
    const float beyond[3] = { 2e9f, 0.0f, 10.0f };
    float out[3], t;
    CHECK_STATUS(ctx, nb_query_move_along_surface(q, rs, ps, beyond, &f, out, NULL, NULL, 0), NB_ERR_TOO_LARGE,
                 "nb_query_move_along_surface: end[0] is 2e+09, beyond 1e+09");
    CHECK_STATUS(ctx, nb_query_raycast(q, rs, ps, beyond, &f, &t, NULL, NULL, NULL, 0), NB_ERR_TOO_LARGE, "end[0]");
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_ray_from_vertices);
    RUN(test_ray_corner_to_corner);
    RUN(test_outline_points_on_polygon);
    RUN(test_ray_hits_are_walls);
    RUN(test_tiled_paths_as_short_as_solo);
    RUN(test_partial_ends_nearest);
    RUN(test_nearest_inside_box);
    RUN(test_random_independent_of_load_order);
    RUN(test_far_from_origin_and_far_ends);
    RUN(test_random_table_as_the_walk);
    nb_context_destroy(ctx);
    return nbt_finish("test_query_boundary");
}
