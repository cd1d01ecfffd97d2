"""Corpus brick: PDFs -> ``lines`` and ``toc`` tables (PyMuPDF, polars) and LanceDB line-window vectors.

Modules: ``parse`` (one PDF to lines and sections, with its specific errors), ``sections`` (outline, recovered
headings, or one unit per page), ``windows`` (line windows inside a section, the unit embedded and BM25-indexed),
``blocks`` (each line through the model once, in blocks whose token states are pooled into the windows), ``embed``
(the bundled MiniLM, int8 on onnxruntime or fp32 on torch for a GPU, or the tiny hash embedder), ``ingest`` (one
parse + embed task per file, incremental by content hash, stored by the flow).
``sample/`` generates the shippable sample corpus (its own PDFs and questions).
"""
