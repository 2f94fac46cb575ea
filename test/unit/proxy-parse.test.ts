/** Tests for src/proxy/parse.ts: every input rule of DECISIONS, list accounting, fuzzing. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ProxySet } from '../../src/proxy/dedupe';
import { formatProxy } from '../../src/proxy/format';
import { canonicalIPv6 } from '../../src/proxy/host';
import { INVALID_REASONS } from '../../src/proxy/invalid-lines';
import { isIgnorableLine, parseProxyLine, parseProxyList, type ParsedProxy } from '../../src/proxy/parse';
import type { ProxyAddress, ProxyType } from '../../src/proxy/types';

type Expect = Omit<ParsedProxy, 'raw'>;
const std = (host: string, port: number): Expect => ({ host, port, format: 'standard' });
const url = (host: string, port: number, username: string, password: string): Expect => ({
  host,
  port,
  username,
  password,
  format: 'url_auth',
});
const colon = (host: string, port: number, username: string, password: string): Expect => ({
  host,
  port,
  username,
  password,
  format: 'colon_auth',
});
/** e with the own protocol its line's scheme names. */
const as = (protocol: ProxyType, e: Expect): Expect => ({ ...e, protocol });

const VALID: [string, Expect][] = [
  // standard
  ['1.2.3.4:8080', std('1.2.3.4', 8080)],
  ['0.0.0.0:1', std('0.0.0.0', 1)],
  ['255.255.255.255:65535', std('255.255.255.255', 65535)],
  ['proxy.example.com:3128', std('proxy.example.com', 3128)],
  ['Proxy.EXAMPLE.com:3128', std('proxy.example.com', 3128)],
  ['localhost:80', std('localhost', 80)],
  ['a-b.c-d.io:80', std('a-b.c-d.io', 80)],
  ['1.2.3.4:08080', std('1.2.3.4', 8080)],
  ['1.2.3.4:80/', std('1.2.3.4', 80)],
  // schemes, any case
  ['http://1.2.3.4:80', as('http', std('1.2.3.4', 80))],
  ['https://1.2.3.4:80/', as('http', std('1.2.3.4', 80))],
  ['socks4://1.2.3.4:80', as('socks4', std('1.2.3.4', 80))],
  ['socks4a://h.io:80', as('socks4', std('h.io', 80))],
  ['SOCKS5://1.2.3.4:1080', as('socks5', std('1.2.3.4', 1080))],
  ['Socks5h://h.io:1080', as('socks5', std('h.io', 1080))],
  // IPv6
  ['[2001:db8::1]:8080', std('2001:db8::1', 8080)],
  ['[2001:DB8:0:0:0:0:0:1]:8080', std('2001:db8::1', 8080)],
  ['[::1]:80', std('::1', 80)],
  ['[::]:80', std('::', 80)],
  ['[::ffff:1.2.3.4]:80', std('::ffff:102:304', 80)],
  ['http://[fe80::a:b]:80/', as('http', std('fe80::a:b', 80))],
  // URL auth
  ['user:pass@1.2.3.4:8080', url('1.2.3.4', 8080, 'user', 'pass')],
  ['http://user:pass@h.io:80/', as('http', url('h.io', 80, 'user', 'pass'))],
  ['user:p@ss@1.2.3.4:80', url('1.2.3.4', 80, 'user', 'p@ss')],
  ['us%40er:p%3Ass%25@1.2.3.4:80', url('1.2.3.4', 80, 'us@er', 'p:ss%')],
  ['user:pa:ss@1.2.3.4:80', url('1.2.3.4', 80, 'user', 'pa:ss')],
  ['user:@1.2.3.4:80', url('1.2.3.4', 80, 'user', '')],
  ['user@1.2.3.4:80', url('1.2.3.4', 80, 'user', '')],
  ['%C3%BCser:p%E2%82%ACss@h.io:80', url('h.io', 80, 'üser', 'p€ss')],
  ['user:pass@[::1]:80', url('::1', 80, 'user', 'pass')],
  ['socks5://u:p@[2001:db8::2]:1080', as('socks5', url('2001:db8::2', 1080, 'u', 'p'))],
  ['üser:päss@h.io:80', url('h.io', 80, 'üser', 'päss')],
  // colon auth
  ['1.2.3.4:8080:user:pass', colon('1.2.3.4', 8080, 'user', 'pass')],
  ['1.2.3.4:8080:user:pa:ss:x', colon('1.2.3.4', 8080, 'user', 'pa:ss:x')],
  ['1.2.3.4:8080:user:p@ss', colon('1.2.3.4', 8080, 'user', 'p@ss')],
  ['1.2.3.4:8080:user:', colon('1.2.3.4', 8080, 'user', '')],
  ['1.2.3.4:8080:us%41er:p%zz', colon('1.2.3.4', 8080, 'us%41er', 'p%zz')],
  ['[::1]:80:user:pass', colon('::1', 80, 'user', 'pass')],
  ['socks5://H.io:80:user:pass/', as('socks5', colon('h.io', 80, 'user', 'pass/'))],
  // structural detection: starts with host:port: -> colon form
  ['a:1:b@h.io:80', colon('a', 1, 'b@h.io', '80')],
  // surrounding whitespace
  ['  1.2.3.4:80  ', std('1.2.3.4', 80)],
  ['\t1.2.3.4:80\r', std('1.2.3.4', 80)],
  ['\uFEFF1.2.3.4:80', std('1.2.3.4', 80)],
  ['\u3000\u00a01.2.3.4:80\u2028', std('1.2.3.4', 80)],
  // the scheme is compared as String#toLowerCase sees it: the Kelvin sign is a "k"
  ['soc\u212As5://1.2.3.4:80', as('socks5', std('1.2.3.4', 80))],
  // IPv4-looking names that are not a strict quad take the general path
  ['1.2.3.4a.com:80', std('1.2.3.4a.com', 80)],
  ['1a.example:80', std('1a.example', 80)],
];

const INVALID: [string, string][] = [
  ['1.2.3.4', 'no port'],
  ['1.2.3.4:', 'empty port'],
  ['1.2.3.4:0', 'port 0'],
  ['1.2.3.4:65536', 'port too big'],
  ['1.2.3.4:123456', 'port too long'],
  ['1.2.3.4:-1', 'negative port'],
  ['1.2.3.4:+80', 'signed port'],
  ['1.2.3.4:0x50', 'hex port'],
  ['1.2.3.4:80//', 'two slashes'],
  ['1.2.3.4:80/x', 'path'],
  ['1.2.3.4:80?x', 'query'],
  ['1.2.3.4 :80', 'inner space'],
  ['256.1.1.1:80', 'octet > 255'],
  ['1.2.3.999:80', 'octet > 255 (last)'],
  ['010.1.1.1:80', 'leading zero'],
  ['1.2.3.04:80', 'leading zero (last)'],
  ['1.2.3:80', 'three octets'],
  ['1.2.3.4.5:80', 'five octets'],
  ['127.1:80', 'inet_aton shorthand'],
  ['2130706433:80', 'integer address'],
  ['0x7f000001:80', 'hex address'],
  ['0x7f.0.0.1:80', 'hex octet'],
  ['a.0x1f:80', 'hex last label'],
  ['example.123:80', 'numeric last label'],
  ['-a.com:80', 'label starts with -'],
  ['a-.com:80', 'label ends with -'],
  ['a..com:80', 'empty label'],
  ['.a.com:80', 'leading dot'],
  ['a.com.:80', 'trailing dot'],
  ['a_b.com:80', 'underscore'],
  [`${'a'.repeat(64)}.com:80`, 'label > 63'],
  [`${'a.'.repeat(126)}ab:80`, 'name > 253'],
  ['exämple.com:80', 'non-ASCII host'],
  ['2001:db8::1:8080', 'unbracketed IPv6'],
  ['[2001:db8::1]', 'IPv6 without port'],
  ['[2001:db8::1:8080', 'unclosed bracket'],
  ['[1.2.3.4]:80', 'IPv4 in brackets'],
  ['[fe80::1%eth0]:80', 'zone id'],
  ['[2001:db8::g]:80', 'bad hex'],
  ['[1:2:3:4:5:6:7:8:9]:80', 'nine groups'],
  ['[1::2::3]:80', 'two ::'],
  ['[h.io]:80', 'name in brackets'],
  ['ftp://1.2.3.4:80', 'unknown scheme'],
  ['http:/1.2.3.4:80', 'broken scheme'],
  ['http://', 'scheme only'],
  ['http://http://1.2.3.4:80', 'double scheme'],
  [':pass@1.2.3.4:80', 'empty username'],
  ['@1.2.3.4:80', 'empty userinfo'],
  ['%:p@1.2.3.4:80', 'bad percent escape'],
  ['u:%ZZ@1.2.3.4:80', 'bad percent escape in password'],
  ['u:%C3@1.2.3.4:80', 'truncated UTF-8 escape'],
  ['u:%00@1.2.3.4:80', 'decoded control char'],
  ['u\u0001:p@1.2.3.4:80', 'raw control char in user'],
  ['1.2.3.4:80:u\u0000:p', 'control char in colon user'],
  ['1.2.3.4:80:u:p\u007f', 'DEL in colon password'],
  ['1.2.3.4:80:u:\ud800', 'unpaired surrogate'],
  ['1.2.3.4:80:user', 'colon form without password'],
  ['1.2.3.4:80::pass', 'colon form empty username'],
  ['1.2.3.4:80/:user:pass', 'slash before credentials'],
  ['user:pass@1.2.3.4', 'url form without port'],
  ['user:pass@1.2.3.4:80/x', 'url form with path'],
  ['user:pass@:80', 'url form without host'],
  ['a b c', 'words'],
  ['1.2.3.4:80 # comment', 'trailing comment'],
  ['@', 'lone @'],
  [':', 'lone colon'],
  ['[', 'lone bracket'],
  ['\u180e1.2.3.4:80', 'U+180E is not white space for String#trim'],
  ['\u200b1.2.3.4:80', 'zero-width space is not white space'],
  ['socks5\u0000://1.2.3.4:80', 'control char in the scheme'],
  ['soc\u212Bs5://1.2.3.4:80', 'a non-ASCII char that does not fold to the scheme'],
  ['socks4h://1.2.3.4:80', 'socks4h is no scheme'],
  ['socks5a://1.2.3.4:80', 'socks5a is no scheme'],
  ['httpss://1.2.3.4:80', 'httpss is no scheme'],
  [`[${'0'.repeat(46)}]:80`, 'IPv6 literal longer than 45 chars'],
];

describe('parseProxyLine: valid forms', () => {
  test.each(VALID)('%p', (line, expected) => {
    const p = parseProxyLine(line);
    expect(p).not.toBeNull();
    const { raw, ...rest } = p as ParsedProxy;
    expect(rest).toEqual(expected);
    expect(raw).toBe(line.trim());
  });

  test('standard proxies carry no credential fields', () => {
    const p = parseProxyLine('1.2.3.4:80') as ParsedProxy;
    expect('username' in p).toBe(false);
    expect('password' in p).toBe(false);
  });

  test('253-character host name and 63-character labels are accepted', () => {
    const name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(name.length).toBe(253);
    expect(parseProxyLine(`${name}:80`)?.host).toBe(name);
  });
});

describe('parseProxyLine: invalid lines', () => {
  test.each(INVALID)('%p (%s)', (line) => {
    expect(parseProxyLine(line)).toBeNull();
  });
});

/** The reason parseProxyList gives the one line `line`. */
const reasonOf = (line: string) => [...parseProxyList([line]).invalidLines.all()][0]?.reason;
const R = {
  unrecognised: INVALID_REASONS[0],
  notString: INVALID_REASONS[1],
  noPort: INVALID_REASONS[2],
  badPort: INVALID_REASONS[3],
  badHost: INVALID_REASONS[4],
  badCredentials: INVALID_REASONS[5],
  emptyUsername: INVALID_REASONS[6],
  noPassword: INVALID_REASONS[7],
  badScheme: INVALID_REASONS[8],
};

describe('invalid lines: the reason each one gets', () => {
  const REASONS: [string, string][] = [
    ['1.2.3.4', R.noPort],
    ['[2001:db8::1]', R.noPort],
    ['user:pass@1.2.3.4', R.noPort],
    ['proxy.example.com', R.noPort],
    ['1.2.3.4:', R.badPort],
    ['1.2.3.4:0', R.badPort],
    ['1.2.3.4:65536', R.badPort],
    ['1.2.3.4:80/x', R.badPort],
    ['user:pass@1.2.3.4:99999', R.badPort],
    ['256.1.1.1:80', R.badHost],
    ['010.1.1.1:80', R.badHost],
    ['2001:db8::1:8080', R.badHost],
    ['[1::2::3]:80', R.badHost],
    ['a_b.com:80', R.badHost],
    ['exämple.com:80', R.badHost],
    ['user:pass@:80', R.badHost],
    ['u:%ZZ@1.2.3.4:80', R.badCredentials],
    ['1.2.3.4:80:u\u0000:p', R.badCredentials],
    [':pass@1.2.3.4:80', R.emptyUsername],
    ['@1.2.3.4:80', R.emptyUsername],
    ['1.2.3.4:80::pass', R.emptyUsername],
    ['1.2.3.4:80:user', R.noPassword],
    ['ftp://1.2.3.4:80', R.badScheme],
    ['socks4h://1.2.3.4:80', R.badScheme],
    ['a b c', R.unrecognised],
    ['http://', R.unrecognised],
  ];
  test.each(REASONS)('%p: %s', (line, reason) => {
    expect(reasonOf(line)).toBe(reason);
  });

  test('every invalid line of the table above gets one of the fixed reasons', () => {
    for (const [line] of INVALID) expect(INVALID_REASONS as readonly string[]).toContain(reasonOf(line) ?? "none");
  });

  test('text bodies: line numbers count every line from 1 (blank and comment lines too, any line break); the text is trimmed', () => {
    const r = parseProxyList('1.2.3.4:80\n\n# c\r\n  bad line  \r1.2.3.4:99999\n1.2.3.4:80');
    expect([...r.invalidLines.all()]).toEqual([
      { line: 4, text: 'bad line', reason: R.unrecognised },
      { line: 5, text: '1.2.3.4:99999', reason: R.badPort },
    ]);
    expect(r.invalid).toBe(2);
  });

  test('arrays: elements count from 1; a non-string is shown by its JSON kind', () => {
    const r = parseProxyList(['1.2.3.4:80', 42, null, true, { host: 'x' }, [1], '', 'nope']);
    expect([...r.invalidLines.all()]).toEqual([
      { line: 2, text: '42', reason: R.notString },
      { line: 3, text: 'null', reason: R.notString },
      { line: 4, text: 'true', reason: R.notString },
      { line: 5, text: '{\u2026}', reason: R.notString },
      { line: 6, text: '[\u2026]', reason: R.notString },
      { line: 8, text: 'nope', reason: R.noPort },
    ]);
  });

  test('fuzz: invalidLines holds exactly the invalid lines, in order, with increasing numbers and fixed reasons', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 100 }), proxyish), (s) => {
        const r = parseProxyList(s);
        const all = [...r.invalidLines.all()];
        expect(all.length).toBe(r.invalid);
        const lines = s.split(/\r\n|\r|\n/);
        let last = 0;
        for (const e of all) {
          expect(e.line).toBeGreaterThan(last);
          last = e.line;
          const text = (lines[e.line - 1] ?? '').trim();
          expect(parseProxyLine(text)).toBeNull();
          expect(isIgnorableLine(text)).toBe(false);
          expect(text.startsWith(e.text.replace(/\u2026$/, ''))).toBe(true);
          expect(INVALID_REASONS as readonly string[]).toContain(e.reason);
        }
      }),
      { numRuns: 300 },
    );
  });
});

test('a trailing NEL stays in a colon-form password (a C1 char: neither white space nor a C0 control)', () => {
  expect(parseProxyLine('1.2.3.4:80:u:p\u0085')?.password).toBe('p\u0085');
});

describe('ignored lines', () => {
  test.each(['', '   ', '\t\r', '# comment', '   #1.2.3.4:80', '#'])('%p', (line) => {
    expect(isIgnorableLine(line)).toBe(true);
    expect(parseProxyLine(line)).toBeNull();
  });
  test('a proxy line is not ignorable', () => {
    expect(isIgnorableLine('1.2.3.4:80')).toBe(false);
  });
});

describe('parseProxyList', () => {
  test('counts valid, invalid, duplicate and ignored lines; CRLF and lone CR', () => {
    const text = [
      '# my list',
      '1.2.3.4:80',
      '',
      'garbage',
      'http://1.2.3.4:80/', // same as line 2 in an http check (the scheme names the request's type)
      'u:p@h.io:80',
      'h.io:80:u:p', // same proxy as the line above, other form
      'u:q@h.io:80', // other password: not a duplicate
      'U:p@h.io:80', // usernames are case-sensitive
      'H.IO:80', // same host name after lower-casing; no auth: distinct from u:p@
      'h.io:80',
      '[2001:DB8::1]:80',
      '[2001:db8:0::1]:80',
      '   ',
    ].join('\r\n');
    const r = parseProxyList(`${text}\rlast.io:1\n`, { type: 'http' });
    expect(r.proxies.map((p) => p.raw)).toEqual([
      '1.2.3.4:80',
      'u:p@h.io:80',
      'u:q@h.io:80',
      'U:p@h.io:80',
      'H.IO:80',
      '[2001:DB8::1]:80',
      'last.io:1',
    ]);
    expect(r.invalid).toBe(1);
    expect(r.duplicates).toBe(4);
    expect(r.ignored).toBe(4); // comment, empty, spaces, the empty line after the final \n
    expect(r.limitExceeded).toBe(false);
  });

  test('line breaks: \\n, \\r\\n and a lone \\r; a break inside an array element is no break', () => {
    const r = parseProxyList('a.io:1\r\r\nb.io:1\n\rc.io:1\r');
    expect(r.proxies.map((p) => p.raw)).toEqual(['a.io:1', 'b.io:1', 'c.io:1']);
    expect(r.ignored).toBe(3); // "" between \r and \r\n, "" between \n and \r, "" after the last \r
    const lines = parseProxyList('1.2.3.4:80\r1.2.3.4:81:u:p\r\n5.6.7.8:80:u:p\rq');
    expect(lines.proxies.map((p) => p.password ?? null)).toEqual([null, 'p', 'p']);
    expect(lines.invalid).toBe(1); // "q"
    const arr = parseProxyList(['1.2.3.4:80:u:p\rq', '1.2.3.4:80:u:p\nq']);
    expect(arr.invalid).toBe(2); // a control char inside the password
  });

  test('a line is read only up to its break: "[", "@" and ":" of other lines do not count', () => {
    const r = parseProxyList('[2001:db8::1\n]:80\nuser\n@1.2.3.4:80\n1.2.3.4:80:user\n:pass');
    expect(r.proxies).toEqual([]);
    expect(r.invalid).toBe(6);
  });

  test('array input: each element is one line; non-strings are invalid', () => {
    const r = parseProxyList(['1.2.3.4:80', 42, null, { host: 'x' }, '', '# c', '1.2.3.4:80', 'a\nb:1', 'h.io:1']);
    expect(r.proxies.map((p) => p.host)).toEqual(['1.2.3.4', 'h.io']);
    expect(r.invalid).toBe(4);
    expect(r.ignored).toBe(2);
    expect(r.duplicates).toBe(1);
  });

  test('empty input', () => {
    expect(parseProxyList('')).toMatchObject({ proxies: [], invalid: 0, duplicates: 0, ignored: 1, limitExceeded: false });
    expect(parseProxyList([])).toMatchObject({ proxies: [], invalid: 0, duplicates: 0, ignored: 0, limitExceeded: false });
    expect([...parseProxyList('').invalidLines.all()]).toEqual([]);
  });

  test('maxUnique stops at the first proxy over the limit; duplicates do not count', () => {
    const r = parseProxyList('a.io:1\na.io:1\nb.io:1\nc.io:1\nd.io:1', { maxUnique: 2 });
    expect(r.limitExceeded).toBe(true);
    expect(r.proxies.length).toBe(3);
    const ok = parseProxyList('a.io:1\na.io:1\nb.io:1', { maxUnique: 2 });
    expect(ok.limitExceeded).toBe(false);
    expect(ok.proxies.length).toBe(2);
  });

  test('many distinct proxies survive table growth in order', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `10.0.${i >> 8}.${i & 255}:${1000 + (i % 7)}`);
    const r = parseProxyList([...lines, ...lines].join('\n'));
    expect(r.proxies.length).toBe(5000);
    expect(r.duplicates).toBe(5000);
    expect(r.proxies.map((p) => p.raw)).toEqual(lines);
  });
});

// ---- one proxy, many spellings -------------------------------------------------------

const spellingCredential = fc
  .string({ unit: fc.constantFrom('a', 'Z', '0', ':', '@', '%', ' ', '#', '/', 'ü', '€', '😀', '\u212A'), maxLength: 6 });
const spellingProxy: fc.Arbitrary<ProxyAddress> = fc
  .tuple(
    fc.oneof(fc.ipV4(), fc.ipV6().map((v6) => canonicalIPv6(v6) as string), fc.domain().map((d) => d.toLowerCase())),
    fc.integer({ min: 1, max: 65535 }),
    fc.option(fc.tuple(spellingCredential.filter((u) => u.length > 0), spellingCredential)),
  )
  .map(([host, port, creds]) => (creds === null ? { host, port } : { host, port, username: creds[0], password: creds[1] }));

/** Every way the parser accepts to write p: forms, host case, IPv6 spelling, escapes, schemes of http. */
function spellings(p: ProxyAddress): string[] {
  const hosts = [p.host, p.host.toUpperCase()];
  if (p.host.includes(':')) hosts.push(new URL(`http://[${p.host}]/`).hostname.slice(1, -1), expandIPv6(p.host));
  const out: string[] = [];
  const enc = (c: string) => [...new TextEncoder().encode(c)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  for (const host of hosts) {
    const q = { ...p, host };
    const hp = formatProxy({ host, port: p.port }, 'standard');
    if (p.username === undefined) {
      out.push(hp, `https://${hp}/`, `  ${hp}  `);
      continue;
    }
    const pw = p.password ?? '';
    out.push(formatProxy(q, 'url_auth'), `HTTP://${formatProxy(q, 'url_auth')}/`);
    out.push(`${enc(p.username)}:${enc(pw)}@${hp}`);
    if (!p.username.includes(':') && pw === pw.trimEnd() && pw === pw.trimStart()) out.push(`${hp}:${p.username}:${pw}`);
    if (pw === '' && !/[:@%]|^[\s#]/.test(p.username)) out.push(`${p.username}@${hp}`);
  }
  return out;
}

/** The full 8-group spelling of a canonical IPv6 literal (no "::"), upper-case. */
function expandIPv6(h: string): string {
  const [left, right] = h.includes('::') ? h.split('::') : [h, undefined];
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const groups = right === undefined ? l : [...l, ...Array(8 - l.length - r.length).fill('0'), ...r];
  return groups.map((g) => g.padStart(4, '0').toUpperCase()).join(':');
}

describe('one proxy written every way is one proxy', () => {
  test('every spelling after the first is a duplicate, whatever the order', () => {
    fc.assert(
      fc.property(spellingProxy, fc.integer(), (p, seed) => {
        const lines = spellings(p);
        for (const l of lines) expect(parseProxyLine(l)).not.toBeNull();
        const shuffled = lines.map((l, i) => [((i + 1) * (seed | 1)) % 1009, l] as const).sort((a, b) => a[0] - b[0]).map((x) => x[1]);
        // the spellings' schemes (https, HTTP) name the list's type: they add nothing
        const r = parseProxyList(shuffled.join('\n'), { type: 'http' });
        expect(r.proxies.length).toBe(1);
        expect(r.duplicates).toBe(lines.length - 1);
        // and the parser's identity is ProxySet's (proxyHash over the parsed fields)
        const set = new ProxySet();
        for (const l of lines) set.add(parseProxyLine(l, 'http') as ParsedProxy);
        expect(set.size).toBe(1);
      }),
      { numRuns: 500 },
    );
  });

  test('different proxies stay apart', () => {
    fc.assert(
      fc.property(fc.uniqueArray(spellingProxy, { maxLength: 30, selector: (p) => JSON.stringify([p.host, p.port, p.username, p.password ?? '']) }), (ps) => {
        const r = parseProxyList(ps.map((p) => formatProxy(p, 'url_auth')));
        expect(r.proxies.length).toBe(ps.length);
      }),
      { numRuns: 200 },
    );
  });
});

// ---- a line's scheme is its protocol (DECISIONS "Mixed lists") ------------------

const SCHEME_PROTOCOL: [string, ProxyType][] = [
  ['http', 'http'],
  ['https', 'http'],
  ['socks4', 'socks4'],
  ['socks4a', 'socks4'],
  ['socks5', 'socks5'],
  ['socks5h', 'socks5'],
];

describe('schemes name the protocol', () => {
  test('each scheme names its protocol, whatever the letter case and form', () => {
    for (const [scheme, protocol] of SCHEME_PROTOCOL) {
      for (const rest of ['1.2.3.4:80', 'u:p@h.io:80', 'h.io:80:u:p', '[::1]:80/']) {
        expect(parseProxyLine(`${scheme}://${rest}`)?.protocol).toBe(protocol);
        expect(parseProxyLine(`${scheme.toUpperCase()}://${rest}`)?.protocol).toBe(protocol);
      }
    }
    expect(parseProxyLine('1.2.3.4:80')).not.toHaveProperty('protocol');
  });

  test('a scheme naming the list type adds nothing; another one stays', () => {
    expect(parseProxyLine('socks5://1.2.3.4:80', 'socks5')).not.toHaveProperty('protocol');
    expect(parseProxyLine('socks5h://1.2.3.4:80', 'socks5')).not.toHaveProperty('protocol');
    expect(parseProxyLine('socks5://1.2.3.4:80', 'http')?.protocol).toBe('socks5');
    expect(parseProxyLine('http://1.2.3.4:80', 'auto')?.protocol).toBe('http');
    expect(parseProxyLine('socks4://1.2.3.4:80', 'socks5')?.protocol).toBe('socks4');
  });

  test('the same host:port under two protocols is two proxies; under two names of one protocol, one', () => {
    const r = parseProxyList(['socks5://1.2.3.4:80', 'http://1.2.3.4:80', '1.2.3.4:80', 'socks5h://1.2.3.4:80', 'https://1.2.3.4:80', 'socks4://1.2.3.4:80'], { type: 'http' });
    expect(r.proxies.map((p) => [p.raw, p.protocol])).toEqual([
      ['socks5://1.2.3.4:80', 'socks5'],
      ['http://1.2.3.4:80', undefined],
      ['socks4://1.2.3.4:80', 'socks4'],
    ]);
    expect(r.duplicates).toBe(3);
    const auto = parseProxyList(['1.2.3.4:80', 'http://1.2.3.4:80', 'socks5://u:p@1.2.3.4:80', 'socks5://1.2.3.4:80:u:p'], { type: 'auto' });
    expect(auto.proxies.map((p) => p.protocol)).toEqual([undefined, 'http', 'socks5']);
    expect(auto.duplicates).toBe(1);
  });

  test('ignoreSchemes: schemes stripped as before (pools): no protocol, one proxy whatever the scheme', () => {
    const r = parseProxyList(['socks5://1.2.3.4:80', 'http://1.2.3.4:80', '1.2.3.4:80'], { ignoreSchemes: true });
    expect(r.proxies.map((p) => [p.raw, 'protocol' in p])).toEqual([['socks5://1.2.3.4:80', false]]);
    expect(r.duplicates).toBe(2);
    // the schemes named are counted all the same: valid lines, duplicates included, invalid ones not
    expect(r.schemes).toEqual({ http: 1, socks4: 0, socks5: 1 });
    expect(parseProxyList(['socks4a://h.io:1', 'SOCKS4://h.io:2', 'https://x', 'socks5://bad host:1'], { type: 'socks4' }).schemes).toEqual({ http: 0, socks4: 2, socks5: 0 });
    // the next run without it keeps them again (the option is per run)
    expect(parseProxyList(['socks5://1.2.3.4:80']).proxies[0]!.protocol).toBe('socks5');
  });

  test('property: identity is (protocol, host, port, credentials) and agrees with ProxySet over the parsed fields', () => {
    const schemeName = fc.constantFrom('', ...SCHEME_PROTOCOL.map(([s]) => s));
    const listType = fc.constantFrom(undefined, 'http', 'socks4', 'socks5', 'auto') as fc.Arbitrary<'http' | 'socks4' | 'socks5' | 'auto' | undefined>;
    fc.assert(
      fc.property(fc.array(fc.tuple(schemeName, spellingProxy), { maxLength: 20 }), listType, (entries, type) => {
        const lines = entries.map(([scheme, p]) => (scheme === '' ? '' : `${scheme}://`) + formatProxy(p, 'url_auth'));
        const r = parseProxyList(lines, { type });
        const own = (scheme: string) => {
          const protocol = SCHEME_PROTOCOL.find(([n]) => n === scheme)?.[1];
          return protocol === type ? undefined : protocol;
        };
        const keys = new Set(entries.map(([scheme, p]) => JSON.stringify([own(scheme) ?? null, p.host, p.port, p.username ?? null, p.username === undefined ? null : (p.password ?? '')])));
        expect(r.proxies.length).toBe(keys.size);
        expect(r.proxies.length + r.duplicates).toBe(lines.length);
        const set = new ProxySet();
        for (const l of lines) set.add(parseProxyLine(l, type) as ParsedProxy);
        expect(set.size).toBe(keys.size);
        for (const p of r.proxies) {
          if (p.protocol !== undefined) expect(p.protocol).not.toBe(type);
        }
      }),
      { numRuns: 300 },
    );
  });
});

// ---- fuzzing -----------------------------------------------------------------

const lineCount = (s: string) => s.split(/\r\n|\r|\n/).length;

/** Strings made of the characters the parser cares about, to reach deep paths. */
const proxyish = fc
  .array(
    fc.constantFrom(
      ':', '@', '[', ']', '.', '/', '%', '#', ' ', '\r', '\n', '\t', '\u0000', '-',
      '1', '8', '0', '255', '65535', '65536', 'a', 'Z', 'x', 'ü', '\ud800', '::', '%41', '%zz',
      'http://', 'SOCKS5://', '1.2.3.4', '::1', 'example.com', 'user', 'pass',
    ),
    { maxLength: 40 },
  )
  .map((parts) => parts.join(''));

describe('fuzz', () => {
  test('never throws on arbitrary strings; every line is accounted for', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 100 }), proxyish), (s) => {
        const r = parseProxyList(s);
        expect(r.proxies.length + r.duplicates + r.invalid + r.ignored).toBe(lineCount(s));
        for (const line of s.split(/\r\n|\r|\n/)) parseProxyLine(line);
      }),
      { numRuns: 300 },
    );
  });

  test('never throws on arbitrary arrays; every element is accounted for', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.anything(), proxyish), { maxLength: 20 }), (arr) => {
        const r = parseProxyList(arr);
        expect(r.proxies.length + r.duplicates + r.invalid + r.ignored).toBe(arr.length);
      }),
      { numRuns: 500 },
    );
  });

  test('every parsed proxy is normalised: valid port, lower-case host, no brackets', () => {
    fc.assert(
      fc.property(proxyish, (s) => {
        for (const p of parseProxyList(s).proxies) {
          expect(p.port >= 1 && p.port <= 65535).toBe(true);
          expect(p.host).toBe(p.host.toLowerCase());
          expect(p.host.includes('[')).toBe(false);
          expect(p.raw).toBe(p.raw.trim());
        }
      }),
      { numRuns: 300 },
    );
  });

  test('huge and pathological lines parse in linear time', () => {
    const MiB = 512 * 1024; // 512 KiB pieces: a 16 MiB body is 32x this, linear
    const inputs = [
      ':'.repeat(MiB),
      '@'.repeat(MiB),
      '['.repeat(MiB),
      `[${':'.repeat(MiB)}]:80`,
      `${'a.'.repeat(MiB / 2)}:80`,
      `${'u:'.repeat(MiB / 2)}@h.io:80`,
      `1.2.3.4:80:u:${'%'.repeat(MiB)}`,
      `u:${'%41'.repeat(MiB / 4)}@h.io:80`,
      '\n'.repeat(MiB),
      '\r'.repeat(MiB),
      '1.2.3.4:80:u:p@\n'.repeat(MiB / 16),
    ];
    // quadratic behaviour on 1 MiB lines would take minutes: the test's timeout fails it (the speed itself: bench/micro-parse.ts)
    for (const s of inputs) {
      const r = parseProxyList(s);
      expect(r.proxies.length + r.duplicates + r.invalid + r.ignored).toBe(lineCount(s));
    }
  });
});
