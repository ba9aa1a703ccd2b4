/* The WebAssembly exports of inspect() (web/src/inspect.ts): one bake that keeps every intermediate stage, and
 * flat copies of what the debug views draw (walkable spans with their region ids, contours) into buffers the
 * TypeScript side sizes from nbw_inspect_info. Emscripten builds only: the Makefile compiles every C file of c/src
 * natively too, and this file has nothing to offer there. */
#ifdef __EMSCRIPTEN__

#include "bake_internal.h"
#include "wasm_internal.h"

#include <emscripten.h>
#include <stdlib.h>

/* Each block carries its size in a header, so the free hook can keep the running total; 16 bytes keep the
 * payload as aligned as malloc's own. */
#define NBW_TRACK_HEADER 16

typedef struct nbw_track {
    size_t current; /* bytes the bake holds now */
    size_t peak;    /* most it held at once */
} nbw_track;

static void* track_alloc(void* user, size_t size)
{
    nbw_track* t = (nbw_track*)user;
    if (size > SIZE_MAX - NBW_TRACK_HEADER)
        return NULL;
    unsigned char* p = (unsigned char*)malloc(size + NBW_TRACK_HEADER);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof(size));
    t->current += size;
    if (t->current > t->peak)
        t->peak = t->current;
    return p + NBW_TRACK_HEADER;
}

static void track_free(void* user, void* ptr)
{
    if (!ptr)
        return;
    nbw_track* t = (nbw_track*)user;
    unsigned char* p = (unsigned char*)ptr - NBW_TRACK_HEADER;
    size_t size;
    memcpy(&size, p, sizeof(size));
    t->current -= size;
    free(p);
}

/* One inspected bake. The result lives in its own context (whose allocator measures the bake's memory), so it
 * is freed with that context, whatever the caller's context does meanwhile. */
typedef struct nbw_inspection {
    nbw_track track;
    nb_context* ctx;
    nb_bake_result result;
    int32_t tile_x, tile_z; /* -1, -1 for a solo bake of the whole level */
} nbw_inspection;

/* Indices of nbw_inspect_info's output (web/src/wasm.ts reads them by the same numbers). */
enum {
    INFO_ORIGIN = 0,        /* 3: world position of cell (0, 0)'s minimum corner, the grid's floor */
    INFO_MAX = 3,           /* 3: the opposite corner: width, top of the bounds, height */
    INFO_CELL_SIZE = 6,
    INFO_CELL_HEIGHT = 7,
    INFO_WIDTH = 8,         /* cells along x and z of the tile proper (border left out) */
    INFO_HEIGHT = 9,
    INFO_BORDER = 10,
    INFO_REGION_IDS = 11,   /* chf->max_regions: ids are 1..this-1 */
    INFO_SPANS = 12,        /* walkable spans of the tile proper */
    INFO_CONTOURS = 13,
    INFO_CONTOUR_VERTS = 14,
    INFO_RAW_VERTS = 15,
    INFO_PEAK_BYTES = 16,
    INFO_TILE_X = 17,
    INFO_TILE_Z = 18,
    INFO_COUNT = 19
};

EMSCRIPTEN_KEEPALIVE int nbw_inspect_info_count(void) { return INFO_COUNT; }

EMSCRIPTEN_KEEPALIVE void nbw_inspect_free(nbw_inspection* insp)
{
    if (!insp)
        return;
    nb_bake_result_release(insp->ctx, &insp->result);
    nb_context_destroy(insp->ctx);
    free(insp);
}

/* Bakes every stage up to the detail mesh and keeps them all (volumes: bake-time area volumes, optional).
 * tile_x < 0: a solo bake of the whole level (the config's tile_size is ignored); else tile (tile_x, tile_z) of
 * the tiled grid, with the bounds, border and triangles nb_bake_grid_tile gives it. links change no stage kept, but
 * are checked as the bake of the same level checks them (a link bake() refuses is refused here too). Progress goes to
 * ctx's callback. Returns NULL with the status and message in ctx on failure. */
EMSCRIPTEN_KEEPALIVE nbw_inspection* nbw_inspect(nb_context* ctx, const float* positions, uint32_t vertex_count,
                                                 const uint32_t* indices, uint32_t triangle_count,
                                                 const uint8_t* areas, const nb_volume* volumes,
                                                 uint32_t volume_count, const nb_offmesh_link* links,
                                                 uint32_t link_count, const double* config, int32_t tile_x,
                                                 int32_t tile_z)
{
    static const char* fn = "nbw_inspect";
    nb_grid_tile_input sel;
    memset(&sel, 0, sizeof(sel));
    nbw_inspection* insp = (nbw_inspection*)calloc(1, sizeof(nbw_inspection));
    if (!insp) {
        nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'inspection' (%u)", fn, (unsigned)sizeof(nbw_inspection));
        return NULL;
    }
    insp->tile_x = tile_x < 0 ? -1 : tile_x;
    insp->tile_z = tile_x < 0 ? -1 : tile_z;
    nb_context_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.allocator.alloc = track_alloc;
    desc.allocator.free = track_free;
    desc.allocator.user = &insp->track;
    desc.progress = ctx->progress;
    desc.progress_user = ctx->progress_user;
    insp->ctx = nb_context_create(&desc);
    if (!insp->ctx) {
        free(insp);
        nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'context'", fn);
        return NULL;
    }
    insp->track.peak = insp->track.current; /* the bake's memory, not the context's */
    nb_context* ictx = insp->ctx;

    nb_config cfg;
    nbw_config_from_values(config, &cfg);
    nb_bake_input input = nbw_input(positions, vertex_count, indices, triangle_count, areas, volumes, volume_count);

    nb_status st = NB_OK;
    if (tile_x >= 0) {
        nb_config resolved;
        nb_config_cells cells;
        nb_navmesh_params params;
        int32_t ntx = 0, ntz = 0;
        st = nb_config_resolve(ictx, &cfg, &resolved, &cells);
        if (st != NB_OK)
            goto cleanup;
        if (resolved.tile_size <= 0) {
            st = nb_fail(ictx, NB_ERR_INVALID_CONFIG, "%s: tile (%d, %d) asked of a solo config (tile_size 0)", fn,
                         tile_x, tile_z);
            goto cleanup;
        }
        /* validates the mesh, its bounds and the config as the tiled bake does */
        st = nb_bake_grid(ictx, &input, &cfg, &params, &ntx, &ntz);
        if (st != NB_OK)
            goto cleanup;
        if (tile_z < 0 || tile_x >= ntx || tile_z >= ntz) {
            st = nb_fail(ictx, NB_ERR_INVALID_ARG, "%s: tile (%d, %d) is outside the %d x %d grid", fn, tile_x, tile_z,
                         ntx, ntz);
            goto cleanup;
        }
        float bmin[3], bmax[3];
        nb_grid_mesh_bounds(&input, bmin, bmax); /* the level's, as nb_bake_grid computed them */
        const float border = (float)(cells.walkable_radius + 3) * resolved.cell_size;
        st = nb_links_check(ictx, fn, links, link_count, bmin, bmax, &params, ntx, ntz, border);
        if (st != NB_OK)
            goto cleanup;
        st = nb_grid_tile_select(ictx, fn, &input, &resolved, &cells, &params, bmax, tile_x, tile_z, &sel);
        if (st != NB_OK)
            goto cleanup;
        if (sel.tri_count == 0) {
            st = nb_fail(ictx, NB_ERR_EMPTY_MESH, "%s: tile (%d, %d) has no triangles", fn, tile_x, tile_z);
            goto cleanup;
        }
        input = sel.in;
    } else if (link_count) {
        nb_navmesh_params params;
        int32_t ntx = 0, ntz = 0;
        nb_config solo = cfg;
        solo.tile_size = 0;
        st = nb_bake_grid(ictx, &input, &solo, &params, &ntx, &ntz); /* validates the mesh and its bounds */
        if (st != NB_OK)
            goto cleanup;
        float bmin[3], bmax[3];
        nb_grid_mesh_bounds(&input, bmin, bmax);
        st = nb_links_check(ictx, fn, links, link_count, bmin, bmax, NULL, 1, 1, 0.0f);
        if (st != NB_OK)
            goto cleanup;
    }
    /* The caller's config, not the resolved one: resolving twice would turn explicit zeros into defaults. */
    st = nb_bake(ictx, &input, &cfg, NB_STAGE_DETAIL, NB_KEEP_ALL, &insp->result);

cleanup:
    nb_grid_tile_input_release(ictx, &sel);
    if (st != NB_OK) {
        nb_fail(ctx, st, "%s", nb_context_message(ictx));
        nbw_inspect_free(insp);
        return NULL;
    }
    return insp;
}

EMSCRIPTEN_KEEPALIVE double nbw_inspect_stat(const nbw_inspection* insp, int i)
{
    return insp && i >= 0 && i < NB_STAT_COUNT ? insp->result.stats[i] : -1.0;
}

/* Whether span column (x, z) of chf lies in the tile proper (outside the border baked around a tile). */
static int in_tile(const nb_compact_heightfield* chf, int32_t x, int32_t z)
{
    const int32_t b = chf->border_size;
    return x >= b && z >= b && x < chf->width - b && z < chf->height - b;
}

/* out: INFO_COUNT doubles (the INFO_* layout above). */
EMSCRIPTEN_KEEPALIVE void nbw_inspect_info(const nbw_inspection* insp, double* out)
{
    memset(out, 0, INFO_COUNT * sizeof(double));
    const nb_compact_heightfield* chf = insp->result.compact;
    const nb_contour_set* cset = insp->result.contours;
    const float border = (float)chf->border_size * chf->cell_size;
    out[INFO_ORIGIN + 0] = chf->bmin[0] + border;
    out[INFO_ORIGIN + 1] = chf->bmin[1];
    out[INFO_ORIGIN + 2] = chf->bmin[2] + border;
    /* The far corner of the last cell (the bounds rounded to whole cells, as the grid size is), not the bounds. */
    const int32_t width = chf->width - 2 * chf->border_size;
    const int32_t height = chf->height - 2 * chf->border_size;
    /* in float, as every other coordinate here (and the tile's bounds in the navmesh) is */
    out[INFO_MAX + 0] = chf->bmin[0] + border + (float)width * chf->cell_size;
    out[INFO_MAX + 1] = chf->bmax[1];
    out[INFO_MAX + 2] = chf->bmin[2] + border + (float)height * chf->cell_size;
    out[INFO_CELL_SIZE] = chf->cell_size;
    out[INFO_CELL_HEIGHT] = chf->cell_height;
    out[INFO_WIDTH] = width;
    out[INFO_HEIGHT] = height;
    out[INFO_BORDER] = chf->border_size;
    out[INFO_REGION_IDS] = chf->max_regions;
    uint32_t spans = 0;
    for (int32_t z = 0; z < chf->height; ++z)
        for (int32_t x = 0; x < chf->width; ++x) {
            if (!in_tile(chf, x, z))
                continue;
            const nb_compact_cell* c = &chf->cells[x + z * chf->width];
            for (uint32_t i = c->index; i < c->index + c->count; ++i)
                spans += chf->areas[i] != NB_NULL_AREA;
        }
    out[INFO_SPANS] = spans;
    double verts = 0, raw = 0;
    for (int32_t i = 0; i < cset->nconts; ++i) {
        verts += cset->conts[i].nverts;
        raw += cset->conts[i].nraw_verts;
    }
    out[INFO_CONTOURS] = cset->nconts;
    out[INFO_CONTOUR_VERTS] = verts;
    out[INFO_RAW_VERTS] = raw;
    out[INFO_PEAK_BYTES] = (double)insp->track.peak;
    out[INFO_TILE_X] = insp->tile_x;
    out[INFO_TILE_Z] = insp->tile_z;
}

/* The walkable spans of the tile proper, column by column (z rows, then x), bottom up: cell x, z (from the tile's
 * minimum corner), floor y [cells above the grid's floor], area id, region id (0 = none). Each array holds
 * INFO_SPANS entries. */
EMSCRIPTEN_KEEPALIVE void nbw_inspect_spans(const nbw_inspection* insp, uint16_t* xs, uint16_t* zs, uint16_t* ys,
                                            uint8_t* area_ids, uint16_t* regions)
{
    const nb_compact_heightfield* chf = insp->result.compact;
    const int32_t b = chf->border_size;
    uint32_t n = 0;
    for (int32_t z = 0; z < chf->height; ++z)
        for (int32_t x = 0; x < chf->width; ++x) {
            if (!in_tile(chf, x, z))
                continue;
            const nb_compact_cell* c = &chf->cells[x + z * chf->width];
            for (uint32_t i = c->index; i < c->index + c->count; ++i) {
                if (chf->areas[i] == NB_NULL_AREA)
                    continue;
                xs[n] = (uint16_t)(x - b);
                zs[n] = (uint16_t)(z - b);
                ys[n] = chf->spans[i].y;
                area_ids[n] = chf->areas[i];
                regions[n] = chf->spans[i].reg;
                ++n;
            }
        }
}

static void contour_world(const nb_contour_set* cset, const int32_t* v, float* out)
{
    out[0] = cset->bmin[0] + (float)v[0] * cset->cell_size;
    out[1] = cset->bmin[1] + (float)v[1] * cset->cell_height;
    out[2] = cset->bmin[2] + (float)v[2] * cset->cell_size;
}

/* Per contour: region id, area id, and its simplified and raw vertices in world units (y = the floor), each list
 * indexed by offsets (INFO_CONTOURS + 1 entries, in vertices). */
EMSCRIPTEN_KEEPALIVE void nbw_inspect_contours(const nbw_inspection* insp, uint16_t* regions, uint8_t* area_ids,
                                               uint32_t* offsets, float* verts, uint32_t* raw_offsets,
                                               float* raw_verts)
{
    const nb_contour_set* cset = insp->result.contours;
    uint32_t nv = 0, nraw = 0;
    for (int32_t i = 0; i < cset->nconts; ++i) {
        const nb_contour* c = &cset->conts[i];
        regions[i] = c->reg;
        area_ids[i] = c->area;
        offsets[i] = nv;
        raw_offsets[i] = nraw;
        for (int32_t k = 0; k < c->nverts; ++k, ++nv)
            contour_world(cset, &c->verts[k * 4], &verts[(size_t)nv * 3]);
        for (int32_t k = 0; k < c->nraw_verts; ++k, ++nraw)
            contour_world(cset, &c->raw_verts[k * 4], &raw_verts[(size_t)nraw * 3]);
    }
    offsets[cset->nconts] = nv;
    raw_offsets[cset->nconts] = nraw;
}

#endif /* __EMSCRIPTEN__ */
