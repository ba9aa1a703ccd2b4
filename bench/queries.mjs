// Path query throughput on dungeon.obj with 2000 random start/end pairs (points on the navmesh, seeded):
// per pair nearest polygon x2 + A* + straight path.
//  - navbake native: `navbake query --pairs 2000 --json` (the C batch call, gcc -O2);
//  - navbake wasm: the batch export nbw_find_paths from Node (one boundary crossing for all pairs);
//  - reference wasm: npm @recast-navigation 0.43.1, NavMeshQuery.computePath per pair on its own solo bake
//    of the same level with the same settings (REFERENCE.md: native 105k-173k pairs/s, computePath 70k/s).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { init, NavMeshQuery } from '@recast-navigation/core';
import { generateSoloNavMesh } from '@recast-navigation/generators';
import { loadMesh, machine, median, meshesDir, root, today, writeSection } from './lib.mjs';

await init();
const PAIRS = 2000;
const level = resolve(meshesDir, 'dungeon.obj');
const mesh = loadMesh(level);

// ---- navbake wasm ----
const { default: create } = await import(resolve(root, 'build/wasm/navbake.mjs'));
const m = await create({ wasmBinary: readFileSync(resolve(root, 'build/wasm/navbake.wasm')) });
const ctx = m._nbw_context_create();
const pPos = m._malloc(mesh.positions.byteLength);
const pIdx = m._malloc(mesh.indices.byteLength);
m.HEAPF32.set(mesh.positions, pPos >> 2);
m.HEAPU32.set(mesh.indices, pIdx >> 2);
const nav = m._nbw_navmesh_bake(ctx, pPos, mesh.positions.length / 3, pIdx, mesh.indices.length / 3, 0, 0);
if (!nav) throw new Error(m.UTF8ToString(m._nbw_message(ctx)));
const q = m._nbw_query_create(ctx, nav, 0);
const filter = m._nbw_filter_create();
const scratch = m._malloc(256);
const rng = scratch; // uint64 state
m.HEAPU32[rng >> 2] = 1;
m.HEAPU32[(rng >> 2) + 1] = 0;
const pairs = new Float32Array(PAIRS * 6);
for (let i = 0; i < PAIRS * 2; i++) {
  if (m._nbw_random_point(q, filter, rng, scratch + 16, scratch + 32) !== 0) throw new Error('random point');
  pairs.set(m.HEAPF32.subarray((scratch + 32) >> 2, ((scratch + 32) >> 2) + 3), i * 3);
}
const pPairs = m._malloc(pairs.byteLength);
m.HEAPF32.set(pairs, pPairs >> 2);
const half = scratch + 64;
m.HEAPF32.set([2, 4, 2], half >> 2);
const pStatus = m._malloc(PAIRS);
const pLengths = m._malloc(PAIRS * 4);
const pOffsets = m._malloc((PAIRS + 1) * 4);
const capacity = PAIRS * 256;
const pPoints = m._malloc(capacity * 12);
const batch = () => {
  const s = m._nbw_find_paths(q, pPairs, PAIRS, half, filter, 0, pStatus, pLengths, pOffsets, pPoints, 0, 0, capacity, scratch + 96);
  if (s !== 0) throw new Error(m.UTF8ToString(m._nbw_message(ctx)));
};
const oursStatus = () => Array.from(m.HEAPU8.subarray(pStatus, pStatus + PAIRS));

// ---- reference ----
const { success, navMesh } = generateSoloNavMesh(mesh.positions, mesh.indices, {
  cs: 0.3, ch: 0.2, walkableSlopeAngle: 45, walkableHeight: 10, walkableClimb: 4, walkableRadius: 2, maxEdgeLen: 40,
  maxSimplificationError: 1.3, minRegionArea: 8, mergeRegionArea: 20, maxVertsPerPoly: 6, detailSampleDist: 6,
  detailSampleMaxError: 1,
});
if (!success) throw new Error('reference bake failed');
const rq = new NavMeshQuery(navMesh);
const v3 = (i) => ({ x: pairs[i], y: pairs[i + 1], z: pairs[i + 2] });
const ref = () => {
  let found = 0;
  for (let i = 0; i < PAIRS; i++) {
    const r = rq.computePath(v3(i * 6), v3(i * 6 + 3), { halfExtents: { x: 2, y: 4, z: 2 } });
    found += r.success ? 1 : 0;
  }
  return found;
};

function rate(fn) {
  for (let i = 0; i < 3; i++) fn(); // warm-up
  const rates = [];
  for (let k = 0; k < 7; k++) {
    let rounds = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 150) {
      fn();
      rounds++;
    }
    rates.push((rounds * PAIRS) / ((performance.now() - t0) / 1000));
  }
  return median(rates);
}

const rates = { wasm: [], ref: [] };
for (let k = 0; k < 3; k++) {
  rates.wasm.push(rate(batch));
  rates.ref.push(rate(ref));
}
const wasmRate = median(rates.wasm);
const refRate = median(rates.ref);
const nativeRates = [];
for (let k = 0; k < 3; k++) {
  const r = spawnSync(resolve(root, 'build/navbake'), ['query', level, '--pairs', String(PAIRS), '--seed', '1', '--json'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
  nativeRates.push(JSON.parse(r.stdout).qps);
}
const nativeRate = median(nativeRates);
batch();
const st = oursStatus();
const complete = st.filter((s) => s === 2).length;
const k = (x) => `${(x / 1000).toFixed(0)}k`;
const md = `## Path queries (${today()})

Machine: ${machine()}. dungeon.obj, default config, solo navmesh; ${PAIRS} random start/end pairs (points on the
navmesh, seed 1); per pair nearest polygon x2 (half extents 2, 4, 2) + A* + straight path. Medians of repeated
timed rounds. ${complete} of ${PAIRS} pairs have a complete path (${((100 * complete) / PAIRS).toFixed(0)}%; REFERENCE.md: about 81%).

| build | pairs/s | vs reference computePath |
|---|---|---|
| navbake native (batch call, gcc -O2) | ${k(nativeRate)} | ${(nativeRate / refRate).toFixed(1)}x |
| navbake wasm (batch export, one call for all pairs) | ${k(wasmRate)} | ${(wasmRate / refRate).toFixed(1)}x |
| reference wasm (@recast-navigation computePath per pair) | ${k(refRate)} | 1.0x |

Target (issue 4): at least 175k pairs/s native and through the wasm batch call (the reference's native build:
105k-173k pairs/s on this kind of machine).
`;
writeSection('queries', md);
console.log(md);
