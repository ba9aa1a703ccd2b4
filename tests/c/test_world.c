/* The procedural big test world (c/tools/world.c): determinism, size, sanity of the arrays, and a small world
 * baked tiled with paths into the first building's upper floor. */
#include "navbake.h"
#include "nbtest_level.h"
#include "world.h"

static nb_context* ctx;

/* Finite coordinates and indices in range; returns the number of bad entries. */
static uint32_t bad_entries(const nb_obj* w)
{
    uint32_t bad = 0;
    for (uint32_t i = 0; i < w->vertex_count * 3; ++i)
        bad += !isfinite(w->positions[i]);
    for (uint32_t i = 0; i < w->triangle_count * 3; ++i)
        bad += w->indices[i] >= w->vertex_count;
    return bad;
}

/* y of (b - a) x (c - a) for triangle t. */
static float normal_y(const nb_obj* w, uint32_t t)
{
    const float* a = &w->positions[w->indices[t * 3] * 3];
    const float* b = &w->positions[w->indices[t * 3 + 1] * 3];
    const float* c = &w->positions[w->indices[t * 3 + 2] * 3];
    return (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2]);
}

static void test_same_seed_same_bytes(void)
{
    nb_obj a, b;
    CHECK_INT(nb_world_generate(7, 100000, &a), 0);
    CHECK_INT(nb_world_generate(7, 100000, &b), 0);
    CHECK_INT(a.vertex_count, b.vertex_count);
    CHECK_INT(a.triangle_count, b.triangle_count);
    /* the OBJ is printed from these arrays, so equal bits give equal files */
    if (a.vertex_count == b.vertex_count && a.triangle_count == b.triangle_count) {
        CHECK(memcmp(a.positions, b.positions, (size_t)a.vertex_count * 3 * sizeof(float)) == 0);
        CHECK(memcmp(a.indices, b.indices, (size_t)a.triangle_count * 3 * sizeof(uint32_t)) == 0);
    }
    nb_obj c;
    CHECK_INT(nb_world_generate(8, 100000, &c), 0);
    const int same = c.vertex_count == a.vertex_count && c.triangle_count == a.triangle_count &&
                     memcmp(c.positions, a.positions, (size_t)a.vertex_count * 3 * sizeof(float)) == 0;
    CHECK(!same);
    nb_obj_free(&a);
    nb_obj_free(&b);
    nb_obj_free(&c);
}

static void test_sizes_and_sanity(void)
{
    static const uint32_t targets[] = { 50000, 100000, 1000000 };
    for (int k = 0; k < 3; ++k) {
        nb_obj w;
        CHECK_INT(nb_world_generate(3, targets[k], &w), 0);
        const double n = w.triangle_count;
        if (fabs(n - targets[k]) > 0.1 * targets[k])
            fprintf(stderr, "  %u asked, %u made\n", targets[k], w.triangle_count);
        CHECK(fabs(n - targets[k]) <= 0.1 * targets[k]);
        CHECK_INT(bad_entries(&w), 0);
        /* buildings everywhere: walls are vertical (normal y = 0) and a two-storey wall spans 9 units (from 1
         * below the floor to a 1-unit parapet); the terrain has no vertical faces at all */
        uint32_t tall = 0;
        for (uint32_t t = 0; t < w.triangle_count; ++t) {
            float lo = 1e30f, hi = -1e30f;
            for (int v = 0; v < 3; ++v) {
                const float y = w.positions[w.indices[t * 3 + v] * 3 + 1];
                lo = y < lo ? y : lo;
                hi = y > hi ? y : hi;
            }
            tall += normal_y(&w, t) == 0.0f && hi - lo >= 8.9f;
        }
        /* at least the first building's 4 walls (2 triangles each, more with doors); a 1M world has ~70 */
        CHECK(tall >= 8);
        if (targets[k] == 1000000)
            CHECK(tall >= 8 * 20);
        nb_obj_free(&w);
    }
    nb_obj w;
    CHECK_INT(nb_world_generate(1, 0, &w), 0); /* tiny asks give the smallest world */
    CHECK(w.triangle_count > 0);
    CHECK_INT(bad_entries(&w), 0);
    nb_obj_free(&w);
    CHECK_INT(nb_world_generate(1, 64000001u, &w), -1);
    CHECK(w.positions == NULL && w.triangle_count == 0);
    CHECK_INT(nb_world_generate(1, 1000, NULL), -1);
}

/* The first building is where world.h says: flat upward floors at floors 1 and 2 and the roof, inside its
 * bounds, high above the ground in front of it. */
static void test_first_building(void)
{
    nb_world_landmarks l;
    nb_world_get_landmarks(5, &l);
    CHECK_NEAR(l.building_min[0], 16.0, 0);
    CHECK_NEAR(l.building_max[2], 32.0, 0);
    CHECK_NEAR(l.floor_y[1] - l.floor_y[0], 3.5, 1e-5);
    CHECK_NEAR(l.ground[1], l.floor_y[0], 0);
    CHECK_NEAR(l.upper[1], l.floor_y[2], 0);
    nb_obj w;
    CHECK_INT(nb_world_generate(5, 20000, &w), 0);
    const float levels[3] = { l.floor_y[1], l.floor_y[2], l.floor_y[0] + 3 * 3.5f };
    for (int k = 0; k < 3; ++k) {
        uint32_t up = 0, down = 0;
        for (uint32_t t = 0; t < w.triangle_count; ++t) {
            int at = 1;
            for (int v = 0; v < 3; ++v) {
                const float* p = &w.positions[w.indices[t * 3 + v] * 3];
                at &= fabsf(p[1] - levels[k]) < 1e-4f && p[0] >= l.building_min[0] && p[0] <= l.building_max[0] &&
                      p[2] >= l.building_min[2] && p[2] <= l.building_max[2];
            }
            if (at) {
                const float ny = normal_y(&w, t);
                up += ny > 0.0f;
                down += ny < 0.0f;
            }
        }
        CHECK(up >= 2); /* the floor's top faces ... */
        CHECK_INT(down, 0); /* ... face up (the undersides are 0.3 lower) */
    }
    /* terrain triangles face up too: the first triangle is the terrain's corner */
    CHECK(normal_y(&w, 0) > 0.0f);
    nb_obj_free(&w);
}

static nb_poly_ref nearest(nb_query* q, const float p[3], float out[3])
{
    static const float ext[3] = { 1.5f, 1.0f, 1.5f }; /* well under the 3.5 between floors */
    nb_query_filter f;
    nb_query_filter_init(&f);
    nb_poly_ref ref = 0;
    CHECK_INT(nb_query_find_nearest_poly(q, p, ext, &f, &ref, out), NB_OK);
    return ref;
}

/* A small world baked in 64-cell tiles: the ground in front of the first building reaches its floor 2 (up the
 * stairs to floor 1, then the ramp), and never its roof, which no stairs reach. */
static void test_small_world_bakes_tiled_with_paths_upstairs(void)
{
    for (uint32_t seed = 1; seed <= 2; ++seed) {
        nb_obj w;
        CHECK_INT(nb_world_generate(seed, 50000, &w), 0);
        nb_bake_input in = nb_obj_bake_input(&w);
        nb_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.tile_size = 64;
        nb_navmesh* nav = NULL;
        CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
        nb_query* q = NULL;
        if (nav)
            CHECK_INT(nb_query_create(ctx, nav, 4096, &q), NB_OK);
        if (!q) {
            nb_navmesh_destroy(ctx, nav);
            nb_obj_free(&w);
            continue;
        }
        CHECK(nb_navmesh_tile_count(nav) > 16);
        nb_world_landmarks l;
        nb_world_get_landmarks(seed, &l);
        float g[3], u[3], r[3];
        const float roof_p[3] = { l.upper[0], l.floor_y[0] + 3 * 3.5f, l.upper[2] };
        const nb_poly_ref gr = nearest(q, l.ground, g), ur = nearest(q, l.upper, u), rr = nearest(q, roof_p, r);
        CHECK(gr && ur && rr);
        CHECK_NEAR(g[1], l.ground[1], 0.5);
        CHECK_NEAR(u[1], l.upper[1], 0.5);
        CHECK_NEAR(r[1], roof_p[1], 0.5);
        nb_query_filter f;
        nb_query_filter_init(&f);
        nb_poly_ref path[512];
        int32_t n = 0;
        int partial = 1;
        if (gr && ur) {
            CHECK_INT(nb_query_find_path(q, gr, ur, g, u, &f, path, &n, 512, &partial), NB_OK);
            CHECK_INT(partial, 0);
            CHECK(n >= 3 && path[n - 1] == ur);
            /* the corridor climbs through floor 1's height on the way */
            int via1 = 0;
            for (int32_t i = 0; i < n; ++i) {
                float v[NB_MAX_VERTS_PER_POLY * 3];
                int32_t nv = 0;
                if (nb_navmesh_poly(nav, path[i], v, &nv, NULL, NULL, NULL) == NB_OK)
                    for (int32_t k = 0; k < nv; ++k)
                        via1 |= fabsf(v[k * 3 + 1] - l.floor_y[1]) < 0.5f;
            }
            CHECK(via1);
        }
        if (gr && rr) {
            partial = 0;
            CHECK_INT(nb_query_find_path(q, gr, rr, g, r, &f, path, &n, 512, &partial), NB_OK);
            CHECK_INT(partial, 1);
        }
        nb_query_destroy(ctx, q);
        nb_navmesh_destroy(ctx, nav);
        nb_obj_free(&w);
    }
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_same_seed_same_bytes);
    RUN(test_sizes_and_sanity);
    RUN(test_first_building);
    RUN(test_small_world_bakes_tiled_with_paths_upstairs);
    nb_context_destroy(ctx);
    return nbt_finish("test_world");
}
