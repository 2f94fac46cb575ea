/**
 * Streaming search for a custom URL's `requiredText` in a response body
 * (pure, no I/O): feed the body chunk by chunk (`push`, true once found),
 * then `end()`. Any split of the same bytes gives the same answer, and the
 * answer is the whole-body one the probe has always used:
 *
 * - case-sensitive: the UTF-8 bytes of the text occur in the body
 *   (`body.indexOf(text, 0, 'utf8') !== -1`); a rolling window keeps the
 *   last (len - 1) bytes across chunks;
 * - case-insensitive: `body.toString('utf8').toLowerCase()` includes
 *   `text.toLowerCase()`. The body is decoded as it streams (TextDecoder,
 *   BOM kept, invalid bytes -> U+FFFD, like Buffer#toString) and lowered a
 *   piece at a time with the same toLowerCase. Lowering is per character
 *   except for one rule, Final_Sigma (capital sigma is 'ς' at the end of a
 *   word, else 'σ'), which looks at the text around it: the lowered pieces
 *   carry that context (one bit for the text before; a capital sigma
 *   followed only by case-ignorable characters is held back until the next
 *   character settles it; a run longer than `HOLD_MAX` is decided both ways
 *   and the answer kept for when it is settled). The window keeps the last
 *   (len - 1) lowered units.
 *
 * Memory: O(len(text)) between chunks, plus the chunk being pushed (its
 * decoded copy) and a held sigma run of at most ~4 x len + 64 characters.
 * An empty text is found before any byte.
 */

const SIGMA = 'Σ';
const FINAL = 'ς';
const IGNORABLE_RUN = /^\p{Case_Ignorable}*$/u;
const NOT_IGNORABLE = /\P{Case_Ignorable}/u;

export interface TextMatcher {
  /** Feeds body bytes; true once the text was found (later pushes are ignored). */
  push(chunk: Uint8Array): boolean;
  /** The body ended: the final answer. */
  end(): boolean;
  readonly found: boolean;
}

export function textMatcher(text: string, caseSensitive: boolean): TextMatcher {
  return caseSensitive ? new BytesMatcher(text) : new LowerCaseMatcher(text);
}

class BytesMatcher implements TextMatcher {
  found: boolean;
  private readonly needle: Buffer;
  private carry: Buffer = Buffer.alloc(0);

  constructor(text: string) {
    this.needle = Buffer.from(text, 'utf8');
    this.found = this.needle.length === 0;
  }

  push(chunk: Uint8Array): boolean {
    if (this.found || chunk.length === 0) return this.found;
    const c = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    const buf = this.carry.length === 0 ? c : Buffer.concat([this.carry, c]);
    if (buf.indexOf(this.needle) !== -1) {
      this.found = true;
      this.carry = Buffer.alloc(0);
      return true;
    }
    const keep = Math.min(this.needle.length - 1, buf.length);
    this.carry = Buffer.from(buf.subarray(buf.length - keep)); // a copy: the chunk is not retained
    return false;
  }

  end(): boolean {
    return this.found;
  }
}

class LowerCaseMatcher implements TextMatcher {
  found: boolean;
  private readonly needle: string;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Decoded text not lowered yet: empty, or a capital sigma followed by case-ignorable characters only. */
  private raw = '';
  /** Final_Sigma's "preceded by a cased letter (and case-ignorables)" at the end of the lowered text. */
  private afterCased = false;
  /** The last (len - 1) units of the lowered text. */
  private low = '';
  /** A long sigma run decided both ways: found if the next settling character is cased / is not. */
  private unsettled: { ifCased: boolean; ifNot: boolean } | null = null;
  private readonly holdMax: number;

  constructor(text: string) {
    this.needle = text.toLowerCase();
    this.found = this.needle.length === 0;
    this.holdMax = 4 * this.needle.length + 64;
  }

  push(chunk: Uint8Array): boolean {
    if (this.found || chunk.length === 0) return this.found;
    this.feed(this.decoder.decode(chunk, { stream: true }));
    return this.found;
  }

  end(): boolean {
    if (this.found) return true;
    this.feed(this.decoder.decode());
    if (this.found) return true;
    if (this.unsettled !== null) {
      this.found = this.unsettled.ifNot; // nothing follows: not followed by a cased letter
      this.unsettled = null;
    }
    if (!this.found && this.raw !== '') this.search(this.lowered(this.raw, '', true));
    return this.found;
  }

  private feed(piece: string): void {
    if (piece === '' || this.found) return;
    if (this.unsettled !== null) {
      const m = NOT_IGNORABLE.exec(piece);
      if (m !== null) {
        this.found = (`a${SIGMA}${m[0]}`.toLowerCase()[1] === FINAL ? this.unsettled.ifNot : this.unsettled.ifCased) || this.found;
        this.unsettled = null;
        if (this.found) return;
      }
    }
    const raw = this.raw + piece;
    const k = raw.lastIndexOf(SIGMA);
    if (k === -1 || !IGNORABLE_RUN.test(raw.slice(k + 1))) {
      this.raw = '';
      this.commit(raw, '');
      return;
    }
    // raw[k] is a capital sigma with only case-ignorables after it: its lowering waits for what follows
    if (k > 0) this.commit(raw.slice(0, k), SIGMA);
    this.raw = raw.slice(k);
    if (!this.found && this.raw.length > this.holdMax) this.decideBothWays();
  }

  /** Lowers `seg` (its Final_Sigma context: the bit before, `next` after) and searches the window. */
  private commit(seg: string, next: string): void {
    this.search(this.lowered(seg, next));
  }

  /**
   * `seg` lowered in context: the bit before it, and after it `next` (a
   * held sigma, or 'A' for "a cased letter"), or nothing at all ('' : the
   * body ended, or the text so far is settled). With a sigma or '' after,
   * updates the bit for the text that follows `seg`.
   */
  private lowered(seg: string, next: string, ended = false): string {
    const prefix = this.afterCased ? 'a' : '';
    if (ended) {
      const all = (prefix + seg).toLowerCase();
      this.afterCased = (prefix + seg + SIGMA).toLowerCase().endsWith(FINAL);
      return all.slice(prefix.length);
    }
    // a trailing sigma followed by nothing lowers to 'ς' exactly when the text before it ends "after a cased letter";
    // with nothing held, no sigma of `seg` is followed by case-ignorables only, so the probe sigma changes none of them
    const tail = next === '' ? SIGMA : next;
    const all = (prefix + seg + tail).toLowerCase();
    if (tail === SIGMA) this.afterCased = all.endsWith(FINAL);
    return all.slice(prefix.length, all.length - 1);
  }

  private search(lowered: string): void {
    const window = this.low + lowered;
    if (window.includes(this.needle)) {
      this.found = true;
      this.low = '';
      return;
    }
    const keep = this.needle.length - 1;
    this.low = keep === 0 ? '' : window.slice(Math.max(0, window.length - keep));
  }

  /** The held run is too long to keep: search it both ways, remember the answers, drop it. */
  private decideBothWays(): void {
    const cased = this.lowered(this.raw, 'A'); // the sigma followed by a cased letter
    const atEnd = this.lowered(this.raw, '', true); // followed by nothing cased (sets the context bit)
    const ifCased = (this.low + cased).includes(this.needle);
    const ifNot = (this.low + atEnd).includes(this.needle);
    this.raw = '';
    if (ifCased && ifNot) {
      this.found = true;
      return;
    }
    // the last (len - 1) units are past the sigma (the run is longer than that): the same either way
    const window = this.low + atEnd;
    const keep = this.needle.length - 1;
    this.low = keep === 0 ? '' : window.slice(Math.max(0, window.length - keep));
    if (ifCased !== ifNot) this.unsettled = { ifCased, ifNot };
  }
}
