// Request handlers serving a directory's files with their content types (for
// helpers/server.mjs `extra`), so that a browser can load ES modules from it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, extname } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
};

function walk(dir, rel = '') {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p, `${rel}/${name}`));
    else out.push([`${rel}/${name}`, p]);
  }
  return out;
}

/**
 * {'/prefix/file': handler} for every file under `dir` (a file: URL or path);
 * `/prefix/` answers with `/prefix/index.html` when there is one.
 */
export function staticHandlers(dir, prefix) {
  const root = dir instanceof URL ? fileURLToPath(dir) : dir;
  const handlers = {};
  for (const [rel, path] of walk(root)) {
    const body = readFileSync(path);
    const type = TYPES[extname(path)] ?? 'application/octet-stream';
    handlers[`${prefix}${rel}`] = (req, res) => {
      res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length, 'Cache-Control': 'max-age=600' });
      res.end(body);
    };
  }
  if (handlers[`${prefix}/index.html`]) handlers[`${prefix}/`] = handlers[`${prefix}/index.html`];
  return handlers;
}
