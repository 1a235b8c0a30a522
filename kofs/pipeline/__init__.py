"""The run: its settings (RunConfig, defaults versions, YAML), the list plans, ranking, fusion
with supervision, the lists users bring, and writing the output folder.

The public entry points are exported by :mod:`kofs` (``kofs.rank``, ``kofs.run``, ...); this
package's ``__init__`` imports nothing, so ``kofs rank --help`` loads only what it needs.
"""
