// A dropped .obj, read in a worker (obj.worker.ts) so that the page stays live however big the file is.
import { BufferAttribute, BufferGeometry, Group, Mesh, MeshPhongMaterial, type Object3D } from 'three';

/** One mesh of the file as OBJLoader made it: its attributes, material groups and materials. */
export interface ObjMesh {
  name: string;
  attributes: Record<string, { array: Float32Array; itemSize: number }>;
  groups: { start: number; count: number; materialIndex: number }[];
  materials: { name: string; flatShading: boolean; vertexColors: boolean }[];
  /** an array of materials (OBJLoader makes one when the mesh has several) */
  multi: boolean;
}

/** skipped: lines OBJLoader did not understand (it warned of each); first: its first such warning */
export type ObjReply = { meshes: ObjMesh[]; skipped: number; first: string } | { error: string };

let reading: { worker: Worker; reject: (e: Error) => void } | null = null;

/** Stops a read still running (another level was chosen): its promise rejects. */
export function stopObjRead(): void {
  if (!reading) return;
  reading.worker.terminate();
  reading.reject(new Error('replaced by another level'));
  reading = null;
}

/** The file's meshes in a Group, as OBJLoader.parse gives them (its materials: MeshPhongMaterial). */
export function readObj(file: File): Promise<Object3D> {
  stopObjRead();
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./obj.worker.ts', import.meta.url), { type: 'module' });
    const done = () => {
      worker.terminate();
      if (reading?.worker === worker) reading = null;
    };
    reading = { worker, reject };
    worker.onmessage = (e: MessageEvent<ObjReply>) => {
      done();
      const r = e.data;
      if ('error' in r) {
        reject(new Error(`not a readable .obj file: ${r.error}`));
        return;
      }
      if (r.skipped) console.warn(`${file.name}: ${r.skipped} line${r.skipped === 1 ? '' : 's'} skipped (${r.first})`);
      resolve(objects(r.meshes));
    };
    worker.onerror = (e) => {
      done();
      reject(new Error(`the .obj reader stopped: ${e.message || 'out of memory?'}`));
    };
    worker.postMessage(file);
  });
}

function objects(meshes: ObjMesh[]): Object3D {
  const root = new Group();
  for (const m of meshes) {
    const geometry = new BufferGeometry();
    for (const [name, a] of Object.entries(m.attributes)) geometry.setAttribute(name, new BufferAttribute(a.array, a.itemSize));
    for (const g of m.groups) geometry.addGroup(g.start, g.count, g.materialIndex);
    const materials = m.materials.map((d) => {
      const mat = new MeshPhongMaterial({ flatShading: d.flatShading, vertexColors: d.vertexColors });
      mat.name = d.name;
      return mat;
    });
    const mesh = new Mesh(geometry, m.multi ? materials : materials[0]);
    mesh.name = m.name;
    root.add(mesh);
  }
  return root;
}
