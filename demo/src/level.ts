// The demo's built-in level, generated here (no external files): rough ground with scattered rocks, a two-storey
// building on pillars (stairs up to the first floor, a ramp up to the second), a bridge over to a tower with a
// long ramp back down, a walled yard with one wide and one too-narrow door, and a colonnade. Everything comes
// from a seeded generator, so the same seed gives the same triangles (and the same navmesh) on every machine.
import {
  BoxGeometry,
  BufferGeometry,
  Color,
  CylinderGeometry,
  Group,
  Mesh,
  MeshLambertMaterial,
  PlaneGeometry,
} from 'three';

export type Vec3 = [number, number, number];

/** Mulberry32: a small seeded PRNG, so the rocks land in the same places for a given seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer-lattice hash in [0, 1): pure integer arithmetic, identical in every JavaScript engine. */
function hash2(ix: number, iz: number, seed: number): number {
  let h = Math.imul(ix, 374761393) ^ Math.imul(iz, 668265263) ^ Math.imul(seed, 2246822519);
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

function valueNoise(x: number, z: number, seed: number): number {
  const ix = Math.floor(x);
  const iz = Math.floor(z);
  const fx = x - ix;
  const fz = z - iz;
  const sx = fx * fx * (3 - 2 * fx);
  const sz = fz * fz * (3 - 2 * fz);
  const a = hash2(ix, iz, seed);
  const b = hash2(ix + 1, iz, seed);
  const c = hash2(ix, iz + 1, seed);
  const d = hash2(ix + 1, iz + 1, seed);
  return a + (b - a) * sx + (c - a) * sz + (a - b - c + d) * sx * sz;
}

/** Height of the rough ground at (x, z): gentle swells plus small bumps, within about +-0.35. */
export function groundHeight(x: number, z: number, seed = 1): number {
  return 0.5 * (valueNoise(x / 7, z / 7, seed) - 0.5) + 0.2 * (valueNoise(x / 1.7, z / 1.7, seed + 7) - 0.5);
}

/** Half the side of the square level [world]. */
export const LEVEL_HALF = 30;
/** Two known points: on the ground in the north-west, and on top of the tower (only reachable by climbing). */
export const LEVEL_START: Vec3 = [-3, groundHeight(-3, 27), 27];
export const LEVEL_END: Vec3 = [26, 6, -16];
/** Just outside the yard's narrow east door, and inside the yard: the path must take the wide south door. */
export const YARD_OUTSIDE: Vec3 = [-5, groundHeight(-5, 14.5), 14.5];
export const YARD_INSIDE: Vec3 = [-12, groundHeight(-12, 14.5), 14.5];
/** On the first floor (y 3) near its north edge, and on the ground just below that edge. */
export const FLOOR_EDGE: Vec3 = [5, 3, -3];
export const BELOW_FLOOR_EDGE: Vec3 = [5, groundHeight(5, 3), 3];

/** An off-mesh link of the built-in level (the shape of the package's OffMeshLink). */
export interface LevelLink {
  start: Vec3;
  end: Vec3;
  radius: number;
  bidirectional: boolean;
}

/**
 * Jumps down that the walkable surface alone does not offer, one way each: off the first floor's north edge to
 * the ground (instead of the stairs at the far west end), and off the tower's top to the ground beside it
 * (instead of the long ramp).
 */
export const LEVEL_LINKS: readonly LevelLink[] = [
  { start: [5, 3, -1.2], end: [5, groundHeight(5, 1.6), 1.6], radius: 0.6, bidirectional: false },
  { start: [23.9, 6, -12.9], end: [21.8, groundHeight(21.8, -10.5), -10.5], radius: 0.6, bidirectional: false },
];

const COLORS = {
  ground: 0x6f6a55,
  rock: 0x7d6f62,
  concrete: 0xa39a8c,
  pillar: 0x8c7f70,
  wall: 0x9b7b5e,
  bridge: 0x8a5a3c,
  tower: 0xb08d6e,
};

/**
 * Builds the level as a three.js Group of meshes (y up, about 60 x 60 world units, centred on the origin).
 * Every mesh is named after its part, so drops and debug views can tell them apart.
 */
export function buildLevel(seed = 1): Group {
  const root = new Group();
  root.name = 'built-in level';
  const mats = new Map<number, MeshLambertMaterial>();
  const mat = (c: number) => {
    let m = mats.get(c);
    if (!m) mats.set(c, (m = new MeshLambertMaterial({ color: new Color(c) })));
    return m;
  };
  const add = (name: string, g: BufferGeometry, color: number, x = 0, y = 0, z = 0, rotX = 0, rotY = 0) => {
    const m = new Mesh(g, mat(color));
    m.name = name;
    m.position.set(x, y, z);
    m.rotation.set(rotX, rotY, 0);
    root.add(m);
    return m;
  };
  /** An axis-aligned box by its extents. */
  const box = (name: string, color: number, x0: number, x1: number, y0: number, y1: number, z0: number, z1: number) =>
    add(name, new BoxGeometry(x1 - x0, y1 - y0, z1 - z0), color, (x0 + x1) / 2, (y0 + y1) / 2, (z0 + z1) / 2);
  /** A slab sloping along z whose top surface runs from (za, ya) to (zb, yb), between x0 and x1. */
  const ramp = (name: string, color: number, x0: number, x1: number, za: number, ya: number, zb: number, yb: number) => {
    if (zb < za) [za, ya, zb, yb] = [zb, yb, za, ya];
    const dz = zb - za;
    const dy = yb - ya;
    const len = Math.hypot(dz, dy);
    const t = 0.4;
    const angle = Math.atan2(-dy, dz); // turns the box's +z onto the slope
    // The box's centre sits half its thickness below the middle of the top surface, along the slope's normal.
    const ny = Math.cos(angle);
    const nz = Math.sin(angle);
    add(name, new BoxGeometry(x1 - x0, t, len), color, (x0 + x1) / 2, (ya + yb) / 2 - (ny * t) / 2, (za + zb) / 2 - (nz * t) / 2, angle);
  };

  // ---- rough ground -------------------------------------------------------------------------------------------
  const size = 2 * LEVEL_HALF;
  const plane = new PlaneGeometry(size, size, 60, 60);
  plane.rotateX(-Math.PI / 2); // face up
  const pos = plane.getAttribute('position');
  for (let i = 0; i < pos.count; i++) pos.setY(i, groundHeight(pos.getX(i), pos.getZ(i), seed));
  plane.computeVertexNormals();
  add('ground', plane, COLORS.ground);

  // Rocks in the south-west: some low enough to step over, some an obstacle.
  const rand = rng(seed);
  for (let i = 0; i < 28; i++) {
    const x = -27 + rand() * 20;
    const z = -27 + rand() * 22;
    const w = 0.5 + rand() * 1.5;
    const h = 0.2 + rand() * 1.3;
    const d = 0.5 + rand() * 1.5;
    add(`rock ${i}`, new BoxGeometry(w, h, d), COLORS.rock, x, groundHeight(x, z, seed) + h / 2 - 0.15, z, 0, rand() * Math.PI);
  }

  // ---- building: first floor (y 3) on pillars, second floor (y 6) ----------------------------------------------
  box('first floor', COLORS.concrete, 0, 20, 2.7, 3, -20, 0);
  for (const x of [1, 7, 13, 19]) {
    for (const z of [-19, -13, -7, -1]) box('pillar', COLORS.pillar, x - 0.4, x + 0.4, -0.5, 2.7, z - 0.4, z + 0.4);
  }
  // Stairs from the ground up to the first floor's west edge: 10 steps of 0.3 (under agentMaxClimb).
  for (let i = 0; i < 10; i++) {
    box(`stair ${i}`, COLORS.concrete, -6 + 0.6 * i, -6 + 0.6 * (i + 1), -0.5, 0.3 * (i + 1), -18, -15);
  }
  box('second floor', COLORS.concrete, 8, 20, 5.7, 6, -20, -10);
  for (const [x, z] of [[8.5, -19.5], [19.5, -19.5], [19.5, -10.5], [8.5, -10.5]]) {
    box('pillar', COLORS.pillar, x - 0.4, x + 0.4, 3, 5.7, z - 0.4, z + 0.4);
  }
  // Ramp from the first floor (z -2) up to the second (z -10): 3 up over 8, about 20.6 degrees.
  ramp('ramp up', COLORS.concrete, 9, 12, -2, 3, -10, 6);

  // ---- bridge (y 6) to the tower, with low rails; the ground underneath stays walkable ---------------------------
  box('bridge', COLORS.bridge, 20, 23, 5.8, 6, -17.2, -14.8);
  box('bridge rail', COLORS.bridge, 20, 23, 6, 6.6, -17.3, -17.1);
  box('bridge rail', COLORS.bridge, 20, 23, 6, 6.6, -14.9, -14.7);
  box('tower', COLORS.tower, 23, 29, -0.5, 6, -20, -12);
  // The tower's long ramp back down to the ground: 6 down over 12, about 26.6 degrees.
  ramp('ramp down', COLORS.tower, 24.5, 27.5, -12, 6, 0, 0);

  // ---- walled yard: the south door is 2 wide (passable), the east door 1 wide (narrower than the agent) ---------
  const [yx0, yx1, yz0, yz1, t, h] = [-26, -8, 6, 24, 0.4, 3];
  box('yard wall north', COLORS.wall, yx0, yx1, -0.5, h, yz1 - t, yz1);
  box('yard wall west', COLORS.wall, yx0, yx0 + t, -0.5, h, yz0, yz1);
  box('yard wall south', COLORS.wall, yx0, -18, -0.5, h, yz0, yz0 + t);
  box('yard wall south', COLORS.wall, -16, yx1, -0.5, h, yz0, yz0 + t);
  box('yard wall east', COLORS.wall, yx1 - t, yx1, -0.5, h, yz0, 14);
  box('yard wall east', COLORS.wall, yx1 - t, yx1, -0.5, h, 15, yz1);
  box('yard lintel', COLORS.wall, yx1 - t, yx1, 2.2, h, 14, 15);
  box('yard lintel', COLORS.wall, -18, -16, 2.4, h, yz0, yz0 + t);

  // ---- colonnade: two rows of round pillars -----------------------------------------------------------------------
  for (let x = 2; x <= 26; x += 3) {
    for (const z of [10, 16]) add('column', new CylinderGeometry(0.45, 0.5, 4.5, 12), COLORS.pillar, x, 1.75, z);
  }
  return root;
}
