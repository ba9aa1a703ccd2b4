/* A deterministic rolling terrain (a height field of smooth value noise) for tests and benchmarks. */
#ifndef NB_TERRAIN_H
#define NB_TERRAIN_H

#include <stdint.h>

#include "obj.h"

/* Fills `out` with a rolling-hills terrain covering cells_x x cells_z cells of cell_size (world x in
 * [0, cells_x * cell_size], z likewise): a grid with one vertex every 2 cells (about), heights from three octaves
 * of smooth value noise (wavelengths 24, 10 and 4.5 world units, amplitudes 3, 1 and 0.3), so the ground varies
 * by a few world units and most slopes stay well under 45 degrees. Triangles face up (+y). The same arguments
 * give the same mesh bit for bit on every platform (integer hashing and float arithmetic only, no libm).
 * Arrays are malloc'd; release them with nb_obj_free. Returns 0, or -1 for sizes < 1, a cell_size that is not
 * positive and finite, a grid too big for 32-bit indices, or out of memory (then `out` is zeroed). */
int nb_terrain_generate(int cells_x, int cells_z, float cell_size, uint32_t seed, nb_obj* out);

#endif
