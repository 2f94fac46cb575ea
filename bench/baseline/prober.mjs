/**
 * The baseline (issue 14): the simplest honest proxy checker, plain node:net.
 * One socket per proxy, one timer per probe, an absolute-form GET with a
 * fresh nonce to the judge through the proxy; working = an HTTP 200 whose
 * body carries the nonce, within the timeout. At most `slots` probes in
 * flight, started in list order as slots free. Nothing else: no pool, no
 * threads, no database, no API.
 *
 * With a TLS judge (5th and 6th arguments, issue 21) it does what the
 * service's https check does, the simplest way: a working proxy then gets a
 * second connection inside the same timeout, CONNECT to the TLS judge, TLS
 * (node:tls, node's defaults: a full handshake each time), the certificate
 * pinned by its SHA-256 fingerprint (another one: the proxy intercepts TLS,
 * it is not working), and a GET with a fresh nonce; https = a 200 carrying
 * it.
 *
 *   node bench/baseline/prober.mjs <list file> <judge host:port> <timeout ms> <slots> [<tls judge host:port> <fingerprint>]
 *
 * Prints one JSON line: {wallMs, cpuUserMs, cpuSysMs, working, https,
 * results: "<i>:<ms>,..." } (the indexes of the working entries and their
 * response times; `https` counts the working proxies whose TLS check
 * passed). CPU is this process's (process.cpuUsage: every thread), from the
 * first connect to the last verdict; reading the list and printing the result
 * are outside it.
 */
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync } from 'node:fs';

const [listPath, judge, timeoutText, slotsText, tlsJudge, pin] = process.argv.slice(2);
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
let https = 0;
const found = [];
const cpu0 = process.cpuUsage();
const t0 = performance.now();

function finish() {
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ wallMs, cpuUserMs: c.user / 1000, cpuSysMs: c.system / 1000, working, https, results: found.join(',') }) + '\n');
  process.exit(0);
}

/** Reads an HTTP answer from `sock` ('data' events) and calls back once: whether it is a 200 whose body carries `nonce`. */
function readAnswer(sock, nonce, cb) {
  let buf = '';
  let over = false;
  const once = (ok) => {
    if (!over) {
      over = true;
      cb(ok);
    }
  };
  sock.on('data', (d) => {
    buf += d.toString('latin1');
    const h = buf.indexOf('\r\n\r\n');
    if (h === -1) return;
    const m = /content-length: *(\d+)/i.exec(buf.slice(0, h));
    if (m !== null && buf.length - h - 4 >= Number(m[1])) once(buf.startsWith('HTTP/1.1 200') && buf.includes(nonce, h));
  });
  sock.on('end', () => once(buf.startsWith('HTTP/1.1 200') && buf.includes(nonce)));
  sock.on('error', () => once(false));
}

/** CONNECT through the proxy to the TLS judge, TLS pinned, a GET with a nonce: cb(ok, intercepted). */
function httpsCheck(host, port, track, cb) {
  const nonce = Math.random().toString(36).slice(2);
  const sock = net.connect(port, host);
  track(sock);
  let head = '';
  const onHead = (d) => {
    head += d.toString('latin1');
    const h = head.indexOf('\r\n\r\n');
    if (h === -1) return;
    sock.removeListener('data', onHead);
    if (!/^HTTP\/1\.[01] 200/.test(head)) return cb(false, false);
    const t = tls.connect({ socket: sock, rejectUnauthorized: false });
    track(t);
    t.on('secureConnect', () => {
      if (t.getPeerCertificate().fingerprint256 !== pin) return cb(false, true);
      t.write(`GET /judge?n=${nonce} HTTP/1.1\r\nHost: ${tlsJudge}\r\nConnection: close\r\n\r\n`);
    });
    readAnswer(t, nonce, (ok) => cb(ok, false));
  };
  sock.on('connect', () => sock.write(`CONNECT ${tlsJudge} HTTP/1.1\r\nHost: ${tlsJudge}\r\n\r\n`));
  sock.on('data', onHead);
  sock.on('error', () => cb(false, false));
}

function probe(i) {
  const [host, port] = proxies[i];
  const nonce = Math.random().toString(36).slice(2);
  const started = performance.now();
  let over = false;
  let ms = 0;
  const socks = [];
  const track = (s) => socks.push(s);
  const sock = net.connect(port, host);
  track(sock);
  const end = (ok, httpsOk = false) => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    for (const s of socks) s.destroy();
    if (ok) {
      working++;
      if (httpsOk) https++;
      found.push(`${i}:${Math.round(ms)}`);
    }
    done++;
    if (next < proxies.length) probe(next++);
    else if (done === proxies.length) finish();
  };
  const timer = setTimeout(() => (ms > 0 ? end(true) : end(false)), timeoutMs);
  sock.on('connect', () => {
    sock.write(`GET ${judgeUrl}?n=${nonce} HTTP/1.1\r\nHost: ${judge}\r\nConnection: close\r\n\r\n`);
  });
  readAnswer(sock, nonce, (ok) => {
    if (!ok) return end(false);
    ms = performance.now() - started;
    sock.destroy();
    if (tlsJudge === undefined) return end(true);
    // working so far: the https check in what is left of the timeout (the timer ends it as working, https false)
    httpsCheck(host, port, track, (httpsOk, intercepted) => end(!intercepted, httpsOk));
  });
}

if (proxies.length === 0) finish();
while (next < proxies.length && next < slots) probe(next++);
