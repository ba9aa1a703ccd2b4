/**
 * Area volumes (bake-time volumes and live obstacles) and off-mesh links: the user's shapes, validated and turned
 * into the plain, structured-cloneable form that crosses to the workers and that wasm.ts writes into the heap as
 * C structs (nb_volume, nb_offmesh_link). Bounds are computed in float32 exactly as C's nb_volume_bounds does, so
 * the tiles an obstacle dirties here are the tiles C would dirty.
 */
import { allocate, bool, f32, intIn, invalid, knownKeys, lengthOf, shown, vec3 } from './args.js';
import type { Vec3Like } from './navmesh.js';

/** An axis-aligned box: the walkable spans whose floor lies inside get `area`. */
export interface BoxVolume {
  type: 'box';
  /** the box's minimum corner [world] */
  min: Vec3Like;
  /** its maximum corner [world], >= min on each axis */
  max: Vec3Like;
  /** 0 carves the surface away (a no-go zone, an obstacle); 1..63 marks an area (costs in QueryFilter). @default 0 */
  area?: number | undefined;
}

/** A vertical cylinder standing on `center` (the centre of its base). */
export interface CylinderVolume {
  type: 'cylinder';
  /** the centre of its base [world] */
  center: Vec3Like;
  /** [world], >= 0 */
  radius: number;
  /** from the base up [world], >= 0 */
  height: number;
  /** 0 carves the surface away, 1..63 marks an area. @default 0 (carve) */
  area?: number | undefined;
}

/**
 * A vertical prism: a polygon in xz between minY and maxY. Despite the name any simple polygon works, convex or
 * not (inside is decided by the even-odd rule, which also settles a self-crossing one); points all in a line
 * enclose nothing and mark nothing.
 */
export interface ConvexVolume {
  type: 'convex';
  /** the polygon's corners, each [x, z], [x, y, z] (y ignored) or { x, z } */
  points: ReadonlyArray<ArrayLike<number> | { readonly x: number; readonly z: number }>;
  /** bottom of the prism [world] */
  minY: number;
  /** top of the prism [world], >= minY */
  maxY: number;
  /** 0 carves the surface away, 1..63 marks an area. @default 0 (carve) */
  area?: number | undefined;
}

/** An area volume or obstacle: a box, a cylinder or a prism over a polygon, told apart by `type`. */
export type Volume = BoxVolume | CylinderVolume | ConvexVolume;

/** An off-mesh connection (a jump, a ladder, a teleporter) that paths may take. */
export interface OffMeshLink {
  /** where the link starts [world]: the tile holding it stores the link */
  start: Vec3Like;
  /** where it ends [world] */
  end: Vec3Like;
  /** each end attaches to the nearest polygon within this distance (xz) [world], > 0 */
  radius: number;
  /** also usable from end to start. @default false */
  bidirectional?: boolean | undefined;
  /** area id 1..63 (its cost in QueryFilter.areaCost). @default 63 */
  area?: number | undefined;
  /** polygon flags for includeFlags / excludeFlags, 1..0xffff. @default 1 */
  flags?: number | undefined;
  /** yours to identify the link by, 0..2^32-1. @default 0 */
  userId?: number | undefined;
}

/** nb_volume_type */
export const VOLUME_BOX = 1;
export const VOLUME_CYLINDER = 2;
export const VOLUME_CONVEX = 3;

/** A validated volume, in float32 like C: the nb_volume fields it uses and its xz bounds. */
export interface VolumeData {
  type: 1 | 2 | 3;
  area: number;
  /** box: bmin xyz, bmax xyz; cylinder: center xyz, radius, height; convex: ymin, ymax */
  f: number[];
  /** convex: the corners as xyz triples (y 0) */
  points: Float32Array | null;
  /** xz bounds as C's nb_volume_bounds gives them: lo x, lo z, hi x, hi z */
  bounds: [number, number, number, number];
}

/** nb_offmesh_link, 36 bytes each, little-endian (written straight into the wasm heap). */
export const LINK_SIZE = 36;

const min32 = (a: number, b: number) => (a < b ? a : b);
const max32 = (a: number, b: number) => (a > b ? a : b);

const VOLUME_FIELDS = {
  box: ['type', 'min', 'max', 'area'],
  cylinder: ['type', 'center', 'radius', 'height', 'area'],
  convex: ['type', 'points', 'minY', 'maxY', 'area'],
} as const;
const LINK_FIELDS = ['start', 'end', 'radius', 'bidirectional', 'area', 'flags', 'userId'];

/** Validates one volume; `where` names it in messages ("geometry.volumes[2]"). */
export function volumeData(where: string, v: Volume): VolumeData {
  if (v === null || typeof v !== 'object') throw invalid(`${where} must be a volume object`);
  // a misspelt field would otherwise take its default (areaId: 5 carving with area 0)
  const fields = Object.hasOwn(VOLUME_FIELDS, v.type) ? VOLUME_FIELDS[v.type as keyof typeof VOLUME_FIELDS] : null;
  if (fields) knownKeys(where, v, fields, 'field');
  const area = v.area === undefined ? 0 : intIn(`${where}.area`, v.area, 0, 63);
  switch (v.type) {
    case 'box': {
      const lo = vec3(`${where}.min`, v.min);
      const hi = vec3(`${where}.max`, v.max);
      for (let k = 0; k < 3; k++) {
        if (lo[k] > hi[k]) throw invalid(`${where}.min.${'xyz'[k]} (${lo[k]}) > max.${'xyz'[k]} (${hi[k]})`);
      }
      return { type: VOLUME_BOX, area, f: [...lo, ...hi], points: null, bounds: [lo[0], lo[2], hi[0], hi[2]] };
    }
    case 'cylinder': {
      const c = vec3(`${where}.center`, v.center);
      const r = f32(`${where}.radius`, v.radius);
      const h = f32(`${where}.height`, v.height);
      if (r < 0) throw invalid(`${where}.radius must be >= 0 (got ${r})`);
      if (h < 0) throw invalid(`${where}.height must be >= 0 (got ${h})`);
      const fr = Math.fround;
      return {
        type: VOLUME_CYLINDER,
        area,
        f: [...c, r, h],
        points: null,
        bounds: [fr(c[0] - r), fr(c[2] - r), fr(c[0] + r), fr(c[2] + r)],
      };
    }
    case 'convex': {
      const pts = v.points;
      if (!pts || typeof pts !== 'object' || typeof pts.length !== 'number') {
        throw invalid(`${where}.points must be an array of [x, z] or [x, y, z] points`);
      }
      const np = lengthOf(`${where}.points`, pts);
      if (np < 3) throw invalid(`${where}.points needs at least 3 points (got ${np})`);
      const points = allocate(`${where}.points`, np * 3, (n) => new Float32Array(n));
      for (let i = 0; i < np; i++) {
        const p = pts[i] as ArrayLike<number> & { x?: number; z?: number };
        const at = `${where}.points[${i}]`;
        if (p === null || typeof p !== 'object') throw invalid(`${at} must be [x, z], [x, y, z] or { x, z }`);
        let x: number, z: number;
        if (typeof p.length === 'number') {
          if (p.length !== 2 && p.length !== 3) throw invalid(`${at} must have 2 (x, z) or 3 (x, y, z) numbers (got ${p.length})`);
          x = f32(`${at}[0]`, p[0]);
          z = f32(`${at}[${p.length - 1}]`, p[p.length - 1]);
        } else {
          x = f32(`${at}.x`, p.x);
          z = f32(`${at}.z`, p.z);
        }
        points[i * 3] = x;
        points[i * 3 + 2] = z;
      }
      const y0 = f32(`${where}.minY`, v.minY);
      const y1 = f32(`${where}.maxY`, v.maxY);
      if (y0 > y1) throw invalid(`${where}.minY (${y0}) > maxY (${y1})`);
      const b: [number, number, number, number] = [points[0], points[2], points[0], points[2]];
      for (let i = 0; i < np; i++) {
        b[0] = min32(b[0], points[i * 3]);
        b[1] = min32(b[1], points[i * 3 + 2]);
        b[2] = max32(b[2], points[i * 3]);
        b[3] = max32(b[3], points[i * 3 + 2]);
      }
      return { type: VOLUME_CONVEX, area, f: [y0, y1], points, bounds: b };
    }
    default:
      throw invalid(`${where}.type must be 'box', 'cylinder' or 'convex' (got ${shown((v as { type?: unknown }).type)})`);
  }
}

export function volumesData(where: string, list: readonly Volume[] | undefined | null): VolumeData[] {
  if (list == null) return [];
  if (typeof list !== 'object' || typeof list.length !== 'number') throw invalid(`${where} must be an array of volumes`);
  return Array.from({ length: lengthOf(where, list) }, (_, i) => volumeData(`${where}[${i}]`, list[i]));
}

/** Validates links and packs them as nb_offmesh_link structs (null when there are none). */
export function linksData(where: string, list: readonly OffMeshLink[] | undefined | null): Uint8Array | null {
  if (list == null || list.length === 0) return null;
  if (typeof list !== 'object' || typeof list.length !== 'number') throw invalid(`${where} must be an array of links`);
  const nl = lengthOf(where, list);
  const out = allocate(where, nl * LINK_SIZE, (n) => new Uint8Array(n));
  const dv = new DataView(out.buffer);
  for (let i = 0; i < nl; i++) {
    const l = list[i];
    const at = `${where}[${i}]`;
    if (l === null || typeof l !== 'object') throw invalid(`${at} must be a link object`);
    knownKeys(at, l, LINK_FIELDS, 'field');
    const s = vec3(`${at}.start`, l.start);
    const e = vec3(`${at}.end`, l.end);
    const r = f32(`${at}.radius`, l.radius);
    if (!(r > 0)) throw invalid(`${at}.radius must be > 0 (got ${r})`);
    const flags = l.flags === undefined ? 1 : intIn(`${at}.flags`, l.flags, 1, 0xffff);
    const area = l.area === undefined ? 63 : intIn(`${at}.area`, l.area, 1, 63);
    bool(`${at}.bidirectional`, l.bidirectional);
    const user = l.userId === undefined ? 0 : intIn(`${at}.userId`, l.userId, 0, 0xffffffff);
    const o = i * LINK_SIZE;
    [...s, ...e, r].forEach((v, k) => dv.setFloat32(o + 4 * k, v, true));
    dv.setUint16(o + 28, flags, true);
    dv.setUint8(o + 30, area);
    dv.setUint8(o + 31, l.bidirectional ? 1 : 0);
    dv.setUint32(o + 32, user, true);
  }
  return out;
}

/** Whether a volume's xz bounds overlap a box (lo x, lo z, hi x, hi z), edges included (as C tests). */
export function overlapsXZ(b: readonly number[], box: ArrayLike<number>): boolean {
  return b[0] <= box[2] && b[2] >= box[0] && b[1] <= box[3] && b[3] >= box[1];
}
