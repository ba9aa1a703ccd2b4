// A progress bar on stderr for bakes that take longer than a second, only when stderr is a terminal (a log file
// or a pipe gets nothing).
import { STAGES, type BakeProgress } from 'navbake';

export interface ProgressBar {
  onProgress(p: BakeProgress): void;
  /** Erases the bar (if it was ever drawn). */
  stop(): void;
}

const FRAME_MS = 100;

/**
 * How long a bake runs before the bar appears: a second, or NAVBAKE_PROGRESS_DELAY_MS (tests show the bar at once).
 * Read only when there is a terminal to draw on. Under Deno without env access the variable is not read (reading
 * it would stop the bake at a permission prompt): the tool needs no env access to run.
 */
function delayMs(): number {
  const deno = (globalThis as { Deno?: { permissions?: { querySync?(d: object): { state: string } } } }).Deno;
  const name = 'NAVBAKE_PROGRESS_DELAY_MS';
  try {
    if (deno && deno.permissions?.querySync?.({ name: 'env', variable: name }).state !== 'granted') return 1000;
    const v = Number(process.env[name] ?? 1000);
    return Number.isFinite(v) && v >= 0 ? v : 1000;
  } catch {
    return 1000;
  }
}

export function progressBar(stream: NodeJS.WriteStream, label: string): ProgressBar | null {
  if (!stream.isTTY) return null;
  const DELAY_MS = delayMs();
  const t0 = performance.now();
  let fraction = 0;
  let what = 'starting';
  let drawn = false;
  let lastDraw = 0;
  const draw = () => {
    const now = performance.now();
    if (now - t0 < DELAY_MS) return;
    lastDraw = now;
    const text = ` ${String(Math.floor(fraction * 100)).padStart(3)}%  ${what}  ${((now - t0) / 1000).toFixed(1)} s`;
    // Room for the text kept aside, so the bar does not change width as the stage names change.
    const width = Math.max(10, Math.min(40, (stream.columns || 80) - label.length - 36));
    const full = Math.min(width, Math.round(fraction * width));
    stream.write(`\r${label} [${'#'.repeat(full)}${'-'.repeat(width - full)}]${text}\x1b[K`);
    drawn = true;
  };
  // Bakes in workers leave this thread idle: the timer keeps the clock moving between reports. A bake on the
  // main thread (a solo bake, or --workers 0) blocks timers, so reports draw too.
  const timer = setInterval(draw, FRAME_MS);
  timer.unref();
  return {
    onProgress(p) {
      const part = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
      if (p.stage === 'tiles') {
        fraction = part;
        what = `tiles ${p.done}/${p.total}`;
      } else {
        const k = Math.max(0, STAGES.indexOf(p.stage));
        fraction = (k + part) / STAGES.length;
        what = p.stage;
      }
      if (performance.now() - lastDraw >= FRAME_MS) draw();
    },
    stop() {
      clearInterval(timer);
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}
