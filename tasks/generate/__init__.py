"""Generation brick: route each question to batch or sequential, answer with evidence, record both regimes' cost.

Modules: ``prompts`` (requests), ``extractive`` + ``values`` (offline generator), ``router`` (deterministic
regime choice), ``loop`` (the two regimes and their exits), ``run`` (answers rows), ``normalise`` (answer
matching for the regime comparison and the evaluation harness).
"""
