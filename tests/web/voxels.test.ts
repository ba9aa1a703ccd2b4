// The first half of the bake through wasm gives exactly the native tool's counts.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadMesh, loadWasm, meshesDir, rawBake, runNative, type Mesh, type RawModule } from './helpers';
import { resolve } from 'node:path';

const STAGE_ERODE = 4;
let m: RawModule;

const bake = (mesh: Mesh, config: Record<string, number> = {}, stop = STAGE_ERODE) => rawBake(m, mesh, config, stop);

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
