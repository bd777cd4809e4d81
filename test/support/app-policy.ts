/** What the app pages' Content-Security-Policy must hold, whatever else it allows. */
export const REQUIRED_APP_DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
];
