/* nb_compact_encode / nb_compact_decode: the tile cache blob. Round trips on every tile of real levels, damage of
 * every kind, size against the raw field. */
#include "navbake.h"
#include "nbtest_level.h"
#include "world.h"

static nb_context* ctx;

/* Fields equal in everything the codec keeps: grid, config, bounds, cells, spans (floor, height, connections,
 * region 0) and areas. */
static int same_field(const nb_compact_heightfield* a, const nb_compact_heightfield* b)
{
    if (a->width != b->width || a->height != b->height || a->span_count != b->span_count ||
        a->walkable_height != b->walkable_height || a->walkable_climb != b->walkable_climb ||
        a->border_size != b->border_size || a->cell_size != b->cell_size || a->cell_height != b->cell_height ||
        memcmp(a->bmin, b->bmin, sizeof(a->bmin)) != 0 || memcmp(a->bmax, b->bmax, sizeof(a->bmax)) != 0)
        return 0;
    const size_t ncols = (size_t)a->width * (size_t)a->height;
    if (memcmp(a->cells, b->cells, ncols * sizeof(nb_compact_cell)) != 0)
        return 0;
    for (uint32_t i = 0; i < a->span_count; ++i) {
        const nb_compact_span *s = &a->spans[i], *t = &b->spans[i];
        if (s->y != t->y || s->h != t->h || s->con != t->con || s->reg != t->reg)
            return 0;
    }
    return memcmp(a->areas, b->areas, a->span_count) == 0 && b->dist == NULL && b->max_regions == 0;
}

/* The compact heightfield of tile (tx, tz) of a tiled bake, made directly by nb_bake over the whole level with the
 * tile's bounds and border (rasterization clips away what lies outside). */
static nb_compact_heightfield* tile_field(const nb_bake_input* level, const nb_config* cfg,
                                          const nb_navmesh_params* p, const float level_max[3], int32_t tx,
                                          int32_t tz, nb_bake_result* r)
{
    nb_config rc;
    nb_config_cells cells;
    nb_config_resolve(ctx, cfg, &rc, &cells);
    const float lo[3] = { p->origin[0] + (float)tx * p->tile_width, p->origin[1], p->origin[2] + (float)tz * p->tile_depth };
    const float hi[3] = { lo[0] + p->tile_width, level_max[1], lo[2] + p->tile_depth };
    nb_bake_input in = *level;
    in.bmin = lo;
    in.bmax = hi;
    in.border_size = cells.walkable_radius + 3;
    if (nb_bake(ctx, &in, cfg, NB_STAGE_AREAS, NB_KEEP_COMPACT, r) != NB_OK)
        return NULL;
    return r->compact;
}

static void level_max(const nb_bake_input* in, float out[3])
{
    memcpy(out, in->mesh.positions, 3 * sizeof(float));
    for (uint32_t i = 1; i < in->mesh.vertex_count; ++i)
        for (int k = 0; k < 3; ++k)
            out[k] = fmaxf(out[k], in->mesh.positions[i * 3 + k]);
}

/* Every tile of a level: encode -> decode gives the same field; the index's cache blob is the same bytes. Adds the
 * encoded and raw sizes. */
static void round_trip_level(const nb_bake_input* in, int32_t tile_size, double* enc_bytes, double* raw_bytes,
                             int* tiles_checked)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = tile_size;
    nb_navmesh_params p;
    int32_t ntx = 0, ntz = 0;
    CHECK_INT(nb_bake_grid(ctx, in, &cfg, &p, &ntx, &ntz), NB_OK);
    nb_grid_index* index = NULL;
    CHECK_INT(nb_grid_index_create(ctx, in, &cfg, &index), NB_OK);
    if (!index)
        return;
    float top[3];
    level_max(in, top);
    int mismatches = 0;
    for (int32_t tz = 0; tz < ntz; ++tz)
        for (int32_t tx = 0; tx < ntx; ++tx) {
            uint8_t *tile = NULL, *cache = NULL, *blob = NULL;
            size_t tile_size_b = 0, cache_size = 0, blob_size = 0;
            CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, tx, tz, &tile, &tile_size_b, &cache, &cache_size,
                                              NULL),
                      NB_OK);
            nb_bake_result r;
            memset(&r, 0, sizeof(r));
            nb_compact_heightfield* chf = cache ? tile_field(in, &cfg, &p, top, tx, tz, &r) : NULL;
            if (cache && !chf)
                CHECK(!"the tile bakes");
            if (chf) {
                CHECK_INT(nb_compact_encode(ctx, chf, tx, tz, &blob, &blob_size), NB_OK);
                nb_compact_heightfield* back = NULL;
                int32_t bx = -1, bz = -1;
                CHECK_INT(nb_compact_decode(ctx, blob, blob_size, &back, &bx, &bz), NB_OK);
                if (!back || !same_field(chf, back) || bx != tx || bz != tz)
                    ++mismatches;
                /* the index's cache is the same field, encoded the same way */
                if (!(blob_size == cache_size && memcmp(blob, cache, blob_size) == 0))
                    ++mismatches;
                *enc_bytes += (double)blob_size;
                *raw_bytes += 8.0 * chf->width * chf->height + 9.0 * chf->span_count;
                ++*tiles_checked;
                nb_compact_heightfield_destroy(ctx, back);
            }
            nb_bake_result_release(ctx, &r);
            nb_bytes_free(ctx, tile);
            nb_bytes_free(ctx, cache);
            nb_bytes_free(ctx, blob);
        }
    CHECK_INT(mismatches, 0);
    nb_grid_index_destroy(ctx, index);
}

static void test_round_trip_every_tile(void)
{
    static const char* levels[] = { "dungeon.obj", "nav_test.obj" };
    static const int32_t sizes[] = { 32, 64 };
    double enc = 0, raw = 0;
    int tiles = 0;
    for (int l = 0; l < 2; ++l) {
        nb_obj obj;
        if (nbt_load_level(levels[l], &obj) != 0) {
            CHECK(!"mesh missing");
            continue;
        }
        nb_bake_input in = nb_obj_bake_input(&obj);
        for (int s = 0; s < 2; ++s)
            round_trip_level(&in, sizes[s], &enc, &raw, &tiles);
        nb_obj_free(&obj);
    }
    nb_obj w;
    CHECK_INT(nb_world_generate(11, 20000, &w), 0);
    nb_bake_input in = nb_obj_bake_input(&w);
    round_trip_level(&in, 64, &enc, &raw, &tiles);
    nb_obj_free(&w);
    CHECK(tiles > 100);
    /* what caching encoded saves: the blobs against the in-memory fields (8 B a column, 9 a span) */
    fprintf(stderr, "  %d tiles: encoded %.0f bytes, raw %.0f bytes, ratio %.3f\n", tiles, enc, raw, enc / raw);
    CHECK(enc < 0.35 * raw);
}

/* A field with several storeys per column, unlinked layers and every area: the general case round-trips too. */
static void test_round_trip_hand_made_field(void)
{
    nb_heightfield* hf = NULL;
    const float bmin[3] = { 0, 0, 0 }, bmax[3] = { 6, 20, 6 };
    CHECK_INT(nb_heightfield_create(ctx, 20, 20, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    if (!hf)
        return;
    uint32_t seed = 12345;
    for (int z = 0; z < 20; ++z)
        for (int x = 0; x < 20; ++x) {
            const int storeys = (x * 7 + z * 3) % 5;
            for (int k = 0; k < storeys; ++k) {
                seed = seed * 1664525u + 1013904223u;
                const uint32_t base = (uint32_t)k * 20 + (seed >> 28);
                nb_heightfield_add_span(ctx, hf, x, z, base, base + 2 + ((seed >> 24) & 3), (uint8_t)((seed >> 8) % 64),
                                        1);
            }
        }
    /* one tall column of 70 storeys: layers beyond 62 cannot be linked */
    for (uint32_t k = 0; k < 70; ++k) {
        nb_heightfield_add_span(ctx, hf, 10, 10, k * 3, k * 3 + 1, NB_WALKABLE_AREA, 0);
        nb_heightfield_add_span(ctx, hf, 11, 10, k * 3, k * 3 + 1, NB_WALKABLE_AREA, 0);
    }
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 2, 1, hf, &chf), NB_OK);
    nb_heightfield_destroy(ctx, hf);
    if (!chf)
        return;
    chf->border_size = 3;
    uint8_t* blob = NULL;
    size_t size = 0;
    CHECK_INT(nb_compact_encode(ctx, chf, -3, 7, &blob, &size), NB_OK);
    nb_compact_heightfield* back = NULL;
    int32_t tx = 0, tz = 0;
    CHECK_INT(nb_compact_decode(ctx, blob, size, &back, &tx, &tz), NB_OK);
    CHECK(back && same_field(chf, back));
    CHECK_INT(tx, -3);
    CHECK_INT(tz, 7);
    /* the tall column: some layer above 62 exists, and is unlinked both ways as the bake leaves it */
    const nb_compact_cell c = back ? back->cells[10 + 10 * 20] : (nb_compact_cell){ 0, 0 };
    CHECK(c.count >= 64);
    nb_compact_heightfield_destroy(ctx, back);
    nb_bytes_free(ctx, blob);
    nb_compact_heightfield_destroy(ctx, chf);
}

/* A small real blob for the damage tests. */
static uint8_t* dungeon_blob(size_t* size)
{
    *size = 0;
    nb_obj obj;
    if (nbt_load_level("dungeon.obj", &obj) != 0) {
        CHECK(!"mesh missing");
        return NULL;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = 32;
    nb_grid_index* index = NULL;
    uint8_t *tile = NULL, *cache = NULL;
    size_t tile_size = 0;
    CHECK_INT(nb_grid_index_create(ctx, &in, &cfg, &index), NB_OK);
    int32_t ntx = 0, ntz = 0;
    nb_grid_index_grid(index, NULL, &ntx, &ntz);
    /* the tile of the grid's middle: plenty of spans */
    CHECK_INT(nb_grid_index_bake_tile(ctx, index, NULL, 0, ntx / 2, ntz / 2, &tile, &tile_size, &cache, size, NULL),
              NB_OK);
    CHECK(cache != NULL && *size > 200);
    nb_bytes_free(ctx, tile);
    nb_grid_index_destroy(ctx, index);
    nb_obj_free(&obj);
    return cache;
}

/* Decodes a copy of exactly `size` bytes in its own allocation, so ASan flags any read past the end. */
static nb_status decode_exact(const uint8_t* data, size_t size)
{
    uint8_t* copy = (uint8_t*)malloc(size ? size : 1);
    if (size)
        memcpy(copy, data, size);
    nb_compact_heightfield* chf = (nb_compact_heightfield*)1;
    const nb_status st = nb_compact_decode(ctx, copy, size, &chf, NULL, NULL);
    if (st != NB_OK && chf != NULL)
        CHECK(!"a failed decode leaves *out NULL");
    nb_compact_heightfield_destroy(ctx, st == NB_OK ? chf : NULL);
    free(copy);
    return st;
}

static uint32_t crc32_of(const uint8_t* p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) {
        c ^= p[i];
        for (int k = 0; k < 8; ++k)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return c ^ 0xffffffffu;
}

static void put_u32(uint8_t* p, uint32_t v)
{
    for (int k = 0; k < 4; ++k)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* Rewrites the trailing CRC after a deliberate change, to reach the checks behind it. */
static void fix_crc(uint8_t* blob, size_t size) { put_u32(blob + size - 4, crc32_of(blob, size - 4)); }

static void test_every_flip_and_truncation_is_caught(void)
{
    size_t size = 0;
    uint8_t* blob = dungeon_blob(&size);
    if (!blob)
        return;
    CHECK_INT(decode_exact(blob, size), NB_OK);
    CHECK_INT(crc32_of((const uint8_t*)"123456789", 9), 0xcbf43926u); /* the test's own CRC is the format's */
    CHECK_INT(crc32_of(blob, size - 4), (uint32_t)blob[size - 4] | (uint32_t)blob[size - 3] << 8 |
                                            (uint32_t)blob[size - 2] << 16 | (uint32_t)blob[size - 1] << 24);
    uint8_t* copy = (uint8_t*)malloc(size);
    int wrong = 0;
    for (size_t i = 0; i < size; ++i) {
        static const uint8_t flips[] = { 0x01, 0x80, 0xff };
        for (int f = 0; f < 3; ++f) {
            memcpy(copy, blob, size);
            copy[i] ^= flips[f];
            const nb_status st = decode_exact(copy, size);
            const nb_status want = i >= 4 && i < 8 ? NB_ERR_VERSION : NB_ERR_CORRUPT;
            if (st != want) {
                if (wrong++ < 5)
                    fprintf(stderr, "  flip 0x%02x at byte %zu: %s\n", flips[f], i, nb_status_name(st));
            }
        }
    }
    CHECK_INT(wrong, 0);
    int bad_trunc = 0;
    for (size_t n = 0; n < size; ++n)
        bad_trunc += decode_exact(blob, n) != NB_ERR_CORRUPT;
    CHECK_INT(bad_trunc, 0);
    /* one byte too many is as wrong as one too few */
    uint8_t* longer = (uint8_t*)calloc(size + 1, 1);
    memcpy(longer, blob, size);
    CHECK_INT(decode_exact(longer, size + 1), NB_ERR_CORRUPT);
    free(longer);

    /* another version: NB_ERR_VERSION, whatever the CRC says */
    memcpy(copy, blob, size);
    put_u32(copy + 4, 2);
    CHECK_STATUS(ctx, decode_exact(copy, size), NB_ERR_VERSION, "version 2");
    fix_crc(copy, size);
    CHECK_STATUS(ctx, decode_exact(copy, size), NB_ERR_VERSION, "version 2");
    free(copy);
    nb_bytes_free(ctx, blob);
}

/* Blobs with a valid CRC but wrong contents (a buggy writer): every structural check answers NB_ERR_CORRUPT; random
 * stream bytes never crash or read out of bounds. */
static void test_consistent_crc_wrong_contents(void)
{
    size_t size = 0;
    uint8_t* blob = dungeon_blob(&size);
    if (!blob)
        return;
    uint8_t* copy = (uint8_t*)malloc(size);
    static const struct {
        uint32_t offset, value;
        const char* needle;
    } cases[] = {
        { 8, 96, "header_size" },           { 96, 1, "reserved" },
        { 24, 0, "grid" },                  { 28, 1u << 24, "grid" },
        { 32, 1u << 29, "span_count" },     { 44, 5000, "border_size" },
        { 36, 70000, "walkable_height" },   { 48, 0x7fc00000u, "bounds" }, /* bmin.x NaN */
        { 72, 0, "cell_size" },             { 80, 0, "streams" },
        { 84, 0xfffffff0u, "streams" },
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
        memcpy(copy, blob, size);
        put_u32(copy + cases[k].offset, cases[k].value);
        fix_crc(copy, size);
        CHECK_STATUS(ctx, decode_exact(copy, size), NB_ERR_CORRUPT, cases[k].needle);
    }
    /* span_count one more or one less than the columns hold */
    for (int d = -1; d <= 1; d += 2) {
        memcpy(copy, blob, size);
        const uint32_t n = (uint32_t)copy[32] | (uint32_t)copy[33] << 8 | (uint32_t)copy[34] << 16 |
                           (uint32_t)copy[35] << 24;
        put_u32(copy + 32, n + (uint32_t)d);
        fix_crc(copy, size);
        CHECK_INT(decode_exact(copy, size), NB_ERR_CORRUPT);
    }
    /* random damage inside the streams, CRC made right again */
    uint32_t seed = 99;
    int bad = 0, decoded = 0;
    for (int k = 0; k < 3000; ++k) {
        memcpy(copy, blob, size);
        const int nflips = 1 + k % 3;
        for (int f = 0; f < nflips; ++f) {
            seed = seed * 1664525u + 1013904223u;
            const size_t at = 100 + (seed >> 8) % (size - 104);
            copy[at] ^= (uint8_t)(1 + (seed >> 3) % 255);
        }
        fix_crc(copy, size);
        const nb_status st = decode_exact(copy, size);
        bad += st != NB_OK && st != NB_ERR_CORRUPT;
        decoded += st == NB_OK;
    }
    CHECK_INT(bad, 0);
    CHECK(decoded < 3000); /* most damage shows */
    /* a tile blob is not a cache blob */
    uint8_t tile_magic[8] = { 'N', 'B', 'T', 'L', 1, 0, 0, 0 };
    CHECK_STATUS(ctx, decode_exact(tile_magic, 8), NB_ERR_CORRUPT, "tile blob");
    free(copy);
    nb_bytes_free(ctx, blob);
}

static void test_bad_arguments(void)
{
    uint8_t* data = (uint8_t*)1;
    size_t size = 7;
    CHECK_INT(nb_compact_encode(ctx, NULL, 0, 0, &data, &size), NB_ERR_NULL_ARG);
    CHECK(data == NULL && size == 0);
    nb_compact_heightfield* out = NULL;
    CHECK_INT(nb_compact_decode(ctx, NULL, 10, &out, NULL, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_compact_decode(ctx, (const uint8_t*)"x", 1, NULL, NULL, NULL), NB_ERR_NULL_ARG);

    nb_bake_result r;
    nb_compact_heightfield* chf = nbt_level_compact(ctx, "dungeon.obj", &r);
    if (!chf)
        return;
    CHECK_INT(nb_compact_encode(ctx, chf, 0, 0, NULL, &size), NB_ERR_NULL_ARG);
    /* columns out of order */
    const nb_compact_cell saved = chf->cells[5];
    chf->cells[5].index += 1;
    CHECK_STATUS(ctx, nb_compact_encode(ctx, chf, 0, 0, &data, &size), NB_ERR_INVALID_ARG, "column 5");
    chf->cells[5] = saved;
    /* an area id beyond 63 */
    const uint8_t a = chf->areas[3];
    chf->areas[3] = 64;
    CHECK_STATUS(ctx, nb_compact_encode(ctx, chf, 0, 0, &data, &size), NB_ERR_INVALID_ARG, "areas[3]");
    chf->areas[3] = a;
    /* a solo field (border 0) is fine too */
    CHECK_INT(nb_compact_encode(ctx, chf, 0, 0, &data, &size), NB_OK);
    nb_compact_heightfield* back = NULL;
    CHECK_INT(nb_compact_decode(ctx, data, size, &back, NULL, NULL), NB_OK);
    CHECK(back && same_field(chf, back));
    fprintf(stderr, "  dungeon solo field: %zu bytes encoded, %.0f raw\n", size,
            8.0 * chf->width * chf->height + 9.0 * chf->span_count);
    nb_compact_heightfield_destroy(ctx, back);
    nb_bytes_free(ctx, data);
    nb_bake_result_release(ctx, &r);
}

/* Every allocation of encode and decode fails in turn: clean failures, nothing leaks, then success. */
static void test_failing_allocator(void)
{
    nb_bake_result r;
    nb_compact_heightfield* chf = nbt_level_compact(ctx, "dungeon.obj", &r);
    if (!chf)
        return;
    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    nb_context* fctx = nb_context_create(&d);
    int ok = 0, failures = 0;
    for (long k = 1; k < 100 && !ok; ++k) {
        a.fail_at = a.calls + k;
        uint8_t* data = NULL;
        size_t size = 0;
        nb_compact_heightfield* back = NULL;
        nb_status st = nb_compact_encode(fctx, chf, 1, 2, &data, &size);
        if (st == NB_OK)
            st = nb_compact_decode(fctx, data, size, &back, NULL, NULL);
        a.fail_at = 0;
        if (st == NB_OK) {
            ok = 1;
            CHECK(same_field(chf, back));
        } else {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            CHECK(back == NULL);
            ++failures;
        }
        nb_compact_heightfield_destroy(fctx, back);
        nb_bytes_free(fctx, data);
        CHECK_INT(a.live, 1); /* the context alone */
    }
    CHECK(ok);
    CHECK(failures >= 5);
    nb_context_destroy(fctx);
    CHECK_INT(a.live, 0);
    nb_bake_result_release(ctx, &r);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_round_trip_every_tile);
    RUN(test_round_trip_hand_made_field);
    RUN(test_every_flip_and_truncation_is_caught);
    RUN(test_consistent_crc_wrong_contents);
    RUN(test_bad_arguments);
    RUN(test_failing_allocator);
    nb_context_destroy(ctx);
    return nbt_finish("test_chf_codec");
}
