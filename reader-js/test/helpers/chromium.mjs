// Debian's chromium driven by playwright-core, launched as the browser tests
// launch it (headless, no sandbox, no network services); null where either is missing.
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.RLARCHIVE_CHROMIUM ?? '/usr/bin/chromium';
export const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** playwright-core's chromium, or why the browser tests cannot run (a string for t.skip). */
export async function chromiumOrReason() {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is not installed (apt-get install chromium)`;
  try {
    return (await import('playwright-core')).chromium;
  } catch {
    return 'playwright-core is not installed (npm ci)';
  }
}
