// The native tool's command line: JSON shape, OBJ reader edge cases, exit codes.
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { meshesDir, runNative } from './helpers';

const dir = mkdtempSync(join(tmpdir(), 'navbake-tool-'));
function obj(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('navbake voxels', () => {
  it('prints one JSON object with the stage counts and times', () => {
    const r = runNative(['voxels', resolve(meshesDir, 'dungeon.obj'), '--json']);
    expect(r.status).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.grid).toEqual([248, 330]);
    for (const k of ['hf_spans', 'compact_spans', 'walkable_after_erode']) expect(j[k]).toBeGreaterThan(0);
    for (const k of ['rasterize', 'filter', 'compact', 'erode', 'total']) expect(j.ms[k]).toBeGreaterThanOrEqual(0);
  });

  it('reads polygon faces (fanned), negative indices and comments', () => {
    // The same 3x3 quad three ways: as a polygon face, as two triangles with negative indices.
    const quad = obj('quad.obj', '# a quad\nv 0 0 0\nv 0 0 3\nv 3 0 3\nv 3 0 0\n\nf 1 2 3 4\n');
    const tris = obj('tris.obj', 'v 0 0 0\nv 0 0 3\nv 3 0 3\nv 3 0 0\nf -4/1/1 -3/2/2 -2/3/3\nf 1//1 3//1 4//1\n');
    const a = JSON.parse(runNative(['voxels', quad, '--agent-radius', '0', '--json']).stdout);
    const b = JSON.parse(runNative(['voxels', tris, '--agent-radius', '0', '--json']).stdout);
    expect(a.grid).toEqual([10, 10]);
    expect(a.hf_spans).toBe(100);
    expect(b.hf_spans).toBe(100);
    // The grid edge is a ledge, so the outer ring is not walkable even without erosion.
    expect(a.walkable_after_erode).toBe(64);
  });

  it('bad files and arguments exit with code 2 and say what is wrong', () => {
    const cases: [string[], RegExp][] = [
      [['voxels', join(dir, 'missing.obj')], /cannot open/],
      [['voxels', obj('bad1.obj', 'v 0 0 0\nv 1 0 0\nf 1 2 5\n')], /bad1\.obj:3: face index 5 is out of range/],
      [['voxels', obj('bad2.obj', 'v 0 zero 0\n')], /bad2\.obj:1: vertex needs three numbers/],
      [['voxels', obj('bad3.obj', '# nothing\n')], /no faces/],
      [['voxels', obj('bad4.obj', 'v 0 0 0\nv 1 0 0\nf 1 2\n')], /at least three vertices/],
      [['voxels', resolve(meshesDir, 'dungeon.obj'), '--cell-size', '-1'], /config\.cell_size must be > 0/],
      [['voxels', resolve(meshesDir, 'dungeon.obj'), '--cell-sise', '1'], /unknown option --cell-sise/],
      [['voxels', resolve(meshesDir, 'dungeon.obj'), '--agent-radius', 'wide'], /needs a number/],
      [['voxels'], /needs a mesh file/],
      [['frobnicate', 'x.obj'], /unknown command 'frobnicate'/],
    ];
    for (const [args, message] of cases) {
      const r = runNative(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
