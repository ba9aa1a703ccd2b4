// The wasm module's loader, in place of Emscripten's generated glue (about 20 KB, most of it for features this
// module does not use). The module is linked standalone (`emcc -o navbake.wasm`, see the Makefile) and needs three
// imports: the progress callback (nbw_js_progress, declared in c/src/wasm_api.c; its body is the one below), a
// notice after memory.grow, and the WASI clock behind the C side's stage timings. The object it resolves to has the shape of Emscripten's module
// object, which wasm.ts, the tests and the benchmarks use: HEAP* views (replaced when memory grows), UTF8ToString,
// and every export with a leading underscore (_malloc, _free, _nbw_*).

const utf8 = new TextDecoder();

/**
 * @param {{ wasmBinary?: ArrayBuffer | ArrayBufferView, wasmModule?: WebAssembly.Module }} opts
 *   the compiled module, or the file's bytes
 */
export default async function createNavBake(opts = {}) {
  const m = {};
  let memory;
  const views = () => {
    const b = memory.buffer;
    m.HEAP8 = new Int8Array(b);
    m.HEAPU8 = new Uint8Array(b);
    m.HEAP16 = new Int16Array(b);
    m.HEAPU16 = new Uint16Array(b);
    m.HEAP32 = new Int32Array(b);
    m.HEAPU32 = new Uint32Array(b);
    m.HEAPF32 = new Float32Array(b);
    m.HEAPF64 = new Float64Array(b);
  };
  const imports = {
    env: {
      // Module.onNavBakeProgress(stage, done, total) when set; truthy cancels. It must not throw (wasm frames
      // would be unwound without their cleanup): wasm.ts wraps it.
      nbw_js_progress: (stage, done, total) => {
        const f = m.onNavBakeProgress;
        return f && f(stage, done >>> 0, total >>> 0) ? 1 : 0;
      },
      emscripten_notify_memory_growth: () => views(),
    },
    wasi_snapshot_preview1: {
      // clock_time_get(id, precision, *time): nanoseconds, for nb_now_ms (stage timings) only.
      clock_time_get: (_id, _precision, out) => {
        const ns = BigInt(Math.round(performance.now() * 1e6));
        m.HEAPU32[out >> 2] = Number(ns & 0xffffffffn);
        m.HEAPU32[(out >> 2) + 1] = Number(ns >> 32n);
        return 0;
      },
    },
  };
  let source = opts.wasmModule;
  if (!source) {
    const b = opts.wasmBinary;
    if (!b) throw new Error('navbake.mjs: needs wasmModule or wasmBinary');
    source = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const result = await WebAssembly.instantiate(source, imports);
  const exports = (result.instance ?? result).exports;
  memory = exports.memory;
  views();
  for (const [name, value] of Object.entries(exports)) if (typeof value === 'function') m[`_${name}`] = value;
  m.UTF8ToString = (ptr) => {
    if (!ptr) return '';
    const h = m.HEAPU8;
    let end = ptr;
    while (h[end]) ++end;
    return utf8.decode(h.subarray(ptr, end));
  };
  exports._initialize(); // static constructors (a reactor module's start)
  return m;
}
