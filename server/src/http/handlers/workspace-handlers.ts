/**
 * The workspace operations (listWorkspaces, its Pro alias listAccounts, createWorkspace): the caller's workspaces
 * with the caller's role, as the Pro clients read them (a bare array; docs/workspaces.md says which client reads what).
 */
import type { ErrorObject } from 'ajv';
import { ApiError, pagingHeaders, parsePage, validationFailed } from '@secret-push/rules';
import type { Core } from '../../core.js';
import type { WorkspaceService } from '../../workspace/workspace-service.js';
import type { Handlers } from '../operations.js';

type WorkspaceHandlers = Pick<
  Handlers,
  | 'listWorkspaces'
  | 'listAccounts'
  | 'createWorkspace'
  | 'updateWorkspace'
  | 'deleteWorkspace'
  | 'listWorkspaceMembers'
  | 'updateWorkspaceMember'
  | 'removeWorkspaceMember'
  | 'leaveWorkspace'
  | 'transferWorkspace'
  | 'listWorkspaceAudit'
>;

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
    updateWorkspace: async ({ params, body, ctx }) => {
      const { name, require_two_factor, require_single_sign_on, sso_domain } = body.workspace;
      const change = {
        ...(name === undefined ? {} : { name }),
        ...(require_two_factor === undefined ? {} : { requireTwoFactor: require_two_factor }),
        ...(require_single_sign_on === undefined ? {} : { requireSingleSignOn: require_single_sign_on }),
        ...(sso_domain === undefined ? {} : { ssoDomain: sso_domain }),
      };
      return { status: 200, body: await service().update(Number(params.workspace_id), change, ctx) };
    },
    deleteWorkspace: async ({ params, query, ctx }) => ({
      status: 200,
      body: await service().remove(Number(params.workspace_id), query?.confirm ?? '', ctx),
    }),
    listWorkspaceMembers: async ({ params, ctx }) => ({
      status: 200,
      body: await service().members(Number(params.workspace_id), ctx),
    }),
    updateWorkspaceMember: async ({ params, body, ctx }) => ({
      status: 200,
      body: await service().changeMember(
        Number(params.workspace_id),
        params.user_id,
        { kind: 'role', role: body.member.role },
        ctx,
      ),
    }),
    removeWorkspaceMember: async ({ params, ctx }) => ({
      status: 200,
      body: await service().changeMember(Number(params.workspace_id), params.user_id, { kind: 'remove' }, ctx),
    }),
    leaveWorkspace: async ({ params, ctx }) => ({
      status: 200,
      body: await service().changeMember(Number(params.workspace_id), '', { kind: 'leave' }, ctx),
    }),
    transferWorkspace: async ({ params, ctx }) => ({
      status: 200,
      body: await service().changeMember(Number(params.workspace_id), params.user_id, { kind: 'transfer' }, ctx),
    }),
    listWorkspaceAudit: async ({ params, query, ctx }) => {
      const page = parsePage(query.page);
      const id = Number(params.workspace_id);
      const result = await service().audit(id, ctx, page);
      const url = `${ctx.baseUrl}/api/v2/workspaces/${id}/audit`;
      return { status: 200, body: { entries: result.items }, headers: pagingHeaders(url, page, result.total) };
    },
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

/**
 * updateWorkspaceMember's schema failures: a body without a `member` object → 400 `bad_request`; a role outside
 * admin, member and auditor → 422 on `role` (the contract's MemberUnprocessable).
 */
export function memberValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  const parameters = new Set(errors.filter((e) => e.instancePath.startsWith('/path/')).map((e) => e.instancePath));
  if (parameters.size > 0)
    return new ApiError(
      'invalid_parameter',
      `Invalid or missing parameter: ${[...parameters].map((p) => p.slice('/path/'.length)).join(', ')}.`,
    );
  if (errors.every((e) => e.instancePath.startsWith('/requestBody/member/')))
    return validationFailed({ role: ['must be admin, member or auditor (ownership moves by transferWorkspace)'] });
  return new ApiError('bad_request', 'The request body must be a JSON object with a "member" object.');
}

const SETTING_RULES: Record<string, string> = {
  name: 'must be 1 to 100 characters, not only spaces',
  require_two_factor: 'must be true or false',
  require_single_sign_on: 'must be true or false',
  sso_domain: 'must be a domain name such as example.com (at most 253 characters), or null',
};

/**
 * updateWorkspace's schema failures: a bad `workspace_id` → 400 `invalid_parameter`; a body without a `workspace`
 * object → 400 `bad_request`; a field that breaks its rule, or none at all → 422 on that field
 * (the contract's WorkspaceSettingsUnprocessable).
 */
export function workspaceSettingsValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  const parameter = errors.find((e) => e.instancePath.startsWith('/path/'));
  if (parameter)
    return new ApiError('invalid_parameter', `Invalid or missing parameter: ${parameter.instancePath.slice(6)}.`);
  const inside = errors.filter(
    (e) => e.instancePath.startsWith(WRAPPER) && !(e.instancePath === WRAPPER && e.keyword === 'type'),
  );
  if (inside.length === 0 || inside.length < errors.length)
    return new ApiError('bad_request', 'The request body must be a JSON object with a "workspace" object.');
  const fields: Record<string, string[]> = {};
  for (const e of inside) {
    const field = e.instancePath.slice(WRAPPER.length + 1).split('/')[0] ?? '';
    if (field in SETTING_RULES) fields[field] = [SETTING_RULES[field]!];
    else if (e.keyword === 'minProperties')
      fields.workspace = ['must name at least one of name, require_two_factor, require_single_sign_on, sso_domain'];
    else fields.workspace = ['has too many fields'];
  }
  return validationFailed(fields);
}
