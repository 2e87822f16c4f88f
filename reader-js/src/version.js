// The package's name and version (package.json), for the reports it writes; a test keeps them equal.
export const NAME = 'rlarchive-reader';
export const VERSION = '0.1.0';
