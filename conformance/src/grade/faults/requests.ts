/**
 * Faults of requests (issue 24): bugs a server adding Password Pusher Pro's requests could believably have. Each is
 * killed by a requirement of the REQ class.
 */
import { define, mapJson } from '../fault.js';

/** A second answer taken: the 409 turned into the receipt of a success. */
const twice = define('race', [
  {
    name: 'request-answered-twice',
    models: 'an answer to a fulfilled request is taken again (no claim of the pending state)',
    killers: ['REQ-005'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'respondToRequest' || ex.status !== 409) return;
        ex.status = 201;
        ex.json = { url_token: ex.params.url_token, state: 'fulfilled', fulfilled_at: new Date().toISOString() };
      },
    }),
  },
]);

const leaks = define('leak', [
  {
    name: 'request-responder-sees-owner-fields',
    models: 'the responder’s view of a request carries the requester’s name and note',
    killers: ['REQ-002'],
    start: () => {
      const owned = new Map<string, { name: string; note: string }>();
      return {
        response(ex) {
          if (ex.op === 'createRequest' && ex.status === 201) owned.set(ex.json.url_token, ex.json);
          mapJson(ex, ex.op === 'getRequest' && ex.status === 200 && ex.json?.audience === 'responder', (b) => {
            const o = owned.get(b.url_token);
            b.name = o?.name ?? '';
            b.note = o?.note ?? '';
          });
        },
      };
    },
  },
]);

const values = define('value', [
  {
    name: 'request-never-collected',
    models: 'the first retrieval of the answer does not move the request: it stays fulfilled',
    killers: ['REQ-004'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getRequest' && ex.status === 200 && ex.json?.state === 'collected', (b) => {
          b.state = 'fulfilled';
          b.collected_at = null;
        });
      },
    }),
  },
  {
    name: 'request-answer-ignores-settings',
    models: 'the answer’s push gets the instance defaults instead of the request’s expiry settings',
    killers: ['REQ-003'],
    start: () => ({
      request(ex) {
        const body = ex.requestJson;
        if (ex.op === 'createRequest' && body?.request && typeof body.request === 'object') {
          delete body.request.expire_after_views;
          ex.requestJson = body;
        }
      },
      response(ex) {
        mapJson(ex, ex.op === 'createRequest' && ex.status === 201, (b) => {
          const asked = ex.sentJson?.request?.expire_after_views;
          if (asked !== undefined) b.expire_after_views = asked;
        });
      },
    }),
  },
]);

const auth = define('auth', [
  {
    name: 'request-revoke-by-anyone',
    models: 'any signed-in user may revoke another user’s request',
    killers: ['REQ-007'],
    start: () => ({
      response(ex) {
        if (ex.op === 'revokeRequest' && ex.status === 403) {
          ex.status = 200;
          ex.json = { state: 'revoked' };
        }
      },
    }),
  },
  {
    name: 'request-closed-still-answered',
    models: 'a revoked request still takes an answer',
    killers: ['REQ-006'],
    start: () => ({
      response(ex) {
        if (ex.op === 'respondToRequest' && ex.status === 410) {
          ex.status = 201;
          ex.json = { url_token: ex.params.url_token, state: 'fulfilled', fulfilled_at: new Date().toISOString() };
        }
      },
    }),
  },
]);

export const requestFaults = [...twice, ...leaks, ...values, ...auth];
