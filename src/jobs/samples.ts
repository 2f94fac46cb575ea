/**
 * `samples` in the job layer: a proxy probed `samples` times is `samples`
 * probe tasks, each its own connection (a lane runs every task on one), and
 * one record once all of them are in.
 *
 * ## Task numbers
 *
 * Task t probes proxy floor(t / samples), as its sample t % samples: a
 * proxy's samples are consecutive tasks (proxy-major), so they are granted
 * together and finish close together, and only the proxies in flight have
 * samples waiting to be folded. With samples = 1 the task number is the
 * proxy index, as before. The task number travels as the probe's `index`
 * (an Int32 in the lanes' packed tasks: MAX_PROXIES 10^7 x 10 samples fits).
 * Everything counted in probes (the scheduler's demand, grants, retries of
 * probes the checker could not run, the charge) counts tasks.
 *
 * ## Folding (SampleSets)
 *
 * Holds the sample results of each proxy that has some but not all of them,
 * in sample order, and hands the proxy's record input (foldSamples,
 * src/results/samples.ts) when its last one arrives. A proxy's entry is
 * dropped then: memory is at most `samples` results per proxy in flight.
 * The caller folds each task once (the actor's per-task `seen`).
 */
import type { ProbeResult } from '../probe/types';
import { foldSamples, type SamplesBlock } from '../results/samples';

export const proxyOfTask = (task: number, samples: number): number => Math.floor(task / samples);

export const sampleOfTask = (task: number, samples: number): number => task % samples;

export class SampleSets {
  readonly #samples: number;
  readonly #open = new Map<number, { results: ProbeResult[]; done: number }>();

  constructor(samples: number) {
    this.#samples = samples;
  }

  /** Proxies with some but not all of their samples in. */
  get pending(): number {
    return this.#open.size;
  }

  /** One sample's result (its `index` is the task number); the proxy's fold once it was the last. */
  add(r: ProbeResult): { proxy: number; result: ProbeResult; samples: SamplesBlock } | null {
    const proxy = proxyOfTask(r.index, this.#samples);
    let set = this.#open.get(proxy);
    if (set === undefined) this.#open.set(proxy, (set = { results: new Array<ProbeResult>(this.#samples), done: 0 }));
    set.results[sampleOfTask(r.index, this.#samples)] = r;
    if (++set.done < this.#samples) return null;
    this.#open.delete(proxy);
    return { proxy, ...foldSamples(set.results) };
  }
}
