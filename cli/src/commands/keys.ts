/**
 * `secret-push keys …`: the account's API keys with scopes (docs/api-keys.md): list, create (the key's token is
 * printed this once), revoke.
 */
import { API_KEY_SCOPES, type ApiKeyScope } from '@secret-push/sdk/rules';
import type { Args } from '../args.js';
import type { Command } from '../command.js';
import type { Context } from '../context.js';
import { usageError } from '../exit.js';
import { table } from '../output.js';

/** The scopes a key may be given, as the contract lists them. */
const SCOPES: readonly ApiKeyScope[] = API_KEY_SCOPES;

const list: Command = {
  words: ['keys', 'list'],
  summary: 'Your API keys, newest first (never their tokens).',
  positionals: { min: 0, max: 0 },
  options: {},
  async run(ctx: Context) {
    const { client } = await ctx.client();
    const keys = await client.listApiKeys();
    ctx.result(keys, () =>
      keys.length
        ? table(
            ['ID', 'NAME', 'SCOPES', 'EXPIRES', 'LAST USED'],
            keys.map((k) => [k.id, k.name, k.scopes.join(','), k.expires_at ?? 'never', k.last_used_at ?? 'never']),
          )
        : 'no API keys',
    );
  },
};

const create: Command = {
  words: ['keys', 'create'],
  summary: 'Make an API key with scopes; prints its token (spk_…), shown this once.',
  args: 'NAME',
  positionals: { min: 1, max: 1 },
  options: {
    scope: {
      type: 'string',
      multiple: true,
      value: 'SCOPE',
      help: `a scope (repeat): ${SCOPES.join(', ')}`,
      complete: SCOPES,
    },
    days: {
      type: 'string',
      value: 'N',
      help: 'expires in N days (1 to 366; default: never, or its maker key’s expiry)',
    },
  },
  async run(ctx: Context, args: Args) {
    const scopes = args.list('scope').flatMap((s) => s.split(','));
    if (scopes.length === 0) throw usageError(`give at least one --scope (${SCOPES.join(', ')})`);
    for (const scope of scopes)
      if (!SCOPES.includes(scope as ApiKeyScope)) throw usageError(`unknown scope ${JSON.stringify(scope)}`);
    const days = args.int('days', 1, 366);
    const { client } = await ctx.client();
    const key = await client.createApiKey({
      name: args.positionals[0]!,
      scopes: scopes as ApiKeyScope[],
      ...(days !== undefined ? { expires_at: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
    });
    ctx.result(key, key.token);
    ctx.note(`API key ${key.id}: keep the token above (e.g. SECRET_PUSH_TOKEN); it is not shown again`);
  },
};

const revoke: Command = {
  words: ['keys', 'revoke'],
  summary: 'Revoke an API key at once (and every key it made).',
  args: 'ID',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const { client } = await ctx.client();
    const key = await client.revokeApiKey(args.positionals[0]!);
    ctx.result(key, `revoked ${key.id}`);
  },
};

export const keyCommands = [list, create, revoke];
