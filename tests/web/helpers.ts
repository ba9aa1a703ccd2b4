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

export interface RawBakeOutcome {
  stats?: Record<string, number>;
  error?: string;
  message?: string;
}

/** Bakes through the raw wasm exports (stop = nb_stage, 0 = all); returns the counts by name or the C error. */
export function rawBake(m: RawModule, mesh: Mesh, config: Record<string, number> = {}, stop = 0): RawBakeOutcome {
  const ctx = m._nbw_context_create();
  const nf = m._nbw_config_field_count();
  const pPos = m._malloc(Math.max(4, mesh.positions.byteLength));
  const pIdx = m._malloc(Math.max(4, mesh.indices.byteLength));
  const pCfg = m._malloc(nf * 8);
  try {
    m.HEAPF32.set(mesh.positions, pPos >> 2);
    m.HEAPU32.set(mesh.indices, pIdx >> 2);
    const cfg = new Float64Array(nf);
    for (let i = 0; i < nf; i++) {
      const name = m.UTF8ToString(m._nbw_config_field_name(i));
      if (name in config) cfg[i] = config[name];
    }
    m.HEAPF64.set(cfg, pCfg >> 3);
    const r = m._nbw_bake(ctx, pPos, mesh.positions.length / 3, pIdx, mesh.indices.length / 3, 0, pCfg, stop, 0);
    if (!r) {
      return {
        error: m.UTF8ToString(m._nbw_status_name(m._nbw_status(ctx))),
        message: m.UTF8ToString(m._nbw_message(ctx)),
      };
    }
    const stats: Record<string, number> = {};
    const n = m._nbw_stat_count();
    for (let i = 0; i < n; i++) {
      const name = m.UTF8ToString(m._nbw_stat_name(i));
      if (!(name in stats)) stats[name] = m._nbw_result_stat(r, i); // counts come first ("regions")
    }
    m._nbw_result_free(ctx, r);
    return { stats };
  } finally {
    m._free(pPos);
    m._free(pIdx);
    m._free(pCfg);
    m._nbw_context_destroy(ctx);
  }
}
