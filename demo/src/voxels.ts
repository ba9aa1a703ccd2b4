// The demo's voxel agents: what a navmesh cannot carry. The shown level's solid space as a VoxelGrid (navbake's
// voxelize(), in a worker), made once per level and voxel size and kept, and paths through it for an agent that
// walks, climbs walls and ceilings, or flies. A big level gets coarser voxels so that the grid stays within a budget
// (about 20M voxels: a few megabytes of bits, a second or so to make); when even that would make voxels wider than
// the agent's radius (the 1M-triangle world), voxel agents are refused there. The paths are searched a slice at a
// time (VoxelGrid.findPathAsync, see VoxelSearch), so that even a long search never freezes the page; the latest
// request wins.
import { voxelize, type NavBakeConfig, type VoxelGrid, type VoxelPathOptions, type VoxelPathResult } from 'navbake';
import { geometryFromObject3D } from 'navbake/three';
import { Box3, type Object3D } from 'three';

/** What moves the agent: on the navmesh, or through the level's voxels as navbake's VoxelMove says. */
export type Agent = 'navmesh' | 'walk' | 'climb' | 'fly';

/** The panel's choices (label: agent). */
export const AGENT_LABELS: Readonly<Record<string, Agent>> = {
  'walk (navmesh)': 'navmesh',
  'walk (voxels)': 'walk',
  'climb (voxels)': 'climb',
  'fly (voxels)': 'fly',
};

export const agentLabel = (a: Agent): string => Object.keys(AGENT_LABELS).find((k) => AGENT_LABELS[k] === a) ?? a;

/** Voxels a level's grid may have before the demo makes them coarser. */
export const VOXEL_BUDGET = 20_000_000;

/** The voxel size for a level: the bake's cell sizes, or coarser ones within the budget; or why there is none. */
export interface VoxelPlan {
  cellSize: number;
  cellHeight: number;
  /** voxels along x, y, z at that size (estimated from the level's bounds; the grid's own once it is made) */
  dims: [number, number, number];
  voxels: number;
  /** the bake's cell sizes were too fine for the budget */
  coarsened: boolean;
  /** why voxel agents are off for this level, or null */
  refused: string | null;
}

type SizeConfig = Pick<Required<NavBakeConfig>, 'cellSize' | 'cellHeight' | 'agentRadius' | 'agentHeight'>;

export const millions = (n: number): string => (n >= 1e6 ? `${(n / 1e6).toFixed(n >= 1e8 ? 0 : 2)}M` : `${n}`);

/**
 * The voxel size for a level of these bounds: the bake's cellSize x cellHeight when the grid stays within `budget`
 * voxels, else both scaled up alike (to whole centimetres) until it does. Refused when those voxels would be wider
 * than the agent's radius (and than the bake's cells): the agent's clearance would be lost in them.
 */
export function planVoxels(size: [number, number, number], config: SizeConfig, budget: number): VoxelPlan {
  // as voxelize sizes its grid: whole cells past the farthest vertex along x and z
  const dimsAt = (cs: number, ch: number): [number, number, number] => [
    Math.floor(size[0] / cs) + 1,
    Math.max(1, Math.ceil(size[1] / ch)),
    Math.floor(size[2] / cs) + 1,
  ];
  const { cellSize, cellHeight } = config;
  const dims = dimsAt(cellSize, cellHeight);
  const voxels = dims[0] * dims[1] * dims[2];
  if (voxels <= budget) return { cellSize, cellHeight, dims, voxels, coarsened: false, refused: null };
  let f = Math.cbrt(voxels / budget);
  for (;;) {
    const cs = Math.ceil(cellSize * f * 100) / 100;
    const ch = Math.ceil(cellHeight * f * 100) / 100;
    const d = dimsAt(cs, ch);
    const n = d[0] * d[1] * d[2];
    if (n <= budget) {
      const limit = Math.max(cellSize, config.agentRadius);
      const refused =
        cs > limit
          ? `${millions(voxels)} voxels at ${cellSize} x ${cellHeight} m; within ${millions(budget)} they would be ${cs} m ` +
            `wide, more than the agent's radius (${config.agentRadius} m): voxel agents are off for this level`
          : null;
      return { cellSize: cs, cellHeight: ch, dims: d, voxels: n, coarsened: true, refused };
    }
    f *= 1.02;
  }
}

export interface VoxelInfo {
  phase: 'idle' | 'running' | 'done' | 'refused' | 'error';
  /** the level (its name) the grid is (being) made of */
  source: string;
  /** the voxel size used (or planned) */
  plan: VoxelPlan | null;
  /** voxelize() wall time, worker start and transfers included [ms] */
  ms: number | null;
  error: string | null;
  /** voxelize() calls started, and those whose grid was thrown away (aborted or replaced: a level or size change) */
  started: number;
  dropped: number;
}

interface Job {
  key: string;
  ac: AbortController;
  promise: Promise<void>;
}

/**
 * The voxel grid of the shown level, one at a time. `request` gives it when it is made for this level and size,
 * else starts making it (once) and calls back when it is there; a grid made for another level or size is never
 * handed out: it is disposed as soon as it is no longer the one asked for.
 */
export class LevelVoxels {
  readonly info: VoxelInfo = { phase: 'idle', source: '', plan: null, ms: null, error: null, started: 0, dropped: 0 };
  #grid: VoxelGrid | null = null;
  #key = '';
  #job: Job | null = null;
  /** a key whose voxelize() failed: not tried again until the level or size changes */
  #failed = '';
  #bounds: { level: number; size: [number, number, number] } | null = null;

  /**
   * The grid of level number `levelId` (the object shown, named `source`) at the size the config and budget give,
   * or null while it is being made (then `ready` runs once it is: ask again) or when it cannot be (info says why).
   */
  request(levelId: number, object: Object3D, source: string, config: Required<NavBakeConfig>, budget: number, ready: () => void): VoxelGrid | null {
    const [sx, sy, sz] = this.#size(levelId, object);
    // voxelize() adds the agent's height of room above the level (its default headroom): count it in the budget
    const plan = planVoxels([sx, sy + config.agentHeight, sz], config, budget);
    const key = `${levelId} ${plan.cellSize} ${plan.cellHeight}`;
    if (plan.refused) {
      this.#drop();
      Object.assign(this.info, { phase: 'refused', source, plan, ms: null, error: null });
      return null;
    }
    if (this.#grid && this.#key === key) return this.#grid;
    if (this.#job?.key === key) return null;
    if (this.#failed === key) return null;
    this.#drop();
    const ac = new AbortController();
    const t0 = performance.now();
    Object.assign(this.info, { phase: 'running', source, plan, ms: null, error: null });
    this.info.started++;
    const job: Job = { key, ac, promise: Promise.resolve() };
    this.#job = job;
    // The geometry the bake uses (every mesh, hidden or not), at the plan's voxel size.
    const geometry = geometryFromObject3D(object, { skipInvisible: false });
    job.promise = voxelize(geometry, { ...config, cellSize: plan.cellSize, cellHeight: plan.cellHeight }, { signal: ac.signal }).then(
      (grid) => {
        if (this.#job !== job) {
          grid.dispose(); // another level or size was asked for meanwhile
          this.info.dropped++;
          return;
        }
        this.#job = null;
        this.#grid = grid;
        this.#key = key;
        const dims = grid.dims;
        Object.assign(this.info, {
          phase: 'done',
          plan: { ...plan, dims, voxels: dims[0] * dims[1] * dims[2] },
          ms: performance.now() - t0,
        });
        ready();
      },
      (e: unknown) => {
        if (this.#job !== job) {
          this.info.dropped++; // aborted when it was replaced
          return;
        }
        this.#job = null;
        this.#failed = key;
        const code = (e as { code?: string })?.code;
        Object.assign(this.info, { phase: 'error', error: `${code ? `${code}: ` : ''}${e instanceof Error ? e.message : String(e)}` });
        console.warn('navbake demo: voxelize failed', e);
        ready();
      },
    );
    return null;
  }

  /** The grid in use (the last one `request` gave), for the test hooks. */
  get grid(): VoxelGrid | null {
    return this.#grid;
  }

  /** Whether a voxelize() runs (`settled` waits for it). */
  get busy(): boolean {
    return this.#job !== null;
  }

  /** Resolves once no voxelize() runs (the grid asked for last is there, or failed, or was refused). */
  async settled(): Promise<void> {
    while (this.#job) await this.#job.promise;
  }

  /** A new level is shown: its grid is made when a voxel agent asks for it. */
  reset(): void {
    this.#drop();
    this.#failed = '';
    this.#bounds = null;
    Object.assign(this.info, { phase: 'idle', source: '', plan: null, ms: null, error: null });
  }

  /** Stops the voxelize() running and frees the grid. */
  #drop(): void {
    this.#job?.ac.abort();
    this.#job = null;
    this.#grid?.dispose();
    this.#grid = null;
    this.#key = '';
  }

  /** The level's size (its bounds, computed once per level). */
  #size(levelId: number, object: Object3D): [number, number, number] {
    if (this.#bounds?.level !== levelId) {
      const b = new Box3().setFromObject(object);
      const size: [number, number, number] = b.isEmpty() ? [0, 0, 0] : [b.max.x - b.min.x, b.max.y - b.min.y, b.max.z - b.min.z];
      this.#bounds = { level: levelId, size };
    }
    return this.#bounds.size;
  }
}

/** The length of a polyline (xyz points). */
export function pathLength(points: ArrayLike<number>): number {
  let len = 0;
  for (let i = 3; i + 2 < points.length; i += 3) {
    len += Math.hypot(points[i] - points[i - 3], points[i + 1] - points[i - 2], points[i + 2] - points[i - 1]);
  }
  return len;
}

/**
 * A* nodes a voxel path may take (VoxelGrid's maxNodes). It was 262144 while the search ran in one piece on the main
 * thread, to bound the time the page froze. Sliced (findPathAsync) the search never blocks the page, so the budget
 * now bounds only memory and waiting, and is 2^20: 72 bytes a node (node 20, heap entry 16, chain 4, and two hash
 * slots of 16: a power of two fills them exactly), so 72 MiB of the page's wasm memory, taken by the first search
 * and kept (wasm memory does not shrink), and a search that uses them all runs about 1.3-2.5 s (headless Chromium on
 * a shared 2-core machine), "searching…" meanwhile. A search uses them all when the end cannot be reached (a
 * flight into the built-in level's closed tower: every free voxel, 1.5M, at weight 1), and more nodes then only
 * bring the partial path nearer. Paths that arrive take far fewer (measured, weight 1.5: the built-in level's flight
 * 1950, 36 walks, climbs and flights across the 100k world at most 13297; a few flights at weight 1 at most 47551),
 * so 262144 suffices on the demo's own levels; the bigger budget is for dropped models, where a long detour (a maze,
 * a big building's floors) would otherwise end partial. 2^22 (the package's most) would be 288 MiB and waits of up
 * to ten seconds.
 */
export const VOXEL_NODES = 1 << 20;

/**
 * The heuristic weight of the voxel agents' searches: weighted A*, a path at most 1.5 times the shortest
 * (smoothing takes most of that back) for a search that visits fewer voxels (the flight across the 100k world
 * between the page's markers: 3215 nodes against 46133 at weight 1).
 */
export const VOXEL_WEIGHT = 1.5;

/** The voxel agent's path search: what it does, and counts for the tests. */
export interface VoxelSearchInfo {
  /** searching: a search runs (no path is drawn meanwhile); done: the last one gave its path; error: it failed */
  phase: 'idle' | 'searching' | 'done' | 'error';
  /** searches started; those stopped by a newer request (or by the path not being a voxel agent's any more) */
  started: number;
  aborted: number;
  /** requests answered by the search running or the path shown (the same grid, ends and options): none started */
  reused: number;
  /** the last finished search's wall time, from the request to its path [ms] */
  ms: number | null;
  error: string | null;
}

interface SearchJob {
  grid: VoxelGrid;
  key: string;
  ac: AbortController;
  done: Promise<void>;
}

/**
 * The voxel agent's path searches, the latest request winning: each runs sliced (VoxelGrid.findPathAsync: a few ms at
 * a time, the page free in between), and a new request aborts the one running, whose result (or rejection) is then
 * never handed on. A request that asks what the search running or the path shown already answers (the same grid,
 * ends and options: a bake that ended, an obstacle update) starts nothing.
 */
export class VoxelSearch {
  readonly info: VoxelSearchInfo = { phase: 'idle', started: 0, aborted: 0, reused: 0, ms: null, error: null };
  #job: SearchJob | null = null;
  /** what the path shown (given to `found` last) was searched with, until stop() */
  #shown: { grid: VoxelGrid; key: string } | null = null;

  /**
   * Searches a path on `grid`, or says that the one running or shown is it. `found` gets the path and the search's
   * wall time and says whether it drew it; `failed` gets an error other than an abort. Neither is called for a
   * search that a later request or stop() replaced.
   */
  request(
    grid: VoxelGrid,
    start: [number, number, number],
    end: [number, number, number],
    options: VoxelPathOptions,
    found: (r: VoxelPathResult, ms: number) => boolean,
    failed: (e: unknown) => void,
  ): 'searching' | 'shown' {
    const key = JSON.stringify([start, end, options]);
    if (this.#job?.grid === grid && this.#job.key === key) {
      this.info.reused++;
      return 'searching';
    }
    if (!this.#job && this.#shown?.grid === grid && this.#shown.key === key) {
      this.info.reused++;
      return 'shown';
    }
    this.stop();
    const ac = new AbortController();
    const job: SearchJob = { grid, key, ac, done: Promise.resolve() };
    this.#job = job;
    this.info.started++;
    Object.assign(this.info, { phase: 'searching', error: null });
    const t0 = performance.now();
    job.done = grid.findPathAsync(start, end, { ...options, signal: ac.signal }).then(
      (r) => {
        if (this.#job !== job) return;
        this.#job = null;
        const ms = performance.now() - t0;
        Object.assign(this.info, { phase: 'done', ms });
        if (found(r, ms)) this.#shown = { grid, key };
      },
      (e: unknown) => {
        if (this.#job !== job) return; // aborted by a later request (or its grid disposed with its level): not an error
        this.#job = null;
        const code = (e as { code?: string })?.code;
        const error = `${code ? `${code}: ` : ''}${e instanceof Error ? e.message : String(e)}`;
        Object.assign(this.info, { phase: 'error', ms: null, error });
        failed(e);
      },
    );
    return 'searching';
  }

  /** Whether a search runs. */
  get searching(): boolean {
    return this.#job !== null;
  }

  /** Aborts the search running (its path is never drawn) and forgets the path shown: another path takes its place. */
  stop(): void {
    this.#shown = null;
    if (!this.#job) return;
    this.#job.ac.abort();
    this.#job = null;
    this.info.aborted++;
    this.info.phase = 'idle';
  }

  /** Resolves once no search runs (the latest request's path is drawn, or it failed, or was stopped). */
  async settled(): Promise<void> {
    while (this.#job) await this.#job.done;
  }
}
