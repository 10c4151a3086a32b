// A CommonJS consumer.
let out;
try {
  const m = require('@sagaflow/engine');
  const t = require('@sagaflow/engine/testing');
  out = { ok: true, createEngine: typeof m.createEngine, createTestEngine: typeof t.createTestEngine };
} catch (err) {
  out = { ok: false, code: err.code, message: String(err.message).slice(0, 300) };
}
console.log(JSON.stringify(out));
