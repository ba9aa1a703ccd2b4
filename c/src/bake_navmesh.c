/* nb_bake_navmesh: a solo or tiled bake straight into a navmesh, single-threaded (the TypeScript layer
 * spreads the same tile jobs over workers). */
#include "nb_internal.h"

#include <math.h>

#define FN_ "nb_bake_navmesh"

static void mesh_bounds(const nb_bake_input* in, float bmin[3], float bmax[3])
{
    if (in->bmin && in->bmax) {
        memcpy(bmin, in->bmin, 3 * sizeof(float));
        memcpy(bmax, in->bmax, 3 * sizeof(float));
        return;
    }
    const float* p = in->mesh.positions;
    memcpy(bmin, p, 3 * sizeof(float));
    memcpy(bmax, p, 3 * sizeof(float));
    for (uint32_t i = 1; i < in->mesh.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            bmin[k] = nb_minf(bmin[k], p[(size_t)i * 3 + k]);
            bmax[k] = nb_maxf(bmax[k], p[(size_t)i * 3 + k]);
        }
}

static int inside_xz(const float* p, const float* lo, const float* hi)
{
    return p[0] >= lo[0] && p[0] < hi[0] && p[2] >= lo[2] && p[2] < hi[2];
}

nb_status nb_bake_navmesh(nb_context* ctx, const nb_bake_input* input, const nb_config* config,
                          const nb_offmesh_link* links, uint32_t link_count, nb_navmesh** out)
{
    if (!out)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": out is NULL");
    *out = NULL;
    if (!input)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": input is NULL");
    if (link_count && !links)
        return nb_fail(ctx, NB_ERR_NULL_ARG, FN_ ": links is NULL but link_count is %u", link_count);
    nb_config cfg;
    nb_config_cells cells;
    nb_status st = nb_config_resolve(ctx, config, &cfg, &cells);
    if (st != NB_OK)
        return st;
    /* An empty or broken mesh fails in nb_bake with the precise message; bounds need one vertex. */
    if (!input->mesh.positions || input->mesh.vertex_count == 0) {
        uint8_t* data = NULL;
        size_t size = 0;
        st = nb_bake_tile(ctx, input, &cfg, NULL, 0, 0, 0, &data, &size, NULL);
        nb_bytes_free(ctx, data);
        return st != NB_OK ? st : nb_fail(ctx, NB_ERR_EMPTY_MESH, FN_ ": the mesh has no vertices");
    }
    float bmin[3], bmax[3];
    mesh_bounds(input, bmin, bmax);
    for (uint32_t i = 0; i < input->mesh.vertex_count; ++i)
        for (int k = 0; k < 3; ++k) {
            const float c = input->mesh.positions[(size_t)i * 3 + k];
            if (!isfinite(c))
                return nb_fail(ctx, NB_ERR_NONFINITE, FN_ ": vertex %u has a non-finite coordinate (%c = %g)", i,
                               "xyz"[k], c);
        }
    for (int k = 0; k < 3; ++k)
        if (!isfinite(bmin[k]) || !isfinite(bmax[k]))
            return nb_fail(ctx, NB_ERR_NONFINITE, FN_ ": bounds must be finite (axis %c)", "xyz"[k]);

    const int tiled = cfg.tile_size > 0;
    const float tw = tiled ? (float)cfg.tile_size * cfg.cell_size : nb_maxf(bmax[0] - bmin[0], cfg.cell_size);
    const float td = tiled ? tw : nb_maxf(bmax[2] - bmin[2], cfg.cell_size);
    const double ntx_d = tiled ? ceil(((double)bmax[0] - bmin[0]) / tw) : 1.0;
    const double ntz_d = tiled ? ceil(((double)bmax[2] - bmin[2]) / td) : 1.0;
    const double ntiles = nb_maxf(1.0f, (float)ntx_d) * nb_maxf(1.0f, (float)ntz_d);
    if (ntiles > (double)NB_MAX_TILES)
        return nb_fail(ctx, NB_ERR_TOO_LARGE,
                       FN_ ": %.0f x %.0f tiles exceed the limit of %u; raise tile_size or cell_size", ntx_d, ntz_d,
                       NB_MAX_TILES);
    const int ntx = ntx_d < 1 ? 1 : (int)ntx_d, ntz = ntz_d < 1 ? 1 : (int)ntz_d;

    nb_navmesh_params params;
    memset(&params, 0, sizeof(params));
    memcpy(params.origin, bmin, sizeof(params.origin));
    params.tile_width = tw;
    params.tile_depth = td;
    params.max_tiles = (uint32_t)(ntx * ntz);
    nb_navmesh* nav = NULL;
    st = nb_navmesh_create(ctx, &params, &nav);
    if (st != NB_OK)
        return st;

    const uint32_t ntris = input->mesh.indices ? input->mesh.triangle_count : input->mesh.vertex_count / 3;
    uint32_t* tris = NULL;        /* the triangles of one tile (indices into positions) */
    nb_offmesh_link* tlinks = NULL; /* the links starting in one tile */
    uint8_t* tareas = NULL;
    uint8_t* data = NULL;
    size_t size = 0;
    if (tiled) {
        tris = (uint32_t*)nb_alloc(ctx, (size_t)ntris * 3 * sizeof(uint32_t));
        tareas = input->mesh.areas ? (uint8_t*)nb_alloc(ctx, ntris) : NULL;
        if (!tris || (input->mesh.areas && !tareas)) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'tris' (%u)", ntris);
            goto cleanup;
        }
    }
    if (link_count) {
        tlinks = (nb_offmesh_link*)nb_alloc(ctx, (size_t)link_count * sizeof(nb_offmesh_link));
        if (!tlinks) {
            st = nb_fail(ctx, NB_ERR_OUT_OF_MEMORY, FN_ ": out of memory 'links' (%u)", link_count);
            goto cleanup;
        }
    }

    const float border = (float)(cells.walkable_radius + 3) * cfg.cell_size;
    for (int tz = 0; tz < ntz; ++tz) {
        for (int tx = 0; tx < ntx; ++tx) {
            float lo[3] = { bmin[0] + (float)tx * tw, bmin[1], bmin[2] + (float)tz * td };
            float hi[3] = { lo[0] + tw, bmax[1], lo[2] + td };
            nb_bake_input in = *input;
            uint32_t nlinks = 0;
            for (uint32_t i = 0; i < link_count; ++i)
                if (!tiled || inside_xz(links[i].start, lo, hi))
                    tlinks[nlinks++] = links[i];
            if (tiled) {
                /* Triangles whose xz box overlaps the tile with its border. */
                uint32_t n = 0;
                for (uint32_t t = 0; t < ntris; ++t) {
                    float tmin[2] = { 1e30f, 1e30f }, tmax[2] = { -1e30f, -1e30f };
                    for (int k = 0; k < 3; ++k) {
                        const uint32_t v = input->mesh.indices ? input->mesh.indices[t * 3 + k] : t * 3 + k;
                        if (v >= input->mesh.vertex_count)
                            continue; /* nb_bake reports it */
                        const float* p = &input->mesh.positions[(size_t)v * 3];
                        tmin[0] = nb_minf(tmin[0], p[0]);
                        tmax[0] = nb_maxf(tmax[0], p[0]);
                        tmin[1] = nb_minf(tmin[1], p[2]);
                        tmax[1] = nb_maxf(tmax[1], p[2]);
                    }
                    if (tmax[0] < lo[0] - border || tmin[0] > hi[0] + border || tmax[1] < lo[2] - border ||
                        tmin[1] > hi[2] + border)
                        continue;
                    for (int k = 0; k < 3; ++k)
                        tris[n * 3 + k] = input->mesh.indices ? input->mesh.indices[t * 3 + k] : t * 3 + k;
                    if (tareas)
                        tareas[n] = input->mesh.areas[t];
                    ++n;
                }
                if (n == 0)
                    continue;
                in.mesh.indices = tris;
                in.mesh.triangle_count = n;
                in.mesh.areas = tareas;
                in.bmin = lo;
                in.bmax = hi;
                in.border_size = cells.walkable_radius + 3;
            }
            double stats[NB_STAT_COUNT];
            st = nb_bake_tile(ctx, &in, &cfg, tlinks, nlinks, tx, tz, &data, &size, stats);
            if (st != NB_OK)
                goto cleanup;
            if (stats[NB_STAT_POLYS] > 0 || nlinks > 0) {
                st = nb_navmesh_add_tile(ctx, nav, data, size);
                if (st != NB_OK)
                    goto cleanup;
            }
            nb_bytes_free(ctx, data);
            data = NULL;
        }
    }
    *out = nav;
    nav = NULL;

cleanup:
    nb_bytes_free(ctx, data);
    nb_free(ctx, tris);
    nb_free(ctx, tareas);
    nb_free(ctx, tlinks);
    nb_navmesh_destroy(ctx, nav);
    return st;
}
