/** The admin command's pure argv / HTTP-body parser (src/admin/args.ts). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { parseAdminBody, parseArgv, toAdminBody, UsageError } from '../../src/admin/args';

const bad = (argv: string[], re: RegExp) => {
  expect(() => parseArgv(argv)).toThrow(UsageError);
  expect(() => parseArgv(argv)).toThrow(re);
};

describe('parseArgv', () => {
  test('every command with its options', () => {
    expect(parseArgv(['create-account', '--email', 'A@B.io', '--checks', '10', '--temp=3', '--unlimited-until', '2030-01-01'])).toEqual({
      command: 'create-account',
      email: 'a@b.io',
      checks: 10,
      temp: 3,
      unlimitedUntil: '2030-01-01T00:00:00.000Z',
    });
    expect(parseArgv(['create-account', '--email=a@b.io'])).toEqual({ command: 'create-account', email: 'a@b.io' });
    expect(parseArgv(['issue-key', '--email', 'a@b.io', '--label', 'my laptop'])).toEqual({ command: 'issue-key', email: 'a@b.io', label: 'my laptop' });
    expect(parseArgv(['revoke-key', '--key', 'pc_abc'])).toEqual({ command: 'revoke-key', key: 'pc_abc' });
    expect(parseArgv(['top-up', '--email', 'a@b.io', '--checks', '5', '--temp'])).toEqual({ command: 'top-up', email: 'a@b.io', checks: 5, temp: true });
    expect(parseArgv(['top-up', '--temp', '--email', 'a@b.io', '--checks', '5'])).toMatchObject({ temp: true, checks: 5 });
    expect(parseArgv(['set-plan', '--email', 'a@b.io', '--unlimited-until', '2030-01-01T10:00:00+02:00'])).toEqual({
      command: 'set-plan',
      email: 'a@b.io',
      unlimitedUntil: '2030-01-01T08:00:00.000Z',
    });
    expect(parseArgv(['set-plan', '--email', 'a@b.io', '--unlimited-until', '2030-01-01T10:00'])).toMatchObject({
      unlimitedUntil: '2030-01-01T10:00:00.000Z',
    });
    expect(parseArgv(['clear-plan', '--email', 'a@b.io'])).toEqual({ command: 'clear-plan', email: 'a@b.io' });
    expect(parseArgv(['show', '--email', 'a@b.io'])).toEqual({ command: 'show', email: 'a@b.io' });
    expect(parseArgv(['list-accounts'])).toEqual({ command: 'list-accounts' });
    expect(parseArgv(['list-accounts', '--limit', '20'])).toEqual({ command: 'list-accounts', limit: 20 });
    bad(['list-accounts', '--limit', '0'], /--limit must be a whole number from 1/);
    bad(['list-accounts', '--email', 'a@b.io'], /unknown option --email/);
  });

  test('clear errors for bad input', () => {
    bad([], /no command/);
    bad(['frobnicate'], /unknown command "frobnicate"/);
    bad(['show'], /--email is required/);
    bad(['show', '--email'], /--email needs a value/);
    bad(['show', '--email', '--x'], /--email needs a value/);
    bad(['show', '--email', 'nope'], /must be an e-mail/);
    bad(['show', '--email', 'a@b.io', '--checks', '3'], /unknown option --checks/);
    bad(['show', '--email', 'a@b.io', 'extra'], /unexpected argument "extra"/);
    bad(['show', '--email', 'a@b.io', '--email', 'c@d.io'], /given twice/);
    bad(['top-up', '--email', 'a@b.io'], /--checks is required/);
    bad(['top-up', '--email', 'a@b.io', '--checks', '0'], /from 1/);
    bad(['top-up', '--email', 'a@b.io', '--checks', '-5'], /needs a value|whole number/);
    bad(['top-up', '--email', 'a@b.io', '--checks', '1.5'], /whole number/);
    bad(['top-up', '--email', 'a@b.io', '--checks', '5', '--temp=maybe'], /takes no value/);
    bad(['create-account', '--email', 'a@b.io', '--temp', 'x'], /whole number/);
    bad(['set-plan', '--email', 'a@b.io'], /--unlimited-until is required/);
    bad(['set-plan', '--email', 'a@b.io', '--unlimited-until', 'tomorrow'], /ISO 8601/);
    bad(['set-plan', '--email', 'a@b.io', '--unlimited-until', '2030-13-45'], /ISO 8601/);
  });

  test('never throws anything but UsageError on arbitrary argv', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.constantFrom('--email', '--checks', '--temp', 'top-up', 'show', 'a@b.io', '5'))), (argv) => {
        try {
          parseArgv(argv);
        } catch (e) {
          expect(e).toBeInstanceOf(UsageError);
        }
      }),
    );
  });
});

describe('parseAdminBody', () => {
  test('mirrors the argv parser (round trip through toAdminBody)', () => {
    const reqs = [
      parseArgv(['create-account', '--email', 'a@b.io', '--checks', '10', '--temp', '2', '--unlimited-until', '2030-01-01']),
      parseArgv(['top-up', '--email', 'a@b.io', '--checks', '5', '--temp']),
      parseArgv(['issue-key', '--email', 'a@b.io']),
      parseArgv(['revoke-key', '--key', 'pc_x']),
    ];
    for (const r of reqs) expect(parseAdminBody(r.command, JSON.parse(JSON.stringify(toAdminBody(r))))).toEqual(r);
  });

  test('accepts flag names too, rejects bad bodies', () => {
    expect(parseAdminBody('set-plan', { email: 'a@b.io', 'unlimited-until': '2031-01-01' })).toMatchObject({ unlimitedUntil: '2031-01-01T00:00:00.000Z' });
    expect(() => parseAdminBody('show', [])).toThrow(/JSON object/);
    expect(() => parseAdminBody('show', 'x')).toThrow(/JSON object/);
    expect(() => parseAdminBody('show', {})).toThrow(/--email is required/);
    expect(() => parseAdminBody('nope', {})).toThrow(/unknown command/);
    expect(() => parseAdminBody('top-up', { email: 'a@b.io', checks: 1.5 })).toThrow(/whole number/);
    expect(() => parseAdminBody('top-up', { email: 'a@b.io', checks: 2, bogus: 1 })).toThrow(/unknown option --bogus/);
  });
});
