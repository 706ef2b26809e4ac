/**
 * The one tsdown set-up of the published packages (`@secret-push/sdk`, `@secret-push/contract`,
 * `@secret-push/conformance`): ESM (`.mjs` + `.d.mts`) and CommonJS (`.cjs` + `.d.cts`) of every entry, for
 * Node ≥ 18 and browsers, each package's `exports` pointing at both. A package's `tsdown.config.ts` names its entries
 * (and what it bundles); adding a package is one more such file, a `build` script, and its name in
 * scripts/pack.mjs's list.
 */
import type { UserConfig } from 'tsdown';

export interface LibraryOptions {
  /** Output name (no extension, e.g. `e2e/index`) → source file, relative to the package. */
  entry: Record<string, string>;
  /** `neutral` for browser-safe code (the default); `node` for a package that runs only in Node. */
  platform?: 'neutral' | 'node';
  /** Workspace packages to inline rather than import (a CLI that must run from its tarball alone). */
  inline?: RegExp[];
  /** The tsconfig the declarations are made with (default: the package's tsconfig.build.json). */
  tsconfig?: string;
  /** Rolldown plugins of the build (the SDK's rewrites an inlined library's Node-only fallback). */
  plugins?: UserConfig['plugins'];
  /**
   * Declarations by oxc's isolated declarations, file by file without a type checker (seconds, where a TypeScript
   * program over the inlined SDK takes minutes): for a package whose exports carry explicit types and whose public
   * types name no type of an inlined workspace package (the CLI, the MCP server).
   */
  isolatedDeclarations?: boolean;
}

/** The lowest Node the packages run on (`engines.node`); `require` works there too. */
export const NODE_TARGET = 'node18';

export function libraryConfig(options: LibraryOptions): UserConfig {
  return {
    entry: options.entry,
    format: ['esm', 'cjs'],
    platform: options.platform ?? 'neutral',
    target: [NODE_TARGET, 'es2022'],
    fixedExtension: true,
    // Declarations are made by one TypeScript program over the package and the workspace sources it inlines.
    dts: options.isolatedDeclarations ? { generator: 'oxc' } : options.inline ? { eager: true } : true,
    sourcemap: false,
    clean: true,
    outDir: 'dist',
    tsconfig: options.tsconfig ?? 'tsconfig.build.json',
    // The package's own `exports` (written by hand, with the workspace's source condition) are checked by the
    // packaging test with publint and attw; tsdown does not rewrite them.
    exports: false,
    // Node built-ins stay imports (only the Node entries have any); workspace packages a CLI needs are inlined.
    deps: {
      neverBundle: [/^node:/],
      ...(options.inline ? { alwaysBundle: options.inline, dts: { alwaysBundle: options.inline } } : {}),
    },
    checks: { legacyCjs: false, bundlerTimings: false },
    // Workspace packages resolve to their sources (as everywhere in the repository), never to a build of theirs.
    inputOptions: { resolve: { conditionNames: ['@secret-push/source', 'import', 'module', 'node', 'default'] } },
    logLevel: 'warn',
    ...(options.plugins ? { plugins: options.plugins } : {}),
  };
}
