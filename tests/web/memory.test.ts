// No growth: bakes (solo, tiled sessions, obstacles and their rebuilds), streaming and failures all give back
// every byte of the wasm heap once their navmesh is disposed (nbw_heap_used: emmalloc's bytes in use).
// It reaches inside the package, so it imports the unbundled modules (build/web, what web/dist is bundled from).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, NavBakeError, NavMesh, PATH_STATUS, terminateWorkers, voxelize, VoxelGrid } from '../../build/web/index.js';
import { handleMessage } from '../../build/web/bake.worker.js';
import { configValues } from '../../build/web/config.js';
import type { WorkerReply, WorkerRequest } from '../../build/web/protocol.js';
import { mainWasm, wasmModule } from '../../build/web/runtime.js';
import { instantiate } from '../../build/web/wasm.js';
import { spareBuffers } from '../../build/web/spare.js';
import { loadMesh, type Mesh } from './helpers';

let dungeon: Mesh;

beforeAll(() => {
  dungeon = loadMesh('dungeon.obj');
});

afterAll(() => terminateWorkers());

const volumes = [{ type: 'box' as const, min: [20, -5, -40], max: [30, 20, -30], area: 5 }];
const links = [{ start: [36.5, 10.2, 5.7], end: [38, 10.2, 7], radius: 0.6, bidirectional: true }];

/** One round of everything the main thread's wasm does. */
async function round(i: number): Promise<void> {
  const solo = await bake({ ...dungeon, volumes, links }, {}, { workers: false });
  solo.findPath([36.5, 10.2, 5.7], [26.2, 15.5, -83.3], { filter: { areaCost: { 5: 3 } } });
  solo.dispose();

  const tiled = await bake({ ...dungeon, volumes, links }, { tileSize: 32 }, { workers: false, obstacles: true, focus: [i, 0, -i] });
  const id = tiled.addObstacle({ type: 'cylinder', center: [30, 8, -20], radius: 2, height: 5 });
  await tiled.update({ workers: false });
  tiled.updateObstacle(id, { type: 'box', min: [30, 0, -30], max: [33, 20, -27] });
  await tiled.update({ workers: false });
  const file = tiled.save();
  tiled.dispose();

  const { params, tiles } = NavMesh.readTiles(file);
  const streamed = await NavMesh.create(params);
  for (const t of tiles) streamed.loadTile(t.bytes);
  streamed.loadTile(tiles[0].bytes); // a replacement
  streamed.removeTile(tiles[1].x, tiles[1].z);
  streamed.saveTile(tiles[2].x, tiles[2].z);
  expect(() => streamed.loadTile(tiles[3].bytes.subarray(0, 40))).toThrow();
  streamed.randomPoint();
  streamed.dispose();

  // failures on the way free what they took
  const nan = dungeon.positions.slice();
  nan[30] = NaN;
  await expect(bake({ positions: nan, indices: dungeon.indices }, { tileSize: 32 }, { workers: false })).rejects.toThrow();
  // a solo bake on this thread puts the triangles in the heap at the call: every way out after that frees them
  await expect(bake({ positions: nan, indices: dungeon.indices }, {}, { workers: false })).rejects.toThrow(/non-finite/);
  await expect(bake(dungeon, { cellSize: -1 }, { workers: false })).rejects.toThrow(/cellSize/);
  await expect(bake(dungeon, {}, { workers: false, obstacles: true })).rejects.toThrow(/tileSize/);
  await expect(bake(dungeon, {}, { workers: false, focus: [0, 0] as unknown as [number, number, number] })).rejects.toThrow(/focus/);
  const stop = new AbortController();
  const aborted = bake(dungeon, {}, { workers: false, signal: stop.signal });
  stop.abort(); // while it waits for the config: rejects with the signal's reason
  await expect(aborted).rejects.toThrow(/abort/i);
  const late = new AbortController();
  const onProgress = (p: { stage: string }) => {
    if (p.stage === 'regions') late.abort();
  };
  await expect(bake(dungeon, {}, { workers: false, signal: late.signal, onProgress })).rejects.toThrow(/abort/i);
  const ac = new AbortController();
  await expect(
    bake(dungeon, { tileSize: 32 }, { workers: false, signal: ac.signal, onTile: () => ac.abort() }),
  ).rejects.toThrow();
}

describe('memory', () => {
  it('20 rounds of bake / update / stream / dispose on the main thread: the heap in use comes back', async () => {
    const w = await mainWasm();
    await round(0); // first use: lazily made scratch, the status name cache
    const start = w.heapUsed();
    expect(start).toBeGreaterThan(0);
    for (let i = 1; i <= 20; i++) {
      await round(i);
      expect(w.heapUsed(), `after round ${i}`).toBe(start);
    }
  });

  it('solo bakes called together on the main thread hold one copy of the triangles in its heap while they wait', async () => {
    const w = await mainWasm();
    (await bake(dungeon, {}, { workers: false })).dispose(); // the module loaded, its scratch made
    const start = w.heapUsed();
    const geometryBytes = dungeon.positions.byteLength + dungeon.indices.byteLength;
    const pending = [0, 1, 2, 3, 4].map(() => bake(dungeon, {}, { workers: false }));
    const waiting = w.heapUsed() - start; // every call has returned; none has baked yet
    expect(waiting).toBeGreaterThanOrEqual(geometryBytes); // the first one's, straight in the heap
    expect(waiting).toBeLessThan(2 * geometryBytes); // the others' in arrays of their own (wasm memory never shrinks)
    const navs = await Promise.all(pending);
    const bytes = navs[0]!.save();
    for (const nav of navs) {
      expect(Buffer.from(nav.save()).equals(Buffer.from(bytes))).toBe(true);
      nav.dispose();
    }
    expect(w.heapUsed()).toBe(start);
  });

  it('NavMesh.load copies the bytes at the call into memory kept from the load before', async () => {
    const file = (await bake(dungeon, {}, { workers: false })).save();
    const a = await NavMesh.load(file);
    const kept = spareBuffers().plain.filter((b) => b.byteLength === file.byteLength);
    expect(kept.length).toBe(1); // its copy, once read into the heap
    const pending = NavMesh.load(file);
    expect(spareBuffers().plain).not.toContain(kept[0]); // taken by the copy at the call
    const b = await pending;
    expect(spareBuffers().plain).toContain(kept[0]); // and kept again
    expect(Buffer.from(b.save()).equals(Buffer.from(file))).toBe(true);
    a.dispose();
    b.dispose();
  });

  it('worker sessions and rebuilds: the worker heap comes back after each close', async () => {
    const w = await instantiate(await wasmModule());
    const config = configValues(w.fields, { tileSize: 32 });
    const replies: WorkerReply[] = [];
    const send = (msg: Partial<WorkerRequest>) => handleMessage({ id: 3, ...msg } as WorkerRequest, w, (r) => replies.push(r));
    const start = w.heapUsed();
    let cache: Uint8Array | null = null;
    for (let i = 0; i < 20; i++) {
      send({ type: 'open', positions: dungeon.positions, indices: dungeon.indices, areas: null, volumes: null, links: null, config, caches: true });
      const opened = replies.pop()!;
      expect(opened.type).toBe('opened');
      const tiles = opened.type === 'opened' ? opened.tiles : new Int32Array();
      for (let t = 0; t < 12; t += 2) {
        send({ type: 'tile', x: tiles[t], z: tiles[t + 1] });
        const r = replies.pop()!;
        expect(r.type).toBe('tile');
        if (r.type === 'tile' && r.cache) cache = r.cache;
      }
      send({ type: 'close' });
      expect(w.heapUsed(), `after session ${i}`).toBe(start);
      send({ type: 'rebuild', config, cache: cache!, links: null, obstacles: [] });
      expect(replies.pop()!.type).toBe('result');
      expect(w.heapUsed(), `after rebuild ${i}`).toBe(start);
    }
  });

  it('NavMesh.load of 64 MB that is no navmesh leaves the wasm memory as it was: refused from its header alone', async () => {
    const w = await mainWasm();
    await expect(NavMesh.load(new Uint8Array(16))).rejects.toThrow(/bad magic/); // the module loaded, its memory settled
    const before = w.memoryBytes();
    await expect(NavMesh.load(new Uint8Array(64 << 20).fill(0x41))).rejects.toThrow(/nb_navmesh_load: bad magic 0x41414141/);
    // a navmesh's header with a byte of it changed: its checksum says so
    const nav = await bake(dungeon, {}, { workers: false });
    const file = new Uint8Array(64 << 20);
    file.set(nav.save());
    nav.dispose();
    file[30] ^= 1;
    await expect(NavMesh.load(file)).rejects.toThrow(/nb_navmesh_load: header crc mismatch/);
    expect(w.memoryBytes()).toBe(before); // was 64 MB more: the whole input copied into the heap first
  });

  it('a findPaths batch far larger than its chunk grows the wasm memory by a chunk at most, with the same answers', async () => {
    const w = await mainWasm();
    const nav = await bake(dungeon, {}, { workers: false });
    try {
      nav.seedRandom(5);
      const pts = Array.from({ length: 1000 }, () => nav.randomPoint()!);
      const n = 250_000; // all at once: 8 MB of pairs and 48 MB of point buffer
      const pairs = new Float32Array(n * 6);
      for (let i = 0; i < n; i++) {
        pairs.set(pts[i % 1000], i * 6);
        pairs.set(pts[(i * 7 + 3) % 1000], i * 6 + 3);
      }
      nav.findPaths(pairs.subarray(0, 6)); // first use: lazily made scratch
      const before = w.memoryBytes();
      const batch = nav.findPaths(pairs, { crossings: 'area' });
      expect(w.memoryBytes() - before).toBeLessThanOrEqual(4 << 20);
      expect(batch.status.length).toBe(n);
      expect(batch.offsets[n] * 3).toBe(batch.points.length);
      // pairs on both sides of the chunk boundaries (4096 pairs) and the last ones
      for (const i of [0, 4095, 4096, 4097, 8191, 8192, 123_456, n - 2, n - 1]) {
        const one = nav.findPath(pairs.subarray(i * 6, i * 6 + 3), pairs.subarray(i * 6 + 3, i * 6 + 6), { crossings: 'area' });
        expect(PATH_STATUS[batch.status[i]], `pair ${i}`).toBe(one.status);
        expect(batch.lengths[i]).toBe(one.length);
        expect(batch.points.subarray(batch.offsets[i] * 3, batch.offsets[i + 1] * 3)).toEqual(one.points);
      }
      expect(new Set(batch.status).size).toBeGreaterThan(1); // reachable and unreachable pairs both occur
    } finally {
      nav.dispose();
    }
  });

  it('wasm memory run out while VoxelGrids are not disposed: the error says how much they hold', async () => {
    const w = await mainWasm();
    const kept = [await voxelize(dungeon, {}, { workers: false }), await voxelize(dungeon, {}, { workers: false })];
    const bytes = kept.reduce((n, g) => n + g.occupancy().words.byteLength, 0);
    // most of the 2 GB taken (never touched: cheap), so that the next grid's words do not fit
    const blocks: number[] = [];
    for (let p = w.m._malloc(256 << 20); p; p = w.m._malloc(256 << 20)) blocks.push(p);
    for (let p = w.m._malloc(16 << 20); p; p = w.m._malloc(16 << 20)) blocks.push(p);
    try {
      const grown = await voxelize(dungeon, { cellSize: 0.1, cellHeight: 0.1 }, { workers: false }).then(
        () => null,
        (e) => e,
      );
      expect(grown).toBeInstanceOf(NavBakeError);
      expect((grown as NavBakeError).code).toBe('NB_ERR_OUT_OF_MEMORY');
      expect((grown as Error).message).toContain(`(2 VoxelGrids not disposed hold ${(bytes / 2 ** 20).toFixed(1)} MB of this wasm memory`);
      const words = new Uint32Array(8 << 20); // 32 MB
      const made = await VoxelGrid.create({ words, dims: [1024, 1024, 256], origin: [0, 0, 0], cellSize: 1, cellHeight: 1 }).then(
        () => null,
        (e) => e,
      );
      expect((made as NavBakeError).code).toBe('NB_ERR_OUT_OF_MEMORY');
      expect((made as Error).message).toContain('2 VoxelGrids not disposed');
      kept.pop()!.dispose();
      const one = await VoxelGrid.create({ words, dims: [1024, 1024, 256], origin: [0, 0, 0], cellSize: 1, cellHeight: 1 }).then(
        () => null,
        (e) => e,
      );
      expect((one as Error).message).toContain('(1 VoxelGrid not disposed hold');
    } finally {
      for (const p of blocks) w.m._free(p);
      for (const g of kept) g.dispose();
    }
  });
});
