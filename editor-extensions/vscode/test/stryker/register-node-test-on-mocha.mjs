// `node --import ./test/stryker/register-node-test-on-mocha.mjs`: `import ... from "node:test"` in the
// compiled test files resolves to node-test-on-mocha.mjs, one copy per importing file. Used by the
// mutation run (stryker.config.mjs) only.
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";

// mocha loads test files with require() where node has require(esm); module hooks only apply to
// import(), so mocha is made to import() them (require(esm) stays on for the bundle test's stub)
const esmUtils = createRequire(import.meta.url)("mocha/lib/nodejs/esm-utils.js");
esmUtils.requireOrImport = (file) => import(pathToFileURL(file).href);

register(
  "data:text/javascript," +
    encodeURIComponent(`
const shim = ${JSON.stringify(new URL("./node-test-on-mocha.mjs", import.meta.url).href)};
export async function resolve(specifier, context, next) {
  if ((specifier === "node:test" || specifier === "test") && context.parentURL && context.parentURL.includes("/out/test/")) {
    return { url: shim + "?file=" + encodeURIComponent(context.parentURL), shortCircuit: true, format: "module" };
  }
  return next(specifier, context);
}`),
);
