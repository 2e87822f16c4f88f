// Operation counts for tests of how work grows with the input (never its time).

/**
 * Runs `fn` (sync or async) and resolves to [its result, the elements the linear searches of
 * arrays (indexOf, includes, find) could look at while it ran]: a search of a whole list per item
 * of it makes this grow with the square of the list's length.
 */
export async function linearSearches(fn) {
  let count = 0;
  const saved = { indexOf: Array.prototype.indexOf, includes: Array.prototype.includes, find: Array.prototype.find };
  for (const [k, f] of Object.entries(saved))
    Array.prototype[k] = function (...args) {
      count += this.length;
      return f.apply(this, args);
    };
  try {
    const result = await fn();
    return [result, count];
  } finally {
    Object.assign(Array.prototype, saved);
  }
}
