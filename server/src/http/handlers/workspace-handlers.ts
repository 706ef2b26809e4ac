/**
 * The workspace operations (listWorkspaces, its Pro alias listAccounts, createWorkspace): the caller's workspaces
 * with the caller's role, as the Pro clients read them (a bare array; docs/workspaces.md says which client reads what).
 */
import type { ErrorObject } from 'ajv';
import { ApiError, validationFailed } from '@secret-push/rules';
import type { Core } from '../../core.js';
import type { WorkspaceService } from '../../workspace/workspace-service.js';
import type { Handlers } from '../operations.js';

type WorkspaceHandlers = Pick<Handlers, 'listWorkspaces' | 'listAccounts' | 'createWorkspace'>;

export function workspaceHandlers(core: Core): WorkspaceHandlers {
  // HTTP test doubles may have no workspaces: their routes then answer 404, as any route an instance does not serve.
  const service = (): WorkspaceService => {
    if (!core.workspaces) throw new ApiError('no_route', 'Workspaces are not served by this instance.');
    return core.workspaces;
  };
  return {
    listWorkspaces: async ({ ctx }) => ({ status: 200, body: await service().list(ctx) }),
    listAccounts: async ({ ctx }) => ({ status: 200, body: await service().list(ctx) }),
    createWorkspace: async ({ body, ctx }) => ({
      status: 201,
      body: await service().create(body.workspace.name, ctx),
    }),
  };
}

const WRAPPER = '/requestBody/workspace';

/**
 * createWorkspace's schema failures: a body without a `workspace` object → 400 `bad_request`; a name that breaks its
 * rule → 422 on `name` (the contract's WorkspaceUnprocessable).
 */
export function workspaceValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  if (errors.every((e) => e.instancePath.startsWith(WRAPPER) && !(e.instancePath === WRAPPER && e.keyword === 'type')))
    return validationFailed({ name: ['must be 1 to 100 characters, not only spaces'] });
  return new ApiError('bad_request', 'The request body must be a JSON object with a "workspace" object.');
}
