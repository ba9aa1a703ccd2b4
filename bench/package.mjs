// The npm package against npm @recast-navigation 0.43.1 (core + generators: recastnavigation compiled to
// wasm), same triangles, same settings (the reference demo's), one Node process per measurement family:
//  - solo bake: median of >= 15 warm bakes through each package's public API (navbake: bake() on the main
//    thread, workers: false; reference: generateSoloNavMesh);
//  - cold start: a fresh Node process doing import + init + first solo bake of dungeon (median of 7);
//  - path queries: 2000 random pairs on dungeon, navbake's batch findPaths vs the reference's computePath;
//  - shipped size: the JavaScript and wasm a web page loads, gzip -9.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  const ours = async () => {
    const t0 = performance.now();
    const nav = await bake({ positions: mesh.positions, indices: mesh.indices }, {}, { workers: false });
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
  for (let i = 0; i < 3; i++) (await ours(), theirs());
  const a = [];
  const b = [];
  for (let i = 0; i < REPEAT; i++) {
    a.push(await ours());
    b.push(theirs());
  }
  const ma = median(a);
  const mb = median(b);
  bakeRows.push(`| ${name} | ${f1(ma)} | ${f1(mb)} | ${(ma / mb).toFixed(2)} |`);
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
const cold = (file) => {
  const v = [];
  for (let i = 0; i < 7; i++) {
    const r = spawnSync(process.execPath, [join(dir, file)], { encoding: 'utf8', cwd: root, env: { ...process.env, NODE_PATH: resolve(root, 'node_modules') } });
    if (r.status !== 0) throw new Error(r.stderr);
    v.push(parseFloat(r.stdout));
  }
  return median(v);
};
// the reference's packages resolve from the project's node_modules: run its script from there
writeFileSync(resolve(root, 'build/bench-cold-theirs.mjs'), readFileSync(join(dir, 'theirs.mjs')));
const coldOurs = cold('ours.mjs');
const coldTheirs = (() => {
  const v = [];
  for (let i = 0; i < 7; i++) {
    const r = spawnSync(process.execPath, [resolve(root, 'build/bench-cold-theirs.mjs')], { encoding: 'utf8', cwd: root });
    if (r.status !== 0) throw new Error(r.stderr);
    v.push(parseFloat(r.stdout));
  }
  return median(v);
})();

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
const qOurs = rate(() => nav.findPaths(pairs));
const qTheirs = rate(() => {
  for (let i = 0; i < PAIRS; i++) rq.computePath(v3(i * 6), v3(i * 6 + 3), { halfExtents: { x: 2, y: 4, z: 2 } });
});

// ---- shipped size ----
const gz = (p) => gzipSync(readFileSync(p), { level: 9 }).length;
const distDir = resolve(root, 'web/dist');
const ourFiles = readdirSync(distDir).filter((f) => /\.(m?js|wasm)$/.test(f) && !f.includes('three'));
const ourSize = ourFiles.reduce((s, f) => s + gz(join(distDir, f)), 0);
const wasmSize = gz(join(distDir, 'navbake.wasm'));
const nm = resolve(root, 'node_modules/@recast-navigation');
const theirFiles = ['core/dist/index.mjs', 'generators/dist/index.mjs', 'wasm/dist/recast-navigation.wasm.js', 'wasm/dist/recast-navigation.wasm.wasm'];
const theirSize = theirFiles.reduce((s, f) => s + gz(join(nm, f)), 0);
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;

const md = `## The npm package vs @recast-navigation (${today()})

Machine: ${machine()}. Same triangles and settings (the reference demo's) in both; navbake through its public API
(\`bake(..., { workers: false })\`, \`NavMesh.findPaths\`), the reference through its public API
(\`generateSoloNavMesh\`, \`NavMeshQuery.computePath\`).

Solo bake, warm, median of ${REPEAT} (ms):

| level | navbake | @recast-navigation | ratio (target <= 0.5) |
|---|---|---|---|
${bakeRows.join('\n')}

| measure | navbake | @recast-navigation | ratio | target |
|---|---|---|---|---|
| cold start: fresh process, import + init + first dungeon bake (median of 7) | ${f1(coldOurs)} ms | ${f1(coldTheirs)} ms | ${(coldOurs / coldTheirs).toFixed(2)} | <= 0.3 |
| path queries on dungeon, 2000 random pairs (batch vs computePath) | ${(qOurs / 1000).toFixed(0)}k/s | ${(qTheirs / 1000).toFixed(0)}k/s | ${(qOurs / qTheirs).toFixed(1)}x | >= 3x |
| shipped size, JS + wasm, gzip -9 | ${kb(ourSize)} (wasm ${kb(wasmSize)}; ${ourFiles.length} files) | ${kb(theirSize)} | ${(ourSize / theirSize).toFixed(2)} | <= 60 KB |
`;
writeSection('package', md);
console.log(md);
nav.dispose();
refNav.destroy();
process.exit(0);
