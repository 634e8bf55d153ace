// The provider connection over HTTPS: real OpenSSL in the agent against a TLS fake model whose
// certificate comes from a throw-away CA made here with the openssl CLI. The agent trusts what
// OpenSSL's default verify paths trust, so SSL_CERT_FILE selects the CA for each case.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { scenario, expectRpcError } from "./harness.mjs";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ov-tls-"));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const openssl = (...args) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
const file = (name) => path.join(dir, name);

function makeCa(name) {
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${name}`,
    "-keyout", file(`${name}.key`), "-out", file(`${name}.pem`));
}
makeCa("test-ca");
makeCa("other-ca");
// The server certificate names only "localhost", so https://127.0.0.1 fails the host name check.
fs.writeFileSync(file("san.ext"), "subjectAltName=DNS:localhost\n");
openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", file("server.key"), "-out", file("server.csr"));
openssl("x509", "-req", "-in", file("server.csr"), "-CA", file("test-ca.pem"), "-CAkey", file("test-ca.key"),
  "-CAcreateserial", "-days", "2", "-extfile", file("san.ext"), "-out", file("server.pem"));
const tls = { key: fs.readFileSync(file("server.key")), cert: fs.readFileSync(file("server.pem")) };

async function tlsSetup(ctx, { host, caFile, provider = "openai", script }) {
  const fake = await ctx.fakeModel(script, { tls });
  const ws = ctx.workspace({});
  const modelUrl = `https://${host}:${fake.port}`;
  const home = ctx.configHome({ provider, modelUrl, maxRetries: 0 });
  const h = await ctx.agent({ env: { ...home.env, SSL_CERT_FILE: caFile, SSL_CERT_DIR: dir }, cwd: ws });
  await h.initialize();
  const { sessionId } = await h.newSession(ws);
  return { fake, h, sessionId };
}

for (const provider of ["openai", "anthropic"]) {
  scenario(`HTTPS provider (${provider}): a streamed turn through a verified TLS connection`, async (ctx) => {
    const { fake, h, sessionId } = await tlsSetup(ctx, {
      host: "localhost", caFile: file("test-ca.pem"), provider, script: [{ chunks: ["over ", "TLS"] }],
    });
    const res = await h.prompt(sessionId, "hello");
    assert.equal(res.stopReason, "end_turn");
    assert.equal(h.textOf(sessionId), "over TLS");
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0].headers.host, `localhost:${fake.port}`);
    h.assertSchemaClean();
  });
}

scenario("HTTPS provider: a certificate from an untrusted CA fails the prompt clearly, nothing sent", async (ctx) => {
  const { fake, h, sessionId } = await tlsSetup(ctx, {
    host: "localhost", caFile: file("other-ca.pem"), script: [{ text: "must not be reached" }],
  });
  const err = await expectRpcError(h.prompt(sessionId, "hello"));
  assert.match(err.message, /certificate verify failed|unable to get local issuer certificate/i);
  assert.match(err.message, /localhost/);
  assert.equal(fake.requests.length, 0, "no request body may reach an unverified server");
  assert.equal((await h.initialize()).protocolVersion, 1, "the server stays up");
  h.assertSchemaClean();
});

scenario("HTTPS provider: a certificate for another host name fails the prompt", async (ctx) => {
  const { fake, h, sessionId } = await tlsSetup(ctx, {
    host: "127.0.0.1", caFile: file("test-ca.pem"), script: [{ text: "must not be reached" }],
  });
  const err = await expectRpcError(h.prompt(sessionId, "hello"));
  assert.match(err.message, /certificate verify failed|hostname mismatch/i);
  assert.equal(fake.requests.length, 0);
  h.assertSchemaClean();
});
