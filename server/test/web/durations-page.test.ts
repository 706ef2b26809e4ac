/**
 * The create page offers the lifetimes under a day the instance accepts (issue 11): a choice of 15 minutes … 12 hours
 * beside the days, sent as `expire_after_duration` through the same domain call as the API; an instance that accepts
 * none under a day shows no such choice, and one that accepts fewer refuses the others on the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, Visitor, type WebApp } from './support.js';

let app: WebApp;

beforeAll(async () => {
  app = await startWeb();
});
afterAll(async () => {
  await app?.stop();
});

const options = (html: string) =>
  [
    ...(/<select id="expire_after_duration"[\s\S]*?<\/select>/.exec(html)?.[0] ?? '').matchAll(
      /<option value="(\d*)"[^>]*>([^<]*)</g,
    ),
  ].map((m) => [m[1], m[2]!.trim()]);

describe('the create page and durations', () => {
  it('offers every lifetime under a day, and a push made with one lives exactly that long', async () => {
    const visitor = new Visitor(app.baseUrl);
    const { html, csrf } = await visitor.page('/');
    expect(options(html)).toEqual([
      ['', 'after the days'],
      ['0', 'after 15 minutes'],
      ['1', 'after 30 minutes'],
      ['2', 'after 45 minutes'],
      ['3', 'after 1 hour'],
      ['4', 'after 6 hours'],
      ['5', 'after 12 hours'],
    ]);
    const payload = `page-secret-${Math.random().toString(36).slice(2)}`;
    const before = Date.now();
    const created = await visitor.post('/', {
      _csrf: csrf,
      kind: 'text',
      payload,
      expire_after_days: '7',
      expire_after_duration: '0',
      expire_after_views: '2',
    });
    expect(created.status).toBe(201);
    const page = await created.text();
    expect(page).toContain('It works for 15 minutes or 2 views');
    const token = /href="[^"]*\/p\/([a-z2-7]+)"/.exec(page)![1]!;
    const [row] = await app.db.query<{
      expire_after_seconds: number;
      expire_after_days: number;
      life_ms: number;
      created_at: Date;
    }>(
      'select expire_after_seconds, expire_after_days, extract(epoch from expires_at - created_at) * 1000 as life_ms, created_at from pushes where url_token = $1',
      [token],
    );
    expect([row!.expire_after_seconds, row!.expire_after_days, Number(row!.life_ms)]).toEqual([900, 1, 900_000]);
    expect(row!.created_at.getTime()).toBeGreaterThanOrEqual(before - 1000);

    // "after the days" keeps the days.
    const days = await visitor.post('/', {
      _csrf: csrf,
      kind: 'text',
      payload,
      expire_after_days: '3',
      expire_after_duration: '',
      expire_after_views: '2',
    });
    expect(days.status).toBe(201);
    expect(await days.text()).toContain('It works for 3 days or 2 views');
  });

  it('offers only what the instance accepts, and refuses the rest on the field', async () => {
    const narrow = await startWeb({ expireAfterDurationMin: 4 });
    const none = await startWeb({ expireAfterDurationMin: 6 });
    try {
      const visitor = new Visitor(narrow.baseUrl);
      const { html, csrf } = await visitor.page('/');
      expect(options(html).map(([value]) => value)).toEqual(['', '4', '5']);
      const refused = await visitor.post('/', {
        _csrf: csrf,
        kind: 'text',
        payload: 'x',
        expire_after_days: '7',
        expire_after_duration: '1',
      });
      expect(refused.status).toBe(422);
      expect(await refused.text()).toContain('must be at least 4 (6 hours) on this instance');
      expect(options((await new Visitor(none.baseUrl).page('/')).html)).toEqual([]);
    } finally {
      await narrow.stop();
      await none.stop();
    }
  });
});
