"""`asrbench serve` (ops/serve): a model as an OpenAI-compatible transcription endpoint."""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING

import typer

from asrbench.errors import InputError

if TYPE_CHECKING:
    from asrbench.serve.server import TranscriptionService
    from asrbench.serve.ws import WsServer

app = typer.Typer(add_completion=False, help=__doc__)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM does what Ctrl-C does: stop serving, stop the model, remove the server's
    temporary folder, exit 0."""
    raise KeyboardInterrupt


@app.command()
def serve(
    model: str = typer.Option(..., "-m", "--model", help="model ID (models/<ID>) or folder"),
    runner: str = typer.Option("auto", "--runner", help="docker, local or auto"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to bind (loopback default)"),
    port: int = typer.Option(8000, "--port", help="port; 0 picks a free one"),
    ws_port: int = typer.Option(
        -1,
        "--ws-port",
        help="also serve raw PCM over WebSocket at ws://HOST:PORT/v1/stream (0 picks a free "
        "port; the card needs a `streaming:` program); off by default",
    ),
    api_key_env: str = typer.Option(
        "",
        "--api-key-env",
        help="name of an environment variable holding the key clients must send as Bearer",
    ),
    timeout: float = typer.Option(
        600, "--timeout", help="seconds a request may take inside the model"
    ),
    max_audio_s: float = typer.Option(
        600,
        "--max-audio-s",
        help="longest upload in seconds of audio; longer ones get 413 (a longer WebSocket "
        "utterance: close 1009)",
    ),
    queue: int = typer.Option(
        4,
        "--queue",
        help="requests that may wait while the model transcribes another (the streaming "
        "program has its own queue, for stream=true and WebSocket utterances); more get 503 "
        "with Retry-After, or a WebSocket close 1013",
    ),
    idle_timeout: int = typer.Option(
        60,
        "--idle-timeout",
        help="seconds a client may send nothing (mid-request or between requests, HTTP or "
        "WebSocket) before its connection is closed (WebSocket: close 1008)",
    ),
    write_timeout: float = typer.Option(
        20,
        "--write-timeout",
        help="seconds a WebSocket client may leave what it is sent unread (a keepalive ping "
        "unanswered, a send that cannot go out) before it is dropped",
    ),
) -> None:
    if not timeout > 0:
        raise InputError(f"--timeout {timeout}: must be more than 0 seconds")
    try:
        from asrbench.serve.server import Limits, TranscriptionService, make_server
    except ImportError as exc:  # waitress is in the `models` extra
        raise InputError(f"ops/serve needs {exc.name}: pip install -e '.[models]'") from None
    from asrbench.resolve import resolve_model
    from asrbench.runners import RunOptions, get_runner

    limits = Limits(
        max_audio_s=max_audio_s,
        queue=queue,
        idle_timeout_s=idle_timeout,
        write_timeout_s=write_timeout,
    )
    key = None
    if api_key_env:
        key = os.environ.get(api_key_env)
        if not key:
            raise InputError(f"--api-key-env {api_key_env}: that variable is not set")
    mdl = resolve_model(model)
    if ws_port >= 0 and not mdl.card.streaming:
        raise InputError(
            f"--ws-port: {mdl.id} has no `streaming:` program, so nothing can stream raw PCM "
            "to it (models/README.md, 'Streaming contract'); leave --ws-port out"
        )
    run = get_runner(runner)
    service = TranscriptionService(mdl, run, RunOptions(timeout_s=timeout), limits=limits)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    server = ws = None
    try:
        typer.echo(
            f"serve: preparing {mdl.id} ({run.name} runner): image, then the model, "
            "loaded once and kept warm...",
            err=True,
        )
        service.prepare()
        server = make_server(service, host, port, key)
        # The first stdout line is the base URL, for scripts and tests that start us on port 0;
        # with --ws-port, the second is the WebSocket URL.
        print(f"http://{server.host}:{server.port}/v1", flush=True)
        if ws_port >= 0:
            ws = _websocket(service, host, ws_port, key)
            print(f"ws://{ws.host}:{ws.port}/v1/stream", flush=True)
        typer.echo(
            f"serve: {mdl.id} at http://{server.host}:{server.port}/v1/audio/"
            "transcriptions (OpenAI-compatible); Ctrl-C or SIGTERM stops",
            err=True,
        )
        server.serve_forever()
    except KeyboardInterrupt:
        print("serve: stopping", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM: the cleanup goes on
        # the model first: a request still in it answers 503 at once instead of delaying this
        if ws is not None:
            ws.close()
        service.close()
        if server is not None:
            server.close()
        signal.signal(signal.SIGTERM, previous)


def _websocket(service: TranscriptionService, host: str, port: int, key: str | None) -> WsServer:
    """Start the WebSocket server (`asrbench.serve.ws`) in a daemon thread."""
    import threading

    try:
        from asrbench.serve.ws import WsServer
    except ImportError as exc:  # websockets is in the `models` extra
        raise InputError(f"--ws-port needs {exc.name}: pip install -e '.[models]'") from None
    ws = WsServer(service, host, port, key)  # checked: the card has a streaming program
    threading.Thread(target=ws.serve_forever, daemon=True).start()
    return ws
