/**
 * `secret-push config …`: the profiles of the config file (several instances, each with its token). A token is typed
 * without echo or piped in (`--token-stdin`), never an argument; the file is written 0600.
 */
import type { Args } from '../args.js';
import type { Command } from '../command.js';
import type { Context } from '../context.js';
import { checkProfileName, configPath, normalizeServerUrl, saveConfig } from '../config.js';
import { CliError, EXIT } from '../exit.js';
import { table } from '../output.js';
import { askHidden, readSecretFile } from '../prompt.js';

const add: Command = {
  words: ['config', 'add'],
  summary: 'Add (or replace) a profile: an instance and its token. The token is asked without echo.',
  args: 'NAME',
  positionals: { min: 1, max: 1 },
  options: {
    // `--server` (a global option) names the profile's instance.
    'token-stdin': { type: 'boolean', help: 'read the token from stdin instead of asking' },
    'no-token': { type: 'boolean', help: 'a profile without a token (anonymous)' },
    default: { type: 'boolean', help: 'make it the default profile' },
  },
  details: 'Example: secret-push config add work --server https://secrets.example.org',
  async run(ctx: Context, args: Args) {
    const name = checkProfileName(args.positionals[0]!);
    const server = args.string('server');
    if (!server) throw new CliError('give the profile’s instance with --server URL', EXIT.usage);
    const url = normalizeServerUrl(server, '--server');
    args.exclusive('token-stdin', 'no-token');
    const token = args.flag('no-token')
      ? undefined
      : args.flag('token-stdin')
        ? await readSecretFile(ctx.io, '-', 'token')
        : await askHidden(ctx.io, `API token for ${url} (not shown): `, 'the token');
    const config = await ctx.config();
    config.profiles[name] = { url, ...(token ? { token } : {}) };
    if (args.flag('default') || config.default_profile === undefined) config.default_profile = name;
    const file = await saveConfig(ctx.place, config);
    ctx.result({ profile: name, url, token: token ? 'saved' : null, file }, `saved profile ${name} in ${file}`);
  },
};

const list: Command = {
  words: ['config', 'list'],
  summary: 'The profiles (never their tokens) and which one is the default.',
  positionals: { min: 0, max: 0 },
  options: {},
  async run(ctx: Context) {
    const config = await ctx.config();
    const rows = Object.entries(config.profiles).map(([name, p]) => ({
      name,
      url: p.url ?? null,
      token: Boolean(p.token),
      default: name === config.default_profile,
    }));
    ctx.result({ file: configPath(ctx.place), profiles: rows }, () =>
      rows.length
        ? table(
            ['', 'PROFILE', 'URL', 'TOKEN'],
            rows.map((r) => [r.default ? '*' : '', r.name, r.url ?? '', r.token ? 'yes' : 'no']),
          )
        : `no profiles in ${configPath(ctx.place)}`,
    );
  },
};

const use: Command = {
  words: ['config', 'use'],
  summary: 'Make a profile the default.',
  args: 'NAME',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const name = args.positionals[0]!;
    const config = await ctx.config();
    if (!config.profiles[name]) throw new CliError(`no profile named ${JSON.stringify(name)}`, EXIT.config);
    config.default_profile = name;
    await saveConfig(ctx.place, config);
    ctx.result({ default_profile: name }, `default profile: ${name}`);
  },
};

const remove: Command = {
  words: ['config', 'remove'],
  summary: 'Remove a profile and its token.',
  args: 'NAME',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const name = args.positionals[0]!;
    const config = await ctx.config();
    if (!config.profiles[name]) throw new CliError(`no profile named ${JSON.stringify(name)}`, EXIT.config);
    delete config.profiles[name];
    if (config.default_profile === name) delete config.default_profile;
    await saveConfig(ctx.place, config);
    ctx.result({ removed: name }, `removed profile ${name}`);
  },
};

const where: Command = {
  words: ['config', 'path'],
  summary: 'Where the config file is (SECRET_PUSH_CONFIG, else the user’s config folder).',
  positionals: { min: 0, max: 0 },
  options: {},
  async run(ctx: Context) {
    const file = configPath(ctx.place);
    ctx.result({ file }, file);
  },
};

export const configCommands = [add, list, use, remove, where];
