/** Tests for src/proxy/invalid-lines.ts: the packed store of invalid lines and its memory bound. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { INVALID_LINES_SHOWN, INVALID_REASON, INVALID_REASONS, INVALID_TEXT_MAX, InvalidLines, type InvalidReason } from '../../src/proxy/invalid-lines';
import { parseProxyList } from '../../src/proxy/parse';

const MiB = 1024 * 1024;

describe('InvalidLines', () => {
  test('reads back what was added, in order: numbers with gaps, reasons, Latin-1 and wider text', () => {
    const l = new InvalidLines();
    l.add(1, INVALID_REASON.NO_PORT, '1.2.3.4');
    l.add(2, INVALID_REASON.BAD_HOST, 'exämple.com:80');
    l.add(300, INVALID_REASON.UNRECOGNISED, 'x 😀 €');
    l.add(5_000_000_000, INVALID_REASON.BAD_PORT, 'h:0');
    expect([...l.all()]).toEqual([
      { line: 1, text: '1.2.3.4', reason: INVALID_REASONS[INVALID_REASON.NO_PORT] },
      { line: 2, text: 'exämple.com:80', reason: INVALID_REASONS[INVALID_REASON.BAD_HOST] },
      { line: 300, text: 'x 😀 €', reason: INVALID_REASONS[INVALID_REASON.UNRECOGNISED] },
      { line: 5_000_000_000, text: 'h:0', reason: INVALID_REASONS[INVALID_REASON.BAD_PORT] },
    ]);
    expect(l.count).toBe(4);
  });

  test('only s[a, b) is kept', () => {
    const l = new InvalidLines();
    l.add(7, INVALID_REASON.NO_PORT, 'xx1.2.3.4yy', 2, 9);
    expect([...l.all()]).toEqual([{ line: 7, text: '1.2.3.4', reason: INVALID_REASONS[INVALID_REASON.NO_PORT] }]);
  });

  test(`a line over ${INVALID_TEXT_MAX} characters is cut there and ends with …; a surrogate pair is never split`, () => {
    const l = new InvalidLines();
    l.add(1, INVALID_REASON.UNRECOGNISED, 'a'.repeat(INVALID_TEXT_MAX));
    l.add(2, INVALID_REASON.UNRECOGNISED, 'b'.repeat(INVALID_TEXT_MAX + 1));
    l.add(3, INVALID_REASON.UNRECOGNISED, `${'c'.repeat(INVALID_TEXT_MAX - 1)}😀tail`);
    const [a, b, c] = [...l.all()];
    expect(a!.text).toBe('a'.repeat(INVALID_TEXT_MAX));
    expect(b!.text).toBe(`${'b'.repeat(INVALID_TEXT_MAX)}…`);
    expect(c!.text).toBe(`${'c'.repeat(INVALID_TEXT_MAX - 1)}…`);
  });

  test('first(n) gives the first n; the default is the response’s 20', () => {
    const l = new InvalidLines();
    for (let i = 1; i <= 50; i++) l.add(i * 2, INVALID_REASON.NO_PORT, `l${i}`);
    expect(l.first().length).toBe(INVALID_LINES_SHOWN);
    expect(INVALID_LINES_SHOWN).toBe(20);
    expect(l.first(3).map((e) => e.line)).toEqual([2, 4, 6]);
    expect([...l.all()].length).toBe(50);
  });

  test('fuzz: any text, any increasing line numbers, any reason come back (text cut at the limit)', () => {
    const entry = fc.tuple(fc.integer({ min: 1, max: 2 ** 40 }), fc.integer({ min: 0, max: INVALID_REASONS.length - 1 }), fc.string({ unit: 'binary', maxLength: 130 }));
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), (entries) => {
        const l = new InvalidLines();
        let line = 0;
        const want = entries.map(([gap, reason, text]) => {
          line += gap;
          l.add(line, reason as InvalidReason, text);
          let kept = text;
          if (text.length > INVALID_TEXT_MAX) {
            let end = INVALID_TEXT_MAX;
            const last = text.charCodeAt(end - 1);
            if (last >= 0xd800 && last <= 0xdbff) end--;
            kept = `${text.slice(0, end)}…`;
          }
          return { line, text: kept, reason: INVALID_REASONS[reason] as string };
        });
        expect([...l.all()]).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });
});

describe('memory: a 16 MiB body of junk', () => {
  test('long lines keep about INVALID_TEXT_MAX bytes each, not the body', () => {
    const line = 'x'.repeat(MiB - 1);
    const body = Array.from({ length: 16 }, () => line).join('\n');
    expect(body.length).toBeGreaterThanOrEqual(16 * MiB - 16);
    const r = parseProxyList(body);
    expect(r.invalid).toBe(16);
    expect(r.invalidLines.byteLength).toBeLessThanOrEqual(16 * (INVALID_TEXT_MAX + 3));
  });

  test('short lines keep at most 1.5 bytes per body byte (one-character lines, the worst case); typical junk about its own size', () => {
    const tiny = 'x\n'.repeat(8 * MiB);
    const r1 = parseProxyList(tiny);
    expect(r1.invalid).toBe(8 * MiB);
    expect(r1.invalidLines.byteLength).toBeLessThanOrEqual(1.5 * tiny.length);
    const words = Array.from({ length: 16 * MiB / 24 }, (_, i) => `not a proxy, line ${String(i).padStart(7, '0')}`).join('\n');
    const r2 = parseProxyList(words);
    expect(r2.invalidLines.byteLength).toBeLessThanOrEqual(words.length * 1.1);
  });
});
