/** ``repr(str)`` as Python writes it in an f-string's ``!r``. A module of its own: only failures, full.ts and
 * gateway.ts quote, so the main entry loads it with the failures chunk, not before its first call. */
export function pyQuote(text: string): string {
  return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}
