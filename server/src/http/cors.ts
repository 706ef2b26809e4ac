/**
 * CORS for browser apps on other origins: the API paths only (`/api/…` and v1's `.json` paths), the origins of
 * `PWPUSH_CORS_ORIGINS` only, never credentials; `POST /p.json` answers `*` as the reference does unless
 * `PWPUSH_CORS_V1_CREATE=false`. The policy is the contract's (`x-cors`, read by `corsAnswer` in the contract
 * toolkit, which the mock's front shares); the `cors` library writes the headers and answers preflights (204).
 *
 * It runs before the per-client limit: a preflight is answered at once and never counted (its 429 would carry no
 * `Retry-After` a page could read), and every answer after it, a 429 included, carries the headers.
 */
import cors from 'cors';
import type { ServerResponse } from 'node:http';
import { contract, corsAnswer, corsRules, isCorsPath } from '@secret-push/contract';
import type { Settings } from '../config/settings.js';
import type { Part } from './middleware.js';
import { targetPath } from './request-target.js';

export function corsLayer(settings: Pick<Settings, 'corsOrigins' | 'corsV1Create'>): Part {
  const rules = corsRules(contract().document);
  const choice = { origins: settings.corsOrigins, anyOriginPaths: settings.corsV1Create };
  const anyOrigin = choice.anyOriginPaths && rules.anyOrigin.length > 0;
  const origins = new Set(choice.origins);
  const answer = cors((req, callback) => {
    const options = corsAnswer(rules, choice, {
      method: req.method ?? 'GET',
      path: targetPath((req as { url?: string }).url ?? ''),
      origin: req.headers.origin,
      requestMethod: req.headers['access-control-request-method'] as string | undefined,
    });
    callback(null, options ?? { origin: false });
  });
  return (req, res, next) => {
    // The common case costs one look: a request without Origin (servers, CLIs, same-origin GETs) or an instance
    // without CORS (and the v1 exception off).
    const origin = req.headers.origin;
    if (origin === undefined || (origins.size === 0 && !anyOrigin) || !isCorsPath(targetPath(req.url ?? '')))
      return next();
    // Answers differ by Origin on an instance with CORS: say so to caches, listed origin or not.
    if (origins.size > 0) varyOnOrigin(res);
    answer(req, res, next);
  };
}

/** Adds `Origin` to the answer's `Vary` list (once). */
function varyOnOrigin(res: ServerResponse): void {
  const existing = res.getHeader('Vary');
  if (existing === undefined || existing === '') res.setHeader('Vary', 'Origin');
  else if (!/(?:^|,)\s*(?:origin|\*)\s*(?:,|$)/i.test(String(existing)))
    res.setHeader('Vary', `${String(existing)}, Origin`);
}
