/* The WebAssembly exports: flat-argument wrappers over the C API, and nothing else. Doubles carry config
 * values and statistics so JavaScript reads them without knowing struct layouts. */
#include "navbake.h"

#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

EMSCRIPTEN_KEEPALIVE nb_context* nbw_context_create(void) { return nb_context_create(NULL); }
EMSCRIPTEN_KEEPALIVE void nbw_context_destroy(nb_context* ctx) { nb_context_destroy(ctx); }
EMSCRIPTEN_KEEPALIVE int nbw_status(const nb_context* ctx) { return (int)nb_context_status(ctx); }
EMSCRIPTEN_KEEPALIVE const char* nbw_message(const nb_context* ctx) { return nb_context_message(ctx); }
EMSCRIPTEN_KEEPALIVE const char* nbw_status_name(int status) { return nb_status_name((nb_status)status); }

EMSCRIPTEN_KEEPALIVE int nbw_config_field_count(void) { return nb_config_field_count(); }
EMSCRIPTEN_KEEPALIVE const char* nbw_config_field_name(int i) { return nb_config_field_name(i); }
EMSCRIPTEN_KEEPALIVE double nbw_config_default(int i) { return nb_config_default(i); }

static void config_from_values(const double* values, nb_config* cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    if (!values)
        return;
    for (int i = 0; i < nb_config_field_count(); ++i)
        nb_config_set(cfg, i, values[i]);
}

/* in: nb_config_field_count() doubles (0 = default, NB_ZERO = explicit zero); out: the resolved values. */
EMSCRIPTEN_KEEPALIVE int nbw_config_resolve(nb_context* ctx, const double* in, double* out)
{
    nb_config cfg, resolved;
    config_from_values(in, &cfg);
    const nb_status st = nb_config_resolve(ctx, &cfg, &resolved, NULL);
    if (out)
        for (int i = 0; i < nb_config_field_count(); ++i)
            out[i] = nb_config_get(&resolved, i);
    return (int)st;
}

EMSCRIPTEN_KEEPALIVE int nbw_stat_count(void) { return NB_STAT_COUNT; }
EMSCRIPTEN_KEEPALIVE const char* nbw_stat_name(int i) { return nb_stat_name((nb_stat)i); }

/* Runs nb_bake; returns a heap-allocated result (free with nbw_result_free) or NULL with the status in ctx.
 * indices may be NULL (consecutive triples), areas may be NULL. */
EMSCRIPTEN_KEEPALIVE nb_bake_result* nbw_bake(nb_context* ctx, const float* positions, uint32_t vertex_count,
                                              const uint32_t* indices, uint32_t triangle_count, const uint8_t* areas,
                                              const double* config, int stop_after, unsigned keep)
{
    nb_bake_result* result = (nb_bake_result*)calloc(1, sizeof(nb_bake_result));
    if (!result)
        return NULL;
    nb_bake_input input;
    memset(&input, 0, sizeof(input));
    input.mesh.positions = positions;
    input.mesh.vertex_count = vertex_count;
    input.mesh.indices = indices;
    input.mesh.triangle_count = triangle_count;
    input.mesh.areas = areas;
    nb_config cfg;
    config_from_values(config, &cfg);
    if (nb_bake(ctx, &input, &cfg, (nb_stage)stop_after, keep, result) != NB_OK) {
        free(result);
        return NULL;
    }
    return result;
}

EMSCRIPTEN_KEEPALIVE double nbw_result_stat(const nb_bake_result* r, int i)
{
    return r && i >= 0 && i < NB_STAT_COUNT ? r->stats[i] : -1.0;
}

EMSCRIPTEN_KEEPALIVE void nbw_result_free(nb_context* ctx, nb_bake_result* r)
{
    if (!r)
        return;
    nb_bake_result_release(ctx, r);
    free(r);
}
