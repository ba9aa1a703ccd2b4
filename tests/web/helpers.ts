// Test helpers: load the built wasm module in Node, parse OBJ files, run the native tool.
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const meshesDir = process.env.NB_MESHES ?? resolve(root, '../shared/meshes');

// The raw Emscripten module (the typed wrapper arrives with the npm package).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RawModule = any;

export async function loadWasm(): Promise<RawModule> {
  const factoryUrl = new URL('../../build/wasm/navbake.mjs', import.meta.url);
  const { default: createNavBake } = await import(factoryUrl.href);
  const wasmBinary = readFileSync(resolve(root, 'build/wasm/navbake.wasm'));
  return createNavBake({ wasmBinary });
}

export interface Mesh {
  positions: Float32Array;
  indices: Uint32Array;
}

/** Reads v and f lines (polygons fanned, negative indices relative) -- enough for the standard levels. */
export function parseObj(text: string): Mesh {
  const pos: number[] = [];
  const idx: number[] = [];
  for (const line of text.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts[0] === 'v') {
      pos.push(Number(parts[1]), Number(parts[2]), Number(parts[3]));
    } else if (parts[0] === 'f') {
      const nv = pos.length / 3;
      const face = parts.slice(1).map((p) => {
        const i = parseInt(p.split('/')[0], 10);
        return i > 0 ? i - 1 : nv + i;
      });
      for (let k = 2; k < face.length; k++) idx.push(face[0], face[k - 1], face[k]);
    }
  }
  return { positions: new Float32Array(pos), indices: new Uint32Array(idx) };
}

export function loadMesh(name: string): Mesh {
  return parseObj(readFileSync(resolve(meshesDir, name), 'utf8'));
}

export function runNative(args: string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(resolve(root, 'build/navbake'), args, { encoding: 'utf8' });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
