// Buffers that carried geometry to a worker and came back with its result, kept for the next copy of geometry.
// A bake copies the caller's arrays at the call; into fresh memory that copy cost the page faults of every page
// (0.7 ms of a 14 ms dungeon bake in a worker, 2.8 ms of 34 ms for a 218k-triangle terrain), into memory
// already touched a plain memcpy. They are held weakly: the garbage collector takes them whenever it wants.

const MAX_SPARES = 4;
const spares: WeakRef<ArrayBuffer>[] = [];

/** Keeps a worker's returned buffers (detached or empty ones are skipped); the oldest go beyond MAX_SPARES. */
export function keepSpares(buffers: readonly unknown[] | undefined): void {
  if (!buffers) return;
  for (const b of buffers) {
    if (b instanceof ArrayBuffer && b.byteLength > 0) spares.push(new WeakRef(b));
  }
  if (spares.length > MAX_SPARES) spares.splice(0, spares.length - MAX_SPARES);
}

type GeometryArray = Float32Array | Uint32Array | Uint8Array;

/**
 * A copy of `a` with a buffer of its own (whole or not: the copy is the first elements of it): a spare buffer
 * from a's size to twice it (plus 64 KB) when one is kept, else a new one. Throws what allocation throws.
 */
export function copyOf<T extends GeometryArray>(a: T): T {
  const need = a.byteLength;
  for (let i = spares.length - 1; i >= 0; i--) {
    const b = spares[i]!.deref();
    if (!b || b.byteLength === 0) {
      spares.splice(i, 1); // collected, or transferred away since
      continue;
    }
    if (b.byteLength >= need && b.byteLength <= 2 * need + 65536) {
      spares.splice(i, 1);
      const out = new (a.constructor as new (buffer: ArrayBuffer, offset: number, length: number) => T)(b, 0, a.length);
      out.set(a);
      return out;
    }
  }
  return a.slice() as T;
}

/** @internal the spare buffers still alive (tests) */
export function spareBuffers(): ArrayBuffer[] {
  return spares.map((r) => r.deref()).filter((b): b is ArrayBuffer => !!b && b.byteLength > 0);
}

/** The distinct ArrayBuffers behind a request's arrays, to send back with its result (workers). */
export function inputBuffers(...arrays: (ArrayBufferView | null | undefined)[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const a of arrays) if (a && a.buffer instanceof ArrayBuffer && a.buffer.byteLength > 0) out.add(a.buffer);
  return [...out];
}
