import { describe, expect, test } from 'bun:test';
import { AgentTable } from '../../src/cluster/registry';
import { PROTOCOL_VERSION, type AgentHeartbeat } from '../../src/cluster/protocol';

const hb = (region: string, agent: string, slots: number): AgentHeartbeat => ({ v: PROTOCOL_VERSION, region, agent, slots, inFlight: 0, exitIps: [], version: '1', judgeUrl: 'http://j/judge' });

describe('AgentTable', () => {
  test('capacity is the sum of live agents\' slots; an entry expires ttl after the last put received', () => {
    const t = new AgentTable(1000);
    expect(t.put('us1.a', hb('us1', 'a', 10), 0)).toBe('us1');
    t.put('us1.b', hb('us1', 'b', 5), 500);
    t.put('de1.c', hb('de1', 'c', 7), 500);
    expect(t.capacity('us1', 600)).toBe(15);
    expect(t.agentCount('us1', 600)).toBe(2);
    expect(t.capacity('fr1', 600)).toBe(0);
    // a is not renewed: gone at 1000 even before expire() runs
    expect(t.capacity('us1', 1000)).toBe(5);
    t.put('us1.b', hb('us1', 'b', 5), 1400); // renewed
    expect(t.expire(1000)).toEqual(['us1']);
    expect(t.expire(1600)).toEqual(['de1']);
    expect(t.list(1600).map((a) => a.agent)).toEqual(['b']);
    expect(t.expire(2400)).toEqual(['us1']);
    expect(t.capacity('us1', 2400)).toBe(0);
  });

  test('a delete removes the agent at once', () => {
    const t = new AgentTable(1000);
    t.put('us1.a', hb('us1', 'a', 10), 0);
    expect(t.remove('us1.a')).toBe('us1');
    expect(t.remove('us1.a')).toBeNull();
    expect(t.capacity('us1', 1)).toBe(0);
  });

  test('list is ordered by region, then agent id', () => {
    const t = new AgentTable(1000);
    t.put('us1.b', hb('us1', 'b', 1), 0);
    t.put('de1.z', hb('de1', 'z', 1), 0);
    t.put('us1.a', hb('us1', 'a', 1), 0);
    expect(t.list(1).map((a) => `${a.region}.${a.agent}`)).toEqual(['de1.z', 'us1.a', 'us1.b']);
  });
});
