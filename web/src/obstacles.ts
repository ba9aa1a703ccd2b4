/**
 * Live obstacles on a tiled navmesh baked with `obstacles: true`. The bake leaves, on the main thread, each tile's
 * cache blob (its compact heightfield after erosion and the bake-time volumes, encoded by C). An obstacle change
 * marks dirty the tiles whose box (the tile with its border, nb_tile_dirty_box) overlaps the old or the new
 * volume's bounds; update() rebuilds exactly those tiles from their caches (nb_tile_rebuild, in the worker pool or
 * on this thread) and swaps them in all at once. A tile the user takes out (NavMesh.removeTile) is left out and
 * pending until NavMesh.loadTile puts it back.
 */
import { abortSignal, intIn, invalid, optionsObject, shown, workerCount } from './args.js';
import { abortReason, NavBakeError, onAbort } from './errors.js';
import { sharedPool, workersAvailable, type TaskHandle } from './pool.js';
import { wasmModule } from './runtime.js';
import { overlapsXZ, volumeData, type Volume, type VolumeData } from './volumes.js';
import type { NavmeshParams, Wasm } from './wasm.js';

/** NavMesh.update()'s options. */
export interface UpdateOptions {
  /** Workers to rebuild in (1..64); `false` rebuilds on the calling thread. @default the bake's `workers` option */
  workers?: number | false | undefined;
  /**
   * Aborting rejects with the signal's reason, stops the workers' rebuilds and swaps nothing in: the tiles stay
   * pending for the next call. (A rebuild on the calling thread, once begun, runs to its end.)
   */
  signal?: AbortSignal | undefined;
}

/** What update() rebuilt. */
export interface ObstacleUpdate {
  /** the rebuilt tiles, [x, z], sorted by (z, x) */
  tiles: [number, number][];
  /**
   * Whether a path (xyz points, as findPath gives them) crosses a rebuilt tile: only such paths may now be
   * blocked or run through a changed area, so re-plan those.
   */
  touches(points: ArrayLike<number>): boolean;
}

/** A tile's key in maps: (z, x) order sorts like the keys. */
export const tileKey = (x: number, z: number): number => z * 4096 + x;
const unkey = (k: number): [number, number] => [k % 4096, Math.floor(k / 4096)];

/** Whether segment a-b (xz) meets the closed rectangle [x0, x1] x [z0, z1] (Liang-Barsky clipping). */
function segmentHitsRect(ax: number, az: number, bx: number, bz: number, r: readonly number[]): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = bx - ax;
  const dz = bz - az;
  const clip = (p: number, q: number): boolean => {
    if (p === 0) return q >= 0;
    const t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      if (t > t0) t0 = t;
    } else {
      if (t < t0) return false;
      if (t < t1) t1 = t;
    }
    return true;
  };
  return clip(-dx, ax - r[0]) && clip(dx, r[2] - ax) && clip(-dz, az - r[1]) && clip(dz, r[3] - az);
}

/** An update() call waiting for its turn, and what it resolves with. */
interface QueuedUpdate {
  signal: AbortSignal | undefined;
  next: QueuedUpdate | null;
  result: Promise<ObstacleUpdate> | null;
}

/** Where a navmesh's caches, obstacles and dirty tiles live (one per NavMesh baked with obstacles: true). */
export class TileCaches {
  readonly caches: Map<number, Uint8Array> = new Map();
  private readonly boxes: Map<number, Float32Array> = new Map();
  private readonly obstacles = new Map<number, VolumeData>();
  /** dirty tile -> the change (generation) that last dirtied it */
  private readonly pending = new Map<number, number>();
  /** the tiles taken out by NavMesh.removeTile: update() leaves them out (and pending) until loadTile puts them back */
  private readonly out = new Set<number>();
  /** the tiles some obstacle change ever dirtied: their bytes may differ from the bake's (loadTile) */
  private readonly touched = new Set<number>();
  private generation = 0;
  private nextId = 1;
  private chain: Promise<unknown> = Promise.resolve();
  /** the latest update() call not yet at its turn (a call before it may leave its work to it) */
  private last: QueuedUpdate | null = null;
  /** the rebuilds running in workers now (dispose() cancels them) */
  private readonly running = new Set<TaskHandle>();

  constructor(
    private readonly w: Wasm,
    /** the bake's C config values */
    private readonly config: Float64Array,
    private readonly params: NavmeshParams,
    private readonly links: Uint8Array | null,
    private readonly workers: number | false,
  ) {}

  /** The tiles the next update() would rebuild (those taken out wait). */
  get pendingTiles(): number {
    let n = 0;
    for (const k of this.pending.keys()) if (!this.out.has(k)) n++;
    return n;
  }

  /** NavMesh.removeTile(x, z) ran: the tile stays out of the navmesh until loadTile puts it back. */
  tileRemoved(x: number, z: number): void {
    const k = tileKey(x, z);
    if (this.caches.has(k)) this.out.add(k);
  }

  /**
   * NavMesh.loadTile put tile (x, z) in. Its bytes may lack the obstacles there now (a file's tile, the bake's) or
   * hold ones removed since (a tile saved while they stood): when any obstacle change ever touched the tile, the
   * next update() rebuilds it.
   */
  tileLoaded(x: number, z: number): void {
    const k = tileKey(x, z);
    if (!this.caches.has(k)) return;
    this.out.delete(k);
    if (!this.pending.has(k) && this.touched.has(k)) this.pending.set(k, ++this.generation);
  }

  /** The navmesh was disposed: the rebuilds running in workers stop, their update() rejects with reason. */
  cancel(reason: unknown): void {
    for (const t of [...this.running]) t.cancel(reason);
  }

  add(volume: Volume): number {
    const v = volumeData('navbake.addObstacle: volume', volume);
    const id = this.nextId++;
    this.obstacles.set(id, v);
    this.dirty(v);
    return id;
  }

  remove(id: number): void {
    const v = this.find('removeObstacle', id);
    this.obstacles.delete(id);
    this.dirty(v);
  }

  replace(id: number, volume: Volume): void {
    const old = this.find('updateObstacle', id);
    const v = volumeData('navbake.updateObstacle: volume', volume);
    this.obstacles.set(id, v); // keeps its place: obstacles apply in id order
    this.dirty(old);
    this.dirty(v);
  }

  /**
   * Rebuilds the tiles dirtied by the changes made so far into nav, with the obstacles as they are now; changes
   * made later wait for the next call. Calls run one after another; a call may leave its work to a later one
   * waiting behind it (see below).
   */
  update(nav: () => number, options?: UpdateOptions | null): Promise<ObstacleUpdate> {
    const o = optionsObject<UpdateOptions>('navbake.update: options', options, ['workers', 'signal']);
    // Read once, here: the caller may reuse or change its options object as soon as this returns.
    const workers = workerCount('navbake.update: options.workers', o.workers);
    const signal = abortSignal('navbake.update: options.signal', o.signal);
    const opts: UpdateOptions = { workers, signal };
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    // What is dirty now, and the obstacles as they are now: what this call applies, whatever comes later.
    const dirty = [...this.pending];
    const obstacles = [...this.obstacles.values()]; // id order: later ones win where they overlap
    // Calls run one after another. A call whose turn comes while a later call without a signal waits behind it
    // leaves its work to that one, which rebuilds everything this call would (what was dirty then and is still
    // pending, with the obstacles as they were then or later), and resolves with its result: a burst of changes,
    // each followed by an update() not awaited, rebuilds each tile once instead of once per call after it.
    const call: QueuedUpdate = { signal, next: null, result: null };
    if (this.last) this.last.next = call;
    this.last = call;
    let endTurn = (): void => undefined;
    const turn = new Promise<void>((resolve) => (endTurn = resolve));
    const run = this.chain.then(() => {
      const later = call.next;
      if (this.last === call) this.last = null;
      if (later && !later.signal && !signal?.aborted) {
        endTurn();
        return later.result!;
      }
      return this.rebuild(nav, opts, dirty, obstacles).finally(endTurn);
    });
    call.result = run;
    this.chain = turn;
    if (!signal) return run;
    // Aborted while calls before it run: reject now (its turn then finds the signal aborted and does nothing).
    return new Promise<ObstacleUpdate>((resolve, reject) => {
      const stop = onAbort(signal, () => reject(abortReason(signal)));
      run.then(resolve, reject).finally(stop);
    });
  }

  private find(fn: string, id: number): VolumeData {
    const v = this.obstacles.get(intIn(`navbake.${fn}: id`, id, 1, Number.MAX_SAFE_INTEGER));
    if (!v) throw new NavBakeError('NB_ERR_NOT_FOUND', `navbake.${fn}: no obstacle with id ${id}`);
    return v;
  }

  private box(k: number): Float32Array {
    let b = this.boxes.get(k);
    if (!b) {
      const [x, z] = unkey(k);
      b = this.w.dirtyBox(this.params, this.config, x, z);
      this.boxes.set(k, b);
    }
    return b;
  }

  private dirty(v: VolumeData): void {
    const g = ++this.generation;
    for (const k of this.caches.keys()) {
      if (overlapsXZ(v.bounds, this.box(k))) {
        this.pending.set(k, g);
        this.touched.add(k);
      }
    }
  }

  private async rebuild(navPtr: () => number, opts: UpdateOptions, dirty: [number, number][], obstacles: VolumeData[]): Promise<ObstacleUpdate> {
    // The tiles dirty at the call that an earlier call has not rebuilt since, with the obstacles of the call. A tile
    // dirtied again after the call is rebuilt too (so the changes made before the call all apply), and stays
    // pending for the next call, which brings the later obstacles.
    const signal = opts.signal;
    if (signal?.aborted) throw abortReason(signal); // while waiting for the calls before it
    navPtr(); // NB_ERR_DISPOSED when the navmesh was disposed while it waited
    const jobs = dirty.filter(([k]) => this.pending.has(k) && !this.out.has(k)).sort((a, b) => a[0] - b[0]);
    const workers = opts.workers === undefined ? this.workers : opts.workers;
    const inputs = jobs.map(([k]) => {
      const box = this.box(k);
      return { k, cache: this.caches.get(k)!, obstacles: obstacles.filter((o) => overlapsXZ(o.bounds, box)) };
    });
    let blobs: (Uint8Array | null)[];
    if (workers === false || !workersAvailable() || inputs.length === 0) {
      blobs = inputs.map((j) => this.w.rebuildTile(this.config, j.cache, this.links, j.obstacles));
    } else {
      const pool = sharedPool(() => wasmModule());
      const tasks: TaskHandle[] = inputs.map((j) =>
        // the cache is copied (structured clone), not transferred: this thread keeps it
        pool.run({ type: 'rebuild', config: this.config, cache: j.cache, links: this.links, obstacles: j.obstacles }, [], undefined, workers),
      );
      for (const t of tasks) this.running.add(t);
      const stop = onAbort(signal, () => {
        for (const t of tasks) t.cancel(abortReason(signal!));
      });
      try {
        const results = await Promise.all(tasks.map((t) => t.promise));
        if (signal?.aborted) throw abortReason(signal);
        blobs = results.map((r) => (r.empty ? null : r.bytes!));
      } catch (e) {
        for (const t of tasks) t.cancel(e);
        throw signal?.aborted ? abortReason(signal) : e;
      } finally {
        stop();
        for (const t of tasks) this.running.delete(t);
      }
    }
    // Swap every new tile in, or none: on a failure the tiles already swapped get their old blobs back, in the
    // places they had, so that refs to them stay valid. A tile taken out (removeTile) while it was rebuilt stays
    // out, and pending.
    const nav = navPtr();
    const swap = inputs.map((j, i) => ({ k: j.k, bytes: blobs[i] })).filter((j) => !this.out.has(j.k));
    const undo: { x: number; z: number; undo: number }[] = [];
    try {
      swap.forEach(({ k, bytes }) => {
        const [x, z] = unkey(k);
        // flags set on polygons the rebuild left as they were stay
        undo.push({ x, z, undo: this.w.swapTile(nav, bytes ?? [x, z], true) });
      });
    } catch (e) {
      // an undo allocates nothing: it cannot fail, even with the wasm memory exhausted
      for (const u of undo.reverse()) this.w.undoSwap(nav, u.undo, u.x, u.z);
      throw e;
    }
    for (const u of undo) this.w.keepSwap(u.undo);
    // Tiles dirtied again while this update ran stay pending.
    for (const [k, g] of jobs) if (this.pending.get(k) === g && !this.out.has(k)) this.pending.delete(k);
    const [ox, , oz, tw, td] = this.params;
    const rects = swap.map((j) => {
      const [x, z] = unkey(j.k);
      return [ox + x * tw, oz + z * td, ox + (x + 1) * tw, oz + (z + 1) * td];
    });
    return {
      tiles: swap.map((j) => unkey(j.k)),
      touches(points: ArrayLike<number>): boolean {
        const where = 'navbake: ObstacleUpdate.touches: points';
        if (points === null || typeof points !== 'object' || typeof points.length !== 'number' || (!ArrayBuffer.isView(points) && !Array.isArray(points))) {
          throw invalid(`${where} must be xyz points in a typed array or an array of numbers, as findPath gives them (got ${shown(points)})`);
        }
        for (let i = 0; i < points.length; i++) {
          if (typeof points[i] !== 'number' || !Number.isFinite(points[i])) {
            throw invalid(`${where}[${i}] must be a finite number (got ${shown(points[i])})`);
          }
        }
        if (points.length % 3 !== 0) throw invalid(`${where} must hold 3 numbers per point (got ${points.length})`);
        const n = points.length / 3;
        for (const r of rects) {
          const e = 1e-4 * Math.max(tw, td);
          const rr = [r[0] - e, r[1] - e, r[2] + e, r[3] + e];
          if (n === 1 && segmentHitsRect(points[0], points[2], points[0], points[2], rr)) return true;
          for (let i = 0; i + 1 < n; i++) {
            if (segmentHitsRect(points[3 * i], points[3 * i + 2], points[3 * i + 3], points[3 * i + 5], rr)) return true;
          }
        }
        return false;
      },
    };
  }
}
