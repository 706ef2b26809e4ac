import type { Ctx } from './context.js';

export const AREAS = [
  'VER',
  'CRE',
  'RET',
  'VIEW',
  'PASS',
  'PREV',
  'DEL',
  'AUTH',
  'AUD',
  'LIST',
  'ERR',
  'FILE',
  'ONCE',
  'HDR',
  'REC',
  'DUR',
  'V1',
  'IDEM',
  'E2E',
  'KEY',
  'REQ',
  'EMAIL',
  'HOOK',
  'RCPT',
  'TEAM',
] as const;
export type Area = (typeof AREAS)[number];

export const AREA_TITLES: Record<Area, string> = {
  VER: 'version and capabilities',
  CRE: 'create',
  RET: 'retrieve',
  VIEW: 'views and expiry',
  PASS: 'passphrase',
  PREV: 'preview',
  DEL: 'delete',
  AUTH: 'authentication',
  AUD: 'audit',
  LIST: 'lists',
  ERR: 'errors',
  FILE: 'files',
  ONCE: 'exactly-once',
  HDR: 'response headers',
  REC: 'push records',
  DUR: 'durations',
  V1: 'legacy API v1',
  IDEM: 'idempotent creates',
  E2E: 'end-to-end encrypted pushes',
  KEY: 'API keys and scopes',
  REQ: 'requests',
  EMAIL: 'email of the link',
  HOOK: 'signed webhooks',
  RCPT: 'who may open a push',
  TEAM: 'workspaces',
};

/**
 * What a requirement needs before it can run. Missing CLI input → `not-run`; a feature the instance reports
 * disabled (or a setting that makes the requirement moot) → `skip`.
 */
export type Need =
  | 'token' // --token (user A)
  | 'tokenB' // --token-b (user B)
  | 'email' // --email (user A's email, legacy headers)
  | 'emailB' // --email-b (user B's email)
  | 'creator' // someone who can create: user A, or anonymous when the instance allows it
  | 'viewer' // a non-owner recipient: anonymous when allowed, else user B
  | 'anonymous' // the instance allows anonymous access
  | 'anonymousOff' // the instance disallows anonymous access
  | 'url'
  | 'qr'
  | 'file' // file pushes enabled, and a creator allowed to make them
  | 'fileAuthRequired' // file pushes require authentication
  | 'kindDisabled' // at least one kind is disabled on the instance
  | 'secondProcess' // --base-url-2
  | 'maxBodyBytes' // --max-body-bytes (the instance's request body limit)
  | 'duration' // the report says expire_after_duration is honoured (features.pushes.expire_after_duration)
  | 'durationNarrowed' // … and the instance refuses some of its values
  | 'v1' // GET /api/v1/version.json answers a v1 report (the legacy API v1 is served)
  | 'idempotency' // the instance reports features.pushes.idempotency_keys enabled
  | 'apiKeys' // the instance reports features.api_keys enabled
  | 'clientEncryptionReported' // the version report has features.pushes.client_encryption
  | 'clientEncryption' // … and says end-to-end encrypted pushes are enabled
  | 'clientEncryptionRequired' // … and says they are required (ordinary pushes refused)
  | 'clientEncryptionOff' // … and says they are off
  | 'requests' // the version report says features.requests.enabled
  | 'emailDispatch' // the report says features.pushes.email_auto_dispatch
  | 'emailOff' // … and says it is off
  | 'requestEmail' // the report says features.requests.email_auto_dispatch (a request's moves are mailed)
  | 'mailbox' // the caller gave a way to read the recipients' mailbox (--mailbox-url, or the mailbox hook)
  | 'webhooks' // the report says features.webhooks.enabled
  | 'recipientAccess' // the report has features.pushes.recipient_access (issue 42)
  | 'recipientNetworks' // … and says allowed_networks is honoured (networks)
  | 'accessCodes' // … and says codes are emailed to recipient_emails (email_codes)
  | 'workspaces' // the report says features.workspaces.enabled (issue 41)
  | 'webhookReceiver'; // the caller gave a receiver the target can reach (--webhook-receiver host:port)

export interface Requirement {
  /** `AREA-NNN`, stable, never reused. */
  id: string;
  area: Area;
  /** One short statement of the behaviour. */
  title: string;
  /**
   * Where it comes from: `seed §…`, `decisions: <section>, bullet N`, `spec: <where in the OpenAPI document>` (what
   * the contract states beyond the seed and the decisions) or `RFC NNNN §…` (what HTTP itself requires).
   */
  source: string;
  needs?: Need[];
  /** Runs in `--profile stateless` (a mock that answers the spec's examples can meet it). */
  stateless?: boolean;
  /** Runs after every other requirement, over everything the run observed. */
  aggregate?: boolean;
  run(ctx: Ctx): Promise<void>;
}

export type Status = 'pass' | 'fail' | 'skip' | 'not-run';

export interface Result {
  id: string;
  area: Area;
  title: string;
  source: string;
  status: Status;
  reason: string;
  ms: number;
}

export function define(area: Area, list: Omit<Requirement, 'area'>[]): Requirement[] {
  return list.map((r) => ({ ...r, area }));
}
