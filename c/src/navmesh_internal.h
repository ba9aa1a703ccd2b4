/* Runtime structures shared by tile.c (blob build/validate/parse), navmesh.c (tiles, links),
 * serialize.c (save/load) and query.c. Not part of the public API. */
#ifndef NB_NAVMESH_INTERNAL_H
#define NB_NAVMESH_INTERNAL_H

#include "nb_internal.h"

#define NB_TILE_MAGIC 0x4c54424eu /* "NBTL" read as a little-endian uint32 */
#define NB_TILE_VERSION 1u
#define NB_NAVMESH_MAGIC 0x484d424eu /* "NBMH" */
#define NB_NAVMESH_VERSION 1u

#define NB_POLY_GROUND 0
#define NB_POLY_OFFMESH 1 /* a 2-vertex polygon standing for an off-mesh link (vertices = its two ends) */

/* Polygon neighbour codes inside a tile (poly_neis): */
#define NB_NEI_WALL 0          /* no neighbour */
#define NB_NEI_BORDER 0x8000   /* | side (0 = -x, 1 = +z, 2 = +x, 3 = -z): edge on the tile border */
/* otherwise 1..npolys: internal neighbour polygon index + 1 */

/* BV tree node, coordinates quantized: q = (world - tile bmin) * bv_quant, clamped to 0..65535 (bmin rounded
 * down, bmax up; the same bv_quant on all three axes). Nodes are stored depth first (a node, then its left
 * subtree, then its right subtree). i >= 0: a leaf for ground polygon i; i < 0: an inner node and -i = the
 * escape offset, the size of its subtree (itself included): node n's subtree ends just before node n - i.
 * Traversal: n = 0; while (n < nbv) { hit = overlap(bv[n]); if (leaf && hit) visit; n += (hit || leaf) ? 1 : -i; } */
typedef struct nb_bv_node {
    uint16_t bmin[3], bmax[3];
    int32_t i;
} nb_bv_node;

/* An off-mesh link as stored in a tile: its polygon (type NB_POLY_OFFMESH) is `poly`. */
typedef struct nb_offmesh_con {
    float pos[6]; /* start xyz, end xyz */
    float radius;
    uint16_t poly;
    uint8_t bidirectional;
    uint8_t side; /* 0xff when the end lies inside this tile, else the tile side (0..3) it lies beyond */
    uint32_t user_id;
} nb_offmesh_con;

/* A parsed, validated tile blob: pointers into the blob (which is 4-byte aligned). Polygon vertex indices
 * index verts. Detail mesh (Detour's convention): a detail triangle index i < poly_nverts[p] means the
 * polygon's own vertex i; otherwise detail_verts[detail_meshes[p*4 + 0] + i - poly_nverts[p]]. */
typedef struct nb_tile_view {
    int32_t tile_x, tile_z;
    uint32_t nverts, npolys, nvp, ndetail_verts, ndetail_tris, nbv, noffmesh;
    float bmin[3], bmax[3];
    float walkable_height, walkable_radius, walkable_climb;
    float bv_quant;
    float* verts;            /* nverts x xyz, world units */
    uint16_t* poly_verts;    /* npolys x nvp, NB_MESH_NULL_IDX padded */
    uint16_t* poly_neis;     /* npolys x nvp, codes above */
    uint16_t* poly_flags;    /* npolys (mutable: nb_navmesh_set_poly_flags) */
    uint8_t* poly_areas;     /* npolys */
    uint8_t* poly_types;     /* npolys */
    uint8_t* poly_nverts;    /* npolys */
    uint32_t* detail_meshes; /* npolys x (extra vert base, extra vert count, tri base, tri count) */
    float* detail_verts;     /* ndetail_verts x xyz */
    uint8_t* detail_tris;    /* ndetail_tris x (a, b, c, edge flags) */
    nb_bv_node* bv;          /* nbv */
    nb_offmesh_con* offmesh; /* noffmesh */
} nb_tile_view;

/* Validates and parses a blob in place (the view points into data, which must be 4-byte aligned). Statuses as
 * nb_tile_validate (NB_ERR_INVALID_ARG for misaligned data). _as names the calling function in messages. */
nb_status nb_tile_parse(nb_context* ctx, uint8_t* data, size_t size, nb_tile_view* view);
nb_status nb_tile_parse_as(nb_context* ctx, const char* fn, uint8_t* data, size_t size, nb_tile_view* view);
/* Recomputes a blob's CRC after its flags were changed in place. */
void nb_tile_update_crc(uint8_t* data, size_t size);
uint32_t nb_crc32(const uint8_t* data, size_t size);

/* ---- navmesh internals ---- */

#define NB_NULL_LINK 0xffffffffu

/* A link from a polygon edge to a neighbour polygon (same tile, another tile, or an off-mesh link). */
/* Kinds of links (a polygon's links form a list from first_link[poly] through next):
 *  - internal (poly_neis 1..npolys): edge = the edge, side 0xff;
 *  - border (NB_NEI_BORDER | side): edge = the edge, side = the tile side it crosses, nedge = the neighbour
 *    polygon's edge on the same grid line; the portal is where the two edges overlap (nb_link_span); every
 *    border link has a twin in the other direction over the same world segment;
 *  - off-mesh, from the link polygon: edge 0 = to the polygon its start lands on, edge 1 = to the polygon its
 *    end lands on; side 0xff, or the side crossed when the end lands in the neighbouring tile;
 *  - off-mesh, onto the link polygon (from the start's landing polygon always, from the end's landing polygon
 *    when bidirectional): edge 0xff (no edge of this polygon), side as above.
 *  Links other than border ones have nedge 0. */
#define NB_LINK_NO_EDGE 0xff
typedef struct nb_link {
    nb_poly_ref ref; /* the neighbour */
    uint32_t next;   /* next link of the same polygon, NB_NULL_LINK at the end */
    uint8_t edge;    /* edge index of this polygon (NB_LINK_NO_EDGE: a link onto an off-mesh polygon) */
    uint8_t side;    /* 0xff for a link inside the tile, else the tile side (0..3) it crosses */
    uint8_t nedge;   /* a border link's edge index of the neighbour, else 0 */
    uint8_t reserved; /* 0 */
} nb_link;

/* The part of the edge of a border link (a0..a1, on side `side` of its tile) that the neighbour's edge b0..b1 on
 * the same grid line covers, as fractions t0 <= t1 along a0..a1 (exact: portal ends are vertices of one edge or
 * the other, where a fraction kept in a byte put them up to half of 1/255 of the edge away, centimetres on long
 * edges). */
static inline void nb_border_span(const float* a0, const float* a1, const float* b0, const float* b1, int side,
                                  float* t0, float* t1)
{
    const int along = (side == 0 || side == 2) ? 2 : 0; /* the line is x = const for sides 0/2, z = const for 1/3 */
    const float da = a1[along] - a0[along];
    float u0 = (b0[along] - a0[along]) / da, u1 = (b1[along] - a0[along]) / da;
    if (u0 > u1) {
        const float tmp = u0;
        u0 = u1;
        u1 = tmp;
    }
    /* NaN-safe clamps */
    *t0 = u0 > 0.0f ? (u0 < 1.0f ? u0 : 1.0f) : 0.0f;
    *t1 = u1 > 0.0f ? (u1 < 1.0f ? u1 : 1.0f) : 0.0f;
}

/* The part of edge l->edge of ground polygon p (view v) that link l's portal covers, as fractions t0 <= t1 along
 * the edge: all of it (0, 1) but for a border link, whose neighbour (polygon np of view nv) may cover part. */
static inline void nb_link_span(const nb_tile_view* v, uint32_t p, const nb_link* l, const nb_tile_view* nv,
                                uint32_t np, float* t0, float* t1)
{
    *t0 = 0.0f;
    *t1 = 1.0f;
    if (l->side == 0xff)
        return;
    const uint32_t n = v->poly_nverts[p], nn = nv->poly_nverts[np];
    const uint16_t* pv = &v->poly_verts[(size_t)p * v->nvp];
    const uint16_t* npv = &nv->poly_verts[(size_t)np * nv->nvp];
    nb_border_span(&v->verts[(size_t)pv[l->edge] * 3], &v->verts[(size_t)pv[(l->edge + 1u) % n] * 3],
                   &nv->verts[(size_t)npv[l->nedge] * 3], &nv->verts[(size_t)npv[(l->nedge + 1u) % nn] * 3], l->side,
                   t0, t1);
}

typedef struct nb_tile {
    nb_tile_view v;
    uint8_t* data; /* the navmesh's own copy of the blob (NULL: free slot) */
    size_t size;
    uint32_t salt;
    /* The newest salt this slot has given (salt itself, unless an undone swap put an older tile back): the next
     * removal gives the one after it, so that the refs of a tile undone stay stale until the salts wrap. */
    uint32_t salt_top;
    uint32_t* first_link; /* npolys heads (NB_NULL_LINK = none) */
    nb_link* links;
    uint32_t nlinks;        /* entries of links handed out so far (live or on the free list) */
    uint32_t link_capacity; /* entries allocated */
    uint32_t free_link;     /* freed entries, chained through next; NB_NULL_LINK = none */
    int32_t next_in_bucket; /* slot index of the next tile in the same position-hash bucket, -1 = end */
    /* Every link between two of its ground polygons has its way back (its polygons' neighbours name each other, as
     * every bake's do; a file's may not): queries then need not look for it (border links come in pairs). */
    int mutual;
} nb_tile;

struct nb_navmesh {
    nb_navmesh_params params;
    nb_tile* tiles;      /* params.max_tiles slots; slot s is tiles[s - 1] */
    int32_t* buckets;    /* position hash: first slot index (0-based) per bucket, -1 = empty */
    uint32_t bucket_mask;
    uint32_t tile_count;
    uint32_t poly_count; /* npolys summed over the tiles */
    int32_t free_head;   /* free slot list through next_in_bucket, -1 = none */
    /* Off-mesh connections whose end lies two or more tiles from their own (landing_offset finds no tile around
     * theirs): the tile they land in, found when either tile is added and undone when either is removed. */
    struct nb_far_link* far;
    uint32_t far_count, far_capacity;
    /* Ref layout (navbake.h): the slot field is as wide as max_tiles needs, and the salt takes the bits left. */
    uint32_t tile_bits, salt_mask;
    /* The largest |x| or |z| of the bounds of every tile added so far (never lowered): how far out the navmesh's
     * coordinates go, for tolerances that follow float spacing there. */
    float coord_mag;
    /* Bumped by every change to the tiles or to polygon flags: queries keep what they derived from the navmesh
     * (the area table of random points) while it stays the same. */
    uint32_t generation;
};

typedef struct nb_far_link {
    uint32_t slot;            /* 0-based slot of the tile holding the connection */
    uint32_t k;               /* its index among that tile's connections */
    int32_t end_x, end_z;     /* the tile its end lies in */
} nb_far_link;

static inline nb_poly_ref nb_make_ref(const nb_navmesh* nav, uint32_t salt, uint32_t slot, uint32_t poly)
{
    return ((salt & nav->salt_mask) << (NB_POLY_BITS + nav->tile_bits)) | (slot << NB_POLY_BITS) | poly;
}
static inline uint32_t nb_ref_slot(const nb_navmesh* nav, nb_poly_ref ref)
{
    return (ref >> NB_POLY_BITS) & ((1u << nav->tile_bits) - 1);
}
static inline uint32_t nb_ref_poly(nb_poly_ref ref) { return ref & ((1u << NB_POLY_BITS) - 1); }
static inline uint32_t nb_ref_salt(const nb_navmesh* nav, nb_poly_ref ref) { return ref >> (NB_POLY_BITS + nav->tile_bits); }

/* Resolves a ref: the tile and polygon index, or NULL for 0, an empty slot, a stale salt, an index out of
 * range. */
const nb_tile* nb_navmesh_resolve(const nb_navmesh* nav, nb_poly_ref ref, uint32_t* poly);
/* The ref of polygon `poly` of `tile` (a tile of nav). */
nb_poly_ref nb_navmesh_ref_of(const nb_navmesh* nav, const nb_tile* tile, uint32_t poly);
/* The tile at a grid position, or NULL. */
const nb_tile* nb_navmesh_tile_at(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z);
/* Where a tile lives: its slot and salt, which make its polygons' refs. */
typedef struct nb_tile_place {
    uint32_t slot, salt;
} nb_tile_place;
/* The place of the tile at (tile_x, tile_z): 1, or 0 when there is none. */
int nb_navmesh_tile_place(const nb_navmesh* nav, int32_t tile_x, int32_t tile_z, nb_tile_place* place);
/* nb_navmesh_add_tile into a free slot with a salt of the caller's choice: a caller that removed a tile and must put
 * it back (a failed replacement rolled back) gives the place the tile had, so that its refs are what they were and
 * the refs held by the application stay valid. */
nb_status nb_navmesh_add_tile_back(nb_context* ctx, nb_navmesh* nav, const uint8_t* data, size_t size,
                                   const nb_tile_place* place);
/* Replacing a tile so that it can be undone without allocating (an update of several tiles rolled back when a later
 * one fails, even with memory exhausted). nb_navmesh_swap_tile replaces the tile at (tile_x, tile_z) by data (whose
 * position must be that one), adds it where there is none, or removes the tile there when data is NULL; on failure the
 * navmesh is as it was. *undo is then what nb_navmesh_swap_undo needs to put everything back as it was (the old tile
 * in its slot with its salt, every link, the link order), or NULL when there was nothing to do. Undos must come in the
 * reverse order of their swaps, with nothing else changing the navmesh's tiles in between; nb_navmesh_swap_done keeps
 * the swap (frees the old tile). Both accept NULL. */
typedef struct nb_tile_undo nb_tile_undo;
nb_status nb_navmesh_swap_tile(nb_context* ctx, nb_navmesh* nav, int32_t tile_x, int32_t tile_z, const uint8_t* data,
                               size_t size, nb_tile_undo** undo);
void nb_navmesh_swap_undo(nb_context* ctx, nb_navmesh* nav, nb_tile_undo* undo);
void nb_navmesh_swap_done(nb_context* ctx, nb_tile_undo* undo);
/* The blob of the tile a swap replaced (size in *size), or NULL when it replaced none. */
uint8_t* nb_tile_undo_old(const nb_tile_undo* undo, size_t* size);
/* Flags set on the polygons of old_data (a copy of the tile's blob before a rebuild, parsed in place) go to the
 * polygons of the tile now at (tile_x, tile_z) that are the same polygons: of the same type, with the same vertices
 * in the same order. Returns how many polygons' flags changed (the tile's checksum is made right again). */
int nb_navmesh_keep_flags(nb_navmesh* nav, int32_t tile_x, int32_t tile_z, uint8_t* old_data, size_t old_size);

/* nb_navmesh_load's checks of a file's header alone: header holds the file's first min(size, 48) bytes (all it
 * reads), size is the whole file's. The same statuses and messages as nb_navmesh_load for a bad header, without the
 * file in memory (wasm: a file is checked before it is copied into the heap, which never shrinks). */
nb_status nb_navmesh_check_header(nb_context* ctx, const uint8_t* header, size_t size);

/* Grid cell of a world position (floor((x - origin.x) / tile_width), same for z). */
void nb_navmesh_tile_coords(const nb_navmesh* nav, const float pos[3], int32_t* tile_x, int32_t* tile_z);

#endif
