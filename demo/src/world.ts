// The big generated world (issue 6): `navbake world --seed 1 --triangles N -o world-N.bin`, written by the
// Makefile into the demo's public folder (build/demo-public, copied next to index.html by `vite build`). The .bin is
// the tool's raw geometry: "NBGM", version 1, vertex count, triangle count (u32 each, little-endian), then the
// positions (f32 xyz) and the indices (u32), so the page maps it onto typed arrays without parsing.
import { BufferAttribute, BufferGeometry, Group, Mesh, MeshLambertMaterial } from 'three';

/** The world sizes `make demo` generates (triangles asked of the generator). */
export const WORLD_SIZES = [100000, 1000000] as const;

export interface WorldGeometry {
  positions: Float32Array;
  indices: Uint32Array;
}

/** Reads a world .bin; throws an Error naming what is wrong with it. */
export function parseWorld(buffer: ArrayBuffer, name: string): WorldGeometry {
  const head = buffer.byteLength >= 16 ? new DataView(buffer, 0, 16) : null;
  const magic = head ? String.fromCharCode(...new Uint8Array(buffer, 0, 4)) : '';
  if (!head || magic !== 'NBGM') throw new Error(`${name}: not a navbake world file (no NBGM header)`);
  const version = head.getUint32(4, true);
  if (version !== 1) throw new Error(`${name}: world file version ${version}, this page reads version 1`);
  const vertices = head.getUint32(8, true);
  const triangles = head.getUint32(12, true);
  const need = 16 + vertices * 12 + triangles * 12;
  if (buffer.byteLength !== need) {
    throw new Error(`${name}: ${buffer.byteLength} bytes, but ${vertices} vertices and ${triangles} triangles need ${need}`);
  }
  const positions = new Float32Array(buffer, 16, vertices * 3);
  const indices = new Uint32Array(buffer, 16 + vertices * 12, triangles * 3);
  for (let i = 0; i < indices.length; i++) {
    if (indices[i] >= vertices) throw new Error(`${name}: triangle ${Math.floor(i / 3)} uses vertex ${indices[i]} of ${vertices}`);
  }
  return { positions, indices };
}

/** Fetches world-N.bin from next to the page (signal: stops the download). */
export async function fetchWorld(triangles: number, signal?: AbortSignal): Promise<WorldGeometry> {
  const name = `world-${triangles}.bin`;
  const res = await fetch(new URL(name, document.baseURI), { signal });
  if (!res.ok) throw new Error(`${name}: HTTP ${res.status} (make demo generates it)`);
  return parseWorld(await res.arrayBuffer(), name);
}

/** The world as a three.js group: one mesh, flat-shaded (no normals to compute for a million triangles). */
export function worldObject(g: WorldGeometry): Group {
  const geometry = new BufferGeometry();
  geometry.setAttribute('position', new BufferAttribute(g.positions, 3));
  geometry.setIndex(new BufferAttribute(g.indices, 1));
  geometry.computeBoundingBox();
  geometry.computeBoundingSphere();
  const mesh = new Mesh(geometry, new MeshLambertMaterial({ color: 0x9a9784, flatShading: true }));
  const group = new Group();
  group.add(mesh);
  return group;
}
