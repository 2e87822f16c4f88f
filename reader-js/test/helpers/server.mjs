// A local HTTP server (127.0.0.1, random port) serving byte buffers with Range
// support, counting what it sends.
import { createServer } from 'node:http';

/**
 * files: {'/path': Uint8Array}. opts.ranges=false ignores Range headers.
 * Returns {url(path), stats: {bytes, requests, ranges: []}, reset(), close()}.
 */
export async function serve(files, { ranges = true, extra = {} } = {}) {
  const stats = { bytes: 0, requests: 0, ranges: [] };
  const server = createServer((req, res) => {
    stats.requests++;
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (extra[path]) return extra[path](req, res);
    const body = files[path];
    if (!body) {
      res.writeHead(404, { 'Content-Length': 0 });
      return res.end();
    }
    const size = body.length;
    const m = ranges ? /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '') : null;
    const common = {
      'Accept-Ranges': 'bytes',
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Expose-Headers': 'Content-Range',
      'Content-Type': 'application/vnd.rlarchive+zip',
      'Cache-Control': 'no-store',
    };
    if (!m) {
      stats.bytes += size;
      res.writeHead(200, { ...common, 'Content-Length': size });
      return res.end(body);
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
    stats.bytes += end - start + 1;
    stats.ranges.push([start, end + 1]);
    res.writeHead(206, {
      ...common,
      'Content-Range': `bytes ${start}-${end}/${size}`,
      'Content-Length': end - start + 1,
    });
    res.end(body.subarray(start, end + 1));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: (p) => `http://127.0.0.1:${port}${p}`,
    stats,
    reset() {
      stats.bytes = 0;
      stats.requests = 0;
      stats.ranges = [];
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(resolve);
      }),
  };
}
