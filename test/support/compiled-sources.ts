import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Worker threads run compiled JavaScript, which tests from sources do not have: `src` transpiled into
 * `dir` (under node_modules, so that packages resolve), in its own layout. Returns the module at
 * `module` (a path under src without extension, e.g. 'search/search-threads') loaded from there.
 */
export function compiledModule<M>(dir: string, module: string): M {
  if (!compiled.has(dir)) compile(dir);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loads a module compiled by compile()
  return require(path.join(dir, `${module}.js`)) as M;
}

/** Directories compiled into by this process. */
const compiled = new Set<string>();

function compile(dir: string): void {
  const src = path.join(__dirname, '..', '..', 'src');
  for (const f of fs.readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts')) continue;
    const out = ts.transpileModule(fs.readFileSync(path.join(src, f), 'utf8'), {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    }).outputText;
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    fs.writeFileSync(path.join(dir, f.replace(/\.ts$/, '.js')), out);
  }
  compiled.add(dir);
}

/** A directory for {@link compiledModule} private to this test process (remove it after the tests). */
export function compiledDir(name: string): string {
  return path.join(__dirname, '..', '..', 'node_modules', '.cache', `tiergraph-${name}-${process.pid}`);
}
