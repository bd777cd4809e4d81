// jest's globalSetup: one temporary directory for the whole run, in the system's. tempDir
// (test/support/paths.ts) makes every test's directories inside it, and the run's reporter
// (test-run-temp-reporter.js) removes it when the run passes, so that `npm test` leaves nothing
// behind; when anything failed it is kept, and its path printed, for a look at what the tests left.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const RUN_TMP = 'TIERGRAPH_TEST_RUN_TMP';

module.exports = async function makeRunTemp() {
  // The workers jest starts after this inherit the variable.
  if (!process.env[RUN_TMP])
    process.env[RUN_TMP] = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-test-run-'));
};
module.exports.RUN_TMP = RUN_TMP;
