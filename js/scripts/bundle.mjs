// The two bundles: dist/toolcat-reader.min.js (the package as one minified ESM file, for the size budget and
// <script type="module">) and the docs site's search, templates/site/assets/toolcat-search.js (an IIFE, not
// minified, committed; `npm run check-site` / tests/js say when it differs from a fresh build).
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const site = process.argv.includes("--site-out") ? process.argv[process.argv.indexOf("--site-out") + 1] : `${root}../templates/site/assets/toolcat-search.js`;
await build({ entryPoints: [`${root}src/index.ts`], bundle: true, minify: true, format: "esm", target: "es2022", outfile: `${root}dist/toolcat-reader.min.js`, logLevel: "warning" });
await build({
  entryPoints: [`${root}src/site.ts`], bundle: true, minify: false, format: "iife", target: "es2020", outfile: site, logLevel: "warning", legalComments: "none",
  banner: { js: "/* toolcat search in the browser: built from js/src/site.ts and the toolcat reader package (npm run build in js/); do not edit. */" },
});
