/**
 * The owner's commands on pushes: `preview` (the link, without a view), `expire`, `audit`, `list active|expired`.
 */
import type { AuditEntry, PushOwner } from '@secret-push/sdk';
import type { Args } from '../args.js';
import type { Command, Options } from '../command.js';
import type { Context } from '../context.js';
import { usageError } from '../exit.js';
import { table } from '../output.js';
import { pushTarget } from '../target.js';

export const LIST_OPTIONS: Options = {
  page: { type: 'string', value: 'N', help: 'only page N (50 a page)' },
  limit: { type: 'string', value: 'N', help: 'at most N entries over all pages (default 200)' },
};

/** The entries of a paged list: one page with --page, else every page up to --limit. */
export async function collect<T>(
  args: Args,
  list: { (): AsyncIterable<T>; page(n: number): Promise<{ items: T[] }> },
): Promise<T[]> {
  const page = args.int('page', 1, 200);
  if (page !== undefined) return (await list.page(page)).items;
  const limit = args.int('limit', 1, 10_000) ?? 200;
  const items: T[] = [];
  for await (const item of list()) {
    items.push(item);
    if (items.length >= limit) break;
  }
  return items;
}

export function stateArg(args: Args): 'active' | 'expired' {
  const state = args.positionals[0];
  if (state !== 'active' && state !== 'expired') throw usageError('say which list: active or expired');
  return state;
}

export const preview: Command = {
  words: ['preview'],
  summary: "Print a push's link without viewing it (no view spent).",
  args: 'LINK|TOKEN',
  positionals: { min: 1, max: 1 },
  options: {},
  details: 'The server does not know the key of an end-to-end link: the link it gives has no #k=… part.',
  async run(ctx: Context, args: Args) {
    const target = pushTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    const preview = await client.previewPush(target.urlToken);
    ctx.result(preview, preview.url);
  },
};

export const expire: Command = {
  words: ['expire'],
  summary: 'Expire a push now: its payload and files are erased (the owner, or anyone when the push allows it).',
  args: 'LINK|TOKEN',
  positionals: { min: 1, max: 1 },
  options: {},
  async run(ctx: Context, args: Args) {
    const target = pushTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    const push = await client.expirePush(target.urlToken);
    ctx.result(push, `expired ${push.url_token}`);
  },
};

export const audit: Command = {
  words: ['audit'],
  summary: "A push's audit log, oldest first: creation, views, failed passphrases, expiry (the owner only).",
  args: 'LINK|TOKEN',
  positionals: { min: 1, max: 1 },
  options: LIST_OPTIONS,
  async run(ctx: Context, args: Args) {
    const target = pushTarget(args.positionals[0]!);
    const { client } = await ctx.client(target.origin);
    const entries: AuditEntry[] = await collect(
      args,
      Object.assign(() => client.audit(target.urlToken), {
        page: (n: number) => client.audit.page(target.urlToken, n),
      }),
    );
    ctx.result(entries, () =>
      table(
        ['WHEN', 'WHAT', 'IP', 'USER AGENT'],
        entries.map((e) => [e.created_at, e.kind, e.ip, e.user_agent]),
      ),
    );
  },
};

function pushRows(pushes: PushOwner[]): string {
  return table(
    ['TOKEN', 'KIND', 'VIEWS LEFT', 'EXPIRES', 'E2E', 'NAME'],
    pushes.map((p) => [
      p.url_token,
      p.kind,
      String(p.views_remaining),
      p.expires_at,
      p.client_encryption ? 'yes' : 'no',
      p.name,
    ]),
  );
}

export const list: Command = {
  words: ['list'],
  summary: 'Your pushes, newest first: active ones, or expired ones.',
  args: 'active|expired',
  positionals: { min: 1, max: 1, complete: ['active', 'expired'] },
  options: LIST_OPTIONS,
  async run(ctx: Context, args: Args) {
    const state = stateArg(args);
    const { client } = await ctx.client();
    const pushes = await collect(args, state === 'active' ? client.activePushes : client.expiredPushes);
    ctx.result(pushes, () => (pushes.length ? pushRows(pushes) : `no ${state} pushes`));
  },
};
