const stub = new URL("../out/test/stubs/vscode.js", import.meta.url).href;
export async function resolve(specifier, context, next) {
  if (specifier === "vscode") {
    // the stub of the same out/ tree as the importer: the tests and the code under test share one
    // stub even when this hook was loaded from another copy of the extension (Stryker's sandbox)
    const parent = context.parentURL ?? "";
    const at = parent.lastIndexOf("/out/");
    const url = at >= 0 ? `${parent.slice(0, at)}/out/test/stubs/vscode.js` : stub;
    return { url, shortCircuit: true, format: "module" };
  }
  return next(specifier, context);
}
