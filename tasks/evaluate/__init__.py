"""Evaluation brick: gold labels against a run's verdicts and answers.

Modules: ``score`` (page hit@k, reciprocal rank, document hit, not-found, answer correctness -> ``eval_results``),
``report`` (the evaluation's sections of the HTML run report).
"""
