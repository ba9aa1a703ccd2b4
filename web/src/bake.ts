/**
 * bake(): triangles in, NavMesh out. By default in a worker (solo bakes: one worker; tiled bakes: the tiles
 * spread over several), so the page never freezes; `workers: false` bakes on the calling thread. Whatever runs
 * it, the same input gives a navmesh that saves to the same bytes.
 */
import { configValues, type NavBakeConfig } from './config.js';
import { abortReason, NavBakeError } from './errors.js';
import { hardwareThreads } from './env.js';
import { adoptNavmesh, type NavMesh } from './navmesh.js';
import { sharedPool, workersAvailable, type TaskHandle } from './pool.js';
import { STAGE_TILES, type ProgressReply } from './protocol.js';
import { mainWasm, wasmModule } from './runtime.js';
import { STAGES, type BakeStage, type CProgress, type MeshInput, type NavmeshParams, type TileBlob, type Wasm } from './wasm.js';

/** Triangles to bake. y is up. */
export interface Geometry {
  /** xyz per vertex */
  positions: Float32Array | ArrayLike<number>;
  /** three vertex indices per triangle; omitted: consecutive vertex triples */
  indices?: Uint32Array | Uint16Array | ArrayLike<number>;
  /** area id per triangle: 0 = not walkable, 1..63 (63 = the default walkable area). @default all 63 */
  areas?: Uint8Array | ArrayLike<number>;
}

export interface BakeProgress {
  /** the pipeline stage running, or 'tiles' for tiled bakes */
  stage: BakeStage;
  done: number;
  total: number;
}

export interface BakeOptions {
  /**
   * Workers to bake in: a tiled bake spreads its tiles over this many, a solo bake uses one. `false` bakes on
   * the calling thread (blocking it). @default min(4, hardware threads - 1), at least 1
   */
  workers?: number | false;
  /** Aborting rejects the bake with the signal's reason (an AbortError) and stops the work. */
  signal?: AbortSignal;
  /** Called per stage (solo bakes) or per finished tile (tiled bakes). */
  onProgress?: (p: BakeProgress) => void;
  /**
   * Hand the geometry's buffers to the worker instead of copying them. Faster for big meshes, but the arrays
   * you passed become unusable (detached). @default false
   */
  transfer?: boolean;
  /** @internal test hook: the (first) worker exits once the bake reaches this nb_stage */
  testExitAtStage?: number;
}

/** Default worker count of a tiled bake. */
export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(4, hardwareThreads() - 1));
}

function invalid(message: string): NavBakeError {
  return new NavBakeError('NB_ERR_INVALID_ARG', `navbake.bake: ${message}`);
}

/** The geometry in C's layout; `owned` lists the arrays made here (free to transfer). */
function normalize(g: Geometry): { mesh: MeshInput; owned: Set<ArrayBufferView> } {
  if (!g || typeof g !== 'object' || g.positions == null) throw invalid('geometry.positions is required');
  const owned = new Set<ArrayBufferView>();
  const conv = <T extends ArrayBufferView>(v: unknown, ok: boolean, make: () => T): T => {
    if (ok) return v as T;
    const out = make();
    owned.add(out);
    return out;
  };
  const positions = conv(g.positions, g.positions instanceof Float32Array, () => Float32Array.from(g.positions));
  if (positions.length % 3 !== 0) throw invalid(`positions.length must be a multiple of 3 (got ${positions.length})`);
  const indices =
    g.indices == null ? null : conv(g.indices, g.indices instanceof Uint32Array, () => Uint32Array.from(g.indices!));
  if (indices && indices.length % 3 !== 0) throw invalid(`indices.length must be a multiple of 3 (got ${indices.length})`);
  const triangles = indices ? indices.length / 3 : Math.floor(positions.length / 9);
  const areas = g.areas == null ? null : conv(g.areas, g.areas instanceof Uint8Array, () => Uint8Array.from(g.areas!));
  if (areas && areas.length !== triangles) {
    throw invalid(`areas.length must equal the triangle count ${triangles} (got ${areas.length})`);
  }
  return { mesh: { positions, indices, areas }, owned };
}

interface Grid {
  params: NavmeshParams;
  tiles: Int32Array; // x, z pairs
}

/**
 * The tile grid of nb_bake_navmesh, in float32 arithmetic like the C (bake_navmesh.c, and nbw_bake_grid_tile in
 * wasm_api.c): the origin is the bounds' minimum (min/max written as C's nb_minf/nb_maxf, so even -0 and NaN
 * behave alike), a tile is tileSize * cellSize wide. Computed here so the main thread never copies the geometry
 * into its own heap; a test checks the result against the C bake byte for byte.
 */
function tileGrid(positions: Float32Array, cellSize: number, tileSize: number): Grid {
  if (positions.length === 0) throw new NavBakeError('NB_ERR_EMPTY_MESH', 'navbake.bake: the mesh has no vertices');
  for (let i = 0; i < positions.length; i++) {
    if (!Number.isFinite(positions[i])) {
      throw new NavBakeError(
        'NB_ERR_NONFINITE',
        `navbake.bake: vertex ${Math.floor(i / 3)} has a non-finite coordinate (${'xyz'[i % 3]} = ${positions[i]})`,
      );
    }
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
 * What nb_bake checks per tile, checked once for the whole mesh: inside a tile C sees only the triangles near
 * it, so its messages would number them within the tile.
 */
function checkTriangles(mesh: MeshInput): void {
  const nv = mesh.positions.length / 3;
  const idx = mesh.indices;
  if (idx) {
    for (let i = 0; i < idx.length; i++) {
      if (idx[i] >= nv) {
        throw new NavBakeError(
          'NB_ERR_INDEX_RANGE',
          `navbake.bake: triangle ${Math.floor(i / 3)} uses vertex index ${idx[i]} but the mesh has ${nv} vertices`,
        );
      }
    }
  }
  const areas = mesh.areas;
  if (areas) {
    for (let i = 0; i < areas.length; i++) {
      if (areas[i] > 63) throw invalid(`areas[${i}] is ${areas[i]}; area ids are 0..63`);
    }
  }
}

function assemble(w: Wasm, params: NavmeshParams, blobs: TileBlob[]): NavMesh {
  const nav = w.navmeshCreate(params);
  try {
    for (const b of blobs) w.addTile(nav, b.bytes);
  } catch (e) {
    w.destroyNavmesh(nav);
    throw e;
  }
  return adoptNavmesh(w, nav);
}

/** Bakes a navmesh. Rejects with NavBakeError (the C status name and message) or the abort reason. */
export async function bake(geometry: Geometry, config?: NavBakeConfig, options: BakeOptions = {}): Promise<NavMesh> {
  const { signal, onProgress } = options;
  if (signal?.aborted) throw abortReason(signal);
  const w = await mainWasm();
  if (signal?.aborted) throw abortReason(signal);
  const values = configValues(w.fields, config);
  const resolved = w.resolveConfig(values);
  const field = (name: string) => resolved[w.fields.findIndex((f) => f.name === name)];
  const tileSize = field('tileSize');
  const { mesh, owned } = normalize(geometry);
  const grid = tileSize > 0 ? tileGrid(mesh.positions, field('cellSize'), tileSize) : null;
  if (grid) {
    if (mesh.indices ? mesh.indices.length === 0 : mesh.positions.length < 9) {
      throw new NavBakeError('NB_ERR_EMPTY_MESH', 'navbake.bake: the mesh has no triangles');
    }
    checkTriangles(mesh);
  }
  const workers = options.workers ?? defaultWorkerCount();
  if (workers === false || !workersAvailable()) return bakeHere(w, mesh, values, grid, options);
  if (!(Number.isInteger(workers) && workers >= 1)) throw invalid(`options.workers must be false or an integer >= 1 (got ${workers})`);

  // ---- in workers ----
  const pool = sharedPool(() => wasmModule(), workers);
  const tileLists: (Int32Array | null)[] = [];
  if (!grid) tileLists.push(null);
  else {
    // Interleaved, so neighbouring (similarly loaded) tiles go to different workers.
    const n = grid.tiles.length / 2;
    const k = Math.min(workers, n);
    for (let j = 0; j < k; j++) {
      const list: number[] = [];
      for (let t = j; t < n; t += k) list.push(grid.tiles[2 * t], grid.tiles[2 * t + 1]);
      tileLists.push(Int32Array.from(list));
    }
  }
  const tileDone = new Array<number>(tileLists.length).fill(0);
  const totalTiles = grid ? grid.tiles.length / 2 : 0;
  const tasks: TaskHandle[] = [];
  // Every task but the last gets its own copy; the last may take the caller's buffers (options.transfer).
  tileLists.forEach((tiles, j) => {
    const last = j === tileLists.length - 1;
    const transfer: Transferable[] = [];
    const pass = <T extends Float32Array | Uint32Array | Uint8Array>(a: T | null): T | null => {
      if (!a) return null;
      const whole = a.buffer instanceof ArrayBuffer && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength;
      const mine = owned.has(a) || options.transfer === true;
      const out = last && whole && mine ? a : (a.slice() as T);
      transfer.push(out.buffer as ArrayBuffer);
      return out;
    };
    const req = {
      positions: pass(mesh.positions)!,
      indices: pass(mesh.indices),
      areas: pass(mesh.areas),
      config: values,
      tiles,
      testExitAtStage: j === 0 ? options.testExitAtStage : undefined,
    };
    const progress = (p: ProgressReply) => {
      if (!onProgress) return;
      if (p.stage === STAGE_TILES) {
        tileDone[j] = p.done;
        onProgress({ stage: 'tiles', done: tileDone.reduce((a, b) => a + b, 0), total: totalTiles });
      } else {
        onProgress({ stage: STAGES[p.stage - 1] ?? 'rasterize', done: p.done, total: p.total });
      }
    };
    tasks.push(pool.run(req, transfer, progress));
  });

  const cancelAll = (reason: unknown) => tasks.forEach((t) => t.cancel(reason));
  const onAbort = () => cancelAll(abortReason(signal!));
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // The first failure ends the whole bake: the other tasks are cancelled (their workers stop).
    const results = await Promise.all(
      tasks.map((t) =>
        t.promise.catch((e) => {
          cancelAll(e);
          throw e;
        }),
      ),
    );
    if (signal?.aborted) throw abortReason(signal);
    if (!grid) {
      return adoptNavmesh(w, w.load(results[0].bytes!));
    }
    return assemble(w, grid.params, results.flatMap((r) => r.tiles ?? []));
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** workers: false -- the same work on the calling thread; abort is checked at every progress report. */
function bakeHere(w: Wasm, mesh: MeshInput, values: Float64Array, grid: Grid | null, options: BakeOptions): NavMesh {
  const { signal, onProgress } = options;
  const progress: CProgress = (stage, done, total) => {
    if (!grid) onProgress?.({ stage: STAGES[stage - 1] ?? 'rasterize', done, total });
    return signal?.aborted === true;
  };
  try {
    if (!grid) return adoptNavmesh(w, w.bakeNavmesh(mesh, values, progress));
    const total = grid.tiles.length / 2;
    const blobs = w.bakeTiles(mesh, values, grid.tiles, progress, (done) => {
      onProgress?.({ stage: 'tiles', done, total });
      return signal?.aborted === true;
    });
    if (signal?.aborted) throw abortReason(signal);
    return assemble(w, grid.params, blobs);
  } catch (e) {
    if (signal?.aborted && (e as NavBakeError)?.code === 'NB_ERR_CANCELLED') throw abortReason(signal);
    throw e;
  }
}
