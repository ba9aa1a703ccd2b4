/* Region clean-up shared by the partitions: small island removal, merging of small regions, id compaction, and the
 * layer grouping of the layer partition (seeds 000, 002). */
#include "region_internal.h"

/* ---- small helpers ----------------------------------------------------------------------------------------- */

nb_status nb_region_check_args(nb_context* ctx, const char* fn, const nb_compact_heightfield* chf, int border_size,
                               int min_area, int merge_area)
{
    if (!ctx || !chf)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !ctx ? "ctx" : "chf");
    if (border_size < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: border_size must be >= 0 (got %d)", fn, border_size);
    if (min_area < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: min_region_area must be >= 0 (got %d)", fn, min_area);
    if (merge_area < 0)
        return nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: merge_region_area must be >= 0 (got %d)", fn, merge_area);
    return NB_OK;
}

void nb_region_build_neighbours(const nb_compact_heightfield* chf, uint32_t* nbr)
{
    const int w = chf->width, h = chf->height;
    for (int z = 0; z < h; ++z) {
        for (int x = 0; x < w; ++x) {
            const int col = x + z * w;
            const nb_compact_cell c = chf->cells[col];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const nb_compact_span* s = &chf->spans[i];
                uint32_t* out = nbr + (size_t)i * 4;
                for (int dir = 0; dir < 4; ++dir)
                    out[dir] = nb_span_con(s, dir) == NB_NOT_CONNECTED ? NB_NO_SPAN
                                                                        : nb_region_neighbour(chf, col, s, dir);
            }
        }
    }
}

static void paint_rect(const nb_compact_heightfield* chf, int x0, int x1, int z0, int z1, uint16_t id, uint16_t* reg)
{
    for (int z = z0; z < z1; ++z)
        for (int x = x0; x < x1; ++x) {
            const nb_compact_cell c = chf->cells[x + z * chf->width];
            for (uint32_t i = c.index; i < c.index + c.count; ++i)
                if (chf->areas[i] != NB_NULL_AREA)
                    reg[i] = id;
        }
}

void nb_region_paint_border(const nb_compact_heightfield* chf, int border_size, uint16_t* reg, uint16_t* next_id)
{
    if (border_size <= 0)
        return;
    const int w = chf->width, h = chf->height;
    const int bw = nb_mini(w, border_size), bh = nb_mini(h, border_size);
    /* One id per strip (-x, +x, -z, +z); the later strips win the corners. */
    paint_rect(chf, 0, bw, 0, h, (uint16_t)(NB_BORDER_REG | (*next_id)++), reg);
    paint_rect(chf, w - bw, w, 0, h, (uint16_t)(NB_BORDER_REG | (*next_id)++), reg);
    paint_rect(chf, 0, w, 0, bh, (uint16_t)(NB_BORDER_REG | (*next_id)++), reg);
    paint_rect(chf, 0, w, h - bh, h, (uint16_t)(NB_BORDER_REG | (*next_id)++), reg);
}

/* ---- id lists in one growable pool --------------------------------------------------------------------------
 * Every region keeps two short lists of region ids (its neighbours around the outline, and the regions sharing a
 * column with it). They live in one pool: a list that outgrows its slot moves to the end of the pool, so a whole
 * clean-up costs a handful of allocations however many regions there are. */

typedef struct id_list {
    uint32_t off, len, cap;
} id_list;

typedef struct id_pool {
    nb_context* ctx;
    uint16_t* data;
    uint32_t top, cap;
    size_t failed_bytes; /* size of the allocation that failed, for the message */
} id_pool;

static int pool_make_room(id_pool* p, uint32_t n)
{
    if (p->top + n <= p->cap)
        return 1;
    uint32_t cap = p->cap ? p->cap : 256;
    while (cap < p->top + n && cap < (1u << 30))
        cap *= 2;
    uint16_t* data = cap >= p->top + n ? (uint16_t*)nb_alloc(p->ctx, (size_t)cap * sizeof(uint16_t)) : NULL;
    if (!data) {
        p->failed_bytes = (size_t)cap * sizeof(uint16_t);
        return 0;
    }
    if (p->top)
        memcpy(data, p->data, (size_t)p->top * sizeof(uint16_t));
    nb_free(p->ctx, p->data);
    p->data = data;
    p->cap = cap;
    return 1;
}

/* A fresh slot of at least `cap` entries (the list is then empty); 0 when out of memory. */
static int list_alloc(id_pool* p, id_list* l, uint32_t cap)
{
    if (cap < 4)
        cap = 4;
    if (!pool_make_room(p, cap))
        return 0;
    l->off = p->top;
    l->len = 0;
    l->cap = cap;
    p->top += cap;
    return 1;
}

static int list_push(id_pool* p, id_list* l, uint16_t v)
{
    if (l->len == l->cap) {
        id_list moved;
        if (!list_alloc(p, &moved, l->cap * 2))
            return 0;
        if (l->len)
            memcpy(p->data + moved.off, p->data + l->off, (size_t)l->len * sizeof(uint16_t));
        moved.len = l->len;
        *l = moved;
    }
    p->data[l->off + l->len++] = v;
    return 1;
}

static int list_has(const id_pool* p, const id_list* l, uint16_t v)
{
    const uint16_t* d = p->data + l->off;
    for (uint32_t k = 0; k < l->len; ++k)
        if (d[k] == v)
            return 1;
    return 0;
}

static uint32_t list_count(const id_pool* p, const id_list* l, uint16_t v)
{
    const uint16_t* d = p->data + l->off;
    uint32_t n = 0;
    for (uint32_t k = 0; k < l->len; ++k)
        n += d[k] == v;
    return n;
}

static int list_add_unique(id_pool* p, id_list* l, uint16_t v)
{
    return list_has(p, l, v) ? 1 : list_push(p, l, v);
}

/* The neighbour list is a cyclic sequence around the outline: collapse runs of one id (also across the wrap),
 * keeping at least one entry. */
static void list_collapse_runs(id_pool* p, id_list* l)
{
    uint16_t* d = p->data + l->off;
    uint32_t k = 0;
    while (k < l->len && l->len > 1) {
        const uint32_t next = (k + 1) % l->len;
        if (d[k] == d[next]) {
            memmove(d + k, d + k + 1, (size_t)(l->len - k - 1) * sizeof(uint16_t));
            --l->len;
        } else {
            ++k;
        }
    }
}

/* ---- regions ------------------------------------------------------------------------------------------------- */

typedef struct region {
    uint32_t span_count;
    uint16_t id;          /* current id; regions merged into another take its id */
    uint8_t area;
    uint8_t overlap;      /* the region has two spans in one column */
    uint8_t visited;
    uint8_t touches_tile; /* borders a NB_BORDER_REG region (layers) */
    id_list conns;        /* neighbour ids in order around the outline (0 = no region) */
    id_list floors;       /* ids of regions sharing a column with this one */
    id_list listed_by;    /* ids of regions whose conns may hold this id (more, never fewer): a region in a hole
                           * of another lists it, and the other does not list the hole back */
} region;

/* Region on the other side of the edge of span i (column col) towards dir; 0 without a link. */
static inline uint16_t across(const nb_compact_heightfield* chf, const uint16_t* reg, int col, uint32_t i, int dir)
{
    const nb_compact_span* s = &chf->spans[i];
    if (nb_span_con(s, dir) == NB_NOT_CONNECTED)
        return 0;
    return reg[nb_region_neighbour(chf, col, s, dir)];
}

/* Walks the outline of the region of span i edge by edge, starting at its edge towards dir, and records the
 * cyclic sequence of regions met on the other side (0 = no region). Holes are not visited. */
static int walk_outline(const nb_compact_heightfield* chf, const uint16_t* reg, id_pool* pool, id_list* out, int x,
                        int z, uint32_t i, int dir)
{
    const int w = chf->width;
    const uint32_t start = i;
    const int start_dir = dir;
    uint16_t cur = across(chf, reg, x + z * w, i, dir);
    if (!list_push(pool, out, cur))
        return 0;
    /* Each (span, direction) state occurs once on a closed walk; the bound only guards against odd link data. */
    const uint64_t max_steps = (uint64_t)chf->span_count * 4 + 4;
    for (uint64_t step = 0; step < max_steps; ++step) {
        const nb_compact_span* s = &chf->spans[i];
        const int linked = nb_span_con(s, dir) != NB_NOT_CONNECTED;
        const uint32_t ni = linked ? nb_region_neighbour(chf, x + z * w, s, dir) : NB_NO_SPAN;
        const uint16_t r = linked ? reg[ni] : 0;
        if (r != reg[i]) {
            if (r != cur) {
                cur = r;
                if (!list_push(pool, out, cur))
                    return 0;
            }
            dir = (dir + 1) & 3; /* an outline edge: go on with the span's next edge (clockwise, x right, z up) */
        } else {
            x += nb_dir_offset_x(dir);
            z += nb_dir_offset_z(dir);
            i = ni;
            dir = (dir + 3) & 3; /* stepped along the region: look back counter-clockwise for the wall */
        }
        if (i == start && dir == start_dir)
            break;
    }
    list_collapse_runs(pool, out);
    return 1;
}

/* Could b be merged into a (looked at from a)? Same area, touching along one stretch of outline only, never
 * stacked above each other. */
static int can_merge(const id_pool* p, const region* a, const region* b)
{
    if (a->area != b->area)
        return 0;
    if (list_count(p, &a->conns, b->id) > 1)
        return 0;
    return !list_has(p, &a->floors, b->id);
}

/* Absorbs b into a: a's outline is spliced with b's at their shared stretch. Returns 0 when they do not list each
 * other as neighbours (nothing changes), -1 when out of memory. */
static int absorb(id_pool* p, region* a, region* b)
{
    const uint16_t aid = a->id, bid = b->id;
    uint32_t at_a = UINT32_MAX, at_b = UINT32_MAX;
    for (uint32_t k = 0; k < a->conns.len && at_a == UINT32_MAX; ++k)
        if (p->data[a->conns.off + k] == bid)
            at_a = k;
    for (uint32_t k = 0; k < b->conns.len && at_b == UINT32_MAX; ++k)
        if (p->data[b->conns.off + k] == aid)
            at_b = k;
    if (at_a == UINT32_MAX || at_b == UINT32_MAX)
        return 0;
    /* a's sequence after b, then b's sequence after a. Growing the pool keeps every slot at its offset, so make
     * room first, then read the old slots by offset. */
    const id_list old_a = a->conns, old_b = b->conns;
    id_list merged;
    if (!list_alloc(p, &merged, old_a.len + old_b.len))
        return -1;
    uint16_t* dst = p->data + merged.off;
    for (uint32_t k = 1; k < old_a.len; ++k)
        dst[merged.len++] = p->data[old_a.off + (at_a + k) % old_a.len];
    for (uint32_t k = 1; k < old_b.len; ++k)
        dst[merged.len++] = p->data[old_b.off + (at_b + k) % old_b.len];
    a->conns = merged;
    list_collapse_runs(p, &a->conns);
    for (uint32_t k = 0; k < b->floors.len; ++k)
        if (!list_add_unique(p, &a->floors, p->data[b->floors.off + k]))
            return -1;
    a->span_count += b->span_count;
    b->span_count = 0;
    b->conns.len = 0;
    return 1;
}

/* Returns 1 when r's outline neighbours held old_id. */
static int rename_neighbour(id_pool* p, region* r, uint16_t old_id, uint16_t new_id)
{
    int changed = 0;
    uint16_t* c = p->data + r->conns.off;
    for (uint32_t k = 0; k < r->conns.len; ++k)
        if (c[k] == old_id) {
            c[k] = new_id;
            changed = 1;
        }
    uint16_t* f = p->data + r->floors.off;
    for (uint32_t k = 0; k < r->floors.len; ++k)
        if (f[k] == old_id)
            f[k] = new_id;
    if (changed)
        list_collapse_runs(p, &r->conns);
    return changed;
}

/* Records that `who` lists each id of `ids` (tile border regions and 0 are not regions here). 0 when out of
 * memory. */
static int note_listed(id_pool* p, region* regions, uint32_t nreg, const id_list* ids, uint16_t who)
{
    for (uint32_t k = 0; k < ids->len; ++k) {
        const uint16_t e = p->data[ids->off + k];
        if (e != 0 && e != who && !(e & NB_BORDER_REG) && e < nreg && !list_add_unique(p, &regions[e].listed_by, who))
            return 0;
    }
    return 1;
}

/* The id a region ended under: merged regions point at the region that absorbed them, which may have been
 * absorbed in turn. */
static uint16_t final_id(const region* regions, uint16_t id)
{
    while (id != 0 && regions[id].id != id)
        id = regions[id].id;
    return id;
}

static int touches_null(const id_pool* p, const region* r) { return list_has(p, &r->conns, 0); }

/* Gives the surviving ids 1..n in order of their lowest provisional id, skipping ids that hold no spans, and
 * rewrites reg (tile border regions keep their flagged ids). Returns n. map needs nreg entries. */
static uint16_t compact_ids(nb_compact_heightfield* chf, region* regions, uint32_t nreg, uint16_t* reg,
                            uint32_t* totals, uint16_t* map)
{
    memset(totals, 0, (size_t)nreg * sizeof(uint32_t));
    memset(map, 0, (size_t)nreg * sizeof(uint16_t));
    for (uint32_t r = 0; r < nreg; ++r)
        if (regions[r].id && regions[r].id < nreg)
            totals[regions[r].id] += regions[r].span_count;
    uint16_t n = 0;
    for (uint32_t r = 0; r < nreg; ++r) {
        const uint16_t id = regions[r].id;
        if (id && id < nreg && !map[id] && totals[id])
            map[id] = ++n;
    }
    for (uint32_t i = 0; i < chf->span_count; ++i) {
        const uint16_t r = reg[i];
        if (r & NB_BORDER_REG)
            continue;
        const uint16_t id = r < nreg ? regions[r].id : 0;
        reg[i] = id && id < nreg ? map[id] : 0;
    }
    return n;
}

/* ---- watershed / monotone clean-up --------------------------------------------------------------------------- */

/* One row of nb_region_merge_and_filter's scan: span counts, regions stacked in a column (floors), and the
 * neighbours along the outline of each region met for the first time. 0 when out of memory. A function of its own
 * for V8's tiering (filter.c, ledge_row): as a loop inside the merge, the first bake ran all of it in the baseline
 * tier and paid for optimizing the whole merge (the largest function of the bake) in the background. */
static NB_NOINLINE int scan_row(const nb_compact_heightfield* chf, const uint16_t* reg, region* regions, uint32_t nreg,
                                id_pool* pool, int z)
{
    const int w = chf->width;
    for (int x = 0; x < w; ++x) {
        const nb_compact_cell c = chf->cells[x + z * w];
        /* A column stacked like the one before it (the same regions, bottom up: most of a multi-storey level)
         * adds no floors: those pairs are in the lists already. Checking each pair against each list made a tower
         * of n storeys O(n^3) per column. */
        int same = 0;
        if (x > 0 && c.count > 1) {
            const nb_compact_cell pc = chf->cells[x - 1 + z * w];
            same = pc.count == c.count;
            for (uint32_t k = 0; k < c.count && same; ++k)
                same = reg[c.index + k] == reg[pc.index + k];
        }
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            const uint16_t r = reg[i];
            if (r == 0 || r >= nreg)
                continue;
            region* rg = &regions[r];
            ++rg->span_count;
            for (uint32_t j = c.index; j < c.index + c.count && !same; ++j) {
                const uint16_t other = reg[j];
                if (j == i || other == 0 || other >= nreg)
                    continue;
                if (other == r)
                    rg->overlap = 1;
                if (!list_add_unique(pool, &rg->floors, other))
                    return 0;
            }
            if (rg->conns.len > 0)
                continue; /* outline already walked */
            rg->area = chf->areas[i];
            for (int dir = 0; dir < 4; ++dir) {
                if (across(chf, reg, x + z * w, i, dir) != r) {
                    if (!walk_outline(chf, reg, pool, &rg->conns, x, z, i, dir))
                        return 0;
                    break;
                }
            }
        }
    }
    return 1;
}

/* A region with two spans in one column (a watershed flood that went all the way round a spiral ramp, up a helix)
 * cannot be outlined: its contour would mix the floors, and its polygons would be lost (the audit's parking ramp
 * kept 68 of its 1053 m2). Each such region is split into pieces with at most one span per column: a breadth-first
 * flood from its first span (column by column) takes the linked spans of the region whose column holds no span of
 * the piece yet, and what it leaves seeds the next piece. Pieces take new ids from *id_count up, which grows; the
 * merge that follows joins pieces again only where they do not stack. Regions without overlap are left alone. */
static nb_status split_overlapping(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                   uint16_t* id_count)
{
    const uint16_t n0 = *id_count;
    const int ncols = chf->width * chf->height;
    uint8_t* bad = (uint8_t*)nb_calloc(ctx, n0 ? n0 : 1, 1);
    int32_t* seen = (int32_t*)nb_alloc(ctx, (size_t)(n0 ? n0 : 1) * sizeof(int32_t)); /* the last column of each */
    if (!bad || !seen) {
        nb_free(ctx, bad);
        nb_free(ctx, seen);
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'overlapping regions' (%u)", fn, n0);
    }
    for (uint32_t r = 0; r < n0; ++r)
        seen[r] = -1;
    int any = 0;
    for (int col = 0; col < ncols; ++col) {
        const nb_compact_cell c = chf->cells[col];
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            const uint16_t r = reg[i];
            if (r == 0 || r >= n0)
                continue; /* (border regions are >= n0: NB_BORDER_REG is set) */
            if (seen[r] == col) {
                bad[r] = 1;
                any = 1;
            }
            seen[r] = col;
        }
    }
    nb_free(ctx, seen);
    nb_status st = NB_OK;
    uint32_t* queue = NULL;
    int32_t* qcol = NULL;
    if (!any)
        goto done;
    queue = (uint32_t*)nb_alloc(ctx, (size_t)chf->span_count * sizeof(uint32_t));
    qcol = (int32_t*)nb_alloc(ctx, (size_t)chf->span_count * sizeof(int32_t));
    if (!queue || !qcol) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'region split' (%u spans)", fn, chf->span_count);
        goto done;
    }
    uint32_t next = n0;
    for (int col = 0; col < ncols; ++col) {
        const nb_compact_cell c = chf->cells[col];
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            const uint16_t old = reg[i];
            if (old == 0 || old >= n0 || !bad[old])
                continue; /* not in an overlapping region, or already in a piece */
            if (next > NB_MAX_REGION_ID) {
                st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: more than %d regions; bake in tiles", fn, NB_MAX_REGION_ID);
                goto done;
            }
            const uint16_t id = (uint16_t)next++;
            uint32_t head = 0, tail = 0;
            reg[i] = id;
            queue[tail] = i;
            qcol[tail++] = col;
            while (head < tail) {
                const uint32_t si = queue[head];
                const int scol = qcol[head++];
                const nb_compact_span* sp = &chf->spans[si];
                for (int dir = 0; dir < 4; ++dir) {
                    if (nb_span_con(sp, dir) == NB_NOT_CONNECTED)
                        continue;
                    const uint32_t ni = nb_region_neighbour(chf, scol, sp, dir);
                    if (reg[ni] != old)
                        continue;
                    const int ncol = scol + nb_dir_offset_x(dir) + nb_dir_offset_z(dir) * chf->width;
                    const nb_compact_cell nc = chf->cells[ncol];
                    int taken = 0;
                    for (uint32_t k = nc.index; k < nc.index + nc.count && !taken; ++k)
                        taken = reg[k] == id;
                    if (taken)
                        continue;
                    reg[ni] = id;
                    queue[tail] = ni;
                    qcol[tail++] = ncol;
                }
            }
        }
    }
    *id_count = (uint16_t)next;
done:
    nb_free(ctx, bad);
    nb_free(ctx, queue);
    nb_free(ctx, qcol);
    return st;
}

/* merge_and_filter's work. With overlap non-NULL, a region found overlapping itself stops it before any change to
 * reg (*overlap = 1), so that the caller can split it first. */
static nb_status merge_regions(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                               uint16_t id_count, int min_area, int merge_area, int merge_enclosed, int* overlap)
{
    const uint32_t nreg = id_count;
    nb_status st = NB_OK;
    id_pool pool = { ctx, NULL, 0, 0, 0 };
    region* regions = (region*)nb_calloc(ctx, nreg, sizeof(region));
    uint16_t* stack = (uint16_t*)nb_alloc(ctx, (size_t)nreg * sizeof(uint16_t));
    uint16_t* group = (uint16_t*)nb_alloc(ctx, (size_t)nreg * sizeof(uint16_t));
    uint32_t* totals = (uint32_t*)nb_alloc(ctx, (size_t)nreg * sizeof(uint32_t));
    /* The pool starts with room, so that its data pointer is never NULL (empty lists index it too). */
    if (!regions || !stack || !group || !totals || !pool_make_room(&pool, 256)) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'regions' (%u)", fn, nreg);
        goto cleanup;
    }
    for (uint32_t r = 0; r < nreg; ++r)
        regions[r].id = (uint16_t)r;

    /* ---- span counts, stacked regions, and each region's outline neighbours ---- */
    for (int z = 0; z < chf->height; ++z)
        if (!scan_row(chf, reg, regions, nreg, &pool, z))
            goto oom;

    if (overlap)
        for (uint32_t r = 1; r < nreg; ++r)
            if (regions[r].overlap) {
                *overlap = 1;
                goto cleanup;
            }

    for (uint32_t r = 1; r < nreg; ++r)
        if (!note_listed(&pool, regions, nreg, &regions[r].conns, (uint16_t)r))
            goto oom;

    /* ---- drop islands: connected groups of regions below min_area, unless a group reaches the tile border
     * (its true size lies partly in the next tile) ---- */
    for (uint32_t r = 1; r < nreg; ++r) {
        region* rg = &regions[r];
        if (rg->id == 0 || rg->span_count == 0 || rg->visited)
            continue;
        uint32_t nstack = 0, ngroup = 0;
        uint64_t total = 0;
        int tile_border = 0;
        rg->visited = 1;
        stack[nstack++] = (uint16_t)r;
        while (nstack) {
            const region* cur = &regions[stack[--nstack]];
            total += cur->span_count;
            group[ngroup++] = cur->id;
            const uint16_t* nb = pool.data + cur->conns.off;
            for (uint32_t k = 0; k < cur->conns.len; ++k) {
                if (nb[k] & NB_BORDER_REG) {
                    tile_border = 1;
                    continue;
                }
                region* n = &regions[nb[k]];
                if (n->visited || n->id == 0)
                    continue;
                n->visited = 1;
                stack[nstack++] = n->id;
            }
        }
        if (total < (uint64_t)min_area && !tile_border)
            for (uint32_t k = 0; k < ngroup; ++k) {
                regions[group[k]].span_count = 0;
                regions[group[k]].id = 0;
            }
    }

    /* ---- merge small regions (and regions enclosed by others) into their smallest neighbour, until stable ---- */
    for (int merged_any = 1; merged_any;) {
        merged_any = 0;
        for (uint32_t r = 1; r < nreg; ++r) {
            region* rg = &regions[r];
            if (rg->id == 0 || rg->overlap || rg->span_count == 0)
                continue;
            if (rg->span_count > (uint32_t)merge_area && (!merge_enclosed || touches_null(&pool, rg)))
                continue;
            uint32_t smallest = UINT32_MAX;
            uint16_t target = rg->id;
            const uint16_t* nb = pool.data + rg->conns.off;
            for (uint32_t k = 0; k < rg->conns.len; ++k) {
                if (nb[k] & NB_BORDER_REG)
                    continue;
                const region* m = &regions[nb[k]];
                if (m->id == 0 || m->overlap)
                    continue;
                if (m->span_count < smallest && can_merge(&pool, rg, m) && can_merge(&pool, m, rg)) {
                    smallest = m->span_count;
                    target = m->id;
                }
            }
            if (target == rg->id)
                continue;
            const uint16_t old_id = rg->id;
            const id_list old_conns = rg->conns; /* (absorb empties the list, not its slot) */
            const int done = absorb(&pool, &regions[target], rg);
            if (done < 0)
                goto oom;
            if (done == 0)
                continue;
            rg->id = target; /* those merged into rg earlier follow it there (final_id) */
            if (!note_listed(&pool, regions, nreg, &old_conns, target))
                goto oom;
            /* Every region that lists old_id now lists target: those whose conns may hold it (listed_by), and
             * those stacked with it (floors are mutual). Renaming in the others would change nothing. */
            for (int pass = 0; pass < 2; ++pass) {
                const id_list who = pass == 0 ? rg->listed_by : rg->floors;
                for (uint32_t k = 0; k < who.len; ++k) {
                    const uint16_t oi = pool.data[who.off + k];
                    if (oi & NB_BORDER_REG || oi >= nreg)
                        continue;
                    region* o = &regions[oi];
                    if (o->id != 0 && rename_neighbour(&pool, o, old_id, target) &&
                        !list_add_unique(&pool, &regions[target].listed_by, oi))
                        goto oom;
                }
            }
            merged_any = 1;
        }
    }

    for (uint32_t r = 1; r < nreg; ++r)
        regions[r].id = final_id(regions, regions[r].id);
    chf->max_regions = (uint16_t)(compact_ids(chf, regions, nreg, reg, totals, group) + 1);
    goto cleanup;

oom:
    st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'region lists' (%zu bytes)", fn, pool.failed_bytes);
cleanup:
    nb_free(ctx, pool.data);
    nb_free(ctx, regions);
    nb_free(ctx, stack);
    nb_free(ctx, group);
    nb_free(ctx, totals);
    return st;
}

/* Drops islands and merges small regions (merge_regions); a region that overlaps itself is split first. */
static nb_status merge_and_filter(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                  uint16_t id_count, int min_area, int merge_area, int merge_enclosed)
{
    int overlap = 0;
    nb_status st = merge_regions(ctx, fn, chf, reg, id_count, min_area, merge_area, merge_enclosed, &overlap);
    if (st != NB_OK || !overlap)
        return st;
    st = split_overlapping(ctx, fn, chf, reg, &id_count);
    if (st != NB_OK)
        return st;
    return merge_regions(ctx, fn, chf, reg, id_count, min_area, merge_area, merge_enclosed, NULL);
}

nb_status nb_region_merge_and_filter(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                     uint16_t id_count, int min_area, int merge_area)
{
    return merge_and_filter(ctx, fn, chf, reg, id_count, min_area, merge_area, 1);
}

nb_status nb_region_merge_small(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                uint16_t id_count, int min_area, int merge_area)
{
    return merge_and_filter(ctx, fn, chf, reg, id_count, min_area, merge_area, 0);
}

/* ---- layer grouping ------------------------------------------------------------------------------------------- */

nb_status nb_region_merge_layers(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                 uint16_t id_count, int min_area)
{
    nb_status st = split_overlapping(ctx, fn, chf, reg, &id_count);
    if (st != NB_OK)
        return st;
    const uint32_t nreg = id_count;
    id_pool pool = { ctx, NULL, 0, 0, 0 };
    uint16_t* column = NULL;
    region* regions = (region*)nb_calloc(ctx, nreg, sizeof(region));
    uint16_t* queue = (uint16_t*)nb_alloc(ctx, (size_t)nreg * sizeof(uint16_t));
    uint16_t* map = (uint16_t*)nb_alloc(ctx, (size_t)nreg * sizeof(uint16_t));
    uint32_t* totals = (uint32_t*)nb_alloc(ctx, (size_t)nreg * sizeof(uint32_t));
    if (!regions || !queue || !map || !totals || !pool_make_room(&pool, 256)) { /* (see above) */
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'regions' (%u)", fn, nreg);
        goto cleanup;
    }
    const int w = chf->width, h = chf->height;
    uint32_t tallest = 1;
    for (int col = 0; col < w * h; ++col)
        tallest = chf->cells[col].count > tallest ? chf->cells[col].count : tallest;
    column = (uint16_t*)nb_alloc(ctx, (size_t)tallest * 2 * sizeof(uint16_t));
    if (!column) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'column' (%u)", fn, tallest);
        goto cleanup;
    }
    uint16_t* here = column;           /* the regions of this column, bottom up */
    uint16_t* prev = column + tallest; /* and of the column before (x - 1) */
    uint32_t nprev = 0;

    /* ---- neighbours (unique, unordered) and the regions stacked in each column ---- */
    for (int z = 0; z < h; ++z) {
        for (int x = 0; x < w; ++x) {
            const int col = x + z * w;
            const nb_compact_cell c = chf->cells[col];
            uint32_t ncol = 0;
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const uint16_t r = reg[i];
                if (r == 0 || r >= nreg)
                    continue;
                region* rg = &regions[r];
                ++rg->span_count;
                rg->area = chf->areas[i];
                here[ncol++] = r;
                const nb_compact_span* s = &chf->spans[i];
                for (int dir = 0; dir < 4; ++dir) {
                    if (nb_span_con(s, dir) == NB_NOT_CONNECTED)
                        continue;
                    const uint16_t o = reg[nb_region_neighbour(chf, col, s, dir)];
                    if (o > 0 && o < nreg && o != r && !list_add_unique(&pool, &rg->conns, o))
                        goto oom;
                    if (o & NB_BORDER_REG)
                        rg->touches_tile = 1;
                }
            }
            /* A column stacked like the one before adds no pairs (as in scan_row): a tower of n storeys is then
             * not O(n^3) per column. */
            const int same = x > 0 && ncol == nprev && memcmp(here, prev, ncol * sizeof(uint16_t)) == 0;
            for (uint32_t a = 0; a + 1 < ncol && !same; ++a)
                for (uint32_t b = a + 1; b < ncol; ++b)
                    if (here[a] != here[b]) {
                        if (!list_add_unique(&pool, &regions[here[a]].floors, here[b]) ||
                            !list_add_unique(&pool, &regions[here[b]].floors, here[a]))
                            goto oom;
                    }
            uint16_t* t = prev;
            prev = here;
            here = t;
            nprev = ncol;
        }
    }

    /* ---- grow layers breadth-first from each unvisited region; a neighbour joins unless it shares a column with
     * what the layer already holds. The root collects the members' spans and stacked regions. ---- */
    for (uint32_t r = 0; r < nreg; ++r)
        regions[r].id = 0;
    uint32_t layer = 1;
    for (uint32_t r = 1; r < nreg; ++r) {
        region* root = &regions[r];
        if (root->id != 0 || root->span_count == 0)
            continue;
        root->id = (uint16_t)layer;
        uint32_t head = 0, tail = 0;
        queue[tail++] = (uint16_t)r;
        while (head < tail) {
            const region* cur = &regions[queue[head++]];
            for (uint32_t k = 0; k < cur->conns.len; ++k) {
                const uint16_t ni = pool.data[cur->conns.off + k];
                region* n = &regions[ni];
                if (n->id != 0 || n->area != cur->area)
                    continue;
                if (list_has(&pool, &root->floors, ni))
                    continue;
                queue[tail++] = ni;
                n->id = (uint16_t)layer;
                for (uint32_t f = 0; f < n->floors.len; ++f)
                    if (!list_add_unique(&pool, &root->floors, pool.data[n->floors.off + f]))
                        goto oom;
                root->span_count += n->span_count;
                n->span_count = 0;
                root->touches_tile |= n->touches_tile;
            }
        }
        ++layer;
    }

    /* ---- drop small layers (the roots hold the layer totals) ---- */
    for (uint32_t r = 1; r < nreg; ++r) {
        const region* rg = &regions[r];
        if (rg->span_count > 0 && rg->span_count < (uint32_t)min_area && !rg->touches_tile) {
            const uint16_t dead = rg->id;
            for (uint32_t k = 1; k < nreg; ++k)
                if (regions[k].id == dead)
                    regions[k].id = 0;
        }
    }

    /* Layer ids run 1..layer-1 <= nreg-1, and each layer id is the id of its root: compact_ids applies. */
    chf->max_regions = (uint16_t)(compact_ids(chf, regions, nreg, reg, totals, map) + 1);
    goto cleanup;

oom:
    st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'region lists' (%zu bytes)", fn, pool.failed_bytes);
cleanup:
    nb_free(ctx, pool.data);
    nb_free(ctx, column);
    nb_free(ctx, regions);
    nb_free(ctx, queue);
    nb_free(ctx, map);
    nb_free(ctx, totals);
    return st;
}
