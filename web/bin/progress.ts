// A progress bar on stderr for bakes that take longer than a second, only when stderr is a terminal (a log file
// or a pipe gets nothing).
import { STAGES, type BakeProgress } from 'navbake';

export interface ProgressBar {
  onProgress(p: BakeProgress): void;
  /** Erases the bar (if it was ever drawn). */
  stop(): void;
}

// How long a bake runs before the bar appears. NAVBAKE_PROGRESS_DELAY_MS changes it (tests show the bar at once).
const DELAY_MS = Number(process.env.NAVBAKE_PROGRESS_DELAY_MS ?? 1000);
const FRAME_MS = 100;

export function progressBar(stream: NodeJS.WriteStream, label: string): ProgressBar | null {
  if (!stream.isTTY) return null;
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
