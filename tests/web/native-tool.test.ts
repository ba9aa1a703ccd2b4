// The native tool's command line: JSON shape, OBJ reader edge cases, exit codes, number and file checks.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
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

describe('navbake (native) numbers, files and output', () => {
  const dungeon = resolve(meshesDir, 'dungeon.obj');

  it('a typed 0 means zero: --tile-size 0 is one tile; where 0 is not valid the message says 0, not -1', () => {
    const one = runNative(['bake', dungeon, '--tile-size', '0', '--save', join(dir, 'one.navbake'), '--json']);
    expect(one.status, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).tiles).toBe(1);
    expect(runNative(['voxels', dungeon, '--tile-size', '0', '--json']).status).toBe(0);
    for (const flag of ['--cell-size', '--cell-height', '--agent-height', '--verts-per-poly']) {
      const r = runNative(['voxels', dungeon, flag, '0']);
      expect(r.status, flag).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`${flag}: config\\.${flag.slice(2).replace(/-/g, '_')} must not be 0`));
      expect(r.stderr).not.toMatch(/got -1/);
    }
    // -1 is a number here, not the library's "explicit zero" marker
    const neg = runNative(['voxels', dungeon, '--agent-radius', '-1']);
    expect(neg.status).toBe(2);
    expect(neg.stderr).toMatch(/--agent-radius: config\.agent_radius must be >= 0 \(got -1\)/);
  });

  it('numbers must be whole, finite and in range: exit 2 naming the flag and the value', () => {
    const cases: [string[], RegExp][] = [
      [['query', dungeon, '--pairs', '5', '--seed', 'abc'], /--seed must be an integer 0\.\.2\^64-1 \(got 'abc'\)/],
      [['query', dungeon, '--pairs', '5', '--seed', '-1'], /--seed must be an integer .*\(got '-1'\)/],
      [['query', dungeon, '--pairs', '5', '--seed', '1.5'], /--seed must be an integer .*\(got '1\.5'\)/],
      [['query', dungeon, '--pairs', '5', '--seed', '18446744073709551616'], /--seed must be an integer/],
      [['query', dungeon, '--pairs', '5x'], /--pairs must be 1\.\.10000000 \(got '5x'\)/],
      [['query', dungeon, '--pairs', '1e2'], /--pairs must be 1\.\.10000000 \(got '1e2'\)/],
      [['query', dungeon, '--pairs'], /--pairs needs a value/],
      [['voxels', dungeon, '--tile-size', '16.5'], /--tile-size: config\.tile_size must be an integer \(got 16\.5\)/],
      [['voxels', dungeon, '--verts-per-poly', '6.9'], /--verts-per-poly: config\.verts_per_poly must be an integer \(got 6\.9\)/],
      [['voxels', dungeon, '--agent-radius', 'inf'], /--agent-radius needs a number \(got 'inf'\)/],
      [['voxels', dungeon, '--agent-radius', '0.5x'], /--agent-radius needs a number \(got '0\.5x'\)/],
      [['voxels', dungeon, '--agent-height', '1e39'], /--agent-height: 1e39 is beyond float32's range/],
      [['voxels', dungeon, '--repeat', '2x'], /--repeat must be 1\.\.100000 \(got '2x'\)/],
      [['voxels', dungeon, '--tile-size', '3'], /--tile-size: .*config\.tile_size must be 0 \(one tile\) or between 16 and 4096 cells \(got 3\)/],
      [['path', dungeon, '--from', '1e40,0,0', '--to', '1,2,3'], /--from: x = 1e40 is beyond float32's range/],
      [['terrain', '--cells', '5x', '-o', join(dir, 't.obj')], /--cells must be 1\.\.20000 \(got '5x'\)/],
      [['world', '--triangles', '1e6', '-o', join(dir, 'w.obj')], /--triangles must be 1\.\.64000000 \(got '1e6'\)/],
    ];
    for (const [args, message] of cases) {
      const r = runNative(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stdout, args.join(' ')).toBe('');
    }
  });

  it('a directory is not a file: "is a directory", exit 2 (not "out of memory")', () => {
    const d = join(dir, 'dir.obj');
    mkdirSync(d, { recursive: true });
    const nd = join(dir, 'dir.navbake');
    mkdirSync(nd, { recursive: true });
    const cases: [string[], RegExp][] = [
      [['bake', d], /dir\.obj: cannot open: is a directory/],
      [['path', nd, '--from', '0,0,0', '--to', '1,1,1'], /dir\.navbake: cannot read: is a directory/],
      [['query', dungeon, '--pairs-file', d], /dir\.obj: cannot read pairs: is a directory/],
      [['bake', dungeon, '--tile-size', '64', '--save', nd], /dir\.navbake: cannot write: is a directory/],
    ];
    for (const [args, message] of cases) {
      const r = runNative(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr).not.toMatch(/out of memory/);
    }
  });

  it('--help shows what is optional and lists every option; flags a command does not use are refused', () => {
    const help = runNative(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/navbake query \S+ \(--pairs N \[--seed S\] \| --pairs-file F\) \[config flags\] \[--json\]\n/);
    for (const f of ['-o', '--save', '--from', '--to', '--pairs', '--seed', '--pairs-file', '--repeat', '--json']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${f} `, 'm'));
    }
    const cases: [string[], RegExp][] = [
      [['path', dungeon, '--pairs', '5', '--from', '0,0,0', '--to', '1,1,1'], /--pairs is not an option of 'path'/],
      [['voxels', dungeon, '-o', join(dir, 'p.obj')], /-o is not an option of 'voxels'/],
      [['query', dungeon, '--from', '0,0,0', '--pairs', '5'], /--from is not an option of 'query'/],
      [['bake', dungeon, '--tile-size', '64', '-o', join(dir, 'p.obj')], /bake -o .* is for a solo bake, not with --save or --tile-size/],
      [['bake', dungeon, '--save', join(dir, 's.navbake'), '--repeat', '3'], /bake --repeat is for a solo bake/],
      [['bake', dungeon, '--save', join(dir, 'level.obj')], /--save .*level\.obj: bake --save writes a \.navbake file, not a mesh/],
    ];
    for (const [args, message] of cases) {
      const r = runNative(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('bake --tile-size without --save reports the size the navmesh saves to, not 0 bytes', () => {
    const out = join(dir, 'tiled64.navbake');
    const saved = JSON.parse(runNative(['bake', dungeon, '--tile-size', '64', '--save', out, '--json']).stdout);
    const r = runNative(['bake', dungeon, '--tile-size', '64']);
    expect(r.status, r.stderr).toBe(0);
    expect(saved.bytes).toBe(statSync(out).size);
    expect(r.stdout).toMatch(new RegExp(`: ${saved.tiles} tiles, ${saved.polys} polygons, ${saved.bytes} bytes, `));
    expect(JSON.parse(runNative(['bake', dungeon, '--tile-size', '64', '--json']).stdout).bytes).toBe(saved.bytes);
  });
});
