// Lets a child `node` process load the TypeScript sources directly (tests only).
//
// Many tests start such children, and each would otherwise transpile the same two hundred files
// again (seconds per child on a loaded machine). The output is kept in node_modules/.cache, named by
// a hash of the compiler version, the options and the source text, so it can never be stale; it is
// written to a private name and renamed, so children starting together never read half a file.
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const options = { module: 'CommonJS', target: 'ES2022', esModuleInterop: true };
const cacheDir = path.join(__dirname, '..', '..', 'node_modules', '.cache', 'tiergraph-test-ts');
const version = require('typescript/package.json').version;

let ts; // loaded only when a file is not in the cache: loading the compiler itself takes a while
function transpile(source, filename) {
  ts ??= require('typescript');
  return ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: options.esModuleInterop,
    },
    fileName: filename,
  }).outputText;
}

function cached(source, filename) {
  const key = crypto
    .createHash('sha256')
    .update(`${version}\0${JSON.stringify(options)}\0${filename}\0${source}`)
    .digest('hex');
  const file = path.join(cacheDir, `${key}.js`);
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    // not there yet
  }
  const output = transpile(source, filename);
  try {
    fs.mkdirSync(cacheDir, { recursive: true });
    const own = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(own, output);
    fs.renameSync(own, file);
  } catch {
    // a read-only tree: transpiled each time, as before
  }
  return output;
}

require.extensions['.ts'] = (module, filename) => {
  module._compile(cached(fs.readFileSync(filename, 'utf8'), filename), filename);
};
