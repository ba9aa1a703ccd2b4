// Bundles the package's compiled modules (tsc output in build/web) into web/dist: one module per entry (the API,
// navbake/three, the bake worker) plus the chunks they share, instead of 17 small modules. Node loads each module
// file separately, about a millisecond apiece, so the bundle imports in ~4 ms instead of ~12.
// `new URL('./navbake.wasm' | './bake.worker.js', import.meta.url)` stays as written: the files sit next to the
// bundle in web/dist, and a user's bundler (Vite, webpack) still finds them there.
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: {
    index: 'build/web/index.js',
    three: 'build/web/three.js',
    'bake.worker': 'build/web/bake.worker.js',
  },
  external: ['three'],
  platform: 'neutral',
  output: {
    dir: 'web/dist',
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
  },
});
