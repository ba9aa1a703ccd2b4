/**
 * NavMesh: a baked or loaded navigation mesh in the main thread's wasm memory, with its queries. "No path" and
 * "nothing near" are ordinary outcomes (a status, or null); bad input and use after dispose() throw NavBakeError.
 */
import { NavBakeError } from './errors.js';
import { mainWasm } from './runtime.js';
import {
  PATH_STATUS,
  type PathBatch,
  type PathStatus,
  type PolygonInfo,
  type QueryFilter,
  type SurfaceGeometry,
  type Vec3,
  type Wasm,
} from './wasm.js';

/** A point: [x, y, z], a Float32Array, or anything with x, y, z (a three.js Vector3). */
export type Vec3Like = ArrayLike<number> | { readonly x: number; readonly y: number; readonly z: number };

export interface QueryOptions {
  /** Half size of the box searched around a point for the nearest polygon [world]. @default [2, 4, 2] */
  halfExtents?: Vec3Like;
  /** Which polygons may be used and what areas cost. @default every polygon, every area costs 1 */
  filter?: QueryFilter;
}

export interface PathOptions extends QueryOptions {
  /** Extra path points: where the path enters another area, or at every polygon edge. @default 'none' */
  crossings?: 'none' | 'area' | 'all';
}

export interface PathResult {
  /** complete: reaches the end; partial: ends at the reachable point closest to it; none: no polygon near an end. */
  status: PathStatus;
  /** xyz per point, start and end included (empty when status is 'none'). */
  points: Float32Array;
  /** Length of the path [world]. */
  length: number;
}

export interface RaycastResult {
  /** true when a wall stops the ray before end */
  hit: boolean;
  /** fraction of start..end walked before the wall (1 when no hit) */
  t: number;
  /** where the ray stops */
  point: Vec3;
  /** normal of the wall hit (xz), [0, 0, 0] when no hit */
  normal: Vec3;
}

export interface WallDistance {
  /** distance to the nearest wall, maxRadius when none is closer */
  distance: number;
  /** nearest point on the wall */
  point: Vec3;
  /** normal of that wall (xz) */
  normal: Vec3;
}

export interface RandomPointOptions {
  /** Restart the random sequence from this seed first. */
  seed?: number | bigint;
  /** Pick within radius of center (over connected polygons) instead of anywhere. */
  center?: Vec3Like;
  /** @default 1 */
  radius?: number;
  halfExtents?: Vec3Like;
  filter?: QueryFilter;
}

export const DEFAULT_HALF_EXTENTS: Readonly<Vec3> = Object.freeze([2, 4, 2]) as Readonly<Vec3>;

const CROSSINGS = { none: 0, area: 1, all: 2 } as const;

/** Wasm objects of one navmesh; also what the FinalizationRegistry frees when a NavMesh is forgotten. */
interface Handle {
  w: Wasm;
  nav: number;
  query: number;
  filter: number;
}

let live = 0;

/** @internal navmeshes whose wasm memory is not freed yet (tests of the FinalizationRegistry) */
export function liveNavMeshes(): number {
  return live;
}

function release(h: Handle): void {
  if (h.nav) live--;
  if (h.filter) h.w.filterDestroy(h.filter);
  if (h.query) h.w.queryDestroy(h.query);
  if (h.nav) h.w.destroyNavmesh(h.nav);
  h.filter = h.query = h.nav = 0;
}

const registry = new FinalizationRegistry<Handle>(release);

const ADOPT = Symbol('adopt');

function vec(v: Vec3Like): ArrayLike<number> {
  return typeof (v as ArrayLike<number>).length === 'number'
    ? (v as ArrayLike<number>)
    : [(v as { x: number }).x, (v as { y: number }).y, (v as { z: number }).z];
}

function seedOf(seed: number | bigint): bigint {
  return BigInt.asUintN(64, typeof seed === 'bigint' ? seed : BigInt(Math.trunc(seed)));
}

export class NavMesh {
  #h: Handle | null;
  #rng = 0n;

  /** @internal use bake() or NavMesh.load() */
  constructor(token: typeof ADOPT, w: Wasm, nav: number) {
    if (token !== ADOPT) throw new TypeError('NavMesh: use bake() or NavMesh.load()');
    this.#h = { w, nav, query: 0, filter: 0 };
    live++;
    registry.register(this, this.#h, this);
  }

  /** Loads bytes written by save() (or the native tool). Rejects with NB_ERR_CORRUPT / NB_ERR_VERSION. */
  static async load(bytes: Uint8Array | ArrayBuffer): Promise<NavMesh> {
    const w = await mainWasm();
    const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    return new NavMesh(ADOPT, w, w.load(data));
  }

  /** true once dispose() ran */
  get disposed(): boolean {
    return this.#h === null;
  }

  /** Number of tiles (1 for a solo bake with polygons). */
  get tileCount(): number {
    const h = this.#live();
    return h.w.tileCount(h.nav);
  }

  /** Frees the wasm memory. Idempotent; any later call throws NavBakeError NB_ERR_DISPOSED. */
  dispose(): void {
    const h = this.#h;
    if (!h) return;
    this.#h = null;
    registry.unregister(this);
    release(h);
  }

  /** The navmesh as bytes (tiles sorted: the same navmesh always gives the same bytes). */
  save(): Uint8Array {
    const h = this.#live();
    return h.w.save(h.nav);
  }

  /** Shortest path from start to end over the surface (A* + string pulling). */
  findPath(start: Vec3Like, end: Vec3Like, opts: PathOptions = {}): PathResult {
    const s = vec(start);
    const e = vec(end);
    const pair = new Float32Array([s[0], s[1], s[2], e[0], e[1], e[2]]);
    const b = this.findPaths(pair, opts);
    return { status: PATH_STATUS[b.status[0]] ?? 'none', points: b.points, length: b.lengths[0] };
  }

  /**
   * Many paths in one call: pairs holds n x (start xyz, end xyz). Status per pair is 0 none, 1 partial,
   * 2 complete (PATH_STATUS names them); pair i's points are points[3 * offsets[i] .. 3 * offsets[i + 1]].
   */
  findPaths(pairs: Float32Array, opts: PathOptions = {}): PathBatch {
    const crossings = CROSSINGS[opts.crossings ?? 'none'];
    if (crossings === undefined) {
      throw new NavBakeError('NB_ERR_INVALID_ARG', `navbake: crossings must be none, area or all (got ${opts.crossings})`);
    }
    if (pairs.length % 6 !== 0) {
      throw new NavBakeError('NB_ERR_INVALID_ARG', `navbake: pairs must hold 6 floats per pair (got ${pairs.length})`);
    }
    return this.#query(opts, (w, q, f, half) => w.findPaths(q, f, pairs, half, crossings));
  }

  /** The closest point on the nearest polygon within halfExtents of p, or null. */
  nearestPoint(p: Vec3Like, opts: QueryOptions = {}): { point: Vec3; ref: number } | null {
    return this.#query(opts, (w, q, f, half) => w.findNearest(q, f, vec(p), half));
  }

  /** Walks a straight line over the surface from start toward end; null when start is not on the navmesh. */
  raycast(start: Vec3Like, end: Vec3Like, opts: QueryOptions = {}): RaycastResult | null {
    return this.#query(opts, (w, q, f, half) => {
      const s = vec(start);
      const e = vec(end);
      const from = w.findNearest(q, f, s, half);
      if (!from) return null;
      const r = w.raycast(q, f, from.ref, s, e);
      const t = Math.min(Math.max(r.t, 0), 1);
      const point: Vec3 = [s[0] + (e[0] - s[0]) * t, s[1] + (e[1] - s[1]) * t, s[2] + (e[2] - s[2]) * t];
      return { hit: r.t < 1, t: r.t, point, normal: r.normal };
    });
  }

  /**
   * A random point on the surface (area-weighted), or within radius of center. Deterministic: the sequence
   * starts from seed 0 and continues from call to call; opts.seed (or seedRandom) restarts it.
   * null when the navmesh is empty (or center is not on it).
   */
  randomPoint(opts: RandomPointOptions = {}): Vec3 | null {
    if (opts.seed !== undefined) this.seedRandom(opts.seed);
    return this.#query(opts, (w, q, f, half) => {
      let around;
      if (opts.center !== undefined) {
        const c = vec(opts.center);
        const from = w.findNearest(q, f, c, half);
        if (!from) return null;
        around = { ref: from.ref, center: c, radius: opts.radius ?? 1 };
      }
      const r = w.randomPoint(q, f, this.#rng, around);
      this.#rng = r.rng;
      return r.ref ? r.point : null;
    });
  }

  /** Restarts randomPoint's sequence. */
  seedRandom(seed: number | bigint): void {
    this.#live();
    this.#rng = seedOf(seed);
  }

  /** Moves from start toward end along the surface, sliding along walls; where it stops, or null off the mesh. */
  moveAlong(start: Vec3Like, end: Vec3Like, opts: QueryOptions = {}): Vec3 | null {
    return this.#query(opts, (w, q, f, half) => {
      const s = vec(start);
      const from = w.findNearest(q, f, s, half);
      return from ? w.moveAlong(q, f, from.ref, s, vec(end)) : null;
    });
  }

  /** Distance from center to the nearest wall within maxRadius; null when center is not on the navmesh. */
  distanceToWall(center: Vec3Like, maxRadius: number, opts: QueryOptions = {}): WallDistance | null {
    return this.#query(opts, (w, q, f, half) => {
      const c = vec(center);
      const from = w.findNearest(q, f, c, half);
      return from ? w.distanceToWall(q, f, from.ref, c, maxRadius) : null;
    });
  }

  /** Every polygon: vertices (xyz), area id, flags; off-mesh links have two vertices (their ends). */
  polygons(): PolygonInfo[] {
    const h = this.#live();
    return h.w.polygons(h.nav);
  }

  /** Changes a polygon's flags (e.g. close a door: queries whose filter excludes the flag avoid it). */
  setPolygonFlags(ref: number, flags: number): void {
    const h = this.#live();
    h.w.setPolygonFlags(h.nav, ref, flags);
  }

  /** The walkable surface (detail triangles) as indexed triangles, e.g. for a three.js BufferGeometry. */
  toGeometry(): SurfaceGeometry {
    const h = this.#live();
    return h.w.detailTriangles(h.nav);
  }

  #live(): Handle {
    const h = this.#h;
    if (!h) throw new NavBakeError('NB_ERR_DISPOSED', 'navbake: this NavMesh was disposed');
    return h;
  }

  #query<T>(opts: QueryOptions, fn: (w: Wasm, q: number, filter: number, half: ArrayLike<number>) => T): T {
    const h = this.#live();
    if (!h.query) h.query = h.w.queryCreate(h.nav);
    const half = opts.halfExtents ? vec(opts.halfExtents) : DEFAULT_HALF_EXTENTS;
    if (!opts.filter) {
      if (!h.filter) h.filter = h.w.filterCreate();
      return fn(h.w, h.query, h.filter, half);
    }
    const f = h.w.filterCreate(opts.filter);
    try {
      return fn(h.w, h.query, f, half);
    } finally {
      h.w.filterDestroy(f);
    }
  }
}

/** @internal wraps a navmesh pointer of the main thread's wasm (bake()) */
export function adoptNavmesh(w: Wasm, nav: number): NavMesh {
  return new NavMesh(ADOPT, w, nav);
}
