/**
 * Faults in workspaces (issue 41, the TEAM class): the ids the Pro clients send ignored, read leniently or checked
 * only in part, and a workspace's list answering the personal one or an outsider's. Each models its bug by changing
 * what goes upstream (the server then does what the buggy one would), or the answer.
 */
import { define } from '../fault.js';
import type { Exchange } from '../proxy.js';

const ID_FIELDS = ['workspace_id', 'account_id'] as const;
const LISTS = new Set(['listActivePushes', 'listExpiredPushes']);

/** A create's JSON body with `drop(field, value, where)` deciding, for each workspace id in it, whether it goes. */
function dropIds(ex: Exchange, drop: (value: unknown, place: 'beside' | 'inside') => boolean): void {
  if (ex.op !== 'createPush') return;
  const body = ex.requestJson;
  if (!body || typeof body !== 'object') return;
  for (const [place, holder] of [
    ['beside', body],
    ['inside', body.push],
  ] as const) {
    if (!holder || typeof holder !== 'object') continue;
    for (const field of ID_FIELDS) if (field in holder && drop(holder[field], place)) delete holder[field];
  }
  ex.requestJson = body;
}

/** What a lenient server makes of an id: a number or digits naming 1 and up, else nothing. */
function isId(value: unknown): boolean {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
  return /^[1-9][0-9]{0,9}$/.test(text);
}

export const workspaceOptionFaults = define('option', [
  {
    name: 'workspace-id-ignored',
    models: "a create's workspace_id / account_id is ignored: the push is made in the caller's personal space",
    killers: ['TEAM-002', 'TEAM-003'],
    start: () => ({
      request(ex) {
        dropIds(ex, () => true);
        if (ex.op === 'createPush') for (const field of ID_FIELDS) ex.url.searchParams.delete(field);
      },
    }),
  },
  {
    name: 'workspace-list-is-personal',
    models: "a list's workspace_id / account_id is ignored: it answers the caller's personal pushes",
    killers: ['TEAM-002', 'TEAM-003', 'TEAM-004'],
    start: () => ({
      request(ex) {
        if (LISTS.has(ex.op)) for (const field of ID_FIELDS) ex.url.searchParams.delete(field);
      },
    }),
  },
  {
    name: 'conflicting-workspaces-accepted',
    models: 'a create naming two workspaces takes the first (beside push) instead of refusing 422',
    killers: ['TEAM-005'],
    start: () => ({
      request(ex) {
        const body = ex.sentJson;
        const beside = ID_FIELDS.map((f) => body?.[f]).find((v) => v !== undefined);
        if (beside === undefined) return;
        dropIds(ex, (value, place) => place === 'inside' && String(value) !== String(beside));
      },
    }),
  },
  {
    name: 'malformed-workspace-id-as-personal',
    models: 'a workspace_id that is no id ("abc", 0) is read as none: the push is made in the personal space',
    killers: ['TEAM-009'],
    start: () => ({
      request(ex) {
        dropIds(ex, (value) => !isId(value));
      },
    }),
  },
]);

export const workspaceAuthFaults = define('auth', [
  {
    name: 'workspace-list-unchecked',
    models: 'a list naming a workspace the caller is not in answers 200 with nothing in it, not 403',
    killers: ['TEAM-006'],
    start: () => ({
      response(ex) {
        if (!LISTS.has(ex.op) || ex.status !== 403) return;
        if (!ID_FIELDS.some((f) => ex.url.searchParams.has(f))) return;
        ex.status = 200;
        ex.headers['content-type'] = 'application/json; charset=utf-8';
        ex.headers['x-total-count'] = '0';
        ex.json = [];
      },
    }),
  },
  {
    name: 'workspace-settings-unchecked',
    models: "updateWorkspace does not check the caller's membership: an outsider's change is made as its owner's",
    killers: ['TEAM-012'],
    start: () => {
      // The credentials of the last caller whose updateWorkspace went through: a server that never checks who asks.
      let accepted: string | undefined;
      return {
        request(ex) {
          if (ex.op !== 'updateWorkspace' || accepted === undefined) return;
          ex.requestHeaders = { ...ex.requestHeaders, authorization: accepted };
        },
        response(ex) {
          if (ex.op === 'updateWorkspace' && ex.status === 200) accepted = ex.requestHeaders.authorization;
        },
      };
    },
  },
  {
    name: 'members-list-unchecked',
    models:
      "listWorkspaceMembers answers anyone's request: an outsider gets the members (here: an empty list), not 404",
    killers: ['TEAM-010'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listWorkspaceMembers' || ex.status !== 404) return;
        ex.status = 200;
        ex.headers['content-type'] = 'application/json; charset=utf-8';
        ex.json = [];
      },
    }),
  },
  {
    name: 'workspace-webhook-made-personal',
    models: "createWebhook's workspace_id is ignored: the webhook is the caller's personal one, not the workspace's",
    killers: ['TEAM-014'],
    start: () => ({
      request(ex) {
        if (ex.op !== 'createWebhook') return;
        const body = ex.requestJson;
        const input = body?.webhook;
        if (!input || typeof input !== 'object' || !('workspace_id' in input)) return;
        delete input.workspace_id;
        ex.requestJson = body;
      },
    }),
  },
  {
    name: 'workspace-webhooks-unchecked',
    models: 'listWebhooks naming a workspace the caller is not in answers 200 with an empty list, not 403',
    killers: ['TEAM-015'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listWebhooks' || ex.status !== 403 || !ex.url.searchParams.has('workspace_id')) return;
        ex.status = 200;
        ex.headers['content-type'] = 'application/json; charset=utf-8';
        ex.json = { webhooks: [] };
      },
    }),
  },
  {
    name: 'workspace-audit-unchecked',
    models: "listWorkspaceAudit answers anyone's request: an outsider gets a trail (here: an empty one), not 404",
    killers: ['TEAM-016'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listWorkspaceAudit' || ex.status !== 404) return;
        ex.status = 200;
        ex.headers['content-type'] = 'application/json; charset=utf-8';
        ex.headers['x-total-count'] = '0';
        ex.json = { entries: [] };
      },
    }),
  },
]);

export const workspaceStatusFaults = define('status', [
  {
    name: 'owner-leave-accepted',
    models: "the owner's leaveWorkspace answers 200 instead of 422 (a workspace left without its owner)",
    killers: ['TEAM-011'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'leaveWorkspace' || ex.status !== 422) return;
        ex.status = 200;
      },
    }),
  },
  {
    name: 'brand-contrast-unchecked',
    models: 'updateWorkspaceBrand takes an accent colour below 4.5:1 or a javascript: link: 200 instead of 422',
    killers: ['TEAM-013'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'updateWorkspaceBrand' || ex.status !== 422) return;
        ex.status = 200;
      },
    }),
  },
]);
