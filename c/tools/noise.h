/* Value noise for the generated test levels (terrain.c, world.c): integer hashing and plain float arithmetic,
 * no libm, so the same arguments give the same bits on every platform. Each generator hashes with its own
 * multipliers (nb_noise_key), which keeps its levels as they were. */
#ifndef NB_NOISE_H
#define NB_NOISE_H

#include <stdint.h>

/* The multipliers of x, z and the seed in the lattice hash. */
typedef struct nb_noise_key {
    uint32_t mx, mz, ms;
} nb_noise_key;

/* An integer hash of a lattice point (a "lowbias32"-style finalizer): well mixed, and exact everywhere. */
static inline uint32_t nb_noise_hash(const nb_noise_key* k, int32_t x, int32_t z, uint32_t seed)
{
    uint32_t h = (uint32_t)x * k->mx ^ (uint32_t)z * k->mz ^ seed * k->ms;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

/* Lattice value in [-1, 1]. */
static inline float nb_noise_lattice(const nb_noise_key* k, int32_t x, int32_t z, uint32_t seed)
{
    return (float)(nb_noise_hash(k, x, z, seed) >> 8) * (2.0f / 16777215.0f) - 1.0f;
}

/* Quintic fade: zero first and second derivatives at the lattice points, so the surface has no creases. */
static inline float nb_noise_fade(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }

/* Smooth value noise with a lattice spacing of 1; x, z >= 0 (callers add positive offsets). */
static inline float nb_noise_value(const nb_noise_key* k, float x, float z, uint32_t seed)
{
    const int32_t ix = (int32_t)x, iz = (int32_t)z; /* truncation = floor for x, z >= 0 */
    const float u = nb_noise_fade(x - (float)ix), v = nb_noise_fade(z - (float)iz);
    const float a = nb_noise_lattice(k, ix, iz, seed), b = nb_noise_lattice(k, ix + 1, iz, seed);
    const float c = nb_noise_lattice(k, ix, iz + 1, seed), d = nb_noise_lattice(k, ix + 1, iz + 1, seed);
    const float ab = a + (b - a) * u, cd = c + (d - c) * u;
    return ab + (cd - ab) * v;
}

#endif
