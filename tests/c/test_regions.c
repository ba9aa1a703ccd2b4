/* Region partitions (watershed, monotone, layers): analytic layouts, tile borders, island removal, real levels
 * against the reference counts, out-of-memory and cancellation paths, argument checks. */
#include "navbake.h"
#include "nbtest_level.h"
#include "obj.h"

#include <stdint.h>

static nb_context* ctx;

enum { WATERSHED, MONOTONE, LAYERS, NPART };
static const char* const part_name[NPART] = { "watershed", "monotone", "layers" };

/* ---- synthetic floors ----
 * One string per row z, one character per column x: '.' no span, '#' a walkable floor at height 5, 'a' the same
 * floor with area 5, 'x' an unwalkable span at floor height. */

static void add_map(nb_context* c, nb_heightfield* hf, const char* const* rows, int nrows)
{
    for (int z = 0; z < nrows; ++z)
        for (int x = 0; rows[z][x]; ++x) {
            const char ch = rows[z][x];
            const uint8_t area = ch == 'a' ? 5 : NB_WALKABLE_AREA; /* 'x' is cleared once compact */
            if (ch != '.')
                CHECK_INT(nb_heightfield_add_span(c, hf, x, z, 0, 5, area, 1), NB_OK);
        }
}

static nb_heightfield* make_hf(nb_context* c, int w, int h)
{
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)w * 0.3f, 30.0f, (float)h * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(c, w, h, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    return hf;
}

static nb_compact_heightfield* compact(nb_context* c, nb_heightfield* hf)
{
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(c, 10, 4, hf, &chf), NB_OK);
    nb_heightfield_destroy(c, hf);
    return chf;
}

static nb_compact_heightfield* make_chf(const char* const* rows, int nrows)
{
    nb_heightfield* hf = make_hf(ctx, (int)strlen(rows[0]), nrows);
    add_map(ctx, hf, rows, nrows);
    nb_compact_heightfield* chf = compact(ctx, hf);
    /* 'x': linked like the rest, then made unwalkable (as erosion does) */
    for (int z = 0; z < nrows; ++z)
        for (int x = 0; rows[z][x]; ++x)
            if (rows[z][x] == 'x')
                chf->areas[chf->cells[x + z * chf->width].index] = NB_NULL_AREA;
    return chf;
}

/* A w x h grid with a floor over [x0, x1) x [z0, z1). */
static nb_compact_heightfield* make_floor(int w, int h, int x0, int z0, int x1, int z1)
{
    nb_heightfield* hf = make_hf(ctx, w, h);
    for (int z = z0; z < z1; ++z)
        for (int x = x0; x < x1; ++x)
            CHECK_INT(nb_heightfield_add_span(ctx, hf, x, z, 0, 5, NB_WALKABLE_AREA, 1), NB_OK);
    return compact(ctx, hf);
}

static void add_rect(nb_heightfield* hf, int x0, int z0, int x1, int z1, int top)
{
    for (int z = z0; z < z1; ++z)
        for (int x = x0; x < x1; ++x)
            CHECK_INT(nb_heightfield_add_span(ctx, hf, x, z, (uint32_t)(top - 2), (uint32_t)top, NB_WALKABLE_AREA, 1),
                      NB_OK);
}

static nb_status partition(nb_context* c, nb_compact_heightfield* chf, int part, int border, int min_area,
                           int merge_area)
{
    switch (part) {
    case WATERSHED: {
        const nb_status st = nb_build_distance_field(c, chf);
        return st != NB_OK ? st : nb_build_regions_watershed(c, chf, border, min_area, merge_area);
    }
    case MONOTONE:
        return nb_build_regions_monotone(c, chf, border, min_area, merge_area);
    default:
        return nb_build_regions_layers(c, chf, border, min_area);
    }
}

static uint16_t reg_at(const nb_compact_heightfield* chf, int x, int z, int layer)
{
    const nb_compact_cell c = chf->cells[x + z * chf->width];
    CHECK((int)c.count > layer);
    return (int)c.count > layer ? chf->spans[c.index + (uint32_t)layer].reg : 0xffff;
}

/* ---- invariants of every partition ---- */

static uint32_t find_root(uint32_t* parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Checks: region ids below max_regions, all of them used; unwalkable spans have none; a region holds one area and
 * is connected through links; for layers, no region twice in a column. Returns the number of regions. */
static int check_invariants(const nb_compact_heightfield* chf, int part)
{
    const uint32_t n = chf->span_count;
    const int w = chf->width;
    const int nreg = chf->max_regions;
    CHECK(nreg >= 1);
    uint32_t* parent = (uint32_t*)malloc(sizeof(uint32_t) * (n + 1));
    uint32_t* root = (uint32_t*)malloc(sizeof(uint32_t) * ((size_t)nreg + 1));
    int* area = (int*)malloc(sizeof(int) * ((size_t)nreg + 1));
    int* last_col = (int*)malloc(sizeof(int) * ((size_t)nreg + 1));
    for (uint32_t i = 0; i < n; ++i)
        parent[i] = i;
    for (int r = 0; r <= nreg; ++r) {
        root[r] = UINT32_MAX;
        area[r] = -1;
        last_col[r] = -1;
    }
    int bad_id = 0, bad_area = 0, stacked = 0;
    for (int z = 0; z < chf->height; ++z)
        for (int x = 0; x < w; ++x) {
            const int col = x + z * w;
            const nb_compact_cell c = chf->cells[col];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const nb_compact_span* s = &chf->spans[i];
                const uint16_t r = s->reg;
                if (chf->areas[i] == NB_NULL_AREA) {
                    bad_id += r != 0;
                    continue;
                }
                if (r == 0 || (r & NB_BORDER_REG))
                    continue;
                if (r >= nreg) {
                    ++bad_id;
                    continue;
                }
                if (area[r] < 0)
                    area[r] = chf->areas[i];
                bad_area += area[r] != chf->areas[i];
                if (part == LAYERS)
                    stacked += last_col[r] == col;
                last_col[r] = col;
                for (int dir = 0; dir < 4; ++dir) {
                    if (nb_span_con(s, dir) == NB_NOT_CONNECTED)
                        continue;
                    const int ncol = x + nb_dir_offset_x(dir) + (z + nb_dir_offset_z(dir)) * w;
                    const uint32_t a = chf->cells[ncol].index + (uint32_t)nb_span_con(s, dir);
                    if (chf->spans[a].reg == r)
                        parent[find_root(parent, a)] = find_root(parent, i);
                }
            }
        }
    int split = 0, unused = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint16_t r = chf->spans[i].reg;
        if (r == 0 || (r & NB_BORDER_REG) || r >= nreg || chf->areas[i] == NB_NULL_AREA)
            continue;
        const uint32_t top = find_root(parent, i);
        if (root[r] == UINT32_MAX)
            root[r] = top;
        split += root[r] != top;
    }
    for (int r = 1; r < nreg; ++r)
        unused += root[r] == UINT32_MAX;
    CHECK_INT(bad_id, 0);
    CHECK_INT(bad_area, 0);
    CHECK_INT(split, 0);
    CHECK_INT(unused, 0);
    CHECK_INT(stacked, 0);
    if (bad_id || bad_area || split || unused || stacked)
        fprintf(stderr, "  (partition %s)\n", part_name[part]);
    free(parent);
    free(root);
    free(area);
    free(last_col);
    return nreg - 1;
}

/* ---- analytic layouts ---- */

static void test_flat_square_is_one_region(void)
{
    for (int part = 0; part < NPART; ++part) {
        nb_compact_heightfield* chf = make_floor(24, 24, 0, 0, 24, 24);
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 64, 400), NB_OK, "");
        CHECK_INT(check_invariants(chf, part), 1);
        for (uint32_t i = 0; i < chf->span_count; ++i)
            CHECK_INT(chf->spans[i].reg, 1);
        CHECK_INT(chf->border_size, 0);
        nb_compact_heightfield_destroy(ctx, chf);
    }
}

static void test_two_squares_are_two_regions(void)
{
    static const char* const rows[] = {
        "############....#############", "############....#############", "############....#############",
        "############....#############", "############....#############", "############....#############",
        "############....#############", "############....#############", "############....#############",
        "############....#############", "############....#############", "############....#############",
    };
    for (int part = 0; part < NPART; ++part) {
        nb_compact_heightfield* chf = make_chf(rows, 12);
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 64, 400), NB_OK, "");
        CHECK_INT(check_invariants(chf, part), 2);
        const uint16_t left = reg_at(chf, 0, 0, 0), right = reg_at(chf, 28, 11, 0);
        CHECK(left != 0 && right != 0 && left != right);
        for (int z = 0; z < 12; ++z)
            for (int x = 0; x < 29; ++x)
                if (rows[z][x] == '#')
                    CHECK_INT(reg_at(chf, x, z, 0), x < 12 ? left : right);
        nb_compact_heightfield_destroy(ctx, chf);
    }
}

static void test_bridge_between_rooms(void)
{
    /* Two 16 x 16 rooms joined by a 2-wide, 6-long bridge. */
    nb_heightfield* hf = make_hf(ctx, 38, 16);
    add_rect(hf, 0, 0, 16, 16, 5);
    add_rect(hf, 16, 7, 22, 9, 5);
    add_rect(hf, 22, 0, 38, 16, 5);
    nb_compact_heightfield* chf = compact(ctx, hf);
    for (int part = 0; part < NPART; ++part) {
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 8, 0), NB_OK, "");
        const int n = check_invariants(chf, part);
        const uint16_t a = reg_at(chf, 7, 7, 0), b = reg_at(chf, 30, 7, 0);
        CHECK(a != 0 && b != 0);
        if (part == WATERSHED) {
            /* two basins: one region per room, the bridge on its own or in a room */
            CHECK(a != b);
            CHECK(n >= 2 && n <= 3);
        } else if (part == LAYERS) {
            CHECK_INT(n, 1); /* nothing overlaps: one flat layer */
        } else {
            CHECK(n >= 3); /* the sweep splits where the rows fork */
        }
        for (uint32_t i = 0; i < chf->span_count; ++i)
            CHECK(chf->spans[i].reg != 0);
    }
    /* With a large merge area the small pieces merge into their neighbours. */
    CHECK_STATUS(ctx, partition(ctx, chf, WATERSHED, 0, 8, 1000), NB_OK, "");
    CHECK_INT(check_invariants(chf, WATERSHED), 1);
    nb_compact_heightfield_destroy(ctx, chf);
}

/* A room with a 1-wide corridor 600 cells long: the corridor is too thin to seed a region, so watershed reaches
 * it only by growing at level 0, one ring per cell (past the first rings, from the spans that joined in the ring
 * before: a full scan per ring was quadratic in the corridor's length). Every corridor span joins the room. */
static void test_long_thin_corridor_grows_from_the_room(void)
{
    enum { LEN = 600 };
    nb_heightfield* hf = make_hf(ctx, 16 + LEN, 16);
    add_rect(hf, 0, 0, 16, 16, 5);
    add_rect(hf, 16, 7, 16 + LEN, 8, 5);
    nb_compact_heightfield* chf = compact(ctx, hf);
    CHECK_STATUS(ctx, partition(ctx, chf, WATERSHED, 0, 0, 0), NB_OK, "");
    CHECK_INT(check_invariants(chf, WATERSHED), 1);
    const uint16_t room = reg_at(chf, 7, 7, 0);
    CHECK(room != 0);
    for (int x = 16; x < 16 + LEN; x += 1)
        if (reg_at(chf, x, 7, 0) != room) {
            CHECK_INT(reg_at(chf, x, 7, 0), room);
            break;
        }
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_small_islands_are_dropped(void)
{
    /* A 16 x 16 room, a 3 x 3 island (9 spans) and a 2 x 2 island (4 spans). */
    nb_heightfield* hf = make_hf(ctx, 30, 16);
    add_rect(hf, 0, 0, 16, 16, 5);
    add_rect(hf, 20, 2, 23, 5, 5);
    add_rect(hf, 25, 10, 27, 12, 5);
    nb_compact_heightfield* chf = compact(ctx, hf);
    for (int part = 0; part < NPART; ++part) {
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 64, 400), NB_OK, "");
        CHECK_INT(check_invariants(chf, part), 1);
        CHECK(reg_at(chf, 8, 8, 0) != 0);
        CHECK_INT(reg_at(chf, 21, 3, 0), 0);
        CHECK_INT(reg_at(chf, 25, 10, 0), 0);
        /* exactly min_area spans is enough to stay */
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 9, 400), NB_OK, "");
        CHECK_INT(check_invariants(chf, part), 2);
        CHECK(reg_at(chf, 21, 3, 0) != 0);
        CHECK_INT(reg_at(chf, 25, 10, 0), 0);
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 0, 400), NB_OK, "");
        CHECK_INT(check_invariants(chf, part), 3);
        CHECK(reg_at(chf, 25, 10, 0) != 0);
    }
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_unwalkable_and_areas(void)
{
    /* An unwalkable strip and a second area: regions never hold either across. */
    static const char* const rows[] = {
        "##########xx######aaaaaaaaaa", "##########xx######aaaaaaaaaa", "##########xx######aaaaaaaaaa",
        "##########xx######aaaaaaaaaa", "##########xx######aaaaaaaaaa", "##########xx######aaaaaaaaaa",
        "##########xx######aaaaaaaaaa", "##########xx######aaaaaaaaaa", "##########xx######aaaaaaaaaa",
        "##########xx######aaaaaaaaaa",
    };
    for (int part = 0; part < NPART; ++part) {
        nb_compact_heightfield* chf = make_chf(rows, 10);
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 0, 0), NB_OK, "");
        CHECK(check_invariants(chf, part) >= 3);
        CHECK_INT(reg_at(chf, 10, 5, 0), 0);
        CHECK(reg_at(chf, 15, 5, 0) != reg_at(chf, 20, 5, 0));
        CHECK(reg_at(chf, 5, 5, 0) != reg_at(chf, 15, 5, 0));
        nb_compact_heightfield_destroy(ctx, chf);
    }
}

static void test_tile_border_regions(void)
{
    for (int part = 0; part < NPART; ++part) {
        nb_compact_heightfield* chf = make_floor(20, 20, 0, 0, 20, 20);
        /* min_area far above the 14 x 14 inside: kept anyway, since it reaches the tile border */
        CHECK_STATUS(ctx, partition(ctx, chf, part, 3, 10000, 400), NB_OK, "");
        CHECK_INT(chf->border_size, 3);
        CHECK_INT(check_invariants(chf, part), 1);
        for (int z = 0; z < 20; ++z)
            for (int x = 0; x < 20; ++x) {
                const uint16_t r = reg_at(chf, x, z, 0);
                const int in_border = x < 3 || z < 3 || x >= 17 || z >= 17;
                CHECK_INT((r & NB_BORDER_REG) != 0, in_border);
                CHECK(r != 0);
            }
        /* one id per strip: -x, +x, then -z and +z, which win the corners */
        const uint16_t left = reg_at(chf, 0, 10, 0), right = reg_at(chf, 19, 10, 0);
        const uint16_t bottom = reg_at(chf, 10, 0, 0), top = reg_at(chf, 10, 19, 0);
        CHECK(left != right && left != bottom && left != top && right != bottom && right != top && bottom != top);
        CHECK_INT(reg_at(chf, 0, 0, 0), bottom);
        CHECK_INT(reg_at(chf, 19, 19, 0), top);
        CHECK_INT(reg_at(chf, 10, 10, 0), 1);
        nb_compact_heightfield_destroy(ctx, chf);
    }
}

static void test_spiral_layers_never_stack(void)
{
    /* A floor A at height 5, a ramp climbing 3 cells a row, and a walkway that comes back over A at height 74:
     * one connected loop whose two ends lie above each other. */
    nb_heightfield* hf = make_hf(ctx, 28, 24);
    add_rect(hf, 4, 0, 24, 4, 5); /* A */
    for (int z = 0; z < 24; ++z)
        add_rect(hf, 24, z, 28, z + 1, 5 + 3 * z); /* the ramp, up to 74 */
    add_rect(hf, 0, 20, 24, 24, 74);              /* back along the top */
    add_rect(hf, 0, 4, 4, 20, 74);                /* down the side */
    add_rect(hf, 0, 0, 24, 4, 74);                /* D, over A */
    nb_compact_heightfield* chf = compact(ctx, hf);
    CHECK_INT(chf->cells[10 + 2 * 28].count, 2);
    int counts[NPART];
    for (int part = 0; part < NPART; ++part) {
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 0, 0), NB_OK, "");
        counts[part] = check_invariants(chf, part);
        CHECK(reg_at(chf, 10, 2, 0) != 0 && reg_at(chf, 10, 2, 1) != 0);
        /* rows and layers never let a region climb over itself; a watershed flood may run round the loop */
        if (part != WATERSHED)
            CHECK(reg_at(chf, 10, 2, 0) != reg_at(chf, 10, 2, 1));
    }
    CHECK(counts[LAYERS] >= 2);
    CHECK(counts[LAYERS] < counts[MONOTONE]);
    nb_compact_heightfield_destroy(ctx, chf);
}

/* ---- real levels ---- */

/* Walkable spans without a region must lie in a linked piece of the level smaller than min_area. */
static void check_dropped_are_small(const nb_compact_heightfield* chf, int min_area)
{
    const uint32_t n = chf->span_count;
    const int w = chf->width;
    uint32_t* parent = (uint32_t*)malloc(sizeof(uint32_t) * (n + 1));
    uint32_t* size = (uint32_t*)calloc(n + 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < n; ++i)
        parent[i] = i;
    for (int z = 0; z < chf->height; ++z)
        for (int x = 0; x < w; ++x) {
            const nb_compact_cell c = chf->cells[x + z * w];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                if (chf->areas[i] == NB_NULL_AREA)
                    continue;
                for (int dir = 0; dir < 4; ++dir) {
                    const nb_compact_span* s = &chf->spans[i];
                    if (nb_span_con(s, dir) == NB_NOT_CONNECTED)
                        continue;
                    const int ncol = x + nb_dir_offset_x(dir) + (z + nb_dir_offset_z(dir)) * w;
                    const uint32_t a = chf->cells[ncol].index + (uint32_t)nb_span_con(s, dir);
                    if (chf->areas[a] != NB_NULL_AREA)
                        parent[find_root(parent, a)] = find_root(parent, i);
                }
            }
        }
    for (uint32_t i = 0; i < n; ++i)
        if (chf->areas[i] != NB_NULL_AREA)
            ++size[find_root(parent, i)];
    int dropped = 0, wrong = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (chf->areas[i] != NB_NULL_AREA && chf->spans[i].reg == 0) {
            ++dropped;
            wrong += size[find_root(parent, i)] >= (uint32_t)min_area;
        }
    CHECK_INT(wrong, 0);
    free(parent);
    free(size);
}

static void check_level(const char* name, const int reference[NPART])
{
    nb_bake_result res;
    nb_compact_heightfield* chf = nbt_level_compact(ctx, name, &res);
    if (!chf)
        return;
    nb_config cfg;
    nb_config_cells cells;
    CHECK_INT(nb_config_resolve(ctx, NULL, &cfg, &cells), NB_OK);
    for (int part = 0; part < NPART; ++part) {
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, cells.min_region_area, cells.merge_region_area), NB_OK, "");
        const int n = check_invariants(chf, part);
        /* The reference's count is its max region id + 1, which is what max_regions holds here too (all ids
         * 1..max_regions-1 used, checked above). */
        if (fabs((double)chf->max_regions - reference[part]) > 0.15 * reference[part]) {
            fprintf(stderr, "  %s %s: %d regions (max_regions %d), reference %d\n", name, part_name[part], n,
                    chf->max_regions, reference[part]);
            CHECK(!"region count within 15% of the reference");
        }
        CHECK(n > 1);
        if (part != LAYERS) /* layers drop small sheets of big pieces too */
            check_dropped_are_small(chf, cells.min_region_area);
        /* as a tile would: a border strip around the level */
        CHECK_STATUS(ctx, partition(ctx, chf, part, 5, cells.min_region_area, cells.merge_region_area), NB_OK, "");
        CHECK(check_invariants(chf, part) > 1);
        int misflagged = 0; /* the strip flags exactly the walkable spans within 5 cells of the edge */
        for (int z = 0; z < chf->height; ++z)
            for (int x = 0; x < chf->width; ++x) {
                const nb_compact_cell c = chf->cells[x + z * chf->width];
                const int edge = x < 5 || z < 5 || x >= chf->width - 5 || z >= chf->height - 5;
                for (uint32_t i = c.index; i < c.index + c.count; ++i)
                    misflagged += chf->areas[i] != NB_NULL_AREA && ((chf->spans[i].reg & NB_BORDER_REG) != 0) != edge;
            }
        CHECK_INT(misflagged, 0);
    }
    nb_bake_result_release(ctx, &res);
}

static void test_real_levels(void)
{
    static const int dungeon[NPART] = { 16, 17, 5 };
    static const int nav_test[NPART] = { 48, 50, 19 };
    check_level("dungeon.obj", dungeon);
    check_level("nav_test.obj", nav_test);
}

/* ---- failures ---- */

static void test_out_of_memory(void)
{
    /* A real level: enough regions and outline lists to make every buffer grow. */
    nb_bake_result res;
    nb_compact_heightfield* chf = nbt_level_compact(ctx, "dungeon.obj", &res);
    if (!chf)
        return;
    static const char* const fn[NPART] = { "nb_build_regions_watershed", "nb_build_regions_monotone",
                                           "nb_build_regions_layers" };
    uint16_t* expect = (uint16_t*)malloc(sizeof(uint16_t) * chf->span_count);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    for (int part = 0; part < NPART; ++part) {
        CHECK_STATUS(ctx, part == WATERSHED ? nb_build_regions_watershed(ctx, chf, 2, 64, 400)
                                            : partition(ctx, chf, part, 2, 64, 400),
                     NB_OK, "");
        for (uint32_t i = 0; i < chf->span_count; ++i)
            expect[i] = chf->spans[i].reg;
        const uint16_t expect_max = chf->max_regions;
        int failures = 0;
        for (long fail = 1; fail < 1000; ++fail) {
            nbt_alloc a = { 0 };
            nb_context_desc d;
            memset(&d, 0, sizeof(d));
            nbt_alloc_hooks(&d, &a);
            nb_context* c = nb_context_create(&d);
            CHECK(c != NULL);
            if (!c)
                break;
            for (uint32_t i = 0; i < chf->span_count; ++i)
                chf->spans[i].reg = 0x1234;
            a.fail_at = a.calls + fail;
            const nb_status st = part == WATERSHED ? nb_build_regions_watershed(c, chf, 2, 64, 400)
                                                   : partition(c, chf, part, 2, 64, 400);
            if (st == NB_OK) {
                int same = 1;
                for (uint32_t i = 0; i < chf->span_count; ++i)
                    same &= chf->spans[i].reg == expect[i];
                CHECK(same);
                CHECK_INT(chf->max_regions, expect_max);
            } else {
                ++failures;
                CHECK_STATUS(c, st, NB_ERR_OUT_OF_MEMORY, fn[part]);
                CHECK(strstr(nb_context_message(c), "out of memory") != NULL);
                int untouched = 1;
                for (uint32_t i = 0; i < chf->span_count; ++i)
                    untouched &= chf->spans[i].reg == 0x1234;
                CHECK(untouched);
            }
            nb_context_destroy(c);
            CHECK_INT(a.live, 0);
            if (st == NB_OK)
                break;
        }
        CHECK(failures >= 10); /* every buffer of the stage, and the outline lists */
    }
    free(expect);
    nb_bake_result_release(ctx, &res);
}

static int stop_at_third(void* user, nb_stage stage, uint32_t done, uint32_t total)
{
    int* calls = (int*)user;
    CHECK_INT(stage, NB_STAGE_REGIONS);
    CHECK(done <= total);
    return ++*calls >= 3;
}

static void test_cancel(void)
{
    nb_compact_heightfield* chf = make_floor(40, 40, 0, 0, 40, 40);
    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    int calls = 0;
    d.progress = stop_at_third;
    d.progress_user = &calls;
    nb_context* c = nb_context_create(&d);
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    CHECK_STATUS(c, nb_build_regions_watershed(c, chf, 0, 64, 400), NB_ERR_CANCELLED, "cancelled");
    CHECK_INT(calls, 3);
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK_INT(chf->spans[i].reg, 0);
    nb_context_destroy(c);
    CHECK_INT(a.live, 0);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_too_many_regions(void)
{
    /* 182 x 182 single-span islands: more regions than ids below the border flag. */
    nb_heightfield* hf = make_hf(ctx, 364, 364);
    for (int z = 0; z < 364; z += 2)
        for (int x = 0; x < 364; x += 2)
            nb_heightfield_add_span(ctx, hf, x, z, 0, 5, NB_WALKABLE_AREA, 1);
    nb_compact_heightfield* chf = compact(ctx, hf);
    CHECK_INT(chf->span_count, 182 * 182);
    CHECK_STATUS(ctx, partition(ctx, chf, WATERSHED, 0, 0, 0), NB_ERR_TOO_LARGE, "nb_build_regions_watershed: more");
    CHECK_STATUS(ctx, partition(ctx, chf, MONOTONE, 0, 0, 0), NB_ERR_TOO_LARGE, "nb_build_regions_monotone: more");
    CHECK_STATUS(ctx, partition(ctx, chf, LAYERS, 0, 0, 0), NB_ERR_TOO_LARGE, "nb_build_regions_layers: more");
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_arguments(void)
{
    CHECK_STATUS(ctx, nb_build_regions_watershed(ctx, NULL, 0, 8, 20), NB_ERR_NULL_ARG,
                 "nb_build_regions_watershed: chf is NULL");
    CHECK_STATUS(ctx, nb_build_regions_monotone(ctx, NULL, 0, 8, 20), NB_ERR_NULL_ARG,
                 "nb_build_regions_monotone: chf is NULL");
    CHECK_STATUS(ctx, nb_build_regions_layers(ctx, NULL, 0, 8), NB_ERR_NULL_ARG,
                 "nb_build_regions_layers: chf is NULL");
    nb_compact_heightfield* chf = make_floor(8, 8, 0, 0, 8, 8);
    CHECK(nb_build_regions_monotone(NULL, chf, 0, 8, 20) == NB_ERR_NULL_ARG);
    CHECK(nb_build_regions_layers(NULL, chf, 0, 8) == NB_ERR_NULL_ARG);
    CHECK(nb_build_regions_watershed(NULL, chf, 0, 8, 20) == NB_ERR_NULL_ARG);
    CHECK_STATUS(ctx, nb_build_regions_watershed(ctx, chf, 0, 8, 20), NB_ERR_INVALID_ARG,
                 "call nb_build_distance_field first");
    CHECK_STATUS(ctx, nb_build_regions_monotone(ctx, chf, -1, 8, 20), NB_ERR_INVALID_ARG, "border_size");
    CHECK_STATUS(ctx, nb_build_regions_layers(ctx, chf, 0, -8), NB_ERR_INVALID_ARG, "min_region_area");
    CHECK_STATUS(ctx, nb_build_regions_monotone(ctx, chf, 0, 8, -20), NB_ERR_INVALID_ARG, "merge_region_area");
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    CHECK_STATUS(ctx, nb_build_regions_watershed(ctx, chf, -2, 8, 20), NB_ERR_INVALID_ARG, "border_size");
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK_INT(chf->spans[i].reg, 0); /* no call above changed anything */
    /* A border wider than the grid: everything is border. */
    CHECK_STATUS(ctx, nb_build_regions_monotone(ctx, chf, 50, 8, 20), NB_OK, "");
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK(chf->spans[i].reg & NB_BORDER_REG);
    CHECK_INT(chf->max_regions, 1);
    nb_compact_heightfield_destroy(ctx, chf);

    /* No spans at all. */
    chf = make_floor(6, 6, 0, 0, 0, 0);
    for (int part = 0; part < NPART; ++part) {
        CHECK_STATUS(ctx, partition(ctx, chf, part, 0, 8, 20), NB_OK, "");
        CHECK_INT(chf->max_regions, 1);
    }
    nb_compact_heightfield_destroy(ctx, chf);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_flat_square_is_one_region);
    RUN(test_two_squares_are_two_regions);
    RUN(test_bridge_between_rooms);
    RUN(test_long_thin_corridor_grows_from_the_room);
    RUN(test_small_islands_are_dropped);
    RUN(test_unwalkable_and_areas);
    RUN(test_tile_border_regions);
    RUN(test_spiral_layers_never_stack);
    RUN(test_real_levels);
    RUN(test_out_of_memory);
    RUN(test_cancel);
    RUN(test_too_many_regions);
    RUN(test_arguments);
    nb_context_destroy(ctx);
    return nbt_finish("test_regions");
}
