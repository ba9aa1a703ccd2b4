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

// findPathAsync: long searches in slices. The thread's longest pauses while they run (the gaps between setImmediate
// callbacks, which is what a page's frames and input would wait for) and their time against findPath's.
{
  const mesh = loadMesh(resolve(meshesDir, 'dungeon.obj'));
  const cell = 0.2;
  const grid = await voxelize(mesh, { cellSize: cell, cellHeight: cell }, { workers: false });
  const [ox, oy, oz] = grid.origin;
  const [dx, dy, dz] = grid.dims;
  const at = (fx, fy, fz) => [ox + fx * dx * cell, oy + fy * dy * cell, oz + fz * dz * cell];
  const pairs = [
    [at(0.1, 0.5, 0.1), at(0.9, 0.5, 0.9)],
    [at(0.9, 0.6, 0.1), at(0.1, 0.4, 0.9)],
    [at(0.5, 0.5, 0.05), at(0.5, 0.5, 0.95)],
  ];
  const options = { move: 'fly', searchRadius: 10, maxNodes: 1 << 20 };
  const asyncRows = [];
  const gapsWhile = async (run) => {
    const gaps = [];
    let last = performance.now();
    let going = true;
    const tick = () => {
      if (!going) return; // the one still queued when the search ended
      const t = performance.now();
      gaps.push(t - last);
      last = t;
      setImmediate(tick);
    };
    setImmediate(tick);
    const t0 = performance.now();
    await run();
    const ms = performance.now() - t0;
    going = false;
    return { ms, gaps };
  };
  // the first search on a new pool of this size (it allocates the pool and empties its slots first)
  const first = await gapsWhile(() => grid.findPathAsync(pairs[0][0], pairs[0][1], options));
  for (const sliceMs of [4, 16]) {
    const gaps = [];
    const ratios = [];
    let nodes = 0;
    for (let round = 0; round < 3; round++) {
      for (const [s, e] of pairs) {
        const t0 = performance.now();
        const r = grid.findPath(s, e, options);
        const blocking = performance.now() - t0;
        nodes = Math.max(nodes, r.nodes);
        const a = await gapsWhile(() => grid.findPathAsync(s, e, { ...options, sliceMs }));
        gaps.push(...a.gaps);
        ratios.push(a.ms / blocking);
      }
    }
    gaps.sort((a, b) => a - b);
    const q = (f) => gaps[Math.min(gaps.length - 1, Math.floor(f * gaps.length))];
    asyncRows.push(
      `| ${sliceMs} | ${pairs.length} x 3 | ${nodes} | ${fmt(median(ratios))} | ${fmt(median(gaps))} | ${fmt(q(0.99))} | ${fmt(gaps[gaps.length - 1])} |`,
    );
  }
  first.gaps.sort((a, b) => b - a);
  grid.dispose();
  writeSection(
    'voxels-async',
    `## Voxels: findPathAsync's slices (${today()})

Machine: ${machine()}. dungeon.obj voxelized at 0.2 m (${dx} x ${dy} x ${dz}), flights across the level
(\`move: 'fly'\`, \`maxNodes\` 2^20, ${pairs.length} pairs, each 3 times). While each runs, a chain of \`setImmediate\`
callbacks records the thread's pauses (what a page's frames and input wait for). "time" is the search's time over
\`findPath\`'s for the same pair (the thread runs nothing else here); pauses in ms.

| sliceMs | searches | most nodes | time / findPath | median pause | p99 pause | longest pause |
|---|---|---|---|---|---|---|
${asyncRows.join('\n')}

The first search on a new pool of 2^20 nodes (allocated, its slots emptied in slices, then the search): longest
pauses ${first.gaps.slice(0, 3).map(fmt).join(', ')} ms.
`,
  );
  console.log(asyncRows.join('\n'));
}
