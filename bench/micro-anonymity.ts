/**
 * mitata micro-benchmark: the anonymity classifier (src/probe/codec/anonymity.ts
 * classifyAnonymity) for elite, anonymous and transparent header sets.
 * Run: bun bench/micro-anonymity.ts
 */
import { bench, do_not_optimize, group, run, summary } from 'mitata';
import { classifyAnonymity } from '../src/probe/codec/anonymity';

const base: [string, string][] = [
  ['Host', 'judge.example:3000'],
  ['User-Agent', 'proxycheck/1'],
  ['Accept', '*/*'],
  ['Connection', 'close'],
];
const checker = ['198.51.100.20', '2001:db8::20'];
const baseline = ['x-request-start'];
const anonymous: [string, string][] = [...base, ['Via', '1.1 squid (squid/5.7)'], ['X-Forwarded-For', 'unknown']];
const transparent: [string, string][] = [...base, ['Via', '1.1 proxy'], ['X-Forwarded-For', '10.0.0.5, 198.51.100.20']];

summary(() => {
  group('classifyAnonymity', () => {
    bench('elite (4 headers)', () => do_not_optimize(classifyAnonymity(base, checker, baseline)));
    bench('anonymous (Via + XFF unknown)', () => do_not_optimize(classifyAnonymity(anonymous, checker, baseline)));
    bench('transparent (our IP in XFF)', () => do_not_optimize(classifyAnonymity(transparent, checker, baseline)));
  });
});

await run();
