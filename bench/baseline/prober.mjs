/**
 * The baseline (issue 14): the simplest honest proxy checker, plain node:net.
 * One socket per proxy, one timer per probe, an absolute-form GET with a
 * fresh nonce to the judge through the proxy; working = an HTTP 200 whose
 * body carries the nonce, within the timeout. At most `slots` probes in
 * flight, started in list order as slots free. Nothing else: no pool, no
 * threads, no database, no API.
 *
 *   node bench/baseline/prober.mjs <list file> <judge host:port> <timeout ms> <slots>
 *
 * Prints one JSON line: {wallMs, cpuUserMs, cpuSysMs, working, results: "<i>:<ms>,..." }
 * (the indexes of the working entries and their response times). CPU is this
 * process's (process.cpuUsage: every thread), from the first connect to the
 * last verdict; reading the list and printing the result are outside it.
 */
import net from 'node:net';
import { readFileSync } from 'node:fs';

const [listPath, judge, timeoutText, slotsText] = process.argv.slice(2);
const timeoutMs = Number(timeoutText);
const slots = Number(slotsText);
const proxies = readFileSync(listPath, 'utf8').split('\n').filter((l) => l !== '').map((l) => {
  const c = l.lastIndexOf(':');
  return [l.slice(0, c), Number(l.slice(c + 1))];
});
const judgeUrl = `http://${judge}/judge`;

let next = 0;
let done = 0;
let working = 0;
const found = [];
const cpu0 = process.cpuUsage();
const t0 = performance.now();

function finish() {
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ wallMs, cpuUserMs: c.user / 1000, cpuSysMs: c.system / 1000, working, results: found.join(',') }) + '\n');
  process.exit(0);
}

function probe(i) {
  const [host, port] = proxies[i];
  const nonce = Math.random().toString(36).slice(2);
  const started = performance.now();
  let buf = '';
  let over = false;
  const sock = net.connect(port, host);
  const end = (ok) => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    sock.destroy();
    if (ok) {
      working++;
      found.push(`${i}:${Math.round(performance.now() - started)}`);
    }
    done++;
    if (next < proxies.length) probe(next++);
    else if (done === proxies.length) finish();
  };
  const timer = setTimeout(end, timeoutMs, false);
  sock.on('connect', () => {
    sock.write(`GET ${judgeUrl}?n=${nonce} HTTP/1.1\r\nHost: ${judge}\r\nConnection: close\r\n\r\n`);
  });
  sock.on('data', (d) => {
    buf += d.toString('latin1');
    const h = buf.indexOf('\r\n\r\n');
    if (h === -1) return;
    const m = /content-length: *(\d+)/i.exec(buf.slice(0, h));
    if (m !== null && buf.length - h - 4 >= Number(m[1])) end(buf.startsWith('HTTP/1.1 200') && buf.includes(nonce, h));
  });
  sock.on('end', () => end(buf.startsWith('HTTP/1.1 200') && buf.includes(nonce)));
  sock.on('error', () => end(false));
}

if (proxies.length === 0) finish();
while (next < proxies.length && next < slots) probe(next++);
