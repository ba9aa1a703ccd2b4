/**
 * Argument checks of the public API. Plain JavaScript callers (and `any`) can pass anything; each check either
 * returns the value in the form the wasm layer takes or throws a NavBakeError naming the argument and what is
 * wrong with it (`where` is the name used in the message, e.g. "navbake: NavMesh.findPath: start"). Without
 * them, a wrong type surfaced as a TypeError from deep inside, or was silently converted: NaN to 0 in an index
 * array, 65536 to 0 in a flags field.
 */
import { NavBakeError } from './errors.js';

/** Most workers one call may use: beyond this, worker start-up and memory (a wasm instance each) only cost. */
export const MAX_WORKERS = 64;

export function invalid(message: string): NavBakeError {
  return new NavBakeError('NB_ERR_INVALID_ARG', message);
}

/** A value as messages show it: the number itself, or its kind. */
export function shown(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v === 'bigint') return `${v}n (a bigint)`;
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'an object';
  return typeof v;
}

export function num(where: string, v: unknown): number {
  if (typeof v !== 'number') throw invalid(`${where} must be a number (got ${shown(v)})`);
  if (!Number.isFinite(v)) throw new NavBakeError('NB_ERR_NONFINITE', `${where} must be finite (got ${v})`);
  return v;
}

/** A finite number that stays finite in float32 (the C side's type). */
export function f32(where: string, v: unknown): number {
  const x = Math.fround(num(where, v));
  if (!Number.isFinite(x)) throw new NavBakeError('NB_ERR_NONFINITE', `${where} overflows float32 (got ${v})`);
  return x;
}

/** A point: [x, y, z] (any array-like of 3 or more numbers) or { x, y, z }, each finite in float32. */
export function vec3(where: string, v: unknown): [number, number, number] {
  if (v === null || typeof v !== 'object') throw invalid(`${where} must be a point [x, y, z] or { x, y, z } (got ${shown(v)})`);
  const a = v as ArrayLike<unknown> & { x?: unknown; y?: unknown; z?: unknown };
  if (typeof a.length === 'number') {
    if (a.length !== 3) throw invalid(`${where} must have 3 coordinates (got ${a.length})`);
    return [f32(`${where}[0]`, a[0]), f32(`${where}[1]`, a[1]), f32(`${where}[2]`, a[2])];
  }
  return [f32(`${where}.x`, a.x), f32(`${where}.y`, a.y), f32(`${where}.z`, a.z)];
}

/** NB_MAX_COORD: the largest coordinate a navmesh holds (float32 1e9; bakes and queries refuse more). */
export const MAX_COORD = 1e9;

/** A query's point: vec3, each coordinate within MAX_COORD (NB_ERR_TOO_LARGE), as the C queries ask. */
export function queryPoint(where: string, v: unknown): [number, number, number] {
  const p = vec3(where, v);
  for (let i = 0; i < 3; i++) {
    if (Math.abs(p[i]!) > MAX_COORD) {
      throw new NavBakeError('NB_ERR_TOO_LARGE', `${where} has ${'xyz'[i]} = ${p[i]}, beyond 1e+09, the largest coordinate a navmesh holds`);
    }
  }
  return p;
}

export function intIn(where: string, v: unknown, lo: number, hi: number): number {
  if (typeof v !== 'number') throw invalid(`${where} must be an integer ${lo}..${hi} (got ${shown(v)})`);
  if (!Number.isInteger(v) || v < lo || v > hi) throw invalid(`${where} must be an integer ${lo}..${hi} (got ${v})`);
  return v;
}

/**
 * An options object: undefined and null mean none given. With `keys`, a key not among them is refused by name: a
 * misspelt option (`worker: false`, `halfExtent`) would otherwise be ignored without a word.
 */
export function optionsObject<T extends object>(where: string, v: unknown, keys?: readonly string[]): T {
  if (v == null) return {} as T;
  if (typeof v !== 'object') throw invalid(`${where} must be an object (got ${shown(v)})`);
  if (keys) knownKeys(where, v, keys, 'option');
  return v as T;
}

/** Refuses an own enumerable key of o not in keys, naming it and the keys there are (what: 'option', 'field'). */
export function knownKeys(where: string, o: object, keys: readonly string[], what = 'option'): void {
  for (const k of Object.keys(o)) {
    if (!keys.includes(k)) throw invalid(`${where} has no ${what} '${k}' (its ${what}s: ${keys.join(', ')})`);
  }
}

export function func<F>(where: string, v: unknown): F | undefined {
  if (v == null) return undefined;
  if (typeof v !== 'function') throw invalid(`${where} must be a function (got ${shown(v)})`);
  return v as F;
}

/** An optional boolean option or field. */
export function bool(where: string, v: unknown): boolean | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw invalid(`${where} must be a boolean (got ${shown(v)})`);
  return v;
}

/** An AbortSignal (or anything shaped like one: aborted, reason, addEventListener, removeEventListener). */
export function abortSignal(where: string, v: unknown): AbortSignal | undefined {
  if (v == null) return undefined;
  const s = v as Partial<AbortSignal>;
  if (typeof v !== 'object' || typeof s.addEventListener !== 'function' || typeof s.removeEventListener !== 'function' || !('aborted' in s)) {
    throw invalid(`${where} must be an AbortSignal (got ${shown(v)})`);
  }
  return v as AbortSignal;
}

/** options.workers: false, or how many workers (1..MAX_WORKERS); undefined when not given. */
export function workerCount(where: string, v: unknown): number | false | undefined {
  if (v === undefined || v === false) return v;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_WORKERS) {
    throw invalid(`${where} must be false or an integer 1..${MAX_WORKERS} (got ${shown(v)})`);
  }
  return v;
}

/** Whether a buffer was detached (transferred to a worker or elsewhere): its contents are gone. */
export function isDetached(b: ArrayBufferLike): boolean {
  if (b.byteLength !== 0 || !(b instanceof ArrayBuffer)) return false;
  const d = (b as { detached?: unknown }).detached; // ES2024; older engines: constructing a view over it throws
  if (typeof d === 'boolean') return d;
  try {
    new Uint8Array(b);
    return false;
  } catch {
    return true;
  }
}

/**
 * Whether a view lies outside its buffer: a fixed-length view of a resizable ArrayBuffer resized smaller since. It
 * then reads as empty (byteLength 0), and copying it throws.
 */
function outOfBounds(v: ArrayBufferView): boolean {
  try {
    if (v instanceof DataView) return v.byteLength < 0; // (its byteLength getter throws when out of bounds)
    if (v.byteLength !== 0) return false;
    (Uint8Array.prototype.slice as (this: ArrayBufferView, a: number, b: number) => unknown).call(v, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/** A typed array whose buffer was transferred away, or which lies outside its buffer: refused by name (it reads
 * as empty, or cannot be sent). */
export function notDetached<T extends ArrayBufferView>(where: string, v: T): T {
  if (isDetached(v.buffer)) {
    throw invalid(`${where} is detached: its buffer was transferred (to a worker, e.g. by an earlier bake with transfer: true)`);
  }
  if (outOfBounds(v)) throw invalid(`${where} lies outside its buffer: the buffer was resized smaller than the view`);
  return v;
}

/** Bytes: a Uint8Array (a Node Buffer is one), any other typed array or DataView (its bytes), an ArrayBuffer. */
export function bytes(where: string, v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return notDetached(where, v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(notDetached(where, v).buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer && isDetached(v)) throw invalid(`${where} is detached: it was transferred`);
  if (v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && v instanceof SharedArrayBuffer)) {
    return new Uint8Array(v);
  }
  throw invalid(`${where} must be a Uint8Array or an ArrayBuffer (got ${shown(v)})`);
}

type NumericArray = Float32Array | Uint32Array | Uint16Array | Uint8Array;

/**
 * The length of an array-like, which must be a whole number 0..2^32-1: a hand-made { length: -1 } or Infinity
 * made typed-array constructors throw a bare RangeError.
 */
export function lengthOf(where: string, v: ArrayLike<unknown>): number {
  const n = v.length;
  if (!(Number.isInteger(n) && n >= 0 && n <= 0xffffffff)) throw invalid(`${where}.length must be a whole number 0..4294967295 (got ${shown(n)})`);
  return n;
}

/** make(n), with a failed allocation said as NB_ERR_OUT_OF_MEMORY naming where (not a bare RangeError). */
export function allocate<T>(where: string, n: number, make: (n: number) => T): T {
  try {
    return make(n);
  } catch (e) {
    throw new NavBakeError('NB_ERR_OUT_OF_MEMORY', `${where}: no memory for a copy of ${n} elements (${(e as Error)?.message ?? e})`);
  }
}

/**
 * A numeric array of the given type. `make` builds it from any other array-like after checking each element:
 * `ok` says whether a number is acceptable (else the message says `expect`). Typed arrays of another number type
 * go through the same check; bigint arrays and non-array values are refused.
 */
export function numericArray<T extends NumericArray>(
  where: string,
  v: unknown,
  make: (n: number) => T,
  ok: (x: number) => boolean,
  expect: string,
): T {
  if (v === null || typeof v !== 'object' || v instanceof DataView || typeof (v as ArrayLike<unknown>).length !== 'number') {
    throw invalid(`${where} must be a typed array or an array of numbers (got ${shown(v)})`);
  }
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) throw invalid(`${where} must hold numbers, not bigints`);
  if (ArrayBuffer.isView(v)) notDetached(where, v);
  const a = v as ArrayLike<unknown>;
  const n = lengthOf(where, a);
  const out = allocate(where, n, make);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    if (typeof x !== 'number' || !ok(x)) throw invalid(`${where}[${i}] must be ${expect} (got ${shown(x)})`);
    out[i] = x;
  }
  return out;
}
