"""The system model -- for the spec's maintainers: the executable semantics TLA+ describes.

The model of scripted runs, resumers, a clock and crashes (explored exhaustively in lockstep with
TLC), its NDJSON traces, and the generated lifecycle diagram and spec tables.
"""
