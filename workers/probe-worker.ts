/**
 * Piscina worker entry: one thread, one lane. The lane itself (its shards,
 * start budget and result batching) is src/probe/workers/lane.ts; this file is
 * only the entry piscina loads.
 */
export { probeWorker as default } from '../src/probe/workers/lane';
