/**
 * The workspace methods of the client (issue 41): the caller's workspaces (also under Password Pusher Pro's name,
 * accounts) and a new one. A push is made in a workspace by `createPush({ …, workspace_id })`. Built on the client's
 * one sender in ./client.ts.
 */
import {
  createWorkspace as genCreateWorkspace,
  listAccounts as genListAccounts,
  listWorkspaces as genListWorkspaces,
} from './generated/sdk.gen.js';
import type { Workspace, WorkspaceList } from './generated/types.gen.js';
import type { GeneratedCall, RequestOptions, Retry } from './calls.js';

type Send = <T>(
  call: GeneratedCall,
  opts: RequestOptions | undefined,
  retry: Retry,
) => Promise<{ data: T; response: Response }>;

export interface WorkspaceMethods {
  /** The workspaces the caller belongs to, with the caller's role in each, oldest first. */
  listWorkspaces(options?: RequestOptions): Promise<Workspace[]>;
  /** `listWorkspaces` under Password Pusher Pro's name (`GET /api/v2/accounts`): the same list. */
  listAccounts(options?: RequestOptions): Promise<Workspace[]>;
  /** Makes a workspace; the caller is its owner. Not retried automatically (a retry could make a second one). */
  createWorkspace(name: string, options?: RequestOptions): Promise<Workspace>;
}

export function workspaceMethods(send: Send): WorkspaceMethods {
  return {
    async listWorkspaces(opts) {
      return (await send<WorkspaceList>((x) => genListWorkspaces(x), opts, 'safe')).data;
    },
    async listAccounts(opts) {
      return (await send<WorkspaceList>((x) => genListAccounts(x), opts, 'safe')).data;
    },
    async createWorkspace(name, opts) {
      return (await send<Workspace>((x) => genCreateWorkspace({ ...x, body: { workspace: { name } } }), opts, 'never'))
        .data;
    },
  };
}
