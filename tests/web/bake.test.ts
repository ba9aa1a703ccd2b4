// The whole bake through wasm: the same counts as the native tool for every partition.
import { beforeAll, describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { loadMesh, loadWasm, meshesDir, rawBake, runNative, type RawModule } from './helpers';

let m: RawModule;
beforeAll(async () => {
  m = await loadWasm();
});

const COUNTS = ['regions', 'contours', 'polys', 'poly_verts', 'detail_verts', 'detail_tris'];
const PARTITIONS: Record<string, number> = { watershed: 1, monotone: 2, layers: 3 };

describe('full bake through wasm', () => {
  for (const partition of Object.keys(PARTITIONS)) {
    it(`dungeon.obj, ${partition}: same counts as the native tool`, () => {
      const native = runNative(['bake', resolve(meshesDir, 'dungeon.obj'), '--partition', partition, '--json']);
      expect(native.status, native.stderr).toBe(0);
      const want = JSON.parse(native.stdout);
      const got = rawBake(m, loadMesh('dungeon.obj'), { partition: PARTITIONS[partition] });
      expect(got.error).toBeUndefined();
      for (const k of COUNTS) expect([k, got.stats![k]]).toEqual([k, want[k]]);
      expect(got.stats!.polys).toBeGreaterThan(50);
    });
  }
});
