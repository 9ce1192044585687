"""The fleet layer: the core's files and verdicts (:mod:`generator.core`), cheaper at fleet
size — worker processes (:mod:`~generator.fleet.pool`), files spooled to disk
(:mod:`~generator.fleet.filebacked`), the cache of unchanged services and proofs
(:mod:`~generator.fleet.cache`), the progress line (:mod:`~generator.fleet.progress`). None
of it changes a byte of output. The map: docs/architecture.md, "The seam: the core and the
fleet layer".
"""
