/* The navmesh's walkable surface as one indexed triangle list, for drawing (a three.js BufferGeometry, a debug
 * view). Reads the tiles' detail meshes directly: the same triangles the height queries use. */
#include "navmesh_internal.h"

#define FN_ "nb_navmesh_detail_triangles"

/* Ground polygons come first in a tile and their vertices come first in its vertex array; each off-mesh link
 * appends one 2-vertex polygon and two vertices at the end (tile.c), which a drawing does not want. */
static uint32_t ground_vert_count(const nb_tile_view* v)
{
    return v->nverts >= 2 * v->noffmesh ? v->nverts - 2 * v->noffmesh : v->nverts;
}

static uint32_t ground_poly_count(const nb_tile_view* v)
{
    return v->npolys >= v->noffmesh ? v->npolys - v->noffmesh : v->npolys;
}

nb_status nb_navmesh_detail_triangles(nb_context* ctx, const nb_navmesh* nav, float* positions,
                                      uint32_t vertex_capacity, uint32_t* indices, uint8_t* areas,
                                      uint32_t triangle_capacity, uint32_t* vertex_count, uint32_t* triangle_count)
{
    if (!nav || !vertex_count || !triangle_count)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": %s is NULL", !nav ? "nav" : !vertex_count ? "vertex_count"
                                                                                   : "triangle_count");
    /* ---- sizes: every tile's ground vertices and detail vertices, every ground polygon's triangles ---- */
    uint64_t nv = 0, nt = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        nv += (uint64_t)ground_vert_count(&t->v) + t->v.ndetail_verts;
        const uint32_t np = ground_poly_count(&t->v);
        for (uint32_t p = 0; p < np; ++p)
            nt += t->v.detail_meshes[(size_t)p * 4 + 3];
    }
    if (nv > UINT32_MAX || nt > UINT32_MAX / 3)
        return nb_fail(ctx, NB_ERR_TOO_LARGE, FN_ ": %llu vertices, %llu triangles do not fit 32-bit indices",
                       (unsigned long long)nv, (unsigned long long)nt);
    *vertex_count = (uint32_t)nv;
    *triangle_count = (uint32_t)nt;
    if ((nv && !positions) || (nt && !indices) || nv > vertex_capacity || nt > triangle_capacity)
        return nb_fail(ctx, NB_ERR_BUFFER_TOO_SMALL,
                       FN_ ": %llu vertices and %llu triangles need room, capacities are %u and %u",
                       (unsigned long long)nv, (unsigned long long)nt, positions ? vertex_capacity : 0,
                       indices ? triangle_capacity : 0);
    if (nv == 0)
        return NB_OK; /* no ground polygon anywhere: nothing to write (the buffers may be NULL) */

    /* ---- fill: per tile its ground vertices (shared by neighbouring polygons), then its detail vertices ---- */
    uint32_t vbase = 0, tri = 0;
    for (uint32_t s = 0; s < nav->params.max_tiles; ++s) {
        const nb_tile* t = &nav->tiles[s];
        if (!t->data)
            continue;
        const nb_tile_view* v = &t->v;
        const uint32_t ngv = ground_vert_count(v);
        const uint32_t detail_base = vbase + ngv;
        memcpy(&positions[(size_t)vbase * 3], v->verts, (size_t)ngv * 3 * sizeof(float));
        memcpy(&positions[(size_t)detail_base * 3], v->detail_verts, (size_t)v->ndetail_verts * 3 * sizeof(float));
        const uint32_t np = ground_poly_count(v);
        for (uint32_t p = 0; p < np; ++p) {
            const uint32_t* m = &v->detail_meshes[(size_t)p * 4];
            const uint32_t n = v->poly_nverts[p];
            for (uint32_t k = 0; k < m[3]; ++k) {
                const uint8_t* dt = &v->detail_tris[((size_t)m[2] + k) * 4];
                /* Detail indices below the polygon's vertex count name its own vertices (Detour's convention). */
                for (int c = 0; c < 3; ++c)
                    indices[(size_t)tri * 3 + (size_t)c] =
                        dt[c] < n ? vbase + v->poly_verts[(size_t)p * v->nvp + dt[c]] : detail_base + m[0] + dt[c] - n;
                if (areas)
                    areas[tri] = v->poly_areas[p];
                ++tri;
            }
        }
        vbase = detail_base + v->ndetail_verts;
    }
    return NB_OK;
}
