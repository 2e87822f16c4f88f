// A local HTTP server (127.0.0.1, random port) serving byte buffers with Range
// support, counting what it sends.
import { createServer } from 'node:http';

const CHUNK = 65536;

/**
 * Sends `bytes` as the body of `res` in chunks, each counted in `stats.bytes`
 * before it is written; a client that stops reading is sent no more than one
 * chunk past what it took, plus what the connection buffers.
 */
async function send(res, bytes, stats) {
  for (let at = 0; at < bytes.length && !res.destroyed; at += CHUNK) {
    const part = bytes.subarray(at, at + CHUNK);
    stats.bytes += part.length;
    if (!res.write(part))
      await new Promise((resolve) => {
        const go = () => {
          res.off('drain', go);
          res.off('close', go);
          resolve();
        };
        res.on('drain', go);
        res.on('close', go);
      });
  }
  res.end();
}

/**
 * files: {'/path': Uint8Array}. opts.ranges=false ignores Range headers;
 * opts.suffix=false ignores suffix ranges (`bytes=-n`) only, as a server that
 * does not take them (it answers with the whole file).
 * Returns {url(path), stats: {bytes, requests, ranges: [], asked: []}, reset(),
 * close()}: `ranges` the ranges sent, [start, end); `asked` each request's
 * method and Range header ('GET bytes=-10', 'HEAD'). Setting `etag` on the
 * returned object makes every later answer name that version of the files.
 */
export async function serve(files, { ranges = true, suffix = true, extra = {} } = {}) {
  const stats = { bytes: 0, requests: 0, ranges: [], asked: [] };
  const api = { etag: null };
  const server = createServer((req, res) => {
    stats.requests++;
    stats.asked.push(`${req.method} ${req.headers.range ?? ''}`.trim());
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (extra[path]) return extra[path](req, res);
    const body = files[path];
    if (!body) {
      res.writeHead(404, { 'Content-Length': 0 });
      return res.end();
    }
    const size = body.length;
    let m = ranges ? /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '') : null;
    if (m && m[1] === '' && !suffix) m = null;
    const common = {
      'Accept-Ranges': 'bytes',
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'Content-Range, ETag',
      'Content-Type': 'application/vnd.rlarchive+zip',
      'Cache-Control': 'no-store',
      ...(api.etag ? { ETag: api.etag } : {}),
    };
    if (!m) {
      res.writeHead(200, { ...common, 'Content-Length': size });
      return send(res, body, stats);
    }
    let start, end;
    if (m[1] === '') {
      start = Math.max(0, size - Number(m[2]));
      end = size - 1;
    } else {
      start = Number(m[1]);
      end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
    }
    if (start >= size || start > end) {
      res.writeHead(416, { ...common, 'Content-Range': `bytes */${size}`, 'Content-Length': 0 });
      return res.end();
    }
    stats.ranges.push([start, end + 1]);
    res.writeHead(206, {
      ...common,
      'Content-Range': `bytes ${start}-${end}/${size}`,
      'Content-Length': end - start + 1,
    });
    return send(res, body.subarray(start, end + 1), stats);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  Object.assign(api, {
    url: (p) => `http://127.0.0.1:${port}${p}`,
    stats,
    reset() {
      stats.bytes = 0;
      stats.requests = 0;
      stats.ranges = [];
      stats.asked = [];
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(resolve);
      }),
  });
  return api;
}
