// The command line: subcommands, their options, and the config flags. The config flags come from the package's
// DEFAULTS (the C config table, in its order), so a field added in C is a flag here without a change.
import { DEFAULTS, type NavBakeConfig } from 'navbake';
import { InputError } from './errors.js';

export type Vec3 = [number, number, number];

export interface Options {
  command: string;
  /** the input: a mesh (.obj, .gltf, .glb) or a .navbake file */
  file: string;
  /** -o: the .navbake (bake) or .svg (render) to write */
  out?: string;
  /** only the fields given on the command line */
  config: NavBakeConfig;
  from?: Vec3;
  to?: Vec3;
  pairs?: number;
  /** --seed, when given (the random pairs use 1 otherwise) */
  seed?: bigint;
  pairsFile?: string;
  json: boolean;
  /** bake workers; false = on the main thread (--workers 0); undefined = the tool's default (solo: the main thread) */
  workers?: number | false;
}

type Key = 'out' | 'from' | 'to' | 'pairs' | 'seed' | 'pairsFile' | 'json' | 'workers' | 'config';

interface Command {
  usage: string;
  accepts: readonly Key[];
}

export const COMMANDS: Readonly<Record<string, Command>> = {
  bake: { usage: 'bake MESH [-o OUT.navbake] [config flags] [--workers N] [--json]', accepts: ['out', 'config', 'workers', 'json'] },
  info: { usage: 'info FILE [config flags] [--json]', accepts: ['config', 'workers', 'json'] },
  path: {
    usage: 'path FILE --from x,y,z --to x,y,z [config flags] [--json]',
    accepts: ['from', 'to', 'config', 'workers', 'json'],
  },
  query: {
    usage: 'query FILE (--pairs N [--seed S] | --pairs-file F) [config flags] [--json]',
    accepts: ['pairs', 'seed', 'pairsFile', 'config', 'workers', 'json'],
  },
  render: {
    usage: 'render FILE -o OUT.svg [--from x,y,z --to x,y,z] [config flags] [--json]',
    accepts: ['out', 'from', 'to', 'config', 'workers', 'json'],
  },
};

interface OptionSpec {
  key: Exclude<Key, 'config'>;
  /** placeholder of the value; none = a switch */
  value?: string;
  help: string;
}

const OPTIONS: Readonly<Record<string, OptionSpec>> = {
  '-o': { key: 'out', value: 'FILE', help: '(bake) the .navbake to write; (render) the .svg to write' },
  '--save': { key: 'out', value: 'FILE', help: '(bake) the same as -o (the native tool\'s name)' },
  '--from': { key: 'from', value: 'x,y,z', help: '(path, render) start point' },
  '--to': { key: 'to', value: 'x,y,z', help: '(path, render) end point' },
  '--pairs': { key: 'pairs', value: 'N', help: '(query) N random start/end pairs on the navmesh' },
  '--seed': { key: 'seed', value: 'S', help: '(query) seed of the random pairs (default 1)' },
  '--pairs-file': {
    key: 'pairsFile',
    value: 'F',
    help: '(query) pairs to answer: lines of six numbers, start xyz end xyz (blank lines and # comments skipped)',
  },
  '--workers': { key: 'workers', value: 'N', help: 'bake in N worker threads; 0 = on the main thread (default: solo bakes there, tiled ones in workers)' },
  '--json': { key: 'json', help: 'print one JSON object' },
};

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** '--cell-size' -> 'cellSize', one per config field. */
export const CONFIG_FLAGS: ReadonlyMap<string, keyof NavBakeConfig> = new Map(
  (Object.keys(DEFAULTS) as (keyof NavBakeConfig)[]).map((k) => [`--${kebab(k)}`, k]),
);

/** The flag of a config field, by its camelCase or C (snake_case) name; undefined when there is none. */
export function flagOfField(name: string): string | undefined {
  const camel = name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  const flag = `--${kebab(camel)}`;
  return CONFIG_FLAGS.has(flag) ? flag : undefined;
}

export function usage(): string {
  const lines = Object.values(COMMANDS).map((c, i) => `${i ? '       ' : 'usage: '}navbake ${c.usage}`);
  lines.push(
    '       navbake --version',
    'MESH is an .obj, .gltf or .glb file; FILE is a .navbake file or a mesh, baked first with the config flags.',
    'config flags (world units unless noted; omitted = default):',
  );
  for (const [flag, key] of CONFIG_FLAGS) {
    const d = DEFAULTS[key];
    const text = typeof d === 'string' ? `watershed|monotone|layers|wavefront (default ${d})` : `default ${d}`;
    lines.push(`  ${`${flag} ${typeof d === 'string' ? 'NAME' : 'N'}`.padEnd(30)} ${text}`);
  }
  lines.push('other options:');
  for (const [flag, o] of Object.entries(OPTIONS)) {
    lines.push(`  ${`${flag}${o.value ? ` ${o.value}` : ''}`.padEnd(30)} ${o.help}`);
  }
  lines.push('exit codes: 0 ok, 1 the bake or query failed, 2 bad arguments or files');
  return lines.join('\n') + '\n';
}

/** A decimal number ('1.5', '-2', '.5', '1e3'), as the native tool reads numbers: not '0x10', '0b11' or '0o7'. */
export const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Blanks as C's isspace sees them (not a no-break space): around numbers, and between them in a pairs file. */
export const trimC = (s: string): string => s.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '');

function parseNumber(flag: string, v: string): number {
  const x = Number(v);
  if (!DECIMAL.test(trimC(v)) || !Number.isFinite(x)) throw new InputError(`${flag} needs a number (got '${v}')`);
  return x;
}

/** Digits only, as the native tool takes them: not '5x', '1e2', '1.5' or '-1'. */
function parseInteger(flag: string, v: string, min: number, max: number): number {
  const x = Number(v);
  if (!/^\d+$/.test(v) || x < min || x > max) throw new InputError(`${flag} must be ${min}..${max} (got '${v}')`);
  return x;
}

function parseVec3(flag: string, v: string): Vec3 {
  const parts = v.split(',');
  const xyz = parts.map((p) => Number(p));
  if (parts.length !== 3 || parts.some((p) => !DECIMAL.test(trimC(p))) || !xyz.every(Number.isFinite)) {
    throw new InputError(`${flag} needs x,y,z (got '${v}')`);
  }
  const big = xyz.findIndex((x) => !Number.isFinite(Math.fround(x)));
  if (big >= 0) throw new InputError(`${flag}: ${'xyz'[big]} = ${parts[big].trim()} is beyond float32's range (3.4e38)`);
  return xyz as Vec3;
}

/** argv without node and the script. Throws InputError for anything it cannot use. */
export function parseArgs(argv: readonly string[]): Options {
  const [command, ...rest] = argv;
  const cmd = COMMANDS[command];
  if (!cmd || !Object.hasOwn(COMMANDS, command)) throw new InputError(`unknown command '${command}' (see navbake --help)`);
  const o: Options = { command, file: '', config: {}, json: false };
  const config = o.config as Record<string, unknown>;
  let outFlag = '';
  for (let i = 0; i < rest.length; i++) {
    let flag = rest[i];
    let inline: string | undefined;
    const eq = flag.indexOf('=');
    if (flag.startsWith('--') && eq > 0) {
      inline = flag.slice(eq + 1);
      flag = flag.slice(0, eq);
    }
    const value = (): string => {
      if (inline !== undefined) return inline;
      if (i + 1 >= rest.length) throw new InputError(`${flag} needs a value`);
      return rest[++i];
    };
    const field = CONFIG_FLAGS.get(flag);
    const spec = Object.hasOwn(OPTIONS, flag) ? OPTIONS[flag] : undefined;
    if (!field && !spec) {
      if (flag.startsWith('-') && flag.length > 1) throw new InputError(`unknown option ${flag} (see navbake --help)`);
      if (o.file) throw new InputError(`unexpected argument '${flag}' (one input file only)`);
      o.file = flag;
      continue;
    }
    const key = field ? 'config' : spec!.key;
    if (!cmd.accepts.includes(key)) throw new InputError(`${flag} is not an option of '${command}' (see navbake --help)`);
    if (field) {
      const v = value();
      // The partition's name is checked by the package (its message lists the choices).
      config[field] = typeof DEFAULTS[field] === 'string' ? v : parseNumber(flag, v);
      continue;
    }
    switch (spec!.key) {
      case 'out':
        if (o.out !== undefined && outFlag !== flag) throw new InputError(`${outFlag} and ${flag} both name the file to write: give one`);
        outFlag = flag;
        o.out = value();
        break;
      case 'from':
        o.from = parseVec3(flag, value());
        break;
      case 'to':
        o.to = parseVec3(flag, value());
        break;
      case 'pairs':
        o.pairs = parseInteger(flag, value(), 1, 10_000_000);
        break;
      case 'seed': {
        const v = value();
        if (!/^\d+$/.test(v) || BigInt(v) >= 1n << 64n) throw new InputError(`${flag} must be an integer 0..2^64-1 (got '${v}')`);
        o.seed = BigInt(v);
        break;
      }
      case 'pairsFile':
        o.pairsFile = value();
        break;
      case 'workers': {
        const n = parseInteger(flag, value(), 0, 64); // the package takes 1..64 workers
        o.workers = n === 0 ? false : n;
        break;
      }
      case 'json':
        if (inline !== undefined) throw new InputError(`${flag} takes no value`);
        o.json = true;
        break;
    }
  }
  if (!o.file) throw new InputError(`${command} needs a ${command === 'bake' ? 'mesh file' : 'file'} (usage: navbake ${cmd.usage})`);
  // Nothing given is left unused (the native tool refuses the same).
  if (o.pairsFile !== undefined && o.pairs !== undefined) throw new InputError('query takes --pairs N or --pairs-file F, not both');
  if (o.pairsFile !== undefined && o.seed !== undefined) {
    throw new InputError('--seed goes with --pairs N (the random pairs), not --pairs-file');
  }
  return o;
}
