"""Verdicts: is one run better than another, and may it ship.

``comparability`` (whether two runs can be compared, and on which metrics), ``comparison``
(comparing them against labels), ``overlap/`` (comparing them without labels), ``gate/`` (the CI gate).
"""
