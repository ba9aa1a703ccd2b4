// Long paths on the big generated world (`navbake world`, about a million triangles, 9868 polygons in 64-cell
// tiles): a path across it explores more polygons than a 2048-node A* pool holds. The query's node pool grows with
// the navmesh (one node per polygon), also when tiles stream in after the first query, and the native tool's
// queries size theirs the same way. Also: the world's raw .bin (the demo's file) holds the triangles of its .obj.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, NavMesh, terminateWorkers, type Vec3 } from '../../web/dist/index.js';
import { parseObj, runNative, type Mesh } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'navbake-world-'));
let world: Mesh;
let nav: NavMesh;

/** Reads the demo's raw geometry file: "NBGM", version, vertex count, triangle count, positions, indices. */
function readBin(path: string): Mesh {
  const b = readFileSync(path);
  const ab = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  const head = new DataView(ab, 0, 16);
  expect(String.fromCharCode(...new Uint8Array(ab, 0, 4))).toBe('NBGM');
  expect(head.getUint32(4, true)).toBe(1);
  const nv = head.getUint32(8, true);
  const nt = head.getUint32(12, true);
  expect(ab.byteLength).toBe(16 + nv * 12 + nt * 12);
  return { positions: new Float32Array(ab, 16, nv * 3), indices: new Uint32Array(ab, 16 + nv * 12, nt * 3) };
}

/** The navmesh point nearest a point of the world's xz square at fractions (fx, fz) of its side. */
function at(n: NavMesh, fx: number, fz: number): Vec3 {
  const { origin, tileWidth } = n.params;
  const side = 36 * tileWidth; // the 1M world is 36 x 36 tiles of 64 cells
  const p = n.nearestPoint([origin[0] + fx * side, 0, origin[2] + fz * side], { halfExtents: [20, 100, 20] });
  expect(p, `no navmesh near (${fx}, ${fz})`).not.toBeNull();
  return p!.point;
}

const CORNERS: [number, number][] = [
  [0.05, 0.05],
  [0.95, 0.95],
  [0.05, 0.95],
  [0.95, 0.05],
];

beforeAll(async () => {
  const bin = join(dir, 'world.bin');
  expect(runNative(['world', '--seed', '1', '--triangles', '1000000', '-o', bin]).status).toBe(0);
  world = readBin(bin);
  nav = await bake(world, { tileSize: 64 }, { workers: 2 });
}, 120_000);

afterAll(() => {
  nav?.dispose();
  terminateWorkers();
  rmSync(dir, { recursive: true, force: true });
});

describe('the big world', () => {
  it('the .bin holds the same triangles as the .obj the tool writes', () => {
    const small = join(dir, 'small');
    expect(runNative(['world', '--seed', '3', '--triangles', '20000', '-o', `${small}.obj`]).status).toBe(0);
    expect(runNative(['world', '--seed', '3', '--triangles', '20000', '-o', `${small}.bin`]).status).toBe(0);
    const obj = parseObj(readFileSync(`${small}.obj`, 'utf8'));
    const bin = readBin(`${small}.bin`);
    expect(bin.indices).toEqual(obj.indices);
    expect(bin.positions.length).toBe(obj.positions.length);
    // the .obj prints 6 significant digits; the .bin has the floats themselves
    let worst = 0;
    for (let i = 0; i < obj.positions.length; i++) {
      worst = Math.max(worst, Math.abs(bin.positions[i] - obj.positions[i]) / Math.max(1, Math.abs(bin.positions[i])));
    }
    expect(worst).toBeLessThan(1e-5);
  });

  it('finds complete paths between opposite corners (more polygons than a 2048-node search holds)', () => {
    expect(world.indices.length / 3).toBeGreaterThan(990_000);
    expect(nav.polygons().length).toBeGreaterThan(4096);
    for (const [a, b] of [
      [0, 1],
      [2, 3],
    ]) {
      const s = at(nav, ...CORNERS[a]);
      const e = at(nav, ...CORNERS[b]);
      const r = nav.findPath(s, e);
      expect(r.status, `corner ${a} to corner ${b}`).toBe('complete');
      // across the 690 m square's diagonal, round buildings and hills: longer than the straight line
      const straight = Math.hypot(e[0] - s[0], e[2] - s[2]);
      expect(straight).toBeGreaterThan(800);
      expect(r.length).toBeGreaterThan(straight);
      expect(r.length).toBeLessThan(straight * 1.2);
    }
  });

  it('the native tool finds the same long paths in the saved file (its queries size their pool the same way)', () => {
    const file = join(dir, 'world.navbake');
    writeFileSync(file, nav.save());
    for (const [a, b] of [
      [0, 1],
      [2, 3],
    ]) {
      const s = at(nav, ...CORNERS[a]) as number[];
      const e = at(nav, ...CORNERS[b]) as number[];
      const r = runNative(['path', file, '--from', s.join(','), '--to', e.join(','), '--json']);
      expect(r.status, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { status: string; length: number };
      expect(out.status).toBe('complete');
      expect(out.length).toBeCloseTo(nav.findPath(s, e).length, 2);
    }
  });

  it('streamed in after a first query, the tiles still give complete long paths (the pool grows)', async () => {
    const file = nav.save();
    const { params, tiles } = NavMesh.readTiles(file);
    const streamed = await NavMesh.create(params);
    try {
      // one tile first, queried (a small pool), then the rest
      const first = tiles.find((t) => t.x === 1 && t.z === 1) ?? tiles[0];
      streamed.loadTile(first.bytes);
      expect(streamed.nearestPoint(at(nav, (first.x + 0.5) / 36, (first.z + 0.5) / 36), { halfExtents: [20, 100, 20] })).not.toBeNull();
      for (const t of tiles) if (t !== first) streamed.loadTile(t.bytes);
      const r = streamed.findPath(at(nav, ...CORNERS[0]), at(nav, ...CORNERS[1]));
      expect(r.status).toBe('complete');
      expect(r.length).toBeCloseTo(nav.findPath(at(nav, ...CORNERS[0]), at(nav, ...CORNERS[1])).length, 3);
      // the batch call uses the same pool
      const pairs = new Float32Array([...(at(nav, ...CORNERS[2]) as number[]), ...(at(nav, ...CORNERS[3]) as number[])]);
      expect(streamed.findPaths(pairs).status[0]).toBe(2);
    } finally {
      streamed.dispose();
    }
  });
});
