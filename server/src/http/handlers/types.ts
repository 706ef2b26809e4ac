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

/** The `page` parameter, already checked against the spec's 1..200 integer schema. */
export function pageOf(c: Context): number {
  const raw = queryString(c, 'page');
  return raw === undefined ? 1 : Number(raw);
}

export function pathParam(c: Context, name: string): string {
  return String((c.request.params as Record<string, unknown>)[name]);
}
