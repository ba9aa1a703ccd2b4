/**
 * inspect(): the bake's intermediate stages for debug views and tuning -- the walkable spans (voxels) with their
 * area and region ids, the region outlines (contours), per-stage times and counts, and the memory the bake used.
 * It runs the same pipeline as bake() (in a worker by default) but keeps every stage, so it costs a bake and
 * returns arrays that grow with the level: use it on the level (or the one tile) being looked at. The polygons
 * themselves come from the NavMesh (`polygons()`, `toGeometry()`).
 */
import { bakeOptions, configFor, hereProgress, meshInput, progressOf, workerCopies, type BakeProgress, type Geometry } from './bake.js';
import type { NavBakeConfig } from './config.js';
import { abortedAs, NavBakeError } from './errors.js';
import { settle, sharedPool, workersAvailable } from './pool.js';
import { wasmModule } from './runtime.js';
import type { Vec3 } from './wasm.js';
import { shown } from './args.js';

export interface InspectOptions {
  /** `false` inspects on the calling thread (blocking it); a number runs it in the bake worker pool. @default a worker */
  workers?: number | false;
  /** Aborting rejects with the signal's reason and stops the work. */
  signal?: AbortSignal;
  /** Called per stage. */
  onProgress?: (p: BakeProgress) => void;
  /**
   * For a tiled config (tileSize > 0): the tile [x, z] of the grid bake() would use, baked with the same bounds,
   * border and triangles. @default a solo bake of the whole level (tileSize is then ignored)
   */
  tile?: readonly [number, number];
}

/** The grid the spans and contours live on (for a tile: the tile itself, without the border baked around it). */
export interface InspectGrid {
  /** World position of cell (0, 0)'s minimum corner; y is the grid's floor (span heights count from it). */
  origin: Vec3;
  /** The opposite corner: origin + width/height cells in x/z, the top of the bounds in y. */
  max: Vec3;
  /** [world] */
  cellSize: number;
  /** [world] */
  cellHeight: number;
  /** cells along x */
  width: number;
  /** cells along z */
  height: number;
  /** cells baked around a tile so its edges match its neighbours' (0 for a solo bake); not in spans or contours */
  borderSize: number;
}

/**
 * The walkable spans after erosion and area marking (the compact heightfield's spans with an area), one entry
 * per span in parallel arrays. Span i covers cell (x[i], z[i]); its floor is at world y
 * `grid.origin[1] + y[i] * grid.cellHeight`.
 */
export interface InspectSpans {
  count: number;
  x: Uint16Array;
  z: Uint16Array;
  /** floor [cells above grid.origin[1]] */
  y: Uint16Array;
  /** area id 1..63 */
  area: Uint8Array;
  /** region id 1..regionCount; 0 = in no region (an island smaller than regionMinSize) */
  region: Uint16Array;
}

/**
 * Region outlines, one per contour: the simplified outline (what the polygons are built from) and the raw one
 * (one point per cell edge), both as world xyz. Contour i's vertices are `vertices[3 * offsets[i] .. 3 *
 * offsets[i + 1]]` (a closed loop), likewise rawVertices with rawOffsets. y is the highest floor around the corner.
 */
export interface InspectContours {
  count: number;
  region: Uint16Array;
  area: Uint8Array;
  offsets: Uint32Array;
  vertices: Float32Array;
  rawOffsets: Uint32Array;
  rawVertices: Float32Array;
}

/** Milliseconds per stage (nb_bake's NB_STAT_MS_*); 'distance' is the watershed's distance field (0 otherwise). */
export interface StageTimes {
  rasterize: number;
  filter: number;
  compact: number;
  erode: number;
  areas: number;
  distance: number;
  regions: number;
  contours: number;
  polymesh: number;
  detail: number;
  total: number;
}

/** Counts of each stage (nb_bake's statistics). */
export interface InspectCounts {
  /** grid columns along x and z, border included */
  gridWidth: number;
  gridHeight: number;
  /** solid spans after the filters */
  heightfieldSpans: number;
  /** open spans of the compact heightfield (walkable before erosion) */
  compactSpans: number;
  /** spans still walkable after erosion */
  walkableSpans: number;
  /** highest region id + 1, as recastnavigation reports it (so regionCount + 1) */
  regions: number;
  contours: number;
  /** polygons of the polygon mesh: ground only (NavMesh.tiles() counts off-mesh link polygons too) */
  polygons: number;
  polygonVertices: number;
  detailVertices: number;
  detailTriangles: number;
}

export interface Inspection {
  /** the tile inspected, or null for a solo bake of the whole level */
  tile: [number, number] | null;
  grid: InspectGrid;
  spans: InspectSpans;
  /** regions: ids 1..regionCount */
  regionCount: number;
  contours: InspectContours;
  times: StageTimes;
  counts: InspectCounts;
  memory: {
    /** most bytes the bake's stages held at once (the input copy not counted) */
    peakBytes: number;
    /** size of the wasm memory that ran it (it only grows: the high-water mark of that instance) */
    heapBytes: number;
  };
}

function invalid(message: string): NavBakeError {
  return new NavBakeError('NB_ERR_INVALID_ARG', `navbake.inspect: ${message}`);
}

/**
 * Bakes `geometry` like bake() and returns every intermediate stage (see {@link Inspection}). Rejects with a
 * NavBakeError (the C status and message: a bad config, a tile outside the grid, a tile with no triangles) or the
 * abort reason.
 */
export async function inspect(geometry: Geometry, config?: NavBakeConfig, opts?: InspectOptions): Promise<Inspection> {
  const options = bakeOptions('navbake.inspect', opts, ['workers', 'signal', 'onProgress', 'tile']);
  const { signal, onProgress } = options;
  const { w, values, field } = await configFor(config, signal);
  const tileSize = field('tileSize');
  let tile: Int32Array | null = null;
  if (options.tile != null) {
    const t = options.tile;
    if (!(typeof t === 'object' && t.length === 2 && Number.isInteger(t[0]) && Number.isInteger(t[1]) && t[0] >= 0 && t[1] >= 0)) {
      throw invalid(`options.tile must be [x, z], two integers >= 0 (got ${Array.isArray(t) ? `[${t.map(shown).join(', ')}]` : shown(t)})`);
    }
    if (!(tileSize > 0)) throw invalid('options.tile needs a tiled config (tileSize > 0)');
    tile = Int32Array.from(t);
  }
  const mesh = meshInput(geometry, 'navbake.inspect').mesh; // links do not change the stages inspected
  const workers = options.workers ?? 1;
  if (workers === false || !workersAvailable()) {
    try {
      return w.inspect(mesh, values, tile, hereProgress(onProgress, signal));
    } catch (e) {
      throw abortedAs(e, signal);
    }
  }

  const pool = sharedPool(() => wasmModule(), workers);
  const { copies, transfer } = workerCopies(mesh);
  const req = { type: 'inspect' as const, ...copies, volumes: mesh.volumes ?? null, config: values, tile };
  const task = pool.run(req, transfer, (p) => onProgress?.(progressOf(p.stage, p.done, p.total)));
  const r = await settle(task, signal);
  if (!r.inspection) throw new NavBakeError('NB_ERR_WORKER', 'navbake.inspect: the worker sent no inspection');
  return r.inspection;
}
