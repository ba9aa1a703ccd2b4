/* What the fuzz targets do with one input, shared by the libFuzzer targets (tests/fuzz/fuzz_*.c) and the native
 * test that replays the inputs kept in tests/fuzz/replay (tests/c/test_fuzz_replay.c). A failed expectation
 * aborts: libFuzzer saves the input, the replaying test reports it. */
#ifndef NB_FUZZ_COMMON_H
#define NB_FUZZ_COMMON_H

#include "navbake.h"
#include "../../c/src/navmesh_internal.h"
#include "obj.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define FUZZ_EXPECT(cond, ...)                                                                                 \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            fprintf(stderr, "fuzz: %s:%d: expected %s: ", __FILE__, __LINE__, #cond);                         \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fprintf(stderr, "\n");                                                                             \
            abort();                                                                                           \
        }                                                                                                      \
    } while (0)

static inline uint32_t fuzz_rd_u32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void fuzz_wr_u32(uint8_t* p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Rewrites the checksums of a navmesh file in place (docs/FORMAT.md): the 48-byte header's CRC at offset 44,
 * then each length-prefixed tile blob's CRC (at offset 16 of the blob), as far as the lengths lead. */
static inline void fuzz_fix_navmesh_crcs(uint8_t* data, size_t size)
{
    if (size < 48)
        return;
    fuzz_wr_u32(data + 44, nb_crc32(data, 44));
    size_t at = 48;
    while (size - at >= 4) {
        const uint32_t len = fuzz_rd_u32(data + at);
        at += 4;
        if (len > size - at)
            break;
        nb_tile_update_crc(data + at, len);
        at += len;
    }
}

static inline float fuzz_lerp(float a, float b, float t) { return a + (b - a) * t; }

/* Queries from points spread over the navmesh's tiles, with results checked where the API promises something. */
static inline void fuzz_query_navmesh(nb_context* ctx, const nb_navmesh* nav)
{
    const uint32_t npolys = nb_navmesh_poly_count(nav);
    uint32_t nrefs = 0;
    nb_status st = nb_navmesh_poly_refs(ctx, nav, NULL, 0, &nrefs);
    FUZZ_EXPECT(st == NB_OK || st == NB_ERR_BUFFER_TOO_SMALL, "poly_refs sizing: %s", nb_status_name(st));
    FUZZ_EXPECT(nrefs == npolys, "poly_refs counts %u, poly_count %u", nrefs, npolys);
    nb_poly_ref* refs = (nb_poly_ref*)malloc((size_t)(nrefs ? nrefs : 1) * sizeof(nb_poly_ref));
    FUZZ_EXPECT(refs != NULL, "out of memory");
    st = nb_navmesh_poly_refs(ctx, nav, refs, nrefs, &nrefs);
    FUZZ_EXPECT(st == NB_OK, "poly_refs: %s", nb_status_name(st));

    float lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
    for (uint32_t i = 0; i < nrefs && i < 4096; ++i) {
        float v[NB_MAX_VERTS_PER_POLY * 3];
        int32_t nv = 0;
        uint8_t area = 0;
        uint16_t flags = 0;
        int off = 0;
        st = nb_navmesh_poly(nav, refs[i], v, &nv, &area, &flags, &off);
        FUZZ_EXPECT(st == NB_OK, "nb_navmesh_poly on a listed ref: %s", nb_status_name(st));
        FUZZ_EXPECT(nv >= 2 && nv <= NB_MAX_VERTS_PER_POLY, "polygon with %d vertices", nv);
        nb_offmesh_link link;
        st = nb_navmesh_offmesh_link(nav, refs[i], &link, NULL);
        FUZZ_EXPECT(off ? st == NB_OK && memcmp(link.start, v, 24) == 0 : st == NB_ERR_NOT_FOUND,
                    "offmesh_link of a %s polygon: %s", off ? "link" : "ground", nb_status_name(st));
        for (int k = 0; k < nv * 3; ++k) {
            lo[k % 3] = fminf(lo[k % 3], v[k]);
            hi[k % 3] = fmaxf(hi[k % 3], v[k]);
        }
    }

    uint32_t nv = 0, nt = 0;
    st = nb_navmesh_detail_triangles(ctx, nav, NULL, 0, NULL, NULL, 0, &nv, &nt);
    FUZZ_EXPECT(st == NB_OK || st == NB_ERR_BUFFER_TOO_SMALL || st == NB_ERR_TOO_LARGE, "detail sizing: %s",
                nb_status_name(st));
    if (st != NB_ERR_TOO_LARGE && nv < (1u << 20) && nt < (1u << 20)) {
        float* pos = (float*)malloc((size_t)(nv ? nv : 1) * 3 * sizeof(float));
        uint32_t* idx = (uint32_t*)malloc((size_t)(nt ? nt : 1) * 3 * sizeof(uint32_t));
        uint8_t* areas = (uint8_t*)malloc(nt ? nt : 1);
        FUZZ_EXPECT(pos && idx && areas, "out of memory");
        uint32_t nv2 = 0, nt2 = 0;
        st = nb_navmesh_detail_triangles(ctx, nav, pos, nv, idx, areas, nt, &nv2, &nt2);
        FUZZ_EXPECT(st == NB_OK && nv2 == nv && nt2 == nt, "detail triangles: %s", nb_status_name(st));
        for (uint32_t i = 0; i < nt * 3; ++i)
            FUZZ_EXPECT(idx[i] < nv, "detail index %u of %u vertices", idx[i], nv);
        free(pos);
        free(idx);
        free(areas);
    }

    nb_query* q = NULL;
    st = nb_query_create(ctx, nav, 0, &q);
    if (st != NB_OK) {
        FUZZ_EXPECT(st == NB_ERR_OUT_OF_MEMORY, "query_create: %s", nb_status_name(st));
        free(refs);
        return;
    }
    nb_query_filter filter;
    nb_query_filter_init(&filter);
    const float ext[3] = { 2.0f, 4.0f, 2.0f };
    uint64_t rng = 12345;
    if (!(hi[0] >= lo[0]))
        for (int k = 0; k < 3; ++k)
            lo[k] = hi[k] = 0.0f;
    enum { NPTS = 6, MAX_PATH = 256, MAX_POINTS = 512 };
    float pts[NPTS][3];
    nb_poly_ref prefs[NPTS];
    for (int i = 0; i < NPTS; ++i) {
        const float t = (float)i / (NPTS - 1);
        const float p[3] = { fuzz_lerp(lo[0], hi[0], t), fuzz_lerp(lo[1], hi[1], 0.5f),
                             fuzz_lerp(lo[2], hi[2], 1.0f - t) };
        prefs[i] = 0;
        memcpy(pts[i], p, sizeof(p));
        if (i % 2 && npolys) { /* half the points are random points on the navmesh */
            nb_poly_ref r = 0;
            if (nb_query_random_point(q, &filter, &rng, &r, pts[i]) == NB_OK)
                FUZZ_EXPECT(isfinite(pts[i][0]) && isfinite(pts[i][1]) && isfinite(pts[i][2]), "random point");
        }
        float near[3];
        st = nb_query_find_nearest_poly(q, pts[i], ext, &filter, &prefs[i], near);
        FUZZ_EXPECT(st == NB_OK, "nearest: %s", nb_status_name(st));
        if (prefs[i]) {
            memcpy(pts[i], near, sizeof(near));
            float c[3], h;
            int over = 0;
            nb_query_closest_point_on_poly(q, prefs[i], pts[i], c, &over);
            nb_query_poly_height(q, prefs[i], pts[i], &h);
            float d = 0.0f, hp[3], hn[3];
            nb_query_distance_to_wall(q, prefs[i], pts[i], 5.0f, &filter, &d, hp, hn);
            nb_poly_ref r = 0;
            float rp[3];
            nb_query_random_point_around(q, prefs[i], pts[i], 3.0f, &filter, &rng, &r, rp);
        }
    }
    nb_poly_ref path[MAX_PATH];
    float points[MAX_POINTS * 3];
    uint8_t pflags[MAX_POINTS];
    nb_poly_ref prefs_out[MAX_POINTS];
    for (int i = 0; i < NPTS; ++i)
        for (int j = 0; j < NPTS; ++j) {
            if (!prefs[i] || !prefs[j])
                continue;
            int32_t n = 0;
            int partial = 0;
            st = nb_query_find_path(q, prefs[i], prefs[j], pts[i], pts[j], &filter, path, &n, MAX_PATH, &partial);
            FUZZ_EXPECT(st == NB_OK, "find_path: %s", nb_status_name(st));
            FUZZ_EXPECT(n >= 1 && n <= MAX_PATH && path[0] == prefs[i], "path of %d polygons", n);
            for (int opt = 0; opt <= NB_STRAIGHT_ALL_CROSSINGS; ++opt) {
                int32_t np = 0;
                st = nb_query_straight_path(q, pts[i], pts[j], path, n, points, pflags, prefs_out, &np, MAX_POINTS,
                                            opt);
                FUZZ_EXPECT(st == NB_OK, "straight_path: %s", nb_status_name(st));
                FUZZ_EXPECT(np >= 1 && np <= MAX_POINTS, "straight path of %d points", np);
            }
            float t = 0.0f, hn[3];
            int32_t rn = 0;
            st = nb_query_raycast(q, prefs[i], pts[i], pts[j], &filter, &t, hn, path, &rn, MAX_PATH);
            FUZZ_EXPECT(st == NB_OK, "raycast: %s", nb_status_name(st));
            float res[3];
            int32_t vn = 0;
            st = nb_query_move_along_surface(q, prefs[i], pts[i], pts[j], &filter, res, path, &vn, MAX_PATH);
            FUZZ_EXPECT(st == NB_OK, "move_along: %s", nb_status_name(st));
        }
    float pairs[NPTS * 6];
    for (int i = 0; i < NPTS; ++i) {
        memcpy(&pairs[i * 6], pts[i], sizeof(pts[i]));
        memcpy(&pairs[i * 6 + 3], pts[NPTS - 1 - i], sizeof(pts[i]));
    }
    uint8_t status[NPTS];
    float lengths[NPTS];
    uint32_t offsets[NPTS + 1], needed = 0;
    st = nb_query_find_paths_ex(q, pairs, NPTS, ext, &filter, 0, status, lengths, offsets, points, pflags, prefs_out,
                                MAX_POINTS, &needed);
    FUZZ_EXPECT(st == NB_OK || st == NB_ERR_BUFFER_TOO_SMALL, "find_paths: %s", nb_status_name(st));
    for (int i = 0; i < NPTS; ++i) /* a node for every polygon: the search never runs out */
        FUZZ_EXPECT(status[i] <= NB_PATH_COMPLETE, "find_paths: pair %d status %u", i, status[i]);
    nb_query_destroy(ctx, q);
    /* the same pairs with a pool of 8 nodes: partial or complete, flagged when the pool ran out */
    st = nb_query_create(ctx, nav, 8, &q);
    FUZZ_EXPECT(st == NB_OK || st == NB_ERR_OUT_OF_MEMORY, "query_create(8): %s", nb_status_name(st));
    if (st == NB_OK) {
        st = nb_query_find_paths_ex(q, pairs, NPTS, ext, &filter, 0, status, lengths, offsets, points, pflags,
                                    prefs_out, MAX_POINTS, &needed);
        FUZZ_EXPECT(st == NB_OK || st == NB_ERR_BUFFER_TOO_SMALL, "find_paths(8): %s", nb_status_name(st));
        for (int i = 0; i < NPTS; ++i)
            FUZZ_EXPECT((status[i] & ~NB_PATH_EXHAUSTED) <= NB_PATH_COMPLETE &&
                            (status[i] == NB_PATH_NONE || (status[i] & 3) != NB_PATH_NONE),
                        "find_paths(8): pair %d status %u", i, status[i]);
        FUZZ_EXPECT(nb_query_exhausted(q) == !!(status[NPTS - 1] & NB_PATH_EXHAUSTED), "exhausted vs last status");
        nb_query_destroy(ctx, q);
    }
    free(refs);
}

/* Loads a navmesh file; one that loads is queried, saved and must load again to the same bytes. */
static inline void fuzz_check_navmesh_file(const uint8_t* data, size_t size)
{
    nb_context* ctx = nb_context_create(NULL);
    FUZZ_EXPECT(ctx != NULL, "out of memory");
    nb_navmesh* nav = NULL;
    nb_status st = nb_navmesh_load(ctx, data, size, &nav);
    if (st != NB_OK) {
        FUZZ_EXPECT(st == NB_ERR_CORRUPT || st == NB_ERR_VERSION || st == NB_ERR_OUT_OF_MEMORY,
                    "load failed with %s: %s", nb_status_name(st), nb_context_message(ctx));
        FUZZ_EXPECT(nav == NULL, "a failed load left a navmesh");
        FUZZ_EXPECT(nb_context_message(ctx)[0] != '\0', "a failed load gave no message");
        nb_context_destroy(ctx);
        return;
    }
    fuzz_query_navmesh(ctx, nav);
    uint8_t* saved = NULL;
    size_t saved_size = 0;
    st = nb_navmesh_save(ctx, nav, &saved, &saved_size);
    FUZZ_EXPECT(st == NB_OK, "save of a loaded navmesh: %s", nb_status_name(st));
    nb_navmesh* again = NULL;
    st = nb_navmesh_load(ctx, saved, saved_size, &again);
    FUZZ_EXPECT(st == NB_OK, "reload of a saved navmesh: %s: %s", nb_status_name(st), nb_context_message(ctx));
    uint8_t* saved2 = NULL;
    size_t saved2_size = 0;
    st = nb_navmesh_save(ctx, again, &saved2, &saved2_size);
    FUZZ_EXPECT(st == NB_OK && saved2_size == saved_size && memcmp(saved, saved2, saved_size) == 0,
                "save -> load -> save is not byte-identical");
    nb_bytes_free(ctx, saved);
    nb_bytes_free(ctx, saved2);
    nb_navmesh_destroy(ctx, again);
    nb_navmesh_destroy(ctx, nav);
    nb_context_destroy(ctx);
}

typedef struct fuzz_reader {
    const uint8_t* p;
    size_t n;
} fuzz_reader;

static inline uint8_t fuzz_next_byte(fuzz_reader* r)
{
    if (!r->n)
        return 0;
    --r->n;
    return *r->p++;
}

static inline nb_status fuzz_bake_to_bytes(nb_context* ctx, const nb_bake_input* in, const nb_config* cfg,
                                    const nb_offmesh_link* links, uint32_t nlinks, uint8_t** bytes, size_t* size,
                                    int query)
{
    nb_context_clear_error(ctx);
    nb_navmesh* nav = NULL;
    nb_status st = nb_bake_navmesh(ctx, in, cfg, links, nlinks, &nav);
    if (st != NB_OK) {
        FUZZ_EXPECT(st == NB_ERR_INVALID_CONFIG || st == NB_ERR_EMPTY_MESH || st == NB_ERR_TOO_LARGE ||
                        st == NB_ERR_INVALID_ARG,
                    "bake failed with %s: %s", nb_status_name(st), nb_context_message(ctx));
        FUZZ_EXPECT(nav == NULL && nb_context_message(ctx)[0] != '\0', "a failed bake left a navmesh or no message");
        return st;
    }
    if (query)
        fuzz_query_navmesh(ctx, nav);
    st = nb_navmesh_save(ctx, nav, bytes, size);
    FUZZ_EXPECT(st == NB_OK, "save: %s", nb_status_name(st));
    nb_navmesh_destroy(ctx, nav);
    return NB_OK;
}

/* One bake input: bytes -> config, a level of up to 64 vertices and 80 triangles, a volume, links. */
static inline void fuzz_check_bake(const uint8_t* data, size_t size)
{
    fuzz_reader r = { data, size };
    static const float cell_sizes[4] = { 0.3f, 0.2f, 0.5f, 0.15f };
    static const float radii[4] = { 0.6f, NB_ZERO, 0.3f, 1.5f };
    static const float samples[4] = { 1.8f, NB_ZERO, 0.5f, 6.0f };
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    const uint8_t c0 = fuzz_next_byte(&r), c1 = fuzz_next_byte(&r), c2 = fuzz_next_byte(&r);
    cfg.partition = (c2 & 64) ? NB_PARTITION_WAVEFRONT : (nb_partition)(c0 & 3); /* 0 = default (watershed) */
    cfg.tile_size = (c0 >> 2) & 1 ? 16 + (c0 >> 3) : 0;
    cfg.cell_size = cell_sizes[c1 & 3];
    cfg.agent_radius = radii[(c1 >> 2) & 3];
    cfg.detail_sample_dist = samples[(c1 >> 4) & 3];
    cfg.verts_per_poly = 3 + (c1 >> 6) * 3; /* 3, 6, 9, 12 */
    cfg.region_min_size = (c2 & 1) ? NB_ZERO : 8.0f;
    cfg.region_merge_size = (c2 & 2) ? NB_ZERO : 20.0f;
    cfg.edge_max_len = (c2 & 4) ? NB_ZERO : 12.0f;
    cfg.edge_max_error = (c2 & 8) ? NB_ZERO : 1.3f;
    cfg.agent_max_slope = (c2 & 16) ? 80.0f : 45.0f;
    cfg.agent_max_climb = (c2 & 32) ? NB_ZERO : 0.9f;

    /* Vertices on a coarse lattice (so that coincident and collinear points are common), 10 x 10 units. */
    const uint32_t nverts = 3 + fuzz_next_byte(&r) % 61;
    float pos[64 * 3];
    for (uint32_t i = 0; i < nverts; ++i) {
        pos[i * 3 + 0] = (float)(fuzz_next_byte(&r) % 41) * 0.25f;
        pos[i * 3 + 1] = (float)((int)fuzz_next_byte(&r) - 128) * 0.03125f;
        pos[i * 3 + 2] = (float)(fuzz_next_byte(&r) % 41) * 0.25f;
    }
    const uint32_t ntris = 1 + fuzz_next_byte(&r) % 80;
    uint32_t idx[80 * 3];
    uint8_t areas[80];
    for (uint32_t i = 0; i < ntris; ++i) {
        for (int k = 0; k < 3; ++k)
            idx[i * 3 + k] = fuzz_next_byte(&r) % nverts;
        areas[i] = (uint8_t)(fuzz_next_byte(&r) % 4 == 0 ? 0 : 63 - fuzz_next_byte(&r) % 3);
    }
    nb_volume vol;
    memset(&vol, 0, sizeof(vol));
    const uint8_t v0 = fuzz_next_byte(&r);
    vol.type = (nb_volume_type)(1 + v0 % 2);
    vol.area = (uint8_t)(v0 >> 2);
    vol.bmin[0] = (float)(fuzz_next_byte(&r) % 41) * 0.25f;
    vol.bmin[1] = -4.0f;
    vol.bmin[2] = (float)(fuzz_next_byte(&r) % 41) * 0.25f;
    vol.bmax[0] = vol.bmin[0] + 2.0f;
    vol.bmax[1] = 4.0f;
    vol.bmax[2] = vol.bmin[2] + 2.0f;
    memcpy(vol.center, vol.bmin, sizeof(vol.center));
    vol.radius = 1.5f;
    vol.height = 8.0f;
    nb_offmesh_link links[2];
    memset(links, 0, sizeof(links));
    const uint32_t nlinks = fuzz_next_byte(&r) % 3;
    for (uint32_t i = 0; i < nlinks; ++i) {
        const uint32_t a = fuzz_next_byte(&r) % nverts, b = fuzz_next_byte(&r) % nverts;
        memcpy(links[i].start, &pos[a * 3], sizeof(links[i].start));
        memcpy(links[i].end, &pos[b * 3], sizeof(links[i].end));
        links[i].radius = 0.5f;
        links[i].bidirectional = fuzz_next_byte(&r) & 1;
    }

    /* Read last, so that shorter inputs decode as before: the whole level moved away from the origin, up to 2^31
     * along x and z, where float spacing reaches the cell size and beyond. */
    const uint8_t far = fuzz_next_byte(&r);
    if (far) {
        const float offset = ldexpf(far & 0x80 ? -1.0f : 1.0f, far & 31);
        for (uint32_t i = 0; i < nverts; ++i) {
            pos[i * 3] += offset;
            pos[i * 3 + 2] += offset;
        }
        for (int k = 0; k < 3; k += 2) {
            vol.bmin[k] += offset;
            vol.bmax[k] += offset;
            vol.center[k] += offset;
            for (uint32_t i = 0; i < nlinks; ++i) {
                links[i].start[k] += offset;
                links[i].end[k] += offset;
            }
        }
    }

    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = pos;
    in.mesh.vertex_count = nverts;
    in.mesh.indices = idx;
    in.mesh.triangle_count = ntris;
    in.mesh.areas = areas;
    in.volumes = (v0 & 2) ? &vol : NULL;
    in.volume_count = in.volumes ? 1 : 0;

    nb_context* ctx = nb_context_create(NULL);
    FUZZ_EXPECT(ctx != NULL, "out of memory");
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    if (fuzz_bake_to_bytes(ctx, &in, &cfg, links, nlinks, &a, &na, 1) == NB_OK) {
        FUZZ_EXPECT(fuzz_bake_to_bytes(ctx, &in, &cfg, links, nlinks, &b, &nb, 0) == NB_OK, "the second bake failed");
        FUZZ_EXPECT(na == nb && memcmp(a, b, na) == 0, "two bakes of the same input differ");
        fuzz_check_navmesh_file(a, na);
        nb_bytes_free(ctx, a);
        nb_bytes_free(ctx, b);
    }
    nb_context_destroy(ctx);
}

/* ---- obstacles: incremental tile rebuilds against full builds ---- */

/* save(a) == save(b) */
static inline int fuzz_same_bytes(nb_context* ctx, const nb_navmesh* a, const nb_navmesh* b)
{
    uint8_t *da = NULL, *db = NULL;
    size_t na = 0, nb = 0;
    FUZZ_EXPECT(nb_navmesh_save(ctx, a, &da, &na) == NB_OK && nb_navmesh_save(ctx, b, &db, &nb) == NB_OK, "save");
    const int same = na == nb && memcmp(da, db, na) == 0;
    nb_bytes_free(ctx, da);
    nb_bytes_free(ctx, db);
    return same;
}

/* A cache of a 19.2 x 19.2 piece of the generated world around the first building's south door (4 x 4 tiles of
 * 16 cells), then up to 16 obstacle changes (add, move, remove, rebuild now) read from the bytes: boxes,
 * cylinders and convex prisms, carving (area 0) or marking areas. After every rebuild the incrementally updated
 * navmesh must save to the same bytes as a navmesh built from scratch with the same obstacles, and once every
 * obstacle is gone, to the bytes of the first build. */
static inline void fuzz_check_obstacles(const uint8_t* data, size_t size, const nb_obj* world)
{
    fuzz_reader r = { data, size };
    nb_context* ctx = nb_context_create(NULL);
    FUZZ_EXPECT(ctx != NULL, "out of memory");
    const float bmin[3] = { 12.0f, -60.0f, 12.0f }, bmax[3] = { 31.2f, 60.0f, 31.2f };
    nb_bake_input in = nb_obj_bake_input(world);
    in.bmin = bmin;
    in.bmax = bmax;
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 16;
    cfg.partition = (nb_partition)(fuzz_next_byte(&r) % 5);
    nb_tile_cache* cache = NULL;
    nb_navmesh *nav = NULL, *first = NULL;
    FUZZ_EXPECT(nb_tile_cache_create(ctx, &in, &cfg, NULL, 0, &cache) == NB_OK, "cache: %s", nb_context_message(ctx));
    FUZZ_EXPECT(nb_tile_cache_build_navmesh(ctx, cache, &nav) == NB_OK, "build: %s", nb_context_message(ctx));
    FUZZ_EXPECT(nb_tile_cache_build_navmesh(ctx, cache, &first) == NB_OK, "build: %s", nb_context_message(ctx));

    enum { MAX_OBS = 6 };
    uint32_t ids[MAX_OBS];
    int live = 0;
    float convex[MAX_OBS][4 * 3];
    const int nops = 1 + fuzz_next_byte(&r) % 16;
    for (int op = 0; op < nops; ++op) {
        const uint8_t b = fuzz_next_byte(&r);
        const int kind = b & 3;
        if (kind == 3 || (kind != 0 && live == 0)) { /* rebuild now, and compare with a full build */
            uint32_t n = 0;
            FUZZ_EXPECT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n) == NB_OK, "update: %s",
                        nb_context_message(ctx));
            FUZZ_EXPECT(nb_tile_cache_dirty_count(cache) == 0, "tiles left dirty after an update");
            nb_navmesh* full = NULL;
            FUZZ_EXPECT(nb_tile_cache_build_navmesh(ctx, cache, &full) == NB_OK, "build: %s", nb_context_message(ctx));
            FUZZ_EXPECT(fuzz_same_bytes(ctx, nav, full), "incremental update differs from a full build (op %d)", op);
            nb_navmesh_destroy(ctx, full);
            continue;
        }
        if (kind == 2) { /* remove one */
            const int k = (b >> 2) % live;
            FUZZ_EXPECT(nb_tile_cache_remove_obstacle(ctx, cache, ids[k]) == NB_OK, "remove: %s",
                        nb_context_message(ctx));
            ids[k] = ids[--live];
            continue;
        }
        if (kind == 0 && live == MAX_OBS)
            continue;
        nb_volume v;
        memset(&v, 0, sizeof(v));
        v.type = (nb_volume_type)(1 + (b >> 2) % 3);
        v.area = (b >> 4) & 1 ? (uint8_t)(fuzz_next_byte(&r) % 64) : 0;
        const float x = 10.0f + (float)(fuzz_next_byte(&r) % 97) * 0.25f; /* 10 .. 34: also beyond the bounds */
        const float z = 10.0f + (float)(fuzz_next_byte(&r) % 97) * 0.25f;
        const float y = -8.0f + (float)(fuzz_next_byte(&r) % 64) * 0.5f;
        const float sx = 0.1f + (float)(fuzz_next_byte(&r) % 40) * 0.2f;
        const float sz = 0.1f + (float)(fuzz_next_byte(&r) % 40) * 0.2f;
        const float h = 0.5f + (float)(fuzz_next_byte(&r) % 40) * 0.5f;
        v.bmin[0] = x;
        v.bmin[1] = y;
        v.bmin[2] = z;
        v.bmax[0] = x + sx;
        v.bmax[1] = y + h;
        v.bmax[2] = z + sz;
        v.center[0] = x;
        v.center[1] = y;
        v.center[2] = z;
        v.radius = sx;
        v.height = h;
        const int slot = kind == 0 ? live : (b >> 5) % live;
        float* cv = convex[slot];
        const float pts[4][2] = { { x, z }, { x + sx, z }, { x + sx, z + sz }, { x, z + sz * 0.5f } };
        for (int i = 0; i < 4; ++i) {
            cv[i * 3] = pts[i][0];
            cv[i * 3 + 1] = 0.0f;
            cv[i * 3 + 2] = pts[i][1];
        }
        v.verts = cv;
        v.vert_count = 4;
        v.ymin = y;
        v.ymax = y + h;
        if (kind == 0) {
            FUZZ_EXPECT(nb_tile_cache_add_obstacle(ctx, cache, &v, &ids[live]) == NB_OK, "add: %s",
                        nb_context_message(ctx));
            ++live;
        } else {
            FUZZ_EXPECT(nb_tile_cache_update_obstacle(ctx, cache, ids[slot], &v) == NB_OK, "move: %s",
                        nb_context_message(ctx));
        }
    }
    uint32_t n = 0;
    FUZZ_EXPECT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n) == NB_OK, "update: %s", nb_context_message(ctx));
    nb_navmesh* full = NULL;
    FUZZ_EXPECT(nb_tile_cache_build_navmesh(ctx, cache, &full) == NB_OK, "build: %s", nb_context_message(ctx));
    FUZZ_EXPECT(fuzz_same_bytes(ctx, nav, full), "incremental update differs from a full build (at the end)");
    nb_navmesh_destroy(ctx, full);
    while (live > 0)
        FUZZ_EXPECT(nb_tile_cache_remove_obstacle(ctx, cache, ids[--live]) == NB_OK, "remove");
    FUZZ_EXPECT(nb_tile_cache_update(ctx, cache, nav, NULL, 0, &n) == NB_OK, "update: %s", nb_context_message(ctx));
    FUZZ_EXPECT(fuzz_same_bytes(ctx, nav, first), "with every obstacle removed, the navmesh differs from the first");
    nb_navmesh_destroy(ctx, nav);
    nb_navmesh_destroy(ctx, first);
    nb_tile_cache_destroy(ctx, cache);
    nb_context_destroy(ctx);
}

/* Voxel path search on an adversarial grid and parameters. The input's first bytes choose the grid's dims (1..24
 * each), the move, the agent (height 1..6, radius 0..3, climb 0..4), smoothing, the node pool (1..4096), the ends
 * (anywhere from 8 voxels outside the grid to 8 past it) and the snapping distance; the rest fills the occupancy
 * (repeated). nb_voxel_nearest and nb_voxel_find_path must succeed or fail with a status, and what they return must
 * hold: snapped ends are places the agent can be, each raw step moves to a neighbour, every voxel is free and in
 * the grid, the path fits the pool, a second run gives the same path, and so does the sliced search. Then
 * nb_voxel_fill_enclosed (seeded by the snapped start) only adds solid voxels, as many as it says, and a second
 * fill adds none. */
static inline int fuzz_voxel_solid(const uint32_t* w, const int32_t d[3], int x, int y, int z)
{
    if (x < 0 || y < 0 || z < 0 || x >= d[0] || y >= d[1] || z >= d[2])
        return 0;
    const uint32_t i = (uint32_t)x + (uint32_t)d[0] * ((uint32_t)z + (uint32_t)d[2] * (uint32_t)y);
    return (int)((w[i >> 5] >> (i & 31)) & 1u);
}

static inline void fuzz_check_voxels(const uint8_t* data, size_t size)
{
    fuzz_reader r = { data, size };
    int32_t dims[3];
    for (int k = 0; k < 3; ++k)
        dims[k] = 1 + fuzz_next_byte(&r) % 24;
    nb_voxel_path_params p;
    p.move = fuzz_next_byte(&r) % 3;
    p.agent_height = 1 + fuzz_next_byte(&r) % 6;
    p.agent_radius = fuzz_next_byte(&r) % 4;
    p.max_climb = fuzz_next_byte(&r) % 5;
    const uint8_t flags = fuzz_next_byte(&r);
    p.smooth = flags & 1;
    p.heuristic_weight = (flags >> 1) & 1 ? 1.0f + (float)(flags >> 2) / 16.0f : 0.0f; /* 0, or 1..4.9 */
    const uint32_t max_nodes = 1 + ((uint32_t)fuzz_next_byte(&r) << 8 | fuzz_next_byte(&r)) % 4096;
    int32_t ends[6];
    for (int k = 0; k < 6; ++k)
        ends[k] = (int32_t)(fuzz_next_byte(&r) % (dims[k % 3] + 16)) - 8;
    const int32_t search = fuzz_next_byte(&r) % 9;
    const uint32_t voxels = (uint32_t)(dims[0] * dims[1] * dims[2]);
    const uint32_t nwords = (voxels + 31) / 32;
    uint32_t* words = (uint32_t*)calloc(nwords, sizeof(uint32_t));
    for (uint32_t i = 0; r.n && i < nwords * 4; ++i)
        words[i >> 2] |= (uint32_t)r.p[i % r.n] << (8 * (i & 3));
    if (voxels & 31)
        words[nwords - 1] &= (1u << (voxels & 31)) - 1u;
    nb_voxel_grid g;
    g.words = words;
    memcpy(g.dims, dims, sizeof(dims));
    g.cell_size = 0.3f;
    g.cell_height = 0.2f;

    nb_context* ctx = nb_context_create(NULL);
    nb_voxel_query* q = NULL;
    FUZZ_EXPECT(nb_voxel_query_create(ctx, max_nodes, &q) == NB_OK, "query");
    int32_t a[3], b[3];
    int fa = 0, fb = 0;
    FUZZ_EXPECT(nb_voxel_nearest(q, &g, &p, ends, search, a, &fa) == NB_OK, "%s", nb_context_message(ctx));
    FUZZ_EXPECT(nb_voxel_nearest(q, &g, &p, ends + 3, search, b, &fb) == NB_OK, "%s", nb_context_message(ctx));
    if (fa && fb) {
        int32_t* path = (int32_t*)malloc(sizeof(int32_t) * 3 * max_nodes);
        int32_t* again = (int32_t*)malloc(sizeof(int32_t) * 3 * max_nodes);
        uint32_t n = 0, n2 = 0;
        int st = -1, st2 = -1;
        FUZZ_EXPECT(nb_voxel_find_path(q, &g, &p, a, b, path, max_nodes, &n, &st) == NB_OK, "%s", nb_context_message(ctx));
        FUZZ_EXPECT(n >= 1 && n <= max_nodes, "count %u of %u", n, max_nodes);
        FUZZ_EXPECT(st == NB_PATH_COMPLETE || st == NB_PATH_PARTIAL, "status %d", st);
        uint32_t used = 0;
        const int ran_out = nb_voxel_query_last_search(q, &used);
        FUZZ_EXPECT(ran_out ? used == max_nodes : used >= 1 && used <= max_nodes, "nodes used %u of %u", used, max_nodes);
        FUZZ_EXPECT(path[0] == a[0] && path[1] == a[1] && path[2] == a[2], "starts at the start");
        if (st == NB_PATH_COMPLETE)
            FUZZ_EXPECT(path[3 * n - 3] == b[0] && path[3 * n - 2] == b[1] && path[3 * n - 1] == b[2], "ends at the end");
        for (uint32_t i = 0; i < n; ++i) {
            const int32_t* v = path + 3 * i;
            FUZZ_EXPECT(v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[0] < dims[0] && v[1] < dims[1] && v[2] < dims[2],
                        "voxel %u (%d, %d, %d) inside", i, v[0], v[1], v[2]);
            for (int y = v[1]; y < v[1] + p.agent_height; ++y)
                FUZZ_EXPECT(!fuzz_voxel_solid(words, dims, v[0], y, v[2]), "voxel %u's column is free", i);
            if (p.move == NB_VOXEL_WALK)
                FUZZ_EXPECT(fuzz_voxel_solid(words, dims, v[0], v[1] - 1, v[2]), "walk voxel %u on the ground", i);
            if (i && !p.smooth) {
                int dmax = 0;
                for (int k = 0; k < 3; ++k) {
                    const int dk = abs(v[k] - v[k - 3]);
                    dmax = dk > dmax ? dk : dmax;
                }
                if (p.move == NB_VOXEL_WALK) {
                    FUZZ_EXPECT(abs(v[0] - v[-3]) <= 1 && abs(v[2] - v[-1]) <= 1 && abs(v[1] - v[-2]) <= p.max_climb,
                                "walk step %u", i);
                } else {
                    FUZZ_EXPECT(dmax == 1, "step %u moves to a neighbour", i);
                }
            }
        }
        FUZZ_EXPECT(nb_voxel_find_path(q, &g, &p, a, b, again, max_nodes, &n2, &st2) == NB_OK, "again");
        FUZZ_EXPECT(n2 == n && st2 == st && memcmp(path, again, sizeof(int32_t) * 3 * n) == 0, "deterministic");
        /* the sliced search, in slices of 1..8 expansions (from the ends' bytes), gives the same */
        const uint32_t slice = 1 + (uint32_t)(ends[0] + ends[4] + 16) % 8;
        uint32_t used2 = 0, slices = 0;
        int done = 0;
        FUZZ_EXPECT(nb_voxel_find_path_begin(q, &g, &p, a, b) == NB_OK, "%s", nb_context_message(ctx));
        while (!done && slices++ <= max_nodes)
            FUZZ_EXPECT(nb_voxel_find_path_step(q, slice, &done) == NB_OK, "%s", nb_context_message(ctx));
        FUZZ_EXPECT(done, "the sliced search ends within %u slices", max_nodes);
        FUZZ_EXPECT(nb_voxel_find_path_end(q, again, max_nodes, &n2, &st2) == NB_OK, "%s", nb_context_message(ctx));
        FUZZ_EXPECT(nb_voxel_query_last_search(q, &used2) == ran_out && used2 == used, "sliced pool use");
        FUZZ_EXPECT(n2 == n && st2 == st && memcmp(path, again, sizeof(int32_t) * 3 * n) == 0, "sliced = whole");
        free(path);
        free(again);
    }
    /* filling enclosed space: only free voxels become solid, and a second fill finds nothing */
    uint32_t* full = (uint32_t*)malloc(nwords * sizeof(uint32_t));
    memcpy(full, words, nwords * sizeof(uint32_t));
    uint64_t filled = 0, again_filled = 1;
    FUZZ_EXPECT(nb_voxel_fill_enclosed(ctx, full, dims, fa ? a : NULL, fa ? 1u : 0u, &filled) == NB_OK, "%s",
                nb_context_message(ctx));
    uint64_t grown = 0;
    for (uint32_t w = 0; w < nwords; ++w) {
        FUZZ_EXPECT((full[w] & words[w]) == words[w], "fill keeps every solid voxel (word %u)", w);
        for (uint32_t bits = full[w] & ~words[w]; bits; bits &= bits - 1)
            ++grown;
    }
    FUZZ_EXPECT(grown == filled, "filled %llu, grown %llu", (unsigned long long)filled, (unsigned long long)grown);
    FUZZ_EXPECT(nb_voxel_fill_enclosed(ctx, full, dims, fa ? a : NULL, fa ? 1u : 0u, &again_filled) == NB_OK &&
                    again_filled == 0,
                "a second fill finds nothing");
    free(full);
    nb_voxel_query_destroy(ctx, q);
    nb_context_destroy(ctx);
    free(words);
}

#endif
