"""helper-agent: instructable household agents with retrieval-augmented planning and modular memory."""

__version__ = "0.1.0"
