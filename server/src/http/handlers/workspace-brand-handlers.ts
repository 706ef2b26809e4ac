/**
 * A workspace's brand (issue 42): `getWorkspaceBrand` and `updateWorkspaceBrand` over workspace/brand-service.ts, and
 * the latter's schema failures as the contract says them.
 */
import type { ErrorObject } from 'ajv';
import { ApiError, validationFailed, type FieldErrors } from '@secret-push/rules';
import type { Core } from '../../core.js';
import type { WorkspaceBrandService } from '../../workspace/brand-service.js';
import type { Handlers } from '../operations.js';

type BrandHandlers = Pick<Handlers, 'getWorkspaceBrand' | 'updateWorkspaceBrand'>;

export function workspaceBrandHandlers(core: Core): BrandHandlers {
  const service = (): WorkspaceBrandService => {
    if (!core.workspaceBrands) throw new ApiError('no_route', 'Workspaces are not served by this instance.');
    return core.workspaceBrands;
  };
  return {
    getWorkspaceBrand: async ({ params, ctx }) => ({
      status: 200,
      body: await service().get(Number(params.workspace_id), ctx),
    }),
    updateWorkspaceBrand: async ({ params, body, ctx }) => ({
      status: 200,
      body: await service().update(Number(params.workspace_id), body, ctx),
    }),
  };
}

const WRAPPER = '/requestBody/brand';

/** What each field of the brand must be, for a value its schema refuses. */
const FIELD_RULES: Record<string, string> = {
  name: 'must be text of at most 100 characters, or null',
  accent_color: 'must be a hex colour, #rrggbb or #rgb, or null',
  header_color: 'must be a hex colour, #rrggbb or #rgb, or null',
  footer_text: 'must be text of at most 300 characters, or null',
  imprint_url: 'must be an absolute https:// URL of at most 2048 characters, or null',
  privacy_url: 'must be an absolute https:// URL of at most 2048 characters, or null',
  logo: 'must be the logo file in base64 (at most 256 KiB decoded), or null',
};

/**
 * updateWorkspaceBrand's schema failures: a malformed `workspace_id` → 400 `invalid_parameter`; a body without a
 * `brand` object → 400 `bad_request`; a field of the wrong type, form or length → 422 on that field (the contract's
 * BrandUnprocessable).
 */
export function brandValidationError(errors: ErrorObject[]): ApiError {
  if (errors.some((e) => e.keyword === 'parse')) return new ApiError('invalid_json');
  const parameters = new Set(errors.filter((e) => e.instancePath.startsWith('/path/')).map((e) => e.instancePath));
  if (parameters.size > 0)
    return new ApiError(
      'invalid_parameter',
      `Invalid or missing parameter: ${[...parameters].map((p) => p.slice('/path/'.length)).join(', ')}.`,
    );
  const fields: FieldErrors = {};
  for (const e of errors) {
    const field = e.instancePath.startsWith(`${WRAPPER}/`) ? e.instancePath.slice(WRAPPER.length + 1) : '';
    if (field === '' || field.includes('/')) continue;
    fields[field] = [FIELD_RULES[field] ?? 'is not valid here'];
  }
  if (Object.keys(fields).length > 0 && errors.every((e) => e.instancePath.startsWith(`${WRAPPER}/`)))
    return validationFailed(fields);
  return new ApiError('bad_request', 'The request body must be a JSON object with a "brand" object.');
}
