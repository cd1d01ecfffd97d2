"""Detection brick: detectors propose candidate passages, anchored to sections and pages.

Modules: ``plan`` (the deterministic detector dispatcher: which detectors run for a question, and why),
``detectors`` (TOC title match, BM25 + keyword co-occurrence, embeddings), ``keyword_index`` (per-document BM25
over line windows, the TOC title entries, the cache of parsed documents), ``aggregate`` (hits -> candidates with
per-detector ranks and RRF, the pool cap), ``run`` (one question's detection, and the terms no searched document
carries).
"""
