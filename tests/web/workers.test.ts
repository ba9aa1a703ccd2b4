// Bakes in worker_threads: the same bytes as the main thread and as the C nb_bake_navmesh, tiles spread over
// several workers, progress, abort, a worker dying mid-job, and the worker body (handleMessage) on its own.
// It reaches inside the package, so it imports the unbundled modules (build/web, what web/dist is bundled from).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, defaultWorkerCount, inspect, NavBakeError, NavMesh, terminateWorkers, voxelize, type BakeOptions, type BakeProgress, type NavBakeConfig } from '../../build/web/index.js';
import { availableParallelism, tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { handleMessage, WorkerExitRequest } from '../../build/web/bake.worker.js';
import { configValues } from '../../build/web/config.js';
import { EXIT_AT_STAGE } from '../../build/web/bake.js';
import { BakePool, sharedPool } from '../../build/web/pool.js';
import { spareBuffers } from '../../build/web/spare.js';
import type { BakeRequest, WorkerReply, WorkerRequest } from '../../build/web/protocol.js';
import { mainWasm, wasmModule } from '../../build/web/runtime.js';
import { instantiate, STAGES, type Wasm } from '../../build/web/wasm.js';
import { loadMesh, loadWasm, type Mesh, type RawModule } from './helpers';

let dungeon: Mesh;
let navTest: Mesh;
let solo: Uint8Array; // dungeon, default config, baked on the main thread
let raw: RawModule;

/** nb_bake_navmesh straight through the raw exports (no TypeScript layer), saved. */
function cBake(mesh: Mesh, config: Record<string, number>): Uint8Array {
  const m = raw;
  const ctx = m._nbw_context_create();
  const nf = m._nbw_config_field_count();
  const pPos = m._malloc(mesh.positions.byteLength);
  const pIdx = m._malloc(mesh.indices.byteLength);
  const pCfg = m._malloc(nf * 8);
  const pSize = m._malloc(4);
  try {
    m.HEAPF32.set(mesh.positions, pPos >> 2);
    m.HEAPU32.set(mesh.indices, pIdx >> 2);
    for (let i = 0; i < nf; i++) m.HEAPF64[(pCfg >> 3) + i] = config[m.UTF8ToString(m._nbw_config_field_name(i))] ?? 0;
    const nav = m._nbw_navmesh_bake(ctx, pPos, mesh.positions.length / 3, pIdx, mesh.indices.length / 3, 0, pCfg);
    expect(nav, m.UTF8ToString(m._nbw_message(ctx))).not.toBe(0);
    const data = m._nbw_navmesh_save(ctx, nav, pSize);
    const bytes = m.HEAPU8.slice(data, data + m.HEAPU32[pSize >> 2]);
    m._nbw_bytes_free(ctx, data);
    m._nbw_navmesh_destroy(ctx, nav);
    return bytes;
  } finally {
    for (const p of [pPos, pIdx, pCfg, pSize]) m._free(p);
    m._nbw_context_destroy(ctx);
  }
}

async function saved(p: Promise<NavMesh>): Promise<Uint8Array> {
  const nav = await p;
  try {
    return nav.save();
  } finally {
    nav.dispose();
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e) => e,
  );
}

function copyMesh(m: Mesh): Mesh {
  return { positions: m.positions.slice(), indices: m.indices.slice() };
}

beforeAll(async () => {
  dungeon = loadMesh('dungeon.obj');
  navTest = loadMesh('nav_test.obj');
  raw = await loadWasm();
  solo = await saved(bake(dungeon, {}, { workers: false }));
});

afterAll(() => terminateWorkers());

describe('default worker count', () => {
  it("is the machine's threads less one (at most 4), also in Node 20, which has no navigator", async () => {
    await mainWasm();
    // it was 3 on every machine in Node 20 (navigator.hardwareConcurrency missing: 4 assumed)
    expect(defaultWorkerCount()).toBe(Math.max(1, Math.min(4, availableParallelism() - 1)));
  });
});

describe('Node flags', () => {
  it('a script run with --input-type (node --input-type=module -e, or from stdin) bakes in workers, V8 flags too', () => {
    // The workers inherited --input-type and died at start ("can only be used with string input"): NB_ERR_WORKER.
    // Handing them the flags without it failed in turn under --expose-gc (Node refuses V8 flags given that way).
    const url = new URL('../../web/dist/index.js', import.meta.url).href;
    const script = `import { bake, terminateWorkers } from '${url}';
const nav = await bake({ positions: new Float32Array([-10, 0, -10, 10, 0, -10, 10, 0, 10, -10, 0, 10]), indices: new Uint32Array([0, 2, 1, 0, 3, 2]) }, {}, { workers: 1 });
console.log('polygons', nav.polygons().length);
terminateWorkers();`;
    const file = join(mkdtempSync(join(tmpdir(), 'navbake-flags-')), 'bake.mjs');
    writeFileSync(file, script);
    const runs = [['--input-type=module', '-e', script], ['--input-type', 'module'], ['--expose-gc', '--input-type=module', '-e', script], ['--expose-gc', file]];
    for (const args of runs) {
      const r = spawnSync(process.execPath, args, { input: args[1] === 'module' ? script : undefined, encoding: 'utf8', timeout: 60_000 });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toMatch(/^polygons [1-9]/);
    }
  });
});

describe('determinism', () => {
  it('a solo bake in a worker saves to the same bytes as on the main thread and in C', async () => {
    const seen: BakeProgress[] = [];
    const bytes = await saved(bake(dungeon, {}, { onProgress: (p) => seen.push(p) }));
    expect(bytes).toEqual(solo);
    expect(solo).toEqual(cBake(dungeon, {}));
    // progress crossed the thread boundary, stage by stage in pipeline order
    const stages = [...new Set(seen.map((p) => p.stage))];
    expect(stages).toEqual(STAGES);
    // each stage from 0 to done === total, never going back, never saying the same twice (as on the main thread)
    const here: BakeProgress[] = [];
    (await bake(dungeon, {}, { workers: false, onProgress: (p) => here.push(p) })).dispose();
    for (const reports of [seen, here]) {
      for (const stage of STAGES) {
        const r = reports.filter((p) => p.stage === stage);
        expect(r[0].done, stage).toBe(0);
        expect(r[r.length - 1].done, stage).toBe(r[r.length - 1].total);
        for (let i = 1; i < r.length; i++) {
          expect(r[i].done / r[i].total, `${stage} ${i}`).toBeGreaterThanOrEqual(r[i - 1].done / r[i - 1].total);
          expect([r[i].done, r[i].total], `${stage} ${i}`).not.toEqual([r[i - 1].done, r[i - 1].total]);
        }
      }
    }
  });

  it('tiled bakes: spread over 3 workers, on one, on the main thread and in C -- the same bytes', async () => {
    const cases: [Mesh, NavBakeConfig][] = [
      [dungeon, { tileSize: 32 }],
      [navTest, { tileSize: 48, partition: 'monotone' }],
    ];
    for (const [mesh, config] of cases) {
      const seen: BakeProgress[] = [];
      const spread = await saved(bake(mesh, config, { workers: 3, onProgress: (p) => seen.push(p) }));
      const one = await saved(bake(mesh, config, { workers: 1 }));
      const here = await saved(bake(mesh, config, { workers: false }));
      const c = cBake(mesh, { tile_size: config.tileSize!, partition: config.partition === 'monotone' ? 2 : 0 });
      expect(spread).toEqual(here);
      expect(one).toEqual(here);
      expect(here).toEqual(c);
      // tiles finished, summed over the workers, up to the total
      expect(seen.length).toBeGreaterThan(3);
      expect(seen.every((p) => p.stage === 'tiles')).toBe(true);
      expect(seen.map((p) => p.done)).toEqual([...seen.map((p) => p.done)].sort((a, b) => a - b));
      expect(seen[0].done).toBe(0);
      expect(seen[seen.length - 1].done).toBe(seen[0].total);
      const loaded = await NavMesh.load(spread);
      expect(loaded.tileCount).toBeGreaterThan(4);
      loaded.dispose();
    }
  });

  it('tiled bakes: the navmesh itself is the same whatever the workers (refs, polygons() order, randomPoint), not only its bytes', async () => {
    // Tiles finish in any order over several workers; they go into the navmesh in the bake's own order, so it fills
    // its slots as a bake on one thread does (randomPoint sequences and refs differed from bake to bake).
    const state = async (workers: number | false) => {
      const nav = await bake(navTest, { tileSize: 32 }, { workers });
      nav.seedRandom(5);
      const out = { refs: nav.polygons().map((p) => p.ref), points: Array.from({ length: 50 }, () => nav.randomPoint()) };
      nav.dispose();
      return out;
    };
    const here = await state(false);
    for (let i = 0; i < 3; i++) expect(await state(3)).toEqual(here);
    expect(await state(2)).toEqual(here);
  });

  it('concurrent bakes share the pool and each gets its own answer', async () => {
    const [a, b, c, d] = await Promise.all([
      saved(bake(dungeon, {}, { workers: 2 })),
      saved(bake(navTest, {}, { workers: 2 })),
      saved(bake(dungeon, {}, { workers: 2 })),
      saved(bake(dungeon, { tileSize: 64 }, { workers: 2 })),
    ]);
    expect(a).toEqual(solo);
    expect(c).toEqual(solo);
    expect(b).toEqual(await saved(bake(navTest, {}, { workers: false })));
    expect(d).toEqual(await saved(bake(dungeon, { tileSize: 64 }, { workers: false })));
  });

  it('the geometry copies come back from the worker and take the next copy: the same bytes, from buffers larger than it', async () => {
    await saved(bake(dungeon, {}, { workers: 1 }));
    const kept = spareBuffers().plain;
    // dungeon's copies, handed back by the worker (held weakly: a GC in between could take them, not in this test)
    expect(kept.map((b) => b.byteLength)).toEqual(expect.arrayContaining([dungeon.positions.byteLength, dungeon.indices.byteLength]));
    // nav_test's positions (10.6 KB) fit in dungeon's (61 KB, within twice their size + 64 KB): copied into its start
    const got = await saved(bake(navTest, {}, { workers: 1 }));
    expect(kept.some((b) => b.byteLength === 0)).toBe(true); // a kept buffer carried the copy (transferred: detached here)
    expect(got).toEqual(await saved(bake(navTest, {}, { workers: false })));
    expect(await saved(bake(dungeon, {}, { workers: 1 }))).toEqual(solo);
  });

  it('a tiled bake in workers copies the geometry once, into shared memory that the next tiled bake reuses', async () => {
    const tiled = (m: Mesh, opts: BakeOptions = {}) => saved(bake(m, { tileSize: 32 }, { workers: 2, ...opts }));
    const expected = await tiled(navTest, { workers: false });
    await tiled(dungeon);
    const kept = spareBuffers().shared; // dungeon's positions and indices, read by every session
    expect(kept.map((b) => b.byteLength)).toEqual(expect.arrayContaining([dungeon.positions.byteLength, dungeon.indices.byteLength]));
    // nav_test's positions fit in dungeon's: the same memory carries them, and comes back again
    expect(await tiled(navTest)).toEqual(expected);
    expect(spareBuffers().shared.filter((b) => kept.includes(b)).length).toBeGreaterThan(0);
    // a bake that fails keeps nothing back (a worker may still be reading): the memory it took is not kept
    const before = spareBuffers().shared;
    const ac = new AbortController();
    await expect(tiled(navTest, { signal: ac.signal, onTile: () => ac.abort() })).rejects.toThrow();
    const after = spareBuffers().shared;
    expect(after.length).toBeLessThan(before.length);
    expect(after.every((b) => before.includes(b))).toBe(true);
  });

  it('voxelize in a worker: the words of one grid come back in the buffer of the grid before, the same as here', async () => {
    const here = await voxelize(dungeon, {}, { workers: false });
    const want = here.occupancy().words;
    here.dispose();
    const first = await voxelize(dungeon, {}, { workers: 1 });
    const kept = spareBuffers().plain.filter((b) => b.byteLength === want.byteLength); // its words, once in the heap
    expect(kept.length).toBe(1);
    const second = await voxelize(dungeon, {}, { workers: 1 });
    expect(kept[0]!.byteLength).toBe(0); // it carried the second grid's words (transferred to the worker and back)
    for (const g of [first, second]) {
      expect(Buffer.from(g.occupancy().words.buffer).equals(Buffer.from(want.buffer))).toBe(true);
      g.dispose();
    }
  });

  it('inputs are copied unless transfer: true', async () => {
    const mine = copyMesh(dungeon);
    expect(await saved(bake(mine, {}))).toEqual(solo);
    expect(mine.positions.length).toBe(dungeon.positions.length); // still usable
    const given = copyMesh(dungeon);
    expect(await saved(bake(given, {}, { transfer: true }))).toEqual(solo);
    expect(given.positions.buffer.byteLength).toBe(0); // moved to the worker
    expect(given.indices.buffer.byteLength).toBe(0);
  });
});

describe('errors from workers', () => {
  it('arrive with their C code and message', async () => {
    const positions = dungeon.positions.slice();
    positions[3 * 5] = Infinity;
    const e1 = await rejection(bake({ positions, indices: dungeon.indices }, {}));
    expect(e1).toBeInstanceOf(NavBakeError);
    expect((e1 as NavBakeError).code).toBe('NB_ERR_NONFINITE');
    expect((e1 as NavBakeError).message).toMatch(/vertex 5/);
    const indices = dungeon.indices.slice();
    indices[7] = 1 << 30;
    const e2 = await rejection(bake({ positions: dungeon.positions, indices }, { tileSize: 32 }, { workers: 2 }));
    expect((e2 as NavBakeError).code).toBe('NB_ERR_INDEX_RANGE');
    expect((e2 as NavBakeError).message).toMatch(/triangle 2/);
    expect(await saved(bake(dungeon, {}))).toEqual(solo);
  });
});

// cellSize 0.035 makes dungeon.obj a bake of most of a second.
const slow: NavBakeConfig = { cellSize: 0.035, cellHeight: 0.025 };

describe('abort', () => {
  it('an aborted signal rejects at once with its reason', async () => {
    const e = await rejection(bake(dungeon, {}, { signal: AbortSignal.abort() }));
    expect((e as DOMException).name).toBe('AbortError');
  });

  it('rejects promptly with an AbortError, the worker is replaced and the pool carries on', async () => {
    for (const config of [slow, { ...slow, tileSize: 256 }]) {
      const ac = new AbortController();
      let abortedAt = 0;
      const after: BakeProgress[] = [];
      const started = performance.now();
      const e = await rejection(
        bake(dungeon, config, {
          workers: 2,
          signal: ac.signal,
          onProgress: (p) => {
            if (abortedAt) after.push(p);
            else {
              abortedAt = performance.now();
              ac.abort();
            }
          },
        }),
      );
      const rejectedAt = performance.now();
      expect(e).toBeInstanceOf(DOMException);
      expect((e as DOMException).name).toBe('AbortError');
      expect(abortedAt).toBeGreaterThan(started);
      expect(rejectedAt - abortedAt).toBeLessThan(250);
      expect(after).toEqual([]);
    }
    const reason = new Error('user left the level');
    const ac = new AbortController();
    const p = bake(dungeon, slow, { signal: ac.signal });
    setTimeout(() => ac.abort(reason), 20);
    expect(await rejection(p)).toBe(reason);
    expect(await saved(bake(dungeon, {}))).toEqual(solo);
  });
});

describe('a worker that dies', () => {
  it('rejects its job with NB_ERR_WORKER and the next bake succeeds', async () => {
    const seen: string[] = [];
    const e = await rejection(bake(dungeon, {}, { [EXIT_AT_STAGE]: 6, onProgress: (p) => seen.push(p.stage) } as BakeOptions));
    expect(e).toBeInstanceOf(NavBakeError);
    expect((e as NavBakeError).code).toBe('NB_ERR_WORKER');
    expect((e as NavBakeError).message).toMatch(/exited with code 70/);
    expect(seen).toContain('areas'); // it died mid-job, at the regions stage
    expect(seen).not.toContain('contours');
    expect(await saved(bake(dungeon, {}))).toEqual(solo);
    // in a tiled bake the dying worker is replaced and its tile baked again: the bake completes, same bytes
    const pool = sharedPool(() => wasmModule());
    const reference = await saved(bake(dungeon, { tileSize: 32 }, { workers: 3 })); // also: three live workers
    expect(pool.size).toBe(3);
    const before = pool.spawned;
    const tiles: string[] = [];
    const replaced = await saved(
      bake(dungeon, { tileSize: 32 }, { workers: 3, [EXIT_AT_STAGE]: 1, onTile: (t) => tiles.push(`${t.x},${t.z}`) } as BakeOptions),
    );
    expect(replaced).toEqual(reference);
    expect(reference).toEqual(await saved(bake(dungeon, { tileSize: 32 }, { workers: false })));
    expect(pool.spawned).toBeGreaterThan(before); // a fresh worker took the dead one's place
    expect(new Set(tiles).size).toBe(tiles.length); // the re-queued tile was added once
  });

  it('a pool whose workers cannot start rejects with NB_ERR_WORKER; terminate() rejects running work', async () => {
    const broken = new BakePool(() => Promise.reject(new Error('no wasm here')), 1);
    const w = await mainWasm();
    const req = {
      positions: dungeon.positions.slice(),
      indices: dungeon.indices.slice(),
      areas: null,
      config: configValues(w.fields, {}),
    };
    const e = await rejection(broken.run(req, []).promise);
    expect((e as NavBakeError).code).toBe('NB_ERR_WORKER');
    expect((e as NavBakeError).message).toMatch(/could not start.*no wasm here/);

    const pool = new BakePool(() => wasmModule(), 1);
    const running = pool.run({ ...req, config: configValues(w.fields, slow) }, []);
    const queued = pool.run(req, []);
    await new Promise((r) => setTimeout(r, 50));
    pool.terminate();
    expect(((await rejection(running.promise)) as NavBakeError).code).toBe('NB_ERR_WORKER');
    expect(((await rejection(queued.promise)) as NavBakeError).message).toMatch(/terminated/);
    expect(pool.size).toBe(0);
    const again = await pool.run(req, []).promise;
    expect(again.bytes).toEqual(solo);
    pool.terminate();
  });

  it('a worker whose wasm cannot be instantiated is dropped (it failed every later task), solo and tiled', async () => {
    // a module importing x.y, which no worker provides: instantiating it fails as a lack of memory would
    const unlinkable = new WebAssembly.Module(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 4, 1, 0x60, 0, 0, 2, 7, 1, 1, 0x78, 1, 0x79, 0, 0]));
    let good = false;
    const pool = new BakePool(async () => (good ? wasmModule() : unlinkable), 2);
    const w = await mainWasm();
    const req = { positions: dungeon.positions.slice(), indices: dungeon.indices.slice(), areas: null, config: configValues(w.fields, {}) };
    for (let i = 0; i < 3; i++) {
      const e = (await rejection(pool.run(req, []).promise)) as NavBakeError;
      expect(e.code).toBe('NB_ERR_WASM_LOAD');
      expect(e.message).toMatch(/its wasm module could not be instantiated \(.*\)/);
      expect(pool.size).toBe(0);
    }
    const spawned = pool.spawned;
    good = true; // memory is back: the next task gets a fresh worker, not the broken one
    expect((await pool.run(req, []).promise).bytes).toEqual(solo);
    expect(pool.spawned).toBe(spawned + 1);
    pool.terminate();
    // a tiled bake in the shared pool: sessions on workers that cannot load end in NB_ERR_WASM_LOAD, not a hang
    const shared = sharedPool(() => wasmModule());
    shared.terminate();
    const real = (shared as unknown as { wasm: () => Promise<WebAssembly.Module> }).wasm;
    (shared as unknown as { wasm: () => Promise<WebAssembly.Module> }).wasm = async () => unlinkable;
    try {
      const e = (await rejection(bake(dungeon, { tileSize: 32 }, { workers: 2 }))) as NavBakeError;
      expect(e.code).toBe('NB_ERR_WASM_LOAD');
      // a replacement that was starting is dropped as soon as it finds it cannot load, task or not
      for (let i = 0; i < 100 && shared.size > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(shared.size).toBe(0);
    } finally {
      (shared as unknown as { wasm: () => Promise<WebAssembly.Module> }).wasm = real;
    }
    expect(await saved(bake(dungeon, { tileSize: 32 }, { workers: 2 }))).toEqual(await saved(bake(dungeon, { tileSize: 32 }, { workers: false })));
  });

  it('a progress callback that throws fails the bake in a worker with its error, as on the calling thread', async () => {
    const boom = new Error('boom');
    const seen: string[] = [];
    const onProgress = (p: BakeProgress) => {
      seen.push(p.stage);
      if (p.stage === 'compact') throw boom;
    };
    await expect(bake(dungeon, {}, { workers: 1, onProgress })).rejects.toBe(boom); // it was swallowed: resolved
    expect(seen).not.toContain('contours'); // stopped there, not run to the end
    await expect(inspect(dungeon, {}, { workers: 1, onProgress: () => { throw boom; } })).rejects.toBe(boom);
    expect(await saved(bake(dungeon, {}, { workers: 1 }))).toEqual(solo); // the pool carries on
  });

  it('a request whose transfer list holds a detached buffer rejects, and the worker stays (Node would drop the message silently: a task waiting forever)', async () => {
    const w = await mainWasm();
    const positions = dungeon.positions.slice();
    structuredClone(positions.buffer, { transfer: [positions.buffer] }); // detach it
    const pool = new BakePool(() => wasmModule(), 1);
    const req = { positions, indices: dungeon.indices.slice(), areas: null, config: configValues(w.fields, {}) };
    const e = await rejection(pool.run(req, [positions.buffer]).promise);
    expect((e as NavBakeError).code).toBe('NB_ERR_INVALID_ARG');
    expect((e as NavBakeError).message).toMatch(/detached before the bake started/);
    expect(pool.size).toBe(1); // the worker did nothing wrong
    const again = await pool.run({ ...req, positions: dungeon.positions.slice() }, []).promise; // the pool carries on
    expect(again.bytes).toEqual(solo);
    pool.terminate();
  });

  it('an idle worker holding more wasm memory than retireBytes is stopped after retireAfterMs; the next task starts a fresh one', async () => {
    const w = await mainWasm();
    const req = { positions: dungeon.positions.slice(), indices: dungeon.indices.slice(), areas: null, config: configValues(w.fields, {}) };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const small = new BakePool(() => wasmModule(), 1); // default limit: a dungeon bake's 16 MB stays
    small.retireAfterMs = 30;
    await small.run(req, []).promise;
    await sleep(150);
    expect([small.size, small.retired]).toEqual([1, 0]);
    small.terminate();

    const pool = new BakePool(() => wasmModule(), 1);
    pool.retireBytes = 0; // every worker counts as big
    pool.retireAfterMs = 300;
    expect((await pool.run(req, []).promise).bytes).toEqual(solo);
    expect(pool.size).toBe(1);
    await sleep(20);
    expect((await pool.run(req, []).promise).bytes).toEqual(solo); // work within the delay keeps the worker
    expect([pool.spawned, pool.retired]).toEqual([1, 0]);
    await sleep(600);
    expect([pool.size, pool.retired]).toEqual([0, 1]);
    expect((await pool.run(req, []).promise).bytes).toEqual(solo);
    expect(pool.spawned).toBe(2);

    // a lease's worker, once released
    const lease = await pool.lease({ reply: () => undefined, died: () => undefined }).promise;
    lease.release();
    await sleep(600);
    expect([pool.size, pool.retired]).toEqual([0, 2]);
    pool.terminate();
  });

  it('idle workers beyond keepIdle are stopped after retireAfterMs, whatever their memory (a workers: 64 bake left 64)', async () => {
    const w = await mainWasm();
    const quad = new Float32Array([0, 0, 0, 0, 0, 10, 10, 0, 10, 10, 0, 0]);
    const req = { positions: quad, indices: new Uint32Array([0, 1, 2, 0, 2, 3]), areas: null, config: configValues(w.fields, {}) };
    const pool = new BakePool(() => wasmModule(), 3);
    expect(pool.keepIdle).toBe(availableParallelism());
    pool.keepIdle = 1;
    // long enough that no worker retires before the three bakes are all done, on a loaded machine too
    pool.retireAfterMs = 1000;
    await Promise.all([0, 1, 2].map(() => pool.run({ ...req, positions: quad.slice() }, []).promise));
    expect(pool.size).toBe(3);
    for (let i = 0; i < 250 && pool.size > 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect([pool.size, pool.retired]).toEqual([1, 2]);
    await new Promise((r) => setTimeout(r, 300));
    expect(pool.size).toBe(1); // the one kept stays
    pool.terminate();
  });
});

describe('handleMessage (the worker body, without a worker)', () => {
  let w: Wasm;
  beforeAll(async () => {
    w = await instantiate(await wasmModule());
  });

  function run(msg: Partial<BakeRequest>): WorkerReply[] {
    const replies: WorkerReply[] = [];
    const req = {
      id: 7,
      type: 'bake',
      positions: dungeon.positions,
      indices: dungeon.indices,
      areas: null,
      config: configValues(w.fields, {}),
      ...msg,
    } as BakeRequest;
    handleMessage(req, w, (r) => replies.push(r));
    return replies;
  }

  it('a solo bake, inspect and voxelize hand the geometry buffers back with the result (transferred, each once)', () => {
    const positions = dungeon.positions.slice();
    const indices = dungeon.indices.slice();
    const areas = new Uint8Array(indices.length / 3).fill(63);
    const base = { id: 9, positions, indices, areas, config: configValues(w.fields, {}) };
    for (const msg of [
      { ...base, type: 'bake', volumes: null, links: null },
      { ...base, type: 'inspect', volumes: null, tile: null },
      { ...base, type: 'voxelize', headroom: 10, fill: null },
    ]) {
      let result: { reply: WorkerReply; transfer: ArrayBuffer[] } | null = null;
      handleMessage(msg as unknown as WorkerRequest, w, (reply, transfer) => {
        if (reply.type !== 'progress') result = { reply, transfer: transfer ?? [] };
      });
      const { reply, transfer } = result!;
      expect(reply.type, msg.type).toBe('result');
      const spare = reply.type === 'result' ? reply.spare : undefined;
      expect(spare, msg.type).toEqual([positions.buffer, indices.buffer, areas.buffer]);
      for (const b of spare!) expect(transfer.filter((t) => t === b).length, msg.type).toBe(1);
    }
  });

  it('voxelize puts the words in the buffer sent along when it holds them, and hands it back when not', () => {
    const req = { id: 4, type: 'voxelize', positions: dungeon.positions, indices: dungeon.indices, areas: null, config: configValues(w.fields, {}), headroom: 10, fill: null };
    const result = (out: ArrayBuffer | null) => {
      let got: { reply: WorkerReply; transfer: ArrayBuffer[] } | null = null;
      handleMessage({ ...req, out } as unknown as WorkerRequest, w, (reply, transfer) => {
        if (reply.type !== 'progress') got = { reply, transfer: transfer ?? [] };
      });
      const { reply, transfer } = got!;
      if (reply.type !== 'result' || !reply.voxels) throw new Error(`no voxels: ${JSON.stringify(reply)}`);
      return { words: reply.voxels.words, spare: reply.spare ?? [], transfer };
    };
    const fresh = result(null);
    const bytes = fresh.words.byteLength;
    const big = new ArrayBuffer(bytes + 4096);
    const into = result(big);
    expect(into.words.buffer).toBe(big); // the words at its start
    expect(into.words.length).toBe(fresh.words.length);
    expect(Buffer.from(into.words.buffer, 0, bytes).equals(Buffer.from(fresh.words.buffer, fresh.words.byteOffset, bytes))).toBe(true);
    expect(into.transfer.filter((b) => b === big).length).toBe(1);
    const small = new ArrayBuffer(bytes - 4);
    const back = result(small);
    expect(back.words.buffer).not.toBe(small);
    expect(back.spare).toContain(small); // unused, handed back
    expect(back.transfer.filter((b) => b === small).length).toBe(1);
  });

  it('a solo bake: progress per stage, then the saved navmesh', () => {
    const replies = run({});
    const last = replies[replies.length - 1];
    expect(last.type).toBe('result');
    expect(last.id).toBe(7);
    expect(last.type === 'result' && last.bytes).toEqual(solo);
    const progress = replies.filter((r) => r.type === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(STAGES.length);
    expect(new Set(progress.map((r) => r.type === 'progress' && r.stage)).size).toBe(STAGES.length);
  });

  it('a tiled-bake session: open (the tiles with geometry), tile jobs, close (the wasm memory back)', async () => {
    const config = configValues(w.fields, { tileSize: 32 });
    const replies: WorkerReply[] = [];
    const send = (msg: Partial<WorkerRequest>) => handleMessage({ id: 9, ...msg } as WorkerRequest, w, (r) => replies.push(r));
    const heap = w.heapUsed();
    send({ type: 'open', positions: dungeon.positions, indices: dungeon.indices, areas: null, volumes: null, links: null, config, caches: false });
    const opened = replies.pop()!;
    expect(opened.type).toBe('opened');
    const tiles = opened.type === 'opened' ? opened.tiles : new Int32Array();
    // dungeon: 74 x 99 world units in tiles of 32 x 0.3 = 9.6: 8 x 11, of which those with geometry
    expect(tiles.length / 2).toBeGreaterThan(20);
    expect(tiles.length / 2).toBeLessThan(88); // the empty ones are not listed
    const whole = await bake(dungeon, { tileSize: 32 }, { workers: false });
    const expected = new Map(whole.tiles().map((t) => [`${t.x},${t.z}`, whole.saveTile(t.x, t.z)]));
    let withPolygons = 0;
    for (let i = 0; i < tiles.length; i += 2) {
      send({ type: 'tile', x: tiles[i], z: tiles[i + 1] });
      const r = replies.pop()!;
      expect(r).toMatchObject({ id: 9, type: 'tile', x: tiles[i], z: tiles[i + 1], cache: null });
      const bytes = r.type === 'tile' ? r.bytes : null;
      if (bytes) withPolygons++;
      expect(bytes).toEqual(expected.get(`${tiles[i]},${tiles[i + 1]}`) ?? null); // byte for byte as the C bake
    }
    expect(withPolygons).toBe(whole.tileCount); // every tile with polygons was in the list
    whole.dispose();
    send({ type: 'tile', x: 99, z: 99 });
    expect(replies.pop()).toMatchObject({ type: 'error', code: 'NB_ERR_INVALID_ARG', message: expect.stringMatching(/outside/) });
    send({ type: 'close' });
    expect(replies).toEqual([]); // no reply to close
    expect(w.heapUsed()).toBe(heap); // the session's geometry and index are freed
    send({ type: 'tile', x: 0, z: 0 });
    expect(replies.pop()).toMatchObject({ type: 'error', code: 'NB_ERR_INVALID_ARG', message: expect.stringMatching(/no session/) });
  });

  it('bad input and unknown messages become error replies; the test hook throws', () => {
    const nan = dungeon.positions.slice();
    nan[0] = NaN;
    expect(run({ positions: nan })).toEqual([
      { id: 7, type: 'error', code: 'NB_ERR_NONFINITE', message: expect.stringMatching(/vertex 0/) },
    ]);
    expect(run({ type: 'resize' as 'bake' })[0]).toMatchObject({ type: 'error', code: 'NB_ERR_INVALID_ARG' });
    expect(() => run({ testExitAtStage: 1 })).toThrow(WorkerExitRequest);
    // the instance survives all of it
    const replies = run({});
    expect(replies[replies.length - 1]).toMatchObject({ type: 'result', bytes: solo });
  });
});
