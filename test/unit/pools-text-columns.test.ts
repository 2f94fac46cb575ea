/**
 * The owner's text columns (src/pools/text-columns.ts): an IPv4 literal in
 * its canonical form round-trips through 4 bytes and nothing else is taken
 * for one; any address or text written to a slot reads back the same, over
 * any sequence of writes and resizes (fast-check against a Map model).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { AddressColumn, ipv4Number, ipv4Text, TextColumn } from '../../src/pools/text-columns';

describe('ipv4Number', () => {
  test('canonical literals only; the number prints back as the same text', () => {
    fc.assert(
      fc.property(fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)), (o) => {
        const s = o.join('.');
        expect(ipv4Text(ipv4Number(s))).toBe(s);
      }),
    );
    for (const s of ['01.2.3.4', '1.2.3', '1.2.3.4.5', '256.1.1.1', '1..2.3', '1.2.3.4 ', '::1', 'a.b.c.d', '', '1.2.3.04']) expect(ipv4Number(s)).toBe(-1);
    expect(ipv4Number('255.255.255.255')).toBe(0xffff_ffff);
  });
});

describe('columns', () => {
  const address = fc.oneof(
    fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.')),
    fc.constantFrom('0.0.0.0', '00.1.2.3', '[::1]', 'h.example'),
  );
  const op = <T>(value: fc.Arbitrary<T>) => fc.oneof(fc.record({ slot: fc.nat(19), value }), fc.record({ resize: fc.integer({ min: 1, max: 24 }) }));

  /** Random writes and resizes of a 20-slot column against a Map model; every slot reads back the model's value. */
  const readsBack = <C extends { set(slot: number, v: string | null): void; get(slot: number): string | null; resize(n: number): void }>(make: () => C, value: fc.Arbitrary<string | null>, after?: (c: C) => void) =>
    fc.assert(
      fc.property(fc.array(op(value), { maxLength: 60 }), (ops) => {
        const c = make();
        const model = new Map<number, string | null>();
        let cap = 20;
        for (const o of ops) {
          if ('resize' in o) {
            cap = o.resize;
            c.resize(cap);
            for (const k of model.keys()) if (k >= cap) model.delete(k);
          } else if (o.slot < cap) {
            c.set(o.slot, o.value);
            model.set(o.slot, o.value);
          }
        }
        for (let s = 0; s < cap; s++) expect(c.get(s)).toBe(model.get(s) ?? null);
        after?.(c);
      }),
    );

  test('property: an AddressColumn reads back what was written (null included), across resizes', () => {
    readsBack(() => new AddressColumn(20), fc.option(address, { nil: null }));
  });

  test('property: a TextColumn reads back what was written, coded or (past its cap) its own', () => {
    readsBack(() => new TextColumn(20), fc.option(fc.string({ maxLength: 4 }), { nil: null }), (c) => expect(c.own.size).toBe(0));
  });
});
