// Mutation testing of the extension's TypeScript with StrykerJS: `npm run mutate` (or
// scripts/mutate-vscode.sh from the repository root). On demand only, not in CI. Figures, what is
// excluded and why, and the surviving mutants are in docs/TESTING.md.
//
// The tests use node's own runner, so the tap runner runs each compiled test file as
// `node -r <stryker hook> --import ./test/register-vscode-stub.mjs out/test/<file>.test.js` in a
// sandbox whose src/ is instrumented; coverage is per test file.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "tap",
  tap: {
    // acpClient.test.ts only drives the real C++ server (build/openvaala): not part of the run.
    testFiles: ["out/test/!(acpClient).test.js"],
    nodeArgs: ["-r", "{{hookFile}}", "--import", "./test/register-vscode-stub.mjs", "{{testFile}}"],
    forceBail: true,
  },
  // the sandbox compiles the instrumented sources; the bundle is built too, so the bundle test runs
  buildCommand: "npm run build",
  mutate: ["src/**/*.ts"],
  ignorePatterns: ["out", "dist", "reports", "*.vsix"],
  coverageAnalysis: "perTest",
  // a 2-core machine shared with others: one test process at a time (npm run mutate also nices it)
  concurrency: 1,
  timeoutMS: 5000,
  reporters: ["clear-text", "progress", "html", "json"],
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  thresholds: { high: 90, low: 80, break: 80 },
  cleanTempDir: "always",
};
