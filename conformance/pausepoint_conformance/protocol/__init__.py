"""The adapter protocol -- for implementers in any language: the port, the wire, stdio, schemas.

The in-process adapter port, the wire documents as pydantic models, both ends of the JSON-lines
stdio transport, and the JSON Schemas generated from the wire models (committed in spec/).
"""
