import { HttpError } from '../errors.js';
import type { Request, Response } from 'express';
import type { Context } from 'openapi-backend';
import type { Core, RequestContext } from '../../domain/contract.js';
import type { AuthResult } from '../auth.js';
import type { RequestState } from '../middleware.js';

/** What the routing and security steps leave for a handler. */
export interface RoutedState extends RequestState {
  auth: AuthResult;
  ctx: RequestContext;
}

export type OperationHandler = (c: Context, req: Request, res: Response) => Promise<void>;

export function routed(res: Response): RoutedState {
  return res.locals as RoutedState;
}

export type HandlerFactory = (core: Core) => Record<string, OperationHandler>;

/** One query parameter as a string (the spec has already validated it). */
export function queryString(c: Context, name: string): string | undefined {
  const value = (c.request.query as Record<string, unknown>)[name];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The `page` parameter. The spec's schema (integer 1..200) has checked the coerced number; the raw text must also
 * be plain decimal digits, since the validator's coercion would accept `1e2`, `0x10` or ` 5` as integers.
 */
export function pageOf(c: Context): number {
  const raw = queryString(c, 'page');
  if (raw === undefined) return 1;
  if (!/^[0-9]{1,3}$/.test(raw)) {
    throw new HttpError(400, 'invalid_page', 'The page parameter must be an integer from 1 to 200.');
  }
  return Number(raw);
}

export function pathParam(c: Context, name: string): string {
  return String((c.request.params as Record<string, unknown>)[name]);
}
