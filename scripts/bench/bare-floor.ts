/**
 * The bench's same-SQL floor (`BENCH_SERVERS=bare`): a bare `node:http` + `pg` server that sends PostgreSQL the
 * statements our server sends for the bench's requests (an anonymous text push, no passphrase, no Idempotency-Key),
 * with the same AES-256-GCM encryption, prepared once per connection as ours are, on a pool of the same size (10).
 * What is left between it and ours is the server's own work around the SQL.
 *
 * The same, statement for statement (push-repository.ts's BENCH_STATEMENTS: the very texts the server sends):
 * - create: one statement (insertStatement with no files, no key, counted by address): the deadline guard
 *   (`clock_timestamp() < deadline`), the anonymous storage quota (the address's `storage_windows` row for this hour,
 *   upserted on the condition that it stays within PWPUSH_ANONYMOUS_STORAGE_PER_HOUR's default, 100 MiB), the push
 *   (every column, `stored_bytes` included) and its `creation` audit entry;
 * - retrieve: one statement (viewByToken) that reads the push by url_token and, under the same guard, claims a view
 *   with a conditional UPDATE (only for a push whose payload was sealed under a key held here), audits it and, on the
 *   last view, expires the push and erases its secrets; the payload is opened after the claim.
 *
 * Not done here, and so not in the floor's figures: the contract's validation, the caller's credential and the
 * request limit, the request log line, the headers every answer carries (RateLimit fields included), the full push
 * record (this answers three fields), the row mapping, the deadline's 503, a retry on a url_token collision, and
 * every path the bench does not take (passphrases, files, owners, idempotency keys). The push's settings are fixed
 * (7 days, 5 views, as ours' defaults); ours reads them from the request and the settings.
 *
 * Run by the bench as a child process: `tsx scripts/bench/bare-floor.ts <DATABASE_URL> <port> <master key hex>`; it
 * prints `bare listening on <url>` and stops on SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { createKeyring } from '../../server/src/crypto/envelope.js';
import { newUrlToken } from '../../server/src/crypto/tokens.js';
import { deadlineFrom } from '../../server/src/db/deadlines.js';
import type { Statement } from '../../server/src/db/sql.js';
import { BENCH_STATEMENTS } from '../../server/src/push/push-repository.js';
import { addressQuota } from '../../server/src/push/storage-quota.js';
import type { PushRow } from '../../server/src/push/push-tables.js';
import {
  DEFAULT_PUSH_RULE_SETTINGS,
  newPushState,
  normalizePushInput,
  type SchemaValidPushInput,
} from '@secret-push/rules';

const [databaseUrl, port, masterKeyHex] = [process.argv[2]!, Number(process.argv[3]), process.argv[4]!];
const keyring = createKeyring([{ id: 'bench', key: Buffer.from(masterKeyHex, 'hex') }]);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
/** PWPUSH_ANONYMOUS_STORAGE_PER_HOUR's default, under which ours runs in the bench. */
const ANONYMOUS_STORAGE_PER_HOUR = 100 * 2 ** 20;
/**
 * The push's fixed settings (an anonymous text push with the defaults: 7 days, 5 views), made once by the shared rules
 * as ours makes them, so that a new push field needs nothing here (ARCHITECTURE.md, "How to add a field to a push").
 * `{ payload }` is what the contract's schema accepts.
 */
const FIXED = newPushState(
  normalizePushInput({ payload: 'x' } as SchemaValidPushInput, DEFAULT_PUSH_RULE_SETTINGS),
  { urlToken: '', ownerId: null },
  new Date(0),
);

// The repository's own statements (push-repository.ts), not copies.
const create = BENCH_STATEMENTS.create();
const { viewByToken } = BENCH_STATEMENTS;

/** Runs a statement with named values, prepared under its name on each connection (as server/src/db/sql.ts does). */
async function run(statement: Statement<object>, params: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const values = statement.names.map((name) => params[name]);
  const { rows } = await pool.query({
    text: statement.text,
    values,
    ...(statement.name ? { name: statement.name } : {}),
  });
  return rows as Record<string, unknown>[];
}

const readJson = (req: http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
    req.on('error', reject);
  });

const send = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(text);
};

const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
  const actor = {
    ip: req.socket.remoteAddress ?? '',
    userAgent: String(req.headers['user-agent'] ?? '').slice(0, 255),
    referrer: '',
    userId: null,
  };
  try {
    if (req.method === 'POST' && req.url === '/api/v2/pushes') {
      const body = (await readJson(req)) as { push?: { payload?: string } };
      const payload = body.push?.payload;
      if (typeof payload !== 'string' || payload === '')
        return send(res, 422, { error: 'payload', code: 'validation_failed' });
      const id = randomUUID();
      const now = new Date();
      const push: PushRow = {
        ...FIXED,
        id,
        workspaceId: null,
        urlToken: newUrlToken(),
        payloadCiphertext: keyring.encryptText(payload, `push:${id}:payload`),
        nameCiphertext: null,
        noteCiphertext: null,
        passphraseHash: null,
        createdAt: now,
        updatedAt: now,
        expiresAt: new Date(now.getTime() + FIXED.expireAfterSeconds * 1000),
        storedBytes: Buffer.byteLength(payload, 'utf8'),
        answersRequest: false,
      };
      const quota = addressQuota({ anonymousStoragePerHour: ANONYMOUS_STORAGE_PER_HOUR }, actor.ip, now);
      const [row] = await run(create, {
        ...push,
        ...actor,
        now,
        deadline: deadlineFrom(now.getTime()),
        quotaScope: quota.scope,
        quotaWindow: quota.windowStart,
        quotaLimit: quota.limit,
      });
      if (!row?.in_time) return send(res, 503, { error: 'too late', code: 'service_unavailable' });
      if (row.id === null) return send(res, 429, { error: 'storage quota', code: 'storage_quota_exceeded' });
      return send(res, 201, { url_token: push.urlToken, kind: 'text', expired: false });
    }
    const match = /^\/api\/v2\/pushes\/([a-z0-9_-]{1,64})$/i.exec(req.url ?? '');
    if (req.method === 'GET' && match) {
      const now = new Date();
      const [found] = await run(viewByToken, {
        urlToken: match[1],
        keyIds: keyring.keyIds,
        plaintextOnly: false,
        ...actor,
        now,
        deadline: deadlineFrom(now.getTime()),
      });
      if (!found?.in_time) return send(res, 503, { error: 'too late', code: 'service_unavailable' });
      if (found.id === null) return send(res, 404, { error: 'not found', code: 'not_found' });
      const claimed = found.won_views_used !== null;
      const ciphertext = found.payload_ciphertext as string | null;
      const payload =
        claimed && ciphertext ? keyring.decryptText(ciphertext, `push:${String(found.id)}:payload`) : null;
      return send(res, 200, { url_token: match[1], payload, expired: !claimed });
    }
    send(res, 404, { error: 'no route', code: 'no_route' });
  } catch {
    if (!res.headersSent) send(res, 500, { error: 'internal', code: 'internal_error' });
  }
};
// node:http ignores the promise a handler returns: a failure that escapes the handler closes the connection.
const server = http.createServer((req, res) => {
  handle(req, res).catch((error: unknown) => res.destroy(error instanceof Error ? error : undefined));
});
server.keepAliveTimeout = 5_000;
server.listen(port, '127.0.0.1', () => console.log(`bare listening on http://127.0.0.1:${port}`));
const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
