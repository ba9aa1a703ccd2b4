/**
 * The worker pool. Browser: module Workers; Node: worker_threads, both from the compiled bake.worker.js next to
 * this file (or init's workerUrl). Each worker instantiates the wasm once (from the compiled module, sent on
 * start) and runs one task at a time; tasks wait in a queue for a free worker. Cancelling a running task
 * terminates its worker (a bake cannot be interrupted from outside otherwise); a worker that dies rejects its task
 * with NB_ERR_WORKER, one whose wasm cannot be instantiated with NB_ERR_WASM_LOAD. Either way the worker is dropped
 * and a fresh one starts when work is waiting. Idle workers do not keep a Node process alive. Wasm memory never
 * shrinks, so a worker whose memory grew past retireBytes (a large bake) is stopped once it has been idle for
 * retireAfterMs, which gives that memory back; the next task starts a fresh one.
 */
import { isDetached } from './args.js';
import { hardwareThreads, isNode, nodeImport, nodeProcess } from './env.js';
import { abortReason, NavBakeError, onAbort, type NavBakeErrorCode } from './errors.js';
import type { BakeRequest, DropRequest, InspectRequest, ProgressReply, RebuildRequest, ResultReply, WorkerReply, WorkerRequest } from './protocol.js';
import type { WasmModule } from './wasm.js';
import { keepSpares } from './spare.js';

/** A worker as the pool sees it, browser or Node. */
interface Port {
  post(msg: unknown, transfer: ArrayBuffer[]): void;
  terminate(): void;
  /** Node: whether the worker keeps the process alive */
  hold(on: boolean): void;
}

interface PortEvents {
  message(reply: WorkerReply): void;
  died(why: string): void;
}

interface Task {
  id: number;
  req: BakeRequest | InspectRequest | RebuildRequest;
  transfer: ArrayBuffer[];
  onProgress?: (p: ProgressReply) => void;
  resolve(r: ResultReply): void;
  reject(e: unknown): void;
  worker: PoolWorker | null;
  settled: boolean;
  /** a lease (a worker held for a session of several messages) instead of one request */
  lease?: LeaseEvents;
  /** the caller's worker count: while it waits, workers are started up to this many in the pool */
  limit: number;
}

/** A request a lease's holder sends (the lease fills in the id). */
export type LeaseRequest = WorkerRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** What a lease's holder hears from its worker. */
export interface LeaseEvents {
  /** every reply of the worker, progress, results and errors alike (their id is the lease's id) */
  reply(reply: WorkerReply): void;
  /**
   * the worker died (crashed, was killed by the system, the pool was terminated): NB_ERR_WORKER. fatal: the pool
   * was terminated (terminateWorkers): do not start a replacement.
   */
  died(error: NavBakeError, fatal: boolean): void;
}

/**
 * A worker held for a session: the holder sends it several requests (each gets the lease's id) and hears every
 * reply, until it releases the worker (back to the pool, for the next task) or kills it (abort).
 */
export interface Lease {
  readonly id: number;
  /** the worker held, as a key: the same object for every lease of that worker ({@link BakePool.alive}) */
  readonly worker: object;
  post(msg: LeaseRequest, transfer?: ArrayBuffer[]): void;
  release(): void;
  kill(): void;
}

interface PoolWorker {
  port: Port | null; // null while starting
  task: Task | null;
  dead: boolean;
  /** its wasm memory in bytes, as its last reply said */
  memory: number;
  /** set while it is idle with more than retireBytes of memory: stops it */
  retire: ReturnType<typeof setTimeout> | null;
}

export interface TaskHandle {
  promise: Promise<ResultReply>;
  /** Rejects the task with reason; a running task's worker is terminated. No effect once settled. */
  cancel(reason: unknown): void;
}

/** The task's reply; aborting the signal meanwhile cancels the task, which then rejects with the abort reason. */
export async function settle(task: TaskHandle, signal: AbortSignal | undefined): Promise<ResultReply> {
  const stop = onAbort(signal, () => task.cancel(abortReason(signal!)));
  try {
    const r = await task.promise;
    if (signal?.aborted) throw abortReason(signal);
    return r;
  } finally {
    stop();
  }
}

type NodeWorker = {
  postMessage(m: unknown, t?: readonly unknown[]): void;
  terminate(): Promise<number>;
  ref(): void;
  unref(): void;
  on(ev: 'message', fn: (m: WorkerReply) => void): void;
  on(ev: 'error', fn: (e: Error) => void): void;
  on(ev: 'exit', fn: (code: number) => void): void;
};

const WORKER_FILE = './bake.worker.js';

/** init({ workerUrl }): where workers load their script from (null: bake.worker.js next to this module). */
let workerUrl: string | URL | null = null;

/** @internal init's workerUrl option */
export function setWorkerUrl(url: string | URL): void {
  workerUrl = url;
}

async function spawnPort(events: PortEvents): Promise<Port> {
  if (isNode) {
    const wt = await nodeImport<{ Worker: new (what: URL | string, opts?: { eval: boolean }) => NodeWorker }>('node:worker_threads');
    // Not the literal form: bundlers would emit a second, unused copy of the worker for this Node-only branch.
    // Nor `new URL(name, import.meta.url)`: webpack would warn of a dependency it cannot know.
    const moduleUrl = import.meta.url;
    let url = new URL(WORKER_FILE, moduleUrl);
    if (workerUrl !== null) {
      // a URL (file:), or a path (relative ones against the working directory)
      const given = String(workerUrl);
      if (workerUrl instanceof URL || /^[a-z][a-z0-9+.-]+:\/\//i.test(given)) url = new URL(given);
      else {
        const { pathToFileURL } = await nodeImport<{ pathToFileURL(p: string): URL }>('node:url');
        url = pathToFileURL(given);
      }
    }
    // A script run as `node --input-type=module -e '...'` (or from stdin) passes --input-type on to its workers, and
    // Node refuses it for a worker started from a file ("can only be used with string input"): every bake failed
    // with NB_ERR_WORKER. Such a worker starts from a line of code that imports the file. (Handing the worker its
    // flags without --input-type is no way out: Node refuses V8 flags, such as --expose-gc, given that way.)
    const inputType = (nodeProcess?.execArgv ?? []).some((a) => a === '--input-type' || a.startsWith('--input-type='));
    const w = inputType ? new wt.Worker(`import(${JSON.stringify(url.href)});`, { eval: true }) : new wt.Worker(url);
    w.on('message', (m) => events.message(m));
    w.on('error', (e) => events.died(`it threw ${e?.message ?? e}${workerUrl !== null ? ` (its script: ${url.href})` : ''}`));
    w.on('exit', (code) => events.died(`it exited with code ${code}`));
    return {
      post: (m, t) => {
        // A browser throws a DataCloneError here; Node posts nothing and says nothing, and the task would wait
        // forever. Fail alike: the caller drops the worker and rejects the task.
        if (t?.some((b) => b instanceof ArrayBuffer && isDetached(b))) throw new Error('a buffer to transfer is detached');
        w.postMessage(m, t);
      },
      terminate: () => void w.terminate(),
      hold: (on) => (on ? w.ref() : w.unref()),
    };
  }
  let w: Worker;
  let script: string;
  if (workerUrl === null) {
    // The literal form lets bundlers (Vite, webpack) find and emit the worker.
    w = new Worker(new URL('./bake.worker.js', import.meta.url), { type: 'module' });
    const moduleUrl = import.meta.url; // (a copy: webpack warns of `new URL(expression, import.meta.url)`)
    script = new URL(WORKER_FILE, moduleUrl).href;
  } else {
    const url = new URL(String(workerUrl), globalThis.location?.href);
    script = url.href;
    if (globalThis.location && url.origin !== globalThis.location.origin && url.protocol !== 'blob:' && url.protocol !== 'data:') {
      // A worker's script must come from the page's origin: one elsewhere (a CDN) is imported by a same-origin
      // blob: module instead (the CDN must send CORS headers, as for any cross-origin module).
      const blob = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }));
      try {
        w = new Worker(blob, { type: 'module' });
      } finally {
        // the worker has its script's URL now; the blob is only read when it starts
        setTimeout(() => URL.revokeObjectURL(blob), 60_000);
      }
    } else w = new Worker(url, { type: 'module' });
  }
  w.onmessage = (ev: MessageEvent<WorkerReply>) => events.message(ev.data);
  w.onerror = (ev: ErrorEvent) => {
    ev.preventDefault();
    events.died(`it failed: ${ev.message || `error event (the worker script ${script} may not have loaded)`}`);
  };
  w.onmessageerror = () => events.died('a message from it could not be read');
  return { post: (m, t) => w.postMessage(m, t), terminate: () => w.terminate(), hold: () => undefined };
}

/**
 * The workers a bake (or another call that runs in workers) uses when `options.workers` is not given: min(4,
 * hardware threads - 1), at least 1. The thread count is `navigator.hardwareConcurrency` (browsers, Node >= 21).
 * Node 20 has no `navigator`: there the count is read when the wasm loads (`init()` or the first call needing it),
 * and before that 4 threads are assumed, so this returns 3 until then.
 */
export function defaultWorkerCount(): number {
  return Math.max(1, Math.min(4, hardwareThreads() - 1));
}

/** Whether this environment can run bake workers at all. */
export function workersAvailable(): boolean {
  return isNode || typeof Worker !== 'undefined';
}

export class BakePool {
  /** Most workers started for a task that gives no limit of its own. */
  maxWorkers: number;
  /** An idle worker with more wasm memory than this is stopped after retireAfterMs (its memory freed). */
  retireBytes = 64 * 1024 * 1024;
  retireAfterMs = 10_000;
  /**
   * Idle workers beyond this many are stopped after retireAfterMs too, whatever their memory: a bake that asked
   * for more workers than the machine runs at once does not leave them all standing. @default hardware threads
   */
  keepIdle = hardwareThreads();
  /** @internal workers stopped for their memory so far */
  retired = 0;
  private readonly wasm: () => Promise<WasmModule>;
  private readonly workers = new Set<PoolWorker>();
  private readonly queue: Task[] = [];
  private nextId = 1;

  constructor(wasm: () => Promise<WasmModule>, maxWorkers: number) {
    this.wasm = wasm;
    this.maxWorkers = Math.max(1, maxWorkers);
  }

  /** @internal workers started so far (tests: a dead worker was replaced) */
  spawned = 0;

  /** Workers alive or starting. */
  get size(): number {
    return this.workers.size;
  }

  /**
   * Queues a bake request (or an inspect request: type 'inspect'); buffers in transfer move to the worker. While it
   * waits, workers are started up to `limit` in all (the caller's `workers` option); it takes any idle worker.
   */
  run(
    req: Omit<BakeRequest, 'id' | 'type'> | Omit<InspectRequest, 'id'> | Omit<RebuildRequest, 'id'>,
    transfer: ArrayBuffer[],
    onProgress?: (p: ProgressReply) => void,
    limit = this.maxWorkers,
  ): TaskHandle {
    const id = this.nextId++;
    let task!: Task;
    const promise = new Promise<ResultReply>((resolve, reject) => {
      task = { id, req: { type: 'bake', ...req, id } as Task['req'], transfer, onProgress, resolve, reject, worker: null, settled: false, limit };
    });
    this.queue.push(task);
    this.pump();
    return { promise, cancel: (reason) => this.cancel(task, reason) };
  }

  /**
   * Waits for a free worker (queued like a task) and holds it for a session. Rejects with NB_ERR_WORKER when no
   * worker can start, or with the reason when cancelled while waiting. Once held, events.died reports a worker
   * that stops; kill() and release() end the lease silently.
   */
  lease(events: LeaseEvents, limit = this.maxWorkers): { promise: Promise<Lease>; cancel(reason: unknown): void } {
    const id = this.nextId++;
    let task!: Task;
    const promise = new Promise<Lease>((resolve, reject) => {
      task = {
        id,
        req: null as unknown as Task['req'],
        transfer: [],
        resolve: () => undefined,
        reject,
        worker: null,
        settled: false,
        lease: events,
        limit,
      };
      (task as LeaseTask).grant = resolve;
    });
    this.queue.push(task);
    this.pump();
    return {
      promise,
      cancel: (reason) => {
        if (task.worker) return; // held: the holder kills or releases it
        this.cancel(task, reason);
      },
    };
  }

  /**
   * Posts a request that wants no reply to a worker of the pool, whatever it is doing: the worker takes it after
   * the requests sent to it before. False when that worker is gone.
   */
  tell(worker: object, msg: DropRequest): boolean {
    const w = worker as PoolWorker;
    if (!this.workers.has(w) || w.dead || !w.port) return false;
    try {
      w.port.post(msg, []);
      return true;
    } catch {
      return false;
    }
  }

  /** Whether a lease's worker ({@link Lease.worker}) is still in the pool: false once it died or was stopped. */
  alive(worker: object): boolean {
    return this.workers.has(worker as PoolWorker);
  }

  /** Terminates every worker; running and queued tasks reject with NB_ERR_WORKER. The pool stays usable. */
  terminate(): void {
    for (const t of this.queue.splice(0)) this.settle(t, null, this.fail('the worker pool was terminated'));
    this.terminating = true;
    try {
      for (const w of [...this.workers]) this.drop(w, 'the worker pool was terminated');
    } finally {
      this.terminating = false;
    }
  }

  private terminating = false;

  private fail(why: string, code: NavBakeErrorCode = 'NB_ERR_WORKER'): NavBakeError {
    return new NavBakeError(code, `navbake: bake worker stopped: ${why}`);
  }

  private settle(task: Task, result: ResultReply | null, error?: unknown): void {
    if (task.settled) return;
    task.settled = true;
    task.worker = null;
    if (result) task.resolve(result);
    else task.reject(error);
  }

  private cancel(task: Task, reason: unknown): void {
    if (task.settled) return;
    const i = this.queue.indexOf(task);
    if (i >= 0) this.queue.splice(i, 1);
    const w = task.worker;
    this.settle(task, null, reason);
    if (w) this.drop(w, null);
    this.pump();
  }

  /** Removes a worker for good; its task (if any) rejects with NB_ERR_WORKER (or code) unless why is null. */
  private drop(w: PoolWorker, why: string | null, code?: NavBakeErrorCode): void {
    if (w.dead) return;
    w.dead = true;
    this.stopTimer(w);
    this.workers.delete(w);
    const task = w.task;
    w.task = null;
    if (task?.lease) {
      // a held lease is settled already: tell its holder (unless the holder killed it)
      if (why !== null && task.settled) task.lease.died(this.fail(why, code), this.terminating);
      else if (!task.settled) this.settle(task, null, this.fail(why ?? 'the worker was stopped', code));
    } else if (task && why !== null) this.settle(task, null, this.fail(why, code));
    try {
      w.port?.terminate();
    } catch {
      // already gone
    }
  }

  private pump(): void {
    while (this.queue.length) {
      const idle = [...this.workers].find((w) => w.port && !w.task && !w.dead);
      if (idle) {
        this.assign(idle, this.queue.shift()!);
        continue;
      }
      const starting = [...this.workers].filter((w) => !w.port).length;
      // a `workers: 8` call starts up to 8 while its tasks wait; it leaves no higher limit behind for later calls
      const limit = this.queue.reduce((m, t) => Math.max(m, t.limit), 1);
      if (this.workers.size < limit && starting < this.queue.length) {
        this.spawn();
        continue;
      }
      break;
    }
  }

  /**
   * The worker has no task now: when it holds much memory, or more workers than keepIdle stand, stop it unless
   * work comes within retireAfterMs.
   */
  private idle(w: PoolWorker): void {
    this.stopTimer(w);
    if (w.dead || w.task || !(w.memory > this.retireBytes || this.workers.size > this.keepIdle)) return;
    const t = setTimeout(() => {
      w.retire = null;
      if (w.dead || w.task) return;
      if (!(w.memory > this.retireBytes || this.workers.size > this.keepIdle)) return; // others went first
      this.retired++;
      this.drop(w, null);
    }, this.retireAfterMs);
    (t as { unref?: () => void }).unref?.(); // Node: the timer does not keep the process alive
    w.retire = t;
  }

  private stopTimer(w: PoolWorker): void {
    if (w.retire !== null) clearTimeout(w.retire);
    w.retire = null;
  }

  private assign(w: PoolWorker, task: Task): void {
    if (!task.lease && task.transfer.some((b) => b instanceof ArrayBuffer && isDetached(b))) {
      // The caller's buffers (transfer: true) were taken elsewhere while the task waited: the request is wrong,
      // the worker is fine.
      const why = 'navbake.bake: a geometry buffer handed over with options.transfer was detached before the bake started';
      this.settle(task, null, new NavBakeError('NB_ERR_INVALID_ARG', why));
      return; // (pump, the only caller, goes on with the next task on this worker)
    }
    this.stopTimer(w);
    w.task = task;
    task.worker = w;
    w.port!.hold(true);
    if (task.lease) {
      task.settled = true;
      (task as LeaseTask).grant(this.leaseOf(w, task));
      return;
    }
    try {
      w.port!.post(task.req, task.transfer);
    } catch (e) {
      this.drop(w, `the request could not be sent (${(e as Error)?.message ?? e})`);
      this.pump();
    }
  }

  private spawn(): void {
    this.spawned++;
    const w: PoolWorker = { port: null, task: null, dead: false, memory: 0, retire: null };
    this.workers.add(w);
    const events: PortEvents = {
      message: (reply) => this.onReply(w, reply),
      died: (why) => {
        if (w.dead) return;
        this.drop(w, why);
        this.pump();
      },
    };
    const start = async (): Promise<[WasmModule, Port]> => {
      const port = await spawnPort(events);
      try {
        return [await this.wasm(), port];
      } catch (e) {
        port.terminate();
        throw e;
      }
    };
    start().then(
      ([module, port]) => {
        if (w.dead) {
          port.terminate();
          return;
        }
        w.port = port;
        port.hold(false);
        port.post({ id: 0, type: 'init', wasm: module }, []);
        this.pump();
      },
      (e) => {
        // Could not start at all: fail the oldest waiting task rather than retry forever.
        this.drop(w, null);
        const t = this.queue.shift();
        if (t) this.settle(t, null, this.fail(`it could not start (${(e as Error)?.message ?? e})`));
        this.pump();
      },
    );
  }

  private leaseOf(w: PoolWorker, task: Task): Lease {
    const held = () => w.task === task && !w.dead;
    return {
      id: task.id,
      worker: w,
      post: (msg, transfer = []) => {
        if (!held()) return;
        try {
          w.port!.post({ ...msg, id: task.id }, transfer);
        } catch (e) {
          this.drop(w, `a request could not be sent (${(e as Error)?.message ?? e})`);
          this.pump();
        }
      },
      release: () => {
        if (!held()) return;
        w.task = null;
        w.port?.hold(false);
        this.pump();
        this.idle(w);
      },
      kill: () => {
        if (!held()) return;
        this.drop(w, null);
        this.pump();
      },
    };
  }

  private onReply(w: PoolWorker, reply: WorkerReply): void {
    if (w.dead) return;
    if (reply?.type === 'error' && reply.code === 'NB_ERR_WASM_LOAD') {
      // Its wasm instance could not be made (say, no memory for it then), as the init's reply (id 0) or a
      // task's says: the worker can run nothing, and kept in the pool it would fail every task it got. Drop it
      // (its task fails); a fresh one starts for the next task.
      this.drop(w, `its wasm module could not be instantiated (${reply.message})`, 'NB_ERR_WASM_LOAD');
      this.pump();
      return;
    }
    const task = w.task;
    if (!task || reply?.id !== task.id) return; // a reply for a task already cancelled
    if (reply.type !== 'progress' && typeof reply.memory === 'number') w.memory = reply.memory;
    if (task.lease) {
      try {
        task.lease.reply(reply);
      } catch {
        // the holder's own failure must not break the pool
      }
      return;
    }
    if (reply.type === 'progress') {
      try {
        task.onProgress?.(reply);
      } catch (e) {
        // The task fails with the callback's error, as a bake on the calling thread does; its worker is
        // stopped (it is mid-bake) and replaced when work is waiting.
        this.cancel(task, e);
      }
      return;
    }
    w.task = null;
    w.port?.hold(false);
    if (reply.type === 'result') {
      keepSpares(reply.spare);
      this.settle(task, reply);
    } else if (reply.type === 'error') {
      this.settle(task, null, new NavBakeError((reply.code as NavBakeErrorCode) ?? 'NB_ERR_WORKER', reply.message));
    } else this.settle(task, null, this.fail(`it sent an unexpected '${reply.type}' reply`));
    this.pump();
    this.idle(w);
  }
}

interface LeaseTask extends Task {
  grant(lease: Lease): void;
}

let shared: BakePool | null = null;

/** @internal the pool bake() and the others use; each call gives its `workers` option as its tasks' limit */
export function sharedPool(wasm: () => Promise<WasmModule>): BakePool {
  shared ??= new BakePool(wasm, 1);
  return shared;
}

/**
 * Stops every bake worker (running bakes, updates and findPathsAsync batches reject with NB_ERR_WORKER; the
 * workers' navmesh copies go with them). Workers start again on the next call that needs them. Idle workers never
 * keep Node from exiting, so this is only needed to free their memory.
 */
export function terminateWorkers(): void {
  shared?.terminate();
}
