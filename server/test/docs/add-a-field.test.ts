/**
 * The recipe "How to add a field to a push" (ARCHITECTURE.md) is checked by doing it (issue 21): in a scratch copy of
 * the repository's files, this test adds an optional string `reference` to pushes (accepted on create, stored,
 * returned in every record) with exactly the recipe's edits, then runs the checks the recipe relies on:
 * `check:generated` (stale before `npm run generate`, fresh after), the compiler over the whole repository, the
 * schema test, the contract's example and form tests, the conformance self-test and the suite's own test, and a
 * round trip through the real server and the generated SDK. It asserts that
 * - every check passes with every edit, and the field round-trips (create with it, read it back, list it);
 * - the hand-edited files (the spec's YAML, the migration and generated files aside) are at most 6, and are exactly
 *   the files the recipe in ARCHITECTURE.md names;
 * - leaving any one of those edits out makes a named check fail (the compiler pointing at the file, or a named test).
 *
 * The scratch copy: every file git knows in the working tree (tracked, or new and not ignored), with node_modules
 * made of links to the repository's packages, except the workspace packages, which link to the copy's own folders.
 * The compiler's omission runs use a narrow tsconfig (the rules and the push tables, where the errors surface) rather
 * than the whole repository, to keep the test within a few minutes on two cores.
 */
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

interface Edit {
  /** Where the new text goes: after this text (which must occur exactly once), or before it with `before`. */
  anchor: string | RegExp;
  insert: string;
  before?: boolean;
}

/** What fails when a step is left out: the compiler, pointing at a file, or a named test. */
type Flag = { by: 'tsc'; pointsAt: string } | { by: 'vitest'; files: string[]; test: string; filter?: string };

/** One file of the recipe: its edits, and what fails when they are left out. */
interface Step {
  file: string;
  kind: 'spec' | 'migration' | 'hand';
  edits: Edit[];
  /** A new file's text (the migration). */
  create?: string;
  flaggedBy?: Flag;
}

const MIGRATION = 'Migration20991231000000_reference';

const FIELD_DOC = `The creator's own reference for the push (a ticket number, say), returned in every record.`;

/** The spec's edits (not counted by the recipe): the input, the record, the form field, the example records. */
function specSteps(): Step[] {
  const examples = readdirSync(path.join(root, 'openapi/components/examples'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `openapi/components/examples/${f}`)
    .filter((f) => /^\s+passphrase_protected: /m.test(readFileSync(path.join(root, f), 'utf8')));
  return [
    {
      file: 'openapi/components/schemas/PushInput.yaml',
      kind: 'spec',
      edits: [
        {
          anchor: '\nallOf:\n',
          before: true,
          insert: `\n  reference:\n    type: string\n    maxLength: 255\n    description: ${FIELD_DOC}`,
        },
      ],
    },
    {
      file: 'openapi/components/schemas/Push.yaml',
      kind: 'spec',
      edits: [
        { anchor: '  - passphrase_protected\n', insert: '  - reference\n' },
        {
          anchor: '  json_url:\n',
          before: true,
          insert: `  reference:\n    type: [string, 'null']\n    maxLength: 255\n    description: ${FIELD_DOC}\n`,
        },
      ],
    },
    {
      file: 'openapi/components/schemas/CreatePushUrlencoded.yaml',
      kind: 'spec',
      edits: [
        {
          anchor: /\n$/,
          insert: "  push[reference]:\n    type: string\n    maxLength: 255\n    description: '`reference`.'\n",
        },
      ],
    },
    ...examples.map((file): Step => ({
      file,
      kind: 'spec',
      // Every record of the example (single records and list items), at the record's own indentation.
      edits: [{ anchor: /^(\s+)passphrase_protected: .*\n/gm, insert: '$1reference: null\n' }],
    })),
  ];
}

/** The recipe's steps after the spec, in its order (ARCHITECTURE.md, "How to add a field to a push"). */
const CODE_STEPS: Step[] = [
  {
    file: `server/src/db/migrations/${MIGRATION}.ts`,
    kind: 'migration',
    edits: [],
    create: `import { Migration } from '@mikro-orm/migrations';

export class ${MIGRATION} extends Migration {
  override name = '${MIGRATION}';

  override up(): void {
    this.addSql(\`alter table "pushes" add column "reference" text null;\`);
  }

  override down(): void {
    this.addSql(\`alter table "pushes" drop column "reference";\`);
  }
}
`,
  },
  {
    file: 'server/src/db/migrations/index.ts',
    kind: 'hand',
    edits: [
      {
        anchor: '\nexport const migrationsList = [',
        before: true,
        insert: `import { ${MIGRATION} } from './${MIGRATION}.js';\n`,
      },
      { anchor: /\n\];\n$/, before: true, insert: `\n  { name: '${MIGRATION}', class: ${MIGRATION} },` },
    ],
    flaggedBy: {
      by: 'vitest',
      files: ['server/test/domain/schema.test.ts'],
      test: 'lists every migration file of the folder, in order',
    },
  },
  {
    file: 'rules/src/push-state.ts',
    kind: 'hand',
    edits: [
      { anchor: '  recipientEmails: string[];\n}\n', before: true, insert: '  reference: string | null;\n' },
      {
        anchor: '    expiresAt: new Date(now.getTime() + valid.expireAfterSeconds * 1000),\n',
        insert: '    reference: valid.reference,\n',
      },
      { anchor: '    html_url: htmlUrl(base, state),\n', insert: '    reference: state.reference,\n' },
    ],
    flaggedBy: { by: 'tsc', pointsAt: 'rules/src/push-state.ts' },
  },
  {
    file: 'rules/src/push-input.ts',
    kind: 'hand',
    edits: [
      {
        anchor: '  recipientEmails: string[];\n}\n',
        insert: '  reference: string | null;\n',
        before: true,
      },
      { anchor: '    ...access,\n  };\n', insert: '    reference: push.reference ?? null,\n', before: true },
    ],
    flaggedBy: { by: 'tsc', pointsAt: 'rules/src/push-state.ts' },
  },
  {
    file: 'server/src/push/push-tables.ts',
    kind: 'hand',
    edits: [
      {
        anchor: "  storedBytes: column.int('stored_bytes'),\n",
        insert: "  reference: column.textOrNull('reference'),\n",
      },
    ],
    flaggedBy: { by: 'tsc', pointsAt: 'server/src/push/push-tables.ts' },
  },
  {
    file: 'conformance/test/broken-server.ts',
    kind: 'hand',
    edits: [
      { anchor: '  retrieval_step: boolean;\n', insert: '  reference: string | null;\n' },
      { anchor: '      passphrase_protected: p.passphrase !== null,\n', insert: '      reference: p.reference,\n' },
      {
        anchor: '        retrieval_step: (fields.retrieval_step as boolean) ?? false,\n',
        insert: '        reference: (fields.reference as string | undefined) ?? null,\n',
      },
    ],
    flaggedBy: {
      by: 'vitest',
      files: ['conformance/test/broken-server.test.ts'],
      test: 'passes everything the fixture implements when every fault is off',
      filter: 'passes everything the fixture implements',
    },
  },
  {
    file: 'conformance/test/suite.test.ts',
    kind: 'hand',
    edits: [
      {
        anchor: '      passphrase_protected: false,\n      client_encryption: null,\n',
        insert: '      reference: null,\n',
      },
    ],
    flaggedBy: { by: 'vitest', files: ['conformance/test/suite.test.ts'], test: 'accepts a conforming push retrieval' },
  },
];

/** The round trip, a test of the scratch copy only: create with the field through HTTP and the SDK, read it back. */
const PROBE_FILE = 'server/test/api/add-a-field-probe.test.ts';
const PROBE = `import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPush, getPush, listActivePushes } from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData } from './support/sdk.js';

let api: RealApi;
beforeAll(async () => {
  api = await startRealApi();
});
afterAll(async () => {
  await api?.stop();
});

it('round-trips the new field: create, retrieve, list; null when not given', async () => {
  const owner = await api.user('owner@example.org');
  const auth = bearer(owner.token);
  const made = expectData(
    await createPush({ client: api.client, body: { push: { payload: 'x', reference: 'INV-42' } }, auth }),
    201,
  );
  expect(made.reference).toBe('INV-42');
  const read = expectData(await getPush({ client: api.client, path: { url_token: made.url_token }, auth }));
  expect(read.reference).toBe('INV-42');
  const form = await api.raw('/api/v2/pushes', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Bearer ' + owner.token },
    body: 'push[payload]=y&push[reference]=INV-43',
  });
  expect(form.status).toBe(201);
  expect(form.body.reference).toBe('INV-43');
  const plain = expectData(await createPush({ client: api.client, body: { push: { payload: 'z' } }, auth }), 201);
  expect(plain.reference).toBeNull();
  const listed = expectData(await listActivePushes({ client: api.client, auth }));
  expect(Object.fromEntries(listed.map((p) => [p.url_token, p.reference]))).toEqual({
    [made.url_token]: 'INV-42',
    [form.body.url_token]: 'INV-43',
    [plain.url_token]: null,
  });
  expect(api.checker.violations).toEqual([]);
});
`;

/** The tsconfig of the compiler's omission runs: the files where a missed edit surfaces. */
const NARROW_TSCONFIG = 'tsconfig.add-a-field.json';

// ---------------------------------------------------------------------------------------------------------------------

interface Ran {
  status: number;
  output: string;
}

let scratch: string;
let env: NodeJS.ProcessEnv;
const timings: Record<string, number> = {};

function runIn(cwd: string, command: string, args: string[], label: string): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      timings[label] = (timings[label] ?? 0) + (Date.now() - started);
      const status = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ status, output: `${stdout}${stderr}` });
    });
  });
}

const node = (args: string[], label: string) => runIn(scratch, process.execPath, args, label);

/** Applies a step's edits to a text; throws, naming the step, when an anchor is missing or not unique. */
function applyEdits(step: Step, text: string): string {
  let out = text;
  for (const edit of step.edits) {
    if (typeof edit.anchor === 'string') {
      const at = out.indexOf(edit.anchor);
      if (at < 0 || out.indexOf(edit.anchor, at + 1) >= 0)
        throw new Error(`${step.file}: the recipe's anchor ${JSON.stringify(edit.anchor)} is not there exactly once`);
      const cut = edit.before ? at : at + edit.anchor.length;
      out = out.slice(0, cut) + edit.insert + out.slice(cut);
    } else {
      const matches = out.match(
        edit.anchor.global ? edit.anchor : new RegExp(edit.anchor.source, edit.anchor.flags + 'g'),
      );
      if (!matches || (!edit.anchor.global && matches.length !== 1))
        throw new Error(`${step.file}: the recipe's anchor ${String(edit.anchor)} does not match as expected`);
      out = out.replace(edit.anchor, (match: string, ...groups: unknown[]) => {
        const inserted = edit.insert.replace(/\$(\d)/g, (_, n: string) => String(groups[Number(n) - 1] ?? ''));
        return edit.before ? inserted + match : match + inserted;
      });
    }
  }
  return out;
}

const original = new Map<string, string>();

function applyStep(step: Step): void {
  const file = path.join(scratch, step.file);
  if (step.create !== undefined) {
    writeFileSync(file, step.create);
    return;
  }
  if (!original.has(step.file)) original.set(step.file, readFileSync(file, 'utf8'));
  writeFileSync(file, applyEdits(step, original.get(step.file)!));
}

function undoStep(step: Step): void {
  if (step.create !== undefined) rmSync(path.join(scratch, step.file));
  else writeFileSync(path.join(scratch, step.file), original.get(step.file)!);
}

/** The copy: every file git knows in the working tree; node_modules linking to the repository's, workspaces to ours. */
async function makeScratch(): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-add-a-field-'));
  const listed = await runIn(root, 'git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], 'copy');
  expect(listed.status, listed.output).toBe(0);
  for (const file of listed.output.split('\0').filter(Boolean)) {
    if (!existsSync(path.join(root, file))) continue; // deleted in the working tree
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(root, file), path.join(dir, file));
  }
  const workspaces = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { workspaces: string[] })
    .workspaces;
  mkdirSync(path.join(dir, 'node_modules/@secret-push'), { recursive: true });
  for (const entry of readdirSync(path.join(root, 'node_modules'))) {
    if (entry === '@secret-push' || entry === '.vite' || entry === '.cache') continue;
    symlinkSync(path.join(root, 'node_modules', entry), path.join(dir, 'node_modules', entry));
  }
  for (const workspace of workspaces) {
    const name = (JSON.parse(readFileSync(path.join(root, workspace, 'package.json'), 'utf8')) as { name: string })
      .name;
    symlinkSync(path.join(dir, workspace), path.join(dir, 'node_modules', name));
    const own = path.join(root, workspace, 'node_modules');
    if (existsSync(own)) symlinkSync(own, path.join(dir, workspace, 'node_modules'));
  }
  writeFileSync(
    path.join(dir, NARROW_TSCONFIG),
    JSON.stringify({ extends: './tsconfig.json', include: ['rules/src/**/*.ts', 'server/src/push/push-tables.ts'] }),
  );
  return dir;
}

interface VitestReport {
  testResults: { name: string; assertionResults: { title: string; status: string }[] }[];
}

/** Runs vitest in the scratch copy on some files; the status of each named test. */
async function vitest(files: string[], label: string, filter?: string): Promise<Map<string, string>> {
  const report = path.join(scratch, `vitest-${label.replace(/\W+/g, '-')}.json`);
  rmSync(report, { force: true });
  const ran = await node(
    [
      path.join(scratch, 'node_modules/vitest/vitest.mjs'),
      'run',
      ...files,
      ...(filter ? ['-t', filter] : []),
      '--reporter=json',
      `--outputFile=${report}`,
    ],
    label,
  );
  if (!existsSync(report)) throw new Error(`vitest wrote no report (exit ${ran.status}):\n${ran.output}`);
  const parsed = JSON.parse(readFileSync(report, 'utf8')) as VitestReport;
  const statuses = new Map<string, string>();
  for (const file of parsed.testResults)
    for (const test of file.assertionResults) statuses.set(test.title, test.status);
  return statuses;
}

const tsc = (project: string, label: string) =>
  node([path.join(scratch, 'node_modules/typescript/bin/tsc'), '-p', project, '--noEmit', '--pretty', 'false'], label);

/** The files the recipe in ARCHITECTURE.md counts: the first path of each numbered step not marked "not counted". */
function recipeFiles(): string[] {
  const doc = readFileSync(path.join(root, 'ARCHITECTURE.md'), 'utf8');
  const section = /\n## How to add a field to a push\n([\s\S]*?)\n## /.exec(doc)?.[1] ?? '';
  return [...section.matchAll(/^\d+\. (.*)$/gm)]
    .filter((m) => !m[1]!.includes('(not counted)'))
    .map((m) => /`([^`]+)`/.exec(m[1]!)?.[1] ?? m[1]!);
}

const STEPS = [...specSteps(), ...CODE_STEPS];
const HAND = STEPS.filter((s) => s.kind === 'hand');

// Checks of the full run with every edit.
const ALL_TESTS = {
  files: [
    'server/test/domain/schema.test.ts',
    'conformance/test/suite.test.ts',
    'conformance/test/broken-server.test.ts',
    'openapi/contract.test.ts',
    PROBE_FILE,
  ],
  // The broken-server and contract files hold slow tests the recipe does not rely on: only these run.
  filter: [
    'the committed migrations',
    'the migrations create exactly the columns',
    'lists every migration file',
    'accepts a conforming push retrieval',
    'passes everything the fixture implements when every fault is off',
    'validates every named example against its schema',
    'names one form field push\\[<field>\\] for every PushInput field',
    'round-trips the new field',
  ].join('|'),
};

describe('the recipe "How to add a field to a push"', () => {
  let generatedStale: Ran;
  let generatedFresh: Ran;
  let typecheck: Ran;
  let results: Map<string, string>;

  beforeAll(async () => {
    const started = Date.now();
    env = { ...process.env };
    for (const key of Object.keys(env)) if (key.startsWith('VITEST') || key === 'TEST') delete env[key];
    env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${env.PATH ?? ''}`;
    // The nested vitest uses this run's PostgreSQL cluster rather than starting its own.
    env.TEST_DATABASE_URL = inject('pgAdminUrl');
    scratch = await makeScratch();
    env.PATH = `${path.join(scratch, 'node_modules/.bin')}${path.delimiter}${env.PATH}`;
    for (const step of STEPS) applyStep(step);
    writeFileSync(path.join(scratch, PROBE_FILE), PROBE);
    generatedStale = await node(['scripts/check-generated.mjs'], 'check:generated');
    generatedFresh = await node(['scripts/check-generated.mjs'], 'check:generated');
    typecheck = await tsc('tsconfig.json', 'tsc (whole repository)');
    results = await vitest(ALL_TESTS.files, 'vitest (every edit)', ALL_TESTS.filter);
    timings['set-up, all checks'] = Date.now() - started;
  }, 600_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    console.log(`add-a-field timings (ms): ${JSON.stringify(timings)}`);
  });

  it('regenerates: check:generated fails on the new spec until npm run generate, then passes', () => {
    expect(generatedStale.status, generatedStale.output).toBe(1);
    for (const file of [
      'openapi/bundled/openapi.json',
      'sdk/src/generated/types.gen.ts',
      'rules/src/generated/types.gen.ts',
    ])
      expect(generatedStale.output).toContain(file);
    expect(generatedFresh.status, generatedFresh.output).toBe(0);
  });

  it('compiles the whole repository with every edit (mock, test double, handlers and services need nothing)', () => {
    expect(typecheck.output.trim()).toBe('');
    expect(typecheck.status).toBe(0);
  });

  it('passes every check it relies on with every edit, and the field round-trips through the server', () => {
    const expected = [
      'the committed migrations create what the entity definitions describe',
      'the migrations create exactly the columns the tables outside the ORM are described with',
      'lists every migration file of the folder, in order',
      'accepts a conforming push retrieval',
      'passes everything the fixture implements when every fault is off',
      'validates every named example against its schema with Ajv 2020',
      'names one form field push[<field>] for every PushInput field, files only as multipart parts',
      'round-trips the new field: create, retrieve, list; null when not given',
    ];
    expect(Object.fromEntries(expected.map((t) => [t, results.get(t)]))).toEqual(
      Object.fromEntries(expected.map((t) => [t, 'passed'])),
    );
  });

  it('touches at most 6 hand-edited files, exactly those the recipe in ARCHITECTURE.md names', () => {
    const hand = HAND.map((s) => s.file);
    expect(hand.length).toBeLessThanOrEqual(6);
    expect(recipeFiles()).toEqual(hand);
  });

  it.each(HAND.map((s) => [s.file, s] as const))(
    'flags the step when %s is left out',
    async (_file, step) => {
      undoStep(step);
      try {
        const flag = step.flaggedBy!;
        if (flag.by === 'tsc') {
          const ran = await tsc(NARROW_TSCONFIG, `tsc without ${step.file}`);
          expect(ran.status, ran.output).not.toBe(0);
          expect(ran.output).toContain(`${flag.pointsAt}(`);
        } else if (flag.by === 'vitest') {
          const statuses = await vitest(flag.files, `vitest without ${step.file}`, flag.filter);
          expect(statuses.get(flag.test), [...statuses].join('\n')).toBe('failed');
        }
      } finally {
        applyStep(step);
      }
    },
    300_000,
  );
});
