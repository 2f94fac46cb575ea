/** Tests for src/cli/io.ts's pure parts: how `check` names where its entries came from. */
import { describe, expect, test } from 'bun:test';
import { describeInputs } from '../../src/cli/io';

describe('describeInputs', () => {
  test('one source, as before: the file, standard input', () => {
    expect(describeInputs([{ kind: 'file', name: 'proxies.txt' }])).toBe('proxies.txt');
    expect(describeInputs([{ kind: 'stdin', name: '-' }])).toBe('standard input');
  });
  test('inline addresses are counted, not listed; several sources joined', () => {
    expect(describeInputs([{ kind: 'inline', name: '1.2.3.4:8080' }])).toBe('1 address on the command line');
    expect(
      describeInputs([
        { kind: 'inline', name: '1.2.3.4:8080' },
        { kind: 'file', name: 'a.txt' },
        { kind: 'stdin', name: '-' },
        { kind: 'inline', name: '5.6.7.8:3128' },
      ]),
    ).toBe('a.txt, standard input and 2 addresses on the command line');
    expect(describeInputs([{ kind: 'file', name: 'a' }, { kind: 'file', name: 'b' }])).toBe('a and b');
  });
});
