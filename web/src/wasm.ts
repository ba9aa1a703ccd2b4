/**
 * The one file that touches the wasm heap. Everything here copies: inputs are copied in, outputs are copied out
 * into fresh typed arrays (a view of the heap would be detached by the next memory growth), and every temporary
 * allocation is freed in a `finally`. The main thread and each bake worker own one {@link Wasm} each.
 */
import createNavBake from './navbake.mjs';
import { NavBakeError, type NavBakeErrorCode } from './errors.js';
import { camelCase, NB_ZERO, shortFloat, type ConfigField } from './config.js';
import { isNode, nodeImport } from './env.js';
import type { InspectCounts, Inspection, StageTimes } from './inspect.js';
import { LINK_SIZE, VOLUME_BOX, VOLUME_CYLINDER, type VolumeData } from './volumes.js';

/**
 * A compiled `WebAssembly.Module`. Declared through `globalThis` so that the declarations need no DOM or WebWorker
 * lib: with one of them (which declare the `WebAssembly` namespace) this is `WebAssembly.Module`; in a project
 * without (lib ES20xx and @types/node, which does not declare it) it is `object`, rather than an error or `any`.
 * The same pattern as @types/node's own globals.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : object;

/**
 * How {@link init} finds the wasm. By default: `navbake.wasm` next to this module (the package exports the file as
 * `navbake/navbake.wasm`, for bundlers' URL imports and `import.meta.resolve`).
 */
export interface InitOptions {
  /** The wasm file's bytes (nothing is fetched). */
  wasmBinary?: ArrayBuffer | ArrayBufferView | undefined;
  /** An already compiled `WebAssembly.Module` (nothing is fetched or compiled). */
  wasmModule?: WasmModule | undefined;
  /** Maps the file name `navbake.wasm` to the URL to load it from (like Emscripten's `locateFile`). */
  locateFile?: ((file: string) => string | URL) | undefined;
  /**
   * Where the bake workers load their script from, for bundlers that leave the package's worker behind (esbuild,
   * Rollup) or a page that hosts it elsewhere: the package's `navbake/bake.worker.js`, one self-contained file.
   * Browser: a URL (relative ones against the page), started as a module Worker; one on another origin (a CDN,
   * served with CORS) is started through a same-origin `blob:` module that imports it. Node: a `file:` URL or a
   * path. Workers started after the call use it. Default: `bake.worker.js` next to this module.
   */
  workerUrl?: string | URL | undefined;
}

type Fn = (...args: number[]) => number;

/** The module object of navbake.mjs: the exports of c/src/wasm_api.c plus heap views (replaced when memory grows). */
interface RawModule {
  HEAPU8: Uint8Array;
  HEAP32: Int32Array;
  HEAPU32: Uint32Array;
  HEAPF32: Float32Array;
  HEAPF64: Float64Array;
  UTF8ToString(ptr: number): string;
  _malloc(size: number): number;
  _free(ptr: number): void;
  /** Called by the C progress callback (env.nbw_js_progress in navbake.mjs) when set; truthy = cancel. */
  onNavBakeProgress?: ((stage: number, done: number, total: number) => boolean) | undefined;
  [name: `_nbw_${string}`]: Fn;
}

// ---- loading -------------------------------------------------------------------------------------------------

const WASM_FILE = 'navbake.wasm';

async function readBytes(url: URL): Promise<ArrayBuffer | Uint8Array> {
  if (url.protocol === 'file:' && isNode) {
    const fs = await nodeImport<{ readFile(p: URL): Promise<Uint8Array> }>('node:fs/promises');
    return fs.readFile(url);
  }
  const res = await fetch(url, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${url.href}`);
  return res.arrayBuffer();
}

/** Fetches (or reads) and compiles the wasm. Streaming compilation where the server sends application/wasm. */
export async function compileWasm(opts: InitOptions = {}): Promise<WasmModule> {
  try {
    if (opts.wasmModule) {
      if (!(opts.wasmModule instanceof WebAssembly.Module)) throw new Error('options.wasmModule is not a WebAssembly.Module');
      return opts.wasmModule;
    }
    if (opts.wasmBinary) {
      const b = opts.wasmBinary;
      const bytes = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      return await WebAssembly.compile(bytes as BufferSource);
    }
    // The literal `new URL('./navbake.wasm', import.meta.url)` lets bundlers (Vite, webpack) find and emit the file.
    // A user's locateFile result is resolved against a copy of the module's URL: written as `new URL(expression,
    // import.meta.url)`, webpack would warn of a dependency it cannot know ("Critical dependency").
    const moduleUrl = import.meta.url;
    const url = opts.locateFile
      ? new URL(String(opts.locateFile(WASM_FILE)), moduleUrl)
      : new URL('./navbake.wasm', import.meta.url);
    if (url.protocol !== 'file:' && typeof WebAssembly.compileStreaming === 'function') {
      const res = await fetch(url, { credentials: 'same-origin' });
      if (!res.ok) throw new Error(`HTTP ${res.status} for ${url.href}`);
      if ((res.headers.get('content-type') ?? '').startsWith('application/wasm')) {
        return await WebAssembly.compileStreaming(res);
      }
      return await WebAssembly.compile(await res.arrayBuffer());
    }
    return await WebAssembly.compile((await readBytes(url)) as BufferSource);
  } catch (e) {
    throw new NavBakeError('NB_ERR_WASM_LOAD', `navbake: could not load the wasm module: ${(e as Error)?.message ?? e}`, {
      cause: e,
    });
  }
}

/** A fresh wasm instance (its own memory) of a compiled module. */
export async function instantiate(module: WasmModule): Promise<Wasm> {
  const raw = (await createNavBake({ wasmModule: module }).catch((e) => {
    throw new NavBakeError('NB_ERR_WASM_LOAD', `navbake: could not instantiate the wasm module: ${(e as Error)?.message ?? e}`, {
      cause: e,
    });
  })) as RawModule;
  return new Wasm(raw);
}

// ---- shapes ----------------------------------------------------------------------------------------------------

/** Bake stages in pipeline order (nb_stage), plus 'tiles' for tiled bakes (done/total = tiles). */
export type BakeStage =
  | 'rasterize'
  | 'filter'
  | 'compact'
  | 'erode'
  | 'areas'
  | 'regions'
  | 'contours'
  | 'polymesh'
  | 'detail'
  | 'tiles';

/**
 * The stages of a bake, in pipeline order: what `onProgress` reports as `stage` for a solo bake (inspect() and
 * voxelize() report some of them). A tiled bake reports `'tiles'` instead, which is a {@link BakeStage} but not
 * in this list. Frozen.
 */
export const STAGES: readonly BakeStage[] = Object.freeze<BakeStage[]>([
  'rasterize',
  'filter',
  'compact',
  'erode',
  'areas',
  'regions',
  'contours',
  'polymesh',
  'detail',
]);

/** Progress hook for the C bake: stage (nb_stage), done, total; returns true to cancel. */
export type CProgress = (stage: number, done: number, total: number) => boolean;

/** Triangles in the layout C reads. */
export interface MeshInput {
  positions: Float32Array;
  indices: Uint32Array | null;
  areas: Uint8Array | null;
  /** bake-time area volumes (volumes.ts) */
  volumes?: VolumeData[] | null;
  /** off-mesh links as nb_offmesh_link structs (volumes.ts linksData) */
  links?: Uint8Array | null;
  /** true: the arrays in shared memory are the library's own copies, which a tiled bake posts to its workers as they are */
  shared?: boolean;
}

/** Triangles copied into a wasm heap ahead of the work (Wasm.stageMesh): the nbw_* mesh arguments, and free(). */
export interface HeapMesh {
  readonly args: number[];
  free(): void;
}

/** A tiled-bake session on one wasm instance (Wasm.openSession). */
export interface GridSession {
  /** nb_grid_index pointer, 0 once closed */
  index: number;
  /** heap copies of the geometry, volumes, links, config (freed on close) */
  ptrs: number[];
  cfg: number;
  links: number;
  linkCount: number;
  linkBytes: Uint8Array | null;
  params: NavmeshParams;
  tilesX: number;
  tilesZ: number;
  /** per tile (x + z * tilesX): 1 when the index bucketed triangles into it (Wasm.candidateTiles) */
  candidates: Uint8Array;
}

/** Navmesh params for nbw_navmesh_create: origin xyz, tile width, tile depth, max tiles. */
export type NavmeshParams = [number, number, number, number, number, number];

/** A point or vector [x, y, z] as results give it (a fresh array, yours to keep or change). Inputs take any {@link Vec3Like}. */
export type Vec3 = [number, number, number];

/** Which polygons a query may use and what each area costs. */
export interface QueryFilter {
  /** Cost multiplier per area id (0..63); missing areas cost 1. */
  areaCost?: ArrayLike<number> | Readonly<Record<number, number>> | undefined;
  /** A polygon is usable when `flags & includeFlags` is not 0 ... @default 0xffff */
  includeFlags?: number | undefined;
  /** ... and `flags & excludeFlags` is 0. @default 0 */
  excludeFlags?: number | undefined;
}

/** Batch path results; pair i's points are `points[3 * offsets[i] .. 3 * offsets[i + 1]]`. */
export interface PathBatch {
  /** Per pair: 0 = none (no polygon near an end), 1 = partial, 2 = complete (see {@link PATH_STATUS}). */
  status: Uint8Array<ArrayBuffer>;
  /**
   * Per pair: 1 when the search ran out of nodes (options.maxNodes) before it ended: a partial path might reach
   * further with more, a complete one might be shorter. 0 when it ended on its own.
   */
  exhausted: Uint8Array<ArrayBuffer>;
  /** Per pair: length of the straight path [world]. */
  lengths: Float32Array<ArrayBuffer>;
  /** count + 1 offsets into points, in points (xyz triples). */
  offsets: Uint32Array<ArrayBuffer>;
  /** Every pair's path points, xyz. */
  points: Float32Array<ArrayBuffer>;
}

/** One array of a batch's chunks (the chunk itself when there is only one). */
export function join<T extends Float32Array<ArrayBuffer> | Uint8Array<ArrayBuffer> | Uint32Array<ArrayBuffer>>(parts: T[], Type: { new (n: number): T }): T {
  if (parts.length === 1) return parts[0];
  const out = new Type(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Per point of a path (findPath's pointFlags and pointRefs). */
export interface PathDetails {
  /** Per point, {@link PATH_POINT} bits: START, END, OFFMESH (the point starts or ends an off-mesh link). */
  pointFlags: Uint8Array<ArrayBuffer>;
  /**
   * Per point, the polygon entered there: at the start of an off-mesh link, the link's polygon (see
   * NavMesh.offMeshLink); 0 at the end.
   */
  pointRefs: Uint32Array<ArrayBuffer>;
}

/** An off-mesh link as baked (NavMesh.offMeshLink), with its polygon's current area and flags. */
export interface OffMeshLinkInfo {
  /** where the link starts (as baked, not snapped to the ground) */
  start: Vec3;
  /** where it ends */
  end: Vec3;
  /** each end attaches to the nearest polygon within this distance (xz) [world] */
  radius: number;
  /** whether paths may also take it from end to start */
  bidirectional: boolean;
  /** the link's userId: yours, to tell your links apart */
  userId: number;
  /** the link polygon's area id now (1..63; setPolygonFlags does not change it) */
  area: number;
  /** the link polygon's flags now (NavMesh.setPolygonFlags changes them) */
  flags: number;
  /** whether each end found a ground polygon within radius (in a loaded tile): else no path can take the link */
  attached: { start: boolean; end: boolean };
}

/** A voxel search begun on a query (voxelPathBegin): the query and its int32 results (nbw_voxel_out_count). */
export interface VoxelSearch {
  q: number;
  out: number;
}

/** Indices of nbw_voxel_path_*'s results (c/src/wasm_voxels.c's VO_*). */
const VO_STARTED = 10;
const VO_DONE = 11;

/** Where an occupancy grid lies: voxel (x, y, z) spans origin + (x, y, z) * (cellSize, cellHeight, cellSize). */
export interface VoxelLayout {
  /** world position of voxel (0, 0, 0)'s minimum corner */
  origin: Vec3;
  /** [world] voxel size along x and z */
  cellSize: number;
  /** [world] voxel size along y */
  cellHeight: number;
  /** voxels along x, y, z */
  dims: [number, number, number];
}

/**
 * Bits of {@link PathDetails.pointFlags} (the C library's NB_STRAIGHT_POINT_*): START (the path's first point),
 * END (its last), OFFMESH (the point starts or ends an off-mesh link: `pointRefs` there is the link's polygon at its
 * start). Frozen.
 */
export const PATH_POINT: { readonly START: 1; readonly END: 2; readonly OFFMESH: 4 } = Object.freeze({ START: 1, END: 2, OFFMESH: 4 });

/**
 * The path statuses by number: `PATH_STATUS[batch.status[i]]` names findPaths' status of pair i (0 'none': no
 * polygon near an end; 1 'partial': the path ends at the reachable point closest to the end; 2 'complete'). Frozen.
 */
export const PATH_STATUS = Object.freeze(['none', 'partial', 'complete'] as const);
/** How a path ended: see {@link PATH_STATUS}. */
export type PathStatus = (typeof PATH_STATUS)[number];

/** One polygon of a navmesh (NavMesh.polygons()). */
export interface PolygonInfo {
  /** Polygon reference: valid while its tile stays in the navmesh (a rebuilt or replaced tile gives new refs). */
  ref: number;
  /** xyz per vertex (off-mesh links: their two end points). */
  vertices: Float32Array<ArrayBuffer>;
  /** area id 1..63 (baked, or set by a volume or a link) */
  area: number;
  /** polygon flags, for QueryFilter includeFlags / excludeFlags (1 unless a link or setPolygonFlags set others) */
  flags: number;
  /** true for an off-mesh link's polygon (then `link` is set) */
  offMesh: boolean;
  /**
   * Off-mesh links only: what the link was baked with (`userId` is yours, to tell your links apart), and whether
   * each end found a ground polygon within `radius` (in a loaded tile): a link with an end not attached is in the
   * navmesh but no path can take it.
   */
  link?: { userId: number; bidirectional: boolean; radius: number; attached: { start: boolean; end: boolean } };
}

/** The walkable surface as indexed triangles (NavMesh.toGeometry()). */
export interface SurfaceGeometry {
  /** xyz per vertex */
  positions: Float32Array<ArrayBuffer>;
  /** three per triangle, counter-clockwise seen from above (normals point up) */
  indices: Uint32Array<ArrayBuffer>;
  /** area id per triangle */
  areas: Uint8Array<ArrayBuffer>;
}

// Scratch layout (bytes) for the small in/out arguments of queries. Queries never call back into JavaScript, so
// one block per instance is safe.
const S_A = 0; // vec3
const S_B = 16; // vec3
const S_HALF = 32; // vec3
const S_OUT = 48; // up to 8 floats
const S_REF = 96; // u32
const S_RNG = 112; // u64 (two u32, little-endian)
const S_INFO = 128; // 8 x i32
const S_VERTS = 256; // 12 x xyz
const SCRATCH_SIZE = 512;

/** C's NB_PATH_EXHAUSTED, or-ed into a pair's status: the search ran out of nodes. */
const PATH_EXHAUSTED = 4;

/** Pairs per call of a findPaths batch: 96 KB of pairs and about 0.8 MB of points at a time. */
const PATH_CHUNK = 4096;

/**
 * What changed in a navmesh since copies of it in workers (findPathsAsync's replicas, replica.ts) were last brought
 * up to date. Kept only for a navmesh that has copies (Wasm.trackChanges): every call that changes a navmesh's tiles or
 * flags goes through Wasm, which notes it here.
 */
export interface NavChanges {
  /** bumped by every change */
  gen: number;
  /** copies older than this are made anew (what changed before it is no longer listed) */
  floor: number;
  /** tile position ("x,z") -> gen of its last change (added, replaced or removed) */
  tiles: Map<string, number>;
  /** polygon ref -> [gen, flags] of its last setPolygonFlags */
  flags: Map<number, [number, number]>;
}

/**
 * The wasm objects a navmesh's queries use, made when first needed (0 until then): a NavMesh's, and each worker's
 * copy's (findPathsAsync). Wasm.querySetup makes and replaces them.
 */
export interface QueryObjects {
  /** the search of queries given no maxNodes, and its node count (it only grows) */
  query: number;
  queryNodes: number;
  /** the search of paths given maxNodes, and its node count */
  limited: number;
  limitedNodes: number;
  /** the filter of queries given none */
  filter: number;
  /** the filter of queries given one, and the values it holds (C's defaults when made: see filterUpdate) */
  custom: number;
  customValues: Float64Array | null;
}

/** Entries either list of a NavChanges holds before it is cleared (copies then start anew). */
const CHANGES_KEPT = 1 << 16;

/** The tile position a tile blob says it is at (its header: docs/FORMAT.md). */
export function blobTile(bytes: Uint8Array): [number, number] {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return [dv.getInt32(20, true), dv.getInt32(24, true)];
}

// ---- the instance ------------------------------------------------------------------------------------------------

export class Wasm {
  readonly m: RawModule;
  /** One context per instance: errors land in it, and every navmesh uses its allocator. Never destroyed. */
  readonly ctx: number;
  /** The C config table. */
  readonly fields: readonly ConfigField[];
  private readonly scratch: number;
  private readonly statusNames = new Map<number, string>();
  /** nb_bake's statistics (NB_STAT_COUNT doubles) of the last tile baked, and the table's names */
  private readonly stats: number;
  private readonly statNames: readonly string[];
  /** navmesh pointer -> its changes, for the navmeshes with copies in workers */
  private readonly changeLogs = new Map<number, NavChanges>();

  constructor(m: RawModule) {
    this.m = m;
    this.ctx = m._nbw_context_create();
    this.scratch = m._malloc(SCRATCH_SIZE);
    this.statNames = Array.from({ length: m._nbw_stat_count() }, (_, i) => m.UTF8ToString(m._nbw_stat_name(i)));
    this.stats = m._malloc(this.statNames.length * 8);
    if (!this.ctx || !this.scratch || !this.stats) {
      throw new NavBakeError('NB_ERR_OUT_OF_MEMORY', 'navbake: out of memory (context)');
    }
    const n = m._nbw_config_field_count();
    const fields: ConfigField[] = [];
    const probe = this.alloc(n * 8 * 2);
    try {
      for (let i = 0; i < n; i++) {
        const cName = m.UTF8ToString(m._nbw_config_field_name(i));
        // A field takes an explicit zero when C accepts NB_ZERO for it: ask C rather than keep a second table.
        m.HEAPF64.fill(0, probe >> 3, (probe >> 3) + n);
        m.HEAPF64[(probe >> 3) + i] = -1;
        const zeroAllowed = m._nbw_config_resolve(this.ctx, probe, probe + n * 8) === 0;
        fields.push({ name: camelCase(cName), cName, default: m._nbw_config_default(i), zeroAllowed });
      }
    } finally {
      m._free(probe);
      m._nbw_context_clear_error(this.ctx);
    }
    this.fields = fields;
  }

  // ---- errors ----

  statusName(status: number): string {
    let s = this.statusNames.get(status);
    if (s === undefined) {
      s = this.m.UTF8ToString(this.m._nbw_status_name(status));
      this.statusNames.set(status, s);
    }
    return s;
  }

  /** The context's last error as a NavBakeError (status: the call's own status when it returned one). */
  error(status?: number): NavBakeError {
    const st = status ?? this.m._nbw_status(this.ctx);
    const code = this.statusName(st) as NavBakeErrorCode;
    const msg = this.m._nbw_status(this.ctx) === st ? this.m.UTF8ToString(this.m._nbw_message(this.ctx)) : '';
    this.m._nbw_context_clear_error(this.ctx);
    return new NavBakeError(code, msg ? this.configNames(msg) : code);
  }

  /** C names the config fields its own way (config.cell_size, "raise tile_size"): say them as the config object does. */
  private configNames(message: string): string {
    const names = (this.#configNames ??= new Map(this.fields.map((f) => [f.cName, f.name])));
    return message.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (w) => names.get(w) ?? w);
  }
  #configNames: Map<string, string> | undefined;

  private check(status: number): void {
    if (status !== 0) throw this.error(status);
  }

  private alloc(bytes: number): number {
    const p = this.m._malloc(Math.max(bytes, 1));
    if (!p) {
      throw new NavBakeError('NB_ERR_OUT_OF_MEMORY', `navbake: out of memory (wasm heap, ${bytes} bytes requested)`);
    }
    return p;
  }

  private copyIn(data: ArrayBufferView): number {
    const p = this.alloc(data.byteLength);
    this.m.HEAPU8.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), p);
    return p;
  }

  private f32(ptr: number, n: number): Float32Array<ArrayBuffer> {
    return this.m.HEAPF32.slice(ptr >> 2, (ptr >> 2) + n);
  }

  private vec(ptr: number): Vec3 {
    const h = this.m.HEAPF32;
    const i = ptr >> 2;
    return [h[i], h[i + 1], h[i + 2]];
  }

  private putVec(ptr: number, v: ArrayLike<number>): number {
    this.m.HEAPF32.set([v[0], v[1], v[2]], ptr >> 2);
    return ptr;
  }

  // ---- config ----

  /** Validates and fills defaults; returns the resolved values (NavBakeError on a bad field). */
  resolveConfig(values: Float64Array): Float64Array {
    const p = this.copyIn(values);
    try {
      const st = this.m._nbw_config_resolve(this.ctx, p, p);
      if (st !== 0) {
        const e = this.error(st); // its field names already the config object's (cellSize)
        // C shows the float32 value to 6 digits: cellSize 1000.0001 was "(got 1000)", which looks valid. A value
        // the caller gave is shown as given.
        const message = e.message.replace(/^nb_config_resolve: /, 'navbake: ').replace(/config\.(\w+)( must be .*\(got )([^,)]+)/, (all, name: string, rule: string) => {
          const i = this.fields.findIndex((f) => f.name === name);
          const given = i >= 0 ? values[i]! : 0;
          return given !== 0 && given !== NB_ZERO ? `config.${name}${rule}${given}` : all;
        });
        throw new NavBakeError(e.code, message);
      }
      return this.m.HEAPF64.slice(p >> 3, (p >> 3) + values.length);
    } finally {
      this.m._free(p);
    }
  }

  // ---- bake ----

  /** Runs fn with the progress hook installed; an exception in the hook cancels the bake and is rethrown. */
  private withProgress<T>(progress: CProgress | undefined, fn: () => T): T {
    if (!progress) return fn();
    let thrown: { e: unknown } | null = null;
    const outer = this.m.onNavBakeProgress; // a bake started from a progress callback nests
    this.m.onNavBakeProgress = (stage, done, total) => {
      try {
        return progress(stage, done, total);
      } catch (e) {
        thrown = { e };
        return true;
      }
    };
    this.m._nbw_context_set_js_progress(this.ctx, 1);
    try {
      const result = fn();
      if (thrown) throw (thrown as { e: unknown }).e;
      return result;
    } catch (e) {
      if (!thrown) throw e;
      this.m._nbw_context_clear_error(this.ctx);
      throw (thrown as { e: unknown }).e;
    } finally {
      this.m.onNavBakeProgress = outer;
      this.m._nbw_context_set_js_progress(this.ctx, outer ? 1 : 0);
    }
  }

  /**
   * Copies the triangles into the heap (the allocations pushed on ptrs: the caller frees them); returns the
   * nbw_* mesh arguments (positions, vertex count, indices, triangle count, areas).
   */
  private putMesh(mesh: MeshInput, ptrs: number[]): number[] {
    const put = (a: ArrayBufferView) => {
      const p = this.copyIn(a);
      ptrs.push(p);
      return p;
    };
    const pos = mesh.positions.length ? put(mesh.positions) : 0;
    const idx = mesh.indices ? put(mesh.indices) : 0;
    const areas = mesh.areas ? put(mesh.areas) : 0;
    const triangles = mesh.indices ? mesh.indices.length / 3 : mesh.positions.length / 9;
    return [pos, mesh.positions.length / 3, idx, Math.floor(triangles), areas];
  }

  private withMesh<T>(mesh: MeshInput, fn: (args: number[]) => T): T {
    const staged = this.stageMesh(mesh);
    try {
      return fn(staged.args);
    } finally {
      staged.free();
    }
  }

  /**
   * The triangles copied into the heap now, for work on this thread that starts after an await (a bake reads
   * its arguments at the call): straight from the caller's arrays, without a copy of the library's own in
   * between. free() gives the memory back (once; later calls do nothing).
   */
  stageMesh(mesh: MeshInput): HeapMesh {
    const ptrs: number[] = [];
    try {
      const args = this.putMesh(mesh, ptrs);
      return {
        args,
        free: () => {
          for (const p of ptrs.splice(0)) this.m._free(p);
        },
      };
    } catch (e) {
      for (const p of ptrs) this.m._free(p);
      throw e;
    }
  }

  /**
   * Writes volumes as nb_volume structs (68 bytes, layout pinned by asserts in wasm_api.c) and links (already
   * nb_offmesh_link bytes) into the heap; fn gets (volumes, count, links, count). Freed after fn.
   */
  private withExtras<T>(volumes: readonly VolumeData[] | null | undefined, links: Uint8Array | null | undefined, fn: (args: number[]) => T): T {
    const ptrs: number[] = [];
    try {
      return fn(this.putExtras(volumes, links, ptrs));
    } finally {
      for (const p of ptrs) this.m._free(p);
    }
  }

  /** withExtras' writer: the allocations are pushed on ptrs (the caller frees them). */
  private putExtras(volumes: readonly VolumeData[] | null | undefined, links: Uint8Array | null | undefined, ptrs: number[]): number[] {
    const nv = volumes?.length ?? 0;
    let vp = 0;
    if (nv) {
      vp = this.alloc(nv * 68);
      ptrs.push(vp);
      this.m.HEAPU8.fill(0, vp, vp + nv * 68);
      volumes!.forEach((v, i) => {
        const o = vp + i * 68;
        let pts = 0;
        if (v.points) {
          pts = this.copyIn(v.points);
          ptrs.push(pts);
        }
        const f = this.m.HEAPF32;
        this.m.HEAP32[o >> 2] = v.type;
        this.m.HEAPU8[o + 4] = v.area;
        // box: bmin, bmax at 8; cylinder: center, radius, height at 32; convex: verts, count, ymin, ymax at 52
        if (v.type === VOLUME_BOX) f.set(v.f, (o + 8) >> 2);
        else if (v.type === VOLUME_CYLINDER) f.set(v.f, (o + 32) >> 2);
        else {
          this.m.HEAPU32[(o + 52) >> 2] = pts;
          this.m.HEAPU32[(o + 56) >> 2] = v.points!.length / 3;
          f.set(v.f, (o + 60) >> 2);
        }
      });
    }
    const nl = links ? links.length / LINK_SIZE : 0;
    const lp = nl ? this.copyIn(links!) : 0;
    if (lp) ptrs.push(lp);
    return [vp, nv, lp, nl];
  }

  // ---- tiled bakes: a session holds the geometry and its tile index ----

  /**
   * Copies the geometry into the heap once and buckets its triangles by tile (nb_grid_index). The copies live
   * until closeSession. NavBakeError on bad geometry, volumes or config.
   */
  openSession(mesh: MeshInput, config: Float64Array): GridSession {
    const ptrs: number[] = [];
    try {
      const args = this.putMesh(mesh, ptrs);
      const [vp, nv, lp, nl] = this.putExtras(mesh.volumes, mesh.links, ptrs);
      const cfg = this.copyIn(config);
      ptrs.push(cfg);
      const grid = this.alloc(64);
      ptrs.push(grid);
      this.m._nbw_context_clear_error(this.ctx);
      const index = this.m._nbw_grid_index_create(this.ctx, ...args, vp, nv, cfg, grid);
      if (!index) throw this.error();
      const g = this.m.HEAPF64.slice(grid >> 3, (grid >> 3) + 8);
      const params = Array.from(g.subarray(0, 6)) as NavmeshParams;
      const session = { index, ptrs, cfg, links: lp, linkCount: nl, params, tilesX: g[6], tilesZ: g[7], linkBytes: mesh.links ?? null };
      return { ...session, candidates: this.candidateTiles(index, g[6] * g[7]) };
    } catch (e) {
      for (const p of ptrs) this.m._free(p);
      throw e;
    }
  }

  /**
   * The tiles worth a bake call, (x, z) pairs in (z, x) order: those with triangles (candidateTiles), and the
   * tiles around each link's start (C bakes the one holding it, with just its links where it has no triangles, and
   * the others to null).
   */
  sessionTiles(s: GridSession): Int32Array<ArrayBuffer> {
    const want = new Set<number>();
    for (let z = 0; z < s.tilesZ; z++) {
      for (let x = 0; x < s.tilesX; x++) {
        const i = z * s.tilesX + x;
        if (s.candidates[i]) want.add(i);
      }
    }
    if (s.linkBytes) {
      // C decides which tile holds a start in its own float arithmetic near the edges: offer the neighbours too
      const f = new DataView(s.linkBytes.buffer, s.linkBytes.byteOffset, s.linkBytes.byteLength);
      const [ox, , oz, tw, td] = s.params;
      for (let o = 0; o < s.linkBytes.length; o += LINK_SIZE) {
        const cx = Math.floor((f.getFloat32(o, true) - ox) / tw);
        const cz = Math.floor((f.getFloat32(o + 8, true) - oz) / td);
        for (let z = Math.max(0, cz - 1); z <= Math.min(s.tilesZ - 1, cz + 1); z++) {
          for (let x = Math.max(0, cx - 1); x <= Math.min(s.tilesX - 1, cx + 1); x++) want.add(z * s.tilesX + x);
        }
      }
    }
    const keys = [...want].sort((a, b) => a - b);
    const out = new Int32Array(keys.length * 2);
    keys.forEach((k, i) => {
      out[2 * i] = k % s.tilesX;
      out[2 * i + 1] = Math.floor(k / s.tilesX);
    });
    return out;
  }

  /** Flags per tile (x + z * tilesX): 1 where the index bucketed triangles (nb_grid_index_tile_triangles > 0). */
  private candidateTiles(index: number, count: number): Uint8Array {
    const p = this.alloc(Math.max(1, count));
    try {
      this.m._nbw_grid_index_tiles(index, p);
      return this.m.HEAPU8.slice(p, p + count);
    } finally {
      this.m._free(p);
    }
  }

  /** Bakes one tile of the session: its blob (null: no polygons) and, when asked, its cache blob. */
  bakeSessionTile(
    s: GridSession,
    x: number,
    z: number,
    wantCache: boolean,
    progress?: CProgress,
  ): { bytes: Uint8Array<ArrayBuffer> | null; cache: Uint8Array<ArrayBuffer> | null; times: StageTimes } {
    const out = this.scratch + S_INFO;
    this.m._nbw_context_clear_error(this.ctx);
    const st = this.withProgress(progress, () =>
      this.m._nbw_grid_index_bake_tile(this.ctx, s.index, s.links, s.linkCount, x, z, wantCache ? 1 : 0, out, this.stats),
    );
    const o = out >> 2;
    const [data, size, cache, cacheSize] = [this.m.HEAPU32[o], this.m.HEAPU32[o + 1], this.m.HEAPU32[o + 2], this.m.HEAPU32[o + 3]];
    const take = (p: number, n: number) => {
      if (!p) return null;
      const b = this.m.HEAPU8.slice(p, p + n);
      this.m._nbw_bytes_free(this.ctx, p);
      return b;
    };
    const bytes = take(data, size);
    const cacheBytes = take(cache, cacheSize);
    this.check(st);
    const f = this.stats >> 3;
    return { bytes, cache: cacheBytes, times: this.statTable((i) => this.m.HEAPF64[f + i]).times };
  }

  /**
   * nb_bake's statistics by name: the counts, then the stage times from 'rasterize' on (two names occur in both).
   * A stage that did not run (-1: the distance field, except watershed; every stage of an empty tile) counts 0.
   */
  statTable(value: (i: number) => number): { counts: Record<string, number>; times: StageTimes } {
    const counts: Record<string, number> = {};
    const times: Record<string, number> = {};
    let inTimes = false;
    this.statNames.forEach((name, i) => {
      const v = value(i);
      inTimes ||= name === 'rasterize';
      if (inTimes) times[name] = Math.max(0, v);
      else counts[name] = v;
    });
    return { counts, times: times as unknown as StageTimes };
  }

  /** Frees the session's index and its copy of the geometry. Idempotent. */
  closeSession(s: GridSession): void {
    if (s.index) this.m._nbw_grid_index_destroy(this.ctx, s.index);
    s.index = 0;
    for (const p of s.ptrs.splice(0)) this.m._free(p);
  }

  /** Live obstacles: one tile rebuilt from its cache blob; null when it ends with no polygons. */
  rebuildTile(config: Float64Array, cache: Uint8Array, links: Uint8Array | null, obstacles: readonly VolumeData[]): Uint8Array<ArrayBuffer> | null {
    const ptrs: number[] = [];
    try {
      const cfg = this.copyIn(config);
      ptrs.push(cfg);
      const c = this.copyIn(cache);
      ptrs.push(c);
      const [vp, nv, lp, nl] = this.putExtras(obstacles, links, ptrs);
      const out = this.scratch + S_INFO;
      this.m._nbw_context_clear_error(this.ctx);
      const st = this.m._nbw_tile_rebuild(this.ctx, cfg, c, cache.length, lp, nl, vp, nv, out);
      this.check(st);
      const data = this.m.HEAPU32[out >> 2];
      if (!data) return null;
      const bytes = this.m.HEAPU8.slice(data, data + this.m.HEAPU32[(out >> 2) + 1]);
      this.m._nbw_bytes_free(this.ctx, data);
      return bytes;
    } finally {
      for (const p of ptrs) this.m._free(p);
    }
  }

  /** The xz box (lo x, lo z, hi x, hi z) whose obstacles affect tile (x, z): the tile with its border. */
  dirtyBox(params: NavmeshParams, config: Float64Array, x: number, z: number): Float32Array {
    const ptrs: number[] = [];
    try {
      const p = this.copyIn(new Float64Array(params));
      ptrs.push(p);
      const cfg = this.copyIn(config);
      ptrs.push(cfg);
      const out = this.scratch + S_OUT;
      this.m._nbw_tile_dirty_box(p, cfg, x, z, out);
      return this.f32(out, 4);
    } finally {
      for (const q of ptrs) this.m._free(q);
    }
  }

  /** A whole navmesh (solo, or tiled in this thread by config tileSize); returns the navmesh pointer. staged: the
   * triangles already in the heap (stageMesh), which mesh's arrays are then not read for. */
  bakeNavmesh(mesh: MeshInput, config: Float64Array, progress?: CProgress, staged?: HeapMesh | null): number {
    const withTriangles = <T>(fn: (args: number[]) => T): T => (staged ? fn(staged.args) : this.withMesh(mesh, fn));
    return withTriangles((args) =>
      this.withExtras(mesh.volumes, mesh.links, (extras) => {
        const cfg = this.copyIn(config);
        try {
          this.m._nbw_context_clear_error(this.ctx);
          const nav = this.withProgress(progress, () => this.m._nbw_navmesh_bake_ex(this.ctx, ...args, ...extras, cfg));
          if (!nav) throw this.error();
          return nav;
        } finally {
          this.m._free(cfg);
        }
      }),
    );
  }

  navmeshCreate(params: NavmeshParams): number {
    const p = this.copyIn(new Float64Array(params));
    try {
      const nav = this.m._nbw_navmesh_create(this.ctx, p);
      if (!nav) throw this.error();
      return nav;
    } finally {
      this.m._free(p);
    }
  }

  addTile(nav: number, bytes: Uint8Array): void {
    const p = this.copyIn(bytes);
    try {
      this.check(this.m._nbw_navmesh_add_tile(this.ctx, nav, p, bytes.length));
    } finally {
      this.m._free(p);
    }
    this.changed(nav, bytes);
  }

  // ---- changes, for copies of a navmesh in workers ----

  /** Starts noting nav's changes (from now on; a copy made now starts from gen), or gives the notes kept so far. */
  trackChanges(nav: number): NavChanges {
    let log = this.changeLogs.get(nav);
    if (!log) this.changeLogs.set(nav, (log = { gen: 0, floor: 0, tiles: new Map(), flags: new Map() }));
    return log;
  }

  /** A tile of nav was added, replaced or removed: at the position its blob says, or at (x, z). */
  private changed(nav: number, at: Uint8Array | [number, number]): void {
    const log = this.changeLogs.get(nav);
    if (!log) return;
    const [x, z] = at instanceof Uint8Array ? blobTile(at) : at;
    const key = `${x},${z}`;
    if (log.tiles.size >= CHANGES_KEPT && !log.tiles.has(key)) this.forget(log);
    log.tiles.set(key, ++log.gen);
  }

  /** Too many changes to list: copies made before now start anew. */
  private forget(log: NavChanges): void {
    log.tiles.clear();
    log.flags.clear();
    log.floor = ++log.gen;
  }

  // ---- streaming ----

  /** origin xyz, tile width, tile depth, max tiles */
  navmeshParams(nav: number): NavmeshParams {
    const p = this.scratch + S_OUT;
    this.m._nbw_navmesh_params(nav, p);
    return Array.from(this.m.HEAPF64.subarray(p >> 3, (p >> 3) + 6)) as NavmeshParams;
  }

  /** A copy of the tile's blob, or null when there is no tile at (x, z). */
  tileData(nav: number, x: number, z: number): Uint8Array<ArrayBuffer> | null {
    const out = this.scratch + S_INFO;
    if (this.m._nbw_navmesh_tile_data(nav, x, z, out) !== 0) return null;
    const data = this.m.HEAPU32[out >> 2];
    return this.m.HEAPU8.slice(data, data + this.m.HEAPU32[(out >> 2) + 1]);
  }

  /** false when there was no tile there */
  removeTile(nav: number, x: number, z: number): boolean {
    const st = this.m._nbw_navmesh_remove_tile(this.ctx, nav, x, z);
    if (st !== 0 && this.statusName(st) === 'NB_ERR_NOT_FOUND') {
      this.m._nbw_context_clear_error(this.ctx);
      return false;
    }
    this.check(st);
    this.changed(nav, [x, z]);
    return true;
  }

  /**
   * Adds a tile blob, replacing the one at its position; validated first, the navmesh unchanged on failure.
   * keepFlags (an obstacle rebuild): the flags set on the replaced tile's polygons go to the same polygons (same
   * type and vertices) of the new one.
   */
  putTile(nav: number, bytes: Uint8Array, keepFlags = false): void {
    this.swapTile(nav, bytes, keepFlags, false);
  }

  /**
   * putTile, or (bytes as [x, z]) the tile there removed, either undoably: the swap's undo (0: nothing was done),
   * for {@link undoSwap} (in the reverse order of the swaps, nothing else changing the tiles in between) or
   * {@link keepSwap}. An undo allocates nothing, so it cannot fail: an update of several tiles is all or none.
   */
  swapTile(nav: number, bytes: Uint8Array | [number, number], keepFlags: boolean, undoable = true): number {
    const out = this.scratch + S_REF;
    this.m.HEAPU32[out >> 2] = 0;
    if (bytes instanceof Uint8Array) {
      const p = this.copyIn(bytes);
      try {
        this.check(this.m._nbw_navmesh_put_tile(this.ctx, nav, p, bytes.length, keepFlags ? 1 : 0, undoable ? out : 0));
      } finally {
        this.m._free(p);
      }
    } else {
      this.check(this.m._nbw_navmesh_remove_tile_undoably(this.ctx, nav, bytes[0], bytes[1], undoable ? out : 0));
    }
    this.changed(nav, bytes);
    return undoable ? this.m.HEAPU32[out >> 2] : 0;
  }

  /** Undoes a {@link swapTile} of the tile at (x, z); cannot fail. */
  undoSwap(nav: number, undo: number, x: number, z: number): void {
    this.m._nbw_navmesh_swap_undo(this.ctx, nav, undo);
    this.changed(nav, [x, z]);
  }

  /** Keeps a {@link swapTile}: frees what its undo held. */
  keepSwap(undo: number): void {
    this.m._nbw_navmesh_swap_done(this.ctx, undo);
  }

  /** The slot and salt of the tile at (x, z) (what its refs are made of), or null when there is none. */
  tilePlace(nav: number, x: number, z: number): [number, number] | null {
    const m = this.m;
    const out = this.alloc(8);
    try {
      return m._nbw_navmesh_tile_place(nav, x, z, out) ? [m.HEAPU32[out >> 2], m.HEAPU32[(out >> 2) + 1]] : null;
    } finally {
      m._free(out);
    }
  }

  /** Puts a tile back in the place it had (tilePlace), replacing the tile now at its position: refs to it are valid again. */
  putTileBack(nav: number, bytes: Uint8Array, place: [number, number]): void {
    const p = this.copyIn(bytes);
    try {
      this.check(this.m._nbw_navmesh_put_tile_back(this.ctx, nav, p, bytes.length, place[0], place[1]));
    } finally {
      this.m._free(p);
    }
    this.changed(nav, bytes);
  }

  /** (x, z, polygons) per tile, in slot order. */
  tiles(nav: number): Int32Array {
    const n = this.m._nbw_navmesh_tiles(nav, 0, 0);
    const p = this.alloc(n * 12);
    try {
      this.m._nbw_navmesh_tiles(nav, p, n);
      return this.m.HEAP32.slice(p >> 2, (p >> 2) + n * 3);
    } finally {
      this.m._free(p);
    }
  }

  /** Size of this instance's wasm memory in bytes (it never shrinks: the peak so far). */
  memoryBytes(): number {
    return this.m.HEAPU8.length;
  }

  /** Bytes in use on this instance's wasm heap. */
  heapUsed(): number {
    return this.m._nbw_heap_used();
  }

  // ---- navmesh ----

  save(nav: number): Uint8Array<ArrayBuffer> {
    const sizePtr = this.alloc(4);
    try {
      const data = this.m._nbw_navmesh_save(this.ctx, nav, sizePtr);
      if (!data) throw this.error();
      const size = this.m.HEAPU32[sizePtr >> 2];
      const bytes = this.m.HEAPU8.slice(data, data + size);
      this.m._nbw_bytes_free(this.ctx, data);
      return bytes;
    } finally {
      this.m._free(sizePtr);
    }
  }

  load(bytes: Uint8Array): number {
    // The header first, on its own: a file that is not a navmesh is refused before it is copied into the heap
    // (which never shrinks: 100 MB of something else would have kept 100 MB of wasm memory for good).
    const h = this.copyIn(bytes.subarray(0, 48));
    try {
      this.check(this.m._nbw_navmesh_check_header(this.ctx, h, bytes.length));
    } finally {
      this.m._free(h);
    }
    const p = this.copyIn(bytes);
    try {
      const nav = this.m._nbw_navmesh_load(this.ctx, p, bytes.length);
      if (!nav) throw this.error();
      return nav;
    } finally {
      this.m._free(p);
    }
  }

  destroyNavmesh(nav: number): void {
    this.changeLogs.delete(nav);
    this.m._nbw_navmesh_destroy(this.ctx, nav);
  }

  tileCount(nav: number): number {
    return this.m._nbw_navmesh_tile_count(nav);
  }

  /** Polygons over all the navmesh's tiles. */
  polyCount(nav: number): number {
    return this.m._nbw_navmesh_poly_count(nav);
  }

  polygons(nav: number): PolygonInfo[] {
    const countPtr = this.alloc(4);
    let refs = 0;
    try {
      const st = this.m._nbw_navmesh_poly_refs(this.ctx, nav, 0, 0, countPtr);
      const n = this.m.HEAPU32[countPtr >> 2];
      if (st !== 0 && this.statusName(st) !== 'NB_ERR_BUFFER_TOO_SMALL') throw this.error(st);
      this.m._nbw_context_clear_error(this.ctx);
      refs = this.alloc(n * 4);
      this.check(this.m._nbw_navmesh_poly_refs(this.ctx, nav, refs, n, countPtr));
      const ids = this.m.HEAPU32.slice(refs >> 2, (refs >> 2) + n);
      const out: PolygonInfo[] = [];
      const verts = this.scratch + S_VERTS;
      const info = this.scratch + S_INFO;
      for (const ref of ids) {
        this.check(this.m._nbw_navmesh_poly(nav, ref, verts, info));
        const i = info >> 2;
        const h = this.m.HEAP32;
        const p: PolygonInfo = { ref, vertices: this.f32(verts, h[i] * 3), area: h[i + 1], flags: h[i + 2], offMesh: h[i + 3] !== 0 };
        if (p.offMesh) {
          const a = h[i + 7];
          p.link = { userId: this.m.HEAPU32[i + 4], bidirectional: h[i + 5] !== 0, radius: this.m.HEAPF32[i + 6], attached: { start: (a & 1) !== 0, end: (a & 2) !== 0 } };
        }
        out.push(p);
      }
      return out;
    } finally {
      if (refs) this.m._free(refs);
      this.m._free(countPtr);
    }
  }

  offMeshLink(nav: number, ref: number): OffMeshLinkInfo | null {
    const p = this.scratch + S_VERTS; // an nb_offmesh_link: start, end, radius (f32), flags (u16), area, bidirectional (u8), user_id (u32)
    if (this.m._nbw_navmesh_offmesh_link(nav, ref >>> 0, p) !== 0) return null; // not a link (no message: no context)
    const f = this.m.HEAPF32;
    const i = p >> 2;
    return {
      start: [f[i], f[i + 1], f[i + 2]],
      end: [f[i + 3], f[i + 4], f[i + 5]],
      radius: f[i + 6],
      flags: this.m.HEAPU8[p + 28] | (this.m.HEAPU8[p + 29] << 8),
      area: this.m.HEAPU8[p + 30],
      bidirectional: this.m.HEAPU8[p + 31] !== 0,
      userId: this.m.HEAPU32[i + 8],
      attached: { start: (this.m.HEAP32[i + 9] & 1) !== 0, end: (this.m.HEAP32[i + 9] & 2) !== 0 },
    };
  }

  setPolygonFlags(nav: number, ref: number, flags: number): void {
    this.check(this.m._nbw_navmesh_set_poly_flags(this.ctx, nav, ref >>> 0, flags & 0xffff));
    const log = this.changeLogs.get(nav);
    if (log) {
      if (log.flags.size >= CHANGES_KEPT && !log.flags.has(ref >>> 0)) this.forget(log);
      log.flags.set(ref >>> 0, [++log.gen, flags & 0xffff]);
    }
  }

  detailTriangles(nav: number): SurfaceGeometry {
    const counts = this.alloc(8);
    const ptrs: number[] = [];
    try {
      const st = this.m._nbw_navmesh_detail_triangles(this.ctx, nav, 0, 0, 0, 0, 0, counts);
      if (st !== 0 && this.statusName(st) !== 'NB_ERR_BUFFER_TOO_SMALL') throw this.error(st);
      this.m._nbw_context_clear_error(this.ctx);
      const nv = this.m.HEAPU32[counts >> 2];
      const nt = this.m.HEAPU32[(counts >> 2) + 1];
      const pos = this.alloc(nv * 12);
      ptrs.push(pos);
      const idx = this.alloc(nt * 12);
      ptrs.push(idx);
      const areas = this.alloc(nt);
      ptrs.push(areas);
      this.check(this.m._nbw_navmesh_detail_triangles(this.ctx, nav, pos, nv, idx, areas, nt, counts));
      return {
        positions: this.f32(pos, nv * 3),
        indices: this.m.HEAPU32.slice(idx >> 2, (idx >> 2) + nt * 3),
        areas: this.m.HEAPU8.slice(areas, areas + nt),
      };
    } finally {
      for (const p of ptrs) this.m._free(p);
      this.m._free(counts);
    }
  }

  // ---- queries ----

  queryCreate(nav: number, maxNodes = 0): number {
    const q = this.m._nbw_query_create(this.ctx, nav, maxNodes);
    if (!q) throw this.error();
    return q;
  }

  queryDestroy(q: number): void {
    this.m._nbw_query_destroy(this.ctx, q);
  }

  /** A query filter with C's defaults (every area cost 1, includeFlags 0xffff, excludeFlags 0). */
  filterCreate(): number {
    const p = this.m._nbw_filter_create();
    if (!p) throw new NavBakeError('NB_ERR_OUT_OF_MEMORY', 'navbake: out of memory (query filter)');
    return p;
  }

  /**
   * Sets a filter to `values` (64 area costs, includeFlags, excludeFlags: checked already) where they differ from
   * `held`, the values it holds, which are then updated.
   */
  filterUpdate(p: number, values: Float64Array, held: Float64Array): void {
    for (let i = 0; i < 64; i++) {
      if (values[i] !== held[i]) {
        this.m._nbw_filter_set_cost(p, i, values[i]);
        held[i] = values[i];
      }
    }
    if (values[64] !== held[64] || values[65] !== held[65]) {
      this.m._nbw_filter_set_flags(p, values[64], values[65]);
      held[64] = values[64];
      held[65] = values[65];
    }
  }

  filterDestroy(f: number): void {
    this.m._nbw_filter_destroy(f);
  }

  /**
   * The search and the filter of a query on nav, from o (made or replaced as needed): the search of `nodes` nodes
   * (a bigger one kept: it only grows), or of maxNodes when given (> 0); the filter holding `values` (64 area
   * costs, includeFlags, excludeFlags), or the default filter for null.
   */
  querySetup(nav: number, o: QueryObjects, nodes: number, maxNodes: number, values: Float64Array | null): [query: number, filter: number] {
    if (o.query && nodes > o.queryNodes) {
      this.queryDestroy(o.query);
      o.query = 0;
    }
    if (!o.query) {
      o.query = this.queryCreate(nav, nodes);
      o.queryNodes = nodes;
    }
    if (maxNodes && maxNodes !== o.limitedNodes) {
      if (o.limited) this.queryDestroy(o.limited);
      o.limited = 0;
      o.limited = this.queryCreate(nav, maxNodes);
      o.limitedNodes = maxNodes;
    }
    const q = maxNodes ? o.limited : o.query;
    if (!values) {
      if (!o.filter) o.filter = this.filterCreate();
      return [q, o.filter];
    }
    if (!o.custom) {
      o.custom = this.filterCreate();
      o.customValues = new Float64Array(66).fill(1, 0, 64); // a new wasm filter's values
      o.customValues[64] = 0xffff;
    }
    this.filterUpdate(o.custom, values, o.customValues!);
    return [q, o.custom];
  }

  /** Frees what querySetup made (o's fields back to 0). */
  queryObjectsFree(o: QueryObjects): void {
    for (const f of [o.filter, o.custom]) if (f) this.filterDestroy(f);
    for (const q of [o.query, o.limited]) if (q) this.queryDestroy(q);
    o.filter = o.custom = o.query = o.limited = 0;
  }

  /** Nearest polygon and the closest point on it, or null when no polygon overlaps the box. */
  findNearest(q: number, filter: number, p: ArrayLike<number>, half: ArrayLike<number>): { ref: number; point: Vec3 } | null {
    const s = this.scratch;
    this.check(
      this.m._nbw_find_nearest_poly(q, this.putVec(s + S_A, p), this.putVec(s + S_HALF, half), filter, s + S_REF, s + S_OUT),
    );
    const ref = this.m.HEAPU32[(s + S_REF) >> 2];
    return ref ? { ref, point: this.vec(s + S_OUT) } : null;
  }

  /**
   * The batch runs in chunks of PATH_CHUNK pairs through buffers sized for one chunk, so the wasm heap (which
   * never shrinks) grows by a chunk's worth, not by the whole batch's. The points buffer starts at the points per
   * pair of the last batch (16 to 64). When a chunk's points overflow it, C has written the pairs that fit (a
   * prefix) and counted the rest: only the pairs from the first that did not fit are searched again, into a
   * buffer of the size counted.
   */
  findPaths(q: number, filter: number, pairs: Float32Array, half: ArrayLike<number>, options: number, details = false): PathBatch & Partial<PathDetails> {
    const n = Math.floor(pairs.length / 6);
    const status = new Uint8Array(n);
    const lengths = new Float32Array(n);
    const offsets = new Uint32Array(n + 1);
    const parts: [Float32Array<ArrayBuffer>, Uint8Array<ArrayBuffer> | null, Uint32Array<ArrayBuffer> | null][] = [];
    const c = Math.min(n, PATH_CHUNK);
    const ptrs: number[] = [];
    // points (xyz), then with details the points' polygon refs and flags: 12 or 17 bytes a point
    const perPoint = details ? 17 : 12;
    let points = 0;
    try {
      const pp = this.alloc(c * 24);
      ptrs.push(pp);
      const st = this.alloc(c);
      ptrs.push(st);
      const lens = this.alloc(c * 4);
      ptrs.push(lens);
      const offs = this.alloc((c + 1) * 4);
      ptrs.push(offs);
      const needed = this.scratch + S_REF;
      const h = this.putVec(this.scratch + S_HALF, half);
      let capacity = Math.max(16, Math.ceil(c * Math.min(this.pointsPerPair, 64)));
      points = this.alloc(capacity * perPoint);
      let total = 0;
      for (let i = 0; i < n; ) {
        const k = Math.min(PATH_CHUNK, n - i);
        this.m.HEAPF32.set(pairs.subarray(i * 6, (i + k) * 6), pp >> 2);
        for (let a = 0; a < k; ) {
          // pairs a..k-1 of the chunk; offsets come back counted from the first of them
          const refs = details ? points + capacity * 12 : 0;
          const flags = details ? refs + capacity * 4 : 0;
          const r = this.m._nbw_find_paths(q, pp + a * 24, k - a, h, filter, options, st + a, lens + a * 4, offs, points, flags, refs, capacity, needed);
          const o = this.m.HEAPU32.subarray(offs >> 2, (offs >> 2) + k - a + 1);
          let done = k - a;
          if (r !== 0 && this.statusName(r) === 'NB_ERR_BUFFER_TOO_SMALL') {
            this.m._nbw_context_clear_error(this.ctx);
            done = 0;
            while (done < k - a && o[done + 1] <= capacity) done++;
          } else {
            this.check(r);
          }
          const m = o[done];
          for (let j = 1; j <= done; j++) offsets[i + a + j] = total + o[j];
          parts.push([
            this.f32(points, m * 3),
            details ? this.m.HEAPU8.slice(flags, flags + m) : null,
            details ? this.m.HEAPU32.slice(refs >> 2, (refs >> 2) + m) : null,
          ]);
          total += m;
          if (done < k - a) {
            const rest = this.m.HEAPU32[needed >> 2] - m; // the points of the pairs not written
            this.m._free(points);
            points = 0;
            capacity = Math.max(capacity, rest);
            points = this.alloc(capacity * perPoint);
          }
          a += done;
        }
        status.set(this.m.HEAPU8.subarray(st, st + k), i);
        lengths.set(this.m.HEAPF32.subarray(lens >> 2, (lens >> 2) + k), i);
        i += k;
      }
      if (n > 0) this.pointsPerPair = Math.max(16, total / n);
      const exhausted = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        exhausted[i] = (status[i] & PATH_EXHAUSTED) !== 0 ? 1 : 0;
        status[i] &= PATH_EXHAUSTED - 1;
      }
      const out: PathBatch & Partial<PathDetails> = { status, exhausted, lengths, offsets, points: join(parts.map((p) => p[0]), Float32Array) };
      if (details) {
        out.pointFlags = join(parts.map((p) => p[1]!), Uint8Array);
        out.pointRefs = join(parts.map((p) => p[2]!), Uint32Array);
      }
      return out;
    } finally {
      if (points) this.m._free(points);
      for (const p of ptrs) this.m._free(p);
    }
  }

  /** Points per pair that the next batch's buffer starts with: the last batch's average, 16 to 64. */
  private pointsPerPair = 16;

  /** findPath's block: pair, status, length, offsets, then points (xyz), refs and flags for `cap` points. */
  private one = { ptr: 0, cap: 0 };

  /**
   * One path with its points' flags and polygons, through a block kept from call to call: a game asks for paths
   * one at a time, and the batch's seven allocations per call made a single path 2.5x dearer than a batch's pair.
   */
  findPath(q: number, filter: number, pair: Float32Array, half: ArrayLike<number>, options: number): { status: number; exhausted: boolean; length: number } & PathDetails & { points: Float32Array<ArrayBuffer> } {
    const needed = this.scratch + S_REF;
    const h = this.putVec(this.scratch + S_HALF, half);
    const layout = (cap: number) => {
      if (this.one.ptr) this.m._free(this.one.ptr);
      this.one = { ptr: 0, cap: 0 };
      this.one = { ptr: this.alloc(48 + cap * 17), cap };
    };
    if (!this.one.ptr) layout(256);
    for (;;) {
      const { ptr: pp, cap } = this.one;
      const st = pp + 24;
      const len = pp + 28;
      const offs = pp + 32;
      const pts = pp + 48;
      const refs = pts + cap * 12;
      const flags = refs + cap * 4;
      this.m.HEAPF32.set(pair, pp >> 2);
      const r = this.m._nbw_find_paths(q, pp, 1, h, filter, options, st, len, offs, pts, flags, refs, cap, needed);
      if (r !== 0 && this.statusName(r) === 'NB_ERR_BUFFER_TOO_SMALL') {
        this.m._nbw_context_clear_error(this.ctx);
        layout(this.m.HEAPU32[needed >> 2]);
        continue;
      }
      this.check(r);
      const n = this.m.HEAPU32[(offs >> 2) + 1];
      return {
        status: this.m.HEAPU8[st] & (PATH_EXHAUSTED - 1),
        exhausted: (this.m.HEAPU8[st] & PATH_EXHAUSTED) !== 0,
        length: this.m.HEAPF32[len >> 2],
        points: this.f32(pts, n * 3),
        pointFlags: this.m.HEAPU8.slice(flags, flags + n),
        pointRefs: this.m.HEAPU32.slice(refs >> 2, (refs >> 2) + n),
      };
    }
  }

  /** t (1 = reached end), the wall normal at the hit, and the surface's height where the walk stops (NaN: unknown). */
  raycast(q: number, filter: number, ref: number, start: ArrayLike<number>, end: ArrayLike<number>): { t: number; normal: Vec3; y: number } {
    const s = this.scratch;
    this.check(this.m._nbw_raycast(q, ref, this.putVec(s + S_A, start), this.putVec(s + S_B, end), filter, s + S_OUT));
    const i = (s + S_OUT) >> 2;
    const h = this.m.HEAPF32;
    return { t: h[i], normal: [h[i + 1], h[i + 2], h[i + 3]], y: h[i + 4] };
  }

  /** A random point (area-weighted), or around center within radius when given; advances rng. */
  randomPoint(
    q: number,
    filter: number,
    rng: bigint,
    around?: { ref: number; center: ArrayLike<number>; radius: number },
  ): { rng: bigint; ref: number; point: Vec3 } {
    const s = this.scratch;
    const r = (s + S_RNG) >> 2;
    this.m.HEAPU32[r] = Number(rng & 0xffffffffn);
    this.m.HEAPU32[r + 1] = Number((rng >> 32n) & 0xffffffffn);
    const st = around
      ? this.m._nbw_random_point_around(q, around.ref, this.putVec(s + S_A, around.center), around.radius, filter, s + S_RNG, s + S_REF, s + S_OUT)
      : this.m._nbw_random_point(q, filter, s + S_RNG, s + S_REF, s + S_OUT);
    this.check(st);
    const next = BigInt(this.m.HEAPU32[r]) | (BigInt(this.m.HEAPU32[r + 1]) << 32n);
    return { rng: next, ref: this.m.HEAPU32[(s + S_REF) >> 2], point: this.vec(s + S_OUT) };
  }

  moveAlong(q: number, filter: number, ref: number, start: ArrayLike<number>, end: ArrayLike<number>): Vec3 {
    const s = this.scratch;
    this.check(this.m._nbw_move_along(q, ref, this.putVec(s + S_A, start), this.putVec(s + S_B, end), filter, s + S_OUT));
    return this.vec(s + S_OUT);
  }

  /** [distance, hit xyz, normal xyz] */
  distanceToWall(q: number, filter: number, ref: number, center: ArrayLike<number>, maxRadius: number): { distance: number; point: Vec3; normal: Vec3 } {
    const s = this.scratch;
    this.check(this.m._nbw_distance_to_wall(q, ref, this.putVec(s + S_A, center), maxRadius, filter, s + S_OUT));
    const i = (s + S_OUT) >> 2;
    const h = this.m.HEAPF32;
    return { distance: h[i], point: [h[i + 1], h[i + 2], h[i + 3]], normal: [h[i + 4], h[i + 5], h[i + 6]] };
  }

  // ---- voxels (web/src/voxels.ts; exports in c/src/wasm_voxels.c) ----

  /**
   * Rasterizes the mesh with the config's cell sizes: the occupancy grid's layout and its words, left in the heap
   * (`words`: a pointer the caller frees with freeWords) or copied out (copy: true, for a worker's reply; into the
   * start of `into` when it is large enough).
   */
  /** fill: null, or the world points seeding nb_voxel_fill_enclosed (x, y, z each; empty: the outside only). */
  voxelize(
    mesh: MeshInput,
    config: Float64Array,
    headroom: number,
    fill: Float32Array | null,
    copy: boolean,
    progress?: CProgress,
    into?: ArrayBuffer | null,
  ): VoxelLayout & { words: number; copy: Uint32Array<ArrayBuffer> | null; filled: number } {
    return this.withMesh(mesh, (args) => {
      const m = this.m;
      const n = m._nbw_voxel_info_count();
      const cfg = this.copyIn(config);
      const info = this.alloc(n * 8);
      const seeds = fill && fill.length ? this.copyIn(fill) : 0;
      let words = 0;
      try {
        m._nbw_context_clear_error(this.ctx);
        const fillCount = fill ? fill.length / 3 : -1;
        words = this.withProgress(progress, () => m._nbw_voxelize(this.ctx, ...args, cfg, headroom, seeds, fillCount, info));
        if (!words) throw this.error();
        const v = m.HEAPF64.slice(info >> 3, (info >> 3) + n);
        const layout: VoxelLayout = {
          origin: [v[0], v[1], v[2]],
          cellSize: v[3],
          cellHeight: v[4],
          dims: [v[5], v[6], v[7]],
        };
        if (!copy) return { ...layout, words, copy: null, filled: v[9] };
        const count = v[8]!;
        const heap = m.HEAPU32.subarray(words >> 2, (words >> 2) + count);
        let out: Uint32Array<ArrayBuffer>;
        if (into && into.byteLength >= count * 4) {
          out = new Uint32Array(into, 0, count);
          out.set(heap);
        } else {
          out = heap.slice();
        }
        return { ...layout, words: 0, copy: out, filled: v[9] };
      } finally {
        m._free(cfg);
        m._free(info);
        if (seeds) m._free(seeds);
        if (copy && words) m._free(words);
      }
    });
  }

  /** Copies occupancy words into the heap (freed with freeWords). */
  putWords(words: Uint32Array): number {
    return this.copyIn(words);
  }

  freeWords(p: number): void {
    this.m._free(p);
  }

  /** The heap's words as a live view (valid until the heap grows). */
  wordsView(p: number, count: number): Uint32Array {
    return this.m.HEAPU32.subarray(p >> 2, (p >> 2) + count);
  }

  /** Empties up to `budget` slots of a query's pool; how many are left (0: ready, a search begins at once). */
  /** Empties the pool's slots for about ms; how many are left (0: ready). */
  voxelQueryReset(q: number, ms: number): number {
    return this.m._nbw_voxel_query_reset_ms(q, ms) >>> 0;
  }

  voxelQueryCreate(maxNodes: number): number {
    const q = this.m._nbw_voxel_query_create(this.ctx, maxNodes);
    if (!q) throw this.error();
    return q;
  }

  voxelQueryDestroy(q: number): void {
    this.m._nbw_voxel_query_destroy(this.ctx, q);
  }

  /**
   * A voxel path search, begun: nbw_voxel_path_begin snaps the ends (args as laid out in c/src/wasm_voxels.c: dims,
   * move, height, radius, climb, smooth, start voxel, end voxel, search distance) and starts the search on query q.
   * The search reads `words` until voxelPathEnd. null when an end has no place near it (the path is then 'none').
   */
  voxelPathBegin(q: number, words: number, args: Int32Array, cellSize: number, cellHeight: number, weight: number, search: number): VoxelSearch | null {
    const m = this.m;
    const outLen = m._nbw_voxel_out_count();
    const buf = this.alloc(outLen * 4 + args.byteLength);
    const a = buf + outLen * 4;
    m.HEAP32.set(args, a >> 2);
    m._nbw_context_clear_error(this.ctx);
    const st = m._nbw_voxel_path_begin(q, words, a, cellSize, cellHeight, weight, search, buf);
    const started = m.HEAP32[(buf >> 2) + VO_STARTED] === 1;
    if (st !== 0 || !started) {
      m._free(buf);
      this.check(st);
      return null;
    }
    return { q, out: buf };
  }

  /** Frees a search's buffer without a path (the query abandons the search at its next begin). */
  voxelPathAbandon(s: VoxelSearch): void {
    this.m._free(s.out);
  }

  /** At most `expansions` search nodes expanded; true once the search has ended. */
  /** Expands for about ms (0: until the search ends); true once it has ended. */
  voxelPathStep(s: VoxelSearch, ms: number): boolean {
    const m = this.m;
    m._nbw_context_clear_error(this.ctx);
    this.check(m._nbw_voxel_path_step(s.q, ms, s.out));
    return m.HEAP32[(s.out >> 2) + VO_DONE] === 1;
  }

  /**
   * Ends the search (finished or not; capacity = the query's node count) and frees its buffer: the status (PATH_STATUS
   * index), the ends used, the path's voxels (x, y, z each) and the pool's verdict.
   */
  voxelPathEnd(s: VoxelSearch, capacity: number): { status: number; start: Vec3; end: Vec3; voxels: Int32Array<ArrayBuffer>; exhausted: boolean; nodes: number } {
    const m = this.m;
    let path = 0;
    try {
      path = this.alloc(capacity * 12);
      m._nbw_context_clear_error(this.ctx);
      this.check(m._nbw_voxel_path_end(s.q, path, capacity, s.out));
      const o = m.HEAP32.subarray(s.out >> 2, (s.out >> 2) + VO_STARTED);
      return {
        status: o[1],
        start: [o[2], o[3], o[4]],
        end: [o[5], o[6], o[7]],
        exhausted: o[8] === 1,
        nodes: o[9],
        voxels: m.HEAP32.slice(path >> 2, (path >> 2) + o[0] * 3),
      };
    } finally {
      if (path) m._free(path);
      m._free(s.out);
    }
  }

  // ---- inspect (web/src/inspect.ts; exports in c/src/wasm_inspect.c) ----

  /** One bake keeping every stage (tile: [x, z] of the tiled grid, or null for a solo bake), copied out. */
  inspect(mesh: MeshInput, config: Float64Array, tile: ArrayLike<number> | null, progress?: CProgress): Inspection {
    return this.withMesh(mesh, (args) => this.withExtras(mesh.volumes, mesh.links, (extras) => {
      const m = this.m;
      const cfg = this.copyIn(config);
      const ptrs: number[] = [cfg];
      let insp = 0;
      try {
        m._nbw_context_clear_error(this.ctx);
        const [tx, tz] = tile ? [tile[0], tile[1]] : [-1, -1];
        insp = this.withProgress(progress, () => m._nbw_inspect(this.ctx, ...args, ...extras, cfg, tx, tz));
        if (!insp) throw this.error();
        const ni = m._nbw_inspect_info_count();
        const infoPtr = this.alloc(ni * 8);
        ptrs.push(infoPtr);
        m._nbw_inspect_info(insp, infoPtr);
        const info = m.HEAPF64.slice(infoPtr >> 3, (infoPtr >> 3) + ni);
        const [nSpans, nConts, nVerts, nRaw] = [info[12], info[13], info[14], info[15]];
        const buf = (bytes: number) => {
          const p = this.alloc(bytes);
          ptrs.push(p);
          return p;
        };
        const sx = buf(nSpans * 2), sz = buf(nSpans * 2), sy = buf(nSpans * 2), sa = buf(nSpans), sr = buf(nSpans * 2);
        m._nbw_inspect_spans(insp, sx, sz, sy, sa, sr);
        const u16 = (p: number, n: number) => m.HEAPU8.slice(p, p + n * 2);
        const cr = buf(nConts * 2), ca = buf(nConts), co = buf((nConts + 1) * 4), cv = buf(nVerts * 12);
        const ro = buf((nConts + 1) * 4), rv = buf(nRaw * 12);
        m._nbw_inspect_contours(insp, cr, ca, co, cv, ro, rv);
        const countNames: Readonly<Record<string, keyof InspectCounts>> = {
          grid_width: 'gridWidth',
          grid_height: 'gridHeight',
          hf_spans: 'heightfieldSpans',
          compact_spans: 'compactSpans',
          walkable_after_erode: 'walkableSpans',
          regions: 'regions',
          contours: 'contours',
          polys: 'polygons',
          poly_verts: 'polygonVertices',
          detail_verts: 'detailVertices',
          detail_tris: 'detailTriangles',
        };
        const table = this.statTable((i) => m._nbw_inspect_stat(insp, i));
        const counts: Record<string, number> = {};
        for (const [name, v] of Object.entries(table.counts)) counts[countNames[name] ?? name] = v;
        const times = table.times;
        const regionIds = info[11];
        return {
          tile: info[17] >= 0 ? [info[17], info[18]] : null,
          // float32 in C: shown as the shortest decimal of the same float32 (0.3, as the config said it)
          grid: {
            origin: [shortFloat(info[0]), shortFloat(info[1]), shortFloat(info[2])],
            max: [shortFloat(info[3]), shortFloat(info[4]), shortFloat(info[5])],
            cellSize: shortFloat(info[6]),
            cellHeight: shortFloat(info[7]),
            width: info[8],
            height: info[9],
            borderSize: info[10],
          },
          spans: {
            count: nSpans,
            x: new Uint16Array(u16(sx, nSpans).buffer),
            z: new Uint16Array(u16(sz, nSpans).buffer),
            y: new Uint16Array(u16(sy, nSpans).buffer),
            area: m.HEAPU8.slice(sa, sa + nSpans),
            region: new Uint16Array(u16(sr, nSpans).buffer),
          },
          regionCount: Math.max(0, regionIds - 1),
          contours: {
            count: nConts,
            region: new Uint16Array(u16(cr, nConts).buffer),
            area: m.HEAPU8.slice(ca, ca + nConts),
            offsets: m.HEAPU32.slice(co >> 2, (co >> 2) + nConts + 1),
            vertices: this.f32(cv, nVerts * 3),
            rawOffsets: m.HEAPU32.slice(ro >> 2, (ro >> 2) + nConts + 1),
            rawVertices: this.f32(rv, nRaw * 3),
          },
          times,
          counts: counts as unknown as InspectCounts,
          memory: { peakBytes: info[16], heapBytes: m.HEAPU8.length },
        };
      } finally {
        if (insp) m._nbw_inspect_free(insp);
        for (const p of ptrs) m._free(p);
      }
    }));
  }
}

export type { NavBakeErrorCode };
