/**
 * A KV bucket watched for as long as a node runs (I/O): every key's history
 * first, then its updates, restarted when the watch ends (a reconnect it did
 * not survive). Used by the agents' registry (registry.ts) and the API nodes'
 * demand board (demand.ts).
 *
 *   start ──history──> loaded (start() resolves; an empty bucket sends
 *   nothing: resolves after 500 ms anyway) ──updates──> ... ──watch ends──>
 *   500 ms ──> watched again (history again: puts repeat, harmless)
 *   stop(): no restart; the current watch stopped.
 *
 * `onPut` gets every PUT's value; `onDelete` every DEL or PURGE (and the TTL's
 * purge markers where the server sends them; nats-server 2.9 sends none).
 * A callback that throws is logged, never ends the watch.
 */
import type { KV } from '@nats-io/kv';
import type { Logger } from '../log';

export interface BucketWatchOptions {
  kv: KV;
  /** For the log: what the bucket holds. */
  what: string;
  log: Logger;
  onPut(key: string, value: Uint8Array): void;
  onDelete(key: string): void;
}

export interface BucketWatch {
  stop(): void;
}

const RESTART_MS = 500;
const EMPTY_WAIT_MS = 500;

/** Resolves once the bucket's current entries went through `onPut`. */
export async function watchBucket(o: BucketWatchOptions): Promise<BucketWatch> {
  let stopped = false;
  let current: { stop(): void } | null = null;
  const once = async (): Promise<void> => {
    const w = await o.kv.watch({ key: '>' });
    current = w;
    let initial: () => void = () => {};
    const loaded = new Promise<void>((resolve) => {
      initial = resolve;
    });
    void (async () => {
      try {
        for await (const e of w) {
          try {
            if (e.operation === 'PUT') o.onPut(e.key, e.value);
            else o.onDelete(e.key);
          } catch (err) {
            o.log.warn(`dropped a ${o.what} entry`, { key: e.key, err });
          }
          if (e.delta === 0) initial();
        }
      } catch (err) {
        o.log.warn(`${o.what} watch failed`, { err });
      }
      initial();
      if (stopped) return;
      await new Promise((r) => setTimeout(r, RESTART_MS));
      if (!stopped) await once().catch((err: unknown) => o.log.warn(`${o.what} watch restart failed`, { err }));
    })();
    await Promise.race([loaded, new Promise((r) => setTimeout(r, EMPTY_WAIT_MS))]);
  };
  await once();
  return {
    stop() {
      stopped = true;
      current?.stop();
    },
  };
}
