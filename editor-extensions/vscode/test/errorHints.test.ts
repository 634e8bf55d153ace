import { test } from "node:test";
import assert from "node:assert/strict";
import { turnErrorText } from "../src/core/errorHints.js";

const FILE = "/home/u/.config/openvaala/config.yaml";

test("a model the server cannot reach: the error says where its address is set", () => {
  assert.equal(
    turnErrorText("cannot reach the model at http://127.0.0.1:9/v1: connection refused (after 3 attempts)", FILE),
    'cannot reach the model at http://127.0.0.1:9/v1: connection refused (after 3 attempts). Is the model server running? Its address is the provider\'s base_url in /home/u/.config/openvaala/config.yaml (OpenVaala: Open Config Folder). To use another config folder, set OPENVAALA_CONFIG_DIR in the "openvaala.env" setting.',
  );
  assert.equal(
    turnErrorText("cannot reach the model at http://x/v1 (base_url of provider 'p' in /c/config.yaml): timed out", FILE),
    "cannot reach the model at http://x/v1 (base_url of provider 'p' in /c/config.yaml): timed out. Is the model server running? To use another config folder, set OPENVAALA_CONFIG_DIR in the \"openvaala.env\" setting.",
    "a server message that names its config file already gets only the editor's part",
  );
  assert.equal(turnErrorText("model overloaded", FILE), "model overloaded", "other errors are shown as they are");
});
