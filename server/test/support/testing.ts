/** `@secret-push/server/testing`: the test databases and settings other workspaces' tests use. */
export { adminUrl, createTestDatabase, makeSettings, TEST_KEY_A, TEST_KEY_B, type TestDatabase } from './db.js';
