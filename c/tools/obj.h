/* Minimal Wavefront OBJ reader for the native tool and tests: positions and faces (fan-triangulated). */
#ifndef NB_OBJ_H
#define NB_OBJ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "navbake.h"

typedef struct nb_obj {
    float* positions; /* vertex_count x 3 */
    uint32_t vertex_count;
    uint32_t* indices; /* triangle_count x 3 */
    uint32_t triangle_count;
} nb_obj;

/* Reads a whole file into a NUL-terminated buffer (free() it). Returns 0 on success; on failure returns -1 and
 * writes "PATH: WHAT: reason" into err ("no such file", "is a directory", ..., as the Node tool words them). */
int nb_read_whole_file(const char* path, const char* what, char** data, size_t* size, char* err, size_t err_size);
/* Why a file could not be opened, read or written (an errno value), in the words the Node tool uses
 * (web/bin/errors.ts): "no such file", "permission denied", "is a directory", ...; 0: "input/output error". */
const char* nb_describe_errno(int e);

/* Reads an OBJ file. Returns 0 on success; on failure returns -1 and writes a message naming the file,
 * the line and the problem into err. Supports v, f (polygons are fanned; v, v/vt, v//vn, v/vt/vn; negative
 * indices count back from the last vertex), comments (whole lines or after a statement) and blank lines; other
 * statements are ignored. Numbers and indices must be whole: "3x" or "2.5" as an index is an error. */
int nb_obj_load(const char* path, nb_obj* out, char* err, size_t err_size);
/* Same, from a NUL-terminated string (name is used in messages). */
int nb_obj_parse(const char* text, const char* name, nb_obj* out, char* err, size_t err_size);
void nb_obj_free(nb_obj* obj);

/* A bake input over all of obj's triangles: bounds from the vertices, no areas, volumes or links. */
static inline nb_bake_input nb_obj_bake_input(const nb_obj* obj)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = obj->positions;
    in.mesh.vertex_count = obj->vertex_count;
    in.mesh.indices = obj->indices;
    in.mesh.triangle_count = obj->triangle_count;
    return in;
}

#endif
