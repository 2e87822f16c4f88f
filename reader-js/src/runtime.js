// What the runtime offers beyond the language: Node's built-in modules, looked
// up only when the code runs under Node (browsers never see a `node:` import),
// and the switch between the built-in digests (node:zlib's CRC-32,
// node:crypto's or WebCrypto's SHA-256) and this package's own JavaScript
// implementations, which give identical results.

/** True under Node (and runtimes that present themselves as Node). */
export const IS_NODE = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * A Node built-in module, synchronously, through `process.getBuiltinModule`
 * (Node >= 20.16 / 22.3); null elsewhere or when the module does not exist.
 * @param {string} name
 * @returns {any} the module, whose shape depends on `name` (callers type what they use), or null
 */
export function builtinModule(name) {
  if (!IS_NODE || typeof process.getBuiltinModule !== 'function') return null;
  try {
    return process.getBuiltinModule(name) ?? null;
  } catch {
    return null;
  }
}

/**
 * A Node built-in module (`node:fs/promises`...), or null when not under Node or not available.
 * @param {string} name
 * @returns {Promise<any>} the module, whose shape depends on `name` (callers type what they use), or null
 */
export async function importBuiltin(name) {
  if (!IS_NODE) return null;
  const m = builtinModule(name);
  if (m) return m;
  try {
    return await import(/* @vite-ignore */ /* webpackIgnore: true */ name);
  } catch {
    return null;
  }
}

let nativeDigests = true;

/**
 * Whether CRC-32 and SHA-256 use the runtime's built-in implementations when
 * it has them (the default) or always this package's JavaScript ones (for
 * tests and benchmarks). Returns the previous setting.
 * @param {unknown} enabled
 * @returns {boolean}
 */
export function useNativeDigests(enabled) {
  const previous = nativeDigests;
  nativeDigests = Boolean(enabled);
  return previous;
}

/**
 * The current setting of useNativeDigests.
 * @returns {boolean}
 */
export function nativeDigestsEnabled() {
  return nativeDigests;
}
