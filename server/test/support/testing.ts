/** `@secret-push/server/testing`: the test databases and settings other workspaces' tests use. */
export { createMigratedDatabase, makeSettings, type TestDatabase } from './db.js';
/** @public An empty database, for other workspaces' tests of a first start on one (none today). */
export { createTestDatabase } from './db.js';
export { startMailbox, type Mailbox } from './mailbox.js';
export { reserveAddress, withOwnBase } from './address.js';
export { startCompiledServer, type ServerProcess } from './compiled-server.js';
// The real API with its logs captured and every answer checked against the contract (the CLI's and the MCP server's
// tests), and what it stored of a push, as its operator could read it.
export { startRealApi, type RealApi } from '../api/support/real.js';
export { storedPush } from './stored-push.js';
