"""The reference of the engine's semantics, for the tests (not shipped).

Written straight from the definitions of the ETALIS paper and of
``strategies.md``, so that the property tests can hold the engine to them:

- :mod:`reference.terms`: values, terms, patterns and rules, read from the
  engine's JSON of a rule file;
- :mod:`reference.evaluate`: the minimal model of a rule set on a stream;
- :mod:`reference.check`: one case through the evaluator and the engine;
- :mod:`reference.generate`: random rule sets, streams and policies;
- :mod:`reference.shrink`: a failing case cut down to a small one;
- :mod:`reference.mapping`: a table row as the engine's input line, the
  definition the column mapper is held to;
- :mod:`reference.selection`: the selection strategies and contexts, and
  the choosing policies on a filtered sequence.

It imports the shipped package :mod:`etalis_py`; nothing there imports it.
"""
