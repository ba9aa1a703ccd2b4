// Messages between the main thread and the bake workers. Every message has { id, type }; buffers travel in the
// transfer list, never copied twice.
import type { TileBlob } from './wasm.js';

/** Sent once to each new worker: the compiled wasm, which it instantiates with its own memory. */
export interface InitRequest {
  id: 0;
  type: 'init';
  wasm: WebAssembly.Module;
}

export interface BakeRequest {
  id: number;
  type: 'bake';
  positions: Float32Array;
  indices: Uint32Array | null;
  areas: Uint8Array | null;
  /** C config values (one per field of the C table, 0 = default), as configValues() gives them */
  config: Float64Array;
  /** null: bake the whole navmesh and reply with its saved bytes; else (x, z) pairs of grid tiles to bake */
  tiles: Int32Array | null;
  /** Test hook: the worker exits (Node) or throws uncaught (browser) once the bake reaches this nb_stage. */
  testExitAtStage?: number;
}

export type WorkerRequest = InitRequest | BakeRequest;

export interface ProgressReply {
  id: number;
  type: 'progress';
  /** nb_stage (1..9), or 0 for "tiles": done = tiles finished by this worker */
  stage: number;
  done: number;
  total: number;
}

export interface ResultReply {
  id: number;
  type: 'result';
  /** the saved navmesh (whole-navmesh requests) */
  bytes?: Uint8Array;
  /** the baked tiles with polygons (tile requests) */
  tiles?: TileBlob[];
}

export interface ErrorReply {
  id: number;
  type: 'error';
  code: string;
  message: string;
}

export type WorkerReply = ProgressReply | ResultReply | ErrorReply;

/** nb_stage value used in progress replies for "a tile finished". */
export const STAGE_TILES = 0;
