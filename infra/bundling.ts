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

/**
 * How every Lambda bundle is built, in one place: `ServiceFunction` hands these to NodejsFunction, and the
 * benchmark (`npm run bench`) builds the same bundles with esbuild directly to measure their size and import
 * time. Kept free of CDK imports so the benchmark need not load aws-cdk-lib.
 */
export const FUNCTION_BUNDLING = {
  minify: true,
  // Domain errors and stack traces stay readable in the logs despite minification.
  keepNames: true,
  sourceMap: false,
  target: 'node22',
  // Prefer packages' ESM builds, which tree-shake and need no CJS interop.
  mainFields: ['module', 'main'],
  // CJS dependencies bundled into an ES module still call require(); give them one.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  // The SDK is bundled, not taken from the runtime: one minified, tree-shaken file loads in about a third of
  // the time Node needs to resolve and evaluate the runtime's CommonJS SDK packages (`npm run bench`, README
  // "Performance"), and the deployed SDK is the version the tests ran. Left out are only the credential
  // providers the SDK imports lazily when the environment holds no credentials, which Lambda's always does.
  externalModules: [...LAZY_CREDENTIAL_PROVIDERS],
};

/** The output format: ES modules, as `ServiceFunction` sets with `OutputFormat.ESM`. */
export const FUNCTION_FORMAT = 'esm' as const;

/**
 * The esbuild options NodejsFunction derives from the settings above (its `--bundle --platform=node
 * --format=esm ...` command line), for building a bundle outside CDK.
 */
export function esbuildOptionsFor(entry: string, outfile: string) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node' as const,
    format: FUNCTION_FORMAT,
    target: FUNCTION_BUNDLING.target,
    minify: FUNCTION_BUNDLING.minify,
    keepNames: FUNCTION_BUNDLING.keepNames,
    sourcemap: FUNCTION_BUNDLING.sourceMap,
    mainFields: FUNCTION_BUNDLING.mainFields,
    banner: { js: FUNCTION_BUNDLING.banner },
    external: FUNCTION_BUNDLING.externalModules,
  };
}
