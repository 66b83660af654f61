"""What an input reader makes: batches of engine input that keep the line
numbers of their source, and the lines it rejected on the way.

A batch is text with one Prolog term a line, or a batch list of terms
(:func:`~etalis_py.events.batch_list`, which the engine reads at once), or
packed columns (:mod:`etalis_py.bridge.columns`).  A line that a reader already
rejected keeps its place (an empty line, or the term NOTHING), so that the
engine's own rejections carry the right line numbers too, and
``read = accepted + rejected`` for every source.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Optional

from ..bridge.columns import Packed
from ..events import Rejection, batch_list

BATCH_LINES = 20_000


@dataclass
class Batch:
    """Engine input for lines ``first_line`` onwards, and the lines Python
    rejected on the way.  ``terms`` is None if ``text`` is event lines,
    else the number of terms of ``text``, a batch list."""

    text: str
    first_line: int
    rejected: list[Rejection] = field(default_factory=list)
    terms: Optional[int] = None
    packed: Optional[Packed] = None
    """The batch as packed columns (then ``text`` is empty), see :mod:`etalis_py.bridge.columns`."""
    idle: bool = False
    """No input: a live source that had nothing to read for a while (see :func:`read_live`)."""

    @property
    def end_line(self) -> int:
        """The number of the first line (or row) after the batch: each line
        of the source is a term of the batch, or a line of its text."""
        return self.first_line + (self.terms if self.terms is not None else self.text.count("\n"))

    def shifted(self, offset: int) -> "Batch":
        """The batch with its line numbers ``offset`` lines further on."""
        if not offset:
            return self
        return replace(self, first_line=self.first_line + offset,
                       rejected=[replace(r, line=r.line + offset) for r in self.rejected])


# One item of a stream: the number of the line after it, the text it
# gives the engine (a line per line of the source, so line numbers hold:
# the line itself, or with listed batches its term, NOTHING for none),
# and the rejection of its line, if any.
Item = tuple[int, str, Optional[Rejection]]


def batched(items: Iterable[Item], first_line: int, batch_lines: int, listed: bool = False,
             lister: Callable[[list[str]], str] = batch_list) -> Iterator[Batch]:
    """The items of a stream in batches of about ``batch_lines`` lines:
    batch lists (written by ``lister``) if ``listed``, else as lines (see
    :func:`listed_if_plain`).  An item with no text stands for no line (a second
    rejection of a line)."""
    batch = Batch("", first_line)
    parts: list[str] = []
    for next_line, text, rejected in items:
        if rejected is not None:
            batch.rejected.append(rejected)
        if text:
            parts.append(text)
        if len(parts) >= batch_lines:
            yield _filled(batch, parts, listed, lister)
            batch, parts = Batch("", next_line), []
    if parts or batch.rejected:
        yield _filled(batch, parts, listed, lister)


def _filled(batch: Batch, parts: list[str], listed: bool, lister: Callable[[list[str]], str]) -> Batch:
    if listed:
        batch.text, batch.terms = lister(parts), len(parts)
        return batch
    batch.text = "".join(parts)
    return listed_if_plain(batch, len(parts))


# A line that is certainly one event term, read alike on its own and as an
# element of a list: event(Name(Args), Time). or event(Name, [T1, T2]).,
# whose only brackets are these (so that no comma or full stop of the line
# can end the term early, nor the term go on into the next line), without
# quotes, comments or a bar.  What the brackets hold is read alike in both
# places, or is a syntax error in both (then the batch goes line by line).
_FREE = r"[^()\[\]{}\n'\"`%|]*"
PLAIN_EVENTS = re.compile(
    rf"(?:event\([a-z]\w*(?:\({_FREE}\))?, ?(?:\[{_FREE}\]|{_FREE})\)\.\n)++"
)


def listed_if_plain(batch: Batch, lines: int) -> Batch:
    """``batch`` of event lines as a batch list if every line is a plain
    event (:data:`PLAIN_EVENTS`, checked at once for the whole batch), else
    as it is."""
    text = batch.text
    if PLAIN_EVENTS.fullmatch(text):
        return replace(batch, text="[" + text[:-2].replace(".\n", ",\n") + "]", terms=lines)
    return batch

