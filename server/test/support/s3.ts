/**
 * A real S3-protocol server on loopback for the tests (the `s3rver` package, its objects in a temporary folder), with
 * one bucket and one account. s3rver checks that a request's access key id is known but does not check AWS Signature
 * Version 4 at all (its V4 support "is unimplemented": any signature passes), so a front in this module checks each
 * request's V4 signature against the account's secret first, as S3 does, and answers 403 SignatureDoesNotMatch
 * otherwise: a server with the wrong secret is refused. The payload's own hash is not re-computed (the server's
 * envelope authenticates every byte it reads back).
 *
 * `stop()` closes the port (a store that is down: connections are refused) and `start()` listens on it again.
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import S3rver from 's3rver';
import type { S3StorageSettings } from '../../src/config/settings.js';

const require = createRequire(import.meta.url);
const AWSAccount = require('s3rver/lib/models/account.js') as new (
  id: number,
  name: string,
) => { createKeyPair(id: string, secret: string): void };

export const S3_ACCESS_KEY_ID = 'SECRETPUSHTEST';
const S3_SECRET = 'test-secret-access-key-0123456789';
export const S3_BUCKET = 'secret-push-test';

new AWSAccount(111122223333, 'secret-push-tests').createKeyPair(S3_ACCESS_KEY_ID, S3_SECRET);

export interface S3Server {
  endpoint: string;
  /** Settings of a server using this store under `prefix` (the right credentials unless others are given). */
  settings(prefix?: string, credentials?: S3StorageSettings['credentials']): S3StorageSettings;
  /** Requests refused for their signature so far. */
  refused: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const encode = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The V4 signature a request should carry, from its method, path, query, signed headers and payload hash. */
function expectedSignature(req: IncomingMessage, auth: Map<string, string>, secret: string): string {
  const [rawPath, rawQuery = ''] = (req.url ?? '/').split('?', 2) as [string, string?];
  const query = rawQuery
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const [k, v = ''] = p.split('=', 2) as [string, string?];
      return [encode(decodeURIComponent(k)), encode(decodeURIComponent(v.replace(/\+/g, '%20')))] as const;
    })
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const signed = auth.get('SignedHeaders') ?? '';
  const headers = signed
    .split(';')
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const payload = String(req.headers['x-amz-content-sha256'] ?? '');
  const canonical = [req.method, rawPath, query, headers, signed, payload].join('\n');
  const [, date, region, service] = (auth.get('Credential') ?? '').split('/');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  let key: Buffer = createHmac('sha256', `AWS4${secret}`)
    .update(date ?? '')
    .digest();
  for (const part of [region, service, 'aws4_request'])
    key = createHmac('sha256', key)
      .update(part ?? '')
      .digest();
  return createHmac('sha256', key).update(toSign).digest('hex');
}

/** Whether the request's V4 signature is the one the account's secret makes. */
function signatureHolds(req: IncomingMessage): boolean {
  const header = String(req.headers.authorization ?? '');
  if (!header.startsWith('AWS4-HMAC-SHA256 ')) return false;
  const auth = new Map(
    header
      .slice('AWS4-HMAC-SHA256 '.length)
      .split(',')
      .map((part) => part.trim().split('=', 2) as [string, string]),
  );
  if ((auth.get('Credential') ?? '').split('/')[0] !== S3_ACCESS_KEY_ID) return false;
  return auth.get('Signature') === expectedSignature(req, auth, S3_SECRET);
}

export async function startS3Server(): Promise<S3Server> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'secret-push-s3-'));
  const s3 = new S3rver({ directory, silent: true, configureBuckets: [{ name: S3_BUCKET }] });
  await s3.configureBuckets();
  const handle = s3.callback();
  let port = 0;
  let server: http.Server | null = null;
  const sockets = new Set<Socket>();
  const result: S3Server = {
    endpoint: '',
    refused: 0,
    settings: (prefix = 'sp/', credentials = { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET }) => ({
      kind: 's3',
      bucket: S3_BUCKET,
      prefix,
      endpoint: result.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials,
    }),
    async start() {
      if (server) return;
      server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
        if (signatureHolds(req)) return void handle(req, res);
        result.refused++;
        req.resume();
        res.writeHead(403, { 'Content-Type': 'application/xml' });
        res.end(
          '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided.</Message></Error>',
        );
      });
      server.on('connection', (socket: Socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, '127.0.0.1', resolve);
      });
      port = (server.address() as AddressInfo).port;
      result.endpoint = `http://127.0.0.1:${port}`;
    },
    async stop() {
      const closing = server;
      server = null;
      if (!closing) return;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    async close() {
      await result.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
  await result.start();
  return result;
}
