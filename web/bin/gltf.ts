// glTF 2.0 (.gltf with its buffers, or .glb) through @gltf-transform/core: every triangle primitive of every
// mesh in the default scene, in world space, each instance of an instanced node (EXT_mesh_gpu_instancing) in
// place. Files made for the web read as they are: quantized (KHR_mesh_quantization), meshopt-compressed
// (EXT_meshopt_compression, decoded by meshoptimizer) or Draco-compressed (KHR_draco_mesh_compression, decoded by
// draco3dgltf); @gltf-transform/extensions knows every Khronos extension, so one a file requires for its
// materials or textures does not stop its geometry from being read.
import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import type { Accessor, Document, JSONDocument, mat4, MathUtils, Mesh, Node, Primitive } from '@gltf-transform/core';
import type { InstancedMesh } from '@gltf-transform/extensions';
import { describeFsError, InputError } from './errors.js';
import type { Triangles } from './obj.js';

// glTF primitive modes (WebGL enums) that describe triangles; points and lines are not ground.
const TRIANGLES = 4;
const TRIANGLE_STRIP = 5;
const TRIANGLE_FAN = 6;

// The output arrays, allocated once at their final size (readGltf counts every primitive and instance first).
class Floats {
  data: Float32Array;
  length = 0;
  constructor(n: number) {
    this.data = new Float32Array(n);
  }
}

class Uints {
  data: Uint32Array;
  length = 0;
  constructor(n: number) {
    this.data = new Uint32Array(n);
  }
  push3(a: number, b: number, c: number): void {
    this.data[this.length++] = a;
    this.data[this.length++] = b;
    this.data[this.length++] = c;
  }
}

/** The most memory a bake's wasm instance can have (the module's MAXIMUM_MEMORY): its input alone must fit. */
const WASM_MEMORY = 2 ** 31;

/** The triangles (as index triples into the primitive's vertices) of a primitive in one of the triangle modes. */
function forEachTriangle(mode: number, count: number, at: (k: number) => number, emit: (a: number, b: number, c: number) => void) {
  if (mode === TRIANGLES) {
    for (let k = 0; k + 2 < count; k += 3) emit(at(k), at(k + 1), at(k + 2));
  } else if (mode === TRIANGLE_STRIP) {
    // Every other triangle of a strip is wound the other way round; swap two to keep them all facing alike.
    for (let k = 0; k + 2 < count; k++) {
      if (k % 2 === 0) emit(at(k), at(k + 1), at(k + 2));
      else emit(at(k + 1), at(k), at(k + 2));
    }
  } else {
    for (let k = 1; k + 1 < count; k++) emit(at(0), at(k), at(k + 1));
  }
}

function label(node: Node, meshName: string, p: number): string {
  const n = node.getName() ? `node '${node.getName()}'` : 'a node';
  const m = meshName ? `mesh '${meshName}'` : 'its mesh';
  return `${n}, ${m}, primitive ${p}`;
}

// glTF accessor layout: bytes per component (by componentType) and components per element (by type).
const COMPONENT_BYTES: Readonly<Record<number, number>> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 };
const COMPONENTS: Readonly<Record<string, number>> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 };
const GLB_BUFFER = '@glb.bin'; // where @gltf-transform keeps a .glb's binary chunk among the resources
const MESHOPT = 'EXT_meshopt_compression';
const DRACO = 'KHR_draco_mesh_compression';
const INSTANCING = 'EXT_mesh_gpu_instancing';

/**
 * Every accessor's elements must lie inside its buffer view, and every view inside its buffer, whose data must
 * be there. @gltf-transform does not check this: it reads past the end of a short buffer (into whatever memory
 * follows) or silently shortens the accessor, so a corrupt file baked into a wrong, often empty, navmesh.
 * Returns what is wrong, or null.
 */
function layoutProblem(doc: JSONDocument): string | null {
  const { json, resources } = doc;
  // glTF's one required property: without it the JSON is something else (the library would fail on reading it)
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return 'not a glTF JSON object';
  if (typeof json.asset?.version !== 'string') return "no asset.version: not a glTF file (glTF 2.0 says \"asset\": { \"version\": \"2.0\" })";
  const buffers = json.buffers ?? [];
  const views = json.bufferViews ?? [];
  const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  for (const [i, b] of buffers.entries()) {
    if (!int(b.byteLength)) return `buffer ${i}: byteLength ${b.byteLength} is not a size`;
    // A meshopt fallback buffer holds no data: the decoder fills it from the compressed views.
    if ((b.extensions?.[MESHOPT] as { fallback?: boolean } | undefined)?.fallback === true) continue;
    const data = b.uri !== undefined ? resources[b.uri] : resources[GLB_BUFFER];
    if (!data) return `buffer ${i}: no data`;
    if (data.byteLength < b.byteLength) return `buffer ${i} declares ${b.byteLength} bytes, its data has ${data.byteLength}`;
  }
  for (const [i, v] of views.entries()) {
    const b = buffers[v.buffer];
    if (!b) return `buffer view ${i}: no buffer ${v.buffer}`;
    const off = v.byteOffset ?? 0;
    if (!int(off) || !int(v.byteLength) || off + v.byteLength > b.byteLength) {
      return `buffer view ${i} (bytes ${off}..${off + v.byteLength}) does not fit in buffer ${v.buffer} (${b.byteLength} bytes)`;
    }
    // Meshopt-compressed: the compressed bytes lie in another buffer, and decode to count x byteStride bytes.
    const c = v.extensions?.[MESHOPT] as
      | { buffer: number; byteOffset?: number; byteLength: number; byteStride: number; count: number }
      | undefined;
    if (c) {
      const cb = buffers[c.buffer];
      const coff = c.byteOffset ?? 0;
      if (!cb) return `buffer view ${i}: its compressed data names no buffer ${c.buffer}`;
      if (!int(coff) || !int(c.byteLength) || coff + c.byteLength > cb.byteLength) {
        return `buffer view ${i}: its compressed data (bytes ${coff}..${coff + c.byteLength}) does not fit in buffer ${c.buffer} (${cb.byteLength} bytes)`;
      }
      if (!int(c.count) || !int(c.byteStride) || c.count * c.byteStride > v.byteLength) {
        return `buffer view ${i}: ${c.count} compressed elements of ${c.byteStride} bytes do not fit in its ${v.byteLength} bytes`;
      }
    }
  }
  for (const [i, a] of (json.accessors ?? []).entries()) {
    const size = COMPONENT_BYTES[a.componentType] * COMPONENTS[a.type];
    if (!(size > 0)) return `accessor ${i}: componentType ${a.componentType} / type ${a.type} is not a glTF layout`;
    if (!int(a.count)) return `accessor ${i}: count ${a.count} is not a count`;
    if (a.bufferView === undefined) continue; // all zeros (or sparse): nothing to read
    const v = views[a.bufferView];
    if (!v) return `accessor ${i}: no buffer view ${a.bufferView}`;
    const stride = v.byteStride ?? size;
    const off = a.byteOffset ?? 0;
    const end = a.count === 0 ? off : off + stride * (a.count - 1) + size;
    if (!int(off) || !int(stride) || end > v.byteLength) {
      return `accessor ${i} (${a.count} x ${a.type}) needs ${end} bytes of buffer view ${a.bufferView}, which has ${v.byteLength}`;
    }
  }
  return null;
}

/**
 * The references between the parts of the scene: the default scene, each scene's and node's nodes, each node's
 * mesh, each primitive's accessors. @gltf-transform drops a reference to nothing without a word, so a broken one
 * left a file "without triangles". Returns what is wrong, or null.
 */
function referenceProblem(doc: JSONDocument): string | null {
  const { json } = doc;
  const count = (a: unknown[] | undefined) => a?.length ?? 0;
  const ok = (i: unknown, n: number) => typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < n;
  const nodes = count(json.nodes);
  const accessors = count(json.accessors);
  if (json.scene !== undefined && !ok(json.scene, count(json.scenes))) return `the default scene ${json.scene} is not one of its ${count(json.scenes)} scenes`;
  for (const [i, s] of (json.scenes ?? []).entries()) {
    for (const n of s.nodes ?? []) if (!ok(n, nodes)) return `scene ${i} names node ${n}, of ${nodes} nodes`;
  }
  for (const [i, n] of (json.nodes ?? []).entries()) {
    if (n.mesh !== undefined && !ok(n.mesh, count(json.meshes))) return `node ${i} names mesh ${n.mesh}, of ${count(json.meshes)} meshes`;
    for (const c of n.children ?? []) if (!ok(c, nodes)) return `node ${i} names child node ${c}, of ${nodes} nodes`;
  }
  for (const [i, m] of (json.meshes ?? []).entries()) {
    for (const [p, prim] of (m.primitives ?? []).entries()) {
      const refs = [...Object.entries(prim.attributes ?? {}), ...(prim.indices === undefined ? [] : [['indices', prim.indices] as const])];
      for (const [name, a] of refs) {
        if (!ok(a, accessors)) return `mesh ${i}, primitive ${p}: ${name} names accessor ${a}, of ${accessors} accessors`;
      }
    }
  }
  return null;
}

const NOT_GLB = "not a binary glTF (.glb): it does not start with 'glTF'";

/**
 * A .glb's frame: the 12-byte header (magic, version 2, length) and the JSON chunk, then an optional BIN chunk,
 * all inside the file. @gltf-transform reads whatever the header says, so a cut file failed with "Invalid typed
 * array length" and another version with a JSON parse error. Returns what is wrong, or null.
 */
function glbProblem(b: Uint8Array): string | null {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length < 4 || dv.getUint32(0, true) !== 0x46546c67) return NOT_GLB;
  if (b.length < 12) return `${b.length} bytes, less than a .glb header (12)`;
  const version = dv.getUint32(4, true);
  if (version !== 2) return `binary glTF version ${version}; only glTF 2 is read`;
  const length = dv.getUint32(8, true);
  if (length > b.length) return `the header says ${length} bytes, the file has ${b.length} (cut short?)`;
  let at = 12;
  for (const [k, type, name] of [[0, 0x4e4f534a, 'JSON'], [1, 0x004e4942, 'BIN']] as const) {
    if (k === 1 && at === length) break; // no binary chunk
    if (at + 8 > length) return `chunk ${k} (${name}) starts past the end (byte ${at} of ${length})`;
    const size = dv.getUint32(at, true);
    if (dv.getUint32(at + 4, true) !== type) return `chunk ${k} is not the ${name} chunk`;
    if (at + 8 + size > length) return `chunk ${k} (${name}, ${size} bytes at byte ${at + 8}) runs past the end (${length} bytes)`;
    at += 8 + size;
  }
  return null;
}

/** Column-major 4x4 product a * b. */
function multiply(a: mat4, b: mat4): mat4 {
  const out = new Array<number>(16);
  for (let c = 0; c < 4; c++) {
    for (let r = 0; r < 4; r++) {
      out[c * 4 + r] = a[r] * b[c * 4] + a[4 + r] * b[c * 4 + 1] + a[8 + r] * b[c * 4 + 2] + a[12 + r] * b[c * 4 + 3];
    }
  }
  return out as unknown as mat4;
}

/**
 * The world matrices of an instanced node's instances (EXT_mesh_gpu_instancing): the node's world matrix times
 * each instance's translation, rotation and scale. Returns what is wrong instead when the attributes disagree.
 */
function instanceMatrices(world: mat4, inst: InstancedMesh, math: typeof MathUtils): mat4[] | string {
  const t = inst.getAttribute('TRANSLATION');
  const r = inst.getAttribute('ROTATION');
  const s = inst.getAttribute('SCALE');
  const counts = [t, r, s].flatMap((a) => (a ? [a.getCount()] : []));
  if (counts.length === 0) return `${INSTANCING} without TRANSLATION, ROTATION or SCALE`;
  if (counts.some((c) => c !== counts[0])) return `${INSTANCING}: its attributes count ${counts.join(', ')} instances`;
  const T: [number, number, number] = [0, 0, 0];
  const R: [number, number, number, number] = [0, 0, 0, 1];
  const S: [number, number, number] = [1, 1, 1];
  const out: mat4[] = [];
  for (let i = 0; i < counts[0]; i++) {
    t?.getElement(i, T);
    r?.getElement(i, R);
    s?.getElement(i, S);
    out.push(multiply(world, math.compose(T, R, S, new Array(16) as unknown as mat4)));
  }
  return out;
}

/** What a primitive adds: its vertices and triangles (none for points, lines, or no POSITION). */
function primitiveSize(prim: Primitive): [number, number] {
  const mode = prim.getMode();
  const position = prim.getAttribute('POSITION');
  if (!position || (mode !== TRIANGLES && mode !== TRIANGLE_STRIP && mode !== TRIANGLE_FAN)) return [0, 0];
  const indices = prim.getIndices();
  const count = indices ? indices.getCount() : position.getCount();
  return [position.getCount(), mode === TRIANGLES ? Math.floor(count / 3) : Math.max(0, count - 2)];
}

/** One triangle primitive, transformed by m, appended to pos and tri. Returns what is wrong, or null. */
function addPrimitive(prim: Primitive, m: mat4, pos: Floats, tri: Uints, where: () => string): InputError | null {
  const mode = prim.getMode();
  if (mode !== TRIANGLES && mode !== TRIANGLE_STRIP && mode !== TRIANGLE_FAN) return null;
  const position: Accessor | null = prim.getAttribute('POSITION');
  if (!position) return null;
  // Column-major 4x4. A mirroring transform (negative determinant) turns faces over: swap two corners so
  // upward faces stay upward (the baker only walks on faces whose normal points up).
  const det =
    m[0] * (m[5] * m[10] - m[6] * m[9]) - m[4] * (m[1] * m[10] - m[2] * m[9]) + m[8] * (m[1] * m[6] - m[2] * m[5]);
  const mirrored = det < 0;
  const nv = position.getCount();
  const base = pos.length / 3;
  const out = pos.data;
  const v = [0, 0, 0];
  for (let i = 0; i < nv; i++) {
    position.getElement(i, v);
    const [x, y, z] = v;
    const wx = m[0] * x + m[4] * y + m[8] * z + m[12];
    const wy = m[1] * x + m[5] * y + m[9] * z + m[13];
    const wz = m[2] * x + m[6] * y + m[10] * z + m[14];
    // A broken file, not a failed bake: said here, with where it is (exit 2).
    if (!(Number.isFinite(wx) && Number.isFinite(wy) && Number.isFinite(wz))) {
      return new InputError(`${where()}: vertex ${i} is not finite in world space (${wx}, ${wy}, ${wz})`);
    }
    out[pos.length++] = wx;
    out[pos.length++] = wy;
    out[pos.length++] = wz;
  }
  const indices = prim.getIndices();
  const count = indices ? indices.getCount() : nv;
  const at = indices ? (k: number) => indices.getScalar(k) : (k: number) => k;
  let failure: InputError | null = null;
  forEachTriangle(mode, count, at, (a, b, c) => {
    if (failure) return;
    const bad = a >= nv ? a : b >= nv ? b : c >= nv ? c : -1;
    if (bad >= 0) {
      failure = new InputError(`${where()}: index ${bad} is out of range (${nv} vertices)`);
      return;
    }
    if (mirrored) tri.push3(base + a, base + c, base + b);
    else tri.push3(base + a, base + b, base + c);
  });
  return failure;
}

/** A library message fit for a terminal: a .glb that is not one made JSON.parse quote its binary bytes. */
const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, '?');

/** Reads a .gltf or .glb file. Throws InputError (exit 2) for anything unreadable or without triangles. */
export async function readGltf(file: string): Promise<Triangles> {
  const { MathUtils: math, NodeIO } = await import('@gltf-transform/core');
  const io = new NodeIO();
  let doc: Document;
  try {
    let jsonDoc: JSONDocument;
    if (/\.glb$/i.test(file)) {
      const bytes = new Uint8Array(await readFile(file));
      const frame = glbProblem(bytes);
      if (frame) throw new InputError(`${file}: ${frame === NOT_GLB ? '' : 'corrupt glTF: '}${frame}`);
      jsonDoc = await io.binaryToJSON(bytes);
    } else {
      jsonDoc = await io.readAsJSON(file);
    }
    const problem = layoutProblem(jsonDoc) ?? referenceProblem(jsonDoc);
    if (problem) throw new InputError(`${file}: corrupt glTF: ${problem}`);
    // The extensions and their decoders load only for files that use them (Draco's decoder takes a while to start).
    const used = jsonDoc.json.extensionsUsed ?? [];
    if (used.length) io.registerExtensions((await import('@gltf-transform/extensions')).ALL_EXTENSIONS);
    if (used.includes(DRACO)) {
      const draco3d = (await import('draco3dgltf')).default;
      io.registerDependencies({ 'draco3d.decoder': await draco3d.createDecoderModule() });
    }
    if (used.includes(MESHOPT)) {
      const { MeshoptDecoder } = await import('meshoptimizer');
      await MeshoptDecoder.ready;
      io.registerDependencies({ 'meshopt.decoder': MeshoptDecoder });
    }
    doc = await io.readJSON(jsonDoc);
  } catch (e) {
    if (e instanceof InputError) throw e;
    const err = e as NodeJS.ErrnoException;
    if (err?.code) {
      // a buffer or image the .gltf refers to: name it
      const other = err.path && resolve(err.path) !== resolve(file) ? `${relative(dirname(resolve(file)), err.path)}: ` : '';
      throw new InputError(`${file}: cannot read glTF: ${other}${describeFsError(e)}`);
    }
    throw new InputError(`${file}: cannot read glTF: ${printable(err?.message ?? String(e))}`);
  }
  const root = doc.getRoot();
  const scene = root.getDefaultScene() ?? root.listScenes()[0];
  if (!scene) throw new InputError(`${file}: the glTF has no scene`);

  // First each mesh with the world matrices of its copies, and what they add up to; then the arrays, allocated
  // once: a small file can instance a mesh into more than memory holds, which must be said before reading it.
  const parts: { node: Node; mesh: Mesh; transforms: mat4[] }[] = [];
  // Set inside traverse's callback (which cannot throw out of it cleanly); thrown once it returns.
  const state: { failure: InputError | null } = { failure: null };
  let vertices = 0;
  let triangles = 0;
  scene.traverse((node) => {
    const mesh = node.getMesh();
    if (!mesh || state.failure) return;
    const world = node.getWorldMatrix();
    const instanced = node.getExtension<InstancedMesh>(INSTANCING);
    const transforms = instanced ? instanceMatrices(world, instanced, math) : [world];
    if (typeof transforms === 'string') {
      state.failure = new InputError(`${file}: ${label(node, mesh.getName(), 0).replace(/, primitive 0$/, '')}: ${transforms}`);
      return;
    }
    parts.push({ node, mesh, transforms });
    for (const prim of mesh.listPrimitives()) {
      const [v, t] = primitiveSize(prim);
      vertices += v * transforms.length;
      triangles += t * transforms.length;
    }
  });
  if (state.failure) throw state.failure;
  const bytes = 12 * vertices + 12 * triangles;
  if (bytes > WASM_MEMORY) {
    throw new InputError(
      `${file}: ${vertices} vertices and ${triangles} triangles (every instance counted) need ${(bytes / 2 ** 30).toFixed(1)} GB, ` +
        `more than the 2 GB a bake has for everything`,
    );
  }
  const pos = new Floats(vertices * 3);
  const tri = new Uints(triangles * 3);
  for (const { node, mesh, transforms } of parts) {
    for (const m of transforms) {
      for (const [p, prim] of mesh.listPrimitives().entries()) {
        const failure = addPrimitive(prim, m, pos, tri, () => `${file}: ${label(node, mesh.getName(), p)}`);
        if (failure) throw failure;
      }
    }
  }
  if (tri.length === 0) {
    throw new InputError(`${file}: no triangles in the ${root.getDefaultScene() ? 'default' : 'first'} scene`);
  }
  return { positions: pos.data.slice(0, pos.length), indices: tri.data.slice(0, tri.length) };
}
