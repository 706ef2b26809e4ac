/**
 * Whether this code runs from the compiled bundle (server/dist, made by `npm run build`) or from the TypeScript
 * sources (tests, `npm run dev`). The build defines `__SECRET_PUSH_COMPILED__`; from source it is not declared at all.
 * Code that differs between the two (browser bundles made at build time instead of at run time) asks here, and the
 * build drops the branch it does not take, so the compiled server holds no call to a compiler.
 */
declare const __SECRET_PUSH_COMPILED__: boolean | undefined;

export const COMPILED: boolean = typeof __SECRET_PUSH_COMPILED__ !== 'undefined' && __SECRET_PUSH_COMPILED__ === true;
