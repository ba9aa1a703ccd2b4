// Where we run. Node built-ins are imported dynamically through a variable so that bundlers building for the
// browser neither resolve nor polyfill them.

interface NodeProcess {
  versions?: { node?: string };
  execArgv?: string[];
  exit(code?: number): never;
}

export const nodeProcess: NodeProcess | undefined = (globalThis as { process?: NodeProcess }).process;

/** True in Node (and Node-like runtimes with worker_threads), false in browsers and web workers. */
export const isNode: boolean = typeof nodeProcess?.versions?.node === 'string';

/** `import(name)` that bundlers leave alone (only ever called in Node). */
export function nodeImport<T>(name: string): Promise<T> {
  return import(/* @vite-ignore */ /* webpackIgnore: true */ name) as Promise<T>;
}

let nodeThreads: number | undefined;

/** Node: reads the hardware thread count for hardwareThreads() (Node 20 has no `navigator`). Once, at init. */
export async function detectNodeThreads(): Promise<void> {
  if (!isNode || nodeThreads !== undefined) return;
  try {
    const os = await nodeImport<{ availableParallelism?: () => number; cpus(): unknown[] }>('node:os');
    nodeThreads = os.availableParallelism?.() ?? os.cpus().length;
  } catch {
    nodeThreads = 0; // no node:os (a Node-like runtime): the fallback below
  }
}

/** Hardware threads, for the default pool size (in Node 20, known once init() has run). */
export function hardwareThreads(): number {
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator;
  return nav?.hardwareConcurrency || nodeThreads || 4;
}
