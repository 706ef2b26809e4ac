/**
 * Which workspace a create or a list names (the contract's "Workspaces"): the Pro clients put the id in different
 * places under two names (pwpush-cli 0.16 and the Chrome extension `account_id`, top-level and in the query; Raycast
 * and CIPP forks `workspace_id`, top-level in JSON and as a form field beside `push[…]`), as a number or as digits.
 * The server and the stateful mock read them all with this one rule.
 */
import { ApiError, validationFailed } from './errors.js';

/** The names a workspace's id goes by, ours first. */
export const WORKSPACE_ID_FIELDS = ['workspace_id', 'account_id'] as const;

/** An id as sent: a JSON number, or its digits as text (the contract's `WorkspaceRef`). */
function idOf(value: unknown): number | null | 'invalid' {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'number')
    return Number.isInteger(value) && value >= 1 && value <= 2_147_483_647 ? value : 'invalid';
  if (typeof value === 'string' && /^[1-9][0-9]{0,9}$/.test(value)) {
    const id = Number(value);
    return id <= 2_147_483_647 ? id : 'invalid';
  }
  return 'invalid';
}

/** The workspace named in `places`, or null; `refuse` makes the error for an id that is none, or ids that disagree. */
function namedWorkspace(
  places: (Record<string, unknown> | undefined | null)[],
  refuse: (why: string) => ApiError,
): number | null {
  let found: number | null = null;
  for (const place of places) {
    if (!place) continue;
    for (const field of WORKSPACE_ID_FIELDS) {
      const id = idOf(place[field]);
      if (id === 'invalid') throw refuse(`${field} must be a workspace id`);
      if (id === null) continue;
      if (found !== null && found !== id) throw refuse(`names workspace ${found} and workspace ${id}: name one`);
      found = id;
    }
  }
  return found;
}

/**
 * The workspace named by any of `places` (each an object that may hold `workspace_id` and `account_id`: the body,
 * the `push` inside it, the query), or null for none: the personal space. Ids that disagree, or one that is not an
 * id, answer 422 on `workspace_id` (the schema already refuses the second; this keeps the mock and forms exact).
 */
export function requestedWorkspace(...places: (Record<string, unknown> | undefined | null)[]): number | null {
  return namedWorkspace(places, (why) => validationFailed({ workspace_id: [why] }));
}

/**
 * The workspace a list's query names (`workspace_id`, `account_id`), or null: the personal list. On a list the ids
 * are query parameters, so one that is not an id, or two that disagree, answer 400 `invalid_parameter` (as a bad
 * `page` does), not a create's 422.
 */
export function listedWorkspace(query: Record<string, unknown>): number | null {
  return namedWorkspace([query], (why) => new ApiError('invalid_parameter', `workspace_id: ${why}`));
}
