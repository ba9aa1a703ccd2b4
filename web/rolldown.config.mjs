// Bundles the package's compiled modules (tsc output in build/web) into web/dist: one module per entry (the API,
// navbake/three) plus the chunks they share, instead of 17 small modules. Node loads each module file separately,
// about a millisecond apiece, so the bundle imports in ~4 ms instead of ~12.
// The bake worker is bundled on its own, into one self-contained file: a page whose bundler leaves it behind
// (esbuild, Rollup) or that hosts it elsewhere copies that one file and names it with init({ workerUrl }).
// `new URL('./navbake.wasm' | './bake.worker.js', import.meta.url)` stays as written: the files sit next to the
// bundle in web/dist, and a user's bundler (Vite, webpack) still finds them there.
import { defineConfig } from 'rolldown';

const common = {
  external: ['three'],
  platform: 'neutral',
};

export default defineConfig([
  {
    ...common,
    input: {
      index: 'build/web/index.js',
      three: 'build/web/three.js',
    },
    output: {
      dir: 'web/dist',
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: '[name]-[hash].js',
    },
  },
  {
    ...common,
    input: { 'bake.worker': 'build/web/bake.worker.js' },
    output: {
      dir: 'web/dist',
      format: 'esm',
      entryFileNames: '[name].js',
    },
  },
]);
