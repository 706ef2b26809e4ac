/**
 * The bench's physical floor (`BENCH_SERVERS=physical`): what this machine does at all. A bare `node:http` + `pg`
 * server, one INSERT per create and one conditional UPDATE…RETURNING per retrieve (both prepared), no validation,
 * crypto or audit. It stores what a create stores for a text push (its row, `stored_bytes` included; the payload in
 * clear, as there is no crypto), so its rows are those the other servers write.
 *
 * Run by the bench as a child process: `tsx scripts/bench/physical-floor.ts <DATABASE_URL> <port>`; it prints
 * `physical listening on <url>` and stops on SIGTERM.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const [databaseUrl, port] = [process.argv[2]!, Number(process.argv[3])];
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
const send = (res: http.ServerResponse, status: number, text: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
};
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const answer = async () => {
      if (req.method === 'POST' && req.url === '/api/v2/pushes') {
        const payload = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { push: { payload: string } }).push
          .payload;
        const now = new Date();
        const { rows } = await pool.query({
          name: 'physical_create',
          text: `insert into pushes (id, url_token, kind, payload_ciphertext, passphrase_protected, expire_after_days,
             expire_after_seconds, expire_after_views, deletable_by_viewer, retrieval_step, created_at, updated_at,
             expires_at, stored_bytes)
           values ($1, $2, 'text', $3, false, 7, 604800, 5, true, false, $4, $4, $5, $6) returning url_token`,
          values: [
            randomUUID(),
            randomBytes(15).toString('base64url'),
            payload,
            now,
            new Date(now.getTime() + 7 * 86_400_000),
            Buffer.byteLength(payload),
          ],
        });
        return send(res, 201, JSON.stringify({ url_token: (rows[0] as { url_token: string }).url_token }));
      }
      const token =
        req.method === 'GET' && req.url?.startsWith('/api/v2/pushes/') ? req.url.slice('/api/v2/pushes/'.length) : null;
      if (token) {
        const { rows } = await pool.query({
          name: 'physical_retrieve',
          text: `update pushes set views_used = views_used + 1 where url_token = $1 and views_used < expire_after_views
           returning payload_ciphertext`,
          values: [token],
        });
        const row = rows[0] as { payload_ciphertext: string } | undefined;
        return row
          ? send(res, 200, JSON.stringify({ payload: row.payload_ciphertext }))
          : send(res, 404, '{"code":"not_found"}');
      }
      send(res, 404, '{"code":"no_route"}');
    };
    answer().catch(() => send(res, 500, '{"code":"internal_error"}'));
  });
});
server.keepAliveTimeout = 5_000;
server.listen(port, '127.0.0.1', () => console.log(`physical listening on http://127.0.0.1:${port}`));
const stop = () => server.close(() => void pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
