/**
 * A text flame graph of a V8 CPU profile (`npm run bench` with BENCH_CPU_PROF_DIR writes one per server process):
 * the call tree top-down, each frame with its share of the busy time (idle and start-up left out when asked), pruned
 * below a threshold, plus the heaviest frames by self time. `--folded FILE` also writes the folded stacks
 * (`a;b;c microseconds` per line) that flamegraph.pl, inferno or speedscope draw as an SVG.
 *
 *   npm run flame -- /tmp/prof/CPU.….cpuprofile [--min 1.5] [--depth 14] [--folded out.folded] [--from serve]
 *
 * `--from NAME` roots the tree at the frames whose function is NAME (e.g. `Edge.answer`), so the share of each step
 * of a request shows without the event loop's frames above it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    min: { type: 'string', default: '1' },
    depth: { type: 'string', default: '16' },
    folded: { type: 'string' },
    from: { type: 'string' },
    top: { type: 'string', default: '25' },
  },
});
const file = positionals[0];
if (!file) {
  console.error('usage: npm run flame -- PROFILE.cpuprofile [--min PERCENT] [--depth N] [--folded FILE] [--from NAME]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

const IDLE = new Set(['(idle)', '(program)', '(root)']);
const label = (n: ProfileNode) => {
  const where = n.callFrame.url.replace(/^.*\/node_modules\//, '').replace(/^.*\//, '');
  return `${n.callFrame.functionName || '(anonymous)'}${where ? ` ${where}:${n.callFrame.lineNumber + 1}` : ''}`;
};

/** Self time per node (µs), from the samples. */
const self = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]!;
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}

/** The stack of a node, root first. */
function stackOf(id: number): ProfileNode[] {
  const stack: ProfileNode[] = [];
  for (let cur: number | undefined = id; cur !== undefined; cur = parentOf.get(cur)) stack.push(byId.get(cur)!);
  return stack.reverse();
}

interface Tree {
  total: number;
  children: Map<string, Tree>;
}
const root: Tree = { total: 0, children: new Map() };
const selfByFrame = new Map<string, number>();
const folded = new Map<string, number>();
for (const [id, us] of self) {
  let stack = stackOf(id);
  if (IDLE.has(stack.at(-1)!.callFrame.functionName)) continue;
  if (values.from) {
    const at = stack.findIndex((n) => n.callFrame.functionName === values.from);
    if (at === -1) continue;
    stack = stack.slice(at);
  }
  root.total += us;
  let node = root;
  for (const frame of stack) {
    const key = label(frame);
    let child = node.children.get(key);
    if (!child) node.children.set(key, (child = { total: 0, children: new Map() }));
    child.total += us;
    node = child;
  }
  const leaf = label(stack.at(-1)!);
  selfByFrame.set(leaf, (selfByFrame.get(leaf) ?? 0) + us);
  const foldedKey = stack.map((n) => n.callFrame.functionName || '(anonymous)').join(';');
  folded.set(foldedKey, (folded.get(foldedKey) ?? 0) + us);
}

const min = Number(values.min);
const maxDepth = Number(values.depth);
const pct = (us: number) => `${((100 * us) / root.total).toFixed(1).padStart(5)}%`;
console.log(`${file}: ${(root.total / 1000).toFixed(0)} ms busy${values.from ? ` under ${values.from}` : ''}`);
function print(tree: Tree, depth: number): void {
  const kids = [...tree.children].sort((a, b) => b[1].total - a[1].total);
  for (const [key, child] of kids) {
    if ((100 * child.total) / root.total < min) continue;
    // A frame that is its parent's only heavy child is shown on the same level (the tree stays narrow).
    console.log(`${pct(child.total)} ${'  '.repeat(depth)}${key}`);
    if (depth < maxDepth) print(child, depth + 1);
  }
}
print(root, 0);
console.log('\nheaviest frames by self time:');
for (const [key, us] of [...selfByFrame].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
  console.log(`${pct(us)} ${key}`);
if (values.folded) {
  writeFileSync(values.folded, [...folded].map(([k, us]) => `${k} ${Math.round(us)}`).join('\n') + '\n');
  console.log(`\nfolded stacks: ${values.folded}`);
}
