// A small RFC 6455 WebSocket client for the tests, shaped like the browser's WebSocket as far as
// the ACP SDK's createWebSocketStream uses it (addEventListener, send, close, readyState), with
// `ws`'s third constructor argument ({ headers }) so the SDK can send Authorization. Node 20's
// own WebSocket needs a flag `node --test` does not pass on, and the repository has no `ws`.
// A refused upgrade ends in an "error" event whose error carries `status` (e.g. 401).
import crypto from "node:crypto";
import http from "node:http";
import https from "node:https";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

export class MiniWebSocket {
  constructor(url, protocols, { headers = {}, tls = {} } = {}) {
    this.readyState = 0;
    this.listeners = new Map();
    this.buffer = Buffer.alloc(0);
    this.fragments = [];
    const u = new URL(url);
    const key = crypto.randomBytes(16).toString("base64");
    const mod = u.protocol === "wss:" ? https : http;
    const offered = protocols === undefined ? [] : [].concat(protocols);
    const protocolHeader = offered.length ? { "Sec-WebSocket-Protocol": offered.join(", ") } : {};
    this.protocol = "";
    const req = mod.request({
      host: u.hostname, port: u.port, path: u.pathname + u.search, ...tls,
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13", ...protocolHeader, ...headers },
    });
    req.on("upgrade", (res, socket, head) => {
      const expected = crypto.createHash("sha1").update(key + GUID).digest("base64");
      if (res.headers["sec-websocket-accept"] !== expected) {
        socket.destroy();
        return this.fail(new Error("bad Sec-WebSocket-Accept"));
      }
      // As a browser: offered protocols need one of them answered.
      const chosen = res.headers["sec-websocket-protocol"] ?? "";
      if (offered.length && !offered.includes(chosen)) {
        socket.destroy();
        return this.fail(new Error(`the server chose no offered subprotocol (got '${chosen}')`));
      }
      this.protocol = chosen;
      this.socket = socket;
      this.readyState = 1;
      socket.on("data", (d) => this.receive(d));
      socket.on("close", () => this.closed(1006));
      socket.on("error", () => {});
      this.emit("open", {});
      if (head.length) this.receive(head);
    });
    req.on("response", (res) => {
      const err = new Error(`Unexpected server response: ${res.statusCode}`);
      err.status = res.statusCode;
      res.resume();
      this.fail(err);
    });
    req.on("error", (e) => this.fail(e));
    req.end();
  }
  addEventListener(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(fn);
  }
  removeEventListener(type, fn) {
    this.listeners.get(type)?.delete(fn);
  }
  emit(type, event) {
    for (const fn of [...(this.listeners.get(type) ?? [])]) fn(event);
  }
  fail(error) {
    if (this.readyState === 3) return;
    this.emit("error", error);
    this.closed(1006);
  }
  closed(code) {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.socket?.destroy();
    this.emit("close", { code });
  }
  send(text) {
    this.sendFrame(1, Buffer.from(text, "utf8"));
  }
  close() {
    if (this.readyState !== 1) return this.closed(1000);
    this.readyState = 2;
    this.sendFrame(8, Buffer.from([0x03, 0xe8]));
    this.socket.end();
  }
  sendFrame(opcode, payload) {
    if (!this.socket || this.socket.destroyed) return;
    const mask = crypto.randomBytes(4);
    const n = payload.length;
    const head = n < 126 ? Buffer.from([0x80 | opcode, 0x80 | n])
      : n < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, n >> 8, n & 255])
      : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), (() => { const b = Buffer.alloc(8); b.writeBigUInt64BE(BigInt(n)); return b; })()]);
    const body = Buffer.alloc(n);
    for (let i = 0; i < n; i++) body[i] = payload[i] ^ mask[i & 3];
    this.socket.write(Buffer.concat([head, mask, body]));
  }
  receive(data) {
    this.buffer = Buffer.concat([this.buffer, data]);
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) return;
      let len = b[1] & 0x7f;
      let off = 2;
      if (len === 126) { if (b.length < 4) return; len = b.readUInt16BE(2); off = 4; }
      else if (len === 127) { if (b.length < 10) return; len = Number(b.readBigUInt64BE(2)); off = 10; }
      if (b[1] & 0x80) off += 4; // a server must not mask; tolerated
      if (b.length < off + len) return;
      const fin = (b[0] & 0x80) !== 0;
      const opcode = b[0] & 0x0f;
      const payload = b.subarray(off, off + len);
      this.buffer = b.subarray(off + len);
      this.frame(fin, opcode, Buffer.from(payload));
    }
  }
  frame(fin, opcode, payload) {
    if (opcode === 9) return this.sendFrame(10, payload);
    if (opcode === 10) return;
    if (opcode === 8) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      if (this.readyState === 1) this.sendFrame(8, payload.subarray(0, 2));
      return this.closed(code);
    }
    if (opcode === 1 || opcode === 2) this.fragments = [{ opcode, parts: [] }];
    const message = this.fragments[0];
    if (!message) return;
    message.parts.push(payload);
    if (!fin) return;
    this.fragments = [];
    const all = Buffer.concat(message.parts);
    this.emit("message", { data: message.opcode === 1 ? all.toString("utf8") : all });
  }
}
