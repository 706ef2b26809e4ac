/**
 * `@secret-push/rules`: the rules of the service as plain, browser-safe functions. The server, the contract toolkit,
 * the SDK's stateful mock and the conformance suite all import them, so a rule is written once. A private workspace:
 * the published packages inline it (the SDK re-exports it as `@secret-push/sdk/rules`, where apps may use it, for
 * example to check an input before sending it). Needs `ajv` and `ajv-formats` for the schema checks.
 */
export * from './access.js';
export * from './ajv.js';
export * from './credentials.js';
export * from './durations.js';
export * from './errors.js';
export * from './feature-gates.js';
export * from './field-errors.js';
export * from './form-input.js';
export * from './invitations.js';
export * from './limits.js';
export * from './notify.js';
export * from './media-type.js';
export * from './paging.js';
export * from './push-input.js';
export * from './push-state.js';
export * from './recipient-access.js';
export * from './settings.js';
export * from './version.js';
export * from './schemas.js';
export * from './routes.js';
export * from './scopes.js';
export * from './webhook-events.js';
export * from './webhook-limits.js';
export * from './workspaces.js';
export * from './workspace-brand.js';
