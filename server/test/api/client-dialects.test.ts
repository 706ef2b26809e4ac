/**
 * Existing Password Pusher v2 clients on an instance that allows end-to-end encrypted pushes (issue 13: "existing
 * clients keep creating and reading ordinary pushes"). Each test sends the requests one client sends, as
 * /work/shared/reference/client-dialects.md describes them (paths, `.json` suffixes, headers, bodies with their extra
 * fields), and checks the effect: the push exists with what was asked, a recipient reads its payload, the lists and
 * the audit show it, it is marked as ordinary (`client_encryption: null`), and nothing asks them for the new field.
 * Run on an instance that allows the feature (the default) and on one that makes it the pages' default: both leave
 * API clients alone. (Only `required` refuses them, by design: see end-to-end.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Settings } from '../../src/core.js';
import { startRealApi, type RealApi } from './support/real.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw JSON answers, read field by field
type Json = Record<string, any>;

for (const [mode, clientEncryption] of [
  ['allowed', { enabled: true, default: false, required: false }],
  ['default', { enabled: true, default: true, required: false }],
] as [string, Settings['clientEncryption']][]) {
  describe(`v2 clients on an instance where client encryption is ${mode}`, () => {
    let api: RealApi;
    let user: { token: string; email: string };

    async function call(
      method: string,
      path: string,
      init: { headers?: Record<string, string>; body?: unknown } = {},
    ): Promise<{ status: number; body: Json }> {
      const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
      if (init.body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : {} };
    }

    /** What a recipient's client (or browser page) gets: the payload of an ordinary push. */
    async function recipientReads(urlToken: string, passphrase?: string): Promise<Json> {
      const got = await call('GET', `/api/v2/pushes/${urlToken}`, {
        headers: passphrase ? { 'x-passphrase': passphrase } : {},
      });
      expect(got.status).toBe(200);
      expect(got.body.client_encryption).toBeNull();
      return got.body;
    }

    beforeAll(async () => {
      api = await startRealApi({ clientEncryption });
      user = await api.user(`cli-${mode}@example.org`);
    });

    afterAll(async () => {
      await api?.stop();
    });

    it('pwpush-cli ≥ 0.14: detects v2, creates with both header styles, previews, lists, audits and deletes', async () => {
      const auth = { authorization: `Bearer ${user.token}`, 'x-user-email': user.email, 'x-user-token': user.token };
      const version = await call('GET', '/api/v2/version');
      expect(version.status).toBe(200);
      expect(version.body.features.pushes.client_encryption).toMatchObject({ enabled: true, required: false });

      // 10 days is not in the Pro duration set, so the CLI sends expire_after_days.
      const body = {
        push: {
          payload: 'cli secret',
          kind: 'text',
          expire_after_days: 10,
          expire_after_views: 3,
          note: 'from the cli',
          name: 'cli',
          deletable_by_viewer: true,
          retrieval_step: false,
          passphrase: 'pw from cli',
        },
      };
      const created = await call('POST', '/api/v2/pushes', { headers: auth, body });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        kind: 'text',
        expire_after_days: 10,
        expire_after_views: 3,
        passphrase_protected: true,
        client_encryption: null,
      });
      const token = created.body.url_token as string;

      const preview = await call('GET', `/api/v2/pushes/${token}/preview`, { headers: auth });
      expect(preview.body).toEqual({ url: created.body.html_url, client_encryption: null });
      expect((await recipientReads(token, 'pw from cli')).payload).toBe('cli secret');

      const active = await call('GET', '/api/v2/pushes/active', { headers: auth });
      const row = (active.body as unknown as Json[]).find((p) => p.url_token === token)!;
      expect(row).toMatchObject({
        note: 'from the cli',
        expire_after_views: 3,
        views_remaining: 2,
        expire_after_days: 10,
        days_remaining: 10,
        deletable_by_viewer: true,
        retrieval_step: false,
      });
      expect(typeof row.created_at).toBe('string');
      const audit = await call('GET', `/api/v2/pushes/${token}/audit?page=1`, { headers: auth });
      expect((audit.body.logs as Json[]).map((l) => l.kind)).toEqual(['creation', 'view']);

      // A duration from the Pro enum (3 days): the push is made and readable whatever the instance makes of the field.
      const withDuration = await call('POST', '/api/v2/pushes', {
        headers: auth,
        body: { push: { payload: 'cli duration', kind: 'text', expire_after_duration: 8, expire_after_views: 2 } },
      });
      expect(withDuration.status).toBe(201);
      expect((await recipientReads(withDuration.body.url_token)).payload).toBe('cli duration');

      const deleted = await call('DELETE', `/api/v2/pushes/${token}`, { headers: auth });
      expect(deleted.body).toMatchObject({ expired: true, deleted: true, client_encryption: null });
      expect((await recipientReads(token)).payload).toBeNull();
    });

    it('pwpush-cli ≥ 0.14: a file push as multipart (push[…] fields, Python booleans, one push[files][] part per file)', async () => {
      const form = new FormData();
      form.set('push[payload]', 'the attached key');
      form.set('push[kind]', 'file');
      form.set('push[expire_after_days]', '10');
      form.set('push[expire_after_views]', '2');
      form.set('push[deletable_by_viewer]', 'True');
      form.set('push[retrieval_step]', 'False');
      const bytes = Buffer.from([0, 1, 2, 200, 255, 10, 13]);
      form.append('push[files][]', new Blob([bytes], { type: 'application/octet-stream' }), 'id_rsa');
      const response = await fetch(`${api.baseUrl}/api/v2/pushes`, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}` },
        body: form,
      });
      expect(response.status).toBe(201);
      const created = (await response.json()) as Json;
      expect(created).toMatchObject({
        kind: 'file',
        expire_after_days: 10,
        expire_after_views: 2,
        deletable_by_viewer: true,
        retrieval_step: false,
        client_encryption: null,
      });
      const got = await recipientReads(created.url_token);
      expect(got.payload).toBe('the attached key');
      expect(got.files.map((f: Json) => [f.filename, f.size])).toEqual([['id_rsa', bytes.length]]);
      const download = await fetch(got.files[0].url.replace(/^https?:\/\/[^/]+/, api.baseUrl));
      expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    });

    it('pwpush-mcp 0.5: `.json` on every path, expire_after_duration, lists and audit with ?page=', async () => {
      const auth = { authorization: `Bearer ${user.token}` };
      expect((await call('GET', '/api/v2/version.json')).status).toBe(200);
      const created = await call('POST', '/api/v2/pushes.json', {
        headers: auth,
        body: { push: { payload: 'mcp secret', expire_after_duration: 6, expire_after_views: 1 } },
      });
      expect(created.status).toBe(201);
      expect(created.body.html_url).toBe(`${api.baseUrl}/p/${created.body.url_token}`);
      const token = created.body.url_token as string;
      const active = await call('GET', '/api/v2/pushes/active.json?page=1', { headers: auth });
      expect((active.body as unknown as Json[]).some((p) => p.url_token === token)).toBe(true);
      const audit = await call('GET', `/api/v2/pushes/${token}/audit.json?page=1`, { headers: auth });
      expect((audit.body.logs as Json[])[0]).toMatchObject({ kind: 'creation' });
      expect((await recipientReads(token)).payload).toBe('mcp secret');
      const expired = await call('GET', '/api/v2/pushes/expired.json?page=1', { headers: auth });
      expect((expired.body as unknown as Json[]).some((p) => p.url_token === token)).toBe(true);
    });

    it('Chrome extension: reads the edition, probes accounts (its workspaces) and requests (405), creates with account_id, previews', async () => {
      const auth = { authorization: `Bearer ${user.token}` };
      expect((await call('GET', '/api/v2/version')).body.edition).toBe('oss');
      // Workspaces are served (issue 41): the probe lists the caller's accounts, and the extension sends the chosen id.
      const made = await call('POST', '/api/v2/workspaces', { headers: auth, body: { workspace: { name: 'Ext' } } });
      expect(made.status).toBe(201);
      const accounts = await call('GET', '/api/v2/accounts', { headers: auth });
      expect(accounts.status).toBe(200);
      expect((accounts.body as unknown as Json[]).map((a) => a.id)).toContain(made.body.id);
      const accountId = made.body.id as number;
      // Requests exist here (issue 24): the probe finds the path (405, it takes POST), not a 404.
      expect((await call('GET', '/api/v2/requests', { headers: auth })).status).toBe(405);
      const created = await call('POST', `/api/v2/pushes?account_id=${accountId}`, {
        headers: auth,
        body: {
          push: { payload: 'from the extension', expire_after_days: 2, expire_after_views: 2 },
          account_id: accountId,
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ expire_after_days: 2, expire_after_views: 2, client_encryption: null });
      const preview = await call('GET', `/api/v2/pushes/${created.body.url_token}/preview`, { headers: auth });
      expect(preview.body.url).toBe(created.body.html_url);
      expect((await recipientReads(created.body.url_token)).payload).toBe('from the extension');
    });

    it("CIPP and Raycast: a top-level workspace_id names the workspace, Pro fields are ignored; Raycast deletes; email recipients on an instance without email: the reference's 422", async () => {
      const auth = { authorization: `Bearer ${user.token}` };
      // CIPP forks and Raycast send a workspace_id; this server reads it as a workspace (issue 41): the user's own.
      const workspace = await call('POST', '/api/v2/workspaces', {
        headers: auth,
        body: { workspace: { name: 'Ops' } },
      });
      expect(workspace.status).toBe(201);
      const workspaceId = workspace.body.id as number;
      const cipp = await call('POST', '/api/v2/pushes', {
        headers: auth,
        body: {
          push: { payload: 'cipp secret', expire_after_days: 1, expire_after_views: 1 },
          workspace_id: String(workspaceId),
        },
      });
      expect(cipp.status).toBe(201);
      expect(cipp.body).toMatchObject({ expire_after_days: 1, views_remaining: 1, client_encryption: null });
      expect((await recipientReads(cipp.body.url_token)).payload).toBe('cipp secret');

      const raycast = await call('POST', '/api/v2/pushes', {
        headers: auth,
        body: {
          push: {
            payload: 'raycast secret',
            expire_after_duration: 3,
            expire_after_views: 4,
          },
          workspace_id: workspaceId,
        },
      });
      expect(raycast.status).toBe(201);
      // Raycast's notification fields: this instance has no SMTP relay, so, as Password Pusher does, 422 (issue 22).
      const notifying = await call('POST', '/api/v2/pushes', {
        headers: auth,
        body: {
          push: { payload: 'raycast secret 2', notify_emails_to: 'a@example.org', notify_emails_to_locale: 'en' },
          workspace_id: workspaceId,
        },
      });
      expect(notifying.status).toBe(422);
      expect(notifying.body.errors.notify_emails_to).toEqual(['are not available']);
      expect(typeof raycast.body.expires_at).toBe('string');
      expect(raycast.body.views_remaining).toBe(4);
      const deleted = await call('DELETE', `/api/v2/pushes/${raycast.body.url_token}`, { headers: auth });
      expect(deleted.body).toMatchObject({ deleted: true });
      expect((await recipientReads(raycast.body.url_token)).expired).toBe(true);
    });
  });
}
