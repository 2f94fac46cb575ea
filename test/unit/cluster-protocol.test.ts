import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  decodeCancel,
  decodeHeartbeat,
  decodeNodeDemand,
  decodeReportReply,
  decodeResults,
  DEMAND_MAX_REGIONS,
  decodeWorkShard,
  encode,
  encodeReport,
  isSubjectToken,
  PROTOCOL_VERSION,
  SHARD_MAX_TASKS,
  toSubjectToken,
  type AgentHeartbeat,
  type ResultsReport,
  type WorkShard,
} from '../../src/cluster/protocol';
import type { CustomUrlResult, ProbeResult } from '../../src/probe/types';
import { isServiceError } from '../../src/errors';
import { JOB_ERROR_CODES } from '../../src/error-codes';

const shard: WorkShard = {
  v: PROTOCOL_VERSION,
  node: 'api-1',
  run: 'run_abc',
  shard: '7-0',
  kind: 'probe',
  type: 'http',
  timeoutMs: 5000,
  tasks: [{ index: 3, proxy: { host: '127.0.0.1', port: 8080 } }, { index: 4, proxy: { host: 'p.example', port: 1, username: 'u', password: 'p' } }],
};
const hb: AgentHeartbeat = { v: PROTOCOL_VERSION, region: 'us1', agent: 'a1', slots: 100, inFlight: 3, exitIps: ['10.0.0.1'], version: '1.0.0', judgeUrl: 'http://10.0.0.1:3000/judge' };

function rejects(f: () => unknown): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(isServiceError(caught, JOB_ERROR_CODES.CLUSTER_MESSAGE_INVALID)).toBe(true);
}

describe('round trips', () => {
  test('a probe shard, a custom-URL shard, results, replies, cancel, heartbeat', () => {
    expect(decodeWorkShard(encode(shard))).toEqual(shard);
    const url = { ...shard, kind: 'custom_url' as const, rules: [{ url: 'https://x.test/', requiredStatusCodes: [200], caseSensitive: false, requiredText: 'ok' }] };
    expect(decodeWorkShard(encode(url))).toEqual(url);
    const results: ProbeResult[] = [
      { index: 3, status: 'working', statusCode: 200, responseTimeMs: 12.5, anonymity: 'elite', origin: '1.2.3.4', error: null, protocols: ['http'], https: true },
      { index: 4, status: 'failed', statusCode: null, responseTimeMs: 5000, anonymity: null, origin: null, error: { code: 'timeout', message: 'x' } },
      { index: 5, status: 'working', statusCode: 200, responseTimeMs: 1, anonymity: 'transparent', origin: null, error: null, https: false },
      { index: 6, status: 'failed', statusCode: 502, responseTimeMs: 2, anonymity: null, origin: null, error: { code: 'tls_intercepted', message: 'm', certificate: { subject: 'CN=x', fingerprint: 'AA:BB' } }, protocols: [] },
    ];
    const report: ResultsReport = {
      agent: 'a',
      shards: [
        { shard: '7-0', delivery: 1, start: true, results },
        { shard: '7-1', delivery: 2, done: true },
        { shard: '7-2', delivery: 1, start: true, results: [results[1]!], done: true },
      ],
    };
    expect(decodeResults(encodeReport(report))).toEqual(report);
    const urlResults: CustomUrlResult[] = [
      { index: 1, urlIndex: 0, success: true, statusCode: 200, responseTimeMs: 3, error: null },
      { index: 1, urlIndex: 1, success: false, statusCode: null, responseTimeMs: 3, error: { code: 'timeout', message: 't' } },
    ];
    const urlReport: ResultsReport = { agent: 'a', shards: [{ shard: 's', delivery: 1, results: urlResults }] };
    expect(decodeResults(encodeReport(urlReport))).toEqual(urlReport);
    expect(decodeReportReply(encode({ missing: ['7-1'] }))).toEqual({ missing: ['7-1'] });
    expect(decodeCancel(encode({ node: 'n', run: 'run x' }))).toEqual({ node: 'n', run: 'run x' });
    expect(decodeHeartbeat(encode(hb))).toEqual(hb);
    const demand = { v: PROTOCOL_VERSION, node: 'api-1', regions: { us1: 200, de1: 1 } };
    expect(decodeNodeDemand(encode(demand))).toEqual(demand);
    expect(decodeNodeDemand(encode({ ...demand, regions: {} }))).toEqual({ ...demand, regions: {} });
    const withBackground = { ...demand, background: { us1: 150 } };
    expect(decodeNodeDemand(encode(withBackground))).toEqual(withBackground);
  });
});

describe('malformed messages are rejected', () => {
  test('shards', () => {
    rejects(() => decodeWorkShard('nope'));
    rejects(() => decodeWorkShard('[]'));
    rejects(() => decodeWorkShard(encode({ ...shard, v: PROTOCOL_VERSION + 1 })));
    rejects(() => decodeWorkShard(encode({ ...shard, node: 'a.b' })));
    rejects(() => decodeWorkShard(encode({ ...shard, shard: 'x y' })));
    rejects(() => decodeWorkShard(encode({ ...shard, type: 'ftp' as never })));
    rejects(() => decodeWorkShard(encode({ ...shard, timeoutMs: 0 })));
    rejects(() => decodeWorkShard(encode({ ...shard, tasks: [] })));
    rejects(() => decodeWorkShard(encode({ ...shard, tasks: [{ index: -1, proxy: { host: 'h', port: 1 } }] })));
    rejects(() => decodeWorkShard(encode({ ...shard, tasks: [{ index: 1, proxy: { host: 'h', port: 70000 } }] })));
    const many = Array.from({ length: SHARD_MAX_TASKS + 1 }, (_, i) => ({ index: i, proxy: { host: 'h', port: 1 } }));
    rejects(() => decodeWorkShard(encode({ ...shard, tasks: many })));
    rejects(() => decodeWorkShard(encode({ ...shard, kind: 'custom_url' })));
    rejects(() => decodeWorkShard(encode({ ...shard, rules: [] })));
  });

  test('results, replies, cancels, heartbeats', () => {
    const r = (shards: unknown) => JSON.stringify({ agent: 'a', shards });
    const ok = [3, 0, null, 5000, null, null, ['timeout', 'x']];
    expect(decodeResults(r([{ shard: 's', delivery: 1, results: [ok] }])).shards[0]!.results).toHaveLength(1);
    rejects(() => decodeResults(r([])));
    rejects(() => decodeResults(JSON.stringify({ agent: 'a.b', shards: [{ shard: 's', delivery: 1, start: true }] })));
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1 }]))); // nothing to say
    rejects(() => decodeResults(r([{ shard: 's', delivery: 0, start: true }])));
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, start: false }])));
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, done: 1 }])));
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, start: true }, { shard: 's', delivery: 1, done: true }]))); // a shard twice
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [] }])));
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [{ index: 1, status: 'failed' }] }]))); // the object form
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[3, 2, null, 1, null, null, null]] }]))); // status 2
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[3, 0, null, -1, null, null, null]] }]))); // negative time
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[3, 0, null, 1, 'open', null, null]] }]))); // anonymity
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[3, 0, null, 1, null, null, ['nope', 'x']]] }]))); // error code
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[3, 0, null, 1, null, null, null, null]] }]))); // null protocols without https
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[3, 0, null, 1, null, null, null, ['ftp']]] }])));
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[3, 0, null, 1, null, null, null, null, 'yes']] }])));
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [ok, [1, 0, 1, 200, 3, null]] }]))); // two kinds in one shard
    rejects(() => decodeResults(r([{ shard: 's', delivery: 1, results: [[1, 0, 2, 200, 3, null]] }]))); // success 2
    rejects(() => decodeReportReply('{"ok":true}'));
    rejects(() => decodeReportReply('{"missing":["a b"]}'));
    rejects(() => decodeCancel('{"node":"n"}'));
    rejects(() => decodeHeartbeat(encode({ ...hb, slots: 0 })));
    rejects(() => decodeHeartbeat(encode({ ...hb, region: 'u.s' })));
    const demand = { v: PROTOCOL_VERSION, node: 'api-1', regions: { us1: 2 } };
    rejects(() => decodeNodeDemand(encode({ ...demand, v: PROTOCOL_VERSION + 1 })));
    rejects(() => decodeNodeDemand(encode({ ...demand, node: 'a b' })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: [] as never })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: { us1: 0 } })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: { us1: 1.5 } })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: { 'u.s': 1 } })));
    const many = Object.fromEntries(Array.from({ length: DEMAND_MAX_REGIONS + 1 }, (_, i) => [`r${i}`, 1]));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: many })));
    rejects(() => decodeNodeDemand(encode({ ...demand, background: [] as never })));
    rejects(() => decodeNodeDemand(encode({ ...demand, background: { us1: 3 } }))); // more than the region's demand
    rejects(() => decodeNodeDemand(encode({ ...demand, background: { de1: 1 } }))); // a region with no demand
    rejects(() => decodeNodeDemand(encode({ ...demand, background: { us1: 0 } })));
    rejects(() => decodeNodeDemand(encode({ ...demand, background: { us1: 1.5 } })));
    // a region named __proto__ stays an own data property
    const proto = decodeNodeDemand(`{"v":${PROTOCOL_VERSION},"node":"n","regions":{"__proto__":3}}`);
    expect(Object.hasOwn(proto.regions, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(proto.regions)).toBe(Object.prototype);
  });

  test('fuzz: any bytes or JSON value either decode to a valid message or throw cluster_message_invalid', () => {
    const decoders = [decodeWorkShard, decodeResults, decodeReportReply, decodeCancel, decodeHeartbeat, decodeNodeDemand];
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.uint8Array().map((b) => new TextDecoder().decode(b))), (input) => {
        for (const d of decoders) {
          try {
            d(input);
          } catch (e) {
            expect(isServiceError(e, JOB_ERROR_CODES.CLUSTER_MESSAGE_INVALID)).toBe(true);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('fuzz: a mutated field of a valid shard is never accepted with a wrong type', () => {
    fc.assert(
      fc.property(fc.constantFrom('v', 'node', 'run', 'shard', 'kind', 'type', 'timeoutMs', 'tasks'), fc.jsonValue(), (field, value) => {
        const m = { ...shard, [field]: value };
        let d: WorkShard | null = null;
        try {
          d = decodeWorkShard(JSON.stringify(m));
        } catch (e) {
          if (!isServiceError(e, JOB_ERROR_CODES.CLUSTER_MESSAGE_INVALID)) throw e;
        }
        if (d !== null) {
          expect(isSubjectToken(d.node) && isSubjectToken(d.shard)).toBe(true);
          expect(Number.isSafeInteger(d.timeoutMs)).toBe(true);
          expect(d.tasks.length).toBeGreaterThan(0);
        }
      }),
    );
  });
});

test('fuzz: any probe result survives the compact form unchanged', () => {
  const err = fc.option(fc.record({ code: fc.constantFrom('timeout' as const, 'tls_intercepted' as const), message: fc.string() }), { nil: null });
  const probe = fc.record(
    {
      index: fc.nat(),
      status: fc.constantFrom('working' as const, 'failed' as const),
      statusCode: fc.option(fc.integer({ min: 0, max: 999 }), { nil: null }),
      responseTimeMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
      anonymity: fc.constantFrom(null, 'elite' as const, 'anonymous' as const, 'transparent' as const),
      origin: fc.option(fc.string({ maxLength: 40 }), { nil: null }),
      error: err,
      protocols: fc.subarray(['socks5' as const, 'socks4' as const, 'http' as const]),
      https: fc.boolean(),
    },
    { requiredKeys: ['index', 'status', 'statusCode', 'responseTimeMs', 'anonymity', 'origin', 'error'] },
  );
  fc.assert(
    fc.property(fc.array(probe, { minLength: 1, maxLength: 5 }), (results) => {
      const report: ResultsReport = { agent: 'a', shards: [{ shard: 's', delivery: 1, results: results as ProbeResult[] }] };
      expect(decodeResults(encodeReport(report))).toEqual(JSON.parse(JSON.stringify(report)));
    }),
  );
});

test('toSubjectToken makes any id subject-safe', () => {
  fc.assert(fc.property(fc.string(), (s) => expect(isSubjectToken(toSubjectToken(s))).toBe(true)));
  expect(toSubjectToken('host.example-1')).toBe('host_example-1');
});
