import pino from 'pino';
import type { Logger } from 'pino';

export type { Logger };

/**
 * The one logger. Modules take a child (`logger.child({ module })`). API keys
 * and secrets never reach the output: the header and known fields are redacted.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'tiergraph' },
    redact: {
      paths: [
        'req.headers["x-service-key"]',
        'req.headers.authorization',
        '*.apiKey',
        '*.secret',
        '*.password',
      ],
      censor: '[redacted]',
    },
  });
}
