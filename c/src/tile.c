/* Tile blobs: one self-describing, versioned, checksummed little-endian block per tile (layout in
 * docs/FORMAT.md). The runtime reads a blob in place, so nb_tile_parse validates every count, offset and index
 * before handing out pointers into it: a blob that passes can be walked without bounds checks. */
#include "bake_internal.h"
#include "navmesh_internal.h"

#include <math.h>
#include <stdlib.h>

/* The arrays are used in place through typed pointers, so the host must share the file's byte order. Every
 * target navbake ships for (x86-64, arm64, wasm32) is little-endian. */
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "navbake's tile format is little-endian and read in place: big-endian hosts are not supported"
#endif

_Static_assert(sizeof(nb_bv_node) == 16, "nb_bv_node must match the 16-byte BV record of the format");
_Static_assert(sizeof(nb_offmesh_con) == 36, "nb_offmesh_con must match the 36-byte off-mesh record of the format");
_Static_assert(sizeof(float) == 4, "the format stores IEEE-754 binary32 floats");

/* ---- header: 25 little-endian 32-bit fields ---------------------------------------------------------------- */
enum {
    H_MAGIC = 0,
    H_VERSION = 4,
    H_HEADER_SIZE = 8,
    H_TOTAL_SIZE = 12,
    H_CRC = 16,
    H_TILE_X = 20,
    H_TILE_Z = 24,
    H_NVERTS = 28,
    H_NPOLYS = 32,
    H_NVP = 36,
    H_NDETAIL_VERTS = 40,
    H_NDETAIL_TRIS = 44,
    H_NBV = 48,
    H_NOFFMESH = 52,
    H_BMIN = 56,
    H_BMAX = 68,
    H_WALKABLE_HEIGHT = 80,
    H_WALKABLE_RADIUS = 84,
    H_WALKABLE_CLIMB = 88,
    H_BV_QUANT = 92,
    H_RESERVED = 96,
    HEADER_SIZE = 100
};

/* ---- arrays, in file order, each starting at a multiple of 4 ------------------------------------------------ */
enum {
    A_VERTS,
    A_POLY_VERTS,
    A_POLY_NEIS,
    A_POLY_FLAGS,
    A_POLY_AREAS,
    A_POLY_TYPES,
    A_POLY_NVERTS,
    A_DETAIL_MESHES,
    A_DETAIL_VERTS,
    A_DETAIL_TRIS,
    A_BV,
    A_OFFMESH,
    A_COUNT
};

typedef struct tile_counts {
    uint32_t nverts, npolys, nvp, ndetail_verts, ndetail_tris, nbv, noffmesh;
} tile_counts;

/* Offsets and ends of every array. 64-bit so that huge counts in a corrupt header cannot wrap (size_t is 32
 * bits in wasm). */
typedef struct tile_layout {
    uint64_t offset[A_COUNT], end[A_COUNT];
    uint64_t total;
} tile_layout;

static void compute_layout(const tile_counts* c, tile_layout* l)
{
    const uint64_t polys = c->npolys, slots = (uint64_t)c->npolys * c->nvp;
    const uint64_t bytes[A_COUNT] = {
        (uint64_t)c->nverts * 12, slots * 2, slots * 2, polys * 2, polys, polys, polys, polys * 16,
        (uint64_t)c->ndetail_verts * 12, (uint64_t)c->ndetail_tris * 4, (uint64_t)c->nbv * 16,
        (uint64_t)c->noffmesh * sizeof(nb_offmesh_con),
    };
    uint64_t at = HEADER_SIZE;
    for (int a = 0; a < A_COUNT; ++a) {
        l->offset[a] = at;
        l->end[a] = at + bytes[a];
        at = (l->end[a] + 3) & ~(uint64_t)3;
    }
    l->total = at;
}

/* ---- little-endian scalar access (unaligned-safe) ----------------------------------------------------------- */
static inline uint32_t rd_u32(const uint8_t* p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t rd_u16(const uint8_t* p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline int32_t rd_i32(const uint8_t* p)
{
    const uint32_t u = rd_u32(p);
    int32_t i;
    memcpy(&i, &u, 4);
    return i;
}
static inline float rd_f32(const uint8_t* p)
{
    const uint32_t u = rd_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline void wr_u32(uint8_t* p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}
static inline void wr_i32(uint8_t* p, int32_t v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    wr_u32(p, u);
}
static inline void wr_f32(uint8_t* p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    wr_u32(p, u);
}

/* ---- CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib / PNG) ------------------------------------ */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu, 0xe963a535u, 0x9e6495a3u,
    0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u, 0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u,
    0x1db71064u, 0x6ab020f2u, 0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u, 0xfa0f3d63u, 0x8d080df5u,
    0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u, 0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu,
    0x35b5a8fau, 0x42b2986cu, 0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u, 0xcfba9599u, 0xb8bda50fu,
    0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u, 0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du,
    0x76dc4190u, 0x01db7106u, 0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du, 0x91646c97u, 0xe6635c01u,
    0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu, 0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u,
    0x65b0d9c6u, 0x12b7e950u, 0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u, 0xa4d1c46du, 0xd3d6f4fbu,
    0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u, 0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u,
    0x5005713cu, 0x270241aau, 0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u, 0xb7bd5c3bu, 0xc0ba6cadu,
    0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au, 0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u,
    0xe3630b12u, 0x94643b84u, 0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu, 0x196c3671u, 0x6e6b06e7u,
    0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu, 0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u,
    0xd6d6a3e8u, 0xa1d1937eu, 0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u, 0x316e8eefu, 0x4669be79u,
    0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u, 0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu,
    0xc5ba3bbeu, 0xb2bd0b28u, 0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu, 0x72076785u, 0x05005713u,
    0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u, 0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u,
    0x86d3d2d4u, 0xf1d4e242u, 0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u, 0x616bffd3u, 0x166ccf45u,
    0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u, 0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu,
    0xaed16a4au, 0xd9d65adcu, 0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u, 0x54de5729u, 0x23d967bfu,
    0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u, 0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

static uint32_t crc_update(uint32_t crc, const uint8_t* data, size_t size)
{
    for (size_t i = 0; i < size; ++i)
        crc = crc_table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

uint32_t nb_crc32(const uint8_t* data, size_t size) { return crc_update(0xffffffffu, data, size) ^ 0xffffffffu; }

/* A tile's CRC covers every byte of the blob except the CRC field itself. */
static uint32_t tile_crc(const uint8_t* data, size_t size)
{
    uint32_t crc = crc_update(0xffffffffu, data, H_CRC);
    crc = crc_update(crc, data + H_CRC + 4, size - H_CRC - 4);
    return crc ^ 0xffffffffu;
}

void nb_tile_update_crc(uint8_t* data, size_t size)
{
    if (data && size >= HEADER_SIZE)
        wr_u32(data + H_CRC, tile_crc(data, size));
}

void nb_bytes_free(nb_context* ctx, void* data) { nb_free(ctx, data); }

/* ================================================================================================ */
/* Building                                                                                         */
/* ================================================================================================ */

#define FN_BUILD "nb_tile_build"
/* What a bake can change when a tile holds too much (the TypeScript layer names the field as its config does). */
#define TILE_HINT "bake in tiles, or smaller ones (tile_size), or raise cell_size"

/* The tile side (0 = -x, 1 = +z, 2 = +x, 3 = -z) a point lies beyond, 0xff when inside the xz bounds; a point
 * beyond a corner takes the axis it overshoots most. */
static uint8_t classify_side(const float p[3], const float bmin[3], const float bmax[3])
{
    const float ox = p[0] < bmin[0] ? bmin[0] - p[0] : (p[0] > bmax[0] ? p[0] - bmax[0] : 0.0f);
    const float oz = p[2] < bmin[2] ? bmin[2] - p[2] : (p[2] > bmax[2] ? p[2] - bmax[2] : 0.0f);
    if (ox <= 0.0f && oz <= 0.0f)
        return 0xff;
    if (ox >= oz)
        return p[0] < bmin[0] ? 0 : 2;
    return p[2] < bmin[2] ? 3 : 1;
}

/* |v| <= NB_MAX_COORD: false for NaN and the infinities too. */
static int in_range(float v) { return fabsf(v) <= NB_MAX_COORD; }

static int inside_xz(const float p[3], const float bmin[3], const float bmax[3])
{
    return p[0] >= bmin[0] && p[0] <= bmax[0] && p[2] >= bmin[2] && p[2] <= bmax[2];
}

static int poly_vert_count(const uint16_t* p, int nvp)
{
    int n = 0;
    while (n < nvp && p[n] != NB_MESH_NULL_IDX)
        ++n;
    return n;
}

/* One BV item: a ground polygon's quantized bounds. */
typedef struct bv_item {
    uint16_t bmin[3], bmax[3];
    int32_t poly;
} bv_item;

/* nb_sort, like qsort, has no context argument: one comparator per axis. Ties break on the polygon index so
 * the tree (and thus the blob) does not depend on the sort implementation. */
#define BV_CMP_(axis)                                                                  \
    static int bv_cmp_##axis(const void* pa, const void* pb)                           \
    {                                                                                  \
        const bv_item* a = (const bv_item*)pa;                                         \
        const bv_item* b = (const bv_item*)pb;                                         \
        if (a->bmin[axis] != b->bmin[axis])                                            \
            return a->bmin[axis] < b->bmin[axis] ? -1 : 1;                             \
        return (a->poly > b->poly) - (a->poly < b->poly);                              \
    }
BV_CMP_(0)
BV_CMP_(1)
BV_CMP_(2)
#undef BV_CMP_

/* Median split on the longest axis, nodes written depth first; an inner node stores -(its subtree size) so a
 * traversal can skip the subtree when the node's box misses. Depth is about log2(npolys) <= 16. */
static void bv_subdivide(bv_item* items, int n, nb_bv_node* nodes, int* cursor)
{
    nb_bv_node* node = &nodes[(*cursor)++];
    const int first = (int)(node - nodes);
    memcpy(node->bmin, items[0].bmin, sizeof(node->bmin));
    memcpy(node->bmax, items[0].bmax, sizeof(node->bmax));
    for (int i = 1; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            if (items[i].bmin[k] < node->bmin[k])
                node->bmin[k] = items[i].bmin[k];
            if (items[i].bmax[k] > node->bmax[k])
                node->bmax[k] = items[i].bmax[k];
        }
    if (n == 1) {
        node->i = items[0].poly;
        return;
    }
    int axis = 0;
    int best = node->bmax[0] - node->bmin[0];
    for (int k = 1; k < 3; ++k)
        if (node->bmax[k] - node->bmin[k] > best) {
            best = node->bmax[k] - node->bmin[k];
            axis = k;
        }
    nb_sort(items, (size_t)n, sizeof(bv_item), axis == 0 ? bv_cmp_0 : axis == 1 ? bv_cmp_1 : bv_cmp_2);
    const int half = n / 2;
    bv_subdivide(items, half, nodes, cursor);
    bv_subdivide(items + half, n - half, nodes, cursor);
    node->i = -(*cursor - first);
}

/* Clamped to 0..65535; written so that NaN also lands on 0. */
static uint16_t quantize_lo(float v, float origin, float q)
{
    const float f = floorf((v - origin) * q);
    return (uint16_t)(f > 0.0f ? (f < 65535.0f ? f : 65535.0f) : 0.0f);
}
static uint16_t quantize_hi(float v, float origin, float q)
{
    const float f = ceilf((v - origin) * q);
    return (uint16_t)(f > 0.0f ? (f < 65535.0f ? f : 65535.0f) : 0.0f);
}

/* Everything nb_tile_build checks before it allocates: pointers, ranges, the detail mesh's fit to the polygons,
 * the links. Fills the counts of the blob and how many links are stored. */
static nb_status check_build_params(nb_context* ctx, const nb_tile_params* tp, int keep_all_links,
                                    uint8_t* keep_link, tile_counts* c)
{
    const nb_poly_mesh* pm = tp->poly_mesh;
    const nb_poly_mesh_detail* dm = tp->detail;
    if (!pm->verts && pm->nverts > 0)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_BUILD ": poly_mesh.verts is NULL but nverts is %d", pm->nverts);
    if (!pm->polys && pm->npolys > 0)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_BUILD ": poly_mesh.polys is NULL but npolys is %d", pm->npolys);
    if (pm->npolys > 0 && (!pm->flags || !pm->areas))
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_BUILD ": poly_mesh.%s is NULL", !pm->flags ? "flags" : "areas");
    if (pm->npolys < 0 || pm->nverts < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": poly_mesh counts must be >= 0 (npolys %d, nverts %d)",
                       pm->npolys, pm->nverts);
    if (pm->nvp < 3 || pm->nvp > NB_MAX_VERTS_PER_POLY)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": poly_mesh.nvp must be 3..%d (got %d)",
                       NB_MAX_VERTS_PER_POLY, pm->nvp);
    if (tp->link_count > 0 && !tp->links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_BUILD ": links is NULL but link_count is %u", tp->link_count);
    /* Before the polygons are read: past the limit, neighbour indices collide with the portal codes (0x8000 | side). */
    if (pm->npolys > NB_MAX_POLYS_PER_TILE)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_BUILD ": %d polygons exceed the %d a tile holds; " TILE_HINT,
                       pm->npolys, NB_MAX_POLYS_PER_TILE);
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(pm->bmin[k]) || !isfinite(pm->bmax[k]))
            return nb_fail(ctx, NB_ERR_NONFINITE, FN_BUILD ": poly_mesh bounds are not finite (axis %c)", "xyz"[k]);
        if (pm->bmin[k] > pm->bmax[k])
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": poly_mesh.bmin.%c (%g) > bmax.%c (%g)", "xyz"[k],
                           pm->bmin[k], "xyz"[k], pm->bmax[k]);
    }
    if (!isfinite(pm->cell_size) || !isfinite(pm->cell_height))
        return nb_fail(ctx, NB_ERR_NONFINITE, FN_BUILD ": poly_mesh cell_size/cell_height are not finite");
    if (!(pm->cell_size > 0.0f) || !(pm->cell_height > 0.0f))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": poly_mesh.cell_size (%g) and cell_height (%g) must be > 0",
                       pm->cell_size, pm->cell_height);
    const float walk[3] = { tp->walkable_height, tp->walkable_radius, tp->walkable_climb };
    static const char* walk_name[3] = { "walkable_height", "walkable_radius", "walkable_climb" };
    for (int k = 0; k < 3; ++k) {
        if (!isfinite(walk[k]))
            return nb_fail(ctx, NB_ERR_NONFINITE, FN_BUILD ": %s is not finite", walk_name[k]);
        if (walk[k] < 0.0f)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": %s must be >= 0 (got %g)", walk_name[k], walk[k]);
    }

    /* ---- polygons ---- */
    const int nvp = pm->nvp;
    for (int p = 0; p < pm->npolys; ++p) {
        const uint16_t* poly = &pm->polys[(size_t)p * 2 * nvp];
        const int n = poly_vert_count(poly, nvp);
        if (n < 3)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": polygon %d has %d vertices (needs >= 3)", p, n);
        for (int j = 0; j < nvp; ++j) {
            if (j < n && poly[j] >= pm->nverts)
                return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": polygon %d vertex %d is %u, nverts is %d", p, j,
                               poly[j], pm->nverts);
            if (j >= n && poly[j] != NB_MESH_NULL_IDX)
                return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": polygon %d has a vertex after its padding", p);
            const uint16_t nei = poly[nvp + j];
            if (j < n && nei != NB_MESH_NULL_IDX &&
                ((nei & 0x8000) ? (nei & 0x7fff) > 3 : nei >= (uint32_t)pm->npolys))
                return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": polygon %d edge %d has neighbour code 0x%x", p, j,
                               nei);
        }
        if (pm->areas[p] > 63)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": polygon %d area %u > 63", p, pm->areas[p]);
    }

    /* ---- detail mesh: each polygon's own vertices first (skipped), then extra ones ---- */
    uint64_t ndv = 0, ndt = 0;
    if (dm) {
        if (dm->nmeshes != pm->npolys)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": detail has %d meshes for %d polygons", dm->nmeshes,
                           pm->npolys);
        if (dm->nmeshes > 0 && (!dm->meshes || (!dm->verts && dm->nverts > 0) || (!dm->tris && dm->ntris > 0)))
            return nb_fail(ctx, NB_ERR_NULL_ARG, FN_BUILD ": detail arrays are NULL");
        for (int p = 0; p < pm->npolys; ++p) {
            const uint32_t* m = &dm->meshes[(size_t)p * 4];
            const int n = poly_vert_count(&pm->polys[(size_t)p * 2 * nvp], nvp);
            if ((uint64_t)m[0] + m[1] > (uint64_t)dm->nverts || (uint64_t)m[2] + m[3] > (uint64_t)dm->ntris)
                return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": detail mesh %d ranges exceed the detail arrays", p);
            if (m[1] < (uint32_t)n || m[1] > 255)
                return nb_fail(ctx, NB_ERR_INVALID_ARG,
                               FN_BUILD ": detail mesh %d has %u vertices (needs the polygon's %d, at most 255)", p,
                               m[1], n);
            for (uint32_t t = 0; t < m[3]; ++t) {
                const uint8_t* tri = &dm->tris[((size_t)m[2] + t) * 4];
                if (tri[0] >= m[1] || tri[1] >= m[1] || tri[2] >= m[1])
                    return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": detail triangle %u of polygon %d indexes past "
                                   "its %u vertices", t, p, m[1]);
            }
            for (uint32_t v = (uint32_t)n; v < m[1]; ++v)
                for (int k = 0; k < 3; ++k)
                    if (!isfinite(dm->verts[((size_t)m[0] + v) * 3 + k]))
                        return nb_fail(ctx, NB_ERR_NONFINITE, FN_BUILD ": detail vertex %u is not finite", m[0] + v);
            ndv += m[1] - (uint32_t)n;
            ndt += m[3];
        }
    } else {
        for (int p = 0; p < pm->npolys; ++p)
            ndt += (uint64_t)poly_vert_count(&pm->polys[(size_t)p * 2 * nvp], nvp) - 2;
    }

    /* ---- off-mesh links: a tile stores the links that start inside it ---- */
    uint32_t noff = 0;
    for (uint32_t i = 0; i < tp->link_count; ++i) {
        const nb_offmesh_link* l = &tp->links[i];
        for (int k = 0; k < 6; ++k)
            if (!isfinite(k < 3 ? l->start[k] : l->end[k - 3]))
                return nb_fail(ctx, NB_ERR_NONFINITE, FN_BUILD ": links[%u].%s.%c is not finite", i,
                               k < 3 ? "start" : "end", "xyz"[k % 3]);
        if (!isfinite(l->radius))
            return nb_fail(ctx, NB_ERR_NONFINITE, FN_BUILD ": links[%u].radius is not finite", i);
        if (!(l->radius > 0.0f))
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": links[%u].radius must be > 0 (got %g)", i, l->radius);
        if (l->area > 63)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": links[%u].area must be 0..63 (got %u)", i, l->area);
        if (l->bidirectional > 1)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, FN_BUILD ": links[%u].bidirectional must be 0 or 1 (got %u)", i,
                           l->bidirectional);
        keep_link[i] = (uint8_t)(keep_all_links || inside_xz(l->start, pm->bmin, pm->bmax));
        noff += keep_link[i];
    }

    const uint64_t npolys = (uint64_t)pm->npolys + noff;
    if (npolys > NB_MAX_POLYS_PER_TILE)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_BUILD ": %llu polygons (%d ground + %u links) exceed the %d a tile "
                       "holds; " TILE_HINT, (unsigned long long)npolys, pm->npolys, noff, NB_MAX_POLYS_PER_TILE);
    const uint64_t nverts = (uint64_t)pm->nverts + 2ull * noff;
    if (nverts >= NB_MESH_NULL_IDX)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_BUILD ": %llu vertices exceed %d per tile",
                       (unsigned long long)nverts, NB_MESH_NULL_IDX - 1);
    if (ndv > 0x3fffffff || ndt > 0x3fffffff)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_BUILD ": detail mesh too large (%llu vertices, %llu triangles)",
                       (unsigned long long)ndv, (unsigned long long)ndt);
    c->nverts = (uint32_t)nverts;
    c->npolys = (uint32_t)npolys;
    c->nvp = (uint32_t)nvp;
    c->ndetail_verts = (uint32_t)ndv;
    c->ndetail_tris = (uint32_t)ndt;
    c->nbv = pm->npolys > 0 ? 2u * (uint32_t)pm->npolys - 1u : 0u;
    c->noffmesh = noff;
    return NB_OK;
}

nb_status nb_tile_build(nb_context* ctx, const nb_tile_params* params, uint8_t** data, size_t* size)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_tile_build: ctx is NULL");
    return nb_tile_build_as(ctx, params, 0, data, size);
}

nb_status nb_tile_build_as(nb_context* ctx, const nb_tile_params* params, int keep_all_links, uint8_t** data,
                           size_t* size)
{
    if (!params || !data || !size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_BUILD ": %s is NULL", !params ? "params" : !data ? "data" : "size");
    *data = NULL;
    *size = 0;
    if (!params->poly_mesh)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_BUILD ": params.poly_mesh is NULL");

    nb_status st = NB_OK;
    uint8_t* keep_link = NULL;
    bv_item* items = NULL;
    uint8_t* blob = NULL;
    const nb_poly_mesh* pm = params->poly_mesh;
    const nb_poly_mesh_detail* dm = params->detail;

    keep_link = (uint8_t*)nb_calloc(ctx, params->link_count ? params->link_count : 1, 1);
    if (!keep_link) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_BUILD ": out of memory 'keep_link' (%u)", params->link_count);
        goto cleanup;
    }
    tile_counts c;
    st = check_build_params(ctx, params, keep_all_links, keep_link, &c);
    if (st != NB_OK)
        goto cleanup;
    tile_layout l;
    compute_layout(&c, &l);
    if (l.total > 0xffffffffu || l.total > (uint64_t)SIZE_MAX) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, FN_BUILD ": the blob would take %llu bytes (limit 4 GiB)",
                     (unsigned long long)l.total);
        goto cleanup;
    }
    blob = (uint8_t*)nb_calloc(ctx, 1, (size_t)l.total); /* zeroed: the padding between arrays must be 0 */
    items = (bv_item*)nb_alloc(ctx, (size_t)(pm->npolys ? pm->npolys : 1) * sizeof(bv_item));
    if (!blob || !items) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_BUILD ": out of memory '%s' (%llu)", !blob ? "blob" : "items",
                     (unsigned long long)(!blob ? l.total : (uint64_t)pm->npolys * sizeof(bv_item)));
        goto cleanup;
    }

    float* verts = (float*)(blob + l.offset[A_VERTS]);
    uint16_t* poly_verts = (uint16_t*)(blob + l.offset[A_POLY_VERTS]);
    uint16_t* poly_neis = (uint16_t*)(blob + l.offset[A_POLY_NEIS]);
    uint16_t* poly_flags = (uint16_t*)(blob + l.offset[A_POLY_FLAGS]);
    uint8_t* poly_areas = blob + l.offset[A_POLY_AREAS];
    uint8_t* poly_types = blob + l.offset[A_POLY_TYPES];
    uint8_t* poly_nverts = blob + l.offset[A_POLY_NVERTS];
    uint32_t* detail_meshes = (uint32_t*)(blob + l.offset[A_DETAIL_MESHES]);
    float* detail_verts = (float*)(blob + l.offset[A_DETAIL_VERTS]);
    uint8_t* detail_tris = blob + l.offset[A_DETAIL_TRIS];
    nb_bv_node* bv = (nb_bv_node*)(blob + l.offset[A_BV]);
    nb_offmesh_con* offmesh = (nb_offmesh_con*)(blob + l.offset[A_OFFMESH]);
    const int nvp = pm->nvp;
    const uint32_t nground = (uint32_t)pm->npolys;

    /* ---- vertices: cells to world ---- */
    float bmin[3], bmax[3];
    memcpy(bmin, pm->bmin, sizeof(bmin));
    memcpy(bmax, pm->bmax, sizeof(bmax));
    for (int v = 0; v < pm->nverts; ++v) {
        const uint16_t* iv = &pm->verts[(size_t)v * 3];
        float* w = &verts[(size_t)v * 3];
        w[0] = pm->bmin[0] + iv[0] * pm->cell_size;
        w[1] = pm->bmin[1] + iv[1] * pm->cell_height;
        w[2] = pm->bmin[2] + iv[2] * pm->cell_size;
    }

    /* ---- ground polygons ---- */
    for (uint32_t p = 0; p < nground; ++p) {
        const uint16_t* src = &pm->polys[(size_t)p * 2 * nvp];
        const int n = poly_vert_count(src, nvp);
        for (int j = 0; j < nvp; ++j) {
            poly_verts[(size_t)p * nvp + j] = j < n ? src[j] : NB_MESH_NULL_IDX;
            uint16_t code = NB_NEI_WALL;
            const uint16_t nei = src[nvp + j];
            if (j < n && nei != NB_MESH_NULL_IDX)
                code = (nei & 0x8000) ? (uint16_t)(NB_NEI_BORDER | (nei & 3)) : (uint16_t)(nei + 1);
            poly_neis[(size_t)p * nvp + j] = code;
        }
        poly_flags[p] = pm->flags[p];
        poly_areas[p] = pm->areas[p];
        poly_types[p] = NB_POLY_GROUND;
        poly_nverts[p] = (uint8_t)n;
    }

    /* ---- detail mesh: extra vertices only; triangle indices keep the "own vertices first" numbering ---- */
    uint32_t dv = 0, dt = 0;
    for (uint32_t p = 0; p < nground; ++p) {
        const int n = poly_nverts[p];
        uint32_t* out = &detail_meshes[(size_t)p * 4];
        out[0] = dv;
        out[2] = dt;
        if (dm) {
            const uint32_t* m = &dm->meshes[(size_t)p * 4];
            const uint32_t extra = m[1] - (uint32_t)n;
            memcpy(&detail_verts[(size_t)dv * 3], &dm->verts[((size_t)m[0] + (size_t)n) * 3],
                   (size_t)extra * 3 * sizeof(float));
            for (uint32_t t = 0; t < m[3]; ++t) {
                const uint8_t* src = &dm->tris[((size_t)m[2] + t) * 4];
                uint8_t* dst = &detail_tris[((size_t)dt + t) * 4];
                dst[0] = src[0];
                dst[1] = src[1];
                dst[2] = src[2];
                dst[3] = src[3] & 0x3f;
            }
            out[1] = extra;
            out[3] = m[3];
            dv += extra;
            dt += m[3];
        } else {
            /* Flat polygons: a fan from vertex 0; an edge is on the outline when it joins consecutive vertices. */
            for (int i = 1; i + 1 < n; ++i) {
                uint8_t* dst = &detail_tris[((size_t)dt + (size_t)(i - 1)) * 4];
                dst[0] = 0;
                dst[1] = (uint8_t)i;
                dst[2] = (uint8_t)(i + 1);
                dst[3] = (uint8_t)((i == 1 ? 1u : 0u) | 1u << 2 | (i + 1 == n - 1 ? 1u : 0u) << 4);
            }
            out[1] = 0;
            out[3] = (uint32_t)(n - 2);
            dt += (uint32_t)(n - 2);
        }
    }

    /* ---- off-mesh links: a 2-vertex polygon each, after the ground polygons ---- */
    uint32_t k = 0;
    for (uint32_t i = 0; i < params->link_count; ++i) {
        if (!keep_link[i])
            continue;
        const nb_offmesh_link* src = &params->links[i];
        const uint32_t p = nground + k;
        const uint32_t v = (uint32_t)pm->nverts + 2 * k;
        memcpy(&verts[(size_t)v * 3], src->start, 3 * sizeof(float));
        memcpy(&verts[(size_t)(v + 1) * 3], src->end, 3 * sizeof(float));
        for (int j = 0; j < nvp; ++j) {
            poly_verts[(size_t)p * nvp + j] = j == 0 ? (uint16_t)v : j == 1 ? (uint16_t)(v + 1) : NB_MESH_NULL_IDX;
            poly_neis[(size_t)p * nvp + j] = NB_NEI_WALL;
        }
        poly_flags[p] = src->flags ? src->flags : 1;
        poly_areas[p] = src->area ? src->area : NB_WALKABLE_AREA;
        poly_types[p] = NB_POLY_OFFMESH;
        poly_nverts[p] = 2;
        detail_meshes[(size_t)p * 4 + 0] = dv; /* empty ranges, kept monotonic */
        detail_meshes[(size_t)p * 4 + 2] = dt;
        nb_offmesh_con* con = &offmesh[k];
        memcpy(con->pos, src->start, 3 * sizeof(float));
        memcpy(con->pos + 3, src->end, 3 * sizeof(float));
        con->radius = src->radius;
        con->poly = (uint16_t)p;
        con->bidirectional = src->bidirectional;
        con->side = classify_side(src->end, pm->bmin, pm->bmax);
        con->user_id = src->user_id;
        ++k;
    }

    /* The y range covers every vertex (the polygon mesh's bounds may not include detail heights or link ends);
     * x and z stay the tile's own footprint, which the navmesh uses for neighbour sides. */
    for (uint32_t v = 0; v < c.nverts; ++v) {
        bmin[1] = nb_minf(bmin[1], verts[(size_t)v * 3 + 1]);
        bmax[1] = nb_maxf(bmax[1], verts[(size_t)v * 3 + 1]);
    }
    for (uint32_t v = 0; v < c.ndetail_verts; ++v) {
        bmin[1] = nb_minf(bmin[1], detail_verts[(size_t)v * 3 + 1]);
        bmax[1] = nb_maxf(bmax[1], detail_verts[(size_t)v * 3 + 1]);
    }
    /* Everything stored stays within NB_MAX_COORD (the parser checks it): huge cell sizes or bounds end here. */
    int fits = in_range(params->walkable_height) && in_range(params->walkable_radius) &&
               in_range(params->walkable_climb);
    for (int a = 0; a < 3; ++a)
        fits &= in_range(bmin[a]) && in_range(bmax[a]);
    for (uint64_t i = 0; i < (uint64_t)c.nverts * 3; ++i)
        fits &= in_range(verts[i]);
    for (uint64_t i = 0; i < (uint64_t)c.ndetail_verts * 3; ++i)
        fits &= in_range(detail_verts[i]);
    for (uint32_t i = 0; i < c.noffmesh; ++i)
        fits &= in_range(offmesh[i].radius);
    if (!fits) {
        st = nb_fail(ctx, NB_ERR_TOO_LARGE, FN_BUILD ": a coordinate, size or radius beyond %g (NB_MAX_COORD)",
                     NB_MAX_COORD);
        goto cleanup;
    }

    /* ---- BV tree over the ground polygons (quantized to 1/cell_size) ---- */
    const float quant = 1.0f / pm->cell_size;
    for (uint32_t p = 0; p < nground; ++p) {
        float lo[3], hi[3];
        const uint16_t* pv = &poly_verts[(size_t)p * nvp];
        memcpy(lo, &verts[(size_t)pv[0] * 3], sizeof(lo));
        memcpy(hi, lo, sizeof(hi));
        for (int j = 1; j < poly_nverts[p]; ++j)
            for (int a = 0; a < 3; ++a) {
                lo[a] = nb_minf(lo[a], verts[(size_t)pv[j] * 3 + a]);
                hi[a] = nb_maxf(hi[a], verts[(size_t)pv[j] * 3 + a]);
            }
        const uint32_t* m = &detail_meshes[(size_t)p * 4];
        for (uint32_t j = 0; j < m[1]; ++j)
            for (int a = 0; a < 3; ++a) {
                lo[a] = nb_minf(lo[a], detail_verts[((size_t)m[0] + j) * 3 + a]);
                hi[a] = nb_maxf(hi[a], detail_verts[((size_t)m[0] + j) * 3 + a]);
            }
        for (int a = 0; a < 3; ++a) {
            items[p].bmin[a] = quantize_lo(lo[a], bmin[a], quant);
            items[p].bmax[a] = quantize_hi(hi[a], bmin[a], quant);
        }
        items[p].poly = (int32_t)p;
    }
    if (nground > 0) {
        int cursor = 0;
        bv_subdivide(items, (int)nground, bv, &cursor);
    }

    /* ---- header ---- */
    wr_u32(blob + H_MAGIC, NB_TILE_MAGIC);
    wr_u32(blob + H_VERSION, NB_TILE_VERSION);
    wr_u32(blob + H_HEADER_SIZE, HEADER_SIZE);
    wr_u32(blob + H_TOTAL_SIZE, (uint32_t)l.total);
    wr_i32(blob + H_TILE_X, params->tile_x);
    wr_i32(blob + H_TILE_Z, params->tile_z);
    wr_u32(blob + H_NVERTS, c.nverts);
    wr_u32(blob + H_NPOLYS, c.npolys);
    wr_u32(blob + H_NVP, c.nvp);
    wr_u32(blob + H_NDETAIL_VERTS, c.ndetail_verts);
    wr_u32(blob + H_NDETAIL_TRIS, c.ndetail_tris);
    wr_u32(blob + H_NBV, c.nbv);
    wr_u32(blob + H_NOFFMESH, c.noffmesh);
    for (int a = 0; a < 3; ++a) {
        wr_f32(blob + H_BMIN + 4 * a, bmin[a]);
        wr_f32(blob + H_BMAX + 4 * a, bmax[a]);
    }
    wr_f32(blob + H_WALKABLE_HEIGHT, params->walkable_height);
    wr_f32(blob + H_WALKABLE_RADIUS, params->walkable_radius);
    wr_f32(blob + H_WALKABLE_CLIMB, params->walkable_climb);
    wr_f32(blob + H_BV_QUANT, quant);
    wr_u32(blob + H_RESERVED, 0);
    nb_tile_update_crc(blob, (size_t)l.total);

    *data = blob;
    *size = (size_t)l.total;
    blob = NULL;

cleanup:
    nb_free(ctx, keep_link);
    nb_free(ctx, items);
    nb_free(ctx, blob);
    return st;
}

/* ================================================================================================ */
/* Validation and parsing                                                                           */
/* ================================================================================================ */

static int in_range3(const uint8_t* p)
{
    return in_range(rd_f32(p)) && in_range(rd_f32(p + 4)) && in_range(rd_f32(p + 8));
}

/* Checks everything about a blob; never reads outside [d, d + size). fn names the public caller. On success
 * fills the counts and layout. */
static nb_status check_blob(nb_context* ctx, const char* fn, const uint8_t* d, size_t size, tile_counts* c,
                            tile_layout* l)
{
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    if (first != 1)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: this host is big-endian; tile blobs are little-endian", fn);

    /* ---- header: identity, then sizes, then the checksum ---- */
    if (size < 8)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: truncated: %zu bytes, a tile header has %d", fn, size, HEADER_SIZE);
    const uint32_t magic = rd_u32(d + H_MAGIC);
    if (magic != NB_TILE_MAGIC)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: bad magic 0x%08x (expected 0x%08x, \"NBTL\")%s", fn, magic,
                       NB_TILE_MAGIC, magic == 0x4e42544cu ? ": byte-swapped, written big-endian" : "");
    const uint32_t version = rd_u32(d + H_VERSION);
    if (version != NB_TILE_VERSION)
        return nb_fail(ctx, NB_ERR_VERSION, "%s: tile format version %u, this library reads version %u", fn, version,
                       NB_TILE_VERSION);
    if (size < HEADER_SIZE)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: truncated: %zu bytes, a tile header has %d", fn, size, HEADER_SIZE);
    if (rd_u32(d + H_HEADER_SIZE) != HEADER_SIZE)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: header_size is %u, version %u has %d", fn, rd_u32(d + H_HEADER_SIZE),
                       NB_TILE_VERSION, HEADER_SIZE);
    const uint32_t total = rd_u32(d + H_TOTAL_SIZE);
    if ((uint64_t)total != (uint64_t)size)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: total_size is %u but the blob has %zu bytes%s", fn, total, size,
                       (uint64_t)total > (uint64_t)size ? " (truncated)" : "");
    const uint32_t crc = tile_crc(d, size);
    if (rd_u32(d + H_CRC) != crc)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: crc mismatch (stored 0x%08x, computed 0x%08x)", fn,
                       rd_u32(d + H_CRC), crc);
    if (rd_u32(d + H_RESERVED) != 0)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: reserved header field is %u, must be 0", fn, rd_u32(d + H_RESERVED));

    /* ---- counts: each within the format's limits, then the layout they imply must be the blob ---- */
    c->nverts = rd_u32(d + H_NVERTS);
    c->npolys = rd_u32(d + H_NPOLYS);
    c->nvp = rd_u32(d + H_NVP);
    c->ndetail_verts = rd_u32(d + H_NDETAIL_VERTS);
    c->ndetail_tris = rd_u32(d + H_NDETAIL_TRIS);
    c->nbv = rd_u32(d + H_NBV);
    c->noffmesh = rd_u32(d + H_NOFFMESH);
    if (c->nverts >= NB_MESH_NULL_IDX)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: nverts %u exceeds %d", fn, c->nverts, NB_MESH_NULL_IDX - 1);
    if (c->npolys > NB_MAX_POLYS_PER_TILE)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: npolys %u exceeds %d", fn, c->npolys, NB_MAX_POLYS_PER_TILE);
    if (c->nvp < 3 || c->nvp > NB_MAX_VERTS_PER_POLY)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: nvp %u is not 3..%d", fn, c->nvp, NB_MAX_VERTS_PER_POLY);
    if (c->noffmesh > c->npolys || 2ull * c->noffmesh > c->nverts)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: noffmesh %u exceeds npolys %u or half of nverts %u", fn, c->noffmesh,
                       c->npolys, c->nverts);
    const uint32_t nground = c->npolys - c->noffmesh;
    const uint32_t nground_verts = c->nverts - 2 * c->noffmesh; /* link end points come last */
    if (c->nbv != (nground ? 2 * nground - 1 : 0))
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: nbv %u, a tree over %u polygons has %u nodes", fn, c->nbv, nground,
                       nground ? 2 * nground - 1 : 0);
    compute_layout(c, l);
    if (l->total != (uint64_t)size)
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: the counts imply %llu bytes but the blob has %zu", fn,
                       (unsigned long long)l->total, size);

    /* ---- header floats ---- */
    float bmin[3], bmax[3];
    for (int a = 0; a < 3; ++a) {
        bmin[a] = rd_f32(d + H_BMIN + 4 * a);
        bmax[a] = rd_f32(d + H_BMAX + 4 * a);
        if (!in_range(bmin[a]) || !in_range(bmax[a]) || bmin[a] > bmax[a])
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: bounds on %c are bad (%g..%g; |v| <= %g)", fn, "xyz"[a], bmin[a],
                           bmax[a], NB_MAX_COORD);
    }
    static const char* walk_name[3] = { "walkable_height", "walkable_radius", "walkable_climb" };
    for (int k = 0; k < 3; ++k) {
        const float w = rd_f32(d + H_WALKABLE_HEIGHT + 4 * k);
        if (!in_range(w) || w < 0.0f)
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: %s is %g", fn, walk_name[k], w);
    }
    const float quant = rd_f32(d + H_BV_QUANT);
    if (!isfinite(quant) || !(quant > 0.0f))
        return nb_fail(ctx, NB_ERR_CORRUPT, "%s: bv_quant is %g", fn, quant);

    /* ---- padding between arrays is zero (nothing in the blob goes unchecked) ---- */
    for (int a = 0; a < A_COUNT; ++a) {
        const uint64_t pad_end = a + 1 < A_COUNT ? l->offset[a + 1] : l->total;
        for (uint64_t i = l->end[a]; i < pad_end; ++i)
            if (d[i] != 0)
                return nb_fail(ctx, NB_ERR_CORRUPT, "%s: nonzero padding byte at offset %llu", fn,
                               (unsigned long long)i);
    }

    /* ---- vertices ---- */
    for (uint32_t v = 0; v < c->nverts; ++v)
        if (!in_range3(d + l->offset[A_VERTS] + (size_t)v * 12))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: verts[%u] is not finite or beyond %g", fn, v, NB_MAX_COORD);

    /* ---- polygons ---- */
    const uint8_t* pverts = d + l->offset[A_POLY_VERTS];
    const uint8_t* pneis = d + l->offset[A_POLY_NEIS];
    const uint8_t* pareas = d + l->offset[A_POLY_AREAS];
    const uint8_t* ptypes = d + l->offset[A_POLY_TYPES];
    const uint8_t* pnverts = d + l->offset[A_POLY_NVERTS];
    const uint8_t* dmeshes = d + l->offset[A_DETAIL_MESHES];
    const uint8_t* dtris = d + l->offset[A_DETAIL_TRIS];
    for (uint32_t p = 0; p < c->npolys; ++p) {
        const int offmesh = p >= nground;
        const uint32_t n = pnverts[p];
        if (ptypes[p] != (offmesh ? NB_POLY_OFFMESH : NB_POLY_GROUND))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: poly_types[%u] is %u, expected %u", fn, p, ptypes[p],
                           offmesh ? NB_POLY_OFFMESH : NB_POLY_GROUND);
        if (offmesh ? n != 2 : (n < 3 || n > c->nvp))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: poly_nverts[%u] is %u", fn, p, n);
        if (pareas[p] > 63)
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: poly_areas[%u] is %u (> 63)", fn, p, pareas[p]);
        for (uint32_t j = 0; j < c->nvp; ++j) {
            const size_t at = ((size_t)p * c->nvp + j) * 2;
            const uint16_t v = rd_u16(pverts + at), nei = rd_u16(pneis + at);
            /* Ground polygons use the leading vertices; link polygon k uses the k-th pair of the trailing ones. */
            const int ok_vert = j >= n ? v == NB_MESH_NULL_IDX
                                : offmesh ? v == nground_verts + 2 * (p - nground) + j
                                          : v < nground_verts;
            if (!ok_vert)
                return nb_fail(ctx, NB_ERR_CORRUPT, "%s: poly_verts[%u][%u] is %u (nverts %u, %u for polygons)", fn, p,
                               j, v, c->nverts, nground_verts);
            int ok;
            if (j >= n || offmesh)
                ok = nei == NB_NEI_WALL;
            else if (nei & NB_NEI_BORDER)
                ok = (nei & ~(uint16_t)NB_NEI_BORDER) <= 3;
            else
                ok = nei <= nground;
            if (!ok)
                return nb_fail(ctx, NB_ERR_CORRUPT, "%s: poly_neis[%u][%u] is 0x%04x", fn, p, j, nei);
        }
        const uint8_t* m = dmeshes + (size_t)p * 16;
        const uint32_t vbase = rd_u32(m), vcount = rd_u32(m + 4), tbase = rd_u32(m + 8), tcount = rd_u32(m + 12);
        if ((uint64_t)vbase + vcount > c->ndetail_verts || (uint64_t)tbase + tcount > c->ndetail_tris)
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: detail_meshes[%u] ranges exceed the detail arrays", fn, p);
        if (offmesh ? (vcount | tcount) != 0 : (tcount == 0 || n + vcount > 255))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: detail_meshes[%u] has %u vertices, %u triangles", fn, p,
                           vcount, tcount);
        for (uint32_t t = 0; t < tcount; ++t) {
            const uint8_t* tri = dtris + ((size_t)tbase + t) * 4;
            if (tri[0] >= n + vcount || tri[1] >= n + vcount || tri[2] >= n + vcount || (tri[3] & 0xc0))
                return nb_fail(ctx, NB_ERR_CORRUPT, "%s: detail_tris[%u] of poly %u is (%u, %u, %u, 0x%02x)", fn,
                               tbase + t, p, tri[0], tri[1], tri[2], tri[3]);
        }
    }
    for (uint32_t v = 0; v < c->ndetail_verts; ++v)
        if (!in_range3(d + l->offset[A_DETAIL_VERTS] + (size_t)v * 12))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: detail_verts[%u] is not finite or beyond %g", fn, v,
                           NB_MAX_COORD);

    /* ---- BV tree: every escape offset stays inside the tree, every leaf names a ground polygon ---- */
    for (uint32_t n = 0; n < c->nbv; ++n) {
        const uint8_t* node = d + l->offset[A_BV] + (size_t)n * 16;
        for (int a = 0; a < 3; ++a)
            if (rd_u16(node + 2 * a) > rd_u16(node + 6 + 2 * a))
                return nb_fail(ctx, NB_ERR_CORRUPT, "%s: bv[%u] has bmin > bmax", fn, n);
        const int32_t i = rd_i32(node + 12);
        if (i >= 0 ? (uint32_t)i >= nground : (i < -(int32_t)(c->nbv - n) || i > -3))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: bv[%u].i is %d (%u nodes, %u polygons)", fn, n, i, c->nbv,
                           nground);
    }

    /* ---- off-mesh connections: one per trailing polygon, in order ---- */
    for (uint32_t k = 0; k < c->noffmesh; ++k) {
        const uint8_t* con = d + l->offset[A_OFFMESH] + (size_t)k * sizeof(nb_offmesh_con);
        const float radius = rd_f32(con + offsetof(nb_offmesh_con, radius));
        const uint16_t poly = rd_u16(con + offsetof(nb_offmesh_con, poly));
        const uint8_t bidir = con[offsetof(nb_offmesh_con, bidirectional)];
        const uint8_t side = con[offsetof(nb_offmesh_con, side)];
        if (memcmp(con, d + l->offset[A_VERTS] + ((size_t)nground_verts + 2 * k) * 12, 24) != 0)
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: offmesh[%u].pos differs from its polygon's vertices", fn, k);
        if (!in_range(radius) || !(radius > 0.0f))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: offmesh[%u].radius is %g", fn, k, radius);
        if (poly != nground + k)
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: offmesh[%u].poly is %u, expected %u", fn, k, poly, nground + k);
        if (bidir > 1 || (side > 3 && side != 0xff))
            return nb_fail(ctx, NB_ERR_CORRUPT, "%s: offmesh[%u] has bidirectional %u, side %u", fn, k, bidir, side);
    }
    return NB_OK;
}

nb_status nb_tile_validate(nb_context* ctx, const uint8_t* data, size_t size)
{
    if (!data)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_tile_validate: data is NULL");
    tile_counts c;
    tile_layout l;
    return check_blob(ctx, "nb_tile_validate", data, size, &c, &l);
}

nb_status nb_tile_position(nb_context* ctx, const uint8_t* data, size_t size, int32_t* tile_x, int32_t* tile_z)
{
    if (!data || !tile_x || !tile_z)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_tile_position: %s is NULL",
                       !data ? "data" : !tile_x ? "tile_x" : "tile_z");
    tile_counts c;
    tile_layout l;
    const nb_status st = check_blob(ctx, "nb_tile_position", data, size, &c, &l);
    if (st != NB_OK)
        return st;
    *tile_x = rd_i32(data + H_TILE_X);
    *tile_z = rd_i32(data + H_TILE_Z);
    return NB_OK;
}

nb_status nb_tile_parse(nb_context* ctx, uint8_t* data, size_t size, nb_tile_view* view)
{
    return nb_tile_parse_as(ctx, "nb_tile_parse", data, size, view);
}

nb_status nb_tile_parse_as(nb_context* ctx, const char* fn, uint8_t* data, size_t size, nb_tile_view* view)
{
    if (!data || !view)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !data ? "data" : "view");
    memset(view, 0, sizeof(*view));
    if ((uintptr_t)data & 3u)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: data must be 4-byte aligned to be read in place", fn);
    tile_counts c;
    tile_layout l;
    const nb_status st = check_blob(ctx, fn, data, size, &c, &l);
    if (st != NB_OK)
        return st;
    view->tile_x = rd_i32(data + H_TILE_X);
    view->tile_z = rd_i32(data + H_TILE_Z);
    view->nverts = c.nverts;
    view->npolys = c.npolys;
    view->nvp = c.nvp;
    view->ndetail_verts = c.ndetail_verts;
    view->ndetail_tris = c.ndetail_tris;
    view->nbv = c.nbv;
    view->noffmesh = c.noffmesh;
    for (int a = 0; a < 3; ++a) {
        view->bmin[a] = rd_f32(data + H_BMIN + 4 * a);
        view->bmax[a] = rd_f32(data + H_BMAX + 4 * a);
    }
    view->walkable_height = rd_f32(data + H_WALKABLE_HEIGHT);
    view->walkable_radius = rd_f32(data + H_WALKABLE_RADIUS);
    view->walkable_climb = rd_f32(data + H_WALKABLE_CLIMB);
    view->bv_quant = rd_f32(data + H_BV_QUANT);
    view->verts = (float*)(data + l.offset[A_VERTS]);
    view->poly_verts = (uint16_t*)(data + l.offset[A_POLY_VERTS]);
    view->poly_neis = (uint16_t*)(data + l.offset[A_POLY_NEIS]);
    view->poly_flags = (uint16_t*)(data + l.offset[A_POLY_FLAGS]);
    view->poly_areas = data + l.offset[A_POLY_AREAS];
    view->poly_types = data + l.offset[A_POLY_TYPES];
    view->poly_nverts = data + l.offset[A_POLY_NVERTS];
    view->detail_meshes = (uint32_t*)(data + l.offset[A_DETAIL_MESHES]);
    view->detail_verts = (float*)(data + l.offset[A_DETAIL_VERTS]);
    view->detail_tris = data + l.offset[A_DETAIL_TRIS];
    view->bv = (nb_bv_node*)(data + l.offset[A_BV]);
    view->offmesh = (nb_offmesh_con*)(data + l.offset[A_OFFMESH]);
    return NB_OK;
}

/* ================================================================================================ */
/* Bake + build                                                                                     */
/* ================================================================================================ */

nb_status nb_bake_tile(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                       const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x, int32_t tile_z,
                       uint8_t** data, size_t* size, double stats[NB_STAT_COUNT])
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_bake_tile: ctx is NULL");
    return nb_bake_tile_as(ctx, input, config, links, link_count, tile_x, tile_z, 0, data, size, stats);
}

nb_status nb_bake_tile_as(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                          const nb_offmesh_link* links, uint32_t link_count, int32_t tile_x, int32_t tile_z,
                          int keep_all_links, uint8_t** data, size_t* size, double stats[NB_STAT_COUNT])
{
    if (!data || !size)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "nb_bake_tile: %s is NULL", !data ? "data" : "size");
    *data = NULL;
    *size = 0;
    nb_bake_result r;
    nb_status st = nb_bake(ctx, input, config, NB_STAGE_ALL, 0, &r);
    if (st != NB_OK)
        return st;
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = r.poly_mesh;
    tp.detail = r.detail;
    tp.links = links;
    tp.link_count = link_count;
    tp.tile_x = tile_x;
    tp.tile_z = tile_z;
    tp.walkable_height = r.config.agent_height;
    tp.walkable_radius = r.config.agent_radius;
    tp.walkable_climb = r.config.agent_max_climb;
    st = nb_tile_build_as(ctx, &tp, keep_all_links, data, size);
    if (st == NB_OK && stats)
        memcpy(stats, r.stats, sizeof(r.stats));
    nb_bake_result_release(ctx, &r);
    return st;
}
