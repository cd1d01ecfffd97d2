"""Report brick: what a run did, for people.

Modules: ``html`` (the self-contained HTML run report), ``diff`` (verdict and answer changes between two runs).
"""
