/* Saving and loading a whole navmesh: a checksummed header, then each tile blob with its length (layout in
 * docs/FORMAT.md). Tiles go out sorted by (z, x) so a navmesh saves to the same bytes whatever order its tiles
 * were added in; loading re-adds them, which rebuilds every link. */
#include "navmesh_internal.h"

#include <math.h>
#include <stdlib.h>

enum {
    F_MAGIC = 0,
    F_VERSION = 4,
    F_HEADER_SIZE = 8,
    F_ORIGIN = 12,
    F_TILE_WIDTH = 24,
    F_TILE_DEPTH = 28,
    F_MAX_TILES = 32,
    F_TILE_COUNT = 36,
    F_RESERVED = 40,
    F_CRC = 44,
    FILE_HEADER_SIZE = 48
};

static uint32_t rd_u32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static float rd_f32(const uint8_t* p)
{
    const uint32_t u = rd_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static void wr_u32(uint8_t* p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static void wr_f32(uint8_t* p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    wr_u32(p, u);
}

typedef struct tile_order {
    int32_t x, z;
    uint32_t slot;
} tile_order;

static int cmp_tile_order(const void* pa, const void* pb)
{
    const tile_order* a = (const tile_order*)pa;
    const tile_order* b = (const tile_order*)pb;
    if (a->z != b->z)
        return a->z < b->z ? -1 : 1;
    return (a->x > b->x) - (a->x < b->x); /* positions are unique: no further tie */
}

nb_status nb_navmesh_save(nb_context* ctx, const nb_navmesh* nav, uint8_t** data, size_t* size)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_navmesh_save: ctx is NULL");
    static const char* fn = "nb_navmesh_save";
    if (!nav || !data || !size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !nav ? "nav" : !data ? "data" : "size");
    *data = NULL;
    *size = 0;
    nb_status st = NB_OK;
    tile_order* order = NULL;
    uint8_t* out = NULL;

    order = (tile_order*)nb_alloc(ctx, (size_t)(nav->tile_count ? nav->tile_count : 1) * sizeof(tile_order));
    if (!order) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'order' (%u)", fn, nav->tile_count);
        goto cleanup;
    }
    uint32_t n = 0;
    uint64_t total = FILE_HEADER_SIZE;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        order[n].x = t->v.tile_x;
        order[n].z = t->v.tile_z;
        order[n].slot = s;
        ++n;
        total += 4 + (uint64_t)t->size;
    }
    if (total > (uint64_t)SIZE_MAX) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: the file would take %llu bytes", fn, (unsigned long long)total);
        goto cleanup;
    }
    nb_sort(order, n, sizeof(tile_order), cmp_tile_order);
    out = (uint8_t*)nb_alloc(ctx, (size_t)total);
    if (!out) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'data' (%llu)", fn, (unsigned long long)total);
        goto cleanup;
    }

    wr_u32(out + F_MAGIC, NB_NAVMESH_MAGIC);
    wr_u32(out + F_VERSION, NB_NAVMESH_VERSION);
    wr_u32(out + F_HEADER_SIZE, FILE_HEADER_SIZE);
    for (int k = 0; k < 3; ++k)
        wr_f32(out + F_ORIGIN + 4 * k, nav->params.origin[k]);
    wr_f32(out + F_TILE_WIDTH, nav->params.tile_width);
    wr_f32(out + F_TILE_DEPTH, nav->params.tile_depth);
    wr_u32(out + F_MAX_TILES, nav->params.max_tiles);
    wr_u32(out + F_TILE_COUNT, n);
    wr_u32(out + F_RESERVED, 0);
    wr_u32(out + F_CRC, nb_crc32(out, F_CRC));
    size_t at = FILE_HEADER_SIZE;
    for (uint32_t i = 0; i < n; ++i) {
        const nb_tile* t = &nav->tiles[order[i].slot];
        wr_u32(out + at, (uint32_t)t->size);
        memcpy(out + at + 4, t->data, t->size);
        at += 4 + t->size;
    }
    *data = out;
    *size = (size_t)total;
    out = NULL;

cleanup:
    nb_free(ctx, order);
    nb_free(ctx, out);
    return st;
}

/* The file header (the first min(size, FILE_HEADER_SIZE) bytes at data, all it reads) of a file of size bytes:
 * checked, its params and tile count given. */
static nb_status read_header(nb_context* ctx, const char* fn, const uint8_t* data, size_t size,
                             nb_navmesh_params* out_params, uint32_t* out_count)
{
    if (size < 8)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: truncated: %zu bytes, the header has %d", fn, size, FILE_HEADER_SIZE);
    if (rd_u32(data + F_MAGIC) != NB_NAVMESH_MAGIC)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: bad magic 0x%08x (expected 0x%08x, \"NBMH\")%s", fn,
                       rd_u32(data + F_MAGIC), NB_NAVMESH_MAGIC,
                       rd_u32(data + F_MAGIC) == 0x4e424d48u ? ": byte-swapped, written big-endian" : "");
    if (rd_u32(data + F_VERSION) != NB_NAVMESH_VERSION)
        return nb_fail(ctx, NB_ERR_VERSION, "%s: navmesh format version %u, this library reads version %u", fn,
                       rd_u32(data + F_VERSION), NB_NAVMESH_VERSION);
    if (size < FILE_HEADER_SIZE)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: truncated: %zu bytes, the header has %d", fn, size, FILE_HEADER_SIZE);
    if (rd_u32(data + F_HEADER_SIZE) != FILE_HEADER_SIZE)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: header_size is %u, version %u has %d", fn,
                       rd_u32(data + F_HEADER_SIZE), NB_NAVMESH_VERSION, FILE_HEADER_SIZE);
    const uint32_t crc = nb_crc32(data, F_CRC);
    if (rd_u32(data + F_CRC) != crc)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: header crc mismatch (stored 0x%08x, computed 0x%08x)", fn,
                       rd_u32(data + F_CRC), crc);
    if (rd_u32(data + F_RESERVED) != 0)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: reserved header field is %u, must be 0", fn, rd_u32(data + F_RESERVED));
    nb_navmesh_params params;
    memset(&params, 0, sizeof(params));
    for (int k = 0; k < 3; ++k)
        params.origin[k] = rd_f32(data + F_ORIGIN + 4 * k);
    params.tile_width = rd_f32(data + F_TILE_WIDTH);
    params.tile_depth = rd_f32(data + F_TILE_DEPTH);
    params.max_tiles = rd_u32(data + F_MAX_TILES);
    const uint32_t count = rd_u32(data + F_TILE_COUNT);
    if (!isfinite(params.origin[0]) || !isfinite(params.origin[1]) || !isfinite(params.origin[2]))
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: origin is not finite", fn);
    if (!isfinite(params.tile_width) || !isfinite(params.tile_depth) || !(params.tile_width > 0.0f) ||
        !(params.tile_depth > 0.0f))
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: tile_width %g / tile_depth %g must be finite and > 0", fn,
                       params.tile_width, params.tile_depth);
    for (int k = 0; k < 3; ++k)
        if (!(fabsf(params.origin[k]) <= NB_MAX_COORD))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: origin.%c (%g) is beyond %g", fn, "xyz"[k], params.origin[k],
                           NB_MAX_COORD);
    if (!(params.tile_width <= NB_MAX_COORD) || !(params.tile_depth <= NB_MAX_COORD))
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: tile_width %g / tile_depth %g are beyond %g", fn, params.tile_width,
                       params.tile_depth, NB_MAX_COORD);
    if (params.max_tiles == 0 || params.max_tiles > NB_MAX_TILES)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: max_tiles is %u (1..%u)", fn, params.max_tiles, NB_MAX_TILES);
    if (count > params.max_tiles)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: tile_count %u exceeds max_tiles %u", fn, count, params.max_tiles);
    /* Every tile takes at least its length and a blob header: reject impossible counts before allocating. */
    if ((uint64_t)count * 8 > (uint64_t)(size - FILE_HEADER_SIZE))
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: tile_count %u cannot fit in %zu bytes (truncated)", fn, count, size);

    *out_params = params;
    *out_count = count;
    return NB_OK;
}

NB_COLD nb_status nb_navmesh_check_header(nb_context* ctx, const uint8_t* header, size_t size)
{
    if (!header)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_navmesh_load: data is NULL");
    nb_navmesh_params params;
    uint32_t count = 0;
    return read_header(ctx, "nb_navmesh_load", header, size, &params, &count);
}

nb_status nb_navmesh_load(nb_context* ctx, const uint8_t* data, size_t size, nb_navmesh** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_navmesh_load: ctx is NULL");
    static const char* fn = "nb_navmesh_load";
    if (!data || !out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !data ? "data" : "out");
    *out = NULL;
    nb_navmesh_params params;
    uint32_t count = 0;
    const nb_status hs = read_header(ctx, fn, data, size, &params, &count);
    if (hs != NB_OK)
        return hs;

    nb_navmesh* nav = NULL;
    nb_status st = nb_navmesh_create(ctx, &params, &nav);
    if (st != NB_OK)
        return st;

    /* ---- tiles: length-prefixed blobs, added (and so validated and linked) one by one ---- */
    size_t at = FILE_HEADER_SIZE;
    for (uint32_t i = 0; i < count; ++i) {
        if (size - at < 4) {
            st = nb_fail(ctx, NB_ERR_CORRUPT, "%s: truncated at tile %u of %u (offset %zu)", fn, i, count, at);
            goto cleanup;
        }
        const uint32_t len = rd_u32(data + at);
        at += 4;
        if ((uint64_t)len > (uint64_t)(size - at)) {
            st = nb_fail(ctx, NB_ERR_CORRUPT, "%s: tile %u claims %u bytes, %zu remain (truncated)", fn, i, len,
                         size - at);
            goto cleanup;
        }
        st = nb_navmesh_add_tile(ctx, nav, data + at, len);
        if (st != NB_OK) {
            char why[NB_MESSAGE_MAX];
            nb_format(why, sizeof(why), "%s", nb_context_message(ctx));
            if (st == NB_ERR_ALREADY_EXISTS || st == NB_ERR_TOO_LARGE || st == NB_ERR_INVALID_ARG)
                st = NB_ERR_CORRUPT; /* a well-formed file never repeats a position, overfills or mixes grids */
            st = nb_fail(ctx, st, "%s: tile %u: %s", fn, i, why);
            goto cleanup;
        }
        at += len;
    }
    if (at != size) {
        st = nb_fail(ctx, NB_ERR_CORRUPT, "%s: %zu bytes after the last tile", fn, size - at);
        goto cleanup;
    }
    *out = nav;
    nav = NULL;

cleanup:
    nb_navmesh_destroy(ctx, nav);
    return st;
}
