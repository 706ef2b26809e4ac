/**
 * The legacy v1 API, contract-first: its own hand-written document (openapi/v1, `contractV1()`) routed and validated
 * by a second openapi-backend on the parts the v2 edge uses (../api.ts: body reader, authentication, validation,
 * error mapping), dispatched to ./handlers.ts over the same push service. Every v1 path answers JSON, in v1's
 * shapes and texts: an unknown `.json` path under `/p/`, `/f/`, `/r/` or `/api/v1/` is a JSON 404 `not-found`, never
 * the pages' HTML.
 */
import type { ErrorObject } from 'ajv';
import type { Document } from 'openapi-backend';
import { bundledV1Document, contractV1, isV1Path, type Json } from '@secret-push/contract';

export { isV1Path };
import { ApiError, checkPushSchema, pushFieldErrors, validationFailed } from '@secret-push/rules';
import type { Core } from '../../core.js';
import { pushSchema } from '../../push/push-schema.js';
import { Edge, type ApiEdgeOptions, type EdgeSpec } from '../api.js';
import { validationError as v2ValidationError } from '../errors.js';
import { formToInput } from '../form-input.js';
import { state } from '../middleware.js';
import { v1Handlers } from './handlers.js';
import { V1_CREATES, v1Error, v1PushInput } from './shapes.js';

/** Paths the document marks `x-json-suffix-optional`, without their `.json` → with it (`/api/v1/version`). */
function suffixOptional(document: Json): Map<string, string> {
  const paths = Object.entries((document.paths ?? {}) as Record<string, Json>);
  return new Map(
    paths
      .filter(([path, item]) => item['x-json-suffix-optional'] === true && !path.includes('{'))
      .map(([path]) => [path.replace(/\.json$/, ''), path]),
  );
}

/** Validation errors of a v1 request → 400 for the envelope, v2's per-field 422 for the push, v2's rules for the rest. */
function v1ValidationError(errors: ErrorObject[], operationId: string, requestBody: unknown): ApiError {
  const create = V1_CREATES[operationId];
  if (!create || errors.some((e) => e.keyword === 'parse')) return v2ValidationError(errors);
  const wrapperPath = `/requestBody/${create.wrapper}`;
  const envelope = errors.some(
    (e) =>
      e.instancePath === '' ||
      e.instancePath === '/requestBody' ||
      (e.instancePath === wrapperPath && e.keyword === 'type'),
  );
  if (envelope) return new ApiError('missing_push', `The body has no ${create.wrapper} object and no push field.`);
  if (!errors.some((e) => e.instancePath.startsWith(`${wrapperPath}/`))) return v2ValidationError(errors);
  // The push as the handler would read it, through v2's schema: the same messages as v2 (and the mock) give.
  try {
    checkPushSchema(pushSchema(), v1PushInput(requestBody, create));
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  return validationFailed(pushFieldErrors(errors, wrapperPath));
}

function v1Spec(core: Core): EdgeSpec {
  const optional = suffixOptional(contractV1().document);
  return {
    contract: contractV1(),
    document: bundledV1Document() as unknown as Document,
    handlers: v1Handlers(core),
    tokenIgnored: new Set(['getVersionV1']),
    bodyValue: (body, operationId) =>
      body.type === 'json'
        ? body.value
        : body.type === 'form'
          ? formToInput(body, V1_CREATES[operationId]?.wrapper ?? 'password')
          : undefined,
    validationError: v1ValidationError,
    pushFrame: (operationId) => {
      const create = V1_CREATES[operationId];
      return create ? { wrapper: create.wrapper, topLevel: true } : undefined;
    },
    // `/api/v1/version` is `/api/v1/version.json`.
    routingPath: (path) => optional.get(path) ?? path,
    errorShape: (error, res) => v1Error(error, state(res).operationId),
  };
}

/** The v1 edge: answers the paths isV1Path names. */
export function createV1Edge(core: Core, opts: ApiEdgeOptions): Edge {
  return new Edge(core, opts, v1Spec(core));
}
