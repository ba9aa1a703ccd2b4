/**
 * inspect(): the bake's intermediate stages for debug views and tuning -- the walkable spans (voxels) with their
 * area and region ids, the region outlines (contours), per-stage times and counts, and the memory the bake used.
 * It runs the same pipeline as bake() (in a worker by default) but keeps every stage, so it costs a bake and
 * returns arrays that grow with the level: use it on the level (or the one tile) being looked at. The polygons
 * themselves come from the NavMesh (`polygons()`, `toGeometry()`).
 */
import { bakeOptions, configFor, hereProgress, meshInput, progressOf, snapshot, workerCopies, type BakeProgress, type Geometry } from './bake.js';
import type { NavBakeConfig } from './config.js';
import { abortedAs, abortReason, NavBakeError } from './errors.js';
import { settle, sharedPool, workersAvailable } from './pool.js';
import { wasmModule } from './runtime.js';
import type { Vec3 } from './wasm.js';
import { shown } from './args.js';
import { linksData } from './volumes.js';

/** inspect()'s options. */
export interface InspectOptions {
  /** `false` inspects on the calling thread (blocking it); a number runs it in the bake worker pool. @default a worker */
  workers?: number | false | undefined;
  /** Aborting rejects with the signal's reason and stops the work. */
  signal?: AbortSignal | undefined;
  /** Called as each stage goes (several times a stage, from done 0 to total). */
  onProgress?: ((p: BakeProgress) => void) | undefined;
  /**
   * For a tiled config (tileSize > 0): the tile [x, z] of the grid bake() would use, baked with the same bounds,
   * border and triangles. @default a solo bake of the whole level (tileSize is then ignored)
   */
  tile?: readonly [number, number] | undefined;
}

/** The grid the spans and contours live on (for a tile: the tile itself, without the border baked around it). */
export interface InspectGrid {
  /** World position of cell (0, 0)'s minimum corner; y is the grid's floor (span heights count from it). */
  origin: Vec3;
  /**
   * The opposite corner: origin + width/height cells in x/z (float32 values, as origin's); in y the top of the
   * heightfield: the level's highest point plus agentHeight (room for a span's clearance above it).
   */
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
  /** spans, the length of each array */
  count: number;
  /** cell column [cells from grid.origin along x] */
  x: Uint16Array<ArrayBuffer>;
  /** cell row [cells from grid.origin along z] */
  z: Uint16Array<ArrayBuffer>;
  /** floor [cells above grid.origin[1]] */
  y: Uint16Array<ArrayBuffer>;
  /** area id 1..63 */
  area: Uint8Array<ArrayBuffer>;
  /** region id 1..regionCount; 0 = in no region (an island smaller than regionMinSize) */
  region: Uint16Array<ArrayBuffer>;
}

/**
 * Region outlines, one per contour: the simplified outline (what the polygons are built from) and the raw one
 * (one point per cell edge), both as world xyz. Contour i's vertices are `vertices[3 * offsets[i] .. 3 *
 * offsets[i + 1]]` (a closed loop), likewise rawVertices with rawOffsets. y is the highest floor around the corner.
 */
export interface InspectContours {
  /** contours, the length of region and area (offsets and rawOffsets have count + 1) */
  count: number;
  /** per contour, the region it outlines */
  region: Uint16Array<ArrayBuffer>;
  /** per contour, its region's area id */
  area: Uint8Array<ArrayBuffer>;
  /** count + 1 offsets into vertices, in points (xyz triples) */
  offsets: Uint32Array<ArrayBuffer>;
  /** every simplified outline's points, world xyz */
  vertices: Float32Array<ArrayBuffer>;
  /** count + 1 offsets into rawVertices, in points */
  rawOffsets: Uint32Array<ArrayBuffer>;
  /** every raw outline's points (one per cell edge), world xyz */
  rawVertices: Float32Array<ArrayBuffer>;
}

/** Milliseconds per stage (nb_bake's NB_STAT_MS_*). */
export interface StageTimes {
  /** walkable marking by slope and rasterization into the solid heightfield */
  rasterize: number;
  /** the filters: low hanging obstacles, ledges, low ceilings */
  filter: number;
  /** the compact heightfield and its neighbour links */
  compact: number;
  /** erosion by agentRadius */
  erode: number;
  /** the median area filter and the area volumes */
  areas: number;
  /** the distance field: watershed and wavefront (0 for monotone and layers, which use none) */
  distance: number;
  /** the region partition (the distance field not included) */
  regions: number;
  /** the region outlines */
  contours: number;
  /** the convex polygons */
  polymesh: number;
  /** the detail height mesh */
  detail: number;
  /** the whole bake, every stage included */
  total: number;
}

/** Counts of each stage (nb_bake's statistics). */
export interface InspectCounts {
  /** grid cells along x, border included */
  gridWidth: number;
  /** grid cells along z, border included */
  gridHeight: number;
  /** solid spans after the filters */
  heightfieldSpans: number;
  /** open spans of the compact heightfield (walkable before erosion) */
  compactSpans: number;
  /**
   * spans still walkable after erosion, before area marking, the border included (spans.count leaves out a tile's
   * border and the spans a volume carves away)
   */
  walkableSpans: number;
  /** highest region id + 1, as recastnavigation reports it (so regionCount + 1) */
  regions: number;
  /** region outlines traced */
  contours: number;
  /** polygons of the polygon mesh: ground only (NavMesh.tiles() counts off-mesh link polygons too) */
  polygons: number;
  /** vertices of the polygon mesh */
  polygonVertices: number;
  /** vertices of the detail mesh */
  detailVertices: number;
  /** triangles of the detail mesh */
  detailTriangles: number;
}

/** inspect()'s result: every intermediate stage of one bake. */
export interface Inspection {
  /** the tile inspected, or null for a solo bake of the whole level */
  tile: [number, number] | null;
  /** the grid spans and contours live on */
  grid: InspectGrid;
  /** the walkable spans after erosion and area marking */
  spans: InspectSpans;
  /** regions: ids 1..regionCount */
  regionCount: number;
  /** the region outlines */
  contours: InspectContours;
  /** milliseconds per stage */
  times: StageTimes;
  /** counts of each stage */
  counts: InspectCounts;
  /** the memory the bake used */
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
export async function inspect(geometry: Geometry, config?: NavBakeConfig | null, opts?: InspectOptions | null): Promise<Inspection> {
  try {
    return await inspectUnnamed(geometry, config, opts);
  } catch (e) {
    throw named(e);
  }
}

/** C names the tile and the links it refuses as its own arguments ("nbw_inspect: tile (x, z) ...", "nb_...: links[i]
 * ..."): say them as the option and the geometry field they came from. */
function named(e: unknown): unknown {
  if (!(e instanceof NavBakeError)) return e;
  const t = /^nbw_inspect: tile \((-?\d+), (-?\d+)\)/.exec(e.message);
  if (t) return new NavBakeError(e.code, `navbake.inspect: options.tile [${t[1]}, ${t[2]}]${e.message.slice(t[0].length)}`);
  const l = /^nb[a-z_]*: links\[(\d+)\]/.exec(e.message);
  if (l) return new NavBakeError(e.code, `navbake.inspect: geometry.links[${l[1]}]${e.message.slice(l[0].length)}`);
  return e;
}

const TILE_MAX = 0x7fffffff; // tiles are int32 in C (a grid is far smaller: its error names the grid)

async function inspectUnnamed(geometry: Geometry, config?: NavBakeConfig | null, opts?: InspectOptions | null): Promise<Inspection> {
  const options = bakeOptions('navbake.inspect', opts, ['workers', 'signal', 'onProgress', 'tile']);
  const { signal, onProgress } = options;
  if (signal?.aborted) throw abortReason(signal);
  const mesh = meshInput(geometry, 'navbake.inspect').mesh; // read at the call
  // checked as bake() checks them, here and (their bounds, the tile borders) in C; they change no stage inspected
  const links = linksData('navbake.inspect: geometry.links', geometry.links);
  let tile: Int32Array | null = null; // read at the call too: the caller may change its array as soon as this returns
  if (options.tile != null) {
    const t = options.tile;
    const ok = (v: unknown) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= TILE_MAX;
    if (!(typeof t === 'object' && t.length === 2 && ok(t[0]) && ok(t[1]))) {
      throw invalid(`options.tile must be [x, z], two integers from 0 to ${TILE_MAX} (got ${Array.isArray(t) ? `[${t.map(shown).join(', ')}]` : shown(t)})`);
    }
    tile = Int32Array.from(t);
  }
  const { w, values, field } = await configFor(snapshot(config), signal);
  if (tile && !(field('tileSize') > 0)) throw invalid('options.tile needs a tiled config (tileSize > 0)');
  const workers = options.workers ?? 1;
  if (workers === false || !workersAvailable()) {
    try {
      return w.inspect({ ...mesh, links }, values, tile, hereProgress(onProgress, signal));
    } catch (e) {
      throw abortedAs(e, signal);
    }
  }

  const pool = sharedPool(() => wasmModule());
  const { copies, transfer } = workerCopies(mesh);
  const req = { type: 'inspect' as const, ...copies, volumes: mesh.volumes ?? null, links, config: values, tile };
  const task = pool.run(req, transfer, (p) => onProgress?.(progressOf(p.stage, p.done, p.total)), workers);
  const r = await settle(task, signal);
  if (!r.inspection) throw new NavBakeError('NB_ERR_WORKER', 'navbake.inspect: the worker sent no inspection');
  return r.inspection;
}
