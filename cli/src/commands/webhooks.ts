/**
 * `secret-push webhooks …`: a local receiver for development (`listen`: verifies each delivery's Standard Webhooks
 * signature with the SDK's `verifyWebhook` and prints the event; refuses anything unsigned), and the owner's
 * webhooks (`list`, `create`, `delete`, `test`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent, type WebhookEventType } from '@secret-push/sdk';
import { CHOOSABLE_WEBHOOK_EVENTS } from '@secret-push/sdk/rules';
import type { Args } from '../args.js';
import type { Command } from '../command.js';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../exit.js';
import { printable, table } from '../output.js';
import { readSecretFile } from '../prompt.js';
import { webhookApi } from '../webhook-api.js';

/** A delivery is a small JSON document; anything larger is refused before it is held. */
const MAX_BODY_BYTES = 256 * 1024;

function eventsOf(args: Args): WebhookEventType[] {
  const given = args.list('events').flatMap((e) =>
    e
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  if (given.length === 0) return [...CHOOSABLE_WEBHOOK_EVENTS];
  for (const event of given)
    if (!CHOOSABLE_WEBHOOK_EVENTS.includes(event as WebhookEventType) && event !== 'webhook.test')
      throw usageError(`unknown event ${JSON.stringify(event)} (known: ${CHOOSABLE_WEBHOOK_EVENTS.join(', ')})`);
  return [...new Set(given)] as WebhookEventType[];
}

/** One line about an event: its type and the facts it carries (never a secret: deliveries hold none). */
function describeEvent(event: WebhookEvent): string {
  const data = event.data as Record<string, unknown>;
  const facts = ['push_id', 'request_id', 'webhook_id', 'kind', 'state', 'name', 'views_remaining', 'expired']
    .filter((k) => data[k] !== undefined && data[k] !== '')
    .map((k) => `${k}=${printable(String(data[k]))}`);
  return `${event.timestamp} ${event.type} ${facts.join(' ')}`.trimEnd();
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.removeAllListeners('data');
        req.resume();
        resolve(null);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function listenSecret(ctx: Context, args: Args): Promise<string | undefined> {
  const file = args.string('secret-file');
  if (file) return readSecretFile(ctx.io, file, 'webhook secret');
  return ctx.io.env.SECRET_PUSH_WEBHOOK_SECRET || undefined;
}

interface Listener {
  url: string;
  done: Promise<void>;
  stop(): void;
}

/** The receiver: POSTs verified with the secret, each event printed; stops after `max` events or on stop(). */
function startReceiver(ctx: Context, secret: () => string, host: string, port: number, max: number | undefined) {
  let received = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return res.writeHead(405, { Allow: 'POST' }).end();
    const body = await readBody(req);
    if (body === null) return res.writeHead(413).end();
    try {
      const event = await verifyWebhook(secret(), req.headers, body);
      res.writeHead(204).end();
      received++;
      ctx.io.stdout.write(`${ctx.json ? JSON.stringify(event) : describeEvent(event)}\n`);
      if (max !== undefined && received >= max) stop();
    } catch (error) {
      const code = error instanceof WebhookVerificationError ? error.code : 'error';
      ctx.io.stderr.write(`secret-push: refused a delivery (${code ?? 'unverified'})\n`);
      res.writeHead(error instanceof WebhookVerificationError ? 401 : 400).end();
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(400).end());
  });
  const stop = () => {
    server.close(() => finish());
    server.closeAllConnections();
  };
  return new Promise<Listener>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new CliError(`cannot listen on ${host}:${port}: ${error.code ?? error.message}`, EXIT.failure)),
    );
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({ url: `http://${shown}:${address.port}/`, done, stop });
    });
  });
}

const listen: Command = {
  words: ['webhooks', 'listen'],
  summary:
    'A local webhook receiver for development: verifies every delivery’s signature and prints its event (one line, or JSON lines with --json).',
  positionals: { min: 0, max: 0 },
  options: {
    port: { type: 'string', value: 'N', help: 'the port to listen on (default 8787; 0: any free port)' },
    host: { type: 'string', value: 'ADDR', help: 'the address to listen on (default 127.0.0.1)' },
    'secret-file': {
      type: 'string',
      value: 'FILE',
      help: 'the whsec_… secret (default: SECRET_PUSH_WEBHOOK_SECRET)',
      complete: 'file',
    },
    register: {
      type: 'string',
      value: 'URL',
      help: 'register a webhook for URL (a public address that reaches this listener) and delete it on exit',
    },
    events: {
      type: 'string',
      multiple: true,
      value: 'LIST',
      help: 'with --register: the events (comma-separated; default all)',
    },
    'max-events': { type: 'string', value: 'N', help: 'stop after N verified events' },
  },
  details:
    'Deliveries without a valid signature (or older than 5 minutes) are answered 401 and not printed.\nStop with Ctrl-C; a webhook made by --register is deleted then.',
  async run(ctx: Context, args: Args) {
    const port = args.int('port', 0, 65_535) ?? 8787;
    const max = args.int('max-events', 1, 1_000_000);
    const register = args.string('register');
    let secret = await listenSecret(ctx, args);
    if (!secret && !register)
      throw usageError('give the webhook secret (--secret-file FILE or SECRET_PUSH_WEBHOOK_SECRET), or --register URL');
    const listener = await startReceiver(ctx, () => secret!, args.string('host') ?? '127.0.0.1', port, max);
    let cleanup = async () => undefined as unknown;
    try {
      if (register) {
        const { client } = await ctx.client();
        const api = webhookApi(client);
        const made = await api.createWebhook({
          url: register,
          events: eventsOf(args),
          description: 'secret-push webhooks listen',
        });
        secret = made.secret;
        cleanup = () => api.deleteWebhook(made.id).catch(() => undefined);
        ctx.io.stderr.write(`secret-push: registered webhook ${made.id} for ${made.url} (deleted on exit)\n`);
      }
    } catch (error) {
      listener.stop();
      throw error;
    }
    ctx.io.stderr.write(`secret-push: listening on ${listener.url}\n`);
    const onSignal = () => listener.stop();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      await listener.done;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await cleanup();
    }
  },
};

const list: Command = {
  words: ['webhooks', 'list'],
  summary: 'Your webhooks (never their secrets).',
  positionals: { min: 0, max: 0 },
  options: {},
  async run(ctx: Context) {
    const { client } = await ctx.client();
    const hooks = await webhookApi(client).listWebhooks();
    ctx.result(hooks, () =>
      hooks.length
        ? table(
            ['ID', 'URL', 'ENABLED', 'EVENTS'],
            hooks.map((h) => [h.id, h.url, h.enabled ? 'yes' : 'no', h.events.join(',')]),
          )
        : 'no webhooks',
    );
  },
};

const create: Command = {
  words: ['webhooks', 'create'],
  summary: 'Register a webhook for URL; prints its signing secret (whsec_…), shown this once.',
  args: 'URL',
  positionals: { min: 1, max: 1 },
  options: {
    events: { type: 'string', multiple: true, value: 'LIST', help: 'the events (comma-separated; default all)' },
    description: { type: 'string', value: 'TEXT', help: 'a label' },
  },
  async run(ctx: Context, args: Args) {
    const { client } = await ctx.client();
    const description = args.string('description');
    const made = await webhookApi(client).createWebhook({
      url: args.positionals[0]!,
      events: eventsOf(args),
      ...(description !== undefined ? { description } : {}),
    });
    ctx.result(made, made.secret);
    ctx.note(`webhook ${made.id}: keep the secret above (verify deliveries with it); it is not shown again`);
  },
};

const remove: Command = {
  words: ['webhooks', 'delete'],
  summary: 'Delete a webhook and its delivery log.',
  args: 'ID',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const { client } = await ctx.client();
    const hook = await webhookApi(client).deleteWebhook(args.positionals[0]!);
    ctx.result(hook, `deleted ${hook.id}`);
  },
};

const test: Command = {
  words: ['webhooks', 'test'],
  summary: 'Send a signed webhook.test event to a webhook.',
  args: 'ID',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const { client } = await ctx.client();
    const delivery = await webhookApi(client).testWebhook(args.positionals[0]!);
    ctx.result(delivery, `queued delivery ${delivery.id}`);
  },
};

export const webhookCommands = [listen, list, create, remove, test];
