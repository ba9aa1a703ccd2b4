/* The rasterizer's plane sweep against an oracle: the straightforward clip-per-cell rasterization (each
 * triangle cut into rows, each row into cells, one span per piece), built here on nb_heightfield_add_span. The
 * sweep promises bit-identical spans; random triangles stress vertices on cut lines, walls, slivers,
 * collinear and out-of-bounds geometry. */
#include "navbake.h"
#include "nbtest_level.h"

#include <math.h>

static nb_context* ctx;

/* Splits a convex polygon by axis = cut: the part at or below the cut and the part above (oracle). */
static void split(const float* in, int n, float* lo, int* nlo, float* hi, int* nhi, float cut, int axis)
{
    float d[16];
    for (int i = 0; i < n; ++i)
        d[i] = cut - in[i * 3 + axis];
    int a = 0, b = 0;
    for (int i = 0, j = n - 1; i < n; j = i, ++i) {
        const int jin = d[j] >= 0.0f, iin = d[i] >= 0.0f;
        if (jin != iin) {
            const float t = d[j] / (d[j] - d[i]);
            for (int k = 0; k < 3; ++k)
                lo[a * 3 + k] = hi[b * 3 + k] = in[j * 3 + k] + (in[i * 3 + k] - in[j * 3 + k]) * t;
            ++a;
            ++b;
            if (d[i] > 0.0f)
                memcpy(&lo[3 * a++], &in[i * 3], 12);
            else if (d[i] < 0.0f)
                memcpy(&hi[3 * b++], &in[i * 3], 12);
        } else {
            if (d[i] >= 0.0f) {
                memcpy(&lo[3 * a++], &in[i * 3], 12);
                if (d[i] != 0.0f)
                    continue;
            }
            memcpy(&hi[3 * b++], &in[i * 3], 12);
        }
    }
    *nlo = a;
    *nhi = b;
}

static void oracle_tri(nb_heightfield* hf, const float* v0, const float* v1, const float* v2, uint8_t area, int thr)
{
    const float cs = hf->cell_size, ics = 1.0f / hf->cell_size, ich = 1.0f / hf->cell_height;
    const float by = hf->bmax[1] - hf->bmin[1];
    float tmin[3], tmax[3];
    for (int k = 0; k < 3; ++k) {
        tmin[k] = fminf(v0[k], fminf(v1[k], v2[k]));
        tmax[k] = fmaxf(v0[k], fmaxf(v1[k], v2[k]));
    }
    for (int k = 0; k < 3; ++k)
        if (tmin[k] > hf->bmax[k] || tmax[k] < hf->bmin[k])
            return;
    int z0 = (int)((tmin[2] - hf->bmin[2]) * ics), z1 = (int)((tmax[2] - hf->bmin[2]) * ics);
    z0 = z0 < -1 ? -1 : z0 > hf->height - 1 ? hf->height - 1 : z0;
    z1 = z1 < 0 ? 0 : z1 > hf->height - 1 ? hf->height - 1 : z1;
    float rest[48], row[48], cell[48], tmp[48];
    memcpy(rest, v0, 12);
    memcpy(rest + 3, v1, 12);
    memcpy(rest + 6, v2, 12);
    int nrest = 3;
    for (int z = z0; z <= z1; ++z) {
        int nrow;
        split(rest, nrest, row, &nrow, tmp, &nrest, hf->bmin[2] + (float)z * cs + cs, 2);
        memcpy(rest, tmp, sizeof(tmp));
        if (nrow < 3 || z < 0)
            continue;
        float minx = row[0], maxx = row[0];
        for (int i = 1; i < nrow; ++i) {
            minx = fminf(minx, row[i * 3]);
            maxx = fmaxf(maxx, row[i * 3]);
        }
        int x0 = (int)((minx - hf->bmin[0]) * ics), x1 = (int)((maxx - hf->bmin[0]) * ics);
        if (x1 < 0 || x0 >= hf->width)
            continue;
        x0 = x0 < -1 ? -1 : x0;
        x1 = x1 > hf->width - 1 ? hf->width - 1 : x1;
        int nleft = nrow;
        for (int x = x0; x <= x1; ++x) {
            int ncell;
            split(row, nleft, cell, &ncell, tmp, &nleft, hf->bmin[0] + (float)x * cs + cs, 0);
            memcpy(row, tmp, sizeof(tmp));
            if (ncell < 3 || x < 0)
                continue;
            float smin = cell[1], smax = cell[1];
            for (int i = 1; i < ncell; ++i) {
                smin = fminf(smin, cell[i * 3 + 1]);
                smax = fmaxf(smax, cell[i * 3 + 1]);
            }
            smin -= hf->bmin[1];
            smax -= hf->bmin[1];
            if (smax < 0.0f || smin > by)
                continue;
            smin = smin < 0.0f ? 0.0f : smin;
            smax = smax > by ? by : smax;
            int lo = (int)floorf(smin * ich), hi;
            lo = lo < 0 ? 0 : lo > NB_SPAN_MAX_HEIGHT ? NB_SPAN_MAX_HEIGHT : lo;
            hi = (int)ceilf(smax * ich);
            hi = hi < lo + 1 ? lo + 1 : hi > NB_SPAN_MAX_HEIGHT ? NB_SPAN_MAX_HEIGHT : hi;
            if (lo < hi)
                CHECK_INT(nb_heightfield_add_span(ctx, hf, x, z, (uint32_t)lo, (uint32_t)hi, area, thr), NB_OK);
        }
    }
}

static int same(const nb_heightfield* a, const nb_heightfield* b)
{
    if (a->span_count != b->span_count)
        return 0;
    for (int i = 0; i < a->width * a->height; ++i) {
        uint32_t s = a->columns[i], t = b->columns[i];
        for (; s && t; s = a->spans[s].next, t = b->spans[t].next)
            if (a->spans[s].smin != b->spans[t].smin || a->spans[s].smax != b->spans[t].smax ||
                a->spans[s].area != b->spans[t].area)
                return 0;
        if (s || t)
            return 0;
    }
    return 1;
}

static int no_area; /* triangles compare() found with no area */

static int compare(const float* v, uint32_t nv, const uint32_t* t, uint32_t nt, const uint8_t* areas, const float* bmin,
                   const float* bmax, float cs, float ch, int thr)
{
    int w, h;
    nb_calc_grid_size(bmin, bmax, cs, &w, &h);
    w = w < 1 ? 1 : w;
    h = h < 1 ? 1 : h;
    nb_heightfield *a = NULL, *b = NULL;
    CHECK_INT(nb_heightfield_create(ctx, w, h, bmin, bmax, cs, ch, &a), NB_OK);
    CHECK_INT(nb_heightfield_create(ctx, w, h, bmin, bmax, cs, ch, &b), NB_OK);
    CHECK_INT(nb_rasterize_triangles(ctx, v, nv, t, areas, nt, a, thr), NB_OK);
    for (uint32_t i = 0; i < nt; ++i) {
        const uint32_t i0 = t ? t[i * 3] : i * 3, i1 = t ? t[i * 3 + 1] : i * 3 + 1, i2 = t ? t[i * 3 + 2] : i * 3 + 2;
        /* a triangle with no area has no surface: none of its cells gets a span */
        const float* p0 = &v[i0 * 3];
        const float* p1 = &v[i1 * 3];
        const float* p2 = &v[i2 * 3];
        if (!nb_triangle_has_area(p0, p1, p2)) {
            ++no_area;
            continue;
        }
        oracle_tri(b, p0, p1, p2, areas[i] & 63, thr);
    }
    const int ok = same(a, b);
    nb_heightfield_destroy(ctx, a);
    nb_heightfield_destroy(ctx, b);
    return ok;
}

static void test_levels_match_the_oracle(void)
{
    const char* levels[] = { "dungeon.obj", "nav_test.obj" };
    for (int l = 0; l < 2; ++l) {
        nb_obj obj;
        if (nbt_load_level(levels[l], &obj) != 0) {
            CHECK(!"mesh missing");
            continue;
        }
        float bmin[3], bmax[3];
        memcpy(bmin, obj.positions, 12);
        memcpy(bmax, obj.positions, 12);
        for (uint32_t i = 1; i < obj.vertex_count; ++i)
            for (int k = 0; k < 3; ++k) {
                bmin[k] = fminf(bmin[k], obj.positions[i * 3 + k]);
                bmax[k] = fmaxf(bmax[k], obj.positions[i * 3 + k]);
            }
        uint8_t* areas = (uint8_t*)malloc(obj.triangle_count);
        for (uint32_t i = 0; i < obj.triangle_count; ++i)
            areas[i] = (uint8_t)(1 + i % 63);
        const float sizes[] = { 0.3f, 0.17f, 0.5f };
        for (int c = 0; c < 3; ++c)
            CHECK(compare(obj.positions, obj.vertex_count, obj.indices, obj.triangle_count, areas, bmin, bmax, sizes[c],
                          0.2f, 4));
        free(areas);
        nb_obj_free(&obj);
    }
}

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static float frand(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() & 0xffffff) / 16777216.0f; }

static void test_random_triangles_match_the_oracle(void)
{
    enum { NT = 48, CASES = 1500 };
    int differ = 0;
    for (int it = 0; it < CASES; ++it) {
        const float cs = (rnd() & 1) ? 0.3f : frand(0.05f, 1.0f), ch = (rnd() & 1) ? frand(0.05f, 0.5f) : 0.00113f;
        const int w = 1 + (int)(rnd() % 40), h = 1 + (int)(rnd() % 40);
        const float bmin[3] = { frand(-50, 50), frand(-5, 5), frand(-50, 50) };
        const float bmax[3] = { bmin[0] + (float)w * cs, bmin[1] + frand(0.5f, 9), bmin[2] + (float)h * cs };
        float v[NT * 9];
        uint8_t areas[NT];
        for (int k = 0; k < NT * 3; ++k) {
            float* p = &v[k * 3];
            const int mode = (int)(rnd() % 8);
            for (int a = 0; a < 3; a += 2) {
                if (mode < 3) { /* exactly on a cut line */
                    const int cell = (int)(rnd() % (unsigned)((a ? h : w) + 4)) - 2;
                    p[a] = (bmin[a] + (float)cell * cs) + cs;
                } else {
                    p[a] = frand(bmin[a] - 2 * cs, bmax[a] + 2 * cs);
                }
            }
            p[1] = frand(bmin[1] - 1, bmax[1] + 1);
            if (k % 3 && rnd() % 4 == 0) { /* a wall or sliver: same xz as the previous vertex */
                p[0] = p[-3];
                p[2] = p[-1];
            }
            if (k % 3 == 2 && rnd() % 6 == 0) { /* collinear in xz */
                const float t = frand(-0.5f, 1.5f);
                p[0] = p[-6] + (p[-3] - p[-6]) * t;
                p[2] = p[-4] + (p[-1] - p[-4]) * t;
            }
            if (k % 3 && rnd() % 10 == 0)
                p[2] = p[-1]; /* axis-aligned edges */
            if (k % 3 && rnd() % 10 == 0)
                p[0] = p[-3];
        }
        for (int k = 0; k < NT; ++k)
            areas[k] = (uint8_t)(1 + rnd() % 63);
        differ += !compare(v, NT * 3, NULL, NT, areas, bmin, bmax, cs, ch, (int)(rnd() % 6));
    }
    CHECK_INT(differ, 0);
    CHECK(no_area > 100); /* the vertical segments among them (every corner on one column) */
}

/* A triangle whose far vertex lies one float step past a cell's far edge while its index (vertex - bmin) * ics
 * still rounds down into that cell: clipping cuts the tip off there and drops it, so the cell's span must end at
 * the cut's crossings, not at the tip (the tip's y sits just above a cell_height step, the crossings just below).
 * axis 2 puts the tip beyond a row, axis 0 beyond a column; neither is the grid's last, so nothing is clamped. */
static void test_tip_past_the_last_cut_is_dropped(void)
{
    const float cs = 0.3f, ics = 1.0f / cs, ch = 0.2f;
    for (int axis = 0; axis <= 2; axis += 2) {
        float bmin[3] = { 0.0f, 0.0f, 0.0f }, tip = 0.0f;
        int found = 0;
        for (int bi = 0; bi < 4000 && !found; ++bi) {
            bmin[axis] = -50.0f + (float)bi * 0.0537f;
            for (int c = 2; c < 30 && !found; ++c) {
                const float cut = (bmin[axis] + (float)c * cs) + cs;
                tip = nextafterf(cut, INFINITY);
                found = (int)((tip - bmin[axis]) * ics) == c;
            }
        }
        CHECK(found);
        if (!found)
            continue;
        const float bmax[3] = { bmin[0] + 40.0f * cs, 60.0f, bmin[2] + 40.0f * cs };
        const int other = 2 - axis;
        const float mid = bmin[other] + 20.5f * cs;
        float v[9] = { 0 };
        v[axis] = tip; /* the tip, high */
        v[other] = mid;
        v[1] = 50.001f;
        v[3 + axis] = tip - 1.7f * cs; /* the base, two cells back, far below the grid */
        v[3 + other] = mid - 1.3f * cs;
        v[4] = -1000.0f;
        v[6 + axis] = tip - 1.6f * cs;
        v[6 + other] = mid + 1.2f * cs;
        v[7] = -1000.0f;
        const uint8_t area = 1;
        CHECK(compare(v, 3, NULL, 1, &area, bmin, bmax, cs, ch, 0));
    }
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_levels_match_the_oracle);
    RUN(test_random_triangles_match_the_oracle);
    RUN(test_tip_past_the_last_cut_is_dropped);
    nb_context_destroy(ctx);
    return nbt_finish("test_rasterize_sweep");
}
