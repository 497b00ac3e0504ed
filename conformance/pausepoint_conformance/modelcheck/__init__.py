"""Model checking -- for the spec's maintainers: the Python model in lockstep with TLC.

Exhaustive exploration of the Python system model, comparison with TLC's recorded state sets,
TLC runs over the manifest when a tla2tools.jar is given, and trace validation.
"""
