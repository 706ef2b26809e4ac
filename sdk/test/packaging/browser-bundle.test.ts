/**
 * The browser entries bundle for `platform: 'browser'` without a single Node built-in: the main entry, the
 * end-to-end entry and the mocks entry (the round trip in Chromium is ./browser-e2e.test.ts). The Node entry is bundled too, as the check's own control: it must be caught importing `node:fs`.
 */
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));
const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

/** Records every import of a Node built-in (and keeps it external so the bundle still completes). */
function nodeBuiltinSpy(found: string[]): Plugin {
  return {
    name: 'node-builtin-spy',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        if (builtins.has(args.path) || args.path.startsWith('node:')) {
          found.push(`${args.path} (from ${args.importer.replace(src, '')})`);
          return { path: args.path, external: true };
        }
        return undefined;
      });
    },
  };
}

async function bundle(entry: string) {
  const found: string[] = [];
  const result = await build({
    entryPoints: [`${src}${entry}`],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    // Workspace packages (the mocks' @secret-push/rules) resolve to their sources, as the SDK's own build inlines them.
    conditions: ['@secret-push/source'],
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [nodeBuiltinSpy(found)],
  });
  return { found, inputs: Object.keys(result.metafile.inputs), bytes: result.outputFiles[0]!.contents.length };
}

describe('browser bundle', () => {
  it('bundles the main entry for the browser with no Node built-in and without msw or zod', async () => {
    const { found, inputs } = await bundle('index.ts');
    expect(found).toEqual([]);
    expect(inputs.filter((i) => /node_modules\/(msw|zod)\//.test(i))).toEqual([]);
    expect(inputs.some((i) => i.endsWith('generated/sdk.gen.ts'))).toBe(true);
  });

  it('bundles the end-to-end entry for the browser with no Node built-in, no HTTP client, no msw or zod', async () => {
    const { found, inputs } = await bundle('e2e/index.ts');
    expect(found).toEqual([]);
    expect(inputs.filter((i) => /node_modules\/(msw|zod)\//.test(i))).toEqual([]);
    // Pages bundle it next to their own fetch calls: the generated client stays out.
    expect(
      inputs.filter((i) => /generated\/(sdk\.gen|client\.gen|client\/)/.test(i) || i.endsWith('src/client.ts')),
    ).toEqual([]);
    expect(inputs.some((i) => i.endsWith('e2e/envelope.ts'))).toBe(true);
  });

  it('bundles the mocks entry for the browser (msw core) with no Node built-in', async () => {
    const { found, inputs } = await bundle('mocks/index.ts');
    expect(found).toEqual([]);
    expect(inputs.some((i) => i.includes('node_modules/msw/'))).toBe(true);
    expect(inputs.some((i) => i.endsWith('rules/src/push-state.ts'))).toBe(true);
  });

  it('catches the Node entry importing node:fs (the check can fail)', async () => {
    const { found } = await bundle('node.ts');
    expect(found).toEqual(expect.arrayContaining([expect.stringMatching(/^node:fs\/promises/)]));
  });
});
