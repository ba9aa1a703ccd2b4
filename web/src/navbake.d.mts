// The wasm module's loader (web/src/navbake.mjs, copied next to the compiled JavaScript). Its module object is
// typed in wasm.ts, the only file that touches it.
declare const createNavBake: (opts: {
  wasmModule?: WebAssembly.Module;
  wasmBinary?: ArrayBuffer | ArrayBufferView;
}) => Promise<unknown>;
export default createNavBake;
