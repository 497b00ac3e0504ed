"""Broken: the ask-the-user tool is always offered to the model, registered interactions or
not -- a tool whose only outcome is a refusal, inviting the model to stop a run that can never
be resumed.  Must fail ``wiring.no-interaction-no-tool``."""

from __future__ import annotations

from typing import Any

import attrs
from _base import main

from pausepoint.engine.compose import AskUserTool, Deployment
from pausepoint_conformance.adapters.reference import ReferenceAdapter

MUST = ("wiring.no-interaction-no-tool",)
MAY: tuple[str, ...] = ()


@attrs.frozen
class AlwaysAsking(Deployment):
    def ask_user_tool(self) -> AskUserTool | None:
        return AskUserTool("ask_user", self.service.registry.names())


class Broken(ReferenceAdapter):
    implementation_name = "broken: the ask-the-user tool always offered"

    def compose(self, **parts: Any) -> Deployment:
        d = super().compose(**parts)
        return AlwaysAsking(service=d.service, store=d.store, encode_token=d.encode_token,
                            decode_token=d.decode_token)


def make() -> Broken:
    return Broken("memory")


if __name__ == "__main__":
    main(make)
