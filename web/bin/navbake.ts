#!/usr/bin/env node
/**
 * navbake: the package's command-line tool. The same subcommands, flags and JSON as the native tool
 * (c/tools/navbake.c), running the package's wasm through its public API:
 *
 *   navbake bake MESH -o OUT.navbake [config flags] [--workers N] [--json]
 *   navbake info FILE [config flags] [--json]
 *   navbake path FILE --from x,y,z --to x,y,z [config flags] [--json]
 *   navbake query FILE (--pairs N [--seed S] | --pairs-file F) [config flags] [--json]
 *   navbake render FILE -o OUT.svg [--from x,y,z --to x,y,z] [config flags] [--json]
 *
 * MESH is .obj, .gltf or .glb; FILE is a .navbake file or a mesh, baked first with the config flags.
 * Exit codes: 0 ok, 1 the bake or query failed (NavBakeError) or the output could not be written, 2 bad arguments
 * or files.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { bake, NavBakeError, NavMesh, terminateWorkers, type NavBakeConfig, type PathBatch, type PathResult } from 'navbake';
import { DECIMAL, flagOfField, parseArgs, trimC, usage, type Options } from './args.js';
import { describeFsError, InputError } from './errors.js';
import { readGltf } from './gltf.js';
import { parseObjBytes, type Triangles } from './obj.js';
import { progressBar } from './progress.js';
import { renderSvg } from './svg.js';

const MESH_TYPES = ['.obj', '.gltf', '.glb'];

function kind(file: string): 'navbake' | 'obj' | 'gltf' {
  const ext = extname(file).toLowerCase();
  if (ext === '.navbake') return 'navbake';
  if (ext === '.obj') return 'obj';
  if (ext === '.gltf' || ext === '.glb') return 'gltf';
  throw new InputError(`${file}: unknown file type${ext ? ` '${ext}'` : ''} (expected ${MESH_TYPES.join(', ')} or .navbake)`);
}

async function readBytes(file: string, what = 'cannot read'): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (e) {
    throw new InputError(`${file}: ${what}: ${describeFsError(e)}`);
  }
}

/** Output that cannot be written (a full disk): exit 1, not 2 (the arguments were fine). */
class OutputError extends Error {}

async function writeOut(file: string, data: string | Uint8Array): Promise<void> {
  try {
    await writeFile(file, data);
  } catch (e) {
    // A missing folder or a denied name is the argument's fault (exit 2); a full disk or an I/O error is not.
    const code = (e as NodeJS.ErrnoException)?.code;
    const Err = code === 'ENOSPC' || code === 'EIO' || code === 'EDQUOT' || code === 'EFBIG' ? OutputError : InputError;
    throw new Err(`${file}: cannot write: ${describeFsError(e)}`);
  }
}

async function readMesh(file: string): Promise<Triangles> {
  return kind(file) === 'obj' ? parseObjBytes(await readBytes(file, 'cannot open'), file) : readGltf(file);
}

/** The message without the library's own "navbake: " / "navbake.bake: " prefix (the tool adds its own). */
function bare(message: string): string {
  return message.replace(/^navbake(\.\w+)?: /, '');
}

/** The library names config fields as the config object does ("raise cellSize"); on the command line they are flags. */
function withFlags(message: string): string {
  return message.replace(/(?<!config\.)\b[a-z]+(?:[A-Z][a-z]+)+\b/g, (w) => flagOfField(w) ?? w);
}

function isNavBakeError(e: unknown): e is NavBakeError {
  return e instanceof NavBakeError || (e as Error)?.name === 'NavBakeError';
}

/** Whether the library refused the config (a value out of range, or one that is not finite in float32). */
function isConfigError(e: unknown): e is NavBakeError {
  return isNavBakeError(e) && (e.code === 'NB_ERR_INVALID_CONFIG' || (e.code === 'NB_ERR_NONFINITE' && /\bconfig\./.test(e.message)));
}

/** A config the library refuses is a bad flag (exit 2, like the native tool): name the flag. */
function configError(e: NavBakeError): InputError {
  const m = /config\.([A-Za-z_]+)/.exec(e.message);
  const flag = m ? flagOfField(m[1]) : undefined;
  return new InputError(`${flag ? `${flag}: ` : ''}${bare(e.message)}`);
}

async function bakeTriangles(mesh: Triangles, o: Options): Promise<NavMesh> {
  const bar = progressBar(process.stderr, 'navbake: baking');
  // A solo bake runs on this thread unless --workers says otherwise: it is one task, so a worker could only add
  // its start-up (dungeon.obj: 0.19 s for the whole command instead of 0.23-0.30 s), and the tool has nothing
  // else to keep responsive. Tiled bakes spread over the package's pool.
  const tiled = (o.config.tileSize ?? 0) > 0;
  try {
    return await bake(mesh, o.config, {
      workers: o.workers ?? (tiled ? undefined : false),
      onProgress: bar ? (p) => bar.onProgress(p) : undefined,
      transfer: true, // the arrays are ours and read only once
    });
  } catch (e) {
    if (isConfigError(e)) throw configError(e);
    throw e;
  } finally {
    bar?.stop();
  }
}

/**
 * Config flags with a .navbake file change nothing, but a bad value is still an error (as in the native tool,
 * which checks the config first): the package checks a config when a bake starts, before it looks at the
 * geometry, so an empty bake on the calling thread checks it and stops there.
 */
async function checkConfig(config: NavBakeConfig, file: string): Promise<void> {
  if (Object.keys(config).length === 0) return;
  try {
    (await bake({ positions: new Float32Array(0) }, config, { workers: false })).dispose();
  } catch (e) {
    if (isConfigError(e)) throw configError(e);
  }
  process.stderr.write(`navbake: note: config flags do not change a navmesh loaded from ${file}\n`);
}

interface Opened {
  nav: NavMesh;
  /** the .navbake file's size, or the saved size of the navmesh baked from a mesh */
  bytes?: number;
  /** input vertex and triangle counts (meshes) */
  vertices?: number;
  triangles?: number;
}

/** Loads FILE.navbake or bakes a mesh with the config flags (tiled with --tile-size). */
async function openNavMesh(o: Options): Promise<Opened> {
  if (kind(o.file) === 'navbake') {
    await checkConfig(o.config, o.file);
    if (o.workers !== undefined) process.stderr.write(`navbake: note: --workers does nothing for a navmesh loaded from ${o.file}\n`);
    const data = await readBytes(o.file);
    try {
      return { nav: await NavMesh.load(data), bytes: data.length };
    } catch (e) {
      if (isNavBakeError(e)) throw new InputError(`${o.file}: ${e.code}: ${bare(e.message)}`);
      throw e;
    }
  }
  const mesh = await readMesh(o.file);
  const vertices = mesh.positions.length / 3;
  const triangles = mesh.indices.length / 3;
  return { nav: await bakeTriangles(mesh, o), vertices, triangles };
}

function print(o: Options, json: unknown, text: string): void {
  process.stdout.write(o.json ? `${JSON.stringify(json)}\n` : text);
}

const round = (v: number, digits: number) => {
  const r = Number(v.toFixed(digits));
  return Object.is(r, -0) ? 0 : r;
};

// ---- commands -------------------------------------------------------------------------------------------------

const NOTHING_WALKABLE =
  'the navmesh has no polygons: no triangle is walkable (each has area 0, is steeper than --agent-max-slope, ' +
  'faces down -- walkable triangles are counter-clockwise seen from above -- or has no room for the agent)';

async function cmdBake(o: Options): Promise<void> {
  if (kind(o.file) === 'navbake') throw new InputError(`${o.file}: bake needs a mesh (${MESH_TYPES.join(', ')})`);
  // The native tool's `bake -o` writes the polygons as an OBJ; this one writes the navmesh. Never over a mesh.
  if (o.out && MESH_TYPES.includes(extname(o.out).toLowerCase())) {
    throw new InputError(`-o ${o.out}: bake writes a .navbake file, not a mesh`);
  }
  const t0 = performance.now();
  const { nav, vertices, triangles } = await openNavMesh(o);
  const ms = performance.now() - t0;
  try {
    const bytes = nav.save();
    if (o.out) await writeOut(o.out, bytes);
    const tiles = nav.tileCount;
    const polys = nav.polygons().length;
    if (polys === 0) process.stderr.write(`navbake: warning: ${NOTHING_WALKABLE}\n`);
    print(
      o,
      { mesh: o.file, vertices, triangles, tiles, polys, bytes: bytes.length, ms: { total: round(ms, 3) } },
      `${o.file}: ${tiles} tiles, ${polys} polygons, ${bytes.length} bytes, ${ms.toFixed(1)} ms` +
        `${o.out ? ` -> ${o.out}` : ''}\n`,
    );
  } finally {
    nav.dispose();
  }
}

/** Area of a polygon seen from above (x, z). */
function xzArea(v: Float32Array): number {
  let twice = 0;
  const n = v.length / 3;
  for (let i = 0, j = n - 1; i < n; j = i++) twice += v[j * 3] * v[i * 3 + 2] - v[i * 3] * v[j * 3 + 2];
  return Math.abs(twice) / 2;
}

async function cmdInfo(o: Options): Promise<void> {
  const { nav, bytes } = await openNavMesh(o);
  try {
    const polys = nav.polygons();
    const min = [Infinity, Infinity, Infinity];
    const max = [-Infinity, -Infinity, -Infinity];
    const distinct = new Set<string>();
    const areas: Record<string, number> = {};
    let links = 0;
    let area = 0;
    for (const p of polys) {
      if (p.offMesh) links++;
      else area += xzArea(p.vertices);
      areas[p.area] = (areas[p.area] ?? 0) + 1;
      const v = p.vertices;
      for (let i = 0; i < v.length; i += 3) {
        // Tiles share their border vertices; counted once.
        distinct.add(`${v[i]},${v[i + 1]},${v[i + 2]}`);
        for (let k = 0; k < 3; k++) {
          min[k] = Math.min(min[k], v[i + k]);
          max[k] = Math.max(max[k], v[i + k]);
        }
      }
    }
    const size = bytes ?? nav.save().length;
    const bounds = polys.length ? [min.map((x) => round(x, 4)), max.map((x) => round(x, 4))] : null;
    const fmt = (v: number[]) => `[${v.join(', ')}]`;
    print(
      o,
      {
        file: o.file,
        bytes: size,
        tiles: nav.tileCount,
        polys: polys.length,
        links,
        vertices: distinct.size,
        bounds,
        area: round(area, 3),
        areas,
      },
      `${o.file}: ${bytes ? '' : 'baked into a navmesh of '}${size} bytes\n` +
        `  tiles     ${nav.tileCount}\n` +
        `  polygons  ${polys.length - links}${links ? ` (+ ${links} off-mesh links)` : ''}\n` +
        `  vertices  ${distinct.size}\n` +
        `  bounds    ${bounds ? `${fmt(bounds[0])} .. ${fmt(bounds[1])}` : 'none (empty navmesh)'}\n` +
        `  area      ${area.toFixed(1)} (seen from above)\n` +
        `  areas     ${Object.entries(areas).map(([a, n]) => `${a}: ${n}`).join(', ') || 'none'}\n`,
    );
  } finally {
    nav.dispose();
  }
}

function pathJson(r: PathResult) {
  const points: number[][] = [];
  for (let i = 0; i < r.points.length; i += 3) {
    points.push([round(r.points[i], 4), round(r.points[i + 1], 4), round(r.points[i + 2], 4)]);
  }
  return { status: r.status, length: round(r.length, 4), points };
}

async function cmdPath(o: Options): Promise<void> {
  if (!o.from || !o.to) throw new InputError('path needs --from x,y,z and --to x,y,z');
  const { nav } = await openNavMesh(o);
  try {
    const j = pathJson(nav.findPath(o.from, o.to));
    print(
      o,
      j,
      `status ${j.status}\nlength ${r4(j.length)}\npoints ${j.points.length}\n` +
        j.points.map((p) => `  ${p.map(r4).join(' ')}\n`).join(''),
    );
  } finally {
    nav.dispose();
  }
}

const r4 = (v: number) => v.toFixed(4);

/** Lines of six numbers (start xyz, end xyz); blank lines and # comments skipped. */
async function readPairs(file: string): Promise<Float32Array> {
  const text = new TextDecoder().decode(await readBytes(file, 'cannot read pairs'));
  const out: number[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = trimC(raw.replace(/#.*/, ''));
    if (!line) return;
    const parts = line.split(/[ \t\v\f\r]+/);
    const v = parts.map(Number);
    if (parts.length !== 6 || !parts.every((p) => DECIMAL.test(p)) || !v.every(Number.isFinite)) {
      throw new InputError(`${file}:${i + 1}: need six numbers (start xyz, end xyz)`);
    }
    const big = v.findIndex((x) => !Number.isFinite(Math.fround(x)));
    if (big >= 0) throw new InputError(`${file}:${i + 1}: ${parts[big]} is beyond float32's range (3.4e38)`);
    out.push(...v);
  });
  if (out.length === 0) throw new InputError(`${file}: no pairs`);
  return new Float32Array(out);
}

async function cmdQuery(o: Options): Promise<void> {
  if (!o.pairsFile && o.pairs === undefined) throw new InputError('query needs --pairs N [--seed S] or --pairs-file F');
  const fromFile = o.pairsFile ? await readPairs(o.pairsFile) : null;
  const { nav } = await openNavMesh(o);
  try {
    let pairs = fromFile;
    if (!pairs) {
      // Random start/end points on the navmesh, area-weighted, from the seed (the native tool's sequence).
      const n = o.pairs!;
      pairs = new Float32Array(n * 6);
      nav.seedRandom(o.seed ?? 1n);
      // An empty navmesh has no points to give: its pairs stay at the origin and find nothing, as in the native tool.
      for (let i = 0; i < n * 2; i++) {
        const p = nav.randomPoint();
        if (p) pairs.set(p, i * 3);
      }
    }
    const n = pairs.length / 6;
    // Repeat the batch for a stable rate, as the native tool does.
    let batch: PathBatch;
    let elapsed = 0;
    let rounds = 0;
    do {
      const t0 = performance.now();
      batch = nav.findPaths(pairs);
      elapsed += performance.now() - t0;
      rounds++;
    } while (elapsed < 300);
    let found = 0;
    let complete = 0;
    for (const s of batch.status) {
      found += s !== 0 ? 1 : 0;
      complete += s === 2 ? 1 : 0;
    }
    const qps = elapsed > 0 ? (n * rounds) / (elapsed / 1000) : 0;
    const json: Record<string, unknown> = { pairs: n, found, complete, qps: round(qps, 1) };
    if (fromFile) {
      const names = ['none', 'partial', 'complete'];
      json.results = Array.from({ length: n }, (_, i) => ({
        status: names[batch.status[i]] ?? 'none',
        length: round(batch.lengths[i], 4),
        points: batch.offsets[i + 1] - batch.offsets[i],
      }));
    }
    print(o, json, `pairs ${n}\nfound ${found}\ncomplete ${complete}\nqueries/s ${qps.toFixed(0)}\n`);
  } finally {
    nav.dispose();
  }
}

async function cmdRender(o: Options): Promise<void> {
  if (!o.out) throw new InputError('render needs -o OUT.svg');
  if (extname(o.out).toLowerCase() !== '.svg') throw new InputError(`-o ${o.out}: render writes an SVG picture: name it .svg`);
  if (!o.from !== !o.to) throw new InputError('render draws a path with both --from x,y,z and --to x,y,z');
  const { nav } = await openNavMesh(o);
  try {
    const polys = nav.polygons();
    const path = o.from && o.to ? { from: o.from, to: o.to, result: nav.findPath(o.from, o.to) } : undefined;
    await writeOut(o.out, renderSvg(`navbake: ${o.file}`, polys, path));
    const drawn = polys.filter((p) => !p.offMesh).length;
    const j = path ? pathJson(path.result) : undefined;
    print(
      o,
      { svg: o.out, polys: drawn, ...(j ? { path: { status: j.status, length: j.length, points: j.points.length } } : {}) },
      `${o.out}: ${drawn} polygons${j ? `, path ${j.status} (length ${r4(j.length)})` : ''}\n`,
    );
  } finally {
    nav.dispose();
  }
}

const RUN: Record<string, (o: Options) => Promise<void>> = {
  bake: cmdBake,
  info: cmdInfo,
  path: cmdPath,
  query: cmdQuery,
  render: cmdRender,
};

async function main(argv: readonly string[]): Promise<number> {
  if (argv.length === 0) {
    process.stderr.write(usage());
    return 2;
  }
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    // the package's version (package.json, three folders up from web/dist/bin/navbake.js)
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    process.stdout.write(`navbake ${pkg.version}\n`);
    return 0;
  }
  if (['--help', '-h', 'help'].includes(argv[0]) || argv.includes('--help')) {
    process.stdout.write(usage());
    return 0;
  }
  try {
    const o = parseArgs(argv);
    await RUN[o.command](o);
    return 0;
  } catch (e) {
    if (e instanceof InputError) {
      process.stderr.write(`navbake: ${e.message}\n`);
      return 2;
    }
    if (e instanceof OutputError) {
      process.stderr.write(`navbake: ${e.message}\n`);
      return 1;
    }
    if (isNavBakeError(e)) {
      process.stderr.write(`navbake: ${e.code}: ${withFlags(bare(e.message))}\n`);
      return 1;
    }
    process.stderr.write(`navbake: ${(e as Error)?.stack ?? e}\n`);
    return 1;
  }
}

/** "no space left on device" from "ENOSPC: no space left on device, write" (the native tool's words). */
function writeErrorReason(e: NodeJS.ErrnoException): string {
  return (e?.message ?? String(e)).replace(/^E[A-Z]+: /, '').replace(/, \w+$/, '');
}

// Output that cannot be written (a full disk, a closed pipe) is a failure: one line and exit 1, not a stack trace
// from an unhandled 'error' event. A closed pipe (navbake ... | head -c1) is the reader's choice: exit 1 quietly,
// as the native tool does.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e?.code !== 'EPIPE') process.stderr.write(`navbake: cannot write output: ${writeErrorReason(e)}\n`);
  process.exit(1);
});

main(process.argv.slice(2)).then((code) => {
  terminateWorkers();
  process.exitCode = code;
});
