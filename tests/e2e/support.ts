// Shared by the browser tests: a static file server on 127.0.0.1 and Debian's Chromium started headless with
// the flags TOOLCHAIN.md lists (without the background-networking ones it keeps dialling out).
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
};

/** Serves dir on 127.0.0.1 (a free port), with `headers` on every response. */
export async function serve(dir: string, headers: Record<string, string> = {}): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = resolve(dir, `.${path.endsWith('/') ? `${path}index.html` : path}`);
    if (!file.startsWith(dir + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = readFileSync(file);
      res.writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('no port');
  return { server, url: `http://127.0.0.1:${addr.port}/` };
}

/** Debian's Chromium, headless, with its own profile directory. */
export function launchChromium(profile: string, viewport?: { width: number; height: number }): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    ...(viewport ? { viewport } : {}),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
