// The debug views drawn from inspect() results: walkable voxels (the top of each walkable span, coloured by area or
// by region), region outlines (contours, simplified and raw), and off-mesh links as arcs. A tiled bake is inspected
// tile by tile: each tile's spans and contours are in its own grid, placed in the world by its grid origin.
import type { Inspection } from 'navbake';
import { areaColor } from 'navbake/three';
import {
  BufferAttribute,
  BufferGeometry,
  Color,
  DoubleSide,
  Group,
  LineBasicMaterial,
  LineSegments,
  Mesh,
  MeshBasicMaterial,
} from 'three';

/** Beyond this many spans the voxel view is not built (millions of quads would stall the page). */
export const MAX_VOXELS = 1_000_000;

const GOLDEN = 0.618033988749895;

/** A colour per (tile, region): neighbouring ids get far-apart hues; region 0 (no region) is grey. */
export function regionColor(tile: number, region: number, target = new Color()): Color {
  if (region === 0) return target.setRGB(0.35, 0.35, 0.38, 'srgb');
  const h = ((region + tile * 7919) * GOLDEN) % 1;
  const l = 0.45 + 0.15 * (((region * 13 + tile) % 3) / 2);
  return target.setHSL(h, 0.75, l, 'srgb');
}

export interface ViewFlags {
  voxels: boolean;
  regions: boolean;
  contours: boolean;
  rawContours: boolean;
}

export class InspectionViews extends Group {
  /**
   * The top of every walkable span's voxel as a quad (as Recast's debug draw shows a compact heightfield), one
   * mesh for all of them; null when there are none or too many.
   */
  voxels: Mesh<BufferGeometry, MeshBasicMaterial> | null = null;
  readonly contours = new LineSegments(new BufferGeometry(), new LineBasicMaterial({ vertexColors: true }));
  readonly rawContours = new LineSegments(
    new BufferGeometry(),
    new LineBasicMaterial({ vertexColors: true, transparent: true, opacity: 0.45 }),
  );
  /** vertex colours of the voxels by area and by region (swapped in by the view flags) */
  private areaColors: BufferAttribute | null = null;
  private regionColors: BufferAttribute | null = null;
  /** walkable spans in the last set() */
  spanCount = 0;

  constructor() {
    super();
    this.name = 'inspection views';
    this.contours.renderOrder = 2;
    this.rawContours.renderOrder = 2;
    this.add(this.contours, this.rawContours);
  }

  /** Replaces what is drawn with these inspections (one per tile, or one for a solo bake). */
  set(list: readonly Inspection[]): void {
    this.clearVoxels();
    const total = list.reduce((n, i) => n + i.spans.count, 0);
    this.spanCount = total;
    if (total > 0 && total <= MAX_VOXELS) {
      const pos = new Float32Array(total * 12);
      const byArea = new Float32Array(total * 12);
      const byRegion = new Float32Array(total * 12);
      const index = new Uint32Array(total * 6);
      const c = new Color();
      let k = 0;
      list.forEach((insp, t) => {
        const { grid, spans } = insp;
        const [ox, oy, oz] = grid.origin;
        const cs = grid.cellSize;
        const inset = cs * 0.06; // a hairline gap between cells shows the grid
        for (let i = 0; i < spans.count; i++, k++) {
          const x0 = ox + spans.x[i] * cs + inset;
          const z0 = oz + spans.z[i] * cs + inset;
          const x1 = x0 + cs - 2 * inset;
          const z1 = z0 + cs - 2 * inset;
          const y = oy + spans.y[i] * grid.cellHeight + 0.02;
          pos.set([x0, y, z0, x1, y, z0, x1, y, z1, x0, y, z1], k * 12);
          // counter-clockwise seen from above (+y): 0 3 2, 0 2 1
          const v = k * 4;
          index.set([v, v + 3, v + 2, v, v + 2, v + 1], k * 6);
          // a checkerboard of two shades, so single cells stay visible inside one colour
          const shade = (spans.x[i] + spans.z[i]) & 1 ? 0.82 : 1;
          areaColor(spans.area[i], c).multiplyScalar(shade);
          for (let q = 0; q < 4; q++) c.toArray(byArea, k * 12 + q * 3);
          regionColor(t, spans.region[i], c).multiplyScalar(shade);
          for (let q = 0; q < 4; q++) c.toArray(byRegion, k * 12 + q * 3);
        }
      });
      const g = new BufferGeometry();
      g.setAttribute('position', new BufferAttribute(pos, 3));
      g.setIndex(new BufferAttribute(index, 1));
      this.areaColors = new BufferAttribute(byArea, 3);
      this.regionColors = new BufferAttribute(byRegion, 3);
      g.setAttribute('color', this.areaColors);
      const mesh = new Mesh(g, new MeshBasicMaterial({ vertexColors: true, side: DoubleSide }));
      mesh.name = 'walkable voxels';
      mesh.renderOrder = 1;
      this.voxels = mesh;
      this.add(mesh);
    }
    this.contours.geometry.dispose();
    this.rawContours.geometry.dispose();
    this.contours.geometry = loops(list, false);
    this.rawContours.geometry = loops(list, true);
  }

  reset(): void {
    this.set([]);
  }

  private clearVoxels(): void {
    if (this.voxels) {
      this.remove(this.voxels);
      this.voxels.geometry.dispose();
      this.voxels.material.dispose();
    }
    this.voxels = null;
    this.areaColors = this.regionColors = null;
  }

  /** Shows what the flags ask for; voxels take region colours when the regions view is on. */
  apply(f: ViewFlags): void {
    const v = this.voxels;
    if (v) {
      v.visible = f.voxels || f.regions;
      const want = f.regions ? this.regionColors! : this.areaColors!;
      if (v.geometry.getAttribute('color') !== want) v.geometry.setAttribute('color', want);
    }
    this.contours.visible = f.contours;
    this.rawContours.visible = f.rawContours;
  }
}

/** Every contour as a closed loop of line segments, lifted a little off the floor, coloured by region. */
function loops(list: readonly Inspection[], raw: boolean): BufferGeometry {
  let n = 0;
  for (const insp of list) {
    const c = insp.contours;
    n += (raw ? c.rawVertices : c.vertices).length / 3;
  }
  const pos = new Float32Array(n * 6);
  const col = new Float32Array(n * 6);
  const color = new Color();
  let k = 0;
  list.forEach((insp, t) => {
    const c = insp.contours;
    const verts = raw ? c.rawVertices : c.vertices;
    const offs = raw ? c.rawOffsets : c.offsets;
    const lift = raw ? 0.08 : 0.15;
    for (let i = 0; i < c.count; i++) {
      regionColor(t, c.region[i], color);
      if (!raw) color.offsetHSL(0, 0, 0.15);
      const [a, b] = [offs[i], offs[i + 1]];
      for (let j = a; j < b; j++) {
        const next = j + 1 < b ? j + 1 : a;
        for (const [v, o] of [[j, 0], [next, 3]] as const) {
          pos[k * 6 + o] = verts[v * 3];
          pos[k * 6 + o + 1] = verts[v * 3 + 1] + lift;
          pos[k * 6 + o + 2] = verts[v * 3 + 2];
          color.toArray(col, k * 6 + o);
        }
        k++;
      }
    }
  });
  const g = new BufferGeometry();
  g.setAttribute('position', new BufferAttribute(pos, 3));
  g.setAttribute('color', new BufferAttribute(col, 3));
  return g;
}

/** An off-mesh link: where it starts and ends. */
export interface LinkShape {
  start: readonly [number, number, number];
  end: readonly [number, number, number];
  bidirectional?: boolean;
}

/**
 * Off-mesh links as arcs: a parabola from start to end rising above the higher end (a jump), with a small arrow
 * head at the end of one-way links.
 */
export function linkArcs(links: readonly LinkShape[], color = 0xff9020): LineSegments<BufferGeometry, LineBasicMaterial> {
  const p: number[] = [];
  const SEG = 16;
  for (const l of links) {
    const [ax, ay, az] = l.start;
    const [bx, by, bz] = l.end;
    const span = Math.hypot(bx - ax, bz - az);
    // height of the arc above the chord's midpoint: it clears the higher end
    const h = Math.abs(by - ay) / 2 + Math.max(0.5, span * 0.2);
    const at = (t: number): [number, number, number] => [
      ax + (bx - ax) * t,
      ay + (by - ay) * t + 4 * h * t * (1 - t) + 0.1,
      az + (bz - az) * t,
    ];
    let prev = at(0);
    for (let i = 1; i <= SEG; i++) {
      const cur = at(i / SEG);
      p.push(...prev, ...cur);
      prev = cur;
    }
    if (!l.bidirectional) {
      // arrow head: two short strokes back from the end, across the direction of travel
      const before = at(1 - 1 / SEG);
      const end = at(1);
      const d = [end[0] - before[0], end[1] - before[1], end[2] - before[2]];
      const len = Math.hypot(...d) || 1;
      const s = 0.35 / len;
      const side = [-d[2] * s * 0.6, 0, d[0] * s * 0.6];
      for (const sgn of [1, -1]) {
        p.push(...end, end[0] - d[0] * s + sgn * side[0], end[1] - d[1] * s, end[2] - d[2] * s + sgn * side[2]);
      }
    }
  }
  const g = new BufferGeometry();
  g.setAttribute('position', new BufferAttribute(new Float32Array(p), 3));
  const lines = new LineSegments(g, new LineBasicMaterial({ color, depthTest: false }));
  lines.renderOrder = 3;
  lines.name = 'off-mesh links';
  return lines;
}
