// The demo's voxel agents: what a navmesh cannot carry. The shown level's solid space as a VoxelGrid (navbake's
// voxelize(), in a worker), made once per level and voxel size and kept, and paths through it for an agent that
// walks, climbs walls and ceilings, or flies (VoxelGrid.findPath). A big level gets coarser voxels so that the grid
// stays within a budget (about 20M voxels: a few megabytes of bits, a second or so to make); when even that would
// make voxels wider than the agent's radius (the 1M-triangle world), voxel agents are refused there.
import { voxelize, type NavBakeConfig, type VoxelGrid } from 'navbake';
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
  const dimsAt = (cs: number, ch: number): [number, number, number] => [
    Math.max(1, Math.ceil(size[0] / cs)),
    Math.max(1, Math.ceil(size[1] / ch)),
    Math.max(1, Math.ceil(size[2] / cs)),
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
