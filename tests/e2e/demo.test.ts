// The demo (demo/) in a real browser: built with Vite as `make demo` builds it, served on 127.0.0.1 and driven in
// Debian's Chromium (WebGL2 through SwiftShader). The page exposes its state on window.__navbakeDemo.
// Run with `make test-pack` (part of `make test`; needs `make web` and /usr/bin/chromium).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { Document, NodeIO } from '@gltf-transform/core';
import { ALL_EXTENSIONS, EXTMeshoptCompression, KHRDracoMeshCompression } from '@gltf-transform/extensions';
import draco3d from 'draco3dgltf';
import { MeshoptEncoder } from 'meshoptimizer';
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
  lastBake: { start: number; end: number } | null;
  progressWindow: { first: number; last: number } | null;
  longTasks: { start: number; duration: number }[];
  fps: number;
  frameMs: number;
  stats: { ms: number; polygons: number; tiles: number; triangles: number; bytes: number } | null;
  inspectPhase: string;
  inspectsDone: number;
  inspection: {
    tiles: number;
    spans: number;
    regions: number;
    contours: number;
    times: Record<string, number>;
    peakBytes: number;
    heapBytes: number;
    ms: number;
  } | null;
  path: { mode: string; status: string; length: number; points: number[]; start: Vec3; end: Vec3; source: string; ms: number } | null;
  pathsShown: { mode: string; status: string; length: number; source: string; level: number; grid: Vec3 | null }[];
  voxels: {
    phase: string;
    source: string;
    plan: { cellSize: number; cellHeight: number; dims: Vec3; voxels: number; coarsened: boolean; refused: string | null } | null;
    ms: number | null;
    error: string | null;
    started: number;
    dropped: number;
  };
  voxelSearch: { phase: string; started: number; aborted: number; reused: number; ms: number | null; error: string | null };
  config: Record<string, number | string>;
  error: string | null;
  source: string;
  world: number | null;
  markScale: number;
  points: Record<'LEVEL_START' | 'LEVEL_END' | 'YARD_OUTSIDE' | 'YARD_INSIDE' | 'FLOOR_EDGE' | 'BELOW_FLOOR_EDGE', Vec3>;
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
let pageUrl = '';
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
/** Waits for the inspection of the last bake (it follows each bake, in the workers). */
async function inspected(timeout = 30_000): Promise<DemoState> {
  await page
    .waitForFunction(() => ['done', 'error'].includes((window as any).__navbakeDemo.inspectPhase), undefined, {
      timeout,
      polling: 50,
    })
    .catch(async (e) => {
      throw new Error(`inspect never finished: ${JSON.stringify(await state())}\n${e}`);
    });
  return state();
}
/** Fraction of the pixels (outside the panels) that differ clearly between two screenshots of the same size. */
function changed(a: Buffer, b: Buffer, skip: Rect[]): number {
  const pa = decodePng(a);
  const pb = decodePng(b);
  let n = 0;
  let counted = 0;
  for (let y = 0; y < pa.height; y++) {
    for (let x = 0; x < pa.width; x++) {
      if (skip.some((r) => x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)) continue;
      counted++;
      const i = (y * pa.width + x) * 4;
      const d = Math.abs(pa.rgba[i] - pb.rgba[i]) + Math.abs(pa.rgba[i + 1] - pb.rgba[i + 1]) + Math.abs(pa.rgba[i + 2] - pb.rgba[i + 2]);
      if (d > 40) n++;
    }
  }
  return n / counted;
}
async function setViews(views: Record<string, boolean>): Promise<void> {
  await page.evaluate((v) => {
    const d = (window as any).__navbakeDemo;
    for (const [k, on] of Object.entries(v)) d.setView(k, on);
  }, views);
  await frames(2);
}
interface ObstacleState {
  count: number;
  bases: Vec3[];
  updates: number;
  inFlight: number;
  maxInFlight: number;
  lastTiles: [number, number][];
  flashing: number;
  dragging: boolean;
}
const obstacleState = () => page.evaluate(() => (window as any).__navbakeDemo.obstacleState() as ObstacleState);
/** Waits until no obstacle update runs or waits (after a drag, say). */
async function obstaclesSettled(): Promise<ObstacleState> {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const o = await obstacleState();
    if (o.inFlight === 0 && o.updates === last) return o;
    last = o.inFlight === 0 ? o.updates : -1;
    await page.waitForTimeout(150);
  }
  throw new Error(`obstacle updates never settled: ${JSON.stringify(await obstacleState())}`);
}
/** Points halfway along the path's longer segments on the ground (y below 1), longest first. */
function groundPoints(points: number[]): Vec3[] {
  const out: [number, Vec3][] = [];
  for (let i = 3; i + 2 < points.length; i += 3) {
    const a = points.slice(i - 3, i) as Vec3;
    const b = points.slice(i, i + 3) as Vec3;
    const len = Math.hypot(b[0] - a[0], b[2] - a[2]);
    if (a[1] < 1 && b[1] < 1 && len > 5) out.push([len, [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2]]);
  }
  return out.sort((p, q) => q[0] - p[0]).map(([, p]) => p);
}
/** Whether a polyline enters the xz rectangle [x0, x1] x [z0, z1] (segments sampled every 5 cm). */
/** How close a path (xyz points) comes to a box in xz, sampled every 5 cm: 0 when it enters the box. */
function distanceToBox(points: number[], x0: number, x1: number, z0: number, z1: number): number {
  let d = Infinity;
  for (let i = 3; i + 2 < points.length; i += 3) {
    const n = Math.ceil(Math.hypot(points[i] - points[i - 3], points[i + 2] - points[i - 1]) / 0.05);
    for (let k = 0; k <= n; k++) {
      const x = points[i - 3] + ((points[i] - points[i - 3]) * k) / n;
      const z = points[i - 1] + ((points[i + 2] - points[i - 1]) * k) / n;
      d = Math.min(d, Math.hypot(Math.max(x0 - x, 0, x - x1), Math.max(z0 - z, 0, z - z1)));
    }
  }
  return d;
}
/** The panel's "agent" dropdown. */
const agentSelect = () =>
  page.locator('.lil-controller').filter({ has: page.locator('.lil-name', { hasText: /^agent$/ }) }).locator('select');
/**
 * The shown path checked against the voxel grid it came from: every sample along it (each 5 cm, at the middle of the
 * voxel its feet are in) in a free voxel; at every point, the agent's whole box (agentRadius to each side,
 * agentHeight tall, in voxels as the package rounds them) free, and whether a solid voxel touches that box (a
 * surface to cling to: beside, below or above). `control`: the voxel just under the tower's top is solid.
 */
function checkVoxelPath() {
  return page.evaluate(() => {
    const d = (window as any).__navbakeDemo;
    const g = d.voxelGrid();
    const pts: number[] = d.path.points;
    const ch: number = g.cellHeight;
    const r = Math.ceil(d.config.agentRadius / g.cellSize - 1e-6);
    const h = Math.max(1, Math.ceil(d.config.agentHeight / ch - 1e-6));
    const feet = (i: number) => g.voxelAt([pts[i], pts[i + 1] + ch / 2, pts[i + 2]]) as Vec3;
    const anySolid = (x0: number, x1: number, y0: number, y1: number, z0: number, z1: number) => {
      for (let y = y0; y <= y1; y++) for (let z = z0; z <= z1; z++) for (let x = x0; x <= x1; x++) if (g.isSolid(x, y, z)) return true;
      return false;
    };
    let samples = 0;
    let solidSamples = 0;
    for (let i = 3; i + 2 < pts.length; i += 3) {
      const n = Math.max(1, Math.ceil(Math.hypot(pts[i] - pts[i - 3], pts[i + 1] - pts[i - 2], pts[i + 2] - pts[i - 1]) / 0.05));
      for (let k = 0; k <= n; k++) {
        const p = [0, 1, 2].map((a) => pts[i - 3 + a] + ((pts[i + a] - pts[i - 3 + a]) * k) / n);
        const [x, y, z] = g.voxelAt([p[0], p[1] + ch / 2, p[2]]);
        samples++;
        if (g.isSolid(x, y, z)) solidSamples++;
      }
    }
    let blockedBoxes = 0;
    let unclung = 0;
    for (let i = 0; i + 2 < pts.length; i += 3) {
      const [x, y, z] = feet(i);
      if (anySolid(x - r, x + r, y, y + h - 1, z - r, z + r)) blockedBoxes++;
      if (!anySolid(x - r - 1, x + r + 1, y - 1, y + h, z - r - 1, z + r + 1)) unclung++;
    }
    const [tx, ty, tz] = g.voxelAt([26, 5.95, -16]);
    return { samples, solidSamples, points: pts.length / 3, blockedBoxes, unclung, control: g.isSolid(tx, ty, tz) as boolean };
  });
}
/** Waits until the HUD's stats (redrawn every 500 ms) show this text. */
async function hudShows(text: string): Promise<void> {
  await page
    .waitForFunction((t) => document.getElementById('stats')!.textContent!.includes(t), text, { timeout: 5_000, polling: 100 })
    .catch(async () => {
      throw new Error(`the HUD never showed ${JSON.stringify(text)}: ${await page.textContent('#stats')}`);
    });
}
async function panels(): Promise<Rect[]> {
  return page.evaluate(() => [(window as any).__navbakeDemo.panelRect(), (window as any).__navbakeDemo.hudRect()]);
}

beforeAll(async () => {
  // the generated worlds are Vite's public files (build/demo-public), written by the Makefile's native tool
  const world = resolve(root, 'build/demo-public/world-100000.bin');
  expect(existsSync(world), `${world} is missing: make test-pack (or make demo) writes it`).toBe(true);
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
  pageUrl = s.url;
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
    expect(s.markScale).toBe(1); // the built-in level framed: the tube and markers at their own size
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

  it('jumps down the level\'s off-mesh links, one way only, and draws them as arcs', async () => {
    const r = await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      return {
        down: d.findPath(d.points.FLOOR_EDGE, d.points.BELOW_FLOOR_EDGE),
        up: d.findPath(d.points.BELOW_FLOOR_EDGE, d.points.FLOOR_EDGE),
        arcs: d.linkSegments(),
      };
    });
    // Down: off the edge, 3 m to the ground (the link); up: round to the stairs at the west end and back.
    expect(r.down.status).toBe('complete');
    expect(r.down.length).toBeLessThan(12);
    expect(r.up.status).toBe('complete');
    expect(r.up.length).toBeGreaterThan(25);
    expect(r.arcs).toBeGreaterThanOrEqual(2 * 16); // two links, 16 segments an arc (plus arrow heads)
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

  it('inspects each bake in a worker: stage times and memory in the panel, voxels, regions and contours drawn', async () => {
    const s = await inspected();
    expect(s.inspectPhase).toBe('done');
    const i = s.inspection!;
    expect(i.tiles).toBe(1);
    expect(i.spans).toBeGreaterThan(10_000); // about 60 x 60 m of floors at 0.3 m cells
    expect(i.regions).toBeGreaterThan(5);
    expect(i.contours).toBeGreaterThanOrEqual(5);
    const stages = ['rasterize', 'filter', 'compact', 'erode', 'areas', 'distance', 'regions', 'contours', 'polymesh', 'detail'];
    const sum = stages.reduce((a, k) => a + i.times[k], 0);
    for (const k of ['rasterize', 'regions', 'contours', 'polymesh', 'detail']) expect(i.times[k], k).toBeGreaterThan(0);
    expect(sum).toBeLessThanOrEqual(i.times.total + 0.5);
    expect(sum).toBeGreaterThan(i.times.total * 0.8);
    expect(i.peakBytes).toBeGreaterThan(i.spans * 8);
    expect(i.heapBytes).toBeGreaterThan(i.peakBytes);
    const panel = await page.textContent('#hud');
    expect(panel).toMatch(/stage times: \d+\.\d ms/);
    expect(panel).toMatch(/rasterize\s*\d+\.\d/);
    expect(panel).toMatch(/bake peak \d+\.\d MiB · wasm heap \d+\.\d MiB/);
    expect(panel).toMatch(/\d+ fps · \d+ ms\/frame/);
    expect(panel).toContain(`${i.spans} walkable spans, ${i.regions} regions`);

    // Each view changes the picture: voxels over the level, then recoloured by region, then contours.
    const skip = await panels();
    await setViews({ navmesh: false, edges: false, path: false });
    const plain = await page.screenshot();
    await setViews({ voxels: true });
    expect(await page.evaluate(() => (window as any).__navbakeDemo.voxelCount())).toBe(i.spans);
    const voxels = await page.screenshot();
    expect(changed(plain, voxels, skip)).toBeGreaterThan(0.05);
    await setViews({ regions: true });
    const regions = await page.screenshot();
    expect(changed(voxels, regions, skip)).toBeGreaterThan(0.02);
    await setViews({ voxels: false, regions: false, contours: true });
    expect(await page.evaluate(() => (window as any).__navbakeDemo.contourSegments())).toBeGreaterThan(i.contours * 3);
    const contours = await page.screenshot();
    expect(changed(plain, contours, skip)).toBeGreaterThan(0.002);
    await setViews({ contours: false, navmesh: true, edges: true, path: true });
    expect(consoleErrors).toEqual([]);
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
    // inspected tile by tile: every tile with polygons had triangles; stage times summed over them
    const t = await inspected();
    expect(t.inspectPhase).toBe('done');
    expect(t.inspection!.tiles).toBeGreaterThanOrEqual(s.stats!.tiles);
    expect(t.inspection!.times.rasterize).toBeGreaterThan(0);
    // the stage bars are the bake's own timers (onTile), summed over the tiles with polygons
    const bakeTimes = await page.evaluate(() => (window as any).__navbakeDemo.bakeTimes);
    expect(bakeTimes.tiles).toBe(s.stats!.tiles);
    expect(bakeTimes.times.rasterize).toBeGreaterThan(0);
    expect(bakeTimes.times.total).toBeGreaterThan(bakeTimes.times.rasterize);
    expect(await page.textContent('#stage-times')).toContain(`summed over ${s.stats!.tiles} tiles`);
  });

  it('a box obstacle dropped on the path reroutes it live (its tiles rebuilt); removing it restores the path', async () => {
    await page.evaluate(() => (window as any).__navbakeDemo.bake({ tileSize: 32 }));
    const s = await phase(['baked', 'error']);
    expect(s.error).toBeNull();
    const before = s.path!;
    expect(before.status).toBe('complete');
    const at = groundPoints(before.points)[0];
    expect(at, 'a long ground segment on the path').toBeDefined();
    const replans = (s as DemoState & { replans: number }).replans;
    const inspectedBefore = await inspected();
    await setViews({ contours: true }); // with a stage view on, the level is inspected again with the box in it

    const i = await page.evaluate((p) => (window as any).__navbakeDemo.dropObstacle(p), at);
    expect(i).toBe(0);
    const o = await obstaclesSettled();
    expect(o.updates).toBeGreaterThanOrEqual(1);
    expect(o.lastTiles.length).toBeGreaterThanOrEqual(1);
    expect(o.maxInFlight).toBe(1);
    const after = (await state()) as DemoState & { replans: number };
    expect(after.replans).toBeGreaterThan(replans);
    const p = after.path!;
    expect(p.status).toBe('complete');
    expect(p.points).not.toEqual(before.points);
    // The new path keeps out of the box, the old one went through it. (Not necessarily longer: the polygon search
    // is not exact, and a changed corridor can even come out shorter.) The page carves the 2.4 m box grown by the
    // agent radius (0.6 m), as walls are kept at that distance; the carved hole's outline is simplified
    // (edgeMaxError, 0.4 m here) and may cut into that margin, not through it.
    const box = [at[0] - 1.2, at[0] + 1.2, at[2] - 1.2, at[2] + 1.2] as const;
    expect(distanceToBox(before.points, ...box)).toBe(0);
    const clear = distanceToBox(p.points, ...box);
    expect(clear, JSON.stringify({ at, before: before.points, after: p.points })).toBeGreaterThan(0.15);
    expect(await page.textContent('#stats')).toMatch(/1 box · \d+ updates? · last rebuilt \d+ tiles?/);
    // the stats follow the rebuilt navmesh once the box stands still (its .navbake size, polygons, surface)
    await page.waitForFunction(
      (baked) => {
        const d = (window as any).__navbakeDemo;
        return d.stats.bytes === d.saveBytes().length && d.stats.bytes !== baked;
      },
      s.stats!.bytes,
      { timeout: 5_000 },
    );
    // the inspection follows: the box carved walkable spans away (2.4 m square: about 64 cells)
    await page.waitForFunction((n) => (window as any).__navbakeDemo.inspectsDone > n, inspectedBefore.inspectsDone, {
      timeout: 30_000,
    });
    const carved = await inspected();
    expect(carved.inspection!.spans).toBeLessThan(inspectedBefore.inspection!.spans - 30);
    await setViews({ contours: false });

    await page.evaluate(() => (window as any).__navbakeDemo.removeObstacle(0));
    await obstaclesSettled();
    const restored = (await state()).path!;
    expect(restored.length).toBeCloseTo(before.length, 4);
    expect(restored.points).toEqual(before.points);
    expect(consoleErrors).toEqual([]);
  });

  it('drags a box with the pointer: it follows the ground, one update at a time, and the path re-plans', async () => {
    const s = await state();
    const before = s.path!;
    // a target on the path that is on screen, clear of the panels; the box starts 6 m beside it
    const skip = await panels();
    const onScreen = async (p: Vec3) => {
      const q = await page.evaluate((w) => (window as any).__navbakeDemo.screenOf(w), p);
      const inPanel = skip.some((r) => q.x >= r.x - 20 && q.x < r.x + r.width + 20 && q.y >= r.y - 20 && q.y < r.y + r.height + 20);
      return !inPanel && q.x > 20 && q.x < 1260 && q.y > 20 && q.y < 780 ? (q as { x: number; y: number }) : null;
    };
    let target: Vec3 | null = null;
    let from: Vec3 | null = null;
    for (const t of groundPoints(before.points)) {
      for (const dx of [6, -6]) {
        const f: Vec3 = [t[0] + dx, t[1], t[2]];
        if ((await onScreen(t)) && (await onScreen([f[0], f[1] + 0.8, f[2]]))) [target, from] = [t, f];
        if (target) break;
      }
      if (target) break;
    }
    expect(target, 'a path point and a start point on screen').not.toBeNull();
    expect(await page.evaluate((p) => (window as any).__navbakeDemo.dropObstacle(p), from)).toBe(0);
    const o0 = await obstaclesSettled();
    const camera0 = await page.evaluate(() => (window as any).__navbakeDemo.screenOf([0, 0, 0]));

    const grab = (await onScreen([from![0], from![1] + 0.8, from![2]]))!;
    const drop = (await onScreen(target!))!;
    await page.mouse.move(grab.x, grab.y);
    await page.mouse.down();
    expect((await obstacleState()).dragging).toBe(true);
    for (let k = 1; k <= 12; k++) {
      await page.mouse.move(grab.x + ((drop.x - grab.x) * k) / 12, grab.y + ((drop.y - grab.y) * k) / 12);
    }
    await page.mouse.up();
    const o = await obstaclesSettled();
    expect(o.dragging).toBe(false);
    expect(o.maxInFlight).toBe(1); // coalesced: never two updates at once
    expect(o.updates).toBeGreaterThan(o0.updates);
    const base = o.bases[0];
    expect(Math.hypot(base[0] - target![0], base[2] - target![2])).toBeLessThan(1); // it followed the pointer
    // the camera stayed put while the box was dragged
    expect(await page.evaluate(() => (window as any).__navbakeDemo.screenOf([0, 0, 0]))).toEqual(camera0);
    const p = (await state()).path!;
    expect(p.status).toBe('complete');
    expect(distanceToBox(before.points, base[0] - 0.6, base[0] + 0.6, base[2] - 0.6, base[2] + 0.6)).toBe(0);
    // clear of the whole box by most of the agent radius (see the test before)
    expect(distanceToBox(p.points, base[0] - 1.2, base[0] + 1.2, base[2] - 1.2, base[2] + 1.2)).toBeGreaterThan(0.15);

    await page.evaluate(() => (window as any).__navbakeDemo.clearObstacles());
    await obstaclesSettled();
    expect((await state()).path!.points).toEqual(before.points);
    expect(consoleErrors).toEqual([]);
  });

  it('a re-bake while a box moves gives no error: the update on the navmesh it replaces is dropped', async () => {
    // the tiled navmesh of the tests before; a box moved every few milliseconds while the same level bakes again,
    // so that an update() is running on the old navmesh when the new one replaces it (and disposes the old one)
    expect((await phase(['baked'])).stats!.tiles).toBeGreaterThan(1);
    const at = (await state()).points.YARD_OUTSIDE;
    expect(await page.evaluate((p) => (window as any).__navbakeDemo.dropObstacle(p), at)).toBe(0);
    for (let round = 0; round < 2; round++) {
      const r = await page.evaluate(async (p) => {
        const d = (window as any).__navbakeDemo;
        const baking = d.bake();
        let stop = false;
        let moves = 0;
        const mover = (async () => {
          while (!stop) {
            d.moveObstacle(0, [p[0] + (moves++ % 20) * 0.25, p[1], p[2]]);
            await new Promise((ok) => setTimeout(ok, 5));
          }
        })();
        await baking;
        await new Promise((ok) => setTimeout(ok, 300));
        stop = true;
        await mover;
        return { phase: d.phase, moves };
      }, at);
      expect(r.phase).toBe('baked');
      expect(r.moves).toBeGreaterThan(5);
      await obstaclesSettled();
      expect(await page.textContent('#message')).toBe('');
    }
    // A box the navmesh refuses (a NaN corner) is not dropped: the boxes and the next bake are as they were.
    const refused = await page.evaluate(() =>
      (window as any).__navbakeDemo.dropObstacle([NaN, 0, 0]).then(
        () => 'dropped',
        (e: Error) => e.message,
      ),
    );
    expect(refused).toMatch(/NaN|finite|number/i);
    expect((await obstacleState()).count).toBe(1);
    await page.evaluate(() => (window as any).__navbakeDemo.clearObstacles());
    await obstaclesSettled();
    expect((await obstacleState()).count).toBe(0);
    await page.evaluate(() => (window as any).__navbakeDemo.bake());
    expect((await state()).phase).toBe('baked');
    expect(await page.textContent('#message')).toBe('');
    expect(consoleErrors).toEqual([]);
  });

  it('Cancel stops a long bake, the page keeps drawing, and the next bake completes', async () => {
    const before = (await phase(['baked', 'loaded'])).bakesDone; // the bake before (the page's first, run alone) is done
    // A tiny cell size makes a bake of many seconds.
    await page.evaluate(() => void (window as any).__navbakeDemo.bake({ cellSize: 0.03, tileSize: 0 }));
    await page.waitForFunction(() => (window as any).__navbakeDemo.progressEvents >= 1, undefined, {
      timeout: 10_000,
      polling: 20,
    });
    await page.click('#cancel', { force: true });
    const c = await phase(['cancelled', 'baked', 'error'], 10_000);
    expect(c.phase).toBe('cancelled');
    // Measured in the page from the button's handler (the click itself waits for SwiftShader's slow frames).
    expect(c.cancelMs).toBeLessThan(1_000);
    expect(c.bakesDone).toBe(before);
    expect(c.framesDuringBake).toBeGreaterThanOrEqual(1); // the page kept drawing while the worker baked
    // The navmesh before is still the one in use, with its stats, its stage times and memory, and its stage views.
    const kept = await inspected();
    expect(kept.inspectPhase).toBe('done');
    expect(kept.stats!.polygons).toBeGreaterThan(50);
    expect(await page.textContent('#stats')).toMatch(/bake peak \d+\.\d MiB · wasm heap/);
    expect(await page.textContent('#stage-times')).toMatch(/stage times/);
    await setViews({ voxels: true });
    expect(await page.evaluate(() => (window as any).__navbakeDemo.voxelCount())).toBe(kept.inspection!.spans);
    await setViews({ voxels: false });

    await page.evaluate(() => void (window as any).__navbakeDemo.bake({ cellSize: 0.3 }));
    const s = await phase(['baked', 'error']);
    expect(s.phase).toBe('baked');
    expect(s.bakesDone).toBe(before + 1);
    expect(s.stats!.tiles).toBe(1);
    expect(s.path!.status).toBe('complete');
    expect(consoleErrors).toEqual([]);
  });

  it('a tiled bake replaced before it ends leaves none of its tiles drawn: the navmesh in use is what is drawn', async () => {
    const before = await page.evaluate(() => (window as any).__navbakeDemo.drawn());
    expect(before.inUse).toBe(true);
    expect(before.triangles).toBeGreaterThan(100);
    const polygons = (await state()).stats!.polygons;
    // a slow tiled bake that draws its tiles as they come, replaced by a bake that is cancelled before it draws any
    await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      d.options.tileDrawMs = 0;
      void d.bake({ cellSize: 0.1, tileSize: 16 });
    });
    await page.waitForFunction(() => (window as any).__navbakeDemo.partialDraws >= 2, undefined, { timeout: 20_000, polling: 10 });
    const partial = await page.evaluate(() => (window as any).__navbakeDemo.drawn());
    expect(partial.inUse).toBe(false);
    await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      d.options.tileDrawMs = 500;
      void d.bake({ cellSize: 0.3, tileSize: 0 });
      d.cancel();
    });
    const s = await phase(['cancelled', 'baked', 'error'], 10_000);
    expect(s.phase).toBe('cancelled');
    expect(s.stats!.polygons).toBe(polygons);
    expect(await page.evaluate(() => (window as any).__navbakeDemo.drawn())).toEqual(before);
    await page.evaluate(() => (window as any).__navbakeDemo.bake());
    expect((await state()).phase).toBe('baked');
  });

  it('stays responsive while a long bake runs: no main-thread task over 200 ms (the bake is in a worker)', async () => {
    // Work is started from the page's own tasks (a timer, as a click would be): Chromium leaves the tasks that run
    // page.evaluate's code out of the long-task timeline.
    // Control: the page's long-task observer does see a main thread blocked for 300 ms.
    const blockedAt = await page.evaluate(
      () =>
        new Promise<number>((ok) =>
          setTimeout(() => {
            const t = performance.now();
            while (performance.now() - t < 300);
            ok(t);
          }),
        ),
    );
    await page.waitForFunction(
      (t0) => (window as any).__navbakeDemo.longTasks.some((t: any) => t.duration >= 250 && Math.abs(t.start - t0) < 50),
      blockedAt,
      { timeout: 5_000 },
    );
    // Software WebGL (SwiftShader) draws each frame on the main thread here, 100-600 ms of it a frame while a worker
    // competes for the CPU: with drawing paused, the main thread's tasks are the page's own.
    await page.evaluate(() => ((window as any).__navbakeDemo.renderPaused = true));
    try {
      // A long solo bake (a 0.04 m cell: over two million columns), all of it in a worker.
      await page.evaluate(
        () => new Promise((ok) => setTimeout(() => (window as any).__navbakeDemo.bake({ cellSize: 0.04, tileSize: 0 }).then(ok))),
      );
      await page.waitForTimeout(500); // long-task entries arrive after their task
      const s = (await page.evaluate(() => {
        const d = (window as any).__navbakeDemo;
        return { ...JSON.parse(JSON.stringify(d)), frameTimes: d.frameTimes.slice() };
      })) as DemoState & { frameTimes: number[] };
      expect(s.phase).toBe('baked');
      const w = s.progressWindow!;
      expect(w.last - w.first).toBeGreaterThan(500); // long enough that a bake on this thread would show
      // Every main-thread task that overlapped the bake (from its first progress event to its last): progress
      // messages and frames. A bake on the main thread would be one task spanning the whole window.
      const during = s.longTasks.filter((t) => t.start < w.last && t.start + t.duration > w.first);
      const longest = during.reduce((m, t) => Math.max(m, t.duration), 0);
      expect(longest, JSON.stringify(during)).toBeLessThan(200);
      // and the animation loop kept running all along: no gap over 200 ms between frames in the window
      const frames = s.frameTimes.filter((t) => t >= w.first && t <= w.last);
      expect(frames.length).toBeGreaterThan((w.last - w.first) / 100);
      const gaps = [frames[0] - w.first, w.last - frames[frames.length - 1]];
      for (let k = 1; k < frames.length; k++) gaps.push(frames[k] - frames[k - 1]);
      expect(Math.max(...gaps)).toBeLessThan(200);
    } finally {
      await page.evaluate(() => ((window as any).__navbakeDemo.renderPaused = false));
    }
    await page.evaluate(() => (window as any).__navbakeDemo.bake({ cellSize: 0.3 }));
    expect((await inspected()).inspectPhase).toBe('done');
    const after = await state();
    expect(after.fps).toBeGreaterThan(0);
    expect(await page.textContent('#stats')).toMatch(/\d+ fps · \d+ ms\/frame/);
  });

  it('bakes a dropped .obj, and shows a .navbake exported from it when that is dropped back', async () => {
    // A 20 x 20 floor (two triangles) with a wall box across it, as an OBJ file dropped on the page.
    const obj = [
      'v -10 0 -10', 'v 10 0 -10', 'v 10 0 10', 'v -10 0 10',
      'v -1 0 -10', 'v 1 0 -10', 'v 1 3 -10', 'v -1 3 -10', 'v -1 0 4', 'v 1 0 4', 'v 1 3 4', 'v -1 3 4',
      'f 1 3 2', 'f 1 4 3',
      'f 8 7 11', 'f 8 11 12', 'f 5 9 12', 'f 5 12 8', 'f 6 7 11', 'f 6 11 10', 'f 9 10 11', 'f 9 11 12', 'f 5 6 7', 'f 5 7 8',
    ].join('\n');
    // A box on the built-in level (baked solo: the page bakes it in tiles of 32 cells first) does not carry over to
    // the new level, and the tile size goes back to the panel's.
    expect((await state()).stats!.tiles).toBe(1);
    // Two boxes dropped one right after the other (the page bakes in tiles first): the second goes beside the
    // first, not into it (the path is re-planned round a box only once the navmesh has it).
    const dropped = await page.evaluate(() => {
      const d = (window as any).__navbakeDemo;
      return Promise.all([d.dropObstacle(), d.dropObstacle()]);
    });
    expect(dropped.sort()).toEqual([0, 1]);
    expect(await page.evaluate(() => (window as any).__navbakeDemo.config.tileSize)).toBe(32);
    const [b0, b1] = (await obstacleState()).bases;
    expect(Math.max(Math.abs(b0![0] - b1![0]), Math.abs(b0![2] - b1![2])), JSON.stringify([b0, b1])).toBeGreaterThanOrEqual(2.4);
    await page.evaluate((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'room.obj', { type: 'text/plain' }));
      window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, obj);
    await page.waitForFunction(() => (window as any).__navbakeDemo.source === 'room.obj', undefined, { timeout: 5_000 });
    const s = await phase(['baked', 'error']);
    expect(s.error).toBeNull();
    expect((await obstacleState()).count).toBe(0);
    expect(s.stats!.tiles).toBe(1);
    expect(await page.evaluate(() => (window as any).__navbakeDemo.config.tileSize)).toBe(0);
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

    // The loaded navmesh is not replaced behind the user's back: a box asks for a bake first (a loaded navmesh has no
    // tile caches), a changed setting waits for Bake; Bake then shows the level's bake under its own name.
    const started = (await state()).bakesStarted;
    expect(await page.evaluate(() => (window as any).__navbakeDemo.dropObstacle())).toBe(-1);
    expect(await page.textContent('#message')).toMatch(/room\.navbake is a loaded navmesh: it takes no obstacles/);
    const radius = await page.evaluate(() => (window as any).__navbakeDemo.config.agentRadius);
    const field = page.locator('.lil-controller').filter({ has: page.locator('.lil-name', { hasText: /^agentRadius$/ }) }).locator('input').last();
    await field.fill(String(radius + 0.1));
    await field.press('Enter');
    await page.waitForTimeout(700); // bake on change starts 300 ms after a change
    const still = await state();
    expect(still.bakesStarted).toBe(started);
    expect(still.phase).toBe('loaded');
    expect(still.source).toBe('room.navbake (loaded)');
    expect(await page.textContent('#message')).toMatch(/room\.navbake is a loaded navmesh: the settings apply to the next bake/);
    const baked = await page.evaluate(async (r) => {
      const d = (window as any).__navbakeDemo;
      d.config.agentRadius = r;
      await d.bake();
      return { phase: d.phase, source: d.source };
    }, radius);
    expect(baked).toEqual({ phase: 'baked', source: 'room.obj' });
    expect(consoleErrors).toEqual([]);
  });

  it('bakes a dropped meshopt- or Draco-compressed .glb, loading the decoder it needs', async () => {
    // A 20 x 20 floor with a 2 x 2 x 14 wall across it, as glTF compressed the two ways the web uses.
    const room = () => {
      const doc = new Document();
      const buf = doc.createBuffer();
      // prettier-ignore
      const positions = new Float32Array([
        -10, 0, -10, 10, 0, -10, 10, 0, 10, -10, 0, 10,
        -1, 0, -10, 1, 0, -10, 1, 3, -10, -1, 3, -10, -1, 0, 4, 1, 0, 4, 1, 3, 4, -1, 3, 4,
      ]);
      // prettier-ignore
      const indices = new Uint16Array([
        0, 2, 1, 0, 3, 2,
        7, 6, 10, 7, 10, 11, 4, 8, 11, 4, 11, 7, 5, 6, 10, 5, 10, 9, 8, 9, 10, 8, 10, 11, 4, 5, 6, 4, 6, 7,
      ]);
      const prim = doc
        .createPrimitive()
        .setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(positions).setBuffer(buf))
        .setIndices(doc.createAccessor().setType('SCALAR').setArray(indices).setBuffer(buf));
      doc.createScene().addChild(doc.createNode('room').setMesh(doc.createMesh('room').addPrimitive(prim)));
      return doc;
    };
    await MeshoptEncoder.ready;
    const io = new NodeIO()
      .registerExtensions(ALL_EXTENSIONS)
      .registerDependencies({ 'draco3d.encoder': await draco3d.createEncoderModule(), 'meshopt.encoder': MeshoptEncoder });
    const meshopt = room();
    meshopt.createExtension(EXTMeshoptCompression).setRequired(true).setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.FILTER });
    const draco = room();
    draco.createExtension(KHRDracoMeshCompression).setRequired(true);
    for (const [name, doc] of [['meshopt.glb', meshopt], ['draco.glb', draco]] as const) {
      const bytes = Array.from(await io.writeBinary(doc));
      const r = await page.evaluate(
        async ([n, b]) => {
          const d = (window as any).__navbakeDemo;
          await d.open(new File([new Uint8Array(b)], n));
          return { source: d.source, phase: d.phase, error: d.error, triangles: d.stats?.triangles, path: d.findPath([-6, 0, -8], [6, 0, -8]) };
        },
        [name, bytes] as const,
      );
      expect(r.source, name).toBe(name);
      expect(r.error, name).toBeNull();
      expect(r.path.status, name).toBe('complete');
      expect(r.path.length, name).toBeGreaterThan(2 * Math.hypot(6, 12) - 1); // round the wall's end at z = 4
    }
    expect(consoleErrors).toEqual([]);
  });

  it('says which dropped glTF it could not read and why, and keeps the level it shows', async () => {
    const before = await page.evaluate(() => (window as any).__navbakeDemo.source);
    const drop = async (name: string, bytes: number[] | string) => {
      await page.evaluate(
        async ([n, b]) => {
          const d = (window as any).__navbakeDemo;
          await d.open(new File([typeof b === 'string' ? b : new Uint8Array(b)], n));
        },
        [name, bytes] as const,
      );
      return page.textContent('#message');
    };
    // 'glTF' magic, version 2, a length past the end: three.js fails inside a DataView
    const glb = [0x67, 0x6c, 0x54, 0x46, 2, 0, 0, 0, 0xff, 0, 0, 0, 4, 0, 0, 0, 0x4a, 0x53, 0x4f, 0x4e];
    expect(await drop('broken.glb', glb)).toMatch(/^broken\.glb: not a readable binary glTF file: \S/);
    // a .gltf naming a .bin beside it, which a drop cannot reach: refused before three.js would fetch it
    const gltf = JSON.stringify({
      asset: { version: '2.0' },
      buffers: [{ uri: 'level.bin', byteLength: 36 }],
      bufferViews: [{ buffer: 0, byteLength: 36 }],
      accessors: [{ bufferView: 0, componentType: 5126, count: 3, type: 'VEC3', max: [1, 0, 1], min: [0, 0, 0] }],
      meshes: [{ primitives: [{ attributes: { POSITION: 0 } }] }],
      nodes: [{ mesh: 0 }],
      scenes: [{ nodes: [0] }],
    });
    expect(await drop('level.gltf', gltf)).toBe(
      'level.gltf: names files beside it (level.bin), which a dropped file cannot reach: drop a .glb, or a .gltf with its data embedded',
    );
    expect(await drop('broken.gltf', '{ "asset": ')).toMatch(/^broken\.gltf: not a readable glTF file: \S/);
    // files that read but hold no triangles: an .obj without faces, one of garbage, a glTF without meshes
    const empty = JSON.stringify({ asset: { version: '2.0' }, scenes: [{ nodes: [] }], scene: 0 });
    for (const [name, text] of [['points.obj', 'v 0 0 0\nv 1 0 0\nv 0 0 1\n'], ['garbage.obj', 'not an obj file\n'], ['empty.gltf', empty]]) {
      expect(await drop(name, text)).toBe(`${name}: no triangles in it to bake (the level shown stays)`);
    }
    // a file of garbage: OBJLoader's warning per line it skips (thousands) comes to the console as one line
    const warnings: string[] = [];
    const onConsole = (m: { type(): string; text(): string }) => {
      if (m.type() === 'warning') warnings.push(m.text());
    };
    page.on('console', onConsole);
    try {
      const lines = Array.from({ length: 500 }, (_, i) => `xyz garbage ${i}`).join('\n');
      expect(await drop('garbage2.obj', lines)).toBe('garbage2.obj: no triangles in it to bake (the level shown stays)');
    } finally {
      page.off('console', onConsole);
    }
    // (the other: the page's own "could not open garbage2.obj")
    expect(warnings.length).toBe(2);
    expect(warnings.filter((w) => /^garbage2\.obj: 500 lines skipped \(.*xyz garbage 0/.test(w)).length).toBe(1);
    // the level and its navmesh stay in use
    const s = await state();
    expect(s.source).toBe(before);
    expect(s.phase).toBe('baked');
    expect(await page.evaluate(() => (window as any).__navbakeDemo.findPath([-6, 0, -8], [6, 0, -8]).status)).toBe('complete');
    expect(consoleErrors).toEqual([]); // nothing was fetched
  });

  it('shows a dropped model whose bake fails with no navmesh: nothing drawn, no path, nothing to export', async () => {
    // a triangle 30 km wide: 100000 columns at 0.3 m, too many for a solo bake (NB_ERR_TOO_LARGE, before any work)
    await page.evaluate(() => ((window as any).__navbakeDemo.config.tileSize = 0));
    const r = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      await d.open(new File(['v 0 0 0\nv 30000 0 0\nv 0 0 30000\nf 1 2 3\n'], 'huge.obj'));
      return { phase: d.phase, source: d.source, error: d.error, stats: d.stats, bytes: d.saveBytes(), drawn: d.drawn(), path: d.path };
    });
    expect(r.phase).toBe('error');
    expect(r.error).toMatch(/^NB_ERR_TOO_LARGE/);
    expect(r.source).toBe('huge.obj');
    expect(r.stats).toBeNull();
    expect(r.bytes).toBeNull();
    expect(r.drawn).toEqual({ inUse: true, triangles: 0 });
    expect(r.path).toBeNull();
    expect(await page.textContent('#message')).toContain('huge.obj has no navmesh');
    expect(await page.textContent('#path-info')).toBe('Path: no navmesh');
    const exportButton = page.locator('.lil-controller').filter({ hasText: 'Export .navbake' }).locator('button');
    expect(await exportButton.isDisabled()).toBe(true);
  });

  it('refuses a dropped model with a vertex that is not a finite point, and says when a bake finds nothing walkable', async () => {
    const r = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      const before = d.source;
      // (1e39 is beyond float32: Infinity in the position array, as a NaN is)
      for (const v of ['v nan 0 0', 'v 1e39 0 0']) await d.open(new File([`${v}\nv 10 0 0\nv 0 0 10\nf 1 3 2\n`], 'bad.obj'));
      const refused = { source: d.source, message: document.getElementById('message')!.textContent, view: d.screenOf([0, 0, 0]) };
      // one triangle facing down (its winding reversed): it bakes to no polygon
      await d.open(new File(['v 0 0 0\nv 10 0 0\nv 0 0 10\nf 1 2 3\n'], 'down.obj'));
      return { before, refused, phase: d.phase, source: d.source, polygons: d.stats?.polygons };
    });
    // The level shown stays (a NaN vertex made the camera NaN: a blank view that Frame level did not mend).
    expect(r.refused.source).toBe(r.before);
    expect(r.refused.message).toMatch(/^bad\.obj: a vertex is at \(Infinity, 0, 0\), not a finite point/);
    expect(Number.isFinite(r.refused.view?.x) && Number.isFinite(r.refused.view?.y)).toBe(true);
    expect([r.phase, r.source, r.polygons]).toEqual(['baked', 'down.obj', 0]);
    expect(await page.textContent('#message')).toMatch(/^no walkable surface/);
  });

  it('on a page 800 pixels wide, frames the level beside the HUD: the panel starts folded, the path ends are in view', async () => {
    // At 640 to 930 pixels the open panel left too little room beside the HUD, and both ends were framed under them.
    const small = await context!.newPage();
    try {
      await small.setViewportSize({ width: 800, height: 600 });
      await small.goto(pageUrl);
      await small.waitForFunction(() => (window as any).__navbakeDemo?.phase === 'baked', undefined, { timeout: 20_000 });
      const r = await small.evaluate(() => {
        const d = (window as any).__navbakeDemo;
        return {
          hud: d.hudRect(),
          panel: d.panelRect(),
          ends: [d.screenOf(d.points.LEVEL_START), d.screenOf(d.points.LEVEL_END)],
        };
      });
      expect(r.panel.height).toBeLessThan(60); // folded: its title only
      for (const e of r.ends) {
        expect(e.x).toBeGreaterThan(r.hud.right);
        expect(e.x).toBeLessThan(800);
        expect(e.y).toBeGreaterThan(r.panel.bottom);
        expect(e.y).toBeLessThan(600);
      }
    } finally {
      await small.close();
    }
  });

  it('keeps the HUD in reach on a small page: it scrolls, and on a narrow page it sits along the bottom', async () => {
    try {
      await page.setViewportSize({ width: 800, height: 420 });
      const low = await page.evaluate(() => {
        const hud = document.getElementById('hud')!;
        hud.scrollTop = hud.scrollHeight;
        return {
          hud: hud.getBoundingClientRect().toJSON(),
          scrolls: hud.scrollHeight > hud.clientHeight,
          info: document.getElementById('path-info')!.getBoundingClientRect().toJSON(),
          height: innerHeight,
        };
      });
      expect(low.scrolls).toBe(true);
      expect(low.hud.bottom).toBeLessThanOrEqual(low.height);
      // scrolled down, the path line (near the end) is in view
      expect(low.info.bottom).toBeLessThanOrEqual(low.hud.bottom);
      expect(low.info.top).toBeGreaterThanOrEqual(low.hud.top);
      await page.setViewportSize({ width: 400, height: 700 });
      const narrow = await page.evaluate(() => ({ hud: document.getElementById('hud')!.getBoundingClientRect().toJSON(), height: innerHeight }));
      expect(narrow.hud.bottom).toBeLessThanOrEqual(narrow.height);
      expect(narrow.hud.top).toBeGreaterThan(narrow.height / 2); // along the bottom, the level above it
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('a level chosen while a generated world downloads wins; Cancel stops a download', async () => {
    // the world's file comes late, as over a slow network
    let delay = 1500;
    const slow = async (route: import('playwright-core').Route) => {
      await new Promise((ok) => setTimeout(ok, delay));
      await route.continue().catch(() => undefined); // the page may have stopped the download
    };
    await page.route(/world-100000\.bin$/, slow);
    try {
      await page.evaluate(async () => {
        const d = (window as any).__navbakeDemo;
        const world = d.loadWorld(100000);
        await new Promise((ok) => setTimeout(ok, 300));
        await d.builtIn();
        await world;
      });
      await page.waitForTimeout(1800); // past the world's arrival
      const s = await state();
      expect(s.phase).toBe('baked');
      expect(s.source).toBe('built-in level');
      expect(s.world).toBeNull();
      expect(s.path?.status).toBe('complete');
      // Cancel during a download: the level and navmesh before stay
      delay = 5000;
      await page.evaluate(() => void (window as any).__navbakeDemo.loadWorld(100000));
      expect(await page.textContent('#progress-text')).toBe('downloading world-100000.bin…');
      expect(await page.isEnabled('#cancel')).toBe(true);
      await page.click('#cancel', { force: true });
      const c = await phase(['cancelled', 'baked', 'error'], 10_000);
      expect(c.phase).toBe('cancelled');
      expect(c.source).toBe('built-in level');
      await page.waitForTimeout(500);
      const after = await state();
      expect(after.world).toBeNull();
      expect(after.stats!.polygons).toBe(s.stats!.polygons);
      expect(await page.evaluate(() => (window as any).__navbakeDemo.drawn().inUse)).toBe(true);
    } finally {
      await page.unroute(/world-100000\.bin$/, slow);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('shows the generated world and bakes it in tiles, nearest the view first, drawing the tiles as they come', async () => {
    const r = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      d.options.workers = 2;
      d.options.tileDrawMs = 0; // draw the tiles so far after every tile (the page's default: at most every 500 ms)
      d.renderPaused = true; // software WebGL: 100k triangles a frame would only slow the test down
      await d.loadWorld(100000);
      d.renderPaused = false;
      return {
        phase: d.phase,
        error: d.error,
        source: d.source,
        world: d.world,
        tiles: d.stats?.tiles,
        polygons: d.stats?.polygons,
        order: d.tileOrder as [number, number][],
        centers: d.tileCenters() as [number, number][],
        focus: d.focus as Vec3,
        draws: d.partialDraws,
        path: d.path,
        inspectPhase: d.inspectPhase,
      };
    });
    // framed whole, the world is seen from far off: the path's tube and markers grow to stay visible
    await page.waitForTimeout(100);
    const scale = await page.evaluate(() => (window as any).__navbakeDemo.markScale);
    expect(scale).toBeGreaterThan(2);
    expect(r.error).toBeNull();
    expect(r.phase).toBe('baked');
    expect(r.world).toBe(100000);
    expect(r.source).toMatch(/^generated world, 99\d{3} triangles$/);
    // the 100k world: 144 tiles of 64 cells with polygons (the native tool's `bake --tile-size 64` count)
    expect(r.tiles).toBeGreaterThan(100);
    expect(r.polygons).toBeGreaterThan(500);
    // every tile with polygons came through onTile once, and the helper drew the tiles so far as they came
    expect(r.order.length).toBe(r.tiles);
    expect(new Set(r.order.map(([x, z]) => `${x},${z}`)).size).toBe(r.tiles);
    expect(r.draws).toBeGreaterThan(r.tiles! / 2);
    // nearest-first: with 2 workers and 2 tiles each in flight, arrival order follows the distance from the focus
    // (the middle of the view) up to a few places; the first tile is one of the 4 nearest
    const dist = r.centers.map(([x, z]) => Math.hypot(x - r.focus[0], z - r.focus[2]));
    const byDist = dist.map((_, i) => i).sort((a, b) => dist[a] - dist[b]);
    const rank = new Array<number>(dist.length);
    byDist.forEach((i, k) => (rank[i] = k));
    expect(rank[0]).toBeLessThan(4);
    const n = dist.length;
    const spearman = 1 - (6 * rank.reduce((sum, k, i) => sum + (k - i) ** 2, 0)) / (n * (n * n - 1));
    expect(spearman).toBeGreaterThan(0.95);
    // a big world is inspected only on demand (no stage view is on); the stage bars are the bake's own timers
    expect(r.inspectPhase).toBe('idle');
    expect(await page.textContent('#stage-times')).toContain(`summed over ${r.tiles} tiles`);
    // a path from the middle of the view to a far point it reaches
    expect(r.path?.status).toBe('complete');
    expect(Math.hypot(r.path!.end[0] - r.path!.start[0], r.path!.end[2] - r.path!.start[2])).toBeGreaterThan(50);
    expect(consoleErrors).toEqual([]);
  }, 60_000);
  it('gives a voxel agent coarser voxels on a big world, says so in the HUD, and refuses one that would need too coarse', async () => {
    // still the 100k-triangle world of the test before: 215 x 32 x 215 m, about 81M voxels at the bake's 0.3 x 0.2 m
    expect((await state()).world).toBe(100000);
    const r = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      d.renderPaused = true;
      try {
        const path = await d.setAgent('fly');
        return { path, voxels: d.voxels, config: d.config, source: d.source, grid: d.voxelGrid()?.dims };
      } finally {
        d.renderPaused = false;
      }
    });
    expect(r.voxels.phase).toBe('done');
    const plan = r.voxels.plan!;
    expect(plan.coarsened).toBe(true);
    expect(plan.cellSize).toBeGreaterThan(r.config.cellSize as number);
    expect(plan.cellHeight).toBeGreaterThan(r.config.cellHeight as number);
    expect(r.grid).toEqual(plan.dims);
    expect(plan.voxels).toBe(r.grid[0] * r.grid[1] * r.grid[2]);
    expect(plan.voxels).toBeLessThanOrEqual(20_000_000);
    expect(plan.voxels).toBeGreaterThan(10_000_000); // coarser only as far as the budget needs
    await hudShows(`voxels of ${plan.cellSize} x ${plan.cellHeight} m (coarser than the bake's 0.3 x 0.2 m: at most 20.00M voxels)`);
    expect(r.path?.mode).toBe('fly');
    expect(r.path?.source).toBe(r.source);
    expect(r.path?.status).not.toBe('none');

    // With a budget of 1M voxels they would be about 1.3 m wide, more than the agent's radius: refused, no path.
    const refused = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      d.options.voxelBudget = 1_000_000;
      try {
        const path = await d.setAgent('climb');
        return { path, voxels: d.voxels, grid: d.voxelGrid(), info: document.getElementById('path-info')!.textContent };
      } finally {
        d.options.voxelBudget = 20_000_000;
      }
    });
    expect(refused.voxels.phase).toBe('refused');
    expect(refused.path).toBeNull();
    expect(refused.grid).toBeNull();
    expect(refused.info).toMatch(/^Path, climb \(voxels\): refused: \d+\.\d\dM voxels at 0\.3 x 0\.2 m; within 1\.00M they would be 1\.\d+ m wide, more than the agent's radius \(0\.6 m\)/);
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  it('never draws a voxel path from the level before: a level change drops the grid being made for the old one', async () => {
    // Still the generated world: a new voxel size for it (a smaller budget) starts a grid of it that takes a while
    // (millions of voxels), and the built-in level takes its place before that grid is there.
    expect((await state()).world).toBe(100000);
    const r = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      const dropped = d.voxels.dropped;
      const shown = d.pathsShown.length;
      d.options.voxelBudget = 12_000_000;
      d.renderPaused = true;
      try {
        void d.setAgent('climb');
        const phase = d.voxels.phase;
        const started = d.voxels.started;
        await d.builtIn(); // its markers are the default ones
        await d.pathSettled(); // its grid made, and its path searched
        // past the time the world's grid would have taken
        await new Promise((ok) => setTimeout(ok, 3000));
        return {
          phase,
          started: d.voxels.started - started,
          dropped: d.voxels.dropped - dropped,
          shown: d.pathsShown.slice(shown),
          path: d.path,
          voxels: d.voxels,
          grid: d.voxelGrid()?.dims,
        };
      } finally {
        d.options.voxelBudget = 20_000_000;
        d.renderPaused = false;
      }
    });
    expect(r.phase).toBe('running');
    expect(r.started).toBe(1); // the built-in level's
    expect(r.dropped).toBe(1); // the world's grid was dropped, never used
    expect(r.voxels.source).toBe('built-in level');
    expect(r.grid).toEqual(r.voxels.plan!.dims);
    expect([r.grid![0], r.grid![2]]).toEqual([201, 201]); // 60 m of 0.3 m voxels and the one the far walls lie in (the world's: 215 m of 0.55 m)
    // Every path drawn since is the built-in level's, found on its grid (on the world's grid its start is off the
    // grid: no path).
    expect(r.shown.length).toBeGreaterThanOrEqual(1);
    for (const p of r.shown) {
      expect(p.source).toBe('built-in level');
      expect(p.mode).toBe('climb');
      expect(p.grid).toEqual(r.grid);
      expect(p.status).toBe('complete');
    }
    expect(r.path!.status).toBe('complete');
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  it('flies and climbs through the built-in level\'s voxels between the default markers; walk (navmesh) gives its path back', async () => {
    await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      await d.setAgent('navmesh');
      await d.builtIn();
    });
    const nav = (await state()).path!;
    expect(nav.mode).toBe('navmesh');
    expect(nav.status).toBe('complete');

    // Picked in the panel, as a user does.
    await agentSelect().selectOption('fly (voxels)');
    await page.waitForFunction(() => (window as any).__navbakeDemo.path?.mode === 'fly', undefined, { timeout: 30_000 });
    const fly = await state();
    expect(fly.voxels.phase).toBe('done');
    // the bake's cell size; 6.6 m of level plus voxelize()'s headroom (the agent's 2 m) in 0.2 m layers
    expect(fly.voxels.plan).toMatchObject({ cellSize: 0.3, cellHeight: 0.2, coarsened: false });
    const dims = fly.voxels.plan!.dims;
    expect([dims[0], dims[2]]).toEqual([201, 201]);
    expect(dims[1]).toBeGreaterThanOrEqual(34 + 10);
    expect(dims[1]).toBeLessThanOrEqual(40 + 10);
    expect(fly.path!.status).toBe('complete');
    expect(fly.path!.start).toEqual(fly.points.LEVEL_START);
    expect(fly.path!.end).toEqual(fly.points.LEVEL_END);
    const f = fly.path!.points;
    // it ends on the tower top (y 6: feet in the voxel above it) and takes a shorter way than the navmesh walker,
    // who must go round by the ramps
    expect(Math.abs(f[f.length - 2] - 6)).toBeLessThan(0.3);
    expect(fly.path!.length).toBeLessThan(nav.length);
    expect(await page.textContent('#path-info')).toMatch(/^Path, fly \(voxels\): complete, \d+\.\d\d m, \d+ points · grid of 1\.\d\dM voxels, 0\.3 x 0\.2 m$/);
    await hudShows(`fly (voxels): 201 x ${fly.voxels.plan!.dims[1]} x 201 = `);
    expect(await page.textContent('#stats')).toMatch(/fly \(voxels\): 201 x \d+ x 201 = 1\.\d\dM voxels of 0\.3 x 0\.2 m · voxelized in \d+ ms · path \d+\.\d ms/);
    const fc = await checkVoxelPath();
    expect(fc.control).toBe(true); // the check sees the level's solid voxels
    expect(fc.samples).toBeGreaterThan(1000);
    expect(fc.solidSamples).toBe(0);
    expect(fc.blockedBoxes).toBe(0);

    await agentSelect().selectOption('climb (voxels)');
    await page.waitForFunction(() => (window as any).__navbakeDemo.path?.mode === 'climb', undefined, { timeout: 30_000 });
    const climb = await state();
    expect(climb.voxels.started).toBe(fly.voxels.started); // the level's grid is made once
    expect(climb.path!.status).toBe('complete');
    const c = climb.path!.points;
    expect(Math.abs(c[c.length - 2] - 6)).toBeLessThan(0.3);
    expect(c).not.toEqual(f); // a path of its own, not the flight's
    const cc = await checkVoxelPath();
    expect(cc.samples).toBeGreaterThan(1000);
    expect(cc.solidSamples).toBe(0);
    expect(cc.blockedBoxes).toBe(0);
    expect(cc.unclung).toBe(0); // every point of a climber's path touches a surface

    await agentSelect().selectOption('walk (navmesh)');
    await page.waitForFunction(() => (window as any).__navbakeDemo.path?.mode === 'navmesh', undefined, { timeout: 10_000 });
    const back = (await state()).path!;
    expect(back.points).toEqual(nav.points);
    expect(back.length).toBe(nav.length);
    expect(await page.textContent('#path-info')).toMatch(/^Path: complete, \d+\.\d\d m, \d+ points$/);
    expect(consoleErrors).toEqual([]);
  }, 60_000);

  it('searches a voxel path in slices: the page keeps running, a new request aborts the one running, only the latest is drawn', async () => {
    // Still the built-in level with its voxels. A flight from outside into the closed tower (x 23..29, z -20..-12:
    // free voxels inside, walls all round) cannot get there: with heuristic weight 1 the search visits voxels until
    // the demo's node budget (2^20) runs out, over a second here; on the main thread in one piece it would freeze
    // the page that long.
    const before = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      await d.setAgent('fly');
      return { path: d.path, nodes: d.options.voxelNodes };
    });
    expect(before.path?.status).toBe('complete');
    expect(before.nodes).toBe(1 << 20);
    const r = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      const info = () => document.getElementById('path-info')!.textContent!;
      const stats = () => document.getElementById('stats')!.textContent!;
      d.renderPaused = true; // software WebGL takes 100+ ms a frame on the main thread: only the page's own work is left
      d.options.voxelWeight = 1;
      const ticks: number[] = [];
      const timer = setInterval(() => ticks.push(performance.now()), 5);
      const frames = d.frames;
      const shown = d.pathsShown.length;
      const counts = { ...d.voxelSearch };
      try {
        const inTower = [26, 1, -16];
        const t0 = performance.now();
        const first = d.setPath(d.points.LEVEL_START, inTower);
        const searching = { path: d.path, info: info(), stats: stats(), phase: d.voxelSearch.phase };
        await new Promise((ok) => setTimeout(ok, 150));
        const running = { path: d.path, phase: d.voxelSearch.phase, shown: d.pathsShown.length - shown };
        // the second request, from the other side of the level: the first search is aborted, its path never drawn
        const t1 = performance.now();
        d.setPath([-29, 1, -29], inTower);
        const path = await d.pathSettled();
        const t2 = performance.now();
        clearInterval(timer);
        let gap = 0;
        for (let i = 1; i < ticks.length; i++) gap = Math.max(gap, ticks[i] - ticks[i - 1]);
        gap = Math.max(gap, (ticks[0] ?? t2) - t0, t2 - (ticks[ticks.length - 1] ?? t0));
        return {
          first,
          searching,
          running,
          path,
          info: info(),
          shown: d.pathsShown.slice(shown),
          started: d.voxelSearch.started - counts.started,
          aborted: d.voxelSearch.aborted - counts.aborted,
          error: d.voxelSearch.error,
          gap,
          ticks: ticks.length,
          frames: d.frames - frames,
          secondMs: t2 - t1,
          totalMs: t2 - t0,
        };
      } finally {
        clearInterval(timer);
        d.options.voxelWeight = 1.5;
        d.renderPaused = false;
      }
    });
    // While it runs no path is drawn and the path line and the HUD say it is searching.
    expect(r.first).toBeNull();
    expect(r.searching.path).toBeNull();
    expect(r.searching.phase).toBe('searching');
    expect(r.searching.info).toMatch(/^Path, fly \(voxels\): searching… · grid of 1\.\d\dM voxels, 0\.3 x 0\.2 m$/);
    expect(r.searching.stats).toContain(' · path: searching…');
    expect(r.running).toEqual({ path: null, phase: 'searching', shown: 0 });
    // Two searches, the first aborted (silently: no error) and only the second's path drawn.
    expect(r.started).toBe(2);
    expect(r.aborted).toBe(1);
    expect(r.error).toBeNull();
    expect(r.shown).toHaveLength(1);
    expect(r.path!.start).toEqual([-29, 1, -29]);
    expect(r.path!.end).toEqual([26, 1, -16]);
    expect(r.path!.status).toBe('partial'); // the nearest it got to the tower's inside
    expect(r.info).toMatch(/^Path, fly \(voxels\): partial \(the search's 1048576 nodes ran out\), \d+\.\d\d m, \d+ points · /);
    // A long search, and the time shown is its wall time, from the request to the path.
    expect(r.secondMs).toBeGreaterThan(250);
    expect(r.path!.ms).toBeGreaterThan(r.secondMs - 20);
    expect(r.path!.ms).toBeLessThanOrEqual(r.secondMs + 1);
    // The page kept running all along: timers every few ms, animation frames, never a gap anywhere near the search's
    // length (in one piece the first search alone would have blocked it for hundreds of ms).
    expect(r.gap).toBeLessThan(150);
    expect(r.ticks).toBeGreaterThan(r.totalMs / 50);
    expect(r.frames).toBeGreaterThan(r.totalMs / 100);
    await hudShows(' · path ');
    expect(consoleErrors).toEqual([]);

    // A level change during a search: the search stops, its path is never drawn (the grid goes with its level).
    const lv = await page.evaluate(async () => {
      const d = (window as any).__navbakeDemo;
      d.renderPaused = true;
      d.options.voxelWeight = 1;
      const shown = d.pathsShown.length;
      const counts = { ...d.voxelSearch };
      try {
        d.setPath(d.points.LEVEL_START, [26, 1, -16]);
        await new Promise((ok) => setTimeout(ok, 100));
        const phase = d.voxelSearch.phase;
        const level = d.pathsShown.length ? d.pathsShown[d.pathsShown.length - 1].level : 0;
        await d.builtIn(); // the default markers, on the new level
        const path = await d.pathSettled();
        return {
          phase,
          level,
          path,
          shown: d.pathsShown.slice(shown),
          started: d.voxelSearch.started - counts.started,
          aborted: d.voxelSearch.aborted - counts.aborted,
          error: d.voxelSearch.error,
          grid: d.voxelGrid()?.dims,
        };
      } finally {
        d.options.voxelWeight = 1.5;
        d.renderPaused = false;
        await d.setAgent('navmesh');
      }
    });
    expect(lv.phase).toBe('searching');
    expect(lv.aborted).toBe(1);
    expect(lv.started).toBe(2); // the tower's, then the new level's
    expect(lv.error).toBeNull();
    expect(lv.shown).toHaveLength(1);
    expect(lv.shown[0].level).toBeGreaterThan(lv.level);
    expect(lv.shown[0].grid).toEqual(lv.grid);
    expect(lv.path!.status).toBe('complete');
    expect(lv.path!.end).toEqual((await state()).points.LEVEL_END);
    expect(consoleErrors).toEqual([]);
  }, 90_000);

});
