// Arguments are read when a call is made: a caller that reuses its arrays, config or options right after calling
// (while the module loads, or while the bake waits for a worker) cannot change or break what it asked for. And
// work queued behind other work answers an abort or a dispose at once, not when its turn comes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, inspect, NavBakeError, NavMesh, terminateWorkers, voxelize, VoxelGrid } from '../../web/dist/index.js';
import { loadMesh, type Mesh } from './helpers';

let dungeon: Mesh;

beforeAll(() => {
  dungeon = loadMesh('dungeon.obj');
});

afterAll(() => terminateWorkers());

/** The level's own arrays (the caller's, to spoil after the call). */
const fresh = () => ({ positions: dungeon.positions.slice(), indices: dungeon.indices.slice() });

/** What a caller reusing its scratch arrays does right after the call: other triangles, other settings. */
function spoil(g: { positions: Float32Array; indices: Uint32Array }, config?: Record<string, unknown>): void {
  for (let i = 1; i < g.positions.length; i += 3) g.positions[i] += 7.5;
  g.indices.fill(0, 0, g.indices.length >> 1);
  if (config) {
    config.tileSize = 0;
    config.agentRadius = 2;
  }
}

async function expectCode(p: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(NavBakeError);
  expect((e as NavBakeError).code, (e as Error).message).toBe(code);
  if (message) expect((e as Error).message).toMatch(message);
}

describe('arguments are read at the call', () => {
  for (const [name, config, workers] of [
    ['solo, on this thread', {}, false],
    ['solo, in a worker', {}, 1],
    ['tiled, in workers', { tileSize: 32 }, 2],
    ['tiled, on this thread', { tileSize: 32 }, false],
  ] as const) {
    it(`bake (${name}): the same bytes as a bake of the untouched level`, async () => {
      const expected = (await bake(fresh(), { ...config }, { workers: false })).save();
      const g = fresh();
      const cfg: Record<string, unknown> = { ...config };
      const opts: Record<string, unknown> = { workers };
      const pending = bake(g, cfg, opts);
      spoil(g, cfg);
      opts.workers = 'many'; // (an option changed after the call changes nothing either)
      const nav = await pending;
      expect(Buffer.from(nav.save()).equals(Buffer.from(expected))).toBe(true);
      nav.dispose();
    });
  }

  it('bake: queued behind busy workers, a tiled bake still bakes what it was given', async () => {
    const expected = (await bake(fresh(), { tileSize: 32 }, { workers: false })).save();
    const busy = [bake(fresh(), { tileSize: 16 }, { workers: 1 }), bake(fresh(), {}, { workers: 1 })];
    const g = fresh();
    const pending = bake(g, { tileSize: 32 }, { workers: 1 });
    await new Promise((r) => setTimeout(r, 20)); // its session waits for the busy worker
    spoil(g);
    const nav = await pending;
    expect(Buffer.from(nav.save()).equals(Buffer.from(expected))).toBe(true);
    for (const b of await Promise.all(busy)) b.dispose();
    nav.dispose();
  });

  it('inspect and voxelize take the level as it was', async () => {
    const before = await inspect(fresh(), {}, { workers: false });
    const g = fresh();
    const pending = inspect(g, {}, { workers: false });
    spoil(g);
    const after = await pending;
    expect(after.counts).toEqual(before.counts);
    expect(after.regionCount).toBe(before.regionCount);
    expect(Buffer.from(after.spans.region.buffer).equals(Buffer.from(before.spans.region.buffer))).toBe(true);

    const grid = await voxelize(fresh(), {}, { workers: false });
    for (const workers of [false, 1] as const) {
      const v = fresh();
      const p = voxelize(v, {}, { workers });
      spoil(v);
      const got = await p;
      expect(got.dims).toEqual(grid.dims);
      expect(Buffer.from(got.occupancy().words.buffer).equals(Buffer.from(grid.occupancy().words.buffer))).toBe(true);
      got.dispose();
    }
    grid.dispose();
  });

  it('NavMesh.load, NavMesh.create and VoxelGrid.create copy what they check', async () => {
    const nav = await bake(fresh(), {}, { workers: false });
    const bytes = nav.save();
    const pending = NavMesh.load(bytes);
    bytes.fill(0);
    const loaded = await pending;
    expect(Buffer.from(loaded.save()).equals(Buffer.from(nav.save()))).toBe(true);

    const params = { ...nav.params, origin: [...nav.params.origin], maxTiles: 4 };
    const created = NavMesh.create(params);
    params.maxTiles = 1e9;
    params.origin[0] = NaN;
    expect((await created).params.maxTiles).toBe(4);

    // A grid's dims are what was checked against its words: changing them after the call cannot make the grid
    // read past its words (it did: occupancy() returned other heap memory).
    const grid = await voxelize(fresh(), {}, { workers: false });
    const data = grid.occupancy();
    const dims = [...data.dims];
    const arg = { ...data, dims: [...data.dims] as [number, number, number], words: data.words.slice() };
    const copy = VoxelGrid.create(arg);
    arg.dims[0] = 4096;
    arg.dims[2] = 4096;
    arg.cellSize = -1;
    arg.words.fill(0);
    const made = await copy;
    expect(made.dims).toEqual(dims);
    expect(made.cellSize).toBe(data.cellSize);
    expect(made.occupancy().words.length).toBe(data.words.length);
    expect(Buffer.from(made.occupancy().words.buffer).equals(Buffer.from(data.words.buffer))).toBe(true);
    // detached after the check: a NavBakeError, never a TypeError
    const words = data.words.slice();
    structuredClone(words.buffer, { transfer: [words.buffer] });
    await expectCode(VoxelGrid.create({ ...data, words }), 'NB_ERR_INVALID_ARG', /words .*detached/);
    for (const g of [made, grid]) g.dispose();
    for (const n of [nav, loaded]) n.dispose();
  });

  it("bake's focus and inspect's tile: the place asked for, though the caller's point moves on", async () => {
    // focus orders the tiles, and with them the navmesh in memory (refs, polygons() order): a player's position
    // passed as focus moves on while the bake waits for its config; the bake orders by where it was.
    const here = { x: 60, y: 0, z: 30 };
    const there = { x: -28, y: 0, z: -46 };
    const refsFor = async (focus: { x: number; y: number; z: number }, move?: () => void): Promise<number[]> => {
      const pending = bake(fresh(), { tileSize: 32 }, { workers: false, focus });
      move?.();
      const nav = await pending;
      const refs = nav.polygons().map((p) => p.ref);
      nav.dispose();
      return refs;
    };
    const atHere = await refsFor({ ...here });
    expect(await refsFor({ ...there })).not.toEqual(atHere); // the focus matters
    const moving = { ...here };
    expect(await refsFor(moving, () => Object.assign(moving, there))).toEqual(atHere);

    const tile: [number, number] = [4, 1];
    const expected = await inspect(fresh(), { tileSize: 32 }, { workers: false, tile: [4, 1] });
    const other = await inspect(fresh(), { tileSize: 32 }, { workers: false, tile: [3, 0] });
    expect(other.counts).not.toEqual(expected.counts);
    const pending = inspect(fresh(), { tileSize: 32 }, { workers: false, tile });
    tile[0] = 3;
    tile[1] = 0;
    const got = await pending;
    expect(got.counts).toEqual(expected.counts);
    expect(Buffer.from(got.spans.region.buffer).equals(Buffer.from(expected.spans.region.buffer))).toBe(true);
  });

  it("update(): its options are read at the call", async () => {
    const box = { type: 'box' as const, min: [0, -1, -40] as const, max: [8, 50, -30] as const };
    // A signal taken off the options object after the call still aborts the update: nothing is swapped in.
    const nav = await bake(fresh(), { tileSize: 32 }, { workers: 2, obstacles: true });
    nav.addObstacle({ ...box, min: [...box.min], max: [...box.max] });
    const pendingBefore = nav.pendingTiles;
    expect(pendingBefore).toBeGreaterThan(0);
    const before = nav.save();
    const ac = new AbortController();
    const opts: Record<string, unknown> = { signal: ac.signal };
    const aborted = nav.update(opts);
    delete opts.signal;
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ name: 'AbortError' });
    await new Promise((r) => setTimeout(r, 300)); // the workers' rebuilds would have come back by now
    expect(nav.pendingTiles).toBe(pendingBefore);
    expect(Buffer.from(nav.save()).equals(Buffer.from(before))).toBe(true);

    // workers changed to a value the pool cannot use after the call: the update and other work still run.
    terminateWorkers(); // no idle worker: this update starts the pool's workers
    const o: Record<string, unknown> = { workers: 2 };
    const updated = nav.update(o);
    o.workers = NaN;
    const other = bake(fresh(), {}, { workers: 1 });
    const result = await updated;
    expect(result.tiles.length).toBe(pendingBefore);
    expect(nav.pendingTiles).toBe(0);
    (await other).dispose();
    nav.dispose();
  });

  it('inspect checks geometry.links as bake does (they change no stage it shows)', async () => {
    for (const links of [5, [null]]) {
      await expectCode(bake({ ...fresh(), links } as never, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /navbake\.bake: geometry\.links/);
      await expectCode(inspect({ ...fresh(), links } as never, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /navbake\.inspect: geometry\.links/);
    }
  });

  it('a misspelt geometry field is refused by name, not ignored', async () => {
    const g = { ...fresh(), volume: [{ type: 'box', min: [0, 0, 0], max: [1, 1, 1] }] };
    await expectCode(bake(g as never, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /geometry has no field 'volume' \(its fields: positions, indices, areas, volumes, links\)/);
    await expectCode(inspect({ ...fresh(), area: [] } as never), 'NB_ERR_INVALID_ARG', /navbake\.inspect: geometry has no field 'area'/);
  });
});

describe('queued work answers at once', () => {
  it('a bake handed over with transfer whose buffer is taken before its turn: NB_ERR_INVALID_ARG, the pool goes on', async () => {
    const busy = bake(fresh(), {}, { workers: 1 });
    const g = fresh();
    const pending = bake(g, {}, { workers: 1, transfer: true });
    structuredClone(g.positions.buffer, { transfer: [g.positions.buffer] }); // the caller gives it away elsewhere
    await expectCode(pending, 'NB_ERR_INVALID_ARG', /detached before the bake started/);
    (await busy).dispose();
    const after = await bake(fresh(), {}, { workers: 1 });
    expect(after.tileCount).toBe(1);
    after.dispose();
  });

  it('a tiled bake handed over with transfer whose buffer is taken after the call: NB_ERR_INVALID_ARG saying so', async () => {
    for (const workers of [false, 2] as const) {
      const g = fresh();
      const pending = bake(g, { tileSize: 32 }, { workers, transfer: true });
      structuredClone(g.indices.buffer, { transfer: [g.indices.buffer] });
      await expectCode(pending, 'NB_ERR_INVALID_ARG', /detached before the bake started/);
    }
  });

  it('arrays handed over that share one buffer go to the worker once: the bake answers as for copies', async () => {
    // positions and indices as views of one whole buffer (here the same bytes: the triangles are degenerate)
    const buffer = new ArrayBuffer(36);
    new Float32Array(buffer).set([0, 0, 0, 1, 0, 0, 0, 0, 1]);
    const failure = (p: Promise<unknown>) => p.then(() => null, (err: unknown) => err);
    const copied = await failure(bake({ positions: new Float32Array(buffer.slice(0)), indices: new Uint32Array(buffer.slice(0)) }, {}, { workers: 1 }));
    const shared = await failure(bake({ positions: new Float32Array(buffer), indices: new Uint32Array(buffer) }, {}, { workers: 1, transfer: true }));
    expect(copied).toBeInstanceOf(NavBakeError);
    expect(shared).toBeInstanceOf(NavBakeError);
    expect((shared as NavBakeError).code).not.toBe('NB_ERR_WORKER');
    expect([(shared as NavBakeError).code, (shared as Error).message]).toEqual([(copied as NavBakeError).code, (copied as Error).message]);
  });

  it('an update() aborted while another runs rejects then, and its tiles stay pending', async () => {
    const nav = await bake(fresh(), { tileSize: 16 }, { workers: 1, obstacles: true });
    const events: string[] = [];
    // the first update rebuilds most tiles; the second waits for it
    nav.addObstacle({ type: 'box', min: [-100, -10, -100], max: [100, 20, 100] });
    const first = nav.update().then(() => events.push('first'));
    nav.addObstacle({ type: 'box', min: [0, 0, 0], max: [1, 1, 1] });
    const ac = new AbortController();
    const reason = new Error('not now');
    const second = nav.update({ signal: ac.signal }).then(
      () => events.push('second resolved'),
      (e) => events.push(e === reason ? 'second aborted' : `second: ${e}`),
    );
    ac.abort(reason);
    await Promise.all([first, second]);
    expect(events).toEqual(['second aborted', 'first']);
    expect(nav.pendingTiles).toBeGreaterThan(0);
    await nav.update();
    expect(nav.pendingTiles).toBe(0);
    nav.dispose();
  });

  it('a navmesh disposed in the last onTile: the bake rejects with NB_ERR_DISPOSED, as for any earlier tile', async () => {
    for (const workers of [false, 2] as const) {
      const pending = bake(fresh(), { tileSize: 32 }, { workers, onTile: (e) => e.done === e.total && e.navMesh.dispose() });
      await expectCode(pending, 'NB_ERR_DISPOSED', /disposed/);
    }
  });

  it('disposing a grid rejects its searches still waiting, at once; the VoxelGrid is gone like a NavMesh', async () => {
    const nav = await bake(fresh(), {}, { workers: false });
    const grid = await voxelize(fresh(), {}, { workers: false });
    const other = await VoxelGrid.create(grid.occupancy());
    const a = nav.randomPoint({ seed: 19 })!;
    const b = nav.randomPoint({ seed: 519 })!;
    const events: string[] = [];
    const running = grid.findPathAsync(a, b, { move: 'fly', agentHeight: 1, maxNodes: 1 << 20, sliceMs: 0.5 }).then(() => events.push('running'));
    const waiting = other.findPathAsync(a, b).then(
      () => events.push('waiting resolved'),
      (e) => events.push(`waiting ${(e as NavBakeError).code}`),
    );
    other.dispose();
    await Promise.all([running, waiting]);
    expect(events).toEqual(['waiting NB_ERR_DISPOSED', 'running']);
    for (const get of [() => other.dims, () => other.origin, () => other.cellSize, () => other.cellHeight]) {
      expect(get).toThrow(/disposed/);
    }
    expect(other.disposed).toBe(true);
    grid.dispose();
    nav.dispose();
  });
});

// A Node Buffer is a Uint8Array whose slice() is a view, not a copy, often of Node's shared pool (unrelated small
// Buffers live in the same ArrayBuffer): what the library copies from one must be a real copy.
describe("a Node Buffer is copied, never written or handed away", () => {
  it('NavMesh.load: the caller\'s Buffer and its pool neighbours stay as they were, whatever loads next', async () => {
    const solo = await bake(fresh(), {}, { workers: false });
    const tiled = await bake(fresh(), { tileSize: 32 }, { workers: false });
    const soloBytes = solo.save();
    const tiledBytes = tiled.save();
    solo.dispose();
    tiled.dispose();
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(`${w.code}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      // Both Buffers sliced out of one pool, with a neighbour between them.
      const pool = new ArrayBuffer(tiledBytes.length + soloBytes.length + 64);
      const a = Buffer.from(pool, 0, tiledBytes.length);
      a.set(tiledBytes);
      const neighbour = Buffer.from(pool, tiledBytes.length, 32).fill(0x5a);
      const b = Buffer.from(pool, tiledBytes.length + 32, soloBytes.length);
      b.set(soloBytes);
      const first = await NavMesh.load(a);
      const second = await NavMesh.load(b); // a copy of b written where a's copy went, were a's "copy" a's memory
      expect(Buffer.compare(a, Buffer.from(tiledBytes))).toBe(0);
      expect(Buffer.compare(b, Buffer.from(soloBytes))).toBe(0);
      expect([...neighbour].every((x) => x === 0x5a)).toBe(true);
      expect(Buffer.from(first.save()).equals(Buffer.from(tiledBytes))).toBe(true);
      expect(Buffer.from(second.save()).equals(Buffer.from(soloBytes))).toBe(true);
      first.dispose();
      second.dispose();
      // and the bytes may change as soon as load() returns its promise
      const pending = NavMesh.load(a);
      a.fill(0);
      const third = await pending;
      expect(Buffer.from(third.save()).equals(Buffer.from(tiledBytes))).toBe(true);
      third.dispose();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.startsWith('DEP0005'))).toEqual([]); // no deprecated Buffer() constructor
  });

  for (const [name, config] of [
    ['solo', {}],
    ['tiled', { tileSize: 32 }],
  ] as const) {
    it(`bake (${name}, in workers): Buffer areas from a shared pool are copied, not transferred away`, async () => {
      // A floor of 300 x 300 quads: its areas (180000 bytes) are bigger than any buffer kept for reuse after the
      // dungeon's bakes (spare.ts), so the copy is a fresh one.
      const side = 300;
      const positions = new Float32Array((side + 1) * (side + 1) * 3);
      for (let z = 0, k = 0; z <= side; z++) for (let x = 0; x <= side; x++, k += 3) positions.set([x * 0.2, 0, z * 0.2], k);
      const indices = new Uint32Array(side * side * 6);
      for (let z = 0, k = 0; z < side; z++) {
        for (let x = 0; x < side; x++, k += 6) {
          const v = z * (side + 1) + x;
          indices.set([v, v + side + 1, v + 1, v + 1, v + side + 1, v + side + 2], k);
        }
      }
      const n = indices.length / 3;
      const pool = new ArrayBuffer(n + 64);
      const areas = Buffer.from(pool, 16, n).fill(5);
      const neighbour = Buffer.from(pool, 0, 16).fill(7);
      const expected = (await bake({ positions, indices, areas: new Uint8Array(n).fill(5) }, config, { workers: false })).save();
      const nav = await bake({ positions, indices, areas }, config, { workers: 2 });
      expect(areas.length).toBe(n);
      expect(pool.byteLength).toBe(n + 64); // not detached
      expect([...neighbour].every((x) => x === 7)).toBe(true);
      expect(Buffer.from(nav.save()).equals(Buffer.from(expected))).toBe(true);
      expect(nav.polygons().every((p) => p.area === 5)).toBe(true);
      nav.dispose();
    });
  }
});
