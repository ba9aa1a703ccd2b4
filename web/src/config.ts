/**
 * Bake configuration: the camelCase fields of the C `nb_config`, with the same defaults. The wasm module's own
 * field table (`nb_config_field_name` / `nb_config_default`) drives the conversion, so a field added in C is
 * accepted here without a change; {@link DEFAULTS} and {@link NavBakeConfig} document them for editors, and a
 * test checks they match the C table.
 */
import { shown } from './args.js';
import { NavBakeError } from './errors.js';

/**
 * How walkable spans are cut into regions before the outlines are traced: 'watershed' (recastnavigation's default:
 * regular regions), 'monotone' (the fastest; long strips), 'layers' (no two spans of a column in one region: for
 * tiles with many stacked floors), 'wavefront' (regions grown one at a time, each kept convex: with a high
 * vertsPerPoly, 8..12, fewer and larger polygons than watershed -- dungeon 81 against 88 at 12 -- for a region
 * stage about 1.5x slower).
 */
export type Partition = 'watershed' | 'monotone' | 'layers' | 'wavefront';

/** Every field is optional: a partial object merged over {@link DEFAULTS}. Units are world units unless noted. */
export interface NavBakeConfig {
  /** Horizontal voxel size [world], > 0. Smaller = finer navmesh, slower bake. @default 0.3 */
  cellSize?: number | undefined;
  /** Vertical voxel size [world], > 0. @default 0.2 */
  cellHeight?: number | undefined;
  /** Minimum floor-to-ceiling clearance of the agent [world], > 0, at most 255 cells. @default 2 */
  agentHeight?: number | undefined;
  /** Agent radius [world], >= 0: the walkable area is eroded by it from walls. @default 0.6 */
  agentRadius?: number | undefined;
  /** Highest step the agent climbs [world], >= 0. @default 0.9 */
  agentMaxClimb?: number | undefined;
  /** Steepest walkable slope [degrees], 0 <= s < 90. @default 45 */
  agentMaxSlope?: number | undefined;
  /** Islands smaller than this many cells on a side are dropped [cells], >= 0. @default 8 */
  regionMinSize?: number | undefined;
  /** Regions smaller than this many cells on a side merge into a neighbour [cells], >= 0. @default 20 */
  regionMergeSize?: number | undefined;
  /** Longer outline edges are split [world], >= 0 (0 = no limit). @default 12 */
  edgeMaxLen?: number | undefined;
  /** How far a simplified outline may stray from the voxels [cells], >= 0. @default 1.3 */
  edgeMaxError?: number | undefined;
  /** Most vertices of a convex polygon, 3..12. @default 6 */
  vertsPerPoly?: number | undefined;
  /** Height sampling distance of the detail mesh [world]: 0 (none) or 0.9 * cellSize..1e6. @default 1.8 */
  detailSampleDist?: number | undefined;
  /** Largest height error of the detail mesh [world], 0..1e6. @default 0.2 */
  detailSampleMaxError?: number | undefined;
  /** Region partition. @default 'watershed' */
  partition?: Partition | undefined;
  /** Tile size [cells]: 0 bakes one tile; 16..4096 bakes a grid of tiles, spread over the workers. @default 0 */
  tileSize?: number | undefined;
}

/** A {@link NavBakeConfig} with every field given: the type of {@link DEFAULTS}. */
export type FullNavBakeConfig = { [K in keyof NavBakeConfig]-?: Exclude<NavBakeConfig[K], undefined> };

/** The defaults, the same as the C library's (`nb_config_default`). Frozen. */
export const DEFAULTS: Readonly<FullNavBakeConfig> = Object.freeze({
  cellSize: 0.3,
  cellHeight: 0.2,
  agentHeight: 2,
  agentRadius: 0.6,
  agentMaxClimb: 0.9,
  agentMaxSlope: 45,
  regionMinSize: 8,
  regionMergeSize: 20,
  edgeMaxLen: 12,
  edgeMaxError: 1.3,
  vertsPerPoly: 6,
  detailSampleDist: 1.8,
  detailSampleMaxError: 0.2,
  partition: 'watershed',
  tileSize: 0,
});

export const PARTITIONS: readonly Partition[] = ['watershed', 'monotone', 'layers', 'wavefront'];

/** One field of the C config table, as the wasm module describes it. */
export interface ConfigField {
  /** camelCase name ("cellSize") */
  name: string;
  /** C name ("cell_size") */
  cName: string;
  /** C default (enums as their number) */
  default: number;
  /** the field takes an explicit zero through NB_ZERO (plain 0 means "default" in C) */
  zeroAllowed: boolean;
}

/** NB_ZERO of navbake.h: asks the C config for an explicit zero where plain 0 means "default". */
export const NB_ZERO = -1;

export function camelCase(cName: string): string {
  return cName.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Fields C stores as integers (a fraction would be truncated without a word). */
const INTEGER_FIELDS = new Set(['vertsPerPoly', 'tileSize']);

function bad(message: string): NavBakeError {
  return new NavBakeError('NB_ERR_INVALID_CONFIG', `navbake: ${message}`);
}

/**
 * The C config values (one double per field, 0 = default, NB_ZERO = explicit zero) for a user config. Zero and
 * the NB_ZERO sentinel are the only values handled here: C's "0 means default" would otherwise turn
 * `cellSize: 0` into the default and `agentRadius: -1` into zero. Everything else is validated by C.
 */
export function configValues(fields: readonly ConfigField[], config: NavBakeConfig | null | undefined): Float64Array {
  const values = new Float64Array(fields.length);
  if (config === undefined || config === null) return values;
  if (typeof config !== 'object') throw bad(`config must be an object (got ${typeof config})`);
  const known = new Set(fields.map((f) => f.name));
  for (const key of Object.keys(config)) {
    if (!known.has(key)) throw bad(`unknown config field '${key}' (fields: ${[...known].join(', ')})`);
  }
  fields.forEach((f, i) => {
    const raw = (config as Record<string, unknown>)[f.name];
    if (raw === undefined) return;
    let v: number;
    if (f.name === 'partition') {
      const k = PARTITIONS.indexOf(raw as Partition); // a name only: C's enum numbers are not part of the API
      if (k < 0) throw bad(`config.partition must be one of ${PARTITIONS.join(', ')} (got ${shown(raw)})`);
      v = k + 1;
    } else if (typeof raw === 'number') {
      v = raw;
    } else {
      throw bad(`config.${f.name} must be a number (got ${shown(raw)})`);
    }
    if (INTEGER_FIELDS.has(f.name)) {
      if (!Number.isInteger(v)) throw bad(`config.${f.name} must be an integer (got ${v})`);
      // C stores it in 32 bits: 2^32 + 6 would arrive as 6's neighbour, or negative
      if (Math.abs(v) > 0x7fffffff) throw bad(`config.${f.name} is out of range (got ${v})`);
    } else if (v !== 0 && Math.fround(v) === 0) {
      // C reads float32: 1e-50 would arrive as 0, which C takes for "the default"
      throw bad(`config.${f.name} (${v}) is 0 in float32; give 0 or a value C can hold`);
    }
    if (v === 0) {
      if (f.zeroAllowed) v = NB_ZERO;
      else if (f.default !== 0) throw bad(`config.${f.name} must not be 0`);
    } else if (f.zeroAllowed && v < 0) {
      throw bad(`config.${f.name} must be >= 0 (got ${v})`);
    }
    values[i] = v;
  });
  return values;
}

/** The shortest decimal that reads back as the same float32 (0.3, not 0.30000001192092896). */
export function shortFloat(v: number): number {
  if (!Number.isFinite(v) || Number.isInteger(v)) return v;
  for (let p = 1; p < 9; p++) {
    const d = Number(v.toPrecision(p));
    if (Math.fround(d) === v) return d;
  }
  return v;
}

/** A resolved C config (one value per field) as a camelCase object. */
export function configFromValues(fields: readonly ConfigField[], values: ArrayLike<number>): FullNavBakeConfig {
  const out: Record<string, unknown> = {};
  fields.forEach((f, i) => {
    out[f.name] = f.name === 'partition' ? (PARTITIONS[values[i] - 1] ?? values[i]) : shortFloat(values[i]);
  });
  return out as unknown as FullNavBakeConfig;
}
