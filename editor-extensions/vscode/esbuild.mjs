// Bundles the extension (CommonJS for the extension host; `vscode` external) and the webview script.
import { build } from "esbuild";

const watch = process.argv.includes("--watch");
const common = { bundle: true, sourcemap: true, minify: !watch, logLevel: "info", legalComments: "none" };
await Promise.all([
  build({
    ...common,
    entryPoints: ["src/vscode/extension.ts"],
    outfile: "dist/extension.cjs",
    platform: "node",
    target: "node20",
    format: "cjs",
    external: ["vscode"],
    // prefer ESM entry points (jsonc-parser's UMD build requires its own files at run time)
    mainFields: ["module", "main"],
    // the SDKs are ESM; in the CJS bundle `import.meta.url` is derived from __filename
    // VS Code >= 1.101 logs a "navigator is now a global in nodejs" migration error whenever an
    // extension reads `navigator`; zod probes it for Cloudflare. The extension host is Node: no navigator.
    define: { "import.meta.url": "importMetaUrl", navigator: "undefined" },
    banner: { js: "const importMetaUrl = require('url').pathToFileURL(__filename).href;" },
  }),
  build({
    ...common,
    entryPoints: ["src/webview/main.ts"],
    outfile: "dist/webview.js",
    platform: "browser",
    target: "es2022",
    format: "iife",
  }),
]);
