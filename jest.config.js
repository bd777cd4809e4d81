/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // Agenda and its backends ship only as ES modules; jest's module system loads
    // CommonJS, so their files are transpiled on the way in (Node itself requires them natively).
    '/node_modules/(agenda|@agendajs)/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', isolatedModules: true } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(agenda|@agendajs)/)'],
  testTimeout: 60000,
  // One temporary directory a run, for every test's (test/support/test-run-temp.js): removed when
  // the run passes, kept and named when it fails.
  globalSetup: '<rootDir>/test/support/test-run-temp.js',
  reporters: ['default', '<rootDir>/test/support/test-run-temp-reporter.js'],
  // Kuzu runs queries on native threads; one worker per core keeps the machine responsive.
  maxWorkers: 2,
};
