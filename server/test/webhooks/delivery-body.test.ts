/**
 * The body a push event's delivery sends: its facts (push-event-facts.ts) with the push's name put into the facts'
 * empty `name` without parsing them (delivery.ts `deliveryBody`). It must be the very JSON that parsing the facts,
 * setting `data.name` and serialising again gives, for any name (quotes, backslashes, control characters, emoji), and
 * facts it cannot splice safely (no empty name, or two) go through the parse.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKeyring } from '../../src/crypto/envelope.js';
import { deliveryBody } from '../../src/webhooks/delivery.js';
import { made, viewerOf } from '../../src/webhooks/push-event-facts.js';
import type { DeliveryRow } from '../../src/webhooks/webhook-repository.js';

const keyring = createKeyring([{ id: 'k1', key: randomBytes(32) }]);
const pushId = '0b8f4c1e-3d5a-4e7b-9c2d-1a2b3c4d5e6f';
const at = new Date('2026-11-27T12:00:00.000Z');

function row(name: string | null) {
  return {
    id: pushId,
    kind: 'text' as const,
    passphraseProtected: false,
    expireAfterViews: 5,
    viewsUsed: 1,
    expiresAt: new Date('2026-12-04T12:00:00.000Z'),
    expired: false,
    createdAt: at,
    nameCiphertext: name === null ? null : keyring.encryptText(name, `pushes.name:${pushId}`),
  };
}

function delivery(facts: string, nameCiphertext: string | null): DeliveryRow {
  return {
    id: 'msg_0123456789abcdef0123456789',
    webhookId: '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6',
    event: 'push.viewed',
    eventId: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b',
    body: null,
    facts,
    nameCiphertext,
    status: 'pending',
    attempts: 0,
    lastStatusCode: null,
    lastError: null,
    nextAttemptAt: null,
    deliveredAt: null,
    createdAt: at,
  };
}

/** What parsing the facts and putting the name in gives. */
const parsed = (facts: string, name: string) => {
  const event = JSON.parse(facts) as { data: { name: string } };
  event.data.name = name;
  return JSON.stringify(event);
};

describe('a push event delivery’s body', () => {
  const viewer = viewerOf({
    userId: null,
    ip: '203.0.113.7',
    userAgent: 'curl/8 "name":"" \\ ok',
    referrer: '"name":"',
  });
  const names = ['', 'Deploy key', 'quote " and backslash \\ and "name":""', 'tab\tnewline\n\u0001', '🔑 ключ'];

  it.each(names)('is the facts with the name %j put in, as parsing them would make it', (name) => {
    const pushRow = row(name === '' ? null : name);
    const event = made('push.viewed', pushRow, at, { viewer });
    const body = deliveryBody(delivery(event.facts, event.nameCiphertext), keyring);
    expect(body).toBe(parsed(event.facts, name));
    expect((JSON.parse(body) as { data: { name: string } }).data.name).toBe(name);
  });

  it('parses facts that hold no empty name, or two', () => {
    const name = 'Ops "db" password';
    const ciphertext = keyring.encryptText(name, `pushes.name:${pushId}`);
    const noSlot = JSON.stringify({ type: 'push.viewed', timestamp: at.toISOString(), data: { push_id: pushId } });
    expect(JSON.parse(deliveryBody(delivery(noSlot, ciphertext), keyring))).toEqual({
      type: 'push.viewed',
      timestamp: at.toISOString(),
      data: { push_id: pushId, name },
    });
    const twoSlots = JSON.stringify({
      type: 'push.viewed',
      timestamp: at.toISOString(),
      data: { push_id: pushId, name: '', extra: { name: '' } },
    });
    expect(deliveryBody(delivery(twoSlots, ciphertext), keyring)).toBe(parsed(twoSlots, name));
  });

  it('never opens a name under another push’s context', () => {
    const event = made('push.viewed', row('Secret name'), at, { viewer });
    const otherPush = event.facts.replace(pushId, '11111111-2222-4333-8444-555555555555');
    expect(() => deliveryBody(delivery(otherPush, event.nameCiphertext), keyring)).toThrow();
  });
});
