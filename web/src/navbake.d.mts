// The Emscripten factory (build/wasm/navbake.mjs, copied next to the compiled JavaScript). Its module object is
// typed in wasm.ts, the only file that touches it.
declare const createNavBake: (moduleArg?: Record<string, unknown>) => Promise<unknown>;
export default createNavBake;
