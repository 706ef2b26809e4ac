/**
 * Faults in idempotent creates: the Idempotency-Key ignored, scoped wrongly, compared wrongly or raced, and replays
 * marked wrongly. Each models its bug by changing what goes upstream, so the pushes really exist (or not) as the bug
 * would leave them.
 */
import { define } from '../fault.js';
import type { Exchange, Upstream } from '../proxy.js';

const KEY = 'idempotency-key';
const REPLAYED = 'idempotent-replayed';
const CREDENTIALS = ['authorization', 'x-user-email', 'x-user-token'];

function keyOf(ex: Exchange): string | undefined {
  return ex.op === 'createPush' ? ex.requestHeaders[KEY] : undefined;
}

function credentialsOf(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(CREDENTIALS.filter((n) => headers[n] !== undefined).map((n) => [n, headers[n]!]));
}

export const idempotencyFaults = define('idem', [
  {
    name: 'idempotency-key-ignored',
    models: 'the Idempotency-Key header is ignored: a retried create makes a second push',
    killers: ['IDEM-001', 'IDEM-002'],
    start: () => ({
      request(ex) {
        if (keyOf(ex) !== undefined) delete ex.requestHeaders[KEY];
      },
    }),
  },
  {
    name: 'replay-not-marked',
    models: 'a replayed create answers the first push without Idempotent-Replayed',
    killers: ['IDEM-001'],
    start: () => ({
      response(ex) {
        if (ex.op === 'createPush') delete ex.headers[REPLAYED];
      },
    }),
  },
  {
    name: 'first-create-marked-replayed',
    models: 'every create with a key is marked Idempotent-Replayed, the first one too',
    killers: ['IDEM-001'],
    start: () => ({
      response(ex) {
        if (keyOf(ex) !== undefined && ex.status === 201) ex.headers[REPLAYED] = 'true';
      },
    }),
  },
  {
    name: 'replay-answers-200',
    models: "a replayed create answers 200 instead of the first answer's 201",
    killers: ['IDEM-001'],
    start: () => ({
      response(ex) {
        if (ex.op === 'createPush' && ex.status === 201 && ex.header(REPLAYED) === 'true') ex.status = 200;
      },
    }),
  },
  {
    name: 'key-reuse-replays',
    models: 'the body is not compared: the same key with another body answers the first push as a replay',
    killers: ['IDEM-003'],
    start: () => {
      const firstBody = new Map<string, Buffer>();
      return {
        request(ex) {
          const key = keyOf(ex);
          if (key === undefined) return;
          const scoped = `${ex.identity} ${key}`;
          const first = firstBody.get(scoped);
          if (!first) firstBody.set(scoped, ex.requestBody);
          else ex.requestBody = first;
        },
      };
    },
  },
  {
    name: 'key-shared-across-callers',
    models:
      "keys are global, not the caller's: another caller's create with a used key answers the first caller's push",
    killers: ['IDEM-005'],
    start: () => {
      const firstCaller = new Map<string, Record<string, string>>();
      return {
        request(ex) {
          const key = keyOf(ex);
          if (key === undefined) return;
          const first = firstCaller.get(key);
          if (!first) firstCaller.set(key, credentialsOf(ex.requestHeaders));
          else {
            const headers = { ...ex.requestHeaders };
            for (const name of CREDENTIALS) delete headers[name];
            ex.requestHeaders = { ...headers, ...first };
          }
        },
      };
    },
  },
  {
    name: 'failed-create-keeps-key',
    models:
      'a create refused with 4xx keeps its key: the corrected body with that key answers 422 idempotency_key_reused',
    killers: ['IDEM-006'],
    start: () => {
      const refused = new Map<string, string>();
      return {
        request(ex) {
          const key = keyOf(ex);
          const body = refused.get(`${ex.identity} ${key}`);
          if (key !== undefined && body !== undefined && body !== ex.requestBody.toString('utf8')) {
            ex.fail(422, 'idempotency_key_reused', 'This Idempotency-Key was used with another request body.');
          }
        },
        response(ex) {
          const key = keyOf(ex);
          if (key !== undefined && ex.status >= 400 && ex.status < 500)
            refused.set(`${ex.identity} ${key}`, ex.requestBody.toString('utf8'));
        },
      };
    },
  },
  {
    name: 'in-flight-key-not-held',
    models: 'a key is recorded only when its create finishes: creates that overlap it each make a push',
    killers: ['IDEM-004'],
    start: () => {
      const inFlight = new Set<string>();
      const own = new WeakSet<Exchange>();
      return {
        async request(ex) {
          const key = keyOf(ex);
          if (key === undefined) return;
          const scoped = `${ex.identity} ${key}`;
          if (inFlight.has(scoped)) {
            delete ex.requestHeaders[KEY];
            return;
          }
          inFlight.add(scoped);
          own.add(ex);
          // The bug's window: the first create is slow to record its key.
          await new Promise((resolve) => setTimeout(resolve, 100));
        },
        response(ex) {
          const key = keyOf(ex);
          if (key !== undefined && own.has(ex)) inFlight.delete(`${ex.identity} ${key}`);
        },
      };
    },
  },
  {
    name: 'invalid-key-ignored',
    models: 'an Idempotency-Key that is not 1 to 255 visible ASCII characters is ignored instead of refused',
    killers: ['IDEM-007'],
    start: () => ({
      request(ex) {
        const key = keyOf(ex);
        if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) delete ex.requestHeaders[KEY];
      },
    }),
  },
  {
    name: 'keyless-creates-deduplicated',
    models: "a create without a key whose body equals the caller's previous one answers that push",
    killers: ['IDEM-008'],
    start: () => {
      const previous = new Map<string, Upstream>();
      return {
        async response(ex) {
          if (ex.op !== 'createPush' || ex.requestHeaders[KEY] !== undefined || ex.status !== 201) return;
          const scoped = `${ex.identity} ${ex.requestBody.toString('utf8')}`;
          const first = previous.get(scoped);
          if (first) ex.adopt(first);
          else previous.set(scoped, { status: ex.status, headers: { ...ex.headers }, body: ex.body });
        },
      };
    },
  },
]);
