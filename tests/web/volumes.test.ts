// Bake-time area volumes (box, cylinder, convex: area 0 carves, 1..63 marks) and off-mesh links, passed to the C
// bake the same way solo and tiled, in workers and on the main thread.
import { afterAll, describe, expect, it } from 'vitest';
import { bake, NavBakeError, PATH_POINT, terminateWorkers, type Geometry, type NavBakeConfig, type NavMesh, type QueryFilter } from '../../web/dist/index.js';
import { resolve } from 'node:path';
import { loadMesh, meshesDir } from './helpers';

afterAll(() => terminateWorkers());

/** Flat rectangles at y (two triangles each). */
function floors(...rects: [number, number, number, number, number?][]): Geometry {
  const positions: number[] = [];
  const indices: number[] = [];
  for (const [x0, z0, x1, z1, y = 0] of rects) {
    const b = positions.length / 3;
    positions.push(x0, y, z0, x0, y, z1, x1, y, z1, x1, y, z0);
    indices.push(b, b + 1, b + 2, b, b + 2, b + 3);
  }
  return { positions: new Float32Array(positions), indices: new Uint32Array(indices) };
}

const solo: NavBakeConfig = { agentRadius: 0.3 };
const tiled: NavBakeConfig = { agentRadius: 0.3, tileSize: 16 };

/** Every way of running the bake; they must agree byte for byte. Returns the main-thread navmesh. */
async function bakeAll(g: Geometry, config: NavBakeConfig): Promise<NavMesh> {
  const here = await bake(g, config, { workers: false });
  const inWorkers = await bake(g, config, { workers: 2 });
  expect(inWorkers.save()).toEqual(here.save());
  inWorkers.dispose();
  return here;
}

async function code(p: Promise<unknown>): Promise<NavBakeError> {
  const e = await p.then(
    () => null,
    (x) => x,
  );
  expect(e).toBeInstanceOf(NavBakeError);
  return e as NavBakeError;
}

describe('area volumes', () => {
  for (const config of [solo, tiled]) {
    const kind = config.tileSize ? 'tiled' : 'solo';

    it(`${kind}: water (box and convex) with a cost makes paths go around it`, async () => {
      // a 30 x 10 floor; water across x 10..20 except a dry lane at z 8..10
      const base = floors([0, 0, 30, 10]);
      const water: Geometry['volumes'][] = [
        [{ type: 'box', min: [10, -1, -1], max: [20, 1, 8], area: 5 }],
        [{ type: 'convex', points: [[10, -1], [20, -1], [20, 8], [10, 8]], minY: -1, maxY: 1, area: 5 }],
      ];
      for (const volumes of water) {
        const nav = await bakeAll({ ...base, volumes }, config);
        expect(nav.polygons().some((p) => p.area === 5)).toBe(true);
        const direct = nav.findPath([2, 0, 3], [28, 0, 3]);
        const around = nav.findPath([2, 0, 3], [28, 0, 3], { filter: { areaCost: { 5: 20 } } });
        expect(direct.status).toBe('complete');
        expect(around.status).toBe('complete');
        expect(direct.length).toBeLessThan(27);
        expect(around.length).toBeGreaterThan(direct.length + 3);
        // the detour runs through the dry lane
        let maxZ = 0;
        for (let i = 2; i < around.points.length; i += 3) maxZ = Math.max(maxZ, around.points[i]);
        expect(maxZ).toBeGreaterThan(7.5);
        nav.dispose();
      }
    });

    it(`${kind}: each query uses the filter it is given, whatever the calls before gave (one object changed, or others)`, async () => {
      const nav = await bake({ ...floors([0, 0, 30, 10]), volumes: [{ type: 'box', min: [10, -1, -1], max: [20, 1, 8], area: 5 }] }, config, { workers: false });
      const A = [2, 0, 3] as const;
      const B = [28, 0, 3] as const;
      const direct = nav.findPath(A, B).length;
      const length = (filter?: QueryFilter) => {
        const r = nav.findPath(A, B, filter ? { filter } : undefined);
        return r.status === 'none' ? 'none' : r.length;
      };
      const detour = length({ areaCost: { 5: 20 } });
      expect(detour).toBeGreaterThan(direct + 3);
      const f: QueryFilter = { areaCost: { 5: 20 } };
      const steps: [() => QueryFilter | undefined, number | 'none'][] = [
        [() => f, detour],
        [() => ((f.areaCost = { 5: 1 }), f), direct], // the same object, changed
        [() => ((f.areaCost = { 5: 20 }), f), detour],
        [() => ({ includeFlags: 0xffff }), direct], // a cost not given is 1 again
        [() => ({ areaCost: [, , , , , 20] as number[] }), detour],
        [() => ({ areaCost: { 5: 20 }, excludeFlags: 1 }), 'none'],
        [() => ({ areaCost: { 5: 20 } }), detour], // the flags back to their defaults
        [() => undefined, direct],
        [() => ({ areaCost: { 5: 20 }, includeFlags: 2 }), 'none'],
        [() => f, detour],
      ];
      for (const [i, [filter, want]] of steps.entries()) expect(length(filter()), `step ${i}`).toBe(want);
      nav.dispose();
    });

    it(`${kind}: a carving box (or cylinder) cuts a corridor`, async () => {
      const corridor = floors([0, 0, 30, 4]);
      const open = await bakeAll(corridor, config);
      expect(open.findPath([2, 0, 2], [28, 0, 2]).status).toBe('complete');
      open.dispose();
      for (const volumes of [
        [{ type: 'box' as const, min: [14, -1, -1], max: [16, 1, 5] }],
        [{ type: 'cylinder' as const, center: [15, -1, 2], radius: 2.5, height: 2, area: 0 }],
      ]) {
        const cut = await bakeAll({ ...corridor, volumes }, config);
        const p = cut.findPath([2, 0, 2], [28, 0, 2]);
        expect(p.status).toBe('partial');
        expect(p.points[p.points.length - 3]).toBeLessThan(14.5); // stops at the cut
        cut.dispose();
      }
    });
  }

  it('bad volumes are rejected naming the volume and the field', async () => {
    const g = floors([0, 0, 10, 10]);
    const cases: [Geometry['volumes'], string, RegExp][] = [
      [[{ type: 'box', min: [0, 0, 0], max: [1, 1, 1] }, { type: 'box', min: [0, NaN, 0], max: [1, 1, 1] }], 'NB_ERR_NONFINITE', /volumes\[1\]\.min\[1\]/],
      [[{ type: 'box', min: [2, 0, 0], max: [1, 1, 1] }], 'NB_ERR_INVALID_ARG', /volumes\[0\]\.min\.x/],
      [[{ type: 'box', min: [0, 0, 0], max: [1, 1, 1], area: 64 }], 'NB_ERR_INVALID_ARG', /volumes\[0\]\.area/],
      [[{ type: 'cylinder', center: [0, 0, 0], radius: -1, height: 1 }], 'NB_ERR_INVALID_ARG', /volumes\[0\]\.radius/],
      [[{ type: 'convex', points: [[0, 0], [1, 1]], minY: 0, maxY: 1 }], 'NB_ERR_INVALID_ARG', /volumes\[0\]\.points/],
      [[{ type: 'convex', points: [[0, 0], [1, 0], [1, Infinity]], minY: 0, maxY: 1 }], 'NB_ERR_NONFINITE', /volumes\[0\]\.points\[2\]/],
      [[{ type: 'sphere' } as never], 'NB_ERR_INVALID_ARG', /volumes\[0\]\.type/],
    ];
    for (const [volumes, c, message] of cases) {
      for (const config of [solo, tiled]) {
        const e = await code(bake({ ...g, volumes }, config, { workers: false }));
        expect(e.code, e.message).toBe(c);
        expect(e.message).toMatch(message);
      }
    }
  });
});

describe('off-mesh links', () => {
  // two platforms with a 2-unit gap; tiled, the link's ends lie in neighbouring tiles (x 4.8..9.6, 9.6..14.4)
  const islands = floors([0, 0, 10, 10], [12, 0, 22, 10]);
  const jump = { start: [9.4, 0, 5], end: [12.6, 0, 5], radius: 0.6 };

  for (const config of [solo, tiled]) {
    const kind = config.tileSize ? 'tiled' : 'solo';
    it(`${kind}: a link makes an island reachable (one way unless bidirectional)`, async () => {
      const none = await bakeAll(islands, config);
      expect(none.findPath([2, 0, 5], [20, 0, 5]).status).toBe('partial');
      none.dispose();

      const oneWay = await bakeAll({ ...islands, links: [jump] }, config);
      const there = oneWay.findPath([2, 0, 5], [20, 0, 5]);
      expect(there.status).toBe('complete');
      expect(there.length).toBeGreaterThan(17.5); // 2 -> 20 along x, through the link
      expect(oneWay.findPath([20, 0, 5], [2, 0, 5]).status).toBe('partial');
      const link = oneWay.polygons().filter((p) => p.offMesh);
      expect(link.length).toBe(1);
      expect(link[0].area).toBe(63);
      const both_ends = { start: true, end: true };
      expect(link[0].link).toEqual({ userId: 0, bidirectional: false, radius: Math.fround(jump.radius), attached: both_ends });
      expect(oneWay.polygons().filter((p) => p.link)).toHaveLength(1); // ground polygons have none
      oneWay.dispose();

      // userId above 2^31: read back unsigned
      const both = await bakeAll({ ...islands, links: [{ ...jump, bidirectional: true, area: 7, flags: 4, userId: 0xfffffff0 }] }, config);
      expect(both.findPath([20, 0, 5], [2, 0, 5]).status).toBe('complete');
      const l = both.polygons().find((p) => p.offMesh)!;
      expect([l.area, l.flags]).toEqual([7, 4]);
      expect(l.link).toEqual({ userId: 0xfffffff0, bidirectional: true, radius: Math.fround(jump.radius), attached: both_ends });
      // the path says where it takes the link (to play a jump), and which link it is
      const back = both.findPath([20, 0, 5], [2, 0, 5]);
      const n = back.points.length / 3;
      expect(back.pointFlags.length).toBe(n);
      expect(back.pointRefs.length).toBe(n);
      expect(back.pointFlags[0] & PATH_POINT.START).toBeTruthy();
      expect(back.pointFlags[n - 1] & PATH_POINT.END).toBeTruthy();
      expect(back.pointRefs[n - 1]).toBe(0);
      const onLink = [...back.pointFlags.keys()].filter((i) => back.pointFlags[i] & PATH_POINT.OFFMESH);
      expect(onLink).toHaveLength(2); // the link's start, then its end
      expect(onLink[1]).toBe(onLink[0] + 1);
      const taken = both.offMeshLink(back.pointRefs[onLink[0]])!;
      expect(back.pointRefs[onLink[0]]).toBe(l.ref);
      expect(taken).toMatchObject({ userId: 0xfffffff0, bidirectional: true, area: 7, flags: 4 });
      // bidirectional, taken backwards: the path enters at the link's end and leaves at its start
      const at = (i: number) => [...back.points.subarray(3 * i, 3 * i + 3)];
      expect(at(onLink[0])[0]).toBeCloseTo(jump.end[0], 1);
      expect(at(onLink[1])[0]).toBeCloseTo(jump.start[0], 1);
      expect(taken.start.map((v, k) => v - jump.start[k]).every((d) => Math.abs(d) < 1e-5)).toBe(true);
      // ground polygons and stale refs are not links
      expect(both.offMeshLink(back.pointRefs[0])).toBeNull();
      expect(both.offMeshLink(0)).toBeNull();
      // a filter that excludes the link's flags cuts it again
      expect(both.findPath([20, 0, 5], [2, 0, 5], { filter: { excludeFlags: 4 } }).status).toBe('partial');
      both.dispose();
    });
  }

  it('a link whose end finds no ground within its radius says so (attached.end false), and no path takes it', async () => {
    const short = { ...jump, end: [12.6, 5, 5] }; // above the far island by more than the climb
    const nav = await bakeAll({ ...islands, links: [short] }, solo);
    const l = nav.polygons().find((p) => p.offMesh)!;
    expect(l.link!.attached).toEqual({ start: true, end: false });
    expect(nav.offMeshLink(l.ref)!.attached).toEqual({ start: true, end: false });
    expect(nav.findPath([2, 0, 5], [20, 0, 5]).status).toBe('partial');
    nav.dispose();
  });

  it('bad links are rejected naming the link and the field', async () => {
    const cases: [Geometry['links'], string, RegExp][] = [
      [[jump, { ...jump, radius: 0 }], 'NB_ERR_INVALID_ARG', /links\[1\]\.radius/],
      [[{ ...jump, end: [1, Infinity, 1] }], 'NB_ERR_NONFINITE', /links\[0\]\.end\[1\]/],
      [[{ ...jump, area: 0 }], 'NB_ERR_INVALID_ARG', /links\[0\]\.area/],
      [[{ ...jump, flags: 0x10000 }], 'NB_ERR_INVALID_ARG', /links\[0\]\.flags/],
      [[{ ...jump, start: { x: 1, z: 2 } as never }], 'NB_ERR_INVALID_ARG', /links\[0\]\.start\.y/],
    ];
    for (const [links, c, message] of cases) {
      const e = await code(bake({ ...islands, links }, solo));
      expect(e.code, e.message).toBe(c);
      expect(e.message).toMatch(message);
    }
  });

  it('tiled: a link across a tile corner lands in the diagonal tile, which can be removed and loaded again', async () => {
    // tiles of 4.8: the start in tile (1, 1), the end in tile (2, 2), the far island's only tile near it
    const corner = floors([0, 0, 10, 10], [12, 12, 22, 22]);
    const hop = { start: [9.4, 0, 9.4], end: [12.6, 0, 12.6], radius: 0.6, bidirectional: true };
    const nav = await bakeAll({ ...corner, links: [hop] }, tiled);
    expect(nav.findPath([2, 0, 2], [20, 0, 20]).status).toBe('complete');
    expect(nav.findPath([20, 0, 20], [2, 0, 2]).status).toBe('complete');
    const bytes = nav.saveTile(2, 2)!;
    expect(nav.removeTile(2, 2)).toBe(true);
    expect(nav.findPath([2, 0, 2], [20, 0, 20]).status).toBe('partial');
    nav.loadTile(bytes);
    expect(nav.findPath([2, 0, 2], [20, 0, 20]).status).toBe('complete');
    // and the other way round: the start's tile added after the end's
    const start = nav.saveTile(1, 1)!;
    nav.removeTile(1, 1);
    expect(nav.findPath([20, 0, 20], [2, 0, 2]).status).toBe('partial');
    nav.loadTile(start);
    expect(nav.findPath([20, 0, 20], [2, 0, 2]).status).toBe('complete');
    nav.dispose();
  });

  it('tiled: a link to a tile several tiles on lands there, whichever of the two tiles comes first', async () => {
    // tiles of 4.8: the start in tile (1, 1), the end in tile (4, 1), three tiles on
    const far = floors([0, 0, 10, 10], [20, 0, 30, 10]);
    const leap = { start: [9.4, 0, 5], end: [20.6, 0, 5], radius: 0.6, bidirectional: true };
    const nav = await bakeAll({ ...far, links: [jump, leap] }, tiled);
    expect(nav.findPath([2, 0, 5], [28, 0, 5]).status).toBe('complete');
    expect(nav.findPath([28, 0, 5], [2, 0, 5]).status).toBe('complete');
    for (const [x, z] of [
      [4, 1],
      [1, 1],
    ]) {
      const bytes = nav.saveTile(x, z)!;
      expect(nav.removeTile(x, z)).toBe(true);
      expect(nav.findPath([2, 0, 5], [28, 0, 5]).status).toBe('partial');
      // with the landing tile gone, the leap's end is not attached (it lives in the start's tile)
      const leapEnd = () => nav.polygons().find((p) => p.link && p.vertices[0] > 9 && p.vertices[3] > 20)?.link?.attached.end;
      if (x === 4) expect(leapEnd()).toBe(false);
      nav.loadTile(bytes);
      expect(leapEnd()).toBe(true);
      expect(nav.findPath([2, 0, 5], [28, 0, 5]).status).toBe('complete');
      expect(nav.findPath([28, 0, 5], [2, 0, 5]).status).toBe('complete');
    }
    nav.dispose();
  });

  it("paths through many links: each link taken is a pair of OFFMESH points, the first carrying the link's ref", async () => {
    const level = loadMesh(resolve(meshesDir, 'nav_test.obj'));
    const base = await bake(level, { tileSize: 32 }, { workers: false });
    base.seedRandom(8);
    const links = Array.from({ length: 20 }, (_, i) => ({ start: base.randomPoint()!, end: base.randomPoint()!, radius: 0.5, bidirectional: i % 2 === 0, userId: i + 1 }));
    base.dispose();
    const nav = await bake({ ...level, links }, { tileSize: 32 }, { workers: false });
    const check = (p: ReturnType<NavMesh['findPath']>, what: string) => {
      const n = p.pointFlags.length;
      expect(p.pointFlags[0] & PATH_POINT.START, what).toBeTruthy();
      expect(p.pointFlags[n - 1] & PATH_POINT.END, what).toBeTruthy();
      expect(p.pointRefs[n - 1], what).toBe(0); // nothing is entered at the end
      for (let i = 0; i < n; i++) {
        if (!(p.pointFlags[i] & PATH_POINT.OFFMESH)) continue;
        // a link's start: the link, then its end as the next point
        const link = nav.offMeshLink(p.pointRefs[i]);
        expect(link, `${what}: point ${i}`).not.toBeNull();
        expect(p.pointFlags[i + 1] & PATH_POINT.OFFMESH, `${what}: point ${i + 1}`).toBeTruthy();
        i++;
      }
    };
    nav.seedRandom(9);
    let taken = 0;
    for (let i = 0; i < 2000; i++) {
      const p = nav.findPath(nav.randomPoint()!, nav.randomPoint()!);
      if (p.status === 'none') continue;
      check(p, `path ${i} (${p.status})`);
      taken += p.pointFlags.some((f) => f & PATH_POINT.OFFMESH) ? 1 : 0;
    }
    expect(taken).toBeGreaterThan(100);
    // the batch with details gives each pair's flags and refs as findPath does, across its 4096-pair chunks
    const pairs = new Float32Array(5000 * 6);
    for (let i = 0; i < pairs.length; i += 3) pairs.set(nav.randomPoint()!, i);
    const batch = nav.findPaths(pairs, { details: true });
    let withLinks = 0;
    for (let i = 0; i < 5000; i++) {
      const one = nav.findPath(pairs.subarray(i * 6, i * 6 + 3), pairs.subarray(i * 6 + 3, i * 6 + 6));
      const [a, b] = [batch.offsets[i], batch.offsets[i + 1]];
      expect(batch.pointFlags.subarray(a, b), `pair ${i}`).toEqual(one.pointFlags);
      expect(batch.pointRefs.subarray(a, b), `pair ${i}`).toEqual(one.pointRefs);
      withLinks += one.pointFlags.some((f) => f & PATH_POINT.OFFMESH) ? 1 : 0;
    }
    expect(withLinks).toBeGreaterThan(200);
    expect(() => nav.findPaths(pairs, { details: 1 } as never)).toThrow(/findPaths: options.details must be a boolean/);
    // standing exactly on a link's start or end: the start point is where the link is taken, the end where it lands
    const direct = links.filter((l) => nav.findPath(l.start, l.end).status === 'complete');
    expect(direct.length).toBeGreaterThan(5);
    for (const l of direct) {
      const p = nav.findPath(l.start, l.end);
      check(p, `link ${l.userId}`);
      expect(p.pointFlags[0]).toBe(PATH_POINT.START | PATH_POINT.OFFMESH);
      expect(nav.offMeshLink(p.pointRefs[0])!.userId).toBe(l.userId);
    }
    nav.dispose();
  });
});
