"""`ops/serve -m MODEL`: any zoo model behind an OpenAI-compatible transcription endpoint,
kept warm (one running program per served model), any upload format converted on the way in."""

from asrbench.serve.server import ServeError, TranscriptionService, make_server

__all__ = ["ServeError", "TranscriptionService", "make_server"]
