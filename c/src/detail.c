/* Detail height mesh: sample the surface inside each polygon and triangulate (seed 002). */
#include "nb_internal.h"

void nb_poly_mesh_detail_destroy(nb_context* ctx, nb_poly_mesh_detail* dmesh)
{
    if (!dmesh)
        return;
    nb_free(ctx, dmesh->meshes);
    nb_free(ctx, dmesh->verts);
    nb_free(ctx, dmesh->tris);
    nb_free(ctx, dmesh);
}
