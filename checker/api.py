"""``kraftcheck.check``: a search from Python, for tests and notebooks.

    import kraftcheck
    result = kraftcheck.check("spec/configs/epochgate.toml", mutant="skip_epoch_check")
    assert result.verdict == "violation" and result.violations[0].length == 11
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .config import CheckConfig, ConfigError, ModelFailed, build_model, load_config
from .result import Counterexample, Result
from .workers import available_cores, explore

#: Keyword arguments of :func:`check` that set the search; every other one is a model setting.
SEARCH_KEYWORDS = ("max_states", "max_depth", "deadlock", "keep_going", "symmetry", "workers", "liveness")


def check(config_or_model: Any = None, /, *, max_states: int | None = None, max_depth: int | None = None,
          deadlock: bool | None = None, keep_going: bool = False, symmetry: bool = True,
          workers: int | str = 1, liveness: bool = True, **settings: Any) -> Result:
    """Explore every reachable state of a model, with the local engine, and return the :class:`Result`.

    ``config_or_model`` is a config file's path (``str`` or path-like, as ``kraftcheck check``
    takes it), a ``"MODULE:FACTORY"`` reference, a model object (anything with
    ``init_states``, ``successors`` and ``invariants``), or None: the embedded default config.
    ``settings`` override the config's ``[model]`` table (``mutant="skip_epoch_check"``);
    a model object takes none.  The search stops after the level of its first violation
    unless ``keep_going`` (or the config's ``continue``); ``max_states``, ``max_depth`` and ``deadlock`` override the
    config's ``[check]`` table, and ``symmetry=False`` ignores the model's ``canonical``.
    ``workers`` is the number of processes the search runs the model in (``"auto"``: every
    core), as ``kraftcheck check --workers``; the result is the same whatever their number.
    When the model declares temporal properties, the liveness phase follows, as in ``kraftcheck
    check`` (``liveness=False``: as ``--no-liveness``); it refuses a model with symmetry
    reduction unless ``symmetry=False``.

    A config or a setting that cannot be used raises ``ValueError`` (the CLI's bad input); what
    the model's own code raises is raised as it is."""
    for name, bound in (("max_states", max_states), ("max_depth", max_depth)):
        if bound is not None and (not isinstance(bound, int) or isinstance(bound, bool) or bound < 1):
            raise ValueError(f"{name} must be a positive integer, got {bound!r}")
    if workers == "auto":
        workers = available_cores()
    elif not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive integer or 'auto', got {workers!r}")
    if _is_model(config_or_model):
        if settings:
            raise ValueError(f"a model object takes no settings, got {', '.join(sorted(settings))}")
        config, model = CheckConfig(source="<model object>"), config_or_model
    else:
        config = _config(config_or_model)
        config.settings.update(settings)
        config.overrides.update(settings)
        try:
            model = build_model(config)
        except ModelFailed as e:
            raise e.__cause__ from None
    if not symmetry:
        from .check import WithoutSymmetry as _WithoutSymmetry

        model = _WithoutSymmetry(model)
    from types import SimpleNamespace

    from .check import check_temporal, liveness_properties

    try:
        properties = liveness_properties(SimpleNamespace(no_liveness=not liveness, engine="local"), model)
    except ConfigError as e:
        raise ValueError(str(e)) from None
    check_table = config.check
    keep_going = keep_going or check_table.get("continue", False)
    result = explore(
        model,
        max_states=max_states if max_states is not None else check_table.get("max_states"),
        max_depth=max_depth if max_depth is not None else check_table.get("max_depth"),
        check_deadlock=deadlock if deadlock is not None else check_table.get("deadlock", True),
        stop_on_violation=not keep_going,
        workers=workers,
    )
    if properties:
        # as check --continue: a search that explored every state past its violations is judged too
        check_temporal(model, result, properties, after_violations=keep_going)
    checked = CheckResult(**{f.name: getattr(result, f.name) for f in fields(Result)})
    checked._model, checked._config = model, config
    return checked


@dataclass
class CheckResult(Result):
    """:class:`Result`, which also writes and prints its counterexamples as ``kraftcheck check``
    and ``kraftcheck trace show`` do."""

    def write_trace(self, counterexample: Counterexample | None = None, path: str | os.PathLike | None = None) -> Path:
        """Write ``counterexample`` (the first by default) as an ITF trace: to ``path``, or where
        ``kraftcheck check`` would (``out/<config>_<property>.itf.json``); return its path."""
        from kraftcheck.traces.counterexample import write_counterexample

        from .outputs import DEFAULT_TRACE_DIR, trace_file_name

        cx = self._chosen(counterexample)
        if path is None:
            path = Path(DEFAULT_TRACE_DIR) / trace_file_name(self._config, cx.name)
        meta = {"config": self._config.to_json()}
        if not self._config.source.startswith("<model object"):  # a trace names the model it can rebuild
            meta["model"] = self._config.model
        return write_counterexample(path, self._model, cx, meta)

    def trace_text(self, counterexample: Counterexample | None = None) -> str:
        """``counterexample`` (the first by default) as ``kraftcheck trace show`` prints it, without colours."""
        import io
        import tempfile

        from kraftcheck.traces.show import show_trace
        from kraftcheck.traces.trace import load_trace

        with tempfile.TemporaryDirectory() as folder:
            trace = load_trace(self.write_trace(counterexample, Path(folder) / "trace.itf.json"))
        text = io.StringIO()
        show_trace(trace, file=text, color=False)
        return text.getvalue()

    def _chosen(self, counterexample: Counterexample | None) -> Counterexample:
        if counterexample is not None:
            return counterexample
        if not self.counterexamples:
            raise ValueError(f"the search found no counterexample (verdict {self.verdict})")
        return self.counterexamples[0]


def _is_model(value: Any) -> bool:
    return all(hasattr(value, member) for member in ("init_states", "successors", "invariants"))


def _config(source: Any) -> CheckConfig:
    if source is None:
        return load_config(None)
    if isinstance(source, CheckConfig):
        return CheckConfig(source.model, dict(source.settings), dict(source.check), source.source,
                           dict(source.overrides))
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        if ":" in text and not os.path.exists(text) and not text.endswith(".toml"):
            return load_config(None, text)
        return load_config(text)
    raise TypeError(f"expected a config path, 'MODULE:FACTORY' or a model, got {type(source).__name__}")

