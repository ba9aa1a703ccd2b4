/**
 * Voxels: a level's solid space as a bit-packed occupancy grid (one bit per voxel), and 3D paths through it for
 * agents a navmesh cannot carry -- ones that climb walls and ceilings, or fly -- as well as walkers.
 *
 * ```ts
 * const grid = await voxelize({ positions, indices }, { cellSize: 0.25, cellHeight: 0.25 });
 * const { status, points } = grid.findPath(from, to, { move: 'fly', agentHeight: 0.5, agentRadius: 0.25 });
 * ```
 */
import { abortSignal, allocate, bool, f32, intIn, invalid, knownKeys, notDetached, num, optionsObject, shown, vec3 } from './args.js';
import { bakeOptions, configFor, hereProgress, meshInput, progressOf, snapshot, workerCopies, type BakeProgress, type Geometry } from './bake.js';
import { DEFAULTS, shortFloat, type NavBakeConfig } from './config.js';
import { abortedAs, abortReason, NavBakeError, onAbort } from './errors.js';
import type { Vec3Like } from './navmesh.js';
import { settle, sharedPool, workersAvailable } from './pool.js';
import { mainWasm, wasmModule } from './runtime.js';
import { keepSpares, spareFor } from './spare.js';
import { PATH_STATUS, type PathStatus, type Vec3, type VoxelLayout, type Wasm } from './wasm.js';

export type { VoxelLayout } from './wasm.js';

/** voxelize()'s options. */
export interface VoxelizeOptions {
  /** `false` rasterizes on the calling thread (blocking it); a number runs it in the bake worker pool. @default a worker */
  workers?: number | false | undefined;
  /** Aborting rejects with the signal's reason and stops the work. */
  signal?: AbortSignal | undefined;
  /** Called as the triangles are rasterized (stage 'rasterize'). */
  onProgress?: ((p: BakeProgress) => void) | undefined;
  /**
   * [world] empty space added above the mesh's top, so that agents can stand on its highest surfaces and fly over
   * them (a path's voxels all lie inside the grid). Rounded up to whole voxels. @default config.agentHeight
   */
  headroom?: number | undefined;
  /**
   * Make solid the free space nothing outside can reach: the inside of closed meshes (pillars, thick walls, rocks),
   * which rasterization leaves empty, so that a point on such a surface never snaps into it. `true`: space that
   * cannot be reached, between free voxels sharing a face, from outside the grid. An array of points: nor from any
   * of them -- for a level whose outer walls, floor and roof close the grid in, give a point in its open space (or
   * its inside is filled too). A point in a solid voxel (feet on a floor) seeds from the voxel above it; when that
   * is solid too, NB_ERR_INVALID_ARG. {@link VoxelGrid.filled} says how many voxels were filled. @default false
   */
  fillEnclosed?: boolean | readonly Vec3Like[] | undefined;
}

/** An occupancy grid as data: its layout and its words (see {@link VoxelGrid.occupancy} for the bit order). */
export interface VoxelGridData extends VoxelLayout {
  /** one bit per voxel, ceil(x * y * z / 32) words (a copy) */
  words: Uint32Array<ArrayBuffer>;
}

/**
 * How the agent moves: `walk` stands on solid ground and steps up or down at most `agentClimb` between
 * neighbouring columns (8 directions); `climb` clings to any surface -- floors, walls, ceilings -- and rounds
 * ledges (26 directions); `fly` goes anywhere free (26 directions). No move cuts a corner past solid voxels.
 */
export type VoxelMove = 'walk' | 'climb' | 'fly';

const MOVES: Readonly<Record<VoxelMove, number>> = { walk: 0, climb: 1, fly: 2 };

/** VoxelGrid.findPath's options: the agent and the search. */
export interface VoxelPathOptions {
  /** How the agent moves (see {@link VoxelMove}). @default 'walk' */
  move?: VoxelMove | undefined;
  /** [world] the agent's height, rounded up to whole voxels (at least one). @default 2 (DEFAULTS.agentHeight) */
  agentHeight?: number | undefined;
  /** [world] how far the agent reaches to each side along x and z, rounded up to whole voxels. @default 0 (one voxel wide) */
  agentRadius?: number | undefined;
  /** [world] walk: the highest step up or down, rounded down to whole voxels. @default 0.9 (DEFAULTS.agentMaxClimb) */
  agentClimb?: number | undefined;
  /**
   * Keep only the points where the path turns: the line between two kept voxels' centres stays in voxels where the
   * agent can be (a walker's, in x and z: draw it on the ground); the line between their feet may clip a corner by
   * half a voxel. @default true
   */
  smooth?: boolean | undefined;
  /**
   * A* search nodes: a path that needs more comes back 'partial' (as an unreachable end does: `exhausted` tells
   * them apart). 1..4194304. The pool
   * is shared by the thread's grids, about 70 bytes a node; another size rebuilds it. @default 65536
   */
  maxNodes?: number | undefined;
  /**
   * [world] how far from `start` and `end` to look for a voxel the agent can be at (the distance between voxels):
   * a point on a floor lies in the floor's solid voxel or in the free one above it, one inside a wall finds the
   * nearest free place. At most 64 voxels. @default agentHeight, at least one voxel, at most 64 voxels
   */
  searchRadius?: number | undefined;
  /**
   * 1: the shortest path. Above 1 (at most 10): weighted A*, a path at most this many times longer than the shortest
   * (before smoothing) for a search that visits far fewer voxels where obstacles stand between the ends: a flight
   * across a level can need ten times fewer nodes at 1.5. @default 1
   */
  heuristicWeight?: number | undefined;
}

/** VoxelGrid.findPathAsync's options. */
export interface VoxelPathAsyncOptions extends VoxelPathOptions {
  /** Aborting rejects with the signal's reason: a search waiting its turn at once, a running one at its next slice. */
  signal?: AbortSignal | undefined;
  /**
   * [ms] how long the search runs at a time before the thread gets back to its other work (rendering, input);
   * slices are sized from the search's measured speed. 0.1..1000. @default 4
   */
  sliceMs?: number | undefined;
}

/** A voxel path (VoxelGrid.findPath, findPathAsync). */
export interface VoxelPathResult {
  /**
   * 'complete': the path reaches the voxel found for `end`; 'partial': `end` cannot be reached (or maxNodes ran
   * out) and the path ends at the reached voxel nearest to it; 'none': no voxel where the agent can be lies
   * within searchRadius of `start` or of `end`.
   */
  status: PathStatus;
  /** World points, x y z each: the bottom centre of each path voxel (the agent's feet). */
  points: Float32Array<ArrayBuffer>;
  /** The path's voxels, x y z each (grid coordinates). */
  voxels: Int32Array<ArrayBuffer>;
  /**
   * The search ran out of nodes (maxNodes) before it ended: a 'partial' path may reach further with more, and a
   * 'complete' one may not be the shortest. False when the end is simply out of reach.
   */
  exhausted: boolean;
  /** Search nodes used (0 for 'none'): for sizing maxNodes. */
  nodes: number;
}

const PATH_KEYS = ['move', 'agentHeight', 'agentRadius', 'agentClimb', 'smooth', 'maxNodes', 'searchRadius', 'heuristicWeight'] as const;
const ASYNC_KEYS = [...PATH_KEYS, 'signal', 'sliceMs'] as const;
const DEFAULT_NODES = 65536;
const MAX_NODES = 4194304;
/** nb_voxel_nearest scans a cube of (2 n + 1)^3 voxels at worst */
const MAX_SEARCH_VOXELS = 64;
/** layers of headroom: C's limit, NB_SPAN_MAX_HEIGHT */
const MAX_HEADROOM = 8191;
/** voxel coordinates handed to C stay well inside int32 whatever the point */
const COORD_LIMIT = 1 << 30;

/** Wasm objects of one grid; also what the FinalizationRegistry frees when a VoxelGrid is forgotten. */
interface Handle {
  w: Wasm;
  words: number;
  wordCount: number;
}

function release(h: Handle): void {
  if (h.words) {
    h.w.freeWords(h.words);
    const t = held.get(h.w);
    if (t) {
      t.grids--;
      t.bytes -= h.wordCount * 4;
    }
  }
  h.words = 0;
}

/** The grids of each wasm instance not disposed yet, and their words' bytes: named when its memory runs out. */
const held = new WeakMap<Wasm, { grids: number; bytes: number }>();

/** NB_ERR_OUT_OF_MEMORY saying how much of the memory grids not disposed hold (the usual cause: grids forgotten in a
 * loop, which the garbage collector, not seeing the wasm memory they hold, may never free). */
function memoryNamed(e: unknown, w: Wasm): unknown {
  const t = held.get(w);
  if (!(e instanceof NavBakeError) || e.code !== 'NB_ERR_OUT_OF_MEMORY' || !t || t.grids === 0) return e;
  const mb = (t.bytes / 2 ** 20).toFixed(1);
  return new NavBakeError(e.code, `${e.message} (${t.grids} VoxelGrid${t.grids === 1 ? '' : 's'} not disposed hold ${mb} MB of this wasm memory: dispose() those you are done with)`);
}

/**
 * The search pool of each wasm instance, shared by all its grids (a search never outlives its call): about 70 bytes
 * per node, 4.6 MB at the default 65536. A call with another maxNodes replaces it.
 */
const pools = new WeakMap<Wasm, { query: number; nodes: number }>();

function searchPool(w: Wasm, nodes: number): number {
  const p = pools.get(w);
  if (p?.nodes === nodes) return p.query;
  if (p) {
    pools.delete(w);
    w.voxelQueryDestroy(p.query);
  }
  const query = w.voxelQueryCreate(nodes);
  pools.set(w, { query, nodes });
  return query;
}

/** A search's arguments, checked and in voxels. */
interface SearchArgs {
  args: Int32Array;
  weight: number;
  maxNodes: number;
  /** [world] how far from start and end a place may be (the voxel cube in args covers this sphere) */
  search: number;
}

/** Float32 bits, for layerBottom. */
const bits32 = new Float32Array(1);
const bitsInt = new Int32Array(bits32.buffer);

/**
 * The y of layer y's bottom as float32, nudged up where rounding put origin + y * cellHeight just below the layer
 * (so that voxelAt and a search from the point find the voxel it came from, not the one below).
 */
function layerBottom(origin: number, ch: number, y: number): number {
  let v = Math.fround(origin + y * ch);
  for (let k = 0; k < 8 && Math.floor((v - origin) / ch) < y; k++) {
    bits32[0] = v;
    if (v === 0) bitsInt[0] = 1; // the smallest positive float32
    else bitsInt[0] += v > 0 ? 1 : -1; // one float32 up
    v = bits32[0];
  }
  return v;
}

type RawPath = ReturnType<Wasm['voxelPathEnd']>;

const NO_PATH: RawPath = { status: 0, start: [0, 0, 0], end: [0, 0, 0], voxels: new Int32Array(0), exhausted: false, nodes: 0 };

/** One findPathAsync call waiting for its turn or running. grid keeps the VoxelGrid (and so its words) alive. */
interface Job {
  grid: VoxelGrid;
  h: Handle;
  a: SearchArgs;
  cs: number;
  ch: number;
  signal: AbortSignal | undefined;
  sliceMs: number;
  resolve(r: RawPath): void;
  reject(e: unknown): void;
  /** removes the abort listener */
  done(): void;
}

/**
 * findPathAsync's searches on each wasm instance run one at a time, in the order asked, on a pool of their own (a
 * sliced search keeps its state in the pool between slices, so a findPath meanwhile must not use it).
 */
const queues = new WeakMap<Wasm, Queue>();
/** taskStart: when the thread's current task began running searches (a task runs for about sliceMs in all). */
interface Queue {
  jobs: Job[];
  running: boolean;
  query: number;
  nodes: number;
  taskStart: number;
}

/** Back to the event loop: a macrotask, so that timers, I/O, input and rendering get their turn. */
let yieldThread: (() => Promise<void>) | null = null;
function nextTask(): Promise<void> {
  if (!yieldThread) {
    const immediate = (globalThis as { setImmediate?: (cb: () => void) => unknown }).setImmediate; // Node
    if (typeof immediate === 'function') {
      yieldThread = () => new Promise<void>((r) => immediate(r));
    } else {
      // not setTimeout(0): browsers stretch nested timeouts to 4 ms
      const ch = new MessageChannel();
      const waiting: (() => void)[] = [];
      ch.port1.onmessage = () => waiting.shift()?.();
      yieldThread = () => new Promise<void>((r) => {
        waiting.push(r);
        ch.port2.postMessage(0);
      });
    }
  }
  return yieldThread();
}

/** method: the call, named in the message */
const disposedError = (method?: string) =>
  new NavBakeError('NB_ERR_DISPOSED', `navbake: ${method ? `VoxelGrid.${method}: ` : ''}this VoxelGrid was disposed`);

async function runQueue(w: Wasm): Promise<void> {
  const qs = queues.get(w)!;
  qs.running = true;
  qs.taskStart = performance.now();
  try {
    for (let job = qs.jobs.shift(); job; job = qs.jobs.shift()) {
      try {
        job.resolve(await runJob(w, qs, job));
      } catch (e) {
        job.reject(e);
      } finally {
        job.done();
      }
    }
  } finally {
    qs.running = false;
  }
}

/** The least time a findPathAsync slice is started with (less left of a task: the thread is given back first). */
const MIN_SLICE_MS = 0.05;

async function runJob(w: Wasm, qs: Queue, job: Job): Promise<RawPath> {
  const { h, a, signal } = job;
  if (signal?.aborted) throw abortReason(signal);
  if (!h.words) throw disposedError('findPathAsync');
  // Each task runs for about sliceMs in all: what is left of it after the work before (the last search's end, the
  // pool made, the last slots emptied, the search begun) goes to the next piece of work, or the thread is given
  // back first.
  const left = () => job.sliceMs - (performance.now() - qs.taskStart);
  const pause = async () => {
    await nextTask();
    qs.taskStart = performance.now();
    if (signal?.aborted) throw abortReason(signal);
    if (!h.words) throw disposedError('findPathAsync');
  };
  if (qs.nodes !== a.maxNodes) {
    if (qs.query) w.voxelQueryDestroy(qs.query);
    qs.query = 0;
    qs.query = w.voxelQueryCreate(a.maxNodes);
    qs.nodes = a.maxNodes;
  }
  // The pool's slots, emptied a slice at a time: those of a new pool (the first touch of fresh memory: about half a
  // second for 4M nodes' 128 MB), or those the last search filled (40 ms after 4M nodes).
  for (;;) {
    const ms = left();
    if (ms >= MIN_SLICE_MS && w.voxelQueryReset(qs.query, ms) === 0) break;
    await pause();
  }
  const search = w.voxelPathBegin(qs.query, h.words, a.args, job.cs, job.ch, a.weight, a.search);
  if (!search) return NO_PATH;
  let ended = false;
  try {
    // Slices timed inside the wasm, which reads the clock every 16 expansions: a count of expansions sized from the
    // last slice's rate overshot whenever the search got slower (fresh memory touched, wide agents' clearance
    // tests), up to 14-26 ms at 4 ms.
    for (;;) {
      const ms = left();
      if (ms >= MIN_SLICE_MS && w.voxelPathStep(search, ms)) break;
      await pause();
    }
    ended = true;
    return w.voxelPathEnd(search, a.maxNodes);
  } finally {
    if (!ended) w.voxelPathAbandon(search);
  }
}

const registry = new FinalizationRegistry<Handle>(release);
const ADOPT = Symbol('adopt');
const at = (method: string, arg: string) => `navbake: VoxelGrid.${method}: ${arg}`;

/** Rounded voxel counts: a tiny epsilon keeps 2.0 / 0.2 (10.000000000000002 in doubles) at 10. */
const ceilVoxels = (v: number) => Math.ceil(v - 1e-6);
const floorVoxels = (v: number) => Math.floor(v + 1e-6);

/**
 * Rasterizes the triangles (all of them: walkable or not, as bake() does before filtering) into solid voxels of
 * config.cellSize x config.cellHeight x config.cellSize over the mesh's bounds. Only surfaces are solid: the inside
 * of a closed mesh is free space. The other config fields do not matter here but are checked as bake() checks them;
 * geometry.volumes and links are refused (empty lists pass: the geometry given to bake() can come here as it is).
 * Rejects with a NavBakeError (bad geometry or config, NB_ERR_TOO_LARGE from
 * 2^32 voxels, NB_ERR_OUT_OF_MEMORY past the 2 GB of wasm memory) or the abort reason.
 */
export async function voxelize(geometry: Geometry, config?: NavBakeConfig | null, opts?: VoxelizeOptions | null): Promise<VoxelGrid> {
  const options = bakeOptions('navbake.voxelize', opts, ['workers', 'signal', 'onProgress', 'headroom', 'fillEnclosed']);
  const { signal, onProgress } = options;
  if (signal?.aborted) throw abortReason(signal);
  for (const key of ['volumes', 'links'] as const) {
    const list = (geometry as Geometry | null)?.[key];
    if (list != null && !(Array.isArray(list) && list.length === 0)) {
      throw invalid(`navbake.voxelize: geometry.${key} are for bake() (they mark the navmesh, not solid space): leave them out`);
    }
  }
  const mesh = meshInput(geometry, 'navbake.voxelize').mesh; // read at the call
  const fill = fillSeeds(options.fillEnclosed);
  const { w, values, field } = await configFor(snapshot(config), signal);
  const room = options.headroom === undefined ? field('agentHeight') : num('navbake.voxelize: options.headroom', options.headroom);
  if (!(room >= 0)) throw invalid(`navbake.voxelize: options.headroom must be >= 0 (got ${room})`);
  const headroom = ceilVoxels(room / Math.fround(field('cellHeight')));
  if (headroom > MAX_HEADROOM) {
    throw invalid(`navbake.voxelize: options.headroom (${room}) is ${headroom} voxel layers; at most ${MAX_HEADROOM}`);
  }
  const voxels = tooManyVoxels(mesh.positions, Math.fround(field('cellSize')), Math.fround(field('cellHeight')), headroom);
  const workers = options.workers ?? 1;
  if (workers === false || !workersAvailable()) {
    try {
      const v = w.voxelize(mesh, values, headroom, fill, false, hereProgress(onProgress, signal));
      return new VoxelGrid(ADOPT, w, v, v.words, v.filled);
    } catch (e) {
      throw memoryNamed(abortedAs(e, signal), w);
    }
  }

  const pool = sharedPool(() => wasmModule());
  const { copies, transfer } = workerCopies(mesh);
  // The words come back in a buffer this thread sends along when it has one of about their size (spare.ts): each
  // grid's words went into fresh memory before (dungeon's 2.2 MB made a worker voxelize 6 ms slower than one here).
  const out = spareFor(4 * Math.ceil(voxels / 32));
  const req = { type: 'voxelize' as const, ...copies, config: values, headroom, fill, out };
  const task = pool.run(req, out ? [...transfer, out] : transfer, (p) => onProgress?.(progressOf(p.stage, p.done, p.total)), workers);
  const r = await settle(task, signal);
  if (!r.voxels) throw new NavBakeError('NB_ERR_WORKER', 'navbake.voxelize: the worker sent no voxels');
  let words: number;
  try {
    words = w.putWords(r.voxels.words);
  } catch (e) {
    throw memoryNamed(e, w);
  }
  const grid = new VoxelGrid(ADOPT, w, r.voxels, words, r.voxels.filled);
  keepSpares([r.voxels.words.buffer]); // copied into the heap: free for the next grid's words
  return grid;
}

/** voxelize's options.fillEnclosed as the seeds C takes: null (no fill), or world points (none: the outside only). */
function fillSeeds(v: unknown): Float32Array | null {
  const where = 'navbake.voxelize: options.fillEnclosed';
  if (v === undefined || v === false) return null;
  if (v === true) return new Float32Array(0);
  if (!Array.isArray(v)) throw invalid(`${where} must be true, false or an array of points (got ${shown(v)})`);
  const out = new Float32Array(v.length * 3);
  v.forEach((p, i) => out.set(vec3(`${where}[${i}]`, p), i * 3));
  return out;
}

/**
 * Refuses a grid of 2^32 voxels or more before rasterizing (C checks the exact count again after): the mesh's
 * bounds in voxels as C counts them, plus the headroom. Returns that count (0: no vertices).
 */
function tooManyVoxels(positions: Float32Array, cs: number, ch: number, headroom: number): number {
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  for (let i = 0; i + 2 < positions.length; i += 3) {
    for (let k = 0; k < 3; k++) {
      const v = positions[i + k];
      if (v < lo[k]) lo[k] = v;
      if (v > hi[k]) hi[k] = v;
    }
  }
  if (!(hi[0] >= lo[0])) return 0; // no vertices: C names the empty mesh
  // as C sizes it: whole cells past the farthest vertex along x and z; in y, the layers up to the top vertex's, which a
  // surface there fills (one layer for a flat mesh, and the layer above the top of one whose top lies on a layer
  // boundary), plus the headroom
  const [x, y, z] = [Math.floor((hi[0] - lo[0]) / cs) + 1, Math.floor((hi[1] - lo[1]) / ch) + 1 + headroom, Math.floor((hi[2] - lo[2]) / cs) + 1];
  if (x * y * z >= 2 ** 32) {
    throw new NavBakeError(
      'NB_ERR_TOO_LARGE',
      `navbake.voxelize: the grid would be about ${x} x ${y} x ${z} voxels, over 2^32: use a larger cellSize or cellHeight`,
    );
  }
  return x * y * z;
}

/** Voxels in a grid of these dims, checked: whole numbers >= 1 whose product is below 2^32. */
/** The checked voxel counts (read once), and their product. */
function voxelCount(where: string, dims: unknown): { n: number; d: [number, number, number] } {
  if (dims === null || typeof dims !== 'object' || (dims as ArrayLike<unknown>).length !== 3) {
    throw invalid(`${where} must be [x, y, z], three voxel counts (got ${shown(dims)})`);
  }
  const given = dims as ArrayLike<unknown>;
  const d: [number, number, number] = [0, 0, 0];
  for (let k = 0; k < 3; k++) d[k] = intIn(`${where}[${k}]`, given[k], 1, 2 ** 30);
  const n = d[0] * d[1] * d[2];
  if (n >= 2 ** 32) {
    throw new NavBakeError('NB_ERR_TOO_LARGE', `${where}: ${d[0]} x ${d[1]} x ${d[2]} = ${n} voxels; at most 2^32 - 1`);
  }
  return { n, d };
}

/**
 * Solid voxels and 3D path searches through them. Made by {@link voxelize} or, from occupancy data of your own or
 * a saved {@link occupancy}, by {@link VoxelGrid.create}. The words live in the main thread's wasm memory until
 * dispose() (a FinalizationRegistry frees forgotten grids).
 */
export class VoxelGrid {
  #h: Handle | null;
  readonly #layout: VoxelLayout;
  readonly #filled: number;

  /** @internal use voxelize() or VoxelGrid.create() */
  constructor(token: typeof ADOPT, w: Wasm, layout: VoxelLayout, words: number, filled = 0) {
    if (token !== ADOPT) throw new TypeError('VoxelGrid: use voxelize() or VoxelGrid.create()');
    const [x, y, z] = layout.dims;
    // float32 sizes read as the decimal given (0.3, not 0.30000001192092896)
    this.#layout = { origin: [...layout.origin], cellSize: shortFloat(layout.cellSize), cellHeight: shortFloat(layout.cellHeight), dims: [x, y, z] };
    this.#h = { w, words, wordCount: Math.ceil((x * y * z) / 32) };
    const t = held.get(w) ?? { grids: 0, bytes: 0 };
    held.set(w, t);
    t.grids++;
    t.bytes += this.#h.wordCount * 4;
    this.#filled = filled;
    registry.register(this, this.#h, this);
  }

  /**
   * A grid over occupancy words of your own (or from {@link occupancy}): voxel (x, y, z) is solid when bit
   * `i & 31` of `words[i >> 5]` is set, with `i = x + dims[0] * (z + dims[2] * y)` (x fastest, then z, then y:
   * each horizontal slice is contiguous). `words` must hold exactly ceil(x * y * z / 32) words; it is copied.
   * `origin` may be any {@link Vec3Like}.
   */
  static async create(
    data: Omit<VoxelGridData, 'origin' | 'dims' | 'words'> & {
      readonly origin: Vec3Like;
      readonly dims: readonly [number, number, number];
      readonly words: Uint32Array;
    },
  ): Promise<VoxelGrid> {
    const where = 'navbake: VoxelGrid.create: data';
    if (data === null || typeof data !== 'object') {
      throw invalid(`${where} must be { words, dims, origin, cellSize, cellHeight } (got ${shown(data)})`);
    }
    knownKeys(where, data, ['words', 'dims', 'origin', 'cellSize', 'cellHeight'], 'field');
    // Everything is read once, here, at the call: what the checks passed is what the grid gets, whatever the caller
    // does to `data` while the module loads.
    const { n, d: dims } = voxelCount(`${where}.dims`, data.dims);
    const origin = vec3(`${where}.origin`, data.origin);
    const size = { cellSize: data.cellSize, cellHeight: data.cellHeight };
    for (const k of ['cellSize', 'cellHeight'] as const) {
      const v = f32(`${where}.${k}`, size[k]);
      if (!(v > 0)) {
        // (a positive number that float32 rounds to 0 says so: "must be > 0" would puzzle)
        throw invalid(`${where}.${k} must be > 0${(size[k] as number) > 0 ? ' as a float32 (it rounds to 0)' : ''} (got ${size[k]})`);
      }
    }
    const given = data.words;
    if (!(given instanceof Uint32Array)) throw invalid(`${where}.words must be a Uint32Array (got ${shown(given)})`);
    notDetached(`${where}.words`, given);
    const need = Math.ceil(n / 32);
    if (given.length !== need) {
      throw invalid(`${where}.words has ${given.length} words; dims ${dims.join(' x ')} need ${need}`);
    }
    const words = allocate(`${where}.words`, need, () => given.slice());
    const w = await mainWasm();
    const layout: VoxelLayout = { origin, cellSize: size.cellSize, cellHeight: size.cellHeight, dims };
    let at: number;
    try {
      at = w.putWords(words);
    } catch (e) {
      throw memoryNamed(e, w);
    }
    return new VoxelGrid(ADOPT, w, layout, at);
  }

  /** World position of voxel (0, 0, 0)'s minimum corner. */
  get origin(): Vec3 {
    this.#live('origin');
    return [...this.#layout.origin];
  }

  /** [world] voxel size along x and z */
  get cellSize(): number {
    this.#live('cellSize');
    return this.#layout.cellSize;
  }

  /** [world] voxel size along y */
  get cellHeight(): number {
    this.#live('cellHeight');
    return this.#layout.cellHeight;
  }

  /** Voxels voxelize's `fillEnclosed` made solid (0 without it, and for VoxelGrid.create). */
  get filled(): number {
    this.#live('filled');
    return this.#filled;
  }

  /** Voxels along x, y, z. */
  get dims(): [number, number, number] {
    this.#live('dims');
    return [...this.#layout.dims];
  }

  /** true once dispose() ran */
  get disposed(): boolean {
    return this.#h === null;
  }

  /** Whether voxel (x, y, z) is solid; false outside the grid. */
  isSolid(x: number, y: number, z: number): boolean {
    const h = this.#live('isSolid');
    const [dx, dy, dz] = this.#layout.dims;
    for (const [name, v] of [['x', x], ['y', y], ['z', z]] as const) {
      if (!Number.isInteger(v)) throw invalid(`${at('isSolid', name)} must be an integer (got ${shown(v)})`);
    }
    if (x < 0 || y < 0 || z < 0 || x >= dx || y >= dy || z >= dz) return false;
    const i = x + dx * (z + dz * y);
    return ((h.w.wordsView(h.words, h.wordCount)[i >>> 5] >>> (i & 31)) & 1) === 1;
  }

  /** The voxel a world point is in, [x, y, z] (it may lie outside the grid). */
  voxelAt(point: Vec3Like): Vec3 {
    this.#live('voxelAt');
    return this.#voxelOf(vec3(at('voxelAt', 'point'), point));
  }

  /** The bottom centre of voxel (x, y, z) in world coordinates: where an agent standing in it has its feet. */
  pointOf(x: number, y: number, z: number): Vec3 {
    this.#live('pointOf');
    const { origin: o, cellSize: cs, cellHeight: ch } = this.#layout;
    for (const [name, v] of [['x', x], ['y', y], ['z', z]] as const) {
      if (!Number.isInteger(v)) throw invalid(`${at('pointOf', name)} must be an integer (got ${shown(v)})`);
    }
    return [Math.fround(o[0] + (x + 0.5) * cs), layerBottom(o[1], ch, y), Math.fround(o[2] + (z + 0.5) * cs)];
  }

  /** A copy of the grid as data: for a worker, a file, or {@link VoxelGrid.create}. */
  occupancy(): VoxelGridData {
    const h = this.#live('occupancy');
    const l = this.#layout;
    return { origin: [...l.origin], cellSize: l.cellSize, cellHeight: l.cellHeight, dims: [...l.dims], words: h.w.wordsView(h.words, h.wordCount).slice() };
  }

  /**
   * A path from `start` to `end` (world points) for an agent moving as `options.move` says. Each end snaps to
   * the nearest voxel the agent can be at within searchRadius. Runs on the calling thread at once; its cost is
   * bounded by maxNodes (see findPathAsync for long searches). Bad arguments throw NavBakeError.
   */
  findPath(start: Vec3Like, end: Vec3Like, options?: VoxelPathOptions | null): VoxelPathResult {
    const h = this.#live('findPath');
    const o = optionsObject<VoxelPathOptions>(at('findPath', 'options'), options, PATH_KEYS);
    const a = this.#searchArgs('findPath', start, end, o);
    const { cellSize: cs, cellHeight: ch } = this.#layout;
    const w = h.w;
    const search = w.voxelPathBegin(searchPool(w, a.maxNodes), h.words, a.args, cs, ch, a.weight, a.search);
    if (!search) return this.#result(NO_PATH);
    try {
      w.voxelPathStep(search, 0);
    } catch (e) {
      w.voxelPathAbandon(search);
      throw e;
    }
    return this.#result(w.voxelPathEnd(search, a.maxNodes));
  }

  /**
   * The same path as {@link findPath} gives, searched a slice at a time (about `sliceMs` each) with the thread
   * free for its other work in between, so that a long search (a flight across a big level, an unreachable end)
   * never freezes the page. Searches asked on the same thread run one at a time, in the order asked, on a node pool
   * of their own (about 70 bytes a node, as findPath's). Rejects with a NavBakeError for bad arguments,
   * NB_ERR_DISPOSED when the grid is disposed before the search ends, or the signal's reason when aborted.
   */
  async findPathAsync(start: Vec3Like, end: Vec3Like, options?: VoxelPathAsyncOptions | null): Promise<VoxelPathResult> {
    const h = this.#live('findPathAsync');
    const o = optionsObject<VoxelPathAsyncOptions>(at('findPathAsync', 'options'), options, ASYNC_KEYS);
    const a = this.#searchArgs('findPathAsync', start, end, o);
    const signal = abortSignal(at('findPathAsync', 'options.signal'), o.signal);
    const sliceMs = o.sliceMs === undefined ? 4 : num(at('findPathAsync', 'options.sliceMs'), o.sliceMs);
    if (!(sliceMs >= 0.1 && sliceMs <= 1000)) throw invalid(`${at('findPathAsync', 'options.sliceMs')} must be 0.1..1000 (got ${sliceMs})`);
    if (signal?.aborted) throw abortReason(signal);
    const w = h.w;
    let qs = queues.get(w);
    if (!qs) queues.set(w, (qs = { jobs: [], running: false, query: 0, nodes: 0, taskStart: 0 }));
    const { cellSize: cs, cellHeight: ch } = this.#layout;
    const raw = await new Promise<RawPath>((resolve, reject) => {
      // waiting for its turn: rejected at once (a running search sees the signal between slices)
      const stop = onAbort(signal, () => {
        const i = qs.jobs.indexOf(job);
        if (i < 0) return;
        qs.jobs.splice(i, 1);
        reject(abortReason(signal!));
      });
      const job: Job = { grid: this, h, a, cs, ch, signal, sliceMs, resolve, reject, done: stop };
      qs.jobs.push(job);
      if (!qs.running) void runQueue(w);
    });
    return this.#result(raw);
  }

  /** findPath's and findPathAsync's arguments checked, in voxels (method: for messages). */
  #searchArgs(method: string, start: Vec3Like, end: Vec3Like, o: VoxelPathOptions): SearchArgs {
    const s = vec3(at(method, 'start'), start);
    const e = vec3(at(method, 'end'), end);
    const move = o.move === undefined ? 'walk' : o.move; // null is refused, as for the other options
    if (!Object.hasOwn(MOVES, move)) throw invalid(`${at(method, 'options.move')} must be 'walk', 'climb' or 'fly' (got ${shown(o.move)})`);
    const world = (name: keyof VoxelPathOptions, fallback: number, min: number) => {
      const v = o[name] === undefined ? fallback : num(at(method, `options.${name}`), o[name]);
      if (!(v >= min)) throw invalid(`${at(method, `options.${name}`)} must be ${min > 0 ? '> 0' : '>= 0'} (got ${v})`);
      return v;
    };
    const { cellSize: cs, cellHeight: ch, dims } = this.#layout;
    const height = o.agentHeight === undefined ? DEFAULTS.agentHeight : num(at(method, 'options.agentHeight'), o.agentHeight);
    if (!(height > 0)) throw invalid(`${at(method, 'options.agentHeight')} must be > 0 (got ${height})`);
    const radius = world('agentRadius', 0, 0);
    const climb = world('agentClimb', DEFAULTS.agentMaxClimb, 0);
    const search = world('searchRadius', Math.max(height, cs, ch), 0); // the default: at least the agent's voxel
    const smooth = bool(at(method, 'options.smooth'), o.smooth) ?? true;
    const maxNodes = o.maxNodes === undefined ? DEFAULT_NODES : intIn(at(method, 'options.maxNodes'), o.maxNodes, 1, MAX_NODES);
    const weight = o.heuristicWeight === undefined ? 1 : num(at(method, 'options.heuristicWeight'), o.heuristicWeight);
    if (!(weight >= 1 && weight <= 10)) throw invalid(`${at(method, 'options.heuristicWeight')} must be 1..10 (got ${weight})`);
    const voxels = (name: string, v: number) => {
      if (v > 4096) throw invalid(`${at(method, `options.${name}`)} is ${Math.round(v)} voxels; at most 4096`);
      return v;
    };
    let searchVoxels = Math.max(ceilVoxels(search / cs), ceilVoxels(search / ch));
    if (o.searchRadius === undefined) searchVoxels = Math.min(searchVoxels, MAX_SEARCH_VOXELS); // the default never throws
    if (searchVoxels > MAX_SEARCH_VOXELS) {
      throw invalid(`${at(method, 'options.searchRadius')} (${search}) is ${searchVoxels} voxels; at most ${MAX_SEARCH_VOXELS}`);
    }
    const args = new Int32Array([
      ...dims,
      MOVES[move],
      voxels('agentHeight', Math.max(1, ceilVoxels(height / ch))),
      voxels('agentRadius', ceilVoxels(radius / cs)),
      voxels('agentClimb', floorVoxels(climb / ch)),
      smooth ? 1 : 0,
      ...this.#voxelOf(s),
      ...this.#voxelOf(e),
      searchVoxels,
    ]);
    return { args, weight, maxNodes, search };
  }

  #result(r: RawPath): VoxelPathResult {
    const { origin: org, cellSize: cs, cellHeight: ch } = this.#layout;
    const n = r.voxels.length / 3;
    const points = new Float32Array(r.voxels.length);
    for (let i = 0; i < n; i++) {
      points[3 * i] = org[0] + (r.voxels[3 * i] + 0.5) * cs;
      points[3 * i + 1] = layerBottom(org[1], ch, r.voxels[3 * i + 1]);
      points[3 * i + 2] = org[2] + (r.voxels[3 * i + 2] + 0.5) * cs;
    }
    return { status: PATH_STATUS[r.status] ?? 'none', points, voxels: r === NO_PATH ? new Int32Array(0) : r.voxels, exhausted: r.exhausted, nodes: r.nodes };
  }

  /**
   * Frees the wasm memory. Idempotent; any later call throws NavBakeError NB_ERR_DISPOSED. Call it: forgotten grids
   * are freed only when the garbage collector runs.
   */
  dispose(): void {
    const h = this.#h;
    if (!h) return;
    this.#h = null;
    registry.unregister(this);
    // its searches waiting for their turn reject now (a running one stops at its next slice)
    const qs = queues.get(h.w);
    for (const job of qs ? qs.jobs.filter((j) => j.h === h) : []) {
      qs!.jobs.splice(qs!.jobs.indexOf(job), 1);
      job.done();
      job.reject(disposedError('findPathAsync'));
    }
    release(h);
  }

  #voxelOf(p: Vec3): Vec3 {
    const { origin: o, cellSize: cs, cellHeight: ch } = this.#layout;
    const clamp = (v: number) => Math.min(COORD_LIMIT, Math.max(-COORD_LIMIT, Math.floor(v)));
    return [clamp((p[0] - o[0]) / cs), clamp((p[1] - o[1]) / ch), clamp((p[2] - o[2]) / cs)];
  }

  /** method: the call, named in the error when the grid was disposed */
  #live(method: string): Handle {
    const h = this.#h;
    if (!h) throw disposedError(method);
    return h;
  }
}
