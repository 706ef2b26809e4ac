/** Formats a run: console table, JSON, JUnit XML; per-class summary counts. */
import { AREAS, AREA_TITLES, type Area, type Result, type Status } from './requirement.js';
import type { RunOutput } from './runner.js';

const STATUSES: Status[] = ['pass', 'fail', 'skip', 'not-run'];

type Counts = Record<Status, number>;

export function summarize(results: Result[]): { total: Counts; byArea: Partial<Record<Area, Counts>> } {
  const empty = (): Counts => ({ pass: 0, fail: 0, skip: 0, 'not-run': 0 });
  const total = empty();
  const byArea: Partial<Record<Area, Counts>> = {};
  for (const r of results) {
    total[r.status]++;
    (byArea[r.area] ??= empty())[r.status]++;
  }
  return { total, byArea };
}

export function exitCode(results: Result[]): number {
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}

function truncate(text: string, width: number): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length <= width ? line : line.slice(0, width - 1) + '…';
}

export function formatTable(run: RunOutput, width = 110): string {
  const lines: string[] = [];
  lines.push(`Conformance run against ${run.baseUrl} (profile ${run.profile})`);
  lines.push('');
  lines.push(`${'ID'.padEnd(10)} ${'STATUS'.padEnd(8)} REASON / REQUIREMENT`);
  lines.push(`${'-'.repeat(10)} ${'-'.repeat(8)} ${'-'.repeat(Math.max(20, width - 20))}`);
  for (const r of run.results) {
    const text = r.status === 'pass' ? r.title + (r.reason ? ` (${r.reason})` : '') : r.reason || r.title;
    lines.push(`${r.id.padEnd(10)} ${r.status.padEnd(8)} ${truncate(text, Math.max(20, width - 20))}`);
  }
  const { total, byArea } = summarize(run.results);
  lines.push('');
  lines.push(`${'CLASS'.padEnd(30)} ${STATUSES.map((s) => s.padStart(7)).join(' ')}`);
  for (const area of AREAS) {
    const c = byArea[area];
    if (!c) continue;
    const label = `${area} ${AREA_TITLES[area]}`;
    lines.push(`${label.padEnd(30)} ${STATUSES.map((s) => String(c[s]).padStart(7)).join(' ')}`);
  }
  lines.push(`${'TOTAL'.padEnd(30)} ${STATUSES.map((s) => String(total[s]).padStart(7)).join(' ')}`);
  lines.push('');
  lines.push(
    exitCode(run.results) === 0 ? 'RESULT: conformant (no failures)' : `RESULT: ${total.fail} requirement(s) failed`,
  );
  if (run.rateLimited) lines.push('', `STOPPED: ${run.rateLimited}`);
  return lines.join('\n');
}

export function formatJson(run: RunOutput): string {
  const { total, byArea } = summarize(run.results);
  return JSON.stringify({ ...run, summary: { total, byArea } }, null, 2);
}

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function formatJunit(run: RunOutput): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const { total } = summarize(run.results);
  const seconds = (ms: number) => (ms / 1000).toFixed(3);
  const allMs = run.results.reduce((sum, r) => sum + r.ms, 0);
  out.push(
    `<testsuites name="secret-push conformance" tests="${run.results.length}" failures="${total.fail}" skipped="${
      total.skip + total['not-run']
    }" time="${seconds(allMs)}">`,
  );
  for (const area of AREAS) {
    const results = run.results.filter((r) => r.area === area);
    if (results.length === 0) continue;
    const c = summarize(results).total;
    out.push(
      `  <testsuite name="${area} ${xml(AREA_TITLES[area])}" tests="${results.length}" failures="${c.fail}" skipped="${
        c.skip + c['not-run']
      }" time="${seconds(results.reduce((s, r) => s + r.ms, 0))}">`,
    );
    for (const r of results) {
      const open = `    <testcase classname="conformance.${area}" name="${xml(`${r.id} ${r.title}`)}" time="${seconds(r.ms)}"`;
      const props = `<properties><property name="source" value="${xml(r.source)}"/></properties>`;
      if (r.status === 'pass') out.push(`${open}>${props}</testcase>`);
      else if (r.status === 'fail') out.push(`${open}>${props}<failure message="${xml(r.reason)}"/></testcase>`);
      else out.push(`${open}>${props}<skipped message="${xml(`${r.status}: ${r.reason}`)}"/></testcase>`);
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return out.join('\n');
}
