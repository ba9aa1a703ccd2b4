// The package's command-line tool (web/bin, built by `make web` into web/dist/bin/navbake.js): its subcommands
// against the native tool on the same files, glTF input with node transforms, the SVG picture, and its errors.
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Document, NodeIO } from '@gltf-transform/core';
import {
  ALL_EXTENSIONS,
  EXTMeshGPUInstancing,
  EXTMeshoptCompression,
  KHRDracoMeshCompression,
  KHRMeshQuantization,
} from '@gltf-transform/extensions';
import draco3d from 'draco3dgltf';
import { MeshoptEncoder } from 'meshoptimizer';
import { DEFAULTS, NavMesh } from '../../web/dist/index.js';
import { meshesDir, root, runNative } from './helpers';

const cli = resolve(root, 'web/dist/bin/navbake.js');
const dir = mkdtempSync(join(tmpdir(), 'navbake-cli-'));
const dungeon = resolve(meshesDir, 'dungeon.obj');

interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

function navbake(args: string[]): Run {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Runs and parses the one JSON line; fails with the tool's stderr when it did not exit 0. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function json(run: (a: string[]) => Run, args: string[]): any {
  const r = run(args);
  expect(r.status, `${args.join(' ')}\n${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
}

function file(name: string, text: string | Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** Pairs as the tools read them: seeded random points on the navmesh, plus pairs with no path (off the mesh). */
async function pairsFile(navbakeFile: string, name: string, n: number): Promise<string> {
  const nav = await NavMesh.load(readFileSync(navbakeFile));
  try {
    nav.seedRandom(12345);
    const lines: string[] = [];
    for (let i = 0; i < n; i++) {
      const a = nav.randomPoint()!;
      const b = nav.randomPoint()!;
      lines.push([...a, ...b].map((v) => v.toFixed(4)).join(' '));
    }
    lines.push('1000 0 1000 0 0 0', '', '0 0 0 -1000 0 -1000');
    return file(name, lines.join('\n') + '\n');
  } finally {
    nav.dispose();
  }
}

interface QueryResult {
  status: string;
  length: number;
  points: number;
}

function expectSameResults(node: QueryResult[], native: QueryResult[]): void {
  expect(node.length).toBe(native.length);
  node.forEach((r, i) => {
    expect(r.status, `pair ${i}`).toBe(native[i].status);
    expect(Math.abs(r.length - native[i].length), `pair ${i} length`).toBeLessThanOrEqual(1e-3);
    expect(r.points, `pair ${i} points`).toBe(native[i].points);
  });
}

const baked = join(dir, 'dungeon.navbake');
const nativeBaked = join(dir, 'dungeon-native.navbake');

beforeAll(() => {
  expect(existsSync(cli), 'web/dist/bin/navbake.js is built by make web').toBe(true);
});

describe('navbake (Node) bake and info', () => {
  it('bakes an OBJ into a .navbake with the native tool\'s counts, quietly when stderr is not a terminal', () => {
    const r = navbake(['bake', dungeon, '-o', baked, '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(''); // no progress bar into a pipe
    const j = JSON.parse(r.stdout);
    expect(Object.keys(j)).toEqual(['mesh', 'vertices', 'triangles', 'tiles', 'polys', 'bytes', 'ms']);
    expect(j.mesh).toBe(dungeon);
    expect(j.bytes).toBe(statSync(baked).size);
    expect(j.ms.total).toBeGreaterThan(0);
    const native = json(runNative, ['bake', dungeon, '--save', nativeBaked, '--json']);
    expect(j.tiles).toBe(native.tiles);
    expect(j.polys).toBe(native.polys);
    expect(j.bytes).toBe(native.bytes);
    // The input counts are the OBJ's (the native voxels command reads the same file).
    const vox = json(runNative, ['voxels', dungeon, '--json']);
    expect([j.vertices, j.triangles]).toEqual([vox.vertices, vox.triangles]);
  });

  it('info reads it back: tiles, polygons, vertices, bounds within the level, file size', () => {
    const bakeJson = json(navbake, ['bake', dungeon, '-o', baked, '--json']);
    const j = json(navbake, ['info', baked, '--json']);
    expect(j.bytes).toBe(statSync(baked).size);
    expect(j.tiles).toBe(bakeJson.tiles);
    expect(j.polys).toBe(bakeJson.polys);
    expect(j.vertices).toBeGreaterThanOrEqual(3);
    // Polygons share vertices, so there are fewer distinct ones than polygon corners (>= 3 each).
    expect(j.vertices).toBeLessThan(3 * j.polys);
    expect(Object.values(j.areas).reduce((a: number, b) => a + (b as number), 0)).toBe(j.polys);
    // The navmesh lies within the level's vertices (dungeon.obj: x -25..50, z -90..10 roughly).
    const text = readFileSync(dungeon, 'utf8');
    const lo = [Infinity, Infinity, Infinity];
    const hi = [-Infinity, -Infinity, -Infinity];
    for (const m of text.matchAll(/^v\s+(\S+)\s+(\S+)\s+(\S+)/gm)) {
      for (let k = 0; k < 3; k++) {
        lo[k] = Math.min(lo[k], Number(m[k + 1]));
        hi[k] = Math.max(hi[k], Number(m[k + 1]));
      }
    }
    for (let k = 0; k < 3; k++) {
      expect(j.bounds[0][k]).toBeGreaterThanOrEqual(lo[k] - 0.5);
      expect(j.bounds[1][k]).toBeLessThanOrEqual(hi[k] + 0.5);
    }
    expect(j.bounds[1][0] - j.bounds[0][0]).toBeGreaterThan(10);
    expect(j.bounds[1][2] - j.bounds[0][2]).toBeGreaterThan(10);
    const plain = navbake(['info', baked]);
    expect(plain.stdout).toMatch(new RegExp(`polygons\\s+${j.polys}\\b`));
    expect(plain.stdout.startsWith(`${baked}: ${j.bytes} bytes\n`), plain.stdout).toBe(true);
    // a mesh is baked first: the size is the navmesh's, and the line says so
    expect(navbake(['info', dungeon]).stdout).toMatch(new RegExp(`dungeon\\.obj: baked into a navmesh of ${j.bytes} bytes\n`));
  });

  it('reads OBJ polygon faces (fanned), negative indices and comments like the native reader', () => {
    const quad = file('quad.obj', '# a quad\nv 0 0 0\nv 0 0 6\nv 6 0 6\nv 6 0 0\n\nf 1 2 3 4 # one face\n');
    const tris = file('tris.obj', 'v 0 0 0\nv 0 0 6\nv 6 0 6\nv 6 0 0\nf -4/1/1 -3/2/2 -2/3/3\nf 1//1 3//1 4//1\n');
    const a = json(navbake, ['bake', quad, '--agent-radius', '0', '-o', join(dir, 'quad.navbake'), '--json']);
    const b = json(navbake, ['bake', tris, '--agent-radius', '0', '-o', join(dir, 'tris.navbake'), '--json']);
    expect([a.vertices, a.triangles]).toEqual([4, 2]);
    expect([b.vertices, b.triangles]).toEqual([4, 2]);
    expect(a.polys).toBeGreaterThan(0);
    expect(readFileSync(join(dir, 'quad.navbake')).equals(readFileSync(join(dir, 'tris.navbake')))).toBe(true);
    // --agent-radius 0 is an explicit zero (as on the native command line), not "the default".
    const eroded = json(navbake, ['bake', quad, '-o', join(dir, 'quad-eroded.navbake'), '--json']);
    const wide = json(navbake, ['info', join(dir, 'quad.navbake'), '--json']);
    const narrow = json(navbake, ['info', join(dir, 'quad-eroded.navbake'), '--json']);
    expect(eroded.polys).toBeGreaterThan(0);
    expect(wide.bounds[1][0] - wide.bounds[0][0]).toBeGreaterThan(narrow.bounds[1][0] - narrow.bounds[0][0] + 0.5);
  });

  it('--tile-size bakes tiles, the same as the native tool', () => {
    const out = join(dir, 'tiled.navbake');
    const j = json(navbake, ['bake', dungeon, '--tile-size', '32', '--workers', '2', '-o', out, '--json']);
    const native = json(runNative, ['bake', dungeon, '--tile-size', '32', '--save', join(dir, 'tiled-native.navbake'), '--json']);
    expect(j.tiles).toBeGreaterThan(1);
    expect([j.tiles, j.polys, j.bytes]).toEqual([native.tiles, native.polys, native.bytes]);
    expect(json(navbake, ['info', out, '--json']).tiles).toBe(j.tiles);
    // Baked on the main thread (--workers 0): the same navmesh.
    const here = join(dir, 'tiled-here.navbake');
    json(navbake, ['bake', dungeon, '--tile-size', '32', '--workers', '0', '-o', here, '--json']);
    expect(readFileSync(here).equals(readFileSync(out))).toBe(true);
  });
});

describe('navbake (Node) path and query agree with the native tool', () => {
  let pairs: string;
  beforeAll(async () => {
    if (!existsSync(baked)) json(navbake, ['bake', dungeon, '-o', baked, '--json']);
    pairs = await pairsFile(baked, 'pairs.txt', 40);
  });

  it('query --pairs-file: the same JSON fields, statuses, lengths and point counts', () => {
    const node = json(navbake, ['query', baked, '--pairs-file', pairs, '--json']);
    const native = json(runNative, ['query', baked, '--pairs-file', pairs, '--json']);
    expect(Object.keys(node)).toEqual(Object.keys(native));
    expect([node.pairs, node.found, node.complete]).toEqual([native.pairs, native.found, native.complete]);
    expect(node.pairs).toBe(42);
    expect(node.found).toBeLessThan(node.pairs); // the off-mesh pairs
    expect(node.complete).toBeGreaterThan(0);
    expect(node.qps).toBeGreaterThan(0);
    expectSameResults(node.results, native.results);
  });

  it('query --pairs N --seed S: the same random pairs as the native tool, no per-pair results', () => {
    const node = json(navbake, ['query', baked, '--pairs', '300', '--seed', '7', '--json']);
    const native = json(runNative, ['query', baked, '--pairs', '300', '--seed', '7', '--json']);
    expect(node.results).toBeUndefined();
    expect([node.pairs, node.found, node.complete]).toEqual([native.pairs, native.found, native.complete]);
    expect(node.found).toBe(300); // random points lie on the navmesh
    const other = json(navbake, ['query', baked, '--pairs', '300', '--seed', '8', '--json']);
    const again = json(navbake, ['query', baked, '--pairs', '300', '--seed', '7', '--json']);
    expect(again.complete).toBe(node.complete);
    expect(json(runNative, ['query', baked, '--pairs', '300', '--seed', '8', '--json']).complete).toBe(other.complete);
  });

  it('query on a navmesh without polygons finds nothing, like the native tool', () => {
    const speck = file('speck.obj', 'v 0 0 0\nv 0 0 1\nv 1 0 0\nf 1 2 3\n'); // smaller than an agent
    const node = json(navbake, ['query', speck, '--pairs', '5', '--json']);
    const native = json(runNative, ['query', speck, '--pairs', '5', '--json']);
    expect([node.pairs, node.found, node.complete]).toEqual([5, 0, 0]);
    expect([native.pairs, native.found, native.complete]).toEqual([5, 0, 0]);
  });

  it('query on a mesh bakes it first with the config flags, tiled too', () => {
    const args = ['query', dungeon, '--tile-size', '48', '--agent-radius', '0.4', '--pairs-file', pairs, '--json'];
    const node = json(navbake, args);
    const native = json(runNative, args);
    expectSameResults(node.results, native.results);
  });

  it('path: the same status, length and points', () => {
    const lines = readFileSync(pairs, 'utf8').trim().split('\n');
    for (const line of [lines[0], lines[1], lines[2], lines[lines.length - 1]]) {
      const v = line.split(' ');
      const args = ['path', baked, '--from', v.slice(0, 3).join(','), '--to', v.slice(3).join(','), '--json'];
      const node = json(navbake, args);
      const native = json(runNative, args);
      expect(Object.keys(node)).toEqual(['status', 'length', 'points']);
      expect(node.status).toBe(native.status);
      expect(Math.abs(node.length - native.length)).toBeLessThanOrEqual(1e-3);
      expect(node.points.length).toBe(native.points.length);
      node.points.forEach((p: number[], i: number) => {
        for (let k = 0; k < 3; k++) expect(Math.abs(p[k] - native.points[i][k])).toBeLessThanOrEqual(1e-3);
      });
    }
    const text = navbake(['path', baked, '--from', lines[0].split(' ').slice(0, 3).join(','), '--to', lines[0].split(' ').slice(3).join(',')]);
    expect(text.stdout).toMatch(/^status (complete|partial)\nlength \d+\.\d{4}\npoints \d+\n/);
  });
});

describe('navbake (Node) glTF input', () => {
  /**
   * A 10 x 10 floor quad (y up) under two nodes: the parent moves it to (100, 5, -50), the child turns it 90
   * degrees about y and stretches its own x by 2, so it covers x 95..105, z -60..-40 in the world. A second
   * scene (not the default) holds a far-away floor that must not be baked.
   */
  function floorDocument(opts: { mirror?: boolean; strip?: boolean } = {}): Document {
    const doc = new Document();
    const buf = doc.createBuffer();
    const pos = doc
      .createAccessor()
      .setType('VEC3')
      .setArray(new Float32Array([-5, 0, -5, -5, 0, 5, 5, 0, 5, 5, 0, -5]))
      .setBuffer(buf);
    const prim = doc.createPrimitive().setAttribute('POSITION', pos);
    if (opts.strip) {
      // Strip 1, 2, 0, 3: triangles (1, 2, 0) and, wound back by the strip rule, (0, 2, 3): the list's two.
      prim.setMode(5).setIndices(doc.createAccessor().setType('SCALAR').setArray(new Uint32Array([1, 2, 0, 3])).setBuffer(buf));
    } else {
      prim.setIndices(doc.createAccessor().setType('SCALAR').setArray(new Uint16Array([0, 1, 2, 0, 2, 3])).setBuffer(buf));
    }
    const lines = doc.createPrimitive().setAttribute('POSITION', pos).setMode(1); // lines: not ground
    const mesh = doc.createMesh('floor').addPrimitive(prim).addPrimitive(lines);
    const s = Math.SQRT1_2;
    const child = doc
      .createNode('floor')
      .setMesh(mesh)
      .setRotation([0, s, 0, s])
      .setScale([opts.mirror ? -2 : 2, 1, 1]);
    const parent = doc.createNode('parent').setTranslation([100, 5, -50]).addChild(child);
    const main = doc.createScene('main').addChild(parent);
    const far = doc.createNode('far').setMesh(mesh).setTranslation([-500, 0, 500]);
    doc.createScene('other').addChild(far);
    doc.getRoot().setDefaultScene(main);
    return doc;
  }

  function expectWhereTheTransformPutIt(navbakeFile: string): void {
    const j = json(navbake, ['info', navbakeFile, '--json']);
    expect(j.polys).toBeGreaterThan(0);
    const [[x0, y0, z0], [x1, y1, z1]] = j.bounds;
    expect(x0).toBeGreaterThanOrEqual(95 - 1e-3);
    expect(x1).toBeLessThanOrEqual(105 + 1e-3);
    expect(z0).toBeGreaterThanOrEqual(-60 - 1e-3);
    expect(z1).toBeLessThanOrEqual(-40 + 1e-3);
    // Rotated and stretched: long along z, short along x (less the agent radius on each side).
    expect(z1 - z0).toBeGreaterThan(17);
    expect(x1 - x0).toBeGreaterThan(7);
    expect(x1 - x0).toBeLessThan(10.01);
    expect(y0).toBeGreaterThan(5 - 0.5);
    expect(y1).toBeLessThan(5 + 0.5);
    // Both triangles of the quad are walkable: the polygons fill their bounds (a lost triangle leaves half).
    expect(j.area).toBeGreaterThan(0.9 * (x1 - x0) * (z1 - z0));
    expect(j.area).toBeLessThanOrEqual((x1 - x0) * (z1 - z0) + 1e-3);
  }

  it('.glb frames that are cut short or of another version are named (not "Invalid typed array length")', async () => {
    const glb = Buffer.from(await new NodeIO().writeBinary(floorDocument()));
    const json = glb.readUInt32LE(12);
    const edit = (name: string, f: (b: Buffer) => Buffer) => file(name, f(Buffer.from(glb)));
    const cases: [string, RegExp][] = [
      [edit('cut.glb', (b) => b.subarray(0, 700)), new RegExp(`cut\\.glb: corrupt glTF: the header says ${glb.length} bytes, the file has 700 \\(cut short\\?\\)`)],
      [edit('v1.glb', (b) => (b.writeUInt32LE(1, 4), b)), /v1\.glb: corrupt glTF: binary glTF version 1; only glTF 2 is read/],
      [edit('json.glb', (b) => (b.writeUInt32LE(0x4e4f534b, 16), b)), /json\.glb: corrupt glTF: chunk 0 is not the JSON chunk/],
      [edit('long.glb', (b) => (b.writeUInt32LE(json + 1000, 12), b)), /long\.glb: corrupt glTF: chunk 0 \(JSON, \d+ bytes at byte 20\) runs past the end/],
      [edit('bin.glb', (b) => (b.writeUInt32LE(0x004e4943, 20 + json + 4), b)), /bin\.glb: corrupt glTF: chunk 1 is not the BIN chunk/],
    ];
    for (const [path, message] of cases) {
      const r = navbake(['bake', path]);
      expect(r.status, path).toBe(2);
      expect(r.stderr, path).toMatch(message);
    }
    // a .glb declaring less than the file holds (trailing bytes) still reads
    const padded = file('padded.glb', Buffer.concat([glb, Buffer.alloc(16)]));
    expect(navbake(['bake', padded]).status).toBe(0);
  });

  it('.glb: every triangle primitive of the default scene, in world space', async () => {
    const glb = file('floor.glb', await new NodeIO().writeBinary(floorDocument()));
    const out = join(dir, 'floor.navbake');
    const j = json(navbake, ['bake', glb, '-o', out, '--json']);
    expect([j.vertices, j.triangles]).toEqual([4, 2]); // the lines and the other scene are not read
    expectWhereTheTransformPutIt(out);
  });

  it('.gltf with its .bin, a mirroring transform and a triangle strip still give upward floors', async () => {
    const gltf = join(dir, 'mirrored.gltf');
    await new NodeIO().write(gltf, floorDocument({ mirror: true, strip: true }));
    expect(existsSync(join(dir, 'mirrored.bin'))).toBe(true);
    const out = join(dir, 'mirrored.navbake');
    const j = json(navbake, ['bake', gltf, '-o', out, '--json']);
    expect(j.triangles).toBe(2);
    expectWhereTheTransformPutIt(out);
    // path / query take a glTF too (baked first).
    const p = json(navbake, ['path', gltf, '--from', '100,5,-55', '--to', '100,5,-45', '--json']);
    expect(p.status).toBe('complete');
    expect(p.length).toBeCloseTo(10, 1);
  });
});

describe('navbake (Node) glTF made for the web: compressed, quantized, instanced', () => {
  const level = (() => {
    const text = readFileSync(dungeon, 'utf8');
    const pos: number[] = [];
    const idx: number[] = [];
    for (const line of text.split('\n')) {
      const p = line.trim().split(/\s+/);
      if (p[0] === 'v') pos.push(+p[1], +p[2], +p[3]);
      else if (p[0] === 'f') {
        const f = p.slice(1).map((t) => parseInt(t, 10) - 1);
        for (let k = 2; k < f.length; k++) idx.push(f[0], f[k - 1], f[k]);
      }
    }
    return { positions: new Float32Array(pos), indices: new Uint32Array(idx) };
  })();
  const from = '36.5,10.2,5.7';
  const to = '26.2,15.5,-83.3';

  /** The dungeon as a glTF document; `quantize` stores its positions as normalized 16-bit integers, the node's
   * scale and translation mapping them back (what gltfpack and gltf-transform's quantize() write). */
  function dungeonDocument(quantize = false): Document {
    const doc = new Document();
    const buf = doc.createBuffer();
    const pos = doc.createAccessor().setType('VEC3').setBuffer(buf);
    const node = doc.createNode('level');
    if (quantize) {
      const lo = [Infinity, Infinity, Infinity];
      const hi = [-Infinity, -Infinity, -Infinity];
      level.positions.forEach((v, i) => ((lo[i % 3] = Math.min(lo[i % 3], v)), (hi[i % 3] = Math.max(hi[i % 3], v))));
      const mid = lo.map((l, k) => (l + hi[k]) / 2);
      const half = lo.map((l, k) => (hi[k] - l) / 2);
      const q = level.positions.map((v, i) => Math.round(((v - mid[i % 3]) / half[i % 3]) * 32767));
      pos.setArray(new Int16Array(q)).setNormalized(true);
      node.setTranslation(mid as [number, number, number]).setScale(half as [number, number, number]);
      doc.createExtension(KHRMeshQuantization).setRequired(true);
    } else {
      pos.setArray(level.positions);
    }
    const idx = doc.createAccessor().setType('SCALAR').setArray(level.indices).setBuffer(buf);
    node.setMesh(doc.createMesh('dungeon').addPrimitive(doc.createPrimitive().setAttribute('POSITION', pos).setIndices(idx)));
    doc.createScene('main').addChild(node);
    return doc;
  }

  async function writer(): Promise<NodeIO> {
    await MeshoptEncoder.ready;
    return new NodeIO()
      .registerExtensions(ALL_EXTENSIONS)
      .registerDependencies({ 'draco3d.encoder': await draco3d.createEncoderModule(), 'meshopt.encoder': MeshoptEncoder });
  }

  it('meshopt-compressed: the same navmesh as the plain file; Draco-compressed and quantized: the same path', async () => {
    const io = await writer();
    const plain = file('dungeon.glb', await io.writeBinary(dungeonDocument()));
    const meshoptDoc = dungeonDocument();
    meshoptDoc.createExtension(EXTMeshoptCompression).setRequired(true).setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.FILTER });
    const meshopt = file('dungeon-meshopt.glb', await io.writeBinary(meshoptDoc));
    const dracoDoc = dungeonDocument();
    dracoDoc.createExtension(KHRDracoMeshCompression).setRequired(true).setEncoderOptions({ quantizationBits: { POSITION: 16 } });
    const draco = file('dungeon-draco.glb', await io.writeBinary(dracoDoc));
    const quantized = file('dungeon-quantized.glb', await io.writeBinary(dungeonDocument(true)));
    expect(statSync(meshopt).size).toBeLessThan(0.5 * statSync(plain).size);
    expect(statSync(draco).size).toBeLessThan(0.2 * statSync(plain).size);

    const out = (f: string) => f.replace(/\.glb$/, '.navbake');
    for (const f of [plain, meshopt, draco, quantized]) {
      const j = json(navbake, ['bake', f, '-o', out(f), '--json']);
      expect(j.triangles, f).toBe(level.indices.length / 3);
    }
    // meshopt is lossless: byte for byte the navmesh of the plain file
    expect(Buffer.compare(readFileSync(out(meshopt)), readFileSync(out(plain)))).toBe(0);
    const path = (f: string) => json(navbake, ['path', out(f), '--from', from, '--to', to, '--json']);
    const reference = path(plain);
    expect(reference.status).toBe('complete');
    for (const f of [draco, quantized]) {
      const p = path(f);
      expect(p.status, f).toBe('complete');
      expect(Math.abs(p.length - reference.length), f).toBeLessThan(0.01 * reference.length);
    }
  });

  it('an instanced node (EXT_mesh_gpu_instancing) puts its mesh at every instance, under the node transform', async () => {
    // A 10 x 4 floor tile (x by z) twice, under a parent lifted to y = 5: as it is at x 0..10, and turned a quarter
    // round (4 x 10) at x 10..14, z -8..2: an L-shaped floor, whose far end only the turned copy reaches.
    const make = (translations: number[], rotations: number[] | null) => {
      const doc = new Document();
      const buf = doc.createBuffer();
      const tile = doc
        .createPrimitive()
        .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(new Float32Array([-5, 0, -2, 5, 0, -2, 5, 0, 2, -5, 0, 2])).setBuffer(buf))
        .setIndices(doc.createAccessor().setType('SCALAR').setArray(new Uint16Array([0, 2, 1, 0, 3, 2])).setBuffer(buf));
      const inst = doc.createExtension(EXTMeshGPUInstancing).setRequired(true).createInstancedMesh();
      inst.setAttribute('TRANSLATION', doc.createAccessor().setType('VEC3').setArray(new Float32Array(translations)).setBuffer(buf));
      if (rotations) inst.setAttribute('ROTATION', doc.createAccessor().setType('VEC4').setArray(new Float32Array(rotations)).setBuffer(buf));
      const node = doc.createNode('tiles').setMesh(doc.createMesh('tile').addPrimitive(tile)).setExtension('EXT_mesh_gpu_instancing', inst);
      doc.createScene().addChild(doc.createNode('parent').setTranslation([0, 5, 0]).addChild(node));
      return doc;
    };
    const io = await writer();
    const s = Math.SQRT1_2;
    const glb = file('tiles.glb', await io.writeBinary(make([5, 0, 0, 12, 0, -3], [0, 0, 0, 1, 0, s, 0, s])));
    const j = json(navbake, ['bake', glb, '-o', join(dir, 'tiles.navbake'), '--json']);
    expect([j.vertices, j.triangles]).toEqual([8, 4]);
    const p = json(navbake, ['path', glb, '--from', '1,5,0', '--to', '12,5,-7', '--json']);
    expect(p.status).toBe('complete');
    expect(p.length).toBeGreaterThan(Math.hypot(11, 7));
    const [[x0, y0, z0], [x1, y1, z1]] = json(navbake, ['info', join(dir, 'tiles.navbake'), '--json']).bounds;
    expect([x0, x1, z0, z1].map(Math.round)).toEqual([1, 13, -7, 1]); // 0..14 x -8..2, less the agent radius
    expect(y0).toBeCloseTo(5, 0);
    expect(y1).toBeCloseTo(5, 0);

    // attributes that disagree on the number of instances: exit 2, naming the node
    const bad = file('tiles-bad.glb', await io.writeBinary(make([5, 0, 0, 12, 0, -3], [0, 0, 0, 1])));
    const r = navbake(['bake', bad]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/tiles-bad\.glb: node 'tiles', mesh 'tile': EXT_mesh_gpu_instancing: its attributes count 2, 1 instances/);
  });

  it('a small file that instances a mesh into more than a bake can hold: exit 2 at once, with the counts', async () => {
    // a 100 x 100-vertex grid (10,000 vertices, 19,602 triangles) in 20,000 copies: 200 million vertices
    const doc = new Document();
    const buf = doc.createBuffer();
    const grid = new Float32Array(100 * 100 * 3).map((_, i) => (i % 3 === 1 ? 0 : i % 3 === 0 ? (i / 3) % 100 : Math.floor(i / 300)));
    const idx: number[] = [];
    for (let z = 0; z < 99; z++) for (let x = 0; x < 99; x++) idx.push(z * 100 + x, z * 100 + x + 100, z * 100 + x + 1, z * 100 + x + 1, z * 100 + x + 100, z * 100 + x + 101);
    const prim = doc
      .createPrimitive()
      .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(grid).setBuffer(buf))
      .setIndices(doc.createAccessor().setType('SCALAR').setArray(new Uint32Array(idx)).setBuffer(buf));
    const at = new Float32Array(20000 * 3).map((_, i) => (i % 3 === 0 ? Math.floor(i / 3) * 100 : 0));
    const inst = doc.createExtension(EXTMeshGPUInstancing).setRequired(true).createInstancedMesh();
    inst.setAttribute('TRANSLATION', doc.createAccessor().setType('VEC3').setArray(at).setBuffer(buf));
    doc.createScene().addChild(doc.createNode('forest').setMesh(doc.createMesh('grid').addPrimitive(prim)).setExtension('EXT_mesh_gpu_instancing', inst));
    const glb = file('forest.glb', await (await writer()).writeBinary(doc));
    expect(statSync(glb).size).toBeLessThan(1e6);
    const r = navbake(['bake', glb]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/forest\.glb: 200000000 vertices and 392040000 triangles \(every instance counted\) need 6\.6 GB, more than the 2 GB a bake has/);
  });

  it('a Draco stream that does not decode, a meshopt view whose data is not there: exit 2, saying so', async () => {
    const io = await writer();
    const dracoDoc = dungeonDocument();
    dracoDoc.createExtension(KHRDracoMeshCompression).setRequired(true);
    const glb = Buffer.from(await io.writeBinary(dracoDoc));
    const jsonLength = glb.readUInt32LE(12);
    glb.fill(0xff, 20 + jsonLength + 8 + 32); // the binary chunk after its first bytes: the Draco stream
    const r = navbake(['bake', file('broken-draco.glb', glb)]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/broken-draco\.glb: cannot read glTF: .*Draco|KHR_draco_mesh_compression/);

    const meshoptDoc = dungeonDocument();
    meshoptDoc.createExtension(EXTMeshoptCompression).setRequired(true).setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.FILTER });
    const gltf = join(dir, 'meshopt.gltf');
    await io.write(gltf, meshoptDoc);
    const g = JSON.parse(readFileSync(gltf, 'utf8'));
    g.bufferViews[0].extensions.EXT_meshopt_compression.byteLength = 1e7;
    writeFileSync(gltf, JSON.stringify(g));
    const m = navbake(['bake', gltf]);
    expect(m.status).toBe(2);
    expect(m.stderr).toMatch(/meshopt\.gltf: corrupt glTF: buffer view 0: its compressed data \(bytes 0\.\.10000000\) does not fit in buffer \d \(\d+ bytes\)/);
  });
});

describe('navbake (Node) glTF errors', () => {
  it('a vertex that is not a number, an index past the vertices, no triangles: exit 2, naming node and mesh', async () => {
    const make = (positions: number[], indices: number[] | null, mode = 4) => {
      const doc = new Document();
      const buf = doc.createBuffer();
      const prim = doc
        .createPrimitive()
        .setMode(mode as 4)
        .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(new Float32Array(positions)).setBuffer(buf));
      if (indices) prim.setIndices(doc.createAccessor().setType('SCALAR').setArray(new Uint32Array(indices)).setBuffer(buf));
      doc.createScene().addChild(doc.createNode('level').setMesh(doc.createMesh('ground').addPrimitive(prim)));
      return new NodeIO().writeBinary(doc);
    };
    const tri = [0, 0, 0, 0, 0, 5, 5, 0, 5];
    const cases: [string, Uint8Array, RegExp][] = [
      ['nan.glb', await make([0, 0, 0, 0, 0, 5, 5, NaN, 5], null), /nan\.glb: node 'level', mesh 'ground', primitive 0: vertex 2 is not finite/],
      ['index.glb', await make(tri, [0, 1, 7]), /index\.glb: node 'level', mesh 'ground', primitive 0: index 7 is out of range \(3 vertices\)/],
      ['points.glb', await make(tri, null, 0), /points\.glb: no triangles in the first scene/],
    ];
    for (const [name, bytes, message] of cases) {
      const r = navbake(['bake', file(name, bytes)]);
      expect(r.status, name).toBe(2);
      expect(r.stderr, name).toMatch(message);
    }
  });

  it('accessors, views and buffers past their data, a missing .bin, a .glb without its magic: exit 2, naming each', async () => {
    // a floor of two triangles whose JSON is then broken in one place
    const base = () => ({
      asset: { version: '2.0' },
      buffers: [{ uri: `data:application/octet-stream;base64,${Buffer.alloc(48 + 24).toString('base64')}`, byteLength: 72 }],
      bufferViews: [
        { buffer: 0, byteOffset: 0, byteLength: 48 },
        { buffer: 0, byteOffset: 48, byteLength: 24 },
      ],
      accessors: [
        { bufferView: 0, componentType: 5126, count: 4, type: 'VEC3' },
        { bufferView: 1, componentType: 5125, count: 6, type: 'SCALAR' },
      ],
      meshes: [{ primitives: [{ attributes: { POSITION: 0 }, indices: 1 }] }],
      nodes: [{ mesh: 0 }],
      scenes: [{ nodes: [0] }],
    });
    type Gltf = ReturnType<typeof base>;
    const broken = (name: string, edit: (g: Gltf) => void) => {
      const g = base();
      edit(g);
      return file(name, JSON.stringify(g));
    };
    // the intact file is read (every vertex at the origin: nothing walkable, but no error about the file)
    expect(navbake(['bake', broken('intact.gltf', () => {})]).stderr).not.toMatch(/glTF/);
    const cases: [string, RegExp][] = [
      // @gltf-transform read these past the end of the buffer (into other memory) or shortened them, and the
      // tool baked whatever came out
      [broken('count.gltf', (g) => (g.accessors[0].count = 1e9)), /count\.gltf: corrupt glTF: accessor 0 \(1000000000 x VEC3\) needs 12000000000 bytes of buffer view 0, which has 48/],
      [broken('offset.gltf', (g) => Object.assign(g.accessors[1], { byteOffset: 4 })), /accessor 1 \(6 x SCALAR\) needs 28 bytes of buffer view 1, which has 24/],
      [broken('view.gltf', (g) => (g.bufferViews[1].byteLength = 1000)), /buffer view 1 \(bytes 48\.\.1048\) does not fit in buffer 0 \(72 bytes\)/],
      [broken('buffer.gltf', (g) => (g.buffers[0].byteLength = 100)), /buffer 0 declares 100 bytes, its data has 72/],
      [broken('type.gltf', (g) => (g.accessors[0].type = 'VEC7')), /accessor 0: componentType 5126 \/ type VEC7 is not a glTF layout/],
      [broken('bin.gltf', (g) => (g.buffers[0].uri = 'level.bin')), /bin\.gltf: cannot read glTF: level\.bin: no such file/],
      [file('random.glb', Buffer.from([0x80, 0x81, 0x00, 0x7f, 0xff, 0x22])), /random\.glb: not a binary glTF \(\.glb\): it does not start with 'glTF'/],
      // @gltf-transform dropped references to nothing without a word: "no triangles in the first scene"
      [broken('mesh.gltf', (g) => (g.nodes[0].mesh = 5)), /mesh\.gltf: corrupt glTF: node 0 names mesh 5, of 1 meshes/],
      [broken('scene.gltf', (g) => Object.assign(g, { scene: 3 })), /scene\.gltf: corrupt glTF: the default scene 3 is not one of its 1 scenes/],
      [broken('node.gltf', (g) => (g.scenes[0].nodes = [0, 2])), /node\.gltf: corrupt glTF: scene 0 names node 2, of 1 nodes/],
      [broken('child.gltf', (g) => Object.assign(g.nodes[0], { children: [7] })), /child\.gltf: corrupt glTF: node 0 names child node 7, of 1 nodes/],
      [broken('attr.gltf', (g) => (g.meshes[0].primitives[0].indices = 9)), /attr\.gltf: corrupt glTF: mesh 0, primitive 0: indices names accessor 9, of 2 accessors/],
    ];
    for (const [path, message] of cases) {
      const r = navbake(['bake', path]);
      expect(r.status, path).toBe(2);
      expect(r.stderr, path).toMatch(message);
      expect(r.stderr, path).not.toMatch(/[^\x20-\x7e\n]/); // nothing unprintable in the terminal
    }
  });
});

describe('navbake (Node) render', () => {
  it('writes an SVG with one <polygon> per polygon, fitted to the bounds, and the path as a polyline', async () => {
    if (!existsSync(baked)) json(navbake, ['bake', dungeon, '-o', baked, '--json']);
    const info = json(navbake, ['info', baked, '--json']);
    const svgFile = join(dir, 'dungeon.svg');
    const plain = navbake(['render', baked, '-o', svgFile]);
    expect(plain.status, plain.stderr).toBe(0);
    let svg = readFileSync(svgFile, 'utf8');
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<polygon /g)?.length).toBe(info.polys);
    expect(svg).not.toMatch(/<polyline /);
    const vb = /viewBox="([^"]+)"/.exec(svg)![1].split(' ').map(Number);
    const [[x0, , z0], [x1, , z1]] = info.bounds;
    // x to the right, z down: the viewBox holds the bounds with a small margin.
    expect(vb[0]).toBeLessThanOrEqual(x0);
    expect(vb[1]).toBeLessThanOrEqual(z0);
    expect(vb[0] + vb[2]).toBeGreaterThanOrEqual(x1);
    expect(vb[1] + vb[3]).toBeGreaterThanOrEqual(z1);
    expect(vb[2]).toBeLessThan((x1 - x0) * 1.1 + 1);
    expect(vb[3]).toBeLessThan((z1 - z0) * 1.1 + 1);
    // Every polygon vertex is inside the viewBox.
    for (const m of svg.matchAll(/<polygon points="([^"]+)" fill="([^"]+)"/g)) {
      expect(m[2]).toBe('#8ecae6'); // the default walkable area's colour
      for (const pt of m[1].split(' ')) {
        const [x, z] = pt.split(',').map(Number);
        expect(x >= vb[0] && x <= vb[0] + vb[2] && z >= vb[1] && z <= vb[1] + vb[3]).toBe(true);
      }
    }

    const v = readFileSync(await pairsFile(baked, 'render-pair.txt', 1), 'utf8').split('\n')[0].split(' ');
    const ends = ['--from', v.slice(0, 3).join(','), '--to', v.slice(3).join(',')];
    const r = json(navbake, ['render', baked, '-o', svgFile, ...ends, '--json']);
    svg = readFileSync(svgFile, 'utf8');
    expect(svg.match(/<polygon /g)?.length).toBe(info.polys);
    expect(r.polys).toBe(info.polys);
    const native = json(runNative, ['path', baked, ...ends, '--json']);
    expect(native.status).toBe('complete');
    expect(r.path.status).toBe(native.status);
    expect(r.path.points).toBe(native.points.length);
    const line = svg.match(/<polyline points="([^"]+)"/g) ?? [];
    expect(line.length).toBe(1);
    const drawn = /points="([^"]+)"/.exec(line[0] ?? '')![1].split(' ').map((p) => p.split(',').map(Number));
    expect(drawn.length).toBe(native.points.length);
    drawn.forEach(([x, z], i) => {
      expect(Math.abs(x - native.points[i][0])).toBeLessThanOrEqual(2e-3);
      expect(Math.abs(z - native.points[i][2])).toBeLessThanOrEqual(2e-3);
    });
  });
});

describe('navbake (Node) progress bar', () => {
  // A terminal for stderr: util-linux `script` runs the tool on a pseudo-terminal (skipped where it is missing).
  const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;
  const onTerminal = (command: string, env: Record<string, string> = {}) =>
    spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env: { ...process.env, ...env } });
  const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

  it.skipIf(!hasScript)('draws on a terminal once a bake passes the delay, erases itself, leaves stdout alone', () => {
    const out = join(dir, 'progress.json');
    const cmd = `${sh(process.execPath)} ${sh(cli)} bake ${sh(dungeon)} -o ${sh(join(dir, 'p.navbake'))} --json > ${sh(out)}`;
    const r = onTerminal(cmd, { NAVBAKE_PROGRESS_DELAY_MS: '0' });
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/navbake: baking \[[#-]+\] +\d+%  (rasterize|filter|compact|erode|areas|regions|contours|polymesh|detail)/);
    expect(r.stdout.endsWith('\r\x1b[2K')).toBe(true);
    expect(JSON.parse(readFileSync(out, 'utf8')).polys).toBeGreaterThan(0);
  });

  it.skipIf(!hasScript)('stays away from bakes shorter than a second', () => {
    const quad = file('quick.obj', 'v 0 0 0\nv 0 0 6\nv 6 0 6\nv 6 0 0\nf 1 2 3 4\n');
    const cmd = `${sh(process.execPath)} ${sh(cli)} bake ${sh(quad)} --workers 0 --json > /dev/null`;
    const r = onTerminal(cmd);
    expect(r.status, r.stdout).toBe(0);
    expect(r.stdout).toBe('');
  });
});

describe('navbake (Node) threads', () => {
  // A preloaded hook reports every worker_threads Worker the tool starts.
  const hook = () =>
    file(
      'count-workers.cjs',
      `const wt = require('node:worker_threads');
const W = wt.Worker;
wt.Worker = class extends W {
  constructor(...a) {
    super(...a);
    process.stderr.write('worker started\\n');
  }
};
require('node:module').syncBuiltinESMExports();
`,
    );
  const started = (args: string[]) => {
    const r = spawnSync(process.execPath, ['--require', hook(), cli, ...args], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return (r.stderr.match(/worker started/g) ?? []).length;
  };

  it('bakes a solo navmesh on the main thread and a tiled one in workers, unless --workers says otherwise', () => {
    const out = join(dir, 'threads.navbake');
    expect(started(['bake', dungeon, '-o', out])).toBe(0);
    const solo = readFileSync(out);
    expect(started(['bake', dungeon, '-o', out, '--workers', '1'])).toBe(1);
    expect(readFileSync(out).equals(solo)).toBe(true); // the same bytes either way
    expect(started(['path', dungeon, '--from', '0,0,0', '--to', '1,0,1'])).toBe(0);
    expect(started(['bake', dungeon, '-o', out, '--tile-size', '64', '--workers', '2'])).toBe(2);
    expect(started(['bake', dungeon, '-o', out, '--tile-size', '64', '--workers', '0'])).toBe(0);
  });
});

describe('navbake (Node) flags and errors', () => {
  it('--version gives the package\'s version, and the native tool the same (its NB_VERSION)', () => {
    const version = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')).version as string;
    for (const flag of ['--version', '-V']) {
      const r = navbake([flag]);
      expect([r.status, r.stdout, r.stderr]).toEqual([0, `navbake ${version}\n`, '']);
      const n = runNative([flag]);
      expect([n.status, n.stdout]).toEqual([0, `navbake ${version}\n`]);
    }
    for (const text of [navbake(['--help']).stdout, runNative(['--help']).stdout]) expect(text).toMatch(/^ +navbake --version$/m);
  });

  it('--help lists the native tool\'s config flags, one per field of DEFAULTS', () => {
    const r = navbake(['--help']);
    expect(r.status).toBe(0);
    const flags = (text: string) => [...text.matchAll(/^\s+(--[a-z-]+)\s/gm)].map((m) => m[1]);
    const nativeHelp = runNative(['--help']).stdout;
    const nativeFlags = flags(nativeHelp.slice(nativeHelp.indexOf('config flags'), nativeHelp.indexOf('other options')));
    const kebab = Object.keys(DEFAULTS).map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    expect(nativeFlags).toEqual(kebab);
    const mine = flags(r.stdout);
    for (const f of [...kebab, '--json', '--from', '--to', '--pairs', '--seed', '--pairs-file', '--workers']) {
      expect(mine).toContain(f);
    }
    // Both list the options they share; info on a mesh bakes it first, so it takes the config flags too.
    for (const f of ['--save', '--from', '--to', '--pairs', '--seed', '--pairs-file', '--json']) expect(flags(nativeHelp)).toContain(f);
    expect(r.stdout).toMatch(/navbake info FILE \[config flags\] \[--json\]\n/);
    for (const text of [r.stdout, nativeHelp]) expect(text).toMatch(/query \S+ \(--pairs N \[--seed S\] \| --pairs-file F\) \[config flags\] \[--json\]\n/);
    // every partition the package takes (its error lists them), in both
    const choices = /must be one of ([a-z, ]+) \(got/.exec(navbake(['bake', dungeon, '--partition', 'nope']).stderr)?.[1].split(', ');
    expect(choices?.length).toBeGreaterThanOrEqual(4);
    for (const text of [r.stdout, nativeHelp]) for (const c of choices!) expect(/--partition.*/.exec(text)?.[0]).toContain(c);
  });

  it('bad files and flags exit with 2 and name the file or flag', () => {
    const bad1 = file('bad1.obj', 'v 0 0 0\nv 1 0 0\nf 1 2 5\n');
    const bad2 = file('bad2.obj', 'v 0 zero 0\n');
    const empty = file('empty.obj', '# nothing\n');
    const corrupt = file('corrupt.navbake', 'not a navmesh at all, just text');
    const notGltf = file('broken.glb', 'glTF? no');
    const pairsBad = file('pairs-bad.txt', '1 2 3 4 5 6\n1 2 3\n');
    const pairsHuge = file('pairs-huge.txt', '1 2 3 4 5 6\n0 0 0 1 1 1e39\n');
    const cases: [string[], RegExp][] = [
      [['bake', join(dir, 'missing.obj'), '-o', join(dir, 'x.navbake')], /missing\.obj: cannot open: no such file/],
      [['bake', bad1], /bad1\.obj:3: face index 5 is out of range/],
      [['bake', bad2], /bad2\.obj:1: vertex needs three numbers/],
      [['bake', empty], /empty\.obj: no faces/],
      [['bake', notGltf], /broken\.glb: corrupt glTF: 8 bytes, less than a \.glb header \(12\)/],
      [['bake', file('level.stl', 'solid')], /level\.stl: unknown file type '\.stl'/],
      [['bake', baked], /bake needs a mesh/],
      [['bake', dungeon, '-o', join(dir, 'polys.obj')], /polys\.obj: bake writes a \.navbake file, not a mesh/],
      [['bake', dungeon, '-o', join(dir, 'no-such-dir', 'x.navbake')], /no-such-dir\/x\.navbake: cannot write/],
      [['info', join(dir, 'missing.navbake')], /missing\.navbake: cannot read: no such file/],
      [['info', corrupt], /corrupt\.navbake: NB_ERR_CORRUPT: /],
      [['bake', dungeon, '--cell-size', '-1'], /--cell-size: .*cellSize must be > 0/],
      [['bake', dungeon, '--tile-size', '3'], /--tile-size: .*tileSize/],
      [['bake', dungeon, '--verts-per-poly', '6.5'], /--verts-per-poly: .*must be an integer \(got 6\.5\)/],
      [['bake', dungeon, '--partition', 'voronoi'], /--partition: .*watershed, monotone, layers.*voronoi/],
      [['info', baked, '--agent-height', '-2'], /--agent-height: /],
      [['bake', dungeon, '--cell-sise', '1'], /unknown option --cell-sise/],
      [['bake', dungeon, '--agent-radius', 'wide'], /--agent-radius needs a number \(got 'wide'\)/],
      [['bake', dungeon, '--agent-radius'], /--agent-radius needs a value/],
      [['bake', dungeon, '--workers', '-1'], /--workers must be 0\.\.64/],
      [['path', baked, '--from', '1,2', '--to', '1,2,3'], /--from needs x,y,z \(got '1,2'\)/],
      [['path', baked, '--from', '1,2,3'], /path needs --from x,y,z and --to x,y,z/],
      [['query', baked], /query needs --pairs N/],
      [['query', baked, '--pairs', '0'], /--pairs must be 1\.\.10000000/],
      [['query', baked, '--pairs-file', join(dir, 'nope.txt')], /nope\.txt: cannot read pairs/],
      [['query', baked, '--pairs-file', pairsBad], /pairs-bad\.txt:2: need six numbers/],
      // numbers JavaScript takes but float32 cannot hold: refused as input, not failed later as a query (exit 1)
      [['path', baked, '--from', '1e40,0,0', '--to', '1,2,3'], /--from: x = 1e40 is beyond float32's range/],
      [['render', baked, '-o', join(dir, 'x.svg'), '--from', '1,2,3', '--to', '0,-4e38,0'], /--to: y = -4e38 is beyond float32's range/],
      [['query', baked, '--pairs-file', pairsHuge], /pairs-huge\.txt:2: 1e39 is beyond float32's range/],
      [['bake', dungeon, '--agent-height', '1e39'], /--agent-height: .*agentHeight must be finite/],
      [['render', baked], /render needs -o OUT\.svg/],
      [['render', baked, '-o', join(dir, 'level.png')], /level\.png: render writes an SVG picture: name it \.svg/],
      [['bake', file('object.gltf', '{}')], /object\.gltf: corrupt glTF: no asset\.version: not a glTF file/],
      [['bake', file('array.gltf', '[1, 2]')], /array\.gltf: corrupt glTF: not a glTF JSON object/],
      [['info', baked, '--from', '1,2,3'], /--from is not an option of 'info'/],
      [['bake', dungeon, '-o', join(dir, 'a.navbake'), '--save', join(dir, 'b.navbake')], /-o and --save both name the file to write/],
      [['info', baked, baked], /unexpected argument/],
      [['bake'], /bake needs a mesh file/],
      [['frobnicate', 'x.obj'], /unknown command 'frobnicate'/],
      [[], /usage: navbake bake/],
    ];
    for (const [args, message] of cases) {
      const r = navbake(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it('flags that change nothing for a .navbake file are said on stderr, and the command runs', () => {
    const ends = ['--from', '36.5,10.2,5.7', '--to', '26.2,15.5,-83.3'];
    const plain = navbake(['path', baked, ...ends]);
    const r = navbake(['path', baked, ...ends, '--workers', '2', '--cell-size', '0.5']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(plain.stdout);
    expect(r.stderr).toMatch(/note: config flags do not change a navmesh loaded from .*dungeon\.navbake/);
    expect(r.stderr).toMatch(/note: --workers does nothing for a navmesh loaded from .*dungeon\.navbake/);
  });

  it('a bake with nothing walkable succeeds with a warning on stderr saying why that happens', () => {
    // one triangle facing down (clockwise seen from above), and the same level with it facing up
    const down = file('down.obj', 'v 0 0 0\nv 10 0 0\nv 0 0 10\nf 1 2 3\n');
    const up = file('up.obj', 'v 0 0 0\nv 10 0 0\nv 0 0 10\nf 1 3 2\n');
    for (const run of [navbake, runNative]) {
      const args = (f: string) => (run === navbake ? ['bake', f, '--json'] : ['bake', f, '--save', join(dir, 'w.navbake'), '--json']);
      const r = run(args(down));
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).polys).toBe(0);
      expect(r.stderr).toMatch(/warning: the navmesh has no polygons: .*counter-clockwise seen from above/);
      const ok = run(args(up));
      expect(JSON.parse(ok.stdout).polys).toBeGreaterThan(0);
      expect(ok.stderr).toBe('');
    }
  });

  it('a bake that fails exits with 1 and the NavBakeError code and message', () => {
    const r = navbake(['bake', dungeon, '--cell-size', '0.005', '--agent-radius', '0']);
    expect(r.status).toBe(1);
    // the fields to change as flags (the library says cellSize, C said cell_size), and the bounds the grid spans
    expect(r.stderr).toMatch(/^navbake: NB_ERR_TOO_LARGE: .*columns \(the bounds, every vertex counted: x -?[\d.]+ \.\. [\d.]+, z .*raise --cell-size or bake in tiles/);
    const tiled = navbake(['bake', dungeon, '--cell-size', '0.005', '--agent-radius', '0', '--tile-size', '16']);
    expect(tiled.status).toBe(1);
    expect(tiled.stderr).toMatch(/^navbake: NB_ERR_TOO_LARGE: .*tiles exceed the limit of 4095; raise --tile-size or --cell-size/);
  });
});

describe('navbake (Node) and the native tool refuse and read the same', () => {
  /** Runs both tools; bake is `bake -o` here and `bake --save` there (the .navbake file). */
  const both = (args: string[]) => [navbake(args), runNative(args)];

  it('bad numbers, flags of another command, --pairs with --pairs-file, --seed with --pairs-file: exit 2, same words', () => {
    const pairs = file('two-ways.txt', '36.5 10.2 5.7 26.2 15.5 -83.3\n');
    const cases: [string[], RegExp][] = [
      [['query', dungeon, '--pairs', '5', '--seed', 'abc'], /--seed must be an integer 0\.\.2\^64-1 \(got 'abc'\)/],
      [['query', dungeon, '--pairs', '5', '--seed', '-1'], /--seed must be an integer 0\.\.2\^64-1 \(got '-1'\)/],
      [['query', dungeon, '--pairs', '5', '--seed', '1.5'], /--seed must be an integer 0\.\.2\^64-1 \(got '1\.5'\)/],
      [['query', dungeon, '--pairs', '5x'], /--pairs must be 1\.\.10000000 \(got '5x'\)/],
      [['query', dungeon, '--pairs', '1e2'], /--pairs must be 1\.\.10000000 \(got '1e2'\)/],
      [['query', dungeon, '--pairs', '5', '--tile-size', '16.5'], /--tile-size: config\.tile_?[sS]ize must be an integer \(got 16\.5\)/],
      [['query', dungeon, '--pairs', '5', '--verts-per-poly', '6.9'], /--verts-per-poly: config\.verts_?[pP]er_?[pP]oly must be an integer \(got 6\.9\)/],
      [['query', dungeon, '--pairs', '5', '--cell-size', '0'], /--cell-size: config\.cell_?[sS]ize must not be 0/],
      [['query', dungeon, '--pairs', '5', '--agent-radius', '-1'], /--agent-radius: config\.agent_?[rR]adius must be >= 0 \(got -1\)/],
      [['query', dungeon, '--pairs', '5', '--agent-radius', '0.5x'], /--agent-radius needs a number \(got '0\.5x'\)/],
      [['path', dungeon, '--pairs', '5', '--from', '0,0,0', '--to', '1,1,1'], /--pairs is not an option of 'path'/],
      [['query', dungeon, '--pairs', '5', '--pairs-file', pairs], /query takes --pairs N or --pairs-file F, not both/],
      [['query', dungeon, '--seed', '3', '--pairs-file', pairs], /--seed goes with --pairs N \(the random pairs\), not --pairs-file/],
      [['path', dungeon, '--from', '1,2', '--to', '1,2,3'], /--from needs x,y,z \(got '1,2'\)/],
      [['path', dungeon, '--from', '1e40,0,0', '--to', '1,2,3'], /--from: x = 1e40 is beyond float32's range/],
      // a value that float32 holds as 0 is not "the default"; numbers are decimal (not C's hex, not JavaScript's 0b)
      [['query', dungeon, '--pairs', '5', '--cell-size', '1e-50'], /--cell-size: config\.cell_?[sS]ize \(1e-50\) is 0 in float32/],
      [['query', dungeon, '--pairs', '5', '--cell-size', '0x1p-2'], /--cell-size needs a number \(got '0x1p-2'\)/],
      [['query', dungeon, '--pairs', '5', '--tile-size', '0b1000000'], /--tile-size needs a number \(got '0b1000000'\)/],
      [['path', dungeon, '--from', '0x1p3,10.2,5.7', '--to', '1,2,3'], /--from needs x,y,z \(got '0x1p3,10\.2,5\.7'\)/],
      [['path', dungeon, '--from', '0o7,10.2,5.7', '--to', '1,2,3'], /--from needs x,y,z \(got '0o7,10\.2,5\.7'\)/],
      [['query', dungeon, '--json=1', '--pairs', '5'], /--json takes no value/],
    ];
    for (const [args, message] of cases) {
      for (const [tool, r] of both(args).map((x, i) => [i ? 'native' : 'node', x] as const)) {
        expect(r.status, `${tool} ${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr, `${tool} ${args.join(' ')}`).toMatch(message);
      }
    }
  });

  it('--tile-size 0 is one tile (the default) in both, the same navmesh', () => {
    const node = json(navbake, ['bake', dungeon, '--tile-size', '0', '-o', join(dir, 'zero.navbake'), '--json']);
    const native = json(runNative, ['bake', dungeon, '--tile-size', '0', '--save', join(dir, 'zero-native.navbake'), '--json']);
    expect([node.tiles, native.tiles]).toEqual([1, 1]);
    expect(readFileSync(join(dir, 'zero.navbake')).equals(readFileSync(join(dir, 'zero-native.navbake')))).toBe(true);
    // and without --save the native bake reports the bytes of that navmesh, as the Node tool does without -o
    expect(json(runNative, ['bake', dungeon, '--tile-size', '64', '--json']).bytes).toBe(
      json(navbake, ['bake', dungeon, '--tile-size', '64', '--json']).bytes,
    );
  });

  it('OBJ: a comment after a face is read by both; an index or number that is not whole is refused by both', () => {
    const commented = file('commented.obj', 'v -5 0 -5\nv -5 0 5\nv 5 0 5\nf 1 2 3 # a triangle\n');
    const node = json(navbake, ['bake', commented, '--agent-radius', '0', '--json']);
    const native = json(runNative, ['bake', commented, '--agent-radius', '0', '--save', join(dir, 'commented.navbake'), '--json']);
    expect([node.polys, node.bytes]).toEqual([native.polys, native.bytes]);
    expect(node.triangles).toBe(1);
    const cases: [string, string, RegExp][] = [
      ['fraction.obj', 'v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 3 2.5\n', /fraction\.obj:4: face index is not a number/],
      ['suffix.obj', 'v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 3x\n', /suffix\.obj:4: face index is not a number/],
      ['vsuffix.obj', 'v 0 0 0\nv 1 0 3x\nv 0 0 1\nf 1 2 3\n', /vsuffix\.obj:2: vertex needs three numbers/],
      ['vbig.obj', 'v 0 0 0\nv 1 0 1e39\nv 0 0 1\nf 1 2 3\n', /vbig\.obj:2: vertex coordinate is not finite/],
    ];
    for (const [name, text, message] of cases) {
      for (const r of both(['bake', file(name, text)])) {
        expect(r.status, `${name}: ${r.stderr}`).toBe(2);
        expect(r.stderr, name).toMatch(message);
      }
    }
  });

  it('pairs files: blank lines and # comments skipped; no pairs, nan, inf, 1e39: exit 2 naming file and line', async () => {
    if (!existsSync(baked)) json(navbake, ['bake', dungeon, '-o', baked, '--json']);
    const commented = file('commented-pairs.txt', '# start xyz, end xyz\n\n36.5 10.2 5.7 26.2 15.5 -83.3 # across\n  # done\n');
    const node = json(navbake, ['query', baked, '--pairs-file', commented, '--json']);
    const native = json(runNative, ['query', baked, '--pairs-file', commented, '--json']);
    expect([node.pairs, native.pairs]).toEqual([1, 1]);
    expectSameResults(node.results, native.results);
    const cases: [string, string, RegExp][] = [
      ['no-pairs.txt', '', /no-pairs\.txt: no pairs/],
      ['only-comments.txt', '# nothing here\n\n', /only-comments\.txt: no pairs/],
      ['nan-pairs.txt', '0 0 0 1 1 1\nnan 0 0 1 1 1\n', /nan-pairs\.txt:2: need six numbers/],
      ['inf-pairs.txt', '0 0 0 1 1 inf\n', /inf-pairs\.txt:1: need six numbers/],
      ['seven-pairs.txt', '0 0 0 1 1 1 1\n', /seven-pairs\.txt:1: need six numbers/],
      ['big-pairs.txt', '# c\n0 0 0 1 1 1e39\n', /big-pairs\.txt:2: 1e39 is beyond float32's range/],
      ['hex-pairs.txt', '0x1p3 10.2 5.7 26.2 15.5 -83.3\n', /hex-pairs\.txt:1: need six numbers/],
      ['binary-pairs.txt', '0b11 10.2 5.7 26.2 15.5 -83.3\n', /binary-pairs\.txt:1: need six numbers/],
      ['nbsp-pairs.txt', '36.5\u00a010.2 5.7 26.2 15.5 -83.3\n', /nbsp-pairs\.txt:1: need six numbers/],
    ];
    for (const [name, text, message] of cases) {
      const f = file(name, text);
      for (const r of both(['query', baked, '--pairs-file', f, '--json'])) {
        expect(r.status, `${name}: ${r.stderr}`).toBe(2);
        expect(r.stderr, name).toMatch(message);
        expect(r.stderr.trim().split('\n'), name).toHaveLength(1); // said once
      }
    }
  });

  it('--flag=value, --help after the command and a pairs file with a byte order mark: taken by both', () => {
    if (!existsSync(baked)) json(navbake, ['bake', dungeon, '-o', baked, '--json']);
    const node = json(navbake, ['query', baked, '--pairs=7', '--seed=3', '--json']);
    const native = json(runNative, ['query', baked, '--pairs=7', '--seed=3', '--json']);
    expect([node.pairs, node.found, node.complete]).toEqual([native.pairs, native.found, native.complete]);
    expect(node.pairs).toBe(7);
    for (const r of both(['path', baked, '--help'])) {
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^usage: navbake /);
    }
    const bom = file('bom-pairs.txt', '\ufeff36.5 10.2 5.7 26.2 15.5 -83.3\n');
    const a = json(navbake, ['query', baked, '--pairs-file', bom, '--json']);
    const b = json(runNative, ['query', baked, '--pairs-file', bom, '--json']);
    expect([a.pairs, b.pairs]).toEqual([1, 1]);
    expectSameResults(a.results, b.results);
  });

  it('a directory as the mesh: "cannot open: is a directory", exit 2, in both', () => {
    const d = join(dir, 'folder.obj');
    mkdirSync(d, { recursive: true });
    for (const r of both(['query', d, '--pairs', '5'])) {
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/folder\.obj: cannot open: is a directory/);
    }
  });

  it.skipIf(!existsSync('/dev/full'))('output that cannot be written: one line and exit 1 (a full disk), or quietly 1 (a closed pipe)', async () => {
    if (!existsSync(baked)) json(navbake, ['bake', dungeon, '-o', baked, '--json']);
    const full = openSync('/dev/full', 'w');
    try {
      for (const [cmd, args] of [
        [process.execPath, [cli, 'path', baked, '--from', '36.5,10.2,5.7', '--to', '26.2,15.5,-83.3']],
        [resolve(root, 'build/navbake'), ['path', baked, '--from', '36.5,10.2,5.7', '--to', '26.2,15.5,-83.3']],
        [process.execPath, [cli, 'info', baked, '--json']],
        [resolve(root, 'build/navbake'), ['--help']],
      ] as [string, string[]][]) {
        const r = spawnSync(cmd, args, { stdio: ['ignore', full, 'pipe'], encoding: 'utf8' });
        expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toBe('navbake: cannot write output: no space left on device\n');
      }
    } finally {
      closeSync(full);
    }
    // An output file that cannot be written (the disk is full): exit 1 with one line naming it, in both; a file
    // that cannot be created (no such folder) is a bad argument: exit 2.
    for (const [cmd, args] of [
      [process.execPath, [cli, 'bake', dungeon, '-o', '/dev/full']],
      [resolve(root, 'build/navbake'), ['bake', dungeon, '--save', '/dev/full']],
      [resolve(root, 'build/navbake'), ['bake', dungeon, '-o', '/dev/full']],
      [resolve(root, 'build/navbake'), ['terrain', '--cells', '40', '-o', '/dev/full']],
      [resolve(root, 'build/navbake'), ['world', '--triangles', '5000', '-o', '/dev/full']],
    ] as [string, string[]][]) {
      const r = spawnSync(cmd, args, { encoding: 'utf8' });
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(/navbake: \/dev\/full: cannot write: .*no space left on device\n$/);
      expect(r.stdout, `${args.join(' ')}: no report for a bake whose output is not there`).toBe('');
    }
    // A reader that has gone (its end of the pipe closed before anything was written): no stack trace, no
    // message, exit 1, in both.
    // The reader (':') exits at once, the tool starts 0.3 s later: its output goes into a pipe nobody reads. (Closing
    // this process's end right after spawn raced the tool's write on a loaded machine: exit 0 now and then.)
    const gone = (cmd: string, args: string[]) =>
      spawnSync('bash', ['-c', '{ sleep 0.3; "$@"; } | :; exit "${PIPESTATUS[0]}"', 'bash', cmd, ...args], { encoding: 'utf8' });
    const pathArgs = ['path', baked, '--from', '36.5,10.2,5.7', '--to', '26.2,15.5,-83.3'];
    for (const r of [gone(process.execPath, [cli, ...pathArgs]), gone(resolve(root, 'build/navbake'), pathArgs)]) {
      expect(r.stderr).toBe('');
      expect(r.status).toBe(1);
    }
  });
});
