// The two wasm bakers the stage benchmarks time side by side, with the same triangles and settings (the reference
// demo's, REFERENCE.md): recastnavigation compiled to wasm (npm @recast-navigation/core), its stage calls timed one
// by one from JavaScript, and navbake's built module, timed per stage by its C core.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as rc from '@recast-navigation/core';
import { root } from './lib.mjs';

await rc.init();

export const PARTITIONS = { watershed: 1, monotone: 2, layers: 3 };
export const STAGES = ['rasterize', 'filter', 'compact', 'erode', 'distance', 'regions', 'contours', 'polymesh', 'detail'];
const C = { cs: 0.3, ch: 0.2, slope: 45, wh: 10, wc: 4, wr: 2, minArea: 64, mergeArea: 400, maxErr: 1.3,
            maxEdge: 40, nvp: 6, sampleDist: 1.8, sampleErr: 0.2 };

function bounds(p) {
  const bmin = [p[0], p[1], p[2]];
  const bmax = [p[0], p[1], p[2]];
  for (let i = 3; i < p.length; i += 3)
    for (let k = 0; k < 3; k++) {
      bmin[k] = Math.min(bmin[k], p[i + k]);
      bmax[k] = Math.max(bmax[k], p[i + k]);
    }
  return { bmin, bmax };
}

export function makeReference(mesh, partition) {
  const verts = new rc.FloatArray();
  verts.copy(mesh.positions);
  const tris = new rc.IntArray();
  tris.copy(new Int32Array(mesh.indices));
  const nv = mesh.positions.length / 3;
  const nt = mesh.indices.length / 3;
  const { bmin, bmax } = bounds(mesh.positions);
  const w = Math.floor((bmax[0] - bmin[0]) / C.cs + 0.5);
  const h = Math.floor((bmax[2] - bmin[2]) / C.cs + 0.5);
  const ctx = new rc.RecastBuildContext(false);
  return () => {
    const t = { start: performance.now() };
    let last = t.start;
    const lap = (k) => {
      const now = performance.now();
      t[k] = now - last;
      last = now;
    };
    const areas = new rc.UnsignedCharArray();
    areas.resize(nt);
    const hf = rc.allocHeightfield();
    rc.createHeightfield(ctx, hf, w, h, bmin, bmax, C.cs, C.ch);
    rc.markWalkableTriangles(ctx, C.slope, verts, nv, tris, nt, areas);
    rc.rasterizeTriangles(ctx, verts, nv, tris, areas, nt, hf, C.wc);
    lap('rasterize');
    rc.filterLowHangingWalkableObstacles(ctx, C.wc, hf);
    rc.filterLedgeSpans(ctx, C.wh, C.wc, hf);
    rc.filterWalkableLowHeightSpans(ctx, C.wh, hf);
    lap('filter');
    const chf = rc.allocCompactHeightfield();
    rc.buildCompactHeightfield(ctx, C.wh, C.wc, hf, chf);
    lap('compact');
    rc.erodeWalkableArea(ctx, C.wr, chf);
    lap('erode');
    if (partition === 1) {
      rc.buildDistanceField(ctx, chf);
      lap('distance');
      rc.buildRegions(ctx, chf, 0, C.minArea, C.mergeArea);
    } else if (partition === 2) rc.buildRegionsMonotone(ctx, chf, 0, C.minArea, C.mergeArea);
    else rc.buildLayerRegions(ctx, chf, 0, C.minArea);
    lap('regions');
    const cset = rc.allocContourSet();
    rc.buildContours(ctx, chf, C.maxErr, C.maxEdge, cset);
    lap('contours');
    const pmesh = rc.allocPolyMesh();
    rc.buildPolyMesh(ctx, cset, C.nvp, pmesh);
    lap('polymesh');
    const dmesh = rc.allocPolyMeshDetail();
    rc.buildPolyMeshDetail(ctx, pmesh, chf, C.sampleDist, C.sampleErr, dmesh);
    lap('detail');
    t.total = last - t.start;
    t.polys = pmesh.npolys();
    rc.freePolyMeshDetail(dmesh);
    rc.freePolyMesh(pmesh);
    rc.freeContourSet(cset);
    rc.freeCompactHeightfield(chf);
    rc.freeHeightfield(hf);
    areas.destroy?.();
    return t;
  };
}

export async function loadOurs() {
  const { default: create } = await import(resolve(root, 'build/wasm/navbake.mjs'));
  return create({ wasmBinary: readFileSync(resolve(root, 'build/wasm/navbake.wasm')) });
}

export function makeOurs(m, mesh, partition) {
  const names = Array.from({ length: m._nbw_stat_count() }, (_, i) => m.UTF8ToString(m._nbw_stat_name(i)));
  const firstMs = names.indexOf('rasterize');
  const nf = m._nbw_config_field_count();
  const ctx = m._nbw_context_create();
  const pPos = m._malloc(mesh.positions.byteLength);
  const pIdx = m._malloc(mesh.indices.byteLength);
  const pCfg = m._malloc(nf * 8);
  m.HEAPF32.set(mesh.positions, pPos >> 2);
  m.HEAPU32.set(mesh.indices, pIdx >> 2);
  const cfg = new Float64Array(nf);
  for (let i = 0; i < nf; i++) if (m.UTF8ToString(m._nbw_config_field_name(i)) === 'partition') cfg[i] = partition;
  m.HEAPF64.set(cfg, pCfg >> 3);
  const run = () => {
    const r = m._nbw_bake(ctx, pPos, mesh.positions.length / 3, pIdx, mesh.indices.length / 3, 0, pCfg, 0, 0);
    if (!r) throw new Error(m.UTF8ToString(m._nbw_message(ctx)));
    const out = {};
    names.forEach((n, i) => {
      const v = m._nbw_result_stat(r, i);
      if (i >= firstMs) out[n] = Math.max(0, v);
      else if (!(n in out)) out[n] = v;
    });
    out.polys_count = m._nbw_result_stat(r, names.indexOf('polys'));
    m._nbw_result_free(ctx, r);
    return out;
  };
  run.dispose = () => {
    m._free(pPos);
    m._free(pIdx);
    m._free(pCfg);
    m._nbw_context_destroy(ctx);
  };
  return run;
}
