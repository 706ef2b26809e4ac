/**
 * `secret-push request …`: ask someone for a secret (sealed to a key only this machine holds, where the instance
 * offers it), answer someone's request (the SDK seals the answer when the request asks for it), and collect the
 * answer; also show, list, revoke and audit.
 */
import {
  toFileUpload,
  type RequestInput,
  type RequestOwner,
  type RequestRecord,
  type SecretPushClient,
} from '@secret-push/sdk';
import { SEALING_SCHEME } from '@secret-push/sdk/e2e';
import type { Args } from '../args.js';
import type { Command } from '../command.js';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../exit.js';
import { EXPIRY_OPTIONS, expiryOf } from '../expiry.js';
import { printable, table } from '../output.js';
import { askHidden, askHiddenTwice, readBounded, readSecretFile, withoutFinalNewline } from '../prompt.js';
import { requestTarget } from '../target.js';
import { collect, LIST_OPTIONS, stateArg } from './manage.js';
import { readFiles } from './push.js';
import { deliverSecret, PASSPHRASE_IN, withPassphrase } from './retrieve.js';

/** The contract's limits of the files that go with an ask. */
const ASK_FILES = { count: 5, bytes: 1024 * 1024 };
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
const POLL_MS = 2000;

async function createInput(ctx: Context, args: Args, client: SecretPushClient): Promise<RequestInput> {
  const files = await readFiles(ctx, args.list('file'), ASK_FILES);
  const ask = args.positionals[0];
  if (ask === undefined && files.length === 0) throw usageError('say what you ask for (ASK), or attach a --file');
  const input: RequestInput = { ...(await expiryOf(args, () => ctx.version(client))) };
  if (ask !== undefined) input.request = ask;
  if (files.length > 0) input.files = await Promise.all(files.map(toFileUpload));
  for (const field of ['name', 'note'] as const) {
    const value = args.string(field);
    if (value !== undefined) input[field] = value;
  }
  const notify = args.list('notify');
  if (notify.length > 0) input.notify_emails_to = notify.join(',');
  const locale = args.string('notify-locale');
  if (locale !== undefined) input.notify_emails_to_locale = locale;
  return input;
}

const create: Command = {
  words: ['request', 'create'],
  summary:
    'Ask someone for a secret: prints the link to send them. The answer is sealed to a key kept on this machine where the instance offers it.',
  args: '[ASK]',
  positionals: { min: 0, max: 1 },
  options: {
    file: {
      type: 'string',
      multiple: true,
      value: 'PATH',
      help: 'attach a file to the ask (up to 5, 1 MiB each)',
      complete: 'file',
    },
    ...EXPIRY_OPTIONS,
    name: { type: 'string', value: 'TEXT', help: 'a label only you see (also the answer’s name)' },
    note: { type: 'string', value: 'TEXT', help: 'a note only you see' },
    notify: {
      type: 'string',
      multiple: true,
      value: 'EMAIL',
      help: 'mail the request link to EMAIL (repeat, up to 5)',
    },
    'notify-locale': { type: 'string', value: 'LOCALE', help: 'the language of that mail' },
    'no-seal': { type: 'boolean', help: 'do not seal the answer (the server can then read it)' },
  },
  details:
    'The expiry options are those of the answer push. A sealed request keeps its private key in the config folder\n(request-keys/<token>.json, mode 0600) until `request collect` has opened the answer.',
  async run(ctx: Context, args: Args) {
    const { client, connection } = await ctx.client();
    const report = await ctx.version(client);
    const offered = report.features.requests.sealed_answers?.includes(SEALING_SCHEME) === true;
    const sealed = offered && !args.flag('no-seal');
    const input = await createInput(ctx, args, client);
    const store = ctx.keys();
    const pair = sealed ? await store.create() : undefined;
    if (pair) input.public_key = pair.publicKey;
    const request = await client.createRequest(input);
    let keyFile: string | undefined;
    if (pair) {
      try {
        keyFile = await store.save(connection.baseUrl, request.url_token, pair);
      } catch (error) {
        // Without its key nobody could open the answer: take the request back rather than leave it open.
        await client.revokeRequest(request.url_token).catch(() => undefined);
        throw new CliError(
          `cannot keep the request's key in ${store.dir} (${(error as NodeJS.ErrnoException).code ?? String(error)}): the request was revoked`,
          EXIT.failure,
        );
      }
    }
    ctx.result({ ...request, sealed, key_file: keyFile ?? null }, request.html_url);
    ctx.note(
      sealed
        ? `sealed: only the key in ${keyFile} opens the answer. Send the link above; then: secret-push request collect ${request.url_token}`
        : `not sealed${offered ? '' : ' (the instance does not offer sealed answers)'}. Send the link above; then: secret-push request collect ${request.url_token}`,
    );
  },
};

const answer: Command = {
  words: ['request', 'answer'],
  summary:
    "Answer someone's request once, with TEXT, stdin, text typed without echo, or --file; sealed to the requester's key when the request asks for it.",
  args: 'LINK|TOKEN [TEXT]',
  positionals: { min: 1, max: 2 },
  options: {
    file: { type: 'string', multiple: true, value: 'PATH', help: 'send a file (repeat for more)', complete: 'file' },
    'passphrase-prompt': {
      type: 'boolean',
      help: 'ask (twice, without echo) for a passphrase the requester must give',
    },
    'passphrase-file': {
      type: 'string',
      value: 'FILE',
      help: 'that passphrase from the first line of FILE',
      complete: 'file',
    },
  },
  async run(ctx: Context, args: Args) {
    const target = requestTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    // What is asked, and whether the answer will be sealed, before anything is typed.
    const view = await client.getRequest(target.urlToken);
    if (view.state !== 'pending')
      throw new CliError(`this request is ${view.state}: it takes no answer`, EXIT.notFound, view.state);
    ctx.note(`asks: ${printable(view.request)}`);
    ctx.note(
      view.sealing
        ? "sealed: your answer is encrypted here for the requester's key only"
        : 'not sealed: the server stores your answer encrypted with its own key, and can read it',
    );
    const files = await readFiles(ctx, args.list('file'));
    let payload = args.positionals[1];
    if (payload === undefined && files.length === 0) {
      payload = ctx.io.stdin.isTTY
        ? await askHidden(ctx.io, 'Your answer (not shown): ', 'the secret')
        : withoutFinalNewline((await readBounded(ctx.io.stdin, MAX_ANSWER_BYTES, 'the input')).toString('utf8'));
      if (payload === '') throw new CliError('nothing to send', EXIT.usage);
    }
    args.exclusive('passphrase-prompt', 'passphrase-file');
    const file = args.string('passphrase-file');
    const passphrase = file
      ? await readSecretFile(ctx.io, file, 'passphrase')
      : args.flag('passphrase-prompt')
        ? await askHiddenTwice(ctx.io, 'Passphrase for the requester: ', 'passphrase')
        : undefined;
    const receipt = await client.respondToRequest(target.urlToken, {
      ...(payload !== undefined ? { payload } : {}),
      ...(files.length > 0 ? { files } : {}),
      ...(passphrase !== undefined ? { passphrase } : {}),
    });
    ctx.result(receipt, `answered ${receipt.url_token}`);
  },
};

/** The requester's view of a request; waits for its answer with --wait. */
async function ownerView(ctx: Context, client: SecretPushClient, urlToken: string): Promise<RequestOwner> {
  const wait = ctx.args.flag('wait');
  const deadline = Date.now() + (ctx.args.int('timeout', 1, 86_400) ?? 600) * 1000;
  for (;;) {
    const record: RequestRecord = await client.getRequest(urlToken);
    if (record.audience !== 'owner')
      throw new CliError('this request is not yours (or no token was sent)', EXIT.auth, 'not_owner');
    if (record.state !== 'pending' || !wait) return record;
    if (Date.now() >= deadline) throw new CliError('no answer before the timeout', EXIT.notFound, 'pending');
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

const collectAnswer: Command = {
  words: ['request', 'collect'],
  summary: 'Open the answer of your request (sealed ones with the key kept here); prints it and saves its files.',
  args: 'TOKEN|LINK',
  positionals: { min: 1, max: 1 },
  options: {
    wait: { type: 'boolean', help: 'wait for the answer (polls every 2 s)' },
    timeout: { type: 'string', value: 'SECONDS', help: 'how long --wait waits (default 600)' },
    ...PASSPHRASE_IN,
    output: {
      type: 'string',
      short: 'o',
      value: 'DIR',
      help: 'save the files in DIR (never overwrites)',
      complete: 'file',
    },
    'keep-key': { type: 'boolean', help: 'keep the sealed request’s key after opening the answer' },
  },
  async run(ctx: Context, args: Args) {
    const target = requestTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    const record = await ownerView(ctx, client, target.urlToken);
    if (!record.answer) {
      throw new CliError(
        record.state === 'pending'
          ? 'not answered yet (wait for it with --wait)'
          : `this request is ${record.state}: there is no answer`,
        EXIT.notFound,
        record.state,
      );
    }
    const store = ctx.keys();
    const keyPair = record.answer.sealed_key ? await store.load(record.url_token) : undefined;
    if (keyPair === null)
      throw new CliError(
        `the answer is sealed and its key is not in ${store.dir} (made on another machine or by another user?)`,
        EXIT.encryption,
        'missing_key',
      );
    const push = await withPassphrase(ctx, (passphrase) =>
      client.openResponse(record.url_token, { keyPair, passphrase }),
    );
    await deliverSecret(ctx, client, push);
    if (keyPair && !args.flag('keep-key')) await store.remove(record.url_token);
  },
};

const show: Command = {
  words: ['request', 'show'],
  summary: 'A request as its requester (or a responder) sees it: state, ask, link, answer.',
  args: 'TOKEN|LINK',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const target = requestTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    const record = await client.getRequest(target.urlToken);
    const lines = [
      `state:   ${record.state}`,
      `asks:    ${printable(record.request)}`,
      `link:    ${record.html_url}`,
      `sealed:  ${record.sealing ? 'yes' : 'no'}`,
      `expires: ${record.expires_at}`,
    ];
    if (record.audience === 'owner' && record.answer) lines.push(`answer:  push ${record.answer.url_token}`);
    ctx.result(record, lines.join('\n'));
  },
};

const requestList: Command = {
  words: ['request', 'list'],
  summary: 'Your requests, newest first: active (pending, answered) or expired (collected, expired, revoked).',
  args: 'active|expired',
  positionals: { min: 1, max: 1, complete: ['active', 'expired'] },
  options: LIST_OPTIONS,
  async run(ctx: Context, args: Args) {
    const state = stateArg(args);
    const { client } = await ctx.client();
    const requests = await collect(args, state === 'active' ? client.activeRequests : client.expiredRequests);
    ctx.result(requests, () =>
      requests.length
        ? table(
            ['TOKEN', 'STATE', 'SEALED', 'EXPIRES', 'ASKS'],
            requests.map((r) => [r.url_token, r.state, r.sealing ? 'yes' : 'no', r.expires_at, r.request]),
          )
        : `no ${state} requests`,
    );
  },
};

const revoke: Command = {
  words: ['request', 'revoke'],
  summary: 'Revoke a pending request (and forget its key).',
  args: 'TOKEN|LINK',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const target = requestTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    const record = await client.revokeRequest(target.urlToken);
    await ctx.keys().remove(record.url_token);
    ctx.result(record, `revoked ${record.url_token}`);
  },
};

const requestAudit: Command = {
  words: ['request', 'audit'],
  summary: "A request's audit log, oldest first (the requester only).",
  args: 'TOKEN|LINK',
  positionals: { min: 1, max: 1 },
  options: LIST_OPTIONS,
  async run(ctx: Context, args: Args) {
    const target = requestTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    const entries = await collect(
      args,
      Object.assign(() => client.requestAudit(target.urlToken), {
        page: (n: number) => client.requestAudit.page(target.urlToken, n),
      }),
    );
    ctx.result(entries, () =>
      table(
        ['WHEN', 'WHAT', 'IP'],
        entries.map((e) => [e.created_at, e.kind, e.ip]),
      ),
    );
  },
};

export const requestCommands = [create, answer, collectAnswer, show, requestList, revoke, requestAudit];
