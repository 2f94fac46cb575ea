/**
 * The baseline's judge (bench/baseline/prober.mjs checks proxies against it):
 * the simplest honest judge, plain node:net, one process of its own. It reads
 * a request head (up to the blank line, 16 KiB at most), answers 200 with a
 * small JSON echo (the request line, the raw headers, the remote address) and
 * closes. No signing, no routing, no framework.
 *
 * With BASELINE_TLS_CERT and BASELINE_TLS_KEY (PEM) in the environment it
 * also serves the same judge over TLS (node:tls, node's defaults) on a port
 * of its own: the baseline's https check tunnels to it.
 *
 * Runs under node or bun. Prints one JSON line {"port", "tlsPort"?, "pid"}
 * and serves until stdin closes or SIGTERM.
 */
import net from 'node:net';
import tls from 'node:tls';

const HEAD_MAX = 16 * 1024;

function onSocket(sock) {
  let head = '';
  sock.setNoDelay(true);
  sock.on('data', (d) => {
    head += d.toString('latin1');
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) {
      if (head.length > HEAD_MAX) sock.destroy();
      return;
    }
    const lines = head.slice(0, end).split('\r\n');
    const body = JSON.stringify({ requestLine: lines[0], headers: lines.slice(1), remoteAddress: sock.remoteAddress });
    sock.end(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  sock.on('error', () => sock.destroy());
}

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
const port = await listen(net.createServer(onSocket));
const { BASELINE_TLS_CERT: cert, BASELINE_TLS_KEY: key } = process.env;
const tlsPort = cert && key ? await listen(tls.createServer({ cert, key }, onSocket)) : undefined;
process.stdout.write(JSON.stringify({ port, ...(tlsPort !== undefined ? { tlsPort } : {}), pid: process.pid }) + '\n');
const stop = () => process.exit(0);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
