// The first half of the bake through wasm gives exactly the native tool's counts.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadMesh, loadWasm, meshesDir, runNative, type Mesh, type RawModule } from './helpers';
import { resolve } from 'node:path';

const STAGE_ERODE = 4;
let m: RawModule;

function statNames(): string[] {
  const n = m._nbw_stat_count();
  return Array.from({ length: n }, (_, i) => m.UTF8ToString(m._nbw_stat_name(i)));
}

/** Bakes through the raw exports; returns counts by name or the C error. */
function bake(mesh: Mesh, config: Record<string, number> = {}, stop = STAGE_ERODE) {
  const ctx = m._nbw_context_create();
  const nf = m._nbw_config_field_count();
  const pPos = m._malloc(mesh.positions.byteLength);
  const pIdx = m._malloc(mesh.indices.byteLength);
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
    statNames().forEach((name, i) => {
      if (!(name in stats)) stats[name] = m._nbw_result_stat(r, i);
    });
    m._nbw_result_free(ctx, r);
    return { stats };
  } finally {
    m._free(pPos);
    m._free(pIdx);
    m._free(pCfg);
    m._nbw_context_destroy(ctx);
  }
}

beforeAll(async () => {
  m = await loadWasm();
});

describe('voxel stages through wasm', () => {
  for (const level of ['dungeon.obj', 'nav_test.obj']) {
    it(`${level}: same counts as the native tool`, () => {
      const native = runNative(['voxels', resolve(meshesDir, level), '--json']);
      expect(native.status, native.stderr).toBe(0);
      const want = JSON.parse(native.stdout);
      const got = bake(loadMesh(level));
      expect(got.error).toBeUndefined();
      const s = got.stats!;
      expect([s.grid_width, s.grid_height]).toEqual(want.grid);
      expect(s.hf_spans).toBe(want.hf_spans);
      expect(s.compact_spans).toBe(want.compact_spans);
      expect(s.walkable_after_erode).toBe(want.walkable_after_erode);
    });
  }

  it('a changed config changes the counts the same way natively and in wasm', () => {
    const level = 'dungeon.obj';
    const native = runNative(['voxels', resolve(meshesDir, level), '--agent-radius', '1.2', '--cell-size', '0.4', '--json']);
    expect(native.status, native.stderr).toBe(0);
    const want = JSON.parse(native.stdout);
    const got = bake(loadMesh(level), { agent_radius: 1.2, cell_size: 0.4 });
    expect(got.stats!.walkable_after_erode).toBe(want.walkable_after_erode);
    expect(got.stats!.walkable_after_erode).toBeLessThan(17500);
  });

  it('bad input is a status with a message, and the instance keeps working', () => {
    const mesh = loadMesh('dungeon.obj');
    const broken = { positions: mesh.positions.slice(), indices: mesh.indices };
    broken.positions[7] = Number.NaN;
    expect(bake(broken)).toEqual({
      error: 'NB_ERR_NONFINITE',
      message: 'nb_bake: vertex 2 has a non-finite coordinate (y = nan)',
    });
    const bad = bake(mesh, { cell_size: -1 });
    expect(bad.error).toBe('NB_ERR_INVALID_CONFIG');
    expect(bad.message).toContain('config.cell_size');
    const outOfRange = { positions: mesh.positions, indices: mesh.indices.slice() };
    outOfRange.indices[5] = 1e6;
    expect(bake(outOfRange).error).toBe('NB_ERR_INDEX_RANGE');
    expect(bake({ positions: new Float32Array(0), indices: new Uint32Array(0) }).error).toBe('NB_ERR_EMPTY_MESH');
    expect(bake(mesh).stats!.walkable_after_erode).toBe(17500);
  });
});
