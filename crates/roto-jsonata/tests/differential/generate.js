// Regenerates expected.json from cases.json and inputs.json by running the reference
// JSONata implementation (npm package `jsonata`), so that `cargo test` compares against
// committed expectations and never needs npm.
//
//   npm install --prefix /tmp/jsonata-ref jsonata
//   NODE_PATH=/tmp/jsonata-ref/node_modules node generate.js
//
// Each case records the reference's result, `undefined`, or its error code. Results that
// JSON cannot carry are marked: functions ("function") and non-finite numbers ("nonfinite").
// A 3 s timeout (D1012) ends the runaway cases.
const fs = require('fs');
const path = require('path');
const jsonata = require('jsonata');

const dir = __dirname;
const inputs = JSON.parse(fs.readFileSync(path.join(dir, 'inputs.json'), 'utf8'));
const cases = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'));

function isFunction(v) {
  return typeof v === 'function' || (v && (v._jsonata_lambda || v._jsonata_function));
}

function hasNonFinite(v) {
  if (typeof v === 'number') return !isFinite(v);
  if (Array.isArray(v)) return v.some(hasNonFinite);
  if (v && typeof v === 'object' && !isFunction(v)) return Object.values(v).some(hasNonFinite);
  return false;
}

(async () => {
  const out = [];
  for (const c of cases) {
    const record = { input: c.input, expr: c.expr };
    try {
      const result = await jsonata(c.expr, { timeout: 3000 }).evaluate(inputs[c.input]);
      if (typeof result === 'undefined') record.undefined = true;
      else if (isFunction(result)) record.special = 'function';
      else if (hasNonFinite(result)) record.special = 'nonfinite';
      else record.result = JSON.parse(JSON.stringify(result));
    } catch (e) {
      record.error = e.code || ('JS:' + (e.name || 'Error'));
    }
    out.push(record);
  }
  fs.writeFileSync(path.join(dir, 'expected.json'), JSON.stringify(out, null, 1) + '\n');
  console.log(`${out.length} cases written`);
})();
