/* libFuzzer target: the native tool's OBJ reader (c/tools/obj.c) on any text. It either fails with a message
 * naming the line, or gives triangles whose indices are all in range; what it gives then goes to a bake, which
 * must accept it or name what is wrong with it. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size > 8192)
        return 0;
    char* text = (char*)malloc(size + 1);
    FUZZ_EXPECT(text != NULL, "out of memory");
    memcpy(text, data, size);
    text[size] = '\0';
    nb_obj obj;
    char err[256];
    err[0] = '\0';
    if (nb_obj_parse(text, "fuzz.obj", &obj, err, sizeof(err)) != 0) {
        FUZZ_EXPECT(strstr(err, "fuzz.obj") != NULL, "an OBJ error without the file's name: \"%s\"", err);
        free(text);
        return 0;
    }
    for (uint32_t i = 0; i < obj.triangle_count * 3; ++i)
        FUZZ_EXPECT(obj.indices[i] < obj.vertex_count, "index %u of %u vertices", obj.indices[i], obj.vertex_count);
    /* The bake's bounds cover every vertex. Levels beyond 256 cells a side are valid but slow under the
     * sanitizers: the reader is what is fuzzed here. */
    float lo[3] = { 0, 0, 0 }, hi[3] = { 0, 0, 0 };
    for (uint32_t i = 0; i < obj.vertex_count * 3; ++i) {
        lo[i % 3] = i < 3 ? obj.positions[i] : fminf(lo[i % 3], obj.positions[i]);
        hi[i % 3] = i < 3 ? obj.positions[i] : fmaxf(hi[i % 3], obj.positions[i]);
    }
    if (!(hi[0] - lo[0] <= 256.0f && hi[2] - lo[2] <= 256.0f && hi[1] - lo[1] <= 256.0f)) {
        nb_obj_free(&obj);
        free(text);
        return 0;
    }
    nb_context* ctx = nb_context_create(NULL);
    const nb_bake_input in = nb_obj_bake_input(&obj);
    nb_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.cell_size = 1.0f; /* coarse: any text can make a big level */
    nb_navmesh* nav = NULL;
    const nb_status st = nb_bake_navmesh(ctx, &in, &cfg, NULL, 0, &nav);
    FUZZ_EXPECT(st == NB_OK || st == NB_ERR_EMPTY_MESH || st == NB_ERR_NONFINITE || st == NB_ERR_TOO_LARGE ||
                    st == NB_ERR_INVALID_ARG,
                "bake of a parsed OBJ: %s: %s", nb_status_name(st), nb_context_message(ctx));
    nb_navmesh_destroy(ctx, nav);
    nb_context_destroy(ctx);
    nb_obj_free(&obj);
    free(text);
    return 0;
}
