// The TypeScript API on the main thread (workers: false): config, bake, queries, geometry, save/load, dispose,
// and every NavBakeError code the API can produce. Runs against the built package (make web).
import { beforeAll, describe, expect, it } from 'vitest';
import {
  bake,
  DEFAULTS,
  init,
  NavBakeError,
  NavMesh,
  PATH_POINT,
  PATH_STATUS,
  STAGES,
  type BakeProgress,
  type NavBakeConfig,
} from '../../web/dist/index.js';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { loadMesh, loadWasm, root, type Mesh } from './helpers';

let dungeon: Mesh;
let nav: NavMesh;

/** Rejects with a NavBakeError of this code (and a message naming what is wrong). */
async function expectCode(p: Promise<unknown> | (() => unknown), code: string, message?: RegExp): Promise<NavBakeError> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${code}`).toBeInstanceOf(NavBakeError);
  const e = err as NavBakeError;
  expect(e.code, e.message).toBe(code);
  expect(e.name).toBe('NavBakeError');
  if (message) expect(e.message).toMatch(message);
  return e;
}

const dist = (a: ArrayLike<number>, b: ArrayLike<number>) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

beforeAll(async () => {
  // A failed load is reported and forgotten: the next init() loads the real file.
  await expectCode(init({ locateFile: () => 'file:///nonexistent/navbake.wasm' }), 'NB_ERR_WASM_LOAD', /could not load/);
  await init();
  dungeon = loadMesh('dungeon.obj');
  nav = await bake(dungeon, {}, { workers: false });
});

describe('config', () => {
  it('DEFAULTS and NavBakeConfig are the C config table, field for field', async () => {
    const m = await loadWasm();
    const n = m._nbw_config_field_count();
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      const cName: string = m.UTF8ToString(m._nbw_config_field_name(i));
      const name = cName.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      names.push(name);
      const ts = (DEFAULTS as Record<string, unknown>)[name];
      const c = m._nbw_config_default(i);
      if (name === 'partition') expect(ts).toBe(['watershed', 'monotone', 'layers', 'wavefront'][c - 1]);
      else expect(Math.fround(ts as number), name).toBe(Math.fround(c));
    }
    expect(Object.keys(DEFAULTS)).toEqual(names);
  });

  // Without erosion the walkable surface reaches the walls: more surface than with the 0.6 default.
  const surface = (m: NavMesh) => {
    const g = m.toGeometry();
    const p = g.positions;
    let s = 0;
    for (let t = 0; t < g.indices.length; t += 3) {
      const [a, b, c] = [g.indices[t] * 3, g.indices[t + 1] * 3, g.indices[t + 2] * 3];
      s += Math.abs((p[b] - p[a]) * (p[c + 2] - p[a + 2]) - (p[c] - p[a]) * (p[b + 2] - p[a + 2])) / 2;
    }
    return s;
  };

  it('an explicit zero is a zero, not the default (tiled bake)', async () => {
    const zero = await bake(dungeon, { agentRadius: 0, tileSize: 64 }, { workers: false });
    const dflt = await bake(dungeon, { tileSize: 64 }, { workers: false });
    expect(surface(zero)).toBeGreaterThan(surface(dflt) * 1.05);
    zero.dispose();
    dflt.dispose();
  });

  it('an explicit zero is a zero, not the default (solo bake)', async () => {
    // nb_bake_navmesh must hand nb_bake_tile the caller's config: resolving an already resolved config turns
    // its explicit zeros back into defaults.
    const zero = await bake(dungeon, { agentRadius: 0 }, { workers: false });
    expect(surface(zero)).toBeGreaterThan(surface(nav) * 1.05);
    zero.dispose();
  });

  it('partition names select the C partitions', async () => {
    const counts: number[] = [];
    for (const partition of ['watershed', 'monotone', 'layers', 'wavefront'] as const) {
      const m = await bake(dungeon, { partition }, { workers: false });
      counts.push(m.polygons().length);
      m.dispose();
    }
    expect(counts[0]).toBe(nav.polygons().length);
    expect(new Set(counts).size).toBeGreaterThan(1); // REFERENCE.md: 118 / 100 / 97 polygons
  });

  it("wavefront's larger convex polygons route as watershed's do", async () => {
    const ws = await bake(dungeon, { vertsPerPoly: 12 }, { workers: false });
    const wf = await bake(dungeon, { partition: 'wavefront', vertsPerPoly: 12 }, { workers: false });
    expect(wf.polygons().length).toBeLessThan(ws.polygons().length);
    expect(Math.max(...wf.polygons().map((p) => p.vertices.length / 3))).toBeGreaterThan(6);
    const ratios: number[] = [];
    for (let seed = 1; seed <= 100; seed++) {
      const a = ws.randomPoint({ seed })!;
      const b = ws.randomPoint({ seed: seed + 500 })!;
      const p = ws.findPath(a, b);
      const q = wf.findPath(a, b);
      expect(q.status, `seed ${seed}`).toBe(p.status);
      if (p.status === 'complete') ratios.push(q.length / p.length);
    }
    ratios.sort((x, y) => x - y);
    expect(ratios.length).toBeGreaterThan(50);
    expect(Math.abs(ratios[ratios.length >> 1] - 1)).toBeLessThan(0.01);
    expect(ratios[ratios.length - 1]).toBeLessThan(1.1);
    ws.dispose();
    wf.dispose();
  });
});

describe('bake on the main thread', () => {
  it('reports every stage in pipeline order', async () => {
    const seen: BakeProgress[] = [];
    const m = await bake(dungeon, {}, { workers: false, onProgress: (p) => seen.push(p) });
    m.dispose();
    const order = seen.map((p) => STAGES.indexOf(p.stage));
    expect(order.every((s, i) => s >= 0 && (i === 0 || s >= order[i - 1]))).toBe(true);
    expect([...new Set(seen.map((p) => p.stage))]).toEqual(STAGES);
    expect(seen.every((p) => p.done <= p.total && p.total > 0)).toBe(true);
    // each stage starts at 0 and its last report is done === total: a progress bar fills, never divides by 0
    for (const stage of STAGES) {
      const mine = seen.filter((p) => p.stage === stage);
      expect(mine[0].done, stage).toBe(0);
      expect(mine[mine.length - 1].done, stage).toBe(mine[mine.length - 1].total);
    }
  });

  it('a solo bake of dungeon.obj has one tile with about the reference polygon count', () => {
    expect(nav.tileCount).toBe(1);
    const polys = nav.polygons();
    expect(polys.length).toBeGreaterThan(90); // REFERENCE.md: 118
    expect(polys.length).toBeLessThan(150);
    for (const p of polys) {
      expect(p.vertices.length % 3).toBe(0);
      expect(p.vertices.length / 3).toBeGreaterThanOrEqual(3);
      expect(p.vertices.length / 3).toBeLessThanOrEqual(DEFAULTS.vertsPerPoly);
      expect(p.area).toBe(63);
      expect(p.flags).toBe(1);
      expect(p.offMesh).toBe(false);
    }
  });

  it('tiled bakes on the main thread report tiles and give several tiles', async () => {
    const seen: BakeProgress[] = [];
    const m = await bake(dungeon, { tileSize: 48 }, { workers: false, onProgress: (p) => seen.push(p) });
    expect(m.tileCount).toBeGreaterThan(4);
    expect(seen.every((p) => p.stage === 'tiles')).toBe(true);
    expect(seen.map((p) => p.done)).toEqual(Array.from({ length: seen.length }, (_, i) => i)); // from 0
    expect(seen[seen.length - 1].done).toBe(seen[0].total);
    // tiles are linked: a path crossing the level goes through several tiles and completes
    const a = m.randomPoint({ seed: 3 })!;
    const far = nav.polygons().map((p) => p.vertices).sort((x, y) => dist(y, a) - dist(x, a))[0];
    expect(m.findPath(a, far.slice(0, 3)).status).not.toBe('none'); // its first vertex
    m.dispose();
  });

  it('a mesh with nothing walkable bakes to an empty navmesh that answers queries', async () => {
    const wall = { positions: new Float32Array([0, 0, 0, 0, 10, 0, 0, 0, 10]) };
    for (const config of [{}, { tileSize: 16 }]) {
      const m = await bake(wall, config, { workers: false });
      expect(m.tileCount).toBe(0);
      expect(m.polygons()).toEqual([]);
      expect(m.randomPoint()).toBeNull();
      expect(m.findPath([0, 0, 0], [0, 0, 1]).status).toBe('none');
      expect(m.toGeometry().indices.length).toBe(0);
      expect((await NavMesh.load(m.save())).tileCount).toBe(0);
      m.dispose();
    }
  });

  it('per-triangle areas reach the polygons', async () => {
    const areas = new Uint8Array(dungeon.indices.length / 3).fill(7);
    const m = await bake({ ...dungeon, areas }, {}, { workers: false });
    const polys = m.polygons();
    expect(polys.length).toBeGreaterThan(0);
    expect(polys.every((p) => p.area === 7)).toBe(true);
    expect(m.toGeometry().areas.every((a) => a === 7)).toBe(true);
    m.dispose();
  });

  it('accepts Uint16 indices and plain arrays', async () => {
    const small = { positions: Array.from(dungeon.positions), indices: Uint16Array.from(dungeon.indices) };
    expect(dungeon.positions.length / 3).toBeLessThan(65536);
    const m = await bake(small, {}, { workers: false });
    expect(m.save()).toEqual(nav.save());
    m.dispose();
  });
});

describe('queries', () => {
  it('findPath between two points: status, end points, length', () => {
    const a = nav.randomPoint({ seed: 1 })!;
    let b = nav.randomPoint()!;
    let r = nav.findPath(a, b);
    for (let i = 0; r.status !== 'complete' && i < 20; i++) r = nav.findPath(a, (b = nav.randomPoint()!));
    expect(r.status).toBe('complete');
    const n = r.points.length / 3;
    expect(n).toBeGreaterThanOrEqual(2);
    expect(dist(r.points.subarray(0, 3), a)).toBeLessThan(0.05);
    expect(dist(r.points.subarray(3 * n - 3), b)).toBeLessThan(0.05);
    let sum = 0;
    for (let i = 1; i < n; i++) sum += dist(r.points.subarray(3 * i - 3), r.points.subarray(3 * i));
    expect(r.length).toBeCloseTo(sum, 3);
    expect(r.length).toBeGreaterThanOrEqual(dist(a, b) - 1e-3);
    // the same path from {x, y, z} objects
    const v = (p: number[]) => ({ x: p[0], y: p[1], z: p[2] });
    expect(nav.findPath(v(a), v(b)).points).toEqual(r.points);
  });

  it('a point far from the mesh gives status none and no points', () => {
    const a = nav.randomPoint({ seed: 2 })!;
    const r = nav.findPath(a, [1e4, 0, 1e4]);
    expect(r.status).toBe('none');
    expect(r.points.length).toBe(0);
    expect(nav.nearestPoint([1e4, 0, 1e4])).toBeNull();
    expect(nav.raycast([1e4, 0, 1e4], [0, 0, 0])).toBeNull();
    expect(nav.moveAlong([1e4, 0, 1e4], [0, 0, 0])).toBeNull();
    expect(nav.distanceToWall([1e4, 0, 1e4], 5)).toBeNull();
  });

  it('findPaths equals findPath one by one (and survives growing its point buffer)', () => {
    nav.seedRandom(42);
    const n = 60;
    const pairs = new Float32Array(n * 6);
    for (let i = 0; i < 2 * n; i++) pairs.set(nav.randomPoint()!, i * 3);
    for (const crossings of ['none', 'all'] as const) {
      const batch = nav.findPaths(pairs, { crossings });
      expect(batch.status.length).toBe(n);
      expect(batch.offsets.length).toBe(n + 1);
      expect(batch.points.length).toBe(batch.offsets[n] * 3);
      for (let i = 0; i < n; i++) {
        const one = nav.findPath(pairs.subarray(i * 6, i * 6 + 3), pairs.subarray(i * 6 + 3, i * 6 + 6), { crossings });
        expect(PATH_STATUS[batch.status[i]]).toBe(one.status);
        expect(batch.lengths[i]).toBe(one.length);
        expect(batch.points.subarray(batch.offsets[i] * 3, batch.offsets[i + 1] * 3)).toEqual(one.points);
      }
      if (crossings === 'all') {
        // every polygon edge crossed adds a point: more than the 16 per pair the first pass makes room for
        expect(Math.max(...Array.from({ length: n }, (_, i) => batch.offsets[i + 1] - batch.offsets[i]))).toBeGreaterThan(4);
      }
    }
    expect(nav.findPaths(new Float32Array(0)).status.length).toBe(0);
  });

  it('findPath: a path of about 1000 points (past the buffer it keeps between calls) equals the batch', async () => {
    // a 600 m strip in 250 tiles, outlines split every metre: crossings 'all' gives a point per polygon edge
    const L = 600;
    const strip = { positions: new Float32Array([0, 0, 0, 0, 0, 6, L, 0, 6, L, 0, 0]), indices: new Uint32Array([0, 1, 2, 0, 2, 3]) };
    const long = await bake(strip, { tileSize: 16, edgeMaxLen: 1 }, { workers: false });
    const short = long.findPath([1, 0, 3], [4, 0, 3]);
    const r = long.findPath([1, 0, 3], [L - 1, 0, 3], { crossings: 'all' });
    const n = r.points.length / 3;
    expect(r.status).toBe('complete');
    expect(n).toBeGreaterThan(600);
    const b = long.findPaths(new Float32Array([1, 0, 3, L - 1, 0, 3]), { crossings: 'all' });
    expect(r.points).toEqual(b.points);
    expect(r.length).toBe(b.lengths[0]);
    expect([r.pointFlags.length, r.pointRefs.length]).toEqual([n, n]);
    expect([r.pointFlags[0], r.pointFlags[n - 1]]).toEqual([PATH_POINT.START, PATH_POINT.END]);
    expect(r.pointRefs.subarray(0, n - 1).every((ref) => ref !== 0)).toBe(true);
    // the batch's details: its 16-point buffer overflows and the pair runs again with the flags and refs too
    const d = long.findPaths(new Float32Array([1, 0, 3, L - 1, 0, 3]), { crossings: 'all', details: true });
    expect([d.points, d.pointFlags, d.pointRefs]).toEqual([r.points, r.pointFlags, r.pointRefs]);
    expect(b.pointFlags).toBeUndefined();
    // and the short path again, after the buffer grew
    expect(long.findPath([1, 0, 3], [4, 0, 3])).toEqual(short);
    long.dispose();
  });

  it('findPaths: short and long pairs mixed over two chunks equal findPath one by one (the pairs that overflow run again)', async () => {
    // the 600 m strip: crossings 'all' gives about a point per metre. Short pairs fit the first buffer, the long
    // ones overflow it, wherever they fall in a chunk of 4096 pairs; each pair must come back as findPath gives it.
    const L = 600;
    const strip = { positions: new Float32Array([0, 0, 0, 0, 0, 6, L, 0, 6, L, 0, 0]), indices: new Uint32Array([0, 1, 2, 0, 2, 3]) };
    const long = await bake(strip, { tileSize: 16, edgeMaxLen: 1 }, { workers: false });
    const n = 4096 + 300;
    const pairs = new Float32Array(n * 6);
    // every 8th pair long, and those around the chunk's ends: over 512 x 570 points in the first chunk, more than
    // the buffer's first size even after earlier batches grew it (4096 pairs x 64 points)
    const longAt = new Set([0, 4095, 4096, 4097, n - 1]);
    for (let i = 3; i < n; i += 8) longAt.add(i);
    const none = (i: number) => Math.imul(i, 2654435761) >>> 28 === 3; // a sixteenth of the pairs, in no period
    for (let i = 0; i < n; i++) {
      const x = 1 + ((i * 37) % 500);
      pairs.set(longAt.has(i) ? [1 + (i % 20), 0, 2, L - 1 - (i % 10), 0, 4] : [x, 0, 1 + (i % 4), x + 1 + (i % 9), 0, 3], i * 6);
      if (none(i)) pairs[i * 6 + 2] = 50; // a start off the strip: status 'none', among the 'complete' ones
    }
    const counted = long.findPaths(pairs.subarray(0, 4096 * 6), { crossings: 'all' });
    expect(counted.offsets[4096]).toBeGreaterThan(4096 * 64);
    for (const details of [false, true]) {
      const b = long.findPaths(pairs, { crossings: 'all', details });
      expect(b.offsets[n]).toBe(b.points.length / 3);
      for (let i = 0; i < n; i++) {
        const one = long.findPath(pairs.subarray(i * 6, i * 6 + 3), pairs.subarray(i * 6 + 3, i * 6 + 6), { crossings: 'all' });
        const [o0, o1] = [b.offsets[i], b.offsets[i + 1]];
        if (longAt.has(i) && !none(i)) expect(o1 - o0, `pair ${i}`).toBeGreaterThan(500);
        expect(PATH_STATUS[b.status[i]], `pair ${i}`).toBe(one.status);
        expect(b.lengths[i], `pair ${i}`).toBe(one.length);
        expect(b.points.subarray(o0 * 3, o1 * 3), `pair ${i}`).toEqual(one.points);
        if (details) {
          expect(b.pointFlags!.subarray(o0, o1), `pair ${i}`).toEqual(one.pointFlags);
          expect(b.pointRefs!.subarray(o0, o1), `pair ${i}`).toEqual(one.pointRefs);
        }
      }
    }
    long.dispose();
  });

  it('maxNodes bounds the search: a path that needs more polygons stops partial, nearer the end, exhausted; enough gives the same path', () => {
    nav.seedRandom(5);
    let checked = 0;
    let islands = 0;
    for (let i = 0; i < 200 && (checked < 20 || islands < 3); i++) {
      const a = nav.randomPoint()!;
      const b = nav.randomPoint()!;
      const full = nav.findPath(a, b, { crossings: 'all' });
      expect(full.exhausted).toBe(false); // a node for every polygon: never runs out
      if (full.status === 'partial') {
        islands++; // the end is out of reach, and the search says it did not simply run out
        const batch = nav.findPaths(new Float32Array([...a, ...b]));
        expect([PATH_STATUS[batch.status[0]], batch.exhausted[0]]).toEqual(['partial', 0]);
      }
      if (full.status !== 'complete' || checked === 20) continue;
      const polys = new Set(full.pointRefs.subarray(0, full.pointRefs.length - 1)).size; // the corridor
      if (polys < 6) continue;
      checked++;
      expect(nav.findPath(a, b, { crossings: 'all', maxNodes: 1 << 22 })).toEqual(full);
      // too few nodes to reach the end: partial, along polygons the search had nodes for
      const k = 3;
      const cut = nav.findPath(a, b, { crossings: 'all', maxNodes: k });
      expect(cut.status).toBe('partial');
      expect(cut.exhausted).toBe(true);
      expect(new Set(cut.pointRefs.subarray(0, cut.pointRefs.length - 1)).size).toBeLessThanOrEqual(k);
      expect(Array.from(cut.points.subarray(0, 3))).toEqual(Array.from(full.points.subarray(0, 3)));
      const last = cut.points.subarray(cut.points.length - 3);
      expect(Math.hypot(last[0] - b[0], last[2] - b[2])).toBeLessThan(Math.hypot(a[0] - b[0], a[2] - b[2]));
      // the batch takes the same option, pair for pair
      const batch = nav.findPaths(new Float32Array([...a, ...b, ...a, ...b]), { crossings: 'all', maxNodes: k });
      expect(batch.points.subarray(0, batch.offsets[1] * 3)).toEqual(cut.points);
      expect(Array.from(batch.status, (c) => PATH_STATUS[c])).toEqual(['partial', 'partial']);
      expect(Array.from(batch.exhausted)).toEqual([1, 1]);
      // and the default again after it
      expect(nav.findPath(a, b, { crossings: 'all' })).toEqual(full);
    }
    expect(checked).toBe(20);
    expect(islands).toBeGreaterThanOrEqual(3);
    for (const bad of [0, 1.5, (1 << 22) + 1, -1]) {
      expect(() => nav.findPath([0, 0, 0], [1, 0, 1], { maxNodes: bad })).toThrow(/findPath: options\.maxNodes must be an integer 1\.\.4194304/);
    }
    expect(() => nav.findPaths(new Float32Array(6), { maxNodes: 0 })).toThrow(/findPaths: options\.maxNodes/);
  });

  it('filters: excluding the only flag leaves no path; area costs change lengths only through the route', () => {
    const a = nav.randomPoint({ seed: 7 })!;
    const b = nav.randomPoint()!;
    expect(nav.findPath(a, b, { filter: { excludeFlags: 1 } }).status).toBe('none');
    const cheap = nav.findPath(a, b);
    const costly = nav.findPath(a, b, { filter: { areaCost: { 63: 5 } } });
    expect(costly.status).toBe(cheap.status);
    expect(costly.length).toBeCloseTo(cheap.length, 3); // one area everywhere: the same route
  });

  it('raycast: the point where the walk stops lies on the surface walked, also on a slope and under a bridge', async () => {
    // a ramp rising 0.3 m per metre along x (0..20), and a bridge 3 m over the ground floor beyond it (x 24..30)
    const quad = (p: number[], o: number) => [o, o + 1, o + 2, o, o + 2, o + 3].map((i) => i + p.length / 3 - o);
    const positions: number[] = [];
    const indices: number[] = [];
    for (const q of [
      [0, 0, 0, 0, 0, 10, 20, 6, 10, 20, 6, 0], // the ramp
      [22, 0, 0, 22, 0, 10, 34, 0, 10, 34, 0, 0], // the ground floor
      [24, 3, 0, 24, 3, 10, 30, 3, 10, 30, 3, 0], // the bridge over it
    ]) {
      indices.push(...quad(positions, 0));
      positions.push(...q);
    }
    const level = await bake({ positions: new Float32Array(positions), indices: new Uint32Array(indices) }, { agentRadius: 0.3 }, { workers: false });
    // up the ramp into its far end: the heights given are the start's, the surface rises to about 5.9
    const up = level.raycast([2, 0.6, 5], [40, 0.6, 5])!;
    expect(up.hit).toBe(true);
    expect(up.point[0]).toBeGreaterThan(19);
    expect(Math.abs(up.point[1] - 0.3 * up.point[0])).toBeLessThan(0.25);
    // from the ground floor to a point on the bridge: the walk stays on the ground and gets under it, no wall
    const under = level.raycast([23, 0, 5], [27, 3, 5])!;
    expect(under.hit).toBe(false);
    expect(under.point[0]).toBeCloseTo(27, 4);
    expect(Math.abs(under.point[1])).toBeLessThan(0.25);
    // and on the bridge itself it stays on the bridge
    const over = level.raycast([25, 3, 5], [27, 3, 5])!;
    expect(over.hit).toBe(false);
    expect(Math.abs(over.point[1] - 3)).toBeLessThan(0.25);
    level.dispose();
  });

  it('nearestPoint, raycast, moveAlong, distanceToWall agree with each other', () => {
    const p = nav.randomPoint({ seed: 11 })!;
    const near = nav.nearestPoint([p[0], p[1] + 0.5, p[2]])!;
    expect(near).not.toBeNull();
    expect(near.point[0]).toBeCloseTo(p[0], 4);
    expect(Math.abs(near.point[1] - p[1])).toBeLessThan(0.05);
    expect(near.ref).toBeGreaterThan(0);

    const wall = nav.distanceToWall(p, 100)!;
    expect(wall.distance).toBeGreaterThanOrEqual(0);
    expect(wall.distance).toBeLessThan(100); // dungeon rooms are closed
    expect(Math.hypot(wall.point[0] - p[0], wall.point[2] - p[2])).toBeCloseTo(wall.distance, 2);

    // A ray toward the nearest wall point and beyond stops there, near distanceToWall's distance.
    const dir = [wall.point[0] - p[0], 0, wall.point[2] - p[2]];
    const len = Math.hypot(dir[0], dir[2]) || 1;
    const end = [p[0] + (dir[0] / len) * 50, p[1], p[2] + (dir[2] / len) * 50];
    const ray = nav.raycast(p, end)!;
    expect(ray.hit).toBe(true);
    expect(ray.t).toBeLessThan(1);
    expect(Math.hypot(ray.point[0] - p[0], ray.point[2] - p[2])).toBeGreaterThanOrEqual(wall.distance - 0.05);
    expect(Math.hypot(ray.normal[0], ray.normal[2])).toBeCloseTo(1, 3);
    // A short ray that stays on the mesh does not hit.
    const short = [p[0] + (dir[0] / len) * wall.distance * 0.5, p[1], p[2] + (dir[2] / len) * wall.distance * 0.5];
    expect(nav.raycast(p, short)!.hit).toBe(false);

    // Moving through the wall stops at it (sliding keeps it on the surface).
    const moved = nav.moveAlong(p, end)!;
    expect(Math.hypot(moved[0] - end[0], moved[2] - end[2])).toBeGreaterThan(1);
    expect(nav.nearestPoint(moved, { halfExtents: [0.1, 2, 0.1] })).not.toBeNull();
  });

  it('randomPoint is deterministic per seed and stays near a center when asked', () => {
    const seq = (seed: number) => [nav.randomPoint({ seed })!, nav.randomPoint()!, nav.randomPoint()!];
    expect(seq(5)).toEqual(seq(5));
    expect(seq(5)).not.toEqual(seq(6));
    nav.seedRandom(5n);
    expect(nav.randomPoint()).toEqual(seq(5)[0]);
    const c = nav.randomPoint({ seed: 9 })!;
    for (let i = 0; i < 20; i++) {
      const q = nav.randomPoint({ center: c, radius: 2 })!;
      expect(q).not.toBeNull();
      expect(Math.hypot(q[0] - c[0], q[2] - c[2])).toBeLessThan(2 + 3); // within the polygons reached from c
    }
  });
});

describe('geometry', () => {
  it('toGeometry: valid indexed triangles facing up that cover the polygons', () => {
    const g = nav.toGeometry();
    const nv = g.positions.length / 3;
    expect(g.indices.length % 3).toBe(0);
    expect(g.areas.length).toBe(g.indices.length / 3);
    expect(g.indices.every((i) => i < nv)).toBe(true);
    let up = 0;
    let area = 0;
    for (let t = 0; t < g.indices.length; t += 3) {
      const [a, b, c] = [g.indices[t] * 3, g.indices[t + 1] * 3, g.indices[t + 2] * 3];
      const p = g.positions;
      const e1 = [p[b] - p[a], p[b + 1] - p[a + 1], p[b + 2] - p[a + 2]];
      const e2 = [p[c] - p[a], p[c + 1] - p[a + 1], p[c + 2] - p[a + 2]];
      const ny = e1[2] * e2[0] - e1[0] * e2[2]; // y of e1 x e2
      if (ny > 0) up++;
      area += Math.abs(ny) / 2;
    }
    expect(up).toBe(g.indices.length / 3); // counter-clockwise seen from above: three.js front faces point up
    let polyArea = 0;
    for (const poly of nav.polygons()) {
      const v = poly.vertices;
      for (let i = 2; i < v.length / 3; i++) {
        polyArea +=
          Math.abs((v[3 * i - 3] - v[0]) * (v[3 * i + 2] - v[2]) - (v[3 * i] - v[0]) * (v[3 * i - 1] - v[2])) / 2;
      }
    }
    expect(area).toBeGreaterThan(0);
    expect(Math.abs(area - polyArea) / polyArea).toBeLessThan(0.01);
  });
});

describe('save and load', () => {
  it('round trip: the same bytes and the same answers', async () => {
    const bytes = nav.save();
    const copy = await NavMesh.load(bytes);
    expect(copy.save()).toEqual(bytes);
    expect(copy.polygons().length).toBe(nav.polygons().length);
    const a = nav.randomPoint({ seed: 21 })!;
    const b = nav.randomPoint()!;
    expect(copy.findPath(a, b)).toEqual(nav.findPath(a, b));
    const fromBuffer = await NavMesh.load(bytes.slice().buffer);
    expect(fromBuffer.tileCount).toBe(1);
    copy.dispose();
    fromBuffer.dispose();
  });

  it('setPolygonFlags changes paths and is saved', async () => {
    const m = await NavMesh.load(nav.save());
    const a = m.randomPoint({ seed: 4 })!;
    const b = m.randomPoint()!;
    const polys = m.polygons();
    for (const p of polys) m.setPolygonFlags(p.ref, 2);
    expect(m.findPath(a, b, { filter: { excludeFlags: 2 } }).status).toBe('none');
    expect(m.findPath(a, b, { filter: { includeFlags: 1 } }).status).toBe('none');
    expect(m.findPath(a, b, { filter: { includeFlags: 2 } })).toEqual(nav.findPath(a, b));
    const again = await NavMesh.load(m.save());
    expect(again.polygons().map((p) => p.flags)).toEqual(polys.map(() => 2));
    m.dispose();
    again.dispose();
  });
});

describe('dispose', () => {
  it('is idempotent; every later call throws NB_ERR_DISPOSED', async () => {
    const m = await NavMesh.load(nav.save());
    expect(m.disposed).toBe(false);
    m.dispose();
    m.dispose();
    expect(m.disposed).toBe(true);
    const p = [0, 0, 0];
    const calls: [string, () => unknown][] = [
      ['save', () => m.save()],
      ['findPath', () => m.findPath(p, p)],
      ['findPaths', () => m.findPaths(new Float32Array(6))],
      ['nearestPoint', () => m.nearestPoint(p)],
      ['raycast', () => m.raycast(p, p)],
      ['randomPoint', () => m.randomPoint()],
      ['seedRandom', () => m.seedRandom(1)],
      ['moveAlong', () => m.moveAlong(p, p)],
      ['distanceToWall', () => m.distanceToWall(p, 1)],
      ['polygons', () => m.polygons()],
      ['setPolygonFlags', () => m.setPolygonFlags(1, 1)],
      ['toGeometry', () => m.toGeometry()],
      ['tileCount', () => m.tileCount],
      ['params', () => m.params],
      ['tiles', () => m.tiles()],
      ['saveTile', () => m.saveTile(0, 0)],
      ['removeTile', () => m.removeTile(0, 0)],
      ['offMeshLink', () => m.offMeshLink(1)],
    ];
    for (const [name, call] of calls) {
      // the message names the call: with many navmeshes, the stale one is found from it
      const e = await expectCode(call, 'NB_ERR_DISPOSED', new RegExp(`^navbake: NavMesh\\.${name}: this NavMesh was disposed$`));
      expect(e, name).toBeInstanceOf(NavBakeError);
    }
    // the other navmeshes are untouched
    expect(nav.polygons().length).toBeGreaterThan(0);
  });
});

describe('forgotten navmeshes', () => {
  it('are freed by the FinalizationRegistry', () => {
    // In a child process with --expose-gc: 50 navmeshes dropped without dispose() are freed after GC.
    const dist = (f: string) => pathToFileURL(resolve(root, 'build/web', f)).href; // liveNavMeshes is internal: the unbundled modules
    const script = `
      import { bake, NavMesh } from '${dist('index.js')}';
      import { liveNavMeshes } from '${dist('navmesh.js')}';
      const quad = { positions: new Float32Array([0,0,0, 10,0,0, 0,0,10, 10,0,10]), indices: new Uint32Array([0,2,1, 1,2,3]) };
      const kept = await bake(quad, {}, { workers: false });
      const bytes = kept.save();
      for (let i = 0; i < 50; i++) (await NavMesh.load(bytes)).findPath([1, 0, 1], [8, 0, 8]);
      const before = liveNavMeshes();
      for (let i = 0; i < 20 && liveNavMeshes() > 1; i++) { gc(); await new Promise((r) => setTimeout(r, 10)); }
      console.log(JSON.stringify({ before, after: liveNavMeshes(), keptWorks: kept.polygons().length }));
    `;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ before: 51, after: 1, keptWorks: 1 });
  });
});

describe('errors: every code the API can produce', () => {
  const tri = { positions: new Float32Array([0, 0, 0, 1, 0, 0, 0, 0, 1]), indices: new Uint32Array([0, 2, 1]) };

  it('NB_ERR_NONFINITE: a NaN coordinate, a NaN config value', async () => {
    const positions = dungeon.positions.slice();
    positions[3 * 5 + 1] = NaN;
    await expectCode(bake({ positions, indices: dungeon.indices }, {}, { workers: false }), 'NB_ERR_NONFINITE', /vertex 5/);
    await expectCode(bake({ positions, indices: dungeon.indices }, { tileSize: 32 }, { workers: false }), 'NB_ERR_NONFINITE', /vertex 5/);
    await expectCode(bake(dungeon, { cellSize: NaN }, { workers: false }), 'NB_ERR_NONFINITE', /^navbake: config\.cellSize/);
    await expectCode(async () => nav.findPath([NaN, 0, 0], [0, 0, 0]), 'NB_ERR_NONFINITE');
  });

  it('NB_ERR_INDEX_RANGE: an index past the vertices', async () => {
    const indices = dungeon.indices.slice();
    indices[10] = dungeon.positions.length / 3;
    await expectCode(bake({ positions: dungeon.positions, indices }, {}, { workers: false }), 'NB_ERR_INDEX_RANGE', /triangle 3/);
    // tiled: numbered in the whole mesh, on this thread and in the workers
    await expectCode(bake({ positions: dungeon.positions, indices }, { tileSize: 32 }, { workers: false }), 'NB_ERR_INDEX_RANGE', /triangle 3 /);
    await expectCode(bake({ positions: dungeon.positions, indices }, { tileSize: 32 }, { workers: 2 }), 'NB_ERR_INDEX_RANGE', /triangle 3 /);
  });

  it('NB_ERR_EMPTY_MESH: no vertices, no triangles', async () => {
    await expectCode(bake({ positions: new Float32Array(0) }, {}, { workers: false }), 'NB_ERR_EMPTY_MESH');
    await expectCode(bake({ positions: dungeon.positions, indices: new Uint32Array(0) }, {}, { workers: false }), 'NB_ERR_EMPTY_MESH');
    await expectCode(bake({ positions: dungeon.positions, indices: new Uint32Array(0) }, { tileSize: 32 }, { workers: false }), 'NB_ERR_EMPTY_MESH');
  });

  it('NB_ERR_EMPTY_MESH: no triangle with an area (buffers never filled), solo and tiled, here and in workers', async () => {
    const unfilled = { positions: new Float32Array(dungeon.positions.length), indices: dungeon.indices };
    const noIndices = { positions: dungeon.positions, indices: new Uint32Array(dungeon.indices.length) };
    const n = dungeon.indices.length / 3;
    for (const geometry of [unfilled, noIndices])
      for (const config of [{}, { tileSize: 32 }])
        for (const workers of [false, 2] as const)
          await expectCode(bake(geometry, config, { workers }), 'NB_ERR_EMPTY_MESH', new RegExp(`all ${n} triangles are degenerate`));
    // one real triangle among them is enough
    const one = noIndices.indices.slice();
    one.set(dungeon.indices.subarray(0, 3));
    (await bake({ positions: dungeon.positions, indices: one }, {}, { workers: false })).dispose();
  });

  it('NB_ERR_INVALID_CONFIG: out of range, zero where zero is not allowed, unknown field, bad partition', async () => {
    const cases: [NavBakeConfig | Record<string, unknown>, RegExp][] = [
      // C's messages name the fields as the config object does (they said config.cell_size)
      [{ cellSize: -1 }, /^navbake: config\.cellSize must be > 0/],
      [{ cellSize: 0 }, /cellSize must not be 0/],
      [{ agentRadius: -1 }, /agentRadius must be >= 0/],
      [{ vertsPerPoly: 20 }, /config\.vertsPerPoly/],
      [{ agentMaxSlope: 90 }, /config\.agentMaxSlope/],
      [{ tileSize: 8 }, /config\.tileSize/],
      // agentRadius is limited in cells: the message names cellSize, which makes it too many
      [{ cellSize: 1e-4 }, /config\.agentRadius must be >= 0 and at most 127 cells \(127 \* cellSize\) \(got 0\.6, its default: set it to suit the other fields\)$/],
      // the value as given (C's 6 digits said 1000 and 51, which look valid)
      [{ cellSize: 1000.0001 }, /config\.cellSize must be > 0 and <= 1000 \(got 1000\.0001\)$/],
      [{ agentHeight: 51.00001 }, /\(255 \* cellHeight\) \(got 51\.00001\)$/],
      // a default another field rules out: the caller never wrote detailSampleDist
      [{ cellSize: 5 }, /config\.detailSampleDist must be 0 \(no sampling\) or >= 0\.9 \* cellSize and <= 1e6 \(got 1\.8, its default/],
      // integers in C: a fraction was truncated without a word
      [{ vertsPerPoly: 6.5 }, /config\.vertsPerPoly must be an integer \(got 6\.5\)/],
      [{ tileSize: 32.5 }, /config\.tileSize must be an integer \(got 32\.5\)/],
      [{ cellSise: 0.3 }, /unknown config field 'cellSise'/],
      [{ partition: 'voronoi' }, /partition/],
      [{ cellSize: '0.3' }, /must be a number/],
      [{ cellSize: null }, /config\.cellSize must be a number \(got null\)/],
      // partition is a name: C's enum numbers were taken, 1.5 truncated, -1 wrapped to 4294967295
      [{ partition: 2 }, /config\.partition must be one of watershed, monotone, layers, wavefront \(got 2\)/],
      [{ partition: true }, /config\.partition must be one of .* \(got true\)/],
      // 32-bit integers in C: 2^32 + 6 arrived as a negative number
      [{ vertsPerPoly: 2 ** 32 + 6 }, /config\.vertsPerPoly is out of range \(got 4294967302\)/],
      [{ tileSize: 1e20 }, /config\.tileSize is out of range/],
      // float32 in C: 1e-50 arrived as 0, the default (0.6 for agentRadius), without a word
      [{ agentRadius: 1e-50 }, /config\.agentRadius \(1e-50\) is 0 in float32/],
      [{ cellSize: 1e-50 }, /config\.cellSize \(1e-50\) is 0 in float32/],
    ];
    for (const [config, msg] of cases) {
      await expectCode(bake(tri, config as NavBakeConfig, { workers: false }), 'NB_ERR_INVALID_CONFIG', msg);
    }
  });

  it('NB_ERR_INVALID_ARG: array shapes, area ids, options', async () => {
    await expectCode(bake({ positions: new Float32Array(10) }, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /multiple of 3/);
    await expectCode(bake({ positions: tri.positions, indices: new Uint32Array(4) }, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /indices/);
    await expectCode(bake({ ...tri, areas: new Uint8Array(2) }, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /areas.length/);
    await expectCode(bake({ ...tri, areas: new Uint8Array([64]) }, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /areas\[0\] is 64/);
    await expectCode(bake({ ...tri, areas: new Uint8Array([64]) }, { tileSize: 16 }, { workers: false }), 'NB_ERR_INVALID_ARG', /areas\[0\] is 64/);
    await expectCode(bake({ ...tri, areas: new Uint8Array([64]) }, { tileSize: 16 }, { workers: 1 }), 'NB_ERR_INVALID_ARG', /areas\[0\] is 64/);
    await expectCode(bake({ positions: new Float32Array(12) }, {}, { workers: false }), 'NB_ERR_INVALID_ARG', /multiple of 3/);
    // tiled, as solo: fewer vertices than a triangle is the same mistake (it was NB_ERR_EMPTY_MESH)
    for (const n of [3, 12]) {
      await expectCode(bake({ positions: new Float32Array(n) }, { tileSize: 16 }, { workers: false }), 'NB_ERR_INVALID_ARG', /without indices vertex_count must be a multiple of 3/);
    }
    await expectCode(bake(tri, {}, { workers: 0 }), 'NB_ERR_INVALID_ARG', /workers/);
    await expectCode(async () => nav.findPaths(new Float32Array(7)), 'NB_ERR_INVALID_ARG', /6 floats/);
    await expectCode(async () => nav.findPath([0, 0, 0], [1, 1, 1], { crossings: 'some' as 'all' }), 'NB_ERR_INVALID_ARG');
  });

  it('NB_ERR_TOO_LARGE: a grid or a tile count beyond the limits', async () => {
    await expectCode(bake(dungeon, { cellSize: 0.001, agentRadius: 0.1 }, { workers: false }), 'NB_ERR_TOO_LARGE', /2\^28/);
    await expectCode(bake(dungeon, { cellSize: 0.01, tileSize: 16 }, { workers: false }), 'NB_ERR_TOO_LARGE', /4095/);
    // A vertex no triangle uses still counts in the bounds: the message gives them, and names fields as the config
    // object does (C's words were cell_size).
    const stray = new Float32Array([...dungeon.positions, 1e5, 0, 1e5]);
    await expectCode(
      bake({ positions: stray, indices: dungeon.indices }, {}, { workers: false }),
      'NB_ERR_TOO_LARGE',
      /\(the bounds, every vertex counted: x -[\d.]+ \.\. 100000, z -[\d.]+ \.\. 100000\), above the limit of 2\^28; raise cellSize or bake in tiles$/,
    );
    // Every vertex within 1e9, but the level wider than that: the width a navmesh cannot hold, in the level's terms
    // (it was NB_ERR_INVALID_ARG naming nb_navmesh_create's tile_width, "1e+09 is beyond 1e+09").
    const wide = new Float32Array([0, 0, 0, 0, 0, 100, 100, 0, 0, -1e9, 0, 0]);
    for (const workers of [false, 1] as const) {
      await expectCode(
        bake({ positions: wide, indices: new Uint32Array([0, 1, 2]) }, {}, { workers }),
        'NB_ERR_TOO_LARGE',
        /the level is 1000000128 wide in x \(every vertex counted: -1000000000 \.\. 100\), beyond 1e\+09, the most a navmesh holds; remove the stray vertices$/,
      );
    }
  });

  it('NB_ERR_CORRUPT and NB_ERR_VERSION: bad bytes to NavMesh.load, existing navmeshes intact', async () => {
    const bytes = nav.save();
    await expectCode(NavMesh.load(new Uint8Array(0)), 'NB_ERR_CORRUPT', /truncated/);
    await expectCode(NavMesh.load(bytes.subarray(0, bytes.length - 7)), 'NB_ERR_CORRUPT');
    await expectCode(NavMesh.load(new TextEncoder().encode('not a navmesh at all, really not')), 'NB_ERR_CORRUPT', /magic/);
    const flipped = bytes.slice();
    flipped[flipped.length >> 1] ^= 0x40;
    await expectCode(NavMesh.load(flipped), 'NB_ERR_CORRUPT');
    const future = bytes.slice();
    new DataView(future.buffer).setUint32(4, 99, true);
    await expectCode(NavMesh.load(future), 'NB_ERR_VERSION', /version 99/);
    expect(nav.save()).toEqual(bytes);
  });

  it('NB_ERR_NOT_FOUND: a polygon ref that is not in the navmesh', async () => {
    await expectCode(async () => nav.setPolygonFlags(0x7fffffff, 1), 'NB_ERR_NOT_FOUND', /not a polygon/);
  });

  it('NB_ERR_CANCELLED surfaces as the abort reason; a throwing onProgress rejects with its error', async () => {
    const ac = new AbortController();
    const seen: string[] = [];
    const err = await bake(dungeon, {}, {
      workers: false,
      signal: ac.signal,
      onProgress: (p) => {
        seen.push(p.stage);
        if (p.stage === 'regions') ac.abort();
      },
    }).catch((e) => e);
    expect(err).toBeInstanceOf(DOMException);
    expect((err as DOMException).name).toBe('AbortError');
    expect(seen).not.toContain('contours');
    const boom = new Error('boom');
    await expect(bake(dungeon, {}, { workers: false, onProgress: () => { throw boom; } })).rejects.toBe(boom);
    await expect(bake(dungeon, {}, { workers: false, signal: AbortSignal.abort('why') })).rejects.toBe('why');
    // the wasm instance is fine afterwards
    const again = await bake(dungeon, {}, { workers: false });
    expect(again.save()).toEqual(nav.save());
    again.dispose();
  });

  // Not reachable from TypeScript, by design: NB_ERR_NULL_ARG (every pointer is ours), NB_ERR_BUFFER_TOO_SMALL
  // (buffers are sized and retried here; see the findPaths test), NB_ERR_ALREADY_EXISTS (tiles come from one
  // grid). NB_ERR_OUT_OF_MEMORY needs a heap near 2 GB: not in a fast test. NB_ERR_WORKER: workers.test.ts.
});
