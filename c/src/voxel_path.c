/* 3D path search through voxels on a bit-packed occupancy grid (nb_heightfield_occupancy's layout): walk on floors,
 * climb any surface, or fly. A* over voxels with a binary heap, costs and heuristic in world units, then optional
 * string pulling. The BFS "can stay here" rule of seed 001 grown into an agent with a size.
 *
 * Exact semantics (navbake.h states them briefly; these are the precise rules):
 *  - solid(x, y, z): the voxel is inside the grid and its bit is set. Everything outside the grid is free.
 *  - The agent's box at voxel (x, y, z): columns x-r..x+r and z-r..z+r, layers y..y+h-1 (r = agent_radius,
 *    h = agent_height). free(p): no voxel of the box is solid. A path voxel always lies inside the grid.
 *  - The walker's box (Recast's walker: clearance over its own column, and the rest of its footprint only needs
 *    room above ground it could step onto): column (x+i, z+j) of the footprint, at ring d = max(|i|, |j|), holds
 *    layers y+lo(d)..y+h-1 with lo(0) = 0 and lo(d) = min(d * max_climb, h-1) for d >= 1. So the centre column
 *    needs all h layers; under the rest of the body, ground or clutter up to d * max_climb voxels above the feet is
 *    allowed (as high as d walk moves could climb), which lets a slope or stairs the centre can walk (at most
 *    max_climb per column) fit any radius; layer y+h-1 is always in the box, so anything as tall as the agent
 *    stays a wall. With max_climb 0 (or h = 1) it is the full box. walk_free(p): no voxel of it is solid.
 *  - can_be(p) for WALK: walk_free(p) and solid(x, y-1, z) (the voxel under the centre column).
 *    For CLIMB: free(p) and "clingable": a solid voxel touches the box by a face or lies diagonally below a
 *    bottom edge, i.e. a solid voxel in layer y+h over the footprint (above), or in layers y-1..y+h-1 over the
 *    footprint grown by one voxel along x or along z but not both (below, beside, and diagonally below a bottom
 *    edge; the four corner columns of the grown footprint never count). For FLY: free(p).
 *  - FLY / CLIMB moves: to the 26 neighbours (inside the grid). A move is legal when every position of its
 *    bounding block (the 2, 4 or 8 voxels p + e, e taking each non-zero component of the move or 0) is free: the
 *    agent never cuts a corner or an edge. CLIMB also needs the destination clingable (the block's other corners
 *    only need to be free: the agent swings around an edge). Cost: the move's Euclidean length (cell_size along
 *    x and z, cell_height along y).
 *  - WALK moves: to the 8 neighbouring columns. The landing in column (x+dx, z+dz) is the standable voxel y'
 *    (can_be under WALK) with |y'-y| <= max_climb, the smallest |y'-y| first and, between y-k and y+k, the lower
 *    one. Only that landing is tried. Stepping between two heights needs walk_free at every height between them
 *    over the lower end's column (headroom: up, the agent rises over its own column; down, it walks out at its
 *    height and then drops); given walk_free at the lower height, that is layers lower+h..higher+h-1 free over the
 *    whole footprint. A diagonal move also needs both orthogonal moves from the origin, (dx, 0) and (0, dz), to be
 *    legal walk moves (any landing): no corner cutting past a wall or a too high step. Cost: the Euclidean length
 *    of the move between the two voxel centres. Climb and fly keep the full box everywhere.
 *  - Smoothing (string pulling): the straight segment between kept voxels a and b is valid when the conservative
 *    supercover walk of the line a -> b (a 3D DDA between voxel centres; where the line crosses an edge or a
 *    corner exactly, one diagonal move over it) is a sequence of legal moves of the mode. For WALK the walk is the
 *    2D supercover of the columns (x, z): each step a legal walk move from the current height (its landing), and
 *    the last landing must be b's height. So every raw step is a valid segment. From the current kept voxel i the
 *    next kept one is found by galloping: try i+2, i+4, i+8, ... (and the last voxel) while the segment is valid,
 *    then bisect between the last valid and the first invalid try. Endpoints are always kept.
 *  - Search: A* popping the least cost + heuristic (see heuristic()), ties to the larger cost from
 *    the start, then heap order (which depends only on the inputs). A closed voxel is never reopened (the
 *    heuristic is consistent). heuristic_weight w > 1 multiplies the heuristic (weighted A*, still without
 *    reopening): the path costs at most w times the shortest. When a new voxel is needed and the pool is full the search stops: the path goes to
 *    the end if it was already reached (COMPLETE, then not necessarily the shortest), else PARTIAL. PARTIAL paths
 *    end at the reached voxel nearest the end (Euclidean, world units, double precision), ties to the lowest
 *    linear index.
 *
 * Memory: nb_voxel_query_create allocates nodes, heap, hash slots and a path scratch once. The hash is open
 * addressing (linear probing, Fibonacci hashing of the voxel's linear index); a slot holds the node's cost and
 * heuristic too, so testing a neighbour and lowering its cost touch only the slot (and the heap). A new search
 * empties the slots the previous one filled (one write per node it made). During the search the path scratch holds
 * each open node's heap position.
 *
 * Speed: for FLY and CLIMB with agent_radius <= 13 one expansion reads the rows around the node once (a window
 * 2r+5 bits wide, one or two words per row) and derives the free/clingable verdicts of all 26 neighbours by ORing
 * rows, instead of testing 26 boxes; up to radius 5 the three neighbour rows are ORed at once in 16-bit lanes of a
 * uint64 (hood_packed); wider agents fall back on box tests (same verdicts). The legal moves then come out of the
 * 27 verdict bits with a few masks (a bounding block is free when ANDing each position with its neighbours towards
 * the centre along x, z and y leaves it set). Walk tests its few landings directly: walk_free reads the walker's box
 * as one block per ring band (r + 1 blocks at most, fewer rows than the full box). */
#include "nb_internal.h"

#include <math.h>

#define VOXEL_DEFAULT_NODES 65536u
#define VOXEL_MAX_NODES (1u << 22)
#define VOXEL_MAX_SIZE 4096   /* agent_height, agent_radius, max_climb */
#define VOXEL_MAX_DIM (1 << 30) /* keeps every coordinate +- a few agent sizes inside int32 */
#define FAST_MAX_RADIUS 13     /* 2r+5 bit rows fit one uint32 */
#define PACK_MAX_RADIUS 5      /* 2r+5 bit rows fit a 16-bit lane: three lanes in one uint64 */


/* A search node. Its cost and heuristic live in its hash slot, which the neighbour tests read anyway. */
typedef struct vnode {
    int32_t x, y, z;
    uint32_t parent; /* node index + 1, 0 = none */
    uint32_t slot;   /* its hash slot */
} vnode;

typedef struct vheap {
    uint64_t key; /* total's bits << 32 | ~cost's bits: least total first, then larger cost */
    uint32_t node;
} vheap;

/* A hash slot: empty when node1 is 0. node1: the node's index + 1, | SLOT_CLOSED once expanded. Keeping cost and
 * heuristic here lets a neighbour test and a decrease-key run without touching the node. */
typedef struct vslot {
    uint32_t key;  /* the voxel's linear index */
    uint32_t node1;
    float cost;    /* from the start, world units */
    float hdist;   /* heuristic() times heuristic_weight: (1: a lower bound of) the cost to the end, world units */
} vslot;

#define SLOT_CLOSED 0x80000000u

/* The grid and params as the search reads them. */
typedef struct vgrid {
    const uint32_t* words;
    int32_t d0, d1, d2; /* x, layers y, rows z */
    float cs, ch;
    int32_t move, h, r, climb_max;
    float weight; /* the heuristic's factor, >= 1 */
    const struct vsat* sat; /* when set, any_solid counts from it (nb_voxel_nearest's wide scans), else reads bits */
    /* hood_packed: row zi of the window goes to the 16-bit lanes oz whose footprint (fmul) or climb rows just
     * beyond it (emul) contain it; multiplying copies the row into each such lane */
    uint64_t fmul[2 * PACK_MAX_RADIUS + 5], emul[2 * PACK_MAX_RADIUS + 5];
} vgrid;

/* Heuristic constants: move lengths: 3-axis, xz diagonal, diagonal with y, straight x/z, straight y. */
typedef struct vheur {
    float c3, c2xz, c2y, cs, ch;
    int walk;
} vheur;

/* A search between nb_voxel_find_path_begin and _end: its grid and the A* loop's variables. */
typedef struct vsearch {
    vgrid g;
    vheur hc;
    float steps[27];    /* move lengths by nbr_index */
    uint32_t koff[27];  /* linear index offsets of the neighbours (modulo 2^32) */
    int32_t end[3];
    int smooth;
    int state;          /* SEARCH_* */
    uint32_t heap_size, target, best, best_key; /* target: the end's node once popped, else UINT32_MAX */
    double best_d2;     /* best: the reached node nearest the end, at squared distance best_d2 */
    int exhausted;
} vsearch;

enum { SEARCH_NONE = 0, SEARCH_RUNNING = 1, SEARCH_FINISHED = 2 };

struct nb_voxel_query {
    nb_context* ctx;
    uint32_t max_nodes;
    vnode* nodes;
    vheap* heap;
    vslot* slots;
    uint32_t slot_mask, slot_shift;
    uint32_t used;     /* nodes of the last search: their slots are emptied before the next one */
    uint32_t zeroed;   /* slots emptied since the pool was made (slots past it hold whatever the allocator gave) */
    int exhausted;     /* nb_voxel_query_last_search: the last search's pool ran out before the search ended */
    uint32_t last_nodes; /* and the nodes it used (0 when the last call did not search) */
    uint32_t* chain;   /* path scratch: node indices, max_nodes; during the search, each node's heap position */
    uint32_t sink;     /* where the slot prefetch's loads go, so that they are not optimized away */
    vsearch s;
};

/* ================================================================================================ */
/* Occupancy reads                                                                                  */
/* ================================================================================================ */

static inline int inside(const vgrid* g, int x, int y, int z)
{
    return (unsigned)x < (unsigned)g->d0 && (unsigned)y < (unsigned)g->d1 && (unsigned)z < (unsigned)g->d2;
}

static inline uint32_t lin(const vgrid* g, int x, int y, int z)
{
    return (uint32_t)x + (uint32_t)g->d0 * ((uint32_t)z + (uint32_t)g->d2 * (uint32_t)y);
}

static inline int solid(const vgrid* g, int x, int y, int z)
{
    if (!inside(g, x, y, z))
        return 0;
    const uint32_t i = lin(g, x, y, z);
    return (int)((g->words[i >> 5] >> (i & 31)) & 1u);
}

/* Solid counts of a box of the grid (a summed-volume table): a box's count is 8 reads, whatever its size. Built by
 * nb_voxel_nearest when testing every voxel's box one row at a time would cost more than reading the region once. */
typedef struct vsat {
    int32_t x0, y0, z0, nx, ny, nz; /* the region: grid voxels x0..x0+nx-1 and so on */
    uint32_t* sum; /* (nx+1) x (nz+1) x (ny+1): at (i, k, j) the solids of x0..x0+i-1, z0..z0+k-1, y0..y0+j-1 */
} vsat;

static inline size_t sat_at(const vsat* s, int32_t i, int32_t j, int32_t k)
{
    return ((size_t)j * (size_t)(s->nz + 1) + (size_t)k) * (size_t)(s->nx + 1) + (size_t)i;
}

/* Solids in the box (inclusive grid coordinates inside the region). Counts stay below 2^32, so the sums and
 * differences are exact in uint32 arithmetic even where a partial result wraps. */
static uint32_t sat_count(const vsat* s, int x0, int x1, int y0, int y1, int z0, int z1)
{
    const uint32_t* t = s->sum;
    const int32_t i0 = x0 - s->x0, i1 = x1 - s->x0 + 1, j0 = y0 - s->y0, j1 = y1 - s->y0 + 1, k0 = z0 - s->z0,
                  k1 = z1 - s->z0 + 1;
    return t[sat_at(s, i1, j1, k1)] - t[sat_at(s, i0, j1, k1)] - t[sat_at(s, i1, j0, k1)] - t[sat_at(s, i1, j1, k0)] +
           t[sat_at(s, i0, j0, k1)] + t[sat_at(s, i0, j1, k0)] + t[sat_at(s, i1, j0, k0)] - t[sat_at(s, i0, j0, k0)];
}

/* Any solid voxel in the box [x0, x1] x [y0, y1] x [z0, z1] (inclusive; clipped to the grid). Each row is a run of
 * bits: tested a word at a time. */
static int any_solid(const vgrid* g, int x0, int x1, int y0, int y1, int z0, int z1)
{
    x0 = nb_maxi(x0, 0);
    x1 = nb_mini(x1, g->d0 - 1);
    y0 = nb_maxi(y0, 0);
    y1 = nb_mini(y1, g->d1 - 1);
    z0 = nb_maxi(z0, 0);
    z1 = nb_mini(z1, g->d2 - 1);
    if (x0 > x1 || y0 > y1 || z0 > z1)
        return 0;
    if (g->sat)
        return sat_count(g->sat, x0, x1, y0, y1, z0, z1) != 0;
    const uint32_t* w = g->words;
    for (int y = y0; y <= y1; ++y)
        for (int z = z0; z <= z1; ++z) {
            const uint32_t b = lin(g, x0, y, z), e = b + (uint32_t)(x1 - x0);
            const uint32_t w0 = b >> 5, w1 = e >> 5;
            const uint32_t m0 = ~0u << (b & 31), m1 = ~0u >> (31 - (e & 31));
            if (w0 == w1) {
                if (w[w0] & m0 & m1)
                    return 1;
            } else {
                if (w[w0] & m0)
                    return 1;
                for (uint32_t k = w0 + 1; k < w1; ++k)
                    if (w[k])
                        return 1;
                if (w[w1] & m1)
                    return 1;
            }
        }
    return 0;
}

/* Bits of voxels xs..xs+len-1 (len <= 32) of row (layer l, row z): bit j = solid(xs + j, l, z). */
static inline uint32_t row_bits(const vgrid* g, int xs, int len, int l, int z)
{
    if ((unsigned)l >= (unsigned)g->d1 || (unsigned)z >= (unsigned)g->d2)
        return 0;
    int lo = xs, hi = xs + len - 1, shift = 0;
    if (lo < 0) {
        shift = -lo;
        lo = 0;
    }
    if (hi >= g->d0)
        hi = g->d0 - 1;
    if (lo > hi)
        return 0;
    const int n = hi - lo + 1;
    const uint32_t b = lin(g, lo, l, z), off = b & 31;
    uint64_t v = (uint64_t)g->words[b >> 5] >> off;
    if ((int)off + n > 32)
        v |= (uint64_t)g->words[(b >> 5) + 1] << (32 - off);
    v &= (n >= 32) ? 0xffffffffull : ((1ull << n) - 1);
    return (uint32_t)(v << shift);
}

static inline int box_free(const vgrid* g, int x, int y, int z)
{
    return !any_solid(g, x - g->r, x + g->r, y, y + g->h - 1, z - g->r, z + g->r);
}

/* The walker's box (see the file comment): layer y+t over the square of radius k, k the widest ring whose lo(k)
 * <= t. Since lo grows with the ring, the layers of one radius form a band: band k is lo(k)..lo(k+1)-1, the last
 * band (k = r) runs to h-1 and is never empty (lo <= h-1). */
static int walk_free(const vgrid* g, int x, int y, int z)
{
    const int r = g->r, h = g->h, climb = g->climb_max;
    int t0 = 0;
    for (int k = 0; k <= r; ++k) {
        const int t1 = k == r ? h : nb_mini((k + 1) * climb, h - 1); /* <= 4097 * 4096: no overflow */
        if (t1 > t0) {
            if (any_solid(g, x - k, x + k, y + t0, y + t1 - 1, z - k, z + k))
                return 0;
            t0 = t1;
        }
    }
    return 1;
}

/* The climb rule's surfaces (see the file comment), the box itself assumed free. */
static int clingable(const vgrid* g, int x, int y, int z)
{
    const int r = g->r, h = g->h;
    return any_solid(g, x - r - 1, x + r + 1, y - 1, y + h - 1, z - r, z + r) ||
           any_solid(g, x - r, x + r, y - 1, y + h - 1, z - r - 1, z - r - 1) ||
           any_solid(g, x - r, x + r, y - 1, y + h - 1, z + r + 1, z + r + 1) ||
           any_solid(g, x - r, x + r, y + h, y + h, z - r, z + r);
}

/* Why the agent cannot be at p: NULL when it can. */
static const char* cannot_be(const vgrid* g, int x, int y, int z)
{
    if (g->move == NB_VOXEL_WALK ? !walk_free(g, x, y, z) : !box_free(g, x, y, z))
        return "its box is not free";
    if (g->move == NB_VOXEL_WALK && !solid(g, x, y - 1, z))
        return "walk: no solid voxel below";
    if (g->move == NB_VOXEL_CLIMB && !clingable(g, x, y, z))
        return "climb: no solid voxel touches its box";
    return NULL;
}

/* ================================================================================================ */
/* Moves                                                                                            */
/* ================================================================================================ */

static inline int standable(const vgrid* g, int x, int y, int z)
{
    return y >= 1 && y < g->d1 && solid(g, x, y - 1, z) && !solid(g, x, y, z) && walk_free(g, x, y, z);
}

/* A walk move to column (x+dx, z+dz) without the diagonal rule: the landing (*ny) and its headroom. */
static int walk_land(const vgrid* g, int x, int y, int z, int dx, int dz, int* ny)
{
    const int nx = x + dx, nz = z + dz, r = g->r, h = g->h;
    if ((unsigned)nx >= (unsigned)g->d0 || (unsigned)nz >= (unsigned)g->d2)
        return 0;
    int land = -1;
    if (standable(g, nx, y, nz))
        land = y;
    for (int k = 1; land < 0 && k <= g->climb_max; ++k) {
        if (y - k < 1 && y + k >= g->d1)
            break;
        if (standable(g, nx, y - k, nz))
            land = y - k;
        else if (standable(g, nx, y + k, nz))
            land = y + k;
    }
    if (land < 0)
        return 0;
    /* headroom: walk_free at every height between, which adds only the layers above the lower box (all its columns
     * reach its top layer) */
    if (land > y && any_solid(g, x - r, x + r, y + h, land + h - 1, z - r, z + r))
        return 0; /* no room to rise over the own column */
    if (land < y && any_solid(g, nx - r, nx + r, land + h, y + h - 1, nz - r, nz + r))
        return 0; /* no room to walk out at the own height before dropping */
    *ny = land;
    return 1;
}

static int walk_step(const vgrid* g, int x, int y, int z, int dx, int dz, int* ny)
{
    int t;
    if (dx && dz && (!walk_land(g, x, y, z, dx, 0, &t) || !walk_land(g, x, y, z, 0, dz, &t)))
        return 0;
    return walk_land(g, x, y, z, dx, dz, ny);
}

static inline int nbr_index(int dx, int dy, int dz) { return (dx + 1) + 3 * ((dz + 1) + 3 * (dy + 1)); }

/* nbr_index's inverse */
static const int8_t nbr_dx[27] = { -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1, -1, 0, 1 };
static const int8_t nbr_dz[27] = { -1, -1, -1, 0, 0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1, -1, -1, -1, 0, 0, 0, 1, 1, 1 };
static const int8_t nbr_dy[27] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1 };

/* A fly or climb move by (dx, dy, dz) from a voxel where the agent can be. */
static int free_move(const vgrid* g, int x, int y, int z, int dx, int dy, int dz)
{
    const int nx = x + dx, ny = y + dy, nz = z + dz, r = g->r;
    if (!inside(g, nx, ny, nz))
        return 0;
    /* the union of the bounding block's boxes is one box */
    if (any_solid(g, nb_mini(x, nx) - r, nb_maxi(x, nx) + r, nb_mini(y, ny), nb_maxi(y, ny) + g->h - 1,
                  nb_mini(z, nz) - r, nb_maxi(z, nz) + r))
        return 0;
    return g->move != NB_VOXEL_CLIMB || clingable(g, nx, ny, nz);
}

/* Free and clingable verdicts of the 27 positions around (x, y, z) (bit nbr_index), from one read of the rows
 * around it: per layer, OR the 2r+1 rows of each neighbour's footprint (and for climb the rows just beyond it),
 * accumulate over each neighbour's layers, then shift by the neighbour's x offset. Window bit j <-> x-r-2+j. */
static void hood_fast(const vgrid* g, int x, int y, int z, uint32_t* free_bits, uint32_t* cling_bits)
{
    const int r = g->r, h = g->h, climb = g->move == NB_VOXEL_CLIMB;
    const int xs = x - r - 2, zs = z - r - 2, width = 2 * r + 5;
    const int l0 = climb ? y - 2 : y - 1, l1 = climb ? y + h + 1 : y + h;
    const int zi0 = climb ? 0 : 1, zi1 = climb ? 2 * r + 4 : 2 * r + 3;
    uint32_t v[3][3] = { { 0 } }, a[3][3] = { { 0 } }, b[3][3] = { { 0 } }, t[3][3] = { { 0 } };
    uint32_t rows[2 * FAST_MAX_RADIUS + 5];
    for (int l = nb_maxi(l0, 0); l <= l1 && l < g->d1; ++l) {
        uint32_t any = 0;
        for (int zi = zi0; zi <= zi1; ++zi) {
            rows[zi] = row_bits(g, xs, width, l, zs + zi);
            any |= rows[zi];
        }
        if (!any)
            continue;
        for (int oz = 0; oz < 3; ++oz) {
            uint32_t f = 0;
            for (int zi = oz + 1; zi <= oz + 1 + 2 * r; ++zi)
                f |= rows[zi];
            const uint32_t e = climb ? rows[oz] | rows[oz + 2 * r + 2] : 0;
            for (int oy = 0; oy < 3; ++oy) {
                const int base = y + oy - 1;
                if (l >= base && l <= base + h - 1)
                    v[oy][oz] |= f;
                if (climb) {
                    if (l >= base - 1 && l <= base + h - 1) {
                        a[oy][oz] |= f;
                        b[oy][oz] |= e;
                    } else if (l == base + h) {
                        t[oy][oz] = f;
                    }
                }
            }
        }
    }
    const uint32_t m1 = (1u << (2 * r + 1)) - 1, m3 = (1u << (2 * r + 3)) - 1;
    uint32_t fb = 0, cb = 0;
    for (int oy = 0; oy < 3; ++oy)
        for (int oz = 0; oz < 3; ++oz)
            for (int ox = 0; ox < 3; ++ox) {
                const uint32_t bit = 1u << (ox + 3 * (oz + 3 * oy));
                if (!((v[oy][oz] >> (ox + 1)) & m1))
                    fb |= bit;
                if (((a[oy][oz] >> ox) & m3) | ((b[oy][oz] >> (ox + 1)) & m1) | ((t[oy][oz] >> (ox + 1)) & m1))
                    cb |= bit;
            }
    *free_bits = fb;
    *cling_bits = cb;
}

/* OR of v >> k for k in 0..n-1: bit j then says whether any of bits j..j+n-1 was set. */
static inline uint64_t smear(uint64_t v, int n)
{
    uint64_t s = v;
    for (int k = 1; k < n; k *= 2) {
        const int step = k * 2 <= n ? k : n - k;
        s |= s >> step;
    }
    return s;
}

/* Lanes 0..2 (16 bits each) of v, bits 0..2 of each: 9 bits, bit ox + 3 * oz. */
static inline uint32_t gather9(uint64_t v)
{
    return (uint32_t)((v & 7u) | ((v >> 13) & 0x38u) | ((v >> 26) & 0x1c0u));
}

/* hood_fast's verdicts for agents with r <= PACK_MAX_RADIUS, in fewer operations: per layer the footprint ORs of
 * the three neighbour rows oz are built in the three 16-bit lanes of one uint64 (each window row multiplied into
 * the lanes it belongs to, g->fmul), so the accumulation over layers and the final shifts work on all three rows
 * at once. Rows inside the grid along x are read directly (one or two words), without row_bits' clipping. */
static inline void hood_packed(const vgrid* g, int climb, int x, int y, int z, uint32_t* free_bits,
                               uint32_t* cling_bits)
{
    const int r = g->r, h = g->h;
    const int xs = x - r - 2, zs = z - r - 2, width = 2 * r + 5;
    const int zi0 = nb_maxi(climb ? 0 : 1, -zs), zi1 = nb_mini(climb ? 2 * r + 4 : 2 * r + 3, g->d2 - 1 - zs);
    const int l0 = nb_maxi(climb ? y - 2 : y - 1, 0), l1 = nb_mini(climb ? y + h + 1 : y + h, g->d1 - 1);
    const int in_x = xs >= 0 && xs + width <= g->d0;
    const uint32_t row_mask = (1u << width) - 1, d0 = (uint32_t)g->d0;
    const uint32_t* w = g->words;
    uint64_t v[3] = { 0, 0, 0 }, a[3] = { 0, 0, 0 }, b[3] = { 0, 0, 0 }, t[3] = { 0, 0, 0 };
    for (int l = l0; l <= l1; ++l) {
        uint64_t f = 0, e = 0;
        if (in_x) {
            uint32_t bit = lin(g, xs, l, zs + zi0);
            for (int zi = zi0; zi <= zi1; ++zi, bit += d0) {
                const uint32_t off = bit & 31, wi = bit >> 5;
                uint64_t row = w[wi] >> off;
                if (off + (uint32_t)width > 32)
                    row |= (uint64_t)w[wi + 1] << (32 - off);
                row &= row_mask;
                f |= row * g->fmul[zi];
                if (climb)
                    e |= row * g->emul[zi];
            }
        } else {
            for (int zi = zi0; zi <= zi1; ++zi) {
                const uint64_t row = row_bits(g, xs, width, l, zs + zi);
                f |= row * g->fmul[zi];
                if (climb)
                    e |= row * g->emul[zi];
            }
        }
        if (!(f | e))
            continue;
        const int d = l - y; /* neighbour layer oy's box spans d = oy-1 .. oy+h-2 */
        for (int oy = 0; oy < 3; ++oy) {
            if (d >= oy - 1 && d <= oy + h - 2)
                v[oy] |= f;
            if (climb) {
                if (d >= oy - 2 && d <= oy + h - 2) {
                    a[oy] |= f;
                    b[oy] |= e;
                } else if (d == oy + h - 1) {
                    t[oy] = f;
                }
            }
        }
    }
    uint32_t fb = 0, cb = 0;
    for (int oy = 0; oy < 3; ++oy) {
        fb |= (~gather9(smear(v[oy], 2 * r + 1) >> 1) & 0x1ffu) << (9 * oy);
        if (climb)
            cb |= gather9(smear(a[oy], 2 * r + 3) | (smear(b[oy] | t[oy], 2 * r + 1) >> 1)) << (9 * oy);
    }
    *free_bits = fb;
    *cling_bits = cb;
}

/* The same verdicts by box tests, for agents too wide for hood_fast. */
static void hood_slow(const vgrid* g, int x, int y, int z, uint32_t* free_bits, uint32_t* cling_bits)
{
    uint32_t fb = 0, cb = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
            for (int dx = -1; dx <= 1; ++dx) {
                const uint32_t bit = 1u << nbr_index(dx, dy, dz);
                if (box_free(g, x + dx, y + dy, z + dz)) {
                    fb |= bit;
                    if (g->move == NB_VOXEL_CLIMB && clingable(g, x + dx, y + dy, z + dz))
                        cb |= bit;
                }
            }
    *free_bits = fb;
    *cling_bits = cb;
}

typedef struct vcand {
    int32_t x, y, z;
    uint32_t key; /* linear index */
    float step;
} vcand;

static inline float step_len(const vgrid* g, int dx, int dy, int dz)
{
    const float hx = (float)dx * g->cs, hy = (float)dy * g->ch, hz = (float)dz * g->cs;
    return sqrtf(hx * hx + hy * hy + hz * hz);
}

/* The legal moves from (x, y, z), in a fixed order. */
static int expand(const vgrid* g, const float* steps, const uint32_t* koff, int x, int y, int z, uint32_t key,
                  vcand* out)
{
    int n = 0;
    if (g->move == NB_VOXEL_WALK) {
        static const int8_t dirs[8][2] = { { -1, 0 }, { 0, 1 }, { 1, 0 }, { 0, -1 },
                                           { -1, -1 }, { -1, 1 }, { 1, 1 }, { 1, -1 } };
        int ok[4], ny;
        for (int d = 0; d < 8; ++d) {
            const int dx = dirs[d][0], dz = dirs[d][1];
            if (d < 4) {
                ok[d] = walk_land(g, x, y, z, dx, dz, &ny);
                if (!ok[d])
                    continue;
            } else {
                /* orthogonal parts: dx is direction 0 (-1) or 2 (+1), dz direction 3 (-1) or 1 (+1) */
                if (!ok[dx < 0 ? 0 : 2] || !ok[dz < 0 ? 3 : 1] || !walk_land(g, x, y, z, dx, dz, &ny))
                    continue;
            }
            out[n].x = x + dx;
            out[n].y = ny;
            out[n].z = z + dz;
            out[n].key = lin(g, x + dx, ny, z + dz);
            out[n].step = ny == y ? steps[nbr_index(dx, 0, dz)] : step_len(g, dx, ny - y, dz);
            ++n;
        }
        return n;
    }
    uint32_t fb, cb;
    if (g->r <= PACK_MAX_RADIUS && g->move == NB_VOXEL_CLIMB)
        hood_packed(g, 1, x, y, z, &fb, &cb); /* one copy per mode, the mode's tests folded away */
    else if (g->r <= PACK_MAX_RADIUS)
        hood_packed(g, 0, x, y, z, &fb, &cb);
    else if (g->r <= FAST_MAX_RADIUS)
        hood_fast(g, x, y, z, &fb, &cb);
    else
        hood_slow(g, x, y, z, &fb, &cb);
    if (g->move != NB_VOXEL_CLIMB)
        cb = ~0u;
    /* A move is legal when its whole bounding block is free: AND each position with the position nearer the
     * centre along x (the ox = 1 bits copied one to each side), then the same along z and y. */
    enum { OX1 = 0x2492492, OZ1 = 0x38 | 0x38 << 9 | 0x38 << 18, OY1 = 0x1ff << 9 };
    uint32_t m = fb | 1u << 13; /* the origin is known free */
    m &= (m & OX1) | (m & OX1) >> 1 | (m & OX1) << 1;
    m &= (m & OZ1) | (m & OZ1) >> 3 | (m & OZ1) << 3;
    m &= (m & OY1) | (m & OY1) >> 9 | (m & OY1) << 9;
    m &= cb & ~(1u << 13);
    /* neighbours outside the grid */
    if (x == 0)
        m &= ~0x1249249u;
    if (x == g->d0 - 1)
        m &= ~(0x1249249u << 2);
    if (z == 0)
        m &= ~(0x7u | 0x7u << 9 | 0x7u << 18);
    if (z == g->d2 - 1)
        m &= ~(0x1c0u | 0x1c0u << 9 | 0x1c0u << 18);
    if (y == 0)
        m &= ~0x1ffu;
    if (y == g->d1 - 1)
        m &= ~(0x1ffu << 18);
    while (m) {
        const int i = __builtin_ctz(m); /* ascending: the order of nbr_index */
        m &= m - 1;
        out[n].x = x + nbr_dx[i];
        out[n].y = y + nbr_dy[i];
        out[n].z = z + nbr_dz[i];
        out[n].key = key + koff[i];
        out[n].step = steps[i];
        ++n;
    }
    return n;
}

/* ================================================================================================ */
/* Straight segments (smoothing)                                                                    */
/* ================================================================================================ */

/* The supercover walk from a to b (see the file comment). Crossing k (0-based) of axis i happens at
 * t = (k + 1/2) / n_i; compared exactly by cross-multiplying. */
static int segment_ok(const vgrid* g, const int32_t* a, const int32_t* b)
{
    const int walk = g->move == NB_VOXEL_WALK;
    int64_t n[3], k[3] = { 0, 0, 0 };
    int s[3], cur[3] = { a[0], a[1], a[2] };
    for (int i = 0; i < 3; ++i) {
        const int64_t d = (int64_t)b[i] - a[i];
        n[i] = d < 0 ? -d : d;
        s[i] = d < 0 ? -1 : 1;
    }
    if (walk)
        n[1] = 0; /* walk follows the ground: the landing decides the height */
    for (;;) {
        int best = -1;
        for (int i = 0; i < 3; ++i)
            if (k[i] < n[i] && (best < 0 || (2 * k[i] + 1) * n[best] < (2 * k[best] + 1) * n[i]))
                best = i;
        if (best < 0)
            break;
        int o[3] = { 0, 0, 0 };
        const int64_t tn = 2 * k[best] + 1, td = n[best]; /* the crossing's t = tn / (2 td) */
        for (int i = 0; i < 3; ++i)
            if (k[i] < n[i] && (2 * k[i] + 1) * td == tn * n[i]) {
                o[i] = s[i];
                ++k[i];
            }
        if (walk) {
            int ny;
            if (!walk_step(g, cur[0], cur[1], cur[2], o[0], o[2], &ny))
                return 0;
            cur[1] = ny;
        } else {
            if (!free_move(g, cur[0], cur[1], cur[2], o[0], o[1], o[2]))
                return 0;
            cur[1] += o[1];
        }
        cur[0] += o[0];
        cur[2] += o[2];
    }
    return cur[1] == b[1];
}

/* String pulling of chain[0..n) (node indices) in place; returns the kept count. */
static uint32_t smooth_chain(const vgrid* g, const vnode* nodes, uint32_t* chain, uint32_t n)
{
    if (n <= 2)
        return n;
    uint32_t kept = 1, i = 0;
    const uint32_t last = n - 1;
    while (i < last) {
        const vnode* a = &nodes[chain[i]];
        const int32_t pa[3] = { a->x, a->y, a->z };
#define SEG_OK(j) segment_ok(g, pa, (const int32_t[3]){ nodes[chain[j]].x, nodes[chain[j]].y, nodes[chain[j]].z })
        uint32_t ok = i + 1, bad = 0, step = 2;
        for (;;) { /* gallop */
            const uint32_t j = (i + step > last || i + step < i) ? last : i + step;
            if (j <= ok)
                break;
            if (!SEG_OK(j)) {
                bad = j;
                break;
            }
            ok = j;
            if (j == last)
                break;
            step *= 2;
        }
        while (bad && bad - ok > 1) { /* bisect */
            const uint32_t mid = ok + (bad - ok) / 2;
            if (SEG_OK(mid))
                ok = mid;
            else
                bad = mid;
        }
#undef SEG_OK
        chain[kept++] = chain[ok];
        i = ok;
    }
    return kept;
}

/* ================================================================================================ */
/* Validation                                                                                       */
/* ================================================================================================ */

/* Not NB_COLD: every call passes through these, and GCC would then treat the whole search as cold code. */
static nb_status check_inputs(nb_context* ctx, const char* fn, const nb_voxel_grid* grid, const nb_voxel_path_params* p,
                              vgrid* g)
{
    if (!grid)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: grid is NULL", fn);
    if (!grid->words)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: grid->words is NULL", fn);
    if (!p)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: params is NULL", fn);
    for (int i = 0; i < 3; ++i)
        if (grid->dims[i] < 1 || grid->dims[i] > VOXEL_MAX_DIM)
            return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: grid->dims[%d] must be 1..2^30 (got %d)", fn, i,
                           grid->dims[i]);
    if ((uint64_t)grid->dims[0] * (uint64_t)grid->dims[1] * (uint64_t)grid->dims[2] >= (1ull << 32))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: grid %d x %d x %d has 2^32 voxels or more", fn, grid->dims[0],
                       grid->dims[1], grid->dims[2]);
    if (!(isfinite(grid->cell_size) && grid->cell_size > 0.0f))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: grid->cell_size must be finite and > 0 (got %g)", fn,
                       (double)grid->cell_size);
    if (!(isfinite(grid->cell_height) && grid->cell_height > 0.0f))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: grid->cell_height must be finite and > 0 (got %g)", fn,
                       (double)grid->cell_height);
    if (p->move < NB_VOXEL_WALK || p->move > NB_VOXEL_FLY)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: params->move must be 0 (walk), 1 (climb) or 2 (fly) (got %d)", fn,
                       p->move);
    if (p->agent_height < 1 || p->agent_height > VOXEL_MAX_SIZE)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: params->agent_height must be >= 1 and <= %d (got %d)", fn,
                       VOXEL_MAX_SIZE, p->agent_height);
    if (p->agent_radius < 0 || p->agent_radius > VOXEL_MAX_SIZE)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: params->agent_radius must be 0..%d (got %d)", fn, VOXEL_MAX_SIZE,
                       p->agent_radius);
    if (p->max_climb < 0 || p->max_climb > VOXEL_MAX_SIZE)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: params->max_climb must be 0..%d (got %d)", fn, VOXEL_MAX_SIZE,
                       p->max_climb);
    if (p->smooth != 0 && p->smooth != 1)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: params->smooth must be 0 or 1 (got %d)", fn, p->smooth);
    if (!(p->heuristic_weight == 0.0f || (p->heuristic_weight >= 1.0f && p->heuristic_weight <= 10.0f)))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: params->heuristic_weight must be 0, or 1..10 (got %g)", fn,
                       (double)p->heuristic_weight);
    g->weight = p->heuristic_weight > 1.0f ? p->heuristic_weight : 1.0f;
    g->sat = NULL;
    g->words = grid->words;
    g->d0 = grid->dims[0];
    g->d1 = grid->dims[1];
    g->d2 = grid->dims[2];
    g->cs = grid->cell_size;
    g->ch = grid->cell_height;
    g->move = p->move;
    g->h = p->agent_height;
    g->r = p->agent_radius;
    g->climb_max = p->max_climb;
    if (g->r <= PACK_MAX_RADIUS)
        for (int zi = 0; zi < 2 * g->r + 5; ++zi) {
            g->fmul[zi] = g->emul[zi] = 0;
            for (int oz = 0; oz < 3; ++oz) {
                if (zi >= oz + 1 && zi <= oz + 1 + 2 * g->r)
                    g->fmul[zi] |= 1ull << (16 * oz);
                if (zi == oz || zi == oz + 2 * g->r + 2)
                    g->emul[zi] |= 1ull << (16 * oz);
            }
        }
    return NB_OK;
}

static nb_status check_endpoint(nb_context* ctx, const char* fn, const char* name, const vgrid* g, const int32_t* v)
{
    if (!inside(g, v[0], v[1], v[2]))
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: %s (%d, %d, %d) is outside the grid %d x %d x %d", fn, name, v[0],
                       v[1], v[2], g->d0, g->d1, g->d2);
    const char* why = cannot_be(g, v[0], v[1], v[2]);
    if (why)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: %s (%d, %d, %d) is not a place the agent can be (%s)", fn, name,
                       v[0], v[1], v[2], why);
    return NB_OK;
}

/* ================================================================================================ */
/* Query object                                                                                     */
/* ================================================================================================ */

NB_COLD void nb_voxel_query_destroy(nb_context* ctx, nb_voxel_query* q)
{
    if (!q)
        return;
    nb_free(ctx, q->nodes);
    nb_free(ctx, q->heap);
    nb_free(ctx, q->slots);
    nb_free(ctx, q->chain);
    nb_free(ctx, q);
}

uint32_t nb_voxel_query_reset_some(nb_voxel_query* q, uint32_t budget)
{
    const uint32_t nslots = q->slot_mask + 1;
    if (q->zeroed < nslots) {
        const uint32_t n = nslots - q->zeroed < budget ? nslots - q->zeroed : budget;
        memset(q->slots + q->zeroed, 0, (size_t)n * sizeof(vslot));
        q->zeroed += n;
        if (q->zeroed < nslots)
            return nslots - q->zeroed;
        q->used = 0; /* every slot is empty */
        return 0;
    }
    const uint32_t n = q->used < budget ? q->used : budget;
    for (uint32_t i = 0; i < n; ++i)
        q->slots[q->nodes[--q->used].slot].node1 = 0;
    return q->used;
}

NB_COLD nb_status nb_voxel_query_create(nb_context* ctx, uint32_t max_nodes, nb_voxel_query** out)
{
    static const char* fn = "nb_voxel_query_create";
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: ctx is NULL", fn);
    if (max_nodes == 0)
        max_nodes = VOXEL_DEFAULT_NODES;
    if (max_nodes > VOXEL_MAX_NODES)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: max_nodes must be 0..%u (got %u)", fn, VOXEL_MAX_NODES,
                       max_nodes);
    nb_status st = NB_OK;
    nb_voxel_query* q = (nb_voxel_query*)nb_calloc(ctx, 1, sizeof(nb_voxel_query));
    if (!q)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'query' (%zu)", fn, sizeof(nb_voxel_query));
    q->ctx = ctx;
    q->max_nodes = max_nodes;
    /* slots: a power of two >= 2 * max_nodes, so linear probing runs at load <= 1/2 */
    uint32_t bits = 4;
    while ((1u << bits) < 2 * max_nodes)
        ++bits;
    q->slot_mask = (1u << bits) - 1;
    q->slot_shift = 32 - bits;
    q->nodes = (vnode*)nb_alloc(ctx, sizeof(vnode) * max_nodes);
    if (!q->nodes) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'nodes' (%u)", fn, max_nodes);
        goto cleanup;
    }
    q->heap = (vheap*)nb_alloc(ctx, sizeof(vheap) * max_nodes);
    if (!q->heap) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'heap' (%u)", fn, max_nodes);
        goto cleanup;
    }
    /* not zeroed here: nb_voxel_query_reset_some does it, a piece at a time if the caller wants (the first touch of
     * fresh memory is what costs: 128 MB of slots for 4M nodes take about half a second) */
    q->slots = (vslot*)nb_alloc(ctx, ((size_t)q->slot_mask + 1) * sizeof(vslot));
    if (!q->slots) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'slots' (%u)", fn, q->slot_mask + 1);
        goto cleanup;
    }
    q->chain = (uint32_t*)nb_alloc(ctx, sizeof(uint32_t) * max_nodes);
    if (!q->chain) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'chain' (%u)", fn, max_nodes);
        goto cleanup;
    }
    *out = q;
    return NB_OK;

cleanup:
    nb_voxel_query_destroy(ctx, q);
    return st;
}

/* ================================================================================================ */
/* Nearest                                                                                          */
/* ================================================================================================ */

static inline double dist2(const vgrid* g, int64_t dx, int64_t dy, int64_t dz)
{
    const double cs = g->cs, ch = g->ch;
    return (double)(dx * dx + dz * dz) * (cs * cs) + (double)(dy * dy) * (ch * ch);
}

/* The table nb_voxel_nearest switches to: at most this many voxels (4 bytes each), else it keeps reading bits. */
#define SAT_MAX_VOXELS (1u << 23)

/* Builds the table over the grid voxels x0..x1, y0..y1, z0..z1 (inclusive, inside the grid). NULL sum when the
 * region is over SAT_MAX_VOXELS or memory runs out: the caller then goes on reading bits (same answers). */
static void sat_build(nb_context* ctx, const vgrid* g, int32_t x0, int32_t x1, int32_t y0, int32_t y1, int32_t z0,
                      int32_t z1, vsat* s)
{
    s->x0 = x0;
    s->y0 = y0;
    s->z0 = z0;
    s->nx = x1 - x0 + 1;
    s->ny = y1 - y0 + 1;
    s->nz = z1 - z0 + 1;
    s->sum = NULL;
    const uint64_t cells = (uint64_t)(s->nx + 1) * (uint64_t)(s->ny + 1) * (uint64_t)(s->nz + 1);
    if (cells > SAT_MAX_VOXELS)
        return;
    uint32_t* t = (uint32_t*)nb_alloc(ctx, (size_t)cells * sizeof(uint32_t));
    if (!t)
        return;
    const size_t row = (size_t)s->nx + 1, layer = row * (size_t)(s->nz + 1);
    memset(t, 0, layer * sizeof(uint32_t)); /* j = 0 */
    for (int32_t j = 1; j <= s->ny; ++j) {
        uint32_t* cur = t + (size_t)j * layer;
        const uint32_t* below = cur - layer;
        memset(cur, 0, row * sizeof(uint32_t)); /* k = 0 */
        for (int32_t k = 1; k <= s->nz; ++k) {
            uint32_t* c = cur + (size_t)k * row;
            const uint32_t* cz = c - row; /* (i, j, k-1) */
            const uint32_t* by = below + (size_t)k * row; /* (i, j-1, k) */
            const uint32_t* byz = by - row; /* (i, j-1, k-1) */
            uint32_t idx = lin(g, x0, y0 + j - 1, z0 + k - 1), run = 0;
            c[0] = 0;
            /* prefix of the row along x, then the 2D recurrence over the layers below and the rows before */
            for (int32_t i = 1; i <= s->nx; ++i, ++idx) {
                run += (g->words[idx >> 5] >> (idx & 31)) & 1u;
                c[i] = run + cz[i] + by[i] - byz[i];
            }
        }
    }
    s->sum = t;
}

/* nb_voxel_nearest, keeping only voxels within squared world distance max_d2 (INFINITY: the whole cube). */
nb_status nb_voxel_nearest_within(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                                  const int32_t voxel[3], int32_t max_distance, double max_d2, int32_t out[3],
                                  int* found)
{
    static const char* fn = "nb_voxel_nearest";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!found)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: found is NULL", fn);
    *found = 0;
    if (!voxel || !out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !voxel ? "voxel" : "out");
    vgrid g;
    nb_status st = check_inputs(ctx, fn, grid, params, &g);
    if (st != NB_OK)
        return st;
    if (max_distance < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: max_distance must be >= 0 (got %d)", fn, max_distance);

    /* Shells of growing Chebyshev radius k; every voxel of shell k is at least k * min(cell sizes) away, so the
     * scan stops once that bound passes the best distance. Shells that miss the grid are skipped. */
    const int64_t c[3] = { voxel[0], voxel[1], voxel[2] };
    const int64_t dim[3] = { g.d0, g.d1, g.d2 };
    int64_t kmin = 0, kmax = 0;
    for (int i = 0; i < 3; ++i) {
        const int64_t below = -c[i], above = c[i] - (dim[i] - 1);
        kmin = below > kmin ? below : kmin;
        kmin = above > kmin ? above : kmin;
        const int64_t far = c[i] > dim[i] - 1 - c[i] ? c[i] : dim[i] - 1 - c[i];
        kmax = far > kmax ? far : kmax;
    }
    if (kmax > max_distance)
        kmax = max_distance;
    /* The voxels scanned: the cube within kmax, cut to the grid and, per axis, to max_d2's reach. */
    int64_t lo[3], hi[3];
    for (int i = 0; i < 3; ++i) {
        int64_t reach = kmax;
        const double size = i == 1 ? (double)g.ch : (double)g.cs;
        if (max_d2 < (double)kmax * size * ((double)kmax * size))
            reach = (int64_t)(sqrt(max_d2) / size) + 1;
        lo[i] = c[i] - reach < 0 ? 0 : c[i] - reach;
        hi[i] = c[i] + reach > dim[i] - 1 ? dim[i] - 1 : c[i] + reach;
    }
    /* Each voxel that passes the cheap tests reads its box (and for climb the rows around it) one row at a time.
     * Once those reads add up to more than the region around the scan holds, a table of solid counts over that
     * region answers every box in 8 reads: a 6 m climber snapping in open space went from seconds to milliseconds. */
    const int m = g.r + 1;
    const uint64_t rows = (uint64_t)g.h * (uint64_t)(2 * g.r + 1) * (g.move == NB_VOXEL_CLIMB ? 2u : 1u);
    const int64_t rx0 = nb_maxi((int)lo[0] - m, 0), rx1 = nb_mini((int)hi[0] + m, g.d0 - 1);
    const int64_t ry0 = nb_maxi((int)lo[1] - 1, 0), ry1 = hi[1] + g.h > dim[1] - 1 ? dim[1] - 1 : hi[1] + g.h;
    const int64_t rz0 = nb_maxi((int)lo[2] - m, 0), rz1 = nb_mini((int)hi[2] + m, g.d2 - 1);
    const uint64_t region = (uint64_t)(rx1 - rx0 + 1) * (uint64_t)(ry1 - ry0 + 1) * (uint64_t)(rz1 - rz0 + 1);
    uint64_t work = 0;
    int tried_sat = lo[0] > hi[0] || lo[1] > hi[1] || lo[2] > hi[2]; /* (nothing to scan) */
    vsat sat = { 0, 0, 0, 0, 0, 0, NULL };

    const double step = g.cs < g.ch ? g.cs : g.ch;
    double best_d2 = 0.0;
    uint32_t best_idx = 0;
    int have = 0, bx = 0, by = 0, bz = 0;
    for (int64_t k = kmin; k <= kmax; ++k) {
        if (have && (double)k * step * ((double)k * step) > best_d2)
            break;
        const int64_t y0 = c[1] - k < lo[1] ? lo[1] : c[1] - k, y1 = c[1] + k > hi[1] ? hi[1] : c[1] + k;
        const int64_t z0 = c[2] - k < lo[2] ? lo[2] : c[2] - k, z1 = c[2] + k > hi[2] ? hi[2] : c[2] + k;
        const int64_t x0 = c[0] - k < lo[0] ? lo[0] : c[0] - k, x1 = c[0] + k > hi[0] ? hi[0] : c[0] + k;
        for (int64_t y = y0; y <= y1; ++y)
            for (int64_t z = z0; z <= z1; ++z) {
                const int face = y == c[1] - k || y == c[1] + k || z == c[2] - k || z == c[2] + k;
                /* inside the shell's faces every x; elsewhere only the two x faces */
                for (int64_t x = face ? x0 : c[0] - k; x <= (face ? x1 : c[0] + k);
                     x += face ? 1 : (k > 0 ? 2 * k : 1)) {
                    if (x < x0 || x > x1)
                        continue;
                    const int ix = (int)x, iy = (int)y, iz = (int)z;
                    if (solid(&g, ix, iy, iz) || (g.move == NB_VOXEL_WALK && !solid(&g, ix, iy - 1, iz)))
                        continue;
                    /* only a voxel that would win is worth its box test */
                    const double d2 = dist2(&g, x - c[0], y - c[1], z - c[2]);
                    const uint32_t idx = lin(&g, ix, iy, iz);
                    if (d2 > max_d2 || (have && (d2 > best_d2 || (d2 == best_d2 && idx > best_idx))))
                        continue;
                    if (!tried_sat && (work += rows) > region) {
                        tried_sat = 1;
                        sat_build(ctx, &g, (int32_t)rx0, (int32_t)rx1, (int32_t)ry0, (int32_t)ry1, (int32_t)rz0,
                                  (int32_t)rz1, &sat);
                        if (sat.sum)
                            g.sat = &sat;
                    }
                    if (cannot_be(&g, ix, iy, iz))
                        continue;
                    have = 1;
                    best_d2 = d2;
                    best_idx = idx;
                    bx = ix;
                    by = iy;
                    bz = iz;
                }
            }
    }
    nb_free(ctx, sat.sum);
    if (have) {
        out[0] = bx;
        out[1] = by;
        out[2] = bz;
        *found = 1;
    }
    return NB_OK;
}

nb_status nb_voxel_nearest(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                           const int32_t voxel[3], int32_t max_distance, int32_t out[3], int* found)
{
    return nb_voxel_nearest_within(q, grid, params, voxel, max_distance, INFINITY, out, found);
}

/* ================================================================================================ */
/* A*                                                                                               */
/* ================================================================================================ */

/* The heuristic: the exact cost of the move sequence in an empty grid, a lower bound on any real path and consistent
 * (tighter than the Euclidean distance, which on a grid leaves A* flooding around the straight line). Fly and climb:
 * as many 3-axis diagonals as the smallest axis count, then 2-axis diagonals on the two axes left, then straight
 * moves (each diagonal is shorter than the moves it replaces, so using them greedily is optimal). Walk: the larger
 * of the octile distance over the columns and the Euclidean distance (walk moves may change height by several
 * layers at once). */

static inline float heuristic(const vheur* hc, int dx, int dy, int dz)
{
    const int ax = nb_absi(dx), ay = nb_absi(dy), az = nb_absi(dz);
    if (hc->walk) {
        const int lo = nb_mini(ax, az), hi = nb_maxi(ax, az);
        const float oct = (float)lo * hc->c2xz + (float)(hi - lo) * hc->cs;
        const float hx = (float)ax * hc->cs, hy = (float)ay * hc->ch, hz = (float)az * hc->cs;
        const float eu = sqrtf(hx * hx + hy * hy + hz * hz);
        return oct > eu ? oct : eu;
    }
    const int m3 = nb_mini(ax, nb_mini(ay, az));
    const int rx = ax - m3, ry = ay - m3, rz = az - m3; /* at least one is 0 */
    float h = (float)m3 * hc->c3;
    if (ry == 0) { /* x and z left */
        const int lo = nb_mini(rx, rz);
        h += (float)lo * hc->c2xz + (float)(nb_maxi(rx, rz) - lo) * hc->cs;
    } else { /* y and one of x, z left */
        const int other = rx + rz, lo = nb_mini(other, ry);
        h += (float)lo * hc->c2y + (float)(other - lo) * hc->cs + (float)(ry - lo) * hc->ch;
    }
    return h;
}

static inline uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

/* Costs are >= 0, whose IEEE bits order like the values. */
static inline uint64_t heap_key(float cost, float hdist)
{
    return ((uint64_t)fbits(cost + hdist) << 32) | (uint64_t)(~fbits(cost));
}

/* Binary heap of open nodes; pos[node] is the node's place in it (a small array of its own, so that moving entries
 * writes to few cache lines). */
static inline void heap_up(vheap* h, uint32_t* pos, uint32_t slot, uint32_t node, uint64_t key)
{
    while (slot > 0) {
        const uint32_t parent = (slot - 1) >> 1;
        if (h[parent].key <= key)
            break;
        h[slot] = h[parent];
        pos[h[slot].node] = slot;
        slot = parent;
    }
    h[slot].key = key;
    h[slot].node = node;
    pos[node] = slot;
}

static inline uint32_t heap_pop(vheap* h, uint32_t* pos, uint32_t* size)
{
    const uint32_t top = h[0].node;
    const uint32_t n = --*size;
    if (n == 0)
        return top;
    const vheap last = h[n];
    uint32_t slot = 0;
    for (;;) {
        uint32_t child = slot * 2 + 1;
        if (child >= n)
            break;
        if (child + 1 < n && h[child + 1].key < h[child].key)
            ++child;
        if (h[child].key >= last.key)
            break;
        h[slot] = h[child];
        pos[h[slot].node] = slot;
        slot = child;
    }
    h[slot] = last;
    pos[last.node] = slot;
    return top;
}

/* A voxel's home slot: the Fibonacci hash of its linear index. */
static inline uint32_t slot_home(uint32_t key, uint32_t shift) { return (key * 2654435761u) >> shift; }

/* The slot of key (whose home is i): its node, or the empty slot where it goes (linear probing). */
static inline vslot* slot_find(vslot* slots, uint32_t mask, uint32_t i, uint32_t key)
{
    for (;;) {
        vslot* s = &slots[i];
        if (!s->node1 || s->key == key)
            return s;
        i = (i + 1) & mask;
    }
}

/* Starts a search: the state nb_voxel_find_path_step carries on from. fn: the function called, for messages. */
static nb_status search_begin(nb_voxel_query* q, const char* fn, const nb_voxel_grid* grid,
                              const nb_voxel_path_params* params, const int32_t start[3], const int32_t end[3])
{
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    vsearch* s = &q->s;
    s->state = SEARCH_NONE; /* a search in progress is abandoned, even when this one fails on its arguments */
    q->exhausted = 0;       /* nb_voxel_query_last_search: nothing about a search that does not run */
    q->last_nodes = 0;
    if (!start || !end)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !start ? "start" : "end");
    vgrid g;
    nb_status st = check_inputs(ctx, fn, grid, params, &g);
    if (st == NB_OK)
        st = check_endpoint(ctx, fn, "start", &g, start);
    if (st == NB_OK)
        st = check_endpoint(ctx, fn, "end", &g, end);
    if (st != NB_OK)
        return st;

    /* reset the pool: empty the slots the last search filled (or, for a new pool, all of them) */
    (void)nb_voxel_query_reset_some(q, UINT32_MAX);
    vnode* nodes = q->nodes;
    vslot* slots = q->slots;
    s->g = g;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
            for (int dx = -1; dx <= 1; ++dx) {
                s->steps[nbr_index(dx, dy, dz)] = step_len(&g, dx, dy, dz);
                s->koff[nbr_index(dx, dy, dz)] =
                    (uint32_t)dx + (uint32_t)g.d0 * ((uint32_t)dz + (uint32_t)g.d2 * (uint32_t)dy);
            }
    s->hc.c3 = s->steps[nbr_index(1, 1, 1)];
    s->hc.c2xz = s->steps[nbr_index(1, 0, 1)];
    s->hc.c2y = s->steps[nbr_index(1, 1, 0)];
    s->hc.cs = s->steps[nbr_index(1, 0, 0)];
    s->hc.ch = s->steps[nbr_index(0, 1, 0)];
    s->hc.walk = g.move == NB_VOXEL_WALK;
    s->end[0] = end[0];
    s->end[1] = end[1];
    s->end[2] = end[2];
    s->smooth = params->smooth;

    vnode* sn = &nodes[0];
    sn->x = start[0];
    sn->y = start[1];
    sn->z = start[2];
    sn->parent = 0;
    const uint32_t key = lin(&g, sn->x, sn->y, sn->z);
    vslot* sl = slot_find(slots, q->slot_mask, slot_home(key, q->slot_shift), key);
    sl->key = key;
    sl->node1 = 1;
    sl->cost = 0.0f;
    sl->hdist = g.weight * heuristic(&s->hc, end[0] - sn->x, end[1] - sn->y, end[2] - sn->z);
    sn->slot = (uint32_t)(sl - slots);
    s->heap_size = 0;
    heap_up(q->heap, q->chain, s->heap_size++, 0, heap_key(sl->cost, sl->hdist));
    q->used = 1; /* the start's slot is filled: the next search empties it */
    s->target = UINT32_MAX;
    s->best = 0;
    s->best_key = key;
    s->best_d2 = dist2(&g, end[0] - sn->x, end[1] - sn->y, end[2] - sn->z);
    s->exhausted = 0;
    s->state = SEARCH_RUNNING;
    return NB_OK;
}

nb_status nb_voxel_find_path_begin(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                                   const int32_t start[3], const int32_t end[3])
{
    return search_begin(q, "nb_voxel_find_path_begin", grid, params, start, end);
}

/* At most max_expansions node expansions of the search begun (0: none), and (deadline > 0) none begun once the
 * clock (nb_now_ms) has passed deadline, read every 16 expansions. The search's locals live in the query between
 * calls; inside the loop they are copies, so that the compiler keeps them in registers. */
static nb_status step_until(nb_voxel_query* q, uint32_t max_expansions, double deadline, int* done)
{
    static const char* fn = "nb_voxel_find_path_step";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!done)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: done is NULL", fn);
    vsearch* s = &q->s;
    *done = s->state == SEARCH_FINISHED;
    if (s->state == SEARCH_NONE)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: no search in progress (nb_voxel_find_path_begin first)", fn);
    if (s->state == SEARCH_FINISHED)
        return NB_OK;

    const vgrid g = s->g;
    const vheur hc = s->hc;
    float steps[27];
    uint32_t koff[27];
    memcpy(steps, s->steps, sizeof(steps));
    memcpy(koff, s->koff, sizeof(koff));
    vnode* nodes = q->nodes;
    vslot* slots = q->slots;
    vheap* heap = q->heap;
    uint32_t* hpos = q->chain; /* the chain is only built after the search */
    const uint32_t mask = q->slot_mask, shift = q->slot_shift, max_nodes = q->max_nodes;
    const int ex = s->end[0], ey = s->end[1], ez = s->end[2];
    uint32_t count = q->used, heap_size = s->heap_size, target = s->target, best = s->best, best_key = s->best_key;
    double best_d2 = s->best_d2;
    int exhausted = s->exhausted;
    vcand cand[26];
    uint32_t home[26];
    for (uint32_t round = 0; round < max_expansions && heap_size > 0 && !exhausted; ++round) {
        if ((round & 15u) == 15u && deadline > 0.0 && nb_now_ms() >= deadline)
            break;
        const uint32_t cur = heap_pop(heap, hpos, &heap_size);
        const vnode* cn = &nodes[cur];
        vslot* cs = &slots[cn->slot];
        cs->node1 |= SLOT_CLOSED;
        if (cn->x == ex && cn->y == ey && cn->z == ez) {
            target = cur;
            break;
        }
        const int nc = expand(&g, steps, koff, cn->x, cn->y, cn->z, cs->key, cand);
        const float base = cs->cost;
        /* The neighbours' slots are scattered over the table: load them all first, independently of each other,
         * so that their cache misses overlap instead of following one another. */
        uint32_t touch = 0;
        for (int c = 0; c < nc; ++c) {
            home[c] = slot_home(cand[c].key, shift);
            touch ^= slots[home[c]].node1;
        }
        q->sink = touch;
        for (int c = 0; c < nc; ++c) {
            const uint32_t key = cand[c].key;
            const float cost = base + cand[c].step;
            vslot* sl = slot_find(slots, mask, home[c], key);
            if (sl->node1) {
                if ((sl->node1 & SLOT_CLOSED) || !(cost < sl->cost))
                    continue;
                const uint32_t mi = sl->node1 - 1;
                sl->cost = cost;
                nodes[mi].parent = cur + 1;
                heap_up(heap, hpos, hpos[mi], mi, heap_key(cost, sl->hdist));
                continue;
            }
            if (count >= max_nodes) {
                exhausted = 1;
                break;
            }
            const uint32_t ni = count++;
            vnode* m = &nodes[ni];
            m->x = cand[c].x;
            m->y = cand[c].y;
            m->z = cand[c].z;
            m->parent = cur + 1;
            m->slot = (uint32_t)(sl - slots);
            const double d2 = dist2(&g, ex - m->x, ey - m->y, ez - m->z);
            sl->key = key;
            sl->node1 = ni + 1;
            sl->cost = cost;
            sl->hdist = g.weight * heuristic(&hc, ex - m->x, ey - m->y, ez - m->z);
            heap_up(heap, hpos, heap_size++, ni, heap_key(cost, sl->hdist));
            if (d2 < best_d2 || (d2 == best_d2 && key < best_key)) {
                best_d2 = d2;
                best_key = key;
                best = ni;
            }
        }
    }
    q->used = count;
    s->heap_size = heap_size;
    s->target = target;
    s->best = best;
    s->best_key = best_key;
    s->best_d2 = best_d2;
    s->exhausted = exhausted;
    if (target != UINT32_MAX || heap_size == 0 || exhausted)
        s->state = SEARCH_FINISHED;
    *done = s->state == SEARCH_FINISHED;
    return NB_OK;
}

nb_status nb_voxel_find_path_step(nb_voxel_query* q, uint32_t max_expansions, int* done)
{
    return step_until(q, max_expansions, 0.0, done);
}

nb_status nb_voxel_find_path_step_ms(nb_voxel_query* q, double max_ms, int* done)
{
    return step_until(q, UINT32_MAX, nb_now_ms() + (max_ms > 0.0 ? max_ms : 0.0), done);
}

uint32_t nb_voxel_query_reset_ms(nb_voxel_query* q, double max_ms)
{
    const double deadline = nb_now_ms() + max_ms;
    uint32_t left;
    while ((left = nb_voxel_query_reset_some(q, 1u << 14)) > 0 && nb_now_ms() < deadline) {
    }
    return left;
}

nb_status nb_voxel_find_path_end(nb_voxel_query* q, int32_t* path, uint32_t path_capacity, uint32_t* path_count,
                                 int* status)
{
    static const char* fn = "nb_voxel_find_path_end";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!path_count || !status)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !path_count ? "path_count" : "status");
    *path_count = 0;
    *status = NB_PATH_NONE;
    if (!path && path_capacity > 0)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: path is NULL (with path_capacity %u)", fn, path_capacity);
    vsearch* s = &q->s;
    if (s->state == SEARCH_NONE)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: no search in progress (nb_voxel_find_path_begin first)", fn);
    s->state = SEARCH_NONE;
    vnode* nodes = q->nodes;
    q->exhausted = s->exhausted;
    q->last_nodes = q->used;
    uint32_t target = s->target;
    if (target == UINT32_MAX) {
        /* stopped early (pool full, or the caller ended it): the end may have been reached, not yet expanded */
        const uint32_t end_key = lin(&s->g, s->end[0], s->end[1], s->end[2]);
        const vslot* sl = slot_find(q->slots, q->slot_mask, slot_home(end_key, q->slot_shift), end_key);
        if (sl->node1)
            target = (sl->node1 & ~SLOT_CLOSED) - 1;
    }
    const int result = target != UINT32_MAX ? NB_PATH_COMPLETE : NB_PATH_PARTIAL;
    if (target == UINT32_MAX)
        target = s->best;

    /* the chain from the start to target */
    uint32_t n = 0;
    for (uint32_t i = target + 1; i; i = nodes[i - 1].parent)
        ++n;
    uint32_t k = n;
    for (uint32_t i = target + 1; i; i = nodes[i - 1].parent)
        q->chain[--k] = i - 1;
    if (s->smooth)
        n = smooth_chain(&s->g, nodes, q->chain, n);
    *status = result;
    *path_count = n;
    if (n > path_capacity)
        return nb_fail(ctx, NB_ERR_BUFFER_TOO_SMALL, "%s: path needs %u voxels (capacity %u)", fn, n, path_capacity);
    for (uint32_t i = 0; i < n; ++i) {
        const vnode* v = &nodes[q->chain[i]];
        path[3 * i] = v->x;
        path[3 * i + 1] = v->y;
        path[3 * i + 2] = v->z;
    }
    return NB_OK;
}

nb_status nb_voxel_find_path(nb_voxel_query* q, const nb_voxel_grid* grid, const nb_voxel_path_params* params,
                             const int32_t start[3], const int32_t end[3], int32_t* path, uint32_t path_capacity,
                             uint32_t* path_count, int* status)
{
    static const char* fn = "nb_voxel_find_path";
    if (!q)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "%s: q is NULL", fn);
    nb_context* ctx = q->ctx;
    if (!path_count || !status) {
        q->s.state = SEARCH_NONE;
        q->exhausted = 0;
        q->last_nodes = 0;
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !path_count ? "path_count" : "status");
    }
    *path_count = 0;
    *status = NB_PATH_NONE;
    if (!path && path_capacity > 0) {
        q->s.state = SEARCH_NONE;
        q->exhausted = 0;
        q->last_nodes = 0;
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: path is NULL (with path_capacity %u)", fn, path_capacity);
    }
    nb_status st = search_begin(q, fn, grid, params, start, end);
    int done = 0;
    if (st == NB_OK)
        st = nb_voxel_find_path_step(q, UINT32_MAX, &done);
    if (st == NB_OK)
        st = nb_voxel_find_path_end(q, path, path_capacity, path_count, status);
    return st;
}

int nb_voxel_query_last_search(const nb_voxel_query* q, uint32_t* nodes_used)
{
    if (nodes_used)
        *nodes_used = q ? q->last_nodes : 0;
    return q ? q->exhausted : 0;
}
