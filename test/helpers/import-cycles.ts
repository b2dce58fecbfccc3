// Import cycles among the files of src/: the rooms table keeps the arrows between rooms one way,
// and this keeps them one way between files too, inside a room as well.

/**
 * Every cycle of the graph `imports` (file -> files it imports), each once: the strongly
 * connected components of more than one file (or a file importing itself), each given as one
 * closed path through it, starting from its first file in sort order.
 */
export function importCycles(imports: ReadonlyMap<string, readonly string[]>): string[][] {
  const components = stronglyConnected(imports).filter((component) => {
    const [only] = component;
    return component.length > 1 || (only !== undefined && (imports.get(only) ?? []).includes(only));
  });
  return components.map((component) => closedPath(component, imports)).sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/** Tarjan's algorithm, iterative (no recursion depth limit on a long import chain). */
function stronglyConnected(imports: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const root of [...imports.keys()].sort()) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; next: number }> = [{ node: root, next: 0 }];
    index.set(root, counter);
    low.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (!frame) break;
      const targets = (imports.get(frame.node) ?? []).filter((target) => imports.has(target));
      const target = targets[frame.next];
      if (target !== undefined) {
        frame.next += 1;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node) ?? 0, index.get(target) ?? 0));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) ?? 0, low.get(frame.node) ?? 0));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop();
          if (member === undefined) break;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component.sort());
      }
    }
  }
  return components;
}

/** A shortest path from the component's first file back to itself, within the component (a readable witness). */
function closedPath(component: readonly string[], imports: ReadonlyMap<string, readonly string[]>): string[] {
  const members = new Set(component);
  const start = component[0] ?? '';
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() ?? '';
    for (const target of imports.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at: string | undefined = node; at !== undefined && at !== start; at = previous.get(at)) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [...component, start];
}
