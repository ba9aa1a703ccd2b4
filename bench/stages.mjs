// Per-stage bake times, solo bake, default config (the reference demo's), for every partition:
//  - navbake native: `build/navbake bake --repeat` (gcc -O2), medians;
//  - navbake wasm: the built module in this Node process, timed by the C core per stage;
//  - reference wasm: recastnavigation compiled to wasm (npm @recast-navigation/core 0.43.1, the same C++
//    as the reference's native build), its stage calls timed one by one from JavaScript.
// The two wasm builds run interleaved in one process; medians of REPEAT warm runs.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as rc from '@recast-navigation/core';
import { loadMesh, machine, median, meshesDir, root, today, writeSection } from './lib.mjs';

await rc.init();
const REPEAT = Number(process.env.REPEAT ?? 15);
const PARTITIONS = { watershed: 1, monotone: 2, layers: 3 };
const STAGES = ['rasterize', 'filter', 'compact', 'erode', 'distance', 'regions', 'contours', 'polymesh', 'detail'];
const C = { cs: 0.3, ch: 0.2, slope: 45, wh: 10, wc: 4, wr: 2, minArea: 64, mergeArea: 400, maxErr: 1.3,
            maxEdge: 40, nvp: 6, sampleDist: 1.8, sampleErr: 0.2 };

function terrainPath() {
  const p = resolve(root, 'build/terrain-330.obj');
  if (!existsSync(p)) {
    const r = spawnSync(resolve(root, 'build/navbake'), ['terrain', '--cells', '330', '-o', p], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
  }
  return p;
}

const LEVELS = [
  ['dungeon', resolve(meshesDir, 'dungeon.obj')],
  ['nav_test', resolve(meshesDir, 'nav_test.obj')],
  ['terrain 330x330', terrainPath()],
];

function bounds(p) {
  const bmin = [p[0], p[1], p[2]];
  const bmax = [p[0], p[1], p[2]];
  for (let i = 3; i < p.length; i += 3)
    for (let k = 0; k < 3; k++) {
      bmin[k] = Math.min(bmin[k], p[i + k]);
      bmax[k] = Math.max(bmax[k], p[i + k]);
    }
  return { bmin, bmax };
}

function makeReference(mesh, partition) {
  const verts = new rc.FloatArray();
  verts.copy(mesh.positions);
  const tris = new rc.IntArray();
  tris.copy(new Int32Array(mesh.indices));
  const nv = mesh.positions.length / 3;
  const nt = mesh.indices.length / 3;
  const { bmin, bmax } = bounds(mesh.positions);
  const w = Math.floor((bmax[0] - bmin[0]) / C.cs + 0.5);
  const h = Math.floor((bmax[2] - bmin[2]) / C.cs + 0.5);
  const ctx = new rc.RecastBuildContext(false);
  return () => {
    const t = { start: performance.now() };
    let last = t.start;
    const lap = (k) => {
      const now = performance.now();
      t[k] = now - last;
      last = now;
    };
    const areas = new rc.UnsignedCharArray();
    areas.resize(nt);
    const hf = rc.allocHeightfield();
    rc.createHeightfield(ctx, hf, w, h, bmin, bmax, C.cs, C.ch);
    rc.markWalkableTriangles(ctx, C.slope, verts, nv, tris, nt, areas);
    rc.rasterizeTriangles(ctx, verts, nv, tris, areas, nt, hf, C.wc);
    lap('rasterize');
    rc.filterLowHangingWalkableObstacles(ctx, C.wc, hf);
    rc.filterLedgeSpans(ctx, C.wh, C.wc, hf);
    rc.filterWalkableLowHeightSpans(ctx, C.wh, hf);
    lap('filter');
    const chf = rc.allocCompactHeightfield();
    rc.buildCompactHeightfield(ctx, C.wh, C.wc, hf, chf);
    lap('compact');
    rc.erodeWalkableArea(ctx, C.wr, chf);
    lap('erode');
    if (partition === 1) {
      rc.buildDistanceField(ctx, chf);
      lap('distance');
      rc.buildRegions(ctx, chf, 0, C.minArea, C.mergeArea);
    } else if (partition === 2) rc.buildRegionsMonotone(ctx, chf, 0, C.minArea, C.mergeArea);
    else rc.buildLayerRegions(ctx, chf, 0, C.minArea);
    lap('regions');
    const cset = rc.allocContourSet();
    rc.buildContours(ctx, chf, C.maxErr, C.maxEdge, cset);
    lap('contours');
    const pmesh = rc.allocPolyMesh();
    rc.buildPolyMesh(ctx, cset, C.nvp, pmesh);
    lap('polymesh');
    const dmesh = rc.allocPolyMeshDetail();
    rc.buildPolyMeshDetail(ctx, pmesh, chf, C.sampleDist, C.sampleErr, dmesh);
    lap('detail');
    t.total = last - t.start;
    t.polys = pmesh.npolys();
    rc.freePolyMeshDetail(dmesh);
    rc.freePolyMesh(pmesh);
    rc.freeContourSet(cset);
    rc.freeCompactHeightfield(chf);
    rc.freeHeightfield(hf);
    areas.destroy?.();
    return t;
  };
}

async function loadOurs() {
  const { default: create } = await import(resolve(root, 'build/wasm/navbake.mjs'));
  return create({ wasmBinary: readFileSync(resolve(root, 'build/wasm/navbake.wasm')) });
}

function makeOurs(m, mesh, partition) {
  const names = Array.from({ length: m._nbw_stat_count() }, (_, i) => m.UTF8ToString(m._nbw_stat_name(i)));
  const firstMs = names.indexOf('rasterize');
  const nf = m._nbw_config_field_count();
  const ctx = m._nbw_context_create();
  const pPos = m._malloc(mesh.positions.byteLength);
  const pIdx = m._malloc(mesh.indices.byteLength);
  const pCfg = m._malloc(nf * 8);
  m.HEAPF32.set(mesh.positions, pPos >> 2);
  m.HEAPU32.set(mesh.indices, pIdx >> 2);
  const cfg = new Float64Array(nf);
  for (let i = 0; i < nf; i++) if (m.UTF8ToString(m._nbw_config_field_name(i)) === 'partition') cfg[i] = partition;
  m.HEAPF64.set(cfg, pCfg >> 3);
  const run = () => {
    const r = m._nbw_bake(ctx, pPos, mesh.positions.length / 3, pIdx, mesh.indices.length / 3, 0, pCfg, 0, 0);
    if (!r) throw new Error(m.UTF8ToString(m._nbw_message(ctx)));
    const out = {};
    names.forEach((n, i) => {
      const v = m._nbw_result_stat(r, i);
      if (i >= firstMs) out[n] = Math.max(0, v);
      else if (!(n in out)) out[n] = v;
    });
    out.polys_count = m._nbw_result_stat(r, names.indexOf('polys'));
    m._nbw_result_free(ctx, r);
    return out;
  };
  run.dispose = () => {
    m._free(pPos);
    m._free(pIdx);
    m._free(pCfg);
    m._nbw_context_destroy(ctx);
  };
  return run;
}

function native(path, partition) {
  const r = spawnSync(resolve(root, 'build/navbake'), ['bake', path, '--partition', partition, '--repeat', String(REPEAT), '--json'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  const j = JSON.parse(r.stdout);
  return { ...j.ms, polys_count: j.polys };
}

const ours = await loadOurs();
const f = (x) => (x === undefined ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1));
const rows = [];
const ratios = [];
for (const [name, path] of LEVELS) {
  const mesh = loadMesh(path);
  for (const [pname, pid] of Object.entries(PARTITIONS)) {
    const ref = makeReference(mesh, pid);
    const wasm = makeOurs(ours, mesh, pid);
    const sr = [];
    const sw = [];
    for (let i = 0; i < 2; i++) (ref(), wasm());
    for (let i = 0; i < REPEAT; i++) {
      sr.push(ref());
      sw.push(wasm());
    }
    wasm.dispose();
    const nat = native(path, pname);
    const med = (s) => Object.fromEntries([...STAGES, 'total'].map((k) => [k, s[0][k] === undefined ? undefined : median(s.map((x) => x[k]))]));
    const mr = med(sr);
    const mw = med(sw);
    for (const [impl, v, polys] of [
      ['navbake native', nat, nat.polys_count],
      ['navbake wasm', mw, sw[0].polys_count],
      ['reference wasm', mr, sr[0].polys],
    ]) {
      const cells = STAGES.map((k) => f(pid !== 1 && k === 'distance' ? undefined : v[k]));
      rows.push(`| ${name} | ${pname} | ${impl} | ${cells.join(' | ')} | **${f(v.total)}** | ${polys} |`);
    }
    ratios.push(`| ${name} | ${pname} | ${(mw.total / mr.total).toFixed(2)} | ${(mw.detail / mr.detail).toFixed(2)} | ${(nat.total / mr.total).toFixed(2)} |`);
  }
}

const md = `## Solo bake, stage by stage (${today()})

Machine: ${machine()}. Medians of ${REPEAT} warm runs, default config (REFERENCE.md), solo bake, per partition.
"navbake native" is \`build/navbake bake --repeat\` (gcc -O2); the two wasm rows run interleaved in one Node process.
"reference wasm" is recastnavigation compiled to wasm (npm @recast-navigation/core 0.43.1), stage calls timed one
by one; REFERENCE.md reports its native build as fast once warm (dungeon 24.5-27.9 ms, nav_test 31.9-33.1 ms
watershed; detail 98-106 ms of a 139-149 ms terrain bake). The terrain is \`navbake terrain --cells 330\`
(deterministic rolling hills, 330x330 cells). Times in ms; last column: polygons produced.

| level | partition | build | ${STAGES.join(' | ')} | total | polys |
|---|---|---|${STAGES.map(() => '---').join('|')}|---|---|
${rows.join('\n')}

Ratios (lower is better for navbake):

| level | partition | wasm total ours/ref | wasm detail ours/ref | native ours / reference wasm |
|---|---|---|---|---|
${ratios.join('\n')}
`;
writeSection('stages', md);
console.log(md);
