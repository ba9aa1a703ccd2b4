// Live box obstacles: drop a box on the level, drag it along the ground, and the tiles it touches are rebuilt in
// the workers (NavMesh.addObstacle / updateObstacle / removeObstacle, then update()). Updates are coalesced: at
// most one runs at a time, and whatever moved meanwhile goes into the next one. Each update flashes the tiles it
// rebuilt and asks the page to re-plan the paths it touches.
import type { NavMesh, ObstacleUpdate } from 'navbake';
import {
  BoxGeometry,
  BufferAttribute,
  BufferGeometry,
  type Camera,
  DoubleSide,
  EdgesGeometry,
  Group,
  LineBasicMaterial,
  LineSegments,
  Mesh,
  MeshBasicMaterial,
  MeshLambertMaterial,
  type Object3D,
  Raycaster,
  Vector2,
} from 'three';

export type Vec3 = [number, number, number];

/** What the obstacles need from the page. */
export interface ObstacleHost {
  /** the shown navmesh when it takes obstacles (a tiled bake with obstacles: true), else null */
  navmesh(): NavMesh | null;
  camera: Camera;
  canvas: HTMLCanvasElement;
  /** what a dragged box slides on (the level) */
  ground(): Object3D[];
  /** the world rectangle of tile (x, z): x0, z0, x1, z1, and the height to draw it at */
  tileRect(x: number, z: number): [number, number, number, number, number] | null;
  /** how far a box's carve reaches past its sides: the baked agent radius, so that agents keep their bodies off
   * a box as they do off walls (obstacles carve what they cover, after the bake's erosion) */
  clearance(): number;
  /** orbit controls off while dragging */
  setCameraEnabled(on: boolean): void;
  /** an update finished (paths to re-plan: result.touches(points)) */
  updated(result: ObstacleUpdate): void;
  /** an update failed */
  failed(e: unknown): void;
}

interface Item {
  /** the navmesh's obstacle id; null while the shown navmesh takes no obstacles */
  id: number | null;
  mesh: Mesh<BoxGeometry, MeshLambertMaterial>;
  /** centre of the box's base */
  base: Vec3;
}

/** Box size [world]: about a crate; lower than the first floor's 2.7 m clearance, so it never reaches a floor above. */
export const BOX_SIZE: Vec3 = [2.4, 1.6, 2.4];
const FLASH_MS = 1500;

export class Obstacles {
  readonly group = new Group();
  readonly items: Item[] = [];
  /** update() calls finished / running now / most running at once (never above 1) */
  updates = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** the tiles the last update rebuilt */
  lastTiles: [number, number][] = [];
  private readonly host: ObstacleHost;
  private readonly geometry = new BoxGeometry(...BOX_SIZE).translate(0, BOX_SIZE[1] / 2, 0);
  private readonly material = new MeshLambertMaterial({ color: 0xe0632a, transparent: true, opacity: 0.85 });
  private readonly flashes = new Group();
  private running: Promise<void> | null = null;
  private again = false;
  private dragging: { item: Item; pointer: number; moved: boolean } | null = null;
  private readonly raycaster = new Raycaster();

  constructor(host: ObstacleHost) {
    this.host = host;
    this.group.name = 'obstacles';
    this.flashes.renderOrder = 3;
    this.group.add(this.flashes);
    const c = host.canvas;
    // capture: a press on a box must reach us before the orbit controls take it
    c.addEventListener('pointerdown', (e) => this.down(e), { capture: true });
    c.addEventListener('pointermove', (e) => this.move(e));
    c.addEventListener('pointerup', (e) => this.up(e), { capture: true });
    c.addEventListener('pointercancel', (e) => this.up(e), { capture: true });
    c.addEventListener('dblclick', (e) => {
      const item = this.pick(e);
      if (item) void this.remove(item);
    });
  }

  /** The box volume of an obstacle standing at base (a little below it, so the floor it stands on is inside),
   * grown by clearance on every side. */
  static volume(base: Vec3, clearance: number) {
    const [w, h, d] = BOX_SIZE;
    const x = w / 2 + clearance;
    const z = d / 2 + clearance;
    return {
      type: 'box' as const,
      min: [base[0] - x, base[1] - 0.5, base[2] - z],
      max: [base[0] + x, base[1] + h, base[2] + z],
    };
  }

  private volume(base: Vec3) {
    return Obstacles.volume(base, this.host.clearance());
  }

  /** Drops a box at base; resolves once the navmesh has it (after the update). Throws (and drops nothing) when the
   * navmesh refuses the box (a NaN coordinate, say): a box it never took would break every later bake's attach(). */
  add(base: Vec3): Promise<Item> {
    const nav = this.host.navmesh();
    const id = nav ? nav.addObstacle(this.volume(base)) : null;
    const mesh = new Mesh(this.geometry, this.material);
    mesh.name = 'obstacle';
    mesh.add(new LineSegments(new EdgesGeometry(this.geometry), new LineBasicMaterial({ color: 0x401808 })));
    mesh.position.fromArray(base);
    const item: Item = { id, mesh, base: [...base] };
    this.items.push(item);
    this.group.add(mesh);
    return this.requestUpdate().then(() => item);
  }

  /** Moves a box; the update is coalesced with other changes. Throws (and leaves the box where it was) when the
   * navmesh refuses the new place. */
  moveTo(item: Item, base: Vec3): Promise<void> {
    const nav = this.host.navmesh();
    if (nav && item.id !== null) nav.updateObstacle(item.id, this.volume(base));
    item.base = [...base];
    item.mesh.position.fromArray(base);
    return this.requestUpdate();
  }

  remove(item: Item): Promise<void> {
    const i = this.items.indexOf(item);
    if (i < 0) return Promise.resolve();
    this.items.splice(i, 1);
    this.group.remove(item.mesh);
    (item.mesh.children[0] as LineSegments).geometry.dispose();
    const nav = this.host.navmesh();
    if (nav && item.id !== null) nav.removeObstacle(item.id);
    return this.requestUpdate();
  }

  clear(): Promise<void> {
    return Promise.all([...this.items].map((it) => this.remove(it))).then(() => undefined);
  }

  /** Takes every box away without a navmesh update: the level changed, and its navmesh goes with it. */
  discard(): void {
    if (this.dragging) {
      this.host.canvas.releasePointerCapture?.(this.dragging.pointer);
      this.dragging = null;
      this.host.setCameraEnabled(true);
    }
    for (const it of this.items.splice(0)) {
      this.group.remove(it.mesh);
      (it.mesh.children[0] as LineSegments).geometry.dispose();
    }
    this.lastTiles = [];
  }

  /** A new navmesh is shown: give it every box (when it takes obstacles) and rebuild. */
  attach(): Promise<void> {
    const nav = this.host.navmesh();
    for (const it of this.items) it.id = nav ? nav.addObstacle(this.volume(it.base)) : null;
    return this.items.length && nav ? this.requestUpdate() : Promise.resolve();
  }

  /**
   * Runs update() until nothing is left to do, one call at a time: changes made while one runs are picked up by
   * the next, so a drag produces a steady stream of rebuilds, never a queue of them.
   */
  requestUpdate(): Promise<void> {
    this.again = true;
    if (!this.running) {
      this.running = this.loop().finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  private async loop(): Promise<void> {
    while (this.again) {
      this.again = false;
      const nav = this.host.navmesh();
      if (!nav || nav.pendingTiles === 0) continue;
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      try {
        const r = await nav.update();
        if (this.host.navmesh() !== nav) continue; // replaced meanwhile: attach() handles the new one
        this.updates++;
        this.lastTiles = r.tiles;
        this.flash(r.tiles);
        this.host.updated(r);
      } catch (e) {
        // A navmesh replaced meanwhile (a new bake, a new level) is disposed: its update failing says nothing.
        if (this.host.navmesh() !== nav) continue;
        this.host.failed(e);
      } finally {
        this.inFlight--;
      }
    }
  }

  /** Yellow squares over the rebuilt tiles, fading out. */
  private flash(tiles: [number, number][]): void {
    const p: number[] = [];
    for (const [x, z] of tiles) {
      const r = this.host.tileRect(x, z);
      if (!r) continue;
      const [x0, z0, x1, z1, y] = r;
      p.push(x0, y, z0, x0, y, z1, x1, y, z1, x0, y, z0, x1, y, z1, x1, y, z0);
    }
    if (!p.length) return;
    const g = new BufferGeometry();
    g.setAttribute('position', new BufferAttribute(new Float32Array(p), 3));
    const m = new Mesh(
      g,
      new MeshBasicMaterial({ color: 0xffe040, transparent: true, opacity: 0.45, depthTest: false, depthWrite: false, side: DoubleSide }),
    );
    m.renderOrder = 3;
    m.userData.born = performance.now();
    this.flashes.add(m);
  }

  /** Per frame: fades the flashes. */
  tick(now: number): void {
    for (const m of [...this.flashes.children] as Mesh<BufferGeometry, MeshBasicMaterial>[]) {
      const age = (now - m.userData.born) / FLASH_MS;
      if (age >= 1) {
        this.flashes.remove(m);
        m.geometry.dispose();
        m.material.dispose();
      } else m.material.opacity = 0.45 * (1 - age);
    }
  }

  get flashing(): number {
    return this.flashes.children.length;
  }

  // ---- dragging ----

  private ray(e: PointerEvent | MouseEvent): Raycaster {
    const rect = this.host.canvas.getBoundingClientRect();
    const ndc = new Vector2(((e.clientX - rect.left) / rect.width) * 2 - 1, -((e.clientY - rect.top) / rect.height) * 2 + 1);
    this.raycaster.setFromCamera(ndc, this.host.camera);
    return this.raycaster;
  }

  private pick(e: PointerEvent | MouseEvent): Item | null {
    if (!this.items.length) return null;
    const hit = this.ray(e).intersectObjects(this.items.map((it) => it.mesh), false)[0];
    return hit ? (this.items.find((it) => it.mesh === hit.object) ?? null) : null;
  }

  private down(e: PointerEvent): void {
    if (e.button !== 0) return;
    const item = this.pick(e);
    if (!item) return;
    e.stopImmediatePropagation(); // not an orbit, not a path click
    this.host.canvas.setPointerCapture?.(e.pointerId);
    this.dragging = { item, pointer: e.pointerId, moved: false };
    this.host.setCameraEnabled(false);
  }

  private move(e: PointerEvent): void {
    const d = this.dragging;
    if (!d || e.pointerId !== d.pointer) return;
    const hit = this.ray(e).intersectObjects(this.host.ground(), true)[0];
    if (!hit) return;
    d.moved = true;
    void this.moveTo(d.item, [hit.point.x, hit.point.y, hit.point.z]);
  }

  private up(e: PointerEvent): void {
    const d = this.dragging;
    if (!d || e.pointerId !== d.pointer) return;
    this.dragging = null;
    e.stopImmediatePropagation(); // the end of a drag is no path click
    this.host.canvas.releasePointerCapture?.(e.pointerId);
    this.host.setCameraEnabled(true);
  }

  /** a drag or an update is going on */
  get busy(): boolean {
    return this.dragging !== null || this.running !== null;
  }

  get isDragging(): boolean {
    return this.dragging !== null;
  }
}
