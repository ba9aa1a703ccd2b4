/**
 * The bake worker. `handleMessage` is the whole job and a plain function of (message, wasm, post), so tests run
 * it without a worker; the entry at the bottom wires it to `self` (browser module worker) or `parentPort`
 * (Node worker_threads). Each worker instantiates the wasm once, from the compiled module the pool sends first.
 */
import { isNode, nodeImport, nodeProcess } from './env.js';
import { NavBakeError } from './errors.js';
import { inputBuffers } from './spare.js';
import { type BakeRequest, type InspectRequest, type VoxelizeRequest, type WorkerReply, type WorkerRequest } from './protocol.js';
import type { DropRequest, PathsRequest, RebuildRequest, ReplicaSync, SessionCloseRequest, SessionOpenRequest, TileRequest } from './protocol.js';
import { instantiate, type CProgress, type GridSession, type QueryObjects, type Wasm } from './wasm.js';

export type Post = (reply: WorkerReply, transfer?: ArrayBuffer[]) => void;

/** Thrown by the test hook (BakeRequest.testExitAtStage): the entry then ends the worker abruptly. */
export class WorkerExitRequest extends Error {}

/** Progress replies are rate-limited: every stage change, every completed stage, else at most every 16 ms. */
function progressPoster(id: number, post: Post): CProgress {
  let lastStage = -1;
  let lastTime = 0;
  return (stage, done, total) => {
    const now = typeof performance !== 'undefined' ? performance.now() : Date.now();
    if (stage !== lastStage || done >= total || now - lastTime >= 16) {
      lastStage = stage;
      lastTime = now;
      post({ id, type: 'progress', stage, done, total });
    }
    return false;
  };
}

/** Runs one request on this worker's wasm and posts what comes of it. Never throws (except the test hook). */
export function handleMessage(msg: WorkerRequest, wasm: Wasm, post: Post): void {
  const id = msg?.id ?? -1;
  try {
    if (msg?.type === 'inspect') return inspectRequest(msg, wasm, post);
    if (msg?.type === 'voxelize') return voxelizeRequest(msg, wasm, post);
    if (msg?.type === 'open' || msg?.type === 'tile' || msg?.type === 'close') return sessionRequest(msg, wasm, post);
    if (msg?.type === 'rebuild') return rebuildRequest(msg, wasm, post);
    if (msg?.type === 'paths') return pathsRequest(msg, wasm, post);
    if (msg?.type === 'drop') return dropRequest(msg, wasm);
    if (!msg || msg.type !== 'bake') {
      throw new NavBakeError('NB_ERR_INVALID_ARG', `bake worker: unknown message type '${(msg as { type?: string })?.type}'`);
    }
    bakeRequest(msg, wasm, post);
  } catch (e) {
    if (e instanceof WorkerExitRequest) throw e;
    const err = e as { code?: string; message?: string };
    post({
      id,
      type: 'error',
      code: e instanceof NavBakeError ? e.code : 'NB_ERR_WORKER',
      message: err?.message ?? String(e),
    });
  }
}

function bakeRequest(msg: BakeRequest, wasm: Wasm, post: Post): void {
  const mesh = { positions: msg.positions, indices: msg.indices, areas: msg.areas, volumes: msg.volumes, links: msg.links };
  const exitAt = msg.testExitAtStage;
  const hook = (stage: number): boolean => {
    if (exitAt !== undefined && stage >= exitAt) throw new WorkerExitRequest(`test hook: exit at stage ${stage}`);
    return false;
  };
  const report = progressPoster(msg.id, post);
  const nav = wasm.bakeNavmesh(mesh, msg.config, (stage, done, total) => hook(stage) || report(stage, done, total));
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = wasm.save(nav);
  } finally {
    wasm.destroyNavmesh(nav);
  }
  const spare = inputBuffers(msg.positions, msg.indices, msg.areas); // copied into the heap: no longer needed here
  post({ id: msg.id, type: 'result', bytes, spare }, [bytes.buffer, ...spare]);
}

/** inspect(): the whole Inspection goes back with its buffers transferred. */
function inspectRequest(msg: InspectRequest, wasm: Wasm, post: Post): void {
  const mesh = { positions: msg.positions, indices: msg.indices, areas: msg.areas, volumes: msg.volumes, links: msg.links };
  const inspection = wasm.inspect(mesh, msg.config, msg.tile, progressPoster(msg.id, post));
  const s = inspection.spans;
  const c = inspection.contours;
  const buffers = [s.x, s.y, s.z, s.area, s.region, c.region, c.area, c.offsets, c.vertices, c.rawOffsets, c.rawVertices];
  const spare = inputBuffers(msg.positions, msg.indices, msg.areas);
  post({ id: msg.id, type: 'result', inspection, spare }, [...buffers.map((a) => a.buffer as ArrayBuffer), ...spare]);
}

/** voxelize(): the occupancy words go back transferred. */
function voxelizeRequest(msg: VoxelizeRequest, wasm: Wasm, post: Post): void {
  const mesh = { positions: msg.positions, indices: msg.indices, areas: msg.areas };
  const out = msg.out ?? null;
  const { origin, cellSize, cellHeight, dims, copy, filled } = wasm.voxelize(mesh, msg.config, msg.headroom, msg.fill, true, progressPoster(msg.id, post), out);
  const words = copy!;
  const spare = inputBuffers(msg.positions, msg.indices, msg.areas);
  if (out && words.buffer !== out) spare.push(out); // too small for the words: back unused
  post({ id: msg.id, type: 'result', voxels: { origin, cellSize, cellHeight, dims, words, filled }, spare }, [words.buffer as ArrayBuffer, ...spare]);
}

// ---- tiled-bake sessions: open, tile, tile, ..., close ----

interface OpenSession {
  s: GridSession;
  caches: boolean;
  exitAt?: number;
}

/** The sessions open on each wasm instance, by session id (the pool lease's id). */
const sessions = new WeakMap<Wasm, Map<number, OpenSession>>();

function sessionRequest(msg: SessionOpenRequest | TileRequest | SessionCloseRequest, wasm: Wasm, post: Post): void {
  let mine = sessions.get(wasm);
  if (!mine) sessions.set(wasm, (mine = new Map()));
  if (msg.type === 'open') {
    const old = mine.get(msg.id);
    if (old) wasm.closeSession(old.s);
    mine.delete(msg.id);
    const mesh = { positions: msg.positions, indices: msg.indices, areas: msg.areas, volumes: msg.volumes, links: msg.links };
    const s = wasm.openSession(mesh, msg.config);
    mine.set(msg.id, { s, caches: msg.caches, exitAt: msg.testExitAtStage });
    const tiles = wasm.sessionTiles(s);
    post({ id: msg.id, type: 'opened', tiles }, [tiles.buffer]);
    return;
  }
  const open = mine.get(msg.id);
  if (msg.type === 'close') {
    if (open) wasm.closeSession(open.s);
    mine.delete(msg.id);
    return;
  }
  if (!open) throw new NavBakeError('NB_ERR_INVALID_ARG', `bake worker: no session ${msg.id} is open`);
  const exitAt = open.exitAt;
  const hook =
    exitAt === undefined
      ? undefined
      : (stage: number): boolean => {
          if (stage >= exitAt) throw new WorkerExitRequest(`test hook: exit at stage ${stage}`);
          return false;
        };
  const { bytes, cache, times } = wasm.bakeSessionTile(open.s, msg.x, msg.z, open.caches, hook);
  const transfer = [bytes, cache].filter((b) => b !== null).map((b) => b.buffer);
  post({ id: msg.id, type: 'tile', x: msg.x, z: msg.z, bytes, cache, memory: wasm.memoryBytes(), times }, transfer);
}

function rebuildRequest(msg: RebuildRequest, wasm: Wasm, post: Post): void {
  const bytes = wasm.rebuildTile(msg.config, msg.cache, msg.links, msg.obstacles);
  if (bytes) post({ id: msg.id, type: 'result', bytes }, [bytes.buffer]);
  else post({ id: msg.id, type: 'result', empty: true });
}

// ---- findPathsAsync: copies of the main thread's navmeshes ----

/** A navmesh copy and the wasm objects its queries use (as a NavMesh's). */
interface Replica extends QueryObjects {
  nav: number;
}

/** The copies on each wasm instance, by id (one per NavMesh of the main thread). */
const replicas = new WeakMap<Wasm, Map<number, Replica>>();

function freeReplica(wasm: Wasm, r: Replica): void {
  wasm.queryObjectsFree(r);
  wasm.destroyNavmesh(r.nav);
}

/**
 * Brings a copy up to date (ReplicaSync says in which order); a copy made anew when sync.params is set. On failure
 * the copy is freed: half brought up to date it is no copy (the main thread forgets this worker's copy on an error
 * reply and makes it anew next time).
 */
function applySync(wasm: Wasm, old: Replica | undefined, sync: ReplicaSync): Replica {
  let r = old;
  if (sync.params) {
    if (r) freeReplica(wasm, r);
    r = { nav: wasm.navmeshCreate(sync.params), query: 0, queryNodes: 0, limited: 0, limitedNodes: 0, filter: 0, custom: 0, customValues: null };
  }
  if (!r) throw new NavBakeError('NB_ERR_INVALID_ARG', 'bake worker: a change to a navmesh copy that is not here');
  try {
    for (let i = 0; i < sync.flags.length; i += 2) {
      try {
        wasm.setPolygonFlags(r.nav, sync.flags[i], sync.flags[i + 1]);
      } catch (e) {
        // the ref's tile here is not the one it names: that tile comes below, with its flags
        if (!(e instanceof NavBakeError && e.code === 'NB_ERR_NOT_FOUND')) throw e;
      }
    }
    for (let i = 0; i < sync.remove.length; i += 2) wasm.removeTile(r.nav, sync.remove[i], sync.remove[i + 1]);
    for (const t of sync.put) wasm.putTileBack(r.nav, t.bytes, [t.slot, t.salt]);
  } catch (e) {
    freeReplica(wasm, r);
    throw e;
  }
  return r;
}

function dropRequest(msg: DropRequest, wasm: Wasm): void {
  const mine = replicas.get(wasm);
  for (const id of msg.replicas) {
    const r = mine?.get(id);
    mine?.delete(id);
    if (r) freeReplica(wasm, r);
  }
}

function pathsRequest(msg: PathsRequest, wasm: Wasm, post: Post): void {
  let mine = replicas.get(wasm);
  if (!mine) replicas.set(wasm, (mine = new Map()));
  let r = mine.get(msg.replica);
  if (msg.sync) {
    mine.delete(msg.replica);
    r = applySync(wasm, r, msg.sync);
    mine.set(msg.replica, r);
  }
  if (!r) throw new NavBakeError('NB_ERR_INVALID_ARG', `bake worker: no copy ${msg.replica} of a navmesh is here`);
  const [q, filter] = wasm.querySetup(r.nav, r, msg.nodes, msg.maxNodes, msg.filter);
  const paths = wasm.findPaths(q, filter, msg.pairs, msg.half, msg.crossings, msg.details);
  const arrays = [paths.status, paths.exhausted, paths.lengths, paths.offsets, paths.points, paths.pointFlags, paths.pointRefs];
  const transfer = [...new Set(arrays.filter((a) => a !== undefined).map((a) => a!.buffer as ArrayBuffer))];
  post({ id: msg.id, type: 'result', paths }, transfer);
}

// ---- entry ---------------------------------------------------------------------------------------------------

interface Endpoint {
  post: Post;
  listen(fn: (msg: WorkerRequest) => void): void;
  exit(e: WorkerExitRequest): void;
}

function serve(ep: Endpoint): void {
  let wasm: Promise<Wasm> | null = null;
  let chain: Promise<void> = Promise.resolve();
  ep.listen((msg) => {
    // One request at a time, in arrival order (init first).
    chain = chain.then(async () => {
      if (msg?.type === 'init') {
        wasm = instantiate(msg.wasm);
        // Said at once (id 0, the init's), so that the pool drops this worker even while no task waits; each
        // request that still reaches it gets the same error.
        wasm.catch((e) => ep.post({ id: 0, type: 'error', code: 'NB_ERR_WASM_LOAD', message: String((e as Error)?.message ?? e) }));
        return;
      }
      let w: Wasm;
      try {
        if (!wasm) throw new NavBakeError('NB_ERR_WASM_LOAD', 'bake worker: no wasm module was sent');
        w = await wasm;
      } catch (e) {
        ep.post({ id: msg?.id ?? -1, type: 'error', code: 'NB_ERR_WASM_LOAD', message: String((e as Error)?.message ?? e) });
        return;
      }
      // Every reply but progress says how much memory the instance holds now (the pool retires big idle workers).
      const post: Post = (reply, transfer) => ep.post(reply.type === 'progress' ? reply : { ...reply, memory: w.memoryBytes() }, transfer);
      try {
        handleMessage(msg, w, post);
      } catch (e) {
        if (e instanceof WorkerExitRequest) ep.exit(e);
        else throw e;
      }
    });
  });
}

interface WorkerScope {
  postMessage(msg: unknown, transfer?: ArrayBuffer[]): void;
  addEventListener(type: 'message', fn: (ev: MessageEvent) => void): void;
}

declare const WorkerGlobalScope: { new (): unknown } | undefined;

async function start(): Promise<void> {
  if (isNode) {
    type Port = { postMessage(m: unknown, t?: ArrayBuffer[]): void; on(ev: 'message', fn: (m: WorkerRequest) => void): void };
    const wt = await nodeImport<{ parentPort: Port | null; isMainThread: boolean }>('node:worker_threads');
    const port = wt.parentPort;
    if (wt.isMainThread || !port) return; // imported by a test, not running as a worker
    serve({
      post: (reply, transfer) => port.postMessage(reply, transfer),
      listen: (fn) => port.on('message', fn),
      exit: () => nodeProcess?.exit(70),
    });
    return;
  }
  if (typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof (WorkerGlobalScope as unknown as typeof Object)) {
    const scope = globalThis as unknown as WorkerScope;
    serve({
      post: (reply, transfer) => scope.postMessage(reply, transfer ?? []),
      listen: (fn) => scope.addEventListener('message', (ev) => fn(ev.data as WorkerRequest)),
      // An uncaught error is what the page sees of a crashed worker: an 'error' event on the Worker.
      exit: (e) => {
        setTimeout(() => {
          throw e;
        });
      },
    });
  }
}

void start();
