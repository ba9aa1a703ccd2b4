// The packed package as users get it: `npm pack` into build/pack/, then the tarball installed into
// (a) a fresh Vite project whose production build, and its dev server, run in Chromium and bake in Web Workers, and
// (b) a fresh webpack 5 project, built with webpack's defaults, whose page bakes in Web Workers too, and
// (c) a plain Node ESM script that bakes and finds a path, also under Bun and Deno (with the package's bin).
// The temporary projects live outside the repository, so nothing resolves from its node_modules. They pin the
// versions of vite, webpack and three that the repository's lock file installed (so npm's cache, filled by `npm ci`, has
// them and `npm install --offline` works; without the cache it falls back to the registry).
// Run with `make test-pack` (needs `make web` and /usr/bin/chromium, both provided by `make test`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, serve } from './support';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const packDir = resolve(root, 'build/pack');
const fixtures = resolve(root, 'tests/e2e/fixtures');
const meshesDir = process.env.NB_MESHES ?? resolve(root, '../shared/meshes');
const temps: string[] = [];
let tarball = '';
let packed: string[] = [];

/** The version the repository installed (its lock file's), for pinning in the temporary projects. */
function installed(name: string): string {
  return JSON.parse(readFileSync(resolve(root, 'node_modules', name, 'package.json'), 'utf8')).version;
}

function run(cmd: string, args: string[], cwd: string, timeout = 60_000) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, NO_COLOR: '1' } });
  const why = r.error ? ` (${r.error.message})` : '';
  const output = `${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status}${why}\n${r.stdout}\n${r.stderr}`;
  return { ok: r.status === 0, stdout: r.stdout ?? '', output };
}

/** A fresh project in the system's temp directory with these dependencies installed. */
function project(name: string, deps: Record<string, string>, devDeps: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), `navbake-${name}-`));
  temps.push(dir);
  const pkg = { name, private: true, type: 'module', dependencies: deps, devDependencies: devDeps };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2));
  const flags = ['--no-audit', '--no-fund', '--loglevel=error', '--no-update-notifier'];
  let r = run('npm', ['install', '--offline', ...flags], dir);
  if (!r.ok) r = run('npm', ['install', '--prefer-offline', ...flags], dir, 120_000);
  expect(r.ok, r.output).toBe(true);
  return dir;
}

beforeAll(() => {
  rmSync(packDir, { recursive: true, force: true });
  mkdirSync(packDir, { recursive: true });
  const r = run('npm', ['pack', '--json', '--pack-destination', packDir, '--loglevel=error'], root);
  expect(r.ok, r.output).toBe(true);
  const info = JSON.parse(r.stdout.slice(r.stdout.indexOf('[')))[0];
  tarball = resolve(packDir, info.filename);
  packed = info.files.map((f: { path: string }) => f.path);
});

afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('ships the built JavaScript, types, wasm and README, and no sources or tests', () => {
    expect(statSync(tarball).size).toBeGreaterThan(0);
    for (const f of [
      'package.json',
      'README.md',
      'web/dist/index.js',
      'web/dist/index.d.ts',
      'web/dist/three.js',
      'web/dist/three.d.ts',
      'web/dist/bake.worker.js',
      'web/dist/navbake.wasm',
      'web/dist/ts5.6/index.d.ts',
      'web/dist/ts5.6/three.d.ts',
      'LICENSE',
    ]) {
      expect(packed).toContain(f);
    }
    // bundled: the three entries and the chunks they share, not one module per source file (Node loads each file
    // on its own, about a millisecond apiece)
    const modules = packed.filter((f) => /^web\/dist\/[^/]+\.m?js$/.test(f));
    expect(modules.length, modules.join(', ')).toBeLessThanOrEqual(6);
    expect(packed).not.toContain('web/dist/wasm.js');
    expect(packed).not.toContain('web/dist/navbake.d.mts'); // the loader's declarations: bundled, not shipped
    const top = ['package.json', 'README.md', 'LICENSE'];
    const stray = packed.filter((f) => !(f.startsWith('web/dist/') || top.includes(f)));
    expect(stray).toEqual([]);
    expect(packed.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });
});

describe('installed into a plain Node ESM project', () => {
  let dir = '';
  beforeAll(() => {
    dir = project('node-app', { navbake: `file:${tarball}`, three: installed('three') }, { '@types/three': installed('@types/three') });
  });

  it("type-checks a TypeScript user's code against the declarations, under Node's and bundlers' resolution, and node10's", () => {
    cpSync(join(fixtures, 'node-app'), dir, { recursive: true });
    const tsc = resolve(root, 'node_modules/typescript/bin/tsc');
    for (const [module, resolution] of [['node16', 'node16'], ['esnext', 'bundler']]) {
      const args = [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', module, '--moduleResolution', resolution, 'consumer.ts'];
      const r = run(process.execPath, args, dir);
      expect(r.ok, r.output).toBe(true);
    }
    const cjs = [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'commonjs', '--moduleResolution', 'node10', 'consumer-cjs.ts'];
    const r = run(process.execPath, cjs, dir);
    expect(r.ok, r.output).toBe(true);
  });

  it('bakes a level in worker_threads, finds a path around a wall, saves and loads, uses navbake/three', () => {
    cpSync(join(fixtures, 'node-app'), dir, { recursive: true });
    // The script must also exit by itself: idle bake workers may not keep Node alive (the timeout catches that).
    const r = run(process.execPath, ['bake.mjs'], dir, 60_000);
    expect(r.ok, r.output).toBe(true);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out.polygons).toBeGreaterThan(0);
    expect(out.status).toBe('complete');
    // Straight across is 20 long and crosses the ridge: the path must go round its end (z = 7).
    expect(out.pathPoints).toBeGreaterThanOrEqual(3);
    expect(out.pathLength).toBeGreaterThan(2 * Math.hypot(10, 17));
    expect(out.samePathAfterLoad).toBe(true);
    expect(out.stages).toContain('detail');
    expect(out.tiles).toBeGreaterThan(1);
    expect(out.tiledStatus).toBe('complete');
    expect(out.error).toEqual({ isNavBakeError: true, code: 'NB_ERR_INDEX_RANGE' });
    expect(out.threePolygons).toBeGreaterThan(0);
    expect(Math.abs(out.threeOnTop)).toBeLessThan(0.5); // the box's top is at y = 0
    expect(out.helperTriangles).toBeGreaterThan(0);
    expect(out.defaultsCellSize).toBe(0.3);
  });

  it('exports the wasm file as navbake/navbake.wasm (import.meta.resolve, require.resolve), and init takes its bytes', () => {
    const script = [
      "import { readFileSync } from 'node:fs';",
      "import { createRequire } from 'node:module';",
      "import { fileURLToPath } from 'node:url';",
      "import { bake, init } from 'navbake';",
      "const url = import.meta.resolve('navbake/navbake.wasm');",
      "const required = createRequire(import.meta.url).resolve('navbake/navbake.wasm');",
      'const bytes = readFileSync(fileURLToPath(url));',
      'await init({ wasmBinary: bytes });',
      'const nav = await bake({ positions: [0, 0, 0, 0, 0, 10, 10, 0, 10, 10, 0, 0], indices: [0, 1, 2, 0, 2, 3] }, null, { workers: false });',
      'console.log(JSON.stringify({ url, same: required === fileURLToPath(url), magic: [...bytes.subarray(0, 4)], polygons: nav.polygons().length }));',
    ].join('\n');
    writeFileSync(join(dir, 'wasm-export.mjs'), script);
    const r = run(process.execPath, ['wasm-export.mjs'], dir);
    expect(r.ok, r.output).toBe(true);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(out.url).toMatch(/\/node_modules\/navbake\/web\/dist\/navbake\.wasm$/);
    expect(out.same).toBe(true);
    expect(out.magic).toEqual([0, 0x61, 0x73, 0x6d]); // "\0asm"
    expect(out.polygons).toBeGreaterThan(0);
  });

  it("runs the package's bin on a meshopt-compressed .glb: its decoder comes with the install", async () => {
    // A 20 x 20 floor, meshopt-compressed (what gltfpack writes), made here with the repository's gltf-transform.
    const { Document, NodeIO } = await import('@gltf-transform/core');
    const { EXTMeshoptCompression } = await import('@gltf-transform/extensions');
    const { MeshoptEncoder } = await import('meshoptimizer');
    await MeshoptEncoder.ready;
    const doc = new Document();
    const buf = doc.createBuffer();
    const prim = doc
      .createPrimitive()
      .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(new Float32Array([-10, 0, -10, 10, 0, -10, 10, 0, 10, -10, 0, 10])).setBuffer(buf))
      .setIndices(doc.createAccessor().setType('SCALAR').setArray(new Uint16Array([0, 2, 1, 0, 3, 2])).setBuffer(buf));
    doc.createScene().addChild(doc.createNode('floor').setMesh(doc.createMesh('floor').addPrimitive(prim)));
    doc.createExtension(EXTMeshoptCompression).setRequired(true).setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.FILTER });
    const io = new NodeIO().registerExtensions([EXTMeshoptCompression]).registerDependencies({ 'meshopt.encoder': MeshoptEncoder });
    writeFileSync(join(dir, 'floor.glb'), await io.writeBinary(doc));

    const bin = join(dir, 'node_modules/.bin/navbake');
    const baked = run(bin, ['bake', 'floor.glb', '-o', 'floor.navbake', '--json'], dir);
    expect(baked.ok, baked.output).toBe(true);
    expect(JSON.parse(baked.stdout).triangles).toBe(2);
    const path = run(bin, ['path', 'floor.navbake', '--from', '-8,0,-8', '--to', '8,0,8', '--json'], dir);
    expect(path.ok, path.output).toBe(true);
    const p = JSON.parse(path.stdout);
    expect(p.status).toBe('complete');
    expect(p.length).toBeCloseTo(Math.hypot(16, 16), 1);
  });

  // Bun and Deno, as `make test-pack` fetches them (NAVBAKE_BUN / NAVBAKE_DENO: their executables). Deno is given
  // only the permissions the work needs: reading the wasm (and the mesh), writing the navmesh file.
  const runtimes = [
    { name: 'Bun', exe: process.env.NAVBAKE_BUN, script: [], bin: [] },
    { name: 'Deno', exe: process.env.NAVBAKE_DENO, script: ['run', '--allow-read'], bin: ['run', '--allow-read', '--allow-write'] },
  ];
  for (const rt of runtimes) {
    it.skipIf(!rt.exe)(`runs under ${rt.name}: the script gives what it gives under Node, the bin the same navmesh bytes`, () => {
      cpSync(join(fixtures, 'node-app'), dir, { recursive: true });
      const results = [[process.execPath], [rt.exe!, ...rt.script]].map(([cmd, ...args]) => {
        const r = run(cmd!, [...args, 'bake.mjs'], dir, 60_000);
        expect(r.ok, r.output).toBe(true);
        return JSON.parse(r.stdout.trim().split('\n').pop()!);
      });
      expect(results[0].status).toBe('complete');
      expect(results[1]).toEqual(results[0]);

      // A tiled bake in two worker threads through the bin, whose shebang names node: run the file itself.
      const bin = join(dir, 'node_modules/navbake/web/dist/bin/navbake.js');
      const mesh = join(meshesDir, 'nav_test.obj');
      const files = [[process.execPath], [rt.exe!, ...rt.bin]].map(([cmd, ...args], i) => {
        const out = join(dir, `nav_test-${i}.navbake`);
        const r = run(cmd!, [...args, bin, 'bake', mesh, '--tile-size', '32', '--workers', '2', '-o', out, '--json'], dir);
        expect(r.ok, r.output).toBe(true);
        expect(JSON.parse(r.stdout).tiles).toBeGreaterThan(1);
        return readFileSync(out);
      });
      expect(files[1].length).toBe(files[0].length);
      expect(Buffer.compare(files[1], files[0])).toBe(0);
    });
  }
});


describe('installed into a fresh Vite project', () => {
  let dir = '';
  beforeAll(() => {
    dir = project('vite-app', { navbake: `file:${tarball}`, three: installed('three') }, { vite: installed('vite') });
    cpSync(join(fixtures, 'vite-app'), dir, { recursive: true });
  });

  it('vite build succeeds and the built page bakes in Web Workers in Chromium, cross-origin isolated or not', async () => {
    // No vite.config: the package must work in Vite without configuration.
    const build = run(process.execPath, [join(dir, 'node_modules/vite/bin/vite.js'), 'build'], dir, 120_000);
    expect(build.ok, build.output).toBe(true);
    const assets = readdirSync(join(dir, 'dist/assets'));
    // The wasm is emitted as a file (not inlined) and found through new URL(..., import.meta.url).
    expect(assets.filter((f) => f.endsWith('.wasm'))).toHaveLength(1);
    expect(assets.some((f) => /^bake\.worker-.*\.js$/.test(f))).toBe(true);

    // Served plain, then cross-origin isolated (COOP + COEP): a tiled bake then hands the workers the geometry
    // in shared memory; the navmesh must come out the same.
    const runs: Record<string, unknown>[] = [];
    for (const headers of [{} as Record<string, string>, { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }]) {
      const { server, url } = await serve(join(dir, 'dist'), headers);
      try {
        runs.push(await loadPage(url, /\/assets\/bake\.worker-[^/]*\.js$/));
      } finally {
        await new Promise((ok) => server.close(ok));
      }
    }
    expect(runs.map((r) => r.isolated)).toEqual([false, true]);
    expect(runs[1].tiledHash).toBe(runs[0].tiledHash);
    expect(runs[1].tiles).toBe(runs[0].tiles);
  });

  it('the page bakes under the Vite dev server too, where the package is served from node_modules', async () => {
    // What a developer runs first (`vite`): the worker and the wasm must be found through new URL(...,
    // import.meta.url) in the installed package as the dev server serves it, without configuration.
    const port = await freePort();
    const vite = spawn(process.execPath, [join(dir, 'node_modules/vite/bin/vite.js'), '--host', '127.0.0.1', '--port', String(port), '--strictPort', '--clearScreen', 'false'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1' },
    });
    let log = '';
    vite.stdout.on('data', (d) => (log += d));
    vite.stderr.on('data', (d) => (log += d));
    try {
      const deadline = Date.now() + 30_000;
      while (!log.includes(`:${port}/`) && vite.exitCode === null && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 100));
      expect(log, 'vite dev server did not start').toContain(`:${port}/`);
      const out = await loadPage(`http://127.0.0.1:${port}/`, /\/node_modules\/navbake\/web\/dist\/bake\.worker\.js(\?|$)/);
      expect(out.isolated).toBe(false);
    } finally {
      vite.kill();
    }
    expect(log).not.toMatch(/error/i);
  });
});

describe('installed into a fresh webpack 5 project', () => {
  it('webpack builds it without warnings and the built page bakes in Web Workers in Chromium', async () => {
    const deps = { navbake: `file:${tarball}`, three: installed('three') };
    const dir = project('webpack-app', deps, { webpack: installed('webpack') });
    cpSync(join(fixtures, 'webpack-app'), dir, { recursive: true });
    // The same page as the Vite project's; webpack's defaults find the worker and the wasm through the package's
    // `new URL('./...', import.meta.url)` literals.
    mkdirSync(join(dir, 'src'));
    cpSync(join(fixtures, 'vite-app/main.js'), join(dir, 'src/index.js'));
    // webpack's bundle is a classic script (its public path comes from document.currentScript)
    const html = readFileSync(join(fixtures, 'vite-app/index.html'), 'utf8').replace('<script type="module" ', '<script ');
    writeFileSync(join(dir, 'index.html'), html);
    const build = run(process.execPath, ['build.mjs'], dir, 120_000);
    expect(build.ok, build.output).toBe(true);
    const assets: string[] = JSON.parse(build.stdout.trim().split('\n').pop()!).assets;
    expect(assets.filter((f) => f.endsWith('.wasm')), assets.join(', ')).toHaveLength(1);
    const { server, url } = await serve(join(dir, 'dist'), {});
    try {
      // the worker: a chunk of its own next to main.js
      const out = await loadPage(url, /\/(?!main\.js)[^/]+\.js$/);
      expect(out.isolated).toBe(false);
    } finally {
      await new Promise((ok) => server.close(ok));
    }
  });
});

describe('installed into a fresh project bundled by Rolldown, which leaves the worker and the wasm behind', () => {
  it("the page copies them and names them to init(): it bakes in Web Workers, same-origin or from another origin", async () => {
    const deps = { navbake: `file:${tarball}`, three: installed('three') };
    const dir = project('rolldown-app', deps, { rolldown: installed('rolldown') });
    mkdirSync(join(dir, 'src'));
    cpSync(join(fixtures, 'rolldown-app/entry.js'), join(dir, 'src/entry.js'));
    cpSync(join(fixtures, 'vite-app/main.js'), join(dir, 'src/main.js'));
    cpSync(join(fixtures, 'rolldown-app/rolldown.config.mjs'), join(dir, 'rolldown.config.mjs'));
    const build = run(process.execPath, [join(dir, 'node_modules/rolldown/bin/cli.mjs'), '-c', 'rolldown.config.mjs'], dir, 120_000);
    expect(build.ok, build.output).toBe(true);
    // what the bundler left: no worker, no wasm beside the page
    expect(readdirSync(join(dir, 'dist')).filter((f) => f.includes('worker') || f.endsWith('.wasm'))).toEqual([]);
    // the Vite page's, loading the bundle's entry
    const html = readFileSync(join(fixtures, 'vite-app/index.html'), 'utf8').replace('src="./main.js"', 'src="./entry.js"');
    writeFileSync(join(dir, 'dist/index.html'), html);
    // the two files, copied: the worker alone (it imports nothing) and the wasm
    const vendor = join(dir, 'vendor');
    mkdirSync(vendor);
    for (const f of ['bake.worker.js', 'navbake.wasm']) cpSync(join(dir, 'node_modules/navbake/web/dist', f), join(vendor, f));
    cpSync(vendor, join(dir, 'dist/vendor'), { recursive: true });
    const page = await serve(join(dir, 'dist'), {});
    const cdn = await serve(vendor, { 'access-control-allow-origin': '*' });
    try {
      const same = await loadPage(page.url, /\/vendor\/bake\.worker\.js$/);
      // from another origin: started through a same-origin blob: module that imports it
      const other = await loadPage(`${page.url}?cdn=${encodeURIComponent(cdn.url)}`, /^blob:/);
      expect(other.tiledHash).toBe(same.tiledHash);
    } finally {
      await new Promise((ok) => page.server.close(ok));
      await new Promise((ok) => cdn.server.close(ok));
    }
  });
});

/** A TCP port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => ok(port));
    });
  });
}

/** Opens the page at url in Chromium, checks what every load must show (its bake worker's script matching
 * workerUrl), and returns the page's result. */
async function loadPage(url: string, workerUrl: RegExp): Promise<Record<string, unknown>> {
  const profile = mkdtempSync(join(tmpdir(), 'navbake-chromium-'));
  temps.push(profile);
  const context = await launchChromium(profile);
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    const workers: string[] = [];
    const wasm: { status: number; type: string }[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`);
    });
    page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
    page.on('worker', (w) => workers.push(w.url()));
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`);
      if (r.url().endsWith('.wasm')) wasm.push({ status: r.status(), type: r.headers()['content-type'] ?? '' });
    });
    await page.goto(url);
    await page.waitForFunction(() => document.getElementById('result')?.dataset.done, null, { timeout: 60_000 });
    const done = await page.$eval('#result', (e) => (e as HTMLElement).dataset.done);
    const text = await page.$eval('#result', (e) => e.textContent ?? '');
    expect(done, text).toBe('ok');
    expect(errors).toEqual([]);
    const out = JSON.parse(text);
    expect(out.polygons).toBeGreaterThan(0);
    expect(out.helperTriangles).toBe(out.triangles);
    expect(out.status).toBe('complete');
    expect(out.pathPoints).toBeGreaterThanOrEqual(3);
    expect(out.pathLength).toBeGreaterThan(2 * Math.hypot(10, 17)); // round the wall's end
    // Progress came from the bake worker, which was a module worker of the built page.
    expect(out.stages).toContain('detail');
    // tiled over two workers: several tiles, and the way round the wall
    expect(out.tiles).toBeGreaterThan(1);
    expect(out.tiledStatus).toBe('complete');
    // findPathsAsync in two module workers gave findPaths' answers, mostly complete paths
    expect(out.asyncSame).toBe(true);
    expect(out.asyncComplete).toBeGreaterThan(300);
    expect(workers.some((w) => workerUrl.test(w)), workers.join(', ')).toBe(true);
    expect(wasm.length).toBeGreaterThan(0);
    expect(wasm.every((r) => r.status === 200 && r.type === 'application/wasm')).toBe(true);
    if (out.webgl) {
      // The helpers drew: the navmesh's triangles, its edges and the path's lines, a marker per path point.
      expect(out.drawn.triangles).toBe(out.triangles);
      expect(out.drawn.lines).toBeGreaterThan(out.pathPoints - 1);
      expect(out.drawn.points).toBe(out.pathPoints);
    }
    else console.warn('pack.test: no WebGL2 in this Chromium; the helpers were built but not drawn');
    return out;
  } finally {
    await context.close();
  }
}
