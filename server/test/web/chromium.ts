/**
 * Headless Debian Chromium (/usr/bin/chromium) driven by playwright-core, for every browser test of the repository
 * (the web pages here, the SDK's browser bundle in sdk/test/packaging). No server import: a test that only needs
 * a browser loads nothing else.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const INSTALL_SCRIPT = fileURLToPath(new URL('../../../scripts/install-chromium', import.meta.url));

/** Installs Debian's Chromium when it is missing (scripts/install-chromium: apt-get, as root, ≈ 30 s). */
function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  execFileSync(INSTALL_SCRIPT, { stdio: 'inherit', timeout: 600_000 });
}

/** Headless Chromium with the flags this machine needs (its closed network refuses Chromium's background calls). */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  ensureChromium();
  // playwright-core's launch() starts Chromium with a fresh, empty --user-data-dir of its own (it refuses the flag in
  // `args`) and deletes it on close; the other flags are the ones this machine needs.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
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
  return {
    browser,
    async close() {
      await browser.close();
    },
  };
}
