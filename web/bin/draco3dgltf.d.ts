// draco3dgltf ships no types. Its two module factories, as handed to @gltf-transform ('draco3d.decoder' to read
// Draco-compressed glTF; the tests use 'draco3d.encoder' to write some).
declare module 'draco3dgltf' {
  const draco3d: {
    createDecoderModule(options?: object): Promise<unknown>;
    createEncoderModule(options?: object): Promise<unknown>;
  };
  export default draco3d;
}
