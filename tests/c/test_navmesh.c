/* The navmesh: refs, internal links, cross-tile links (symmetric, independent of the add order), removal, off-mesh
 * links one-way and both ways, within a tile and across tiles, errors, and all-or-nothing adds under failing
 * allocations. */
#include "navbake.h"
#include "nbtest_level.h"
#include "obj.h"
#include "../../c/src/navmesh_internal.h"

static nb_context* ctx;
static nb_obj dungeon;
static int have_dungeon;

/* ---- a level baked as a grid of 64-cell tiles ---- */

#define TILE_CELLS 64
#define MAX_LEVEL_TILES 64

typedef struct tiled_level {
    uint8_t* blob[MAX_LEVEL_TILES];
    size_t size[MAX_LEVEL_TILES];
    int32_t tx[MAX_LEVEL_TILES], tz[MAX_LEVEL_TILES];
    uint32_t npolys[MAX_LEVEL_TILES];
    int count, grid_x, grid_z;
    uint32_t total_polys;
    float origin[3], tile_size, ymin, ymax;
} tiled_level;

static tiled_level level;

/* Bakes tile (tx, tz) of the level's grid with optional off-mesh links. */
static nb_status bake_grid_tile(const nb_obj* obj, const tiled_level* L, int32_t tx, int32_t tz,
                                const nb_offmesh_link* links, uint32_t nlinks, uint8_t** blob, size_t* size,
                                double* stats)
{
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.tile_size = TILE_CELLS;
    nb_bake_input in = nb_obj_bake_input(obj);
    const float bmin[3] = { L->origin[0] + tx * L->tile_size, L->ymin, L->origin[2] + tz * L->tile_size };
    const float bmax[3] = { bmin[0] + L->tile_size, L->ymax, bmin[2] + L->tile_size };
    in.bmin = bmin;
    in.bmax = bmax;
    in.border_size = 2 + 3; /* walkable_radius (ceil(0.6 / 0.3)) + 3 */
    return nb_bake_tile(ctx, &in, &cfg, links, nlinks, tx, tz, blob, size, stats);
}

static void bake_tiled(const nb_obj* obj, tiled_level* L)
{
    memset(L, 0, sizeof(*L));
    float bmin[3], bmax[3];
    memcpy(bmin, obj->positions, sizeof(bmin));
    memcpy(bmax, obj->positions, sizeof(bmax));
    for (uint32_t i = 1; i < obj->vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            bmin[k] = fminf(bmin[k], obj->positions[i * 3 + k]);
            bmax[k] = fmaxf(bmax[k], obj->positions[i * 3 + k]);
        }
    memcpy(L->origin, bmin, sizeof(bmin));
    L->tile_size = TILE_CELLS * 0.3f;
    L->ymin = bmin[1];
    L->ymax = bmax[1];
    L->grid_x = (int)ceilf((bmax[0] - bmin[0]) / L->tile_size);
    L->grid_z = (int)ceilf((bmax[2] - bmin[2]) / L->tile_size);
    for (int tz = 0; tz < L->grid_z; ++tz)
        for (int tx = 0; tx < L->grid_x; ++tx) {
            uint8_t* blob;
            size_t size;
            double stats[NB_STAT_COUNT];
            CHECK_INT(bake_grid_tile(obj, L, tx, tz, NULL, 0, &blob, &size, stats), NB_OK);
            if (stats[NB_STAT_POLYS] <= 0 || L->count == MAX_LEVEL_TILES) {
                nb_bytes_free(ctx, blob);
                continue;
            }
            L->blob[L->count] = blob;
            L->size[L->count] = size;
            L->tx[L->count] = tx;
            L->tz[L->count] = tz;
            L->npolys[L->count] = (uint32_t)stats[NB_STAT_POLYS];
            L->total_polys += (uint32_t)stats[NB_STAT_POLYS];
            L->count++;
        }
}

static void free_tiled(tiled_level* L)
{
    for (int i = 0; i < L->count; ++i)
        nb_bytes_free(ctx, L->blob[i]);
    memset(L, 0, sizeof(*L));
}

static int level_index(const tiled_level* L, int32_t tx, int32_t tz)
{
    for (int i = 0; i < L->count; ++i)
        if (L->tx[i] == tx && L->tz[i] == tz)
            return i;
    return -1;
}

static nb_navmesh* level_navmesh(nb_context* c, const tiled_level* L)
{
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    memcpy(p.origin, L->origin, sizeof(p.origin));
    p.tile_width = p.tile_depth = L->tile_size;
    p.max_tiles = 128;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(c, &p, &nav), NB_OK);
    return nav;
}

/* ---- link snapshots, independent of slots and salts ---- */

typedef struct link_rec {
    int32_t ax, az;
    uint32_t apoly;
    int32_t edge, side, nedge, reserved;
    int32_t bx, bz;
    uint32_t bpoly;
} link_rec;

static int cmp_rec(const void* pa, const void* pb)
{
    const int32_t* a = (const int32_t*)pa;
    const int32_t* b = (const int32_t*)pb;
    for (size_t i = 0; i < sizeof(link_rec) / 4; ++i)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* All links, sorted; every link's ref must resolve (else *bad is counted). */
static link_rec* snapshot(const nb_navmesh* nav, uint32_t* count, int* bad)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        for (uint32_t p = 0; p < t->v.npolys; ++p)
            for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next)
                ++n;
    }
    link_rec* recs = (link_rec*)calloc(n ? n : 1, sizeof(link_rec));
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
                link_rec* r = &recs[k++];
                r->ax = t->v.tile_x;
                r->az = t->v.tile_z;
                r->apoly = p;
                r->edge = l->edge;
                r->side = l->side;
                r->nedge = l->nedge;
                r->reserved = l->reserved;
                if (!bt) {
                    ++*bad;
                    continue;
                }
                r->bx = bt->v.tile_x;
                r->bz = bt->v.tile_z;
                r->bpoly = bp;
            }
    }
    qsort(recs, n, sizeof(link_rec), cmp_rec);
    *count = n;
    return recs;
}

static int same_snapshot(const link_rec* a, uint32_t na, const link_rec* b, uint32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof(link_rec)) == 0);
}

/* Links of one polygon leading to `to` (any edge). */
static int count_links_to(const nb_navmesh* nav, nb_poly_ref from, nb_poly_ref to, int edge)
{
    uint32_t p;
    const nb_tile* t = nb_navmesh_resolve(nav, from, &p);
    if (!t)
        return -1;
    int n = 0;
    for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next)
        n += t->links[li].ref == to && (edge < 0 || t->links[li].edge == edge);
    return n;
}

static void poly_center(const nb_tile* t, uint32_t p, float c[3])
{
    c[0] = c[1] = c[2] = 0;
    const uint32_t n = t->v.poly_nverts[p];
    for (uint32_t j = 0; j < n; ++j)
        for (int a = 0; a < 3; ++a)
            c[a] += t->v.verts[t->v.poly_verts[p * t->v.nvp + j] * 3 + a] / (float)n;
}

/* ---- tests ---- */

static void test_solo_tile_refs_and_internal_links(void)
{
    if (!have_dungeon)
        return;
    nb_bake_input in = nb_obj_bake_input(&dungeon);
    uint8_t* blob;
    size_t size;
    CHECK_INT(nb_bake_tile(ctx, &in, NULL, NULL, 0, 0, 0, &blob, &size, NULL), NB_OK);
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    p.tile_width = p.tile_depth = 1000;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &p, &nav), NB_OK);
    CHECK_INT(nb_navmesh_get_params(nav)->max_tiles, NB_MAX_TILES);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, blob, size), NB_OK);
    CHECK_INT(nb_navmesh_tile_count(nav), 1);
    /* the navmesh keeps its own copy */
    const uint8_t* own;
    size_t own_size;
    CHECK_INT(nb_navmesh_tile_data(nav, 0, 0, &own, &own_size), NB_OK);
    CHECK(own != blob && own_size == size && memcmp(own, blob, size) == 0);
    memset(blob, 0, size);
    nb_bytes_free(ctx, blob);

    const nb_tile* t = nb_navmesh_tile_at(nav, 0, 0);
    CHECK(t != NULL);
    uint32_t count = 0;
    CHECK_STATUS(ctx, nb_navmesh_poly_refs(ctx, nav, NULL, 0, &count), NB_ERR_BUFFER_TOO_SMALL, "capacity");
    CHECK_INT(count, t->v.npolys);
    nb_poly_ref* refs = (nb_poly_ref*)malloc(count * sizeof(nb_poly_ref));
    CHECK_STATUS(ctx, nb_navmesh_poly_refs(ctx, nav, refs, count - 1, &count), NB_ERR_BUFFER_TOO_SMALL, "capacity");
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, refs, count, &count), NB_OK);
    int bad = 0, internal = 0, links_ok = 1;
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t poly = 99999;
        bad += nb_navmesh_resolve(nav, refs[i], &poly) != t || poly != i || refs[i] == 0;
        bad += nb_navmesh_ref_of(nav, t, i) != refs[i];
        float verts[NB_MAX_VERTS_PER_POLY * 3];
        int32_t nv = 0;
        uint8_t area = 0;
        uint16_t flags = 0;
        int off = -1;
        bad += nb_navmesh_poly(nav, refs[i], verts, &nv, &area, &flags, &off) != NB_OK;
        bad += nv != t->v.poly_nverts[i] || area != t->v.poly_areas[i] || flags != t->v.poly_flags[i] || off != 0;
        for (int j = 0; j < nv; ++j)
            bad += memcmp(&verts[j * 3], &t->v.verts[t->v.poly_verts[i * t->v.nvp + j] * 3], 12) != 0;
        /* one link per internal edge, to the right polygon, over the whole edge */
        for (uint32_t j = 0; j < t->v.poly_nverts[i]; ++j) {
            const uint16_t nei = t->v.poly_neis[i * t->v.nvp + j];
            const int want = nei != NB_NEI_WALL && !(nei & NB_NEI_BORDER);
            internal += want;
            if (want)
                links_ok &= count_links_to(nav, refs[i], refs[nei - 1], (int)j) == 1;
        }
    }
    CHECK_INT(bad, 0);
    CHECK(links_ok);
    uint32_t n;
    link_rec* recs = snapshot(nav, &n, &bad);
    CHECK_INT(n, (uint32_t)internal);
    CHECK_INT(bad, 0);
    for (uint32_t i = 0; i < n; ++i)
        CHECK(recs[i].side == 0xff && recs[i].nedge == 0 && recs[i].reserved == 0);
    free(recs);

    /* refs the navmesh does not know */
    CHECK(nb_navmesh_resolve(nav, 0, NULL) == NULL);
    CHECK(nb_navmesh_resolve(nav, refs[0] + count, NULL) == NULL);               /* polygon index */
    CHECK(nb_navmesh_resolve(nav, refs[0] ^ (1u << NB_POLY_BITS << 1), NULL) == NULL); /* empty slot */
    CHECK(nb_navmesh_resolve(nav, refs[0] ^ (1u << 31), NULL) == NULL);           /* salt */
    CHECK_INT(nb_navmesh_poly(nav, refs[0] ^ (1u << 31), NULL, NULL, NULL, NULL, NULL), NB_ERR_NOT_FOUND);
    free(refs);

    float pos[3] = { 999.0f, 0, -0.5f };
    int32_t tx, tz;
    nb_navmesh_tile_coords(nav, pos, &tx, &tz);
    CHECK(tx == 0 && tz == -1);
    nb_navmesh_destroy(ctx, nav);
}

/* Every border link A->B has a twin B->A over the same world segment. */
static void check_border_symmetry(const nb_navmesh* nav, int* border_links)
{
    int asym = 0, nborder = 0, badside = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        for (uint32_t p = 0; p < t->v.npolys; ++p)
            for (uint32_t li = t->first_link[p]; li != NB_NULL_LINK; li = t->links[li].next) {
                const nb_link* l = &t->links[li];
                uint32_t bp;
                const nb_tile* bt = nb_navmesh_resolve(nav, l->ref, &bp);
                if (l->side == 0xff || t->v.poly_types[p] != NB_POLY_GROUND || bt->v.poly_types[bp] != NB_POLY_GROUND)
                    continue;
                ++nborder;
                /* the neighbour is the grid neighbour across the side */
                const int dx = l->side == 0 ? -1 : l->side == 2 ? 1 : 0, dz = l->side == 3 ? -1 : l->side == 1 ? 1 : 0;
                badside += bt->v.tile_x != t->v.tile_x + dx || bt->v.tile_z != t->v.tile_z + dz;
                badside += t->v.poly_neis[p * t->v.nvp + l->edge] != (NB_NEI_BORDER | l->side);
                const uint32_t na = t->v.poly_nverts[p];
                const float* a0 = &t->v.verts[t->v.poly_verts[p * t->v.nvp + l->edge] * 3];
                const float* a1 = &t->v.verts[t->v.poly_verts[p * t->v.nvp + (l->edge + 1) % na] * 3];
                const int along = (l->side == 0 || l->side == 2) ? 2 : 0;
                float ta0, ta1;
                nb_link_span(&t->v, p, l, &bt->v, bp, &ta0, &ta1);
                const float as = a0[along] + (a1[along] - a0[along]) * ta0;
                const float ae = a0[along] + (a1[along] - a0[along]) * ta1;
                int twins = 0;
                const nb_poly_ref back = nb_navmesh_ref_of(nav, t, p);
                for (uint32_t lj = bt->first_link[bp]; lj != NB_NULL_LINK; lj = bt->links[lj].next) {
                    const nb_link* m = &bt->links[lj];
                    if (m->ref != back || m->side != ((l->side + 2) & 3))
                        continue;
                    const uint32_t nb = bt->v.poly_nverts[bp];
                    const float* b0 = &bt->v.verts[bt->v.poly_verts[bp * bt->v.nvp + m->edge] * 3];
                    const float* b1 = &bt->v.verts[bt->v.poly_verts[bp * bt->v.nvp + (m->edge + 1) % nb] * 3];
                    float tb0, tb1;
                    nb_link_span(&bt->v, bp, m, &t->v, p, &tb0, &tb1);
                    const float bs = b0[along] + (b1[along] - b0[along]) * tb0;
                    const float be = b0[along] + (b1[along] - b0[along]) * tb1;
                    const float tol = 1e-4f; /* the same segment, up to float noise */
                    if (fabsf(fminf(as, ae) - fminf(bs, be)) <= tol && fabsf(fmaxf(as, ae) - fmaxf(bs, be)) <= tol &&
                        fabsf(a0[2 - along] - b0[2 - along]) < 1e-3f)
                        ++twins;
                }
                asym += twins != 1;
            }
    }
    CHECK_INT(asym, 0);
    CHECK_INT(badside, 0);
    *border_links = nborder;
}

static void test_tiled_level_links_are_symmetric(void)
{
    if (!level.count)
        return;
    printf("  dungeon tiled (64 cells): %d of %d x %d tiles with polygons, %u polys (reference 12 / 111)\n",
           level.count, level.grid_x, level.grid_z, level.total_polys);
    CHECK(level.count >= 8);
    nb_navmesh* nav = level_navmesh(ctx, &level);
    for (int i = 0; i < level.count; ++i)
        CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[i], level.size[i]), NB_OK);
    CHECK_INT(nb_navmesh_tile_count(nav), level.count);
    CHECK_INT(nb_navmesh_poly_count(nav), level.total_polys);
    int nborder = 0;
    check_border_symmetry(nav, &nborder);
    CHECK(nborder > 20);
    printf("  %d border links\n", nborder);

    /* the same links whatever the order of the adds */
    uint32_t n1, n2;
    int bad = 0;
    link_rec* a = snapshot(nav, &n1, &bad);
    nb_navmesh* rev = level_navmesh(ctx, &level);
    for (int i = level.count - 1; i >= 0; --i)
        CHECK_INT(nb_navmesh_add_tile(ctx, rev, level.blob[i], level.size[i]), NB_OK);
    link_rec* b = snapshot(rev, &n2, &bad);
    CHECK(same_snapshot(a, n1, b, n2));
    CHECK_INT(bad, 0);
    free(a);
    free(b);
    nb_navmesh_destroy(ctx, rev);
    nb_navmesh_destroy(ctx, nav);
}

static void test_remove_tile_removes_exactly_its_links(void)
{
    if (!level.count)
        return;
    nb_navmesh* nav = level_navmesh(ctx, &level);
    for (int i = 0; i < level.count; ++i)
        CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[i], level.size[i]), NB_OK);
    /* the tile with the most neighbours */
    int best = 0, best_n = -1;
    for (int i = 0; i < level.count; ++i) {
        int n = 0;
        for (int s = 0; s < 4; ++s)
            n += level_index(&level, level.tx[i] + (s == 2) - (s == 0), level.tz[i] + (s == 1) - (s == 3)) >= 0;
        if (n > best_n) {
            best_n = n;
            best = i;
        }
    }
    const int32_t tx = level.tx[best], tz = level.tz[best];
    uint32_t n_before, n_after;
    int bad = 0;
    link_rec* before = snapshot(nav, &n_before, &bad);
    const nb_tile* t = nb_navmesh_tile_at(nav, tx, tz);
    const nb_poly_ref old_ref = nb_navmesh_ref_of(nav, t, 0);
    CHECK_INT(nb_navmesh_remove_tile(ctx, nav, tx, tz), NB_OK);
    CHECK_INT(nb_navmesh_tile_count(nav), level.count - 1);
    CHECK(nb_navmesh_tile_at(nav, tx, tz) == NULL);
    link_rec* after = snapshot(nav, &n_after, &bad);
    CHECK_INT(bad, 0);
    /* expected: the links before that neither start nor end in the removed tile */
    uint32_t kept = 0, into = 0;
    link_rec* expect = (link_rec*)calloc(n_before, sizeof(link_rec));
    for (uint32_t i = 0; i < n_before; ++i) {
        const int from = before[i].ax == tx && before[i].az == tz;
        const int to = before[i].bx == tx && before[i].bz == tz;
        into += to && !from;
        if (!from && !to)
            expect[kept++] = before[i];
    }
    CHECK(into > 0);
    CHECK(same_snapshot(expect, kept, after, n_after));
    /* stale refs */
    CHECK(nb_navmesh_resolve(nav, old_ref, NULL) == NULL);
    CHECK_STATUS(ctx, nb_navmesh_remove_tile(ctx, nav, tx, tz), NB_ERR_NOT_FOUND, "no tile");
    /* adding it back restores every link; the slot is reused with a new salt */
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[best], level.size[best]), NB_OK);
    t = nb_navmesh_tile_at(nav, tx, tz);
    CHECK(nb_ref_slot(nav, nb_navmesh_ref_of(nav, t, 0)) == nb_ref_slot(nav, old_ref));
    CHECK(nb_navmesh_resolve(nav, old_ref, NULL) == NULL);
    CHECK(nb_navmesh_resolve(nav, nb_navmesh_ref_of(nav, t, 0), NULL) == t);
    /* The salt has the bits the slots leave: this navmesh's old ref stays stale over many more than 32 replacements
     * of its tile (with a fixed 5-bit salt it came back to life at the 32nd). */
    {
        const uint32_t slot_bits = nav->tile_bits, salt_bits = 32 - NB_POLY_BITS - slot_bits;
        CHECK(nav->params.max_tiles < (1u << slot_bits) && nav->params.max_tiles >= (1u << (slot_bits - 1)));
        CHECK(salt_bits > 5);
        const uint32_t cycles = (1u << salt_bits) - 2; /* the salt has moved on by one already */
        int alive = 0;
        for (uint32_t k = 0; k < cycles; ++k) {
            CHECK_INT(nb_navmesh_remove_tile(ctx, nav, tx, tz), NB_OK);
            CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[best], level.size[best]), NB_OK);
            alive += nb_navmesh_resolve(nav, old_ref, NULL) != NULL;
        }
        CHECK_INT(alive, 0);
        t = nb_navmesh_tile_at(nav, tx, tz);
    }
    uint32_t n_again;
    link_rec* again = snapshot(nav, &n_again, &bad);
    CHECK(same_snapshot(before, n_before, again, n_again));
    int nborder;
    check_border_symmetry(nav, &nborder);
    free(before);
    free(after);
    free(expect);
    free(again);

    /* remove every tile: no link survives, nothing leaks; the polygon count follows each removal */
    CHECK_INT(nb_navmesh_poly_count(nav), level.total_polys);
    uint32_t left = level.total_polys;
    for (int i = 0; i < level.count; ++i) {
        uint32_t n;
        CHECK_INT(nb_navmesh_poly_refs(ctx, nav, NULL, 0, &n), n ? NB_ERR_BUFFER_TOO_SMALL : NB_OK);
        CHECK_INT(nb_navmesh_poly_count(nav), n);
        CHECK_INT(n, left);
        const nb_tile* gone = nb_navmesh_tile_at(nav, level.tx[i], level.tz[i]);
        left -= gone ? gone->v.npolys : 0;
        CHECK_INT(nb_navmesh_remove_tile(ctx, nav, level.tx[i], level.tz[i]), NB_OK);
        nb_context_clear_error(ctx);
    }
    CHECK_INT(nb_navmesh_tile_count(nav), 0);
    CHECK_INT(nb_navmesh_poly_count(nav), 0);
    CHECK_INT(nb_navmesh_poly_count(NULL), 0);
    uint32_t count = 99;
    CHECK_INT(nb_navmesh_poly_refs(ctx, nav, NULL, 0, &count), NB_OK);
    CHECK_INT(count, 0);
    nb_navmesh_destroy(ctx, nav);
}

/* Two ground polygons of a solo dungeon bake, far apart, and a link between their centres. */
static void test_offmesh_one_way_and_bidirectional(void)
{
    if (!have_dungeon)
        return;
    nb_bake_input in = nb_obj_bake_input(&dungeon);
    nb_bake_result r;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_ALL, 0, &r), NB_OK);
    nb_tile_params tp;
    memset(&tp, 0, sizeof(tp));
    tp.poly_mesh = r.poly_mesh;
    tp.detail = r.detail;
    tp.walkable_height = 2.0f;
    tp.walkable_radius = 0.6f;
    tp.walkable_climb = 0.9f;
    uint8_t* plain;
    size_t plain_size;
    CHECK_INT(nb_tile_build(ctx, &tp, &plain, &plain_size), NB_OK);
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    p.tile_width = p.tile_depth = 1000;
    nb_navmesh* nav = NULL;
    CHECK_INT(nb_navmesh_create(ctx, &p, &nav), NB_OK);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, plain, plain_size), NB_OK);
    const nb_tile* t = nb_navmesh_tile_at(nav, 0, 0);
    const uint32_t pa = 0;
    float ca[3], cb[3];
    poly_center(t, pa, ca);
    uint32_t pb = 1;
    float best = -1;
    for (uint32_t q = 1; q < t->v.npolys; ++q) {
        float c[3];
        poly_center(t, q, c);
        const float d = (c[0] - ca[0]) * (c[0] - ca[0]) + (c[2] - ca[2]) * (c[2] - ca[2]);
        if (d > best) {
            best = d;
            pb = q;
        }
    }
    poly_center(t, pb, cb);
    nb_navmesh_remove_tile(ctx, nav, 0, 0);

    nb_offmesh_link links[3];
    memset(links, 0, sizeof(links));
    memcpy(links[0].start, ca, 12);
    memcpy(links[0].end, cb, 12);
    links[0].radius = 0.5f;
    links[1] = links[0];
    links[1].bidirectional = 1;
    links[2] = links[0]; /* an end in thin air, far above: no landing polygon */
    links[2].end[1] += 50.0f;
    for (uint32_t k = 0; k < 3; ++k) {
        links[k].user_id = 0xfffffff0u + k; /* above INT32_MAX: no sign lost on the way */
        links[k].area = (uint8_t)(10 + k);
        links[k].flags = (uint16_t)(0x100 << k);
    }
    tp.links = links;
    tp.link_count = 3;
    uint8_t* blob;
    size_t size;
    CHECK_INT(nb_tile_build(ctx, &tp, &blob, &size), NB_OK);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, blob, size), NB_OK);
    t = nb_navmesh_tile_at(nav, 0, 0);
    const uint32_t nground = (uint32_t)r.poly_mesh->npolys;
    CHECK_INT(t->v.npolys, nground + 3);
    const nb_poly_ref A = nb_navmesh_ref_of(nav, t, pa), B = nb_navmesh_ref_of(nav, t, pb);
    for (uint32_t k = 0; k < 3; ++k) {
        const nb_poly_ref L = nb_navmesh_ref_of(nav, t, nground + k);
        int off = 0;
        int32_t nv = 0;
        float v[NB_MAX_VERTS_PER_POLY * 3];
        CHECK_INT(nb_navmesh_poly(nav, L, v, &nv, NULL, NULL, &off), NB_OK);
        CHECK(off == 1 && nv == 2);
        CHECK(memcmp(v, links[k].start, 12) == 0 && memcmp(v + 3, links[k].end, 12) == 0);
        /* the link as given, read back from its polygon */
        nb_offmesh_link got;
        int attached[2] = { -1, -1 };
        CHECK_INT(nb_navmesh_offmesh_link(nav, L, &got, attached), NB_OK);
        CHECK_INT(attached[0], 1);
        CHECK_INT(attached[1], k == 2 ? 0 : 1); /* link 2 ends in thin air */
        CHECK(memcmp(got.start, links[k].start, 12) == 0 && memcmp(got.end, links[k].end, 12) == 0);
        CHECK(got.radius == links[k].radius && got.bidirectional == links[k].bidirectional);
        CHECK(got.user_id == links[k].user_id && got.area == links[k].area && got.flags == links[k].flags);
        /* start side: the link leaves from A and A can enter it */
        CHECK_INT(count_links_to(nav, L, A, 0), 1);
        CHECK_INT(count_links_to(nav, A, L, NB_LINK_NO_EDGE), 1);
        /* end side */
        CHECK_INT(count_links_to(nav, L, B, 1), k == 2 ? 0 : 1);
        CHECK_INT(count_links_to(nav, B, L, -1), k == 1 ? 1 : 0);
    }
    /* a ground polygon is not a link, a stale ref is nothing */
    nb_offmesh_link none;
    CHECK_INT(nb_navmesh_offmesh_link(nav, A, &none, NULL), NB_ERR_NOT_FOUND);
    CHECK_INT(nb_navmesh_offmesh_link(nav, 0, &none, NULL), NB_ERR_NOT_FOUND);
    CHECK_INT(nb_navmesh_offmesh_link(NULL, A, &none, NULL), NB_ERR_NULL_ARG);
    int nb;
    uint32_t n;
    link_rec* recs = snapshot(nav, &n, &nb);
    free(recs);
    nb_navmesh_destroy(ctx, nav);
    nb_bytes_free(ctx, blob);
    nb_bytes_free(ctx, plain);
    nb_bake_result_release(ctx, &r);
}

/* A link from one tile into its neighbour: attached whichever tile comes first, detached with the neighbour. */
static void test_offmesh_across_tiles(void)
{
    if (!level.count)
        return;
    /* a tile with a +x neighbour */
    int a = -1, b = -1;
    for (int i = 0; i < level.count && a < 0; ++i) {
        const int j = level_index(&level, level.tx[i] + 1, level.tz[i]);
        if (j >= 0) {
            a = i;
            b = j;
        }
    }
    CHECK(a >= 0);
    if (a < 0)
        return;
    nb_navmesh* nav = level_navmesh(ctx, &level);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[a], level.size[a]), NB_OK);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[b], level.size[b]), NB_OK);
    const nb_tile* ta = nb_navmesh_tile_at(nav, level.tx[a], level.tz[a]);
    const nb_tile* tb = nb_navmesh_tile_at(nav, level.tx[b], level.tz[b]);
    const uint32_t pa = 0, pb = tb->v.npolys - 1;
    nb_offmesh_link link;
    memset(&link, 0, sizeof(link));
    poly_center(ta, pa, link.start);
    poly_center(tb, pb, link.end);
    link.radius = 0.5f;
    link.bidirectional = 1;
    nb_navmesh_destroy(ctx, nav);

    uint8_t* la;
    size_t la_size;
    CHECK_INT(bake_grid_tile(&dungeon, &level, level.tx[a], level.tz[a], &link, 1, &la, &la_size, NULL), NB_OK);
    for (int order = 0; order < 2; ++order) {
        nav = level_navmesh(ctx, &level);
        if (order == 0) {
            CHECK_INT(nb_navmesh_add_tile(ctx, nav, la, la_size), NB_OK);
            CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[b], level.size[b]), NB_OK);
        } else {
            CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[b], level.size[b]), NB_OK);
            CHECK_INT(nb_navmesh_add_tile(ctx, nav, la, la_size), NB_OK);
        }
        ta = nb_navmesh_tile_at(nav, level.tx[a], level.tz[a]);
        tb = nb_navmesh_tile_at(nav, level.tx[b], level.tz[b]);
        CHECK_INT(ta->v.noffmesh, 1);
        CHECK_INT(ta->v.offmesh[0].side, 2);
        const nb_poly_ref L = nb_navmesh_ref_of(nav, ta, ta->v.offmesh[0].poly);
        const nb_poly_ref A = nb_navmesh_ref_of(nav, ta, pa), B = nb_navmesh_ref_of(nav, tb, pb);
        CHECK_INT(count_links_to(nav, L, A, 0), 1);
        CHECK_INT(count_links_to(nav, A, L, NB_LINK_NO_EDGE), 1);
        CHECK_INT(count_links_to(nav, L, B, 1), 1);
        CHECK_INT(count_links_to(nav, B, L, NB_LINK_NO_EDGE), 1);
        /* removing the landing tile detaches the end only */
        CHECK_INT(nb_navmesh_remove_tile(ctx, nav, level.tx[b], level.tz[b]), NB_OK);
        uint32_t pl;
        const nb_tile* lt = nb_navmesh_resolve(nav, L, &pl);
        int to_b = 0, links = 0;
        for (uint32_t li = lt->first_link[pl]; li != NB_NULL_LINK; li = lt->links[li].next) {
            ++links;
            to_b += nb_ref_slot(nav, lt->links[li].ref) == nb_ref_slot(nav, B);
        }
        CHECK_INT(links, 1);
        CHECK_INT(to_b, 0);
        CHECK_INT(count_links_to(nav, L, A, 0), 1);
        nb_navmesh_destroy(ctx, nav);
    }
    nb_bytes_free(ctx, la);
}

/* Links from one tile to a tile across its corner and to one several tiles away: attached whichever tile comes
 * first, detached with either, attached again when the landing tile comes back. */
static void test_offmesh_diagonal_and_far(void)
{
    if (!level.count)
        return;
    /* tile a with a diagonal neighbour c, and the tile b farthest from a */
    int a = -1, c = -1, b = -1;
    for (int i = 0; i < level.count && a < 0; ++i) {
        const int j = level_index(&level, level.tx[i] + 1, level.tz[i] + 1);
        if (j >= 0) {
            a = i;
            c = j;
        }
    }
    CHECK(a >= 0);
    if (a < 0)
        return;
    int far = -1;
    for (int i = 0; i < level.count; ++i) {
        const int d = abs(level.tx[i] - level.tx[a]) + abs(level.tz[i] - level.tz[a]);
        if (d > far) {
            far = d;
            b = i;
        }
    }
    CHECK(far >= 3);
    nb_navmesh* nav = level_navmesh(ctx, &level);
    for (int i = 0; i < level.count; ++i)
        CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[i], level.size[i]), NB_OK);
    const nb_tile* ta = nb_navmesh_tile_at(nav, level.tx[a], level.tz[a]);
    const uint32_t pa = 0, pb = nb_navmesh_tile_at(nav, level.tx[b], level.tz[b])->v.npolys - 1;
    const uint32_t pc = nb_navmesh_tile_at(nav, level.tx[c], level.tz[c])->v.npolys - 1;
    nb_offmesh_link links[2];
    memset(links, 0, sizeof(links));
    poly_center(ta, pa, links[0].start);
    poly_center(nb_navmesh_tile_at(nav, level.tx[b], level.tz[b]), pb, links[0].end);
    links[0].radius = 0.5f;
    links[0].bidirectional = 1;
    links[1] = links[0];
    poly_center(nb_navmesh_tile_at(nav, level.tx[c], level.tz[c]), pc, links[1].end);
    nb_navmesh_destroy(ctx, nav);

    uint8_t* la;
    size_t la_size;
    CHECK_INT(bake_grid_tile(&dungeon, &level, level.tx[a], level.tz[a], links, 2, &la, &la_size, NULL), NB_OK);
    for (int order = 0; order < 2; ++order) {
        nav = level_navmesh(ctx, &level);
        if (order == 0)
            CHECK_INT(nb_navmesh_add_tile(ctx, nav, la, la_size), NB_OK);
        for (int i = 0; i < level.count; ++i)
            if (i != a)
                CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[i], level.size[i]), NB_OK);
        if (order == 1)
            CHECK_INT(nb_navmesh_add_tile(ctx, nav, la, la_size), NB_OK);
        ta = nb_navmesh_tile_at(nav, level.tx[a], level.tz[a]);
        CHECK_INT(ta->v.noffmesh, 2);
        const nb_poly_ref L0 = nb_navmesh_ref_of(nav, ta, ta->v.offmesh[0].poly);
        const nb_poly_ref L1 = nb_navmesh_ref_of(nav, ta, ta->v.offmesh[1].poly);
        nb_poly_ref B = nb_navmesh_ref_of(nav, nb_navmesh_tile_at(nav, level.tx[b], level.tz[b]), pb);
        const nb_poly_ref C = nb_navmesh_ref_of(nav, nb_navmesh_tile_at(nav, level.tx[c], level.tz[c]), pc);
        CHECK_INT(count_links_to(nav, L0, B, 1), 1);
        CHECK_INT(count_links_to(nav, B, L0, NB_LINK_NO_EDGE), 1);
        CHECK_INT(count_links_to(nav, L1, C, 1), 1);
        CHECK_INT(count_links_to(nav, C, L1, NB_LINK_NO_EDGE), 1);
        /* the far landing tile goes and comes back */
        uint8_t* saved_b = (uint8_t*)malloc(level.size[b]);
        memcpy(saved_b, level.blob[b], level.size[b]);
        CHECK_INT(nb_navmesh_remove_tile(ctx, nav, level.tx[b], level.tz[b]), NB_OK);
        CHECK_INT(count_links_to(nav, L0, B, -1), 0);
        uint32_t pl;
        const nb_tile* lt = nb_navmesh_resolve(nav, L0, &pl);
        int links_left = 0;
        for (uint32_t li = lt->first_link[pl]; li != NB_NULL_LINK; li = lt->links[li].next)
            ++links_left;
        CHECK_INT(links_left, 1); /* back onto its start polygon only */
        CHECK_INT(nb_navmesh_add_tile(ctx, nav, saved_b, level.size[b]), NB_OK);
        B = nb_navmesh_ref_of(nav, nb_navmesh_tile_at(nav, level.tx[b], level.tz[b]), pb);
        CHECK_INT(count_links_to(nav, L0, B, 1), 1);
        CHECK_INT(count_links_to(nav, B, L0, NB_LINK_NO_EDGE), 1);
        free(saved_b);
        /* the start's tile goes: nothing in b or c leads into its slot any more */
        const uint32_t slot_a = nb_ref_slot(nav, L0);
        CHECK_INT(nb_navmesh_remove_tile(ctx, nav, level.tx[a], level.tz[a]), NB_OK);
        const int others[2] = { b, c };
        for (int o = 0; o < 2; ++o) {
            const nb_tile* t = nb_navmesh_tile_at(nav, level.tx[others[o]], level.tz[others[o]]);
            int into_a = 0;
            for (uint32_t q = 0; q < t->v.npolys; ++q)
                for (uint32_t li = t->first_link[q]; li != NB_NULL_LINK; li = t->links[li].next)
                    into_a += nb_ref_slot(nav, t->links[li].ref) == slot_a;
            CHECK_INT(into_a, 0);
        }
        nb_navmesh_destroy(ctx, nav);
    }
    nb_bytes_free(ctx, la);
}

static void test_errors(void)
{
    nb_navmesh_params p;
    memset(&p, 0, sizeof(p));
    p.tile_width = p.tile_depth = 10;
    nb_navmesh* nav = (nb_navmesh*)&p;
    CHECK_STATUS(ctx, nb_navmesh_create(ctx, NULL, &nav), NB_ERR_NULL_ARG, "params");
    CHECK_STATUS(ctx, nb_navmesh_create(ctx, &p, NULL), NB_ERR_NULL_ARG, "out");
    p.tile_width = 0;
    CHECK_STATUS(ctx, nb_navmesh_create(ctx, &p, &nav), NB_ERR_INVALID_ARG, "tile_width");
    CHECK(nav == NULL);
    p.tile_width = 10;
    p.origin[1] = NAN;
    CHECK_STATUS(ctx, nb_navmesh_create(ctx, &p, &nav), NB_ERR_NONFINITE, "origin.y");
    p.origin[1] = 0;
    p.max_tiles = NB_MAX_TILES + 1;
    CHECK_STATUS(ctx, nb_navmesh_create(ctx, &p, &nav), NB_ERR_INVALID_ARG, "max_tiles");
    /* A tile of another grid: here the level's tiles in a grid of tiles a third their size. */
    memcpy(p.origin, level.origin, sizeof(p.origin));
    p.tile_width = p.tile_depth = level.tile_size / 3.0f;
    p.max_tiles = 1;
    CHECK_INT(nb_navmesh_create(ctx, &p, &nav), NB_OK);
    if (level.count > 0)
        CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, nav, level.blob[0], level.size[0]), NB_ERR_INVALID_ARG,
                     "a tile of another grid");
    CHECK_INT(nb_navmesh_tile_count(nav), 0);
    nb_navmesh_destroy(ctx, nav);
    p.tile_width = p.tile_depth = level.tile_size;
    CHECK_INT(nb_navmesh_create(ctx, &p, &nav), NB_OK);
    if (level.count < 2) {
        nb_navmesh_destroy(ctx, nav);
        return;
    }
    CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, NULL, level.blob[0], level.size[0]), NB_ERR_NULL_ARG, "nav");
    CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, nav, NULL, 0), NB_ERR_NULL_ARG, "data");
    CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, nav, level.blob[0], level.size[0] - 1), NB_ERR_CORRUPT,
                 "nb_navmesh_add_tile: total_size");
    uint8_t* d = (uint8_t*)malloc(level.size[0]);
    memcpy(d, level.blob[0], level.size[0]);
    d[4] = 9;
    CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, nav, d, level.size[0]), NB_ERR_VERSION, "version 9");
    d[4] = 1;
    d[200] ^= 0x10;
    CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, nav, d, level.size[0]), NB_ERR_CORRUPT, "crc");
    free(d);
    CHECK_INT(nb_navmesh_tile_count(nav), 0);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[0], level.size[0]), NB_OK);
    CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, nav, level.blob[0], level.size[0]), NB_ERR_ALREADY_EXISTS,
                 "already occupies");
    CHECK_STATUS(ctx, nb_navmesh_add_tile(ctx, nav, level.blob[1], level.size[1]), NB_ERR_TOO_LARGE, "max_tiles 1");
    CHECK_INT(nb_navmesh_tile_count(nav), 1);
    CHECK_STATUS(ctx, nb_navmesh_remove_tile(ctx, nav, 1000, 1000), NB_ERR_NOT_FOUND, "(1000, 1000)");
    CHECK_STATUS(ctx, nb_navmesh_remove_tile(ctx, NULL, 0, 0), NB_ERR_NULL_ARG, "nav");
    const uint8_t* td;
    size_t ts;
    CHECK_INT(nb_navmesh_tile_data(nav, 1000, 0, &td, &ts), NB_ERR_NOT_FOUND);
    CHECK_INT(nb_navmesh_tile_data(nav, level.tx[0], level.tz[0], NULL, &ts), NB_ERR_NULL_ARG);
    CHECK_INT(nb_navmesh_poly(NULL, 1, NULL, NULL, NULL, NULL, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_navmesh_poly(nav, 0, NULL, NULL, NULL, NULL, NULL), NB_ERR_NOT_FOUND);
    uint32_t count;
    CHECK_STATUS(ctx, nb_navmesh_poly_refs(ctx, nav, NULL, 0, NULL), NB_ERR_NULL_ARG, "count");
    CHECK_STATUS(ctx, nb_navmesh_set_poly_flags(ctx, NULL, 1, 1), NB_ERR_NULL_ARG, "nav");
    CHECK_STATUS(ctx, nb_navmesh_set_poly_flags(ctx, nav, 0, 1), NB_ERR_NOT_FOUND, "ref");
    CHECK_INT(nb_navmesh_tile_count(NULL), 0);
    CHECK(nb_navmesh_get_params(NULL) == NULL);
    (void)count;
    nb_navmesh_destroy(ctx, nav);
    nb_navmesh_destroy(ctx, NULL);
}

static void test_set_poly_flags(void)
{
    if (!level.count)
        return;
    nb_navmesh* nav = level_navmesh(ctx, &level);
    CHECK_INT(nb_navmesh_add_tile(ctx, nav, level.blob[0], level.size[0]), NB_OK);
    const nb_tile* t = nb_navmesh_tile_at(nav, level.tx[0], level.tz[0]);
    const nb_poly_ref ref = nb_navmesh_ref_of(nav, t, 1);
    CHECK_INT(nb_navmesh_set_poly_flags(ctx, nav, ref, 0x8004), NB_OK);
    uint16_t flags = 0;
    CHECK_INT(nb_navmesh_poly(nav, ref, NULL, NULL, NULL, &flags, NULL), NB_OK);
    CHECK_INT(flags, 0x8004);
    /* the blob the navmesh hands out carries the change and a valid checksum */
    const uint8_t* d;
    size_t s;
    CHECK_INT(nb_navmesh_tile_data(nav, level.tx[0], level.tz[0], &d, &s), NB_OK);
    CHECK_INT(nb_tile_validate(ctx, d, s), NB_OK);
    CHECK(memcmp(d, level.blob[0], s) != 0);
    nb_navmesh* other = level_navmesh(ctx, &level);
    CHECK_INT(nb_navmesh_add_tile(ctx, other, d, s), NB_OK);
    const nb_tile* o = nb_navmesh_tile_at(other, level.tx[0], level.tz[0]);
    CHECK_INT(o->v.poly_flags[1], 0x8004);
    nb_navmesh_destroy(ctx, other);
    nb_navmesh_destroy(ctx, nav);
}

/* Failing the Nth allocation of an add leaves the navmesh exactly as it was. */
static void test_add_tile_out_of_memory(void)
{
    if (!level.count)
        return;
    /* the tile with the most neighbours, added last, with an off-mesh link into a neighbour */
    int best = 0, best_n = -1;
    for (int i = 0; i < level.count; ++i) {
        int n = 0;
        for (int s = 0; s < 4; ++s)
            n += level_index(&level, level.tx[i] + (s == 2) - (s == 0), level.tz[i] + (s == 1) - (s == 3)) >= 0;
        if (n > best_n) {
            best_n = n;
            best = i;
        }
    }
    nbt_alloc a = { 0 };
    nb_context_desc desc;
    memset(&desc, 0, sizeof(desc));
    nbt_alloc_hooks(&desc, &a);
    nb_context* c = nb_context_create(&desc);
    nb_navmesh* nav = level_navmesh(c, &level);
    for (int i = 0; i < level.count; ++i)
        if (i != best)
            CHECK_INT(nb_navmesh_add_tile(c, nav, level.blob[i], level.size[i]), NB_OK);
    uint32_t n0;
    int bad = 0;
    link_rec* before = snapshot(nav, &n0, &bad);
    int failures = 0;
    for (long k = 1; k < 200; ++k) {
        a.fail_at = a.calls + k;
        const nb_status st = nb_navmesh_add_tile(c, nav, level.blob[best], level.size[best]);
        a.fail_at = 0;
        if (st == NB_OK)
            break;
        ++failures;
        CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        CHECK(strstr(nb_context_message(c), "nb_navmesh_add_tile: out of memory") != NULL);
        uint32_t n1;
        link_rec* after = snapshot(nav, &n1, &bad);
        CHECK(same_snapshot(before, n0, after, n1));
        CHECK_INT(nb_navmesh_tile_count(nav), level.count - 1);
        free(after);
    }
    CHECK(failures >= 3);
    CHECK_INT(nb_navmesh_tile_count(nav), level.count);
    int nborder;
    check_border_symmetry(nav, &nborder);
    free(before);
    nb_navmesh_destroy(c, nav);
    CHECK_INT(a.live, 1);
    /* creation failures */
    for (long k = 1; k <= 3; ++k) { /* nav, tiles, buckets */
        a.fail_at = a.calls + k;
        nb_navmesh* n = (nb_navmesh*)&a;
        nb_navmesh_params p;
        memset(&p, 0, sizeof(p));
        p.tile_width = p.tile_depth = 1;
        const nb_status st = nb_navmesh_create(c, &p, &n);
        CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        CHECK(n == NULL);
        a.fail_at = 0;
    }
    CHECK_INT(a.live, 1);
    nb_context_destroy(c);
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
        bake_tiled(&dungeon, &level);
    }
    RUN(test_solo_tile_refs_and_internal_links);
    RUN(test_tiled_level_links_are_symmetric);
    RUN(test_remove_tile_removes_exactly_its_links);
    RUN(test_offmesh_one_way_and_bidirectional);
    RUN(test_offmesh_across_tiles);
    RUN(test_offmesh_diagonal_and_far);
    RUN(test_errors);
    RUN(test_set_poly_flags);
    RUN(test_add_tile_out_of_memory);
    free_tiled(&level);
    if (have_dungeon)
        nb_obj_free(&dungeon);
    nb_context_destroy(ctx);
    return nbt_finish("test_navmesh");
}
