/* navbake: the native command-line tool. Bakes a mesh natively and prints what each stage produced.
 *
 *   navbake voxels MESH.obj [config flags] [--repeat N] [--json]
 *
 * Config flags are the config field names with dashes (--cell-size 0.3, --agent-radius 0.6, ...,
 * --partition watershed|monotone|layers). Exit codes: 0 ok, 1 the bake failed, 2 bad arguments or file. */
#include "navbake.h"
#include "obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct options {
    const char* command;
    const char* mesh_path;
    nb_config config;
    int json;
    int repeat;
} options;

static void usage(FILE* f)
{
    fprintf(f, "usage: navbake voxels MESH.obj [options] [--json]\n"
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
    fprintf(f, "  --repeat N                   run N times, report the median time of each stage\n"
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

static int cmd_voxels(nb_context* ctx, const options* o, const nb_obj* obj)
{
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = obj->positions;
    in.mesh.vertex_count = obj->vertex_count;
    in.mesh.indices = obj->indices;
    in.mesh.triangle_count = obj->triangle_count;
    nb_bake_result r;
    memset(&r, 0, sizeof(r));
    nb_status st = bake_repeated(ctx, &in, o, NB_STAGE_ERODE, &r);
    if (st != NB_OK) {
        fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
        return 1;
    }
    const double* s = r.stats;
    if (o->json) {
        printf("{\"mesh\":\"%s\",\"vertices\":%u,\"triangles\":%u,\"grid\":[%.0f,%.0f],\"hf_spans\":%.0f,"
               "\"compact_spans\":%.0f,\"walkable_after_erode\":%.0f,\"repeat\":%d,\"ms\":{",
               o->mesh_path, obj->vertex_count, obj->triangle_count, s[NB_STAT_GRID_WIDTH], s[NB_STAT_GRID_HEIGHT],
               s[NB_STAT_HF_SPANS], s[NB_STAT_COMPACT_SPANS], s[NB_STAT_WALKABLE_AFTER_ERODE], o->repeat);
        print_ms(&r, 1);
        printf("}}\n");
    } else {
        printf("%s: %u vertices, %u triangles\n", o->mesh_path, obj->vertex_count, obj->triangle_count);
        printf("grid %.0f x %.0f\nhf spans %.0f\ncompact spans %.0f\nwalkable after erode %.0f\n",
               s[NB_STAT_GRID_WIDTH], s[NB_STAT_GRID_HEIGHT], s[NB_STAT_HF_SPANS], s[NB_STAT_COMPACT_SPANS],
               s[NB_STAT_WALKABLE_AFTER_ERODE]);
        print_ms(&r, 0);
    }
    nb_bake_result_release(ctx, &r);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    options o;
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    if (strcmp(o.command, "voxels") != 0) {
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
    const int rc = cmd_voxels(ctx, &o, &obj);
    nb_obj_free(&obj);
    nb_context_destroy(ctx);
    return rc;
}
