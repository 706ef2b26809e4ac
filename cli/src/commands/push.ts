/**
 * `secret-push push`: text (an argument, stdin, or typed without echo), files, a URL or a QR text, end-to-end
 * encrypted by default where the instance offers it (the key only in the printed link's fragment), with every option
 * of a push. Prints the link to share on stdout.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  type CreatePushParams,
  type FileAttachment,
  type SecretPushClient,
  type VersionReport,
} from '@secret-push/sdk';
import { isSupportedScheme } from '@secret-push/sdk/e2e';
import { fileFromPath } from '@secret-push/sdk/node';
import type { Args } from '../args.js';
import type { Command } from '../command.js';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError } from '../exit.js';
import { EXPIRY_OPTIONS, expiryOf } from '../expiry.js';
import { askHidden, askHiddenTwice, formatBytes, readBounded, readSecretFile, withoutFinalNewline } from '../prompt.js';

/** A text push holds at most 1,048,576 characters: 4 bytes each at most in UTF-8. */
const MAX_TEXT_BYTES = 4 * 1024 * 1024;
/** The contract's file limits (an instance may set lower ones: its 422 says so). */
const MAX_FILES = 10;
const MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Files from paths, each checked for size before it is read. */
export async function readFiles(ctx: Context, paths: string[], limits = { count: MAX_FILES, bytes: MAX_FILE_BYTES }) {
  if (paths.length > limits.count) throw usageError(`at most ${limits.count} files`);
  const files: FileAttachment[] = [];
  for (const given of paths) {
    const file = path.resolve(ctx.io.cwd, given);
    const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`cannot read ${given}: ${error.code ?? error.message}`, EXIT.usage);
    });
    if (!info.isFile()) throw new CliError(`${given} is not a file`, EXIT.usage);
    if (info.size > limits.bytes)
      throw new CliError(`${given} is larger than the ${formatBytes(limits.bytes)} a file may be`, EXIT.invalid);
    files.push(await fileFromPath(file));
  }
  return files;
}

/** The secret's text: the argument, else stdin when it is not a terminal, else typed (hidden) on the terminal. */
async function textOf(ctx: Context, args: Args, fromStdinAllowed: boolean): Promise<string | undefined> {
  const given = args.positionals[0];
  if (given !== undefined) return given;
  if (!fromStdinAllowed) return undefined;
  if (!ctx.io.stdin.isTTY) {
    const text = withoutFinalNewline((await readBounded(ctx.io.stdin, MAX_TEXT_BYTES, 'the input')).toString('utf8'));
    if (text === '') throw new CliError('nothing to push: stdin was empty', EXIT.usage);
    return text;
  }
  const typed = await askHidden(ctx.io, 'Secret (not shown): ', 'the secret');
  if (typed === '') throw new CliError('nothing to push', EXIT.usage);
  return typed;
}

/** Whether to encrypt end to end: on where the instance offers it, unless turned off (or the link is mailed). */
function endToEndChoice(args: Args, report: VersionReport, notifying: boolean): boolean {
  args.exclusive('e2e', 'no-e2e');
  const feature = report.features.pushes.client_encryption;
  const offered = feature?.enabled === true && feature.schemes.some(isSupportedScheme);
  if (args.flag('e2e') && !offered)
    throw new CliError(
      'this instance does not offer end-to-end encryption',
      EXIT.encryption,
      'not_supported_by_server',
    );
  if (notifying && args.flag('e2e'))
    throw usageError('--notify mails the link, which cannot carry the end-to-end key: leave out --e2e or --notify');
  if (notifying && offered && !args.flag('no-e2e'))
    throw usageError(
      '--notify mails the link, which cannot carry the end-to-end key: add --no-e2e to send this push without end-to-end encryption',
    );
  const wanted = args.flag('no-e2e') || notifying ? false : args.flag('e2e') || offered;
  if (!wanted && feature?.required)
    throw new CliError('this instance accepts only end-to-end encrypted pushes', EXIT.encryption, 'e2e_required');
  return wanted;
}

async function passphraseOf(ctx: Context, args: Args): Promise<string | undefined> {
  args.exclusive('passphrase-prompt', 'passphrase-file');
  const file = args.string('passphrase-file');
  if (file) return readSecretFile(ctx.io, file, 'passphrase');
  if (args.flag('passphrase-prompt')) return askHiddenTwice(ctx.io, 'Passphrase for the recipient: ', 'passphrase');
  return undefined;
}

async function pushParams(ctx: Context, args: Args, client: SecretPushClient): Promise<CreatePushParams> {
  args.exclusive('url', 'qr');
  args.exclusive('url', 'file');
  const url = args.string('url');
  if (url !== undefined && args.positionals.length > 0)
    throw usageError('give the URL with --url or the text, not both');
  if (args.string('passphrase-file') === '-' && args.positionals.length === 0 && args.list('file').length === 0)
    throw usageError('stdin cannot hold both the secret and its passphrase: give the passphrase in a file');
  const files = await readFiles(ctx, args.list('file'));
  const params: CreatePushParams = {
    ...(await expiryOf(args, () => ctx.version(client))),
  };
  if (url !== undefined) Object.assign(params, { kind: 'url', payload: url });
  else {
    const text = await textOf(ctx, args, files.length === 0);
    if (text !== undefined) params.payload = text;
    if (args.flag('qr')) params.kind = 'qr';
  }
  if (files.length > 0) params.files = files;
  const passphrase = await passphraseOf(ctx, args);
  if (passphrase !== undefined) params.passphrase = passphrase;
  const name = args.string('name');
  const note = args.string('note');
  if (name !== undefined) params.name = name;
  if (note !== undefined) params.note = note;
  const notify = args.list('notify');
  if (notify.length > 0) params.notify_emails_to = notify.join(',');
  const locale = args.string('notify-locale');
  if (locale !== undefined) params.notify_emails_to_locale = locale;
  if (args.flag('notify-owner')) params.notify_owner_on_view = true;
  return params;
}

export const push: Command = {
  words: ['push'],
  summary:
    'Push a secret: TEXT, stdin (echo "$S" | secret-push push), typed without echo, --file, --url or --qr. Prints the link to share.',
  args: '[TEXT]',
  positionals: { min: 0, max: 1 },
  options: {
    file: {
      type: 'string',
      multiple: true,
      value: 'PATH',
      help: 'attach a file (repeat for more, up to 10)',
      complete: 'file',
    },
    url: { type: 'string', value: 'URL', help: 'push a URL the recipient is sent to' },
    qr: { type: 'boolean', help: 'push TEXT as a QR code' },
    ...EXPIRY_OPTIONS,
    'passphrase-prompt': {
      type: 'boolean',
      help: 'ask (twice, without echo) for a passphrase the recipient must give',
    },
    'passphrase-file': {
      type: 'string',
      value: 'FILE',
      help: 'the passphrase from the first line of FILE',
      complete: 'file',
    },
    name: { type: 'string', value: 'TEXT', help: 'a label only you (the owner) see' },
    note: { type: 'string', value: 'TEXT', help: 'a note only you (the owner) see' },
    notify: {
      type: 'string',
      multiple: true,
      value: 'EMAIL',
      help: 'mail the link to EMAIL (repeat, up to 5; needs --no-e2e)',
    },
    'notify-locale': { type: 'string', value: 'LOCALE', help: 'the language of that mail (en, de, es, fr, …)' },
    'notify-owner': { type: 'boolean', help: 'mail me when it is first viewed or expires unviewed' },
    e2e: { type: 'boolean', help: 'encrypt end to end (the default where the instance offers it)' },
    'no-e2e': { type: 'boolean', help: 'do not encrypt end to end (the server can then read the secret)' },
  },
  details:
    'End-to-end encryption (on by default where the instance offers it): the secret, the file names and the files\nare encrypted here with a new key that only the printed link carries, after #k= (browsers never send the\nfragment). A TEXT argument is visible to other users of this machine (ps) and kept in shell history: prefer stdin\nor the prompt for real secrets. One final newline of stdin is dropped.',
  async run(ctx: Context, args: Args) {
    const { client } = await ctx.client();
    // Decided (and the instance asked) before anyone types a secret.
    const endToEnd = endToEndChoice(args, await ctx.version(client), args.list('notify').length > 0);
    const params = await pushParams(ctx, args, client);
    const created = await client.createPush(params, { endToEnd });
    ctx.result({ ...created, share_link: created.shareLink, end_to_end: endToEnd }, created.shareLink);
    const views = `${created.expire_after_views} view${created.expire_after_views === 1 ? '' : 's'}`;
    ctx.note(
      `${endToEnd ? 'end-to-end encrypted: the key is only in this link' : 'not end-to-end encrypted'}; expires after ${views} or at ${created.expires_at}`,
    );
  },
};
