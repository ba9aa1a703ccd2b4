// Live obstacles on a tiled navmesh baked with obstacles: true: addObstacle / updateObstacle / removeObstacle mark
// the tiles they touch, update() rebuilds exactly those from their caches (in workers or on this thread, the same
// bytes) and swaps them in all at once.
// It reaches inside the package, so it imports the unbundled modules (build/web, what web/dist is bundled from).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, NavBakeError, NavMesh, terminateWorkers } from '../../build/web/index.js';
import { tileCachesOf } from '../../build/web/navmesh.js';
import { loadMesh, type Mesh } from './helpers';

let dungeon: Mesh;
let original: Uint8Array;
const config = { tileSize: 32 };
// the corridor path of the README: complete, about 122 long
const from = [36.5, 10.2, 5.7];
const to = [26.2, 15.5, -83.3];

beforeAll(async () => {
  dungeon = loadMesh('dungeon.obj');
  const nav = await bake(dungeon, config, { workers: false });
  original = nav.save();
  nav.dispose();
});

afterAll(() => terminateWorkers());

function code(fn: () => unknown): NavBakeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NavBakeError);
    return e as NavBakeError;
  }
  throw new Error('expected a NavBakeError');
}

/** A box of half size h (xz) around the middle of the path's longest segment. */
function blocker(points: Float32Array, h: number): { type: 'box'; min: number[]; max: number[] } {
  let best = 0;
  let len = -1;
  for (let i = 0; i + 5 < points.length; i += 3) {
    const l = Math.hypot(points[i + 3] - points[i], points[i + 5] - points[i + 2]);
    if (l > len) [best, len] = [i, l];
  }
  const m = [0, 1, 2].map((k) => (points[best + k] + points[best + 3 + k]) / 2);
  return { type: 'box', min: [m[0] - h, m[1] - 1, m[2] - h], max: [m[0] + h, m[1] + 2, m[2] + h] };
}

/** The grid tiles whose box (the tile with its border of agent radius + 3 cells) overlaps the volume's xz box. */
function overlapped(nav: NavMesh, lo: number[], hi: number[]): string[] {
  const { origin, tileWidth } = nav.params;
  const border = (Math.ceil(0.6 / 0.3) + 3) * 0.3;
  const out: string[] = [];
  for (let z = 0; z < 11; z++) {
    for (let x = 0; x < 8; x++) {
      const x0 = origin[0] + x * tileWidth - border;
      const z0 = origin[2] + z * tileWidth - border;
      const x1 = x0 + tileWidth + 2 * border;
      const z1 = z0 + tileWidth + 2 * border;
      if (lo[0] <= x1 && hi[0] >= x0 && lo[1] <= z1 && hi[1] >= z0) out.push(`${x},${z}`);
    }
  }
  return out;
}

describe('live obstacles', () => {
  for (const workers of [2, false] as const) {
    it(`a box on the path reroutes it; removing it restores the original bytes (workers: ${workers})`, async () => {
      const nav = await bake(dungeon, config, { workers, obstacles: true });
      expect(nav.save()).toEqual(original);
      const before = nav.findPath(from, to);
      expect(before.status).toBe('complete');
      const box = blocker(before.points, 1.5);
      const id = nav.addObstacle(box);
      expect(id).toBe(1);
      expect(nav.pendingTiles).toBeGreaterThan(0);
      expect(nav.save()).toEqual(original); // nothing changes before update()
      const u = await nav.update();
      expect(nav.pendingTiles).toBe(0);
      expect(u.tiles.length).toBeGreaterThan(0);
      expect(u.touches(before.points)).toBe(true); // the old path runs through a rebuilt tile: re-plan it
      const after = nav.findPath(from, to);
      expect(after.status === 'partial' || after.length > before.length + 0.5).toBe(true);
      expect(nav.save()).not.toEqual(original);
      // the path must not cross the box any more
      const [x0, , z0] = box.min;
      const [x1, , z1] = box.max;
      for (let i = 0; i < after.points.length; i += 3) {
        const inside = after.points[i] > x0 + 0.1 && after.points[i] < x1 - 0.1 && after.points[i + 2] > z0 + 0.1 && after.points[i + 2] < z1 - 0.1;
        expect(inside).toBe(false);
      }
      nav.removeObstacle(id);
      const back = await nav.update();
      expect(back.tiles).toEqual(u.tiles);
      expect(nav.save()).toEqual(original);
      // the same path; its polygon refs are new where tiles were rebuilt (a ref names one build of its tile)
      const { pointRefs: newRefs, ...again } = nav.findPath(from, to);
      const { pointRefs: oldRefs, ...was } = before;
      expect(again).toEqual(was);
      expect(newRefs.length).toBe(oldRefs.length);
      nav.dispose();
    });
  }

  it('updates in workers and on this thread give the same bytes', async () => {
    const a = await bake(dungeon, config, { workers: 2, obstacles: true });
    const b = await bake(dungeon, config, { workers: false, obstacles: true });
    const path = a.findPath(from, to).points;
    const ops = (n: NavMesh) => {
      const i = n.addObstacle(blocker(path, 1));
      const j = n.addObstacle({ type: 'cylinder', center: [path[0], path[1] - 0.5, path[2]], radius: 1.2, height: 3, area: 9 });
      n.addObstacle({ type: 'convex', points: [[0, -10], [4, -10], [2, -6]], minY: -5, maxY: 30 });
      n.updateObstacle(i, blocker(path, 2));
      n.removeObstacle(j);
    };
    ops(a);
    ops(b);
    await a.update({ workers: 2 });
    await b.update({ workers: false });
    expect(a.save()).toEqual(b.save());
    expect(a.save()).not.toEqual(original);
    a.dispose();
    b.dispose();
  });

  it('only the tiles an obstacle overlaps are rebuilt', async () => {
    const nav = await bake(dungeon, config, { workers: false, obstacles: true });
    const withPolygons = new Set(nav.tiles().map((t) => `${t.x},${t.z}`));
    const { origin, tileWidth } = nav.params;
    // a small box in the middle of a tile with polygons: that tile alone; one on a tile corner: up to four
    const t = nav.tiles().find((i) => i.polygons > 4)!;
    const mid = [origin[0] + (t.x + 0.5) * tileWidth, origin[2] + (t.z + 0.5) * tileWidth];
    const corner = [origin[0] + (t.x + 1) * tileWidth, origin[2] + (t.z + 1) * tileWidth];
    for (const [c, h] of [
      [mid, 0.5],
      [corner, 0.5],
      [mid, 6],
    ] as const) {
      const lo = [c[0] - h, c[1] - h];
      const hi = [c[0] + h, c[1] + h];
      const id = nav.addObstacle({ type: 'box', min: [lo[0], -100, lo[1]], max: [hi[0], 100, hi[1]] });
      const grid = overlapped(nav, lo, hi);
      const u = await nav.update({ workers: false });
      const rebuilt = u.tiles.map(([x, z]) => `${x},${z}`);
      expect(u.tiles).toEqual([...u.tiles].sort((a, b) => a[1] - b[1] || a[0] - b[0]));
      // every rebuilt tile overlaps; every overlapping tile with polygons is rebuilt (tiles with geometry but no
      // polygons are rebuilt too, tiles without geometry never)
      for (const k of rebuilt) expect(grid).toContain(k);
      for (const k of grid) if (withPolygons.has(k)) expect(rebuilt).toContain(k);
      if (c === mid && h === 0.5) expect(rebuilt).toEqual([`${t.x},${t.z}`]);
      else expect(rebuilt.length).toBeGreaterThan(1);
      nav.removeObstacle(id);
      expect((await nav.update({ workers: false })).tiles).toEqual(u.tiles);
    }
    expect(nav.save()).toEqual(original);
    nav.dispose();
  });

  it('ids, pending tiles, serialised updates, touches()', async () => {
    const nav = await bake(dungeon, config, { workers: 2, obstacles: true });
    const path = nav.findPath(from, to).points;
    const far = { type: 'box' as const, min: [-100, -100, -100], max: [-99, -99, -99] }; // off the level: no tile
    expect(nav.addObstacle(far)).toBe(1);
    expect(nav.pendingTiles).toBe(0);
    expect(nav.addObstacle(blocker(path, 1))).toBe(2);
    const pending = nav.pendingTiles;
    expect(pending).toBeGreaterThan(0);
    nav.removeObstacle(1);
    expect(nav.addObstacle(far)).toBe(3); // ids are never reused
    expect(code(() => nav.removeObstacle(1)).code).toBe('NB_ERR_NOT_FOUND');
    expect(code(() => nav.updateObstacle(7, far)).code).toBe('NB_ERR_NOT_FOUND');
    // a bad volume is rejected at once and changes nothing
    const bad = code(() => nav.addObstacle({ type: 'box', min: [0, 0, 0], max: [1, NaN, 1] }));
    expect(bad.code).toBe('NB_ERR_NONFINITE');
    expect(bad.message).toMatch(/addObstacle: volume\.max\[1\]/);
    expect(nav.pendingTiles).toBe(pending);
    // two updates at once: the first leaves its work to the second, which rebuilds what was dirty for both, once
    const u1 = nav.update();
    nav.addObstacle({ type: 'box', min: [path[0] - 1, path[1] - 1, path[2] - 1], max: [path[0] + 1, path[1] + 1, path[2] + 1] });
    const both = nav.pendingTiles; // the start of the path is far from the middle: other tiles
    expect(both).toBeGreaterThan(pending);
    const u2 = nav.update();
    const [r1, r2] = await Promise.all([u1, u2]);
    expect(r1).toBe(r2);
    expect(r2.tiles.length).toBe(both);
    expect(nav.pendingTiles).toBe(0);
    expect((await nav.update()).tiles).toEqual([]);
    // a later call with a signal may be aborted: the call before it does its own work
    nav.addObstacle(far);
    const first = nav.addObstacle(blocker(path, 1.5));
    const atOwn = nav.pendingTiles;
    const own = nav.update();
    nav.updateObstacle(first, { type: 'box', min: [path[0] - 2, path[1] - 1, path[2] - 2], max: [path[0] + 2, path[1] + 1, path[2] + 2] });
    const aborted = new AbortController();
    const other = expect(nav.update({ signal: aborted.signal })).rejects.toThrow('moved on');
    aborted.abort(new Error('moved on'));
    const ownResult = await own;
    expect(ownResult.tiles.length).toBe(atOwn);
    await other;
    expect(nav.pendingTiles).toBeGreaterThan(0); // the tiles of the change after `own` wait
    await nav.update();
    // A tile dirtied again while an update waits is still rebuilt by it, with the obstacles of its call: every
    // change made before the call applies once the call resolves (it used to be left out, so paths could cross an
    // obstacle added and updated before the await); the tile stays pending for the later change.
    nav.seedRandom(3);
    const c = nav.randomPoint()!;
    const near = (p: number[]) => nav.nearestPoint(p, { halfExtents: [0.3, 1, 0.3] });
    expect(near(c)).not.toBeNull();
    nav.addObstacle({ type: 'box', min: [c[0] - 2, c[1] - 1, c[2] - 2], max: [c[0] + 2, c[1] + 3, c[2] + 2] });
    const before = nav.update();
    const late = { type: 'cylinder' as const, center: [c[0] + 2.5, c[1] - 1, c[2] + 2.5], radius: 0.5, height: 4 };
    nav.addObstacle(late);
    const r = await before;
    expect(r.tiles.length).toBeGreaterThan(0);
    expect(near(c)).toBeNull(); // the box is in
    expect(nav.pendingTiles).toBeGreaterThan(0); // the cylinder's tiles wait
    await nav.update();
    expect(nav.pendingTiles).toBe(0);
    // touches: a path through a rebuilt tile, and one far from them
    expect(r1.touches(path)).toBe(true);
    const { origin, tileWidth } = nav.params;
    const away = r1.tiles.every(([x, z]) => x > 2 || z > 2); // tile (0..1, 0..1) is not rebuilt
    if (away) {
      const p = origin;
      expect(r1.touches(new Float32Array([p[0] + 1, p[1], p[2] + 1, p[0] + tileWidth, p[1], p[2] + 1]))).toBe(false);
    }
    nav.dispose();
  });

  it('a burst of changes, each followed by an update() not awaited, rebuilds each tile once, to the same bytes', async () => {
    for (const workers of [2, false] as const) {
      const nav = await bake(dungeon, config, { workers: 2, obstacles: true });
      const stepwise = await bake(dungeon, config, { workers: 2, obstacles: true });
      nav.seedRandom(9);
      const spots = Array.from({ length: 30 }, () => nav.randomPoint()!);
      const box = (c: number[], h: number) => ({ type: 'box' as const, min: [c[0] - h, c[1] - 1, c[2] - h], max: [c[0] + h, c[1] + 2, c[2] + h] });
      const id = nav.addObstacle(box(spots[0], 1));
      const dirtied = new Set<string>();
      const calls: Promise<{ tiles: [number, number][] }>[] = [];
      for (const [i, c] of spots.entries()) {
        nav.updateObstacle(id, box(c, 1 + (i % 3) * 0.5));
        calls.push(nav.update({ workers }));
      }
      const results = await Promise.all(calls);
      for (const r of results) for (const [x, z] of r.tiles) dirtied.add(`${x},${z}`);
      expect(new Set(results).size).toBe(1); // every call resolved with the one rebuild
      expect(results[0].tiles.length).toBe(dirtied.size); // each tile once
      expect(nav.pendingTiles).toBe(0);
      // the same edits, each update awaited
      const sid = stepwise.addObstacle(box(spots[0], 1));
      for (const [i, c] of spots.entries()) {
        stepwise.updateObstacle(sid, box(c, 1 + (i % 3) * 0.5));
        await stepwise.update({ workers });
      }
      expect(nav.save()).toEqual(stepwise.save());
      nav.dispose();
      stepwise.dispose();
    }
  });

  it('update({ signal }): aborting stops it, swaps nothing in, and leaves the tiles pending', async () => {
    const nav = await bake(dungeon, config, { workers: 2, obstacles: true });
    const original = nav.save();
    const path = nav.findPath(from, to).points;
    nav.addObstacle(blocker(path, 1));
    expect(nav.pendingTiles).toBeGreaterThan(0);
    const reason = new Error('drag moved on');
    // aborted before the call: rejected at once
    await expect(nav.update({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    // aborted while the workers rebuild (every tile: a box over the whole level), and while waiting behind it
    const all = nav.addObstacle({ type: 'box', min: [-1e4, -1e4, -1e4], max: [1e4, -1e4 + 1, 1e4] });
    nav.removeObstacle(all);
    const every = nav.pendingTiles;
    expect(every).toBeGreaterThanOrEqual(nav.tileCount);
    const ac = new AbortController();
    const first = nav.update({ signal: ac.signal });
    const queued = new AbortController();
    const second = nav.update({ signal: queued.signal });
    await new Promise((r) => setImmediate(r)); // the rebuilds are on their way
    ac.abort(reason);
    queued.abort(reason);
    await expect(first).rejects.toBe(reason);
    await expect(second).rejects.toBe(reason);
    expect(nav.save()).toEqual(original); // nothing swapped in
    expect(nav.pendingTiles).toBe(every);
    await expect(nav.update({ signal: 'stop' as never })).rejects.toThrow(/update: options\.signal must be an AbortSignal/);
    // the next update does it all
    const r = await nav.update();
    expect(r.tiles.length).toBe(every);
    expect(nav.pendingTiles).toBe(0);
    expect(nav.save()).not.toEqual(original);
    nav.dispose();
  });

  it('a failed rebuild changes nothing and leaves the tiles pending', async () => {
    for (const workers of [2, false] as const) {
      const nav = await bake(dungeon, config, { workers, obstacles: true });
      const path = nav.findPath(from, to).points;
      const box = blocker(path, 8);
      nav.addObstacle(box); // several tiles
      const pending = nav.pendingTiles;
      expect(pending).toBeGreaterThan(1);
      // damage the cache of one of those tiles (a test hook: the caches live on this thread)
      const dirty = overlapped(nav, [box.min[0], box.min[2]], [box.max[0], box.max[2]]);
      const caches = tileCachesOf(nav)!.caches;
      const [k, blob] = [...caches].find(([key]) => dirty.includes(`${key % 4096},${Math.floor(key / 4096)}`))!;
      const good = blob.slice();
      blob[100] ^= 0xff;
      const e = await nav.update().then(
        () => null,
        (x) => x,
      );
      expect((e as NavBakeError)?.code).toBe('NB_ERR_CORRUPT');
      expect(nav.save()).toEqual(original);
      expect(nav.pendingTiles).toBe(pending);
      caches.set(k, good);
      const u = await nav.update();
      expect(u.tiles.length).toBe(pending);
      expect(nav.pendingTiles).toBe(0);
      nav.dispose();
    }
  });

  it('a swap failing after others went in undoes them: the same bytes, refs, paths and flags as before', async () => {
    const nav = await bake(dungeon, config, { workers: false, obstacles: true });
    const path = nav.findPath(from, to);
    const start = nav.nearestPoint(from)!;
    nav.setPolygonFlags(start.ref, 4); // a flag set by the application
    const pairs = new Float32Array([...from, ...to, ...to, ...from]);
    const paths = nav.findPaths(pairs);
    const box = blocker(path.points, 8);
    nav.addObstacle(box);
    const pending = nav.pendingTiles;
    expect(pending).toBeGreaterThan(2);
    // the second tile rebuilt with polygons comes back damaged (a test hook: the rebuilds run on this thread's
    // wasm): the tiles before it are swapped in (or out, those the box carves away whole) when its swap fails
    const w = (tileCachesOf(nav) as unknown as { w: { rebuildTile(...a: unknown[]): Uint8Array | null | undefined } }).w;
    const real = w.rebuildTile;
    let calls = 0;
    let damaged = 0;
    let kept = 0;
    w.rebuildTile = function (this: unknown, ...a: unknown[]) {
      const out = real.apply(this, a);
      ++calls;
      if (out && ++kept === 2) {
        out[100] ^= 0xff;
        damaged = calls;
      }
      return out;
    };
    try {
      const e = await nav.update().then(
        () => null,
        (x) => x,
      );
      expect(calls).toBe(pending);
      expect(damaged).toBeGreaterThan(2);
      expect((e as NavBakeError)?.code).toBe('NB_ERR_CORRUPT');
    } finally {
      w.rebuildTile = real;
    }
    expect(nav.pendingTiles).toBe(pending);
    expect(nav.nearestPoint(from)!.ref).toBe(start.ref); // refs held stay valid
    expect(nav.polygons().find((q) => q.ref === start.ref)!.flags).toBe(4);
    nav.setPolygonFlags(start.ref, 1);
    expect(nav.save()).toEqual(original);
    nav.setPolygonFlags(start.ref, 4);
    expect(nav.findPaths(pairs)).toEqual(paths);
    const u = await nav.update();
    expect(u.tiles.length).toBe(pending);
    expect(nav.findPath(from, to).points).not.toEqual(path.points);
    nav.dispose();
  });

  it('a tile taken out with removeTile stays out through update(); loadTile puts it back and the next update() carves it', async () => {
    for (const workers of [2, false] as const) {
      const nav = await bake(dungeon, config, { workers: 2, obstacles: true });
      const control = await bake(dungeon, config, { workers: 2, obstacles: true });
      const path = nav.findPath(from, to).points;
      const box = blocker(path, 8); // several tiles
      const grid = overlapped(nav, [box.min[0], box.min[2]], [box.max[0], box.max[2]]);
      const inside = nav.tiles().filter((t) => grid.includes(`${t.x},${t.z}`) && t.polygons > 0);
      expect(inside.length).toBeGreaterThan(1);
      const { x, z } = inside[0];
      const saved = nav.saveTile(x, z)!; // as baked: no obstacle in it
      // taken out before the change: its rebuild waits, and pendingTiles leaves it out
      expect(nav.removeTile(x, z)).toBe(true);
      const id = nav.addObstacle(box);
      control.addObstacle(box);
      const pending = control.pendingTiles;
      expect(nav.pendingTiles).toBe(pending - 1);
      const u = await nav.update({ workers });
      const cu = await control.update({ workers });
      expect(u.tiles).toEqual(cu.tiles.filter(([tx, tz]) => tx !== x || tz !== z));
      expect(nav.saveTile(x, z)).toBeNull(); // not brought back
      expect(nav.tiles().some((t) => t.x === x && t.z === z)).toBe(false);
      expect(nav.pendingTiles).toBe(0);
      for (const [tx, tz] of u.tiles) expect(nav.saveTile(tx, tz)).toEqual(control.saveTile(tx, tz));
      // put back with the bytes of the bake: the obstacle over it is not in them, so it is pending again
      nav.loadTile(saved);
      expect(nav.saveTile(x, z)).toEqual(saved);
      expect(nav.pendingTiles).toBe(1);
      expect((await nav.update({ workers })).tiles).toEqual([[x, z]]);
      expect(nav.save()).toEqual(control.save());
      // taken out with the obstacle over it and loaded back with the bake's bytes: pending, as the obstacle is not in them
      expect(nav.removeTile(x, z)).toBe(true);
      nav.loadTile(saved);
      expect(nav.pendingTiles).toBe(1);
      expect((await nav.update({ workers })).tiles).toEqual([[x, z]]);
      expect(nav.save()).toEqual(control.save());
      // taken out while an update rebuilds it (in the workers: the rebuilds were sent within the microtask that
      // began it, and come back in messages, after the microtasks; on this thread, before it starts): it stays out,
      // and pending; back in, the next update rebuilds it
      nav.removeObstacle(id);
      control.removeObstacle(id);
      const running = nav.update({ workers });
      if (workers) for (let i = 0; i < 4; i++) await null;
      expect(nav.removeTile(x, z)).toBe(true);
      const r = await running;
      expect(r.tiles.some(([tx, tz]) => tx === x && tz === z)).toBe(false);
      expect(r.tiles.length).toBe(pending - 1);
      expect(nav.saveTile(x, z)).toBeNull();
      expect(nav.pendingTiles).toBe(0);
      expect((await nav.update({ workers })).tiles).toEqual([]);
      nav.loadTile(control.saveTile(x, z)!); // the bake's bytes again, the changes around it made while it was out
      expect(nav.pendingTiles).toBe(1);
      await nav.update({ workers });
      await control.update({ workers });
      expect(nav.save()).toEqual(original);
      expect(control.save()).toEqual(original);
      // a tile loaded back where no obstacle is and none changed while it was out waits for nothing
      const far = nav.tiles().find((t) => !grid.includes(`${t.x},${t.z}`) && t.polygons > 0)!;
      const farBytes = nav.saveTile(far.x, far.z)!;
      nav.removeTile(far.x, far.z);
      nav.loadTile(farBytes);
      expect(nav.pendingTiles).toBe(0);
      expect(nav.save()).toEqual(original);
      nav.dispose();
      control.dispose();
    }
  });

  it('streaming: a tile carved away whole comes back once the obstacle goes; bytes saved with an obstacle since removed are rebuilt', async () => {
    for (const workers of [2, false] as const) {
      const nav = await bake(dungeon, config, { workers: 2, obstacles: true });
      const { origin, tileWidth: tw, tileDepth: td } = nav.params;
      const t = nav.tiles().find((c) => c.polygons > 0)!;
      // a box over the whole tile (and a metre round it), every height: the tile has no polygon left
      const whole = {
        type: 'box' as const,
        min: [origin[0] + t.x * tw - 1, -1e3, origin[2] + t.z * td - 1],
        max: [origin[0] + (t.x + 1) * tw + 1, 1e3, origin[2] + (t.z + 1) * td + 1],
      };
      const id = nav.addObstacle(whole);
      await nav.update({ workers });
      expect(nav.saveTile(t.x, t.z)).toBeNull();
      // streaming code unloading the region: there is no tile to take out, so nothing changes (it was marked out,
      // and no update() ever brought it back: the user had no bytes to load it from)
      expect(nav.removeTile(t.x, t.z)).toBe(false);
      nav.removeObstacle(id);
      expect((await nav.update({ workers })).tiles).toContainEqual([t.x, t.z]);
      expect(nav.save()).toEqual(original);
      // a tile saved while an obstacle stood on it, loaded back after the obstacle went: rebuilt without it
      const path = nav.findPath(from, to).points;
      const box = blocker(path, 1.5);
      const other = nav.addObstacle(box);
      const u = await nav.update({ workers });
      const [x, z] = u.tiles.find(([tx, tz]) => nav.saveTile(tx, tz) !== null)!;
      const carved = nav.saveTile(x, z)!;
      nav.removeObstacle(other);
      await nav.update({ workers });
      expect(nav.save()).toEqual(original);
      nav.loadTile(carved);
      expect(nav.save()).not.toEqual(original);
      expect(nav.pendingTiles).toBe(1);
      expect((await nav.update({ workers })).tiles).toEqual([[x, z]]);
      expect(nav.save()).toEqual(original);
      nav.dispose();
      // on a disposed navmesh, the error names the method called
      expect(code(() => nav.addObstacle(box)).message).toMatch(/NavMesh\.addObstacle: this NavMesh was disposed/);
      expect(code(() => nav.removeObstacle(1)).message).toMatch(/NavMesh\.removeObstacle: this NavMesh was disposed/);
    }
  });

  it('flags set on polygons a rebuild leaves as they were stay on them; polygons an obstacle reshapes get their baked flags', async () => {
    for (const workers of [2, false] as const) {
      const nav = await bake(dungeon, config, { workers: 2, obstacles: true });
      const path = nav.findPath(from, to);
      expect(path.status).toBe('complete');
      // close a "door": a polygon halfway along the path
      const at = Array.from(path.points.subarray(Math.floor(path.points.length / 6) * 3, Math.floor(path.points.length / 6) * 3 + 3));
      const door = nav.nearestPoint(at)!;
      nav.setPolygonFlags(door.ref, 2);
      const closed = nav.findPath(from, to, { filter: { excludeFlags: 2 } });
      expect(closed.points).not.toEqual(path.points);
      // a box 100 m under the floor there: it carves nothing, but its tile (and those round it) are rebuilt
      const under = { type: 'box' as const, min: [at[0] - 1, at[1] - 101, at[2] - 1], max: [at[0] + 1, at[1] - 100, at[2] + 1] };
      const id = nav.addObstacle(under);
      const u = await nav.update({ workers });
      expect(u.touches(Array.from(at))).toBe(true);
      expect(() => nav.setPolygonFlags(door.ref, 2)).toThrow(/not a polygon|NB_ERR_NOT_FOUND|stale/i); // a new ref now
      const again = nav.nearestPoint(at)!;
      expect(nav.polygons().find((p) => p.ref === again.ref)!.flags).toBe(2); // the door stays closed
      expect(nav.findPath(from, to, { filter: { excludeFlags: 2 } }).points).toEqual(closed.points);
      // a box that carves a hole in that polygon: reshaped (split), its pieces get the baked flags
      nav.updateObstacle(id, { type: 'box', min: [at[0] - 0.5, at[1] - 1, at[2] - 0.5], max: [at[0] + 0.5, at[1] + 2, at[2] + 0.5] });
      await nav.update({ workers });
      expect(nav.polygons().filter((p) => p.flags === 2)).toEqual([]);
      nav.removeObstacle(id);
      await nav.update({ workers });
      expect(nav.save()).toEqual(original);
      nav.dispose();
    }
  });

  it('needs a tiled bake with obstacles: true', async () => {
    const plain = await bake(dungeon, config, { workers: false });
    for (const fn of [() => plain.addObstacle({ type: 'box', min: [0, 0, 0], max: [1, 1, 1] }), () => plain.removeObstacle(1)]) {
      const e = code(fn);
      expect(e.code).toBe('NB_ERR_INVALID_ARG');
      expect(e.message).toMatch(/obstacles: true/);
    }
    expect(plain.pendingTiles).toBe(0);
    await expect(plain.update()).rejects.toThrow(/obstacles: true/);
    plain.dispose();
    // a file of a navmesh with obstacles holds its tiles, not its caches: the loaded copy says why it has none
    const live = await bake(dungeon, config, { workers: false, obstacles: true });
    live.addObstacle({ type: 'box', min: [30, 0, -10], max: [32, 20, -8] });
    await live.update();
    const loaded = await NavMesh.load(live.save());
    expect(code(() => loaded.addObstacle({ type: 'box', min: [0, 0, 0], max: [1, 1, 1] })).message).toMatch(/loaded from a file .* has no obstacle caches/);
    expect(loaded.save()).toEqual(live.save()); // the obstacle carved in
    live.dispose();
    loaded.dispose();
    await expect(bake(dungeon, {}, { obstacles: true })).rejects.toThrow(/tileSize/);
  });

  it('during an obstacles: true bake (onTile), says the bake has not finished; once it has, they work', async () => {
    const seen: string[] = [];
    const box = { type: 'box', min: [30, 0, -10], max: [32, 20, -8] } as const;
    const nav = await bake(dungeon, config, {
      workers: false,
      obstacles: true,
      onTile: (e) => {
        if (seen.length < 2) seen.push(code(() => e.navMesh.addObstacle(box)).message);
      },
    });
    expect(seen).toHaveLength(2);
    // it used to say the navmesh was not baked with the obstacles option
    for (const m of seen) expect(m).toMatch(/addObstacle: the bake has not finished: .* once bake\(\)'s promise has resolved/);
    nav.addObstacle(box);
    expect((await nav.update()).tiles.length).toBeGreaterThan(0);
    nav.dispose();
  });
});
