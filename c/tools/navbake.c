/* navbake: the native command-line tool. Bakes a mesh natively and prints what each stage produced.
 *
 *   navbake voxels MESH.obj [config flags] [--repeat N] [--json]     stages up to erosion
 *   navbake bake MESH.obj [config flags] [-o polys.obj] [--repeat N] [--json]   the whole pipeline
 *   navbake bake MESH.obj [config flags] --save OUT.navbake [--json]   a navmesh (tiled with --tile-size), saved
 *   navbake path MESH.obj|FILE.navbake --from x,y,z --to x,y,z [config flags] [--json]
 *   navbake query MESH.obj|FILE.navbake (--pairs N [--seed S] | --pairs-file F) [config flags] [--json]
 *   navbake terrain [--cells N] [--seed S] -o terrain.obj    writes a rolling test terrain (N x N cells of 0.3)
 *   navbake world [--seed S] [--triangles N] -o world.obj|.bin   writes the big test world (terrain, buildings, ...)
 *
 * Config flags are the config field names with dashes (--cell-size 0.3, --agent-radius 0.6, ...,
 * --partition watershed|monotone|layers|wavefront); a typed 0 means zero, never "the default". Flags and numbers are
 * checked as the Node tool (web/bin) checks them. Exit codes: 0 ok, 1 the bake failed or the output could not
 * be written, 2 bad arguments or file. */
#include "navbake.h"
#include "obj.h"
#include "terrain.h"
#include "world.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct options {
    const char* command;
    const char* mesh_path;
    nb_config config;
    int config_flags; /* how many config flags were given */
    const char* out_path;
    const char* save_path;
    const char* pairs_file;
    float from[3], to[3];
    int has_from, has_to;
    long pairs;
    unsigned long long seed;
    int has_seed;
    int json;
    int repeat;
    int has_repeat;
} options;

enum { CMD_VOXELS = 1, CMD_BAKE = 2, CMD_PATH = 4, CMD_QUERY = 8, CMD_ALL = 15 };

static unsigned command_bit(const char* name)
{
    static const char* names[] = { "voxels", "bake", "path", "query" };
    for (unsigned i = 0; i < 4; ++i)
        if (strcmp(name, names[i]) == 0)
            return 1u << i;
    return 0;
}

/* The options besides the config flags: the commands that take them, and their --help line. */
typedef struct tool_option {
    const char* flag;
    const char* value; /* placeholder of the value; NULL: a switch */
    unsigned commands;
    const char* help;
} tool_option;

static const tool_option k_options[] = {
    { "-o", "FILE.obj", CMD_BAKE, "(bake) write the polygons as an OBJ, one face per polygon (a solo bake)" },
    { "--save", "FILE", CMD_BAKE, "(bake) save the navmesh as a .navbake file (tiled with --tile-size)" },
    { "--from", "x,y,z", CMD_PATH, "(path) start point" },
    { "--to", "x,y,z", CMD_PATH, "(path) end point" },
    { "--pairs", "N", CMD_QUERY, "(query) N random start/end pairs on the navmesh, 1..10000000" },
    { "--seed", "S", CMD_QUERY, "(query) seed of the random pairs, 0..2^64-1 (default 1)" },
    { "--pairs-file", "F", CMD_QUERY,
      "(query) pairs to answer: lines of six numbers, start xyz end xyz (blank lines and # comments skipped)" },
    { "--repeat", "N", CMD_VOXELS | CMD_BAKE, "(voxels, bake) run N times, report the median time of each stage" },
    { "--json", NULL, CMD_ALL, "print one JSON object" },
};
#define OPTION_COUNT ((int)(sizeof(k_options) / sizeof(k_options[0])))

static const tool_option* find_option(const char* flag)
{
    for (int i = 0; i < OPTION_COUNT; ++i)
        if (strcmp(flag, k_options[i].flag) == 0)
            return &k_options[i];
    return NULL;
}

/* "--cell-size" for "cell_size". */
static void flag_of_field(const char* field, char* flag, size_t n)
{
    snprintf(flag, n, "--%s", field);
    for (char* c = flag; *c; ++c)
        if (*c == '_')
            *c = '-';
}

static void usage(FILE* f)
{
    fprintf(f, "usage: navbake voxels MESH.obj [config flags] [--repeat N] [--json]\n"
               "       navbake bake MESH.obj [config flags] [-o polys.obj] [--repeat N] [--json]\n"
               "       navbake bake MESH.obj [config flags] --save OUT.navbake [--json]\n"
               "       navbake path MESH.obj|FILE.navbake --from x,y,z --to x,y,z [config flags] [--json]\n"
               "       navbake query MESH.obj|FILE.navbake (--pairs N [--seed S] | --pairs-file F) [config flags] "
               "[--json]\n"
               "       navbake terrain [--cells N] [--seed S] -o terrain.obj\n"
               "       navbake world [--seed S] [--triangles N] -o world.obj|world.bin   (default 1000000 triangles)\n"
               "       navbake --version\n"
               "config flags (world units unless noted; omitted = default; 0 = zero):\n");
    for (int i = 0; i < nb_config_field_count(); ++i) {
        char flag[64];
        flag_of_field(nb_config_field_name(i), flag, sizeof(flag));
        if (strcmp(flag, "--partition") == 0)
            fprintf(f, "  %-28s watershed|monotone|layers|wavefront (default watershed)\n", flag);
        else if (strcmp(flag, "--tile-size") == 0)
            fprintf(f, "  %-28s default 0 (one tile), else 16..4096 cells a tile\n", flag);
        else
            fprintf(f, "  %-28s default %g\n", flag, nb_config_default(i));
    }
    fprintf(f, "other options:\n");
    for (int i = 0; i < OPTION_COUNT; ++i) {
        char left[64];
        snprintf(left, sizeof(left), "%s%s%s", k_options[i].flag, k_options[i].value ? " " : "",
                 k_options[i].value ? k_options[i].value : "");
        fprintf(f, "  %-28s %s\n", left, k_options[i].help);
    }
    fprintf(f, "exit codes: 0 ok, 1 the bake failed or the output could not be written, 2 bad arguments or files\n");
}

/* ---- numbers on the command line: whole, finite, in range (the Node tool's rules, web/bin/args.ts) ---- */

/* A whole decimal integer min..max: digits only (no sign, fraction, exponent or anything after). 0, or -1. */
static int parse_count(const char* s, unsigned long long min, unsigned long long max, unsigned long long* out)
{
    if (!*s)
        return -1;
    for (const char* c = s; *c; ++c)
        if (*c < '0' || *c > '9')
            return -1;
    errno = 0;
    const unsigned long long v = strtoull(s, NULL, 10);
    if (errno == ERANGE || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Whether [s, e) is a decimal number ("1.5", "-2", ".5", "1e3"), as the Node tool reads numbers: strtod also
 * takes hexadecimal ("0x1p3"), which the Node tool does not, so both refuse it. */
static int is_decimal(const char* s, const char* e)
{
    if (s < e && (*s == '+' || *s == '-'))
        ++s;
    int digits = 0;
    while (s < e && isdigit((unsigned char)*s))
        ++s, ++digits;
    if (s < e && *s == '.')
        for (++s; s < e && isdigit((unsigned char)*s); ++s)
            ++digits;
    if (!digits)
        return 0;
    if (s < e && (*s == 'e' || *s == 'E')) {
        ++s;
        if (s < e && (*s == '+' || *s == '-'))
            ++s;
        if (!(s < e && isdigit((unsigned char)*s)))
            return 0;
        while (s < e && isdigit((unsigned char)*s))
            ++s;
    }
    return s == e;
}

/* A whole finite number ("1.5", "-2", "1e3"; not "5x", "nan", "inf" or "0x10"), blanks around it allowed. 0, or
 * -1. */
static int parse_number(const char* s, double* out)
{
    char* end;
    const double v = strtod(s, &end);
    while (isspace((unsigned char)*s))
        ++s;
    if (end == s || !is_decimal(s, end))
        return -1;
    while (isspace((unsigned char)*end))
        ++end;
    if (*end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Whether v rounds to a finite float32: below FLT_MAX plus half its last step (2^128 - 2^103). */
static int fits_float(double v) { return fabs(v) < 0x1.ffffffp127; }

/* --from/--to: x,y,z, three finite numbers that float32 holds. 0, or -1 after a message naming the flag. */
static int parse_vec3(const char* flag, const char* text, float out[3])
{
    const char* s = text;
    const char* token[3];
    int token_len[3];
    double v[3];
    for (int k = 0; k < 3; ++k) {
        char* end;
        v[k] = strtod(s, &end);
        while (isspace((unsigned char)*s))
            ++s;
        if (end == s || !isfinite(v[k]) || !is_decimal(s, end)) {
            fprintf(stderr, "navbake: %s needs x,y,z (got '%s')\n", flag, text);
            return -1;
        }
        token[k] = s;
        token_len[k] = (int)(end - s);
        while (isspace((unsigned char)*end))
            ++end;
        if (*end != (k < 2 ? ',' : '\0')) {
            fprintf(stderr, "navbake: %s needs x,y,z (got '%s')\n", flag, text);
            return -1;
        }
        s = end + 1;
    }
    for (int k = 0; k < 3; ++k) {
        if (!fits_float(v[k])) {
            fprintf(stderr, "navbake: %s: %c = %.*s is beyond float32's range (3.4e38)\n", flag, "xyz"[k],
                    token_len[k], token[k]);
            return -1;
        }
        out[k] = (float)v[k];
    }
    return 0;
}

static int parse_partition(const char* s, double* out)
{
    static const char* names[] = { "watershed", "monotone", "layers", "wavefront" };
    for (int i = 0; i < 4; ++i)
        if (strcmp(s, names[i]) == 0) {
            *out = i + 1;
            return 0;
        }
    return -1;
}

/* Whether a field takes an explicit zero (NB_ZERO): asks the library, as the package does (web/src/wasm.ts). */
static int zero_allowed(int field)
{
    nb_config c, resolved;
    memset(&c, 0, sizeof(c));
    nb_config_set(&c, field, NB_ZERO);
    return nb_config_resolve(NULL, &c, &resolved, NULL) == NB_OK && nb_config_get(&resolved, field) == 0.0;
}

/* Whether a field holds an integer (verts_per_poly, tile_size): it does not keep a half. */
static int integer_field(int field)
{
    nb_config c;
    memset(&c, 0, sizeof(c));
    nb_config_set(&c, field, 0.5);
    return nb_config_get(&c, field) == 0.0;
}

/* A config flag's value into the config. On the command line 0 means zero, not "the default": NB_ZERO where
 * the field takes it, 0 where zero is the default (--tile-size 0: one tile), an error where zero is not valid. */
static int parse_config_flag(const char* flag, int field, const char* v, nb_config* config)
{
    const char* name = nb_config_field_name(field);
    double value;
    if (strcmp(name, "partition") == 0) {
        if (parse_partition(v, &value) != 0) {
            fprintf(stderr, "navbake: --partition must be watershed, monotone, layers or wavefront (got '%s')\n", v);
            return -1;
        }
        nb_config_set(config, field, value);
        return 0;
    }
    if (parse_number(v, &value) != 0) {
        fprintf(stderr, "navbake: %s needs a number (got '%s')\n", flag, v);
        return -1;
    }
    const int zero = zero_allowed(field);
    if (integer_field(field)) {
        if (value != floor(value)) {
            fprintf(stderr, "navbake: %s: config.%s must be an integer (got %s)\n", flag, name, v);
            return -1;
        }
        if (fabs(value) > 1e9) {
            fprintf(stderr, "navbake: %s: config.%s is out of range (got %s)\n", flag, name, v);
            return -1;
        }
    } else if (!fits_float(value)) {
        fprintf(stderr, "navbake: %s: %s is beyond float32's range (3.4e38)\n", flag, v);
        return -1;
    } else if (value != 0.0 && (float)value == 0.0f) { /* else it would pass as 0, "the default" */
        fprintf(stderr, "navbake: %s: config.%s (%s) is 0 in float32; give 0 or a value C can hold\n", flag, name, v);
        return -1;
    }
    if (value == 0.0) {
        if (zero)
            value = NB_ZERO;
        else if (nb_config_default(field) != 0.0) {
            fprintf(stderr, "navbake: %s: config.%s must not be 0\n", flag, name);
            return -1;
        }
    } else if (zero && value < 0) {
        /* not NB_ZERO in disguise: -1 is a negative number here */
        fprintf(stderr, "navbake: %s: config.%s must be >= 0 (got %s)\n", flag, name, v);
        return -1;
    }
    nb_config_set(config, field, value);
    return 0;
}

static int has_suffix(const char* s, const char* suffix)
{
    const size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int is_mesh_name(const char* path)
{
    return has_suffix(path, ".obj") || has_suffix(path, ".gltf") || has_suffix(path, ".glb");
}

static int parse_args(int argc, char** argv, options* o)
{
    memset(o, 0, sizeof(*o));
    o->repeat = 1;
    o->seed = 1;
    if (argc < 2)
        return -1;
    o->command = argv[1];
    const unsigned cmd = command_bit(o->command);
    if (!cmd) {
        fprintf(stderr, "navbake: unknown command '%s' (see navbake --help)\n", o->command);
        return -1;
    }
    for (int i = 2; i < argc; ++i) {
        const char* a = argv[i];
        /* --flag=value is --flag value, as in the Node tool */
        char name[64];
        const char* inline_value = NULL;
        const char* eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq && (size_t)(eq - a) < sizeof(name)) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            inline_value = eq + 1;
            a = name;
        }
        const tool_option* opt = find_option(a);
        const int field = !opt && strncmp(a, "--", 2) == 0 ? nb_config_field_index(a + 2) : -1;
        if (!opt && field < 0) {
            if (a[0] == '-' && a[1]) {
                fprintf(stderr, "navbake: unknown option %s (see navbake --help)\n", a);
                return -1;
            }
            if (o->mesh_path) {
                fprintf(stderr, "navbake: unexpected argument %s (one input file only)\n", a);
                return -1;
            }
            o->mesh_path = a;
            continue;
        }
        if (opt && !(opt->commands & cmd)) {
            fprintf(stderr, "navbake: %s is not an option of '%s' (see navbake --help)\n", a, o->command);
            return -1;
        }
        const char* v = NULL;
        if (!opt || opt->value) {
            if (!inline_value && i + 1 >= argc) {
                fprintf(stderr, "navbake: %s needs a value\n", a);
                return -1;
            }
            v = inline_value ? inline_value : argv[++i];
        } else if (inline_value) {
            fprintf(stderr, "navbake: %s takes no value\n", a);
            return -1;
        }
        if (!opt) {
            if (parse_config_flag(a, field, v, &o->config) != 0)
                return -1;
            ++o->config_flags;
            continue;
        }
        unsigned long long n;
        if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "-o") == 0) {
            o->out_path = v;
        } else if (strcmp(a, "--save") == 0) {
            o->save_path = v;
        } else if (strcmp(a, "--pairs-file") == 0) {
            o->pairs_file = v;
        } else if (strcmp(a, "--pairs") == 0) {
            if (parse_count(v, 1, 10000000, &n) != 0) {
                fprintf(stderr, "navbake: --pairs must be 1..10000000 (got '%s')\n", v);
                return -1;
            }
            o->pairs = (long)n;
        } else if (strcmp(a, "--seed") == 0) {
            if (parse_count(v, 0, UINT64_MAX, &n) != 0) {
                fprintf(stderr, "navbake: --seed must be an integer 0..2^64-1 (got '%s')\n", v);
                return -1;
            }
            o->seed = n;
            o->has_seed = 1;
        } else if (strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0) {
            const int from = a[2] == 'f';
            if (parse_vec3(a, v, from ? o->from : o->to) != 0)
                return -1;
            *(from ? &o->has_from : &o->has_to) = 1;
        } else if (strcmp(a, "--repeat") == 0) {
            if (parse_count(v, 1, 100000, &n) != 0) {
                fprintf(stderr, "navbake: --repeat must be 1..100000 (got '%s')\n", v);
                return -1;
            }
            o->repeat = (int)n;
            o->has_repeat = 1;
        }
    }
    if (!o->mesh_path) {
        fprintf(stderr, "navbake: %s needs a mesh file\n", o->command);
        return -1;
    }
    if ((cmd & (CMD_VOXELS | CMD_BAKE)) && has_suffix(o->mesh_path, ".navbake")) {
        fprintf(stderr, "navbake: %s: %s needs a mesh (.obj)\n", o->mesh_path, o->command);
        return -1;
    }
    /* Nothing given is left unused: a flag that would change nothing is refused, as in the Node tool. */
    if (o->pairs && o->pairs_file) {
        fprintf(stderr, "navbake: query takes --pairs N or --pairs-file F, not both\n");
        return -1;
    }
    if (o->has_seed && o->pairs_file) {
        fprintf(stderr, "navbake: --seed goes with --pairs N (the random pairs), not --pairs-file\n");
        return -1;
    }
    if (cmd == CMD_BAKE && (o->save_path || o->config.tile_size > 0)) {
        if (o->out_path || o->has_repeat) {
            fprintf(stderr, "navbake: bake %s is for a solo bake, not with --save or --tile-size\n",
                    o->out_path ? "-o (the polygons as an OBJ)" : "--repeat");
            return -1;
        }
        if (o->save_path && is_mesh_name(o->save_path)) {
            fprintf(stderr, "navbake: --save %s: bake --save writes a .navbake file, not a mesh\n", o->save_path);
            return -1;
        }
    }
    if (o->out_path && has_suffix(o->out_path, ".navbake")) {
        fprintf(stderr, "navbake: -o %s: bake -o writes the polygons as an OBJ; --save writes the navmesh\n",
                o->out_path);
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

/* A JSON string: quotes, backslashes and control characters escaped (a path can hold any of them). */
static void print_json_string(const char* s)
{
    putchar('"');
    for (const unsigned char* c = (const unsigned char*)s; *c; ++c) {
        if (*c == '"' || *c == '\\')
            printf("\\%c", *c);
        else if (*c < 0x20)
            printf("\\u%04x", *c);
        else
            putchar(*c);
    }
    putchar('"');
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

/* Closes a file written with stdio. 0, or exit code 1 after a message naming it and why ("PATH: cannot write:
 * no space left on device"): the file could be opened, so the name was fine and the output is what failed. */
static int close_written(FILE* f, const char* path)
{
    const int failed = ferror(f);
    int e = errno; /* of the failed write, when one failed */
    errno = 0;
    const int closed = fclose(f) == 0;
    if (!failed && closed)
        return 0;
    fprintf(stderr, "navbake: %s: cannot write: %s\n", path, nb_describe_errno(failed ? e : errno));
    return 1;
}

/* Polygons as an OBJ file to look at: world-space vertices, one face per polygon. 0, or the exit code: 2 when the
 * file cannot be created (a bad name), 1 when writing it failed. */
static int write_polys_obj(const char* path, const nb_poly_mesh* pm)
{
    errno = 0;
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "navbake: %s: cannot write: %s\n", path, nb_describe_errno(errno));
        return 2;
    }
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
    return close_written(f, path);
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
    return p == NB_PARTITION_MONOTONE ? "monotone" : p == NB_PARTITION_LAYERS ? "layers"
         : p == NB_PARTITION_WAVEFRONT ? "wavefront" : "watershed";
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
    /* The polygons are written first: a report is printed only for a bake whose output is all there. */
    if (o->out_path && r.poly_mesh) {
        const int rc = write_polys_obj(o->out_path, r.poly_mesh);
        if (rc) {
            nb_bake_result_release(ctx, &r);
            return rc;
        }
    }
    const double* s = r.stats;
    if (stop == NB_STAGE_ALL && s[NB_STAT_POLYS] == 0)
        warn_nothing_walkable();
    /* counts: the stage statistics that ran (grid first, as "grid":[w,h]) */
    if (o->json) {
        printf("{\"mesh\":");
        print_json_string(o->mesh_path);
        printf(",\"vertices\":%u,\"triangles\":%u,", obj->vertex_count, obj->triangle_count);
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
    nb_bake_result_release(ctx, &r);
    return 0;
}

/* ---- runtime commands: a navmesh from a .navbake file or baked from a mesh ---- */

/* Loads FILE.navbake, or bakes MESH.obj with the config flags (tiled with --tile-size). Exit code or 0. */
static int open_navmesh(nb_context* ctx, const options* o, nb_navmesh** nav)
{
    if (has_suffix(o->mesh_path, ".navbake")) {
        char* data = NULL;
        size_t size = 0;
        char err[512];
        if (nb_read_whole_file(o->mesh_path, "cannot read", &data, &size, err, sizeof(err)) != 0) {
            fprintf(stderr, "navbake: %s\n", err);
            return 2;
        }
        if (o->config_flags)
            fprintf(stderr, "navbake: note: config flags do not change a navmesh loaded from %s\n", o->mesh_path);
        const nb_status st = nb_navmesh_load(ctx, (const uint8_t*)data, size, nav);
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
    s &= 3; /* (NB_PATH_EXHAUSTED cannot be set: the tool's queries have a node for every polygon) */
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

/* Reads lines of six numbers (start xyz, end xyz), skipping blank lines and # comments, as the Node tool does.
 * Returns the pair count (at least 1), or -1 with a message naming the file and the line in err. */
static long read_pairs(const char* path, float** pairs, char* err, size_t err_size)
{
    *pairs = NULL;
    char* text = NULL;
    size_t size = 0;
    if (nb_read_whole_file(path, "cannot read pairs", &text, &size, err, err_size) != 0)
        return -1;
    if (memchr(text, '\0', size)) {
        free(text);
        snprintf(err, err_size, "%s: not a text file (contains NUL bytes)", path);
        return -1;
    }
    float* out = NULL;
    size_t cap = 0, n = 0;
    long lineno = 0;
    int ok = 1;
    char* start = size >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? text + 3 : text; /* a UTF-8 byte order mark */
    for (char* line = start; ok && *line;) {
        ++lineno;
        char* next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        char* eol = strpbrk(line, "#\n");
        if (eol)
            *eol = '\0'; /* the line, without its comment */
        double v[6];
        const char* token[6];
        int token_len[6];
        int k = 0, numbers = 1;
        for (char* q = line;;) {
            while (isspace((unsigned char)*q))
                ++q;
            if (!*q)
                break;
            char* e;
            const double x = strtod(q, &e);
            if (k == 6 || e == q || (*e && !isspace((unsigned char)*e)) || !isfinite(x) || !is_decimal(q, e)) {
                numbers = 0;
                break;
            }
            token[k] = q;
            token_len[k] = (int)(e - q);
            v[k++] = x;
            q = e;
        }
        if (numbers && k == 0) { /* a blank or comment line */
            line = next;
            continue;
        }
        if (!numbers || k != 6) {
            snprintf(err, err_size, "%s:%ld: need six numbers (start xyz, end xyz)", path, lineno);
            ok = 0;
            break;
        }
        for (int j = 0; j < 6 && ok; ++j)
            if (!fits_float(v[j])) {
                snprintf(err, err_size, "%s:%ld: %.*s is beyond float32's range (3.4e38)", path, lineno, token_len[j],
                         token[j]);
                ok = 0;
            }
        if (ok && n == cap) {
            cap = cap ? cap * 2 : 1024;
            float* grown = (float*)realloc(out, cap * 6 * sizeof(float));
            if (!grown) {
                snprintf(err, err_size, "%s: out of memory (%zu pairs)", path, cap);
                ok = 0;
            } else {
                out = grown;
            }
        }
        if (ok) {
            for (int j = 0; j < 6; ++j)
                out[n * 6 + (size_t)j] = (float)v[j];
            ++n;
        }
        line = next;
    }
    free(text);
    if (ok && n == 0) {
        snprintf(err, err_size, "%s: no pairs", path);
        ok = 0;
    }
    if (!ok) {
        free(out);
        return -1;
    }
    *pairs = out;
    return (long)n;
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
        char err[1024];
        n = read_pairs(o->pairs_file, &pairs, err, sizeof(err));
        if (n < 0) {
            fprintf(stderr, "navbake: %s\n", err);
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
        /* zeroed: an empty navmesh gives no points, and its pairs stay at the origin (finding nothing) */
        pairs = (float*)calloc((size_t)n * 6, sizeof(float));
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
            found += (status[i] & 3) != NB_PATH_NONE;
            complete += (status[i] & 3) == NB_PATH_COMPLETE;
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

/* Writes a whole file. 0, or the exit code after a message naming it and why: 2 when it cannot be created
 * ("PATH: cannot write: no such file"), 1 when writing it failed (a full disk). */
static int write_file(const char* path, const uint8_t* data, size_t size)
{
    errno = 0;
    FILE* f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "navbake: %s: cannot write: %s\n", path, nb_describe_errno(errno));
        return 2;
    }
    fwrite(data, 1, size, f);
    return close_written(f, path);
}

/* bake --save / bake --tile-size: a navmesh (saved with --save). Prints tiles, polygons and its size in bytes. */
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
    /* The size is that of the .navbake file, saved or not (as the Node tool reports it). */
    uint8_t* data = NULL;
    size_t size = 0;
    const nb_status st = nb_navmesh_save(ctx, nav, &data, &size);
    if (st != NB_OK) {
        fprintf(stderr, "navbake: %s: %s\n", nb_status_name(st), nb_context_message(ctx));
        rc = 1;
    } else if (o->save_path) {
        rc = write_file(o->save_path, data, size);
    }
    if (!rc) {
        if (o->json) {
            printf("{\"mesh\":");
            print_json_string(o->mesh_path);
            printf(",\"tiles\":%u,\"polys\":%u,\"bytes\":%zu,\"ms\":{\"total\":%.3f}}\n", nb_navmesh_tile_count(nav),
                   nrefs, size, ms);
        } else {
            printf("%s: %u tiles, %u polygons, %zu bytes, %.1f ms%s%s\n", o->mesh_path, nb_navmesh_tile_count(nav),
                   nrefs, size, ms, o->save_path ? " -> " : "", o->save_path ? o->save_path : "");
        }
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
        unsigned long long n;
        if (strcmp(argv[i], "--cells") == 0 && i + 1 < argc) {
            if (parse_count(argv[++i], 1, 20000, &n) != 0) {
                fprintf(stderr, "navbake terrain: --cells must be 1..20000 (got '%s')\n", argv[i]);
                return 2;
            }
            cells = (int)n;
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            if (parse_count(argv[++i], 0, UINT32_MAX, &n) != 0) {
                fprintf(stderr, "navbake terrain: --seed must be an integer 0..2^32-1 (got '%s')\n", argv[i]);
                return 2;
            }
            seed = (uint32_t)n;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else {
            fprintf(stderr, "navbake terrain: unexpected argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "navbake terrain: need -o FILE\n");
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
    const int rc = close_written(f, out);
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
        unsigned long long n;
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            if (parse_count(argv[++i], 0, UINT32_MAX, &n) != 0) {
                fprintf(stderr, "navbake world: --seed must be an integer 0..2^32-1 (got '%s')\n", argv[i]);
                return 2;
            }
            seed = (uint32_t)n;
        } else if (strcmp(argv[i], "--triangles") == 0 && i + 1 < argc) {
            if (parse_count(argv[++i], 1, 64000000, &n) != 0) {
                fprintf(stderr, "navbake world: --triangles must be 1..64000000 (got '%s')\n", argv[i]);
                return 2;
            }
            triangles = (long)n;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else {
            fprintf(stderr, "navbake world: unexpected argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "navbake world: need -o FILE\n");
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
    const int rc = close_written(f, out);
    if (!rc)
        fprintf(stderr, "navbake world: %u triangles, %u vertices, generated in %.1f ms\n", w.triangle_count,
                w.vertex_count, gen_ms);
    nb_obj_free(&w);
    return rc;
}

/* A config the library refuses: its message, after the flag of the field it names ("--tile-size: ..."). */
static void print_config_error(const char* message)
{
    const char* field = strstr(message, "config.");
    char name[64] = "";
    if (field) {
        field += strlen("config.");
        size_t n = 0;
        while (n + 1 < sizeof(name) && (islower((unsigned char)field[n]) || field[n] == '_'))
            name[n] = field[n], ++n;
        name[n] = '\0';
    }
    char flag[80];
    if (name[0] && nb_config_field_index(name) >= 0) {
        flag_of_field(name, flag, sizeof(flag));
        fprintf(stderr, "navbake: %s: %s\n", flag, message);
    } else {
        fprintf(stderr, "navbake: %s\n", message);
    }
}

static int run(int argc, char** argv)
{
    if (argc >= 2 && strcmp(argv[1], "terrain") == 0)
        return cmd_terrain(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "world") == 0)
        return cmd_world(argc, argv);
    if (argc == 2 && (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)) {
        printf("navbake %d.%d.%d\n", NB_VERSION_MAJOR, NB_VERSION_MINOR, NB_VERSION_PATCH);
        return 0;
    }
    int help = argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0);
    for (int i = 1; i < argc; ++i) /* --help anywhere, as in the Node tool */
        help |= strcmp(argv[i], "--help") == 0;
    if (help) {
        usage(stdout);
        return 0;
    }
    options o;
    if (parse_args(argc, argv, &o) != 0) {
        if (argc < 2)
            usage(stderr); /* otherwise the message says what is wrong, and --help the rest */
        return 2;
    }
    const int runtime = strcmp(o.command, "path") == 0 || strcmp(o.command, "query") == 0 ||
                        (strcmp(o.command, "bake") == 0 && (o.save_path || o.config.tile_size > 0));
    const nb_stage stop = strcmp(o.command, "voxels") == 0 ? NB_STAGE_ERODE : NB_STAGE_ALL;
    nb_context* ctx = nb_context_create(NULL);
    if (!ctx) {
        fprintf(stderr, "navbake: out of memory\n");
        return 1;
    }
    nb_config resolved;
    if (nb_config_resolve(ctx, &o.config, &resolved, NULL) != NB_OK) {
        print_config_error(nb_context_message(ctx));
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

int main(int argc, char** argv)
{
#if defined(__GLIBC__)
    /* Keep freed memory for the next bake, as a long-running game would: by default glibc hands every block
     * over 128 KB back to the OS on free, and each bake then pays page faults to touch its grids again
     * (measured: the compact stage 1.33 -> 0.93 ms on dungeon with --repeat). */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
#if defined(SIGPIPE)
    /* A reader that stops early (navbake ... | head -c1) makes the write fail with EPIPE, checked below. */
    signal(SIGPIPE, SIG_IGN);
#endif
    int rc = run(argc, argv);
    /* Output that did not all arrive is a failure, not exit 0: a full disk, a closed pipe. A closed pipe is the
     * reader's choice: exit 1 quietly (as the Node tool does). */
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        const int e = errno; /* of the flush; 0 when only an earlier write failed */
        if (e != EPIPE)
            fprintf(stderr, "navbake: cannot write output: %s\n", nb_describe_errno(e));
        if (rc == 0)
            rc = 1;
    }
    return rc;
}
