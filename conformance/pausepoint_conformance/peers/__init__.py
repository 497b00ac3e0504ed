"""Peer adapters: other frameworks' own pause/resume primitives behind the adapter port, so
the suite measures what each framework guarantees by itself (``docs/peers.md``).

Each peer needs its framework installed (the ``peers`` extra); importing this package does
not import any of them.
"""
