// dist/toolcat-reader.min.js: the package as one minified ESM file (the size budget; <script type="module">).
// With --site-out PATH, also the docs site's search (an IIFE, not minified) at PATH: `npm run site` writes the
// committed templates/site/assets/toolcat-search.js, and tests/js/test_site_bundle.py checks it equals a fresh build.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const at = process.argv.indexOf("--site-out");
await build({ entryPoints: [`${root}src/index.ts`], bundle: true, minify: true, format: "esm", target: "es2022", outfile: `${root}dist/toolcat-reader.min.js`, logLevel: "warning" });
if (at > 0) {
  await build({
    entryPoints: [`${root}src/site.ts`], bundle: true, minify: false, format: "iife", target: "es2020", outfile: process.argv[at + 1], logLevel: "warning", legalComments: "none",
    banner: { js: "/* toolcat search in the browser: built from js/src/site.ts and the toolcat reader package (`npm run site` in js/); do not edit. */" },
  });
}
