/* Deterministic rolling terrain (see terrain.h). */
#include "terrain.h"

#include "noise.h"

#include <stdlib.h>
#include <string.h>

/* terrain.c's lattice hash multipliers (its levels, and the figures measured on them, depend on them) */
static const nb_noise_key KEY = { 0x8da6b343u, 0xd8163841u, 0xcb1ab31fu };

static float terrain_height(float x, float z, uint32_t seed)
{
    /* wavelength, amplitude: the steepest a value-noise octave gets is about 3.75 * amplitude / wavelength
     * (0.47, 0.38, 0.25 here), and the octaves rarely peak together, so slopes stay mostly below 30 degrees */
    static const float octaves[3][2] = { { 24.0f, 3.0f }, { 10.0f, 1.0f }, { 4.5f, 0.3f } };
    float h = 0.0f;
    for (uint32_t o = 0; o < 3; ++o) {
        const uint32_t s = seed * 3u + o;
        /* a per-octave offset so that the lattices of the octaves do not line up at the origin */
        const float off_x = (float)(nb_noise_hash(&KEY, 17, (int32_t)o, s) & 0xffu) + 0.37f;
        const float off_z = (float)(nb_noise_hash(&KEY, 23, (int32_t)o, s) & 0xffu) + 0.71f;
        h += octaves[o][1] * nb_noise_value(&KEY, x / octaves[o][0] + off_x, z / octaves[o][0] + off_z, s);
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
