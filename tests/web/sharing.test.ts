// Calls that share things: the worker pool (each call's `workers` is its own, not the pool's from then on), one
// AbortSignal (many calls, one listener), and a navmesh whose update() is running when it is disposed. Also what an
// abort from inside onTile leaves behind, and abort(null).
// It reaches inside the package (the shared pool), so it imports the unbundled modules (build/web).
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, NavBakeError, terminateWorkers, type BakeProgress } from '../../build/web/index.js';
import { sharedPool } from '../../build/web/pool.js';
import { wasmModule } from '../../build/web/runtime.js';
import { loadMesh, type Mesh } from './helpers';

let dungeon: Mesh;

beforeAll(() => {
  dungeon = loadMesh('dungeon.obj');
});

afterAll(() => terminateWorkers());

/** Fine enough that a bake of the dungeon takes seconds: it is aborted, never waited for. */
const slow = { cellSize: 0.035, cellHeight: 0.025 };

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('the worker pool', () => {
  it("a call's workers option starts up to that many workers for it, and leaves no higher limit behind", async () => {
    const pool = sharedPool(() => wasmModule());
    terminateWorkers();
    const navs = await Promise.all([0, 1, 2].map(() => bake(dungeon, {}, { workers: 3 })));
    expect(pool.size).toBe(3);
    terminateWorkers();
    const before = pool.spawned;
    // Three bakes asking for one worker each: one worker, taking them in turn (not the three the call before had).
    const later = await Promise.all([0, 1, 2].map(() => bake(dungeon, {}, { workers: 1 })));
    expect(pool.spawned - before).toBe(1);
    expect(pool.size).toBe(1);
    for (const n of later) expect(n.save()).toEqual(navs[0].save());
    for (const n of [...navs, ...later]) n.dispose();
  });
});

describe('one signal for many calls', () => {
  it('adds one listener to the signal however many calls share it, and none once they end', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const ac = new AbortController();
      const seen = new Set<number>(); // listeners on the signal, looked at while the calls run
      const onProgress = () => seen.add(getEventListeners(ac.signal, 'abort').length);
      const calls = [
        ...Array.from({ length: 12 }, () => bake(dungeon, {}, { signal: ac.signal, workers: 2, onProgress })),
        ...Array.from({ length: 3 }, () => bake(dungeon, { tileSize: 32 }, { signal: ac.signal, workers: 2, onProgress })),
      ];
      const navs = await Promise.all(calls);
      expect([...seen]).toEqual([1]);
      expect(getEventListeners(ac.signal, 'abort').length).toBe(0);
      for (const n of navs) n.dispose();
      // The same when they are aborted: each call rejects with the reason, the listener is gone.
      const ac2 = new AbortController();
      const aborted = Array.from({ length: 12 }, () => bake(dungeon, slow, { signal: ac2.signal, workers: 2 }));
      await new Promise((r) => setTimeout(r, 50)); // all twelve waiting in the pool or running
      expect(getEventListeners(ac2.signal, 'abort').length).toBe(1);
      const reason = new Error('enough');
      ac2.abort(reason);
      for (const p of aborted) expect(await rejection(p)).toBe(reason);
      expect(getEventListeners(ac2.signal, 'abort').length).toBe(0);
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('abort(null) rejects with null, as fetch does (only an abort without a reason is an AbortError)', async () => {
    for (const workers of [2, false] as const) {
      const ac = new AbortController();
      const p = bake(dungeon, { ...slow, tileSize: 256 }, { signal: ac.signal, workers, onProgress: () => ac.abort(null) });
      expect(await rejection(p)).toBe(null);
    }
    const ac = new AbortController();
    const p = bake(dungeon, slow, { signal: ac.signal, workers: 1 });
    ac.abort(null);
    expect(await rejection(p)).toBe(null);
    const plain = new AbortController();
    const q = bake(dungeon, slow, { signal: plain.signal, workers: 1 });
    plain.abort();
    expect((await rejection(q)) as DOMException).toMatchObject({ name: 'AbortError' });
  });
});

describe('an abort from inside onTile', () => {
  for (const workers of [2, false] as const) {
    it(`ends the tiled bake there: no further tile or progress (${workers ? 'in workers' : 'on this thread'})`, async () => {
      const ac = new AbortController();
      const reason = new Error('seen enough');
      const events: string[] = [];
      let tiles = 0;
      const p = bake(dungeon, { tileSize: 16 }, {
        signal: ac.signal,
        workers,
        onProgress: (q: BakeProgress) => events.push(`progress ${q.done}`),
        onTile: (t) => {
          events.push(`tile ${++tiles}`);
          if (tiles === 3) ac.abort(reason);
        },
      });
      expect(await rejection(p)).toBe(reason);
      // nothing follows the tile whose onTile aborted: no progress for it, no later tile
      expect(events[0]).toBe('progress 0');
      expect(events.filter((e) => e.startsWith('tile'))).toEqual(['tile 1', 'tile 2', 'tile 3']);
      expect(events[events.length - 1]).toBe('tile 3');
    });
  }
});

describe('dispose() during update()', () => {
  it('rejects an update waiting for a worker at once with NB_ERR_DISPOSED, not when the worker is free', async () => {
    const nav = await bake(dungeon, { tileSize: 32 }, { workers: false, obstacles: true });
    nav.addObstacle({ type: 'box', min: [20, 0, -40], max: [30, 20, -30] });
    terminateWorkers();
    // the one worker a workers: 1 call may start is busy with a long bake
    const ac = new AbortController();
    const busy = bake(dungeon, slow, { signal: ac.signal, workers: 1 });
    const busyEnded = busy.then(
      () => 'the busy bake ended first',
      () => 'the busy bake ended first',
    );
    await new Promise((r) => setTimeout(r, 50));
    const update = nav.update({ workers: 1 });
    const after = nav.update({ workers: 1 }); // queued behind the first
    await new Promise((r) => setTimeout(r, 20)); // its rebuilds are waiting in the pool now
    nav.dispose();
    const first = await Promise.race([update.then(() => 'updated', (e: unknown) => e), busyEnded]);
    expect(first).toBeInstanceOf(NavBakeError);
    expect((first as NavBakeError).code).toBe('NB_ERR_DISPOSED');
    expect((first as NavBakeError).message).toMatch(/disposed during the update/);
    expect(((await rejection(after)) as NavBakeError).code).toBe('NB_ERR_DISPOSED');
    ac.abort();
    await busyEnded;
  });
});
