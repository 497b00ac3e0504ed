"""pausepoint_conformance: verify implementations of the pausepoint contract, in any language."""

__version__ = "0.1.0"
