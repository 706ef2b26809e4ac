/**
 * `updateWorkspace`'s body in the stateful mock, read by the contract's UpdateWorkspaceRequest and the server's field
 * messages (server/src/workspace/workspace-rules.ts): 400 without a `workspace` object, else 422 on the field.
 */
import { ApiError, validationFailed } from '@secret-push/rules';

const DOMAIN = /^[A-Za-z0-9][A-Za-z0-9.-]*\.[A-Za-z]{2,63}$/;

/** The fields a change may name. */
type SettingsInput = {
  name?: string;
  require_two_factor?: boolean;
  require_single_sign_on?: boolean;
  sso_domain?: string | null;
};

export function settingsOf(body: unknown): SettingsInput {
  const input = (body as { workspace?: unknown } | null)?.workspace;
  if (!input || typeof input !== 'object' || Array.isArray(input))
    throw new ApiError('bad_request', 'The request body must be a JSON object with a "workspace" object.');
  const { name, require_two_factor, require_single_sign_on, sso_domain } = input as Record<string, unknown>;
  if (
    name === undefined &&
    require_two_factor === undefined &&
    require_single_sign_on === undefined &&
    sso_domain === undefined
  )
    throw validationFailed({
      workspace: ['must name at least one of name, require_two_factor, require_single_sign_on, sso_domain'],
    });
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '' || name.length > 100))
    throw validationFailed({ name: ['must be 1 to 100 characters, not only spaces'] });
  if (require_two_factor !== undefined && typeof require_two_factor !== 'boolean')
    throw validationFailed({ require_two_factor: ['must be true or false'] });
  if (require_single_sign_on !== undefined && typeof require_single_sign_on !== 'boolean')
    throw validationFailed({ require_single_sign_on: ['must be true or false'] });
  if (
    sso_domain !== undefined &&
    sso_domain !== null &&
    (typeof sso_domain !== 'string' || sso_domain.length > 253 || !DOMAIN.test(sso_domain))
  )
    throw validationFailed({
      sso_domain: ['must be a domain name such as example.com (at most 253 characters), or null'],
    });
  return input as SettingsInput;
}
