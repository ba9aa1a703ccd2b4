/* Deterministic procedural big world (see world.h). Structures are generated first into a small growing
 * buffer; the terrain grid is then sized so that terrain + structures meet the target, and both are copied
 * into arrays allocated once. */
#include "world.h"

#include "noise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Same bits everywhere: no fused multiply-adds (clang contracts a * b + c by default; GCC does not under
 * -std=c11). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define SITE 48.0f      /* side of a feature site */
#define SITE_IN 9.0f    /* a feature keeps this far from its site's edges: PAD_FLAT + PAD_BLEND, so pads never meet */
#define PAD_FLAT 2.5f   /* a pad stays exactly flat this far around its rectangle (doors open onto level ground) */
#define PAD_BLEND 6.5f  /* then blends back into the hills over this distance */
#define STOREY 3.5f     /* floor to floor */
#define SLAB 0.3f       /* floor thickness: 3.2 clearance under each floor for a 2.0 agent */
#define WALL 0.4f
#define STEPS 11        /* 3.5 / 11 = 0.318 per step, under the 0.35 promised */
#define TREAD 0.6f
#define FLIGHT_W 3.0f   /* stairs and ramps: wide enough to stay walkable after ledge marking and erosion (0.6) */
#define RAMP_RUN 8.0f   /* 3.5 over 8: 23.6 degrees */
#define FLIGHT_X 3.0f   /* room between the west wall and a flight's foot */
#define DOOR_W 2.4f
#define DOOR_H 2.6f
#define MAX_TARGET 64000000u

/* First building: fixed so tests and the demo can target it. */
#define FB_X0 16.0f
#define FB_Z0 16.0f
#define FB_W 22.0f
#define FB_D 16.0f
#define FB_STOREYS 3

/* ---- hashing and noise (noise.h: integer hashing, plain float math: same bits everywhere) ---- */

/* world.c's lattice hash multipliers (the world, and the figures measured on it, depend on them) */
static const nb_noise_key KEY = { 0x9e3779b1u, 0x85ebca77u, 0xc2b2ae3du };

static uint32_t hash3(int32_t x, int32_t z, uint32_t seed) { return nb_noise_hash(&KEY, x, z, seed); }

/* The natural ground (before pads). The steepest a value-noise octave gets is about 3.75 * amplitude /
 * wavelength (0.25, 0.38, 0.33, 0.23 here) and the octaves rarely peak together, so most slopes stay walkable
 * while the two long octaves give hills and valleys tens of units across for the bridges. */
static float ground_height(float x, float z, uint32_t seed)
{
    static const float octaves[4][2] = { { 240.0f, 16.0f }, { 80.0f, 8.0f }, { 28.0f, 2.5f }, { 10.0f, 0.6f } };
    float h = 0.0f;
    for (uint32_t o = 0; o < 4; ++o) {
        const uint32_t s = seed * 5u + o + 0x51u;
        const float off_x = (float)(hash3(31, (int32_t)o, s) & 0xffu) + 0.37f;
        const float off_z = (float)(hash3(47, (int32_t)o, s) & 0xffu) + 0.71f;
        h += octaves[o][1] * nb_noise_value(&KEY, x / octaves[o][0] + off_x, z / octaves[o][0] + off_z, s);
    }
    return h;
}

/* A small counter-based generator for the choices of one site. */
typedef struct rng {
    uint32_t key, n;
} rng;

static uint32_t rng_u32(rng* r) { return hash3((int32_t)r->n++, 0x2545f491, r->key); }
static float rng_float(rng* r, float lo, float hi)
{
    return lo + (hi - lo) * ((float)(rng_u32(r) >> 8) * (1.0f / 16777216.0f));
}
static int rng_int(rng* r, int lo, int hi) { return lo + (int)(rng_u32(r) % (uint32_t)(hi - lo + 1)); }

/* ---- geometry buffer for the structures ---- */

typedef struct mbuf {
    float* pos;
    uint32_t nv, capv;
    uint32_t* idx;
    uint32_t nt, capt;
    int oom;
} mbuf;

/* Reserves room for nv more vertices and nt more triangles; 0 on success. */
static int reserve(mbuf* m, uint32_t nv, uint32_t nt)
{
    if (m->oom)
        return -1;
    if (m->nv + nv > m->capv) {
        uint32_t cap = m->capv ? m->capv * 2 : 4096;
        while (cap < m->nv + nv)
            cap *= 2;
        float* p = (float*)realloc(m->pos, (size_t)cap * 3 * sizeof(float));
        if (!p) {
            m->oom = 1;
            return -1;
        }
        m->pos = p;
        m->capv = cap;
    }
    if (m->nt + nt > m->capt) {
        uint32_t cap = m->capt ? m->capt * 2 : 4096;
        while (cap < m->nt + nt)
            cap *= 2;
        uint32_t* p = (uint32_t*)realloc(m->idx, (size_t)cap * 3 * sizeof(uint32_t));
        if (!p) {
            m->oom = 1;
            return -1;
        }
        m->idx = p;
        m->capt = cap;
    }
    return 0;
}

/* A hexahedron from its corners c[x + 2y + 4z] (x, y, z in {0, 1} along a right-handed frame: for an
 * axis-aligned box, corner bit 0 is +x, bit 1 +y, bit 2 +z). Each face is listed counter-clockwise seen from
 * outside, so normals point out (the top faces +y); any rotation about y or vertical shear keeps that. */
static void add_hexa(mbuf* m, const float c[8][3])
{
    static const uint8_t faces[6][4] = {
        { 2, 6, 7, 3 }, /* +y */
        { 0, 1, 5, 4 }, /* -y */
        { 1, 3, 7, 5 }, /* +x */
        { 0, 4, 6, 2 }, /* -x */
        { 4, 5, 7, 6 }, /* +z */
        { 0, 2, 3, 1 }, /* -z */
    };
    if (reserve(m, 8, 12) != 0)
        return;
    const uint32_t base = m->nv;
    memcpy(&m->pos[(size_t)base * 3], c, 8 * 3 * sizeof(float));
    m->nv += 8;
    for (int f = 0; f < 6; ++f) {
        uint32_t* t = &m->idx[(size_t)m->nt * 3];
        t[0] = base + faces[f][0], t[1] = base + faces[f][1], t[2] = base + faces[f][2];
        t[3] = base + faces[f][0], t[4] = base + faces[f][2], t[5] = base + faces[f][3];
        m->nt += 2;
    }
}

static void add_box(mbuf* m, float x0, float y0, float z0, float x1, float y1, float z1)
{
    if (!(x1 > x0) || !(y1 > y0) || !(z1 > z0))
        return; /* a cut that left nothing */
    float c[8][3];
    for (int i = 0; i < 8; ++i) {
        c[i][0] = (i & 1) ? x1 : x0;
        c[i][1] = (i & 2) ? y1 : y0;
        c[i][2] = (i & 4) ? z1 : z0;
    }
    add_hexa(m, c);
}

/* A slab along the segment a -> b in xz, its top going from ya to yb (a ramp, a bridge deck, a railing), its
 * centre line moved sideways by `off`, half width hw, thickness `thick` below the top. */
static void add_strip(mbuf* m, float ax, float az, float ya, float bx, float bz, float yb, float off, float hw,
                      float thick)
{
    float dx = bx - ax, dz = bz - az;
    const float len = sqrtf(dx * dx + dz * dz);
    if (!(len > 0.0f))
        return;
    dx /= len, dz /= len;
    /* side axis = along x up: (-dz, 0, dx), so (along, up, side) is right-handed like (x, y, z) */
    const float sx = -dz, sz = dx;
    float c[8][3];
    for (int i = 0; i < 8; ++i) {
        const float px = (i & 1) ? bx : ax, pz = (i & 1) ? bz : az, top = (i & 1) ? yb : ya;
        const float side = off + ((i & 4) ? hw : -hw);
        c[i][0] = px + sx * side;
        c[i][1] = (i & 2) ? top : top - thick;
        c[i][2] = pz + sz * side;
    }
    add_hexa(m, c);
}

/* ---- ground shapes: pads flattened under buildings and platforms, basins dug under bridges ---- */

typedef struct pad {
    int basin;
    float x0, z0, x1, z1; /* pad: its rectangle; basin: the box it reaches */
    float y;              /* pad: its height */
    float cx, cz, dx, dz, half_len, half_w, depth; /* basin: centre, unit direction across, sizes */
} pad;

typedef struct padlist {
    pad* p;
    uint32_t n, cap;
} padlist;

static int push_pad(padlist* l, const pad* p)
{
    if (l->n == l->cap) {
        const uint32_t cap = l->cap ? l->cap * 2 : 64;
        pad* np = (pad*)realloc(l->p, cap * sizeof(pad));
        if (!np)
            return -1;
        l->p = np;
        l->cap = cap;
    }
    l->p[l->n++] = *p;
    return 0;
}

static int add_pad(padlist* l, float x0, float z0, float x1, float z1, float y)
{
    pad p;
    memset(&p, 0, sizeof(p));
    p.x0 = x0, p.z0 = z0, p.x1 = x1, p.z1 = z1, p.y = y;
    return push_pad(l, &p);
}

static float smooth01(float t)
{
    t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
    return t * t * (3.0f - 2.0f * t);
}

/* How deep a basin is at (x, z): full depth in its middle, fading to 0 at half_len along and half_w across. */
static float basin_depth(const pad* b, float x, float z)
{
    const float px = x - b->cx, pz = z - b->cz;
    float a = px * b->dx + pz * b->dz, c = pz * b->dx - px * b->dz;
    a = a < 0.0f ? -a : a;
    c = c < 0.0f ? -c : c;
    const float fa = 1.0f - smooth01((a - 0.35f * b->half_len) / (0.65f * b->half_len));
    const float fc = 1.0f - smooth01((c - 0.3f * b->half_w) / (0.7f * b->half_w));
    return b->depth * fa * fc;
}

static float shape_ground(const pad* p, float x, float z, float h)
{
    if (p->basin)
        return h - basin_depth(p, x, z);
    const float dx = x < p->x0 ? p->x0 - x : (x > p->x1 ? x - p->x1 : 0.0f);
    const float dz = z < p->z0 ? p->z0 - z : (z > p->z1 ? z - p->z1 : 0.0f);
    const float s = smooth01((sqrtf(dx * dx + dz * dz) - PAD_FLAT) * (1.0f / PAD_BLEND));
    return p->y + (h - p->y) * s;
}

/* ---- buildings ---- */

typedef struct building {
    float x0, z0, w, d, y;
    int storeys;
    unsigned doors;     /* bit 0 south (z0), 1 north, 2 west (x0), 3 east */
    float door_at[4];   /* door centre, along its wall from the wall's low end */
} building;

/* A flight (stairs for an even level, a ramp for an odd one) from floor k to k + 1: its footprint. Stairs
 * run along the north wall, ramps along the south wall, so a flight never stands under the hole of the one
 * below it. */
static void flight_rect(const building* b, int k, float r[4])
{
    const float x0 = b->x0 + WALL + FLIGHT_X;
    if ((k & 1) == 0) {
        r[0] = x0, r[2] = x0 + (float)STEPS * TREAD;
        r[3] = b->z0 + b->d - WALL, r[1] = r[3] - FLIGHT_W;
    } else {
        r[0] = x0, r[2] = x0 + RAMP_RUN;
        r[1] = b->z0 + WALL, r[3] = r[1] + FLIGHT_W;
    }
}

/* One wall along x (along_x) or z from a0 to a1, across from c0 to c1, with an optional door centred at dc. */
static void add_wall(mbuf* m, int along_x, float a0, float a1, float c0, float c1, float yb, float yt, int door,
                     float dc, float floor_y)
{
    float seg[3][4]; /* a0, a1, y0, y1 */
    int n = 0;
    if (door) {
        const float d0 = dc - 0.5f * DOOR_W, d1 = dc + 0.5f * DOOR_W;
        seg[n][0] = a0, seg[n][1] = d0, seg[n][2] = yb, seg[n][3] = yt, ++n;
        seg[n][0] = d1, seg[n][1] = a1, seg[n][2] = yb, seg[n][3] = yt, ++n;
        seg[n][0] = d0, seg[n][1] = d1, seg[n][2] = floor_y + DOOR_H, seg[n][3] = yt, ++n;
    } else {
        seg[n][0] = a0, seg[n][1] = a1, seg[n][2] = yb, seg[n][3] = yt, ++n;
    }
    for (int i = 0; i < n; ++i) {
        if (along_x)
            add_box(m, seg[i][0], seg[i][2], c0, seg[i][1], seg[i][3], c1);
        else
            add_box(m, c0, seg[i][2], seg[i][0], c1, seg[i][3], seg[i][1]);
    }
}

static void add_building(mbuf* m, const building* b)
{
    const float x1 = b->x0 + b->w, z1 = b->z0 + b->d;
    const float top = b->y + (float)b->storeys * STOREY;
    const float yb = b->y - 1.0f, yt = top + 1.0f; /* walls sink into the ground and rise as a parapet */
    add_wall(m, 1, b->x0, x1, b->z0, b->z0 + WALL, yb, yt, b->doors & 1, b->x0 + b->door_at[0], b->y);
    add_wall(m, 1, b->x0, x1, z1 - WALL, z1, yb, yt, b->doors & 2, b->x0 + b->door_at[1], b->y);
    add_wall(m, 0, b->z0 + WALL, z1 - WALL, b->x0, b->x0 + WALL, yb, yt, b->doors & 4, b->z0 + b->door_at[2], b->y);
    add_wall(m, 0, b->z0 + WALL, z1 - WALL, x1 - WALL, x1, yb, yt, b->doors & 8, b->z0 + b->door_at[3], b->y);
    const float ix0 = b->x0 + WALL, ix1 = x1 - WALL, iz0 = b->z0 + WALL, iz1 = z1 - WALL;
    for (int k = 1; k <= b->storeys; ++k) {
        const float fy = b->y + (float)k * STOREY, sy = fy - SLAB;
        if (k == b->storeys) {
            add_box(m, ix0, sy, iz0, ix1, fy, iz1); /* the roof */
            continue;
        }
        float h[4];
        flight_rect(b, k - 1, h); /* the hole above the flight that arrives here */
        add_box(m, ix0, sy, iz0, ix1, fy, h[1]);
        add_box(m, ix0, sy, h[3], ix1, fy, iz1);
        add_box(m, ix0, sy, h[1], h[0], fy, h[3]);
        add_box(m, h[2], sy, h[1], ix1, fy, h[3]);
    }
    for (int k = 0; k + 1 < b->storeys; ++k) {
        const float fy = b->y + (float)k * STOREY;
        float r[4];
        flight_rect(b, k, r);
        if ((k & 1) == 0) {
            for (int s = 0; s < STEPS; ++s) /* solid steps, sunk 0.1 into the floor */
                add_box(m, r[0] + (float)s * TREAD, fy - 0.1f, r[1], r[0] + (float)(s + 1) * TREAD,
                        fy + STOREY * (float)(s + 1) / (float)STEPS, r[3]);
        } else {
            const float zc = 0.5f * (r[1] + r[3]);
            add_strip(m, r[0], zc, fy, r[2], zc, fy + STOREY, 0.0f, 0.5f * FLIGHT_W, SLAB);
        }
    }
}

static building first_building(uint32_t seed)
{
    building b;
    memset(&b, 0, sizeof(b));
    b.x0 = FB_X0, b.z0 = FB_Z0, b.w = FB_W, b.d = FB_D, b.storeys = FB_STOREYS;
    b.y = ground_height(FB_X0 + 0.5f * FB_W, FB_Z0 + 0.5f * FB_D, seed);
    b.doors = 1 | 8;
    b.door_at[0] = 0.5f * FB_W;
    b.door_at[3] = 0.5f * FB_D;
    return b;
}

/* A random building inside the site's usable square [ox, ox + span]^2. */
static int site_building(mbuf* m, padlist* pads, rng* r, float ox, float oz, float span, uint32_t seed)
{
    building b;
    memset(&b, 0, sizeof(b));
    b.w = (float)rng_int(r, 16, 26);
    b.d = (float)rng_int(r, 14, 20);
    b.x0 = ox + rng_float(r, 0.0f, span - b.w);
    b.z0 = oz + rng_float(r, 0.0f, span - b.d);
    b.storeys = rng_int(r, 2, 4);
    b.y = ground_height(b.x0 + 0.5f * b.w, b.z0 + 0.5f * b.d, seed);
    /* a door in the south wall always; the others by chance. North doors stay east of the stairs, west doors
     * between the stairs and the ramp (both 3 deep from their walls). */
    b.doors = 1u | (rng_u32(r) & 14u);
    b.door_at[0] = rng_float(r, 2.0f, b.w - 2.0f);
    b.door_at[1] = rng_float(r, WALL + FLIGHT_X + (float)STEPS * TREAD + 1.5f, b.w - 2.0f);
    b.door_at[2] = 0.5f * b.d;
    b.door_at[3] = rng_float(r, 2.0f, b.d - 2.0f);
    add_building(m, &b);
    return add_pad(pads, b.x0, b.z0, b.x0 + b.w, b.z0 + b.d, b.y);
}

/* A platform with stairs up its west side and a ramp down its east side. */
static int site_platform(mbuf* m, padlist* pads, rng* r, float ox, float oz, float span, uint32_t seed)
{
    const float h = rng_float(r, 2.0f, 4.5f);
    const int n = (int)(h / 0.3f) + 1; /* steps of at most 0.3 */
    const float run = (float)n * TREAD, ramp = h * 2.2f; /* 24.4 degrees */
    const float len = run + 6.0f + ramp;
    const float x0 = ox + rng_float(r, 0.0f, span - len), z0 = oz + rng_float(r, 0.0f, span - 6.0f);
    const float y = ground_height(x0 + 0.5f * len, z0 + 3.0f, seed);
    const float px0 = x0 + run, px1 = px0 + 6.0f, zc = z0 + 3.0f;
    add_box(m, px0, y - 0.5f, z0, px1, y + h, z0 + 6.0f);
    for (int s = 0; s < n; ++s)
        add_box(m, x0 + (float)s * TREAD, y - 0.1f, zc - 0.5f * FLIGHT_W, x0 + (float)(s + 1) * TREAD,
                y + h * (float)(s + 1) / (float)n, zc + 0.5f * FLIGHT_W);
    add_strip(m, px1, zc, y + h, px1 + ramp, zc, y, 0.0f, 0.5f * FLIGHT_W, SLAB);
    return add_pad(pads, x0, z0, x0 + len, z0 + 6.0f, y);
}

/* A field of pillars of various heights on the natural ground. */
static void site_pillars(mbuf* m, rng* r, float ox, float oz, float span, uint32_t seed)
{
    const int n = rng_int(r, 3, 5);
    const float gap = 5.0f, size = 1.2f;
    const float x0 = ox + rng_float(r, 0.0f, span - (float)(n - 1) * gap - size);
    const float z0 = oz + rng_float(r, 0.0f, span - (float)(n - 1) * gap - size);
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) {
            const float x = x0 + (float)i * gap, z = z0 + (float)j * gap;
            const float g = ground_height(x + 0.5f * size, z + 0.5f * size, seed);
            add_box(m, x, g - 1.5f, z, x + size, g + rng_float(r, 3.0f, 9.0f), z + size);
        }
    }
}

/* A bridge across a basin dug into the site (the natural hills are too smooth to offer valleys at this
 * scale): the deck runs from natural ground on one side to natural ground on the other, with railings and
 * piers down to the basin floor. 1 when no direction gave a deck under 24 degrees (the caller builds
 * something else). The basin reaches at most sqrt(16^2 + 12^2) + 3 = 23 units from the site centre. */
static int site_bridge(mbuf* m, padlist* pads, rng* r, float ox, float oz, uint32_t seed)
{
    pad b;
    memset(&b, 0, sizeof(b));
    b.basin = 1;
    b.cx = ox + 0.5f * SITE + rng_float(r, -3.0f, 3.0f);
    b.cz = oz + 0.5f * SITE + rng_float(r, -3.0f, 3.0f);
    b.half_len = rng_float(r, 11.0f, 16.0f);
    b.half_w = 12.0f;
    b.depth = rng_float(r, 4.0f, 7.0f);
    const float reach = b.half_len + 1.5f; /* the deck ends 1.5 beyond the basin, on natural ground */
    float ax = 0, az = 0, ay = 0, bx = 0, bz = 0, by = 0;
    int found = 0;
    for (int tries = 0; tries < 8 && !found; ++tries) {
        float dx = rng_float(r, -1.0f, 1.0f), dz = rng_float(r, -1.0f, 1.0f);
        const float dl = sqrtf(dx * dx + dz * dz);
        if (!(dl > 0.2f))
            continue;
        b.dx = dx / dl, b.dz = dz / dl;
        ax = b.cx - b.dx * reach, az = b.cz - b.dz * reach;
        bx = b.cx + b.dx * reach, bz = b.cz + b.dz * reach;
        ay = ground_height(ax, az, seed) + 0.05f, by = ground_height(bx, bz, seed) + 0.05f;
        found = ay - by < 0.45f * 2.0f * reach && by - ay < 0.45f * 2.0f * reach;
    }
    if (!found)
        return 1;
    const float ext = 0.75f; /* on into each hillside, so the ends meet the ground without a gap */
    const float len = 2.0f * reach, e = ext / len;
    const float sx = ax - (bx - ax) * e, sz = az - (bz - az) * e, sy = ay - (by - ay) * e;
    const float ex = bx + (bx - ax) * e, ez = bz + (bz - az) * e, ey = by + (by - ay) * e;
    add_strip(m, sx, sz, sy, ex, ez, ey, 0.0f, 2.0f, 0.6f);
    add_strip(m, sx, sz, sy + 1.1f, ex, ez, ey + 1.1f, -1.875f, 0.125f, 1.2f);
    add_strip(m, sx, sz, sy + 1.1f, ex, ez, ey + 1.1f, 1.875f, 0.125f, 1.2f);
    const int piers = (int)(len / 6.0f);
    for (int p = 1; p < piers; ++p) {
        const float t = (float)p / (float)piers;
        const float x = ax + (bx - ax) * t, z = az + (bz - az) * t, top = ay + (by - ay) * t - 0.6f;
        const float g = ground_height(x, z, seed) - basin_depth(&b, x, z);
        if (top - g > 1.5f)
            add_box(m, x - 0.5f, g - 1.0f, z - 0.5f, x + 0.5f, top, z + 0.5f);
    }
    const float rad = sqrtf(b.half_len * b.half_len + b.half_w * b.half_w) + 1.0f;
    b.x0 = b.cx - rad, b.x1 = b.cx + rad, b.z0 = b.cz - rad, b.z1 = b.cz + rad;
    return push_pad(pads, &b) == 0 ? 0 : -1;
}

static uint32_t isqrt64(uint64_t v)
{
    uint64_t r = 0;
    for (uint64_t bit = 1ull << 62; bit; bit >>= 2) {
        if (v >= r + bit) {
            v -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return (uint32_t)r;
}

void nb_world_get_landmarks(uint32_t seed, nb_world_landmarks* out)
{
    if (!out)
        return;
    const building b = first_building(seed);
    out->building_min[0] = b.x0, out->building_min[1] = b.y, out->building_min[2] = b.z0;
    out->building_max[0] = b.x0 + b.w, out->building_max[1] = b.y + (float)b.storeys * STOREY + 1.0f;
    out->building_max[2] = b.z0 + b.d;
    for (int k = 0; k < 3; ++k)
        out->floor_y[k] = b.y + (float)k * STOREY;
    out->ground[0] = b.x0 + b.door_at[0], out->ground[1] = b.y, out->ground[2] = b.z0 - 2.0f;
    out->upper[0] = b.x0 + 0.5f * b.w, out->upper[1] = b.y + 2.0f * STOREY, out->upper[2] = b.z0 + 0.5f * b.d;
}

int nb_world_generate(uint32_t seed, uint32_t target_triangles, nb_obj* out)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof(*out));
    if (target_triangles > MAX_TARGET)
        return -1;
    int rc = -1;
    mbuf m;
    padlist pads;
    memset(&m, 0, sizeof(m));
    memset(&pads, 0, sizeof(pads));
    float* pos = NULL;
    uint32_t* idx = NULL;

    /* world side: structures take about 7% of the triangles at this site density, terrain 2 per unit square */
    uint32_t side = isqrt64((uint64_t)target_triangles * 93u / 200u);
    if (side < 64)
        side = 64;
    const float size = (float)side;

    const building fb = first_building(seed);
    add_building(&m, &fb);
    if (add_pad(&pads, fb.x0, fb.z0, fb.x0 + fb.w, fb.z0 + fb.d, fb.y) != 0)
        goto cleanup;
    const int sites = (int)(size / SITE);
    const float span = SITE - 2.0f * SITE_IN;
    for (int sz = 0; sz < sites; ++sz) {
        for (int sx = 0; sx < sites; ++sx) {
            if (sx == 0 && sz == 0)
                continue; /* the first building's site */
            rng r = { hash3(sx, sz, seed ^ 0xa511e9b3u), 0 };
            const float ox = (float)sx * SITE + SITE_IN, oz = (float)sz * SITE + SITE_IN;
            const uint32_t kind = rng_u32(&r) % 100u;
            int err = 0;
            if (kind < 38)
                err = site_building(&m, &pads, &r, ox, oz, span, seed);
            else if (kind < 62) {
                err = site_bridge(&m, &pads, &r, (float)sx * SITE, (float)sz * SITE, seed);
                if (err == 1) {
                    site_pillars(&m, &r, ox, oz, span, seed);
                    err = 0;
                }
            } else if (kind < 82)
                err = site_platform(&m, &pads, &r, ox, oz, span, seed);
            else if (kind < 94)
                site_pillars(&m, &r, ox, oz, span, seed);
            if (err)
                goto cleanup;
        }
    }
    if (m.oom)
        goto cleanup;

    /* the terrain takes what the structures left of the target: q x q quads over the same side */
    uint32_t q = 32;
    if (target_triangles > m.nt + 2u * 32u * 32u)
        q = isqrt64((uint64_t)(target_triangles - m.nt) / 2u);
    if (q > 8 * side)
        q = 8 * side;
    const uint64_t tverts = (uint64_t)(q + 1) * (q + 1), ttris = (uint64_t)q * q * 2;
    const uint64_t nverts = tverts + m.nv, ntris = ttris + m.nt;
    pos = (float*)malloc((size_t)nverts * 3 * sizeof(float));
    idx = (uint32_t*)malloc((size_t)ntris * 3 * sizeof(uint32_t));
    if (!pos || !idx)
        goto cleanup;
    for (uint32_t j = 0; j <= q; ++j) {
        for (uint32_t i = 0; i <= q; ++i) {
            const float x = i == q ? size : size * (float)i / (float)q;
            const float z = j == q ? size : size * (float)j / (float)q;
            float* p = &pos[((size_t)j * (q + 1) + i) * 3];
            p[0] = x;
            p[1] = ground_height(x, z, seed);
            p[2] = z;
        }
    }
    /* ground shapes: only the vertices in each one's box are visited; shapes never overlap (each keeps to its
     * site) */
    const float per = (float)q / size;
    for (uint32_t k = 0; k < pads.n; ++k) {
        const pad* pd = &pads.p[k];
        const float reach = pd->basin ? 0.0f : PAD_FLAT + PAD_BLEND;
        const float fi0 = (pd->x0 - reach) * per, fi1 = (pd->x1 + reach) * per + 1.0f;
        const float fj0 = (pd->z0 - reach) * per, fj1 = (pd->z1 + reach) * per + 1.0f;
        const uint32_t i0 = fi0 > 0.0f ? (uint32_t)fi0 : 0, j0 = fj0 > 0.0f ? (uint32_t)fj0 : 0;
        const uint32_t i1 = fi1 < (float)q ? (uint32_t)fi1 : q, j1 = fj1 < (float)q ? (uint32_t)fj1 : q;
        for (uint32_t j = j0; j <= j1; ++j) {
            for (uint32_t i = i0; i <= i1; ++i) {
                float* p = &pos[((size_t)j * (q + 1) + i) * 3];
                p[1] = shape_ground(pd, p[0], p[2], p[1]);
            }
        }
    }
    size_t t = 0;
    for (uint32_t j = 0; j < q; ++j) {
        for (uint32_t i = 0; i < q; ++i) {
            const uint32_t v00 = j * (q + 1) + i, v10 = v00 + 1, v01 = v00 + q + 1, v11 = v01 + 1;
            /* checkerboard diagonals; both windings face +y */
            const uint32_t quad[2][6] = { { v00, v01, v10, v10, v01, v11 }, { v00, v01, v11, v00, v11, v10 } };
            memcpy(&idx[t], quad[(i + j) & 1], sizeof(quad[0]));
            t += 6;
        }
    }
    if (m.nv)
        memcpy(&pos[tverts * 3], m.pos, (size_t)m.nv * 3 * sizeof(float));
    for (uint32_t k = 0; k < m.nt * 3; ++k)
        idx[t + k] = m.idx[k] + (uint32_t)tverts;
    out->positions = pos;
    out->vertex_count = (uint32_t)nverts;
    out->indices = idx;
    out->triangle_count = (uint32_t)ntris;
    pos = NULL;
    idx = NULL;
    rc = 0;
cleanup:
    free(pos);
    free(idx);
    free(m.pos);
    free(m.idx);
    free(pads.p);
    return rc;
}
