/**
 * A workspace's webhooks (issue 41, the TEAM class; run when the version report says both `features.workspaces` and
 * `features.webhooks`): user A, the owner of the shared `conformance suite` workspace (./workspaces.ts), registers a
 * webhook for it (`webhook.workspace_id`), which `listWebhooks?workspace_id=` lists and the personal list does not;
 * user B, an outsider, can neither register one for it nor list its webhooks (403), and finds none of them (404),
 * nothing changed. Each webhook made is deleted again. Nothing needs to arrive: no receiver is needed. TEAM-016: the
 * workspace's audit trail (`listWorkspaceAudit`) read by its owner, and refused (404) to an outsider.
 */
import { define } from '../requirement.js';
import { expect, expectCode, expectEqual, expectStatus, type Ctx } from '../context.js';
import { refusedExampleUrl, someUrl } from './webhooks.js';
import { workspace } from './workspaces.js';

interface Hook {
  id: string;
  workspace_id?: number | null;
}

/** The ids `listWebhooks` answers A (the personal list, or the workspace's with `query`). */
async function hookIds(ctx: Ctx, query: Record<string, string> = {}): Promise<string[]> {
  const res = await ctx.call('listWebhooks', { as: 'a', query });
  expectStatus(res, 200);
  return ((res.body as { webhooks?: Hook[] }).webhooks ?? []).map((h) => h.id);
}

/** Registers a webhook of A's workspace `id`, runs `body`, then deletes it. */
async function withWorkspaceHook(ctx: Ctx, id: number, body: (hook: Hook) => Promise<void>): Promise<void> {
  const made = await ctx.call('createWebhook', {
    as: 'a',
    body: { webhook: { url: someUrl(ctx, 'team-hook'), events: ['push.created'], workspace_id: id } },
  });
  refusedExampleUrl(ctx, made);
  expectStatus(made, 201);
  const hook = made.body as Hook;
  try {
    await body(hook);
  } finally {
    await ctx.call('deleteWebhook', { as: 'a', params: { id: hook.id } });
  }
}

export const workspaceWebhookRequirements = define('TEAM', [
  {
    id: 'TEAM-014',
    title:
      "createWebhook with workspace_id makes a workspace's webhook: listed by workspace_id, not in the personal list",
    source: 'spec: schemas/WebhookInput workspace_id, schemas/Webhook workspace_id; paths/webhooks.yaml listWebhooks',
    needs: ['workspaces', 'webhooks', 'token'],
    async run(ctx) {
      const id = await workspace(ctx);
      await withWorkspaceHook(ctx, id, async (hook) => {
        expectEqual(hook.workspace_id, id, "the created webhook's workspace_id");
        expect(
          (await hookIds(ctx, { workspace_id: String(id) })).includes(hook.id),
          `listWebhooks?workspace_id=${id} does not list the workspace's webhook just made`,
        );
        expect(!(await hookIds(ctx)).includes(hook.id), "the workspace's webhook is in A's personal listWebhooks");
        const shown = await ctx.call('getWebhook', { as: 'a', params: { id: hook.id } });
        expectStatus(shown, 200);
        expectEqual((shown.body as Hook).workspace_id, id, "getWebhook's workspace_id");
      });
    },
  },
  {
    id: 'TEAM-015',
    title: "An outsider can't register or list a workspace's webhooks (403) and finds none of them (404); it stays",
    source: 'spec: paths/webhooks.yaml (createWebhook, listWebhooks 403), paths/webhooks-{id}.yaml (404 for others)',
    needs: ['workspaces', 'webhooks', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      await withWorkspaceHook(ctx, id, async (hook) => {
        const before = (await hookIds(ctx, { workspace_id: String(id) })).sort().join();
        const made = await ctx.call('createWebhook', {
          as: 'b',
          body: { webhook: { url: someUrl(ctx, 'team-hook-b'), events: ['push.created'], workspace_id: id } },
        });
        expectStatus(made, 403);
        expectCode(made, 'forbidden');
        const list = await ctx.call('listWebhooks', { as: 'b', query: { workspace_id: String(id) } });
        expectStatus(list, 403);
        expectCode(list, 'forbidden');
        for (const operation of ['getWebhook', 'deleteWebhook', 'rotateWebhookSecret']) {
          const res = await ctx.call(operation, { as: 'b', params: { id: hook.id } });
          expectStatus(res, 404);
        }
        expectEqual(
          (await hookIds(ctx, { workspace_id: String(id) })).sort().join(),
          before,
          "the workspace's webhooks after the outsider's calls",
        );
      });
    },
  },
  {
    id: 'TEAM-016',
    title: "listWorkspaceAudit pages the workspace's trail for its owner; an outsider or an unknown id gets 404",
    source: 'spec: paths/workspaces-{workspace_id}-audit.yaml (listWorkspaceAudit; 404 alike, ids not probed)',
    needs: ['workspaces', 'token', 'tokenB'],
    async run(ctx) {
      const id = await workspace(ctx);
      const res = await ctx.call('listWorkspaceAudit', { as: 'a', params: { workspace_id: String(id) } });
      expectStatus(res, 200);
      const entries = (res.body as { entries?: unknown }).entries;
      expect(Array.isArray(entries) && entries.length <= 50, 'listWorkspaceAudit has no entries array of 50 at most');
      const total = res.headers.get('x-total-count');
      expect(total !== null && /^\d+$/.test(total), `X-Total-Count is ${JSON.stringify(total)}, not a count`);
      for (const [as, target] of [
        ['b', id],
        ['a', 2_147_483_000],
      ] as const) {
        const refused = await ctx.call('listWorkspaceAudit', { as, params: { workspace_id: String(target) } });
        expectStatus(refused, 404);
        expectCode(refused, 'not_found');
      }
    },
  },
]);
