// Tiled bakes through worker sessions: the geometry goes to each worker once, tiles are handed out nearest-first
// to `focus`, each finished tile goes into the navmesh at once (onTile). Whatever runs it and in whatever order,
// the navmesh saves to the bytes of the native tool's `bake --tile-size`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bake, NavBakeError, NavMesh, terminateWorkers, type BakeProgress } from '../../web/dist/index.js';
import { loadMesh, meshesDir, runNative, type Mesh } from './helpers';

let dungeon: Mesh;
let navTest: Mesh;
const dir = mkdtempSync(join(tmpdir(), 'navbake-tiled-'));

async function saved(p: Promise<NavMesh>): Promise<Uint8Array> {
  const nav = await p;
  try {
    return nav.save();
  } finally {
    nav.dispose();
  }
}

function native(file: string, tileSize: number, extra: string[] = []): Uint8Array {
  const out = join(dir, `${file}-${tileSize}.navbake`);
  const r = runNative(['bake', resolve(meshesDir, file), '--tile-size', String(tileSize), ...extra, '--save', out]);
  expect(r.status, r.stderr).toBe(0);
  return new Uint8Array(readFileSync(out));
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e) => e,
  );
}

beforeAll(() => {
  dungeon = loadMesh('dungeon.obj');
  navTest = loadMesh('nav_test.obj');
});

afterAll(() => terminateWorkers());

describe('determinism', () => {
  it('workers 1, 2, 4 and false, with and without focus: the bytes of the native tool', async () => {
    const cases: [string, Mesh, number, [number, number, number]][] = [
      ['dungeon.obj', dungeon, 32, [40, 10, -20]],
      ['nav_test.obj', navTest, 48, [-5, 0, 30]],
    ];
    for (const [file, mesh, tileSize, focus] of cases) {
      const expected = native(file, tileSize);
      expect(NavMesh.readTiles(expected).tiles.length).toBeGreaterThan(10);
      for (const workers of [1, 2, 4, false] as const) {
        for (const f of [undefined, focus]) {
          const bytes = await saved(bake(mesh, { tileSize }, { workers, focus: f }));
          expect(bytes, `${file} workers ${workers} focus ${f}`).toEqual(expected);
        }
      }
    }
  });
});

describe('onTile and progress', () => {
  for (const workers of [2, false] as const) {
    it(`fires per added tile with the navmesh queryable so far (workers: ${workers})`, async () => {
      const events: { x: number; z: number; polygons: number; done: number; total: number }[] = [];
      const progress: BakeProgress[] = [];
      let seen: NavMesh | null = null;
      let queried = 0;
      let stageSum = 0;
      let totalSum = 0;
      const t0 = performance.now();
      const nav = await bake(dungeon, { tileSize: 32 }, {
        workers,
        onProgress: (p) => progress.push(p),
        onTile: (e) => {
          seen = e.navMesh;
          events.push({ x: e.x, z: e.z, polygons: e.polygons, done: e.done, total: e.total });
          // the tiles added so far, and only those
          expect(e.navMesh.tileCount).toBe(events.length);
          // the baking instance's wasm memory: whole 64 KiB pages, more than the tile's own data
          expect(e.memoryBytes % 65536).toBe(0);
          expect(e.memoryBytes).toBeGreaterThan(65536);
          expect(e.navMesh.tiles().find((t) => t.x === e.x && t.z === e.z)?.polygons).toBe(e.polygons);
          // the tile bake's own timers: every stage that builds polygons ran, and the stages fit in its total
          const t = e.times;
          for (const k of ['rasterize', 'compact', 'regions', 'contours', 'polymesh'] as const) expect(t[k], k).toBeGreaterThan(0);
          const stages = t.rasterize + t.filter + t.compact + t.erode + t.areas + t.distance + t.regions + t.contours + t.polymesh + t.detail;
          expect(stages).toBeLessThanOrEqual(t.total + 1e-6);
          stageSum += stages;
          totalSum += t.total;
          if (events.length % 5 === 0) {
            const p = e.navMesh.randomPoint({ seed: events.length })!;
            expect(e.navMesh.nearestPoint(p)).not.toBeNull();
            expect(e.navMesh.findPath(p, p).status).toBe('complete');
            queried++;
          }
        },
      });
      const wall = performance.now() - t0;
      expect(seen).toBe(nav); // the NavMesh the bake resolved with
      // the stages are most of each tile's time, and the tiles' times fit in the bake (spread over the workers)
      expect(stageSum).toBeGreaterThan(0.5 * totalSum);
      expect(totalSum).toBeLessThan(wall * (workers === false ? 1 : workers));
      expect(queried).toBeGreaterThan(3);
      expect(events.length).toBe(nav.tileCount);
      expect(new Set(events.map((e) => `${e.x},${e.z}`)).size).toBe(events.length);
      expect(events.every((e) => e.polygons > 0)).toBe(true);
      // progress starts at 0 and counts every tile baked (with or without polygons), once each, up to the total
      expect(progress.every((p) => p.stage === 'tiles')).toBe(true);
      const total = progress[0].total;
      expect(progress.map((p) => p.done)).toEqual(Array.from({ length: total + 1 }, (_, i) => i));
      expect(progress.every((p) => p.total === total)).toBe(true);
      expect(total).toBeGreaterThanOrEqual(nav.tileCount);
      expect(events.every((e) => e.total === total && e.done <= total)).toBe(true);
      nav.dispose();
    });
  }

  it('stage timers stay right however long the process has run (a clock that wrapped every 4.3 s)', async () => {
    // The wasm reads the clock through WASI clock_time_get, which the loader answers from performance.now().
    // Emscripten's emscripten_get_now() computed 1000 * clock() in 32 bits: past 2.1 s of process time it
    // wrapped every 4.3 s, and a tile timed across a wrap came out negative. Run the clock right up to such a
    // wrap (2^32 microseconds, minus a few milliseconds) and bake across it on this thread.
    const real = performance.now.bind(performance);
    const offset = 2 ** 32 / 1000 - real() - 3;
    (performance as { now: () => number }).now = () => real() + offset;
    const totals: number[] = [];
    try {
      const nav = await bake(dungeon, { tileSize: 32 }, {
        workers: false,
        onTile: (e) => {
          const t = e.times;
          const stages = t.rasterize + t.filter + t.compact + t.erode + t.areas + t.distance + t.regions + t.contours + t.polymesh + t.detail;
          expect(stages).toBeLessThanOrEqual(t.total + 1e-6);
          totals.push(t.total);
        },
      });
      nav.dispose();
    } finally {
      delete (performance as { now?: unknown }).now;
    }
    expect(performance.now()).toBeLessThan(2 ** 32 / 1000 - 1000); // the real clock is back
    expect(totals.length).toBeGreaterThan(5);
    expect(Math.min(...totals)).toBeGreaterThan(0);
    expect(Math.max(...totals)).toBeLessThan(1000);
  });

  it('focus: nearest first, ties by (z, x) (one worker or the main thread: exactly that order)', async () => {
    const focus = { x: 20, y: 0, z: -60 };
    for (const workers of [1, false] as const) {
      const order: [number, number][] = [];
      const nav = await bake(dungeon, { tileSize: 32 }, { workers, focus, onTile: (e) => order.push([e.x, e.z]) });
      const { origin, tileWidth, tileDepth } = nav.params;
      const d = ([x, z]: [number, number]) =>
        Math.hypot(origin[0] + (x + 0.5) * tileWidth - focus.x, origin[2] + (z + 0.5) * tileDepth - focus.z);
      const sorted = [...order].sort((a, b) => d(a) - d(b) || a[1] - b[1] || a[0] - b[0]);
      expect(order).toEqual(sorted);
      expect(d(order[0])).toBeLessThan(tileWidth); // the focus tile (or its neighbour) comes first
      nav.dispose();
    }
  });

  it('an exception in onTile fails the bake with it; the navmesh is disposed', async () => {
    for (const workers of [2, false] as const) {
      let nav: NavMesh | null = null;
      const boom = new Error('boom');
      const e = await rejection(
        bake(dungeon, { tileSize: 32 }, {
          workers,
          onTile: (t) => {
            nav = t.navMesh;
            if (t.navMesh.tileCount === 3) throw boom;
          },
        }),
      );
      expect(e).toBe(boom);
      expect(nav!.disposed).toBe(true);
    }
    expect(await saved(bake(dungeon, { tileSize: 32 }, { workers: 2 }))).toEqual(native('dungeon.obj', 32));
  });

  it('abort after the first tile: rejects with the reason, no tile after it, the navmesh disposed', async () => {
    for (const workers of [2, false] as const) {
      const ac = new AbortController();
      let nav: NavMesh | null = null;
      let after = 0;
      const e = await rejection(
        bake(dungeon, { tileSize: 32 }, {
          workers,
          signal: ac.signal,
          onTile: (t) => {
            if (nav) after++;
            nav = t.navMesh;
            ac.abort();
          },
        }),
      );
      expect((e as DOMException).name).toBe('AbortError');
      expect(after).toBe(0);
      expect(nav!.disposed).toBe(true);
    }
  });

  it('terminateWorkers() mid-bake rejects it with NB_ERR_WORKER (no replacement workers)', async () => {
    const e = await rejection(bake(dungeon, { tileSize: 32 }, { workers: 2, onTile: () => terminateWorkers() }));
    expect((e as NavBakeError).code).toBe('NB_ERR_WORKER');
    expect((e as NavBakeError).message).toMatch(/terminated/);
    expect(await saved(bake(dungeon, { tileSize: 32 }, { workers: 2 }))).toEqual(native('dungeon.obj', 32));
  });

  it('a geometry copy that cannot be allocated rejects with NB_ERR_OUT_OF_MEMORY (tiled and solo; never hangs)', async () => {
    const real = globalThis.SharedArrayBuffer;
    class Refused {
      constructor() {
        throw new RangeError('Array buffer allocation failed');
      }
    }
    // Positions larger than any buffer an earlier bake left for reuse (spare.ts: a copy fits in one up to twice
    // its size): their copy needs new memory.
    const big = new Float32Array(dungeon.positions.length * 8);
    big.set(dungeon.positions);
    (globalThis as { SharedArrayBuffer: unknown }).SharedArrayBuffer = Refused;
    try {
      // the copy at the call goes into shared memory, for the workers
      const e = await rejection(bake({ positions: big, indices: dungeon.indices }, { tileSize: 32 }, { workers: 2 }));
      expect((e as NavBakeError).code).toBe('NB_ERR_OUT_OF_MEMORY');
      expect((e as NavBakeError).message).toMatch(/geometry\.positions: no memory for a copy of \d+ elements \(Array buffer allocation failed\)/);
      // with transfer: true the caller's arrays are kept: the workers' shared copy is made when the first one starts
      const given = { positions: big.slice(), indices: dungeon.indices.slice() };
      const t = await rejection(bake(given, { tileSize: 32 }, { workers: 2, transfer: true }));
      expect((t as NavBakeError).code).toBe('NB_ERR_OUT_OF_MEMORY');
      expect((t as NavBakeError).message).toMatch(/copying the geometry .*allocation failed/);
    } finally {
      (globalThis as { SharedArrayBuffer: unknown }).SharedArrayBuffer = real;
    }
    expect(await saved(bake(dungeon, { tileSize: 32 }, { workers: 2 }))).toEqual(native('dungeon.obj', 32));
    // a solo bake's copy of the caller's arrays (taken at the call), the same: no ArrayBuffer of its size
    const plain = globalThis.ArrayBuffer;
    globalThis.ArrayBuffer = new Proxy(plain, {
      construct(target, args: [number]) {
        if (args[0] === big.byteLength) throw new RangeError('Array buffer allocation failed');
        return new target(...args);
      },
    });
    try {
      const f = await rejection(bake({ positions: big, indices: dungeon.indices }, {}, { workers: 1 }));
      expect((f as NavBakeError).code).toBe('NB_ERR_OUT_OF_MEMORY');
      expect((f as NavBakeError).message).toMatch(/geometry\.positions: no memory for a copy of \d+ elements \(Array buffer allocation failed\)/);
    } finally {
      globalThis.ArrayBuffer = plain;
    }
  });

  it('bad focus and onTile are rejected', async () => {
    const e = await rejection(bake(dungeon, { tileSize: 32 }, { focus: [0, NaN, 0] }));
    expect((e as NavBakeError).code).toBe('NB_ERR_NONFINITE');
    expect((e as NavBakeError).message).toMatch(/options\.focus\[1\] must be finite/);
    const f = await rejection(bake(dungeon, { tileSize: 32 }, { onTile: 5 as unknown as () => void }));
    expect((f as NavBakeError).code).toBe('NB_ERR_INVALID_ARG');
  });
});


describe('off-mesh links whose start has no ground', () => {
  // A start in a part of the grid with no triangles (tile (0, 0) at tileSize 16), and one 0.8 beyond the level's
  // max z: the same outcome whatever tileSize and whatever bakes it (the first failed tiled bakes with a C
  // function's message; the second was dropped silently by a solo bake and kept by tiled ones).
  const bakes: [string, object, object][] = [
    ['solo', {}, { workers: false }],
    ['tileSize 16, main thread', { tileSize: 16 }, { workers: false }],
    ['tileSize 64, 2 workers', { tileSize: 64 }, { workers: 2 }],
    ['tileSize 16, obstacles', { tileSize: 16 }, { workers: 2, obstacles: true }],
  ];

  it('a start over no triangles is kept, unattached, in every mode', async () => {
    const end = (await bake(dungeon, {}, { workers: false })).randomPoint({ seed: 1 })!;
    const links = [{ start: [-22.62, 10, -87.64], end, radius: 1, userId: 7 }];
    for (const [name, config, options] of bakes) {
      const nav = await bake({ ...dungeon, links }, config, options);
      const kept = nav.polygons().filter((p) => p.link).map((p) => [p.link!.userId, p.link!.attached.start, p.link!.attached.end]);
      expect(kept, name).toEqual([[7, false, true]]);
      nav.dispose();
    }
  });

  it('a start outside the level is refused by name in every mode', async () => {
    const links = [{ start: [0, 0, 0], end: [1, 0, 1], radius: 1 }, { start: [36.5, 10.2, 9.7], end: [36.5, 10.2, 0], radius: 1 }];
    for (const [name, config, options] of bakes) {
      const e = (await rejection(bake({ ...dungeon, links }, config, options))) as NavBakeError;
      expect(e, name).toBeInstanceOf(NavBakeError);
      expect(e.code, name).toBe('NB_ERR_INVALID_ARG');
      expect(e.message, name).toMatch(/^navbake\.bake: geometry\.links\[1\]: start \(36\.5, 10\.2, 9\.7\) is outside the level's bounds \(x .*, z -90\.\d+\.\.8\.89\d*/);
    }
  });
});
