// Differential test against the reference (npm @recast-navigation 0.43.1, recastnavigation compiled to wasm):
// the same level, the same settings, the same 1000 random pairs -- both libraries must agree on which pairs
// are connected (>= 99%) and on the lengths of the paths (median ratio within 3%). Solo navmeshes, and tiled
// ones (both libraries with the same tile size), where paths cross the seams between tiles. Before any of that,
// both bake the same polygons, corner for corner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { init as initReference, NavMeshQuery, type NavMesh as ReferenceNavMesh } from '@recast-navigation/core';
import { generateSoloNavMesh, generateTileCache, generateTiledNavMesh } from '@recast-navigation/generators';
import { bake, terminateWorkers, type NavMesh } from '../../web/dist/index.js';
import { loadMesh, loadWasm, type RawModule } from './helpers';

const PAIRS = 1000;
let m: RawModule;

beforeAll(async () => {
  m = await loadWasm();
  await initReference();
});
afterAll(() => terminateWorkers());

/** navbake: random pairs on its navmesh and, per pair, complete? and straight-path length. */
function ours(mesh: ReturnType<typeof loadMesh>) {
  const ctx = m._nbw_context_create();
  const pPos = m._malloc(mesh.positions.byteLength);
  const pIdx = m._malloc(mesh.indices.byteLength);
  m.HEAPF32.set(mesh.positions, pPos >> 2);
  m.HEAPU32.set(mesh.indices, pIdx >> 2);
  const nav = m._nbw_navmesh_bake(ctx, pPos, mesh.positions.length / 3, pIdx, mesh.indices.length / 3, 0, 0);
  expect(nav, m.UTF8ToString(m._nbw_message(ctx))).not.toBe(0);
  const q = m._nbw_query_create(ctx, nav, 0);
  const filter = m._nbw_filter_create();
  const s = m._malloc(256);
  m.HEAPU32[s >> 2] = 2024;
  m.HEAPU32[(s >> 2) + 1] = 0;
  const pairs = new Float32Array(PAIRS * 6);
  for (let i = 0; i < PAIRS * 2; i++) {
    expect(m._nbw_random_point(q, filter, s, s + 16, s + 32)).toBe(0);
    pairs.set(m.HEAPF32.subarray((s + 32) >> 2, ((s + 32) >> 2) + 3), i * 3);
  }
  const pPairs = m._malloc(pairs.byteLength);
  m.HEAPF32.set(pairs, pPairs >> 2);
  m.HEAPF32.set([2, 4, 2], (s + 64) >> 2);
  const pStatus = m._malloc(PAIRS);
  const pLen = m._malloc(PAIRS * 4);
  const pOff = m._malloc((PAIRS + 1) * 4);
  const cap = PAIRS * 256;
  const pPts = m._malloc(cap * 12);
  expect(m._nbw_find_paths(q, pPairs, PAIRS, s + 64, filter, 0, pStatus, pLen, pOff, pPts, 0, 0, cap, s + 96)).toBe(0);
  const complete = Array.from(m.HEAPU8.subarray(pStatus, pStatus + PAIRS), (v) => v === 2);
  const lengths = Array.from(m.HEAPF32.subarray(pLen >> 2, (pLen >> 2) + PAIRS) as Float32Array);
  for (const p of [pPos, pIdx, s, pPairs, pStatus, pLen, pOff, pPts]) m._free(p);
  m._nbw_filter_destroy(filter);
  m._nbw_query_destroy(ctx, q);
  m._nbw_navmesh_destroy(ctx, nav);
  m._nbw_context_destroy(ctx);
  return { pairs, complete, lengths };
}

/** PAIRS random pairs on a navmesh (from seed), and for each navbake's answer: complete?, and the path's length. */
function pathsOn(nav: NavMesh, seed: number) {
  nav.seedRandom(seed);
  const pairs = new Float32Array(PAIRS * 6);
  for (let i = 0; i < PAIRS * 2; i++) {
    const p = nav.randomPoint();
    if (!p) throw new Error('randomPoint found no polygon');
    pairs.set(p, i * 3);
  }
  const complete: boolean[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const r = nav.findPath(pairs.subarray(i * 6, i * 6 + 3), pairs.subarray(i * 6 + 3, i * 6 + 6));
    complete.push(r.status === 'complete');
    lengths.push(r.length);
  }
  return { pairs, complete, lengths };
}

/** navbake through the package, tiled: the same as ours() but over tileSize x tileSize-cell tiles. */
async function oursTiled(mesh: ReturnType<typeof loadMesh>, tileSize: number) {
  const nav = await bake(mesh, { tileSize }, { workers: false });
  try {
    expect(nav.tileCount).toBeGreaterThan(4);
    return pathsOn(nav, 2024);
  } finally {
    nav.dispose();
  }
}

const REFERENCE_CONFIG = {
  cs: 0.3, ch: 0.2, walkableSlopeAngle: 45, walkableHeight: 10, walkableClimb: 4, walkableRadius: 2,
  maxEdgeLen: 40, maxSimplificationError: 1.3, minRegionArea: 8, mergeRegionArea: 20, maxVertsPerPoly: 6,
  detailSampleDist: 6, detailSampleMaxError: 1,
};

/** The reference: complete when its A* reaches the end's polygon; length of its straight path. */
function reference(mesh: ReturnType<typeof loadMesh>, pairs: Float32Array, tileSize = 0) {
  const { success, navMesh } = tileSize
    ? generateTiledNavMesh(mesh.positions, mesh.indices, { ...REFERENCE_CONFIG, tileSize })
    : generateSoloNavMesh(mesh.positions, mesh.indices, REFERENCE_CONFIG);
  expect(success).toBe(true);
  if (!navMesh) throw new Error('the reference bake failed');
  return measure(navMesh, pairs);
}

function measure(navMesh: ReferenceNavMesh, pairs: Float32Array) {
  const query = new NavMeshQuery(navMesh);
  const halfExtents = { x: 2, y: 4, z: 2 };
  const complete: boolean[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const a = { x: pairs[i * 6], y: pairs[i * 6 + 1], z: pairs[i * 6 + 2] };
    const b = { x: pairs[i * 6 + 3], y: pairs[i * 6 + 4], z: pairs[i * 6 + 5] };
    const sa = query.findNearestPoly(a, { halfExtents });
    const sb = query.findNearestPoly(b, { halfExtents });
    let done = false;
    if (sa.success && sb.success && sa.nearestRef && sb.nearestRef) {
      const r = query.findPath(sa.nearestRef, sb.nearestRef, sa.nearestPoint, sb.nearestPoint, { maxPathPolys: 2048 });
      done = r.success && r.polys.size > 0 && r.polys.get(r.polys.size - 1) === sb.nearestRef;
    }
    complete.push(done);
    let length = 0;
    if (done) {
      const path = query.computePath(a, b, { halfExtents, maxPathPolys: 2048, maxStraightPathPoints: 2048 }).path;
      for (let k = 1; k < path.length; k++)
        length += Math.hypot(path[k].x - path[k - 1].x, path[k].y - path[k - 1].y, path[k].z - path[k - 1].z);
    }
    lengths.push(length);
  }
  navMesh.destroy();
  return { complete, lengths };
}

/** Both libraries agree on >= 99% of the pairs' reachability, and their lengths' median ratio is within 3%. */
function expectAgreement(a: { complete: boolean[]; lengths: number[] }, b: { complete: boolean[]; lengths: number[] }) {
  let agree = 0;
  const ratios: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    if (a.complete[i] === b.complete[i]) agree++;
    if (a.complete[i] && b.complete[i] && b.lengths[i] > 1) ratios.push(a.lengths[i] / b.lengths[i]);
  }
  ratios.sort((x, y) => x - y);
  const median = ratios[ratios.length >> 1];
  expect(agree / PAIRS).toBeGreaterThanOrEqual(0.99);
  expect(ratios.length).toBeGreaterThan(100);
  expect(Math.abs(median - 1)).toBeLessThanOrEqual(0.03);
}

describe('navbake agrees with the reference implementation', () => {
  for (const level of ['dungeon.obj', 'nav_test.obj']) {
    it(`${level}: reachability (>= 99%) and path lengths (median within 3%) on ${PAIRS} random pairs`, () => {
      const mesh = loadMesh(level);
      const a = ours(mesh);
      expectAgreement(a, reference(mesh, a.pairs));
    });
    it(`${level}, tiles of 32 cells: the same agreement, with paths across tile seams`, async () => {
      const mesh = loadMesh(level);
      const a = await oursTiled(mesh, 32);
      expectAgreement(a, reference(mesh, a.pairs, 32));
    });
  }
});

/** A polygon as text: its corners (3 decimals) in order, from the one whose text sorts first. */
function polygonKey(v: ArrayLike<number>): string {
  const corners: string[] = [];
  for (let i = 0; i < v.length; i += 3) corners.push(`${v[i]!.toFixed(3)},${v[i + 1]!.toFixed(3)},${v[i + 2]!.toFixed(3)}`);
  let best = '';
  for (let r = 0; r < corners.length; r++) {
    const s = [...corners.slice(r), ...corners.slice(0, r)].join(' ');
    if (r === 0 || s < best) best = s;
  }
  return best;
}

/** The reference navmesh's ground polygons (off-mesh links left out), as polygonKey texts. */
function referencePolygons(navMesh: ReferenceNavMesh): string[] {
  const out: string[] = [];
  for (let t = 0; t < navMesh.getMaxTiles(); t++) {
    const tile = navMesh.getTile(t);
    const h = tile.header();
    if (!h) continue;
    for (let i = 0; i < h.polyCount(); i++) {
      const poly = tile.polys(i);
      if (poly.getType() === 1) continue;
      const v: number[] = [];
      for (let k = 0; k < poly.vertCount(); k++) {
        const j = poly.verts(k);
        v.push(tile.verts(j * 3), tile.verts(j * 3 + 1), tile.verts(j * 3 + 2));
      }
      out.push(polygonKey(v));
    }
  }
  return out;
}

describe('navbake bakes the reference\'s polygons', () => {
  // Same voxels, same watershed regions, same contours and convex polygons: corner for corner, whatever the order.
  for (const level of ['dungeon.obj', 'nav_test.obj']) {
    for (const tileSize of [0, 32]) {
      it(`${level}${tileSize ? `, tiles of ${tileSize} cells` : ''}: the same polygons, corner for corner`, async () => {
        const mesh = loadMesh(level);
        const nav = await bake(mesh, { tileSize }, { workers: false });
        const ours = nav.polygons().filter((p) => !p.offMesh).map((p) => polygonKey(p.vertices)).sort();
        nav.dispose();
        const r = tileSize
          ? generateTiledNavMesh(mesh.positions, mesh.indices, { ...REFERENCE_CONFIG, tileSize })
          : generateSoloNavMesh(mesh.positions, mesh.indices, REFERENCE_CONFIG);
        if (!r.navMesh) throw new Error('the reference bake failed');
        const theirs = referencePolygons(r.navMesh).sort();
        r.navMesh.destroy();
        expect(ours.length).toBeGreaterThan(100);
        expect(ours).toEqual(theirs);
      });
    }
  }
});

describe('navbake queries agree with the reference queries', () => {
  const RAYS = 1000;
  const v = (p: ArrayLike<number>) => ({ x: p[0], y: p[1], z: p[2] });
  for (const level of ['dungeon.obj', 'nav_test.obj']) {
    it(`${level}: raycast (hit or not, and where) and moveAlong (where it ends) on ${RAYS} random moves`, async () => {
      const mesh = loadMesh(level);
      const nav = await bake(mesh, {}, { workers: false });
      const { success, navMesh } = generateSoloNavMesh(mesh.positions, mesh.indices, REFERENCE_CONFIG);
      expect(success).toBe(true);
      if (!navMesh) throw new Error('the reference bake failed');
      const query = new NavMeshQuery(navMesh);
      try {
        nav.seedRandom(7);
        let rays = 0;
        let agree = 0;
        const hitGaps: number[] = [];
        const moveGaps: number[] = [];
        for (let i = 0; i < RAYS; i++) {
          const p = nav.randomPoint();
          if (!p) throw new Error('randomPoint found no polygon');
          // Directions all round, lengths from 2 to 17: many rays end at a wall, many do not.
          const angle = i * 2.399963, len = 2 + (i % 16);
          const e = [p[0] + Math.cos(angle) * len, p[1], p[2] + Math.sin(angle) * len];
          const start = query.findNearestPoly(v(p), { halfExtents: { x: 2, y: 4, z: 2 } });
          if (!start.success || !start.nearestRef) continue;
          const ours = nav.raycast(p, e);
          const theirs = query.raycast(start.nearestRef, start.nearestPoint, v(e));
          expect(ours).not.toBeNull();
          rays++;
          const theirHit = theirs.t < 1; // t is FLT_MAX when nothing is hit
          if (ours!.hit === theirHit) agree++;
          if (ours!.hit && theirHit) hitGaps.push(Math.abs(ours!.t - theirs.t) * len);
          const end = nav.moveAlong(p, e);
          const theirEnd = query.moveAlongSurface(start.nearestRef, start.nearestPoint, v(e));
          expect(end).not.toBeNull();
          expect(theirEnd.success).toBe(true);
          moveGaps.push(Math.hypot(end![0] - theirEnd.resultPosition.x, end![2] - theirEnd.resultPosition.z));
        }
        const median = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1];
        const p95 = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length * 0.95)];
        expect(rays).toBeGreaterThan(RAYS * 0.95);
        expect(agree / rays).toBeGreaterThanOrEqual(0.99);
        expect(hitGaps.length).toBeGreaterThan(RAYS * 0.2);
        expect(median(hitGaps)).toBeLessThan(0.01); // distance along the ray between the two hits
        expect(p95(hitGaps)).toBeLessThan(0.1);
        expect(median(moveGaps)).toBeLessThan(0.01);
        expect(p95(moveGaps)).toBeLessThan(0.1);
      } finally {
        nav.dispose();
        navMesh.destroy();
      }
    });
  }
});

describe('live obstacles agree with the reference tile cache', () => {
  it(`dungeon.obj, tiles of 32 cells, 40 boxes and cylinders: reachability and path lengths on ${PAIRS} pairs`, async () => {
    const mesh = loadMesh('dungeon.obj');
    const nav = await bake(mesh, { tileSize: 32 }, { workers: false, obstacles: true });
    const { success, tileCache, navMesh } = generateTileCache(mesh.positions, mesh.indices, {
      ...REFERENCE_CONFIG,
      tileSize: 32,
      expectedLayersPerTile: 8,
      maxObstacles: 256,
    });
    expect(success).toBe(true);
    if (!tileCache || !navMesh) throw new Error('the reference bake failed');
    try {
      // The same obstacles in both, standing on random points of the navmesh: 3 x 2 m boxes and r = 1.2 m cylinders,
      // 2 m tall, their feet 0.5 m below the floor. Both carve what they cover (no agent radius added).
      nav.seedRandom(3);
      for (let i = 0; i < 40; i++) {
        const [x, y, z] = nav.randomPoint()!;
        if (i % 2 === 0) {
          nav.addObstacle({ type: 'box', min: [x - 1.5, y - 0.5, z - 1], max: [x + 1.5, y + 1.5, z + 1] });
          tileCache.addBoxObstacle({ x, y: y + 0.5, z }, { x: 1.5, y: 1, z: 1 }, 0);
        } else {
          nav.addObstacle({ type: 'cylinder', center: [x, y - 0.5, z], radius: 1.2, height: 2 });
          tileCache.addCylinderObstacle({ x, y: y - 0.5, z }, 1.2, 2);
        }
      }
      expect((await nav.update({ workers: false })).tiles.length).toBeGreaterThan(10);
      let upToDate = false;
      for (let k = 0; k < 100 && !upToDate; k++) upToDate = tileCache.update(navMesh).upToDate;
      expect(upToDate).toBe(true);

      const { pairs, complete, lengths } = pathsOn(nav, 11);
      const theirs = measure(navMesh, pairs);
      expectAgreement({ complete, lengths }, theirs);
      // Paths bend round the obstacles in both: without ours, the median ratio is 0.95 and the 10th percentile 0.88.
      const ratios = lengths
        .map((l, i) => (complete[i] && theirs.complete[i] && theirs.lengths[i] > 1 ? l / theirs.lengths[i] : NaN))
        .filter((r) => !Number.isNaN(r))
        .sort((a, b) => a - b);
      expect(Math.abs(ratios[ratios.length >> 1] - 1)).toBeLessThan(0.02);
      expect(ratios[Math.floor(ratios.length * 0.1)]).toBeGreaterThan(0.95);
    } finally {
      nav.dispose();
      tileCache.destroy();
    }
  });
});

describe('off-mesh links agree with the reference', () => {
  it('a link across a tile corner (tiles of 16 cells) connects two islands in both libraries', async () => {
    // two 10 x 10 floors touching only diagonally across a 2 m gap, and a link over the corner between them
    const rect = (x0: number, z0: number) => [x0, 0, z0, x0, 0, z0 + 10, x0 + 10, 0, z0 + 10, x0 + 10, 0, z0];
    const positions = new Float32Array([...rect(0, 0), ...rect(12, 12)]);
    const indices = new Uint32Array([0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7]);
    const [start, end] = [[9.4, 0, 9.4], [12.6, 0, 12.6]];
    const nav = await bake({ positions, indices, links: [{ start, end, radius: 0.6, bidirectional: true }] }, { tileSize: 16 }, { workers: false });
    const { success, navMesh } = generateTiledNavMesh(positions, indices, {
      ...REFERENCE_CONFIG,
      tileSize: 16,
      offMeshConnections: [
        { startPosition: { x: 9.4, y: 0, z: 9.4 }, endPosition: { x: 12.6, y: 0, z: 12.6 }, radius: 0.6, bidirectional: true, area: 63, flags: 1 },
      ],
    });
    expect(success).toBe(true);
    try {
      // the link's two ends lie in diagonal tiles: (1, 1) and (2, 2) of 4.8 m
      expect(nav.tiles().map((t) => [t.x, t.z])).toEqual(expect.arrayContaining([[1, 1], [2, 2]]));
      const pairs = new Float32Array([2, 0, 2, 20, 0, 20, 20, 0, 20, 2, 0, 2]);
      const theirs = (() => {
        const query = new NavMeshQuery(navMesh!);
        return [0, 1].map((i) => {
          const p = query.computePath({ x: pairs[i * 6], y: 0, z: pairs[i * 6 + 2] }, { x: pairs[i * 6 + 3], y: 0, z: pairs[i * 6 + 5] }, { halfExtents: { x: 2, y: 4, z: 2 } }).path;
          const last = p[p.length - 1];
          return Math.hypot(last.x - pairs[i * 6 + 3], last.z - pairs[i * 6 + 5]) < 0.5;
        });
      })();
      expect(theirs).toEqual([true, true]);
      for (let i = 0; i < 2; i++) expect(nav.findPath(pairs.subarray(i * 6, i * 6 + 3), pairs.subarray(i * 6 + 3, i * 6 + 6)).status).toBe('complete');
    } finally {
      nav.dispose();
      navMesh!.destroy();
    }
  });
});
