/**
 * NavMesh: a baked or loaded navigation mesh in the main thread's wasm memory, with its queries. "No path" and
 * "nothing near" are ordinary outcomes (a status, or null); bad input and use after dispose() throw NavBakeError.
 */
import { abortSignal, allocate, bool, bytes as bytesOf, f32, lengthOf, MAX_COORD, notDetached, intIn, invalid, knownKeys, num, numericArray, optionsObject, queryPoint, shown, vec3, workerCount } from './args.js';
import { abortReason, NavBakeError } from './errors.js';
import type { ObstacleUpdate, TileCaches, UpdateOptions } from './obstacles.js';
import { defaultWorkerCount, workersAvailable } from './pool.js';
import { findPathsInWorkers, newReplicaId, replicaDisposed } from './replica.js';
import { mainWasm } from './runtime.js';
import { copyOf, keepSpares } from './spare.js';
import type { Volume } from './volumes.js';
import {
  blobTile,
  PATH_STATUS,
  type OffMeshLinkInfo,
  type PathBatch,
  type PathDetails,
  type PathStatus,
  type PolygonInfo,
  type QueryFilter,
  type QueryObjects,
  type SurfaceGeometry,
  type Vec3,
  type Wasm,
} from './wasm.js';

/** A point: [x, y, z], a Float32Array, or anything with x, y, z (a three.js Vector3). */
export type Vec3Like = ArrayLike<number> | { readonly x: number; readonly y: number; readonly z: number };

/** Options of every query: how a point finds its polygon, and which polygons count. */
export interface QueryOptions {
  /** Half size of the box searched around a point for the nearest polygon [world]. @default [2, 4, 2] */
  halfExtents?: Vec3Like | undefined;
  /** Which polygons may be used and what areas cost. @default every polygon, every area costs 1 */
  filter?: QueryFilter | undefined;
}

/** findPath's options. */
export interface PathOptions extends QueryOptions {
  /** Extra path points: where the path enters another area, or at every polygon edge. @default 'none' */
  crossings?: 'none' | 'area' | 'all' | undefined;
  /**
   * At most this many search nodes for each path (about one per polygon visited; integer 1..4194304): a search
   * that runs out stops with status 'partial', at the visited polygon nearest to the end, as Detour's does. It
   * bounds what a path to an unreachable end costs: without it the search visits every polygon it can reach
   * before it says 'partial' (about 2 ms on 10,000 polygons, 15 ms on 70,000).
   * @default enough for every polygon of the navmesh: the search never runs out
   */
  maxNodes?: number | undefined;
}

/** findPaths' options. */
export interface PathsOptions extends PathOptions {
  /**
   * Also return pointFlags and pointRefs for every point of every path (as findPath does for one), to find where
   * paths take off-mesh links. @default false
   */
  details?: boolean | undefined;
}

/** findPathsAsync's options. */
export interface PathsAsyncOptions extends PathsOptions {
  /**
   * Workers to share the pairs out over (1..64; each takes at least 64 pairs), from the pool bake() uses; `false`
   * runs findPaths on the calling thread. @default {@link defaultWorkerCount}(): min(4, hardware threads - 1), at least 1
   */
  workers?: number | false | undefined;
  /** Aborting rejects with the signal's reason at once; the workers still on their shares are stopped (and replaced
   * when work comes), as an aborted bake's are. */
  signal?: AbortSignal | undefined;
}

/** findPath's result: the path's points, with each point's flags and polygon (see {@link PathDetails}). */
export interface PathResult extends PathDetails {
  /** complete: reaches the end; partial: ends at the reachable point closest to it; none: no polygon near an end. */
  status: PathStatus;
  /**
   * The search ran out of nodes (options.maxNodes) before it ended: a 'partial' path might reach further with more,
   * a 'complete' one might be shorter. False when the search ended on its own ('partial': the end is out of reach).
   */
  exhausted: boolean;
  /** xyz per point, start and end included (empty when status is 'none'). */
  points: Float32Array<ArrayBuffer>;
  /** Length of the path [world]. */
  length: number;
}

/**
 * raycast's result: how far a straight walk over the surface got. The walk is in xz, as Detour's raycast: start's
 * height picks the polygon it starts on, end's height is not used. Where floors stack, a walk on the ground can
 * pass under a bridge and reach end's x and z below it without a hit: compare `point[1]` with end's height (or
 * use findPath) where that matters.
 */
export interface RaycastResult {
  /** true when a wall stops the ray before end's x and z */
  hit: boolean;
  /** fraction of start..end walked before the wall (1 when no hit) */
  t: number;
  /** where the ray stops: x and z on the segment, y the height of the surface walked there */
  point: Vec3;
  /** normal of the wall hit (xz), [0, 0, 0] when no hit */
  normal: Vec3;
}

/** distanceToWall's result. When no wall lies within maxRadius: distance is maxRadius, point the centre, normal [0, 0, 0]. */
export interface WallDistance {
  /** distance to the nearest wall, maxRadius when none is closer */
  distance: number;
  /** nearest point on the wall; the centre itself when no wall is within maxRadius */
  point: Vec3;
  /** normal of that wall (xz, pointing from the wall toward the centre); [0, 0, 0] when no wall is within maxRadius */
  normal: Vec3;
}

/** randomPoint's options. */
export interface RandomPointOptions {
  /** Restart the random sequence from this seed first: an integer 0..2^53-1 or a bigint 0..2^64-1. */
  seed?: number | bigint | undefined;
  /** Pick within radius of center (over connected polygons) instead of anywhere. */
  center?: Vec3Like | undefined;
  /** With center only. @default 1 */
  radius?: number | undefined;
  /** Half size of the box searched around center for its polygon [world] (center only). @default [2, 4, 2] */
  halfExtents?: Vec3Like | undefined;
  /** Which polygons may be picked. @default every polygon */
  filter?: QueryFilter | undefined;
}

/** The tile grid of a navmesh: where tile (0, 0) starts and how big a tile is. */
export interface NavMeshParams {
  /** world position of tile (0, 0)'s minimum corner */
  origin: Vec3;
  /** tile size along x [world] */
  tileWidth: number;
  /** tile size along z [world] (a tiled bake's tiles are square: tileWidth; a solo bake's one tile is the level's bounds) */
  tileDepth: number;
  /** most tiles the navmesh holds at once, 1..4095 */
  maxTiles: number;
}

/** One tile of a navmesh. */
export interface TileInfo {
  /** the tile's column in the grid (tile x spans origin[0] + x * tileWidth onward) */
  x: number;
  /** the tile's row in the grid (along z) */
  z: number;
  /** polygons of the tile, off-mesh link polygons included */
  polygons: number;
}

/** A tile record of a saved navmesh file (see {@link NavMesh.readTiles}). */
export interface TileRecord {
  /** the tile's column in the grid */
  x: number;
  /** the tile's row in the grid (along z) */
  z: number;
  /** the tile blob, for {@link NavMesh.loadTile} (a view into the file's bytes) */
  bytes: Uint8Array;
}

/** The queries' default halfExtents, [2, 4, 2] [world]. Frozen. */
export const DEFAULT_HALF_EXTENTS: Readonly<Vec3> = Object.freeze([2, 4, 2]) as Readonly<Vec3>;

const CROSSINGS = { none: 0, area: 1, all: 2 } as const;

/** Wasm objects of one navmesh; also what the FinalizationRegistry frees when a NavMesh is forgotten. */
interface Handle extends QueryObjects {
  w: Wasm;
  nav: number;
  /** the id of this navmesh's copies in workers (findPathsAsync), 0 until it has any */
  replica: number;
}

/** The smallest node pool a query gets; C's default. */
const MIN_QUERY_NODES = 2048;
/** The largest one C makes (QUERY_MAX_NODES). */
const MAX_QUERY_NODES = 1 << 22;

/**
 * Search nodes for a navmesh of `polygons` polygons in `tiles` tiles (a power of two, at least 2048): one per polygon
 * is what an A* search needs never to run out, so that a path between connected points always comes back complete;
 * with several tiles, a second per polygon lets one on a tile border keep a node for each side it is entered
 * across, which keeps tiled paths as short as solo ones. (A bigger pool than needed only spreads the search's hash
 * over more memory.)
 */
export function queryNodesFor(polygons: number, tiles: number): number {
  const want = tiles > 1 ? 2 * polygons : polygons;
  let n = MIN_QUERY_NODES;
  while (n < want) n *= 2;
  return n;
}

let live = 0;

/** @internal navmeshes whose wasm memory is not freed yet (tests of the FinalizationRegistry) */
export function liveNavMeshes(): number {
  return live;
}

function release(h: Handle): void {
  if (h.nav) live--;
  h.w.queryObjectsFree(h);
  if (h.nav) h.w.destroyNavmesh(h.nav);
  if (h.replica) replicaDisposed(h.replica);
  h.nav = h.replica = 0;
}

const registry = new FinalizationRegistry<Handle>(release);

const ADOPT = Symbol('adopt');

/** Messages name the method and the argument: "navbake: NavMesh.findPath: start". */
const at = (method: string, arg: string) => `navbake: NavMesh.${method}: ${arg}`;

/** A 64-bit seed: an integer 0..2^53-1, or a bigint 0..2^64-1 (a fraction such as Math.random() would truncate to 0). */
function seedOf(where: string, seed: unknown): bigint {
  if (typeof seed === 'bigint') {
    if (seed < 0n || seed > 0xffffffffffffffffn) throw invalid(`${where} must be 0..2^64-1 as a bigint (got ${seed}n)`);
    return seed;
  }
  const n = num(where, seed); // a number, finite (NB_ERR_NONFINITE otherwise)
  if (!Number.isSafeInteger(n) || n < 0) throw invalid(`${where} must be an integer 0..2^53-1 or a bigint 0..2^64-1 (got ${n})`);
  return BigInt(n);
}

/** A size that must be > 0 (C refuses the rest, naming its own parameter). */
function positive(where: string, v: number): number {
  if (!(v > 0)) throw invalid(`${where} must be > 0 (got ${v})`);
  return v;
}

const QUERY_OPTIONS = ['halfExtents', 'filter'] as const;

/** findPath(s)'s options, checked, and C's crossings option. */
function pathOptions<T extends PathOptions>(method: string, opts: T | null | undefined, keys: readonly string[] = PATH_OPTIONS): [T, number] {
  const o = optionsObject<T>(at(method, 'options'), opts, keys);
  const name = o.crossings ?? 'none';
  const crossings = Object.hasOwn(CROSSINGS, name) ? CROSSINGS[name] : undefined; // not 'toString'
  if (crossings === undefined) throw invalid(`${at(method, 'options.crossings')} must be 'none', 'area' or 'all' (got ${shown(o.crossings)})`);
  return [o, crossings];
}
const PATH_OPTIONS = [...QUERY_OPTIONS, 'crossings', 'maxNodes'] as const;

/** findPaths' pairs checked: a Float32Array as it is, other arrays copied into one; 6 finite floats a pair. */
function pathPairs(method: string, pairs: Float32Array | ArrayLike<number>): Float32Array {
  const where = at(method, 'pairs');
  const p = pairs instanceof Float32Array ? notDetached(where, pairs) : numericArray(where, pairs, (n) => new Float32Array(n), () => true, 'a number');
  if (p.length % 6 !== 0) throw invalid(`${where} must hold 6 floats per pair (got ${p.length})`);
  for (let i = 0; i < p.length; i++) {
    if (!Number.isFinite(p[i]) || Math.abs(p[i]!) > MAX_COORD) {
      const what = `pair ${Math.floor(i / 6)}'s ${i % 6 < 3 ? 'start' : 'end'} ${'xyz'[i % 3]}`;
      const x = pairs[i] as number; // as given: 1e300 in a Float64Array is a finite number too large, not Infinity
      if (!Number.isFinite(x)) throw new NavBakeError('NB_ERR_NONFINITE', `${where}[${i}] (${what}) must be finite (got ${x})`);
      throw new NavBakeError('NB_ERR_TOO_LARGE', `${where}[${i}] (${what}) is ${x}, beyond 1e+09, the largest coordinate a navmesh holds`);
    }
  }
  return p;
}
const PATHS_OPTIONS = [...PATH_OPTIONS, 'details'] as const;
const PATHS_ASYNC_OPTIONS = [...PATHS_OPTIONS, 'workers', 'signal'] as const;
const RANDOM_OPTIONS = [...QUERY_OPTIONS, 'seed', 'center', 'radius'] as const;

/** An integer tile coordinate (int32, as C stores them). */
const tileCoord = (where: string, v: number) => intIn(where, v, -0x80000000, 0x7fffffff);

/**
 * A query filter's values as C holds them: the 64 area costs (float32; 1 where none is given), then includeFlags
 * and excludeFlags. A NavMesh keeps the last filter's values with its wasm filter, which is written again only where
 * they change: a query given the same filter (the same object or another with equal values) pays for the checks
 * below, not for a new wasm filter (64 costs: about 15 us a call before).
 */
const FILTER_VALUES = 66;
/** filterValues' output, reused from call to call (queries run one at a time). */
const filterScratch = new Float64Array(FILTER_VALUES);
const MAX_F32 = 3.4028234663852886e38;

/** A query filter, checked (area ids 0..63 with costs >= 0 in float32, flags 16-bit), into filterScratch. */
function filterValues(where: string, f: unknown): Float64Array {
  if (f === null || typeof f !== 'object') throw invalid(`${where} must be an object { areaCost?, includeFlags?, excludeFlags? } (got ${shown(f)})`);
  knownKeys(where, f, ['areaCost', 'includeFlags', 'excludeFlags']);
  const { areaCost, includeFlags, excludeFlags } = f as QueryFilter;
  const out = filterScratch.fill(1, 0, 64);
  if (areaCost != null) {
    if (typeof areaCost !== 'object') throw invalid(`${where}.areaCost must be an array or an object of costs by area id (got ${shown(areaCost)})`);
    const list = areaCost as ArrayLike<unknown>;
    const n = list.length;
    if (typeof n === 'number') {
      if (!(Number.isInteger(n) && n >= 0 && n <= 64) && lengthOf(`${where}.areaCost`, list) > 64) {
        throw invalid(`${where}.areaCost has ${n} entries; area ids are 0..63`);
      }
      for (let i = 0; i < n; i++) {
        const c = list[i];
        if (c !== undefined) out[i] = areaCostOf(where, i, c); // a hole: cost 1
      }
    } else {
      for (const [k, c] of Object.entries(areaCost)) {
        if (!/^\d+$/.test(k) || Number(k) > 63) throw invalid(`${where}.areaCost: '${k}' is not an area id 0..63`);
        if (c !== undefined) out[Number(k)] = areaCostOf(where, k, c);
      }
    }
  }
  out[64] = includeFlags === undefined ? 0xffff : intIn(`${where}.includeFlags`, includeFlags, 0, 0xffff);
  out[65] = excludeFlags === undefined ? 0 : intIn(`${where}.excludeFlags`, excludeFlags, 0, 0xffff);
  return out;
}

/** One area's cost as C stores it (float32), >= 0; the messages are built only for a bad one. */
function areaCostOf(where: string, k: number | string, c: unknown): number {
  if (typeof c === 'number' && c >= 0 && c <= MAX_F32) return Math.fround(c);
  const x = f32(`${where}.areaCost[${k}]`, c);
  if (x < 0) throw invalid(`${where}.areaCost[${k}] must be >= 0 (got ${c})`);
  return x;
}

// Set by NavMesh's static block (declared first: the block runs when the class is defined).
let internals: {
  handle(n: NavMesh): Handle;
  setCaches(n: NavMesh, c: TileCaches | null): void;
  caches(n: NavMesh): TileCaches | null;
  setBaking(n: NavMesh): void;
};

/**
 * A navigation mesh in the main thread's wasm memory, with its queries (paths, nearest points, raycasts, random
 * points). Made by bake(), {@link NavMesh.load} (a saved file) or {@link NavMesh.create} (an empty tile grid to
 * stream tiles into); never with `new`. "No path" and "nothing near" are ordinary outcomes (a status, or null);
 * bad input, and any use after {@link NavMesh.dispose}, throw {@link NavBakeError}. A FinalizationRegistry frees
 * a forgotten navmesh; dispose() frees it at once.
 */
export class NavMesh {
  #h: Handle | null;
  #rng = 0n;
  #caches: TileCaches | null = null;
  /** an obstacles: true bake that has not resolved yet (onTile sees the navmesh) */
  #baking = false;

  static {
    internals = {
      handle: (n) => n.#live(),
      setCaches: (n, c) => {
        n.#caches = c;
        n.#baking = false;
      },
      setBaking: (n) => {
        n.#baking = true;
      },
      caches: (n) => n.#caches,
    };
  }

  /** @internal use bake() or NavMesh.load() */
  constructor(token: typeof ADOPT, w: Wasm, nav: number) {
    if (token !== ADOPT) throw new TypeError('NavMesh: use bake() or NavMesh.load()');
    this.#h = { w, nav, query: 0, queryNodes: 0, limited: 0, limitedNodes: 0, filter: 0, custom: 0, customValues: null, replica: 0 };
    live++;
    registry.register(this, this.#h, this);
  }

  /**
   * Loads bytes written by save() (or the native tool): a Uint8Array (a Node Buffer), another view of them or
   * an ArrayBuffer. Rejects with NB_ERR_CORRUPT / NB_ERR_VERSION.
   */
  static async load(data: Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView): Promise<NavMesh> {
    // read at the call: the caller may reuse its buffer while the module loads
    const bytes = bytesOf(at('load', 'bytes'), data);
    const copy = allocate(at('load', 'bytes'), bytes.length, () => copyOf(bytes));
    const w = await mainWasm();
    const nav = new NavMesh(ADOPT, w, w.load(copy));
    keepSpares([copy.buffer]); // read into the heap: its memory serves the next copy (spare.ts)
    return nav;
  }

  /**
   * An empty navmesh of a tile grid, to fill with {@link loadTile} (streaming). The params of a saved file come
   * from {@link NavMesh.readTiles} (or a navmesh's {@link params}); `origin` may be any {@link Vec3Like}. Rejects
   * with NB_ERR_INVALID_ARG / NB_ERR_NONFINITE on bad params.
   */
  static async create(params: Omit<NavMeshParams, 'origin'> & { readonly origin: Vec3Like }): Promise<NavMesh> {
    if (!params || typeof params !== 'object') {
      throw new NavBakeError('NB_ERR_INVALID_ARG', 'navbake: NavMesh.create needs { origin, tileWidth, tileDepth, maxTiles }');
    }
    knownKeys(at('create', 'params'), params, ['origin', 'tileWidth', 'tileDepth', 'maxTiles'], 'field');
    const o = vec3(at('create', 'params.origin'), params.origin);
    const values = [o[0], o[1], o[2], params.tileWidth, params.tileDepth, params.maxTiles];
    values.forEach((v, i) => {
      const name = ['origin[0]', 'origin[1]', 'origin[2]', 'tileWidth', 'tileDepth', 'maxTiles'][i];
      if (typeof v !== 'number') throw new NavBakeError('NB_ERR_INVALID_ARG', `navbake: NavMesh.create: params.${name} must be a number`);
      if (i === 3 || i === 4) f32(at('create', `params.${name}`), v); // 1e39 is no "not finite" for the C side to say
      if (i === 5 && !(Number.isInteger(v) && v >= 1 && v <= 4095)) {
        throw new NavBakeError('NB_ERR_INVALID_ARG', `navbake: NavMesh.create: params.maxTiles must be an integer 1..4095 (got ${v})`);
      }
    });
    const w = await mainWasm(); // (after reading params: the caller may change them meanwhile)
    return new NavMesh(ADOPT, w, w.navmeshCreate(values as [number, number, number, number, number, number]));
  }

  /**
   * The grid params and the tile records of a saved navmesh file, without loading it: load the tiles near the
   * player first ({@link NavMesh.create}(params), then {@link loadTile} each). Checks the header (magic,
   * version, checksum) and the record lengths: NB_ERR_CORRUPT / NB_ERR_VERSION. The blobs themselves are
   * checked when loaded.
   */
  static readTiles(fileBytes: Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView): { params: NavMeshParams; tiles: TileRecord[] } {
    return readNavmeshFile(bytesOf(at('readTiles', 'fileBytes'), fileBytes));
  }

  /** The grid: origin, tile size, most tiles. */
  get params(): NavMeshParams {
    const h = this.#live('params');
    const p = h.w.navmeshParams(h.nav);
    return { origin: [p[0], p[1], p[2]], tileWidth: p[3], tileDepth: p[4], maxTiles: p[5] };
  }

  /** The tiles, sorted by (z, x). */
  tiles(): TileInfo[] {
    const h = this.#live('tiles');
    const t = h.w.tiles(h.nav);
    const out: TileInfo[] = [];
    for (let i = 0; i < t.length; i += 3) out.push({ x: t[i], z: t[i + 1], polygons: t[i + 2] });
    return out.sort((a, b) => a.z - b.z || a.x - b.x);
  }

  /** The blob of tile (x, z) (a copy), or null when there is none; {@link loadTile} takes it back. */
  saveTile(x: number, z: number): Uint8Array<ArrayBuffer> | null {
    const h = this.#live('saveTile');
    return h.w.tileData(h.nav, tileCoord(at('saveTile', 'x'), x), tileCoord(at('saveTile', 'z'), z));
  }

  /**
   * Adds a tile blob (from {@link saveTile} or {@link NavMesh.readTiles}), replacing the tile at its position.
   * Validated first: NB_ERR_CORRUPT / NB_ERR_VERSION, NB_ERR_INVALID_ARG for a tile of another grid (its bounds
   * lie outside its cell of this navmesh by more than half a tile) or one baked for another agent (height, radius,
   * climb) or cell size than the tiles already in, NB_ERR_TOO_LARGE (maxTiles reached); on any
   * failure the navmesh is unchanged. Polygon refs of a replaced tile become stale; paths (points) stay as they are.
   */
  loadTile(data: Uint8Array | ArrayBuffer | SharedArrayBuffer | ArrayBufferView): void {
    const h = this.#live('loadTile');
    const bytes = bytesOf(at('loadTile', 'bytes'), data);
    h.w.putTile(h.nav, bytes);
    this.#caches?.tileLoaded(...blobTile(bytes));
  }

  /**
   * Removes tile (x, z) (its polygon refs become stale); false when there was none. With live obstacles the tile
   * stays out: {@link update} does not put it back, and the obstacle changes around it wait until
   * {@link loadTile} does.
   */
  removeTile(x: number, z: number): boolean {
    const h = this.#live('removeTile');
    const tx = tileCoord(at('removeTile', 'x'), x);
    const tz = tileCoord(at('removeTile', 'z'), z);
    const removed = h.w.removeTile(h.nav, tx, tz);
    if (removed) this.#caches?.tileRemoved(tx, tz); // (none there, a tile obstacles carved away: nothing changes)
    return removed;
  }

  // ---- live obstacles ----

  /**
   * Adds an obstacle (a box, cylinder or convex volume; area 0, the default, carves the surface away, 1..63
   * marks an area) and returns its id (ids start at 1 and are never reused). Validated at once (NB_ERR_INVALID_ARG
   * / NB_ERR_NONFINITE naming the field); nothing changes until {@link update}.
   * Needs a tiled navmesh baked with `obstacles: true` (else NB_ERR_INVALID_ARG).
   */
  addObstacle(volume: Volume): number {
    return this.#obstacles('addObstacle').add(volume);
  }

  /** Removes an obstacle (NB_ERR_NOT_FOUND for an unknown id); takes effect at the next {@link update}. */
  removeObstacle(id: number): void {
    this.#obstacles('removeObstacle').remove(id);
  }

  /** Moves or reshapes an obstacle (both its old and new place are rebuilt at the next {@link update}). */
  updateObstacle(id: number, volume: Volume): void {
    this.#obstacles('updateObstacle').replace(id, volume);
  }

  /** Tiles waiting for {@link update} (0 for a navmesh without obstacles; a tile taken out by {@link removeTile} waits uncounted). */
  get pendingTiles(): number {
    this.#live('pendingTiles');
    return this.#caches?.pendingTiles ?? 0;
  }

  /**
   * Rebuilds the tiles the obstacle changes touched (only those), from their caches, in the worker pool, then
   * swaps them all in at once: on failure nothing changes and the tiles stay pending. Calls run one after
   * another, each applying every change made before it; a call whose turn comes while a later call (without a
   * signal) waits leaves its work to that one and resolves with its result, so a burst of changes each followed
   * by an update() not awaited rebuilds each tile once. Paths are lists of points, so an old path stays a list of points: re-plan those for which
   * `result.touches(points)` is true (polygon refs of rebuilt tiles become stale).
   */
  update(opts?: UpdateOptions | null): Promise<ObstacleUpdate> {
    try {
      const c = this.#obstacles('update');
      return c.update(() => this.#live('update').nav, opts);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #obstacles(fn: string): TileCaches {
    this.#live(fn);
    if (this.#baking) {
      throw new NavBakeError(
        'NB_ERR_INVALID_ARG',
        `navbake.${fn}: the bake has not finished: live obstacles can be used once bake()'s promise has resolved`,
      );
    }
    if (!this.#caches) {
      throw new NavBakeError(
        'NB_ERR_INVALID_ARG',
        `navbake.${fn}: live obstacles need a tiled navmesh baked with the obstacles option: ` +
          'bake(geometry, { tileSize: 64 }, { obstacles: true }); a navmesh baked without it, loaded from a file or ' +
          "made with NavMesh.create has no obstacle caches (a file holds the tiles only, obstacles carved in)",
      );
    }
    return this.#caches;
  }

  /** true once dispose() ran */
  get disposed(): boolean {
    return this.#h === null;
  }

  /** Number of tiles (1 for a solo bake with polygons). */
  get tileCount(): number {
    const h = this.#live('tileCount');
    return h.w.tileCount(h.nav);
  }

  /**
   * Frees the wasm memory. Idempotent; any later call throws NavBakeError NB_ERR_DISPOSED. Call it when done: the
   * garbage collector does not see wasm memory, so a forgotten navmesh is freed (by a FinalizationRegistry) only
   * when its small JavaScript object happens to be collected, and wasm memory never shrinks.
   */
  dispose(): void {
    const h = this.#h;
    if (!h) return;
    this.#h = null;
    registry.unregister(this);
    release(h);
    // an update() rebuilding in workers rejects now, its workers stopped (its turn to swap tiles in never comes)
    this.#caches?.cancel(new NavBakeError('NB_ERR_DISPOSED', 'navbake.update: the NavMesh was disposed during the update'));
  }

  /** The navmesh as bytes (tiles sorted: the same navmesh always gives the same bytes). */
  save(): Uint8Array<ArrayBuffer> {
    const h = this.#live('save');
    return h.w.save(h.nav);
  }

  /** Shortest path from start to end over the surface (A* + string pulling). */
  findPath(start: Vec3Like, end: Vec3Like, opts?: PathOptions | null): PathResult {
    this.#live('findPath');
    const s = queryPoint(at('findPath', 'start'), start);
    const e = queryPoint(at('findPath', 'end'), end);
    const pair = new Float32Array([s[0], s[1], s[2], e[0], e[1], e[2]]);
    const [o, crossings] = pathOptions('findPath', opts);
    const r = this.#query('findPath', o, null, (w, q, f, half) => w.findPath(q, f, pair, half, crossings));
    return {
      status: PATH_STATUS[r.status] ?? 'none',
      exhausted: r.exhausted,
      points: r.points,
      length: r.length,
      pointFlags: r.pointFlags,
      pointRefs: r.pointRefs,
    };
  }

  /**
   * Many paths in one call: pairs holds n x (start xyz, end xyz) (a Float32Array is used as it is; other arrays
   * are copied into one). Status per pair is 0 none, 1 partial, 2 complete (PATH_STATUS names them); pair i's
   * points are points[3 * offsets[i] .. 3 * offsets[i + 1]] (and, with details, pointFlags and pointRefs
   * [offsets[i] .. offsets[i + 1]]).
   */
  findPaths(pairs: Float32Array | ArrayLike<number>, opts: PathsOptions & { details: true }): PathBatch & PathDetails;
  findPaths(pairs: Float32Array | ArrayLike<number>, opts?: PathsOptions | null): PathBatch & Partial<PathDetails>;
  findPaths(pairs: Float32Array | ArrayLike<number>, opts?: PathsOptions | null): PathBatch & Partial<PathDetails> {
    this.#live('findPaths');
    const p = pathPairs('findPaths', pairs);
    const [o, crossings] = pathOptions('findPaths', opts, PATHS_OPTIONS);
    const details = bool(at('findPaths', 'options.details'), o.details) ?? false;
    return this.#query('findPaths', o, null, (w, q, f, half) => w.findPaths(q, f, p, half, crossings, details));
  }

  /**
   * findPaths in the worker pool, off the calling thread: the pairs are shared out over `options.workers` workers
   * (from the pool bake() uses), each answering on its own copy of the navmesh. The result is findPaths' for the
   * same pairs and options, point for point, refs included. A worker's copy is made at its first share of this
   * navmesh's batches (one copy of every tile: as costly as NavMesh.load) and then brought up to date with what
   * changed since (tiles loaded, removed or rebuilt by update(), flags set): keep batches large. The paths are
   * those of the navmesh as it is when every worker of the batch is free and the shares are sent; changes made
   * later are not in them. Rejects with what findPaths throws, NB_ERR_DISPOSED when the navmesh is disposed before
   * the shares are sent, NB_ERR_WORKER when a worker dies, the signal's reason when aborted.
   */
  findPathsAsync(pairs: Float32Array | ArrayLike<number>, opts: PathsAsyncOptions & { details: true }): Promise<PathBatch & PathDetails>;
  findPathsAsync(pairs: Float32Array | ArrayLike<number>, opts?: PathsAsyncOptions | null): Promise<PathBatch & Partial<PathDetails>>;
  async findPathsAsync(pairs: Float32Array | ArrayLike<number>, opts?: PathsAsyncOptions | null): Promise<PathBatch & Partial<PathDetails>> {
    const method = 'findPathsAsync';
    const h = this.#live(method);
    const p = pathPairs(method, pairs);
    const [o, crossings] = pathOptions(method, opts, PATHS_ASYNC_OPTIONS);
    const details = bool(at(method, 'options.details'), o.details) ?? false;
    const workers = workerCount(at(method, 'options.workers'), o.workers) ?? defaultWorkerCount();
    const signal = abortSignal(at(method, 'options.signal'), o.signal);
    const a = this.#queryArgs(method, o, null);
    if (signal?.aborted) throw abortReason(signal);
    if (workers === false || !workersAvailable() || p.length === 0) {
      return this.#query(method, o, null, (w, q, f, half) => w.findPaths(q, f, p, half, crossings, details));
    }
    h.replica ||= newReplicaId();
    return findPathsInWorkers({
      live: () => {
        const now = this.#live(method);
        // the pool findPaths would search with now (it grows with the navmesh, never shrinks)
        return { w: now.w, nav: now.nav, nodes: Math.max(now.queryNodes, queryNodesFor(now.w.polyCount(now.nav), now.w.tileCount(now.nav))) };
      },
      replica: h.replica,
      pairs: p,
      half: Float64Array.from(a.half),
      filter: a.values && a.values.slice(), // (a.values is reused by the next call)
      crossings,
      details,
      maxNodes: a.maxNodes,
      workers,
      signal,
    });
  }

  /** The closest point on the nearest polygon whose bounds overlap the box p +- halfExtents (default [2, 4, 2]), or
   * null when none does. Like Detour's findNearestPoly, that point can lie outside the box. */
  nearestPoint(p: Vec3Like, opts?: QueryOptions | null): { point: Vec3; ref: number } | null {
    this.#live('nearestPoint');
    const c = queryPoint(at('nearestPoint', 'p'), p);
    return this.#query('nearestPoint', opts, QUERY_OPTIONS, (w, q, f, half) => w.findNearest(q, f, c, half));
  }

  /** Walks a straight line over the surface from start toward end; null when start is not on the navmesh. */
  raycast(start: Vec3Like, end: Vec3Like, opts?: QueryOptions | null): RaycastResult | null {
    this.#live('raycast');
    const s = queryPoint(at('raycast', 'start'), start);
    const e = queryPoint(at('raycast', 'end'), end);
    return this.#query('raycast', opts, QUERY_OPTIONS, (w, q, f, half) => {
      const from = w.findNearest(q, f, s, half);
      if (!from) return null;
      const r = w.raycast(q, f, from.ref, s, e);
      const t = Math.min(Math.max(r.t, 0), 1);
      // on the surface where the walk stops (the segment's own height only past C's record of the polygons walked)
      const y = Number.isNaN(r.y) ? s[1] + (e[1] - s[1]) * t : r.y;
      const point: Vec3 = [s[0] + (e[0] - s[0]) * t, y, s[2] + (e[2] - s[2]) * t];
      return { hit: r.t < 1, t: r.t, point, normal: r.normal };
    });
  }

  /**
   * A random point on the surface (area-weighted), or within radius of center. Deterministic: the sequence
   * starts from seed 0 and continues from call to call; opts.seed (or seedRandom) restarts it.
   * null when the navmesh is empty (or center is not on it).
   */
  randomPoint(options?: RandomPointOptions | null): Vec3 | null {
    this.#live('randomPoint');
    const opts = optionsObject<RandomPointOptions>(at('randomPoint', 'options'), options, RANDOM_OPTIONS);
    const c = opts.center == null ? null : queryPoint(at('randomPoint', 'options.center'), opts.center);
    if (!c && opts.radius != null) throw invalid(`${at('randomPoint', 'options.radius')} needs options.center: the point is picked within radius of it`);
    if (!c && opts.halfExtents != null) {
      throw invalid(`${at('randomPoint', 'options.halfExtents')} needs options.center: it is the box in which center's polygon is looked for`);
    }
    const radius = opts.radius == null ? 1 : positive(at('randomPoint', 'options.radius'), f32(at('randomPoint', 'options.radius'), opts.radius));
    if (opts.seed != null) this.#rng = seedOf(at('randomPoint', 'options.seed'), opts.seed);
    return this.#query('randomPoint', opts, null, (w, q, f, half) => {
      let around;
      if (c) {
        const from = w.findNearest(q, f, c, half);
        if (!from) return null;
        around = { ref: from.ref, center: c, radius };
      }
      const r = w.randomPoint(q, f, this.#rng, around);
      this.#rng = r.rng;
      return r.ref ? r.point : null;
    });
  }

  /** Restarts randomPoint's sequence. */
  seedRandom(seed: number | bigint): void {
    this.#live('seedRandom');
    this.#rng = seedOf(at('seedRandom', 'seed'), seed);
  }

  /** Moves from start toward end along the surface, sliding along walls; where it stops, or null off the mesh. */
  moveAlong(start: Vec3Like, end: Vec3Like, opts?: QueryOptions | null): Vec3 | null {
    this.#live('moveAlong');
    const s = queryPoint(at('moveAlong', 'start'), start);
    const e = queryPoint(at('moveAlong', 'end'), end);
    return this.#query('moveAlong', opts, QUERY_OPTIONS, (w, q, f, half) => {
      const from = w.findNearest(q, f, s, half);
      return from ? w.moveAlong(q, f, from.ref, s, e) : null;
    });
  }

  /** Distance from center to the nearest wall within maxRadius; null when center is not on the navmesh. */
  distanceToWall(center: Vec3Like, maxRadius: number, opts?: QueryOptions | null): WallDistance | null {
    this.#live('distanceToWall');
    const c = queryPoint(at('distanceToWall', 'center'), center);
    const r = positive(at('distanceToWall', 'maxRadius'), f32(at('distanceToWall', 'maxRadius'), maxRadius));
    return this.#query('distanceToWall', opts, QUERY_OPTIONS, (w, q, f, half) => {
      const from = w.findNearest(q, f, c, half);
      return from ? w.distanceToWall(q, f, from.ref, c, r) : null;
    });
  }

  /** Every polygon: vertices (xyz), area id, flags; off-mesh links have two vertices (their ends). */
  polygons(): PolygonInfo[] {
    const h = this.#live('polygons');
    return h.w.polygons(h.nav);
  }

  /**
   * The off-mesh link behind a polygon reference (a path's pointRefs at a link's start, or polygons()'s ref), as
   * it was baked, with the polygon's current area and flags; null when ref is not a link of this navmesh.
   */
  offMeshLink(ref: number): OffMeshLinkInfo | null {
    const h = this.#live('offMeshLink');
    return h.w.offMeshLink(h.nav, intIn(at('offMeshLink', 'ref'), ref, 0, 0xffffffff));
  }

  /** Changes a polygon's flags (e.g. close a door: queries whose filter excludes the flag avoid it). */
  setPolygonFlags(ref: number, flags: number): void {
    const h = this.#live('setPolygonFlags');
    h.w.setPolygonFlags(h.nav, intIn(at('setPolygonFlags', 'ref'), ref, 0, 0xffffffff), intIn(at('setPolygonFlags', 'flags'), flags, 0, 0xffff));
  }

  /** The walkable surface (detail triangles) as indexed triangles, e.g. for a three.js BufferGeometry. */
  toGeometry(): SurfaceGeometry {
    const h = this.#live('toGeometry');
    return h.w.detailTriangles(h.nav);
  }

  /** method: the call, named in the error when the navmesh was disposed */
  #live(method?: string): Handle {
    const h = this.#h;
    if (!h) throw new NavBakeError('NB_ERR_DISPOSED', `navbake: ${method ? `NavMesh.${method}: ` : ''}this NavMesh was disposed`);
    return h;
  }

  /**
   * A query's options checked: half extents, the filter's values (null: none given; filterScratch, reused by the
   * next call) and maxNodes (0: none given). keys: the option names to check, or null where the caller checked
   * its own (wider) options already.
   */
  #queryArgs(method: string, options: QueryOptions | null | undefined, keys: readonly string[] | null): { half: ArrayLike<number>; values: Float64Array | null; maxNodes: number } {
    const opts = optionsObject<QueryOptions>(at(method, 'options'), options, keys ?? undefined);
    const half = opts.halfExtents == null ? DEFAULT_HALF_EXTENTS : vec3(at(method, 'options.halfExtents'), opts.halfExtents);
    if (!(half[0] > 0 && half[1] > 0 && half[2] > 0)) {
      half.forEach((h, k) => positive(`${at(method, 'options.halfExtents')}[${k}]`, h)); // names the first bad one
    }
    const values = opts.filter == null ? null : filterValues(at(method, 'options.filter'), opts.filter);
    const limit = (opts as PathOptions).maxNodes;
    const maxNodes = limit === undefined ? 0 : intIn(at(method, 'options.maxNodes'), limit, 1, MAX_QUERY_NODES);
    return { half, values, maxNodes };
  }

  /** keys: the option names to check, or null where the caller checked its own (wider) options already. */
  #query<T>(
    method: string,
    options: QueryOptions | null | undefined,
    keys: readonly string[] | null,
    fn: (w: Wasm, q: number, filter: number, half: ArrayLike<number>) => T,
  ): T {
    const h = this.#live(method);
    const { half, values, maxNodes } = this.#queryArgs(method, options, keys);
    // The pool grows with the navmesh (tiles added by a tiled bake, loadTile...); it is never shrunk.
    const nodes = queryNodesFor(h.w.polyCount(h.nav), h.w.tileCount(h.nav));
    const [q, f] = h.w.querySetup(h.nav, h, nodes, maxNodes, values);
    return fn(h.w, q, f, half);
  }
}

/** @internal the wasm instance and navmesh pointer behind a NavMesh (NB_ERR_DISPOSED once disposed) */
export function navmeshHandle(n: NavMesh): { w: Wasm; nav: number } {
  return internals.handle(n);
}

/** @internal gives a tiled bake's NavMesh its tile caches (live obstacles) */
export function attachTileCaches(n: NavMesh, c: TileCaches): void {
  internals.setCaches(n, c);
}

/** @internal marks a NavMesh whose obstacles: true bake is still running (until attachTileCaches) */
export function markObstaclesBaking(n: NavMesh): void {
  internals.setBaking(n);
}

/** @internal a navmesh's tile caches (tests) */
export function tileCachesOf(n: NavMesh): TileCaches | null {
  return internals.caches(n);
}

/** @internal wraps a navmesh pointer of the main thread's wasm (bake()) */
export function adoptNavmesh(w: Wasm, nav: number): NavMesh {
  return new NavMesh(ADOPT, w, nav);
}

// ---- the navmesh file, read without loading (docs/FORMAT.md) -------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(b: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function readNavmeshFile(b: Uint8Array): { params: NavMeshParams; tiles: TileRecord[] } {
  const corrupt = (why: string) => new NavBakeError('NB_ERR_CORRUPT', `navbake: NavMesh.readTiles: ${why}`);
  if (b.length < 48) throw corrupt(`the file is ${b.length} bytes, shorter than its 48-byte header`);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const u32 = (o: number) => dv.getUint32(o, true);
  if (u32(0) !== 0x484d424e) {
    const swapped = u32(0) === 0x4e424d48 ? ': byte-swapped, written big-endian' : '';
    throw corrupt(`bad magic 0x${u32(0).toString(16).padStart(8, '0')} (not a navbake navmesh file)${swapped}`);
  }
  if (u32(4) !== 1) throw new NavBakeError('NB_ERR_VERSION', `navbake: NavMesh.readTiles: file version ${u32(4)}, this reader knows 1`);
  if (u32(8) !== 48 || u32(40) !== 0) throw corrupt('bad header size or reserved field');
  if (crc32(b.subarray(0, 44)) !== u32(44)) throw corrupt('header checksum mismatch');
  const f = (o: number) => dv.getFloat32(o, true);
  const params: NavMeshParams = { origin: [f(12), f(16), f(20)], tileWidth: f(24), tileDepth: f(28), maxTiles: u32(32) };
  const count = u32(36);
  // what NavMesh.load refuses too (nb_navmesh_load), so that NavMesh.create takes the params
  params.origin.forEach((v, k) => {
    if (!Number.isFinite(v)) throw corrupt('origin is not finite');
    if (Math.abs(v) > MAX_COORD) throw corrupt(`origin.${'xyz'[k]} (${v}) is beyond 1e+09`);
  });
  for (const [k, v] of [['tileWidth', params.tileWidth], ['tileDepth', params.tileDepth]] as const) {
    if (!(v > 0 && v <= MAX_COORD)) throw corrupt(`${k} is ${v}: it must be > 0 and at most 1e+09`);
  }
  if (params.maxTiles < 1 || params.maxTiles > 4095) throw corrupt(`maxTiles is ${params.maxTiles} (1..4095)`);
  if (count > params.maxTiles) throw corrupt(`tile count ${count} exceeds max_tiles ${params.maxTiles}`);
  const tiles: TileRecord[] = [];
  let o = 48;
  for (let i = 0; i < count; i++) {
    if (o + 4 > b.length) throw corrupt(`tile ${i}: the file ends before its length`);
    const len = u32(o);
    o += 4;
    if (len < 28 || len % 4 !== 0 || len > b.length - o) throw corrupt(`tile ${i}: bad length ${len}`);
    tiles.push({ x: dv.getInt32(o + 20, true), z: dv.getInt32(o + 24, true), bytes: b.subarray(o, o + len) });
    o += len;
  }
  if (o !== b.length) throw corrupt(`${b.length - o} bytes follow the last tile`);
  return { params, tiles };
}
