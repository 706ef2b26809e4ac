/**
 * `@secret-push/server`: what other parts of the repository (the SDK's and the conformance suite's tests, the bench)
 * use to run a real server in-process: the app, the core, settings and the embedded PostgreSQL.
 */
export { createApp, type App, type AppOptions } from './http/app.js';
export { createCore, versionReport, DomainError, type Core, type CoreOptions, type RequestContext } from './core.js';
export { loadSettings, maxBodyBytes, repoRoot, SettingsError, type Settings } from './config/settings.js';
export { freePort, startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
export { createKeyring } from './crypto/envelope.js';
export { newUrlToken } from './crypto/tokens.js';
export { migrate, openOrm } from './db/orm.js';
