// A promise the test opens when it chooses: holds a piece of work inside a slot or lock until then.

/** A closed gate: `promise` settles once `open()` is called. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}
