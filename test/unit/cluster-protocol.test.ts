import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import {
  decodeCancel,
  decodeDoneReply,
  decodeHeartbeat,
  decodeNodeDemand,
  decodeResults,
  DEMAND_MAX_REGIONS,
  decodeWorkShard,
  encode,
  isSubjectToken,
  PROTOCOL_INVALID,
  PROTOCOL_VERSION,
  SHARD_MAX_TASKS,
  toSubjectToken,
  type AgentHeartbeat,
  type WorkShard,
} from '../../src/cluster/protocol';
import { isServiceError } from '../../src/errors';

const shard: WorkShard = {
  v: PROTOCOL_VERSION,
  node: 'api-1',
  job: 'job_abc',
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
  expect(isServiceError(caught, PROTOCOL_INVALID)).toBe(true);
}

describe('round trips', () => {
  test('a probe shard, a custom-URL shard, results, replies, cancel, heartbeat', () => {
    expect(decodeWorkShard(encode(shard))).toEqual(shard);
    const url = { ...shard, kind: 'custom_url' as const, rules: [{ url: 'https://x.test/', requiredStatusCodes: [200], caseSensitive: false, requiredText: 'ok' }] };
    expect(decodeWorkShard(encode(url))).toEqual(url);
    const batch = {
      t: 'batch' as const,
      shard: '7-0',
      results: [
        { index: 3, status: 'working' as const, statusCode: 200, responseTimeMs: 12.5, anonymity: 'elite' as const, origin: '1.2.3.4', error: null, protocols: ['http' as const], https: true },
        { index: 4, status: 'failed' as const, statusCode: null, responseTimeMs: 5000, anonymity: null, origin: null, error: { code: 'timeout' as const, message: 'x' } },
      ],
    };
    expect(decodeResults(encode(batch))).toEqual(batch);
    const urlBatch = { t: 'batch' as const, shard: 's', results: [{ index: 1, urlIndex: 0, success: true, statusCode: 200, responseTimeMs: 3, error: null }] };
    expect(decodeResults(encode(urlBatch))).toEqual(urlBatch);
    expect(decodeResults(encode({ t: 'done', shard: 's', agent: 'a', delivery: 2 }))).toEqual({ t: 'done', shard: 's', agent: 'a', delivery: 2 });
    expect(decodeResults(encode({ t: 'start', shard: 's', agent: 'a', delivery: 1 }))).toEqual({ t: 'start', shard: 's', agent: 'a', delivery: 1 });
    expect(decodeDoneReply(encode({ ok: false }))).toEqual({ ok: false });
    expect(decodeCancel(encode({ node: 'n', job: 'job x' }))).toEqual({ node: 'n', job: 'job x' });
    expect(decodeHeartbeat(encode(hb))).toEqual(hb);
    const demand = { v: PROTOCOL_VERSION, node: 'api-1', regions: { us1: 200, de1: 1 } };
    expect(decodeNodeDemand(encode(demand))).toEqual(demand);
    expect(decodeNodeDemand(encode({ ...demand, regions: {} }))).toEqual({ ...demand, regions: {} });
  });
});

describe('malformed messages are rejected', () => {
  test('shards', () => {
    rejects(() => decodeWorkShard('nope'));
    rejects(() => decodeWorkShard('[]'));
    rejects(() => decodeWorkShard(encode({ ...shard, v: 2 })));
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
    rejects(() => decodeResults(encode({ t: 'batch', shard: 's', results: [] } as never)));
    rejects(() => decodeResults(encode({ t: 'batch', shard: 's', results: [{ index: 1, status: 'ok' }] } as never)));
    rejects(() => decodeResults(encode({ t: 'done', shard: 's', agent: 'a', delivery: 0 })));
    rejects(() => decodeResults(encode({ t: 'what', shard: 's' } as never)));
    rejects(() => decodeDoneReply('{"ok":1}'));
    rejects(() => decodeCancel('{"node":"n"}'));
    rejects(() => decodeHeartbeat(encode({ ...hb, slots: 0 })));
    rejects(() => decodeHeartbeat(encode({ ...hb, region: 'u.s' })));
    const demand = { v: PROTOCOL_VERSION, node: 'api-1', regions: { us1: 2 } };
    rejects(() => decodeNodeDemand(encode({ ...demand, v: 2 })));
    rejects(() => decodeNodeDemand(encode({ ...demand, node: 'a b' })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: [] as never })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: { us1: 0 } })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: { us1: 1.5 } })));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: { 'u.s': 1 } })));
    const many = Object.fromEntries(Array.from({ length: DEMAND_MAX_REGIONS + 1 }, (_, i) => [`r${i}`, 1]));
    rejects(() => decodeNodeDemand(encode({ ...demand, regions: many })));
    // a region named __proto__ stays an own data property
    const proto = decodeNodeDemand('{"v":1,"node":"n","regions":{"__proto__":3}}');
    expect(Object.hasOwn(proto.regions, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(proto.regions)).toBe(Object.prototype);
  });

  test('fuzz: any bytes or JSON value either decode to a valid message or throw cluster_message_invalid', () => {
    const decoders = [decodeWorkShard, decodeResults, decodeDoneReply, decodeCancel, decodeHeartbeat, decodeNodeDemand];
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.uint8Array().map((b) => new TextDecoder().decode(b))), (input) => {
        for (const d of decoders) {
          try {
            d(input);
          } catch (e) {
            expect(isServiceError(e, PROTOCOL_INVALID)).toBe(true);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('fuzz: a mutated field of a valid shard is never accepted with a wrong type', () => {
    fc.assert(
      fc.property(fc.constantFrom('v', 'node', 'job', 'shard', 'kind', 'type', 'timeoutMs', 'tasks'), fc.jsonValue(), (field, value) => {
        const m = { ...shard, [field]: value };
        let d: WorkShard | null = null;
        try {
          d = decodeWorkShard(JSON.stringify(m));
        } catch (e) {
          if (!isServiceError(e, PROTOCOL_INVALID)) throw e;
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

test('toSubjectToken makes any id subject-safe', () => {
  fc.assert(fc.property(fc.string(), (s) => expect(isSubjectToken(toSubjectToken(s))).toBe(true)));
  expect(toSubjectToken('host.example-1')).toBe('host_example-1');
});
