import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tempDir } from '../support/paths';

// The run's temporary directory (test/support/test-run-temp.js) and its reporter, with a directory of
// this test's own standing in for the run's.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const makeRunTemp = require('../support/test-run-temp') as (() => Promise<void>) & { RUN_TMP: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const RunTempReporter = require('../support/test-run-temp-reporter') as new () => {
  onRunComplete(contexts: unknown, results: Record<string, unknown>): void;
};

const passed = {
  numFailedTests: 0,
  numFailedTestSuites: 0,
  numRuntimeErrorTestSuites: 0,
  wasInterrupted: false,
};

describe("a test run's temporary directory", () => {
  const saved = process.env[makeRunTemp.RUN_TMP];
  let stand: string;
  beforeEach(() => {
    stand = fs.mkdtempSync(path.join(os.tmpdir(), 'tiergraph-run-temp-test-'));
    process.env[makeRunTemp.RUN_TMP] = stand;
  });
  afterEach(() => {
    process.env[makeRunTemp.RUN_TMP] = saved;
    fs.rmSync(stand, { recursive: true, force: true });
  });

  it('is where tempDir makes every test directory, and the jest run has one', () => {
    // This very run was given one by the global setup.
    expect(saved).toBeDefined();
    expect(fs.existsSync(saved!)).toBe(true);
    const dir = tempDir('run-temp');
    expect(path.dirname(dir)).toBe(stand);
    expect(path.basename(dir)).toMatch(/^tiergraph-run-temp-/);
  });

  it("falls back to the system's directory when the run's is gone", () => {
    process.env[makeRunTemp.RUN_TMP] = path.join(stand, 'gone');
    const dir = tempDir('run-temp');
    try {
      expect(path.dirname(dir)).toBe(os.tmpdir());
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is made once per run by the global setup', async () => {
    delete process.env[makeRunTemp.RUN_TMP];
    await makeRunTemp();
    const made = process.env[makeRunTemp.RUN_TMP]!;
    try {
      expect(path.dirname(made)).toBe(os.tmpdir());
      expect(fs.statSync(made).isDirectory()).toBe(true);
      await makeRunTemp();
      expect(process.env[makeRunTemp.RUN_TMP]).toBe(made);
    } finally {
      fs.rmSync(made, { recursive: true, force: true });
    }
  });

  it('goes, with everything in it, when the run passes', () => {
    fs.writeFileSync(path.join(tempDir('run-temp'), 'left.txt'), 'left by a test');
    new RunTempReporter().onRunComplete([], passed);
    expect(fs.existsSync(stand)).toBe(false);
  });

  it.each([
    ['a test failed', { numFailedTests: 1 }],
    ['a test file failed to run', { numFailedTestSuites: 1 }],
    ['a test file broke', { numRuntimeErrorTestSuites: 1 }],
    ['the run was stopped', { wasInterrupted: true }],
  ])('stays, and is named, when %s', (_what, results) => {
    const left = path.join(tempDir('run-temp'), 'left.txt');
    fs.writeFileSync(left, 'left by a test');
    const said = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      new RunTempReporter().onRunComplete([], { ...passed, ...results });
      expect(said.mock.calls.map((c) => String(c[0])).join('')).toContain(stand);
    } finally {
      said.mockRestore();
    }
    expect(fs.readFileSync(left, 'utf8')).toBe('left by a test');
  });

  it('goes when a run failed but its tests left nothing', () => {
    const said = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      new RunTempReporter().onRunComplete([], { ...passed, numFailedTests: 1 });
      expect(said).not.toHaveBeenCalled();
    } finally {
      said.mockRestore();
    }
    expect(fs.existsSync(stand)).toBe(false);
  });
});
