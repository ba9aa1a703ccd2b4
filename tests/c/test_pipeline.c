/* The whole bake through nb_bake: analytic shapes, invariants on the standard levels for every partition,
 * counts against REFERENCE.md. */
#include "navbake.h"
#include "nbtest.h"
#include "nbtest_mesh.h"
#include "obj.h"

static nb_context* ctx;

/* ---- geometry helpers ---- */

static nb_status bake(const mesh_builder* m, const nb_config* cfg, nb_bake_result* r)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = m->v;
    in.mesh.vertex_count = m->nv;
    in.mesh.indices = m->t;
    in.mesh.triangle_count = m->nt;
    return nb_bake(ctx, &in, cfg, NB_STAGE_ALL, NB_KEEP_COMPACT, r);
}

/* ---- polygon helpers (world units, xz) ---- */

static void poly_vert(const nb_poly_mesh* pm, int v, float* out)
{
    const uint16_t* p = &pm->verts[v * 3];
    out[0] = pm->bmin[0] + p[0] * pm->cell_size;
    out[1] = pm->bmin[1] + p[1] * pm->cell_height;
    out[2] = pm->bmin[2] + p[2] * pm->cell_size;
}

static int poly_nverts(const nb_poly_mesh* pm, int p)
{
    int n = 0;
    while (n < pm->nvp && pm->polys[p * 2 * pm->nvp + n] != NB_MESH_NULL_IDX)
        ++n;
    return n;
}

/* Shoelace sum over (x, z): negative = counter-clockwise seen from above (x right, z toward the viewer's
 * bottom when looking down the -y axis). Returns the signed area in cells^2. */
static double signed_area_cells(const nb_poly_mesh* pm, int p)
{
    const uint16_t* poly = &pm->polys[p * 2 * pm->nvp];
    const int n = poly_nverts(pm, p);
    double a = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        const uint16_t* vi = &pm->verts[poly[i] * 3];
        const uint16_t* vj = &pm->verts[poly[j] * 3];
        a += (double)vj[0] * vi[2] - (double)vi[0] * vj[2];
    }
    return a * 0.5;
}

static double total_poly_area(const nb_poly_mesh* pm)
{
    double a = 0;
    for (int p = 0; p < pm->npolys; ++p)
        a += -signed_area_cells(pm, p);
    return a * pm->cell_size * pm->cell_size;
}

static int poly_contains_xz(const nb_poly_mesh* pm, int p, float x, float z)
{
    const uint16_t* poly = &pm->polys[p * 2 * pm->nvp];
    const int n = poly_nverts(pm, p);
    for (int i = 0, j = n - 1; i < n; j = i++) {
        float a[3], b[3];
        poly_vert(pm, poly[j], a);
        poly_vert(pm, poly[i], b);
        /* counter-clockwise from above: the inside is where this cross product is <= 0 */
        const float cross = (b[0] - a[0]) * (z - a[2]) - (b[2] - a[2]) * (x - a[0]);
        if (cross > 1e-4f)
            return 0;
    }
    return 1;
}

static int find_poly(const nb_poly_mesh* pm, float x, float y, float z)
{
    for (int p = 0; p < pm->npolys; ++p) {
        if (!poly_contains_xz(pm, p, x, z))
            continue;
        float v[3];
        poly_vert(pm, pm->polys[p * 2 * pm->nvp], v);
        if (fabsf(v[1] - y) < 1.5f)
            return p;
    }
    return -1;
}

static int walkable_cells(const nb_compact_heightfield* chf)
{
    int n = 0;
    for (uint32_t i = 0; i < chf->span_count; ++i)
        n += chf->areas[i] != NB_NULL_AREA;
    return n;
}

/* Signed distance from q's height to the nearest open-span floor of the cells q lies in: its own cell, or
 * all cells touching it when it sits on a cell edge or corner (polygon corners take the highest floor of
 * the cells around them). 1e30 when none of them has an open span. */
static float floor_offset(const nb_compact_heightfield* chf, const float* q)
{
    const float fx = (q[0] - chf->bmin[0]) / chf->cell_size, fz = (q[2] - chf->bmin[2]) / chf->cell_size;
    const int on_x = fabsf(fx - roundf(fx)) < 1e-3f, on_z = fabsf(fz - roundf(fz)) < 1e-3f;
    const int x0 = on_x ? (int)roundf(fx) - 1 : (int)floorf(fx), x1 = on_x ? x0 + 1 : x0;
    const int z0 = on_z ? (int)roundf(fz) - 1 : (int)floorf(fz), z1 = on_z ? z0 + 1 : z0;
    float best = 1e30f;
    for (int z = z0; z <= z1; ++z)
        for (int x = x0; x <= x1; ++x) {
            if (x < 0 || z < 0 || x >= chf->width || z >= chf->height)
                continue;
            const nb_compact_cell cell = chf->cells[x + z * chf->width];
            for (uint32_t s = cell.index; s < cell.index + cell.count; ++s) {
                const float d = chf->bmin[1] + chf->spans[s].y * chf->cell_height - q[1];
                if (fabsf(d) < fabsf(best))
                    best = d;
            }
        }
    return best;
}

/* ---- invariants every bake must satisfy ---- */

static void check_invariants(const nb_bake_result* r, const char* what)
{
    const nb_poly_mesh* pm = r->poly_mesh;
    const nb_poly_mesh_detail* dm = r->detail;
    const nb_compact_heightfield* chf = r->compact;
    const int failed_before = nbt_failed_checks_;
    CHECK(pm != NULL && dm != NULL && chf != NULL);
    if (!pm || !dm || !chf)
        return;
    CHECK_INT(dm->nmeshes, pm->npolys);
    for (int p = 0; p < pm->npolys; ++p) {
        const uint16_t* poly = &pm->polys[p * 2 * pm->nvp];
        const int n = poly_nverts(pm, p);
        CHECK(n >= 3 && n <= r->config.verts_per_poly);
        CHECK(signed_area_cells(pm, p) < 0.0); /* counter-clockwise from above, non-zero area */
        for (int i = 0; i < n; ++i) {
            /* convex: every turn goes the same way (collinear allowed) */
            const uint16_t* a = &pm->verts[poly[i] * 3];
            const uint16_t* b = &pm->verts[poly[(i + 1) % n] * 3];
            const uint16_t* c = &pm->verts[poly[(i + 2) % n] * 3];
            const long cross = ((long)b[0] - a[0]) * ((long)c[2] - a[2]) - ((long)b[2] - a[2]) * ((long)c[0] - a[0]);
            CHECK(cross <= 0);
            CHECK(poly[i] < pm->nverts);
            /* adjacency symmetric: the neighbour lists us on the same edge, reversed */
            const uint16_t nb = poly[pm->nvp + i];
            if (nb == NB_MESH_NULL_IDX || (nb & 0x8000))
                continue;
            CHECK(nb < pm->npolys);
            if (nb >= pm->npolys)
                continue;
            const uint16_t* q = &pm->polys[nb * 2 * pm->nvp];
            const int qn = poly_nverts(pm, nb);
            int found = 0;
            for (int k = 0; k < qn; ++k)
                if (q[pm->nvp + k] == p && q[k] == poly[(i + 1) % n] && q[(k + 1) % qn] == poly[i])
                    found = 1;
            CHECK(found);
        }
        /* detail triangles: inside the polygon's footprint, near the voxel surface */
        const uint32_t* dmesh = &dm->meshes[p * 4];
        CHECK(dmesh[3] >= 1);
        for (uint32_t t = 0; t < dmesh[3]; ++t) {
            const uint8_t* tri = &dm->tris[(dmesh[2] + t) * 4];
            float centroid[3] = { 0, 0, 0 };
            for (int k = 0; k < 3; ++k) {
                CHECK(tri[k] < dmesh[1]);
                const float* v = &dm->verts[(dmesh[0] + tri[k]) * 3];
                CHECK(poly_contains_xz(pm, p, v[0], v[2]));
                for (int c = 0; c < 3; ++c)
                    centroid[c] += v[c] / 3.0f;
            }
            /* Heights vs the nearest voxel floor in the same cell: the vertices are surface samples and
             * lie within sample error + one cell height of it; between samples (stairs) the interpolated
             * surface may stray further, but never by more than a step the agent can climb. */
            const float vtol = r->config.detail_sample_max_error + r->config.cell_height + 1e-3f;
            for (int k = 0; k < 4; ++k) {
                const float* q = k < 3 ? &dm->verts[(dmesh[0] + tri[k]) * 3] : centroid;
                const float off = floor_offset(chf, q);
                if (off == 1e30f)
                    continue; /* no open span in that cell (a vertex exactly on an eroded rim) */
                const float tol = k < 3 ? vtol : r->config.agent_max_climb;
                if (!(fabsf(off) <= tol)) {
                    fprintf(stderr, "  poly %d tri %u %s (%.2f %.2f %.2f) is %.3f off the voxel floor\n", p, t,
                            k < 3 ? "vertex" : "centroid", q[0], q[1], q[2], off);
                    CHECK(fabsf(off) <= tol);
                }
            }
        }
    }
    if (nbt_failed_checks_ != failed_before)
        fprintf(stderr, "  (invariants failed on %s)\n", what);
}

/* ---- analytic cases ---- */

static void test_flat_square(void)
{
    mesh_builder m = { .nv = 0 };
    add_quad(&m, 0, 0, 9, 9, 0, 0);
    nb_bake_result r;
    CHECK_INT(bake(&m, NULL, &r), NB_OK);
    CHECK_INT(r.stats[NB_STAT_REGIONS], 2); /* one region: ids 0 (none) and 1, as the reference counts */
    CHECK_INT(r.stats[NB_STAT_CONTOURS], 1);
    CHECK_INT(r.stats[NB_STAT_POLYS], 1);
    CHECK_INT(poly_nverts(r.poly_mesh, 0), 4);
    /* 30x30 cells minus an eroded ring of 2 (plus the ledge at the grid edge): a 26x26-cell square */
    CHECK_NEAR(total_poly_area(r.poly_mesh), walkable_cells(r.compact) * 0.09, 0.09);
    check_invariants(&r, "flat square");
    nb_bake_result_release(ctx, &r);
}

static void test_l_shape_tiles_exactly(void)
{
    mesh_builder m = { .nv = 0 };
    add_quad(&m, 0, 0, 12, 4, 0, 0);
    add_quad(&m, 0, 4, 4, 12, 0, 0);
    for (int p = 1; p <= 3; ++p) {
        nb_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.partition = (nb_partition)p;
        nb_bake_result r;
        CHECK_INT(bake(&m, &cfg, &r), NB_OK);
        CHECK(r.stats[NB_STAT_POLYS] >= 2);
        CHECK_NEAR(total_poly_area(r.poly_mesh), walkable_cells(r.compact) * 0.09, 0.09);
        check_invariants(&r, "L shape");
        nb_bake_result_release(ctx, &r);
    }
}

static void test_pillar_leaves_a_hole(void)
{
    mesh_builder m = { .nv = 0 };
    add_quad(&m, 0, 0, 12, 12, 0, 0);
    add_box(&m, 5, 0, 5, 7, 4, 7);
    nb_bake_result r;
    CHECK_INT(bake(&m, NULL, &r), NB_OK);
    const nb_poly_mesh* pm = r.poly_mesh;
    CHECK(pm->npolys >= 4);
    for (int p = 0; p < pm->npolys; ++p)
        CHECK(!poly_contains_xz(pm, p, 6.0f, 6.0f)); /* nothing over the pillar */
    CHECK(find_poly(pm, 2.0f, 0.0f, 6.0f) >= 0);      /* ...but floor all around it */
    CHECK(find_poly(pm, 10.0f, 0.0f, 6.0f) >= 0);
    CHECK(find_poly(pm, 6.0f, 0.0f, 2.0f) >= 0);
    CHECK(find_poly(pm, 6.0f, 0.0f, 10.0f) >= 0);
    check_invariants(&r, "pillar");
    nb_bake_result_release(ctx, &r);
}

static void test_ramp_connects_two_floors(void)
{
    mesh_builder m = { .nv = 0 };
    add_quad(&m, 0, 0, 10, 8, 0, 0);
    add_quad(&m, 10, 0, 16, 8, 0, 3); /* 26.6 degrees */
    add_quad(&m, 16, 0, 26, 8, 3, 3);
    for (int part = 1; part <= 3; ++part) {
        nb_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.partition = (nb_partition)part;
        nb_bake_result r;
        CHECK_INT(bake(&m, &cfg, &r), NB_OK);
        const nb_poly_mesh* pm = r.poly_mesh;
        const int a = find_poly(pm, 5, 0, 4), b = find_poly(pm, 21, 3, 4);
        CHECK(a >= 0 && b >= 0);
        /* breadth-first over polygon adjacency from a must reach b */
        int queue[1024], seen[1024] = { 0 }, head = 0, tail = 0, reached = 0;
        if (a >= 0 && pm->npolys <= 1024) {
            queue[tail++] = a;
            seen[a] = 1;
            while (head < tail) {
                const int p = queue[head++];
                reached |= p == b;
                for (int j = 0; j < pm->nvp; ++j) {
                    const uint16_t nb = pm->polys[p * 2 * pm->nvp + pm->nvp + j];
                    if (nb != NB_MESH_NULL_IDX && !(nb & 0x8000) && !seen[nb]) {
                        seen[nb] = 1;
                        queue[tail++] = nb;
                    }
                }
            }
        }
        CHECK(reached);
        check_invariants(&r, "ramp");
        nb_bake_result_release(ctx, &r);
    }
}

/* ---- the standard levels ---- */

/* The counts of recastnavigation's own bake (REFERENCE.md): the same voxels, regions and convex polygons, so
 * they must match exactly. (Its contour count for the layer partition is its own way of counting, and its detail
 * triangles differ by a few percent: neither is compared.) */
static void check_count(double got, double want, const char* what, const char* level, int partition)
{
    const int ok = got == want;
    if (!ok)
        fprintf(stderr, "  %s %s partition %d: %.0f vs reference %.0f\n", level, what, partition, got, want);
    CHECK(ok);
}

static void test_levels_against_reference(void)
{
    static const struct {
        const char* mesh;
        double regions[3], polys[3], poly_verts[3];
    } ref[] = { { "dungeon.obj", { 16, 17, 5 }, { 118, 100, 97 }, { 223, 210, 203 } },
                { "nav_test.obj", { 48, 50, 19 }, { 155, 186, 150 }, { 349, 341, 310 } } };
    for (int l = 0; l < 2; ++l) {
        char path[512], err[512];
        nb_obj obj;
        if (nb_obj_load(nbt_mesh_path(ref[l].mesh, path, sizeof(path)), &obj, err, sizeof(err)) != 0) {
            fprintf(stderr, "  %s\n", err);
            CHECK(!"mesh missing");
            continue;
        }
        for (int part = 1; part <= 3; ++part) {
            nb_config cfg;
            memset(&cfg, 0, sizeof(cfg));
            cfg.partition = (nb_partition)part;
            nb_bake_input in;
            memset(&in, 0, sizeof(in));
            in.mesh.positions = obj.positions;
            in.mesh.vertex_count = obj.vertex_count;
            in.mesh.indices = obj.indices;
            in.mesh.triangle_count = obj.triangle_count;
            nb_bake_result r;
            CHECK_INT(nb_bake(ctx, &in, &cfg, NB_STAGE_ALL, NB_KEEP_COMPACT, &r), NB_OK);
            check_count(r.stats[NB_STAT_REGIONS], ref[l].regions[part - 1], "regions", ref[l].mesh, part);
            check_count(r.stats[NB_STAT_POLYS], ref[l].polys[part - 1], "polys", ref[l].mesh, part);
            check_count(r.stats[NB_STAT_POLY_VERTS], ref[l].poly_verts[part - 1], "poly verts", ref[l].mesh, part);
            check_invariants(&r, ref[l].mesh);
            nb_bake_result_release(ctx, &r);
        }
        nb_obj_free(&obj);
    }
}

static void test_out_of_memory_whole_pipeline(void)
{
    mesh_builder m = { .nv = 0 };
    add_quad(&m, 0, 0, 8, 8, 0, 0);
    add_box(&m, 3, 0, 3, 4, 3, 4);
    int failures = 0;
    for (long fail = 2; fail < 2000; ++fail) {
        nbt_alloc a = { .fail_at = fail };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        nb_context* c = nb_context_create(&d);
        nb_bake_input in;
        memset(&in, 0, sizeof(in));
        in.mesh.positions = m.v;
        in.mesh.vertex_count = m.nv;
        in.mesh.indices = m.t;
        in.mesh.triangle_count = m.nt;
        nb_bake_result r;
        const nb_status st = nb_bake(c, &in, NULL, NB_STAGE_ALL, NB_KEEP_ALL, &r);
        nb_bake_result_release(c, &r);
        CHECK_INT(a.live, 1);
        nb_context_destroy(c);
        if (st == NB_OK)
            break;
        CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
        ++failures;
    }
    CHECK(failures > 10);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_flat_square);
    RUN(test_l_shape_tiles_exactly);
    RUN(test_pillar_leaves_a_hole);
    RUN(test_ramp_connects_two_floors);
    RUN(test_levels_against_reference);
    RUN(test_out_of_memory_whole_pipeline);
    nb_context_destroy(ctx);
    return nbt_finish("test_pipeline");
}
