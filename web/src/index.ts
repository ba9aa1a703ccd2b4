/**
 * navbake: navigation meshes for the web. Bake triangles into a navmesh (in Web Workers / worker_threads), find
 * paths on it, save and load it.
 *
 * ```ts
 * import { bake } from 'navbake';
 * const nav = await bake({ positions, indices }, { agentRadius: 0.4 });
 * const { status, points } = nav.findPath([0, 0, 0], [10, 0, 5]);
 * ```
 */
export { init } from './runtime.js';
export { bake, defaultWorkerCount, type BakeOptions, type BakeProgress, type Geometry } from './bake.js';
export {
  inspect,
  type InspectContours,
  type InspectCounts,
  type InspectGrid,
  type Inspection,
  type InspectOptions,
  type InspectSpans,
  type StageTimes,
} from './inspect.js';
export {
  NavMesh,
  DEFAULT_HALF_EXTENTS,
  type PathOptions,
  type PathsOptions,
  type PathsAsyncOptions,
  type PathResult,
  type QueryOptions,
  type RandomPointOptions,
  type RaycastResult,
  type Vec3Like,
  type WallDistance,
  type NavMeshParams,
  type TileInfo,
  type TileRecord,
} from './navmesh.js';
export type { BoxVolume, ConvexVolume, CylinderVolume, OffMeshLink, Volume } from './volumes.js';
export type { TileEvent } from './tiled.js';
export type { ObstacleUpdate, UpdateOptions } from './obstacles.js';
export { DEFAULTS, type FullNavBakeConfig, type NavBakeConfig, type Partition } from './config.js';
export { NavBakeError, type NavBakeErrorCode } from './errors.js';
export { terminateWorkers } from './pool.js';
export {
  voxelize,
  VoxelGrid,
  type VoxelGridData,
  type VoxelizeOptions,
  type VoxelLayout,
  type VoxelMove,
  type VoxelPathAsyncOptions,
  type VoxelPathOptions,
  type VoxelPathResult,
} from './voxels.js';
export {
  PATH_POINT,
  PATH_STATUS,
  STAGES,
  type BakeStage,
  type InitOptions,
  type OffMeshLinkInfo,
  type PathBatch,
  type PathDetails,
  type PathStatus,
  type PolygonInfo,
  type QueryFilter,
  type SurfaceGeometry,
  type Vec3,
  type WasmModule,
} from './wasm.js';
