/**
 * Headless Debian Chromium (/usr/bin/chromium) driven by playwright-core, for every browser test of the repository
 * (the web pages here, the SDK's browser bundle in sdk/test/packaging). No server import: a test that only needs
 * a browser loads nothing else.
 *
 * One browser per test worker: the first file that asks launches it, the files after it in the same worker (vitest
 * runs them there one at a time, `isolate: false` in vitest.config.ts) reuse it, and each file's handle closes only
 * the contexts (cookies, storage, pages) opened while it ran. Contexts share nothing with each other, so a file sees
 * no trace of the one before; the browser itself ends with the worker (playwright kills it on the process's exit).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { AxeResults, RunOptions } from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const INSTALL_SCRIPT = fileURLToPath(new URL('../../../scripts/install-chromium', import.meta.url));

/** Installs Debian's Chromium when it is missing (scripts/install-chromium: apt-get, as root, ≈ 30 s). */
function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  execFileSync(INSTALL_SCRIPT, { stdio: 'inherit', timeout: 600_000 });
}

/** Headless Chromium with the flags this machine needs (its closed network refuses Chromium's background calls). */
function launch(): Promise<Browser> {
  ensureChromium();
  // playwright-core's launch() starts Chromium with a fresh, empty --user-data-dir of its own (it refuses the flag in
  // `args`) and deletes it on close; the other flags are the ones this machine needs.
  return chromium.launch({
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
}

let shared: Promise<Browser> | undefined;

/** The worker's browser, launched on first use and again if it went away (a crash, a failed launch). */
async function workerBrowser(): Promise<Browser> {
  const current = await shared?.catch(() => undefined);
  if (current?.isConnected()) return current;
  shared = launch();
  return shared;
}

/**
 * The worker's headless Chromium for one test file. `close()` closes every context of the browser (the file's own:
 * the worker runs one file at a time) and leaves the browser running for the next file.
 */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await workerBrowser();
  return {
    browser,
    async close() {
      await Promise.all(browser.contexts().map((context) => context.close()));
    },
  };
}

/** One rule axe-core found broken on a page: the rule, how bad, what it asks for, and the elements (CSS selectors). */
export interface AxeViolation {
  rule: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** The WCAG 2.1 A and AA rules of axe-core (its tags), the level the pages are held to. */
const WCAG_21_AA: RunOptions = {
  runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
  resultTypes: ['violations'],
};

let axeSource: string | undefined;

/**
 * Runs axe-core (the version pinned in server/package.json) on the page as it is now and returns its WCAG 2.1 AA
 * violations. The script is injected through the DevTools protocol (`page.evaluate`), which the pages' strict
 * Content-Security-Policy does not govern, so the page is tested under its real policy.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const results = await page.evaluate(
    (options) =>
      (window as unknown as { axe: { run(context: Document, options: unknown): Promise<AxeResults> } }).axe.run(
        document,
        options,
      ),
    WCAG_21_AA,
  );
  return results.violations.map((v) => ({
    rule: v.id,
    impact: v.impact ?? null,
    help: v.help,
    nodes: v.nodes.map((n) => n.target.join(' ')),
  }));
}
