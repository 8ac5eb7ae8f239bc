"""`ops/serve -m MODEL`: any zoo model behind an OpenAI-compatible transcription endpoint."""

from asrbench.serve.server import ServeError, TranscriptionService, make_server

__all__ = ["ServeError", "TranscriptionService", "make_server"]
