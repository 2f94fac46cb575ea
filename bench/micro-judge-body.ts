/**
 * mitata micro-benchmark: the judge-body reader (src/probe/codec/judge-body.ts
 * readJudgeBody) on a typical echo, as a Buffer and a string, hit and miss.
 * Run: bun bench/micro-judge-body.ts
 */
import { bench, do_not_optimize, group, run, summary } from 'mitata';
import { readJudgeBody, renderJudgeBody } from '../src/probe/codec/judge-body';

const nonce = 'n0nce-7f3a9c2e4b1d8f60a5e7';
const body = renderJudgeBody({
  requestLine: `GET /judge?n=${nonce} HTTP/1.1`,
  headers: [
    ['Host', 'judge.example:3000'],
    ['User-Agent', 'proxycheck/1'],
    ['Accept', '*/*'],
    ['Connection', 'close'],
    ['Via', '1.1 squid'],
    ['X-Forwarded-For', '203.0.113.7'],
  ],
  remoteAddress: '198.51.100.20',
  nonce,
});
const buf = Buffer.from(body);
const captive = Buffer.from('<html><body><h1>Welcome to Hotel WiFi</h1><p>Please log in.</p></body></html>');

summary(() => {
  group(`readJudgeBody (${buf.length} bytes)`, () => {
    bench('Buffer, our nonce', () => do_not_optimize(readJudgeBody(buf, nonce)));
    bench('string, our nonce', () => do_not_optimize(readJudgeBody(body, nonce)));
    bench('Buffer, other nonce (replay)', () => do_not_optimize(readJudgeBody(buf, 'n0nce-other')));
    bench('captive page', () => do_not_optimize(readJudgeBody(captive, nonce)));
  });
});

await run();
