/**
 * Tiled bakes. Each worker opens a session: it receives the geometry once (one copy in shared memory for all of
 * them where that can be posted, else its own copy, transferred), copies it into its wasm heap once and buckets
 * the triangles by tile (nb_grid_index). The main thread then hands out tile jobs, at most two per worker at a
 * time, nearest-first to `focus`, to whichever worker is free; each finished tile comes back transferred and goes
 * into the navmesh at once (onTile). A worker that dies is replaced (a new session) and its unfinished tiles go
 * back in the queue; abort terminates the workers. With `workers: false` the same session runs on the calling
 * thread. Whatever the order, the navmesh saves to the same bytes.
 */
import { isNode } from './env.js';
import { abortReason, NavBakeError, onAbort, type NavBakeErrorCode } from './errors.js';
import { navmeshHandle, type NavMesh } from './navmesh.js';
import { tileKey, type TileCaches } from './obstacles.js';
import { sharedPool, type Lease } from './pool.js';
import type { TileReply, WorkerReply } from './protocol.js';
import { wasmModule } from './runtime.js';
import type { StageTimes } from './inspect.js';
import { keepSharedSpares, plainCopy, sharedCopyOf } from './spare.js';
import type { MeshInput, NavmeshParams, Wasm } from './wasm.js';

/** onTile's event: a tile was added to the navmesh. */
export interface TileEvent {
  /** the tile's column in the grid */
  x: number;
  /** the tile's row in the grid (along z) */
  z: number;
  /** polygons of the tile, off-mesh link polygons included */
  polygons: number;
  /** tiles baked so far (with or without polygons) */
  done: number;
  /** tiles to bake in all: the tiles of the grid that triangles reach */
  total: number;
  /** the NavMesh the bake resolves with, already queryable over the tiles added so far */
  navMesh: NavMesh;
  /**
   * Bytes of wasm memory of the instance that baked the tile (its worker's, or the calling thread's with
   * `workers: false`) just after it. Wasm memory never shrinks, so this is that instance's peak so far.
   */
  memoryBytes: number;
  /** The tile bake's own timers, per stage and in all (`total`) [ms]: where the bake spent its time. */
  times: StageTimes;
}

export interface TiledJob {
  mesh: MeshInput;
  config: Float64Array;
  params: NavmeshParams;
  nav: NavMesh;
  focus: [number, number, number] | null;
  caches: TileCaches | null;
  signal?: AbortSignal;
  onTile?: (e: TileEvent) => void;
  onProgress?: (done: number, total: number) => void;
  testExitAtStage?: number;
}

/**
 * The bake order: by xz distance from the tile's centre to focus, ties by (z, x); without focus by (z, x).
 * tiles: (x, z) pairs.
 */
export function orderTiles(tiles: Int32Array, params: NavmeshParams, focus: readonly number[] | null): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i + 1 < tiles.length; i += 2) out.push([tiles[i], tiles[i + 1]]);
  if (!focus) return out.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  const [ox, , oz, tw, td] = params;
  const d = (t: [number, number]) => Math.hypot(ox + (t[0] + 0.5) * tw - focus[0], oz + (t[1] + 0.5) * td - focus[2]);
  const dist = new Map(out.map((t) => [tileKey(t[0], t[1]), d(t)]));
  return out.sort((a, b) => dist.get(tileKey(a[0], a[1]))! - dist.get(tileKey(b[0], b[1]))! || a[1] - b[1] || a[0] - b[0]);
}

/** A finished tile: its cache kept, its blob added, onTile and progress. */
function finished(
  job: TiledJob,
  x: number,
  z: number,
  bytes: Uint8Array | null,
  cache: Uint8Array | null,
  done: number,
  total: number,
  memoryBytes: number,
  times: StageTimes,
): void {
  if (cache && job.caches) job.caches.caches.set(tileKey(x, z), cache);
  if (bytes) {
    const h = navmeshHandle(job.nav);
    h.w.addTile(h.nav, bytes);
    const polygons = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(32, true);
    job.onTile?.({ x, z, polygons, done, total, navMesh: job.nav, memoryBytes, times });
    if (job.signal?.aborted) return; // onTile aborted the bake: no progress after it
  }
  job.onProgress?.(done, total);
}

/** The tiles stage starts at 0 of the tile count; a bake without tiles (no geometry) still ends, at 1 of 1. */
function startProgress(job: TiledJob, total: number): void {
  job.onProgress?.(0, Math.max(total, 1));
  if (total === 0) job.onProgress?.(1, 1);
}

/** workers: false. Blocks the calling thread; abort is checked at every progress report of C. */
export function bakeTilesHere(w: Wasm, job: TiledJob): void {
  const s = w.openSession(job.mesh, job.config);
  try {
    const order = orderTiles(w.sessionTiles(s), job.params, job.focus);
    startProgress(job, order.length);
    const signal = job.signal;
    const cancel = signal ? () => signal.aborted : undefined;
    let done = 0;
    for (const [x, z] of order) {
      if (signal?.aborted) throw abortReason(signal);
      const r = w.bakeSessionTile(s, x, z, job.caches !== null, cancel);
      finished(job, x, z, r.bytes, r.cache, ++done, order.length, w.memoryBytes(), r.times);
    }
  } finally {
    w.closeSession(s);
  }
}

/** A session as the main thread sees it. */
interface Session {
  lease: Lease | null;
  waiting: { cancel(reason: unknown): void } | null;
  open: boolean;
  inFlight: [number, number][];
}

/** A session's copy of the geometry. */
interface SessionGeometry {
  positions: Float32Array;
  indices: Uint32Array | null;
  areas: Uint8Array | null;
  links: Uint8Array | null;
}

/** Whether this thread can post shared memory to workers: Node always, a page only when cross-origin isolated. */
export function canShare(): boolean {
  const g = globalThis as { SharedArrayBuffer?: unknown; crossOriginIsolated?: boolean };
  return typeof g.SharedArrayBuffer === 'function' && (isNode || g.crossOriginIsolated === true);
}

/** How many tile jobs a worker has at once: the next is there when one finishes, no round trip idle. */
const PER_WORKER = 2;

/** Spread over `workers` sessions in the shared pool. Resolves when every tile is in the navmesh. */
export function bakeTilesInWorkers(job: TiledJob, workers: number, gridTiles: number): Promise<void> {
  const pool = sharedPool(() => wasmModule());
  const { mesh, signal } = job;
  return new Promise<void>((resolve, reject) => {
    const sessions = new Set<Session>();
    let queue: [number, number][] | null = null; // known once the first session says which tiles have geometry
    let rank = new Map<number, number>();
    let total = 0;
    let done = 0;
    // Finished tiles go into the navmesh in queue order (a tile that comes back early waits for those before it):
    // the navmesh then fills its slots the same way whatever the worker count, so its polygon refs, polygons()
    // order and randomPoint sequences are those of a bake on one thread, not only its saved bytes.
    const early = new Map<number, TileReply>();
    let next = 0;
    let over = false;
    let stopAbort = (): void => undefined;
    let shared: SessionGeometry | null = null; // the geometry every session reads, in shared memory (geometryFor)
    let hookSent = false;
    let failedOpens = 0;
    const retries = new Map<number, number>();

    const end = (s: Session, kill: boolean) => {
      sessions.delete(s);
      s.waiting?.cancel(new NavBakeError('NB_ERR_CANCELLED', 'navbake.bake: the tiled bake ended'));
      s.waiting = null;
      const lease = s.lease;
      s.lease = null;
      if (!lease) return;
      if (kill) lease.kill();
      else {
        lease.post({ type: 'close' }); // frees the session's wasm memory; the worker then serves the pool again
        lease.release();
      }
    };

    const finish = (error?: unknown, kill = false) => {
      if (over) return;
      over = true;
      stopAbort();
      // The shared geometry is kept for the next bake's copy once no worker reads it: a worker reads it only while
      // it opens its session, and a bake that ends with an open under way (a replacement's) or fails keeps none.
      if (error === undefined && shared && ![...sessions].some((s) => s.lease && !s.open)) {
        const { positions, indices, areas, links } = shared;
        keepSharedSpares([positions, indices, areas, links].filter((a) => a !== null).map((a) => a!.buffer as SharedArrayBuffer));
      }
      for (const s of [...sessions]) end(s, kill);
      if (error === undefined) resolve();
      else reject(error);
    };

    const pump = (s: Session) => {
      if (!queue || !s.lease) return;
      while (s.inFlight.length < PER_WORKER && queue.length) {
        const t = queue.shift()!;
        s.inFlight.push(t);
        s.lease.post({ type: 'tile', x: t[0], z: t[1] });
      }
      if (s.inFlight.length === 0) end(s, false); // nothing left for this worker: give it back to the pool
    };

    const onReply = (s: Session, r: WorkerReply) => {
      if (over || !sessions.has(s)) return;
      try {
        if (r.type === 'opened') {
          s.open = true;
          if (!queue) {
            queue = orderTiles(r.tiles, job.params, job.focus);
            rank = new Map(queue.map((t, i) => [tileKey(t[0], t[1]), i]));
            total = queue.length;
            startProgress(job, total);
            if (total === 0) return finish();
          }
          pump(s);
        } else if (r.type === 'tile') {
          const i = s.inFlight.findIndex((t) => t[0] === r.x && t[1] === r.z);
          if (i >= 0) s.inFlight.splice(i, 1);
          early.set(rank.get(tileKey(r.x, r.z))!, r);
          pump(s); // the worker's next tile first: adding a run of waiting tiles takes a while
          for (let t = early.get(next); t && !over; t = early.get(next)) {
            early.delete(next++);
            finished(job, t.x, t.z, t.bytes, t.cache, ++done, total, t.memory, t.times);
          }
          if (over) return; // onTile aborted the bake
          if (done === total) return finish();
        } else if (r.type === 'error') {
          finish(new NavBakeError((r.code as NavBakeErrorCode) ?? 'NB_ERR_WORKER', r.message));
        }
      } catch (e) {
        finish(e); // onTile threw, or the tile could not be added
      }
    };

    const onDied = (s: Session, e: NavBakeError, fatal: boolean) => {
      if (over || !sessions.has(s)) return;
      if (fatal) return finish(e, true); // terminateWorkers(): running bakes reject
      sessions.delete(s);
      s.lease = null;
      const lost = s.inFlight.splice(0);
      for (const [x, z] of lost) {
        const n = (retries.get(tileKey(x, z)) ?? 0) + 1;
        retries.set(tileKey(x, z), n);
        if (n > 2) return finish(new NavBakeError('NB_ERR_WORKER', `${e.message} (tile ${x}, ${z}: 3 workers died on it)`));
      }
      if (!s.open && ++failedOpens > workers + 2) return finish(e);
      if (queue) {
        if (lost.length === 0 && queue.length === 0) return; // its work is done (the others finish theirs)
        queue.push(...lost);
        queue.sort((a, b) => rank.get(tileKey(a[0], a[1]))! - rank.get(tileKey(b[0], b[1]))!);
      }
      start(); // a replacement session on a fresh worker
    };

    // Where shared memory can be posted (Node; a cross-origin isolated page), one copy of the geometry serves
    // every session, a replacement's included; otherwise each session gets its own copy, transferred. Either way
    // this thread keeps the geometry (bake()'s copy taken at the call, or the arrays given with transfer: true) to
    // reopen on a replacement worker.
    const geometryFor = (): SessionGeometry & { transfer: ArrayBuffer[] } => {
      if (canShare()) {
        // bake()'s own copies in shared memory as they are (MeshInput.shared), anything else copied into it
        const own = <T extends Float32Array | Uint32Array | Uint8Array>(a: T): T =>
          mesh.shared && a.buffer instanceof SharedArrayBuffer ? a : sharedCopyOf(a);
        shared ??= {
          positions: own(mesh.positions),
          indices: mesh.indices ? own(mesh.indices) : null,
          areas: mesh.areas ? own(mesh.areas) : null,
          links: mesh.links ? sharedCopyOf(mesh.links) : null,
        };
        return { ...shared, transfer: [] };
      }
      const own: SessionGeometry = {
        positions: plainCopy(mesh.positions),
        indices: mesh.indices ? plainCopy(mesh.indices) : null,
        areas: mesh.areas ? plainCopy(mesh.areas) : null,
        links: mesh.links ? plainCopy(mesh.links) : null,
      };
      const transfer = [own.positions, own.indices, own.areas, own.links].filter((a) => a !== null).map((a) => a!.buffer as ArrayBuffer);
      return { ...own, transfer };
    };

    const start = () => {
      const s: Session = { lease: null, waiting: null, open: false, inFlight: [] };
      sessions.add(s);
      const req = pool.lease({ reply: (r) => onReply(s, r), died: (e, fatal) => onDied(s, e, fatal) }, workers);
      s.waiting = req;
      req.promise.then(
        (lease) => {
          s.waiting = null;
          if (over || !sessions.has(s)) {
            lease.release();
            return;
          }
          s.lease = lease;
          let geometry: ReturnType<typeof geometryFor>;
          try {
            geometry = geometryFor();
          } catch (e) {
            // a copy of a mesh too big for this thread's memory: fail the bake (never leave it waiting)
            const bytes = mesh.positions.byteLength + (mesh.indices?.byteLength ?? 0);
            return finish(
              new NavBakeError(
                'NB_ERR_OUT_OF_MEMORY',
                `navbake.bake: out of memory copying the geometry (${bytes} bytes) for a worker: ${(e as Error)?.message ?? e}`,
              ),
            );
          }
          const { positions, indices, areas, links, transfer } = geometry;
          const hook = hookSent ? undefined : job.testExitAtStage;
          hookSent = true;
          lease.post(
            {
              type: 'open',
              positions,
              indices,
              areas,
              volumes: mesh.volumes ?? null,
              links,
              config: job.config,
              caches: job.caches !== null,
              testExitAtStage: hook,
            },
            transfer,
          );
        },
        (e) => {
          s.waiting = null;
          if (sessions.has(s)) finish(e, true); // no worker could start (a session ended while waiting is no failure)
        },
      );
    };

    stopAbort = onAbort(signal, () => finish(abortReason(signal!), true));
    const n = Math.max(1, Math.min(workers, gridTiles));
    for (let i = 0; i < n; i++) start();
  });
}
