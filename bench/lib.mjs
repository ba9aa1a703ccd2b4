// Shared helpers of the benchmarks: medians, machine description, OBJ loading, RESULTS.md sections.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const meshesDir = process.env.NB_MESHES ?? resolve(root, '../shared/meshes');

export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v.length ? v[v.length >> 1] : NaN;
}

export function machine() {
  const c = cpus();
  return `${c.length} x ${c[0]?.model ?? 'unknown CPU'}, Node ${process.version}`;
}

export function today() {
  return new Date().toISOString().slice(0, 10);
}

export function parseObj(text) {
  const pos = [];
  const idx = [];
  for (const line of text.split('\n')) {
    const p = line.trim().split(/\s+/);
    if (p[0] === 'v') pos.push(+p[1], +p[2], +p[3]);
    else if (p[0] === 'f') {
      const nv = pos.length / 3;
      const f = p.slice(1).map((s) => {
        const i = parseInt(s.split('/')[0], 10);
        return i > 0 ? i - 1 : nv + i;
      });
      for (let k = 2; k < f.length; k++) idx.push(f[0], f[k - 1], f[k]);
    }
  }
  return { positions: new Float32Array(pos), indices: new Uint32Array(idx) };
}

export function loadMesh(path) {
  return parseObj(readFileSync(path, 'utf8'));
}

/** Replaces (or appends) the section between <!-- NAME:begin --> and <!-- NAME:end --> in RESULTS.md. */
export function writeSection(name, markdown) {
  const file = resolve(root, 'bench/RESULTS.md');
  let text = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Benchmark results\n\nWritten by `make bench`; each section by its own script. Times in ms unless noted.\n';
  const begin = `<!-- ${name}:begin -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${begin}\n${markdown.trim()}\n${end}`;
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  text = a >= 0 && b > a ? text.slice(0, a) + block + text.slice(b + end.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
}
