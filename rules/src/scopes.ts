/**
 * The scopes of API keys, as the contract lists them (the `ApiKeyScope` schema): what each operation's security
 * requirements name, what a key may be given, and what the account token holds (all of them).
 */
import { ApiKeyScopeSchema } from './generated/schemas.gen.js';
import type { ApiKeyScope } from './generated/types.gen.js';

export type { ApiKeyScope };

/** Every scope, in the contract's order. */
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ApiKeyScopeSchema.enum;

const KNOWN: ReadonlySet<string> = new Set(API_KEY_SCOPES);

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return typeof value === 'string' && KNOWN.has(value);
}

/**
 * The challenge of a 403 `insufficient_scope` (RFC 6750 §3): the scopes the operation needs, space-separated.
 */
export function insufficientScopeChallenge(scopes: readonly string[]): string {
  return `Bearer error="insufficient_scope", scope="${scopes.join(' ')}"`;
}
