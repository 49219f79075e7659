"""One run of the model, step by step against Kafka's controller: every controller step sent to
the harness, and Kafka's state and answer compared with the model's after it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kraftcheck.checker.protocol import action_name

from .mapping import (
    COMMIT, CONTROLLER_ACTIONS, MODEL_ONLY, EpochMap, differences, dirs_named, field_label, kafka_outcome, kafka_view,
    model_outcome, model_view, pair_epochs, request_for, reset_request,
)
from kraftcheck.model.state import UNCOMMITTED


@dataclass
class Divergence:
    """Where the model and Kafka's controller part ways."""

    #: the step's number in the run (1: the first step after the initial state)
    step: int
    #: the step as a trace shows it
    label: str
    request: dict
    #: (field, model's value, Kafka's value) for every field that differs
    fields: list[tuple[str, Any, Any]]
    #: Kafka's records for the step
    records: list[str]
    #: the model's action and the state it was taken from
    action: Any = None
    pre: Any = None

    def report(self) -> list[str]:
        """The divergence as the command prints it: the step, the request, and model against
        Kafka field by field, side by side."""
        lines = [f"step {self.step}: {self.label}", f"  request: {_request_text(self.request)}"]
        if self.records:
            lines.append(f"  Kafka's records: {'; '.join(self.records)}")
        width = max([len("field")] + [len(field_label(f)) for f, _, _ in self.fields])
        model_width = max([len("model")] + [len(_value(f, m)) for f, m, _ in self.fields])
        lines.append(f"  {'field'.ljust(width)}  {'model'.ljust(model_width)}  Kafka")
        for f, m, k in self.fields:
            lines.append(f"  {field_label(f).ljust(width)}  {_value(f, m).ljust(model_width)}  {_value(f, k)}")
        return lines


def _value(path: str, value: Any) -> str:
    if value is None:
        return "none"
    return str(dirs_named(value, path.rsplit(".", 1)[-1]))


def _request_text(request: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in request.items())


@dataclass
class RunResult:
    """What one run came to: the controller steps compared, the steps that were the model's
    alone, and the divergence if there was one, or the model-only controller step the
    comparison stopped at."""

    controller_steps: int = 0
    model_steps: int = 0
    divergence: Divergence | None = None
    #: (step, action name, why) of a controller step no Kafka release has: the comparison ends there
    stopped_at: tuple[int, str, str] | None = None
    by_action: dict[str, int] = field(default_factory=dict)


class Conformance:
    """Runs of one model, each replayed against a harness: a fresh controller per run."""

    def __init__(self, model, harness):
        self.model = model
        self.harness = harness

    def run(self, start, steps: list[tuple[Any, Any]]) -> RunResult:
        """Replay ``steps`` (each ``(action, state reached)``) from ``start``."""
        model, harness = self.model, self.harness
        result = RunResult()
        epochs = EpochMap()
        harness.request(reset_request(model))
        committed, pending = 0, []  # harness batches committed; per model batch uncommitted, its harness batches
        batches = 0
        pre = start
        for number, (action, post) in enumerate(steps, 1):
            name = action_name(action)
            if name in MODEL_ONLY:
                result.stopped_at = (number, name, MODEL_ONLY[name])
                return result
            if name == COMMIT:
                committed += pending.pop(0) if pending else 0
                result.model_steps += 1
                pre = post
                continue
            if name not in CONTROLLER_ACTIONS:
                result.model_steps += 1
                pre = post
                continue
            request = request_for(model, pre, action, epochs)
            if name == "ControllerFailsOver":
                kept = action[1]
                request["batches"] = committed + sum(pending[:kept])
            answer = harness.request(request)
            if model.metadata_log and name != "ControllerFailsOver":
                if len(post[UNCOMMITTED]) > len(pre[UNCOMMITTED]):
                    pending.append(answer["batches"] - batches)
            elif name == "ControllerFailsOver":
                committed, pending = request["batches"], []
                epochs.forget_lost(model, post)
            batches = answer["batches"]
            result.controller_steps += 1
            result.by_action[name] = result.by_action.get(name, 0) + 1
            found = [("epoch order", problem, "") for problem in pair_epochs(model, post, answer["state"], epochs)]
            expected, answered = model_outcome(model, pre, action, post), kafka_outcome(request["op"], answer)
            if expected is not None and answered is not None and expected != answered:
                found.append(("answer", expected, answered))
            found += differences(model_view(model, post), kafka_view(model, answer["state"], epochs))
            if found:
                label = model.describe_action(action) if hasattr(model, "describe_action") else str(action)
                result.divergence = Divergence(number, label, request, found, answer.get("records", []), action, pre)
                return result
            pre = post
        return result
