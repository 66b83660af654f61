"""The rules as Python sees them: the rule tree read from the engine's
reader, what each rule does, and the findings of ``etalis check``."""
