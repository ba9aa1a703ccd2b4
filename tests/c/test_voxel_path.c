/* 3D path search through voxels: hand-made grids, an independent brute-force Dijkstra and move/segment checker,
 * validation, buffers, allocation failures, and a real level. */
#include "../../c/src/nb_internal.h" /* nb_voxel_nearest_within */
#include "navbake.h"
#include "nbtest.h"
#include "nbtest_level.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>

static nb_context* ctx;

/* ================================================================================================ */
/* A grid built bit by bit, and an independent reading of the rules (voxel by voxel, no bit tricks)  */
/* ================================================================================================ */

typedef struct tgrid {
    int w, l, d; /* x, layers y, rows z */
    float cs, ch;
    uint32_t* words;
} tgrid;

static tgrid tg_new(int w, int l, int d, float cs, float ch)
{
    tgrid g = { w, l, d, cs, ch, NULL };
    g.words = (uint32_t*)calloc(((size_t)w * l * d + 31) / 32 + 1, sizeof(uint32_t));
    return g;
}

static void tg_free(tgrid* g) { free(g->words); }

static int tg_in(const tgrid* g, int x, int y, int z) { return x >= 0 && x < g->w && y >= 0 && y < g->l && z >= 0 && z < g->d; }

static long tg_idx(const tgrid* g, int x, int y, int z) { return x + (long)g->w * (z + (long)g->d * y); }

static void tg_set(tgrid* g, int x, int y, int z)
{
    if (!tg_in(g, x, y, z))
        return;
    const long i = tg_idx(g, x, y, z);
    g->words[i / 32] |= 1u << (i % 32);
}

static void tg_box(tgrid* g, int x0, int x1, int y0, int y1, int z0, int z1)
{
    for (int y = y0; y <= y1; ++y)
        for (int z = z0; z <= z1; ++z)
            for (int x = x0; x <= x1; ++x)
                tg_set(g, x, y, z);
}

static int tg_solid(const tgrid* g, int x, int y, int z)
{
    if (!tg_in(g, x, y, z))
        return 0;
    const long i = tg_idx(g, x, y, z);
    return (int)((g->words[i / 32] >> (i % 32)) & 1u);
}

static nb_voxel_grid tg_view(const tgrid* g)
{
    nb_voxel_grid v;
    v.words = g->words;
    v.dims[0] = g->w;
    v.dims[1] = g->l;
    v.dims[2] = g->d;
    v.cell_size = g->cs;
    v.cell_height = g->ch;
    return v;
}

static nb_voxel_path_params mkp(int move, int h, int r, int mc, int smooth)
{
    nb_voxel_path_params p;
    p.move = move;
    p.agent_height = h;
    p.agent_radius = r;
    p.max_climb = mc;
    p.smooth = smooth;
    p.heuristic_weight = 0.0f;
    return p;
}

/* A memo of t_box_free (the mode's box) for the brute force over wide agents (-1 = not known yet), set by check_against_brute_force. */
static signed char* t_memo;
static const tgrid* t_memo_grid;

/* Fly and climb: the whole box. */
static int t_full_box_free(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z)
{
    for (int yy = y; yy < y + p->agent_height; ++yy)
        for (int zz = z - p->agent_radius; zz <= z + p->agent_radius; ++zz)
            for (int xx = x - p->agent_radius; xx <= x + p->agent_radius; ++xx)
                if (tg_solid(g, xx, yy, zz))
                    return 0;
    return 1;
}

/* Walk: each voxel of the whole box is judged on its own. Off the centre column, a voxel less than
 * min(ring * max_climb, h - 1) layers above the feet (ring: its Chebyshev distance from the centre column) is
 * ground the agent could step onto, not part of its body. */
static int t_walk_box_free(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z)
{
    const int r = p->agent_radius, h = p->agent_height;
    for (int zz = z - r; zz <= z + r; ++zz)
        for (int xx = x - r; xx <= x + r; ++xx) {
            const int ring = abs(xx - x) > abs(zz - z) ? abs(xx - x) : abs(zz - z);
            long allowed = ring == 0 ? 0 : (long)ring * p->max_climb;
            if (allowed > h - 1)
                allowed = h - 1;
            for (int yy = y; yy < y + h; ++yy)
                if (yy - y >= allowed && tg_solid(g, xx, yy, zz))
                    return 0;
        }
    return 1;
}

static int t_box_free_raw(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z)
{
    return p->move == NB_VOXEL_WALK ? t_walk_box_free(g, p, x, y, z) : t_full_box_free(g, p, x, y, z);
}

static int t_box_free(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z)
{
    if (!t_memo || g != t_memo_grid || !tg_in(g, x, y, z))
        return t_box_free_raw(g, p, x, y, z);
    signed char* m = &t_memo[tg_idx(g, x, y, z)];
    if (*m < 0)
        *m = (signed char)t_box_free_raw(g, p, x, y, z);
    return *m;
}

/* Climb: classify every solid voxel near the box by how it touches it. */
static int t_clings(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z)
{
    const int r = p->agent_radius, h = p->agent_height;
    for (int yy = y - 1; yy <= y + h; ++yy)
        for (int zz = z - r - 1; zz <= z + r + 1; ++zz)
            for (int xx = x - r - 1; xx <= x + r + 1; ++xx) {
                if (!tg_solid(g, xx, yy, zz))
                    continue;
                const int fx = abs(xx - x) <= r, fz = abs(zz - z) <= r;
                const int rx = abs(xx - x) == r + 1, rz = abs(zz - z) == r + 1;
                if (yy == y + h && fx && fz)
                    return 1; /* above */
                if (yy == y - 1 && fx && fz)
                    return 1; /* below */
                if (yy <= y + h - 1 && ((rx && fz) || (fx && rz)))
                    return 1; /* beside, or diagonally below a bottom edge */
            }
    return 0;
}

static int t_can_be(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z)
{
    if (!tg_in(g, x, y, z) || !t_box_free(g, p, x, y, z))
        return 0;
    if (p->move == NB_VOXEL_WALK)
        return tg_solid(g, x, y - 1, z);
    if (p->move == NB_VOXEL_CLIMB)
        return t_clings(g, p, x, y, z);
    return 1;
}

/* Walk landing: among the standable voxels within max_climb, the least |dy|, then the lower. */
static int t_landing(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z)
{
    int best = INT_MIN;
    for (int yy = y - p->max_climb; yy <= y + p->max_climb; ++yy) {
        if (!tg_in(g, x, yy, z) || !tg_solid(g, x, yy - 1, z) || !t_box_free(g, p, x, yy, z))
            continue;
        if (best == INT_MIN || abs(yy - y) < abs(best - y))
            best = yy;
    }
    return best;
}

static int t_walk_noddiag(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z, int dx, int dz, int* ny)
{
    if (!tg_in(g, x + dx, 0, z + dz))
        return 0;
    const int land = t_landing(g, p, x + dx, y, z + dz);
    if (land == INT_MIN)
        return 0;
    /* headroom: the agent's box at every height between the two, over the lower end's column */
    for (int yy = y + 1; yy <= land; ++yy)
        if (!t_box_free(g, p, x, yy, z))
            return 0;
    for (int yy = land + 1; yy <= y; ++yy)
        if (!t_box_free(g, p, x + dx, yy, z + dz))
            return 0;
    *ny = land;
    return 1;
}

static int t_walk(const tgrid* g, const nb_voxel_path_params* p, int x, int y, int z, int dx, int dz, int* ny)
{
    int t;
    if (dx && dz && !(t_walk_noddiag(g, p, x, y, z, dx, 0, &t) && t_walk_noddiag(g, p, x, y, z, 0, dz, &t)))
        return 0;
    return t_walk_noddiag(g, p, x, y, z, dx, dz, ny);
}

/* Is a -> b one legal move? */
static int t_move(const tgrid* g, const nb_voxel_path_params* p, const int* a, const int* b)
{
    const int dx = b[0] - a[0], dy = b[1] - a[1], dz = b[2] - a[2];
    if (abs(dx) > 1 || abs(dz) > 1 || !tg_in(g, b[0], b[1], b[2]))
        return 0;
    if (p->move == NB_VOXEL_WALK) {
        int ny;
        return (dx || dz) && t_walk(g, p, a[0], a[1], a[2], dx, dz, &ny) && ny == b[1];
    }
    if (abs(dy) > 1 || (!dx && !dy && !dz))
        return 0;
    for (int ex = 0; ex <= 1; ++ex)
        for (int ey = 0; ey <= 1; ++ey)
            for (int ez = 0; ez <= 1; ++ez)
                if (!t_box_free(g, p, a[0] + ex * dx, a[1] + ey * dy, a[2] + ez * dz))
                    return 0;
    return p->move != NB_VOXEL_CLIMB || t_clings(g, p, b[0], b[1], b[2]);
}

static double t_len(const tgrid* g, const int* a, const int* b)
{
    const double dx = (b[0] - a[0]) * (double)g->cs, dy = (b[1] - a[1]) * (double)g->ch,
                 dz = (b[2] - a[2]) * (double)g->cs;
    return sqrt(dx * dx + dy * dy + dz * dz);
}

static double t_path_len(const tgrid* g, const int32_t* path, uint32_t n)
{
    double s = 0;
    for (uint32_t i = 1; i < n; ++i)
        s += t_len(g, &path[3 * (i - 1)], &path[3 * i]);
    return s;
}

/* Segment rule, written as "collect every plane crossing of the line, sort them, group equal ones". */
typedef struct tcross {
    long num, den;
    int axis;
} tcross;

static int t_segment(const tgrid* g, const nb_voxel_path_params* p, const int* a, const int* b)
{
    tcross ev[512];
    int ne = 0;
    const int walk = p->move == NB_VOXEL_WALK;
    for (int i = 0; i < 3; ++i) {
        if (walk && i == 1)
            continue;
        const int n = abs(b[i] - a[i]);
        for (int k = 0; k < n && ne < 512; ++k)
            ev[ne++] = (tcross){ 2 * k + 1, 2 * n, i };
    }
    for (int i = 1; i < ne; ++i) /* insertion sort by num/den */
        for (int j = i; j > 0 && ev[j].num * ev[j - 1].den < ev[j - 1].num * ev[j].den; --j) {
            const tcross t = ev[j];
            ev[j] = ev[j - 1];
            ev[j - 1] = t;
        }
    int cur[3] = { a[0], a[1], a[2] };
    for (int i = 0; i < ne;) {
        int o[3] = { 0, 0, 0 };
        int j = i;
        while (j < ne && ev[j].num * ev[i].den == ev[i].num * ev[j].den) {
            o[ev[j].axis] = b[ev[j].axis] > a[ev[j].axis] ? 1 : -1;
            ++j;
        }
        i = j;
        int nxt[3] = { cur[0] + o[0], cur[1] + o[1], cur[2] + o[2] };
        if (walk) {
            int ny;
            if (!t_walk(g, p, cur[0], cur[1], cur[2], o[0], o[2], &ny))
                return 0;
            nxt[1] = ny;
        } else if (!t_move(g, p, cur, nxt)) {
            return 0;
        }
        memcpy(cur, nxt, sizeof(cur));
    }
    return cur[0] == b[0] && cur[1] == b[1] && cur[2] == b[2];
}

/* Brute-force Dijkstra over every voxel (O(V^2)); dist < 0 = unreachable. */
static double* t_dijkstra(const tgrid* g, const nb_voxel_path_params* p, const int* s)
{
    const long V = (long)g->w * g->l * g->d;
    double* dist = (double*)malloc(sizeof(double) * V);
    char* done = (char*)calloc(V, 1);
    for (long i = 0; i < V; ++i)
        dist[i] = -1;
    dist[tg_idx(g, s[0], s[1], s[2])] = 0;
    for (;;) {
        long u = -1;
        for (long i = 0; i < V; ++i)
            if (!done[i] && dist[i] >= 0 && (u < 0 || dist[i] < dist[u]))
                u = i;
        if (u < 0)
            break;
        done[u] = 1;
        const int a[3] = { (int)(u % g->w), (int)(u / ((long)g->w * g->d)), (int)((u / g->w) % g->d) };
        for (int dy = -1; dy <= 1; ++dy)
            for (int dz = -1; dz <= 1; ++dz)
                for (int dx = -1; dx <= 1; ++dx) {
                    int b[3] = { a[0] + dx, a[1] + dy, a[2] + dz };
                    if (p->move == NB_VOXEL_WALK) {
                        if (dy != 0 || (!dx && !dz))
                            continue;
                        int ny;
                        if (!t_walk(g, p, a[0], a[1], a[2], dx, dz, &ny))
                            continue;
                        b[1] = ny;
                    } else if (!t_move(g, p, a, b)) {
                        continue;
                    }
                    const long v = tg_idx(g, b[0], b[1], b[2]);
                    const double nd = dist[u] + t_len(g, a, b);
                    if (!done[v] && (dist[v] < 0 || nd < dist[v]))
                        dist[v] = nd;
                }
    }
    free(done);
    return dist;
}

/* Runs a search; returns the nb_status, fills path (cap voxels), *n and *st. */
static nb_status find(nb_voxel_query* q, const tgrid* g, const nb_voxel_path_params* p, const int* s, const int* e,
                      int32_t* path, uint32_t cap, uint32_t* n, int* st)
{
    const nb_voxel_grid v = tg_view(g);
    return nb_voxel_find_path(q, &v, p, s, e, path, cap, n, st);
}

/* Every consecutive pair a legal move, starts at s. */
static int t_path_legal(const tgrid* g, const nb_voxel_path_params* p, const int32_t* path, uint32_t n, const int* s)
{
    if (n == 0 || path[0] != s[0] || path[1] != s[1] || path[2] != s[2])
        return 0;
    for (uint32_t i = 1; i < n; ++i)
        if (!t_move(g, p, &path[3 * (i - 1)], &path[3 * i]))
            return 0;
    return 1;
}

static int t_smooth_legal(const tgrid* g, const nb_voxel_path_params* p, const int32_t* path, uint32_t n)
{
    for (uint32_t i = 1; i < n; ++i)
        if (!t_segment(g, p, &path[3 * (i - 1)], &path[3 * i]))
            return 0;
    return 1;
}

/* Is sm[0..ns) a subsequence of raw[0..nr) keeping both ends? */
static int t_subsequence(const int32_t* sm, uint32_t ns, const int32_t* raw, uint32_t nr)
{
    if (!ns || !nr || memcmp(sm, raw, 12) || memcmp(&sm[3 * (ns - 1)], &raw[3 * (nr - 1)], 12))
        return 0;
    uint32_t j = 0;
    for (uint32_t i = 0; i < ns; ++i) {
        while (j < nr && memcmp(&sm[3 * i], &raw[3 * j], 12))
            ++j;
        if (j == nr)
            return 0;
        ++j;
    }
    return 1;
}

#define PATH_CAP 70000
static int32_t g_path[3 * PATH_CAP], g_path2[3 * PATH_CAP];

static nb_voxel_query* new_query(uint32_t max_nodes)
{
    nb_voxel_query* q = NULL;
    CHECK_INT(nb_voxel_query_create(ctx, max_nodes, &q), NB_OK);
    return q;
}

/* ================================================================================================ */
/* Hand-made grids                                                                                  */
/* ================================================================================================ */

static void test_fly_around_wall(void)
{
    tgrid g = tg_new(10, 6, 10, 0.5f, 0.5f);
    tg_box(&g, 5, 5, 0, 5, 0, 8); /* wall x = 5, open at z = 9 */
    nb_voxel_query* q = new_query(0);
    const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    const int s[3] = { 2, 2, 2 }, e[3] = { 8, 2, 2 };
    uint32_t n = 0;
    int st = -1;
    CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK(t_path_legal(&g, &p, g_path, n, s));
    CHECK(n > 0 && !memcmp(&g_path[3 * (n - 1)], e, 12));
    int through_gap = 0;
    for (uint32_t i = 0; i < n; ++i)
        through_gap |= g_path[3 * i] == 5 && g_path[3 * i + 2] == 9;
    CHECK(through_gap);
    double* dist = t_dijkstra(&g, &p, s);
    CHECK_NEAR(t_path_len(&g, g_path, n), dist[tg_idx(&g, e[0], e[1], e[2])], 1e-3);
    free(dist);
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

static void test_hole_fits_agent(void)
{
    /* A wall over the whole yz section with a 3 x 3 hole: y 2..4, z 3..5. */
    tgrid g = tg_new(11, 8, 9, 0.3f, 0.2f);
    tg_box(&g, 5, 5, 0, 7, 0, 8);
    for (int y = 2; y <= 4; ++y)
        for (int z = 3; z <= 5; ++z)
            g.words[tg_idx(&g, 5, y, z) / 32] &= ~(1u << (tg_idx(&g, 5, y, z) % 32));
    nb_voxel_query* q = new_query(0);
    const int s[3] = { 2, 2, 4 }, e[3] = { 8, 2, 4 };
    uint32_t n = 0;
    int st = -1;
    /* radius 1, height 3: exactly fits, and must pass through (5, 2, 4) */
    nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 3, 1, 0, 0);
    CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK(t_path_legal(&g, &p, g_path, n, s));
    int via = 0;
    for (uint32_t i = 0; i < n; ++i)
        via |= g_path[3 * i] == 5 && g_path[3 * i + 1] == 2 && g_path[3 * i + 2] == 4;
    CHECK(via);
    /* taller or wider: no way through */
    const int s2[3] = { 2, 1, 4 }, e2[3] = { 8, 1, 4 };
    p = mkp(NB_VOXEL_FLY, 4, 1, 0, 0);
    CHECK_INT(find(q, &g, &p, s2, e2, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_PARTIAL);
    CHECK(n > 0 && g_path[3 * (n - 1)] < 5);
    p = mkp(NB_VOXEL_FLY, 1, 2, 0, 0);
    CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_PARTIAL);
    /* the smallest agent also fits, by the same hole */
    p = mkp(NB_VOXEL_FLY, 1, 0, 0, 1);
    CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK(t_smooth_legal(&g, &p, g_path, n));
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

/* A corridor along x (z 0..2) with a floor and stairs; step = the height gained at column x. */
static tgrid stairs(const int* heights, int count)
{
    tgrid g = tg_new(count, 10, 3, 0.3f, 0.2f);
    for (int x = 0; x < count; ++x)
        tg_box(&g, x, x, 0, heights[x] - 1, 0, 2);
    return g;
}

static void test_walk_stairs(void)
{
    const int h1[12] = { 1, 1, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5 };
    const int h2[12] = { 1, 1, 1, 2, 3, 5, 6, 6, 6, 6, 6, 6 }; /* a step of 2 at x = 5 */
    nb_voxel_query* q = new_query(0);
    uint32_t n = 0;
    int st = -1;
    {
        tgrid g = stairs(h1, 12);
        const int s[3] = { 1, 1, 1 }, e[3] = { 10, 5, 1 };
        const nb_voxel_path_params p = mkp(NB_VOXEL_WALK, 2, 0, 1, 0);
        CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        CHECK_INT(st, NB_PATH_COMPLETE);
        CHECK(t_path_legal(&g, &p, g_path, n, s));
        for (uint32_t i = 1; i < n; ++i)
            CHECK(abs(g_path[3 * i + 1] - g_path[3 * i - 2]) <= 1);
        CHECK_INT(n, 10); /* straight along x: one column per move */
        /* radius 1: the next, higher step under the front of its footprint is ground it can step onto */
        const nb_voxel_path_params p1 = mkp(NB_VOXEL_WALK, 2, 1, 1, 0);
        CHECK_INT(find(q, &g, &p1, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        CHECK_INT(st, NB_PATH_COMPLETE);
        CHECK(t_path_legal(&g, &p1, g_path, n, s));
        /* smoothed: the start of the slope stays */
        const nb_voxel_path_params ps = mkp(NB_VOXEL_WALK, 2, 0, 1, 1);
        CHECK_INT(find(q, &g, &ps, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        CHECK_INT(st, NB_PATH_COMPLETE);
        CHECK(t_smooth_legal(&g, &ps, g_path, n));
        CHECK_INT(n, 2); /* walking follows the ground: one straight segment up the stairs */
        tg_free(&g);
    }
    {
        tgrid g = stairs(h2, 12);
        const int s[3] = { 1, 1, 1 }, e[3] = { 10, 6, 1 };
        nb_voxel_path_params p = mkp(NB_VOXEL_WALK, 2, 0, 1, 0);
        CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        CHECK_INT(st, NB_PATH_PARTIAL);
        CHECK(t_path_legal(&g, &p, g_path, n, s));
        /* nearest reachable voxel to the end: the top of the lower flight (4, 3, 1) */
        CHECK(n > 0 && g_path[3 * (n - 1)] == 4 && g_path[3 * (n - 1) + 1] == 3 && g_path[3 * (n - 1) + 2] == 1);
        p.max_climb = 2;
        CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        CHECK_INT(st, NB_PATH_COMPLETE);
        CHECK(t_path_legal(&g, &p, g_path, n, s));
        /* a ceiling over the step's foot leaves no headroom to rise: blocked again */
        tg_box(&g, 4, 4, 6, 6, 0, 2);
        CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        CHECK_INT(st, NB_PATH_PARTIAL);
        tg_free(&g);
    }
    nb_voxel_query_destroy(ctx, q);
}

static int t_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* A walk from s to e on g: *st, and when complete, a legal path as short as the brute force's, a legal smoothing. */
static int walk_check(nb_voxel_query* q, const tgrid* g, int r, int mc, int h, const int* s, const int* e)
{
    nb_voxel_path_params p = mkp(NB_VOXEL_WALK, h, r, mc, 0);
    uint32_t n = 0, ns = 0;
    int st = -1, st2 = -1;
    CHECK_INT(find(q, g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    const size_t voxels = (size_t)g->w * g->l * g->d;
    t_memo = (signed char*)malloc(voxels);
    memset(t_memo, -1, voxels);
    t_memo_grid = g;
    CHECK(t_path_legal(g, &p, g_path, n, s));
    double* dist = t_dijkstra(g, &p, s);
    const double de = dist[tg_idx(g, e[0], e[1], e[2])];
    CHECK_INT(st, de >= 0 ? NB_PATH_COMPLETE : NB_PATH_PARTIAL);
    if (st == NB_PATH_COMPLETE && de >= 0)
        CHECK_NEAR(t_path_len(g, g_path, n), de, 1e-4);
    free(dist);
    p.smooth = 1;
    CHECK_INT(find(q, g, &p, s, e, g_path2, PATH_CAP, &ns, &st2), NB_OK);
    CHECK_INT(st2, st);
    CHECK(t_smooth_legal(g, &p, g_path2, ns));
    free(t_memo);
    t_memo = NULL;
    return st;
}

/* A corridor along x, z 0..2r+2 with full-height walls at z = 0 and z = 2r+2 (so the agent's centre keeps to
 * z = r+1), floor heights (feet layers) per column. */
static tgrid walk_corridor(const int* heights, int count, int r, int layers)
{
    tgrid g = tg_new(count, layers, 2 * r + 3, 0.3f, 0.2f);
    for (int x = 0; x < count; ++x)
        tg_box(&g, x, x, 0, heights[x] - 1, 0, 2 * r + 2);
    tg_box(&g, 0, count - 1, 0, layers - 1, 0, 0);
    tg_box(&g, 0, count - 1, 0, layers - 1, 2 * r + 2, 2 * r + 2);
    return g;
}

/* Ramps and stairs that the centre column can walk (at most max_climb per column) fit walkers of any radius: the
 * ground rising under the front of the footprint is ground they could step onto. A step higher than max_climb
 * still stops them, and so do low ceilings. */
static void test_walk_ramps_wide_agents(void)
{
    enum { W = 18, H = 4, MC = 1, LAYERS = 7 + H + 2 };
    int slope[W], stairs2[W], cliff[W], flat[W];
    for (int x = 0; x < W; ++x) {
        slope[x] = 1 + t_clamp(x - 3, 0, 6);           /* +1 per column from x = 4 to 9 */
        stairs2[x] = 1 + t_clamp((x - 2) / 2, 0, 6);   /* +1 every 2 columns from x = 4 to 14 */
        cliff[x] = slope[x] + (x >= 7 ? 1 : 0);          /* the slope with a 2-voxel step at x = 7 */
        flat[x] = 1;
    }
    nb_voxel_query* q = new_query(0);
    for (int r = 0; r <= 2; ++r) {
        const int c = r + 1; /* the corridor's middle row */
        const int s[3] = { 1, 1, c };
        {
            tgrid g = walk_corridor(slope, W, r, LAYERS);
            const int e[3] = { W - 2, 7, c };
            CHECK_INT(walk_check(q, &g, r, MC, H, s, e), NB_PATH_COMPLETE);
            /* and back down */
            CHECK_INT(walk_check(q, &g, r, MC, H, e, s), NB_PATH_COMPLETE);
            tg_free(&g);
        }
        {
            tgrid g = walk_corridor(stairs2, W, r, LAYERS);
            const int e[3] = { W - 2, 7, c };
            CHECK_INT(walk_check(q, &g, r, MC, H, s, e), NB_PATH_COMPLETE);
            tg_free(&g);
        }
        {
            /* the 2-voxel step spans the corridor: the centre must climb it, whatever the radius */
            tgrid g = walk_corridor(cliff, W, r, LAYERS);
            const int e[3] = { W - 2, 8, c };
            CHECK_INT(walk_check(q, &g, r, MC, H, s, e), NB_PATH_PARTIAL);
            uint32_t n = 0;
            int st = -1;
            const nb_voxel_path_params p = mkp(NB_VOXEL_WALK, H, r, MC, 0);
            CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
            CHECK(n > 0 && g_path[3 * (n - 1)] <= 6); /* stopped below the step */
            /* with max_climb 2 it is a step like the others */
            CHECK_INT(walk_check(q, &g, r, 2, H, s, e), NB_PATH_COMPLETE);
            tg_free(&g);
        }
        /* flat corridor, one obstacle column at x = 8 */
        const int e[3] = { W - 2, 1, c };
        for (int kind = 0; kind < 6; ++kind) {
            if (r == 0 && kind >= 2)
                break; /* the rest is about the footprint off the centre column */
            tgrid g = walk_corridor(flat, W, r, LAYERS);
            int want = NB_PATH_PARTIAL;
            switch (kind) {
            case 0: /* ceiling over the centre column, clearance h - 1 */
                tg_set(&g, 8, H, c);
                break;
            case 1: /* clearance exactly h over the centre column */
                tg_set(&g, 8, H + 1, c);
                want = NB_PATH_COMPLETE;
                break;
            case 2: /* clutter max_climb high under the body, beside the centre column: stepped over */
                tg_box(&g, 8, 8, 1, MC, c + 1, c + 1);
                want = NB_PATH_COMPLETE;
                break;
            case 3: /* the same clutter with h - max_climb of clearance above it: fits exactly */
                tg_box(&g, 8, 8, 1, MC, c + 1, c + 1);
                tg_set(&g, 8, H + 1, c + 1);
                want = NB_PATH_COMPLETE;
                break;
            case 4: /* ... and with one less: blocked */
                tg_box(&g, 8, 8, 1, MC, c + 1, c + 1);
                tg_set(&g, 8, H, c + 1);
                break;
            case 5: /* clutter higher than the ring allows (max_climb + 1 at ring 1): blocked */
                tg_box(&g, 8, 8, 1, MC + 1, c + 1, c + 1);
                break;
            }
            const int got = walk_check(q, &g, r, MC, H, s, e);
            CHECK_INT(got, want);
            if (got != want)
                fprintf(stderr, "    radius %d obstacle %d\n", r, kind);
            tg_free(&g);
        }
        if (r == 2) {
            /* at ring 2, ground up to 2 * max_climb under the body is fine, one more is not */
            tgrid g = walk_corridor(flat, W, r, LAYERS);
            tg_box(&g, 8, 8, 1, 2 * MC, c + 2, c + 2);
            CHECK_INT(walk_check(q, &g, r, MC, H, s, e), NB_PATH_COMPLETE);
            tg_set(&g, 8, 2 * MC + 1, c + 2);
            CHECK_INT(walk_check(q, &g, r, MC, H, s, e), NB_PATH_PARTIAL);
            tg_free(&g);
            /* something as tall as the agent is a wall at any ring, however high max_climb */
            g = walk_corridor(flat, W, r, LAYERS);
            tg_box(&g, 8, 8, 1, H, c + 2, c + 2);
            CHECK_INT(walk_check(q, &g, r, 3, H, s, e), NB_PATH_PARTIAL);
            tg_free(&g);
        }
    }
    nb_voxel_query_destroy(ctx, q);
}

static void test_walk_no_corner_cutting(void)
{
    tgrid g = tg_new(10, 6, 10, 0.3f, 0.2f);
    tg_box(&g, 0, 9, 0, 0, 0, 9);
    tg_box(&g, 5, 5, 1, 3, 5, 5); /* a pillar */
    nb_voxel_query* q = new_query(0);
    const int s[3] = { 4, 1, 5 }, e[3] = { 5, 1, 6 };
    uint32_t n = 0;
    int st = -1;
    const nb_voxel_path_params p = mkp(NB_VOXEL_WALK, 2, 0, 1, 0);
    CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK_INT(n, 3); /* around the pillar's corner, not across it */
    CHECK(t_path_legal(&g, &p, g_path, n, s));
    CHECK_NEAR(t_path_len(&g, g_path, n), 0.6, 1e-5);
    /* a low bump (1 voxel) in the corner column: still no cut with max_climb 0 */
    tgrid g2 = tg_new(10, 6, 10, 0.3f, 0.2f);
    tg_box(&g2, 0, 9, 0, 0, 0, 9);
    tg_set(&g2, 5, 1, 5);
    const nb_voxel_path_params p0 = mkp(NB_VOXEL_WALK, 2, 0, 0, 0);
    CHECK_INT(find(q, &g2, &p0, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(n, 3);
    /* with max_climb 1 the bump is a walkable column, so the diagonal is allowed */
    const nb_voxel_path_params p1 = mkp(NB_VOXEL_WALK, 2, 0, 1, 0);
    CHECK_INT(find(q, &g2, &p1, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(n, 2);
    /* fly cannot cut the pillar's edge either */
    const int fs[3] = { 4, 2, 5 }, fe[3] = { 5, 2, 6 };
    const nb_voxel_path_params pf = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    CHECK_INT(find(q, &g, &pf, fs, fe, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(n, 3);
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
    tg_free(&g2);
}

static void test_climb_wall_and_ledge(void)
{
    /* floor at layer 0, a block x 5..7, layers 0..4, all z: its top floor is layer 5 */
    tgrid g = tg_new(10, 9, 5, 0.3f, 0.2f);
    tg_box(&g, 0, 9, 0, 0, 0, 4);
    tg_box(&g, 5, 7, 0, 4, 0, 4);
    nb_voxel_query* q = new_query(0);
    const int s[3] = { 2, 1, 2 }, e[3] = { 6, 5, 2 };
    uint32_t n = 0, nf = 0;
    int st = -1;
    const nb_voxel_path_params pc = mkp(NB_VOXEL_CLIMB, 1, 0, 0, 0);
    CHECK_INT(find(q, &g, &pc, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK(t_path_legal(&g, &pc, g_path, n, s));
    int ledge = 0, up_wall = 0;
    for (uint32_t i = 0; i < n; ++i) {
        ledge |= g_path[3 * i] == 4 && g_path[3 * i + 1] == 5; /* rounds the ledge beside the top */
        up_wall |= g_path[3 * i] == 4 && g_path[3 * i + 1] == 3;
        CHECK(t_can_be(&g, &pc, g_path[3 * i], g_path[3 * i + 1], g_path[3 * i + 2]));
    }
    CHECK(ledge && up_wall);
    double* dist = t_dijkstra(&g, &pc, s);
    const double climb_cost = t_path_len(&g, g_path, n);
    CHECK_NEAR(climb_cost, dist[tg_idx(&g, e[0], e[1], e[2])], 1e-3);
    free(dist);
    /* fly takes the air: strictly shorter */
    const nb_voxel_path_params pf = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    CHECK_INT(find(q, &g, &pf, s, e, g_path2, PATH_CAP, &nf, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK(t_path_legal(&g, &pf, g_path2, nf, s));
    CHECK(t_path_len(&g, g_path2, nf) < climb_cost - 1e-3);
    int airborne = 0;
    for (uint32_t i = 0; i < nf; ++i)
        airborne |= !t_can_be(&g, &pc, g_path2[3 * i], g_path2[3 * i + 1], g_path2[3 * i + 2]);
    CHECK(airborne);
    /* walk: the wall is too high for max_climb 1: partial, at the floor voxel nearest the end */
    nb_voxel_path_params pw = mkp(NB_VOXEL_WALK, 1, 0, 1, 0);
    CHECK_INT(find(q, &g, &pw, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_PARTIAL);
    CHECK(n > 0 && g_path[3 * (n - 1)] == 4 && g_path[3 * (n - 1) + 1] == 1 && g_path[3 * (n - 1) + 2] == 2);
    /* ... and with max_climb 4 it steps right up */
    pw.max_climb = 4;
    CHECK_INT(find(q, &g, &pw, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK(t_path_legal(&g, &pw, g_path, n, s));
    /* the end must be a place the agent can be in each mode */
    const int air[3] = { 2, 4, 2 };
    CHECK_STATUS(ctx, find(q, &g, &pc, s, air, g_path, PATH_CAP, &n, &st), NB_ERR_INVALID_ARG,
                 "climb: no solid voxel touches");
    CHECK_STATUS(ctx, find(q, &g, &pw, s, air, g_path, PATH_CAP, &n, &st), NB_ERR_INVALID_ARG,
                 "walk: no solid voxel below");
    CHECK_INT(find(q, &g, &pf, s, air, g_path, PATH_CAP, &n, &st), NB_OK);
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

static void test_unreachable_partial(void)
{
    tgrid g = tg_new(10, 5, 10, 0.3f, 0.2f);
    tg_box(&g, 6, 6, 0, 4, 0, 9); /* a full wall at x = 6 */
    nb_voxel_query* q = new_query(0);
    const int s[3] = { 2, 2, 2 }, e[3] = { 8, 2, 7 };
    uint32_t n = 0;
    int st = -1;
    for (int smooth = 0; smooth <= 1; ++smooth) {
        const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, smooth);
        CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        CHECK_INT(st, NB_PATH_PARTIAL);
        CHECK(n > 0 && g_path[3 * (n - 1)] == 5 && g_path[3 * (n - 1) + 1] == 2 && g_path[3 * (n - 1) + 2] == 7);
        CHECK(smooth ? t_smooth_legal(&g, &p, g_path, n) : t_path_legal(&g, &p, g_path, n, s));
        uint32_t used = 0;
        CHECK_INT(nb_voxel_query_last_search(q, &used), 0); /* out of reach, not out of nodes */
        CHECK_INT(used, 6 * 5 * 10);                         /* every free voxel on the start's side */
    }
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

static void test_node_budget(void)
{
    tgrid g = tg_new(40, 40, 40, 0.3f, 0.2f);
    const int s[3] = { 0, 0, 0 }, e[3] = { 39, 39, 39 };
    uint32_t n = 0;
    int st = -1;
    const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    nb_voxel_query* small = new_query(200);
    uint32_t used = 1;
    CHECK_INT(nb_voxel_query_last_search(small, &used), 0); /* no search yet */
    CHECK_INT(used, 0);
    CHECK_INT(find(small, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_PARTIAL);
    CHECK_INT(nb_voxel_query_last_search(small, &used), 1); /* the pool ran out */
    CHECK_INT(used, 200);
    CHECK(n >= 2 && n <= 200);
    CHECK(t_path_legal(&g, &p, g_path, n, s));
    const int* last = &g_path[3 * (n - 1)];
    CHECK(t_len(&g, last, e) < t_len(&g, s, e) - 1.0);
    /* a buffer of max_nodes voxels always suffices */
    CHECK_INT(find(small, &g, &p, s, e, g_path, 200, &n, &st), NB_OK);
    nb_voxel_query_destroy(ctx, small);
    nb_voxel_query* big = new_query(0);
    CHECK_INT(find(big, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK_INT(n, 40); /* the diagonal */
    CHECK_INT(nb_voxel_query_last_search(big, &used), 0);
    CHECK(used >= 40 && used < 65536);
    /* a call refused on its arguments says nothing of the search before */
    const int outside[3] = { -1, 0, 0 };
    CHECK_STATUS(ctx, find(big, &g, &p, outside, e, g_path, PATH_CAP, &n, &st), NB_ERR_INVALID_ARG, "outside");
    CHECK_INT(nb_voxel_query_last_search(big, &used), 0);
    CHECK_INT(used, 0);
    /* the single-node pool: only the start */
    nb_voxel_query* one = new_query(1);
    CHECK_INT(find(one, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_PARTIAL);
    CHECK_INT(n, 1);
    CHECK_INT(find(one, &g, &p, s, s, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK_INT(n, 1);
    nb_voxel_query_destroy(ctx, one);
    nb_voxel_query_destroy(ctx, big);
    tg_free(&g);
}

/* ================================================================================================ */
/* Random grids against the brute force                                                             */
/* ================================================================================================ */

static tgrid random_grid(uint32_t* rng, int move, int w, int l, int d, int density_pct)
{
    tgrid g = tg_new(w, l, d, 0.25f + (float)(nbt_rand(rng) % 3) * 0.1f, 0.2f + (float)(nbt_rand(rng) % 2) * 0.15f);
    if (move == NB_VOXEL_WALK) { /* a height map with holes, plus a few floating slabs */
        for (int z = 0; z < d; ++z)
            for (int x = 0; x < w; ++x) {
                if (nbt_rand(rng) % 10 == 0)
                    continue;
                const int top = (int)(nbt_rand(rng) % 3);
                tg_box(&g, x, x, 0, top, z, z);
            }
        for (int k = 0; k < w * d / 6; ++k)
            tg_set(&g, (int)(nbt_rand(rng) % w), 2 + (int)(nbt_rand(rng) % (l - 2)), (int)(nbt_rand(rng) % d));
    } else {
        for (int y = 0; y < l; ++y)
            for (int z = 0; z < d; ++z)
                for (int x = 0; x < w; ++x)
                    if ((int)(nbt_rand(rng) % 100) < density_pct)
                        tg_set(&g, x, y, z);
    }
    return g;
}

static int random_place(uint32_t* rng, const tgrid* g, const nb_voxel_path_params* p, int* out)
{
    for (int tries = 0; tries < 500; ++tries) {
        out[0] = (int)(nbt_rand(rng) % g->w);
        out[1] = (int)(nbt_rand(rng) % g->l);
        out[2] = (int)(nbt_rand(rng) % g->d);
        if (t_can_be(g, p, out[0], out[1], out[2]))
            return 1;
    }
    return 0;
}

/* One search checked against the brute force: optimal cost, legal moves, the right partial end, smoothing.
 * Returns the raw search's status. */
static int check_against_brute_force(nb_voxel_query* q, const tgrid* g, const nb_voxel_path_params* p0,
                                      const int* s, const int* e)
{
    nb_voxel_path_params p = *p0;
    p.smooth = 0;
    const size_t voxels = (size_t)g->w * g->l * g->d;
    t_memo = (signed char*)malloc(voxels);
    memset(t_memo, -1, voxels);
    t_memo_grid = g;
    uint32_t n = 0, ns = 0;
    int st = -1, st2 = -1;
    CHECK_INT(find(q, g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    double* dist = t_dijkstra(g, &p, s);
    const long ei = tg_idx(g, e[0], e[1], e[2]);
    CHECK(t_path_legal(g, &p, g_path, n, s));
    if (dist[ei] >= 0) {
        CHECK_INT(st, NB_PATH_COMPLETE);
        CHECK(n > 0 && !memcmp(&g_path[3 * (n - 1)], e, 12));
        CHECK_NEAR(t_path_len(g, g_path, n), dist[ei], 1e-3 * (1.0 + dist[ei]));
    } else {
        CHECK_INT(st, NB_PATH_PARTIAL);
        /* the reachable voxel nearest the end, ties to the lowest index */
        long best = -1;
        double bd = 0;
        for (long i = 0; i < (long)g->w * g->l * g->d; ++i) {
            if (dist[i] < 0)
                continue;
            const long dx = i % g->w - e[0], dy = i / ((long)g->w * g->d) - e[1], dz = (i / g->w) % g->d - e[2];
            const double d2 = (double)(dx * dx + dz * dz) * ((double)g->cs * g->cs) +
                              (double)(dy * dy) * ((double)g->ch * g->ch);
            if (best < 0 || d2 < bd) {
                best = i;
                bd = d2;
            }
        }
        CHECK(n > 0 && tg_idx(g, g_path[3 * (n - 1)], g_path[3 * (n - 1) + 1], g_path[3 * (n - 1) + 2]) == best);
    }
    /* determinism: the same again */
    CHECK_INT(find(q, g, &p, s, e, g_path2, PATH_CAP, &ns, &st2), NB_OK);
    CHECK(ns == n && st2 == st && !memcmp(g_path, g_path2, 12 * (size_t)n));
    /* smoothing */
    p.smooth = 1;
    CHECK_INT(find(q, g, &p, s, e, g_path2, PATH_CAP, &ns, &st2), NB_OK);
    CHECK_INT(st2, st);
    CHECK(ns <= n);
    CHECK(t_subsequence(g_path2, ns, g_path, n));
    CHECK(t_smooth_legal(g, &p, g_path2, ns));
    CHECK(t_path_len(g, g_path2, ns) <= t_path_len(g, g_path, n) + 1e-6);
    free(dist);
    free(t_memo);
    t_memo = NULL;
    return st;
}

static void test_random_against_brute_force(void)
{
    nb_voxel_query* q = new_query(0);
    uint32_t rng = 12345;
    int runs = 0, complete = 0;
    for (int seed = 0; seed < 40; ++seed)
        for (int move = 0; move < 3; ++move) {
            const int h = 1 + (int)(nbt_rand(&rng) % 2), r = (int)(nbt_rand(&rng) % 2),
                      mc = (int)(nbt_rand(&rng) % 3);
            const nb_voxel_path_params p = mkp(move, h, r, mc, 0);
            tgrid g = random_grid(&rng, move, 8 + (int)(nbt_rand(&rng) % 3), 5 + (int)(nbt_rand(&rng) % 2),
                                  8 + (int)(nbt_rand(&rng) % 3), move == NB_VOXEL_CLIMB ? 12 : 20);
            int s[3], e[3];
            if (random_place(&rng, &g, &p, s) && random_place(&rng, &g, &p, e)) {
                const int before = nbt_failed_checks_;
                complete += check_against_brute_force(q, &g, &p, s, e) == NB_PATH_COMPLETE;
                if (nbt_failed_checks_ != before)
                    fprintf(stderr, "    seed %d move %d h %d r %d mc %d\n", seed, move, h, r, mc);
                ++runs;
            }
            tg_free(&g);
        }
    CHECK(runs >= 100);
    CHECK(complete >= runs / 4 && complete < runs); /* both outcomes exercised */
    nb_voxel_query_destroy(ctx, q);
}

/* Weighted A*: on the random grids, a path exactly when the brute force has one, legal, at most heuristic_weight
 * times the shortest, the same twice; where it is partial, at the same voxel (the whole reachable set was seen). */
static void test_weighted_against_brute_force(void)
{
    nb_voxel_query* q = new_query(0);
    uint32_t rng = 777;
    int runs = 0, longer = 0;
    for (int seed = 0; seed < 30; ++seed)
        for (int move = 0; move < 3; ++move) {
            nb_voxel_path_params p = mkp(move, 1 + (int)(nbt_rand(&rng) % 2), 0, (int)(nbt_rand(&rng) % 3), 0);
            p.heuristic_weight = seed % 2 ? 1.5f : 4.0f;
            tgrid g = random_grid(&rng, move, 10, 5, 10, move == NB_VOXEL_CLIMB ? 12 : 20);
            int s[3], e[3];
            if (random_place(&rng, &g, &p, s) && random_place(&rng, &g, &p, e)) {
                uint32_t n = 0, n2 = 0;
                int st = -1, st2 = -1;
                CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
                double* dist = t_dijkstra(&g, &p, s);
                const double best = dist[tg_idx(&g, e[0], e[1], e[2])];
                CHECK(t_path_legal(&g, &p, g_path, n, s));
                CHECK_INT(st, best >= 0 ? NB_PATH_COMPLETE : NB_PATH_PARTIAL);
                if (best >= 0) {
                    const double len = t_path_len(&g, g_path, n);
                    CHECK(len >= best - 1e-3 * (1.0 + best));
                    CHECK(len <= p.heuristic_weight * best + 1e-3 * (1.0 + best));
                    longer += len > best + 1e-3 * (1.0 + best);
                } else {
                    nb_voxel_path_params p1 = p;
                    p1.heuristic_weight = 0.0f;
                    CHECK_INT(find(q, &g, &p1, s, e, g_path2, PATH_CAP, &n2, &st2), NB_OK);
                    CHECK(!memcmp(&g_path[3 * (n - 1)], &g_path2[3 * (n2 - 1)], 12));
                }
                CHECK_INT(find(q, &g, &p, s, e, g_path2, PATH_CAP, &n2, &st2), NB_OK);
                CHECK(n2 == n && st2 == st && !memcmp(g_path, g_path2, 12 * (size_t)n));
                free(dist);
                ++runs;
            }
            tg_free(&g);
        }
    CHECK(runs >= 60);
    (void)longer; /* weighted paths may or may not be longer on grids this small */
    nb_voxel_query_destroy(ctx, q);
}

/* A weighted search needs fewer nodes: the smallest pool with which weight 3 flies around a wall leaves weight 1
 * short (PARTIAL). */
static void test_weighted_needs_fewer_nodes(void)
{
    tgrid g = tg_new(40, 6, 40, 0.5f, 0.5f);
    tg_box(&g, 20, 20, 0, 5, 0, 34); /* a wall across, open at z >= 35 */
    nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    const int s[3] = { 5, 2, 5 }, e[3] = { 35, 2, 5 };
    uint32_t lo = 1, hi = 40 * 6 * 40; /* hi: enough for anything */
    p.heuristic_weight = 3.0f;
    while (lo < hi) { /* the smallest pool that completes at weight 3 */
        const uint32_t mid = (lo + hi) / 2;
        nb_voxel_query* q = new_query(mid);
        uint32_t n = 0;
        int st = -1;
        CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
        nb_voxel_query_destroy(ctx, q);
        if (st == NB_PATH_COMPLETE)
            hi = mid;
        else
            lo = mid + 1;
    }
    nb_voxel_query* q = new_query(lo);
    uint32_t n = 0;
    int st = -1;
    p.heuristic_weight = 0.0f;
    CHECK_INT(find(q, &g, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_PARTIAL);
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

/* Agents wider than the fast neighbourhood (radius > 13) go through box tests: same rules. */
static void test_wide_agent_against_brute_force(void)
{
    nb_voxel_query* q = new_query(0);
    uint32_t rng = 777;
    int runs = 0;
    for (int seed = 0; seed < 3; ++seed)
        for (int move = 1; move < 3; ++move) {
            const nb_voxel_path_params p = mkp(move, 1, 14, 0, 0);
            tgrid g = tg_new(34, 3, 34, 0.3f, 0.2f);
            for (int k = 0; k < 6; ++k)
                tg_set(&g, (int)(nbt_rand(&rng) % 34), (int)(nbt_rand(&rng) % 3), (int)(nbt_rand(&rng) % 34));
            int s[3], e[3];
            if (random_place(&rng, &g, &p, s) && random_place(&rng, &g, &p, e)) {
                check_against_brute_force(q, &g, &p, s, e);
                ++runs;
            }
            tg_free(&g);
        }
    CHECK(runs >= 3);
    nb_voxel_query_destroy(ctx, q);
}

/* Every radius class of the neighbourhood code (packed lanes up to 5, one-word rows up to 13) and taller boxes,
 * on grids where the agent's window crosses the grid's sides: same rules as the brute force. */
static void test_radii_against_brute_force(void)
{
    static const int radii[] = { 2, 3, 5, 6, 9, 13 };
    nb_voxel_query* q = new_query(0);
    uint32_t rng = 4242;
    int runs = 0;
    for (int ri = 0; ri < (int)(sizeof(radii) / sizeof(radii[0])); ++ri)
        for (int seed = 0; seed < 2; ++seed)
            for (int move = 1; move < 3; ++move) {
                const int r = radii[ri], h = 1 + 2 * seed, side = 2 * r + 8;
                const nb_voxel_path_params p = mkp(move, h, r, 0, 0);
                tgrid g = tg_new(side, h + 3, side, 0.3f, 0.2f);
                for (int k = 0; k < 8; ++k)
                    tg_set(&g, (int)(nbt_rand(&rng) % (uint32_t)side), (int)(nbt_rand(&rng) % (uint32_t)(h + 3)),
                           (int)(nbt_rand(&rng) % (uint32_t)side));
                int s[3], e[3];
                if (random_place(&rng, &g, &p, s) && random_place(&rng, &g, &p, e)) {
                    const int before = nbt_failed_checks_;
                    check_against_brute_force(q, &g, &p, s, e);
                    if (nbt_failed_checks_ != before)
                        fprintf(stderr, "    radius %d h %d move %d\n", r, h, move);
                    ++runs;
                }
                tg_free(&g);
            }
    CHECK(runs >= 16);
    nb_voxel_query_destroy(ctx, q);
}

/* Walkers of radius 2 and 3 (several rings, so several bands of the walker's box) on sloped ground with clutter
 * and overhangs, against the brute force. */
static void test_walk_radii_against_brute_force(void)
{
    nb_voxel_query* q = new_query(0);
    uint32_t rng = 9191;
    int runs = 0, complete = 0;
    for (int r = 2; r <= 3; ++r)
        for (int seed = 0; seed < 6; ++seed) {
            const int h = 3 + 2 * (seed & 1), mc = 1 + (seed >> 1) % 2, side = 2 * r + 8;
            const nb_voxel_path_params p = mkp(NB_VOXEL_WALK, h, r, mc, 0);
            const int ax = (int)(nbt_rand(&rng) % 3), az = (int)(nbt_rand(&rng) % 3);
            tgrid g = tg_new(side, h + 8, side, 0.3f, 0.2f);
            for (int z = 0; z < side; ++z)
                for (int x = 0; x < side; ++x)
                    tg_box(&g, x, x, 0, (x * ax + z * az) / 4, z, z); /* slopes of up to 1 per 2 columns */
            for (int k = 0; k < 8; ++k) { /* clutter 1..h+1 high */
                const int x = (int)(nbt_rand(&rng) % (uint32_t)side), z = (int)(nbt_rand(&rng) % (uint32_t)side);
                const int base = (x * ax + z * az) / 4 + 1;
                tg_box(&g, x, x, base, base + (int)(nbt_rand(&rng) % (uint32_t)(h + 1)), z, z);
            }
            for (int k = 0; k < 6; ++k) /* overhangs */
                tg_set(&g, (int)(nbt_rand(&rng) % (uint32_t)side), 3 + (int)(nbt_rand(&rng) % (uint32_t)(h + 4)),
                       (int)(nbt_rand(&rng) % (uint32_t)side));
            int s[3], e[3];
            if (random_place(&rng, &g, &p, s) && random_place(&rng, &g, &p, e)) {
                const int before = nbt_failed_checks_;
                complete += check_against_brute_force(q, &g, &p, s, e) == NB_PATH_COMPLETE;
                if (nbt_failed_checks_ != before)
                    fprintf(stderr, "    walk radius %d h %d mc %d seed %d\n", r, h, mc, seed);
                ++runs;
            }
            tg_free(&g);
        }
    CHECK(runs >= 8);
    CHECK(complete >= 2);
    nb_voxel_query_destroy(ctx, q);
}

/* ================================================================================================ */
/* Nearest                                                                                          */
/* ================================================================================================ */

static void test_nearest(void)
{
    tgrid g = tg_new(12, 6, 12, 0.3f, 0.2f);
    tg_box(&g, 0, 11, 0, 0, 0, 11);
    tg_box(&g, 3, 5, 1, 3, 3, 5); /* a block with its top at layer 4 */
    nb_voxel_query* q = new_query(0);
    const nb_voxel_grid v = tg_view(&g);
    int32_t out[3] = { -7, -7, -7 };
    int found = -1;
    const nb_voxel_path_params pw = mkp(NB_VOXEL_WALK, 2, 0, 1, 0);
    /* brute force over the cube, for a few centres, inside and outside the grid */
    const int centres[][3] = { { 4, 5, 4 }, { 4, 2, 4 }, { 0, 5, 0 }, { 8, 3, 2 }, { -3, 1, 6 }, { 20, 9, -4 } };
    for (int c = 0; c < 6; ++c)
        for (int move = 0; move < 3; ++move) {
            const nb_voxel_path_params p = mkp(move, 2, 0, 1, 0);
            for (int md = 0; md <= 9; md += 3) {
                found = -1;
                CHECK_INT(nb_voxel_nearest(q, &v, &p, centres[c], md, out, &found), NB_OK);
                long best = -1;
                double bd = 0;
                for (int y = 0; y < g.l; ++y)
                    for (int z = 0; z < g.d; ++z)
                        for (int x = 0; x < g.w; ++x) {
                            const int* k = centres[c];
                            if (abs(x - k[0]) > md || abs(y - k[1]) > md || abs(z - k[2]) > md ||
                                !t_can_be(&g, &p, x, y, z))
                                continue;
                            const double d2 = (double)((x - k[0]) * (x - k[0]) + (z - k[2]) * (z - k[2])) *
                                                  ((double)g.cs * g.cs) +
                                              (double)((y - k[1]) * (y - k[1])) * ((double)g.ch * g.ch);
                            if (best < 0 || d2 < bd) {
                                best = tg_idx(&g, x, y, z);
                                bd = d2;
                            }
                        }
                CHECK_INT(found, best >= 0);
                if (best >= 0 && found == 1)
                    CHECK_INT(tg_idx(&g, out[0], out[1], out[2]), best);
            }
        }
    /* on the block's top from just above it */
    const int above[3] = { 4, 5, 4 };
    CHECK_INT(nb_voxel_nearest(q, &v, &pw, above, 3, out, &found), NB_OK);
    CHECK(found == 1 && out[0] == 4 && out[1] == 4 && out[2] == 4);
    /* nothing in range: found 0, out untouched */
    out[0] = out[1] = out[2] = -7;
    const int far[3] = { 40, 40, 40 };
    CHECK_INT(nb_voxel_nearest(q, &v, &pw, far, 5, out, &found), NB_OK);
    CHECK(found == 0 && out[0] == -7 && out[1] == -7 && out[2] == -7);
    CHECK_STATUS(ctx, nb_voxel_nearest(q, &v, &pw, far, -1, out, &found), NB_ERR_INVALID_ARG, "max_distance");
    CHECK_STATUS(ctx, nb_voxel_nearest(q, &v, &pw, NULL, 1, out, &found), NB_ERR_NULL_ARG, "voxel");
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

/* ================================================================================================ */
/* Errors, buffers, allocation                                                                      */
/* ================================================================================================ */

/* The sliced search: random slice sizes give nb_voxel_find_path's path, status, pool verdict and node count, on
 * the random grids of every mode, weighted or not, smoothed or not, with pools that run out. */
static void test_sliced_same_as_whole(void)
{
    uint32_t rng = 4242;
    int runs = 0, multi = 0, exhausted = 0;
    for (int seed = 0; seed < 36; ++seed) {
        const int move = seed % 3;
        nb_voxel_path_params p = mkp(move, 1 + (int)(nbt_rand(&rng) % 2), (int)(nbt_rand(&rng) % 2),
                                     (int)(nbt_rand(&rng) % 3), (int)(nbt_rand(&rng) % 2));
        p.heuristic_weight = seed % 4 == 3 ? 2.0f : 0.0f;
        const uint32_t pool = seed % 5 == 4 ? 40 : 0; /* small pools run out */
        nb_voxel_query* whole = new_query(pool);
        nb_voxel_query* sliced = new_query(pool);
        tgrid g = random_grid(&rng, move, 12, 6, 12, move == NB_VOXEL_CLIMB ? 12 : 20);
        const nb_voxel_grid v = tg_view(&g);
        for (int pair = 0; pair < 4; ++pair) {
            int s[3], e[3];
            if (!random_place(&rng, &g, &p, s) || !random_place(&rng, &g, &p, e))
                continue;
            uint32_t n = 0, n2 = 0, nodes = 0, nodes2 = 0;
            int st = -1, st2 = -1, done = 0, slices = 0;
            CHECK_INT(nb_voxel_find_path(whole, &v, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
            const int ex = nb_voxel_query_last_search(whole, &nodes);
            CHECK_INT(nb_voxel_find_path_begin(sliced, &v, &p, s, e), NB_OK);
            while (!done) {
                CHECK_INT(nb_voxel_find_path_step(sliced, 1 + nbt_rand(&rng) % 7, &done), NB_OK);
                if (++slices > 100000)
                    break;
            }
            CHECK_INT(nb_voxel_find_path_step(sliced, 5, &done), NB_OK); /* a finished search stays finished */
            CHECK_INT(done, 1);
            CHECK_INT(nb_voxel_find_path_end(sliced, g_path2, PATH_CAP, &n2, &st2), NB_OK);
            CHECK_INT(nb_voxel_query_last_search(sliced, &nodes2), ex);
            CHECK(n2 == n && st2 == st && nodes2 == nodes && !memcmp(g_path, g_path2, 12 * (size_t)n));
            multi += slices > 1;
            exhausted += ex;
            ++runs;
        }
        tg_free(&g);
        nb_voxel_query_destroy(ctx, whole);
        nb_voxel_query_destroy(ctx, sliced);
    }
    CHECK(runs >= 80);
    CHECK(multi >= runs / 2);
    CHECK(exhausted > 0);
}

/* The sliced tests' grid: 30 x 4 x 30 with a wall at x = 15, open at z >= 27 (a flight from (3, 1, 3) to (27, 1, 3)
 * goes around it). */
static tgrid wall_grid(void)
{
    tgrid g = tg_new(30, 4, 30, 0.5f, 0.5f);
    tg_box(&g, 15, 15, 0, 3, 0, 26);
    return g;
}

/* Slices bounded by time (the wasm's findPathAsync): with no time at all, each slice still makes its 15 expansions
 * before the clock is read, so a long search takes many slices and ends with nb_voxel_find_path's path; with ample
 * time one slice ends it. A new pool's slots emptied by time: none of it with no time but 16K slots, then all. */
static void test_sliced_by_time(void)
{
    tgrid g = wall_grid();
    const nb_voxel_grid v = tg_view(&g);
    const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    const int s[3] = { 3, 1, 3 }, e[3] = { 27, 1, 3 };
    nb_voxel_query* whole = new_query(0);
    nb_voxel_query* q = new_query(1u << 16);
    uint32_t n = 0, n2 = 0, nodes = 0, nodes2 = 0;
    int st = -1, st2 = -1, done = 0, slices = 0;
    CHECK_INT(nb_voxel_find_path(whole, &v, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    nb_voxel_query_last_search(whole, &nodes);
    const uint32_t slots = 1u << 17; /* a power of two >= twice the pool */
    CHECK_INT(nb_voxel_query_reset_ms(q, 0.0), slots - (1u << 14));
    int resets = 1;
    while (nb_voxel_query_reset_ms(q, 0.0) > 0)
        ++resets;
    CHECK_INT(resets, (int)(slots >> 14) - 1);
    CHECK_INT(nb_voxel_find_path_begin(q, &v, &p, s, e), NB_OK);
    while (!done && slices < 100000) {
        CHECK_INT(nb_voxel_find_path_step_ms(q, 0.0, &done), NB_OK);
        ++slices;
    }
    CHECK_INT(nb_voxel_find_path_end(q, g_path2, PATH_CAP, &n2, &st2), NB_OK);
    nb_voxel_query_last_search(q, &nodes2);
    CHECK(n2 == n && st2 == st && nodes2 == nodes && !memcmp(g_path, g_path2, 12 * (size_t)n));
    CHECK(nodes > 300);
    CHECK(slices * 15 >= (int)nodes / 26 && slices > 10); /* 15 expansions a slice, each adding at most 26 nodes */
    done = 0;
    CHECK_INT(nb_voxel_find_path_begin(q, &v, &p, s, e), NB_OK);
    CHECK_INT(nb_voxel_find_path_step_ms(q, 1e9, &done), NB_OK);
    CHECK_INT(done, 1);
    CHECK_INT(nb_voxel_find_path_end(q, g_path2, PATH_CAP, &n2, &st2), NB_OK);
    CHECK(n2 == n && st2 == st && !memcmp(g_path, g_path2, 12 * (size_t)n));
    nb_voxel_query_destroy(ctx, whole);
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

/* Ending a search early gives what a pool that ran out at that point gives: a legal path to the reached voxel
 * nearest the end; and the query serves the next search as if nothing had happened. */
static void test_sliced_end_early(void)
{
    tgrid g = wall_grid();
    const nb_voxel_grid v = tg_view(&g);
    const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    const int s[3] = { 3, 1, 3 }, e[3] = { 27, 1, 3 };
    nb_voxel_query* q = new_query(0);
    uint32_t n = 0, n2 = 0, nodes = 0;
    int st = -1, st2 = -1, done = 1;
    CHECK_INT(nb_voxel_find_path_begin(q, &v, &p, s, e), NB_OK);
    CHECK_INT(nb_voxel_find_path_step(q, 0, &done), NB_OK); /* no expansion: not done */
    CHECK_INT(done, 0);
    CHECK_INT(nb_voxel_find_path_step(q, 60, &done), NB_OK);
    CHECK_INT(done, 0);
    CHECK_INT(nb_voxel_find_path_end(q, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_PARTIAL);
    CHECK(t_path_legal(&g, &p, g_path, n, s));
    CHECK_INT(nb_voxel_query_last_search(q, &nodes), 0); /* not exhausted: stopped */
    CHECK(nodes > 60 && nodes < 60 * 26 + 2);
    /* the same as a pool of exactly that many nodes... */
    const double d_end = (g_path[3 * (n - 1)] - e[0]) * (g_path[3 * (n - 1)] - e[0]) +
                         (g_path[3 * (n - 1) + 2] - e[2]) * (g_path[3 * (n - 1) + 2] - e[2]);
    CHECK(d_end < (s[0] - e[0]) * (s[0] - e[0])); /* it went towards the end */
    /* ...and the next search on the query is the full one */
    CHECK_INT(nb_voxel_find_path(q, &v, &p, s, e, g_path2, PATH_CAP, &n2, &st2), NB_OK);
    CHECK_INT(st2, NB_PATH_COMPLETE);
    nb_voxel_query* fresh = new_query(0);
    CHECK_INT(nb_voxel_find_path(fresh, &v, &p, s, e, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK(n == n2 && st == st2 && !memcmp(g_path, g_path2, 12 * (size_t)n));
    nb_voxel_query_destroy(ctx, fresh);

    /* the end reached but not yet expanded: COMPLETE, as with a pool that runs out */
    const int near_end[3] = { 4, 1, 3 };
    CHECK_INT(nb_voxel_find_path_begin(q, &v, &p, s, near_end), NB_OK);
    CHECK_INT(nb_voxel_find_path_step(q, 1, &done), NB_OK); /* the start's expansion reaches its neighbour */
    CHECK_INT(nb_voxel_find_path_end(q, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK(n == 2 && !memcmp(&g_path[3], near_end, 12));
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

/* Misuse: step or end with no search, a failed begin abandons the search in progress, so does a whole search;
 * a finished search ended twice is refused the second time. */
static void test_sliced_misuse(void)
{
    tgrid g = tg_new(8, 3, 8, 0.5f, 0.5f);
    const nb_voxel_grid v = tg_view(&g);
    const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    const int s[3] = { 1, 1, 1 }, e[3] = { 6, 1, 6 }, out[3] = { 9, 1, 1 };
    nb_voxel_query* q = new_query(0);
    uint32_t n = 0;
    int st = -1, done = 7;
    CHECK_STATUS(ctx, nb_voxel_find_path_step(q, 10, &done), NB_ERR_INVALID_ARG,
                 "nb_voxel_find_path_step: no search in progress");
    CHECK_INT(done, 0);
    CHECK_STATUS(ctx, nb_voxel_find_path_end(q, g_path, PATH_CAP, &n, &st), NB_ERR_INVALID_ARG,
                 "nb_voxel_find_path_end: no search in progress");
    CHECK_INT(st, NB_PATH_NONE);
    CHECK_INT(nb_voxel_find_path_step(q, 10, NULL), NB_ERR_NULL_ARG);
    CHECK_INT(nb_voxel_find_path_step(NULL, 10, &done), NB_ERR_NULL_ARG);
    CHECK_INT(nb_voxel_find_path_end(NULL, g_path, PATH_CAP, &n, &st), NB_ERR_NULL_ARG);

    CHECK_INT(nb_voxel_find_path_begin(q, &v, &p, s, e), NB_OK);
    CHECK_STATUS(ctx, nb_voxel_find_path_begin(q, &v, &p, s, out), NB_ERR_INVALID_ARG,
                 "nb_voxel_find_path_begin: end (9, 1, 1) is outside the grid");
    CHECK_INT(nb_voxel_find_path_step(q, 10, &done), NB_ERR_INVALID_ARG); /* abandoned */

    CHECK_INT(nb_voxel_find_path_begin(q, &v, &p, s, e), NB_OK);
    CHECK_INT(nb_voxel_find_path(q, &v, &p, e, s, g_path, PATH_CAP, &n, &st), NB_OK);
    CHECK_INT(nb_voxel_find_path_step(q, 10, &done), NB_ERR_INVALID_ARG); /* the whole search replaced it */

    CHECK_INT(nb_voxel_find_path_begin(q, &v, &p, s, e), NB_OK);
    CHECK_INT(nb_voxel_find_path_step(q, UINT32_MAX, &done), NB_OK);
    CHECK_INT(done, 1);
    CHECK_INT(nb_voxel_find_path_end(q, g_path, 1, &n, &st), NB_ERR_BUFFER_TOO_SMALL);
    CHECK(n > 1);
    CHECK_INT(nb_voxel_find_path_end(q, g_path, PATH_CAP, &n, &st), NB_ERR_INVALID_ARG);
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

static void test_validation(void)
{
    tgrid g = tg_new(10, 4, 8, 0.3f, 0.2f);
    tg_box(&g, 0, 9, 0, 0, 0, 7);
    nb_voxel_query* q = new_query(0);
    nb_voxel_grid v = tg_view(&g);
    nb_voxel_path_params p = mkp(NB_VOXEL_WALK, 2, 0, 1, 0);
    const int s[3] = { 1, 1, 1 }, e[3] = { 8, 1, 6 };
    uint32_t n = 7;
    int st = 7;
#define FP(grid, params, a, b) nb_voxel_find_path(q, grid, params, a, b, g_path, PATH_CAP, &n, &st)
    CHECK_INT(FP(&v, &p, s, e), NB_OK);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK_INT(nb_voxel_find_path(NULL, &v, &p, s, e, g_path, PATH_CAP, &n, &st), NB_ERR_NULL_ARG);
    CHECK_STATUS(ctx, FP(NULL, &p, s, e), NB_ERR_NULL_ARG, "nb_voxel_find_path: grid is NULL");
    CHECK_STATUS(ctx, FP(&v, NULL, s, e), NB_ERR_NULL_ARG, "params is NULL");
    CHECK_STATUS(ctx, FP(&v, &p, NULL, e), NB_ERR_NULL_ARG, "start is NULL");
    CHECK_STATUS(ctx, FP(&v, &p, s, NULL), NB_ERR_NULL_ARG, "end is NULL");
    CHECK_STATUS(ctx, nb_voxel_find_path(q, &v, &p, s, e, g_path, PATH_CAP, NULL, &st), NB_ERR_NULL_ARG, "path_count");
    CHECK_STATUS(ctx, nb_voxel_find_path(q, &v, &p, s, e, g_path, PATH_CAP, &n, NULL), NB_ERR_NULL_ARG, "status");
    CHECK_STATUS(ctx, nb_voxel_find_path(q, &v, &p, s, e, NULL, 5, &n, &st), NB_ERR_NULL_ARG, "path is NULL");
    nb_voxel_grid bad = v;
    bad.words = NULL;
    CHECK_STATUS(ctx, FP(&bad, &p, s, e), NB_ERR_NULL_ARG, "grid->words");
    bad = v;
    bad.dims[1] = 0;
    CHECK_STATUS(ctx, FP(&bad, &p, s, e), NB_ERR_INVALID_ARG, "grid->dims[1] must be 1..2^30 (got 0)");
    bad = v;
    bad.dims[0] = 1 << 16;
    bad.dims[2] = 1 << 16;
    CHECK_STATUS(ctx, FP(&bad, &p, s, e), NB_ERR_INVALID_ARG, "2^32");
    bad = v;
    bad.cell_size = -1.0f;
    CHECK_STATUS(ctx, FP(&bad, &p, s, e), NB_ERR_INVALID_ARG, "grid->cell_size must be finite and > 0 (got -1)");
    bad = v;
    bad.cell_height = NAN;
    CHECK_STATUS(ctx, FP(&bad, &p, s, e), NB_ERR_INVALID_ARG, "grid->cell_height");
    bad = v;
    bad.cell_size = INFINITY;
    CHECK_STATUS(ctx, FP(&bad, &p, s, e), NB_ERR_INVALID_ARG, "grid->cell_size");
    nb_voxel_path_params bp = p;
    bp.move = 3;
    CHECK_STATUS(ctx, FP(&v, &bp, s, e), NB_ERR_INVALID_ARG, "params->move must be 0 (walk), 1 (climb) or 2 (fly) (got 3)");
    bp = p;
    bp.agent_height = 0;
    CHECK_STATUS(ctx, FP(&v, &bp, s, e), NB_ERR_INVALID_ARG, "nb_voxel_find_path: params->agent_height must be >= 1");
    bp = p;
    bp.agent_radius = -1;
    CHECK_STATUS(ctx, FP(&v, &bp, s, e), NB_ERR_INVALID_ARG, "params->agent_radius must be 0..4096 (got -1)");
    bp = p;
    bp.agent_radius = 5000;
    CHECK_STATUS(ctx, FP(&v, &bp, s, e), NB_ERR_INVALID_ARG, "agent_radius");
    bp = p;
    bp.max_climb = 4097;
    CHECK_STATUS(ctx, FP(&v, &bp, s, e), NB_ERR_INVALID_ARG, "params->max_climb must be 0..4096 (got 4097)");
    bp = p;
    bp.smooth = 2;
    CHECK_STATUS(ctx, FP(&v, &bp, s, e), NB_ERR_INVALID_ARG, "params->smooth");
    const int out1[3] = { 3, -1, 2 }, out2[3] = { 10, 1, 1 };
    CHECK_STATUS(ctx, FP(&v, &p, out1, e), NB_ERR_INVALID_ARG, "start (3, -1, 2) is outside the grid 10 x 4 x 8");
    CHECK_STATUS(ctx, FP(&v, &p, s, out2), NB_ERR_INVALID_ARG, "end (10, 1, 1) is outside the grid");
    const int floating[3] = { 4, 2, 4 }, buried[3] = { 4, 0, 4 };
    CHECK_STATUS(ctx, FP(&v, &p, s, floating), NB_ERR_INVALID_ARG,
                 "end (4, 2, 4) is not a place the agent can be (walk: no solid voxel below)");
    CHECK_STATUS(ctx, FP(&v, &p, buried, e), NB_ERR_INVALID_ARG, "start (4, 0, 4) is not a place the agent can be (its box");
    bp = p;
    bp.agent_height = 4; /* layers 1..4 do not fit a 4-layer grid's top? they do: outside is free space */
    CHECK_INT(FP(&v, &bp, s, e), NB_OK);
#undef FP
    nb_voxel_query* q2 = (nb_voxel_query*)1;
    CHECK_STATUS(ctx, nb_voxel_query_create(ctx, (1u << 22) + 1, &q2), NB_ERR_INVALID_ARG, "max_nodes");
    CHECK(q2 == NULL);
    CHECK_STATUS(ctx, nb_voxel_query_create(ctx, 0, NULL), NB_ERR_NULL_ARG, "out");
    CHECK_INT(nb_voxel_query_create(NULL, 0, &q2), NB_ERR_NULL_ARG);
    nb_voxel_query_destroy(ctx, NULL);
    int32_t o[3];
    int found;
    CHECK_STATUS(ctx, nb_voxel_nearest(q, &v, NULL, s, 1, o, &found), NB_ERR_NULL_ARG, "nb_voxel_nearest: params is NULL");
    CHECK_STATUS(ctx, nb_voxel_nearest(q, &v, &bp, s, 1, o, NULL), NB_ERR_NULL_ARG, "found");
    bp.move = -1;
    CHECK_STATUS(ctx, nb_voxel_nearest(q, &v, &bp, s, 1, o, &found), NB_ERR_INVALID_ARG, "nb_voxel_nearest: params->move");
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

static void test_buffer_too_small(void)
{
    tgrid g = tg_new(12, 3, 3, 0.3f, 0.2f);
    nb_voxel_query* q = new_query(0);
    const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    const int s[3] = { 0, 1, 1 }, e[3] = { 11, 1, 1 };
    uint32_t n = 0;
    int st = -1;
    int32_t small[3 * 4];
    CHECK_STATUS(ctx, find(q, &g, &p, s, e, small, 4, &n, &st), NB_ERR_BUFFER_TOO_SMALL, "needs 12 voxels");
    CHECK_INT(n, 12);
    CHECK_INT(st, NB_PATH_COMPLETE);
    CHECK_STATUS(ctx, find(q, &g, &p, s, e, NULL, 0, &n, &st), NB_ERR_BUFFER_TOO_SMALL, "capacity 0");
    CHECK_INT(n, 12);
    CHECK_INT(find(q, &g, &p, s, e, g_path, 12, &n, &st), NB_OK);
    CHECK_INT(n, 12);
    /* smoothed: the straight line is two voxels */
    const nb_voxel_path_params ps = mkp(NB_VOXEL_FLY, 1, 0, 0, 1);
    CHECK_INT(find(q, &g, &ps, s, e, small, 2, &n, &st), NB_OK);
    CHECK_INT(n, 2);
    CHECK(!memcmp(small, s, 12) && !memcmp(&small[3], e, 12));
    nb_voxel_query_destroy(ctx, q);
    tg_free(&g);
}

static void test_out_of_memory(void)
{
    tgrid g = tg_new(8, 4, 8, 0.3f, 0.2f);
    tg_box(&g, 4, 4, 0, 2, 0, 6);
    const nb_voxel_path_params p = mkp(NB_VOXEL_FLY, 1, 0, 0, 1);
    const int s[3] = { 1, 1, 1 }, e[3] = { 6, 1, 1 };
    int succeeded = 0;
    for (long fail = 1; fail < 50 && !succeeded; ++fail) {
        nbt_alloc a;
        nb_context* c = nbt_failing_context(&a, fail);
        if (!c)
            break;
        nb_voxel_query* q = (nb_voxel_query*)1;
        const nb_status st = nb_voxel_query_create(c, 500, &q);
        if (st == NB_OK) {
            succeeded = 1;
            uint32_t n = 0;
            int ps = -1;
            const nb_voxel_grid v = tg_view(&g);
            const long calls = a.calls;
            CHECK_INT(nb_voxel_find_path(q, &v, &p, s, e, g_path, PATH_CAP, &n, &ps), NB_OK);
            CHECK_INT(ps, NB_PATH_COMPLETE);
            CHECK_INT(a.calls, calls); /* searches never allocate */
            nb_voxel_query_destroy(c, q);
        } else {
            CHECK_INT(st, NB_ERR_OUT_OF_MEMORY);
            CHECK(q == NULL);
            CHECK(strstr(nb_context_message(c), "nb_voxel_query_create: out of memory") != NULL);
        }
        CHECK_INT(a.live, 1); /* only the context */
        nb_context_destroy(c);
    }
    CHECK(succeeded);
    tg_free(&g);
}

/* The brute force's nearest: lowest linear index among the least distances within the cube md and max_d2. */
static long t_nearest(const tgrid* g, const nb_voxel_path_params* p, const int* k, int md, double max_d2)
{
    long best = -1;
    double bd = 0;
    for (int y = 0; y < g->l; ++y)
        for (int z = 0; z < g->d; ++z)
            for (int x = 0; x < g->w; ++x) {
                if (abs(x - k[0]) > md || abs(y - k[1]) > md || abs(z - k[2]) > md)
                    continue;
                const double d2 = (double)((x - k[0]) * (x - k[0]) + (z - k[2]) * (z - k[2])) * ((double)g->cs * g->cs) +
                                  (double)((y - k[1]) * (y - k[1])) * ((double)g->ch * g->ch);
                if (d2 > max_d2 || (best >= 0 && d2 >= bd) || !t_can_be(g, p, x, y, z))
                    continue;
                best = tg_idx(g, x, y, z);
                bd = d2;
            }
    return best;
}

/* Wide scans (agents with big boxes, far searches, open space) switch to a table of solid counts part way: the
 * answers stay the brute force's, with and without a distance bound, and when the table cannot be allocated. */
static void test_nearest_wide_scans(void)
{
    uint32_t rng = 4242;
    int tabled = 0, runs = 0;
    for (int trial = 0; trial < 90; ++trial) {
        const int move = trial % 3;
        const int w = 14 + (int)(nbt_rand(&rng) % 14), l = 8 + (int)(nbt_rand(&rng) % 24), d = 14 + (int)(nbt_rand(&rng) % 14);
        tgrid g = random_grid(&rng, move, w, l, d, 2 + (int)(nbt_rand(&rng) % 6));
        const nb_voxel_path_params p =
            mkp(move, 1 + (int)(nbt_rand(&rng) % 6), (int)(nbt_rand(&rng) % 5), (int)(nbt_rand(&rng) % 3), 0);
        const nb_voxel_grid v = tg_view(&g);
        const int k[3] = { (int)(nbt_rand(&rng) % (uint32_t)(w + 8)) - 4, (int)(nbt_rand(&rng) % (uint32_t)(l + 8)) - 4,
                           (int)(nbt_rand(&rng) % (uint32_t)(d + 8)) - 4 };
        const int md = (int)(nbt_rand(&rng) % (trial % 2 ? 9u : 30u)); /* small: the scan stops inside the grid */
        const double radius = (double)(nbt_rand(&rng) % 60) * 0.1;
        const double max_d2 = trial % 4 == 0 ? INFINITY : radius * radius;
        const long want = t_nearest(&g, &p, k, md, max_d2);
        for (int fail = 0; fail < 2; ++fail) {
            nbt_alloc a;
            nb_context* c = nbt_failing_context(&a, 1000);
            nb_voxel_query* q = NULL;
            CHECK_INT(nb_voxel_query_create(c, 64, &q), NB_OK);
            const long before = a.calls;
            if (fail)
                a.fail_at = a.calls + 1; /* the table's allocation fails: the scan goes on reading bits */
            int32_t out[3] = { -7, -7, -7 };
            int found = -1;
            CHECK_INT(nb_voxel_nearest_within(q, &v, &p, k, md, max_d2, out, &found), NB_OK);
            CHECK_INT(found, want >= 0);
            if (want >= 0 && found == 1)
                CHECK_INT(tg_idx(&g, out[0], out[1], out[2]), want);
            if (!found)
                CHECK(out[0] == -7 && out[1] == -7 && out[2] == -7);
            if (max_d2 == INFINITY) { /* the public call is the unbounded one */
                int32_t o2[3];
                int f2 = -1;
                CHECK_INT(nb_voxel_nearest(q, &v, &p, k, md, o2, &f2), NB_OK);
                CHECK(f2 == found && (!found || (o2[0] == out[0] && o2[1] == out[1] && o2[2] == out[2])));
            }
            if (!fail && a.calls > before)
                ++tabled;
            nb_voxel_query_destroy(c, q);
            CHECK_INT(a.live, 1); /* the table is freed */
            nb_context_destroy(c);
        }
        ++runs;
        tg_free(&g);
    }
    CHECK(tabled >= 10); /* the table was used, not only the bit reads */
    CHECK(runs == 90);

    /* A climber in open space whose only surface lies just past the scanned cube (a ceiling over its top layer, a
     * floor under its bottom one, walls beside its sides): the table must reach as far as the boxes do. */
    const int c[3] = { 15, 15, 15 }, md = 8, r = 2, h = 5;
    for (int side = 0; side < 6; ++side) {
        tgrid t = tg_new(31, 40, 31, 0.3f, 0.2f);
        int want[3] = { c[0], c[1], c[2] };
        switch (side) {
        case 0: tg_box(&t, 0, 30, c[1] + md + h, c[1] + md + h, 0, 30); want[1] += md; break; /* ceiling */
        case 1: tg_box(&t, 0, 30, c[1] - md - 1, c[1] - md - 1, 0, 30); want[1] -= md; break; /* floor */
        case 2: tg_box(&t, c[0] + md + r + 1, c[0] + md + r + 1, 0, 39, 0, 30); want[0] += md; break;
        case 3: tg_box(&t, c[0] - md - r - 1, c[0] - md - r - 1, 0, 39, 0, 30); want[0] -= md; break;
        case 4: tg_box(&t, 0, 30, 0, 39, c[2] + md + r + 1, c[2] + md + r + 1); want[2] += md; break;
        default: tg_box(&t, 0, 30, 0, 39, c[2] - md - r - 1, c[2] - md - r - 1); want[2] -= md; break;
        }
        const nb_voxel_path_params p = mkp(NB_VOXEL_CLIMB, h, r, 0, 0);
        const nb_voxel_grid v = tg_view(&t);
        nbt_alloc a;
        nb_context* cx = nbt_failing_context(&a, 1000);
        nb_voxel_query* q = NULL;
        CHECK_INT(nb_voxel_query_create(cx, 64, &q), NB_OK);
        const long before = a.calls;
        int32_t out[3];
        int found = -1;
        CHECK_INT(nb_voxel_nearest(q, &v, &p, c, md, out, &found), NB_OK);
        CHECK(a.calls > before);
        CHECK_INT(found, 1);
        CHECK_INT(tg_idx(&t, out[0], out[1], out[2]), tg_idx(&t, want[0], want[1], want[2]));
        CHECK_INT(tg_idx(&t, out[0], out[1], out[2]), t_nearest(&t, &p, c, md, INFINITY));
        nb_voxel_query_destroy(cx, q);
        nb_context_destroy(cx);
        tg_free(&t);
    }

    /* Equal distances in different shells: (3, 0, 4) is found a shell before (-5, 0, 0) and (0, 0, -5), which tie
     * with it; the lowest index of the three wins. */
    tgrid t = tg_new(13, 3, 13, 0.3f, 0.2f);
    tg_box(&t, 0, 12, 0, 2, 0, 12);
    const int o[3] = { 6, 1, 6 };
    const int free_at[3][3] = { { 3, 0, 4 }, { -5, 0, 0 }, { 0, 0, -5 } };
    for (int i = 0; i < 3; ++i)
        t.words[tg_idx(&t, o[0] + free_at[i][0], o[1], o[2] + free_at[i][2]) >> 5] &=
            ~(1u << (tg_idx(&t, o[0] + free_at[i][0], o[1], o[2] + free_at[i][2]) & 31));
    nb_voxel_query* q = new_query(0);
    const nb_voxel_grid v = tg_view(&t);
    const nb_voxel_path_params pf = mkp(NB_VOXEL_FLY, 1, 0, 0, 0);
    int32_t out[3];
    int found = -1;
    CHECK_INT(nb_voxel_nearest(q, &v, &pf, o, 6, out, &found), NB_OK);
    CHECK_INT(found, 1);
    CHECK(out[0] == o[0] && out[1] == o[1] && out[2] == o[2] - 5);
    nb_voxel_query_destroy(ctx, q);
    tg_free(&t);
}

/* ================================================================================================ */
/* A real level                                                                                     */
/* ================================================================================================ */

static void test_dungeon(void)
{
    nb_bake_result res;
    if (nbt_level_bake(ctx, "dungeon.obj", NB_STAGE_FILTER, NB_KEEP_HEIGHTFIELD, &res) != 0)
        return;
    const nb_heightfield* hf = res.heightfield;
    CHECK(hf != NULL);
    if (!hf) {
        nb_bake_result_release(ctx, &res);
        return;
    }
    size_t need = 0;
    int32_t dims[3];
    CHECK_INT(nb_heightfield_occupancy(ctx, hf, NULL, 0, &need, dims), NB_ERR_BUFFER_TOO_SMALL);
    uint32_t* words = (uint32_t*)calloc(need + 1, sizeof(uint32_t));
    CHECK_INT(nb_heightfield_occupancy(ctx, hf, words, need, &need, dims), NB_OK);
    tgrid g = { dims[0], dims[1], dims[2], hf->cell_size, hf->cell_height, words };
    const nb_voxel_grid v = tg_view(&g);
    nb_voxel_query* q = new_query(0);
    /* the agent of the default config, in voxels: height 10, radius 2, climb 4 */
    nb_voxel_path_params pw = mkp(NB_VOXEL_WALK, 10, 2, 4, 0);
    /* floor places near a 3 x 3 lattice of points at the grid's bottom (mid height finds the tops of walls) */
    int32_t pts[9][3];
    int np = 0, complete = 0, pairs = 0, fly_complete = 0;
    for (int i = 0; i < 9; ++i) {
        const int32_t c[3] = { dims[0] * (1 + i % 3) / 4, 0, dims[2] * (1 + i / 3) / 4 };
        int found = 0;
        CHECK_INT(nb_voxel_nearest(q, &v, &pw, c, 120, pts[np], &found), NB_OK);
        np += found;
    }
    CHECK(np >= 3);
    for (int i = 0; i < np; ++i)
        for (int j = i + 1; j < np && j <= i + 2; ++j) {
            const int32_t* a = pts[i];
            const int32_t* b = pts[j];
            CHECK(t_can_be(&g, &pw, a[0], a[1], a[2]) && t_can_be(&g, &pw, b[0], b[1], b[2]));
            ++pairs;
            uint32_t n = 0, ns = 0;
            int st = -1, st2 = -1;
            pw.smooth = 0;
            CHECK_INT(nb_voxel_find_path(q, &v, &pw, a, b, g_path, PATH_CAP, &n, &st), NB_OK);
            CHECK(t_path_legal(&g, &pw, g_path, n, a));
            if (st == NB_PATH_COMPLETE) {
                ++complete;
                CHECK(!memcmp(&g_path[3 * (n - 1)], b, 12));
                CHECK(t_path_len(&g, g_path, n) >= t_len(&g, a, b) - 1e-4);
            }
            pw.smooth = 1;
            CHECK_INT(nb_voxel_find_path(q, &v, &pw, a, b, g_path2, PATH_CAP, &ns, &st2), NB_OK);
            CHECK_INT(st2, st);
            CHECK(ns <= n && t_smooth_legal(&g, &pw, g_path2, ns));
            CHECK(t_path_len(&g, g_path2, ns) <= t_path_len(&g, g_path, n) + 1e-6);
            /* flying between the same two places (or the nearest ones where the whole box fits: a walker may have
             * ground under the edge of its footprint) */
            const nb_voxel_path_params pf = mkp(NB_VOXEL_FLY, 10, 2, 0, 0);
            int32_t fa[3], fb[3];
            int fa_ok = 0, fb_ok = 0;
            CHECK_INT(nb_voxel_nearest(q, &v, &pf, a, 4, fa, &fa_ok), NB_OK);
            CHECK_INT(nb_voxel_nearest(q, &v, &pf, b, 4, fb, &fb_ok), NB_OK);
            if (!fa_ok || !fb_ok)
                continue;
            CHECK_INT(nb_voxel_find_path(q, &v, &pf, fa, fb, g_path, PATH_CAP, &n, &st), NB_OK);
            CHECK(t_path_legal(&g, &pf, g_path, n, fa));
            if (st == NB_PATH_COMPLETE) {
                ++fly_complete;
                CHECK(!memcmp(&g_path[3 * (n - 1)], fb, 12));
            }
        }
    CHECK(pairs >= 3);
    CHECK(complete >= 2);
    CHECK(fly_complete >= 2);
    nb_voxel_query_destroy(ctx, q);
    free(words);
    nb_bake_result_release(ctx, &res);
}

int main(void)
{
    ctx = nb_context_create(NULL);
    RUN(test_fly_around_wall);
    RUN(test_hole_fits_agent);
    RUN(test_walk_stairs);
    RUN(test_walk_ramps_wide_agents);
    RUN(test_walk_no_corner_cutting);
    RUN(test_climb_wall_and_ledge);
    RUN(test_unreachable_partial);
    RUN(test_node_budget);
    RUN(test_random_against_brute_force);
    RUN(test_weighted_against_brute_force);
    RUN(test_weighted_needs_fewer_nodes);
    RUN(test_wide_agent_against_brute_force);
    RUN(test_radii_against_brute_force);
    RUN(test_walk_radii_against_brute_force);
    RUN(test_nearest);
    RUN(test_nearest_wide_scans);
    RUN(test_sliced_same_as_whole);
    RUN(test_sliced_by_time);
    RUN(test_sliced_end_early);
    RUN(test_sliced_misuse);
    RUN(test_validation);
    RUN(test_buffer_too_small);
    RUN(test_out_of_memory);
    RUN(test_dungeon);
    nb_context_destroy(ctx);
    return nbt_finish("test_voxel_path");
}
