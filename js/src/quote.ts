/** ``repr(str)`` as Python writes it in an f-string's ``!r``. A module of its own: only failures, full.ts and
 * gateway.ts quote, so the main entry loads it with the failures chunk, not before its first call. */

// What ``str.isprintable`` calls unprintable (CPython's unicode_repr escapes it): other (Cc, Cf, Cs, Co, Cn) and
// separators (Zl, Zp, Zs) but the space.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const ESCAPES: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" };

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, "0");
}

export function pyQuote(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote) out += `\\${ch}`;
    else if (ESCAPES[ch]) out += ESCAPES[ch];
    else if (ch === " " || !UNPRINTABLE.test(ch)) out += ch;
    else if (code <= 0xff) out += `\\x${hex(code, 2)}`;
    else if (code <= 0xffff) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return out + quote;
}
