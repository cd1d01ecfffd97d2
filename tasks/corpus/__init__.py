"""Corpus brick: PDFs -> ``lines`` and ``toc`` tables (PyMuPDF, polars) and LanceDB line-window vectors.

Modules: ``parse`` (one PDF to lines and sections, with its specific errors), ``sections`` (outline, recovered
headings, or one unit per page), ``windows`` (line windows inside a section, the unit embedded and BM25-indexed),
``embed`` (the bundled MiniLM or the tiny hash embedder), ``ingest`` (incremental by content hash, into the
warehouse). ``sample/`` generates the shippable sample corpus (its own PDFs and questions).
"""
