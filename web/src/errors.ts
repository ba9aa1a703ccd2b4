/**
 * Errors. Every failure of the C library arrives as a {@link NavBakeError} whose `code` is the C status name
 * (`NB_ERR_INDEX_RANGE`, ...) and whose message is the C message, which names the function, the field and the
 * value. A few codes come from the TypeScript layer itself; they are listed in {@link NavBakeErrorCode}.
 */

/** Status names of the C library (navbake.h, `NB_STATUS_TABLE`), plus the TypeScript layer's own. */
export type NavBakeErrorCode =
  | 'NB_ERR_NULL_ARG'
  | 'NB_ERR_INVALID_ARG'
  | 'NB_ERR_INVALID_CONFIG'
  | 'NB_ERR_NONFINITE'
  | 'NB_ERR_INDEX_RANGE'
  | 'NB_ERR_EMPTY_MESH'
  | 'NB_ERR_OUT_OF_MEMORY'
  | 'NB_ERR_TOO_LARGE'
  | 'NB_ERR_BUFFER_TOO_SMALL'
  | 'NB_ERR_CANCELLED'
  | 'NB_ERR_CORRUPT'
  | 'NB_ERR_VERSION'
  | 'NB_ERR_NOT_FOUND'
  | 'NB_ERR_ALREADY_EXISTS'
  /** TypeScript layer: a NavMesh was used after `dispose()`. */
  | 'NB_ERR_DISPOSED'
  /** TypeScript layer: a bake worker died (crashed, ran out of memory, was killed) or could not start. */
  | 'NB_ERR_WORKER'
  /** TypeScript layer: the wasm module could not be loaded or compiled. */
  | 'NB_ERR_WASM_LOAD';

/**
 * What every navbake call throws or rejects with for a failure: bad input (NB_ERR_INVALID_ARG naming the argument,
 * NB_ERR_NONFINITE, ...), a failure of the C library (its status name and message), or one of the TypeScript
 * layer's own (NB_ERR_DISPOSED, NB_ERR_WORKER, NB_ERR_WASM_LOAD). Tell failures apart by {@link code}; the message
 * names the function, the field and the value. An aborted call rejects with the signal's reason instead (an
 * AbortError), and "no path" is a result, not an error.
 */
export class NavBakeError extends Error {
  /** The C status name, or one of the TypeScript layer's codes (see {@link NavBakeErrorCode}). */
  readonly code: NavBakeErrorCode;

  constructor(code: NavBakeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NavBakeError';
    this.code = code;
  }
}

/** The reason an aborted operation rejects with: the signal's own reason, or an `AbortError` DOMException. */
export function abortReason(signal: AbortSignal): unknown {
  // abort(null) rejects with null, as fetch does; only a signal without a reason (undefined) gets an AbortError
  return signal.reason !== undefined ? signal.reason : new DOMException('The bake was aborted', 'AbortError');
}

/** The callbacks waiting on each signal, behind the one listener navbake adds to it. */
const waiting = new WeakMap<AbortSignal, { fns: Set<() => void>; fire: () => void }>();

/**
 * Calls fn once when signal aborts; the function returned stops that (call it when the work ends). However many
 * calls share a signal, navbake adds one listener to it (Node warns past 10 listeners on one signal).
 */
export function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined;
  let entry = waiting.get(signal);
  if (!entry) {
    const fns = new Set<() => void>();
    const fire = () => {
      waiting.delete(signal);
      for (const f of [...fns]) f();
    };
    entry = { fns, fire };
    waiting.set(signal, entry);
    signal.addEventListener('abort', fire, { once: true });
  }
  const { fns, fire } = entry;
  const once = () => {
    fns.delete(once);
    fn();
  };
  fns.add(once);
  return () => {
    if (!fns.delete(once) || fns.size > 0 || waiting.get(signal) !== entry) return;
    waiting.delete(signal);
    signal.removeEventListener('abort', fire);
  };
}

/** What to throw for an error of work on this thread: the abort reason when the abort is what cancelled it. */
export function abortedAs(e: unknown, signal: AbortSignal | undefined): unknown {
  return signal?.aborted && (e as NavBakeError)?.code === 'NB_ERR_CANCELLED' ? abortReason(signal) : e;
}
