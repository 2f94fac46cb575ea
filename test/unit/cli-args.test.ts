/** Tests for src/cli/args.ts: commands, options, --custom-url syntax, --format inference, usage errors. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ASYNC_THRESHOLD, COMMAND_USAGE, outputFormat, parseCommandLine, parseCustomUrl } from '../../src/cli/args';
import { ASYNC_THRESHOLD as CHECK_COMMAND_THRESHOLD } from '../../src/cli/check-command';
import { CliError, EXIT } from '../../src/cli/exit-codes';

function usage(argv: string[]): CliError {
  try {
    parseCommandLine(argv);
  } catch (err) {
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT.USAGE);
    return err as CliError;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
}

describe('parseCommandLine', () => {
  test('check with every option, globals before and after the command', () => {
    const inv = parseCommandLine([
      '--key', 'k1', 'check', 'list.txt', '--type', 'socks5', '--region', 'de1', '--timeout', '3000',
      '--custom-url', 'https://example.com/,200|204,Example Domain', '--custom-url', 'http://a.test/x',
      '--out', 'r.csv', '--only-working', '--job-id', 'my_job-1', '--url', 'http://h:1', '--json',
    ]);
    expect(inv.global).toEqual({ key: 'k1', url: 'http://h:1', json: true });
    expect(inv.command).toEqual({
      name: 'check',
      sources: ['list.txt'],
      type: 'socks5',
      region: 'de1',
      timeout: 3000,
      customUrls: [{ url: 'https://example.com/', requiredStatusCodes: [200, 204], requiredText: 'Example Domain' }, { url: 'http://a.test/x' }],
      out: 'r.csv',
      format: 'csv',
      onlyWorking: true,
      simple: false,
      scheme: false,
      jobId: 'my_job-1',
      async: false,
    });
  });

  test('--type auto and --samples N (1..10) are sent as given; absent, nothing', () => {
    expect(parseCommandLine(['check', 'l', '--type', 'auto', '--samples', '3']).command).toMatchObject({ type: 'auto', samples: 3 });
    expect(parseCommandLine(['check', 'l', '--samples', '1']).command).toMatchObject({ samples: 1 });
    expect(parseCommandLine(['check', 'l', '--samples=10']).command).toMatchObject({ samples: 10 });
    expect(parseCommandLine(['check', 'l']).command).not.toHaveProperty('samples');
  });

  test('--no-https sends https: false; absent, nothing (the server default: on); not an option of me', () => {
    expect(parseCommandLine(['check', 'l', '--no-https']).command).toMatchObject({ https: false });
    expect(parseCommandLine(['check', 'l']).command).not.toHaveProperty('https');
    expect(usage(['me', '--no-https']).message).toBe('--no-https is an option of "check" and "pool", not of "me"');
  });

  test('--samples outside 1..10, or not a whole number, is a usage error saying the range', () => {
    expect(usage(['check', 'a', '--samples', '0']).message).toBe('--samples must be 1..10; got 0');
    expect(usage(['check', 'a', '--samples', '11']).message).toBe('--samples must be 1..10; got 11');
    expect(usage(['check', 'a', '--samples', '2.5']).message).toBe('--samples must be a whole number, 1..10; got "2.5"');
    expect(usage(['check', 'a', '--samples', '-1']).message).toMatch(/samples/);
    expect(usage(['check', 'a', '--samples', '']).message).toBe('--samples must be a whole number, 1..10; got ""');
    expect(usage(['check', 'a', '--samples']).message).toMatch(/samples/);
    expect(usage(['me', '--samples', '2']).message).toMatch(/--samples is an option of "check"/);
    expect(usage(['check', 'a', '--type', 'AUTO']).message).toBe('--type must be one of http, socks4, socks5, auto; got "AUTO"');
  });

  test('check from stdin with defaults', () => {
    expect(parseCommandLine(['check', '-']).command).toEqual({ name: 'check', sources: ['-'], customUrls: [], format: 'json', onlyWorking: false, simple: false, scheme: false, async: false });
  });

  test("ClearProxy's habits: several inputs (files, -, inline addresses), --simple, set-key KEY", () => {
    expect(parseCommandLine(['check', '1.2.3.4:8080', '5.6.7.8:3128', 'list.txt', '-']).command).toMatchObject({ sources: ['1.2.3.4:8080', '5.6.7.8:3128', 'list.txt', '-'] });
    // --simple: the working proxies as text, on standard output unless --out says where
    expect(parseCommandLine(['check', 'l', '--simple']).command).toMatchObject({ simple: true, onlyWorking: true, format: 'txt', out: '-' });
    expect(parseCommandLine(['check', 'l', '--simple', '--out', 'w.json']).command).toMatchObject({ simple: true, format: 'txt', out: 'w.json' });
    expect(parseCommandLine(['check', 'l', '--simple', '--format', 'txt', '--out', 'w.txt']).command).toMatchObject({ format: 'txt', out: 'w.txt' });
    expect(parseCommandLine(['--json', 'check', 'l', '--simple', '--out', 'w.txt']).command).toMatchObject({ simple: true, out: 'w.txt' });
    // --scheme: the txt form only (--simple, --format txt, an --out .txt), wait too
    expect(parseCommandLine(['check', 'l', '--simple', '--scheme']).command).toMatchObject({ simple: true, scheme: true, format: 'txt' });
    expect(parseCommandLine(['check', 'l', '--out', 'w.txt', '--scheme']).command).toMatchObject({ scheme: true, format: 'txt' });
    expect(parseCommandLine(['wait', 'job-1', '--out', '-', '--format', 'txt', '--scheme']).command).toMatchObject({ scheme: true });
    expect(() => parseCommandLine(['check', 'l', '--scheme'])).toThrow('--scheme writes the protocol into text lines: use it with --simple or --format txt, not json');
    expect(() => parseCommandLine(['check', 'l', '--out', 'a.csv', '--scheme'])).toThrow('not csv');
    expect(() => parseCommandLine(['me', '--scheme'])).toThrow('--scheme is an option of "check" and "pool", not of "me"');
    expect(usage(['check', 'l', '--simple', '--format', 'csv', '--out', 'x']).message).toBe('--simple writes the working proxies as text, one per line; --format csv says otherwise');
    expect(usage(['--json', 'check', 'l', '--simple']).message).toMatch(/give --simple an --out FILE/);
    expect(usage(['me', '--simple']).message).toMatch(/--simple is an option of "check"/);
    // set-key is login; both take the key as their argument
    expect(parseCommandLine(['set-key', 'pc_abc']).command).toEqual({ name: 'login', key: 'pc_abc' });
    expect(parseCommandLine(['login', 'pc_abc', '--url', 'http://h:1']).command).toEqual({ name: 'login', key: 'pc_abc' });
    expect(parseCommandLine(['set-key']).command).toEqual({ name: 'login' });
    expect(parseCommandLine(['set-key', '--help']).command).toEqual({ name: 'help', topic: 'login' });
    expect(parseCommandLine(['help', 'set-key']).command).toEqual({ name: 'help', topic: 'set-key' });
    expect(usage(['set-key', 'a', 'b']).message).toBe('"set-key" takes one key (got 2 arguments)');
    expect(usage(['login', 'a', '--key', 'b']).message).toMatch(/two different keys/);
    expect(usage(['set-key', ' ']).message).toBe('the key is empty');
  });

  test('async jobs: check --async; status, wait (with where the result goes) and cancel take one job id', () => {
    expect(parseCommandLine(['check', 'l', '--async']).command).toMatchObject({ name: 'check', async: true });
    expect(usage(['check', 'l', '--async', '--out', 'r.json']).message).toMatch(/proxycheck wait <jobId> --out FILE/);
    expect(parseCommandLine(['status', 'job-1']).command).toEqual({ name: 'status', jobId: 'job-1' });
    expect(parseCommandLine(['cancel', 'job-1']).command).toEqual({ name: 'cancel', jobId: 'job-1' });
    expect(parseCommandLine(['wait', 'job-1', '--out', 'r.csv', '--only-working']).command).toEqual({ name: 'wait', jobId: 'job-1', out: 'r.csv', format: 'csv', onlyWorking: true, scheme: false });
    expect(usage(['status']).message).toBe('status needs one job id (got 0)');
    expect(usage(['wait', 'a-1', 'b-2']).message).toBe('wait needs one job id (got 2)');
    expect(usage(['cancel', 'no!']).message).toMatch(/^the job id must be /);
    expect(usage(['status', 'job-1', '--out', 'x']).message).toBe('--out is an option of "check", not of "status"');
    expect(usage(['wait', 'job-1', '--async']).message).toBe('--async is an option of "check", not of "wait"');
    expect(usage(['--json', 'wait', 'job-1', '--out', '-']).message).toMatch(/use --out FILE/);
  });

  test('other commands, help and version', () => {
    expect(parseCommandLine(['me']).command).toEqual({ name: 'me', links: false });
    expect(parseCommandLine(['me', '--links']).command).toEqual({ name: 'me', links: true });
    expect(parseCommandLine(['regions']).command).toEqual({ name: 'regions' });
    expect(parseCommandLine(['health', '--no-color']).global.color).toBe(false);
    expect(parseCommandLine(['login', '--key', 'x']).command).toEqual({ name: 'login' });
    expect(parseCommandLine(['--help']).command).toEqual({ name: 'help' });
    expect(parseCommandLine(['check', '-h']).command).toEqual({ name: 'help', topic: 'check' });
    expect(parseCommandLine(['help', 'me']).command).toEqual({ name: 'help', topic: 'me' });
    expect(parseCommandLine(['-V']).command).toEqual({ name: 'version' });
  });

  test('usage errors, each with a message naming the problem', () => {
    expect(usage([]).message).toMatch(/no command/);
    expect(usage(['frobnicate']).message).toMatch(/unknown command "frobnicate"/);
    expect(usage(['check']).message).toMatch(/needs a file/);
    expect(usage(['check', '-', 'a', '-']).message).toBe('standard input (-) can be read once');
    expect(usage(['check', 'a', '']).message).toBe('check got an empty argument');
    expect(usage(['check', 'a', '--type', 'socks6']).message).toMatch(/--type must be one of http, socks4, socks5/);
    expect(usage(['check', 'a', '--timeout', '999']).message).toMatch(/1000\.\.20000/);
    expect(usage(['check', 'a', '--timeout', '20001']).message).toMatch(/1000\.\.20000/);
    expect(usage(['check', 'a', '--timeout', '1.5e3']).message).toMatch(/whole number/);
    expect(usage(['check', 'a', '--format', 'csv']).message).toMatch(/--format needs --out/);
    expect(usage(['check', 'a', '--out', 'x', '--format', 'xml']).message).toMatch(/--format must be one of/);
    expect(usage(['check', 'a', '--job-id', 'x']).message).toMatch(/--job-id/);
    expect(usage(['check', 'a', '--case-sensitive']).message).toMatch(/no --custom-url/);
    expect(usage(['--json', 'check', 'a', '--out', '-']).message).toMatch(/--out -/);
    expect(usage(['me', '--type', 'http']).message).toMatch(/--type is an option of "check"/);
    expect(usage(['regions', '--links']).message).toMatch(/--links is an option of "me"/);
    expect(usage(['regions', 'extra']).message).toMatch(/takes no arguments/);
    expect(usage(['check', 'a', '--bogus']).message).toMatch(/bogus/);
    expect(usage(['check', 'a', '--timeout']).message).toMatch(/timeout/);
    expect(usage(['--key', '', 'me']).message).toMatch(/--key is empty/);
    expect(usage(['help', 'nothing']).message).toMatch(/no help/);
  });

  test('property: never throws anything but a usage CliError', () => {
    const token = fc.oneof(
      fc.constantFrom('check', 'me', 'login', 'set-key', '-', '--out', '--format', 'csv', '--timeout', '5000', '--type', '--custom-url', 'http://x/', '--json', '--links', '--simple', '-h'),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 8 }), (argv) => {
        try {
          const inv = parseCommandLine(argv);
          expect(typeof inv.command.name).toBe('string');
        } catch (err) {
          expect(err).toBeInstanceOf(CliError);
          expect((err as CliError).exitCode).toBe(EXIT.USAGE);
        }
      }),
    );
  });
});

describe('parseCustomUrl', () => {
  test('URL only, codes, text, both, explicit empty codes', () => {
    expect(parseCustomUrl('https://e.test/')).toEqual({ url: 'https://e.test/' });
    expect(parseCustomUrl('https://e.test/,301')).toEqual({ url: 'https://e.test/', requiredStatusCodes: [301] });
    expect(parseCustomUrl('https://e.test/,200+204')).toEqual({ url: 'https://e.test/', requiredStatusCodes: [200, 204] });
    expect(parseCustomUrl('https://e.test/,Example Domain')).toEqual({ url: 'https://e.test/', requiredText: 'Example Domain' });
    expect(parseCustomUrl('https://e.test/,200,a, b, c')).toEqual({ url: 'https://e.test/', requiredStatusCodes: [200], requiredText: 'a, b, c' });
    expect(parseCustomUrl('https://e.test/,,404')).toEqual({ url: 'https://e.test/', requiredText: '404' });
    expect(parseCustomUrl('https://e.test/,200,Hi', true)).toEqual({ url: 'https://e.test/', requiredStatusCodes: [200], requiredText: 'Hi', caseSensitive: true });
    expect(parseCustomUrl('https://e.test/,200', true)).toEqual({ url: 'https://e.test/', requiredStatusCodes: [200] });
  });

  test('bad URLs and codes are usage errors', () => {
    expect(() => parseCustomUrl('not a url')).toThrow(/not an absolute URL/);
    expect(() => parseCustomUrl('ftp://e.test/')).toThrow(/only http and https/);
    expect(() => parseCustomUrl('https://e.test/,999')).toThrow(/not an HTTP status code/);
  });
});

describe('outputFormat', () => {
  test('explicit, from the extension, default json', () => {
    expect(outputFormat(undefined, 'a.CSV')).toBe('csv');
    expect(outputFormat(undefined, 'a.txt')).toBe('txt');
    expect(outputFormat(undefined, 'a.json')).toBe('json');
    expect(outputFormat(undefined, 'a')).toBe('json');
    expect(outputFormat(undefined, undefined)).toBe('json');
    expect(outputFormat('txt', 'a.csv')).toBe('txt');
    expect(outputFormat('csv', '-')).toBe('csv');
  });
});

describe('the asynchronous threshold', () => {
  test("check's help states the threshold check-command.ts applies (one constant, grouped as the CLI prints counts)", () => {
    expect(CHECK_COMMAND_THRESHOLD).toBe(ASYNC_THRESHOLD);
    expect(COMMAND_USAGE.check).toContain(`a list of more than ${ASYNC_THRESHOLD.toLocaleString('en-US')} checks`);
  });
});
