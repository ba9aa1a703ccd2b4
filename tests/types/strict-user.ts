// A strict TypeScript user of the built package (tsconfig.json here: strict, exactOptionalPropertyTypes,
// noUncheckedIndexedAccess, skipLibCheck false, lib ES2022 + DOM). Type-checked only, never run: each line is code
// a user writes, and must compile against web/dist's declarations. `@ts-expect-error` lines must keep failing.
import * as THREE from 'three';
import {
  bake,
  init,
  inspect,
  voxelize,
  NavMesh,
  NavBakeError,
  VoxelGrid,
  PATH_POINT,
  PATH_STATUS,
  STAGES,
  DEFAULTS,
  type BakeOptions,
  type Geometry,
  type InitOptions,
  type NavBakeConfig,
  type Partition,
  type PathOptions,
  type PathsAsyncOptions,
  type PathStatus,
  type QueryFilter,
  type Volume,
  type OffMeshLink,
  type VoxelPathOptions,
  type BakeStage,
} from 'navbake';
import { geometryFromObject3D, NavMeshHelper, PathHelper, type GeometryFromObject3DOptions } from 'navbake/three';

type IsAny<T> = 0 extends 1 & T ? true : false;
const notAny = <T>(_: IsAny<T> extends false ? T : never): void => undefined;

// ---- returned arrays own an ArrayBuffer: DOM APIs take them (TS >= 5.7 lib.dom) ----
export async function exportNavmesh(nav: NavMesh, grid: VoxelGrid, level: Geometry): Promise<void> {
  const bytes = nav.save();
  new Blob([bytes], { type: 'application/octet-stream' });
  await fetch('/api/navmesh', { method: 'PUT', body: bytes });
  await crypto.subtle.digest('SHA-256', bytes);
  const tile = nav.saveTile(0, 0);
  if (tile) new Blob([tile]);
  const path = nav.findPath([0, 0, 0], [1, 0, 1]);
  new Blob([path.points, path.pointFlags, path.pointRefs]);
  const batch = nav.findPaths(new Float32Array(6), { details: true });
  new Blob([batch.status, batch.exhausted, batch.lengths, batch.offsets, batch.points, batch.pointFlags, batch.pointRefs]);
  const shared = await nav.findPathsAsync(new Float32Array(6), { details: true, workers: 2 });
  new Blob([shared.status, shared.exhausted, shared.lengths, shared.offsets, shared.points, shared.pointFlags, shared.pointRefs]);
  const surface = nav.toGeometry();
  new Blob([surface.positions, surface.indices, surface.areas]);
  const poly = nav.polygons()[0];
  if (poly) new Blob([poly.vertices]);
  const vpath = grid.findPath([0, 0, 0], [1, 0, 1]);
  new Blob([vpath.points, vpath.voxels]);
  new Blob([grid.occupancy().words]);
  const ins = await inspect(level);
  new Blob([ins.spans.x, ins.spans.z, ins.spans.y, ins.spans.area, ins.spans.region]);
  new Blob([ins.contours.region, ins.contours.area, ins.contours.offsets, ins.contours.vertices, ins.contours.rawOffsets, ins.contours.rawVertices]);
  const mesh = geometryFromObject3D(new THREE.Group());
  new Blob([mesh.positions, mesh.indices]);
  const geo = new THREE.BufferGeometry();
  geo.setAttribute('position', new THREE.BufferAttribute(surface.positions, 3));
  geo.setIndex(new THREE.BufferAttribute(surface.indices, 1));
  // The object returned by geometryFromObject3D is bake()'s input as it is.
  await bake(mesh);
}

// ---- exactOptionalPropertyTypes: an optional field takes undefined ("not given") ----
export async function forwarding(
  bg: THREE.BufferGeometry,
  nav: NavMesh,
  grid: VoxelGrid,
  signal?: AbortSignal,
  onProgress?: BakeOptions['onProgress'],
  ui: { opacity?: number; flags?: number; area?: number; workers?: number; seed?: number; move?: 'fly' } = {},
): Promise<void> {
  const g: Geometry = { positions: bg.getAttribute('position').array, indices: bg.index?.array, areas: undefined, volumes: undefined, links: undefined };
  const config: NavBakeConfig = { cellSize: undefined, partition: undefined, tileSize: ui.workers };
  await bake(g, config, { signal, onProgress, workers: ui.workers, transfer: undefined, focus: undefined, onTile: undefined, obstacles: undefined });
  await inspect(g, config, { signal, onProgress, workers: undefined, tile: undefined });
  await voxelize(g, config, { signal, onProgress, workers: undefined, headroom: undefined, fillEnclosed: undefined });
  const filter: QueryFilter = { includeFlags: ui.flags, excludeFlags: undefined, areaCost: undefined };
  const opts: PathOptions = { filter, halfExtents: undefined, crossings: undefined };
  nav.findPath([0, 0, 0], [1, 0, 1], opts);
  nav.findPaths([0, 0, 0, 1, 0, 1], { ...opts, details: undefined });
  const asyncOpts: PathsAsyncOptions = { ...opts, details: undefined, workers: undefined, signal };
  const plain = await nav.findPathsAsync([0, 0, 0, 1, 0, 1], asyncOpts);
  // @ts-expect-error without details: true, pointRefs may be missing
  plain.pointRefs.length;
  await nav.findPathsAsync([0, 0, 0, 1, 0, 1], { workers: false });
  nav.nearestPoint([0, 0, 0], { filter: undefined, halfExtents: undefined });
  nav.randomPoint({ seed: ui.seed, center: undefined, radius: undefined, halfExtents: undefined, filter: undefined });
  await nav.update({ signal, workers: undefined });
  const volumes: Volume[] = [
    { type: 'box', min: [0, 0, 0], max: [1, 1, 1], area: ui.area },
    { type: 'cylinder', center: [0, 0, 0], radius: 1, height: 2, area: undefined },
    { type: 'convex', points: [[0, 0], [1, 0], [0, 1]], minY: 0, maxY: 1, area: undefined },
  ];
  const links: OffMeshLink[] = [{ start: [0, 0, 0], end: [1, 0, 1], radius: 1, bidirectional: undefined, area: ui.area, flags: ui.flags, userId: undefined }];
  await bake({ positions: [], volumes, links });
  const vopts: VoxelPathOptions = { move: ui.move, agentHeight: undefined, agentRadius: undefined, agentClimb: undefined, smooth: undefined, maxNodes: undefined, searchRadius: undefined, heuristicWeight: undefined };
  grid.findPath([0, 0, 0], [1, 0, 1], vopts);
  await grid.findPathAsync([0, 0, 0], [1, 0, 1], { ...vopts, signal, sliceMs: undefined });
  const initOpts: InitOptions = { wasmBinary: undefined, wasmModule: undefined, locateFile: undefined };
  await init(initOpts);
  const g3: GeometryFromObject3DOptions = { skipInvisible: undefined, filter: undefined, area: undefined };
  geometryFromObject3D(new THREE.Group(), g3);
  new NavMeshHelper(nav, { opacity: ui.opacity, colors: undefined, edgeColor: undefined, innerEdgeColor: undefined, linkColor: undefined, brokenLinkColor: undefined, lift: undefined });
  new PathHelper(undefined, { color: undefined, pointSize: ui.opacity, lift: undefined });
}

// ---- null options mean none (README) ----
export async function nulls(g: Geometry, nav: NavMesh, grid: VoxelGrid): Promise<void> {
  await init(null);
  const n = await bake(g, null, null);
  await inspect(g, null, null);
  await voxelize(g, null, null);
  n.findPath([0, 0, 0], [1, 0, 1], null);
  n.findPaths([0, 0, 0, 1, 0, 1], null);
  n.nearestPoint([0, 0, 0], null);
  n.raycast([0, 0, 0], [1, 0, 1], null);
  n.moveAlong([0, 0, 0], [1, 0, 1], null);
  n.distanceToWall([0, 0, 0], 1, null);
  n.randomPoint(null);
  await nav.update(null);
  grid.findPath([0, 0, 0], [1, 0, 1], null);
  await grid.findPathAsync([0, 0, 0], [1, 0, 1], null);
  geometryFromObject3D(new THREE.Group(), null);
  new NavMeshHelper(nav, null);
  new PathHelper([], null);
}

// ---- input params take any Vec3Like, readonly tuples included ----
const ORIGIN = [0, 0, 0] as const;
const DIMS = [2, 2, 2] as const;
export async function inputs(nav: NavMesh): Promise<void> {
  await NavMesh.create({ origin: ORIGIN, tileWidth: 9.6, tileDepth: 9.6, maxTiles: 64 });
  await NavMesh.create({ origin: new THREE.Vector3(), tileWidth: 9.6, tileDepth: 9.6, maxTiles: 64 });
  await NavMesh.create(nav.params); // an output as the input
  const { params } = NavMesh.readTiles(nav.save());
  await NavMesh.create(params);
  // a file read into shared memory (a SharedArrayBuffer, taken at run time too)
  const shared = new SharedArrayBuffer(64);
  await NavMesh.load(shared);
  NavMesh.readTiles(shared);
  nav.loadTile(shared);
  await VoxelGrid.create({ origin: new THREE.Vector3(), cellSize: 1, cellHeight: 1, dims: DIMS, words: new Uint32Array(1) });
  await VoxelGrid.create({ origin: ORIGIN, cellSize: 1, cellHeight: 1, dims: [2, 2, 2], words: new Uint32Array(new SharedArrayBuffer(4)) });
  const saved = (await voxelize({ positions: [] })).occupancy();
  await VoxelGrid.create(saved);
  // @ts-expect-error dims is three voxel counts
  await VoxelGrid.create({ origin: ORIGIN, cellSize: 1, cellHeight: 1, dims: [2, 2], words: new Uint32Array(1) });
}

// ---- constants, errors, guarded constructors, no any ----
export function misc(e: unknown): void {
  const s: PathStatus | undefined = PATH_STATUS[2];
  const st: readonly BakeStage[] = STAGES;
  const bits: 1 | 2 | 4 = PATH_POINT.OFFMESH;
  // @ts-expect-error frozen: readonly
  PATH_STATUS[0] = 'complete';
  // @ts-expect-error frozen: readonly
  PATH_POINT.START = 8;
  // @ts-expect-error frozen: readonly
  DEFAULTS.cellSize = 1;
  // every field of DEFAULTS is given: no undefined even with exactOptionalPropertyTypes
  const cellSize: number = DEFAULTS.cellSize;
  const partition: Partition = DEFAULTS.partition;
  const config: NavBakeConfig = { ...DEFAULTS, agentRadius: 0.4 };
  // @ts-expect-error bake() or NavMesh.load() make navmeshes
  new NavMesh();
  // @ts-expect-error voxelize() or VoxelGrid.create() make grids
  new VoxelGrid();
  if (e instanceof NavBakeError && e.code === 'NB_ERR_DISPOSED') throw e;
  // @ts-expect-error not a code
  if (e instanceof NavBakeError && e.code === 'NB_ERR_NOPE') throw e;
  notAny<InitOptions['wasmModule']>(undefined);
  notAny<ReturnType<NavMesh['save']>>(new Uint8Array(0));
  void [s, st, bits, cellSize, partition, config];
}
