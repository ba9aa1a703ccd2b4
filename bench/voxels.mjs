// Voxels through the package (web/dist) on the main thread: voxelize() of dungeon.obj and nav_test.obj at the
// default voxel size, and VoxelGrid.findPath for walk, climb and fly agents (the default agent: 2 tall, radius 0,
// climb 0.9; default node pool 65536) between 100 seeded pairs of navmesh points, smoothed and not. recastnavigation
// has no voxel path search, so there is no reference column: these figures are for regressions and for sizing
// maxNodes on a page (a search runs on the calling thread).
import { resolve } from 'node:path';
import { bake, voxelize } from '../web/dist/index.js';
import { loadMesh, machine, median, meshesDir, today, writeSection } from './lib.mjs';

const PAIRS = 100;
const rows = [];
const fmt = (v) => v.toFixed(2);
for (const name of ['dungeon.obj', 'nav_test.obj']) {
  const mesh = loadMesh(resolve(meshesDir, name));
  const times = [];
  const inWorker = [];
  let grid = null;
  for (let i = 0; i < 9; i++) {
    grid?.dispose();
    let t = performance.now();
    (await voxelize(mesh, {}, { workers: 1 })).dispose(); // voxelize()'s default, for reference
    inWorker.push(performance.now() - t);
    t = performance.now();
    grid = await voxelize(mesh, {}, { workers: false });
    times.push(performance.now() - t);
  }
  const nav = await bake(mesh, {}, { workers: false });
  const points = [];
  for (let s = 1; points.length < 2 * PAIRS; s++) points.push(nav.randomPoint({ seed: s }));
  nav.dispose();
  const [dx, dy, dz] = grid.dims;
  rows.push(`| ${name} | voxelize | ${dx} x ${dy} x ${dz} | ${fmt(median(times))} | | |`);
  rows.push(`| ${name} | voxelize in a worker (the default) | ${dx} x ${dy} x ${dz} | ${fmt(median(inWorker.slice(1)))} | | |`);
  const cases = ['walk', 'climb', 'fly'].flatMap((move) => [false, true].map((smooth) => ({ move, smooth })));
  cases.push({ move: 'climb', smooth: true, heuristicWeight: 1.5 }, { move: 'fly', smooth: true, heuristicWeight: 1.5 });
  for (const { move, smooth, heuristicWeight } of cases) {
    {
      const t = [];
      const status = { complete: 0, partial: 0, none: 0 };
      for (let i = 0; i < PAIRS; i++) {
        const t0 = performance.now();
        const r = grid.findPath(points[2 * i], points[2 * i + 1], { move, smooth, heuristicWeight });
        t.push(performance.now() - t0);
        status[r.status]++;
      }
      t.sort((a, b) => a - b);
      const p95 = t[Math.floor(0.95 * (t.length - 1))];
      rows.push(
        `| ${name} | findPath ${move}${smooth ? ', smooth' : ''}${heuristicWeight ? `, heuristicWeight ${heuristicWeight}` : ''} | ${status.complete} / ${status.partial} / ${status.none} | ${fmt(median(t))} | ${fmt(p95)} | ${fmt(t[t.length - 1])} |`,
      );
    }
  }
  grid.dispose();
}

writeSection(
  'voxels',
  `## Voxels: voxelize and 3D path search (${today()})

Machine: ${machine()}. Through the package on the main thread (\`workers: false\`), default config (voxels 0.3 x 0.2 x
0.3); \`voxelize\`: median of 9 runs (in a worker: of the 8 after the first, which starts the worker). \`findPath\`: ${PAIRS} seeded pairs of navmesh points per level, default agent (2 tall,
radius 0, climb 0.9) and node pool (65536); status counts complete / partial / none (partial: the pool ran out, or the
end cannot be reached moving that way), then the median, 95th percentile and slowest search in ms. The last two rows
use weighted A* (\`heuristicWeight: 1.5\`: paths at most 1.5 times the shortest).

| level | call | grid / status | median | p95 | max |
|---|---|---|---|---|---|
${rows.join('\n')}
`,
);
console.log(rows.join('\n'));
