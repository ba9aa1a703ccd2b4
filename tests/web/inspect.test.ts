// inspect(): the intermediate stages of a bake for debug views. Checked against the native tool and the C bake's
// own statistics, for internal consistency (spans vs regions vs contours, all in one grid frame), in a worker
// against the main thread, per tile against the tiled bake, and for its errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import {
  bake,
  DEFAULTS,
  inspect,
  NavBakeError,
  STAGES,
  terminateWorkers,
  type BakeProgress,
  type Inspection,
} from '../../web/dist/index.js';
import { loadMesh, loadWasm, meshesDir, rawBake, runNative, type Mesh, type RawModule } from './helpers';

let dungeon: Mesh;
let raw: RawModule;
let solo: Inspection; // dungeon, default config, main thread

beforeAll(async () => {
  dungeon = loadMesh('dungeon.obj');
  raw = await loadWasm();
  solo = await inspect(dungeon, {}, { workers: false });
});

afterAll(() => terminateWorkers());

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e) => e,
  );
}

/** The cells (x, z) of each region's spans, as "x,z" keys. */
function regionCells(insp: Inspection): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  const s = insp.spans;
  for (let i = 0; i < s.count; i++) {
    let set = out.get(s.region[i]);
    if (!set) out.set(s.region[i], (set = new Set()));
    set.add(`${s.x[i]},${s.z[i]}`);
  }
  return out;
}

/**
 * What every inspection must satisfy: spans inside the grid, one floor per span and column, region ids within
 * 1..regionCount, contours inside the grid, each contour corner touching a cell of its own region, and every
 * simplified vertex on the raw outline.
 */
function checkConsistent(insp: Inspection, opts: { everyRegionUsed: boolean }): void {
  const { grid, spans, contours } = insp;
  const cs = grid.cellSize;
  const ch = grid.cellHeight;
  expect(grid.max[0] - grid.origin[0]).toBeCloseTo(grid.width * cs, 3);
  expect(grid.max[2] - grid.origin[2]).toBeCloseTo(grid.height * cs, 3);
  for (const a of [spans.x, spans.z, spans.y, spans.area, spans.region]) expect(a.length).toBe(spans.count);
  const floors = new Set<string>();
  const used = new Set<number>();
  const maxY = (grid.max[1] - grid.origin[1]) / ch + 1;
  // One expect per property, not per span: the first bad span is named.
  const bad = (what: string, ok: (i: number) => boolean) => {
    let first = -1;
    for (let i = 0; i < spans.count && first < 0; i++) if (!ok(i)) first = i;
    expect(first, `${what}: span ${first}`).toBe(-1);
  };
  bad('x inside the grid', (i) => spans.x[i] < grid.width);
  bad('z inside the grid', (i) => spans.z[i] < grid.height);
  bad('floor below the top', (i) => spans.y[i] <= maxY);
  bad('area 1..63', (i) => spans.area[i] >= 1 && spans.area[i] <= 63);
  bad('region 0..regionCount', (i) => spans.region[i] <= insp.regionCount); // 0 = in no region
  bad('one span per floor and column', (i) => {
    const key = `${spans.x[i]},${spans.z[i]},${spans.y[i]}`;
    if (floors.has(key)) return false;
    floors.add(key);
    if (spans.region[i]) used.add(spans.region[i]);
    return true;
  });
  if (opts.everyRegionUsed) expect(used.size).toBe(insp.regionCount); // ids are compacted: 1..regionCount all used

  const cells = regionCells(insp);
  expect(contours.offsets.length).toBe(contours.count + 1);
  expect(contours.offsets[contours.count]).toBe(contours.vertices.length / 3);
  expect(contours.rawOffsets[contours.count]).toBe(contours.rawVertices.length / 3);
  const eps = 1e-3;
  for (let c = 0; c < contours.count; c++) {
    const reg = contours.region[c];
    expect(reg).toBeGreaterThanOrEqual(1);
    expect(reg).toBeLessThanOrEqual(insp.regionCount);
    const [a, b] = [contours.offsets[c], contours.offsets[c + 1]];
    const [ra, rb] = [contours.rawOffsets[c], contours.rawOffsets[c + 1]];
    expect(b - a).toBeGreaterThanOrEqual(3);
    expect(rb - ra).toBeGreaterThanOrEqual(b - a);
    const rawKeys = new Set<string>();
    const mine = cells.get(reg) ?? new Set<string>();
    for (let k = ra; k < rb; k++) {
      const v = contours.rawVertices.subarray(3 * k, 3 * k + 3);
      const where = `contour ${c} (region ${reg}) raw vertex ${k - ra} at ${Array.from(v)}`;
      const inside =
        v[0] >= grid.origin[0] - eps && v[0] <= grid.max[0] + eps &&
        v[2] >= grid.origin[2] - eps && v[2] <= grid.max[2] + eps &&
        v[1] >= grid.origin[1] - eps && v[1] <= grid.max[1] + ch;
      if (!inside) expect.fail(`${where}: outside the grid`);
      // A corner of the outline: on the cell lattice, and one of the four cells around it is the contour's region.
      const cx = Math.round((v[0] - grid.origin[0]) / cs);
      const cz = Math.round((v[2] - grid.origin[2]) / cs);
      if (Math.abs(cx * cs + grid.origin[0] - v[0]) > eps || Math.abs(cz * cs + grid.origin[2] - v[2]) > eps) {
        expect.fail(`${where}: not a cell corner`);
      }
      const touches = [[cx - 1, cz - 1], [cx, cz - 1], [cx - 1, cz], [cx, cz]].some(([x, z]) => mine.has(`${x},${z}`));
      if (!touches) expect.fail(`${where}: no cell of region ${reg} at corner ${cx},${cz}`);
      rawKeys.add(`${cx},${cz}`);
    }
    for (let k = a; k < b; k++) {
      const v = contours.vertices.subarray(3 * k, 3 * k + 3);
      const key = `${Math.round((v[0] - grid.origin[0]) / cs)},${Math.round((v[2] - grid.origin[2]) / cs)}`;
      if (!rawKeys.has(key)) expect.fail(`simplified vertex ${key} of contour ${c} is not on its raw outline`);
    }
  }
}

describe('inspect: a solo bake', () => {
  it('has the native tool\'s voxel counts, and the walkable spans are exactly those after erosion', () => {
    const native = runNative(['voxels', resolve(meshesDir, 'dungeon.obj'), '--json']);
    expect(native.status, native.stderr).toBe(0);
    const want = JSON.parse(native.stdout);
    expect([solo.counts.gridWidth, solo.counts.gridHeight]).toEqual(want.grid);
    expect(solo.counts.heightfieldSpans).toBe(want.hf_spans);
    expect(solo.counts.compactSpans).toBe(want.compact_spans);
    expect(solo.counts.walkableSpans).toBe(want.walkable_after_erode);
    // No per-triangle areas and no volumes: the area stage keeps every span erosion left walkable.
    expect(solo.spans.count).toBe(want.walkable_after_erode);
    expect(solo.spans.count).toBeLessThan(want.compact_spans);
    expect([solo.grid.width, solo.grid.height]).toEqual(want.grid);
    expect(solo.grid.borderSize).toBe(0);
    expect(solo.tile).toBeNull();
    // The C's float32 values, shown as the config wrote them (0.3, not 0.30000001192092896)
    expect([solo.grid.cellSize, solo.grid.cellHeight]).toEqual([DEFAULTS.cellSize, DEFAULTS.cellHeight]);
    const lo = [Infinity, Infinity, Infinity];
    for (let i = 0; i < dungeon.positions.length; i++) lo[i % 3] = Math.min(lo[i % 3]!, dungeon.positions[i]!);
    expect(solo.grid.origin.map(Math.fround)).toEqual(lo);
  });

  it('counts are the C bake\'s statistics; regions are ids 1..regionCount, every one used', () => {
    const c = rawBake(raw, dungeon, {}, 0).stats!;
    expect(solo.counts.regions).toBe(c.regions);
    expect(solo.regionCount).toBe(c.regions - 1);
    expect(solo.counts.contours).toBe(c.contours);
    expect(solo.contours.count).toBe(c.contours);
    expect(solo.counts.polygons).toBe(c.polys);
    expect(solo.counts.detailTriangles).toBe(c.detail_tris);
    checkConsistent(solo, { everyRegionUsed: true });
  });

  it('monotone partition: its own region count, no distance field time', async () => {
    const c = rawBake(raw, dungeon, { partition: 2, cell_size: 0.4 }, 0).stats!;
    const i = await inspect(dungeon, { partition: 'monotone', cellSize: 0.4 }, { workers: false });
    expect(i.counts.regions).toBe(c.regions);
    expect(i.regionCount).toBe(c.regions - 1);
    expect(i.regionCount).not.toBe(solo.regionCount);
    expect(i.contours.count).toBe(c.contours);
    expect(i.counts.polygons).toBe(c.polys);
    expect(i.times.distance).toBe(0); // only the watershed builds a distance field
    expect(solo.times.distance).toBeGreaterThan(0);
    checkConsistent(i, { everyRegionUsed: true });
  });

  it('stage times add up to about the total; the bake\'s memory grows with the grid', async () => {
    const t = solo.times;
    const stages = t.rasterize + t.filter + t.compact + t.erode + t.areas + t.distance + t.regions + t.contours + t.polymesh + t.detail;
    expect(stages).toBeGreaterThan(0);
    expect(stages).toBeLessThanOrEqual(t.total + 0.5);
    expect(stages).toBeGreaterThan(t.total * 0.8);
    expect(solo.memory.peakBytes).toBeGreaterThan(solo.spans.count * 8); // at least the spans themselves
    expect(solo.memory.heapBytes).toBeGreaterThan(solo.memory.peakBytes);
    // Half the cell size: four times the columns, so clearly more memory.
    const fine = await inspect(dungeon, { cellSize: 0.15 }, { workers: false });
    expect(fine.memory.peakBytes).toBeGreaterThan(2 * solo.memory.peakBytes);
    expect(fine.spans.count).toBeGreaterThan(3 * solo.spans.count);
  });

  it('bake-time area volumes mark (or carve) exactly the spans under them', async () => {
    const g = solo.grid;
    const sp = solo.spans;
    const centre = (i: number) => [g.origin[0] + (sp.x[i] + 0.5) * g.cellSize, g.origin[2] + (sp.z[i] + 0.5) * g.cellSize];
    // a box of 8 x 8 m around a span in the middle of the list, through every floor
    const [cx, cz] = centre(sp.count >> 1);
    const min = [cx - 4.01, g.origin[1] - 1, cz - 4.01];
    const max = [cx + 3.99, g.max[1] + 1, cz + 3.99];
    const inside = (i: number) => {
      const [x, z] = centre(i);
      return x > min[0] && x < max[0] && z > min[2] && z < max[2];
    };
    let under = 0;
    for (let i = 0; i < sp.count; i++) under += inside(i) ? 1 : 0;
    expect(under).toBeGreaterThan(50);
    const marked = await inspect({ ...dungeon, volumes: [{ type: 'box', min, max, area: 5 }] }, {}, { workers: false });
    expect(marked.spans.count).toBe(sp.count);
    for (let i = 0; i < sp.count; i++) {
      expect(marked.spans.x[i]).toBe(sp.x[i]);
      expect(marked.spans.area[i]).toBe(inside(i) ? 5 : 63);
    }
    expect(marked.contours.area).toContain(5);
    const carved = await inspect({ ...dungeon, volumes: [{ type: 'box', min, max }] }, {}, { workers: false });
    expect(carved.spans.count).toBe(sp.count - under);
    // the worker gets the volumes too
    const there = await inspect({ ...dungeon, volumes: [{ type: 'box', min, max }] });
    expect(there.spans).toEqual(carved.spans);
  });

  it('per-triangle area ids reach the spans', async () => {
    const areas = new Uint8Array(dungeon.indices.length / 3).fill(7);
    const i = await inspect({ ...dungeon, areas }, {}, { workers: false });
    expect(i.spans.count).toBeGreaterThan(0);
    expect(new Set(i.spans.area)).toEqual(new Set([7]));
    expect(new Set(i.contours.area)).toEqual(new Set([7]));
    expect(new Set(solo.spans.area)).toEqual(new Set([63]));
  });
});

describe('inspect in a worker', () => {
  it('gives what the main thread gives, with progress stage by stage', async () => {
    const seen: BakeProgress[] = [];
    const w = await inspect(dungeon, {}, { onProgress: (p) => seen.push(p) });
    const strip = (i: Inspection) => ({ ...i, times: null, memory: { peakBytes: i.memory.peakBytes } });
    expect(strip(w)).toEqual(strip(solo));
    expect([...new Set(seen.map((p) => p.stage))]).toEqual(STAGES);
    // the caller's arrays were copied, not moved
    expect(dungeon.positions.length).toBeGreaterThan(0);
  });

  it('an aborted inspect rejects with the signal\'s reason', async () => {
    const ac = new AbortController();
    const p = inspect(dungeon, { cellSize: 0.1 }, { signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    const e = await rejection(p);
    expect((e as Error).name).toBe('AbortError');
    const before = new AbortController();
    before.abort();
    expect((await rejection(inspect(dungeon, {}, { signal: before.signal })) as Error).name).toBe('AbortError');
  });
});

describe('inspect: one tile of a tiled config', () => {
  it('each tile is the tile the tiled bake builds: polygon counts add up to the tiled navmesh\'s', async () => {
    const tileSize = 64;
    const nav = await bake(dungeon, { tileSize }, { workers: false });
    const polys = nav.polygons().filter((p) => !p.offMesh).length;
    const tiles = nav.tileCount;
    nav.dispose();
    let sum = 0;
    let withPolys = 0;
    let empty = 0;
    const tw = Math.fround(tileSize * solo.grid.cellSize);
    for (let z = 0; ; z++) {
      let x = 0;
      for (; ; x++) {
        let i: Inspection;
        try {
          i = await inspect(dungeon, { tileSize }, { workers: false, tile: [x, z] });
        } catch (e) {
          const code = (e as NavBakeError).code;
          if (code === 'NB_ERR_EMPTY_MESH') {
            empty++;
            continue; // no triangles near this tile
          }
          expect(code).toBe('NB_ERR_INVALID_ARG'); // outside the grid
          break;
        }
        expect(i.tile).toEqual([x, z]);
        expect(i.grid.width).toBe(tileSize);
        expect(i.grid.height).toBe(tileSize);
        expect(i.grid.borderSize).toBeGreaterThan(0);
        expect(i.grid.origin[0]).toBeCloseTo(solo.grid.origin[0] + x * tw, 3);
        expect(i.grid.origin[2]).toBeCloseTo(solo.grid.origin[2] + z * tw, 3);
        checkConsistent(i, { everyRegionUsed: false });
        sum += i.counts.polygons;
        if (i.counts.polygons > 0) withPolys++;
      }
      if (x === 0) break; // the row past the last one
    }
    expect(sum).toBe(polys);
    expect(withPolys).toBe(tiles);
    expect(withPolys + empty).toBeGreaterThan(1);
  });

  it('in a worker too, and a solo config ignores tileSize unless a tile is asked for', async () => {
    const here = await inspect(dungeon, { tileSize: 64 }, { workers: false, tile: [1, 2] });
    const there = await inspect(dungeon, { tileSize: 64 }, { tile: [1, 2] });
    expect(there.spans).toEqual(here.spans);
    expect(there.contours).toEqual(here.contours);
    const whole = await inspect(dungeon, { tileSize: 64 }, { workers: false });
    expect(whole.tile).toBeNull();
    expect(whole.spans).toEqual(solo.spans);
  });
});

describe('inspect: errors', () => {
  it('a bad config is a NavBakeError naming the field, on the main thread and from a worker', async () => {
    for (const workers of [false, 1] as const) {
      const e = await rejection(inspect(dungeon, { cellSize: -1 }, { workers }));
      expect(e).toBeInstanceOf(NavBakeError);
      expect((e as NavBakeError).code).toBe('NB_ERR_INVALID_CONFIG');
      expect((e as Error).message).toContain('config.cellSize');
    }
    const e = await rejection(inspect(dungeon, { agentRadius: 'wide' as unknown as number }));
    expect((e as NavBakeError).code).toBe('NB_ERR_INVALID_CONFIG');
  });

  it('bad geometry and bad tiles', async () => {
    const positions = dungeon.positions.slice();
    positions[4] = Number.NaN;
    const nan = await rejection(inspect({ positions, indices: dungeon.indices }));
    expect((nan as NavBakeError).code).toBe('NB_ERR_NONFINITE');
    expect((await rejection(inspect({ positions: new Float32Array(0) }))) as NavBakeError).toMatchObject({ code: 'NB_ERR_EMPTY_MESH' });
    const outside = await rejection(inspect(dungeon, { tileSize: 64 }, { tile: [99, 0] }));
    expect(outside).toMatchObject({ code: 'NB_ERR_INVALID_ARG' });
    expect((outside as Error).message).toMatch(/^navbake\.inspect: options\.tile \[99, 0\] is outside the \d+ x \d+ grid/);
    // beyond int32: refused as given, not wrapped to another tile (2^32 + 1 was tile 1) or to a solo bake (2^31)
    for (const tile of [[2 ** 31, 0], [2 ** 32 + 1, 2], [0, 1e300]] as [number, number][]) {
      for (const workers of [false, 1] as const) {
        const big = await rejection(inspect(dungeon, { tileSize: 64 }, { tile, workers }));
        expect(big).toMatchObject({ code: 'NB_ERR_INVALID_ARG' });
        expect((big as Error).message).toMatch(/^navbake\.inspect: options\.tile must be \[x, z\], two integers from 0 to 2147483647/);
        expect((big as Error).message).toContain(String(tile[0] || tile[1]));
      }
    }
    expect(await rejection(inspect(dungeon, {}, { tile: [0, 0] }))).toMatchObject({ code: 'NB_ERR_INVALID_ARG' });
    expect(await rejection(inspect(dungeon, { tileSize: 64 }, { tile: [0.5, 0] as never }))).toMatchObject({
      code: 'NB_ERR_INVALID_ARG',
    });
    // a link bake() refuses (its start outside the level) is refused here too, named as bake() names it, solo and tiled
    const link = { start: [1000, 0, 1000], end: [0, 0, 0], radius: 1 };
    const baked = await rejection(bake({ ...dungeon, links: [link] }, {}, { workers: false }));
    expect(baked).toMatchObject({ code: 'NB_ERR_INVALID_ARG' });
    for (const [config, opts] of [[{}, {}], [{ tileSize: 64 }, { tile: [1, 1] }]] as const) {
      for (const workers of [false, 1] as const) {
        const e = await rejection(inspect({ ...dungeon, links: [link] }, config, { ...opts, workers }));
        expect(e).toMatchObject({ code: 'NB_ERR_INVALID_ARG' });
        expect((e as Error).message).toMatch(/^navbake\.inspect: geometry\.links\[0\]: start \(1000, 0, 1000\) is outside the level's bounds/);
      }
    }
    // the instance still works after the failures
    const again = await inspect(dungeon, {}, { workers: false });
    expect(again.spans.count).toBe(solo.spans.count);
  });
});
