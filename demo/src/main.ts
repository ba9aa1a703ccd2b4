// The navbake demo: bakes the built-in level (or a dropped model) in Web Workers, shows the navmesh with the
// package's three.js helpers, and finds paths between clicked points. Every bake option is in the panel.
// window.__navbakeDemo exposes the state and a few actions for the browser tests (tests/e2e/demo.test.ts).
import GUI, { type Controller } from 'lil-gui';
import {
  bake,
  defaultWorkerCount,
  DEFAULTS,
  NavMesh,
  type BakeProgress,
  type BakeStage,
  type NavBakeConfig,
  type Vec3Like,
} from 'navbake';
import { geometryFromObject3D, NavMeshHelper, PathHelper } from 'navbake/three';
import {
  AmbientLight,
  Box3,
  BufferAttribute,
  BufferGeometry,
  Color,
  CylinderGeometry,
  DirectionalLight,
  Group,
  HemisphereLight,
  LineBasicMaterial,
  LineSegments,
  Mesh,
  MeshBasicMaterial,
  type Object3D,
  PerspectiveCamera,
  Raycaster,
  Scene,
  SphereGeometry,
  Vector2,
  Vector3,
  WebGLRenderer,
  WireframeGeometry,
} from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { OBJLoader } from 'three/examples/jsm/loaders/OBJLoader.js';
import { buildLevel, LEVEL_END, LEVEL_START, YARD_INSIDE, YARD_OUTSIDE, type Vec3 } from './level';
import './style.css';

// ---- state (also the test hook) ------------------------------------------------------------------------------

type Phase = 'loading' | 'baking' | 'baked' | 'cancelled' | 'error' | 'loaded';

interface PathState {
  status: string;
  length: number;
  points: number[];
  start: Vec3;
  end: Vec3;
}

interface BakeStats {
  ms: number;
  polygons: number;
  tiles: number;
  triangles: number;
  bytes: number;
}

type Views = { level: boolean; navmesh: boolean; edges: boolean; detail: boolean; tiles: boolean; path: boolean };

const demo = {
  phase: 'loading' as Phase,
  /** bakes started / finished */
  bakesStarted: 0,
  bakesDone: 0,
  /** progress events of the current (or last) bake */
  progressEvents: 0,
  lastProgress: null as BakeProgress | null,
  /** frames drawn: keeps counting while a bake runs (it is off the main thread) */
  frames: 0,
  /** frames drawn while the last bake ran, and its longest frame gap [ms] */
  framesDuringBake: 0,
  longestFrameDuringBake: 0,
  /** from Cancel to the bake's end [ms] */
  cancelMs: null as number | null,
  stats: null as BakeStats | null,
  path: null as PathState | null,
  error: null as string | null,
  source: 'built-in level',
  /** Known points of the built-in level. */
  points: { LEVEL_START, LEVEL_END, YARD_OUTSIDE, YARD_INSIDE },
  config: { ...DEFAULTS } as Required<NavBakeConfig>,
  options: { workers: defaultWorkerCount(), autoBake: true },
  views: { level: true, navmesh: true, edges: true, detail: false, tiles: true, path: true } as Views,
  /** Starts a bake with the panel's settings (plus `config` over them); resolves when it ends, however. */
  bake: (config?: NavBakeConfig) => runBake(config),
  cancel: () => cancelBake(),
  /** The shown navmesh's .navbake bytes (what Export downloads). */
  saveBytes: () => nav?.save() ?? null,
  /** Opens a file as if dropped on the page (.glb / .gltf / .obj / .navbake). */
  open: (file: File) => openFile(file),
  /** Sets start and end and draws the path between them. */
  setPath: (start: Vec3, end: Vec3) => {
    startPoint = start;
    endPoint = end;
    return updatePath();
  },
  /** A path query on the shown navmesh, without changing what is drawn. */
  findPath: (start: Vec3Like, end: Vec3Like) => {
    if (!nav) return null;
    const r = nav.findPath(start, end);
    return { status: r.status, length: r.length, points: Array.from(r.points) };
  },
  setView: (name: keyof Views, on: boolean): void => {
    demo.views[name] = on;
    applyViews();
    gui.controllersRecursive().forEach((c) => c.updateDisplay());
  },
  /** The GUI panel's box on the page (tests leave it out when counting navmesh pixels). */
  panelRect: () => gui.domElement.getBoundingClientRect().toJSON(),
  hudRect: () => hud.getBoundingClientRect().toJSON(),
};
(window as unknown as { __navbakeDemo: typeof demo }).__navbakeDemo = demo;

// ---- scene ---------------------------------------------------------------------------------------------------

const canvas = document.getElementById('view') as HTMLCanvasElement;
const hud = document.getElementById('hud')!;
const renderer = new WebGLRenderer({ canvas, antialias: true });
renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
const scene = new Scene();
scene.background = new Color(0x1b1d22);
const camera = new PerspectiveCamera(50, 1, 0.1, 2000);
const controls = new OrbitControls(camera, canvas);
controls.enableDamping = true;
scene.add(new HemisphereLight(0xdde6ff, 0x3a3026, 1.6), new AmbientLight(0xffffff, 0.3));
const sun = new DirectionalLight(0xffffff, 1.8);
sun.position.set(30, 60, 20);
scene.add(sun);

let level: Object3D = buildLevel();
scene.add(level);

let nav: NavMesh | null = null;
let navHelper: NavMeshHelper | null = null;
const detail = new LineSegments(new BufferGeometry(), new LineBasicMaterial({ color: 0x0d2a3a }));
detail.position.y = 0.06;
detail.renderOrder = 1;
const tileGrid = new LineSegments(new BufferGeometry(), new LineBasicMaterial({ color: 0xffd050, depthTest: false }));
tileGrid.renderOrder = 3;
const pathHelper = new PathHelper(new Float32Array(0), { pointSize: 7 });
// WebGL draws lines 1 pixel wide: a tube along the same points makes the path readable from afar.
const pathTube = new Group();
const tubeMaterial = new MeshBasicMaterial({ color: 0xff3366, depthTest: false, transparent: true, opacity: 0.85 });
const tubeGeometry = new CylinderGeometry(0.12, 0.12, 1, 8, 1, true).translate(0, 0.5, 0);
pathTube.renderOrder = 2;
scene.add(detail, tileGrid, pathHelper, pathTube);

function setTube(points: ArrayLike<number>): void {
  pathTube.clear();
  const up = new Vector3(0, 1, 0);
  for (let i = 0; i + 5 < points.length; i += 3) {
    const a = new Vector3(points[i], points[i + 1] + 0.1, points[i + 2]);
    const b = new Vector3(points[i + 3], points[i + 4] + 0.1, points[i + 5]);
    const len = a.distanceTo(b);
    if (len < 1e-4) continue;
    const m = new Mesh(tubeGeometry, tubeMaterial);
    m.renderOrder = 2;
    m.position.copy(a);
    m.scale.set(1, len, 1);
    m.quaternion.setFromUnitVectors(up, b.sub(a).normalize());
    pathTube.add(m);
  }
}
const marker = (color: number) => {
  const m = new Mesh(new SphereGeometry(0.35, 16, 12), new MeshBasicMaterial({ color, depthTest: false }));
  m.renderOrder = 4;
  m.visible = false;
  scene.add(m);
  return m;
};
const startMarker = marker(0x40e070);
const endMarker = marker(0xff4060);
let startPoint: Vec3 | null = null;
let endPoint: Vec3 | null = null;
/** Bounds of the last baked geometry (for the tile borders): min xyz, max xyz. */
let bakedBounds: [number, number, number, number, number, number] | null = null;

function frame(object: Object3D): void {
  const box = new Box3().setFromObject(object);
  if (box.isEmpty()) return;
  const center = box.getCenter(new Vector3());
  const r = box.getSize(new Vector3()).length() / 2;
  const dir = new Vector3(0.55, 0.75, 0.9).normalize();
  // The panel covers the right of the page: aim a little right of the centre so the level sits left of it.
  const right = new Vector3(dir.z, 0, -dir.x).normalize();
  controls.target.copy(center).addScaledVector(right, r * 0.12);
  camera.position.copy(controls.target).addScaledVector(dir, r * 1.75);
  camera.near = r / 200;
  camera.far = r * 20;
  camera.updateProjectionMatrix();
  controls.update();
}
frame(level);

function resize(): void {
  const w = window.innerWidth;
  const h = window.innerHeight;
  renderer.setSize(w, h, false);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
}
window.addEventListener('resize', resize);
resize();

let lastFrame = performance.now();
renderer.setAnimationLoop(() => {
  const now = performance.now();
  if (demo.phase === 'baking') {
    demo.framesDuringBake++;
    demo.longestFrameDuringBake = Math.max(demo.longestFrameDuringBake, now - lastFrame);
  }
  fpsSamples.push(now - lastFrame);
  if (fpsSamples.length > 30) fpsSamples.shift();
  lastFrame = now;
  controls.update();
  renderer.render(scene, camera);
  demo.frames++;
});
const fpsSamples: number[] = [];

// ---- HUD -----------------------------------------------------------------------------------------------------

const el = (id: string) => document.getElementById(id)!;
const progressBox = el('progress');
const progressBar = el('progress-bar');
const progressText = el('progress-text');
const cancelButton = el('cancel') as HTMLButtonElement;
cancelButton.addEventListener('click', () => cancelBake());

function setProgress(fraction: number, text: string, cls = ''): void {
  progressBar.style.width = `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
  progressText.textContent = text;
  progressBox.className = cls;
}

function message(text: string): void {
  el('message').textContent = text;
}

function showStats(): void {
  const s = demo.stats;
  const fps = fpsSamples.length ? 1000 / (fpsSamples.reduce((a, b) => a + b, 0) / fpsSamples.length) : 0;
  const rows: [string, string][] = [
    ['source', demo.source],
    ['bake', s ? `${s.ms.toFixed(0)} ms` : '—'],
    ['polygons', s ? String(s.polygons) : '—'],
    ['tiles', s ? String(s.tiles) : '—'],
    ['surface', s ? `${s.triangles} triangles` : '—'],
    ['navmesh', s ? `${(s.bytes / 1024).toFixed(1)} KiB (.navbake)` : '—'],
    ['frame rate', `${fps.toFixed(0)} fps`],
  ];
  el('stats').innerHTML = rows.map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v)}</dd>`).join('');
  const p = demo.lastProgress;
  el('stages').textContent = p ? `last progress: ${p.stage} ${p.done}/${p.total} · ${demo.progressEvents} events` : '';
}
setInterval(showStats, 500);

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

// ---- views ---------------------------------------------------------------------------------------------------

function applyViews(): void {
  level.visible = demo.views.level;
  if (navHelper) {
    navHelper.mesh.visible = demo.views.navmesh;
    navHelper.edges.visible = demo.views.edges;
  }
  detail.visible = demo.views.detail && nav !== null;
  tileGrid.visible = demo.views.tiles && tileGrid.geometry.getAttribute('position') !== undefined;
  pathHelper.visible = pathTube.visible = demo.views.path;
}

/** The detail triangles' edges (navmesh.toGeometry()). */
function updateDetail(): void {
  detail.geometry.dispose();
  if (!nav) {
    detail.geometry = new BufferGeometry();
    return;
  }
  const s = nav.toGeometry();
  const g = new BufferGeometry();
  g.setAttribute('position', new BufferAttribute(s.positions, 3));
  g.setIndex(new BufferAttribute(s.indices, 1));
  detail.geometry = new WireframeGeometry(g);
  g.dispose();
}

/**
 * The tile grid of a tiled bake, as the package lays it out: from the baked geometry's minimum corner, each
 * tile tileSize * cellSize wide. Drawn as a rectangle per tile just above the lowest point.
 */
function updateTileGrid(tileSize: number, cellSize: number): void {
  tileGrid.geometry.dispose();
  tileGrid.geometry = new BufferGeometry();
  if (!bakedBounds || tileSize <= 0) return;
  const [x0, y0, z0, x1, , z1] = bakedBounds;
  const tw = tileSize * cellSize;
  const nx = Math.max(1, Math.ceil((x1 - x0) / tw));
  const nz = Math.max(1, Math.ceil((z1 - z0) / tw));
  const y = y0 + 0.05;
  const p: number[] = [];
  for (let i = 0; i <= nx; i++) p.push(x0 + i * tw, y, z0, x0 + i * tw, y, z0 + nz * tw);
  for (let k = 0; k <= nz; k++) p.push(x0, y, z0 + k * tw, x0 + nx * tw, y, z0 + k * tw);
  tileGrid.geometry.setAttribute('position', new BufferAttribute(new Float32Array(p), 3));
}

function showNavmesh(next: NavMesh): void {
  if (nav && nav !== next) nav.dispose();
  nav = next;
  if (navHelper) navHelper.update(nav);
  else {
    navHelper = new NavMeshHelper(nav, { opacity: 0.45 });
    scene.add(navHelper);
  }
  updateDetail();
  applyViews();
}

// ---- path ----------------------------------------------------------------------------------------------------

function updatePath(): PathState | null {
  startMarker.visible = startPoint !== null;
  endMarker.visible = endPoint !== null;
  if (startPoint) startMarker.position.fromArray(startPoint);
  if (endPoint) endMarker.position.fromArray(endPoint);
  if (!nav || !startPoint || !endPoint) {
    pathHelper.setPath(new Float32Array(0));
    setTube([]);
    demo.path = null;
    el('path-info').textContent = startPoint ? 'Path: shift+click to set the end' : 'Path: click to set the start';
    return null;
  }
  const r = nav.findPath(startPoint, endPoint);
  pathHelper.setPath(r.points);
  setTube(r.points);
  demo.path = { status: r.status, length: r.length, points: Array.from(r.points), start: startPoint, end: endPoint };
  el('path-info').textContent =
    r.status === 'none'
      ? 'Path: none (an end is off the navmesh)'
      : `Path: ${r.status}, ${r.length.toFixed(2)} m, ${r.points.length / 3} points`;
  return demo.path;
}

const raycaster = new Raycaster();
let downAt: [number, number] | null = null;
canvas.addEventListener('pointerdown', (e) => {
  downAt = [e.clientX, e.clientY];
});
canvas.addEventListener('contextmenu', (e) => e.preventDefault());
canvas.addEventListener('pointerup', (e) => {
  if (!downAt || Math.hypot(e.clientX - downAt[0], e.clientY - downAt[1]) > 4) return;
  downAt = null;
  const rect = canvas.getBoundingClientRect();
  const ndc = new Vector2(((e.clientX - rect.left) / rect.width) * 2 - 1, -((e.clientY - rect.top) / rect.height) * 2 + 1);
  raycaster.setFromCamera(ndc, camera);
  const targets: Object3D[] = [];
  if (level.visible) targets.push(level);
  if (navHelper) targets.push(navHelper.mesh);
  const hit = raycaster.intersectObjects(targets, true)[0];
  if (!hit) return;
  let p: Vec3 = [hit.point.x, hit.point.y, hit.point.z];
  const near = nav?.nearestPoint(p);
  if (near) p = near.point;
  if (e.button === 2 || e.shiftKey) endPoint = p;
  else startPoint = p;
  updatePath();
});

// ---- bake ----------------------------------------------------------------------------------------------------

let running: AbortController | null = null;

let cancelAt = 0;
function cancelBake(): void {
  if (!running) return;
  cancelAt = performance.now();
  running.abort();
}

async function runBake(extra?: NavBakeConfig): Promise<void> {
  running?.abort();
  const ac = new AbortController();
  running = ac;
  if (extra) Object.assign(demo.config, extra);
  gui?.controllersRecursive().forEach((c) => c.updateDisplay());
  demo.phase = 'baking';
  demo.bakesStarted++;
  demo.progressEvents = 0;
  demo.lastProgress = null;
  demo.framesDuringBake = 0;
  demo.longestFrameDuringBake = 0;
  demo.error = null;
  message('');
  cancelButton.disabled = false;
  setProgress(0, 'collecting triangles…');
  const config = { ...demo.config };
  const t0 = performance.now();
  try {
    const geometry = geometryFromObject3D(level, { skipInvisible: false });
    const b = new Box3().setFromArray(geometry.positions);
    bakedBounds = [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z];
    const result = await bake(geometry, config, {
      workers: demo.options.workers,
      signal: ac.signal,
      transfer: true,
      onProgress: (p) => {
        if (running !== ac) return;
        demo.progressEvents++;
        demo.lastProgress = p;
        // Solo bakes report the 9 stages in order; tiled bakes report finished tiles.
        const i = p.stage === 'tiles' ? 0 : STAGE_ORDER.indexOf(p.stage);
        const within = p.total > 0 ? p.done / p.total : 0;
        const fraction = p.stage === 'tiles' ? within : (i + within) / STAGE_ORDER.length;
        const what = p.stage === 'tiles' ? `tiles ${p.done} / ${p.total}` : `${p.stage} (${i + 1}/9)`;
        setProgress(fraction, `baking: ${what}`);
      },
    });
    const now = performance.now();
    if (running !== ac) {
      result.dispose();
      return;
    }
    const ms = now - t0;
    showNavmesh(result);
    const surface = result.toGeometry();
    demo.stats = {
      ms,
      polygons: result.polygons().length,
      tiles: result.tileCount,
      triangles: surface.indices.length / 3,
      bytes: result.save().length,
    };
    updateTileGrid(config.tileSize, config.cellSize);
    applyViews();
    updatePath();
    demo.phase = 'baked';
    demo.bakesDone++;
    setProgress(1, `baked in ${ms.toFixed(0)} ms`, 'done');
  } catch (e) {
    if (running !== ac) return;
    if (ac.signal.aborted) {
      demo.phase = 'cancelled';
      demo.cancelMs = performance.now() - cancelAt;
      setProgress(0, 'cancelled', 'failed');
      console.info('navbake demo: bake cancelled');
    } else {
      demo.phase = 'error';
      demo.error = e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e);
      setProgress(1, 'bake failed', 'failed');
      message(demo.error);
      console.warn('navbake demo: bake failed', e);
    }
  } finally {
    if (running === ac) {
      running = null;
      cancelButton.disabled = true;
    }
    showStats();
  }
}

const STAGE_ORDER: readonly BakeStage[] = [
  'rasterize',
  'filter',
  'compact',
  'erode',
  'areas',
  'regions',
  'contours',
  'polymesh',
  'detail',
];

let autoTimer: ReturnType<typeof setTimeout> | undefined;
function configChanged(): void {
  if (!demo.options.autoBake) return;
  clearTimeout(autoTimer);
  autoTimer = setTimeout(() => void runBake(), 300);
}

// ---- files: drop a model to bake it, export and load .navbake ------------------------------------------------

function useLevel(object: Object3D, name: string): void {
  scene.remove(level);
  level = object;
  scene.add(level);
  demo.source = name;
  startPoint = endPoint = null;
  updatePath();
  frame(level);
  applyViews();
}

async function openFile(file: File): Promise<void> {
  const name = file.name;
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  try {
    if (ext === 'navbake') {
      running?.abort();
      const loaded = await NavMesh.load(new Uint8Array(await file.arrayBuffer()));
      bakedBounds = null;
      showNavmesh(loaded);
      updateTileGrid(0, 0);
      demo.stats = {
        ms: 0,
        polygons: loaded.polygons().length,
        tiles: loaded.tileCount,
        triangles: loaded.toGeometry().indices.length / 3,
        bytes: file.size,
      };
      demo.phase = 'loaded';
      demo.source = `${name} (loaded)`;
      setProgress(1, `loaded ${name}`, 'done');
      updatePath();
      return;
    }
    let object: Object3D;
    if (ext === 'glb' || ext === 'gltf') {
      const data = ext === 'glb' ? await file.arrayBuffer() : await file.text();
      object = (await new GLTFLoader().parseAsync(data, '')).scene;
    } else if (ext === 'obj') {
      object = new OBJLoader().parse(await file.text());
    } else {
      message(`${name}: drop a .glb, .gltf, .obj or .navbake file`);
      return;
    }
    const group = new Group();
    group.add(object);
    useLevel(group, name);
    await runBake();
  } catch (e) {
    message(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    console.warn('navbake demo: could not open', name, e);
  }
}

window.addEventListener('dragover', (e) => {
  e.preventDefault();
  document.body.classList.add('dragging');
});
window.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
window.addEventListener('drop', (e) => {
  e.preventDefault();
  document.body.classList.remove('dragging');
  const file = e.dataTransfer?.files[0];
  if (file) void openFile(file);
});
const fileInput = document.getElementById('file') as HTMLInputElement;
fileInput.addEventListener('change', () => {
  const file = fileInput.files?.[0];
  if (file) void openFile(file);
  fileInput.value = '';
});

function exportNavmesh(): void {
  if (!nav) {
    message('nothing to export: bake first');
    return;
  }
  const blob = new Blob([nav.save() as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${demo.source.replace(/\.[^.]*$/, '').replace(/[^\w-]+/g, '-') || 'level'}.navbake`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

// ---- panel ---------------------------------------------------------------------------------------------------

/** Slider ranges of the config fields; a field the package adds later still gets a plain number box. */
const RANGES: Partial<Record<keyof NavBakeConfig, [number, number, number]>> = {
  cellSize: [0.02, 2, 0.01],
  cellHeight: [0.02, 2, 0.01],
  agentHeight: [0.1, 10, 0.1],
  agentRadius: [0, 5, 0.05],
  agentMaxClimb: [0, 5, 0.05],
  agentMaxSlope: [0, 89, 1],
  regionMinSize: [0, 150, 1],
  regionMergeSize: [0, 150, 1],
  edgeMaxLen: [0, 50, 0.5],
  edgeMaxError: [0.1, 3, 0.1],
  vertsPerPoly: [3, 12, 1],
  detailSampleDist: [0, 16, 0.1],
  detailSampleMaxError: [0, 16, 0.1],
  tileSize: [0, 512, 16],
};

const gui = new GUI({ title: 'navbake' });
const actions = {
  bake: () => void runBake(),
  cancel: () => cancelBake(),
  defaults: () => {
    Object.assign(demo.config, DEFAULTS);
    gui.controllersRecursive().forEach((c) => c.updateDisplay());
    configChanged();
  },
  builtIn: () => {
    useLevel(buildLevel(), 'built-in level');
    startPoint = LEVEL_START;
    endPoint = LEVEL_END;
    void runBake();
  },
  exportNavmesh,
  load: () => fileInput.click(),
  frame: () => frame(level),
};
gui.add(actions, 'bake').name('Bake');
gui.add(actions, 'cancel').name('Cancel');
gui.add(demo.options, 'autoBake').name('bake on change');
const cfg = gui.addFolder('Config');
const configObject = demo.config as unknown as Record<string, number | string>;
for (const key of Object.keys(DEFAULTS) as (keyof NavBakeConfig)[]) {
  let c: Controller;
  if (key === 'partition') c = cfg.add(configObject, key, ['watershed', 'monotone', 'layers']);
  else {
    const r = RANGES[key];
    c = r ? cfg.add(configObject, key, r[0], r[1], r[2]) : cfg.add(configObject, key);
  }
  c.onFinishChange(configChanged);
}
cfg.add(actions, 'defaults').name('reset to defaults');
const work = gui.addFolder('Workers');
work.add(demo.options, 'workers', 1, 8, 1).name('worker count').onFinishChange(configChanged);
const views = gui.addFolder('Debug views');
views.add(demo.views, 'level').name('level geometry').onChange(applyViews);
views.add(demo.views, 'navmesh').name('polygons (filled)').onChange(applyViews);
views.add(demo.views, 'edges').name('polygon edges').onChange(applyViews);
views.add(demo.views, 'detail').name('detail mesh').onChange(applyViews);
views.add(demo.views, 'tiles').name('tile borders').onChange(applyViews);
views.add(demo.views, 'path').name('path').onChange(applyViews);
const files = gui.addFolder('Files');
files.add(actions, 'exportNavmesh').name('Export .navbake');
files.add(actions, 'load').name('Load .navbake / model…');
files.add(actions, 'builtIn').name('Built-in level');
gui.add(actions, 'frame').name('Frame level');

// ---- start: bake the built-in level and show a path between two known points ---------------------------------

startPoint = LEVEL_START;
endPoint = LEVEL_END;
updatePath();
applyViews();
void runBake();
