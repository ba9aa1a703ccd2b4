/* Wavefront partition (seed 004): invariants (coverage, connectivity, one span per column, digital convexity as
 * region_wavefront.c states it), analytic rooms (rectangle, L, diagonal wall, a long sliver), tile borders,
 * determinism, output pinned on generated obstacle fields, failures (memory, cancel, too many regions, arguments)
 * and whole-pipeline bakes of the standard levels against watershed and monotone. */
#include "navbake.h"
#include "nbtest_level.h"
#include "obj.h"

#include <stdint.h>

static nb_context* ctx;

#define CONVEX_RUN 17 /* region_wavefront.c: every run of WINDOW + 1 = 17 rows or columns is digitally convex */

/* ---- synthetic floors ---- */

static nb_heightfield* make_hf(int w, int h)
{
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)w * 0.3f, 30.0f, (float)h * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(ctx, w, h, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    return hf;
}

static nb_compact_heightfield* compact(nb_heightfield* hf)
{
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
    nb_heightfield_destroy(ctx, hf);
    return chf;
}

typedef int (*floor_fn)(int x, int z, const int* p);

/* A w x h grid with a floor where inside(x, z, p) holds. */
static nb_compact_heightfield* make_room(int w, int h, floor_fn inside, const int* p)
{
    nb_heightfield* hf = make_hf(w, h);
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x)
            if (inside(x, z, p))
                CHECK_INT(nb_heightfield_add_span(ctx, hf, x, z, 0, 5, NB_WALKABLE_AREA, 1), NB_OK);
    return compact(hf);
}

/* p: x0, z0, x1, z1 */
static int in_rect(int x, int z, const int* p) { return x >= p[0] && x < p[2] && z >= p[1] && z < p[3]; }
/* two rectangles */
static int in_two_rects(int x, int z, const int* p) { return in_rect(x, z, p) || in_rect(x, z, p + 4); }
/* a rectangle cut by the wall 2x + 3z >= p[4] */
static int in_cut_rect(int x, int z, const int* p) { return in_rect(x, z, p) && 2 * x + 3 * z < p[4]; }

/* ---- invariants ---- */

static uint32_t find_root(uint32_t* parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Does no triple i < j < k (k - i < CONVEX_RUN) of the lines first..last have f(j) a cell or more below the chord
 * from i to k? Brute force, independent of the stage's incremental check. */
static int runs_concave(const int* f, int first, int last)
{
    for (int i = first; i <= last; ++i)
        for (int k = i + 2; k <= last && k - i < CONVEX_RUN; ++k)
            for (int j = i + 1; j < k; ++j)
                if ((long long)(f[j] + 1 - f[i]) * (k - i) <= (long long)(f[k] - f[i]) * (j - i))
                    return 0;
    return 1;
}

typedef struct inv {
    int regions;     /* max_regions - 1 */
    int uncovered;   /* walkable spans without a region outside islands below min_area */
    int split;       /* regions in more than one linked piece */
    int stacked;     /* regions with two spans in one column */
    int mixed_area;  /* regions over two areas */
    int unused;      /* ids below max_regions without spans */
    int not_convex;  /* regions whose rows or columns are not intervals, or not digitally convex */
} inv;

/* Checks a partition's result; min_area: islands smaller than this may be left without a region. */
static inv check_partition(const nb_compact_heightfield* chf, int min_area, int want_convex)
{
    inv r;
    memset(&r, 0, sizeof(r));
    const uint32_t n = chf->span_count;
    const int w = chf->width, h = chf->height, nreg = chf->max_regions;
    r.regions = nreg - 1;
    uint32_t* parent = (uint32_t*)malloc(sizeof(uint32_t) * (n + 1));
    uint32_t* walk_parent = (uint32_t*)malloc(sizeof(uint32_t) * (n + 1));
    uint32_t* walk_size = (uint32_t*)calloc(n + 1, sizeof(uint32_t));
    uint32_t* root = (uint32_t*)malloc(sizeof(uint32_t) * ((size_t)nreg + 1));
    int* area = (int*)malloc(sizeof(int) * ((size_t)nreg + 1));
    int* last_col = (int*)malloc(sizeof(int) * ((size_t)nreg + 1));
    /* per region: row intervals and column intervals (and counts, to see that they are intervals) */
    int* rlo = (int*)malloc(sizeof(int) * (size_t)h);
    int* rhi = (int*)malloc(sizeof(int) * (size_t)h);
    int* rcount = (int*)malloc(sizeof(int) * (size_t)h);
    int* clo = (int*)malloc(sizeof(int) * (size_t)w);
    int* chi = (int*)malloc(sizeof(int) * (size_t)w);
    int* ccount = (int*)malloc(sizeof(int) * (size_t)w);
    for (uint32_t i = 0; i < n; ++i)
        parent[i] = walk_parent[i] = i;
    for (int k = 0; k <= nreg; ++k) {
        root[k] = UINT32_MAX;
        area[k] = -1;
        last_col[k] = -1;
    }
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x) {
            const int col = x + z * w;
            const nb_compact_cell c = chf->cells[col];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const nb_compact_span* s = &chf->spans[i];
                const uint16_t g = s->reg;
                if (chf->areas[i] == NB_NULL_AREA)
                    continue;
                for (int dir = 0; dir < 4; ++dir) {
                    if (nb_span_con(s, dir) == NB_NOT_CONNECTED)
                        continue;
                    const int ncol = x + nb_dir_offset_x(dir) + (z + nb_dir_offset_z(dir)) * w;
                    const uint32_t a = chf->cells[ncol].index + (uint32_t)nb_span_con(s, dir);
                    if (chf->areas[a] != NB_NULL_AREA)
                        walk_parent[find_root(walk_parent, a)] = find_root(walk_parent, i);
                    if (g && !(g & NB_BORDER_REG) && chf->spans[a].reg == g)
                        parent[find_root(parent, a)] = find_root(parent, i);
                }
                if (g == 0 || (g & NB_BORDER_REG) || g >= nreg)
                    continue;
                if (area[g] < 0)
                    area[g] = chf->areas[i];
                r.mixed_area += area[g] != chf->areas[i];
                r.stacked += last_col[g] == col;
                last_col[g] = col;
            }
        }
    for (uint32_t i = 0; i < n; ++i)
        if (chf->areas[i] != NB_NULL_AREA)
            ++walk_size[find_root(walk_parent, i)];
    for (uint32_t i = 0; i < n; ++i) {
        const uint16_t g = chf->spans[i].reg;
        if (chf->areas[i] == NB_NULL_AREA)
            continue;
        if (g == 0) {
            r.uncovered += walk_size[find_root(walk_parent, i)] >= (uint32_t)min_area;
            continue;
        }
        if ((g & NB_BORDER_REG) || g >= nreg)
            continue;
        const uint32_t top = find_root(parent, i);
        if (root[g] == UINT32_MAX)
            root[g] = top;
        r.split += root[g] != top;
    }
    for (int g = 1; g < nreg; ++g)
        r.unused += root[g] == UINT32_MAX;

    for (int g = 1; want_convex && g < nreg; ++g) {
        for (int z = 0; z < h; ++z) {
            rlo[z] = INT32_MAX;
            rhi[z] = INT32_MIN;
            rcount[z] = 0;
        }
        for (int x = 0; x < w; ++x) {
            clo[x] = INT32_MAX;
            chi[x] = INT32_MIN;
            ccount[x] = 0;
        }
        int z0 = INT32_MAX, z1 = INT32_MIN, x0 = INT32_MAX, x1 = INT32_MIN;
        for (int z = 0; z < h; ++z)
            for (int x = 0; x < w; ++x) {
                const nb_compact_cell c = chf->cells[x + z * w];
                for (uint32_t i = c.index; i < c.index + c.count; ++i)
                    if (chf->spans[i].reg == g) {
                        rlo[z] = x < rlo[z] ? x : rlo[z];
                        rhi[z] = x > rhi[z] ? x : rhi[z];
                        ++rcount[z];
                        clo[x] = z < clo[x] ? z : clo[x];
                        chi[x] = z > chi[x] ? z : chi[x];
                        ++ccount[x];
                        z0 = z < z0 ? z : z0;
                        z1 = z > z1 ? z : z1;
                        x0 = x < x0 ? x : x0;
                        x1 = x > x1 ? x : x1;
                    }
            }
        int ok = z0 <= z1;
        for (int z = z0; ok && z <= z1; ++z)
            ok = rcount[z] > 0 && rcount[z] == rhi[z] - rlo[z] + 1;
        for (int x = x0; ok && x <= x1; ++x)
            ok = ccount[x] > 0 && ccount[x] == chi[x] - clo[x] + 1;
        if (ok) {
            /* sides as concave sequences: hi and -lo of rows, top and -bottom of columns */
            for (int z = z0; z <= z1; ++z)
                rlo[z] = -rlo[z];
            for (int x = x0; x <= x1; ++x)
                clo[x] = -clo[x];
            ok = runs_concave(rhi, z0, z1) && runs_concave(rlo, z0, z1) && runs_concave(chi, x0, x1) &&
                 runs_concave(clo, x0, x1);
        }
        r.not_convex += !ok;
    }
    free(parent);
    free(walk_parent);
    free(walk_size);
    free(root);
    free(area);
    free(last_col);
    free(rlo);
    free(rhi);
    free(rcount);
    free(clo);
    free(chi);
    free(ccount);
    return r;
}

static void check_inv(const inv* r, const char* what)
{
    CHECK_INT(r->uncovered, 0);
    CHECK_INT(r->split, 0);
    CHECK_INT(r->stacked, 0);
    CHECK_INT(r->mixed_area, 0);
    CHECK_INT(r->unused, 0);
    if (r->uncovered || r->split || r->stacked || r->mixed_area || r->unused)
        fprintf(stderr, "  (%s)\n", what);
}

/* ---- analytic rooms ---- */

static void test_rectangle_is_one_region(void)
{
    static const int room[4] = { 1, 1, 39, 29 };
    nb_compact_heightfield* chf = make_room(40, 30, in_rect, room);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 0, 0), NB_OK, "");
    CHECK(chf->dist != NULL); /* built on the way */
    const inv r = check_partition(chf, 0, 1);
    check_inv(&r, "rectangle");
    CHECK_INT(r.regions, 1);
    CHECK_INT(r.not_convex, 0);
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK_INT(chf->spans[i].reg, 1);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_l_room_is_two_regions(void)
{
    /* a wide arm along x and a narrower one along z from its end: two rectangles */
    static const int room[8] = { 1, 1, 70, 25, 1, 25, 17, 69 };
    nb_compact_heightfield* chf = make_room(72, 70, in_two_rects, room);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 0, 0), NB_OK, "");
    inv r = check_partition(chf, 0, 1);
    check_inv(&r, "L, no clean-up");
    CHECK_INT(r.not_convex, 0);
    CHECK(r.regions >= 2); /* an L is not convex */
    CHECK(r.regions <= 3);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 64, 400), NB_OK, "");
    r = check_partition(chf, 64, 0);
    check_inv(&r, "L");
    CHECK_INT(r.regions, 2);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_diagonal_wall_is_few_regions(void)
{
    /* a 60 x 60 room cut by a wall of slope -2/3 (a staircase in cells): a convex room */
    static const int room[5] = { 1, 1, 61, 61, 180 };
    nb_compact_heightfield* chf = make_room(62, 62, in_cut_rect, room);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 0, 0), NB_OK, "");
    inv r = check_partition(chf, 0, 1);
    check_inv(&r, "diagonal");
    CHECK_INT(r.not_convex, 0);
    CHECK(r.regions <= 2);
    /* compare: the monotone sweep cuts the staircase into a strip per step or so; watershed into blobs */
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 64, 400), NB_OK, "");
    r = check_partition(chf, 64, 0);
    CHECK_INT(r.regions, 1);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_long_sliver(void)
{
    /* 12 cells wide, 55550 long, both ways round: one region grown in 55550 short rounds (near-linear: a front
     * costs what moves). The run time goes in the report, not here. */
    for (int along_x = 0; along_x <= 1; ++along_x) {
        const int len = 55550, wide = 12;
        const int room[4] = { 1, 1, along_x ? len + 1 : wide + 1, along_x ? wide + 1 : len + 1 };
        nb_compact_heightfield* chf = make_room(room[2] + 1, room[3] + 1, in_rect, room);
        CHECK_INT(chf->span_count, len * wide);
        CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 64, 400), NB_OK, "");
        CHECK_INT(chf->max_regions, 2);
        uint32_t in_region = 0;
        for (uint32_t i = 0; i < chf->span_count; ++i)
            in_region += chf->spans[i].reg == 1;
        CHECK_INT(in_region, chf->span_count);
        nb_compact_heightfield_destroy(ctx, chf);
    }
}

static void test_tile_border(void)
{
    static const int room[4] = { 0, 0, 40, 40 };
    nb_compact_heightfield* chf = make_room(40, 40, in_rect, room);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 4, 64, 400), NB_OK, "");
    CHECK_INT(chf->border_size, 4);
    int bad = 0;
    for (int z = 0; z < 40; ++z)
        for (int x = 0; x < 40; ++x) {
            const uint16_t g = chf->spans[chf->cells[x + z * 40].index].reg;
            const int border = x < 4 || z < 4 || x >= 36 || z >= 36;
            bad += border ? !(g & NB_BORDER_REG) : g != 1;
        }
    CHECK_INT(bad, 0);
    CHECK_INT(chf->max_regions, 2); /* the inside is one region; border regions are not counted */
    nb_compact_heightfield_destroy(ctx, chf);
}

/* ---- real levels ---- */

static void test_levels(void)
{
    static const char* const levels[2] = { "dungeon.obj", "nav_test.obj" };
    for (int lv = 0; lv < 2; ++lv) {
        nb_bake_result res;
        nb_compact_heightfield* chf = nbt_level_compact(ctx, levels[lv], &res);
        if (!chf)
            continue;
        /* raw regions (no clean-up): each one convex */
        CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 0, 0), NB_OK, "");
        inv r = check_partition(chf, 0, 1);
        check_inv(&r, levels[lv]);
        CHECK_INT(r.not_convex, 0);
        /* with the default clean-up, twice: the same ids */
        CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 64, 400), NB_OK, "");
        r = check_partition(chf, 64, 0);
        check_inv(&r, levels[lv]);
        uint16_t* first = (uint16_t*)malloc(sizeof(uint16_t) * chf->span_count);
        for (uint32_t i = 0; i < chf->span_count; ++i)
            first[i] = chf->spans[i].reg;
        const uint16_t max_first = chf->max_regions;
        CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 64, 400), NB_OK, "");
        int same = chf->max_regions == max_first;
        for (uint32_t i = 0; i < chf->span_count; ++i)
            same &= chf->spans[i].reg == first[i];
        CHECK(same);
        /* tile border strips */
        CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 8, 64, 400), NB_OK, "");
        r = check_partition(chf, 64, 0);
        CHECK_INT(r.split, 0);
        CHECK_INT(r.stacked, 0);
        int bad_border = 0;
        for (int z = 0; z < chf->height; ++z)
            for (int x = 0; x < chf->width; ++x) {
                const nb_compact_cell c = chf->cells[x + z * chf->width];
                const int border = x < 8 || z < 8 || x >= chf->width - 8 || z >= chf->height - 8;
                for (uint32_t i = c.index; i < c.index + c.count; ++i)
                    if (chf->areas[i] != NB_NULL_AREA)
                        bad_border += border != ((chf->spans[i].reg & NB_BORDER_REG) != 0);
            }
        CHECK_INT(bad_border, 0);
        free(first);
        nb_bake_result_release(ctx, &res);
    }
}

/* ---- failures ---- */

static void test_out_of_memory(void)
{
    nb_bake_result res;
    nb_compact_heightfield* chf = nbt_level_compact(ctx, "dungeon.obj", &res);
    if (!chf)
        return;
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 2, 64, 400), NB_OK, "");
    uint16_t* expect = (uint16_t*)malloc(sizeof(uint16_t) * chf->span_count);
    for (uint32_t i = 0; i < chf->span_count; ++i)
        expect[i] = chf->spans[i].reg;
    const uint16_t expect_max = chf->max_regions;
    int failures = 0;
    for (long fail = 1; fail < 1000; ++fail) {
        nbt_alloc a;
        nb_context* c = nbt_failing_context(&a, fail);
        if (!c)
            break;
        for (uint32_t i = 0; i < chf->span_count; ++i)
            chf->spans[i].reg = 0x1234;
        const nb_status st = nb_build_regions_wavefront(c, chf, 2, 64, 400);
        if (st == NB_OK) {
            int same = 1;
            for (uint32_t i = 0; i < chf->span_count; ++i)
                same &= chf->spans[i].reg == expect[i];
            CHECK(same);
            CHECK_INT(chf->max_regions, expect_max);
        } else {
            ++failures;
            CHECK_STATUS(c, st, NB_ERR_OUT_OF_MEMORY, "nb_build_regions_wavefront: out of memory");
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
    CHECK(failures >= 10); /* the stage's eight buffers and the clean-up's */
    free(expect);
    nb_bake_result_release(ctx, &res);
}

/* ---- pinned output: obstacle fields ---- */

/* An obstacle field: discs and slanted walls of every slope scattered over a w x h floor, two areas split by a
 * diagonal, and a second floor above one band (stacked columns, unlinked). The sides of its regions are flat,
 * diagonal, curved and broken, in every mix the side checks take shortcuts for. */
typedef struct obstacle_field {
    int w, h, discs, walls;
    int disc[24][3]; /* x, z, radius^2 */
    /* a, b, c, t, e, m: the cells with |a x + b z - c| < t (about a cell thick) and |b x - a z - m| < e t */
    int wall[24][6];
} obstacle_field;

static int iabs(int a) { return a < 0 ? -a : a; }

static uint32_t lcg(uint32_t* s) { return *s = *s * 1664525u + 1013904223u, *s >> 8; }

static void make_field(obstacle_field* f, int w, int h, uint32_t seed)
{
    f->w = w;
    f->h = h;
    f->discs = 6 + (int)(lcg(&seed) % 18);
    f->walls = 6 + (int)(lcg(&seed) % 18);
    for (int i = 0; i < f->discs; ++i) {
        const int r = 2 + (int)(lcg(&seed) % 14);
        f->disc[i][0] = (int)(lcg(&seed) % (uint32_t)w);
        f->disc[i][1] = (int)(lcg(&seed) % (uint32_t)h);
        f->disc[i][2] = r * r;
    }
    for (int i = 0; i < f->walls; ++i) {
        const int a = (int)(lcg(&seed) % 13) - 6, b = (int)(lcg(&seed) % 13) - 6;
        const int cx = (int)(lcg(&seed) % (uint32_t)w), cz = (int)(lcg(&seed) % (uint32_t)h);
        int* wl = f->wall[i];
        wl[0] = a;
        wl[1] = b == 0 && a == 0 ? 1 : b;
        wl[2] = a * cx + wl[1] * cz;
        wl[3] = iabs(a) + iabs(wl[1]); /* about a cell thick */
        wl[4] = 10 + (int)(lcg(&seed) % 60);         /* about this many cells long each way */
        wl[5] = wl[1] * cx - a * cz;
    }
}

static int field_open(const obstacle_field* f, int x, int z)
{
    if (x < 1 || z < 1 || x >= f->w - 1 || z >= f->h - 1)
        return 0;
    for (int i = 0; i < f->discs; ++i) {
        const int dx = x - f->disc[i][0], dz = z - f->disc[i][1];
        if (dx * dx + dz * dz < f->disc[i][2])
            return 0;
    }
    for (int i = 0; i < f->walls; ++i) {
        const int* wl = f->wall[i];
        if (iabs(wl[0] * x + wl[1] * z - wl[2]) < wl[3] &&
            iabs(wl[1] * x - wl[0] * z - wl[5]) < wl[4] * wl[3])
            return 0;
    }
    return 1;
}

static nb_compact_heightfield* make_field_floor(const obstacle_field* f)
{
    nb_heightfield* hf = make_hf(f->w, f->h);
    for (int z = 0; z < f->h; ++z)
        for (int x = 0; x < f->w; ++x) {
            if (!field_open(f, x, z))
                continue;
            const uint8_t area = 3 * x + 2 * z < 2 * f->w ? NB_WALKABLE_AREA : 7;
            CHECK_INT(nb_heightfield_add_span(ctx, hf, x, z, 0, 5, area, 1), NB_OK);
            if (z > f->h / 3 && z < f->h / 2)
                CHECK_INT(nb_heightfield_add_span(ctx, hf, x, z, 30, 35, NB_WALKABLE_AREA, 1), NB_OK);
        }
    return compact(hf);
}

static uint64_t region_hash(const nb_compact_heightfield* chf)
{
    uint64_t hash = 1469598103934665603ull; /* FNV-1a over the span ids and the id count */
    for (uint32_t i = 0; i < chf->span_count; ++i)
        hash = (hash ^ chf->spans[i].reg) * 1099511628211ull;
    return (hash ^ chf->max_regions) * 1099511628211ull;
}

static void test_pinned_output(void)
{
    /* Region ids of obstacle fields, raw and cleaned up, as the partition gave them when its side checks were a
     * plain scan of every line (before the same-value runs and the unrolled scans): any change to how the growth
     * decides must leave every id as it was. A change that means to alter the partition updates these. */
    static const struct { int w, h; uint32_t seed; uint64_t raw, cleaned; } pinned[] = {
        { 120, 90, 1, 0xabad07277b2d21a6ull, 0x2a4a56e4a1408bd8ull },
        { 160, 160, 2, 0xfac4bc8d6bcedf48ull, 0xb10c4c5c98090725ull },
        { 200, 130, 3, 0x1cd3515b5e0a094cull, 0xae5f94d593ca12e5ull },
        { 90, 210, 4, 0x9724db0a0ed58322ull, 0x98b92558c3b99c8aull },
        { 256, 256, 5, 0xf9df8fbfde5b1b75ull, 0x6a365c28f4014a6cull },
        { 140, 140, 6, 0x0fc46e9a23033b14ull, 0x1c3077d17d562b35ull },
    };
    for (size_t t = 0; t < sizeof(pinned) / sizeof(pinned[0]); ++t) {
        obstacle_field f;
        memset(&f, 0, sizeof(f));
        make_field(&f, pinned[t].w, pinned[t].h, pinned[t].seed);
        nb_compact_heightfield* chf = make_field_floor(&f);
        CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 0, 0), NB_OK, "");
        inv r = check_partition(chf, 0, 1);
        check_inv(&r, "obstacle field");
        CHECK_INT(r.not_convex, 0);
        const uint64_t raw = region_hash(chf);
        CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 4, 64, 400), NB_OK, "");
        const uint64_t cleaned = region_hash(chf);
        if (raw != pinned[t].raw || cleaned != pinned[t].cleaned)
            fprintf(stderr, "  field %d: raw 0x%016llxull, cleaned 0x%016llxull (%d regions)\n", (int)t,
                    (unsigned long long)raw, (unsigned long long)cleaned, r.regions);
        CHECK(raw == pinned[t].raw);
        CHECK(cleaned == pinned[t].cleaned);
        nb_compact_heightfield_destroy(ctx, chf);
    }
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
    nb_bake_result res;
    nb_compact_heightfield* chf = nbt_level_compact(ctx, "nav_test.obj", &res);
    if (!chf)
        return;
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, chf), NB_OK, "");
    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    int calls = 0;
    d.progress = stop_at_third;
    d.progress_user = &calls;
    nb_context* c = nb_context_create(&d);
    CHECK_STATUS(c, nb_build_regions_wavefront(c, chf, 0, 64, 400), NB_ERR_CANCELLED, "cancelled");
    CHECK_INT(calls, 3);
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK_INT(chf->spans[i].reg, 0);
    nb_context_destroy(c);
    CHECK_INT(a.live, 0);
    nb_bake_result_release(ctx, &res);
}

static int in_checker(int x, int z, const int* p) { return (void)p, x % 2 == 0 && z % 2 == 0; }

static void test_too_many_regions(void)
{
    /* 182 x 182 single-span islands: more regions than ids below the border flag */
    nb_compact_heightfield* chf = make_room(364, 364, in_checker, NULL);
    CHECK_INT(chf->span_count, 182 * 182);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 0, 0), NB_ERR_TOO_LARGE,
                 "nb_build_regions_wavefront: more than 32767 regions");
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK_INT(chf->spans[i].reg, 0);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_arguments(void)
{
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, NULL, 0, 8, 20), NB_ERR_NULL_ARG,
                 "nb_build_regions_wavefront: chf is NULL");
    static const int room[4] = { 0, 0, 8, 8 };
    nb_compact_heightfield* chf = make_room(8, 8, in_rect, room);
    CHECK(nb_build_regions_wavefront(NULL, chf, 0, 8, 20) == NB_ERR_NULL_ARG);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, -1, 8, 20), NB_ERR_INVALID_ARG, "border_size");
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, -8, 20), NB_ERR_INVALID_ARG, "min_region_area");
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 8, -20), NB_ERR_INVALID_ARG, "merge_region_area");
    CHECK(chf->dist == NULL);
    /* a border wider than the grid: everything is border */
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 50, 8, 20), NB_OK, "");
    for (uint32_t i = 0; i < chf->span_count; ++i)
        CHECK(chf->spans[i].reg & NB_BORDER_REG);
    CHECK_INT(chf->max_regions, 1);
    nb_compact_heightfield_destroy(ctx, chf);
    /* no spans at all */
    static const int none[4] = { 0, 0, 0, 0 };
    chf = make_room(6, 6, in_rect, none);
    CHECK_STATUS(ctx, nb_build_regions_wavefront(ctx, chf, 0, 8, 20), NB_OK, "");
    CHECK_INT(chf->max_regions, 1);
    nb_compact_heightfield_destroy(ctx, chf);
}

/* ---- the whole pipeline ---- */

static void test_pipeline(void)
{
    static const char* const levels[2] = { "dungeon.obj", "nav_test.obj" };
    for (int lv = 0; lv < 2; ++lv) {
        nb_obj obj;
        if (nbt_load_level(levels[lv], &obj) != 0) {
            CHECK(!"mesh loads");
            continue;
        }
        nb_bake_input in = nb_obj_bake_input(&obj);
        for (int nvp = 6; nvp <= 12; nvp += 6) {
            double polys[3] = { 0, 0, 0 };
            static const nb_partition parts[3] = { NB_PARTITION_WAVEFRONT, NB_PARTITION_WATERSHED,
                                                   NB_PARTITION_MONOTONE };
            for (int p = 0; p < 3; ++p) {
                nb_config cfg;
                memset(&cfg, 0, sizeof(cfg));
                cfg.partition = parts[p];
                cfg.verts_per_poly = nvp;
                nb_bake_result res;
                CHECK_STATUS(ctx, nb_bake(ctx, &in, &cfg, NB_STAGE_ALL, 0, &res), NB_OK, "");
                polys[p] = res.stats[NB_STAT_POLYS];
                if (p == 0) {
                    CHECK(res.stats[NB_STAT_REGIONS] >= 2);
                    CHECK(polys[0] > 0);
                    CHECK(res.poly_mesh && res.poly_mesh->nvp == nvp);
                }
                nb_bake_result_release(ctx, &res);
            }
            printf("  %s solo, %d verts per polygon: polygons wavefront %.0f, watershed %.0f, monotone %.0f\n",
                   levels[lv], nvp, polys[0], polys[1], polys[2]);
            if (nvp == 12) /* the point of the partition: fewer, larger polygons */
                CHECK(polys[0] <= polys[1]);
            for (int tile = 32; tile <= 64; tile += 32) {
                nb_config cfg;
                memset(&cfg, 0, sizeof(cfg));
                cfg.partition = NB_PARTITION_WAVEFRONT;
                cfg.verts_per_poly = nvp;
                cfg.tile_size = tile;
                nb_navmesh* nav = NULL;
                CHECK_STATUS(ctx, nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav), NB_OK, "");
                if (!nav)
                    continue;
                CHECK(nb_navmesh_tile_count(nav) > 1);
                CHECK(nb_navmesh_poly_count(nav) > 0);
                printf("  %s tiles of %d, %d verts per polygon: %u tiles, %u polygons\n", levels[lv], tile, nvp,
                       nb_navmesh_tile_count(nav), nb_navmesh_poly_count(nav));
                nb_navmesh_destroy(ctx, nav);
            }
        }
        nb_obj_free(&obj);
    }
    /* the config accepts 4 and names the choices */
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.partition = NB_PARTITION_WAVEFRONT;
    CHECK_STATUS(ctx, nb_config_resolve(ctx, &cfg, &cfg, NULL), NB_OK, "");
    CHECK_INT(cfg.partition, NB_PARTITION_WAVEFRONT);
    cfg.partition = (nb_partition)5;
    CHECK_STATUS(ctx, nb_config_resolve(ctx, &cfg, &cfg, NULL), NB_ERR_INVALID_CONFIG, "4 (wavefront)");
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_rectangle_is_one_region);
    RUN(test_l_room_is_two_regions);
    RUN(test_diagonal_wall_is_few_regions);
    RUN(test_long_sliver);
    RUN(test_tile_border);
    RUN(test_levels);
    RUN(test_pinned_output);
    RUN(test_out_of_memory);
    RUN(test_cancel);
    RUN(test_too_many_regions);
    RUN(test_arguments);
    RUN(test_pipeline);
    nb_context_destroy(ctx);
    return nbt_finish("test_region_wavefront");
}
