"""kofs: knowledge-oriented multi-source gene selection.

Quick start::

    import kofs
    expr = kofs.read_expression("expression.tsv")
    labels = kofs.read_labels("labels.tsv")
    result = kofs.rank(expr, labels=labels)
    result.final.top(20)
"""

__version__ = "0.1.0"
