"""The package's name and version as it writes them: the producer of the archives it writes (spec §5.1),
the validator of its reports (§14), the evaluator of its evaluations (metadata.md)."""

NAME = "rlarchive-python"
VERSION = "0.1.0"
