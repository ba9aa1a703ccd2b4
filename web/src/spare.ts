// Buffers that carried geometry to workers, kept for the next copy of geometry: the ArrayBuffers a worker hands
// back with its result, and the shared memory of a finished tiled bake. A bake copies the caller's arrays at the
// call; into fresh memory that copy cost the page faults of every page (0.7 ms of a 14 ms dungeon bake in a
// worker, 2.8 ms of 34 ms for a 218k-triangle terrain; 24 MB took 45 to 180 ms on the machine of bench/), into
// memory already touched a plain memcpy. They are held weakly: the garbage collector takes them when it wants.

const MAX_SPARES = 4;
const spares: WeakRef<ArrayBuffer>[] = [];
const sharedSpares: WeakRef<SharedArrayBuffer>[] = [];

type GeometryArray = Float32Array | Uint32Array | Uint8Array;
type Buffer = ArrayBuffer | SharedArrayBuffer;

function keep<B extends Buffer>(list: WeakRef<B>[], buffers: readonly B[]): void {
  for (const b of buffers) if (b.byteLength > 0) list.push(new WeakRef(b));
  if (list.length > MAX_SPARES) list.splice(0, list.length - MAX_SPARES);
}

/** The smallest kept buffer from need bytes to twice that (plus 64 KB), taken off the list; null when none is. */
function take<B extends Buffer>(list: WeakRef<B>[], need: number): B | null {
  let best = -1;
  let bestBytes = 2 * need + 65536 + 1;
  for (let i = list.length - 1; i >= 0; i--) {
    const n = list[i]!.deref()?.byteLength ?? 0;
    if (n === 0) {
      list.splice(i, 1); // collected, or transferred away since
      if (best > i) best--;
    } else if (n >= need && n < bestBytes) {
      best = i;
      bestBytes = n;
    }
  }
  return best < 0 ? null : list.splice(best, 1)[0]!.deref()!;
}

/**
 * a's own built-in array type. A subclass's methods may not copy: a Node Buffer is a Uint8Array whose slice() is a
 * view of the same memory (often Node's pool, shared with unrelated Buffers), and whose constructor is deprecated.
 * Copies are made with the built-in type.
 */
function plainType<T extends GeometryArray>(a: T): new (buffer: Buffer, offset: number, length: number) => T {
  return (a instanceof Float32Array ? Float32Array : a instanceof Uint32Array ? Uint32Array : Uint8Array) as never;
}

/** a's elements in the first part of buffer b. */
function into<T extends GeometryArray>(a: T, b: Buffer): T {
  const out = new (plainType(a))(b, 0, a.length);
  out.set(a as never);
  return out;
}

/** A copy of `a` in memory of its own, of a's built-in array type (never a view: see plainType). */
export function plainCopy<T extends GeometryArray>(a: T): T {
  return into(a, new ArrayBuffer(a.byteLength));
}

/** Keeps a worker's returned buffers (anything else, and detached or empty ones, are skipped). */
export function keepSpares(buffers: readonly unknown[] | undefined): void {
  if (buffers) keep(spares, buffers.filter((b): b is ArrayBuffer => b instanceof ArrayBuffer));
}

/** Keeps the shared memory of a tiled bake that no worker reads any more. */
export function keepSharedSpares(buffers: readonly SharedArrayBuffer[]): void {
  keep(sharedSpares, buffers);
}

/**
 * A copy of `a` with a buffer of its own (the copy may be only the start of it): a kept buffer when one fits,
 * else a new one. Throws what allocation throws.
 */
export function copyOf<T extends GeometryArray>(a: T): T {
  const b = take(spares, a.byteLength);
  return into(a, b ?? new ArrayBuffer(a.byteLength));
}

/** A kept buffer for about `bytes` bytes of output (from that to twice it plus 64 KB), or null. */
export function spareFor(bytes: number): ArrayBuffer | null {
  return take(spares, bytes);
}

/** A copy of `a` in shared memory (SharedArrayBuffer), in a kept one when one fits. */
export function sharedCopyOf<T extends GeometryArray>(a: T): T {
  return into(a, take(sharedSpares, a.byteLength) ?? new SharedArrayBuffer(a.byteLength));
}

/** @internal the spare buffers still alive (tests) */
export function spareBuffers(): { plain: ArrayBuffer[]; shared: SharedArrayBuffer[] } {
  const alive = <B extends Buffer>(list: WeakRef<B>[]) => list.map((r) => r.deref()).filter((b): b is B => !!b && b.byteLength > 0);
  return { plain: alive(spares), shared: alive(sharedSpares) };
}

/** The distinct ArrayBuffers behind a request's arrays, to send back with its result (workers). */
export function inputBuffers(...arrays: (ArrayBufferView | null | undefined)[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const a of arrays) if (a && a.buffer instanceof ArrayBuffer && a.buffer.byteLength > 0) out.add(a.buffer);
  return [...out];
}
