"""Question brick: question sets in, ``questions`` rows out.

Modules: ``load`` (JSONL question sets: line-numbered errors, duplicate ids, documents resolved against the data
root), ``parser`` (the offline parser: keywords and variants, answer shape, decomposition, intent).
"""
