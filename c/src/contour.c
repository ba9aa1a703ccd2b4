/* Contours: trace region borders, simplify, merge holes (seed 002). */
#include "nb_internal.h"

void nb_contour_set_destroy(nb_context* ctx, nb_contour_set* cset)
{
    if (!cset)
        return;
    for (int32_t i = 0; i < cset->nconts; ++i) {
        nb_free(ctx, cset->conts[i].verts);
        nb_free(ctx, cset->conts[i].raw_verts);
    }
    nb_free(ctx, cset->conts);
    nb_free(ctx, cset);
}
