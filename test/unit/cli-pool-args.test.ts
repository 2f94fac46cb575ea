/** `proxycheck pool ...` command lines (src/cli/pool-args.ts through args.ts parseCommandLine): every action, its options, every usage error. */
import { describe, expect, test } from 'bun:test';
import { parseCommandLine } from '../../src/cli/args';
import { CliError, EXIT } from '../../src/cli/exit-codes';
import { POOL_ACTIONS, POOL_OPTIONS } from '../../src/cli/pool-args';

const ID = 'abcdefghij0123456789';
const cmd = (...argv: string[]) => parseCommandLine(argv).command;
function usage(...argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(EXIT.USAGE);
    return (e as CliError).message;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
}

describe('pool actions', () => {
  test('create with every option; options before the command too', () => {
    expect(cmd('pool', 'create', 'my list', 'a.txt', '-', '1.2.3.4:80', '--type', 'auto', '--region', ' de1 ', '--interval', '120', '--timeout', '3000', '--no-https')).toEqual({
      name: 'pool',
      action: 'create',
      poolName: 'my list',
      sources: ['a.txt', '-', '1.2.3.4:80'],
      type: 'auto',
      region: 'de1',
      intervalS: 120,
      timeoutMs: 3000,
      https: false,
    });
    expect(cmd('--type', 'socks5', 'pool', 'create', 'x', 'a.txt')).toMatchObject({ action: 'create', type: 'socks5' });
  });

  test('list, show, pause, resume, delete, add, remove', () => {
    expect(cmd('pool', 'list')).toEqual({ name: 'pool', action: 'list' });
    for (const a of ['show', 'pause', 'resume', 'delete'] as const) expect(cmd('pool', a, ID)).toEqual({ name: 'pool', action: a, id: ID });
    expect(cmd('pool', 'add', ID, 'a.txt', '-')).toEqual({ name: 'pool', action: 'add', id: ID, sources: ['a.txt', '-'] });
    expect(cmd('pool', 'remove', ID, '1.1.1.1:1')).toEqual({ name: 'pool', action: 'remove', id: ID, sources: ['1.1.1.1:1'] });
  });

  test('working: txt by default, filters, format, limit', () => {
    expect(cmd('pool', 'working', ID)).toEqual({ name: 'pool', action: 'working', id: ID, format: 'txt' });
    expect(cmd('pool', 'working', ID, '--country', 'de', '--anonymity', 'elite', '--type', 'http', '--format', 'csv', '--limit', '50')).toEqual({
      name: 'pool',
      action: 'working',
      id: ID,
      country: 'DE',
      anonymity: 'elite',
      type: 'http',
      format: 'csv',
      limit: 50,
    });
    expect(cmd('pool', 'working', ID, '--scheme')).toEqual({ name: 'pool', action: 'working', id: ID, format: 'txt', scheme: true });
  });

  test('--target: create takes NAME=URL[,text=...][,status=...] (again for more); working and gateway one NAME', () => {
    expect(
      cmd('pool', 'create', 'x', 'a.txt', '--target', 'shop=https://shop.example/p?q=1,text=Add to cart, now,status=200|204', '--target', 'api=http://api.example/'),
    ).toMatchObject({
      targets: [
        { name: 'shop', url: 'https://shop.example/p?q=1', requiredText: 'Add to cart, now', requiredStatusCodes: [200, 204] },
        { name: 'api', url: 'http://api.example/' },
      ],
    });
    expect(cmd('pool', 'working', ID, '--target', 'shop')).toEqual({ name: 'pool', action: 'working', id: ID, format: 'txt', target: 'shop' });
    expect(cmd('pool', 'gateway', ID, '--target', 'shop-2')).toEqual({ name: 'pool', action: 'gateway', id: ID, target: 'shop-2' });
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'https://shop.example/')).toBe('--target must be NAME=URL[,text=TEXT][,status=CODES]; got "https://shop.example/"');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'shop')).toBe('--target must be NAME=URL[,text=TEXT][,status=CODES]; got "shop"');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'Shop=https://s.example/')).toBe('--target: the name must be 1 to 32 of a-z, 0-9 and -; got "Shop"');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'shop=ftp://s.example/')).toBe('--target shop: only http and https URLs, not ftp:');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'shop=nothing')).toBe('--target shop: "nothing" is not an absolute URL');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'shop=https://s.example/,status=abc')).toBe('--target shop: status= must be HTTP status codes joined by | (like 200|204); got "abc"');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'shop=https://s.example/,status=999')).toBe('--target shop: 999 is not an HTTP status code (100..599)');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'shop=https://s.example/,text=')).toBe('--target shop: text= is empty');
    expect(usage('pool', 'create', 'x', 'a.txt', '--target', 'a=https://a.example/', '--target', 'a=https://b.example/')).toBe('--target a is given twice');
    expect(usage('pool', 'working', ID, '--target', 'a', '--target', 'b')).toBe('--target is given once here (one target name)');
    expect(usage('pool', 'list', '--target', 'a')).toBe('--target is an option of "pool create" and "pool working" and "pool gateway", not of "pool list"');
  });

  test('every option belongs to at least one action; every action is parsed', () => {
    for (const actions of Object.values(POOL_OPTIONS)) for (const a of actions) expect(POOL_ACTIONS).toContain(a);
    expect(POOL_ACTIONS).toEqual(['create', 'list', 'show', 'add', 'remove', 'pause', 'resume', 'delete', 'working', 'watch', 'gateway']);
  });

  test('watch: the id only; gateway: the id, --country, --type, --session', () => {
    expect(cmd('pool', 'watch', ID)).toEqual({ name: 'pool', action: 'watch', id: ID });
    expect(cmd('--json', 'pool', 'watch', ID)).toEqual({ name: 'pool', action: 'watch', id: ID });
    expect(cmd('pool', 'gateway', ID)).toEqual({ name: 'pool', action: 'gateway', id: ID });
    expect(cmd('pool', 'gateway', ID, '--country', 'de', '--type', 'socks5', '--session', 'abc123')).toEqual({ name: 'pool', action: 'gateway', id: ID, country: 'DE', type: 'socks5', session: 'abc123' });
  });
});

describe('usage errors (exit 2)', () => {
  test.each([
    [['pool'], 'pool needs an action'],
    [['pool', 'follow', ID], 'unknown pool action "follow"'],
    [['pool', 'watch'], "pool watch needs the pool's id"],
    [['pool', 'watch', ID, 'extra'], '"pool watch" takes the pool id only (got "extra")'],
    [['pool', 'watch', ID, '--country', 'DE'], '--country is an option of "pool working" and "pool gateway", not of "pool watch"'],
    [['pool', 'gateway', ID, '--session', 'a-b'], '--session must be 1 to 32 letters or digits'],
    [['pool', 'gateway', ID, '--type', 'auto'], '--type must be one of http, socks4, socks5'],
    [['pool', 'gateway', ID, '--format', 'txt'], '--format is an option of "pool working", not of "pool gateway"'],
    [['me', '--session', 'abc'], '--session is an option of "pool", not of "me"'],
    [['pool', 'show'], "pool show needs the pool's id"],
    [['pool', 'show', 'Nope'], '"Nope" is not a pool id'],
    [['pool', 'show', ID, 'extra'], '"pool show" takes the pool id only (got "extra")'],
    [['pool', 'list', 'extra'], '"pool list" takes no arguments (got "extra")'],
    [['pool', 'create'], 'pool create needs a name'],
    [['pool', 'create', '  '], 'pool create needs a name'],
    [['pool', 'create', 'x'], 'pool create needs a file of proxies'],
    [['pool', 'create', 'x', '-', '-'], 'standard input (-) can be read once'],
    [['pool', 'add', ID], 'pool add needs a file of proxies'],
    [['pool', 'add', ID, ''], 'pool add got an empty argument'],
    [['pool', 'create', 'x', 'a', '--type', 'https'], '--type must be one of http, socks4, socks5, auto'],
    [['pool', 'working', ID, '--type', 'auto'], '--type must be one of http, socks4, socks5'],
    [['pool', 'create', 'x', 'a', '--interval', '0'], '--interval must be 1..86400'],
    [['pool', 'create', 'x', 'a', '--interval', '1m'], '--interval must be a whole number'],
    [['pool', 'create', 'x', 'a', '--region', ' '], '--region is empty'],
    [['pool', 'working', ID, '--anonymity', 'high'], '--anonymity must be one of elite, anonymous, transparent'],
    [['pool', 'working', ID, '--limit', '0'], '--limit must be 1..1000000000'],
    [['pool', 'working', ID, '--format', 'csv', '--scheme'], '--scheme writes the protocol into text lines (txt), not csv'],
    [['pool', 'show', ID, '--scheme'], '--scheme is an option of "pool working", not of "pool show"'],
    [['pool', 'show', ID, '--country', 'DE'], '--country is an option of "pool working" and "pool gateway", not of "pool show"'],
    [['pool', 'working', ID, '--region', 'us1'], '--region is an option of "pool create", not of "pool working"'],
    [['pool', 'list', '--out', 'x.txt'], '--out is an option of "check", not of "pool"'],
    [['check', 'a.txt', '--interval', '60'], '--interval is an option of "pool", not of "check"'],
    [['me', '--no-https'], '--no-https is an option of "check" and "pool", not of "me"'],
  ])('%p', (argv, message) => {
    expect(usage(...(argv as string[]))).toContain(message as string);
  });

  test('help', () => {
    expect(cmd('pool', '--help')).toEqual({ name: 'help', topic: 'pool' });
    expect(cmd('help', 'pool')).toEqual({ name: 'help', topic: 'pool' });
  });
});
