#!/usr/bin/env node
/**
 * npx @secret-push/conformance --base-url URL [--token T --token-b T2] [--email E --email-b E2]
 *   (or, kept out of the command line, shell history and `ps`: SECRET_PUSH_BASE_URL, SECRET_PUSH_TOKEN,
 *   SECRET_PUSH_TOKEN_B, SECRET_PUSH_EMAIL, SECRET_PUSH_EMAIL_B, SECRET_PUSH_BASE_URL_2 in the environment)
 *   [--profile full|stateless] [--format table|json|junit] [--only AREA[,AREA|ID…]] [--spec PATH] [--out FILE]
 *   [--max-body-bytes N] [--public-base-url URL] [--mail-domain D] [--mailbox-url URL] [--webhook-receiver H:P]
 *   [--grade [--faults NAME,…] | --grade-full | --list-faults]
 * Exit code 0 only when no requirement failed (with --grade: the baseline passed and every surviving fault is a
 * documented invisible one); 2 on bad arguments.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { MailboxMessage } from './context.js';
import { runSuite } from './runner.js';
import { exitCode, formatJson, formatJunit, formatTable } from './report.js';
import { REQUIREMENTS } from './runner.js';
import { FAULTS } from './grade/faults/index.js';
import { formatGrade, formatGradeJson, grade, gradeExitCode, selectFaults, type FaultResult } from './grade/grader.js';

const USAGE = `Usage: secret-push-conformance --base-url URL [options]

Each of the first six options may come from the environment variable named beside it instead (the option wins).
Give tokens that way: an argument shows in npm's banner, the shell's history and \`ps\`. No token is ever printed.

  --base-url URL        The installation, e.g. https://pwpush.example.org (the suite adds /api/v2/…)
                        [SECRET_PUSH_BASE_URL]
  --base-url-2 URL      Another process of the same installation (same database): cross-process checks
                        [SECRET_PUSH_BASE_URL_2]
  --token T             API token of user A (owner tests) [SECRET_PUSH_TOKEN]
  --token-b T2          API token of a second user B (403, ownership and recipient tests) [SECRET_PUSH_TOKEN_B]
  --email E             User A's email (legacy X-User-Email/X-User-Token test) [SECRET_PUSH_EMAIL]
  --email-b E2          User B's email (legacy pair with the wrong email) [SECRET_PUSH_EMAIL_B]
  --profile P           full (default) or stateless (only what a mock like Prism can meet)
  --format F            table (default), json or junit
  --only LIST           Comma-separated classes or IDs, e.g. CRE,PASS or ONCE-001
  --spec PATH           The bundled OpenAPI document (default: the one shipped with this package)
  --default-days N      The instance's expire_after_days default, when not 7
  --default-views N     The instance's expire_after_views default, when not 5
  --max-body-bytes N    The instance's request body limit in bytes (the 413 check sends N + 1 bytes)
  --public-base-url URL The instance's configured public base URL, when it is not --base-url (push links use it)
  --mail-domain D       The domain of the EMAIL class's recipients (default example.com, which takes no mail)
  --mailbox-url URL     Reads the recipients' mailbox for the delivery check: GET URL?to=<address> answers a JSON
                        array of {"subject","text","html"}, the messages that reached that address
  --webhook-receiver H:P Listens on host:port for the HOOK class's deliveries (an address the target can reach and
                        may send to; port 0: any free port)
  --out FILE            Also write the formatted result to FILE
  --list                Print the requirements (ID, class, source) and exit

Grading the suite (run it against a correct instance through a proxy that injects one fault at a time):
  --grade               Print the kill rate (faults caught / faults injected) and the surviving faults
  --faults LIST         Comma-separated fault names to inject (default: all)
  --grade-full          Run every requirement under each fault (which ones catch it), not only up to the first failure
  --list-faults         Print the faults (name, class, the bug it models, expected killers) and exit`;

/** The options that may come from the environment instead, and their variables. */
const FROM_ENVIRONMENT = {
  'base-url': 'SECRET_PUSH_BASE_URL',
  'base-url-2': 'SECRET_PUSH_BASE_URL_2',
  token: 'SECRET_PUSH_TOKEN',
  'token-b': 'SECRET_PUSH_TOKEN_B',
  email: 'SECRET_PUSH_EMAIL',
  'email-b': 'SECRET_PUSH_EMAIL_B',
} as const;

/**
 * Everything the CLI prints goes through this: each token it was given is replaced by a name, so no report, reason,
 * stack trace or echoed answer can show one (a faulty target could echo a token back).
 */
function redactor(tokens: (string | undefined)[]): (text: string) => string {
  const named = tokens
    .map((token, i) => ({ token, name: i === 0 ? '[token A]' : '[token B]' }))
    .filter((t): t is { token: string; name: string } => typeof t.token === 'string' && t.token.length > 0);
  return (text) => named.reduce((out, { token, name }) => out.split(token).join(name), text);
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'base-url': { type: 'string' },
        'base-url-2': { type: 'string' },
        token: { type: 'string' },
        'token-b': { type: 'string' },
        email: { type: 'string' },
        'email-b': { type: 'string' },
        profile: { type: 'string', default: 'full' },
        format: { type: 'string', default: 'table' },
        only: { type: 'string' },
        spec: { type: 'string' },
        'default-days': { type: 'string' },
        'default-views': { type: 'string' },
        'max-body-bytes': { type: 'string' },
        'public-base-url': { type: 'string' },
        'mail-domain': { type: 'string' },
        'mailbox-url': { type: 'string' },
        'webhook-receiver': { type: 'string' },
        out: { type: 'string' },
        list: { type: 'boolean' },
        grade: { type: 'boolean' },
        faults: { type: 'string' },
        'grade-full': { type: 'boolean' },
        'list-faults': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  for (const [option, variable] of Object.entries(FROM_ENVIRONMENT)) {
    if (values[option] === undefined && env[variable]) values[option] = env[variable];
  }
  if (argv.some((a) => /^--token(-b)?(=|$)/.test(a))) {
    console.error(
      'Note: a token given as an argument shows in the shell history and `ps`; set SECRET_PUSH_TOKEN and ' +
        'SECRET_PUSH_TOKEN_B instead.',
    );
  }
  const redact = redactor([values.token as string | undefined, values['token-b'] as string | undefined]);
  if (values.list) {
    for (const r of REQUIREMENTS) console.log(`${r.id.padEnd(9)} ${r.stateless ? 'S' : ' '} ${r.title}  [${r.source}]`);
    return 0;
  }
  if (values['list-faults']) {
    for (const f of FAULTS) {
      console.log(
        `${f.name.padEnd(32)} ${f.class.padEnd(7)} ${f.models}  [${f.killers.join(', ') || `invisible: ${f.invisible}`}]`,
      );
    }
    return 0;
  }
  const baseUrl = values['base-url'] as string | undefined;
  const profile = values.profile as string;
  const format = values.format as string;
  if (!baseUrl || !/^https?:\/\//.test(baseUrl)) {
    console.error(`--base-url (or SECRET_PUSH_BASE_URL): an http(s) URL is needed\n\n${USAGE}`);
    return 2;
  }
  if (!['full', 'stateless'].includes(profile) || !['table', 'json', 'junit'].includes(format)) {
    console.error(USAGE);
    return 2;
  }
  const maxBody = values['max-body-bytes'] as string | undefined;
  if (maxBody !== undefined && !/^[1-9][0-9]*$/.test(maxBody)) {
    console.error(`--max-body-bytes: a positive integer, got ${JSON.stringify(maxBody)}\n\n${USAGE}`);
    return 2;
  }
  const only = (values.only as string | undefined)
    ?.split(',')
    .map((s) => s.trim().toUpperCase())
    .filter(Boolean);
  const unknown = only?.filter((o) => !REQUIREMENTS.some((r) => r.area === o || r.id === o)) ?? [];
  if (unknown.length > 0) {
    console.error(`--only: no class or requirement ${unknown.join(', ')}\n\n${USAGE}`);
    return 2;
  }
  const receiverText = values['webhook-receiver'] as string | undefined;
  const receiverMatch = receiverText === undefined ? null : /^\[?([^\]]+?)\]?:([0-9]{1,5})$/.exec(receiverText);
  if (receiverText !== undefined && (!receiverMatch || Number(receiverMatch[2]) > 65535)) {
    console.error(`--webhook-receiver: host:port, got ${JSON.stringify(receiverText)}\n\n${USAGE}`);
    return 2;
  }
  const num = (key: string) => (values[key] === undefined ? undefined : Number(values[key]));
  const publicBaseUrl = values['public-base-url'] as string | undefined;
  if (publicBaseUrl !== undefined && !/^https?:\/\//.test(publicBaseUrl)) {
    console.error(`--public-base-url: an http(s) URL, got ${JSON.stringify(publicBaseUrl)}\n\n${USAGE}`);
    return 2;
  }
  const config = {
    baseUrl,
    baseUrl2: values['base-url-2'] as string | undefined,
    token: values.token as string | undefined,
    tokenB: values['token-b'] as string | undefined,
    email: values.email as string | undefined,
    emailB: values['email-b'] as string | undefined,
    profile: profile as 'full' | 'stateless',
    only,
    specPath: values.spec as string | undefined,
    defaultDays: num('default-days'),
    defaultViews: num('default-views'),
    maxBodyBytes: num('max-body-bytes'),
    publicBaseUrl,
    mailDomain: values['mail-domain'] as string | undefined,
    mailbox: mailboxFromUrl(values['mailbox-url'] as string | undefined),
    ...(receiverMatch ? { webhookReceiver: { host: receiverMatch[1]!, port: Number(receiverMatch[2]) } } : {}),
  };
  try {
    return await runAndPrint(config, values, redact);
  } catch (error) {
    // Whatever went wrong, its text is printed without the tokens.
    console.error(redact(String((error as Error)?.stack ?? error)));
    return 2;
  }
}

type Config = Parameters<typeof runSuite>[0];

/** Runs the suite (or grades it) and prints the report in the chosen format, through `redact`. */
async function runAndPrint(
  config: Config,
  values: Record<string, string | boolean | undefined>,
  redact: (text: string) => string,
): Promise<number> {
  const format = values.format as string;
  if (values.grade || values['grade-full']) {
    const faults = (values.faults as string | undefined)
      ?.split(',')
      .map((f) => f.trim())
      .filter(Boolean);
    try {
      selectFaults(faults);
    } catch (error) {
      console.error(`--faults: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    const progress = process.stderr.isTTY
      ? (f: FaultResult) => process.stderr.write(`${f.name} ${f.killed ? 'killed' : 'survived'}\x1b[K\r`)
      : undefined;
    const output = await grade({ ...config, faults, full: Boolean(values['grade-full']), onFault: progress });
    const text = format === 'json' ? formatGradeJson(output) : formatGrade(output, process.stdout.columns || 120);
    print(redact(text), values.out as string | undefined);
    return gradeExitCode(output);
  }
  const run = await runSuite({
    ...config,
    onResult:
      format === 'table' && process.stderr.isTTY ? (r) => process.stderr.write(`${r.id} ${r.status}\r`) : undefined,
  });
  const text =
    format === 'json'
      ? formatJson(run)
      : format === 'junit'
        ? formatJunit(run)
        : formatTable(run, process.stdout.columns || 120);
  print(redact(text), values.out as string | undefined);
  // Said on stderr too, whatever the format: every later requirement would have failed for this reason alone.
  if (run.rateLimited) console.error(redact(`\nThe run stopped early. ${run.rateLimited}`));
  return exitCode(run.results);
}

function print(text: string, out: string | undefined): void {
  console.log(text);
  if (out) writeFileSync(out, text + '\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error);
      process.exit(2);
    },
  );
}

/** `--mailbox-url`: the mailbox hook as an HTTP endpoint (GET `URL?to=<address>` → JSON array of messages). */
function mailboxFromUrl(url: string | undefined): ((address: string) => Promise<MailboxMessage[]>) | undefined {
  if (!url) return undefined;
  return async (address) => {
    const target = new URL(url);
    target.searchParams.set('to', address);
    const res = await fetch(target);
    if (!res.ok) throw new Error(`--mailbox-url answered ${res.status} for ${address}`);
    const body = (await res.json()) as unknown;
    if (!Array.isArray(body)) throw new Error('--mailbox-url must answer a JSON array of messages');
    return body as MailboxMessage[];
  };
}
