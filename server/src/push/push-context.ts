/**
 * What the push service and its create path share: the envelopes' contexts, the request's instant and deadline, and
 * who asks about a push as its owner (a workspace's API key only within its workspace).
 */
import { ApiError } from '@secret-push/rules';
import { keyWorkspace, type RequestContext } from '../request-context.js';
import { deadlineFrom } from '../db/deadlines.js';
import type { PushRow } from './push-tables.js';

/** The additional-data contexts envelopes are bound to (tests use them to decrypt what is stored). */
export const envelopeContexts = {
  payload: (pushId: string) => `pushes.payload:${pushId}`,
  name: (pushId: string) => `pushes.name:${pushId}`,
  note: (pushId: string) => `pushes.note:${pushId}`,
  filename: (fileId: string) => `push_files.filename:${fileId}`,
  content: (fileId: string) => `push_files.content:${fileId}`,
};

/** The request's instant (tests move it), and its deadline (db/deadlines.ts). */
export const nowOf = (ctx: RequestContext): Date => ctx.now ?? new Date();
export const deadlineOf = (ctx: RequestContext): Date => ctx.deadline ?? deadlineFrom();

export const decodeBase64 = (content: string) => Buffer.from(content, 'base64');

/**
 * Who asks about `row` as its possible owner: the caller's user, except that a workspace's API key is its creator
 * only within its workspace (in the creator's personal space, or another workspace, it owns nothing).
 */
export function ownerAsked(row: PushRow, ctx: RequestContext): string | null {
  const own = keyWorkspace(ctx);
  return own === null || row.workspaceId === own ? ctx.actor.userId : null;
}

/** `ownerAsked`, for an operation only an owner (or a workspace's governor) may do: 403 for a key of another space. */
export function ownerAsking(row: PushRow, ctx: RequestContext): string | null {
  const asking = ownerAsked(row, ctx);
  if (asking === null && ctx.actor.userId !== null)
    throw new ApiError('forbidden', "A workspace's API key acts only in its workspace.");
  return asking;
}
