/**
 * Which API node owns a pool in a cluster (DECISIONS "Pools are actors"):
 * rendezvous (highest random weight) hashing over the nodes whose pool owner
 * runs (db/schema.ts pool_owners). Pure.
 *
 * Every node computes the same owner from the same list; a node that joins
 * takes from each other node only the pools it now scores highest on (about
 * 1/n of them), and a node that leaves gives each of its pools to the node
 * that scored second on it: no other pool moves.
 */

/** A 32-bit FNV-1a hash of `s`, then mixed (murmur3's finaliser), so near strings score far apart. */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The pool's score on a node (higher wins). */
export function placementScore(poolId: string, nodeId: string): number {
  return hash32(`${nodeId}\u0000${poolId}`);
}

/** The node that owns `poolId` among `nodes` (ties by the node id), null when there is none. */
export function placeOwner(poolId: string, nodes: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = -1;
  for (const n of nodes) {
    const s = placementScore(poolId, n);
    if (s > bestScore || (s === bestScore && best !== null && n < best)) {
      best = n;
      bestScore = s;
    }
  }
  return best;
}
