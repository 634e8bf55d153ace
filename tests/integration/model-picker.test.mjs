// The model picker: a session config option of category "model" (Zed's model menu), listing
// every configured provider's models (config.yaml `models:`, else the provider's models
// endpoint, fetched in the background) with the current model first; set_config_option
// switches the model of the next request, and the choice survives a restart. For OpenAI models a
// thought_level select sets reasoning_effort.
import assert from "node:assert/strict";
import { scenario, expectRpcError, sleep } from "./harness.mjs";

const modelOption = (configOptions) => configOptions?.find((o) => o.id === "model");
const values = (option) => option.options.map((o) => o.value);
const setModel = (h, sessionId, value) => h.request("session/set_config_option", { sessionId, configId: "model", value });

scenario("model picker: configured models offered current first; set_config_option switches the next request; bad value -32602; kept across restart (load, resume)", async (ctx) => {
  const fake = await ctx.fakeModel([{ text: "one" }, { text: "two" }, { text: "three" }]);
  const ws = ctx.workspace({});
  const home = ctx.configHome({ modelUrl: fake.url, providerYaml: "models: [other-model, test-model]" });
  const h = await ctx.agent({ env: home.env, cwd: ws });
  await h.initialize();

  const created = await h.newSession(ws);
  const sessionId = created.sessionId;
  const picker = modelOption(created.configOptions);
  assert.ok(picker, `session/new offers a "model" config option: ${JSON.stringify(created.configOptions)}`);
  assert.equal(picker.category, "model", "the model option has category model (Zed's model menu)");
  assert.equal(picker.type, "select");
  assert.equal(picker.currentValue, "fake/test-model", "the model option's current value is config.yaml's model");
  assert.deepEqual(values(picker), ["fake/test-model", "fake/other-model"], "the configured models are offered, the current one first");
  assert.equal(fake.modelListRequests.length, 0, "a provider with models: is not asked for its list");

  await h.prompt(sessionId, "first");
  assert.equal(fake.requests.at(-1).body.model, "test-model", "before a switch the configured model answers");

  const switched = await setModel(h, sessionId, "fake/other-model");
  assert.equal(modelOption(switched.configOptions)?.currentValue, "fake/other-model",
    "set_config_option answers with the complete options, the new model current");
  assert.ok(switched.configOptions.some((o) => o.id === "mode"), "the reply is the complete configOptions list");
  await h.prompt(sessionId, "second");
  assert.equal(fake.requests.at(-1).body.model, "other-model", "the next model request uses the model picked in the editor");

  const err = await expectRpcError(setModel(h, sessionId, "fake/no-such-model"), "set_config_option with an unknown model");
  assert.equal(err.code, -32602, "an unknown model is invalid params");
  assert.match(err.message, /fake\/no-such-model/, "the error names the value");
  assert.match(err.message, /fake\/other-model, fake\/test-model/, "the error names the valid models");
  h.assertSchemaClean();
  await h.close();

  const h2 = await ctx.agent({ env: home.env, cwd: ws });
  await h2.initialize();
  const loaded = await h2.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal(modelOption(loaded.configOptions)?.currentValue, "fake/other-model", "session/load after a restart keeps the picked model");
  await h2.prompt(sessionId, "third");
  assert.equal(fake.requests.at(-1).body.model, "other-model", "after a restart the picked model still answers");
  h2.assertSchemaClean();
  await h2.close();

  const h3 = await ctx.agent({ env: home.env, cwd: ws });
  await h3.initialize();
  const resumed = await h3.request("session/resume", { sessionId, cwd: ws, mcpServers: [] });
  assert.equal(modelOption(resumed.configOptions)?.currentValue, "fake/other-model", "session/resume keeps the picked model");
  h3.assertSchemaClean();
});

scenario("model picker: a provider without models: is listed from its models endpoint in the background (config_option_update; session/new does not wait)", async (ctx) => {
  const delay = 3000;
  const { fake, ws, h } = await ctx.setup({ fakeOpts: { models: ["test-model", "fetched-a", "fetched-b"], modelsDelayMs: delay } });
  const started = Date.now();
  const created = await h.newSession(ws);
  const took = Date.now() - started;
  assert.ok(took < delay - 500, `session/new does not wait for the models endpoint (took ${took} ms, the list takes ${delay} ms)`);
  assert.deepEqual(values(modelOption(created.configOptions)), ["fake/test-model"], "before the list arrives only the current model is offered");

  const update = await h.waitForUpdate(
    (u) => u.sessionId === created.sessionId && u.update.sessionUpdate === "config_option_update",
    { label: "config_option_update with the fetched models" });
  assert.deepEqual(values(modelOption(update.update.configOptions)), ["fake/test-model", "fake/fetched-a", "fake/fetched-b"],
    "the fetched models are sent to the open session, the current one first");
  assert.equal(fake.modelListRequests.length, 1, "the models endpoint is asked once");
  assert.equal(fake.modelListRequests[0].path, "/v1/models", "OpenAI-compatible: GET {base_url}/models");
  assert.equal(fake.modelListRequests[0].headers.authorization, "Bearer sk-test", "with the provider's key");

  const second = await h.newSession(ws);
  assert.deepEqual(values(modelOption(second.configOptions)), ["fake/test-model", "fake/fetched-a", "fake/fetched-b"],
    "the list is kept for later sessions");
  assert.equal(fake.modelListRequests.length, 1, "the list is cached for the server's life");

  fake.push({ text: "from b" });
  await setModel(h, second.sessionId, "fake/fetched-b");
  await h.prompt(second.sessionId, "hi");
  assert.equal(fake.requests.at(-1).body.model, "fetched-b", "a fetched model can be picked and answers");
  h.assertSchemaClean();
});

scenario("model picker: the lists are fetched when the server starts, so the first session/new already offers them (clients such as acpx read only that answer)", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ fakeOpts: { models: ["test-model", "early-a"] } });
  await h.waitUntil(() => fake.modelListRequests.length === 1, { label: "the models endpoint asked before any session" });
  await sleep(500);  // the answer is local and immediate; give the agent time to take it in
  const created = await h.newSession(ws);
  assert.deepEqual(values(modelOption(created.configOptions)), ["fake/test-model", "fake/early-a"],
    "the first session/new answer carries the fetched models");
  h.assertSchemaClean();
});

scenario("model picker: an Anthropic provider's list comes from GET {base_url}/v1/models with its key headers", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ provider: "anthropic", fakeOpts: { models: ["claude-x"] } });
  const created = await h.newSession(ws);
  // The list may already be there when session/new answers (it is fetched from start-up on), or
  // come after it as config_option_update.
  let shown = modelOption(created.configOptions);
  if (values(shown).length < 2) {
    const update = await h.waitForUpdate(
      (u) => u.sessionId === created.sessionId && u.update.sessionUpdate === "config_option_update",
      { label: "config_option_update with the Anthropic models" });
    shown = modelOption(update.update.configOptions);
  }
  assert.deepEqual(values(shown), ["fake/test-model", "fake/claude-x"], "the picker offers the Anthropic provider's models");
  assert.equal(fake.modelListRequests[0].path, "/v1/models");
  assert.equal(fake.modelListRequests[0].headers["x-api-key"], "sk-test", "Anthropic's key header");
  assert.equal(fake.modelListRequests[0].headers["anthropic-version"], "2023-06-01");
  h.assertSchemaClean();
});

scenario("model picker: a models endpoint that fails offers just the current model, with no error shown", async (ctx) => {
  // Failing from the start: set after the agent started, the start-up fetch could be answered first.
  const { fake, ws, h } = await ctx.setup({ fakeOpts: { models: null } }); // the fake answers 500 for the list
  const created = await h.newSession(ws);
  await h.waitUntil(() => fake.modelListRequests.length === 1, { label: "the models endpoint asked" });
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(values(modelOption(created.configOptions)), ["fake/test-model"]);
  assert.equal(h.updatesOf(created.sessionId, "config_option_update").length, 0, "no update when no list arrives");
  assert.equal(h.textOf(created.sessionId), "", "no error is shown to the user");
  h.assertSchemaClean();
});

scenario("model picker: a models endpoint that failed is asked again, and the open session's picker fills in", async (ctx) => {
  // Down from the start: set after the agent started, the start-up fetch could be answered first (under load).
  const { fake, ws, h } = await ctx.setup({ fakeOpts: { models: null } });
  const created = await h.newSession(ws);
  await h.waitUntil(() => fake.modelListRequests.length === 1, { label: "the models endpoint asked" });
  fake.models = ["test-model", "came-back"]; // the gateway is up again
  const update = await h.waitUntil(() => h.updatesOf(created.sessionId, "config_option_update").at(-1), {
    label: "config_option_update after the models endpoint answered a retry",
    timeout: 8000,
  });
  assert.deepEqual(values(modelOption(update.configOptions)), ["fake/test-model", "fake/came-back"],
    "a failed list fetch is retried and its models reach the open session");
  assert.equal(fake.modelListRequests.length, 2, "one retry was enough: the endpoint is asked again only after a failure");
  h.assertSchemaClean();
});

scenario("model picker: a reload (SIGHUP) that adds a provider or changes models: updates the open session's picker", async (ctx) => {
  const { fake, ws, home, h } = await ctx.setup({ configOpts: { providerYaml: "models: [test-model]" }, fakeOpts: { models: ["listed-a"] } });
  const created = await h.newSession(ws);
  assert.deepEqual(values(modelOption(created.configOptions)), ["fake/test-model"]);
  const fs = await import("node:fs");
  let yaml = fs.readFileSync(home.configPath, "utf8").replace("models: [test-model]", "models: [test-model, added-model]");
  yaml += `  second:\n    api_type: openai\n    base_url: ${fake.url}/v1\n    api_key_env: FAKE_MODEL_KEY\n`;
  fs.writeFileSync(home.configPath, yaml);
  process.kill(h.child.pid, "SIGHUP");
  const update = await h.waitUntil(() => {
    const u = h.updatesOf(created.sessionId, "config_option_update").at(-1);
    return u && values(modelOption(u.configOptions)).includes("second/listed-a") ? u : null;
  }, { label: "config_option_update with the new provider's listed models", timeout: 8000 });
  assert.deepEqual(values(modelOption(update.configOptions)), ["fake/test-model", "fake/added-model", "second/listed-a"],
    "after a reload the picker shows the changed models: and the new provider's fetched list");
  h.assertSchemaClean();
});

scenario("thought level: an OpenAI model offers a thought_level select; the picked level is the next request's reasoning_effort", async (ctx) => {
  const { fake, ws, h } = await ctx.setup({ script: [{ text: "one" }, { text: "two" }, { text: "three" }] });
  const { sessionId, configOptions } = await h.newSession(ws);
  const level = configOptions.find((o) => o.id === "thought_level");
  assert.ok(level, `an OpenAI model offers a thought_level option: ${JSON.stringify(configOptions)}`);
  assert.equal(level.category, "thought_level");
  assert.equal(level.currentValue, "default");
  assert.deepEqual(values(level), ["default", "low", "medium", "high"]);

  await h.prompt(sessionId, "first");
  assert.equal("reasoning_effort" in fake.requests.at(-1).body, false, "nothing picked: no reasoning_effort is sent");
  const reply = await h.request("session/set_config_option", { sessionId, configId: "thought_level", value: "high" });
  assert.equal(reply.configOptions.find((o) => o.id === "thought_level").currentValue, "high");
  await h.prompt(sessionId, "second");
  assert.equal(fake.requests.at(-1).body.reasoning_effort, "high", "the picked thought level is the next request's reasoning_effort");
  const err = await expectRpcError(h.request("session/set_config_option", { sessionId, configId: "thought_level", value: "max" }));
  assert.equal(err.code, -32602, "an unknown thought level is invalid params");
  assert.match(err.message, /default, low, medium, high/, "the error names the valid levels");
  await h.request("session/set_config_option", { sessionId, configId: "thought_level", value: "default" });
  await h.prompt(sessionId, "third");
  assert.equal("reasoning_effort" in fake.requests.at(-1).body, false, "back to default: reasoning_effort is not sent");
  h.assertSchemaClean();
});

scenario("thought level: not offered for an Anthropic model", async (ctx) => {
  const { ws, h } = await ctx.setup({ provider: "anthropic" });
  const { configOptions } = await h.newSession(ws);
  assert.equal(configOptions.find((o) => o.id === "thought_level"), undefined, "reasoning_effort is OpenAI's");
  h.assertSchemaClean();
});
