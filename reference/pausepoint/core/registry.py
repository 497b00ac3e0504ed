"""Registered interactions: what a run may stop to ask, and what an answer must look like."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs
import pydantic
from pydantic_core import PydanticSerializationError, to_jsonable_python

from pausepoint.core.canonical import bounded_json, built_json, canonical_json
from pausepoint.core.jsontext import loads
from pausepoint.core.ports import Claims
from pausepoint.core.values import record

Authority = Callable[[str, Claims, int], bool]
"""(responder, claims, now_ms) -> may this responder answer this pause *now*?"""


def anyone(responder: str, claims: Claims, now: int) -> bool:
    """The default authority: any responder may answer."""
    return True


_ADAPTERS: dict[object, pydantic.TypeAdapter[object]] = {}


def _adapter(model: type[object]) -> pydantic.TypeAdapter[object]:
    """The validator of ``model``, built once per model type (building one costs more than the
    Ed25519 check of a resume)."""
    try:
        found = _ADAPTERS.get(model)
    except TypeError:  # an unhashable type: build it each time
        return pydantic.TypeAdapter(model)
    if found is None:
        found = _ADAPTERS[model] = pydantic.TypeAdapter(model)
    return found


@record
class Validated:
    """A value that passed its schema: its canonical JSON text and the validated instance --
    and, for an answer, ``value_text``: the canonical text of the instance as JSON values, the
    form a run keeps it in (:meth:`Interaction.validate_response`)."""

    text: str
    value: object
    value_text: str | None = None


@attrs.frozen
class Interaction:
    """One registered interaction.  ``payload`` and ``response`` are pydantic models (or any
    type pydantic can validate); ``tool`` marks a tool pause, which must carry its tool call
    id; ``authority`` is evaluated at resume time (clause ``resume.authority``)."""

    name: str
    payload: type[object] = dict
    response: type[object] = dict
    tool: bool = False
    authority: Authority = anyone
    description: str = ""

    def _validate(self, model: type[object], value: object) -> Validated | None:
        """The canonical text of ``value`` and ``model`` validated from it in pydantic's strict
        JSON mode -- no coercion: ``"false"`` is no ``bool``, ``"7"`` no ``int`` -- or None.
        Validation reads the canonical (RFC 8785) text, so ``1.0`` and ``1`` are one answer in
        every language, and the value handed on is the validated one, never the raw input."""
        try:
            text = self.bounded_text(value)
            if text is None:
                return None
            validated = _from_json(model, text)
        except pydantic.ValidationError:
            return None
        except (TypeError, ValueError, RecursionError):
            return None
        return Validated(text, validated)

    def bounded_text(self, value: object) -> str | None:
        """The canonical text of ``value`` if it keeps to the contract's size and depth bound
        (input.bounded), else None: the bound and the text in one pass
        (:func:`~pausepoint.core.canonical.bounded_json`)."""
        return bounded_json(value)

    @property
    def answers_are_json(self) -> bool:
        """Whether a validated answer is the JSON values its canonical text reads back as: a
        plain ``dict`` response (no model, no coercion), so validating that text again gives
        the same values back."""
        return self.response is dict

    def validate_payload(self, value: object) -> Validated | None:
        return self._validate(self.payload, value)

    def validate_response(self, value: object) -> Validated | None:
        """The validated answer (clause ``resume.response.schema``) with the canonical text of
        the instance (``value_text``), or None -- None too when the instance is no exact JSON
        (resume.response.strict): ``1e16`` is a number whose canonical text ``10000000000000000``
        validates to an integer past 2**53 - 1, which fits only by that coercion and which
        no canonical text holds, so no run could keep it as its answer."""
        validated = self._validate(self.response, value)
        if validated is None:
            return None
        try:  # a plain dict's instance holds exact JSON types only (read from text): built_json
            kept = built_json(validated.value) if self.answers_are_json \
                else canonical_json(to_jsonable_python(validated.value))
        except (TypeError, ValueError, RecursionError, PydanticSerializationError):
            return None
        return Validated(validated.text, validated.value, kept)

    def payload_fits(self, value: object) -> bool:
        return self.validate_payload(value) is not None

    def response_fits(self, value: object) -> bool:
        return self.validate_response(value) is not None

    def validated_response(self, value: object) -> object:
        """The answer as an instance of the response model, from a strict check (raises
        ``pydantic.ValidationError`` when it does not fit): validated from its canonical JSON
        text in strict JSON mode, exactly as :meth:`validate_response` does."""
        return _from_json(self.response, canonical_json(value))


def _from_json(model: type[object], text: str) -> object:
    """``model`` validated from the canonical JSON text ``text`` in pydantic's strict JSON mode
    (raising ``pydantic.ValidationError`` when it does not fit).  A plain ``dict`` (most
    payloads and answers) whose text is an object is read by :mod:`json`'s C scanner instead,
    without entering pydantic: strict ``dict`` takes any JSON object and keeps its members as
    JSON values, as they read, in the text's order -- the object the scanner reads (canonical
    text has no duplicate key and no NaN, where the two readers could differ).  Any other text
    goes to pydantic, which refuses it as it always did."""
    if model is dict:
        found = loads(text)
        if type(found) is dict:
            return found
    return _adapter(model).validate_json(text, strict=True)


class Registry:
    """The interactions a deployment may pause for, by name; a name is registered once."""

    def __init__(self, interactions: Iterable[Interaction] = ()) -> None:
        self._by_name: dict[str, Interaction] = {}
        for i in interactions:
            self.register(i)

    def register(self, interaction: Interaction) -> None:
        if interaction.name in self._by_name:
            raise ValueError(f"interaction {interaction.name!r} is registered twice")
        self._by_name[interaction.name] = interaction

    def get(self, name: str) -> Interaction | None:
        return self._by_name.get(name) if isinstance(name, str) else None

    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)


class ReconcileRequest(pydantic.BaseModel):
    """The payload of a recovery pause: which effect's outcome is in doubt."""

    run_id: str
    effect: str


RECONCILE = Interaction(
    name="pausepoint.reconcile", payload=ReconcileRequest, response=dict,
    description="an effect's outcome is unknown: reconcile it, then resume the run")
