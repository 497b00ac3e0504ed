"""Adapters -- for users of the suite: the reference and fake implementations, and the loader.

``--adapter`` spellings are resolved by the loader; the reference adapter realises scripted runs
with the reference harness; the fake is a scriptable misbehaving implementation that tests the
suite itself; stdio_reference serves the reference over the stdio protocol.
"""
