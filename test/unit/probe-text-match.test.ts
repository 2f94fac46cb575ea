/**
 * Tests for src/probe/codec/text-match.ts: for any body split into any
 * chunks, the streaming answer equals the whole-body one custom URLs have
 * always used (case-sensitive: the UTF-8 bytes occur; case-insensitive:
 * `body.toString('utf8').toLowerCase().includes(text.toLowerCase())`),
 * with invalid UTF-8, a BOM, characters split across chunks, and the one
 * context-dependent lowering (Final_Sigma) across chunk edges and long
 * held runs; and the matcher keeps O(len(text)) between chunks.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { textMatcher } from '../../src/probe/codec/text-match';

function whole(body: Buffer, text: string, caseSensitive: boolean): boolean {
  if (text === '') return true;
  if (caseSensitive) return body.indexOf(text, 0, 'utf8') !== -1;
  return body.toString('utf8').toLowerCase().includes(text.toLowerCase());
}

/** The body cut at `cuts` (positions, any order, duplicates allowed). */
function split(body: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of at) {
    out.push(body.subarray(from, c));
    from = c;
  }
  out.push(body.subarray(from));
  return out;
}

function streamed(chunks: Buffer[], text: string, caseSensitive: boolean): boolean {
  const m = textMatcher(text, caseSensitive);
  for (const c of chunks) m.push(c);
  return m.end();
}

// letters whose lowering is special (Σ's Final_Sigma, İ -> i + dot, Kelvin sign, ẞ), case-ignorables
// (combining marks, U+0345, modifier letters, apostrophes, ':' '.'), multi-byte and astral characters
const ALPHABET = [
  'a', 'A', 'b', 'B', 's', 'S', 'k', 'K', 'i', 'I', ' ', '.', ':', "'", '\u2019', '-', '0',
  'Σ', 'σ', 'ς', 'İ', 'ı', 'ß', 'ẞ', '\u212A', 'Ω', 'ω', '\u0301', '\u0345', 'ʰ', '\u00AD', 'é', 'É', 'Д', 'д', '😀', '𐐀', '𐐨', '\uFEFF',
];
const textArb = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 60 }).map((a) => a.join(''));
/** A body: text from the alphabet, its UTF-8 bytes with random bytes (often invalid UTF-8) spliced in. */
const bodyArb = fc
  .tuple(textArb, fc.array(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 3 })), { maxLength: 3 }))
  .map(([t, junk]) => {
    let b = Buffer.from(t, 'utf8');
    for (const [at, bytes] of junk) {
      const p = at % (b.length + 1);
      b = Buffer.concat([b.subarray(0, p), Buffer.from(bytes), b.subarray(p)]);
    }
    return b;
  });
/** A needle: a slice of the body's text (maybe case-changed) or any text from the alphabet. */
const caseArb = fc.constantFrom('same', 'upper', 'lower');
function needleFrom(body: Buffer, from: number, len: number, how: string): string {
  const t = body.toString('utf8');
  const s = t.slice(from % (t.length + 1), (from % (t.length + 1)) + (len % 12));
  return how === 'upper' ? s.toUpperCase() : how === 'lower' ? s.toLowerCase() : s;
}

describe('textMatcher: streaming equals whole-body', () => {
  for (const caseSensitive of [true, false]) {
    test(`caseSensitive ${caseSensitive}: needles cut from the body, any split`, () => {
      fc.assert(
        fc.property(bodyArb, fc.nat(), fc.nat(), caseArb, fc.array(fc.nat(), { maxLength: 12 }), (body, from, len, how, cuts) => {
          const text = needleFrom(body, from, len, how);
          expect(streamed(split(body, cuts), text, caseSensitive)).toBe(whole(body, text, caseSensitive));
        }),
        { numRuns: 3000 },
      );
    });

    test(`caseSensitive ${caseSensitive}: any needle, byte-by-byte and whole`, () => {
      fc.assert(
        fc.property(bodyArb, textArb, (body, text) => {
          const expected = whole(body, text, caseSensitive);
          expect(streamed([...body].map((b) => Buffer.from([b])), text, caseSensitive)).toBe(expected);
          expect(streamed([body], text, caseSensitive)).toBe(expected);
        }),
        { numRuns: 2000 },
      );
    });
  }

  test('random bytes and random needles', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.string({ maxLength: 4 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 8 }), (bytes, text, cs, cuts) => {
        const body = Buffer.from(bytes);
        expect(streamed(split(body, cuts), text, cs)).toBe(whole(body, text, cs));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('textMatcher: cases by hand', () => {
  test('an empty text is found before any byte; found stays found', () => {
    const m = textMatcher('', false);
    expect(m.found).toBe(true);
    expect(m.end()).toBe(true);
    const n = textMatcher('ab', true);
    expect(n.push(Buffer.from('xxa'))).toBe(false);
    expect(n.push(Buffer.from('bzz'))).toBe(true);
    expect(n.push(Buffer.from('anything'))).toBe(true);
    expect(n.end()).toBe(true);
  });

  test('a character split across chunks; a BOM is part of the body', () => {
    const body = Buffer.from('\uFEFFhello Wörld', 'utf8');
    const cut = body.indexOf(0xc3) + 1; // inside ö
    expect(streamed([body.subarray(0, cut), body.subarray(cut)], 'WÖRLD', false)).toBe(true);
    expect(streamed([body.subarray(0, 2), body.subarray(2)], '\uFEFFhello', false)).toBe(true);
  });

  test('Final_Sigma across a chunk edge: ΟΔΟΣ lowers to οδος only at the end of a word', () => {
    const body = Buffer.from('ΟΔΟΣ ΟΔΟΣΑ', 'utf8');
    for (let cut = 0; cut <= body.length; cut++) {
      const chunks = [body.subarray(0, cut), body.subarray(cut)];
      expect(streamed(chunks, 'οδος ', false)).toBe(true);
      expect(streamed(chunks, 'οδοσα', false)).toBe(true);
      expect(streamed(chunks, 'οδοςα', false)).toBe(false);
      expect(streamed(chunks, 'οδοσ ', false)).toBe(false);
    }
  });

  test('a capital sigma followed by a long run of case-ignorables is settled by what comes after', () => {
    const run = '\u0301'.repeat(500);
    for (const [after, sigma] of [['A', 'σ'], [' ', 'ς'], ['', 'ς']] as const) {
      const body = Buffer.from(`XΣ${run}${after}`, 'utf8');
      const expected = whole(body, `x${sigma}\u0301`, false);
      expect(expected).toBe(true);
      for (const size of [1, 7, 64, 4096]) {
        const chunks = [];
        for (let i = 0; i < body.length; i += size) chunks.push(body.subarray(i, i + size));
        expect(streamed(chunks, `x${sigma}\u0301`, false)).toBe(true);
        expect(streamed(chunks, `x${sigma === 'σ' ? 'ς' : 'σ'}\u0301`, false)).toBe(false);
      }
    }
  });

  test('memory: what is kept between chunks does not grow with the body', () => {
    for (const cs of [true, false]) {
      const m = textMatcher('needle not there', cs) as unknown as { carry?: Buffer; low?: string; raw?: string };
      const chunk = Buffer.from('abcdefghij'.repeat(6554)); // ~64 KiB
      for (let i = 0; i < 16; i++) (m as unknown as { push(c: Buffer): boolean }).push(chunk);
      const kept = (m.carry?.length ?? 0) + (m.low?.length ?? 0) + (m.raw?.length ?? 0);
      expect(kept).toBeLessThanOrEqual('needle not there'.length);
      if (m.carry !== undefined) expect(m.carry.buffer).not.toBe(chunk.buffer); // a copy, not a view of the chunk
    }
  });
});
