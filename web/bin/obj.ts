// Wavefront OBJ reader: what a navmesh needs from a level (v and f lines), with the native tool's messages
// (c/tools/obj.c) so both tools reject a broken file the same way.
import { InputError } from './errors.js';

export interface Triangles {
  /** xyz per vertex */
  positions: Float32Array;
  /** three vertex indices per triangle */
  indices: Uint32Array;
}

/** Growable typed array: a big level has millions of numbers, which plain arrays hold as doubles. */
class Grow<T extends Float32Array | Uint32Array> {
  data: T;
  length = 0;
  constructor(private readonly make: (n: number) => T) {
    this.data = make(3 * 1024);
  }
  push3(a: number, b: number, c: number): void {
    if (this.length + 3 > this.data.length) {
      const bigger = this.make(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = a;
    this.data[this.length++] = b;
    this.data[this.length++] = c;
  }
  done(): T {
    return this.data.slice(0, this.length) as T;
  }
}

const INTEGER = /^[+-]?\d+/;

/**
 * Parses OBJ text: `v x y z` (anything after z is ignored: w, vertex colours), `f a b c ...` with polygons fanned
 * into triangles, 1-based or negative (relative to the vertices so far) indices, `a/t/n` forms, and # comments
 * (whole lines or after a statement). Numbers and indices must be whole: `3x`, or `2.5` as an index, is an error.
 * Every other statement (vt, vn, o, g, usemtl, ...) is skipped. `name` prefixes the messages (file:line: ...).
 */
export function parseObj(text: string, name: string): Triangles {
  const pos = new Grow((n) => new Float32Array(n));
  const tri = new Grow((n) => new Uint32Array(n));
  const fail = (line: number, what: string) => new InputError(line > 0 ? `${name}:${line}: ${what}` : `${name}: ${what}`);
  let lineNo = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    lineNo++;
    let line = text.slice(start, end);
    start = end + 1;
    const hash = line.indexOf('#');
    if (hash >= 0) line = line.slice(0, hash);
    const parts = line.trim().split(/\s+/);
    const kind = parts[0];
    if (kind === 'v') {
      if (parts.length < 4) throw fail(lineNo, 'vertex needs three numbers');
      const v = [0, 0, 0];
      for (let k = 0; k < 3; k++) {
        const s = parts[k + 1];
        const x = Number(s);
        if (Number.isNaN(x) && !/^[+-]?(nan|inf|infinity)$/i.test(s)) throw fail(lineNo, 'vertex needs three numbers');
        // beyond float32 (1e39) is infinite in the positions: the native reader's strtof says the same
        if (!Number.isFinite(Math.fround(x))) throw fail(lineNo, 'vertex coordinate is not finite');
        v[k] = x;
      }
      pos.push3(v[0], v[1], v[2]);
    } else if (kind === 'f') {
      const nv = pos.length / 3;
      let first = 0;
      let prev = 0;
      let n = 0;
      for (let k = 1; k < parts.length; k++) {
        const m = INTEGER.exec(parts[k]);
        if (!m || (parts[k].length > m[0].length && parts[k][m[0].length] !== '/')) {
          throw fail(lineNo, 'face index is not a number');
        }
        const idx = parseInt(m[0], 10);
        const resolved = idx > 0 ? idx - 1 : nv + idx; // negative: relative to the end
        if (idx === 0 || resolved < 0 || resolved >= nv) {
          throw fail(lineNo, `face index ${idx} is out of range (${nv} vertices so far)`);
        }
        if (n === 0) first = resolved;
        else if (n >= 2) tri.push3(first, prev, resolved);
        prev = resolved;
        n++;
      }
      if (n < 3) throw fail(lineNo, 'face needs at least three vertices');
    }
  }
  if (tri.length === 0) throw fail(0, 'no faces');
  return { positions: pos.done(), indices: tri.done() };
}

/** Bytes of a file that should be OBJ text. */
export function parseObjBytes(bytes: Uint8Array, name: string): Triangles {
  if (bytes.includes(0)) throw new InputError(`${name}: not a text file (contains NUL bytes)`);
  return parseObj(new TextDecoder().decode(bytes), name);
}
