/* A deterministic procedural "big world" for benchmarks and the demo: rolling terrain with buildings, bridges,
 * freestanding stairs and ramps, and pillars. */
#ifndef NB_WORLD_H
#define NB_WORLD_H

#include <stdint.h>

#include "obj.h"

/* Fills `out` with a world of about target_triangles triangles (measured within 2% from 5 000 to 10 000 000;
 * smaller asks give the smallest world, 64 x 64 units and about 2 400 triangles). The world covers x, z in
 * [0, L] with L = max(64, sqrt(0.465 target)) units; y is up, units are metres for the default agent (radius 0.6,
 * height 2, climb 0.9, slope 45 degrees).
 *   - Terrain, about 95% of the triangles: a grid of about 1 unit spacing (coarser below 10 000 triangles) over
 *     hills and valleys (four octaves of smooth value noise, wavelengths 240 to 10 units, heights within +-27),
 *     flattened into pads under buildings and platforms, dug 4-7 units deeper into basins under bridges.
 *   - On a grid of 48 x 48 sites, one feature each: a building (16-26 x 14-20 units, 2-4 storeys of 3.5 units,
 *     0.4 thick walls, door openings 2.4 wide and 2.6 high on the ground floor, floors joined alternately by stairs
 *     of 11 steps of 0.318 and by 8-unit ramps at 23.6 degrees, each 3 wide, under holes in the floor above), a
 *     bridge (4 wide, deck under 24 degrees, railings, piers) from hillside to hillside over its basin, a platform
 *     with stairs up one side and a ramp down the other, or a field of pillars.
 * Every solid is a closed box (12 triangles, outward winding, so upward faces face +y); terrain faces +y and
 * comes first in both arrays, the solids after it. The same (seed, target) gives the same arrays bit for bit on
 * every platform (integer hashing, float arithmetic and sqrtf only, no other libm, no fused multiply-adds; not
 * under -ffast-math); a different seed gives a different world. Arrays are malloc'd:
 * release them with nb_obj_free. Returns 0, or -1 for a NULL out, a target above 64 000 000, or out of memory
 * (then `out` is zeroed). */
int nb_world_generate(uint32_t seed, uint32_t target_triangles, nb_obj* out);

/* Known places of the world of `seed`, for tests and the demo (they do not depend on the size asked for). The
 * first building always stands at x in [16, 38], z in [16, 32] (22 x 16 units, 3 storeys, a door in the middle
 * of its south wall (z = 16) and one in its east wall): floor 0 is the pad it stands on, stairs lead from floor 0
 * to floor 1 (along the north wall) and a ramp from floor 1 to floor 2 (along the south wall); its roof is
 * solid. */
typedef struct nb_world_landmarks {
    float building_min[3], building_max[3]; /* the first building's outer bounds (min y = floor 0, max y = top
                                               of the walls) */
    float floor_y[3];                       /* walking height of floors 0, 1, 2 */
    float ground[3];                        /* on the pad, 2 units in front of the south door */
    float upper[3];                         /* the middle of floor 2 */
} nb_world_landmarks;
void nb_world_get_landmarks(uint32_t seed, nb_world_landmarks* out);

#endif
