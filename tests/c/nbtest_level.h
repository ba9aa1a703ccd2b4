/* Test helpers around the standard levels: load one, and turn it into a bake input. */
#ifndef NBTEST_LEVEL_H
#define NBTEST_LEVEL_H

#include "navbake.h"
#include "nbtest.h"
#include "obj.h"

/* Loads ../shared/meshes/<name> (or $NB_MESHES/<name>); prints why and returns -1 when it cannot. */
static inline int nbt_load_level(const char* name, nb_obj* obj)
{
    char path[512], err[512];
    if (nb_obj_load(nbt_mesh_path(name, path, sizeof(path)), obj, err, sizeof(err)) != 0) {
        fprintf(stderr, "  cannot load %s: %s\n", path, err);
        return -1;
    }
    return 0;
}

/* A standard level baked (default config) up to stop_after, keeping what keep says; the caller releases res
 * (nb_bake_result_release). Returns 0, or -1 with a failed check when the level cannot be loaded or baked. */
static inline int nbt_level_bake(nb_context* ctx, const char* name, nb_stage stop_after, unsigned keep,
                                 nb_bake_result* res)
{
    nb_obj obj;
    memset(res, 0, sizeof(*res));
    if (nbt_load_level(name, &obj) != 0) {
        CHECK(!"mesh loads");
        return -1;
    }
    nb_bake_input in = nb_obj_bake_input(&obj);
    const nb_status st = nb_bake(ctx, &in, NULL, stop_after, keep, res);
    CHECK_STATUS(ctx, st, NB_OK, "");
    nb_obj_free(&obj);
    return st == NB_OK ? 0 : -1;
}

/* The compact heightfield of a standard level after erosion and areas (default config); the caller releases res
 * (nb_bake_result_release). NULL, with a failed check, when the level cannot be loaded or baked. */
static inline nb_compact_heightfield* nbt_level_compact(nb_context* ctx, const char* name, nb_bake_result* res)
{
    nbt_level_bake(ctx, name, NB_STAGE_AREAS, NB_KEEP_COMPACT, res);
    return res->compact;
}

#endif
