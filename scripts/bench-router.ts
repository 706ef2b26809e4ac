/**
 * What routing one request costs, for the decision in ARCHITECTURE.md ("One router"): openapi-backend's own
 * `router.matchOperation` against the project's route table (`contract().routes.match`), over the same corpus of
 * requests to both contracts (every operation, a trailing slash, an encoded token, wrong methods, unknown paths).
 * Each is timed with `process.hrtime.bigint` over the whole corpus, several rounds taking turns (the best round of
 * each is reported: a shared machine only ever adds time).
 *
 *   npx tsx --conditions=@secret-push/source scripts/bench-router.ts
 *
 * Options (env): BENCH_ROUTER_ROUNDS (default 7), BENCH_ROUTER_REPEAT (corpus passes per round, default 200).
 */
import { bundledDocument, bundledV1Document, contract, contractV1 } from '@secret-push/contract';
import { createSpecBackend } from '../server/src/http/openapi-backend.js';

const ROUNDS = Number(process.env.BENCH_ROUTER_ROUNDS ?? 7);
const REPEAT = Number(process.env.BENCH_ROUTER_REPEAT ?? 200);
const TOKEN = 'k7mz4qv2xw5nrt3hbj6ypa2c';

const v2 = [
  ['GET', '/api/v2/version'],
  ['POST', '/api/v2/pushes'],
  ['GET', '/api/v2/pushes/active'],
  ['GET', '/api/v2/pushes/expired/'],
  ['GET', `/api/v2/pushes/${TOKEN}`],
  ['GET', '/api/v2/pushes/caf%C3%A9%20x'],
  ['DELETE', `/api/v2/pushes/${TOKEN}`],
  ['GET', `/api/v2/pushes/${TOKEN}/preview`],
  ['GET', `/api/v2/pushes/${TOKEN}/audit`],
  ['GET', `/api/v2/pushes/${TOKEN}/files/f1`],
  ['PUT', `/api/v2/pushes/${TOKEN}`],
  ['GET', '/api/v2/nothing'],
] as const;
const v1 = [
  ['GET', '/api/v1/version.json'],
  ['POST', '/p.json'],
  ['GET', '/p/active.json'],
  ['GET', `/p/${TOKEN}.json`],
  ['DELETE', `/f/${TOKEN}.json`],
  ['GET', `/r/${TOKEN}/preview.json`],
  ['GET', `/p/${TOKEN}/audit.json`],
  ['PUT', '/p.json'],
  ['GET', '/x/nothing.json'],
] as const;

const [backend2, backend1] = await Promise.all([
  createSpecBackend({ definition: bundledDocument() as never }),
  createSpecBackend({ definition: bundledV1Document() as never }),
]);
const requests = [
  ...v2.map(([method, path]) => ({ method, path, backend: backend2, routes: contract().routes })),
  ...v1.map(([method, path]) => ({ method, path, backend: backend1, routes: contractV1().routes })),
];

let sink = 0;
const candidates = {
  'openapi-backend router.matchOperation': () => {
    for (const r of requests)
      sink += r.backend.router.matchOperation({ method: r.method, path: r.path, headers: {}, query: {} }) ? 1 : 0;
  },
  'route table (contract().routes.match)': () => {
    for (const r of requests) sink += r.routes.match(r.method, r.path).kind === 'ok' ? 1 : 0;
  },
};

const best = new Map<string, number>();
for (let round = 0; round <= ROUNDS; round += 1) {
  for (const [name, run] of Object.entries(candidates)) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < REPEAT; i += 1) run();
    const ns = Number(process.hrtime.bigint() - start) / (REPEAT * requests.length);
    if (round > 0) best.set(name, Math.min(best.get(name) ?? Infinity, ns)); // round 0 warms up
  }
}
console.log(`${requests.length} requests × ${REPEAT} passes × ${ROUNDS} rounds (best round), node ${process.version}`);
for (const [name, ns] of best) console.log(`${name.padEnd(42)} ${(ns / 1000).toFixed(3).padStart(9)} µs per request`);
const [library, table] = [...best.values()];
console.log(`ratio: ${(library! / table!).toFixed(0)}×  (checksum ${sink})`);
