// The main thread's wasm: compiled and instantiated once, on the first call that needs it.
import { compileWasm, instantiate, type InitOptions, type Wasm, type WasmModule } from './wasm.js';
import { detectNodeThreads } from './env.js';
import { func, invalid, optionsObject, shown } from './args.js';
import { setWorkerUrl } from './pool.js';

let compiled: Promise<WasmModule> | null = null;
let main: Promise<Wasm> | null = null;
let loaded: Wasm | null = null;

/**
 * Loads the wasm module once (later calls wait for that same load, whatever their wasm options; a later workerUrl
 * is still taken, for the workers started from then on). Every other call awaits it implicitly, so calling it
 * yourself is only needed to pass options or to load early.
 * Browser: fetches `navbake.wasm` next to this module; Node: reads it from disk. Rejects with a NavBakeError
 * (code NB_ERR_WASM_LOAD) when the file cannot be loaded; a later call then tries again.
 */
export async function init(opts?: InitOptions | null): Promise<void> {
  const o = optionsObject<InitOptions>('navbake.init: options', opts, ['wasmBinary', 'wasmModule', 'locateFile', 'workerUrl']);
  if (o.wasmBinary != null && !(o.wasmBinary instanceof ArrayBuffer || ArrayBuffer.isView(o.wasmBinary))) {
    throw invalid(`navbake.init: options.wasmBinary must be an ArrayBuffer or a typed array (got ${shown(o.wasmBinary)})`);
  }
  func('navbake.init: options.locateFile', o.locateFile);
  if (o.workerUrl != null) {
    if (!(typeof o.workerUrl === 'string' || o.workerUrl instanceof URL) || o.workerUrl === '') {
      throw invalid(`navbake.init: options.workerUrl must be a URL or a non-empty string (got ${shown(o.workerUrl)})`);
    }
    setWorkerUrl(o.workerUrl);
  }
  await mainWasm(o); // o: {} for null
}

/** @internal the compiled module (workers instantiate it again, each with its own memory) */
export function wasmModule(opts?: InitOptions): Promise<WasmModule> {
  if (!compiled) {
    compiled = Promise.all([compileWasm(opts), detectNodeThreads()]).then(([m]) => m);
    compiled.catch(() => {
      compiled = null;
    });
  }
  return compiled;
}

/** @internal */
export function mainWasm(opts?: InitOptions): Promise<Wasm> {
  if (!main) {
    main = wasmModule(opts).then(instantiate);
    main.then(
      (w) => {
        loaded = w;
      },
      () => {
        main = null;
      },
    );
  }
  return main;
}

/** @internal the main thread's wasm once it has loaded, else null: what mainWasm() will resolve to from then on
 * (a loaded module is never replaced), known without an await */
export function loadedMainWasm(): Wasm | null {
  return loaded;
}
