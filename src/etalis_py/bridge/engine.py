"""The Python face of one compiled rule set: making an engine, its rules,
its state and snapshots, its background knowledge (events in and detections
out: :mod:`.feeding`)."""

from __future__ import annotations

import os
import warnings
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Optional, Union

from ._prolog import PrologBridge, Recorded, bridge, prolog_dir, rules_source, static_text_source
from .prolog_text import quote_atom
from ..errors import EtalisWarning, OntologyError, RuleError
from ..events import Detection
from ..rdf.stats import KnowledgeStats
from ..rules.analysis import Decoded, RuleFile
from .engine_options import (POLICIES, STRATEGIES, check_policy, check_unicode, compile_listing, limit_options,
                             one_at_a_time, outside_level, trust_option)
from .feeding import Callback, Feeding
from .results import (MAX_QUEUED, SNAPSHOT_COUNTERS, BatchResult, EngineStats, FeedResult, KeyState, PendingPart,
                      parse_detections, parse_rows, snapshot_header)

if TYPE_CHECKING:  # rdflib and owlrl are imported on the first load of an ontology
    from ..rdf.knowledge import KnowledgeBase, Source as OntologySource
    from ..rules.findings import Finding

__all__ = ["MAX_QUEUED", "POLICIES", "STRATEGIES", "BatchResult", "Engine", "EngineStats", "FeedResult", "KeyState",
           "PendingPart", "SnapshotParts", "check_policy", "check_unicode", "compile_listing", "parse_detections",
           "parse_rows"]


@dataclass
class SnapshotParts:
    """A snapshot (see :meth:`Engine.snapshot`) in parts: ``head``, its
    start up to its content's length and a comma, and the content, whose
    SHA-256 the header gives next (hashed when it is asked for, by
    :meth:`header`); a content of :class:`Recorded` bytes is read where
    the engine made it until :meth:`release`."""

    head: bytes
    content: Union[bytes, Recorded]

    def view(self) -> memoryview:
        """The content's bytes, not copied."""
        return memoryview(self.content) if isinstance(self.content, bytes) else self.content.view()

    def header(self) -> bytes:
        """The snapshot's first two lines (see :func:`.results.snapshot_header`)."""
        return snapshot_header(self.head, self.view())

    def to_bytes(self) -> bytes:
        """The snapshot's bytes, joined once."""
        content = self.view()
        return b"".join((snapshot_header(self.head, content), content))

    def release(self) -> None:
        """Give the content's bytes back to the engine (once; the parts are
        of no use after it)."""
        if isinstance(self.content, Recorded):
            self.content.free()


class Engine(Feeding):
    """A compiled rule set with its own pending goals.

    Make one with :meth:`from_file` or :meth:`from_string`.  Several engines
    can live in one process; none sees another's rules, goals or detections.
    Call :meth:`close` (or use ``with``) to free an engine's memory.
    """

    def __init__(
        self, name: str, info: dict[str, Any], prolog: PrologBridge, max_queued: Optional[int] = MAX_QUEUED
    ) -> None:
        self._name = name
        self._prolog = prolog
        self.policy: str = info["policy"]
        self.printed: list[str] = list(info["printed"])
        self.rule_count: int = info["rules"]
        self.goal_count: int = info["goals"]
        self.prefixes: dict[str, str] = dict(info["prefixes"])
        self.input_determined: bool = info["input_determined"]
        """Whether the rules' results depend on their input alone: they read
        no clock, draw no random number, keep no global variable and print
        nothing (what a run resumed by reading its input again needs)."""
        self._queue: deque[Detection] = deque(maxlen=max_queued)
        self._callbacks: dict[Optional[str], list[Callback]] = {}
        self._stats = EngineStats()
        self._closed = False
        self._knowledge: Optional["KnowledgeBase"] = None
        # the rules' file, or their source name and text, for findings()
        self._source: tuple[str, Optional[str]] = ("", "")
        self._analysis: Optional[dict[str, Any]] = None
        self._max_age: Optional[float] = None
        self._trusted = False
        self._explain = False
        self._static: tuple[str, ...] = ()

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        policy: Optional[str] = None,
        *,
        static: Sequence[str | os.PathLike[str]] = (),
        trusted: bool = False,
        sandbox: Optional[bool] = None,
        max_age: Optional[float] = None,
        lateness: Optional[float] = None,
        explain: bool = False,
        max_queued: Optional[int] = MAX_QUEUED,
        inference_limit: Optional[int] = None,
        state: Optional[bytes] = None,
        analysis: bool = False,
    ) -> "Engine":
        """Compile the rules of an ``.etl`` file.

        ``policy`` (unrestricted, recent or chronological) overrides the
        file's ``:- policy(P).``; labelled rules may still override both.
        ``static`` names files of static knowledge (Prolog facts and rules,
        e.g. the ``.db`` file an ETALIS test driver consults beside the
        rules), read before the rule file and sandboxed as its own static
        rules are; errors in them give their own file and position.
        Rule files are code from elsewhere: unless ``trusted=True``, a file
        whose ``where`` conditions or static rules could run shell, file,
        network or database goals, define hooks or load code is refused
        before anything of it is loaded (docs/language.md, "Sandbox").
        ``sandbox=True`` is the default, accepted for compatibility;
        ``sandbox=False`` is a deprecated spelling of ``trusted=True``.
        ``max_age`` (seconds) bounds the memory of patterns without a window:
        each behaves as ``P within max_age`` (overrides ``:- max_age(D).``).
        ``lateness`` (seconds) lets events arrive out of time order by up to
        that much: they are held back and matched exactly as if they had
        arrived in order (detections come that much later; :meth:`flush`
        releases the rest at the end of a stream); later ones are rejected.
        ``explain=True`` gives each detection its provenance: the input
        events it was built from.  ``max_queued`` bounds the pull queue of
        :meth:`detections` (None: no bound); past it the oldest are dropped
        and counted in ``stats().dropped``.
        ``inference_limit`` is the most Prolog inferences that processing one
        event may take (default 10,000,000, about a second; ``0`` for no
        limit): an event that takes more (a ``where`` condition that does
        not end, detections that multiply) raises
        :class:`InferenceLimitError` instead of hanging.
        ``state`` is a :meth:`snapshot` of an engine of the same rules and
        options, whose state the new engine takes up (:meth:`restore`).
        ``analysis=True`` has the engine keep, from the same reading of the
        file, what :meth:`rule_file` and :meth:`findings` tell, which then
        read the file no more.
        Raises :class:`RuleError` with the file, line and column of a problem.
        """
        extra = ["explain(true)"] if explain else []
        extra += trust_option(trusted, sandbox)
        extra.extend(limit_options(inference_limit))
        if analysis:
            extra.append("analysis(true)")
        engine = cls._create(rules_source(path, static), "", policy, max_age, lateness, extra, max_queued)
        engine._source = (str(Path(path)), None)
        engine._static = tuple(str(Path(f)) for f in static)
        return engine._restored(state)

    @classmethod
    def from_string(
        cls,
        text: str,
        policy: Optional[str] = None,
        source: str = "<string>",
        *,
        trusted: bool = False,
        sandbox: Optional[bool] = None,
        max_age: Optional[float] = None,
        lateness: Optional[float] = None,
        only_rules: Optional[Sequence[int]] = None,
        report: Optional[Sequence[str]] = None,
        explain: bool = False,
        max_queued: Optional[int] = MAX_QUEUED,
        inference_limit: Optional[int] = None,
        static_texts: Sequence[tuple[str, str]] = (),
        state: Optional[bytes] = None,
        analysis: bool = False,
    ) -> "Engine":
        """Compile rules given as text; ``source`` names them in errors.
        The options are those of :meth:`from_file` (``static_texts`` gives
        static knowledge as (name, text) pairs rather than files), and two
        for running part of a rule set (Spark replay runs each stage so):
        ``only_rules`` compiles only the event rules with these 1-based
        numbers in file order (static rules and directives all apply), and
        ``report`` reports exactly these events (``"name/arity"``),
        whatever ``:- print_events`` says; ``state`` and ``analysis`` as
        for :meth:`from_file`."""
        extra: list[str] = ["explain(true)"] if explain else []
        extra += trust_option(trusted, sandbox)
        extra.extend(limit_options(inference_limit))
        if only_rules is not None:
            extra.append(f"only_rules([{', '.join(str(int(i)) for i in only_rules)}])")
        if report is not None:
            specs = [spec.rpartition("/") for spec in report]
            extra.append(f"report([{', '.join(f'{quote_atom(n)}/{int(a)}' for n, _, a in specs)}])")
        if analysis:
            extra.append("analysis(true)")
        check_unicode(text, source)
        engine = cls._create(static_text_source(static_texts, f"text({quote_atom(source)})"), text, policy, max_age,
                             lateness, extra, max_queued)
        engine._source = (source, text)
        return engine._restored(state)

    def _restored(self, state: Optional[bytes]) -> "Engine":
        """This new engine, with the state of the snapshot ``state`` if one is
        given (closed if it cannot take it up)."""
        if state is not None:
            try:
                self.restore(state)
            except BaseException:
                self.close()
                raise
        return self

    @classmethod
    def _create(
        cls,
        source: str,
        text: str,
        policy: Optional[str],
        max_age: Optional[float],
        lateness: Optional[float],
        extra: Sequence[str] = (),
        max_queued: Optional[int] = MAX_QUEUED,
    ) -> "Engine":
        options = list(extra)
        for name, value in (("max_age", max_age), ("lateness", lateness)):
            if value is not None:
                if not (isinstance(value, (int, float)) and 0 <= value < float("inf")):
                    raise ValueError(f"{name} must be a finite number of seconds >= 0, not {value!r}")
                options.append(f"{name}({value!r})")
        if policy is not None:
            options.append(f"policy({check_policy(policy)})")
        if max_queued is not None and (type(max_queued) is not int or max_queued < 0):
            raise ValueError(f"max_queued must be a whole number >= 0 or None, not {max_queued!r}")
        prolog = bridge()
        info, _ = prolog.request(f"create({source}, [{', '.join(options)}])", text)
        engine = cls(info["engine"], info, prolog, max_queued)
        engine._analysis = info.get("analysis")
        if info["decoded"]:
            for d in map(Decoded.from_json, info["decoded"]):
                warnings.warn(f"{d.file}:{d.line}:{d.column}: {d.message}", EtalisWarning, stacklevel=outside_level())
        engine._max_age = max_age
        engine._trusted = "trusted(true)" in options
        engine._explain = "explain(true)" in options
        if info.get("ontologies"):
            try:
                engine._load_declared(info["ontologies"])
            except BaseException:
                engine.close()
                raise
        return engine

    def findings(self) -> list["Finding"]:
        """The findings of ``etalis check`` for the rules the engine was
        made from (not those added later), with its ``max_age``: mistakes
        such as an unknown event, unbounded memory or a negation race, each
        with its position and a hint (docs/language.md, Checking rules)."""
        # networkx (the checks' graphs) loads with the first findings, not with every engine
        from ..rules.findings import findings

        return findings(self.rule_file(), self._max_age)

    def rule_file(self) -> RuleFile:
        """What ``etalis check`` knows of the rules the engine was made
        from (not those added later): read again, unless the engine was
        made with ``analysis=True``."""
        source, text = self._source
        if self._analysis is not None:
            return RuleFile.from_header(source, self._analysis)
        return RuleFile.read(source, text, self._static)

    @one_at_a_time
    def add_rules(self, text: str, source: str = "<added>") -> None:
        """Add rules (and static rules) while events flow.  Goals identical
        to those of the rules already loaded are shared, so their pending
        goals carry on; the pending goals of other rules are untouched.
        Raises :class:`RuleError` (and changes nothing) for a bad rule.
        The rules are sandboxed unless the engine was made trusted."""
        self._check_open()
        check_unicode(text, source)
        info, _ = self._prolog.request(f"add_rules({self._name}, text({quote_atom(source)}))", text)
        self.rule_count, self.goal_count = info["rules"], info["goals"]
        self.printed = list(info["printed"])
        self.prefixes = dict(info["prefixes"])
        if info.get("ontologies"):
            self._load_declared(info["ontologies"])

    @one_at_a_time
    def remove_rule(self, label: str) -> None:
        """Remove the rule labelled ``label``, with the goals (and pending
        goals) that no other rule uses."""
        self._check_open()
        info, _ = self._prolog.request(f"remove_rule({self._name}, {quote_atom(label)})")
        self.rule_count, self.goal_count = info["rules"], info["goals"]
        self.printed = list(info["printed"])

    @one_at_a_time
    def pending(self, rule: str) -> list[PendingPart]:
        """How much of a rule's pattern is fulfilled: each occurrence that
        matched a part of it and waits for the rest, with its interval and
        bindings.  ``rule`` is a label, or ``"line N"`` for an unlabelled
        rule."""
        self._check_open()
        header, _ = self._prolog.request(f"pending({self._name}, {quote_atom(rule)})")
        return [
            PendingPart(p["goal"], p["pattern"], p["matched"], p["side"], p["waiting"], p["start"], p["end"])
            for p in header["pending"]
        ]

    @one_at_a_time
    def stats(self) -> EngineStats:
        """Counters, and the live pending goals per binary goal."""
        self._check_open()
        header, _ = self._prolog.request(f"stats({self._name})")
        self._stats.pending = header["pending"]
        self._stats.pending_by_goal = list(header["stores"])
        self._stats.pending_by_rule = {r["rule"]: r["pending"] for r in header["rules"]}
        self._stats.buffered = header["buffered"]
        self._stats.skip_kept = header["skip_kept"]
        self._stats.queued = len(self._queue)
        return EngineStats(**vars(self._stats))

    @one_at_a_time
    def reset(self) -> None:
        """Forget all pending goals and the time of the last event: the
        engine starts afresh with the same rules (and background knowledge)."""
        self._check_open()
        self._prolog.request(f"reset({self._name})")

    @one_at_a_time
    def snapshot(self) -> bytes:
        """The engine's state as bytes, for :meth:`restore` in an engine of
        the same rules and options, in this process or another: everything
        that decides later detections (pending goals, aggregate windows,
        runs, timers, the reorder buffer, the time of the last event, the
        rules added or removed while running, the facts the rules asserted)
        and the counters of :meth:`stats` (docs/python-api.md, "Snapshots").
        Not kept: the background knowledge, callbacks and the pull queue."""
        parts = self.snapshot_parts()
        try:
            return parts.to_bytes()
        finally:
            parts.release()

    @one_at_a_time
    def snapshot_parts(self) -> "SnapshotParts":
        """The :meth:`snapshot` in parts, its content's bytes left where the
        engine made them: for a caller that writes them out (a checkpoint,
        on a thread of its own) without a copy, and then releases them."""
        self._check_open()
        counters = ", ".join(str(getattr(self._stats, c)) for c in SNAPSHOT_COUNTERS)
        info, record = self._prolog.request_recorded(f"snapshot_term({self._name}, [{counters}])")
        if record is None:  # a content of no bytes (a blob): the engine's own serializer says why
            info, payload = self._prolog.request_bytes(f"snapshot({self._name}, [{counters}])")
            return SnapshotParts(info["snapshot_head"].encode("latin-1"), bytes(payload))
        return SnapshotParts(f"{info['snapshot_opening']}{record.size},".encode("latin-1"), record)

    @one_at_a_time
    def restore(self, data: bytes) -> None:
        """Replace the engine's whole state by that of the :meth:`snapshot`
        ``data``, without compiling its rules again (unless the snapshot's
        engine changed its rules while running: the same changes are made,
        after going back to the rules this engine was made with if its own
        changes were others).  The snapshot of a new engine of the
        same rules starts a fresh state, as :meth:`reset` does, and also
        sets the counters of :meth:`stats` to 0.

        Raises :class:`SnapshotError`, and leaves the engine as it was, for
        bytes that are no snapshot, or one of other rules or options, of
        another format or SWI-Prolog version, truncated or damaged."""
        self._check_open()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"restore() takes the bytes of a snapshot, not {type(data).__name__}")
        info, _ = self._prolog.request_bytes(f"restore({self._name})", bytes(data))
        self._took_state(info["counters"], info)

    def __reduce__(self) -> NoReturn:
        raise TypeError("an Engine cannot be pickled: its rules and state live in SWI-Prolog. Take its state "
                        "as bytes with engine.snapshot(), and give them to Engine.from_file(path, state=data) "
                        "(or engine.restore(data)) of the same rules")

    @one_at_a_time
    def load_ontology(
        self, source: Union["OntologySource", Sequence["OntologySource"]], entailment: str = "rdfs"
    ) -> KnowledgeStats:
        """Load RDF background knowledge for ``rdf(S, P, O)`` and
        ``isa(X, Class)`` in ``where`` conditions and static rules.

        ``source`` is a file (Turtle, RDF/XML or N-Triples, told by its
        extension), an :class:`rdflib.Graph`, or a list of them.  The engine's
        knowledge becomes the closure, under ``entailment`` (``rdfs``,
        ``owlrl`` or ``none``, computed once, here), of everything loaded into
        it so far; every load of an engine must use the same entailment.
        Raises :class:`~etalis_py.rdf.knowledge.OntologyError` naming the file
        (and line) that cannot be read.
        """
        # rdflib loads with the first ontology, not with every engine
        from rdflib import Graph

        from ..rdf.knowledge import KnowledgeBase

        self._check_open()
        sources = [source] if isinstance(source, (str, os.PathLike, Graph)) else list(source)
        if self._knowledge is None:
            self._knowledge = KnowledgeBase(self._name, self._prolog)
        return self._knowledge.load(sources, entailment)

    def _load_declared(self, ontologies: list[dict[str, Any]]) -> None:
        """Load the ontologies of the rules' ``:- ontology(File)`` directives."""
        if not self._trusted:
            for o in ontologies:
                self._confine_ontology(o)
        first = ontologies[0]
        for o in ontologies:
            if o["entailment"] != first["entailment"]:
                raise RuleError(
                    f"ontology {o['path']} asks for {o['entailment']} entailment, "
                    f"but line {first['line']} for {first['entailment']}",
                    file=str(o["file"]), line=int(o["line"]), column=1,
                    hint="an engine's ontologies are closed together: give them all the same entailment",
                )
        try:
            self.load_ontology([str(o["path"]) for o in ontologies], str(first["entailment"]))
        except OntologyError as e:
            declared = next((o for o in ontologies if o["path"] == e.file), first)
            raise type(e)(
                f"{e.message} (an ontology of {declared['file']}, line {declared['line']})",
                file=e.file, line=e.line, hint=e.hint,
            ) from None

    @staticmethod
    def _confine_ontology(declared: dict[str, Any]) -> None:
        """An untrusted rule file may declare only the ontologies of its own
        folder (and below) and those shipped with etalis-py: a file from
        elsewhere must not read any RDF file of the machine into what its
        rules can query."""
        path = Path(str(declared["path"])).resolve()
        roots = (Path(str(declared["file"])).resolve().parent, prolog_dir().parent / "ontologies")
        if not any(path.is_relative_to(root.resolve()) for root in roots):
            raise RuleError(
                f"sandbox: the ontology {declared['path']} lies outside the rule file's folder",
                file=str(declared["file"]), line=int(declared["line"]), column=1,
                hint="load it yourself with --ontology FILE or engine.load_ontology(FILE), "
                     "or trust the rule file (--trusted, trusted=True)",
            )

    @one_at_a_time
    def close(self) -> None:
        """Free the engine's rules and pending goals."""
        if not self._closed:
            self._closed = True
            self._prolog.request(f"destroy({self._name})")

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Engine {self._name}: {self.rule_count} rules, policy {self.policy}>"
