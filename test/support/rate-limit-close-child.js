// A process that opens the shared rate-limit store, counts a hit and closes the store, then prints
// how long it lived after the close began (test/integration/shared-rate-limit.test.ts). Started with
// `-r test/support/ts-register.js` from the repository. Argument: a Redis URL, or `dropped` (a server
// that accepts and at once drops each connection, gone by the close) or `refused` (nothing listens).
const net = require('node:net');
const path = require('node:path');
const { redisRateLimitStore } = require(path.join(process.cwd(), 'src/http/rate-limit-store.ts'));

const target = process.argv[2];

function run(url, beforeClose) {
  const limits = redisRateLimitStore(url);
  // As express-rate-limit starts a store, which logs a failure and goes on.
  Promise.resolve(limits.store.init({ windowMs: 60_000 })).catch(() => undefined);
  const counted = limits.store.increment('close-test').then(
    (info) => info.totalHits,
    () => null,
  );
  // Long enough for a few attempts to reconnect where Redis is out of reach.
  setTimeout(async () => {
    const hits = await counted;
    beforeClose();
    const closing = Date.now();
    process.on('exit', () => console.log(JSON.stringify({ hits, exitMs: Date.now() - closing })));
    await limits.close();
  }, 300);
}

if (target === 'dropped' || target === 'refused') {
  const server = net.createServer((socket) => socket.destroy());
  server.listen(0, '127.0.0.1', () => {
    const url = `redis://127.0.0.1:${server.address().port}/0`;
    if (target === 'refused') server.close(() => run(url, () => undefined));
    else run(url, () => server.close());
  });
} else {
  run(target, () => undefined);
}
