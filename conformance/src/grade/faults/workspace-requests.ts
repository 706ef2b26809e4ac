/**
 * Faults in a workspace's requests (issue 41, the TEAM class): the workspace a request names ignored (it is made in
 * the requester's personal space), and a workspace's request list answering an outsider. Each models its bug by
 * changing what goes upstream, or the answer.
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
