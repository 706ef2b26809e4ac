/**
 * `@secret-push/contract`: the contract toolkit. It loads the bundled OpenAPI document once and answers, the same way
 * for every part of the project (server, server tests, SDK tests, conformance suite): which operation a request
 * names (`contract().routes`), what a `$ref` points at, and whether a value or a response matches the document
 * (`validateComponent`, `checkResponse`). Every schema is compiled with the one Ajv set-up, `makeAjv` (it lives with
 * the shared rules in `@secret-push/rules`, because the stateful mock in the browser needs it too).
 */
export { makeAjv } from '@secret-push/rules';
export {
  Contract,
  formatAjvErrors,
  type CheckOptions,
  type HeadersLike,
  type ResponseToCheck,
  type ValidationResult,
  type Violation,
} from './contract.js';
export {
  corsAnswer,
  corsRules,
  isCorsPath,
  isV1Path,
  type CorsAnswer,
  type CorsRequest,
  type CorsRules,
  type CorsSettings,
} from './cors.js';
export {
  BUNDLED_SPEC_PATH,
  BUNDLED_V1_SPEC_PATH,
  bundledDocument,
  bundledV1Document,
  contract,
  contractV1,
} from './document.js';
export { deref, inlineRefs, resolvePointer, type Json } from './refs.js';
export {
  HTTP_METHODS,
  operationsOf,
  RouteTable,
  routingPath,
  type HttpMethod,
  type Operation,
  type RouteMatch,
} from './routes.js';
