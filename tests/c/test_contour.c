/* Contours: tracing region borders, simplification, hole merging, tile borders, out-of-memory paths. */
#include "../../c/src/nb_internal.h" /* nb_merge_holes, nb_alloc */
#include "navbake.h"
#include "nbtest.h"
#include "obj.h"

#include <stdint.h>

static nb_context* ctx;

/* ---- synthetic compact heightfields from character maps ----
 * One string per row z, one character per column x:
 *   '#' '.'      no walkable span
 *   '0'          a walkable span left without region
 *   '1'..'9'     region 1..9, NB_WALKABLE_AREA
 *   'A'..'Z'     region 10..35, NB_WALKABLE_AREA
 *   'a'..'z'     region 10..35, area 5
 *   '[' ']' '_' '^'  tile border regions NB_BORDER_REG | 1..4 (left, right, bottom, top strips) */

#define AREA_B 5

static int map_region(char c, uint8_t* area)
{
    *area = NB_WALKABLE_AREA;
    if (c >= '1' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'Z')
        return 10 + (c - 'A');
    if (c >= 'a' && c <= 'z') {
        *area = AREA_B;
        return 10 + (c - 'a');
    }
    switch (c) {
    case '0': return 0;
    case '[': return NB_BORDER_REG | 1;
    case ']': return NB_BORDER_REG | 2;
    case '_': return NB_BORDER_REG | 3;
    case '^': return NB_BORDER_REG | 4;
    default: return -1;
    }
}

static nb_compact_heightfield* make_chf(nb_context* c, const char* const* rows, int nrows, int border)
{
    const int w = (int)strlen(rows[0]), h = nrows;
    for (int z = 0; z < h; ++z)
        CHECK_INT(strlen(rows[z]), w);
    const float bmin[3] = { 1.0f, 2.0f, 3.0f };
    const float bmax[3] = { 1.0f + (float)w * 0.3f, 12.0f, 3.0f + (float)h * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(c, w, h, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x) {
            uint8_t area;
            if (map_region(rows[z][x], &area) >= 0)
                CHECK_INT(nb_heightfield_add_span(c, hf, x, z, 0, 1, area, 1), NB_OK);
        }
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(c, 2, 1, hf, &chf), NB_OK);
    nb_heightfield_destroy(c, hf);
    int max_reg = 0;
    for (int z = 0; z < h; ++z)
        for (int x = 0; x < w; ++x) {
            const nb_compact_cell cell = chf->cells[x + z * w];
            uint8_t area;
            const int reg = map_region(rows[z][x], &area);
            for (uint32_t i = cell.index; i < cell.index + cell.count; ++i) {
                chf->spans[i].reg = (uint16_t)reg;
                if (!(reg & NB_BORDER_REG) && reg > max_reg)
                    max_reg = reg;
            }
        }
    chf->max_regions = (uint16_t)(max_reg + 1);
    chf->border_size = border;
    return chf;
}

#define MAKE_CHF(rows, border) make_chf(ctx, rows, (int)(sizeof(rows) / sizeof(rows[0])), border)

/* ---- geometry helpers (independent of the library's) ---- */

static const int32_t* vert(const int32_t* v, int n, int i) { return &v[((i % n + n) % n) * 4]; }

/* Twice the area, positive for the documented outline winding (clockwise with x right, z up). */
static long long area2(const int32_t* v, int n)
{
    long long s = 0;
    for (int i = 0; i < n; ++i) {
        const int32_t* a = vert(v, n, i);
        const int32_t* b = vert(v, n, i + 1);
        s += (long long)b[0] * a[2] - (long long)a[0] * b[2];
    }
    return s;
}

static int find_xz(const nb_contour* c, int x, int z)
{
    for (int i = 0; i < c->nverts; ++i)
        if (c->verts[i * 4] == x && c->verts[i * 4 + 2] == z)
            return i;
    return -1;
}

static int has_edge(const nb_contour* c, int ax, int az, int bx, int bz)
{
    for (int i = 0; i < c->nverts; ++i) {
        const int32_t* a = vert(c->verts, c->nverts, i);
        const int32_t* b = vert(c->verts, c->nverts, i + 1);
        if (a[0] == ax && a[2] == az && b[0] == bx && b[2] == bz)
            return 1;
    }
    return 0;
}

static const nb_contour* contour_of(const nb_contour_set* cs, int reg)
{
    for (int i = 0; i < cs->nconts; ++i)
        if (cs->conts[i].reg == reg)
            return &cs->conts[i];
    return NULL;
}

/* Every simplified vertex is one of the raw outline's points (x, y and z). */
static void check_on_raw(const nb_contour_set* cs)
{
    for (int c = 0; c < cs->nconts; ++c) {
        const nb_contour* ct = &cs->conts[c];
        for (int i = 0; i < ct->nverts; ++i) {
            int found = 0;
            for (int k = 0; k < ct->nraw_verts && !found; ++k)
                found = memcmp(&ct->verts[i * 4], &ct->raw_verts[k * 4], 3 * sizeof(int32_t)) == 0;
            CHECK(found);
        }
    }
}

/* Every edge a->b towards another (non-border) region r is matched by the edge b->a of a contour of region r,
 * flagged towards this region: neighbours agree on their common vertices. Bridges to holes (which also run both
 * ways within one contour) are skipped. */
static void check_portals_match(const nb_contour_set* cs, int compare_y)
{
    for (int c = 0; c < cs->nconts; ++c) {
        const nb_contour* ct = &cs->conts[c];
        for (int i = 0; i < ct->nverts; ++i) {
            const int32_t* a = vert(ct->verts, ct->nverts, i);
            const int32_t* b = vert(ct->verts, ct->nverts, i + 1);
            const int r = a[3] & NB_CONTOUR_REG_MASK;
            if (r == 0 || (r & NB_BORDER_REG) || has_edge(ct, b[0], b[2], a[0], a[2]))
                continue;
            int matched = 0;
            for (int o = 0; o < cs->nconts && !matched; ++o) {
                const nb_contour* ot = &cs->conts[o];
                if (ot->reg != r)
                    continue;
                for (int j = 0; j < ot->nverts && !matched; ++j) {
                    const int32_t* p = vert(ot->verts, ot->nverts, j);
                    const int32_t* q = vert(ot->verts, ot->nverts, j + 1);
                    matched = p[0] == b[0] && p[2] == b[2] && q[0] == a[0] && q[2] == a[2] &&
                              (p[3] & NB_CONTOUR_REG_MASK) == ct->reg && (!compare_y || (p[1] == b[1] && q[1] == a[1]));
                }
            }
            if (!matched)
                fprintf(stderr, "  unmatched portal: region %d (%d,%d)->(%d,%d) towards %d\n", ct->reg, a[0], a[2], b[0],
                        b[2], r);
            CHECK(matched);
        }
    }
}

static int64_t orient(const int32_t* a, const int32_t* b, const int32_t* c)
{
    return (int64_t)(b[0] - a[0]) * (c[2] - a[2]) - (int64_t)(c[0] - a[0]) * (b[2] - a[2]);
}

/* No two edges cross properly and no edge has zero length. Bridged holes make vertices repeat and edges overlap
 * in reverse, which is allowed (weakly simple). */
static int weakly_simple(const nb_contour* c)
{
    const int n = c->nverts;
    for (int i = 0; i < n; ++i) {
        const int32_t* a = vert(c->verts, n, i);
        const int32_t* b = vert(c->verts, n, i + 1);
        if (a[0] == b[0] && a[2] == b[2])
            return 0;
        for (int j = i + 2; j < n; ++j) {
            if (i == 0 && j == n - 1)
                continue;
            const int32_t* p = vert(c->verts, n, j);
            const int32_t* q = vert(c->verts, n, j + 1);
            const int64_t o1 = orient(a, b, p), o2 = orient(a, b, q), o3 = orient(p, q, a), o4 = orient(p, q, b);
            if (o1 && o2 && o3 && o4 && (o1 < 0) != (o2 < 0) && (o3 < 0) != (o4 < 0))
                return 0;
        }
    }
    return 1;
}

static double dist_point_segment(const int32_t* p, const int32_t* a, const int32_t* b)
{
    const double sx = b[0] - a[0], sz = b[2] - a[2], px = p[0] - a[0], pz = p[2] - a[2];
    const double len = sx * sx + sz * sz;
    double t = len > 0 ? (sx * px + sz * pz) / len : 0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    const double dx = t * sx - px, dz = t * sz - pz;
    return sqrt(dx * dx + dz * dz);
}

static int raw_index(const nb_contour* c, const int32_t* v)
{
    for (int k = 0; k < c->nraw_verts; ++k)
        if (memcmp(&c->raw_verts[k * 4], v, 3 * sizeof(int32_t)) == 0)
            return k;
    return -1;
}

/* Max distance of the raw points along each wall edge from that edge (a contour without holes). */
static double max_wall_deviation(const nb_contour* c)
{
    double worst = 0;
    for (int i = 0; i < c->nverts; ++i) {
        const int32_t* a = vert(c->verts, c->nverts, i);
        const int32_t* b = vert(c->verts, c->nverts, i + 1);
        if (a[3] & NB_CONTOUR_REG_MASK)
            continue;
        const int ra = raw_index(c, a), rb = raw_index(c, b);
        CHECK(ra >= 0 && rb >= 0);
        if (ra < 0 || rb < 0)
            continue;
        for (int k = (ra + 1) % c->nraw_verts; k != rb; k = (k + 1) % c->nraw_verts) {
            const double d = dist_point_segment(&c->raw_verts[k * 4], a, b);
            if (d > worst)
                worst = d;
        }
    }
    return worst;
}

static nb_contour_set* build(const nb_compact_heightfield* chf, float max_error, int max_edge_len)
{
    nb_contour_set* cs = NULL;
    const nb_status st = nb_build_contours(ctx, chf, max_error, max_edge_len, &cs);
    CHECK_INT(st, NB_OK);
    if (st != NB_OK)
        fprintf(stderr, "  %s\n", nb_context_message(ctx));
    return cs;
}

/* ---- tests ---- */

static void test_flat_square(void)
{
    static const char* const rows[] = {
        "1111111111", "1111111111", "1111111111", "1111111111", "1111111111",
        "1111111111", "1111111111", "1111111111", "1111111111", "1111111111",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 1.3f, 12);
    if (!cs)
        goto done;
    CHECK_INT(cs->nconts, 1);
    CHECK_INT(cs->width, 10);
    CHECK_INT(cs->height, 10);
    CHECK_INT(cs->border_size, 0);
    CHECK_NEAR(cs->bmin[0], chf->bmin[0], 1e-6);
    CHECK_NEAR(cs->bmax[2], chf->bmax[2], 1e-6);
    CHECK_NEAR(cs->cell_size, 0.3, 1e-6);
    CHECK_NEAR(cs->cell_height, 0.2, 1e-6);
    CHECK_NEAR(cs->max_error, 1.3, 1e-6);
    if (cs->nconts != 1)
        goto done;
    const nb_contour* c = &cs->conts[0];
    CHECK_INT(c->reg, 1);
    CHECK_INT(c->area, NB_WALKABLE_AREA);
    CHECK_INT(c->nverts, 4);
    CHECK_INT(c->nraw_verts, 40); /* one point per cell edge of the perimeter */
    CHECK(find_xz(c, 0, 0) >= 0);
    CHECK(find_xz(c, 0, 10) >= 0);
    CHECK(find_xz(c, 10, 10) >= 0);
    CHECK(find_xz(c, 10, 0) >= 0);
    CHECK_INT(area2(c->verts, c->nverts), 200);
    CHECK_INT(area2(c->raw_verts, c->nraw_verts), 200);
    for (int i = 0; i < c->nverts; ++i) {
        CHECK_INT(c->verts[i * 4 + 1], 1); /* floor of the spans */
        CHECK_INT(c->verts[i * 4 + 3], 0); /* walls all round, no flags */
    }
    check_on_raw(cs);
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_two_regions_share_vertices(void)
{
    static const char* const rows[] = {
        "1111122222", "1111122222", "1111122222", "1111122222", "1111122222",
        "1111122222", "1111122222", "1111122222", "1111122222", "1111122222",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 1.3f, 0);
    if (!cs)
        goto done;
    CHECK_INT(cs->nconts, 2);
    const nb_contour* a = contour_of(cs, 1);
    const nb_contour* b = contour_of(cs, 2);
    CHECK(a && b);
    if (!a || !b)
        goto done;
    CHECK_INT(a->nverts, 4);
    CHECK_INT(b->nverts, 4);
    CHECK(has_edge(a, 5, 10, 5, 0)); /* the common edge, walked in opposite directions */
    CHECK(has_edge(b, 5, 0, 5, 10));
    const int ia = find_xz(a, 5, 10), ib = find_xz(b, 5, 0);
    if (ia >= 0 && ib >= 0) {
        CHECK_INT(a->verts[ia * 4 + 3], 2); /* the edge leaving the vertex borders region 2 */
        CHECK_INT(b->verts[ib * 4 + 3], 1);
    }
    CHECK(find_xz(a, 0, 0) >= 0 && find_xz(a, 0, 10) >= 0);
    CHECK(find_xz(b, 10, 0) >= 0 && find_xz(b, 10, 10) >= 0);
    CHECK(area2(a->verts, a->nverts) == 100 && area2(b->verts, b->nverts) == 100);
    check_portals_match(cs, 1);
    check_on_raw(cs);
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_jagged_regions_agree(void)
{
    /* Staircase borders between three regions, ragged walls, a region 0 gap: every portal matches. */
    static const char* const rows[] = {
        "..111111122222222...", ".1111111112222222222", "11111111112222222222", "11111111122222222222",
        "1111111122222222222.", "111111133322222222..", "11111133333322222222", "1111133333333222222#",
        "#1111333333333322222", "##11333333333333322#", "##113333333300333322", "#1133333333300333332",
        "11133333333333333333", "1333333333333333333.", "333333333333333333..", ".33333333333333333..",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    for (float err = 0.0f; err <= 3.0f; err += 1.3f) {
        nb_contour_set* cs = build(chf, err, 5);
        if (!cs)
            break;
        CHECK_INT(cs->nconts, 3);
        check_portals_match(cs, 1);
        check_on_raw(cs);
        for (int c = 0; c < cs->nconts; ++c) {
            CHECK(area2(cs->conts[c].verts, cs->conts[c].nverts) > 0);
            CHECK(weakly_simple(&cs->conts[c]));
        }
        nb_contour_set_destroy(ctx, cs);
    }
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_max_error_bounds_wall_deviation(void)
{
    /* A staircase wall (a triangle of cells): the simplified wall stays within max_error of every raw point,
     * and a larger tolerance never needs more vertices. */
    static const char* const rows[] = {
        "1...............", "11..............", "111.............", "1111............", "11111...........",
        "111111..........", "1111111.........", "11111111........", "111111111.......", "1111111111......",
        "11111111111.....", "111111111111....", "1111111111111...", "11111111111111..", "111111111111111.",
        "1111111111111111",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    int prev = 1 << 30;
    const float errs[] = { 0.0f, 0.5f, 1.3f, 2.5f, 6.0f };
    for (int e = 0; e < 5; ++e) {
        nb_contour_set* cs = build(chf, errs[e], 0);
        if (!cs)
            break;
        CHECK_INT(cs->nconts, 1);
        if (cs->nconts == 1) {
            const nb_contour* c = &cs->conts[0];
            CHECK(max_wall_deviation(c) <= errs[e] + 1e-6);
            CHECK(c->nverts <= prev);
            CHECK(c->nverts >= 3);
            prev = c->nverts;
            if (e == 0)
                CHECK_INT(c->nverts, 34); /* every corner: (0,0), (0,16), 16 outer and 16 inner stair corners */
        }
        check_on_raw(cs);
        nb_contour_set_destroy(ctx, cs);
    }
    CHECK(prev < 8);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_pillar_hole_is_merged(void)
{
    /* A 2x2 pillar off centre (cells x 8..9, z 7..8) in a 12x12 region. */
    static const char* const rows[] = {
        "111111111111", "111111111111", "111111111111", "111111111111", "111111111111", "111111111111",
        "111111111111", "11111111##11", "11111111##11", "111111111111", "111111111111", "111111111111",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 1.3f, 0);
    if (!cs)
        goto done;
    CHECK_INT(cs->nconts, 1);
    if (cs->nconts != 1)
        goto done;
    const nb_contour* c = &cs->conts[0];
    CHECK_INT(c->nverts, 4 + 4 + 2); /* outline, hole, and both bridge ends once more */
    CHECK_INT(area2(c->verts, c->nverts), 2 * (144 - 4));
    CHECK_INT(area2(c->raw_verts, c->nraw_verts), 2 * (144 - 4));
    CHECK_INT(c->nraw_verts, 48 + 8 + 2);
    CHECK(find_xz(c, 8, 7) >= 0 && find_xz(c, 10, 9) >= 0 && find_xz(c, 8, 9) >= 0 && find_xz(c, 10, 7) >= 0);
    /* The bridge leaves the hole's lower-left corner (8,7). The nearest outline corner (12,12) is blocked by the
     * pillar itself; the next one, (12,0), is used (not (0,12) or (0,0), farther away). It runs both ways. */
    CHECK(has_edge(c, 12, 0, 8, 7));
    CHECK(has_edge(c, 8, 7, 12, 0));
    CHECK(weakly_simple(c));
    check_on_raw(cs);
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_two_holes_and_a_neighbour(void)
{
    /* Region 1 with two pillars next to region 2: one contour each, holes bridged without crossings. */
    static const char* const rows[] = {
        "1111111111111111222222", "1111111111111111222222", "1111111111111111222222", "111##111111#1111222222",
        "111##11111###111222222", "1111111111#11111222222", "1111111111111111222222", "1111111111111111222222",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 0.0f, 0); /* exact outlines, so the area is exact */
    if (!cs)
        goto done;
    CHECK_INT(cs->nconts, 2);
    const nb_contour* c = contour_of(cs, 1);
    CHECK(c != NULL);
    if (c) {
        /* region 1 covers 16x8 minus 4 + 5 pillar cells */
        CHECK_INT(area2(c->verts, c->nverts), 2 * (16 * 8 - 9));
        CHECK(weakly_simple(c));
        CHECK(find_xz(c, 3, 3) >= 0 && find_xz(c, 5, 5) >= 0);
        CHECK(find_xz(c, 10, 4) >= 0 && find_xz(c, 13, 5) >= 0);
    }
    check_portals_match(cs, 1);
    check_on_raw(cs);
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_hole_goes_to_the_piece_around_it(void)
{
    /* One region id in two separate pieces (the region stage should not do this, but nothing forbids it): the
     * pillar is bridged into the right piece, which contains it, not into the left one, which comes first. */
    static const char* const rows[] = { "11111#11111", "11111#11111", "11111#11#11", "11111#11111", "11111#11111" };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 0.0f, 0);
    if (!cs)
        goto done;
    CHECK_INT(cs->nconts, 2);
    for (int k = 0; k < cs->nconts; ++k) {
        const nb_contour* c = &cs->conts[k];
        const int right = find_xz(c, 11, 0) >= 0;
        CHECK_INT(area2(c->verts, c->nverts), right ? 2 * 24 : 2 * 25);
        CHECK_INT(c->nverts, right ? 10 : 4);
        CHECK(weakly_simple(c));
    }
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_max_edge_len_splits_walls_only(void)
{
    /* 30x6: region 1 below z = 3, region 2 above. Walls get split to at most 8 cells; the 30-cell portal between
     * the regions stays one edge in both contours. */
    static const char* const rows[] = {
        "111111111111111111111111111111", "111111111111111111111111111111", "111111111111111111111111111111",
        "222222222222222222222222222222", "222222222222222222222222222222", "222222222222222222222222222222",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 1.3f, 8);
    if (!cs)
        goto done;
    CHECK_INT(cs->nconts, 2);
    for (int k = 0; k < cs->nconts; ++k) {
        const nb_contour* c = &cs->conts[k];
        int portals = 0;
        for (int i = 0; i < c->nverts; ++i) {
            const int32_t* a = vert(c->verts, c->nverts, i);
            const int32_t* b = vert(c->verts, c->nverts, i + 1);
            const long long dx = b[0] - a[0], dz = b[2] - a[2];
            if (a[3] & NB_CONTOUR_REG_MASK) {
                ++portals;
                CHECK_INT(dx * dx + dz * dz, 30 * 30);
            } else {
                CHECK(dx * dx + dz * dz <= 8 * 8);
            }
        }
        CHECK_INT(portals, 1);
        CHECK_INT(area2(c->verts, c->nverts), 2 * 90);
    }
    check_portals_match(cs, 1);
    check_on_raw(cs);
    nb_contour_set_destroy(ctx, cs);
    /* no limit: four corners each */
    cs = build(chf, 1.3f, 0);
    if (cs)
        for (int k = 0; k < cs->nconts; ++k)
            CHECK_INT(cs->conts[k].nverts, 4);
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_area_border(void)
{
    /* Same regions, different areas: the common edge is an area border; it is split by max_edge_len like a wall,
     * at the same points from both sides. */
    static const char* const rows[] = {
        "11111jjjjj", "11111jjjjj", "11111jjjjj", "11111jjjjj", "11111jjjjj",
        "11111jjjjj", "11111jjjjj", "11111jjjjj", "11111jjjjj", "11111jjjjj",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 1.3f, 4);
    if (!cs)
        goto done;
    CHECK_INT(cs->nconts, 2);
    const nb_contour* a = contour_of(cs, 1);
    const nb_contour* b = contour_of(cs, 19);
    CHECK(a && b);
    if (!a || !b)
        goto done;
    CHECK_INT(b->area, AREA_B);
    int flagged = 0;
    for (int i = 0; i < a->nverts; ++i) {
        const int32_t* v = &a->verts[i * 4];
        if (v[3] & NB_CONTOUR_AREA_BORDER) {
            ++flagged;
            CHECK_INT(v[3] & NB_CONTOUR_REG_MASK, 19);
            CHECK_INT(v[0], 5); /* only the x = 5 edges */
        }
    }
    CHECK(flagged >= 3); /* 10 cells split into pieces of at most 4 */
    check_portals_match(cs, 1);
    for (int k = 0; k < cs->nconts; ++k)
        for (int i = 0; i < cs->conts[k].nverts; ++i) {
            const int32_t* p = vert(cs->conts[k].verts, cs->conts[k].nverts, i);
            const int32_t* q = vert(cs->conts[k].verts, cs->conts[k].nverts, i + 1);
            CHECK((q[0] - p[0]) * (q[0] - p[0]) + (q[2] - p[2]) * (q[2] - p[2]) <= 16);
        }
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_corner_height_is_highest_floor(void)
{
    /* Raised floors (after linking, so the links stay) and a missing corner cell: every raw point takes the
     * highest floor among the (up to four) cells around its grid corner, diagonal ones included. */
    static const char* const rows[] = { "11111", "11111", "11111", "11111", "1111#" };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    int floor_at[5][5];
    for (int z = 0; z < 5; ++z)
        for (int x = 0; x < 5; ++x)
            floor_at[z][x] = rows[z][x] == '#' ? -1 : 1;
    const int raised[4][3] = { { 3, 4, 4 }, { 0, 0, 3 }, { 2, 4, 2 }, { 4, 3, 6 } }; /* x, z, floor */
    for (int k = 0; k < 4; ++k) {
        const int x = raised[k][0], z = raised[k][1];
        chf->spans[chf->cells[x + z * 5].index].y = (uint16_t)raised[k][2];
        floor_at[z][x] = raised[k][2];
    }
    nb_contour_set* cs = build(chf, 1.3f, 0);
    if (cs && cs->nconts == 1) {
        const nb_contour* c = &cs->conts[0];
        CHECK_INT(c->nraw_verts, 20);
        for (int k = 0; k < c->nraw_verts; ++k) {
            const int32_t* r = &c->raw_verts[k * 4];
            int want = -1;
            for (int dz = -1; dz <= 0; ++dz)
                for (int dx = -1; dx <= 0; ++dx) {
                    const int x = r[0] + dx, z = r[2] + dz;
                    if (x >= 0 && z >= 0 && x < 5 && z < 5 && floor_at[z][x] > want)
                        want = floor_at[z][x];
                }
            CHECK_INT(r[1], want);
        }
        check_on_raw(cs);
    } else {
        CHECK(0);
    }
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_tile_border(void)
{
    /* 14x14 with a 2-cell border painted as four strips (as the region stage does): coordinates come out
     * relative to the 10x10 tile proper, the corners are kept, the straight border stretches are flagged. */
    static const char* const rows[] = {
        "______________", "______________", "[[1111111111]]", "[[1111111111]]", "[[1111111111]]",
        "[[1111111111]]", "[[1111111111]]", "[[1111111111]]", "[[1111111111]]", "[[1111111111]]",
        "[[1111111111]]", "[[1111111111]]", "^^^^^^^^^^^^^^", "^^^^^^^^^^^^^^",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 2);
    nb_contour_set* cs = build(chf, 1.3f, 4);
    if (!cs)
        goto done;
    CHECK_INT(cs->width, 10);
    CHECK_INT(cs->height, 10);
    CHECK_INT(cs->border_size, 2);
    CHECK_NEAR(cs->bmin[0], chf->bmin[0] + 0.6f, 1e-5);
    CHECK_NEAR(cs->bmin[2], chf->bmin[2] + 0.6f, 1e-5);
    CHECK_NEAR(cs->bmax[0], chf->bmax[0] - 0.6f, 1e-5);
    CHECK_NEAR(cs->bmax[2], chf->bmax[2] - 0.6f, 1e-5);
    CHECK_NEAR(cs->bmin[1], chf->bmin[1], 1e-6);
    CHECK_INT(cs->nconts, 1); /* border regions have no contours */
    if (cs->nconts != 1)
        goto done;
    const nb_contour* c = &cs->conts[0];
    /* tile-border edges are portals, never split */
    CHECK_INT(c->nverts, 4);
    CHECK(find_xz(c, 0, 0) >= 0 && find_xz(c, 0, 10) >= 0 && find_xz(c, 10, 10) >= 0 && find_xz(c, 10, 0) >= 0);
    for (int i = 0; i < c->nverts; ++i) {
        CHECK((c->verts[i * 4 + 3] & NB_BORDER_REG) != 0);
        CHECK(!(c->verts[i * 4 + 3] & NB_CONTOUR_BORDER_VERTEX)); /* tile corners stay */
    }
    CHECK_INT(c->nraw_verts, 40);
    for (int k = 0; k < c->nraw_verts; ++k) {
        const int32_t* r = &c->raw_verts[k * 4];
        CHECK(r[0] >= 0 && r[0] <= 10 && r[2] >= 0 && r[2] <= 10);
        const int corner = (r[0] == 0 || r[0] == 10) && (r[2] == 0 || r[2] == 10);
        CHECK_INT(!!(r[3] & NB_CONTOUR_BORDER_VERTEX), !corner);
    }
done:
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_unassigned_and_tiny(void)
{
    /* Region 0 spans are not traced; a lone one-cell region is dropped; nothing to trace gives an empty set. */
    static const char* const rows[] = { "0000", "0200", "0000", "0000" };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = build(chf, 1.3f, 0);
    if (cs)
        CHECK_INT(cs->nconts, 0);
    nb_contour_set_destroy(ctx, cs);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_args(void)
{
    static const char* const rows[] = { "11", "11" };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    nb_contour_set* cs = (nb_contour_set*)(uintptr_t)1;
    CHECK_STATUS(ctx, nb_build_contours(ctx, NULL, 1.3f, 0, &cs), NB_ERR_NULL_ARG, "chf");
    CHECK(cs == NULL); /* cleared even on failure */
    CHECK_STATUS(ctx, nb_build_contours(ctx, chf, 1.3f, 0, NULL), NB_ERR_NULL_ARG, "out");
    CHECK_INT(nb_build_contours(NULL, chf, 1.3f, 0, &cs), NB_ERR_NULL_ARG);
    CHECK_STATUS(ctx, nb_build_contours(ctx, chf, -1.0f, 0, &cs), NB_ERR_INVALID_ARG, "max_error");
    CHECK_STATUS(ctx, nb_build_contours(ctx, chf, NAN, 0, &cs), NB_ERR_INVALID_ARG, "max_error");
    CHECK_STATUS(ctx, nb_build_contours(ctx, chf, 1.3f, -2, &cs), NB_ERR_INVALID_ARG, "max_edge_len");
    chf->border_size = 5;
    CHECK_STATUS(ctx, nb_build_contours(ctx, chf, 1.3f, 0, &cs), NB_ERR_INVALID_ARG, "border_size");
    CHECK(cs == NULL);
    nb_contour_set_destroy(ctx, NULL);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_out_of_memory(void)
{
    /* Enough to exercise every allocation: more contours than the initial array, outlines longer than the
     * first point buffer, holes to bridge. */
    static const char* const rows[] = {
        "1111111111111111111111111111111111111111", "1111111111111111111111111111111111111111",
        "111##11111111111111111111111111##1111111", "111##11111111111111#1111111111111#111111",
        "1111111111111111111111111111111111111111", "2233445566778899AABBCCDDEEFFGGHHIIJJKKLL",
        "2233445566778899AABBCCDDEEFFGGHHIIJJKKLL",
    };
    nb_compact_heightfield* chf = MAKE_CHF(rows, 0);
    chf->max_regions = 1; /* start from the smallest contour array so it has to grow */
    nb_contour_set* ref = build(chf, 1.3f, 6);
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
        a.fail_at = a.calls + fail;
        nb_contour_set* cs = NULL;
        const nb_status st = nb_build_contours(c, chf, 1.3f, 6, &cs);
        if (st == NB_OK) {
            CHECK(fail > 1);
            CHECK(ref != NULL && cs->nconts == ref->nconts);
            for (int k = 0; ref && k < cs->nconts && k < ref->nconts; ++k) {
                CHECK_INT(cs->conts[k].nverts, ref->conts[k].nverts);
                if (cs->conts[k].nverts == ref->conts[k].nverts)
                    CHECK(memcmp(cs->conts[k].verts, ref->conts[k].verts,
                                 (size_t)cs->conts[k].nverts * 4 * sizeof(int32_t)) == 0);
            }
        } else {
            ++failures;
            CHECK_STATUS(c, st, NB_ERR_OUT_OF_MEMORY, "nb_build_contours: out of memory");
            CHECK(cs == NULL);
        }
        nb_contour_set_destroy(c, cs);
        nb_context_destroy(c);
        CHECK_INT(a.live, 0);
        if (st == NB_OK)
            break;
    }
    CHECK(ref && ref->nconts == 21);
    CHECK(failures > 2 * 21); /* two blocks per contour at least */
    nb_contour_set_destroy(ctx, ref);
    nb_compact_heightfield_destroy(ctx, chf);
}

/* ---- hole bridging against a plain model of its rule ----
 * The library bridges holes with linked loops, grids and order labels; the model below does it the plain way,
 * with arrays and full scans, straight from the rule: holes by (region, leftmost x, z, index); from the hole's
 * leftmost vertex (the next ones while all are blocked), the outline vertices whose cone holds the corner, by
 * (squared distance, array index); the first whose diagonal meets no edge of the outline or of a hole not yet
 * bridged (edges sharing an end position with it aside); splice a[ia..], a[..ia], b[ib..], b[..ib], the raw
 * loops likewise at the first raw point equal to each end. Both run on the same random layouts and must give
 * the same arrays. */

typedef struct model_stats {
    int bridges;
    int ties;      /* several clear vertices at the winning distance: the array index decided */
    int retries;   /* the leftmost vertex was blocked */
    int raw_dups;  /* the outline's raw loop held the bridge end more than once */
    int dropped;
} model_stats;

static int64_t m_orient(const int32_t* a, const int32_t* b, const int32_t* c)
{
    return (int64_t)(b[0] - a[0]) * (c[2] - a[2]) - (int64_t)(c[0] - a[0]) * (b[2] - a[2]);
}

static int m_on_segment(const int32_t* a, const int32_t* b, const int32_t* c) /* collinear c within a-b */
{
    return (c[0] >= (a[0] < b[0] ? a[0] : b[0])) && (c[0] <= (a[0] > b[0] ? a[0] : b[0])) &&
           (c[2] >= (a[2] < b[2] ? a[2] : b[2])) && (c[2] <= (a[2] > b[2] ? a[2] : b[2]));
}

static int m_meet(const int32_t* a, const int32_t* b, const int32_t* c, const int32_t* d)
{
    const int64_t o1 = m_orient(a, b, c), o2 = m_orient(a, b, d), o3 = m_orient(c, d, a), o4 = m_orient(c, d, b);
    if (((o1 > 0 && o2 < 0) || (o1 < 0 && o2 > 0)) && ((o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0)))
        return 1;
    return (o1 == 0 && m_on_segment(a, b, c)) || (o2 == 0 && m_on_segment(a, b, d)) ||
           (o3 == 0 && m_on_segment(c, d, a)) || (o4 == 0 && m_on_segment(c, d, b));
}

static int m_same_xz(const int32_t* a, const int32_t* b) { return a[0] == b[0] && a[2] == b[2]; }

/* The diagonal d0-d1 meets an edge of loop v (edges with an end at d0's or d1's position aside). */
static int m_hits(const int32_t* d0, const int32_t* d1, const int32_t* v, int n)
{
    for (int k = 0; k < n; ++k) {
        const int32_t* p = &v[k * 4];
        const int32_t* q = &v[((k + 1) % n) * 4];
        if (!m_same_xz(p, d0) && !m_same_xz(p, d1) && !m_same_xz(q, d0) && !m_same_xz(q, d1) && m_meet(d0, d1, p, q))
            return 1;
    }
    return 0;
}

static int m_in_cone(const int32_t* v, int n, int j, const int32_t* c)
{
    const int32_t* p = &v[j * 4];
    const int32_t* next = &v[((j + 1) % n) * 4];
    const int32_t* prev = &v[((j + n - 1) % n) * 4];
    if (m_orient(prev, p, next) <= 0)
        return m_orient(p, c, prev) < 0 && m_orient(c, p, next) < 0;
    return !(m_orient(p, c, next) <= 0 && m_orient(c, p, prev) <= 0);
}

static int m_inside(const int32_t* v, int n, const int32_t* c) /* even-odd, the library's formula */
{
    int in = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        const int32_t* a = &v[i * 4];
        const int32_t* b = &v[j * 4];
        if ((a[2] > c[2]) != (b[2] > c[2]) &&
            (double)c[0] < (double)(b[0] - a[0]) * (double)(c[2] - a[2]) / (double)(b[2] - a[2]) + a[0])
            in = !in;
    }
    return in;
}

static int m_leftmost(const int32_t* v, int n)
{
    int best = 0;
    for (int k = 1; k < n; ++k)
        if (v[k * 4] < v[best * 4] || (v[k * 4] == v[best * 4] && v[k * 4 + 2] < v[best * 4 + 2]))
            best = k;
    return best;
}

/* a[ia..], a[..ia], b[ib..], b[..ib] into a fresh malloc'd array */
static int32_t* m_splice(const int32_t* a, int na, int ia, const int32_t* b, int nb, int ib)
{
    int32_t* out = (int32_t*)malloc((size_t)(na + nb + 2) * 4 * sizeof(int32_t));
    int k = 0;
    for (int i = 0; i <= na; ++i)
        memcpy(&out[4 * k++], &a[((ia + i) % na) * 4], 4 * sizeof(int32_t));
    for (int i = 0; i <= nb; ++i)
        memcpy(&out[4 * k++], &b[((ib + i) % nb) * 4], 4 * sizeof(int32_t));
    return out;
}

static int m_first_raw(const int32_t* raw, int n, const int32_t* v, int* occurrences)
{
    int first = -1;
    *occurrences = 0;
    for (int k = 0; k < n; ++k)
        if (raw[k * 4] == v[0] && raw[k * 4 + 1] == v[1] && raw[k * 4 + 2] == v[2]) {
            ++*occurrences;
            if (first < 0)
                first = k;
        }
    return first < 0 ? 0 : first;
}

typedef struct m_key {
    int reg, hole, x, z, index;
} m_key;

static int m_key_cmp(const void* pa, const void* pb)
{
    const m_key* a = (const m_key*)pa;
    const m_key* b = (const m_key*)pb;
    if (a->reg != b->reg)
        return a->reg - b->reg;
    if (a->hole != b->hole)
        return a->hole - b->hole;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->z != b->z)
        return a->z < b->z ? -1 : 1;
    return a->index - b->index;
}

typedef struct m_diag {
    int64_t dist;
    int j;
} m_diag;

static int m_diag_cmp(const void* pa, const void* pb)
{
    const m_diag* a = (const m_diag*)pa;
    const m_diag* b = (const m_diag*)pb;
    if (a->dist != b->dist)
        return a->dist < b->dist ? -1 : 1;
    return a->j - b->j;
}

/* The rule on malloc'd contours; bridged and dropped holes end with nverts 0 and are then removed. */
static void model_merge(nb_contour* conts, int* nconts, model_stats* stats)
{
    const int n = *nconts;
    m_key* keys = (m_key*)malloc((size_t)n * sizeof(m_key));
    for (int i = 0; i < n; ++i) {
        const int l = m_leftmost(conts[i].verts, conts[i].nverts);
        keys[i].reg = conts[i].reg;
        keys[i].hole = area2(conts[i].verts, conts[i].nverts) < 0;
        keys[i].x = conts[i].verts[l * 4];
        keys[i].z = conts[i].verts[l * 4 + 2];
        keys[i].index = i;
    }
    qsort(keys, (size_t)n, sizeof(m_key), m_key_cmp);
    for (int g = 0, end; g < n; g = end) {
        int first_hole = -1;
        for (end = g; end < n && keys[end].reg == keys[g].reg; ++end)
            if (keys[end].hole && first_hole < 0)
                first_hole = end;
        for (int h = first_hole; h >= 0 && h < end; ++h) {
            nb_contour* hole = &conts[keys[h].index];
            if (first_hole == g) {
                ++stats->dropped;
                hole->nverts = 0;
                continue;
            }
            const int left = m_leftmost(hole->verts, hole->nverts);
            nb_contour* out = &conts[keys[g].index];
            for (int k = g; k < first_hole && first_hole > g + 1; ++k)
                if (m_inside(conts[keys[k].index].verts, conts[keys[k].index].nverts, &hole->verts[left * 4])) {
                    out = &conts[keys[k].index];
                    break;
                }
            m_diag* diags = (m_diag*)malloc((size_t)out->nverts * sizeof(m_diag));
            int ia = -1, ib = left;
            for (int tries = 0; tries < hole->nverts && ia < 0; ++tries) {
                const int32_t* c = &hole->verts[ib * 4];
                int nd = 0;
                for (int j = 0; j < out->nverts; ++j)
                    if (m_in_cone(out->verts, out->nverts, j, c)) {
                        const int64_t dx = out->verts[j * 4] - c[0], dz = out->verts[j * 4 + 2] - c[2];
                        diags[nd].dist = dx * dx + dz * dz;
                        diags[nd++].j = j;
                    }
                qsort(diags, (size_t)nd, sizeof(m_diag), m_diag_cmp);
                for (int d = 0; d < nd; ++d) {
                    const int32_t* from = &out->verts[diags[d].j * 4];
                    int blocked = m_hits(from, c, out->verts, out->nverts);
                    for (int k = h; k < end && !blocked; ++k)
                        blocked = m_hits(from, c, conts[keys[k].index].verts, conts[keys[k].index].nverts);
                    if (blocked)
                        continue;
                    ia = diags[d].j;
                    if (tries > 0)
                        ++stats->retries;
                    for (int e = d + 1; e < nd && diags[e].dist == diags[d].dist; ++e) {
                        const int32_t* f = &out->verts[diags[e].j * 4];
                        int b = m_hits(f, c, out->verts, out->nverts);
                        for (int k = h; k < end && !b; ++k)
                            b = m_hits(f, c, conts[keys[k].index].verts, conts[keys[k].index].nverts);
                        if (!b) {
                            ++stats->ties;
                            break;
                        }
                    }
                    break;
                }
                if (ia < 0)
                    ib = (ib + 1) % hole->nverts;
            }
            free(diags);
            if (ia < 0) {
                ++stats->dropped;
                hole->nverts = 0;
                continue;
            }
            ++stats->bridges;
            int occurrences, unused;
            const int ra = m_first_raw(out->raw_verts, out->nraw_verts, &out->verts[ia * 4], &occurrences);
            const int rb = m_first_raw(hole->raw_verts, hole->nraw_verts, &hole->verts[ib * 4], &unused);
            stats->raw_dups += occurrences > 1;
            int32_t* v = m_splice(out->verts, out->nverts, ia, hole->verts, hole->nverts, ib);
            int32_t* r = m_splice(out->raw_verts, out->nraw_verts, ra, hole->raw_verts, hole->nraw_verts, rb);
            free(out->verts);
            free(out->raw_verts);
            out->verts = v;
            out->raw_verts = r;
            out->nverts += hole->nverts + 2;
            out->nraw_verts += hole->nraw_verts + 2;
            hole->nverts = 0;
        }
    }
    int kept = 0;
    for (int i = 0; i < n; ++i) {
        if (conts[i].nverts > 0) {
            conts[kept++] = conts[i];
        } else {
            free(conts[i].verts);
            free(conts[i].raw_verts);
        }
    }
    *nconts = kept;
    free(keys);
}

/* -- random layouts: rectilinear loops on the integer grid -- */

typedef struct layout {
    int32_t* pts[64]; /* raw points of each loop, then its simplified ones */
    int32_t* verts[64];
    int npts[64], nverts[64], reg[64];
    int nloops;
} layout;

/* A loop through the corners (x, z pairs, axis-aligned steps): raw points at every integer step, simplified
 * vertices at the corners and at some of the others. hole: wound as a hole, else as an outline. The arrays start
 * at a random point. */
static void add_loop_pts(layout* L, uint32_t* seed, const int* corners, int ncorners, int reg, int hole)
{
    int total = 0;
    for (int i = 0; i < ncorners; ++i) {
        const int* a = &corners[i * 2];
        const int* b = &corners[((i + 1) % ncorners) * 2];
        total += abs(b[0] - a[0]) + abs(b[1] - a[1]);
    }
    int32_t* raw = (int32_t*)calloc((size_t)total * 4, sizeof(int32_t));
    uint8_t* corner = (uint8_t*)calloc((size_t)total, 1);
    int k = 0;
    for (int i = 0; i < ncorners; ++i) {
        const int* a = &corners[i * 2];
        const int* b = &corners[((i + 1) % ncorners) * 2];
        const int steps = abs(b[0] - a[0]) + abs(b[1] - a[1]);
        const int sx = (b[0] > a[0]) - (b[0] < a[0]), sz = (b[1] > a[1]) - (b[1] < a[1]);
        for (int s = 0; s < steps; ++s) {
            const int x = a[0] + sx * s, z = a[1] + sz * s;
            raw[k * 4] = x;
            raw[k * 4 + 1] = (x * 3 + z * 5) % 4; /* heights, so that raw points are matched on x, y and z */
            raw[k * 4 + 2] = z;
            raw[k * 4 + 3] = (int32_t)(nbt_rand(seed) % 3);
            corner[k++] = s == 0;
        }
    }
    if ((area2(raw, total) < 0) != hole) { /* reverse */
        for (int i = 0, j = total - 1; i < j; ++i, --j) {
            int32_t t[4];
            memcpy(t, &raw[i * 4], sizeof(t));
            memcpy(&raw[i * 4], &raw[j * 4], sizeof(t));
            memcpy(&raw[j * 4], t, sizeof(t));
            const uint8_t c = corner[i];
            corner[i] = corner[j];
            corner[j] = c;
        }
    }
    const int shift = (int)(nbt_rand(seed) % (uint32_t)total);
    int32_t* rot = (int32_t*)malloc((size_t)total * 4 * sizeof(int32_t));
    int32_t* simp = (int32_t*)malloc((size_t)total * 4 * sizeof(int32_t));
    int nsimp = 0;
    for (int i = 0; i < total; ++i) {
        const int s = (i + shift) % total;
        memcpy(&rot[i * 4], &raw[s * 4], 4 * sizeof(int32_t));
        if (corner[s] || nbt_rand(seed) % 5 == 0) {
            memcpy(&simp[nsimp * 4], &raw[s * 4], 4 * sizeof(int32_t));
            if (nbt_rand(seed) % 64 == 0)
                simp[nsimp * 4 + 1] += 7; /* not on the raw loop: the raw splice falls back to its first point */
            ++nsimp;
        }
    }
    free(raw);
    free(corner);
    L->pts[L->nloops] = rot;
    L->npts[L->nloops] = total;
    L->verts[L->nloops] = simp;
    L->nverts[L->nloops] = nsimp;
    L->reg[L->nloops] = reg;
    ++L->nloops;
}

typedef struct rect {
    int x0, z0, x1, z1;
} rect;

/* A skyline outline over [x0, x0 + w]: flat bottom at z0, a top of steps between z0 + h/2 and z0 + h, so that it
 * has reflex corners. top[] receives each column's height (w entries). */
static void add_skyline(layout* L, uint32_t* seed, int x0, int z0, int w, int h, int reg, int* top)
{
    int xs[32], hs[32], runs = 0;
    for (int x = x0; x < x0 + w && runs < 30; ++runs) {
        xs[runs] = x;
        hs[runs] = h / 2 + (int)(nbt_rand(seed) % (uint32_t)(h - h / 2 + 1));
        x += 1 + (int)(nbt_rand(seed) % 12);
    }
    xs[runs] = x0 + w;
    int corners[2 * 70], n = 0;
    corners[n++] = x0, corners[n++] = z0;
    corners[n++] = x0 + w, corners[n++] = z0;
    for (int i = runs - 1; i >= 0; --i) {
        xs[i + 1] = xs[i + 1] > x0 + w ? x0 + w : xs[i + 1];
        corners[n++] = xs[i + 1], corners[n++] = z0 + hs[i];
        corners[n++] = xs[i], corners[n++] = z0 + hs[i];
        for (int c = xs[i]; c < xs[i + 1]; ++c)
            top[c - x0] = hs[i];
    }
    add_loop_pts(L, seed, corners, n / 2, reg, 0);
}

/* Up to `count` rectangular holes inside a skyline (top[] from add_skyline): scattered, in rows (each bridged
 * into the one before), touching another hole's corner or side, or touching the outline. */
static void add_holes(layout* L, uint32_t* seed, int x0, int z0, int w, const int* top, int reg, int count)
{
    rect placed[64];
    int np = 0;
    for (int tries = 0; np < count && L->nloops < 60 && tries < 400; ++tries) {
        rect r;
        const int mode = (int)(nbt_rand(seed) % 8);
        const int rw = 1 + (int)(nbt_rand(seed) % 4), rh = 1 + (int)(nbt_rand(seed) % 4);
        if (np > 0 && mode < 4) {
            const rect* o = &placed[nbt_rand(seed) % (uint32_t)np];
            switch (mode) {
            case 0: r.x0 = o->x1, r.z0 = o->z1; break;                  /* corner to corner, up */
            case 1: r.x0 = o->x1, r.z0 = o->z0 - rh; break;             /* corner to corner, down */
            case 2: r.x0 = o->x1 + 1 + (int)(nbt_rand(seed) % 2), r.z0 = o->z0; break; /* a row */
            default: r.x0 = o->x1, r.z0 = o->z0 + (int)(nbt_rand(seed) % 3) - 1; break; /* side by side */
            }
        } else {
            r.x0 = x0 + (mode == 7 ? 0 : 1) + (int)(nbt_rand(seed) % (uint32_t)w);
            r.z0 = z0 + (mode == 6 ? 0 : 1) + (int)(nbt_rand(seed) % (uint32_t)top[0]);
        }
        r.x1 = r.x0 + rw;
        r.z1 = r.z0 + rh;
        int ok = r.x0 >= x0 && r.x1 <= x0 + w && r.z0 >= z0;
        for (int c = r.x0; ok && c < r.x1; ++c)
            ok = r.z1 <= z0 + top[c - x0];
        for (int k = 0; ok && k < np; ++k)
            ok = !(r.x0 < placed[k].x1 && placed[k].x0 < r.x1 && r.z0 < placed[k].z1 && placed[k].z0 < r.z1);
        if (!ok)
            continue;
        placed[np++] = r;
        const int corners[8] = { r.x0, r.z0, r.x1, r.z0, r.x1, r.z1, r.x0, r.z1 };
        add_loop_pts(L, seed, corners, 4, reg, 1);
    }
}

static void random_layout(layout* L, uint32_t* seed)
{
    memset(L, 0, sizeof(*L));
    int top[256];
    const int w = 20 + (int)(nbt_rand(seed) % 60), h = 12 + (int)(nbt_rand(seed) % 40);
    add_skyline(L, seed, 0, 0, w, h, 1, top);
    add_holes(L, seed, 0, 0, w, top, 1, 1 + (int)(nbt_rand(seed) % 40));
    const int extra = (int)(nbt_rand(seed) % 4);
    if (extra == 1) { /* a second region beside it */
        add_skyline(L, seed, w + 3, 0, 30, 20, 2, top);
        add_holes(L, seed, w + 3, 0, 30, top, 2, 8);
    } else if (extra == 2) { /* region 3 in two pieces, the second around more holes */
        add_skyline(L, seed, w + 3, 0, 15, 20, 3, top);
        add_holes(L, seed, w + 3, 0, 15, top, 3, 4);
        add_skyline(L, seed, w + 22, 5, 25, 20, 3, top);
        add_holes(L, seed, w + 22, 5, 25, top, 3, 8);
    } else if (extra == 3) { /* a hole with no outline in its region: dropped */
        const int corners[8] = { w + 5, 2, w + 7, 2, w + 7, 5, w + 5, 5 };
        add_loop_pts(L, seed, corners, 4, 4, 1);
    }
}

static void free_layout(layout* L)
{
    for (int k = 0; k < L->nloops; ++k) {
        free(L->pts[k]);
        free(L->verts[k]);
    }
}

/* The layout as a contour set of context c (its loops in a random order), or as malloc'd contours (model). */
static nb_contour_set* layout_set(nb_context* c, const layout* L, const int* order)
{
    nb_contour_set* cs = (nb_contour_set*)nb_calloc(c, 1, sizeof(*cs));
    CHECK(cs != NULL);
    if (!cs)
        return NULL;
    cs->conts = (nb_contour*)nb_calloc(c, (size_t)L->nloops, sizeof(nb_contour));
    CHECK(cs->conts != NULL);
    for (int i = 0; cs->conts && i < L->nloops; ++i) {
        const int k = order[i];
        nb_contour* ct = &cs->conts[cs->nconts++];
        ct->reg = (uint16_t)L->reg[k];
        ct->area = NB_WALKABLE_AREA;
        ct->nverts = L->nverts[k];
        ct->nraw_verts = L->npts[k];
        ct->verts = (int32_t*)nb_alloc(c, (size_t)ct->nverts * 4 * sizeof(int32_t));
        ct->raw_verts = (int32_t*)nb_alloc(c, (size_t)ct->nraw_verts * 4 * sizeof(int32_t));
        CHECK(ct->verts && ct->raw_verts);
        if (ct->verts)
            memcpy(ct->verts, L->verts[k], (size_t)ct->nverts * 4 * sizeof(int32_t));
        if (ct->raw_verts)
            memcpy(ct->raw_verts, L->pts[k], (size_t)ct->nraw_verts * 4 * sizeof(int32_t));
    }
    return cs;
}

static nb_contour* layout_model(const layout* L, const int* order, int* n, model_stats* stats)
{
    nb_contour* conts = (nb_contour*)calloc((size_t)L->nloops, sizeof(nb_contour));
    for (int i = 0; i < L->nloops; ++i) {
        const int k = order[i];
        conts[i].reg = (uint16_t)L->reg[k];
        conts[i].area = NB_WALKABLE_AREA;
        conts[i].nverts = L->nverts[k];
        conts[i].nraw_verts = L->npts[k];
        conts[i].verts = (int32_t*)malloc((size_t)conts[i].nverts * 4 * sizeof(int32_t));
        conts[i].raw_verts = (int32_t*)malloc((size_t)conts[i].nraw_verts * 4 * sizeof(int32_t));
        memcpy(conts[i].verts, L->verts[k], (size_t)conts[i].nverts * 4 * sizeof(int32_t));
        memcpy(conts[i].raw_verts, L->pts[k], (size_t)conts[i].nraw_verts * 4 * sizeof(int32_t));
    }
    *n = L->nloops;
    model_merge(conts, n, stats);
    return conts;
}

/* Same contours, same arrays (order included). */
static int same_contours(const nb_contour_set* cs, const nb_contour* want, int n)
{
    if (cs->nconts != n)
        return 0;
    for (int i = 0; i < n; ++i) {
        const nb_contour* a = &cs->conts[i];
        const nb_contour* b = &want[i];
        if (a->reg != b->reg || a->nverts != b->nverts || a->nraw_verts != b->nraw_verts ||
            memcmp(a->verts, b->verts, (size_t)a->nverts * 4 * sizeof(int32_t)) != 0 ||
            memcmp(a->raw_verts, b->raw_verts, (size_t)a->nraw_verts * 4 * sizeof(int32_t)) != 0)
            return 0;
    }
    return 1;
}

static void free_model(nb_contour* conts, int n)
{
    for (int i = 0; i < n; ++i) {
        free(conts[i].verts);
        free(conts[i].raw_verts);
    }
    free(conts);
}

static void random_order(int* order, int n, uint32_t* seed)
{
    for (int i = 0; i < n; ++i)
        order[i] = i;
    for (int i = n - 1; i > 0; --i) {
        const int j = (int)(nbt_rand(seed) % (uint32_t)(i + 1));
        const int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

static void test_holes_match_model(void)
{
    model_stats stats;
    memset(&stats, 0, sizeof(stats));
    int mismatches = 0;
    uint32_t seed = 12345;
    for (int round = 0; round < 600; ++round) {
        layout L;
        random_layout(&L, &seed);
        int order[64], n = 0;
        random_order(order, L.nloops, &seed);
        nb_contour* want = layout_model(&L, order, &n, &stats);
        nb_contour_set* cs = layout_set(ctx, &L, order);
        if (cs) {
            CHECK_INT(nb_merge_holes(ctx, cs), NB_OK);
            if (!same_contours(cs, want, n) && ++mismatches <= 3)
                fprintf(stderr, "  layout %d (%d loops): bridged differently from the model\n", round, L.nloops);
        }
        nb_contour_set_destroy(ctx, cs);
        free_model(want, n);
        free_layout(&L);
    }
    CHECK_INT(mismatches, 0);
    /* the layouts reach every case the array order decides, and the others */
    CHECK(stats.bridges > 10000);
    CHECK(stats.ties > 500);
    CHECK(stats.raw_dups > 500);
    CHECK(stats.retries > 100);
    CHECK(stats.dropped > 50);
    printf("  test_holes_match_model: %d bridges, %d ties, %d raw duplicates, %d retries, %d dropped\n",
           stats.bridges, stats.ties, stats.raw_dups, stats.retries, stats.dropped);
}

static void test_holes_out_of_memory(void)
{
    /* Every allocation of the merge fails in turn: an out-of-memory status naming the function, nothing leaked,
     * every contour still whole (destroyable); then the merge as without failures. */
    uint32_t seed = 777;
    layout L;
    random_layout(&L, &seed);
    while (L.nloops < 30) {
        free_layout(&L);
        random_layout(&L, &seed);
    }
    int order[64], n = 0;
    random_order(order, L.nloops, &seed);
    model_stats stats;
    memset(&stats, 0, sizeof(stats));
    nb_contour* want = layout_model(&L, order, &n, &stats);
    int failures = 0;
    for (long fail = 1; fail < 200; ++fail) {
        nbt_alloc a;
        nb_context* c = nbt_failing_context(&a, 0);
        if (!c)
            break;
        nb_contour_set* cs = layout_set(c, &L, order);
        a.fail_at = a.calls + fail;
        const nb_status st = cs ? nb_merge_holes(c, cs) : NB_ERR_OUT_OF_MEMORY;
        if (st == NB_OK) {
            CHECK(same_contours(cs, want, n));
        } else {
            ++failures;
            CHECK_STATUS(c, st, NB_ERR_OUT_OF_MEMORY, "nb_build_contours: out of memory");
        }
        nb_contour_set_destroy(c, cs);
        nb_context_destroy(c);
        CHECK_INT(a.live, 0);
        if (st == NB_OK)
            break;
    }
    CHECK(failures >= 10);
    free_model(want, n);
    free_layout(&L);
}

/* A real level: default config, watershed regions. */
static void check_level(const char* name, int reference_contours)
{
    char path[512], err[256];
    nb_obj obj;
    if (nb_obj_load(nbt_mesh_path(name, path, sizeof(path)), &obj, err, sizeof(err)) != 0) {
        fprintf(stderr, "  %s\n", err);
        CHECK(0);
        return;
    }
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = obj.positions;
    in.mesh.vertex_count = obj.vertex_count;
    in.mesh.indices = obj.indices;
    in.mesh.triangle_count = obj.triangle_count;
    nb_bake_result res;
    nb_config_cells cells;
    nb_config cfg;
    CHECK_INT(nb_config_resolve(ctx, NULL, &cfg, &cells), NB_OK);
    const nb_status st = nb_bake(ctx, &in, NULL, NB_STAGE_REGIONS, NB_KEEP_ALL, &res);
    CHECK_INT(st, NB_OK);
    nb_contour_set* cs = NULL;
    if (st == NB_OK)
        cs = build(res.compact, cfg.edge_max_error, cells.max_edge_len);
    if (cs) {
        /* within 15% of the reference implementation's count */
        CHECK(cs->nconts * 100 >= reference_contours * 85 && cs->nconts * 100 <= reference_contours * 115);
        CHECK(cs->nconts < res.compact->max_regions);
        for (int k = 0; k < cs->nconts; ++k) {
            const nb_contour* c = &cs->conts[k];
            CHECK(c->nverts >= 3);
            CHECK(c->reg > 0 && c->reg < res.compact->max_regions);
            CHECK(area2(c->verts, c->nverts) > 0);
            CHECK(weakly_simple(c));
            for (int o = k + 1; o < cs->nconts; ++o)
                CHECK(cs->conts[o].reg != c->reg); /* one contour per region */
            for (int i = 0; i < c->nverts; ++i) {
                const int32_t* a = vert(c->verts, c->nverts, i);
                const int32_t* b = vert(c->verts, c->nverts, i + 1);
                CHECK(a[0] >= 0 && a[0] <= cs->width && a[2] >= 0 && a[2] <= cs->height);
                const long long dx = b[0] - a[0], dz = b[2] - a[2];
                if (!(a[3] & NB_CONTOUR_REG_MASK) && !has_edge(c, b[0], b[2], a[0], a[2]))
                    CHECK(dx * dx + dz * dz <= (long long)cells.max_edge_len * cells.max_edge_len);
            }
        }
        check_on_raw(cs);
        check_portals_match(cs, 0);
    }
    nb_contour_set_destroy(ctx, cs);
    nb_bake_result_release(ctx, &res);
    nb_obj_free(&obj);
}

static void test_dungeon(void) { check_level("dungeon.obj", 15); }
static void test_nav_test(void) { check_level("nav_test.obj", 47); }

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_flat_square);
    RUN(test_two_regions_share_vertices);
    RUN(test_jagged_regions_agree);
    RUN(test_max_error_bounds_wall_deviation);
    RUN(test_pillar_hole_is_merged);
    RUN(test_two_holes_and_a_neighbour);
    RUN(test_hole_goes_to_the_piece_around_it);
    RUN(test_holes_match_model);
    RUN(test_holes_out_of_memory);
    RUN(test_max_edge_len_splits_walls_only);
    RUN(test_area_border);
    RUN(test_corner_height_is_highest_floor);
    RUN(test_tile_border);
    RUN(test_unassigned_and_tiny);
    RUN(test_args);
    RUN(test_out_of_memory);
    RUN(test_dungeon);
    RUN(test_nav_test);
    nb_context_destroy(ctx);
    return nbt_finish("test_contour");
}
