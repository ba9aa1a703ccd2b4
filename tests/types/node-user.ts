// A Node-only user (tsconfig.node.json: lib ES2022 and @types/node, no DOM; skipLibCheck false). The package's
// declarations must not need the DOM lib's names (WebAssembly, Transferable), and no option may turn into `any`.
import { readFileSync, writeFileSync } from 'node:fs';
import { bake, init, NavMesh, type InitOptions } from 'navbake';

type IsAny<T> = 0 extends 1 & T ? true : false;
export const wasmModuleIsNotAny: IsAny<InitOptions['wasmModule']> = false;

export async function main(signal?: AbortSignal): Promise<void> {
  await init({ wasmBinary: readFileSync(new URL('./navbake.wasm', import.meta.url)) });
  // @ts-expect-error a number is not a compiled module
  await init({ wasmModule: 42 });
  const nav = await bake({ positions: [0, 0, 0, 0, 0, 1, 1, 0, 1] }, null, { signal, workers: 2 });
  writeFileSync('level.navbake', nav.save());
  const loaded = await NavMesh.load(readFileSync('level.navbake'));
  loaded.findPath([0, 0, 0], [1, 0, 1], { crossings: undefined });
}
