/* The tile cache blob: a compact heightfield (after erosion and areas) packed for keeping many tiles in memory or
 * sending them between workers. Layout and checks: docs/FORMAT.md, "Tile cache blob". */
#include "navmesh_internal.h"

#include <math.h>

#define CC_MAGIC 0x4343424eu /* "NBCC" read as a little-endian uint32 */
#define CC_VERSION 1u
#define CC_HEADER_SIZE 100u
#define CC_MAX_CELLS (1u << 28) /* nb_bake's grid limit; also bounds what a forged header can make us allocate */
#define CC_MAX_SPANS (1u << 28)
#define CC_MAX_BORDER 1024 /* nb_bake's border limit */
#define CC_MAX_LAYER (NB_NOT_CONNECTED - 1)

/* header fields */
enum {
    F_MAGIC = 0,
    F_VERSION = 4,
    F_HEADER_SIZE = 8,
    F_TOTAL_SIZE = 12,
    F_TILE_X = 16,
    F_TILE_Z = 20,
    F_WIDTH = 24,
    F_HEIGHT = 28,
    F_SPAN_COUNT = 32,
    F_WALKABLE_HEIGHT = 36,
    F_WALKABLE_CLIMB = 40,
    F_BORDER = 44,
    F_BMIN = 48,
    F_BMAX = 60,
    F_CELL_SIZE = 72,
    F_CELL_HEIGHT = 76,
    F_STREAMS = 80, /* 4 x u32: byte sizes of the counts, floors, heights and areas streams */
    F_RESERVED = 96
};

enum { S_COUNTS, S_FLOORS, S_HEIGHTS, S_AREAS, S_COUNT };
static const char* const stream_names[S_COUNT] = { "counts", "floors", "heights", "areas" };

static inline void wr_u32(uint8_t* p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t rd_u32(const uint8_t* p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline void wr_f32(uint8_t* p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    wr_u32(p, u);
}
static inline float rd_f32(const uint8_t* p)
{
    const uint32_t u = rd_u32(p);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

static inline uint32_t zigzag(int32_t v) { return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31); }
static inline int32_t unzigzag(uint32_t u) { return (int32_t)(u >> 1) ^ -(int32_t)(u & 1); }

/* ---- the neighbour each span's floor and height are predicted from ---- */

/* Layer k of the column to the left (-x), else of the column before (-z), as a span index; -1 when neither column
 * has that many spans. Encoder and decoder call it on the columns already coded. */
static inline int64_t predictor(const nb_compact_cell* cells, int32_t w, int32_t x, int32_t z, uint32_t k)
{
    if (x > 0 && cells[x - 1 + z * w].count > k)
        return (int64_t)cells[x - 1 + z * w].index + k;
    if (z > 0 && cells[x + (z - 1) * w].count > k)
        return (int64_t)cells[x + (z - 1) * w].index + k;
    return -1;
}

/* ---- run-length coded varint streams ----
 * A stream is a sequence of tokens. Token = varint t: run = (t >> 1) + 1 values; t & 1 = a repeat run (one varint
 * value follows, repeated run times), else a literal run (run varint values follow). Varints are LEB128 (7 bits a
 * byte, low first, at most 5 bytes for a u32). */

static size_t put_varint(uint8_t* out, size_t pos, uint32_t v)
{
    while (v >= 0x80) {
        if (out)
            out[pos] = (uint8_t)(v | 0x80);
        ++pos;
        v >>= 7;
    }
    if (out)
        out[pos] = (uint8_t)v;
    return pos + 1;
}

/* Codes vals[0 .. n) at out + pos (out NULL: only counts); returns the position after. Runs of 3 or more equal
 * values become repeat tokens (a run of 2 costs the same either way). */
static size_t put_stream(uint8_t* out, size_t pos, const uint32_t* vals, uint32_t n)
{
    uint32_t i = 0, lit = 0; /* literal run pending: vals[lit .. i) */
    while (i < n) {
        uint32_t j = i + 1;
        while (j < n && vals[j] == vals[i])
            ++j;
        if (j - i >= 3) {
            if (lit < i) {
                pos = put_varint(out, pos, (i - lit - 1) << 1);
                for (uint32_t k = lit; k < i; ++k)
                    pos = put_varint(out, pos, vals[k]);
            }
            pos = put_varint(out, pos, ((j - i - 1) << 1) | 1u);
            pos = put_varint(out, pos, vals[i]);
            lit = j;
        }
        i = j;
    }
    if (lit < n) {
        pos = put_varint(out, pos, (n - lit - 1) << 1);
        for (uint32_t k = lit; k < n; ++k)
            pos = put_varint(out, pos, vals[k]);
    }
    return pos;
}

typedef struct stream_reader {
    const uint8_t* p;
    const uint8_t* end;
    uint32_t run;    /* values left in the current token */
    uint32_t repeat; /* 1: the current token repeats `value` */
    uint32_t value;
} stream_reader;

static inline int get_varint(stream_reader* r, uint32_t* v)
{
    uint32_t out = 0;
    for (int shift = 0; shift < 35; shift += 7) {
        if (r->p >= r->end)
            return 0;
        const uint32_t b = *r->p++;
        if (shift == 28 && b > 0x0f)
            return 0; /* beyond 32 bits (or a continuation at the 5th byte) */
        out |= (b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = out;
            return 1;
        }
    }
    return 0;
}

/* Starts the next token; 0 when the stream is damaged or exhausted. limit: values left to read in this stream (a
 * token may not claim more). */
static int next_token(stream_reader* r, uint32_t limit)
{
    uint32_t t;
    if (!get_varint(r, &t))
        return 0;
    const uint32_t run = (t >> 1) + 1;
    if (run > limit || run == 0)
        return 0;
    r->run = run;
    r->repeat = t & 1;
    return !r->repeat || get_varint(r, &r->value);
}

/* The next value (see next_token for limit). */
static inline int get_value(stream_reader* r, uint32_t limit, uint32_t* v)
{
    if (r->run == 0 && !next_token(r, limit))
        return 0;
    r->run--;
    if (r->repeat) {
        *v = r->value;
        return 1;
    }
    if (r->p < r->end && *r->p < 0x80) { /* most literals are one byte */
        *v = *r->p++;
        return 1;
    }
    return get_varint(r, v);
}

/* ================================================================================================ */
/* Encode                                                                                           */
/* ================================================================================================ */

nb_status nb_compact_encode(nb_context* ctx, const nb_compact_heightfield* chf, int32_t tile_x, int32_t tile_z,
                            uint8_t** data, size_t* size)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_compact_encode: ctx is NULL");
    static const char* fn = "nb_compact_encode";
    if (!data || !size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !data ? "data" : "size");
    *data = NULL;
    *size = 0;
    if (!chf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: chf is NULL", fn);
    const int32_t w = chf->width, h = chf->height;
    if (w < 1 || h < 1 || (uint64_t)w * (uint64_t)h > CC_MAX_CELLS)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: a %d x %d grid is outside 1 .. 2^28 columns", fn, w, h);
    if (chf->span_count > CC_MAX_SPANS)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: %u spans exceed the format's 2^28", fn, chf->span_count);
    if ((!chf->cells) || (chf->span_count && (!chf->spans || !chf->areas)))
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: chf->%s is NULL", fn, !chf->cells ? "cells" : "spans");
    if (chf->walkable_height < 0 || chf->walkable_height > 0xffff || chf->walkable_climb < 0 ||
        chf->walkable_climb > 0xffff || chf->border_size < 0 || chf->border_size > CC_MAX_BORDER)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: walkable_height %d, walkable_climb %d or border_size %d out of range",
                       fn, chf->walkable_height, chf->walkable_climb, chf->border_size);
    const size_t ncols = (size_t)w * (size_t)h;
    const uint32_t nspans = chf->span_count;
    /* Columns must hold consecutive spans in column order (as nb_compact_heightfield_build lays them out):
     * decode rebuilds the index from the counts alone. */
    uint32_t expect = 0;
    for (size_t c = 0; c < ncols; ++c) {
        if (chf->cells[c].index != expect || chf->cells[c].count > nspans - expect)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: column %zu does not continue the span order (index %u, expected %u)",
                           fn, c, chf->cells[c].index, expect);
        expect += chf->cells[c].count;
    }
    if (expect != nspans)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: the columns hold %u spans, span_count is %u", fn, expect, nspans);
    for (uint32_t i = 0; i < nspans; ++i)
        if (chf->areas[i] > 63)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: areas[%u] is %u; area ids are 0..63", fn, i,
                           (unsigned)chf->areas[i]);

    nb_status st = NB_OK;
    uint8_t* out = NULL;
    uint32_t* vals = (uint32_t*)nb_alloc(ctx, (ncols + 3 * (size_t)nspans) * sizeof(uint32_t));
    if (!vals)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'values' (%zu)", fn, ncols + 3 * (size_t)nspans);
    uint32_t* counts = vals;
    uint32_t* floors = counts + ncols;
    uint32_t* heights = floors + nspans;
    uint32_t* areas = heights + nspans;
    for (int32_t z = 0; z < h; ++z)
        for (int32_t x = 0; x < w; ++x) {
            const nb_compact_cell c = chf->cells[x + z * w];
            counts[x + z * w] = c.count;
            for (uint32_t k = 0; k < c.count; ++k) {
                const nb_compact_span* s = &chf->spans[c.index + k];
                const int64_t p = predictor(chf->cells, w, x, z, k);
                /* No neighbour: the span below (floors rise up a column), and the open sky for the height. */
                const int32_t py = p >= 0 ? chf->spans[p].y : (k > 0 ? chf->spans[c.index + k - 1].y : 0);
                const int32_t ph = p >= 0 ? (int32_t)chf->spans[p].h : 255;
                floors[c.index + k] = zigzag((int32_t)s->y - py);
                heights[c.index + k] = zigzag((int32_t)s->h - ph);
            }
        }
    for (uint32_t i = 0; i < nspans; ++i)
        areas[i] = chf->areas[i];

    const uint32_t* streams[S_COUNT] = { counts, floors, heights, areas };
    const uint32_t lens[S_COUNT] = { (uint32_t)ncols, nspans, nspans, nspans };
    size_t bytes[S_COUNT];
    size_t total = CC_HEADER_SIZE + 4;
    for (int s = 0; s < S_COUNT; ++s) {
        bytes[s] = put_stream(NULL, 0, streams[s], lens[s]);
        total += bytes[s];
    }
    if (total > 0xffffffffu) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: the blob would be %zu bytes, above 4 GiB", fn, total);
        goto cleanup;
    }
    out = (uint8_t*)nb_alloc(ctx, total);
    if (!out) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'blob' (%zu)", fn, total);
        goto cleanup;
    }
    wr_u32(out + F_MAGIC, CC_MAGIC);
    wr_u32(out + F_VERSION, CC_VERSION);
    wr_u32(out + F_HEADER_SIZE, CC_HEADER_SIZE);
    wr_u32(out + F_TOTAL_SIZE, (uint32_t)total);
    wr_u32(out + F_TILE_X, (uint32_t)tile_x);
    wr_u32(out + F_TILE_Z, (uint32_t)tile_z);
    wr_u32(out + F_WIDTH, (uint32_t)w);
    wr_u32(out + F_HEIGHT, (uint32_t)h);
    wr_u32(out + F_SPAN_COUNT, nspans);
    wr_u32(out + F_WALKABLE_HEIGHT, (uint32_t)chf->walkable_height);
    wr_u32(out + F_WALKABLE_CLIMB, (uint32_t)chf->walkable_climb);
    wr_u32(out + F_BORDER, (uint32_t)chf->border_size);
    for (int k = 0; k < 3; ++k) {
        wr_f32(out + F_BMIN + 4 * k, chf->bmin[k]);
        wr_f32(out + F_BMAX + 4 * k, chf->bmax[k]);
    }
    wr_f32(out + F_CELL_SIZE, chf->cell_size);
    wr_f32(out + F_CELL_HEIGHT, chf->cell_height);
    for (int s = 0; s < S_COUNT; ++s)
        wr_u32(out + F_STREAMS + 4 * s, (uint32_t)bytes[s]);
    wr_u32(out + F_RESERVED, 0);
    size_t pos = CC_HEADER_SIZE;
    for (int s = 0; s < S_COUNT; ++s)
        pos = put_stream(out, pos, streams[s], lens[s]);
    wr_u32(out + pos, nb_crc32(out, pos));
    *data = out;
    *size = total;
    out = NULL;

cleanup:
    nb_free(ctx, out);
    nb_free(ctx, vals);
    return st;
}

/* ================================================================================================ */
/* Decode                                                                                           */
/* ================================================================================================ */

#define CORRUPT_(...) nb_fail(ctx, NB_ERR_CORRUPT, __VA_ARGS__)

/* Links each span to the first span of each neighbour column whose floor is within walkable_climb and whose shared
 * open space fits walkable_height: the rule of nb_compact_heightfield_build, so decoded links are the baked ones. */
static void link_spans(nb_compact_heightfield* chf)
{
    const int32_t w = chf->width, h = chf->height;
    const int wh = chf->walkable_height, climb = chf->walkable_climb;
    for (int32_t z = 0; z < h; ++z)
        for (int32_t x = 0; x < w; ++x) {
            const nb_compact_cell c = chf->cells[x + z * w];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                nb_compact_span* s = &chf->spans[i];
                const int sy = s->y, stop = s->y + (int)s->h;
                uint32_t con = 0xffffff;
                for (int dir = 0; dir < 4; ++dir) {
                    const int32_t nx = x + nb_dir_offset_x(dir), nz = z + nb_dir_offset_z(dir);
                    if (nx < 0 || nz < 0 || nx >= w || nz >= h)
                        continue;
                    const nb_compact_cell nc = chf->cells[nx + nz * w];
                    /* beyond CC_MAX_LAYER a layer cannot be addressed: the bake leaves such spans unlinked */
                    const uint32_t n = nc.count < CC_MAX_LAYER + 1 ? nc.count : CC_MAX_LAYER + 1;
                    for (uint32_t k = 0; k < n; ++k) {
                        const nb_compact_span* ns = &chf->spans[nc.index + k];
                        const int bot = nb_maxi(sy, ns->y);
                        const int top = nb_mini(stop, ns->y + (int)ns->h);
                        if (top - bot >= wh && nb_absi((int)ns->y - sy) <= climb) {
                            con = (con & ~(0x3fu << (dir * 6))) | (k << (dir * 6));
                            break;
                        }
                    }
                }
                s->con = con;
            }
        }
}

nb_status nb_compact_decode(nb_context* ctx, const uint8_t* data, size_t size, nb_compact_heightfield** out,
                            int32_t* tile_x, int32_t* tile_z)
{
    static const char* fn = "nb_compact_decode";
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (!data)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: data is NULL", fn);
    if (size < 8)
        return CORRUPT_("%s: %zu bytes are too few for a tile cache blob", fn, size);
    const uint32_t magic = rd_u32(data + F_MAGIC);
    if (magic != CC_MAGIC) {
        if (magic == NB_TILE_MAGIC)
            return CORRUPT_("%s: this is a tile blob (\"NBTL\"), not a tile cache blob", fn);
        return CORRUPT_("%s: bad magic 0x%08x (expected 0x%08x, \"NBCC\")", fn, magic, CC_MAGIC);
    }
    const uint32_t version = rd_u32(data + F_VERSION);
    if (version != CC_VERSION)
        return nb_fail(ctx, NB_ERR_VERSION, "%s: version %u, this build reads version %u", fn, version, CC_VERSION);
    if (size < CC_HEADER_SIZE + 4)
        return CORRUPT_("%s: %zu bytes are too few for the %u-byte header and the CRC", fn, size, CC_HEADER_SIZE);
    if (rd_u32(data + F_HEADER_SIZE) != CC_HEADER_SIZE)
        return CORRUPT_("%s: header_size %u, expected %u", fn, rd_u32(data + F_HEADER_SIZE), CC_HEADER_SIZE);
    if (rd_u32(data + F_TOTAL_SIZE) != size)
        return CORRUPT_("%s: total_size %u but %zu bytes were given (truncated?)", fn, rd_u32(data + F_TOTAL_SIZE),
                        size);
    const uint32_t crc = nb_crc32(data, size - 4);
    if (rd_u32(data + size - 4) != crc)
        return CORRUPT_("%s: crc mismatch (stored 0x%08x, computed 0x%08x)", fn, rd_u32(data + size - 4), crc);

    /* The CRC matched: what follows catches blobs written wrong, not bytes damaged on the way. */
    if (rd_u32(data + F_RESERVED) != 0)
        return CORRUPT_("%s: reserved field is %u, expected 0", fn, rd_u32(data + F_RESERVED));
    const uint32_t w = rd_u32(data + F_WIDTH), h = rd_u32(data + F_HEIGHT), nspans = rd_u32(data + F_SPAN_COUNT);
    if (w < 1 || h < 1 || w > CC_MAX_CELLS || h > CC_MAX_CELLS || (uint64_t)w * h > CC_MAX_CELLS)
        return CORRUPT_("%s: a %u x %u grid is outside 1 .. 2^28 columns", fn, w, h);
    if (nspans > CC_MAX_SPANS)
        return CORRUPT_("%s: span_count %u exceeds 2^28", fn, nspans);
    const uint32_t wh = rd_u32(data + F_WALKABLE_HEIGHT), climb = rd_u32(data + F_WALKABLE_CLIMB);
    const uint32_t border = rd_u32(data + F_BORDER);
    if (wh > 0xffff || climb > 0xffff)
        return CORRUPT_("%s: walkable_height %u or walkable_climb %u above 65535", fn, wh, climb);
    if (border > CC_MAX_BORDER || 2 * border > w || 2 * border > h)
        return CORRUPT_("%s: border_size %u does not fit the %u x %u grid", fn, border, w, h);
    float bmin[3], bmax[3];
    for (int k = 0; k < 3; ++k) {
        bmin[k] = rd_f32(data + F_BMIN + 4 * k);
        bmax[k] = rd_f32(data + F_BMAX + 4 * k);
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]) || bmin[k] > bmax[k])
            return CORRUPT_("%s: bounds on %c are not finite and ordered (%g, %g)", fn, "xyz"[k], bmin[k], bmax[k]);
    }
    const float cs = rd_f32(data + F_CELL_SIZE), ch = rd_f32(data + F_CELL_HEIGHT);
    if (!isfinite(cs) || !isfinite(ch) || !(cs > 0) || !(ch > 0))
        return CORRUPT_("%s: cell_size %g and cell_height %g must be finite and > 0", fn, cs, ch);
    uint64_t sum = CC_HEADER_SIZE + 4;
    uint32_t bytes[S_COUNT];
    for (int s = 0; s < S_COUNT; ++s) {
        bytes[s] = rd_u32(data + F_STREAMS + 4 * s);
        sum += bytes[s];
    }
    if (sum != size)
        return CORRUPT_("%s: the streams (%u + %u + %u + %u bytes) do not fill the blob (%zu bytes)", fn, bytes[0],
                        bytes[1], bytes[2], bytes[3], size);

    nb_status st = NB_OK;
    const size_t ncols = (size_t)w * h;
    nb_compact_heightfield* chf = (nb_compact_heightfield*)nb_calloc(ctx, 1, sizeof(*chf));
    if (!chf)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'chf'", fn);
    chf->width = (int32_t)w;
    chf->height = (int32_t)h;
    chf->span_count = nspans;
    chf->walkable_height = (int32_t)wh;
    chf->walkable_climb = (int32_t)climb;
    chf->border_size = (int32_t)border;
    memcpy(chf->bmin, bmin, sizeof(bmin));
    memcpy(chf->bmax, bmax, sizeof(bmax));
    chf->cell_size = cs;
    chf->cell_height = ch;
    chf->cells = (nb_compact_cell*)nb_alloc(ctx, ncols * sizeof(nb_compact_cell));
    chf->spans = (nb_compact_span*)nb_alloc(ctx, (size_t)nspans * sizeof(nb_compact_span));
    chf->areas = (uint8_t*)nb_alloc(ctx, nspans);
    if (!chf->cells || !chf->spans || !chf->areas) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'spans' (%u spans, %zu columns)", fn, nspans, ncols);
        goto cleanup;
    }

    stream_reader r[S_COUNT];
    const uint8_t* p = data + CC_HEADER_SIZE;
    for (int s = 0; s < S_COUNT; ++s) {
        memset(&r[s], 0, sizeof(r[s]));
        r[s].p = p;
        r[s].end = p + bytes[s];
        p += bytes[s];
    }
    int bad = -1; /* the damaged stream */
    /* column counts -> the cell index (a repeat token fills its columns at once: most are runs) */
    uint32_t idx = 0;
    for (size_t c = 0; c < ncols && bad < 0;) {
        stream_reader* rc = &r[S_COUNTS];
        if (rc->run == 0 && !next_token(rc, (uint32_t)(ncols - c))) {
            bad = S_COUNTS;
            break;
        }
        if (rc->repeat) {
            const uint32_t n = rc->value, run = rc->run;
            if ((uint64_t)n * run > nspans - idx) {
                bad = S_COUNTS;
                break;
            }
            for (uint32_t k = 0; k < run; ++k, ++c) {
                chf->cells[c].index = idx;
                chf->cells[c].count = n;
                idx += n;
            }
            rc->run = 0;
            continue;
        }
        uint32_t n;
        if (!get_value(rc, (uint32_t)(ncols - c), &n) || n > nspans - idx) {
            bad = S_COUNTS;
            break;
        }
        chf->cells[c].index = idx;
        chf->cells[c].count = n;
        idx += n;
        ++c;
    }
    if (bad < 0 && idx != nspans) {
        st = CORRUPT_("%s: the columns hold %u spans, span_count is %u", fn, idx, nspans);
        goto cleanup;
    }
    /* floors and heights, predicted as the encoder did */
    for (uint32_t z = 0; z < h && bad < 0; ++z)
        for (uint32_t x = 0; x < w && bad < 0; ++x) {
            const nb_compact_cell c = chf->cells[x + z * w];
            for (uint32_t k = 0; k < c.count; ++k) {
                const uint32_t i = c.index + k;
                const int64_t pr = predictor(chf->cells, (int32_t)w, (int32_t)x, (int32_t)z, k);
                const int32_t py = pr >= 0 ? chf->spans[pr].y : (k > 0 ? chf->spans[i - 1].y : 0);
                const int32_t ph = pr >= 0 ? (int32_t)chf->spans[pr].h : 255;
                uint32_t dy, dh;
                if (!get_value(&r[S_FLOORS], nspans - i, &dy)) {
                    bad = S_FLOORS;
                    break;
                }
                if (!get_value(&r[S_HEIGHTS], nspans - i, &dh)) {
                    bad = S_HEIGHTS;
                    break;
                }
                const int64_t y = (int64_t)py + unzigzag(dy), hh = (int64_t)ph + unzigzag(dh);
                if (y < 0 || y > 0xffff) {
                    bad = S_FLOORS;
                    break;
                }
                if (hh < 0 || hh > 255) {
                    bad = S_HEIGHTS;
                    break;
                }
                /* con before h: the bit-field write of con reads its word back, which stalls when a store to h
                 * is still in flight (a quarter of the decode time, measured) */
                nb_compact_span* s = &chf->spans[i];
                s->con = 0;
                s->h = (uint32_t)hh;
                s->y = (uint16_t)y;
                s->reg = 0;
            }
        }
    for (uint32_t i = 0; i < nspans && bad < 0;) {
        stream_reader* ra = &r[S_AREAS];
        if (ra->run == 0 && !next_token(ra, nspans - i)) {
            bad = S_AREAS;
            break;
        }
        if (ra->repeat) {
            if (ra->value > 63) {
                bad = S_AREAS;
                break;
            }
            memset(chf->areas + i, (int)ra->value, ra->run);
            i += ra->run;
            ra->run = 0;
            continue;
        }
        uint32_t a;
        if (!get_value(ra, nspans - i, &a) || a > 63) {
            bad = S_AREAS;
            break;
        }
        chf->areas[i++] = (uint8_t)a;
    }
    for (int s = 0; s < S_COUNT && bad < 0; ++s)
        if (r[s].run != 0 || r[s].p != r[s].end)
            bad = s; /* values left over */
    if (bad >= 0) {
        st = CORRUPT_("%s: the %s stream is damaged", fn, stream_names[bad]);
        goto cleanup;
    }
    link_spans(chf);
    if (tile_x)
        *tile_x = (int32_t)rd_u32(data + F_TILE_X);
    if (tile_z)
        *tile_z = (int32_t)rd_u32(data + F_TILE_Z);
    *out = chf;
    return NB_OK;

cleanup:
    nb_compact_heightfield_destroy(ctx, chf);
    return st;
}
