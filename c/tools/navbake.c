/* navbake: the native command-line tool. Bakes a mesh natively and prints what each stage produced.
 *
 *   navbake voxels MESH.obj [config flags] [--repeat N] [--json]     stages up to erosion
 *   navbake bake MESH.obj [config flags] [-o polys.obj] [--repeat N] [--json]   the whole pipeline
 *   navbake terrain [--cells N] [--seed S] -o terrain.obj    writes a rolling test terrain (N x N cells of 0.3)
 *
 * Config flags are the config field names with dashes (--cell-size 0.3, --agent-radius 0.6, ...,
 * --partition watershed|monotone|layers). Exit codes: 0 ok, 1 the bake failed, 2 bad arguments or file. */
#include "navbake.h"
#include "obj.h"
#include "terrain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    const char* command;
    const char* mesh_path;
    nb_config config;
    const char* out_path;
    int json;
    int repeat;
} options;

static void usage(FILE* f)
{
    fprintf(f, "usage: navbake voxels MESH.obj [options] [--json]\n"
               "       navbake bake MESH.obj [options] [-o polys.obj] [--json]\n"
               "       navbake terrain [--cells N] [--seed S] -o terrain.obj\n"
               "options (world units unless noted; omitted = default):\n");
    for (int i = 0; i < nb_config_field_count(); ++i) {
        char flag[64];
        snprintf(flag, sizeof(flag), "%s", nb_config_field_name(i));
        for (char* c = flag; *c; ++c)
            if (*c == '_')
                *c = '-';
        if (strcmp(flag, "partition") == 0)
            fprintf(f, "  --%-26s watershed|monotone|layers (default watershed)\n", flag);
        else
            fprintf(f, "  --%-26s default %g\n", flag, nb_config_default(i));
    }
    fprintf(f, "  -o FILE.obj                  (bake) write the polygons as an OBJ, one face per polygon\n"
               "  --repeat N                   run N times, report the median time of each stage\n"
               "  --json                       print one JSON object\n");
}

static int parse_partition(const char* s, double* out)
{
    static const char* names[] = { "watershed", "monotone", "layers" };
    for (int i = 0; i < 3; ++i)
        if (strcmp(s, names[i]) == 0) {
            *out = i + 1;
            return 0;
        }
    return -1;
}

static int parse_args(int argc, char** argv, options* o)
{
    memset(o, 0, sizeof(*o));
    o->repeat = 1;
    if (argc < 2)
        return -1;
    o->command = argv[1];
    for (int i = 2; i < argc; ++i) {
        const char* a = argv[i];
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
            o->out_path = argv[++i];
        } else if (strcmp(a, "--repeat") == 0 && i + 1 < argc) {
            o->repeat = atoi(argv[++i]);
            if (o->repeat < 1 || o->repeat > 100000) {
                fprintf(stderr, "navbake: --repeat must be 1..100000 (got %s)\n", argv[i]);
                return -1;
            }
        } else if (strncmp(a, "--", 2) == 0) {
            const int field = nb_config_field_index(a + 2);
            if (field < 0) {
                fprintf(stderr, "navbake: unknown option %s\n", a);
                return -1;
            }
            if (i + 1 >= argc) {
                fprintf(stderr, "navbake: %s needs a value\n", a);
                return -1;
            }
            const char* v = argv[++i];
            double value;
            if (strcmp(nb_config_field_name(field), "partition") == 0) {
                if (parse_partition(v, &value) != 0) {
                    fprintf(stderr, "navbake: --partition must be watershed, monotone or layers (got %s)\n", v);
                    return -1;
                }
            } else {
                char* end;
                value = strtod(v, &end);
                if (end == v || *end) {
                    fprintf(stderr, "navbake: %s needs a number (got %s)\n", a, v);
                    return -1;
                }
                if (value == 0.0)
                    value = NB_ZERO; /* on the command line 0 means zero, not "default" */
            }
            nb_config_set(&o->config, field, value);
        } else if (!o->mesh_path) {
            o->mesh_path = a;
        } else {
            fprintf(stderr, "navbake: unexpected argument %s\n", a);
            return -1;
        }
    }
    if (!o->mesh_path) {
        fprintf(stderr, "navbake: %s needs a mesh file\n", o->command);
        return -1;
    }
    return 0;
}

static int cmp_double(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* Bakes `repeat` times; stats of the last run, with each time replaced by the median over the runs. */
static nb_status bake_repeated(nb_context* ctx, const nb_bake_input* in, const options* o, nb_stage stop,
                               nb_bake_result* result)
{
    double* samples = (double*)calloc((size_t)o->repeat * NB_STAT_COUNT, sizeof(double));
    if (!samples)
        return NB_ERR_OUT_OF_MEMORY;
    nb_status st = NB_OK;
    for (int r = 0; r < o->repeat; ++r) {
        nb_bake_result_release(ctx, result);
        st = nb_bake(ctx, in, &o->config, stop, 0, result);
        if (st != NB_OK)
            break;
        for (int s = 0; s < NB_STAT_COUNT; ++s)
            samples[(size_t)s * o->repeat + r] = result->stats[s];
    }
    if (st == NB_OK && o->repeat > 1) {
        for (int s = NB_STAT_FIRST_MS; s < NB_STAT_COUNT; ++s) {
            double* v = &samples[(size_t)s * o->repeat];
            qsort(v, (size_t)o->repeat, sizeof(double), cmp_double);
            result->stats[s] = v[o->repeat / 2];
        }
    }
    free(samples);
    return st;
}

static void print_ms(const nb_bake_result* r, int json)
{
    int first = 1;
    for (int s = NB_STAT_FIRST_MS; s < NB_STAT_COUNT; ++s) {
        if (r->stats[s] < 0)
            continue;
        if (json)
            printf("%s\"%s\":%.3f", first ? "" : ",", nb_stat_name((nb_stat)s), r->stats[s]);
        else
            printf("  %-12s %8.3f ms\n", nb_stat_name((nb_stat)s), r->stats[s]);
        first = 0;
    }
}

/* Polygons as an OBJ file to look at: world-space vertices, one face per polygon. */
static int write_polys_obj(const char* path, const nb_poly_mesh* pm)
{
    FILE* f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "# navbake polygons: %d vertices, %d polygons\n", pm->nverts, pm->npolys);
    for (int i = 0; i < pm->nverts; ++i) {
        const uint16_t* v = &pm->verts[i * 3];
        fprintf(f, "v %.4f %.4f %.4f\n", pm->bmin[0] + v[0] * pm->cell_size, pm->bmin[1] + v[1] * pm->cell_height,
                pm->bmin[2] + v[2] * pm->cell_size);
    }
    for (int p = 0; p < pm->npolys; ++p) {
        const uint16_t* poly = &pm->polys[p * 2 * pm->nvp];
        fputc('f', f);
        for (int j = 0; j < pm->nvp && poly[j] != NB_MESH_NULL_IDX; ++j)
            fprintf(f, " %d", poly[j] + 1);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static const char* partition_name(nb_partition p)
{
    return p == NB_PARTITION_MONOTONE ? "monotone" : p == NB_PARTITION_LAYERS ? "layers" : "watershed";
}

static int cmd_bake(nb_context* ctx, const options* o, const nb_obj* obj, nb_stage stop)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = obj->positions;
    in.mesh.vertex_count = obj->vertex_count;
    in.mesh.indices = obj->indices;
    in.mesh.triangle_count = obj->triangle_count;
    nb_bake_result r;
    memset(&r, 0, sizeof(r));
    nb_status st = bake_repeated(ctx, &in, o, stop, &r);
    if (st != NB_OK) {
        fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
        return 1;
    }
    const double* s = r.stats;
    /* counts: the stage statistics that ran (grid first, as "grid":[w,h]) */
    if (o->json) {
        printf("{\"mesh\":\"%s\",\"vertices\":%u,\"triangles\":%u,", o->mesh_path, obj->vertex_count,
               obj->triangle_count);
        if (stop != NB_STAGE_ERODE)
            printf("\"partition\":\"%s\",", partition_name(r.config.partition));
        printf("\"grid\":[%.0f,%.0f]", s[NB_STAT_GRID_WIDTH], s[NB_STAT_GRID_HEIGHT]);
        for (int k = NB_STAT_HF_SPANS; k < NB_STAT_FIRST_MS; ++k)
            if (s[k] >= 0)
                printf(",\"%s\":%.0f", nb_stat_name((nb_stat)k), s[k]);
        printf(",\"repeat\":%d,\"ms\":{", o->repeat);
        print_ms(&r, 1);
        printf("}}\n");
    } else {
        printf("%s: %u vertices, %u triangles\n", o->mesh_path, obj->vertex_count, obj->triangle_count);
        printf("  %-20s %.0f x %.0f\n", "grid", s[NB_STAT_GRID_WIDTH], s[NB_STAT_GRID_HEIGHT]);
        for (int k = NB_STAT_HF_SPANS; k < NB_STAT_FIRST_MS; ++k)
            if (s[k] >= 0)
                printf("  %-20s %.0f\n", nb_stat_name((nb_stat)k), s[k]);
        print_ms(&r, 0);
    }
    int rc = 0;
    if (o->out_path && r.poly_mesh && write_polys_obj(o->out_path, r.poly_mesh) != 0) {
        fprintf(stderr, "navbake: cannot write %s\n", o->out_path);
        rc = 2;
    }
    nb_bake_result_release(ctx, &r);
    return rc;
}

/* navbake terrain: a deterministic rolling terrain as an OBJ (benchmarks and tests bake it). */
static int cmd_terrain(int argc, char** argv)
{
    int cells = 330;
    uint32_t seed = 1;
    const char* out = NULL;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--cells") == 0 && i + 1 < argc)
            cells = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "navbake terrain: unexpected argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!out || cells < 1 || cells > 20000) {
        fprintf(stderr, "navbake terrain: need -o FILE and --cells 1..20000\n");
        return 2;
    }
    nb_obj t;
    if (nb_terrain_generate(cells, cells, 0.3f, seed, &t) != 0) {
        fprintf(stderr, "navbake terrain: cannot generate %d x %d cells\n", cells, cells);
        return 1;
    }
    FILE* f = fopen(out, "w");
    if (!f) {
        nb_obj_free(&t);
        fprintf(stderr, "navbake terrain: cannot write %s\n", out);
        return 2;
    }
    fprintf(f, "# navbake terrain: %d x %d cells of 0.3, seed %u\n", cells, cells, seed);
    for (uint32_t i = 0; i < t.vertex_count; ++i)
        fprintf(f, "v %.6g %.6g %.6g\n", t.positions[i * 3], t.positions[i * 3 + 1], t.positions[i * 3 + 2]);
    for (uint32_t i = 0; i < t.triangle_count; ++i)
        fprintf(f, "f %u %u %u\n", t.indices[i * 3] + 1, t.indices[i * 3 + 1] + 1, t.indices[i * 3 + 2] + 1);
    const int rc = fclose(f) == 0 ? 0 : 2;
    nb_obj_free(&t);
    return rc;
}

int main(int argc, char** argv)
{
    if (argc >= 2 && strcmp(argv[1], "terrain") == 0)
        return cmd_terrain(argc, argv);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    options o;
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    nb_stage stop;
    if (strcmp(o.command, "voxels") == 0)
        stop = NB_STAGE_ERODE;
    else if (strcmp(o.command, "bake") == 0)
        stop = NB_STAGE_ALL;
    else {
        fprintf(stderr, "navbake: unknown command '%s'\n", o.command);
        usage(stderr);
        return 2;
    }
    nb_context* ctx = nb_context_create(NULL);
    if (!ctx) {
        fprintf(stderr, "navbake: out of memory\n");
        return 1;
    }
    nb_config resolved;
    if (nb_config_resolve(ctx, &o.config, &resolved, NULL) != NB_OK) {
        fprintf(stderr, "navbake: %s\n", nb_context_message(ctx));
        nb_context_destroy(ctx);
        return 2;
    }
    char err[512];
    nb_obj obj;
    if (nb_obj_load(o.mesh_path, &obj, err, sizeof(err)) != 0) {
        fprintf(stderr, "navbake: %s\n", err);
        nb_context_destroy(ctx);
        return 2;
    }
    const int rc = cmd_bake(ctx, &o, &obj, stop);
    nb_obj_free(&obj);
    nb_context_destroy(ctx);
    return rc;
}
