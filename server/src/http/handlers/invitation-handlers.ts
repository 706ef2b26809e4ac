/**
 * A workspace's invitations (issue 41): create, list and revoke in the workspace, and accept by the token in the
 * body. The rules are in ../../workspace/invitation-service.ts; docs/workspaces.md describes them.
 */
import type { ErrorObject } from 'ajv';
import { ApiError, validationFailed } from '@secret-push/rules';
import type { Core } from '../../core.js';
import type { InvitationService } from '../../workspace/invitation-service.js';
import type { Handlers } from '../operations.js';

type InvitationHandlers = Pick<
  Handlers,
  'createWorkspaceInvitation' | 'listWorkspaceInvitations' | 'revokeWorkspaceInvitation' | 'acceptWorkspaceInvitation'
>;

export function invitationHandlers(core: Core): InvitationHandlers {
  // HTTP test doubles may have no invitations: their routes then answer 404, as any route an instance does not serve.
  const service = (): InvitationService => {
    if (!core.invitations) throw new ApiError('no_route', 'Workspaces are not served by this instance.');
    return core.invitations;
  };
  return {
    createWorkspaceInvitation: async ({ params, body, ctx }) => ({
      status: 201,
      body: await service().create(Number(params.workspace_id), body.invitation, ctx),
    }),
    listWorkspaceInvitations: async ({ params, ctx }) => ({
      status: 200,
      body: await service().list(Number(params.workspace_id), ctx),
    }),
    revokeWorkspaceInvitation: async ({ params, ctx }) => ({
      status: 200,
      body: await service().revoke(Number(params.workspace_id), params.invitation_id, ctx),
    }),
    acceptWorkspaceInvitation: async ({ body, ctx }) => ({
      status: 200,
      body: await service().accept(body.invitation.token, ctx),
    }),
  };
}

const WRAPPER = '/requestBody/invitation';

const FIELD_RULES: Record<string, string> = {
  role: 'must be admin, member or auditor (ownership moves by transferWorkspace)',
  email: 'must be an email address of at most 320 characters',
  expires_in_days: 'must be a whole number of days from 1 to 30',
  token: "must be the 43 characters that follow # in the invitation's link",
};

/**
 * The invitation operations' schema failures: a path parameter → 400 `invalid_parameter`; a body without an
 * `invitation` object (or with fields it does not have) → 400 `bad_request`; a field that breaks its rule → 422 on
 * that field.
 */
export function invitationValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  const parameters = new Set(errors.filter((e) => e.instancePath.startsWith('/path/')).map((e) => e.instancePath));
  if (parameters.size > 0)
    return new ApiError(
      'invalid_parameter',
      `Invalid or missing parameter: ${[...parameters].map((p) => p.slice('/path/'.length)).join(', ')}.`,
    );
  const fields: Record<string, string[]> = {};
  for (const e of errors) {
    const field = e.instancePath.startsWith(`${WRAPPER}/`) ? e.instancePath.slice(WRAPPER.length + 1) : undefined;
    const missing =
      e.instancePath === WRAPPER && e.keyword === 'required' ? String(e.params.missingProperty) : undefined;
    const name = field ?? missing;
    if (name === undefined || !(name in FIELD_RULES)) continue;
    fields[name] = [missing ? 'is required' : FIELD_RULES[name]!];
  }
  if (Object.keys(fields).length > 0 && errors.every((e) => e.instancePath.startsWith(WRAPPER))) {
    return validationFailed(fields);
  }
  return new ApiError('bad_request', 'The request body must be a JSON object with an "invitation" object.');
}
