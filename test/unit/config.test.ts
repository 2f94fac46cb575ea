/**
 * Tests for src/config.ts: every variable's default, every validation error
 * (one line, naming the variable), trimming, URL normalisation, DATA_DIR
 * resolution against the working directory and CHECKER_IPS parsing.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ConfigError, parseConfig, reachableHost, type Config } from '../../src/config';

const CWD = '/srv/app';

/** The error parseConfig throws for this environment (fails the test if none). */
function errorOf(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    parseConfig(env, CWD);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const err = caught as ConfigError;
  expect(err.code).toBe('config_invalid');
  expect(err.name).toBe('ConfigError');
  expect(err.message).not.toContain('\n');
  return err;
}

describe('defaults', () => {
  test('an empty environment gives every documented default', () => {
    const expected: Config = {
      port: 3000,
      host: '0.0.0.0',
      adminPort: 0,
      adminHost: '127.0.0.1',
      baseUrl: 'http://127.0.0.1:3000',
      contentUrl: 'http://127.0.0.1:3000',
      dataDir: '/srv/app/data',
      databaseUrl: undefined,
      resultSecret: undefined,
      adminToken: undefined,
      allowPrivateTargets: false,
      slotsPerEndpoint: 768,
      judgeUrl: undefined,
      judgeKey: undefined,
      judgeTlsUrl: undefined,
      judgeTlsFingerprint: undefined,
      judgeTlsPort: 0,
      judgeTls: false,
      checkerIps: [],
      calibrationIntervalMs: 300_000,
      logLevel: 'info',
      bootstrapChecks: 1000,
      bootstrapApiKey: undefined,
      resultRetentionDays: 7,
      resultMaxBytes: 10 * 1024 ** 3,
      wsRequireAuth: false,
      maxProxies: 100_000,
      maxBodyBytes: 16 * 1024 * 1024,
      maxCustomUrls: 10,
      maxJobsPerAccount: 4,
      maxProxiesInFlightPerAccount: 200_000,
      rateLimitPerS: 20,
      rateLimitBurst: 40,
      wsMaxPerAccount: 64,
      wsMaxPerAddress: 16,
      maxLargeBodies: 2,
      maxInFlight: undefined,
      maxJobSharePercent: 95,
      httpIdleTimeoutS: 30,
      shutdownTimeoutMs: 40_000,
      dbStatementTimeoutMs: 30_000,
      probeThreads: Math.max(1, navigator.hardwareConcurrency ?? 1),
      shutdownGraceMs: 30_000,
      tlsCaFile: undefined,
      nodeId: undefined,
      nodeLeaseMs: 30_000,
      orphanSweepMs: 15_000,
      natsUrl: undefined,
      role: 'embedded',
      region: undefined,
      agentSlots: undefined,
      agentId: undefined,
      clusterAckWaitMs: 15_000,
      clusterShardDeadlineMs: 120_000,
      agentHeartbeatMs: 2_000,
      agentTtlMs: 10_000,
      gatewayPort: undefined,
      gatewayHost: '127.0.0.1',
      gatewayMaxConnections: 256,
      gatewayMaxClients: 4096,
      gatewayIdleTimeoutS: 120,
      gatewayConnectTimeoutMs: 5_000,
    };
    const cfg = parseConfig({}, CWD);
    expect(cfg).toStrictEqual(expected);
    expect(Object.keys(cfg).sort()).toEqual(Object.keys(expected).sort());
  });

  test('blank and whitespace-only values count as unset', () => {
    const env: Record<string, string> = {};
    for (const name of [
      'PORT', 'HOST', 'ADMIN_PORT', 'ADMIN_HOST', 'BASE_URL', 'CONTENT_URL', 'DATA_DIR', 'DATABASE_URL', 'RESULT_SECRET', 'ADMIN_TOKEN',
      'ALLOW_PRIVATE_TARGETS', 'SLOTS_PER_ENDPOINT', 'JUDGE_URL', 'JUDGE_KEY', 'CHECKER_IPS', 'CALIBRATION_INTERVAL_MS',
      'LOG_LEVEL', 'BOOTSTRAP_CHECKS', 'BOOTSTRAP_API_KEY', 'RESULT_RETENTION_DAYS', 'RESULT_MAX_BYTES', 'WS_REQUIRE_AUTH',
      'MAX_PROXIES', 'MAX_BODY_BYTES', 'MAX_CUSTOM_URLS', 'MAX_LARGE_BODIES', 'PROBE_THREADS', 'SHUTDOWN_GRACE_MS', 'TLS_CA_FILE', 'MAX_IN_FLIGHT',
      'JUDGE_TLS_URL', 'JUDGE_TLS_FINGERPRINT', 'JUDGE_TLS_PORT', 'JUDGE_TLS',
      'MAX_JOBS_PER_ACCOUNT', 'MAX_PROXIES_IN_FLIGHT_PER_ACCOUNT', 'RATE_LIMIT_PER_S', 'RATE_LIMIT_BURST', 'WS_MAX_PER_ACCOUNT', 'WS_MAX_PER_ADDRESS',
      'NODE_ID', 'NODE_LEASE_MS', 'ORPHAN_SWEEP_MS',
      'GATEWAY_PORT', 'GATEWAY_HOST', 'GATEWAY_MAX_CONNECTIONS', 'GATEWAY_MAX_CLIENTS', 'GATEWAY_IDLE_TIMEOUT_S', 'GATEWAY_CONNECT_TIMEOUT_MS',
    ]) {
      env[name] = name.length % 2 === 0 ? '' : '  \t ';
    }
    expect(parseConfig(env, CWD)).toStrictEqual(parseConfig({}, CWD));
  });

  test('the default environment and working directory are process.env and process.cwd()', () => {
    const cfg = parseConfig();
    expect(cfg.dataDir.startsWith('/')).toBe(true);
    if (process.env.DATA_DIR === undefined) expect(cfg.dataDir).toBe(`${process.cwd()}/data`);
  });

  test('unknown variables are ignored and the input is not modified', () => {
    const env = { SOMETHING_ELSE: 'x', PORT: ' 8080 ' };
    const copy = { ...env };
    expect(parseConfig(env, CWD).port).toBe(8080);
    expect(env).toEqual(copy);
  });
});

describe('integer variables', () => {
  const ints: [string, keyof Config, number, number][] = [
    ['PORT', 'port', 0, 65535],
    ['ADMIN_PORT', 'adminPort', 0, 65535],
    ['SLOTS_PER_ENDPOINT', 'slotsPerEndpoint', 1, 100_000],
    ['CALIBRATION_INTERVAL_MS', 'calibrationIntervalMs', 1_000, 86_400_000],
    ['BOOTSTRAP_CHECKS', 'bootstrapChecks', 0, 1_000_000_000],
    ['RESULT_RETENTION_DAYS', 'resultRetentionDays', 1, 3650],
    ['RESULT_MAX_BYTES', 'resultMaxBytes', 0, 2 ** 50],
    ['MAX_PROXIES', 'maxProxies', 1, 10_000_000],
    ['MAX_BODY_BYTES', 'maxBodyBytes', 1024, 1024 * 1024 * 1024],
    ['MAX_CUSTOM_URLS', 'maxCustomUrls', 0, 1000],
    ['MAX_LARGE_BODIES', 'maxLargeBodies', 1, 1000],
    ['PROBE_THREADS', 'probeThreads', 1, 256],
    ['SHUTDOWN_GRACE_MS', 'shutdownGraceMs', 0, 3_600_000],
    ['MAX_IN_FLIGHT', 'maxInFlight', 1, 10_000_000],
    ['MAX_JOBS_PER_ACCOUNT', 'maxJobsPerAccount', 1, 10_000],
    ['MAX_PROXIES_IN_FLIGHT_PER_ACCOUNT', 'maxProxiesInFlightPerAccount', 1, 1_000_000_000],
    ['RATE_LIMIT_PER_S', 'rateLimitPerS', 1, 1_000_000],
    ['RATE_LIMIT_BURST', 'rateLimitBurst', 1, 1_000_000],
    ['WS_MAX_PER_ACCOUNT', 'wsMaxPerAccount', 1, 1_000_000],
    ['WS_MAX_PER_ADDRESS', 'wsMaxPerAddress', 1, 1_000_000],
    ['NODE_LEASE_MS', 'nodeLeaseMs', 300, 3_600_000],
    ['ORPHAN_SWEEP_MS', 'orphanSweepMs', 100, 3_600_000],
    ['GATEWAY_PORT', 'gatewayPort', 0, 65535],
    ['GATEWAY_MAX_CONNECTIONS', 'gatewayMaxConnections', 1, 1_000_000],
    ['GATEWAY_MAX_CLIENTS', 'gatewayMaxClients', 1, 1_000_000],
    ['GATEWAY_IDLE_TIMEOUT_S', 'gatewayIdleTimeoutS', 1, 86_400],
    ['GATEWAY_CONNECT_TIMEOUT_MS', 'gatewayConnectTimeoutMs', 100, 120_000],
  ];

  for (const [name, key, min, max] of ints) {
    test(`${name}: bounds accepted, trimmed`, () => {
      expect(parseConfig({ [name]: String(min) }, CWD)[key]).toBe(min);
      expect(parseConfig({ [name]: String(max) }, CWD)[key]).toBe(max);
      expect(parseConfig({ [name]: ` ${max} \n` }, CWD)[key]).toBe(max);
      expect(parseConfig({ [name]: `000${min}` }, CWD)[key]).toBe(min);
    });

    test(`${name}: out of range and non-integers are refused with a one-line message`, () => {
      expect(errorOf({ [name]: String(max + 1) }).message).toBe(
        `${name} must be an integer from ${min} to ${max}, got ${max + 1}`,
      );
      if (min > 0) {
        expect(errorOf({ [name]: String(min - 1) }).message).toBe(
          `${name} must be an integer from ${min} to ${max}, got ${min - 1}`,
        );
      }
      for (const bad of ['-1', '1.5', '1e3', 'abc', '0x10', '12 34', '+5', 'Infinity']) {
        expect(errorOf({ [name]: bad }).message).toBe(`${name} must be an integer from ${min} to ${max}, got "${bad}"`);
      }
      expect(errorOf({ [name]: '9'.repeat(400) }).message).toStartWith(`${name} must be an integer from ${min} to ${max}, got `);
    });

    test(`${name}: every integer in range parses to itself`, () => {
      fc.assert(
        fc.property(fc.integer({ min, max }), (n) => parseConfig({ [name]: String(n) }, CWD)[key] === n),
        { numRuns: 50 },
      );
    });
  }
});

describe('boolean variables', () => {
  const bools: [string, keyof Config][] = [
    ['ALLOW_PRIVATE_TARGETS', 'allowPrivateTargets'],
    ['WS_REQUIRE_AUTH', 'wsRequireAuth'],
  ];
  for (const [name, key] of bools) {
    test(`${name}: true/false spellings, any case`, () => {
      for (const v of ['1', 'true', 'yes', 'on', 'TRUE', 'Yes', ' On ']) expect(parseConfig({ [name]: v }, CWD)[key]).toBe(true);
      for (const v of ['0', 'false', 'no', 'off', 'FALSE', 'No', ' OFF ']) expect(parseConfig({ [name]: v }, CWD)[key]).toBe(false);
    });
    test(`${name}: anything else is refused`, () => {
      for (const v of ['maybe', '2', 'y', 'enabled']) {
        expect(errorOf({ [name]: v }).message).toBe(`${name} must be true or false, got "${v}"`);
      }
    });
  }
});

describe('URLs', () => {
  for (const name of ['BASE_URL', 'CONTENT_URL', 'JUDGE_URL'] as const) {
    const key = ({ BASE_URL: 'baseUrl', CONTENT_URL: 'contentUrl', JUDGE_URL: 'judgeUrl' } as const)[name];
    test(`${name}: http and https accepted, trailing slashes and whitespace trimmed`, () => {
      expect(parseConfig({ [name]: 'https://api.example.com' }, CWD)[key]).toBe('https://api.example.com');
      expect(parseConfig({ [name]: 'https://api.example.com/' }, CWD)[key]).toBe('https://api.example.com');
      expect(parseConfig({ [name]: '  http://api.example.com:8080/v1///  ' }, CWD)[key]).toBe('http://api.example.com:8080/v1');
      expect(parseConfig({ [name]: 'http://127.0.0.1:9/judge' }, CWD)[key]).toBe('http://127.0.0.1:9/judge');
    });
    test(`${name}: not absolute or wrong scheme is refused`, () => {
      expect(errorOf({ [name]: 'api.example.com' }).message).toBe(`${name} must be an absolute URL, got "api.example.com"`);
      expect(errorOf({ [name]: '/relative/path' }).message).toBe(`${name} must be an absolute URL, got "/relative/path"`);
      expect(errorOf({ [name]: 'ftp://example.com' }).message).toBe(`${name} must use http: or https:, got "ftp:"`);
      expect(errorOf({ [name]: 'postgres://h/db' }).message).toBe(`${name} must use http: or https:, got "postgres:"`);
    });
  }

  test('DATABASE_URL: postgres and postgresql accepted, others refused', () => {
    expect(parseConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/app' }, CWD).databaseUrl).toBe(
      'postgres://postgres@127.0.0.1:5432/app',
    );
    expect(parseConfig({ DATABASE_URL: ' postgresql://u:p@db/app ' }, CWD).databaseUrl).toBe('postgresql://u:p@db/app');
    expect(errorOf({ DATABASE_URL: 'mysql://db/app' }).message).toBe('DATABASE_URL must use postgres: or postgresql:, got "mysql:"');
    expect(errorOf({ DATABASE_URL: 'not a url' }).message).toBe('DATABASE_URL must be an absolute URL, got "not a url"');
  });

  test('BASE_URL defaults from HOST and PORT; wildcard hosts are shown as 127.0.0.1, IPv6 in brackets', () => {
    expect(parseConfig({ PORT: '8080' }, CWD).baseUrl).toBe('http://127.0.0.1:8080');
    expect(parseConfig({ HOST: '::', PORT: '81' }, CWD).baseUrl).toBe('http://127.0.0.1:81');
    expect(parseConfig({ HOST: '10.1.2.3' }, CWD).baseUrl).toBe('http://10.1.2.3:3000');
    expect(parseConfig({ HOST: ' localhost ' }, CWD)).toMatchObject({ host: 'localhost', baseUrl: 'http://localhost:3000' });
    expect(parseConfig({ HOST: '::1', PORT: '4000' }, CWD)).toMatchObject({ host: '::1', baseUrl: 'http://[::1]:4000' });
  });

  test('ADMIN_HOST: loopback unless set, trimmed, independent of HOST; reachableHost gives the URL host of a listener', () => {
    expect(parseConfig({ HOST: '0.0.0.0' }, CWD).adminHost).toBe('127.0.0.1');
    expect(parseConfig({ ADMIN_HOST: ' 10.0.0.5 ' }, CWD)).toMatchObject({ adminHost: '10.0.0.5', host: '0.0.0.0' });
    expect(parseConfig({ ADMIN_HOST: '::1', ADMIN_PORT: '3001' }, CWD)).toMatchObject({ adminHost: '::1', adminPort: 3001, port: 3000 });
    expect(['0.0.0.0', '::', '::1', '10.0.0.5', 'localhost'].map(reachableHost)).toEqual(['127.0.0.1', '127.0.0.1', '[::1]', '10.0.0.5', 'localhost']);
  });

  test('CONTENT_URL defaults to BASE_URL (explicit or derived)', () => {
    expect(parseConfig({ BASE_URL: 'https://api.example.com/' }, CWD).contentUrl).toBe('https://api.example.com');
    expect(parseConfig({ PORT: '5000' }, CWD).contentUrl).toBe('http://127.0.0.1:5000');
    const cfg = parseConfig({ BASE_URL: 'https://api.example.com', CONTENT_URL: 'https://cdn.example.com/' }, CWD);
    expect(cfg).toMatchObject({ baseUrl: 'https://api.example.com', contentUrl: 'https://cdn.example.com' });
  });
});

describe('DATA_DIR', () => {
  test('absolute paths are kept, relative ones resolve against the working directory', () => {
    expect(parseConfig({ DATA_DIR: '/var/lib/proxycheck' }, CWD).dataDir).toBe('/var/lib/proxycheck');
    expect(parseConfig({ DATA_DIR: 'state' }, CWD).dataDir).toBe('/srv/app/state');
    expect(parseConfig({ DATA_DIR: './a/b/' }, CWD).dataDir).toBe('/srv/app/a/b');
    expect(parseConfig({ DATA_DIR: '../shared/data' }, CWD).dataDir).toBe('/srv/shared/data');
    expect(parseConfig({ DATA_DIR: ' data2 ' }, '/other').dataDir).toBe('/other/data2');
    expect(parseConfig({}, '/other').dataDir).toBe('/other/data');
  });
});

describe('secrets and keys', () => {
  for (const name of ['RESULT_SECRET', 'ADMIN_TOKEN', 'JUDGE_KEY'] as const) {
    const key = name === 'RESULT_SECRET' ? 'resultSecret' : name === 'ADMIN_TOKEN' ? 'adminToken' : 'judgeKey';
    test(`${name}: at least 16 characters after trimming`, () => {
      expect(parseConfig({ [name]: 'x'.repeat(16) }, CWD)[key]).toBe('x'.repeat(16));
      expect(parseConfig({ [name]: `  ${'y'.repeat(40)}  ` }, CWD)[key]).toBe('y'.repeat(40));
      expect(errorOf({ [name]: 'x'.repeat(15) }).message).toBe(`${name} must be at least 16 characters`);
      expect(errorOf({ [name]: `  ${'x'.repeat(15)}  ` }).message).toBe(`${name} must be at least 16 characters`);
    });
  }

  test('BOOTSTRAP_API_KEY: 16..200 printable characters without spaces', () => {
    const msg = 'BOOTSTRAP_API_KEY must be 16 to 200 printable characters without spaces';
    expect(parseConfig({ BOOTSTRAP_API_KEY: 'k'.repeat(16) }, CWD).bootstrapApiKey).toBe('k'.repeat(16));
    expect(parseConfig({ BOOTSTRAP_API_KEY: 'k'.repeat(200) }, CWD).bootstrapApiKey).toBe('k'.repeat(200));
    expect(parseConfig({ BOOTSTRAP_API_KEY: ' pk_live_!#$%&()*+,-./:;<=>?@[]^_`{|}~ ' }, CWD).bootstrapApiKey).toBe(
      'pk_live_!#$%&()*+,-./:;<=>?@[]^_`{|}~',
    );
    for (const bad of ['k'.repeat(15), 'k'.repeat(201), 'abcdefgh ijklmnop', 'abcdefgh\tijklmnop', 'ключключключключ', 'abcdefghijklmnop\u0000']) {
      expect(errorOf({ BOOTSTRAP_API_KEY: bad }).message).toBe(msg);
    }
  });

  test('the error message never echoes a secret value', () => {
    expect(errorOf({ RESULT_SECRET: 'short-secret' }).message).not.toContain('short-secret');
    expect(errorOf({ ADMIN_TOKEN: 'short-token' }).message).not.toContain('short-token');
    expect(errorOf({ JUDGE_KEY: 'short-key' }).message).not.toContain('short-key');
    expect(errorOf({ BOOTSTRAP_API_KEY: 'short key value' }).message).not.toContain('short key value');
  });
});

describe('NODE_ID', () => {
  test('letters, digits and . _ : - up to 64 characters, trimmed', () => {
    for (const ok of ['a', 'api-1', 'eu-west.node_2:blue', 'N'.repeat(64)]) expect(parseConfig({ NODE_ID: ` ${ok} ` }, CWD).nodeId).toBe(ok);
  });

  test('anything else is refused with a one-line message', () => {
    for (const bad of ['-a', '.a', 'a b', 'a/b', 'é', 'N'.repeat(65), "a'b"]) {
      expect(errorOf({ NODE_ID: bad }).message).toBe('NODE_ID must be 1 to 64 characters: letters, digits, and . _ : - (not first)');
    }
  });
});

describe('the TLS judge', () => {
  const FP = 'ab'.repeat(32);
  const CANONICAL = Array(32).fill('AB').join(':');

  test('JUDGE_TLS_URL and JUDGE_TLS_FINGERPRINT together; the fingerprint normalised', () => {
    const cfg = parseConfig({ JUDGE_TLS_URL: 'https://judge.example:8443/judge', JUDGE_TLS_FINGERPRINT: FP }, CWD);
    expect(cfg.judgeTlsUrl).toBe('https://judge.example:8443/judge');
    expect(cfg.judgeTlsFingerprint).toBe(CANONICAL);
    expect(parseConfig({ JUDGE_TLS_URL: 'https://j.example/', JUDGE_TLS_FINGERPRINT: ` sha256:${CANONICAL.toLowerCase()} ` }, CWD).judgeTlsFingerprint).toBe(CANONICAL);
  });

  test('one without the other is a config error naming both', () => {
    for (const env of [{ JUDGE_TLS_URL: 'https://j.example/' }, { JUDGE_TLS_FINGERPRINT: FP }] as Record<string, string>[]) {
      const err = errorOf(env);
      expect(err.message).toContain('JUDGE_TLS_URL');
      expect(err.message).toContain('JUDGE_TLS_FINGERPRINT');
    }
  });

  test('JUDGE_TLS_URL must be https; the fingerprint must be 32 bytes of hex', () => {
    expect(errorOf({ JUDGE_TLS_URL: 'http://j.example/', JUDGE_TLS_FINGERPRINT: FP }).message).toContain('JUDGE_TLS_URL must use https:');
    for (const bad of ['ab'.repeat(31), 'zz'.repeat(32), `${FP}00`, 'AB:CD']) {
      expect(errorOf({ JUDGE_TLS_URL: 'https://j.example/', JUDGE_TLS_FINGERPRINT: bad }).message).toContain('JUDGE_TLS_FINGERPRINT must be a SHA-256 fingerprint');
    }
  });

  test('JUDGE_TLS_PORT 0..65535 (0: a free port); JUDGE_TLS=false turns the https check off', () => {
    expect(parseConfig({ JUDGE_TLS_PORT: '8443' }, CWD).judgeTlsPort).toBe(8443);
    expect(errorOf({ JUDGE_TLS_PORT: '70000' }).message).toContain('JUDGE_TLS_PORT');
    expect(parseConfig({ JUDGE_TLS: 'false' }, CWD).judgeTls).toBe(false);
  });
});

describe('TLS_CA_FILE', () => {
  test('kept as given (trimmed); the file is not read here', () => {
    expect(parseConfig({ TLS_CA_FILE: ' /etc/ssl/extra-ca.pem ' }, CWD).tlsCaFile).toBe('/etc/ssl/extra-ca.pem');
    expect(parseConfig({ TLS_CA_FILE: '/does/not/exist.pem' }, CWD).tlsCaFile).toBe('/does/not/exist.pem');
  });
});

describe('LOG_LEVEL', () => {
  test('each level in any case', () => {
    for (const l of ['debug', 'info', 'warn', 'error', 'silent'] as const) {
      expect(parseConfig({ LOG_LEVEL: l }, CWD).logLevel).toBe(l);
      expect(parseConfig({ LOG_LEVEL: ` ${l.toUpperCase()} ` }, CWD).logLevel).toBe(l);
    }
  });
  test('anything else is refused', () => {
    expect(errorOf({ LOG_LEVEL: 'verbose' }).message).toBe('LOG_LEVEL must be one of debug, info, warn, error, silent, got "verbose"');
    expect(errorOf({ LOG_LEVEL: 'TRACE' }).message).toStartWith('LOG_LEVEL must be one of debug, info, warn, error, silent, got ');
  });
});

describe('CHECKER_IPS', () => {
  test('comma-separated IPv4 and IPv6, trimmed, lower-cased, empty items skipped', () => {
    expect(parseConfig({ CHECKER_IPS: '203.0.113.7' }, CWD).checkerIps).toEqual(['203.0.113.7']);
    expect(parseConfig({ CHECKER_IPS: ' 203.0.113.7 , 2001:DB8::1,,198.51.100.0, ' }, CWD).checkerIps).toEqual([
      '203.0.113.7',
      '2001:db8::1',
      '198.51.100.0',
    ]);
    expect(parseConfig({ CHECKER_IPS: '::1,::ffff:192.0.2.1,0.0.0.0,255.255.255.255' }, CWD).checkerIps).toEqual([
      '::1',
      '::ffff:192.0.2.1',
      '0.0.0.0',
      '255.255.255.255',
    ]);
    expect(parseConfig({ CHECKER_IPS: ' , ,' }, CWD).checkerIps).toEqual([]);
  });

  test('anything that is not an IP address is refused, naming the bad item', () => {
    for (const bad of ['256.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', 'example.com', '1.2.3.4/24', '1.2.3.4:80', ':', '1:2', 'gggg::1', ':::::::::', 'fe80::1%eth0', '1.2.3.4 5.6.7.8']) {
      expect(errorOf({ CHECKER_IPS: `203.0.113.7, ${bad}` }).message).toBe(
        `CHECKER_IPS must be a comma-separated list of IP addresses, got "${bad}"`,
      );
    }
  });

  test('every IPv4 address is accepted as written', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const out = parseConfig({ CHECKER_IPS: ip }, CWD).checkerIps;
        return out.length === 1 && out[0] === ip;
      }),
      { numRuns: 200 },
    );
  });

  test('every IPv6 address is accepted, lower-cased', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const out = parseConfig({ CHECKER_IPS: ip.toUpperCase() }, CWD).checkerIps;
        return out.length === 1 && out[0] === ip.toLowerCase();
      }),
      { numRuns: 200 },
    );
  });
});

describe('cluster roles (NATS_URL, ROLE, REGION, agent and timing settings)', () => {
  const PG = 'postgres://u@db:5432/pc';
  const NATS = 'nats://127.0.0.1:4222';

  test('no NATS_URL is the embedded process, whatever else is set', () => {
    expect(parseConfig({ REGION: 'us1' }, CWD).role).toBe('embedded');
    expect(parseConfig({}, CWD).natsUrl).toBeUndefined();
  });

  test('NATS_URL without ROLE is ROLE=all, which needs DATABASE_URL and REGION', () => {
    const c = parseConfig({ NATS_URL: NATS, DATABASE_URL: PG, REGION: 'de1' }, CWD);
    expect(c).toMatchObject({ role: 'all', natsUrl: NATS, region: 'de1' });
    expect(errorOf({ NATS_URL: NATS, REGION: 'de1' }).message).toContain('DATABASE_URL');
    expect(errorOf({ NATS_URL: NATS, DATABASE_URL: PG }).message).toContain('REGION');
  });

  test('ROLE=api needs DATABASE_URL (PGlite is one process), not REGION', () => {
    expect(parseConfig({ NATS_URL: NATS, ROLE: 'api', DATABASE_URL: PG }, CWD)).toMatchObject({ role: 'api', region: undefined });
    expect(errorOf({ NATS_URL: NATS, ROLE: 'api' }).message).toBe('ROLE=api with NATS_URL needs DATABASE_URL (PostgreSQL): the embedded database is one process\'s');
  });

  test('ROLE=agent needs no database but a known region (test1 too)', () => {
    expect(parseConfig({ NATS_URL: NATS, ROLE: 'agent', REGION: 'test1' }, CWD)).toMatchObject({ role: 'agent', region: 'test1', databaseUrl: undefined });
    expect(errorOf({ NATS_URL: NATS, ROLE: 'agent', REGION: 'xx9' }).message).toContain('REGION');
    expect(errorOf({ NATS_URL: NATS, ROLE: 'agent' }).message).toContain('REGION');
  });

  test('ROLE without NATS_URL, an unknown ROLE and a bad NATS_URL are errors', () => {
    expect(errorOf({ ROLE: 'api', DATABASE_URL: PG }).message).toContain('NATS_URL');
    expect(errorOf({ NATS_URL: NATS, ROLE: 'boss' }).message).toContain('ROLE must be one of');
    expect(errorOf({ NATS_URL: 'http://x:1' }).message).toContain('NATS_URL');
    expect(errorOf({ NATS_URL: 'not a url' }).message).toContain('NATS_URL');
  });

  test('several servers, comma-separated', () => {
    expect(parseConfig({ NATS_URL: 'nats://a:1, nats://b:2', ROLE: 'agent', REGION: 'us1' }, CWD).natsUrl).toBe('nats://a:1,nats://b:2');
  });

  test('ids that name subjects: NODE_ID in a cluster, AGENT_ID', () => {
    const agent = { NATS_URL: NATS, ROLE: 'agent', REGION: 'us1' };
    expect(parseConfig({ ...agent, AGENT_ID: 'a-1_x' }, CWD).agentId).toBe('a-1_x');
    expect(errorOf({ ...agent, AGENT_ID: 'a.b' }).message).toContain('AGENT_ID');
    expect(errorOf({ ...agent, NODE_ID: 'n.1' }).message).toContain('NODE_ID');
    // embedded: NODE_ID keeps its wider alphabet
    expect(parseConfig({ NODE_ID: 'n.1:x' }, CWD).nodeId).toBe('n.1:x');
  });

  test('timings and slots: bounds, and the TTL covers two heartbeats', () => {
    const agent = { NATS_URL: NATS, ROLE: 'agent', REGION: 'us1' };
    expect(parseConfig({ ...agent, AGENT_SLOTS: '300', CLUSTER_ACK_WAIT_MS: '2000', AGENT_HEARTBEAT_MS: '500', AGENT_TTL_MS: '1500', CLUSTER_SHARD_DEADLINE_MS: '5000' }, CWD)).toMatchObject({
      agentSlots: 300,
      clusterAckWaitMs: 2000,
      agentHeartbeatMs: 500,
      agentTtlMs: 1500,
      clusterShardDeadlineMs: 5000,
    });
    expect(errorOf({ ...agent, AGENT_SLOTS: '0' }).message).toContain('AGENT_SLOTS');
    expect(errorOf({ ...agent, CLUSTER_ACK_WAIT_MS: '10' }).message).toContain('CLUSTER_ACK_WAIT_MS');
    expect(errorOf({ ...agent, AGENT_HEARTBEAT_MS: '2000', AGENT_TTL_MS: '3000' }).message).toContain('AGENT_TTL_MS');
  });
});
