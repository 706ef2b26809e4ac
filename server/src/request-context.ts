/**
 * What every service call carries of its request: who is asking and how. The lowest floor of the server's areas
 * (ARCHITECTURE.md, "Floors"): the push, mail and request services, the core and the HTTP edge all read these types,
 * so they live below all of them.
 */
import type { ApiKeyScope } from '@secret-push/rules';

/** Who is asking, as the HTTP layer (or a page) resolved it. `userId` is null for anonymous callers. */
export interface Actor {
  userId: string | null;
  ip: string;
  userAgent: string;
  referrer: string;
}

/** The API key a request came with: its id and expiry (what a key it makes must stay inside), and its workspace. */
export interface CallerKey {
  id: string;
  expiresAt: Date | null;
  /**
   * The workspace the key acts for (issue 41), or null: a personal key. A workspace's key acts there with an owner's
   * or admin's rights whoever made it, and nowhere else (../workspace/workspace-service.ts).
   */
  workspaceId: number | null;
}

/** The workspace the caller's key acts for, or null: a personal key, the account token, or anonymous. */
export function keyWorkspace(ctx: Pick<RequestContext, 'key'>): number | null {
  return ctx.key?.workspaceId ?? null;
}

/** What a service call needs of its request: the caller, `{base}` for URLs, and the instant (tests move it). */
export interface RequestContext {
  actor: Actor;
  baseUrl: string;
  now?: Date;
  /** Writes on behalf of this request change nothing after it (default: 8 s from the call; db/deadlines.ts). */
  deadline?: Date;
  /** The scopes of the caller's API key; absent for every scope (the account token, the legacy pair, anonymous). */
  scopes?: readonly ApiKeyScope[];
  /** The caller's API key (its id and expiry); absent for the account token, the legacy pair and anonymous callers. */
  key?: CallerKey;
  /**
   * The page's sign-in session the caller acts through, and whether it began at the instance's single sign-on
   * provider; absent for API credentials (a token or key does not say how its user signed in). A workspace that
   * requires single sign-on reads it (../workspace/workspace-repository.ts, `signOnProof`).
   */
  session?: { singleSignOn: boolean };
}
