"""Scenario vectors -- for implementers who want test data: generation, the file format, replay.

The generator drives the reference model (through the model driver) to compute expected
outcomes; the replayer runs a vector file through any adapter.
"""
