"""Reports a person reads: the run report (``kofs rank``), the HTML building blocks and check
shared with the evaluation report, and the figures.

* :mod:`kofs.report.run` — :func:`~kofs.report.run.run_report_html`: ``report.html`` of a run
  (self-contained).
* :mod:`kofs.report.fusion` — what a fusion's weights and statistics mean, in plain words (the
  one place for a method's wording).
* :mod:`kofs.report.effects` — direction and size of the top genes' group differences.
* :mod:`kofs.report.figures` — the run report's figures without matplotlib.
* :mod:`kofs.report.html` — page, tables, links, provenance.
* :mod:`kofs.report.plots` — the evaluation's figures (matplotlib, Agg canvas).

Nothing is imported here, so ``import kofs.report`` does not load matplotlib.
"""
