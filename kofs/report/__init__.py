"""Reports a person reads: the run report (``kofs rank``), the HTML building blocks and checks
shared with the evaluation report, and the figures.

* :mod:`kofs.report.run` — :func:`~kofs.report.run.run_report_html`,
  :func:`~kofs.report.run.write_run_report`: ``report.html`` of a run (self-contained).
* :mod:`kofs.report.html` — page, tables, provenance; :func:`~kofs.report.html.check_report`,
  :func:`~kofs.report.html.browser_check`.
* :mod:`kofs.report.plots` — the figures (matplotlib, Agg canvas).

Nothing is imported here, so ``import kofs.report`` does not load matplotlib.
"""
