/* Helpers shared by the distance field and the region partitions (distance.c, region_*.c). Not public. */
#ifndef NB_REGION_INTERNAL_H
#define NB_REGION_INTERNAL_H

#include "nb_internal.h"

#define NB_NO_SPAN 0xffffffffu /* a missing entry in a span neighbour table */
#define NB_MAX_REGION_ID (NB_BORDER_REG - 1) /* ids must not reach the border flag */

/* Index of the neighbour of span s (in column col = x + z * width) towards dir; the link must exist. */
static inline uint32_t nb_region_neighbour(const nb_compact_heightfield* chf, int col, const nb_compact_span* s,
                                           int dir)
{
    const int ncol = col + nb_dir_offset_x(dir) + nb_dir_offset_z(dir) * chf->width;
    return chf->cells[ncol].index + (uint32_t)nb_span_con(s, dir);
}

/* Fills nbr (4 x span_count) with the span index of each linked neighbour, NB_NO_SPAN where there is no link.
 * Flood fills that revisit spans many times read one table instead of decoding links and columns. */
void nb_region_build_neighbours(const nb_compact_heightfield* chf, uint32_t* nbr);

/* Paints the four tile border strips (border_size cells wide) with NB_BORDER_REG | id regions, ids taken from
 * *next_id on; only walkable spans are painted. Does nothing for border_size <= 0. */
void nb_region_paint_border(const nb_compact_heightfield* chf, int border_size, uint16_t* reg, uint16_t* next_id);

/* Row sweep of the monotone partition (seed 000), shared by the monotone and layer partitions: writes provisional
 * region ids 1..*id_count-1 into reg (which holds the painted border, zero elsewhere). Returns NB_OK,
 * NB_ERR_OUT_OF_MEMORY or NB_ERR_TOO_LARGE (more region ids than fit beside the border flag); fn names the
 * public caller in messages. */
nb_status nb_region_sweep_rows(nb_context* ctx, const char* fn, const nb_compact_heightfield* chf, int border_size,
                               uint16_t* reg, uint16_t* id_count);

/* Region clean-up of the watershed and monotone partitions: drops connected groups of regions smaller than
 * min_area spans (unless they touch the tile border), merges regions smaller than merge_area into their smallest
 * neighbour, compacts the ids to 1..n and rewrites reg. Sets chf->max_regions = n + 1. id_count bounds the
 * provisional ids in reg (border ids excepted). */
nb_status nb_region_merge_and_filter(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                     uint16_t id_count, int min_area, int merge_area);

/* The same, except that a region above merge_area stays even when no wall touches it (all around are other
 * regions): the wavefront partition's regions are convex pieces, and merging one would undo that. */
nb_status nb_region_merge_small(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                uint16_t id_count, int min_area, int merge_area);

/* Clean-up of the layer partition: unites neighbouring monotone regions into layers that never hold two spans
 * of one column, drops layers smaller than min_area spans (unless they touch the tile border), compacts ids
 * and rewrites reg. Sets chf->max_regions. */
nb_status nb_region_merge_layers(nb_context* ctx, const char* fn, nb_compact_heightfield* chf, uint16_t* reg,
                                 uint16_t id_count, int min_area);

/* Common argument checks of the three partitions. */
nb_status nb_region_check_args(nb_context* ctx, const char* fn, const nb_compact_heightfield* chf, int border_size,
                               int min_area, int merge_area);

#endif
