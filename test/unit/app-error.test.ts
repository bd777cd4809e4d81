import { AppError } from '../../src/domain/errors';

describe('AppError', () => {
  it('carries no stack frames for a client mistake', () => {
    const e = new AppError('NOT_FOUND', 'No company with id x.');
    expect(e.stack).not.toMatch(/\n\s+at /);
    expect(e.message).toBe('No company with id x.');
    expect(e.status).toBe(404);
  });

  it('keeps the stack of a server-side failure, and leaves the global limit as it was', () => {
    const before = Error.stackTraceLimit;
    const e = new AppError('INTERNAL', 'broken');
    expect(e.stack).toMatch(/\n\s+at /);
    new AppError('BAD_REQUEST', 'x');
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('plain').stack).toMatch(/\n\s+at /);
  });
});
