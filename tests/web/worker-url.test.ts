// init({ workerUrl }): the bake workers' script from elsewhere, for a page whose bundler leaves the package's worker
// behind (esbuild, Rollup) or a server bundle that does the same. The package's worker is one self-contained file:
// copied alone into an empty folder, it runs. (A file of its own: the option holds for the whole process.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bake, init, NavBakeError, terminateWorkers } from '../../web/dist/index.js';
import { loadMesh, root, type Mesh } from './helpers';

let dungeon: Mesh;
let dir = '';
let expected: Uint8Array;

beforeAll(async () => {
  dungeon = loadMesh('dungeon.obj');
  dir = mkdtempSync(join(tmpdir(), 'navbake-worker-url-'));
  copyFileSync(join(root, 'web/dist/bake.worker.js'), join(dir, 'bake.worker.js'));
  expected = (await bake(dungeon, {}, { workers: false })).save();
});

afterAll(() => {
  terminateWorkers();
  rmSync(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<NavBakeError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(NavBakeError);
  return e as NavBakeError;
}

describe('init({ workerUrl })', () => {
  it('the worker file imports nothing: it is the one file to copy', () => {
    const text = readFileSync(join(dir, 'bake.worker.js'), 'utf8');
    expect(text).not.toMatch(/^\s*(import|export)\b[^(]*\bfrom\s*['"]/m);
    expect(text).not.toMatch(/\bimport\s*\(\s*['"]\./);
  });

  it('workers start from the script named: a file URL, an absolute or a relative path; a missing one is named in the error', async () => {
    terminateWorkers();
    const missing = pathToFileURL(join(dir, 'missing.js'));
    await init({ workerUrl: missing });
    const e = await rejection(bake(dungeon, {}, { workers: 1 }));
    expect(e.code).toBe('NB_ERR_WORKER');
    expect(e.message).toContain(missing.href);
    const copy = join(dir, 'bake.worker.js');
    for (const url of [pathToFileURL(copy), pathToFileURL(copy).href, copy, relative(process.cwd(), copy)]) {
      terminateWorkers();
      await init({ workerUrl: url });
      for (const config of [{}, { tileSize: 32 }]) {
        const nav = await bake(dungeon, config, { workers: 2 });
        const want = Object.keys(config).length ? (await bake(dungeon, config, { workers: false })).save() : expected;
        expect(Buffer.from(nav.save()).equals(Buffer.from(want)), `${url} ${JSON.stringify(config)}`).toBe(true);
        nav.dispose();
      }
    }
  });

  it('a workerUrl that is neither a URL nor a string is refused by name', async () => {
    for (const bad of [5, '', {}]) {
      const e = await rejection(init({ workerUrl: bad as never }));
      expect([e.code, e.message]).toEqual(['NB_ERR_INVALID_ARG', expect.stringMatching(/navbake\.init: options\.workerUrl must be a URL or a non-empty string/)]);
    }
  });
});
