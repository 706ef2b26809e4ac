/** The HTTP edge: the proxy in front, the per-client limit, the body limit, CORS and the metrics endpoint. */
import { type Env, flag, integer, secret, SettingsError, text } from '../setting.js';

const TRUST_PROXY = flag('PWPUSH_TRUST_PROXY', false, {
  meaning:
    'Trust `X-Forwarded-*` headers (client address, protocol) from the one reverse proxy in front: the client address is the one that proxy appended.',
});
const RATE_LIMIT_PER_MINUTE = integer('PWPUSH_RATE_LIMIT_PER_MINUTE', {
  default: 120,
  min: 0,
  max: 1_000_000,
  meaning:
    "Requests per minute per client address (as the reference's default throttle; `/healthz`, `/readyz` and `/assets/` are not counted); `0` turns the limit off, e.g. for a conformance run or a benchmark.",
});
const BODY_LIMIT_BYTES = integer('PWPUSH_BODY_LIMIT_BYTES', {
  default: 8 * 1024 * 1024,
  min: 64 * 1024,
  max: 64 * 1024 * 1024,
  meaning:
    'Largest request body (bytes, as sent and as decoded) of a caller who may not send files: anonymous callers while files need a token, everyone while file pushes are off. Callers who may send files get room for every file at the file limits. The limit is chosen per operation and caller before the body is read; over it: 413. The default fits the largest text push (1,048,576 characters) in any JSON encoding.',
});
const METRICS = flag('PWPUSH_METRICS', false, {
  meaning:
    'Serve Prometheus metrics at `GET /metrics` (request counts and latencies by operation, pool, sweeper, refusals, process figures; summed over the workers).',
});
const METRICS_TOKEN = secret('PWPUSH_METRICS_TOKEN', {
  shown: 'unset',
  accepts: 'at least 16 characters, no spaces',
  meaning: 'When set, `/metrics` needs `Authorization: Bearer <token>`; needs `PWPUSH_METRICS=true`.',
  what: 'the bearer token a scrape of /metrics must send',
});
const CORS_ORIGINS = text('PWPUSH_CORS_ORIGINS', {
  shown: 'unset (no CORS)',
  accepts: 'comma-separated exact origins',
  meaning:
    'Exact origins (`https://app.example.org,http://localhost:3000`) of browser apps that may call the API (`/api/…` and the v1 `.json` paths) from another origin: preflights, `Access-Control-Allow-Origin` for those origins only, the headers clients read exposed. Never on pages, never with credentials (cookies). See [operations.md](operations.md#browser-apps-on-another-origin-cors).',
});
const CORS_V1_CREATE = flag('PWPUSH_CORS_V1_CREATE', true, {
  meaning:
    'v1 compatibility: `POST /p.json` (an anonymous create) answers `Access-Control-Allow-Origin: *` from any origin, as Password Pusher does. `false` applies `PWPUSH_CORS_ORIGINS` to it like every other API path.',
});

export const HTTP_SETTINGS = [
  TRUST_PROXY,
  RATE_LIMIT_PER_MINUTE,
  BODY_LIMIT_BYTES,
  CORS_ORIGINS,
  CORS_V1_CREATE,
  METRICS,
  METRICS_TOKEN,
];

export function readHttp(env: Env) {
  return {
    trustProxy: TRUST_PROXY.read(env),
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE.read(env),
    bodyLimitBytes: BODY_LIMIT_BYTES.read(env),
    ...readMetrics(env),
    ...readCors(env),
  };
}

/** PWPUSH_CORS_ORIGINS: exact origins (scheme, host, port; no path, no `*`), each as browsers send it in `Origin`. */
function readCors(env: Env): { corsOrigins: string[]; corsV1Create: boolean } {
  const value = CORS_ORIGINS.read(env);
  const corsOrigins: string[] = [];
  for (const part of value === undefined ? [] : value.split(',')) {
    const text = part.trim();
    if (text === '') continue;
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      /* refused below */
    }
    // An origin is what `Origin` carries: scheme, host and port; no path, query, credentials or wildcard.
    const exact =
      url &&
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.pathname === '/' &&
      !url.search &&
      !url.hash &&
      !url.username &&
      !url.password &&
      !text.includes('*');
    if (!exact) {
      throw new SettingsError(
        'PWPUSH_CORS_ORIGINS',
        `PWPUSH_CORS_ORIGINS must be a comma-separated list of exact origins such as https://app.example.org or http://localhost:3000 (scheme, host and port; no path and no wildcard; got "${text}")`,
      );
    }
    const origin = url!.origin;
    if (!corsOrigins.includes(origin)) corsOrigins.push(origin);
  }
  return { corsOrigins, corsV1Create: CORS_V1_CREATE.read(env) };
}

function readMetrics(env: Env): { metricsEnabled: boolean; metricsToken: string | null } {
  const metricsEnabled = METRICS.read(env);
  const metricsToken = METRICS_TOKEN.read(env)?.value ?? null;
  if (metricsToken !== null) {
    if (!metricsEnabled) {
      throw new SettingsError(
        'PWPUSH_METRICS_TOKEN',
        'PWPUSH_METRICS_TOKEN is set but PWPUSH_METRICS is not true: set PWPUSH_METRICS=true to serve /metrics',
      );
    }
    if (metricsToken.length < 16 || /\s/.test(metricsToken)) {
      throw new SettingsError(
        'PWPUSH_METRICS_TOKEN',
        'PWPUSH_METRICS_TOKEN must be at least 16 characters without spaces',
      );
    }
  }
  return { metricsEnabled, metricsToken };
}
