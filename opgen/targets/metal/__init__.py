"""The Metal target (``opgen.targets.metal.target``)."""
