/**
 * `npm run users -- <command>`: the operator's user management, on the same settings and data dir as the server.
 * Without DATABASE_URL it joins the embedded cluster of a running server, or starts it for the duration of the
 * command. A new token is always the LAST line of output; a password is read from standard input (asked twice,
 * hidden, on a terminal), never from the command line (which other users of the machine can see).
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadSettings, SettingsError } from '../config/settings.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded.js';
import { ApiError } from '@secret-push/rules';
import { createCore, type Core } from '../core.js';
import { runWhenMain } from './run-main.js';

const USAGE = `usage: npm run users -- create EMAIL
       npm run users -- token EMAIL
       npm run users -- set-password EMAIL      (the password on standard input)
       npm run users -- revoke EMAIL
       npm run users -- reset-2fa EMAIL
       npm run users -- delete EMAIL
       npm run users -- grant-admin EMAIL
       npm run users -- revoke-admin EMAIL
       npm run users -- list

  create EMAIL         make a user and print a new API token (shown once)
  token EMAIL          replace the user's API token and print the new one (the old one stops working at once)
  set-password EMAIL   set the user's password for the web pages (/users/sign_in), read from standard input: the
                       first line, or asked twice without echo on a terminal; ends the user's web sessions
  revoke EMAIL         remove the user's API token: calls with it answer 401 (make a new one with "token")
  reset-2fa EMAIL      turn off the user's two-step sign-in (authenticator and recovery codes erased) and end their
                       web sessions, for someone who lost both; they sign in with their password and may turn it on again
  delete EMAIL         delete the user: its API token and sessions end, its active pushes are expired, then every
                       push it made is erased (secrets, files, records, audit logs), then the user
  grant-admin EMAIL    make the user an administrator: they may open the admin console at /admin (docs/admin.md)
  revoke-admin EMAIL   take that back (an address listed in PWPUSH_ADMIN_EMAILS stays an administrator)
  list                 every user: email, when made, password set, token made, token last used (within a minute)`;

/** Reads a password: the first line of piped input, or asked twice without echo on a terminal. */
export async function readPassword(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
  prompt: (text: string) => void = (t) => process.stderr.write(t),
): Promise<string> {
  if (!input.isTTY) {
    let text = '';
    for await (const chunk of input) text += String(chunk);
    return text.split(/\r?\n/)[0] ?? '';
  }
  const ask = (question: string) =>
    new Promise<string>((resolve) => {
      prompt(question);
      const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
      const rl = createInterface({ input, output: silent, terminal: true });
      rl.question('', (answer) => {
        rl.close();
        prompt('\n');
        resolve(answer);
      });
    });
  const first = await ask('New password: ');
  const second = await ask('Again: ');
  if (first !== second) throw new ApiError('validation_failed', 'The two passwords differ.', {});
  return first;
}

const date = (d: Date | null) => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-');

/** Expires every active push of the user through the push service (as its owner deleting it), then erases them all. */
async function deleteUser(core: Core, email: string, out: (line: string) => void): Promise<void> {
  const userId = await core.users.userIdOf(email);
  const { expired, pushes, workspaces } = await core.admin!.deleteUser(userId, 'npm run users');
  out(
    `deleted user ${email.trim().toLowerCase()}: ${expired} active push(es) expired, ${pushes} push(es) erased with their files and audit logs, ${workspaces} workspace(s) they were alone in deleted`,
  );
}

async function runCommand(
  core: Core,
  command: string,
  email: string,
  out: (line: string) => void,
  password: () => Promise<string>,
): Promise<void> {
  const who = email.trim().toLowerCase();
  if (command === 'create') {
    const { token } = await core.users.createUser(email);
    out(`created user ${who}; API token (shown once):`);
    out(token);
  } else if (command === 'token') {
    const token = await core.users.rotateToken(email);
    out(`new API token for ${who} (the old one no longer works):`);
    out(token);
  } else if (command === 'set-password') {
    await core.users.userIdOf(email);
    await core.web!.accounts.setPassword(email, await password());
    out(`password set for ${who}; they sign in at /users/sign_in (their other web sessions ended)`);
  } else if (command === 'revoke') {
    const had = await core.users.revokeToken(email);
    out(had ? `API token of ${who} revoked: calls with it now answer 401` : `${who} had no API token`);
  } else if (command === 'reset-2fa') {
    const userId = await core.users.userIdOf(email);
    await core.web!.twoFactor.reset(userId);
    await core.web!.accounts.endSessions(userId);
    out(`two-step sign-in of ${who} turned off (its secret and recovery codes erased); their web sessions ended`);
  } else if (command === 'delete') {
    await deleteUser(core, email, out);
  } else if (command === 'grant-admin' || command === 'revoke-admin') {
    const admin = command === 'grant-admin';
    await core.admin!.setAdminFlag(email, admin);
    out(
      admin
        ? `${who} is an administrator: they open the admin console at /admin`
        : `${who} is no longer flagged an administrator${core.settings.adminEmails.includes(who) ? ' (PWPUSH_ADMIN_EMAILS still lists them)' : ''}`,
    );
  } else {
    const users = await core.users.listUsers();
    out(['email', 'created', 'password', 'token made', 'token last used'].join('\t'));
    for (const u of users)
      out(
        [
          u.email,
          date(u.createdAt),
          u.hasPassword ? 'yes' : 'no',
          date(u.tokenCreatedAt),
          date(u.tokenLastUsedAt),
        ].join('\t'),
      );
    out(`${users.length} user(s)`);
  }
}

const WITH_EMAIL = ['create', 'token', 'set-password', 'revoke', 'reset-2fa', 'delete', 'grant-admin', 'revoke-admin'];

export async function runUsersCli(
  argv: string[],
  out: (line: string) => void,
  err: (line: string) => void,
  env = process.env,
  password: () => Promise<string> = () => readPassword(),
): Promise<number> {
  const [command, email, ...rest] = argv;
  if (argv.includes('-h') || argv.includes('--help')) {
    out(USAGE);
    return 0;
  }
  const valid =
    command === 'list'
      ? email === undefined
      : WITH_EMAIL.includes(command ?? '') && Boolean(email) && rest.length === 0;
  if (!valid) {
    err(USAGE);
    return 2;
  }

  let settings;
  try {
    settings = loadSettings(env);
  } catch (e) {
    if (e instanceof SettingsError) {
      err(`configuration error: ${e.message}`);
      return 1;
    }
    throw e;
  }

  let embedded: EmbeddedDatabase | null = null;
  let core: Core | null = null;
  try {
    if (!settings.databaseUrl) {
      embedded = await startEmbeddedPostgres({ dataDir: settings.dataDir });
      out(
        embedded.owner
          ? `started the embedded PostgreSQL in ${settings.dataDir}`
          : "using the running server's embedded PostgreSQL",
      );
      settings = { ...settings, databaseUrl: embedded.url };
    }
    core = await createCore(settings);
    await runCommand(core, command!, email ?? '', out, password);
    return 0;
  } catch (e) {
    if (e instanceof ApiError) {
      if (e.code === 'validation_failed' && e.details.fields?.email?.includes('is already registered')) {
        err(`error: a user with the email ${email} already exists (use "token ${email}" to get a new token)`);
      } else if (e.code === 'not_found') {
        err(`error: no user has the email ${email} (use "create ${email}" first)`);
      } else if (e.code === 'service_unavailable') {
        err('error: the database is unavailable');
      } else {
        err(`error: ${e.message}`);
      }
      return 1;
    }
    err(`error: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await core?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
  }
}

runWhenMain(import.meta.url, 'users.ts', runUsersCli);
