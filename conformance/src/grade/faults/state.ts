/**
 * Faults that need state: views counted wrongly (each models its bug by really spending views upstream, so every
 * later answer agrees), a read-then-write race, secrets and owner-only fields returned, and authentication
 * checked wrongly.
 */
import { define, mapJson, mapRecords, sentPassphrase, withoutCredentials } from '../fault.js';
import type { Exchange } from '../proxy.js';

/** A successful retrieval that carried the payload (a view, or the owner's own read). */
function delivered(ex: Exchange): boolean {
  return ex.op === 'getPush' && ex.status === 200 && typeof ex.json?.payload === 'string';
}

/** Sets views_remaining of the answer to what an extra view behind the client's back left, when it succeeded. */
function reportExtraView(ex: Exchange, extra: { status: number; json: any }): void {
  if (extra.status !== 200 || typeof extra.json?.payload !== 'string') return;
  mapJson(ex, true, (b) => {
    b.views_remaining = extra.json.views_remaining;
  });
}

export const viewFaults = define('views', [
  {
    name: 'double-count-views',
    models: 'each counting retrieval uses up two views',
    killers: ['RET-001'],
    start: () => ({
      async response(ex) {
        if (!delivered(ex) || ex.byOwner || ex.json.views_remaining <= 0) return;
        reportExtraView(ex, await ex.send());
      },
    }),
  },
  {
    name: 'owner-view-counts',
    models: "the owner's own retrieval counts as a view",
    killers: ['RET-003'],
    start: () => ({
      async response(ex) {
        if (!delivered(ex) || !ex.byOwner || ex.json.expired !== false) return;
        const other = ex.env.otherCaller(ex.identity);
        if (other)
          reportExtraView(ex, await ex.send({ headers: { ...withoutCredentials(ex.requestHeaders), ...other } }));
      },
    }),
  },
  {
    name: 'preview-counts-view',
    models: 'a preview counts as a view',
    killers: ['PREV-003'],
    start: () => ({
      async response(ex) {
        const push = ex.push;
        if (ex.op !== 'previewPush' || ex.status !== 200 || !push || push.input.passphrase !== undefined) return;
        const other = ex.env.otherCaller(push.owner);
        if (!other) return;
        const url = new URL(`/api/v2/pushes/${encodeURIComponent(ex.params.url_token!)}`, ex.url);
        await ex.send({
          method: 'GET',
          url,
          headers: { ...withoutCredentials(ex.requestHeaders), ...other },
          body: Buffer.alloc(0),
        });
      },
    }),
  },
  {
    name: 'failed-view-counts',
    models: 'each retrieval of an expired push (a failed_view) still lowers views_remaining',
    killers: ['VIEW-004'],
    start: () => {
      const failed = new Map<string, number>();
      return {
        response(ex) {
          mapJson(ex, ex.op === 'getPush' && ex.status === 200 && ex.json?.expired === true, (b) => {
            const n = (failed.get(b.url_token) ?? 0) + 1;
            failed.set(b.url_token, n);
            b.views_remaining = Math.max(0, b.views_remaining - n);
          });
        },
      };
    },
  },
  {
    name: 'payload-after-expiry',
    models: 'the payload is not erased when the last view expires the push, and is still served',
    killers: ['VIEW-002'],
    start: () => {
      const payloads = new Map<string, string>();
      return {
        response(ex) {
          if (delivered(ex)) payloads.set(ex.json.url_token, ex.json.payload);
          mapJson(
            ex,
            ex.op === 'getPush' && ex.status === 200 && ex.json?.expired === true && ex.json.deleted === false,
            (b) => {
              if (payloads.has(b.url_token)) b.payload = payloads.get(b.url_token);
            },
          );
        },
      };
    },
  },
  {
    name: 'last-view-says-expired',
    models: 'the view that uses the last one answers expired: true (clients then hide the payload they just got)',
    killers: ['VIEW-001'],
    start: () => ({
      response(ex) {
        mapJson(ex, delivered(ex) && ex.json.views_remaining === 0 && ex.json.expired === false, (b) => {
          b.expired = true;
          b.expired_on = b.updated_at;
        });
      },
    }),
  },
]);

export const raceFaults = define('race', [
  {
    name: 'read-then-write-views',
    models:
      'a view is claimed by reading, then writing: retrievals that read the push before the last view was written also get the payload',
    killers: ['ONCE-001'],
    start: () => {
      interface Flight {
        arrivedAt: number;
        done: Promise<void>;
        finish(): void;
      }
      const flights = new Map<string, Flight[]>();
      const own = new WeakMap<Exchange, Flight>();
      const lastView = new Map<string, { body: unknown; doneAt: number }>();
      return {
        request(ex) {
          if (ex.op !== 'getPush') return;
          let finish!: () => void;
          const flight: Flight = {
            arrivedAt: ex.arrivedAt,
            done: new Promise<void>((r) => (finish = r)),
            finish: () => finish(),
          };
          own.set(ex, flight);
          const list = flights.get(ex.params.url_token!) ?? [];
          list.push(flight);
          flights.set(ex.params.url_token!, list);
        },
        async response(ex) {
          const flight = own.get(ex);
          if (!flight) return;
          const token = ex.params.url_token!;
          try {
            const body = ex.json;
            if (delivered(ex) && body.views_remaining === 0 && body.expired === false) {
              lastView.set(token, { body, doneAt: performance.now() });
            } else if (ex.status === 200 && body?.expired === true && body.deleted === false) {
              // Requests that arrived earlier may be the winner: wait for them (bounded), then serve the stale read.
              const earlier = (flights.get(token) ?? [])
                .filter((f) => f.arrivedAt < flight.arrivedAt)
                .map((f) => f.done);
              await Promise.race([Promise.all(earlier), new Promise((r) => setTimeout(r, 2_000))]);
              const win = lastView.get(token);
              // The stale read's answer, with this request's own links (another process builds them from its Host).
              if (win && flight.arrivedAt < win.doneAt)
                ex.json = { ...(win.body as object), json_url: body.json_url, html_url: body.html_url };
            }
          } finally {
            flight.finish();
            flights.set(
              token,
              (flights.get(token) ?? []).filter((f) => f !== flight),
            );
          }
        },
      };
    },
  },
]);

export const leakFaults = define('leak', [
  {
    name: 'passphrase-echoed',
    models: 'the create answer echoes the passphrase in plain text, as the reference does',
    killers: ['PASS-006'],
    start: () => ({
      response(ex) {
        const phrase = ex.sentJson?.push?.passphrase;
        mapJson(ex, ex.op === 'createPush' && ex.status === 201 && typeof phrase === 'string', (b) => {
          b.passphrase = phrase;
        });
      },
    }),
  },
  {
    name: 'payload-echoed-on-create',
    models: 'the create answer echoes the payload',
    killers: ['CRE-001'],
    start: () => ({
      response(ex) {
        const payload = ex.sentJson?.push?.payload;
        mapJson(ex, ex.op === 'createPush' && ex.status === 201 && typeof payload === 'string', (b) => {
          b.payload = payload;
        });
      },
    }),
  },
  {
    name: 'note-shown-to-recipient',
    models: "a recipient's retrieval carries the owner's name and note",
    killers: ['REC-006'],
    start: () => ({
      response(ex) {
        const input = ex.push?.input;
        mapJson(ex, delivered(ex) && !ex.byOwner && input !== undefined, (b) => {
          b.name = input!.name ?? '';
          b.note = input!.note ?? '';
        });
      },
    }),
  },
  {
    name: 'payload-in-lists',
    models: 'the owner lists carry each active push’s payload',
    killers: ['LIST-001', 'REC-005'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listActivePushes' && ex.op !== 'listExpiredPushes') return;
        mapRecords(ex, (r) => {
          const payload = ex.env.journal.get(r.url_token)?.input.payload;
          if (r.expired === false && typeof payload === 'string') r.payload = payload;
        });
      },
    }),
  },
  {
    name: 'payload-in-delete',
    models: 'the delete answer is serialized from the record before erasure and carries the payload',
    killers: ['DEL-001'],
    start: () => ({
      response(ex) {
        const payload = ex.push?.input.payload;
        mapJson(ex, ex.op === 'expirePush' && ex.status === 200 && typeof payload === 'string', (b) => {
          b.payload = payload;
        });
      },
    }),
  },
  {
    name: 'passphrase-in-error-message',
    models: 'a wrong-passphrase error quotes the passphrase that was tried',
    killers: ['REC-004'],
    start: () => ({
      response(ex) {
        const tried = sentPassphrase(ex);
        mapJson(ex, ex.op === 'getPush' && ex.json?.code === 'passphrase_incorrect' && tried !== undefined, (b) => {
          b.error = `The passphrase "${tried}" is not right.`;
        });
      },
    }),
  },
]);

const PUBLIC = new Set(['createPush', 'getPush', 'previewPush', 'expirePush']);

export const authFaults = define('auth', [
  {
    name: 'invalid-token-as-anonymous',
    models: 'on public operations an invalid token is ignored and the call runs anonymously',
    killers: ['AUTH-003'],
    start: () => ({
      async response(ex) {
        if (!PUBLIC.has(ex.op) || ex.status !== 401 || ex.json?.code !== 'invalid_token') return;
        ex.adopt(await ex.send({ headers: withoutCredentials(ex.requestHeaders) }));
      },
    }),
  },
  {
    name: 'legacy-email-ignored',
    models: 'the legacy X-User-Email + X-User-Token pair is accepted whatever the email, as the reference does',
    killers: ['AUTH-005'],
    start: () => ({
      request(ex) {
        const token = ex.requestHeaders['x-user-token'];
        if (!token) return;
        ex.requestHeaders = { ...withoutCredentials(ex.requestHeaders), authorization: `Bearer ${token}` };
      },
    }),
  },
]);
