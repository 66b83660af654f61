"""The rules as Python sees them: the rule tree read from the engine's
reader, what each rule does, and the findings of ``etalis check`` with
the event graph and the near names they draw on."""
