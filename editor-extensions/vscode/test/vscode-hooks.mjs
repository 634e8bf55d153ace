const stub = new URL("../out/test/stubs/vscode.js", import.meta.url).href;
export async function resolve(specifier, context, next) {
  if (specifier === "vscode") return { url: stub, shortCircuit: true, format: "module" };
  return next(specifier, context);
}
