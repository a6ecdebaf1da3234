import type { BuildOptions } from 'esbuild';

/**
 * The SDK's default credential chain `import()`s these only after the environment variables failed; on
 * Lambda they never do, so the bundles need not carry them (about 130 KB with the clients they pull in).
 */
const LAZY_CREDENTIAL_PROVIDERS = [
  '@aws-sdk/credential-provider-http',
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-web-identity',
  '@smithy/credential-provider-imds',
];

/** The file Lambda loads (`index.handler`); split-off chunks sit beside it under `chunks/`. */
export const ENTRY_FILE = 'index.mjs';

/**
 * How every Lambda bundle is built, in one place: `ServiceFunction` builds each function's asset with these
 * options, and the benchmark (`npm run bench`) builds the same bundles to measure their size and import time.
 * Kept free of CDK imports so the benchmark need not load aws-cdk-lib.
 *
 * - ES modules, minified, for Lambda's Node.js 22. No `keepNames`: it wraps every class and function to keep
 *   its name (29 KiB and about 2.4 ms of each cold start) and never named an error anyway, since an error's
 *   `name` (the log's `error_kind`) is what the class sets, which every error class of ours does. The price is
 *   a stack trace in the logs naming minified functions (`at o`); its error name and message stay readable.
 * - Code splitting: what a function reaches only through `import()` (the Tracer and X-Ray SDK with tracing
 *   off, the KMS and Step Functions clients until first used, the SDK's browser-only code) goes to a chunk of
 *   its own that Node loads when the `import()` runs, so a cold start compiles only what the function runs.
 * - The SDK is bundled, not taken from the runtime: one minified, tree-shaken module graph loads in about a
 *   third of the time Node needs to resolve and evaluate the runtime's CommonJS SDK packages (docs/performance.md,
 *   "Import time"), and the deployed SDK is the version the tests ran. Left out are only the credential
 *   providers the SDK imports when the environment holds no credentials, which Lambda's always does.
 */
export function esbuildOptionsFor(entry: string, outdir: string): BuildOptions {
  return {
    entryPoints: [entry],
    outdir,
    entryNames: ENTRY_FILE.replace(/\.mjs$/, ''),
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    sourcemap: false,
    // Prefer packages' ESM builds, which tree-shake and need no CJS interop.
    mainFields: ['module', 'main'],
    // CJS dependencies bundled into an ES module still call require(); give them one. Written minified: the
    // banner heads every chunk (a dozen or more at import), and esbuild does not minify it.
    banner: { js: 'import{createRequire}from"module";const require=createRequire(import.meta.url);' },
    external: LAZY_CREDENTIAL_PROVIDERS,
    logLevel: 'warning',
  };
}
