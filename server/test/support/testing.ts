/** `@secret-push/server/testing`: the test databases and settings other workspaces' tests use. */
export { createTestDatabase, makeSettings, type TestDatabase } from './db.js';
export { startMailbox, type Mailbox } from './mailbox.js';
export { reserveAddress, withOwnBase } from './address.js';
export { startCompiledServer, type ServerProcess } from './compiled-server.js';
