// HTTP servers on 127.0.0.1 that misbehave, for the deadline tests of URL
// sources (spec §11.4). Every answer is written from a bounded loop; close()
// (or, at the latest, LIFETIME_MS) ends every connection.
import { createServer } from 'node:net';

const LIFETIME_MS = 120_000;

/**
 * The bytes of an answer to a GET of `body` honouring one Range (`bytes=a-b`,
 * `bytes=a-`, `bytes=-n`); the Content-Length claims `extra` bytes more.
 */
function answer(body, request, extra, ranges) {
  const range = ranges ? /^range:\s*bytes=(\d*)-(\d*)\s*$/im.exec(request) : null;
  const size = body.length;
  let status = '200 OK',
    part = body,
    more = '';
  const suffix = range && range[1] === '' && range[2] !== '';
  if (range && (suffix || (range[1] !== '' && Number(range[1]) < size))) {
    const start = suffix ? Math.max(0, size - Number(range[2])) : Number(range[1]);
    const end = suffix || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
    part = body.subarray(start, end + 1);
    status = '206 Partial Content';
    more = `Content-Range: bytes ${start}-${end}/${size}\r\n`;
  }
  const head =
    `HTTP/1.1 ${status}\r\nContent-Length: ${part.length + extra}\r\nAccept-Ranges: bytes\r\n${more}` +
    'Access-Control-Allow-Origin: *\r\nAccess-Control-Expose-Headers: Content-Range\r\nConnection: close\r\n\r\n';
  return { head: Buffer.from(head, 'latin1'), part: Buffer.from(part.buffer, part.byteOffset, part.length) };
}

/**
 * A server of `body`. Options: `drip` ('none': each answer at once; 'all':
 * every answer, headers too, `chunk` bytes every `interval` ms; 'body': the
 * headers at once, the body that way); `extra`: the Content-Length claims that
 * many bytes more than are sent, after which the server stalls (`stall`) or
 * closes; `ranges: false` ignores Range headers (the whole body, status 200).
 * Returns {url, close()}.
 */
export async function misbehavingServer(
  body,
  { drip = 'none', interval = 500, chunk = 1, extra = 0, stall = true, ranges = true } = {},
) {
  const sockets = new Set();
  const timers = new Set();
  const later = (fn, ms) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let request = '';
    socket.on('data', (d) => {
      if (request.includes('\r\n\r\n')) return;
      request += d.toString('latin1');
      if (!request.includes('\r\n\r\n')) return;
      const { head, part } = answer(body, request, extra, ranges);
      const out = Buffer.concat([head, request.startsWith('HEAD') ? Buffer.alloc(0) : part]);
      let at = drip === 'all' ? 0 : drip === 'body' ? head.length : out.length;
      socket.write(out.subarray(0, at));
      const end = () => {
        if (extra && stall) return; // keep the connection open, silent
        socket.end();
      };
      const step = () => {
        if (socket.destroyed) return;
        if (at >= out.length) return end();
        socket.write(out.subarray(at, at + chunk));
        at += chunk;
        later(step, interval);
      };
      if (at >= out.length) end();
      else later(step, interval);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise((resolve) => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      clearTimeout(lifetime);
      server.close(() => resolve());
    });
  const lifetime = setTimeout(close, LIFETIME_MS);
  lifetime.unref();
  return { url: `http://127.0.0.1:${server.address().port}/a.rlarchive`, close };
}
