// Messages between the main thread and the bake workers. Every message has { id, type }; buffers travel in the
// transfer list, never copied twice.
import type { Inspection, StageTimes } from './inspect.js';
import type { VolumeData } from './volumes.js';
import type { NavmeshParams, PathBatch, PathDetails, VoxelLayout, WasmModule } from './wasm.js';

/** Sent once to each new worker: the compiled wasm, which it instantiates with its own memory. */
export interface InitRequest {
  id: 0;
  type: 'init';
  wasm: WasmModule;
}

export interface BakeRequest {
  id: number;
  type: 'bake';
  positions: Float32Array;
  indices: Uint32Array | null;
  areas: Uint8Array | null;
  /** bake-time area volumes and off-mesh links (volumes.ts) */
  volumes?: VolumeData[] | null;
  links?: Uint8Array | null;
  /** C config values (one per field of the C table, 0 = default), as configValues() gives them */
  config: Float64Array;
  /** Test hook: the worker exits (Node) or throws uncaught (browser) once the bake reaches this nb_stage. */
  testExitAtStage?: number;
}

/** inspect(): one bake keeping every stage, copied out as an Inspection (inspect.ts). */
export interface InspectRequest {
  id: number;
  type: 'inspect';
  positions: Float32Array;
  indices: Uint32Array | null;
  areas: Uint8Array | null;
  /** bake-time area volumes (volumes.ts) */
  volumes: VolumeData[] | null;
  /** off-mesh links (volumes.ts linksData): checked as the bake checks them */
  links: Uint8Array | null;
  config: Float64Array;
  /** [x, z] of a tile of the tiled grid, or null: a solo bake of the whole level */
  tile: Int32Array | null;
}

/** voxelize(): the occupancy grid of the solid voxels, sent back as its words. */
export interface VoxelizeRequest {
  id: number;
  type: 'voxelize';
  positions: Float32Array;
  indices: Uint32Array | null;
  areas: Uint8Array | null;
  config: Float64Array;
  /** empty voxel layers added above the mesh */
  headroom: number;
  /** null, or fill enclosed space seeded from these world points (x, y, z each) */
  fill: Float32Array | null;
  /** a buffer for the words to come back in, when it holds them (else a new one); handed back either way */
  out?: ArrayBuffer | null;
}

/**
 * Opens a tiled-bake session (the worker keeps it under the request's id, the pool lease's id): the geometry
 * moves into the worker's wasm heap once and the triangles are bucketed by tile (nb_grid_index). Reply:
 * SessionOpenedReply. Then TileRequests, one per tile, each answered by a TileReply (or an ErrorReply), and a
 * SessionCloseRequest, which frees everything (no reply).
 */
export interface SessionOpenRequest {
  id: number;
  type: 'open';
  positions: Float32Array;
  indices: Uint32Array | null;
  areas: Uint8Array | null;
  volumes: VolumeData[] | null;
  /** nb_offmesh_link structs (volumes.ts linksData) */
  links: Uint8Array | null;
  config: Float64Array;
  /** also send back each tile's cache blob (bake option obstacles: true) */
  caches: boolean;
  /** Test hook: the worker exits once a tile bake reaches this nb_stage. */
  testExitAtStage?: number;
}

export interface SessionOpenedReply {
  id: number;
  type: 'opened';
  /** (x, z) pairs of the tiles to bake: those with triangles or holding a link's start, in (z, x) order */
  tiles: Int32Array;
  /** the worker's wasm memory size in bytes after opening */
  memory?: number;
}

export interface TileRequest {
  id: number;
  type: 'tile';
  x: number;
  z: number;
}

export interface TileReply {
  id: number;
  type: 'tile';
  x: number;
  z: number;
  /** the tile blob; null when the tile has no polygons (left out of the navmesh) */
  bytes: Uint8Array | null;
  /** the tile's cache blob (caches: true and the tile has geometry), else null */
  cache: Uint8Array | null;
  /** the worker's wasm memory size in bytes after the tile */
  memory: number;
  /** the tile bake's own stage timers (nb_bake's statistics) [ms] */
  times: StageTimes;
}

export interface SessionCloseRequest {
  id: number;
  type: 'close';
}

/** Live obstacles: one tile rebuilt from its cache blob with the obstacles (nb_tile_rebuild). */
export interface RebuildRequest {
  id: number;
  type: 'rebuild';
  config: Float64Array;
  cache: Uint8Array;
  links: Uint8Array | null;
  obstacles: VolumeData[];
}

/**
 * What brings a worker's copy of a navmesh (a replica, findPathsAsync) up to date, applied in this order: flags
 * set again (refs whose tile is no longer the worker's fail and are skipped: their tile comes in `put`), tiles taken
 * out, tiles put in at the slot and with the salt they have in the original (so every polygon ref is the
 * original's).
 */
export interface ReplicaSync {
  /** set: the copy is made anew, an empty navmesh of these params, and `put` holds every tile */
  params: NavmeshParams | null;
  /** (ref, flags) pairs */
  flags: Uint32Array;
  /** tile positions, (x, z) pairs */
  remove: Int32Array;
  put: { bytes: Uint8Array; slot: number; salt: number }[];
}

/** findPathsAsync: a share of a batch of paths on a worker's copy of the navmesh. */
export interface PathsRequest {
  id: number;
  type: 'paths';
  /** the copy's id (one per NavMesh) */
  replica: number;
  /** null when the worker's copy is up to date */
  sync: ReplicaSync | null;
  pairs: Float32Array;
  half: Float64Array;
  /** C filter values (64 area costs, includeFlags, excludeFlags), or null: the default filter */
  filter: Float64Array | null;
  crossings: number;
  details: boolean;
  /** the search nodes of the navmesh's query (queryNodesFor), and maxNodes (0: none given) */
  nodes: number;
  maxNodes: number;
}

/** findPathsAsync: copies to free (their NavMesh was disposed). No reply. */
export interface DropRequest {
  id: 0;
  type: 'drop';
  replicas: number[];
}

export type WorkerRequest =
  | InitRequest
  | BakeRequest
  | InspectRequest
  | VoxelizeRequest
  | SessionOpenRequest
  | TileRequest
  | SessionCloseRequest
  | RebuildRequest
  | PathsRequest
  | DropRequest;

export interface ProgressReply {
  id: number;
  type: 'progress';
  /** nb_stage (1..9) */
  stage: number;
  done: number;
  total: number;
}

export interface ResultReply {
  id: number;
  type: 'result';
  /** the saved navmesh (whole-navmesh requests) */
  bytes?: Uint8Array;
  /** rebuild requests: true when the rebuilt tile has no polygons (bytes then absent) */
  empty?: boolean;
  /** inspect requests */
  inspection?: Inspection;
  /** paths requests */
  paths?: PathBatch & Partial<PathDetails>;
  /** voxelize requests */
  voxels?: VoxelLayout & { words: Uint32Array; filled: number };
  /** the buffers of the request's geometry, handed back for the next copy (spare.ts) */
  spare?: ArrayBuffer[];
  /** the worker's wasm memory size in bytes after the request (the worker's post adds it) */
  memory?: number;
}

export interface ErrorReply {
  id: number;
  type: 'error';
  code: string;
  message: string;
  /** the worker's wasm memory size in bytes, when it has an instance */
  memory?: number;
}

export type WorkerReply = ProgressReply | ResultReply | ErrorReply | SessionOpenedReply | TileReply;
