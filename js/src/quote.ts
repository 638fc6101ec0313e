import { shown } from "./py.js";

/** ``repr(str)`` as Python writes it in an f-string's ``!r``: ``shown`` (``py.ts``'s ``reprStr``) without its cut. */
export function pyQuote(text: string): string {
  return shown(text, 1 << 30);
}
