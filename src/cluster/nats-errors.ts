/**
 * What a failed NATS request means to its caller (pure): no responder on the
 * subject (the server's fast "503" answer: nobody subscribes, e.g. the node
 * is gone), as opposed to a timeout or a closed connection. nats.js throws a
 * RequestError whose cause is a NoRespondersError; both are looked for, a few
 * causes deep.
 */
export function isNoResponders(err: unknown): boolean {
  for (let e: unknown = err, i = 0; e instanceof Error && i < 5; e = e.cause, i++) {
    if (e.name === 'NoRespondersError') return true;
    const probe = (e as unknown as { isNoResponders?: () => boolean }).isNoResponders;
    if (typeof probe === 'function' && probe.call(e) === true) return true;
  }
  return false;
}
