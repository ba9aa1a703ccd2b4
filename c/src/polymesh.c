/* Polygon mesh: triangulate contours, merge into convex polygons (seed 002). */
#include "nb_internal.h"

void nb_poly_mesh_destroy(nb_context* ctx, nb_poly_mesh* mesh)
{
    if (!mesh)
        return;
    nb_free(ctx, mesh->verts);
    nb_free(ctx, mesh->polys);
    nb_free(ctx, mesh->regs);
    nb_free(ctx, mesh->flags);
    nb_free(ctx, mesh->areas);
    nb_free(ctx, mesh);
}
