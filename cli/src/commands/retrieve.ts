/**
 * `secret-push get LINK`: retrieves a push (a view), decrypts an end-to-end link here with the key of its fragment
 * (the key is never sent), asks for a passphrase without echo when the push has one, prints the payload and saves
 * the files. `deliverSecret` is shared with `request collect`.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { PassphraseError, PassphraseIncorrectError, type PushRetrieval, type SecretPushClient } from '@secret-push/sdk';
import type { Args } from '../args.js';
import type { Command, Options } from '../command.js';
import type { Context } from '../context.js';
import { CliError, EXIT } from '../exit.js';
import { printable, saveNewFile } from '../output.js';
import { askHidden, formatBytes, readSecretFile } from '../prompt.js';
import { pushTarget } from '../target.js';

export const PASSPHRASE_IN: Options = {
  'passphrase-prompt': { type: 'boolean', help: 'ask for the passphrase first (without echo), not only when needed' },
  'passphrase-file': {
    type: 'string',
    value: 'FILE',
    help: 'read the passphrase from the first line of FILE (- for stdin)',
    complete: 'file',
  },
};

const OUTPUT: Options = {
  output: {
    type: 'string',
    short: 'o',
    value: 'DIR',
    help: 'save the files in DIR (default: the current folder; never overwrites)',
    complete: 'file',
  },
};

/** The most passphrases tried at a prompt (the server allows 5 wrong ones a minute per push). */
const PROMPT_TRIES = 3;

/**
 * Runs a retrieval, with the passphrase from `--passphrase-file`, or asked on the terminal (`--passphrase-prompt`
 * first, otherwise when the server says one is needed, and again when it was wrong).
 */
export async function withPassphrase(
  ctx: Context,
  retrieve: (passphrase: string | undefined) => Promise<PushRetrieval>,
): Promise<PushRetrieval> {
  const { args, io } = ctx;
  args.exclusive('passphrase-prompt', 'passphrase-file');
  const file = args.string('passphrase-file');
  let passphrase = file
    ? await readSecretFile(io, file, 'passphrase')
    : args.flag('passphrase-prompt')
      ? await askHidden(io, 'Passphrase: ', 'the passphrase')
      : undefined;
  for (let tries = 0; ; tries++) {
    try {
      return await retrieve(passphrase);
    } catch (error) {
      if (!(error instanceof PassphraseError) || file || tries >= PROMPT_TRIES) throw error;
      const question = error instanceof PassphraseIncorrectError ? 'Wrong passphrase, again: ' : 'Passphrase: ';
      passphrase = await askHidden(io, question, 'the passphrase').catch((asked: unknown) => {
        // No terminal to ask on: the server's answer is the error to report.
        if (asked instanceof CliError && asked.exitCode === EXIT.usage) {
          throw new CliError(
            'this push needs a passphrase: run in a terminal to be asked, or give --passphrase-file FILE',
            EXIT.passphrase,
            error.code,
          );
        }
        throw asked;
      });
    }
  }
}

/** Prints a retrieved push's payload (stdout) and saves its files in `--output` (default: the current folder). */
export async function deliverSecret(ctx: Context, client: SecretPushClient, push: PushRetrieval): Promise<void> {
  const { io, args } = ctx;
  if (push.expired)
    throw new CliError('this push has expired or was deleted: there is nothing to show', EXIT.notFound, 'expired');
  const dir = path.resolve(io.cwd, args.string('output') ?? '.');
  if (push.files.length > 0) {
    const found = await stat(dir).catch(() => null);
    if (!found?.isDirectory()) throw new CliError(`${dir} is not a folder`, EXIT.usage);
  }
  const saved: { filename: string; content_type: string; size: number; saved_to: string }[] = [];
  for (const file of push.files) {
    const bytes = await client.downloadFile(file);
    const savedTo = await saveNewFile(dir, file.filename, bytes);
    saved.push({ filename: file.filename, content_type: file.content_type, size: bytes.length, saved_to: savedTo });
    ctx.note(`saved ${savedTo} (${formatBytes(bytes.length)})`);
  }
  if (ctx.json) {
    ctx.result(
      {
        url_token: push.url_token,
        kind: push.kind,
        payload: push.payload,
        files: saved,
        end_to_end: push.client_encryption != null,
        views_remaining: push.views_remaining,
        expires_at: push.expires_at,
      },
      '',
    );
    return;
  }
  if (push.payload !== null && push.payload !== '') {
    // The payload exactly as sent into a pipe or a file. On a terminal, its control characters are shown as `?`
    // (a sender's escape sequences must not drive the terminal), with a final newline.
    if (io.stdout.isTTY) io.stdout.write(`${printable(push.payload).replace(/\n?$/, '\n')}`);
    else io.stdout.write(push.payload);
  }
  ctx.note(
    push.views_remaining > 0
      ? `${push.views_remaining} view${push.views_remaining === 1 ? '' : 's'} left until ${push.expires_at}`
      : 'that was the last view: the push is now expired',
  );
}

export const get: Command = {
  words: ['get'],
  summary:
    'Retrieve a push (counts as a view). An end-to-end link (#k=…) is decrypted here: the key is never sent. Prints the payload on stdout and saves the files; asks for a passphrase (without echo) when the push has one.',
  args: 'LINK|TOKEN',
  positionals: { min: 1, max: 1 },
  options: { ...PASSPHRASE_IN, ...OUTPUT },
  details:
    'The request goes to the instance of the link (or to --server). A link without its #k=… key, of an end-to-end\nencrypted push, is refused before any view is spent.',
  async run(ctx: Context, args: Args) {
    const target = pushTarget(args.positionals[0]!);
    const { client, connection } = await ctx.client(target.origin);
    // A bare token becomes the link of the server's push page; retrieveLink first checks (no view) that a link
    // without a key is not of an encrypted push.
    const link = target.link ?? `${connection.baseUrl}/p/${target.urlToken}`;
    const push = await withPassphrase(ctx, (passphrase) => client.retrieveLink(link, { passphrase }));
    await deliverSecret(ctx, client, push);
  },
};
