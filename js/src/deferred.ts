/** What the main entry loads on first use, as one chunk of the minified build: the text of failures and failed
 * lookups (failures.ts) and the dialects' rendering of next_actions and hints (protocol.ts). A healthy catalogue
 * answering well-formed calls that need no next step never loads it. */
export * from "./failures.js";
export { render } from "./protocol.js";
