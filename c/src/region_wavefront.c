/* Wavefront partition (seed 004, "iterative wavefront edge expansions"): one region at a time grows from a seed as
 * a convex shape whose four axis fronts (+x, -x, +z, -z) advance a cell per round until walls, other regions or
 * the shape's convexity stop them, then the next seed. Regions come out as few large convex pieces that the
 * polygon stage keeps whole up to verts_per_poly, instead of the round blobs (watershed) or long strips
 * (monotone) of the other partitions.
 *
 * Grid translation of the paper. A region is a set of cells, one span each, whose rows and columns are intervals:
 * rows z0..z1, row z = [lo, hi] in x; columns likewise in z. A front is one line family and one end: +x moves the
 * hi end of each row, +z the top end of each column. Per round each front offers every line still moving its next
 * cell; the cell joins when its span is linked from the line's end span, has no region, has the seed's area, is
 * linked both ways with every neighbouring cell already in the region (one span per column, no internal walls),
 * extends both its row and its column contiguously, and the shape stays digitally convex. The paper's edge split
 * falls out of this: a front blocked in the middle keeps its free parts moving for as long as the outline stays
 * convex, which bends it into a new (digital) diagonal edge.
 *
 * Convexity rule. A side of the shape is a sequence of integers along the lines (hi per row, -lo per row, top and
 * -bottom per column); it must be digitally concave: each value lies less than one cell below the upper convex hull
 * of the values. Over the whole shape that is exact digital convexity (every cell of the hull of the cell centres is
 * in the region), which a staircase of any slope satisfies. Checked incrementally and within WINDOW lines of each
 * change (side_ok), which keeps the cost per cell bounded: every run of WINDOW + 1 consecutive rows or columns of a
 * region is digitally convex, while bends over longer runs (a curve of radius above about WINDOW^2 / 2 cells) may
 * pass. The check compares slopes exactly as integers scaled by lcm(1..WINDOW), and takes the lines beside the
 * change a run of equal values at a time: each side keeps a bit per pair of neighbouring lines telling whether
 * their values are equal, and most checks (a flat side, a front half way through its round, a shallow diagonal)
 * see one or two runs, decided with a value or two instead of a scan of 2 x WINDOW lines.
 *
 * Clean-up as in the other partitions (islands below min_region_area dropped, regions below merge_region_area
 * merged into a neighbour), except that a larger region with no wall around it stays (nb_region_merge_small):
 * merging it would undo its convexity.
 *
 * Growth order. Each round the fronts take turns (+x, +z, -x, -z), each offering its lines nearest the seed first;
 * a line made earlier in the round (the new column of +x) already moves in that round, so an open room grows as
 * a rectangle, one ring per round.
 *
 * Cost. A line whose next cell is taken, a wall or another area stops for good. One refused by the shape waits on
 * the line whose value was too low (only that line's rise can lift the refusal); one refused for a gap waits for
 * the neighbouring line to reach the gap. So a line is offered a cell again only when something it depends on
 * moved: per added cell the work is O(WINDOW) at most, near-linear in the spans (a 12 x 55550 corridor is one
 * region of 55550 short rounds). Neighbour spans are read from the compact links where needed (no table of all).
 *
 * Seeds are deterministic: the free span farthest from the walls (distance field), ties by lowest span index. */
#include "region_internal.h"

#define WINDOW 16 /* convexity holds over every run of WINDOW + 1 rows or columns */

/* A line's state in a front. PARKED: the shape refused its cell (it waits on the line that was too low, see
 * side_ok); GAP: its cell would leave a gap in the crossing line (it waits for a neighbouring line to close it);
 * DONE: its cell can never join. */
enum { LINE_NONE = 0, LINE_ACTIVE, LINE_PARKED, LINE_GAP, LINE_DONE };
enum { ADD_OK, ADD_SHAPE, ADD_GAP, ADD_NEVER };
/* Which end of a line a cell extends (cell_end): a new line next to the region, or not at all: it would leave a
 * gap, or the line holds that cell already (another span of its column). */
enum { END_INSIDE = -2, END_GAP = -1, END_LO, END_HI, END_NEW };
enum { SIDE_LO = 0, SIDE_HI = 1 };

/* One family of lines: rows (indexed by z, cells along x) or columns (indexed by x, cells along z). */
typedef struct wf_lines {
    int32_t* lo;       /* lowest cell of each line */
    int32_t* hi;       /* highest */
    uint32_t* lo_span; /* the region's span in those cells */
    uint32_t* hi_span;
    uint64_t* lo_same; /* bit l (lines l and l + 1 both in the region): lo[l] == lo[l + 1]; see side_half_ok */
    uint64_t* hi_same; /* bit l: hi[l] == hi[l + 1] */
    int32_t first, last; /* the region holds lines first..last */
} wf_lines;

/* One front (by direction: 0 -x, 1 +z, 2 +x, 3 -z). Lines that keep moving stay in `keep`, in the order of the
 * round; lines that start or restart are collected in `added` as sort keys and merged in before the next round, so
 * each round visits its lines nearest the seed first without sorting the whole front. */
typedef struct wf_front {
    uint8_t* state;  /* LINE_* per line */
    uint32_t* cur;   /* this round's lines */
    uint32_t* keep;  /* next round: lines still moving, in order */
    uint64_t* added; /* next round: lines (re)started, as distance << 32 | line */
    uint32_t ncur, nkeep, nadded;
    uint32_t ngap; /* lines in LINE_GAP (mostly none: try_add skips looking for gaps it closed) */
    int32_t node0; /* this front's first waiting-list node */
} wf_front;

/* Parked lines wait in lists, one per side of each line (the line whose value was too low), as intrusive doubly
 * linked nodes, one per (front, line). */
typedef struct wf_wait {
    int32_t* head; /* per list: first node, -1 = none; list = list0[family][side] + line */
    int32_t* next; /* per node */
    int32_t* prev;
    int32_t* list; /* per node: its list, -1 = none */
    int32_t list0[2][2];
} wf_wait;

typedef struct wavefront {
    const nb_compact_heightfield* chf;
    uint16_t* reg;
    wf_lines lines[2];   /* [0] rows, [1] columns */
    wf_front fronts[4];
    wf_wait wait;
    int32_t seed_line[2]; /* the seed's row (z) and column (x) */
    uint16_t id;
    uint8_t area;
} wavefront;

static inline int front_family(int dir) { return dir & 1; } /* -x, +x move rows; +z, -z move columns */
static inline int front_side(int dir) { return dir == 1 || dir == 2 ? SIDE_HI : SIDE_LO; }
static inline int side_front(int family, int side) { return family == 0 ? (side ? 2 : 0) : (side ? 1 : 3); }

/* Slopes a / d with d = 1..WINDOW compare exactly as the integers a * (SLOPE_SCALE / d), SLOPE_SCALE being the
 * least common multiple of 1..WINDOW: the scans below multiply by a table entry instead of cross-multiplying by the
 * running minimum's denominator. */
#define SLOPE_SCALE 720720
_Static_assert(WINDOW == 16, "SLOPE_SCALE must be lcm(1..WINDOW)");
static const int32_t slope_unit[WINDOW + 1] = { 0,     720720, 360360, 240240, 180180, 144144, 120120, 102960, 90090,
                                                80080, 72072,  65520,  60060,  55440,  51480,  48048,  45045 };

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* n bits (1..31) of a bit array from bit i on. */
static NB_ALWAYS_INLINE uint32_t get_bits(const uint64_t* bits, int i, int n)
{
    const int off = i & 63;
    uint64_t x = bits[i >> 6] >> off;
    if (off + n > 64)
        x |= bits[(i >> 6) + 1] << (64 - off);
    return (uint32_t)x & ((1u << n) - 1);
}

/* Sets bit i of a same-value array: do lines i and i + 1 have equal values in v? */
static NB_ALWAYS_INLINE void put_same(uint64_t* same, const int32_t* v, int i)
{
    const uint64_t bit = (uint64_t)1 << (i & 63);
    same[i >> 6] = (same[i >> 6] & ~bit) | (v[i] == v[i + 1] ? bit : 0);
}

/* A run a..b of the lines c + step * d that all have side value f(c) + g, given m, the smallest scaled
 * (f(j) + 1 - f(c)) / j of the lines before it (INT64_MAX for none): do its lines pass as k (see side_ok), with
 * every j before them? Lowers m by the run's lines. Within a run (g + 1) / j and g / k move monotonically, so one
 * line of it is checked and one lowers m: for g >= 0 the slope g / k falls along the run (its first line is the
 * steepest, and every k of the run passes against the j of the run before it); for g < 0 it rises (its last line is
 * the steepest, against the j before the run and the run's first). */
static NB_ALWAYS_INLINE int run_ok(int64_t g, int a, int b, int64_t* m)
{
    if (g >= 0) {
        if (g * slope_unit[a] >= *m)
            return 0;
        *m = min64(*m, (g + 1) * slope_unit[b]);
        return 1;
    }
    *m = min64(*m, (g + 1) * slope_unit[a]);
    return g * slope_unit[b] < *m;
}

/* The per-line scan of one half of side_ok (below): k = 2..reach against the smallest (f(j) + 1 - f(c)) / j before
 * k, over p[step * d] = v[c + step * d]. */
static NB_ALWAYS_INLINE int half_scan_ok(const int32_t* p, int sign, int step, int32_t vc, int reach)
{
    int64_t min_slope = (int64_t)(sign * (p[step] - vc) + 1) * SLOPE_SCALE; /* smallest (f(j) + 1 - f(c)) / j */
    if (reach == WINDOW) { /* the usual case inside a large region: unrolled, the table entries become constants */
#pragma GCC unroll 16
        for (int d = 2; d <= WINDOW; ++d) {
            const int64_t slope = (int64_t)(sign * (p[step * d] - vc)) * slope_unit[d];
            if (slope >= min_slope)
                return 0;
            if (slope + slope_unit[d] < min_slope)
                min_slope = slope + slope_unit[d];
        }
        return 1;
    }
    for (int d = 2; d <= reach; ++d) {
        const int64_t slope = (int64_t)(sign * (p[step * d] - vc)) * slope_unit[d];
        if (slope >= min_slope)
            return 0;
        if (slope + slope_unit[d] < min_slope)
            min_slope = slope + slope_unit[d];
    }
    return 1;
}

/* half_scan_ok out of line, a copy per sign and step (it takes the halves of three or more runs, a quarter). */
static NB_NOINLINE int half_scan(const int32_t* p, int sign, int step, int32_t vc, int reach)
{
    if (sign > 0)
        return step > 0 ? half_scan_ok(p, 1, 1, vc, reach) : half_scan_ok(p, 1, -1, vc, reach);
    return step > 0 ? half_scan_ok(p, -1, 1, vc, reach) : half_scan_ok(p, -1, -1, vc, reach);
}

/* One half of the check below: do the triples c, c + step * j, c + step * k (0 < j < k <= reach) of side
 * f = sign * v, with f(c) = sign * vc, all pass? Most halves are one or two runs of equal values (a flat side, the
 * step where a front is half way through a round, a shallow diagonal): the same-value bits tell, and such a half
 * is decided a run at a time (run_ok), reading one value per run; the others take the per-line scan. sign and step
 * are constants where it is inlined. */
static NB_ALWAYS_INLINE int side_half_ok(const int32_t* v, const uint64_t* same, int sign, int step, int c, int32_t vc,
                                         int reach)
{
    /* bit d - 1 (+ step) or bit reach - 1 - d (- step): lines d and d + 1 of the half (lines c + step * d) differ */
    const uint32_t differ = ~(step > 0 ? get_bits(same, c + 1, reach - 1) : get_bits(same, c - reach, reach - 1)) &
                            ((1u << (reach - 1)) - 1);
    const int32_t* p = v + c;
    if (differ == 0) /* one run: passes unless it lies two or more below f(c) (then k = reach fails against j = 1) */
        return sign * (p[step] - vc) >= -1;
    if ((differ & (differ - 1)) == 0) { /* two runs: 1..t and t + 1..reach */
        const int bit = __builtin_ctz(differ), t = step > 0 ? bit + 1 : reach - 1 - bit;
        int64_t m = INT64_MAX;
        return run_ok(sign * (p[step] - vc), 1, t, &m) && run_ok(sign * (p[step * (t + 1)] - vc), t + 1, reach, &m);
    }
    return half_scan(p, sign, step, vc, reach);
}

/* The same scan after a refusal, for the line j of the first failing triple (the first of the smallest slope). */
static NB_NOINLINE int side_half_block(const int32_t* p, int sign, int step, int32_t vc, int reach)
{
    int64_t min_slope = (int64_t)(sign * (p[step] - vc) + 1) * SLOPE_SCALE;
    int min_j = 1;
    for (int d = 2; d <= reach; ++d) {
        const int64_t slope = (int64_t)(sign * (p[step * d] - vc)) * slope_unit[d];
        if (slope >= min_slope)
            return step * min_j;
        if (slope + slope_unit[d] < min_slope) {
            min_slope = slope + slope_unit[d];
            min_j = d;
        }
    }
    return step; /* not reached (called when side_half_ok failed); a line of the region keeps the waiting lists sound */
}

/* After side value f(c) = sign * v[c] moved outwards to sign * vc (or line c was added at an end; first..last
 * include it), is every run of WINDOW + 1 lines through c still digitally concave? v[c] itself is not read: the
 * caller applies the move only when every check passes. A run is digitally concave when no triple i < j < k in it
 * has f(j) a whole cell or more below the chord from i to k. Every run was before, and raising f(c) only helps
 * where c is the middle of a triple, so only triples with c as an end need checking: for c = i, each k must see
 * the chord's slope (f(k) - f(c)) / (k - c) below every (f(j) + 1 - f(c)) / (j - c) of the j between; mirrored for
 * c = k. Exact integer arithmetic, O(WINDOW). Returns -1, or the line j of a failing triple (the one too low: only
 * its rise can lift this refusal; lines below c are checked first). */
static NB_ALWAYS_INLINE int side_ok(const int32_t* v, const uint64_t* same, int sign, int first, int last, int c,
                                    int32_t vc)
{
    const int below = nb_mini(WINDOW, c - first), above = nb_mini(WINDOW, last - c);
    if (below >= 2 && !side_half_ok(v, same, sign, -1, c, vc, below))
        return c + side_half_block(v + c, sign, -1, vc, below);
    if (above >= 2 && !side_half_ok(v, same, sign, 1, c, vc, above))
        return c + side_half_block(v + c, sign, 1, vc, above);
    return -1;
}

static inline uint64_t line_key(const wavefront* wf, int dir, uint32_t line)
{
    const int64_t d = (int64_t)line - wf->seed_line[front_family(dir)];
    return (uint64_t)(d < 0 ? -d : d) << 32 | line;
}

static void wait_unlink(wf_wait* w, int32_t node)
{
    const int32_t l = w->list[node];
    if (l < 0)
        return;
    if (w->prev[node] >= 0)
        w->next[w->prev[node]] = w->next[node];
    else
        w->head[l] = w->next[node];
    if (w->next[node] >= 0)
        w->prev[w->next[node]] = w->prev[node];
    w->list[node] = w->next[node] = w->prev[node] = -1;
}

/* Puts a line that starts (or restarts) moving into its front's next round. */
static void activate(wavefront* wf, int dir, int32_t line)
{
    wf_front* f = &wf->fronts[dir];
    if (f->state[line] == LINE_PARKED)
        wait_unlink(&wf->wait, f->node0 + line);
    else if (f->state[line] == LINE_GAP)
        --f->ngap;
    f->state[line] = LINE_ACTIVE;
    f->added[f->nadded++] = line_key(wf, dir, (uint32_t)line);
}

/* Line `line` of front dir waits until side `side` of line j (family `family`) moves. */
static void park(wavefront* wf, int dir, int32_t line, int family, int side, int32_t j)
{
    wf_wait* w = &wf->wait;
    const int32_t node = wf->fronts[dir].node0 + line, l = w->list0[family][side] + j;
    wf->fronts[dir].state[line] = LINE_PARKED;
    w->list[node] = l;
    w->prev[node] = -1;
    w->next[node] = w->head[l];
    if (w->head[l] >= 0)
        w->prev[w->head[l]] = node;
    w->head[l] = node;
}

/* Activates the lines waiting in list l. */
static NB_NOINLINE void wake(wavefront* wf, int32_t l)
{
    wf_wait* w = &wf->wait;
    while (w->head[l] >= 0) {
        const int32_t node = w->head[l];
        int dir = 3;
        while (node < wf->fronts[dir].node0) /* node0 grows with dir */
            --dir;
        activate(wf, dir, node - wf->fronts[dir].node0);
    }
}

/* Side `side` of line j (family) moved: the lines waiting on it, and that line's own front on that side (its next
 * cell changed), get another try next round. */
static NB_ALWAYS_INLINE void side_moved(wavefront* wf, int family, int side, int32_t j)
{
    const int32_t l = wf->wait.list0[family][side] + j;
    if (wf->wait.head[l] >= 0)
        wake(wf, l);
    const int dir = side_front(family, side);
    const uint8_t st = wf->fronts[dir].state[j];
    if (st == LINE_NONE || st == LINE_PARKED || st == LINE_GAP)
        activate(wf, dir, j);
}

/* Which end of line l (of the family ln) the cell at position p along it would extend (END_*). */
static NB_ALWAYS_INLINE int cell_end(const wf_lines* ln, int l, int p)
{
    if (l >= ln->first && l <= ln->last) {
        if (p == ln->hi[l] + 1)
            return END_HI;
        if (p == ln->lo[l] - 1)
            return END_LO;
        return p >= ln->lo[l] && p <= ln->hi[l] ? END_INSIDE : END_GAP;
    }
    return l == ln->last + 1 || l == ln->first - 1 ? END_NEW : END_GAP;
}

/* The span linked to span s of column col towards dir, NB_NO_SPAN for none. Read from the links where needed: a
 * table of all four per span would cost more to build than the few lookups per cell the growth makes. */
static inline uint32_t linked_span(const nb_compact_heightfield* chf, int col, uint32_t s, int dir)
{
    const nb_compact_span* sp = &chf->spans[s];
    return nb_span_con(sp, dir) == NB_NOT_CONNECTED ? NB_NO_SPAN : nb_region_neighbour(chf, col, sp, dir);
}

/* Is span s in cell (x, z) linked both ways with the region's span next to it along family f (line l, extended at
 * end)? That span is the end the cell extends: -x of a row's new hi end, +x of a new lo end, -z and +z for a
 * column. */
static NB_ALWAYS_INLINE int end_linked(const wavefront* wf, int f, int l, int end, int x, int z, uint32_t s)
{
    if (end == END_NEW)
        return 1;
    const int hi = end == END_HI;
    const int dir = f == 0 ? (hi ? 0 : 2) : (hi ? 3 : 1);
    const uint32_t o = hi ? wf->lines[f].hi_span[l] : wf->lines[f].lo_span[l];
    const int col = x + z * wf->chf->width;
    const int ocol = col + nb_dir_offset_x(dir) + nb_dir_offset_z(dir) * wf->chf->width;
    return linked_span(wf->chf, col, s, dir) == o && linked_span(wf->chf, ocol, o, (dir + 2) & 3) == s;
}

/* Would the sides of family f stay convex with line l extended at end to position p? Returns -1, or the line that
 * must move first with *block = f << 2 | side << 1. The hi side is checked before the lo side. */
static NB_ALWAYS_INLINE int ends_ok(const wavefront* wf, int f, int l, int end, int p, int* block)
{
    const wf_lines* ln = &wf->lines[f];
    const int first = nb_mini(ln->first, l), last = nb_maxi(ln->last, l);
    int bad;
    if (end != END_LO && (bad = side_ok(ln->hi, ln->hi_same, 1, first, last, l, p)) >= 0) {
        *block = f << 2 | SIDE_HI << 1;
        return bad;
    }
    if (end != END_HI && (bad = side_ok(ln->lo, ln->lo_same, -1, first, last, l, p)) >= 0) {
        *block = f << 2 | SIDE_LO << 1;
        return bad;
    }
    return -1;
}

/* Extends line l of family f at end to position p (span s), and updates its same-value bits. */
static NB_ALWAYS_INLINE void move_end(wavefront* wf, int f, int l, int end, int p, uint32_t s)
{
    wf_lines* ln = &wf->lines[f];
    if (end != END_HI) {
        ln->lo[l] = p;
        ln->lo_span[l] = s;
    }
    if (end != END_LO) {
        ln->hi[l] = p;
        ln->hi_span[l] = s;
    }
    if (end == END_NEW) {
        if (l > ln->last)
            ln->last = l;
        else
            ln->first = l;
    }
    /* the same-value bits of the pairs (l - 1, l) and (l, l + 1) */
    if (l > ln->first) {
        if (end != END_HI)
            put_same(ln->lo_same, ln->lo, l - 1);
        if (end != END_LO)
            put_same(ln->hi_same, ln->hi, l - 1);
    }
    if (l < ln->last) {
        if (end != END_HI)
            put_same(ln->lo_same, ln->lo, l);
        if (end != END_LO)
            put_same(ln->hi_same, ln->hi, l);
    }
}

/* After line l of family f took the cell at position p: wakes what waited on the sides that moved, and the lines
 * next to it that waited for exactly this cell to close their gap (their next cell lies on this cell's crossing
 * line). */
static NB_ALWAYS_INLINE void end_moved(wavefront* wf, int f, int l, int end, int p)
{
    if (end != END_HI)
        side_moved(wf, f, SIDE_LO, l);
    if (end != END_LO)
        side_moved(wf, f, SIDE_HI, l);
    const int hi_dir = side_front(f, SIDE_HI), lo_dir = side_front(f, SIDE_LO);
    if (!wf->fronts[hi_dir].ngap && !wf->fronts[lo_dir].ngap)
        return;
    const wf_lines* ln = &wf->lines[f];
    for (int k = l - 1; k <= l + 1; k += 2)
        if (k >= ln->first && k <= ln->last) {
            if (ln->hi[k] + 1 == p && wf->fronts[hi_dir].state[k] == LINE_GAP)
                activate(wf, hi_dir, k);
            if (ln->lo[k] - 1 == p && wf->fronts[lo_dir].state[k] == LINE_GAP)
                activate(wf, lo_dir, k);
        }
}

/* Tries to add span s in cell (x, z) to the region; see the file comment for the rules. On ADD_SHAPE, *block gets
 * family << 2 | side << 1 and *block_line the line that must move first. */
static int try_add(wavefront* wf, int x, int z, uint32_t s, int* block, int32_t* block_line)
{
    if (wf->reg[s] != 0 || wf->chf->areas[s] != wf->area)
        return ADD_NEVER;
    /* The region's rows and columns describe one set of cells, so only the row can find the cell inside already (the
     * region holds another span of this column). */
    const int row_end = cell_end(&wf->lines[0], z, x);
    if (row_end < 0)
        return row_end == END_INSIDE ? ADD_NEVER : ADD_GAP;
    const int col_end = cell_end(&wf->lines[1], x, z);
    if (col_end < 0)
        return ADD_GAP;
    /* one span per column, no internal walls */
    if (!end_linked(wf, 0, z, row_end, x, z, s) || !end_linked(wf, 1, x, col_end, x, z, s))
        return ADD_NEVER;
    int bad = ends_ok(wf, 0, z, row_end, x, block);
    if (bad < 0)
        bad = ends_ok(wf, 1, x, col_end, z, block);
    if (bad >= 0) {
        *block_line = bad;
        return ADD_SHAPE;
    }
    wf->reg[s] = wf->id;
    move_end(wf, 0, z, row_end, x, s);
    move_end(wf, 1, x, col_end, z, s);
    end_moved(wf, 0, z, row_end, x);
    end_moved(wf, 1, x, col_end, z);
    return ADD_OK;
}

/* Offers line `line` of front dir its next cell; parks or retires it when refused. Returns whether it moved. */
static int advance(wavefront* wf, int dir, int line)
{
    const int f = front_family(dir);
    const wf_lines* ln = &wf->lines[f];
    const int hi = front_side(dir) == SIDE_HI;
    const int at = hi ? ln->hi[line] : ln->lo[line], pos = hi ? at + 1 : at - 1;
    const uint32_t from = hi ? ln->hi_span[line] : ln->lo_span[line];
    const int w = wf->chf->width;
    const uint32_t s = linked_span(wf->chf, f == 0 ? at + line * w : line + at * w, from, dir);
    int block = 0;
    int32_t block_line = 0;
    const int r = s == NB_NO_SPAN ? ADD_NEVER
                  : f == 0        ? try_add(wf, pos, line, s, &block, &block_line)
                                  : try_add(wf, line, pos, s, &block, &block_line);
    if (r == ADD_SHAPE)
        park(wf, dir, line, block >> 2, (block >> 1) & 1, block_line);
    else if (r == ADD_GAP) {
        wf->fronts[dir].state[line] = LINE_GAP;
        ++wf->fronts[dir].ngap;
    } else if (r == ADD_NEVER)
        wf->fronts[dir].state[line] = LINE_DONE;
    return r == ADD_OK;
}

/* This round's lines of a front: the lines still moving (in order) merged with the sorted new ones. */
static void start_round(wavefront* wf, int dir)
{
    wf_front* f = &wf->fronts[dir];
    if (f->nadded == 0) { /* the usual round: the lines that moved, as they are */
        uint32_t* t = f->cur;
        f->cur = f->keep;
        f->keep = t;
        f->ncur = f->nkeep;
        f->nkeep = 0;
        return;
    }
    /* Shell sort (gaps 1, 4, 13, ...): usually a handful of keys, occasionally a few hundred. */
    uint64_t* a = f->added;
    const uint32_t m = f->nadded;
    uint32_t gap = 1;
    while (gap < m / 3)
        gap = gap * 3 + 1;
    for (; gap > 0; gap /= 3)
        for (uint32_t i = gap; i < m; ++i) {
            const uint64_t v = a[i];
            uint32_t j = i;
            for (; j >= gap && a[j - gap] > v; j -= gap)
                a[j] = a[j - gap];
            a[j] = v;
        }
    uint32_t i = 0, j = 0, n = 0;
    while (i < f->nkeep || j < m) {
        if (j >= m || (i < f->nkeep && line_key(wf, dir, f->keep[i]) < a[j]))
            f->cur[n++] = f->keep[i++];
        else
            f->cur[n++] = (uint32_t)(a[j++] & 0xffffffffu);
    }
    f->ncur = n;
    f->nkeep = f->nadded = 0;
}

/* The column of span s: the last whose first span is at or before s (the columns hold their spans in column order,
 * as nb_compact_heightfield_build lays them out). Only the seeds need it: a binary search each. */
static int span_column(const nb_compact_heightfield* chf, uint32_t s)
{
    int lo = 0, hi = chf->width * chf->height - 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (chf->cells[mid].index <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Grows region wf->id from span seed in cell (sx, sz) until no front can move. Returns the spans it took. */
static uint32_t grow_region(wavefront* wf, uint32_t seed, int sx, int sz)
{
    wf->area = wf->chf->areas[seed];
    wf->reg[seed] = wf->id;
    wf->seed_line[0] = sz;
    wf->seed_line[1] = sx;
    const int pos[2] = { sx, sz };
    for (int f = 0; f < 2; ++f) {
        wf_lines* ln = &wf->lines[f];
        const int l = wf->seed_line[f];
        ln->first = ln->last = l;
        ln->lo[l] = ln->hi[l] = pos[f];
        ln->lo_span[l] = ln->hi_span[l] = seed;
        activate(wf, side_front(f, SIDE_LO), l);
        activate(wf, side_front(f, SIDE_HI), l);
    }
    uint32_t taken = 1;
    static const int order[4] = { 2, 1, 0, 3 }; /* +x, +z, -x, -z */
    for (;;) {
        int moving = 0;
        for (int dir = 0; dir < 4; ++dir)
            moving |= wf->fronts[dir].nkeep > 0 || wf->fronts[dir].nadded > 0;
        if (!moving)
            break;
        /* Each front takes its lines when its turn comes, so a line made earlier in the round (the new column of the
         * +x front) moves in the same round: a rectangle grows into the next larger rectangle in one round. */
        for (int k = 0; k < 4; ++k) {
            const int dir = order[k];
            wf_front* f = &wf->fronts[dir];
            start_round(wf, dir);
            for (uint32_t i = 0; i < f->ncur; ++i)
                if (advance(wf, dir, (int)f->cur[i])) {
                    ++taken;
                    f->keep[f->nkeep++] = f->cur[i];
                }
            f->ncur = 0;
        }
    }
    /* Clear this region's line states and waiting lists for the next (only the lines it used: cost in proportion
     * to it). */
    for (int f = 0; f < 2; ++f) {
        const wf_lines* ln = &wf->lines[f];
        for (int l = ln->first; l <= ln->last; ++l)
            for (int side = 0; side < 2; ++side) {
                wf_front* fr = &wf->fronts[side_front(f, side)];
                fr->state[l] = LINE_NONE;
                const int32_t node = fr->node0 + l;
                wf->wait.next[node] = wf->wait.prev[node] = wf->wait.list[node] = -1;
                wf->wait.head[wf->wait.list0[f][side] + l] = -1;
            }
    }
    for (int dir = 0; dir < 4; ++dir)
        wf->fronts[dir].ngap = 0;
    return taken;
}

nb_status nb_build_regions_wavefront(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                     int32_t min_region_area, int32_t merge_region_area)
{
    static const char* fn = "nb_build_regions_wavefront";
    nb_status st = nb_region_check_args(ctx, fn, chf, border_size, min_region_area, merge_region_area);
    if (st != NB_OK)
        return st;
    if (!chf->dist) {
        st = nb_build_distance_field(ctx, chf);
        if (st != NB_OK)
            return st;
    }

    const uint32_t n = chf->span_count;
    const int w = chf->width, h = chf->height;
    const size_t nlines = (size_t)w + (size_t)h;
    const uint32_t ndist = (uint32_t)chf->max_distance + 1;
    wavefront wf;
    memset(&wf, 0, sizeof(wf));
    wf.chf = chf;
    wf.reg = (uint16_t*)nb_calloc(ctx, (size_t)n + 1, sizeof(uint16_t));
    uint32_t* order = (uint32_t*)nb_alloc(ctx, ((size_t)n + 1) * sizeof(uint32_t));
    uint32_t* bucket = (uint32_t*)nb_calloc(ctx, (size_t)ndist + 1, sizeof(uint32_t));
    /* Per line: lo, hi, lo_span, hi_span (both families), cur and keep (both fronts of each family). */
    uint32_t* words = (uint32_t*)nb_alloc(ctx, (nlines * 8 + 1) * sizeof(uint32_t));
    uint64_t* added = (uint64_t*)nb_alloc(ctx, (nlines * 2 + 1) * sizeof(uint64_t));
    uint8_t* states = (uint8_t*)nb_calloc(ctx, nlines * 2 + 1, 1);
    /* Waiting lists: heads (one per side of each line), then next, prev and list per node (one per front line). */
    int32_t* waits = (int32_t*)nb_alloc(ctx, (nlines * 8 + 1) * sizeof(int32_t));
    /* Same-value bits: lo and hi of the rows, then of the columns (a spare word each for get_bits). */
    const size_t row_words = (size_t)h / 64 + 2, col_words = (size_t)w / 64 + 2;
    uint64_t* same = (uint64_t*)nb_calloc(ctx, 2 * (row_words + col_words), sizeof(uint64_t));
    if (!wf.reg || !order || !bucket || !words || !added || !states || !waits || !same) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory '%s' (%u)", fn,
                     !wf.reg ? "reg" : !order ? "order" : !bucket ? "buckets" : !words ? "lines"
                     : !added ? "added" : !states ? "states" : !waits ? "waits" : "same",
                     !bucket ? ndist : (!wf.reg || !order) ? n : (uint32_t)nlines);
        goto cleanup;
    }
    {
        uint32_t* p = words;
        for (int f = 0; f < 2; ++f) {
            const size_t len = f == 0 ? (size_t)h : (size_t)w;
            wf_lines* ln = &wf.lines[f];
            ln->lo = (int32_t*)p;
            ln->hi = (int32_t*)(p + len);
            ln->lo_span = p + 2 * len;
            ln->hi_span = p + 3 * len;
            p += 4 * len;
            ln->lo_same = same + (f == 0 ? 0 : 2 * row_words);
            ln->hi_same = ln->lo_same + (f == 0 ? row_words : col_words);
        }
        for (size_t i = 0; i < nlines * 8; ++i)
            waits[i] = -1;
        wf.wait.head = waits;
        wf.wait.next = waits + nlines * 2;
        wf.wait.prev = waits + nlines * 4;
        wf.wait.list = waits + nlines * 6;
        wf.wait.list0[0][SIDE_LO] = 0;
        wf.wait.list0[0][SIDE_HI] = h;
        wf.wait.list0[1][SIDE_LO] = 2 * h;
        wf.wait.list0[1][SIDE_HI] = 2 * h + w;
        uint64_t* q = added;
        uint8_t* s = states;
        for (int dir = 0; dir < 4; ++dir) {
            const size_t len = front_family(dir) == 0 ? (size_t)h : (size_t)w;
            wf_front* f = &wf.fronts[dir];
            f->cur = p;
            f->keep = p + len;
            f->added = q;
            f->state = s;
            f->node0 = (int32_t)(s - states); /* 0, h, h + w, 2h + w: grows with dir */
            p += 2 * len;
            q += len;
            s += len;
        }
    }

    uint16_t next_id = 1;
    nb_region_paint_border(chf, border_size, wf.reg, &next_id);

    /* ---- seed order: free walkable spans by distance to the walls, farthest first, ties in span order
     * (counting sort) ---- */
    const uint16_t* dist = chf->dist;
    uint32_t total = 0;
    for (uint32_t i = 0; i < n; ++i)
        if (chf->areas[i] != NB_NULL_AREA && !wf.reg[i]) {
            ++bucket[ndist - 1 - nb_mini(dist[i], (int)ndist - 1) + 1];
            ++total;
        }
    for (uint32_t b = 1; b <= ndist; ++b)
        bucket[b] += bucket[b - 1];
    for (uint32_t i = 0; i < n; ++i)
        if (chf->areas[i] != NB_NULL_AREA && !wf.reg[i])
            order[bucket[ndist - 1 - nb_mini(dist[i], (int)ndist - 1)]++] = i;

    /* ---- grow one region per seed ---- */
    uint32_t done = 0, next_report = 0;
    for (uint32_t k = 0; k < total; ++k) {
        const uint32_t seed = order[k];
        if (wf.reg[seed])
            continue;
        if (done >= next_report) {
            st = nb_report(ctx, NB_STAGE_REGIONS, done, total);
            if (st != NB_OK)
                goto cleanup;
            next_report = done + nb_maxi((int)(total / 32), 1);
        }
        if (next_id > NB_MAX_REGION_ID) {
            st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: more than %d regions; bake in tiles", fn, NB_MAX_REGION_ID);
            goto cleanup;
        }
        wf.id = next_id++;
        const int col = span_column(chf, seed);
        done += grow_region(&wf, seed, col % w, col / w);
    }
    st = nb_report(ctx, NB_STAGE_REGIONS, total, total ? total : 1);
    if (st != NB_OK)
        goto cleanup;

    st = nb_region_merge_small(ctx, fn, chf, wf.reg, next_id, min_region_area, merge_region_area);
    if (st == NB_OK) {
        chf->border_size = border_size;
        for (uint32_t i = 0; i < n; ++i)
            chf->spans[i].reg = wf.reg[i];
    }

cleanup:
    nb_free(ctx, wf.reg);
    nb_free(ctx, order);
    nb_free(ctx, bucket);
    nb_free(ctx, words);
    nb_free(ctx, added);
    nb_free(ctx, states);
    nb_free(ctx, waits);
    nb_free(ctx, same);
    return st;
}
