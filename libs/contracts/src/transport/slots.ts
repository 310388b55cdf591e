// How many messages the JetStream transport handles at once per durable: one number for every durable, or a
// default with exceptions by durable name (e.g. the executor's revocations get more slots than activations).

/**
 * Pull slots per durable. A number applies to every durable; `{ default, durables }` gives the named
 * durables their own count and every other one `default`. Names absent from the topology are ignored
 * (a test topology with sandbox names simply runs everything at `default`).
 */
export type SlotCounts =
  number | { readonly default: number; readonly durables?: Readonly<Record<string, number>> };

/**
 * The slot count of `durable` (1 when nothing is configured).
 * @throws Error naming the durable when its count is not a positive integer
 */
export function slotsFor(counts: SlotCounts | undefined, durable: string): number {
  const slots =
    counts === undefined
      ? 1
      : typeof counts === 'number'
        ? counts
        : (counts.durables?.[durable] ?? counts.default);
  if (!Number.isInteger(slots) || slots < 1) {
    throw new Error(`concurrency of ${durable} must be a positive integer, got ${slots}`);
  }
  return slots;
}
