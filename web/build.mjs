// Builds the analyst app into dist/web: per page (the app, the GraphQL
// explorer) one bundled, minified script and one stylesheet under assets/ with
// content hashes in their names (the server lets browsers keep those for good),
// and the page's HTML pointing at them. The explorer is a bundle of its own so
// the app's pages never load GraphiQL and React.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const target = path.join(here, '..', 'dist', 'web');
// Built beside the served folder and swapped in at the end, so a server (or a test) reading dist/web
// never sees it half written.
const out = `${target}.next-${process.pid}`;
const PAGES = [
  { html: 'index.html', entry: 'main' },
  { html: 'explorer.html', entry: 'explorer' },
];

fs.rmSync(out, { recursive: true, force: true });
/**
 * GraphiQL's stylesheet embeds its Roboto and Fira Code fonts (about 270 kB
 * gzipped, more than the rest of the explorer's styles); the explorer uses the
 * system's fonts instead.
 */
const systemFontsForGraphiQL = {
  name: 'system-fonts-for-graphiql',
  setup(b) {
    b.onLoad({ filter: /graphiql[\\/]dist[\\/]style\.css$/ }, async (args) => {
      const css = await fs.promises.readFile(args.path, 'utf8');
      const contents = css
        .replace(/@font-face\{[^}]*\}/g, '')
        .replace(/font-family:\s*"?Roboto"?(,\s*sans-serif)?/g, 'font-family:system-ui,sans-serif')
        .replace(/font-family:\s*"?Fira Code"?/g, 'font-family:ui-monospace,monospace');
      return { contents, loader: 'css' };
    });
  },
};

const result = await build({
  entryPoints: PAGES.map((p) => path.join(here, 'src', `${p.entry}.ts`)),
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  outdir: path.join(out, 'assets'),
  entryNames: '[name]-[hash]',
  // GraphiQL ships a few fonts and images; kept as files beside the bundle, served from this origin.
  loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.svg': 'file', '.png': 'file' },
  define: { 'process.env.NODE_ENV': '"production"' },
  plugins: [systemFontsForGraphiQL],
  // Licence notices go to a .LEGAL.txt file beside each bundle, linked from it, instead of inside it.
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});

for (const p of PAGES) {
  const entryPoint = path.join(here, 'src', `${p.entry}.ts`);
  const [script, output] =
    Object.entries(result.metafile.outputs).find(
      ([, o]) => o.entryPoint && path.resolve(o.entryPoint) === entryPoint,
    ) ?? [];
  if (!script || !output) throw new Error(`the web build wrote no script for ${p.entry}`);
  const name = path.basename(script);
  const style = output.cssBundle ? path.basename(output.cssBundle) : null;
  const page = fs
    .readFileSync(path.join(here, p.html), 'utf8')
    .replace(
      `<script type="module" src="/src/${p.entry}.ts"></script>`,
      `<script type="module" src="/assets/${name}"></script>`,
    )
    .replace('</head>', style ? `  <link rel="stylesheet" href="/assets/${style}" />\n  </head>` : '</head>');
  if (!page.includes(`/assets/${name}`)) throw new Error(`web/${p.html} lost its script tag`);
  fs.writeFileSync(path.join(out, p.html), page);
}
// The old folder moved aside first, so that dist/web is missing only between two renames, not for as
// long as removing it takes (tests build the app in parallel while other tests' servers read it).
// Another build may put its folder in place between the two; then it is moved aside in turn.
const old = `${target}.old-${process.pid}`;
for (let attempt = 0; ; attempt++) {
  fs.rmSync(old, { recursive: true, force: true });
  try {
    fs.renameSync(target, old);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  try {
    fs.renameSync(out, target);
    break;
  } catch (e) {
    if (attempt >= 5 || (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST')) throw e;
  }
}
fs.rmSync(old, { recursive: true, force: true });
