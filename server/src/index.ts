/**
 * `@secret-push/server`: what other parts of the repository (the SDK's and the conformance suite's tests, the bench)
 * use to run a real server in-process: the app, the core, settings and the embedded PostgreSQL.
 */
export { createApp } from './http/app.js';
export { createCore, type Core } from './core.js';
export { loadSettings, maxBodyBytes, type Settings } from './config/settings.js';
export { freePort, startEmbeddedPostgres } from './db/embedded.js';
export { migrate, openOrm } from './db/orm.js';
