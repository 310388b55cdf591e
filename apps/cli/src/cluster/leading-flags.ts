// `kubectl rolepolicy -n shop plans`: kubectl users put connection flags before the command too. Commander
// reads a subcommand's options only after its name, so such leading flags are moved to the end. Pure.

/** Connection and output flags that take a value. */
const WITH_VALUE = new Set([
  '-n',
  '--namespace',
  '--kubeconfig',
  '--context',
  '--as',
  '--as-group',
  '-o',
  '--output',
]);
/** Flags without a value. */
const SWITCHES = new Set(['-A', '--all-namespaces']);

/**
 * The arguments (after node and script) with leading connection flags moved behind the command, when what
 * follows them is a command; anything else is returned unchanged.
 * @example hoistLeadingFlags(['-n', 'shop', 'plans']) // ['plans', '-n', 'shop']
 */
export function hoistLeadingFlags(args: readonly string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (i < args.length) {
    const arg = args[i]!;
    const name = arg.split('=')[0]!;
    if (SWITCHES.has(arg)) {
      leading.push(arg);
      i += 1;
    } else if (WITH_VALUE.has(name) && arg.includes('=')) {
      leading.push(arg);
      i += 1;
    } else if (WITH_VALUE.has(arg) && i + 1 < args.length) {
      leading.push(arg, args[i + 1]!);
      i += 2;
    } else break;
  }
  if (leading.length === 0 || i >= args.length || args[i]!.startsWith('-')) return [...args];
  return [...args.slice(i), ...leading];
}
