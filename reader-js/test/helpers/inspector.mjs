// The web inspector (web/) in Debian's chromium driven by playwright-core, as
// the inspector tests run it: a local server with the page, the reader's
// modules and the test's files; a fresh profile; a page that records its
// errors, console errors and any request outside the server; and archives
// the Python tools write (a Stable-Baselines3 model trained here).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './server.mjs';
import { staticHandlers } from './static.mjs';
import { CHROMIUM, ARGS, chromiumOrReason } from './chromium.mjs';

const PYTHON = fileURLToPath(new URL('../../../.venv/bin/python', import.meta.url));
const PYTHONPATH = fileURLToPath(new URL('../../../python', import.meta.url));

/**
 * Starts the server and the browser with the inspector's files, or says why it cannot (a string for t.skip).
 * @param {{[path: string]: Uint8Array}} files served as they are (Range requests answered); files added to it later are served too
 * @param {{extra?: object, viewport?: {width: number, height: number}}} [options] `extra`: more request handlers
 * @returns {Promise<string|{page: import('playwright-core').Page, context: object, srv: object, problems: string[], url: (path: string) => string, close: () => Promise<void>}>}
 */
export async function startInspector(files, { extra = {}, viewport } = {}) {
  const chromium = await chromiumOrReason();
  if (typeof chromium === 'string') return chromium;
  const handlers = {
    ...staticHandlers(new URL('../../web/', import.meta.url), '/web'),
    ...staticHandlers(new URL('../../src/', import.meta.url), '/src'),
    ...extra,
  };
  const srv = await serve(files, { extra: handlers });
  const origin = new URL(srv.url('/')).origin;
  const profile = mkdtempSync(join(tmpdir(), 'rla-inspector-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      ...(viewport ? { viewport } : {}),
    });
  } catch (e) {
    await srv.close();
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on(
    'request',
    (r) => !r.url().startsWith(origin) && problems.push(`request outside the test server: ${r.url()}`),
  );
  return {
    page,
    context,
    srv,
    problems,
    url: (path) => srv.url(path),
    async close() {
      await context.close();
      await srv.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Runs a Python program with the repository's package and virtual environment
 * (`sys.argv[1]` is a fresh directory), then reads the files it wrote there;
 * or says why it cannot (a string). Asynchronous, so that the browser can
 * start meanwhile.
 * @param {string} program Python source
 * @param {string[]} outputs names of the files to read from the directory
 * @returns {Promise<{[name: string]: Buffer}|string>}
 */
export async function pythonFiles(program, outputs) {
  if (!existsSync(PYTHON)) return 'the Python virtual environment is not there';
  const dir = mkdtempSync(join(tmpdir(), 'rla-inspector-py-'));
  try {
    const env = { ...process.env, PYTHONPATH, SOURCE_DATE_EPOCH: '1764000000' };
    const { status, stderr } = await new Promise((resolve, reject) => {
      const child = spawn(PYTHON, ['-c', program, dir], { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ status: code, stderr: err }));
    });
    const missing = /No module named '(stable_baselines3|gymnasium|torch)'/.exec(stderr);
    if (status !== 0 && missing) return `${missing[1]} is not installed`;
    if (status !== 0) throw new Error(`the Python program failed: ${stderr}`);
    return Object.fromEntries(outputs.map((name) => [name, readFileSync(join(dir, name))]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
