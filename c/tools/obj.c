/* Minimal Wavefront OBJ reader (see obj.h). */
#include "obj.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct growable {
    void* data;
    size_t count, cap, elem;
} growable;

static int grow_push(growable* g, const void* item)
{
    if (g->count == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 1024;
        void* p = realloc(g->data, cap * g->elem);
        if (!p)
            return -1;
        g->data = p;
        g->cap = cap;
    }
    memcpy((char*)g->data + g->count * g->elem, item, g->elem);
    g->count++;
    return 0;
}

static int fail(char* err, size_t n, const char* name, long line, const char* what)
{
    if (line > 0)
        snprintf(err, n, "%s:%ld: %s", name, line, what);
    else
        snprintf(err, n, "%s: %s", name, what);
    return -1;
}

int nb_obj_parse(const char* text, const char* name, nb_obj* out, char* err, size_t err_size)
{
    memset(out, 0, sizeof(*out));
    growable verts = { NULL, 0, 0, sizeof(float) * 3 };
    growable tris = { NULL, 0, 0, sizeof(uint32_t) * 3 };
    long line = 0;
    char msg[160];
    const char* p = text;
    int rc = 0;
    while (*p && rc == 0) {
        ++line;
        const char* end = strchr(p, '\n');
        if (!end)
            end = p + strlen(p);
        while (p < end && (*p == ' ' || *p == '\t'))
            ++p;
        if (p + 1 < end && p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
            float v[3];
            char* q = (char*)p + 1;
            for (int k = 0; k < 3; ++k) {
                char* e;
                errno = 0;
                v[k] = strtof(q, &e);
                if (e == q || e > end) {
                    rc = fail(err, err_size, name, line, "vertex needs three numbers");
                    break;
                }
                if (!isfinite(v[k])) {
                    rc = fail(err, err_size, name, line, "vertex coordinate is not finite");
                    break;
                }
                q = e;
            }
            if (rc == 0 && grow_push(&verts, v))
                rc = fail(err, err_size, name, line, "out of memory");
        } else if (p + 1 < end && p[0] == 'f' && (p[1] == ' ' || p[1] == '\t')) {
            uint32_t first = 0, prev = 0;
            int n = 0;
            const char* q = p + 1;
            while (q < end && rc == 0) {
                while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
                    ++q;
                if (q >= end)
                    break;
                char* e;
                long idx = strtol(q, &e, 10);
                if (e == q) {
                    rc = fail(err, err_size, name, line, "face index is not a number");
                    break;
                }
                const long nv = (long)verts.count;
                long resolved = idx > 0 ? idx - 1 : nv + idx; /* negative: relative to the end */
                if (idx == 0 || resolved < 0 || resolved >= nv) {
                    snprintf(msg, sizeof(msg), "face index %ld is out of range (%ld vertices so far)", idx, nv);
                    rc = fail(err, err_size, name, line, msg);
                    break;
                }
                q = e;
                while (q < end && *q != ' ' && *q != '\t' && *q != '\r')
                    ++q; /* skip /vt/vn */
                const uint32_t vi = (uint32_t)resolved;
                if (n == 0)
                    first = vi;
                else if (n >= 2) {
                    const uint32_t t[3] = { first, prev, vi };
                    if (grow_push(&tris, t))
                        rc = fail(err, err_size, name, line, "out of memory");
                }
                prev = vi;
                ++n;
            }
            if (rc == 0 && n < 3)
                rc = fail(err, err_size, name, line, "face needs at least three vertices");
        }
        p = *end ? end + 1 : end;
    }
    if (rc == 0 && tris.count == 0)
        rc = fail(err, err_size, name, 0, "no faces");
    if (rc != 0) {
        free(verts.data);
        free(tris.data);
        return -1;
    }
    out->positions = (float*)verts.data;
    out->vertex_count = (uint32_t)verts.count;
    out->indices = (uint32_t*)tris.data;
    out->triangle_count = (uint32_t)tris.count;
    return 0;
}

int nb_obj_load(const char* path, nb_obj* out, char* err, size_t err_size)
{
    memset(out, 0, sizeof(*out));
    FILE* f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 0) {
        fclose(f);
        snprintf(err, err_size, "%s: cannot read", path);
        return -1;
    }
    char* text = (char*)malloc((size_t)size + 1);
    if (!text) {
        fclose(f);
        snprintf(err, err_size, "%s: out of memory (%ld bytes)", path, size);
        return -1;
    }
    size_t got = fread(text, 1, (size_t)size, f);
    fclose(f);
    text[got] = '\0';
    if (memchr(text, '\0', got)) {
        free(text);
        snprintf(err, err_size, "%s: not a text file (contains NUL bytes)", path);
        return -1;
    }
    int rc = nb_obj_parse(text, path, out, err, err_size);
    free(text);
    return rc;
}

void nb_obj_free(nb_obj* obj)
{
    if (!obj)
        return;
    free(obj->positions);
    free(obj->indices);
    memset(obj, 0, sizeof(*obj));
}
