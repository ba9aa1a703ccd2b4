/* Tile blobs: the parsed view matches the polygon and detail meshes, the BV tree covers every polygon, off-mesh
 * links become 2-vertex polygons, validation catches every kind of damage, every status is reachable. */
#include "navbake.h"
#include "nbtest.h"
#include "obj.h"
#include "../../c/src/navmesh_internal.h"

#include <stdint.h>

static nb_context* ctx;
static nb_obj dungeon;
static int have_dungeon;

/* ---- helpers ---- */

static void bake_level(const nb_obj* obj, nb_bake_result* r)
{
    nb_bake_input in = nb_obj_bake_input(obj);
    const nb_status st = nb_bake(ctx, &in, NULL, NB_STAGE_ALL, NB_KEEP_ALL, r);
    CHECK_INT(st, NB_OK);
}

static nb_tile_params params_of(const nb_bake_result* r)
{
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = r->poly_mesh;
    tp.detail = r->detail;
    tp.walkable_height = r->config.agent_height;
    tp.walkable_radius = r->config.agent_radius;
    tp.walkable_climb = r->config.agent_max_climb;
    return tp;
}

/* A parse needs aligned, writable bytes: copy into malloc'ed memory. */
static nb_status parse_copy(const uint8_t* data, size_t size, uint8_t** copy, nb_tile_view* v)
{
    *copy = (uint8_t*)malloc(size ? size : 1);
    memcpy(*copy, data, size);
    return nb_tile_parse(ctx, *copy, size, v);
}

/* Hand-made polygon mesh: two unit-cell squares side by side (cells 0..4 x 0..4 and 4..8 x 0..4), sharing an
 * edge; the right square's +x edge lies on the tile border. */
typedef struct small_mesh {
    uint16_t verts[6 * 3];
    uint16_t polys[2 * 2 * 6];
    uint16_t regs[2], flags[2];
    uint8_t areas[2];
    nb_poly_mesh m;
} small_mesh;

static void small_mesh_init(small_mesh* s)
{
    memset(s, 0, sizeof(*s));
    const uint16_t v[6][3] = { { 0, 1, 0 }, { 0, 1, 4 }, { 4, 1, 4 }, { 4, 1, 0 }, { 8, 1, 4 }, { 8, 1, 0 } };
    memcpy(s->verts, v, sizeof(v));
    memset(s->polys, 0xff, sizeof(s->polys));
    const uint16_t p0[6] = { 0, 1, 2, 3, 0xffff, 0xffff }, n0[6] = { 0xffff, 0xffff, 1, 0xffff, 0xffff, 0xffff };
    const uint16_t p1[6] = { 3, 2, 4, 5, 0xffff, 0xffff }, n1[6] = { 0, 0xffff, 0x8002, 0xffff, 0xffff, 0xffff };
    memcpy(&s->polys[0], p0, sizeof(p0));
    memcpy(&s->polys[6], n0, sizeof(n0));
    memcpy(&s->polys[12], p1, sizeof(p1));
    memcpy(&s->polys[18], n1, sizeof(n1));
    s->flags[0] = 1;
    s->flags[1] = 5;
    s->areas[0] = NB_WALKABLE_AREA;
    s->areas[1] = 7;
    s->m.verts = s->verts;
    s->m.polys = s->polys;
    s->m.regs = s->regs;
    s->m.flags = s->flags;
    s->m.areas = s->areas;
    s->m.nverts = 6;
    s->m.npolys = 2;
    s->m.max_polys = 2;
    s->m.nvp = 6;
    s->m.bmin[0] = 10.0f;
    s->m.bmin[1] = 2.0f;
    s->m.bmin[2] = -5.0f;
    s->m.bmax[0] = 12.4f;
    s->m.bmax[1] = 4.0f;
    s->m.bmax[2] = -3.8f;
    s->m.cell_size = 0.3f;
    s->m.cell_height = 0.2f;
}

static nb_tile_params small_params(const small_mesh* s)
{
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = &s->m;
    tp.walkable_height = 2.0f;
    tp.walkable_radius = 0.6f;
    tp.walkable_climb = 0.9f;
    tp.tile_x = 3;
    tp.tile_z = -2;
    return tp;
}

/* BV traversal with the escape offsets: visits every node once, returns the leaves in order. */
static int bv_check(const nb_tile_view* v, int* seen)
{
    const uint32_t nground = v->npolys - v->noffmesh;
    int ok = 1;
    for (uint32_t n = 0; n < v->nbv; ++n) {
        const nb_bv_node* node = &v->bv[n];
        if (node->i >= 0) {
            seen[node->i]++;
            continue;
        }
        const uint32_t end = n + (uint32_t)(-node->i);
        ok &= end <= v->nbv;
        /* every node in the subtree lies inside this node's box */
        for (uint32_t c = n + 1; c < end && c < v->nbv; ++c)
            for (int a = 0; a < 3; ++a)
                ok &= v->bv[c].bmin[a] >= node->bmin[a] && v->bv[c].bmax[a] <= node->bmax[a];
        /* the subtree is exactly two child subtrees */
        const uint32_t left = n + 1;
        const uint32_t left_end = v->bv[left].i >= 0 ? left + 1 : left + (uint32_t)(-v->bv[left].i);
        const uint32_t right = left_end;
        ok &= right < end;
        if (right < end) {
            const uint32_t right_end = v->bv[right].i >= 0 ? right + 1 : right + (uint32_t)(-v->bv[right].i);
            ok &= right_end == end;
        }
    }
    for (uint32_t p = 0; p < nground; ++p)
        ok &= seen[p] == 1;
    return ok;
}

/* ---- the view matches the meshes ---- */

static void test_dungeon_view_matches_meshes(void)
{
    if (!have_dungeon)
        return;
    nb_bake_result r;
    bake_level(&dungeon, &r);
    const nb_poly_mesh* pm = r.poly_mesh;
    const nb_poly_mesh_detail* dm = r.detail;
    nb_tile_params tp = params_of(&r);
    uint8_t* blob = NULL;
    size_t size = 0;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    printf("  dungeon solo: %d polys, %d verts, %d detail verts, %d detail tris -> blob %zu bytes\n", pm->npolys,
           pm->nverts, dm->nverts, dm->ntris, size);
    CHECK_INT(size % 4, 0);
    CHECK_INT(nb_tile_validate(ctx, blob, size), NB_OK);
    uint8_t* copy;
    nb_tile_view v;
    CHECK_INT(parse_copy(blob, size, &copy, &v), NB_OK);
    CHECK_INT(v.npolys, pm->npolys);
    CHECK_INT(v.nverts, pm->nverts);
    CHECK_INT(v.nvp, pm->nvp);
    CHECK_INT(v.noffmesh, 0);
    CHECK_INT(v.nbv, 2 * pm->npolys - 1);
    CHECK_NEAR(v.walkable_climb, 0.9, 1e-6);
    CHECK_NEAR(v.bv_quant, 1.0 / 0.3, 1e-4);
    for (int a = 0; a < 3; a += 2) {
        CHECK_NEAR(v.bmin[a], pm->bmin[a], 0);
        CHECK_NEAR(v.bmax[a], pm->bmax[a], 0);
    }
    int bad_verts = 0, bad_polys = 0, bad_detail = 0;
    for (int i = 0; i < pm->nverts; ++i) {
        const uint16_t* c = &pm->verts[i * 3];
        bad_verts += fabsf(v.verts[i * 3 + 0] - (pm->bmin[0] + c[0] * pm->cell_size)) > 1e-4f;
        bad_verts += fabsf(v.verts[i * 3 + 1] - (pm->bmin[1] + c[1] * pm->cell_height)) > 1e-4f;
        bad_verts += fabsf(v.verts[i * 3 + 2] - (pm->bmin[2] + c[2] * pm->cell_size)) > 1e-4f;
        bad_verts += v.verts[i * 3 + 1] < v.bmin[1] || v.verts[i * 3 + 1] > v.bmax[1];
    }
    uint32_t extra_total = 0, tri_total = 0;
    for (int p = 0; p < pm->npolys; ++p) {
        const uint16_t* src = &pm->polys[p * 2 * pm->nvp];
        int n = 0;
        while (n < pm->nvp && src[n] != NB_MESH_NULL_IDX)
            ++n;
        bad_polys += v.poly_nverts[p] != n;
        bad_polys += v.poly_types[p] != NB_POLY_GROUND;
        bad_polys += v.poly_areas[p] != pm->areas[p] || v.poly_flags[p] != pm->flags[p];
        for (int j = 0; j < pm->nvp; ++j) {
            bad_polys += v.poly_verts[p * pm->nvp + j] != src[j];
            const uint16_t nei = src[pm->nvp + j];
            const uint16_t want = nei == NB_MESH_NULL_IDX ? NB_NEI_WALL
                                  : (nei & 0x8000) ? nei
                                                   : (uint16_t)(nei + 1);
            bad_polys += v.poly_neis[p * pm->nvp + j] != want;
        }
        /* detail: the extra vertices are the detail mesh's after the polygon's own ones; triangles identical */
        const uint32_t* dmm = &dm->meshes[p * 4];
        const uint32_t* vm = &v.detail_meshes[p * 4];
        bad_detail += vm[1] != dmm[1] - (uint32_t)n || vm[3] != dmm[3];
        bad_detail += vm[0] != extra_total || vm[2] != tri_total;
        for (uint32_t k = 0; k < vm[1] && k + n < dmm[1]; ++k)
            for (int a = 0; a < 3; ++a)
                bad_detail += v.detail_verts[(vm[0] + k) * 3 + a] != dm->verts[(dmm[0] + n + k) * 3 + a];
        for (uint32_t t = 0; t < vm[3] && t < dmm[3]; ++t)
            for (int a = 0; a < 4; ++a)
                bad_detail += v.detail_tris[(vm[2] + t) * 4 + a] != dm->tris[(dmm[2] + t) * 4 + a];
        /* the own vertices of the detail mesh are the polygon's, so index i < n may stand for them */
        for (int k = 0; k < n; ++k)
            for (int a = 0; a < 3; ++a)
                bad_detail += fabsf(dm->verts[(dmm[0] + k) * 3 + a] - v.verts[src[k] * 3 + a]) > 1e-3f;
        extra_total += vm[1];
        tri_total += vm[3];
    }
    CHECK_INT(bad_verts, 0);
    CHECK_INT(bad_polys, 0);
    CHECK_INT(bad_detail, 0);
    CHECK_INT(v.ndetail_verts, extra_total);
    CHECK_INT(v.ndetail_tris, (uint32_t)dm->ntris);
    uint32_t own_total = 0;
    for (int p = 0; p < pm->npolys; ++p)
        own_total += v.poly_nverts[p];
    CHECK_INT(v.ndetail_verts, (uint32_t)dm->nverts - own_total); /* the detail mesh minus the repeated ones */

    /* BV tree: every ground polygon once, boxes nest, every leaf box holds its polygon */
    int* seen = (int*)calloc(v.npolys, sizeof(int));
    CHECK(bv_check(&v, seen));
    int bad_leaf = 0;
    for (uint32_t n = 0; n < v.nbv; ++n) {
        if (v.bv[n].i < 0)
            continue;
        const uint32_t p = (uint32_t)v.bv[n].i;
        for (uint32_t j = 0; j < v.poly_nverts[p]; ++j)
            for (int a = 0; a < 3; ++a) {
                const float q = (v.verts[v.poly_verts[p * v.nvp + j] * 3 + a] - v.bmin[a]) * v.bv_quant;
                bad_leaf += q < v.bv[n].bmin[a] - 1e-3f || q > v.bv[n].bmax[a] + 1e-3f;
            }
    }
    CHECK_INT(bad_leaf, 0);
    free(seen);

    /* deterministic */
    uint8_t* again = NULL;
    size_t again_size = 0;
    CHECK_INT(nb_tile_build(ctx, &tp, &again, &again_size), NB_OK);
    CHECK(again_size == size && memcmp(again, blob, size) == 0);
    nb_bytes_free(ctx, again);

    int32_t tx = 99, tz = 99;
    CHECK_INT(nb_tile_position(ctx, blob, size, &tx, &tz), NB_OK);
    CHECK_INT(tx, 0);
    CHECK_INT(tz, 0);
    free(copy);
    nb_bytes_free(ctx, blob);
    nb_bake_result_release(ctx, &r);
}

static void test_bake_tile_equals_bake_then_build(void)
{
    if (!have_dungeon)
        return;
    nb_bake_result r;
    bake_level(&dungeon, &r);
    nb_tile_params tp = params_of(&r);
    tp.tile_x = 4;
    tp.tile_z = -7;
    uint8_t* a = NULL;
    size_t asize = 0;
    CHECK_INT(nb_tile_build(ctx, &tp, &a, &asize), NB_OK);
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = dungeon.positions;
    in.mesh.vertex_count = dungeon.vertex_count;
    in.mesh.indices = dungeon.indices;
    in.mesh.triangle_count = dungeon.triangle_count;
    uint8_t* b = NULL;
    size_t bsize = 0;
    double stats[NB_STAT_COUNT];
    CHECK_INT(nb_bake_tile(ctx, &in, NULL, NULL, 0, 4, -7, &b, &bsize, stats), NB_OK);
    CHECK(asize == bsize && memcmp(a, b, asize) == 0);
    CHECK_INT(stats[NB_STAT_POLYS], r.poly_mesh->npolys);
    nb_bytes_free(ctx, b);
    /* stats are optional; a bake error passes through */
    CHECK_INT(nb_bake_tile(ctx, &in, NULL, NULL, 0, 0, 0, &b, &bsize, NULL), NB_OK);
    nb_bytes_free(ctx, b);
    nb_config bad;
    memset(&bad, 0, sizeof(bad));
    bad.cell_size = -1.0f;
    CHECK_STATUS(ctx, nb_bake_tile(ctx, &in, &bad, NULL, 0, 0, 0, &b, &bsize, NULL), NB_ERR_INVALID_CONFIG,
                 "cell_size");
    CHECK(b == NULL && bsize == 0);
    CHECK_STATUS(ctx, nb_bake_tile(ctx, &in, NULL, NULL, 0, 0, 0, NULL, &bsize, NULL), NB_ERR_NULL_ARG, "data");
    nb_bytes_free(ctx, a);
    nb_bake_result_release(ctx, &r);
}

/* ---- flat polygons, off-mesh links, small hand-made tiles ---- */

static void test_fan_triangulation_without_detail(void)
{
    small_mesh s;
    small_mesh_init(&s);
    /* make the first polygon a pentagon to see a longer fan */
    nb_tile_params tp = small_params(&s);
    uint8_t* blob;
    size_t size;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    uint8_t* copy;
    nb_tile_view v;
    CHECK_INT(parse_copy(blob, size, &copy, &v), NB_OK);
    CHECK_INT(v.tile_x, 3);
    CHECK_INT(v.tile_z, -2);
    CHECK_INT(v.ndetail_verts, 0);
    CHECK_INT(v.ndetail_tris, 4);
    for (int p = 0; p < 2; ++p) {
        const uint32_t* m = &v.detail_meshes[p * 4];
        CHECK_INT(m[1], 0);
        CHECK_INT(m[3], 2);
        /* fan from vertex 0: (0,1,2) has outline edges 0-1 and 1-2; (0,2,3) has 2-3 and 3-0 */
        const uint8_t* t0 = &v.detail_tris[m[2] * 4];
        const uint8_t* t1 = t0 + 4;
        CHECK(t0[0] == 0 && t0[1] == 1 && t0[2] == 2 && t0[3] == (1 | 1 << 2));
        CHECK(t1[0] == 0 && t1[1] == 2 && t1[2] == 3 && t1[3] == (1 << 2 | 1 << 4));
    }
    CHECK_INT(v.poly_neis[0 * 6 + 2], 2);              /* internal: polygon 1, stored + 1 */
    CHECK_INT(v.poly_neis[1 * 6 + 0], 1);              /* internal: polygon 0 */
    CHECK_INT(v.poly_neis[1 * 6 + 2], NB_NEI_BORDER | 2); /* +x border */
    CHECK_INT(v.poly_neis[0 * 6 + 0], NB_NEI_WALL);
    CHECK_INT(v.poly_flags[1], 5);
    CHECK_INT(v.poly_areas[1], 7);
    CHECK_NEAR(v.verts[4 * 3 + 0], 10.0 + 8 * 0.3, 1e-5);
    CHECK_NEAR(v.verts[4 * 3 + 1], 2.2, 1e-5);
    CHECK_NEAR(v.verts[4 * 3 + 2], -5.0 + 4 * 0.3, 1e-5);
    CHECK_INT(v.nbv, 3);
    int seen[2] = { 0, 0 };
    CHECK(bv_check(&v, seen));
    free(copy);
    nb_bytes_free(ctx, blob);
}

static void test_offmesh_links_become_polygons(void)
{
    small_mesh s;
    small_mesh_init(&s);
    nb_tile_params tp = small_params(&s);
    nb_offmesh_link links[4];
    memset(links, 0, sizeof(links));
    /* 0: inside to inside, defaults for flags and area */
    const float a0[6] = { 10.3f, 2.2f, -4.7f, 11.5f, 2.2f, -4.1f };
    /* 1: end beyond +x (side 2), bidirectional */
    const float a1[6] = { 12.0f, 2.2f, -4.5f, 14.0f, 2.2f, -4.4f };
    /* 2: start outside the tile: not stored here */
    const float a2[6] = { 9.0f, 2.2f, -4.5f, 11.0f, 2.2f, -4.5f };
    /* 3: end beyond -z (side 3), z overshoot larger than x */
    const float a3[6] = { 10.1f, 2.2f, -4.9f, 9.9f, 2.2f, -7.0f };
    const float* all[4] = { a0, a1, a2, a3 };
    for (int i = 0; i < 4; ++i) {
        memcpy(links[i].start, all[i], 3 * sizeof(float));
        memcpy(links[i].end, all[i] + 3, 3 * sizeof(float));
        links[i].radius = 0.5f;
        links[i].user_id = 100 + (uint32_t)i;
    }
    links[1].bidirectional = 1;
    links[1].flags = 8;
    links[1].area = 5;
    tp.links = links;
    tp.link_count = 4;
    uint8_t* blob;
    size_t size;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    uint8_t* copy;
    nb_tile_view v;
    CHECK_INT(parse_copy(blob, size, &copy, &v), NB_OK);
    CHECK_INT(v.noffmesh, 3);
    CHECK_INT(v.npolys, 5);
    CHECK_INT(v.nverts, 6 + 6);
    CHECK_INT(v.nbv, 3); /* the tree covers ground polygons only */
    const int stored[3] = { 0, 1, 3 };
    const uint8_t side[3] = { 0xff, 2, 3 };
    for (int k = 0; k < 3; ++k) {
        const nb_offmesh_con* c = &v.offmesh[k];
        const uint32_t p = 2 + (uint32_t)k;
        CHECK_INT(c->poly, p);
        CHECK_INT(c->side, side[k]);
        CHECK_INT(c->user_id, 100 + stored[k]);
        CHECK_INT(v.poly_types[p], NB_POLY_OFFMESH);
        CHECK_INT(v.poly_nverts[p], 2);
        CHECK_INT(v.poly_verts[p * 6 + 2], NB_MESH_NULL_IDX);
        for (int a = 0; a < 3; ++a) {
            CHECK_NEAR(v.verts[v.poly_verts[p * 6 + 0] * 3 + a], all[stored[k]][a], 0);
            CHECK_NEAR(v.verts[v.poly_verts[p * 6 + 1] * 3 + a], all[stored[k]][3 + a], 0);
            CHECK_NEAR(c->pos[a], all[stored[k]][a], 0);
        }
        CHECK_INT(v.detail_meshes[p * 4 + 1], 0);
        CHECK_INT(v.detail_meshes[p * 4 + 3], 0);
    }
    CHECK_INT(v.poly_flags[2], 1);
    CHECK_INT(v.poly_areas[2], NB_WALKABLE_AREA);
    CHECK_INT(v.poly_flags[3], 8);
    CHECK_INT(v.poly_areas[3], 5);
    CHECK_INT(v.offmesh[1].bidirectional, 1);
    CHECK_INT(v.offmesh[0].bidirectional, 0);
    /* the y range covers the link ends, x and z stay the tile's footprint */
    CHECK_NEAR(v.bmin[0], 10.0, 0);
    CHECK_NEAR(v.bmax[0], 12.4f, 0);
    free(copy);
    nb_bytes_free(ctx, blob);
}

/* ---- validation ---- */

static void put_u32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get_u32(const uint8_t* p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Damages a copy of the blob at `offset` with `value` (32 bits), fixes the CRC when asked, expects status and
 * a message naming the field. */
static void expect_damage(const uint8_t* blob, size_t size, size_t offset, uint32_t value, int fix_crc,
                          nb_status want, const char* needle)
{
    uint8_t* d = (uint8_t*)malloc(size);
    memcpy(d, blob, size);
    put_u32(d + offset, value);
    if (fix_crc)
        nb_tile_update_crc(d, size);
    CHECK_STATUS(ctx, nb_tile_validate(ctx, d, size), want, needle);
    nb_tile_view v;
    CHECK_INT(nb_tile_parse(ctx, d, size, &v), want);
    free(d);
}

static void test_validation_names_the_field(void)
{
    small_mesh s;
    small_mesh_init(&s);
    nb_tile_params tp = small_params(&s);
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    const float a0[6] = { 10.3f, 2.2f, -4.7f, 11.5f, 2.2f, -4.1f };
    memcpy(link.start, a0, 12);
    memcpy(link.end, a0 + 3, 12);
    link.radius = 0.5f;
    tp.links = &link;
    tp.link_count = 1;
    uint8_t* blob;
    size_t size;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    CHECK_INT(nb_tile_validate(ctx, blob, size), NB_OK);
    uint8_t* copy;
    nb_tile_view v;
    CHECK_INT(parse_copy(blob, size, &copy, &v), NB_OK);
    const size_t off_verts = (size_t)((uint8_t*)v.verts - copy);
    const size_t off_pverts = (size_t)((uint8_t*)v.poly_verts - copy);
    const size_t off_pneis = (size_t)((uint8_t*)v.poly_neis - copy);
    const size_t off_areas = (size_t)(v.poly_areas - copy);
    const size_t off_dm = (size_t)((uint8_t*)v.detail_meshes - copy);
    const size_t off_dt = (size_t)(v.detail_tris - copy);
    const size_t off_bv = (size_t)((uint8_t*)v.bv - copy);
    const size_t off_om = (size_t)((uint8_t*)v.offmesh - copy);

    /* header identity and sizes */
    CHECK(get_u32(blob) == 0x4c54424eu && memcmp(blob, "NBTL", 4) == 0);
    expect_damage(blob, size, 0, 0x12345678u, 1, NB_ERR_CORRUPT, "magic");
    expect_damage(blob, size, 0, 0x4e42544cu, 1, NB_ERR_CORRUPT, "big-endian");
    expect_damage(blob, size, 4, 2, 1, NB_ERR_VERSION, "version 2");
    expect_damage(blob, size, 4, 2, 0, NB_ERR_VERSION, "version"); /* version is read before the CRC */
    expect_damage(blob, size, 8, 96, 1, NB_ERR_CORRUPT, "header_size");
    expect_damage(blob, size, 12, (uint32_t)size + 4, 1, NB_ERR_CORRUPT, "total_size");
    expect_damage(blob, size, 16, get_u32(blob + 16) ^ 1u, 0, NB_ERR_CORRUPT, "crc");
    expect_damage(blob, size, 28 /* nverts */, 5, 0, NB_ERR_CORRUPT, "crc");
    /* with a matching CRC the structure checks still catch a bad header */
    expect_damage(blob, size, 28, 0x7fffffffu, 1, NB_ERR_CORRUPT, "nverts");
    expect_damage(blob, size, 28, 13, 1, NB_ERR_CORRUPT, "imply");
    expect_damage(blob, size, 32, 0xffffffffu, 1, NB_ERR_CORRUPT, "npolys");
    expect_damage(blob, size, 32, 4, 1, NB_ERR_CORRUPT, "nbv"); /* 4 - 1 offmesh = 3 ground: tree of 5 */
    expect_damage(blob, size, 36, 13, 1, NB_ERR_CORRUPT, "nvp");
    expect_damage(blob, size, 40, 0xfffffff0u, 1, NB_ERR_CORRUPT, "imply"); /* ndetail_verts: 64-bit layout */
    expect_damage(blob, size, 44, 0x40000000u, 1, NB_ERR_CORRUPT, "imply");
    expect_damage(blob, size, 48, 0xffffffffu, 1, NB_ERR_CORRUPT, "nbv");
    expect_damage(blob, size, 52, 9, 1, NB_ERR_CORRUPT, "noffmesh");
    expect_damage(blob, size, 52, 2, 1, NB_ERR_CORRUPT, "nbv"); /* 1 ground polygon: 1 node */
    expect_damage(blob, size, 56, 0x7fc00000u /* NaN */, 1, NB_ERR_CORRUPT, "bounds");
    expect_damage(blob, size, 56, 0x42c80000u /* 100 > bmax.x */, 1, NB_ERR_CORRUPT, "bounds");
    expect_damage(blob, size, 88, 0xbf800000u /* -1 */, 1, NB_ERR_CORRUPT, "walkable_climb");
    expect_damage(blob, size, 92, 0, 1, NB_ERR_CORRUPT, "bv_quant");
    expect_damage(blob, size, 96, 1, 1, NB_ERR_CORRUPT, "reserved");
    /* arrays */
    expect_damage(blob, size, off_verts + 4, 0x7f800000u /* inf */, 1, NB_ERR_CORRUPT, "verts[0]");
    expect_damage(blob, size, off_pverts, 0x00010009u, 1, NB_ERR_CORRUPT, "poly_verts[0][0]");
    expect_damage(blob, size, off_pverts + 8, 0xffff0003u, 1, NB_ERR_CORRUPT, "poly_verts[0][4]"); /* padding */
    expect_damage(blob, size, off_pneis, 0x00000003u, 1, NB_ERR_CORRUPT, "poly_neis[0][0]");
    expect_damage(blob, size, off_pneis, 0x00008004u, 1, NB_ERR_CORRUPT, "poly_neis[0][0]");
    expect_damage(blob, size, off_areas, 0x003f3f40u, 1, NB_ERR_CORRUPT, "poly_areas[0]");
    expect_damage(blob, size, off_areas + 4, 0x00000100u, 1, NB_ERR_CORRUPT, "poly_types[1]"); /* types at +4 */
    expect_damage(blob, size, off_areas + 8, 0x00040402u, 1, NB_ERR_CORRUPT, "poly_nverts[0]");
    expect_damage(blob, size, off_dm + 4, 7, 1, NB_ERR_CORRUPT, "detail_meshes[0]");
    expect_damage(blob, size, off_dm + 12, 0, 1, NB_ERR_CORRUPT, "detail_meshes[0]");
    expect_damage(blob, size, off_dt, 0x00090100u, 1, NB_ERR_CORRUPT, "detail_tris[0]");
    expect_damage(blob, size, off_bv + 12, (uint32_t)-7, 1, NB_ERR_CORRUPT, "bv[0]");
    expect_damage(blob, size, off_bv + 12, 0x80000000u, 1, NB_ERR_CORRUPT, "bv[0]");
    expect_damage(blob, size, off_bv + 16 + 12, 2, 1, NB_ERR_CORRUPT, "bv[1]"); /* leaf on the off-mesh poly */
    expect_damage(blob, size, off_bv, 0x0000ffffu, 1, NB_ERR_CORRUPT, "bv[0]");   /* bmin.x > bmax.x */
    expect_damage(blob, size, off_om + 24, 0, 1, NB_ERR_CORRUPT, "offmesh[0].radius");
    expect_damage(blob, size, off_om + 28, 0x00000003u, 1, NB_ERR_CORRUPT, "offmesh[0].poly");
    expect_damage(blob, size, off_om + 28, 0x00070002u, 1, NB_ERR_CORRUPT, "offmesh[0]"); /* bidirectional 7 */
    expect_damage(blob, size, off_om + 28, 0x04000002u, 1, NB_ERR_CORRUPT, "offmesh[0]"); /* side 4 */
    expect_damage(blob, size, off_om, 0x3f800000u, 1, NB_ERR_CORRUPT, "offmesh[0].pos");
    expect_damage(blob, size, off_verts + 6 * 12, 0xff800000u, 1, NB_ERR_CORRUPT, "verts[6]");
    /* a ground polygon may not use a link's end points, a link polygon only its own */
    expect_damage(blob, size, off_pverts, 0x00010006u, 1, NB_ERR_CORRUPT, "poly_verts[0][0]");
    expect_damage(blob, size, off_pverts + 2 * 6 * 2, 0x00060006u, 1, NB_ERR_CORRUPT, "poly_verts[2][1]");
    /* padding after poly_areas (3 polys -> 1 pad byte) must stay zero */
    expect_damage(blob, size, off_areas, 0x013f0707u, 1, NB_ERR_CORRUPT, "padding");

    /* truncation at every length and a longer buffer */
    int bad = 0;
    for (size_t n = 0; n < size; ++n) {
        const nb_status st = nb_tile_validate(ctx, blob, n);
        bad += st != NB_ERR_CORRUPT && st != NB_ERR_VERSION;
    }
    CHECK_INT(bad, 0);
    uint8_t* longer = (uint8_t*)calloc(1, size + 4);
    memcpy(longer, blob, size);
    CHECK_STATUS(ctx, nb_tile_validate(ctx, longer, size + 4), NB_ERR_CORRUPT, "total_size");
    free(longer);

    /* misaligned parse; NULLs */
    uint8_t* unaligned = (uint8_t*)malloc(size + 1);
    memcpy(unaligned + 1, blob, size);
    CHECK_INT(nb_tile_validate(ctx, unaligned + 1, size), NB_OK); /* validation itself does not need alignment */
    CHECK_STATUS(ctx, nb_tile_parse(ctx, unaligned + 1, size, &v), NB_ERR_INVALID_ARG, "aligned");
    free(unaligned);
    CHECK_STATUS(ctx, nb_tile_validate(ctx, NULL, 4), NB_ERR_NULL_ARG, "data");
    int32_t tx, tz;
    CHECK_STATUS(ctx, nb_tile_position(ctx, blob, size, NULL, &tz), NB_ERR_NULL_ARG, "tile_x");
    CHECK_STATUS(ctx, nb_tile_position(ctx, blob, size - 4, &tx, &tz), NB_ERR_CORRUPT, "total_size");
    CHECK_STATUS(ctx, nb_tile_parse(ctx, copy, size, NULL), NB_ERR_NULL_ARG, "view");
    free(copy);
    nb_bytes_free(ctx, blob);
    nb_bytes_free(ctx, NULL);
}

/* Random byte flips: every one is caught (the CRC covers every byte), none crashes. */
static void test_random_flips_are_caught(void)
{
    if (!have_dungeon)
        return;
    nb_bake_result r;
    bake_level(&dungeon, &r);
    nb_tile_params tp = params_of(&r);
    uint8_t* blob;
    size_t size;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    uint8_t* d = (uint8_t*)malloc(size);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int accepted = 0, wrong = 0;
    for (int i = 0; i < 2000; ++i) {
        memcpy(d, blob, size);
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const size_t at = (size_t)((rng >> 33) % size);
        const uint8_t x = (uint8_t)(1u + (rng >> 20) % 255u);
        d[at] ^= x;
        const nb_status st = nb_tile_validate(ctx, d, size);
        accepted += st == NB_OK;
        wrong += st != NB_OK && st != NB_ERR_CORRUPT && st != NB_ERR_VERSION;
    }
    CHECK_INT(accepted, 0);
    CHECK_INT(wrong, 0);
    free(d);
    nb_bytes_free(ctx, blob);
    nb_bake_result_release(ctx, &r);
}

/* ---- build errors ---- */

static void test_build_errors(void)
{
    small_mesh s;
    small_mesh_init(&s);
    nb_tile_params tp = small_params(&s);
    uint8_t* blob = (uint8_t*)&s; /* must be cleared on failure */
    size_t size = 7;
    CHECK_STATUS(ctx, nb_tile_build(ctx, NULL, &blob, &size), NB_ERR_NULL_ARG, "params");
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, NULL, &size), NB_ERR_NULL_ARG, "data");
    tp.poly_mesh = NULL;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_NULL_ARG, "poly_mesh");
    CHECK(blob == NULL && size == 0);
    tp = small_params(&s);

    s.m.nvp = 13;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "nvp");
    s.m.nvp = 6;
    s.polys[6 + 1] = 0x8007;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "neighbour");
    s.polys[6 + 1] = 2; /* polygon 2 does not exist */
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "neighbour");
    s.polys[6 + 1] = 0xffff;
    s.polys[0] = 6;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "vertex");
    s.polys[0] = 0;
    s.polys[2] = 0xffff; /* two vertices */
    s.polys[3] = 0xffff;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "polygon 0");
    small_mesh_init(&s);
    s.areas[1] = 64;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "area");
    small_mesh_init(&s);
    s.m.bmin[2] = NAN;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_NONFINITE, "bounds");
    small_mesh_init(&s);
    s.m.cell_size = 0;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "cell_size");
    small_mesh_init(&s);
    tp.walkable_climb = INFINITY;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_NONFINITE, "walkable_climb");
    tp.walkable_climb = -1;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "walkable_climb");
    tp = small_params(&s);

    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    link.start[0] = 10.5f;
    link.start[2] = -4.5f;
    link.end[0] = 11.0f;
    link.end[2] = -4.5f;
    link.radius = 0.5f;
    tp.links = NULL;
    tp.link_count = 1;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_NULL_ARG, "links");
    tp.links = &link;
    link.radius = 0;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "links[0].radius");
    link.radius = 0.5f;
    link.end[1] = NAN;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_NONFINITE, "links[0].end.y");
    link.end[1] = 0;
    link.area = 64;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "links[0].area");
    link.area = 0;
    link.bidirectional = 2;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "bidirectional");
    link.bidirectional = 0;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    nb_bytes_free(ctx, blob);
}

static void test_detail_mismatch_is_rejected(void)
{
    if (!have_dungeon)
        return;
    nb_bake_result r;
    bake_level(&dungeon, &r);
    nb_tile_params tp = params_of(&r);
    uint8_t* blob;
    size_t size;
    nb_poly_mesh_detail d = *r.detail;
    tp.detail = &d;
    d.nmeshes--;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "meshes");
    d.nmeshes++;
    const uint32_t saved = d.meshes[4 + 1];
    d.meshes[4 + 1] = 2; /* fewer than the polygon's own vertices */
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "detail mesh 1");
    d.meshes[4 + 1] = saved;
    const uint8_t saved_tri = d.tris[d.meshes[2] * 4];
    d.tris[d.meshes[2] * 4] = 200;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_INVALID_ARG, "detail triangle");
    d.tris[d.meshes[2] * 4] = saved_tri;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    nb_bytes_free(ctx, blob);
    nb_bake_result_release(ctx, &r);
}

/* A polygon mesh of n copies of one triangle (verts: its three vertices, in cells); linked: each polygon's
 * first two edges name the polygons before and after it, as neighbours in a mesh of n polygons would. */
static void same_triangles(nb_poly_mesh* m, uint16_t* verts, int n, int linked)
{
    memset(m, 0, sizeof(*m));
    m->verts = verts;
    m->nverts = 3;
    m->nvp = 3;
    m->polys = (uint16_t*)malloc((size_t)n * 6 * sizeof(uint16_t));
    m->flags = (uint16_t*)calloc((size_t)n, sizeof(uint16_t));
    m->areas = (uint8_t*)calloc((size_t)n, 1);
    m->regs = (uint16_t*)calloc((size_t)n, sizeof(uint16_t));
    for (int p = 0; p < n; ++p) {
        const uint16_t poly[6] = { 0, 1, 2, linked ? (uint16_t)((p + 1) % n) : 0xffff,
                                   linked ? (uint16_t)((p + n - 1) % n) : 0xffff, 0xffff };
        memcpy(&m->polys[p * 6], poly, sizeof(poly));
    }
    m->npolys = n;
    m->bmax[0] = m->bmax[1] = m->bmax[2] = 1.0f;
    m->cell_size = 0.3f;
    m->cell_height = 0.2f;
}

static void same_triangles_free(nb_poly_mesh* m)
{
    free(m->polys);
    free(m->flags);
    free(m->areas);
    free(m->regs);
}

/* More polygons than a reference can address: NB_ERR_TOO_LARGE; 32768 ground polygons is the limit. */
static void test_too_many_polygons(void)
{
    const int n = NB_MAX_POLYS_PER_TILE + 1;
    nb_poly_mesh m;
    uint16_t verts[9] = { 0, 0, 0, 0, 0, 1, 1, 0, 0 };
    same_triangles(&m, verts, n, 0);
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = &m;
    uint8_t* blob;
    size_t size;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_TOO_LARGE, "32768");
    m.npolys = n - 1;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    CHECK_INT(nb_tile_validate(ctx, blob, size), NB_OK);
    nb_bytes_free(ctx, blob);
    /* one more off-mesh link on a full tile tips it over */
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    link.radius = 1;
    tp.links = &link;
    tp.link_count = 1;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_TOO_LARGE, "links");
    /* vertices: u16 indices with 0xffff reserved; a link adds two */
    m.npolys = 1;
    m.nverts = 65533;
    uint16_t* many = (uint16_t*)calloc(65533 * 3, sizeof(uint16_t));
    m.verts = many;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_TOO_LARGE);
    CHECK(strstr(nb_context_message(ctx), "vertices") != NULL);
    tp.link_count = 0;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    nb_bytes_free(ctx, blob);
    free(many);
    same_triangles_free(&m);
}

/* A solo bake of a big level: its polygon mesh links polygons past index 0x7fff, where neighbour indices read as
 * portal codes. The count is refused first, with what to change, not as a bad neighbour code. */
static void test_too_many_linked_polygons(void)
{
    const int n = 40000;
    nb_poly_mesh m;
    uint16_t verts[9] = { 0, 0, 0, 0, 0, 1, 1, 0, 0 };
    same_triangles(&m, verts, n, 1);
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = &m;
    uint8_t* blob;
    size_t size;
    CHECK_STATUS(ctx, nb_tile_build(ctx, &tp, &blob, &size), NB_ERR_TOO_LARGE, "40000 polygons exceed the 32768");
    CHECK(strstr(nb_context_message(ctx), "tile_size") != NULL);
    same_triangles_free(&m);
}

static void test_empty_tile(void)
{
    small_mesh s;
    small_mesh_init(&s);
    s.m.npolys = 0;
    nb_tile_params tp = small_params(&s);
    uint8_t* blob;
    size_t size;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    uint8_t* copy;
    nb_tile_view v;
    CHECK_INT(parse_copy(blob, size, &copy, &v), NB_OK);
    CHECK_INT(v.npolys, 0);
    CHECK_INT(v.nbv, 0);
    free(copy);
    nb_bytes_free(ctx, blob);
}

static void test_out_of_memory(void)
{
    small_mesh s;
    small_mesh_init(&s);
    nb_tile_params tp = small_params(&s);
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    link.start[0] = 10.5f;
    link.start[2] = -4.5f;
    link.radius = 0.5f;
    tp.links = &link;
    tp.link_count = 1;
    int failures = 0;
    for (long fail = 2; fail < 100; ++fail) { /* allocation 1 is the context */
        nbt_alloc a = { .fail_at = fail };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        uint8_t* blob = NULL;
        size_t size = 0;
        const nb_status st = nb_tile_build(c, &tp, &blob, &size);
        if (st == NB_OK) {
            CHECK_INT(nb_tile_validate(c, blob, size), NB_OK);
            nb_bytes_free(c, blob);
        } else {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            CHECK(strstr(nb_context_message(c), "nb_tile_build: out of memory") != NULL);
            CHECK(blob == NULL);
        }
        CHECK_INT(a.live, 1);
        nb_context_destroy(c);
        if (st == NB_OK)
            break;
        ++failures;
    }
    CHECK(failures >= 3);
}

static void test_crc32(void)
{
    /* the standard check value of CRC-32/ISO-HDLC */
    CHECK_INT(nb_crc32((const uint8_t*)"123456789", 9), 0xcbf43926u);
    CHECK_INT(nb_crc32((const uint8_t*)"", 0), 0);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    char path[512], err[512];
    have_dungeon = nb_obj_load(nbt_mesh_path("dungeon.obj", path, sizeof(path)), &dungeon, err, sizeof(err)) == 0;
    if (!have_dungeon) {
        fprintf(stderr, "  %s\n", err);
        CHECK(!"dungeon.obj missing");
    }
    RUN(test_crc32);
    RUN(test_dungeon_view_matches_meshes);
    RUN(test_bake_tile_equals_bake_then_build);
    RUN(test_fan_triangulation_without_detail);
    RUN(test_offmesh_links_become_polygons);
    RUN(test_validation_names_the_field);
    RUN(test_random_flips_are_caught);
    RUN(test_build_errors);
    RUN(test_detail_mismatch_is_rejected);
    RUN(test_too_many_polygons);
    RUN(test_too_many_linked_polygons);
    RUN(test_empty_tile);
    RUN(test_out_of_memory);
    if (have_dungeon)
        nb_obj_free(&dungeon);
    nb_context_destroy(ctx);
    return nbt_finish("test_tile");
}
