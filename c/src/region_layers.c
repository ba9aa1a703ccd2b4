/* Layer partition: the monotone row sweep, then neighbouring regions unite into layers that never stack over
 * themselves, so each region is one flat sheet (what tiled layer caches need). */
#include "region_internal.h"

nb_status nb_build_regions_layers(nb_context* ctx, nb_compact_heightfield* chf, int32_t border_size,
                                  int32_t min_region_area)
{
    static const char* fn = "nb_build_regions_layers";
    nb_status st = nb_region_check_args(ctx, fn, chf, border_size, min_region_area, 0);
    if (st != NB_OK)
        return st;
    uint16_t* reg = (uint16_t*)nb_calloc(ctx, chf->span_count, sizeof(uint16_t));
    if (!reg)
        return nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, "%s: out of memory 'reg' (%u)", fn, chf->span_count);

    uint16_t id_count = 1;
    nb_region_paint_border(chf, border_size, reg, &id_count);
    st = nb_region_sweep_rows(ctx, fn, chf, border_size, reg, &id_count);
    if (st == NB_OK)
        st = nb_region_merge_layers(ctx, fn, chf, reg, id_count, min_region_area);
    if (st == NB_OK) {
        chf->border_size = border_size;
        for (uint32_t i = 0; i < chf->span_count; ++i)
            chf->spans[i].reg = reg[i];
    }
    nb_free(ctx, reg);
    return st;
}
