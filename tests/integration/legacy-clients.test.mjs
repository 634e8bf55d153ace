// Clients built on ACP SDKs older than 2.4.0 (acp-ai-provider, acp.el) pick the model with
// session/set_model {sessionId, modelId}, which the 2.4.0 schema dropped: it is the `model` config
// option under its old name (same validation, a config_option_update to the editor, answer {}).
import assert from "node:assert/strict";
import { generateText } from "ai";
import { createACPProvider } from "@mcpc-tech/acp-ai-provider";
import { scenario, expectRpcError, agentBinary, agentEnv } from "./harness.mjs";

const modelOption = (configOptions) => configOptions?.find((o) => o.id === "model");

scenario("session/set_model (older SDKs) switches the model like the model config option: {} answer, config_option_update, -32602 naming the models", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({
    script: [{ text: "one" }, { text: "two" }],
    configOpts: { providerYaml: "models: [other-model, test-model]" },
  });
  const { sessionId } = await h.newSession(ws);
  await h.prompt(sessionId, "first");
  assert.equal(fake.requests.at(-1).body.model, "test-model");

  // The SDK 2.4.0 has no typed method for it: its raw request, as an older SDK sends it.
  const answer = await h.request("session/set_model", { sessionId, modelId: "fake/other-model" });
  assert.deepEqual(answer, {}, "set_model answers {} (SetSessionModelResponse)");
  await h.waitForUpdate(
    (u) => u.sessionId === sessionId && u.update.sessionUpdate === "config_option_update" &&
      modelOption(u.update.configOptions)?.currentValue === "fake/other-model",
    { label: "config_option_update with the model set_model picked (the editor is told: the answer carries no options)" });
  await h.prompt(sessionId, "second");
  assert.equal(fake.requests.at(-1).body.model, "other-model", "the next model request uses the model set_model picked");

  const err = await expectRpcError(h.request("session/set_model", { sessionId, modelId: "fake/no-such-model" }), "set_model with an unknown model");
  assert.equal(err.code, -32602, "an unknown model is invalid params, as with set_config_option");
  assert.match(err.message, /fake\/no-such-model/);
  assert.match(err.message, /fake\/other-model, fake\/test-model/, "the error names the valid models");
  const missing = await expectRpcError(h.request("session/set_model", { sessionId: "sess_nope", modelId: "fake/test-model" }), "set_model on an unknown session");
  assert.equal(missing.code, -32002, "an unknown session is resource not found");
  const noModel = await expectRpcError(h.request("session/set_model", { sessionId }), "set_model without modelId");
  assert.equal(noModel.code, -32602);
  h.assertSchemaClean();
});

scenario("acp-ai-provider (AI SDK) drives a session: its model choice goes through session/set_model and answers", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "Hello from the picked model." }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, providerYaml: "models: [other-model, test-model]" });
  // The provider spawns the agent itself with process.env under `env`: blank what could pick a real model.
  const env = { ...agentEnv(home.env), OPENVAALA_MODEL: "", OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" };
  const provider = createACPProvider({
    command: agentBinary(),
    args: ["acp"],
    env,
    authMethodId: "check-provider",
    session: { cwd: ws, mcpServers: [] },
  });
  ctx.defer(() => provider.cleanup());
  const result = await generateText({ model: provider.languageModel("fake/other-model"), prompt: "Say hello" });
  assert.equal(result.text, "Hello from the picked model.");
  assert.equal(fake.requests.length, 1);
  assert.equal(fake.requests[0].body.model, "other-model", "the model acp-ai-provider picked (session/set_model) answered");
});
