// The minified ESM files of the package (<script type="module">; the size budget), one per entry point:
//   dist/min/toolcat-reader.js (main: the core loop), dist/min/toolcat-reader-full.js (every operation),
//   dist/min/toolcat-reader-adapters.js (the OpenAI and Vercel AI SDK discovery loop),
// sharing chunks (dist/min/chunks/; onnxruntime stays outside: the semantic chunk imports it, or the host passes it);
// what only a rare path needs (the sha256 fallback, the suggestions of a failed
// lookup) is a chunk loaded on first use. dist/min/sizes.json lists, for each entry, the files it loads before its
// first call (itself and the chunks it imports statically) and those it may load later: bench/bench_js.py and
// tests/js/test_js_size.py read it. `--outdir DIR` writes them elsewhere.
// With --site-out PATH, also the docs site's search (an IIFE, not minified) at PATH: `npm run site` writes the
// committed templates/site/assets/toolcat-search.js, and tests/js/test_site_bundle.py checks it equals a fresh build.
import { build } from "esbuild";
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const option = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : null);
const outdir = option("--outdir") ?? `${root}dist/min`;
// Members that are no API, renamed in the minified files: TypeScript-private ones, and those of the internal classes
// (Store, HttpSource, Part, Posting). None is a JSON key of the format, the name of a built-in method (get, read,
// parse, decode, find ... are left alone) or a member of an exported class (Catalog, Searcher, ReaderError, Discovery).
const INTERNAL = [
  "attempt bundledNgrams byDocMap concurrent docRef fetchFn interned manifestRef nameCandidates nameLookup nodeShardRef notExpanded",
  "pagedRef pendingPages postings prefetch prefetchErrors readBody scoped shardRef spaceTerms topK withDelta",
  "baseUrl canonicalPath deltaDocFile deltaFirsts deltaShardRef deltaSpaces docPages docShardSize docShards fetchBytes fetchJson fetchMany",
  "maxWeight nodeTools pinned readEntry searcherFactory searcherInstance searcherRequired",
  "held mayHold parts pending posting words modelOptions semanticTier tierLoad tierNow",
].join(" ");
const entries = { "toolcat-reader": "index", "toolcat-reader-full": "full", "toolcat-reader-adapters": "adapters" };
const outputs = {};
for (const [name, src] of Object.entries(entries)) { // one build per entry: no entry waits for a chunk it shares with another
  const { metafile } = await build({
    entryPoints: { [name]: `${root}src/${src}.ts` }, bundle: true, splitting: true, minify: true, format: "esm", target: "es2022",
    outdir, chunkNames: "chunks/[hash]", metafile: true, external: ["onnxruntime-node", "onnxruntime-web"], logLevel: "warning", mangleProps: new RegExp(`^(${INTERNAL.replaceAll(" ", "|")})$`),
  });
  for (const [path, out] of Object.entries(metafile.outputs)) outputs[relative(outdir, path)] = out;
}
const closure = (file, kinds, seen = new Set()) => {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const i of outputs[file].imports) if (kinds.includes(i.kind) && !i.external) closure(relative(outdir, i.path), kinds, seen);
  return seen;
};
const sizes = {};
for (const name of Object.keys(entries)) {
  const eager = closure(`${name}.js`, ["import-statement"]);
  const all = closure(`${name}.js`, ["import-statement", "dynamic-import"]);
  sizes[name] = { eager: [...eager].sort(), lazy: [...all].filter((f) => !eager.has(f)).sort() };
}
writeFileSync(`${outdir}/sizes.json`, JSON.stringify(sizes, null, 2) + "\n");

const site = option("--site-out");
if (site) {
  await build({
    entryPoints: [`${root}src/site.ts`], bundle: true, minify: false, format: "iife", target: "es2020", outfile: site, logLevel: "warning", legalComments: "none",
    // the site's search gives the reader no model: the semantic tier (and onnxruntime) stays out of the file
    plugins: [{ name: "no-semantic-tier", setup: (b) => b.onResolve({ filter: /\/semantic\.js$/ }, (args) => ({ path: args.path, external: true })) }],
    banner: { js: "/* toolcat search in the browser: built from js/src/site.ts and the toolcat reader package (`npm run site` in js/); do not edit. */" },
  });
}
