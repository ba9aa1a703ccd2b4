// The npm package against npm @recast-navigation 0.43.1 (core + generators: recastnavigation compiled to
// wasm), same triangles, same settings (the reference demo's), one Node process per measurement family:
//  - solo bake: median of >= 15 warm bakes through each package's public API (navbake: bake() on the main
//    thread, workers: false; reference: generateSoloNavMesh);
//  - cold start: a fresh Node process doing import + init + first solo bake of dungeon (median of 7);
//  - path queries: 2000 random pairs on dungeon, navbake's batch findPaths (and findPathsAsync over the machine's
//    threads) vs the reference's computePath;
//  - shipped size: what a web page loads, gzip -9: a production build (Vite, minified) of a small page using each
//    package's public API (bake + batch paths / generateSoloNavMesh + computePath), every emitted .js and .wasm file
//    summed (navbake's bake worker included, it is loaded by default), plus the raw package files for reference.
// BENCH_SECTION names the RESULTS.md section written (default "package"; `make bench` also writes "package-lts").
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pathToFileURL } from 'node:url';
import { init as initRef, NavMeshQuery } from '@recast-navigation/core';
import { generateSoloNavMesh } from '@recast-navigation/generators';
import { loadMesh, machine, median, meshesDir, root, today, writeSection } from './lib.mjs';

const pkg = pathToFileURL(resolve(root, 'web/dist/index.js')).href;
const { init, bake } = await import(pkg);
await init();
await initRef();
const REF_CONFIG = {
  cs: 0.3, ch: 0.2, walkableSlopeAngle: 45, walkableHeight: 10, walkableClimb: 4, walkableRadius: 2, maxEdgeLen: 40,
  maxSimplificationError: 1.3, minRegionArea: 8, mergeRegionArea: 20, maxVertsPerPoly: 6, detailSampleDist: 6,
  detailSampleMaxError: 1,
};
const REPEAT = Number(process.env.REPEAT ?? 15);
const f1 = (x) => x.toFixed(1);

// ---- solo bake, warm ----
const terrain = resolve(root, 'build/terrain-330.obj');
spawnSync(resolve(root, 'build/navbake'), ['terrain', '--cells', '330', '-o', terrain]);
const levels = [['dungeon', resolve(meshesDir, 'dungeon.obj')], ['nav_test', resolve(meshesDir, 'nav_test.obj')], ['terrain 330x330', terrain]];
const bakeRows = [];
for (const [name, path] of levels) {
  const mesh = loadMesh(path);
  const ours = async (workers = false) => {
    const t0 = performance.now();
    const nav = await bake({ positions: mesh.positions, indices: mesh.indices }, {}, { workers });
    const ms = performance.now() - t0;
    nav.dispose();
    return ms;
  };
  const theirs = () => {
    const t0 = performance.now();
    const r = generateSoloNavMesh(mesh.positions, mesh.indices, REF_CONFIG);
    const ms = performance.now() - t0;
    r.navMesh?.destroy();
    return ms;
  };
  for (let i = 0; i < 3; i++) (await ours(), await ours(1), theirs());
  const a = [];
  const b = [];
  const c = [];
  for (let i = 0; i < REPEAT; i++) {
    a.push(await ours());
    c.push(await ours(1));
    b.push(theirs());
  }
  const ma = median(a);
  const mb = median(b);
  bakeRows.push(`| ${name} | ${f1(ma)} | ${f1(mb)} | ${(ma / mb).toFixed(2)} | ${f1(median(c))} |`);
}

// ---- cold start ----
const dir = mkdtempSync(join(tmpdir(), 'navbake-cold-'));
const dungeon = loadMesh(resolve(meshesDir, 'dungeon.obj'));
writeFileSync(join(dir, 'pos.bin'), Buffer.from(dungeon.positions.buffer));
writeFileSync(join(dir, 'idx.bin'), Buffer.from(dungeon.indices.buffer));
const load = `const { readFileSync } = await import('node:fs');
const positions = new Float32Array(readFileSync('${dir}/pos.bin').buffer.slice(0));
const indices = new Uint32Array(readFileSync('${dir}/idx.bin').buffer.slice(0));
const t0 = performance.now();`;
writeFileSync(join(dir, 'ours.mjs'), `${load}
const { init, bake } = await import('${pkg}');
await init();
const nav = await bake({ positions, indices }, {}, { workers: false });
console.log(performance.now() - t0, nav.polygons().length);
process.exit(0);`);
writeFileSync(join(dir, 'theirs.mjs'), `${load}
const { init } = await import('@recast-navigation/core');
const { generateSoloNavMesh } = await import('@recast-navigation/generators');
await init();
const r = generateSoloNavMesh(positions, indices, ${JSON.stringify(REF_CONFIG)});
console.log(performance.now() - t0, r.success);
process.exit(0);`);
// Fresh processes, ours and theirs alternating so that both see the same machine load; medians of COLD runs.
const COLD = Number(process.env.COLD ?? 11);
// the reference's packages resolve from the project's node_modules: run its script from there
writeFileSync(resolve(root, 'build/bench-cold-theirs.mjs'), readFileSync(join(dir, 'theirs.mjs')));
const runCold = (file) => {
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8', cwd: root });
  if (r.status !== 0) throw new Error(r.stderr);
  return parseFloat(r.stdout);
};
const coldRuns = { ours: [], theirs: [] };
for (let i = 0; i < COLD; i++) {
  coldRuns.ours.push(runCold(join(dir, 'ours.mjs')));
  coldRuns.theirs.push(runCold(resolve(root, 'build/bench-cold-theirs.mjs')));
}
const coldOurs = median(coldRuns.ours);
const coldTheirs = median(coldRuns.theirs);

// ---- queries ----
const nav = await bake({ positions: dungeon.positions, indices: dungeon.indices }, {}, { workers: false });
nav.seedRandom(1);
const PAIRS = 2000;
const pairs = new Float32Array(PAIRS * 6);
for (let i = 0; i < PAIRS * 2; i++) pairs.set(nav.randomPoint(), i * 3);
const refNav = generateSoloNavMesh(dungeon.positions, dungeon.indices, REF_CONFIG).navMesh;
const rq = new NavMeshQuery(refNav);
const v3 = (i) => ({ x: pairs[i], y: pairs[i + 1], z: pairs[i + 2] });
const rate = (fn) => {
  for (let i = 0; i < 3; i++) fn();
  const r = [];
  for (let k = 0; k < 7; k++) {
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 150) {
      fn();
      n++;
    }
    r.push((n * PAIRS) / ((performance.now() - t0) / 1000));
  }
  return median(r);
};
// the same for a call that returns a promise
const rateAsync = async (fn) => {
  for (let i = 0; i < 3; i++) await fn();
  const r = [];
  for (let k = 0; k < 7; k++) {
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 150) {
      await fn();
      n++;
    }
    r.push((n * PAIRS) / ((performance.now() - t0) / 1000));
  }
  return median(r);
};
const ours = () => nav.findPaths(pairs);
// the batch shared out over one worker per hardware thread (this thread waits meanwhile)
const THREADS = availableParallelism();
const oursAsync = () => nav.findPathsAsync(pairs, { workers: THREADS });
// one findPath call per pair, as a game asks for them (points, flags and polygons per point)
const oursOne = () => {
  for (let i = 0; i < PAIRS; i++) nav.findPath(pairs.subarray(i * 6, i * 6 + 3), pairs.subarray(i * 6 + 3, i * 6 + 6));
};
const theirs = () => {
  for (let i = 0; i < PAIRS; i++) rq.computePath(v3(i * 6), v3(i * 6 + 3), { halfExtents: { x: 2, y: 4, z: 2 } });
};
// Taken in turns, three times each (as bench/queries.mjs does): this VM's speed drifts by 10-20% for seconds at a
// time, and measured one after the other the ratio took the drift.
const turns = { ours: [], one: [], async: [], theirs: [] };
for (let k = 0; k < 3; k++) {
  turns.ours.push(rate(ours));
  turns.one.push(rate(oursOne));
  turns.async.push(await rateAsync(oursAsync));
  turns.theirs.push(rate(theirs));
}
const qOurs = median(turns.ours);
const qOursOne = median(turns.one);
const qOursAsync = median(turns.async);
const qTheirs = median(turns.theirs);

// ---- shipped size ----
const gz = (p) => gzipSync(readFileSync(p), { level: 9 }).length;
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
// A production build of the same small page for each package (the reference's default entry point is its
// wasm-compat build, the wasm inlined into the JavaScript as base64, which is what a bundler gives its users).
const { build: viteBuild } = await import('vite');
const pages = {
  ours: `import { init, bake } from 'navbake';
await init();
const nav = await bake({ positions: new Float32Array([0, 0, 0, 0, 0, 1, 1, 0, 0]), indices: new Uint32Array([0, 1, 2]) });
console.log(nav.findPaths(new Float32Array(6)));`,
  theirs: `import { init, NavMeshQuery } from '@recast-navigation/core';
import { generateSoloNavMesh } from '@recast-navigation/generators';
await init();
const { navMesh } = generateSoloNavMesh(new Float32Array(9), new Uint32Array(3), {});
console.log(new NavMeshQuery(navMesh).computePath({ x: 0, y: 0, z: 0 }, { x: 1, y: 0, z: 0 }));`,
};
const walk = (d) => readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]));
const bundled = {};
for (const [name, src] of Object.entries(pages)) {
  const dir = resolve(root, 'build/bench-bundle', name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>');
  writeFileSync(join(dir, 'main.js'), src);
  await viteBuild({
    root: dir,
    configFile: false,
    logLevel: 'silent',
    resolve: { alias: { navbake: resolve(root, 'web/dist/index.js') } },
    build: { outDir: join(dir, 'out'), modulePreload: false },
    worker: { format: 'es' },
  });
  const files = walk(join(dir, 'out')).filter((f) => /\.(m?js|wasm)$/.test(f));
  bundled[name] = {
    total: files.reduce((s, f) => s + gz(f), 0),
    wasm: files.filter((f) => f.endsWith('.wasm')).reduce((s, f) => s + gz(f), 0),
    files: files.length,
  };
}
const ourSize = bundled.ours.total;
const theirSize = bundled.theirs.total;
const wasmSize = bundled.ours.wasm;
// For reference, the package files as published (bundled, not minified; the reference's non-inlined build).
const distDir = resolve(root, 'web/dist');
const ourFiles = readdirSync(distDir).filter((f) => /\.(m?js|wasm)$/.test(f) && !f.includes('three'));
const ourRaw = ourFiles.reduce((s, f) => s + gz(join(distDir, f)), 0);
const nm = resolve(root, 'node_modules/@recast-navigation');
const theirFiles = ['core/dist/index.mjs', 'generators/dist/index.mjs', 'wasm/dist/recast-navigation.wasm.js', 'wasm/dist/recast-navigation.wasm.wasm'];
const theirRaw = theirFiles.reduce((s, f) => s + gz(join(nm, f)), 0);

// `make bench` runs this script twice: under the machine's Node (section "package"), then under the active LTS line
// fetched from npm (BENCH_SECTION=package-lts), since V8's changes move both libraries' figures.
const section = process.env.BENCH_SECTION ?? 'package';
const title = section === 'package' ? '' : ` under Node ${process.versions.node.split('.')[0]}, the active LTS line`;
const md = `## The npm package vs @recast-navigation${title} (${today()})

Machine: ${machine()}. Same triangles and settings (the reference demo's) in both; navbake through its public API
(\`bake(..., { workers: false })\`, \`NavMesh.findPaths\`), the reference through its public API
(\`generateSoloNavMesh\`, \`NavMeshQuery.computePath\`).

Solo bake, warm, median of ${REPEAT} (ms). The last column is navbake's bake in a worker, bake()'s default (one worker
of a warm pool; the geometry copied at the call and posted, the navmesh posted back and loaded), for reference:

| level | navbake | @recast-navigation | ratio (target <= 0.5) | navbake in a worker |
|---|---|---|---|---|
${bakeRows.join('\n')}

| measure | navbake | @recast-navigation | ratio | target |
|---|---|---|---|---|
| cold start: fresh process, import + init + first dungeon bake (median of ${COLD}, alternating) | ${f1(coldOurs)} ms | ${f1(coldTheirs)} ms | ${(coldOurs / coldTheirs).toFixed(2)} | <= 0.3 |
| path queries on dungeon, 2000 random pairs (batch vs computePath; medians, the three taken in turns) | ${(qOurs / 1000).toFixed(0)}k/s | ${(qTheirs / 1000).toFixed(0)}k/s | ${(qOurs / qTheirs).toFixed(1)}x | >= 3x |
| (for reference) the same pairs one findPath call each vs computePath | ${(qOursOne / 1000).toFixed(0)}k/s | ${(qTheirs / 1000).toFixed(0)}k/s | ${(qOursOne / qTheirs).toFixed(1)}x | |
| (for reference) the same batch off the main thread: findPathsAsync over ${THREADS} workers (one per hardware thread; ${(qOursAsync / qOurs).toFixed(2)}x findPaths) vs computePath on one thread | ${(qOursAsync / 1000).toFixed(0)}k/s | ${(qTheirs / 1000).toFixed(0)}k/s | ${(qOursAsync / qTheirs).toFixed(1)}x | |
| shipped size: production build of a page (Vite, minified), JS + wasm, gzip -9 | ${kb(ourSize)} (wasm ${kb(wasmSize)}; ${bundled.ours.files} files) | ${kb(theirSize)} (${bundled.theirs.files} files) | ${(ourSize / theirSize).toFixed(2)} | <= 60 KB |
| (for reference) the package files as published, JS + wasm, gzip -9 | ${kb(ourRaw)} (${ourFiles.length} files) | ${kb(theirRaw)} (non-inlined build) | ${(ourRaw / theirRaw).toFixed(2)} | |

Shipped size is measured on what a web page loads, for both packages the same way: a production build (Vite, minified)
of a small page that bakes and finds paths through each package's public API, every emitted .js and .wasm file gzipped
(-9) and summed. For navbake that is the page's chunk, the bake worker's chunk (workers are the default) and the wasm;
for the reference, the page's chunk and its default wasm-compat build (the wasm inlined in the JavaScript as base64),
which is what a bundler gives its users. (Until 2026-11-22 this row summed the raw package files instead: tsc output
for navbake, the non-inlined files for the reference; that measure is kept in the last row.)
`;
writeSection(section, md);
console.log(md);
nav.dispose();
refNav.destroy();
process.exit(0);
