/** toolcat's TypeScript reader, the main entry: open a catalogue by URL; list → search → expand, with the Python
 * reader's answers. ``toolcat-reader/full`` adds tool_help, tool_list, prompts and dialect definitions;
 * ``toolcat-reader/adapters`` the OpenAI and Vercel AI SDK discovery loop. */
export { Catalog, type OpenOptions } from "./catalog.js";
export { ReaderError, type Action } from "./errors.js";
export type { Dialect } from "./protocol.js";
export type { Json } from "./py.js";
export { Searcher, MIN_CHAR_ONLY_SCORE, MIN_RELATIVE, MIN_RELEVANCE } from "./search.js";
export { ANALYZER_VERSION, analyzeWords, stem } from "./analyzer.js";
export { MAX_ENTRY_BYTES, MAX_FILE_BYTES, MAX_REDIRECTS, type FetchLike } from "./source.js";
export { SUPPORTED_FORMAT_VERSION } from "./store.js";
