/**
 * The bench's same-SQL floor (`BENCH_SERVERS=bare`): a bare `node:http` + `pg` server that runs our SQL with the same
 * encryption, on a pool of the same size (10).
 *
 * Run by the bench as a child process: `tsx scripts/bench/bare-floor.ts <DATABASE_URL> <port> <master key hex>`; it
 * prints `bare listening on <url>` and stops on SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

async function runBare(databaseUrl: string, port: number, masterKeyHex: string): Promise<void> {
  const { createKeyring } = await import('@secret-push/server');
  const { newUrlToken } = await import('@secret-push/server');
  const keyring = createKeyring([{ id: 'bench', key: Buffer.from(masterKeyHex, 'hex') }]);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });

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

  const server = http.createServer(async (req, res) => {
    const ip = req.socket.remoteAddress ?? '';
    const ua = String(req.headers['user-agent'] ?? '');
    try {
      if (req.method === 'POST' && req.url === '/api/v2/pushes') {
        const body = (await readJson(req)) as { push?: { payload?: string } };
        const payload = body.push?.payload;
        if (typeof payload !== 'string' || payload === '') return send(res, 422, { error: 'payload', code: 'validation_failed' });
        const id = randomUUID();
        const now = new Date();
        // The same statement as PushService.create: the push and its creation audit entry at once.
        const { rows } = await pool.query({
          name: 'bare_create',
          text: `with push as (
             insert into pushes (id, url_token, kind, user_id, payload_ciphertext, name_ciphertext, note_ciphertext,
               passphrase_hash, passphrase_protected, expire_after_days, expire_after_views, views_used,
               deletable_by_viewer, retrieval_step, expired, expired_on, deleted, created_at, updated_at, expires_at, stored_bytes)
             values ($1, $2, 'text', null, $3, null, null, null, false, 7, 5, 0, true, false, false, null, false, $4, $4, $5, $8)
             returning *
           ), creation as (
             insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
             select id, 'creation', $6, $7, '', null, $4 from push
           )
           select * from push`,
          values: [id, newUrlToken(), keyring.encryptText(payload, `push:${id}:payload`), now, new Date(now.getTime() + 7 * 86_400_000), ip, ua, Buffer.byteLength(payload)],
        });
        const row = rows[0] as { url_token: string };
        return send(res, 201, { url_token: row.url_token, kind: 'text', expired: false });
      }
      const match = /^\/api\/v2\/pushes\/([a-z0-9_-]{1,64})$/.exec(req.url ?? '');
      if (req.method === 'GET' && match) {
        const now = new Date();
        const found = await pool.query({ name: 'bare_find', text: 'select * from pushes where url_token = $1', values: [match[1]] });
        const row = found.rows[0] as { id: string; payload_ciphertext: string | null } | undefined;
        if (!row) return send(res, 404, { error: 'not found', code: 'not_found' });
        // Decrypt, then claim with the same statement as PushService.retrieve (claim, audit, last-view expiry).
        const payload = row.payload_ciphertext ? keyring.decryptText(row.payload_ciphertext, `push:${row.id}:payload`) : '';
        const { rows } = await pool.query({
          name: 'bare_claim',
          text: `with won as (
             update pushes set views_used = views_used + 1, updated_at = $1,
               expired = views_used + 1 >= expire_after_views,
               expired_on = case when views_used + 1 >= expire_after_views then $1 else expired_on end,
               payload_ciphertext = case when views_used + 1 >= expire_after_views then null else payload_ciphertext end,
               note_ciphertext = case when views_used + 1 >= expire_after_views then null else note_ciphertext end,
               passphrase_hash = case when views_used + 1 >= expire_after_views then null else passphrase_hash end
             where id = $2 and not expired and views_used < expire_after_views and expires_at > $1
             returning *
           ), viewed as (
             insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
             select id, 'view', $3, $4, '', null, $1 from won
           )
           select * from won`,
          values: [now, row.id, ip, ua],
        });
        const won = rows[0] as { id: string } | undefined;
        return send(res, 200, { url_token: match[1], payload: won ? payload : null, expired: !won });
      }
      send(res, 404, { error: 'no route', code: 'no_route' });
    } catch {
      if (!res.headersSent) send(res, 500, { error: 'internal', code: 'internal_error' });
    }
  });
  server.keepAliveTimeout = 5_000;
  server.listen(port, '127.0.0.1', () => console.log(`bare listening on http://127.0.0.1:${port}`));
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

await runBare(process.argv[2]!, Number(process.argv[3]), process.argv[4]!);
