/**
 * navbake/three: three.js helpers. `geometryFromObject3D` turns a scene (or any subtree) into the triangles
 * bake() takes; `NavMeshHelper` and `PathHelper` draw a navmesh and a path. three is a peer dependency: this
 * module imports it, the main `navbake` entry does not.
 *
 * ```ts
 * import { bake } from 'navbake';
 * import { geometryFromObject3D, NavMeshHelper, PathHelper } from 'navbake/three';
 * const nav = await bake(geometryFromObject3D(level, { skipInvisible: true }));
 * scene.add(new NavMeshHelper(nav), new PathHelper(nav.findPath(a, b).points));
 * ```
 */
import {
  BufferAttribute,
  BufferGeometry,
  Color,
  DoubleSide,
  type InstancedMesh,
  Line,
  type LOD,
  LineBasicMaterial,
  LineSegments,
  Matrix4,
  Mesh,
  MeshBasicMaterial,
  Object3D,
  Points,
  PointsMaterial,
  Vector3,
  type ColorRepresentation,
} from 'three';
import { bool, func, num, numericArray, optionsObject, shown, invalid } from './args.js';
import { NavBakeError } from './errors.js';
// Types only: importing navbake/three never loads the wasm module.
import type { NavMesh } from './navmesh.js';

// ---- geometryFromObject3D -------------------------------------------------------------------------------

/** geometryFromObject3D's options: which meshes to take, and their area ids. */
export interface GeometryFromObject3DOptions {
  /**
   * Leave out what three.js would not draw: meshes with `visible === false` on themselves or on any ancestor
   * (above root too), and triangles whose material has `visible === false`. @default false
   */
  skipInvisible?: boolean | undefined;
  /** Only meshes for which this returns true are taken (e.g. leave out characters or props). @default all */
  filter?: ((mesh: Mesh) => boolean) | undefined;
  /**
   * Area id (0..63) of each mesh's triangles; when given, the result has `areas` (one per triangle) for bake().
   * 0 marks a mesh as not walkable; undefined means 63, the default walkable area. @default no areas
   */
  area?: ((mesh: Mesh) => number | undefined) | undefined;
}

/** World-space triangles, ready for bake(). */
export interface Object3DGeometry {
  /** xyz per vertex, world space */
  positions: Float32Array<ArrayBuffer>;
  /** three vertex indices per triangle */
  indices: Uint32Array<ArrayBuffer>;
  /** area id per triangle (only with options.area) */
  areas?: Uint8Array<ArrayBuffer>;
}

interface MeshPart {
  mesh: Mesh;
  /** first and one-past-last index (indexed) or vertex (non-indexed) of each drawn range, whole triangles */
  ranges: [number, number][];
  /** the vertices the drawn triangles use */
  used: UsedVertices;
  /** copies: an InstancedMesh's instances (their matrices made one at a time when copied), else 1 */
  copies: number;
}

/**
 * The vertices a mesh's drawn triangles use, in the geometry's order: only those are copied (an undrawn vertex far
 * away would widen the bake's bounds, a NaN one would fail it). list: the geometry's vertex of each copied one, and
 * remap: the copied vertex of each of the geometry's (-1: unused); both null when every vertex is used.
 */
interface UsedVertices {
  count: number;
  list: Uint32Array | null;
  remap: Int32Array | null;
}

function usedVertices(mesh: Mesh, ranges: [number, number][], nverts: number): UsedVertices {
  const index = mesh.geometry.index;
  const remap = new Int32Array(nverts).fill(-1);
  for (const [start, end] of ranges) {
    for (let k = start; k < end; k++) {
      const v = index ? index.getX(k) : k;
      if (!(v >= 0 && v < nverts)) {
        throw new NavBakeError(
          'NB_ERR_INDEX_RANGE',
          `navbake/three: mesh '${mesh.name}': index ${k} is vertex ${v}, but the geometry has ${nverts} vertices`,
        );
      }
      remap[v] = 0;
    }
  }
  let count = 0;
  for (let v = 0; v < nverts; v++) if (remap[v] === 0) remap[v] = count++;
  if (count === nverts) return { count, list: null, remap: null };
  const list = new Uint32Array(count);
  for (let v = 0; v < nverts; v++) if (remap[v] >= 0) list[remap[v]] = v;
  return { count, list, remap };
}

function hiddenAbove(o: Object3D): boolean {
  for (let p = o.parent; p; p = p.parent) if (!p.visible) return true;
  return false;
}

/**
 * What three.js draws of a mesh's geometry: the draw range, or with an array of materials each group (with a
 * material, visible unless skipInvisible) within it; clamped to the geometry, whole triangles, empty ones left out.
 */
function drawnRanges(mesh: Mesh, skipInvisible: boolean): [number, number][] {
  const g = mesh.geometry;
  const n = g.index ? g.index.count : (g.getAttribute('position')?.count ?? 0);
  // as WebGLRenderer clamps them: a negative start draws up to start + count, not count
  const lo = Math.min(Math.max(0, g.drawRange.start), n);
  const hi = Math.max(lo, Math.min(n, g.drawRange.start + g.drawRange.count));
  const drawn = (m: unknown) => m != null && !(skipInvisible && (m as { visible?: boolean }).visible === false);
  const spans: [number, number][] = [];
  if (Array.isArray(mesh.material)) {
    for (const group of g.groups) {
      if (!drawn(mesh.material[group.materialIndex ?? 0])) continue;
      spans.push([Math.max(lo, group.start), Math.min(hi, group.start + group.count)]);
    }
  } else if (!(skipInvisible && (mesh.material as { visible?: boolean } | undefined)?.visible === false)) {
    spans.push([lo, hi]);
  }
  const out: [number, number][] = [];
  for (const [a, b] of spans) {
    const end = a + Math.floor((b - a) / 3) * 3;
    if (end > a) out.push([a, end]);
  }
  return out;
}

/** Finite in float32 (positions' type). */
const inFloat32 = (x: number) => Number.isFinite(Math.fround(x));

/** Lines drawn as screen-space quads (three's addons Line2, LineSegments2, Wireframe): meshes, but not surfaces. */
function isFatLine(o: Object3D): boolean {
  const f = o as { isLineSegments2?: boolean; isWireframe?: boolean };
  const g = (o as Mesh).geometry as { isLineSegmentsGeometry?: boolean } | undefined;
  return f.isLineSegments2 === true || f.isWireframe === true || g?.isLineSegmentsGeometry === true;
}

/**
 * Collects the triangles of every Mesh under root (root included) in world space, ready for bake(). World
 * matrices are brought up to date first. Indexed and non-indexed BufferGeometries both work (draw ranges are
 * respected, and with an array of materials only the geometry's groups are taken, as three.js draws them; only the
 * vertices of the triangles taken are copied); an InstancedMesh gives one copy per instance, and an LOD its first
 * (most detailed) level. NavMeshHelper and PathHelper objects are left out (a navmesh drawn from an earlier bake
 * is not part of the level). Points, lines (fat lines too: Line2, LineSegments2, Wireframe) and
 * sprites are left out, as are morph targets and skinning (a SkinnedMesh gives its bind pose). A BatchedMesh,
 * and an InstancedBufferGeometry placed by its shader, throw NB_ERR_INVALID_ARG (their triangles' places are not
 * known here). Where a transform mirrors (negative determinant), the triangles are turned over so that floors
 * still face up, as three.js draws them.
 */
export function geometryFromObject3D(root: Object3D, opts?: GeometryFromObject3DOptions | null): Object3DGeometry {
  if (!(root as Partial<Object3D> | null)?.isObject3D) {
    throw invalid(`navbake/three: geometryFromObject3D: root must be a three.js Object3D (got ${shown(root)})`);
  }
  const options = optionsObject<GeometryFromObject3DOptions>('navbake/three: geometryFromObject3D: options', opts, [
    'skipInvisible',
    'filter',
    'area',
  ]);
  const skipInvisible = bool('navbake/three: geometryFromObject3D: options.skipInvisible', options.skipInvisible) ?? false;
  const filter = func<(mesh: Mesh) => boolean>('navbake/three: geometryFromObject3D: options.filter', options.filter);
  const area = func<(mesh: Mesh) => number | undefined>('navbake/three: geometryFromObject3D: options.area', options.area);
  root.updateWorldMatrix(true, true);
  const parts: MeshPart[] = [];
  let nverts = 0;
  let nidx = 0;

  // geometry -> the vertices its drawn ranges use (meshes sharing a geometry and its ranges reuse them)
  const usedOf = new Map<BufferGeometry, { key: string; used: UsedVertices }>();

  const visit = (o: Object3D, lodLevel = false): void => {
    // three.js draws nothing below an invisible object; an LOD's levels are shown and hidden by the LOD itself
    if (skipInvisible && !o.visible && !lodLevel) return;
    // the helpers' own drawing (a navmesh baked before, a path) is not part of the level
    if ((o as { isNavMeshHelper?: boolean }).isNavMeshHelper || (o as { isPathHelper?: boolean }).isPathHelper) return;
    const mesh = o as Mesh;
    if (mesh.isMesh && mesh.geometry?.isBufferGeometry && !isFatLine(mesh) && (!filter || filter(mesh))) {
      // A BatchedMesh's geometry holds every batched geometry once, without the instances' matrices; an
      // InstancedBufferGeometry's copies are placed by its shader: taken as they are, triangles would land in
      // the wrong places.
      const kind = (mesh as { isBatchedMesh?: boolean }).isBatchedMesh
        ? 'BatchedMesh'
        : (mesh.geometry as { isInstancedBufferGeometry?: boolean }).isInstancedBufferGeometry
          ? 'a mesh with an InstancedBufferGeometry (placed by its shader)'
          : null;
      if (kind) {
        throw new NavBakeError(
          'NB_ERR_INVALID_ARG',
          `navbake/three: ${kind} '${mesh.name}' is not supported; leave it out with options.filter` +
            (kind === 'BatchedMesh' ? '' : ', or use an InstancedMesh'),
        );
      }
      const g = mesh.geometry;
      const pos = g.getAttribute('position');
      const ranges = drawnRanges(mesh, skipInvisible);
      if (pos && ranges.length > 0) {
        if (pos.itemSize < 3) {
          throw new NavBakeError(
            'NB_ERR_INVALID_ARG',
            `navbake/three: mesh '${mesh.name}': its position attribute has ${pos.itemSize} numbers per vertex, not 3`,
          );
        }
        let copies = 1;
        const inst = mesh as InstancedMesh;
        if (inst.isInstancedMesh) {
          const room = inst.instanceMatrix.count;
          if (!(inst.count <= room)) {
            throw new NavBakeError(
              'NB_ERR_INVALID_ARG',
              `navbake/three: InstancedMesh '${mesh.name}': count ${inst.count} is more than its ${room} instance matrices`,
            );
          }
          copies = inst.count;
        }
        const key = ranges.join(';');
        let known = usedOf.get(g);
        if (known?.key !== key) usedOf.set(g, (known = { key, used: usedVertices(mesh, ranges, pos.count) }));
        const used = known.used;
        parts.push({ mesh, ranges, used, copies });
        nverts += used.count * copies;
        for (const [a, b] of ranges) nidx += (b - a) * copies;
      }
    }
    const lod = o as LOD;
    if (lod.isLOD && lod.levels.length > 0) {
      // three.js draws one level, chosen by the camera's distance: take the first (the most detailed)
      const levels = new Set(lod.levels.map((l) => l.object));
      for (const child of o.children) {
        if (child === lod.levels[0].object) visit(child, true);
        else if (!levels.has(child)) visit(child);
      }
      return;
    }
    for (const child of o.children) visit(child);
  };
  if (!(skipInvisible && hiddenAbove(root))) visit(root);

  // Many instances of a big mesh can add up to more than a bake's wasm memory (2 GB) holds: say so before
  // trying to allocate it.
  const bytes = 12 * nverts + 4 * nidx;
  if (bytes > 2 ** 31) {
    throw new NavBakeError(
      'NB_ERR_TOO_LARGE',
      `navbake/three: geometryFromObject3D: ${nverts} vertices and ${nidx / 3} triangles (every instance counted) ` +
        `need ${(bytes / 2 ** 30).toFixed(1)} GB, more than the 2 GB a bake has for everything`,
    );
  }
  const positions = new Float32Array(nverts * 3);
  const indices = new Uint32Array(nidx);
  const areas = area ? new Uint8Array(nidx / 3) : undefined;
  const v = new Vector3();
  let vbase = 0;
  let ibase = 0;
  const m = new Matrix4();
  for (const { mesh, ranges, used, copies } of parts) {
    const g = mesh.geometry;
    const pos = g.getAttribute('position');
    const index = g.index;
    let id = 63;
    if (area) {
      const a = area(mesh);
      if (a !== undefined) {
        if (!(Number.isInteger(a) && a >= 0 && a <= 63)) {
          throw new NavBakeError(
            'NB_ERR_INVALID_ARG',
            `navbake/three: area() returned ${shown(a)} for mesh '${mesh.name}'; area ids are integers 0..63`,
          );
        }
        id = a;
      }
    }
    const { count, list, remap } = used;
    const inst = mesh as InstancedMesh;
    for (let copy = 0; copy < copies; copy++) {
      if (inst.isInstancedMesh) {
        inst.getMatrixAt(copy, m);
        m.premultiply(mesh.matrixWorld);
      } else {
        m.copy(mesh.matrixWorld);
      }
      for (let i = 0; i < count; i++) {
        const src = list ? list[i] : i;
        v.fromBufferAttribute(pos, src);
        // said here, naming the mesh: applyMatrix4's divide would turn an infinite coordinate into NaN
        if (!(Number.isFinite(v.x) && Number.isFinite(v.y) && Number.isFinite(v.z))) {
          throw new NavBakeError('NB_ERR_NONFINITE', `navbake/three: mesh '${mesh.name}': vertex ${src} is (${v.x}, ${v.y}, ${v.z})`);
        }
        v.applyMatrix4(m);
        if (!(inFloat32(v.x) && inFloat32(v.y) && inFloat32(v.z))) {
          throw new NavBakeError(
            'NB_ERR_NONFINITE',
            `navbake/three: mesh '${mesh.name}': vertex ${src} is not finite in float32 in world space (${v.x}, ${v.y}, ${v.z})`,
          );
        }
        positions[(vbase + i) * 3] = v.x;
        positions[(vbase + i) * 3 + 1] = v.y;
        positions[(vbase + i) * 3 + 2] = v.z;
      }
      const flip = m.determinant() < 0;
      for (const [start, end] of ranges) {
        for (let k = start; k < end; k += 3) {
          // (indices were checked against the vertex count when the used vertices were found)
          let a = index ? index.getX(k) : k;
          let b = index ? index.getX(k + 1) : k + 1;
          let c = index ? index.getX(k + 2) : k + 2;
          if (remap) {
            a = remap[a];
            b = remap[b];
            c = remap[c];
          }
          indices[ibase] = vbase + a;
          indices[ibase + 1] = vbase + (flip ? c : b);
          indices[ibase + 2] = vbase + (flip ? b : c);
          if (areas) areas[ibase / 3] = id;
          ibase += 3;
        }
      }
      vbase += count;
    }
  }
  return areas ? { positions, indices, areas } : { positions, indices };
}

// ---- colours --------------------------------------------------------------------------------------------

const GOLDEN = 0.618033988749895;

/**
 * The helpers' colour of an area id: 63 (the default walkable area) is sky blue; other ids step the hue by the
 * golden ratio, so neighbouring ids look clearly different and an id keeps its colour everywhere.
 */
export function areaColor(area: number, target: Color = new Color()): Color {
  num('navbake/three: areaColor: area', area);
  if (!Number.isInteger(area) || area < 0 || area > 63) throw invalid(`navbake/three: areaColor: area must be an area id 0..63 (got ${area})`);
  if (area === 63) return target.setRGB(0, 0.75, 1, 'srgb');
  return target.setHSL((area * GOLDEN) % 1, 0.7, 0.55, 'srgb');
}

// ---- NavMeshHelper --------------------------------------------------------------------------------------

/** What NavMeshHelper reads from a navmesh (a NavMesh, or anything shaped like one). */
export type NavMeshSource = Pick<NavMesh, 'toGeometry' | 'polygons'>;

/** NavMeshHelper's options: colours and placement. */
export interface NavMeshHelperOptions {
  /** Colour per area id, over {@link areaColor}. @default areaColor */
  colors?: Record<number, ColorRepresentation> | ((area: number) => ColorRepresentation) | undefined;
  /** Opacity of the filled polygons. @default 0.5 */
  opacity?: number | undefined;
  /** Colour of the outer edges (walls, ledges). @default 0x003355 */
  edgeColor?: ColorRepresentation | undefined;
  /** Colour of the edges between polygons. @default 0x66aacc */
  innerEdgeColor?: ColorRepresentation | undefined;
  /** Colour of off-mesh links. @default 0xff8800 */
  linkColor?: ColorRepresentation | undefined;
  /** Colour of off-mesh links with an end that found no ground (no path can take them). @default 0xff0044 */
  brokenLinkColor?: ColorRepresentation | undefined;
  /** Raises the drawing above the level [world], against z-fighting. @default 0.05 */
  lift?: number | undefined;
}

/**
 * A navmesh as a three.js object: the walkable surface (detail triangles) filled with a colour per area, and
 * the polygon edges as lines (outer edges dark, edges between polygons light, off-mesh links orange). Call
 * update() after the navmesh changed, or update(other) to show another one; dispose() frees the GPU buffers.
 */
export class NavMeshHelper extends Object3D {
  readonly isNavMeshHelper = true;
  override type = 'NavMeshHelper';
  /** The shown navmesh (spelt as `TileEvent.navMesh` and the `NavMesh` class). */
  navMesh: NavMeshSource;
  /** @deprecated the old spelling of `navMesh`, kept as an alias of it. */
  get navmesh(): NavMeshSource {
    return this.navMesh;
  }
  set navmesh(v: NavMeshSource) {
    this.navMesh = v;
  }
  /** Filled polygons: non-indexed triangles with a vertex colour per area. */
  readonly mesh: Mesh<BufferGeometry, MeshBasicMaterial>;
  /** Polygon edges and off-mesh links. */
  readonly edges: LineSegments<BufferGeometry, LineBasicMaterial>;
  #options: NavMeshHelperOptions;

  constructor(navmesh: NavMeshSource, opts?: NavMeshHelperOptions | null) {
    super();
    const options = optionsObject<NavMeshHelperOptions>('navbake/three: NavMeshHelper: options', opts, [
      'colors',
      'opacity',
      'edgeColor',
      'innerEdgeColor',
      'linkColor',
      'brokenLinkColor',
      'lift',
    ]);
    const where = 'navbake/three: NavMeshHelper: options';
    const c = options.colors;
    if (c !== undefined && typeof c !== 'function' && (c === null || typeof c !== 'object')) {
      throw invalid(`${where}.colors must be an object of colours by area id or a function (got ${shown(c)})`);
    }
    for (const k of ['edgeColor', 'innerEdgeColor', 'linkColor', 'brokenLinkColor'] as const) colorOption(`${where}.${k}`, options[k]);
    this.navMesh = navmeshSource(navmesh);
    this.#options = options;
    const opacity = numberOption(`${where}.opacity`, options.opacity, 0, 1) ?? 0.5;
    this.mesh = new Mesh(
      new BufferGeometry(),
      new MeshBasicMaterial({
        vertexColors: true,
        transparent: opacity < 1,
        opacity,
        side: DoubleSide,
        forceSinglePass: true, // a flat surface needs no back-then-front pass of transparent DoubleSide
        depthWrite: !(opacity < 1), // opaque, it is drawn with the opaque objects and must hide what lies behind
        polygonOffset: true,
        polygonOffsetFactor: -1,
        polygonOffsetUnits: -1,
      }),
    );
    this.edges = new LineSegments(new BufferGeometry(), new LineBasicMaterial({ vertexColors: true }));
    const lift = numberOption(`${where}.lift`, options.lift, -Infinity, Infinity) ?? 0.05;
    this.mesh.position.y = lift;
    this.edges.position.y = lift;
    this.edges.renderOrder = 1;
    this.add(this.mesh, this.edges);
    this.update();
  }

  /**
   * Rebuilds the drawing from the navmesh (after tiles were added or obstacles changed it), or from another
   * navmesh. Colours are by area: polygon flags (setPolygonFlags) are not drawn. When it throws (a disposed
   * navmesh, a colour callback that throws), the drawing and `navMesh` stay as they were.
   */
  update(navmesh: NavMeshSource = this.navMesh): this {
    navmeshSource(navmesh);
    const surface = navmesh.toGeometry();
    const polys = navmesh.polygons();
    const filled = this.#surface(surface.positions, surface.indices, surface.areas);
    let outlines: BufferGeometry;
    try {
      outlines = this.#outlines(polys);
    } catch (e) {
      filled.dispose();
      throw e;
    }
    this.navMesh = navmesh;
    this.mesh.geometry.dispose();
    this.mesh.geometry = filled;
    this.edges.geometry.dispose();
    this.edges.geometry = outlines;
    return this;
  }

  /**
   * A helper of its own (geometries and materials) showing the same navmesh with the same options, placed and
   * set up as this one (three.js's clone(): `scene.clone()` works with helpers in the scene).
   */
  override clone(recursive?: boolean): this {
    const Ctor = this.constructor as new (navmesh: NavMeshSource, opts: NavMeshHelperOptions) => this;
    const copy = new Ctor(this.navMesh, this.#options);
    copyHelper(copy, this, [[copy.mesh, this.mesh], [copy.edges, this.edges]], recursive ?? true);
    return copy;
  }

  /** Shows source's navmesh with source's options, placed and set up as source (three.js's copy()). */
  override copy(source: this, recursive = true): this {
    if (!(source instanceof NavMeshHelper)) throw invalid(`navbake/three: NavMeshHelper.copy needs a NavMeshHelper (got ${shown(source)})`);
    const options = this.#options;
    this.#options = source.#options;
    try {
      this.update(source.navMesh);
    } catch (e) {
      this.#options = options;
      throw e;
    }
    copyHelper(this, source, [[this.mesh, source.mesh], [this.edges, source.edges]], recursive);
    return this;
  }

  /** Frees the geometries and materials (the object can still be removed from the scene afterwards). */
  dispose(): void {
    this.mesh.geometry.dispose();
    this.mesh.material.dispose();
    this.edges.geometry.dispose();
    this.edges.material.dispose();
  }

  #color(area: number, target: Color): Color {
    const c = this.#options.colors;
    const own = typeof c === 'function' ? c(area) : c?.[area];
    const where = `navbake/three: NavMeshHelper: options.colors${typeof c === 'function' ? `(${area}) returned` : `[${area}]`}`;
    return own === undefined ? areaColor(area, target) : target.set(colorOption(where, own)!);
  }

  // Non-indexed, so that a vertex shared by two areas can take both colours.
  #surface(pos: Float32Array, idx: Uint32Array, areas: Uint8Array): BufferGeometry {
    const nt = idx.length / 3;
    const position = new Float32Array(nt * 9);
    const color = new Float32Array(nt * 9);
    const c = new Color();
    const cache = new Map<number, [number, number, number]>();
    for (let t = 0; t < nt; t++) {
      let rgb = cache.get(areas[t]);
      if (!rgb) {
        this.#color(areas[t], c);
        rgb = [c.r, c.g, c.b];
        cache.set(areas[t], rgb);
      }
      for (let k = 0; k < 3; k++) {
        const src = idx[t * 3 + k] * 3;
        const dst = (t * 3 + k) * 3;
        position[dst] = pos[src];
        position[dst + 1] = pos[src + 1];
        position[dst + 2] = pos[src + 2];
        color[dst] = rgb[0];
        color[dst + 1] = rgb[1];
        color[dst + 2] = rgb[2];
      }
    }
    const g = new BufferGeometry();
    g.setAttribute('position', new BufferAttribute(position, 3));
    g.setAttribute('color', new BufferAttribute(color, 3));
    return g;
  }

  // An edge used by two polygons lies between them; used once, it is an outer edge (a wall or a ledge). Edges are
  // matched on their end points rounded to a millimetre, in an open-addressing hash table of number keys (strings
  // took ~100 ms on a 10k-polygon navmesh).
  #outlines(polys: ReturnType<NavMeshSource['polygons']>): BufferGeometry {
    let edges = 0;
    for (const p of polys) if (!p.offMesh) edges += p.vertices.length / 3;
    // per edge: its end points rounded, the lower end first (lexicographically), so both directions match
    const ends = new Float64Array(edges * 6);
    let e = 0;
    for (const p of polys) {
      if (p.offMesh) continue;
      const v = p.vertices;
      const n = v.length / 3;
      for (let i = 0; i < n; i++, e++) {
        const j = (i + 1) % n;
        const a = [Math.round(v[i * 3] * 1e3), Math.round(v[i * 3 + 1] * 1e3), Math.round(v[i * 3 + 2] * 1e3)];
        const b = [Math.round(v[j * 3] * 1e3), Math.round(v[j * 3 + 1] * 1e3), Math.round(v[j * 3 + 2] * 1e3)];
        const swap = a[0] > b[0] || (a[0] === b[0] && (a[1] > b[1] || (a[1] === b[1] && a[2] > b[2])));
        ends.set(swap ? b : a, e * 6);
        ends.set(swap ? a : b, e * 6 + 3);
      }
    }
    // first[e]: the first edge with e's end points; uses[f]: how many edges share them (f a first edge)
    let size = 16;
    while (size < edges * 2) size *= 2;
    const table = new Int32Array(size).fill(-1);
    const first = new Int32Array(edges);
    const uses = new Uint32Array(edges);
    for (let k = 0; k < edges; k++) {
      let h = 0;
      for (let c = 0; c < 6; c++) h = (Math.imul(h ^ (ends[k * 6 + c] | 0), 0x9e3779b1) + (h >>> 15)) | 0;
      let slot = h & (size - 1);
      for (;;) {
        const f = table[slot];
        if (f < 0) {
          table[slot] = k;
          first[k] = k;
          uses[k] = 1;
          break;
        }
        let same = true;
        for (let c = 0; c < 6 && same; c++) same = ends[f * 6 + c] === ends[k * 6 + c];
        if (same) {
          first[k] = f;
          uses[f]++;
          break;
        }
        slot = (slot + 1) & (size - 1);
      }
    }
    const outer = new Color(this.#options.edgeColor ?? 0x003355);
    const inner = new Color(this.#options.innerEdgeColor ?? 0x66aacc);
    const link = new Color(this.#options.linkColor ?? 0xff8800);
    const broken = new Color(this.#options.brokenLinkColor ?? 0xff0044);
    const position: number[] = [];
    const color: number[] = [];
    const push = (v: Float32Array, i: number, c: Color) => {
      position.push(v[i * 3], v[i * 3 + 1], v[i * 3 + 2]);
      color.push(c.r, c.g, c.b);
    };
    e = 0;
    for (const p of polys) {
      const n = p.vertices.length / 3;
      if (p.offMesh) {
        if (n >= 2) {
          const a = p.link?.attached; // (a navmesh-shaped source may not say)
          const c = a && !(a.start && a.end) ? broken : link;
          push(p.vertices, 0, c);
          push(p.vertices, 1, c);
        }
        continue;
      }
      for (let i = 0; i < n; i++, e++) {
        if (first[e] !== e) continue; // drawn with the first polygon that has it
        const c = uses[e] === 1 ? outer : inner;
        push(p.vertices, i, c);
        push(p.vertices, (i + 1) % n, c);
      }
    }
    const g = new BufferGeometry();
    g.setAttribute('position', new BufferAttribute(new Float32Array(position), 3));
    g.setAttribute('color', new BufferAttribute(new Float32Array(color), 3));
    return g;
  }
}

// ---- PathHelper -----------------------------------------------------------------------------------------

/** PathHelper's options. */
export interface PathHelperOptions {
  /** Colour of the line and the point markers. @default 0xff3366 */
  color?: ColorRepresentation | undefined;
  /** Size of the point markers [pixels]. @default 6 */
  pointSize?: number | undefined;
  /** Raises the line above the surface [world]. @default 0.1 */
  lift?: number | undefined;
}

/** A colour option: a number 0..0xffffff, a CSS colour string three.js reads, or a Color. */
function colorOption(where: string, v: unknown): ColorRepresentation | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number' ? Number.isInteger(v) && v >= 0 && v <= 0xffffff : (v as Color | null)?.isColor === true) {
    return v as ColorRepresentation;
  }
  if (typeof v === 'string') {
    // three.js warns and leaves a colour as it was for a string it cannot read: that would draw another colour
    const probe = new Color(-1, -1, -1).setStyle(v);
    if (probe.r !== -1 || probe.g !== -1 || probe.b !== -1) return v;
    throw invalid(`${where}: three.js cannot read the colour ${shown(v)} (use a CSS colour name, #rgb, #rrggbb, rgb() or hsl())`);
  }
  throw invalid(`${where} must be a colour: a number 0..0xffffff, a CSS colour string or a THREE.Color (got ${shown(v)})`);
}

type Part = Mesh<BufferGeometry, MeshBasicMaterial> | LineSegments<BufferGeometry, LineBasicMaterial> | Line<BufferGeometry, LineBasicMaterial> | Points<BufferGeometry, PointsMaterial>;

/**
 * A helper's copy(): source's Object3D properties (transform, name, visibility, layers, userData...), its parts'
 * materials, places and draw order onto target's own parts (target keeps its geometries and materials), and, when
 * recursive, clones of the children a user added to source.
 */
function copyHelper(target: Object3D, source: Object3D, parts: [Part, Part][], recursive: boolean): void {
  Object3D.prototype.copy.call(target, source, false);
  for (const [t, s] of parts) {
    (t.material as { copy(m: unknown): unknown }).copy(s.material);
    t.position.copy(s.position);
    t.renderOrder = s.renderOrder;
    t.visible = s.visible;
  }
  if (recursive) {
    const own = new Set<Object3D>(parts.map(([, s]) => s));
    for (const child of source.children) if (!own.has(child)) target.add(child.clone());
  }
}

/** An optional number option within lo..hi. */
function numberOption(where: string, v: unknown, lo: number, hi: number): number | undefined {
  if (v === undefined) return undefined;
  if (!(num(where, v) >= lo && (v as number) <= hi)) throw invalid(`${where} must be within ${lo}..${hi} (got ${v})`);
  return v as number;
}

function navmeshSource(n: NavMeshSource): NavMeshSource {
  const m = n as Partial<NavMeshSource> | null;
  if (typeof m?.toGeometry !== 'function' || typeof m?.polygons !== 'function') {
    throw invalid(`navbake/three: NavMeshHelper needs a NavMesh (got ${shown(n)})`);
  }
  return n;
}

/** A path (e.g. findPath(...).points) as a three.js line through its points, with a marker on each point. */
export class PathHelper extends Object3D {
  readonly isPathHelper = true;
  override type = 'PathHelper';
  /** The line through the path's points. */
  readonly line: Line<BufferGeometry, LineBasicMaterial>;
  /** A marker on each point. */
  readonly points: Points<BufferGeometry, PointsMaterial>;

  /** points: xyz per point (a PathResult works too). */
  constructor(
    points: ArrayLike<number> | { points: Float32Array } = new Float32Array(0),
    opts?: PathHelperOptions | null,
  ) {
    super();
    const where = 'navbake/three: PathHelper: options';
    const options = optionsObject<PathHelperOptions>(where, opts, ['color', 'pointSize', 'lift']);
    const color = colorOption(`${where}.color`, options.color) ?? 0xff3366;
    const size = numberOption(`${where}.pointSize`, options.pointSize, 0, Infinity) ?? 6;
    const lift = numberOption(`${where}.lift`, options.lift, -Infinity, Infinity) ?? 0.1;
    this.line = new Line(new BufferGeometry(), new LineBasicMaterial({ color, depthTest: false }));
    this.points = new Points(
      new BufferGeometry(),
      new PointsMaterial({ color, size, sizeAttenuation: false, depthTest: false }),
    );
    this.line.position.y = lift;
    this.points.position.y = lift;
    // Drawn last and without depth test: a path is never hidden under the navmesh or the level.
    this.line.renderOrder = this.points.renderOrder = 2;
    this.add(this.line, this.points);
    this.setPath(points);
  }

  /** Shows another path (xyz per point, or a PathResult); an empty one hides the line. */
  setPath(points: ArrayLike<number> | { points: Float32Array }): this {
    // A PathResult has a numeric `length` too (the path's): tell it apart by being neither array nor view.
    const src: unknown =
      ArrayBuffer.isView(points) || Array.isArray(points) || points == null || typeof points !== 'object'
        ? points
        : (points as { points: Float32Array }).points;
    const xyz = numericArray('navbake/three: PathHelper: points', src, (n) => new Float32Array(n), Number.isFinite, 'a finite number');
    if (xyz.length % 3 !== 0) {
      throw new NavBakeError('NB_ERR_INVALID_ARG', `navbake/three: a path needs 3 numbers per point (got ${xyz.length})`);
    }
    const geometry = (data: Float32Array) => {
      const g = new BufferGeometry();
      g.setAttribute('position', new BufferAttribute(data, 3));
      return g;
    };
    this.line.geometry.dispose();
    this.line.geometry = geometry(xyz);
    this.points.geometry.dispose();
    this.points.geometry = geometry(xyz.slice());
    return this;
  }

  /**
   * Shows source's path, with source's colours and sizes, placed and set up as source (three.js's copy(); clone()
   * gives a helper of its own, geometries and materials, and `scene.clone()` works with helpers in the scene).
   */
  override copy(source: this, recursive = true): this {
    if (!(source instanceof PathHelper)) throw invalid(`navbake/three: PathHelper.copy needs a PathHelper (got ${shown(source)})`);
    const path = source.line.geometry.getAttribute('position')?.array as Float32Array | undefined;
    this.setPath(path ? path.slice() : new Float32Array(0));
    copyHelper(this, source, [[this.line, source.line], [this.points, source.points]], recursive);
    return this;
  }

  /** Frees the geometries and materials. */
  dispose(): void {
    this.line.geometry.dispose();
    this.line.material.dispose();
    this.points.geometry.dispose();
    this.points.material.dispose();
  }
}
