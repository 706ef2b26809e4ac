/**
 * The push tools: create (end-to-end encrypted by default where the instance offers it), preview, audit, expire,
 * list. Each description says what goes to which address.
 */
import { type CreatePushParams, type PushOwner } from '@secret-push/sdk';
import { isSupportedScheme } from '@secret-push/sdk/e2e';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { logged, pushToken, type ToolContext } from '../context.js';
import { ok, ToolRefusal } from '../results.js';

const pushArg = z
  .string()
  .min(1)
  .max(2048)
  .describe('The push: its url_token, or its link (a share link’s #k= key is not needed and never sent)');

function summary(p: PushOwner) {
  return {
    url_token: p.url_token,
    kind: p.kind,
    name: p.name,
    views_remaining: p.views_remaining,
    expires_at: p.expires_at,
    expired: p.expired,
    end_to_end: p.client_encryption != null,
  };
}

function createPush(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'create_push',
    {
      title: 'Create a push',
      description:
        `Stores a secret on the Secret Push instance ${ctx.baseUrl} and returns the link to give its recipient. ` +
        'End to end by default where the instance offers it: the payload is encrypted inside this MCP server with a ' +
        'new random key before anything is sent; the instance receives only ciphertext, and the key exists only in ' +
        "the returned share_link, after '#k=' (anyone holding the link can read the secret until it expires, so give " +
        'it only to the recipient). The passphrase, name and note are sent as they are (the name and note are seen ' +
        'by the token’s owner only). The push expires after its views or days, whichever comes first.',
      inputSchema: {
        payload: z
          .string()
          .min(1)
          .max(1_048_576)
          .describe('The secret: a text, a URL (kind url) or a QR text (kind qr)'),
        kind: z.enum(['text', 'url', 'qr']).optional().describe('Default text'),
        expire_after_views: z.number().int().min(1).max(100).optional().describe('Views before it expires'),
        expire_after_days: z.number().int().min(1).max(90).optional().describe('Days before it expires'),
        passphrase: z.string().min(1).max(1024).optional().describe('A passphrase the recipient must also give'),
        retrieval_step: z.boolean().optional().describe('The recipient clicks through a page first'),
        deletable_by_viewer: z.boolean().optional().describe('The recipient may delete it'),
        name: z.string().max(1024).optional().describe('A label the owner sees in list_pushes'),
        note: z.string().max(10_000).optional().describe('A note only the owner sees'),
        end_to_end: z
          .boolean()
          .optional()
          .describe('Encrypt here (default: true where the instance offers it). false: the instance can read it'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args) =>
      logged(ctx, 'create_push', async () => {
        const feature = (await ctx.version()).features.pushes.client_encryption;
        const offered = feature?.enabled === true && feature.schemes.some(isSupportedScheme);
        const endToEnd = args.end_to_end ?? offered;
        if (endToEnd && !offered)
          throw new ToolRefusal(`${ctx.baseUrl} does not offer end-to-end encryption`, 'not_supported_by_server');
        if (!endToEnd && feature?.required)
          throw new ToolRefusal(`${ctx.baseUrl} accepts only end-to-end encrypted pushes`, 'e2e_required');
        const { end_to_end: _, ...input } = args;
        const created = await ctx.client.createPush(input as CreatePushParams, { endToEnd });
        const facts = { ...summary(created), share_link: created.shareLink, end_to_end: endToEnd };
        return ok(
          `Share link: ${created.shareLink}\nIt expires after ${created.expire_after_views} views or at ` +
            `${created.expires_at}. ${endToEnd ? 'End-to-end encrypted: the key is only in this link.' : 'Not end-to-end encrypted.'}`,
          facts,
        );
      }),
  );
}

function ownerTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    'preview_push',
    {
      title: 'Preview a push',
      description: `Asks ${ctx.baseUrl} for a push's page link, without viewing it (no view is spent, nothing is decrypted).`,
      inputSchema: { push: pushArg },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) =>
      logged(ctx, 'preview_push', async () => {
        const preview = await ctx.client.previewPush(pushToken(ctx, args.push).urlToken);
        const endToEnd = preview.client_encryption != null;
        return ok(`${preview.url}${endToEnd ? ' (end-to-end encrypted: this link has no key)' : ''}`, {
          url: preview.url,
          end_to_end: endToEnd,
        });
      }),
  );
  server.registerTool(
    'get_push_audit',
    {
      title: "A push's audit log",
      description: `Reads the audit log of one of the token's pushes from ${ctx.baseUrl}: when it was created, viewed, refused a passphrase, expired; with the viewers' IP addresses and user agents.`,
      inputSchema: { push: pushArg },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) =>
      logged(ctx, 'get_push_audit', async () => {
        const entries = (await ctx.client.audit.page(pushToken(ctx, args.push).urlToken, 1)).items;
        const lines = entries.map((e) => `${e.created_at} ${e.kind} ${e.ip} ${e.user_agent}`);
        return ok(lines.join('\n') || 'no entries', { entries });
      }),
  );
  server.registerTool(
    'expire_push',
    {
      title: 'Expire a push',
      description: `Expires a push on ${ctx.baseUrl} now: its payload and files are erased and its link stops working. Cannot be undone.`,
      inputSchema: { push: pushArg },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    },
    (args) =>
      logged(ctx, 'expire_push', async () => {
        const push = await ctx.client.expirePush(pushToken(ctx, args.push).urlToken);
        return ok(`Expired ${push.url_token}.`, { url_token: push.url_token, expired: push.expired });
      }),
  );
  server.registerTool(
    'list_pushes',
    {
      title: 'List pushes',
      description: `Lists the token's pushes on ${ctx.baseUrl}, newest first, 50 a page: active ones or expired ones. Never their contents.`,
      inputSchema: {
        state: z.enum(['active', 'expired']),
        page: z.number().int().min(1).max(200).optional().describe('Default 1'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    (args) =>
      logged(ctx, 'list_pushes', async () => {
        const list = args.state === 'active' ? ctx.client.activePushes : ctx.client.expiredPushes;
        const page = await list.page(args.page ?? 1);
        const pushes = page.items.map(summary);
        const lines = pushes.map(
          (p) =>
            `${p.url_token} ${p.kind} ${p.views_remaining} views left, expires ${p.expires_at}${p.name ? ` (${p.name})` : ''}`,
        );
        return ok(lines.join('\n') || `no ${args.state} pushes`, { pushes, total: page.totalCount ?? null });
      }),
  );
}

export function pushTools(server: McpServer, ctx: ToolContext): void {
  createPush(server, ctx);
  ownerTools(server, ctx);
}
