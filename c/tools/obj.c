/* Minimal Wavefront OBJ reader (see obj.h). */
#include "obj.h"

#include <ctype.h>
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

/* Whether a number read up to e ends there: the end of the line, a blank or a comment. */
static int ends_token(const char* e, const char* end)
{
    return e >= end || *e == ' ' || *e == '\t' || *e == '\r' || *e == '#';
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
                /* a whole number: "3x" or "2,3" is not one (the Node tool's reader agrees) */
                if (e == q || e > end || !ends_token(e, end)) {
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
                if (q >= end || *q == '#')
                    break; /* end of the line, or a comment */
                char* e;
                long idx = strtol(q, &e, 10);
                /* a whole integer, then the end of the vertex or its /vt/vn: not "2.5" or "3x" */
                if (e == q || e > end || (!ends_token(e, end) && *e != '/')) {
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
                while (q < end && *q != ' ' && *q != '\t' && *q != '\r' && *q != '#')
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

const char* nb_describe_errno(int e)
{
    switch (e) {
    case 0: return "input/output error";
    case ENOENT: return "no such file";
    case EACCES:
    case EPERM: return "permission denied";
    case EISDIR: return "is a directory";
    case ENOTDIR: return "a parent is not a directory";
    default: {
        static char text[160]; /* strerror's words, lower case as Node's are ("no space left on device") */
        snprintf(text, sizeof(text), "%s", strerror(e));
        text[0] = (char)tolower((unsigned char)text[0]);
        return text;
    }
    }
}

int nb_read_whole_file(const char* path, const char* what, char** data, size_t* size, char* err, size_t err_size)
{
    *data = NULL;
    *size = 0;
    errno = 0;
    FILE* f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: %s: %s", path, what, nb_describe_errno(errno));
        return -1;
    }
    /* Read to the end rather than trust the size from a seek: a directory opens on Linux and "seeks" to
     * LONG_MAX, and a pipe has no size. */
    size_t cap = (size_t)1 << 20, n = 0;
    char* buf = (char*)malloc(cap + 1);
    while (buf) {
        errno = 0;
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break; /* the end, or an error */
        char* grown = cap <= SIZE_MAX / 2 - 1 ? (char*)realloc(buf, cap * 2 + 1) : NULL;
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    if (!buf) {
        fclose(f);
        snprintf(err, err_size, "%s: out of memory (more than %zu bytes)", path, cap);
        return -1;
    }
    if (ferror(f)) {
        const int e = errno;
        fclose(f);
        free(buf);
        snprintf(err, err_size, "%s: %s: %s", path, what, nb_describe_errno(e));
        return -1;
    }
    fclose(f);
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return 0;
}

int nb_obj_load(const char* path, nb_obj* out, char* err, size_t err_size)
{
    memset(out, 0, sizeof(*out));
    char* text = NULL;
    size_t got = 0;
    if (nb_read_whole_file(path, "cannot open", &text, &got, err, err_size) != 0)
        return -1;
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
