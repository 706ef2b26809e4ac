/** The suite's own parts: the requirement registry and the contract validator (a check that cannot fail proves nothing). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REQUIREMENTS } from '../src/runner.js';
import { AREAS } from '../src/requirement.js';
import { Contract } from '../src/spec.js';
import { FAULTS } from '../src/grade/faults/index.js';

describe('requirement registry', () => {
  it('has unique AREA-NNN ids, each traced to the seed or the decisions', () => {
    const ids = REQUIREMENTS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of REQUIREMENTS) {
      expect(r.id).toMatch(new RegExp(`^${r.area}-\\d{3}$`));
      expect(AREAS).toContain(r.area);
      expect(r.source).toMatch(/^(seed §|decisions: |spec: |RFC \d+ §)/);
      expect(r.title.length).toBeLessThanOrEqual(110);
    }
  });

  it('is listed in the README table with the same statement, source and stateless flag', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = new Map<string, string[]>();
    for (const line of readme.split('\n')) {
      const cells = /^\| ([A-Z][A-Z0-9]*-\d{3}) \|(.*)\|$/.exec(line);
      if (cells)
        rows.set(
          cells[1]!,
          cells[2]!.split(' | ').map((c) => c.trim()),
        );
    }
    expect([...rows.keys()].sort()).toEqual(REQUIREMENTS.map((r) => r.id).sort());
    for (const r of REQUIREMENTS) {
      expect(rows.get(r.id), r.id).toEqual([r.title, r.source, r.stateless ? 'yes' : '']);
    }
  });

  it('covers every class', () => {
    for (const area of AREAS) expect(REQUIREMENTS.some((r) => r.area === area)).toBe(true);
  });
});

describe('fault catalogue', () => {
  it('is listed in the README fault table: each fault once, in catalogue order, with its class, bug and a killer it names', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = readme.split('\n').flatMap((line) => {
      const cells =
        /^\| `([a-z0-9-]+)` \| ([a-z]+) \| (.*) \| (\*\*survives\*\*|[A-Z][A-Z0-9]*-\d{3}) \| (.*) \|$/.exec(line);
      return cells ? [{ name: cells[1]!, class: cells[2]!, models: cells[3]!, first: cells[4]! }] : [];
    });
    expect(rows.map((r) => r.name)).toEqual(FAULTS.map((f) => f.name));
    for (const [i, f] of FAULTS.entries()) {
      const row = rows[i]!;
      expect([row.class, row.models.replace(/\\\|/g, '|')], f.name).toEqual([f.class, f.models]);
      expect(
        f.invisible ? row.first === '**survives**' : f.killers.includes(row.first),
        `${f.name}: caught first by ${row.first}`,
      ).toBe(true);
    }
  });
});

describe('contract validation', () => {
  const contract = Contract.load();
  const json = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json', ...extra });

  it('fails a status the operation does not document', () => {
    expect(contract.validate('getVersion', 404, json(), '{"error":"x","code":"not_found"}')).toEqual([
      { path: 'status', message: '404 is not documented for getVersion' },
    ]);
  });

  it('names the JSON path of a body that breaks the schema', () => {
    const body = { error: 'x', code: 'Not-Snake' };
    const violations = contract.validate('getPush', 404, json(), JSON.stringify(body));
    expect(violations.map((v) => v.path)).toEqual(['body/code']);
  });

  it('fails an empty or non-JSON body where JSON is documented', () => {
    expect(contract.validate('previewPush', 404, json(), '')[0]?.message).toMatch(/empty/);
    expect(contract.validate('previewPush', 404, json(), '<html>')[0]?.message).toMatch(/not JSON/);
  });

  it('checks documented headers when present (Cache-Control, Retry-After)', () => {
    const body = JSON.stringify({ error: 'x', code: 'too_many_attempts' });
    const bad = contract.validate('getPush', 429, json({ 'cache-control': 'public', 'retry-after': 'soon' }), body);
    expect(bad.map((v) => v.path).sort()).toEqual(['header/Cache-Control', 'header/Retry-After']);
    expect(contract.validate('getPush', 429, json({ 'cache-control': 'no-store', 'retry-after': '30' }), body)).toEqual(
      [],
    );
  });

  it('accepts a conforming push retrieval', () => {
    const push = {
      url_token: 'k7mz4qv2xw5nrt3hbj6ypa2c',
      kind: 'text',
      expired: false,
      expired_on: null,
      deleted: false,
      created_at: '2026-11-21T08:00:00.000Z',
      updated_at: '2026-11-21T08:00:00.000Z',
      expires_at: '2026-11-28T08:00:00.000Z',
      expire_after_days: 7,
      expire_after_views: 5,
      days_remaining: 7,
      expire_after_duration: 12,
      expire_after_seconds: 604_800,
      seconds_remaining: 604_800,
      views_remaining: 4,
      deletable_by_viewer: true,
      retrieval_step: false,
      passphrase_protected: false,
      client_encryption: null,
      json_url: 'https://h/api/v2/pushes/k7mz4qv2xw5nrt3hbj6ypa2c',
      html_url: 'https://h/p/k7mz4qv2xw5nrt3hbj6ypa2c',
      payload: 'x',
      files: [],
    };
    expect(contract.validate('getPush', 200, json(), JSON.stringify(push))).toEqual([]);
    const { views_remaining: _, ...missing } = push;
    expect(
      contract
        .validate('getPush', 200, json(), JSON.stringify(missing))
        .map((v) => v.message)
        .join(),
    ).toMatch(/views_remaining/);
  });
});
