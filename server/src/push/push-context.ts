/** What the push service and its create path share: the envelopes' contexts, the request's instant and deadline. */
import type { RequestContext } from '../request-context.js';
import { deadlineFrom } from '../db/deadlines.js';

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
