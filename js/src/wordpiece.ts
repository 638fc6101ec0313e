/** BERT's uncased WordPiece tokenizer, the ids ``toolcat.engines.onnx_encoder.WordPieceTokenizer`` gives (and so
 * ``tokenizers`` for MiniLM's ``tokenizer.json``): the ``BertNormalizer`` (drop control characters, a space for any
 * other whitespace, spaces around CJK ideographs, strip accents by NFD and dropping ``Mn``, lowercase), the
 * ``BertPreTokenizer`` (split on whitespace, each punctuation character a word of its own) and ``WordPiece``
 * (greedy longest match, ``##`` continuations, ``[UNK]`` for a word over 100 characters or one no piece splits),
 * then ``[CLS] ... [SEP]`` cut at ``maxLength``. Strings are walked by code point, as Python's are. Part of the
 * semantic chunk (semantic.ts), loaded only by a search over a build with vectors. */

/** Python's ``str.isspace`` (bidirectional WS, B, S, or category Zs): JS's ``\s`` lacks U+001C-U+001F and U+0085. */
const SPACE = /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;
const CONTROL = /^\p{C}$/u;
const MARK = /\p{Mn}/gu;
const PUNCT = /^\p{P}$/u;

function isCjk(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) || (code >= 0x3400 && code <= 0x4dbf) || (code >= 0x20000 && code <= 0x2a6df) ||
    (code >= 0x2a700 && code <= 0x2b73f) || (code >= 0x2b740 && code <= 0x2b81f) || (code >= 0x2b820 && code <= 0x2ceaf) ||
    (code >= 0xf900 && code <= 0xfaff) || (code >= 0x2f800 && code <= 0x2fa1f)
  );
}

/** BERT's punctuation: an ASCII non-alphanumeric printable, or a Unicode ``P*`` character. */
function isPunctuation(char: string): boolean {
  const code = char.codePointAt(0) as number;
  if ((code >= 33 && code <= 47) || (code >= 58 && code <= 64) || (code >= 91 && code <= 96) || (code >= 123 && code <= 126)) return true;
  return PUNCT.test(char);
}

export class WordPiece {
  private readonly pieces = new Map<string, number[]>();
  readonly clsId: number;
  readonly sepId: number;
  readonly unkId: number;

  /** ``vocab``: the tokens in id order; ``maxLength``: the model's limit (ids, ``[CLS]`` and ``[SEP]`` included). */
  constructor(private readonly vocab: Map<string, number>, readonly maxLength: number, readonly lowercase = true) {
    const id = (token: string) => {
      const found = vocab.get(token);
      if (found === undefined) throw new TypeError(`the vocabulary has no ${token}`);
      return found;
    };
    this.clsId = id("[CLS]");
    this.sepId = id("[SEP]");
    this.unkId = id("[UNK]");
  }

  /** A vocabulary file as ``toolcat build --publish-model`` writes it: one token a line, in id order. */
  static fromLines(text: string, maxLength: number, lowercase = true): WordPiece {
    return new WordPiece(new Map(text.split("\n").map((token, i) => [token, i])), maxLength, lowercase);
  }

  normalize(text: string): string {
    let out = "";
    for (const char of text) {
      const code = char.codePointAt(0) as number;
      if (code === 0 || code === 0xfffd) continue;
      if (SPACE.test(char)) out += " ";
      else if (CONTROL.test(char)) continue;
      else if (isCjk(code)) out += ` ${char} `;
      else out += char;
    }
    return this.lowercase ? out.normalize("NFD").replace(MARK, "").toLowerCase() : out;
  }

  /** Normalised words: split on whitespace, each punctuation character on its own. */
  words(text: string): string[] {
    const words: string[] = [];
    for (const chunk of this.normalize(text).split(" ")) {
      let word = "";
      for (const char of chunk) {
        if (isPunctuation(char)) {
          if (word) words.push(word);
          words.push(char);
          word = "";
        } else word += char;
      }
      if (word) words.push(word);
    }
    return words;
  }

  /** WordPiece ids of one word (memoised). */
  wordIds(word: string): number[] {
    const cached = this.pieces.get(word);
    if (cached) return cached;
    const chars = Array.from(word);
    let ids: number[] = [];
    let start = 0;
    while (start < chars.length && chars.length <= 100) {
      let end = chars.length;
      let found: number | undefined;
      while (end > start) {
        const piece = chars.slice(start, end).join("");
        found = this.vocab.get(start === 0 ? piece : "##" + piece);
        if (found !== undefined) break;
        end -= 1;
      }
      if (found === undefined) break;
      ids.push(found);
      start = end;
    }
    if (start < chars.length) ids = [this.unkId];
    if (this.pieces.size < 200_000) this.pieces.set(word, ids);
    return ids;
  }

  /** ``[CLS]`` + WordPiece ids + ``[SEP]``, at most ``maxLength`` ids (the model's own limit by default). */
  encode(text: string, maxLength?: number): number[] {
    const ids = [this.clsId];
    const limit = Math.min(this.maxLength, maxLength || this.maxLength) - 1;
    for (const word of this.words(text)) {
      ids.push(...this.wordIds(word));
      if (ids.length >= limit) {
        ids.length = limit;
        break;
      }
    }
    ids.push(this.sepId);
    return ids;
  }
}
