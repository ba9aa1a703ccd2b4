// findPathsAsync: a batch of paths shared out over the worker pool, each worker answering on its own copy of the
// navmesh. The answers must be findPaths' on this thread, array for array (refs included), also after the navmesh
// changes between batches (flags, tiles removed and loaded, obstacles rebuilt), which reach the copies as changes.
// It reaches inside the package, so it imports the unbundled modules (build/web, what web/dist is bundled from).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, NavBakeError, NavMesh, terminateWorkers, type PathBatch, type PathDetails } from '../../build/web/index.js';
import { handleMessage } from '../../build/web/bake.worker.js';
import { navmeshHandle } from '../../build/web/navmesh.js';
import { sharedPool } from '../../build/web/pool.js';
import { copiesInWorkers } from '../../build/web/replica.js';
import type { PathsRequest, WorkerReply } from '../../build/web/protocol.js';
import { wasmModule } from '../../build/web/runtime.js';
import { instantiate } from '../../build/web/wasm.js';
import { loadMesh, type Mesh } from './helpers';

let dungeon: Mesh;

beforeAll(() => {
  dungeon = loadMesh('dungeon.obj');
});

afterAll(() => terminateWorkers());

/** n random start/end pairs on the navmesh (its randomPoint sequence from seed). */
function randomPairs(nav: NavMesh, n: number, seed = 1): Float32Array {
  nav.seedRandom(seed);
  const pairs = new Float32Array(n * 6);
  for (let i = 0; i < n; i++) {
    pairs.set(nav.randomPoint()!, i * 6);
    pairs.set(nav.randomPoint()!, i * 6 + 3);
  }
  return pairs;
}

type Batch = PathBatch & Partial<PathDetails>;
const FIELDS = ['status', 'exhausted', 'lengths', 'offsets', 'points', 'pointFlags', 'pointRefs'] as const;

/** Every array of both batches, as plain arrays (toEqual then names the first difference). */
function arrays(b: Batch): Record<string, number[] | undefined> {
  return Object.fromEntries(FIELDS.map((k) => [k, b[k] ? Array.from(b[k]!) : undefined]));
}

async function rejection(p: Promise<unknown>): Promise<NavBakeError> {
  const e = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(NavBakeError);
  return e as NavBakeError;
}

describe('findPathsAsync gives findPaths\' answers', () => {
  it('a solo navmesh: with details, a filter, crossings, maxNodes; a plain array; the pairs read at the call', async () => {
    const nav = await bake(dungeon, {}, { workers: false });
    try {
      const pairs = randomPairs(nav, 700);
      const sync = nav.findPaths(pairs, { details: true });
      expect(sync.status.filter((s) => s === 2).length).toBeGreaterThan(400); // mostly complete paths: a real test
      const pending = nav.findPathsAsync(pairs, { details: true, workers: 3 });
      const kept = pairs.slice();
      pairs.fill(0); // the caller reuses its array while the batch waits for workers
      expect(arrays(await pending)).toEqual(arrays(sync));
      pairs.set(kept);

      const opts = { filter: { areaCost: { 0: 2, 63: 3 } }, crossings: 'all' as const, maxNodes: 8 };
      const limited = nav.findPaths(pairs, opts);
      expect(limited.exhausted.some((e) => e === 1)).toBe(true);
      expect(arrays(await nav.findPathsAsync(pairs, { ...opts, workers: 2 }))).toEqual(arrays(limited));
      expect(arrays(await nav.findPathsAsync(Array.from(pairs.subarray(0, 60)), { workers: 2 }))).toEqual(arrays(nav.findPaths(pairs.subarray(0, 60))));
      // workers: false: findPaths on this thread; no pairs: an empty batch
      expect(arrays(await nav.findPathsAsync(pairs, { workers: false, details: true }))).toEqual(arrays(sync));
      const none = await nav.findPathsAsync(new Float32Array(0));
      expect([none.status.length, Array.from(none.offsets)]).toEqual([0, [0]]);
    } finally {
      nav.dispose();
    }
  });

  it('a tiled navmesh, after flags set, tiles removed and loaded again: the copies follow each change', async () => {
    const nav = await bake(dungeon, { tileSize: 32 }, { workers: 2 });
    try {
      const pairs = randomPairs(nav, 600, 7);
      const check = async (what: string, opts: { filter?: { excludeFlags: number } } = {}) => {
        const got = await nav.findPathsAsync(pairs, { ...opts, details: true, workers: 2 });
        expect(arrays(got), what).toEqual(arrays(nav.findPaths(pairs, { ...opts, details: true })));
        return got;
      };
      const first = await check('as baked');
      // close the polygons of the paths' middle points: paths must go around them (or fail)
      const closed = new Set<number>();
      for (let i = 0; i < 600; i += 3) {
        const at = first.offsets[i] + ((first.offsets[i + 1] - first.offsets[i]) >> 1);
        if (first.pointRefs[at]) closed.add(first.pointRefs[at]);
      }
      for (const ref of closed) nav.setPolygonFlags(ref, 2);
      const detour = await check('flags set', { filter: { excludeFlags: 2 } });
      expect(Array.from(detour.lengths)).not.toEqual(Array.from(first.lengths));
      const tiles = nav.tiles();
      const kept = tiles.slice(2, 6).map((t) => nav.saveTile(t.x, t.z)!);
      for (const t of tiles.slice(2, 6)) expect(nav.removeTile(t.x, t.z)).toBe(true);
      const holed = await check('tiles removed', { filter: { excludeFlags: 2 } });
      expect(Array.from(holed.status)).not.toEqual(Array.from(detour.status));
      for (const b of kept.reverse()) nav.loadTile(b); // back in other slots: other refs
      await check('tiles loaded again');
      await check('tiles loaded again, flags', { filter: { excludeFlags: 2 } });
    } finally {
      nav.dispose();
    }
  });

  it('live obstacles: the tiles update() rebuilds reach the copies', async () => {
    const nav = await bake(dungeon, { tileSize: 32 }, { workers: 2, obstacles: true });
    try {
      const pairs = randomPairs(nav, 400, 3);
      const before = await nav.findPathsAsync(pairs, { workers: 2 });
      expect(arrays(before)).toEqual(arrays(nav.findPaths(pairs)));
      // a wall across the level's middle
      const [x0, , z0] = nav.params.origin;
      const t = nav.tiles();
      const zMid = z0 + ((t[0].z + t[t.length - 1].z + 1) / 2) * nav.params.tileDepth;
      nav.addObstacle({ type: 'box', min: [x0 - 10, -100, zMid - 2], max: [x0 + 500, 100, zMid + 2] });
      const u = await nav.update({ workers: 2 });
      expect(u.tiles.length).toBeGreaterThan(0);
      const after = await nav.findPathsAsync(pairs, { workers: 2, details: true });
      expect(arrays(after)).toEqual(arrays(nav.findPaths(pairs, { details: true })));
      expect(Array.from(after.status)).not.toEqual(Array.from(before.status));
    } finally {
      nav.dispose();
    }
  });
});

describe('findPathsAsync beside other work', () => {
  it('batches on two navmeshes, of several worker counts, and a bake share the pool; each gets its own answers', async () => {
    const a = await bake(dungeon, {}, { workers: false });
    const b = await bake(dungeon, { tileSize: 32 }, { workers: false });
    try {
      const pairs = randomPairs(a, 1000, 11);
      const [ra, rb, baked, ra1, rb2] = await Promise.all([
        a.findPathsAsync(pairs, { workers: 2 }),
        b.findPathsAsync(pairs, { workers: 3 }),
        bake(dungeon, { tileSize: 32 }, { workers: 2 }),
        a.findPathsAsync(pairs, { workers: 1, details: true }),
        b.findPathsAsync(pairs, { workers: 2, details: true }),
      ]);
      expect(arrays(ra)).toEqual(arrays(a.findPaths(pairs)));
      expect(arrays(rb)).toEqual(arrays(b.findPaths(pairs)));
      expect(arrays(ra1)).toEqual(arrays(a.findPaths(pairs, { details: true })));
      expect(arrays(rb2)).toEqual(arrays(b.findPaths(pairs, { details: true })));
      expect(baked.save()).toEqual(b.save());
      baked.dispose();
    } finally {
      a.dispose();
      b.dispose();
    }
  });
});

describe('findPathsAsync while the navmesh changes', () => {
  it('asked during a tiled bake (onTile), it answers on the navmesh as it is once it has its workers', async () => {
    let batch: Promise<Batch> | null = null;
    let pairs: Float32Array | null = null;
    const nav = await bake(dungeon, { tileSize: 32 }, {
      workers: 2,
      onTile: (t) => {
        if (batch || t.done < 4) return;
        pairs = randomPairs(t.navMesh, 300, 5); // on the tiles so far
        batch = t.navMesh.findPathsAsync(pairs, { workers: 2, details: true }); // waits for the bake's workers
      },
    });
    try {
      expect(batch).not.toBeNull();
      // the bake held both workers to its end: the batch got them then, with every tile in
      expect(arrays(await batch!)).toEqual(arrays(nav.findPaths(pairs!, { details: true })));
    } finally {
      nav.dispose();
    }
  });

  it('a copy older than what the change lists keep is made anew', async () => {
    const nav = await bake(dungeon, { tileSize: 32 }, { workers: false });
    try {
      const pairs = randomPairs(nav, 300, 9);
      await nav.findPathsAsync(pairs, { workers: 2 }); // copies made
      const t = nav.tiles()[4];
      expect(nav.removeTile(t.x, t.z)).toBe(true);
      // what happens when a list reaches its cap: the lists are cleared and copies before now are stale
      const { w, nav: ptr } = navmeshHandle(nav);
      (w as unknown as { forget(log: unknown): void }).forget(w.trackChanges(ptr));
      expect(w.trackChanges(ptr).tiles.size).toBe(0);
      expect(arrays(await nav.findPathsAsync(pairs, { workers: 2 }))).toEqual(arrays(nav.findPaths(pairs)));
    } finally {
      nav.dispose();
    }
  });
});

describe('findPathsAsync errors', () => {
  it("rejects with findPaths' errors, NB_ERR_DISPOSED, and an aborted signal's reason", async () => {
    const nav = await bake(dungeon, {}, { workers: false });
    const pairs = randomPairs(nav, 200);
    expect((await rejection(nav.findPathsAsync([0, 0, 0, NaN, 0, 0]))).code).toBe('NB_ERR_NONFINITE');
    expect((await rejection(nav.findPathsAsync(pairs, { workers: 0 }))).message).toMatch(/findPathsAsync: options\.workers must be false or an integer/);
    expect((await rejection(nav.findPathsAsync(pairs, { sliceMs: 3 } as never))).code).toBe('NB_ERR_INVALID_ARG');
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(nav.findPathsAsync(pairs, { signal: ac.signal })).rejects.toThrow('stop');
    const late = new AbortController();
    const aborted = nav.findPathsAsync(pairs, { signal: late.signal, workers: 2 });
    late.abort(new Error('later'));
    await expect(aborted).rejects.toThrow('later');
    // disposed while the batch waits for its workers, and before the call
    const waiting = nav.findPathsAsync(pairs, { workers: 2 });
    nav.dispose();
    expect((await rejection(waiting)).code).toBe('NB_ERR_DISPOSED');
    expect((await rejection(nav.findPathsAsync(pairs))).code).toBe('NB_ERR_DISPOSED');
  });

  it('a worker that dies rejects the batch with NB_ERR_WORKER; the next batch makes its copies anew', async () => {
    const nav = await bake(dungeon, {}, { workers: false });
    try {
      const pairs = randomPairs(nav, 2000);
      const want = arrays(nav.findPaths(pairs));
      expect(arrays(await nav.findPathsAsync(pairs, { workers: 2 }))).toEqual(want);
      // 100k pairs keep both workers busy for a quarter second or more: stopped 40 ms in, they die mid-share
      const many = new Float32Array(100_000 * 6);
      for (let i = 0; i < many.length; i += pairs.length) many.set(pairs.subarray(0, Math.min(pairs.length, many.length - i)), i);
      const batch = nav.findPathsAsync(many, { workers: 2 });
      await new Promise((r) => setTimeout(r, 40));
      terminateWorkers(); // every worker stops, the batch's among them
      const e = await rejection(batch);
      expect([e.code, e.message]).toEqual(['NB_ERR_WORKER', 'navbake: bake worker stopped: the worker pool was terminated']);
      // stopped while it waits for its workers
      const queued = nav.findPathsAsync(pairs, { workers: 2 });
      terminateWorkers();
      expect((await rejection(queued)).code).toBe('NB_ERR_WORKER');
      expect(arrays(await nav.findPathsAsync(pairs, { workers: 2 }))).toEqual(want);
    } finally {
      nav.dispose();
    }
  });
});

describe('copies in workers', () => {
  it('are made once per worker and navmesh, and freed once their navmesh is disposed, batch or not', async () => {
    terminateWorkers(); // no copies left from the tests before
    const a = await bake(dungeon, {}, { workers: false });
    const b = await bake(dungeon, { tileSize: 32 }, { workers: false });
    const pairs = randomPairs(a, 300);
    await a.findPathsAsync(pairs, { workers: 2 });
    await a.findPathsAsync(pairs, { workers: 2 });
    expect(copiesInWorkers()).toEqual({ copies: 2, toFree: 0 });
    await b.findPathsAsync(pairs, { workers: 2 });
    expect(copiesInWorkers()).toEqual({ copies: 4, toFree: 0 });
    a.dispose();
    expect(copiesInWorkers()).toEqual({ copies: 2, toFree: 2 });
    await Promise.resolve(); // both workers are told to free a's copies, with no batch to wait for
    expect(copiesInWorkers()).toEqual({ copies: 2, toFree: 0 });
    // a batch small enough for one worker, then b disposed: the other worker is told too
    await b.findPathsAsync(pairs.subarray(0, 60), { workers: 2 });
    b.dispose();
    await Promise.resolve();
    expect(copiesInWorkers()).toEqual({ copies: 0, toFree: 0 });
  });

  it('a batch aborted mid-way stops the workers on its shares, as an aborted bake does: none is left busy', async () => {
    terminateWorkers();
    const nav = await bake(dungeon, {}, { workers: false });
    try {
      const pairs = randomPairs(nav, 2000);
      const want = arrays(nav.findPaths(pairs));
      expect(arrays(await nav.findPathsAsync(pairs, { workers: 2 }))).toEqual(want);
      const pool = sharedPool(() => wasmModule());
      expect([pool.size, copiesInWorkers().copies]).toEqual([2, 2]);
      const spawned = pool.spawned;
      // 100k pairs keep both workers busy for a quarter second or more: aborted 40 ms in, both are mid-share
      const many = new Float32Array(100_000 * 6);
      for (let i = 0; i < many.length; i += pairs.length) many.set(pairs.subarray(0, Math.min(pairs.length, many.length - i)), i);
      const ac = new AbortController();
      const batch = nav.findPathsAsync(many, { workers: 2, signal: ac.signal });
      await new Promise((r) => setTimeout(r, 40));
      ac.abort();
      expect((await batch.catch((e: unknown) => e)) as Error).toMatchObject({ name: 'AbortError' });
      // both stopped, their copies with them (left running they would hold up the next calls, the pool counting
      // them idle); the next batch starts fresh workers and makes its copies anew
      expect([pool.size, copiesInWorkers().copies]).toEqual([0, 0]);
      expect(arrays(await nav.findPathsAsync(pairs, { workers: 2 }))).toEqual(want);
      expect(pool.spawned).toBe(spawned + 2);
    } finally {
      nav.dispose();
    }
  });
});

describe('the worker body (handleMessage) with navmesh copies', () => {
  it('makes a copy from a sync, answers on it, frees it when dropped; a batch for a copy it lacks is an error', async () => {
    const wasm = await instantiate(await wasmModule());
    const nav = await bake(dungeon, {}, { workers: false });
    try {
      const pairs = randomPairs(nav, 50);
      const t = nav.tiles()[0];
      const place = [0, 1]; // a solo navmesh's one tile: slot 0, salt 1
      const p = nav.params;
      const replies: WorkerReply[] = [];
      const post = (r: WorkerReply) => replies.push(r);
      const base: Omit<PathsRequest, 'sync' | 'replica'> = {
        id: 5,
        type: 'paths',
        pairs,
        half: new Float64Array([2, 4, 2]),
        filter: null,
        crossings: 0,
        details: true,
        nodes: 2048,
        maxNodes: 0,
      };
      const heap0 = wasm.heapUsed();
      const sync = {
        params: [...p.origin, p.tileWidth, p.tileDepth, p.maxTiles] as [number, number, number, number, number, number],
        flags: new Uint32Array(0),
        remove: new Int32Array(0),
        put: [{ bytes: nav.saveTile(t.x, t.z)!, slot: place[0], salt: place[1] }],
      };
      handleMessage({ ...base, replica: 9, sync }, wasm, post);
      handleMessage({ ...base, replica: 9, sync: null }, wasm, post); // the copy is kept
      expect(replies.map((r) => r.type)).toEqual(['result', 'result']);
      const want = arrays(nav.findPaths(pairs, { details: true }));
      for (const r of replies) expect(arrays((r as { paths: Batch }).paths)).toEqual(want);
      expect(wasm.heapUsed()).toBeGreaterThan(heap0);
      // 40 changes brought in (the tile taken out and put back, its flags set): the copy's memory does not grow
      const flagged = { params: null, flags: new Uint32Array([want.pointRefs![0], 3]), remove: new Int32Array([t.x, t.z]), put: sync.put };
      const held = wasm.heapUsed();
      for (let i = 0; i < 40; i++) {
        const put = [{ ...sync.put[0], bytes: sync.put[0].bytes.slice() }];
        handleMessage({ ...base, replica: 9, sync: { ...flagged, put } }, wasm, post);
      }
      expect(replies.slice(2).every((r) => r.type === 'result')).toBe(true);
      expect(arrays((replies[replies.length - 1] as { paths: Batch }).paths)).toEqual(want);
      // within the allocator's rounding (free blocks split and merge differently: 8 bytes seen); a leak of even 8
      // bytes a change would be 320 here, and the tile alone is 13 KB
      expect(Math.abs(wasm.heapUsed() - held)).toBeLessThan(64);
      replies.length = 2;
      handleMessage({ id: 0, type: 'drop', replicas: [9, 77] }, wasm, post); // no reply; an unknown id is nothing to free
      expect(replies.length).toBe(2);
      handleMessage({ ...base, replica: 9, sync: null }, wasm, post); // freed: no copy 9 left
      expect(replies[2]).toMatchObject({ type: 'error', code: 'NB_ERR_INVALID_ARG' });
      expect((replies[2] as { message: string }).message).toMatch(/no copy 9 of a navmesh/);
      expect(wasm.heapUsed()).toBe(heap0);
      // a corrupt tile in a sync: an error reply, and no copy left behind
      const bad = { ...sync, put: [{ ...sync.put[0], bytes: new Uint8Array(64) }] };
      handleMessage({ ...base, replica: 10, sync: bad }, wasm, post);
      expect(replies[3]).toMatchObject({ type: 'error', code: 'NB_ERR_CORRUPT' });
      expect(wasm.heapUsed()).toBe(heap0);
    } finally {
      nav.dispose();
    }
  });
});
