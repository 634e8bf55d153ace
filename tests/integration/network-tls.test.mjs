// `openvaala acp --listen ... --tls-cert PEM --tls-key PEM`: https and wss with a self-signed
// certificate made here, through the ACP SDK's own client transports trusting it; a plain-text
// client on the TLS port fails; bad TLS files stop the server at start-up with a clear message.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { agentBinary, agentBinaryExists, makeConfigHome, makeWorkspace } from "./harness.mjs";
import {
  cleanupNetwork, connect, fetchTrusting, runAcp, selfSignedCertificate, setup, startServer, upgradeStatus, writeToken,
} from "./network-harness.mjs";

const skip = agentBinaryExists() ? false : `agent binary ${agentBinary()} not built`;
after(cleanupNetwork);

async function tlsServer(script) {
  const { home, ws } = await setup(script);
  const token = "tls-token";
  const tls = selfSignedCertificate(ws);
  const server = await startServer({ env: home.env, cwd: ws, args: ["--token-file", writeToken(ws, token), "--tls-cert", tls.cert, "--tls-key", tls.key] });
  return { server, token, tls, ws };
}

test("TLS: wss:// and https:// serve a streamed prompt to the SDK's WebSocket and HTTP clients trusting the certificate", { skip, timeout: 60000 }, async () => {
  const { server, token, tls, ws } = await tlsServer([
    { chunks: ["over ", "wss"], chunkDelayMs: 10 },
    { chunks: ["over ", "https"], chunkDelayMs: 10 },
  ]);
  assert.match(server.url, /^wss:\/\/127\.0\.0\.1:\d+\/acp$/, "the printed address says wss://");
  assert.match(server.stderr, /https:\/\/127\.0\.0\.1:\d+\/acp/, "the printed address says https://");
  for (const [url, expected] of [[server.url, "over wss"], [server.httpUrl, "over https"]]) {
    const c = connect(url, { token, ca: tls.pem });
    await c.initialize();
    const { sessionId } = await c.newSession(ws);
    assert.equal((await c.prompt(sessionId, "hi")).stopReason, "end_turn", url);
    assert.equal(c.textOf(sessionId), expected, url);
    c.assertSchemaClean();
  }
  // A client that does not trust the certificate does not get in.
  await assert.rejects(fetch(server.httpUrl, { method: "POST" }), "Node's fetch without the CA must refuse the self-signed certificate");
  assert.equal(await upgradeStatus(server.url, { Authorization: `Bearer ${token}` }, { ca: tls.pem }), 101, "wss upgrade with the CA");
});

test("TLS: a plain-http request to the TLS port fails, and the server goes on serving https", { skip, timeout: 60000 }, async () => {
  const { server, token, tls } = await tlsServer([]);
  const plain = `http://127.0.0.1:${server.port}/acp`;
  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } };
  const post = (f, url) => f(url, {
    method: "POST", headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: JSON.stringify(init),
  });
  await assert.rejects(post(fetch, plain), "plain HTTP on the TLS port must not be answered");
  await assert.rejects(upgradeStatus(plain.replace(/^http/, "ws"), { Authorization: `Bearer ${token}` }), "plain ws:// upgrade");
  const r = await post(fetchTrusting(tls.pem), server.httpUrl);
  assert.equal(r.status, 200, "https still served");
  assert.ok(r.headers.get("acp-connection-id"));
});

test("TLS start-up refusals: a missing, unreadable or non-PEM file, a key that is not the certificate's, one flag alone", { skip, timeout: 60000 }, async () => {
  const home = makeConfigHome({ provider: null });
  const dir = makeWorkspace({ "garbage.pem": "not a certificate\n" });
  const a = selfSignedCertificate(dir, "a");
  const b = selfSignedCertificate(dir, "b");
  const listen = ["--listen", "127.0.0.1:0"];
  const cases = [
    [["--tls-cert", path.join(dir, "missing.crt"), "--tls-key", a.key], /--tls-cert .*missing\.crt: cannot read it/],
    [["--tls-cert", a.cert, "--tls-key", path.join(dir, "missing.key")], /--tls-key .*missing\.key: cannot read it/],
    [["--tls-cert", dir, "--tls-key", a.key], /--tls-cert .*: cannot read it/],
    [["--tls-cert", path.join(dir, "garbage.pem"), "--tls-key", a.key], /--tls-cert .*garbage\.pem: not a PEM certificate/],
    [["--tls-cert", a.cert, "--tls-key", path.join(dir, "garbage.pem")], /--tls-key .*garbage\.pem: not a PEM private key/],
    [["--tls-cert", a.cert, "--tls-key", b.key], /--tls-key .*b\.key.*(does not match|not the private key)/],
    [["--tls-cert", a.cert], /--tls-cert and --tls-key go together/],
  ];
  for (const [args, message] of cases) {
    const r = await runAcp(home, [...listen, ...args]);
    assert.equal(r.code, 2, `${args.join(" ")} must stop the server; stderr: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(" "));
  }
  assert.ok(fs.existsSync(a.cert));
});
