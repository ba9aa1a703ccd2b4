/**
 * bake(): triangles in, NavMesh out. By default in a worker (solo bakes: one worker; tiled bakes: the tiles
 * spread over several), so the page never freezes; `workers: false` bakes on the calling thread. Whatever runs
 * it, the same input gives a navmesh that saves to the same bytes.
 */
import { configValues, type NavBakeConfig } from './config.js';
import { abortSignal, allocate, bool, func, invalid as invalidArg, isDetached, knownKeys, MAX_COORD, notDetached, numericArray, optionsObject, vec3, workerCount } from './args.js';
import { abortedAs, abortReason, NavBakeError } from './errors.js';
import { adoptNavmesh, attachTileCaches, markObstaclesBaking, type NavMesh, type Vec3Like } from './navmesh.js';
import { TileCaches } from './obstacles.js';
import { copyOf, sharedCopyOf } from './spare.js';
import { defaultWorkerCount, settle, sharedPool, workersAvailable, type TaskHandle } from './pool.js';
import type { ProgressReply } from './protocol.js';
import { loadedMainWasm, mainWasm, wasmModule } from './runtime.js';
import { bakeTilesHere, bakeTilesInWorkers, canShare, type TileEvent, type TiledJob } from './tiled.js';
import { linksData, volumesData, type OffMeshLink, type Volume } from './volumes.js';
import { STAGES, type BakeStage, type CProgress, type HeapMesh, type MeshInput, type NavmeshParams, type Wasm } from './wasm.js';

export { defaultWorkerCount };

/** Triangles to bake. y is up. */
export interface Geometry {
  /** xyz per vertex */
  positions: Float32Array | ArrayLike<number>;
  /** three vertex indices per triangle; omitted: consecutive vertex triples */
  indices?: Uint32Array | Uint16Array | ArrayLike<number> | undefined;
  /** area id per triangle: 0 = not walkable, 1..63 (63 = the default walkable area). @default all 63 */
  areas?: Uint8Array | ArrayLike<number> | undefined;
  /**
   * Area volumes applied after erosion, in order (a later one wins where they overlap): area 0 carves the
   * surface away (a no-go zone), 1..63 marks an area (water that costs more: QueryFilter.areaCost).
   */
  volumes?: readonly Volume[] | undefined;
  /** Off-mesh links (jumps, ladders, teleporters): each stored in the tile holding its start. */
  links?: readonly OffMeshLink[] | undefined;
}

/** What onProgress gets: the stage running and how far it is. */
export interface BakeProgress {
  /** the pipeline stage running (in {@link STAGES} order), or 'tiles' for tiled bakes */
  stage: BakeStage;
  /** work done in the stage (tiles baked, for 'tiles'): starts at 0, ends at total; done / total never goes back */
  done: number;
  /** the stage's work in all (tiles in all, for 'tiles'), never 0: 1 until the stage knows its amount of work */
  total: number;
}

/** A C progress report (nb_stage 1..9) as onProgress gets it. */
export function progressOf(stage: number, done: number, total: number): BakeProgress {
  return { stage: STAGES[stage - 1] ?? 'rasterize', done, total };
}

/**
 * What bake, inspect and voxelize start with: the main thread's wasm (the signal checked before and after waiting
 * for it), the config as C values, and a reader of its resolved fields (a bad config throws NavBakeError).
 */
export async function configFor(
  config: NavBakeConfig | null | undefined,
  signal: AbortSignal | undefined,
): Promise<{ w: Wasm; values: Float64Array; field: (name: string) => number }> {
  if (signal?.aborted) throw abortReason(signal);
  const w = await mainWasm();
  if (signal?.aborted) throw abortReason(signal);
  const values = configValues(w.fields, config);
  const resolved = w.resolveConfig(values);
  return { w, values, field: (name) => resolved[w.fields.findIndex((f) => f.name === name)] };
}

/** The C progress hook of work on this thread: reports to onProgress, and cancels once the signal is aborted. */
export function hereProgress(onProgress: ((p: BakeProgress) => void) | undefined, signal: AbortSignal | undefined): CProgress {
  return (stage, done, total) => {
    onProgress?.(progressOf(stage, done, total));
    return signal?.aborted === true;
  };
}

/** The triangles for a worker, and their buffers to transfer: meshInput's own copies (never the caller's arrays). */
export function workerCopies(mesh: MeshInput): {
  copies: { positions: Float32Array; indices: Uint32Array | null; areas: Uint8Array | null };
  transfer: ArrayBuffer[];
} {
  const copies = { positions: mesh.positions, indices: mesh.indices ?? null, areas: mesh.areas ?? null };
  const transfer = [copies.positions.buffer, copies.indices?.buffer, copies.areas?.buffer].filter((b) => b) as ArrayBuffer[];
  return { copies, transfer };
}

/** bake()'s options: where it runs, how to follow or stop it, and tiled-bake extras. */
export interface BakeOptions {
  /**
   * Workers to bake in (1..64): a tiled bake spreads its tiles over this many, a solo bake uses one. Calls share
   * one pool of workers: while this call waits, workers are started up to this many in all (solo bakes made at
   * once with `workers: 3` run three at a time). `false` bakes on the calling thread (blocking it). @default {@link defaultWorkerCount}(): min(4, hardware threads - 1), at least 1
   */
  workers?: number | false | undefined;
  /** Aborting rejects the bake with the signal's reason (an AbortError for `abort()`) and stops the work. */
  signal?: AbortSignal | undefined;
  /**
   * Called as each stage goes (solo bakes: several times a stage, from done 0 to total) or per finished tile (tiled
   * bakes).
   */
  onProgress?: ((p: BakeProgress) => void) | undefined;
  /**
   * Hand the geometry's arrays over instead of copying them at the call: faster for big meshes, but they are
   * the bake's from the call on (do not change them until it settles). A solo bake in a worker then transfers
   * their buffers to it, and the arrays you passed become unusable (detached). Tiled bakes copy the geometry
   * into each worker and keep it on this thread until the bake ends (to reopen a session on a replacement
   * worker). @default false
   */
  transfer?: boolean | undefined;
  /**
   * Tiled bakes: tiles are baked nearest-first to this point (xz distance to the tile's centre; ties by z, then
   * x), so the area around the player is walkable first (onTile). The navmesh is the same whatever the order.
   */
  focus?: Vec3Like | undefined;
  /**
   * Tiled bakes: called as each tile with polygons is added to the navmesh, which is already queryable over the
   * tiles added so far (it is the NavMesh the promise resolves with). An exception thrown here fails the bake.
   */
  onTile?: ((e: TileEvent) => void) | undefined;
  /**
   * Tiled bakes: keep each tile's compact heightfield (encoded, on this thread) so that live obstacles
   * (NavMesh.addObstacle, update) can rebuild single tiles. @default false
   */
  obstacles?: boolean | undefined;
}

/**
 * The tests' hook, under a symbol key (no option name reaches it, and the option checks, which read string keys, let
 * it by): the (first) worker exits once the bake reaches this nb_stage (tiled: in a tile).
 */
export const EXIT_AT_STAGE = Symbol.for('navbake.test.exitAtStage');

/** bake()'s options as read, with the hook's value. */
type BakeOptionsWithHooks = BakeOptions & { testExitAtStage?: number | undefined };

/** The hook's value, when the options carry a number there. */
function exitAtStage(opts: unknown): number | undefined {
  const v = opts !== null && typeof opts === 'object' ? (opts as Record<symbol, unknown>)[EXIT_AT_STAGE] : undefined;
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

const BAKE_OPTIONS: readonly (keyof BakeOptions)[] = ['workers', 'signal', 'onProgress', 'transfer', 'focus', 'onTile', 'obstacles'];

function invalid(message: string, who = 'navbake.bake'): NavBakeError {
  return invalidArg(`${who}: ${message}`);
}

const GEOMETRY_FIELDS: readonly (keyof Geometry)[] = ['positions', 'indices', 'areas', 'volumes', 'links'];

/**
 * The geometry in C's layout, links left out, read at the call into arrays of this library's own (keep: the
 * caller's arrays of the C type as they are); `owned` lists the arrays made here (free to transfer). Unknown
 * field names are refused. who: the function messages name (bake(), inspect()).
 */
export function meshInput(
  g: Geometry,
  who: string,
  keep = false,
  copy: <T extends Float32Array | Uint32Array | Uint8Array>(a: T) => T = copyOf,
): { mesh: MeshInput; owned: Set<ArrayBufferView> } {
  if (!g || typeof g !== 'object' || g.positions == null) throw invalid('geometry.positions is required', who);
  knownKeys(`${who}: geometry`, g, GEOMETRY_FIELDS, 'field');
  const owned = new Set<ArrayBufferView>();
  // Read once, at the call: arrays of the C type are copied as they are (kept, with keep: the caller hands them
  // over), anything else converted, each element checked on the way. A caller reusing its arrays right after the
  // call cannot change a bake that waits for the module or a worker.
  const conv = <T extends Float32Array | Uint32Array | Uint8Array>(
    name: string,
    v: unknown,
    type: { new (n: number): T },
    ok: (x: number) => boolean,
    expect: string,
  ): T => {
    if (v instanceof type) {
      notDetached(`${who}: geometry.${name}`, v);
      if (keep) return v;
      const own = allocate(`${who}: geometry.${name}`, v.length, () => copy(v as T));
      owned.add(own);
      return own;
    }
    const out = numericArray(`${who}: geometry.${name}`, v, (n) => new type(n), ok, expect);
    owned.add(out);
    return out;
  };
  const positions = conv('positions', g.positions, Float32Array, () => true, 'a number');
  if (positions.length % 3 !== 0) throw invalid(`positions.length must be a multiple of 3 (got ${positions.length})`, who);
  const isIndex = (x: number) => Number.isInteger(x) && x >= 0 && x <= 0xffffffff;
  const indices = g.indices == null ? null : conv('indices', g.indices, Uint32Array, isIndex, 'an integer 0..4294967295');
  if (indices && indices.length % 3 !== 0) throw invalid(`indices.length must be a multiple of 3 (got ${indices.length})`, who);
  const triangles = indices ? indices.length / 3 : Math.floor(positions.length / 9);
  const isArea = (x: number) => Number.isInteger(x) && x >= 0 && x <= 63;
  const areas = g.areas == null ? null : conv('areas', g.areas, Uint8Array, isArea, 'an area id, an integer 0..63');
  if (areas && areas.length !== triangles) {
    throw invalid(`areas.length must equal the triangle count ${triangles} (got ${areas.length})`, who);
  }
  const volumes = volumesData(`${who}: geometry.volumes`, g.volumes);
  return { mesh: { positions, indices, areas, volumes: volumes.length ? volumes : null }, owned };
}

/** The geometry in C's layout, links included; `owned` and `keep` as meshInput's. shared: copies go into shared
 * memory (for a tiled bake in workers, which then posts them as they are: MeshInput.shared). */
function normalize(g: Geometry, keep: boolean, shared = false): { mesh: MeshInput; owned: Set<ArrayBufferView> } {
  const r = meshInput(g, 'navbake.bake', keep, shared ? sharedCopyOf : copyOf);
  r.mesh.links = linksData('navbake.bake: geometry.links', g.links);
  if (shared && !keep) r.mesh.shared = true;
  return r;
}

interface Grid {
  params: NavmeshParams;
  tiles: Int32Array; // x, z pairs
}

/**
 * The tile grid of nb_bake_navmesh, in float32 arithmetic like the C (nb_grid_from in bake_navmesh.c): the origin is the bounds' minimum (min/max written as C's nb_minf/nb_maxf, so even -0 and NaN
 * behave alike), a tile is tileSize * cellSize wide. Computed here so the main thread never copies the geometry
 * into its own heap; a test checks the result against the C bake byte for byte.
 */
function tileGrid(positions: Float32Array, cellSize: number, tileSize: number): Grid {
  if (positions.length === 0) throw new NavBakeError('NB_ERR_EMPTY_MESH', 'navbake.bake: the mesh has no vertices');
  for (let i = 0; i < positions.length; i++) {
    const v = positions[i];
    if (Number.isFinite(v) && Math.abs(v) <= MAX_COORD) continue;
    const [code, what] = Number.isFinite(v)
      ? (['NB_ERR_TOO_LARGE', 'has a coordinate beyond 1e+09, the largest a navmesh holds'] as const)
      : (['NB_ERR_NONFINITE', 'has a non-finite coordinate'] as const);
    throw new NavBakeError(code, `navbake.bake: vertex ${Math.floor(i / 3)} ${what} (${'xyz'[i % 3]} = ${v})`);
  }
  let x0 = positions[0], y0 = positions[1], z0 = positions[2];
  let x1 = x0, z1 = z0;
  for (let i = 3; i < positions.length; i += 3) {
    const x = positions[i], y = positions[i + 1], z = positions[i + 2];
    x0 = x0 < x ? x0 : x;
    x1 = x1 > x ? x1 : x;
    y0 = y0 < y ? y0 : y;
    z0 = z0 < z ? z0 : z;
    z1 = z1 > z ? z1 : z;
  }
  const tw = Math.fround(tileSize * cellSize);
  const ntx = Math.ceil((x1 - x0) / tw);
  const ntz = Math.ceil((z1 - z0) / tw);
  if (Math.fround(Math.max(1, ntx) * Math.max(1, ntz)) > 4095) {
    throw new NavBakeError(
      'NB_ERR_TOO_LARGE',
      `navbake.bake: ${ntx} x ${ntz} tiles exceed the limit of 4095; raise tileSize or cellSize`,
    );
  }
  const nx = ntx < 1 ? 1 : ntx;
  const nz = ntz < 1 ? 1 : ntz;
  const tiles = new Int32Array(nx * nz * 2);
  for (let z = 0, k = 0; z < nz; z++) {
    for (let x = 0; x < nx; x++, k += 2) {
      tiles[k] = x;
      tiles[k + 1] = z;
    }
  }
  return { params: [x0, y0, z0, tw, tw, nx * nz], tiles };
}

/**
 * The options object of bake() and inspect() with the fields they share checked (signal, onProgress, workers).
 * where: the function messages name.
 */
export function bakeOptions<T extends { signal?: AbortSignal | undefined; onProgress?: unknown; workers?: number | false | undefined }>(
  where: string,
  v: T | null | undefined,
  keys: readonly (keyof T & string)[],
): T {
  const o = snapshot(optionsObject<T>(`${where}: options`, v, keys));
  abortSignal(`${where}: options.signal`, o.signal);
  func(`${where}: options.onProgress`, o.onProgress);
  workerCount(`${where}: options.workers`, o.workers);
  return o;
}

/** A shallow copy of an options or config object, taken at the call (the work may start after an await). */
export function snapshot<T>(v: T): T {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? ({ ...v } as T) : v;
}

/** Bakes a navmesh. Rejects with NavBakeError (the C status name and message) or the abort reason. */
export async function bake(geometry: Geometry, config?: NavBakeConfig | null, opts?: BakeOptions | null): Promise<NavMesh> {
  try {
    return await bakeUnnamed(geometry, config, opts);
  } catch (e) {
    throw linkNamed(e);
  }
}

/** C names a link it refuses "nb_<fn>: links[i]..." (its start outside the level, on a tile border): say it as the
 * geometry field it came from, as the checks made here do. */
function linkNamed(e: unknown): unknown {
  if (!(e instanceof NavBakeError)) return e;
  const m = /^nb_[a-z_]+: links\[(\d+)\]/.exec(e.message);
  return m ? new NavBakeError(e.code, `navbake.bake: geometry.links[${m[1]}]${e.message.slice(m[0].length)}`) : e;
}

async function bakeUnnamed(geometry: Geometry, config?: NavBakeConfig | null, opts?: BakeOptions | null): Promise<NavMesh> {
  const options = { ...bakeOptions<BakeOptions>('navbake.bake', opts, BAKE_OPTIONS), testExitAtStage: exitAtStage(opts) };
  if (options.signal?.aborted) throw abortReason(options.signal);
  bool('navbake.bake: options.transfer', options.transfer);
  // focus is read here, at the call: a caller's player.position moves on while the bake waits for its config
  if (options.focus != null) options.focus = vec3('navbake.bake: options.focus', options.focus);
  const cfg = snapshot(config);
  // A solo bake on this thread once the module has loaded: the triangles go from the caller's arrays straight into
  // its heap, at the call, instead of into arrays of the library's own first (fresh memory at every bake: about 0.5 ms
  // of a 13 ms dungeon bake). Solo only when config.tileSize is absent or 0, the values that resolve to a solo bake.
  // One at a time: wasm memory never shrinks, and bakes called together would each hold their copy in it until
  // their turn; the others copy as before, into memory the garbage collector takes back.
  const loaded = loadedMainWasm();
  const tileSizeGiven = (cfg as { tileSize?: unknown } | null | undefined)?.tileSize;
  const direct =
    staging === 0 &&
    loaded !== null &&
    (tileSizeGiven === undefined || tileSizeGiven === 0) &&
    ((options.workers ?? defaultWorkerCount()) === false || !workersAvailable());
  // A tiled bake in workers where shared memory can be posted: the copy at the call goes into shared memory, which
  // the workers then read (before, a second copy of the geometry was made for them: 140 against 52 ms to the first
  // tile of a million-triangle world). tileSize values that do not resolve to a tiled bake fail.
  const sharedCopies =
    typeof tileSizeGiven === 'number' &&
    tileSizeGiven > 0 &&
    (options.workers ?? defaultWorkerCount()) !== false &&
    workersAvailable() &&
    canShare();
  const normalized = normalize(geometry, options.transfer === true || direct, sharedCopies); // before any await: see meshInput
  if (!direct) return bakeRead(normalized, null, cfg, options);
  const staged = loaded.stageMesh(normalized.mesh);
  staging++;
  try {
    // the caller's arrays are not read again
    const mesh = { ...normalized.mesh, positions: new Float32Array(0), indices: null, areas: null };
    return await bakeRead({ mesh, owned: new Set() }, staged, cfg, options);
  } finally {
    staging--;
    staged.free();
  }
}

/** Solo bakes whose triangles wait in the main thread's heap (bakeUnnamed): 0 or 1. */
let staging = 0;

/** bake() once the geometry is read (staged: its triangles already in the main thread's heap). */
async function bakeRead(
  { mesh, owned }: { mesh: MeshInput; owned: Set<ArrayBufferView> },
  staged: HeapMesh | null,
  cfg: NavBakeConfig | null | undefined,
  options: BakeOptionsWithHooks,
): Promise<NavMesh> {
  const { signal, onProgress } = options;
  const { w, values, field } = await configFor(cfg, signal);
  for (const a of [mesh.positions, mesh.indices, mesh.areas]) {
    // arrays given with transfer: true are the caller's until a worker has them (the tiled bake reads them here)
    if (a && isDetached(a.buffer)) {
      throw invalid('a geometry buffer handed over with options.transfer was detached before the bake started');
    }
  }
  const tileSize = field('tileSize');
  const grid = tileSize > 0 ? tileGrid(mesh.positions, field('cellSize'), tileSize) : null;
  const focus = (options.focus as [number, number, number] | undefined) ?? null; // read at the call (bakeUnnamed)
  func('navbake.bake: options.onTile', options.onTile);
  for (const flag of ['obstacles', 'transfer'] as const) bool(`navbake.bake: options.${flag}`, options[flag]);
  if (options.obstacles && !grid) {
    throw invalid('options.obstacles needs a tiled bake: set config.tileSize (e.g. { tileSize: 64 })');
  }
  const workers = options.workers ?? defaultWorkerCount();
  const here = workers === false || !workersAvailable();
  if (grid) {
    if (!mesh.indices && mesh.positions.length % 9 !== 0) {
      // as the solo bake says it (nb_validate_mesh), also for fewer vertices than a triangle
      throw invalid(`without indices vertex_count must be a multiple of 3 (got ${mesh.positions.length / 3})`);
    }
    if (mesh.indices ? mesh.indices.length === 0 : mesh.positions.length < 9) {
      throw new NavBakeError('NB_ERR_EMPTY_MESH', 'navbake.bake: the mesh has no triangles');
    }
    // Vertex indices and area ids are checked by C when each session indexes the whole mesh (one pass, in the
    // workers): its message numbers the triangles of the whole mesh.
    return bakeTiled(w, mesh, values, grid, focus, here ? false : (workers as number), options);
  }
  if (here) return bakeHere(w, mesh, values, options, staged);

  // ---- a solo bake in a worker ----
  const pool = sharedPool(() => wasmModule());
  // The worker gets its own copy, or the caller's buffers with transfer: true (and the arrays made here).
  const transfer: ArrayBuffer[] = [];
  const pass = <T extends Float32Array | Uint32Array | Uint8Array>(a: T | null): T | null => {
    if (!a) return null;
    // meshInput's copies are sent as they are (a copy may be the start of a larger spare buffer: spare.ts), and
    // the caller's arrays with transfer: true when they are all of their buffer
    const whole = a.buffer instanceof ArrayBuffer && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength;
    let out: T;
    try {
      out = owned.has(a) || (whole && options.transfer === true) ? a : copyOf(a);
    } catch (e) {
      throw new NavBakeError(
        'NB_ERR_OUT_OF_MEMORY',
        `navbake.bake: out of memory copying ${a.byteLength} bytes of geometry for the worker: ${(e as Error)?.message ?? e}`,
      );
    }
    // each buffer once: the caller's arrays may be views of one buffer (a transfer list naming it twice is refused)
    if (!transfer.includes(out.buffer as ArrayBuffer)) transfer.push(out.buffer as ArrayBuffer);
    return out;
  };
  const req = {
    positions: pass(mesh.positions)!,
    indices: pass(mesh.indices),
    areas: pass(mesh.areas),
    volumes: mesh.volumes ?? null,
    links: mesh.links ?? null,
    config: values,
    testExitAtStage: options.testExitAtStage,
  };
  const task: TaskHandle = pool.run(req, transfer, (p: ProgressReply) => onProgress?.(progressOf(p.stage, p.done, p.total)), workers as number);
  const result = await settle(task, signal);
  return adoptNavmesh(w, w.load(result.bytes!));
}

/** A tiled bake: the navmesh exists from the start and fills up tile by tile (onTile). */
async function bakeTiled(
  w: Wasm,
  mesh: MeshInput,
  values: Float64Array,
  grid: Grid,
  focus: [number, number, number] | null,
  workers: number | false,
  options: BakeOptionsWithHooks,
): Promise<NavMesh> {
  const { signal, onProgress } = options;
  const nav = adoptNavmesh(w, w.navmeshCreate(grid.params));
  const caches = options.obstacles ? new TileCaches(w, values, grid.params, mesh.links ?? null, workers) : null;
  if (caches) markObstaclesBaking(nav);
  const job: TiledJob = {
    mesh,
    config: values,
    params: grid.params,
    nav,
    focus,
    caches,
    signal,
    onTile: options.onTile,
    onProgress: onProgress && ((done, total) => onProgress({ stage: 'tiles', done, total })),
    testExitAtStage: options.testExitAtStage,
  };
  try {
    if (workers === false) bakeTilesHere(w, job);
    else await bakeTilesInWorkers(job, workers, grid.tiles.length / 2);
    if (signal?.aborted) throw abortReason(signal);
    // disposed from onTile (the last tile's too): the bake has nothing to give, as when a tile came after it
    if (nav.disposed) throw new NavBakeError('NB_ERR_DISPOSED', 'navbake.bake: the navmesh was disposed during the bake (from onTile)');
  } catch (e) {
    nav.dispose();
    throw abortedAs(e, signal);
  }
  if (caches) attachTileCaches(nav, caches);
  return nav;
}

/** workers: false, solo -- the same work on the calling thread; abort is checked at every progress report. */
function bakeHere(w: Wasm, mesh: MeshInput, values: Float64Array, options: BakeOptionsWithHooks, staged: HeapMesh | null): NavMesh {
  const { signal, onProgress } = options;
  try {
    return adoptNavmesh(w, w.bakeNavmesh(mesh, values, hereProgress(onProgress, signal), staged));
  } catch (e) {
    throw abortedAs(e, signal);
  }
}
