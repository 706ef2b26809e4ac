/**
 * Faults in a workspace's requests (issue 41, the TEAM class): the workspace a request names ignored (it is made in
 * the requester's personal space), and a workspace's request list answering an outsider; and one of its sign-in rules
 * (`require_single_sign_on` taken from a caller single sign-on does not vouch for). Each models its bug by changing
 * what goes upstream, or the answer.
 */
import { define } from '../fault.js';

export const workspaceRequestFaults = define('option', [
  {
    name: 'workspace-request-made-personal',
    models: "createRequest's workspace_id is ignored: the request is the caller's personal one, not the workspace's",
    killers: ['TEAM-017'],
    start: () => ({
      request(ex) {
        if (ex.op !== 'createRequest') return;
        const body = ex.requestJson;
        const request = body?.request;
        if (!request || typeof request !== 'object' || !('workspace_id' in request)) return;
        delete (request as Record<string, unknown>).workspace_id;
        ex.requestJson = body;
      },
    }),
  },
]);

export const workspaceRequestAuthFaults = define('auth', [
  {
    name: 'single-sign-on-rule-unchecked',
    models:
      'updateWorkspace takes require_single_sign_on from anyone: the refusal of a caller no single sign-on vouches for answers 200',
    killers: ['TEAM-029'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'updateWorkspace' || ex.status !== 422) return;
        const fields = (ex.json as { errors?: Record<string, unknown> } | undefined)?.errors;
        if (!fields || !('require_single_sign_on' in fields)) return;
        ex.status = 200;
        ex.headers['content-type'] = 'application/json; charset=utf-8';
        ex.json = { require_single_sign_on: true };
      },
    }),
  },
  {
    name: 'workspace-requests-unchecked',
    models: 'listActiveRequests naming a workspace the caller is not in answers 200 with an empty list, not 403',
    killers: ['TEAM-018'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listActiveRequests' || ex.status !== 403 || !ex.url.searchParams.has('workspace_id')) return;
        ex.status = 200;
        ex.headers['content-type'] = 'application/json; charset=utf-8';
        ex.headers['x-total-count'] = '0';
        ex.json = [];
      },
    }),
  },
]);
