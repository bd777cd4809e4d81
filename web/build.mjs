// Builds the analyst app into dist/web: one bundled, minified script and one
// stylesheet under assets/ with content hashes in their names (the server lets
// browsers keep those for good), and index.html pointing at them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.join(here, '..', 'dist', 'web');

fs.rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: [path.join(here, 'src', 'main.ts')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});

const emitted = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
const script = emitted.find((f) => f.endsWith('.js'));
const style = emitted.find((f) => f.endsWith('.css'));
if (!script) throw new Error('the web build wrote no script');

const page = fs
  .readFileSync(path.join(here, 'index.html'), 'utf8')
  .replace(
    '<script type="module" src="/src/main.ts"></script>',
    `<script type="module" src="/assets/${script}"></script>`,
  )
  .replace('</head>', style ? `  <link rel="stylesheet" href="/assets/${style}" />\n  </head>` : '</head>');
if (!page.includes(`/assets/${script}`)) throw new Error('web/index.html lost its script tag');
fs.writeFileSync(path.join(out, 'index.html'), page);
