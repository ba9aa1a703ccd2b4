/* Argument unpacking shared by the WebAssembly exports (wasm_api.c, wasm_inspect.c): JavaScript passes flat
 * pointers and doubles, the C API takes structs. Emscripten builds only. */
#ifndef NB_WASM_INTERNAL_H
#define NB_WASM_INTERNAL_H

#include "navbake.h"

#include <string.h>

/* values: nb_config_field_count() doubles (0 = default, NB_ZERO = explicit zero), or NULL for every default. */
static inline void nbw_config_from_values(const double* values, nb_config* cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    if (!values)
        return;
    for (int i = 0; i < nb_config_field_count(); ++i)
        nb_config_set(cfg, i, values[i]);
}

/* A bake input over the caller's arrays (indices NULL: consecutive triples; areas, volumes optional). */
static inline nb_bake_input nbw_input(const float* positions, uint32_t vertex_count, const uint32_t* indices,
                                      uint32_t triangle_count, const uint8_t* areas, const nb_volume* volumes,
                                      uint32_t volume_count)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = positions;
    in.mesh.vertex_count = vertex_count;
    in.mesh.indices = indices;
    in.mesh.triangle_count = triangle_count;
    in.mesh.areas = areas;
    in.volumes = volumes;
    in.volume_count = volume_count;
    return in;
}

/* Navmesh params as JavaScript holds them: origin xyz, tile_width, tile_depth, max_tiles. */
static inline void nbw_params_from_values(const double* values, nb_navmesh_params* p)
{
    memset(p, 0, sizeof(*p));
    for (int k = 0; k < 3; ++k)
        p->origin[k] = (float)values[k];
    p->tile_width = (float)values[3];
    p->tile_depth = (float)values[4];
    p->max_tiles = (uint32_t)values[5];
}

static inline void nbw_params_to_values(const nb_navmesh_params* p, double* out)
{
    for (int k = 0; k < 3; ++k)
        out[k] = p->origin[k];
    out[3] = p->tile_width;
    out[4] = p->tile_depth;
    out[5] = p->max_tiles;
}

#endif
