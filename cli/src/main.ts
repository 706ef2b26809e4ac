/**
 * `secret-push`: finds the command in argv (global options may come first), parses its options, runs it, and turns
 * any failure into a message on stderr (JSON with --json) and the documented exit code.
 */
import { type Command, commandHelp, parseCommand } from './command.js';
import { configCommands } from './commands/config.js';
import { keyCommands } from './commands/keys.js';
import { audit, expire, list, preview } from './commands/manage.js';
import { push } from './commands/push.js';
import { requestCommands } from './commands/requests.js';
import { get } from './commands/retrieve.js';
import { webhookCommands } from './commands/webhooks.js';
import { bashCompletion, fishCompletion, zshCompletion } from './completion.js';
import { createContext } from './context.js';
import { describeError, EXIT, exitCodeOf, usageError } from './exit.js';
import { type CliIo, processIo } from './io.js';
import { VERSION } from './version.js';

const info: Command = {
  words: ['info'],
  summary: 'What the instance is and which features it offers (end-to-end encryption, requests, webhooks, …).',
  positionals: { min: 0, max: 0 },
  options: {},
  async run(ctx) {
    const { client, connection } = await ctx.client();
    const report = await ctx.version(client);
    const f = report.features;
    const e2e = f.pushes.client_encryption;
    const lines = [
      `server:      ${connection.baseUrl}${connection.profile ? ` (profile ${connection.profile})` : ''}`,
      `version:     ${report.application_version} (API ${report.api_version}, ${report.edition})`,
      `token:       ${connection.token ? 'sent' : 'none (anonymous)'}`,
      `anonymous:   ${f.anonymous_access ? 'allowed' : 'not allowed'}`,
      `end-to-end:  ${!e2e?.enabled ? 'not offered' : e2e.required ? 'required' : e2e.default ? 'default' : 'allowed'}`,
      `files:       ${f.pushes.file_attachments.enabled ? (f.pushes.file_attachments.requires_authentication ? 'with a token' : 'yes') : 'no'}`,
      `requests:    ${f.requests.enabled ? (f.requests.sealed_answers?.length ? 'yes, sealed answers' : 'yes') : 'no'}`,
      `webhooks:    ${f.webhooks?.enabled ? 'yes' : 'no'}`,
      `email:       ${f.pushes.email_auto_dispatch ? 'yes' : 'no'}`,
    ];
    ctx.result({ server: connection.baseUrl, ...report }, lines.join('\n'));
  },
};

const completion: Command = {
  words: ['completion'],
  summary: 'Print the shell completion script: source <(secret-push completion bash), or zsh, or fish.',
  args: 'bash|zsh|fish',
  positionals: { min: 1, max: 1, complete: ['bash', 'zsh', 'fish'] },
  options: {},
  async run(ctx, args) {
    const shell = args.positionals[0];
    const script =
      shell === 'bash'
        ? bashCompletion(COMMANDS)
        : shell === 'zsh'
          ? zshCompletion(COMMANDS)
          : shell === 'fish'
            ? fishCompletion(COMMANDS)
            : undefined;
    if (script === undefined) throw usageError('completion for bash, zsh or fish');
    ctx.io.stdout.write(script);
  },
};

const EXIT_CODE_HELP = `Exit codes:
  0    done
  1    anything else (a server error, an unexpected answer, a file that cannot be written)
  2    the command line is wrong
  3    no server configured, or a config file that is malformed or readable by other users
  4    the token was refused (401) or the action is not allowed (403)
  5    not found, expired, deleted or closed, or a request not answered yet
  6    a passphrase is needed, was wrong, or too many wrong ones were tried
  7    the input was refused (400, 413, 422) or is too large
  8    rate limited or over a storage quota (429)
  9    no answer: the server is unreachable, timed out, or unavailable (503)
  10   end-to-end encryption: no key or a wrong one, or the instance does not offer it
  130  interrupted`;

const help: Command = {
  words: ['help'],
  summary: 'Help on a command (secret-push help push), or on exit codes (secret-push help exit-codes).',
  args: '[COMMAND]',
  positionals: { min: 0, max: 2 },
  options: {},
  async run(ctx, args) {
    const words = args.positionals;
    if (words[0] === 'exit-codes') return void ctx.io.stdout.write(`${EXIT_CODE_HELP}\n`);
    if (words.length === 0) return void ctx.io.stdout.write(overview());
    const command = COMMANDS.find((c) => c.words.join(' ') === words.join(' '));
    if (command) return void ctx.io.stdout.write(commandHelp(command));
    const group = COMMANDS.filter((c) => c.words[0] === words[0] && c.words.length === 2);
    if (group.length === 0) throw usageError(`no command ${JSON.stringify(words.join(' '))} (see: secret-push help)`);
    ctx.io.stdout.write(groupHelp(words[0]!, group));
  },
};

const COMMANDS: Command[] = [
  push,
  get,
  preview,
  expire,
  audit,
  list,
  ...requestCommands,
  ...webhookCommands,
  ...keyCommands,
  ...configCommands,
  info,
  completion,
  help,
];

/** A command's line in a list: its words and arguments, and its summary up to the first `: `, `; ` or `. `. */
const listed = (c: Command) =>
  `  ${[...c.words, c.args ?? ''].join(' ').padEnd(34)} ${c.summary.split(/: |; |\. /)[0]!.replace(/\.$/, '')}`;

function overview(): string {
  const rows = COMMANDS.map(listed);
  return `secret-push ${VERSION}: push secrets from a terminal (Secret Push, Password Pusher compatible).

Usage: secret-push <command> [options]

Commands:
${rows.join('\n')}

Configuration: SECRET_PUSH_URL (or --server URL) and SECRET_PUSH_TOKEN, or profiles in the config file
(secret-push config add NAME --server URL; secret-push config path). The token is never an argument.
Every command takes --json (one JSON document on stdout) and --help.

${EXIT_CODE_HELP}
`;
}

function groupHelp(group: string, commands: Command[]): string {
  const rows = commands.map(listed);
  return `Usage: secret-push ${group} <command> [options]\n\nCommands:\n${rows.join('\n')}\n`;
}

/** Global options that take a value: their value is not a command word. */
const VALUE_OPTIONS = new Set(['--server', '--profile']);

/** The command named in argv, and argv without its words. */
function findCommand(argv: string[]): { command: Command | undefined; rest: string[]; words: string[] } {
  const wordAt: number[] = [];
  for (let i = 0; i < argv.length && wordAt.length < 2; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (VALUE_OPTIONS.has(arg)) i++;
      continue;
    }
    wordAt.push(i);
    if (wordAt.length === 1 && !COMMANDS.some((c) => c.words.length === 2 && c.words[0] === arg)) break;
  }
  const words = wordAt.map((i) => argv[i]!);
  const command =
    COMMANDS.find((c) => c.words.length === words.length && c.words.every((w, i) => w === words[i])) ??
    COMMANDS.find((c) => c.words.length === 1 && c.words[0] === words[0]);
  const used = command ? wordAt.slice(0, command.words.length) : [];
  return { command, rest: argv.filter((_, i) => !used.includes(i)), words };
}

function reportFailure(io: CliIo, error: unknown, json: boolean): number {
  const code = exitCodeOf(error);
  const { message, code: errorCode, fields } = describeError(error);
  if (json) {
    io.stderr.write(
      `${JSON.stringify({ error: message, code: errorCode ?? null, exit_code: code, ...(fields ? { errors: fields } : {}) })}\n`,
    );
  } else {
    io.stderr.write(`secret-push: ${message}\n`);
    for (const field of fields ?? []) io.stderr.write(`  ${field}\n`);
  }
  return code;
}

/** Runs one command line; resolves with the exit code (never throws). */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const json = argv.includes('--json');
  try {
    const { command, rest, words } = findCommand(argv);
    if (!command) {
      if (words.length === 0) {
        io.stdout.write(overview());
        return argv.some((a) => a === '--help' || a === '-h') ? EXIT.ok : EXIT.usage;
      }
      const group = COMMANDS.filter((c) => c.words[0] === words[0]);
      if (group.length > 0) {
        io.stderr.write(groupHelp(words[0]!, group));
        return argv.some((a) => a === '--help' || a === '-h') ? EXIT.ok : EXIT.usage;
      }
      throw usageError(`unknown command ${JSON.stringify(words[0])} (see: secret-push help)`);
    }
    const args = parseCommand(command, rest);
    if (args.flag('help')) {
      io.stdout.write(commandHelp(command));
      return EXIT.ok;
    }
    const result = await command.run(createContext(io, args), args);
    return typeof result === 'number' ? result : EXIT.ok;
  } catch (error) {
    return reportFailure(io, error, json);
  }
}
