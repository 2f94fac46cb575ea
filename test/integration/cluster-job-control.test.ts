/**
 * src/cluster/job-control.ts on a real nats-server (skipped when it is not
 * installed): node A serves its runs on pc.control.A; a client on another
 * connection asks for progress and cancels; a node nobody serves, a node that
 * does not answer in time, and a malformed reply are all `unreachable`; a
 * malformed request gets no answer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { controlSubject } from '../../src/cluster/control-wire';
import { jobControlClient, serveJobControl, type ControlledRuns } from '../../src/cluster/job-control';
import { memoryLogger } from '../../src/log';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';

describe.skipIf(!HAVE_NATS_SERVER)('job control over NATS', () => {
  let nats: NatsServer;
  let ncA: NatsConnection, ncB: NatsConnection;
  let served: Subscription;
  const cancelled: string[] = [];
  let release: () => void = () => {};
  const runs: ControlledRuns = {
    runProgress: (run) => (run === 'run_live' ? { checked: 5, total: 9, working: 2 } : null),
    cancelRun: async (run) => {
      if (run !== 'run_live' && run !== 'run_slow') return null;
      if (run === 'run_slow') await new Promise<void>((r) => (release = r));
      cancelled.push(run);
      return 'failed';
    },
  };
  const log = memoryLogger('debug');

  beforeAll(async () => {
    nats = await startNatsServer();
    ncA = await connect({ servers: nats.url });
    ncB = await connect({ servers: nats.url });
    served = serveJobControl(ncA, 'node-a', runs, log);
    await ncA.flush();
  });
  afterAll(async () => {
    served?.unsubscribe();
    await ncA?.close();
    await ncB?.close();
    await nats?.stop();
  });

  test('progress and cancel of a run the node holds; not_running for one it does not', async () => {
    const client = jobControlClient(ncB, log);
    expect(await client.progress('node-a', 'run_live')).toEqual({ checked: 5, total: 9, working: 2 });
    expect(await client.progress('node-a', 'run_gone')).toBe('not_running');
    expect(await client.cancel('node-a', 'run_gone')).toBe('not_running');
    expect(await client.cancel('node-a', 'run_live')).toBe('failed');
    expect(cancelled).toEqual(['run_live']);
  });

  test('the cancel reply waits for the settlement', async () => {
    const client = jobControlClient(ncB, log);
    let answered = false;
    const pending = client.cancel('node-a', 'run_slow').then((r) => ((answered = true), r));
    await Bun.sleep(100);
    expect(answered).toBe(false);
    release();
    expect(await pending).toBe('failed');
  });

  test('nobody serves the node: unreachable, at once (no responders), nothing logged as a failure', async () => {
    // a timeout far beyond the test's own: only the server's no-responders answer can end these
    const client = jobControlClient(ncB, log, { progressMs: 600_000, cancelMs: 600_000 });
    expect(await client.cancel('node-gone', 'run_live')).toBe('unreachable');
    expect(await client.progress('node-gone', 'run_live')).toBe('unreachable');
    expect(log.lines.some((l) => l.msg === 'job control request got no answer')).toBe(false);
  });

  test('a node that answers too late or with garbage: unreachable; a malformed request gets no reply', async () => {
    const silent = ncA.subscribe(controlSubject('node-silent'), { callback: () => {} });
    const garbage = ncA.subscribe(controlSubject('node-garbage'), { callback: (_e, m) => void m.respond(new TextEncoder().encode('{"v":1,"state":"odd"}')) });
    await ncA.flush();
    const client = jobControlClient(ncB, log, { progressMs: 300, cancelMs: 300 });
    expect(await client.progress('node-silent', 'run_live')).toBe('unreachable');
    expect(await client.cancel('node-garbage', 'run_live')).toBe('unreachable');
    silent.unsubscribe();
    garbage.unsubscribe();
    const asked = ncB.request(controlSubject('node-a'), new TextEncoder().encode('{"op":"cancel"}'), { timeout: 300 });
    expect(await asked.then(() => 'answered', () => 'no answer')).toBe('no answer');
    expect(log.lines.some((l) => l.msg === 'dropped a malformed job control request')).toBe(true);
  });
});
