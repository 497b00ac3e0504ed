"""The pure core -- for anyone reading the contract as code, and for every other room.

The pause lifecycle table, the clause catalogue and its closed set of error codes, canonical
JSON, tokens, registered interactions, gates and the ports the engine needs.  No I/O, no clock,
no randomness, and no import from the engine, the stores, the system model or the suite.
"""
