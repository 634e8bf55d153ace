// Mutation testing of the extension's TypeScript with StrykerJS: `npm run mutate` (or
// scripts/mutate-vscode.sh from the repository root). On demand only, not in CI. Figures, what is
// excluded and why, and the surviving mutants are in docs/TESTING.md.
//
// The tests are node:test files (`npm test`). For the mutation run the compiled files are loaded once
// into Stryker's mocha runner, `node:test` resolving to a thin layer over mocha
// (test/stryker/node-test-on-mocha.mjs): mutants are switched in the running process and each mutant
// runs only the single tests that cover it. (The tap runner, one node process per test file per
// mutant, needed about five hours here; this takes well under one.)
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: "mocha",
  mochaOptions: {
    // acpClient.test.ts only drives the real C++ server (build/openvaala): not part of the run.
    spec: ["out/test/!(acpClient).test.js"],
  },
  // `vscode` resolves to the stub; `node:test` to a thin layer over mocha (test/stryker/)
  testRunnerNodeArgs: ["--import", "./test/register-vscode-stub.mjs", "--import", "./test/stryker/register-node-test-on-mocha.mjs"],
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
