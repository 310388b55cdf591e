// Finds import cycles among the repository's TypeScript files with the compiler's own module resolution
// (tsconfig paths, `.js` specifiers naming `.ts` files). Type-only imports count: a type that points back
// still ties two modules together. Used by `npm run check:cycles` (tools/check-cycles.ts).
import ts from 'typescript';

/** What the graph builder reads; the real file system in the check, a map in tests. */
export interface SourceHost {
  readonly fileExists: (path: string) => boolean;
  readonly readFile: (path: string) => string | undefined;
}

/** Each file's imports (static, `export ... from` and literal dynamic ones) resolved to files of `files`. */
export function importGraph(
  files: readonly string[],
  options: ts.CompilerOptions,
  host: SourceHost,
): Map<string, string[]> {
  const known = new Set(files);
  const cache = ts.createModuleResolutionCache('/', (name) => name, options);
  const resolutionHost: ts.ModuleResolutionHost = { fileExists: host.fileExists, readFile: host.readFile };
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = host.readFile(file) ?? '';
    const targets = new Set<string>();
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      const resolved = ts.resolveModuleName(ref.fileName, file, options, resolutionHost, cache).resolvedModule
        ?.resolvedFileName;
      if (resolved !== undefined && known.has(resolved)) targets.add(resolved);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/**
 * The cycles of `graph`: one per strongly connected component of two or more files (or a file importing
 * itself), each as a path that starts and ends on the component's first file in sort order. Tarjan's
 * algorithm, iterative so a long import chain cannot overflow the stack.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const root of [...graph.keys()].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; edge: number }[] = [{ node: root, edge: 0 }];
    index.set(root, next);
    low.set(root, next++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component);
      }
    }
  }
  return components
    .map((component) => cyclePath(graph, new Set(component)))
    .sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0));
}

/** A shortest path from the component's first file back to itself, staying inside the component. */
function cyclePath(graph: ReadonlyMap<string, readonly string[]>, members: ReadonlySet<string>): string[] {
  const start = [...members].sort()[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const to of graph.get(node) ?? []) {
      if (!members.has(to)) continue;
      if (to === start) {
        const between: string[] = [];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = previous.get(at))
          between.unshift(at);
        return [start, ...between, start];
      }
      if (!previous.has(to)) {
        previous.set(to, node);
        queue.push(to);
      }
    }
  }
  return [start, start];
}
