/**
 * The command table's shape and its one parser (Node's `util.parseArgs`, strict): every command declares its words,
 * options and arguments once, and the parser, `--help`, `secret-push help` and the shell completions are all read
 * from those declarations.
 */
import { parseArgs } from 'node:util';
import { usageError } from './exit.js';
import { Args } from './args.js';
import type { Context } from './context.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The value's name in help (`--views N`). */
  value?: string;
  help: string;
  /** What a shell may complete the value with: fixed words, or file names. */
  complete?: readonly string[] | 'file';
  /** Listed in completions but not in help (the refusals of `--token` and `--passphrase`). */
  hidden?: boolean;
}

export type Options = Record<string, OptionSpec>;

export interface Command {
  /** The words that name it: `['push']`, `['request', 'create']`. */
  words: readonly string[];
  summary: string;
  /** The arguments as help shows them (`LINK`, `[TEXT]`, `active|expired`). */
  args?: string;
  /** How many positional arguments it takes. */
  positionals: { min: number; max: number; complete?: readonly string[] | 'file' };
  options: Options;
  /** Longer help, after the options. */
  details?: string;
  run(ctx: Context, args: Args): Promise<number | void>;
}

/** Options every command takes. */
export const GLOBAL_OPTIONS: Options = {
  server: {
    type: 'string',
    value: 'URL',
    help: 'the instance to talk to (overrides SECRET_PUSH_URL and the profile; a token configured for another address is not sent)',
  },
  profile: {
    type: 'string',
    value: 'NAME',
    help: 'a profile of the config file (default: SECRET_PUSH_PROFILE, then default_profile)',
  },
  anonymous: { type: 'boolean', help: 'send no token' },
  json: { type: 'boolean', help: 'print one JSON document on stdout (errors as JSON on stderr)' },
  quiet: { type: 'boolean', short: 'q', help: 'print only the result: no notes, no progress bar' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
  // Refused on purpose, with the reason (declared so that their values are never echoed as unknown options).
  token: { type: 'string', hidden: true, help: 'refused: the token never goes on the command line' },
  passphrase: { type: 'string', hidden: true, help: 'refused: the passphrase never goes on the command line' },
};

/** Parses a command's arguments (global options included); a refusal for `--token` and `--passphrase`. */
export function parseCommand(command: Command, argv: string[]): Args {
  const options = { ...GLOBAL_OPTIONS, ...command.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // Node's message quotes the argument; an `--x=value` may hold a secret typed by mistake: keep only the name.
    const message = error instanceof Error ? error.message.replace(/=[^'"\s]*/g, '=…') : String(error);
    throw usageError(`${message.split('\n')[0]} (see: secret-push ${command.words.join(' ')} --help)`);
  }
  if (parsed.values.token !== undefined)
    throw usageError(
      'a token on the command line is visible to other users (ps) and kept in shell history: set SECRET_PUSH_TOKEN, or save it in a profile (secret-push config add)',
    );
  if (parsed.values.passphrase !== undefined)
    throw usageError(
      'a passphrase on the command line is visible to other users (ps) and kept in shell history: use --passphrase-prompt or --passphrase-file FILE',
    );
  const args = new Args(parsed.values, parsed.positionals);
  if (args.flag('help')) return args;
  const { min, max } = command.positionals;
  if (args.positionals.length < min)
    throw usageError(`missing ${command.args ?? 'argument'} (usage: secret-push ${usageLine(command)})`);
  if (args.positionals.length > max)
    throw usageError(`too many arguments (usage: secret-push ${usageLine(command)}); quote a text with spaces`);
  return args;
}

function usageLine(command: Command): string {
  return [...command.words, command.args, Object.keys(command.options).length ? '[options]' : undefined]
    .filter(Boolean)
    .join(' ');
}

function optionLines(options: Options): string[] {
  return Object.entries(options)
    .filter(([, o]) => !o.hidden)
    .map(([name, o]) => {
      const left = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.value ? ` ${o.value}` : ''}${o.multiple ? ' …' : ''}`;
      return `  ${left.padEnd(30)} ${o.help}`;
    });
}

export function commandHelp(command: Command): string {
  const lines = [`Usage: secret-push ${usageLine(command)}`, '', command.summary];
  if (Object.keys(command.options).length) lines.push('', 'Options:', ...optionLines(command.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  if (command.details) lines.push('', command.details);
  return `${lines.join('\n')}\n`;
}
