/** The spec-checking fetch the parity suite relies on can fail: it reports answers that break the spec. */
import { describe, expect, it } from 'vitest';
import { specCheckingFetch } from '../support/spec-fetch.js';

const base = 'http://checked.test';
const good = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'X-Request-Id': 'r1' };

function answering(response: Response) {
  return specCheckingFetch(() => async () => response.clone());
}

describe('spec-checking fetch', () => {
  it('reports a body missing required fields', async () => {
    const checker = answering(
      new Response(JSON.stringify({ url: 'https://x.example/p/abc', extra: 1 }).replace('url', 'link'), {
        headers: good,
      }),
    );
    await checker.fetch(`${base}/api/v2/pushes/abcdefghijk/preview`);
    expect(checker.violations.join('\n')).toMatch(/previewPush|preview/);
    expect(checker.violations).toHaveLength(1);
  });

  it('reports an undocumented status, a missing Cache-Control and a missing X-Request-Id', async () => {
    const checker = answering(
      new Response(JSON.stringify({ error: 'x', code: 'forbidden' }), {
        status: 403,
        headers: { 'Content-Type': 'application/json' },
      }),
    );
    await checker.fetch(`${base}/api/v2/version`);
    expect(checker.violations).toEqual([
      expect.stringContaining('status 403 is not documented'),
      expect.stringContaining('Cache-Control'),
      expect.stringContaining('X-Request-Id'),
    ]);
  });

  it('reports a list page without X-Total-Count and accepts a valid one', async () => {
    const bad = answering(new Response('[]', { headers: good }));
    await bad.fetch(`${base}/api/v2/pushes/active`);
    expect(bad.violations).toEqual([expect.stringContaining('X-Total-Count')]);
    const ok = answering(new Response('[]', { headers: { ...good, 'X-Total-Count': '0' } }));
    await ok.fetch(`${base}/api/v2/pushes/active`);
    expect(ok.violations).toEqual([]);
  });
});
