/**
 * What a requirement sees: an HTTP client that validates every response against the contract, the caller
 * identities the CLI was given, the instance's reported features, and small assertion helpers.
 */
import type { WebhookReceiver } from './receiver.js';
import { Contract, type Violation } from './spec.js';

let loadedV1: Contract | undefined;

/** The legacy v1 document, loaded once per process. */
export function v1Contract(): Contract {
  loadedV1 ??= Contract.loadV1();
  return loadedV1;
}

export class AssertionFailure extends Error {
  override name = 'AssertionFailure';
}

/**
 * Thrown by a requirement that found, once running, that this target cannot give it what it needs (not a fault of
 * the target): the requirement is reported `not-run` with this reason, which says what to add to run it.
 */
export class NotRunHere extends Error {
  override name = 'NotRunHere';
}

/**
 * The target answered 429 for a reason that is not one the suite tests (the passphrase attempt limit answers
 * `too_many_attempts`): its per-client rate limit, a storage quota, or its limit on test events and redeliveries is
 * on. Every requirement after it would fail for that reason alone, so the run stops and says so. `policy`: the
 * answer's `RateLimit-Policy`, which names the limit that refused.
 */
export class TargetRateLimited extends Error {
  constructor(
    readonly call: string,
    readonly retryAfter: string | null,
    readonly code?: unknown,
    readonly policy?: string | null,
  ) {
    super(rateLimitedReason(call, retryAfter, code, policy ?? ''));
    this.name = 'TargetRateLimited';
  }
}

function rateLimitedReason(call: string, retryAfter: string | null, code: unknown, policy: string): string {
  const after = retryAfter ? `, Retry-After ${retryAfter}` : '';
  if (code === 'storage_quota_exceeded')
    return (
      `${call} answered 429 (storage_quota_exceeded${after}): the target's storage quota is ` +
      'full for this client (the suite stores a few MiB of files and text). Raise or turn off the quota for the run (on ' +
      'Secret Push: PWPUSH_ANONYMOUS_STORAGE_PER_HOUR=0 and PWPUSH_USER_STORAGE=0), or wait for Retry-After, then run the suite again.'
    );
  if (/"webhook-(test|redeliver)"/.test(policy))
    return (
      `${call} answered 429 (rate limited${after}): the target limits the test events and redeliveries an account ` +
      'may ask for a minute (a run sends three test events, a grade one or more per webhook fault). Turn the limit off ' +
      'for the run (on Secret Push: PWPUSH_WEBHOOK_TESTS_PER_MINUTE=0 and PWPUSH_WEBHOOK_REDELIVERIES_PER_MINUTE=0), ' +
      'or wait for Retry-After, then run the suite again.'
    );
  return (
    `${call} answered 429 (rate limited${after}): the target's per-client rate limit is on, ` +
    'and the suite sends about 620 requests in under a minute. Turn the limit off for the run (on Secret Push: ' +
    'start the server with PWPUSH_RATE_LIMIT_PER_MINUTE=0; on Password Pusher: raise PWP__THROTTLING__MINUTE ' +
    'and PWP__THROTTLING__SECOND), or let this client through it, then run the suite again.'
  );
}

const codeOf = (body: unknown): unknown =>
  body && typeof body === 'object' ? (body as { code?: unknown }).code : undefined;

/** A 429 that is the target's rate limit or storage quota rather than a limit the suite tests (`too_many_attempts`). */
function isRateLimit(status: number, body: unknown): boolean {
  return status === 429 && codeOf(body) !== 'too_many_attempts';
}

export interface Options {
  baseUrl: string;
  /** Another process of the same installation (same database), for the cross-process requirements. */
  baseUrl2?: string;
  token?: string;
  tokenB?: string;
  email?: string;
  emailB?: string;
  profile: 'full' | 'stateless';
  only?: string[];
  /** The instance's defaults when they differ from the decisions' (7 days, 5 views). */
  defaultDays?: number;
  defaultViews?: number;
  /** Per-request time limit in ms. */
  timeoutMs?: number;
  /** The instance's request body limit in bytes (`--max-body-bytes`), for the 413 requirement. */
  maxBodyBytes?: number;
  /**
   * The instance's configured public base URL (`--public-base-url`), when it is not the URL the suite calls: push
   * links (json_url, html_url, preview url) start with it. Without it they must start with the called origin.
   */
  publicBaseUrl?: string;
  /** The domain of the EMAIL class's recipient addresses (`--mail-domain`; default `example.com`, which takes no mail). */
  mailDomain?: string;
  /**
   * The hook that reads a recipient's mailbox (EMAIL-007, delivery): the messages that reached `address`, each as its
   * subject and its text and HTML parts. On the command line, `--mailbox-url URL` makes one: GET `URL?to=<address>`
   * answering a JSON array of `{ "subject", "text", "html" }`.
   */
  mailbox?: (address: string) => Promise<MailboxMessage[]>;
  /**
   * Where the HOOK class listens for deliveries (`--webhook-receiver host:port`): an address the target can reach
   * and may send to. `runSuite` starts the receiver there (port 0: any free port) and closes it at the end.
   */
  webhookReceiver?: { host: string; port: number };
  /** The receiver `runSuite` started (set by it). */
  receiver?: WebhookReceiver;
}

/** A message as the mailbox hook gives it. */
export interface MailboxMessage {
  subject?: string;
  text?: string;
  html?: string;
}

export interface Features {
  anonymous_access: boolean;
  api_token_authentication: boolean;
  /** Signed webhooks; absent on servers without them (the reference). */
  webhooks?: { enabled: boolean; read_receipts: boolean };
  /** API keys with scopes; absent on servers without them (the reference). */
  api_keys?: { enabled: boolean; scopes: string[] };
  pushes: {
    enabled: boolean;
    file_attachments: { enabled: boolean; requires_authentication: boolean };
    url_pushes: { enabled: boolean };
    qr_code_pushes: { enabled: boolean };
    /** Absent on servers that ignore `expire_after_duration`. */
    expire_after_duration?: { enabled: boolean; min: number; values: number[] };
    /** Absent on servers without idempotent creates (the reference). */
    idempotency_keys?: { enabled: boolean; lifetime_hours: number };
    /** The link emailed to recipients (`notify_emails_to`, `notifyEmails`). */
    email_auto_dispatch: boolean;
    /** End-to-end encrypted pushes; absent on instances that do not know them. */
    client_encryption?: {
      enabled: boolean;
      default: boolean;
      required: boolean;
      schemes: { scheme: string; version: number }[];
    };
    /** Who may open a push (issue 42); absent on servers without it (the reference). */
    recipient_access?: {
      networks: boolean;
      email_codes: boolean;
      single_sign_on: boolean;
      max_emails: number;
      max_networks: number;
    };
  };
  /** Workspaces (`/api/v2/workspaces`, Pro's `/api/v2/accounts`, ids on creates and lists); absent on servers without them. */
  workspaces?: { enabled: boolean };
  /** Requests (`/api/v2/requests`); `enabled: false` (or an older report) turns the REQ class off. */
  requests?: { enabled: boolean; email_auto_dispatch?: boolean };
}

/** What the instance answers besides its v2 report: the legacy v1 API's version report, when it serves one. */
export interface Instance {
  /** `GET /api/v1/version.json` answered a v1 report (`api_version` 1.x). */
  v1: boolean;
}

/** Who makes a call: `anon` sends no credentials, `a`/`b` the bearer tokens, or explicit headers. */
export type Caller = 'anon' | 'a' | 'b' | { headers: Record<string, string> };

export interface CallOptions {
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  /** A query string appended verbatim (already percent-encoded), e.g. `page=%205` for a page with a space. */
  rawQuery?: string;
  headers?: Record<string, string>;
  /** A JSON body (serialized) … */
  body?: unknown;
  /** … or a raw body sent as is, with `contentType`. */
  rawBody?: string;
  contentType?: string;
  as?: Caller;
  /** Append `.json` to the path (clients of the reference send it). */
  jsonSuffix?: boolean;
  /** Send to this base URL instead of `--base-url` (the second process). */
  base?: string;
  /** v1: send the path without its `.json` (a path the v1 document marks x-json-suffix-optional). */
  withoutSuffix?: boolean;
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
  operation: string;
}

export interface Observed {
  target: string;
  method: string;
  url: string;
  /** The origin the request went to (`--base-url`'s, `--base-url-2`'s, or a download link's). */
  origin: string;
  status: number;
  cacheControl: string | null;
  /** Every response header, for the requirements that check media types and required headers. */
  headers: Headers;
  body: unknown;
  text: string;
  /** What was sent: the request headers and the JSON body (when one was sent as JSON). */
  request: { headers: Record<string, string>; body?: unknown };
  /** Set for answers of the legacy v1 API (`target` is a v1 operationId or component response). */
  v1?: true;
}

export class Ctx {
  readonly violations: { call: string; violation: Violation }[] = [];
  /** Requirements can add a reason to a passing result (e.g. what was measured). */
  note = '';
  /**
   * True while an aggregate requirement checks a run that is still going (`stopOnFailure`): having observed
   * nothing to check yet is then no failure.
   */
  partial = false;

  constructor(
    readonly options: Options,
    readonly contract: Contract,
    readonly features: Features,
    readonly observed: Observed[],
    /** The legacy v1 document (the V1 requirements' calls are checked against it). */
    readonly v1: Contract = v1Contract(),
  ) {}

  /** The document an observed answer is checked against. */
  contractOf(o: Observed): Contract {
    return o.v1 ? this.v1 : this.contract;
  }

  get hasToken(): boolean {
    return Boolean(this.options.token);
  }

  /** The identity that creates pushes: user A when a token was given, else anonymous. */
  get creator(): Caller {
    return this.options.token ? 'a' : 'anon';
  }

  /** A recipient that is not the owner, so its retrievals count: anonymous when allowed, else user B. */
  get viewer(): Caller {
    return this.features.anonymous_access ? 'anon' : 'b';
  }

  authHeaders(as: Caller | undefined): Record<string, string> {
    if (!as || as === 'anon') return {};
    if (typeof as === 'object') return as.headers;
    const token = as === 'a' ? this.options.token : this.options.tokenB;
    if (!token) throw new AssertionFailure(`internal: no token for caller ${as}`);
    return { authorization: `Bearer ${token}` };
  }

  /** Calls an operation of the spec by operationId; the response is validated against that operation. */
  async call<T = any>(operationId: string, opts: CallOptions = {}): Promise<Res<T>> {
    const op = this.contract.operation(operationId);
    let path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = opts.params?.[name];
      if (value === undefined) throw new Error(`missing path parameter ${name} for ${operationId}`);
      return encodeURIComponent(value);
    });
    if (opts.jsonSuffix) path += '.json';
    return this.send<T>(operationId, op.method, path, opts);
  }

  /** Calls an operation of the legacy v1 document by operationId (`createPasswordV1`, …), validated against it. */
  async callV1<T = any>(operationId: string, opts: CallOptions = {}): Promise<Res<T>> {
    const op = this.v1.operation(operationId);
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = opts.params?.[name] ?? (name === 'prefix' ? 'p' : undefined);
      if (value === undefined) throw new Error(`missing path parameter ${name} for ${operationId}`);
      return encodeURIComponent(value);
    });
    return this.send<T>(operationId, op.method, opts.withoutSuffix ? path.replace(/\.json$/, '') : path, opts, this.v1);
  }

  /** A request outside every operation (unknown path, undefined method), validated against a component response. */
  async raw<T = any>(componentResponse: string, method: string, path: string, opts: CallOptions = {}): Promise<Res<T>> {
    return this.send<T>(`#${componentResponse}`, method, path, opts);
  }

  /** `raw` for a v1 path: checked against the v1 document's component responses (NoRoute, MethodNotAllowed). */
  async rawV1<T = any>(
    componentResponse: string,
    method: string,
    path: string,
    opts: CallOptions = {},
  ): Promise<Res<T>> {
    return this.send<T>(`#${componentResponse}`, method, path, opts, this.v1);
  }

  private async send<T>(
    target: string,
    method: string,
    path: string,
    opts: CallOptions,
    against: Contract = this.contract,
  ): Promise<Res<T>> {
    const url = new URL((opts.base ?? this.options.baseUrl).replace(/\/$/, '') + path);
    for (const [key, value] of Object.entries(opts.query ?? {})) url.searchParams.set(key, String(value));
    if (opts.rawQuery) url.search = url.search ? `${url.search}&${opts.rawQuery}` : `?${opts.rawQuery}`;
    const headers: Record<string, string> = { accept: 'application/json', ...this.authHeaders(opts.as) };
    let body: string | undefined;
    let sent: unknown;
    if (opts.rawBody !== undefined) {
      body = opts.rawBody;
      headers['content-type'] = opts.contentType ?? 'application/json';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      sent = opts.body;
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    Object.assign(headers, opts.headers ?? {});
    const label = `${method} ${url.pathname}${url.search}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
    } catch (error) {
      throw new AssertionFailure(`${label}: no answer (${(error as Error).message})`);
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (isRateLimit(response.status, parsed))
      throw new TargetRateLimited(
        label,
        response.headers.get('retry-after'),
        codeOf(parsed),
        response.headers.get('ratelimit-policy'),
      );
    for (const violation of against.validate(target, response.status, response.headers, text)) {
      this.violations.push({ call: `${label} → ${response.status}`, violation });
    }
    this.observed.push({
      target,
      method,
      url: label,
      origin: url.origin,
      status: response.status,
      cacheControl: response.headers.get('cache-control'),
      headers: response.headers,
      body: parsed,
      text,
      request: { headers, ...(sent === undefined ? {} : { body: sent }) },
      ...(against === this.v1 ? { v1: true as const } : {}),
    });
    return { status: response.status, headers: response.headers, text, body: parsed as T, operation: target };
  }

  /** Fetches a URL the server handed out (a signed download link) as bytes, validated against `operationId`. */
  async download(operationId: string, url: string): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: '*/*' },
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 15_000),
      });
    } catch (error) {
      throw new AssertionFailure(`GET ${url}: no answer (${(error as Error).message})`);
    }
    const bytes = Buffer.from(await response.arrayBuffer());
    const text = response.headers.get('content-type')?.includes('json') ? bytes.toString('utf8') : '';
    const label = `GET ${new URL(url).pathname}`;
    if (isRateLimit(response.status, parseJson(text)))
      throw new TargetRateLimited(label, response.headers.get('retry-after'), codeOf(parseJson(text)));
    for (const violation of this.contract.validate(operationId, response.status, response.headers, text)) {
      this.violations.push({ call: `${label} → ${response.status}`, violation });
    }
    this.observed.push({
      target: operationId,
      method: 'GET',
      url: label,
      origin: new URL(url).origin,
      status: response.status,
      cacheControl: response.headers.get('cache-control'),
      headers: response.headers,
      body: parseJson(text),
      text,
      request: { headers: { accept: '*/*' } },
    });
    return { status: response.status, headers: response.headers, bytes };
  }

  // ---- push helpers ----

  /** Creates a push and insists on 201; returns the owner record. */
  async create(push: Record<string, unknown>, as: Caller = this.creator): Promise<any> {
    const res = await this.call('createPush', { body: { push }, as });
    expectStatus(res, 201);
    return res.body;
  }

  /** Retrieves a push as the viewer (a counting view) unless told otherwise. */
  async retrieve(urlToken: string, opts: CallOptions = {}): Promise<Res> {
    return this.call('getPush', { params: { url_token: urlToken }, as: this.viewer, ...opts });
  }
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

// ---- assertions: each one can fail ----

export function expect(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailure(message);
}

/** Longest part of the target's own `error` text a failure line quotes. */
const QUOTED_ERROR_CHARS = 200;

/**
 * What the target said about a refusal, for a failure line: ` (code: "error text")`, from an ErrorResponse body (the
 * server's reason is often the fix: `url: names a host that does not resolve`); empty when the body has neither.
 */
export function saidByTarget(res: Pick<Res, 'body'>): string {
  const body = res.body && typeof res.body === 'object' ? (res.body as { code?: unknown; error?: unknown }) : {};
  const code = typeof body.code === 'string' ? body.code : undefined;
  const error = typeof body.error === 'string' ? body.error.replace(/\s+/g, ' ').trim() : undefined;
  const quoted =
    error === undefined
      ? undefined
      : JSON.stringify(error.length > QUOTED_ERROR_CHARS ? `${error.slice(0, QUOTED_ERROR_CHARS - 1)}…` : error);
  if (code === undefined && quoted === undefined) return '';
  return ` (${[code, quoted].filter(Boolean).join(': ')})`;
}

export function expectStatus(res: Res, ...statuses: number[]): void {
  if (!statuses.includes(res.status)) {
    throw new AssertionFailure(
      `${res.operation}: expected ${statuses.join(' or ')}, got ${res.status}${saidByTarget(res)}`,
    );
  }
}

export function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new AssertionFailure(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

export function expectCode(res: Res, code: string): void {
  const actual = res.body && typeof res.body === 'object' ? (res.body as { code?: unknown }).code : undefined;
  if (actual !== code) {
    const error = res.body && typeof res.body === 'object' ? (res.body as { error?: unknown }).error : undefined;
    const said = typeof error === 'string' ? ` (${JSON.stringify(error.slice(0, QUOTED_ERROR_CHARS))})` : '';
    throw new AssertionFailure(
      `${res.operation} ${res.status}: expected code ${code}, got ${JSON.stringify(actual)}${said}`,
    );
  }
}

export function unique(label = 'conformance'): string {
  return `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}
