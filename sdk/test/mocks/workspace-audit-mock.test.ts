/**
 * A workspace's audit trail in the stateful mock (issue 41), through the SDK facade, every answer checked against the
 * contract: its owner reads it (an empty trail: the mock has no invitations yet, so no member changes but refused
 * ones, which write nothing), another user and an id no workspace has get 404, as on the server.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretPushClient, NotFoundError, ValidationError } from '../../src/index.js';
import { createMockServerHandlers } from '../../src/mocks/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';

const server = setupServer();
const checker = specCheckingFetch();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  const violations = [...checker.violations];
  checker.clear();
  expect(violations, 'answers that break the spec').toEqual([]);
});
afterAll(() => server.close());

describe("stateful mock: a workspace's audit trail", () => {
  it('its owner reads it; a refused change writes nothing; anyone else gets 404', async () => {
    const baseUrl = 'http://mock-wsaudit.test';
    const mock = createMockServerHandlers({ baseUrl });
    server.use(...mock.handlers);
    const as = (token: string) => createSecretPushClient({ baseUrl, token, fetch: checker.fetch, maxRetries: 0 });
    const owner = as(mock.users[0]!.token);
    const other = as(mock.users[1]!.token);
    const { id } = await owner.createWorkspace('Acme');
    await expect(owner.leaveWorkspace(id)).rejects.toBeInstanceOf(ValidationError);
    expect((await owner.workspaceAudit.page(id, 1)).items).toEqual([]);
    const all = [];
    for await (const entry of owner.workspaceAudit(id)) all.push(entry);
    expect(all).toEqual([]);
    await expect(other.workspaceAudit.page(id, 1)).rejects.toBeInstanceOf(NotFoundError);
    await expect(owner.workspaceAudit.page(id + 1, 1)).rejects.toBeInstanceOf(NotFoundError);
  });
});
