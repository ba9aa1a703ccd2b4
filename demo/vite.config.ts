// Vite config of the demo (root: demo/). The demo imports the package by its name, as users do; the names point
// at the built package in web/dist (`make web`), which is what npm ships: the bake worker and the wasm are found
// through `new URL(..., import.meta.url)` there, unchanged. (web/src cannot be used directly: its worker URL
// names the compiled bake.worker.js.) The project's Vitest config is separate (../vitest.config.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('.'),
  // Relative asset URLs: the built demo works from any folder it is served from.
  base: './',
  // The generated worlds (world-N.bin, written by the Makefile with the native tool), copied next to index.html.
  publicDir: here('../build/demo-public'),
  resolve: {
    alias: [
      { find: /^navbake$/, replacement: here('../web/dist/index.js') },
      { find: /^navbake\/three$/, replacement: here('../web/dist/three.js') },
    ],
  },
  // Pre-bundled when the dev server starts, so the first page load never triggers a re-optimise and reload.
  optimizeDeps: {
    include: [
      'three',
      'lil-gui',
      'three/examples/jsm/controls/OrbitControls.js',
      'three/examples/jsm/loaders/GLTFLoader.js',
      'three/examples/jsm/loaders/OBJLoader.js',
      // imported only when a compressed glTF is dropped
      'three/examples/jsm/loaders/DRACOLoader.js',
      'three/examples/jsm/libs/meshopt_decoder.module.js',
    ],
  },
  server: { host: '127.0.0.1', port: 5173, fs: { allow: [here('..')] } },
  preview: { host: '127.0.0.1', port: 4173 },
  worker: { format: 'es' },
  build: {
    outDir: here('../build/demo'),
    emptyOutDir: true,
    target: 'es2022',
    // The wasm must stay a file next to the worker, never a base64 string.
    assetsInlineLimit: (file: string) => (file.endsWith('.wasm') ? false : undefined),
    chunkSizeWarningLimit: 1500,
  },
});
