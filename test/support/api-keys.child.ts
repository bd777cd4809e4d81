// One process working on a key file for the multi-process key-store test: prints "ready", waits for
// a line on stdin so that all the processes start at once, then runs its command and prints what it
// did as JSON. `create N`: creates N keys, prints their ids. `revoke ID...`: revokes each, prints the
// ids whose revocation reported success.
import { ApiKeyStore } from '../../src/http/api-keys';

const [dataDir, command, ...args] = process.argv.slice(2);
const store = new ApiKeyStore(dataDir!, []);
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  const done: string[] = [];
  if (command === 'create') {
    for (let i = 0; i < Number(args[0]); i++) done.push(store.create(`p${process.pid}-${i}`).id);
  } else {
    for (const id of args) if (store.revoke(id)) done.push(id);
  }
  process.stdout.write(`${JSON.stringify(done)}\n`);
  process.stdin.destroy();
});
