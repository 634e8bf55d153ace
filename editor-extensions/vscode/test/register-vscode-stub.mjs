// `node --import ./test/register-vscode-stub.mjs`: `import "vscode"` resolves to the hand-written stub.
import { register } from "node:module";
register("./vscode-hooks.mjs", import.meta.url);
