/**
 * What `npm start` runs: the compiled server, refused when older than its sources, with the Node flags that keep a
 * worker lean (the primary gives workers any that are missing, an operator's own value winning).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBuild } from '../../../scripts/build-info.mjs';
import { repoRoot } from '../../src/config/settings.js';
import { missingNodeFlags, missingProcessEnv, NODE_FLAGS, PROCESS_ENV } from '../../src/runtime/node-flags.js';

const scripts = (
  JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

describe('npm start', () => {
  it('checks the build, then runs the compiled bundle with the lean Node flags', () => {
    expect(scripts.start).toMatch(/node scripts\/build-info\.mjs && exec env (.*) node (.*) server\/dist\/main\.js$/);
    // Each variable of PROCESS_ENV with the operator's own value winning (`${NAME:-default}`), then the flags.
    const env = Object.entries(PROCESS_ENV).map(([name, value]) => `${name}=\${${name}:-${value}}`);
    expect(scripts.start).toContain(`exec env ${env.join(' ')} node ${NODE_FLAGS.join(' ')} server/dist/main.js`);
    expect(scripts.users).toContain('node server/dist/users.js');
  });

  it('finds the compiled server built from the sources on disk (scripts/install builds it)', () => {
    expect(checkBuild()).toEqual({ fresh: true });
  });

  it('gives workers the flags the primary lacks, leaving an operator’s own values alone', () => {
    expect(missingNodeFlags([])).toEqual([...NODE_FLAGS]);
    expect(missingNodeFlags(['--max-semi-space-size=32'])).toEqual(
      NODE_FLAGS.filter((f) => !f.startsWith('--max-semi-space-size')),
    );
    expect(missingNodeFlags(['--max_semi_space_size=16', '--heap-growing-percent=50'])).toEqual([]);
  });

  it('gives workers the environment the primary lacks (MALLOC_ARENA_MAX), leaving an operator’s own value alone', () => {
    expect(missingProcessEnv({})).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(missingProcessEnv({ MALLOC_ARENA_MAX: '8' })).toEqual({});
  });
});
