/**
 * Faults of end-to-end encrypted pushes (`client_encryption`), in the classes of the catalogue: bugs a server that
 * adds the feature could believably have. Each is killed by a requirement of the E2E class.
 */
import { define, mapJson, mapRecords } from '../fault.js';
import type { Exchange } from '../proxy.js';

const MARKER = { scheme: 'aes-256-gcm', version: 1 };
const ENVELOPE = /^spe1\.[A-Za-z0-9_-]+$/;

const marked = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object';
const known = (marker: Record<string, unknown>) => marker.scheme === MARKER.scheme && marker.version === MARKER.version;

/** The create request's `push`, when it is an object. */
function pushOf(ex: Exchange): Record<string, any> | undefined {
  const body = ex.requestJson;
  return ex.op === 'createPush' && body?.push && typeof body.push === 'object' ? body.push : undefined;
}

/**
 * A server that stores the push differently from what was asked (`change` edits the request's push) while every
 * record of it echoes the marker the client sent.
 */
function storedOtherwise(change: (push: Record<string, any>) => boolean) {
  return () => {
    const asked = new Map<string, unknown>();
    return {
      request(ex: Exchange) {
        const body = ex.requestJson;
        if (pushOf(ex) && change(body.push)) ex.requestJson = body;
      },
      response(ex: Exchange) {
        if (ex.op === 'createPush' && ex.status === 201 && marked(ex.sentJson?.push?.client_encryption)) {
          asked.set(ex.json.url_token, ex.sentJson.push.client_encryption);
        }
        mapRecords(ex, (r) => {
          if (asked.has(r.url_token)) r.client_encryption = asked.get(r.url_token);
        });
        mapJson(ex, ex.op === 'previewPush' && ex.status === 200 && asked.has(ex.params.url_token!), (b) => {
          b.client_encryption = asked.get(ex.params.url_token!);
        });
      },
    };
  };
}

export const e2eValueFaults = define('value', [
  {
    name: 'encryption-marker-not-stored',
    models:
      'client_encryption is not stored (an unknown property to this server): the push is kept as ordinary, its records say null',
    killers: ['E2E-002'],
    start: () => ({
      request(ex) {
        const body = ex.requestJson;
        if (pushOf(ex) && 'client_encryption' in body.push) {
          delete body.push.client_encryption;
          ex.requestJson = body;
        }
      },
    }),
  },
  {
    name: 'file-names-lowercased',
    models:
      'file names are stored in a case-insensitive column and come back lower-cased (an encrypted name no longer opens)',
    killers: ['E2E-003'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getPush' && ex.status === 200 && Array.isArray(ex.json?.files), (b) => {
          for (const f of b.files) if (typeof f.filename === 'string') f.filename = f.filename.toLowerCase();
        });
      },
    }),
  },
]);

export const e2eFieldFaults = define('field', [
  {
    name: 'marker-missing-from-lists-and-preview',
    models:
      'the owner lists and the preview are built from a query that leaves out client_encryption, so they say null',
    killers: ['E2E-005'],
    start: () => ({
      response(ex) {
        if (ex.op === 'listActivePushes' || ex.op === 'listExpiredPushes')
          mapRecords(ex, (r) => void (r.client_encryption = null));
        mapJson(ex, ex.op === 'previewPush' && ex.status === 200, (b) => void (b.client_encryption = null));
      },
    }),
  },
]);

export const e2eOptionFaults = define('option', [
  {
    name: 'plaintext-rules-on-envelopes',
    models:
      'the url and qr rules are applied to encrypted pushes too, so their envelopes are refused as no URL or too long',
    killers: ['E2E-004'],
    start: () => ({
      request(ex) {
        const push = pushOf(ex);
        if (!push || !marked(push.client_encryption) || typeof push.payload !== 'string') return;
        const message =
          push.kind === 'url'
            ? 'must be a valid HTTP or HTTPS URL'
            : push.kind === 'qr' && push.payload.length > 1024
              ? 'is too long (at most 1024 characters)'
              : null;
        if (!message) return;
        ex.fail(422, 'validation_failed', 'The push is not valid.');
        ex.json = { ...ex.json, errors: { payload: [message] } };
      },
    }),
  },
  {
    name: 'encryption-scheme-unchecked',
    models: 'any client_encryption is accepted and echoed, also a scheme or version the server does not know',
    killers: ['E2E-007'],
    start: storedOtherwise((push) => {
      if (!marked(push.client_encryption) || known(push.client_encryption)) return false;
      push.client_encryption = { ...MARKER };
      return true;
    }),
  },
  {
    name: 'envelope-form-unchecked',
    models:
      'a push marked as encrypted is stored whatever its payload holds, so plaintext sent by a buggy client is kept',
    killers: ['E2E-008'],
    start: storedOtherwise((push) => {
      if (!marked(push.client_encryption) || typeof push.payload !== 'string' || ENVELOPE.test(push.payload))
        return false;
      delete push.client_encryption;
      return true;
    }),
  },
]);

export const e2eViewFaults = define('views', [
  {
    name: 'encrypted-views-not-counted',
    models:
      "retrievals of an encrypted push are not counted (served like the owner's own look, since the server cannot read it)",
    killers: ['E2E-006'],
    start: () => ({
      request(ex) {
        const push = ex.push;
        if (ex.op !== 'getPush' || !push || !marked(push.input.client_encryption) || ex.byOwner) return;
        const owner = /^token:(.+)$/.exec(push.owner)?.[1];
        if (!owner) return;
        const headers: Record<string, string> = { ...ex.requestHeaders, authorization: `Bearer ${owner}` };
        delete headers['x-user-email'];
        delete headers['x-user-token'];
        ex.requestHeaders = headers;
      },
    }),
  },
]);

export const e2eLeakFaults = define('leak', [
  {
    name: 'envelope-kept-after-expiry',
    models:
      'the envelope of an encrypted push is not erased at expiry (the server cannot read it, so keeps it) and is still served',
    killers: ['E2E-006', 'REC-003'],
    start: () => {
      const envelopes = new Map<string, string>();
      return {
        response(ex) {
          const b = ex.json;
          if (ex.op !== 'getPush' || ex.status !== 200 || !marked(b?.client_encryption)) return;
          if (typeof b.payload === 'string') envelopes.set(b.url_token, b.payload);
          mapJson(ex, b.expired === true && envelopes.has(b.url_token), (body) => {
            body.payload = envelopes.get(body.url_token);
          });
        },
      };
    },
  },
]);

export const e2eAuthFaults = define('auth', [
  {
    name: 'passphrase-skipped-when-encrypted',
    models:
      'the passphrase is not checked for encrypted pushes (the key in the link is thought to be protection enough)',
    killers: ['E2E-011'],
    start: () => ({
      request(ex) {
        const push = ex.push;
        if (
          ex.op !== 'getPush' ||
          !push ||
          !marked(push.input.client_encryption) ||
          typeof push.input.passphrase !== 'string'
        )
          return;
        ex.requestHeaders = { ...ex.requestHeaders, 'x-passphrase': push.input.passphrase };
        ex.url.searchParams.delete('passphrase');
      },
    }),
  },
]);

export const e2eV1Faults = define('leak', [
  {
    name: 'v1-hands-out-envelopes',
    models:
      'the v1 API retrieves an encrypted push like any other: the envelope as the payload, unmarked, and a view spent',
    killers: ['E2E-012'],
    start: () => ({
      async response(ex) {
        if (ex.op !== 'getPushV1' || ex.status !== 409) return;
        const url = new URL(`/api/v2/pushes/${encodeURIComponent(ex.params.url_token!)}${ex.url.search}`, ex.url);
        const v2 = await ex.send({ url });
        ex.adopt(v2);
        mapJson(ex, v2.status === 200, (body) => {
          delete body.client_encryption;
          return body;
        });
      },
    }),
  },
]);
