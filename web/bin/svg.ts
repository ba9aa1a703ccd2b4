// A top-down picture of a navmesh: x to the right, z downwards (as seen from above with y up), one <polygon> per
// polygon filled by its area's colour, and optionally a path as a <polyline>.
import type { PathResult, PolygonInfo } from 'navbake';
import type { Vec3 } from './args.js';

/** The default walkable area (63) in blue; other area ids spread round the colour wheel; 0 (none) grey. */
export function areaColour(area: number): string {
  if (area === 63) return '#8ecae6';
  if (area === 0) return '#adb5bd';
  return `hsl(${Math.round((area * 137.508) % 360)}, 65%, 70%)`;
}

/** Short decimals: the picture needs no more than a thousandth of a unit. */
function num(v: number): string {
  const s = String(Number(v.toFixed(3)));
  return s === '-0' ? '0' : s;
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
}

export interface RenderPath {
  from: Vec3;
  to: Vec3;
  result: PathResult;
}

const SIZE_PX = 1000;

export function renderSvg(title: string, polygons: readonly PolygonInfo[], path?: RenderPath): string {
  // Bounds (x, z) of everything drawn.
  let x0 = Infinity, z0 = Infinity, x1 = -Infinity, z1 = -Infinity;
  const extend = (x: number, z: number) => {
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    z0 = Math.min(z0, z);
    z1 = Math.max(z1, z);
  };
  for (const p of polygons) for (let i = 0; i < p.vertices.length; i += 3) extend(p.vertices[i], p.vertices[i + 2]);
  if (path) {
    extend(path.from[0], path.from[2]);
    extend(path.to[0], path.to[2]);
    const pts = path.result.points;
    for (let i = 0; i < pts.length; i += 3) extend(pts[i], pts[i + 2]);
  }
  if (!(x1 >= x0)) [x0, z0, x1, z1] = [-1, -1, 1, 1];
  const span = Math.max(x1 - x0, z1 - z0, 1e-3);
  const margin = span * 0.02;
  const w = x1 - x0 + 2 * margin;
  const h = z1 - z0 + 2 * margin;
  const px = span + 2 * margin; // world units per SIZE_PX pixels
  const unit = px / SIZE_PX; // one pixel, in world units: strokes stay thin whatever the level's scale

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${num(x0 - margin)} ${num(z0 - margin)} ${num(w)} ${num(h)}" ` +
      `width="${Math.max(1, Math.round((w / px) * SIZE_PX))}" height="${Math.max(1, Math.round((h / px) * SIZE_PX))}">`,
    `<title>${escapeXml(title)}</title>`,
  );
  // Lowest first, so upper floors are drawn over the ones below them.
  const meanY = (p: PolygonInfo) => {
    let s = 0;
    for (let i = 1; i < p.vertices.length; i += 3) s += p.vertices[i];
    return s / Math.max(1, p.vertices.length / 3);
  };
  const polys = polygons.filter((p) => !p.offMesh).map((p) => ({ p, y: meanY(p) }));
  polys.sort((a, b) => a.y - b.y);
  out.push(`<g stroke="#1d3557" stroke-width="${num(unit)}" stroke-linejoin="round">`);
  for (const { p } of polys) {
    const pts: string[] = [];
    for (let i = 0; i < p.vertices.length; i += 3) pts.push(`${num(p.vertices[i])},${num(p.vertices[i + 2])}`);
    out.push(`<polygon points="${pts.join(' ')}" fill="${areaColour(p.area)}"/>`);
  }
  out.push('</g>');
  const links = polygons.filter((p) => p.offMesh && p.vertices.length >= 6);
  if (links.length) {
    out.push(`<g stroke="#6a4c93" stroke-width="${num(2 * unit)}" stroke-dasharray="${num(6 * unit)}">`);
    for (const l of links) {
      const v = l.vertices;
      out.push(`<line x1="${num(v[0])}" y1="${num(v[2])}" x2="${num(v[3])}" y2="${num(v[5])}"/>`);
    }
    out.push('</g>');
  }
  if (path) {
    const pts = path.result.points;
    if (pts.length >= 6) {
      const list: string[] = [];
      for (let i = 0; i < pts.length; i += 3) list.push(`${num(pts[i])},${num(pts[i + 2])}`);
      out.push(
        `<polyline points="${list.join(' ')}" fill="none" stroke="#d62828" stroke-width="${num(3 * unit)}" ` +
          `stroke-linejoin="round" stroke-linecap="round"/>`,
      );
    }
    // The requested ends (hollow): a partial path stops short of `to`, and the gap shows.
    const r = num(6 * unit);
    out.push(
      `<circle cx="${num(path.from[0])}" cy="${num(path.from[2])}" r="${r}" fill="none" stroke="#2a9d8f" stroke-width="${num(2 * unit)}"/>`,
      `<circle cx="${num(path.to[0])}" cy="${num(path.to[2])}" r="${r}" fill="none" stroke="#d62828" stroke-width="${num(2 * unit)}"/>`,
    );
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
