// Reads a dropped .obj off the page's thread. three.js's OBJLoader takes seconds on a big file (about 12 s for
// 2 million triangles), and on the page's thread that froze it: no progress, no Cancel, no input. Here it parses
// the file and answers with each mesh's arrays, transferred, for obj.ts to put together again.
import type { Material, Mesh, MeshPhongMaterial } from 'three';
import { OBJLoader } from 'three/examples/jsm/loaders/OBJLoader.js';
import type { ObjReply, ObjMesh } from './obj';

self.onmessage = async (e: MessageEvent<File>) => {
  let reply: ObjReply;
  const transfer: ArrayBuffer[] = [];
  // OBJLoader warns once per line it does not understand: a file of garbage flooded the console with thousands. They
  // are counted here, and the page says so once.
  const warn = console.warn;
  let skipped = 0;
  let first = '';
  console.warn = (...args: unknown[]) => {
    if (skipped++ === 0) first = args.map(String).join(' ');
  };
  try {
    const text = await e.data.text();
    let root;
    try {
      root = new OBJLoader().parse(text);
    } finally {
      console.warn = warn;
    }
    const meshes: ObjMesh[] = [];
    root.traverse((o) => {
      const m = o as Mesh;
      if (!m.isMesh) return; // lines and points: nothing to walk on
      const attributes: ObjMesh['attributes'] = {};
      for (const [name, a] of Object.entries(m.geometry.attributes)) {
        const array = a.array as Float32Array;
        attributes[name] = { array, itemSize: a.itemSize };
        transfer.push(array.buffer as ArrayBuffer);
      }
      const list = (Array.isArray(m.material) ? m.material : [m.material]) as Material[];
      meshes.push({
        name: m.name,
        attributes,
        groups: m.geometry.groups.map((g) => ({ start: g.start, count: g.count, materialIndex: g.materialIndex ?? 0 })),
        materials: list.map((mat) => ({
          name: mat.name,
          flatShading: (mat as MeshPhongMaterial).flatShading,
          vertexColors: mat.vertexColors,
        })),
        multi: Array.isArray(m.material),
      });
    });
    reply = { meshes, skipped, first };
  } catch (err) {
    reply = { error: err instanceof Error ? err.message : String(err) };
  }
  (self as unknown as Worker).postMessage(reply, transfer);
};
