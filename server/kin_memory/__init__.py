"""kin-memory: editor backend for an agent's persistent markdown memory."""

__version__ = "0.1.0"
