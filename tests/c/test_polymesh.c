/* Polygon mesh: triangulation, convex merging, welding, adjacency, tile-border vertices and portals, errors,
 * out-of-memory paths. Contour sets are built by hand. */
#include "navbake.h"
#include "nbtest.h"
#include "obj.h"

static nb_context* ctx;

/* ---- orientation ---------------------------------------------------------------------------------------
 * Seen from above (y up) the grid shows +x to the right and +z DOWN the screen. The outline (0,0) -> (0,10)
 * -> (10,10) -> (10,0) therefore goes down the left side, right along the bottom, up the right side: counter-
 * clockwise on screen. Its area computed the Recast way, sum of v[i].x*v[i-1].z - v[i-1].x*v[i].z, is +200
 * (twice 100), while the textbook shoelace over (x, z) gives -200. So "counter-clockwise seen from above"
 * = positive recast_area2 = negative shoelace, and at each corner of a convex CCW polygon
 * corner_turn(prev, v, next) = (v - prev) x (next - prev) over (x, z) is negative. */
static long long recast_area2_xz(const int* xz, int n) /* xz: n (x, z) pairs */
{
    long long a = 0;
    for (int i = 0, j = n - 1; i < n; j = i++)
        a += (long long)xz[i * 2] * xz[j * 2 + 1] - (long long)xz[j * 2] * xz[i * 2 + 1];
    return a;
}

static long long corner_turn(const uint16_t* a, const uint16_t* b, const uint16_t* c)
{
    return ((long long)b[0] - a[0]) * ((long long)c[2] - a[2]) - ((long long)c[0] - a[0]) * ((long long)b[2] - a[2]);
}

static void test_orientation_convention(void)
{
    const int square[] = { 0, 0, 0, 10, 10, 10, 10, 0 };
    CHECK_INT(recast_area2_xz(square, 4), 200);
    const uint16_t a[3] = { 0, 0, 0 }, b[3] = { 0, 0, 10 }, c[3] = { 10, 0, 10 };
    CHECK(corner_turn(a, b, c) < 0); /* left turn seen from above */
}

/* ---- hand-built contour sets ---- */

#define MAX_CONTS 4
#define MAX_CVERTS 200

typedef struct test_cset {
    nb_contour_set set;
    nb_contour conts[MAX_CONTS];
    int32_t verts[MAX_CONTS][MAX_CVERTS * 4];
} test_cset;

/* width, height: the tile proper in cells, as the contour stage gives them (the compact grid less both borders);
 * contour coordinates are relative to the tile proper, so tile-border edges lie at x = 0, z = 0, x = width and
 * z = height. */
static void cset_init(test_cset* t, int width, int height, int border)
{
    memset(t, 0, sizeof(*t));
    t->set.conts = t->conts;
    t->set.cell_size = 0.3f;
    t->set.cell_height = 0.2f;
    t->set.width = width;
    t->set.height = height;
    t->set.border_size = border;
    t->set.max_error = 1.3f;
    t->set.bmax[0] = (float)width * 0.3f;
    t->set.bmax[1] = 10.0f;
    t->set.bmax[2] = (float)height * 0.3f;
}

/* Adds an outline of n (x, z) corners at height y; flags (optional) per corner. */
static void cset_add(test_cset* t, const int* xz, int n, int y, const int* flags, uint16_t reg, uint8_t area)
{
    const int c = t->set.nconts++;
    CHECK(recast_area2_xz(xz, n) > 0); /* the contour stage's winding */
    for (int i = 0; i < n; ++i) {
        int32_t* v = &t->verts[c][i * 4];
        v[0] = xz[i * 2];
        v[1] = y;
        v[2] = xz[i * 2 + 1];
        v[3] = flags ? flags[i] : 0;
    }
    t->conts[c].verts = t->verts[c];
    t->conts[c].nverts = n;
    t->conts[c].reg = reg;
    t->conts[c].area = area;
}

/* ---- mesh checks ---- */

static int poly_nv(const nb_poly_mesh* m, int i)
{
    const uint16_t* p = &m->polys[i * 2 * m->nvp];
    int n = 0;
    while (n < m->nvp && p[n] != NB_MESH_NULL_IDX)
        ++n;
    return n;
}

static const uint16_t* vert(const nb_poly_mesh* m, const uint16_t* p, int k, int n)
{
    return &m->verts[p[((k % n) + n) % n] * 3];
}

/* Twice the polygon's area, positive for counter-clockwise seen from above. */
static long long poly_area2(const nb_poly_mesh* m, int i)
{
    const uint16_t* p = &m->polys[i * 2 * m->nvp];
    const int n = poly_nv(m, i);
    long long a = 0;
    for (int k = 0; k < n; ++k) {
        const uint16_t* vi = vert(m, p, k, n);
        const uint16_t* vj = vert(m, p, k - 1, n);
        a += (long long)vi[0] * vj[2] - (long long)vj[0] * vi[2];
    }
    return a;
}

static long long total_area2(const nb_poly_mesh* m)
{
    long long a = 0;
    for (int i = 0; i < m->npolys; ++i)
        a += poly_area2(m, i);
    return a;
}

/* Every polygon: 3..nvp distinct in-range corners, NULL padding, strictly convex and counter-clockwise seen
 * from above, positive area; neighbour links symmetric and only on real edges. */
static void check_invariants(const nb_poly_mesh* m, int nvp)
{
    CHECK_INT(m->nvp, nvp);
    CHECK(m->npolys <= m->max_polys);
    for (int i = 0; i < m->npolys; ++i) {
        const uint16_t* p = &m->polys[i * 2 * nvp];
        const int n = poly_nv(m, i);
        CHECK(n >= 3 && n <= nvp);
        for (int k = n; k < nvp; ++k) {
            CHECK_INT(p[k], NB_MESH_NULL_IDX);
            CHECK_INT(p[nvp + k], NB_MESH_NULL_IDX);
        }
        for (int k = 0; k < n; ++k) {
            CHECK(p[k] < m->nverts);
            for (int l = k + 1; l < n; ++l)
                CHECK(p[k] != p[l]);
            CHECK(corner_turn(vert(m, p, k - 1, n), vert(m, p, k, n), vert(m, p, k + 1, n)) < 0);
        }
        CHECK(poly_area2(m, i) > 0);
        for (int k = 0; k < n; ++k) {
            const uint16_t nei = p[nvp + k];
            if (nei == NB_MESH_NULL_IDX || (nei & 0x8000))
                continue;
            CHECK(nei < m->npolys);
            if (nei >= m->npolys)
                continue;
            const uint16_t* q = &m->polys[nei * 2 * nvp];
            const int qn = poly_nv(m, nei);
            int back = 0;
            for (int l = 0; l < qn; ++l)
                if (q[l] == p[(k + 1) % n] && q[(l + 1) % qn] == p[k])
                    back += q[nvp + l] == i;
            CHECK_INT(back, 1);
        }
    }
}

/* How many polygons contain the point (x, z) strictly inside (points are chosen off every edge). */
static int cover_count(const nb_poly_mesh* m, double x, double z)
{
    int count = 0;
    for (int i = 0; i < m->npolys; ++i) {
        const uint16_t* p = &m->polys[i * 2 * m->nvp];
        const int n = poly_nv(m, i);
        int inside = 1;
        for (int k = 0; k < n && inside; ++k) {
            const uint16_t* a = vert(m, p, k, n);
            const uint16_t* b = vert(m, p, k + 1, n);
            const double t = ((double)b[0] - a[0]) * (z - a[2]) - (x - a[0]) * ((double)b[2] - a[2]);
            inside = t < 0;
        }
        count += inside;
    }
    return count;
}

typedef int (*shape_fn)(double x, double z);

/* Samples a point in every cell of [0, size)^2: covered exactly once inside the shape, never outside. */
static void check_coverage(const nb_poly_mesh* m, int size, shape_fn inside)
{
    int bad = 0;
    for (int z = 0; z < size; ++z)
        for (int x = 0; x < size; ++x) {
            const double px = x + 0.5137, pz = z + 0.4713;
            if (cover_count(m, px, pz) != (inside(px, pz) ? 1 : 0))
                ++bad;
        }
    CHECK_INT(bad, 0);
}

static nb_poly_mesh* build(const test_cset* t, int nvp)
{
    nb_poly_mesh* m = NULL;
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, &t->set, nvp, &m), NB_OK, "");
    if (m)
        check_invariants(m, nvp);
    return m;
}

/* ---- shapes ---- */

static const int square10[] = { 0, 0, 0, 10, 10, 10, 10, 0 };

/* L: 20x20 less the 10x10 quarter at x > 10, z < 10. */
static const int ell[] = { 0, 0, 0, 20, 20, 20, 20, 10, 10, 10, 10, 0 };
static int in_ell(double x, double z) { return x > 0 && z > 0 && x < 20 && z < 20 && !(x > 10 && z < 10); }

/* 30x30 ring around a 10x10 hole, merged the contour stage's way: the outline, back to its first corner, a
 * bridge to the hole, the hole the other way round, back along the bridge. */
static const int ring[] = { 0, 0, 0, 30, 30, 30, 30, 0, 0, 0, 10, 10, 20, 10, 20, 20, 10, 20, 10, 10 };
static int in_ring(double x, double z)
{
    return x > 0 && z > 0 && x < 30 && z < 30 && !(x > 10 && x < 20 && z > 10 && z < 20);
}

/* ---- tests ---- */

static void test_square_is_one_polygon(void)
{
    test_cset t;
    cset_init(&t, 10, 10, 0);
    cset_add(&t, square10, 4, 5, NULL, 7, NB_WALKABLE_AREA);
    nb_poly_mesh* m = build(&t, 6);
    if (!m)
        return;
    CHECK_INT(m->npolys, 1);
    CHECK_INT(m->nverts, 4);
    CHECK_INT(poly_nv(m, 0), 4);
    CHECK_INT(poly_area2(m, 0), 200);
    CHECK_INT(m->regs[0], 7);
    CHECK_INT(m->areas[0], NB_WALKABLE_AREA);
    CHECK_INT(m->flags[0], 1);
    for (int k = 0; k < 6; ++k)
        CHECK_INT(m->polys[6 + k], NB_MESH_NULL_IDX); /* no neighbours, no portals in a solo bake */
    for (int v = 0; v < 4; ++v)
        CHECK_INT(m->verts[v * 3 + 1], 5);
    CHECK_NEAR(m->cell_size, 0.3, 1e-6);
    CHECK_NEAR(m->cell_height, 0.2, 1e-6);
    CHECK_NEAR(m->max_edge_error, 1.3, 1e-6);
    CHECK_NEAR(m->bmax[0], 3.0, 1e-6);
    CHECK_INT(m->border_size, 0);
    nb_poly_mesh_destroy(ctx, m);
}

static void test_ell_splits_into_convex_pieces(void)
{
    test_cset t;
    cset_init(&t, 20, 20, 0);
    cset_add(&t, ell, 6, 0, NULL, 1, NB_WALKABLE_AREA);
    nb_poly_mesh* m = build(&t, 6);
    if (!m)
        return;
    CHECK_INT(m->npolys, 2); /* one reflex corner: two convex pieces suffice, and the merge finds them */
    CHECK_INT(m->nverts, 6);
    CHECK_INT(total_area2(m), 2 * 300);
    check_coverage(m, 20, in_ell);
    nb_poly_mesh_destroy(ctx, m);
}

static void test_ring_with_hole(void)
{
    test_cset t;
    cset_init(&t, 30, 30, 0);
    cset_add(&t, ring, 10, 0, NULL, 1, NB_WALKABLE_AREA);
    nb_poly_mesh* m = build(&t, 6);
    if (!m)
        return;
    CHECK_INT(m->nverts, 8); /* the bridge's duplicated corners are welded */
    CHECK_INT(total_area2(m), 2 * (900 - 100));
    CHECK(m->npolys >= 4); /* a convex piece cannot surround the hole: at least one per side */
    check_coverage(m, 30, in_ring);
    CHECK_INT(cover_count(m, 15.0, 15.0), 0);
    nb_poly_mesh_destroy(ctx, m);
}

static void test_nvp3_gives_triangles(void)
{
    test_cset t;
    cset_init(&t, 30, 30, 0);
    cset_add(&t, ring, 10, 0, NULL, 1, NB_WALKABLE_AREA);
    nb_poly_mesh* m = build(&t, 3);
    if (m) {
        for (int i = 0; i < m->npolys; ++i)
            CHECK_INT(poly_nv(m, i), 3);
        CHECK_INT(m->npolys, 8); /* V + 2H - 2 triangles for V corners and H holes */
        check_coverage(m, 30, in_ring);
        nb_poly_mesh_destroy(ctx, m);
    }
    cset_init(&t, 20, 20, 0);
    cset_add(&t, ell, 6, 0, NULL, 1, NB_WALKABLE_AREA);
    m = build(&t, 3);
    if (m) {
        CHECK_INT(m->npolys, 4);
        CHECK_INT(total_area2(m), 600);
        check_coverage(m, 20, in_ell);
        nb_poly_mesh_destroy(ctx, m);
    }
}

static void test_nvp_limits_polygon_size(void)
{
    /* A regular-ish 12-gon (convex): nvp 12 keeps it whole, smaller nvp splits it into pieces of <= nvp. */
    static const int dodeca[] = { 10, 0,  4,  2,  1,  6,  0,  10, 1,  14, 4,  18,
                                  10, 20, 16, 18, 19, 14, 20, 10, 19, 6,  16, 2 };
    const int* xz = dodeca; /* top, left, bottom, right: counter-clockwise seen from above */
    for (int nvp = 3; nvp <= NB_MAX_VERTS_PER_POLY; ++nvp) {
        test_cset t;
        cset_init(&t, 20, 20, 0);
        cset_add(&t, xz, 12, 0, NULL, 1, NB_WALKABLE_AREA);
        nb_poly_mesh* m = build(&t, nvp);
        if (!m)
            continue;
        const long long want = recast_area2_xz(xz, 12);
        CHECK_INT(total_area2(m), want);
        if (nvp == 12)
            CHECK_INT(m->npolys, 1);
        /* each merge removes one polygon and adds nv-2 corners... at least ceil(10 / (nvp - 2)) pieces */
        CHECK(m->npolys >= (10 + nvp - 3) / (nvp - 2));
        nb_poly_mesh_destroy(ctx, m);
    }
}

static void test_shared_edge_is_welded_and_linked(void)
{
    static const int right[] = { 10, 0, 10, 10, 20, 10, 20, 0 };
    for (int dy = 0; dy <= 3; ++dy) {
        test_cset t;
        cset_init(&t, 20, 10, 0);
        cset_add(&t, square10, 4, 10, NULL, 1, NB_WALKABLE_AREA);
        cset_add(&t, right, 4, 10 + dy, NULL, 2, 5);
        nb_poly_mesh* m = build(&t, 6);
        if (!m)
            continue;
        CHECK_INT(m->npolys, 2);
        const int welded = dy <= 2; /* within 2 cells in y the corners are the same vertex */
        CHECK_INT(m->nverts, welded ? 6 : 8);
        CHECK_INT(m->regs[0], 1);
        CHECK_INT(m->regs[1], 2);
        CHECK_INT(m->areas[1], 5);
        int links[2] = { 0, 0 };
        for (int i = 0; i < 2; ++i)
            for (int k = 0; k < 6; ++k)
                if (m->polys[i * 12 + 6 + k] != NB_MESH_NULL_IDX) {
                    CHECK_INT(m->polys[i * 12 + 6 + k], 1 - i);
                    ++links[i];
                }
        CHECK_INT(links[0], welded);
        CHECK_INT(links[1], welded);
        nb_poly_mesh_destroy(ctx, m);
    }
}

static void test_unwalkable_area_gets_no_flags(void)
{
    test_cset t;
    cset_init(&t, 10, 10, 0);
    cset_add(&t, square10, 4, 0, NULL, 3, NB_NULL_AREA);
    nb_poly_mesh* m = build(&t, 6);
    if (!m)
        return;
    CHECK_INT(m->npolys, 1);
    CHECK_INT(m->areas[0], NB_NULL_AREA);
    CHECK_INT(m->flags[0], 0);
    nb_poly_mesh_destroy(ctx, m);
}

static void test_border_vertices_removed_and_portals(void)
{
    /* A tile of 20x20 cells (inside a border of 3, which the contours already cut off): the square covering the tile has extra corners in the middle
     * of two sides, flagged as tile-border vertices. They are not needed: one quad remains, and all four of its
     * edges lie on the tile border. Without the flag the collinear corners stay. */
    static const int xz[] = { 0, 0, 0, 10, 0, 20, 10, 20, 20, 20, 20, 0 };
    static const int flags[] = { 0, NB_CONTOUR_BORDER_VERTEX, 0, NB_CONTOUR_BORDER_VERTEX, 0, 0 };
    test_cset t;
    cset_init(&t, 20, 20, 3);
    cset_add(&t, xz, 6, 0, flags, 1, NB_WALKABLE_AREA);
    nb_poly_mesh* m = build(&t, 6);
    if (m) {
        CHECK_INT(m->nverts, 4);
        CHECK_INT(m->npolys, 1);
        CHECK_INT(total_area2(m), 800);
        CHECK_INT(m->border_size, 3);
        int sides[4] = { 0, 0, 0, 0 };
        const uint16_t* p = m->polys;
        const int n = poly_nv(m, 0);
        for (int k = 0; k < n; ++k) {
            const uint16_t nei = p[6 + k];
            CHECK(nei & 0x8000);
            const uint16_t* a = &m->verts[p[k] * 3];
            const uint16_t* b = &m->verts[p[(k + 1) % n] * 3];
            int want = -1;
            if (a[0] == 0 && b[0] == 0)
                want = 0;
            else if (a[2] == 20 && b[2] == 20)
                want = 1;
            else if (a[0] == 20 && b[0] == 20)
                want = 2;
            else if (a[2] == 0 && b[2] == 0)
                want = 3;
            CHECK_INT(nei, 0x8000 | want);
            if (want >= 0)
                sides[want]++;
        }
        CHECK(sides[0] == 1 && sides[1] == 1 && sides[2] == 1 && sides[3] == 1);
        nb_poly_mesh_destroy(ctx, m);
    }
    /* unflagged: the corners stay, and the polygons still cover the square */
    cset_init(&t, 20, 20, 3);
    cset_add(&t, xz, 6, 0, NULL, 1, NB_WALKABLE_AREA);
    m = build(&t, 6);
    if (m) {
        CHECK_INT(m->nverts, 6);
        CHECK(m->npolys >= 2);
        CHECK_INT(total_area2(m), 800);
        nb_poly_mesh_destroy(ctx, m);
    }
}

static void test_border_vertex_between_regions(void)
{
    /* Two regions side by side; where their shared edge meets the tile border the corner is a border vertex.
     * It may go or stay, but the mesh must stay valid and cover the same ground. The interior edge of the
     * tile (x = 10 here, with the tile 20 wide) is no portal. */
    static const int left[] = { 0, 0, 0, 20, 10, 20, 10, 0 };
    static const int right[] = { 10, 0, 10, 20, 20, 20, 20, 0 };
    static const int lflags[] = { 0, 0, NB_CONTOUR_BORDER_VERTEX, NB_CONTOUR_BORDER_VERTEX };
    static const int rflags[] = { NB_CONTOUR_BORDER_VERTEX, NB_CONTOUR_BORDER_VERTEX, 0, 0 };
    test_cset t;
    cset_init(&t, 20, 20, 2);
    cset_add(&t, left, 4, 0, lflags, 1, NB_WALKABLE_AREA);
    cset_add(&t, right, 4, 0, rflags, 2, NB_WALKABLE_AREA);
    nb_poly_mesh* m = build(&t, 6);
    if (!m)
        return;
    CHECK_INT(total_area2(m), 800);
    for (int i = 0; i < m->npolys; ++i) {
        const uint16_t* p = &m->polys[i * 12];
        const int n = poly_nv(m, i);
        for (int k = 0; k < n; ++k) {
            const uint16_t* a = &m->verts[p[k] * 3];
            const uint16_t* b = &m->verts[p[(k + 1) % n] * 3];
            const int on_border = (a[0] == 0 && b[0] == 0) || (a[0] == 20 && b[0] == 20) ||
                                  (a[2] == 0 && b[2] == 0) || (a[2] == 20 && b[2] == 20);
            CHECK_INT((p[6 + k] & 0x8000) != 0 && p[6 + k] != NB_MESH_NULL_IDX, on_border);
        }
    }
    nb_poly_mesh_destroy(ctx, m);
}

static void test_empty_and_degenerate_contours(void)
{
    test_cset t;
    cset_init(&t, 10, 10, 0);
    nb_poly_mesh* m = build(&t, 6);
    if (m) {
        CHECK_INT(m->npolys, 0);
        CHECK_INT(m->nverts, 0);
        nb_poly_mesh_destroy(ctx, m);
    }
    /* a 2-corner contour is skipped; a sliver whose corners are collinear gives no polygon */
    static const int two[] = { 0, 0, 5, 5 };
    static const int line[] = { 0, 0, 0, 5, 0, 10 };
    cset_init(&t, 10, 10, 0);
    t.set.nconts = 2;
    for (int c = 0; c < 2; ++c) {
        const int* src = c ? line : two;
        const int n = c ? 3 : 2;
        for (int i = 0; i < n; ++i) {
            t.verts[c][i * 4] = src[i * 2];
            t.verts[c][i * 4 + 2] = src[i * 2 + 1];
        }
        t.conts[c].verts = t.verts[c];
        t.conts[c].nverts = n;
        t.conts[c].area = NB_WALKABLE_AREA;
    }
    m = NULL;
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, &t.set, 6, &m), NB_OK, "");
    if (m) {
        for (int i = 0; i < m->npolys; ++i)
            CHECK(poly_area2(m, i) >= 0);
        nb_poly_mesh_destroy(ctx, m);
    }
}

static void test_invalid_arguments(void)
{
    test_cset t;
    cset_init(&t, 10, 10, 0);
    cset_add(&t, square10, 4, 0, NULL, 1, NB_WALKABLE_AREA);
    nb_poly_mesh* m = (nb_poly_mesh*)&t; /* must be cleared on failure */
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, &t.set, 2, &m), NB_ERR_INVALID_ARG, "nvp");
    CHECK(m == NULL);
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, &t.set, NB_MAX_VERTS_PER_POLY + 1, &m), NB_ERR_INVALID_ARG, "nvp");
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, NULL, 6, &m), NB_ERR_NULL_ARG, "cset");
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, &t.set, 6, NULL), NB_ERR_NULL_ARG, "out");
    t.conts[0].verts = NULL;
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, &t.set, 6, &m), NB_ERR_NULL_ARG, "verts");
    nb_poly_mesh_destroy(ctx, NULL); /* accepts NULL */
}

static void test_too_many_vertices(void)
{
    /* A staircase outline with more than 65534 distinct corners cannot be indexed by uint16. */
    const int steps = 33000;
    const int n = steps * 2 + 2;
    int32_t* v = (int32_t*)calloc((size_t)n * 4, sizeof(int32_t));
    CHECK(v != NULL);
    if (!v)
        return;
    /* (0,0) -> (0,1) -> (1,1) -> (1,2) -> ... staircase down-right, then back along the top to (steps+?,0) */
    int k = 0;
    for (int i = 0; i < steps; ++i) {
        v[k * 4] = i, v[k * 4 + 2] = i, ++k;
        v[k * 4] = i, v[k * 4 + 2] = i + 1, ++k;
    }
    v[k * 4] = steps, v[k * 4 + 2] = steps, ++k;
    v[k * 4] = steps, v[k * 4 + 2] = 0, ++k;
    nb_contour c;
    memset(&c, 0, sizeof(c));
    c.verts = v;
    c.nverts = k;
    c.area = NB_WALKABLE_AREA;
    nb_contour_set set;
    memset(&set, 0, sizeof(set));
    set.conts = &c;
    set.nconts = 1;
    set.width = set.height = steps + 1;
    nb_poly_mesh* m = NULL;
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, &set, 6, &m), NB_ERR_TOO_LARGE, "65534");
    CHECK(m == NULL);
    free(v);
}

static void test_out_of_memory_everywhere(void)
{
    /* Fail each allocation in turn on a set that exercises triangulation, merging, welding, vertex removal
     * and adjacency: every failure is NB_ERR_OUT_OF_MEMORY with nothing left allocated. */
    static const int xz[] = { 0, 0, 0, 10, 0, 20, 10, 20, 20, 20, 20, 0 };
    static const int flags[] = { 0, NB_CONTOUR_BORDER_VERTEX, 0, NB_CONTOUR_BORDER_VERTEX, 0, 0 };
    static const int ring_far[] = { 30, 0, 30, 30, 60, 30, 60, 0, 30, 0, 40, 10, 50, 10, 50, 20, 40, 20, 40, 10 };
    int failures = 0;
    for (long fail = 1;; ++fail) {
        nbt_alloc a = { 0 };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        CHECK(c != NULL);
        if (!c)
            return;
        a.fail_at = a.calls + fail;
        test_cset t;
        cset_init(&t, 60, 30, 3);
        cset_add(&t, xz, 6, 0, flags, 1, NB_WALKABLE_AREA);
        cset_add(&t, ring_far, 10, 0, NULL, 2, NB_WALKABLE_AREA);
        nb_poly_mesh* m = NULL;
        const nb_status st = nb_build_poly_mesh(c, &t.set, 6, &m);
        if (st == NB_OK) {
            check_invariants(m, 6);
            nb_poly_mesh_destroy(c, m);
        } else {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            CHECK(m == NULL);
            CHECK(strstr(nb_context_message(c), "nb_build_poly_mesh") != NULL);
            ++failures;
        }
        CHECK_INT(a.live, 1); /* only the context */
        nb_context_destroy(c);
        if (st != NB_ERR_OUT_OF_MEMORY || fail > 100)
            break;
    }
    CHECK(failures >= 8); /* mesh arrays, scratch, merger, removal scratch, adjacency */
}

static int cancel_polymesh(void* user, nb_stage stage, uint32_t done, uint32_t total)
{
    (void)user;
    (void)done;
    (void)total;
    return stage == NB_STAGE_POLYMESH;
}

static void test_cancel(void)
{
    nbt_alloc a = { 0 };
    nb_context_desc d;
    memset(&d, 0, sizeof(d));
    nbt_alloc_hooks(&d, &a);
    d.progress = cancel_polymesh;
    nb_context* c = nb_context_create(&d);
    test_cset t;
    cset_init(&t, 10, 10, 0);
    cset_add(&t, square10, 4, 0, NULL, 1, NB_WALKABLE_AREA);
    nb_poly_mesh* m = NULL;
    CHECK_STATUS(c, nb_build_poly_mesh(c, &t.set, 6, &m), NB_ERR_CANCELLED, "cancelled");
    CHECK(m == NULL);
    CHECK_INT(a.live, 1);
    nb_context_destroy(c);
}

static void test_comb_outline(void)
{
    /* A comb: a spine along z = 0..4 with teeth hanging down (+z) -- many reflex corners. The pieces must
     * cover it exactly and stay convex. */
    int xz[MAX_CVERTS * 2];
    int n = 0;
    const int teeth = 7; /* teeth at x = 4t .. 4t+2, from z = 4 to 12 */
    /* go down the left side (x = 0) of the first tooth, then along the bottoms and gaps, up the right side */
    for (int i = 0; i < teeth; ++i) {
        const int x0 = 4 * i, x1 = 4 * i + 2;
        if (i == 0) {
            xz[n * 2] = x0, xz[n * 2 + 1] = 0, ++n;
        }
        xz[n * 2] = x0, xz[n * 2 + 1] = 12, ++n;
        xz[n * 2] = x1, xz[n * 2 + 1] = 12, ++n;
        if (i + 1 < teeth) {
            xz[n * 2] = x1, xz[n * 2 + 1] = 4, ++n;
            xz[n * 2] = x1 + 2, xz[n * 2 + 1] = 4, ++n;
        } else {
            xz[n * 2] = x1, xz[n * 2 + 1] = 0, ++n;
        }
    }
    test_cset t;
    cset_init(&t, 30, 30, 0);
    cset_add(&t, xz, n, 0, NULL, 1, NB_WALKABLE_AREA);
    for (int nvp = 3; nvp <= 8; nvp += 5) {
        nb_poly_mesh* m = build(&t, nvp);
        if (!m)
            continue;
        CHECK_INT(total_area2(m), recast_area2_xz(xz, n));
        int bad = 0;
        for (int z = 0; z < 14; ++z)
            for (int x = 0; x < 28; ++x) {
                const double px = x + 0.5137, pz = z + 0.4713;
                const int in = px < 26 && pz < 12 && (pz < 4 || ((int)px % 4) < 2);
                bad += cover_count(m, px, pz) != in;
            }
        CHECK_INT(bad, 0);
        nb_poly_mesh_destroy(ctx, m);
    }
}

/* ---- random outlines ---- */

static unsigned rng_state = 2024u;
static int rnd(int n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (int)((rng_state >> 8) % (unsigned)n);
}

static long long turn_xz(const int* a, const int* b, const int* c)
{
    return (long long)(b[0] - a[0]) * (c[1] - a[1]) - (long long)(c[0] - a[0]) * (b[1] - a[1]);
}

static int on_seg_xz(const int* a, const int* b, const int* c)
{
    if (turn_xz(a, b, c) != 0)
        return 0;
    return c[0] >= (a[0] < b[0] ? a[0] : b[0]) && c[0] <= (a[0] > b[0] ? a[0] : b[0]) &&
           c[1] >= (a[1] < b[1] ? a[1] : b[1]) && c[1] <= (a[1] > b[1] ? a[1] : b[1]);
}

/* No repeated corner, no corner on a non-adjacent edge, no crossing edges. */
static int is_simple(const int* xz, int n)
{
    for (int i = 0; i < n; ++i) {
        const int *a = &xz[i * 2], *b = &xz[((i + 1) % n) * 2];
        for (int j = 0; j < n; ++j) {
            const int *c = &xz[j * 2], *d = &xz[((j + 1) % n) * 2];
            if (j != i && c[0] == a[0] && c[1] == a[1])
                return 0;
            if (j != i && j != (i + 1) % n && on_seg_xz(a, b, c))
                return 0;
            if (j == i || j == (i + 1) % n || (j + 1) % n == i)
                continue;
            const long long t1 = turn_xz(a, b, c), t2 = turn_xz(a, b, d), t3 = turn_xz(c, d, a), t4 = turn_xz(c, d, b);
            if (((t1 < 0 && t2 > 0) || (t1 > 0 && t2 < 0)) && ((t3 < 0 && t4 > 0) || (t3 > 0 && t4 < 0)))
                return 0;
        }
    }
    return 1;
}

static void test_random_outlines(void)
{
    /* Star-shaped outlines with random radii, some snapped to a coarse grid: many are simple, the rest touch or
     * overlap themselves (spikes, repeated corners) as a careless contour could. Some corners are flagged as
     * tile-border vertices, so removal and re-filling run on odd shapes too. Every mesh must satisfy the
     * invariants; the simple unflagged ones must be tiled exactly. */
    int simple = 0, simple_large = 0;
    for (int it = 0; it < 600; ++it) {
        /* Half of them 64 corners or more: large outlines are clipped with the edge grid. */
        const int n = it % 2 ? 64 + rnd(MAX_CVERTS - 64) : 3 + rnd(61);
        double ang[MAX_CVERTS];
        for (int i = 0; i < n; ++i)
            ang[i] = rnd(100000) / 100000.0 * 6.283185307179586;
        for (int i = 1; i < n; ++i) /* sort */
            for (int j = i; j > 0 && ang[j - 1] > ang[j]; --j) {
                const double tmp = ang[j];
                ang[j] = ang[j - 1];
                ang[j - 1] = tmp;
            }
        const int snap = rnd(4) == 0;
        int xz[MAX_CVERTS * 2];
        for (int i = 0; i < n; ++i) {
            const double r = 5 + rnd(90);
            int x = (int)(100 + r * cos(ang[i])), z = (int)(100 + r * sin(ang[i]));
            if (snap)
                x = x / 10 * 10, z = z / 10 * 10;
            xz[i * 2] = x;
            xz[i * 2 + 1] = z;
        }
        if (recast_area2_xz(xz, n) <= 0) /* increasing angle turns the wrong way seen from above: reverse */
            for (int i = 0; i < n / 2; ++i)
                for (int k = 0; k < 2; ++k) {
                    const int tmp = xz[i * 2 + k];
                    xz[i * 2 + k] = xz[(n - 1 - i) * 2 + k];
                    xz[(n - 1 - i) * 2 + k] = tmp;
                }
        if (recast_area2_xz(xz, n) <= 0)
            continue;
        int flags[MAX_CVERTS];
        const int flagged = it % 3 == 0;
        for (int i = 0; i < n; ++i)
            flags[i] = flagged && rnd(4) == 0 ? NB_CONTOUR_BORDER_VERTEX : 0;
        test_cset t;
        cset_init(&t, 200, 200, 0);
        cset_add(&t, xz, n, rnd(4), flags, 1, NB_WALKABLE_AREA);
        const int nvp = 3 + rnd(NB_MAX_VERTS_PER_POLY - 2);
        nb_poly_mesh* m = build(&t, nvp);
        if (!m)
            continue;
        if (!flagged && is_simple(xz, n)) {
            ++simple;
            simple_large += n >= 64;
            CHECK_INT(total_area2(m), recast_area2_xz(xz, n));
        }
        nb_poly_mesh_destroy(ctx, m);
    }
    CHECK(simple > 100);
    CHECK(simple_large > 20);
}

static void test_self_overlapping_outline(void)
{
    /* A star outline found by fuzzing: it folds over itself (spikes, corners repeated, edges walked twice), and
     * some corners are tile-border vertices. Polygons from it once shared an edge walked the same way, and their
     * union passed a corner twice. Whatever the input, the output must be a valid mesh. */
#define B NB_CONTOUR_BORDER_VERTEX
    static const int32_t v[] = {
        110, 3, 90, 0, 140, 1, 90, B, 120, 1, 90, 0, 120, 1, 90, 0,
        120, 3, 90, 0, 110, 0, 90, B, 170, 0, 50, 0, 130, 0, 70, 0,
        130, 2, 70, 0, 130, 2, 60, B, 110, 2, 80, 0, 110, 1, 80, 0,
        130, 0, 40, B, 130, 1, 40, B, 110, 2, 60, 0, 100, 3, 20, 0,
        100, 0, 70, 0, 100, 3, 40, 0, 90, 2, 80, B, 90, 0, 10, 0,
        90, 3, 80, 0, 80, 0, 60, 0, 80, 3, 60, 0, 80, 2, 60, B,
        60, 1, 50, 0, 60, 2, 70, 0, 50, 1, 60, 0, 60, 2, 70, 0,
        70, 2, 90, 0, 60, 3, 150, B, 70, 0, 130, 0, 60, 3, 160, 0,
        80, 1, 130, 0, 80, 0, 120, 0, 80, 3, 130, 0, 90, 3, 130, 0,
        80, 0, 180, 0, 90, 1, 120, B, 120, 3, 150, 0, 110, 0, 110, B,
        120, 0, 120, 0, 120, 1, 120, 0, 150, 0, 140, B, 160, 3, 120, 0,
        120, 0, 100, 0, 170, 2, 100, B
    };
#undef B
    test_cset t;
    cset_init(&t, 200, 200, 0);
    const int n = (int)(sizeof(v) / sizeof(v[0]) / 4);
    memcpy(t.verts[0], v, sizeof(v));
    t.conts[0].verts = t.verts[0];
    t.conts[0].nverts = n;
    t.conts[0].reg = 1;
    t.conts[0].area = NB_WALKABLE_AREA;
    t.set.nconts = 1;
    for (int nvp = 6; nvp <= NB_MAX_VERTS_PER_POLY; nvp += 6) {
        nb_poly_mesh* m = build(&t, nvp);
        if (m) {
            CHECK(m->npolys > 0);
            nb_poly_mesh_destroy(ctx, m);
        }
    }
}

/* ---- real levels: the stages up to contours, then the polygon mesh ---- */

static void check_level(const char* name, int ref_polys, int ref_verts)
{
    char path[512], err[256];
    nb_obj obj;
    if (nb_obj_load(nbt_mesh_path(name, path, sizeof(path)), &obj, err, sizeof(err)) != 0) {
        fprintf(stderr, "  cannot load %s: %s\n", name, err);
        CHECK(0);
        return;
    }
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = obj.positions;
    in.mesh.vertex_count = obj.vertex_count;
    in.mesh.indices = obj.indices;
    in.mesh.triangle_count = obj.triangle_count;
    nb_config cfg;
    nb_config_cells cells;
    CHECK_STATUS(ctx, nb_config_resolve(ctx, NULL, &cfg, &cells), NB_OK, "");
    nb_bake_result r;
    nb_contour_set* cset = NULL;
    nb_poly_mesh* m = NULL;
    CHECK_STATUS(ctx, nb_bake(ctx, &in, &cfg, NB_STAGE_AREAS, NB_KEEP_ALL, &r), NB_OK, "");
    if (!r.compact)
        goto done;
    CHECK_STATUS(ctx, nb_build_distance_field(ctx, r.compact), NB_OK, "");
    CHECK_STATUS(ctx,
                 nb_build_regions_watershed(ctx, r.compact, 0, cells.min_region_area, cells.merge_region_area),
                 NB_OK, "");
    CHECK_STATUS(ctx, nb_build_contours(ctx, r.compact, cfg.edge_max_error, cells.max_edge_len, &cset), NB_OK, "");
    if (!cset)
        goto done;
    CHECK_STATUS(ctx, nb_build_poly_mesh(ctx, cset, cfg.verts_per_poly, &m), NB_OK, "");
    if (!m)
        goto done;
    check_invariants(m, cfg.verts_per_poly);
    fprintf(stderr, "  %s: %d polys, %d verts (reference %d, %d)\n", name, m->npolys, m->nverts, ref_polys, ref_verts);
    CHECK(fabs((double)m->npolys - ref_polys) <= 0.15 * ref_polys);
    CHECK(fabs((double)m->nverts - ref_verts) <= 0.15 * ref_verts);

    /* The polygons tile exactly what the outlines enclose (holes were merged in, bridges add nothing), region by
     * region, and use only outline corners. */
    long long want = 0, got = 0;
    int bad_regs = 0, bad_verts = 0;
    for (int c = 0; c < cset->nconts; ++c) {
        const nb_contour* ct = &cset->conts[c];
        if (ct->nverts < 3)
            continue;
        long long a = 0;
        for (int i = 0, j = ct->nverts - 1; i < ct->nverts; j = i++)
            a += (long long)ct->verts[i * 4] * ct->verts[j * 4 + 2] - (long long)ct->verts[j * 4] * ct->verts[i * 4 + 2];
        want += a;
        long long pa = 0;
        for (int p = 0; p < m->npolys; ++p)
            if (m->regs[p] == ct->reg)
                pa += poly_area2(m, p);
        bad_regs += pa != a;
    }
    got = total_area2(m);
    CHECK_INT(got, want);
    CHECK_INT(bad_regs, 0);
    for (int v = 0; v < m->nverts; ++v) {
        int found = 0;
        for (int c = 0; c < cset->nconts && !found; ++c)
            for (int i = 0; i < cset->conts[c].nverts && !found; ++i)
                found = cset->conts[c].verts[i * 4] == m->verts[v * 3] &&
                        cset->conts[c].verts[i * 4 + 2] == m->verts[v * 3 + 2];
        bad_verts += !found;
    }
    CHECK_INT(bad_verts, 0);
    int linked = 0;
    for (int p = 0; p < m->npolys; ++p) {
        CHECK_INT(m->flags[p], 1);
        CHECK(m->regs[p] != 0);
        for (int k = 0; k < m->nvp; ++k)
            linked += m->polys[p * 2 * m->nvp + m->nvp + k] != NB_MESH_NULL_IDX;
    }
    CHECK(linked > m->npolys); /* a connected level: most polygons have neighbours */

done:
    nb_poly_mesh_destroy(ctx, m);
    nb_contour_set_destroy(ctx, cset);
    nb_bake_result_release(ctx, &r);
    nb_obj_free(&obj);
}

static void test_dungeon(void) { check_level("dungeon.obj", 118, 223); }
static void test_nav_test(void) { check_level("nav_test.obj", 155, 349); }

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_orientation_convention);
    RUN(test_square_is_one_polygon);
    RUN(test_ell_splits_into_convex_pieces);
    RUN(test_ring_with_hole);
    RUN(test_nvp3_gives_triangles);
    RUN(test_nvp_limits_polygon_size);
    RUN(test_shared_edge_is_welded_and_linked);
    RUN(test_unwalkable_area_gets_no_flags);
    RUN(test_border_vertices_removed_and_portals);
    RUN(test_border_vertex_between_regions);
    RUN(test_empty_and_degenerate_contours);
    RUN(test_invalid_arguments);
    RUN(test_too_many_vertices);
    RUN(test_out_of_memory_everywhere);
    RUN(test_cancel);
    RUN(test_comb_outline);
    RUN(test_random_outlines);
    RUN(test_self_overlapping_outline);
    RUN(test_dungeon);
    RUN(test_nav_test);
    nb_context_destroy(ctx);
    return nbt_finish("test_polymesh");
}
