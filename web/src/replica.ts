/**
 * findPathsAsync: a batch of paths shared out over the worker pool. Each worker answers on its own copy of the
 * navmesh (a replica), made the first time it gets a share of that navmesh's batches and brought up to date at
 * the start of each later one with what changed since (Wasm.trackChanges notes every change: tiles added, replaced
 * or removed, flags set). Tiles go into a copy at the slot and with the salt they have in the original, so the
 * copy's polygon refs are the original's and its paths the same, point for point, as findPaths gives.
 */
import { abortReason, NavBakeError, onAbort, type NavBakeErrorCode } from './errors.js';
import { sharedPool, type Lease } from './pool.js';
import type { PathsRequest, ReplicaSync, WorkerReply } from './protocol.js';
import { wasmModule } from './runtime.js';
import { join, type NavChanges, type PathBatch, type PathDetails, type Wasm } from './wasm.js';

/** What each worker holds: the gen of its copy of each navmesh, and the copies to free (sent at the next turn). */
interface WorkerCopies {
  gens: Map<number, number>;
  drop: number[];
}

/** By pool worker (Lease.worker). Dead workers are pruned at every batch. */
const held = new Map<object, WorkerCopies>();

let nextReplica = 1;

/** A new replica id, for a NavMesh's first findPathsAsync. */
export function newReplicaId(): number {
  return nextReplica++;
}

let dropping = false;

/**
 * A NavMesh with copies was disposed (or collected): each worker holding one is told to free it, busy or not (it
 * does after the work sent to it before; a batch still running on that copy answers first). Told once per turn of
 * the event loop, with every copy disposed meanwhile.
 */
export function replicaDisposed(id: number): void {
  let any = false;
  for (const c of held.values()) if (c.gens.delete(id)) any = c.drop.push(id) > 0;
  if (!any || dropping) return;
  dropping = true;
  queueMicrotask(() => {
    dropping = false;
    const pool = sharedPool(() => wasmModule());
    for (const [worker, c] of held) {
      if (!c.drop.length) continue;
      if (!pool.tell(worker, { id: 0, type: 'drop', replicas: c.drop.splice(0) })) held.delete(worker);
    }
  });
}

/** @internal copies held in live workers, and copies waiting to be freed (tests) */
export function copiesInWorkers(): { copies: number; toFree: number } {
  let copies = 0;
  let toFree = 0;
  for (const c of held.values()) {
    copies += c.gens.size;
    toFree += c.drop.length;
  }
  return { copies, toFree };
}

/** The fewest pairs a worker's share holds: smaller batches go to fewer workers (a message costs tens of us). */
const MIN_SHARE = 64;

/** A batch: the request's fields (pairs: all of them, shared out here), and how to run it. */
export interface PathsJob extends Omit<PathsRequest, 'id' | 'type' | 'sync' | 'drop' | 'nodes'> {
  /** the navmesh now and the search nodes its findPaths would use now (NB_ERR_DISPOSED once disposed) */
  live(): { w: Wasm; nav: number; nodes: number };
  workers: number;
  signal: AbortSignal | undefined;
}

/**
 * What a worker whose copy is at gen `have` (undefined: none) needs: null when its copy is up to date, everything
 * when it has none or one older than what the log lists.
 */
function syncFor(w: Wasm, nav: number, log: NavChanges, have: number | undefined): ReplicaSync | null {
  if (have === log.gen) return null;
  const put: ReplicaSync['put'] = [];
  const take = (x: number, z: number) => {
    const place = w.tilePlace(nav, x, z);
    const bytes = place && w.tileData(nav, x, z);
    if (place && bytes) put.push({ bytes, slot: place[0], salt: place[1] });
  };
  if (have === undefined || have < log.floor) {
    const t = w.tiles(nav);
    for (let i = 0; i < t.length; i += 3) take(t[i], t[i + 1]);
    return { params: w.navmeshParams(nav), flags: new Uint32Array(0), remove: new Int32Array(0), put };
  }
  const remove: number[] = [];
  for (const [key, gen] of log.tiles) {
    if (gen <= have) continue;
    const [x, z] = key.split(',').map(Number);
    remove.push(x, z);
    take(x, z);
  }
  const flags: number[] = [];
  for (const [ref, [gen, f]] of log.flags) if (gen > have) flags.push(ref, f);
  return { params: null, flags: new Uint32Array(flags), remove: new Int32Array(remove), put };
}

/** The shares' results as one batch, in pair order: their arrays end to end, offsets counted on. */
function joinShares(parts: (PathBatch & Partial<PathDetails>)[], details: boolean): PathBatch & Partial<PathDetails> {
  const offsets = new Uint32Array(parts.reduce((n, p) => n + p.status.length, 0) + 1);
  let pair = 0;
  let point = 0;
  for (const p of parts) {
    for (let i = 1; i < p.offsets.length; i++) offsets[pair + i] = point + p.offsets[i];
    pair += p.status.length;
    point += p.points.length / 3;
  }
  const out: PathBatch & Partial<PathDetails> = {
    status: join(parts.map((p) => p.status), Uint8Array),
    exhausted: join(parts.map((p) => p.exhausted), Uint8Array),
    lengths: join(parts.map((p) => p.lengths), Float32Array),
    offsets,
    points: join(parts.map((p) => p.points), Float32Array),
  };
  if (details) {
    out.pointFlags = join(parts.map((p) => p.pointFlags!), Uint8Array);
    out.pointRefs = join(parts.map((p) => p.pointRefs!), Uint32Array);
  }
  return out;
}

/**
 * Shares the pairs out over up to job.workers workers (contiguous runs of pairs, at least MIN_SHARE each). It waits
 * until it holds every worker it uses, then brings their copies up to date and sends the shares in one go: every
 * share answers on the navmesh as it is then, changes made while the workers work are not in the results.
 */
export function findPathsInWorkers(job: PathsJob): Promise<PathBatch & Partial<PathDetails>> {
  const n = job.pairs.length / 6;
  const k = Math.max(1, Math.min(job.workers, Math.floor(n / MIN_SHARE)));
  const pool = sharedPool(() => wasmModule());
  // read at the call: the caller may reuse its array while the batch waits for workers
  const shares = Array.from({ length: k }, (_, i) => job.pairs.slice(Math.floor((n * i) / k) * 6, Math.floor((n * (i + 1)) / k) * 6));
  return new Promise((resolve, reject) => {
    let over = false;
    const waiting: ({ cancel(reason: unknown): void } | null)[] = [];
    const leases: (Lease | null)[] = new Array(k).fill(null);
    /** whether leases[i] was sent its share (it holds the worker until its reply) */
    const posted: boolean[] = new Array(k).fill(false);
    const results: (PathBatch & Partial<PathDetails>)[] = new Array(k);
    let granted = 0;
    let done = 0;
    let stopAbort = (): void => undefined;

    const finish = (error: unknown, value?: PathBatch & Partial<PathDetails>) => {
      if (over) return;
      over = true;
      stopAbort();
      for (const w of waiting) w?.cancel(new NavBakeError('NB_ERR_CANCELLED', 'navbake.findPathsAsync: the batch ended'));
      // A worker still on its share (the batch aborted, or another share failed) is stopped, as an aborted bake's
      // is, its copies with it: left to finish, it would hold up the next calls while the pool counted it idle. A
      // worker held but sent nothing yet goes back to the pool.
      for (let i = 0; i < k; i++) {
        const l = leases[i];
        if (l && posted[i]) {
          held.delete(l.worker);
          l.kill();
        } else l?.release();
      }
      if (value) resolve(value);
      else reject(error);
    };

    const start = () => {
      let live: ReturnType<PathsJob['live']>;
      try {
        live = job.live(); // NB_ERR_DISPOSED when disposed while it waited for workers
      } catch (e) {
        return finish(e);
      }
      for (const worker of held.keys()) if (!pool.alive(worker)) held.delete(worker);
      const log = live.w.trackChanges(live.nav);
      const { live: _live, workers: _workers, signal: _signal, ...fields } = job;
      for (let i = 0; i < k; i++) {
        const lease = leases[i]!;
        let copies = held.get(lease.worker);
        if (!copies) held.set(lease.worker, (copies = { gens: new Map(), drop: [] }));
        let sync: ReplicaSync | null;
        try {
          sync = syncFor(live.w, live.nav, log, copies.gens.get(job.replica));
        } catch (e) {
          return finish(e); // out of memory copying tiles
        }
        copies.gens.set(job.replica, log.gen);
        const pairs = shares[i];
        const req: Omit<PathsRequest, 'id'> = { ...fields, type: 'paths', sync, pairs, nodes: live.nodes };
        lease.post(req, [pairs.buffer, ...(sync?.put.map((t) => t.bytes.buffer as ArrayBuffer) ?? [])]);
        posted[i] = true;
      }
    };

    const onReply = (i: number, r: WorkerReply) => {
      if (over) return;
      if (r.type === 'result' && r.paths) {
        results[i] = r.paths;
        leases[i]!.release();
        leases[i] = null;
        if (++done === k) finish(null, joinShares(results, job.details));
      } else if (r.type === 'error') {
        held.get(leases[i]!.worker)?.gens.delete(job.replica); // its copy is gone (or was never made)
        leases[i]!.release(); // it answered: it is free
        leases[i] = null;
        finish(new NavBakeError((r.code as NavBakeErrorCode) ?? 'NB_ERR_WORKER', r.message));
      }
    };

    for (let i = 0; i < k; i++) {
      const req = pool.lease({ reply: (r) => onReply(i, r), died: (e) => finish(e) }, job.workers);
      waiting.push(req);
      req.promise.then(
        (lease) => {
          waiting[i] = null;
          if (over) return lease.release();
          leases[i] = lease;
          if (++granted === k) start();
        },
        (e) => {
          waiting[i] = null;
          finish(e); // no worker could start (or the batch ended while this one waited)
        },
      );
    }
    stopAbort = onAbort(job.signal, () => finish(abortReason(job.signal!)));
  });
}
