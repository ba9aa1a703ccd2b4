// voxelize() and VoxelGrid: the occupancy grid through the package, in a worker and on the main thread, and 3D
// path searches (walk, climb, fly) checked against the grid itself and against the navmesh of the same level.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bake, NavBakeError, terminateWorkers, voxelize, VoxelGrid, type NavMesh, type VoxelPathOptions } from '../../web/dist/index.js';
import { loadMesh, runNative, meshesDir, type Mesh } from './helpers';
import { resolve } from 'node:path';

/** Triangles of axis-aligned boxes, outward-facing. */
function boxes(list: [number, number, number, number, number, number][]): Mesh {
  const pos: number[] = [];
  const idx: number[] = [];
  for (const [x0, y0, z0, x1, y1, z1] of list) {
    const b = pos.length / 3;
    for (let i = 0; i < 8; i++) pos.push(i & 1 ? x1 : x0, i & 2 ? y1 : y0, i & 4 ? z1 : z0);
    const quads = [
      [0, 1, 3, 2], // y0... faces as corner indices (bit 0 = x, bit 1 = y, bit 2 = z)
      [4, 6, 7, 5],
      [0, 4, 5, 1],
      [2, 3, 7, 6],
      [0, 2, 6, 4],
      [1, 5, 7, 3],
    ];
    for (const [a, c, d, e] of quads) idx.push(b + a, b + c, b + d, b + a, b + d, b + e);
  }
  return { positions: new Float32Array(pos), indices: new Uint32Array(idx) };
}

async function expectCode(f: () => unknown, code: string, message?: RegExp): Promise<void> {
  let err: unknown;
  try {
    await f();
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${code}`).toBeInstanceOf(NavBakeError);
  expect((err as NavBakeError).code, (err as Error).message).toBe(code);
  if (message) expect((err as Error).message).toMatch(message);
}

const len = (p: Float32Array) => {
  let s = 0;
  for (let i = 3; i < p.length; i += 3) s += Math.hypot(p[i] - p[i - 3], p[i + 1] - p[i - 2], p[i + 2] - p[i - 1]);
  return s;
};

/** The agent's box at voxel v is free (outside the grid counts as free). */
function boxFree(g: VoxelGrid, v: ArrayLike<number>, h: number, r: number): boolean {
  for (let y = v[1]; y < v[1] + h; y++)
    for (let z = v[2] - r; z <= v[2] + r; z++) for (let x = v[0] - r; x <= v[0] + r; x++) if (g.isSolid(x, y, z)) return false;
  return true;
}

/** Independent check of an unsmoothed path: each step is a neighbour and each voxel is a legal place. */
function checkPath(g: VoxelGrid, voxels: Int32Array, move: 'walk' | 'climb' | 'fly', h: number, climb: number): void {
  const [dx, dy, dz] = g.dims;
  for (let i = 0; i < voxels.length; i += 3) {
    const v = [voxels[i], voxels[i + 1], voxels[i + 2]];
    expect(v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[0] < dx && v[1] < dy && v[2] < dz, `voxel ${v} inside`).toBe(true);
    expect(boxFree(g, v, h, 0), `voxel ${v} free`).toBe(true);
    if (move === 'walk') expect(g.isSolid(v[0], v[1] - 1, v[2]), `voxel ${v} on the ground`).toBe(true);
    if (move === 'climb') {
      let touches = false;
      for (const [ox, oy, oz] of [[1, 0, 0], [-1, 0, 0], [0, -1, 0], [0, h, 0], [0, 0, 1], [0, 0, -1], [1, -1, 0], [-1, -1, 0], [0, -1, 1], [0, -1, -1]]) {
        for (let y = oy === 0 ? v[1] : v[1] + oy; y <= (oy === 0 ? v[1] + h - 1 : v[1] + oy); y++) touches ||= g.isSolid(v[0] + ox, y, v[2] + oz);
      }
      expect(touches, `voxel ${v} touches a surface`).toBe(true);
    }
    if (i > 0) {
      const d = [0, 1, 2].map((k) => voxels[i + k] - voxels[i - 3 + k]);
      if (move === 'walk') {
        expect(Math.max(Math.abs(d[0]), Math.abs(d[2])), `step ${i / 3}`).toBe(1);
        expect(Math.abs(d[1]), `step ${i / 3} height`).toBeLessThanOrEqual(climb);
      } else {
        expect(Math.max(...d.map(Math.abs)), `step ${i / 3}`).toBe(1);
      }
    }
  }
}

describe('voxelize', () => {
  let dungeon: Mesh;
  beforeAll(() => {
    dungeon = loadMesh('dungeon.obj');
  });
  afterAll(() => terminateWorkers());

  it('gives the same grid in a worker and on the main thread, over the native tool\'s columns', async () => {
    const a = await voxelize(dungeon);
    const b = await voxelize(dungeon, {}, { workers: false });
    const native = runNative(['voxels', resolve(meshesDir, 'dungeon.obj'), '--json']);
    expect(native.status, native.stderr).toBe(0);
    const grid = JSON.parse(native.stdout).grid as [number, number];
    expect([a.dims[0], a.dims[2]]).toEqual(grid);
    expect(a.dims).toEqual(b.dims);
    expect(a.origin).toEqual(b.origin);
    const wa = a.occupancy().words;
    expect(Buffer.from(wa.buffer).equals(Buffer.from(b.occupancy().words.buffer))).toBe(true);
    expect(wa.length).toBe(Math.ceil((a.dims[0] * a.dims[1] * a.dims[2]) / 32));
    // a level has floors: some voxels are solid, most are air
    let solid = 0;
    for (const w of wa) for (let k = 0; k < 32; k++) solid += (w >>> k) & 1;
    expect(solid).toBeGreaterThan(0);
    expect(solid).toBeLessThan(a.dims[0] * a.dims[1] * a.dims[2] / 2);
    a.dispose();
    b.dispose();
  });

  it('puts a box\'s surface where the box is, at the config\'s voxel size', async () => {
    // a floor slab 0..8 x 0..0.5 x 0..8 and a block 3..5 x 0..2 x 3..5 on it
    const g = await voxelize(boxes([[0, 0, 0, 8, 0.5, 8], [3, 0, 3, 5, 2, 5]]), { cellSize: 0.5, cellHeight: 0.25 }, { workers: false });
    expect(g.cellSize).toBe(0.5);
    expect(g.cellHeight).toBe(0.25);
    // 8 m at 0.5: 16 voxels, and a 17th that holds the slab's faces at x = 8 and z = 8
    expect(g.dims[0]).toBe(17);
    expect(g.dims[2]).toBe(17);
    const edge = g.voxelAt([8, 0.25, 4]);
    expect(edge[0]).toBe(16);
    expect(g.isSolid(edge[0], edge[1], edge[2])).toBe(true);
    // The slab's top face (y 0.5) is solid in the voxel layer it lies in, and free above: as in the navmesh's
    // rasterization, a floor on a layer boundary fills the layer above it (span tops round up).
    const col = g.voxelAt([1, 0.5, 1]);
    const firstFree = (x: number, z: number, from: number) => {
      let y = from;
      while (g.isSolid(x, y, z)) y++;
      return y;
    };
    const top = [col[0], firstFree(col[0], col[2], col[1]), col[2]] as const;
    expect(g.pointOf(top[0], top[1], top[2])[1]).toBeGreaterThanOrEqual(0.5);
    expect(g.pointOf(top[0], top[1], top[2])[1]).toBeLessThanOrEqual(0.5 + 0.25);
    for (let y = top[1]; y < g.dims[1]; y++) expect(g.isSolid(top[0], y, top[2])).toBe(false);
    expect(g.isSolid(top[0], top[1] - 1, top[2])).toBe(true);
    // on the block: free from just above y 2; its wall columns are solid all the way up
    const onBlock = g.voxelAt([4, 0, 4]);
    const blockTop = g.pointOf(onBlock[0], firstFree(onBlock[0], onBlock[2], g.voxelAt([4, 2, 4])[1]), onBlock[2])[1];
    expect(blockTop).toBeGreaterThanOrEqual(2);
    expect(blockTop).toBeLessThanOrEqual(2.25);
    const side = g.voxelAt([3.1, 1.2, 4]);
    expect(g.isSolid(side[0], side[1], side[2])).toBe(true);
    // inside the block, between its floor and its top, is air (only surfaces are rasterized)
    const inside = g.voxelAt([4, 1.2, 4]);
    expect(g.isSolid(inside[0], inside[1], inside[2])).toBe(false);
    expect(g.isSolid(-1, 0, 0)).toBe(false);
    g.dispose();
  });

  it('adds headroom above the top so agents can stand on it', async () => {
    const slab = boxes([[0, 0, 0, 6, 0.5, 6]]);
    const config = { cellSize: 0.25, cellHeight: 0.25, agentHeight: 1 };
    const bare = await voxelize(slab, config, { workers: false, headroom: 0 });
    const roomy = await voxelize(slab, config, { workers: false }); // default: agentHeight, 4 layers
    const tall = await voxelize(slab, config, { workers: false, headroom: 2.1 }); // rounded up: 9 layers
    expect(roomy.dims[1]).toBe(bare.dims[1] + 4);
    expect(tall.dims[1]).toBe(bare.dims[1] + 9);
    expect(roomy.cellSize).toBe(0.25);
    // the same solid voxels, and air above
    for (const [x, z] of [[0, 0], [5, 7], [23, 23]]) {
      for (let y = 0; y < bare.dims[1]; y++) expect(roomy.isSolid(x, y, z)).toBe(bare.isSolid(x, y, z));
      for (let y = bare.dims[1]; y < roomy.dims[1]; y++) expect(roomy.isSolid(x, y, z)).toBe(false);
    }
    const walk = { agentHeight: 1, smooth: false } as const;
    // Without headroom the slab's top is the grid's top: the only place to walk is the air inside the (hollow)
    // slab, between its bottom and top faces. With it, the walk is on the top.
    const under = bare.findPath([1, 0.6, 1], [5, 0.6, 5], walk);
    expect(Array.from(under.points.filter((_, i) => i % 3 === 1)).every((y) => y < 0.5)).toBe(true);
    const r = roomy.findPath([1, 0.6, 1], [5, 0.6, 5], walk);
    expect(r.status).toBe('complete');
    checkPath(roomy, r.voxels, 'walk', 4, 0);
    expect(Array.from(r.points.filter((_, i) => i % 3 === 1)).every((y) => y >= 0.5)).toBe(true);
    await expectCode(() => voxelize(slab, config, { headroom: -1 }), 'NB_ERR_INVALID_ARG', /headroom/);
    for (const g of [bare, roomy, tall]) g.dispose();
  });

  it('fillEnclosed: the inside of closed meshes becomes solid, so ends never snap into it', async () => {
    // a floor and a closed 2 x 2 x 2 block on it; the floor slab is closed too
    const level = boxes([[0, 0, 0, 10, 0.5, 10], [4, 0.5, 4, 6, 2.5, 6]]);
    const config = { cellSize: 0.25, cellHeight: 0.25 };
    const solids = (g: VoxelGrid) => {
      let n = 0;
      for (const w of g.occupancy().words) for (let b = w; b; b &= b - 1) n++;
      return n;
    };
    const hollow = await voxelize(level, config, { workers: false });
    const filled = await voxelize(level, config, { workers: false, fillEnclosed: true });
    const inWorker = await voxelize(level, config, { fillEnclosed: true });
    expect(hollow.filled).toBe(0);
    expect(filled.filled).toBeGreaterThan(0);
    expect(solids(filled)).toBe(solids(hollow) + filled.filled);
    expect(inWorker.filled).toBe(filled.filled);
    expect(inWorker.occupancy().words).toEqual(filled.occupancy().words);
    const [bx, by, bz] = filled.voxelAt([5, 1.5, 5]);
    expect([hollow.isSolid(bx, by, bz), filled.isSolid(bx, by, bz)]).toEqual([false, true]);
    // A fly to a point just inside the block's face: on the hollow grid it snaps inside, where nothing leads
    // (partial); on the filled grid it snaps to the face's outside and arrives.
    const o = { move: 'fly', agentHeight: 0.25, searchRadius: 0.5, smooth: false } as const;
    const from = [1, 1.5, 1];
    const to = [4.4, 1.5, 5]; // in the free voxel behind the face's solid one
    expect(hollow.findPath(from, to, o).status).toBe('partial');
    const r = filled.findPath(from, to, o);
    expect(r.status).toBe('complete');
    expect(r.points[r.points.length - 3]).toBeLessThan(4);
    // A level closed all round (a room): everything inside is enclosed, unless a point says where the open space is.
    const room = boxes([[0, 0, 0, 8, 0.5, 8], [0, 3.5, 0, 8, 4, 8], [0, 0.5, 0, 0.5, 3.5, 8], [7.5, 0.5, 0, 8, 3.5, 8], [0.5, 0.5, 0, 7.5, 3.5, 0.5], [0.5, 0.5, 7.5, 7.5, 3.5, 8]]);
    const sealed = await voxelize(room, config, { workers: false, headroom: 0, fillEnclosed: true });
    const open = await voxelize(room, config, { workers: false, headroom: 0, fillEnclosed: [[4, 2, 4]] });
    expect(sealed.filled).toBeGreaterThan(open.filled + 1000); // the room's air
    expect(sealed.findPath([4, 0.5, 4], [5, 0.5, 5], { agentHeight: 1 }).status).toBe('none');
    expect(open.findPath([4, 0.5, 4], [5, 0.5, 5], { agentHeight: 1 }).status).toBe('complete');
    // a seed at the feet of someone on the floor lies in the floor's top voxel: it seeds from the voxel above
    for (const feet of [[4, 0.5, 4], [4, 0.6, 4]]) {
      const g = await voxelize(room, config, { workers: false, headroom: 0, fillEnclosed: [feet] });
      expect(g.filled, String(feet)).toBe(open.filled);
      g.dispose();
    }
    // inside a thick solid (the floor slab's top voxel and the one above are solid where the wall stands on it)
    await expectCode(
      () => voxelize(room, config, { workers: false, headroom: 0, fillEnclosed: [[4, 2, 4], [0.1, 0.5, 4]] }),
      'NB_ERR_INVALID_ARG',
      /navbake\.voxelize: options\.fillEnclosed\[1\] \(0\.1, 0\.5, 4\) is inside solid voxels/,
    );
    await expectCode(() => voxelize(level, config, { fillEnclosed: 'yes' as never }), 'NB_ERR_INVALID_ARG', /fillEnclosed must be true, false or an array of points/);
    await expectCode(() => voxelize(level, config, { fillEnclosed: [[0, NaN, 0]] }), 'NB_ERR_NONFINITE', /fillEnclosed\[0\]\[1\]/);
    await expectCode(() => voxelize(level, config, { workers: false, fillEnclosed: [[1, 1, 1], [50, 1, 1]] }), 'NB_ERR_INVALID_ARG', /options\.fillEnclosed\[1\] \(50, 1, 1\) lies outside the voxel grid \(x 0\.\.10/);
    for (const g of [hollow, filled, inWorker, sealed, open]) g.dispose();
  });

  it('covers the whole mesh: a wall on the +x bound and what lies in a last partial cell are solid', async () => {
    // a room of single quads, walls 3 high on all four bounds of an 8 x 8 floor
    const quad = (a: number[], b: number[], c: number[], d: number[]) => [a, b, c, a, c, d];
    const tris = [
      ...quad([0, 0, 0], [0, 0, 8], [8, 0, 8], [8, 0, 0]),
      ...quad([0, 0, 0], [0, 3, 0], [0, 3, 8], [0, 0, 8]),
      ...quad([8, 0, 0], [8, 0, 8], [8, 3, 8], [8, 3, 0]),
      ...quad([0, 0, 0], [8, 0, 0], [8, 3, 0], [0, 3, 0]),
      ...quad([0, 0, 8], [0, 3, 8], [8, 3, 8], [8, 0, 8]),
    ];
    const g = await voxelize({ positions: new Float32Array(tris.flat()) }, { cellSize: 0.25, cellHeight: 0.25 }, { workers: false });
    const wallVoxels = (x: number, z: number) => {
      let n = 0;
      for (let y = 0; y < g.dims[1]; y++) n += g.isSolid(x, y, z) ? 1 : 0;
      return n;
    };
    const far = g.voxelAt([8, 1, 4]);
    expect(far[0]).toBe(g.dims[0] - 1);
    expect(wallVoxels(far[0], far[2])).toBe(wallVoxels(0, far[2])); // the x = 8 wall as solid as the x = 0 one
    // a walker of radius 0.5 keeps its body inside the room on both sides (east it reached x 7.875: 0.375 through
    // the wall). (A wall's voxel lies on its +x side: the x = 0 wall's inside the room, the x = 8 wall's outside.)
    const o = { agentRadius: 0.5, agentHeight: 1 };
    const east = g.findPath([4, 0.1, 4], [7.9, 0.1, 4], o).points;
    const west = g.findPath([4, 0.1, 4], [0.1, 0.1, 4], o).points;
    expect(east[east.length - 3] + 0.5).toBeLessThanOrEqual(8);
    expect(west[west.length - 3] - 0.5).toBeGreaterThanOrEqual(0);
    g.dispose();
    // a closed box whose far faces lie past the last whole cell (6 m at 0.3: 20 cells) is filled
    for (const size of [6, 6.2]) {
      const box = await voxelize(boxes([[0, 0, 0, size, 3, 6]]), { cellSize: 0.3, cellHeight: 0.2 }, { workers: false, fillEnclosed: true });
      expect(box.filled, `box of ${size}`).toBeGreaterThan(3000);
      box.dispose();
    }
  });

  it('searchRadius is a distance: an end whose nearest place lies farther finds none', async () => {
    const g = await voxelize(boxes([[0, 0, 0, 4, 0.5, 4], [9.5, 0, 9.5, 10, 0.5, 10]]), { cellSize: 0.3, cellHeight: 0.2 }, { workers: false });
    const o = { agentHeight: 1 };
    // the nearest floor to (5.4, 1.5, 5.4) is the slab's corner, about 2.1 m away (within the 1 m cube's 5 voxels)
    expect(g.findPath([1, 0.5, 1], [5.4, 1.5, 5.4], { ...o, searchRadius: 1 }).status).toBe('none');
    const r = g.findPath([1, 0.5, 1], [5.4, 1.5, 5.4], { ...o, searchRadius: 2.5 });
    expect(r.status).toBe('complete');
    const end = r.points.slice(-3);
    expect(Math.hypot(end[0] - 5.4, end[1] - 1.5, end[2] - 5.4)).toBeLessThan(2.5);
    g.dispose();
  });

  it("pointOf and a path's points lie in their own voxels (rounding put some in the layer below)", async () => {
    const g = await voxelize(dungeon, {}, { workers: false });
    const [dx, dy, dz] = g.dims;
    let wrong = 0;
    for (let y = 0; y < dy; y++) {
      for (const [x, z] of [[0, 0], [dx >> 1, dz >> 1], [dx - 1, dz - 1]]) {
        const v = g.voxelAt(g.pointOf(x, y, z));
        if (v[0] !== x || v[1] !== y || v[2] !== z) wrong++;
      }
    }
    expect(wrong).toBe(0);
    const a = [36.5, 10.2, 5.7];
    const b = [26.2, 15.5, -83.3];
    const r = g.findPath(a, b, { smooth: false });
    expect(r.status).toBe('complete');
    for (let i = 0; i < r.voxels.length; i += 3) expect(g.voxelAt(r.points.slice(i, i + 3))).toEqual(Array.from(r.voxels.slice(i, i + 3)));
    // a search from a path's own points, snapping nowhere, finds it again
    expect(g.findPath(r.points.slice(0, 3), r.points.slice(-3), { smooth: false, searchRadius: 0 }).status).toBe('complete');
    g.dispose();
  });

  it('checks its arguments and honours abort', async () => {
    await expectCode(() => voxelize({ positions: new Float32Array([0, 0, 0, 1, 0, 0, NaN, 0, 1]) }, {}, { workers: false }), 'NB_ERR_NONFINITE');
    await expectCode(() => voxelize(dungeon, { cellSize: -1 }), 'NB_ERR_INVALID_CONFIG', /cellSize/);
    await expectCode(() => voxelize(dungeon, {}, { worker: false } as never), 'NB_ERR_INVALID_ARG', /worker/);
    // two small triangles far apart: 3334 x 8000 x 3334 voxels
    const far = new Float32Array([0, 0, 0, 0, 0, 1, 1, 0, 0, 999, 1600, 999, 999, 1600, 1000, 1000, 1600, 999]);
    await expectCode(() => voxelize({ positions: far }), 'NB_ERR_TOO_LARGE', /about 3334 x 80\d\d x 3334 voxels, over 2\^32/);
    // a flat floor fills one layer under its headroom: 702 x (1 + 8190) x 747 is over 2^32 by half a million voxels,
    // refused before rasterizing (by the C check after it, before)
    const flat = { positions: new Float32Array([0, 0, 0, 701.5, 0, 0, 701.5, 0, 746.5, 0, 0, 746.5]), indices: new Uint32Array([0, 2, 1, 0, 3, 2]) };
    const thin = { cellSize: 1, cellHeight: 0.001, agentHeight: 0.2, agentMaxClimb: 0.05 };
    await expectCode(() => voxelize(flat, thin, { workers: false, headroom: 8.19 }), 'NB_ERR_TOO_LARGE', /^navbake\.voxelize: the grid would be about 702 x 8191 x 747 voxels/);
    // volumes and links mark the navmesh: voxelize() refuses them rather than ignore them
    const box = { type: 'box', min: [0, 0, 0], max: [1, 1, 1] } as const;
    await expectCode(() => voxelize({ ...dungeon, volumes: [box] }), 'NB_ERR_INVALID_ARG', /geometry\.volumes are for bake\(\)/);
    await expectCode(() => voxelize({ ...dungeon, links: [{ start: [0, 0, 0], end: [1, 0, 1], radius: 1 }] }), 'NB_ERR_INVALID_ARG', /geometry\.links/);
    // empty lists mark nothing: the geometry given to bake() goes to voxelize() as it is
    const same = await voxelize({ ...dungeon, volumes: [], links: [] }, {}, { workers: false });
    const plain = await voxelize(dungeon, {}, { workers: false });
    expect(Array.from(same.dims)).toEqual(Array.from(plain.dims));
    expect(same.occupancy().words).toEqual(plain.occupancy().words);
    same.dispose();
    plain.dispose();
    const ac = new AbortController();
    const reason = new Error('stop');
    ac.abort(reason);
    await expect(voxelize(dungeon, {}, { signal: ac.signal })).rejects.toBe(reason);
    const ac2 = new AbortController();
    const p = voxelize(dungeon, {}, { signal: ac2.signal, onProgress: () => ac2.abort(reason) });
    await expect(p).rejects.toBe(reason);
  });
});

describe('VoxelGrid.findPath', () => {
  // A floor 0..12 x 0..12 (top at y = 0.5) split by a wall across it at x 5.5..6.5, 3 high, and a pillar.
  const level = boxes([[0, 0, 0, 12, 0.5, 12], [5.5, 0.5, 0, 6.5, 3.5, 12], [2, 0.5, 8, 3, 4, 9]]);
  let g: VoxelGrid;
  const opts = { agentHeight: 1, agentClimb: 0.5 } as const;
  beforeAll(async () => {
    g = await voxelize(level, { cellSize: 0.25, cellHeight: 0.25 }, { workers: false });
  });

  it('walks around a pillar on the floor, each step legal', () => {
    const r = g.findPath([1, 0.5, 10], [4, 0.5, 7], { ...opts, smooth: false });
    expect(r.status).toBe('complete');
    checkPath(g, r.voxels, 'walk', 4, 2);
    expect(r.points[1]).toBeGreaterThanOrEqual(0.5); // on the floor (its layer rounds up, as for the navmesh)
    expect(r.points[1]).toBeLessThanOrEqual(0.75);
    const smooth = g.findPath([1, 0.5, 10], [4, 0.5, 7], opts);
    expect(smooth.status).toBe('complete');
    expect(smooth.points.length).toBeLessThan(r.points.length);
    expect(len(smooth.points)).toBeLessThanOrEqual(len(r.points) + 1e-4);
    // the smoothed path still starts and ends where the raw one does
    expect(Array.from(smooth.voxels.slice(0, 3))).toEqual(Array.from(r.voxels.slice(0, 3)));
    expect(Array.from(smooth.voxels.slice(-3))).toEqual(Array.from(r.voxels.slice(-3)));
  });

  it('cannot walk over the wall but climbs and flies over it', () => {
    const from = [2, 0.5, 2];
    const to = [10, 0.5, 2];
    const walk = g.findPath(from, to, { ...opts, smooth: false });
    expect(walk.status).toBe('partial');
    expect(Math.max(...Array.from(walk.points.filter((_, i) => i % 3 === 0)))).toBeLessThan(5.5);
    const climb = g.findPath(from, to, { ...opts, move: 'climb', smooth: false });
    expect(climb.status).toBe('complete');
    checkPath(g, climb.voxels, 'climb', 4, 0);
    const fly = g.findPath(from, to, { ...opts, move: 'fly', smooth: false });
    expect(fly.status).toBe('complete');
    checkPath(g, fly.voxels, 'fly', 4, 0);
    const top = (p: Float32Array) => Math.max(...Array.from(p.filter((_, i) => i % 3 === 1)));
    expect(top(climb.points)).toBeGreaterThanOrEqual(3.5 - 1e-4); // over the wall's top
    expect(top(fly.points)).toBeGreaterThanOrEqual(3.5 - 1e-4);
    expect(len(fly.points)).toBeLessThanOrEqual(len(climb.points) + 1e-4); // flying may cut the corners climbing follows
  });

  it('needs room for the agent: a tall agent cannot fly through a gap a short one can', async () => {
    // a ceiling slab at 1.5..2 over part of the floor: 1 unit of room under it
    const low = await voxelize(boxes([[0, 0, 0, 10, 0.5, 4], [0, 0.5, 0, 4, 1.5, 4], [6, 0.5, 0, 10, 1.5, 4], [4, 1.5, 0, 6, 2, 4]]), { cellSize: 0.25, cellHeight: 0.25 }, { workers: false });
    const under: VoxelPathOptions = { agentClimb: 0, smooth: false };
    const short = low.findPath([4.5, 0.5, 2], [5.5, 0.5, 2], { ...under, agentHeight: 0.75 });
    expect(short.status).toBe('complete');
    const tall = low.findPath([4.5, 0.5, 2], [5.5, 0.5, 2], { ...under, agentHeight: 1.5, searchRadius: 0 });
    expect(tall.status).toBe('none'); // no place under the ceiling for it at all
    low.dispose();
  });

  it('trades length for speed with heuristicWeight, within the weight', () => {
    const from = [2, 0.5, 2];
    const to = [10, 0.5, 10];
    const exact = g.findPath(from, to, { ...opts, move: 'fly', smooth: false });
    for (const w of [1.5, 3]) {
      const fast = g.findPath(from, to, { ...opts, move: 'fly', smooth: false, heuristicWeight: w });
      expect(fast.status).toBe('complete');
      checkPath(g, fast.voxels, 'fly', 4, 0);
      expect(len(fast.points)).toBeGreaterThanOrEqual(len(exact.points) - 1e-4);
      expect(len(fast.points)).toBeLessThanOrEqual(w * len(exact.points) + 1e-4);
    }
  });

  it('is deterministic and survives occupancy() -> VoxelGrid.create()', async () => {
    const a = g.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'climb' });
    const b = g.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'climb' });
    expect(Array.from(a.voxels)).toEqual(Array.from(b.voxels));
    const copy = await VoxelGrid.create(g.occupancy());
    const c = copy.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'climb' });
    expect(Array.from(c.voxels)).toEqual(Array.from(a.voxels));
    copy.dispose();
  });

  it('shares one search pool between grids: a disposed grid does not take it along', async () => {
    const other = await VoxelGrid.create(g.occupancy());
    const a = other.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'fly' });
    other.dispose();
    const b = g.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'fly' });
    expect(b.status).toBe('complete');
    expect(Array.from(b.voxels)).toEqual(Array.from(a.voxels));
    // another pool size and back
    expect(g.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'fly', maxNodes: 1 << 17 }).status).toBe('complete');
    expect(Array.from(g.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'fly' }).voxels)).toEqual(Array.from(a.voxels));
  });

  it('runs out of nodes gracefully and reports nothing near a point far away', () => {
    const r = g.findPath([1, 0.5, 1], [11, 0.5, 11], { ...opts, move: 'fly', maxNodes: 50, smooth: false });
    expect(r.status).toBe('partial');
    expect(r.exhausted).toBe(true);
    expect(r.nodes).toBe(50);
    expect(r.voxels.length / 3).toBeLessThanOrEqual(50);
    // out of reach, not out of nodes: the walker cannot cross the wall
    const walled = g.findPath([2, 0.5, 2], [10, 0.5, 2], opts);
    expect(walled.status).toBe('partial');
    expect(walled.exhausted).toBe(false);
    expect(walled.nodes).toBeGreaterThan(0);
    expect(walled.nodes).toBeLessThan(65536);
    const none = g.findPath([1, 0.5, 1], [500, 0.5, 500], opts);
    expect(none.status).toBe('none');
    expect(none.points.length).toBe(0);
    expect([none.exhausted, none.nodes]).toEqual([false, 0]);
  });

  it('names bad arguments', async () => {
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { move: 'swim' as never }), 'NB_ERR_INVALID_ARG', /options\.move/);
    // null is refused as for every other option (it was taken as 'walk')
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { move: null as never }), 'NB_ERR_INVALID_ARG', /options\.move must be 'walk', 'climb' or 'fly' \(got null\)/);
    // a cell size float32 rounds to 0 says so
    await expectCode(() => VoxelGrid.create({ ...g.occupancy(), cellSize: 1e-46 }), 'NB_ERR_INVALID_ARG', /cellSize must be > 0 as a float32 \(it rounds to 0\) \(got 1e-46\)/);
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { agentRadius: -1 }), 'NB_ERR_INVALID_ARG', /agentRadius/);
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { agentHeight: 0 }), 'NB_ERR_INVALID_ARG', /agentHeight/);
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { maxNodes: 0 }), 'NB_ERR_INVALID_ARG', /maxNodes/);
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { heuristicWeight: 0.5 }), 'NB_ERR_INVALID_ARG', /heuristicWeight must be 1\.\.10/);
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { searchRadius: 100 }), 'NB_ERR_INVALID_ARG', /searchRadius/);
    await expectCode(() => g.findPath([0, NaN, 0], [1, 1, 1]), 'NB_ERR_NONFINITE', /start/);
    await expectCode(() => g.findPath([0, 0, 0], [1, 1, 1], { speed: 2 } as never), 'NB_ERR_INVALID_ARG', /speed/);
    await expectCode(() => g.isSolid(0.5, 0, 0), 'NB_ERR_INVALID_ARG', /isSolid: x/);
    const data = g.occupancy();
    await expectCode(() => VoxelGrid.create({ ...data, words: data.words.subarray(1) }), 'NB_ERR_INVALID_ARG', /words has/);
    await expectCode(() => VoxelGrid.create({ ...data, dims: [0, 1, 1] }), 'NB_ERR_INVALID_ARG', /dims\[0\]/);
    await expectCode(() => VoxelGrid.create({ ...data, dims: [100000, 100000, 1000] }), 'NB_ERR_TOO_LARGE');
    await expectCode(() => VoxelGrid.create({ ...data, cellSize: 0 }), 'NB_ERR_INVALID_ARG', /cellSize/);
    const gone = await VoxelGrid.create(data);
    gone.dispose();
    gone.dispose();
    expect(gone.disposed).toBe(true);
    await expectCode(() => gone.findPath([0, 0, 0], [1, 1, 1]), 'NB_ERR_DISPOSED', /^navbake: VoxelGrid\.findPath: this VoxelGrid was disposed$/);
    await expectCode(() => gone.isSolid(0, 0, 0), 'NB_ERR_DISPOSED', /VoxelGrid\.isSolid: /);
    await expectCode(() => gone.dims, 'NB_ERR_DISPOSED', /VoxelGrid\.dims: /);
    await expectCode(() => gone.filled, 'NB_ERR_DISPOSED', /VoxelGrid\.filled: /);
    await expectCode(() => gone.findPathAsync([0, 0, 0], [1, 1, 1]), 'NB_ERR_DISPOSED', /VoxelGrid\.findPathAsync: /);
  });
});

describe('walking voxels agree with the navmesh', () => {
  let nav: NavMesh;
  let g: VoxelGrid;
  beforeAll(async () => {
    const dungeon = loadMesh('dungeon.obj');
    nav = await bake(dungeon, {}, { workers: false });
    g = await voxelize(dungeon, {}, { workers: false });
  });

  it('finds a walk wherever the navmesh has a path, no longer than it', () => {
    // The navmesh keeps agents 0.6 from walls; a voxel walker of radius 0 has more room, so its path is at most
    // the navmesh's (plus the grid's staircase: a smoothed 8-direction path is within a few percent).
    let compared = 0;
    for (let seed = 1; compared < 30 && seed < 200; seed++) {
      const a = nav.randomPoint({ seed });
      const b = nav.randomPoint({ seed: seed + 1000 });
      if (!a || !b) continue;
      const p = nav.findPath(a, b);
      if (p.status !== 'complete') continue;
      const v = g.findPath(a, b, { maxNodes: 1 << 20 });
      expect(v.status, `seed ${seed}`).toBe('complete');
      expect(len(v.points), `seed ${seed}`).toBeLessThanOrEqual(len(p.points) * 1.1 + 1);
      compared++;
    }
    expect(compared).toBe(30);
  });
});

describe('VoxelGrid.findPathAsync', () => {
  let nav: NavMesh;
  let g: VoxelGrid;
  const pairs: [number[], number[]][] = [];
  let long: [number[], number[]]; // a flight of about 100k search nodes (0.1 s)
  beforeAll(async () => {
    const dungeon = loadMesh('dungeon.obj');
    nav = await bake(dungeon, {}, { workers: false });
    g = await voxelize(dungeon, {}, { workers: false });
    long = [nav.randomPoint({ seed: 19 })!, nav.randomPoint({ seed: 519 })!];
    for (let seed = 1; pairs.length < 12; seed++) {
      const a = nav.randomPoint({ seed });
      const b = nav.randomPoint({ seed: seed + 500 });
      if (a && b) pairs.push([a, b]);
    }
  });
  afterAll(() => g.dispose());

  const same = (a: { status: string; voxels: Int32Array; points: Float32Array; exhausted: boolean; nodes: number }, b: typeof a) => {
    expect(a.status).toBe(b.status);
    expect(Array.from(a.voxels)).toEqual(Array.from(b.voxels));
    expect(Array.from(a.points)).toEqual(Array.from(b.points));
    expect([a.exhausted, a.nodes]).toEqual([b.exhausted, b.nodes]);
  };

  it('gives findPath\'s path in every mode, however thin the slices', async () => {
    const modes: VoxelPathOptions[] = [
      { move: 'walk' },
      { move: 'walk', smooth: false, agentRadius: 0.3 },
      { move: 'climb', agentHeight: 1 },
      { move: 'fly', agentHeight: 1, heuristicWeight: 1.5 },
      { move: 'fly', agentHeight: 1, maxNodes: 3000 }, // runs out
    ];
    let exhausted = 0;
    for (const [i, [a, b]] of pairs.entries()) {
      const o = modes[i % modes.length];
      const want = g.findPath(a, b, o);
      const got = await g.findPathAsync(a, b, { ...o, sliceMs: 0.1 });
      same(got, want);
      exhausted += got.exhausted ? 1 : 0;
    }
    expect(exhausted).toBeGreaterThan(0);
  });

  it('lets the thread run between slices, and a findPath meanwhile does not disturb it', async () => {
    const o: VoxelPathOptions = { move: 'fly', agentHeight: 1, maxNodes: 1 << 20 };
    const want = g.findPath(long[0], long[1], o);
    expect(want.nodes).toBeGreaterThan(50000);
    let ticks = 0;
    let between: ReturnType<VoxelGrid['findPath']> | null = null;
    const tick = () => {
      ticks++;
      if (ticks === 2) between = g.findPath(pairs[1][0], pairs[1][1]); // the shared findPath pool, mid-search
      if (!done) setImmediate(tick);
    };
    let done = false;
    setImmediate(tick);
    const got = await g.findPathAsync(long[0], long[1], { ...o, sliceMs: 1 });
    done = true;
    same(got, want);
    expect(ticks).toBeGreaterThan(3);
    expect(between).not.toBeNull();
    same(between!, g.findPath(pairs[1][0], pairs[1][1]));
  });

  it('readies a big node pool a slice at a time too: the thread runs before a short search on it begins', async () => {
    // 4M nodes: 128 MB of hash slots to empty (half a second the first time this memory is touched); after a search,
    // the slots it filled (the same path as findPath's either way)
    const o: VoxelPathOptions = { move: 'fly', agentHeight: 1, maxNodes: 1 << 22 };
    const runs: { ticks: number; nodes: number }[] = [];
    const short = pairs.filter(([a, b]) => g.findPath(a, b, { ...o, maxNodes: 5000 }).status === 'complete');
    expect(short.length).toBeGreaterThan(1);
    for (const [a, b] of [short[0], long, short[1]]) {
      let ticks = 0;
      let done = false;
      const tick = () => {
        ticks++;
        if (!done) setImmediate(tick);
      };
      setImmediate(tick);
      const got = await g.findPathAsync(a, b, { ...o, sliceMs: 1 });
      done = true;
      same(got, g.findPath(a, b, o));
      runs.push({ ticks, nodes: got.nodes });
    }
    // the short search takes one slice of its own: the turns before it were the pool's
    expect(runs[0].nodes).toBeLessThan(5000);
    expect(runs[2].nodes).toBeLessThan(5000);
    expect(runs[0].ticks).toBeGreaterThan(5);
    expect(runs[1].nodes).toBeGreaterThan(50000);
  });

  it('runs searches asked together one at a time, in order, across grids', async () => {
    const copy = await VoxelGrid.create(g.occupancy());
    const order: number[] = [];
    const runs = pairs.slice(0, 6).map(([a, b], i) =>
      (i % 2 ? copy : g).findPathAsync(a, b, { move: 'fly', agentHeight: 1, sliceMs: 0.2 }).then((r) => {
        order.push(i);
        return r;
      }),
    );
    const results = await Promise.all(runs);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    for (const [i, [a, b]] of pairs.slice(0, 6).entries()) same(results[i], g.findPath(a, b, { move: 'fly', agentHeight: 1 }));
    copy.dispose();
  });

  it('stops when aborted or disposed, and the next search is whole', async () => {
    const slow: VoxelPathOptions & { sliceMs: number } = { move: 'fly', agentHeight: 1, maxNodes: 1 << 20, sliceMs: 0.5 };
    // aborted mid-search, and a search waiting behind it rejected at once
    const ac = new AbortController();
    const reason = new Error('stop');
    const queued = new AbortController();
    const running = g.findPathAsync(long[0], long[1], { ...slow, signal: ac.signal });
    const waiting = g.findPathAsync(pairs[1][0], pairs[1][1], { signal: queued.signal });
    const after = g.findPathAsync(pairs[2][0], pairs[2][1]);
    queued.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    setTimeout(() => ac.abort(reason), 5);
    await expect(running).rejects.toBe(reason);
    same(await after, g.findPath(pairs[2][0], pairs[2][1]));
    // already aborted: rejected before any work
    await expect(g.findPathAsync(pairs[0][0], pairs[0][1], { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    // the grid disposed mid-search
    const copy = await VoxelGrid.create(g.occupancy());
    const gone = copy.findPathAsync(long[0], long[1], slow);
    setTimeout(() => copy.dispose(), 5);
    await expectCode(() => gone, 'NB_ERR_DISPOSED', /VoxelGrid\.findPathAsync: this VoxelGrid was disposed/);
    same(await g.findPathAsync(pairs[3][0], pairs[3][1], { sliceMs: 0.1 }), g.findPath(pairs[3][0], pairs[3][1]));
  });

  it('names bad arguments', async () => {
    await expectCode(() => g.findPathAsync([0, 0, 0], [1, 1, 1], { sliceMs: 0 }), 'NB_ERR_INVALID_ARG', /findPathAsync: options\.sliceMs must be 0\.1\.\.1000/);
    await expectCode(() => g.findPathAsync([0, 0, 0], [1, 1, 1], { signal: {} as never }), 'NB_ERR_INVALID_ARG', /findPathAsync: options\.signal/);
    await expectCode(() => g.findPathAsync([0, 0, 0], [1, 1, 1], { move: 'swim' as never }), 'NB_ERR_INVALID_ARG', /findPathAsync: options\.move/);
    await expectCode(() => g.findPathAsync([0, 0, 0], [1, 1, 1], { speed: 2 } as never), 'NB_ERR_INVALID_ARG', /speed/);
    await expectCode(() => g.findPathAsync([0, Infinity, 0], [1, 1, 1]), 'NB_ERR_NONFINITE', /findPathAsync: start/);
  });
});
