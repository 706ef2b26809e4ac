/** Runs the requirements against one base URL: reads the capability report first, gates, runs, collects results. */
import {
  AssertionFailure,
  Ctx,
  NotRunHere,
  TargetRateLimited,
  type Features,
  type Instance,
  type Observed,
  type Options,
} from './context.js';
import { Contract } from './spec.js';
import { AREAS, type Need, type Requirement, type Result } from './requirement.js';
import { version, create } from './requirements/pushes.js';
import { retrieve, views, passphrase, preview } from './requirements/retrieval.js';
import { remove, auth } from './requirements/owner.js';
import { audit, lists } from './requirements/audit-lists.js';
import { errors, files, once, headers } from './requirements/cross.js';
import { httpHeaders } from './requirements/http.js';
import { records } from './requirements/records.js';
import { durations } from './requirements/durations.js';
import { legacyV1 } from './requirements/v1.js';
import { apiKeys } from './requirements/api-keys.js';
import { idempotency } from './requirements/idempotency.js';
import { endToEnd } from './requirements/e2e.js';
import { requests } from './requirements/requests.js';
import { email } from './requirements/email.js';
import { webhooks } from './requirements/webhooks.js';
import { recipientAccess } from './requirements/recipient-access.js';
import { workspaceRequirements } from './requirements/workspaces.js';
import { workspaceWebhookRequirements } from './requirements/workspace-webhooks.js';
import { workspaceDeletionRequirements } from './requirements/workspace-deletion.js';
import { workspaceRequestRequirements } from './requirements/workspace-requests.js';
import { workspaceMemberRequirements } from './requirements/workspace-members.js';
import { workspaceSignInRequirements } from './requirements/workspace-sign-in.js';
import { startWebhookReceiver } from './receiver.js';

export const REQUIREMENTS: Requirement[] = [
  ...version,
  ...create,
  ...retrieve,
  ...views,
  ...passphrase,
  ...preview,
  ...remove,
  ...auth,
  ...audit,
  ...lists,
  ...errors,
  ...files,
  ...once,
  ...headers,
  ...httpHeaders,
  ...records,
  ...durations,
  ...legacyV1,
  ...idempotency,
  ...apiKeys,
  ...endToEnd,
  ...requests,
  ...email,
  ...webhooks,
  ...recipientAccess,
  ...workspaceRequirements,
  ...workspaceWebhookRequirements,
  ...workspaceRequestRequirements,
  ...workspaceMemberRequirements,
  ...workspaceDeletionRequirements,
  ...workspaceSignInRequirements,
];

export interface RunOutput {
  baseUrl: string;
  profile: Options['profile'];
  features: Features | null;
  results: Result[];
  /** Set when the run stopped early because the target rate-limited it (what to do about it, in words). */
  rateLimited?: string;
}

/** The RCPT class's gates (issue 42): what the version report says of `features.pushes.recipient_access`. */
function recipientAccessGate(
  need: 'recipientAccess' | 'recipientNetworks' | 'accessCodes',
  r: Features['pushes']['recipient_access'],
): { status: 'skip'; reason: string } | null {
  if (!r) return { status: 'skip', reason: 'instance does not report features.pushes.recipient_access' };
  if (need === 'recipientNetworks' && !r.networks)
    return { status: 'skip', reason: 'instance does not report recipient_access.networks (allowed_networks)' };
  if (need === 'accessCodes' && !r.email_codes)
    return { status: 'skip', reason: 'instance does not report recipient_access.email_codes (no codes by email)' };
  return null;
}

/** Why a requirement cannot run here: `not-run` for missing CLI input, `skip` for what the instance reports. */
type Gated = { status: 'skip' | 'not-run'; reason: string };

function gate(need: Need, options: Options, f: Features, instance: Instance): Gated | null {
  const anon = f.anonymous_access;
  const p = f.pushes;
  switch (need) {
    case 'token':
      return options.token
        ? null
        : { status: 'not-run', reason: 'needs a token of user A (SECRET_PUSH_TOKEN, or --token)' };
    case 'tokenB':
      return options.tokenB
        ? null
        : { status: 'not-run', reason: 'needs a token of a second user B (SECRET_PUSH_TOKEN_B, or --token-b)' };
    case 'email':
      return options.email
        ? null
        : { status: 'not-run', reason: "needs user A's email (SECRET_PUSH_EMAIL, or --email)" };
    case 'emailB':
      return options.emailB
        ? null
        : { status: 'not-run', reason: "needs user B's email (SECRET_PUSH_EMAIL_B, or --email-b)" };
    case 'creator':
      return options.token || anon
        ? null
        : {
            status: 'not-run',
            reason: 'needs a token of user A (SECRET_PUSH_TOKEN, or --token): anonymous access is off on this instance',
          };
    case 'viewer':
      return anon || options.tokenB
        ? null
        : {
            status: 'not-run',
            reason:
              'needs a token of user B (SECRET_PUSH_TOKEN_B, or --token-b): anonymous access is off, so a second user must view',
          };
    case 'anonymous':
      return anon ? null : { status: 'skip', reason: 'instance reports anonymous_access disabled' };
    case 'anonymousOff':
      return anon ? { status: 'skip', reason: 'instance allows anonymous access (applies only when off)' } : null;
    case 'url':
      return p.url_pushes.enabled ? null : { status: 'skip', reason: 'instance reports url pushes disabled' };
    case 'qr':
      return p.qr_code_pushes.enabled ? null : { status: 'skip', reason: 'instance reports qr pushes disabled' };
    case 'file':
      if (!p.file_attachments.enabled) return { status: 'skip', reason: 'instance reports file pushes disabled' };
      if (p.file_attachments.requires_authentication && !options.token) {
        return {
          status: 'not-run',
          reason: 'needs a token of user A (SECRET_PUSH_TOKEN, or --token): file pushes require authentication',
        };
      }
      return options.token || anon
        ? null
        : { status: 'not-run', reason: 'needs a token of user A (SECRET_PUSH_TOKEN, or --token)' };
    case 'fileAuthRequired':
      return p.file_attachments.requires_authentication
        ? null
        : { status: 'skip', reason: 'instance does not require authentication for files' };
    case 'secondProcess':
      return options.baseUrl2
        ? null
        : { status: 'not-run', reason: 'needs --base-url-2 (a second process of the same installation)' };
    case 'maxBodyBytes':
      return options.maxBodyBytes
        ? null
        : { status: 'not-run', reason: "needs --max-body-bytes (the instance's request body limit)" };
    case 'duration':
      return p.expire_after_duration?.enabled
        ? null
        : {
            status: 'skip',
            reason: 'instance does not report expire_after_duration (features.pushes.expire_after_duration)',
          };
    case 'durationNarrowed':
      return p.expire_after_duration?.enabled && p.expire_after_duration.values.length < 18
        ? null
        : { status: 'skip', reason: 'instance accepts every expire_after_duration value' };
    case 'v1':
      return instance.v1
        ? null
        : { status: 'skip', reason: 'instance serves no v1 API (GET /api/v1/version.json answered no v1 report)' };
    case 'apiKeys':
      return f.api_keys?.enabled
        ? null
        : { status: 'skip', reason: 'instance does not report api_keys enabled (features.api_keys)' };
    case 'idempotency':
      return p.idempotency_keys?.enabled
        ? null
        : { status: 'skip', reason: 'instance does not report idempotency_keys enabled' };
    case 'kindDisabled':
      return p.file_attachments.enabled && p.url_pushes.enabled && p.qr_code_pushes.enabled
        ? { status: 'skip', reason: 'instance enables every kind' }
        : null;
    case 'clientEncryptionReported':
      return p.client_encryption
        ? null
        : { status: 'skip', reason: 'instance does not report features.pushes.client_encryption' };
    case 'clientEncryption':
      if (!p.client_encryption)
        return { status: 'skip', reason: 'instance does not report features.pushes.client_encryption' };
      return p.client_encryption.enabled
        ? null
        : { status: 'skip', reason: 'instance reports end-to-end encrypted pushes disabled' };
    case 'clientEncryptionRequired':
      return p.client_encryption?.required
        ? null
        : { status: 'skip', reason: 'instance does not require end-to-end encryption (applies only when it does)' };
    case 'emailDispatch':
      return p.email_auto_dispatch
        ? null
        : { status: 'skip', reason: 'instance reports email_auto_dispatch false (no email)' };
    case 'emailOff':
      return p.email_auto_dispatch
        ? { status: 'skip', reason: 'instance reports email_auto_dispatch (applies only without email)' }
        : null;
    case 'webhooks':
      return f.webhooks?.enabled
        ? null
        : { status: 'skip', reason: 'instance does not report features.webhooks.enabled' };
    case 'recipientAccess':
    case 'recipientNetworks':
    case 'accessCodes':
      return recipientAccessGate(need, p.recipient_access);
    case 'workspaces':
      return f.workspaces?.enabled ? null : { status: 'skip', reason: 'instance does not report features.workspaces' };
    case 'webhookReceiver':
      return options.receiver
        ? null
        : { status: 'not-run', reason: 'needs --webhook-receiver host:port (a receiver the target can reach)' };
    case 'mailbox':
      return options.mailbox
        ? null
        : { status: 'not-run', reason: "needs --mailbox-url (a way to read the recipients' mailbox)" };
    case 'clientEncryptionOff':
      return p.client_encryption && !p.client_encryption.enabled
        ? null
        : { status: 'skip', reason: 'instance does not report end-to-end encryption off (applies only when it does)' };
    case 'requests':
      return f.requests?.enabled ? null : { status: 'skip', reason: 'instance reports features.requests disabled' };
    case 'requestEmail':
      return f.requests?.enabled && f.requests.email_auto_dispatch
        ? null
        : {
            status: 'skip',
            reason: 'instance does not report features.requests.email_auto_dispatch (no request email)',
          };
  }
}

export interface RunConfig extends Options {
  specPath?: string;
  /** Called after each requirement (progress output). */
  onResult?: (result: Result) => void;
  /**
   * Stop at the first failure (the grader: a fault is caught as soon as anything fails). The aggregate requirements
   * then also check the observations so far after each requirement, so a fault they see stops the run at once.
   * Whatever did not run is reported `not-run`.
   */
  stopOnFailure?: boolean;
  /** Requirement IDs to run before the others, in this order (the grader puts a fault's expected killers first). */
  first?: string[];
}

/** Non-aggregate requirements (those named in `first` leading, in that order), then the aggregates. */
function order(selected: Requirement[], first: string[] = []): Requirement[] {
  const rank = (r: Requirement) => (first.includes(r.id) ? first.indexOf(r.id) : first.length);
  const plain = selected.filter((r) => !r.aggregate);
  const leading = plain.filter((r) => first.includes(r.id)).sort((a, b) => rank(a) - rank(b));
  return [...leading, ...plain.filter((r) => !first.includes(r.id)), ...selected.filter((r) => r.aggregate)];
}

interface RunState {
  config: RunConfig;
  contract: Contract;
  features: Features | null;
  versionProblem: string;
  observed: Observed[];
  instance: Instance;
}

async function runOne(requirement: Requirement, run: RunState, partial = false): Promise<Result> {
  const { config, contract, features, versionProblem, observed, instance } = run;
  const base = { id: requirement.id, area: requirement.area, title: requirement.title, source: requirement.source };
  const started = Date.now();
  if (!features) {
    return {
      ...base,
      status: requirement.id === 'VER-001' ? 'fail' : 'not-run',
      reason: `no capability report: ${versionProblem}`,
      ms: 0,
    };
  }
  if (config.profile === 'stateless' && !requirement.stateless) {
    return { ...base, status: 'skip', reason: 'stateless profile: needs a stateful server', ms: 0 };
  }
  const blocked = (requirement.needs ?? []).map((n) => gate(n, config, features, instance)).find(Boolean);
  if (blocked) return { ...base, status: blocked.status, reason: blocked.reason, ms: 0 };
  const ctx = new Ctx(config, contract, features, observed);
  ctx.partial = partial;
  let status: Result['status'] = 'pass';
  let reason = '';
  try {
    await requirement.run(ctx);
  } catch (error) {
    if (error instanceof TargetRateLimited) throw error;
    if (error instanceof NotRunHere) {
      return { ...base, status: 'not-run', reason: error.message, ms: Date.now() - started };
    }
    status = 'fail';
    reason = error instanceof AssertionFailure ? error.message : `error: ${(error as Error).stack ?? error}`;
  }
  if (ctx.violations.length > 0) {
    const first = ctx.violations[0]!;
    const contractReason = `contract: ${first.call}: ${first.violation.path} ${first.violation.message}${
      ctx.violations.length > 1 ? ` (+${ctx.violations.length - 1} more)` : ''
    }`;
    reason = status === 'fail' ? `${contractReason}; ${reason}` : contractReason;
    status = 'fail';
  }
  if (status === 'pass') reason = ctx.note;
  return { ...base, status, reason, ms: Date.now() - started };
}

/**
 * Whether the instance serves the legacy v1 API: `GET /api/v1/version.json` answers a v1 report (`api_version` 1.x).
 * The probe's answer is not kept for the aggregate requirements (an instance without v1 may answer anything here).
 */
async function probeInstance(config: RunConfig, contract: Contract): Promise<Instance> {
  try {
    const probe = new Ctx(config, contract, {} as Features, []);
    const res = await probe.callV1('getVersionV1');
    return { v1: res.status === 200 && /^1\.\d+$/.test(String(res.body?.api_version)) };
  } catch {
    return { v1: false };
  }
}

export async function runSuite(given: RunConfig): Promise<RunOutput> {
  const wanted = (given.only ?? []).length === 0 || given.only!.some((o) => /^HOOK/i.test(o));
  const receiver =
    given.webhookReceiver && wanted
      ? await startWebhookReceiver(given.webhookReceiver.host, given.webhookReceiver.port)
      : undefined;
  try {
    return await runWith(receiver ? { ...given, receiver } : given);
  } finally {
    await receiver?.close();
  }
}

async function runWith(config: RunConfig): Promise<RunOutput> {
  const contract = Contract.load(config.specPath);
  const observed: Observed[] = [];
  const selected = REQUIREMENTS.filter(
    (r) => !config.only?.length || config.only.some((o) => o.toUpperCase() === r.area || o.toUpperCase() === r.id),
  );

  // Capabilities first: everything else is gated on them.
  let features: Features | null = null;
  let versionProblem = '';
  let rateLimited: string | undefined;
  try {
    const probe = new Ctx(config, contract, {} as Features, observed);
    const res = await probe.call('getVersion');
    if (res.status === 200 && res.body?.features?.pushes) features = res.body.features as Features;
    else versionProblem = `GET /api/v2/version answered ${res.status}`;
  } catch (error) {
    if (error instanceof TargetRateLimited) rateLimited = error.message;
    versionProblem = (error as Error).message;
  }

  const run: RunState = {
    config,
    contract,
    features,
    versionProblem,
    observed,
    instance: await probeInstance(config, contract),
  };
  const results: Result[] = [];
  const done = new Set<string>();
  const record = (result: Result) => {
    results.push(result);
    done.add(result.id);
    config.onResult?.(result);
  };
  const ordered = order(selected, config.first);
  const aggregates = ordered.filter((r) => r.aggregate);
  let stopped = false;
  for (const requirement of ordered) {
    if (done.has(requirement.id)) continue;
    const base = { id: requirement.id, area: requirement.area, title: requirement.title, source: requirement.source };
    if (rateLimited) {
      const first = !results.some((r) => r.status === 'fail');
      record({
        ...base,
        status: first ? 'fail' : 'not-run',
        reason: first ? rateLimited : 'the run stopped: the target rate-limited it',
        ms: 0,
      });
      continue;
    }
    if (stopped) {
      record({ ...base, status: 'not-run', reason: 'the run stopped at the first failure', ms: 0 });
      continue;
    }
    let result: Result;
    try {
      result = await runOne(requirement, run);
    } catch (error) {
      if (!(error instanceof TargetRateLimited)) throw error;
      // The requirement that met the limit fails with the reason; the rest do not run (each would fail the same way).
      rateLimited = error.message;
      result = { ...base, status: 'fail', reason: error.message, ms: 0 };
    }
    record(result);
    if (!config.stopOnFailure) continue;
    if (result.status === 'fail') {
      stopped = true;
    } else if (!requirement.aggregate) {
      for (const aggregate of aggregates) {
        const early = await runOne(aggregate, run, true);
        if (early.status === 'fail') {
          record(early);
          stopped = true;
          break;
        }
      }
    }
  }
  results.sort(
    (a, b) =>
      AREAS.indexOf(a.area) - AREAS.indexOf(b.area) ||
      REQUIREMENTS.findIndex((r) => r.id === a.id) - REQUIREMENTS.findIndex((r) => r.id === b.id),
  );
  return {
    baseUrl: config.baseUrl,
    profile: config.profile,
    features,
    results,
    ...(rateLimited ? { rateLimited } : {}),
  };
}
