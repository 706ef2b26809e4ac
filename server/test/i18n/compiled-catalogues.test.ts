/**
 * The catalogues in the compiled server (server/dist, what `npm start` runs): only English is in the bundle, the others
 * are read on a language's first use from the build's copy beside it (server/src/i18n/locales.ts, scripts/build.ts).
 * A page asked for in German and in Arabic comes in that language from the compiled server; the build's copy holds
 * every catalogue, as it is in the sources.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.js';
import { MESSAGES_DIR } from '../../src/i18n/locales.js';
import { COMPILED_MAIN, startCompiledServer, type ServerProcess } from '../support/compiled-server.js';
import { createMigratedDatabase, TEST_KEY_A, type TestDatabase } from '../support/db.js';

const BUILT = path.join(path.dirname(COMPILED_MAIN), 'messages');
const catalogue = (dir: string, code: string) =>
  JSON.parse(readFileSync(path.join(dir, `${code}.json`), 'utf8')) as Record<string, string>;

let db: TestDatabase;
let server: ServerProcess;

beforeAll(async () => {
  db = await createMigratedDatabase('sp_i18n_compiled');
  const port = await freePort();
  server = await startCompiledServer({
    PORT: String(port),
    PWPUSH_PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: db.url,
    PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
    PWPUSH_WORKERS: '1',
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

it('copies every catalogue beside the bundle, as it is in the sources', () => {
  const sources = readdirSync(MESSAGES_DIR).sort();
  expect(readdirSync(BUILT).sort()).toEqual(sources);
  for (const file of sources) {
    const code = file.replace(/\.json$/, '');
    expect(catalogue(BUILT, code)).toEqual(catalogue(MESSAGES_DIR, code));
  }
});

it.each([
  ['de', 'ltr'],
  ['ar', 'rtl'],
])('serves a page in %s from the compiled server (its catalogue read on first use)', async (code, dir) => {
  const res = await fetch(`${server.baseUrl}/?locale=${code}`);
  expect(res.status).toBe(200);
  const html = await res.text();
  expect(html).toContain(`<html lang="${code}" dir="${dir}"`);
  const messages = catalogue(MESSAGES_DIR, code);
  expect(html).toContain(messages['layout.skipToContent']);
  expect(messages['layout.skipToContent']).not.toBe(catalogue(MESSAGES_DIR, 'en')['layout.skipToContent']);
});
