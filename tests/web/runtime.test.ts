// The runtime through wasm: every query export once, batch paths equal to the native tool's, save/load.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadMesh, loadWasm, meshesDir, runNative, type Mesh, type RawModule } from './helpers';

let m: RawModule;
let ctx: number;
let nav: number;
let q: number;
let filter: number;
let scratch: number; // 4 KiB of scratch heap for small in/out arguments
const dir = mkdtempSync(join(tmpdir(), 'navbake-runtime-'));

const f32 = (ptr: number, n: number) => Array.from(m.HEAPF32.subarray(ptr >> 2, (ptr >> 2) + n)) as number[];
const u32 = (ptr: number) => m.HEAPU32[ptr >> 2] as number;
const status = (s: number) => m.UTF8ToString(m._nbw_status_name(s));
const message = () => m.UTF8ToString(m._nbw_message(ctx));
function put(ptr: number, values: number[]): number {
  m.HEAPF32.set(values, ptr >> 2);
  return ptr;
}

function bakeNavmesh(mesh: Mesh, config: Record<string, number> = {}): number {
  const nf = m._nbw_config_field_count();
  const pPos = m._malloc(mesh.positions.byteLength);
  const pIdx = m._malloc(mesh.indices.byteLength);
  const pCfg = m._malloc(nf * 8);
  try {
    m.HEAPF32.set(mesh.positions, pPos >> 2);
    m.HEAPU32.set(mesh.indices, pIdx >> 2);
    for (let i = 0; i < nf; i++) {
      const name = m.UTF8ToString(m._nbw_config_field_name(i));
      m.HEAPF64[(pCfg >> 3) + i] = config[name] ?? 0;
    }
    return m._nbw_navmesh_bake(ctx, pPos, mesh.positions.length / 3, pIdx, mesh.indices.length / 3, 0, pCfg);
  } finally {
    m._free(pPos);
    m._free(pIdx);
    m._free(pCfg);
  }
}

/** Batch paths through the wasm export: statuses, lengths and point counts per pair. */
function findPaths(query: number, pairs: Float32Array) {
  const n = pairs.length / 6;
  const pPairs = m._malloc(pairs.byteLength);
  const pStatus = m._malloc(n);
  const pLengths = m._malloc(n * 4);
  const pOffsets = m._malloc((n + 1) * 4);
  const capacity = n * 64;
  const pPoints = m._malloc(capacity * 12);
  const pNeeded = scratch + 3000;
  try {
    m.HEAPF32.set(pairs, pPairs >> 2);
    const half = put(scratch + 2000, [2, 4, 2]);
    const s = m._nbw_find_paths(query, pPairs, n, half, filter, 0, pStatus, pLengths, pOffsets, pPoints, 0, 0, capacity, pNeeded);
    expect(status(s), message()).toBe('NB_OK');
    const names = ['none', 'partial', 'complete'];
    return Array.from({ length: n }, (_, i) => ({
      status: names[m.HEAPU8[pStatus + i]],
      length: m.HEAPF32[(pLengths >> 2) + i] as number,
      points: (m.HEAPU32[(pOffsets >> 2) + i + 1] as number) - (m.HEAPU32[(pOffsets >> 2) + i] as number),
    }));
  } finally {
    for (const p of [pPairs, pStatus, pLengths, pOffsets, pPoints]) m._free(p);
  }
}

function randomPoint(query: number, rng: number): { ref: number; p: number[] } {
  const pRef = scratch + 100;
  const pPoint = scratch + 120;
  expect(status(m._nbw_random_point(query, filter, rng, pRef, pPoint))).toBe('NB_OK');
  return { ref: u32(pRef), p: f32(pPoint, 3) };
}

function nearest(query: number, p: number[]): { ref: number; p: number[] } {
  const pRef = scratch + 200;
  const pOut = scratch + 220;
  const s = m._nbw_find_nearest_poly(query, put(scratch + 240, p), put(scratch + 260, [2, 4, 2]), filter, pRef, pOut);
  expect(status(s)).toBe('NB_OK');
  return { ref: u32(pRef), p: f32(pOut, 3) };
}

beforeAll(async () => {
  m = await loadWasm();
  ctx = m._nbw_context_create();
  scratch = m._malloc(4096);
  nav = bakeNavmesh(loadMesh('dungeon.obj'));
  expect(nav, message()).not.toBe(0);
  q = m._nbw_query_create(ctx, nav, 0);
  expect(q, message()).not.toBe(0);
  filter = m._nbw_filter_create();
});

afterAll(() => {
  m._nbw_filter_destroy(filter);
  m._nbw_query_destroy(ctx, q);
  m._nbw_navmesh_destroy(ctx, nav);
  m._free(scratch);
  m._nbw_context_destroy(ctx);
});

describe('runtime through wasm', () => {
  it('batch paths give the same answers as the native tool', () => {
    const rng = scratch + 3500;
    m.HEAPU32[rng >> 2] = 12345;
    m.HEAPU32[(rng >> 2) + 1] = 0;
    const pairs = new Float32Array(200 * 6);
    for (let i = 0; i < 400; i++) pairs.set(randomPoint(q, rng).p, i * 3);
    const file = join(dir, 'pairs.txt');
    writeFileSync(file, Array.from({ length: 200 }, (_, i) => Array.from(pairs.subarray(i * 6, i * 6 + 6)).join(' ')).join('\n') + '\n');
    const native = runNative(['query', resolve(meshesDir, 'dungeon.obj'), '--pairs-file', file, '--json']);
    expect(native.status, native.stderr).toBe(0);
    const want = JSON.parse(native.stdout);
    const got = findPaths(q, pairs);
    expect(got.map((r) => r.status)).toEqual(want.results.map((r: { status: string }) => r.status));
    got.forEach((r, i) => {
      expect(r.length).toBeCloseTo(want.results[i].length, 2);
      expect(r.points).toBe(want.results[i].points);
    });
    const complete = got.filter((r) => r.status === 'complete').length;
    expect(complete).toBeGreaterThan(100); // REFERENCE.md: about 81% of random pairs are connected
    expect(got.some((r) => r.status === 'complete' && r.points > 2)).toBe(true);
  });

  it('nearest polygon, closest point, height, raycast, move along, distance to wall', () => {
    const rng = scratch + 3500;
    m.HEAPU32[rng >> 2] = 99;
    m.HEAPU32[(rng >> 2) + 1] = 0;
    const { ref, p } = randomPoint(q, rng);
    expect(ref).not.toBe(0);
    const near = nearest(q, [p[0], p[1] + 0.5, p[2]]);
    expect(near.ref).toBe(ref);
    expect(near.p[0]).toBeCloseTo(p[0], 4);
    expect(Math.abs(near.p[1] - p[1])).toBeLessThan(0.05);
    // height of the surface at the random point agrees with the point itself
    expect(status(m._nbw_poly_height(q, ref, put(scratch + 300, p), scratch + 320))).toBe('NB_OK');
    expect(Math.abs(m.HEAPF32[(scratch + 320) >> 2] - p[1])).toBeLessThan(0.05);
    // closest point of a point high above is the surface point below it
    expect(status(m._nbw_closest_point(q, ref, put(scratch + 300, [p[0], p[1] + 3, p[2]]), scratch + 340, scratch + 360))).toBe('NB_OK');
    expect(f32(scratch + 340, 3)[1]).toBeCloseTo(p[1], 1);
    expect(m.HEAP32[(scratch + 360) >> 2]).toBe(1);
    // raycast far away: hits a wall somewhere (dungeon rooms are closed) with a unit normal in xz
    const far = [p[0] + 500, p[1], p[2]];
    expect(status(m._nbw_raycast(q, ref, put(scratch + 400, p), put(scratch + 420, far), filter, scratch + 440))).toBe('NB_OK');
    const [t, nx, , nz] = f32(scratch + 440, 4);
    expect(t).toBeGreaterThanOrEqual(0);
    expect(t).toBeLessThan(1);
    expect(Math.hypot(nx, nz)).toBeCloseTo(1, 3);
    // moving toward that far point slides along walls: it ends on the mesh, no further from the target
    expect(status(m._nbw_move_along(q, ref, put(scratch + 400, p), put(scratch + 420, far), filter, scratch + 460))).toBe('NB_OK');
    const moved = f32(scratch + 460, 3);
    expect(Math.hypot(far[0] - moved[0], far[2] - moved[2])).toBeLessThanOrEqual(Math.hypot(far[0] - p[0], far[2] - p[2]) + 1e-3);
    const landed = nearest(q, moved);
    expect(landed.ref).not.toBe(0);
    expect(Math.hypot(landed.p[0] - moved[0], landed.p[2] - moved[2])).toBeLessThan(0.01);
    // distance to the nearest wall is positive (the agent radius was eroded) and at most the search radius
    expect(status(m._nbw_distance_to_wall(q, ref, put(scratch + 400, p), 50, filter, scratch + 480))).toBe('NB_OK');
    const d = m.HEAPF32[(scratch + 480) >> 2];
    expect(d).toBeGreaterThanOrEqual(0);
    expect(d).toBeLessThanOrEqual(50);
    // random point around stays within the radius
    m.HEAPU32[rng >> 2] = 7;
    expect(status(m._nbw_random_point_around(q, ref, put(scratch + 400, p), 3, filter, rng, scratch + 500, scratch + 520))).toBe('NB_OK');
    const around = f32(scratch + 520, 3);
    expect(Math.hypot(around[0] - p[0], around[2] - p[2])).toBeLessThanOrEqual(3.001);
  });

  it('random points are deterministic per seed', () => {
    const rng = scratch + 3500;
    const draw = (seed: number) => {
      m.HEAPU32[rng >> 2] = seed;
      m.HEAPU32[(rng >> 2) + 1] = 0;
      return [0, 1, 2].map(() => randomPoint(q, rng).p);
    };
    expect(draw(5)).toEqual(draw(5));
    expect(draw(5)).not.toEqual(draw(6));
  });

  it('save, load, save is byte-identical; corrupt bytes are an error, not a crash', () => {
    const save = (n: number) => {
      const pSize = scratch + 600;
      const data = m._nbw_navmesh_save(ctx, n, pSize);
      expect(data, message()).not.toBe(0);
      const bytes = m.HEAPU8.slice(data, data + u32(pSize));
      m._nbw_bytes_free(ctx, data);
      return bytes as Uint8Array;
    };
    const load = (bytes: Uint8Array) => {
      const p = m._malloc(bytes.length);
      m.HEAPU8.set(bytes, p);
      const n = m._nbw_navmesh_load(ctx, p, bytes.length);
      m._free(p);
      return n;
    };
    const a = save(nav);
    const nav2 = load(a);
    expect(nav2, message()).not.toBe(0);
    const b = save(nav2);
    expect(Buffer.from(b).equals(Buffer.from(a))).toBe(true);
    // the same paths on the loaded navmesh
    const q2 = m._nbw_query_create(ctx, nav2, 0);
    const pairs = new Float32Array([...nearest(q, [0, 0, 0]).p, ...nearest(q, [10, 0, 10]).p]);
    expect(findPaths(q2, pairs)).toEqual(findPaths(q, pairs));
    m._nbw_query_destroy(ctx, q2);
    m._nbw_navmesh_destroy(ctx, nav2);
    // flips and truncation
    const flipped = a.slice();
    flipped[Math.floor(a.length / 2)] ^= 0x40;
    expect(load(flipped)).toBe(0);
    expect(status(m._nbw_status(ctx))).toBe('NB_ERR_CORRUPT');
    expect(load(a.slice(0, a.length - 7))).toBe(0);
    expect(status(m._nbw_status(ctx))).toBe('NB_ERR_CORRUPT');
    // the native tool reads what wasm wrote
    const file = join(dir, 'dungeon.navbake');
    writeFileSync(file, a);
    const r = runNative(['path', file, '--from', '0,0,0', '--to', '10,0,10', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).status).toMatch(/complete|partial|none/);
    expect(readFileSync(file).length).toBe(a.length);
  });
});
