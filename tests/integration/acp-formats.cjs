// The ACP schema's formats for the harness's validator (tests/integration/harness.mjs): a module
// of its own, so that the validators ajv generates once can require them (ajv's standalone code).
const { fullFormats } = require("ajv-formats/dist/formats");

const int = (lo, hi) => ({ type: "number", validate: (n) => Number.isInteger(n) && n >= lo && n <= hi });
module.exports = {
  uri: fullFormats.uri,
  int32: int(-(2 ** 31), 2 ** 31 - 1),
  uint16: int(0, 65535),
  uint32: int(0, 2 ** 32 - 1),
  int64: int(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  uint64: int(0, Number.MAX_SAFE_INTEGER),
  double: { type: "number", validate: (n) => Number.isFinite(n) },
};
