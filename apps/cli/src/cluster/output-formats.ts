// The `-o` choices, apart from the printing (table.ts loads yaml): the command definitions need only these.

/** Output formats of the listing and writing commands (`-o`). */
export const OUTPUT_FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
/** One of {@link OUTPUT_FORMATS}. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
