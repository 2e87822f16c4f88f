// The reader's modules (src/**/*.js; web/ is the inspector, not the reader)
// import one another without a cycle, and each layer imports only what it may:
// every static `import ... from './x.js'`, every `export ... from './x.js'` and
// every dynamic `import('./x.js')` counts. The layers are the Python package's
// (tests/python/test_imports.py): the core (src/*.js), the registry
// (extensions/index.js) and one folder per extension (extensions/NAME/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';

const SRC = new URL('../src/', import.meta.url);
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^'";]*?\sfrom\s*['"](\.\.?\/[^'"]+)['"]|(?:^|[\s;])import\s*['"](\.\.?\/[^'"]+)['"]|\bimport\(\s*['"](\.\.?\/[^'"]+)['"]\s*\)/gm;

/**
 * The relative modules a module's text imports, statically or dynamically (comments removed), as paths
 * from src/ (`from` is the importing module's path from src/).
 */
export function importsOf(text, from = 'index.js') {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(IMPORT)].map((m) => posix.join(posix.dirname(from), m[1] ?? m[2] ?? m[3]));
}

/** A cycle of the graph (module -> imported modules) as a path [a, b, ..., a], or null. */
export function findCycle(graph) {
  const state = new Map(); // 1: on the current path, 2: done
  const path = [];
  const visit = (node) => {
    state.set(node, 1);
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 1) return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    path.pop();
    state.set(node, 2);
    return null;
  };
  for (const node of [...graph.keys()].sort()) {
    if (!state.has(node)) {
      const found = visit(node);
      if (found) return found;
    }
  }
  return null;
}

const layerOf = (f) => (!f.includes('/') ? 'core' : f === 'extensions/index.js' ? 'registry' : 'extension');
const folderOf = (f) => f.split('/')[1];
/** The extensions an extension builds on: the policy normalises with RLA_vec_normalize's statistics. */
const DEPENDS = { policy: ['vec_normalize'] };
/** The core's accessors of an extension's content, the only core modules that import an extension's module. */
const ACCESSORS = {
  'reader.js': ['extensions/policy/evaluator.js'],
  'index.js': ['extensions/policy/index.js', 'extensions/policy/observations.js'],
};

/**
 * Every import a module's layer may not make: the core reaches an extension through the registry (or is one of
 * its accessors); an extension's folder imports the core and itself (and what it builds on), not the registry.
 */
export function brokenRules(graph) {
  const broken = [];
  for (const [f, deps] of [...graph].sort()) {
    for (const d of [...deps].sort()) {
      const [mine, theirs] = [layerOf(f), layerOf(d)];
      const [own, other] = [folderOf(f), folderOf(d)];
      if (mine === 'core' && theirs === 'extension' && !(ACCESSORS[f] ?? []).includes(d))
        broken.push(`${f} imports ${d} (the core reaches an extension through the registry)`);
      else if (mine === 'extension' && theirs === 'registry') broken.push(`${f} imports ${d} (the registry)`);
      else if (mine === 'extension' && theirs === 'extension' && other !== own && !(DEPENDS[own] ?? []).includes(other))
        broken.push(`${f} imports ${d} (another extension's folder)`);
    }
  }
  return broken;
}

const modules = readdirSync(SRC, { recursive: true })
  .map((f) => f.split('\\').join('/'))
  .filter((f) => f.endsWith('.js'))
  .sort();
const graph = new Map(modules.map((f) => [f, importsOf(readFileSync(new URL(f, SRC), 'utf8'), f)]));

test('the import scanner sees static, re-export and dynamic imports, and not commented ones', () => {
  const text =
    "import { a } from './a.js';\nexport { b } from './b.js';\nexport * as c from './c.js';\nimport './d.js';\nconst e = await import('./e.js');\n// import { f } from './f.js';\n/* import('./g.js') */\nimport x from 'node:fs';";
  assert.deepEqual(importsOf(text), ['a.js', 'b.js', 'c.js', 'd.js', 'e.js']);
  assert.deepEqual(importsOf("import { a } from '../../x.js';\nimport './y.js';", 'p/q/m.js'), ['x.js', 'p/q/y.js']);
});

test('the cycle finder finds a cycle and only a cycle', () => {
  assert.deepEqual(
    findCycle(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
      ]),
    ),
    ['a', 'b', 'c', 'a'],
  );
  assert.equal(
    findCycle(
      new Map([
        ['a', ['b', 'c']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    null,
  );
});

test('every import of src/ names a module of src/', () => {
  for (const [f, deps] of graph)
    for (const d of deps) assert.ok(graph.has(d), `${f} imports src/${d}, which is not in src/`);
  assert.ok(graph.get('reader.js').includes('checks.js'), 'the scan found the imports of reader.js');
  assert.ok(graph.get('extensions/index.js').includes('extensions/policy/description.js'), 'and in the folders');
});

test('src/ has no import cycle', () => {
  const cycle = findCycle(graph);
  assert.equal(cycle, null, `import cycle: ${cycle?.join(' -> ')}`);
});

test('each layer imports only what it may', () => {
  assert.deepEqual(brokenRules(graph), []);
  assert.ok(graph.get('reader.js').includes('extensions/index.js'), 'the core reads the registry');
});

test('the layer rules catch each case', () => {
  const bad = new Map([
    ['manifest.js', ['extensions/policy/description.js', 'extensions/index.js']],
    ['reader.js', ['extensions/training/index.js']],
    ['extensions/training/index.js', ['extensions/index.js', 'extensions/replay_buffer/index.js', 'errors.js']],
    ['extensions/policy/evaluator.js', ['extensions/vec_normalize/index.js', 'extensions/policy/ops.js']],
  ]);
  assert.deepEqual(brokenRules(bad), [
    'extensions/training/index.js imports extensions/index.js (the registry)',
    "extensions/training/index.js imports extensions/replay_buffer/index.js (another extension's folder)",
    'manifest.js imports extensions/policy/description.js (the core reaches an extension through the registry)',
    'reader.js imports extensions/training/index.js (the core reaches an extension through the registry)',
  ]);
});
