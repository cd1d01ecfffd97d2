"""The arbiter brick: brief -> one arbiter call (rules, openai, replay) -> validation -> dispatcher -> storage.

Detectors propose, the arbiter decides, the dispatcher enforces, the warehouse remembers (DESIGN.md).
Modules: ``brief`` (the request), ``rules`` (the offline rules arbiter, with ``evidence``), ``validate`` (ids,
mapping, missing verdicts), ``dispatch`` (profiles, thresholds, guard, not-found), ``run`` (one question, and
re-dispatch of a past run), ``audit`` (rebuild one decision from the warehouse).
"""
