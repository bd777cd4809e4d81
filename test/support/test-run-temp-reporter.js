// jest reporter: removes the run's temporary directory (see test-run-temp.js) once the run has
// passed; keeps it, and says where, when any test or test file failed and the tests left anything.
const fs = require('node:fs');
const { RUN_TMP } = require('./test-run-temp');

class RunTempReporter {
  onRunComplete(_contexts, results) {
    const dir = process.env[RUN_TMP];
    if (!dir || !fs.existsSync(dir)) return;
    const failed = results.numFailedTests + results.numFailedTestSuites + results.numRuntimeErrorTestSuites;
    // An empty directory has nothing to look at, whatever the run's outcome.
    if ((failed > 0 || results.wasInterrupted) && fs.readdirSync(dir).length > 0) {
      process.stderr.write(`\nThe temporary files of this test run are kept in ${dir}\n`);
      return;
    }
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      process.stderr.write(
        `\nCould not remove the temporary files of this test run in ${dir}: ${err.message}\n`,
      );
    }
  }
}

module.exports = RunTempReporter;
