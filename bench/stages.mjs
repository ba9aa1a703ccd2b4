// Per-stage bake times, solo bake, default config (the reference demo's), for every partition:
//  - navbake native: `build/navbake bake --repeat` (gcc -O2), medians;
//  - navbake wasm: the built module in this Node process, timed by the C core per stage;
//  - reference wasm: recastnavigation compiled to wasm (npm @recast-navigation/core 0.43.1, the same C++
//    as the reference's native build), its stage calls timed one by one from JavaScript.
// The two wasm builds run interleaved in one process; medians of REPEAT warm runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadOurs, makeOurs, makeReference, PARTITIONS, STAGES } from './bakers.mjs';
import { loadMesh, machine, median, meshesDir, root, today, writeSection } from './lib.mjs';

const REPEAT = Number(process.env.REPEAT ?? 15);

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
