/** Probes, outside the contract: `/healthz` (the process is up) and `/readyz` (the database answers; 503 otherwise). */
import { Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { Core } from '../core.js';
import { sendError } from './errors.js';
import { state } from './middleware.js';

const READY_TIMEOUT_MS = 3_000;

export function probes(core: Core): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    state(res).route = '/healthz';
    res.status(200).json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    state(res).route = '/readyz';
    try {
      await withTimeout(core.ping(), READY_TIMEOUT_MS);
      res.status(200).json({ status: 'ok' });
    } catch {
      sendError(res, new ApiError('service_unavailable'), state(res).requestId);
    }
  });
  return router;
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
