/* Monotone partition (seed 000): one sweep over the rows makes regions without holes; fast, but long and thin. */
#include "region_internal.h"

#define SWEEP_SEVERAL 0xffffu /* a sweep touching more than one region in the row below */

/* Each row is cut into sweeps, runs of spans linked along +x. A sweep continues the region below it when it
 * touches exactly one region there and that region touches no other sweep of this row; otherwise it starts a
 * new region. */
nb_status nb_region_sweep_rows(nb_context* ctx, const char* fn, const nb_compact_heightfield* chf, int border_size,
                               uint16_t* reg, uint16_t* id_count)
{
    const int w = chf->width, h = chf->height;
    const int x0 = border_size, x1 = w - border_size, z0 = border_size, z1 = h - border_size;
    if (x0 >= x1 || z0 >= z1)
        return NB_OK; /* all border */
    nb_status st = NB_OK;

    /* Spans are stored column by column in scan order, so the spans of one row (within the border) are one
     * contiguous range; the sweeps of a row are bounded by its length. */
    uint32_t row_max = 0;
    for (int z = z0; z < z1; ++z) {
        const nb_compact_cell last = chf->cells[x1 - 1 + z * w];
        const uint32_t n = last.index + last.count - chf->cells[x0 + z * w].index;
        row_max = n > row_max ? n : row_max;
    }
    /* Every region id but the border ones comes from a sweep, which holds at least one span. */
    const uint32_t id_cap = chf->span_count < NB_BORDER_REG - 8 ? chf->span_count + 8 : NB_BORDER_REG;
    uint16_t* sweep_below = (uint16_t*)nb_alloc(ctx, ((size_t)row_max + 1) * sizeof(uint16_t));
    uint32_t* sweep_touch = (uint32_t*)nb_alloc(ctx, ((size_t)row_max + 1) * sizeof(uint32_t));
    uint16_t* sweep_id = (uint16_t*)nb_alloc(ctx, ((size_t)row_max + 1) * sizeof(uint16_t));
    /* below_touch[r]: spans of this row touching region r below, valid where below_row[r] is this row. */
    uint32_t* below_touch = (uint32_t*)nb_alloc(ctx, (size_t)id_cap * sizeof(uint32_t));
    int32_t* below_row = (int32_t*)nb_alloc(ctx, (size_t)id_cap * sizeof(int32_t));
    if (!sweep_below || !sweep_touch || !sweep_id) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'sweeps' (%u)", fn, row_max + 1);
        goto cleanup;
    }
    if (!below_touch || !below_row) {
        st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'below' (%u)", fn, id_cap);
        goto cleanup;
    }
    for (uint32_t r = 0; r < id_cap; ++r)
        below_row[r] = -1;

    uint32_t next_id = *id_count;
    for (int z = z0; z < z1; ++z) {
        uint32_t nsweeps = 0; /* sweep ids of this row are 1..nsweeps, kept in reg until the row is done */
        for (int x = x0; x < x1; ++x) {
            const int col = x + z * w;
            const nb_compact_cell c = chf->cells[col];
            for (uint32_t i = c.index; i < c.index + c.count; ++i) {
                const uint8_t area = chf->areas[i];
                if (area == NB_NULL_AREA)
                    continue;
                const nb_compact_span* s = &chf->spans[i];
                uint32_t sweep = 0;
                if (nb_span_con(s, 0) != NB_NOT_CONNECTED) {
                    const uint32_t a = nb_region_neighbour(chf, col, s, 0);
                    if (!(reg[a] & NB_BORDER_REG) && chf->areas[a] == area)
                        sweep = reg[a];
                }
                if (!sweep) {
                    sweep = ++nsweeps;
                    sweep_below[sweep] = 0;
                    sweep_touch[sweep] = 0;
                }
                if (nb_span_con(s, 3) != NB_NOT_CONNECTED) {
                    const uint32_t a = nb_region_neighbour(chf, col, s, 3);
                    const uint16_t below = reg[a];
                    if (below && !(below & NB_BORDER_REG) && chf->areas[a] == area) {
                        if (sweep_below[sweep] == 0 || sweep_below[sweep] == below) {
                            sweep_below[sweep] = below;
                            ++sweep_touch[sweep];
                            if (below_row[below] != z) {
                                below_row[below] = z;
                                below_touch[below] = 0;
                            }
                            ++below_touch[below];
                        } else {
                            sweep_below[sweep] = SWEEP_SEVERAL;
                        }
                    }
                }
                reg[i] = (uint16_t)sweep;
            }
        }

        for (uint32_t k = 1; k <= nsweeps; ++k) {
            const uint16_t below = sweep_below[k];
            if (below != 0 && below != SWEEP_SEVERAL && below_row[below] == z && below_touch[below] == sweep_touch[k]) {
                sweep_id[k] = below;
            } else {
                if (next_id > NB_MAX_REGION_ID || next_id >= id_cap) {
                    st = nb_fail(ctx, NB_ERR_TOO_LARGE, "%s: more than %d regions; bake in tiles", fn,
                                 NB_MAX_REGION_ID);
                    goto cleanup;
                }
                sweep_id[k] = (uint16_t)next_id++;
            }
        }
        const nb_compact_cell last = chf->cells[x1 - 1 + z * w];
        for (uint32_t i = chf->cells[x0 + z * w].index; i < last.index + last.count; ++i)
            if (reg[i])
                reg[i] = sweep_id[reg[i]];
    }
    *id_count = (uint16_t)next_id;

cleanup:
    nb_free(ctx, sweep_below);
    nb_free(ctx, sweep_touch);
    nb_free(ctx, sweep_id);
    nb_free(ctx, below_touch);
    nb_free(ctx, below_row);
    return st;
}

nb_status nb_build_regions_monotone(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                    int32_t min_region_area, int32_t merge_region_area)
{
    static const char* fn = "nb_build_regions_monotone";
    nb_status st = nb_region_check_args(ctx, fn, chf, border_size, min_region_area, merge_region_area);
    if (st != NB_OK)
        return st;
    uint16_t* reg = (uint16_t*)nb_calloc(ctx, chf->span_count, sizeof(uint16_t));
    if (!reg)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'reg' (%u)", fn, chf->span_count);

    uint16_t id_count = 1;
    nb_region_paint_border(chf, border_size, reg, &id_count);
    st = nb_region_sweep_rows(ctx, fn, chf, border_size, reg, &id_count);
    if (st == NB_OK)
        st = nb_region_merge_and_filter(ctx, fn, chf, reg, id_count, min_region_area, merge_region_area);
    if (st == NB_OK) {
        chf->border_size = border_size;
        for (uint32_t i = 0; i < chf->span_count; ++i)
            chf->spans[i].reg = reg[i];
    }
    nb_free(ctx, reg);
    return st;
}
