/* Seams between tiles: a level with stairs and a ramp that cross tile borders and two stacked floors whose edges lie
 * on tile borders, baked solo and tiled. Paths agree, never step between floors at a border, and adjacent tiles are
 * linked exactly where the walkable surface continues. */
#include "navbake.h"
#include "nbtest_level.h"
#include "nbtest_mesh.h"
#include "../../c/src/navmesh_internal.h"

static nb_context* ctx;

/* ---- the level (default agent: height 2, radius 0.6, climb 0.9; cells 0.3) ----
 * Ground at y = 0 over x 0 .. 57.6, z 0 .. 19.2. An upper floor (a slab 0.2 thick, top at y = 3: a 2.8 m clearance
 * below it, more than the agent's height) over x 19.2 .. 38.4, the full depth: its edges x = 19.2 and x = 38.4 lie
 * on tile borders for 32- and 64-cell tiles (9.6 and 19.2 m), and the ground continues under it. Stairs of 10 steps
 * climb along +x from x = 4.8 to the slab's west edge (z 1 .. 5); a ramp (11.8 degrees) descends from the slab's
 * east edge to the ground at x = 52.8 (z 14 .. 18). With 24-cell tiles (7.2 m) borders cross the stairs at 7.2 and
 * 14.4 and the ramp at 43.2 and 50.4; with 32-cell tiles at 9.6 and at 48. */
#define LVL_X 57.6f
#define LVL_Z 19.2f
#define SLAB_X0 19.2f
#define SLAB_X1 38.4f
#define SLAB_TOP 3.0f
#define CLIMB 0.9f

static mesh_builder level;

static nb_bake_input build_level(void)
{
    memset(&level, 0, sizeof(level));
    add_floor(&level, 0.0f, 0.0f, LVL_X, LVL_Z, 0.0f);
    add_box(&level, SLAB_X0, SLAB_TOP - 0.2f, 0.0f, SLAB_X1, SLAB_TOP, LVL_Z);
    add_stairs_x(&level, 4.8f, SLAB_X0, 1.0f, 5.0f, 0.0f, SLAB_TOP, 10);
    add_quad(&level, SLAB_X1, 14.0f, 52.8f, 18.0f, SLAB_TOP, 0.0f);
    return MB_INPUT(&level);
}

static nb_navmesh* bake(const nb_bake_input* in, int32_t tile_size)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = tile_size;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_bake_navmesh(ctx, in, &cfg, NULL, 0, &nav), NB_OK);
    return nav;
}

/* One path: NB_PATH_* status, straight length, and (optional) its points with every edge crossing. */
static int path(const nb_navmesh* nav, const float a[3], const float b[3], float* length, float* pts, uint32_t cap,
                uint32_t* npts)
{
    nb_query* q = NULL;
    if (nb_query_create(ctx, nav, 0, &q) != NB_OK)
        return -1;
    nb_query_filter f;
    nb_query_filter_init(&f);
    float pair[6];
    memcpy(pair, a, 3 * sizeof(float));
    memcpy(pair + 3, b, 3 * sizeof(float));
    const float ext[3] = { 0.5f, 1.0f, 0.5f }; /* the floors are 3 m apart: each point finds its own */
    uint8_t status = 0;
    uint32_t offsets[2] = { 0, 0 }, needed = 0;
    float len = 0;
    nb_query_find_paths(q, pair, 1, ext, &f, NB_STRAIGHT_ALL_CROSSINGS, &status, &len, offsets, pts, pts ? cap : 0,
                        &needed);
    nb_query_destroy(ctx, q);
    if (length)
        *length = len;
    if (npts)
        *npts = offsets[1] <= cap ? offsets[1] : 0;
    return status;
}

static void test_stairs_to_upper_floor(void)
{
    nb_bake_input in = build_level();
    static const int32_t sizes[] = { 0, 24, 32, 64 };
    const float bottom[3] = { 2.5f, 0.0f, 3.0f }, top[3] = { 30.0f, SLAB_TOP, 10.0f };
    float solo_len = 0;
    for (int s = 0; s < 4; ++s) {
        nb_navmesh* nav = bake(&in, sizes[s]);
        if (!nav)
            continue;
        if (sizes[s])
            CHECK(nb_navmesh_tile_count(nav) > 1);
        float len = 0;
        CHECK_INT(path(nav, bottom, top, &len, NULL, 0, NULL), NB_PATH_COMPLETE);
        /* up the stairs: at least the straight line, far less than going round by the ramp */
        CHECK(len >= 28.0f && len < 40.0f);
        if (sizes[s] == 0)
            solo_len = len;
        else
            CHECK_NEAR(len, solo_len, 0.03 * solo_len);
        /* and down the ramp to the ground at the far end */
        const float far[3] = { 56.0f, 0.0f, 16.0f };
        CHECK_INT(path(nav, top, far, &len, NULL, 0, NULL), NB_PATH_COMPLETE);
        CHECK(len < 35.0f);
        nb_navmesh_destroy(ctx, nav);
    }
}

/* From the ground under the upper floor to the point right above it, at tile border points: the path leaves the
 * slab's footprint (at x 19.2 or 38.4) and comes back on top, so it is at least 2 x 9.6 long; no leg of it climbs
 * faster than a climb step plus a 45-degree slope. */
static void test_stacked_floors_go_round(void)
{
    nb_bake_input in = build_level();
    static const int32_t sizes[] = { 0, 24, 32, 64 };
    static const float spots[][2] = { { 28.8f, 9.6f }, { 28.8f, 4.0f }, { 21.6f, 14.4f }, { 36.0f, 9.6f } };
    for (int s = 0; s < 4; ++s) {
        nb_navmesh* nav = bake(&in, sizes[s]);
        if (!nav)
            continue;
        for (int k = 0; k < 4; ++k) {
            const float lo[3] = { spots[k][0], 0.0f, spots[k][1] }, hi[3] = { spots[k][0], SLAB_TOP, spots[k][1] };
            const float detour = 2.0f * fminf(spots[k][0] - SLAB_X0, SLAB_X1 - spots[k][0]);
            float pts[3 * 256], len = 0;
            uint32_t n = 0;
            for (int dir = 0; dir < 2; ++dir) {
                const int st = dir ? path(nav, hi, lo, &len, pts, 256, &n) : path(nav, lo, hi, &len, pts, 256, &n);
                CHECK_INT(st, NB_PATH_COMPLETE);
                if (len < detour)
                    fprintf(stderr, "  tile size %d, (%g, %g): path of %g < %g\n", sizes[s], spots[k][0], spots[k][1],
                            len, detour);
                CHECK(len >= detour);
                CHECK(n >= 2);
                int steep = 0;
                for (uint32_t i = 1; i < n; ++i) {
                    const float* a = &pts[(i - 1) * 3];
                    const float* b = &pts[i * 3];
                    const float dxz = sqrtf((b[0] - a[0]) * (b[0] - a[0]) + (b[2] - a[2]) * (b[2] - a[2]));
                    steep += fabsf(b[1] - a[1]) > CLIMB + dxz + 0.05f;
                }
                CHECK_INT(steep, 0);
            }
        }
        nb_navmesh_destroy(ctx, nav);
    }
}

/* ---- border links ---- */

static const float* vert(const nb_tile_view* v, uint32_t p, uint32_t j)
{
    return &v->verts[(size_t)v->poly_verts[(size_t)p * v->nvp + j] * 3];
}

static uint32_t poly_nv(const nb_tile_view* v, uint32_t p)
{
    uint32_t n = 0;
    while (n < v->nvp && v->poly_verts[(size_t)p * v->nvp + n] != NB_MESH_NULL_IDX)
        ++n;
    return n;
}

/* Edge (a0, a1) of side `side` and edge (b0, b1) on the same line: the shared length and the height differences at
 * both ends of the shared part. 0 when they do not share a stretch. */
static float shared(const float* a0, const float* a1, const float* b0, const float* b1, int side, float* d_lo,
                    float* d_hi)
{
    const int line = (side == 0 || side == 2) ? 0 : 2, along = 2 - line;
    if (fabsf(a0[line] - b0[line]) > 0.01f || fabsf(a0[line] - a1[line]) > 0.01f || fabsf(b0[line] - b1[line]) > 0.01f)
        return 0;
    const float lo = fmaxf(fminf(a0[along], a1[along]), fminf(b0[along], b1[along]));
    const float hi = fminf(fmaxf(a0[along], a1[along]), fmaxf(b0[along], b1[along]));
    if (hi - lo <= 0.0f)
        return 0;
    const float da = a1[along] - a0[along], db = b1[along] - b0[along];
    const float ya_lo = a0[1] + (a1[1] - a0[1]) * (lo - a0[along]) / da, ya_hi = a0[1] + (a1[1] - a0[1]) * (hi - a0[along]) / da;
    const float yb_lo = b0[1] + (b1[1] - b0[1]) * (lo - b0[along]) / db, yb_hi = b0[1] + (b1[1] - b0[1]) * (hi - b0[along]) / db;
    *d_lo = yb_lo - ya_lo;
    *d_hi = yb_hi - ya_hi;
    return hi - lo;
}

/* Whether polygon p of tile t has a link through edge j to polygon q of tile u. */
static int linked(const nb_navmesh* nav, const nb_tile* t, uint32_t p, uint32_t j, const nb_tile* u, uint32_t q)
{
    for (uint32_t l = t->first_link[p]; l != NB_NULL_LINK; l = t->links[l].next) {
        uint32_t poly = 0;
        if (t->links[l].edge == j && nb_navmesh_resolve(nav, t->links[l].ref, &poly) == u && poly == q)
            return 1;
    }
    return 0;
}

/* Every pair of adjacent tiles: border edges facing each other that share a stretch at the same height (within
 * climb at both ends) are linked both ways; edges whose heights differ by more than climb at both ends (and do not
 * cross) are never linked; and each pair where the ground continues has polygons linked across. */
static void check_border_links(const nb_navmesh* nav, int32_t ntx, int32_t ntz, int* pairs, int* missing, int* false_links,
                               int* stacked)
{
    for (int32_t tz = 0; tz < ntz; ++tz)
        for (int32_t tx = 0; tx < ntx; ++tx) {
            const nb_tile* t = nb_navmesh_tile_at(nav, tx, tz);
            if (!t)
                continue;
            for (int side = 0; side < 4; ++side) {
                const int32_t ux = tx + nb_dir_offset_x(side), uz = tz + nb_dir_offset_z(side);
                const nb_tile* u = nb_navmesh_tile_at(nav, ux, uz);
                if (!u)
                    continue;
                const int opposite = (side + 2) & 3;
                int linked_polys = 0;
                const nb_tile_view* v = &t->v;
                const nb_tile_view* w = &u->v;
                for (uint32_t p = 0; p < v->npolys - v->noffmesh; ++p) {
                    const uint32_t nv = poly_nv(v, p);
                    int has_link = 0;
                    for (uint32_t j = 0; j < nv; ++j) {
                        if (v->poly_neis[(size_t)p * v->nvp + j] != (NB_NEI_BORDER | side))
                            continue;
                        const float *a0 = vert(v, p, j), *a1 = vert(v, p, (j + 1) % nv);
                        for (uint32_t q = 0; q < w->npolys - w->noffmesh; ++q) {
                            const uint32_t nw = poly_nv(w, q);
                            for (uint32_t k = 0; k < nw; ++k) {
                                if (w->poly_neis[(size_t)q * w->nvp + k] != (NB_NEI_BORDER | opposite))
                                    continue;
                                float d_lo = 0, d_hi = 0;
                                const float len = shared(a0, a1, vert(w, q, k), vert(w, q, (k + 1) % nw), side, &d_lo,
                                                         &d_hi);
                                if (len < 0.05f)
                                    continue;
                                const int is = linked(nav, t, p, j, u, q);
                                has_link |= is;
                                if (fabsf(d_lo) <= CLIMB - 0.05f && fabsf(d_hi) <= CLIMB - 0.05f && !is)
                                    ++*missing;
                                if (d_lo * d_hi >= 0.0f && fabsf(d_lo) > CLIMB + 0.05f && fabsf(d_hi) > CLIMB + 0.05f) {
                                    ++*stacked; /* edges over each other: the case a false link would join */
                                    *false_links += is;
                                }
                            }
                        }
                    }
                    linked_polys += has_link;
                }
                /* the ground continues across every border of this level */
                ++*pairs;
                if (linked_polys == 0) {
                    fprintf(stderr, "  tiles (%d, %d) -> (%d, %d): no polygon linked\n", tx, tz, ux, uz);
                    ++*missing;
                }
            }
        }
}

static void test_border_links(void)
{
    nb_bake_input in = build_level();
    static const int32_t sizes[] = { 24, 32, 64 };
    for (int s = 0; s < 3; ++s) {
        nb_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.tile_size = sizes[s];
        nb_navmesh_params p;
        int32_t ntx = 0, ntz = 0;
        CHECK_INT(nb_bake_grid(ctx, &in, &cfg, &p, &ntx, &ntz), NB_OK);
        nb_navmesh* nav = bake(&in, sizes[s]);
        if (!nav)
            continue;
        CHECK_INT(nb_navmesh_tile_count(nav), ntx * ntz); /* every tile has ground */
        int pairs = 0, missing = 0, false_links = 0, stacked = 0;
        check_border_links(nav, ntx, ntz, &pairs, &missing, &false_links, &stacked);
        CHECK_INT(pairs, 2 * (ntx * (ntz - 1) + ntz * (ntx - 1)));
        CHECK_INT(missing, 0);
        CHECK_INT(false_links, 0);
        /* the z borders of 24- and 32-cell tiles cross the stacked floors: ground and upper floor edges lie on the
         * same border line there, 3 m apart */
        if (sizes[s] < 64)
            CHECK(stacked > 0);
        nb_navmesh_destroy(ctx, nav);
    }
}

/* Random pairs over the level: tiled and solo agree on reachability (>= 99%) and on lengths (median within 3%). */
static int cmp_float(const void* a, const void* b)
{
    const float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

static void test_random_pairs_agree(void)
{
    nb_bake_input in = build_level();
    nb_navmesh* solo = bake(&in, 0);
    if (!solo)
        return;
    nb_query* q = NULL;
    CHECK_INT(nb_query_create(ctx, solo, 0, &q), NB_OK);
    nb_query_filter f;
    nb_query_filter_init(&f);
    enum { N = 400 };
    static float pairs[N * 6];
    uint64_t rng = 77;
    for (int i = 0; i < 2 * N; ++i) {
        nb_poly_ref ref = 0;
        CHECK_INT(nb_query_random_point(q, &f, &rng, &ref, &pairs[i * 3]), NB_OK);
    }
    const float ext[3] = { 0.5f, 1.0f, 0.5f };
    uint8_t st_solo[N], st_tiled[N];
    float len_solo[N], len_tiled[N];
    /* no point buffer: NB_ERR_BUFFER_TOO_SMALL, with every status and length filled */
    CHECK_INT(nb_query_find_paths(q, pairs, N, ext, &f, 0, st_solo, len_solo, NULL, NULL, 0, NULL),
              NB_ERR_BUFFER_TOO_SMALL);
    nb_query_destroy(ctx, q);
    static const int32_t sizes[] = { 24, 32, 64 };
    for (int s = 0; s < 3; ++s) {
        nb_navmesh* nav = bake(&in, sizes[s]);
        if (!nav)
            continue;
        nb_query* qt = NULL;
        CHECK_INT(nb_query_create(ctx, nav, 0, &qt), NB_OK);
        CHECK_INT(nb_query_find_paths(qt, pairs, N, ext, &f, 0, st_tiled, len_tiled, NULL, NULL, 0, NULL),
                  NB_ERR_BUFFER_TOO_SMALL);
        int agree = 0, complete = 0, nratio = 0;
        static float ratio[N];
        for (int i = 0; i < N; ++i) {
            agree += (st_solo[i] == NB_PATH_COMPLETE) == (st_tiled[i] == NB_PATH_COMPLETE);
            if (st_solo[i] == NB_PATH_COMPLETE && st_tiled[i] == NB_PATH_COMPLETE) {
                ++complete;
                if (len_solo[i] > 1.0f)
                    ratio[nratio++] = len_tiled[i] / len_solo[i];
            }
        }
        CHECK(agree >= N * 99 / 100);
        CHECK(complete >= N * 9 / 10); /* the whole level is one connected surface */
        qsort(ratio, (size_t)nratio, sizeof(float), cmp_float);
        CHECK(nratio > N / 2);
        if (nratio > 0)
            CHECK_NEAR(ratio[nratio / 2], 1.0, 0.03);
        nb_query_destroy(ctx, qt);
        nb_navmesh_destroy(ctx, nav);
    }
    nb_navmesh_destroy(ctx, solo);
}

/* A corridor 40 m long along x, 2.5 m wide (1.3 m walkable for the 0.6 m agent), over four borders of 32-cell
 * tiles, moved far from the origin or scaled down to millimetre-sized cells with every length of the config: a path
 * runs from end to end, as in the solo bake. (Border links asked for an overlap that grew with the coordinates,
 * about 1 m at 5e5, and an absolute 0.02, wider than a whole tile edge at scale 0.001: both left the corridor cut.) */
static void test_narrow_corridor_links_far_out_and_small(void)
{
    static const struct {
        float offset, scale;
    } cases[] = { { 0.0f, 1.0f }, { 5e5f, 1.0f }, { -1e6f, 1.0f }, { 0.0f, 0.001f }, { 100.0f, 0.003f } };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        const float o = cases[c].offset, k = cases[c].scale;
        mesh_builder m;
        memset(&m, 0, sizeof(m));
        add_floor(&m, o, o, o + 40.0f * k, o + 2.5f * k, 0.0f);
        nb_bake_input in = MB_INPUT(&m);
        nb_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.cell_size = 0.3f * k;
        cfg.cell_height = 0.2f * k;
        cfg.agent_height = 2.0f * k;
        cfg.agent_radius = 0.6f * k;
        cfg.agent_max_climb = 0.9f * k;
        cfg.edge_max_len = 12.0f * k;
        cfg.detail_sample_dist = 1.8f * k;
        cfg.detail_sample_max_error = 0.2f * k;
        const float a[3] = { o + 1.0f * k, 0.0f, o + 1.25f * k }, b[3] = { o + 39.0f * k, 0.0f, o + 1.25f * k };
        for (int tiled = 0; tiled < 2; ++tiled) {
            cfg.tile_size = tiled ? 32 : 0;
            nb_navmesh* nav = NULL;
            CHECK_INT(nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK);
            if (!nav)
                continue;
            if (tiled)
                CHECK(nb_navmesh_tile_count(nav) >= 5);
            float len = 0;
            const int st = path(nav, a, b, &len, NULL, 0, NULL);
            if (st != NB_PATH_COMPLETE || !(fabsf(len - 38.0f * k) <= 0.01f * k))
                fprintf(stderr, "  offset %g scale %g %s: status %d, length %g\n", o, k, tiled ? "tiled" : "solo", st,
                        len);
            CHECK_INT(st, NB_PATH_COMPLETE);
            CHECK_NEAR(len, 38.0f * k, 0.01f * k);
            nb_navmesh_destroy(ctx, nav);
        }
    }
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_stairs_to_upper_floor);
    RUN(test_stacked_floors_go_round);
    RUN(test_border_links);
    RUN(test_random_pairs_agree);
    RUN(test_narrow_corridor_links_far_out_and_small);
    nb_context_destroy(ctx);
    return nbt_finish("test_seams");
}
