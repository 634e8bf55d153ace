// node:test's `test`, `beforeEach` and `afterEach` on top of mocha, for the mutation run only:
// Stryker's mocha runner keeps every test file loaded in one process, switches mutants without
// reloading and knows which single tests cover each mutant. `npm test` runs the same files on
// node:test itself. register-node-test-on-mocha.mjs points `node:test` here, one copy of this module
// per test file (`?file=`), so that a file's tests and hooks form a suite of their own, scoped to the
// file as node:test scopes them.
import Mocha from "mocha";

const file = new URL(import.meta.url).searchParams.get("file") ?? "tests";
const title = file.replace(/^.*\//, "").replace(/\.test\.js$/, "");
/** a test without its own timeout: a hang fails in this many ms */
const DEFAULT_TIMEOUT = 15_000;
let suite;

function fileSuite() {
  if (!suite) {
    // mocha's bdd `describe` runs its callback at once, with the new suite as `this`
    globalThis.describe(title, function () {
      suite = this;
    });
  }
  return suite;
}

export function test(name, options, fn) {
  if (typeof options === "function") [fn, options] = [options, {}];
  options ??= {};
  const body = options.skip
    ? undefined // a pending test
    : function () {
        const ctx = this;
        return fn({ name, skip: () => ctx.skip() });
      };
  const t = new Mocha.Test(name, body);
  t.timeout(options.timeout ?? DEFAULT_TIMEOUT);
  fileSuite().addTest(t);
}

export const it = test;

export function beforeEach(fn) {
  fileSuite().beforeEach(function () {
    return fn();
  });
}

export function afterEach(fn) {
  fileSuite().afterEach(function () {
    return fn();
  });
}

export function before(fn) {
  fileSuite().beforeAll(() => fn());
}

export function after(fn) {
  fileSuite().afterAll(() => fn());
}
