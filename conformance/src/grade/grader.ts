/**
 * Grades the suite: runs it against a correct implementation through the fault-injecting proxy, once with no
 * fault (the baseline, which must pass) and once per fault, and counts the faults some requirement caught.
 */
import { Contract, DEFAULT_SPEC_PATH } from '../spec.js';
import { runSuite, type RunConfig } from '../runner.js';
import type { Result } from '../requirement.js';
import { FAULTS } from './faults/index.js';
import type { Fault, FaultClass } from './fault.js';
import { startDeliveryRelays } from './relay.js';
import { identityOf, startProxy, type FaultHooks, type Headers, type ProxyEnv, type RunningProxy } from './proxy.js';

export interface GradeConfig extends RunConfig {
  /** Fault names to inject (default: all). */
  faults?: string[];
  /** Run the whole suite under each fault (every requirement that catches it), not only up to the first failure. */
  full?: boolean;
  onFault?: (result: FaultResult) => void;
}

export interface FaultResult {
  name: string;
  class: FaultClass;
  models: string;
  killed: boolean;
  /** The requirements that failed under the fault (the first one only, unless `full`). */
  by: string[];
  /** The first failure's reason. */
  reason: string;
  /** The requirements the catalogue expects to catch it. */
  expected: string[];
  invisible?: string;
  ms: number;
}

export interface GradeOutput {
  baseUrl: string;
  requirements: number;
  baseline: { failures: Result[]; ms: number };
  faults: FaultResult[];
  killed: number;
  total: number;
  /** killed / total, 0..1. */
  killRate: number;
  ms: number;
}

export function selectFaults(names?: string[]): Fault[] {
  if (!names?.length) return FAULTS;
  const unknown = names.filter((n) => !FAULTS.some((f) => f.name === n));
  if (unknown.length) throw new Error(`no fault ${unknown.join(', ')} (see --list-faults)`);
  return FAULTS.filter((f) => names.includes(f.name));
}

/** Callers that may retrieve pushes, for faults that spend a view behind the client's back. */
async function callers(config: GradeConfig): Promise<Headers[]> {
  const out: Headers[] = [];
  try {
    const res = await fetch(new URL('/api/v2/version', config.baseUrl), {
      signal: AbortSignal.timeout(config.timeoutMs ?? 15_000),
    });
    const report = (await res.json()) as { features?: { anonymous_access?: boolean } };
    if (report.features?.anonymous_access) out.push({});
  } catch {
    // The baseline run reports an instance that does not answer.
  }
  for (const token of [config.token, config.tokenB]) if (token) out.push({ authorization: `Bearer ${token}` });
  return out;
}

async function withProxies<T>(
  config: GradeConfig,
  contract: Contract,
  hooks: FaultHooks,
  env: ProxyEnv,
  body: (urls: { baseUrl: string; baseUrl2?: string }) => Promise<T>,
): Promise<T> {
  const proxies: RunningProxy[] = [];
  // Deliveries go to the receiver, not through the proxy: relays on the receiver's host carry them past the fault.
  if (config.webhookReceiver) env.relays = startDeliveryRelays(config.webhookReceiver.host, hooks, env);
  try {
    const first = await startProxy({ upstream: config.baseUrl, contract, hooks, env });
    proxies.push(first);
    let second: RunningProxy | undefined;
    if (config.baseUrl2) proxies.push((second = await startProxy({ upstream: config.baseUrl2, contract, hooks, env })));
    return await body({ baseUrl: first.url, baseUrl2: second?.url });
  } finally {
    for (const proxy of proxies) await proxy.close();
    await env.relays?.close();
  }
}

export async function grade(config: GradeConfig): Promise<GradeOutput> {
  const started = Date.now();
  const contract = Contract.load(config.specPath ?? DEFAULT_SPEC_PATH);
  const faults = selectFaults(config.faults);
  const candidates = await callers(config);
  const newEnv = (): ProxyEnv => ({
    journal: new Map(),
    webhooks: new Map(),
    otherCaller: (identity) => candidates.find((c) => identityOf(c) !== identity),
  });
  const suite = (urls: { baseUrl: string; baseUrl2?: string }, extra: Partial<RunConfig>) =>
    runSuite({ ...config, ...urls, onResult: undefined, ...extra });

  const baselineStarted = Date.now();
  const baselineRun = await withProxies(config, contract, {}, newEnv(), (urls) => suite(urls, {}));
  const baseline = {
    failures: baselineRun.results.filter((r) => r.status === 'fail'),
    ms: Date.now() - baselineStarted,
  };

  const results: FaultResult[] = [];
  if (baseline.failures.length === 0) {
    for (const fault of faults) {
      const faultStarted = Date.now();
      const env = newEnv();
      const run = await withProxies(config, contract, fault.start(env), env, (urls) =>
        suite(urls, { stopOnFailure: !config.full, first: fault.killers }),
      );
      // A run the target rate-limited proves nothing about the fault: its failure is the limit's, not a kill.
      if (run.rateLimited) throw new Error(`grading stopped under the fault ${fault.name}: ${run.rateLimited}`);
      const failed = run.results.filter((r) => r.status === 'fail');
      const result: FaultResult = {
        name: fault.name,
        class: fault.class,
        models: fault.models,
        killed: failed.length > 0,
        by: failed.map((r) => r.id),
        reason: failed[0]?.reason ?? '',
        expected: fault.killers,
        ...(fault.invisible ? { invisible: fault.invisible } : {}),
        ms: Date.now() - faultStarted,
      };
      results.push(result);
      config.onFault?.(result);
    }
  }
  const killed = results.filter((r) => r.killed).length;
  return {
    baseUrl: config.baseUrl,
    requirements: baselineRun.results.length,
    baseline,
    faults: results,
    killed,
    total: results.length,
    killRate: results.length ? killed / results.length : 0,
    ms: Date.now() - started,
  };
}

/** 0 when the baseline passed and every survivor is a fault known to be invisible black-box; 1 otherwise. */
export function gradeExitCode(output: GradeOutput): number {
  if (output.baseline.failures.length > 0) return 1;
  return output.faults.some((f) => !f.killed && !f.invisible) ? 1 : 0;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const percent = (rate: number) => `${(rate * 100).toFixed(1)} %`;

export function formatGrade(output: GradeOutput, width = 120): string {
  const lines: string[] = [];
  lines.push(`Grading the conformance suite against ${output.baseUrl} through a fault-injecting proxy`);
  const base = output.baseline;
  lines.push(
    `Baseline (no fault): ${output.requirements} requirements, ${base.failures.length} failed (${seconds(base.ms)})`,
  );
  if (base.failures.length > 0) {
    for (const f of base.failures) lines.push(`  ${f.id}: ${f.reason}`.slice(0, width));
    lines.push('', 'RESULT: the baseline fails, so no fault was graded: fix the instance (or the suite) first.');
    return lines.join('\n');
  }
  lines.push('');
  lines.push(
    `${'FAULT'.padEnd(32)} ${'CLASS'.padEnd(7)} ${'RESULT'.padEnd(8)} ${'BY'.padEnd(9)} ${'TIME'.padStart(6)}  REASON`,
  );
  for (const f of output.faults) {
    const by = f.by[0] ?? '-';
    const row = `${f.name.padEnd(32)} ${f.class.padEnd(7)} ${(f.killed ? 'killed' : 'SURVIVED').padEnd(8)} ${by.padEnd(9)} ${seconds(f.ms).padStart(6)}  ${
      f.killed ? f.reason : f.models
    }`;
    lines.push(row.replace(/\s+$/, '').length > width ? row.slice(0, width - 1) + '…' : row);
  }
  lines.push('');
  lines.push(
    `Kill rate: ${output.killed}/${output.total} faults killed (${percent(output.killRate)}) by ${output.requirements} requirements in ${seconds(output.ms)}`,
  );
  const survivors = output.faults.filter((f) => !f.killed);
  if (survivors.length > 0) {
    lines.push('Survivors:');
    for (const f of survivors) {
      lines.push(`  ${f.name}: ${f.models}`);
      lines.push(
        `    ${f.invisible ? `not visible black-box: ${f.invisible}` : 'NOT EXPLAINED: add a requirement that sees it, or document why none can'}`,
      );
    }
  }
  return lines.join('\n');
}

export function formatGradeJson(output: GradeOutput): string {
  return JSON.stringify(output, null, 2);
}
