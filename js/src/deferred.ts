/** What the main entry loads on first use, as one chunk of the minified build: the text of failures and failed
 * lookups (failures.ts), the dialects' rendering of next_actions and hints (protocol.ts) and the walks of the whole
 * node tree (namespaces.ts: list's tag and capability filters). A healthy catalogue answering well-formed calls
 * that need no next step never loads it. */
export * from "./failures.js";
export { render } from "./protocol.js";
export { subtreePointers } from "./namespaces.js";
// Not used by the modules that import this one: it makes esbuild keep every module of the main entry in one chunk
// (one gzip stream, 0.8 KB smaller) rather than split them by whether this chunk reaches them too.
export { Catalog } from "./catalog.js";
