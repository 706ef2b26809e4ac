/**
 * The cross-origin policy of the API (`x-cors` at the root of the v2 document, explained in its description under
 * "Browser apps on another origin"), and the one decision of which CORS headers a request gets. The server
 * (server/src/http/cors.ts) and the Prism mock's front (openapi/tooling/mock-front.ts) both answer with the `cors`
 * library from this decision, so the two send the same headers.
 */
import type { Json } from './refs.js';

/** `x-cors`: what a preflight allows and what answers expose. */
export interface CorsRules {
  maxAgeSeconds: number;
  methods: string[];
  allowedHeaders: string[];
  exposedHeaders: string[];
  /** `METHOD /path` pairs that answer `Access-Control-Allow-Origin: *` (v1's anonymous create) unless turned off. */
  anyOrigin: string[];
}

/** What the operator chose. */
export interface CorsSettings {
  /** Exact origins (`https://app.example.org`) whose browser apps may call the API; empty: none. */
  origins: readonly string[];
  /** The `anyOrigin` paths answer `*` (PWPUSH_CORS_V1_CREATE, on by default as in the reference). */
  anyOriginPaths: boolean;
}

/** The options of the `cors` library for one request (its `CorsOptions`, without depending on its types here). */
export interface CorsAnswer {
  origin: string;
  methods: string[];
  allowedHeaders: string[];
  exposedHeaders: string[];
  maxAge: number;
  credentials: false;
  preflightContinue: false;
  optionsSuccessStatus: 204;
}

const strings = (value: unknown, name: string): string[] => {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    throw new Error(`x-cors: ${name} must be a list of strings`);
  return value as string[];
};

/** Reads `x-cors` of a document (the v2 one holds the policy of both APIs). */
export function corsRules(document: Json): CorsRules {
  const x = document['x-cors'] as Json | undefined;
  if (!x || typeof x !== 'object') throw new Error('the document has no x-cors policy');
  const maxAgeSeconds = x['max-age'];
  if (!Number.isInteger(maxAgeSeconds) || (maxAgeSeconds as number) < 0)
    throw new Error('x-cors: max-age must be a whole number of seconds');
  return {
    maxAgeSeconds: maxAgeSeconds as number,
    methods: strings(x['allow-methods'], 'allow-methods'),
    allowedHeaders: strings(x['allow-headers'], 'allow-headers'),
    exposedHeaders: strings(x['expose-headers'], 'expose-headers'),
    anyOrigin: strings(x['any-origin'] ?? [], 'any-origin'),
  };
}

/**
 * Whether a path belongs to the legacy v1 API: anything under `/api/v1/`, and every `.json` path of the reference's
 * three prefixes (`/p.json`, `/p/{url_token}.json`, `/f/{url_token}/audit.json`, …). `/p/{url_token}` without
 * `.json` is the recipient's page.
 */
export function isV1Path(path: string): boolean {
  return path.startsWith('/api/v1/') || path === '/api/v1' || /^\/[pfr](?:\.json|\/.*\.json)$/.test(path);
}

/** The paths CORS applies to: the API (`/api/…`, v1's `.json` paths), never a page, an asset or a probe. */
export function isCorsPath(path: string): boolean {
  return path.startsWith('/api/') || isV1Path(path);
}

/** The request as the decision reads it. */
export interface CorsRequest {
  method: string;
  path: string;
  /** The `Origin` header, if any. */
  origin: string | undefined;
  /** A preflight's `Access-Control-Request-Method`, if any. */
  requestMethod?: string | undefined;
}

/**
 * The `cors` options for a request, or null when it gets no CORS header at all: no `Origin`, not an API path, or an
 * origin that is not listed (outside the `*` exception). Never credentials.
 */
export function corsAnswer(rules: CorsRules, settings: CorsSettings, req: CorsRequest): CorsAnswer | null {
  if (req.origin === undefined || !isCorsPath(req.path)) return null;
  const method = (req.method === 'OPTIONS' && req.requestMethod ? req.requestMethod : req.method).toUpperCase();
  const anyOrigin = settings.anyOriginPaths && rules.anyOrigin.includes(`${method} ${req.path}`);
  if (!anyOrigin && !settings.origins.includes(req.origin)) return null;
  return {
    origin: anyOrigin ? '*' : req.origin,
    methods: rules.methods,
    allowedHeaders: rules.allowedHeaders,
    exposedHeaders: rules.exposedHeaders,
    maxAge: rules.maxAgeSeconds,
    credentials: false,
    preflightContinue: false,
    optionsSuccessStatus: 204,
  };
}
