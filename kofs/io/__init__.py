"""Readers and writers, one module per format family. Every reader returns a plain typed object
and raises :class:`~kofs.errors.InputError` naming the file (and line/column) on bad input."""
