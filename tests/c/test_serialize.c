/* Save and load: byte-identical round trips independent of the add order, links rebuilt on load, every header
 * field checked, random damage and truncation always caught (never a crash), failing allocations. */
#include "navbake.h"
#include "nbtest.h"
#include "obj.h"
#include "../../c/src/navmesh_internal.h"

static nb_context* ctx;
static nb_obj dungeon;
static int have_dungeon;

/* A few 64-cell tiles of the dungeon: a small level keeps the fuzzing fast under ASan. */
#define MAX_TILES_HERE 8
static uint8_t* blobs[MAX_TILES_HERE];
static size_t sizes[MAX_TILES_HERE];
static int32_t tile_x[MAX_TILES_HERE], tile_z[MAX_TILES_HERE];
static int ntiles;
static float origin[3], tile_size;

static void bake_some_tiles(void)
{
    float bmin[3], bmax[3];
    memcpy(bmin, dungeon.positions, sizeof(bmin));
    memcpy(bmax, dungeon.positions, sizeof(bmax));
    for (uint32_t i = 1; i < dungeon.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            bmin[k] = fminf(bmin[k], dungeon.positions[i * 3 + k]);
            bmax[k] = fmaxf(bmax[k], dungeon.positions[i * 3 + k]);
        }
    memcpy(origin, bmin, sizeof(origin));
    tile_size = 64 * 0.3f;
    const int gx = (int)ceilf((bmax[0] - bmin[0]) / tile_size), gz = (int)ceilf((bmax[2] - bmin[2]) / tile_size);
    /* the first rows of tiles that have polygons, with one off-mesh link in the first tile */
    for (int tz = 0; tz < gz && ntiles < 4; ++tz)
        for (int tx = 0; tx < gx && ntiles < 4; ++tx) {
            nb_bake_input in;
            memset(&in, 0, sizeof(in));
            in.mesh.positions = dungeon.positions;
            in.mesh.vertex_count = dungeon.vertex_count;
            in.mesh.indices = dungeon.indices;
            in.mesh.triangle_count = dungeon.triangle_count;
            const float lo[3] = { bmin[0] + tx * tile_size, bmin[1], bmin[2] + tz * tile_size };
            const float hi[3] = { lo[0] + tile_size, bmax[1], lo[2] + tile_size };
            in.bmin = lo;
            in.bmax = hi;
            in.border_size = 5;
            double stats[NB_STAT_COUNT];
            uint8_t* blob;
            size_t size;
            CHECK_INT(nb_bake_tile(ctx, &in, NULL, NULL, 0, tx, tz, &blob, &size, stats), NB_OK);
            if (stats[NB_STAT_POLYS] <= 0) {
                nb_bytes_free(ctx, blob);
                continue;
            }
            blobs[ntiles] = blob;
            sizes[ntiles] = size;
            tile_x[ntiles] = tx;
            tile_z[ntiles] = tz;
            ++ntiles;
        }
    if (ntiles < 2)
        return;
    /* Tile 0 again, with a bidirectional off-mesh link from its first polygon to the last polygon of tile 1. */
    nb_tile_view v0, v1;
    CHECK_INT(nb_tile_parse(ctx, blobs[0], sizes[0], &v0), NB_OK);
    CHECK_INT(nb_tile_parse(ctx, blobs[1], sizes[1], &v1), NB_OK);
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    for (uint32_t j = 0; j < v0.poly_nverts[0]; ++j)
        for (int a = 0; a < 3; ++a)
            link.start[a] += v0.verts[v0.poly_verts[j] * 3 + a] / v0.poly_nverts[0];
    const uint32_t last = v1.npolys - 1;
    for (uint32_t j = 0; j < v1.poly_nverts[last]; ++j)
        for (int a = 0; a < 3; ++a)
            link.end[a] += v1.verts[v1.poly_verts[last * v1.nvp + j] * 3 + a] / v1.poly_nverts[last];
    link.radius = 0.5f;
    link.bidirectional = 1;
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = dungeon.positions;
    in.mesh.vertex_count = dungeon.vertex_count;
    in.mesh.indices = dungeon.indices;
    in.mesh.triangle_count = dungeon.triangle_count;
    const float lo[3] = { bmin[0] + tile_x[0] * tile_size, bmin[1], bmin[2] + tile_z[0] * tile_size };
    const float hi[3] = { lo[0] + tile_size, bmax[1], lo[2] + tile_size };
    in.bmin = lo;
    in.bmax = hi;
    in.border_size = 5;
    nb_bytes_free(ctx, blobs[0]);
    CHECK_INT(nb_bake_tile(ctx, &in, NULL, &link, 1, tile_x[0], tile_z[0], &blobs[0], &sizes[0], NULL), NB_OK);
}

static nb_navmesh* make_navmesh(nb_context* c, int reverse)
{
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    memcpy(p.origin, origin, sizeof(origin));
    p.tile_width = p.tile_depth = tile_size;
    p.max_tiles = 16;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(c, &p, &nav), NB_OK);
    for (int i = 0; i < ntiles; ++i) {
        const int k = reverse ? ntiles - 1 - i : i;
        CHECK_INT(nb_navmesh_add_tile(c, nav, blobs[k], sizes[k]), NB_OK);
    }
    return nav;
}

/* Links of every polygon as (tile x, z, poly, edge, side, nedge, reserved, target x, z, poly), sorted. */
typedef struct link_rec {
    int32_t v[10];
} link_rec;

static int cmp_rec(const void* pa, const void* pb)
{
    const link_rec* a = (const link_rec*)pa;
    const link_rec* b = (const link_rec*)pb;
    for (int i = 0; i < 10; ++i)
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i] ? -1 : 1;
    return 0;
}

static link_rec* snapshot(const nb_navmesh* nav, uint32_t* count)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s)
        if (nav->tiles[s].data)
            for (uint32_t p = 0; p < nav->tiles[s].v.npolys; ++p)
                for (uint32_t li = nav->tiles[s].first_link[p]; li != NB_NULL_LINK; li = nav->tiles[s].links[li].next)
                    ++n;
    link_rec* r = (link_rec*)calloc(n ? n : 1, sizeof(link_rec));
    uint32_t k = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        for (uint32_t p = 0; p < t->v.npolys; ++p)
            for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next) {
                const nb_link* l = &t->links[li];
                uint32_t bp = 0;
                const nb_tile* bt = nb_navmesh_resolve(nav, l->ref, &bp);
                const int32_t v[10] = { t->v.tile_x, t->v.tile_z, (int32_t)p, l->edge, l->side, l->nedge, l->reserved,
                                        bt ? bt->v.tile_x : -999, bt ? bt->v.tile_z : -999, (int32_t)bp };
                memcpy(r[k++].v, v, sizeof(v));
            }
    }
    qsort(r, n, sizeof(link_rec), cmp_rec);
    *count = n;
    return r;
}

static void put_u32(uint8_t* p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get_u32(const uint8_t* p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static void fix_header_crc(uint8_t* d) { put_u32(d + 44, nb_crc32(d, 44)); }

/* ---- tests ---- */

static void test_round_trip_is_byte_identical(void)
{
    if (!ntiles)
        return;
    nb_navmesh* nav = make_navmesh(ctx, 0);
    uint8_t* a;
    size_t asize;
    CHECK_INT(nb_navmesh_save(ctx, nav, &a, &asize), NB_OK);
    size_t expect = 48;
    for (int i = 0; i < ntiles; ++i)
        expect += 4 + sizes[i];
    CHECK_INT(asize, expect);
    CHECK(memcmp(a, "NBMH", 4) == 0);
    nb_navmesh* loaded = NULL;
    CHECK_INT(nb_navmesh_load(ctx, a, asize, &loaded), NB_OK);
    CHECK_INT(nb_navmesh_tile_count(loaded), ntiles);
    const nb_navmesh_params* p0 = nb_navmesh_get_params(nav);
    const nb_navmesh_params* p1 = nb_navmesh_get_params(loaded);
    CHECK(memcmp(p0, p1, sizeof(*p0)) == 0);
    uint8_t* b;
    size_t bsize;
    CHECK_INT(nb_navmesh_save(ctx, loaded, &b, &bsize), NB_OK);
    CHECK(asize == bsize && memcmp(a, b, asize) == 0);
    /* the loaded navmesh has the same links, the off-mesh link included */
    uint32_t n0, n1;
    link_rec* r0 = snapshot(nav, &n0);
    link_rec* r1 = snapshot(loaded, &n1);
    CHECK(n0 == n1 && memcmp(r0, r1, n0 * sizeof(link_rec)) == 0);
    int offmesh_links = 0, border_links = 0;
    for (uint32_t i = 0; i < n1; ++i) {
        offmesh_links += r1[i].v[3] == NB_LINK_NO_EDGE;
        border_links += r1[i].v[4] != 0xff && r1[i].v[3] != NB_LINK_NO_EDGE;
    }
    CHECK(offmesh_links > 0);
    CHECK(border_links > 0);
    free(r0);
    free(r1);
    /* each tile's blob comes back unchanged */
    for (int i = 0; i < ntiles; ++i) {
        const uint8_t* d;
        size_t s;
        CHECK_INT(nb_navmesh_tile_data(loaded, tile_x[i], tile_z[i], &d, &s), NB_OK);
        CHECK(s == sizes[i] && memcmp(d, blobs[i], s) == 0);
    }

    /* the add order does not change the bytes */
    nb_navmesh* rev = make_navmesh(ctx, 1);
    uint8_t* c;
    size_t csize;
    CHECK_INT(nb_navmesh_save(ctx, rev, &c, &csize), NB_OK);
    CHECK(asize == csize && memcmp(a, c, asize) == 0);

    /* flags changed at run time survive the round trip */
    const nb_tile* t = nb_navmesh_tile_at(loaded, tile_x[0], tile_z[0]);
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, loaded, nb_navmesh_ref_of(loaded, t, 0), 0x40), NB_OK);
    uint8_t* d;
    size_t dsize;
    CHECK_INT(nb_navmesh_save(ctx, loaded, &d, &dsize), NB_OK);
    CHECK(memcmp(a, d, asize) != 0);
    nb_navmesh* again = NULL;
    CHECK_INT(nb_navmesh_load(ctx, d, dsize, &again), NB_OK);
    uint16_t flags = 0;
    t = nb_navmesh_tile_at(again, tile_x[0], tile_z[0]);
    CHECK_INT(nb_navmesh_poly(again, nb_navmesh_ref_of(again, t, 0), NULL, NULL, NULL, &flags, NULL), NB_OK);
    CHECK_INT(flags, 0x40);

    nb_navmesh_destroy(ctx, again);
    nb_bytes_free(ctx, d);
    nb_bytes_free(ctx, c);
    nb_navmesh_destroy(ctx, rev);
    nb_bytes_free(ctx, b);
    nb_navmesh_destroy(ctx, loaded);
    nb_bytes_free(ctx, a);
    nb_navmesh_destroy(ctx, nav);
}

static void test_empty_navmesh(void)
{
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    p.origin[0] = -3;
    p.tile_width = 5;
    p.tile_depth = 7;
    nb_navmesh* nav;
    CHECK_INT(nb_navmesh_create(ctx, &p, &nav), NB_OK);
    uint8_t* a;
    size_t asize;
    CHECK_INT(nb_navmesh_save(ctx, nav, &a, &asize), NB_OK);
    CHECK_INT(asize, 48);
    nb_navmesh* loaded;
    CHECK_INT(nb_navmesh_load(ctx, a, asize, &loaded), NB_OK);
    CHECK_INT(nb_navmesh_tile_count(loaded), 0);
    CHECK_NEAR(nb_navmesh_get_params(loaded)->origin[0], -3, 0);
    CHECK_NEAR(nb_navmesh_get_params(loaded)->tile_depth, 7, 0);
    CHECK_INT(nb_navmesh_get_params(loaded)->max_tiles, NB_MAX_TILES);
    nb_navmesh_destroy(ctx, loaded);
    nb_bytes_free(ctx, a);
    nb_navmesh_destroy(ctx, nav);
}

/* Damages a copy at offset with a 32-bit value, optionally fixing the header CRC. */
static void expect_load(const uint8_t* file, size_t size, size_t offset, uint32_t value, int fix, nb_status want,
                        const char* needle)
{
    uint8_t* d = (uint8_t*)malloc(size);
    memcpy(d, file, size);
    put_u32(d + offset, value);
    if (fix)
        fix_header_crc(d);
    nb_navmesh* nav = (nb_navmesh*)d;
    CHECK_STATUS(ctx, nb_navmesh_load(ctx, d, size, &nav), want, needle);
    CHECK(nav == NULL);
    free(d);
}

static void test_header_fields_are_checked(void)
{
    if (!ntiles)
        return;
    nb_navmesh* nav = make_navmesh(ctx, 0);
    uint8_t* f;
    size_t size;
    CHECK_INT(nb_navmesh_save(ctx, nav, &f, &size), NB_OK);
    expect_load(f, size, 0, 0x11111111u, 1, NB_ERR_CORRUPT, "magic");
    expect_load(f, size, 4, 7, 0, NB_ERR_VERSION, "version 7");
    expect_load(f, size, 8, 52, 1, NB_ERR_CORRUPT, "header_size");
    expect_load(f, size, 12, get_u32(f + 12) ^ 0x100u, 0, NB_ERR_CORRUPT, "header crc");
    expect_load(f, size, 44, get_u32(f + 44) + 1, 0, NB_ERR_CORRUPT, "header crc");
    expect_load(f, size, 16, 0x7fc00000u, 1, NB_ERR_CORRUPT, "origin");
    expect_load(f, size, 24, 0, 1, NB_ERR_CORRUPT, "tile_width");
    expect_load(f, size, 28, 0xff800000u, 1, NB_ERR_CORRUPT, "tile_depth");
    expect_load(f, size, 32, 0, 1, NB_ERR_CORRUPT, "max_tiles");
    expect_load(f, size, 32, NB_MAX_TILES + 1, 1, NB_ERR_CORRUPT, "max_tiles");
    expect_load(f, size, 36, 17, 1, NB_ERR_CORRUPT, "exceeds max_tiles");
    {
        uint8_t head[64];
        memcpy(head, f, 64);
        put_u32(head + 36, 2);
        fix_header_crc(head);
        nb_navmesh* none = NULL;
        CHECK_STATUS(ctx, nb_navmesh_load(ctx, head, 48 + 15, &none), NB_ERR_CORRUPT, "cannot fit");
    }
    expect_load(f, size, 36, (uint32_t)ntiles + 1, 1, NB_ERR_CORRUPT, "truncated at tile");
    expect_load(f, size, 36, (uint32_t)ntiles - 1, 1, NB_ERR_CORRUPT, "after the last tile");
    expect_load(f, size, 40, 1, 1, NB_ERR_CORRUPT, "reserved");
    /* tile records */
    expect_load(f, size, 48, (uint32_t)sizes[0] + 4, 0, NB_ERR_CORRUPT, "tile 0");
    expect_load(f, size, 48, 0xfffffff0u, 0, NB_ERR_CORRUPT, "claims");
    expect_load(f, size, 48 + 4 + 4, 3, 0, NB_ERR_VERSION, "tile 0: nb_navmesh_add_tile: tile format version 3");
    expect_load(f, size, 48 + 4 + 200, get_u32(f + 48 + 4 + 200) ^ 0x1000u, 0, NB_ERR_CORRUPT, "tile 0");
    /* a repeated tile */
    if (ntiles >= 2) {
        uint8_t* d = (uint8_t*)malloc(size);
        memcpy(d, f, size);
        const size_t second = 48 + 4 + sizes[0];
        /* overwrite the second record with a copy of the first when they have the same length; else shrink */
        uint8_t* dup = (uint8_t*)malloc(48 + 2 * (4 + sizes[0]));
        memcpy(dup, f, 48 + 4 + sizes[0]);
        memcpy(dup + 48 + 4 + sizes[0], f + 48, 4 + sizes[0]);
        put_u32(dup + 36, 2);
        fix_header_crc(dup);
        nb_navmesh* out = NULL;
        CHECK_STATUS(ctx, nb_navmesh_load(ctx, dup, 48 + 2 * (4 + sizes[0]), &out), NB_ERR_CORRUPT, "tile 1");
        CHECK(strstr(nb_context_message(ctx), "already occupies") != NULL);
        CHECK(out == NULL);
        (void)second;
        free(dup);
        free(d);
    }
    /* trailing bytes */
    uint8_t* longer = (uint8_t*)calloc(1, size + 4);
    memcpy(longer, f, size);
    nb_navmesh* out = NULL;
    CHECK_STATUS(ctx, nb_navmesh_load(ctx, longer, size + 4, &out), NB_ERR_CORRUPT, "after the last tile");
    free(longer);
    CHECK_STATUS(ctx, nb_navmesh_load(ctx, NULL, size, &out), NB_ERR_NULL_ARG, "data");
    CHECK_STATUS(ctx, nb_navmesh_load(ctx, f, size, NULL), NB_ERR_NULL_ARG, "out");
    CHECK_STATUS(ctx, nb_navmesh_save(ctx, NULL, &f, &size), NB_ERR_NULL_ARG, "nav");
    uint8_t* g;
    CHECK_STATUS(ctx, nb_navmesh_save(ctx, nav, &g, NULL), NB_ERR_NULL_ARG, "size");
    CHECK_STATUS(ctx, nb_navmesh_load(ctx, f, 3, &out), NB_ERR_CORRUPT, "truncated");
    CHECK_STATUS(ctx, nb_navmesh_load(ctx, f, 20, &out), NB_ERR_CORRUPT, "truncated");
    nb_bytes_free(ctx, f);
    nb_navmesh_destroy(ctx, nav);
}

/* 10,000 random single-byte changes and 10,000 random truncations: every one is rejected with CORRUPT or VERSION
 * (the checksums cover every byte), none crashes or leaks. */
static void test_random_damage(void)
{
    if (!ntiles)
        return;
    nb_navmesh* nav = make_navmesh(ctx, 0);
    uint8_t* f;
    size_t size;
    CHECK_INT(nb_navmesh_save(ctx, nav, &f, &size), NB_OK);
    nb_navmesh_destroy(ctx, nav);
    uint8_t* d = (uint8_t*)malloc(size);
    uint64_t rng = 0x2545f4914f6cdd1dull;
    int accepted = 0, wrong = 0, version = 0;
    for (int i = 0; i < 10000; ++i) {
        memcpy(d, f, size);
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        const size_t at = (size_t)(rng % size);
        d[at] ^= (uint8_t)(1u + (rng >> 40) % 255u);
        nb_navmesh* out = NULL;
        const nb_status st = nb_navmesh_load(ctx, d, size, &out);
        accepted += st == NB_OK;
        version += st == NB_ERR_VERSION;
        wrong += st != NB_OK && st != NB_ERR_CORRUPT && st != NB_ERR_VERSION;
        wrong += st != NB_OK && out != NULL;
        nb_navmesh_destroy(ctx, out);
    }
    CHECK_INT(accepted, 0);
    CHECK_INT(wrong, 0);
    CHECK(version > 0); /* flips in the version fields */
    int bad = 0;
    for (int i = 0; i < 10000; ++i) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        const size_t n = (size_t)(rng % size);
        nb_navmesh* out = NULL;
        const nb_status st = nb_navmesh_load(ctx, f, n, &out);
        bad += st != NB_ERR_CORRUPT || out != NULL;
    }
    CHECK_INT(bad, 0);
    free(d);
    nb_bytes_free(ctx, f);
}

/* Damage that keeps the checksums right (a hostile or buggy writer): the structural checks must reject it or the
 * navmesh must be safe to walk. 10,000 random byte changes with every CRC recomputed. */
static void test_random_damage_with_valid_checksums(void)
{
    if (!ntiles)
        return;
    nb_navmesh* nav = make_navmesh(ctx, 0);
    uint8_t* f;
    size_t size;
    CHECK_INT(nb_navmesh_save(ctx, nav, &f, &size), NB_OK);
    nb_navmesh_destroy(ctx, nav);
    uint8_t* d = (uint8_t*)malloc(size);
    uint64_t rng = 0x853c49e6748fea9bull;
    int accepted = 0, wrong = 0, bad_refs = 0;
    for (int i = 0; i < 10000; ++i) {
        memcpy(d, f, size);
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        const size_t at = (size_t)(rng % size);
        d[at] ^= (uint8_t)(1u + (rng >> 40) % 255u);
        /* recompute the checksum of the tile the byte fell in (when the records still line up) and the header's */
        size_t pos = 48;
        for (int t = 0; t < ntiles && pos + 4 <= size; ++t) {
            const uint32_t len = get_u32(d + pos);
            if (len > size - pos - 4)
                break;
            if (at >= pos + 4 && at < pos + 4 + len)
                nb_tile_update_crc(d + pos + 4, len);
            pos += 4 + len;
        }
        fix_header_crc(d);
        nb_navmesh* out = NULL;
        const nb_status st = nb_navmesh_load(ctx, d, size, &out);
        wrong += st != NB_OK && st != NB_ERR_CORRUPT && st != NB_ERR_VERSION;
        if (st == NB_OK) {
            ++accepted;
            /* walk every polygon and link */
            uint32_t count = 0;
            nb_navmesh_poly_refs(ctx, out, NULL, 0, &count);
            nb_poly_ref* refs = (nb_poly_ref*)malloc((count ? count : 1) * sizeof(nb_poly_ref));
            CHECK_INT(nb_navmesh_poly_refs(ctx, out, refs, count, &count), NB_OK);
            for (uint32_t r = 0; r < count; ++r) {
                float v[NB_MAX_VERTS_PER_POLY * 3];
                int32_t nv;
                bad_refs += nb_navmesh_poly(out, refs[r], v, &nv, NULL, NULL, NULL) != NB_OK;
                uint32_t p;
                const nb_tile* t = nb_navmesh_resolve(out, refs[r], &p);
                for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next)
                    bad_refs += nb_navmesh_resolve(out, t->links[li].ref, NULL) == NULL;
            }
            free(refs);
            nb_navmesh_destroy(ctx, out);
        }
    }
    CHECK_INT(wrong, 0);
    CHECK_INT(bad_refs, 0);
    CHECK(accepted > 0 && accepted < 10000);
    printf("  with valid checksums: %d of 10000 damaged files still well-formed\n", accepted);
    free(d);
    nb_bytes_free(ctx, f);
}

static void test_out_of_memory(void)
{
    if (!ntiles)
        return;
    nb_navmesh* nav = make_navmesh(ctx, 0);
    uint8_t* f;
    size_t size;
    CHECK_INT(nb_navmesh_save(ctx, nav, &f, &size), NB_OK);
    int failures = 0;
    for (long k = 2; k < 500; ++k) { /* allocation 1 is the context */
        nbt_alloc a = { .fail_at = k };
        nb_context_desc desc;
        memset(&desc, 0, sizeof(desc));
        nbt_alloc_hooks(&desc, &a);
        nb_context* c = nb_context_create(&desc);
        nb_navmesh* out = NULL;
        const nb_status st = nb_navmesh_load(c, f, size, &out);
        a.fail_at = 0;
        if (st == NB_OK) {
            uint8_t* g;
            size_t gsize;
            CHECK_INT(nb_navmesh_save(c, out, &g, &gsize), NB_OK);
            CHECK(gsize == size && memcmp(f, g, size) == 0);
            nb_bytes_free(c, g);
        } else {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            CHECK(out == NULL);
            CHECK(strstr(nb_context_message(c), "out of memory") != NULL);
        }
        nb_navmesh_destroy(c, out);
        CHECK_INT(a.live, 1);
        nb_context_destroy(c);
        if (st == NB_OK)
            break;
        ++failures;
    }
    CHECK(failures > ntiles * 2);
    /* save: both of its allocations */
    for (long k = 1; k <= 2; ++k) {
        nbt_alloc a = { 0 };
        nb_context_desc desc;
        memset(&desc, 0, sizeof(desc));
        nbt_alloc_hooks(&desc, &a);
        nb_context* c = nb_context_create(&desc);
        nb_navmesh* n2 = NULL;
        CHECK_INT(nb_navmesh_load(c, f, size, &n2), NB_OK);
        a.fail_at = a.calls + k;
        uint8_t* g = (uint8_t*)&a;
        size_t gsize = 1;
        CHECK_STATUS(c, nb_navmesh_save(c, n2, &g, &gsize), NB_ERR_OUT_OF_MEMORY, "nb_navmesh_save: out of memory");
        CHECK(g == NULL && gsize == 0);
        nb_navmesh_destroy(c, n2);
        CHECK_INT(a.live, 1);
        nb_context_destroy(c);
    }
    nb_bytes_free(ctx, f);
    nb_navmesh_destroy(ctx, nav);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    char path[512], err[512];
    have_dungeon = nb_obj_load(nbt_mesh_path("dungeon.obj", path, sizeof(path)), &dungeon, err, sizeof(err)) == 0;
    if (!have_dungeon) {
        fprintf(stderr, "  %s\n", err);
        CHECK(!"dungeon.obj missing");
    } else {
        bake_some_tiles();
        CHECK(ntiles >= 2);
    }
    RUN(test_round_trip_is_byte_identical);
    RUN(test_empty_navmesh);
    RUN(test_header_fields_are_checked);
    RUN(test_random_damage);
    RUN(test_random_damage_with_valid_checksums);
    RUN(test_out_of_memory);
    for (int i = 0; i < ntiles; ++i)
        nb_bytes_free(ctx, blobs[i]);
    if (have_dungeon)
        nb_obj_free(&dungeon);
    nb_context_destroy(ctx);
    return nbt_finish("test_serialize");
}
