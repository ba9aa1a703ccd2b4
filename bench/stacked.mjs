// Levels that stress the per-column and per-region stages: a tower of many storeys (every column holds a span per
// floor) and a hall of many pillars (one floor with a hole per pillar, which the layer partition bridges into one
// outline, and many small regions that the wavefront partition merges). Solo bakes, default config, navbake's wasm
// against the reference's (bakers.mjs), medians of REPEAT warm runs; the slowest stage is named.
import { loadOurs, makeOurs, makeReference, PARTITIONS, STAGES } from './bakers.mjs';
import { machine, median, today, writeSection } from './lib.mjs';

const REPEAT = Number(process.env.REPEAT ?? 3);

/** Triangles as the bakers take them; quad(a, b, c, d) adds two triangles, counter-clockwise seen from above. */
function builder() {
  const pos = [];
  const idx = [];
  const v = (x, y, z) => (pos.push(x, y, z), pos.length / 3 - 1);
  const quad = (a, b, c, d) => idx.push(a, b, c, a, c, d);
  const mesh = () => ({ positions: new Float32Array(pos), indices: new Uint32Array(idx) });
  return { v, quad, mesh };
}

/** A size x size floor every 3 m, `floors` of them, each with a 4 x 4 m stairwell hole in the middle. */
function tower(floors, size = 60) {
  const { v, quad, mesh } = builder();
  const h0 = size / 2 - 2;
  const h1 = size / 2 + 2;
  for (let f = 0; f < floors; f++) {
    const y = f * 3;
    for (const [x0, z0, x1, z1] of [[0, 0, size, h0], [0, h1, size, size], [0, h0, h0, h1], [h1, h0, size, h1]]) {
      quad(v(x0, y, z0), v(x0, y, z1), v(x1, y, z1), v(x1, y, z0));
    }
  }
  return mesh();
}

/** A size x size floor with n x n pillars of 1 x 4 x 1 m on a regular grid. */
function hall(n, size) {
  const { v, quad, mesh } = builder();
  quad(v(0, 0, 0), v(0, 0, size), v(size, 0, size), v(size, 0, 0));
  const step = size / (n + 1);
  for (let i = 1; i <= n; i++) {
    for (let k = 1; k <= n; k++) {
      const [x0, z0, x1, z1] = [i * step - 0.5, k * step - 0.5, i * step + 0.5, k * step + 0.5];
      const b = [[x0, z0], [x1, z0], [x1, z1], [x0, z1]].map(([x, z]) => [v(x, 0, z), v(x, 4, z)]);
      quad(b[0][1], b[3][1], b[2][1], b[1][1]); // top
      for (let s = 0; s < 4; s++) quad(b[s][0], b[(s + 1) % 4][0], b[(s + 1) % 4][1], b[s][1]);
    }
  }
  return mesh();
}

const WAVEFRONT = 4;
const LEVELS = [
  ['tower, 20 storeys of 60 x 60 m', tower(20)],
  ['tower, 40 storeys of 60 x 60 m', tower(40)],
  ['hall 200 x 200 m, 400 pillars', hall(20, 200)],
  ['hall 400 x 400 m, 1600 pillars', hall(40, 400)],
];
// The reference's layer partition on the halls: its polygon stage took 93 s on the 200 m hall (measured once,
// 2026-11-23); not run here.
const skipReference = (level, pid) => pid === PARTITIONS.layers && level.startsWith('hall');

const ours = await loadOurs();
const f = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
const slowest = (t) => STAGES.filter((k) => t[k] !== undefined).reduce((a, k) => (t[k] > t[a] ? k : a), 'rasterize');
const rows = [];
for (const [name, mesh] of LEVELS) {
  for (const [pname, pid] of [...Object.entries(PARTITIONS), ['wavefront', WAVEFRONT]]) {
    const wasm = makeOurs(ours, mesh, pid);
    const ref = pid === WAVEFRONT || skipReference(name, pid) ? null : makeReference(mesh, pid);
    wasm();
    ref?.();
    const sw = [];
    const sr = [];
    for (let i = 0; i < REPEAT; i++) {
      sw.push(wasm());
      if (ref) sr.push(ref());
    }
    wasm.dispose();
    const med = (s) => Object.fromEntries([...STAGES, 'total'].map((k) => [k, s[0][k] === undefined ? undefined : median(s.map((x) => x[k]))]));
    const mw = med(sw);
    const mr = ref ? med(sr) : null;
    const theirs = mr ? `${f(mr.total)} (${slowest(mr)} ${f(mr[slowest(mr)])})` : pid === WAVEFRONT ? 'no such partition' : 'not run (see below)';
    rows.push(
      `| ${name} | ${pname} | ${f(mw.total)} (${slowest(mw)} ${f(mw[slowest(mw)])}) | ${theirs} | ${mr ? (mw.total / mr.total).toFixed(2) : ''} | ${sw[0].polys_count} |`,
    );
  }
}

const md = `## Stacked and pillared levels: solo bakes (${today()})

Machine: ${machine()}. Generated levels (bench/stacked.mjs): towers of 60 x 60 m floors every 3 m, each with a
4 x 4 m stairwell; halls with 1 x 4 x 1 m pillars on a regular grid. Default config, solo bake, wasm against wasm
(as in the stage table above), medians of ${REPEAT} warm runs; in brackets the slowest stage and its time (ms).
The reference's layer partition is not run on the halls: its polygon stage took 93 s on the 200 m hall.

| level | partition | navbake wasm (ms) | reference wasm (ms) | ratio | polys |
|---|---|---|---|---|---|
${rows.join('\n')}
`;
writeSection('stacked', md);
console.log(md);
