// The demo (demo/) in a real browser: built with Vite as `make demo` builds it, served on 127.0.0.1 and driven in
// Debian's Chromium (WebGL2 through SwiftShader). The page exposes its state on window.__navbakeDemo.
// Run with `make test-pack` (part of `make test`; needs `make web` and /usr/bin/chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { launchChromium, serve } from './support';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const outDir = resolve(root, 'build/demo');
const shotPath = resolve(root, 'build/e2e/demo-path.png');

type Vec3 = [number, number, number];
interface DemoState {
  phase: string;
  bakesStarted: number;
  bakesDone: number;
  progressEvents: number;
  lastProgress: { stage: string; done: number; total: number } | null;
  frames: number;
  framesDuringBake: number;
  cancelMs: number | null;
  stats: { ms: number; polygons: number; tiles: number; triangles: number; bytes: number } | null;
  path: { status: string; length: number; points: number[]; start: Vec3; end: Vec3 } | null;
  error: string | null;
  points: Record<'LEVEL_START' | 'LEVEL_END' | 'YARD_OUTSIDE' | 'YARD_INSIDE', Vec3>;
}
type Rect = { x: number; y: number; width: number; height: number };

// ---- a small PNG reader (8-bit RGB / RGBA, non-interlaced: what Chromium writes) ---------------------------------

function decodePng(buf: Buffer): { width: number; height: number; rgba: Uint8Array } {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let off = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, color, , , interlace] = [data[8], data[9], data[10], data[11], data[12]];
      if (depth !== 8 || (color !== 2 && color !== 6) || interlace !== 0) {
        throw new Error(`PNG format not handled: depth ${depth}, colour type ${color}, interlace ${interlace}`);
      }
      channels = color === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const cur = new Uint8Array(stride);
  const prev = new Uint8Array(stride);
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? cur[i - channels] : 0;
      const b = prev[i];
      const c = i >= channels ? prev[i - channels] : 0;
      let v = line[i];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      cur[i] = v & 255;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 4; k++) rgba[(y * width + x) * 4 + k] = k < channels ? cur[x * channels + k] : 255;
    }
    prev.set(cur);
  }
  return { width, height, rgba };
}

/**
 * Pixels of the navmesh (the helper fills area 63 sky blue, half transparent, over a level of warm greys and
 * browns: clearly more blue than red) and of the path (PathHelper's default 0xff3366), outside the panels.
 */
function countPixels(png: Buffer, skip: Rect[]) {
  const { width, height, rgba } = decodePng(png);
  let navmesh = 0;
  let path = 0;
  let counted = 0;
  const inside = (x: number, y: number) => skip.some((r) => x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (inside(x, y)) continue;
      counted++;
      const i = (y * width + x) * 4;
      const [r, g, b] = [rgba[i], rgba[i + 1], rgba[i + 2]];
      if (b > r + 50 && b > 100 && g > r) navmesh++;
      if (r > 200 && g < 110 && b > 50 && b < 160) path++;
    }
  }
  return { navmesh, path, counted, width, height };
}


// ---- the page ------------------------------------------------------------------------------------------------------

let server: Server | undefined;
let context: BrowserContext | undefined;
let page: Page;
let profile = '';
const consoleErrors: string[] = [];

const state = () => page.evaluate(() => JSON.parse(JSON.stringify((window as any).__navbakeDemo)) as DemoState);
/** Waits until the demo's phase is one of these (or fails with the state it ended in). */
async function phase(want: string[], timeout = 30_000): Promise<DemoState> {
  await page
    .waitForFunction((w) => w.includes((window as any).__navbakeDemo?.phase), want, { timeout, polling: 50 })
    .catch(async (e) => {
      throw new Error(`demo phase never became ${want.join('/')}: ${JSON.stringify(await state())}\n${e}`);
    });
  return state();
}
/** Waits for n more frames to be drawn (so a change shows on screen). */
async function frames(n: number): Promise<void> {
  const start = await page.evaluate(() => (window as any).__navbakeDemo.frames as number);
  await page.waitForFunction((s) => (window as any).__navbakeDemo.frames >= s, start + n, { timeout: 10_000 });
}
async function panels(): Promise<Rect[]> {
  return page.evaluate(() => [(window as any).__navbakeDemo.panelRect(), (window as any).__navbakeDemo.hudRect()]);
}

beforeAll(async () => {
  const build = spawnSync(process.execPath, [resolve(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'demo/vite.config.ts', '--logLevel', 'warn'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(build.status, `vite build failed\n${build.stdout}\n${build.stderr}`).toBe(0);
  const s = await serve(outDir);
  server = s.server;
  profile = mkdtempSync(join(tmpdir(), 'navbake-demo-chromium-'));
  context = await launchChromium(profile, { width: 1280, height: 800 });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  await page.goto(s.url);
}, 90_000);

afterAll(async () => {
  await context?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok(undefined)));
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('demo page', () => {
  it('bakes the built-in level on load (progress events, in a worker) and shows a path between the known points', async () => {
    const s = await phase(['baked', 'error'], 20_000);
    expect(s.error).toBeNull();
    expect(s.phase).toBe('baked');
    expect(s.progressEvents).toBeGreaterThanOrEqual(9); // a solo bake reports each of its 9 stages
    expect(s.lastProgress?.stage).toBe('detail');
    expect(s.stats!.polygons).toBeGreaterThan(50);
    expect(s.stats!.tiles).toBe(1);
    const p = s.path!;
    expect(p.start).toEqual(s.points.LEVEL_START);
    expect(p.end).toEqual(s.points.LEVEL_END);
    expect(p.status).toBe('complete');
    // The end is on top of the tower (y 6), reachable only by stairs and ramps: the path ends up there and is
    // longer than the straight line, with corners on the way.
    const n = p.points.length / 3;
    expect(n).toBeGreaterThanOrEqual(4);
    expect(Math.abs(p.points[3 * n - 2] - 6)).toBeLessThan(0.5);
    const [a, b] = [s.points.LEVEL_START, s.points.LEVEL_END];
    expect(p.length).toBeGreaterThan(Math.hypot(b[0] - a[0], b[1] - a[1], b[2] - a[2]) + 1);
    expect(await page.textContent('#path-info')).toMatch(/complete, \d+\.\d\d m/);
    expect(consoleErrors).toEqual([]);
  });

  it('routes through the wide door: the narrow one is closed to the agent', async () => {
    const r = await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      return d.findPath(d.points.YARD_OUTSIDE, d.points.YARD_INSIDE);
    });
    expect(r.status).toBe('complete');
    // Straight through the 1-wide east door it is 7; round to the 2-wide south door it is over 20.
    expect(r.length).toBeGreaterThan(20);
  });

  it('draws the navmesh and the path (screenshot under build/e2e/)', async () => {
    await frames(3);
    const shot = await page.screenshot();
    mkdirSync(dirname(shotPath), { recursive: true });
    writeFileSync(shotPath, shot);
    const skip = await panels();
    const on = countPixels(shot, skip);
    expect(on.width).toBe(1280);
    expect(on.navmesh / on.counted).toBeGreaterThan(0.03);
    expect(on.path).toBeGreaterThan(100);

    // Control: with the navmesh and path hidden, the same counts (nearly) vanish.
    await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      for (const v of ['navmesh', 'edges', 'path']) d.setView(v, false);
    });
    await frames(3);
    const off = countPixels(await page.screenshot(), skip);
    expect(off.navmesh).toBeLessThan(on.navmesh / 20);
    expect(off.path).toBeLessThan(on.path / 5);
    await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      for (const v of ['navmesh', 'edges', 'path']) d.setView(v, true);
    });
  });

  it('bakes in tiles over two workers and the path still reaches the tower', async () => {
    await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      d.options.workers = 2;
      return d.bake({ tileSize: 48 });
    });
    const s = await phase(['baked', 'error']);
    expect(s.error).toBeNull();
    expect(s.stats!.tiles).toBeGreaterThan(4);
    expect(s.lastProgress?.stage).toBe('tiles');
    expect(s.lastProgress!.done).toBe(s.lastProgress!.total);
    expect(s.path!.status).toBe('complete');
  });

  it('Cancel stops a long bake, the page keeps drawing, and the next bake completes', async () => {
    const before = (await state()).bakesDone;
    // A tiny cell size makes a bake of many seconds.
    await page.evaluate(() => void (window as any).__navbakeDemo.bake({ cellSize: 0.03, tileSize: 0 }));
    await page.waitForFunction(() => (window as any).__navbakeDemo.progressEvents >= 1, undefined, {
      timeout: 10_000,
      polling: 20,
    });
    await page.click('#cancel');
    const c = await phase(['cancelled', 'baked', 'error'], 10_000);
    expect(c.phase).toBe('cancelled');
    // Measured in the page from the button's handler (the click itself waits for SwiftShader's slow frames).
    expect(c.cancelMs).toBeLessThan(1_000);
    expect(c.bakesDone).toBe(before);
    expect(c.framesDuringBake).toBeGreaterThanOrEqual(1); // the page kept drawing while the worker baked

    await page.evaluate(() => void (window as any).__navbakeDemo.bake({ cellSize: 0.3 }));
    const s = await phase(['baked', 'error']);
    expect(s.phase).toBe('baked');
    expect(s.bakesDone).toBe(before + 1);
    expect(s.stats!.tiles).toBe(1);
    expect(s.path!.status).toBe('complete');
    expect(consoleErrors).toEqual([]);
  });

  it('bakes a dropped .obj, and shows a .navbake exported from it when that is dropped back', async () => {
    // A 20 x 20 floor (two triangles) with a wall box across it, as an OBJ file dropped on the page.
    const obj = [
      'v -10 0 -10', 'v 10 0 -10', 'v 10 0 10', 'v -10 0 10',
      'v -1 0 -10', 'v 1 0 -10', 'v 1 3 -10', 'v -1 3 -10', 'v -1 0 4', 'v 1 0 4', 'v 1 3 4', 'v -1 3 4',
      'f 1 3 2', 'f 1 4 3',
      'f 8 7 11', 'f 8 11 12', 'f 5 9 12', 'f 5 12 8', 'f 6 7 11', 'f 6 11 10', 'f 9 10 11', 'f 9 11 12', 'f 5 6 7', 'f 5 7 8',
    ].join('\n');
    await page.evaluate((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'room.obj', { type: 'text/plain' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, obj);
    await page.waitForFunction(() => (window as any).__navbakeDemo.source === 'room.obj', undefined, { timeout: 5_000 });
    const s = await phase(['baked', 'error']);
    expect(s.error).toBeNull();
    const around = await page.evaluate(() => (window as any).__navbakeDemo.findPath([-6, 0, -8], [6, 0, -8]));
    expect(around.status).toBe('complete');
    expect(around.length).toBeGreaterThan(2 * Math.hypot(6, 12) - 1); // round the wall's end at z = 4

    const loaded = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      const bytes: Uint8Array = d.saveBytes();
      const polygons = d.stats.polygons;
      await d.open(new File([bytes as BlobPart], 'room.navbake'));
      return { polygons, after: d.stats.polygons, phase: d.phase, path: d.findPath([-6, 0, -8], [6, 0, -8]) };
    });
    expect(loaded.phase).toBe('loaded');
    expect(loaded.after).toBe(loaded.polygons);
    expect(loaded.path.length).toBeCloseTo(around.length, 4);
    expect(consoleErrors).toEqual([]);
  });
});
