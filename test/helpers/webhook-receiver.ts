/**
 * A webhook receiver on 127.0.0.1 (port 0, or a given port) that checks
 * every delivery with the Standard Webhooks library's own `Webhook.verify`,
 * records what it got, and answers what the test says (`answer`: a status,
 * per call, or a promise of one: the answer held until it settles). `close()` stops it (safe twice).
 */
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: string;
  type: string;
  data: Record<string, unknown>;
  /** Whether Webhook.verify accepted the delivery. */
  verified: boolean;
  error: string | null;
}

export interface Receiver {
  url: string;
  port: number;
  got: Received[];
  /** Deliveries that verified, by webhook-id (a repeat counts twice). */
  verifiedIds(): string[];
  setSecret(secret: string): void;
  /** The status for the n-th request (0-based); default 204. A promise holds the answer until it settles. */
  answer: (n: number) => number | Promise<number>;
  close(): void;
}

export function startReceiver(opts: { secret?: string; port?: number; path?: string } = {}): Receiver {
  let secret = opts.secret ?? null;
  let calls = 0;
  const got: Received[] = [];
  const r: Receiver = {
    url: '',
    port: 0,
    got,
    verifiedIds: () => got.filter((g) => g.verified).map((g) => g.id),
    setSecret: (s) => {
      secret = s;
    },
    answer: () => 204,
    close: () => server.stop(true),
  };
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: opts.port ?? 0,
    async fetch(req) {
      const body = await req.text();
      const headers = Object.fromEntries(req.headers.entries());
      let verified = false;
      let error: string | null = null;
      try {
        if (secret === null) throw new Error('no secret yet');
        new Webhook(secret).verify(body, headers);
        verified = true;
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      const parsed = JSON.parse(body) as { type: string; data: Record<string, unknown> };
      got.push({ id: headers['webhook-id'] ?? '', timestamp: headers['webhook-timestamp'] ?? '', type: parsed.type, data: parsed.data, verified, error });
      return new Response(null, { status: await r.answer(calls++) });
    },
  });
  r.port = server.port as number;
  r.url = `http://127.0.0.1:${r.port}${opts.path ?? '/hook'}`;
  return r;
}
