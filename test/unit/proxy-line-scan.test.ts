/**
 * src/proxy/line-scan.ts: the char-level scanners of one proxy line. Each is
 * checked against a plain reference, and against the same text embedded in
 * other text (the scan must stay inside its [a, b) range).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { digitsEnd, isHostChar, isTrimSpace, portAt, schemeEnd } from '../../src/proxy/line-scan';

const SCHEMES = ['http', 'https', 'socks4', 'socks4a', 'socks5', 'socks5h'];

describe('isTrimSpace', () => {
  test('is exactly the set of code units String#trim removes', () => {
    for (let c = 0; c < 0x10000; c++) {
      if (isTrimSpace(c) !== (String.fromCharCode(c).trim() === '')) throw new Error(`U+${c.toString(16)}`);
    }
  });
});

describe('isHostChar', () => {
  test('is [A-Za-z0-9.-] over every code unit', () => {
    for (let c = 0; c < 0x10000; c++) {
      if (isHostChar(c) !== /^[A-Za-z0-9.-]$/.test(String.fromCharCode(c))) throw new Error(`U+${c.toString(16)}`);
    }
  });
});

describe('portAt', () => {
  const reference = (t: string) => (/^[0-9]{1,5}$/.test(t) && Number(t) >= 1 && Number(t) <= 65535 ? Number(t) : -1);
  test('agrees with a reference on any text, also when embedded between other digits', () => {
    fc.assert(
      fc.property(fc.oneof(fc.stringMatching(/^[0-9]{0,7}$/), fc.string({ maxLength: 7 })), fc.stringMatching(/^[0-9]{0,3}$/), (t, pad) => {
        expect(portAt(t, 0, t.length)).toBe(reference(t));
        const s = pad + t + pad;
        expect(portAt(s, pad.length, pad.length + t.length)).toBe(reference(t));
      }),
      { numRuns: 2000 },
    );
  });
  test('edges', () => {
    expect(portAt('0', 0, 1)).toBe(-1);
    expect(portAt('65535', 0, 5)).toBe(65535);
    expect(portAt('65536', 0, 5)).toBe(-1);
    expect(portAt('00080', 0, 5)).toBe(80);
    expect(portAt('', 0, 0)).toBe(-1);
  });
});

describe('digitsEnd', () => {
  test('stops at the first non-digit and never passes b', () => {
    expect(digitsEnd('123a45', 0, 6)).toBe(3);
    expect(digitsEnd('12345', 1, 3)).toBe(3);
    expect(digitsEnd('abc', 0, 3)).toBe(0);
  });
});

describe('schemeEnd', () => {
  test('every supported scheme, in any letter case, is skipped with its "://"', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SCHEMES), fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }), fc.string({ maxLength: 3 }), (name, upper, pad) => {
        const cased = [...name].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch)).join('');
        const line = `${cased}://1.2.3.4:80`;
        expect(schemeEnd(line, 0, line.length)).toBe(name.length + 3);
        const s = pad + line + pad;
        expect(schemeEnd(s, pad.length, pad.length + line.length)).toBe(pad.length + name.length + 3);
      }),
      { numRuns: 1000 },
    );
  });
  test('anything else is no scheme (returns a)', () => {
    for (const line of ['ftp://1.2.3.4:80', 'socks6://x:1', 'http:/x:1', 'http//x:1', 'httpsx://x:1', '1.2.3.4:80', 'http:', 'socks5:/', 'sock://a:1']) {
      expect(schemeEnd(line, 0, line.length)).toBe(0);
    }
  });
  test('the "://" must lie inside the range', () => {
    const s = 'http://1.2.3.4:80';
    expect(schemeEnd(s, 0, 6)).toBe(0); // the range ends before the second slash
    expect(schemeEnd(s, 0, 7)).toBe(7); // "http://" alone: skipped; the empty rest is the parser's to refuse
  });
  test('the Kelvin sign reads as "k", as String#toLowerCase sees it', () => {
    const line = 'soc\u212As5://1.2.3.4:80';
    expect(schemeEnd(line, 0, line.length)).toBe(9);
  });
});
