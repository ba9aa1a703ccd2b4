/* Compact heightfield: the open space above each walkable span, linked to its four neighbours (seed 002). */
#include "nb_internal.h"

#define MAX_LAYER (NB_NOT_CONNECTED - 1) /* neighbour index within a column must fit in 6 bits */

/* One row of links (see nb_compact_heightfield_build): each span's first neighbour span per direction whose floor is
 * within climb and whose shared open space fits the agent. A function of its own for V8's tiering (filter.c,
 * ledge_row). */
static NB_NOINLINE void link_row(nb_compact_heightfield* chf, int z, int32_t walkable_height, int32_t walkable_climb)
{
    const int w = chf->width, h = chf->height;
    for (int x = 0; x < w; ++x) {
        const nb_compact_cell c = chf->cells[x + z * w];
        if (!c.count)
            continue;
        /* Per direction, the neighbour's lowest span that this span or a higher one of the column could link to
         * (0: its first): floors rise up both columns, so a neighbour floor more than climb below this one is below
         * every later one too. With that and the stop above, a tower of n storeys costs O(n) per column, not
         * O(n^2). */
        uint32_t from[4] = { 0, 0, 0, 0 };
        for (uint32_t i = c.index; i < c.index + c.count; ++i) {
            nb_compact_span* s = &chf->spans[i];
            uint32_t con = 0xffffff; /* all four directions NB_NOT_CONNECTED; written once below */
            for (int dir = 0; dir < 4; ++dir) {
                const int nx = x + nb_dir_offset_x(dir), nz = z + nb_dir_offset_z(dir);
                if (nx < 0 || nz < 0 || nx >= w || nz >= h)
                    continue;
                const nb_compact_cell nc = chf->cells[nx + nz * w];
                const uint32_t end = nc.index + nc.count;
                for (uint32_t k = from[dir] > nc.index ? from[dir] : nc.index; k < end; ++k) {
                    const nb_compact_span* ns = &chf->spans[k];
                    const int dy = (int)ns->y - (int)s->y;
                    if (dy < -walkable_climb) {
                        from[dir] = k + 1; /* too low for this span, and for every span above it */
                        continue;
                    }
                    if (dy > walkable_climb)
                        break; /* this floor and all above it are too high */
                    const int bot = nb_maxi(s->y, ns->y);
                    const int top = nb_mini(s->y + (int)s->h, ns->y + (int)ns->h);
                    if (top - bot >= walkable_height) {
                        const uint32_t layer = k - nc.index;
                        if (layer > MAX_LAYER)
                            continue; /* too many storeys in one column to address; leave unlinked */
                        con = (con & ~(0x3fu << (dir * 6))) | (layer << (dir * 6));
                        break;
                    }
                }
            }
            s->con = con;
        }
    }
}

nb_status nb_compact_heightfield_build(nb_context* ctx, int32_t walkable_height, int32_t walkable_climb,
                                       const nb_heightfield* hf, nb_compact_heightfield** out)
{
    if (!ctx)
        return nb_fail(NULL, NB_ERR_NULL_ARG, "nb_compact_heightfield_build: ctx is NULL");
    static const char* fn = "nb_compact_heightfield_build";
    if (!hf || !out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, "%s: %s is NULL", fn, !hf ? "hf" : "out");
    *out = NULL;
    const int w = hf->width, h = hf->height;

    const int ncols = w * h;
    /* Sized for every solid span (walkable ones are fewer) and filled in one walk over the columns; the span
     * arrays are then cut to the walkable count. Counting first took a second walk over the linked columns. */
    const uint32_t room = hf->span_count;
    nb_compact_heightfield* chf = (nb_compact_heightfield*)nb_calloc(ctx, 1, sizeof(*chf));
    if (!chf)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'chf'", fn);
    chf->width = w;
    chf->height = h;
    chf->walkable_height = walkable_height;
    chf->walkable_climb = walkable_climb;
    memcpy(chf->bmin, hf->bmin, sizeof(chf->bmin));
    memcpy(chf->bmax, hf->bmax, sizeof(chf->bmax));
    chf->bmax[1] += (float)walkable_height * hf->cell_height; /* room for an agent on the top floor */
    chf->cell_size = hf->cell_size;
    chf->cell_height = hf->cell_height;
    chf->cells = (nb_compact_cell*)nb_alloc(ctx, (size_t)ncols * sizeof(nb_compact_cell));
    nb_compact_span* spans = (nb_compact_span*)nb_alloc(ctx, (size_t)room * sizeof(nb_compact_span));
    uint8_t* areas = (uint8_t*)nb_alloc(ctx, room);
    nb_status st = NB_OK;
    if (!chf->cells || !spans || !areas) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'spans' (%u)", fn, room);
        goto fail;
    }

    /* Open spans: floor = top of a walkable solid span, height = up to the next solid span. */
    uint32_t idx = 0;
    for (int col = 0; col < ncols; ++col) {
        chf->cells[col].index = idx;
        for (uint32_t s = hf->columns[col]; s; s = hf->spans[s].next) {
            const nb_span* sp = &hf->spans[s];
            if (sp->area == NB_NULL_AREA)
                continue;
            if (idx == room) { /* more spans in the columns than span_count says: a heightfield edited by hand */
                st = nb_fail(ctx, NB_ERR_INVALID_ARG, "%s: hf holds more spans than its span_count (%u)", fn, room);
                goto fail;
            }
            const int floor = (int)sp->smax;
            const int ceiling = sp->next ? (int)hf->spans[sp->next].smin : 0xffff;
            nb_compact_span* cs = &spans[idx];
            cs->y = (uint16_t)floor;
            cs->reg = 0;
            cs->h = (uint32_t)nb_clampi(ceiling - floor, 0, 0xff);
            cs->con = 0;
            areas[idx] = (uint8_t)sp->area;
            ++idx;
        }
        chf->cells[col].count = idx - chf->cells[col].index;
    }
    chf->span_count = idx;
    chf->spans = (nb_compact_span*)nb_alloc(ctx, (size_t)idx * sizeof(nb_compact_span));
    chf->areas = (uint8_t*)nb_alloc(ctx, idx);
    if (!chf->spans || !chf->areas) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'spans' (%u)", fn, idx);
        goto fail;
    }
    memcpy(chf->spans, spans, (size_t)idx * sizeof(nb_compact_span));
    memcpy(chf->areas, areas, idx);
    nb_free(ctx, spans);
    nb_free(ctx, areas);

    /* Links, row by row. */
    for (int z = 0; z < h; ++z)
        link_row(chf, z, walkable_height, walkable_climb);
    *out = chf;
    return NB_OK;

fail:
    nb_free(ctx, spans);
    nb_free(ctx, areas);
    nb_compact_heightfield_destroy(ctx, chf);
    return st;
}

void nb_compact_heightfield_destroy(nb_context* ctx, nb_compact_heightfield* chf)
{
    if (!chf)
        return;
    nb_free(ctx, chf->cells);
    nb_free(ctx, chf->spans);
    nb_free(ctx, chf->areas);
    nb_free(ctx, chf->dist);
    nb_free(ctx, chf);
}
