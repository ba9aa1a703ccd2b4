/* Deterministic rolling terrain (see terrain.h). */
#include "terrain.h"

#include <stdlib.h>
#include <string.h>

/* An integer hash of a lattice point (a "lowbias32"-style finalizer): well mixed, and exact everywhere. */
static uint32_t hash3(int32_t x, int32_t z, uint32_t seed)
{
    uint32_t h = (uint32_t)x * 0x8da6b343u ^ (uint32_t)z * 0xd8163841u ^ seed * 0xcb1ab31fu;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

/* Lattice value in [-1, 1]. */
static float lattice(int32_t x, int32_t z, uint32_t seed)
{
    return (float)(hash3(x, z, seed) >> 8) * (2.0f / 16777215.0f) - 1.0f;
}

/* Quintic fade: zero first and second derivatives at the lattice points, so the surface has no creases. */
static float fade(float t) { return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f); }

/* Smooth value noise with a lattice spacing of 1; x, z >= 0. */
static float value_noise(float x, float z, uint32_t seed)
{
    const int32_t ix = (int32_t)x, iz = (int32_t)z; /* truncation = floor for x, z >= 0 */
    const float u = fade(x - (float)ix), v = fade(z - (float)iz);
    const float a = lattice(ix, iz, seed), b = lattice(ix + 1, iz, seed);
    const float c = lattice(ix, iz + 1, seed), d = lattice(ix + 1, iz + 1, seed);
    const float ab = a + (b - a) * u, cd = c + (d - c) * u;
    return ab + (cd - ab) * v;
}

static float terrain_height(float x, float z, uint32_t seed)
{
    /* wavelength, amplitude: the steepest a value-noise octave gets is about 3.75 * amplitude / wavelength
     * (0.47, 0.38, 0.25 here), and the octaves rarely peak together, so slopes stay mostly below 30 degrees */
    static const float octaves[3][2] = { { 24.0f, 3.0f }, { 10.0f, 1.0f }, { 4.5f, 0.3f } };
    float h = 0.0f;
    for (uint32_t o = 0; o < 3; ++o) {
        const uint32_t s = seed * 3u + o;
        /* a per-octave offset so that the lattices of the octaves do not line up at the origin */
        const float off_x = (float)(hash3(17, (int32_t)o, s) & 0xffu) + 0.37f;
        const float off_z = (float)(hash3(23, (int32_t)o, s) & 0xffu) + 0.71f;
        h += octaves[o][1] * value_noise(x / octaves[o][0] + off_x, z / octaves[o][0] + off_z, s);
    }
    return h;
}

int nb_terrain_generate(int cells_x, int cells_z, float cell_size, uint32_t seed, nb_obj* out)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof(*out));
    if (cells_x < 1 || cells_z < 1 || !(cell_size > 0.0f) || !(cell_size < 1e30f))
        return -1;
    const uint32_t qx = ((uint32_t)cells_x + 1) / 2, qz = ((uint32_t)cells_z + 1) / 2; /* quads per side */
    const uint64_t nverts = (uint64_t)(qx + 1) * (qz + 1), ntris = (uint64_t)qx * qz * 2;
    if (nverts > 0xffffffffu || ntris * 3 > 0xffffffffu)
        return -1;
    float* pos = (float*)malloc((size_t)nverts * 3 * sizeof(float));
    uint32_t* idx = (uint32_t*)malloc((size_t)ntris * 3 * sizeof(uint32_t));
    if (!pos || !idx) {
        free(pos);
        free(idx);
        return -1;
    }
    const float size_x = (float)cells_x * cell_size, size_z = (float)cells_z * cell_size;
    for (uint32_t j = 0; j <= qz; ++j) {
        for (uint32_t i = 0; i <= qx; ++i) {
            /* the last row and column land exactly on the far edge, so the bounds are exactly the cells asked for */
            const float x = i == qx ? size_x : size_x * (float)i / (float)qx;
            const float z = j == qz ? size_z : size_z * (float)j / (float)qz;
            float* p = &pos[((size_t)j * (qx + 1) + i) * 3];
            p[0] = x;
            p[1] = terrain_height(x, z, seed);
            p[2] = z;
        }
    }
    size_t t = 0;
    for (uint32_t j = 0; j < qz; ++j) {
        for (uint32_t i = 0; i < qx; ++i) {
            const uint32_t v00 = j * (qx + 1) + i, v10 = v00 + 1, v01 = v00 + qx + 1, v11 = v01 + 1;
            /* alternate the diagonal (checkerboard) so the surface has no preferred direction; both windings face
             * up: for (a, b, c), (b - a) x (c - a) has y > 0 */
            const uint32_t quad[2][6] = { { v00, v01, v10, v10, v01, v11 }, { v00, v01, v11, v00, v11, v10 } };
            memcpy(&idx[t], quad[(i + j) & 1], sizeof(quad[0]));
            t += 6;
        }
    }
    out->positions = pos;
    out->vertex_count = (uint32_t)nverts;
    out->indices = idx;
    out->triangle_count = (uint32_t)ntris;
    return 0;
}
