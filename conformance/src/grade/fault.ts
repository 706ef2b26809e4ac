/** What a fault is, and helpers that faults share to read and change push records in an answer. */
import type { Exchange, FaultHooks, ProxyEnv } from './proxy.js';

/** The requirement classes faults are drawn from. */
export const FAULT_CLASSES = {
  status: 'a wrong status for a documented path',
  field: 'a dropped, renamed or malformed field',
  header: 'a missing or wrong header',
  media: 'a wrong media type',
  value: 'a value that does not follow the input',
  views: 'views counted wrongly',
  order: 'a list or log in the wrong order',
  leak: 'a secret or owner-only field returned',
  option: 'an option ignored or parsed leniently',
  auth: 'authentication checked wrongly',
  race: 'a race between concurrent requests',
  idem: 'an idempotent create honoured wrongly',
  hook: 'a webhook delivery signed, identified or filled wrongly',
} as const;
export type FaultClass = keyof typeof FAULT_CLASSES;

export interface Fault {
  /** kebab-case, stable: it names the fault in reports and in `--faults`. */
  name: string;
  class: FaultClass;
  /** The server bug it models, in one sentence. */
  models: string;
  /** Requirements expected to catch it; the grader runs them first, and the self-test checks that one does. */
  killers: string[];
  /**
   * Why no black-box suite can see it, for a fault kept on purpose as a known survivor; every surviving fault must
   * have this and be listed in conformance/README.md.
   */
  invisible?: string;
  /** Fresh state and hooks for one run. */
  start(env: ProxyEnv): FaultHooks;
}

const SUCCESS: Record<string, number> = {
  createPush: 201,
  getPush: 200,
  expirePush: 200,
  listActivePushes: 200,
  listExpiredPushes: 200,
};

/** True when the answer carries push records (create, retrieve, delete, lists) and succeeded. */
function hasRecords(ex: Exchange): boolean {
  return SUCCESS[ex.op] === ex.status;
}

/**
 * Applies `change` to every push record of a successful push answer (one record, or each item of a list) and
 * writes the body back. `change` may return a replacement record.
 */
export function mapRecords(ex: Exchange, change: (record: Record<string, any>) => Record<string, any> | void): void {
  if (!hasRecords(ex)) return;
  const body = ex.json;
  if (!body || typeof body !== 'object') return;
  const apply = (r: Record<string, any>) => (r && typeof r === 'object' ? (change(r) ?? r) : r);
  ex.json = Array.isArray(body) ? body.map(apply) : apply(body);
}

/** Applies `change` to the JSON body of an answer that matches `when`. */
export function mapJson(ex: Exchange, when: boolean, change: (body: any) => any): void {
  if (!when) return;
  const body = ex.json;
  if (body === undefined) return;
  ex.json = change(body) ?? body;
}

/** The passphrase the request carried (X-Passphrase, else the query parameter). */
export function sentPassphrase(ex: Exchange): string | undefined {
  return ex.requestHeaders['x-passphrase'] ?? ex.url.searchParams.get('passphrase') ?? undefined;
}

/** Headers of the request without its credentials. */
export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  for (const name of ['authorization', 'x-user-email', 'x-user-token']) delete out[name];
  return out;
}

export function define(cls: FaultClass, faults: Omit<Fault, 'class'>[]): Fault[] {
  return faults.map((f) => ({ ...f, class: cls }));
}
