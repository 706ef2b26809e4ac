/**
 * `@secret-push/sdk/mocks`: msw handlers for frontend teams. A separate entry so apps that do not mock never load
 * msw, or ajv and ajv-formats (the stateful mock checks requests and answers against the contract's schemas with
 * the server's own rules). All three are optional peer dependencies of the SDK.
 *
 * - `createMockServerHandlers()`: a stateful in-memory mock that behaves like the server for the rules a UI meets.
 * - `createMswHandlers()` / `handleGetPush()` / …: the generated per-operation handlers (you give each response).
 */
export { createMockServerHandlers, type MockServer, type MockServerOptions, type SeedOptions } from './server.js';
export { defaultMockSettings, defaultMockUsers, type MockEmail, type MockSettings, type MockUser } from './store.js';
export * from '../generated/msw.gen.js';
