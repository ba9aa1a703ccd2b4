// The navbake demo: bakes the built-in level (or a dropped model, or the big generated world) in Web Workers,
// shows the navmesh with the package's three.js helpers, and finds paths between clicked points: on the navmesh, or
// (the panel's "agent") through the level's voxels for an agent that walks, climbs walls or flies (voxels.ts). Every
// bake option is in the panel. After each bake, inspect() (also in the workers) fetches the intermediate stages for the debug
// views (voxels, regions, contours) and the stage times and memory in the stats panel.
// window.__navbakeDemo exposes the state and a few actions for the browser tests (tests/e2e/demo.test.ts).
import GUI, { type Controller } from 'lil-gui';
import {
  bake,
  defaultWorkerCount,
  DEFAULTS,
  inspect,
  NavMesh,
  STAGES,
  type BakeProgress,
  type Geometry,
  type Inspection,
  type NavBakeConfig,
  type ObstacleUpdate,
  type StageTimes,
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
import { InspectionViews, linkArcs, MAX_VOXELS } from './debug';
import { BOX_SIZE, Obstacles } from './obstacles';
import {
  BELOW_FLOOR_EDGE,
  buildLevel,
  FLOOR_EDGE,
  LEVEL_END,
  LEVEL_LINKS,
  LEVEL_START,
  YARD_INSIDE,
  YARD_OUTSIDE,
  type LevelLink,
  type Vec3,
} from './level';
import {
  AGENT_LABELS,
  agentLabel,
  LevelVoxels,
  millions,
  pathLength,
  VOXEL_BUDGET,
  VOXEL_NODES,
  VOXEL_WEIGHT,
  VoxelSearch,
  type Agent,
} from './voxels';
import { readObj, stopObjRead } from './obj';
import { fetchWorld, WORLD_SIZES, worldObject, type WorldGeometry } from './world';
import './style.css';

// ---- state (also the test hook) ------------------------------------------------------------------------------

type Phase = 'loading' | 'baking' | 'baked' | 'cancelled' | 'error' | 'loaded';

interface PathState {
  /** what found it: the navmesh, or a voxel agent */
  mode: Agent;
  status: string;
  length: number;
  points: number[];
  start: Vec3;
  end: Vec3;
  /** the level it was found on (demo.source when it was drawn) */
  source: string;
  /** the search's wall time [ms]: the findPath call on the navmesh; a voxel agent's sliced search from the request to
   * its path */
  ms: number;
}

interface BakeStats {
  ms: number;
  polygons: number;
  tiles: number;
  triangles: number;
  bytes: number;
}

/** What inspect() told about the last bake (a tiled bake: its tiles inspected one by one, summed). */
interface InspectStats {
  /** inspections: 1 for a solo bake, the tiles with triangles for a tiled one */
  tiles: number;
  spans: number;
  regions: number;
  contours: number;
  /** per stage, summed over the tiles [ms] */
  times: StageTimes;
  /** largest peak of the bake's own allocations (per tile) [bytes] */
  peakBytes: number;
  /** largest wasm memory of the workers that ran them [bytes] */
  heapBytes: number;
  /** wall time of the whole inspect [ms] */
  ms: number;
}

type Views = {
  level: boolean;
  navmesh: boolean;
  edges: boolean;
  detail: boolean;
  tiles: boolean;
  path: boolean;
  voxels: boolean;
  regions: boolean;
  contours: boolean;
  rawContours: boolean;
  links: boolean;
};

/** The shown level's voxel grid, for the voxel agents. */
const levelVoxels = new LevelVoxels();
/** The voxel agent's path search: sliced, the latest request wins. */
const voxelSearch = new VoxelSearch();

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
  /** performance.now() at the start and end of the last bake() call that completed */
  lastBake: null as { start: number; end: number } | null,
  /** performance.now() of the first and the latest progress event of the current (or last) bake */
  progressWindow: null as { first: number; last: number } | null,
  /** main-thread tasks over 50 ms (PerformanceObserver 'longtask'), the latest 200 */
  longTasks: [] as { start: number; duration: number }[],
  /** the render loop: frames per second and the mean frame time over the last 30 frames [ms] */
  fps: 0,
  frameMs: 0,
  /** how much the path's tube and end markers are grown to stay visible from the camera's distance (scaleMarks) */
  markScale: 1,
  /** performance.now() of the latest animation frames (up to 1000) */
  frameTimes: [] as number[],
  /**
   * Test hook: the animation loop keeps running but draws nothing. Headless Chromium draws WebGL in software on
   * the main thread (over 100 ms a frame for this scene); with drawing paused, what is left on the main thread
   * during a bake is the page's own work, which the responsiveness test measures.
   */
  renderPaused: false,
  stats: null as BakeStats | null,
  /** whether the shown navmesh takes live obstacles (a tiled bake with tile caches) */
  obstaclesLive: false,
  /** paths re-planned because an obstacle update touched them */
  replans: 0,
  inspectPhase: 'idle' as 'idle' | 'running' | 'done' | 'cancelled' | 'error',
  inspectsDone: 0,
  inspection: null as InspectStats | null,
  path: null as PathState | null,
  /** The latest paths drawn (up to 100), oldest first: what each was found by and on, for the tests. */
  pathsShown: [] as { mode: Agent; status: string; length: number; source: string; level: number; grid: number[] | null }[],
  /** The voxel grid of the shown level: its phase, voxel size and voxelize time; drops of grids no longer wanted. */
  voxels: levelVoxels.info,
  /** The voxel agent's path search: its phase, the searches started and aborted (replaced), the last one's time. */
  voxelSearch: voxelSearch.info,
  error: null as string | null,
  /** What the shown navmesh comes from: the level's name, or `x.navbake (loaded)` for a loaded file. */
  source: 'built-in level',
  /** Triangles asked of the generator for the shown generated world (world-N.bin), null for other levels. */
  world: null as number | null,
  /** The last tiled bake: its focus (the orbit target when it started) and its tiles with polygons, as they came. */
  focus: null as Vec3 | null,
  tileOrder: [] as [number, number][],
  /** Redraws of the navmesh while the last tiled bake ran (the tiles so far). */
  partialDraws: 0,
  /** The last tiled bake's own stage timers (onTile's times), summed over its tiles with polygons. */
  bakeTimes: null as { tiles: number; times: StageTimes } | null,
  /** Known points of the built-in level. */
  points: { LEVEL_START, LEVEL_END, YARD_OUTSIDE, YARD_INSIDE, FLOOR_EDGE, BELOW_FLOOR_EDGE },
  /** Off-mesh links baked with the shown level (the built-in level's jumps; none for dropped models). */
  links: LEVEL_LINKS as readonly LevelLink[],
  config: { ...DEFAULTS } as Required<NavBakeConfig>,
  /** tileDrawMs: during a tiled bake, the tiles so far are drawn at most this often [ms] (each draw of a big world's
   * navmesh takes tens of milliseconds). */
  /** agent: what finds the paths (the panel's "agent"); voxelBudget: the most voxels a level's grid may have before
   * its voxels are made coarser; voxelNodes, voxelWeight: a voxel path search's maxNodes and heuristicWeight. */
  options: {
    workers: defaultWorkerCount(),
    autoBake: true,
    tileDrawMs: 500,
    agent: 'navmesh' as Agent,
    voxelBudget: VOXEL_BUDGET,
    voxelNodes: VOXEL_NODES,
    voxelWeight: VOXEL_WEIGHT,
  },
  views: {
    level: true,
    navmesh: true,
    edges: true,
    detail: false,
    tiles: true,
    path: true,
    voxels: false,
    regions: false,
    contours: false,
    rawContours: false,
    links: true,
  } as Views,
  /** Starts a bake with the panel's settings (plus `config` over them); resolves when it ends, however. */
  bake: (config?: NavBakeConfig) => runBake(config),
  cancel: () => cancelBake(),
  /** The shown navmesh's .navbake bytes (what Export downloads). */
  saveBytes: () => nav?.save() ?? null,
  /** Opens a file as if dropped on the page (.glb / .gltf / .obj / .navbake). */
  open: (file: File) => openFile(file),
  /** Shows the generated world of about `triangles` triangles and bakes it in tiles; resolves when that ends. */
  loadWorld: (triangles: number) => loadWorld(triangles),
  /**
   * Sets start and end and draws the path between them: on the navmesh at once (the path, or null); a voxel agent's
   * path once its search ends (null meanwhile: see pathSettled).
   */
  setPath: (start: Vec3, end: Vec3) => {
    startPoint = start;
    endPoint = end;
    return updatePath();
  },
  /** Picks the agent (as the panel does); resolves with the path drawn once the level's voxels and the path are there. */
  setAgent: async (agent: Agent) => {
    demo.options.agent = agent;
    gui.controllersRecursive().forEach((c) => c.updateDisplay());
    updatePath();
    return pathSettled();
  },
  /** Resolves once the voxel grid asked for last is made (or failed). */
  voxelsSettled: () => levelVoxels.settled(),
  /**
   * Resolves with demo.path once the latest path request has settled: no voxel grid being made and no voxel search
   * running (a navmesh path is there at once).
   */
  pathSettled: () => pathSettled(),
  /** The voxel grid the voxel agents' paths come from (null when none is made for the shown level). */
  voxelGrid: () => levelVoxels.grid,
  /** A path query on the shown navmesh, without changing what is drawn. */
  findPath: (start: Vec3Like, end: Vec3Like) => {
    if (!nav) return null;
    const r = nav.findPath(start, end);
    return { status: r.status, length: r.length, points: Array.from(r.points) };
  },
  setView: (name: keyof Views, on: boolean): void => {
    demo.views[name] = on;
    applyViews();
    inspectIfShown();
    gui.controllersRecursive().forEach((c) => c.updateDisplay());
  },
  /** The GUI panel's box on the page (tests leave it out when counting navmesh pixels). */
  panelRect: () => gui.domElement.getBoundingClientRect().toJSON(),
  /** Boxes drawn by the voxel view (0 when not built). */
  voxelCount: () => (inspectionViews.voxels ? (inspectionViews.voxels.geometry.index?.count ?? 0) / 6 : 0),
  /**
   * Drops a box obstacle (at `at`, else halfway along the path); bakes in tiles first when the navmesh cannot take
   * obstacles. Resolves with the box's index once the navmesh has it, or -1 when that bake failed.
   */
  dropObstacle: (at?: Vec3) => dropBox(at),
  moveObstacle: (i: number, at: Vec3) => obstacles.moveTo(obstacles.items[i], at),
  removeObstacle: (i: number) => obstacles.remove(obstacles.items[i]),
  clearObstacles: () => obstacles.clear(),
  obstacleState: () => ({
    count: obstacles.items.length,
    bases: obstacles.items.map((it) => it.base),
    updates: obstacles.updates,
    inFlight: obstacles.inFlight,
    maxInFlight: obstacles.maxInFlight,
    lastTiles: obstacles.lastTiles,
    flashing: obstacles.flashing,
    dragging: obstacles.isDragging,
  }),
  /** Where a world point is on the page (CSS pixels), for pointer tests. */
  screenOf: (p: Vec3) => {
    const v = new Vector3(...p).project(camera);
    const r = canvas.getBoundingClientRect();
    return { x: r.left + ((v.x + 1) / 2) * r.width, y: r.top + ((1 - v.y) / 2) * r.height };
  },
  /** The xz centre of each tile of the last tiled bake, in the order they came (demo.tileOrder). */
  tileCenters: () => {
    if (!nav) return [];
    const { origin, tileWidth, tileDepth } = nav.params;
    return demo.tileOrder.map(([x, z]) => [origin[0] + (x + 0.5) * tileWidth, origin[2] + (z + 0.5) * tileDepth]);
  },
  /** Line segments of the off-mesh link arcs drawn. */
  linkSegments: () => (linkView.geometry.getAttribute('position')?.count ?? 0) / 2,
  /** Line segments of the (simplified) contour view. */
  contourSegments: () => (inspectionViews.contours.geometry.getAttribute('position')?.count ?? 0) / 2,
  hudRect: () => hud.getBoundingClientRect().toJSON(),
  /** Shows the built-in level and bakes it (the panel's "Built-in level"); resolves when that bake ends. */
  builtIn: () => showBuiltIn(),
  /** What the navmesh helper draws: whether that is the navmesh in use (not the tiles of a bake that did not finish,
   * not a replaced navmesh), and its triangles (0: nothing drawn). */
  drawn: () => ({
    inUse: (navHelper?.navMesh ?? null) === nav,
    triangles: navHelper ? (navHelper.mesh.geometry.getAttribute('position')?.count ?? 0) / 3 : 0,
  }),
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
const inspectionViews = new InspectionViews();
/** The baked off-mesh links as arcs (the NavMeshHelper draws them as straight edges). */
let linkView = linkArcs([]);
scene.add(detail, tileGrid, pathHelper, pathTube, inspectionViews, linkView);

/** Arcs for the shown navmesh's off-mesh links (its link polygons: start and end), one-way unless baked otherwise. */
function showLinks(): void {
  scene.remove(linkView);
  linkView.geometry.dispose();
  linkView.material.dispose();
  const shapes = (nav?.polygons() ?? [])
    .filter((p) => p.offMesh && p.vertices.length >= 6)
    .map((p) => {
      const v = p.vertices;
      const start: Vec3 = [v[0], v[1], v[2]];
      const end: Vec3 = [v[3], v[4], v[5]];
      const baked = demo.links.find((l) => Math.hypot(l.start[0] - start[0], l.start[2] - start[2]) < 1e-3);
      return { start, end, bidirectional: baked?.bidirectional ?? false };
    });
  linkView = linkArcs(shapes);
  scene.add(linkView);
  applyViews();
}

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

/** The path's tube and the end markers keep a size seen from afar: at the built-in level's viewing distance (about
 * 120 m) they are their world size, and past 150 m they grow with the distance (a generated world seen whole, where a
 * 0.12 m tube would be less than a pixel). */
function scaleMarks(): void {
  const s = Math.max(1, camera.position.distanceTo(controls.target) / 150);
  demo.markScale = s;
  for (const m of pathTube.children) m.scale.x = m.scale.z = s;
  startMarker.scale.setScalar(s);
  endMarker.scale.setScalar(s);
}
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
  const right = new Vector3(dir.z, 0, -dir.x).normalize();
  const up = new Vector3().crossVectors(dir, right);
  // The part of the page the level is seen in: the HUD covers the left (or, on a narrow page, the bottom), the panel
  // the right (folded, only its title, at the top); both are left out when they leave too little.
  const w = window.innerWidth;
  const h = window.innerHeight;
  let [x0, x1, y1] = [0, w, h];
  for (const b of [hud.getBoundingClientRect(), gui.domElement.getBoundingClientRect()]) {
    if (b.width === 0 || b.height === 0) continue;
    if (b.bottom < h * 0.1) continue; // a folded panel: its title, a strip at the top
    if (b.right < w / 2) x0 = Math.max(x0, b.right);
    else if (b.left > w / 2) x1 = Math.min(x1, b.left);
    else if (b.top > h / 2) y1 = Math.min(y1, b.top);
  }
  if (x1 - x0 < w * 0.35) [x0, x1] = [0, w];
  if (y1 < h * 0.4) y1 = h;
  camera.near = r / 200;
  camera.far = r * 20;
  camera.updateProjectionMatrix();
  // The box's corners on the page [pixels] as seen from `distance` along dir.
  const corners = [0, 1, 2, 3, 4, 5, 6, 7].map(
    (i) => new Vector3(i & 1 ? box.max.x : box.min.x, i & 2 ? box.max.y : box.min.y, i & 4 ? box.max.z : box.min.z),
  );
  const extent = (distance: number) => {
    camera.position.copy(center).addScaledVector(dir, distance);
    camera.lookAt(center);
    camera.updateMatrixWorld();
    const e = { left: Infinity, right: -Infinity, top: Infinity, bottom: -Infinity };
    for (const c of corners) {
      const v = c.clone().project(camera);
      const [x, y] = [((v.x + 1) / 2) * w, ((1 - v.y) / 2) * h];
      e.left = Math.min(e.left, x);
      e.right = Math.max(e.right, x);
      e.top = Math.min(e.top, y);
      e.bottom = Math.max(e.bottom, y);
    }
    return e;
  };
  // As close as lets the level fill 90 % of that part (its size on the page goes nearly as 1 / distance)...
  let distance = r * 2;
  for (let i = 0; i < 3; i++) {
    const e = extent(distance);
    const fill = Math.max((e.right - e.left) / (0.9 * (x1 - x0)), (e.bottom - e.top) / (0.9 * y1));
    distance = Math.max(r * 1.2, distance * fill);
  }
  // ...and its middle in that part's middle: aiming a metre right moves the level 1 / metresPerPixel pixels left.
  const e = extent(distance);
  const metresPerPixel = (2 * distance * Math.tan((camera.fov * Math.PI) / 360)) / Math.max(h, 1);
  controls.target
    .copy(center)
    .addScaledVector(right, ((e.left + e.right) / 2 - (x0 + x1) / 2) * metresPerPixel)
    .addScaledVector(up, -((e.top + e.bottom) / 2 - y1 / 2) * metresPerPixel);
  camera.position.copy(controls.target).addScaledVector(dir, distance);
  controls.update();
}

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
  demo.frameMs = fpsSamples.reduce((a, b) => a + b, 0) / fpsSamples.length;
  demo.fps = demo.frameMs > 0 ? 1000 / demo.frameMs : 0;
  lastFrame = now;
  demo.frameTimes.push(now);
  if (demo.frameTimes.length > 1000) demo.frameTimes.splice(0, 200);
  obstacles.tick(now);
  controls.update();
  scaleMarks();
  if (!demo.renderPaused) renderer.render(scene, camera);
  demo.frames++;
});
const fpsSamples: number[] = [];

// Main-thread tasks over 50 ms: what would make the page stutter. A bake on this thread would show up here as one
// task of its whole length; in the workers it does not.
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) demo.longTasks.push({ start: e.startTime, duration: e.duration });
    if (demo.longTasks.length > 200) demo.longTasks.splice(0, demo.longTasks.length - 200);
  }).observe({ type: 'longtask', buffered: true });
} catch {
  // no Long Tasks API in this browser: the readout shows frame times only
}

// ---- HUD -----------------------------------------------------------------------------------------------------

const el = (id: string) => document.getElementById(id)!;
const progressBox = el('progress');
const progressBar = el('progress-bar');
const progressText = el('progress-text');
const cancelButton = el('cancel') as HTMLButtonElement;
cancelButton.addEventListener('click', () => cancelBake());
// The HUD's title folds it (on a small page it would cover the level), and starts folded on a very low page.
hud.querySelector('h1')!.addEventListener('click', () => hud.classList.toggle('folded'));
if (window.innerHeight <= 400) hud.classList.add('folded');

function setProgress(fraction: number, text: string, cls = ''): void {
  progressBar.style.width = `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
  progressText.textContent = text;
  progressBox.className = cls;
}

function message(text: string): void {
  el('message').textContent = text;
}

const MiB = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

function showStats(): void {
  const s = demo.stats;
  const insp = demo.inspection;
  const recent = demo.longTasks.filter((t) => t.start > performance.now() - 5000);
  const longest = recent.reduce((m, t) => Math.max(m, t.duration), 0);
  const rows: [string, string][] = [
    ['source', demo.source],
    ['bake', s ? `${s.ms.toFixed(0)} ms` : '—'],
    ['polygons', s ? String(s.polygons) : '—'],
    ['tiles', s ? String(s.tiles) : '—'],
    ['surface', s ? `${s.triangles} triangles` : '—'],
    ['navmesh', s ? `${(s.bytes / 1024).toFixed(1)} KiB (.navbake)` : '—'],
    ['voxels', insp ? `${insp.spans} walkable spans, ${insp.regions} regions, ${insp.contours} contours` : inspectNote()],
    ['memory', insp ? `bake peak ${MiB(insp.peakBytes)} · wasm heap ${MiB(insp.heapBytes)}` : '—'],
    ['obstacles', obstacleNote()],
    ['agent', agentNote()],
    ['frame', `${demo.fps.toFixed(0)} fps · ${demo.frameMs.toFixed(0)} ms/frame`],
    ['main thread', recent.length ? `longest task ${longest.toFixed(0)} ms (last 5 s)` : 'no task over 50 ms (last 5 s)'],
  ];
  el('stats').innerHTML = rows.map(([k, v]) => `<dt>${k}</dt><dd>${escapeHtml(v)}</dd>`).join('');
  showStageTimes(insp);
  const p = demo.lastProgress;
  el('stages').textContent = p ? `last progress: ${p.stage} ${p.done}/${p.total} · ${demo.progressEvents} events` : '';
}

function agentNote(): string {
  const agent = demo.options.agent;
  if (agent === 'navmesh') return 'walk (navmesh)';
  const v = demo.voxels;
  const p = v.plan;
  if (v.phase === 'refused') return `${agentLabel(agent)}: refused (${p?.refused})`;
  if (v.phase === 'error') return `${agentLabel(agent)}: no voxels (${v.error})`;
  if (!p) return agentLabel(agent);
  const size = `${p.cellSize} x ${p.cellHeight} m`;
  const coarse = p.coarsened ? ` (coarser than the bake's ${demo.config.cellSize} x ${demo.config.cellHeight} m: at most ${millions(demo.options.voxelBudget)} voxels)` : '';
  const grid = `${p.dims.join(' x ')} = ${millions(p.voxels)} voxels of ${size}${coarse}`;
  if (v.phase === 'running') return `${agentLabel(agent)}: voxelizing ${grid}…`;
  const path = voxelSearch.searching
    ? ' · path: searching…'
    : demo.path?.mode === agent
      ? ` · path ${demo.path.ms.toFixed(1)} ms`
      : '';
  return `${agentLabel(agent)}: ${grid} · voxelized in ${(v.ms ?? 0).toFixed(0)} ms${path}`;
}

function obstacleNote(): string {
  const n = obstacles.items.length;
  if (!n) return 'none (Obstacles: drop a box)';
  if (!demo.obstaclesLive) {
    const why = !nav
      ? 'no navmesh'
      : loadedName !== null
        ? 'a loaded navmesh has no tile caches: Bake to rebuild tiles'
        : 'a solo bake has no tiles to rebuild';
    return `${n} box${n > 1 ? 'es' : ''}, inactive (${why})`;
  }
  const t = obstacles.lastTiles.length;
  const u = obstacles.updates;
  return `${n} box${n > 1 ? 'es' : ''} · ${u} update${u === 1 ? '' : 's'} · last rebuilt ${t} tile${t === 1 ? '' : 's'}`;
}

function inspectNote(): string {
  if (demo.inspectPhase === 'running') return 'inspecting…';
  if (demo.inspectPhase === 'error') return 'inspect failed';
  return nav && loadedName !== null ? '— (a loaded navmesh has no stages to inspect)' : '—';
}

const TIMED_STAGES: readonly (keyof StageTimes)[] = [
  'rasterize',
  'filter',
  'compact',
  'erode',
  'areas',
  'distance',
  'regions',
  'contours',
  'polymesh',
  'detail',
];

/** Stage times all 0, to sum into. */
function zeroTimes(): StageTimes {
  return Object.fromEntries([...TIMED_STAGES, 'total'].map((k) => [k, 0])) as unknown as StageTimes;
}

/**
 * Milliseconds per stage as bars: a tiled bake's own timers (onTile), summed over its tiles; for a solo bake, its
 * inspection's (the C bake's timers too).
 */
function showStageTimes(insp: InspectStats | null): void {
  const box = el('stage-times');
  const from = demo.bakeTimes ?? insp;
  if (!from) {
    box.innerHTML = '';
    return;
  }
  const t = from.times;
  const max = Math.max(...TIMED_STAGES.map((k) => t[k]), 1e-6);
  const what = from.tiles > 1 ? `stage times, summed over ${from.tiles} tiles` : 'stage times';
  box.innerHTML =
    `<div class="title">${what}: ${t.total.toFixed(1)} ms</div>` +
    TIMED_STAGES.map(
      (k) =>
        `<div class="row"><span class="name">${k}</span><span class="bar"><i style="width:${((100 * t[k]) / max).toFixed(1)}%"></i></span>` +
        `<span class="ms">${t[k].toFixed(1)}</span></div>`,
    ).join('');
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
  if (detail.visible && detailOf !== nav) updateDetail();
  const v = demo.views;
  inspectionViews.apply({ voxels: v.voxels, regions: v.regions, contours: v.contours, rawContours: v.rawContours });
  linkView.visible = v.links && nav !== null;
  tileGrid.visible = demo.views.tiles && tileGrid.geometry.getAttribute('position') !== undefined;
  pathHelper.visible = pathTube.visible = demo.views.path;
}

/** The navmesh the detail view was built from (built when shown: a big world's takes a while). */
let detailOf: NavMesh | null = null;

/** The detail triangles' edges (navmesh.toGeometry()). */
function updateDetail(): void {
  detail.geometry.dispose();
  detailOf = nav;
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

/** The name of the .navbake file the shown navmesh was loaded from; null when it was baked here (or none is shown). */
let loadedName: string | null = null;

/** Makes `next` the navmesh in use (clicks, paths, boxes, Export), drawn; the one it replaces is disposed. */
function showNavmesh(next: NavMesh, loadedFrom: string | null = null): void {
  if (nav && nav !== next) nav.dispose();
  nav = next;
  loadedName = loadedFrom;
  drawNavmesh(nav);
  showLinks();
  applyViews();
  exportController.enable(true);
}

/** No navmesh in use (a new level until its bake ends): nothing drawn, no path, no stats, nothing to export. */
function clearNavmesh(): void {
  nav?.dispose();
  nav = null;
  loadedName = null;
  demo.obstaclesLive = false;
  demo.stats = null;
  bakedBounds = null;
  bakedTileWidth = 0;
  updateTileGrid(0, 0);
  drawShown();
  showLinks();
  applyViews();
  exportController.enable(false);
}

/** Whether the helper draws something other than the navmesh in use: the tiles so far of a tiled bake. */
let partialShown = false;

/** Draws a navmesh's polygons: the shown one, or a tiled bake's tiles so far while it runs. */
function drawNavmesh(what: NavMesh): void {
  if (navHelper) navHelper.update(what);
  else {
    navHelper = new NavMeshHelper(what, { opacity: 0.45 });
    scene.add(navHelper);
  }
  partialShown = what !== nav;
}

/** Draws the navmesh in use again (or nothing when there is none): a bake that drew its tiles so far did not
 * finish, or another bake replaced it. */
function drawShown(): void {
  if (nav) drawNavmesh(nav);
  else if (navHelper) {
    scene.remove(navHelper);
    navHelper.dispose();
    navHelper = null;
  }
  partialShown = false;
}

/** What clicks, drops and dragged boxes hit: the level, or on a big world only the navmesh (a million triangles
 * are too many to ray-cast on every pointer move). */
function pickTargets(): Object3D[] {
  const out: Object3D[] = [];
  if (level.visible && demo.world === null) out.push(level);
  if (navHelper) out.push(navHelper.mesh);
  return out;
}

// ---- path ----------------------------------------------------------------------------------------------------

/** Draws the path between the markers as the agent finds it (and says so in the path line). */
function updatePath(): PathState | null {
  startMarker.visible = startPoint !== null;
  endMarker.visible = endPoint !== null;
  if (startPoint) startMarker.position.fromArray(startPoint);
  if (endPoint) endMarker.position.fromArray(endPoint);
  if (demo.options.agent !== 'navmesh') return updateVoxelPath(demo.options.agent);
  voxelSearch.stop(); // a voxel agent's search running: its path never comes
  if (!nav || !startPoint || !endPoint) {
    return noPath(
      !nav ? `Path: no navmesh${running ? ' yet' : ''}` : startPoint ? 'Path: shift+click to set the end' : 'Path: click to set the start',
    );
  }
  const t0 = performance.now();
  const r = nav.findPath(startPoint, endPoint);
  const ms = performance.now() - t0;
  showPath({ mode: 'navmesh', status: r.status, length: r.length, points: Array.from(r.points), start: startPoint, end: endPoint, source: demo.source, ms });
  el('path-info').textContent =
    r.status === 'none'
      ? 'Path: none (an end is off the navmesh)'
      : `Path: ${r.status}, ${r.length.toFixed(2)} m, ${r.points.length / 3} points`;
  return demo.path;
}

/** No path drawn; the path line says why. A voxel agent's search running stops: its path never comes. */
function noPath(info: string): null {
  voxelSearch.stop();
  clearPath(info);
  return null;
}

/** Nothing drawn (a voxel search runs, or ended without a path); the path line says why. */
function clearPath(info: string): void {
  pathHelper.setPath(new Float32Array(0));
  setTube([]);
  demo.path = null;
  el('path-info').textContent = info;
}

/**
 * Resolves with demo.path once the latest path request has settled: the level's voxel grid made (when a voxel agent
 * asked for it) and the voxel search run. Each step may start the next (a grid made starts its search).
 */
async function pathSettled(): Promise<PathState | null> {
  for (;;) {
    if (levelVoxels.busy) await levelVoxels.settled();
    else if (voxelSearch.searching) await voxelSearch.settled();
    else return demo.path;
  }
}

/** Draws a path found on the navmesh, or on a voxel grid (of these dims). */
function showPath(p: PathState, grid: number[] | null = null): void {
  pathHelper.setPath(new Float32Array(p.points));
  setTube(p.points);
  demo.path = p;
  demo.pathsShown.push({ mode: p.mode, status: p.status, length: p.length, source: p.source, level: levelSerial, grid });
  if (demo.pathsShown.length > 100) demo.pathsShown.shift();
}

/**
 * The path of a voxel agent through the shown level's voxel grid. The grid is made (in a worker) the first time an
 * agent needs it for this level and voxel size; meanwhile no path is drawn, and the path is searched when it is there.
 * A grid of another level or size is never used (LevelVoxels disposes it once it is not the one asked for).
 * The search runs a few milliseconds at a time (findPathAsync), the page drawing and taking input in between: no
 * path is drawn while it runs ("searching…"), and a later request (a click, another agent, a new level or setting)
 * aborts it, so only the latest request's path is drawn. Returns the path when it is already drawn (the same grid,
 * ends and options as the path shown: a bake that ended changes none of them), else null.
 */
function updateVoxelPath(agent: Exclude<Agent, 'navmesh'>): PathState | null {
  const what = `Path, ${agentLabel(agent)}`;
  if (!startPoint || !endPoint) return noPath(startPoint ? `${what}: shift+click to set the end` : `${what}: click to set the start`);
  const cfg = demo.config;
  const grid = levelVoxels.request(levelSerial, level, levelName, cfg, demo.options.voxelBudget, () => updatePath());
  const info = levelVoxels.info;
  if (!grid) {
    const size = info.plan ? `${info.plan.cellSize} x ${info.plan.cellHeight} m` : '';
    return noPath(
      info.phase === 'refused'
        ? `${what}: refused: ${info.plan?.refused}`
        : info.phase === 'error'
          ? `${what}: no voxels (${info.error})`
          : `${what}: voxelizing the level (${millions(info.plan?.voxels ?? 0)} voxels of ${size})…`,
    );
  }
  const opts = {
    move: agent,
    agentHeight: cfg.agentHeight,
    agentRadius: cfg.agentRadius,
    agentClimb: cfg.agentMaxClimb,
    // An end snaps to a place for the agent within its height (the package looks at most 64 voxels away).
    searchRadius: Math.min(cfg.agentHeight, 64 * Math.min(grid.cellSize, grid.cellHeight)),
    maxNodes: demo.options.voxelNodes, // VOXEL_NODES
    heuristicWeight: demo.options.voxelWeight, // VOXEL_WEIGHT
  };
  const [dx, dy, dz] = grid.dims;
  const gridNote = `grid of ${millions(dx * dy * dz)} voxels, ${grid.cellSize} x ${grid.cellHeight} m`;
  const start = startPoint;
  const end = endPoint;
  const serial = levelSerial;
  const source = demo.source;
  const state = voxelSearch.request(
    grid,
    start,
    end,
    opts,
    (r, ms) => {
      // Never the path of a grid or level no longer shown. (A level or voxel size change aborts the search and
      // disposes the grid, which rejects it: this is the belt to those braces; should it ever fire, the path shown
      // now is asked for again.)
      if (grid.disposed || levelVoxels.grid !== grid || levelSerial !== serial) {
        updatePath();
        return false;
      }
      const length = pathLength(r.points);
      showPath({ mode: agent, status: r.status, length, points: Array.from(r.points), start, end, source, ms }, grid.dims);
      el('path-info').textContent =
        r.status === 'none'
          ? `${what}: none (an end has no place for the agent within ${opts.searchRadius.toFixed(1)} m) · ${gridNote}`
          : `${what}: ${r.status}${r.exhausted ? ` (the search's ${opts.maxNodes} nodes ran out)` : ''}, ${length.toFixed(2)} m, ` +
            `${r.points.length / 3} points · ${gridNote}`;
      showStats();
      return true;
    },
    (e) => {
      // A setting the voxel search cannot take (an agent thousands of voxels tall, say)
      clearPath(`${what}: ${(e as { code?: string }).code ?? 'error'}: ${e instanceof Error ? e.message : String(e)}`);
      showStats();
    },
  );
  if (state === 'shown') return demo.path;
  clearPath(`${what}: searching… · ${gridNote}`);
  showStats(); // "searching…" in the HUD too
  return null;
}

const raycaster = new Raycaster();

// ---- obstacles: boxes dropped on the level, dragged along the ground; their tiles rebuild live --------------------

/** Tile width of the shown tiled bake [world] (0: solo). */
let bakedTileWidth = 0;
/** Agent radius of the shown bake: how far the dropped boxes' carves reach past their sides. */
let bakedAgentRadius = 0;
let reinspectTimer: ReturnType<typeof setTimeout> | undefined;

const obstacles = new Obstacles({
  navmesh: () => (demo.obstaclesLive ? nav : null),
  camera,
  canvas,
  ground: () => pickTargets(),
  tileRect: (x, z) => {
    if (!bakedBounds || bakedTileWidth <= 0) return null;
    const [x0, y0, z0] = bakedBounds;
    const tw = bakedTileWidth;
    return [x0 + x * tw, z0 + z * tw, x0 + (x + 1) * tw, z0 + (z + 1) * tw, y0 + 0.1];
  },
  clearance: () => bakedAgentRadius,
  setCameraEnabled: (on) => {
    controls.enabled = on;
  },
  updated: (r: ObstacleUpdate) => {
    // Only paths through a rebuilt tile can have changed.
    if (demo.path && r.touches(demo.path.points)) {
      demo.replans++;
      updatePath();
    }
    // The counts in the stats and the voxel, region and contour views follow once the boxes stand still.
    clearTimeout(reinspectTimer);
    const updated = nav;
    reinspectTimer = setTimeout(() => {
      if (!nav || nav !== updated) return; // replaced since: its own stats are shown
      if (demo.stats) demo.stats = { ...demo.stats, ...navStats(nav) };
      if (inspectInput && !obstacles.busy && !running && stageViewShown()) {
        void runInspect(inspectInput.geometry, inspectInput.config);
      }
      showStats();
    }, 400);
    showStats();
  },
  failed: (e) => {
    message(`obstacle update failed: ${e instanceof Error ? e.message : String(e)}`);
    console.warn('navbake demo: obstacle update failed', e);
  },
});
scene.add(obstacles.group);

/** The point at fraction t (0..1) of the way along a path's points. */
function alongPath(pts: ArrayLike<number>, t: number): Vec3 {
  let total = 0;
  for (let i = 3; i < pts.length; i += 3) total += Math.hypot(pts[i] - pts[i - 3], pts[i + 1] - pts[i - 2], pts[i + 2] - pts[i - 1]);
  let left = total * t;
  for (let i = 3; i < pts.length; i += 3) {
    const d = Math.hypot(pts[i] - pts[i - 3], pts[i + 1] - pts[i - 2], pts[i + 2] - pts[i - 1]);
    if (d >= left && d > 0) {
      const f = left / d;
      return [0, 1, 2].map((k) => pts[i - 3 + k] + (pts[i + k] - pts[i - 3 + k]) * f) as Vec3;
    }
    left -= d;
  }
  return [pts[pts.length - 3], pts[pts.length - 2], pts[pts.length - 1]];
}

/** Whether a box dropped at p would overlap a box already there. */
function onABox(p: Vec3): boolean {
  return obstacles.items.some(
    (it) =>
      Math.abs(it.base[0] - p[0]) < BOX_SIZE[0] &&
      Math.abs(it.base[2] - p[2]) < BOX_SIZE[2] &&
      Math.abs(it.base[1] - p[1]) < BOX_SIZE[1],
  );
}

/** Halfway along the drawn path, or where the middle of the view meets the level. Where a box stands there already
 * (the path is re-planned around a new box only once the navmesh has it), the nearest free point along the path. */
function dropPoint(): Vec3 | null {
  const pts = demo.path?.points;
  if (pts && pts.length >= 6) {
    const half = alongPath(pts, 0.5);
    for (const t of [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8]) {
      const p = alongPath(pts, t);
      if (!onABox(p)) return p;
    }
    return half;
  }
  raycaster.setFromCamera(new Vector2(0, 0), camera);
  const hit = raycaster.intersectObjects(pickTargets(), true)[0];
  return hit ? [hit.point.x, hit.point.y, hit.point.z] : null;
}

/** The tiled bake that boxes dropped on a solo navmesh wait for. */
let tilingForBoxes: Promise<void> | null = null;

async function dropBox(at?: Vec3): Promise<number> {
  if (nav && loadedName !== null) {
    // A loaded navmesh keeps no tile caches to rebuild; baking the level would silently replace it.
    message(`${loadedName} is a loaded navmesh: it takes no obstacles (no tile caches). Bake the level to drop boxes.`);
    return -1;
  }
  if (!demo.obstaclesLive) {
    // Obstacles rebuild tiles: a solo bake has none to rebuild. A box dropped while that tiled bake runs waits for
    // it too (a second bake would replace the first, and the first box would be lost).
    if (!tilingForBoxes) {
      let tileSize = demo.config.tileSize;
      if (tileSize <= 0) tileSize = levelTileSize(32);
      tilingForBoxes = runBake().finally(() => (tilingForBoxes = null));
      message(`obstacles rebuild tiles: baking in tiles of ${tileSize} cells first`);
    }
    await tilingForBoxes;
    if (!demo.obstaclesLive) return -1;
    message('');
  }
  const base = at ?? dropPoint();
  if (!base) return -1;
  const item = await obstacles.add(base);
  return obstacles.items.indexOf(item);
}
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
  const hit = raycaster.intersectObjects(pickTargets(), true)[0];
  if (!hit) return;
  let p: Vec3 = [hit.point.x, hit.point.y, hit.point.z];
  // On the navmesh for a walker of the navmesh; a voxel agent takes the point hit, on a wall or a ceiling too.
  const near = demo.options.agent === 'navmesh' ? nav?.nearestPoint(p) : null;
  if (near) p = near.point;
  if (e.button === 2 || e.shiftKey) endPoint = p;
  else startPoint = p;
  updatePath();
});

// ---- bake ----------------------------------------------------------------------------------------------------

/** The bake running, or the generated world downloading: what Cancel stops. */
let running: AbortController | null = null;
/** `running` when it is a world's download. */
let downloading: AbortController | null = null;

let cancelAt = 0;
function cancelBake(): void {
  if (!running) return;
  cancelAt = performance.now();
  running.abort();
}

/** Stops the bake or download running, quietly (what stops it takes over), and the tiles it drew so far go. */
function stopRun(): void {
  if (!running) return;
  running.abort();
  running = null;
  cancelButton.disabled = true;
  if (partialShown) drawShown();
}

/** Starts a bake or a download in place of the one running (if any); Cancel stops it. */
function startRun(): AbortController {
  stopRun();
  clearTimeout(autoTimer);
  pauseInspect(); // the workers are the bake's; the inspection shown stays, it is the navmesh's in use
  const ac = new AbortController();
  running = ac;
  cancelButton.disabled = false;
  demo.error = null;
  message('');
  return ac;
}

/** A bake or download that did not finish (cancelled, failed): the navmesh in use stays, drawn, with its views. */
function runEnded(): void {
  if (partialShown) drawShown();
  if (demo.world === null || stageViewShown()) resumeInspect();
  updatePath();
}

/**
 * Bakes the level with the panel's settings (extra over them). The navmesh in use stays, drawn, with its stats and
 * stage views, until the bake succeeds and replaces it: a bake that is cancelled, fails or is replaced by another
 * leaves it as it was (the tiles it drew so far go).
 */
async function runBake(extra?: NavBakeConfig): Promise<void> {
  const ac = startRun();
  if (extra) Object.assign(demo.config, extra);
  gui?.controllersRecursive().forEach((c) => c.updateDisplay());
  demo.phase = 'baking';
  demo.bakesStarted++;
  demo.progressEvents = 0;
  demo.lastProgress = null;
  demo.progressWindow = null;
  demo.framesDuringBake = 0;
  demo.longestFrameDuringBake = 0;
  setProgress(0, 'collecting triangles…');
  const config = { ...demo.config };
  const tiled = config.tileSize > 0;
  // Tiled bakes start with the tiles nearest the middle of the view, and the polygons show up as tiles arrive.
  const focus: Vec3 | null = tiled ? [controls.target.x, controls.target.y, controls.target.z] : null;
  demo.focus = focus;
  demo.tileOrder = [];
  demo.partialDraws = 0;
  const times = zeroTimes();
  let drawnAt = performance.now();
  const t0 = performance.now();
  try {
    const geometry = geometryFromObject3D(level, { skipInvisible: false });
    const b = new Box3().setFromArray(geometry.positions);
    const bounds: typeof bakedBounds = [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z];
    // bake() takes the buffers (transfer: true); inspect() gets its own copy afterwards
    const forInspect: Geometry = { positions: geometry.positions.slice(), indices: geometry.indices.slice() };
    const links = demo.links;
    const result = await bake({ ...geometry, links }, config, {
      workers: demo.options.workers,
      signal: ac.signal,
      transfer: true,
      // tiled bakes keep their tiles' heightfields, so that box obstacles rebuild single tiles
      obstacles: tiled,
      focus: focus ?? undefined,
      onTile: (e) => {
        if (running !== ac) return;
        demo.tileOrder.push([e.x, e.z]);
        for (const k of Object.keys(times) as (keyof StageTimes)[]) times[k] += e.times[k];
        const at = performance.now();
        if (at - drawnAt < demo.options.tileDrawMs) return;
        drawnAt = at;
        drawNavmesh(e.navMesh);
        demo.partialDraws++;
      },
      onProgress: (p) => {
        if (running !== ac) return;
        const at = performance.now();
        demo.progressWindow = { first: demo.progressWindow?.first ?? at, last: at };
        demo.progressEvents++;
        demo.lastProgress = p;
        // Solo bakes report the 9 stages in order; tiled bakes report finished tiles.
        const i = p.stage === 'tiles' ? 0 : STAGES.indexOf(p.stage);
        const within = p.total > 0 ? p.done / p.total : 0;
        const fraction = p.stage === 'tiles' ? within : (i + within) / STAGES.length;
        const what = p.stage === 'tiles' ? `tiles ${p.done} / ${p.total}` : `${p.stage} (${i + 1}/9)`;
        setProgress(fraction, `baking: ${what}`);
      },
    });
    const now = performance.now();
    if (running !== ac) {
      result.dispose();
      return;
    }
    demo.lastBake = { start: t0, end: now };
    demo.bakeTimes = tiled ? { tiles: demo.tileOrder.length, times } : null;
    const ms = now - t0;
    bakedBounds = bounds;
    bakedTileWidth = config.tileSize > 0 ? Math.fround(config.tileSize * Math.fround(config.cellSize)) : 0;
    bakedAgentRadius = config.agentRadius;
    demo.obstaclesLive = config.tileSize > 0;
    demo.source = levelName; // a loaded .navbake shown before is replaced
    showNavmesh(result);
    void obstacles.attach(); // the boxes already dropped go into the new navmesh
    demo.stats = { ms, ...navStats(result) };
    if (demo.stats.polygons === 0) {
      // A green "baked" over an empty view said nothing: a model facing down (its winding reversed) or lying on its
      // side (Z up) has no floor that faces up.
      message('no walkable surface: no floor faces up within agentMaxSlope. A model exported Z-up or with its faces reversed has none; so has a level smaller than the agent.');
    }
    updateTileGrid(config.tileSize, config.cellSize);
    applyViews();
    updatePath();
    demo.phase = 'baked';
    demo.bakesDone++;
    setProgress(1, `baked in ${ms.toFixed(0)} ms`, 'done');
    // The stage views showed the navmesh replaced. A big world is inspected (about a second bake) only when a stage
    // view is on.
    stopInspect();
    inspectInput = { geometry: forInspect, config };
    if (demo.world === null || stageViewShown()) void runInspect(forInspect, config);
  } catch (e) {
    if (running !== ac) return;
    if (ac.signal.aborted) {
      demo.phase = 'cancelled';
      demo.cancelMs = performance.now() - cancelAt;
      setProgress(0, nav ? 'cancelled: the navmesh before stays' : 'cancelled: no navmesh', 'failed');
      console.info('navbake demo: bake cancelled');
    } else {
      demo.phase = 'error';
      demo.error = e instanceof Error ? `${(e as { code?: string }).code ?? e.name}: ${e.message}` : String(e);
      setProgress(1, 'bake failed', 'failed');
      message(
        nav
          ? `${demo.error}\n(the navmesh shown is the one before: ${demo.source})`
          : `${demo.error}\n${levelName} has no navmesh: change the settings and Bake again`,
      );
      console.warn('navbake demo: bake failed', e);
    }
  } finally {
    if (running === ac) {
      running = null;
      cancelButton.disabled = true;
      if (demo.phase !== 'baked') runEnded();
    }
    showStats();
  }
}

/** The counts the stats panel shows of a navmesh. */
function navStats(n: NavMesh): Omit<BakeStats, 'ms'> {
  return {
    polygons: n.polygons().length,
    tiles: n.tileCount,
    triangles: n.toGeometry().indices.length / 3,
    bytes: n.save().length,
  };
}

/** Whether a view that needs inspect() is on. */
function stageViewShown(): boolean {
  const v = demo.views;
  return v.voxels || v.regions || v.contours || v.rawContours;
}

/** Inspects the shown bake when a stage view was turned on and it has not been inspected (a big world). */
function inspectIfShown(): void {
  if (stageViewShown()) resumeInspect();
}

/**
 * Inspects the navmesh in use when it was baked here and its inspection is missing: not asked for yet (a big world),
 * or stopped by a bake that then did not replace the navmesh. Not while a bake runs (it has the workers).
 */
function resumeInspect(): void {
  const missing = demo.inspectPhase === 'idle' || demo.inspectPhase === 'cancelled';
  if (inspectInput && nav && loadedName === null && !running && !inspecting && missing) {
    void runInspect(inspectInput.geometry, inspectInput.config);
  }
}

// ---- inspect: the intermediate stages for the debug views and the stage times -----------------------------------

let inspecting: AbortController | null = null;

/** Stops a running inspect; what it showed stays until the next one replaces it. */
function abortInspect(): void {
  inspecting?.abort();
  inspecting = null;
}

/** Stops a running inspect for a bake (which needs the workers): resumeInspect() runs it again if that bake does not
 * replace the navmesh. */
function pauseInspect(): void {
  if (!inspecting) return;
  abortInspect();
  demo.inspectPhase = 'cancelled';
}

/** Stops inspecting and clears the views: what they showed no longer matches the navmesh. */
function stopInspect(): void {
  abortInspect();
  inspectionViews.reset();
  demo.inspection = null;
  demo.inspectPhase = 'idle';
}

/** The tiles of the grid bake() lays over the geometry (float32 arithmetic, as the package computes it). */
function gridTiles(tileSize: number, cellSize: number): [number, number][] {
  if (!bakedBounds) return [];
  const [x0, , z0, x1, , z1] = bakedBounds;
  const tw = Math.fround(tileSize * Math.fround(cellSize));
  const nx = Math.max(1, Math.ceil((x1 - x0) / tw));
  const nz = Math.max(1, Math.ceil((z1 - z0) / tw));
  const out: [number, number][] = [];
  for (let z = 0; z < nz; z++) for (let x = 0; x < nx; x++) out.push([x, z]);
  return out;
}

/** What the last bake was inspected from (inspected again, with the obstacles, after they change). */
let inspectInput: { geometry: Geometry; config: Required<NavBakeConfig> } | null = null;

/**
 * Tile inspections in flight at once. The pool runs tasks in order: an obstacle update waits behind at most these
 * (a few milliseconds of worker time each), not behind a whole level's worth of tiles; and each result costs the
 * page a message, so several in flight keep the workers busy while the page handles them.
 */
const INSPECT_IN_FLIGHT = 8;

/**
 * Inspects what was just baked: a solo bake as one inspection, a tiled bake tile by tile (on the same workers,
 * a few at a time), so the regions and contours shown are the ones the tiles really have. The boxes dropped on a
 * tiled navmesh go in as area volumes: what a tile rebuild does with them.
 */
async function runInspect(geometry: Geometry, config: Required<NavBakeConfig>): Promise<void> {
  abortInspect();
  inspectInput = { geometry, config };
  const ac = new AbortController();
  inspecting = ac;
  demo.inspectPhase = 'running';
  const t0 = performance.now();
  const opts = { workers: demo.options.workers, signal: ac.signal };
  const volumes = demo.obstaclesLive ? obstacles.items.map((it) => Obstacles.volume(it.base, config.agentRadius)) : [];
  const input = { ...geometry, volumes };
  try {
    let list: Inspection[];
    if (config.tileSize > 0) {
      const tiles = gridTiles(config.tileSize, config.cellSize);
      const found: (Inspection | null)[] = [];
      let next = 0;
      const lane = async () => {
        while (next < tiles.length && !ac.signal.aborted) {
          const k = next++;
          found[k] = await inspect(input, config, { ...opts, tile: tiles[k] }).catch((e: { code?: string }) => {
            if (e?.code === 'NB_ERR_EMPTY_MESH') return null; // no triangles near this tile: nothing baked there
            throw e;
          });
        }
      };
      await Promise.all(Array.from({ length: INSPECT_IN_FLIGHT }, lane));
      list = found.filter((i) => i != null);
    } else {
      list = [await inspect(input, config, opts)];
    }
    if (inspecting !== ac) return;
    inspectionViews.set(list);
    const times = zeroTimes();
    for (const i of list) for (const k of Object.keys(times) as (keyof StageTimes)[]) times[k] += i.times[k];
    demo.inspection = {
      tiles: list.length,
      spans: list.reduce((n, i) => n + i.spans.count, 0),
      regions: list.reduce((n, i) => n + i.regionCount, 0),
      contours: list.reduce((n, i) => n + i.contours.count, 0),
      times,
      peakBytes: Math.max(0, ...list.map((i) => i.memory.peakBytes)),
      heapBytes: Math.max(0, ...list.map((i) => i.memory.heapBytes)),
      ms: performance.now() - t0,
    };
    demo.inspectPhase = 'done';
    demo.inspectsDone++;
    if (demo.inspection.spans > MAX_VOXELS) message(`voxel view: ${demo.inspection.spans} spans, too many to draw`);
    applyViews();
  } catch (e) {
    if (inspecting !== ac) return;
    if (ac.signal.aborted) {
      demo.inspectPhase = 'cancelled';
      return;
    }
    demo.inspectPhase = 'error';
    message(`inspect failed: ${e instanceof Error ? e.message : String(e)}`);
    console.warn('navbake demo: inspect failed', e);
  } finally {
    if (inspecting === ac) inspecting = null;
    showStats();
  }
}

let autoTimer: ReturnType<typeof setTimeout> | undefined;
function configChanged(): void {
  if (!demo.options.autoBake) return;
  clearTimeout(autoTimer);
  if (running && running === downloading) return; // the world bakes with the new settings once it is here
  if (nav && loadedName !== null && !running) {
    // Baking the level would silently replace the navmesh the user loaded: Bake does that when asked.
    message(`${loadedName} is a loaded navmesh: the settings apply to the next bake (Bake bakes ${levelName})`);
    return;
  }
  autoTimer = setTimeout(() => void runBake(), 300);
}

/**
 * The panel's tile size before the page set one for the shown level (a generated world in tiles of 64, boxes on a
 * solo level in tiles of 32): put back when the level changes, unless it was changed since.
 */
let tileSizeBefore: { was: number; set: number } | null = null;

/** Sets the panel's tile size for the shown level only (see tileSizeBefore); returns it. */
function levelTileSize(tileSize: number): number {
  if (!tileSizeBefore) tileSizeBefore = { was: demo.config.tileSize, set: tileSize };
  else tileSizeBefore.set = tileSize;
  demo.config.tileSize = tileSize;
  gui.controllersRecursive().forEach((c) => c.updateDisplay());
  return tileSize;
}

// ---- files: drop a model to bake it, export and load .navbake ------------------------------------------------

/** The name of the level shown: what a bake bakes. */
let levelName = 'built-in level';
/** Counts the levels shown: the voxel grid of one is never used for another. */
let levelSerial = 0;

/**
 * Counts the user's choices of what to show (the built-in level, a file, a generated world). One that is still
 * being read when a later one is made (a big file, a .navbake) is dropped: the latest choice wins. (A world still
 * downloading is stopped by whatever takes its place; see startRun and stopRun.)
 */
let levelChoice = 0;

/**
 * Shows a new level, with no navmesh until its bake (which the caller starts) succeeds: the navmesh, the stage views,
 * the boxes, the path and the stats of the level before all go with it.
 */
function useLevel(object: Object3D, name: string): void {
  stopObjRead(); // a dropped .obj still being read is replaced
  levelSerial++;
  levelVoxels.reset(); // the grid of the level before (or its voxelize running) goes with it
  stopInspect();
  inspectInput = null;
  demo.bakeTimes = null;
  obstacles.discard();
  clearNavmesh();
  if (tileSizeBefore) {
    // the tile size the page chose for the level before (unless changed since)
    if (demo.config.tileSize === tileSizeBefore.set) demo.config.tileSize = tileSizeBefore.was;
    tileSizeBefore = null;
    gui.controllersRecursive().forEach((c) => c.updateDisplay());
  }
  scene.remove(level);
  disposeLevel(level);
  level = object;
  scene.add(level);
  levelName = name;
  demo.source = name;
  demo.world = null;
  startPoint = endPoint = null;
  updatePath();
  frame(level);
  applyViews();
}

/** Whether a model has a triangle to bake (a .glb without meshes, an .obj without faces have none). */
function hasTriangles(object: Object3D): boolean {
  let found = false;
  object.traverse((o) => {
    const m = o as Mesh;
    if (!m.isMesh || !m.geometry?.getAttribute('position')) return;
    if ((m.geometry.index?.count ?? m.geometry.getAttribute('position').count) >= 3) found = true;
  });
  return found;
}

/** A vertex of a mesh that is not a finite point (a NaN or an overflow in the file), or null. Such a model has no
 * bounds: framing it made the camera NaN, and the view stayed blank. */
function nonFiniteVertex(object: Object3D): number[] | null {
  let bad: number[] | null = null;
  object.traverse((o) => {
    const p = (o as Mesh).isMesh ? (o as Mesh).geometry?.getAttribute('position') : undefined;
    for (let i = 0; p && !bad && i < p.count; i++) {
      const v = [p.getX(i), p.getY(i), p.getZ(i)];
      if (!v.every(Number.isFinite)) bad = v;
    }
  });
  return bad;
}

async function openFile(file: File): Promise<void> {
  const name = file.name;
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  try {
    if (ext === 'navbake') {
      const choice = ++levelChoice;
      stopObjRead(); // a dropped .obj still being read is replaced
      const loaded = await NavMesh.load(new Uint8Array(await file.arrayBuffer()));
      if (choice !== levelChoice) {
        loaded.dispose();
        return;
      }
      // Shown over the level as it is: a bake or download running stops (Bake bakes the level again).
      stopRun();
      stopInspect(); // a loaded navmesh has no stages to inspect
      inspectInput = null;
      bakedBounds = null;
      bakedTileWidth = 0;
      demo.bakeTimes = null;
      demo.obstaclesLive = false; // a loaded navmesh has no tile caches
      demo.source = `${name} (loaded)`;
      showNavmesh(loaded, name);
      void obstacles.attach();
      updateTileGrid(0, 0);
      demo.stats = { ms: 0, ...navStats(loaded), bytes: file.size };
      demo.phase = 'loaded';
      demo.error = null;
      message('');
      setProgress(1, `loaded ${name}`, 'done');
      updatePath();
      return;
    }
    if (ext !== 'glb' && ext !== 'gltf' && ext !== 'obj') {
      message(`${name}: drop a .glb, .gltf, .obj or .navbake file`);
      return;
    }
    const choice = ++levelChoice;
    let object: Object3D;
    if (ext === 'glb' || ext === 'gltf') {
      const data = ext === 'glb' ? await file.arrayBuffer() : await file.text();
      if (typeof data === 'string') {
        // A dropped .gltf cannot reach the .bin files and textures it names beside it: say so before three.js
        // tries to fetch them.
        const outside = externalFiles(data);
        if (outside.length) {
          throw new Error(`names files beside it (${outside.join(', ')}), which a dropped file cannot reach: drop a .glb, or a .gltf with its data embedded`);
        }
      }
      const loader = await gltfLoader(extensionsUsed(data));
      try {
        object = (await loader.parseAsync(data, '')).scene;
      } catch (e) {
        // three.js's own errors (a RangeError from a DataView, "Unexpected token" from JSON.parse) do not say what
        // was being read.
        throw new Error(`not a readable ${ext === 'glb' ? 'binary glTF' : 'glTF'} file: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        loader.dracoLoader?.dispose(); // its decoder workers
      }
    } else {
      message(`reading ${name} (${MiB(file.size)})…`);
      try {
        object = await readObj(file); // in a worker: a big file takes seconds
      } catch (e) {
        if (choice !== levelChoice) return; // replaced: its read was stopped
        throw e;
      }
      message('');
    }
    if (choice !== levelChoice) return; // something else was chosen while this was read
    // A file with nothing to bake changes nothing: the level and navmesh shown stay.
    const bad = nonFiniteVertex(object);
    if (bad) throw new Error(`a vertex is at (${bad.join(', ')}), not a finite point: nothing to show or bake (the level shown stays)`);
    if (!hasTriangles(object)) throw new Error('no triangles in it to bake (the level shown stays)');
    const group = new Group();
    group.add(object);
    demo.links = [];
    useLevel(group, name);
    await runBake();
  } catch (e) {
    message(`${name}: ${e instanceof Error ? e.message : String(e)}`);
    console.warn('navbake demo: could not open', name, e);
  }
}

/** The extensions a .gltf (text) or .glb (bytes: its JSON chunk) uses; none when it cannot be read as glTF. */
function extensionsUsed(data: string | ArrayBuffer): string[] {
  try {
    let text = data;
    if (typeof text !== 'string') {
      const view = new DataView(text);
      // header: magic, version, length; then the JSON chunk: its length, 'JSON', the text
      if (text.byteLength < 20 || view.getUint32(16, true) !== 0x4e4f534a) return [];
      text = new TextDecoder().decode(new Uint8Array(text, 20, Math.min(view.getUint32(12, true), text.byteLength - 20)));
    }
    const used = JSON.parse(text)?.extensionsUsed;
    return Array.isArray(used) ? used.filter((e): e is string => typeof e === 'string') : [];
  } catch {
    return []; // GLTFLoader says what is wrong
  }
}

/** A GLTFLoader with the decoders a file needs, loaded only then: meshoptimizer's (one module, its wasm inside)
 * and Draco's (its two files beside the page, under draco/: the Makefile copies them from three.js). */
async function gltfLoader(extensions: string[]): Promise<GLTFLoader> {
  const loader = new GLTFLoader();
  if (extensions.includes('EXT_meshopt_compression')) {
    const { MeshoptDecoder } = await import('three/examples/jsm/libs/meshopt_decoder.module.js');
    loader.setMeshoptDecoder(MeshoptDecoder);
  }
  if (extensions.includes('KHR_draco_mesh_compression')) {
    const { DRACOLoader } = await import('three/examples/jsm/loaders/DRACOLoader.js');
    loader.setDRACOLoader(new DRACOLoader().setDecoderPath(new URL('draco/', document.baseURI).href));
  }
  return loader;
}

/** The files a .gltf names by relative URI (its buffers and images that are not embedded as data: URIs). */
function externalFiles(text: string): string[] {
  let json: { buffers?: { uri?: unknown }[]; images?: { uri?: unknown }[] };
  try {
    json = JSON.parse(text);
  } catch {
    return []; // not JSON: GLTFLoader says so
  }
  const uris = [...(json?.buffers ?? []), ...(json?.images ?? [])].map((b) => b?.uri);
  return uris.filter((u): u is string => typeof u === 'string' && !u.startsWith('data:'));
}

/** Frees a replaced level's geometries and materials (a big world holds tens of megabytes). */
function disposeLevel(object: Object3D): void {
  object.traverse((o) => {
    const m = o as Mesh;
    if (!m.isMesh) return;
    m.geometry.dispose();
    for (const mat of Array.isArray(m.material) ? m.material : [m.material]) mat.dispose();
  });
}

/**
 * The generated world of about `triangles` triangles (world-N.bin, next to the page): shown, baked in tiles of the
 * panel's tile size (64 cells when it is 0), the tiles nearest the middle of the view first, then a path from
 * there to a random point it reaches, far away.
 */
async function loadWorld(triangles: number): Promise<void> {
  // The download is this choice's run: Cancel stops it, and a bake, another level or a loaded .navbake replaces it.
  ++levelChoice;
  const ac = startRun();
  downloading = ac;
  demo.phase = 'loading';
  setProgress(0, `downloading world-${triangles}.bin…`);
  let g: WorldGeometry;
  try {
    g = await fetchWorld(triangles, ac.signal);
  } catch (e) {
    if (running !== ac) return; // replaced
    running = null;
    cancelButton.disabled = true;
    if (ac.signal.aborted) {
      demo.phase = 'cancelled';
      setProgress(0, 'download cancelled: the level before stays', 'failed');
    } else {
      demo.phase = 'error';
      demo.error = e instanceof Error ? e.message : String(e);
      setProgress(1, 'could not load the world', 'failed');
      message(demo.error);
      console.warn('navbake demo: could not load the world', e);
    }
    runEnded();
    showStats();
    return;
  }
  if (running !== ac) return; // replaced while the last bytes came
  running = null; // the bake takes over
  const world = worldObject(g);
  try {
    demo.links = [];
    useLevel(world, `generated world, ${g.indices.length / 3} triangles`);
    demo.world = triangles;
    if (demo.config.tileSize <= 0) levelTileSize(64);
    await runBake();
    if (level !== world || (demo.phase as Phase) !== 'baked' || !nav) return; // cancelled, failed, or replaced
    // A start near the middle of the view that reaches far (not on a roof or in a closed yard: the middle, then
    // points on rings round it), and the farthest of a few random ends it reaches.
    const c = controls.target;
    const starts: Vec3[] = [[c.x, c.y, c.z]];
    for (const r of [30, 60, 120]) {
      for (let k = 0; k < 8; k++) starts.push([c.x + r * Math.cos((k * Math.PI) / 4), c.y, c.z + r * Math.sin((k * Math.PI) / 4)]);
    }
    let best: { start: Vec3; end: Vec3; d: number } | null = null;
    for (let s = 0; s < starts.length && !(best && best.d > 150); s++) {
      const start = nav.nearestPoint(starts[s], { halfExtents: [10, 200, 10] })?.point;
      for (let e = 1; start && e <= 6; e++) {
        const end = nav.randomPoint({ seed: 100 * s + e });
        if (!end || nav.findPath(start, end).status !== 'complete') continue;
        const d = Math.hypot(end[0] - start[0], end[2] - start[2]);
        if (!best || d > best.d) best = { start, end, d };
      }
    }
    if (!best) return;
    startPoint = best.start;
    endPoint = best.end;
    updatePath();
  } catch (e) {
    if (level !== world) return;
    demo.phase = 'error';
    demo.error = e instanceof Error ? e.message : String(e);
    setProgress(1, 'could not load the world', 'failed');
    message(demo.error);
    console.warn('navbake demo: could not load the world', e);
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

/** The built-in level, baked (the panel's "Built-in level"). */
function showBuiltIn(): Promise<void> {
  ++levelChoice;
  demo.links = LEVEL_LINKS;
  useLevel(buildLevel(), 'built-in level');
  startPoint = LEVEL_START;
  endPoint = LEVEL_END;
  updatePath(); // the markers; a voxel agent's voxels are made meanwhile
  return runBake();
}

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

/** Slider ranges of the config fields; a field the package adds later still gets a plain number box. lil-gui
 * rounds a typed value to the step too, so the steps are fine enough for the values people type (0.025, 0.33). */
const RANGES: Partial<Record<keyof NavBakeConfig, [number, number, number]>> = {
  cellSize: [0.02, 2, 0.001],
  cellHeight: [0.02, 2, 0.001],
  agentHeight: [0.1, 10, 0.01],
  agentRadius: [0, 5, 0.01],
  agentMaxClimb: [0, 5, 0.01],
  agentMaxSlope: [0, 89, 0.1],
  regionMinSize: [0, 150, 1],
  regionMergeSize: [0, 150, 1],
  edgeMaxLen: [0, 50, 0.1],
  edgeMaxError: [0.1, 3, 0.01],
  vertsPerPoly: [3, 12, 1],
  detailSampleDist: [0, 16, 0.01],
  detailSampleMaxError: [0, 16, 0.01],
  tileSize: [0, 512, 16], // 0 (one tile) or a multiple of 16: every value a slider gives bakes
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
  builtIn: () => void showBuiltIn(),
  exportNavmesh,
  load: () => fileInput.click(),
  frame: () => frame(level),
  dropBox: () => void dropBox(),
  clearObstacles: () => void obstacles.clear(),
};
gui.add(actions, 'bake').name('Bake');
gui.add(actions, 'cancel').name('Cancel');
gui.add(demo.options, 'autoBake').name('bake on change');
gui.add(demo.options, 'agent', AGENT_LABELS).name('agent').onChange(() => updatePath());
const cfg = gui.addFolder('Config');
const configObject = demo.config as unknown as Record<string, number | string>;
for (const key of Object.keys(DEFAULTS) as (keyof NavBakeConfig)[]) {
  let c: Controller;
  if (key === 'partition') c = cfg.add(configObject, key, ['watershed', 'monotone', 'layers', 'wavefront']);
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
const viewsChanged = () => {
  applyViews();
  inspectIfShown();
};
views.add(demo.views, 'level').name('level geometry').onChange(applyViews);
views.add(demo.views, 'navmesh').name('polygons (filled)').onChange(applyViews);
views.add(demo.views, 'edges').name('polygon edges').onChange(applyViews);
views.add(demo.views, 'detail').name('detail mesh').onChange(applyViews);
views.add(demo.views, 'tiles').name('tile borders').onChange(applyViews);
views.add(demo.views, 'path').name('path').onChange(applyViews);
views.add(demo.views, 'voxels').name('walkable voxels (by area)').onChange(viewsChanged);
views.add(demo.views, 'regions').name('regions in colour').onChange(viewsChanged);
views.add(demo.views, 'contours').name('contours').onChange(viewsChanged);
views.add(demo.views, 'rawContours').name('contours (raw)').onChange(viewsChanged);
views.add(demo.views, 'links').name('off-mesh links').onChange(applyViews);
const obstacleFolder = gui.addFolder('Obstacles (drag a box to move it, double-click it to remove it)');
obstacleFolder.add(actions, 'dropBox').name('Drop box obstacle');
obstacleFolder.add(actions, 'clearObstacles').name('Clear obstacles');
const files = gui.addFolder('Files');
const exportController = files.add(actions, 'exportNavmesh').name('Export .navbake').disable(); // enabled by a navmesh
files.add(actions, 'load').name('Load .navbake / model…');
files.add(actions, 'builtIn').name('Built-in level');
for (const n of WORLD_SIZES) {
  files.add({ load: () => void loadWorld(n) }, 'load').name(`Generated world (${n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`} triangles)`);
}
gui.add(actions, 'frame').name('Frame level');

// ---- start: bake the built-in level and show a path between two known points ---------------------------------

// On a small page the panel starts folded (its title opens it), so that the HUD and the panel leave the level in view:
// when open, it would leave less than frame() needs between it and the HUD (at 640 to 930 pixels wide, both ends of
// the path were under them).
const panelGap = gui.domElement.getBoundingClientRect().left - hud.getBoundingClientRect().right;
if (panelGap < window.innerWidth * 0.35 || window.innerHeight <= 480) gui.close();
frame(level);
startPoint = LEVEL_START;
endPoint = LEVEL_END;
updatePath();
applyViews();
void runBake();
