// The command line's own failures. Bad arguments and unreadable input files exit with 2 (like the native tool);
// a bake or query that fails inside the library exits with 1 (see navbake.ts).

/** Something the user gave us is wrong: a flag, a value, a file. The message names it. Exit code 2. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputError';
  }
}

/** "no such file" rather than "ENOENT: no such file or directory, open '...'" (the caller names the file). */
export function describeFsError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  switch (err?.code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a parent is not a directory';
    default:
      // "ENOSPC: no space left on device, write" -> "no space left on device" (the native tool's words)
      return err?.code ? (err.message ?? String(e)).replace(/^E[A-Z]+: /, '').replace(/, \w+( '.*')?$/, '') : (err?.message ?? String(e));
  }
}
