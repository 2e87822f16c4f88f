// The package's version (package.json), for reports; a test keeps the two equal.
export const VERSION = '0.1.0';
