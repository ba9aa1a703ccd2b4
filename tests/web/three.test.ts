// navbake/three: scene -> triangles (world transforms, indexed or not, visibility, instances, mirroring) and the
// NavMeshHelper / PathHelper objects. Plain Node: the helpers build BufferGeometries, no WebGL is involved.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BatchedMesh,
  BoxGeometry,
  BufferAttribute,
  BufferGeometry,
  Group,
  InstancedBufferGeometry,
  LOD,
  InstancedMesh,
  Line,
  Matrix4,
  Mesh,
  MeshBasicMaterial,
  Object3D,
  PlaneGeometry,
  Points,
  Vector3,
} from 'three';
import { Line2 } from 'three/examples/jsm/lines/Line2.js';
import { LineGeometry } from 'three/examples/jsm/lines/LineGeometry.js';
import { LineMaterial } from 'three/examples/jsm/lines/LineMaterial.js';
import { LineSegments2 } from 'three/examples/jsm/lines/LineSegments2.js';
import { LineSegmentsGeometry } from 'three/examples/jsm/lines/LineSegmentsGeometry.js';
import { Wireframe } from 'three/examples/jsm/lines/Wireframe.js';
import { WireframeGeometry2 } from 'three/examples/jsm/lines/WireframeGeometry2.js';
import { bake, NavBakeError, type NavMesh } from '../../web/dist/index.js';
import { areaColor, geometryFromObject3D, NavMeshHelper, PathHelper } from '../../web/dist/three.js';
import { loadMesh, type Mesh as Level } from './helpers';

/** One triangle (0,0,0) (0,0,1) (1,0,0): counter-clockwise seen from above, so its normal points up. */
function floorTriangle(): BufferGeometry {
  const g = new BufferGeometry();
  g.setAttribute('position', new BufferAttribute(new Float32Array([0, 0, 0, 0, 0, 1, 1, 0, 0]), 3));
  return g;
}

/** Triangles as sorted lists of rounded vertex coordinates, so that two layouts of one surface compare equal. */
function triangleSet(g: { positions: Float32Array; indices: Uint32Array }): string[] {
  const out: string[] = [];
  for (let t = 0; t < g.indices.length; t += 3) {
    const vs = [0, 1, 2].map((k) => {
      const i = g.indices[t + k] * 3;
      return [g.positions[i], g.positions[i + 1], g.positions[i + 2]].map((x) => x.toFixed(4)).join(',');
    });
    out.push(vs.sort().join(' '));
  }
  return out.sort();
}

function normalY(g: { positions: Float32Array; indices: Uint32Array }, t: number): number {
  const p = (k: number) => new Vector3().fromArray(g.positions, g.indices[t * 3 + k] * 3);
  const a = p(0);
  return p(1).sub(a).cross(p(2).sub(a)).y;
}

const mat = new MeshBasicMaterial();

describe('geometryFromObject3D', () => {
  it('applies nested transforms (scaled, rotated, translated groups) in world space', () => {
    const outer = new Group();
    outer.position.set(10, 0, 5);
    outer.rotation.y = Math.PI / 2;
    outer.scale.setScalar(2);
    const inner = new Group();
    inner.position.set(1, 0, 0);
    const mesh = new Mesh(floorTriangle(), mat);
    mesh.position.y = 3;
    outer.add(inner);
    inner.add(mesh);
    // No updateMatrixWorld() here: the function must bring the matrices up to date itself.
    const g = geometryFromObject3D(outer);
    expect(g.positions).toBeInstanceOf(Float32Array);
    expect(g.indices).toBeInstanceOf(Uint32Array);
    expect(Array.from(g.indices)).toEqual([0, 1, 2]);
    // By hand: local p -> inner (+1 x, +3 y) -> scale 2 -> rotate 90 deg about y ((x, z) -> (z, -x)) -> +(10, 0, 5).
    const world = (x: number, y: number, z: number) => {
      const [sx, sy, sz] = [2 * (x + 1), 2 * (y + 3), 2 * z];
      return [10 + sz, sy, 5 - sx];
    };
    const want = [...world(0, 0, 0), ...world(0, 0, 1), ...world(1, 0, 0)];
    Array.from(g.positions).forEach((v, i) => expect(v).toBeCloseTo(want[i], 5));
  });

  it('includes the transforms of ancestors above the root', () => {
    const parent = new Group();
    parent.position.set(0, -7, 0);
    const mesh = new Mesh(floorTriangle(), mat);
    parent.add(mesh);
    const g = geometryFromObject3D(mesh);
    expect([g.positions[1], g.positions[4], g.positions[7]]).toEqual([-7, -7, -7]);
  });

  it('indexed and non-indexed geometry give the same triangles', () => {
    const box = new BoxGeometry(2, 1, 3);
    expect(box.index).not.toBeNull();
    const a = new Mesh(box, mat);
    const b = new Mesh(box.toNonIndexed(), mat);
    expect(b.geometry.index).toBeNull();
    a.position.set(1, 2, 3);
    b.position.set(1, 2, 3);
    const ga = geometryFromObject3D(a);
    const gb = geometryFromObject3D(b);
    expect(ga.indices.length).toBe(36);
    expect(gb.indices.length).toBe(36);
    expect(ga.positions.length).toBe(24 * 3); // the indexed box keeps its 24 shared vertices
    expect(gb.positions.length).toBe(36 * 3);
    expect(triangleSet(ga)).toEqual(triangleSet(gb));
    // translated: the box spans x 0..2, y 1.5..2.5, z 1.5..4.5
    const xs = Array.from(ga.positions).filter((_, i) => i % 3 === 0);
    expect([Math.min(...xs), Math.max(...xs)]).toEqual([0, 2]);
  });

  it('merges several meshes with their index offsets and respects draw ranges', () => {
    const root = new Group();
    const a = new Mesh(floorTriangle(), mat);
    const b = new Mesh(new BoxGeometry(), mat);
    b.geometry.setDrawRange(0, 6); // two triangles of the 12
    const c = new Mesh(new BoxGeometry().toNonIndexed(), mat);
    c.geometry.setDrawRange(3, 5); // one whole triangle (vertices 3..5); vertices 6 and 7 make no triangle
    root.add(a, b, c);
    const g = geometryFromObject3D(root);
    expect(g.indices.length).toBe(3 + 6 + 3);
    // only the vertices of the triangles taken: the box's first face (4 of its 24), one triangle of c
    expect(g.positions.length).toBe((3 + 4 + 3) * 3);
    expect(Math.max(...g.indices)).toBe(3 + 4 + 2);
    const idx = b.geometry.index!;
    expect(Array.from(g.indices.slice(3, 9))).toEqual([0, 1, 2, 3, 4, 5].map((k) => 3 + idx.getX(k)));
    const v = c.geometry.getAttribute('position');
    const last = g.indices[9] * 3;
    expect(Array.from(g.positions.slice(last, last + 3))).toEqual([v.getX(3), v.getY(3), v.getZ(3)]);
  });

  it('leaves out points and lines; refuses a BatchedMesh unless filtered out', () => {
    const root = new Group();
    root.add(new Points(floorTriangle()), new Line(floorTriangle()), new Mesh(floorTriangle(), mat));
    expect(geometryFromObject3D(root).indices.length).toBe(3);
    const batched = new BatchedMesh(1, 3, 3, mat);
    batched.addGeometry(floorTriangle());
    root.add(batched);
    expect(() => geometryFromObject3D(root)).toThrow(/BatchedMesh/);
    expect(geometryFromObject3D(root, { filter: (m) => m !== batched }).indices.length).toBe(3);
  });

  it('fat lines (Line2, LineSegments2, Wireframe) are lines too; a shader-placed InstancedBufferGeometry is refused', () => {
    // their geometry is a quad instanced along the line by the shader: as triangles it would be a box at the origin
    const root = new Group();
    const lg = new LineGeometry();
    lg.setPositions([0, 0, 0, 50, 0, 0, 50, 0, 50]);
    const line = new Line2(lg, new LineMaterial({ linewidth: 5 }));
    const segs = new LineSegments2(new LineSegmentsGeometry().setPositions([0, 0, 0, 9, 0, 0]), new LineMaterial());
    const wire = new Wireframe(new WireframeGeometry2(new BoxGeometry()), new LineMaterial());
    root.add(line, segs, wire, new Mesh(floorTriangle(), mat));
    expect(line.isMesh && segs.isMesh && wire.isMesh).toBe(true);
    expect(triangleSet(geometryFromObject3D(root))).toEqual(triangleSet(geometryFromObject3D(new Mesh(floorTriangle(), mat))));
    const ig = new InstancedBufferGeometry().copy(new PlaneGeometry(1, 1) as unknown as InstancedBufferGeometry);
    ig.instanceCount = 100;
    const grass = new Mesh(ig, mat);
    grass.name = 'grass';
    root.add(grass);
    expect(() => geometryFromObject3D(root)).toThrow(/InstancedBufferGeometry \(placed by its shader\) 'grass' is not supported/);
    expect(geometryFromObject3D(root, { filter: (m) => m !== grass }).indices.length).toBe(3);
  });

  it('with an array of materials only the groups are taken, as three.js draws them (and their visibility)', () => {
    const box = new BoxGeometry(); // 6 groups of 6 indices, one per face, material indices 0..5
    const mats = Array.from({ length: 6 }, () => new MeshBasicMaterial());
    box.clearGroups();
    box.addGroup(0, 6, 0); // face +x
    box.addGroup(12, 6, 1); // face +y
    box.addGroup(24, 6, 7); // face +z: no material 7, not drawn
    const mesh = new Mesh(box, mats);
    const whole = new Mesh(new BoxGeometry(), mat);
    const faces = (g: { positions: Float32Array; indices: Uint32Array }) => triangleSet(g);
    const all = faces(geometryFromObject3D(whole));
    const got = faces(geometryFromObject3D(mesh));
    expect(got.length).toBe(4);
    const idx = box.index!;
    const pos = box.getAttribute('position');
    const tri = (k: number) =>
      [0, 1, 2]
        .map((j) => [pos.getX(idx.getX(k + j)), pos.getY(idx.getX(k + j)), pos.getZ(idx.getX(k + j))].map((x) => x.toFixed(4)).join(','))
        .sort()
        .join(' ');
    expect(got).toEqual([0, 3, 12, 15].map(tri).sort());
    expect(all).toEqual(expect.arrayContaining(got));
    // the draw range still applies within the groups: indices 0..14 keep face +x and the first triangle of +y
    box.setDrawRange(0, 15);
    expect(faces(geometryFromObject3D(mesh))).toEqual([0, 3, 12].map(tri).sort());
    box.setDrawRange(0, Infinity);
    // an invisible material: left out with skipInvisible, like the whole mesh when its only material is hidden
    mats[1].visible = false;
    expect(geometryFromObject3D(mesh).indices.length).toBe(12);
    expect(geometryFromObject3D(mesh, { skipInvisible: true }).indices.length).toBe(6);
    const hiddenMat = new MeshBasicMaterial({ visible: false });
    expect(geometryFromObject3D(new Mesh(floorTriangle(), hiddenMat), { skipInvisible: true }).indices.length).toBe(0);
    expect(geometryFromObject3D(new Mesh(floorTriangle(), hiddenMat)).indices.length).toBe(3);
  });

  it('copies only the vertices of the triangles taken: an undrawn far or NaN vertex neither widens nor fails the bake', async () => {
    // an indexed floor drawing 2 of its 3 triangles; the third uses a vertex 10 km away
    const g = new BufferGeometry();
    g.setAttribute('position', new BufferAttribute(new Float32Array([0, 0, 0, 0, 0, 10, 10, 0, 0, 10, 0, 10, 1e4, 0, 1e4]), 3));
    g.setIndex([0, 1, 2, 2, 1, 3, 4, 4, 4]);
    g.setDrawRange(0, 6);
    const out = geometryFromObject3D(new Mesh(g, mat));
    expect(out.positions.length).toBe(4 * 3);
    expect(Math.max(...Array.from(out.positions))).toBe(10);
    const nav = await bake(out, {}, { workers: false }); // was NB_ERR_TOO_LARGE: a 33333 x 33333 grid
    expect(nav.polygons().length).toBeGreaterThan(0);
    nav.dispose();
    // the vertex is not even read: NaN there is no error either
    g.getAttribute('position').setX(4, NaN);
    expect(geometryFromObject3D(new Mesh(g, mat)).positions.length).toBe(12);
    // non-indexed, a hidden group between two drawn ones: its vertices are left out, the indices follow
    const flat = new BoxGeometry().toNonIndexed(); // 36 vertices, groups of 6 per face
    const mats = [new MeshBasicMaterial(), new MeshBasicMaterial({ visible: false })];
    flat.clearGroups();
    flat.addGroup(0, 6, 0);
    flat.addGroup(6, 24, 1);
    flat.addGroup(30, 6, 0);
    const two = geometryFromObject3D(new Mesh(flat, mats), { skipInvisible: true });
    expect(two.positions.length).toBe(12 * 3);
    const all = triangleSet(geometryFromObject3D(new Mesh(new BoxGeometry().toNonIndexed(), mat)));
    expect(all).toEqual(expect.arrayContaining(triangleSet(two)));
    const pos = flat.getAttribute('position');
    expect(Array.from(two.positions.slice(6 * 3, 6 * 3 + 3))).toEqual([pos.getX(30), pos.getY(30), pos.getZ(30)]);
    // a mesh of many groups (the first and last were found with a spread of every range: a stack overflow)
    const many = new BufferGeometry();
    const n = 130_000;
    const xyz = new Float32Array(n * 9);
    for (let i = 0; i < n; i++) xyz.set([i, 0, 0, i, 0, 1, i + 1, 0, 0], i * 9);
    many.setAttribute('position', new BufferAttribute(xyz, 3));
    for (let i = 0; i < n; i++) many.addGroup(i * 3, 3, 0);
    expect(geometryFromObject3D(new Mesh(many, [mat])).indices.length).toBe(n * 3);
  });

  it('a negative draw range start draws up to start + count, as three.js does', () => {
    const g = new BoxGeometry().toNonIndexed();
    g.setDrawRange(-3, 6); // vertices 0..2: one triangle
    expect(geometryFromObject3D(new Mesh(g, mat)).indices.length).toBe(3);
    g.setDrawRange(-9, 6); // nothing
    expect(geometryFromObject3D(new Mesh(g, mat)).indices.length).toBe(0);
  });

  it("leaves out the helpers' own drawing, and takes an LOD's first level only", async () => {
    const floor = new Mesh(new PlaneGeometry(20, 20).rotateX(-Math.PI / 2), mat);
    const scene = new Group().add(floor);
    const alone = triangleSet(geometryFromObject3D(scene));
    const nav = await bake(geometryFromObject3D(scene), {}, { workers: false });
    scene.add(new NavMeshHelper(nav), new PathHelper(nav.findPath([-5, 0, -5], [5, 0, 5]).points));
    expect(triangleSet(geometryFromObject3D(scene))).toEqual(alone); // not the navmesh lifted over the floor
    nav.dispose();
    // an LOD: the detailed level, whatever the levels' visibility (the LOD sets it for a camera)
    const lod = new LOD();
    const fine = new Mesh(new PlaneGeometry(4, 4, 4, 4).rotateX(-Math.PI / 2), mat);
    const coarse = new Mesh(new PlaneGeometry(4, 4).rotateX(-Math.PI / 2), mat);
    lod.addLevel(fine, 0);
    lod.addLevel(coarse, 50);
    const ramp = new Mesh(floorTriangle(), mat); // a plain child of the LOD, not a level: always drawn
    lod.add(ramp);
    expect(geometryFromObject3D(lod).indices.length).toBe((32 + 1) * 3);
    fine.visible = false; // as LOD.update leaves it for a far camera
    coarse.visible = true;
    expect(geometryFromObject3D(lod, { skipInvisible: true }).indices.length).toBe((32 + 1) * 3);
    lod.visible = false;
    expect(geometryFromObject3D(lod, { skipInvisible: true }).indices.length).toBe(0);
  });

  it('malformed meshes are refused where they are, not as NaN positions in the bake', () => {
    const inst = new InstancedMesh(floorTriangle(), mat, 2);
    inst.name = 'trees';
    inst.count = 5;
    expect(() => geometryFromObject3D(inst)).toThrow(/InstancedMesh 'trees': count 5 is more than its 2 instance matrices/);
    const flat = new BufferGeometry();
    flat.setAttribute('position', new BufferAttribute(new Float32Array([0, 0, 1, 0, 0, 1]), 2));
    const m = new Mesh(flat, mat);
    m.name = 'sprite2d';
    expect(() => geometryFromObject3D(m)).toThrow(/mesh 'sprite2d': its position attribute has 2 numbers per vertex, not 3/);
    expect(() => geometryFromObject3D(m, { skipInvisible: 'yes' as never })).toThrow(/options.skipInvisible must be a boolean \(got "yes"\)/);
    // an infinite coordinate was "x = -nan" by the bake (applyMatrix4 divides), an index past the vertices took
    // another mesh's vertex or failed in the bake as a non-finite one
    const inf = floorTriangle();
    inf.getAttribute('position').setX(1, Infinity);
    const far = new Mesh(inf, mat);
    far.name = 'far';
    expect(() => geometryFromObject3D(far)).toThrow(/mesh 'far': vertex 1 is \(Infinity, 0, 1\)/);
    const big = new Mesh(floorTriangle(), mat);
    big.name = 'big';
    big.scale.setScalar(1e38);
    big.position.x = 1; // with the triangle's x = 1: 1e38 is fine, 4e38 is not
    big.scale.x = 4e38;
    expect(() => geometryFromObject3D(big)).toThrow(/mesh 'big': vertex 2 is not finite in float32 in world space/);
    const idx = floorTriangle();
    idx.setIndex([0, 1, 5]);
    const holes = new Mesh(idx, mat);
    holes.name = 'holes';
    expect(() => geometryFromObject3D(new Group().add(new Mesh(floorTriangle(), mat), holes))).toThrow(/mesh 'holes': index 2 is vertex 5, but the geometry has 3 vertices/);
  });

  it('skips invisible meshes, meshes under invisible groups and roots under invisible ancestors when asked', () => {
    const root = new Group();
    const shown = new Mesh(floorTriangle(), mat);
    const hidden = new Mesh(floorTriangle(), mat);
    hidden.visible = false;
    const hiddenGroup = new Group();
    hiddenGroup.visible = false;
    const child = new Mesh(new BoxGeometry(), mat); // visible itself, but its parent is not
    hiddenGroup.add(child);
    root.add(shown, hidden, hiddenGroup);
    expect(geometryFromObject3D(root).indices.length).toBe(3 + 3 + 36);
    expect(geometryFromObject3D(root, { skipInvisible: false }).indices.length).toBe(3 + 3 + 36);
    expect(geometryFromObject3D(root, { skipInvisible: true }).indices.length).toBe(3);
    expect(geometryFromObject3D(child, { skipInvisible: true }).indices.length).toBe(0);
    expect(geometryFromObject3D(child).indices.length).toBe(36);
  });

  it('keeps floors facing up under a mirroring transform', () => {
    const mesh = new Mesh(floorTriangle(), mat);
    expect(normalY(geometryFromObject3D(mesh), 0)).toBeGreaterThan(0);
    mesh.scale.set(-1, 1, 1);
    const g = geometryFromObject3D(mesh);
    expect(g.positions[6]).toBe(-1); // really mirrored
    expect(normalY(g, 0)).toBeGreaterThan(0);
  });

  it('gives one copy per instance of an InstancedMesh', () => {
    const inst = new InstancedMesh(floorTriangle(), mat, 3);
    for (let i = 0; i < 3; i++) inst.setMatrixAt(i, new Matrix4().makeTranslation(i * 10, 0, 0));
    inst.count = 2; // only the first two are drawn
    inst.position.y = 1;
    const g = geometryFromObject3D(inst);
    expect(g.indices.length).toBe(6);
    expect(Array.from(g.positions.slice(9, 12))).toEqual([10, 1, 0]);
    expect(Array.from(g.indices)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('many instances of a big mesh that a bake could not hold: NB_ERR_TOO_LARGE with the counts, nothing allocated', () => {
    // 101 x 101 vertices, 20,000 triangles, in 20,000 copies: 204 million vertices, 400 million triangles
    const inst = new InstancedMesh(new PlaneGeometry(10, 10, 100, 100), mat, 20000);
    // nothing per instance either before the refusal (a matrix each made 30 million instances run out of JS heap)
    const getMatrixAt = inst.getMatrixAt.bind(inst);
    let matrices = 0;
    inst.getMatrixAt = (i, m) => {
      matrices++;
      return getMatrixAt(i, m);
    };
    let e: unknown = null;
    try {
      geometryFromObject3D(inst);
    } catch (x) {
      e = x;
    }
    expect(matrices).toBe(0);
    expect(e).toBeInstanceOf(NavBakeError);
    expect((e as NavBakeError).code).toBe('NB_ERR_TOO_LARGE');
    expect((e as NavBakeError).message).toMatch(/204020000 vertices and 400000000 triangles \(every instance counted\) need 6\.8 GB/);
    inst.count = 100; // 20 million vertices: fine
    expect(geometryFromObject3D(inst).indices.length).toBe(100 * 20000 * 3);
    expect(matrices).toBe(100);
  });

  it('filter picks meshes and area() gives per-triangle area ids', () => {
    const root = new Group();
    const floor = new Mesh(new BoxGeometry(), mat);
    floor.name = 'floor';
    const water = new Mesh(floorTriangle(), mat);
    water.name = 'water';
    const prop = new Mesh(floorTriangle(), mat);
    prop.name = 'prop';
    root.add(floor, water, prop);
    const g = geometryFromObject3D(root, {
      filter: (m) => m.name !== 'prop',
      area: (m) => (m.name === 'water' ? 5 : undefined),
    });
    expect(g.indices.length).toBe(36 + 3);
    expect(Array.from(g.areas!)).toEqual([...new Array(12).fill(63), 5]);
    expect(geometryFromObject3D(root).areas).toBeUndefined();
    expect(() => geometryFromObject3D(root, { area: () => 64 })).toThrow(NavBakeError);
    // a string is named as one (the message said "returned 5", which looked valid)
    expect(() => geometryFromObject3D(root, { area: () => '5' as unknown as number })).toThrow(/area\(\) returned "5" for mesh/);
  });

  it('an empty scene gives empty arrays; a scene bakes into a navmesh', async () => {
    const empty = geometryFromObject3D(new Object3D());
    expect([empty.positions.length, empty.indices.length]).toEqual([0, 0]);
    const floor = new Mesh(new PlaneGeometry(20, 20, 4, 4), mat);
    floor.rotation.x = -Math.PI / 2; // three.js planes face +z; laid down they face up
    const root = new Group();
    root.add(floor);
    const nav = await bake(geometryFromObject3D(root), {}, { workers: false });
    try {
      expect(nav.polygons().length).toBeGreaterThan(0);
      expect(nav.findPath([-8, 0, -8], [8, 0, 8]).status).toBe('complete');
    } finally {
      nav.dispose();
    }
  });
});

describe('NavMeshHelper and PathHelper on dungeon.obj', () => {
  let level: Level;
  let twoAreas: NavMesh;

  beforeAll(async () => {
    level = loadMesh('dungeon.obj');
    // Area 7 on the triangles west of the level's middle, the default walkable area elsewhere.
    const xs = Array.from(level.positions).filter((_, i) => i % 3 === 0);
    const mid = (Math.min(...xs) + Math.max(...xs)) / 2;
    const areas = new Uint8Array(level.indices.length / 3);
    for (let t = 0; t < areas.length; t++) {
      const cx = [0, 1, 2].reduce((s, k) => s + level.positions[level.indices[t * 3 + k] * 3], 0) / 3;
      areas[t] = cx < mid ? 7 : 63;
    }
    twoAreas = await bake({ ...level, areas }, {}, { workers: false });
  });

  it('the filled mesh has the navmesh triangles, coloured by area, one colour per area', () => {
    const surface = twoAreas.toGeometry();
    expect(new Set(surface.areas)).toEqual(new Set([7, 63]));
    const helper = new NavMeshHelper(twoAreas);
    expect(helper).toBeInstanceOf(Object3D);
    expect(helper.children).toContain(helper.mesh);
    const g = helper.mesh.geometry;
    const pos = g.getAttribute('position');
    const col = g.getAttribute('color');
    const nt = surface.indices.length / 3;
    expect(pos.count / 3).toBe(nt);
    expect(col.count).toBe(pos.count);
    const colorOf = new Map<number, string>();
    for (let t = 0; t < nt; t++) {
      for (let k = 0; k < 3; k++) {
        const v = surface.indices[t * 3 + k];
        const i = t * 3 + k;
        expect([pos.getX(i), pos.getY(i), pos.getZ(i)]).toEqual(Array.from(surface.positions.slice(v * 3, v * 3 + 3)));
      }
      const c = [col.getX(t * 3), col.getY(t * 3), col.getZ(t * 3)].join(',');
      expect([col.getX(t * 3 + 2), col.getY(t * 3 + 2), col.getZ(t * 3 + 2)].join(',')).toBe(c);
      const seen = colorOf.get(surface.areas[t]);
      if (seen === undefined) colorOf.set(surface.areas[t], c);
      else expect(seen).toBe(c);
    }
    expect(colorOf.get(7)).not.toBe(colorOf.get(63));
    const c7 = areaColor(7);
    expect(colorOf.get(7)).toBe([c7.r, c7.g, c7.b].map(Math.fround).join(',')); // stored as float32
    helper.dispose();
  });

  it('edges: every polygon side once, outer edges coloured apart from inner ones', () => {
    const helper = new NavMeshHelper(twoAreas);
    const pos = helper.edges.geometry.getAttribute('position');
    const col = helper.edges.geometry.getAttribute('color');
    const polys = twoAreas.polygons();
    const sides = polys.reduce((s, p) => s + p.vertices.length / 3, 0);
    const segments = pos.count / 2;
    // Shared sides are drawn once: more than half the sides (there are outer edges), fewer than all.
    expect(segments).toBeGreaterThan(sides / 2);
    expect(segments).toBeLessThan(sides);
    const kinds = new Set<string>();
    for (let i = 0; i < col.count; i++) kinds.add([col.getX(i), col.getY(i), col.getZ(i)].join(','));
    expect(kinds.size).toBe(2);
    // Every segment end is a polygon vertex.
    const verts = new Set<string>();
    for (const p of polys) {
      for (let i = 0; i < p.vertices.length; i += 3) verts.add(p.vertices.slice(i, i + 3).join(','));
    }
    for (let i = 0; i < pos.count; i++) expect(verts.has([pos.getX(i), pos.getY(i), pos.getZ(i)].join(','))).toBe(true);
    helper.dispose();
  });

  it('colour options override areaColor; areaColor is stable and tells ids apart', () => {
    expect(areaColor(7).equals(areaColor(7))).toBe(true);
    expect(areaColor(7).equals(areaColor(8))).toBe(false);
    expect(areaColor(63).equals(areaColor(7))).toBe(false);
    const helper = new NavMeshHelper(twoAreas, { colors: { 7: 0xff0000 } });
    const surface = twoAreas.toGeometry();
    const col = helper.mesh.geometry.getAttribute('color');
    const t7 = surface.areas.indexOf(7);
    expect([col.getX(t7 * 3), col.getY(t7 * 3), col.getZ(t7 * 3)]).toEqual([1, 0, 0]);
    helper.dispose();
  });

  it('off-mesh links: drawn in linkColor, or in brokenLinkColor when an end found no ground', async () => {
    // two 10 x 10 floors 2 apart; one jump across, one whose end hangs 5 above the second floor
    const positions = new Float32Array([0, 0, 0, 0, 0, 10, 10, 0, 10, 10, 0, 0, 12, 0, 0, 12, 0, 10, 22, 0, 10, 22, 0, 0]);
    const indices = new Uint32Array([0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7]);
    const links = [
      { start: [9.4, 0, 3], end: [12.6, 0, 3], radius: 0.6 },
      { start: [9.4, 0, 7], end: [12.6, 5, 7], radius: 0.6 },
    ];
    const nav = await bake({ positions, indices, links }, { agentRadius: 0.3 }, { workers: false });
    const helper = new NavMeshHelper(nav, { linkColor: 0x00ff00, brokenLinkColor: 0x0000ff });
    const pos = helper.edges.geometry.getAttribute('position');
    const col = helper.edges.geometry.getAttribute('color');
    const colourAt = (x: number, z: number) => {
      for (let i = 0; i < pos.count; i++) {
        if (Math.abs(pos.getX(i) - x) < 1e-4 && Math.abs(pos.getZ(i) - z) < 1e-4) return [col.getX(i), col.getY(i), col.getZ(i)];
      }
      return null;
    };
    expect(colourAt(12.6, 3)).toEqual([0, 1, 0]);
    expect(colourAt(12.6, 7)).toEqual([0, 0, 1]);
    helper.dispose();
    nav.dispose();
  });

  it('update() rebuilds (from the same or another navmesh), freeing the old buffers; dispose() frees all', async () => {
    const helper = new NavMeshHelper(twoAreas);
    const plain = await bake(level, { partition: 'monotone' }, { workers: false });
    try {
      const old = helper.mesh.geometry;
      let freed = 0;
      old.addEventListener('dispose', () => freed++);
      helper.update(plain);
      expect(freed).toBe(1);
      expect(helper.navMesh).toBe(plain);
      expect(helper.navmesh).toBe(plain); // the old spelling, an alias
      expect(helper.mesh.geometry).not.toBe(old);
      expect(helper.mesh.geometry.getAttribute('position').count).toBe(plain.toGeometry().indices.length);
      helper.update();
      expect(helper.mesh.geometry.getAttribute('position').count).toBe(plain.toGeometry().indices.length);
      let disposed = 0;
      for (const r of [helper.mesh.geometry, helper.mesh.material, helper.edges.geometry, helper.edges.material]) {
        r.addEventListener('dispose', () => disposed++);
      }
      helper.dispose();
      expect(disposed).toBe(4);
    } finally {
      plain.dispose();
    }
  });

  it('PathHelper: the line and the markers go through the path points', () => {
    let a = twoAreas.randomPoint({ seed: 3 })!;
    let path = twoAreas.findPath(a, twoAreas.randomPoint()!);
    for (let i = 0; (path.status !== 'complete' || path.points.length < 9) && i < 50; i++) {
      a = twoAreas.randomPoint()!;
      path = twoAreas.findPath(a, twoAreas.randomPoint()!);
    }
    expect(path.points.length).toBeGreaterThanOrEqual(9);
    const helper = new PathHelper(path.points);
    expect(helper.children).toEqual([helper.line, helper.points]);
    expect(Array.from(helper.line.geometry.getAttribute('position').array)).toEqual(Array.from(path.points));
    expect(Array.from(helper.points.geometry.getAttribute('position').array)).toEqual(Array.from(path.points));
    const old = helper.line.geometry;
    helper.setPath(path); // a PathResult works too
    expect(helper.line.geometry).not.toBe(old);
    helper.setPath(new Float32Array([1, 2, 3, 4, 5, 6]));
    expect(Array.from(helper.points.geometry.getAttribute('position').array)).toEqual([1, 2, 3, 4, 5, 6]);
    helper.setPath([]);
    expect(helper.line.geometry.getAttribute('position').count).toBe(0);
    expect(() => helper.setPath([1, 2])).toThrow(/3 numbers per point/);
    helper.dispose();
  });

  it('the helpers refuse option values of the wrong kind instead of drawing with them', () => {
    const bad: [() => unknown, RegExp][] = [
      [() => new NavMeshHelper(twoAreas, { opacity: 'x' as never }), /NavMeshHelper: options.opacity must be a number \(got "x"\)/],
      [() => new NavMeshHelper(twoAreas, { opacity: 2 }), /options.opacity must be within 0..1 \(got 2\)/],
      [() => new NavMeshHelper(twoAreas, { lift: NaN }), /options.lift must be finite/],
      [() => new NavMeshHelper(twoAreas, { colors: 5 as never }), /options.colors must be an object of colours by area id or a function \(got 5\)/],
      [() => new NavMeshHelper(twoAreas, { edgeColor: {} as never }), /options.edgeColor must be a colour/],
      [() => new NavMeshHelper(twoAreas, { linkColor: -1 }), /options.linkColor must be a colour/],
      [() => new NavMeshHelper(twoAreas, { colors: { 63: [1, 2] as never } }), /options.colors\[63\] must be a colour: .* \(got Array\)/],
      [() => new NavMeshHelper(twoAreas, { colors: () => null as never }), /options.colors\(63\) returned must be a colour: .* \(got null\)/],
      [() => new PathHelper([], { pointSize: 'big' as never }), /PathHelper: options.pointSize must be a number/],
      [() => new PathHelper([], { pointSize: -1 }), /options.pointSize must be within 0..Infinity/],
      [() => new PathHelper([], { lift: 'x' as never }), /PathHelper: options.lift must be a number/],
      [() => new PathHelper([], { color: true as never }), /PathHelper: options.color must be a colour/],
    ];
    for (const [make, message] of bad) expect(make, String(message)).toThrow(message);
    // the kinds that are colours
    for (const c of [0xff0000, 'red', '#00ff00', 'rgb(255, 0, 0)', 'hsl(120, 50%, 50%)', areaColor(5)]) {
      new NavMeshHelper(twoAreas, { edgeColor: c, colors: { 63: c } }).dispose();
    }
  });

  it('colour strings three.js cannot read are refused (three.js would draw another colour)', () => {
    const warn = console.warn;
    console.warn = () => undefined; // three.js's own warning about the string
    try {
      const bad: [() => unknown, RegExp][] = [
        [() => new NavMeshHelper(twoAreas, { colors: { 7: 'notacolour' } }), /options.colors\[7\]: three.js cannot read the colour "notacolour"/],
        [() => new NavMeshHelper(twoAreas, { edgeColor: 'nope' }), /options.edgeColor: three.js cannot read the colour "nope"/],
        [() => new NavMeshHelper(twoAreas, { colors: () => '#12' }), /options.colors\(63\) returned: three.js cannot read the colour "#12"/],
        [() => new PathHelper([], { color: 'bogus-colour' }), /PathHelper: options.color: three.js cannot read the colour "bogus-colour"/],
      ];
      for (const [make, message] of bad) expect(make, String(message)).toThrow(message);
    } finally {
      console.warn = warn;
    }
  });

  it('update() that throws leaves the drawing and navMesh as they were; opaque drawing writes depth', async () => {
    const plain = await bake(level, {}, { workers: false });
    try {
      const helper = new NavMeshHelper(plain, {
        colors: (a) => {
          if (a === 7) throw new Error('no colour for 7');
          return 0x00ff00;
        },
      });
      const geometry = helper.mesh.geometry;
      const edges = helper.edges.geometry;
      let freed = 0;
      geometry.addEventListener('dispose', () => freed++);
      expect(() => helper.update(twoAreas)).toThrow(/no colour for 7/);
      expect(helper.navMesh).toBe(plain);
      expect([helper.mesh.geometry, helper.edges.geometry, freed]).toEqual([geometry, edges, 0]);
      helper.dispose();
      expect(new NavMeshHelper(plain).mesh.material.depthWrite).toBe(false); // see-through: drawn after the level
      const opaque = new NavMeshHelper(plain, { opacity: 1 });
      expect([opaque.mesh.material.transparent, opaque.mesh.material.depthWrite]).toEqual([false, true]);
      opaque.dispose();
    } finally {
      plain.dispose();
    }
  });

  it('clone() and copy(): helpers of their own, placed and set up alike; scene.clone() works with them in it', () => {
    const helper = new NavMeshHelper(twoAreas, { opacity: 0.3, lift: 0.2, edgeColor: 'red' });
    helper.position.set(1, 2, 3);
    helper.name = 'nav';
    helper.add(new Object3D()); // a child of the user's
    const copy = helper.clone();
    expect(copy).toBeInstanceOf(NavMeshHelper);
    expect(copy.children.length).toBe(3);
    expect(copy.children.slice(0, 2)).toEqual([copy.mesh, copy.edges]);
    expect([copy.name, copy.position.toArray(), copy.mesh.position.y, copy.mesh.material.opacity]).toEqual(['nav', [1, 2, 3], 0.2, 0.3]);
    expect(copy.mesh.geometry).not.toBe(helper.mesh.geometry);
    expect(copy.mesh.material).not.toBe(helper.mesh.material);
    const colours = (h: NavMeshHelper) => Array.from(h.edges.geometry.getAttribute('color').array);
    expect(colours(copy)).toEqual(colours(helper));
    expect(Array.from(copy.mesh.geometry.getAttribute('position').array)).toEqual(Array.from(helper.mesh.geometry.getAttribute('position').array));
    let freed = 0;
    helper.mesh.geometry.addEventListener('dispose', () => freed++);
    copy.dispose(); // its own buffers: the original's stay
    expect(freed).toBe(0);
    const path = new PathHelper([1, 2, 3, 4, 5, 6], { color: 'lime', pointSize: 9 });
    const scene = new Group().add(helper, path);
    const cloned = scene.clone();
    const [h2, p2] = cloned.children as [NavMeshHelper, PathHelper];
    expect(h2).toBeInstanceOf(NavMeshHelper);
    expect(p2).toBeInstanceOf(PathHelper);
    expect(p2.children).toEqual([p2.line, p2.points]);
    expect(Array.from(p2.line.geometry.getAttribute('position').array)).toEqual([1, 2, 3, 4, 5, 6]);
    expect([p2.points.material.size, p2.line.material.color.getHex()]).toEqual([9, path.line.material.color.getHex()]);
    p2.setPath([7, 8, 9]); // its own path now; the original keeps its own
    expect(path.line.geometry.getAttribute('position').count).toBe(2);
    expect(() => h2.copy(new Object3D() as never)).toThrow(/NavMeshHelper.copy needs a NavMeshHelper/);
    for (const o of [helper, h2, path, p2]) o.dispose();
  });
});
