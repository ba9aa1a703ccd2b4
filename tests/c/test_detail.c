/* Detail height mesh: coverage, heights, winding, outline flags, Delaunay quality, storeys, seams, errors. */
#include "navbake.h"
#include "nbtest.h"
#include "obj.h"
/* The test link line names c/tools/obj.c only; the terrain generator comes in with this file. */
#include "terrain.h"

static nb_context* ctx;

/* ---- hand-built polygon meshes (the polygon stage may not exist yet) ---------------------------------------- */

static nb_poly_mesh* mesh_new(const nb_compact_heightfield* chf, int nvp, int max_verts, int max_polys)
{
    nb_poly_mesh* m = (nb_poly_mesh*)calloc(1, sizeof(*m));
    m->verts = (uint16_t*)calloc((size_t)max_verts * 3, sizeof(uint16_t));
    m->polys = (uint16_t*)malloc((size_t)max_polys * 2 * nvp * sizeof(uint16_t));
    memset(m->polys, 0xff, (size_t)max_polys * 2 * nvp * sizeof(uint16_t));
    m->regs = (uint16_t*)calloc((size_t)max_polys, sizeof(uint16_t));
    m->flags = (uint16_t*)calloc((size_t)max_polys, sizeof(uint16_t));
    m->areas = (uint8_t*)calloc((size_t)max_polys, 1);
    m->max_polys = max_polys;
    m->nvp = nvp;
    memcpy(m->bmin, chf->bmin, sizeof(m->bmin));
    memcpy(m->bmax, chf->bmax, sizeof(m->bmax));
    m->cell_size = chf->cell_size;
    m->cell_height = chf->cell_height;
    m->max_edge_error = 1.3f;
    return m;
}

static void mesh_free(nb_poly_mesh* m)
{
    free(m->verts);
    free(m->polys);
    free(m->regs);
    free(m->flags);
    free(m->areas);
    free(m);
}

static int mesh_vert(nb_poly_mesh* m, int x, int y, int z)
{
    for (int i = 0; i < m->nverts; ++i)
        if (m->verts[i * 3] == x && m->verts[i * 3 + 1] == y && m->verts[i * 3 + 2] == z)
            return i;
    m->verts[m->nverts * 3 + 0] = (uint16_t)x;
    m->verts[m->nverts * 3 + 1] = (uint16_t)y;
    m->verts[m->nverts * 3 + 2] = (uint16_t)z;
    return m->nverts++;
}

/* The floor at a cell corner the way outlines take it: the highest floor of region reg (0 = any) among the four
 * cells around the corner. */
static int corner_floor(const nb_compact_heightfield* chf, int x, int z, uint16_t reg)
{
    int best = -1;
    for (int dz = -1; dz <= 0; ++dz)
        for (int dx = -1; dx <= 0; ++dx) {
            const int cx = x + dx, cz = z + dz;
            if (cx < 0 || cz < 0 || cx >= chf->width || cz >= chf->height)
                continue;
            const nb_compact_cell c = chf->cells[cx + cz * chf->width];
            for (uint32_t i = c.index; i < c.index + c.count; ++i)
                if ((reg == 0 || chf->spans[i].reg == reg) && chf->spans[i].y > best)
                    best = chf->spans[i].y;
        }
    return best < 0 ? 0 : best;
}

/* Adds a polygon through the cell corners xz[] (n pairs), heights from the floors of region reg. */
static void mesh_poly(nb_poly_mesh* m, const nb_compact_heightfield* chf, const int* xz, int n, uint16_t reg)
{
    uint16_t* p = &m->polys[(size_t)m->npolys * 2 * m->nvp];
    for (int i = 0; i < n; ++i)
        p[i] = (uint16_t)mesh_vert(m, xz[i * 2], corner_floor(chf, xz[i * 2], xz[i * 2 + 1], reg), xz[i * 2 + 1]);
    m->regs[m->npolys] = reg;
    m->areas[m->npolys] = NB_WALKABLE_AREA;
    m->flags[m->npolys] = 1;
    m->npolys++;
}

static int poly_nverts(const nb_poly_mesh* m, int i)
{
    const uint16_t* p = &m->polys[(size_t)i * 2 * m->nvp];
    int n = 0;
    while (n < m->nvp && p[n] != NB_MESH_NULL_IDX)
        ++n;
    return n;
}

/* Polygon i's vertices in world units. */
static int poly_world(const nb_poly_mesh* m, int i, float* out)
{
    const uint16_t* p = &m->polys[(size_t)i * 2 * m->nvp];
    const int n = poly_nverts(m, i);
    for (int j = 0; j < n; ++j) {
        out[j * 3 + 0] = m->bmin[0] + m->verts[p[j] * 3 + 0] * m->cell_size;
        out[j * 3 + 1] = m->bmin[1] + m->verts[p[j] * 3 + 1] * m->cell_height;
        out[j * 3 + 2] = m->bmin[2] + m->verts[p[j] * 3 + 2] * m->cell_size;
    }
    return n;
}

/* ---- geometry ---------------------------------------------------------------------------------------------- */

static double area2(const float* a, const float* b, const float* c)
{
    return ((double)b[0] - a[0]) * ((double)c[2] - a[2]) - ((double)b[2] - a[2]) * ((double)c[0] - a[0]);
}

static double poly_area2(const float* v, int n)
{
    double s = 0;
    for (int i = 1; i + 1 < n; ++i)
        s += area2(&v[0], &v[i * 3], &v[(i + 1) * 3]);
    return s;
}

static double dist_pt_seg_xz(const float* p, const float* a, const float* b)
{
    const double abx = b[0] - a[0], abz = b[2] - a[2], apx = p[0] - a[0], apz = p[2] - a[2];
    const double d = abx * abx + abz * abz;
    double t = d > 0 ? (abx * apx + abz * apz) / d : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    const double ex = a[0] + t * abx - p[0], ez = a[2] + t * abz - p[2];
    return sqrt(ex * ex + ez * ez);
}

/* Signed distance from p to the polygon outline: negative inside (the polygon is convex; any winding). */
static double signed_dist_poly(const float* poly, int n, const float* p)
{
    const double s = poly_area2(poly, n) > 0 ? 1 : -1;
    int inside = 1;
    double dmin = 1e30;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        if (s * area2(&poly[j * 3], &poly[i * 3], p) < 0)
            inside = 0;
        const double d = dist_pt_seg_xz(p, &poly[j * 3], &poly[i * 3]);
        dmin = d < dmin ? d : dmin;
    }
    return inside ? -dmin : dmin;
}

/* Height of the detail surface of mesh i at (x, z), via the detail triangle holding it; 0 when none does. */
static int detail_height(const nb_poly_mesh_detail* dm, int i, float x, float z, float* y)
{
    const uint32_t* m = &dm->meshes[i * 4];
    const float p[3] = { x, 0, z };
    for (uint32_t t = 0; t < m[3]; ++t) {
        const uint8_t* tri = &dm->tris[(m[2] + t) * 4];
        const float* a = &dm->verts[(m[0] + tri[0]) * 3];
        const float* b = &dm->verts[(m[0] + tri[1]) * 3];
        const float* c = &dm->verts[(m[0] + tri[2]) * 3];
        const double ar = area2(a, b, c);
        if (ar == 0)
            continue;
        const double l0 = area2(b, c, p) / ar, l1 = area2(c, a, p) / ar, l2 = area2(a, b, p) / ar;
        if (l0 >= -1e-5 && l1 >= -1e-5 && l2 >= -1e-5) {
            *y = (float)(l0 * a[1] + l1 * b[1] + l2 * c[1]);
            return 1;
        }
    }
    return 0;
}

/* World height of the floor of region reg (0 = the only/lowest span) in the cell under (x, z); 0 when none. */
static int floor_under(const nb_compact_heightfield* chf, float x, float z, uint16_t reg, float* y)
{
    const int cx = (int)floorf((x - chf->bmin[0]) / chf->cell_size);
    const int cz = (int)floorf((z - chf->bmin[2]) / chf->cell_size);
    if (cx < 0 || cz < 0 || cx >= chf->width || cz >= chf->height)
        return 0;
    const nb_compact_cell c = chf->cells[cx + cz * chf->width];
    for (uint32_t k = c.index; k < c.index + c.count; ++k)
        if (reg == 0 || chf->spans[k].reg == reg) {
            *y = chf->bmin[1] + chf->spans[k].y * chf->cell_height;
            return 1;
        }
    return 0;
}

/* ---- invariants every detail mesh must hold ------------------------------------------------------------------ */

typedef struct inv_stats {
    int interior_verts;     /* vertices strictly inside their polygon */
    int delaunay_edges;     /* interior edges checked for the empty-circle property */
    int polys_with_interior;
} inv_stats;

/* Checks, for each polygon: the submesh ranges tile the arrays; the first vertices are the polygon's; every
 * vertex lies in the polygon's footprint; triangles are non-degenerate, wound like the polygon and cover exactly
 * its area; the triangle count matches the vertex counts (n_outline - 2 + 2 n_inside); outline flags are set
 * exactly on edges along the outline; and, where interior vertices were added, interior edges are Delaunay. */
static void check_invariants(const nb_poly_mesh* pm, const nb_poly_mesh_detail* dm, inv_stats* st)
{
    memset(st, 0, sizeof(*st));
    CHECK_INT(dm->nmeshes, pm->npolys);
    uint32_t vnext = 0, tnext = 0;
    for (int i = 0; i < pm->npolys; ++i) {
        const uint32_t* m = &dm->meshes[i * 4];
        CHECK_INT(m[0], vnext);
        CHECK_INT(m[2], tnext);
        vnext += m[1];
        tnext += m[3];
        float poly[NB_MAX_VERTS_PER_POLY * 3];
        const int n = poly_world(pm, i, poly);
        const double parea = poly_area2(poly, n);
        CHECK(m[1] >= (uint32_t)n);
        CHECK(m[1] <= 255);
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < 3; ++k)
                CHECK_NEAR(dm->verts[(m[0] + j) * 3 + k], poly[j * 3 + k], 1e-4);
        int outline = 0, inside = 0;
        for (uint32_t j = 0; j < m[1]; ++j) {
            const float* v = &dm->verts[(m[0] + j) * 3];
            const double d = signed_dist_poly(poly, n, v);
            CHECK(d <= 1e-3);
            if (d < -1e-3)
                ++inside;
            else
                ++outline;
        }
        st->interior_verts += inside;
        st->polys_with_interior += inside > 0;
        CHECK_INT(m[3], outline - 2 + 2 * inside);
        double sum = 0;
        for (uint32_t t = 0; t < m[3]; ++t) {
            const uint8_t* tri = &dm->tris[(m[2] + t) * 4];
            const float* v[3];
            for (int k = 0; k < 3; ++k) {
                CHECK(tri[k] < m[1]);
                v[k] = &dm->verts[(m[0] + (tri[k] < m[1] ? tri[k] : 0)) * 3];
            }
            const double a = area2(v[0], v[1], v[2]);
            CHECK(a * parea > 0);           /* wound like the polygon */
            CHECK(fabs(a) > 1e-4 * fabs(parea) || fabs(a) > 1e-3); /* not degenerate */
            sum += a;
            CHECK((tri[3] & ~0x15) == 0);
            for (int e = 0; e < 3; ++e) {
                const float* p = v[e];
                const float* q = v[(e + 1) % 3];
                int on_outline = 0;
                for (int k = 0, l = n - 1; k < n; l = k++)
                    if (dist_pt_seg_xz(p, &poly[l * 3], &poly[k * 3]) < 1e-3 &&
                        dist_pt_seg_xz(q, &poly[l * 3], &poly[k * 3]) < 1e-3)
                        on_outline = 1;
                CHECK_INT((tri[3] >> (e * 2)) & 3, on_outline);
            }
        }
        CHECK_NEAR(sum, parea, 1e-3 * fabs(parea) + 1e-4);
        if (inside == 0)
            continue; /* the outline-only triangulation favours short edges over Delaunay, like the reference */
        for (uint32_t t = 0; t < m[3]; ++t) {
            const uint8_t* tri = &dm->tris[(m[2] + t) * 4];
            for (int e = 0; e < 3; ++e) {
                if ((tri[3] >> (e * 2)) & 1)
                    continue;
                const int a = tri[e], b = tri[(e + 1) % 3], c = tri[(e + 2) % 3];
                for (uint32_t u = 0; u < m[3]; ++u) {
                    const uint8_t* ot = &dm->tris[(m[2] + u) * 4];
                    for (int f = 0; f < 3; ++f) {
                        if (ot[f] != b || ot[(f + 1) % 3] != a)
                            continue;
                        /* d = the vertex across edge a-b must not be inside the circumcircle of (a, b, c) */
                        const float* A = &dm->verts[(m[0] + a) * 3];
                        const float* B = &dm->verts[(m[0] + b) * 3];
                        const float* C = &dm->verts[(m[0] + c) * 3];
                        const float* D = &dm->verts[(m[0] + ot[(f + 2) % 3]) * 3];
                        const double adx = A[0] - D[0], adz = A[2] - D[2], bdx = B[0] - D[0], bdz = B[2] - D[2];
                        const double cdx = C[0] - D[0], cdz = C[2] - D[2];
                        const double ad = adx * adx + adz * adz, bd = bdx * bdx + bdz * bdz, cd = cdx * cdx + cdz * cdz;
                        const double det = ad * (bdx * cdz - cdx * bdz) + bd * (cdx * adz - adx * cdz) +
                                           cd * (adx * bdz - bdx * adz);
                        const double sgn = area2(A, B, C) > 0 ? 1 : -1;
                        const double scale = ad > bd ? (ad > cd ? ad : cd) : (bd > cd ? bd : cd);
                        CHECK(sgn * det <= 1e-6 * scale * scale);
                        st->delaunay_edges++;
                    }
                }
            }
        }
    }
    CHECK_INT(dm->nverts, vnext);
    CHECK_INT(dm->ntris, tnext);
}

/* ---- fixtures -------------------------------------------------------------------------------------------------- */

/* A flat n x n floor at `floor` cells (cells 0.3 x 0.2), every span in region 1. */
static nb_compact_heightfield* flat_chf(int n, int floor)
{
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { (float)n * 0.3f, 20.0f, (float)n * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(ctx, n, n, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    for (int z = 0; z < n; ++z)
        for (int x = 0; x < n; ++x)
            nb_heightfield_add_span(ctx, hf, x, z, 0, (uint32_t)floor, NB_WALKABLE_AREA, 0);
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
    nb_heightfield_destroy(ctx, hf);
    for (uint32_t i = 0; i < chf->span_count; ++i)
        chf->spans[i].reg = 1;
    return chf;
}

/* Bakes a mesh up to the area stage with the default config and gives every walkable span region 1. */
static void bake_areas(const float* pos, uint32_t nverts, const uint32_t* idx, uint32_t ntris, nb_bake_result* r)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = pos;
    in.mesh.vertex_count = nverts;
    in.mesh.indices = idx;
    in.mesh.triangle_count = ntris;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_AREAS, NB_KEEP_ALL, r), NB_OK);
    for (uint32_t i = 0; r->compact && i < r->compact->span_count; ++i)
        r->compact->spans[i].reg = 1;
}

/* ---- tests ------------------------------------------------------------------------------------------------------ */

static void test_flat_square(void)
{
    nb_compact_heightfield* chf = flat_chf(24, 5);
    nb_poly_mesh* pm = mesh_new(chf, 6, 8, 2);
    const int sq[] = { 2, 2, 2, 20, 20, 20, 20, 2 };
    mesh_poly(pm, chf, sq, 4, 1);
    for (int pass = 0; pass < 2; ++pass) {
        const float sd = pass == 0 ? 1.8f : 0.0f;
        nb_poly_mesh_detail* dm = NULL;
        CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, chf, sd, 0.2f, &dm), NB_OK);
        if (!dm)
            continue;
        inv_stats st;
        check_invariants(pm, dm, &st);
        CHECK_INT(dm->nmeshes, 1);
        double sum = 0;
        for (int t = 0; t < dm->ntris; ++t) {
            const uint8_t* tri = &dm->tris[t * 4];
            sum += area2(&dm->verts[tri[0] * 3], &dm->verts[tri[1] * 3], &dm->verts[tri[2] * 3]);
        }
        CHECK_NEAR(fabs(sum) / 2, 5.4 * 5.4, 1e-3); /* 18 x 18 cells of 0.3 */
        for (int v = 0; v < dm->nverts; ++v)
            CHECK_NEAR(dm->verts[v * 3 + 1], 5 * 0.2, 1e-5); /* exactly on the floor */
        CHECK_INT(st.interior_verts, 0);                     /* a flat floor needs no interior samples */
        if (pass == 0) {
            /* edges are sampled but flat edge samples are all dropped again */
            CHECK_INT(dm->nverts, 4);
            CHECK_INT(dm->ntris, 2);
        } else {
            CHECK_INT(dm->nverts, 4);
            CHECK_INT(dm->ntris, 2);
        }
        nb_poly_mesh_detail_destroy(ctx, dm);
    }
    mesh_free(pm);
    nb_compact_heightfield_destroy(ctx, chf);
}

static void test_sloped_plane(void)
{
    /* y = 0.15 x + 0.05 z over [0, 12]^2: about 9 degrees */
    const float pos[] = { 0, 0, 0, 12, 1.8f, 0, 12, 2.4f, 12, 0, 0.6f, 12 };
    const uint32_t idx[] = { 0, 3, 1, 1, 3, 2 };
    nb_bake_result r;
    bake_areas(pos, 4, idx, 2, &r);
    const nb_compact_heightfield* chf = r.compact;
    if (!chf)
        return;
    nb_poly_mesh* pm = mesh_new(chf, 6, 16, 4);
    const int hexa[] = { 5, 12, 10, 4, 24, 3, 34, 14, 30, 30, 12, 34 };
    const int tri[] = { 5, 12, 12, 34, 4, 30 };
    mesh_poly(pm, chf, hexa, 6, 1);
    mesh_poly(pm, chf, tri, 3, 1);
    const float max_error = 0.2f;
    nb_poly_mesh_detail* dm = NULL;
    CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, chf, 1.8f, max_error, &dm), NB_OK);
    if (dm) {
        inv_stats st;
        check_invariants(pm, dm, &st);
        const float tol = max_error + chf->cell_height;
        for (int v = 0; v < dm->nverts; ++v) {
            const float* p = &dm->verts[v * 3];
            const float plane = 0.15f * p[0] + 0.05f * p[2];
            CHECK(p[1] - chf->bmin[1] >= plane - 1e-3f - 1e-4f);
            CHECK_NEAR(p[1] - chf->bmin[1], plane, tol);
        }
        /* a plane needs no interior samples: the corners already carry it within the error */
        CHECK_INT(st.interior_verts, 0);
        nb_poly_mesh_detail_destroy(ctx, dm);
    }
    mesh_free(pm);
    nb_bake_result_release(ctx, &r);
}

/* A 60 x 60-cell rolling terrain, covered by 16-cell squares (some cut into triangles). */
static void terrain_fixture(nb_obj* obj, nb_bake_result* r, nb_poly_mesh** pm)
{
    CHECK_INT(nb_terrain_generate(60, 60, 0.3f, 7, obj), 0);
    bake_areas(obj->positions, obj->vertex_count, obj->indices, obj->triangle_count, r);
    *pm = NULL;
    if (!r->compact)
        return;
    nb_poly_mesh* m = mesh_new(r->compact, 6, 64, 32);
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            const int x0 = 4 + 16 * i, z0 = 4 + 16 * j, x1 = x0 + 16, z1 = z0 + 16;
            if ((i + j) % 3 == 1) {
                const int t0[] = { x0, z0, x0, z1, x1, z1 }, t1[] = { x0, z0, x1, z1, x1, z0 };
                mesh_poly(m, r->compact, t0, 3, 1);
                mesh_poly(m, r->compact, t1, 3, 1);
            } else {
                const int q[] = { x0, z0, x0, z1, x1, z1, x1, z0 };
                mesh_poly(m, r->compact, q, 4, 1);
            }
        }
    *pm = m;
}

static void test_terrain_surface(void)
{
    nb_obj obj;
    nb_bake_result r;
    nb_poly_mesh* pm;
    terrain_fixture(&obj, &r, &pm);
    const nb_compact_heightfield* chf = r.compact;
    if (!pm) {
        nb_obj_free(&obj);
        nb_bake_result_release(ctx, &r);
        return;
    }
    /* the default settings, then a finer grid with a tighter error: more vertices, same guarantees */
    const float settings[2][2] = { { 1.8f, 0.2f }, { 0.9f, 0.05f } };
    int nverts[2] = { 0, 0 }, interior[2] = { 0, 0 }, delaunay = 0, checked = 0;
    for (int k = 0; k < 2; ++k) {
        const float sd = settings[k][0], max_error = settings[k][1];
        nb_poly_mesh_detail* dm = NULL;
        CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, chf, sd, max_error, &dm), NB_OK);
        if (!dm)
            continue;
        inv_stats st;
        check_invariants(pm, dm, &st);
        nverts[k] = dm->nverts;
        interior[k] = st.interior_verts;
        delaunay += st.delaunay_edges;
        /* At the interior sample grid points the surface is within the error (+ a cell of voxel rounding). */
        const float tol = max_error + chf->cell_height;
        for (int i = 0; i < pm->npolys; ++i) {
            float poly[NB_MAX_VERTS_PER_POLY * 3];
            const int n = poly_world(pm, i, poly);
            for (int gz = 0; gz * sd < 20; ++gz)
                for (int gx = 0; gx * sd < 20; ++gx) {
                    const float p[3] = { chf->bmin[0] + gx * sd, 0, chf->bmin[2] + gz * sd };
                    const double d = signed_dist_poly(poly, n, p);
                    if (!(d < 0 && d * d >= sd * 0.5))
                        continue; /* only where the stage places interior samples */
                    float y = 0, floor_y;
                    if (!floor_under(chf, p[0] + 1e-3f, p[2] + 1e-3f, 0, &floor_y))
                        continue; /* a steep cell has no walkable floor */
                    CHECK(detail_height(dm, i, p[0], p[2], &y));
                    CHECK_NEAR(y, floor_y, tol);
                    ++checked;
                }
        }
        nb_poly_mesh_detail_destroy(ctx, dm);
    }
    CHECK(interior[0] > 0);  /* the hills need interior samples */
    CHECK(interior[1] > 20);
    CHECK(nverts[1] > nverts[0]);
    CHECK(delaunay > 50);
    CHECK(checked > 100);

    /* sample_dist 0: the polygons themselves, fanned */
    nb_poly_mesh_detail* dm = NULL;
    CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, chf, 0.0f, 0.2f, &dm), NB_OK);
    if (dm) {
        int tris = 0, verts = 0;
        for (int i = 0; i < pm->npolys; ++i) {
            tris += poly_nverts(pm, i) - 2;
            verts += poly_nverts(pm, i);
        }
        CHECK_INT(dm->ntris, tris);
        CHECK_INT(dm->nverts, verts);
        inv_stats st;
        check_invariants(pm, dm, &st);
        nb_poly_mesh_detail_destroy(ctx, dm);
    }
    mesh_free(pm);
    nb_obj_free(&obj);
    nb_bake_result_release(ctx, &r);
}

static void test_shared_edges_match(void)
{
    /* Two polygons beside an edge sample it identically: the detail vertices on the edge are the same. */
    nb_obj obj;
    nb_bake_result r;
    nb_poly_mesh* pm;
    terrain_fixture(&obj, &r, &pm);
    if (pm) {
        nb_poly_mesh_detail* dm = NULL;
        CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, r.compact, 1.8f, 0.05f, &dm), NB_OK);
        int shared_checked = 0;
        for (int a = 0; dm && a < pm->npolys; ++a) {
            const uint16_t* pa = &pm->polys[(size_t)a * 2 * pm->nvp];
            const int na = poly_nverts(pm, a);
            for (int b = a + 1; b < pm->npolys; ++b) {
                const uint16_t* pb = &pm->polys[(size_t)b * 2 * pm->nvp];
                const int nb = poly_nverts(pm, b);
                for (int i = 0, j = na - 1; i < na; j = i++)
                    for (int k = 0, l = nb - 1; k < nb; l = k++) {
                        if (!(pa[j] == pb[k] && pa[i] == pb[l]))
                            continue;
                        /* edge pa[j] -> pa[i] is shared: collect each side's detail vertices along it */
                        float e0[3], e1[3];
                        for (int c = 0; c < 3; ++c) {
                            e0[c] = dm->verts[(dm->meshes[a * 4] + (uint32_t)j) * 3 + c];
                            e1[c] = dm->verts[(dm->meshes[a * 4] + (uint32_t)i) * 3 + c];
                        }
                        int count[2] = { 0, 0 };
                        float ys[2][64];
                        float ts[2][64];
                        for (int side = 0; side < 2; ++side) {
                            const uint32_t* m = &dm->meshes[(side ? b : a) * 4];
                            for (uint32_t v = 0; v < m[1]; ++v) {
                                const float* p = &dm->verts[(m[0] + v) * 3];
                                if (dist_pt_seg_xz(p, e0, e1) > 1e-4 || count[side] >= 64)
                                    continue;
                                const float len = hypotf(e1[0] - e0[0], e1[2] - e0[2]);
                                ts[side][count[side]] = hypotf(p[0] - e0[0], p[2] - e0[2]) / len;
                                ys[side][count[side]++] = p[1];
                            }
                        }
                        CHECK_INT(count[0], count[1]);
                        for (int u = 0; u < count[0]; ++u) {
                            int found = 0;
                            for (int v = 0; v < count[1]; ++v)
                                if (fabsf(ts[0][u] - ts[1][v]) < 1e-4f && fabsf(ys[0][u] - ys[1][v]) < 1e-4f)
                                    found = 1;
                            CHECK(found);
                        }
                        shared_checked += count[0] > 2;
                    }
            }
        }
        CHECK(shared_checked > 0); /* some shared edge got samples of its own */
        nb_poly_mesh_detail_destroy(ctx, dm);
        mesh_free(pm);
    }
    nb_obj_free(&obj);
    nb_bake_result_release(ctx, &r);
}

static void test_winding_either_way(void)
{
    /* The same polygon listed clockwise or counter-clockwise gives mirror-equivalent results. */
    nb_obj obj;
    nb_bake_result r;
    nb_poly_mesh* pm;
    terrain_fixture(&obj, &r, &pm);
    if (pm) {
        nb_poly_mesh* rev = mesh_new(r.compact, 6, 64, 32);
        for (int i = 0; i < pm->npolys; ++i) {
            const uint16_t* p = &pm->polys[(size_t)i * 2 * pm->nvp];
            const int n = poly_nverts(pm, i);
            int xz[2 * NB_MAX_VERTS_PER_POLY];
            for (int j = 0; j < n; ++j) {
                xz[j * 2] = pm->verts[p[n - 1 - j] * 3];
                xz[j * 2 + 1] = pm->verts[p[n - 1 - j] * 3 + 2];
            }
            mesh_poly(rev, r.compact, xz, n, 1);
        }
        nb_poly_mesh_detail *a = NULL, *b = NULL;
        CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, r.compact, 1.8f, 0.2f, &a), NB_OK);
        CHECK_INT(nb_build_poly_mesh_detail(ctx, rev, r.compact, 1.8f, 0.2f, &b), NB_OK);
        if (a && b) {
            inv_stats sa, sb;
            check_invariants(pm, a, &sa);
            check_invariants(rev, b, &sb);
            /* Edges are walked in a fixed direction either way, so the outlines get the same vertices; interior
             * choices may differ a little (the first triangulation starts from a different ear). */
            int outline_a = a->nverts - sa.interior_verts, outline_b = b->nverts - sb.interior_verts;
            CHECK_INT(outline_a, outline_b);
            CHECK(sa.interior_verts > 0 && sb.interior_verts > 0);
        }
        nb_poly_mesh_detail_destroy(ctx, a);
        nb_poly_mesh_detail_destroy(ctx, b);
        mesh_free(rev);
        mesh_free(pm);
    }
    nb_obj_free(&obj);
    nb_bake_result_release(ctx, &r);
}

static void test_storeys_do_not_bleed(void)
{
    /* A ground floor (y 5 cells, region 1) under a bridge (y 30 cells, region 2) over x in [8, 16). Polygons of
     * either storey over the same columns must take only their own floor: all their detail vertices (corners,
     * edge samples and interior samples alike) lie on it. */
    const int n = 24;
    const float bmin[3] = { 0, 0, 0 };
    const float bmax[3] = { n * 0.3f, 20.0f, n * 0.3f };
    nb_heightfield* hf = NULL;
    CHECK_INT(nb_heightfield_create(ctx, n, n, bmin, bmax, 0.3f, 0.2f, &hf), NB_OK);
    for (int z = 0; z < n; ++z)
        for (int x = 0; x < n; ++x) {
            nb_heightfield_add_span(ctx, hf, x, z, 0, 5, NB_WALKABLE_AREA, 0);
            if (x >= 8 && x < 16)
                nb_heightfield_add_span(ctx, hf, x, z, 28, 30, NB_WALKABLE_AREA, 0);
        }
    nb_compact_heightfield* chf = NULL;
    CHECK_INT(nb_compact_heightfield_build(ctx, 10, 4, hf, &chf), NB_OK);
    nb_heightfield_destroy(ctx, hf);
    if (!chf)
        return;
    for (int z = 0; z < n; ++z)
        for (int x = 0; x < n; ++x) {
            const nb_compact_cell c = chf->cells[x + z * n];
            for (uint32_t i = c.index; i < c.index + c.count; ++i)
                chf->spans[i].reg = chf->spans[i].y > 10 ? 2 : 1;
        }
    for (int unknown = 0; unknown < 2; ++unknown) {
        nb_poly_mesh* pm = mesh_new(chf, 6, 16, 4);
        const int ground[] = { 2, 2, 2, 22, 22, 22, 22, 2 };
        const int bridge[] = { 8, 1, 8, 23, 16, 23, 16, 1 };
        mesh_poly(pm, chf, ground, 4, 1);
        mesh_poly(pm, chf, bridge, 4, 2);
        if (unknown) /* no region: heights are found from the corners and the centre instead */
            pm->regs[0] = pm->regs[1] = 0;
        nb_poly_mesh_detail* dm = NULL;
        CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, chf, 0.9f, 0.1f, &dm), NB_OK);
        if (dm) {
            inv_stats st;
            check_invariants(pm, dm, &st);
            for (int i = 0; i < 2; ++i) {
                const uint32_t* m = &dm->meshes[i * 4];
                CHECK_INT(m[1], 4); /* a flat floor: edge samples that picked up the other storey would stay */
                for (uint32_t v = 0; v < m[1]; ++v)
                    CHECK_NEAR(dm->verts[(m[0] + v) * 3 + 1], (i == 0 ? 5 : 30) * 0.2f, 1e-4);
            }
            nb_poly_mesh_detail_destroy(ctx, dm);
        }
        mesh_free(pm);
    }
    nb_compact_heightfield_destroy(ctx, chf);
}

/* The whole pipeline: a real polygon mesh over a real compact heightfield (with regions). Checks the invariants,
 * the surface against each polygon's own floors, and the triangle count against the reference's. */
static void check_pipeline(const nb_obj* obj, const char* name, int ref_tris)
{
    nb_bake_input in = nb_obj_bake_input(obj);
    nb_bake_result r;
    CHECK_INT(nb_bake(ctx, &in, NULL, NB_STAGE_ALL, NB_KEEP_ALL, &r), NB_OK);
    const nb_poly_mesh* pm = r.poly_mesh;
    const nb_poly_mesh_detail* dm = r.detail;
    const nb_compact_heightfield* chf = r.compact;
    if (!pm || !dm || !chf) {
        nb_bake_result_release(ctx, &r);
        return;
    }
    inv_stats st;
    check_invariants(pm, dm, &st);
    CHECK(st.interior_verts > 0);
    CHECK(st.delaunay_edges > 0);
    CHECK_INT(r.stats[NB_STAT_DETAIL_TRIS], dm->ntris);
    if (ref_tris > 0) {
        /* same semantics as the reference: the count lands close to its count (upstream stages differ a little) */
        if (!(fabs((double)(dm->ntris - ref_tris)) <= 0.05 * ref_tris))
            fprintf(stderr, "  %s: %d detail triangles, reference %d\n", name, dm->ntris, ref_tris);
        CHECK(fabs((double)(dm->ntris - ref_tris)) <= 0.05 * ref_tris);
    }
    const float sd = r.config.detail_sample_dist, max_error = r.config.detail_sample_max_error;
    const float tol = max_error + chf->cell_height;
    int checked = 0, bad = 0;
    for (int i = 0; i < pm->npolys; ++i) {
        if (dm->meshes[i * 4 + 1] >= 127)
            continue; /* out of vertex budget: the error bound is not promised */
        float poly[NB_MAX_VERTS_PER_POLY * 3];
        const int n = poly_world(pm, i, poly);
        float lo[2] = { poly[0], poly[2] }, hi[2] = { poly[0], poly[2] };
        for (int j = 1; j < n; ++j) {
            lo[0] = fminf(lo[0], poly[j * 3]);
            hi[0] = fmaxf(hi[0], poly[j * 3]);
            lo[1] = fminf(lo[1], poly[j * 3 + 2]);
            hi[1] = fmaxf(hi[1], poly[j * 3 + 2]);
        }
        for (int gz = (int)floorf((lo[1] - pm->bmin[2]) / sd); gz * sd <= hi[1] - pm->bmin[2]; ++gz)
            for (int gx = (int)floorf((lo[0] - pm->bmin[0]) / sd); gx * sd <= hi[0] - pm->bmin[0]; ++gx) {
                const float p[3] = { pm->bmin[0] + gx * sd, 0, pm->bmin[2] + gz * sd };
                const double d = signed_dist_poly(poly, n, p);
                if (!(d < 0 && d * d >= sd * 0.5 + 0.05))
                    continue;
                float y = 0, floor_y;
                if (!floor_under(chf, p[0] + 1e-3f, p[2] + 1e-3f, pm->regs[i], &floor_y))
                    continue; /* the polygon's region does not reach this cell */
                CHECK(detail_height(dm, i, p[0], p[2], &y));
                bad += !(fabsf(y - floor_y) <= tol);
                ++checked;
            }
    }
    if (bad)
        fprintf(stderr, "  %s: %d of %d sample points off the floor by more than %g\n", name, bad, checked, tol);
    CHECK_INT(bad, 0);
    CHECK(checked > 50);
    nb_bake_result_release(ctx, &r);
}

static void test_pipeline_levels(void)
{
    char path[512], err[256];
    nb_obj obj;
    if (nb_obj_load(nbt_mesh_path("dungeon.obj", path, sizeof(path)), &obj, err, sizeof(err)) == 0) {
        check_pipeline(&obj, "dungeon", 291); /* REFERENCE.md: watershed, 291 detail triangles */
        nb_obj_free(&obj);
    } else {
        CHECK(!"dungeon.obj loads");
    }
    if (nb_obj_load(nbt_mesh_path("nav_test.obj", path, sizeof(path)), &obj, err, sizeof(err)) == 0) {
        check_pipeline(&obj, "nav_test", 561);
        nb_obj_free(&obj);
    } else {
        CHECK(!"nav_test.obj loads");
    }
    CHECK_INT(nb_terrain_generate(120, 120, 0.3f, 1, &obj), 0);
    check_pipeline(&obj, "terrain", 0);
    nb_obj_free(&obj);
}

static void test_bad_arguments(void)
{
    nb_compact_heightfield* chf = flat_chf(8, 5);
    nb_poly_mesh* pm = mesh_new(chf, 6, 8, 2);
    const int sq[] = { 1, 1, 1, 7, 7, 7, 7, 1 };
    mesh_poly(pm, chf, sq, 4, 1);
    nb_poly_mesh_detail* dm = (nb_poly_mesh_detail*)&dm; /* must be cleared on failure */
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, NULL, chf, 1.8f, 0.2f, &dm), NB_ERR_NULL_ARG, "mesh");
    CHECK(dm == NULL);
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, NULL, 1.8f, 0.2f, &dm), NB_ERR_NULL_ARG, "chf");
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, chf, 1.8f, 0.2f, NULL), NB_ERR_NULL_ARG, "out");
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, chf, -1.0f, 0.2f, &dm), NB_ERR_INVALID_ARG, "sample_dist");
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, chf, 0.1f, 0.2f, &dm), NB_ERR_INVALID_ARG, "sample_dist");
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, chf, NAN, 0.2f, &dm), NB_ERR_INVALID_ARG, "sample_dist");
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, chf, 1.8f, -0.5f, &dm), NB_ERR_INVALID_ARG,
                 "sample_max_error");
    pm->polys[1] = 40; /* a vertex index past nverts */
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, chf, 1.8f, 0.2f, &dm), NB_ERR_INDEX_RANGE, "polygon 0");
    pm->polys[1] = pm->polys[0];
    pm->polys[2] = NB_MESH_NULL_IDX;
    pm->polys[3] = NB_MESH_NULL_IDX;
    CHECK_STATUS(ctx, nb_build_poly_mesh_detail(ctx, pm, chf, 1.8f, 0.2f, &dm), NB_ERR_INVALID_ARG, "2 vertices");
    CHECK(dm == NULL);
    /* an empty mesh is fine: no submeshes */
    pm->npolys = 0;
    CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, chf, 1.8f, 0.2f, &dm), NB_OK);
    if (dm) {
        CHECK_INT(dm->nmeshes, 0);
        CHECK_INT(dm->ntris, 0);
        nb_poly_mesh_detail_destroy(ctx, dm);
    }
    nb_poly_mesh_detail_destroy(ctx, NULL);
    mesh_free(pm);
    nb_compact_heightfield_destroy(ctx, chf);
}

static int cancel_at_second(void* user, nb_stage stage, uint32_t done, uint32_t total)
{
    (void)total;
    int* calls = (int*)user;
    return stage == NB_STAGE_DETAIL && ++*calls >= 2 && done > 0;
}

static void test_out_of_memory_and_cancel(void)
{
    nb_obj obj;
    nb_bake_result r;
    nb_poly_mesh* pm;
    terrain_fixture(&obj, &r, &pm);
    if (pm) {
        nb_poly_mesh_detail* ref = NULL;
        CHECK_INT(nb_build_poly_mesh_detail(ctx, pm, r.compact, 1.8f, 0.2f, &ref), NB_OK);
        int succeeded = 0;
        for (long fail = 1; fail < 100 && !succeeded; ++fail) {
            nbt_alloc a = { 0 };
            nb_context_desc d;
            memset(&d, 0, sizeof(d));
            nbt_alloc_hooks(&d, &a);
            nb_context* c = nb_context_create(&d);
            a.fail_at = a.calls + fail;
            nb_poly_mesh_detail* dm = NULL;
            const nb_status s = nb_build_poly_mesh_detail(c, pm, r.compact, 1.8f, 0.2f, &dm);
            if (s == NB_OK) {
                succeeded = 1;
                CHECK(fail > 4); /* out struct, three arrays, scratch */
                CHECK(ref && dm->nverts == ref->nverts && dm->ntris == ref->ntris);
                nb_poly_mesh_detail_destroy(c, dm);
            } else {
                CHECK_STATUS(c, s, NB_ERR_OUT_OF_MEMORY, "nb_build_poly_mesh_detail: out of memory");
                CHECK(dm == NULL);
            }
            nb_context_destroy(c);
            CHECK_INT(a.live, 0);
        }
        CHECK(succeeded);
        nb_poly_mesh_detail_destroy(ctx, ref);

        /* A progress callback that says stop: cancelled, nothing leaks. */
        nbt_alloc a = { 0 };
        nb_context_desc d;
        memset(&d, 0, sizeof(d));
        nbt_alloc_hooks(&d, &a);
        int calls = 0;
        d.progress = cancel_at_second;
        d.progress_user = &calls;
        nb_context* c = nb_context_create(&d);
        nb_poly_mesh_detail* dm = NULL;
        CHECK_STATUS(c, nb_build_poly_mesh_detail(c, pm, r.compact, 1.8f, 0.2f, &dm), NB_ERR_CANCELLED, "cancel");
        CHECK(dm == NULL);
        nb_context_destroy(c);
        CHECK_INT(a.live, 0);
        mesh_free(pm);
    }
    nb_obj_free(&obj);
    nb_bake_result_release(ctx, &r);
}

static void test_terrain_generator(void)
{
    nb_obj a, b, c;
    CHECK_INT(nb_terrain_generate(61, 40, 0.3f, 3, &a), 0);
    CHECK_INT(nb_terrain_generate(61, 40, 0.3f, 3, &b), 0);
    CHECK_INT(nb_terrain_generate(61, 40, 0.3f, 4, &c), 0);
    CHECK_INT(a.vertex_count, 32 * 21);
    CHECK_INT(a.triangle_count, 31 * 20 * 2);
    CHECK(memcmp(a.positions, b.positions, a.vertex_count * 12) == 0); /* deterministic */
    CHECK(memcmp(a.positions, c.positions, a.vertex_count * 12) != 0); /* the seed matters */
    float lo[3] = { 1e30f, 1e30f, 1e30f }, hi[3] = { -1e30f, -1e30f, -1e30f };
    for (uint32_t i = 0; i < a.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            lo[k] = fminf(lo[k], a.positions[i * 3 + k]);
            hi[k] = fmaxf(hi[k], a.positions[i * 3 + k]);
        }
    CHECK_NEAR(lo[0], 0, 0);
    CHECK_NEAR(hi[0], 61 * 0.3f, 1e-5);
    CHECK_NEAR(hi[2], 40 * 0.3f, 1e-5);
    CHECK(hi[1] - lo[1] > 1.0f && hi[1] - lo[1] < 12.0f); /* rolling: a few world units */
    int up = 0, walkable = 0;
    for (uint32_t t = 0; t < a.triangle_count; ++t) {
        const float* v0 = &a.positions[a.indices[t * 3] * 3];
        const float* v1 = &a.positions[a.indices[t * 3 + 1] * 3];
        const float* v2 = &a.positions[a.indices[t * 3 + 2] * 3];
        const float e0[3] = { v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2] };
        const float e1[3] = { v2[0] - v0[0], v2[1] - v0[1], v2[2] - v0[2] };
        const float nx = e0[1] * e1[2] - e0[2] * e1[1], ny = e0[2] * e1[0] - e0[0] * e1[2],
                    nz = e0[0] * e1[1] - e0[1] * e1[0];
        up += ny > 0;
        walkable += ny / sqrtf(nx * nx + ny * ny + nz * nz) > 0.7071f;
    }
    CHECK_INT(up, (int)a.triangle_count);
    CHECK(walkable > (int)a.triangle_count * 9 / 10); /* mostly under 45 degrees */
    nb_obj_free(&a);
    nb_obj_free(&b);
    nb_obj_free(&c);
    CHECK_INT(nb_terrain_generate(0, 5, 0.3f, 1, &a), -1);
    CHECK_INT(nb_terrain_generate(5, 5, 0.0f, 1, &a), -1);
    CHECK(a.positions == NULL);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_terrain_generator);
    RUN(test_flat_square);
    RUN(test_sloped_plane);
    RUN(test_terrain_surface);
    RUN(test_shared_edges_match);
    RUN(test_winding_either_way);
    RUN(test_storeys_do_not_bleed);
    RUN(test_pipeline_levels);
    RUN(test_bad_arguments);
    RUN(test_out_of_memory_and_cancel);
    nb_context_destroy(ctx);
    return nbt_finish("test_detail");
}
