/**
 * Secrets typed by a person: asked on the terminal with echo off (raw mode: nothing typed is shown, not even stars),
 * or read from a file or from stdin, bounded in size before anything else is done with them. Never from argv, where
 * other users see it (`ps`) and the shell history keeps it.
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { CliError, EXIT } from './exit.js';
import type { CliIo } from './io.js';

/** The longest passphrase or token accepted from a prompt or a file (the API's passphrase limit is 1,024 characters). */
const MAX_LINE_BYTES = 4096;

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const CTRL_U = '\u0015';
const BACKSPACE = ['\u007f', '\b'];

/** Asks one question on the terminal without echo; resolves with what was typed (Enter ends it). */
export async function askHidden(io: CliIo, question: string, why: string): Promise<string> {
  const terminal = io.openTerminal();
  if (!terminal)
    throw new CliError(`no terminal to ask for ${why} on: ${ALTERNATIVES[why] ?? 'give it in a file'}`, EXIT.usage);
  const { input, output } = terminal;
  // Echo off before the question shows: what is typed once it is there is never echoed by the terminal.
  input.setRawMode(true);
  input.setEncoding('utf8');
  input.resume();
  output.write(question);
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const done = (error?: Error) => {
        input.off('data', onData);
        input.off('end', onEnd);
        output.write('\n');
        if (error) reject(error);
        else resolve(typed);
      };
      const onEnd = () => done(new CliError(`no ${why} given`, EXIT.usage));
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (char === '\r' || char === '\n') return done();
          if (char === CTRL_C) return done(new CliError('interrupted', EXIT.interrupted, 'interrupted'));
          if (char === CTRL_D && typed === '') return done(new CliError(`no ${why} given`, EXIT.usage));
          if (char === CTRL_U) typed = '';
          else if (BACKSPACE.includes(char)) typed = [...typed].slice(0, -1).join('');
          else if (char >= ' ') typed += char;
          if (Buffer.byteLength(typed) > MAX_LINE_BYTES)
            return done(new CliError(`the ${why} is longer than ${MAX_LINE_BYTES} bytes`, EXIT.invalid));
        }
      };
      input.on('data', onData);
      input.on('end', onEnd);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    terminal.close();
  }
}

const ALTERNATIVES: Record<string, string> = {
  'the passphrase': 'give it with --passphrase-file FILE',
  'the token': 'set SECRET_PUSH_TOKEN, or pipe it in with --token-stdin',
  'the secret': 'pipe it in (echo "$S" | secret-push push), or give --file',
};

/** Asks twice (a typo in a passphrase nobody can see would lock the recipient out). */
export async function askHiddenTwice(io: CliIo, question: string, why: string): Promise<string> {
  const first = await askHidden(io, question, why);
  if (first === '') throw new CliError(`an empty ${why} is not allowed`, EXIT.usage);
  const again = await askHidden(io, 'Again: ', why);
  if (again !== first) throw new CliError(`the two ${why}s differ`, EXIT.usage);
  return first;
}

/** Reads a whole stream, refusing (before holding more) anything over `maxBytes`. */
export async function readBounded(stream: NodeJS.ReadableStream, maxBytes: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > maxBytes) throw new CliError(`${what} is larger than ${formatBytes(maxBytes)}`, EXIT.invalid);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** A secret's one line from a file (`-`: stdin): the first line, without its line ending. */
export async function readSecretFile(io: CliIo, file: string, what: string): Promise<string> {
  let text: string;
  if (file === '-') {
    text = (await readBounded(io.stdin, MAX_LINE_BYTES, what)).toString('utf8');
  } else {
    const handle = await open(path.resolve(io.cwd, file), 'r').catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`cannot read ${what} file ${file}: ${error.code ?? error.message}`, EXIT.usage);
    });
    try {
      text = (await readBounded(handle.createReadStream(), MAX_LINE_BYTES, what)).toString('utf8');
    } finally {
      await handle.close();
    }
  }
  const line = text.split(/\r?\n/, 1)[0] ?? '';
  if (line === '') throw new CliError(`the ${what} file ${file === '-' ? '(stdin)' : file} is empty`, EXIT.usage);
  return line;
}

/** Drops one trailing line ending (`echo "$S" | secret-push push` adds one the secret does not have). */
export function withoutFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
