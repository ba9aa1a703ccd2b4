/* Test helpers: build small levels from floor quads, ramps and boxes. */
#ifndef NBTEST_MESH_H
#define NBTEST_MESH_H

#include <stdint.h>
#include <string.h>

#define MB_MAX 1024 /* vertices and triangles */

typedef struct mesh_builder {
    float v[3 * MB_MAX];
    uint32_t t[3 * MB_MAX];
    uint32_t nv, nt;
} mesh_builder;

static inline uint32_t add_vert(mesh_builder* m, float x, float y, float z)
{
    m->v[m->nv * 3 + 0] = x;
    m->v[m->nv * 3 + 1] = y;
    m->v[m->nv * 3 + 2] = z;
    return m->nv++;
}

/* Upward-facing quad over [x0,x1] x [z0,z1] with heights ya at x0 and yb at x1 (a ramp along x). */
static inline void add_quad(mesh_builder* m, float x0, float z0, float x1, float z1, float ya, float yb)
{
    const uint32_t a = add_vert(m, x0, ya, z0), b = add_vert(m, x0, ya, z1), c = add_vert(m, x1, yb, z0),
                   d = add_vert(m, x1, yb, z1);
    const uint32_t tris[6] = { a, b, c, c, b, d };
    memcpy(&m->t[m->nt * 3], tris, sizeof(tris));
    m->nt += 2;
}

/* A flat upward-facing floor over [x0,x1] x [z0,z1] at height y. */
static inline void add_floor(mesh_builder* m, float x0, float z0, float x1, float z1, float y)
{
    add_quad(m, x0, z0, x1, z1, y, y);
}

/* A closed box (all six faces, outward normals). */
static inline void add_box(mesh_builder* m, float x0, float y0, float z0, float x1, float y1, float z1)
{
    const float c[8][3] = { { x0, y0, z0 }, { x1, y0, z0 }, { x1, y0, z1 }, { x0, y0, z1 },
                            { x0, y1, z0 }, { x1, y1, z0 }, { x1, y1, z1 }, { x0, y1, z1 } };
    uint32_t i[8];
    for (int k = 0; k < 8; ++k)
        i[k] = add_vert(m, c[k][0], c[k][1], c[k][2]);
    const int f[12][3] = { { 4, 7, 5 }, { 5, 7, 6 }, { 0, 1, 3 }, { 1, 2, 3 }, { 0, 4, 1 }, { 1, 4, 5 },
                           { 2, 6, 3 }, { 3, 6, 7 }, { 1, 5, 2 }, { 2, 5, 6 }, { 0, 3, 4 }, { 3, 7, 4 } };
    for (int k = 0; k < 12; ++k) {
        m->t[m->nt * 3 + 0] = i[f[k][0]];
        m->t[m->nt * 3 + 1] = i[f[k][1]];
        m->t[m->nt * 3 + 2] = i[f[k][2]];
        m->nt++;
    }
}

/* A staircase of n solid steps along x, each step a closed box standing on y0: it rises from y0 at x = xa to y1 at
 * x = xb (xa < xb climbs towards +x, xa > xb towards -x), between z0 and z1. Step i (0 = the lowest) reaches
 * y0 + (i + 1) * (y1 - y0) / n and runs from its front edge to xb, so the top step ends at xb at height y1. */
static inline void add_stairs_x(mesh_builder* m, float xa, float xb, float z0, float z1, float y0, float y1, int n)
{
    for (int i = 0; i < n; ++i) {
        const float front = xa + (xb - xa) * (float)i / (float)n;
        const float top = y0 + (y1 - y0) * (float)(i + 1) / (float)n;
        add_box(m, front < xb ? front : xb, y0, z0, front < xb ? xb : front, top, z1);
    }
}

/* The same along z: rises from y0 at z = za to y1 at z = zb, between x0 and x1. */
static inline void add_stairs_z(mesh_builder* m, float za, float zb, float x0, float x1, float y0, float y1, int n)
{
    for (int i = 0; i < n; ++i) {
        const float front = za + (zb - za) * (float)i / (float)n;
        const float top = y0 + (y1 - y0) * (float)(i + 1) / (float)n;
        add_box(m, x0, y0, front < zb ? front : zb, x1, top, front < zb ? zb : front);
    }
}

/* A bake input over the builder's triangles (no areas, volumes or bounds). */
#define MB_INPUT(m) ((nb_bake_input){ .mesh = { (m)->v, (m)->nv, (m)->t, (m)->nt, NULL } })

#endif
