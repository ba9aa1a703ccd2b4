/* navbake: the native command-line tool. Bakes a mesh natively and prints what each stage produced.
 *
 *   navbake voxels MESH.obj [config flags] [--repeat N] [--json]     stages up to erosion
 *   navbake bake MESH.obj [config flags] [-o polys.obj] [--repeat N] [--json]   the whole pipeline
 *   navbake terrain [--cells N] [--seed S] -o terrain.obj    writes a rolling test terrain (N x N cells of 0.3)
 *   navbake world [--seed S] [--triangles N] -o world.obj|.bin   writes the big test world (terrain, buildings, ...)
 *   navbake bake MESH.obj ... --save OUT.navbake               bakes a navmesh (tiled with --tile-size) and saves it
 *   navbake path MESH.obj|FILE.navbake --from x,y,z --to x,y,z [--json]
 *   navbake query MESH.obj|FILE.navbake (--pairs N --seed S | --pairs-file F) --json
 *
 * Config flags are the config field names with dashes (--cell-size 0.3, --agent-radius 0.6, ...,
 * --partition watershed|monotone|layers). Exit codes: 0 ok, 1 the bake failed, 2 bad arguments or file. */
#include "navbake.h"
#include "obj.h"
#include "terrain.h"
#include "world.h"

#include <math.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
    const char* command;
    const char* mesh_path;
    nb_config config;
    const char* out_path;
    const char* save_path;
    const char* pairs_file;
    float from[3], to[3];
    int has_from, has_to;
    long pairs;
    unsigned long long seed;
    int json;
    int repeat;
} options;

static int parse_vec3(const char* s, float out[3])
{
    char* end;
    for (int k = 0; k < 3; ++k) {
        out[k] = strtof(s, &end);
        if (end == s || !isfinite(out[k]))
            return -1;
        if (k < 2) {
            if (*end != ',')
                return -1;
            s = end + 1;
        }
    }
    return *end ? -1 : 0;
}

static void usage(FILE* f)
{
    fprintf(f, "usage: navbake voxels MESH.obj [options] [--json]\n"
               "       navbake bake MESH.obj [options] [-o polys.obj] [--json]\n"
               "       navbake terrain [--cells N] [--seed S] -o terrain.obj\n"
               "       navbake world [--seed S] [--triangles N] -o world.obj|world.bin   (default 1000000 triangles)\n"
               "       navbake bake MESH.obj [options] --save OUT.navbake\n"
               "       navbake path MESH.obj|FILE.navbake --from x,y,z --to x,y,z [--json]\n"
               "       navbake query MESH.obj|FILE.navbake (--pairs N --seed S | --pairs-file F) --json\n"
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
    o->seed = 1;
    if (argc < 2)
        return -1;
    o->command = argv[1];
    for (int i = 2; i < argc; ++i) {
        const char* a = argv[i];
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "-o") == 0 && i + 1 < argc) {
            o->out_path = argv[++i];
        } else if (strcmp(a, "--save") == 0 && i + 1 < argc) {
            o->save_path = argv[++i];
        } else if (strcmp(a, "--pairs-file") == 0 && i + 1 < argc) {
            o->pairs_file = argv[++i];
        } else if (strcmp(a, "--pairs") == 0 && i + 1 < argc) {
            o->pairs = atol(argv[++i]);
            if (o->pairs < 1 || o->pairs > 10000000) {
                fprintf(stderr, "navbake: --pairs must be 1..10000000 (got %s)\n", argv[i]);
                return -1;
            }
        } else if (strcmp(a, "--seed") == 0 && i + 1 < argc) {
            o->seed = strtoull(argv[++i], NULL, 10);
        } else if ((strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0) && i + 1 < argc) {
            const int from = a[2] == 'f';
            if (parse_vec3(argv[++i], from ? o->from : o->to) != 0) {
                fprintf(stderr, "navbake: %s needs x,y,z (got %s)\n", a, argv[i]);
                return -1;
            }
            *(from ? &o->has_from : &o->has_to) = 1;
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

/* On stderr when a whole bake gives no polygon: almost always a mesh problem (winding, slope, area ids). */
static void warn_nothing_walkable(void)
{
    fprintf(stderr, "navbake: warning: the navmesh has no polygons: no triangle is walkable (each has area 0, is "
                    "steeper than --agent-max-slope, faces down -- walkable triangles are counter-clockwise seen "
                    "from above -- or has no room for the agent)\n");
}

static const char* partition_name(nb_partition p)
{
    return p == NB_PARTITION_MONOTONE ? "monotone" : p == NB_PARTITION_LAYERS ? "layers" : "watershed";
}

static int cmd_bake(nb_context* ctx, const options* o, const nb_obj* obj, nb_stage stop)
{
    nb_bake_input in = nb_obj_bake_input(obj);
    nb_bake_result r;
    memset(&r, 0, sizeof(r));
    nb_status st = bake_repeated(ctx, &in, o, stop, &r);
    if (st != NB_OK) {
        fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
        return 1;
    }
    const double* s = r.stats;
    if (stop == NB_STAGE_ALL && s[NB_STAT_POLYS] == 0)
        warn_nothing_walkable();
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

/* ---- runtime commands: a navmesh from a .navbake file or baked from a mesh ---- */

static int read_file(const char* path, uint8_t** data, size_t* size)
{
    FILE* f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0) {
        fclose(f);
        return -1;
    }
    *data = (uint8_t*)malloc((size_t)n + 1);
    if (!*data) {
        fclose(f);
        return -1;
    }
    *size = fread(*data, 1, (size_t)n, f);
    fclose(f);
    return 0;
}

static int has_suffix(const char* s, const char* suffix)
{
    const size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Loads FILE.navbake, or bakes MESH.obj with the config flags (tiled with --tile-size). Exit code or 0. */
static int open_navmesh(nb_context* ctx, const options* o, nb_navmesh** nav)
{
    if (has_suffix(o->mesh_path, ".navbake")) {
        uint8_t* data = NULL;
        size_t size = 0;
        if (read_file(o->mesh_path, &data, &size) != 0) {
            fprintf(stderr, "navbake: %s: cannot read\n", o->mesh_path);
            return 2;
        }
        const nb_status st = nb_navmesh_load(ctx, data, size, nav);
        free(data);
        if (st != NB_OK) {
            fprintf(stderr, "navbake: %s: %s: %s\n", o->mesh_path, nb_status_name(st), nb_context_message(ctx));
            return 2;
        }
        return 0;
    }
    char err[512];
    nb_obj obj;
    if (nb_obj_load(o->mesh_path, &obj, err, sizeof(err)) != 0) {
        fprintf(stderr, "navbake: %s\n", err);
        return 2;
    }
    nb_bake_input in;
    memset(&in, 0, sizeof(in));
    in.mesh.positions = obj.positions;
    in.mesh.vertex_count = obj.vertex_count;
    in.mesh.indices = obj.indices;
    in.mesh.triangle_count = obj.triangle_count;
    const nb_status st = nb_bake_navmesh(ctx, &in, &o->config, NULL, 0, nav);
    nb_obj_free(&obj);
    if (st != NB_OK) {
        fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
        return 1;
    }
    return 0;
}

static const float k_half_extents[3] = { 2.0f, 4.0f, 2.0f };
static const char* path_status_name(int s)
{
    return s == NB_PATH_COMPLETE ? "complete" : s == NB_PATH_PARTIAL ? "partial" : "none";
}

static double now_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmd_path(nb_context* ctx, const options* o)
{
    if (!o->has_from || !o->has_to) {
        fprintf(stderr, "navbake path: needs --from x,y,z and --to x,y,z\n");
        return 2;
    }
    nb_navmesh* nav = NULL;
    int rc = open_navmesh(ctx, o, &nav);
    if (rc)
        return rc;
    nb_query* q = NULL;
    nb_query_filter filter;
    nb_query_filter_init(&filter);
    enum { MAX_POINTS = 4096 };
    float* points = (float*)malloc(MAX_POINTS * 3 * sizeof(float));
    float pair[6] = { o->from[0], o->from[1], o->from[2], o->to[0], o->to[1], o->to[2] };
    uint8_t status = 0;
    float length = 0;
    uint32_t offsets[2] = { 0, 0 }, needed = 0;
    nb_status st = points ? nb_query_create(ctx, nav, 0, &q) : NB_ERR_OUT_OF_MEMORY;
    if (st == NB_OK)
        st = nb_query_find_paths(q, pair, 1, k_half_extents, &filter, 0, &status, &length, offsets, points, MAX_POINTS,
                                 &needed);
    if (st != NB_OK) {
        fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
        rc = 1;
    } else {
        const uint32_t n = offsets[1] - offsets[0];
        if (o->json) {
            printf("{\"status\":\"%s\",\"length\":%.4f,\"points\":[", path_status_name(status), length);
            for (uint32_t i = 0; i < n; ++i)
                printf("%s[%.4f,%.4f,%.4f]", i ? "," : "", points[i * 3], points[i * 3 + 1], points[i * 3 + 2]);
            printf("]}\n");
        } else {
            printf("status %s\nlength %.4f\npoints %u\n", path_status_name(status), length, n);
            for (uint32_t i = 0; i < n; ++i)
                printf("  %.4f %.4f %.4f\n", points[i * 3], points[i * 3 + 1], points[i * 3 + 2]);
        }
    }
    free(points);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
    return rc;
}

/* Reads lines of six numbers (start xyz, end xyz); returns the pair count or -1. */
static long read_pairs(const char* path, float** pairs)
{
    FILE* f = fopen(path, "r");
    if (!f)
        return -1;
    size_t cap = 1024, n = 0;
    *pairs = (float*)malloc(cap * 6 * sizeof(float));
    char line[1024];
    long lineno = 0;
    while (*pairs && fgets(line, sizeof(line), f)) {
        ++lineno;
        float v[6];
        char extra;
        const int got = sscanf(line, "%f %f %f %f %f %f %c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &extra);
        if (got == -1)
            continue; /* blank line */
        if (got != 6) {
            fprintf(stderr, "navbake: %s:%ld: need six numbers (start xyz, end xyz)\n", path, lineno);
            free(*pairs);
            *pairs = NULL;
            fclose(f);
            return -1;
        }
        if (n == cap) {
            cap *= 2;
            float* grown = (float*)realloc(*pairs, cap * 6 * sizeof(float));
            if (!grown) {
                free(*pairs);
                *pairs = NULL;
                break;
            }
            *pairs = grown;
        }
        memcpy(&(*pairs)[n * 6], v, sizeof(v));
        ++n;
    }
    fclose(f);
    return *pairs ? (long)n : -1;
}

static int cmd_query(nb_context* ctx, const options* o)
{
    if (!o->pairs_file && o->pairs < 1) {
        fprintf(stderr, "navbake query: needs --pairs N [--seed S] or --pairs-file F\n");
        return 2;
    }
    float* pairs = NULL;
    long n = o->pairs;
    if (o->pairs_file) {
        n = read_pairs(o->pairs_file, &pairs);
        if (n < 0) {
            fprintf(stderr, "navbake: %s: cannot read pairs\n", o->pairs_file);
            return 2;
        }
    }
    nb_navmesh* nav = NULL;
    int rc = open_navmesh(ctx, o, &nav);
    if (rc) {
        free(pairs);
        return rc;
    }
    nb_query* q = NULL;
    nb_query_filter filter;
    nb_query_filter_init(&filter);
    uint8_t* status = (uint8_t*)malloc((size_t)n + 1);
    float* lengths = (float*)malloc(((size_t)n + 1) * sizeof(float));
    uint32_t* offsets = (uint32_t*)malloc(((size_t)n + 1) * sizeof(uint32_t));
    nb_status st = status && lengths && offsets ? nb_query_create(ctx, nav, 0, &q) : NB_ERR_OUT_OF_MEMORY;
    if (st == NB_OK && !pairs) {
        /* Random start/end points on the navmesh, area-weighted, from the seed. */
        pairs = (float*)malloc((size_t)n * 6 * sizeof(float));
        uint64_t rng = o->seed;
        for (long i = 0; pairs && i < n * 2 && st == NB_OK; ++i) {
            nb_poly_ref ref;
            st = nb_query_random_point(q, &filter, &rng, &ref, &pairs[i * 3]);
        }
        if (!pairs)
            st = NB_ERR_OUT_OF_MEMORY;
    }
    /* Count the points first, then answer for real; repeat the batch for a stable rate. */
    uint32_t needed = 0;
    if (st == NB_OK)
        st = nb_query_find_paths(q, pairs, (uint32_t)n, k_half_extents, &filter, 0, status, lengths, offsets, NULL, 0,
                                 &needed);
    if (st == NB_ERR_BUFFER_TOO_SMALL)
        st = NB_OK;
    float* points = st == NB_OK ? (float*)malloc(((size_t)needed + 1) * 3 * sizeof(float)) : NULL;
    if (st == NB_OK && !points)
        st = NB_ERR_OUT_OF_MEMORY;
    double elapsed = 0;
    long rounds = 0;
    while (st == NB_OK && (rounds == 0 || elapsed < 0.3)) {
        const double t0 = now_seconds();
        st = nb_query_find_paths(q, pairs, (uint32_t)n, k_half_extents, &filter, 0, status, lengths, offsets, points,
                                 needed, &needed);
        elapsed += now_seconds() - t0;
        ++rounds;
    }
    if (st != NB_OK) {
        fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
        rc = 1;
    } else {
        long found = 0, complete = 0;
        for (long i = 0; i < n; ++i) {
            found += status[i] != NB_PATH_NONE;
            complete += status[i] == NB_PATH_COMPLETE;
        }
        const double qps = elapsed > 0 ? (double)n * (double)rounds / elapsed : 0.0;
        if (o->json) {
            printf("{\"pairs\":%ld,\"found\":%ld,\"complete\":%ld,\"qps\":%.1f", n, found, complete, qps);
            if (o->pairs_file) {
                printf(",\"results\":[");
                for (long i = 0; i < n; ++i)
                    printf("%s{\"status\":\"%s\",\"length\":%.4f,\"points\":%u}", i ? "," : "",
                           path_status_name(status[i]), lengths[i], offsets[i + 1] - offsets[i]);
                printf("]");
            }
            printf("}\n");
        } else {
            printf("pairs %ld\nfound %ld\ncomplete %ld\nqueries/s %.0f\n", n, found, complete, qps);
        }
    }
    free(points);
    free(pairs);
    free(status);
    free(lengths);
    free(offsets);
    nb_query_destroy(ctx, q);
    nb_navmesh_destroy(ctx, nav);
    return rc;
}

static int write_file(const char* path, const uint8_t* data, size_t size)
{
    FILE* f = fopen(path, "wb");
    if (!f)
        return -1;
    const size_t put = fwrite(data, 1, size, f);
    return (fclose(f) == 0 && put == size) ? 0 : -1;
}

/* bake --save / bake --tile-size: a navmesh, saved. Prints tiles and polygons. */
static int cmd_bake_navmesh(nb_context* ctx, const options* o)
{
    nb_navmesh* nav = NULL;
    const double t0 = now_seconds();
    int rc = open_navmesh(ctx, o, &nav);
    if (rc)
        return rc;
    const double ms = (now_seconds() - t0) * 1000.0;
    uint32_t nrefs = 0;
    nb_navmesh_poly_refs(ctx, nav, NULL, 0, &nrefs);
    if (nrefs == 0)
        warn_nothing_walkable();
    uint8_t* data = NULL;
    size_t size = 0;
    if (o->save_path) {
        const nb_status st = nb_navmesh_save(ctx, nav, &data, &size);
        if (st != NB_OK) {
            fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
            rc = 1;
        } else if (write_file(o->save_path, data, size) != 0) {
            fprintf(stderr, "navbake: cannot write %s\n", o->save_path);
            rc = 2;
        }
    }
    if (!rc) {
        if (o->json)
            printf("{\"mesh\":\"%s\",\"tiles\":%u,\"polys\":%u,\"bytes\":%zu,\"ms\":{\"total\":%.3f}}\n",
                   o->mesh_path, nb_navmesh_tile_count(nav), nrefs, size, ms);
        else
            printf("%s: %u tiles, %u polygons, %zu bytes, %.1f ms\n", o->mesh_path, nb_navmesh_tile_count(nav), nrefs,
                   size, ms);
    }
    nb_bytes_free(ctx, data);
    nb_navmesh_destroy(ctx, nav);
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

static void write_u32(FILE* f, uint32_t v)
{
    const uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
    fwrite(b, 1, 4, f);
}

static uint32_t float_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof(u));
    return u;
}

/* navbake world: the big procedural test world as an OBJ, or as the demo's raw .bin (benchmarks, the demo). */
static int cmd_world(int argc, char** argv)
{
    uint32_t seed = 1;
    long triangles = 1000000;
    const char* out = NULL;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--triangles") == 0 && i + 1 < argc)
            triangles = atol(argv[++i]);
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "navbake world: unexpected argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!out || triangles < 1 || triangles > 64000000) {
        fprintf(stderr, "navbake world: need -o FILE and --triangles 1..64000000\n");
        return 2;
    }
    nb_obj w;
    const double t0 = now_seconds();
    if (nb_world_generate(seed, (uint32_t)triangles, &w) != 0) {
        fprintf(stderr, "navbake world: cannot generate %ld triangles (out of memory)\n", triangles);
        return 1;
    }
    const double gen_ms = (now_seconds() - t0) * 1000.0;
    const size_t n = strlen(out);
    const int bin = n > 4 && strcmp(out + n - 4, ".bin") == 0;
    FILE* f = fopen(out, bin ? "wb" : "w");
    if (!f) {
        nb_obj_free(&w);
        fprintf(stderr, "navbake world: cannot write %s\n", out);
        return 2;
    }
    if (bin) {
        /* The demo's raw geometry: "NBGM", version 1, vertex count, triangle count (u32 each), then the positions
         * (f32 xyz) and the indices (u32), all little-endian: the browser maps it straight onto typed arrays. */
        uint8_t head[16];
        const uint32_t fields[3] = { 1, w.vertex_count, w.triangle_count };
        memcpy(head, "NBGM", 4);
        for (int k = 0; k < 3; ++k)
            for (int b = 0; b < 4; ++b)
                head[4 + k * 4 + b] = (uint8_t)(fields[k] >> (8 * b));
        fwrite(head, 1, sizeof(head), f);
        for (uint32_t i = 0; i < w.vertex_count * 3; ++i)
            write_u32(f, float_bits(w.positions[i]));
        for (uint32_t i = 0; i < w.triangle_count * 3; ++i)
            write_u32(f, w.indices[i]);
    } else {
        fprintf(f, "# navbake world: seed %u, %u triangles\n", seed, w.triangle_count);
        for (uint32_t i = 0; i < w.vertex_count; ++i)
            fprintf(f, "v %.6g %.6g %.6g\n", w.positions[i * 3], w.positions[i * 3 + 1], w.positions[i * 3 + 2]);
        for (uint32_t i = 0; i < w.triangle_count; ++i)
            fprintf(f, "f %u %u %u\n", w.indices[i * 3] + 1, w.indices[i * 3 + 1] + 1, w.indices[i * 3 + 2] + 1);
    }
    const int write_error = ferror(f);
    const int rc = fclose(f) != 0 || write_error ? 2 : 0;
    if (!rc)
        fprintf(stderr, "navbake world: %u triangles, %u vertices, generated in %.1f ms\n", w.triangle_count,
                w.vertex_count, gen_ms);
    nb_obj_free(&w);
    return rc;
}

int main(int argc, char** argv)
{
#if defined(__GLIBC__)
    /* Keep freed memory for the next bake, as a long-running game would: by default glibc hands every block
     * over 128 KB back to the OS on free, and each bake then pays page faults to touch its grids again
     * (measured: the compact stage 1.33 -> 0.93 ms on dungeon with --repeat). */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
    if (argc >= 2 && strcmp(argv[1], "terrain") == 0)
        return cmd_terrain(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "world") == 0)
        return cmd_world(argc, argv);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    options o;
    if (parse_args(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    nb_stage stop = NB_STAGE_ALL;
    const int runtime = strcmp(o.command, "path") == 0 || strcmp(o.command, "query") == 0 ||
                        (strcmp(o.command, "bake") == 0 && (o.save_path || o.config.tile_size > 0));
    if (strcmp(o.command, "voxels") == 0)
        stop = NB_STAGE_ERODE;
    else if (strcmp(o.command, "bake") == 0 || runtime)
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
    if (runtime) {
        const int rc = strcmp(o.command, "path") == 0    ? cmd_path(ctx, &o)
                       : strcmp(o.command, "query") == 0 ? cmd_query(ctx, &o)
                                                         : cmd_bake_navmesh(ctx, &o);
        nb_context_destroy(ctx);
        return rc;
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
