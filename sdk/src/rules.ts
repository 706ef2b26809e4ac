/**
 * `@secret-push/sdk/rules`: the service's push rules (`@secret-push/rules`, the workspace the server, the contract
 * toolkit and the stateful mock share), inlined into the SDK's build so the published package needs nothing else.
 * Apps may use them, for example to check an input before sending it. Needs `ajv` and `ajv-formats` (optional peer
 * dependencies) for the schema checks.
 */
export * from '@secret-push/rules';
