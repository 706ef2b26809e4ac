/**
 * `npm run users -- create EMAIL` makes a user and prints its API token; `npm run users -- token EMAIL` rotates the
 * token (the old one stops working) and prints the new one. The token is always the LAST line of output.
 *
 * Uses the same settings and data dir as the server. Without DATABASE_URL it joins the embedded cluster of a running
 * server, or starts it for the duration of the command.
 */
import { loadSettings, SettingsError } from '../config/settings.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded.js';
import { createCore, DomainError } from '../core.js';

const USAGE = `usage: npm run users -- create EMAIL
       npm run users -- token EMAIL

  create EMAIL   make a user and print a new API token (shown once)
  token EMAIL    replace the user's API token and print the new one`;

export async function runUsersCli(argv: string[], out: (line: string) => void, err: (line: string) => void, env = process.env): Promise<number> {
  const [command, email, ...rest] = argv;
  if (argv.includes('-h') || argv.includes('--help')) {
    out(USAGE);
    return 0;
  }
  if ((command !== 'create' && command !== 'token') || !email || rest.length > 0) {
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
  let core: Awaited<ReturnType<typeof createCore>> | null = null;
  try {
    if (!settings.databaseUrl) {
      embedded = await startEmbeddedPostgres({ dataDir: settings.dataDir });
      out(embedded.owner ? `started the embedded PostgreSQL in ${settings.dataDir}` : 'using the running server\'s embedded PostgreSQL');
      settings = { ...settings, databaseUrl: embedded.url };
    }
    core = await createCore(settings);
    if (command === 'create') {
      const { token } = await core.users.createUser(email);
      out(`created user ${email.trim().toLowerCase()}; API token (shown once):`);
      out(token);
    } else {
      const token = await core.users.rotateToken(email);
      out(`new API token for ${email.trim().toLowerCase()} (the old one no longer works):`);
      out(token);
    }
    return 0;
  } catch (e) {
    if (e instanceof DomainError) {
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

const isMain = import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('/cli/users.ts');
if (isMain) {
  runUsersCli(
    process.argv.slice(2),
    (line) => process.stdout.write(`${line}\n`),
    (line) => process.stderr.write(`${line}\n`),
  ).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}
