// Streaming tiles: NavMesh.readTiles reads a saved file's records without loading it, NavMesh.create makes an
// empty navmesh of the grid, loadTile / removeTile / saveTile / tiles() move single tiles in and out.
import { beforeAll, describe, expect, it } from 'vitest';
import { bake, NavBakeError, NavMesh } from '../../web/dist/index.js';
import { crc32 } from 'node:zlib';
import { loadMesh, type Mesh } from './helpers';

let dungeon: Mesh;
let file: Uint8Array; // dungeon baked in 32-cell tiles, saved

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(NavBakeError);
    return (e as NavBakeError).code;
  }
  throw new Error('expected a NavBakeError');
}

beforeAll(async () => {
  dungeon = loadMesh('dungeon.obj');
  const nav = await bake(dungeon, { tileSize: 32 }, { workers: false });
  file = nav.save();
  nav.dispose();
});

describe('NavMesh.readTiles', () => {
  it('gives the grid and every tile record, sorted as saved', async () => {
    const { params, tiles } = NavMesh.readTiles(file);
    const whole = await NavMesh.load(file);
    expect(params).toEqual(whole.params);
    expect(params.tileWidth).toBeCloseTo(32 * 0.3, 5);
    expect(tiles.length).toBe(whole.tileCount);
    expect(tiles.map(({ x, z }) => ({ x, z }))).toEqual(whole.tiles().map(({ x, z }) => ({ x, z })));
    for (const t of tiles) expect(t.bytes).toEqual(whole.saveTile(t.x, t.z));
    expect(whole.saveTile(99, 99)).toBeNull();
    whole.dispose();
  });

  it('rejects damaged headers and records', () => {
    const bad = (mutate: (b: Uint8Array) => Uint8Array) => code(() => NavMesh.readTiles(mutate(file.slice())));
    expect(bad((b) => b.subarray(0, 20))).toBe('NB_ERR_CORRUPT');
    expect(bad((b) => ((b[0] ^= 1), b))).toBe('NB_ERR_CORRUPT'); // magic
    expect(bad((b) => ((b[4] = 2), b))).toBe('NB_ERR_VERSION');
    expect(bad((b) => ((b[13] ^= 0x40), b))).toBe('NB_ERR_CORRUPT'); // origin: header checksum
    expect(bad((b) => b.subarray(0, b.length - 4))).toBe('NB_ERR_CORRUPT'); // last record cut short
    expect(bad((b) => Uint8Array.from([...b, 0, 0, 0, 0]))).toBe('NB_ERR_CORRUPT'); // trailing bytes
  });

  it('refuses what NavMesh.load refuses in a header whose checksum is right: the params must make a navmesh', async () => {
    /** The file with a header field rewritten and the header's checksum made right again. */
    const edit = (write: (dv: DataView) => void) => {
      const b = file.slice();
      const dv = new DataView(b.buffer);
      write(dv);
      dv.setUint32(44, crc32(b.subarray(0, 44)), true);
      return b;
    };
    for (const [what, b, why] of [
      ['origin NaN', edit((dv) => dv.setFloat32(12, NaN, true)), /origin is not finite/],
      ['origin beyond 1e9', edit((dv) => dv.setFloat32(20, -2e9, true)), /origin\.z \(-2000000000\) is beyond 1e\+09/],
      ['tile width < 0', edit((dv) => dv.setFloat32(24, -9.6, true)), /tileWidth is -9\.6\d*: it must be > 0/],
      ['tile depth infinite', edit((dv) => dv.setFloat32(28, Infinity, true)), /tileDepth is Infinity/],
      ['max tiles 0', edit((dv) => dv.setUint32(32, 0, true)), /maxTiles is 0 \(1\.\.4095\)/],
      ['max tiles 5000', edit((dv) => dv.setUint32(32, 5000, true)), /maxTiles is 5000/],
    ] as const) {
      let e: NavBakeError | null = null;
      try {
        NavMesh.readTiles(b);
      } catch (x) {
        e = x as NavBakeError;
      }
      expect([e?.code, e?.message], what).toEqual(['NB_ERR_CORRUPT', expect.stringMatching(why)]);
      expect(await NavMesh.load(b).catch((x: NavBakeError) => x.code), what).toBe('NB_ERR_CORRUPT');
    }
    // a file written big-endian (each field byte-swapped) is named as such, by both
    const swapped = file.slice();
    swapped.set([0x48, 0x4d, 0x42, 0x4e]);
    expect(() => NavMesh.readTiles(swapped)).toThrow(/bad magic 0x4e424d48 .*: byte-swapped, written big-endian/);
    await expect(NavMesh.load(swapped)).rejects.toThrow(/bad magic 0x4e424d48 .*: byte-swapped, written big-endian/);
  });
});

describe('loading tiles one by one', () => {
  it('nearest-first: paths stay within the loaded tiles; all loaded, the navmesh saves to the same bytes', async () => {
    const { params, tiles } = NavMesh.readTiles(file);
    const nav = await NavMesh.create(params);
    expect(nav.tileCount).toBe(0);
    expect(nav.findPath([0, 0, 0], [1, 0, 1]).status).toBe('none');
    const player = [40, 10, -20];
    const centre = (t: { x: number; z: number }) => [
      params.origin[0] + (t.x + 0.5) * params.tileWidth,
      params.origin[2] + (t.z + 0.5) * params.tileDepth,
    ];
    const order = [...tiles].sort((a, b) => {
      const [ax, az] = centre(a);
      const [bx, bz] = centre(b);
      return Math.hypot(ax - player[0], az - player[2]) - Math.hypot(bx - player[0], bz - player[2]);
    });
    const loaded = new Set<string>();
    const inLoaded = (x: number, z: number) => {
      const eps = 1e-3;
      for (const key of loaded) {
        const [tx, tz] = key.split(',').map(Number);
        const x0 = params.origin[0] + tx * params.tileWidth;
        const z0 = params.origin[2] + tz * params.tileDepth;
        if (x >= x0 - eps && x <= x0 + params.tileWidth + eps && z >= z0 - eps && z <= z0 + params.tileDepth + eps) return true;
      }
      return false;
    };
    let checkedPaths = 0;
    order.forEach((t, i) => {
      nav.loadTile(t.bytes);
      loaded.add(`${t.x},${t.z}`);
      expect(nav.tileCount).toBe(i + 1);
      if (i % 4 !== 3) return;
      nav.seedRandom(i);
      for (let k = 0; k < 10; k++) {
        const a = nav.randomPoint()!;
        const b = nav.randomPoint()!;
        const p = nav.findPath(a, b);
        if (p.status === 'none') continue;
        checkedPaths++;
        for (let j = 0; j < p.points.length; j += 3) {
          expect(inLoaded(p.points[j], p.points[j + 2]), `path point ${j / 3} after ${i + 1} tiles`).toBe(true);
        }
      }
    });
    expect(checkedPaths).toBeGreaterThan(20);
    expect(nav.tiles().length).toBe(tiles.length);
    expect(nav.save()).toEqual(file);
    nav.dispose();
  });

  it('loadTile replaces the tile at its position; removeTile takes it out', async () => {
    const { params, tiles } = NavMesh.readTiles(file);
    const nav = await NavMesh.create(params);
    for (const t of tiles) nav.loadTile(t.bytes);
    const t = tiles[3];
    const polygons = nav.tiles().find((i) => i.x === t.x && i.z === t.z)!.polygons;
    expect(polygons).toBeGreaterThan(0);
    nav.loadTile(t.bytes.slice()); // again: replaced, not added twice
    expect(nav.tileCount).toBe(tiles.length);
    expect(nav.removeTile(t.x, t.z)).toBe(true);
    expect(nav.removeTile(t.x, t.z)).toBe(false);
    expect(nav.tileCount).toBe(tiles.length - 1);
    expect(nav.tiles().some((i) => i.x === t.x && i.z === t.z)).toBe(false);
    expect(nav.saveTile(t.x, t.z)).toBeNull();
    nav.loadTile(t.bytes);
    expect(nav.save()).toEqual(file);
    nav.dispose();
  });

  it('corrupt tile bytes: NB_ERR_CORRUPT and the navmesh is unchanged', async () => {
    const { params, tiles } = NavMesh.readTiles(file);
    const nav = await NavMesh.create(params);
    for (const t of tiles.slice(0, 5)) nav.loadTile(t.bytes);
    const before = nav.save();
    // a new tile and a replacement of a loaded one, each damaged in its payload (CRC) and truncated
    for (const t of [tiles[6], tiles[2]]) {
      const flipped = t.bytes.slice();
      flipped[flipped.length - 8] ^= 0x10;
      expect(code(() => nav.loadTile(flipped))).toBe('NB_ERR_CORRUPT');
      expect(code(() => nav.loadTile(t.bytes.slice(0, t.bytes.length - 4)))).toBe('NB_ERR_CORRUPT');
      expect(code(() => nav.loadTile(new Uint8Array(8)))).toBe('NB_ERR_CORRUPT');
      expect(nav.save()).toEqual(before);
    }
    nav.dispose();
  });

  it("a tile of another grid (another tile size) is refused, and the navmesh is unchanged, refs included", async () => {
    const { params, tiles } = NavMesh.readTiles(file);
    const nav = await NavMesh.create(params);
    for (const t of tiles) nav.loadTile(t.bytes); // all of them: every place a refused tile aims at is taken
    const before = nav.save();
    const refs = nav.polygons().map((p) => p.ref);
    // the level in 64-cell tiles: every one of them lies outside its cell of the 32-cell grid
    const big = await bake(dungeon, { tileSize: 64 }, { workers: false });
    const other = NavMesh.readTiles(big.save()).tiles;
    big.dispose();
    for (const t of other) {
      const e = (() => {
        try {
          nav.loadTile(t.bytes);
        } catch (x) {
          return x as NavBakeError;
        }
        return null;
      })();
      expect(e?.code, `tile ${t.x}, ${t.z}`).toBe('NB_ERR_INVALID_ARG');
      expect(e?.message).toMatch(/a tile of another grid/);
    }
    expect(nav.save()).toEqual(before);
    // the refs an application holds stay valid: the tiles the refused ones would have replaced kept their places
    expect(nav.polygons().map((p) => p.ref)).toEqual(refs);
    for (const ref of refs) nav.setPolygonFlags(ref, 1);
    nav.dispose();
  });

  it('a tile of the same grid baked for another agent or cell size is refused, and the navmesh is unchanged', async () => {
    const { params, tiles } = NavMesh.readTiles(file);
    const nav = await NavMesh.create(params);
    for (const t of tiles.slice(0, tiles.length >> 1)) nav.loadTile(t.bytes);
    const before = nav.save();
    // the same grid (32 cells of 0.3: 9.6 m tiles) for a thinner agent, and in 48 cells of 0.2
    for (const [config, what] of [
      [{ tileSize: 32, agentRadius: 0.3 }, /radius 0\.3, climb 0\.9, cell size 0\.3; theirs 2, 0\.6, 0\.9, 0\.3/],
      [{ tileSize: 48, cellSize: 0.2 }, /cell size 0\.2; theirs 2, 0\.6, 0\.9, 0\.3\)/],
    ] as const) {
      const otherNav = await bake(dungeon, config, { workers: false });
      expect(otherNav.params).toEqual(params);
      const other = NavMesh.readTiles(otherNav.save()).tiles;
      otherNav.dispose();
      for (const t of other) {
        let e: NavBakeError | null = null;
        try {
          nav.loadTile(t.bytes);
        } catch (x) {
          e = x as NavBakeError;
        }
        expect(e?.code, `tile ${t.x}, ${t.z}`).toBe('NB_ERR_INVALID_ARG');
        expect(e?.message).toMatch(/was baked for another agent or cell size than the tiles in this navmesh/);
        expect(e?.message).toMatch(what);
      }
      expect(nav.save()).toEqual(before);
    }
    // an empty navmesh takes the first tile of any agent
    const empty = await NavMesh.create(params);
    const thin = await bake(dungeon, { tileSize: 32, agentRadius: 0.3 }, { workers: false });
    const first = NavMesh.readTiles(thin.save()).tiles[0]!;
    thin.dispose();
    empty.loadTile(first.bytes);
    expect(empty.tileCount).toBe(1);
    expect(code(() => empty.loadTile(tiles.find((t) => t.x !== first.x || t.z !== first.z)!.bytes))).toBe('NB_ERR_INVALID_ARG');
    empty.dispose();
    nav.dispose();
  });

  it('NavMesh.create checks its params', async () => {
    const e = await NavMesh.create({ origin: [0, 0, 0], tileWidth: -1, tileDepth: 1, maxTiles: 4 }).catch((x) => x);
    expect(e).toBeInstanceOf(NavBakeError);
    expect((e as NavBakeError).code).toBe('NB_ERR_INVALID_ARG');
    const f = await NavMesh.create({ origin: [0, NaN, 0], tileWidth: 1, tileDepth: 1, maxTiles: 4 }).catch((x) => x);
    expect((f as NavBakeError).code).toBe('NB_ERR_NONFINITE');
    // a finite number too large for float32 is named as such, not as "not finite"
    const o = await NavMesh.create({ origin: [0, 0, 0], tileWidth: 1e39, tileDepth: 1, maxTiles: 4 }).catch((x) => x);
    expect([(o as NavBakeError).code, (o as Error).message]).toEqual(['NB_ERR_NONFINITE', expect.stringMatching(/params\.tileWidth overflows float32 \(got 1e\+39\)/)]);
    const g = await NavMesh.create({ origin: [0, 0, 0], tileWidth: 1, tileDepth: 1, maxTiles: 5000 }).catch((x) => x);
    expect((g as NavBakeError).message).toMatch(/maxTiles/);
    const nav = await NavMesh.create({ origin: [1, 2, 3], tileWidth: 4, tileDepth: 5, maxTiles: 6 });
    expect(nav.params).toEqual({ origin: [1, 2, 3], tileWidth: 4, tileDepth: 5, maxTiles: 6 });
    nav.dispose();
  });
});
